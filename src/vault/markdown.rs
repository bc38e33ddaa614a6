//! Markdown bodies: sections, text blocks, wikilinks, tags, inline fields and callouts.
//!
//! The body is parsed once with pulldown-cmark into a flat list of [`Block`]s (headings,
//! paragraphs, list items, callouts, table rows), each tagged with its section and file
//! line. Code blocks (including `dataview`/`dataviewjs`) and `%% comments %%` are not
//! content and never reach the canon.

use super::links::LinkTarget;
use pulldown_cmark::{CodeBlockKind, Event, LinkType, Options, Parser, Tag, TagEnd};

/// What kind of text a block is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockKind {
    /// A heading of the given level (1-6).
    Heading(u8),
    /// A paragraph.
    Paragraph,
    /// A list item's own text (nested items are separate blocks).
    ListItem,
    /// A table row, cells joined with ` | `.
    TableRow,
}

/// A run of text in the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// What kind of block.
    pub kind: BlockKind,
    /// Plain text: links shown as their display text, emphasis markers removed, soft
    /// breaks kept as `\n`.
    pub text: Box<str>,
    /// 1-based file line where the block starts.
    pub line: u32,
    /// Index of the section the block belongs to.
    pub section: u32,
    /// The text of a leading `**strong**` span, if the block opens with one.
    pub strong_prefix: Option<Box<str>>,
    /// The callout type (lower-case) when the block sits inside `> [!type]`, shared by
    /// the callout's blocks.
    pub callout: Option<std::sync::Arc<str>>,
    /// List nesting depth (0 outside lists).
    pub depth: u16,
    /// False for a block with no words of its own: only links or embeds (a navigation line,
    /// an image, an index list), ornaments, arrows and separators.
    pub prose: bool,
}

impl Block {
    /// A checklist item (`- [ ] Destroy Strahd`, `- [x] Return the skull`): whether it is
    /// ticked, and its text.
    pub fn checkbox(&self) -> Option<(bool, &str)> {
        if self.kind != BlockKind::ListItem {
            return None;
        }
        let t = self.text.trim_start();
        if let Some(r) = t.strip_prefix("[ ]") {
            return Some((false, r.trim()));
        }
        t.strip_prefix("[x]")
            .or_else(|| t.strip_prefix("[X]"))
            .map(|r| (true, r.trim()))
    }
}

/// A heading and the blocks under it. Section 0 is the text before any heading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// Heading text (None for the preamble).
    pub heading: Option<Box<str>>,
    /// Heading level (0 for the preamble).
    pub level: u8,
    /// 1-based file line of the heading.
    pub line: u32,
}

impl Section {
    /// Whether the heading is one of `names` (case-insensitive, spaces around ignored).
    fn is_named(&self, names: &[&str]) -> bool {
        self.heading
            .as_deref()
            .is_some_and(|h| names.iter().any(|n| h.trim().eq_ignore_ascii_case(n)))
    }
}

/// A wikilink in the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyLink {
    /// The parsed target.
    pub target: LinkTarget,
    /// True for embeds (`![[...]]`).
    pub embed: bool,
    /// 1-based file line.
    pub line: usize,
}

/// A Dataview inline field (`key:: value`), or a fact a block states as one (`**Race:**
/// Elf`, an infobox row).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlineField {
    /// The key as canon looks it up ([`field_key`]).
    pub key: String,
    /// The value text as written (trimmed).
    pub value: String,
    /// 1-based file line.
    pub line: usize,
    /// For an inline field, the byte range of its value in its line (the line's own bytes,
    /// so the same in the file whatever its line ends or BOM): where write-back edits it.
    /// `None` for a fact, which write-back does not edit in place.
    pub span: Option<std::ops::Range<usize>>,
}

/// An inline field's key as canon looks it up: trimmed, lower case, spaces as `_`
/// (`Max HP` is `max_hp`).
pub fn field_key(k: &str) -> String {
    k.trim().to_lowercase().replace(' ', "_")
}

/// Whether text can be an inline field's key: at most 40 bytes, words without brackets,
/// colons, backticks or pipes.
fn is_field_key(k: &str) -> bool {
    let k = k.trim();
    !k.is_empty()
        && k.len() <= 40
        && !k.contains(['`', ':', '[', ']', '(', ')', '|', '#', '%'])
        && k.chars().any(char::is_alphanumeric)
}

/// The Dataview inline fields of one line of Markdown as written: `[key:: value]` and
/// `(key:: value)` anywhere in it (a value ends at the bracket that closes the field; links
/// inside it keep their own), else `key:: value` filling the line after any quote, list,
/// checkbox or heading marker (`- **Status**:: alive`). Each is (key range, value range) in
/// bytes of `line`, both trimmed (the key also of emphasis). The one rule of what an inline
/// field is: the reader reads fields with it, write-back edits them where it says.
pub fn inline_fields(line: &str) -> Vec<(std::ops::Range<usize>, std::ops::Range<usize>)> {
    let mut out = Vec::new();
    if find_pair(line, ':').is_none() {
        return out;
    }
    let b = line.as_bytes();
    let trim = |r: std::ops::Range<usize>, extra: &[char]| {
        let s = &line[r.clone()];
        let t = s.trim_start_matches(|c: char| c.is_whitespace() || extra.contains(&c));
        let a = r.start + (s.len() - t.len());
        let t = t.trim_end_matches(|c: char| c.is_whitespace() || extra.contains(&c));
        a..a + t.len()
    };
    let mut i = 0;
    while i < b.len() {
        let open = b[i];
        if (open == b'[' || open == b'(') && b.get(i + 1) != Some(&b'[') {
            let close = if open == b'[' { b']' } else { b')' };
            if let Some(c) = find_pair(&line[i + 1..], ':') {
                let key = i + 1..i + 1 + c;
                if is_field_key(&line[key.clone()]) {
                    let v0 = key.end + 2;
                    let mut depth = 0usize;
                    let mut end = None;
                    for (j, &ch) in b.iter().enumerate().skip(v0) {
                        match ch {
                            b'[' | b'(' => depth += 1,
                            b']' | b')' if depth > 0 => depth -= 1,
                            c if c == close => {
                                end = Some(j);
                                break;
                            }
                            _ => {}
                        }
                    }
                    if let Some(end) = end {
                        out.push((trim(key, &['*', '_']), trim(v0..end, &[])));
                        i = end + 1;
                        continue;
                    }
                }
            }
        }
        i += 1;
    }
    if !out.is_empty() {
        return out;
    }
    // A field filling the line: its key starts after the line's markers.
    let mut at = line.len() - line.trim_start().len();
    loop {
        let rest = &line[at..];
        let skip = if rest.starts_with('>') || rest.starts_with('#') {
            1
        } else if let Some(m) = ["- ", "* ", "+ ", "[ ] ", "[x] ", "[X] "]
            .iter()
            .find(|m| rest.starts_with(*m))
        {
            m.len()
        } else {
            let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            if digits > 0 && (rest[digits..].starts_with(". ") || rest[digits..].starts_with(") "))
            {
                digits + 2
            } else {
                0
            }
        };
        if skip == 0 {
            break;
        }
        at += skip;
        at += line[at..].len() - line[at..].trim_start().len();
    }
    if let Some(c) = find_pair(&line[at..], ':') {
        let key = at..at + c;
        if is_field_key(&line[key.clone()].replace(['*', '_'], "")) {
            out.push((
                trim(key.clone(), &['*', '_']),
                trim(key.end + 2..line.len(), &[]),
            ));
        }
    }
    out
}

/// A parsed body.
///
/// What a note keeps of its body for as long as the vault is loaded; the links, tags and
/// inline fields [`parse_body`] also finds go to the note's own lists and frontmatter
/// ([`ParsedBody`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Body {
    /// Sections in order; index 0 is the preamble.
    pub sections: Vec<Section>,
    /// Text blocks in document order.
    pub blocks: Vec<Block>,
    /// The YAML of Fantasy Statblocks blocks (```` ```statblock ````), with their file line.
    pub statblocks: Vec<(String, usize)>,
    /// The `%% comments %%` with words in them (hidden in Obsidian's reading view: the GM's,
    /// see [`super::secret`]).
    pub comments: Vec<Comment>,
}

/// A `%% comment %%`'s text and where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comment {
    /// The text between the `%%` marks, trimmed.
    pub text: Box<str>,
    /// 1-based file line of its opening `%%`.
    pub line: u32,
}

/// Everything [`parse_body`] reads from a body: the [`Body`] a note keeps, and the links,
/// tags and inline fields a parsed [`Note`](super::Note) moves into its own lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParsedBody {
    /// Sections, blocks and statblocks.
    pub body: Body,
    /// Wikilinks and embeds.
    pub links: Vec<BodyLink>,
    /// Inline `#tags` (without `#`, lower-cased), with their file line.
    pub tags: Vec<(String, usize)>,
    /// Dataview inline fields.
    pub fields: Vec<InlineField>,
}

impl Body {
    /// The blocks of the first section whose heading matches one of `names` (case-insensitive),
    /// including its subsections.
    pub fn section_blocks(&self, names: &[&str]) -> Option<Vec<&Block>> {
        let idx = self.sections.iter().position(|s| s.is_named(names))?;
        let within = self.subsections(idx);
        Some(
            self.blocks
                .iter()
                .filter(|b| within.contains(&(b.section as usize)))
                .filter(|b| !matches!(b.kind, BlockKind::Heading(_)))
                .collect(),
        )
    }

    /// Section `idx` and its subsections: the sections up to the next heading of its level
    /// or higher.
    fn subsections(&self, idx: usize) -> std::ops::Range<usize> {
        let level = self.sections[idx].level;
        let end = self.sections[idx + 1..]
            .iter()
            .position(|s| s.level <= level)
            .map_or(self.sections.len(), |p| idx + 1 + p);
        idx..end
    }

    /// The note's title: its first heading when that is an H1 and only link-only lines (an
    /// image, a navigation line) come before it. A `# Profile` section further down a
    /// template-made note is not the note's name.
    pub fn title(&self) -> Option<&str> {
        let first = &self.blocks[self.title_block()?];
        (first.kind == BlockKind::Heading(1)).then_some(&*first.text)
    }

    /// The block [`Body::title`] reads: the first heading or block with words.
    fn title_block(&self) -> Option<usize> {
        self.blocks
            .iter()
            .position(|b| matches!(b.kind, BlockKind::Heading(_)) || b.prose)
    }

    /// The first paragraph that reads as a summary: not a heading, list or callout, not only
    /// `#tags`, links or ornaments (navigation lines, embeds), not a navigation line, not
    /// only Dataview fields.
    pub fn first_paragraph(&self) -> Option<&Block> {
        self.blocks
            .iter()
            .find(|b| b.kind == BlockKind::Paragraph && b.callout.is_none() && is_summary_text(b))
    }

    /// A summary for a note: the informative text from its start, in document order, as
    /// `Body::summary_blocks` picks it — a subhead line, the first sentences of its
    /// description (in a paragraph, a callout or an Admonition), the first facts of a list —
    /// joined into one text: sentences by a space, list items by `; `, a line without a
    /// closing stop by `. `.
    pub fn summary(&self) -> Option<String> {
        self.joined(self.summary_blocks())
    }

    /// How the note ends: its last prose — the top-level list items and paragraphs that
    /// close its last narrative section, not a list of NPCs met, loot or next-session notes
    /// after it — in document order, up to [`SUMMARY_CHARS`] characters. For a session log
    /// kept as bullets, where the party was left.
    pub fn ending(&self) -> Option<String> {
        self.joined(self.ending_blocks())
    }

    /// True when file line `line` lies in a section that follows a session's story: NPCs
    /// met, loot, places visited, next-session notes ([`Body::ending`] skips them too).
    pub fn in_after_matter(&self, line: u32) -> bool {
        self.sections
            .iter()
            .rev()
            .find(|s| s.line <= line && s.heading.is_some())
            .and_then(|s| s.heading.as_deref())
            .is_some_and(|h| is_after_matter_heading(h) || is_unsummarised_heading(h))
    }

    /// The blocks [`Body::ending`] is made of.
    fn ending_blocks(&self) -> Vec<usize> {
        let skipped_section = |b: &Block| {
            self.sections
                .get(b.section as usize)
                .and_then(|s| s.heading.as_deref())
                .is_some_and(|h| is_unsummarised_heading(h) || is_after_matter_heading(h))
        };
        let mut picked: Vec<usize> = Vec::new();
        let mut chars = 0;
        // How it ends is what its opening has not said already.
        let opening = self.summary_blocks().last().copied();
        for (i, b) in self.blocks.iter().enumerate().rev() {
            if opening.is_some_and(|o| i <= o) {
                break;
            }
            if let Some(&last) = picked.last() {
                if self.blocks[last].section != b.section {
                    break;
                }
            }
            if matches!(b.kind, BlockKind::Heading(_) | BlockKind::TableRow)
                || (b.kind == BlockKind::ListItem && b.depth > 1)
                || b.checkbox().is_some()
                || b.callout.as_deref().is_some_and(is_secret_callout)
                || !is_summary_text(b)
                || skipped_section(b)
                || summary_text(&b.text).is_empty()
            {
                continue;
            }
            if !picked.is_empty() && chars + b.text.len() > 2 * SUMMARY_CHARS {
                break;
            }
            picked.push(i);
            chars += b.text.len();
            if chars >= SUMMARY_CHARS || picked.len() >= SUMMARY_BLOCKS {
                break;
            }
        }
        picked.reverse();
        picked
    }

    /// The blocks' [`summary_text`], joined as sentences (list items by `;`).
    fn joined(&self, blocks: Vec<usize>) -> Option<String> {
        let mut out = String::new();
        let mut last_item = false;
        for b in blocks.into_iter().map(|i| &self.blocks[i]) {
            let text = summary_text(&b.text);
            let text = text.trim();
            let item = b.kind == BlockKind::ListItem;
            if !out.is_empty() {
                out.push_str(if out.ends_with(['.', '!', '?', ':', ';', '"', '…']) {
                    " "
                } else if item && last_item {
                    "; "
                } else {
                    ". "
                });
            }
            out.push_str(text);
            last_item = item;
        }
        (!out.is_empty()).then_some(out)
    }

    /// The blocks [`Body::summary`] is made of: from the top, every block that reads as a
    /// summary — prose in a paragraph, a list item, a callout or an Admonition that is not a
    /// GM secret, outside the voice, secret and GM sections, not template text — until
    /// [`SUMMARY_CHARS`] characters or [`SUMMARY_BLOCKS`] blocks. A short lead line (a
    /// subhead naming where someone works, a one-word kind) is not the whole summary: the
    /// description after it is read too.
    fn summary_blocks(&self) -> Vec<usize> {
        self.summary_scan().0
    }

    /// [`Body::summary_blocks`], and the block that ended them by being too long to join
    /// (kept with them when a note sheds its unread blocks, so the summary reads the same).
    fn summary_scan(&self) -> (Vec<usize>, Option<usize>) {
        let skipped_section = |b: &Block| {
            self.sections
                .get(b.section as usize)
                .and_then(|s| s.heading.as_deref())
                .is_some_and(is_unsummarised_heading)
        };
        let mut picked = Vec::new();
        let mut chars = 0;
        // Characters of sentences so far (not `Population: 210` facts).
        let mut prose = 0;
        for (i, b) in self.blocks.iter().enumerate() {
            if matches!(b.kind, BlockKind::Heading(_) | BlockKind::TableRow)
                || b.callout.as_deref().is_some_and(is_secret_callout)
                || !is_summary_text(b)
                || skipped_section(b)
                || summary_text(&b.text).is_empty()
            {
                continue;
            }
            // A long block after the first sentences (a backstory) is not read for a
            // summary; after facts only, it is the description.
            if prose > 0 && chars + b.text.len() > 2 * SUMMARY_CHARS {
                return (picked, Some(i));
            }
            picked.push(i);
            chars += b.text.len();
            if !is_fact_block(&b.text) {
                prose += b.text.len();
            }
            if chars >= SUMMARY_CHARS || picked.len() >= SUMMARY_BLOCKS {
                break;
            }
        }
        (picked, None)
    }

    /// Drops every block after the last one [`Body::title`] and [`Body::summary`] read, and
    /// the sections after that block's, for a note of which nothing else is ever read (a
    /// lore note: canon keeps its name, aliases and summary). Both answer the same
    /// afterwards; links, tags and fields are kept. The blocks `extra` lists (the GM's
    /// secrets) stay too.
    pub fn keep_title_and_summary(&mut self, extra: &[usize]) {
        if !extra.is_empty() {
            self.keep_title_summary_sections_and(&[], extra);
            return;
        }
        let last = self
            .summary_blocks()
            .into_iter()
            .chain(self.title_block())
            .max();
        self.blocks.truncate(last.map_or(0, |i| i + 1));
        self.blocks.shrink_to_fit();
        let sections = self.blocks.last().map_or(1, |b| b.section as usize + 1);
        self.sections.truncate(sections);
        self.sections.shrink_to_fit();
    }

    /// Drops every block neither [`Body::title`], [`Body::summary`] nor
    /// [`Body::section_blocks`] for one of `names` reads: the blocks up to the last one the
    /// title and summary come from, and those of every section headed by one of `names`
    /// (with its subsections), stay. For a note canon reads only a few named sections of (an
    /// NPC's voice, a place's description), whose other sections (a history, secrets, a
    /// session log) would otherwise be held for the whole session. The sections themselves
    /// all stay, so section numbers and heading lines are unchanged, and the title, summary
    /// and those sections' blocks read the same afterwards.
    /// The blocks `extra` lists (the GM's secrets) stay too.
    pub fn keep_title_summary_and_sections(&mut self, names: &[&str], extra: &[usize]) {
        self.keep_title_summary_sections_and(names, extra);
    }

    /// [`Body::keep_title_summary_and_sections`], and the blocks of [`Body::ending`] (a
    /// session note is read for how it ended).
    pub fn keep_title_summary_sections_and_ending(&mut self, names: &[&str], extra: &[usize]) {
        let mut ending = self.ending_blocks();
        ending.extend_from_slice(extra);
        self.keep_title_summary_sections_and(names, &ending);
    }

    /// [`Body::keep_title_summary_and_sections`] for the sections whose heading `keep`
    /// accepts, and the first `first` blocks (what a kind rule reads of a note).
    pub fn keep_title_summary_sections_where(
        &mut self,
        keep: impl Fn(&str) -> bool,
        first: usize,
        extra: &[usize],
    ) {
        let names: Vec<String> = self
            .sections
            .iter()
            .filter_map(|s| s.heading.as_deref())
            .filter(|h| keep(h))
            .map(|h| h.trim().to_string())
            .collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut also: Vec<usize> = (0..first.min(self.blocks.len())).collect();
        also.extend_from_slice(extra);
        self.keep_title_summary_sections_and(&names, &also);
    }

    fn keep_title_summary_sections_and(&mut self, names: &[&str], also: &[usize]) {
        let (summary, stopper) = self.summary_scan();
        let up_to = summary
            .into_iter()
            .chain(self.title_block())
            .max()
            .map_or(0, |i| i + 1);
        // Blocks kept further down would join the summary unless what stopped it stays.
        let also: Vec<usize> = if also.is_empty() {
            vec![]
        } else {
            also.iter().copied().chain(stopper).collect()
        };
        let mut read = vec![false; self.sections.len()];
        for idx in (0..self.sections.len()).filter(|&i| self.sections[i].is_named(names)) {
            for s in self.subsections(idx) {
                read[s] = true;
            }
        }
        let mut i = 0;
        self.blocks.retain(|b| {
            let keep = i < up_to
                || also.contains(&i)
                || read.get(b.section as usize).copied().unwrap_or(true);
            i += 1;
            keep
        });
        self.blocks.shrink_to_fit();
    }
}

/// A block's text as a summary reads it: without the lines a template left unfilled — a
/// `Label:` with nothing after it (its value was an inline query), a `Label: [Prompt]`,
/// filler such as `TEXTE ICI`, a callout's `[!type]` header — joined by spaces.
fn summary_text(text: &str) -> std::borrow::Cow<'_, str> {
    let keep = |l: &&str| {
        let l = l.trim().trim_start_matches(['-', '*', '+']).trim();
        if l.is_empty()
            || l.starts_with("[!")
            || super::placeholder::is_placeholder(l)
            || is_only_tags(l)
        {
            return false;
        }
        // A pointer to other notes (`See [[X]] and [[Y]].`) says nothing of this one.
        let lower = l.get(..9).unwrap_or(l).to_lowercase();
        if [
            "see ", "see also", "related", "siehe ", "voir ", "véase ", "vedi ",
        ]
        .iter()
        .any(|p| lower.starts_with(p))
        {
            return false;
        }
        match l.split_once(':') {
            Some((label, value)) if label.chars().count() <= 30 && !label.contains("//") => {
                let value = value.trim();
                value.chars().any(char::is_alphanumeric)
                    && !super::placeholder::is_placeholder(value)
                    && !is_player_label(label)
            }
            _ => true,
        }
    };
    if !text.contains('\n') {
        return if keep(&text) {
            std::borrow::Cow::Borrowed(text)
        } else {
            std::borrow::Cow::Borrowed("")
        };
    }
    std::borrow::Cow::Owned(text.lines().filter(keep).collect::<Vec<_>>().join(" "))
}

/// How much text [`Body::summary`] gathers before it stops (it stops after the block that
/// reaches it).
pub const SUMMARY_CHARS: usize = 200;
/// The most blocks [`Body::summary`] joins.
pub const SUMMARY_BLOCKS: usize = 4;

/// Section headings whose text is never a summary: how a character talks (read as the
/// voice), and what the players must not hear.
fn is_unsummarised_heading(h: &str) -> bool {
    matches!(
        h.trim().trim_end_matches(':').to_lowercase().as_str(),
        "voice"
            | "personality"
            | "mannerisms"
            | "quotes"
            | "roleplaying"
            | "secret"
            | "secrets"
            | "secrets and clues"
            | "gm notes"
            | "dm notes"
            | "gm only"
            | "dm only"
            | "gm"
            | "dm"
            | "spoilers"
            | "hidden"
            | "notes for the gm"
            | "notes for the dm"
            | "table notes"
            | "player notes"
            | "players"
            | "ooc"
            | "out of character"
            | "meta"
    )
}

/// Headings of what follows a session's story: who was met, what was found, what comes
/// next, housekeeping.
fn is_after_matter_heading(h: &str) -> bool {
    let h = h.trim().trim_end_matches(':').to_lowercase();
    let first = h.split_whitespace().next().unwrap_or("");
    matches!(
        first,
        "npcs"
            | "npc"
            | "loot"
            | "treasure"
            | "items"
            | "rewards"
            | "xp"
            | "experience"
            | "notes"
            | "links"
            | "players"
            | "attendance"
            | "characters"
            | "cast"
            | "todo"
            | "locations"
            | "places"
            | "references"
            | "related"
            | "tags"
            | "footnotes"
            | "connections"
            | "relationships"
            | "relations"
            | "contacts"
            | "allies"
            | "faction"
            | "factions"
    ) || h.starts_with("next session")
        || h.starts_with("to do")
        || h.starts_with("see also")
        || h.starts_with("for next")
}

/// Callout types that hold what the players must not hear.
pub fn is_secret_callout(kind: &str) -> bool {
    matches!(
        kind,
        "secret" | "gm" | "dm" | "spoiler" | "hidden" | "private" | "danger" | "warning" | "todo"
    )
}

/// Whether a block's text can stand as a summary (see [`Body::first_paragraph`]).
fn is_summary_text(b: &Block) -> bool {
    b.prose
        && !b.text.trim().is_empty()
        && !is_meta_strip(&b.text)
        && !is_query_text(&b.text)
        && (b.callout.is_none() || !is_bare_title(&b.text))
        && !is_only_tags(&b.text)
        && !is_navigation(&b.text)
        && !b
            .text
            .lines()
            .all(|l| find_pair(l, ':').is_some() || l.trim().is_empty())
}

/// A block of facts only: every line a short `Label: value` (`Population: 210`).
fn is_fact_block(text: &str) -> bool {
    let lines = summary_text(text);
    text.lines().all(|l| {
        let l = l.trim();
        l.is_empty()
            || is_only_tags(l)
            || l.split_once(':')
                .is_some_and(|(k, _)| k.chars().count() <= 40 && k.split_whitespace().count() <= 5)
    }) && !lines.trim().is_empty()
}

/// A label naming the real person who plays a character (`Player: Adele`): table meta,
/// never told to the DM as the character's text.
fn is_player_label(label: &str) -> bool {
    matches!(
        label.trim().to_lowercase().as_str(),
        "player"
            | "played by"
            | "giocatore"
            | "giocatrice"
            | "jugador"
            | "jugadora"
            | "joueur"
            | "joueuse"
            | "spieler"
            | "spielerin"
            | "gracz"
            | "jogador"
            | "jogadora"
    )
}

/// A Dataview query whose code fence was never closed (`LIST WITHOUT ID … FROM "…"`), or
/// DataviewJS (`dv.list(dv.pages(…));`).
fn is_query_text(text: &str) -> bool {
    let t = text.trim_start();
    if t.contains("dv.") && t.contains(");") {
        return true;
    }
    ["LIST", "TABLE", "TASK", "CALENDAR"]
        .iter()
        .any(|k| t.starts_with(k))
        && [
            " FROM ", "\nFROM ", " WHERE ", "\nWHERE ", " SORT ", "\nSORT ",
        ]
        .iter()
        .any(|k| t.contains(k))
}

/// A callout's title alone (`LIEUX - Liste`, `ÉVÈNEMENTS`): a few words, no sentence.
fn is_bare_title(text: &str) -> bool {
    let t = text.trim();
    !t.contains('\n') && !t.contains(['.', '!', '?', ',']) && t.split_whitespace().count() <= 4
}

/// A strip of short values between bars (`? | Amicale`, `Human | Fighter | Neutral`): a
/// template's header line of facts, not a sentence.
fn is_meta_strip(text: &str) -> bool {
    if memchr::memchr(b'|', text.as_bytes()).is_none() {
        return false;
    }
    let parts: Vec<&str> = text.split('|').collect();
    parts.len() >= 2
        && !text.contains('\n')
        && parts
            .iter()
            .all(|p| p.split_whitespace().count() <= 3 && !p.contains(['.', '!']))
}

/// A navigation line: only words like previous / next / back, arrows and separators
/// (`← previous ~ ❦ ~ next →`).
fn is_navigation(text: &str) -> bool {
    text.chars().count() < 80
        && text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .all(|w| {
                matches!(
                    w.to_lowercase().as_str(),
                    "previous"
                        | "prev"
                        | "next"
                        | "back"
                        | "up"
                        | "home"
                        | "index"
                        | "top"
                        | "session"
                        | "chapter"
                        | "part"
                ) || w.chars().all(|c| c.is_ascii_digit())
            })
}

/// Removes icon shortcodes (`:FasUser:`, `:RiSwordFill:`, `:LiEye:` from the Iconize and
/// Icon Shortcodes plugins) and tidies the separators left behind (`Quest |  | X` ->
/// `Quest | X`).
pub fn strip_icons(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(':') {
        let after = &rest[i + 1..];
        let end = after.find(':');
        let is_icon = end.is_some_and(|e| {
            let name = &after[..e];
            name.len() >= 3
                && name.chars().next().is_some_and(|c| c.is_ascii_uppercase())
                && name.chars().all(|c| c.is_ascii_alphanumeric())
                && name.chars().skip(1).any(|c| c.is_ascii_uppercase())
        });
        if let (true, Some(e)) = (is_icon, end) {
            out.push_str(&rest[..i]);
            rest = &after[e + 1..];
        } else {
            out.push_str(&rest[..=i]);
            rest = after;
        }
    }
    out.push_str(rest);
    if !out.contains('|') {
        return out;
    }
    out.split('|')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(" | ")
}

/// True when a text is nothing but inline `#tags` (a line like `#npc #harbour`).
fn is_only_tags(text: &str) -> bool {
    let mut tags = 0;
    let only = text.split_whitespace().enumerate().all(|(i, w)| {
        // A label first (`Tags:`, `**Tagy:**`) does not make the line prose.
        if i == 0 && w.ends_with(':') {
            return true;
        }
        let mut n = 0;
        scan_tags(w, |_| n += 1);
        tags += n;
        n == 1 && w.starts_with('#')
    });
    only && tags > 0
}

/// The byte offset of the first `cc` (two of one ASCII character, like `::` or `%%`):
/// a byte search for `c` then a look at the next byte, several times faster than a
/// substring search on the short texts of a note.
/// The facts a block states as fields: the lines of a `**Race:** Elf` block (every line a
/// short label and a value, the first label in bold), and the `| Race | Elf |` rows of an
/// infobox callout. (lower-cased label, value, line offset); labels and values that are
/// empty, template text or a dash are left out.
fn fact_fields(
    text: &str,
    kind: BlockKind,
    strong: Option<&str>,
    callout: Option<&str>,
) -> Vec<(String, String, usize)> {
    let label = |k: &str| {
        let k = k.trim().trim_end_matches(':').trim();
        (!k.is_empty()
            && k.chars().count() <= 30
            && k.split_whitespace().count() <= 4
            && !k.contains(['/', '[', '`', '|', '(']))
        .then(|| k.to_lowercase())
    };
    let value = |v: &str| {
        let v = v.trim();
        (v.chars().any(char::is_alphanumeric) && !super::placeholder::is_placeholder(v))
            .then(|| v.to_string())
    };
    match kind {
        BlockKind::TableRow if callout.is_some_and(|c| c == "infobox") => {
            let cells: Vec<&str> = text.split(" | ").collect();
            match cells.as_slice() {
                [k, v] if !is_table_header_word(v) => match (label(k), value(v)) {
                    (Some(k), Some(v)) => vec![(k, v, 0)],
                    _ => vec![],
                },
                _ => vec![],
            }
        }
        BlockKind::Paragraph | BlockKind::ListItem
            if strong.is_some_and(|s| {
                s.trim_end().ends_with(':')
                    || text
                        .split_once(':')
                        .is_some_and(|(k, _)| s.trim() == k.trim())
            }) =>
        {
            let mut out = Vec::new();
            for (i, l) in text.lines().enumerate() {
                if l.trim().is_empty() {
                    continue;
                }
                // Every line a fact, or the block is prose that opens with a bold phrase.
                let Some((k, v)) = l.split_once(':') else {
                    return vec![];
                };
                let Some(k) = label(k) else {
                    return vec![];
                };
                if let Some(v) = value(v) {
                    out.push((k, v, i));
                }
            }
            out
        }
        _ => vec![],
    }
}

/// The second header cell of a two-column infobox (`| Type | Stat |`).
fn is_table_header_word(v: &str) -> bool {
    matches!(
        v.trim().to_lowercase().as_str(),
        "stat" | "stats" | "value" | "values" | "details" | "info" | "valeur" | "wert" | "valor"
    )
}

fn find_pair(text: &str, c: char) -> Option<usize> {
    debug_assert!(c.is_ascii());
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(i) = memchr::memchr(c as u8, &bytes[from..]) {
        let at = from + i;
        if bytes.get(at + 1) == Some(&(c as u8)) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// A link target that is a picture, a sound, a video or a PDF, not a note.
fn is_media(target: &str) -> bool {
    let ext = target
        .rsplit_once('.')
        .map_or("", |(_, e)| e)
        .to_ascii_lowercase();
    matches!(
        ext.as_str(),
        "png"
            | "jpg"
            | "jpeg"
            | "gif"
            | "webp"
            | "svg"
            | "bmp"
            | "avif"
            | "pdf"
            | "mp3"
            | "wav"
            | "ogg"
            | "m4a"
            | "mp4"
            | "webm"
            | "mov"
    )
}

/// A block without its Obsidian block id (`… text ^abc123`, or `^statblock` alone on a
/// line): a link anchor, never text.
fn strip_block_id(text: &str) -> &str {
    let Some(at) = text.rfind('^') else {
        return text;
    };
    let id = &text[at + 1..];
    let starts_word = at == 0 || text[..at].ends_with(char::is_whitespace);
    if starts_word && !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        text[..at].trim_end()
    } else {
        text
    }
}

/// Replaces `%% comments %%` with spaces (newlines kept) so byte offsets and lines stay put.
/// An unclosed `%%` comments out the rest of the note, as in Obsidian.
pub fn blank_comments(text: &str) -> std::borrow::Cow<'_, str> {
    if find_pair(text, '%').is_none() {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let pair = memchr::memmem::Finder::new("%%");
    while let Some(i) = pair.find(rest.as_bytes()) {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let (comment_len, close) = match pair.find(after.as_bytes()) {
            Some(j) => (j, 2),
            None => (after.len(), 0),
        };
        let blanked = &rest[i..i + 2 + comment_len + close];
        for c in blanked.chars() {
            if c == '\n' {
                out.push('\n');
            } else {
                out.extend(std::iter::repeat_n(' ', c.len_utf8()));
            }
        }
        rest = &rest[i + 2 + comment_len + close..];
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// The `%% comments %%` of a body that hold a word, with their file lines (an unclosed `%%`
/// runs to the end, as [`blank_comments`] has it).
fn comments(text: &str, base_offset: usize, lines: &LineIndex) -> Vec<Comment> {
    let pair = memchr::memmem::Finder::new("%%");
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = pair.find(&text.as_bytes()[at..]) {
        let start = at + i + 2;
        let (end, next) = match pair.find(&text.as_bytes()[start..]) {
            Some(j) => (start + j, start + j + 2),
            None => (text.len(), text.len()),
        };
        let inner = text[start..end].trim();
        if inner.chars().any(char::is_alphanumeric) {
            out.push(Comment {
                text: inner.into(),
                line: super::line32(lines.line(base_offset + at + i)),
            });
        }
        at = next;
    }
    out
}

/// Maps byte offsets to 1-based line numbers.
#[derive(Debug, Clone)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    /// Indexes the line starts of `text`.
    pub fn new(text: &str) -> Self {
        // Counted first (a vectorised pass) so the table is allocated once.
        let n = memchr::memchr_iter(b'\n', text.as_bytes()).count();
        let mut starts = Vec::with_capacity(n + 1);
        starts.push(0);
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        Self { starts }
    }

    /// The 1-based line holding byte `offset`.
    pub fn line(&self, offset: usize) -> usize {
        match self.starts.binary_search(&offset) {
            Ok(i) => i + 1,
            Err(i) => i,
        }
    }
}

/// A block being read: its text so far and what it opened with.
struct Open {
    kind: BlockKind,
    text: String,
    start: usize,
    strong_prefix: Option<String>,
    strong_depth: Option<usize>,
    /// Letters or digits written outside links (the block's own words).
    words: bool,
}

impl Open {
    /// A block of `kind` starting at body offset `start`, its text built in `text` (a
    /// buffer reused from an earlier block).
    fn new(kind: BlockKind, text: String, start: usize) -> Self {
        Self {
            kind,
            text,
            start,
            strong_prefix: None,
            strong_depth: None,
            words: false,
        }
    }
}

/// A wikilink or embed being read.
struct OpenLink {
    /// Its index in the parse's links.
    index: usize,
    /// Its child text is what it shows (a `|pothole`, or an embed's own text); without one
    /// the child text is the raw destination and the note name is shown instead.
    pothole: bool,
    /// Its text is written (or, for an embedded picture, never will be).
    wrote: bool,
}

/// The parser options a body is read with.
fn body_options() -> Options {
    let mut opts = Options::empty();
    opts.insert(Options::ENABLE_WIKILINKS);
    opts.insert(Options::ENABLE_TABLES);
    opts.insert(Options::ENABLE_STRIKETHROUGH);
    opts.insert(Options::ENABLE_TASKLISTS);
    opts
}

/// Parses a body. `base_offset` is the body's byte offset in the file and `lines` indexes
/// the whole file, so every line reported is a file line.
pub fn parse_body(body: &str, base_offset: usize, lines: &LineIndex) -> ParsedBody {
    let cleaned = blank_comments(body);
    // What a parse collects grows in vectors and buffers this thread reuses from note to
    // note; the note gets its blocks and links at their exact size (one allocation each,
    // not one per doubling).
    let mut scratch = SCRATCH.with_borrow_mut(std::mem::take);
    let mut parser = BodyParser::new(&cleaned, base_offset, lines, &mut scratch);
    for (event, range) in Parser::new_ext(&cleaned, body_options()).into_offset_iter() {
        parser.event(event, range);
    }
    let mut out = parser.finish(&mut scratch);
    if !matches!(cleaned, std::borrow::Cow::Borrowed(_)) {
        out.body.comments = comments(body, base_offset, lines);
    }
    scratch.keep_small();
    // An Admonition's own parse (nested in this one) left its scratch there: this one's has
    // grown more.
    SCRATCH.set(scratch);
    out
}

/// One body parse: a small state machine over pulldown-cmark's events, one method per
/// kind of event, collecting into a [`ParsedBody`].
struct BodyParser<'a> {
    /// The body with its comments blanked (offsets are the body's).
    cleaned: &'a str,
    /// The body's byte offset in the file.
    base_offset: usize,
    /// The whole file's line starts.
    lines: &'a LineIndex,
    /// What the parse has read so far.
    out: ParsedBody,
    /// Text buffers for the next blocks. Block texts are built in buffers reused from block
    /// to block: a block keeps an exact copy of its trimmed text (one allocation), not a
    /// buffer sized for its source and then shrunk (two, and a copy).
    spare: Vec<String>,
    /// The blocks open, innermost last.
    stack: Vec<Open>,
    list_depth: usize,
    quote_depth: usize,
    /// The type of the callout being read (lower case).
    callout: Option<std::sync::Arc<str>>,
    /// A top-level quote began: its first paragraph may name a callout type.
    callout_pending: bool,
    /// Code blocks open: what is inside is not text.
    skip_code: usize,
    /// The links being read, innermost last.
    in_link: Vec<OpenLink>,
    /// `**strong**` spans open.
    strong: usize,
    /// Markdown images open: their alt text is not the note's text.
    image_depth: usize,
    /// The table row being read: its cells and its offset.
    row: Option<(Vec<String>, usize)>,
    /// The statblock being read: its YAML so far and its line.
    statblock: Option<(String, usize)>,
    /// The Admonition being read: its type, its text and the offset of that text.
    admonition: Option<(String, String, Option<usize>)>,
    /// What is not text, where a `key:: value` is no field: code blocks, inline code, HTML.
    not_text: Vec<std::ops::Range<usize>>,
}

impl<'a> BodyParser<'a> {
    /// A parse of `cleaned` collecting into the vectors and buffers of `scratch`.
    fn new(
        cleaned: &'a str,
        base_offset: usize,
        lines: &'a LineIndex,
        scratch: &mut Scratch,
    ) -> Self {
        let out = ParsedBody {
            body: Body {
                sections: vec![Section {
                    heading: None,
                    level: 0,
                    line: super::line32(lines.line(base_offset)),
                }],
                blocks: std::mem::take(&mut scratch.blocks),
                ..Body::default()
            },
            links: std::mem::take(&mut scratch.links),
            ..ParsedBody::default()
        };
        Self {
            cleaned,
            base_offset,
            lines,
            out,
            spare: std::mem::take(&mut scratch.texts),
            stack: Vec::new(),
            list_depth: 0,
            quote_depth: 0,
            callout: None,
            callout_pending: false,
            skip_code: 0,
            in_link: Vec::new(),
            strong: 0,
            image_depth: 0,
            row: None,
            statblock: None,
            admonition: None,
            not_text: Vec::new(),
        }
    }

    /// The file line of body offset `off`.
    fn line_of(&self, off: usize) -> usize {
        self.lines.line(self.base_offset + off)
    }

    /// A text buffer for a new block.
    fn buffer(&mut self) -> String {
        self.spare.pop().unwrap_or_default()
    }

    /// Reads one event at body range `range`.
    fn event(&mut self, event: Event<'a>, range: std::ops::Range<usize>) {
        if self.skip_code == 0
            && matches!(
                event,
                Event::Start(Tag::CodeBlock(_))
                    | Event::Start(Tag::HtmlBlock)
                    | Event::Code(_)
                    | Event::Html(_)
                    | Event::InlineHtml(_)
            )
        {
            self.not_text.push(range.clone());
        }
        if self.skip_code > 0 {
            self.in_code(event, range);
            return;
        }
        match event {
            Event::Start(Tag::CodeBlock(kind)) => self.start_code(&kind, range.start),
            Event::Start(Tag::Heading { level, .. }) => {
                let text = self.buffer();
                let open = Open::new(BlockKind::Heading(level as u8), text, range.start);
                self.stack.push(open);
            }
            Event::Start(Tag::Paragraph) => self.start_paragraph(range.start),
            Event::Start(Tag::Item) => {
                let text = self.buffer();
                let open = Open::new(BlockKind::ListItem, text, range.start);
                self.stack.push(open);
            }
            Event::Start(Tag::List(_)) => self.start_list(),
            Event::End(TagEnd::List(_)) => self.list_depth = self.list_depth.saturating_sub(1),
            Event::Start(Tag::BlockQuote(_)) => self.start_quote(),
            Event::End(TagEnd::BlockQuote(_)) => self.end_quote(),
            Event::End(TagEnd::Heading(_)) | Event::End(TagEnd::Item) => self.end_block(),
            Event::End(TagEnd::Paragraph) => self.end_paragraph(),
            Event::Start(Tag::TableRow) | Event::Start(Tag::TableHead) => {
                self.row = Some((Vec::new(), range.start));
            }
            Event::Start(Tag::TableCell) => {
                if let Some((cells, _)) = self.row.as_mut() {
                    cells.push(String::new());
                }
            }
            Event::End(TagEnd::TableRow) | Event::End(TagEnd::TableHead) => self.end_row(),
            Event::Start(Tag::Strong) => self.start_strong(),
            Event::End(TagEnd::Strong) => self.end_strong(),
            Event::Start(Tag::Link {
                link_type: LinkType::WikiLink { has_pothole },
                dest_url,
                ..
            })
            | Event::Start(Tag::Image {
                link_type: LinkType::WikiLink { has_pothole },
                dest_url,
                ..
            }) => self.start_wikilink(has_pothole, &dest_url, range),
            // A Markdown image's alt text is not the note's text.
            Event::Start(Tag::Image { .. }) => self.image_depth += 1,
            Event::End(TagEnd::Image) if self.image_depth > 0 => self.image_depth -= 1,
            Event::Text(_) if self.image_depth > 0 => {}
            Event::End(TagEnd::Link) | Event::End(TagEnd::Image) => self.end_link(),
            Event::Text(t) => self.text(&t, true, range.start),
            Event::Code(t) => self.text(&t, false, range.start),
            Event::SoftBreak | Event::HardBreak => self.push_text("\n"),
            Event::TaskListMarker(done) => self.push_text(if done { "[x] " } else { "[ ] " }),
            _ => {}
        }
    }

    /// A code block begins: a statblock's or an Admonition's is read, any other skipped.
    fn start_code(&mut self, kind: &CodeBlockKind, start: usize) {
        if let CodeBlockKind::Fenced(lang) = kind {
            let lang = lang.trim().to_lowercase();
            if lang == "statblock" || lang.starts_with("statblock ") {
                self.statblock = Some((String::new(), self.line_of(start)));
            } else if let Some(kind) = lang.strip_prefix("ad-") {
                // The Admonition plugin renders these as callouts: they are content.
                let kind = kind.split_whitespace().next().unwrap_or("note").to_string();
                self.admonition = Some((kind, String::new(), None));
            }
        }
        self.skip_code += 1;
    }

    /// An event inside a code block: only a statblock's or an Admonition's text is kept.
    fn in_code(&mut self, event: Event<'a>, range: std::ops::Range<usize>) {
        match event {
            Event::End(TagEnd::CodeBlock) => {
                self.skip_code -= 1;
                if let Some(sb) = self.statblock.take() {
                    self.out.body.statblocks.push(sb);
                }
                if let Some((kind, text, Some(at))) = self.admonition.take() {
                    let at = self.base_offset + at;
                    admonition_blocks(&mut self.out, &kind, &text, at, self.lines);
                }
            }
            Event::Text(t) => {
                if let Some((yaml, _)) = self.statblock.as_mut() {
                    yaml.push_str(&t);
                }
                if let Some((_, text, at)) = self.admonition.as_mut() {
                    at.get_or_insert(range.start);
                    text.push_str(&t);
                }
            }
            _ => {}
        }
    }

    /// A paragraph begins; the first paragraph of a list item is the item's own text.
    fn start_paragraph(&mut self, start: usize) {
        let reuse = matches!(self.stack.last(), Some(o) if o.kind == BlockKind::ListItem && o.text.trim().is_empty());
        if !reuse {
            let text = self.buffer();
            self.stack
                .push(Open::new(BlockKind::Paragraph, text, start));
        }
    }

    /// A list begins: an item's own text ends where its nested list begins.
    fn start_list(&mut self) {
        let own_text = matches!(self.stack.last(), Some(o) if o.kind == BlockKind::ListItem && !o.text.trim().is_empty());
        if own_text {
            let fresh = self.buffer();
            if let Some(o) = self.stack.last_mut() {
                let taken = Open {
                    kind: BlockKind::ListItem,
                    text: std::mem::replace(&mut o.text, fresh),
                    start: o.start,
                    strong_prefix: o.strong_prefix.take(),
                    strong_depth: None,
                    words: std::mem::take(&mut o.words),
                };
                self.flush(taken, self.list_depth);
            }
        }
        self.list_depth += 1;
    }

    /// A quote begins: a top-level one may be a callout.
    fn start_quote(&mut self) {
        self.quote_depth += 1;
        if self.quote_depth == 1 {
            self.callout_pending = true;
        }
    }

    /// A quote ends: leaving the top-level one leaves its callout.
    fn end_quote(&mut self) {
        self.quote_depth = self.quote_depth.saturating_sub(1);
        if self.quote_depth == 0 {
            self.callout = None;
            self.callout_pending = false;
        }
    }

    /// A heading or a list item ends.
    fn end_block(&mut self) {
        if let Some(o) = self.stack.pop() {
            let depth = if o.kind == BlockKind::ListItem {
                self.list_depth
            } else {
                0
            };
            self.flush(o, depth);
        }
    }

    /// A paragraph ends; a quote's first one may open with a callout's `[!type]`.
    fn end_paragraph(&mut self) {
        if !matches!(self.stack.last(), Some(o) if o.kind == BlockKind::Paragraph) {
            return;
        }
        if let Some(mut o) = self.stack.pop() {
            if self.callout_pending {
                self.callout_pending = false;
                self.read_callout_type(&mut o);
            }
            self.flush(o, 0);
        }
    }

    /// Takes a callout's `[!type]` off the front of its first paragraph, as the callout
    /// now being read.
    fn read_callout_type(&mut self, o: &mut Open) {
        let t = o.text.trim_start();
        let Some(rest) = t.strip_prefix("[!") else {
            return;
        };
        let Some(end) = rest.find(']') else {
            return;
        };
        // `[!infobox|no-t right]`: the type, not its display options.
        let kind = rest[..end].split('|').next().unwrap_or("");
        self.callout = Some(
            kind.trim()
                .trim_end_matches(['-', '+'])
                .to_lowercase()
                .into(),
        );
        o.text = rest[end + 1..].trim_start_matches(['-', '+']).to_string();
    }

    /// A table row ends: its cells, joined, are a block.
    fn end_row(&mut self) {
        if let Some((cells, start)) = self.row.take() {
            let text = cells
                .iter()
                .map(|c| c.trim())
                .collect::<Vec<_>>()
                .join(" | ");
            let mut open = Open::new(BlockKind::TableRow, text, start);
            open.words = true;
            self.flush(open, 0);
        }
    }

    /// A `**strong**` span begins: at the front of a block, it is the block's strong prefix.
    fn start_strong(&mut self) {
        self.strong += 1;
        if let Some(o) = self.stack.last_mut() {
            // A checklist item's box comes before its bold title
            // (`- [ ] **The Debt:** …`).
            let lead = o.text.trim();
            if (lead.is_empty() || lead == "[ ]" || lead == "[x]") && o.strong_prefix.is_none() {
                o.strong_depth = Some(self.strong);
                o.strong_prefix = Some(String::new());
            }
        }
    }

    /// A `**strong**` span ends.
    fn end_strong(&mut self) {
        if let Some(o) = self.stack.last_mut() {
            if o.strong_depth == Some(self.strong) {
                o.strong_depth = None;
            }
        }
        self.strong = self.strong.saturating_sub(1);
    }

    /// A wikilink or embed begins at `range`.
    fn start_wikilink(&mut self, has_pothole: bool, dest_url: &str, range: std::ops::Range<usize>) {
        let raw = &self.cleaned[range.clone()];
        let embed = raw.starts_with('!');
        // Parse the link as written: pulldown-cmark hands over the destination
        // without the `|alias`, which would otherwise be lost.
        let inner = raw
            .trim_start_matches('!')
            .strip_prefix("[[")
            .and_then(|r| r.strip_suffix("]]"))
            .filter(|i| i.starts_with(dest_url) || i.contains(dest_url));
        let target = LinkTarget::parse(inner.unwrap_or(dest_url));
        // An embedded image shows the picture, not words: its `|200` size is not
        // text (`wrote` set, so nothing of it is written).
        let media = embed && is_media(&target.note);
        self.in_link.push(OpenLink {
            index: self.out.links.len(),
            pothole: has_pothole || embed,
            wrote: media,
        });
        let line = self.line_of(range.start);
        self.out.links.push(BodyLink {
            target,
            embed,
            line,
        });
    }

    /// A link ends: one that wrote no text shows its note's name.
    fn end_link(&mut self) {
        if let Some(link) = self.in_link.pop() {
            if !link.wrote {
                let shown = self.out.links[link.index].target.shown();
                push_text(&mut self.stack, &mut self.row, shown);
            }
        }
    }

    /// Text (`is_text`) or inline code at body offset `start`.
    fn text(&mut self, t: &str, is_text: bool, start: usize) {
        if let Some(link) = self.in_link.last_mut() {
            // Without a pothole the child text is the raw destination: show the note name.
            if !link.wrote {
                let shown = if link.pothole {
                    t
                } else {
                    self.out.links[link.index].target.shown()
                };
                push_text(&mut self.stack, &mut self.row, shown);
                link.wrote = true;
            }
            return;
        }
        if is_text {
            let line = self.line_of(start);
            scan_tags(t, |tag| self.out.tags.push((tag, line)));
        } else if t.starts_with('=') || t.starts_with("$=") {
            return; // an inline Dataview query: its result is not in the file
        }
        // The Dice Roller plugin's `dice: 2d4` shows a roll of the formula.
        let t: &str = if is_text {
            t
        } else {
            t.strip_prefix("dice:").map_or(t, str::trim)
        };
        if let Some(o) = self.stack.last_mut() {
            if !o.words && has_words(t) {
                o.words = true;
            }
        }
        self.push_text(t);
    }

    /// Adds `t` to the table cell or the block being read.
    fn push_text(&mut self, t: &str) {
        push_text(&mut self.stack, &mut self.row, t);
    }

    /// Ends a block at list depth `depth`: its text, if any, becomes a [`Block`] (a
    /// heading also a [`Section`]), with the facts it states; its buffer goes back to
    /// `spare`.
    fn flush(&mut self, open: Open, depth: usize) {
        let Open {
            kind,
            text: mut buf,
            start,
            strong_prefix,
            words,
            ..
        } = open;
        {
            let stripped;
            let text: &str = if has_byte(&buf, b':') {
                stripped = strip_icons(crate::names::trim(&buf));
                &stripped
            } else {
                crate::names::trim(&buf)
            };
            let text = strip_block_id(text);
            if !text.is_empty() || matches!(kind, BlockKind::Heading(_)) {
                let line = self.line_of(start);
                let prose = words || matches!(kind, BlockKind::Heading(_));
                if let BlockKind::Heading(level) = kind {
                    self.out.body.sections.push(Section {
                        heading: Some(text.into()),
                        level,
                        line: super::line32(line),
                    });
                }
                self.push_facts(text, &kind, strong_prefix.as_deref(), line);
                self.out.body.blocks.push(Block {
                    kind,
                    text: text.into(),
                    line: super::line32(line),
                    section: (self.out.body.sections.len() - 1) as u32,
                    strong_prefix: strong_prefix.map(String::into_boxed_str),
                    callout: self.callout.clone(),
                    depth: depth.min(u16::MAX as usize) as u16,
                    prose,
                });
            }
        }
        buf.clear();
        if buf.capacity() <= 4096 {
            self.spare.push(buf);
        }
    }

    /// The facts a block at file line `line` states (`**Race:** Elf`, an infobox row).
    fn push_facts(&mut self, text: &str, kind: &BlockKind, strong: Option<&str>, line: usize) {
        // A block with a `::` holds inline fields (read from the lines as written, in
        // `read_inline_fields`), not facts.
        if find_pair(text, ':').is_some() {
            return;
        }
        let callout = self.callout.as_deref();
        for (k, v, i) in fact_fields(text, kind.clone(), strong, callout) {
            self.out.fields.push(InlineField {
                key: field_key(&k),
                value: v,
                line: line + i,
                span: None,
            });
        }
    }

    /// Inline fields, from the lines as written (comments blanked), outside what is not text.
    fn read_inline_fields(&mut self) {
        if find_pair(self.cleaned, ':').is_none() {
            return;
        }
        let mut at = 0;
        for l in self.cleaned.split_inclusive('\n') {
            let start = at;
            at += l.len();
            let text = l.trim_end_matches(['\n', '\r']);
            for (k, v) in inline_fields(text) {
                let (a, z) = (start + k.start, start + v.end);
                if self
                    .not_text
                    .iter()
                    .any(|r| r.start < z.max(a + 1) && a < r.end)
                {
                    continue;
                }
                let line = self.line_of(start);
                self.out.fields.push(InlineField {
                    key: field_key(&text[k]),
                    value: text[v.clone()].to_string(),
                    line,
                    span: Some(v),
                });
            }
        }
        // In the note's order, facts and fields alike (the first of a key is the one read).
        self.out.fields.sort_by_key(|f| f.line);
    }

    /// Ends the parse: the blocks still open, then the inline fields; the blocks and links
    /// go out at their exact size and the vectors and buffers back to `scratch`.
    fn finish(mut self, scratch: &mut Scratch) -> ParsedBody {
        while let Some(o) = self.stack.pop() {
            self.flush(o, self.list_depth);
        }
        self.read_inline_fields();
        let mut out = self.out;
        scratch.blocks = std::mem::take(&mut out.body.blocks);
        out.body.blocks = exact(&mut scratch.blocks);
        scratch.links = std::mem::take(&mut out.links);
        out.links = exact(&mut scratch.links);
        scratch.texts = self.spare;
        out
    }
}

/// The vectors and text buffers a parse collects into, kept per thread between notes.
#[derive(Default)]
struct Scratch {
    blocks: Vec<Block>,
    links: Vec<BodyLink>,
    texts: Vec<String>,
}

impl Scratch {
    /// Drops what a long note grew (a timeline of a thousand events, a note of 100k
    /// blocks) and buffers beyond a few, so a thread keeps a typical note's worth (a few
    /// kilobytes), not the biggest note's, for as long as the process runs.
    fn keep_small(&mut self) {
        if self.blocks.capacity() > 256 {
            self.blocks = Vec::new();
        }
        if self.links.capacity() > 256 {
            self.links = Vec::new();
        }
        self.texts.truncate(8);
        for t in &mut self.texts {
            if t.capacity() > 1024 {
                *t = String::new();
            }
        }
    }
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// The items of `scratch` moved into a vector of their exact size; `scratch` is left empty
/// with its capacity, for the next note.
fn exact<T>(scratch: &mut Vec<T>) -> Vec<T> {
    let mut v = Vec::with_capacity(scratch.len());
    v.append(scratch);
    v
}

/// The blocks of an Admonition (```` ```ad-note ````): its Markdown read like a callout of
/// that type, its `title:`/`collapse:`/`icon:`/`color:` lines dropped. `at` is the file
/// offset of its first line.
fn admonition_blocks(out: &mut ParsedBody, kind: &str, text: &str, at: usize, lines: &LineIndex) {
    let mut content = String::with_capacity(text.len());
    for l in text.split_inclusive('\n') {
        let t = l.trim_start().to_lowercase();
        if ["title:", "collapse:", "icon:", "color:"]
            .iter()
            .any(|p| t.starts_with(p))
        {
            // Keep the line count: blank it.
            content.push('\n');
        } else {
            content.push_str(l);
        }
    }
    let inner = parse_body(&content, at, lines);
    let section = (out.body.sections.len() - 1) as u32;
    let kind: std::sync::Arc<str> = kind.into();
    for mut b in inner.body.blocks {
        if matches!(b.kind, BlockKind::Heading(_)) {
            continue;
        }
        b.callout = Some(kind.clone());
        b.section = section;
        out.body.blocks.push(b);
    }
    out.links.extend(inner.links);
    out.tags.extend(inner.tags);
}

/// Whether `t` holds the ASCII byte `b` (a vectorised search: these run on every text of
/// every block).
fn has_byte(t: &str, b: u8) -> bool {
    memchr::memchr(b, t.as_bytes()).is_some()
}

/// Whether a text holds words of its own, not only icons, ornaments and separators.
fn has_words(t: &str) -> bool {
    let stripped = if has_byte(t, b':') {
        std::borrow::Cow::Owned(strip_icons(t))
    } else {
        std::borrow::Cow::Borrowed(t)
    };
    stripped.chars().any(char::is_alphanumeric)
}

fn push_text(stack: &mut [Open], row: &mut Option<(Vec<String>, usize)>, t: &str) {
    if let Some((cells, _)) = row.as_mut() {
        if let Some(c) = cells.last_mut() {
            c.push_str(t);
        }
        return;
    }
    if let Some(o) = stack.last_mut() {
        o.text.push_str(t);
        if o.strong_depth.is_some() {
            if let Some(p) = o.strong_prefix.as_mut() {
                p.push_str(t);
            }
        }
    }
}

/// Calls `f` with every inline `#tag` in `text` (lower-cased, without `#`). A tag needs a
/// non-digit character and must start the text or follow whitespace.
pub fn scan_tags(text: &str, mut f: impl FnMut(String)) {
    let bytes = text.as_bytes();
    for i in memchr::memchr_iter(b'#', bytes) {
        if i > 0 && !bytes[i - 1].is_ascii_whitespace() {
            continue;
        }
        let tag: String = text[i + 1..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '/'))
            .collect();
        let tag = tag.trim_end_matches('/');
        if !tag.is_empty() && tag.chars().any(|c| !c.is_ascii_digit()) {
            f(tag.to_lowercase());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Body {
        parse_all(s).body
    }

    fn parse_all(s: &str) -> ParsedBody {
        parse_body(s, 0, &LineIndex::new(s))
    }

    #[test]
    fn keeping_title_and_summary_keeps_what_they_read() {
        let cases = [
            // A paragraph summary, then a long body (a history too long to be read on).
            "# The Sunken Library\n\nA drowned archive under the bay.\n\n## History\nBuilt in the old empire, when the bay was a valley and the valley was a kingdom of scribes who wrote everything down twice, once in ink and once in salt, so that whatever the sea took back the land would keep; the salt copies are the ones the eels guard now, shelf after shelf of them, under forty feet of green water and four hundred years of silt, read by nobody since the last scribe drowned with his lamp still lit and his quill still wet, which the fishermen say you can see on a calm night, a small yellow light walking the shelves.\n\n- shelves\n- eels\n",
            // Only a callout says what it is; a secret callout first is skipped.
            "# Eel Cult\n\n> [!secret]\n> They own the mayor.\n\n> [!info]\n> A cult that fishes at night.\n\n## Rites\nMore text.\n",
            // Bullets, the voice section's skipped, the rest after.
            "# Gate\n\n## Voice\n- growls\n\n## Facts\n- Old iron.\n- Never closed\n- third\n\nLater paragraph.\n",
            // Nothing with words: navigation and tags only.
            "← back | next →\n\n#lore #place\n",
            // No title: the summary alone.
            "Plain opening words.\n\n## More\nDetail.\n",
            "",
        ];
        for text in cases {
            let full = parse(text);
            let mut kept = full.clone();
            kept.keep_title_and_summary(&[]);
            assert_eq!(kept.title(), full.title(), "{text:?}");
            assert_eq!(kept.summary(), full.summary(), "{text:?}");
            assert!(kept.blocks.len() <= full.blocks.len());
            assert!(!kept.sections.is_empty());
            for b in &kept.blocks {
                assert!((b.section as usize) < kept.sections.len());
            }
        }
        let mut long = parse(cases[0]);
        long.keep_title_and_summary(&[]);
        let texts: Vec<&str> = long.blocks.iter().map(|b| &*b.text).collect();
        assert_eq!(
            texts,
            ["The Sunken Library", "A drowned archive under the bay."]
        );
        assert_eq!(long.sections.len(), 2);
    }

    proptest::proptest! {
        /// Keeping the title, summary and named sections leaves the title, the summary and
        /// every named section's blocks reading as before, on bodies of headings (some
        /// named, at any level), paragraphs, bullets, callouts and link-only lines in any
        /// order; the blocks that stay keep their order and section numbers.
        #[test]
        fn keeping_named_sections_keeps_what_they_read(
            parts in proptest::collection::vec(0usize..12, 0..24),
            names in proptest::sample::subsequence(vec!["voice", "personality", "description", "summary"], 0..=4),
        ) {
            let piece = |k: usize| match k {
                0 => "# Title\n",
                1 => "## Voice\n",
                2 => "### Personality\n",
                3 => "## Description\n",
                4 => "## History\n",
                5 => "# Summary\n",
                6 => "Some words of prose.\n",
                7 => "- a bullet with words\n",
                8 => "> [!secret]\n> hidden words\n",
                9 => "> [!info]\n> shown words\n",
                10 => "[[Elsewhere]] | [[Back]]\n",
                _ => "  - nested bullet words\n",
            };
            let text: String = parts.iter().map(|&k| format!("{}\n", piece(k))).collect();
            let full = parse(&text);
            let mut kept = full.clone();
            kept.keep_title_summary_and_sections(&names, &[]);
            proptest::prop_assert_eq!(kept.title(), full.title());
            proptest::prop_assert_eq!(kept.summary(), full.summary());
            proptest::prop_assert_eq!(&kept.sections, &full.sections);
            for n in &names {
                proptest::prop_assert_eq!(kept.section_blocks(&[n]), full.section_blocks(&[n]));
            }
            proptest::prop_assert_eq!(kept.section_blocks(&names), full.section_blocks(&names));
            let mut rest = full.blocks.iter();
            for b in &kept.blocks {
                proptest::prop_assert!(rest.any(|f| f == b), "kept blocks out of order");
            }
        }
    }

    /// A long note passes through a parsing thread whole (every block and link, each note
    /// its own exact-size lists), and the thread keeps only a typical note's scratch after it;
    /// the next note parses as it would on a fresh thread.
    #[test]
    fn a_long_note_leaves_a_thread_only_a_small_scratch() {
        let long: String = (0..5000)
            .map(|i| format!("- item {i} of [[Note {i}]]\n\n{}\n\n", "word ".repeat(300)))
            .collect();
        let parsed = parse_all(&long);
        assert_eq!(parsed.links.len(), 5000);
        assert_eq!(parsed.body.blocks.len(), 10_000);
        assert_eq!(parsed.body.blocks.capacity(), 10_000);
        assert_eq!(parsed.links.capacity(), 5000);
        SCRATCH.with_borrow(|s| {
            assert!(s.blocks.capacity() <= 256 && s.links.capacity() <= 256);
            assert!(s.texts.len() <= 8 && s.texts.iter().all(|t| t.capacity() <= 1024));
        });
        let small = "# Ida\n\nA harbour pilot. See [[Odessa]].\n";
        let fresh = std::thread::spawn(move || parse_all(small))
            .join()
            .expect("the fresh thread parses");
        assert_eq!(parse_all(small), fresh);
    }

    proptest::proptest! {
        /// The line of an offset is one more than the newlines before it, whatever order
        /// the offsets are asked in (forward, back, past the end, at a newline).
        #[test]
        fn line_index_counts_the_newlines_before_an_offset(
            text in "[a\n\u{e9}]{0,80}",
            asks in proptest::collection::vec(0usize..100, 0..40),
        ) {
            let lines = LineIndex::new(&text);
            for at in asks {
                let upto = &text.as_bytes()[..at.min(text.len())];
                let want = 1 + upto.iter().filter(|&&b| b == b'\n').count();
                proptest::prop_assert_eq!(lines.line(at), want, "offset {}", at);
            }
        }
    }

    #[test]
    fn sections_blocks_and_lines() {
        let b = parse("# Title\n\nIntro para.\n\n## Personality\n- Speaks softly.\n- Bites nails.\n  - nested\n\n## Other\ntext\n");
        assert_eq!(b.title(), Some("Title"));
        let p = b.section_blocks(&["personality"]).expect("test input");
        let texts: Vec<_> = p.iter().map(|b| &*b.text).collect();
        assert_eq!(texts, ["Speaks softly.", "Bites nails.", "nested"]);
        assert_eq!(p[0].line, 6);
        assert_eq!(
            &*b.first_paragraph().expect("test input").text,
            "Intro para."
        );
    }

    #[test]
    fn comments_and_code_are_not_content() {
        let b = parse("Keep %% hidden %% this.\n\n```dataview\nLIST Secret\n```\n\n```\ncode\n```\n%%\nmulti\nline\n%%\nEnd.\n");
        let all: String = b
            .blocks
            .iter()
            .map(|b| b.text.clone())
            .collect::<Vec<_>>()
            .join("|");
        assert!(
            !all.contains("hidden")
                && !all.contains("Secret")
                && !all.contains("code")
                && !all.contains("multi"),
            "{all}"
        );
        assert!(all.contains("Keep") && all.contains("End."));
        assert_eq!(b.blocks.last().expect("test input").line, 14);
    }

    #[test]
    fn wikilinks_render_as_display_text() {
        let p = parse_all(
            "Meet [[Mother Ashka]] at [[the-gilded-eel|the Eel]] or [[Note#Head]]. ![[map.png]]\n",
        );
        let b = &p.links;
        assert_eq!(
            &*p.body.blocks[0].text,
            // An embedded picture is not words.
            "Meet Mother Ashka at the Eel or Note."
        );
        assert_eq!(b.len(), 4);
        assert_eq!(&*b[1].target.note, "the-gilded-eel");
        assert!(b[3].embed);
    }

    #[test]
    fn strong_prefix_tags_fields_callouts() {
        let all = parse_all("- **The Forged Pass** — summary\n  → Next: do it\n\nStatus:: alive #npc/alive and #1 not\n\n> [!secret] Holds a marker\n> He won it.\n");
        let b = &all.body;
        assert_eq!(
            b.blocks[0].strong_prefix.as_deref(),
            Some("The Forged Pass")
        );
        assert_eq!(
            &*b.blocks[0].text,
            "The Forged Pass — summary\n→ Next: do it"
        );
        assert_eq!(all.fields[0].key, "status");
        assert_eq!(all.fields[0].value, "alive #npc/alive and #1 not");
        assert_eq!(
            all.tags.iter().map(|t| t.0.as_str()).collect::<Vec<_>>(),
            ["npc/alive"]
        );
        let secret: Vec<_> = b
            .blocks
            .iter()
            .filter(|b| b.callout.as_deref() == Some("secret"))
            .collect();
        assert_eq!(secret.len(), 1);
        assert!(secret[0].text.contains("Holds a marker"));
    }

    #[rstest::rstest]
    #[case::line("hp:: 22", &[("hp", "22")])]
    #[case::item("- **Status**:: alive", &[("Status", "alive")])]
    #[case::checkbox("- [ ] due:: Day 5", &[("due", "Day 5")])]
    #[case::quote("> mood:: wary ", &[("mood", "wary")])]
    #[case::numbered("2. Max HP:: 30", &[("Max HP", "30")])]
    #[case::bracketed("She is [mood:: wary] today.", &[("mood", "wary")])]
    #[case::two("[hp:: 5] and (ac:: 12)", &[("hp", "5"), ("ac", "12")])]
    #[case::link("[location:: [[The Docks|Docks]]] x", &[("location", "[[The Docks|Docks]]")])]
    #[case::link_line("location:: [[The Docks]]", &[("location", "[[The Docks]]")])]
    #[case::empty("status::", &[("status", "")])]
    #[case::no_key(":: x", &[])]
    #[case::wikilink_is_no_field("[[a]]:: x", &[])]
    #[case::single_colon("hp: 22", &[])]
    fn inline_field_syntax(#[case] line: &str, #[case] want: &[(&str, &str)]) {
        let got: Vec<(&str, &str)> = inline_fields(line)
            .into_iter()
            .map(|(k, v)| (&line[k], &line[v]))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn inline_fields_are_not_read_in_code_comments_or_html() {
        let all = parse_all("hp:: 1\n\n```\nhp:: 2\n```\n\nA `ac:: 3` span.\n\n%% gold:: 4 %%\n\n<div>\nxp:: 5\n</div>\n\n    lvl:: 6\n\n[mood:: wary]\n");
        let got: Vec<(&str, &str, usize)> = all
            .fields
            .iter()
            .map(|f| (f.key.as_str(), f.value.as_str(), f.line))
            .collect();
        assert_eq!(got, [("hp", "1", 1), ("mood", "wary", 17)]);
        assert_eq!(all.fields[1].span, Some(8..12));
    }

    #[test]
    fn blank_comments_keeps_offsets() {
        let s = "a %% é\nb %% c %% open";
        let out = blank_comments(s);
        assert_eq!(out.len(), s.len());
        assert_eq!(out.matches('\n').count(), 1);
        assert!(out.starts_with("a ") && !out.contains('é') && !out.contains("open"));
    }
}
