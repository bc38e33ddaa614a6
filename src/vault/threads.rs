//! Lists of threads (`canon/open-threads.md`): which blocks of a note are threads, what each
//! one's title is, which priority section it sits in, which lines it spans and which of them
//! is its `Next:` line.
//!
//! This is the one reading of a thread list. Canon builds its threads from it
//! (`canon::build`), and write-back finds and edits threads through it
//! ([`super::edit::thread_move`] and the other `thread_*` edits), so a title the context shows
//! is a title `/resolve` finds, and an edit is made on the lines the reader reads the thread
//! from. It works on the blocks [`super::markdown::parse_body`] reads (code, comments and
//! HTML are not content), and keeps their file lines.

use super::markdown::{Block, BlockKind};

/// The conventional priority sections, most pressing first, as written in new sections.
pub(crate) const PRIORITY_NAMES: [&str; 5] = ["Urgent", "High", "Medium", "Low", "Resolved"];

/// The rank of a priority word (`urgent` 0, `High` 1, `ongoing` 2, `background` 3,
/// `closed` 4…), read from the first word of `s`, in any case. The one rule of which words
/// name a priority, for headings, frontmatter values and tags alike.
pub(crate) fn priority_rank(s: &str) -> Option<usize> {
    let s = s.trim().to_lowercase();
    let w = s
        .split(|c: char| !c.is_alphanumeric())
        .find(|w| !w.is_empty())?;
    Some(match w {
        "urgent" | "critical" | "now" => 0,
        "high" | "important" => 1,
        "medium" | "normal" | "ongoing" | "active" | "open" => 2,
        "low" | "background" | "minor" => 3,
        "resolved" | "closed" | "done" | "complete" | "completed" | "finished" | "failed"
        | "abandoned" | "cancelled" | "canceled" | "solved" | "completada" | "completado"
        | "terminada" | "terminado" | "cumplida" | "abgeschlossen" | "erledigt" | "gelöst"
        | "beendet" | "terminée" | "terminé" | "accomplie" | "résolue" | "completata"
        | "completato" | "conclusa" | "concluso" | "risolta" | "inactive" => 4,
        _ => return None,
    })
}

/// A priority heading (`## High`, `# Urgent`, `### Resolved`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ThreadSection {
    /// The heading text as read (`High Priority`).
    pub name: String,
    /// Its priority rank ([`priority_rank`]).
    pub rank: usize,
    /// 1-based file line of the heading.
    pub line: usize,
    /// Heading level (1-6).
    pub level: u8,
}

/// One thread of a list, as the reader reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ListedThread {
    /// The title, as the context shows it (emphasis removed, links as their display text,
    /// spaces collapsed).
    pub title: String,
    /// 1-based file line of its heading or bullet.
    pub line: usize,
    /// The level of its heading (`### Title` is 3); 0 for a list item.
    pub level: u8,
    /// Index in [`ThreadList::sections`] of the priority section it sits under; `None`
    /// when no priority heading is above it.
    pub section: Option<usize>,
    /// Whether a list item is a ticked (`Some(true)`) or open (`Some(false)`) checkbox.
    pub checkbox: Option<bool>,
    /// The rest of a list item's first line after its title and separator.
    pub rest: String,
    /// Index of its own block, in the blocks given to [`read_threads`].
    pub block: usize,
    /// The blocks after its own that are read as its text (indices as `block`).
    pub body: Vec<usize>,
    /// 1-based file line of the block that ends the thread (the next thread or heading);
    /// `None` when it runs to the end of the note.
    pub until: Option<usize>,
    /// Its next step, and the 1-based file line it is written on.
    pub next: Option<(String, usize)>,
}

impl ListedThread {
    /// Its priority rank as read: a ticked checkbox is done (resolved, 4) wherever it sits;
    /// otherwise its section's rank. `None` under no priority heading.
    pub(crate) fn rank(&self, list: &ThreadList) -> Option<usize> {
        if self.checkbox == Some(true) {
            return Some(4);
        }
        self.section
            .and_then(|k| list.sections.get(k))
            .map(|s| s.rank)
    }
}

/// The threads and priority sections of a note.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ThreadList {
    /// Priority headings in order.
    pub sections: Vec<ThreadSection>,
    /// Threads in order.
    pub threads: Vec<ListedThread>,
    /// Every heading (1-based file line, level), in order.
    pub headings: Vec<(usize, u8)>,
}

/// A title as two titles are compared: emphasis markers dropped, wikilinks as their display
/// text, spaces collapsed, lower case. The context's title and the GM's spelling of it
/// (`**The Debt**`, `[[Vane]]'s Ledger`, `the debt`) compare equal.
pub(crate) fn title_key(s: &str) -> String {
    let t = s.replace("**", "").replace("__", "");
    let mut out = String::with_capacity(t.len());
    let mut rest = t.as_str();
    while let Some(a) = rest.find("[[") {
        out.push_str(&rest[..a]);
        let after = &rest[a + 2..];
        match after.find("]]") {
            Some(z) => {
                let inner = &after[..z];
                let shown = match inner.split_once('|') {
                    Some((_, alias)) => alias,
                    None => inner.rsplit('/').next().unwrap_or(inner),
                };
                out.push_str(shown);
                rest = &after[z + 2..];
            }
            None => {
                out.push_str(&rest[a..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The title of a list-item thread and the rest of its first line, from the item's first
/// line as read (`first`, checkbox already removed) and its leading bold text (`strong`).
///
/// A bold lead is the title (`**The Debt:** Vane owes…` is "The Debt"); otherwise the title
/// ends at the first separator — ` — `, ` – `, ` -- `, ` - ` or `: ` — whichever comes
/// first (`A Bell: rings twice — at noon` is "A Bell"), else it is the whole line.
pub(crate) fn item_title<'a>(first: &'a str, strong: Option<&str>) -> (String, &'a str) {
    if let Some(p) = strong.map(str::trim).filter(|p| !p.is_empty()) {
        if let Some(rest) = first.trim_start().strip_prefix(p) {
            return (one_line(p.trim_end_matches(':').trim()), strip_sep(rest));
        }
    }
    match [" — ", " – ", " -- ", " - ", ": "]
        .iter()
        .filter_map(|sep| first.find(sep).map(|at| (at, sep.len())))
        .min()
    {
        Some((at, len)) => (one_line(&first[..at]), first[at + len..].trim()),
        None => (one_line(first), ""),
    }
}

/// `s` without the separator that follows a bold title (` — `, `:`, ` | `…).
fn strip_sep(s: &str) -> &str {
    s.trim_start()
        .trim_start_matches(['—', '–', '-', ':', '|'])
        .trim_start()
}

/// The words of `s` joined by single spaces.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A checklist item's box: (ticked, the text after it).
fn checkbox(text: &str) -> Option<(bool, &str)> {
    let t = text.trim_start();
    if let Some(r) = t.strip_prefix("[ ]") {
        return Some((false, r.trim_start()));
    }
    t.strip_prefix("[x]")
        .or_else(|| t.strip_prefix("[X]"))
        .map(|r| (true, r.trim_start()))
}

/// Where the text of a next step is on a line: the byte range of the text after `Next:`
/// (or `Next step:`), when the line is one — as read (`→ Next: Go`) or as written in the
/// file (`  → **Next:** Go`, `- Next step: Go`). Before `Next` only spaces, list markers,
/// emphasis and arrows (`→ ➜ ➔ ⇒ -> =>`) may stand; `Next` is matched in any case.
pub(crate) fn next_step(line: &str) -> Option<std::ops::Range<usize>> {
    let lower = line.to_ascii_lowercase();
    let k = lower.find("next")?;
    if !line[..k]
        .chars()
        .all(|c| c.is_whitespace() || "→➜➔⇒-=>*+_".contains(c))
    {
        return None;
    }
    let b = line.as_bytes();
    let mut j = k + 4;
    if lower[j..].starts_with(" step") {
        j += 5;
    }
    while j < b.len() && (b[j] == b'*' || b[j] == b'_') {
        j += 1;
    }
    if b.get(j) != Some(&b':') {
        return None;
    }
    j += 1;
    while j < b.len() && (b[j] == b'*' || b[j] == b'_') {
        j += 1;
    }
    while j < b.len() && (b[j] == b' ' || b[j] == b'\t') {
        j += 1;
    }
    let end = line.trim_end().len().max(j);
    Some(j..end)
}

/// Reads the threads of a thread list from a note's blocks.
///
/// A priority heading (`## High`; a level-1 or deeper heading only when it is a lone
/// priority word or no priority is set yet) starts a section. Every other heading below
/// level 1 is a thread (a level-2 one with no section); a list item at the top level is a
/// thread when it opens with bold text, or when it is not under a heading-style thread.
/// What follows a thread, up to the next thread or heading, is its text.
pub(crate) fn read_threads(blocks: &[Block]) -> ThreadList {
    let mut list = ThreadList::default();
    let mut section: Option<usize> = None;
    // Whether a thread is open, and the level of its heading (0 for a list item).
    let mut current = false;
    let mut current_level = 0u8;
    let close = |list: &mut ThreadList, line: usize, current: &mut bool| {
        if *current {
            if let Some(t) = list.threads.last_mut() {
                t.until = Some(line);
            }
        }
        *current = false;
    };
    for (i, b) in blocks.iter().enumerate() {
        let line = b.line as usize;
        match b.kind {
            BlockKind::Heading(level) => {
                list.headings.push((line, level));
                let rank = priority_rank(&b.text);
                let as_priority =
                    rank.filter(|_| level >= 2 || b.text.split_whitespace().count() == 1);
                if as_priority.is_some()
                    && (level <= 2 || section.is_none())
                    && (level <= 2 || !current)
                {
                    close(&mut list, line, &mut current);
                    list.sections.push(ThreadSection {
                        name: one_line(&b.text),
                        rank: as_priority.unwrap_or(2),
                        line,
                        level,
                    });
                    section = Some(list.sections.len() - 1);
                    continue;
                }
                close(&mut list, line, &mut current);
                if level <= 1 {
                    continue;
                }
                if level == 2 {
                    // A level-2 heading that is no priority: a thread without a section.
                    section = None;
                }
                list.threads.push(ListedThread {
                    title: one_line(&b.text),
                    line,
                    level,
                    section,
                    checkbox: None,
                    rest: String::new(),
                    block: i,
                    body: Vec::new(),
                    until: None,
                    next: None,
                });
                current = true;
                current_level = level;
            }
            BlockKind::ListItem
                if b.depth <= 1
                    && (b.strong_prefix.is_some() || !current || current_level == 0) =>
            {
                let first = b.text.lines().next().unwrap_or("");
                let (ticked, first) = match checkbox(first) {
                    Some((t, r)) => (Some(t), r),
                    None => (None, first),
                };
                let (title, rest) = item_title(first, b.strong_prefix.as_deref());
                if title.is_empty() {
                    continue;
                }
                close(&mut list, line, &mut current);
                let rest = rest.to_string();
                let next = next_step(&rest).map(|r| (rest[r].to_string(), line));
                list.threads.push(ListedThread {
                    title,
                    line,
                    level: 0,
                    section,
                    checkbox: ticked,
                    rest,
                    block: i,
                    body: Vec::new(),
                    until: None,
                    next,
                });
                current = true;
                current_level = 0;
                // The item's further lines.
                next_in(&mut list, b, 1);
            }
            _ => {
                if current {
                    if let Some(t) = list.threads.last_mut() {
                        t.body.push(i);
                    }
                    next_in(&mut list, b, 0);
                }
            }
        }
    }
    list
}

/// Takes the first next step of block `b` (from its line `skip` on) for the last thread.
fn next_in(list: &mut ThreadList, b: &Block, skip: usize) {
    let Some(t) = list.threads.last_mut() else {
        return;
    };
    if t.next.as_ref().is_some_and(|(n, _)| !n.is_empty()) {
        return;
    }
    for (k, l) in b.text.lines().enumerate().skip(skip) {
        if let Some(r) = next_step(l) {
            let text = l[r].trim().to_string();
            if !text.is_empty() {
                t.next = Some((text, b.line as usize + k));
                return;
            }
            if t.next.is_none() {
                t.next = Some((String::new(), b.line as usize + k));
            }
        }
    }
}

/// One checkbox of a checklist (a quest log: `- [ ] Destroy Strahd`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CheckItem {
    /// Whether the box is ticked.
    pub done: bool,
    /// Whether it is a top-level item (a storyline; deeper ones are its steps).
    pub top: bool,
    /// The title of a top-level item ([`item_title`], as a thread list's items).
    pub title: String,
    /// The rest of its first line after the title.
    pub rest: String,
    /// Its whole text on one line (for a step).
    pub text: String,
    /// 1-based file line.
    pub line: usize,
}

/// The checkboxes of a checklist, in order; `None` with fewer than `min` (at least one).
/// Top-level items are those at the shallowest depth any box has.
pub(crate) fn read_checklist(blocks: &[&Block], min: usize) -> Option<Vec<CheckItem>> {
    let boxes: Vec<u16> = blocks
        .iter()
        .filter(|b| b.checkbox().is_some())
        .map(|b| b.depth)
        .collect();
    if boxes.len() < min.max(1) {
        return None;
    }
    let top = boxes.iter().copied().min().unwrap_or(0);
    let items = blocks
        .iter()
        .filter_map(|b| {
            let (done, text) = b.checkbox()?;
            let first = text.lines().next().unwrap_or("");
            let (title, rest) = item_title(first, b.strong_prefix.as_deref());
            let tail: Vec<&str> = text.lines().skip(1).collect();
            let rest = one_line(&format!("{rest} {}", tail.join(" ")));
            Some(CheckItem {
                done,
                top: b.depth == top,
                title,
                rest,
                text: one_line(text),
                line: b.line as usize,
            })
        })
        .collect();
    Some(items)
}

/// Whether a line of a thread's text is a next step, and its text (for summaries).
pub(crate) fn next_text(line: &str) -> Option<&str> {
    next_step(line).map(|r| line[r].trim())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case::bold_colon("The Debt: Vane owes", Some("The Debt:"), "The Debt", "Vane owes")]
    #[case::bold_dash("The Pass — posted", Some("The Pass"), "The Pass", "posted")]
    #[case::colon_then_dash(
        "A Bell: rings twice — at noon",
        None,
        "A Bell",
        "rings twice — at noon"
    )]
    #[case::dash_then_colon("A Bell - rings: twice", None, "A Bell", "rings: twice")]
    #[case::bare("Just a title", None, "Just a title", "")]
    #[case::bold_inside("Vane's Ledger — pages", None, "Vane's Ledger", "pages")]
    fn item_titles(
        #[case] first: &str,
        #[case] strong: Option<&str>,
        #[case] title: &str,
        #[case] rest: &str,
    ) {
        assert_eq!(item_title(first, strong), (title.to_string(), rest));
    }

    #[rstest]
    #[case::plain("Next: Go", Some("Go"))]
    #[case::arrow("→ Next: Go now", Some("Go now"))]
    #[case::raw_bold("  - **Next:** Go", Some("Go"))]
    #[case::step("-> Next step: Go", Some("Go"))]
    #[case::empty("Next:", Some(""))]
    #[case::not_next("Next session: Go", None)]
    #[case::inside("We go Next: there", None)]
    fn next_steps(#[case] line: &str, #[case] want: Option<&str>) {
        assert_eq!(next_step(line).map(|r| &line[r]), want);
    }

    #[test]
    fn title_keys() {
        assert_eq!(title_key("**[[Vane]]'s  Ledger**"), "vane's ledger");
        assert_eq!(title_key("[[people/vane|Vane]]"), "vane");
        assert_eq!(title_key("[[people/vane]]"), "vane");
    }
}
