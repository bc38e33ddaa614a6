//! The on-disk session: an append-only JSONL log plus a Markdown transcript, a lock, and a
//! journal of the reply being streamed.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::record::{history_from_records, ContextMode, Record, RecordRole};
use super::{validate_name, SessionError};
use crate::llm::prompt::Exchange;
use crate::llm::{CutOff, Reply};
use crate::vault::boundary::{self, FileId};

/// A problem found while loading a session log; the load went on without that line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadWarning {
    /// The JSONL file.
    pub path: PathBuf,
    /// 1-based line number.
    pub line: usize,
    /// What was wrong and what was done about it.
    pub message: String,
}

impl std::fmt::Display for LoadWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.path.display(), self.line, self.message)
    }
}

/// Records read from a log, without opening it for writing.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    /// Every readable record, in file order.
    pub records: Vec<Record>,
    /// Skipped lines.
    pub warnings: Vec<LoadWarning>,
    /// Byte offset where an unparsable, unterminated last line (a write torn by a crash)
    /// starts.
    torn_at: Option<u64>,
    /// The file's last line parsed but lacks its newline.
    needs_newline: bool,
}

/// `<vault>/.vaultdm/sessions/<name>.jsonl`.
pub fn log_path(vault: &Path, name: &str) -> PathBuf {
    vault
        .join(".vaultdm")
        .join("sessions")
        .join(format!("{name}.jsonl"))
}

/// `<vault>/sessions/<name>.md`.
pub fn transcript_path(vault: &Path, name: &str) -> PathBuf {
    vault.join("sessions").join(format!("{name}.md"))
}

/// `sessions/<name>.memory.md`, relative to the vault: the session's memory note, beside its
/// transcript. What it holds is `memory::note`'s; where it lives is the session's, with its
/// other files, so that deleting a session finds it.
pub fn memory_note_rel_path(name: &str) -> PathBuf {
    Path::new(TRANSCRIPT_DIR).join(format!("{name}.memory.md"))
}

/// `<vault>/.vaultdm/sessions/<name>.partial`: the reply being streamed, flushed as it
/// arrives, so a killed process loses at most the last flush interval.
pub fn journal_path(vault: &Path, name: &str) -> PathBuf {
    vault
        .join(".vaultdm")
        .join("sessions")
        .join(format!("{name}.partial"))
}

/// `<vault>/.vaultdm/sessions/<name>.lock`: held (advisory `flock`) by the one process
/// writing the session; the file names that process.
pub fn lock_path(vault: &Path, name: &str) -> PathBuf {
    vault
        .join(".vaultdm")
        .join("sessions")
        .join(format!("{name}.lock"))
}

/// The log folder, relative to the vault.
const LOG_DIR: &str = ".vaultdm/sessions";
/// The transcript folder, relative to the vault.
const TRANSCRIPT_DIR: &str = "sessions";

/// Read a session log without changing it. A missing file is an empty session.
pub fn load(vault: &Path, name: &str) -> Result<Loaded, SessionError> {
    validate_name(name)?;
    load_file(&log_path(vault, name))
}

pub(super) fn load_file(path: &Path) -> Result<Loaded, SessionError> {
    let mut bytes = Vec::new();
    match boundary::open_inside(path, OpenOptions::new().read(true)) {
        Ok(mut f) => {
            f.read_to_end(&mut bytes)
                .map_err(|source| SessionError::Io {
                    path: path.to_owned(),
                    source,
                })?;
        }
        Err(e) if e.is_not_found() => return Ok(Loaded::default()),
        Err(e) => return Err(e.into()),
    }
    Ok(parse_log(path, &bytes))
}

fn parse_log(path: &Path, bytes: &[u8]) -> Loaded {
    let mut out = Loaded::default();
    let mut offset = 0usize;
    let mut line_no = 0usize;
    while offset < bytes.len() {
        line_no += 1;
        let (line, terminated, next) = match bytes[offset..].iter().position(|&b| b == b'\n') {
            Some(p) => (&bytes[offset..offset + p], true, offset + p + 1),
            None => (&bytes[offset..], false, bytes.len()),
        };
        let text = String::from_utf8_lossy(line);
        if !text.trim().is_empty() {
            match serde_json::from_str::<Record>(text.trim()) {
                Ok(r) => {
                    out.records.push(r);
                    out.needs_newline = !terminated;
                }
                Err(e) if !terminated => {
                    out.torn_at = Some(offset as u64);
                    out.warnings.push(LoadWarning {
                        path: path.to_owned(),
                        line: line_no,
                        message: format!(
                            "incomplete last line ignored ({} bytes; vaultdm was probably stopped mid-write: {e})",
                            line.len()
                        ),
                    });
                }
                Err(e) => out.warnings.push(LoadWarning {
                    path: path.to_owned(),
                    line: line_no,
                    message: format!("not a valid session record, skipped: {e}"),
                }),
            }
        } else if !terminated {
            out.needs_newline = false;
        }
        offset = next;
    }
    out
}

/// An open session: loaded history, and the files new records are appended to.
///
/// One process writes a session at a time: [`Store::open`] takes an advisory lock and a
/// second writer gets [`SessionError::Locked`] naming the holder. Before every write the
/// store checks that the vault folder is still where it was (else
/// [`SessionError::VaultMoved`], nothing written, no folder recreated) and that the log file
/// is still the one it opened (a sync tool or `git pull` replacing it is noticed: the store
/// reopens the new file, appends any acknowledged record it lacks, and says so in
/// [`Store::take_notices`]).
#[derive(Debug)]
pub struct Store {
    name: String,
    vault: PathBuf,
    vault_id: Option<FileId>,
    log_path: PathBuf,
    transcript_path: PathBuf,
    journal_path: PathBuf,
    log: File,
    log_id: Option<FileId>,
    /// Held for the store's life: the advisory lock (`None`: a read-only store).
    _lock: Option<File>,
    records: Vec<Record>,
    warnings: Vec<LoadWarning>,
    notices: Vec<String>,
}

/// Why a session cannot be locked.
fn lock_holder(path: &Path) -> String {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty() && s.len() < 300)
        .unwrap_or_else(|| "another vaultdm".into())
}

/// How many more times a held session lock is tried, 25 ms apart.
const LOCK_TRIES: u32 = 8;

fn take_lock(vault: &Path, name: &str) -> Result<File, SessionError> {
    let path = lock_path(vault, name);
    let mut f = boundary::open_inside(
        &path,
        OpenOptions::new().read(true).write(true).create(true),
    )?;
    // A lock is briefly shared with any child process this process is starting (the
    // descriptor lives in the child until its exec), so a lock just released may still read
    // as held for a few milliseconds: try again for a moment before naming the holder.
    let mut tries = 0;
    loop {
        match f.try_lock() {
            Ok(()) => break,
            Err(std::fs::TryLockError::WouldBlock) if tries < LOCK_TRIES => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(25));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(SessionError::Locked {
                    name: name.to_owned(),
                    holder: lock_holder(&path),
                })
            }
            Err(std::fs::TryLockError::Error(source)) => {
                return Err(SessionError::Io { path, source });
            }
        }
    }
    let who = format!(
        "pid {}, `{}`, since {}",
        std::process::id(),
        std::env::args()
            .take(2)
            .map(|a| {
                Path::new(&a)
                    .file_name()
                    .map_or(a.clone(), |f| f.to_string_lossy().into_owned())
            })
            .collect::<Vec<_>>()
            .join(" "),
        chrono::Local::now().format("%Y-%m-%d %H:%M")
    );
    // Best effort: the lock holds whether or not the note about its holder is written.
    let _ = f.set_len(0).and_then(|()| f.write_all(who.as_bytes()));
    Ok(f)
}

fn open_log(path: &Path) -> Result<File, SessionError> {
    Ok(boundary::open_inside(
        path,
        OpenOptions::new().read(true).append(true).create(true),
    )?)
}

fn read_all(f: &mut File, path: &Path) -> Result<Vec<u8>, SessionError> {
    let mut bytes = Vec::new();
    f.seek(SeekFrom::Start(0))
        .and_then(|_| f.read_to_end(&mut bytes))
        .map_err(|source| SessionError::Io {
            path: path.to_owned(),
            source,
        })?;
    Ok(bytes)
}

impl Store {
    /// Open (creating if needed) the session `name` in `vault` and load its records.
    ///
    /// A torn last line — an unterminated line that does not parse, left by a crash
    /// mid-write — is reported as a warning and cut off the file so the next record starts
    /// on a clean line; everything before it is kept. A corrupt line elsewhere is reported
    /// with its line number and skipped (left untouched on disk). A reply that was streaming
    /// when vaultdm was killed is recovered from its journal as a cut-off DM record.
    ///
    /// The session folders are made here and only here, inside the vault (a `sessions/` or
    /// `.vaultdm/` that links out of the vault is refused); later writes never create
    /// folders.
    pub fn open(vault: &Path, name: &str) -> Result<Store, SessionError> {
        validate_name(name)?;
        let meta = std::fs::metadata(vault).map_err(|source| SessionError::Io {
            path: vault.to_owned(),
            source,
        })?;
        if !meta.is_dir() {
            return Err(SessionError::Io {
                path: vault.to_owned(),
                source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a folder"),
            });
        }
        let log_path = log_path(vault, name);
        // A GM's session note of the same name: never written into, never hidden from canon.
        let transcript = transcript_path(vault, name);
        if transcript.symlink_metadata().is_ok_and(|m| m.is_file())
            && log_path.symlink_metadata().is_err()
        {
            return Err(SessionError::NoteInTheWay { path: transcript });
        }
        boundary::dir_inside(vault, Path::new(LOG_DIR))?;
        boundary::dir_inside(vault, Path::new(TRANSCRIPT_DIR))?;
        let lock = take_lock(vault, name)?;
        let io = |source| SessionError::Io {
            path: log_path.clone(),
            source,
        };
        let mut log = open_log(&log_path)?;
        let bytes = read_all(&mut log, &log_path)?;
        let loaded = parse_log(&log_path, &bytes);
        if let Some(at) = loaded.torn_at {
            log.set_len(at).map_err(io)?;
            log.sync_data().map_err(io)?;
        } else if loaded.needs_newline {
            log.write_all(b"\n").map_err(io)?;
            log.sync_data().map_err(io)?;
        }
        log.seek(SeekFrom::End(0)).map_err(io)?;
        let mut store = Store {
            name: name.to_owned(),
            vault: vault.to_owned(),
            vault_id: FileId::of_path(vault),
            transcript_path: transcript_path(vault, name),
            journal_path: journal_path(vault, name),
            log_id: FileId::of_file(&log),
            log_path,
            log,
            _lock: Some(lock),
            records: loaded.records,
            warnings: loaded.warnings,
            notices: Vec::new(),
        };
        store.recover_journal()?;
        Ok(store)
    }

    /// The vault the session is kept in.
    pub fn vault(&self) -> &Path {
        &self.vault
    }

    /// Opens a session to read it while another vaultdm may be writing it (`vaultdm prompt`
    /// during a chat): no lock, no repair, no journal recovery; any write is refused.
    pub fn open_read_only(vault: &Path, name: &str) -> Result<Store, SessionError> {
        validate_name(name)?;
        let log_path = log_path(vault, name);
        let loaded = load(vault, name)?;
        let log = boundary::open_inside(&log_path, OpenOptions::new().read(true))?;
        Ok(Store {
            name: name.to_owned(),
            vault: vault.to_owned(),
            vault_id: FileId::of_path(vault),
            transcript_path: transcript_path(vault, name),
            journal_path: journal_path(vault, name),
            log_id: FileId::of_file(&log),
            log_path,
            log,
            _lock: None,
            records: loaded.records,
            warnings: loaded.warnings,
            notices: Vec::new(),
        })
    }

    /// Opens a session to read: with its lock when free, else read-only (a chat holds it).
    pub fn open_to_read(vault: &Path, name: &str) -> Result<Store, SessionError> {
        match Store::open(vault, name) {
            Err(SessionError::Locked { .. }) => Store::open_read_only(vault, name),
            other => other,
        }
    }

    /// True for a store opened with [`Store::open_read_only`].
    pub fn is_read_only(&self) -> bool {
        self._lock.is_none()
    }

    /// The session name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The JSONL log file.
    pub fn log_path(&self) -> &Path {
        &self.log_path
    }

    /// The Markdown transcript file.
    pub fn transcript_path(&self) -> &Path {
        &self.transcript_path
    }

    /// All records, loaded and appended, in order.
    pub fn records(&self) -> &[Record] {
        &self.records
    }

    /// Problems found while loading (skipped lines).
    pub fn warnings(&self) -> &[LoadWarning] {
        &self.warnings
    }

    /// Things the GM should hear about that did not stop play (a transcript that could not
    /// be written, a log replaced on disk, a reply recovered after a crash); each is
    /// returned once.
    pub fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }

    /// When the DM last replied in this session (`None`: never).
    pub fn last_reply_time(&self) -> Option<chrono::DateTime<chrono::FixedOffset>> {
        self.records
            .iter()
            .rev()
            .find(|r| r.role == super::record::RecordRole::Dm)
            .map(|r| r.time)
    }

    /// Prompt history as of now (undo markers applied).
    pub fn history(&self) -> Vec<Exchange> {
        history_from_records(&self.records)
    }

    /// Checks that the vault is still where it was opened and the log is the file this
    /// store wrote; reopens a replaced log (see the type's docs).
    fn ensure_in_place(&mut self) -> Result<(), SessionError> {
        if FileId::of_path(&self.vault) != self.vault_id {
            return Err(SessionError::VaultMoved {
                vault: self.vault.clone(),
            });
        }
        if FileId::of_link(&self.log_path) == self.log_id && self.log_id.is_some() {
            return Ok(());
        }
        // Replaced (write temp + rename), deleted, or swapped for a link.
        let mut log = open_log(&self.log_path)?;
        let bytes = read_all(&mut log, &self.log_path)?;
        let mut on_disk = parse_log(&self.log_path, &bytes);
        let io = |source| SessionError::Io {
            path: self.log_path.clone(),
            source,
        };
        if let Some(at) = on_disk.torn_at {
            log.set_len(at).map_err(io)?;
        } else if on_disk.needs_newline {
            log.write_all(b"\n").map_err(io)?;
        }
        log.seek(SeekFrom::End(0)).map_err(io)?;
        // Every record this store acknowledged must be in the log: re-add what the new file
        // lacks, in order.
        let mut missing = Vec::new();
        let mut from = 0;
        for r in &self.records {
            match on_disk.records[from..].iter().position(|d| d == r) {
                Some(p) => from += p + 1,
                None => missing.push(r.clone()),
            }
        }
        for r in &missing {
            log.write_all(encode(r, &self.log_path)?.as_bytes())
                .map_err(io)?;
        }
        log.sync_data().map_err(io)?;
        on_disk.records.extend(missing.iter().cloned());
        self.notices.push(if missing.is_empty() {
            format!(
                "the session log {} was replaced on disk (a sync tool or git?); vaultdm reopened it",
                self.log_path.display()
            )
        } else {
            format!(
                "the session log {} was replaced on disk (a sync tool or git?) by a version lacking {} records; vaultdm reopened it and wrote them back",
                self.log_path.display(),
                missing.len()
            )
        });
        self.records = on_disk.records;
        self.log_id = FileId::of_file(&log);
        self.log = log;
        Ok(())
    }

    /// Append a record: one `write_all` of the whole JSON line, then `sync_data`, then the
    /// transcript block. `Ok` means the record is on disk.
    ///
    /// A transcript that cannot be written does not fail the append (the log is the source
    /// of truth): it becomes a notice ([`Store::take_notices`]).
    pub fn append(&mut self, record: Record) -> Result<(), SessionError> {
        if self.is_read_only() {
            return Err(SessionError::Locked {
                name: self.name.clone(),
                holder: "another vaultdm (this one only reads it)".into(),
            });
        }
        let line = encode(&record, &self.log_path)?;
        self.ensure_in_place()?;
        let io = |source| SessionError::Io {
            path: self.log_path.clone(),
            source,
        };
        if let Err(e) = self
            .log
            .write_all(line.as_bytes())
            .and_then(|()| self.log.sync_data())
        {
            // A short write (disk full) may have left part of the line: cut it off so the
            // log stays one record per line.
            if let Ok(len) = self.log.metadata().map(|m| m.len()) {
                let end = self.logged_len();
                if len > end {
                    let _ = self.log.set_len(end);
                }
            }
            return Err(io(e));
        }
        let block = transcript_block(&record);
        self.records.push(record);
        if let Some(block) = block {
            if let Err(e) = self.append_transcript(&block) {
                self.notices.push(e.to_string());
            }
        }
        Ok(())
    }

    /// Bytes of the log known to be whole records.
    fn logged_len(&self) -> u64 {
        // Cheap enough: only called after a failed write.
        std::fs::read(&self.log_path)
            .ok()
            .and_then(|b| b.iter().rposition(|&c| c == b'\n').map(|p| p as u64 + 1))
            .unwrap_or(0)
    }

    /// Record what the player said and the context injected with it.
    pub fn record_player(
        &mut self,
        text: &str,
        context: Option<String>,
        mode: Option<ContextMode>,
    ) -> Result<(), SessionError> {
        self.append(Record::player(text, context, mode))
    }

    /// Record the DM's reply, complete or partial (pass `err.partial()` after a mid-stream
    /// failure so the streamed text is kept). The reply's journal is removed once the record
    /// is on disk.
    pub fn record_dm(
        &mut self,
        reply: &Reply,
        provider: &str,
        model: &str,
    ) -> Result<(), SessionError> {
        self.append(Record::dm(reply, provider, model))?;
        self.discard_journal();
        Ok(())
    }

    /// Starts the journal of a reply about to stream: call [`Journal::push`] with each piece
    /// of text and [`Journal::flush`] every half second; [`Store::record_dm`] removes it.
    /// If vaultdm dies before that, the next [`Store::open`] turns the journal into a
    /// cut-off DM record.
    pub fn begin_reply(&mut self, provider: &str, model: &str) -> Result<Journal, SessionError> {
        self.ensure_in_place()?;
        let mut file = boundary::open_inside(
            &self.journal_path,
            OpenOptions::new().write(true).create(true).truncate(true),
        )?;
        let header = serde_json::json!({
            "journal": 1,
            "time": chrono::Local::now().to_rfc3339(),
            "provider": provider,
            "model": model,
        });
        let io = |source| SessionError::Io {
            path: self.journal_path.clone(),
            source,
        };
        // Not synced here: the journal matters once text arrives, and the first flush syncs
        // the header with it (a journal left with no text recovers as nothing).
        file.write_all(format!("{header}\n").as_bytes())
            .map_err(io)?;
        Ok(Journal {
            file,
            path: self.journal_path.clone(),
            pending: String::new(),
            kept_chars: 0,
            failed: None,
        })
    }

    /// Removes the reply journal (after its reply is recorded, or when none was needed).
    pub fn discard_journal(&mut self) {
        let _ = std::fs::remove_file(&self.journal_path);
    }

    /// Turns a journal left by a killed process into a cut-off DM record.
    fn recover_journal(&mut self) -> Result<(), SessionError> {
        let bytes = match boundary::open_inside(&self.journal_path, OpenOptions::new().read(true)) {
            Ok(mut f) => {
                let mut b = Vec::new();
                f.read_to_end(&mut b).map_err(|source| SessionError::Io {
                    path: self.journal_path.clone(),
                    source,
                })?;
                b
            }
            Err(e) if e.is_not_found() => return Ok(()),
            Err(e) => return Err(e.into()),
        };
        let journal = parse_journal(&bytes);
        let pending = matches!(
            self.records.iter().rev().find(|r| !r.is_undo()),
            Some(r) if r.role == RecordRole::Player
        );
        if pending && !journal.text.is_empty() {
            let ended = journal.end.is_some();
            let (complete, cut_off, finish_reason) =
                journal.end.unwrap_or((false, Some(CutOff::Crashed), None));
            let reply = Reply {
                text: journal.text,
                complete,
                cut_off: if complete { None } else { cut_off },
                finish_reason,
                ..Reply::default()
            };
            let chars = reply.text.chars().count();
            self.append(Record::dm(&reply, &journal.provider, &journal.model))?;
            self.notices.push(if ended {
                format!("recovered a reply of {chars} characters that arrived but could not be written to the session log last time; it is in the session now")
            } else if journal.torn > 0 {
                format!("recovered the first {chars} characters of the last reply from its journal, which a failed write (a full disk?) cut short; the rest of that reply was lost; it is in the session, marked cut off")
            } else {
                format!("recovered {chars} characters of a reply that was streaming when vaultdm stopped; it is in the session, marked cut off")
            });
        } else if pending && journal.torn > 0 {
            self.notices.push("the journal of the last reply was damaged by a failed write (a full disk?) and held no readable text; that reply could not be recovered".into());
        }
        self.discard_journal();
        Ok(())
    }

    /// `/undo`: append an undo marker so the last exchange (or an unanswered player message)
    /// leaves the prompt history. Nothing is deleted. Returns `false`, writing nothing, when
    /// there is nothing to undo.
    pub fn undo(&mut self) -> Result<bool, SessionError> {
        if self.history().is_empty() && !unanswered_after_history(&self.records) {
            return Ok(false);
        }
        self.append(Record::undo())?;
        Ok(true)
    }

    /// Supersedes the last `n` exchanges (a front end's Regenerate, swipe or edit replaced
    /// them): undo markers until the history is `n` exchanges shorter and no unanswered
    /// player message is left after it. Nothing is deleted; the log and the transcript say
    /// so. Returns the markers written.
    pub fn supersede(&mut self, n: usize) -> Result<usize, SessionError> {
        let target = self.history().len().saturating_sub(n);
        let mut written = 0;
        while self.history().len() > target || unanswered_after_history(&self.records) {
            if !self.undo()? {
                break;
            }
            written += 1;
        }
        Ok(written)
    }

    fn append_transcript(&self, block: &str) -> Result<(), SessionError> {
        let path = &self.transcript_path;
        let err = |source| SessionError::Transcript {
            path: path.clone(),
            source,
        };
        // The folder was made at open; if the GM removed it since, make it again (the vault
        // itself was just checked to be in place), never through a link out of the vault.
        boundary::dir_inside(&self.vault, Path::new(TRANSCRIPT_DIR))?;
        let mut f = boundary::open_inside(path, OpenOptions::new().append(true).create(true))?;
        let is_new = f.metadata().map(|m| m.len() == 0).unwrap_or(false);
        let mut text = String::new();
        if is_new {
            text.push_str(&format!("# Session {}\n\n", self.name));
        }
        text.push_str(block);
        f.write_all(text.as_bytes()).map_err(err)?;
        f.sync_data().map_err(err)
    }
}

fn encode(record: &Record, path: &Path) -> Result<String, SessionError> {
    let mut line = serde_json::to_string(record).map_err(|source| SessionError::Encode {
        path: path.to_owned(),
        source,
    })?;
    line.push('\n');
    Ok(line)
}

/// Characters of reply text per journal line (a full disk tears at most one line).
pub(super) const JOURNAL_LINE_CHARS: usize = 2048;

/// The journal of a reply being streamed (see [`Store::begin_reply`]).
#[derive(Debug)]
pub struct Journal {
    file: File,
    path: PathBuf,
    pending: String,
    /// Characters of reply text synced to disk.
    kept_chars: usize,
    failed: Option<std::io::Error>,
}

impl Journal {
    /// Keeps a piece of reply text for the next flush.
    pub fn push(&mut self, text: &str) {
        self.pending.push_str(text);
    }

    /// Writes what arrived since the last flush and syncs it to disk, in lines of at most
    /// `JOURNAL_LINE_CHARS` characters: when the disk fills, every whole line before the
    /// failure is kept and the torn one is cut off, so the journal holds all it could. A
    /// failure is remembered, returned by [`Journal::error`], and does not stop the reply.
    pub fn flush(&mut self) {
        if self.pending.is_empty() || self.failed.is_some() {
            return;
        }
        let pending = std::mem::take(&mut self.pending);
        let mut rest = pending.as_str();
        let mut written = 0usize;
        while !rest.is_empty() {
            let cut = rest
                .char_indices()
                .nth(JOURNAL_LINE_CHARS)
                .map_or(rest.len(), |(i, _)| i);
            let (piece, tail) = rest.split_at(cut);
            let line = serde_json::json!({ "t": piece }).to_string() + "\n";
            let at = self.file.stream_position();
            if let Err(e) = self.file.write_all(line.as_bytes()) {
                // Cut the torn line so the journal stays whole lines.
                if let Ok(at) = at {
                    let _ = self.file.set_len(at);
                    let _ = self.file.seek(std::io::SeekFrom::Start(at));
                }
                let _ = self.file.sync_data();
                self.kept_chars += written;
                self.pending = rest.to_owned();
                self.failed = Some(e);
                return;
            }
            written += piece.chars().count();
            rest = tail;
        }
        match self.file.sync_data() {
            Ok(()) => self.kept_chars += written,
            Err(e) => {
                self.pending = pending;
                self.failed = Some(e);
            }
        }
    }

    /// Notes how the reply ended (complete, or why not) and syncs, before the reply's record
    /// is written: if that write fails, recovery restores the reply as it really ended.
    pub fn finish(&mut self, reply: &Reply) {
        self.flush();
        if self.failed.is_some() {
            return;
        }
        let end = serde_json::json!({ "end": {
            "complete": reply.complete,
            "cut_off": reply.cut_off,
            "finish_reason": reply.finish_reason,
        }});
        if let Err(e) = self
            .file
            .write_all(format!("{end}\n").as_bytes())
            .and_then(|()| self.file.sync_data())
        {
            self.failed = Some(e);
        }
    }

    /// Characters of the reply the journal holds on disk (all of them unless
    /// [`Journal::error`] says why not).
    pub fn kept_chars(&self) -> usize {
        self.kept_chars
    }

    /// Whether everything pushed, and how the reply ended, is on disk.
    pub fn whole(&self) -> bool {
        self.failed.is_none() && self.pending.is_empty()
    }

    /// Why the journal could not be written, if it could not.
    pub fn error(&self) -> Option<String> {
        self.failed
            .as_ref()
            .map(|e| format!("{}: {e}", self.path.display()))
    }
}

struct JournalText {
    text: String,
    provider: String,
    model: String,
    /// How the reply ended, when the journal recorded it ([`Journal::finish`]).
    end: Option<(bool, Option<CutOff>, Option<String>)>,
    /// Lines that could not be read (a write torn by a full disk or a crash).
    torn: usize,
}

fn parse_journal(bytes: &[u8]) -> JournalText {
    let mut out = JournalText {
        text: String::new(),
        provider: "unknown".into(),
        model: "unknown".into(),
        end: None,
        torn: 0,
    };
    for line in bytes.split(|&b| b == b'\n') {
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(line) else {
            // A torn line (the last, cut by a crash or a full disk).
            out.torn += usize::from(!line.iter().all(u8::is_ascii_whitespace));
            continue;
        };
        if let Some(t) = v.get("t").and_then(|t| t.as_str()) {
            out.text.push_str(t);
        } else if let Some(end) = v.get("end") {
            out.end = Some((
                end.get("complete").and_then(serde_json::Value::as_bool) == Some(true),
                end.get("cut_off")
                    .and_then(|c| serde_json::from_value(c.clone()).ok()),
                end.get("finish_reason")
                    .and_then(|f| f.as_str())
                    .map(str::to_owned),
            ));
        } else if v.get("journal").is_some() {
            let s = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_owned);
            out.provider = s("provider").unwrap_or(out.provider);
            out.model = s("model").unwrap_or(out.model);
        }
    }
    out
}

/// Whether an undo now would remove something: an unanswered player message pending.
fn unanswered_after_history(records: &[Record]) -> bool {
    let mut pending = false;
    for r in records {
        match r.role {
            RecordRole::Player => pending = true,
            RecordRole::Dm => pending = false,
            RecordRole::System => {
                if r.is_undo() {
                    pending = false;
                }
            }
        }
    }
    pending
}

/// The Markdown for one record; never includes injected context.
fn transcript_block(r: &Record) -> Option<String> {
    match r.role {
        RecordRole::Player => Some(format!("**Player:** {}\n\n", r.text.trim_end())),
        RecordRole::Dm => {
            // Proposal blocks are for vaultdm, not the GM reading the story.
            let (prose, _) = crate::llm::fence::split_fenced(&r.text);
            let text = prose.trim_end();
            let mut s = if text.is_empty() {
                "**DM:** *(no reply)*\n\n".to_owned()
            } else {
                format!("**DM:** {text}\n\n")
            };
            if r.interrupted {
                s.push_str("*(reply interrupted)*\n\n");
            } else if !r.complete {
                match r.cut_off {
                    Some(why) => s.push_str(&format!("*(reply cut off: {why})*\n\n")),
                    None => s.push_str("*(reply cut off)*\n\n"),
                }
            }
            Some(s)
        }
        RecordRole::System => r
            .is_undo()
            .then(|| "*(last exchange undone — the DM no longer sees it)*\n\n".to_owned()),
    }
}
