//! The on-disk session: an append-only JSONL log plus a Markdown transcript.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::record::{history_from_records, ContextMode, Record, RecordRole};
use super::{validate_name, SessionError};
use crate::llm::prompt::Exchange;
use crate::llm::Reply;

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

/// Read a session log without changing it. A missing file is an empty session.
pub fn load(vault: &Path, name: &str) -> Result<Loaded, SessionError> {
    validate_name(name)?;
    load_file(&log_path(vault, name))
}

pub(super) fn load_file(path: &Path) -> Result<Loaded, SessionError> {
    let mut bytes = Vec::new();
    match File::open(path) {
        Ok(mut f) => {
            f.read_to_end(&mut bytes)
                .map_err(|source| SessionError::Io {
                    path: path.to_owned(),
                    source,
                })?;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Loaded::default()),
        Err(source) => {
            return Err(SessionError::Io {
                path: path.to_owned(),
                source,
            })
        }
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
/// Only one process should write a session at a time.
#[derive(Debug)]
pub struct Store {
    name: String,
    log_path: PathBuf,
    transcript_path: PathBuf,
    log: File,
    records: Vec<Record>,
    warnings: Vec<LoadWarning>,
}

impl Store {
    /// Open (creating if needed) the session `name` in `vault` and load its records.
    ///
    /// A torn last line — an unterminated line that does not parse, left by a crash
    /// mid-write — is reported as a warning and cut off the file so the next record starts
    /// on a clean line; everything before it is kept. A corrupt line elsewhere is reported
    /// with its line number and skipped (left untouched on disk).
    pub fn open(vault: &Path, name: &str) -> Result<Store, SessionError> {
        validate_name(name)?;
        let log_path = log_path(vault, name);
        let transcript_path = transcript_path(vault, name);
        if let Some(dir) = log_path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| SessionError::Io {
                path: dir.to_owned(),
                source,
            })?;
        }
        let io = |source| SessionError::Io {
            path: log_path.clone(),
            source,
        };
        let mut log = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&log_path)
            .map_err(io)?;
        let mut bytes = Vec::new();
        log.read_to_end(&mut bytes).map_err(io)?;
        let loaded = parse_log(&log_path, &bytes);
        if let Some(at) = loaded.torn_at {
            log.set_len(at).map_err(io)?;
            log.sync_data().map_err(io)?;
            log.seek(SeekFrom::End(0)).map_err(io)?;
        } else if loaded.needs_newline {
            log.write_all(b"\n").map_err(io)?;
            log.sync_data().map_err(io)?;
        }
        Ok(Store {
            name: name.to_owned(),
            log_path,
            transcript_path,
            log,
            records: loaded.records,
            warnings: loaded.warnings,
        })
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

    /// Prompt history as of now (undo markers applied).
    pub fn history(&self) -> Vec<Exchange> {
        history_from_records(&self.records)
    }

    /// Append a record: one `write_all` of the whole JSON line, then `sync_data`, then the
    /// transcript block.
    ///
    /// On [`SessionError::Transcript`] the record itself *was* saved to the log.
    pub fn append(&mut self, record: Record) -> Result<(), SessionError> {
        let mut line = serde_json::to_string(&record).map_err(|source| SessionError::Encode {
            path: self.log_path.clone(),
            source,
        })?;
        line.push('\n');
        let io = |source| SessionError::Io {
            path: self.log_path.clone(),
            source,
        };
        self.log.write_all(line.as_bytes()).map_err(io)?;
        self.log.sync_data().map_err(io)?;
        let block = transcript_block(&record);
        self.records.push(record);
        if let Some(block) = block {
            self.append_transcript(&block)?;
        }
        Ok(())
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
    /// failure so the streamed text is kept).
    pub fn record_dm(
        &mut self,
        reply: &Reply,
        provider: &str,
        model: &str,
    ) -> Result<(), SessionError> {
        self.append(Record::dm(reply, provider, model))
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

    fn append_transcript(&self, block: &str) -> Result<(), SessionError> {
        let path = &self.transcript_path;
        let err = |source| SessionError::Transcript {
            path: path.clone(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(err)?;
        }
        let mut f = OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .map_err(err)?;
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
            let text = r.text.trim_end();
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
