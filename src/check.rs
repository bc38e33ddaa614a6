//! What `vaultdm check` reports: every diagnostic of the vault (notes, canon, templates) with
//! its file and line, and the counts of what was read. One home for `check`, the `serve`
//! API's `/campaigns/{id}/check` and the inspector page.

use crate::canon::Loaded;
use crate::vault::{Code, Diagnostic, Severity};
use serde::Serialize;
use std::path::Path;

/// The whole report, as `check --format json` prints it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Report {
    /// The vault folder.
    pub vault: String,
    /// Notes read.
    pub notes: usize,
    /// Player characters.
    pub pcs: usize,
    /// NPCs.
    pub npcs: usize,
    /// Locations.
    pub locations: usize,
    /// Storylines (open and resolved).
    pub threads: usize,
    /// Timeline events.
    pub events: usize,
    /// Diagnostics that are errors.
    pub errors: usize,
    /// Diagnostics that are warnings.
    pub warnings: usize,
    /// Every diagnostic, by file, line and code.
    pub diagnostics: Vec<Diagnostic>,
}

impl Report {
    /// Checks a loaded vault: its notes' and canon's diagnostics, the templates', and an
    /// error when the folder holds no notes at all.
    pub(crate) fn of(root: &Path, loaded: &Loaded) -> Report {
        let mut diags = loaded.diagnostics();
        diags.extend(crate::context::setup::template_diagnostics(root, loaded));
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
        let count = |s: Severity| diags.iter().filter(|d| d.severity == s).count();
        Report {
            vault: root.display().to_string(),
            notes: loaded.vault.notes.len(),
            pcs: c.pcs.len(),
            npcs: c.npcs.len(),
            locations: c.locations.len(),
            threads: c.threads.len(),
            events: c.events.len(),
            errors: count(Severity::Error),
            warnings: count(Severity::Warning),
            diagnostics: diags,
        }
    }

    /// The closing line of `check`.
    pub(crate) fn summary(&self) -> String {
        format!(
            "checked {} notes: {} PCs, {} NPCs, {} locations, {} threads, {} events; {} errors, {} warnings",
            self.notes,
            self.pcs,
            self.npcs,
            self.locations,
            self.threads,
            self.events,
            self.errors,
            self.warnings
        )
    }
}
