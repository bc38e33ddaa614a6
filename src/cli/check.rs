//! `vaultdm check`: parse everything and print every diagnostic with file and line.

use super::Outcome;
use crate::canon::Loaded;
use crate::config::CONFIG_FILE;
use crate::context::{ContextError, Engine, ModeChoice, Options, TemplateError, Templates};
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
    Some(format!(
        "{:>5} | {}",
        d.line,
        line.trim_start_matches('\u{feff}')
    ))
}

/// Problems with the vault's template overrides: a `templates` folder that does not
/// exist, or a template that does not parse or render (with its file and line), since
/// `context` refuses to run on a broken template.
fn template_diagnostics(root: &Path, loaded: &Loaded) -> Vec<Diagnostic> {
    let Some(folder) = loaded.config.templates.as_deref() else {
        return vec![];
    };
    let toml = std::fs::read_to_string(root.join(CONFIG_FILE)).unwrap_or_default();
    let line = toml
        .lines()
        .position(|l| l.trim_start().starts_with("templates") && l.contains('='))
        .map_or(0, |i| i + 1);
    let dir = root.join(folder);
    if !dir.is_dir() {
        return vec![Diagnostic::warning(
            CONFIG_FILE,
            line,
            "templates",
            format!("templates = \"{folder}\": no such folder in the vault; the built-in templates are used"),
        )];
    }
    let rel = |name: &str| {
        Path::new(name)
            .strip_prefix(root)
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .unwrap_or_else(|_| name.to_string())
    };
    let as_diag = |e: TemplateError| match e {
        TemplateError::Template {
            name,
            line,
            message,
        } => Diagnostic::error(
            &rel(&name),
            line.unwrap_or(0),
            "template",
            format!("template error: {message}; `context` refuses to run until it is fixed"),
        ),
        read @ TemplateError::Read { .. } => {
            Diagnostic::error(CONFIG_FILE, line, "template", read.to_string())
        }
    };
    let templates = match Templates::load(Some(&dir)) {
        Ok(t) => t,
        Err(e) => return vec![as_diag(e)],
    };
    // Some mistakes (an unknown filter, a bad call) only show when rendering.
    let engine = Engine::new(loaded.built.campaign.clone(), templates);
    let mut out = Vec::new();
    for (mode, message) in [
        (ModeChoice::Full, None),
        (ModeChoice::Light, Some("vaultdm check".to_string())),
    ] {
        let opts = Options {
            mode,
            message,
            ..Options::default()
        };
        if let Err(ContextError::Template(e)) = engine.build(&opts) {
            let d = as_diag(e);
            if !out.contains(&d) {
                out.push(d);
            }
        }
    }
    out
}

/// Runs `check`.
pub fn execute(root: &Path, args: Args) -> anyhow::Result<Outcome> {
    let loaded = Loaded::load(root)?;
    let mut diags = loaded.diagnostics();
    diags.extend(template_diagnostics(root, &loaded));
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
    Ok(if errors > 0 {
        Outcome::Problems
    } else {
        Outcome::Ok
    })
}
