//! What canon needs from the vault besides its notes: the temporal index, vaultdm's own
//! clock (`.vaultdm/clock.json`, for a vault that keeps none) and two facts about the
//! vault folder. The loading step ([`super::Loaded::load`], and the live reload
//! in `watch/`) reads them; [`super::build()`] only receives them, so building canon reads
//! no file and gives the same campaign for the same notes and inputs.

use super::{MAX_TEMPORAL_BYTES, OWN_CLOCK, TEMPORAL_INDEX};
use crate::vault::boundary;
use std::path::Path;

/// A clock file (`canon/temporal-index.json`, `.vaultdm/clock.json`) as the loading step
/// found it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum TemporalFile {
    /// There is no such file.
    #[default]
    Missing,
    /// The file is there but could not be read (why: a link out of the vault, too large…).
    Unreadable(String),
    /// Its text (parsed by `build`, which reports what is wrong with it).
    Text(String),
}

/// The inputs of canon that are not notes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CanonFiles {
    /// `canon/temporal-index.json`.
    pub temporal: TemporalFile,
    /// `.vaultdm/clock.json`: vaultdm's own clock, for a vault that keeps none.
    pub clock: TemporalFile,
    /// The vault folder's own name (its real name, even when opened as `.`), which names a
    /// campaign `vaultdm.toml` does not.
    pub folder_name: Option<String>,
    /// The vault has a `canon/` folder (vaultdm's own layout), where a missing temporal
    /// index is worth a warning rather than a quiet note.
    pub canon_folder: bool,
}

impl CanonFiles {
    /// Reads them from the vault at `root`, through the same boundary as every other fixed
    /// read (no link followed out of the vault, a size cap).
    pub fn read(root: &Path) -> CanonFiles {
        let read = |rel: &str| match boundary::read_text_inside(
            root,
            Path::new(rel),
            MAX_TEMPORAL_BYTES,
        ) {
            Ok(t) => TemporalFile::Text(t),
            Err(e) if e.is_not_found() => TemporalFile::Missing,
            Err(e) => TemporalFile::Unreadable(e.to_string()),
        };
        CanonFiles {
            temporal: read(TEMPORAL_INDEX),
            clock: read(OWN_CLOCK),
            folder_name: root
                .canonicalize()
                .ok()
                .and_then(|p| p.file_name().map(|f| f.to_string_lossy().into_owned())),
            canon_folder: root.join("canon").is_dir(),
        }
    }
}
