//! Wikilinks: parse `[[Note#Heading|Alias]]` forms and resolve them to notes.
//!
//! Resolution is deterministic: exact path, then the end of a path, then file stem, then
//! display name and aliases (case-insensitive, Unicode NFC), then a slug of the target
//! against file stems. Several files of the same name are told apart the way Obsidian does
//! (the linking note's folder, then the shortest path: [`crate::vault::Vault::resolve_from`]);
//! two notes with the same display name or alias are a real ambiguity, which `check` reports.

// FxHash: the keys are the vault's own names, and these maps are hit for every link.
type HashMap<K, V> = rustc_hash::FxHashMap<K, V>;

/// A parsed link target.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LinkTarget {
    /// The note part: a name, stem or vault path (may end in `.md`); kept inline when short,
    /// as most are (a vault holds one of these per link).
    pub note: compact_str::CompactString,
    /// The `#Heading` and `|Alias` parts, boxed apart: most links have neither, and a
    /// 10k-note vault holds ~130k links.
    extra: Option<Box<LinkExtra>>,
}

/// The rarer parts of a link target.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct LinkExtra {
    heading: Option<Box<str>>,
    alias: Option<Box<str>>,
}

impl LinkTarget {
    /// A target from its parts (empty parts count as absent).
    pub fn new(note: &str, heading: Option<&str>, alias: Option<&str>) -> LinkTarget {
        let heading = heading.filter(|h| !h.is_empty()).map(Box::from);
        let alias = alias.filter(|a| !a.is_empty()).map(Box::from);
        LinkTarget {
            note: note.into(),
            extra: (heading.is_some() || alias.is_some())
                .then(|| Box::new(LinkExtra { heading, alias })),
        }
    }

    /// The `#Heading` (or `#^block`) part, if any.
    pub fn heading(&self) -> Option<&str> {
        self.extra.as_ref()?.heading.as_deref()
    }

    /// The `|Alias` part, if any.
    pub fn alias(&self) -> Option<&str> {
        self.extra.as_ref()?.alias.as_deref()
    }

    /// Parses the inside of `[[...]]`: `Note`, `Note|Alias`, `Note#Heading`, `path/Note.md|Alias`.
    /// A trailing backslash before `|` (from tables, `\|`) is dropped.
    pub fn parse(inner: &str) -> LinkTarget {
        // `split_once` by byte search: links are short and there are many of them.
        use crate::names::trim;
        let (dest, alias) = match memchr::memchr(b'|', inner.as_bytes()) {
            Some(i) => (&inner[..i], Some(trim(&inner[i + 1..]))),
            None => (inner, None),
        };
        let dest = trim(trim(dest).trim_end_matches('\\'));
        let (note, heading) = match memchr::memchr(b'#', dest.as_bytes()) {
            Some(i) => (trim(&dest[..i]), Some(trim(&dest[i + 1..]))),
            None => (dest, None),
        };
        LinkTarget::new(note, heading, alias)
    }

    /// The text a reader sees: the alias, else the note's last path segment without `.md`.
    pub fn display(&self) -> String {
        self.shown().to_string()
    }

    /// [`LinkTarget::display`], borrowed.
    pub fn shown(&self) -> &str {
        if let Some(a) = self.alias() {
            return a;
        }
        let last = crate::names::last_segment(&self.note);
        strip_md(last)
    }
}

/// A wikilink found in plain text (frontmatter values, player messages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundLink {
    /// Byte range of the whole `[[...]]` (including a leading `!` for embeds).
    pub range: std::ops::Range<usize>,
    /// The parsed target.
    pub target: LinkTarget,
    /// True for `![[...]]`.
    pub embed: bool,
}

/// Finds every `[[...]]` in plain text. Unclosed or empty brackets are skipped.
pub fn find_wikilinks(text: &str) -> Vec<FoundLink> {
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some(i) = text[pos..].find("[[") {
        let start = pos + i;
        let inner_start = start + 2;
        let Some(j) = text[inner_start..].find("]]") else {
            break;
        };
        let inner = &text[inner_start..inner_start + j];
        let end = inner_start + j + 2;
        if inner.contains("[[") || inner.contains('\n') {
            pos = inner_start;
            continue;
        }
        let embed = start > 0 && text.as_bytes()[start - 1] == b'!';
        if !inner.trim().is_empty() {
            out.push(FoundLink {
                range: if embed { start - 1..end } else { start..end },
                target: LinkTarget::parse(inner),
                embed,
            });
        }
        pos = end;
    }
    out
}

/// If the whole value is a single wikilink, its target.
pub fn as_single_link(value: &str) -> Option<LinkTarget> {
    let v = value.trim();
    let links = find_wikilinks(v);
    match links.as_slice() {
        [one] if one.range == (0..v.len()) => Some(one.target.clone()),
        _ => None,
    }
}

/// The link a value starts with, when it starts with one (`[[Havenport]] (whisked away)`).
pub fn leading_link(value: &str) -> Option<LinkTarget> {
    let v = value.trim();
    find_wikilinks(v)
        .into_iter()
        .next()
        .filter(|l| l.range.start == 0)
        .map(|l| l.target)
}

/// Drops one trailing `.md` (any case) from a path or link target.
pub fn strip_md(s: &str) -> &str {
    match s.len().checked_sub(3) {
        Some(i) if s.is_char_boundary(i) && s[i..].eq_ignore_ascii_case(".md") => &s[..i],
        _ => s,
    }
}

pub use crate::names::{norm_key, slug};

/// The two keys [`LinkIndex::resolve`] looks a target up by: its normalised text (matched
/// against paths, file stems, display names and aliases) and its slug (matched against the
/// slugs of file stems). `None` for an empty target, which resolves to nothing.
pub fn lookup_keys(target: &str) -> Option<(String, String)> {
    let t = target
        .trim()
        .trim_start_matches("./")
        .trim_start_matches('/');
    let t = strip_md(t);
    (!t.is_empty()).then(|| (norm_key(t), slug(t)))
}

/// Every key [`LinkIndex::add`] files a note under: its path without `.md`, its stem, the
/// slug of its stem, and each of its names. A target none of whose [`lookup_keys`] is
/// among these never resolves to the note (used to find what a renamed note affects).
pub fn note_keys(path: &str, stem: &str, names: &[String]) -> Vec<String> {
    let mut v = vec![norm_key(strip_md(path)), norm_key(stem), slug(stem)];
    v.extend(names.iter().map(|n| norm_key(n)));
    v.retain(|k| !k.is_empty());
    v
}

/// A note's lookup keys, from [`LinkIndex::keys`].
#[derive(Debug, Clone)]
pub struct NoteKeys {
    path: String,
    stem: String,
    slug: String,
    names: Vec<String>,
}

/// The tier a target resolved on, in the order they are tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    /// The exact vault path (`canon/npcs/ida-marsh`).
    Path,
    /// The end of a path (`npcs/ida-marsh`).
    Suffix,
    /// The file name (`ida-marsh`, `Ida Marsh`).
    Stem,
    /// A display name or alias from the note.
    Name,
    /// The slug of a file name (`Ida Marsh` finding `ida-marsh.md`).
    Slug,
}

impl Tier {
    /// Whether the tier matches file names or paths, where Obsidian's own rule breaks ties.
    pub fn is_file(self) -> bool {
        !matches!(self, Tier::Name)
    }
}

/// What a link resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    /// Exactly one note (index into the vault's notes).
    Found(usize),
    /// More than one note matched on the same tier.
    Ambiguous(Vec<usize>),
    /// No note matched.
    NotFound,
}

/// Lookup tables from every name a note can be linked by to the notes that carry it.
#[derive(Debug, Clone, Default)]
pub struct LinkIndex {
    paths: Table,
    /// Every proper end of a path that starts after a `/` and holds one (`npcs/ida` for
    /// `canon/npcs/ida`): partial paths are looked up, not searched for.
    suffixes: Table,
    stems: Table,
    names: Table,
    slugs: Table,
}

/// One lookup table: key -> the notes carrying it. Keys are short names kept inline and
/// almost every key names one or two notes, so most entries allocate nothing of their own
/// (a 10k-note vault has ~65k keys).
type Table = HashMap<compact_str::CompactString, smallvec::SmallVec<[u32; 2]>>;

fn push(map: &mut Table, key: &str, idx: usize) {
    if key.is_empty() {
        return;
    }
    let idx = note_slot(idx);
    let v = map.entry(key.into()).or_default();
    if !v.contains(&idx) {
        v.push(idx);
    }
}

/// A note index as the tables keep it.
fn note_slot(idx: usize) -> u32 {
    u32::try_from(idx).expect("fewer than 4 billion notes")
}

fn push_suffixes(map: &mut Table, path: &str, idx: usize) {
    let mut rest = path;
    while let Some((_, tail)) = rest.split_once('/') {
        if !tail.contains('/') {
            break;
        }
        push(map, tail, idx);
        rest = tail;
    }
}

impl LinkIndex {
    /// Adds a note: its vault path (with `.md`), its stem, and its display names and aliases.
    pub fn add(&mut self, idx: usize, path: &str, stem: &str, names: &[String]) {
        self.add_keys(idx, LinkIndex::keys(path, stem, names));
    }

    /// The lookup keys of one note (path, stem, slug, names), computed apart from the tables
    /// so many notes' keys can be computed in parallel.
    pub fn keys(path: &str, stem: &str, names: &[String]) -> NoteKeys {
        NoteKeys {
            path: norm_key(strip_md(path)),
            stem: norm_key(stem),
            slug: slug(stem),
            names: names.iter().map(|n| norm_key(n)).collect(),
        }
    }

    /// Empty tables sized for these notes' keys, so they never grow (a grown table holds up
    /// to twice the slots it needs for as long as the vault is loaded).
    pub fn sized_for(keys: &[NoteKeys]) -> LinkIndex {
        let table = |n: usize| Table::with_capacity_and_hasher(n, Default::default());
        let names = keys.iter().map(|k| k.names.len()).sum();
        let suffixes = keys
            .iter()
            .map(|k| k.path.matches('/').count().saturating_sub(1))
            .sum();
        LinkIndex {
            paths: table(keys.len()),
            suffixes: table(suffixes),
            stems: table(keys.len()),
            names: table(names),
            slugs: table(keys.len()),
        }
    }

    /// The index of notes `0..keys.len()` from their precomputed keys. The tables are
    /// independent, so they are filled on two threads; each in note order, as
    /// [`LinkIndex::add_keys`] one note at a time would.
    pub fn from_keys(keys: &[NoteKeys]) -> LinkIndex {
        let mut ix = LinkIndex::sized_for(keys);
        let LinkIndex {
            paths,
            suffixes,
            stems,
            names,
            slugs,
        } = &mut ix;
        rayon::join(
            || {
                for (i, k) in keys.iter().enumerate() {
                    push(paths, &k.path, i);
                    push(stems, &k.stem, i);
                    push(slugs, &k.slug, i);
                }
            },
            || {
                for (i, k) in keys.iter().enumerate() {
                    push_suffixes(suffixes, &k.path, i);
                    for n in &k.names {
                        push(names, n, i);
                    }
                }
            },
        );
        ix
    }

    /// Adds a note by its precomputed keys.
    pub fn add_keys(&mut self, idx: usize, k: NoteKeys) {
        push_suffixes(&mut self.suffixes, &k.path, idx);
        push(&mut self.paths, &k.path, idx);
        push(&mut self.stems, &k.stem, idx);
        push(&mut self.slugs, &k.slug, idx);
        for n in &k.names {
            push(&mut self.names, n, idx);
        }
    }

    /// Removes a note from every table (used by incremental reloads).
    pub fn remove(&mut self, idx: usize) {
        let idx = note_slot(idx);
        for map in [
            &mut self.paths,
            &mut self.suffixes,
            &mut self.stems,
            &mut self.names,
            &mut self.slugs,
        ] {
            map.retain(|_, v| {
                v.retain(|i| *i != idx);
                !v.is_empty()
            });
        }
    }

    /// Renumbers note indices after a note was inserted at `at` (`inserted`) or removed
    /// from `at` (not inserted): every index at or after the spot moves by one.
    pub fn shift(&mut self, at: usize, inserted: bool) {
        let at = note_slot(at);
        for map in [
            &mut self.paths,
            &mut self.suffixes,
            &mut self.stems,
            &mut self.names,
            &mut self.slugs,
        ] {
            for v in map.values_mut() {
                for i in v.iter_mut() {
                    if inserted && *i >= at {
                        *i += 1;
                    } else if !inserted && *i > at {
                        *i -= 1;
                    }
                }
            }
        }
    }

    /// Resolves a link target or a plain reference (a slug, a name, an alias, a path),
    /// without the linking note's folder (see [`LinkIndex::resolve_tiered`]).
    pub fn resolve(&self, target: &str) -> Resolution {
        self.resolve_tiered(target).1
    }

    /// Resolves a target and says on which tier: the exact vault path, the end of a path
    /// (`[[Players/Bolt]]`), the file name, a display name or alias, or the slug of a file
    /// name. Several candidates on a file tier are for the caller to break the way Obsidian
    /// does ([`crate::vault::Vault::resolve_from`]); on the name tier they are a real
    /// ambiguity.
    pub fn resolve_tiered(&self, target: &str) -> (Tier, Resolution) {
        // `trim_start_matches("./")`, without building a substring searcher per link.
        let mut t = crate::names::trim(target);
        while let Some(rest) = t.strip_prefix("./") {
            t = rest;
        }
        let t = strip_md(t.trim_start_matches('/'));
        if t.is_empty() {
            return (Tier::Path, Resolution::NotFound);
        }
        // Links are resolved by the hundred thousand: one key buffer per thread.
        thread_local! {
            static KEY: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
        }
        KEY.with_borrow_mut(|key| {
            crate::names::norm_key_into(t, key);
            let found = self.resolve_key(t, key);
            if key.capacity() > 4096 {
                *key = String::new(); // a freak target's buffer is not kept for the session
            }
            found
        })
    }

    /// [`LinkIndex::resolve_tiered`] of a trimmed target `t` and its [`norm_key`].
    fn resolve_key(&self, t: &str, key: &str) -> (Tier, Resolution) {
        let found = |v: &[u32]| match v {
            [] => Resolution::NotFound,
            [one] => Resolution::Found(*one as usize),
            many => {
                let mut v: Vec<usize> = many.iter().map(|&i| i as usize).collect();
                v.sort_unstable();
                Resolution::Ambiguous(v)
            }
        };
        if let Some(v) = self.paths.get(key) {
            return (Tier::Path, found(v));
        }
        if key.contains('/') {
            // A partial path: the notes whose path ends with it.
            if let Some(v) = self.suffixes.get(key).filter(|v| !v.is_empty()) {
                return (Tier::Suffix, found(v));
            }
        }
        let last = crate::names::last_segment(key);
        if let Some(v) = self.stems.get(last).filter(|v| !v.is_empty()) {
            return (Tier::Stem, found(v));
        }
        if let Some(v) = self.names.get(key).filter(|v| !v.is_empty()) {
            return (Tier::Name, found(v));
        }
        if let Some(v) = self.slugs.get(slug(t).as_str()).filter(|v| !v.is_empty()) {
            return (Tier::Slug, found(v));
        }
        (Tier::Path, Resolution::NotFound)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rstest::rstest;

    #[rstest]
    #[case("Note", "Note", None, None)]
    #[case("Note|Alias", "Note", None, Some("Alias"))]
    #[case("Note#Heading", "Note", Some("Heading"), None)]
    #[case("path/Note.md|Alias", "path/Note.md", None, Some("Alias"))]
    #[case("Note#H|A", "Note", Some("H"), Some("A"))]
    #[case("Note\\|A", "Note", None, Some("A"))]
    #[case(" Spaced  | x ", "Spaced", None, Some("x"))]
    #[case("Note#^block", "Note", Some("^block"), None)]
    fn parses_targets(
        #[case] inner: &str,
        #[case] note: &str,
        #[case] heading: Option<&str>,
        #[case] alias: Option<&str>,
    ) {
        let t = LinkTarget::parse(inner);
        assert_eq!(&*t.note, note);
        assert_eq!(t.heading(), heading);
        assert_eq!(t.alias(), alias);
    }

    #[test]
    fn finds_links_and_embeds() {
        let found = find_wikilinks("a [[One]] b ![[Two.png]] [[]] [[Three|3]] [[open");
        let names: Vec<_> = found.iter().map(|f| &*f.target.note).collect();
        assert_eq!(names, ["One", "Two.png", "Three"]);
        assert!(found[1].embed);
        assert_eq!(found[2].target.display(), "3");
    }

    #[test]
    fn resolves_by_tier_and_reports_ambiguity() {
        let mut ix = LinkIndex::default();
        ix.add(
            0,
            "canon/npcs/mother-ashka.md",
            "mother-ashka",
            &["Mother Ashka".into(), "the Eel-Mother".into()],
        );
        ix.add(
            1,
            "canon/locations/the-gilded-eel.md",
            "the-gilded-eel",
            &["The Gilded Eel".into()],
        );
        ix.add(2, "a/Dup.md", "Dup", &[]);
        ix.add(3, "b/Dup.md", "Dup", &[]);
        assert_eq!(ix.resolve("mother-ashka"), Resolution::Found(0));
        assert_eq!(ix.resolve("MOTHER ASHKA"), Resolution::Found(0));
        assert_eq!(ix.resolve("the eel-mother"), Resolution::Found(0));
        assert_eq!(
            ix.resolve("canon/locations/the-gilded-eel.md"),
            Resolution::Found(1)
        );
        assert_eq!(ix.resolve("The  Gilded Eel"), Resolution::Found(1));
        assert_eq!(ix.resolve("a/Dup"), Resolution::Found(2));
        assert_eq!(ix.resolve("Dup"), Resolution::Ambiguous(vec![2, 3]));
        assert_eq!(ix.resolve("nowhere"), Resolution::NotFound);
        ix.remove(3);
        assert_eq!(ix.resolve("Dup"), Resolution::Found(2));
    }

    #[test]
    fn lookup_keys_match_note_keys_exactly_when_resolved() {
        let names = vec!["Mother Ashka".to_string(), "the Eel-Mother".to_string()];
        let mut ix = LinkIndex::default();
        ix.add(0, "canon/npcs/Mother-Ashka.MD", "Mother-Ashka", &names);
        let keys = note_keys("canon/npcs/Mother-Ashka.MD", "Mother-Ashka", &names);
        for t in [
            "./canon/npcs/mother-ashka.md",
            "MOTHER ASHKA",
            "the eel-mother",
            "mother ashka!",
            "nobody",
            "",
        ] {
            let found = ix.resolve(t) == Resolution::Found(0);
            let shares =
                lookup_keys(t).is_some_and(|(k, s)| keys.contains(&k) || keys.contains(&s));
            assert_eq!(found, shares, "{t}");
        }
    }

    #[test]
    fn unicode_names_resolve_normalised() {
        let mut ix = LinkIndex::default();
        // "Café" written with a combining accent in the file name.
        ix.add(0, "Cafe\u{301}.md", "Cafe\u{301}", &[]);
        assert_eq!(ix.resolve("CAFÉ"), Resolution::Found(0));
    }

    proptest! {
        /// The suffix table finds exactly the notes whose path ends with a partial path,
        /// as scanning every path would, also after notes are removed.
        #[test]
        fn partial_paths_resolve_as_a_scan_would(
            paths in proptest::collection::vec(proptest::collection::vec("[abc]", 1..5), 1..12),
            key in proptest::collection::vec("[abc]", 2..4),
            removed in 0usize..12,
        ) {
            let paths: Vec<String> = paths.iter().map(|p| format!("{}.md", p.join("/"))).collect();
            let mut index = LinkIndex::default();
            for (i, p) in paths.iter().enumerate() {
                let stem = p.rsplit('/').next().unwrap_or(p).trim_end_matches(".md");
                index.add(i, p, stem, &[]);
            }
            index.remove(removed);
            let key = key.join("/");
            let mut want: Vec<usize> = paths
                .iter()
                .enumerate()
                .filter(|&(i, p)| i != removed && strip_md(p).ends_with(&format!("/{key}")))
                .map(|(i, _)| i)
                .collect();
            want.sort_unstable();
            let exact = paths.iter().enumerate().any(|(i, p)| i != removed && strip_md(p) == key);
            let (tier, got) = index.resolve_tiered(&key);
            if !exact && !want.is_empty() {
                prop_assert_eq!(tier, Tier::Suffix);
                let got = match got {
                    Resolution::Found(i) => vec![i],
                    Resolution::Ambiguous(v) => v,
                    Resolution::NotFound => vec![],
                };
                prop_assert_eq!(got, want);
            } else if !exact {
                prop_assert_ne!(tier, Tier::Suffix);
            }
        }

        #[test]
        fn parse_never_panics(s in "\\PC{0,40}") {
            let t = LinkTarget::parse(&s);
            prop_assert!(!t.note.contains('|'));
            let _ = find_wikilinks(&s);
        }

        #[test]
        fn parse_roundtrip(note in "[A-Za-z][A-Za-z /.-]{0,15}", h in proptest::option::of("[A-Za-z ]{1,8}"), a in proptest::option::of("[A-Za-z ]{1,8}")) {
            let mut inner = note.clone();
            if let Some(h) = &h { inner.push('#'); inner.push_str(h); }
            if let Some(a) = &a { inner.push('|'); inner.push_str(a); }
            let t = LinkTarget::parse(&inner);
            prop_assert_eq!(&*t.note, note.trim());
            prop_assert_eq!(t.heading(), h.as_deref().map(str::trim).filter(|h| !h.is_empty()));
            prop_assert_eq!(t.alias(), a.as_deref().map(str::trim).filter(|a| !a.is_empty()));
        }

        #[test]
        fn found_ranges_are_links(text in "[a-z \\[\\]|#!]{0,60}") {
            for f in find_wikilinks(&text) {
                let s = &text[f.range.clone()];
                prop_assert!(s.ends_with("]]"));
                prop_assert!(s.starts_with("[[") || s.starts_with("![["));
            }
        }
    }
}
