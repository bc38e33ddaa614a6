//! Frontmatter: split the YAML block from the body and read it forgivingly.
//!
//! GMs write frontmatter by hand, so this module never fails: a YAML error, an unclosed
//! block or frontmatter that is not a mapping becomes a [`Diagnostic`] at the right file
//! line and the note keeps its body. Keys are case-insensitive; values are read with
//! the synonyms and list forms GMs use (YAML list, flow list, comma string).

use super::diagnostic::Diagnostic;
use super::yaml::{self, ErrorKind, Map, Value};
use crate::vault::Code;

/// Largest frontmatter parsed; a real note's is a few KB (a statblock in frontmatter, tens).
pub const MAX_FRONTMATTER_BYTES: usize = 1024 * 1024;
/// Deepest nesting of lists and mappings accepted in frontmatter.
pub const MAX_FRONTMATTER_DEPTH: usize = yaml::MAX_DEPTH;
/// Most YAML aliases (`*name`) accepted in one frontmatter block.
pub const MAX_FRONTMATTER_ALIASES: usize = yaml::MAX_ALIASES;

/// Where the frontmatter and the body lie in a note's (normalised) text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split<'a> {
    /// The YAML text between the fences, if the note has a frontmatter block.
    pub yaml: Option<&'a str>,
    /// 1-based file line of the first YAML line.
    pub yaml_line: usize,
    /// The Markdown body after the closing fence (or the whole text).
    pub body: &'a str,
    /// Byte offset of the body in the text.
    pub body_offset: usize,
    /// True when an opening `---` has no closing fence.
    pub unclosed: bool,
}

fn is_fence(line: &str, closing: bool) -> bool {
    let l = line.trim_end();
    l == "---" || (closing && l == "...")
}

/// Splits normalised text (no BOM, `\n` line ends) into frontmatter and body.
///
/// Frontmatter is recognised only when the very first line is `---`; it ends at the next
/// line that is `---` or `...`. Without a closing fence the whole text is body and
/// [`Split::unclosed`] is set.
pub fn split(text: &str) -> Split<'_> {
    let first_end = text.find('\n').unwrap_or(text.len());
    if !is_fence(&text[..first_end], false) {
        return Split {
            yaml: None,
            yaml_line: 0,
            body: text,
            body_offset: 0,
            unclosed: false,
        };
    }
    let yaml_start = (first_end + 1).min(text.len());
    let mut pos = yaml_start;
    while pos < text.len() {
        let end = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
        if is_fence(&text[pos..end], true) {
            let body_offset = (end + 1).min(text.len());
            return Split {
                yaml: Some(&text[yaml_start..pos]),
                yaml_line: 2,
                body: &text[body_offset..],
                body_offset,
                unclosed: false,
            };
        }
        pos = end + 1;
    }
    Split {
        yaml: None,
        yaml_line: 0,
        body: text,
        body_offset: 0,
        unclosed: true,
    }
}

/// A note's frontmatter: lower-cased keys, their values and the file line of each key.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Frontmatter {
    /// One entry per key, sorted by key: (lower-cased key, value, 1-based file line).
    entries: Vec<(compact_str::CompactString, Value, usize)>,
    /// 1-based file line of the opening fence (0 when there is no frontmatter).
    pub line: usize,
}

impl Frontmatter {
    /// Parses the YAML of a split note, pushing any problem to `diags`.
    pub fn parse(path: &str, split: &Split<'_>, diags: &mut Vec<Diagnostic>) -> Frontmatter {
        let mut fm = Frontmatter::default();
        if split.unclosed {
            diags.push(Diagnostic::error(
                path,
                1,
                Code::UnclosedFrontmatter,
                "frontmatter opened with `---` is never closed; add a `---` line after the last key (the note was read as body only)",
            ));
            return fm;
        }
        let Some(yaml) = split.yaml else {
            return fm;
        };
        fm.line = 1;
        // `<` is rare: searching for it alone is faster than for `<%`.
        let templater = yaml
            .match_indices('<')
            .map(|(i, _)| i)
            .find(|&i| yaml.as_bytes().get(i + 1) == Some(&b'%'));
        if let Some(at) = templater {
            diags.push(Diagnostic::error(
                path,
                split.yaml_line + line_index(yaml, at),
                Code::Templater,
                "Templater code (`<% ... %>`) in frontmatter: run the template in Obsidian first; vaultdm reads notes as they are written",
            ));
        }
        if yaml.trim().is_empty() {
            return fm;
        }
        if yaml.len() > MAX_FRONTMATTER_BYTES {
            diags.push(Diagnostic::error(
                path,
                split.yaml_line,
                Code::FrontmatterTooComplex,
                format!(
                    "frontmatter is {} KB, over the {} KB limit; it was ignored",
                    yaml.len() / 1024,
                    MAX_FRONTMATTER_BYTES / 1024
                ),
            ));
            return fm;
        }
        match yaml::parse(yaml) {
            Ok(Value::Map(map)) => fm.set(from_map(map, split.yaml_line), path, diags),
            Ok(Value::Null) => {}
            Ok(other) => {
                let kind = match other {
                    Value::List(_) => "a list",
                    Value::String(_) => "a string",
                    _ => "a single value",
                };
                diags.push(Diagnostic::warning(
                    path,
                    split.yaml_line,
                    Code::FrontmatterNotMapping,
                    format!("frontmatter is {kind}, not `key: value` pairs; it was ignored"),
                ));
            }
            Err(e) if e.kind == ErrorKind::TooComplex => {
                diags.push(Diagnostic::error(
                    path,
                    split.yaml_line + e.line - 1,
                    Code::FrontmatterTooComplex,
                    format!("frontmatter {}; it was ignored", e.message),
                ));
            }
            Err(e) => {
                // Keep what can be read: the well-formed `key: value` lines, one by one.
                let recovered = line_by_line(yaml);
                let mut keys: Vec<String> = yaml.lines().filter_map(key_of_line).collect();
                keys.sort_unstable();
                keys.dedup();
                let keys = keys.len();
                let all = !recovered.is_empty() && recovered.len() >= keys;
                let what = if recovered.is_empty() {
                    "the frontmatter was ignored".to_string()
                } else if all {
                    format!(
                        "all its {} `key: value` lines were read one by one (quote the value to make it valid YAML)",
                        recovered.len()
                    )
                } else {
                    format!(
                        "{} of its {keys} `key: value` lines were read one by one",
                        recovered.len()
                    )
                };
                let recovered = recovered
                    .into_iter()
                    .map(|(k, v, i)| (k.into(), v, split.yaml_line + i))
                    .collect();
                fm.set(recovered, path, diags);
                // Nothing lost (`title: Session 0 – Scene 2: Lysa's House`, which Obsidian
                // shows too): a warning. Lines that could not be read: an error, and a note
                // being typed keeps its last good version in live canon.
                let severity = if all {
                    super::Severity::Warning
                } else {
                    super::Severity::Error
                };
                let at = |l: usize| split.yaml_line + l - 1;
                let (line, message) = match e.unclosed {
                    // The likely cause is an earlier `[` or `{` left open: point at it.
                    Some((open, c)) => (
                        at(open),
                        format!(
                            "YAML error in frontmatter: the `{c}` on this line is never closed (YAML stopped at line {}, column {}); {what}",
                            at(e.line),
                            e.column,
                        ),
                    ),
                    None => (
                        at(e.line),
                        format!(
                            "YAML error in frontmatter at column {}: {}; {what}",
                            e.column, e.message
                        ),
                    ),
                };
                diags.push(Diagnostic::new(
                    path,
                    line,
                    severity,
                    Code::YamlSyntax,
                    message,
                ));
            }
        }
        fm
    }

    /// Keeps one entry per key (the last, as YAML readers do) and warns about the others.
    fn set(
        &mut self,
        mut entries: Vec<(compact_str::CompactString, Value, usize)>,
        path: &str,
        diags: &mut Vec<Diagnostic>,
    ) {
        // Stable: a key's repeats stay in document order.
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(compact_str::CompactString, Value, usize)> =
            Vec::with_capacity(entries.len());
        let mut first_line = 0;
        for e in entries {
            match out.last_mut() {
                Some(prev) if prev.0 == e.0 => {
                    diags.push(Diagnostic::warning(
                        path,
                        e.2,
                        Code::DuplicateKey,
                        format!(
                            "`{}` is set more than once in frontmatter (first on line {first_line}; keys ignore case); the last value is used",
                            e.0
                        ),
                    ));
                    *prev = e;
                }
                _ => {
                    first_line = e.2;
                    out.push(e);
                }
            }
        }
        self.entries = out;
    }

    fn find(&self, key: &str) -> Option<&(compact_str::CompactString, Value, usize)> {
        // Canon asks every note for a dozen keys under several synonyms each, and a note
        // holds a handful of keys: a scan that compares lengths first rejects most keys
        // without comparing a byte, where a binary search compares bytes at every step.
        if self.entries.len() <= 16 {
            return self
                .entries
                .iter()
                .find(|e| e.0.len() == key.len() && e.0.as_bytes() == key.as_bytes());
        }
        self.entries
            .binary_search_by(|e| e.0.as_str().cmp(key))
            .ok()
            .map(|i| &self.entries[i])
    }

    /// The first of `keys` (lower-case synonyms) present, with its value.
    pub fn get(&self, keys: &[&str]) -> Option<(&str, &Value)> {
        keys.iter()
            .find_map(|k| self.find(k))
            .map(|(k, v, _)| (k.as_str(), v))
    }

    /// The file line of a key (the frontmatter's first line when unknown).
    pub fn line_of(&self, key: &str) -> usize {
        self.find(key).map_or(self.line.max(1), |e| e.2)
    }

    /// The first present synonym as text.
    pub fn text(&self, keys: &[&str]) -> Option<String> {
        self.get(keys).and_then(|(_, v)| value_text(v))
    }

    /// The first present synonym as a list of strings.
    pub fn list(&self, keys: &[&str]) -> Vec<String> {
        self.get(keys)
            .map(|(_, v)| value_list(v))
            .unwrap_or_default()
    }

    /// Adds `key: value` from elsewhere in the note (a Dataview inline field `key:: value`)
    /// unless the frontmatter already has the key: frontmatter wins.
    pub fn add_fallback(&mut self, key: &str, value: &str, line: usize) {
        let key = key.trim().to_lowercase();
        if key.is_empty() {
            return;
        }
        if let Err(i) = self.entries.binary_search_by(|e| e.0.as_str().cmp(&key)) {
            self.entries
                .insert(i, (key.into(), Value::String(value.trim().into()), line));
        }
    }

    /// Gives back the slack of the key table: a parsed note lives for the whole session.
    pub fn shrink_to_fit(&mut self) {
        self.entries.shrink_to_fit();
        for (_, value, _) in &mut self.entries {
            value.shrink_to_fit();
        }
    }

    /// The key of the `i`th entry in key order (as [`Frontmatter::iter`] yields them).
    pub fn key_at(&self, i: usize) -> Option<&str> {
        self.entries.get(i).map(|e| e.0.as_str())
    }

    /// All keys and values, keys lower-cased, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.entries.iter().map(|(k, v, _)| (k.as_str(), v))
    }

    /// True when the note has no frontmatter values.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The 0-based line of byte `at` in `text`.
fn line_index(text: &str, at: usize) -> usize {
    text.as_bytes()[..at]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
}

/// The top-level entries of parsed frontmatter: keys as trimmed lower-case text (a key
/// that is not text, `1:` or `true:`, becomes its text), lines mapped to the file.
fn from_map(map: Map, first_line: usize) -> Vec<(compact_str::CompactString, Value, usize)> {
    map.into_iter()
        .map(|e| {
            let key = match e.key {
                Value::String(s) => s,
                other => value_text(&other).unwrap_or_default().into(),
            };
            // Most keys are already trimmed lower-case ASCII: keep their allocation.
            let key = if key.bytes().all(|b| !b.is_ascii_uppercase() && b.is_ascii())
                && key.trim() == key
            {
                key
            } else {
                key.trim().to_lowercase().into()
            };
            (key, e.value, first_line + e.line - 1)
        })
        .collect()
}

/// The `key: value` lines of frontmatter that YAML refused, read one by one: a top-level
/// key and the rest of its line as text (`alignment: None: Any Non-Good`), a whole flow
/// list (`[a, b]`), or the `- item` lines under a key with no value. A line that cannot be
/// read alone (an unclosed `[`, a block scalar) is left out.
fn line_by_line(yaml: &str) -> Vec<(String, Value, usize)> {
    let mut out: Vec<(String, Value, usize)> = Vec::new();
    let mut list: Option<(String, Vec<Value>, usize)> = None;
    let finish = |list: &mut Option<(String, Vec<Value>, usize)>,
                  out: &mut Vec<(String, Value, usize)>| {
        if let Some((k, items, line)) = list.take() {
            // A key with no value and no items is an empty value, read as such.
            let v = if items.is_empty() {
                Value::Null
            } else {
                Value::List(items)
            };
            out.push((k, v, line));
        }
    };
    for (i, line) in yaml.lines().enumerate() {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if line.starts_with([' ', '\t', '-']) {
            let item = line.trim_start().strip_prefix("- ");
            match (list.as_mut(), item) {
                (Some((_, items, _)), Some(item)) if !item.contains(": ") => {
                    items.push(Value::String(unquote(item.trim()).into()));
                }
                _ => list = None,
            }
            continue;
        }
        finish(&mut list, &mut out);
        let Some(key) = key_of_line(line) else {
            continue;
        };
        let value = line.split_once(':').map_or("", |(_, v)| v).trim();
        if value.is_empty() {
            list = Some((key, Vec::new(), i));
            continue;
        }
        // An embed or a link and words after it are text (`image: ![[x.png]]`,
        // `location: [[Havenport]] (whisked away)`); other YAML syntax cannot be read alone.
        let link_first = value.starts_with("[[") || value.starts_with("![[");
        if !link_first && value.starts_with(['|', '>', '&', '*', '!']) {
            continue;
        }
        let v = if link_first && !value.ends_with("]]") || value.starts_with("![[") {
            Value::String(value.into())
        } else if let Some(inner) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
            if inner.starts_with('[') && inner.ends_with(']') {
                Value::String(value.into()) // an unquoted [[wikilink]]
            } else {
                Value::List(
                    split_commas(inner)
                        .into_iter()
                        .map(|i| Value::String(unquote(&i).into()))
                        .collect(),
                )
            }
        } else if value.starts_with(['[', '{']) {
            continue;
        } else {
            Value::String(unquote(value).into())
        };
        out.push((key, v, i));
    }
    finish(&mut list, &mut out);
    out
}

fn unquote(s: &str) -> &str {
    let s = s.trim();
    for q in ['"', '\''] {
        if let Some(inner) = s.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner;
        }
    }
    s
}

fn key_of_line(line: &str) -> Option<String> {
    if line.starts_with([' ', '\t', '-', '#']) {
        return None;
    }
    let colon = line.find(':')?;
    let key = line[..colon].trim().trim_matches(['"', '\'']);
    (!key.is_empty()).then(|| key.to_lowercase())
}

/// A scalar YAML value as text. An unquoted wikilink (`[[Note]]`, which YAML reads as a
/// nested list) comes back as `[[Note]]`.
pub fn value_text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::Bool(b) => Some(b.to_string()),
        Value::Int(i) => Some(i.to_string()),
        Value::Float(f) => Some(yaml::float_text(*f)),
        Value::String(s) => {
            let s = s.trim();
            (!s.is_empty()).then(|| s.to_string())
        }
        Value::List(seq) => {
            if let Some(inner) = unquoted_wikilink(v) {
                return Some(inner);
            }
            let items: Vec<String> = seq.iter().filter_map(value_text).collect();
            (!items.is_empty()).then(|| items.join(", "))
        }
        Value::Map(_) => None,
    }
}

fn unquoted_wikilink(v: &Value) -> Option<String> {
    if let Value::List(outer) = v {
        if let [Value::List(inner)] = outer.as_slice() {
            if let [one] = inner.as_slice() {
                return value_text(one).map(|s| format!("[[{s}]]"));
            }
        }
    }
    None
}

/// Whether [`value_list`] of `v` can hold a wikilink: some text in it has `[[`, or a list
/// holds a list (an unquoted `[[Note]]` reads as one). False means it holds none, so the
/// many values without links are never split into lists of text just to look.
pub fn may_hold_wikilink(v: &Value) -> bool {
    match v {
        Value::String(s) => memchr::memmem::find(s.as_bytes(), b"[[").is_some(),
        Value::List(items) => items
            .iter()
            .any(|i| matches!(i, Value::List(_)) || may_hold_wikilink(i)),
        Value::Map(m) => m
            .iter()
            .any(|e| may_hold_wikilink(&e.key) || may_hold_wikilink(&e.value)),
        Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) => false,
    }
}

/// A YAML value as a list: a YAML list, a flow list, or a comma-separated string.
/// Commas inside `[[...]]` do not split.
pub fn value_list(v: &Value) -> Vec<String> {
    if let Some(link) = unquoted_wikilink(v) {
        return vec![link];
    }
    match v {
        Value::List(seq) => seq.iter().filter_map(item_text).collect(),
        Value::String(s) => split_commas(s),
        other => value_text(other).into_iter().collect(),
    }
}

/// A list item as text; a mapping like `{name: rope, qty: 2}` reads as `rope (qty: 2)`.
fn item_text(v: &Value) -> Option<String> {
    let Value::Map(m) = v else {
        return value_text(v);
    };
    let mut name = None;
    let mut rest = Vec::new();
    for e in m {
        let k = value_text(&e.key).unwrap_or_default();
        let Some(t) = value_text(&e.value) else {
            continue;
        };
        if name.is_none() && matches!(k.to_lowercase().as_str(), "name" | "item" | "title") {
            name = Some(t);
        } else {
            rest.push(format!("{k}: {t}"));
        }
    }
    match (name, rest.is_empty()) {
        (Some(n), true) => Some(n),
        (Some(n), false) => Some(format!("{n} ({})", rest.join(", "))),
        (None, false) => Some(rest.join(", ")),
        (None, true) => None,
    }
}

/// Splits a comma string into trimmed, non-empty parts, keeping `[[a, b]]` whole.
pub fn split_commas(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut cur = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '[' if chars.peek() == Some(&'[') => {
                depth += 1;
                cur.push(c);
                cur.push('[');
                chars.next();
            }
            ']' if chars.peek() == Some(&']') && depth > 0 => {
                depth -= 1;
                cur.push(c);
                cur.push(']');
                chars.next();
            }
            ',' if depth == 0 => {
                let t = cur.trim();
                if !t.is_empty() {
                    out.push(t.to_string());
                }
                cur.clear();
            }
            _ => cur.push(c),
        }
    }
    let t = cur.trim();
    if !t.is_empty() {
        out.push(t.to_string());
    }
    out
}

/// A leading whole number and the unit or note written after it, as canon reads numbers:
/// `150 gp` is (150, ` gp`), `32 (5d8 + 10)` is (32, ` (5d8 + 10)`), `1,200` is (1200, ``).
/// `None` when the text does not start with a number, or what follows makes it a sum or a
/// dice roll (`10 - 2`, `2d6`, `17/27`). Write-back keeps the note when it changes the number.
pub fn number_and_note(s: &str) -> Option<(i64, &str)> {
    let t = s.trim();
    let sign = usize::from(t.starts_with(['-', '+']));
    let end = t[sign..]
        .find(|c: char| !(c.is_ascii_digit() || c == ',' || c == '_'))
        .map_or(t.len(), |i| i + sign);
    let (num, rest) = t.split_at(end);
    let rest_ok = rest.is_empty()
        || rest.starts_with([' ', '('])
            && !rest.trim_start().starts_with(['/', '-', '+', '*', 'd']);
    if num.len() > sign && rest_ok {
        return num
            .replace(['_', ','], "")
            .parse::<i64>()
            .ok()
            .map(|n| (n, rest));
    }
    None
}

/// Reads an integer value; `Err` carries the text that was not a number.
pub fn value_int(v: &Value) -> Result<Option<i64>, String> {
    match v {
        Value::Null => Ok(None),
        Value::Int(i) => Ok(Some(*i)),
        Value::Float(f) => Ok(Some(f.round() as i64)),
        Value::String(s) => {
            if s.trim().is_empty() {
                return Ok(None);
            }
            number_and_note(s)
                .map(|(n, _)| Some(n))
                .ok_or(s.to_string())
        }
        other => Err(value_text(other).unwrap_or_else(|| "a list".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rstest::rstest;

    fn arb_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::Int),
            "[a\\[\\], ]{0,6}".prop_map(|s| Value::String(s.into())),
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::List),
                proptest::collection::vec((inner.clone(), inner), 0..3).prop_map(|kv| {
                    let mut m = yaml::Map::default();
                    for (i, (k, v)) in kv.into_iter().enumerate() {
                        m.push(k, v, i + 1);
                    }
                    Value::Map(m)
                }),
            ]
        })
    }

    proptest! {
        /// The shortcut never hides a link: a value it passes over lists no `[[`.
        #[test]
        fn may_hold_wikilink_misses_no_link(v in arb_value()) {
            if !may_hold_wikilink(&v) {
                prop_assert!(value_list(&v).iter().all(|s| !s.contains("[[")), "{:?}", value_list(&v));
            }
        }
    }

    #[rstest]
    #[case("---\na: 1\n---\nbody", Some("a: 1\n"), "body", false)]
    #[case("---\na: 1\n...\nbody", Some("a: 1\n"), "body", false)]
    #[case("---\n---\nbody", Some(""), "body", false)]
    #[case("--- \na: 1\n---  \n", Some("a: 1\n"), "", false)]
    #[case("no fm\n---\nx", None, "no fm\n---\nx", false)]
    #[case("---\na: 1\nnever closed", None, "---\na: 1\nnever closed", true)]
    #[case("", None, "", false)]
    #[case("---", None, "---", true)]
    fn splits(
        #[case] text: &str,
        #[case] yaml: Option<&str>,
        #[case] body: &str,
        #[case] unclosed: bool,
    ) {
        let s = split(text);
        assert_eq!(s.yaml, yaml);
        assert_eq!(s.body, body);
        assert_eq!(s.unclosed, unclosed);
    }

    fn fm(yaml: &str) -> (Frontmatter, Vec<Diagnostic>) {
        let text = format!("---\n{yaml}---\n");
        let mut d = vec![];
        let f = Frontmatter::parse("n.md", &split(&text), &mut d);
        (f, d)
    }

    proptest! {
        /// A key is found by the short scan as by the binary search, on frontmatter of a
        /// few keys and of many, and a key not there is not found.
        #[test]
        fn find_is_the_binary_search(
            keys in proptest::collection::btree_set("[a-c_]{1,4}", 0..40),
            asked in "[a-c_]{1,4}",
        ) {
            let yaml: String = keys.iter().map(|k| format!("{k}: 1\n")).collect();
            let (f, _) = fm(&yaml);
            for key in keys.iter().chain([&asked]) {
                let want = f
                    .entries
                    .binary_search_by(|e| e.0.as_str().cmp(key))
                    .ok()
                    .map(|i| &f.entries[i]);
                prop_assert_eq!(f.find(key), want);
            }
        }
    }

    #[rstest]
    #[case("items: [a, b]\n", vec!["a", "b"])]
    #[case("items: a, b ,c\n", vec!["a", "b", "c"])]
    #[case("items:\n  - a\n  - b\n", vec!["a", "b"])]
    #[case("items: one\n", vec!["one"])]
    #[case("items: \"[[A, B]], c\"\n", vec!["[[A, B]]", "c"])]
    #[case("items: [[Loc]]\n", vec!["[[Loc]]"])]
    #[case("items:\n  - name: rope\n    qty: 2\n  - torch\n", vec!["rope (qty: 2)", "torch"])]
    fn lists(#[case] yaml: &str, #[case] want: Vec<&str>) {
        let (f, d) = fm(yaml);
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(f.list(&["items"]), want);
    }

    #[test]
    fn keys_are_case_insensitive_and_lines_kept() {
        let (f, _) = fm("Name: Orla\nHP: 3\n");
        assert_eq!(f.text(&["name"]).as_deref(), Some("Orla"));
        assert_eq!(f.line_of("hp"), 3);
    }

    #[test]
    fn unquoted_wikilink_reads_as_link() {
        let (f, _) = fm("location: [[The Gilded Eel]]\n");
        assert_eq!(f.text(&["location"]).as_deref(), Some("[[The Gilded Eel]]"));
    }

    #[test]
    fn broken_yaml_keeps_the_lines_that_read_alone() {
        let (f, d) = fm("name: Breathstealer\nalignment: None: Any Non-Good\nhp: 99\nimage: ![[x.png]]\ntags:\n  - monster\n  - undead\nlist: [a, b]\nlair:\nwhere: [[Havenport]] (whisked away)\nbad: [unclosed\n");
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].code, "yaml-syntax");
        assert!(
            d[0].message.contains("lines were read one by one"),
            "{}",
            d[0].message
        );
        assert_eq!(
            f.text(&["alignment"]).as_deref(),
            Some("None: Any Non-Good")
        );
        assert_eq!(f.text(&["hp"]).as_deref(), Some("99"));
        assert_eq!(f.list(&["tags"]), ["monster", "undead"]);
        assert_eq!(f.list(&["list"]), ["a", "b"]);
        assert!(f.get(&["bad"]).is_none());
    }

    #[test]
    fn yaml_that_obsidian_users_write_loses_nothing_and_is_a_warning() {
        let (f, d) = fm("title: Session 0 – Scene 2: Lysa's House (Aftermath)\nalias: [\"Frodo \"Seed\" Baggins\"]\n");
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].severity, crate::vault::Severity::Warning);
        assert!(
            d[0].message.contains("all its 2 `key: value` lines"),
            "{}",
            d[0].message
        );
        assert_eq!(
            f.text(&["title"]).as_deref(),
            Some("Session 0 – Scene 2: Lysa's House (Aftermath)")
        );
        assert_eq!(f.list(&["alias"]), ["Frodo \"Seed\" Baggins"]);
    }

    #[test]
    fn yaml_error_points_at_file_line() {
        let (_, d) = fm("a: 1\nb: [unclosed\nc: 2\n");
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].code, "yaml-syntax");
        assert!(d[0].line >= 3 && d[0].line <= 5, "{:?}", d[0]);
    }

    #[rstest]
    #[case("- a\n- b\n", "a list")]
    #[case("just words\n", "a string")]
    fn non_mapping_frontmatter(#[case] yaml: &str, #[case] kind: &str) {
        let (f, d) = fm(yaml);
        assert!(f.is_empty());
        assert!(d[0].message.contains(kind));
    }

    #[rstest]
    #[case(format!("a: {}x{}\n", "[".repeat(40), "]".repeat(40)), 2)]
    #[case(format!("a: it's\nb: {}\n", "[".repeat(100_000)), 3)]
    #[case((0..40).map(|i| format!("{}k{i}:\n", " ".repeat(i))).collect::<String>(), 34)]
    #[case(format!("{}x\n", "- ".repeat(40)), 2)]
    #[case(format!("a: &a [x]\nb: [{}]\n", "*a, ".repeat(300)), 3)]
    #[case(format!("a: \"{}\"\n", "x".repeat(MAX_FRONTMATTER_BYTES)), 2)]
    fn pathological_frontmatter_is_refused(#[case] yaml: String, #[case] line: usize) {
        let (f, d) = fm(&yaml);
        assert!(f.is_empty());
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!((d[0].code, d[0].line), (Code::FrontmatterTooComplex, line));
        assert!(
            d[0].message.ends_with("; it was ignored"),
            "{}",
            d[0].message
        );
    }

    #[test]
    fn repeated_keys_keep_the_last_value_and_warn() {
        let (f, d) = fm("hp: 10\nName: Orla\nhp: 12\nname: Orla Vane\n");
        assert_eq!(f.text(&["hp"]).as_deref(), Some("12"));
        assert_eq!(f.line_of("hp"), 4);
        assert_eq!(f.text(&["name"]).as_deref(), Some("Orla Vane"));
        let got: Vec<_> = d
            .iter()
            .map(|d| (d.code.as_str(), d.line, d.severity))
            .collect();
        assert_eq!(
            got,
            [
                ("duplicate-key", 4, crate::vault::Severity::Warning),
                ("duplicate-key", 5, crate::vault::Severity::Warning)
            ]
        );
        assert!(d[0].message.contains("first on line 2"), "{}", d[0].message);
    }

    #[rstest]
    #[case("a: yes\n", "yes")]
    #[case("a: off\n", "off")]
    #[case("a: ~\n", "")]
    #[case("a: 007\n", "007")]
    #[case("a: 0x1F\n", "31")]
    #[case("a: 1e3\n", "1000.0")]
    #[case("a: 2024-01-05\n", "2024-01-05")]
    #[case("a: \"12\"\n", "12")]
    #[case("a: 'it''s'\n", "it's")]
    #[case("a: |\n  one\n  two\n", "one\ntwo")]
    #[case("a: >\n  one\n  two\n", "one two")]
    #[case("a: True\n", "true")]
    #[case("a: 99999999999999999999\n", "99999999999999999999")]
    #[case("a: x # note\n", "x")]
    #[case("a: x#y\n", "x#y")]
    #[case("a:\tx\n", "x")]
    #[case("a: \"caf\\u00e9\"\n", "café")]
    fn scalars_read_as_gms_expect(#[case] yaml: &str, #[case] want: &str) {
        let (f, d) = fm(yaml);
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(f.text(&["a"]).unwrap_or_default(), want);
    }

    #[test]
    fn non_text_keys_become_their_text() {
        let (f, d) = fm("1: one\ntrue: yes\n");
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(f.text(&["1"]).as_deref(), Some("one"));
        assert_eq!(f.text(&["true"]).as_deref(), Some("yes"));
    }

    #[test]
    fn templater_is_flagged() {
        let (_, d) = fm("date: <% tp.date.now() %>\n");
        assert!(d.iter().any(|d| d.code == "templater" && d.line == 2));
    }

    #[rstest]
    #[case("17", Ok(Some(17)))]
    #[case("\"17\"", Ok(Some(17)))]
    #[case("150 gp", Ok(Some(150)))]
    #[case("ten", Err("ten".to_string()))]
    #[case("12 (natural armor)", Ok(Some(12)))]
    #[case("32 (5d8 + 10)", Ok(Some(32)))]
    #[case("\"1,200 gp\"", Ok(Some(1200)))]
    #[case("\"-3\"", Ok(Some(-3)))]
    #[case("\"2d6\"", Err("2d6".to_string()))]
    #[case("\"10 - 2\"", Err("10 - 2".to_string()))]
    #[case("~", Ok(None))]
    #[case("7.6", Ok(Some(8)))]
    fn ints(#[case] text: &str, #[case] want: Result<Option<i64>, String>) {
        let v = yaml::parse(text).expect("test input");
        assert_eq!(value_int(&v), want);
    }

    proptest! {
        #[test]
        fn split_never_panics_and_body_is_suffix(text in "(---\n)?[a-z:\n\\-. ]{0,80}") {
            let s = split(&text);
            prop_assert!(text.ends_with(s.body));
            prop_assert_eq!(&text[s.body_offset..], s.body);
            if let Some(y) = s.yaml { prop_assert!(text.contains(y)); }
        }

        #[test]
        fn split_roundtrip(yaml in "[a-z]{1,8}: [a-z0-9 ]{0,12}\n", body in "[a-z \n]{0,40}") {
            let text = format!("---\n{yaml}---\n{body}");
            let s = split(&text);
            prop_assert_eq!(s.yaml, Some(yaml.as_str()));
            prop_assert_eq!(s.body, body.as_str());
        }

        #[test]
        fn problems_point_inside_the_frontmatter(yaml in crate::vault::yaml::tests::frontmatter()) {
            let (_, d) = fm(&yaml);
            let last = 1 + yaml.lines().count().max(1);
            for d in d {
                prop_assert!((2..=last).contains(&d.line), "{:?}: {:?}", yaml, d);
            }
        }

        #[test]
        fn recovered_values_never_invent_text(yaml in crate::vault::yaml::tests::frontmatter()) {
            let (f, d) = fm(&yaml);
            if d.iter().any(|d| d.code == "yaml-syntax") {
                let lower = yaml.to_lowercase();
                for (k, v) in f.iter() {
                    prop_assert!(lower.contains(k), "key {:?} in {:?}", k, yaml);
                    // Each item (a list's text joins its items with `, `).
                    let texts = match v {
                        Value::List(_) => value_list(v),
                        _ => value_text(v).into_iter().collect(),
                    };
                    for t in texts {
                        prop_assert!(yaml.contains(&t), "{:?} in {:?}", t, yaml);
                    }
                }
            }
        }

        #[test]
        fn comma_split_keeps_links(a in "[A-Za-z ]{1,10}", b in "[A-Za-z]{1,10}") {
            let s = format!("[[{a}, {b}]], {b}");
            let parts = split_commas(&s);
            prop_assert_eq!(parts.len(), 2);
        }
    }
}
