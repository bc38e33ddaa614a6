//! `vaultdm check`: parse everything and print every diagnostic with file and line.

use super::format::Format;
use super::Outcome;
use crate::canon::Loaded;
use crate::vault::note::MAX_NOTE_BYTES;
use crate::vault::{boundary, Diagnostic};
use std::io::Write;
use std::path::Path;

/// Arguments of `check`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Output format.
    #[arg(long, default_value = "text", value_parser = Format::described(
        "`path:line: severity[code]: message` with a source snippet",
        "One JSON object with counts and diagnostics",
    ))]
    pub format: Format,
    /// First print what vaultdm reads the vault as: the notes of each kind and why
    /// (folder, type, tag), template folders, the timeline, the party in play.
    #[arg(long)]
    pub explain_types: bool,
    /// First print what is GM-only and why: whole notes (folder, tag, field) and secret
    /// sections, callouts, comments and fields (docs/secrets.md).
    #[arg(long)]
    pub explain_secrets: bool,
}

/// The `--explain-secrets` listing: every note with GM-only content, and why.
fn secrets_listing(loaded: &Loaded) -> String {
    let c = &loaded.built.campaign;
    let mut out = String::new();
    let (mut whole, mut pieces) = (0, 0);
    for (path, g) in &c.secrets {
        if let Some(why) = &g.whole {
            whole += 1;
            out.push_str(&format!("{path}: GM-only, {why}\n"));
        } else {
            out.push_str(&format!("{path}:\n"));
        }
        for s in &g.secrets {
            pieces += 1;
            let text: String = s.text.chars().take(70).collect();
            let more = if s.text.chars().count() > 70 {
                "…"
            } else {
                ""
            };
            out.push_str(&format!("  {:>5} | {text}{more}  ({})\n", s.line, s.why));
        }
    }
    let ahead = c.day.map_or(0, |d| {
        c.events.iter().filter(|e| e.numbered && e.day > d).count()
    });
    out.push_str(&format!(
        "secrets: {whole} GM-only note(s), {pieces} secret piece(s) in {} note(s), {ahead} timeline entr{} after today (the GM's plan)\n",
        c.secrets.len(),
        if ahead == 1 { "y" } else { "ies" },
    ));
    out
}

fn snippet(root: &Path, d: &Diagnostic) -> Option<String> {
    if d.line == 0 {
        return None;
    }
    // The same rule as the loader: never through a link out of the vault, never a huge file.
    let bytes = boundary::read_inside(root, Path::new(&d.path), MAX_NOTE_BYTES).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let line = text.lines().nth(d.line - 1)?;
    let line: String = line.trim_end_matches('\r').chars().take(160).collect();
    Some(format!(
        "{:>5} | {}",
        d.line,
        crate::secrets::mask_secrets(line.trim_start_matches('\u{feff}'))
    ))
}

/// Runs `check`.
pub(super) fn execute(root: &Path, args: Args) -> anyhow::Result<Outcome> {
    let loaded = Loaded::load(root)?;
    let report = crate::check::Report::of(root, &loaded);
    let mut out = super::stdout();
    let mapping = args
        .explain_types
        .then(|| crate::canon::adopt::Mapping::of(&loaded));
    match args.format {
        Format::Text => {
            if let Some(m) = &mapping {
                writeln!(out, "{}", m.summary())?;
            }
            if args.explain_secrets {
                write!(out, "{}", secrets_listing(&loaded))?;
            }
            for d in &report.diagnostics {
                writeln!(out, "{d}")?;
                if let Some(s) = snippet(root, d) {
                    writeln!(out, "{s}")?;
                }
            }
            writeln!(out, "{}", report.summary())?;
        }
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &report)?;
            writeln!(out)?;
        }
    }
    out.flush()?;
    super::exit_without_freeing(loaded);
    Ok(if report.errors > 0 {
        Outcome::Problems
    } else {
        Outcome::Ok
    })
}
