//! `vaultdm context`: print exactly what would be injected for a message.

use super::format::Format;
use super::Outcome;
use crate::canon::Loaded;
use crate::context::{Engine, Injected, ModeChoice, Options, Overrides};
use anyhow::Context as _;
use std::io::Write;
use std::path::Path;

/// Arguments of `context`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The player's message (none: the full session context).
    #[arg(long, short)]
    pub message: Option<String>,
    /// Always build the full context.
    #[arg(long, conflicts_with = "light")]
    pub full: bool,
    /// Always build the light context.
    #[arg(long)]
    pub light: bool,
    /// Token budget for the block (default: `[context] budget` in vaultdm.toml; 0 = none).
    #[arg(long)]
    pub budget: Option<usize>,
    /// The PC speaking: their location is the scene.
    #[arg(long)]
    pub pc: Option<String>,
    /// Output format.
    #[arg(long, default_value = "text", value_parser = Format::described(
        "The injected text",
        "`{mode, text, tokens, items}`",
    ))]
    pub format: Format,
    /// After the text, a table of every candidate and why it is in or out.
    #[arg(long)]
    pub explain: bool,
    /// What a player may see: no GM secrets, no GM-only notes, no plan (docs/secrets.md).
    #[arg(long)]
    pub player: bool,
}

/// Writes the explain table.
pub(super) fn write_explain(out: &mut impl Write, inj: &Injected) -> std::io::Result<()> {
    writeln!(
        out,
        "\n---- explain: {:?} context, {} tokens ----",
        inj.mode, inj.tokens
    )?;
    writeln!(
        out,
        "{:<3} {:<8} {:<34} {:>6}  {:<40} reason",
        "in", "kind", "name", "tokens", "source"
    )?;
    for i in &inj.items {
        let name: String = i.name.chars().take(34).collect();
        writeln!(
            out,
            "{:<3} {:<8} {:<34} {:>6}  {:<40} {}",
            if i.included { "+" } else { "-" },
            i.kind,
            name,
            i.tokens,
            i.source,
            i.reason
        )?;
    }
    Ok(())
}

/// Runs `context`.
pub(super) fn execute(root: &Path, args: Args) -> anyhow::Result<Outcome> {
    // The vocabulary loads on a second thread once the parse no longer needs both cores.
    let mut loaded = Loaded::load_then(root, crate::tokens::warm_up_in_background)?;
    super::report_skipped(&loaded);
    let engine = Engine::taking_canon(root, &mut loaded)?;
    // A message is scanned for mentions, and the matcher that takes reuses the notes'
    // memory; with none, nothing big is made after the load, and freeing costs time.
    if args.message.is_some() {
        loaded.release_notes();
    }
    let mode = if args.full {
        ModeChoice::Full
    } else if args.light {
        ModeChoice::Light
    } else {
        ModeChoice::Auto
    };
    let asked = Overrides {
        message: args.message,
        mode,
        budget: args.budget,
        pc: args.pc,
    };
    let mut opts = Options::with_overrides(&loaded.config.context, asked);
    // Only JSON and the explain table show the count; the text alone needs none.
    opts.count_tokens = args.format == Format::Json || args.explain;
    opts.explain = opts.count_tokens;
    opts.player = args.player;
    if let Some(m) = &opts.message {
        // One message, one search: the matcher is built for it alone.
        engine.match_only(m);
    }
    let inj = engine.build(&opts).context("building the context")?;
    let mut out = super::stdout();
    match args.format {
        Format::Text => {
            out.write_all(inj.text.as_bytes())?;
            if args.explain {
                write_explain(&mut out, &inj)?;
            }
        }
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &inj)?;
            writeln!(out)?;
        }
    }
    out.flush()?;
    super::exit_without_freeing((loaded, engine));
    Ok(Outcome::Ok)
}
