//! The command line: parse flags, find the vault, hand over to one subcommand.
//!
//! Each subcommand lives in its own file with its own args and `execute`. `run` maps
//! errors to exit codes: 0 ok, 1 `check` found errors, 2 could not run. A closed pipe
//! (`vaultdm context | head`) is not an error.

mod ask;
mod chat;
mod check;
mod config;
mod context;
mod format;
mod init;
mod llm_args;
mod prompt;
mod review;
mod serve;
mod session;
mod signals;
mod watch;

use clap::{Parser, Subcommand};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// vaultdm: campaign canon from your Obsidian vault, injected into every message to an LLM DM.
#[derive(Debug, Parser)]
#[command(name = "vaultdm", version, about, propagate_version = true)]
pub(crate) struct Cli {
    /// The campaign vault (default: $VAULTDM_VAULT, else the nearest folder upwards holding
    /// .obsidian/, canon/ or vaultdm.toml).
    #[arg(long, global = true, env = "VAULTDM_VAULT", value_name = "DIR")]
    pub vault: Option<PathBuf>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Lint the vault: every problem with its file and line.
    Check(check::Args),
    /// Create a new campaign from the built-in template.
    Init(init::Args),
    /// Preview exactly what would be injected for a message.
    Context(context::Args),
    /// Play: chat with the DM, canon injected into every message.
    Chat(chat::Args),
    /// Send one message to the DM and print the reply.
    Ask(ask::Args),
    /// Show the effective LLM settings and where each came from.
    Config(config::Args),
    /// Reload canon on every edit and print what changed.
    Watch(watch::Args),
    /// Review the DM's proposed canon changes for a session: list, accept, reject, revert.
    Review(review::Args),
    /// Print exactly what the next message would send (every layer labelled), sending nothing.
    Prompt(prompt::Args),
    /// Serve the vault's canon over HTTP: an OpenAI-compatible endpoint that injects it into
    /// every request of any chat front end, a canon API and an inspector page.
    Serve(Box<serve::Args>),
    /// Manage sessions: import exchanges from JSON Lines or a SillyTavern export.
    Session(session::Args),
}

/// What a subcommand reports back.
pub(crate) enum Outcome {
    /// All good.
    Ok,
    /// Ran, found problems (exit 1).
    Problems,
    /// Ended with this exit code (e.g. 130 after Ctrl-C, 143 after SIGTERM).
    Code(u8),
}

/// Runs the CLI with the process arguments.
pub fn run() -> ExitCode {
    let cli = Cli::parse();
    match execute(cli) {
        Ok(Outcome::Ok) => ExitCode::SUCCESS,
        Ok(Outcome::Problems) => ExitCode::from(1),
        Ok(Outcome::Code(c)) => ExitCode::from(c),
        Err(e) => {
            if is_broken_pipe(&e) {
                return ExitCode::SUCCESS;
            }
            // A bare "no space" at the top is stdout on a full device (files written to the
            // vault fail with their path named).
            let out_full = e
                .downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::StorageFull);
            let e = if out_full {
                e.context("cannot write to the output")
            } else {
                e
            };
            // A password or key in a base URL never reaches the terminal.
            let shown = crate::secrets::mask_printed(&format!("{e:#}"));
            let _ = writeln!(std::io::stderr(), "vaultdm: {shown}");
            ExitCode::from(2)
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn execute(cli: Cli) -> anyhow::Result<Outcome> {
    match cli.command {
        Command::Init(args) => init::execute(args, cli.vault),
        Command::Check(args) => check::execute(&find_vault(cli.vault)?, args),
        Command::Context(args) => context::execute(&find_vault(cli.vault)?, args),
        Command::Chat(args) => chat::execute(&find_vault(cli.vault)?, args),
        Command::Ask(args) => ask::execute(&find_vault(cli.vault)?, args),
        Command::Config(args) => config::execute(&find_vault(cli.vault)?, args),
        Command::Watch(args) => watch::execute(&find_vault(cli.vault)?, args),
        Command::Review(args) => review::execute(&find_vault(cli.vault)?, args),
        Command::Prompt(args) => prompt::execute(&find_vault(cli.vault)?, args),
        Command::Serve(args) => serve::execute(cli.vault, *args),
        Command::Session(args) => session::execute(&find_vault(cli.vault)?, args),
    }
}

/// Finds the vault: the flag or `$VAULTDM_VAULT`, else the nearest folder upwards from the
/// working directory that holds `canon/` or `vaultdm.toml`.
pub(crate) fn find_vault(given: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    if let Some(v) = given {
        match std::fs::metadata(&v) {
            Ok(m) if m.is_dir() => return Ok(v),
            Ok(_) => anyhow::bail!(
                "{} is a file, not a vault folder: pass the folder that holds your notes",
                v.display()
            ),
            Err(_) => anyhow::bail!("{}: no such vault folder", v.display()),
        }
    }
    let cwd = std::env::current_dir()?;
    find_upwards(&cwd).ok_or_else(|| {
        anyhow::anyhow!(
            "no vault found: pass --vault DIR, set VAULTDM_VAULT, or run inside your Obsidian vault (a folder holding .obsidian/, canon/ or vaultdm.toml); `vaultdm init DIR` creates a new campaign"
        )
    })
}

/// The nearest folder upwards from `start` that is a vault: it holds `.obsidian/` (any
/// Obsidian vault), `canon/` or `vaultdm.toml`.
fn find_upwards(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|d| {
            d.join(".obsidian").is_dir()
                || d.join("canon").is_dir()
                || d.join(crate::config::CONFIG_FILE).is_file()
        })
        .map(Path::to_path_buf)
}

/// Refuses to play on a folder without a single note: a wrong `--vault` must not send the
/// DM an empty canon, nor get `.vaultdm/` and `sessions/` written into it.
pub(crate) fn refuse_empty_vault(root: &Path, loaded: &crate::canon::Loaded) -> anyhow::Result<()> {
    if loaded.vault.notes.is_empty() {
        anyhow::bail!(
            "{} holds no notes (no .md files outside hidden folders): is this your vault? Pass --vault DIR with the folder Obsidian opens, or create a campaign with `vaultdm init DIR`",
            root.display()
        );
    }
    Ok(())
}

/// One line on stderr when notes could not be read or `vaultdm.toml` has problems.
pub(crate) fn report_skipped(loaded: &crate::canon::Loaded) {
    if let Some(line) = loaded.problems_summary() {
        eprintln!("vaultdm: {line}");
    }
}

/// Locked, buffered stdout.
pub(crate) fn stdout() -> std::io::BufWriter<std::io::StdoutLock<'static>> {
    std::io::BufWriter::new(std::io::stdout().lock())
}

/// Hands a one-shot command's loaded vault back to the OS instead of freeing it note by
/// note: the process exits right after, and tearing down tens of thousands of small
/// allocations took longer than printing the result (docs/benchmarks.md).
pub(crate) fn exit_without_freeing<T>(value: T) {
    std::mem::forget(value);
}

/// Removes the temp files a killed write of vaultdm's own left in the vault, and says so.
pub(crate) fn clean_leftovers(root: &Path) {
    for rel in crate::vault::boundary::clean_own_temps(root) {
        eprintln!("vaultdm: removed {rel}, a temp file left by a write that was stopped (the note itself was whole)");
    }
}
