//! Byte-preserving edits of a note's text, for write-back.
//!
//! When canon changes (the GM, or the DM with the GM's consent, moves a thread, spends gold,
//! advances the clock), vaultdm edits the GM's own files. Those files are hand-written: they
//! hold comments, a chosen key order, quoting and list styles, Windows line ends, a byte-order
//! mark. So every function here changes only the bytes of the value being changed and leaves
//! every other byte of the note as it was; a note is never re-serialised.
//!
//! The module is pure: each function takes the file's text and returns the new text (or an
//! [`EditError`] a GM can act on). Reading and atomically writing the file is the caller's job.

use super::period::{self, Period};
use super::{markdown, threads};
use std::fmt::Write as _;

/// Why an edit could not be made. Every message names the key, heading or thread, and the
/// 1-based file line where one is known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EditError {
    /// The note opens a frontmatter block with `---` and never closes it.
    #[error("the frontmatter opened by `---` on line {line} is never closed (add a `---` line after the last key)")]
    UnterminatedFrontmatter {
        /// Line of the opening `---`.
        line: usize,
    },
    /// No key was given to edit (a caller bug, reported rather than panicking).
    #[error("no frontmatter key was given to edit")]
    NoKey,
    /// The key holds a nested mapping, where a single value cannot go.
    #[error("`{key}` on line {line} holds a nested mapping (indented `name: value` lines); vaultdm will not replace it with a single value")]
    NestedMapping {
        /// The key as written in the note.
        key: String,
        /// Line of the key.
        line: usize,
    },
    /// The key holds a `|` or `>` block of text.
    #[error("`{key}` on line {line} holds a `|` or `>` block of text; edit it by hand")]
    BlockScalar {
        /// The key as written in the note.
        key: String,
        /// Line of the key.
        line: usize,
    },
    /// The key holds a list where a single value was to be set.
    #[error("`{key}` on line {line} holds a list, not a single value")]
    NotAScalar {
        /// The key as written in the note.
        key: String,
        /// Line of the key.
        line: usize,
    },
    /// The key holds a value that is not a list (and cannot be read as a comma list).
    #[error("`{key}` on line {line} is not a list ({why})")]
    NotAList {
        /// The key as written in the note.
        key: String,
        /// Line of the key.
        line: usize,
        /// What the value is instead.
        why: String,
    },
    /// The value uses YAML vaultdm does not edit (anchors, tags, values over several lines).
    #[error("`{key}` on line {line} {why}; edit it by hand")]
    Unsupported {
        /// The key as written in the note.
        key: String,
        /// Line of the key.
        line: usize,
        /// What makes it unsupported.
        why: String,
    },
    /// The note has none of the keys asked for.
    #[error("the note has no `{key}` key in its frontmatter")]
    KeyNotFound {
        /// The first spelling asked for.
        key: String,
    },
    /// The item to remove is not in the list.
    #[error("`{item}` is not in the list `{key}` (line {line})")]
    ItemNotFound {
        /// The key as written in the note.
        key: String,
        /// The item asked for.
        item: String,
        /// Line of the key.
        line: usize,
    },
    /// A value or item cannot be written where it was to go.
    #[error("cannot write {what}: {why}")]
    InvalidText {
        /// What was being written (`the item "a, b" into inventory`, `a timeline event`…).
        what: String,
        /// Why not.
        why: String,
    },
    /// No thread in open-threads.md has this title.
    #[error("no thread titled `{title}` in the open threads")]
    ThreadNotFound {
        /// The title asked for.
        title: String,
    },
    /// Several threads have this title.
    #[error(
        "{count} threads are titled `{title}` (lines {lines}); rename one so each title is unique"
    )]
    AmbiguousThread {
        /// The title asked for.
        title: String,
        /// How many match.
        count: usize,
        /// Their lines, comma-separated.
        lines: String,
    },
    /// The edit would not read back as it was meant: canon would read the thread otherwise.
    #[error("the open threads would not read back as edited: {why} (thread `{title}`); nothing was written, edit the note by hand")]
    NotReadBack {
        /// The thread's title.
        title: String,
        /// What the reader would find instead.
        why: String,
    },
    /// A thread with this title already exists.
    #[error("a thread titled `{title}` already exists on line {line}")]
    ThreadExists {
        /// The title asked for.
        title: String,
        /// Line of the existing thread.
        line: usize,
    },
    /// Several `## Day N` headings for the same day.
    #[error("the timeline has {count} headings for Day {day} (lines {lines}); merge them so each day has one")]
    AmbiguousDay {
        /// The day asked for.
        day: i64,
        /// How many headings match.
        count: usize,
        /// Their lines, comma-separated.
        lines: String,
    },
    /// The frontmatter is one `{...}` flow mapping written in a way vaultdm does not edit.
    #[error("the frontmatter is one `{{...}}` mapping (line {line}) that {why}; edit it by hand or write it as `key: value` lines")]
    FlowFrontmatter {
        /// Line where the mapping starts.
        line: usize,
        /// What makes it uneditable.
        why: String,
    },
    /// The note has the tag nowhere (neither in `tags:` nor as a `#tag`).
    #[error("the note has no tag `{tag}` (in `tags:` or as `#{tag}`)")]
    TagNotFound {
        /// The tag asked for.
        tag: String,
    },
    /// The temporal index is not valid JSON.
    #[error("temporal-index.json is not valid JSON at line {line}, column {column}: {message}")]
    InvalidJson {
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// The temporal index is JSON but not an object.
    #[error("temporal-index.json must hold one JSON object (`{{\"current_day\": 6, ...}}`)")]
    JsonNotAnObject,
}

/// A new single value for a frontmatter key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scalar {
    /// A whole number, always written unquoted (`hp: 15`).
    Int(i64),
    /// Text. Written unquoted when plain YAML reads it back as the same text and the old
    /// value was unquoted; in the old value's quote style (`'` or `"`) when it was quoted;
    /// in double quotes when YAML needs quotes (a leading `[[` wikilink, `: `, ` #`, a
    /// leading special character, empty text, text that looks like a number, bool or null,
    /// leading or trailing spaces).
    Text(String),
}

impl From<i64> for Scalar {
    fn from(n: i64) -> Self {
        Scalar::Int(n)
    }
}

impl From<&str> for Scalar {
    fn from(s: &str) -> Self {
        Scalar::Text(s.to_string())
    }
}

// ---------------------------------------------------------------------------------------
// Lines: the text as a list of lines, each with its own line ending, so untouched lines
// keep their bytes exactly.

#[derive(Debug, Clone)]
struct Line {
    text: String,
    eol: String,
}

#[derive(Debug, Clone)]
struct Doc {
    bom: &'static str,
    lines: Vec<Line>,
    /// The file's line ending, used for every inserted line.
    eol: &'static str,
    /// Whether the last line ends with a line ending.
    final_eol: bool,
}

const BOM: &str = "\u{feff}";

impl Doc {
    fn parse(text: &str) -> Doc {
        let (bom, rest) = match text.strip_prefix(BOM) {
            Some(r) => (BOM, r),
            None => ("", text),
        };
        let eol = match rest.find('\n') {
            Some(i) if i > 0 && rest.as_bytes()[i - 1] == b'\r' => "\r\n",
            _ => "\n",
        };
        let mut lines = Vec::new();
        let mut s = rest;
        while !s.is_empty() {
            let (line, next) = match s.find('\n') {
                Some(i) => (&s[..=i], &s[i + 1..]),
                None => (s, ""),
            };
            let (t, e) = if let Some(t) = line.strip_suffix("\r\n") {
                (t, "\r\n")
            } else if let Some(t) = line.strip_suffix('\n') {
                (t, "\n")
            } else {
                (line, "")
            };
            lines.push(Line {
                text: t.to_string(),
                eol: e.to_string(),
            });
            s = next;
        }
        Doc {
            bom,
            lines,
            eol,
            final_eol: rest.is_empty() || rest.ends_with('\n'),
        }
    }

    /// The byte offset in the whole text just after line `i` (its line ending included).
    fn offset_after(&self, i: usize) -> usize {
        self.bom.len()
            + self.lines[..=i.min(self.lines.len().saturating_sub(1))]
                .iter()
                .map(|l| l.text.len() + l.eol.len())
                .sum::<usize>()
    }

    fn line(&self, text: impl Into<String>) -> Line {
        Line {
            text: text.into(),
            eol: self.eol.to_string(),
        }
    }

    fn insert(&mut self, at: usize, texts: Vec<String>) {
        let new: Vec<Line> = texts.into_iter().map(|t| self.line(t)).collect();
        self.lines.splice(at..at, new);
    }

    /// Every line but the last ends with a line ending; the last one does only if the
    /// file's did.
    fn render(mut self) -> String {
        let n = self.lines.len();
        for (i, l) in self.lines.iter_mut().enumerate() {
            if i + 1 < n {
                if l.eol.is_empty() {
                    l.eol = self.eol.to_string();
                }
            } else if !self.final_eol {
                l.eol.clear();
            } else if l.eol.is_empty() {
                l.eol = self.eol.to_string();
            }
        }
        let mut out = String::from(self.bom);
        for l in &self.lines {
            out.push_str(&l.text);
            out.push_str(&l.eol);
        }
        out
    }

    fn text(&self, i: usize) -> &str {
        self.lines.get(i).map_or("", |l| l.text.as_str())
    }

    fn is_blank(&self, i: usize) -> bool {
        self.text(i).trim().is_empty()
    }
}

fn indent_of(s: &str) -> usize {
    s.len() - s.trim_start_matches(' ').len()
}

fn no_newline(what: &str, s: &str) -> Result<(), EditError> {
    if s.contains(['\n', '\r']) {
        return Err(EditError::InvalidText {
            what: what.to_string(),
            why: "it spans several lines; give it on one line".into(),
        });
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// YAML scalars: when quotes are needed, quoting and unquoting.

const SPECIAL_START: &str = "-?:,[]{}#&*!|>'\"%@`";

fn looks_like_non_text(s: &str) -> bool {
    let l = s.to_ascii_lowercase();
    if matches!(
        l.as_str(),
        "true" | "false" | "null" | "~" | "yes" | "no" | "on" | "off" | "y" | "n"
    ) {
        return true;
    }
    let unsigned = l.trim_start_matches(['+', '-']);
    if matches!(unsigned, ".inf" | ".nan" | "inf" | "nan" | "infinity")
        || unsigned.starts_with("0x")
        || unsigned.starts_with("0o")
    {
        return true;
    }
    l.parse::<f64>().is_ok()
}

/// Whether text can be written as a plain (unquoted) YAML scalar and read back unchanged.
fn plain_ok(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    s.trim() == s
        && !SPECIAL_START.contains(first)
        && !s.contains(": ")
        && !s.contains(":\t")
        && !s.contains(" #")
        && !s.contains("\t#")
        && !s.ends_with(':')
        && !s.chars().any(char::is_control)
        && !looks_like_non_text(s)
}

fn double_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn single_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// How a value was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quote {
    Plain,
    Single,
    Double,
    /// An unquoted `[[wikilink]]` (YAML reads a list in a list; the vault reads the link).
    Link,
}

/// Whether text is one `[[wikilink]]` that can stay unquoted where an unquoted one was.
fn is_bare_link(s: &str) -> bool {
    s.strip_prefix("[[")
        .and_then(|r| r.strip_suffix("]]"))
        .is_some_and(|inner| {
            !inner.trim().is_empty() && !inner.contains(['[', ']', ',', '{', '}', '\n'])
        })
}

/// Renders text for YAML given the old value's quote style.
fn render_text(s: &str, old: Quote) -> String {
    let needs_double = s.chars().any(|c| c.is_control() && c != '\t');
    match old {
        Quote::Single if !needs_double => single_quote(s),
        Quote::Double => double_quote(s),
        Quote::Link if is_bare_link(s) => s.to_string(),
        _ if plain_ok(s) => s.to_string(),
        _ => double_quote(s),
    }
}

fn render_scalar(v: &Scalar, old: Quote) -> String {
    match v {
        Scalar::Int(n) => n.to_string(),
        Scalar::Text(s) => render_text(s, old),
    }
}

/// The text of a quoted or plain scalar as YAML reads it.
fn unquote(raw: &str) -> String {
    let raw = raw.trim();
    if raw.len() >= 2 && raw.starts_with('\'') && raw.ends_with('\'') {
        return raw[1..raw.len() - 1].replace("''", "'");
    }
    if raw.len() >= 2 && raw.starts_with('"') && raw.ends_with('"') {
        let inner = &raw[1..raw.len() - 1];
        let mut out = String::with_capacity(inner.len());
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => out.push('\r'),
                Some('0') => out.push('\0'),
                Some('u') => {
                    let hex: String = chars.by_ref().take(4).collect();
                    match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                        Some(c) => out.push(c),
                        None => {
                            out.push_str("\\u");
                            out.push_str(&hex);
                        }
                    }
                }
                Some(c) => out.push(c),
                None => out.push('\\'),
            }
        }
        return out;
    }
    raw.to_string()
}

/// Length of a quoted scalar at the start of `s` (through its closing quote), if closed.
fn quoted_len(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let q = *b.first()?;
    let mut i = 1;
    while i < b.len() {
        if q == b'"' && b[i] == b'\\' {
            i += 2;
            continue;
        }
        if b[i] == q {
            if q == b'\'' && b.get(i + 1) == Some(&b'\'') {
                i += 2;
                continue;
            }
            return Some(i + 1);
        }
        i += 1;
    }
    None
}

/// Length of a flow collection at the start of `s` (through its closing bracket), if closed
/// on this line.
fn flow_len(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    let mut item_start = true;
    while i < b.len() {
        let c = b[i];
        if item_start && (c == b'"' || c == b'\'') {
            i += quoted_len(&s[i..])?;
            item_start = false;
            continue;
        }
        match c {
            b'[' | b'{' => {
                depth += 1;
                item_start = true;
            }
            b']' | b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            b',' => item_start = true,
            b' ' | b'\t' => {}
            _ => item_start = false,
        }
        i += 1;
    }
    None
}

/// Where a trailing ` # comment` starts in `s` from byte `from` on (a `#` after a space).
fn comment_start(s: &str, from: usize) -> Option<usize> {
    let b = s.as_bytes();
    (from..b.len()).find(|&j| b[j] == b'#' && (j == 0 || b[j - 1] == b' ' || b[j - 1] == b'\t'))
}

/// The value bytes of an inline value (`s` starts at the value): its length, leaving out
/// spaces and a trailing comment.
fn value_len(s: &str) -> usize {
    let scanned = match s.as_bytes().first() {
        Some(b'"') | Some(b'\'') => quoted_len(s),
        Some(b'[') | Some(b'{') => flow_len(s),
        _ => Some(0),
    }
    .unwrap_or(0);
    match comment_start(s, scanned) {
        Some(c) => s[..c].trim_end().len(),
        None => s.trim_end().len(),
    }
}

// ---------------------------------------------------------------------------------------
// Frontmatter: the top-level keys and what each holds.

/// The frontmatter fences: the opening and closing line indexes.
fn fences(doc: &Doc) -> Result<Option<(usize, usize)>, EditError> {
    let is_fence = |t: &str, closing: bool| {
        let t = t.trim_end_matches([' ', '\t']);
        t == "---" || (closing && t == "...")
    };
    if doc.lines.is_empty() || !is_fence(doc.text(0), false) {
        return Ok(None);
    }
    match (1..doc.lines.len()).find(|&i| is_fence(doc.text(i), true)) {
        Some(c) => Ok(Some((0, c))),
        None => Err(EditError::UnterminatedFrontmatter { line: 1 }),
    }
}

/// What a top-level key holds.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    /// `key:` with nothing after it and nothing below it.
    Empty,
    /// `~` or `null`.
    Null,
    /// A plain, single- or double-quoted scalar on the key's line.
    Scalar(Quote),
    /// `[a, b]` on the key's line.
    Flow,
    /// `{a: b}`.
    FlowMap,
    /// A `|` or `>` block.
    BlockScalar,
    /// `- item` lines below the key.
    BlockList,
    /// Indented `name: value` lines below the key.
    Mapping,
    /// A value over several lines, an anchor or a tag.
    Unsupported(&'static str),
}

#[derive(Debug, Clone)]
struct Entry {
    /// Line index of the key.
    line: usize,
    /// The key as written (quotes removed).
    key: String,
    /// Byte just after the `:`.
    colon_end: usize,
    /// Value bytes on the key's line (excluding spaces and a trailing comment).
    value: (usize, usize),
    /// Lines below the key that belong to it: `[line + 1, end)`.
    end: usize,
    kind: Kind,
}

/// The key of a top-level line (`key: ...` at column 0): (key, byte after the colon).
fn key_of(t: &str) -> Option<(String, usize)> {
    let first = t.chars().next()?;
    // Indented lines, comments, list items and flow or anchor starts are not keys.
    if matches!(
        first,
        ' ' | '\t' | '#' | '[' | '{' | '&' | '*' | '!' | '|' | '>'
    ) || t == "-"
        || t.starts_with("- ")
        || t.starts_with("---")
        || t.starts_with("...")
    {
        return None;
    }
    if first == '"' || first == '\'' {
        let q = quoted_len(t)?;
        let rest = &t[q..];
        let after = rest.trim_start_matches([' ', '\t']);
        let colon = t.len() - after.len();
        if !after.starts_with(':') {
            return None;
        }
        return Some((unquote(&t[..q]), colon + 1));
    }
    let b = t.as_bytes();
    let colon = (0..b.len())
        .find(|&i| b[i] == b':' && matches!(b.get(i + 1), None | Some(b' ') | Some(b'\t')))?;
    let key = t[..colon].trim_end();
    if key.is_empty() {
        return None;
    }
    Some((key.to_string(), colon + 1))
}

fn entries(doc: &Doc, open: usize, close: usize) -> Vec<Entry> {
    let mut keys: Vec<(usize, String, usize)> = Vec::new();
    for i in open + 1..close {
        if let Some((k, c)) = key_of(doc.text(i)) {
            keys.push((i, k, c));
        }
    }
    let mut out = Vec::with_capacity(keys.len());
    for (n, (line, key, colon_end)) in keys.iter().enumerate() {
        let end = keys.get(n + 1).map_or(close, |k| k.0);
        let t = doc.text(*line);
        let rest = &t[*colon_end..];
        let vs = colon_end + (rest.len() - rest.trim_start_matches([' ', '\t']).len());
        let ve = vs + value_len(&t[vs..]);
        let v = &t[vs..ve];
        // Lines below the key that carry content (not blank, not a comment at column 0).
        let below: Vec<&str> = (line + 1..end)
            .map(|i| doc.text(i))
            .filter(|s| !s.trim().is_empty() && !s.trim_start().starts_with('#'))
            .collect();
        let kind = if v.is_empty() {
            match below.first() {
                None => Kind::Empty,
                Some(s) => {
                    let s = s.trim_start();
                    if s == "-" || s.starts_with("- ") {
                        Kind::BlockList
                    } else if key_of(s).is_some() {
                        Kind::Mapping
                    } else {
                        Kind::Unsupported("holds a value over several lines")
                    }
                }
            }
        } else if v.starts_with('|') || v.starts_with('>') {
            Kind::BlockScalar
        } else if !below.is_empty() {
            Kind::Unsupported("holds a value over several lines")
        } else {
            inline_kind(v)
        };
        out.push(Entry {
            line: *line,
            key: key.clone(),
            colon_end: *colon_end,
            value: (vs, ve),
            end,
            kind,
        });
    }
    out
}

/// What a value written on its key's line holds (`v` is not empty).
fn inline_kind(v: &str) -> Kind {
    if v.starts_with('&') || v.starts_with('!') || v.starts_with('*') {
        Kind::Unsupported("uses a YAML anchor, alias or tag")
    } else if is_bare_link(v) {
        Kind::Scalar(Quote::Link)
    } else if v.starts_with('[') {
        if flow_len(v) == Some(v.len()) {
            Kind::Flow
        } else {
            Kind::Unsupported("holds a `[` list that is not closed on its line")
        }
    } else if v.starts_with('{') {
        Kind::FlowMap
    } else if v == "~" || v.eq_ignore_ascii_case("null") {
        Kind::Null
    } else if v.starts_with('"') {
        if quoted_len(v) == Some(v.len()) {
            Kind::Scalar(Quote::Double)
        } else {
            Kind::Unsupported("holds a quoted value that is not closed on its line")
        }
    } else if v.starts_with('\'') {
        if quoted_len(v) == Some(v.len()) {
            Kind::Scalar(Quote::Single)
        } else {
            Kind::Unsupported("holds a quoted value that is not closed on its line")
        }
    } else {
        Kind::Scalar(Quote::Plain)
    }
}

/// A frontmatter written as one flow mapping (`{name: Kit Calloway, class: Ranger, hp: 20}`,
/// on one line or several): its keys, each value on its key's line, and the place a new
/// `key: value` goes (just after the last value, or just inside an empty `{}`).
/// `Err` carries why vaultdm will not edit it (a value over several lines, a key without
/// a value, an unclosed mapping).
fn flow_map_entries(
    doc: &Doc,
    open: usize,
    close: usize,
) -> Result<(Vec<Entry>, (usize, usize)), &'static str> {
    let mut out = Vec::new();
    let mut line = (open + 1..close)
        .find(|&i| {
            let t = doc.text(i).trim_start();
            !t.is_empty() && !t.starts_with('#')
        })
        .ok_or("is empty")?;
    let mut at = doc.text(line).find('{').ok_or("is not a flow mapping")? + 1;
    let mut insert = (line, at);
    // Moves to the next byte that is not a space (over line ends); None at the fence.
    let next = |line: &mut usize, at: &mut usize| -> Option<u8> {
        loop {
            let t = doc.text(*line).as_bytes();
            while *at < t.len() && matches!(t[*at], b' ' | b'\t') {
                *at += 1;
            }
            if *at < t.len() {
                return Some(t[*at]);
            }
            *line += 1;
            *at = 0;
            if *line >= close {
                return None;
            }
        }
    };
    loop {
        match next(&mut line, &mut at).ok_or("is a `{` mapping that is never closed")? {
            b'}' => return Ok((out, insert)),
            b',' => {
                at += 1;
                continue;
            }
            _ => {}
        }
        let t = doc.text(line);
        let rest = &t[at..];
        // The key: quoted, or plain up to `: ` (or `:` before `,`/`}`/end).
        let (key, after_key) = if rest.starts_with(['"', '\'']) {
            let q = quoted_len(rest).ok_or("has a quoted key that is not closed on its line")?;
            (unquote(&rest[..q]), at + q)
        } else {
            let b = rest.as_bytes();
            let c = (0..b.len())
                .find(|&i| {
                    b[i] == b':' && matches!(b.get(i + 1), None | Some(b' ' | b'\t' | b',' | b'}'))
                        || matches!(b[i], b',' | b'}')
                })
                .unwrap_or(b.len());
            if b.get(c) != Some(&b':') {
                return Err("has a key without a value");
            }
            (rest[..c].trim_end().to_string(), at + c)
        };
        let colon = after_key + t[after_key..].len() - t[after_key..].trim_start().len();
        if t.as_bytes().get(colon) != Some(&b':') {
            return Err("has a key without a value");
        }
        let colon_end = colon + 1;
        let vs = colon_end + t[colon_end..].len() - t[colon_end..].trim_start().len();
        let v = &t[vs..];
        let len = match v.as_bytes().first() {
            Some(b'"' | b'\'') => {
                quoted_len(v).ok_or("has a quoted value that is not closed on its line")?
            }
            Some(b'[' | b'{') => flow_len(v).ok_or("has a value over several lines")?,
            _ => v
                .find([',', '}'])
                .map_or(v.trim_end().len(), |i| v[..i].trim_end().len()),
        };
        let ve = vs + len;
        let raw = &t[vs..ve];
        let kind = if raw.is_empty() {
            Kind::Empty
        } else {
            inline_kind(raw)
        };
        // The value ends at the `,` or `}` that follows it.
        let (mut l2, mut a2) = (line, ve);
        if !matches!(next(&mut l2, &mut a2), Some(b',' | b'}')) {
            return Err("has a value over several lines");
        }
        out.push(Entry {
            line,
            key,
            colon_end,
            value: (vs, ve),
            end: line + 1,
            kind,
        });
        insert = (line, if raw.is_empty() { colon_end } else { ve });
        at = ve;
    }
}

/// The entry for the first of `keys` (in priority order) the note holds; the last
/// occurrence when a key is written twice (YAML keeps the last).
fn find_entry<'e>(entries: &'e [Entry], keys: &[&str]) -> Option<&'e Entry> {
    keys.iter().find_map(|k| {
        entries
            .iter()
            .rev()
            .find(|e| e.key.eq_ignore_ascii_case(k.trim()))
    })
}

/// Parsed frontmatter, or the place a new one goes.
struct Front {
    doc: Doc,
    /// (open, close) fence lines; None when the note has no frontmatter.
    fences: Option<(usize, usize)>,
    entries: Vec<Entry>,
    /// For a frontmatter written as one `{...}` mapping: where a new `key: value` goes.
    flow: Option<(usize, usize)>,
}

impl Front {
    fn parse(text: &str) -> Result<Front, EditError> {
        let doc = Doc::parse(text);
        let fences = fences(&doc)?;
        let first = fences.and_then(|(o, c)| {
            (o + 1..c).find(|&i| {
                let t = doc.text(i).trim_start();
                !t.is_empty() && !t.starts_with('#')
            })
        });
        let (entries, flow) = match (fences, first) {
            (Some((o, c)), Some(i)) if doc.text(i).trim_start().starts_with('{') => {
                match flow_map_entries(&doc, o, c) {
                    Ok((e, at)) => (e, Some(at)),
                    Err(why) => {
                        return Err(EditError::FlowFrontmatter {
                            line: i + 1,
                            why: why.to_string(),
                        })
                    }
                }
            }
            (Some((o, c)), _) => (entries(&doc, o, c), None),
            (None, _) => (Vec::new(), None),
        };
        Ok(Front {
            doc,
            fences,
            entries,
            flow,
        })
    }

    /// Adds lines as the last lines of the frontmatter, creating one if there is none; in a
    /// `{...}` frontmatter, as `, key: value` after its last value.
    fn append(mut self, lines: Vec<String>) -> String {
        if let Some((line, at)) = self.flow {
            let sep = if self.entries.is_empty() { "" } else { ", " };
            self.splice(line, (at, at), &format!("{sep}{}", lines.join(", ")));
            return self.doc.render();
        }
        match self.fences {
            Some((_, close)) => self.doc.insert(close, lines),
            None => {
                let mut all = vec!["---".to_string()];
                all.extend(lines);
                all.push("---".to_string());
                self.doc.insert(0, all);
            }
        }
        self.doc.render()
    }

    /// A rendered value as it may stand here: in a `{...}` frontmatter, plain text holding
    /// `,`, `[`, `]`, `{` or `}` is double-quoted (a bare `[[link]]` stays as it is).
    fn fit(&self, rendered: String) -> String {
        if self.flow.is_some()
            && !rendered.starts_with(['"', '\''])
            && rendered.contains([',', '[', ']', '{', '}'])
            && !is_bare_link(&rendered)
        {
            double_quote(&rendered)
        } else {
            rendered
        }
    }

    /// Replaces bytes `range` of line `line` with `with`.
    fn splice(&mut self, line: usize, range: (usize, usize), with: &str) {
        if let Some(l) = self.doc.lines.get_mut(line) {
            l.text.replace_range(range.0..range.1, with);
        }
    }

    /// The block-list style the note uses: (indent, marker with its spaces), if any.
    fn block_style(&self) -> Option<(String, String)> {
        self.entries
            .iter()
            .filter(|e| e.kind == Kind::BlockList)
            .find_map(|e| {
                (e.line + 1..e.end).find_map(|i| {
                    let t = self.doc.text(i);
                    let ind = indent_of(t);
                    let r = &t[ind..];
                    let after = r.strip_prefix('-')?;
                    let sp = after.len() - after.trim_start_matches(' ').len();
                    (sp > 0).then(|| (" ".repeat(ind), format!("-{}", " ".repeat(sp))))
                })
            })
    }
}

fn kind_error(e: &Entry) -> EditError {
    let key = e.key.clone();
    let line = e.line + 1;
    match &e.kind {
        Kind::BlockScalar => EditError::BlockScalar { key, line },
        Kind::Mapping | Kind::FlowMap => EditError::NestedMapping { key, line },
        Kind::Flow | Kind::BlockList => EditError::NotAScalar { key, line },
        Kind::Unsupported(why) => EditError::Unsupported {
            key,
            line,
            why: (*why).to_string(),
        },
        _ => EditError::Unsupported {
            key,
            line,
            why: "holds a value vaultdm cannot edit".into(),
        },
    }
}

/// Sets one frontmatter key to a single value, changing only the value's bytes.
///
/// `keys` are the accepted spellings in priority order (synonyms such as
/// `["hp_current", "hp"]`), matched case-insensitively: the first one the note holds is
/// edited (its last occurrence, if written twice); if none is present, `keys[0]` is added
/// as the last line of the frontmatter (a frontmatter block is created when the note has
/// none). Comments after the value, the key's spelling and every other line are kept.
pub fn set_scalar(text: &str, keys: &[&str], value: &Scalar) -> Result<String, EditError> {
    let out = set_scalar_bytes(text, keys, value)?;
    front_read_back(text, &out, keys)?;
    Ok(out)
}

fn set_scalar_bytes(text: &str, keys: &[&str], value: &Scalar) -> Result<String, EditError> {
    let first = keys.first().ok_or(EditError::NoKey)?;
    if let Scalar::Text(s) = value {
        no_newline(&format!("the value of `{first}`"), s)?;
    }
    let mut f = Front::parse(text)?;
    let Some(e) = find_entry(&f.entries, keys).cloned() else {
        let line = format!(
            "{}: {}",
            first.trim(),
            f.fit(render_scalar(value, Quote::Plain))
        );
        return Ok(f.append(vec![line]));
    };
    match e.kind {
        Kind::Scalar(q) => {
            let old = unquote(&f.doc.text(e.line)[e.value.0..e.value.1]);
            let new = f.fit(render_scalar(&keep_note(&old, value), q));
            f.splice(e.line, e.value, &new);
        }
        Kind::Null => {
            let new = f.fit(render_scalar(value, Quote::Plain));
            f.splice(e.line, e.value, &new);
        }
        Kind::Empty => {
            let new = format!(" {}", f.fit(render_scalar(value, Quote::Plain)));
            f.splice(e.line, (e.colon_end, e.colon_end), &new);
        }
        _ => return Err(kind_error(&e)),
    }
    Ok(f.doc.render())
}

/// The reader's view of a note's frontmatter: each key (lower case) with its value as the
/// reader holds it, and how many YAML errors the reader finds in it.
fn reader_view(text: &str) -> (Vec<(String, String)>, usize) {
    /// A value as the reader holds it, without the lines it was read from.
    fn shown(v: &crate::vault::yaml::Value) -> String {
        use crate::vault::yaml::Value;
        match v {
            Value::List(items) => format!(
                "[{}]",
                items.iter().map(shown).collect::<Vec<_>>().join(", ")
            ),
            Value::Map(m) => format!(
                "{{{}}}",
                m.iter()
                    .map(|e| format!("{}: {}", shown(&e.key), shown(&e.value)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            other => format!("{other:?}"),
        }
    }
    use crate::vault::frontmatter::{split, Frontmatter};
    let mut diags = Vec::new();
    let fm = Frontmatter::parse("note.md", &split(text), &mut diags);
    use crate::vault::Code;
    let errors = diags
        .iter()
        .filter(|d| {
            matches!(
                d.code,
                Code::YamlSyntax | Code::UnclosedFrontmatter | Code::FrontmatterTooComplex
            )
        })
        .count();
    (
        fm.iter().map(|(k, v)| (k.to_string(), shown(v))).collect(),
        errors,
    )
}

/// The reader is the judge of a frontmatter edit made by bytes: after it the frontmatter must
/// parse as well as before, and every key but `keys` must read exactly as it did (so a
/// writer's notion of the YAML can never silently differ from canon's).
fn front_read_back(before: &str, after: &str, keys: &[&str]) -> Result<(), EditError> {
    let (was, errors_before) = reader_view(before);
    let (now, errors_after) = reader_view(after);
    let edited = |k: &str| keys.iter().any(|e| e.eq_ignore_ascii_case(k));
    let what = format!("`{}`", keys.first().copied().unwrap_or(""));
    if errors_after > errors_before {
        return Err(EditError::InvalidText {
            what,
            why: "the frontmatter would no longer parse after the edit; nothing was written (edit it by hand)".into(),
        });
    }
    let others = |v: &[(String, String)]| -> Vec<(String, String)> {
        v.iter().filter(|(k, _)| !edited(k)).cloned().collect()
    };
    if others(&was) != others(&now) {
        let (a, b) = (others(&was), others(&now));
        let key = a
            .iter()
            .zip(&b)
            .find(|(x, y)| x != y)
            .map_or_else(|| "a key".to_string(), |(x, _)| format!("`{}`", x.0));
        return Err(EditError::InvalidText {
            what,
            why: format!("the edit would change how {key} of the frontmatter reads; nothing was written (edit it by hand)"),
        });
    }
    Ok(())
}

/// A number written with a unit or a note after it (`32 (5d8 + 10)`, `150 gp`) keeps them
/// when only the number changes (by the rule canon reads numbers with).
fn keep_note(old: &str, value: &Scalar) -> Scalar {
    match value {
        Scalar::Int(n) => match crate::vault::frontmatter::number_and_note(old) {
            Some((_, rest)) if !rest.is_empty() => Scalar::Text(format!("{n}{rest}")),
            _ => value.clone(),
        },
        Scalar::Text(_) => value.clone(),
    }
}

/// What a frontmatter key currently holds, for conflict checks: the key as written and the
/// value as YAML reads it (quotes removed; `""` for an empty or null value). A flow list or
/// comma string is given as written (`[a, b]`), a block list as its items joined by `, `.
/// `None` when no key matches, the note has no (or an unclosed) frontmatter, or the key holds
/// a mapping or a `|`/`>` block.
pub fn get_scalar(text: &str, keys: &[&str]) -> Option<(String, String)> {
    let f = Front::parse(text).ok()?;
    let e = find_entry(&f.entries, keys)?;
    let t = f.doc.text(e.line);
    let raw = &t[e.value.0..e.value.1];
    let v = match e.kind {
        Kind::Empty | Kind::Null => String::new(),
        Kind::Scalar(_) => unquote(raw),
        Kind::Flow => raw.to_string(),
        Kind::BlockList => block_items(&f.doc, e)
            .iter()
            .map(|it| unquote(&it.text))
            .collect::<Vec<_>>()
            .join(", "),
        _ => return None,
    };
    Some((e.key.clone(), v))
}

// ---------------------------------------------------------------------------------------
// Lists.

/// One item of a block list: its line, the lines it spans, and its text (comment removed).
#[derive(Debug)]
struct BlockItem {
    line: usize,
    end: usize,
    text: String,
}

fn block_items(doc: &Doc, e: &Entry) -> Vec<BlockItem> {
    let mut items: Vec<BlockItem> = Vec::new();
    let mut item_indent = None;
    for i in e.line + 1..e.end {
        let t = doc.text(i);
        if t.trim().is_empty() || t.trim_start().starts_with('#') {
            continue;
        }
        let ind = indent_of(t);
        let r = &t[ind..];
        let is_item = r == "-" || r.starts_with("- ");
        if is_item && item_indent.is_none_or(|x| x == ind) {
            item_indent = Some(ind);
            let v = r[1..].trim_start();
            items.push(BlockItem {
                line: i,
                end: i + 1,
                text: v[..value_len(v)].to_string(),
            });
        } else if let Some(last) = items.last_mut() {
            if item_indent.is_some_and(|x| ind > x) {
                last.end = i + 1;
            }
        }
    }
    items
}

/// Items of a flow list or comma string: byte spans in `s` (trimmed, non-empty).
fn split_items(s: &str, from: usize, to: usize) -> Vec<(usize, usize)> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = from;
    let mut i = from;
    let mut item_start = true;
    let push = |out: &mut Vec<(usize, usize)>, a: usize, z: usize| {
        let seg = &s[a..z];
        let lead = seg.len() - seg.trim_start().len();
        let t = seg.trim();
        if !t.is_empty() {
            out.push((a + lead, a + lead + t.len()));
        }
    };
    while i < to {
        let c = b[i];
        if item_start && (c == b'"' || c == b'\'') {
            match quoted_len(&s[i..to]) {
                Some(n) => {
                    i += n;
                    item_start = false;
                    continue;
                }
                None => {
                    i += 1;
                    continue;
                }
            }
        }
        match c {
            b'[' | b'{' => {
                depth += 1;
                item_start = true;
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => {
                push(&mut out, start, i);
                start = i + 1;
                item_start = true;
                i += 1;
                continue;
            }
            b' ' | b'\t' => {}
            _ => item_start = false,
        }
        i += 1;
    }
    push(&mut out, start, to);
    out
}

fn norm_item(s: &str) -> String {
    unquote(s.trim()).trim().to_lowercase()
}

/// The item as it goes into a flow list.
fn flow_item(item: &str) -> String {
    if plain_ok(item) && !item.contains([',', '[', ']', '{', '}']) {
        item.to_string()
    } else {
        double_quote(item)
    }
}

fn check_item(key: &str, item: &str) -> Result<(), EditError> {
    no_newline(&format!("the item `{item}` into `{key}`"), item)?;
    if item.trim().is_empty() {
        return Err(EditError::InvalidText {
            what: format!("an item into `{key}`"),
            why: "the item is empty".into(),
        });
    }
    Ok(())
}

/// The separator between the last two items (`, ` unless the list shows another).
fn separator(t: &str, items: &[(usize, usize)]) -> String {
    match items {
        [.., a, b] => t[a.1..b.0].to_string(),
        _ => ", ".to_string(),
    }
}

/// Adds an item to a list key, in the list's own style.
///
/// A block list gets a new `- item` line after its last item, with the same indentation and
/// marker; a flow list `[a, b]` becomes `[a, b, item]` (`[]` becomes `[item]`); a comma string
/// `a, b` becomes `a, b, item`. An empty or null value, or a missing key, gets the note's
/// style: a flow list `key: [item]` when the note has no block lists, else a block list.
/// An item already in the list (compared case-insensitively, quotes ignored) changes nothing.
pub fn list_add(text: &str, keys: &[&str], item: &str) -> Result<String, EditError> {
    let out = list_add_bytes(text, keys, item)?;
    front_read_back(text, &out, keys)?;
    Ok(out)
}

fn list_add_bytes(text: &str, keys: &[&str], item: &str) -> Result<String, EditError> {
    let first = keys.first().ok_or(EditError::NoKey)?;
    check_item(first, item)?;
    let item = item.trim();
    let want = norm_item(item);
    let mut f = Front::parse(text)?;
    let style = f.block_style();
    let Some(e) = find_entry(&f.entries, keys).cloned() else {
        let lines = match style {
            Some((ind, marker)) => vec![
                format!("{}:", first.trim()),
                format!("{ind}{marker}{}", render_text(item, Quote::Plain)),
            ],
            None => vec![format!("{}: [{}]", first.trim(), flow_item(item))],
        };
        return Ok(f.append(lines));
    };
    let t = f.doc.text(e.line).to_string();
    match e.kind {
        Kind::BlockList => {
            let items = block_items(&f.doc, &e);
            if items.iter().any(|it| norm_item(&it.text) == want) {
                return Ok(text.to_string());
            }
            let Some(last) = items.last() else {
                return Err(kind_error(&e));
            };
            let lt = f.doc.text(last.line);
            let ind = indent_of(lt);
            let after = &lt[ind + 1..];
            let sp = after.len() - after.trim_start_matches(' ').len();
            let old_q = match after.trim_start().as_bytes().first() {
                Some(b'\'') => Quote::Single,
                Some(b'"') => Quote::Double,
                _ => Quote::Plain,
            };
            let new = format!(
                "{}-{}{}",
                " ".repeat(ind),
                " ".repeat(sp.max(1)),
                render_text(item, old_q)
            );
            f.doc.insert(last.end, vec![new]);
        }
        Kind::Flow => {
            let (vs, ve) = e.value;
            let items = split_items(&t, vs + 1, ve - 1);
            if items.iter().any(|&(a, z)| norm_item(&t[a..z]) == want) {
                return Ok(text.to_string());
            }
            match items.last() {
                None => f.splice(e.line, (vs + 1, ve - 1), &flow_item(item)),
                Some(&(_, z)) => {
                    let new = format!("{}{}", separator(&t, &items), flow_item(item));
                    f.splice(e.line, (z, z), &new);
                }
            }
        }
        Kind::Scalar(Quote::Plain) => {
            let (vs, ve) = e.value;
            let items = split_items(&t, vs, ve);
            if items.iter().any(|&(a, z)| norm_item(&t[a..z]) == want) {
                return Ok(text.to_string());
            }
            if item.contains(',') || !plain_ok(&format!("x{item}")) {
                return Err(EditError::InvalidText {
                    what: format!("the item `{item}` into `{}`", e.key),
                    why: "it is a comma list, and the item holds a comma, `: ` or ` #`".into(),
                });
            }
            let z = items.last().map_or(ve, |x| x.1);
            let new = format!("{}{}", separator(&t, &items), item);
            f.splice(e.line, (z, z), &new);
        }
        Kind::Empty | Kind::Null => match style {
            Some((ind, marker)) => {
                let (vs, ve) = e.value;
                let cut = if e.kind == Kind::Null {
                    (e.colon_end, ve)
                } else {
                    (vs, vs)
                };
                f.splice(e.line, cut, "");
                let new = format!("{ind}{marker}{}", render_text(item, Quote::Plain));
                f.doc.insert(e.line + 1, vec![new]);
            }
            None => {
                let new = format!("[{}]", flow_item(item));
                if e.kind == Kind::Null {
                    f.splice(e.line, e.value, &new);
                } else {
                    f.splice(e.line, (e.colon_end, e.colon_end), &format!(" {new}"));
                }
            }
        },
        Kind::Scalar(Quote::Link) => {
            let old = &t[e.value.0..e.value.1];
            if norm_item(old) == want {
                return Ok(text.to_string());
            }
            let new = format!("[{}, {}]", double_quote(old), flow_item(item));
            f.splice(e.line, e.value, &new);
        }
        Kind::Scalar(_) => {
            return Err(EditError::NotAList {
                key: e.key.clone(),
                line: e.line + 1,
                why: "it is quoted text".into(),
            })
        }
        _ => {
            return Err(EditError::NotAList {
                key: e.key.clone(),
                line: e.line + 1,
                why: match kind_error(&e) {
                    EditError::Unsupported { why, .. } => why,
                    EditError::BlockScalar { .. } => "it is a `|` or `>` block of text".into(),
                    _ => "it is a nested mapping".into(),
                },
            })
        }
    }
    Ok(f.doc.render())
}

/// Removes an item from a list key (compared case-insensitively, trimmed, quotes ignored).
///
/// Only the item's bytes (and one separator) go. Removing the last item leaves an empty flow
/// list: a block list with one item becomes `key: []` (its comment kept), a flow list `[]`, a
/// comma string `[]`. An item not in the list is [`EditError::ItemNotFound`].
pub fn list_remove(text: &str, keys: &[&str], item: &str) -> Result<String, EditError> {
    let out = list_remove_bytes(text, keys, item)?;
    front_read_back(text, &out, keys)?;
    Ok(out)
}

fn list_remove_bytes(text: &str, keys: &[&str], item: &str) -> Result<String, EditError> {
    let first = keys.first().ok_or(EditError::NoKey)?;
    let want = norm_item(item);
    let mut f = Front::parse(text)?;
    let not_found = |key: &str, line: usize| EditError::ItemNotFound {
        key: key.to_string(),
        item: item.trim().to_string(),
        line: line + 1,
    };
    let Some(e) = find_entry(&f.entries, keys).cloned() else {
        return Err(EditError::KeyNotFound {
            key: first.to_string(),
        });
    };
    let t = f.doc.text(e.line).to_string();
    // `whole` is replaced by `empty` when the last item goes.
    let remove_inline =
        |f: &mut Front, items: &[(usize, usize)], whole: (usize, usize), empty: &str| {
            let Some(n) = items.iter().position(|&(a, z)| norm_item(&t[a..z]) == want) else {
                return Err(not_found(&e.key, e.line));
            };
            if items.len() == 1 {
                f.splice(e.line, whole, empty);
            } else if n == 0 {
                f.splice(e.line, (items[0].0, items[1].0), "");
            } else {
                f.splice(e.line, (items[n - 1].1, items[n].1), "");
            }
            Ok(())
        };
    match e.kind {
        Kind::BlockList => {
            let items = block_items(&f.doc, &e);
            let Some(n) = items.iter().position(|it| norm_item(&it.text) == want) else {
                return Err(not_found(&e.key, e.line));
            };
            let (a, z) = (items[n].line, items[n].end);
            f.doc.lines.drain(a..z);
            if items.len() == 1 {
                f.splice(e.line, (e.colon_end, e.colon_end), " []");
            }
        }
        Kind::Flow => {
            let (vs, ve) = e.value;
            let items = split_items(&t, vs + 1, ve - 1);
            remove_inline(&mut f, &items, (vs + 1, ve - 1), "")?;
        }
        Kind::Scalar(Quote::Plain) => {
            let items = split_items(&t, e.value.0, e.value.1);
            remove_inline(&mut f, &items, e.value, "[]")?;
        }
        Kind::Scalar(Quote::Link) => remove_inline(&mut f, &[e.value], e.value, "[]")?,
        Kind::Empty | Kind::Null => return Err(not_found(&e.key, e.line)),
        _ => {
            return Err(EditError::NotAList {
                key: e.key.clone(),
                line: e.line + 1,
                why: "it holds no list".into(),
            })
        }
    }
    Ok(f.doc.render())
}

/// A minimal new note: a frontmatter block with `frontmatter` in order (text quoted when YAML
/// needs it, by the same rule as [`Scalar::Text`]), a `# name` heading, a blank line and
/// `body` (no blank line or body when `body` is empty). Lines end with `\n`.
pub fn new_note(name: &str, frontmatter: &[(&str, Scalar)], body: &str) -> String {
    let mut out = String::new();
    if !frontmatter.is_empty() {
        out.push_str("---\n");
        for (k, v) in frontmatter {
            let v = match v {
                Scalar::Text(s) => Scalar::Text(s.replace(['\r', '\n'], " ")),
                v => v.clone(),
            };
            let _ = writeln!(out, "{}: {}", k.trim(), render_scalar(&v, Quote::Plain));
        }
        out.push_str("---\n");
    }
    let _ = writeln!(out, "# {}", name.replace(['\r', '\n'], " ").trim());
    let body = body.trim_end_matches(['\r', '\n']);
    if !body.trim().is_empty() {
        out.push('\n');
        out.push_str(body);
        out.push('\n');
    }
    out
}

// ---------------------------------------------------------------------------------------
// Tags: a status or attitude some GMs keep as a tag (`npc/alive`) is changed in the tag.

/// The keys a note's tags are read from.
pub const TAG_KEYS: &[&str] = &["tags", "tag"];

fn is_tag_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '/')
}

/// Replaces, in `s[from..to]`, each whole-tag occurrence of `old` (case-insensitive; a tag
/// is delimited by anything that cannot be in one) by `new`. Returns how many.
fn replace_tag_in(
    s: &mut String,
    from: usize,
    to: usize,
    old: &str,
    new: &str,
    hash: bool,
) -> usize {
    let mut n = 0;
    let mut i = from;
    let mut to = to;
    while i < to {
        let rest = &s[i..to];
        let want = if hash {
            format!("#{old}")
        } else {
            old.to_string()
        };
        let hit = rest.len() >= want.len()
            && rest.is_char_boundary(want.len())
            && rest[..want.len()].eq_ignore_ascii_case(&want);
        let before_ok = || {
            i == from
                || s[..i].chars().next_back().is_some_and(|c| {
                    if hash {
                        c.is_whitespace()
                    } else {
                        !is_tag_char(c)
                    }
                })
        };
        let after_ok =
            || i + want.len() >= to || !s[i + want.len()..].chars().next().is_some_and(is_tag_char);
        if hit && before_ok() && after_ok() {
            let at = i + usize::from(hash);
            s.replace_range(at..at + old.len(), new);
            to = to + new.len() - old.len();
            i = at + new.len();
            n += 1;
        } else {
            i += rest.chars().next().map_or(1, char::len_utf8);
        }
    }
    n
}

/// Renames a tag where the note keeps it: the items of its frontmatter `tags:` list (flow,
/// block or comma string; quotes and a leading `#` kept) and every inline `#tag` in the body
/// outside code. Tags compare case-insensitively; only the tag's bytes change.
pub fn tag_rename(text: &str, old: &str, new: &str) -> Result<String, EditError> {
    let old = old.trim().trim_start_matches('#');
    let new = new.trim().trim_start_matches('#');
    if new.is_empty() || !new.chars().all(is_tag_char) {
        return Err(EditError::InvalidText {
            what: format!("the tag `{new}`"),
            why: "a tag is letters, digits, `_`, `-` and `/`".into(),
        });
    }
    let mut f = Front::parse(text)?;
    let mut n = 0;
    if let Some(e) = find_entry(&f.entries, TAG_KEYS).cloned() {
        let spans: Vec<(usize, usize, usize)> = match e.kind {
            Kind::BlockList => block_items(&f.doc, &e)
                .iter()
                .map(|it| {
                    let t = f.doc.text(it.line);
                    let ind = indent_of(t);
                    let v = ind + 1 + (t[ind + 1..].len() - t[ind + 1..].trim_start().len());
                    (it.line, v, v + value_len(&t[v..]))
                })
                .collect(),
            Kind::Flow | Kind::Scalar(_) => vec![(e.line, e.value.0, e.value.1)],
            _ => Vec::new(),
        };
        for (line, a, z) in spans {
            if let Some(l) = f.doc.lines.get_mut(line) {
                n += replace_tag_in(&mut l.text, a, z, old, new, false);
            }
        }
    }
    let body_from = f.fences.map_or(0, |(_, close)| close + 1);
    let code = in_code(&f.doc);
    for i in body_from..f.doc.lines.len() {
        if code.get(i).copied().unwrap_or(false) {
            continue;
        }
        let l = &mut f.doc.lines[i];
        let len = l.text.len();
        n += replace_tag_in(&mut l.text, 0, len, old, new, true);
    }
    if n == 0 {
        return Err(EditError::TagNotFound {
            tag: old.to_string(),
        });
    }
    Ok(f.doc.render())
}

/// The note's tags as written (frontmatter `tags:` items without a leading `#`, then inline
/// `#tags` of the body outside code), case kept, each once.
pub fn tags_as_written(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let Ok(f) = Front::parse(text) else {
        return out;
    };
    let mut push = |t: &str| {
        let t = t.trim().trim_start_matches('#').trim_end_matches('/');
        if !t.is_empty() && !out.iter().any(|o| o.eq_ignore_ascii_case(t)) {
            out.push(t.to_string());
        }
    };
    if let Some(e) = find_entry(&f.entries, TAG_KEYS) {
        let t = f.doc.text(e.line);
        match e.kind {
            Kind::BlockList => {
                for it in block_items(&f.doc, e) {
                    push(&unquote(&it.text));
                }
            }
            Kind::Flow => {
                for (a, z) in split_items(t, e.value.0 + 1, e.value.1 - 1) {
                    push(&unquote(&t[a..z]));
                }
            }
            Kind::Scalar(_) => {
                for w in unquote(&t[e.value.0..e.value.1]).split([',', ' ']) {
                    push(w);
                }
            }
            _ => {}
        }
    }
    let body_from = f.fences.map_or(0, |(_, close)| close + 1);
    let code = in_code(&f.doc);
    for i in body_from..f.doc.lines.len() {
        if code.get(i).copied().unwrap_or(false) {
            continue;
        }
        let t = f.doc.text(i);
        for (j, _) in t.match_indices('#') {
            if j > 0 && !t[..j].ends_with(char::is_whitespace) {
                continue;
            }
            let tag: String = t[j + 1..].chars().take_while(|&c| is_tag_char(c)).collect();
            if tag.chars().any(|c| !c.is_ascii_digit()) {
                push(&tag);
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// Markdown structure shared by the timeline and the open threads.

/// The level of an ATX heading line (`## Title` is 2), if it is one.
fn heading_level(t: &str) -> Option<usize> {
    let n = t.len() - t.trim_start_matches('#').len();
    ((1..=6).contains(&n) && (t.len() == n || t.as_bytes()[n] == b' ')).then_some(n)
}

/// The heading text without its `#`s.
fn heading_text(t: &str) -> &str {
    t.trim_start_matches('#')
        .trim()
        .trim_end_matches('#')
        .trim_end()
}

/// Which lines are inside fenced code blocks (their `#` lines are not headings).
fn in_code(doc: &Doc) -> Vec<bool> {
    let mut fence: Option<&str> = None;
    doc.lines
        .iter()
        .map(|l| {
            let t = l.text.trim_start();
            let marker = if t.starts_with("```") {
                Some("```")
            } else if t.starts_with("~~~") {
                Some("~~~")
            } else {
                None
            };
            match (fence, marker) {
                (None, Some(m)) => {
                    fence = Some(m);
                    true
                }
                (Some(f), Some(m)) if f == m => {
                    fence = None;
                    true
                }
                (f, _) => f.is_some(),
            }
        })
        .collect()
}

/// A list marker at the start of a line: (marker, number for `1.`/`1)` lists, rest).
fn bullet(t: &str) -> Option<(&str, Option<u64>, &str)> {
    for m in ["- ", "* ", "+ "] {
        if let Some(rest) = t.strip_prefix(m) {
            return Some((&m[..1], None, rest));
        }
    }
    let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 || digits > 9 {
        return None;
    }
    let rest = &t[digits..];
    let delim = rest.chars().next()?;
    if (delim == '.' || delim == ')') && rest[1..].starts_with(' ') {
        let n = t[..digits].parse().ok()?;
        return Some((&rest[..1], Some(n), &rest[2..]));
    }
    None
}

fn lines_list(lines: &[usize]) -> String {
    lines
        .iter()
        .map(|l| (l + 1).to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Blank lines directly above line `i`.
fn blanks_before(doc: &Doc, i: usize) -> usize {
    (0..i).rev().take_while(|&j| doc.is_blank(j)).count()
}

// ---------------------------------------------------------------------------------------
// Timeline.

/// The day of a `Day N` heading line of any level (any suffix, `day` in any case), by the
/// rule the reader uses ([`period::day`]).
fn day_of(t: &str) -> Option<(i64, &str)> {
    heading_level(t)?;
    period::day(heading_text(t))
}

/// Where [`append_event`] puts an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventPlace {
    /// Under the `Day N` heading of that day (`new`: a heading it adds).
    Day {
        /// The day.
        day: i64,
        /// The heading is added.
        new: bool,
    },
    /// Under the latest dated section of a timeline kept in the vault's own calendar
    /// (`## Year 3`, `## 2024-03-12`, `### 12 Mirtul 1492`): its heading text.
    Dated(String),
}

impl EventPlace {
    /// Whether the timeline is kept in `Day N` sections.
    pub fn is_day(&self) -> bool {
        matches!(self, EventPlace::Day { .. })
    }

    /// How the place is named to the GM: `Day 7`, `Year 3`.
    pub fn label(&self) -> String {
        match self {
            EventPlace::Day { day, .. } => format!("Day {day}"),
            EventPlace::Dated(h) => h.clone(),
        }
    }
}

/// A timeline's headings, outside code: (line, level, period).
struct Periods {
    headings: Vec<(usize, usize, Period)>,
}

impl Periods {
    fn of(doc: &Doc, code: &[bool]) -> Periods {
        Periods {
            headings: (0..doc.lines.len())
                .filter(|&i| !code[i])
                .filter_map(|i| {
                    let t = doc.text(i);
                    heading_level(t).map(|l| (i, l, period::of_heading(heading_text(t))))
                })
                .collect(),
        }
    }

    /// The timeline is kept in `Day N` sections (or has no dated section at all).
    fn by_day(&self) -> bool {
        self.headings.iter().any(|h| matches!(h.2, Period::Day(_)))
            || !self.headings.iter().any(|h| h.2 == Period::Dated)
    }

    /// The last dated heading, for a timeline kept in the vault's own calendar.
    fn last_dated(&self) -> Option<(usize, usize)> {
        self.headings
            .iter()
            .rev()
            .find(|h| h.2 == Period::Dated)
            .map(|h| (h.0, h.1))
    }

    /// The end (exclusive) of the lines under heading line `h`: the next heading of any
    /// level, since the reader takes a heading under a period for a moment of its own
    /// (`### The Ambush` under `## Year 3`) or no moment (`### Notes`).
    fn section_end(&self, h: usize, n: usize) -> usize {
        self.headings.iter().find(|x| x.0 > h).map_or(n, |x| x.0)
    }

    /// Where a new section goes: before the trailing headings over what is not an event
    /// (`## Open Mysteries` after the last moment), else at the end.
    fn new_section_at(&self, n: usize) -> usize {
        let last_moment = self
            .headings
            .iter()
            .rposition(|h| h.2 != Period::Aside)
            .map(|k| self.headings[k].0);
        self.headings
            .iter()
            .find(|h| h.2 == Period::Aside && last_moment.is_none_or(|m| h.0 > m))
            .map_or(n, |h| h.0)
    }
}

/// The lines that add `event` to the section under heading line `from` (lines up to `end`)
/// and where they go: a bullet after its last bullet (and that bullet's indented
/// continuation lines), with that bullet's marker (continuing a numbered count); in a
/// section of prose with no list, a paragraph of its own after the last one (the reader
/// takes a section's paragraphs as its events only while it has no list); else a bullet
/// with `fallback` after the section's last line (set off by a blank line after a table).
fn append_lines(
    doc: &Doc,
    code: &[bool],
    (from, end): (usize, usize),
    fallback: Option<String>,
    event: &str,
) -> (usize, Vec<String>) {
    let last_bullet = (from + 1..end)
        .rev()
        .find(|&i| !code[i] && bullet(doc.text(i)).is_some());
    if let Some(b) = last_bullet {
        let at = (b + 1..end)
            .take_while(|&i| {
                let t = doc.text(i);
                !t.trim().is_empty() && t.starts_with([' ', '\t'])
            })
            .last()
            .map_or(b + 1, |i| i + 1);
        let marker = match bullet(doc.text(b)) {
            Some((m, Some(k), _)) => format!("{}{m}", k + 1),
            Some((m, None, _)) => m.to_string(),
            None => "-".to_string(),
        };
        return (at, vec![format!("{marker} {event}")]);
    }
    let last = (from..end)
        .rev()
        .find(|&i| !doc.is_blank(i))
        .unwrap_or(from);
    let body: Vec<&str> = (from + 1..end)
        .filter(|&i| !doc.is_blank(i))
        .map(|i| doc.text(i).trim_start())
        .collect();
    let table = body.iter().any(|t| t.starts_with('|'));
    let marker = fallback.unwrap_or_else(|| "-".into());
    if !body.is_empty() && !table && !(from + 1..end).any(|i| code[i]) {
        (last + 1, vec![String::new(), event.to_string()])
    } else if last > from && doc.text(last).trim_start().starts_with('|') {
        (last + 1, vec![String::new(), format!("{marker} {event}")])
    } else {
        (last + 1, vec![format!("{marker} {event}")])
    }
}

/// Where [`append_event`] would put an event for `day` in this timeline.
pub fn event_place(text: &str, day: i64) -> Result<EventPlace, EditError> {
    let doc = Doc::parse(text);
    let code = in_code(&doc);
    let periods = Periods::of(&doc, &code);
    if !periods.by_day() {
        if let Some((h, _)) = periods.last_dated() {
            return Ok(EventPlace::Dated(heading_text(doc.text(h)).to_string()));
        }
    }
    let hits: Vec<usize> = periods
        .headings
        .iter()
        .filter(|h| h.2 == Period::Day(day))
        .map(|h| h.0)
        .collect();
    match hits.as_slice() {
        [] => Ok(EventPlace::Day { day, new: true }),
        [_] => Ok(EventPlace::Day { day, new: false }),
        many => Err(EditError::AmbiguousDay {
            day,
            count: many.len(),
            lines: lines_list(many),
        }),
    }
}

/// Appends an event to a timeline, under the period the reader reads it from
/// ([`crate::vault::period`]).
///
/// A timeline kept in `Day N` sections (or with no dated section yet) gets it under its
/// `Day N` heading. The heading may carry a suffix (`## Day 6 — evening`, `## day 6 - dusk`).
/// The event goes after the last bullet of that day (and its indented continuation lines),
/// with that day's bullet marker (`-`, `*`, `+`, or a numbered `1.` continuing the count),
/// else the file's, else `-`. When the day has no heading, a new `## Day N` section is added
/// after the last moment — before trailing sections that are no moment (`## Open
/// Mysteries`), else at the end — (with ` — time` when `time` is given and the file's other
/// day headings carry suffixes), set off by blank lines as the file's headings are.
///
/// A timeline kept in the vault's own calendar (`## Year 3`, `## 2024-03-12`, `### 12
/// Mirtul 1492`, `## 1500-Ches-12`, and no `Day N` heading) gets it after the last bullet
/// of its last dated section, whatever follows that section: vaultdm does not count such a
/// calendar, so it never starts a new period there. The file keeps a final newline only if
/// it had one.
pub fn append_event(
    text: &str,
    day: i64,
    time: Option<&str>,
    event: &str,
) -> Result<String, EditError> {
    no_newline("a timeline event", event)?;
    if let Some(t) = time {
        no_newline("a time of day", t)?;
    }
    let event = event.trim();
    if event.is_empty() {
        return Err(EditError::InvalidText {
            what: "a timeline event".into(),
            why: "the event is empty".into(),
        });
    }
    let place = event_place(text, day)?;
    let mut doc = Doc::parse(text);
    let code = in_code(&doc);
    let n = doc.lines.len();
    let periods = Periods::of(&doc, &code);
    let file_marker = (0..n)
        .filter(|&i| !code[i])
        .find_map(|i| bullet(doc.text(i)))
        .map(|(m, num, _)| {
            if num.is_some() {
                format!("1{m}")
            } else {
                m.to_string()
            }
        });
    let section = |h: usize| {
        let end = periods.section_end(h, n);
        append_lines(&doc, &code, (h, end), file_marker.clone(), event)
    };
    match place {
        EventPlace::Dated(_) => {
            let (h, _) = periods.last_dated().unwrap_or((0, 2));
            let (at, lines) = section(h);
            doc.insert(at, lines);
        }
        EventPlace::Day { new: false, .. } => {
            let h = periods
                .headings
                .iter()
                .find(|h| h.2 == Period::Day(day))
                .map_or(0, |h| h.0);
            let (at, lines) = section(h);
            doc.insert(at, lines);
        }
        EventPlace::Day { new: true, .. } => {
            let days: Vec<(usize, bool)> = (0..n)
                .filter(|&i| !code[i])
                .filter_map(|i| day_of(doc.text(i)).map(|(_, s)| (i, !s.trim().is_empty())))
                .collect();
            let suffixed = days.iter().find(|d| d.1);
            let level = days
                .first()
                .and_then(|d| heading_level(doc.text(d.0)))
                .unwrap_or(2);
            let hashes = "#".repeat(level);
            let title = match (time.map(str::trim).filter(|t| !t.is_empty()), suffixed) {
                (Some(t), Some(&(i, _))) => {
                    let (_, suffix) = day_of(doc.text(i)).unwrap_or((0, " — "));
                    let sep_len = suffix.len()
                        - suffix
                            .trim_start_matches(|c: char| !c.is_alphanumeric())
                            .len();
                    let sep = &suffix[..sep_len];
                    let sep = if sep.trim().is_empty() { " — " } else { sep };
                    format!("{hashes} Day {day}{sep}{t}")
                }
                _ => format!("{hashes} Day {day}"),
            };
            // As many blank lines as the file puts above a day heading that follows text.
            let gap = days
                .iter()
                .map(|d| d.0)
                .find(|&i| i > blanks_before(&doc, i))
                .map_or(1, |i| blanks_before(&doc, i));
            let gap = if doc.lines.is_empty() { 0 } else { gap };
            let marker = file_marker.unwrap_or_else(|| "-".into());
            let at = periods.new_section_at(n);
            if at < n {
                // Before a trailing section: the new one, then the gap the heading had.
                let above = blanks_before(&doc, at);
                let mut new: Vec<String> = vec![String::new(); gap.saturating_sub(above)];
                new.push(title);
                new.push(format!("{marker} {event}"));
                new.extend(vec![String::new(); above]);
                doc.insert(at, new);
            } else {
                let trailing = (0..n).rev().take_while(|&j| doc.is_blank(j)).count();
                let trailing = if trailing == n { n } else { trailing };
                let mut new: Vec<String> = vec![String::new(); gap.saturating_sub(trailing)];
                new.push(title);
                new.push(format!("{marker} {event}"));
                doc.insert(n, new);
            }
        }
    }
    Ok(doc.render())
}

// ---------------------------------------------------------------------------------------
// The in-game clock: canon/temporal-index.json.

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// The end of the JSON value starting at `i` (the text is known to be valid JSON).
fn json_value_end(b: &[u8], i: usize) -> usize {
    let mut j = i;
    let mut depth = 0usize;
    while j < b.len() {
        match b[j] {
            b'"' => {
                j += 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                j += 1;
                if depth == 0 {
                    return j.min(b.len());
                }
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                if depth == 0 {
                    return j;
                }
                depth -= 1;
                if depth == 0 {
                    return j + 1;
                }
            }
            b',' | b' ' | b'\t' | b'\n' | b'\r' if depth == 0 => return j,
            _ => {}
        }
        j += 1;
    }
    j
}

/// One member of the top-level object: key text, key start, key end, value span.
struct Member {
    key: String,
    key_start: usize,
    key_end: usize,
    value: (usize, usize),
}

/// Sets `current_day` and/or `current_time` in `canon/temporal-index.json`.
///
/// Only the bytes of those values change; the file's spacing, indentation, key order and
/// other keys stay. A missing key is added before the closing brace, spaced like the file's
/// other members. Empty (or blank) text becomes
/// `{"current_day": N, "current_time": "..."}` and a newline. `None` leaves a value alone.
pub fn set_temporal(text: &str, day: Option<i64>, time: Option<&str>) -> Result<String, EditError> {
    let (bom, body) = match text.strip_prefix(BOM) {
        Some(r) => (BOM, r),
        None => ("", text),
    };
    let time_json = time.map(|t| serde_json::Value::String(t.to_string()).to_string());
    let wanted: Vec<(&str, String)> = [
        ("current_day", day.map(|d| d.to_string())),
        ("current_time", time_json),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.map(|v| (k, v)))
    .collect();
    if body.trim().is_empty() {
        let members: Vec<String> = wanted
            .iter()
            .map(|(k, v)| format!("\"{k}\": {v}"))
            .collect();
        return Ok(format!("{bom}{{{}}}\n", members.join(", ")));
    }
    match serde_json::from_str::<serde_json::Value>(body) {
        Err(e) => {
            // serde_json ends its message with the position, which the error gives already.
            let full = e.to_string();
            let at = format!(" at line {} column {}", e.line(), e.column());
            return Err(EditError::InvalidJson {
                line: e.line(),
                column: e.column(),
                message: full.strip_suffix(&at).unwrap_or(&full).to_string(),
            });
        }
        Ok(serde_json::Value::Object(_)) => {}
        Ok(_) => return Err(EditError::JsonNotAnObject),
    }
    let b = body.as_bytes();
    let open = skip_ws(b, 0);
    let mut members = Vec::new();
    let mut i = skip_ws(b, open + 1);
    while i < b.len() && b[i] == b'"' {
        let key_end = json_value_end(b, i);
        let key: String = serde_json::from_str(&body[i..key_end]).unwrap_or_default();
        let colon = skip_ws(b, key_end);
        let vs = skip_ws(b, colon + 1);
        let ve = json_value_end(b, vs);
        members.push(Member {
            key,
            key_start: i,
            key_end,
            value: (vs, ve),
        });
        i = skip_ws(b, ve);
        if i < b.len() && b[i] == b',' {
            i = skip_ws(b, i + 1);
        }
    }
    let close = i; // the closing brace
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    let mut missing = Vec::new();
    for (k, v) in &wanted {
        let hits: Vec<&Member> = members.iter().filter(|m| m.key == *k).collect();
        if hits.is_empty() {
            missing.push((*k, v.clone()));
        }
        for m in hits {
            edits.push((m.value.0, m.value.1, v.clone()));
        }
    }
    if !missing.is_empty() {
        let colon = members
            .first()
            .map_or(": ", |m| &body[m.key_end..m.value.0]);
        let new: Vec<String> = missing
            .iter()
            .map(|(k, v)| format!("\"{k}\"{colon}{v}"))
            .collect();
        let insert = match members.as_slice() {
            [] => (open + 1, close, new.join(", ")),
            [.., a, z] => {
                let sep = &body[a.value.1..z.key_start];
                (z.value.1, z.value.1, format!("{sep}{}", new.join(sep)))
            }
            [m] => {
                let ws = &body[open + 1..m.key_start];
                let sep = if ws.contains('\n') {
                    format!(",{ws}")
                } else {
                    ", ".to_string()
                };
                (m.value.1, m.value.1, format!("{sep}{}", new.join(&sep)))
            }
        };
        edits.push(insert);
    }
    edits.sort_by_key(|e| std::cmp::Reverse(e.0));
    let mut out = body.to_string();
    for (a, z, v) in edits {
        out.replace_range(a..z, &v);
    }
    json_read_back(body, &out, day, time)?;
    Ok(format!("{bom}{out}"))
}

/// The reader (serde_json, as canon reads the temporal index) judges the edit made by bytes:
/// the day and time read as set, and every other member as before.
fn json_read_back(
    before: &str,
    after: &str,
    day: Option<i64>,
    time: Option<&str>,
) -> Result<(), EditError> {
    let bad = |why: &str| EditError::InvalidText {
        what: "the temporal index".into(),
        why: format!("{why}; nothing was written (edit it by hand)"),
    };
    let read = |t: &str| serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(t);
    let (Ok(mut was), Ok(mut now)) = (read(before), read(after)) else {
        return Err(bad("the edit would not read back as a JSON object"));
    };
    if day.is_some_and(|d| now.get("current_day").and_then(serde_json::Value::as_i64) != Some(d))
        || time
            .is_some_and(|t| now.get("current_time").and_then(serde_json::Value::as_str) != Some(t))
    {
        return Err(bad("the day or time would not read back as set"));
    }
    for k in ["current_day", "current_time"] {
        was.remove(k);
        now.remove(k);
    }
    if was != now {
        return Err(bad("the edit would change another member"));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Open threads: canon/open-threads.md.

/// A priority section (`## High`) as the reader reads it: heading line and end (exclusive),
/// in lines of the [`Doc`].
#[derive(Debug, Clone)]
struct Section {
    name: String,
    /// Its priority rank ([`threads::priority_rank`]).
    rank: usize,
    heading: usize,
    end: usize,
}

/// One thread as the reader reads it: its lines `[start, end)` in the [`Doc`] (trailing
/// blank lines left out).
#[derive(Debug, Clone)]
struct Thread {
    start: usize,
    end: usize,
    /// `### Title` style (else a list item).
    heading: bool,
    /// The title as the reader reports it.
    title: String,
    /// Index of its section.
    section: Option<usize>,
    /// The line of its Next line, if it has one.
    next: Option<usize>,
    /// Whether a list item is a ticked or open checkbox.
    checkbox: Option<bool>,
}

/// Reads the threads of `doc` as canon reads them ([`threads::read_threads`] over the blocks
/// [`super::note::read_body`] gives), in lines of the `Doc`.
fn parse_threads(doc: &Doc) -> (Vec<Section>, Vec<Thread>) {
    let text = doc.clone().render();
    let list = threads::read_threads(&super::note::read_body(&text).body.blocks);
    let n = doc.lines.len();
    // File lines are 1-based; a `Doc` line is the file line less one.
    let at = |line: usize| line.saturating_sub(1).min(n);
    let sections: Vec<Section> = list
        .sections
        .iter()
        .map(|s| {
            let end = list
                .headings
                .iter()
                .find(|&&(l, level)| {
                    l > s.line && (level <= 2 || list.sections.iter().any(|x| x.line == l))
                })
                .map_or(n, |&(l, _)| at(l));
            Section {
                name: s.name.clone(),
                rank: s.rank,
                heading: at(s.line),
                end,
            }
        })
        .collect();
    let threads = list
        .threads
        .into_iter()
        .map(|t| {
            let start = at(t.line);
            let stop = t.until.map_or(n, at);
            let end = (start + 1..stop)
                .rev()
                .find(|&j| !doc.is_blank(j))
                .map_or(start + 1, |j| j + 1);
            Thread {
                start,
                end,
                heading: t.level > 0,
                title: t.title,
                section: t.section,
                next: t.next.map(|(_, l)| at(l)),
                checkbox: t.checkbox,
            }
        })
        .collect();
    (sections, threads)
}

/// A note whose lines the reader counts differently (a lone `\r` ends a line for it): the
/// lines it reports cannot be edited by line.
fn check_line_ends(text: &str) -> Result<(), EditError> {
    let lone_cr = text
        .as_bytes()
        .iter()
        .enumerate()
        .any(|(i, &c)| c == b'\r' && text.as_bytes().get(i + 1) != Some(&b'\n'));
    if lone_cr {
        return Err(EditError::InvalidText {
            what: "the open threads".into(),
            why:
                "the note ends lines with a lone carriage return; save it with LF or CRLF line ends"
                    .into(),
        });
    }
    Ok(())
}

fn find_thread<'t>(threads: &'t [Thread], title: &str) -> Result<&'t Thread, EditError> {
    let want = threads::title_key(title);
    let hits: Vec<&Thread> = threads
        .iter()
        .filter(|t| threads::title_key(&t.title) == want)
        .collect();
    match hits.as_slice() {
        [] => Err(EditError::ThreadNotFound {
            title: title.trim().to_string(),
        }),
        [t] => Ok(t),
        many => Err(EditError::AmbiguousThread {
            title: title.trim().to_string(),
            count: many.len(),
            lines: lines_list(&many.iter().map(|t| t.start).collect::<Vec<_>>()),
        }),
    }
}

/// What the reader must find after a thread edit.
struct Expect<'a> {
    title: &'a str,
    /// The priority rank of its section (for a priority word).
    rank: Option<usize>,
    /// Its next step.
    next: Option<&'a str>,
    /// How many threads the note then holds.
    count: usize,
}

/// Reads the edited text back as canon will and checks it finds what the edit meant; an
/// edit the reader would read otherwise is not written.
fn read_back(after: &str, want: Expect<'_>) -> Result<String, EditError> {
    let doc = Doc::parse(after);
    let text = doc.clone().render();
    let list = threads::read_threads(&super::note::read_body(&text).body.blocks);
    let key = threads::title_key(want.title);
    let found: Vec<&threads::ListedThread> = list
        .threads
        .iter()
        .filter(|t| threads::title_key(&t.title) == key)
        .collect();
    let why = if found.len() != 1 {
        Some(format!("it would find {} threads titled so", found.len()))
    } else if list.threads.len() != want.count {
        Some(format!(
            "it would read the other threads differently ({} threads instead of {}; a list item without a bold title after a `### Heading` thread is read as that thread's text)",
            list.threads.len(),
            want.count
        ))
    } else if want.rank.is_some() && found[0].rank(&list) != want.rank {
        Some("it would read the thread in another section".to_string())
    } else if want.next.is_some() && found[0].next.as_ref().map(|(n, _)| n.as_str()) != want.next {
        Some("it would read another next step".to_string())
    } else {
        None
    };
    match why {
        Some(why) => Err(EditError::NotReadBack {
            title: want.title.trim().to_string(),
            why,
        }),
        None => Ok(after.to_string()),
    }
}

/// How the file spaces its threads and sections.
struct Spacing {
    /// Blank lines between two heading-style threads.
    between_headings: usize,
    /// Blank lines between two bullet-style threads.
    between_bullets: usize,
    /// Blank lines between a `## ` heading and its first thread.
    after_heading: usize,
    /// Blank lines above a `## ` heading that follows text.
    before_section: usize,
}

impl Spacing {
    fn of(doc: &Doc, sections: &[Section], threads: &[Thread]) -> Spacing {
        let between = |heading: bool, default: usize| {
            threads
                .windows(2)
                .find(|w| {
                    w[0].heading == heading
                        && w[1].heading == heading
                        && w[0].section == w[1].section
                })
                .map_or(default, |w| w[1].start - w[0].end)
        };
        let after_heading = sections
            .iter()
            .enumerate()
            .find_map(|(k, s)| {
                threads
                    .iter()
                    .find(|t| t.section == Some(k))
                    .map(|t| t.start - s.heading - 1)
            })
            .unwrap_or(0);
        let before_section = sections
            .iter()
            .map(|s| s.heading)
            .find(|&h| h > blanks_before(doc, h))
            .map_or(1, |h| blanks_before(doc, h));
        Spacing {
            between_headings: between(true, 1),
            between_bullets: between(false, 0),
            after_heading,
            before_section,
        }
    }

    fn between(&self, heading: bool) -> usize {
        if heading {
            self.between_headings
        } else {
            self.between_bullets
        }
    }
}

/// The section a thread goes to: the one named `name`, else the first one of the same
/// priority (`## Completed` for `Resolved`).
fn find_section<'s>(sections: &'s [Section], name: &str) -> Option<(usize, &'s Section)> {
    let exact = sections
        .iter()
        .enumerate()
        .find(|(_, s)| s.name.eq_ignore_ascii_case(name.trim()));
    exact.or_else(|| {
        let r = rank(name)?;
        sections.iter().enumerate().find(|(_, s)| s.rank == r)
    })
}

/// The priority rank of a section name (as the reader ranks it).
fn rank(name: &str) -> Option<usize> {
    threads::priority_rank(name)
}

/// Puts `block` at the end of section `name` (created as the conventional order, or the end
/// of the file, asks when missing).
fn place_thread(doc: &mut Doc, name: &str, block: Vec<Line>, heading: bool, ordered: bool) {
    let (sections, threads) = parse_threads(doc);
    let sp = Spacing::of(doc, &sections, &threads);
    let blank = |doc: &Doc| doc.line("");
    if let Some((k, s)) = find_section(&sections, name) {
        // A list item without a bold title under a heading-style thread is read as that
        // thread's text: it goes before the section's first heading-style thread.
        let plain_item = !heading
            && block.first().is_some_and(|l| {
                let rest = bullet(l.text.trim_start()).map_or("", |b| b.2);
                let rest = ["[ ] ", "[x] ", "[X] "]
                    .iter()
                    .find_map(|c| rest.strip_prefix(c))
                    .unwrap_or(rest);
                !rest.starts_with("**") && !rest.starts_with("__")
            });
        let stop = threads
            .iter()
            .find(|t| plain_item && t.heading && t.section == Some(k))
            .map_or(s.end, |t| t.start);
        let last = (s.heading..stop)
            .rev()
            .find(|&i| !doc.is_blank(i))
            .unwrap_or(s.heading);
        // Next to a heading-style thread, leave the gap heading-style threads have.
        let last_heading = threads
            .iter()
            .rev()
            .find(|t| t.section == Some(k) && t.start <= last)
            .is_some_and(|t| t.heading);
        let gap = if last == s.heading {
            sp.after_heading
        } else {
            sp.between(heading || last_heading)
        };
        let mut new: Vec<Line> = (0..gap).map(|_| blank(doc)).collect();
        new.extend(block);
        doc.lines.splice(last + 1..last + 1, new);
        return;
    }
    // A conventional section is written as the template writes it (`## Resolved`).
    let canonical = match rank(name) {
        Some(r) => threads::PRIORITY_NAMES[r].to_string(),
        None => name.trim().to_string(),
    };
    let title = doc.line(format!("## {canonical}"));
    let after: Vec<Line> = (0..sp.after_heading).map(|_| blank(doc)).collect();
    let before_next = ordered.then(|| rank(name)).flatten().and_then(|r| {
        sections
            .iter()
            .find(|s| rank(&s.name).is_some_and(|x| x > r))
    });
    let mut new = Vec::new();
    match before_next {
        Some(s) => {
            new.push(title);
            new.extend(after);
            new.extend(block);
            new.extend((0..sp.before_section).map(|_| blank(doc)));
            let at = s.heading;
            doc.lines.splice(at..at, new);
        }
        None => {
            let n = doc.lines.len();
            let trailing = (0..n).rev().take_while(|&j| doc.is_blank(j)).count();
            let gap = if n == 0 { 0 } else { sp.before_section };
            new.extend((0..gap.saturating_sub(trailing)).map(|_| blank(doc)));
            new.push(title);
            new.extend(after);
            new.extend(block);
            doc.lines.extend(new);
        }
    }
}

/// Moves a thread of `open-threads.md` to the end of the `## to` section (`"Resolved"`,
/// `"High"`…), creating the section at the end of the file if it is missing.
///
/// The thread's block (heading style: from `### Title` to the next heading; bullet style:
/// the bullet and its indented continuation lines) keeps its bytes; only its place changes,
/// with the blank lines around it arranged as the file spaces its threads. The title is
/// matched case-insensitively, ignoring `**`, wikilink brackets (the display text counts)
/// and surrounding spaces. A thread already in `to` is left where it is.
pub fn thread_move(text: &str, title: &str, to: &str) -> Result<String, EditError> {
    no_newline("a section name", to)?;
    if to.trim().is_empty() {
        return Err(EditError::InvalidText {
            what: "a section name".into(),
            why: "it is empty".into(),
        });
    }
    priority_section(to)?;
    check_line_ends(text)?;
    let mut doc = Doc::parse(text);
    let (sections, threads) = parse_threads(&doc);
    let t = match find_thread(&threads, title) {
        Ok(t) => t.clone(),
        // A checklist under a heading that is no priority (a home note's `## Objectives`):
        // its items are its storylines, ticked when done.
        Err(EditError::ThreadNotFound { .. }) => return checklist_tick(text, title, to),
        Err(e) => return Err(e),
    };
    let here = t.section.and_then(|k| sections.get(k));
    let target = find_section(&sections, to).map(|(_, s)| s.heading);
    let resolved = rank(to) == Some(4);
    let in_target = here.is_some_and(|s| Some(s.heading) == target);
    // A ticked box is done wherever it sits: its box may be all there is to change.
    let box_wrong = t.checkbox == Some(!resolved);
    let done_here = resolved && here.is_none() && t.checkbox == Some(true);
    if (in_target || done_here) && !box_wrong {
        return Ok(text.to_string());
    }
    if box_wrong && (in_target || here.is_none()) {
        // In its section already, or in a checklist under no priority heading (a quest
        // log): the box is ticked or cleared where it is.
        tick(&mut doc.lines[t.start].text, resolved);
        return read_back(
            &doc.render(),
            Expect {
                title: &t.title,
                rank: if in_target || resolved {
                    rank(to)
                } else {
                    None
                },
                next: None,
                count: threads.len(),
            },
        );
    }
    let n = doc.lines.len();
    let (a, b) = (t.start, t.end);
    let f = (b..n).take_while(|&j| doc.is_blank(j)).count();
    let p = blanks_before(&doc, a);
    let next_thread = threads
        .iter()
        .any(|x| x.start == b + f && x.section == t.section);
    let prev_thread = threads
        .iter()
        .any(|x| x.end + p == a && x.section == t.section && x.start != a);
    let cut = if next_thread {
        a..b + f
    } else if prev_thread || f >= p {
        a - p..b
    } else {
        a..b + f
    };
    let removed: Vec<Line> = doc.lines.drain(cut.clone()).collect();
    let mut block: Vec<Line> = removed[a - cut.start..b - cut.start].to_vec();
    // A checklist item is ticked as it is resolved, and cleared as it is opened again.
    if let (Some(ticked), Some(first)) = (t.checkbox, block.first_mut()) {
        if ticked != resolved {
            tick(&mut first.text, resolved);
        }
    }
    place_thread(&mut doc, to, block, t.heading, false);
    read_back(
        &doc.render(),
        Expect {
            title: &t.title,
            rank: rank(to),
            next: None,
            count: threads.len(),
        },
    )
}

/// Ticks (`to` resolved) or clears a top-level item of the note's checklist, found by its
/// title as [`threads::read_checklist`] reads it; read back before it is written.
fn checklist_tick(text: &str, title: &str, to: &str) -> Result<String, EditError> {
    let not_found = || EditError::ThreadNotFound {
        title: title.trim().to_string(),
    };
    let key = threads::title_key(title);
    let find = |text: &str| -> Vec<threads::CheckItem> {
        let body = super::note::read_body(text).body;
        let blocks: Vec<&markdown::Block> = body.blocks.iter().collect();
        threads::read_checklist(&blocks, 1)
            .unwrap_or_default()
            .into_iter()
            .filter(|c| c.top && threads::title_key(&c.title) == key)
            .collect()
    };
    let hits = find(text);
    let item = match hits.as_slice() {
        [] => return Err(not_found()),
        [c] => c,
        many => {
            return Err(EditError::AmbiguousThread {
                title: title.trim().to_string(),
                count: many.len(),
                lines: many
                    .iter()
                    .map(|c| c.line.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
        }
    };
    let resolved = rank(to) == Some(4);
    if item.done == resolved {
        return Ok(text.to_string());
    }
    let mut doc = Doc::parse(text);
    let Some(line) = doc.lines.get_mut(item.line - 1) else {
        return Err(not_found());
    };
    tick(&mut line.text, resolved);
    let after = doc.render();
    match find(&after).as_slice() {
        [c] if c.done == resolved => Ok(after),
        _ => Err(EditError::NotReadBack {
            title: item.title.clone(),
            why: "its box would not read as changed".into(),
        }),
    }
}

/// A section threads can be put in: one whose name is a priority word, so the reader reads
/// the threads under it in that priority (any other `## Heading` is a thread to it).
fn priority_section(name: &str) -> Result<(), EditError> {
    match rank(name) {
        Some(_) => Ok(()),
        None => Err(EditError::InvalidText {
            what: format!("a thread into `{}`", name.trim()),
            why: "it is no priority (urgent, high, medium, low or resolved), and canon reads any other heading as a thread".into(),
        }),
    }
}

/// Ticks (or clears) the box of a checklist item's line (`- [ ] A` <-> `- [x] A`).
fn tick(line: &mut String, on: bool) {
    let Some((_, _, rest)) = bullet(line.trim_start()) else {
        return;
    };
    let at = line.len() - rest.len();
    let r = rest.trim_start();
    let at = at + (rest.len() - r.len());
    if r.starts_with("[ ]") || r.starts_with("[x]") || r.starts_with("[X]") {
        line.replace_range(at + 1..at + 2, if on { "x" } else { " " });
    }
}

/// The prefix (indentation and arrow) the file writes before `Next:` in threads of a style.
fn next_prefix(doc: &Doc, threads: &[Thread], heading: bool) -> Option<String> {
    threads
        .iter()
        .filter(|t| t.heading == heading)
        .filter_map(|t| t.next.filter(|&i| i > t.start))
        .find_map(|i| {
            let s = doc.text(i);
            threads::next_step(s)?;
            let k = s.to_ascii_lowercase().find("next")?;
            Some(s[..k].to_string())
        })
}

fn default_prefix(doc: &Doc, t: &Thread) -> String {
    if t.heading {
        return "→ ".into();
    }
    let indent = (t.start + 1..t.end)
        .map(|i| doc.text(i))
        .find(|s| !s.trim().is_empty())
        .map_or("  ".to_string(), |s| {
            s[..s.len() - s.trim_start().len()].to_string()
        });
    format!("{indent}→ ")
}

/// Sets the text after `Next:` in a thread's Next line (the one the reader reads), keeping
/// the arrow and prefix; adds a Next line at the end of the thread, written as the file's
/// other Next lines are, when the thread has none.
pub fn thread_set_next(text: &str, title: &str, next: &str) -> Result<String, EditError> {
    no_newline("a Next step", next)?;
    check_line_ends(text)?;
    let next = next.trim();
    let mut doc = Doc::parse(text);
    let (_, threads) = parse_threads(&doc);
    let t = find_thread(&threads, title)?.clone();
    if t.checkbox.is_some() && t.section.is_none() {
        return Err(EditError::InvalidText {
            what: format!("a next step for `{}`", t.title),
            why: format!(
                "it is an item of a checklist (line {}), whose next step is its first open sub-item; add one there (`  - [ ] …`)",
                t.start + 1
            ),
        });
    }
    match t.next {
        Some(i) => {
            let line = &mut doc.lines[i].text;
            let Some(r) = threads::next_step(line) else {
                return Err(EditError::NotReadBack {
                    title: t.title.clone(),
                    why: format!(
                        "its next step on line {} is not on a line of its own",
                        i + 1
                    ),
                });
            };
            if r.is_empty() {
                line.truncate(r.start);
                if !line.ends_with([' ', '\t']) {
                    line.push(' ');
                }
                line.push_str(next);
            } else {
                line.replace_range(r, next);
            }
        }
        None => {
            let prefix =
                next_prefix(&doc, &threads, t.heading).unwrap_or_else(|| default_prefix(&doc, &t));
            let line = format!("{prefix}Next: {next}");
            doc.insert(t.end, vec![line]);
        }
    }
    read_back(
        &doc.render(),
        Expect {
            title: &t.title,
            rank: None,
            next: (!next.is_empty()).then_some(next),
            count: threads.len(),
        },
    )
}

/// Adds a new thread at the end of the `## priority` section, in the style that section uses
/// (else the file's first thread's, else heading style), with a Next line when `next` is
/// given. A missing section is created in the conventional order (Urgent, High, Medium, Low,
/// Resolved) when the file has later ones, else at the end. A title already in use is
/// [`EditError::ThreadExists`].
pub fn thread_add(
    text: &str,
    priority: &str,
    title: &str,
    summary: &str,
    next: Option<&str>,
) -> Result<String, EditError> {
    no_newline("a section name", priority)?;
    no_newline("a thread title", title)?;
    no_newline("a thread summary", summary)?;
    if let Some(n) = next {
        no_newline("a Next step", n)?;
    }
    let (title, summary) = (title.trim(), summary.trim());
    if title.is_empty() || priority.trim().is_empty() {
        return Err(EditError::InvalidText {
            what: "a thread".into(),
            why: "its title and priority must not be empty".into(),
        });
    }
    priority_section(priority)?;
    check_line_ends(text)?;
    let mut doc = Doc::parse(text);
    let (sections, threads) = parse_threads(&doc);
    let key = threads::title_key(title);
    if let Some(t) = threads.iter().find(|t| threads::title_key(&t.title) == key) {
        return Err(EditError::ThreadExists {
            title: title.to_string(),
            line: t.start + 1,
        });
    }
    let sec = find_section(&sections, priority).map(|(k, _)| k);
    let model = threads
        .iter()
        .find(|t| sec.is_some() && t.section == sec)
        .or_else(|| threads.first());
    let heading = model.is_none_or(|t| t.heading);
    let mut lines = Vec::new();
    if heading {
        lines.push(format!("### {title}"));
        if !summary.is_empty() {
            lines.push(summary.to_string());
        }
    } else {
        let (marker, sep) = match model.map(|t| doc.text(t.start)) {
            Some(s) => {
                let rest = bullet(s).map_or("", |b| b.2);
                // A numbered list goes on counting in the section; a checklist gets a box.
                let mut m = match bullet(s) {
                    Some((delim, Some(n), _)) => {
                        let last = threads
                            .iter()
                            .filter(|t| !t.heading && sec.is_some() && t.section == sec)
                            .filter_map(|t| bullet(doc.text(t.start)).and_then(|b| b.1))
                            .next_back()
                            .unwrap_or(n.saturating_sub(1));
                        format!("{}{delim}", last + 1)
                    }
                    Some((m, None, _)) => m.to_string(),
                    None => "-".to_string(),
                };
                let boxed = ["[ ] ", "[x] ", "[X] "]
                    .iter()
                    .find_map(|c| rest.strip_prefix(c));
                if boxed.is_some() {
                    m.push_str(" [ ]");
                }
                let rest = boxed.unwrap_or(rest);
                let sep = rest
                    .strip_prefix("**")
                    .and_then(|r| r.find("**").map(|z| &r[z + 2..]))
                    .map(|after| {
                        let n = after.len()
                            - after
                                .trim_start_matches(|c: char| {
                                    c.is_whitespace() || "—–-:".contains(c)
                                })
                                .len();
                        &after[..n]
                    })
                    .filter(|s| !s.trim().is_empty())
                    .unwrap_or(" — ")
                    .to_string();
                (m, sep)
            }
            None => ("-".to_string(), " — ".to_string()),
        };
        if summary.is_empty() {
            lines.push(format!("{marker} **{title}**"));
        } else {
            lines.push(format!("{marker} **{title}**{sep}{summary}"));
        }
    }
    if let Some(n) = next.map(str::trim).filter(|n| !n.is_empty()) {
        let prefix = next_prefix(&doc, &threads, heading).unwrap_or_else(|| {
            if heading {
                "→ ".into()
            } else {
                "  → ".into()
            }
        });
        lines.push(format!("{prefix}Next: {n}"));
    }
    let block: Vec<Line> = lines.into_iter().map(|l| doc.line(l)).collect();
    place_thread(&mut doc, priority, block, heading, true);
    read_back(
        &doc.render(),
        Expect {
            title,
            rank: rank(priority),
            next: next.map(str::trim).filter(|n| !n.is_empty()),
            count: threads.len() + 1,
        },
    )
}

// ---------------------------------------------------------------------------------------
// Dataview inline fields (`hp:: 22`, `[location:: [[The Docks]]]`): canon reads them as keys
// the frontmatter does not set, so a value kept there is edited there.

/// The inline field canon reads for one key (spelled as canon looks keys up): the first
/// one in the note, as [`super::note::read_body`] reads it (code, comments and HTML are not
/// fields). Its value's byte range in the whole text, and the key as written.
fn find_inline(text: &str, key: &str) -> Option<(std::ops::Range<usize>, String)> {
    let want = markdown::field_key(key);
    let f = super::note::read_body(text)
        .fields
        .into_iter()
        .find(|f| f.span.is_some() && f.key == want)?;
    let span = f.span?;
    // The field's line in the text as given (its own bytes: the reader's columns).
    let doc = Doc::parse(text);
    let i = f.line.checked_sub(1)?;
    let line = &doc.lines.get(i)?.text;
    let start = if i == 0 {
        doc.bom.len()
    } else {
        doc.offset_after(i - 1)
    };
    let (k, _) = markdown::inline_fields(line)
        .into_iter()
        .find(|(k, v)| *v == span && markdown::field_key(&line[k.clone()]) == want)?;
    Some((start + span.start..start + span.end, line[k].to_string()))
}

/// Where canon reads a key from: for each spelling in `keys` in turn, the frontmatter's
/// key, else an inline field of that key (as canon's lookup goes); `None` when no spelling
/// is in either.
enum Place {
    Front,
    Inline(std::ops::Range<usize>, String),
}

fn place_of(text: &str, keys: &[&str]) -> Option<Place> {
    keys.iter().find_map(|k| {
        if get_scalar(text, &[k]).is_some() {
            Some(Place::Front)
        } else {
            find_inline(text, k).map(|(r, key)| Place::Inline(r, key))
        }
    })
}

/// The value of a key as canon reads it: for each spelling in turn, the frontmatter's, else
/// a Dataview inline field's (`hp:: 22`). Returns the key as written and the raw value.
pub fn get_field(text: &str, keys: &[&str]) -> Option<(String, String)> {
    keys.iter().find_map(|k| {
        get_scalar(text, &[k]).or_else(|| {
            let (r, key) = find_inline(text, k)?;
            Some((key, text[r].to_string()))
        })
    })
}

/// Sets a key where canon reads it from (see [`get_field`]): the frontmatter's key, or the
/// Dataview inline field that holds it (only the value's bytes change, and the field must
/// read back as the new value), else a new last line of the frontmatter.
pub fn set_field(text: &str, keys: &[&str], value: &Scalar) -> Result<String, EditError> {
    let Some(Place::Inline(r, key)) = place_of(text, keys) else {
        return set_scalar(text, keys, value);
    };
    let v = match &keep_note(&text[r.clone()], value) {
        Scalar::Int(n) => n.to_string(),
        Scalar::Text(t) => {
            if t.contains(['\n', '\r']) {
                return Err(EditError::InvalidText {
                    what: "value".into(),
                    why: "it spans several lines".into(),
                });
            }
            t.trim().to_string()
        }
    };
    let mut out = String::with_capacity(text.len() + v.len());
    out.push_str(&text[..r.start]);
    out.push_str(&v);
    out.push_str(&text[r.end..]);
    let line = text[..r.start].matches('\n').count() + 1;
    match get_field(&out, keys) {
        Some((_, now)) if now == v => Ok(out),
        _ => Err(EditError::InvalidText {
            what: format!("`{v}` into the inline field `{key}::` on line {line}"),
            why: "the field would not read back as that value (a bracket or `::` in it); edit it by hand".into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    /// Splits text into lines keeping their endings (the BOM stays on the first line).
    fn lines(s: &str) -> Vec<&str> {
        s.split_inclusive('\n').collect()
    }

    /// Asserts that `after` differs from `before` in exactly one line, and returns the pair.
    fn one_line_changed<'a>(before: &'a str, after: &'a str) -> (&'a str, &'a str) {
        let (b, a) = (lines(before), lines(after));
        assert_eq!(
            b.len(),
            a.len(),
            "line count changed:\n{before}\n---\n{after}"
        );
        let diff: Vec<usize> = (0..b.len()).filter(|&i| b[i] != a[i]).collect();
        assert_eq!(
            diff.len(),
            1,
            "lines {diff:?} differ:\n{before}\n---\n{after}"
        );
        (b[diff[0]], a[diff[0]])
    }

    fn text(s: &str) -> Scalar {
        Scalar::Text(s.to_string())
    }

    #[rstest]
    #[case::plain_int("---\nhp: 22\n---\n", &["hp"], Scalar::Int(15), "hp: 15\n")]
    #[case::comment("---\nhp: 22  # after the ambush\n---\n", &["hp"], Scalar::Int(15), "hp: 15  # after the ambush\n")]
    #[case::synonym_second("---\nname: A\nhp: 22\n---\n", &["hp_current", "hp"], Scalar::Int(9), "hp: 9\n")]
    #[case::case_insensitive("---\nHP_Current: 22\n---\n", &["hp_current", "hp"], Scalar::Int(9), "HP_Current: 9\n")]
    #[case::plain_text("---\nstatus: active\n---\n", &["status"], text("dead"), "status: dead\n")]
    #[case::single("---\nrole: 'assayer'\n---\n", &["role"], text("it's me"), "role: 'it''s me'\n")]
    #[case::double("---\nrole: \"assayer\" # c\n---\n", &["role"], text("a \"b\""), "role: \"a \\\"b\\\"\" # c\n")]
    #[case::wikilink_quoted("---\nlocation: \"[[The Brass Canary]]\"\n---\n", &["location"], text("[[Shaft Nine]]"), "location: \"[[Shaft Nine]]\"\n")]
    #[case::wikilink_single("---\nlocation: '[[A]]'\n---\n", &["location"], text("[[B]]"), "location: '[[B]]'\n")]
    #[case::wikilink_from_plain("---\nlocation: Depot\n---\n", &["location"], text("[[Shaft Nine]]"), "location: \"[[Shaft Nine]]\"\n")]
    #[case::number_text("---\nnote: x\n---\n", &["note"], text("12"), "note: \"12\"\n")]
    #[case::bool_text("---\nnote: x\n---\n", &["note"], text("true"), "note: \"true\"\n")]
    #[case::colon_space("---\nnote: x\n---\n", &["note"], text("a: b"), "note: \"a: b\"\n")]
    #[case::hash("---\nnote: x\n---\n", &["note"], text("a #b"), "note: \"a #b\"\n")]
    #[case::empty_text("---\nnote: x\n---\n", &["note"], text(""), "note: \"\"\n")]
    #[case::spaces("---\nnote: x\n---\n", &["note"], text(" x"), "note: \" x\"\n")]
    #[case::null("---\nnote: ~\n---\n", &["note"], text("x"), "note: x\n")]
    #[case::null_word("---\nnote: null # c\n---\n", &["note"], Scalar::Int(3), "note: 3 # c\n")]
    #[case::empty("---\nnote:\n---\n", &["note"], Scalar::Int(3), "note: 3\n")]
    #[case::empty_comment("---\nnote: # c\n---\n", &["note"], Scalar::Int(3), "note: 3 # c\n")]
    #[case::crlf("---\r\nhp: 22\r\nname: A\r\n---\r\n", &["hp"], Scalar::Int(1), "hp: 1\r\n")]
    #[case::duplicate_last("---\nhp: 1\nname: A\nHP: 2\n---\n", &["hp"], Scalar::Int(5), "HP: 5\n")]
    #[case::quoted_key("---\n\"hp\": 22\n---\n", &["hp"], Scalar::Int(5), "\"hp\": 5\n")]
    #[case::tab_after_colon("---\nhp:\t22\n---\n", &["hp"], Scalar::Int(5), "hp:\t5\n")]
    fn set_scalar_changes_one_line(
        #[case] before: &str,
        #[case] keys: &[&str],
        #[case] value: Scalar,
        #[case] line: &str,
    ) {
        let after = set_scalar(before, keys, &value).expect("edit");
        let (_, new) = one_line_changed(before, &after);
        assert_eq!(new, line);
    }

    #[rstest]
    #[case::bom(
        "\u{feff}---\nhp: 22\n---\n# A\n",
        "\u{feff}---\nhp: 22\nac: 12\n---\n# A\n"
    )]
    #[case::lf("---\nhp: 22\n---\n", "---\nhp: 22\nac: 12\n---\n")]
    #[case::crlf(
        "---\r\nhp: 22\r\n---\r\nbody",
        "---\r\nhp: 22\r\nac: 12\r\n---\r\nbody"
    )]
    #[case::dots("---\nhp: 22\n...\n", "---\nhp: 22\nac: 12\n...\n")]
    #[case::empty_fm("---\n---\n", "---\nac: 12\n---\n")]
    #[case::none("# A\n", "---\nac: 12\n---\n# A\n")]
    #[case::none_crlf("# A\r\nx\r\n", "---\r\nac: 12\r\n---\r\n# A\r\nx\r\n")]
    #[case::none_bom("\u{feff}# A", "\u{feff}---\nac: 12\n---\n# A")]
    #[case::empty_file("", "---\nac: 12\n---\n")]
    #[case::nested_key_ignored(
        "---\nstats:\n  ac: 3\n---\n",
        "---\nstats:\n  ac: 3\nac: 12\n---\n"
    )]
    #[case::block_scalar_key_ignored(
        "---\nbio: |\n  ac: 3\n---\n",
        "---\nbio: |\n  ac: 3\nac: 12\n---\n"
    )]
    fn set_scalar_adds_missing_key(#[case] before: &str, #[case] after: &str) {
        assert_eq!(
            set_scalar(before, &["ac", "armor"], &Scalar::Int(12)).expect("edit"),
            after
        );
    }

    #[rstest]
    #[case::unterminated("---\nhp: 1\n", EditError::UnterminatedFrontmatter { line: 1 })]
    #[case::mapping("---\nhp:\n  max: 3\n---\n", EditError::NestedMapping { key: "hp".into(), line: 2 })]
    #[case::flow_map("---\nhp: {max: 3}\n---\n", EditError::NestedMapping { key: "hp".into(), line: 2 })]
    #[case::block_scalar("---\nhp: |\n  a\n---\n", EditError::BlockScalar { key: "hp".into(), line: 2 })]
    #[case::folded("---\nx: 1\nhp: >-\n  a\n---\n", EditError::BlockScalar { key: "hp".into(), line: 3 })]
    #[case::list("---\nhp: [1, 2]\n---\n", EditError::NotAScalar { key: "hp".into(), line: 2 })]
    #[case::block_list("---\nhp:\n- 1\n---\n", EditError::NotAScalar { key: "hp".into(), line: 2 })]
    fn set_scalar_errors(#[case] before: &str, #[case] err: EditError) {
        assert_eq!(set_scalar(before, &["hp"], &Scalar::Int(1)), Err(err));
    }

    #[test]
    fn set_scalar_refuses_newlines_and_empty_keys() {
        assert!(matches!(
            set_scalar("---\na: 1\n---\n", &["a"], &text("x\ny")),
            Err(EditError::InvalidText { .. })
        ));
        assert_eq!(set_scalar("", &[], &Scalar::Int(1)), Err(EditError::NoKey));
    }

    #[rstest]
    #[case::plain("---\nhp: 22 # c\n---\n", &["hp"], Some(("hp", "22")))]
    #[case::double("---\nloc: \"[[A]]\"\n---\n", &["loc"], Some(("loc", "[[A]]")))]
    #[case::single("---\nr: 'it''s'\n---\n", &["r"], Some(("r", "it's")))]
    #[case::synonym("---\nHP: 3\n---\n", &["hp_current", "hp"], Some(("HP", "3")))]
    #[case::flow("---\ninv: [a, b] # c\n---\n", &["inv"], Some(("inv", "[a, b]")))]
    #[case::block("---\ninv:\n  - a\n  - 'b' # c\n---\n", &["inv"], Some(("inv", "a, b")))]
    #[case::null("---\nx: ~\n---\n", &["x"], Some(("x", "")))]
    #[case::missing("---\nx: 1\n---\n", &["y"], None)]
    #[case::no_frontmatter("x: 1\n", &["x"], None)]
    #[case::mapping("---\nx:\n  a: 1\n---\n", &["x"], None)]
    fn get_scalar_reads(
        #[case] t: &str,
        #[case] keys: &[&str],
        #[case] want: Option<(&str, &str)>,
    ) {
        let got = get_scalar(t, keys);
        assert_eq!(got.as_ref().map(|(k, v)| (k.as_str(), v.as_str())), want);
    }

    #[rstest]
    #[case::block(
        "---\ninv:\n  - pick\n  - gin # c\nhp: 1\n---\n",
        "---\ninv:\n  - pick\n  - gin # c\n  - rope\nhp: 1\n---\n"
    )]
    #[case::block_col0("---\ninv:\n- pick\n---\n", "---\ninv:\n- pick\n- rope\n---\n")]
    #[case::block_crlf(
        "---\r\ninv:\r\n  -  pick\r\n---\r\n",
        "---\r\ninv:\r\n  -  pick\r\n  -  rope\r\n---\r\n"
    )]
    #[case::block_continuation(
        "---\ninv:\n  - name: pick\n    w: 2\n---\n",
        "---\ninv:\n  - name: pick\n    w: 2\n  - rope\n---\n"
    )]
    #[case::flow(
        "---\ninv: [pick, gin] # c\n---\n",
        "---\ninv: [pick, gin, rope] # c\n---\n"
    )]
    #[case::flow_tight("---\ninv: [pick,gin]\n---\n", "---\ninv: [pick,gin,rope]\n---\n")]
    #[case::flow_empty("---\ninv: []\n---\n", "---\ninv: [rope]\n---\n")]
    #[case::flow_quoted(
        "---\ninv: [\"[[A]]\", 'b, c']\n---\n",
        "---\ninv: [\"[[A]]\", 'b, c', rope]\n---\n"
    )]
    #[case::comma("---\ninv: pick, gin\n---\n", "---\ninv: pick, gin, rope\n---\n")]
    #[case::single_word("---\ninv: pick\n---\n", "---\ninv: pick, rope\n---\n")]
    #[case::null_flow("---\ninv: ~\n---\n", "---\ninv: [rope]\n---\n")]
    #[case::empty_flow("---\ninv:\n---\n", "---\ninv: [rope]\n---\n")]
    #[case::empty_block(
        "---\ninv:\ntags:\n  - x\n---\n",
        "---\ninv:\n  - rope\ntags:\n  - x\n---\n"
    )]
    #[case::missing_flow("---\nhp: 1\n---\n", "---\nhp: 1\ninv: [rope]\n---\n")]
    #[case::missing_block(
        "---\ntags:\n    - x\n---\n",
        "---\ntags:\n    - x\ninv:\n    - rope\n---\n"
    )]
    #[case::no_frontmatter("body\n", "---\ninv: [rope]\n---\nbody\n")]
    #[case::present("---\ninv: [Pick, ROPE]\n---\n", "---\ninv: [Pick, ROPE]\n---\n")]
    #[case::present_quoted("---\ninv:\n  - \"rope\"\n---\n", "---\ninv:\n  - \"rope\"\n---\n")]
    fn list_add_cases(#[case] before: &str, #[case] after: &str) {
        assert_eq!(
            list_add(before, &["inv", "items"], "rope").expect("add"),
            after
        );
    }

    const TIMELINE: &str =
        "# Timeline\n\n## Day 5\n- A storm.\n- Lottie left.\n\n## Day 6 — evening\n- A lamp.\n";

    #[rstest]
    #[case::existing_day(TIMELINE, 5, None, "# Timeline\n\n## Day 5\n- A storm.\n- Lottie left.\n- E.\n\n## Day 6 — evening\n- A lamp.\n")]
    #[case::suffix_day(TIMELINE, 6, Some("night"), "# Timeline\n\n## Day 5\n- A storm.\n- Lottie left.\n\n## Day 6 — evening\n- A lamp.\n- E.\n")]
    #[case::new_day_suffix(TIMELINE, 7, Some("dawn"), "# Timeline\n\n## Day 5\n- A storm.\n- Lottie left.\n\n## Day 6 — evening\n- A lamp.\n\n## Day 7 — dawn\n- E.\n")]
    #[case::new_day_no_time(TIMELINE, 7, None, "# Timeline\n\n## Day 5\n- A storm.\n- Lottie left.\n\n## Day 6 — evening\n- A lamp.\n\n## Day 7\n- E.\n")]
    #[case::new_day_no_suffixes(
        "## Day 1\n* a\n",
        2,
        Some("dusk"),
        "## Day 1\n* a\n\n## Day 2\n* E.\n"
    )]
    #[case::dash_suffix(
        "## Day 1 - dusk\n- a\n",
        2,
        Some("noon"),
        "## Day 1 - dusk\n- a\n\n## Day 2 - noon\n- E.\n"
    )]
    #[case::tight(
        "## Day 1\n- a\n## Day 2\n- b\n",
        3,
        None,
        "## Day 1\n- a\n## Day 2\n- b\n## Day 3\n- E.\n"
    )]
    #[case::no_final_newline("## Day 1\n- a", 1, None, "## Day 1\n- a\n- E.")]
    #[case::no_final_newline_new("## Day 1\n- a", 2, None, "## Day 1\n- a\n\n## Day 2\n- E.")]
    #[case::crlf(
        "## Day 1\r\n- a\r\n\r\n## Day 2\r\n- b\r\n",
        1,
        None,
        "## Day 1\r\n- a\r\n- E.\r\n\r\n## Day 2\r\n- b\r\n"
    )]
    #[case::bom("\u{feff}## Day 1\n- a\n", 1, None, "\u{feff}## Day 1\n- a\n- E.\n")]
    #[case::numbered("## Day 1\n1. a\n2. b\n", 1, None, "## Day 1\n1. a\n2. b\n3. E.\n")]
    #[case::plus_marker(
        "## day 1\n+ a\n  more\n\nText after.\n",
        1,
        None,
        "## day 1\n+ a\n  more\n+ E.\n\nText after.\n"
    )]
    #[case::empty_section(
        "## Day 1\n\n## Day 2\n- b\n",
        1,
        None,
        "## Day 1\n- E.\n\n## Day 2\n- b\n"
    )]
    #[case::section_marker_over_file(
        "## Day 1\n* a\n## Day 2\n- b\n",
        2,
        None,
        "## Day 1\n* a\n## Day 2\n- b\n- E.\n"
    )]
    #[case::empty_file("", 1, Some("dawn"), "## Day 1\n- E.\n")]
    #[case::trailing_blank("## Day 1\n- a\n\n", 2, None, "## Day 1\n- a\n\n## Day 2\n- E.\n")]
    #[case::day_10_not_1("## Day 10\n- a\n", 1, None, "## Day 10\n- a\n\n## Day 1\n- E.\n")]
    #[case::code_block_ignored(
        "```\n## Day 1\n```\n",
        1,
        None,
        "```\n## Day 1\n```\n\n## Day 1\n- E.\n"
    )]
    #[case::year_sections_before_a_trailing_aside(
        "# T\n\n## Ancient Times\n- x\n\n## Year 2\n- a\n- b\n\n## Open Mysteries\n- Who?\n",
        9,
        Some("dusk"),
        "# T\n\n## Ancient Times\n- x\n\n## Year 2\n- a\n- b\n- E.\n\n## Open Mysteries\n- Who?\n"
    )]
    #[case::iso_dates_prose(
        "## 2024-03-11\n* a\n\n## 2024-03-12\n\nQuiet.\n",
        1,
        None,
        "## 2024-03-11\n* a\n\n## 2024-03-12\n\nQuiet.\n\nE.\n"
    )]
    #[case::iso_dates_empty(
        "## 2024-03-11\n* a\n\n## 2024-03-12\n",
        1,
        None,
        "## 2024-03-11\n* a\n\n## 2024-03-12\n* E.\n"
    )]
    #[case::day_before_a_sub_heading(
        "## Day 1\n- a\n### Notes\n- n\n",
        1,
        None,
        "## Day 1\n- a\n- E.\n### Notes\n- n\n"
    )]
    #[case::after_a_table(
        "## 1500-Ches-12\n| Time | Event |\n| --- | --- |\n| dawn | x |\n",
        1,
        None,
        "## 1500-Ches-12\n| Time | Event |\n| --- | --- |\n| dawn | x |\n\n- E.\n"
    )]
    #[case::calendar_under_a_year(
        "# 1492\n### 12 Mirtul 1492\n1. a\n### 14 Mirtul 1492\n1. b\n   more\n\n| Date | Event |\n",
        3,
        None,
        "# 1492\n### 12 Mirtul 1492\n1. a\n### 14 Mirtul 1492\n1. b\n   more\n2. E.\n\n| Date | Event |\n"
    )]
    #[case::new_day_before_a_trailing_aside(
        "## Day 1\n- a\n\n## Open Mysteries\n- q\n",
        2,
        None,
        "## Day 1\n- a\n\n## Day 2\n- E.\n\n## Open Mysteries\n- q\n"
    )]
    #[case::new_day_at_the_level_of_the_days(
        "# T\n### Day 1\n- a\n",
        2,
        None,
        "# T\n### Day 1\n- a\n### Day 2\n- E.\n"
    )]
    fn append_event_cases(
        #[case] before: &str,
        #[case] day: i64,
        #[case] time: Option<&str>,
        #[case] after: &str,
    ) {
        assert_eq!(
            append_event(before, day, time, "E.").expect("append"),
            after
        );
    }

    #[test]
    fn append_event_errors() {
        assert_eq!(
            append_event("## Day 1\n- a\n## Day 1 — night\n", 1, None, "x"),
            Err(EditError::AmbiguousDay {
                day: 1,
                count: 2,
                lines: "1, 3".into()
            })
        );
        assert!(append_event("", 1, None, "a\nb").is_err());
        assert!(append_event("", 1, None, "  ").is_err());
    }

    #[rstest]
    #[case::compact(
        "{\"current_day\": 6, \"current_time\": \"evening\"}\n",
        Some(7),
        Some("dawn"),
        "{\"current_day\": 7, \"current_time\": \"dawn\"}\n"
    )]
    #[case::tight(
        "{\"current_day\":6,\"current_time\":\"evening\"}",
        Some(7),
        None,
        "{\"current_day\":7,\"current_time\":\"evening\"}"
    )]
    #[case::pretty("{\r\n  \"current_day\" : 6,\r\n  \"other\": [1, {\"current_day\": 2}],\r\n  \"current_time\": \"evening\"\r\n}\r\n", Some(10), Some("the small hours"), "{\r\n  \"current_day\" : 10,\r\n  \"other\": [1, {\"current_day\": 2}],\r\n  \"current_time\": \"the small hours\"\r\n}\r\n")]
    #[case::missing_time(
        "{\"current_day\": 6}\n",
        None,
        Some("noon"),
        "{\"current_day\": 6, \"current_time\": \"noon\"}\n"
    )]
    #[case::missing_pretty(
        "{\n    \"current_day\": 6\n}\n",
        None,
        Some("noon"),
        "{\n    \"current_day\": 6,\n    \"current_time\": \"noon\"\n}\n"
    )]
    #[case::missing_two_members(
        "{\n  \"a\": 1,\n  \"b\": 2\n}",
        Some(3),
        Some("x"),
        "{\n  \"a\": 1,\n  \"b\": 2,\n  \"current_day\": 3,\n  \"current_time\": \"x\"\n}"
    )]
    #[case::empty_object(
        "{}",
        Some(3),
        Some("x"),
        "{\"current_day\": 3, \"current_time\": \"x\"}"
    )]
    #[case::empty_text(
        "",
        Some(3),
        Some("x \"y\""),
        "{\"current_day\": 3, \"current_time\": \"x \\\"y\\\"\"}\n"
    )]
    #[case::blank_text("  \n", Some(3), None, "{\"current_day\": 3}\n")]
    #[case::null_value(
        "{\"current_day\": null, \"current_time\": null}",
        Some(1),
        Some("a"),
        "{\"current_day\": 1, \"current_time\": \"a\"}"
    )]
    #[case::nothing("{\"current_day\": 6}", None, None, "{\"current_day\": 6}")]
    #[case::bom(
        "\u{feff}{\"current_day\": 6}",
        Some(8),
        None,
        "\u{feff}{\"current_day\": 8}"
    )]
    fn set_temporal_cases(
        #[case] before: &str,
        #[case] day: Option<i64>,
        #[case] time: Option<&str>,
        #[case] after: &str,
    ) {
        assert_eq!(set_temporal(before, day, time).expect("set"), after);
    }

    #[rstest]
    #[case::invalid("{\n  \"current_day\": 6,\n}", 3)]
    #[case::unclosed("{\n\"current_day\": 6\n", 3)]
    fn set_temporal_invalid_json(#[case] before: &str, #[case] line: usize) {
        match set_temporal(before, Some(1), None) {
            Err(e @ EditError::InvalidJson { line: l, .. }) => {
                assert_eq!(l, line);
                assert_eq!(e.to_string().matches("line").count(), 1, "{e}");
            }
            other => panic!("expected invalid JSON, got {other:?}"),
        }
        assert_eq!(
            set_temporal("[1]", Some(1), None),
            Err(EditError::JsonNotAnObject)
        );
    }

    const THREADS: &str = "# Open threads\n\n## Urgent\n### The Light in Shaft Nine\nA lamp is moving inside sealed [[Shaft Nine]].\n→ Next: Reach the adit.\n\n### Second Urgent\nMore.\nNext: Do it.\n\n## Medium\n### Strand's Ringing Ore\nThe ore rings.\nNext: Test a sample.\n\n## High\n- **The Scrip Strike** — [[Jonah Sallow]] will call the strike.\n  → Next: Decide.\n- **[[Vane]]'s Ledger** — missing pages.\n\n## Resolved\n### Old Thing\nDone.\n";

    /// The lines of `s` without blank lines.
    fn content_lines(s: &str) -> Vec<&str> {
        lines(s)
            .into_iter()
            .filter(|l| !l.trim().is_empty())
            .collect()
    }

    /// Asserts `after` is `before` with the lines of `block` moved, and nothing else changed
    /// but blank lines.
    fn only_moved(before: &str, after: &str, block: &str) {
        only_moved_to(before, after, block, None);
    }

    /// [`only_moved`], allowing one new section heading `added` in `after`.
    fn only_moved_to(before: &str, after: &str, block: &str, added: Option<&str>) {
        let block_lines = lines(block);
        let strip = |s: &str| -> Vec<String> {
            let all: Vec<&str> = lines(s);
            let pos = (0..all.len())
                .find(|&i| all[i..].starts_with(&block_lines))
                .expect("block present and contiguous");
            let mut rest: Vec<&str> = all[..pos].to_vec();
            rest.extend(&all[pos + block_lines.len()..]);
            rest.iter()
                .filter(|l| !l.trim().is_empty())
                .map(|l| l.trim_end_matches(['\r', '\n']).to_string())
                .collect()
        };
        let mut now = strip(after);
        if let Some(h) = added {
            let at = now.iter().position(|l| l == h).expect("new heading");
            now.remove(at);
        }
        assert_eq!(strip(before), now, "\n{before}\n---\n{after}");
    }

    #[rstest]
    #[case::heading_first("The Light in Shaft Nine", "### The Light in Shaft Nine\nA lamp is moving inside sealed [[Shaft Nine]].\n→ Next: Reach the adit.\n")]
    #[case::heading_last_in_section("second urgent", "### Second Urgent\nMore.\nNext: Do it.\n")]
    #[case::heading_only(
        "  Strand's Ringing Ore ",
        "### Strand's Ringing Ore\nThe ore rings.\nNext: Test a sample.\n"
    )]
    #[case::bullet(
        "the scrip strike",
        "- **The Scrip Strike** — [[Jonah Sallow]] will call the strike.\n  → Next: Decide.\n"
    )]
    #[case::bullet_wikilink("**Vane's Ledger**", "- **[[Vane]]'s Ledger** — missing pages.\n")]
    fn thread_move_keeps_bytes(#[case] title: &str, #[case] block: &str) {
        let after = thread_move(THREADS, title, "Resolved").expect("move");
        only_moved(THREADS, &after, block);
        // The block now sits at the end of the file, in the Resolved section.
        assert!(after.ends_with(block), "{after}");
        // No doubled blank lines appear.
        assert!(!after.contains("\n\n\n"), "{after}");
        let crlf = THREADS.replace('\n', "\r\n");
        let after_crlf = thread_move(&crlf, title, "Resolved").expect("move");
        assert_eq!(after_crlf, after.replace('\n', "\r\n"));
        let bom = format!("\u{feff}{THREADS}");
        assert_eq!(
            thread_move(&bom, title, "Resolved").expect("move"),
            format!("\u{feff}{after}")
        );
    }

    #[test]
    fn thread_move_spacing() {
        let after = thread_move(THREADS, "The Light in Shaft Nine", "Resolved").expect("move");
        assert_eq!(
            after,
            "# Open threads\n\n## Urgent\n### Second Urgent\nMore.\nNext: Do it.\n\n## Medium\n### Strand's Ringing Ore\nThe ore rings.\nNext: Test a sample.\n\n## High\n- **The Scrip Strike** — [[Jonah Sallow]] will call the strike.\n  → Next: Decide.\n- **[[Vane]]'s Ledger** — missing pages.\n\n## Resolved\n### Old Thing\nDone.\n\n### The Light in Shaft Nine\nA lamp is moving inside sealed [[Shaft Nine]].\n→ Next: Reach the adit.\n"
        );
        let after = thread_move(THREADS, "Strand's Ringing Ore", "Low").expect("move");
        assert!(after.contains("\n\n## Medium\n\n## High\n"), "{after}");
        assert!(
            after.ends_with(
                "Done.\n\n## Low\n### Strand's Ringing Ore\nThe ore rings.\nNext: Test a sample.\n"
            ),
            "{after}"
        );
        let after = thread_move(THREADS, "The Scrip Strike", "Urgent").expect("move");
        assert!(
            after.contains("\nNext: Do it.\n\n- **The Scrip Strike**"),
            "{after}"
        );
        assert!(
            after.contains("## High\n- **[[Vane]]'s Ledger** — missing pages.\n\n## Resolved"),
            "{after}"
        );
    }

    #[rstest]
    #[case::no_final_newline(
        "## High\n- **A** — x\n- **B** — y",
        "A",
        "## High\n- **B** — y\n\n## Resolved\n- **A** — x"
    )]
    #[case::same_section("## High\n- **A** — x\n", "A", "## High\n- **A** — x\n")]
    #[case::tight_sections(
        "## High\n### A\nx\n## Low\n### B\ny\n## Resolved\n",
        "A",
        "## High\n## Low\n### B\ny\n## Resolved\n### A\nx\n"
    )]
    fn thread_move_cases(#[case] before: &str, #[case] title: &str, #[case] after: &str) {
        let to = if before.contains("- **A** — x\n") && !before.contains("- **B**") {
            "High"
        } else {
            "Resolved"
        };
        assert_eq!(thread_move(before, title, to).expect("move"), after);
    }

    #[test]
    fn thread_errors() {
        assert_eq!(
            thread_move(THREADS, "Nope", "Resolved"),
            Err(EditError::ThreadNotFound {
                title: "Nope".into()
            })
        );
        let dup = "## High\n### A\nx\n## Low\n- **a** — y\n";
        assert_eq!(
            thread_move(dup, "A", "Resolved"),
            Err(EditError::AmbiguousThread {
                title: "A".into(),
                count: 2,
                lines: "2, 5".into()
            })
        );
        assert_eq!(
            thread_set_next(dup, "[[A]]", "x"),
            Err(EditError::AmbiguousThread {
                title: "[[A]]".into(),
                count: 2,
                lines: "2, 5".into()
            })
        );
        assert_eq!(
            thread_add(THREADS, "Low", "the scrip strike", "", None),
            Err(EditError::ThreadExists {
                title: "the scrip strike".into(),
                line: 18
            })
        );
    }

    #[test]
    fn a_section_must_be_a_priority() {
        for r in [
            thread_add("## Low\n### A\nx\n", "Someday", "New", "", None),
            thread_move("## Low\n### A\nx\n", "A", "Someday"),
        ] {
            assert!(
                matches!(&r, Err(EditError::InvalidText { why, .. }) if why.contains("no priority")),
                "{r:?}"
            );
        }
    }

    /// Threads in the styles GMs write, found by the title the reader reports.
    const STYLES: &str = "# Open Threads\n\n## Urgent\n- **The Debt:** Vane owes the Row.\n  → Next: Pay by dusk.\n- A Bell: rings twice — at noon.\n- [ ] **The Kiln** — cold since spring\n  - Next step: Ask the potter.\n\n## High\n1. The Ferry - stopped.\n2. [[Odessa]]'s Oath: sworn.\n\n## Done\n### Old Feud\nSettled.\n";

    #[rstest]
    #[case::bold_colon(
        "The Debt",
        "- **The Debt:** Vane owes the Row.\n  → Next: Pay by dusk.\n",
        true
    )]
    #[case::colon_then_dash("A Bell", "- A Bell: rings twice — at noon.\n", false)]
    #[case::numbered("the ferry", "1. The Ferry - stopped.\n", false)]
    #[case::numbered_link("Odessa's Oath", "2. [[Odessa]]'s Oath: sworn.\n", false)]
    fn styles_resolve_into_the_vaults_own_section(
        #[case] title: &str,
        #[case] block: &str,
        #[case] bold: bool,
    ) {
        let after = thread_move(STYLES, title, "Resolved").expect("move");
        only_moved(STYLES, &after, block);
        // `## Done` is the vault's Resolved section. A plain item under a heading-style
        // thread would be read as its text: it goes before the section's heading threads.
        let tail = if bold {
            format!("## Done\n### Old Feud\nSettled.\n\n{block}")
        } else {
            format!("## Done\n{block}### Old Feud\nSettled.\n")
        };
        assert!(after.ends_with(&tail), "{after}");
    }

    #[test]
    fn a_move_that_would_change_another_thread_is_refused() {
        // `The Kiln` is a thread only because a list-item thread comes before it.
        let t = "## Urgent\n### The Debt\n- **The Ferry** — stopped.\n- The Kiln: cold.\n";
        let r = thread_move(t, "The Ferry", "High");
        assert!(
            matches!(&r, Err(EditError::NotReadBack { title, why }) if title == "The Ferry" && why.contains("2 threads instead of 3")),
            "{r:?}"
        );
    }

    #[rstest]
    #[case::numbered(
        "## High\n1. **A** — x\n2. **B** — y\n",
        "## High\n1. **A** — x\n2. **B** — y\n3. **New** — Sum.\n"
    )]
    #[case::checkbox(
        "## High\n- [x] **A**: x\n",
        "## High\n- [x] **A**: x\n- [ ] **New**: Sum.\n"
    )]
    fn thread_add_in_the_sections_list_style(#[case] before: &str, #[case] after: &str) {
        assert_eq!(
            thread_add(before, "High", "New", "Sum.", None).expect("add"),
            after
        );
    }

    #[test]
    fn a_checklist_is_resolved_by_its_boxes() {
        // A quest log: no priority headings, the box is the state.
        let log = "# Quests\n\n- [ ] Find the ring: it is in the lake\n  - [ ] Ask the ferryman\n- [x] Pay the toll\n";
        let done = thread_move(log, "find the ring", "Resolved").expect("resolve");
        assert_eq!(done, log.replacen("- [ ] Find", "- [x] Find", 1));
        assert_eq!(
            thread_move(&done, "Find the ring", "Medium").expect("reopen"),
            log
        );
        // A ticked box reads as resolved wherever it is.
        assert_eq!(
            thread_move(log, "Pay the toll", "Resolved").expect("same"),
            log
        );
        // Its next step is its first open sub-item: not written as a `Next:` line.
        let e = thread_set_next(log, "Find the ring", "Dive.").expect_err("refused");
        assert!(e.to_string().contains("first open sub-item"), "{e}");
        // A home note's objectives under a heading that is no priority.
        let home = "# Home\n\n## Current Objectives\n- [ ] Escort the caravan\n- [ ] Learn who poisoned the well\n\n## Links\n- [[Timeline]]\n";
        assert_eq!(
            thread_move(home, "learn who poisoned the well", "Resolved").expect("resolve"),
            home.replacen("- [ ] Learn", "- [x] Learn", 1)
        );
        assert!(matches!(
            thread_move(home, "Timeline", "Resolved"),
            Err(EditError::ThreadNotFound { .. })
        ));
    }

    #[test]
    fn a_checkbox_is_ticked_as_it_is_resolved() {
        let after = thread_move(STYLES, "The Kiln", "Resolved").expect("move");
        assert!(
            after.ends_with("Settled.\n\n- [x] **The Kiln** — cold since spring\n  - Next step: Ask the potter.\n"),
            "{after}"
        );
        let back = thread_move(&after, "the kiln", "Urgent").expect("reopen");
        assert!(back.contains("- A Bell: rings twice — at noon.\n- [ ] **The Kiln** — cold since spring\n  - Next step: Ask the potter.\n\n## High"), "{back}");
    }

    #[rstest]
    #[case::bold_colon("The Debt", "  → Next: Pay by dusk.\n", "  → Next: Go.\n")]
    #[case::next_step("The Kiln", "  - Next step: Ask the potter.\n", "  - Next step: Go.\n")]
    fn styles_set_next(#[case] title: &str, #[case] old: &str, #[case] new: &str) {
        let after = thread_set_next(STYLES, title, "Go.").expect("set");
        assert_eq!(one_line_changed(STYLES, &after), (old, new));
    }

    #[test]
    fn a_next_step_is_added_in_the_files_style() {
        let after = thread_set_next(STYLES, "A Bell", "Climb.").expect("set");
        assert!(
            after.contains("- A Bell: rings twice — at noon.\n  → Next: Climb.\n- [ ]"),
            "{after}"
        );
    }

    #[rstest]
    #[case::arrow(
        "The Light in Shaft Nine",
        "A lamp is moving inside sealed [[Shaft Nine]].\n→ Next: Reach the adit.\n",
        "→ Next: Go now.\n"
    )]
    #[case::plain("Second Urgent", "Next: Do it.\n", "Next: Go now.\n")]
    #[case::bullet("The Scrip Strike", "  → Next: Decide.\n", "  → Next: Go now.\n")]
    fn thread_set_next_replaces(#[case] title: &str, #[case] old: &str, #[case] new_tail: &str) {
        let after = thread_set_next(THREADS, title, "Go now.").expect("set");
        let (was, now) = one_line_changed(THREADS, &after);
        assert!(old.ends_with(was), "{was}");
        assert_eq!(now, new_tail);
    }

    #[rstest]
    #[case::bullet_added(
        "## High\n- **A** — x\n  → Next: y\n- **B** — z\n",
        "B",
        "## High\n- **A** — x\n  → Next: y\n- **B** — z\n  → Next: Go.\n"
    )]
    #[case::heading_added(
        "## High\n### A\nx\n\n## Low\n",
        "A",
        "## High\n### A\nx\n→ Next: Go.\n\n## Low\n"
    )]
    #[case::heading_file_style(
        "## High\n### A\nx\n### B\ny\nNext: z\n",
        "A",
        "## High\n### A\nx\nNext: Go.\n### B\ny\nNext: z\n"
    )]
    #[case::empty_next("## High\n### A\nNext:\n", "A", "## High\n### A\nNext: Go.\n")]
    #[case::bold_next(
        "## High\n- **A** — x\n  - **Next:** old\n",
        "a",
        "## High\n- **A** — x\n  - **Next:** Go.\n"
    )]
    #[case::crlf("## High\r\n### A\r\nx", "A", "## High\r\n### A\r\nx\r\n→ Next: Go.")]
    fn thread_set_next_cases(#[case] before: &str, #[case] title: &str, #[case] after: &str) {
        assert_eq!(thread_set_next(before, title, "Go.").expect("set"), after);
    }

    #[rstest]
    #[case::heading_section(THREADS, "Urgent", "## Urgent\n### The Light in Shaft Nine\nA lamp is moving inside sealed [[Shaft Nine]].\n→ Next: Reach the adit.\n\n### Second Urgent\nMore.\nNext: Do it.\n\n### New\nSum.\n→ Next: Go.\n\n## Medium")]
    #[case::bullet_section(
        THREADS,
        "High",
        "- **[[Vane]]'s Ledger** — missing pages.\n- **New** — Sum.\n  → Next: Go.\n\n## Resolved"
    )]
    #[case::missing_low(THREADS, "Low", "## High\n- **The Scrip Strike** — [[Jonah Sallow]] will call the strike.\n  → Next: Decide.\n- **[[Vane]]'s Ledger** — missing pages.\n\n## Low\n### New\nSum.\n→ Next: Go.\n\n## Resolved\n")]
    #[case::empty_file("", "High", "## High\n### New\nSum.\n→ Next: Go.\n")]
    #[case::bullet_file(
        "## Low\n* **A**: x\n",
        "Urgent",
        "## Urgent\n* **New**: Sum.\n  → Next: Go.\n\n## Low\n* **A**: x\n"
    )]
    fn thread_add_cases(#[case] before: &str, #[case] priority: &str, #[case] expect_part: &str) {
        let after = thread_add(before, priority, "New", "Sum.", Some("Go.")).expect("add");
        assert!(after.contains(expect_part), "{after}");
        // Every old line is still there, in order.
        let old = content_lines(before);
        let new = content_lines(&after);
        let mut it = new.iter();
        for l in old {
            assert!(it.any(|n| *n == l), "lost line {l:?}\n{after}");
        }
    }

    const NOTE: &str = "---\nname: Ida Marsh\nhp: 22  # after the ambush\nrole: 'Company assayer'\nlocation: \"[[The Brass Canary]]\"\ngold: 15\n# what she carries\ninventory:\n  - miner's pick\n  - flask of juniper gin  # half full\ntags: [npc, \"silver\", 'town'] # filed\naliases: Ida, the Assayer\nstats:\n  str: 10\n  hp: 4\nbio: |\n  Born in Coldharrow.\n  gold: 3\nempty:\nnothing: ~\n---\n# Ida Marsh\n\nhp: 5 in the body is not frontmatter\n";

    /// The fixture in every encoding: LF or CRLF, with or without a BOM, with or without a
    /// final newline.
    fn variants(base: &str) -> Vec<String> {
        let mut out = Vec::new();
        for crlf in [false, true] {
            for bom in [false, true] {
                for final_nl in [true, false] {
                    let mut t = if crlf {
                        base.replace('\n', "\r\n")
                    } else {
                        base.to_string()
                    };
                    if !final_nl {
                        t = t.trim_end_matches(['\r', '\n']).to_string();
                    }
                    if bom {
                        t.insert(0, '\u{feff}');
                    }
                    out.push(t);
                }
            }
        }
        out
    }

    #[rstest]
    #[case::int(&["hp_current", "hp"], Scalar::Int(15), Scalar::Int(22))]
    #[case::plain(&["name"], text("Ida M. Marsh"), text("Ida Marsh"))]
    #[case::single(&["role"], text("it's: odd #x"), text("Company assayer"))]
    #[case::wikilink(&["location"], text("[[Shaft Nine]]"), text("[[The Brass Canary]]"))]
    #[case::negative(&["gold", "gp"], Scalar::Int(-3), Scalar::Int(15))]
    fn set_scalar_round_trip(#[case] keys: &[&str], #[case] new: Scalar, #[case] old: Scalar) {
        for before in variants(NOTE) {
            let after = set_scalar(&before, keys, &new).expect("set");
            one_line_changed(&before, &after);
            let back = set_scalar(&after, keys, &old).expect("set back");
            assert_eq!(back, before);
        }
    }

    /// The reader judges every frontmatter edit: one that would break the YAML, or change
    /// how another key reads, is refused; one that changes only its own key passes.
    #[test]
    fn the_reader_judges_a_frontmatter_edit() {
        let before = "---\nname: Ida\nhp: 22\nstats:\n  str: 10\n---\n# Ida\n";
        assert!(front_read_back(before, &before.replace("hp: 22", "hp: 15"), &["hp"]).is_ok());
        let other = front_read_back(before, &before.replace("str: 10", "str: 11"), &["hp"]);
        assert!(
            matches!(&other, Err(EditError::InvalidText { why, .. }) if why.contains("`stats`")),
            "{other:?}"
        );
        let broken = front_read_back(before, &before.replace("hp: 22", "hp: [22"), &["hp"]);
        assert!(
            matches!(&broken, Err(EditError::InvalidText { why, .. }) if why.contains("no longer parse")),
            "{broken:?}"
        );
    }

    #[rstest]
    #[case::block(&["items", "inventory"], "rope")]
    #[case::block_quoted(&["inventory"], "[[Silver Key]]")]
    #[case::flow(&["tags"], "mine")]
    #[case::flow_quoted(&["tags"], "a, b")]
    #[case::comma(&["aliases"], "Marsh")]
    fn list_round_trip(#[case] keys: &[&str], #[case] item: &str) {
        for before in variants(NOTE) {
            let after = list_add(&before, keys, item).expect("add");
            assert_ne!(after, before);
            assert_eq!(
                list_add(&after, keys, item).expect("add again"),
                after,
                "not a no-op"
            );
            assert_eq!(list_remove(&after, keys, item).expect("remove"), before);
        }
    }

    #[rstest]
    #[case::block_first("---\ninv:\n  - a\n  - b\n---\n", "A", "---\ninv:\n  - b\n---\n")]
    #[case::block_only(
        "---\ninv:  # c\n  - a\nx: 1\n---\n",
        "a",
        "---\ninv: []  # c\nx: 1\n---\n"
    )]
    #[case::block_continuation(
        "---\ninv:\n  - name: a\n    w: 1\n  - b\n---\n",
        "b",
        "---\ninv:\n  - name: a\n    w: 1\n---\n"
    )]
    #[case::flow_first("---\ninv: [a, b, c]\n---\n", "a", "---\ninv: [b, c]\n---\n")]
    #[case::flow_middle("---\ninv: [a, 'b', c]\n---\n", "B", "---\ninv: [a, c]\n---\n")]
    #[case::flow_only("---\ninv: [ \"a\" ] # c\n---\n", "a", "---\ninv: [] # c\n---\n")]
    #[case::comma_only("---\ninv: a\n---\n", " a ", "---\ninv: []\n---\n")]
    #[case::comma_last("---\ninv: a,b, c # x\n---\n", "c", "---\ninv: a,b # x\n---\n")]
    #[case::crlf(
        "---\r\ninv:\r\n- a\r\n- b\r\n---\r\n",
        "a",
        "---\r\ninv:\r\n- b\r\n---\r\n"
    )]
    fn list_remove_cases(#[case] before: &str, #[case] item: &str, #[case] after: &str) {
        assert_eq!(list_remove(before, &["inv"], item).expect("remove"), after);
    }

    #[rstest]
    #[case::not_found("---\ninv: [a]\n---\n", EditError::ItemNotFound { key: "inv".into(), item: "z".into(), line: 2 })]
    #[case::empty("---\ninv: []\n---\n", EditError::ItemNotFound { key: "inv".into(), item: "z".into(), line: 2 })]
    #[case::missing_key("---\nx: 1\n---\n", EditError::KeyNotFound { key: "inv".into() })]
    #[case::quoted("---\ninv: \"z\"\n---\n", EditError::NotAList { key: "inv".into(), line: 2, why: "it holds no list".into() })]
    fn list_remove_errors(#[case] before: &str, #[case] err: EditError) {
        assert_eq!(list_remove(before, &["inv"], "z"), Err(err));
    }

    #[test]
    fn list_add_errors() {
        assert!(matches!(
            list_add("---\ninv: a, b\n---\n", &["inv"], "c, d"),
            Err(EditError::InvalidText { .. })
        ));
        assert!(matches!(
            list_add("---\ninv: \"a\"\n---\n", &["inv"], "c"),
            Err(EditError::NotAList { .. })
        ));
        assert!(matches!(
            list_add("---\ninv:\n  a: 1\n---\n", &["inv"], "c"),
            Err(EditError::NotAList { .. })
        ));
        assert!(matches!(
            list_add("---\ninv: []\n---\n", &["inv"], " "),
            Err(EditError::InvalidText { .. })
        ));
        assert!(matches!(
            list_add("---\ninv: []\n", &["inv"], "a"),
            Err(EditError::UnterminatedFrontmatter { line: 1 })
        ));
    }

    #[rstest]
    #[case::plain("Ida Marsh", &[("role", text("assayer")), ("hp", Scalar::Int(12))], "Body.", "---\nrole: assayer\nhp: 12\n---\n# Ida Marsh\n\nBody.\n")]
    #[case::quoted("The Canary", &[("location", text("[[Coldharrow]]")), ("note", text("a: b")), ("n", text("12"))], "", "---\nlocation: \"[[Coldharrow]]\"\nnote: \"a: b\"\nn: \"12\"\n---\n# The Canary\n")]
    #[case::no_frontmatter("X", &[], "b\n\n", "# X\n\nb\n")]
    fn new_note_cases(
        #[case] name: &str,
        #[case] fm: &[(&str, Scalar)],
        #[case] body: &str,
        #[case] want: &str,
    ) {
        let note = new_note(name, fm, body);
        assert_eq!(note, want);
        for (k, v) in fm {
            let got = get_scalar(&note, &[k]).expect("key").1;
            match v {
                Scalar::Int(n) => assert_eq!(got, n.to_string()),
                Scalar::Text(t) => assert_eq!(&got, t),
            }
        }
    }

    #[test]
    fn bold_bullet_after_heading_thread_is_its_own_thread() {
        let t = "## High\n### A\nsummary\n- plain bullet belongs to A\n- **B** — own thread\n";
        let after = thread_move(t, "B", "Low").expect("move");
        assert_eq!(after, "## High\n### A\nsummary\n- plain bullet belongs to A\n\n## Low\n- **B** — own thread\n");
        assert!(matches!(
            thread_move(t, "plain bullet belongs to A", "Low"),
            Err(EditError::ThreadNotFound { .. })
        ));
    }

    #[test]
    fn edited_values_read_back_through_the_vault_parser() {
        // The edited note still reads as YAML with the new value (a guard against quoting bugs).
        for v in [
            "[[A]]",
            "a: b",
            "x #y",
            "12",
            "true",
            "",
            " lead",
            "it's",
            "back\\slash \"q\"",
            "- x",
            "@x",
            "%x",
            "`x`",
        ] {
            let t = set_scalar("---\nk: old\nq: 'old'\nd: \"old\"\n---\n", &["k"], &text(v))
                .expect("set");
            let t = set_scalar(&t, &["q"], &text(v)).expect("set");
            let t = set_scalar(&t, &["d"], &text(v)).expect("set");
            let note = crate::vault::Note::parse("n.md", t.as_bytes());
            assert!(note.diagnostics.is_empty(), "{t}: {:?}", note.diagnostics);
            for k in ["k", "q", "d"] {
                assert_eq!(get_scalar(&t, &[k]).expect("key").1, v, "{t}");
                let read = note.frontmatter.text(&[k]).unwrap_or_default();
                // The vault trims text values.
                assert_eq!(read, v.trim(), "the vault reads {k} differently in\n{t}");
            }
        }
    }

    #[rstest]
    #[case::link_to_link(
        "---\nlocation: [[The Brass Canary]] # c\n---\n",
        text("[[Shaft Nine#Adit|the adit]]"),
        "---\nlocation: [[Shaft Nine#Adit|the adit]] # c\n---\n"
    )]
    #[case::link_to_text(
        "---\nlocation: [[The Brass Canary]]\n---\n",
        text("the depot"),
        "---\nlocation: the depot\n---\n"
    )]
    #[case::link_to_odd(
        "---\nlocation: [[The Brass Canary]]\n---\n",
        text("[[a, b]]"),
        "---\nlocation: \"[[a, b]]\"\n---\n"
    )]
    fn unquoted_wikilinks(#[case] before: &str, #[case] v: Scalar, #[case] after: &str) {
        assert_eq!(set_scalar(before, &["location"], &v).expect("set"), after);
        assert_eq!(
            get_scalar(before, &["location"]).expect("key").1,
            "[[The Brass Canary]]"
        );
    }

    #[test]
    fn unquoted_wikilink_as_a_list() {
        let t = "---\nallies: [[Jonah]]\n---\n";
        assert_eq!(list_add(t, &["allies"], "[[jonah]]").expect("add"), t);
        assert_eq!(
            list_add(t, &["allies"], "[[Ida Marsh]]").expect("add"),
            "---\nallies: [\"[[Jonah]]\", \"[[Ida Marsh]]\"]\n---\n"
        );
        assert_eq!(
            list_remove(t, &["allies"], "[[Jonah]]").expect("remove"),
            "---\nallies: []\n---\n"
        );
    }

    #[test]
    fn created_sections_use_the_conventional_spelling() {
        let t = "## High\r\n- **A** — x\r\n";
        assert_eq!(
            thread_move(t, "a", "resolved").expect("move"),
            "## High\r\n\r\n## Resolved\r\n- **A** — x\r\n"
        );
        assert_eq!(
            thread_add(t, "urgent", "B", "y", None).expect("add"),
            "## Urgent\r\n- **B** — y\r\n\r\n## High\r\n- **A** — x\r\n"
        );
    }

    mod prop {
        use super::super::*;
        use super::one_line_changed;
        use proptest::prelude::*;

        /// How a generated key holds its value.
        #[derive(Debug, Clone)]
        enum Gen {
            Int(i64),
            Plain(String),
            Single(String),
            Double(String),
            Flow(Vec<String>, bool),
            Block(Vec<String>, usize, bool),
            Comma(Vec<String>),
        }

        #[derive(Debug, Clone)]
        struct Fm {
            entries: Vec<(String, Gen, Option<String>)>,
            crlf: bool,
            bom: bool,
            final_nl: bool,
        }

        fn word() -> impl Strategy<Value = String> {
            "w[a-z]{0,6}"
        }

        fn any_text() -> impl Strategy<Value = String> {
            "[a-zA-Z0-9 :#'\"\\[\\]\\\\,-]{0,12}"
        }

        fn gen() -> impl Strategy<Value = Gen> {
            prop_oneof![
                any::<i32>().prop_map(|n| Gen::Int(n.into())),
                word().prop_map(Gen::Plain),
                any_text().prop_map(Gen::Single),
                any_text().prop_map(Gen::Double),
                (prop::collection::vec(word(), 0..4), any::<bool>())
                    .prop_map(|(v, tight)| Gen::Flow(v, tight)),
                (
                    prop::collection::vec(word(), 1..4),
                    0usize..4,
                    any::<bool>()
                )
                    .prop_map(|(v, ind, c)| Gen::Block(v, ind, c)),
                prop::collection::vec(word(), 1..4).prop_map(Gen::Comma),
            ]
        }

        fn fm() -> impl Strategy<Value = Fm> {
            (
                prop::collection::vec((gen(), prop::option::of("[a-z ]{0,8}"), 0usize..3), 1..8),
                any::<bool>(),
                any::<bool>(),
                any::<bool>(),
            )
                .prop_map(|(es, crlf, bom, final_nl)| Fm {
                    entries: es
                        .into_iter()
                        .enumerate()
                        .map(|(i, (g, c, case))| {
                            let key = match case {
                                0 => format!("key{i}"),
                                1 => format!("Key{i}"),
                                _ => format!("KEY_{i}"),
                            };
                            (key, g, c)
                        })
                        .collect(),
                    crlf,
                    bom,
                    final_nl,
                })
        }

        fn render(f: &Fm) -> String {
            let mut lines: Vec<String> = vec!["---".into()];
            let comment =
                |c: &Option<String>| c.as_ref().map_or(String::new(), |c| format!("  # {c}"));
            for (k, g, c) in &f.entries {
                let c = comment(c);
                match g {
                    Gen::Int(n) => lines.push(format!("{k}: {n}{c}")),
                    Gen::Plain(w) => lines.push(format!("{k}: {w}{c}")),
                    Gen::Single(t) => lines.push(format!("{k}: {}{c}", single_quote(t))),
                    Gen::Double(t) => lines.push(format!("{k}: {}{c}", double_quote(t))),
                    Gen::Flow(v, tight) => {
                        let sep = if *tight { "," } else { ", " };
                        lines.push(format!("{k}: [{}]{c}", v.join(sep)));
                    }
                    Gen::Block(v, ind, last_comment) => {
                        lines.push(format!("{k}:{c}"));
                        for (j, it) in v.iter().enumerate() {
                            let tail = if *last_comment && j + 1 == v.len() {
                                " # last"
                            } else {
                                ""
                            };
                            lines.push(format!("{}- {it}{tail}", " ".repeat(*ind)));
                        }
                    }
                    Gen::Comma(v) => lines.push(format!("{k}: {}{c}", v.join(", "))),
                }
                if c.is_empty() {
                    lines.push("# a comment line".into());
                }
            }
            lines.push("---".into());
            lines.push("# Title".into());
            lines.push(String::new());
            lines.push("key0: not frontmatter".into());
            let eol = if f.crlf { "\r\n" } else { "\n" };
            let mut t = lines.join(eol);
            if f.final_nl {
                t.push_str(eol);
            }
            if f.bom {
                t.insert(0, '\u{feff}');
            }
            t
        }

        /// An edit and the value to restore.
        #[derive(Debug, Clone)]
        enum Op {
            Set(String, Scalar),
            Add(String, String),
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]
            #[test]
            fn edits_then_inverses_give_back_the_bytes(
                f in fm(),
                picks in prop::collection::vec((any::<prop::sample::Index>(), any::<i32>(), word(), any_text(), any::<bool>()), 1..10),
            ) {
                let original = render(&f);
                // What each scalar key holds now (the value an inverse restores).
                let mut current: Vec<Option<Scalar>> = f.entries.iter().map(|(_, g, _)| match g {
                    Gen::Int(n) => Some(Scalar::Int(*n)),
                    Gen::Plain(w) => Some(Scalar::Text(w.clone())),
                    Gen::Single(t) | Gen::Double(t) => Some(Scalar::Text(t.clone())),
                    _ => None,
                }).collect();
                let mut ops = Vec::new();
                let mut text = original.clone();
                for (n, (ix, num, w, t, use_num)) in picks.into_iter().enumerate() {
                    let i = ix.index(f.entries.len());
                    let (key, g, _) = &f.entries[i];
                    // Synonyms: a key the note lacks first, matched case-insensitively.
                    let keys = ["absent", &key.to_lowercase()];
                    match &mut current[i] {
                        Some(old) => {
                            let quoted = matches!(g, Gen::Single(_) | Gen::Double(_));
                            let new = if use_num { Scalar::Int(num.into()) } else if quoted { Scalar::Text(t) } else { Scalar::Text(w) };
                            // A number written over quoted text drops the quotes; keep the
                            // quoting regime so the inverse can restore it exactly.
                            let new = match (&new, quoted) {
                                (Scalar::Int(k), true) => Scalar::Text(k.to_string()),
                                _ => new,
                            };
                            let next = set_scalar(&text, &keys, &new).expect("set");
                            if next != text {
                                one_line_changed(&text, &next);
                            }
                            let got = get_scalar(&next, &keys).expect("key").1;
                            match &new {
                                Scalar::Int(k) => prop_assert_eq!(got, k.to_string()),
                                Scalar::Text(s) => prop_assert_eq!(&got, s),
                            }
                            ops.push(Op::Set(key.clone(), old.clone()));
                            *old = new;
                            text = next;
                        }
                        None => {
                            let item = format!("fresh{n}");
                            let next = list_add(&text, &keys, &item).expect("add");
                            prop_assert_ne!(&next, &text);
                            ops.push(Op::Add(key.clone(), item));
                            text = next;
                        }
                    }
                }
                for op in ops.into_iter().rev() {
                    text = match op {
                        Op::Set(k, old) => set_scalar(&text, &[&k], &old).expect("undo set"),
                        Op::Add(k, item) => list_remove(&text, &[&k], &item).expect("undo add"),
                    };
                }
                prop_assert_eq!(text, original);
            }
        }
        /// A generated open-threads file: sections of threads in either style.
        fn threads_file() -> impl Strategy<Value = (String, Vec<String>)> {
            let thread = (any::<bool>(), 0usize..3, any::<bool>());
            let section = (0usize..5, prop::collection::vec(thread, 0..4), 0usize..3);
            (
                prop::collection::vec(section, 1..5),
                any::<bool>(),
                any::<bool>(),
                0usize..2,
            )
                .prop_map(|(sections, crlf, bom, gap)| {
                    let names = ["Urgent", "High", "Medium", "Low", "Resolved"];
                    let mut lines: Vec<String> = vec!["# Open Threads".into()];
                    let mut titles = Vec::new();
                    let mut used = std::collections::HashSet::new();
                    for (k, (name, threads, after)) in sections.into_iter().enumerate() {
                        if !used.insert(name) {
                            continue;
                        }
                        lines.extend(std::iter::repeat_n(
                            String::new(),
                            gap.max(usize::from(k > 0)),
                        ));
                        lines.push(format!("## {}", names[name]));
                        if !threads.is_empty() {
                            lines.extend(std::iter::repeat_n(String::new(), after.min(1)));
                        }
                        for (j, (heading, extra, next)) in threads.into_iter().enumerate() {
                            let title = format!("Thread {k}-{j}");
                            if heading {
                                if j > 0 {
                                    lines.push(String::new());
                                }
                                lines.push(format!("### {title}"));
                                for e in 0..extra {
                                    lines.push(format!("Summary {e} of [[{title}]]."));
                                }
                                if next {
                                    lines.push("→ Next: act.".into());
                                }
                            } else {
                                lines.push(format!("- **{title}** — summary"));
                                for e in 0..extra {
                                    lines.push(format!("  more {e}"));
                                }
                                if next {
                                    lines.push("  → Next: act.".into());
                                }
                            }
                            titles.push(title);
                        }
                    }
                    let eol = if crlf { "\r\n" } else { "\n" };
                    let mut t = lines.join(eol);
                    t.push_str(eol);
                    if bom {
                        t.insert(0, '\u{feff}');
                    }
                    (t, titles)
                })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]
            #[test]
            fn thread_move_only_moves_the_block(
                (text, titles) in threads_file(),
                pick in any::<prop::sample::Index>(),
                to in 0usize..5,
            ) {
                prop_assume!(!titles.is_empty());
                let title = &titles[pick.index(titles.len())];
                let to = ["Urgent", "High", "Medium", "Low", "Resolved"][to];
                let after = thread_move(&text, title, to).expect("move");
                let doc = Doc::parse(&text);
                let (_, threads) = parse_threads(&doc);
                let t = find_thread(&threads, title).expect("thread");
                let block: String = doc.lines[t.start..t.end]
                    .iter()
                    .map(|l| format!("{}{}", l.text, l.eol))
                    .collect();
                let heading = format!("## {to}");
                let existed = text.lines().any(|l| l.trim_end() == heading);
                super::only_moved_to(&text, &after, &block, (!existed).then_some(heading.as_str()));
                prop_assert!(!after.contains("\n\n\n") && !after.contains("\r\n\r\n\r\n"), "{}", after);
                // The thread is now in `to`, and found exactly once.
                let doc2 = Doc::parse(&after);
                let (sections, threads) = parse_threads(&doc2);
                let moved = find_thread(&threads, title).expect("still there");
                let sec = moved.section.and_then(|k| sections.get(k)).expect("in a section");
                prop_assert_eq!(sec.name.as_str(), to);
                prop_assert_eq!(threads.len(), titles.len());
            }
        }
        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]
            #[test]
            fn append_event_adds_exactly_one_line_to_an_existing_day(
                days in prop::collection::vec((1i64..30, 0usize..4, 0usize..3, any::<bool>()), 1..6),
                pick in any::<prop::sample::Index>(),
                crlf in any::<bool>(),
                final_nl in any::<bool>(),
            ) {
                let mut seen = std::collections::HashSet::new();
                let days: Vec<_> = days.into_iter().filter(|d| seen.insert(d.0)).collect();
                let eol = if crlf { "\r\n" } else { "\n" };
                let mut lines = vec!["# Timeline".to_string()];
                for (d, n, marker, suffix) in &days {
                    lines.push(String::new());
                    lines.push(if *suffix { format!("## Day {d} — dusk") } else { format!("## Day {d}") });
                    for k in 0..*n {
                        lines.push(match marker {
                            0 => format!("- event {k}"),
                            1 => format!("* event {k}"),
                            _ => format!("{}. event {k}", k + 1),
                        });
                    }
                }
                let mut text = lines.join(eol);
                if final_nl {
                    text.push_str(eol);
                }
                let day = days[pick.index(days.len())].0;
                let after = append_event(&text, day, Some("noon"), "NEW").expect("append");
                let (b, a) = (super::lines(&text), super::lines(&after));
                prop_assert_eq!(a.len(), b.len() + 1);
                let at = (0..a.len()).find(|&i| a[i].contains("NEW")).expect("new line");
                let mut without: Vec<&str> = a.clone();
                without.remove(at);
                // The line before the new one may have gained the line end the file lacked.
                let rebuilt: String = without.concat();
                let trimmed = |s: &str| s.trim_end_matches(['\r', '\n']).to_string();
                prop_assert_eq!(trimmed(&rebuilt), trimmed(&text));
                prop_assert_eq!(after.ends_with('\n'), text.ends_with('\n') || text.is_empty());
            }

            #[test]
            fn set_temporal_and_back(
                day in -5i64..500,
                time in "[a-z \"\\\\]{0,10}",
                spaced in any::<bool>(),
            ) {
                let original = if spaced {
                    "{\n  \"current_day\": 6,\n  \"current_time\": \"evening\"\n}\n"
                } else {
                    "{\"current_day\":6,\"current_time\":\"evening\"}"
                };
                let t = set_temporal(original, Some(day), Some(&time)).expect("set");
                let v: serde_json::Value = serde_json::from_str(&t).expect("json");
                prop_assert_eq!(v["current_day"].as_i64(), Some(day));
                prop_assert_eq!(v["current_time"].as_str(), Some(time.as_str()));
                let back = set_temporal(&t, Some(6), Some("evening")).expect("back");
                prop_assert_eq!(back, original);
            }
        }
    }

    #[test]
    fn inline_fields_are_the_ones_the_reader_reads() {
        // The first of a key is the one read, and edited.
        let t = "# X\nhp:: 1\nhp:: 2\n";
        assert_eq!(get_field(t, &["hp"]), Some(("hp".into(), "1".into())));
        assert_eq!(
            set_field(t, &["hp"], &Scalar::Int(9)).expect("set"),
            "# X\nhp:: 9\nhp:: 2\n"
        );
        // Spellings in turn: an inline `hp_current::` is read before the frontmatter's `hp`.
        let t = "---\nhp: 30\n---\nhp_current:: 12\n";
        let keys = ["hp_current", "hp"];
        assert_eq!(
            get_field(t, &keys),
            Some(("hp_current".into(), "12".into()))
        );
        assert_eq!(
            set_field(t, &keys, &Scalar::Int(5)).expect("set"),
            "---\nhp: 30\n---\nhp_current:: 5\n"
        );
        // Inline code, comments and HTML hold no fields.
        let t = "A `mood:: calm` span. %% mood:: sad %%\n<b>mood:: odd</b>\n\n[mood:: wary]\n";
        assert_eq!(
            get_field(t, &["mood"]),
            Some(("mood".into(), "wary".into()))
        );
        assert_eq!(
            set_field(t, &["mood"], &Scalar::Text("glad".into())).expect("set"),
            t.replace("[mood:: wary]", "[mood:: glad]")
        );
        // A key spelled with spaces and emphasis, and a BOM before it.
        let t = "\u{feff}- **Max HP**:: 30\n";
        assert_eq!(
            get_field(t, &["max_hp"]),
            Some(("Max HP".into(), "30".into()))
        );
        assert_eq!(
            set_field(t, &["max_hp"], &Scalar::Int(31)).expect("set"),
            "\u{feff}- **Max HP**:: 31\n"
        );
        // A value that would end the field early is refused, naming the field and line.
        let t = "# X\n\n[mood:: wary] today\n";
        let e = set_field(t, &["mood"], &Scalar::Text("a] b".into())).expect_err("refused");
        assert!(e.to_string().contains("`mood::` on line 3"), "{e}");
    }

    #[test]
    fn inline_fields_are_edited_where_canon_reads_them() {
        let t = "---\nname: Odessa\n---\n# Odessa\n\nhp:: 22\n- location:: [[The Docks]]\nShe is [mood:: wary] today.\n```\nhp:: 99\n```\n";
        assert_eq!(get_field(t, &["hp"]), Some(("hp".into(), "22".into())));
        let out = set_field(t, &["hp_current", "hp"], &Scalar::Int(15)).expect("set");
        assert_eq!(out, t.replace("hp:: 22", "hp:: 15"));
        let out = set_field(
            t,
            &["location"],
            &Scalar::Text("[[The Assay Office]]".into()),
        )
        .expect("set");
        assert_eq!(out, t.replace("[[The Docks]]", "[[The Assay Office]]"));
        let out = set_field(t, &["mood"], &Scalar::Text("friendly".into())).expect("set");
        assert_eq!(out, t.replace("[mood:: wary]", "[mood:: friendly]"));
        // Not in the frontmatter nor inline: a new frontmatter line.
        let out = set_field(t, &["gold"], &Scalar::Int(3)).expect("set");
        assert!(
            out.starts_with("---\nname: Odessa\ngold: 3\n---\n"),
            "{out}"
        );
        // The frontmatter wins over an inline field, as canon reads it.
        let both = "---\nhp: 30\n---\nhp:: 22\n";
        assert_eq!(
            set_field(both, &["hp"], &Scalar::Int(1)).expect("set"),
            "---\nhp: 1\n---\nhp:: 22\n"
        );
        // CRLF and no frontmatter.
        let crlf = "# X\r\nhp:: 5\r\nend\r\n";
        assert_eq!(
            set_field(crlf, &["hp"], &Scalar::Int(6)).expect("set"),
            "# X\r\nhp:: 6\r\nend\r\n"
        );
    }

    #[rstest]
    #[case::in_place(
        "---\n{name: Kit, hp: 20, gold: 35}\n---\n",
        &["hp"], Scalar::Int(5),
        "---\n{name: Kit, hp: 5, gold: 35}\n---\n"
    )]
    #[case::added_before_the_brace(
        "---\n{name: Kit, hp: 20 }\n---\n",
        &["ac"], Scalar::Int(13),
        "---\n{name: Kit, hp: 20, ac: 13 }\n---\n"
    )]
    #[case::empty_mapping("---\n{}\n---\n", &["hp"], Scalar::Int(5), "---\n{hp: 5}\n---\n")]
    #[case::over_lines(
        "---\n{name: Kit,\n  hp: 20,\n  class: Ranger\n}\n---\n",
        &["class"], text("Druid"),
        "---\n{name: Kit,\n  hp: 20,\n  class: Druid\n}\n---\n"
    )]
    #[case::quoted_key_and_value(
        "---\n{\"name\": 'Kit', 'role': \"guide\"}\n---\n",
        &["role"], text("the \"Red\" guide"),
        "---\n{\"name\": 'Kit', 'role': \"the \\\"Red\\\" guide\"}\n---\n"
    )]
    #[case::a_comma_is_quoted(
        "---\n{name: Kit, role: guide}\n---\n",
        &["role"], text("guide, scout"),
        "---\n{name: Kit, role: \"guide, scout\"}\n---\n"
    )]
    #[case::annotation_kept(
        "---\n{name: Kit, hp: \"20 (3d8 + 6)\"}\n---\n",
        &["hp"], Scalar::Int(9),
        "---\n{name: Kit, hp: \"9 (3d8 + 6)\"}\n---\n"
    )]
    fn a_flow_mapping_frontmatter_is_edited_in_its_own_style(
        #[case] before: &str,
        #[case] keys: &[&str],
        #[case] value: Scalar,
        #[case] after: &str,
    ) {
        assert_eq!(set_scalar(before, keys, &value).expect("sets"), after);
    }

    #[test]
    fn a_flow_mapping_frontmatter_lists_and_reads_in_place() {
        let t = "---\n{name: Kit, inventory: [rope, torch], hp: 20}\n---\n";
        let added = list_add(t, &["inventory"], "lamp").expect("adds");
        assert_eq!(
            added,
            "---\n{name: Kit, inventory: [rope, torch, lamp], hp: 20}\n---\n"
        );
        assert_eq!(
            get_scalar(&added, &["hp"]),
            Some(("hp".to_string(), "20".to_string()))
        );
        let new = list_add(t, &["conditions"], "poisoned").expect("adds");
        assert_eq!(
            new,
            "---\n{name: Kit, inventory: [rope, torch], hp: 20, conditions: [poisoned]}\n---\n"
        );
    }

    #[rstest]
    #[case::value_over_lines("---\n{name: Kit,\n hp: 20 and\n more}\n---\n")]
    #[case::never_closed("---\n{name: Kit, hp: 20\n---\n")]
    #[case::key_without_value("---\n{name: Kit, hp}\n---\n")]
    fn a_flow_mapping_it_cannot_take_apart_is_refused(#[case] t: &str) {
        let e = set_scalar(t, &["hp"], &Scalar::Int(5)).expect_err("refused");
        assert!(
            matches!(e, EditError::FlowFrontmatter { line: 2, .. }),
            "{e}"
        );
        assert!(e.to_string().contains("edit it by hand"), "{e}");
    }

    #[rstest]
    #[case::plain("---\nhp: 32 (5d8 + 10)\n---\n", "---\nhp: 30 (5d8 + 10)\n---\n")]
    #[case::unit(
        "---\nhp: 32 hp  # after the fall\n---\n",
        "---\nhp: 30 hp  # after the fall\n---\n"
    )]
    #[case::quoted("---\nhp: '32 (5d8 + 10)'\n---\n", "---\nhp: '30 (5d8 + 10)'\n---\n")]
    #[case::pair_untouched("---\nhp: 17\n---\n", "---\nhp: 30\n---\n")]
    fn a_number_keeps_its_note(#[case] before: &str, #[case] after: &str) {
        assert_eq!(
            set_scalar(before, &["hp"], &Scalar::Int(30)).expect("sets"),
            after
        );
    }

    #[rstest]
    #[case::flow(
        "---\ntags: [npc/alive, iff/positive]\n---\n",
        "---\ntags: [npc/dead, iff/positive]\n---\n"
    )]
    #[case::block_quoted(
        "---\ntags:\n  - \"#npc/alive\"\n  - npc/alive-ish\n---\n",
        "---\ntags:\n  - \"#npc/dead\"\n  - npc/alive-ish\n---\n"
    )]
    #[case::body_not_code(
        "# Hob #NPC/Alive\n`#npc/alive` and\n```\n#npc/alive\n```\n",
        "# Hob #npc/dead\n`#npc/alive` and\n```\n#npc/alive\n```\n"
    )]
    fn a_tag_is_renamed_where_it_is_kept(#[case] before: &str, #[case] after: &str) {
        // `` `#npc/alive` `` is no tag to the reader either (a tag follows a space).
        assert_eq!(
            tag_rename(before, "npc/alive", "npc/dead").expect("renames"),
            after
        );
    }

    proptest::proptest! {
        /// Whatever a `{...}` frontmatter or a tag holds, the editors answer (an edit or a
        /// reason) and never panic; an edit leaves the rest of the note as it was.
        #[test]
        fn flow_frontmatter_and_tags_never_panic(
            inner in "[a-z:, \"'\\[\\]{}#é\n-]{0,40}",
            tag in "[a-zé/#-]{1,12}",
        ) {
            let t = format!("---\n{{{inner}}}\n---\n# X #{tag}\n");
            if let Ok(out) = set_scalar(&t, &["hp"], &Scalar::Int(5)) {
                let tail = format!("---\n# X #{}\n", tag);
                proptest::prop_assert!(out.ends_with(&tail), "{}", out);
            }
            let _ = get_scalar(&t, &["hp"]);
            let _ = list_add(&t, &["tags"], "npc");
            let _ = tag_rename(&t, &tag, "npc/dead");
            let _ = tags_as_written(&t);
        }
    }

    #[test]
    fn an_inline_field_number_keeps_its_note() {
        assert_eq!(
            set_field("# X\nhp:: 32 (5d8 + 10)\n", &["hp"], &Scalar::Int(30)).expect("set"),
            "# X\nhp:: 30 (5d8 + 10)\n"
        );
    }

    #[test]
    fn a_tag_the_note_lacks_is_an_error() {
        let e = tag_rename("---\ntags: [npc]\n---\n", "npc/alive", "npc/dead").expect_err("no tag");
        assert_eq!(
            e,
            EditError::TagNotFound {
                tag: "npc/alive".into()
            }
        );
    }
}
