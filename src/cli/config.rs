//! `vaultdm config`: the effective LLM settings and where each came from (keys masked).

use super::llm_args::{resolve, LlmArgs};
use super::Outcome;
use crate::canon::Loaded;
use std::io::Write;
use std::path::Path;

/// Arguments of `config`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// LLM flags, as `chat` would take them.
    #[command(flatten)]
    pub llm: LlmArgs,
}

/// Runs `config`.
pub(super) fn execute(root: &Path, args: Args) -> anyhow::Result<Outcome> {
    let loaded = Loaded::load(root)?;
    let s = resolve(&loaded, &args.llm)?;
    let mut out = super::stdout();
    writeln!(out, "vault: {}", root.display())?;
    for r in s.rows() {
        writeln!(out, "{:<20} {:<44} {}", r.name, r.value, r.source)?;
    }
    for w in &s.warnings {
        writeln!(out, "warning: {w}")?;
    }
    if let Err(e) = s.to_config() {
        writeln!(out, "\nnot ready to chat: {e}")?;
    }
    out.flush()?;
    Ok(Outcome::Ok)
}
