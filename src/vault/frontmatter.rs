//! Frontmatter: split the YAML block from the body and read it forgivingly.
//!
//! GMs write frontmatter by hand, so this module never fails: a YAML error, an unclosed
//! block or frontmatter that is not a mapping becomes a [`Diagnostic`] at the right file
//! line and the note keeps its body. Keys are case-insensitive; values are read with
//! the synonyms and list forms GMs use (YAML list, flow list, comma string).

use super::diagnostic::Diagnostic;
use serde_yaml::Value;
use std::collections::BTreeMap;

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
    values: BTreeMap<String, Value>,
    lines: BTreeMap<String, usize>,
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
                "unclosed-frontmatter",
                "frontmatter opened with `---` is never closed; add a `---` line after the last key (the note was read as body only)",
            ));
            return fm;
        }
        let Some(yaml) = split.yaml else {
            return fm;
        };
        fm.line = 1;
        for (i, raw) in yaml.lines().enumerate() {
            if let Some(key) = key_of_line(raw) {
                fm.lines.entry(key).or_insert(split.yaml_line + i);
            }
        }
        if let Some(i) = yaml.lines().position(|l| l.contains("<%")) {
            diags.push(Diagnostic::error(
                path,
                split.yaml_line + i,
                "templater",
                "Templater code (`<% ... %>`) in frontmatter: run the template in Obsidian first; vaultdm reads notes as they are written",
            ));
        }
        if yaml.trim().is_empty() {
            return fm;
        }
        match serde_yaml::from_str::<Value>(yaml) {
            Ok(Value::Mapping(map)) => {
                for (k, v) in map {
                    let key = match k {
                        Value::String(s) => s,
                        other => value_text(&other).unwrap_or_default(),
                    };
                    fm.values.insert(key.trim().to_lowercase(), v);
                }
            }
            Ok(Value::Null) => {}
            Ok(other) => {
                let kind = match other {
                    Value::Sequence(_) => "a list",
                    Value::String(_) => "a string",
                    _ => "a single value",
                };
                diags.push(Diagnostic::error(
                    path,
                    split.yaml_line,
                    "frontmatter-not-mapping",
                    format!("frontmatter is {kind}, not `key: value` pairs; it was ignored"),
                ));
            }
            Err(e) => {
                let line = e.location().map_or(split.yaml_line, |l| {
                    split.yaml_line + l.line().saturating_sub(1)
                });
                let msg = e.to_string();
                let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
                diags.push(Diagnostic::error(
                    path,
                    line,
                    "yaml-syntax",
                    format!("YAML error in frontmatter: {msg}; the frontmatter was ignored"),
                ));
            }
        }
        fm
    }

    /// The first of `keys` (lower-case synonyms) present, with its value.
    pub fn get(&self, keys: &[&str]) -> Option<(&str, &Value)> {
        keys.iter()
            .find_map(|k| self.values.get_key_value(*k))
            .map(|(k, v)| (k.as_str(), v))
    }

    /// The file line of a key (the frontmatter's first line when unknown).
    pub fn line_of(&self, key: &str) -> usize {
        self.lines.get(key).copied().unwrap_or(self.line.max(1))
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
        if key.is_empty() || self.values.contains_key(&key) {
            return;
        }
        self.lines.insert(key.clone(), line);
        self.values
            .insert(key, Value::String(value.trim().to_string()));
    }

    /// All keys and values, keys lower-cased.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.values.iter()
    }

    /// True when the note has no frontmatter values.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
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
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => {
            let s = s.trim();
            (!s.is_empty()).then(|| s.to_string())
        }
        Value::Sequence(seq) => {
            if let Some(inner) = unquoted_wikilink(v) {
                return Some(inner);
            }
            let items: Vec<String> = seq.iter().filter_map(value_text).collect();
            (!items.is_empty()).then(|| items.join(", "))
        }
        Value::Mapping(_) => None,
        Value::Tagged(t) => value_text(&t.value),
    }
}

fn unquoted_wikilink(v: &Value) -> Option<String> {
    if let Value::Sequence(outer) = v {
        if let [Value::Sequence(inner)] = outer.as_slice() {
            if let [one] = inner.as_slice() {
                return value_text(one).map(|s| format!("[[{s}]]"));
            }
        }
    }
    None
}

/// A YAML value as a list: a YAML list, a flow list, or a comma-separated string.
/// Commas inside `[[...]]` do not split.
pub fn value_list(v: &Value) -> Vec<String> {
    if let Some(link) = unquoted_wikilink(v) {
        return vec![link];
    }
    match v {
        Value::Sequence(seq) => seq.iter().filter_map(item_text).collect(),
        Value::String(s) => split_commas(s),
        other => value_text(other).into_iter().collect(),
    }
}

/// A list item as text; a mapping like `{name: rope, qty: 2}` reads as `rope (qty: 2)`.
fn item_text(v: &Value) -> Option<String> {
    let Value::Mapping(m) = v else {
        return value_text(v);
    };
    let mut name = None;
    let mut rest = Vec::new();
    for (k, val) in m {
        let k = value_text(k).unwrap_or_default();
        let Some(t) = value_text(val) else { continue };
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

/// Reads an integer value; `Err` carries the text that was not a number.
pub fn value_int(v: &Value) -> Result<Option<i64>, String> {
    match v {
        Value::Null => Ok(None),
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_f64().map(|f| f.round() as i64))
            .map(Some)
            .ok_or_else(|| n.to_string()),
        Value::String(s) => {
            let t = s.trim();
            if t.is_empty() {
                return Ok(None);
            }
            let t = t.trim_end_matches(|c: char| c.is_alphabetic() || c == ' ');
            let t = if t.is_empty() { s.trim() } else { t };
            t.replace(['_', ','], "")
                .parse::<i64>()
                .map(Some)
                .map_err(|_| s.clone())
        }
        other => Err(value_text(other).unwrap_or_else(|| "a list".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rstest::rstest;

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

    #[test]
    fn templater_is_flagged() {
        let (_, d) = fm("date: <% tp.date.now() %>\n");
        assert!(d.iter().any(|d| d.code == "templater" && d.line == 2));
    }

    #[rstest]
    #[case(serde_yaml::from_str("17").expect("test input"), Ok(Some(17)))]
    #[case(serde_yaml::from_str("\"17\"").expect("test input"), Ok(Some(17)))]
    #[case(serde_yaml::from_str("150 gp").expect("test input"), Ok(Some(150)))]
    #[case(serde_yaml::from_str("ten").expect("test input"), Err("ten".to_string()))]
    #[case(serde_yaml::from_str("~").expect("test input"), Ok(None))]
    fn ints(#[case] v: Value, #[case] want: Result<Option<i64>, String>) {
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
        fn comma_split_keeps_links(a in "[A-Za-z ]{1,10}", b in "[A-Za-z]{1,10}") {
            let s = format!("[[{a}, {b}]], {b}");
            let parts = split_commas(&s);
            prop_assert_eq!(parts.len(), 2);
        }
    }
}
