//! `vaultdm session`: the vault's play sessions.
//!
//! * `import FILE --session S`: exchanges from JSON Lines or a SillyTavern export appended
//!   to a session.
//! * `list`: every session, and which are left out of campaign memory.
//! * `exclude NAME` / `include NAME`: leave a session (a test chat) out of campaign memory —
//!   other sessions no longer recall it — or take it back in.
//! * `delete NAME`: remove a session's log, journal, transcript and memory notes.

use super::Outcome;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Arguments of `session`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// What to do.
    #[command(subcommand)]
    pub action: Action,
}

/// `session` actions.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Action {
    /// Import exchanges (JSON Lines of {"player": …, "dm": …}, or a SillyTavern chat export).
    Import {
        /// The file.
        file: PathBuf,
        /// The session to append them to (created if new).
        #[arg(long)]
        session: String,
    },
    /// List every session: records, last time, and whether campaign memory reads it.
    List,
    /// Leave a session out of campaign memory: other sessions no longer recall its play
    /// (its own story so far is unchanged). For a test chat.
    Exclude {
        /// The session.
        name: String,
    },
    /// Take an excluded session back into campaign memory.
    Include {
        /// The session.
        name: String,
    },
    /// Delete a session: its log, reply journal, transcript note and memory note (its canon
    /// change log stays, for `/revert`). Refused while vaultdm has it open.
    Delete {
        /// The session.
        name: String,
    },
}

/// Runs `session`.
pub(super) fn execute(root: &Path, args: Args) -> anyhow::Result<Outcome> {
    match args.action {
        Action::Import { file, session } => {
            let text = std::fs::read_to_string(&file)
                .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
            let (exchanges, warnings) = crate::session::import::parse(&text)
                .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
            for w in warnings {
                eprintln!("{}: {w}", file.display());
            }
            let mut store = super::llm_args::open_session(root, &session, false)?;
            let n = store.import(&exchanges)?;
            let mut out = super::stdout();
            writeln!(out, "imported {n} exchanges into session \"{session}\"")?;
            out.flush()?;
            Ok(Outcome::Ok)
        }
        Action::List => {
            for s in crate::session::list_all_sessions(root)? {
                println!(
                    "{:<28} {:>4} records  {:<16}  {}",
                    s.name,
                    s.records,
                    s.last_time
                        .map(|t| t.format("%Y-%m-%d %H:%M").to_string())
                        .unwrap_or_default(),
                    if s.excluded {
                        "excluded from campaign memory"
                    } else {
                        ""
                    }
                );
            }
            Ok(Outcome::Ok)
        }
        Action::Exclude { name } => {
            let was = crate::session::set_excluded(root, &name, true)?;
            println!(
                "session \"{name}\" {}: other sessions no longer recall it",
                if was {
                    "was already excluded from campaign memory"
                } else {
                    "is excluded from campaign memory"
                }
            );
            Ok(Outcome::Ok)
        }
        Action::Include { name } => {
            let was = crate::session::set_excluded(root, &name, false)?;
            println!(
                "session \"{name}\" {} campaign memory",
                if was { "is back in" } else { "was already in" }
            );
            Ok(Outcome::Ok)
        }
        Action::Delete { name } => {
            for path in crate::session::delete(root, &name)? {
                println!("removed {}", path.display());
            }
            // A front end's conversation that continues it is a new session now.
            if let Err(e) = crate::serve::threads::forget_in_file(root, &name) {
                eprintln!("{}: {e}", crate::serve::threads::FILE);
            }
            println!("session \"{name}\" is deleted");
            Ok(Outcome::Ok)
        }
    }
}
