//! Crash-safe play sessions, kept inside the vault.
//!
//! A session is what happened at the table: every player message (with the context that was
//! injected), every DM reply (complete, cut off or interrupted), and markers such as `/undo`.
//! It must survive a crash, a closed laptop lid or a killed terminal without losing anything
//! already shown, so it is stored as an **append-only JSONL log** at
//! `<vault>/.vaultdm/sessions/<name>.jsonl`: each record is written with a single
//! `write_all` of the whole line followed by `sync_data`. On load, a torn last line (a crash
//! mid-write) is dropped with a warning and a corrupt line elsewhere is skipped with a
//! `file:line` warning — nothing else is lost. Warnings are returned, never printed.
//!
//! Next to it, a readable **Markdown transcript** at `<vault>/sessions/<name>.md` gets a
//! `**Player:** …` / `**DM:** …` block per message, with cut-off and interrupted replies
//! marked visibly. It never contains injected context or keys; it is for the GM to read and
//! link from their notes, the log is the source of truth.
//!
//! `/undo` never deletes: it appends a `{"role":"system","event":"undo"}` record, and
//! rebuilding history ([`history_from_records`]) honours it.
//!
//! While a reply streams, its text is journaled to `<vault>/.vaultdm/sessions/<name>.partial`
//! and synced every half second ([`Journal`]); the finished reply becomes one DM record and
//! the journal is removed. If vaultdm is killed mid-reply, the next open folds the journal
//! into the log as a DM record cut off with `crashed` — at most the last half second is lost.
//!
//! One process writes a session at a time (an advisory lock, `<name>.lock`); before every
//! write the store checks that the vault and the log file are still the ones it opened, and
//! no read or write follows a link out of the vault ([`crate::vault::boundary`]).
//!
//! Session names are plain file stems (no path separators, no `..`). The default name is the
//! date (`2026-11-22`, [`default_name`]); opening it again the same day continues that
//! session — which is exactly what a GM restarting after a crash wants. [`next_free_name`]
//! gives `2026-11-22-2`, `-3`, … for an explicitly new session.

pub mod import;
mod record;
mod store;
pub(crate) mod stream;

use std::path::{Path, PathBuf};

use chrono::{DateTime, FixedOffset, NaiveDate};

pub use record::{excluded, history_from_records, ContextMode, Record, RecordRole, SystemEvent};
pub use store::{
    journal_path, load, lock_path, log_path, memory_note_rel_path, transcript_path, Journal,
    LoadWarning, Loaded, Store,
};

/// Longest accepted session name, in characters.
pub const MAX_NAME_LEN: usize = 100;

/// Session storage errors; each names the file involved.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The session name cannot be used as a file name.
    #[error("invalid session name `{name}`: {reason}")]
    InvalidName {
        /// The name as given.
        name: String,
        /// Why it was refused.
        reason: &'static str,
    },
    /// Reading or writing the session log (or its folder) failed.
    #[error("session file {}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A record could not be encoded as JSON.
    #[error("could not encode a record for {}", path.display())]
    Encode {
        /// The log file.
        path: PathBuf,
        /// The serde error.
        #[source]
        source: serde_json::Error,
    },
    /// No session of that name has a log in this vault.
    #[error("there is no session \"{name}\" in this vault (`vaultdm session list` names them)")]
    NoSuchSession {
        /// The name asked for.
        name: String,
    },
    /// Another process holds the session's lock.
    #[error("session \"{name}\" is already open in another vaultdm ({holder}); close it there, or play another session with --session NAME")]
    Locked {
        /// The session.
        name: String,
        /// Who holds it, as its lock file says.
        holder: String,
    },
    /// The vault folder moved or vanished while the session was open.
    #[error("the vault folder {} moved or was removed while vaultdm ran; nothing was written and nothing was sent — start vaultdm again in the vault's new place", vault.display())]
    VaultMoved {
        /// The folder as it was opened.
        vault: PathBuf,
    },
    /// A session file or folder is a link out of the vault, or not a folder.
    #[error(transparent)]
    Boundary(#[from] crate::vault::boundary::BoundaryError),
    /// `sessions/<name>.md` is the GM's own note (there is no session log beside it): a
    /// transcript would be appended to it, and the note would leave canon.
    #[error("{} is a note of yours, not a vaultdm transcript; nothing was written — play under another name with --session NAME", path.display())]
    NoteInTheWay {
        /// The note.
        path: PathBuf,
    },
    /// The Markdown transcript could not be written (the record *was* saved in the log).
    #[error("could not update the transcript {} (the session log is saved): {source}", path.display())]
    Transcript {
        /// The transcript file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// Names Windows reserves for devices, whatever the case and whatever follows a dot
/// (`con`, `Nul.md`, `COM1.txt`): a file so named cannot be made there, and a vault synced to
/// a Windows machine would break on it.
const WINDOWS_RESERVED: &[&str] = &[
    "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8",
    "COM9", "COM¹", "COM²", "COM³", "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8",
    "LPT9", "LPT¹", "LPT²", "LPT³",
];

/// Check that `name` is a safe file stem on every system a vault is synced to (Linux, macOS,
/// Windows, iOS, Android): 1–100 characters, letters, digits, spaces, `-`, `_`, `.` (not
/// leading, not trailing, no `..`), no surrounding whitespace, and not a name Windows
/// reserves (`CON`, `PRN`, `AUX`, `NUL`, `COM1`–`COM9`, `LPT1`–`LPT9`, with or without an
/// extension). The one rule for every session name: `chat`, `ask`, `prompt`, `serve`'s
/// header and `session` all come through here (via [`Store::open`]).
pub fn validate_name(name: &str) -> Result<(), SessionError> {
    let bad = |reason| {
        Err(SessionError::InvalidName {
            name: name.to_owned(),
            reason,
        })
    };
    if name.is_empty() {
        return bad("it is empty");
    }
    if name.chars().count() > MAX_NAME_LEN {
        return bad("it is longer than 100 characters");
    }
    if name.contains('/') || name.contains('\\') {
        return bad("it contains a path separator");
    }
    if name.contains("..") {
        return bad("it contains `..`");
    }
    if name.starts_with('.') {
        return bad("it starts with `.`");
    }
    if name.trim() != name {
        return bad("it starts or ends with whitespace");
    }
    if !name
        .chars()
        .all(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_' | '.'))
    {
        return bad("use only letters, digits, spaces, `-`, `_` and `.`");
    }
    if name.ends_with('.') {
        return bad("it ends with `.` (Windows drops it: the file would not be found again)");
    }
    let stem = name.split('.').next().unwrap_or(name).trim_end();
    if WINDOWS_RESERVED
        .iter()
        .any(|r| r.eq_ignore_ascii_case(stem))
    {
        return bad("Windows reserves it for a device (CON, PRN, AUX, NUL, COM1–9, LPT1–9, with or without an extension): a vault synced there would break");
    }
    Ok(())
}

/// The default session name for a day: `YYYY-MM-DD`.
pub fn default_name(today: NaiveDate) -> String {
    today.format("%Y-%m-%d").to_string()
}

/// A name for a one-shot session (`ask`, `prompt`) when none is given: the date and time to
/// the second, readable, and a short suffix that tells apart sessions started in the same
/// second by this or another process (`ask-2026-11-26-184512-3f9a`) — a script calling
/// `ask` twice in a second never continues the first one's session. Never the name of a
/// session that has a log already.
pub fn one_shot_name(vault: &Path, prefix: &str) -> String {
    use std::hash::{Hash, Hasher};
    let now = chrono::Local::now();
    let stamp = now.format("%Y-%m-%d-%H%M%S");
    for n in 0u32.. {
        let mut h = rustc_hash::FxHasher::default();
        (std::process::id(), now.timestamp_nanos_opt(), n).hash(&mut h);
        // Fx mixes the low bits weakly: take the suffix from the top.
        let name = format!("{prefix}-{stamp}-{:04x}", h.finish() >> 48);
        if !log_path(vault, &name).exists() {
            return name;
        }
    }
    format!("{prefix}-{stamp}")
}

/// The first of `YYYY-MM-DD`, `YYYY-MM-DD-2`, `YYYY-MM-DD-3`, … with no session log yet.
pub fn next_free_name(vault: &Path, today: NaiveDate) -> String {
    let base = default_name(today);
    if !log_path(vault, &base).exists() {
        return base;
    }
    (2u32..)
        .map(|n| format!("{base}-{n}"))
        .find(|name| !log_path(vault, name).exists())
        .unwrap_or(base)
}

/// Summary of one stored session.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionInfo {
    /// Session name.
    pub name: String,
    /// Readable records in the log.
    pub records: usize,
    /// Time of the last record, if any.
    pub last_time: Option<DateTime<FixedOffset>>,
    /// Lines skipped while reading it.
    pub warnings: Vec<LoadWarning>,
    /// The GM left it out of campaign memory (`vaultdm session exclude`).
    pub excluded: bool,
}

/// One session log as the folder lists it: nothing in it is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogFile {
    /// Session name.
    pub name: String,
    /// `<vault>/.vaultdm/sessions/<name>.jsonl`.
    pub path: PathBuf,
    /// Its length in bytes.
    pub len: u64,
    /// When it was last written, if the system says.
    pub modified: Option<std::time::SystemTime>,
}

/// Session `name`'s log as [`list_logs`] would list it; `None` when it is not there (or is
/// a folder).
pub fn log_file(vault: &Path, name: &str) -> Option<LogFile> {
    validate_name(name).ok()?;
    let path = vault
        .join(".vaultdm")
        .join("sessions")
        .join(format!("{name}.jsonl"));
    let meta = std::fs::symlink_metadata(&path).ok()?;
    (!meta.is_dir()).then(|| LogFile {
        name: name.to_owned(),
        len: meta.len(),
        modified: meta.modified().ok(),
        path,
    })
}

/// The session logs of a vault (not the change logs), sorted by name, from the folder
/// listing alone: no log is opened. A vault without sessions gives an empty list.
pub fn list_logs(vault: &Path) -> Result<Vec<LogFile>, SessionError> {
    let dir = vault.join(".vaultdm").join("sessions");
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(SessionError::Io { path: dir, source }),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| SessionError::Io {
            path: dir.clone(),
            source,
        })?;
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("jsonl") {
            continue;
        }
        let Some(name) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        // `<name>.changes.jsonl` is the session's change log (write-back), not a session.
        if name.ends_with(".changes") || validate_name(name).is_err() {
            continue;
        }
        // Of the entry itself, never through a link, and looked up in the open folder (not
        // from the root again: a campaign's hundreds of logs are listed at every message).
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        if meta.is_dir() {
            continue;
        }
        out.push(LogFile {
            name: name.to_owned(),
            len: meta.len(),
            modified: meta.modified().ok(),
            path,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// The sessions campaign memory reads: every session but those the GM excluded, sorted by
/// name. See [`list_all_sessions`] for all of them. Every log is read: for a listing, not for
/// play (recall keeps its own index, `memory/store.rs`).
pub fn list_sessions(vault: &Path) -> Result<Vec<SessionInfo>, SessionError> {
    let mut all = list_all_sessions(vault)?;
    all.retain(|s| !s.excluded);
    Ok(all)
}

/// All sessions of a vault, excluded ones too, sorted by name (date names sort
/// chronologically). A vault without sessions gives an empty list. Every log is read: for a
/// listing, not for play.
pub fn list_all_sessions(vault: &Path) -> Result<Vec<SessionInfo>, SessionError> {
    let mut out = Vec::new();
    for log in list_logs(vault)? {
        let loaded = store::load_file(&log.path)?;
        out.push(SessionInfo {
            name: log.name,
            records: loaded.records.len(),
            last_time: loaded.records.last().map(|r| r.time),
            excluded: excluded(&loaded.records),
            warnings: loaded.warnings,
        });
    }
    Ok(out)
}

/// Leaves a session out of campaign memory (`true`) or takes it back in (`false`), with a
/// marker in its log: other sessions no longer recall its play; its own play is unchanged.
/// Takes the session's lock (a session open elsewhere is refused). Returns whether it was
/// excluded before.
pub fn set_excluded(vault: &Path, name: &str, exclude: bool) -> Result<bool, SessionError> {
    validate_name(name)?;
    if !log_path(vault, name).is_file() {
        return Err(SessionError::NoSuchSession {
            name: name.to_owned(),
        });
    }
    let mut store = Store::open(vault, name)?;
    let was = excluded(store.records());
    if was != exclude {
        store.append(Record::memory(exclude))?;
    }
    Ok(was)
}

/// Deletes a session: its log, its reply journal, its transcript note and its memory note,
/// all inside the vault (a link is removed, never followed), then its lock. Its canon change
/// log (`<name>.changes.jsonl`) stays: the canon it wrote is still there, and `/revert` in
/// another session may need it. Takes the lock first: a session open elsewhere is refused.
/// Returns the files removed.
pub fn delete(vault: &Path, name: &str) -> Result<Vec<PathBuf>, SessionError> {
    validate_name(name)?;
    if !log_path(vault, name).is_file() {
        return Err(SessionError::NoSuchSession {
            name: name.to_owned(),
        });
    }
    let store = Store::open(vault, name)?;
    let mut removed = Vec::new();
    let paths = [
        journal_path(vault, name),
        transcript_path(vault, name),
        vault.join(memory_note_rel_path(name)),
        log_path(vault, name),
    ];
    for path in paths {
        match std::fs::remove_file(&path) {
            Ok(()) => removed.push(path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(SessionError::Io { path, source }),
        }
    }
    drop(store);
    let _ = std::fs::remove_file(lock_path(vault, name));
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("2026-11-22")]
    #[case("Session 12 - The Sunless Citadel")]
    #[case("dragón_vöyage.v2")]
    #[case("CONsole")]
    #[case("com10")]
    #[case("nullify.v1")]
    #[case("my con")]
    fn valid_names(#[case] name: &str) {
        assert!(validate_name(name).is_ok(), "{name}");
    }

    #[rstest]
    #[case("", "empty")]
    #[case("../secrets", "path separator")]
    #[case("a/b", "path separator")]
    #[case("a\\b", "path separator")]
    #[case("..", "`..`")]
    #[case("a..b", "`..`")]
    #[case(".hidden", "starts with `.`")]
    #[case(" padded", "whitespace")]
    #[case("what?", "only letters")]
    #[case("c:drive", "only letters")]
    #[case("nul\0byte", "only letters")]
    #[case("abc.", "ends with `.`")]
    #[case("abc ", "whitespace")]
    #[case("CON", "Windows reserves")]
    #[case("con", "Windows reserves")]
    #[case("Nul.md", "Windows reserves")]
    #[case("aux.tar.gz", "Windows reserves")]
    #[case("COM1", "Windows reserves")]
    #[case("lpt9", "Windows reserves")]
    #[case("LPT¹", "Windows reserves")]
    #[case("prn .x", "Windows reserves")]
    #[case("a<b", "only letters")]
    #[case("a|b", "only letters")]
    fn invalid_names(#[case] name: &str, #[case] why: &str) {
        let err = validate_name(name)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains(why), "{name:?}: {err}");
    }

    #[test]
    fn long_name_rejected() {
        assert!(validate_name(&"a".repeat(101)).is_err());
        assert!(validate_name(&"a".repeat(100)).is_ok());
    }

    #[test]
    fn default_and_next_free_names() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let day = NaiveDate::from_ymd_opt(2026, 11, 22).unwrap_or_default();
        assert_eq!(default_name(day), "2026-11-22");
        assert_eq!(next_free_name(dir.path(), day), "2026-11-22");
        Store::open(dir.path(), "2026-11-22").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(next_free_name(dir.path(), day), "2026-11-22-2");
        Store::open(dir.path(), "2026-11-22-2").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(next_free_name(dir.path(), day), "2026-11-22-3");
    }
}
