//! The vault boundary: nothing is read or written through a link that leaves the vault.
//!
//! A vault is synced, shared and downloaded, so it can hold symlinks planted by someone else:
//! `vaultdm.toml` pointing at `~/.ssh/config`, `sessions/2026-11-23.md` pointing at a file the
//! GM cares about. Every fixed path vaultdm reads (`vaultdm.toml`, `canon/temporal-index.json`,
//! templates) goes through [`read_inside`], and every file it writes (session logs,
//! transcripts, locks) is opened with [`open_inside`] in a folder made by [`dir_inside`]:
//!
//! - a path whose real location (symlinks resolved) is outside the vault is refused with
//!   [`BoundaryError::Outside`], whatever kind of file it is;
//! - files written are opened with `O_NOFOLLOW`, so a link swapped in between the check and
//!   the open fails instead of being followed;
//! - sizes are checked before a file is read ([`BoundaryError::TooLarge`]).
//!
//! Links that stay inside the vault are followed, as the note walk does.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

/// Why a path in the vault could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BoundaryError {
    /// The path (or a folder on the way) is a link that leads out of the vault.
    #[error("{rel} is a link to {target}, outside the vault; vaultdm never reads or writes through it (replace the link with a real file or folder)")]
    Outside {
        /// Vault-relative path.
        rel: String,
        /// Where the link leads.
        target: String,
    },
    /// The file is larger than vaultdm reads for this purpose.
    #[error("{rel} is {size} bytes, over the {max}-byte limit for this file; it was not read")]
    TooLarge {
        /// Vault-relative path.
        rel: String,
        /// Its size.
        size: u64,
        /// The limit.
        max: u64,
    },
    /// Something on the way is not a folder (e.g. a file named `sessions`).
    #[error("{rel} is not a folder")]
    NotAFolder {
        /// Vault-relative path.
        rel: String,
    },
    /// The file has more than one name (a hard link): its other name may be outside the
    /// vault, so it is neither read nor written.
    #[error("{rel} is a hard link ({links} names for one file): another name may be outside the vault, so vaultdm neither reads nor writes it (replace it with a plain copy: `cp {rel} x && mv x {rel}`)")]
    HardLinked {
        /// The path.
        rel: String,
        /// How many names the file has.
        links: u64,
    },
    /// The file is read-only: the GM (or a sync tool) protected it.
    #[error(
        "{rel} is read-only; vaultdm never writes a protected note (make it writable to let it)"
    )]
    ReadOnly {
        /// Vault-relative path.
        rel: String,
    },
    /// An I/O error.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

impl BoundaryError {
    /// True for a missing file (not an error for optional files such as `vaultdm.toml`).
    pub fn is_not_found(&self) -> bool {
        matches!(self, BoundaryError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BoundaryError + '_ {
    move |source| BoundaryError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The vault root with symlinks resolved (the root itself may be a link: that is the GM's
/// choice, not a planted one).
pub(crate) fn real_root(root: &Path) -> PathBuf {
    root.canonicalize().unwrap_or_else(|_| root.to_path_buf())
}

/// `/`-joined relative form of `rel` for messages; `..` and absolute parts are kept visible.
fn shown(rel: &Path) -> String {
    rel.to_string_lossy().replace('\\', "/")
}

/// Checks that `root/rel` (which exists) really lies inside the vault. Relative paths with
/// `..` or an absolute `rel` are judged by where they lead, like links.
pub(crate) fn check_inside(root: &Path, rel: &Path) -> Result<PathBuf, BoundaryError> {
    let path = root.join(rel);
    let real = path.canonicalize().map_err(io(&path))?;
    if real.starts_with(real_root(root)) {
        Ok(real)
    } else {
        Err(BoundaryError::Outside {
            rel: shown(rel),
            target: real.display().to_string(),
        })
    }
}

/// Reads a file of the vault, at most `max` bytes, refusing links out of the vault.
pub(crate) fn read_inside(root: &Path, rel: &Path, max: u64) -> Result<Vec<u8>, BoundaryError> {
    let real = check_inside(root, rel)?;
    let f = File::open(&real).map_err(io(&real))?;
    let size = f.metadata().map_err(io(&real))?.len();
    if size > max {
        return Err(BoundaryError::TooLarge {
            rel: shown(rel),
            size,
            max,
        });
    }
    let mut buf = Vec::with_capacity(size as usize);
    // `take` guards against a file that grows between the size check and the read.
    f.take(max + 1).read_to_end(&mut buf).map_err(io(&real))?;
    if buf.len() as u64 > max {
        return Err(BoundaryError::TooLarge {
            rel: shown(rel),
            size: buf.len() as u64,
            max,
        });
    }
    Ok(buf)
}

/// [`read_inside`] as UTF-8 text (invalid bytes replaced, a BOM dropped).
pub(crate) fn read_text_inside(root: &Path, rel: &Path, max: u64) -> Result<String, BoundaryError> {
    let bytes = read_inside(root, rel, max)?;
    let text = String::from_utf8_lossy(&bytes);
    Ok(text.strip_prefix('\u{feff}').unwrap_or(&text).to_string())
}

/// The names in the vault's folder `root/rel` (none when it does not exist), refusing a
/// folder that is a link out of the vault.
pub(crate) fn list_inside(
    root: &Path,
    rel: &Path,
) -> Result<Vec<std::ffi::OsString>, BoundaryError> {
    let real = match check_inside(root, rel) {
        Err(e) if e.is_not_found() => return Ok(Vec::new()),
        r => r?,
    };
    let entries = std::fs::read_dir(&real).map_err(io(&real))?;
    Ok(entries
        .filter_map(|e| e.ok().map(|e| e.file_name()))
        .collect())
}

/// Makes sure the folder `root/rel` exists and lies inside the vault, creating the missing
/// parts one level at a time (never through a link out of the vault). Returns its path
/// under `root`.
pub(crate) fn dir_inside(root: &Path, rel: &Path) -> Result<PathBuf, BoundaryError> {
    let real_root = real_root(root);
    let mut cur = root.to_path_buf();
    let mut so_far = PathBuf::new();
    for c in rel.components() {
        let Component::Normal(part) = c else {
            return Err(BoundaryError::NotAFolder { rel: shown(rel) });
        };
        cur.push(part);
        so_far.push(part);
        match std::fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => {
                let real = cur.canonicalize().map_err(io(&cur))?;
                if !real.starts_with(&real_root) {
                    return Err(BoundaryError::Outside {
                        rel: shown(&so_far),
                        target: real.display().to_string(),
                    });
                }
                if !real.is_dir() {
                    return Err(BoundaryError::NotAFolder {
                        rel: shown(&so_far),
                    });
                }
            }
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(BoundaryError::NotAFolder {
                    rel: shown(&so_far),
                })
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => match std::fs::create_dir(&cur) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(io(&cur)(e)),
            },
            Err(e) => return Err(io(&cur)(e)),
        }
    }
    Ok(cur)
}

/// Opens a file for writing in a folder already checked by [`dir_inside`], never following
/// a symlink at the file itself (`O_NOFOLLOW`): a planted link fails to open instead of
/// being written through.
pub(crate) fn open_inside(path: &Path, opts: &mut OpenOptions) -> Result<File, BoundaryError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NOFOLLOW);
    }
    #[cfg(not(unix))]
    {
        if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(BoundaryError::Outside {
                rel: path.display().to_string(),
                target: "a link".into(),
            });
        }
    }
    // A file with another name could be written (or read) through that name from outside
    // the vault: refused before opening (which may truncate) and after (it may have been
    // linked in between).
    refuse_hard_link(path, std::fs::symlink_metadata(path).ok())?;
    let file = opts.open(path).map_err(|e| {
        if is_symlink_refusal(&e) {
            let target = std::fs::read_link(path)
                .map(|t| t.display().to_string())
                .unwrap_or_else(|_| "a link".into());
            BoundaryError::Outside {
                rel: path.display().to_string(),
                target,
            }
        } else {
            io(path)(e)
        }
    })?;
    refuse_hard_link(path, file.metadata().ok())?;
    Ok(file)
}

fn refuse_hard_link(path: &Path, meta: Option<std::fs::Metadata>) -> Result<(), BoundaryError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let Some(m) = meta.filter(|m| m.is_file() && m.nlink() > 1) {
            return Err(BoundaryError::HardLinked {
                rel: path.display().to_string(),
                links: m.nlink(),
            });
        }
    }
    #[cfg(not(unix))]
    let _ = (path, meta);
    Ok(())
}

/// Replaces (or creates) the vault file `root/rel` with `bytes` atomically: the bytes go to a
/// temporary file in the same folder, which is synced and then renamed over the note, and
/// the folder is synced, so a reader (Obsidian, a sync tool, vaultdm's own watcher) sees
/// the old note or the new one, never half of one. A note that is a link inside the vault
/// is written where the link leads (the link stays); a link out of the vault is refused.
/// The note keeps its permissions. Returns the path written.
pub(crate) fn write_atomic_inside(
    root: &Path,
    rel: &Path,
    bytes: &[u8],
) -> Result<PathBuf, BoundaryError> {
    let target = target_inside(root, rel)?;
    let tmp = temp_beside(&target, bytes)?;
    if let Err(e) = std::fs::rename(&tmp, &target).map_err(io(&target)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    sync_dir(&target);
    Ok(target)
}

/// The real path a write of `rel` replaces: inside the vault, its folder checked (a link
/// that stays inside is followed, as the walk does).
fn target_inside(root: &Path, rel: &Path) -> Result<PathBuf, BoundaryError> {
    let path = root.join(rel);
    match std::fs::symlink_metadata(&path) {
        Ok(m) if m.file_type().is_symlink() => check_inside(root, rel),
        Ok(_) => {
            let parent = rel.parent().unwrap_or(Path::new(""));
            if !parent.as_os_str().is_empty() {
                check_inside(root, parent)?;
            }
            Ok(path)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let parent = rel.parent().unwrap_or(Path::new(""));
            Ok(dir_inside(root, parent)?.join(rel.file_name().unwrap_or_default()))
        }
        Err(e) => Err(io(&path)(e)),
    }
}

/// The marker in the names of vaultdm's own temp files (`.<note>.vaultdm-<pid>-<n>.tmp`).
pub(crate) const TEMP_MARK: &str = ".vaultdm-";

/// Whether `name` is one of vaultdm's own temp files, left by a write that was killed.
pub(crate) fn is_own_temp(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(".tmp") && name.contains(TEMP_MARK)
}

/// Writes `bytes` to a new temp file beside `target` (with `target`'s permissions), synced.
fn temp_beside(target: &Path, bytes: &[u8]) -> Result<PathBuf, BoundaryError> {
    let dir = target.parent().unwrap_or(Path::new("."));
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let perms = std::fs::metadata(target).ok().map(|m| m.permissions());
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".{name}{TEMP_MARK}{}-{n}.tmp", std::process::id()));
    let written = (|| {
        let mut f = open_inside(&tmp, OpenOptions::new().write(true).create_new(true))?;
        f.write_all(bytes).map_err(io(&tmp))?;
        if let Some(p) = perms {
            f.set_permissions(p).map_err(io(&tmp))?;
        }
        f.sync_all().map_err(io(&tmp))
    })();
    match written {
        Ok(()) => Ok(tmp),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// The rename is durable once the folder is synced.
fn sync_dir(target: &Path) {
    if let Ok(d) = File::open(target.parent().unwrap_or(Path::new("."))) {
        let _ = d.sync_all();
    }
}

/// What [`replace_inside_if`] did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Replaced {
    /// The file now holds the new bytes (its real path).
    Done(PathBuf),
    /// The file was not what the caller planned on (someone saved it meanwhile): nothing
    /// was written; here is what it holds now (`None`: it is gone).
    Changed(Option<Vec<u8>>),
}

/// The bytes at `path` (`None`: no file).
fn current(path: &Path) -> Result<Option<Vec<u8>>, BoundaryError> {
    match std::fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(path)(e)),
    }
}

/// Swaps two paths atomically (Linux `renameat2(RENAME_EXCHANGE)`); `Ok(false)` where the
/// system or the file system cannot.
fn exchange(a: &Path, b: &Path) -> Result<bool, BoundaryError> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{renameat_with, RenameFlags, CWD};
        use rustix::io::Errno;
        match renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE) {
            Ok(()) => Ok(true),
            Err(e) if e == Errno::INVAL || e == Errno::NOSYS || e == Errno::OPNOTSUPP => Ok(false),
            Err(e) => Err(io(b)(e.into())),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (a, b);
        Ok(false)
    }
}

/// Replaces `rel` with `bytes` only while it still holds `expect` (`None`: only while it
/// does not exist) — the check an editor's save between vaultdm's read and its write needs.
///
/// The new text is written to a temp file and synced first; then the note is compared with
/// `expect` and swapped in. On Linux the swap is `RENAME_EXCHANGE`, so the text replaced is
/// read back afterwards: if someone saved in the instant between the compare and the swap,
/// the swap is undone and their text is returned in [`Replaced::Changed`] (nothing of theirs
/// is lost); elsewhere the window is the instant between the compare and the rename. A new
/// file is created with a hard link, which never replaces one made meanwhile. A read-only
/// note is refused ([`BoundaryError::ReadOnly`]).
pub(crate) fn replace_inside_if(
    root: &Path,
    rel: &Path,
    bytes: &[u8],
    expect: Option<&[u8]>,
) -> Result<Replaced, BoundaryError> {
    let target = target_inside(root, rel)?;
    if let Ok(m) = std::fs::metadata(&target) {
        if m.permissions().readonly() {
            return Err(BoundaryError::ReadOnly {
                rel: rel.display().to_string(),
            });
        }
    }
    let tmp = temp_beside(&target, bytes)?;
    let done = (|| {
        let now = current(&target)?;
        if now.as_deref() != expect {
            return Ok(Replaced::Changed(now));
        }
        if expect.is_none() {
            return match std::fs::hard_link(&tmp, &target) {
                Ok(()) => Ok(Replaced::Done(target.clone())),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    Ok(Replaced::Changed(current(&target)?))
                }
                Err(e) => Err(io(&target)(e)),
            };
        }
        if !exchange(&tmp, &target)? {
            std::fs::rename(&tmp, &target).map_err(io(&target))?;
            return Ok(Replaced::Done(target.clone()));
        }
        // `tmp` now holds what was replaced: it must be what was planned on. It is read back
        // through a handle kept open, after the folder is synced, so that a write someone
        // began on the old file just before the swap (an editor's append) has landed and is
        // seen; and looked at once more after its name is gone, for a write later still.
        let mut old = File::open(&tmp).map_err(io(&tmp))?;
        sync_dir(&target);
        let mut replaced = Vec::new();
        old.read_to_end(&mut replaced).map_err(io(&tmp))?;
        if replaced.as_slice() == expect.unwrap_or_default() {
            let _ = std::fs::remove_file(&tmp);
            let late = old.metadata().map_err(io(&tmp))?.len();
            if late == replaced.len() as u64 {
                return Ok(Replaced::Done(target.clone()));
            }
            // Written to after all: theirs goes back, if the note is still ours.
            let mut theirs = Vec::new();
            std::io::Seek::rewind(&mut old).map_err(io(&tmp))?;
            old.read_to_end(&mut theirs).map_err(io(&tmp))?;
            let back = temp_beside(&target, &theirs)?;
            if current(&target)?.as_deref() == Some(bytes) {
                std::fs::rename(&back, &target).map_err(io(&target))?;
            } else {
                let _ = std::fs::remove_file(&back);
            }
            return Ok(Replaced::Changed(current(&target)?));
        }
        // Someone saved in between: put theirs back (and again, should they save once more
        // while this runs), then report it.
        for _ in 0..8 {
            exchange(&tmp, &target)?;
            if current(&tmp)?.as_deref() == Some(bytes) {
                break;
            }
        }
        Ok(Replaced::Changed(current(&target)?))
    })();
    // The temp file is gone after a rename; after a link or an exchange it holds the old or
    // the unused text.
    if tmp.exists() {
        let _ = std::fs::remove_file(&tmp);
    }
    if matches!(done, Ok(Replaced::Done(_))) {
        sync_dir(&target);
    }
    done
}

/// Removes vaultdm's own temp files left in the vault by a write that was killed (`kill -9`
/// between writing one and renaming it). Only files of its own naming, older than a minute
/// (so a write in progress in another process is left alone), are removed; returns their
/// vault-relative paths.
pub(crate) fn clean_own_temps(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let walk = walkdir::WalkDir::new(root)
        .follow_links(false)
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || e.file_name() != ".git")
        .flatten();
    for e in walk {
        let name = e.file_name().to_string_lossy();
        if !e.file_type().is_file() || !is_own_temp(&name) {
            continue;
        }
        let old = e
            .metadata()
            .ok()
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age.as_secs() >= 60);
        if old && std::fs::remove_file(e.path()).is_ok() {
            let rel = e.path().strip_prefix(root).unwrap_or(e.path());
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
    out.sort();
    out
}

/// `O_NOFOLLOW` on a symlink fails with `ELOOP`.
fn is_symlink_refusal(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    {
        e.raw_os_error() == Some(libc::ELOOP)
    }
    #[cfg(not(unix))]
    {
        let _ = e;
        false
    }
}

/// The identity of a file or folder on disk (device and inode), to notice that a path now
/// names another file (a sync tool replaced it) or a folder moved away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    /// The identity of what `path` names (links followed).
    pub(crate) fn of_path(path: &Path) -> Option<FileId> {
        std::fs::metadata(path).ok().map(|m| Self::of(&m))
    }

    /// The identity of what `path` names itself (a link is its own file).
    pub(crate) fn of_link(path: &Path) -> Option<FileId> {
        std::fs::symlink_metadata(path).ok().map(|m| Self::of(&m))
    }

    /// The identity of an open file.
    pub(crate) fn of_file(f: &File) -> Option<FileId> {
        f.metadata().ok().map(|m| Self::of(&m))
    }

    #[cfg(unix)]
    fn of(m: &std::fs::Metadata) -> FileId {
        use std::os::unix::fs::MetadataExt;
        FileId {
            dev: m.dev(),
            ino: m.ino(),
        }
    }

    #[cfg(not(unix))]
    fn of(m: &std::fs::Metadata) -> FileId {
        // Without inodes, the creation time stands in: a replaced file was created anew.
        let t = m
            .created()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as u64);
        FileId { dev: 0, ino: t }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn tmp() -> tempfile::TempDir {
        tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn reads_inside_refuses_links_out() {
        let vault = tmp();
        let outside = tmp();
        std::fs::write(outside.path().join("secret"), "top secret").unwrap_or_default();
        std::fs::write(vault.path().join("vaultdm.toml"), "name = \"x\"").unwrap_or_default();
        symlink(
            outside.path().join("secret"),
            vault.path().join("linked.toml"),
        )
        .unwrap_or_default();
        std::fs::write(vault.path().join("real.md"), "in").unwrap_or_default();
        symlink(vault.path().join("real.md"), vault.path().join("inner.md")).unwrap_or_default();

        let ok = read_text_inside(vault.path(), Path::new("vaultdm.toml"), 100);
        assert_eq!(ok.ok().as_deref(), Some("name = \"x\""));
        let err = read_inside(vault.path(), Path::new("linked.toml"), 100)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("outside the vault"), "{err}");
        assert!(!err.contains("top secret"));
        assert!(read_inside(vault.path(), Path::new("inner.md"), 100).is_ok());
        let dotdot = read_inside(vault.path(), &Path::new("..").join("x"), 100);
        assert!(dotdot.is_err());
        let big = read_inside(vault.path(), Path::new("vaultdm.toml"), 3);
        assert!(matches!(big, Err(BoundaryError::TooLarge { .. })));
        assert!(read_inside(vault.path(), Path::new("missing"), 3)
            .err()
            .is_some_and(|e| e.is_not_found()));
    }

    #[test]
    fn dirs_are_made_inside_and_links_out_refused() {
        let vault = tmp();
        let outside = tmp();
        let made = dir_inside(vault.path(), Path::new(".vaultdm/sessions"));
        assert!(made.is_ok_and(|p| p.is_dir()));
        symlink(outside.path(), vault.path().join("sessions")).unwrap_or_default();
        let err = dir_inside(vault.path(), Path::new("sessions"));
        assert!(matches!(err, Err(BoundaryError::Outside { .. })), "{err:?}");
        std::fs::write(vault.path().join("file"), "x").unwrap_or_default();
        assert!(matches!(
            dir_inside(vault.path(), Path::new("file/sub")),
            Err(BoundaryError::NotAFolder { .. })
        ));
    }

    #[test]
    fn open_never_follows_a_link() {
        let vault = tmp();
        let outside = tmp();
        let target = outside.path().join("victim.txt");
        std::fs::write(&target, "keep me").unwrap_or_default();
        let link = vault.path().join("s.md");
        symlink(&target, &link).unwrap_or_default();
        let r = open_inside(&link, OpenOptions::new().append(true).create(true));
        assert!(matches!(r, Err(BoundaryError::Outside { .. })), "{r:?}");
        assert_eq!(
            std::fs::read_to_string(&target).unwrap_or_default(),
            "keep me"
        );
    }

    #[test]
    fn file_ids_tell_a_replaced_file() {
        let d = tmp();
        let p = d.path().join("log");
        std::fs::write(&p, "a").unwrap_or_default();
        let f = File::open(&p).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(FileId::of_file(&f), FileId::of_path(&p));
        let tmp_path = d.path().join("log.tmp");
        std::fs::write(&tmp_path, "a").unwrap_or_default();
        std::fs::rename(&tmp_path, &p).unwrap_or_default();
        assert_ne!(FileId::of_file(&f), FileId::of_path(&p));
    }
}
