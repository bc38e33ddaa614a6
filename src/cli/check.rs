//! `vaultdm check`: parse everything and print every diagnostic with file and line.

use super::Outcome;
use crate::canon::Loaded;
use crate::vault::note::MAX_NOTE_BYTES;
use crate::vault::Code;
use crate::vault::{boundary, Diagnostic, Severity};
use std::io::Write;
use std::path::Path;

/// Output format.
#[derive(Debug, Clone, Copy, clap::ValueEnum, PartialEq, Eq)]
pub enum Format {
    /// `path:line: severity[code]: message` with a source snippet.
    Text,
    /// One JSON object with counts and diagnostics.
    Json,
}

/// Arguments of `check`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// First print what vaultdm reads the vault as: the notes of each kind and why
    /// (folder, type, tag), template folders, the timeline, the party in play.
    #[arg(long)]
    pub explain_types: bool,
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
pub fn execute(root: &Path, args: Args) -> anyhow::Result<Outcome> {
    let loaded = Loaded::load(root)?;
    let mut diags = loaded.diagnostics();
    diags.extend(crate::context::setup::template_diagnostics(root, &loaded));
    if loaded.vault.notes.is_empty() {
        diags.push(Diagnostic::error(
            ".",
            0,
            Code::NoNotes,
            format!(
                "{} holds no notes (no .md files outside hidden folders): is this your vault? Pass --vault DIR with the folder Obsidian opens",
                root.display()
            ),
        ));
    }
    diags.sort_by(|a, b| (&a.path, a.line, a.code).cmp(&(&b.path, b.line, b.code)));
    let c = &loaded.built.campaign;
    let errors = diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    let warnings = diags
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .count();
    let mut out = super::stdout();
    let mapping = args
        .explain_types
        .then(|| crate::canon::adopt::Mapping::of(&loaded));
    match args.format {
        Format::Text => {
            if let Some(m) = &mapping {
                writeln!(out, "{}", m.summary())?;
            }
            for d in &diags {
                writeln!(out, "{d}")?;
                if let Some(s) = snippet(root, d) {
                    writeln!(out, "{s}")?;
                }
            }
            writeln!(
                out,
                "checked {} notes: {} PCs, {} NPCs, {} locations, {} threads, {} events; {} errors, {} warnings",
                loaded.vault.notes.len(),
                c.pcs.len(),
                c.npcs.len(),
                c.locations.len(),
                c.threads.len(),
                c.events.len(),
                errors,
                warnings
            )?;
        }
        Format::Json => {
            let v = serde_json::json!({
                "vault": root.display().to_string(),
                "notes": loaded.vault.notes.len(),
                "pcs": c.pcs.len(),
                "npcs": c.npcs.len(),
                "locations": c.locations.len(),
                "threads": c.threads.len(),
                "events": c.events.len(),
                "errors": errors,
                "warnings": warnings,
                "diagnostics": diags,
            });
            serde_json::to_writer_pretty(&mut out, &v)?;
            writeln!(out)?;
        }
    }
    out.flush()?;
    super::exit_without_freeing(loaded);
    Ok(if errors > 0 {
        Outcome::Problems
    } else {
        Outcome::Ok
    })
}
