//! Typed canon: turn parsed notes into a campaign (PCs, NPCs, locations, threads,
//! timeline, temporal index).
//!
//! Readers are forgiving (synonym keys, list forms, every way of writing a location) and
//! honest: every value that cannot be read, every reference that resolves to nothing, is a
//! diagnostic naming the file and line, while the rest of the campaign still builds.

pub mod adopt;
pub mod build;
pub(crate) mod diff;
pub(crate) mod files;
pub(crate) mod keys;
pub mod kind;
pub(crate) mod model;
pub(crate) mod text;

pub use build::{build, Built};
pub use diff::{Change, ChangeKind, EntityType};
pub use files::{CanonFiles, TemporalFile};
pub use kind::NoteKind;
pub use model::*;

/// Vault-relative path of the temporal index.
pub const TEMPORAL_INDEX: &str = "canon/temporal-index.json";
/// Largest temporal index read (it holds a day and a time).
pub const MAX_TEMPORAL_BYTES: u64 = 1024 * 1024;
/// Vault-relative path of the open threads file.
pub const OPEN_THREADS: &str = "canon/open-threads.md";
/// Vault-relative path of the timeline.
pub const TIMELINE: &str = "canon/timeline.md";
/// Vault-relative path of vaultdm's own clock, for a vault that keeps none (same JSON as
/// the temporal index).
pub const OWN_CLOCK: &str = ".vaultdm/clock.json";
/// The timeline vaultdm creates in a vault not of its own layout (no `canon/` folder)
/// that has none: a note named Timeline, which the reader takes as the timeline.
pub const NEW_TIMELINE: &str = "Timeline.md";

use crate::config::Config;
use crate::vault::{Diagnostic, Vault, VaultError};
use std::path::Path;

/// A vault read all the way to typed canon.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The notes.
    pub vault: Vault,
    /// `vaultdm.toml`.
    pub config: Config,
    /// Problems in `vaultdm.toml`.
    pub config_diagnostics: Vec<Diagnostic>,
    /// The files canon reads besides the notes (the temporal index), as loaded.
    pub files: CanonFiles,
    /// The typed campaign and its problems.
    pub built: Built,
}

impl Loaded {
    /// Reads the vault at `root` into canon: every file is read here (settings, notes, the
    /// temporal index), then [`build()`] turns them into the campaign without touching disk.
    pub fn load(root: &Path) -> Result<Loaded, VaultError> {
        Loaded::load_then(root, || {})
    }

    /// Like [`Loaded::load`], calling `after_read` once the notes are read and parsed
    /// (see [`Vault::load_scoped_then`]).
    pub fn load_then(root: &Path, after_read: impl FnOnce()) -> Result<Loaded, VaultError> {
        let (config, config_diagnostics) = Config::load(root);
        let scope = crate::vault::Scope::detect(root, &config.folders.templates);
        // Each note's kind is decided on the parsing threads (shedding needs it) and comes
        // back in note order, so building does not decide it again.
        let (vault, kinds) = Vault::load_scoped_then(
            root,
            scope,
            |note| build::shed_unread(note, &config),
            after_read,
        )?;
        let files = CanonFiles::read(root);
        let built = build::build_kinded(&vault, &config, &files, kinds);
        Ok(Loaded {
            vault,
            config,
            config_diagnostics,
            files,
            built,
        })
    }

    /// One line for the GM when something was left out of canon: notes that could not be
    /// read (or only partly: broken frontmatter, too large, binary) and problems in
    /// `vaultdm.toml`. `None` when everything was read.
    pub fn problems_summary(&self) -> Option<String> {
        let skipped = self.vault.notes.iter().filter(|n| n.has_errors()).count()
            + self
                .vault
                .walk_diagnostics
                .iter()
                .filter(|d| d.severity >= crate::vault::Severity::Warning)
                .count();
        let config = self
            .config_diagnostics
            .iter()
            .filter(|d| d.severity >= crate::vault::Severity::Warning)
            .count();
        let temporal = self
            .built
            .diagnostics
            .iter()
            .any(|d| d.path == TEMPORAL_INDEX && d.severity == crate::vault::Severity::Error);
        let mut parts = Vec::new();
        if skipped > 0 {
            let s = if skipped == 1 { "" } else { "s" };
            parts.push(format!("{skipped} note{s} skipped or only partly read"));
        }
        if config > 0 {
            let s = if config == 1 { "" } else { "s" };
            parts.push(format!(
                "{config} problem{s} in {}",
                crate::config::CONFIG_FILE
            ));
        }
        if temporal {
            parts.push(format!("{TEMPORAL_INDEX} could not be read"));
        }
        (!parts.is_empty()).then(|| format!("{} — run `vaultdm check`", parts.join(", ")))
    }

    /// Gives the notes and their link index back to the allocator, for a one-shot command
    /// that reads canon only through its engine from here on (`context`, `ask`): the
    /// mention matcher and the render then reuse that memory, so the process peaks at the
    /// load (docs/benchmarks.md has the figures). Settings, the other canon files
    /// and the build's problems stay.
    pub fn release_notes(&mut self) {
        drop(std::mem::take(&mut self.vault));
    }

    /// Every diagnostic: configuration, notes, links and canon, sorted by file and line.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let mut d = self.config_diagnostics.clone();
        d.extend(self.vault.diagnostics());
        d.extend(self.built.diagnostics.iter().cloned());
        d.extend(build::reading_doubts(
            &self.vault,
            &self.built.kinds,
            &self.config,
        ));
        d.sort_by(|a, b| (&a.path, a.line, a.code).cmp(&(&b.path, b.line, b.code)));
        d.dedup();
        d
    }
}
