//! YAML for frontmatter and statblocks, read into a value type the vault owns.
//!
//! Why our own [`Value`]: the YAML library is an implementation detail (serde_yaml was
//! deprecated under us once); the rest of vaultdm reads frontmatter through this type and
//! never sees a parser's types. Why two parsers:
//!
//! - [`parse_fast`] reads the frontmatter nearly every note has (a flat `key: value` block
//!   whose values are plain or quoted scalars, block lists of scalars or one-line flow lists)
//!   in one pass over the lines. Whatever it is not sure of (an escape, a tab, a nested map,
//!   a multi-line value, anything that would be a YAML error) makes it give up (`None`).
//! - [`parse_full`] reads everything else with `granit-parser`'s event API and builds the
//!   value from the events, within budgets: 32 levels of nesting, 256 aliases, and at most
//!   [`MAX_ALIAS_NODES`] values copied through aliases (so "billion laughs" stays small).
//!
//! [`parse`] tries the first, then the second; a property test holds them to the same
//! answer. Scalars resolve as the YAML 1.2 core schema with the choices serde_yaml made
//! (which vaults were read with before): `yes`/`no`/`on`/`off` and dates are text, `~` and
//! `null` are null, `true`/`True`/`TRUE` are booleans, `007` is text (a leading zero), `0x1F`
//! is 31, `1e3` is a float, and an integer too large for 64 bits stays text.

use granit_parser::{ErrorKind as Kind, Event, Parser, ScalarStyle, ScanError, Span, Tag};
use std::borrow::Cow;

/// Deepest nesting of lists and mappings accepted (the top-level mapping is level 1).
pub const MAX_DEPTH: usize = 32;
/// Most aliases (`*name`) accepted in one document.
pub const MAX_ALIASES: usize = 256;
/// Most values that aliases may copy in one document, all aliases together.
pub const MAX_ALIAS_NODES: usize = 10_000;

/// A YAML value.
#[derive(Debug, Clone, Default)]
pub enum Value {
    /// `~`, `null` or nothing.
    #[default]
    Null,
    /// `true` / `false` (also `True`, `TRUE`, …; not `yes`/`no`).
    Bool(bool),
    /// An integer that fits in 64 bits.
    Int(i64),
    /// A finite float, `.inf` or `.nan`.
    Float(f64),
    /// Text: quoted, block (`|`, `>`) or plain text that is no other type (kept inline
    /// when short, as most frontmatter values are).
    String(compact_str::CompactString),
    /// A block or flow list.
    List(Vec<Value>),
    /// A block or flow mapping.
    Map(Map),
}

impl PartialEq for Value {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Int(a), Value::Int(b)) => a == b,
            // Bit equality: `.nan` equals `.nan`, so two reads of one text are equal.
            (Value::Float(a), Value::Float(b)) => a.to_bits() == b.to_bits(),
            (Value::String(a), Value::String(b)) => a == b,
            (Value::List(a), Value::List(b)) => a == b,
            (Value::Map(a), Value::Map(b)) => a == b,
            _ => false,
        }
    }
}

impl Value {
    /// Gives back the growth slack of its lists and maps, all the way down: parsed
    /// frontmatter lives for the whole session.
    pub fn shrink_to_fit(&mut self) {
        match self {
            Value::List(items) => {
                items.iter_mut().for_each(Value::shrink_to_fit);
                items.shrink_to_fit();
            }
            Value::Map(map) => {
                for e in &mut map.entries {
                    e.key.shrink_to_fit();
                    e.value.shrink_to_fit();
                }
                map.entries.shrink_to_fit();
            }
            _ => {}
        }
    }

    /// Number of values in this one, itself included.
    pub fn count(&self) -> usize {
        match self {
            Value::List(items) => 1 + items.iter().map(Value::count).sum::<usize>(),
            Value::Map(m) => {
                1 + m
                    .iter()
                    .map(|e| e.key.count() + e.value.count())
                    .sum::<usize>()
            }
            _ => 1,
        }
    }
}

/// A float as YAML writes it: `1000.0`, `0.5`, `1e300`, `.inf`, `-.inf`, `.nan`.
pub fn float_text(f: f64) -> String {
    if f.is_nan() {
        ".nan".into()
    } else if f.is_infinite() {
        if f > 0.0 { ".inf" } else { "-.inf" }.into()
    } else {
        format!("{f:?}")
    }
}

/// One `key: value` pair of a mapping.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The key; usually text, but YAML allows any value.
    pub key: Value,
    /// The value.
    pub value: Value,
    /// 1-based line of the key in the parsed text.
    pub line: usize,
}

/// A mapping: its entries in document order, repeated keys included (the caller decides
/// what a repeated key means).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Map {
    entries: Vec<Entry>,
}

impl Map {
    /// The value of the last entry whose key is the text `key` (exact match).
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entries
            .iter()
            .rev()
            .find(|e| matches!(&e.key, Value::String(k) if k == key))
            .map(|e| &e.value)
    }

    /// The entries in document order.
    pub fn iter(&self) -> std::slice::Iter<'_, Entry> {
        self.entries.iter()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when the mapping has no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Adds an entry at the end.
    pub fn push(&mut self, key: Value, value: Value, line: usize) {
        self.entries.push(Entry { key, value, line });
    }
}

impl IntoIterator for Map {
    type Item = Entry;
    type IntoIter = std::vec::IntoIter<Entry>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl<'a> IntoIterator for &'a Map {
    type Item = &'a Entry;
    type IntoIter = std::slice::Iter<'a, Entry>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter()
    }
}

/// What kind of problem stopped a parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The text is not valid YAML.
    Syntax,
    /// Valid or not, it is over a budget (nesting, aliases, alias copies).
    TooComplex,
}

/// Why a text could not be read as YAML, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} at line {line}, column {column}")]
pub struct Error {
    /// Syntax error or over a budget.
    pub kind: ErrorKind,
    /// 1-based line in the parsed text (never past its last line).
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
    /// What is wrong, for a GM: no line number in it.
    pub message: String,
    /// A `[` or `{` opened on an earlier line and still open where the error was found
    /// (its 1-based line and the bracket): often the real cause, a flow list never closed.
    pub unclosed: Option<(usize, char)>,
}

/// Reads a YAML document: the fast path when it is sure, else the full parser.
pub fn parse(text: &str) -> Result<Value, Error> {
    match parse_fast(text) {
        Some(v) => Ok(v),
        None => parse_full(text),
    }
}

// ---------------------------------------------------------------------------------------
// Scalars

/// Resolves a plain (unquoted) scalar: null, boolean, integer, float or text.
pub fn resolve_plain(s: &str) -> Value {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    // Every number starts with a digit, a sign or a dot.
    if !s.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '-' | '+' | '.')) {
        return Value::String(s.into());
    }
    match parse_int(s) {
        Int::Yes(i) => return Value::Int(i),
        Int::TooLarge => return Value::String(s.into()),
        Int::No => {}
    }
    if !leading_zero_digits(s) {
        if let Some(f) = parse_float(s) {
            return Value::Float(f);
        }
    }
    Value::String(s.into())
}

enum Int {
    Yes(i64),
    TooLarge,
    No,
}

/// `[-+]?` then decimal without a leading zero, or `0x` / `0o` / `0b` digits.
fn parse_int(s: &str) -> Int {
    let (neg, unsigned) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, body) = if let Some(r) = unsigned.strip_prefix("0x") {
        (16, r)
    } else if let Some(r) = unsigned.strip_prefix("0o") {
        (8, r)
    } else if let Some(r) = unsigned.strip_prefix("0b") {
        (2, r)
    } else {
        (10, unsigned)
    };
    // `from_str_radix` would take a sign; YAML takes one only before the prefix.
    if body.is_empty()
        || !body.bytes().all(|b| (b as char).is_digit(radix))
        || (radix == 10 && leading_zero_digits(body))
    {
        return Int::No;
    }
    let Ok(magnitude) = u64::from_str_radix(body, radix) else {
        return Int::TooLarge;
    };
    let value = if neg {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    };
    value.map_or(Int::TooLarge, Int::Yes)
}

/// `007`, `-012`: digits after a leading zero are text, not a number.
fn leading_zero_digits(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    s.len() > 1 && s.starts_with('0') && s[1..].bytes().all(|b| b.is_ascii_digit())
}

fn parse_float(s: &str) -> Option<f64> {
    let unsigned = match s.strip_prefix('+') {
        Some(u) if u.starts_with(['+', '-']) => return None,
        Some(u) => u,
        None => s,
    };
    match unsigned {
        ".inf" | ".Inf" | ".INF" => return Some(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => return Some(f64::NEG_INFINITY),
        _ => {}
    }
    if matches!(s, ".nan" | ".NaN" | ".NAN") {
        return Some(f64::NAN);
    }
    // Rust's float syntax is YAML's here (digits, one dot, an exponent); words such as
    // `inf` or `nan` and overflow come back infinite or NaN and are refused.
    unsigned.parse::<f64>().ok().filter(|f| f.is_finite())
}

// ---------------------------------------------------------------------------------------
// The fast path

/// Reads the common shape of frontmatter in one pass, or `None` when the text holds
/// anything else (then [`parse_full`] decides, including whether it is an error).
///
/// Accepted: blank and comment lines; top-level `key: value` lines whose key is plain text
/// on one line; values that are empty, plain scalars on one line, single- or double-quoted
/// scalars on one line (no backslash escapes), and flow lists of such scalars (nested lists
/// included, so an unquoted `[[Note]]`); a key with no value followed by `- item` lines at
/// one indentation. A trailing ` # comment` after any of them.
pub fn parse_fast(text: &str) -> Option<Value> {
    let mut map = Map::default();
    // A key with no value yet: its entry index, then the indent of its `- ` items.
    let mut open: Option<(usize, Option<usize>)> = None;
    for (i, line) in text.split('\n').enumerate() {
        let indent = line.bytes().take_while(|&b| b == b' ').count();
        let rest = &line[indent..];
        if rest.is_empty() || rest.starts_with('#') {
            if !fast_chars_ok(line) {
                return None;
            }
            continue;
        }
        // Each line's characters are checked once it has read well, so a line the fast
        // path gives up on (a huge `[[[[…`) is not scanned twice.
        if let Some(item) = rest.strip_prefix('-') {
            // A `- item` line of the list under the open key, all at one indentation.
            let (idx, item_indent) = open.as_mut()?;
            if *item_indent.get_or_insert(indent) != indent {
                return None;
            }
            let item = item.strip_prefix(' ')?.trim_start_matches(' ');
            if item.is_empty() || item.starts_with('#') {
                return None; // an empty item: rare, left to the full parser
            }
            let (value, tail) = block_value(item)?;
            let Value::List(items) = &mut map.entries[*idx].value else {
                return None;
            };
            if !tail_ok(tail) || !fast_chars_ok(line) {
                return None;
            }
            items.push(value);
            continue;
        }
        if indent > 0 {
            return None; // a nested mapping or a continuation line
        }
        if let Some((idx, None)) = open.take() {
            map.entries[idx].value = Value::Null;
        }
        let (key, after) = fast_key(line)?;
        let value_text = after.trim_start_matches(' ');
        if value_text.is_empty() || value_text.starts_with('#') {
            if !fast_chars_ok(line) {
                return None;
            }
            open = Some((map.entries.len(), None));
            map.push(resolve_plain(key), Value::List(Vec::new()), i + 1);
            continue;
        }
        let (value, tail) = block_value(value_text)?;
        if !tail_ok(tail) || !fast_chars_ok(line) {
            return None;
        }
        map.push(resolve_plain(key), value, i + 1);
    }
    if let Some((idx, None)) = open {
        map.entries[idx].value = Value::Null;
    }
    Some(if map.is_empty() {
        Value::Null
    } else {
        Value::Map(map)
    })
}

/// No character the fast path leaves to the full parser in a line: tabs, CR, other
/// controls, BOMs, non-characters, and Unicode line breaks (NEL, LS, PS).
fn fast_chars_ok(line: &str) -> bool {
    let bytes = line.as_bytes();
    // Most lines are printable ASCII.
    if bytes.iter().all(|&b| (0x20..0x7f).contains(&b)) {
        return true;
    }
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            if b < 0x20 || b == 0x7f {
                return false;
            }
            i += 1;
            continue;
        }
        match (b, bytes.get(i + 1), bytes.get(i + 2)) {
            // C1 controls and NEL (U+0080..U+009F).
            (0xc2, Some(0x80..=0x9f), _) => return false,
            // LS, PS (U+2028, U+2029).
            (0xe2, Some(0x80), Some(0xa8 | 0xa9)) => return false,
            // BOM (U+FEFF), U+FFFE, U+FFFF.
            (0xef, Some(0xbb), Some(0xbf)) | (0xef, Some(0xbf), Some(0xbe | 0xbf)) => return false,
            _ => {}
        }
        i += 1;
    }
    true
}

/// Characters that cannot start a plain scalar (YAML's indicators).
fn is_indicator(c: u8) -> bool {
    matches!(
        c,
        b'-' | b'?'
            | b':'
            | b','
            | b'['
            | b']'
            | b'{'
            | b'}'
            | b'#'
            | b'&'
            | b'*'
            | b'!'
            | b'|'
            | b'>'
            | b'\''
            | b'"'
            | b'%'
            | b'@'
            | b'`'
    )
}

/// A top-level plain key and the text after its `:`.
fn fast_key(line: &str) -> Option<(&str, &str)> {
    let b = line.as_bytes();
    if b.is_empty() || is_indicator(b[0]) || b[0] == b' ' {
        return None;
    }
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b':' if i + 1 == b.len() || b[i + 1] == b' ' => break,
            b'#' if b[i - 1] == b' ' => return None,
            _ => {}
        }
        i += 1;
    }
    // No `: ` on the line, a key with trailing spaces, or one too long to be a simple key.
    if i == b.len() || b[i - 1] == b' ' || i > 512 {
        return None;
    }
    Some((&line[..i], &line[i + 1..]))
}

/// Only spaces, then maybe a comment, may follow a value.
fn tail_ok(tail: &str) -> bool {
    let rest = tail.trim_start_matches(' ');
    rest.is_empty() || (rest.starts_with('#') && rest.len() < tail.len())
}

/// A value in block context, starting at its first character: returns it and what follows.
fn block_value(s: &str) -> Option<(Value, &str)> {
    match s.as_bytes().first()? {
        b'"' | b'\'' => quoted(s),
        b'[' => flow_list(s, 1),
        &c if is_indicator(c) && !plain_start_ok(s) => None,
        _ => {
            // A plain scalar runs to ` #` or the end of the line.
            let end = comment_start(s).unwrap_or(s.len());
            let plain = s[..end].trim_end_matches(' ');
            if plain.contains(": ") || plain.ends_with(':') {
                return None;
            }
            Some((resolve_plain(plain), &s[end..]))
        }
    }
}

/// Where ` #` (a comment after a value) starts in a line, if anywhere. `#` is rare, so
/// searching for it alone is faster than searching for the pair.
fn comment_start(s: &str) -> Option<usize> {
    s.match_indices('#')
        .map(|(i, _)| i)
        .find(|&i| i > 0 && s.as_bytes()[i - 1] == b' ')
        .map(|i| i - 1)
}

/// `-`, `?` and `:` may start a plain scalar when a safe character follows (`-5`, `:x`).
fn plain_start_ok(s: &str) -> bool {
    let b = s.as_bytes();
    matches!(b[0], b'-' | b'?' | b':')
        && b.get(1)
            .is_some_and(|&c| c != b' ' && !is_indicator(c) && c.is_ascii_graphic())
}

/// A quoted scalar closed on the same line, without escapes.
fn quoted(s: &str) -> Option<(Value, &str)> {
    let q = s.as_bytes()[0];
    let body = &s[1..];
    if q == b'"' {
        let end = body.find(['"', '\\'])?;
        if body.as_bytes()[end] == b'\\' {
            return None;
        }
        return Some((Value::String(body[..end].into()), &body[end + 1..]));
    }
    // Single quotes: `''` is a quote.
    let mut out = String::new();
    let mut rest = body;
    loop {
        let end = rest.find('\'')?;
        out.push_str(&rest[..end]);
        if rest[end + 1..].starts_with('\'') {
            out.push('\'');
            rest = &rest[end + 2..];
        } else {
            return Some((Value::String(out.into()), &rest[end + 1..]));
        }
    }
}

/// A flow list closed on the same line: `[a, "b", [c]]`. Plain items hold no `:`, `#`,
/// brackets, braces or commas; no empty item, no trailing comma.
fn flow_list(s: &str, depth: usize) -> Option<(Value, &str)> {
    if depth > 8 {
        return None;
    }
    let mut rest = s[1..].trim_start_matches(' ');
    let mut items = Vec::new();
    if let Some(r) = rest.strip_prefix(']') {
        return Some((Value::List(items), r));
    }
    loop {
        let (item, r) = match rest.as_bytes().first()? {
            b'"' | b'\'' => quoted(rest)?,
            b'[' => flow_list(rest, depth + 1)?,
            &c if is_indicator(c) && !plain_start_ok(rest) => return None,
            _ => {
                let end = rest.find([',', ']', '[', '{', '}', ':', '#'])?;
                if !matches!(rest.as_bytes()[end], b',' | b']') {
                    return None;
                }
                let plain = rest[..end].trim_end_matches(' ');
                if plain.is_empty() {
                    return None;
                }
                (resolve_plain(plain), &rest[end..])
            }
        };
        items.push(item);
        rest = r.trim_start_matches(' ');
        match rest.as_bytes().first()? {
            b']' => return Some((Value::List(items), &rest[1..])),
            b',' => {
                rest = rest[1..].trim_start_matches(' ');
                if rest.starts_with([']', ',']) {
                    return None;
                }
            }
            _ => return None,
        }
    }
}

// ---------------------------------------------------------------------------------------
// The full parser

enum Frame {
    List {
        items: Vec<Value>,
        anchor: usize,
        flow_line: Option<usize>,
    },
    Map {
        map: Map,
        anchor: usize,
        flow_line: Option<usize>,
        key: Option<Value>,
        key_line: usize,
    },
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    root: Option<Value>,
    /// Anchored values by anchor id, with their size.
    anchors: Vec<Option<(Value, usize)>>,
    aliases: usize,
    alias_nodes: usize,
}

impl Builder {
    /// A node starts on `line`: if it is a mapping key, remember where.
    fn begin(&mut self, line: usize) {
        if let Some(Frame::Map {
            key: None,
            key_line,
            ..
        }) = self.stack.last_mut()
        {
            *key_line = line;
        }
    }

    /// A node is complete.
    fn add(&mut self, value: Value, anchor: usize) {
        if anchor != 0 {
            if self.anchors.len() <= anchor {
                self.anchors.resize(anchor + 1, None);
            }
            let n = value.count();
            self.anchors[anchor] = Some((value.clone(), n));
        }
        match self.stack.last_mut() {
            None => self.root = Some(value),
            Some(Frame::List { items, .. }) => items.push(value),
            Some(Frame::Map {
                map, key, key_line, ..
            }) => match key.take() {
                None => *key = Some(value),
                Some(k) => map.push(k, value, *key_line),
            },
        }
    }

    fn open(&mut self, frame: Frame, line: usize, column: usize) -> Result<(), Error> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(too_deep(line, column));
        }
        self.stack.push(frame);
        Ok(())
    }

    fn close(&mut self) {
        match self.stack.pop() {
            Some(Frame::List { items, anchor, .. }) => self.add(Value::List(items), anchor),
            Some(Frame::Map {
                mut map,
                anchor,
                key,
                key_line,
                ..
            }) => {
                if let Some(k) = key {
                    map.push(k, Value::Null, key_line);
                }
                self.add(Value::Map(map), anchor);
            }
            None => {}
        }
    }

    fn alias(&mut self, id: usize, line: usize, column: usize) -> Result<(), Error> {
        self.aliases += 1;
        if self.aliases > MAX_ALIASES {
            return Err(Error {
                kind: ErrorKind::TooComplex,
                line,
                column,
                message: format!("uses more than {MAX_ALIASES} YAML aliases (`*name`)"),
                unclosed: None,
            });
        }
        let Some(Some((value, n))) = self.anchors.get(id) else {
            return Err(Error {
                kind: ErrorKind::Syntax,
                line,
                column,
                message: "an alias (`*name`) refers to the list or mapping it is inside".into(),
                unclosed: None,
            });
        };
        self.alias_nodes += n;
        if self.alias_nodes > MAX_ALIAS_NODES {
            return Err(Error {
                kind: ErrorKind::TooComplex,
                line,
                column,
                message: format!(
                    "copies more than {MAX_ALIAS_NODES} values through YAML aliases (`*name`)"
                ),
                unclosed: None,
            });
        }
        let value = value.clone();
        self.add(value, 0);
        Ok(())
    }

    /// The outermost flow collection still open that began before `line`: its line and
    /// bracket.
    fn open_flow_before(&self, line: usize) -> Option<(usize, char)> {
        self.stack
            .iter()
            .filter_map(|f| match f {
                Frame::List { flow_line, .. } => flow_line.map(|l| (l, '[')),
                Frame::Map { flow_line, .. } => flow_line.map(|l| (l, '{')),
            })
            .find(|&(l, _)| l < line)
    }
}

/// The first tab at or after 1-based (`line`, `column`), as a 1-based (line, column).
fn next_tab(text: &str, line: usize, column: usize) -> Option<(usize, usize)> {
    for (i, l) in text.split('\n').enumerate().skip(line.saturating_sub(1)) {
        let from = if i + 1 == line {
            column.saturating_sub(1)
        } else {
            0
        };
        if let Some(c) = l.chars().skip(from).position(|c| c == '\t') {
            return Some((i + 1, from + c + 1));
        }
    }
    None
}

fn too_deep(line: usize, column: usize) -> Error {
    Error {
        kind: ErrorKind::TooComplex,
        line,
        column,
        message: format!("nests lists or mappings more than {MAX_DEPTH} deep"),
        unclosed: None,
    }
}

fn is_core(tag: Option<&Cow<'_, Tag>>, suffix: &str) -> bool {
    tag.is_some_and(|t| t.is_yaml_core_schema_tag(suffix))
}

fn scalar(
    text: Cow<'_, str>,
    style: ScalarStyle,
    tag: Option<&Cow<'_, Tag>>,
    span: &Span,
) -> Value {
    // The parser reports an empty node as a plain `~`.
    let empty = span.start.index() == span.end.index();
    let text = if empty && style == ScalarStyle::Plain {
        Cow::Borrowed("")
    } else {
        text
    };
    if is_core(tag, "str") {
        return Value::String(text.into());
    }
    let resolve = style == ScalarStyle::Plain
        || ["null", "bool", "int", "float"]
            .iter()
            .any(|s| is_core(tag, s));
    if resolve {
        resolve_plain(&text)
    } else {
        Value::String(text.into())
    }
}

/// Reads any YAML document into a [`Value`], within the nesting and alias budgets.
/// A stream of more than one document is an error.
pub fn parse_full(text: &str) -> Result<Value, Error> {
    let options = granit_parser::options! {
        flow_nesting_limit: MAX_DEPTH,
        block_nesting_limit: MAX_DEPTH,
        // As libyaml read it: a BOM inside a value is part of the text, and a block scalar
        // that ends the input without a line break gets none.
        bom_inside_document_as_content: true,
        block_scalar_eof_without_line_feed: true,
    };
    let last_line = text.split('\n').count().max(1);
    let last_line = if text.ends_with('\n') && last_line > 1 {
        last_line - 1
    } else {
        last_line
    };
    let mut b = Builder::default();
    let mut documents = 0;
    for next in Parser::new_from_str_with_options(text, options) {
        let (event, span) = match next {
            Ok(x) => x,
            Err(e) => return Err(scan_error(&e, &b, text, last_line)),
        };
        let line = span.start.line();
        let column = span.start.col() + 1;
        match event {
            Event::DocumentStart(..) => {
                documents += 1;
                if documents > 1 {
                    return Err(Error {
                        kind: ErrorKind::Syntax,
                        line: line.min(last_line),
                        column,
                        message:
                            "a second YAML document starts here (`---` or `...` inside the block)"
                                .into(),
                        unclosed: None,
                    });
                }
            }
            Event::Scalar(s, style, anchor, tag) => {
                b.begin(line);
                let v = scalar(s, style, tag.as_ref(), &span);
                b.add(v, anchor);
            }
            Event::SequenceStart(style, anchor, _) => {
                b.begin(line);
                let flow_line = (style == granit_parser::StructureStyle::Flow).then_some(line);
                b.open(
                    Frame::List {
                        items: Vec::new(),
                        anchor,
                        flow_line,
                    },
                    line,
                    column,
                )?;
            }
            Event::MappingStart(style, anchor, _) => {
                b.begin(line);
                let flow_line = (style == granit_parser::StructureStyle::Flow).then_some(line);
                b.open(
                    Frame::Map {
                        map: Map::default(),
                        anchor,
                        flow_line,
                        key: None,
                        key_line: line,
                    },
                    line,
                    column,
                )?;
            }
            Event::SequenceEnd | Event::MappingEnd => b.close(),
            Event::Alias(id) => {
                b.begin(line);
                b.alias(id, line, column)?;
            }
            _ => {}
        }
    }
    Ok(b.root.unwrap_or(Value::Null))
}

/// A parser error with a message a GM can act on, clamped to the text's lines.
fn scan_error(e: &ScanError, b: &Builder, text: &str, last_line: usize) -> Error {
    let mark = e.marker();
    let mut line = mark.line().max(1);
    let mut column = mark.col() + 1;
    if line > last_line {
        // Past the end: point at the last line, after its last character.
        line = last_line;
        column = text
            .split('\n')
            .nth(last_line - 1)
            .map_or(0, |l| l.chars().count())
            + 1;
    }
    // The parser may stop at the end of the token before a tab: point at the tab itself.
    if matches!(
        e.kind(),
        Kind::TabNotAllowed
            | Kind::TabInBlockIndentation
            | Kind::TabInIndentation
            | Kind::TabAtBlockScalarStart
            | Kind::TabInPlainScalar
    ) {
        if let Some((l, c)) = next_tab(text, line, column) {
            (line, column) = (l, c);
        }
    }
    let unclosed = b.open_flow_before(line);
    // Not at the first character of its line: something follows a complete value.
    let mid_line = text
        .split('\n')
        .nth(line - 1)
        .is_some_and(|l| l.chars().take_while(|c| *c == ' ').count() + 1 < column);
    let kind = match e.kind() {
        Kind::RecursionLimitExceeded => return too_deep(line, column),
        _ => ErrorKind::Syntax,
    };
    let message = match e.kind() {
        Kind::MappingValueNotAllowed => {
            "mapping values are not allowed in this context (quote a value that contains `: `)".to_string()
        }
        Kind::BlockSequenceEntryNotAllowed => {
            "block sequence entries are not allowed in this context (a `- ` list item must start its own line)".to_string()
        }
        Kind::UnclosedQuotedScalar => "a quoted value is never closed (a `\"` or `'` without its partner)".to_string(),
        Kind::UnclosedFlowCollection { open } => format!("a `{open}` is never closed"),
        Kind::UnexpectedEofFlowSequence => "a `[` is never closed".to_string(),
        Kind::UnexpectedEofFlowMapping | Kind::UnexpectedEofImplicitFlowMapping => {
            "a `{` is never closed".to_string()
        }
        Kind::MismatchedFlowCollectionEnd { open, close } => {
            format!("a `{open}` is closed by `{close}`")
        }
        Kind::MisplacedFlowCollectionEnd => "a `]` or `}` closes nothing".to_string(),
        Kind::ExpectedFlowSequenceSeparator => {
            "expected `,` or `]` in a list (quote an item that contains quotes, brackets or `: `)".to_string()
        }
        Kind::ExpectedFlowMappingSeparator => "expected `,` or `}` in a mapping".to_string(),
        Kind::InvalidColonPlacement => "a `:` where it cannot be (quote the value)".to_string(),
        Kind::SimpleKeyExpected | Kind::InvalidSimpleKey => {
            "a line that is not `key: value` (a `:` is missing, or the line continues a value it cannot continue)".to_string()
        }
        Kind::ExpectedBlockMappingKey | Kind::ExpectedBlockSequenceEntry if mid_line => {
            "text after the end of a value (a value that starts with `[`, `{` or a quote ends where it closes: quote the whole value)".to_string()
        }
        Kind::InvalidTrailingDoubleQuotedScalar | Kind::InvalidTrailingSingleQuotedScalar => {
            "text after the closing quote (to keep quotes inside a value, wrap it in the other kind: 'She said \"no\"')".to_string()
        }
        Kind::ExpectedBlockMappingKey => {
            "expected a `key:` here; check the indentation of this line".to_string()
        }
        Kind::ExpectedBlockSequenceEntry => {
            "expected a `- ` list item here; check the indentation of this line".to_string()
        }
        Kind::ExpectedDocumentStart => {
            "this line is indented less than the lines before it; check the indentation".to_string()
        }
        Kind::InvalidIndentation | Kind::InvalidQuotedScalarIndent | Kind::InvalidFlowScalarIndent => {
            "this line is not indented as YAML expects; check the indentation".to_string()
        }
        Kind::TabNotAllowed
        | Kind::TabInBlockIndentation
        | Kind::TabInIndentation
        | Kind::TabAtBlockScalarStart
        | Kind::TabInPlainScalar => "a tab where YAML needs spaces (indent with spaces)".to_string(),
        Kind::UnknownAnchor => {
            "an alias (`*name`) refers to no anchor (`&name`) defined before it".to_string()
        }
        Kind::UnexpectedCharacter { character } => format!(
            "a value cannot start with `{}` (quote the value)",
            character.escape_default()
        ),
        Kind::UnknownQuotedScalarEscape
        | Kind::InvalidQuotedScalarHexEscape
        | Kind::InvalidUnicodeEscape
        | Kind::InvalidLowSurrogate
        | Kind::InvalidLowSurrogateHexEscape
        | Kind::MissingLowSurrogate
        | Kind::UnpairedLowSurrogate => {
            "an unknown `\\` escape in a double-quoted value (write `\\\\` for a backslash, or use single quotes)".to_string()
        }
        Kind::InvalidBlockScalarHeader | Kind::InvalidBlockScalarIndent | Kind::ZeroBlockScalarIndent => {
            "a `|` or `>` block is not written as YAML expects".to_string()
        }
        Kind::CommentNotSeparated => {
            "a `#` comment must have a space before it".to_string()
        }
        other => other.to_string(),
    };
    Error {
        kind,
        line,
        column,
        message,
        unclosed,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;
    use rstest::rstest;

    fn s(x: &str) -> Value {
        Value::String(x.into())
    }

    fn list(items: &[Value]) -> Value {
        Value::List(items.to_vec())
    }

    fn map(entries: &[(&str, Value, usize)]) -> Value {
        let mut m = Map::default();
        for (k, v, line) in entries {
            m.push(s(k), v.clone(), *line);
        }
        Value::Map(m)
    }

    #[rstest]
    #[case("", Value::Null)]
    #[case("~", Value::Null)]
    #[case("null", Value::Null)]
    #[case("NULL", Value::Null)]
    #[case("nUll", s("nUll"))]
    #[case("true", Value::Bool(true))]
    #[case("True", Value::Bool(true))]
    #[case("FALSE", Value::Bool(false))]
    #[case("yes", s("yes"))]
    #[case("no", s("no"))]
    #[case("on", s("on"))]
    #[case("off", s("off"))]
    #[case("y", s("y"))]
    #[case("0", Value::Int(0))]
    #[case("-0", Value::Int(0))]
    #[case("+5", Value::Int(5))]
    #[case("-12", Value::Int(-12))]
    #[case("007", s("007"))]
    #[case("-012", s("-012"))]
    #[case("0x1F", Value::Int(31))]
    #[case("-0x1F", Value::Int(-31))]
    #[case("0X1F", s("0X1F"))]
    #[case("0o17", Value::Int(15))]
    #[case("0b101", Value::Int(5))]
    #[case("0x", s("0x"))]
    #[case("0x+5", s("0x+5"))]
    #[case("1_000", s("1_000"))]
    #[case("1,000", s("1,000"))]
    #[case("9223372036854775807", Value::Int(i64::MAX))]
    #[case("-9223372036854775808", Value::Int(i64::MIN))]
    #[case("9223372036854775808", s("9223372036854775808"))]
    #[case("99999999999999999999999", s("99999999999999999999999"))]
    #[case("1e3", Value::Float(1000.0))]
    #[case("1.", Value::Float(1.0))]
    #[case(".5", Value::Float(0.5))]
    #[case("+.5", Value::Float(0.5))]
    #[case("00.5", Value::Float(0.5))]
    #[case("1e", s("1e"))]
    #[case("1e400", s("1e400"))]
    #[case(".inf", Value::Float(f64::INFINITY))]
    #[case("-.Inf", Value::Float(f64::NEG_INFINITY))]
    #[case(".NaN", Value::Float(f64::NAN))]
    #[case("+.nan", s("+.nan"))]
    #[case("inf", s("inf"))]
    #[case("2024-01-05", s("2024-01-05"))]
    #[case("12:30", s("12:30"))]
    #[case("0.1.2", s("0.1.2"))]
    #[case("12 (natural armor)", s("12 (natural armor)"))]
    fn plain_scalars_resolve(#[case] text: &str, #[case] want: Value) {
        assert_eq!(resolve_plain(text), want);
    }

    #[rstest]
    #[case(1000.0, "1000.0")]
    #[case(0.5, "0.5")]
    #[case(1e300, "1e300")]
    #[case(f64::INFINITY, ".inf")]
    #[case(f64::NEG_INFINITY, "-.inf")]
    #[case(f64::NAN, ".nan")]
    fn floats_as_text(#[case] f: f64, #[case] want: &str) {
        assert_eq!(float_text(f), want);
    }

    #[rstest]
    #[case("a: \"x\\ty \\u00e9\"\n", s("x\ty é"))]
    #[case("a: 'it''s'\n", s("it's"))]
    #[case("a: '007'\n", s("007"))]
    #[case("a: |\n  x\n  y\n", s("x\ny\n"))]
    #[case("a: >-\n  x\n  y\n", s("x y"))]
    #[case("a: x\n  y\n", s("x y"))]
    #[case("a: x # note\n", s("x"))]
    #[case("a: x#y\n", s("x#y"))]
    #[case("a:\tx\n", s("x"))]
    #[case("a: x\t\n", s("x"))]
    #[case("a: \u{feff}x\n", s("\u{feff}x"))]
    #[case("a: !!str 5\n", s("5"))]
    #[case("a: !!int 5\n", Value::Int(5))]
    #[case("a: !custom 5\n", Value::Int(5))]
    #[case("a: [[Note]]\n", list(&[list(&[s("Note")])]))]
    #[case("a: [x, 'y', \"z\", 1]\n", list(&[s("x"), s("y"), s("z"), Value::Int(1)]))]
    #[case("a: [x, y, ]\n", list(&[s("x"), s("y")]))]
    #[case("a: &x [1]\nb: *x\n", list(&[Value::Int(1)]))]
    #[case("a:\n", Value::Null)]
    #[case("a: !!str\n", s(""))]
    fn values(#[case] text: &str, #[case] want: Value) {
        let Ok(Value::Map(m)) = parse(text) else {
            panic!("not a mapping: {text:?}");
        };
        assert_eq!(m.iter().last().map(|e| &e.value), Some(&want), "{text:?}");
    }

    #[test]
    fn mappings_keep_document_order_lines_and_repeats() {
        let got = parse("b: 1\n# c\n\na: {x: 1, y}\nb: 2\n").expect("valid");
        let mut inner = Map::default();
        inner.push(s("x"), Value::Int(1), 4);
        inner.push(s("y"), Value::Null, 4);
        assert_eq!(
            got,
            map(&[
                ("b", Value::Int(1), 1),
                ("a", Value::Map(inner), 4),
                ("b", Value::Int(2), 5)
            ])
        );
        let Value::Map(m) = got else { unreachable!() };
        assert_eq!(m.get("b"), Some(&Value::Int(2)));
    }

    #[rstest]
    #[case("", Value::Null)]
    #[case("# only a comment\n", Value::Null)]
    #[case("- a\n- b\n", list(&[s("a"), s("b")]))]
    #[case("just words\n", s("just words"))]
    #[case("? [a, b]\n: c\n", Value::Map({
        let mut m = Map::default();
        m.push(list(&[s("a"), s("b")]), s("c"), 1);
        m
    }))]
    fn documents(#[case] text: &str, #[case] want: Value) {
        assert_eq!(parse(text), Ok(want));
    }

    #[rstest]
    #[case("a: b: c\n", 1, 5, "mapping values are not allowed", None)]
    #[case("name: x\nrole: spy: double agent\n", 2, 10, "mapping values", None)]
    #[case("a: 1\nb: [unclosed\nc: 2\n", 3, 2, "", Some((2, '[')))]
    #[case("a: [x,\n", 1, 4, "never closed", None)]
    #[case("a: \"open\nb: 2\n", 1, 4, "quoted value is never closed", None)]
    #[case("a: *x\n", 1, 4, "no anchor", None)]
    #[case("a: - b\n", 1, 4, "list item", None)]
    #[case("a: @x\n", 1, 4, "cannot start with `@`", None)]
    #[case("a: x\nb\n", 2, 1, "not `key: value`", None)]
    #[case("  a: 1\n b: 2\n", 2, 2, "indent", None)]
    #[case("a:\n  - x\n - y\n", 3, 2, "indentation", None)]
    #[case("a: \"\\q\"\n", 1, 4, "escape", None)]
    #[case("a: 1\n---\nb: 2\n", 2, 1, "second YAML document", None)]
    #[case("a: 1\nb: [x, y\n", 2, 4, "never closed", None)]
    #[case(
        "name: Ida\nvoice: >\n\tlow and slow\nrole: smith\n",
        3,
        1,
        "a tab",
        None
    )]
    #[case("inventory:\n  - rope\n\t- lamp\n", 3, 1, "a tab", None)]
    fn syntax_errors_say_what_and_where(
        #[case] text: &str,
        #[case] line: usize,
        #[case] column: usize,
        #[case] says: &str,
        #[case] unclosed: Option<(usize, char)>,
    ) {
        let e = parse(text).expect_err(text);
        assert_eq!(e.kind, ErrorKind::Syntax, "{e}");
        assert_eq!((e.line, e.column), (line, column), "{e}");
        assert!(e.message.contains(says), "{e}");
        assert!(!e.message.contains(" at line "), "{e}");
        assert_eq!(e.unclosed, unclosed, "{e}");
    }

    fn laughs(levels: usize, width: usize) -> String {
        let mut s = format!("l0: &l0 [{}]\n", vec!["lol"; width].join(", "));
        for i in 1..levels {
            let refs = vec![format!("*l{}", i - 1); width].join(", ");
            s.push_str(&format!("l{i}: &l{i} [{refs}]\n"));
        }
        s
    }

    #[rstest]
    #[case(format!("a: {}x{}\n", "[".repeat(40), "]".repeat(40)), 1)]
    #[case(format!("a: it's\nb: {}\n", "[".repeat(100_000)), 2)]
    #[case((0..40).map(|i| format!("{}k{i}:\n", " ".repeat(i))).collect::<String>(), 33)]
    #[case(format!("{}x\n", "- ".repeat(40)), 1)]
    #[case(format!("a: &a [x]\nb: [{}]\n", "*a, ".repeat(300)), 2)]
    #[case(laughs(9, 9), 5)]
    fn over_budget(#[case] text: String, #[case] line: usize) {
        let e = parse(&text).expect_err("over budget");
        assert_eq!((e.kind, e.line), (ErrorKind::TooComplex, line), "{e}");
    }

    #[rstest]
    #[case("a: [[[[x]]]]\n")]
    #[case("name: it's [[[[ not a quote\n")]
    #[case("desc: |\n  [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\nb: 1\n")]
    #[case("q: \"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"\n")]
    #[case("# [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\na: 1\n")]
    #[case("inventory:\n  - name: rope\n    qty: 2\n  - - nested\n")]
    fn within_budget(#[case] text: &str) {
        assert!(parse(text).is_ok(), "{text}");
    }

    #[test]
    fn a_few_aliases_copy_their_values() {
        let Ok(Value::Map(m)) = parse(&laughs(3, 9)) else {
            panic!("valid");
        };
        assert_eq!(
            m.get("l2").map(Value::count),
            Some(1 + 9 * (1 + 9 * (1 + 9)))
        );
    }

    #[test]
    fn an_alias_inside_its_own_anchor_is_an_error() {
        let e = parse("a: &x [1, *x]\n").expect_err("recursive");
        assert_eq!(e.kind, ErrorKind::Syntax);
        assert!(e.message.contains("inside"), "{e}");
    }

    #[rstest]
    #[case("name: Orla\nhp: 12\ntags:\n  - npc\n  - city/guard\n")]
    #[case("tags:\n- a\n- b\nloc: \"[[Havenport]]\"\n")]
    #[case("location: [[The Gilded Eel]]\nitems: [rope (50 ft), 'thieves'' tools']\n")]
    #[case(
        "# comment\n\ntitle: Session 0 – Scene 2 # with a comment\ncreated: 2025-01-07\nempty:\n"
    )]
    #[case("a: x#y\nb: http://x.y/z\nc: -5\nd: 本日\n")]
    fn common_frontmatter_takes_the_fast_path(#[case] text: &str) {
        let fast = parse_fast(text).expect("fast path");
        assert_eq!(Ok(fast), parse_full(text));
    }

    #[rstest]
    #[case("a: \"x\\ty\"\n")] // an escape
    #[case("a:\tx\n")] // a tab
    #[case("a: x\n  y\n")] // a multi-line value
    #[case("a:\n  b: 1\n")] // a nested mapping
    #[case("a: |\n  x\n")] // a block scalar
    #[case("a: &x 1\nb: *x\n")] // anchors
    #[case("a: {x: 1}\n")] // a flow mapping
    #[case("a: b: c\n")] // an error
    #[case("a: [x\n")] // an error
    #[case("a: \"x\" y\n")] // an error
    #[case("- a\n")] // not a mapping
    #[case("a:\n  - x\n - y\n")] // items at two indentations
    #[case("a:\n  -\n")] // an empty item
    #[case("a : x\n")] // a space before the colon
    #[case("\"a\": x\n")] // a quoted key
    #[case("a: x\n# \u{7}\n")] // a control character, even in a comment
    #[case("a: x\u{2028}y\n")] // a Unicode line separator
    #[case("a: \u{feff}x\n")] // a BOM inside a value
    #[case("a: x\u{85}\n")] // NEL
    fn anything_else_goes_to_the_full_parser(#[case] text: &str) {
        assert_eq!(parse_fast(text), None, "{text:?}");
    }

    /// Frontmatter-shaped text with the scalars that trip parsers: `: ` and `#` inside
    /// values, quotes with escapes, `[[links]]`, unicode, trailing spaces, tabs.
    pub(crate) fn frontmatter() -> impl Strategy<Value = String> {
        let scalar = prop_oneof![
            "[a-zA-Z0-9 ]{0,10}",
            "[a-z0-9 :#'\"\\[\\],{}?&*!|>%@`.~+-]{0,10}",
            "[a-zé✓日本 ]{1,6}( #[a-z ]{0,5})?",
            "\"[a-z :#'\\[\\]\\\\né]{0,8}\"",
            "'[a-z :#\"\\[\\]]{0,6}('')?[a-z]{0,3}'",
            "\\[\\[[A-Za-z |#]{1,10}\\]\\]( \\([a-z ]{1,6}\\))?",
            "\\[([a-z0-9 \"'\\[\\]]{0,6}, ?){0,3}[a-z0-9 \"'\\[\\]]{0,6}\\]",
            "(-?[0-9]{1,4}|0x[0-9A-F]{1,3}|[0-9]\\.[0-9]e[0-9]|\\.inf|~|null|true|False|yes|2024-01-0[1-9])",
            "[a-z]{1,5}(: |:|#| #)[a-z]{0,5}",
            "[a-z ]{1,6}[ \t]{1,2}",
        ];
        let line = prop_oneof![
            4 => (
                "[a-zA-Z_][a-zA-Z0-9_ -]{0,6}|[0-9]{1,3}|true|~|\"[a-z]{1,3}\"|[a-z]{1,3}#[a-z]|[a-z]:[a-z]",
                prop_oneof![Just(": "), Just(":  "), Just(":"), Just(" : "), Just(":\t")],
                scalar.clone()
            )
                .prop_map(|(k, sep, v)| format!("{k}{sep}{v}")),
            2 => ("[a-z]{1,6}", prop_oneof![Just(":"), Just(": "), Just(": # c")])
                .prop_map(|(k, sep)| format!("{k}{sep}")),
            3 => (prop_oneof![Just(""), Just("  "), Just(" "), Just("    ")], scalar)
                .prop_map(|(indent, v)| format!("{indent}- {v}")),
            1 => "( {0,3}#[a-z ]{0,6})|",
            1 => "  [a-z: ]{1,8}",
            1 => "[-a-z:\\[\\]{}#'\" \t&*!|>]{0,10}",
        ];
        prop::collection::vec(line, 0..10).prop_map(|lines| lines.join("\n") + "\n")
    }

    fn lines(text: &str) -> usize {
        text.lines().count().max(1)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn the_fast_path_agrees_with_the_full_parser(text in frontmatter()) {
            // Whatever the fast path reads, the full parser reads the same (and it gives
            // up on anything the full parser would refuse).
            if let Some(fast) = parse_fast(&text) {
                prop_assert_eq!(Ok(fast), parse_full(&text), "{:?}", text);
            }
        }

        #[test]
        fn parse_is_the_full_parser_only_faster(text in frontmatter()) {
            // Same values, same errors at the same places.
            prop_assert_eq!(parse(&text), parse_full(&text), "{:?}", text);
        }

        #[test]
        fn never_panics_and_errors_stay_in_the_text(text in frontmatter()) {
            if let Err(e) = parse(&text) {
                prop_assert!(e.line >= 1 && e.line <= lines(&text), "{:?}: {}", text, e);
                prop_assert!(e.column >= 1);
                prop_assert!(e.unclosed.is_none_or(|(l, _)| l < e.line));
            }
        }

        #[test]
        fn never_panics_on_anything(text in "\\PC{0,200}") {
            if let Err(e) = parse(&text) {
                prop_assert!(e.line >= 1 && e.line <= lines(&text), "{:?}: {}", text, e);
            }
        }

        #[test]
        fn never_panics_on_yaml_punctuation(text in "[-:?,\\[\\]{}#&*!|>'\"%@` \t\nax0\u{feff}\u{85}]{0,60}") {
            if let Err(e) = parse(&text) {
                prop_assert!(e.line >= 1 && e.line <= lines(&text), "{:?}: {}", text, e);
            }
        }
    }
}
