//! Wikilinks: parse `[[Note#Heading|Alias]]` forms and resolve them to notes.
//!
//! Resolution is deterministic: exact path, then the end of a path, then file stem, then
//! display name and aliases (case-insensitive, Unicode NFC), then a slug of the target
//! against file stems. Several files of the same name are told apart the way Obsidian does
//! (the linking note's folder, then the shortest path: [`crate::vault::Vault::resolve_from`]);
//! two notes with the same display name or alias are a real ambiguity, which `check` reports.

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
pub(crate) struct FoundLink {
    /// Byte range of the whole `[[...]]` (including a leading `!` for embeds).
    pub range: std::ops::Range<usize>,
    /// The parsed target.
    pub target: LinkTarget,
    /// True for `![[...]]`.
    pub embed: bool,
}

/// Finds every `[[...]]` in plain text. Unclosed or empty brackets are skipped.
pub(crate) fn find_wikilinks(text: &str) -> Vec<FoundLink> {
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
pub(crate) fn as_single_link(value: &str) -> Option<LinkTarget> {
    let v = value.trim();
    let links = find_wikilinks(v);
    match links.as_slice() {
        [one] if one.range == (0..v.len()) => Some(one.target.clone()),
        _ => None,
    }
}

/// The link a value starts with, when it starts with one (`[[Havenport]] (whisked away)`).
pub(crate) fn leading_link(value: &str) -> Option<LinkTarget> {
    let v = value.trim();
    find_wikilinks(v)
        .into_iter()
        .next()
        .filter(|l| l.range.start == 0)
        .map(|l| l.target)
}

/// Drops one trailing `.md` (any case) from a path or link target.
pub(crate) fn strip_md(s: &str) -> &str {
    match s.len().checked_sub(3) {
        Some(i) if s.is_char_boundary(i) && s[i..].eq_ignore_ascii_case(".md") => &s[..i],
        _ => s,
    }
}

pub(crate) use crate::names::{norm_key, slug};

/// The two keys [`LinkIndex::resolve`] looks a target up by: its normalised text (matched
/// against paths, file stems, display names and aliases) and its slug (matched against the
/// slugs of file stems). `None` for an empty target, which resolves to nothing.
pub(crate) fn lookup_keys(target: &str) -> Option<(String, String)> {
    let t = target
        .trim()
        .trim_start_matches("./")
        .trim_start_matches('/');
    let t = strip_md(t);
    (!t.is_empty()).then(|| (norm_key(t), slug(t)))
}

/// Every key [`LinkIndex::add`] files a note under ([`LinkIndex::keys`], the one rule):
/// its path without `.md`, the ends of that path that hold a `/`, its stem, the slug of its
/// stem, and each of its names. A target none of whose [`lookup_keys`] is among these never
/// resolves to the note (the watcher finds what a renamed or moved note affects this way).
pub(crate) fn note_keys(path: &str, stem: &str, names: &[String]) -> Vec<String> {
    let k = LinkIndex::keys(path, stem, names);
    k.keys.iter().map(|key| k.get(key).to_string()).collect()
}

/// A note's lookup keys, from [`LinkIndex::keys`]: every key in one buffer, each with the
/// tiers the note is filed on under it and its hash. Keys are computed on many threads, so
/// the tables are then filled without normalising or hashing anything.
#[derive(Debug, Clone, Default)]
pub struct NoteKeys {
    text: String,
    keys: smallvec::SmallVec<[Key; 4]>,
}

/// One key of a note: `text[start..end]` of its [`NoteKeys`].
#[derive(Debug, Clone, Copy)]
struct Key {
    hash: u64,
    start: u32,
    end: u32,
    tiers: u8,
}

impl NoteKeys {
    fn get(&self, k: &Key) -> &str {
        &self.text[k.start as usize..k.end as usize]
    }

    /// Files the key just written at `text[start..]` on `tier`: nothing when it is empty,
    /// one more tier on the key when the note already has that key (a stem that is its own
    /// slug is one entry, not two).
    fn file(&mut self, start: usize, tier: Tier) {
        let end = self.text.len();
        if start == end {
            return;
        }
        let new = &self.text[start..end];
        let same = |k: &&mut Key| &self.text[k.start as usize..k.end as usize] == new;
        if let Some(k) = self.keys.iter_mut().find(same) {
            k.tiers |= tier.bit();
            self.text.truncate(start);
            return;
        }
        let pos = |i: usize| u32::try_from(i).expect("a note's keys are under 4 GB");
        self.keys.push(Key {
            hash: hash_key(new),
            start: pos(start),
            end: pos(end),
            tiers: tier.bit(),
        });
    }
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

    /// The tier's bit in a [`Filed`] entry's tier set.
    fn bit(self) -> u8 {
        1 << self as u8
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

/// Every name a note can be linked by, in one table: key -> the notes filed under it, each
/// with the tiers it is filed on (a top-level `ida-marsh.md` is under `ida-marsh` as path,
/// file name and slug at once). A link costs one lookup for its own text, and a second only
/// for the file name of a partial path or for a slug that differs from the text: a big
/// vault's table is far larger than the cache, and each lookup is a miss. The table is cut
/// in two by a bit of the key's hash, so two threads fill it.
#[derive(Debug, Clone, Default)]
pub struct LinkIndex {
    shards: [Table; 2],
}

/// One shard: (key, the notes filed under it). Keys are short names kept inline, and almost
/// every key names one note, so most entries allocate nothing of their own (a 10k-note
/// vault has ~50k keys). Hashes are not stored: a shard re-hashes a key only when it grows.
type Table = hashbrown::HashTable<(compact_str::CompactString, smallvec::SmallVec<[Filed; 2]>)>;

/// A note filed under a key: its index in the low bits, the set of [`Tier`]s above them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Filed(u32);

impl Filed {
    const NOTE_BITS: u32 = 27;
    const NOTE_MASK: u32 = (1 << Filed::NOTE_BITS) - 1;

    fn note(self) -> u32 {
        self.0 & Filed::NOTE_MASK
    }

    fn tiers(self) -> u8 {
        (self.0 >> Filed::NOTE_BITS) as u8
    }

    fn on(self, tier: Tier) -> bool {
        self.tiers() & tier.bit() != 0
    }

    fn add_tiers(&mut self, tiers: u8) {
        self.0 |= u32::from(tiers) << Filed::NOTE_BITS;
    }
}

/// A note index as the tables keep it.
fn note_slot(idx: usize) -> u32 {
    u32::try_from(idx)
        .ok()
        .filter(|&i| i <= Filed::NOTE_MASK)
        .expect("fewer than 134 million notes")
}

fn hash_key(key: &str) -> u64 {
    use std::hash::BuildHasher;
    // FxHash: the keys are the vault's own names, and the table is hit for every link.
    rustc_hash::FxBuildHasher.hash_one(key)
}

/// The shard a key's hash puts it in. FxHash moves its best bits to the bottom; bit 25 is
/// one of them and lies above every bucket bit of a table under 2^25 slots, so each shard
/// still spreads its keys over all its buckets.
fn shard_of(hash: u64) -> usize {
    (hash >> 25) as usize & 1
}

/// Files note `idx` under `key` (with its `hash`) on `tiers`. A note's keys are distinct
/// ([`NoteKeys::file`] merges repeats) and a note is filed after every note before it, or
/// after it was removed: if the note is under the key already, it is the last one there.
/// So filing is constant time even when thousands of notes share a key (`Untitled`).
fn file_in(table: &mut Table, hash: u64, key: &str, idx: u32, tiers: u8) {
    let entry = table.entry(hash, |(k, _)| k == key, |(k, _)| hash_key(k));
    let (_, filed) = entry
        .or_insert_with(|| (key.into(), smallvec::SmallVec::new()))
        .into_mut();
    match filed.last_mut().filter(|f| f.note() == idx) {
        Some(f) => f.add_tiers(tiers),
        None => {
            let mut f = Filed(idx);
            f.add_tiers(tiers);
            filed.push(f);
        }
    }
}

/// Every tier any note of `filed` is on.
fn tiers_of(filed: &[Filed]) -> u8 {
    filed.iter().fold(0, |on, f| on | f.tiers())
}

/// The notes of `filed` that are on `tier` (at least one is), as a resolution.
fn resolution(filed: &[Filed], tier: Tier) -> Resolution {
    let mut on = filed
        .iter()
        .filter(|f| f.on(tier))
        .map(|f| f.note() as usize);
    let first = on.next().expect("a note on the tier");
    match on.next() {
        None => Resolution::Found(first),
        Some(second) => {
            let mut v: Vec<usize> = [first, second].into_iter().chain(on).collect();
            v.sort_unstable();
            Resolution::Ambiguous(v)
        }
    }
}

/// The notes a target names on the first tier that has any, as the index holds them (in no
/// particular order, borrowed): what [`LinkIndex::resolve_tiered`] sorts into a
/// [`Resolution`], and what [`crate::vault::Vault::resolve_from`] breaks ties in without
/// copying when many files share a name.
#[derive(Debug, Clone, Copy)]
pub struct Named<'a> {
    filed: &'a [Filed],
    tier: Tier,
}

impl Named<'_> {
    const NONE: Named<'static> = Named {
        filed: &[],
        tier: Tier::Path,
    };

    /// The tier the target matched on ([`Tier::Path`] when it matched none).
    pub fn tier(&self) -> Tier {
        self.tier
    }

    /// The notes named, by index, unsorted.
    pub fn notes(&self) -> impl Iterator<Item = usize> + '_ {
        let tier = self.tier;
        self.filed
            .iter()
            .filter(move |f| f.on(tier))
            .map(|f| f.note() as usize)
    }

    /// Whether more than one note is named.
    pub fn is_many(&self) -> bool {
        self.notes().nth(1).is_some()
    }

    /// The notes named, as a resolution (several sorted by index).
    pub fn resolution(&self) -> Resolution {
        if self.notes().next().is_none() {
            return Resolution::NotFound;
        }
        resolution(self.filed, self.tier)
    }
}

impl LinkIndex {
    /// Adds a note: its vault path (with `.md`), its stem, and its display names and aliases.
    pub fn add(&mut self, idx: usize, path: &str, stem: &str, names: &[String]) {
        self.add_keys(idx, LinkIndex::keys(path, stem, names));
    }

    /// The lookup keys of one note: its path without `.md`, every proper end of the path
    /// that starts after a `/` and holds one (`npcs/ida` for `canon/npcs/ida`: partial paths
    /// are looked up, not searched for), its stem, its names, and the slug of its stem.
    /// Computed apart from the table, so many notes' keys are computed in parallel.
    pub fn keys(path: &str, stem: &str, names: &[String]) -> NoteKeys {
        let mut k = NoteKeys::default();
        // Room for every key at once: the path, its ends, the stem twice (as itself and as
        // its slug) and the names; more only for a deep path or a name that grows lower-cased.
        let names_len: usize = names.iter().map(String::len).sum();
        k.text.reserve(2 * path.len() + 2 * stem.len() + names_len);
        let mut buf = String::new();
        let key = |k: &mut NoteKeys, buf: &mut String, s: &str, tier: Tier| {
            crate::names::norm_key_into(s, buf);
            let start = k.text.len();
            k.text.push_str(buf);
            k.file(start, tier);
        };
        key(&mut k, &mut buf, strip_md(path), Tier::Path);
        // The suffixes are ends of the path key (`text[..end]`), copied within the buffer.
        let end = k.text.len();
        let mut rest = 0;
        while let Some(slash) = memchr::memchr(b'/', &k.text.as_bytes()[rest..end]) {
            let tail = rest + slash + 1;
            if memchr::memchr(b'/', &k.text.as_bytes()[tail..end]).is_none() {
                break;
            }
            let start = k.text.len();
            k.text.extend_from_within(tail..end);
            k.file(start, Tier::Suffix);
            rest = tail;
        }
        key(&mut k, &mut buf, stem, Tier::Stem);
        // The slug of the stem, from the stem's key still in `buf`.
        let start = k.text.len();
        crate::names::slug_of_key_into(&buf, &mut k.text);
        k.file(start, Tier::Slug);
        for n in names {
            key(&mut k, &mut buf, n, Tier::Name);
        }
        k
    }

    /// An empty table sized for these notes' keys, so it never grows (a grown table holds
    /// up to twice the slots it needs for as long as the vault is loaded).
    pub fn sized_for(keys: &[NoteKeys]) -> LinkIndex {
        let mut per_shard = [0usize; 2];
        for k in keys.iter().flat_map(|n| &n.keys) {
            per_shard[shard_of(k.hash)] += 1;
        }
        LinkIndex {
            shards: per_shard.map(Table::with_capacity),
        }
    }

    /// The index of notes `0..keys.len()` from their precomputed keys: each shard filled on
    /// its own thread, in note order, as [`LinkIndex::add_keys`] one note at a time would.
    pub fn from_keys(keys: &[NoteKeys]) -> LinkIndex {
        let mut ix = LinkIndex::sized_for(keys);
        let fill = |table: &mut Table, shard: usize| {
            for (i, n) in keys.iter().enumerate() {
                for k in n.keys.iter().filter(|k| shard_of(k.hash) == shard) {
                    file_in(table, k.hash, n.get(k), note_slot(i), k.tiers);
                }
            }
        };
        let [a, b] = &mut ix.shards;
        rayon::join(|| fill(a, 0), || fill(b, 1));
        ix
    }

    /// Adds a note by its precomputed keys.
    pub fn add_keys(&mut self, idx: usize, n: NoteKeys) {
        for k in &n.keys {
            let table = &mut self.shards[shard_of(k.hash)];
            file_in(table, k.hash, n.get(k), note_slot(idx), k.tiers);
        }
    }

    /// Removes a note from the table (used by incremental reloads).
    pub fn remove(&mut self, idx: usize) {
        let idx = note_slot(idx);
        for table in &mut self.shards {
            table.retain(|(_, filed)| {
                filed.retain(|f| f.note() != idx);
                !filed.is_empty()
            });
        }
    }

    /// Renumbers note indices after a note was inserted at `at` (`inserted`) or removed
    /// from `at` (not inserted): every index at or after the spot moves by one.
    pub fn shift(&mut self, at: usize, inserted: bool) {
        let at = note_slot(at);
        for table in &mut self.shards {
            for (_, filed) in table.iter_mut() {
                for f in filed.iter_mut() {
                    if inserted && f.note() >= at {
                        f.0 += 1;
                    } else if !inserted && f.note() > at {
                        f.0 -= 1;
                    }
                }
            }
        }
    }

    /// The notes filed under `key`, on any tier.
    fn get(&self, key: &str) -> &[Filed] {
        let hash = hash_key(key);
        self.shards[shard_of(hash)]
            .find(hash, |(k, _)| k == key)
            .map_or(&[], |(_, filed)| filed.as_slice())
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
        let named = self.named(target);
        (named.tier(), named.resolution())
    }

    /// The notes a target names on the first tier that has any (see
    /// [`LinkIndex::resolve_tiered`]), borrowed from the index.
    pub fn named(&self, target: &str) -> Named<'_> {
        // `trim_start_matches("./")`, without building a substring searcher per link.
        let mut t = crate::names::trim(target);
        while let Some(rest) = t.strip_prefix("./") {
            t = rest;
        }
        let t = strip_md(t.trim_start_matches('/'));
        if t.is_empty() {
            return Named::NONE;
        }
        // Links are resolved by the hundred thousand: key buffers per thread.
        thread_local! {
            static KEYS: std::cell::RefCell<(String, String)> =
                const { std::cell::RefCell::new((String::new(), String::new())) };
        }
        KEYS.with_borrow_mut(|(key, slug)| {
            crate::names::norm_key_into(t, key);
            let found = self.resolve_key(key, slug);
            if key.capacity() > 4096 || slug.capacity() > 4096 {
                // A freak target's buffers are not kept for the session.
                (*key, *slug) = (String::new(), String::new());
            }
            found
        })
    }

    /// The one note filed under `key` as its exact path, if exactly one is.
    pub fn at_path(&self, key: &str) -> Option<usize> {
        let at = Named {
            filed: self.get(key),
            tier: Tier::Path,
        };
        let mut notes = at.notes();
        let one = notes.next()?;
        notes.next().is_none().then_some(one)
    }

    /// [`LinkIndex::named`] of a target's [`norm_key`], with `slug` as a buffer.
    fn resolve_key(&self, key: &str, slug: &mut String) -> Named<'_> {
        let filed = self.get(key);
        // The tiers of every note under the key, found in one pass.
        let on = tiers_of(filed);
        let is_on = |tier: Tier| on & tier.bit() != 0;
        if is_on(Tier::Path) {
            return Named {
                filed,
                tier: Tier::Path,
            };
        }
        // Only partial paths hold a `/`, so only they are filed as suffixes.
        if is_on(Tier::Suffix) {
            return Named {
                filed,
                tier: Tier::Suffix,
            };
        }
        let last = crate::names::last_segment(key);
        if last.len() == key.len() {
            if is_on(Tier::Stem) {
                return Named {
                    filed,
                    tier: Tier::Stem,
                };
            }
        } else {
            let by_stem = self.get(last);
            if tiers_of(by_stem) & Tier::Stem.bit() != 0 {
                return Named {
                    filed: by_stem,
                    tier: Tier::Stem,
                };
            }
        }
        if is_on(Tier::Name) {
            return Named {
                filed,
                tier: Tier::Name,
            };
        }
        slug.clear();
        crate::names::slug_of_key_into(key, slug);
        let by_slug = if *slug == key { filed } else { self.get(slug) };
        if tiers_of(by_slug) & Tier::Slug.bit() != 0 {
            return Named {
                filed: by_slug,
                tier: Tier::Slug,
            };
        }
        Named::NONE
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
            "npcs/Mother-Ashka",
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

        /// The one table resolves every target as a scan over the notes would, tier by tier
        /// (path, end of a path, file name, name or alias, slug of the file name), also after
        /// a note is removed and the rest renumbered, as an incremental reload does.
        #[test]
        fn every_tier_resolves_as_a_scan_would(
            notes in proptest::collection::vec(
                (
                    proptest::collection::vec("[ab]|a b|A-b|b'a", 1..4),
                    proptest::collection::vec("[ab]|a b|A b|a/b|b-a", 0..3),
                ),
                1..10,
            ),
            target in "[ab]|a b|A-b|a/b|b/a b|b'a|a-b|./a/b|ab.md| a  B ",
            removed in 0usize..10,
        ) {
            let notes: Vec<(String, String, Vec<String>)> = notes
                .into_iter()
                .map(|(parts, names)| {
                    let stem = parts.last().expect("one part").clone();
                    (format!("{}.md", parts.join("/")), stem, names)
                })
                .collect();
            let mut index = LinkIndex::default();
            for (i, (p, stem, names)) in notes.iter().enumerate() {
                index.add(i, p, stem, names);
            }
            let removed = removed % notes.len();
            index.remove(removed);
            index.shift(removed, false);
            let live: Vec<&(String, String, Vec<String>)> = notes
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != removed)
                .map(|(_, n)| n)
                .collect();
            // The rule, written as a scan.
            let t = strip_md(target.trim().trim_start_matches("./").trim_start_matches('/'));
            let key = norm_key(t);
            let last = key.rsplit('/').next().unwrap_or(&key).to_string();
            type Rule<'a> = Box<dyn Fn(&(String, String, Vec<String>)) -> bool + 'a>;
            let tiers: [(Tier, Rule); 5] = [
                (Tier::Path, Box::new(|n: &(String, String, Vec<String>)| norm_key(strip_md(&n.0)) == key)),
                (Tier::Suffix, Box::new(|n: &(String, String, Vec<String>)| {
                    key.contains('/') && norm_key(strip_md(&n.0)).ends_with(&format!("/{key}"))
                })),
                (Tier::Stem, Box::new(|n: &(String, String, Vec<String>)| norm_key(&n.1) == last)),
                (Tier::Name, Box::new(|n: &(String, String, Vec<String>)| n.2.iter().any(|a| norm_key(a) == key))),
                (Tier::Slug, Box::new(|n: &(String, String, Vec<String>)| !slug(&n.1).is_empty() && slug(&n.1) == slug(t))),
            ];
            let mut want = (Tier::Path, Resolution::NotFound);
            if !key.is_empty() {
                for (tier, rule) in &tiers {
                    let hits: Vec<usize> = (0..live.len()).filter(|&i| rule(live[i])).collect();
                    match hits.as_slice() {
                        [] => continue,
                        [one] => want = (*tier, Resolution::Found(*one)),
                        many => want = (*tier, Resolution::Ambiguous(many.to_vec())),
                    }
                    break;
                }
            }
            prop_assert_eq!(index.resolve_tiered(&target), want);
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
