//! `vaultdm check`: parse everything and print every diagnostic with file and line.

use super::Outcome;
use crate::canon::Loaded;
use crate::vault::{Diagnostic, Severity};
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
}

fn snippet(root: &Path, d: &Diagnostic) -> Option<String> {
    if d.line == 0 {
        return None;
    }
    let bytes = std::fs::read(root.join(&d.path)).ok()?;
    if bytes.len() > 16 * 1024 * 1024 {
        return None;
    }
    let text = String::from_utf8_lossy(&bytes);
    let line = text.lines().nth(d.line - 1)?;
    let line: String = line.trim_end_matches('\r').chars().take(160).collect();
    Some(format!("{:>5} | {}", d.line, line.trim_start_matches('\u{feff}')))
}

/// Runs `check`.
pub fn execute(root: &Path, args: Args) -> anyhow::Result<Outcome> {
    let loaded = Loaded::load(root)?;
    let diags = loaded.diagnostics();
    let c = &loaded.built.campaign;
    let errors = diags.iter().filter(|d| d.severity == Severity::Error).count();
    let warnings = diags.iter().filter(|d| d.severity == Severity::Warning).count();
    let mut out = super::stdout();
    match args.format {
        Format::Text => {
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
    Ok(if errors > 0 { Outcome::Problems } else { Outcome::Ok })
}
