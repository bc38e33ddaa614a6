//! The campaign's recall of earlier play, kept on disk so that opening a session costs the
//! same with one earlier session or a thousand.
//!
//! Every session's exchanges are indexed (BM25, [`super::index`]) into one file,
//! `.vaultdm/memory/recall.idx`, derived from the session logs, which stay the only truth.
//! Opening reads the file's header, its passage table and its term dictionary; the postings
//! of a term and the text of a passage are read from the file only when a message asks for
//! them. The file records, for each log, its length and modification time when indexed and
//! where its last exchange ended, so a log another process appended to is noticed with one
//! `stat` and only its new bytes are read ([`Recall::refresh`]); once enough new passages
//! gather in memory, the file is rewritten with them (temp file and rename, inside the
//! vault, never through a link).
//!
//! The file is rebuilt from the logs when it is missing, unreadable, corrupt (its length,
//! end mark and checksum are checked) or made for other canon (a passage's canon entities are
//! part of its terms). A log replaced rather than appended to (shorter, or other bytes before
//! where indexing stopped) has its passages left out and is read again, alone. A file that
//! cannot be written is never fatal: the index is then kept in memory for the process, with
//! a notice. One passage contributes at most [`MAX_PLAYER_CHARS`] and [`MAX_DM_CHARS`]
//! characters, and a log is read line by line with a cap on each line
//! ([`crate::session::stream`]), so a 300 MB session is indexed in bounded memory.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::index::{bm25, Index, Stats};
use crate::session::{self, stream};
use crate::vault::boundary;

/// Characters of a player message one passage keeps and indexes.
pub(crate) const MAX_PLAYER_CHARS: usize = 500;
/// Characters of a DM reply one passage keeps and indexes.
pub(crate) const MAX_DM_CHARS: usize = 2_000;
/// The index file, relative to the vault.
pub(crate) const INDEX_PATH: &str = ".vaultdm/memory/recall.idx";
/// Passages read from logs since the file was written that make it be written again.
pub(crate) const COMPACT_AT: usize = 256;

const MAGIC: &[u8; 8] = b"VDMRCL01";
const END: &[u8; 8] = b"VDMEND01";
const VERSION: u32 = 1;
/// Bytes of a doc row: length, log, turn, text length (u32 each), text offset (u64).
const ROW: usize = 24;

/// Gives the canon entities a text names, as stable tags (`@npc:odessa flint`).
pub(crate) type Tagger<'a> = &'a dyn Fn(&str) -> Vec<String>;

/// One log as indexed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct LogEntry {
    name: String,
    /// Length and modification time (ns since the epoch) when last looked at.
    len: u64,
    mtime: u128,
    /// Where the last indexed exchange ends: new bytes are read from here.
    done: u64,
    /// Exchanges indexed.
    turns: u32,
    /// Checksum of the bytes just before `done`: a log rewritten, not appended to, differs.
    check: u64,
    /// Time of its last record.
    last_time: Option<String>,
    /// The GM left the session out of campaign memory (`vaultdm session exclude`): its last
    /// exclude or include marker read. Its passages stay indexed but are never recalled.
    #[serde(default)]
    excluded: bool,
}

#[derive(Debug, Serialize, Deserialize)]
struct Header {
    version: u32,
    fingerprint: u64,
    caps: (usize, usize),
    logs: Vec<LogEntry>,
    docs: u64,
    terms: u64,
    dict_bytes: u64,
    postings: u64,
    text_bytes: u64,
    total_len: u64,
}

#[derive(Debug, Clone, Copy)]
struct DocRow {
    len: u32,
    log: u32,
    turn: u32,
    text_len: u32,
    text_off: u64,
}

/// The index file, opened: rows and dictionary in memory, postings and texts read on demand.
#[derive(Debug)]
struct Base {
    file: Mutex<File>,
    rows: Vec<DocRow>,
    /// Per log: its passages and their total length.
    per_log: Vec<(usize, usize)>,
    /// Term -> (passages holding it, offset of its postings in entries).
    dict: FxHashMap<Box<str>, (u32, u64)>,
    post_start: u64,
    postings: u64,
    text_start: u64,
    text_bytes: u64,
}

/// Every passage of the index file: terms by id, each passage's length and term counts, rows.
type AllPassages = (Vec<String>, Vec<(usize, Vec<(u32, u32)>)>, Vec<Row>);

/// One passage while the file is written: its log, turn, length, term counts and row.
type Entry<'a> = (u32, u32, usize, Vec<(u32, u32)>, &'a Row);

/// A passage indexed in memory (read from a log since the file was written).
#[derive(Debug, Clone)]
struct Row {
    log: u32,
    turn: u32,
    player: String,
    dm: String,
    tags: Vec<String>,
}

/// Passages in memory: their index and texts.
#[derive(Debug, Default)]
struct Segment {
    index: Index,
    rows: Vec<Row>,
}

impl Segment {
    fn add(&mut self, log: u32, turn: u32, player: String, dm: String, tagger: Tagger<'_>) {
        let text = format!("{player}\n{dm}");
        let tags = tagger(&text);
        self.index.add(&text, &tags);
        self.rows.push(Row {
            log,
            turn,
            player,
            dm,
            tags,
        });
    }
}

#[derive(Debug, Default)]
struct Inner {
    logs: Vec<LogEntry>,
    /// Per log: still on disk.
    live: Vec<bool>,
    base: Option<Base>,
    delta: Segment,
    notices: Vec<String>,
    /// The file could not be written in this process: do not try again at every message.
    unwritable: bool,
    /// When every log was last looked at.
    scanned: Option<std::time::Instant>,
    /// Logs this process wrote to since then ([`Recall::touch`]).
    touched: Vec<String>,
}

/// A passage recalled from another session.
#[derive(Debug, Clone, PartialEq)]
pub struct Passage {
    /// The session it is from.
    pub session: String,
    /// Its exchange in that session (0-based).
    pub turn: usize,
    /// Its BM25 score.
    pub score: f64,
    /// Where it happened in the campaign (a larger number is later).
    pub order: usize,
    /// The player's words (clipped).
    pub player: String,
    /// The DM's reply (clipped).
    pub dm: String,
    /// The canon entities it names, as stable tags.
    pub tags: Vec<String>,
}

/// The campaign's recall of its sessions: the index file and what was read since.
#[derive(Debug)]
pub struct Recall {
    vault: PathBuf,
    fingerprint: u64,
    inner: Mutex<Inner>,
}

/// Why the index file cannot be used as it is.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum IndexError {
    /// It could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// It is not what vaultdm wrote, or not whole.
    #[error("{}: {why}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// It was made for other canon or another version: rebuilt, nothing is wrong.
    #[error("{}: made for other canon or another version", path.display())]
    Stale {
        /// The file.
        path: PathBuf,
    },
    /// It could not be written.
    #[error(transparent)]
    Write(#[from] boundary::BoundaryError),
}

/// How long [`Recall::refresh_recent`] trusts its last look at every log: a session written
/// by another process (a `chat` beside `serve`) reaches recall at most this late; the logs
/// this process writes reach it at once ([`Recall::touch`]).
pub(crate) const RESCAN: std::time::Duration = std::time::Duration::from_secs(1);

/// FNV-1a: a checksum stable across builds and platforms.
pub(crate) fn checksum(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn mtime_ns(t: Option<std::time::SystemTime>) -> u128 {
    t.and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos())
}

/// The checksum of the (up to) 64 bytes before `at` in `path`.
fn check_before(path: &Path, at: u64) -> Option<u64> {
    let mut f = boundary::open_inside(path, OpenOptions::new().read(true)).ok()?;
    let from = at.saturating_sub(64);
    f.seek(SeekFrom::Start(from)).ok()?;
    let mut buf = vec![0; (at - from) as usize];
    f.read_exact(&mut buf).ok()?;
    Some(checksum(&buf))
}

/// Logs recall reads: every session's but `vaultdm prompt`'s throwaway ones.
fn logs_of(vault: &Path) -> Vec<session::LogFile> {
    session::list_logs(vault)
        .unwrap_or_default()
        .into_iter()
        .filter(|l| !l.name.starts_with("prompt-"))
        .collect()
}

/// A new entry for log `name`, indexed from its start; its number.
fn fresh(inner: &mut Inner, seen: &mut Vec<bool>, name: &str) -> usize {
    inner.logs.push(LogEntry {
        name: name.to_string(),
        len: 0,
        mtime: 0,
        done: 0,
        turns: 0,
        check: checksum(&[]),
        last_time: None,
        excluded: false,
    });
    inner.live.push(true);
    seen.push(true);
    inner.logs.len() - 1
}

/// Leaves out log `i`'s passages for good (dropped at the next rewrite) and gives the log a
/// fresh entry; its number.
fn retire(inner: &mut Inner, seen: &mut Vec<bool>, i: usize) -> usize {
    let name = std::mem::replace(&mut inner.logs[i].name, format!("\0replaced {i}"));
    inner.live[i] = false;
    seen[i] = true;
    inner.notices.push(format!(
        "session {name} was replaced, not added to: recall reads it again"
    ));
    fresh(inner, seen, &name)
}

impl Recall {
    /// The recall of the vault's sessions for canon `fingerprint`: the index file when it is
    /// whole and current (brought up to the logs), else rebuilt from the logs and written.
    /// Never fails: what went wrong is in [`Recall::take_notices`].
    pub fn open(vault: &Path, fingerprint: u64, tagger: Tagger<'_>) -> Recall {
        let recall = Recall {
            vault: vault.to_path_buf(),
            fingerprint,
            inner: Mutex::new(Inner::default()),
        };
        {
            let mut inner = recall.lock();
            match load(vault, fingerprint) {
                Ok((logs, base)) => {
                    inner.live = vec![true; logs.len()];
                    inner.logs = logs;
                    inner.base = Some(base);
                }
                Err(e) => {
                    if !matches!(e, IndexError::Io { ref source, .. } if source.kind() == std::io::ErrorKind::NotFound)
                        && !matches!(e, IndexError::Stale { .. })
                    {
                        inner
                            .notices
                            .push(format!("the recall index was rebuilt: {e}"));
                    }
                    recall.rebuild(&mut inner, tagger);
                }
            }
            recall.catch_up(&mut inner, tagger);
        }
        recall
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether the GM left session `name` out of campaign memory (`vaultdm session exclude`),
    /// as its log said when last read.
    pub fn excluded(&self, name: &str) -> bool {
        self.lock()
            .logs
            .iter()
            .any(|e| e.name == name && e.excluded)
    }

    /// The sessions in campaign memory (on disk, not excluded by the GM), the latest written
    /// first, as their logs were when last read.
    pub fn latest_first(&self) -> Vec<String> {
        let inner = self.lock();
        let mut logs: Vec<&LogEntry> = inner
            .logs
            .iter()
            .zip(&inner.live)
            .filter(|(e, live)| **live && !e.excluded)
            .map(|(e, _)| e)
            .collect();
        logs.sort_by(|a, b| (b.mtime, &b.name).cmp(&(a.mtime, &a.name)));
        logs.into_iter().map(|e| e.name.clone()).collect()
    }

    /// The canon fingerprint it was made for.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// What went wrong since last asked (an index rebuilt, one that could not be written).
    pub fn take_notices(&self) -> Vec<String> {
        std::mem::take(&mut self.lock().notices)
    }

    /// Passages indexed (every session's, those of deleted logs until the next rewrite).
    pub fn len(&self) -> usize {
        let inner = self.lock();
        inner.base.as_ref().map_or(0, |b| b.rows.len()) + inner.delta.rows.len()
    }

    /// True when no passage is indexed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the index is on disk (false: kept in memory, it could not be written).
    pub fn on_disk(&self) -> bool {
        let inner = self.lock();
        inner.base.is_some() && !inner.unwritable
    }

    /// Brings the recall up to the logs: new bytes of a log read, a deleted log's passages
    /// left out, a new log read whole; the file rewritten once [`COMPACT_AT`] passages were
    /// read, rebuilt when a log was rewritten. One `stat` per log when nothing changed.
    pub fn refresh(&self, tagger: Tagger<'_>) {
        let mut inner = self.lock();
        self.catch_up(&mut inner, tagger);
    }

    /// [`Recall::refresh`] when every log was last looked at more than [`RESCAN`] ago; else
    /// only the logs this process wrote since ([`Recall::touch`]) are read. A busy server's
    /// messages then cost a `stat` per log they touched, not one per session of the campaign.
    pub fn refresh_recent(&self, tagger: Tagger<'_>) {
        let mut inner = self.lock();
        if inner.scanned.is_some_and(|t| t.elapsed() < RESCAN) {
            self.read_touched(&mut inner, tagger);
            if inner.delta.rows.len() >= COMPACT_AT && !inner.unwritable {
                self.write(&mut inner);
            }
        } else {
            self.catch_up(&mut inner, tagger);
        }
    }

    /// Tells the recall that this process wrote to session `name`'s log: the next
    /// [`Recall::refresh_recent`] reads it, however recent its last look at every log.
    pub fn touch(&self, name: &str) {
        let mut inner = self.lock();
        if !inner.touched.iter().any(|t| t == name) {
            inner.touched.push(name.to_owned());
        }
    }

    fn catch_up(&self, inner: &mut Inner, tagger: Tagger<'_>) {
        self.read_new(inner, tagger);
        if inner.delta.rows.len() >= COMPACT_AT && !inner.unwritable {
            self.write(inner);
        }
    }

    /// Each log's entry by name.
    fn entries(inner: &Inner) -> FxHashMap<String, usize> {
        inner
            .logs
            .iter()
            .enumerate()
            .map(|(i, e)| (e.name.clone(), i))
            .collect()
    }

    /// Reads what the logs gained: new bytes of a log, a new log whole, a replaced log again.
    fn read_new(&self, inner: &mut Inner, tagger: Tagger<'_>) {
        let now = logs_of(&self.vault);
        let mut seen = vec![false; inner.logs.len()];
        // One lookup per log, not a walk of every entry.
        let at = Self::entries(inner);
        for log in now {
            self.read_log(inner, &mut seen, &at, log, tagger);
        }
        for (i, s) in seen.into_iter().enumerate() {
            if !s {
                inner.live[i] = false;
            }
        }
        inner.scanned = Some(std::time::Instant::now());
        inner.touched.clear();
    }

    /// Reads what the logs this process wrote to gained (a log deleted is left out).
    fn read_touched(&self, inner: &mut Inner, tagger: Tagger<'_>) {
        let touched = std::mem::take(&mut inner.touched);
        if touched.is_empty() {
            return;
        }
        let mut seen = vec![false; inner.logs.len()];
        let at = Self::entries(inner);
        for name in touched {
            match session::log_file(&self.vault, &name).filter(|l| !l.name.starts_with("prompt-")) {
                Some(log) => self.read_log(inner, &mut seen, &at, log, tagger),
                None => {
                    if let Some(&i) = at.get(&name) {
                        inner.live[i] = false;
                    }
                }
            }
        }
    }

    /// Reads what log `log` gained since its entry was last brought up to it.
    fn read_log(
        &self,
        inner: &mut Inner,
        seen: &mut Vec<bool>,
        at: &FxHashMap<String, usize>,
        log: session::LogFile,
        tagger: Tagger<'_>,
    ) {
        let mtime = mtime_ns(log.modified);
        let mut i = match at.get(&log.name) {
            Some(&i) => i,
            None => fresh(inner, seen, &log.name),
        };
        seen[i] = true;
        inner.live[i] = true;
        let e = &inner.logs[i];
        if e.len == log.len && e.mtime == mtime {
            return;
        }
        // Replaced rather than appended to (shorter, or other bytes before where indexing
        // stopped): its passages are left out and it is read again as a new log.
        let replaced = log.len < e.done
            || (e.done > 0 && check_before(&log.path, e.done).is_some_and(|c| c != e.check));
        if replaced {
            i = retire(inner, seen, i);
        } else if e.done > 0 && check_before(&log.path, e.done).is_none() {
            // Unreadable for now (a link, permissions): left out until it can be read.
            inner.live[i] = false;
            return;
        }
        let Some(s) = self.scan_into(inner, i, &log.path, tagger) else {
            inner.live[i] = false;
            return;
        };
        // An undo of an exchange indexed before: the log is read again from its start.
        let s = if s.undo_beyond && inner.logs[i].done > 0 {
            i = retire(inner, seen, i);
            match self.scan_into(inner, i, &log.path, tagger) {
                Some(s) => s,
                None => {
                    inner.live[i] = false;
                    return;
                }
            }
        } else {
            s
        };
        let (from, turns) = (inner.logs[i].done, inner.logs[i].turns);
        let e = &mut inner.logs[i];
        e.len = log.len;
        e.mtime = mtime;
        e.turns = turns + s.exchanges as u32;
        if s.done != from {
            e.done = s.done;
            e.check = check_before(&log.path, s.done).unwrap_or(0);
        }
        if s.last_time.is_some() {
            e.last_time = s.last_time;
        }
        if let Some(excluded) = s.excluded {
            e.excluded = excluded;
        }
    }

    /// Reads log `i`'s exchanges from where its indexing stopped into memory.
    fn scan_into(
        &self,
        inner: &mut Inner,
        i: usize,
        path: &Path,
        tagger: Tagger<'_>,
    ) -> Option<stream::Scanned> {
        let (from, turns) = (inner.logs[i].done, inner.logs[i].turns);
        let mut n = 0u32;
        let delta = &mut inner.delta;
        stream::scan(path, from, (MAX_PLAYER_CHARS, MAX_DM_CHARS), &mut |p, d| {
            delta.add(i as u32, turns + n, p, d, tagger);
            n += 1;
        })
        .ok()
    }

    /// Indexes every log again and writes the file.
    fn rebuild(&self, inner: &mut Inner, tagger: Tagger<'_>) {
        inner.logs.clear();
        inner.live.clear();
        inner.base = None;
        inner.delta = Segment::default();
        // `read_new` reads every log whole when none is known.
        self.read_new(inner, tagger);
        // Oldest session first (by its last record), as recall labels them.
        self.write(inner);
    }

    /// Writes the file from what is indexed (the file's passages and those in memory, deleted
    /// logs' left out), then reads it back; on failure everything stays in memory.
    fn write(&self, inner: &mut Inner) {
        // No session yet: nothing worth a file (a vault only ever asked `prompt` stays clean).
        if inner.unwritable || inner.logs.is_empty() {
            return;
        }
        let bytes = match encode(inner, self.fingerprint) {
            Ok(b) => b,
            Err(e) => {
                inner
                    .notices
                    .push(format!("the recall index could not be written: {e}"));
                inner.unwritable = true;
                return;
            }
        };
        let written =
            write_file(&self.vault, &bytes.0).and_then(|()| load(&self.vault, self.fingerprint));
        drop(bytes);
        match written {
            Ok((logs, base)) => {
                inner.live = vec![true; logs.len()];
                inner.logs = logs;
                inner.base = Some(base);
                inner.delta = Segment::default();
            }
            Err(e) => {
                inner.notices.push(format!(
                    "the recall index could not be written ({e}); recall is kept in memory for this run"
                ));
                // What is indexed stays as it was: the file opened before (read through its
                // open handle) and the passages in memory.
                inner.unwritable = true;
            }
        }
    }

    /// Runs `f` on a consistent view of the recall.
    pub fn view<R>(&self, f: impl FnOnce(&View<'_>) -> R) -> R {
        let inner = self.lock();
        f(&View {
            inner: &inner,
            postings: Default::default(),
        })
    }
}

/// A term's (passage, count) pairs, shared while one message is searched.
type Postings = std::rc::Rc<Vec<(u32, u32)>>;

/// The recall at one moment, for one message's search.
pub struct View<'a> {
    inner: &'a Inner,
    /// Postings read for this message (a term's are read once for its count and its scores).
    postings: std::cell::RefCell<FxHashMap<String, Postings>>,
}

impl View<'_> {
    /// A term's postings in the file, read once per view.
    fn postings(&self, b: &Base, term: &str) -> Postings {
        if let Some(p) = self.postings.borrow().get(term) {
            return p.clone();
        }
        let p = std::rc::Rc::new(b.postings(term));
        self.postings
            .borrow_mut()
            .insert(term.to_string(), p.clone());
        p
    }

    /// Whether a log's passages count: still on disk and not the session `exclude`.
    fn counts(&self, log: u32, exclude: &str) -> bool {
        let i = self.inner;
        i.live.get(log as usize) == Some(&true)
            && i.logs
                .get(log as usize)
                .is_some_and(|e| e.name != exclude && !e.excluded)
    }

    /// Passages (but the session `exclude`'s and deleted logs') and their total length.
    pub fn stats(&self, exclude: &str) -> Stats {
        let i = self.inner;
        let mut st = Stats::default();
        if let Some(b) = &i.base {
            for (log, (docs, len)) in b.per_log.iter().enumerate() {
                if self.counts(log as u32, exclude) {
                    st.docs += *docs;
                    st.total_len += *len;
                }
            }
        }
        for ((len, _), r) in i.delta.index.docs().zip(&i.delta.rows) {
            if self.counts(r.log, exclude) {
                st.docs += 1;
                st.total_len += len;
            }
        }
        st
    }

    /// Passages holding `term` (but the session `exclude`'s and deleted logs').
    pub fn df(&self, term: &str, exclude: &str) -> u32 {
        let i = self.inner;
        let mut n = 0;
        if let Some(b) = &i.base {
            n += self
                .postings(b, term)
                .iter()
                .filter(|(d, _)| {
                    b.rows
                        .get(*d as usize)
                        .is_some_and(|r| self.counts(r.log, exclude))
                })
                .count() as u32;
        }
        n + i
            .delta
            .index
            .df_where(term, |d| self.counts(i.delta.rows[d].log, exclude))
    }

    /// The `k` passages best matching the weighed `query` ([`super::index::weigh`]) over a
    /// collection of `stats`, leaving out the session `exclude`; best first.
    pub fn search(
        &self,
        query: &[(String, f64)],
        stats: Stats,
        k: usize,
        exclude: &str,
    ) -> Vec<Passage> {
        let inner = self.inner;
        let allowed = |log: u32| self.counts(log, exclude);
        let avg = stats.avg();
        // (score, order, where): where is Ok(base row) or Err(delta row).
        let mut hits: Vec<(f64, usize, Result<usize, usize>)> = Vec::new();
        let based = inner.base.as_ref().map_or(0, |b| b.rows.len());
        if let Some(b) = &inner.base {
            // One score a passage, in a dense table (zeroed pages cost nothing until touched).
            let mut scores = vec![0.0f64; b.rows.len()];
            for (t, w) in query {
                for (doc, tf) in self.postings(b, t).iter() {
                    let Some(row) = b.rows.get(*doc as usize) else {
                        continue;
                    };
                    if allowed(row.log) {
                        scores[*doc as usize] += w * bm25(*tf, row.len as usize, avg);
                    }
                }
            }
            hits.extend(
                scores
                    .into_iter()
                    .enumerate()
                    .filter(|(_, s)| *s > 0.0)
                    .map(|(d, s)| (s, d, Ok(d))),
            );
        }
        let delta = &inner.delta;
        hits.extend(
            delta
                .index
                .score(query, stats, k, |i| allowed(delta.rows[i].log))
                .into_iter()
                .map(|(i, s)| (s, based + i, Err(i))),
        );
        let best = |a: &(f64, usize, Result<usize, usize>),
                    b: &(f64, usize, Result<usize, usize>)| {
            b.0.total_cmp(&a.0).then(b.1.cmp(&a.1))
        };
        if hits.len() > k && k > 0 {
            hits.select_nth_unstable_by(k - 1, best);
            hits.truncate(k);
        }
        hits.sort_by(best);
        hits.truncate(k);
        hits.into_iter()
            .filter_map(|(score, order, at)| {
                let (log, turn, player, dm, tags) = match at {
                    Ok(d) => {
                        let b = inner.base.as_ref()?;
                        let row = b.rows[d];
                        let (p, dm, tags) = b.text(&row)?;
                        (row.log, row.turn, p, dm, tags)
                    }
                    Err(i) => {
                        let r = &delta.rows[i];
                        (
                            r.log,
                            r.turn,
                            r.player.clone(),
                            r.dm.clone(),
                            r.tags.clone(),
                        )
                    }
                };
                Some(Passage {
                    session: inner.logs.get(log as usize)?.name.clone(),
                    turn: turn as usize,
                    score,
                    order,
                    player,
                    dm,
                    tags,
                })
            })
            .collect()
    }
}

impl Base {
    fn read_at(&self, at: u64, len: usize) -> Option<Vec<u8>> {
        let mut f = self.file.lock().unwrap_or_else(|p| p.into_inner());
        f.seek(SeekFrom::Start(at)).ok()?;
        let mut buf = vec![0; len];
        f.read_exact(&mut buf).ok()?;
        Some(buf)
    }

    /// The (passage, count) pairs of a term.
    fn postings(&self, term: &str) -> Vec<(u32, u32)> {
        let Some((df, off)) = self.dict.get(term) else {
            return Vec::new();
        };
        let Some(buf) = self.read_at(self.post_start + off * 8, *df as usize * 8) else {
            return Vec::new();
        };
        buf.chunks_exact(8)
            .map(|c| (u32_at(c, 0), u32_at(c, 4)))
            .collect()
    }

    /// A passage's player words, reply and tags.
    fn text(&self, row: &DocRow) -> Option<(String, String, Vec<String>)> {
        if row.text_off + u64::from(row.text_len) > self.text_bytes {
            return None;
        }
        let buf = self.read_at(self.text_start + row.text_off, row.text_len as usize)?;
        let s = String::from_utf8_lossy(&buf);
        let mut parts = s.splitn(3, '\0');
        let player = parts.next()?.to_string();
        let dm = parts.next()?.to_string();
        let tags = parts
            .next()
            .unwrap_or_default()
            .split('\n')
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect();
        Some((player, dm, tags))
    }

    /// Every passage of the file back in memory (to write it again with more).
    fn read_all(&self) -> Option<AllPassages> {
        let mut terms = Vec::with_capacity(self.dict.len());
        let mut docs: Vec<(usize, Vec<(u32, u32)>)> = self
            .rows
            .iter()
            .map(|r| (r.len as usize, Vec::new()))
            .collect();
        let all = self.read_at(self.post_start, self.postings as usize * 8)?;
        for (t, (df, off)) in &self.dict {
            let id = terms.len() as u32;
            terms.push(t.to_string());
            let start = *off as usize * 8;
            let slice = all.get(start..start + *df as usize * 8)?;
            for c in slice.chunks_exact(8) {
                docs.get_mut(u32_at(c, 0) as usize)?
                    .1
                    .push((id, u32_at(c, 4)));
            }
        }
        let mut rows = Vec::with_capacity(self.rows.len());
        for (r, d) in self.rows.iter().zip(docs.iter_mut()) {
            d.1.sort_unstable();
            let (player, dm, tags) = self.text(r)?;
            rows.push(Row {
                log: r.log,
                turn: r.turn,
                player,
                dm,
                tags,
            });
        }
        Some((terms, docs, rows))
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut x = [0u8; 4];
    x.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(x)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

/// Reads the index file's header, rows and dictionary, checking that it is whole.
fn load(vault: &Path, fingerprint: u64) -> Result<(Vec<LogEntry>, Base), IndexError> {
    let path = vault.join(INDEX_PATH);
    let io = |source| IndexError::Io {
        path: path.clone(),
        source,
    };
    let corrupt = |why: &str| IndexError::Corrupt {
        path: path.clone(),
        why: why.to_string(),
    };
    let mut file =
        boundary::open_inside(&path, OpenOptions::new().read(true)).map_err(|e| match e {
            boundary::BoundaryError::Io { source, .. } => io(source),
            other => corrupt(&other.to_string()),
        })?;
    let size = file.metadata().map_err(io)?.len();
    let mut head = [0u8; 12];
    file.read_exact(&mut head)
        .map_err(|_| corrupt("shorter than its header"))?;
    if &head[..8] != MAGIC {
        return Err(corrupt("not a recall index"));
    }
    let hl = u64::from(u32_at(&head, 8));
    if hl > size {
        return Err(corrupt("cut short"));
    }
    let mut hb = vec![0; hl as usize];
    file.read_exact(&mut hb).map_err(|_| corrupt("cut short"))?;
    let h: Header = serde_json::from_slice(&hb).map_err(|e| corrupt(&e.to_string()))?;
    if h.version != VERSION
        || h.fingerprint != fingerprint
        || h.caps != (MAX_PLAYER_CHARS, MAX_DM_CHARS)
    {
        return Err(IndexError::Stale { path });
    }
    let rows_bytes = h
        .docs
        .checked_mul(ROW as u64)
        .ok_or_else(|| corrupt("too large"))?;
    let expect = [
        12,
        hl,
        rows_bytes,
        h.dict_bytes,
        h.postings.saturating_mul(8),
        h.text_bytes,
        16,
    ]
    .iter()
    .try_fold(0u64, |a, b| a.checked_add(*b))
    .ok_or_else(|| corrupt("too large"))?;
    if expect != size {
        return Err(corrupt(&format!(
            "{size} bytes where {expect} were written"
        )));
    }
    let mut table = vec![0; (rows_bytes + h.dict_bytes) as usize];
    file.read_exact(&mut table)
        .map_err(|_| corrupt("cut short"))?;
    let post_start = 12 + hl + rows_bytes + h.dict_bytes;
    let text_start = post_start + h.postings * 8;
    let mut end = [0u8; 16];
    file.seek(SeekFrom::Start(size - 16)).map_err(io)?;
    file.read_exact(&mut end).map_err(io)?;
    if &end[..8] != END || u64_at(&end, 8) != checksum(&[&hb[..], &table[..]].concat()) {
        return Err(corrupt("its end mark or checksum is wrong"));
    }
    let mut rows = Vec::with_capacity(h.docs as usize);
    let mut per_log = vec![(0usize, 0usize); h.logs.len()];
    for c in table[..rows_bytes as usize].chunks_exact(ROW) {
        let row = DocRow {
            len: u32_at(c, 0),
            log: u32_at(c, 4),
            turn: u32_at(c, 8),
            text_len: u32_at(c, 12),
            text_off: u64_at(c, 16),
        };
        if row.log as usize >= h.logs.len() {
            return Err(corrupt("a passage of no log"));
        }
        per_log[row.log as usize].0 += 1;
        per_log[row.log as usize].1 += row.len as usize;
        rows.push(row);
    }
    let mut dict = FxHashMap::default();
    dict.reserve(h.terms as usize);
    let d = &table[rows_bytes as usize..];
    let mut at = 0usize;
    while at < d.len() {
        let n = *d.get(at).ok_or_else(|| corrupt("dictionary"))? as usize;
        let rec = d
            .get(at + 1..at + 1 + n + 12)
            .ok_or_else(|| corrupt("dictionary"))?;
        let term = std::str::from_utf8(&rec[..n]).map_err(|_| corrupt("dictionary"))?;
        let (df, off) = (u32_at(rec, n), u64_at(rec, n + 4));
        if off.saturating_add(u64::from(df)) > h.postings {
            return Err(corrupt("dictionary"));
        }
        dict.insert(term.into(), (df, off));
        at += 1 + n + 12;
    }
    if dict.len() as u64 != h.terms {
        return Err(corrupt("dictionary"));
    }
    Ok((
        h.logs,
        Base {
            file: Mutex::new(file),
            rows,
            per_log,
            dict,
            post_start,
            postings: h.postings,
            text_start,
            text_bytes: h.text_bytes,
        },
    ))
}

/// The file's bytes for what `inner` holds (deleted logs' passages left out), and its logs.
fn encode(inner: &Inner, fingerprint: u64) -> Result<(Vec<u8>, Vec<LogEntry>), IndexError> {
    // Live logs, renumbered, oldest session first.
    let mut order: Vec<usize> = (0..inner.logs.len()).filter(|i| inner.live[*i]).collect();
    order.sort_by(|a, b| {
        let (x, y) = (&inner.logs[*a], &inner.logs[*b]);
        x.last_time.cmp(&y.last_time).then(x.name.cmp(&y.name))
    });
    let mut new_id = vec![u32::MAX; inner.logs.len()];
    for (n, i) in order.iter().enumerate() {
        new_id[*i] = n as u32;
    }
    let logs: Vec<LogEntry> = order.iter().map(|i| inner.logs[*i].clone()).collect();

    // The file's passages, read back (a rewrite with new passages).
    let from_file = match &inner.base {
        Some(b) => Some(b.read_all().ok_or_else(|| IndexError::Corrupt {
            path: PathBuf::from(INDEX_PATH),
            why: "could not be read back".into(),
        })?),
        None => None,
    };
    // Every passage over one vocabulary: (new log, turn, length, term counts, its row).
    let mut terms: Vec<&str> = Vec::new();
    let mut ids: FxHashMap<&str, u32> = FxHashMap::default();
    let mut docs: Vec<Entry<'_>> = Vec::new();
    type Source<'a> = (Vec<&'a str>, Vec<(usize, &'a [(u32, u32)])>, &'a [Row]);
    let mut sources: Vec<Source<'_>> = Vec::new();
    if let Some((t, d, r)) = &from_file {
        sources.push((
            t.iter().map(String::as_str).collect(),
            d.iter().map(|(l, tf)| (*l, tf.as_slice())).collect(),
            r,
        ));
    }
    sources.push((
        inner.delta.index.terms(),
        inner.delta.index.docs().collect(),
        &inner.delta.rows,
    ));
    for (t, d, r) in &sources {
        let map: Vec<u32> = t
            .iter()
            .map(|t| {
                let next = terms.len() as u32;
                *ids.entry(t).or_insert_with(|| {
                    terms.push(t);
                    next
                })
            })
            .collect();
        for ((len, tf), row) in d.iter().zip(r.iter()) {
            let log = new_id.get(row.log as usize).copied().unwrap_or(u32::MAX);
            if log == u32::MAX {
                continue;
            }
            let mut tf: Vec<(u32, u32)> =
                tf.iter().map(|(id, c)| (map[*id as usize], *c)).collect();
            tf.sort_unstable();
            docs.push((log, row.turn, *len, tf, row));
        }
    }
    // Passages in story order: oldest session first, each in its order.
    docs.sort_by_key(|d| (d.0, d.1));

    // Postings by term; terms too long for the dictionary's length byte are left out.
    let mut posts: Vec<Vec<(u32, u32)>> = vec![Vec::new(); terms.len()];
    let mut total_len = 0u64;
    for (d, (_, _, len, tf, _)) in docs.iter().enumerate() {
        total_len += *len as u64;
        for (id, c) in tf {
            posts[*id as usize].push((d as u32, *c));
        }
    }
    let mut dict = Vec::new();
    let mut post_bytes = Vec::new();
    let mut n_terms = 0u64;
    let mut off = 0u64;
    for (t, p) in terms.iter().zip(&posts) {
        if t.len() > 255 || p.is_empty() {
            continue;
        }
        n_terms += 1;
        dict.push(t.len() as u8);
        dict.extend_from_slice(t.as_bytes());
        dict.extend_from_slice(&(p.len() as u32).to_le_bytes());
        dict.extend_from_slice(&off.to_le_bytes());
        for (d, c) in p {
            post_bytes.extend_from_slice(&d.to_le_bytes());
            post_bytes.extend_from_slice(&c.to_le_bytes());
        }
        off += p.len() as u64;
    }
    drop(posts);
    let mut table = Vec::with_capacity(docs.len() * ROW + dict.len());
    let mut texts = Vec::new();
    for (log, turn, len, _, r) in &docs {
        let start = texts.len() as u64;
        texts.extend_from_slice(r.player.replace('\0', " ").as_bytes());
        texts.push(0);
        texts.extend_from_slice(r.dm.replace('\0', " ").as_bytes());
        texts.push(0);
        texts.extend_from_slice(r.tags.join("\n").as_bytes());
        table.extend_from_slice(&(*len as u32).to_le_bytes());
        table.extend_from_slice(&log.to_le_bytes());
        table.extend_from_slice(&turn.to_le_bytes());
        table.extend_from_slice(&((texts.len() as u64 - start) as u32).to_le_bytes());
        table.extend_from_slice(&start.to_le_bytes());
    }
    table.extend_from_slice(&dict);
    let header = Header {
        version: VERSION,
        fingerprint,
        caps: (MAX_PLAYER_CHARS, MAX_DM_CHARS),
        logs: logs.clone(),
        docs: docs.len() as u64,
        terms: n_terms,
        dict_bytes: dict.len() as u64,
        postings: off,
        text_bytes: texts.len() as u64,
        total_len,
    };
    let hb = serde_json::to_vec(&header).map_err(|e| IndexError::Corrupt {
        path: PathBuf::from(INDEX_PATH),
        why: e.to_string(),
    })?;
    let sum = checksum(&[&hb[..], &table[..]].concat());
    let mut out =
        Vec::with_capacity(12 + hb.len() + table.len() + post_bytes.len() + texts.len() + 16);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(hb.len() as u32).to_le_bytes());
    out.extend_from_slice(&hb);
    out.extend_from_slice(&table);
    out.extend_from_slice(&post_bytes);
    out.extend_from_slice(&texts);
    out.extend_from_slice(END);
    out.extend_from_slice(&sum.to_le_bytes());
    Ok((out, logs))
}

/// Writes the index file atomically inside the vault; a link in its place is refused.
fn write_file(vault: &Path, bytes: &[u8]) -> Result<(), IndexError> {
    let rel = Path::new(INDEX_PATH);
    let dir = rel.parent().unwrap_or(Path::new(""));
    let real = boundary::dir_inside(vault, dir)?;
    let target = real.join(rel.file_name().unwrap_or_default());
    if std::fs::symlink_metadata(&target).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(IndexError::Corrupt {
            path: target,
            why: "is a link; vaultdm never writes through one".into(),
        });
    }
    boundary::write_atomic_inside(vault, rel, bytes)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::index::weigh;
    use crate::memory::words::terms;

    fn line(role: &str, text: &str) -> String {
        serde_json::json!({"time": "2026-11-26T20:00:00+00:00", "role": role, "text": text})
            .to_string()
            + "\n"
    }

    fn exchange(player: &str, dm: &str) -> String {
        line("player", player) + &line("dm", dm)
    }

    fn log_path(v: &Path, name: &str) -> PathBuf {
        v.join(".vaultdm/sessions").join(format!("{name}.jsonl"))
    }

    fn append(v: &Path, name: &str, text: &str) {
        use std::io::Write;
        let p = log_path(v, name);
        std::fs::create_dir_all(p.parent().unwrap_or(v)).unwrap_or_else(|e| panic!("{e}"));
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&p)
            .unwrap_or_else(|e| panic!("{e}"));
        f.write_all(text.as_bytes())
            .unwrap_or_else(|e| panic!("{e}"));
    }

    /// Two earlier sessions: the adit key in `night-1`, small talk in `night-2`.
    fn campaign() -> tempfile::TempDir {
        let v = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let mut one = String::new();
        for i in 0..20 {
            one += &if i == 7 {
                exchange(
                    "who's at the door?",
                    "Hesper whispers that the adit key is under the third stair of the chapel.",
                )
            } else {
                exchange(&format!("we drink, round {i}"), "The stove crackles.")
            };
        }
        append(v.path(), "night-1", &one);
        append(
            v.path(),
            "night-2",
            &exchange("we ride out", "Snow on the pass."),
        );
        v
    }

    fn tagger(text: &str) -> Vec<String> {
        if text.contains("Hesper") {
            vec!["@npc:hesper".into()]
        } else {
            Vec::new()
        }
    }

    fn find(r: &Recall, message: &str, exclude: &str) -> Vec<Passage> {
        let q: Vec<(String, f64)> = terms(message).into_iter().map(|t| (t, 1.0)).collect();
        r.view(|v| {
            let st = v.stats(exclude);
            let w = weigh(&q, st, &|t| v.df(t, exclude));
            v.search(&w, st, 8, exclude)
        })
    }

    #[test]
    fn the_index_is_written_once_and_read_back() {
        let v = campaign();
        let r = Recall::open(v.path(), 7, &tagger);
        assert!(r.take_notices().is_empty());
        assert!(r.on_disk());
        assert!(v.path().join(INDEX_PATH).is_file());
        assert_eq!(r.len(), 21);
        let hits = find(&r, "where is the adit key?", "tonight");
        assert_eq!((hits[0].session.as_str(), hits[0].turn), ("night-1", 7));
        assert_eq!(hits[0].tags, vec!["@npc:hesper".to_string()]);
        assert!(hits[0].dm.contains("third stair"));
        // A session's own passages are not recalled from the campaign.
        assert!(find(&r, "where is the adit key?", "night-1").is_empty());
        // Opened again: read, not rebuilt, the same answer.
        let written = std::fs::metadata(v.path().join(INDEX_PATH))
            .and_then(|m| m.modified())
            .ok();
        let again = Recall::open(v.path(), 7, &|_| panic!("nothing to index"));
        assert!(again.take_notices().is_empty());
        assert_eq!(find(&again, "where is the adit key?", "tonight"), hits);
        let now = std::fs::metadata(v.path().join(INDEX_PATH))
            .and_then(|m| m.modified())
            .ok();
        assert_eq!(written, now);
        // Other canon: rebuilt.
        let other = Recall::open(v.path(), 8, &tagger);
        assert_eq!(other.len(), 21);
    }

    #[test]
    fn a_deleted_corrupt_or_truncated_index_is_rebuilt() {
        let v = campaign();
        let want = find(&Recall::open(v.path(), 7, &tagger), "the adit key", "x");
        let file = v.path().join(INDEX_PATH);
        let whole = std::fs::read(&file).unwrap_or_default();
        // Deleted: rebuilt without a word.
        std::fs::remove_file(&file).unwrap_or_else(|e| panic!("{e}"));
        let r = Recall::open(v.path(), 7, &tagger);
        assert!(r.take_notices().is_empty());
        assert_eq!(find(&r, "the adit key", "x"), want);
        // Truncated, one byte changed, or another file: rebuilt, and said.
        let mut flipped = whole.clone();
        flipped[40] ^= 0x55;
        for bad in [
            whole[..whole.len() / 2].to_vec(),
            flipped,
            b"hello".to_vec(),
        ] {
            std::fs::write(&file, &bad).unwrap_or_else(|e| panic!("{e}"));
            let r = Recall::open(v.path(), 7, &tagger);
            let notes = r.take_notices();
            assert!(notes.iter().any(|n| n.contains("rebuilt")), "{notes:?}");
            assert_eq!(find(&r, "the adit key", "x"), want);
            assert_eq!(std::fs::read(&file).unwrap_or_default(), whole);
        }
    }

    /// `vaultdm session exclude` appends a marker to the log: from the next refresh the
    /// session is never recalled, in this process and in a new one reading the file, until
    /// `session include` appends the other marker.
    #[test]
    fn a_session_the_gm_excludes_is_not_recalled_until_included() {
        let v = campaign();
        let marker = |event: &str| {
            serde_json::json!({"time": "2026-11-26T21:00:00+00:00", "role": "system", "event": event})
                .to_string()
                + "\n"
        };
        let r = Recall::open(v.path(), 7, &tagger);
        assert_eq!(find(&r, "the adit key", "x")[0].session, "night-1");
        assert!(!r.excluded("night-1"));
        append(v.path(), "night-1", &marker("exclude"));
        r.refresh(&tagger);
        assert!(r.excluded("night-1"));
        assert!(find(&r, "the adit key", "x").is_empty());
        {
            let mut inner = r.lock();
            r.write(&mut inner);
        }
        let other = Recall::open(v.path(), 7, &tagger);
        assert!(other.excluded("night-1"));
        assert!(find(&other, "the adit key", "x").is_empty());
        append(v.path(), "night-1", &marker("include"));
        r.refresh(&tagger);
        assert_eq!(find(&r, "the adit key", "x")[0].session, "night-1");
    }

    /// A busy server looks at every log at most once per [`RESCAN`]: in between, only the
    /// logs this process touched are read, so what it writes is recalled at once and what
    /// another process writes at the next look at every log.
    #[test]
    fn recent_refreshes_read_the_touched_logs_and_every_log_after_rescan() {
        let v = campaign();
        let r = Recall::open(v.path(), 7, &tagger);
        let lantern = "where is the brass lantern?";
        assert!(find(&r, lantern, "x").is_empty());
        // Written by "another process": not read before the next look at every log.
        append(
            v.path(),
            "night-9",
            &exchange(
                "we search the loft",
                "Under the hay: the brass lantern, still warm.",
            ),
        );
        r.refresh_recent(&tagger);
        assert!(find(&r, lantern, "x").is_empty());
        // Written here and touched: read now.
        r.touch("night-9");
        r.refresh_recent(&tagger);
        assert_eq!(find(&r, lantern, "x")[0].session, "night-9");
        // A touched log that was deleted leaves recall.
        std::fs::remove_file(log_path(v.path(), "night-9")).unwrap_or_else(|e| panic!("{e}"));
        r.touch("night-9");
        r.refresh_recent(&tagger);
        assert!(find(&r, lantern, "x").is_empty());
        // Another process's log, untouched: read once the last look is older than RESCAN.
        append(
            v.path(),
            "night-10",
            &exchange(
                "and the cellar?",
                "The brass lantern's twin hangs by the cellar door.",
            ),
        );
        r.refresh_recent(&tagger);
        assert!(find(&r, lantern, "x").is_empty());
        r.lock().scanned = std::time::Instant::now().checked_sub(RESCAN);
        r.refresh_recent(&tagger);
        assert_eq!(find(&r, lantern, "x")[0].session, "night-10");
    }

    #[test]
    fn a_log_another_process_appends_to_is_read_from_where_it_ended() {
        let v = campaign();
        let r = Recall::open(v.path(), 7, &tagger);
        let before = std::fs::read(v.path().join(INDEX_PATH)).unwrap_or_default();
        assert!(find(&r, "the mule driver", "x").is_empty());
        append(
            v.path(),
            "night-2",
            &exchange("who drives the mules?", "A mule driver called Pell Harrow."),
        );
        // Only the new bytes are read (nothing else is tagged again).
        let tagged = std::cell::Cell::new(0);
        let counting = |t: &str| {
            tagged.set(tagged.get() + 1);
            tagger(t)
        };
        r.refresh(&counting);
        assert_eq!(tagged.get(), 1);
        let hits = find(&r, "the mule driver", "x");
        assert_eq!((hits[0].session.as_str(), hits[0].turn), ("night-2", 1));
        // Kept in memory until enough gather: the file is as it was.
        assert_eq!(
            std::fs::read(v.path().join(INDEX_PATH)).unwrap_or_default(),
            before
        );
        // A new process reads the file, then the log's new bytes.
        let other = Recall::open(v.path(), 7, &tagger);
        assert_eq!(find(&other, "the mule driver", "x")[0].turn, 1);
        // A deleted session is no longer recalled.
        std::fs::remove_file(log_path(v.path(), "night-1")).unwrap_or_else(|e| panic!("{e}"));
        r.refresh(&tagger);
        assert!(find(&r, "the adit key", "x").is_empty());
    }

    #[test]
    fn a_replaced_log_is_read_again_and_nothing_else() {
        let v = campaign();
        let r = Recall::open(v.path(), 7, &tagger);
        // Another version of night-1 (a sync tool, `git checkout`, deleted and begun again):
        // longer, other words.
        let p = log_path(v.path(), "night-1");
        let mut text = String::new();
        for _ in 0..25 {
            text += &exchange("we hunt", "A wolf howls beyond the ridge.");
        }
        std::fs::write(&p, text).unwrap_or_else(|e| panic!("{e}"));
        let tagged = std::cell::Cell::new(0);
        let counting = |t: &str| {
            tagged.set(tagged.get() + 1);
            tagger(t)
        };
        r.refresh(&counting);
        assert!(r.take_notices().iter().any(|n| n.contains("read")));
        // Only night-1 was read again (night-2 is as it was).
        assert_eq!(tagged.get(), 25);
        assert!(find(&r, "the adit key", "x").is_empty());
        assert_eq!(find(&r, "the wolf howls", "x").len(), 8);
        // Shorter this time, and in a new process too.
        std::fs::write(&p, exchange("we rest", "The owl hoots.")).unwrap_or_else(|e| panic!("{e}"));
        r.refresh(&tagger);
        assert!(find(&r, "the wolf howls", "x").is_empty());
        assert_eq!(find(&r, "the owl hoots", "x")[0].turn, 0);
        let other = Recall::open(v.path(), 7, &tagger);
        assert_eq!(find(&other, "the owl hoots", "x")[0].session, "night-1");
        assert!(find(&other, "the adit key", "x").is_empty());
    }

    #[test]
    fn enough_new_passages_are_written_to_the_file() {
        let v = campaign();
        let r = Recall::open(v.path(), 7, &tagger);
        let mut text = String::new();
        for i in 0..COMPACT_AT {
            text += &exchange(&format!("we dig, day {i}"), "The seam sings.");
        }
        append(v.path(), "night-3", &text);
        r.refresh(&tagger);
        assert!(r.on_disk());
        let fresh = Recall::open(v.path(), 7, &|_| panic!("all on disk"));
        assert_eq!(fresh.len(), 21 + COMPACT_AT);
        assert_eq!(find(&fresh, "the adit key", "x")[0].turn, 7);
        assert_eq!(find(&fresh, "the seam sings", "x").len(), 8);
    }

    #[test]
    fn an_index_that_cannot_be_written_keeps_recall_in_memory() {
        let v = campaign();
        // `.vaultdm/memory` is a file: no folder can be made there.
        std::fs::write(v.path().join(".vaultdm/memory"), "not a folder")
            .unwrap_or_else(|e| panic!("{e}"));
        let r = Recall::open(v.path(), 7, &tagger);
        let notes = r.take_notices();
        assert!(
            notes.iter().any(|n| n.contains("could not be written")),
            "{notes:?}"
        );
        assert!(!r.on_disk());
        assert_eq!(find(&r, "the adit key", "x")[0].turn, 7);
        // Not tried again at every message.
        append(v.path(), "night-2", &exchange("on", "The pass is closed."));
        r.refresh(&tagger);
        assert!(r.take_notices().is_empty());
        assert_eq!(find(&r, "the pass is closed", "x")[0].turn, 1);
    }

    #[cfg(unix)]
    #[test]
    fn an_index_that_is_a_link_is_never_written_through() {
        let v = campaign();
        let outside = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let target = outside.path().join("victim");
        std::fs::write(&target, "keep me").unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(v.path().join(".vaultdm/memory")).unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(&target, v.path().join(INDEX_PATH))
            .unwrap_or_else(|e| panic!("{e}"));
        let r = Recall::open(v.path(), 7, &tagger);
        assert_eq!(find(&r, "the adit key", "x")[0].turn, 7);
        assert_eq!(
            std::fs::read_to_string(&target).unwrap_or_default(),
            "keep me"
        );
    }

    #[test]
    fn a_huge_record_contributes_a_capped_passage() {
        let v = campaign();
        let huge = "The vault door hums and the lamps gutter. ".repeat(200_000);
        append(v.path(), "epic", &exchange("we open the vault", &huge));
        let r = Recall::open(v.path(), 7, &tagger);
        let hits = find(&r, "the vault door hums", "x");
        assert_eq!(hits[0].session, "epic");
        assert!(hits[0].dm.chars().count() <= MAX_DM_CHARS);
        let size = std::fs::metadata(v.path().join(INDEX_PATH))
            .map(|m| m.len())
            .unwrap_or(u64::MAX);
        assert!(size < 64 << 10, "{size}");
    }
}
