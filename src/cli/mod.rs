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
mod init;
mod llm_args;
mod watch;

use clap::{Parser, Subcommand};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// vaultdm: campaign canon from your Obsidian vault, injected into every message to an LLM DM.
#[derive(Debug, Parser)]
#[command(name = "vaultdm", version, about, propagate_version = true)]
pub struct Cli {
    /// The campaign vault (default: $VAULTDM_VAULT, else the nearest folder upwards holding
    /// canon/ or vaultdm.toml).
    #[arg(long, global = true, env = "VAULTDM_VAULT", value_name = "DIR")]
    pub vault: Option<PathBuf>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
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
}

/// What a subcommand reports back.
pub enum Outcome {
    /// All good.
    Ok,
    /// Ran, found problems (exit 1).
    Problems,
}

/// Runs the CLI with the process arguments.
pub fn run() -> ExitCode {
    let cli = Cli::parse();
    match execute(cli) {
        Ok(Outcome::Ok) => ExitCode::SUCCESS,
        Ok(Outcome::Problems) => ExitCode::from(1),
        Err(e) => {
            if is_broken_pipe(&e) {
                return ExitCode::SUCCESS;
            }
            let _ = writeln!(std::io::stderr(), "vaultdm: {e:#}");
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
        Command::Init(args) => init::execute(args),
        Command::Check(args) => check::execute(&find_vault(cli.vault)?, args),
        Command::Context(args) => context::execute(&find_vault(cli.vault)?, args),
        Command::Chat(args) => chat::execute(&find_vault(cli.vault)?, args),
        Command::Ask(args) => ask::execute(&find_vault(cli.vault)?, args),
        Command::Config(args) => config::execute(&find_vault(cli.vault)?, args),
        Command::Watch(args) => watch::execute(&find_vault(cli.vault)?, args),
    }
}

/// Finds the vault: the flag or `$VAULTDM_VAULT`, else the nearest folder upwards from the
/// working directory that holds `canon/` or `vaultdm.toml`.
pub fn find_vault(given: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    if let Some(v) = given {
        if !v.is_dir() {
            anyhow::bail!("{}: no such vault folder", v.display());
        }
        return Ok(v);
    }
    let cwd = std::env::current_dir()?;
    find_upwards(&cwd).ok_or_else(|| {
        anyhow::anyhow!(
            "no vault found: pass --vault DIR, set VAULTDM_VAULT, or run inside a folder holding canon/ or vaultdm.toml (vaultdm init DIR creates one)"
        )
    })
}

fn find_upwards(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|d| d.join("canon").is_dir() || d.join(crate::config::CONFIG_FILE).is_file())
        .map(Path::to_path_buf)
}

/// Locked, buffered stdout.
pub(crate) fn stdout() -> std::io::BufWriter<std::io::StdoutLock<'static>> {
    std::io::BufWriter::new(std::io::stdout().lock())
}
