//! [`Canon`]: live canon for a session at the table — watched when a watcher starts, else
//! loaded once and re-read on request — behind one handle, so a REPL need not care which.

use super::{Live, LiveWatch, Reload, WatchError, WatchOptions};
use std::path::Path;

/// Canon for a session: watched (reloaded on every edit), or static when no watcher could
/// start (re-read only by [`Canon::reload_now`]).
#[derive(Debug)]
pub enum Canon {
    /// Watched: edits arrive as reloads.
    Watched(Box<LiveWatch>),
    /// Not watched, and why.
    Static {
        /// The canon.
        live: Box<Live>,
        /// Why no watcher runs.
        why: String,
    },
}

/// How canon is kept current when not by native file events, for the GM to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fallback<'a> {
    /// Native events could not start (why); the vault is polled instead.
    Polling(&'a str),
    /// No watcher at all (why): edits show only after a `/reload`.
    Unwatched(&'a str),
}

impl Canon {
    /// Starts watching the vault at `root` and loads it; when no watcher can start, loads it
    /// unwatched. Fails only when the vault cannot be loaded at all.
    pub fn start(root: &Path, opts: &WatchOptions) -> Result<Canon, WatchError> {
        match LiveWatch::start(root, opts) {
            Ok(w) => Ok(Canon::Watched(Box::new(w))),
            Err(e) => Ok(Canon::Static {
                live: Box::new(Live::load(root)?),
                why: e.to_string(),
            }),
        }
    }

    /// How canon is kept current, when not by native events.
    pub fn fallback(&self) -> Option<Fallback<'_>> {
        match self {
            Canon::Watched(w) => w.watcher().fallback_reason().map(Fallback::Polling),
            Canon::Static { why, .. } => Some(Fallback::Unwatched(why)),
        }
    }

    /// The current canon.
    pub fn live(&self) -> &Live {
        match self {
            Canon::Watched(w) => w.live(),
            Canon::Static { live, .. } => live,
        }
    }

    /// The edits that arrived since the last call, as one reload (none when nothing
    /// relevant changed or nothing watches), and the watcher's errors.
    pub fn pending(&mut self) -> (Option<Reload>, Vec<String>) {
        match self {
            Canon::Watched(w) => (w.try_reload(), w.take_errors()),
            Canon::Static { .. } => (None, vec![]),
        }
    }

    /// Reloads exactly these files now (vaultdm's own writes: the next message sees them
    /// without waiting for the watcher, which then finds nothing new in them).
    pub fn reload_paths(&mut self, paths: &[std::path::PathBuf]) -> Reload {
        match self {
            Canon::Watched(w) => w.live_mut().apply(paths),
            Canon::Static { live, .. } => live.apply(paths),
        }
    }

    /// Re-reads the whole vault now (`/reload`).
    pub fn reload_now(&mut self) -> Reload {
        match self {
            Canon::Watched(w) => w.reload_now(),
            Canon::Static { live, .. } => live.reload_now(),
        }
    }
}
