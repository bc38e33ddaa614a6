//! A session log's exchanges read as a stream, from a byte offset, in bounded memory.
//!
//! Recall indexes the exchanges of every session of a campaign; loading a log whole
//! ([`super::load`]) would hold a 300 MB session in memory to index another one. This reader
//! goes through the log line by line, keeps at most [`MAX_LINE`] bytes of any line (a longer
//! record gives the start of its text, read from that prefix), clips each exchange to the
//! caller's limits, and pairs records into exchanges with the rules of
//! [`super::history_from_records`] (a player record answered by a DM record; an undo drops
//! the pending message, else the last exchange).

use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::Path;

use serde::Deserialize;

use super::SessionError;
use crate::vault::boundary;

/// Most bytes of one log line that are read; the rest of a longer line is skipped.
pub(crate) const MAX_LINE: usize = 1 << 20;

/// Exchanges held back so a later undo can still drop them.
const UNDO_DEPTH: usize = 64;

/// What a scan read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Scanned {
    /// Offset after the last line read where no player message waited for a reply: the place
    /// to scan on from later.
    pub done: u64,
    /// Exchanges given.
    pub exchanges: usize,
    /// An undo reached back before the first exchange this scan could drop (before the
    /// offset it started at, or deeper than it holds back): what was given is not the
    /// session's history exactly.
    pub undo_beyond: bool,
    /// The time of the last record read (RFC 3339), if any.
    pub last_time: Option<String>,
    /// Lines longer than [`MAX_LINE`], read from their start only.
    pub long_lines: usize,
    /// The last `session exclude` (`true`) or `include` (`false`) marker read, if any.
    pub excluded: Option<bool>,
}

/// The fields of a record an exchange needs (the rest of the line is skipped unread).
#[derive(Deserialize)]
struct Line {
    #[serde(default)]
    time: Option<String>,
    role: String,
    #[serde(default)]
    text: String,
    #[serde(default)]
    event: Option<String>,
}

/// Reads the exchanges of the log at `path` from byte `from` (a line start), each player
/// message clipped to `max.0` characters and each reply to `max.1`, giving them oldest first
/// to `each`. A missing log is an empty one.
pub(crate) fn scan(
    path: &Path,
    from: u64,
    max: (usize, usize),
    each: &mut dyn FnMut(String, String),
) -> Result<Scanned, SessionError> {
    let io = |source| SessionError::Io {
        path: path.to_owned(),
        source,
    };
    let file = match boundary::open_inside(path, OpenOptions::new().read(true)) {
        Ok(f) => f,
        Err(e) if e.is_not_found() => return Ok(Scanned::default()),
        Err(e) => return Err(e.into()),
    };
    let mut r = BufReader::with_capacity(64 << 10, file);
    r.seek(SeekFrom::Start(from)).map_err(io)?;
    let mut out = Scanned {
        done: from,
        ..Scanned::default()
    };
    let mut offset = from;
    let mut line = Vec::new();
    let mut pending: Option<String> = None;
    let mut held: std::collections::VecDeque<(String, String)> = Default::default();
    while let Some((read, terminated, long)) = next_line(&mut r, &mut line).map_err(io)? {
        offset += read as u64;
        if !terminated {
            // A torn last line (a write in progress): read it again next time.
            break;
        }
        out.long_lines += usize::from(long);
        let parsed = if long {
            long_line(&line)
        } else {
            serde_json::from_slice::<Line>(&line).ok()
        };
        if let Some(l) = parsed {
            if l.time.is_some() {
                out.last_time = l.time;
            }
            match l.role.as_str() {
                "player" => pending = Some(clip(&l.text, max.0)),
                "dm" => {
                    if let Some(p) = pending.take() {
                        held.push_back((p, clip(&l.text, max.1)));
                        if held.len() > UNDO_DEPTH {
                            if let Some((p, d)) = held.pop_front() {
                                each(p, d);
                                out.exchanges += 1;
                            }
                        }
                    }
                }
                "system" if l.event.as_deref() == Some("exclude") => out.excluded = Some(true),
                "system" if l.event.as_deref() == Some("include") => out.excluded = Some(false),
                "system"
                    if l.event.as_deref() == Some("undo")
                        && pending.take().is_none()
                        && held.pop_back().is_none() =>
                {
                    out.undo_beyond = true;
                }
                _ => {}
            }
        }
        if pending.is_none() {
            out.done = offset;
        }
    }
    for (p, d) in held {
        each(p, d);
        out.exchanges += 1;
    }
    Ok(out)
}

/// The next line into `line` (without its newline, at most [`MAX_LINE`] bytes kept): the
/// bytes it took, whether it ended with a newline, whether it was longer than kept.
fn next_line(
    r: &mut impl BufRead,
    line: &mut Vec<u8>,
) -> std::io::Result<Option<(usize, bool, bool)>> {
    line.clear();
    let (mut read, mut long) = (0usize, false);
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok((read > 0).then_some((read, false, long)));
        }
        let (part, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(p) => (&buf[..p], Some(p + 1)),
            None => (buf, None),
        };
        let room = MAX_LINE.saturating_sub(line.len());
        if part.len() > room {
            long = true;
        }
        line.extend_from_slice(&part[..part.len().min(room)]);
        let used = done.unwrap_or(buf.len());
        r.consume(used);
        read += used;
        if done.is_some() {
            return Ok(Some((read, true, long)));
        }
    }
}

/// The role, time and start of the text of a record too long to read whole: its fields are
/// found in the prefix kept, and the text decoded up to where the prefix ends.
fn long_line(prefix: &[u8]) -> Option<Line> {
    let s = String::from_utf8_lossy(prefix);
    let field = |key: &str| -> Option<usize> {
        let at = s.find(&format!("\"{key}\""))?;
        let rest = &s[at + key.len() + 2..];
        let colon = rest.find(':')?;
        let value = rest[colon + 1..].trim_start();
        value.starts_with('"').then(|| s.len() - value.len() + 1)
    };
    let string_at = |start: usize| -> String {
        let body = &s[start..];
        // The string's end: the first quote not escaped, else the end of the prefix.
        let mut end = body.len();
        let mut escaped = false;
        for (i, c) in body.char_indices() {
            match c {
                '\\' if !escaped => escaped = true,
                '"' if !escaped => {
                    end = i;
                    break;
                }
                _ => escaped = false,
            }
        }
        let mut raw = &body[..end];
        // A cut escape (`\`, `\u12`) at the end is dropped.
        if let Some(b) = raw.rfind('\\').filter(|b| raw.len() - b < 6) {
            let tail = &raw[b..];
            let whole = tail.len() >= 2 && (!tail.starts_with("\\u") || tail.len() == 6);
            if !whole {
                raw = &raw[..b];
            }
        }
        serde_json::from_str::<String>(&format!("\"{raw}\"")).unwrap_or_default()
    };
    let role = string_at(field("role")?);
    let text = field("text").map(string_at).unwrap_or_default();
    let time = field("time").map(string_at);
    Some(Line {
        time,
        role,
        text,
        event: None,
    })
}

/// `text`'s first `max` characters.
fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((at, _)) => text[..at].to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(dir: &Path, lines: &[String]) -> std::path::PathBuf {
        let p = dir.join("s.jsonl");
        std::fs::write(&p, lines.join("\n") + "\n").unwrap_or_else(|e| panic!("{e}"));
        p
    }

    fn rec(role: &str, text: &str) -> String {
        serde_json::json!({"time": "2026-11-26T20:00:00+00:00", "role": role, "text": text})
            .to_string()
    }

    fn all(path: &Path, from: u64) -> (Vec<(String, String)>, Scanned) {
        let mut got = Vec::new();
        let s = scan(path, from, (1000, 1000), &mut |p, d| got.push((p, d)))
            .unwrap_or_else(|e| panic!("{e}"));
        (got, s)
    }

    #[test]
    fn pairs_records_as_history_does() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let undo = r#"{"time":"2026-11-26T20:00:00+00:00","role":"system","event":"undo"}"#;
        let p = log(
            dir.path(),
            &[
                rec("player", "a"),
                rec("dm", "A"),
                rec("player", "failed"),
                rec("player", "b"),
                rec("dm", "B"),
                undo.to_string(),
                rec("player", "c"),
                rec("dm", "C"),
                rec("player", "waiting"),
            ],
        );
        let (got, s) = all(&p, 0);
        assert_eq!(
            got,
            vec![("a".into(), "A".into()), ("c".into(), "C".into())]
        );
        assert!(!s.undo_beyond);
        // `done` stops before the message still waiting for its reply.
        let len = std::fs::metadata(&p).map(|m| m.len()).unwrap_or(0);
        assert!(s.done < len);
        let (rest, _) = all(&p, s.done);
        assert!(rest.is_empty());
    }

    #[test]
    fn a_huge_record_gives_the_start_of_its_text_in_bounded_memory() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let big = "The \"vault\" door hums. ".repeat(MAX_LINE / 10);
        let p = log(dir.path(), &[rec("player", "open it"), rec("dm", &big)]);
        let mut got = Vec::new();
        let s =
            scan(&p, 0, (100, 60), &mut |p, d| got.push((p, d))).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.long_lines, 1);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].1, big.chars().take(60).collect::<String>());
    }

    #[test]
    fn an_undo_before_the_offset_is_reported() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let undo = r#"{"time":"2026-11-26T20:00:00+00:00","role":"system","event":"undo"}"#;
        let first = rec("player", "a") + "\n" + &rec("dm", "A") + "\n";
        let p = log(
            dir.path(),
            &[rec("player", "a"), rec("dm", "A"), undo.into()],
        );
        let (got, s) = all(&p, first.len() as u64);
        assert!(got.is_empty());
        assert!(s.undo_beyond);
    }
}
