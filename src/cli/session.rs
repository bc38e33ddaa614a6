//! `vaultdm session import FILE --session S`: exchanges from JSON Lines or a SillyTavern
//! export appended to a session.

use super::Outcome;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Arguments of `session`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to do.
    #[command(subcommand)]
    pub action: Action,
}

/// `session` actions.
#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Import exchanges (JSON Lines of {"player": …, "dm": …}, or a SillyTavern chat export).
    Import {
        /// The file.
        file: PathBuf,
        /// The session to append them to (created if new).
        #[arg(long)]
        session: String,
    },
}

/// Runs `session`.
pub fn execute(root: &Path, args: Args) -> anyhow::Result<Outcome> {
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
    }
}
