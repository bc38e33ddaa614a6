//! [`Watcher`]: file events for the vault folder, debounced and coalesced into batches.

use super::poll::VaultPoller;
use super::WatchError;
use crate::vault::scope::is_noise;
use notify::event::{AccessKind, AccessMode};
use notify::{EventKind, RecursiveMode};
use notify_debouncer_full::{
    new_debouncer, new_debouncer_opt, DebounceEventResult, Debouncer, NoCache, RecommendedCache,
};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

/// How to watch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchOptions {
    /// Poll the folder instead of using native file events (network drives, WSL, Docker
    /// bind mounts, where native events do not arrive).
    pub poll: bool,
    /// A file's events are held until it has been quiet this long (editors write a file
    /// in several steps).
    pub debounce: Duration,
    /// After a debounced batch, more batches arriving within this time join it, so a burst
    /// (a git checkout, a sync tool writing 500 files) becomes one reload.
    pub quiet: Duration,
    /// A continuous stream of changes is still delivered at least this often.
    pub max_delay: Duration,
    /// How often the polling watcher scans the folder.
    pub poll_interval: Duration,
}

impl Default for WatchOptions {
    fn default() -> Self {
        WatchOptions {
            poll: false,
            debounce: Duration::from_millis(150),
            quiet: Duration::from_millis(100),
            max_delay: Duration::from_secs(2),
            poll_interval: Duration::from_millis(1000),
        }
    }
}

/// Which file-event source is running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// The operating system's events (inotify, FSEvents, ReadDirectoryChangesW).
    Native,
    /// Scanning the folder every [`WatchOptions::poll_interval`], as asked for.
    Poll,
    /// Scanning, because native events could not start (see [`Watcher::fallback_reason`]).
    PollFallback,
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Backend::Native => "native events",
            Backend::Poll => "polling",
            Backend::PollFallback => "polling (fallback)",
        })
    }
}

/// One coalesced set of changes: every path that changed since the last batch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Batch {
    /// Changed paths (absolute), deduplicated and sorted. The vault folder itself means
    /// the event source lost events and everything must be re-read.
    pub paths: Vec<PathBuf>,
    /// Errors the event source reported (a folder that could not be watched…).
    pub errors: Vec<String>,
}

enum Source {
    Native(Debouncer<notify::RecommendedWatcher, RecommendedCache>),
    Poll(Debouncer<VaultPoller, NoCache>),
}

/// Watches a vault folder, recursively, and delivers [`Batch`]es on a channel.
///
/// Dropping the watcher stops it; the channel then disconnects.
pub struct Watcher {
    root: PathBuf,
    backend: Backend,
    fallback_reason: Option<String>,
    source: Source,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher")
            .field("root", &self.root)
            .field("backend", &self.backend)
            .field("fallback_reason", &self.fallback_reason)
            .finish()
    }
}

fn start_native(
    root: &Path,
    opts: &WatchOptions,
    tx: Sender<DebounceEventResult>,
) -> notify::Result<Source> {
    let mut d = new_debouncer(opts.debounce, None, tx)?;
    d.watch(root, RecursiveMode::Recursive)?;
    Ok(Source::Native(d))
}

fn start_poll(
    root: &Path,
    opts: &WatchOptions,
    tx: Sender<DebounceEventResult>,
) -> notify::Result<Source> {
    let config = notify::Config::default().with_poll_interval(opts.poll_interval);
    let mut d =
        new_debouncer_opt::<_, VaultPoller, NoCache>(opts.debounce, None, tx, NoCache, config)?;
    d.watch(root, RecursiveMode::Recursive)?;
    Ok(Source::Poll(d))
}

impl Watcher {
    /// Starts watching `root` with the default options; `poll` forces polling. Native
    /// events that cannot start fall back to polling (see [`Watcher::fallback_reason`]).
    pub fn start(root: &Path, poll: bool) -> Result<(Watcher, Receiver<Batch>), WatchError> {
        Watcher::start_with(
            root,
            &WatchOptions {
                poll,
                ..WatchOptions::default()
            },
        )
    }

    /// Starts watching `root` with the given options.
    pub fn start_with(
        root: &Path,
        opts: &WatchOptions,
    ) -> Result<(Watcher, Receiver<Batch>), WatchError> {
        let root = root.canonicalize().map_err(|e| WatchError::Start {
            path: root.to_path_buf(),
            source: notify::Error::io(e),
        })?;
        let (raw_tx, raw_rx) = mpsc::channel::<DebounceEventResult>();
        let (source, backend, fallback_reason) = if opts.poll {
            let s = start_poll(&root, opts, raw_tx).map_err(|source| WatchError::Start {
                path: root.clone(),
                source,
            })?;
            (s, Backend::Poll, None)
        } else {
            match start_native(&root, opts, raw_tx.clone()) {
                Ok(s) => (s, Backend::Native, None),
                Err(e) => {
                    let s =
                        start_poll(&root, opts, raw_tx).map_err(|source| WatchError::Start {
                            path: root.clone(),
                            source,
                        })?;
                    (s, Backend::PollFallback, Some(e.to_string()))
                }
            }
        };
        let (tx, rx) = mpsc::channel();
        let (r, quiet, max_delay) = (root.clone(), opts.quiet, opts.max_delay);
        std::thread::Builder::new()
            .name("vaultdm-watch".into())
            .spawn(move || coalesce(&r, &raw_rx, &tx, quiet, max_delay))
            .map_err(|e| WatchError::Start {
                path: root.clone(),
                source: notify::Error::io(e),
            })?;
        Ok((
            Watcher {
                root,
                backend,
                fallback_reason,
                source,
            },
            rx,
        ))
    }

    /// The watched folder (canonical path).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Which event source runs.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Why native events could not start, when polling took over.
    pub fn fallback_reason(&self) -> Option<&str> {
        self.fallback_reason.as_deref()
    }

    /// Stops watching and waits for the event thread to finish (dropping the watcher stops
    /// it too, without waiting).
    pub fn stop(self) {
        match self.source {
            Source::Native(d) => d.stop(),
            Source::Poll(d) => d.stop(),
        }
    }
}

/// Adds one debounced result to the batch being collected.
pub(super) fn add(
    root: &Path,
    result: DebounceEventResult,
    paths: &mut BTreeSet<PathBuf>,
    errors: &mut Vec<String>,
) {
    match result {
        Ok(events) => {
            for e in events {
                if e.need_rescan() {
                    paths.insert(root.to_path_buf());
                    continue;
                }
                match e.kind {
                    // Reads (ours included) and closes after reading change nothing.
                    EventKind::Access(AccessKind::Close(AccessMode::Write)) => {}
                    EventKind::Access(_) => continue,
                    _ => {}
                }
                for p in &e.paths {
                    let rel = p.strip_prefix(root).ok().map(|r| {
                        r.components()
                            .map(|c| c.as_os_str().to_string_lossy().into_owned())
                            .collect::<Vec<_>>()
                            .join("/")
                    });
                    match rel {
                        Some(rel) if !is_noise(&rel) => {
                            paths.insert(p.clone());
                        }
                        _ => {}
                    }
                }
            }
        }
        Err(errs) => errors.extend(errs.into_iter().map(|e| e.to_string())),
    }
}

/// Joins debounced results that arrive close together into one batch per burst.
fn coalesce(
    root: &Path,
    raw: &Receiver<DebounceEventResult>,
    out: &Sender<Batch>,
    quiet: Duration,
    max_delay: Duration,
) {
    while let Ok(first) = raw.recv() {
        let mut paths = BTreeSet::new();
        let mut errors = Vec::new();
        add(root, first, &mut paths, &mut errors);
        let started = Instant::now();
        let mut disconnected = false;
        while started.elapsed() < max_delay {
            match raw.recv_timeout(quiet) {
                Ok(more) => add(root, more, &mut paths, &mut errors),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => {
                    disconnected = true;
                    break;
                }
            }
        }
        if !(paths.is_empty() && errors.is_empty()) {
            let batch = Batch {
                paths: paths.into_iter().collect(),
                errors,
            };
            if out.send(batch).is_err() {
                return;
            }
        }
        if disconnected {
            return;
        }
    }
}
