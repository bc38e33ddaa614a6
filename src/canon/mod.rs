//! Typed canon: turn parsed notes into a campaign (PCs, NPCs, locations, threads,
//! timeline, temporal index).
//!
//! Readers are forgiving (synonym keys, list forms, every way of writing a location) and
//! honest: every value that cannot be read, every reference that resolves to nothing, is a
//! diagnostic naming the file and line, while the rest of the campaign still builds.

pub mod build;
pub mod diff;
pub mod kind;
pub mod model;

pub use build::{build, Built};
pub use diff::{Change, ChangeKind, EntityType};
pub use kind::NoteKind;
pub use model::*;

/// Vault-relative path of the temporal index.
pub const TEMPORAL_INDEX: &str = "canon/temporal-index.json";
/// Vault-relative path of the open threads file.
pub const OPEN_THREADS: &str = "canon/open-threads.md";
/// Vault-relative path of the timeline.
pub const TIMELINE: &str = "canon/timeline.md";

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
    /// The typed campaign and its problems.
    pub built: Built,
}

impl Loaded {
    /// Reads the vault at `root` into canon.
    pub fn load(root: &Path) -> Result<Loaded, VaultError> {
        let (config, config_diagnostics) = Config::load(root);
        let vault = Vault::load(root)?;
        let built = build(&vault, &config);
        Ok(Loaded {
            vault,
            config,
            config_diagnostics,
            built,
        })
    }

    /// Every diagnostic: configuration, notes, links and canon, sorted by file and line.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let mut d = self.config_diagnostics.clone();
        d.extend(self.vault.diagnostics());
        d.extend(self.built.diagnostics.iter().cloned());
        d.sort_by(|a, b| (&a.path, a.line, a.code).cmp(&(&b.path, b.line, b.code)));
        d.dedup();
        d
    }
}
