//! One note: frontmatter, body, tags, links and the problems found while reading it.

use super::diagnostic::Diagnostic;
use super::frontmatter::{self, Frontmatter};
use super::links::{find_wikilinks, LinkTarget};
use super::markdown::{self, Body, LineIndex};
use crate::vault::Code;

/// Notes larger than this are not parsed (a diagnostic says so).
pub(crate) const MAX_NOTE_BYTES: u64 = 16 * 1024 * 1024;

/// A link out of a note.
///
/// A vault holds one per link (~130k in a 10k-note vault, for as long as a chat runs), so it
/// is 40 bytes: the frontmatter key holding a link is kept as the entry's place in the
/// note's frontmatter ([`Note::link_key`]), not as a string of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteLink {
    /// The parsed target.
    pub target: LinkTarget,
    /// 1-based file line.
    pub line: u32,
    /// True for embeds.
    pub embed: bool,
    /// Where the link is: [`BODY`] in the body, else one more than the index of the
    /// frontmatter entry holding it ([`FAR_ENTRY`] past the 65,534th).
    field: u16,
}

/// [`NoteLink`]'s place for a link in the body.
const BODY: u16 = 0;
/// [`NoteLink`]'s place for a link in a frontmatter entry too far down to number in 16 bits
/// (a note with more than 65,534 frontmatter keys): still a frontmatter link, key unknown.
const FAR_ENTRY: u16 = u16::MAX;

impl NoteLink {
    /// True for a link in a frontmatter value (a typed relation: `location: "[[The Docks]]"`),
    /// false for one in the body.
    pub fn in_frontmatter(&self) -> bool {
        self.field != BODY
    }
}

/// A parsed Markdown note.
#[derive(Debug, Clone, PartialEq)]
pub struct Note {
    /// Path relative to the vault root, `/`-separated.
    pub path: String,
    /// File name without `.md`.
    pub stem: String,
    /// The frontmatter (empty when missing or broken).
    pub frontmatter: Frontmatter,
    /// The parsed body.
    pub body: Body,
    /// Tags from frontmatter and body, lower-cased, without `#`, deduplicated.
    pub tags: Vec<compact_str::CompactString>,
    /// Links from the body and from frontmatter values.
    pub links: Vec<NoteLink>,
    /// Problems found while reading this note.
    pub diagnostics: Vec<Diagnostic>,
    /// Hash of the raw bytes (for rename detection and change checks).
    pub content_hash: u64,
    /// When the file was last modified, when read from disk.
    pub modified: Option<std::time::SystemTime>,
}

/// A fast 64-bit hash of a note's bytes (change and rename detection; not a defence
/// against crafted collisions, which a GM's own notes are not): FxHash, for speed over a
/// whole vault (docs/benchmarks.md).
fn content_hash(bytes: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = rustc_hash::FxHasher::default();
    h.write(bytes);
    h.write_usize(bytes.len());
    h.finish()
}

/// The content hash [`Note::content_hash`] holds for these bytes (to skip re-parsing a
/// file that did not change).
pub(crate) fn hash_bytes(bytes: &[u8]) -> u64 {
    content_hash(bytes)
}

/// Normalises raw text: drops a UTF-8 BOM and turns CRLF / lone CR into LF (line numbers
/// are unchanged).
pub(crate) fn normalise(text: &str) -> std::borrow::Cow<'_, str> {
    let t = text.strip_prefix('\u{feff}').unwrap_or(text);
    if memchr::memchr(b'\r', t.as_bytes()).is_some() {
        std::borrow::Cow::Owned(t.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        std::borrow::Cow::Borrowed(t)
    }
}

/// The body of a note's text as [`Note::parse`] reads it: its blocks (with their file
/// lines), links, tags and inline fields. Write-back
/// finds what it edits through this, so it edits what the reader read.
pub(crate) fn read_body(text: &str) -> markdown::ParsedBody {
    let text = normalise(text);
    let lines = LineIndex::new(&text);
    let split = frontmatter::split(&text);
    body_of(&split, &lines)
}

/// The one step from a split note to its parsed body.
fn body_of(split: &frontmatter::Split<'_>, lines: &LineIndex) -> markdown::ParsedBody {
    markdown::parse_body(split.body, split.body_offset, lines)
}

/// A name that is not empty and not template text.
/// A heading that names a part of a note, not the note (`# History`, `# Overview`).
fn is_section_word(h: &str) -> bool {
    matches!(
        h.trim().trim_end_matches(':').to_lowercase().as_str(),
        "history"
            | "overview"
            | "description"
            | "background"
            | "summary"
            | "notes"
            | "details"
            | "about"
            | "introduction"
            | "appearance"
            | "geography"
            | "geschichte"
            | "beschreibung"
            | "histoire"
            | "description générale"
            | "historia"
            | "descripción"
            | "storia"
            | "descrizione"
            | "géographie"
    )
}

fn usable_name(s: &str) -> bool {
    !s.trim().is_empty() && !super::placeholder::is_placeholder(s)
}

/// A file name written as a slug: no spaces, words joined by `-` or `_`, or all lower case
/// (`ida-marsh`, `the_gilded_eel`, `waterdeep`).
fn is_slug_like(stem: &str) -> bool {
    !stem.contains(' ') && (stem.contains(['-', '_']) || !stem.chars().any(char::is_uppercase))
}

/// Whether `name` is the name a slug file name spells: the same words (but for at most half
/// of them), or those words and more after them (`elyellas-graycastle` spells `Elyellas
/// Greycastle`, `yagra` spells `Yagra Stonefist`; `waterdeep` does not spell `History`).
fn spells_slug(stem: &str, name: &str) -> bool {
    let a = crate::names::slug(stem);
    let b = crate::names::slug(name);
    // Letters and digits alike: `dora-l-esploratrice` spells `Dora l'Esploratrice`.
    let bare = |s: &str| s.chars().filter(|c| *c != '-').collect::<String>();
    // The same words, or more of them (`yagra` is `Yagra Stonefist`).
    // … or with an article the file name leaves out (`yawning-portal`, `The Yawning Portal`).
    let b_bare = ["the-", "a-", "an-"]
        .iter()
        .find_map(|p| b.strip_prefix(p))
        .unwrap_or(&b);
    if a == b || a == b_bare || bare(&a) == bare(&b) || b.starts_with(&format!("{a}-")) {
        return true;
    }
    let (a, b): (Vec<&str>, Vec<&str>) = (a.split('-').collect(), b.split('-').collect());
    a.len() == b.len()
        && a.len() >= 2
        && a.iter().zip(&b).filter(|(x, y)| x == y).count() * 2 >= a.len()
}

/// The file name without a `character sheet` ending (`vaerenth-character-sheet` ->
/// `vaerenth`; with `plain`, also `Mira Holt Sheet` -> `Mira Holt`): the sheet is the
/// character.
pub(crate) fn strip_sheet_suffix(stem: &str, plain: impl FnOnce() -> bool) -> &str {
    // Asked for every name: most stems are passed over without a copy.
    let b = stem.as_bytes();
    if b.len() < 6 || !b[b.len() - 5..].eq_ignore_ascii_case(b"sheet") {
        return stem;
    }
    let lower = stem.to_lowercase();
    let ends: &[&str] = if plain() {
        &[
            "character sheet",
            "character-sheet",
            "character_sheet",
            "charsheet",
            "sheet",
        ]
    } else {
        &[
            "character sheet",
            "character-sheet",
            "character_sheet",
            "charsheet",
        ]
    };
    for end in ends {
        if let Some(head) = lower.strip_suffix(end) {
            let head = head.trim_end_matches([' ', '-', '_']);
            // Byte lengths agree: lower-casing kept these ASCII endings' lengths.
            if !head.is_empty() && lower.len() == stem.len() {
                return &stem[..head.len()];
            }
        }
    }
    stem
}

/// A file stem without the kind prefix some GMs put first (`NPC - Eda Oweland`,
/// `Lokace - Saltmarsh`, `BBEG - Tharizdun`); other stems unchanged.
pub(crate) fn strip_kind_prefix(stem: &str) -> &str {
    let Some((head, rest)) = stem.split_once(" - ") else {
        return stem;
    };
    let known = matches!(
        head.trim().to_lowercase().as_str(),
        "npc"
            | "pc"
            | "location"
            | "loc"
            | "place"
            | "lokace"
            | "quest"
            | "bbeg"
            | "villain"
            | "item"
            | "faction"
            | "frakce"
            | "session"
            | "shop"
            | "city"
            | "town"
            | "region"
            | "character"
            | "creature"
            | "monster"
            | "deity"
            | "god"
    );
    if known && !rest.trim().is_empty() {
        rest.trim()
    } else {
        stem
    }
}

impl Note {
    /// The frontmatter key holding `link` (lower-cased), for a link of this note that sits
    /// in a frontmatter value; `None` for a body link.
    pub fn link_key(&self, link: &NoteLink) -> Option<&str> {
        match link.field {
            BODY | FAR_ENTRY => None,
            f => self.frontmatter.key_at(usize::from(f) - 1),
        }
    }

    /// Parses a note from its bytes. Never fails: problems become diagnostics.
    pub fn parse(path: &str, bytes: &[u8]) -> Note {
        let stem = super::links::strip_md(crate::names::last_segment(path)).to_string();
        let mut note = Note {
            path: path.to_string(),
            stem,
            frontmatter: Frontmatter::default(),
            body: Body::default(),
            tags: Vec::new(),
            links: Vec::new(),
            diagnostics: Vec::new(),
            content_hash: content_hash(bytes),
            modified: None,
        };
        if bytes.len() as u64 > MAX_NOTE_BYTES {
            note.diagnostics.push(Diagnostic::error(
                path,
                0,
                Code::TooLarge,
                format!(
                    "note is {:.1} MB, over the {} MB limit for a note; it was skipped",
                    bytes.len() as f64 / 1e6,
                    MAX_NOTE_BYTES / (1024 * 1024)
                ),
            ));
            return note;
        }
        if memchr::memchr(0, &bytes[..bytes.len().min(8192)]).is_some() {
            note.diagnostics.push(Diagnostic::error(
                path,
                0,
                Code::Binary,
                "file has a .md name but holds binary data; it was skipped",
            ));
            return note;
        }
        let text = match std::str::from_utf8(bytes) {
            Ok(t) => std::borrow::Cow::Borrowed(t),
            Err(e) => {
                let line = bytes[..e.valid_up_to()]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count()
                    + 1;
                note.diagnostics.push(Diagnostic::warning(
                    path,
                    line,
                    Code::NotUtf8,
                    "note is not valid UTF-8; unreadable bytes were replaced with \u{fffd} (save it as UTF-8)",
                ));
                String::from_utf8_lossy(bytes)
            }
        };
        let text = normalise(&text);
        if text.trim().is_empty() {
            note.diagnostics.push(Diagnostic::new(
                path,
                0,
                super::Severity::Info,
                Code::EmptyNote,
                "note is empty; it is indexed by its file name only",
            ));
            return note;
        }
        let lines = LineIndex::new(&text);
        let split = frontmatter::split(&text);
        note.frontmatter = Frontmatter::parse(path, &split, &mut note.diagnostics);
        let parsed = body_of(&split, &lines);
        note.body = parsed.body;
        // Dataview inline fields (`location:: [[The Docks]]`) count as frontmatter keys the
        // frontmatter does not set itself. Moved there, not kept twice.
        for f in parsed.fields {
            note.frontmatter.add_fallback(&f.key, &f.value, f.line);
        }

        // Tags are short: kept inline, not one allocation each.
        let mut tags: Vec<compact_str::CompactString> = note
            .frontmatter
            .list(&["tags", "tag"])
            .into_iter()
            .map(|t| t.trim_start_matches('#').to_lowercase().into())
            .filter(|t: &compact_str::CompactString| !t.is_empty())
            .collect();
        // The body's tags join the note's (and are not kept twice either).
        tags.extend(
            parsed
                .tags
                .into_iter()
                .map(|(t, _)| compact_str::CompactString::from(t)),
        );
        tags.sort();
        tags.dedup();
        note.tags = tags;

        for (entry, (key, value)) in note.frontmatter.iter().enumerate() {
            if !frontmatter::may_hold_wikilink(value) {
                continue;
            }
            let field = u16::try_from(entry + 1).unwrap_or(FAR_ENTRY);
            for s in frontmatter::value_list(value) {
                for found in find_wikilinks(&s) {
                    note.links.push(NoteLink {
                        target: found.target,
                        line: super::line32(note.frontmatter.line_of(key)),
                        embed: found.embed,
                        field,
                    });
                }
            }
        }
        note.links
            .extend(parsed.links.into_iter().map(|l| NoteLink {
                target: l.target,
                line: super::line32(l.line),
                embed: l.embed,
                field: BODY,
            }));
        // Parsed notes live for the whole session: give back growth slack.
        note.frontmatter.shrink_to_fit();
        note.body.blocks.shrink_to_fit();
        note.body.sections.shrink_to_fit();
        note.links.shrink_to_fit();
        note.tags.shrink_to_fit();
        note
    }

    /// The display name. In Obsidian a note's name is its file name, so that is the name
    /// (a kind prefix dropped: `NPC - Eda Oweland` -> `Eda Oweland`), with two exceptions: a
    /// `name:` in the frontmatter (vaultdm's own format) names it, and a file named as a
    /// slug (`ida-marsh`) takes the spelling of its `title:` or `# Title` when that is the
    /// same name (`Ida Marsh`). A `title:` or first heading that differs from the file name
    /// (a template leftover, a spelling in another language, a history section) is an
    /// alias ([`Note::aliases`]), never the name.
    pub fn name(&self) -> String {
        if let Some(n) = self.frontmatter.text(&["name"]).filter(|n| usable_name(n)) {
            return n;
        }
        let stem = strip_sheet_suffix(strip_kind_prefix(&self.stem), || self.pc_shaped());
        if is_slug_like(stem) {
            let spelled = self
                .frontmatter
                .text(&["title"])
                .into_iter()
                .chain(self.body.title().map(|t| strip_kind_prefix(t).to_string()))
                .chain(self.frontmatter.list(&["aliases", "alias"]))
                .find(|t| usable_name(t) && spells_slug(stem, t));
            if let Some(t) = spelled {
                // `Vaerenth (Andi's Character)`: the name, not the note about the table.
                return match t.split_once(" (") {
                    Some((head, _)) if t.ends_with(')') && spells_slug(stem, head) => {
                        head.trim().to_string()
                    }
                    _ => t,
                };
            }
            // Words, not a date or a code (`2022-02-06` stays as it is).
            let words = stem
                .split(['-', '_'])
                .all(|w| w.chars().next().is_some_and(char::is_alphabetic));
            // `Earl-Stryker`: a wiki's Title-Case slug, its words as they are.
            if words && stem.chars().any(char::is_uppercase) {
                return stem
                    .split(['-', '_'])
                    .filter(|w| !w.is_empty())
                    .collect::<Vec<_>>()
                    .join(" ");
            }
            if words {
                return stem
                    .split(['-', '_'])
                    .filter(|w| !w.is_empty())
                    .map(|w| {
                        let mut c = w.chars();
                        c.next()
                            .map(|f| f.to_uppercase().chain(c).collect::<String>())
                            .unwrap_or_default()
                    })
                    .collect::<Vec<_>>()
                    .join(" ");
            }
        }
        stem.to_string()
    }

    /// Aliases: `aliases`/`alias` (list, flow list or comma string), then a `title:` and a
    /// `# Title` that are not the name ([`Note::name`]).
    pub fn aliases(&self) -> Vec<String> {
        let mut v = self.frontmatter.list(&["aliases", "alias"]);
        v.retain(|a| usable_name(a));
        let name = self.name();
        let title = self.frontmatter.text(&["title"]).filter(|t| usable_name(t));
        // A first heading that is a section's (`# History`) names nothing.
        let heading = self
            .body
            .title()
            .filter(|t| !is_section_word(t))
            .map(|t| strip_kind_prefix(t).to_string());
        let stem = strip_kind_prefix(&self.stem);
        for extra in [
            title,
            heading,
            // The file name when the name spells it otherwise (`Jean-Luc` beside `Jean Luc`).
            (stem != name && (!is_slug_like(stem) || stem.chars().any(char::is_uppercase)))
                .then(|| stem.to_string()),
        ]
        .into_iter()
        .flatten()
        {
            let extra = extra.trim().to_string();
            if !extra.is_empty()
                && !extra.eq_ignore_ascii_case(&name)
                && !v.iter().any(|a| a.eq_ignore_ascii_case(&extra))
            {
                v.push(extra);
            }
        }
        v
    }

    /// A character sheet (`vaerenth-character-sheet.md`, `Mira Holt Sheet.md`): the note that
    /// is the character, beside notes about them.
    pub fn is_sheet(&self) -> bool {
        strip_sheet_suffix(&self.stem, || self.pc_shaped()).len() < self.stem.len()
    }

    /// Frontmatter a character sheet has (`player:`, `class:`, `level:`): a plain `… Sheet`
    /// file name is a character's only then (`DM Cheat Sheet` is not).
    fn pc_shaped(&self) -> bool {
        self.frontmatter
            .get(&["player", "class", "level", "classe", "clase", "klasse"])
            .is_some()
    }

    /// A frontmatter `title:` that names something else than the note's name (not the same
    /// name spelled out, as `Ida Marsh` is for `ida-marsh.md`): an alias, worth a word from
    /// `check` since some tools show it as the name.
    pub fn title_alias(&self) -> Option<String> {
        let title = self
            .frontmatter
            .text(&["title"])
            .filter(|t| usable_name(t))?;
        // `title: "[[factions/Grudge Brigade.md|Grudge Brigade]]"`: the link's text.
        let title = match super::links::as_single_link(&title) {
            Some(l) => l.display(),
            // Links inside a title (made by a publishing script): not a name to report.
            None if title.contains("[[") => return None,
            None => title,
        };
        let key = |s: &str| -> String {
            s.chars()
                .filter(|c| c.is_alphanumeric())
                .flat_map(char::to_lowercase)
                .collect()
        };
        (key(&title) != key(&self.name())).then_some(title)
    }

    /// Every name the note can be linked or mentioned by: the name, the file name without
    /// its kind prefix, and the aliases (which hold a differing `title:` and `# Title`).
    pub fn names(&self) -> Vec<String> {
        let mut v = vec![self.name()];
        let bare = strip_kind_prefix(&self.stem);
        if bare != self.stem && !v.iter().any(|n| n.eq_ignore_ascii_case(bare)) {
            v.push(bare.to_string());
        }
        for a in self.aliases() {
            if !v.iter().any(|n| n.eq_ignore_ascii_case(&a)) {
                v.push(a);
            }
        }
        v
    }

    /// True when reading the note raised an error (used to keep a last good version).
    pub fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.severity == super::Severity::Error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bom_crlf_and_frontmatter() {
        let n = Note::parse("a/Orla.md", "\u{feff}---\r\nname: Orla\r\ntags: [pc, heist/pc]\r\n---\r\n# Orla\r\n\r\nSee [[Mother Ashka]]. #rogue\r\n".as_bytes());
        assert!(n.diagnostics.is_empty(), "{:?}", n.diagnostics);
        assert_eq!(n.name(), "Orla");
        assert_eq!(n.tags, ["heist/pc", "pc", "rogue"]);
        assert_eq!(&*n.links[0].target.note, "Mother Ashka");
        assert_eq!(n.links[0].line, 7);
    }

    #[test]
    fn each_link_knows_the_frontmatter_key_holding_it() {
        let text = "---\nally: \"[[Ida]]\"\nhome: [\"[[Saltmarsh]]\", \"[[The Docks]]\"]\nname: Orla\n---\nSee [[Ida]].\n";
        let n = Note::parse("Orla.md", text.as_bytes());
        let keys: Vec<(&str, Option<&str>, bool)> = n
            .links
            .iter()
            .map(|l| (&*l.target.note, n.link_key(l), l.in_frontmatter()))
            .collect();
        assert_eq!(
            keys,
            [
                ("Ida", Some("ally"), true),
                ("Saltmarsh", Some("home"), true),
                ("The Docks", Some("home"), true),
                ("Ida", None, false),
            ]
        );
        // One per link for as long as a vault is loaded: kept at 40 bytes.
        assert!(std::mem::size_of::<NoteLink>() <= 40);
    }

    #[test]
    fn a_link_past_the_65534th_frontmatter_key_is_still_a_frontmatter_link() {
        let mut text = String::from("---\n");
        for i in 0..70_000 {
            text.push_str(&format!("k{i:05}: {i}\n"));
        }
        text.push_str("zz: \"[[Far]]\"\n---\nbody\n");
        let n = Note::parse("Many.md", text.as_bytes());
        let far = n
            .links
            .iter()
            .find(|l| &*l.target.note == "Far")
            .expect("the link past the 65,534th key is read");
        assert!(far.in_frontmatter());
        assert_eq!(n.link_key(far), None);
    }

    #[test]
    fn binary_and_empty_notes() {
        let n = Note::parse("junk.md", &[0, 159, 146, 150, 0, 1]);
        assert_eq!(n.diagnostics[0].code, "binary");
        let e = Note::parse("empty.md", b"");
        assert_eq!(e.diagnostics[0].code, "empty-note");
        assert_eq!(e.diagnostics[0].severity, crate::vault::Severity::Info);
        // A lower-case file name reads as a name (matching ignores case anyway).
        assert_eq!(e.name(), "Empty");
    }

    #[test]
    fn invalid_utf8_is_a_warning_with_line() {
        let n = Note::parse("x.md", b"line one\nbad \xff here\n");
        assert_eq!(n.diagnostics[0].code, "not-utf8");
        assert_eq!(n.diagnostics[0].line, 2);
        assert!(n.body.blocks[0].text.contains("bad"));
    }

    #[test]
    fn frontmatter_links_are_collected() {
        let n = Note::parse(
            "p.md",
            b"---\nlocation: [[The Eel]]\nfriends: \"[[A]], [[B|Bee]]\"\n---\n",
        );
        let t: Vec<_> = n.links.iter().map(|l| (&*l.target.note, l.line)).collect();
        assert_eq!(t, [("A", 3), ("B", 3), ("The Eel", 2)]);
    }
}
