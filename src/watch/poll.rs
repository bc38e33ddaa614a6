//! [`VaultPoller`]: a polling [`notify::Watcher`] for folders where native events do not
//! arrive (network drives, WSL with the vault on a Windows drive, Docker bind mounts).
//!
//! Why not notify's own `PollWatcher`: it compares modification times in whole seconds, so a
//! second save within the same second is never seen, nor is a file restored with an older
//! time; its content-hash mode would fix that but reads every file (all of `.git/`
//! included) on every scan, because it cannot skip folders. This poller compares each
//! file's full-precision modification time and size, skips what the vault never reads
//! (hidden folders, editors' temporary files, links leading out of the
//! vault: the rule of [`crate::vault::scope`], shared with the walk), and plugs into the
//! same debouncer through the `Watcher` trait.

use crate::vault::scope::{is_noise, is_skipped_folder, leads_outside};
use notify::event::{CreateKind, DataChange, ModifyKind, RemoveKind};
use notify::{Config, Event, EventHandler, EventKind, RecursiveMode, WatcherKind};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// What a scan remembers of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
}

pub(super) type Snapshot = HashMap<PathBuf, Stamp>;

/// `root`'s path to `p`, `/`-separated.
fn rel_of(root: &Path, p: &Path) -> Option<String> {
    p.strip_prefix(root).ok().map(|r| {
        r.components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/")
    })
}

/// Every file under `root` (the vault's real path) the vault could care about, with its
/// stamp: what is not [noise](is_noise) and not reached through a link leading out.
pub(super) fn scan(root: &Path) -> Snapshot {
    let mut out = HashMap::new();
    let walk = walkdir::WalkDir::new(root)
        .follow_links(true)
        .into_iter()
        .filter_entry(|e| {
            if e.depth() == 0 {
                return true;
            }
            if e.path_is_symlink() && leads_outside(root, e.path()) {
                return false;
            }
            match rel_of(root, e.path()) {
                // Folders: skip hidden ones; files are filtered below.
                Some(rel) if e.file_type().is_dir() => !is_skipped_folder(&rel),
                _ => true,
            }
        });
    for e in walk.filter_map(Result::ok) {
        if !e.file_type().is_file() || rel_of(root, e.path()).is_none_or(|r| is_noise(&r)) {
            continue;
        }
        if let Ok(m) = e.metadata() {
            out.insert(
                e.path().to_path_buf(),
                Stamp {
                    len: m.len(),
                    modified: m.modified().ok(),
                },
            );
        }
    }
    out
}

/// The events that turn `old` into `new`.
fn changes(old: &Snapshot, new: &Snapshot) -> Vec<Event> {
    let mut out = Vec::new();
    for (p, s) in new {
        match old.get(p) {
            None => out.push(Event::new(EventKind::Create(CreateKind::File)).add_path(p.clone())),
            Some(o) if o != s => out.push(
                Event::new(EventKind::Modify(ModifyKind::Data(DataChange::Any)))
                    .add_path(p.clone()),
            ),
            Some(_) => {}
        }
    }
    for p in old.keys() {
        if !new.contains_key(p) {
            out.push(Event::new(EventKind::Remove(RemoveKind::File)).add_path(p.clone()));
        }
    }
    out
}

/// Scans the watched folder every poll interval and reports created, changed and removed
/// files.
pub(crate) struct VaultPoller {
    handler: Option<Box<dyn EventHandler>>,
    interval: Duration,
    stop: Arc<AtomicBool>,
}

impl std::fmt::Debug for VaultPoller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VaultPoller")
            .field("interval", &self.interval)
            .finish_non_exhaustive()
    }
}

impl notify::Watcher for VaultPoller {
    fn new<F: EventHandler>(event_handler: F, config: Config) -> notify::Result<Self> {
        Ok(VaultPoller {
            handler: Some(Box::new(event_handler)),
            interval: config.poll_interval().unwrap_or(Duration::from_secs(1)),
            stop: Arc::new(AtomicBool::new(false)),
        })
    }

    /// Takes the first scan now (changes after this call are reported) and starts polling.
    /// One folder per poller.
    fn watch(&mut self, path: &Path, _recursive_mode: RecursiveMode) -> notify::Result<()> {
        let Some(mut handler) = self.handler.take() else {
            return Err(notify::Error::generic(
                "this poller already watches a folder",
            ));
        };
        if !path.is_dir() {
            return Err(notify::Error::path_not_found().add_path(path.to_path_buf()));
        }
        let root = path.to_path_buf();
        let mut seen = scan(&root);
        let (stop, interval) = (Arc::clone(&self.stop), self.interval);
        std::thread::Builder::new()
            .name("vaultdm-poll".into())
            .spawn(move || loop {
                let next = Instant::now() + interval;
                while Instant::now() < next {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(25).min(interval));
                }
                let now = scan(&root);
                for e in changes(&seen, &now) {
                    handler.handle_event(Ok(e));
                }
                seen = now;
            })
            .map_err(notify::Error::io)?;
        Ok(())
    }

    fn unwatch(&mut self, _path: &Path) -> notify::Result<()> {
        self.stop.store(true, Ordering::Relaxed);
        Ok(())
    }

    fn kind() -> WatcherKind {
        WatcherKind::PollWatcher
    }
}

impl Drop for VaultPoller {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sees_same_second_saves_restores_and_skips_hidden_folders() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir_all(root.join(".git/objects")).expect("mkdir");
        std::fs::create_dir_all(root.join("canon")).expect("mkdir");
        std::fs::write(root.join("canon/a.md"), "one").expect("write");
        std::fs::write(root.join(".git/objects/x"), "blob").expect("write");
        let before = scan(root);
        assert_eq!(before.len(), 1, "{before:?}");
        // A second write in the same second, same length: the time still differs.
        std::thread::sleep(Duration::from_millis(5));
        std::fs::write(root.join("canon/a.md"), "two").expect("write");
        std::fs::write(root.join("canon/b.md"), "new").expect("write");
        let after = scan(root);
        let mut kinds: Vec<(String, EventKind)> = changes(&before, &after)
            .into_iter()
            .map(|e| {
                (
                    e.paths[0]
                        .file_name()
                        .map(|f| f.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    e.kind,
                )
            })
            .collect();
        kinds.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            kinds,
            [
                (
                    "a.md".to_string(),
                    EventKind::Modify(ModifyKind::Data(DataChange::Any))
                ),
                ("b.md".to_string(), EventKind::Create(CreateKind::File)),
            ]
        );
        std::fs::remove_file(root.join("canon/b.md")).expect("rm");
        let gone = changes(&after, &scan(root));
        assert_eq!(gone.len(), 1);
        assert_eq!(gone[0].kind, EventKind::Remove(RemoveKind::File));
    }
}
