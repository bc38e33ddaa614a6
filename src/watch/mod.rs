//! Live canon: reload on every edit and say what changed.
//!
//! GMs edit notes mid-session: an NPC dies, the party moves, a thread becomes urgent. A DM
//! that keeps playing the old canon breaks the table, so vaultdm reloads the moment a note
//! is saved and reports the change entity by entity (`Jake: HP 13/13 -> 4/13`).
//!
//! Three parts, usable alone or together:
//!
//! - [`Watcher`] watches the vault *folder* (recursively, never single files: editors save
//!   by writing a new file and renaming it over the old one) with notify-debouncer-full,
//!   drops what is never canon ([`crate::vault::scope`]: `.obsidian/`, `.trash/`, `.vaultdm/`, the root
//!   `sessions/`, swap/backup/temp files), and joins bursts so a git checkout writing 500
//!   files arrives as one [`Batch`]. `--poll` (or native events failing to start) plugs
//!   [`poll::VaultPoller`] into the same debouncer instead (see there why not notify's own
//!   `PollWatcher`).
//! - [`Live`] holds the canon: notes, link index, `vaultdm.toml`, the built campaign and
//!   the context [`Engine`](crate::context::Engine). [`Live::apply`] re-reads only the
//!   changed paths and returns a [`Reload`]: the [`Change`](crate::canon::Change)s, new
//!   diagnostics, how many files and how long. A note that stops parsing (half-typed YAML)
//!   keeps its last good version in canon with a `stale-note` diagnostic until it parses
//!   again; a deleted note leaves canon; a moved note with unchanged bytes keeps its
//!   identity (reported as renamed, not removed and added).
//! - [`LiveWatch`] is both in one handle, for a REPL or `vaultdm watch`.
//!
//! # In a REPL
//!
//! ```no_run
//! use std::time::Duration;
//! use vaultdm::watch::{LiveWatch, WatchOptions};
//!
//! # fn main() -> Result<(), vaultdm::watch::WatchError> {
//! let mut lw = LiveWatch::start("my-vault".as_ref(), &WatchOptions::default())?;
//! if let Some(reason) = lw.watcher().fallback_reason() {
//!     eprintln!("native file events unavailable ({reason}); polling instead");
//! }
//! loop {
//!     // Between turns (never while a reply streams): apply whatever arrived.
//!     if let Some(reload) = lw.try_reload() {
//!         println!("{reload}"); // canon reloaded (1 file, 3 ms): Jake: HP 13/13 -> 4/13
//!         // reload.changes go into the next message's `Canon updated:` block.
//!     }
//!     let engine = lw.live().engine(); // build the next context from here
//!     # let _ = engine; break;
//! }
//! // `/reload`:
//! let reload = lw.reload_now();
//! # let _ = reload;
//! # Ok(()) }
//! ```
//!
//! The parts separately: `let (watcher, rx) = Watcher::start(root, poll)?;` keeps the
//! watcher alive while `rx` yields batches; `live.apply(&batch.paths)` applies one (or
//! several, concatenated).
//!
//! For a `Canon updated:` block covering everything since the last message (several
//! reloads, an HP edited twice), keep a clone of the engine from that message — it shares
//! the campaign, and a later reload copies the campaign before changing it — and diff:
//! `canon::diff::diff(sent.campaign(), lw.live().campaign())` gives the net changes.
//!
//! # Cost
//!
//! A reload re-reads and re-parses only the changed files, updates the link index in place
//! (or rebuilds it once for large batches), rebuilds the typed campaign from the parsed
//! notes, and rebuilds the mention matcher only when it no longer serves the new canon
//! ([`Matcher::serves`](crate::mentions::Matcher::serves): an entity came or went, or a
//! name, alias, note id, carried item, role or place kind changed; after a reload of a few
//! notes only their entities, the PCs and the threads are compared). See the "Live reload"
//! section of `docs/benchmarks.md` for measured times.

#[cfg(test)]
mod agree;
mod canon;
mod incremental;
mod live;
pub(crate) mod poll;
mod watcher;

pub use canon::{Canon, Fallback};
pub use live::{Live, Reload};
pub use watcher::{Backend, Batch, WatchOptions, Watcher};

use crate::context::TemplateError;
use crate::vault::VaultError;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};

/// Errors that stop live canon from starting (a change while running never does: it
/// becomes a diagnostic in the [`Reload`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WatchError {
    /// The vault could not be read at all.
    #[error(transparent)]
    Vault(VaultError),
    /// The vault's template overrides do not load.
    #[error(transparent)]
    Templates {
        /// Why.
        source: TemplateError,
    },
    /// Neither native events nor polling could watch the folder.
    #[error("{path}: could not watch the folder: {source}")]
    Start {
        /// The vault folder.
        path: PathBuf,
        /// Why.
        source: notify::Error,
    },
}

/// Live canon and its watcher in one handle.
pub struct LiveWatch {
    live: Live,
    watcher: Watcher,
    rx: Receiver<Batch>,
    errors: Vec<String>,
    disconnected: bool,
}

impl std::fmt::Debug for LiveWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveWatch")
            .field("live", &self.live)
            .field("watcher", &self.watcher)
            .finish_non_exhaustive()
    }
}

impl LiveWatch {
    /// Starts watching `root`, then loads it (in that order, so an edit made during the
    /// load is not missed).
    pub fn start(root: &Path, opts: &WatchOptions) -> Result<LiveWatch, WatchError> {
        let (watcher, rx) = Watcher::start_with(root, opts)?;
        let live = Live::load(root)?;
        Ok(LiveWatch::from_parts(live, watcher, rx))
    }

    /// Joins live canon already loaded with a watcher already started.
    pub fn from_parts(live: Live, watcher: Watcher, rx: Receiver<Batch>) -> LiveWatch {
        LiveWatch {
            live,
            watcher,
            rx,
            errors: Vec::new(),
            disconnected: false,
        }
    }

    /// The live canon.
    pub fn live(&self) -> &Live {
        &self.live
    }

    /// The live canon, to apply paths by hand.
    pub fn live_mut(&mut self) -> &mut Live {
        &mut self.live
    }

    /// The watcher (backend, fallback reason).
    pub fn watcher(&self) -> &Watcher {
        &self.watcher
    }

    /// Applies every batch already delivered, as one reload, without waiting. `None` when
    /// nothing arrived or nothing relevant changed.
    pub fn try_reload(&mut self) -> Option<Reload> {
        let mut paths = Vec::new();
        loop {
            match self.rx.try_recv() {
                Ok(b) => self.take(b, &mut paths),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    self.lost();
                    break;
                }
            }
        }
        self.apply(&paths)
    }

    /// Waits up to `timeout` for changes and applies them (and anything else already
    /// delivered) as one reload. `None` when nothing relevant changed in that time.
    pub fn wait_reload(&mut self, timeout: Duration) -> Option<Reload> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(b) => {
                    let mut paths = Vec::new();
                    self.take(b, &mut paths);
                    while let Ok(b) = self.rx.try_recv() {
                        self.take(b, &mut paths);
                    }
                    if let Some(r) = self.apply(&paths) {
                        return Some(r);
                    }
                }
                Err(RecvTimeoutError::Timeout) => return None,
                Err(RecvTimeoutError::Disconnected) => {
                    self.lost();
                    std::thread::sleep(left);
                    return None;
                }
            }
            if Instant::now() >= deadline {
                return None;
            }
        }
    }

    /// Re-reads the whole vault now (`/reload`).
    pub fn reload_now(&mut self) -> Reload {
        self.live.reload_now()
    }

    /// Errors the watcher reported since the last call.
    pub fn take_errors(&mut self) -> Vec<String> {
        std::mem::take(&mut self.errors)
    }

    fn take(&mut self, b: Batch, paths: &mut Vec<PathBuf>) {
        paths.extend(b.paths);
        self.errors.extend(b.errors);
    }

    fn lost(&mut self) {
        if !self.disconnected {
            self.disconnected = true;
            self.errors.push(
                "the file watcher stopped; edits are no longer picked up (use /reload)".into(),
            );
        }
    }

    fn apply(&mut self, paths: &[PathBuf]) -> Option<Reload> {
        if paths.is_empty() {
            return None;
        }
        let r = self.live.apply(paths);
        (!r.is_empty()).then_some(r)
    }
}

impl From<VaultError> for WatchError {
    fn from(e: VaultError) -> Self {
        WatchError::Vault(e)
    }
}
