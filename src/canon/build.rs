//! Building the campaign from a loaded vault.

use super::files::{CanonFiles, TemporalFile};
use super::keys;
use super::kind::{self, kind_of, NoteKind};
use super::model::*;
use super::text::{self, Clean};
use super::{OPEN_THREADS, OWN_CLOCK, TEMPORAL_INDEX, TIMELINE};
use crate::config::Config;
use crate::vault::frontmatter::{value_int, MAX_FRONTMATTER_BYTES};
use crate::vault::links::{as_single_link, leading_link, norm_key};
use crate::vault::markdown::{Block, BlockKind};
use crate::vault::period;
use crate::vault::placeholder;
use crate::vault::yaml;
use crate::vault::Code;
use crate::vault::{Diagnostic, Note, Resolution, Severity, Vault};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// A built campaign with the problems found while typing it.
#[derive(Debug, Clone)]
pub struct Built {
    /// The campaign, shared with the context engines made from it: a running chat or
    /// server holds one copy of canon, not one per holder (live reload updates it in place
    /// when nothing else holds it, and copies it first when a table or a request still
    /// does).
    pub campaign: std::sync::Arc<Campaign>,
    /// Canon-level problems (bad values, unknown locations, duplicates…).
    pub diagnostics: Vec<Diagnostic>,
    /// The kind decided for each note (same order as the vault's notes).
    pub kinds: Vec<NoteKind>,
}

/// Title-cases a folder name: `my-campaign` -> `My Campaign`.
pub fn title_case(s: &str) -> String {
    s.split(|c: char| c == '-' || c == '_' || c.is_whitespace())
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
                None => String::new(),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

struct Ctx<'a> {
    vault: &'a Vault,
    kinds: &'a [NoteKind],
    diags: Vec<Diagnostic>,
}

impl Ctx<'_> {
    fn int(&mut self, note: &Note, keys: &[&str], what: &str) -> Option<i64> {
        let (key, v) = note.frontmatter.get(keys)?;
        match value_int(v) {
            Ok(n) => n,
            Err(text) => {
                self.diags.push(Diagnostic::error(
                    &note.path,
                    note.frontmatter.line_of(key),
                    Code::BadValue,
                    format!("`{key}: {text}` is not a number ({what}); it was ignored"),
                ));
                None
            }
        }
    }

    /// Resolves a location-like reference to a location id; unresolved: diagnostic.
    fn place(&mut self, note: &Note, keys: &[&str]) -> (Option<String>, Option<String>) {
        let Some((key, _)) = note.frontmatter.get(keys) else {
            return (None, None);
        };
        let Some(raw) = note.frontmatter.text(&[key]) else {
            return (None, None);
        };
        let target = as_single_link(&raw)
            .or_else(|| leading_link(&raw))
            .map_or(raw.clone(), |t| t.note.into());
        let line = note.frontmatter.line_of(key);
        match self.vault.resolve_from(&target, Some(&note.path)) {
            Resolution::Found(i) => {
                if self.kinds[i] == NoteKind::Location {
                    (Some(self.vault.notes[i].path.clone()), None)
                } else {
                    self.diags.push(Diagnostic::warning(
                        &note.path,
                        line,
                        Code::NotALocation,
                        format!(
                            "`{key}: {raw}` resolves to {}, which is not a location note",
                            self.vault.notes[i].path
                        ),
                    ));
                    (None, Some(strip_link(&raw)))
                }
            }
            Resolution::NotFound => {
                self.diags.push(Diagnostic::warning(
                    &note.path,
                    line,
                    Code::UnknownLocation,
                    format!(
                        "`{key}: {raw}` matches no location note (by file name, name or alias)"
                    ),
                ));
                (None, Some(strip_link(&raw)))
            }
            Resolution::Ambiguous(c) => {
                self.diags.push(Diagnostic::warning(
                    &note.path,
                    line,
                    Code::AmbiguousLocation,
                    format!(
                        "`{key}: {raw}` matches {}; use the file name",
                        c.iter()
                            .map(|&i| self.vault.notes[i].path.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
                (None, Some(strip_link(&raw)))
            }
        }
    }
}

fn strip_link(raw: &str) -> String {
    as_single_link(raw).map_or_else(|| raw.to_string(), |t| t.display())
}

/// A note's summary: its first paragraph of prose, else a callout's, else its first
/// bullets ([`crate::vault::markdown::Body::summary`]), as written: every field it fills is
/// [`text::clean`]ed, which makes it one line (reading only as far as the field's cap).
fn first_paragraph(note: &Note) -> Option<String> {
    with_own_summary(note, note.body.summary())
}

/// The GM's own one-line summary in the frontmatter (`summary:`, `description:` …), first,
/// then `rest` (the body's text).
fn with_own_summary(note: &Note, rest: Option<String>) -> Option<String> {
    let own = note
        .frontmatter
        .text(keys::SUMMARY)
        .filter(|s| !s.trim().is_empty() && !crate::vault::placeholder::is_placeholder(s));
    match (own, rest) {
        (Some(a), Some(b)) if !b.starts_with(a.trim_end_matches('.')) => {
            let sep = if a.ends_with(['.', '!', '?']) {
                " "
            } else {
                ". "
            };
            Some(format!("{a}{sep}{b}"))
        }
        (Some(a), _) => Some(a),
        (None, b) => b,
    }
}

/// The words of `s` joined by single spaces (one pass, one allocation).
fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut push = |w: &str| {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    };
    // ASCII whitespace is all `split_whitespace` splits ASCII on, but for VT.
    if s.is_ascii() && !s.as_bytes().contains(&0x0b) {
        s.split_ascii_whitespace().for_each(&mut push);
    } else {
        s.split_whitespace().for_each(&mut push);
    }
    out
}

fn source(note: &Note) -> Source {
    Source::new(&note.path, 1)
}

/// `hp: 17/27` carries both numbers; else the current and max keys apart.
/// The spellings of HP that can only be the current HP.
const CURRENT_ONLY: &[&str] = &["hp_current", "current_hp", "hp_cur"];
/// The plain spellings of HP (current, or on a sheet beside a current one, the maximum).
const PLAIN_HP: &[&str] = &["hp", "hit_points", "hitpoints"];

fn hp_of(cx: &mut Ctx<'_>, note: &Note) -> (Option<i64>, Option<i64>) {
    use super::keys::{HP as HP_KEYS, HP_MAX as MAX_KEYS};
    let (cur, max) = match note.frontmatter.text(HP_KEYS).and_then(|t| hp_pair(&t)) {
        Some((cur, max)) => (Some(cur), cx.int(note, MAX_KEYS, "max HP").or(Some(max))),
        None => {
            let cur = cx.int(note, HP_KEYS, "current HP");
            let mut max = cx.int(note, MAX_KEYS, "max HP");
            // A current HP written beside the sheet's plain `hp` (`hp_current: 43` and
            // `**HP:** 50`, as write-back leaves a note whose HP was a fact line): the plain
            // one is the maximum.
            if max.is_none() && note.frontmatter.text(CURRENT_ONLY).is_some() {
                max = note
                    .frontmatter
                    .text(PLAIN_HP)
                    .and_then(|t| crate::vault::frontmatter::number_and_note(&t).map(|(n, _)| n));
            }
            (cur, max)
        }
    };
    // 42/31 or -18/30: a typo or a write gone wrong, worth a word (the value stays).
    let odd = match (cur, max) {
        (Some(c), Some(m)) if c > m => Some(format!("current HP {c} is above max HP {m}")),
        (Some(c), _) if c < 0 => Some(format!("current HP {c} is below 0")),
        _ => None,
    };
    if let Some(why) = odd {
        let line = note
            .frontmatter
            .get(HP_KEYS)
            .map_or(note.frontmatter.line.max(1), |(k, _)| {
                note.frontmatter.line_of(k).max(1)
            });
        cx.diags.push(Diagnostic::warning(
            &note.path,
            line,
            Code::BadValue,
            format!("{why}; the context shows it as written"),
        ));
    }
    (cur, max)
}

use super::keys::AC as AC_KEYS;

/// Folder names that hold PCs out of play.
fn inactive_folder(path: &str) -> Option<String> {
    let segs: Vec<&str> = path.split('/').collect();
    segs[..segs.len().saturating_sub(1)].iter().find_map(|s| {
        matches!(
            crate::names::folder_word(s).as_str(),
            "retired"
                | "former"
                | "dead"
                | "inactive"
                | "archive"
                | "archived"
                | "graveyard"
                | "fallen"
                | "past"
                | "deceased"
                | "former pcs"
                | "retired pcs"
                | "dead pcs"
        )
        .then(|| s.to_string())
    })
}

fn build_pc(cx: &mut Ctx<'_>, note: &Note) -> Pc {
    let fm = &note.frontmatter;
    let status = fm
        .text(keys::PC_STATUS)
        .or_else(|| status_from_tags(note))
        .unwrap_or_else(|| "active".into());
    let inactive_reason = if let Some(w) = status_in(&status, INACTIVE_PC_STATUSES) {
        Some(format!("status {w}"))
    } else if fm
        .text(&["active"])
        .is_some_and(|a| a == "false" || a == "no")
    {
        Some("active: false".into())
    } else {
        inactive_folder(&note.path).map(|f| format!("in the {f} folder"))
    };
    let active = inactive_reason.is_none();
    let out_by_note = inactive_reason.clone();
    let (location, location_text) = cx.place(note, keys::LOCATION);
    let (hp_current, hp_max) = hp_of(cx, note);
    Pc {
        id: note.path.clone(),
        name: note.name(),
        aliases: note.aliases(),
        sheet: note.is_sheet(),
        class: fm
            .text(&["class", "classes", "klasse", "classe", "clase"])
            .map(|c| strip_link(&c))
            .filter(|c| !c.trim().is_empty()),
        level: cx.int(note, keys::LEVEL, "level"),
        player: fm.text(&["player"]),
        status,
        active,
        inactive_reason,
        out_by_note,
        hp_current,
        hp_max,
        ac: cx.int(note, AC_KEYS, "AC"),
        location,
        location_text,
        gold: cx.int(note, keys::GOLD, "gold"),
        conditions: fm
            .list(keys::CONDITIONS)
            .into_iter()
            .filter(|c| {
                !matches!(
                    c.to_lowercase().as_str(),
                    "none" | "-" | "n/a" | "healthy" | "ok" | "fine"
                )
            })
            .collect(),
        inventory: fm.list(keys::INVENTORY),
        summary: first_paragraph(note),
        source: source(note),
        modified: note.modified,
    }
}

/// A status written as a tag segment (`npc/dead`, `heist/npc/missing`, `#departed`), for
/// GMs who track status with tags instead of a `status:` key.
fn status_from_tags(note: &Note) -> Option<String> {
    note.tags
        .iter()
        .find_map(|t| keys::tag_status(t).map(|(_, s)| s))
}

/// Reads `17/27` (or `17 / 27`) as current and max HP.
fn hp_pair(t: &str) -> Option<(i64, i64)> {
    let (a, b) = t.split_once('/')?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

fn bullets(blocks: &[&Block], n: usize) -> Vec<String> {
    blocks
        .iter()
        .filter(|b| b.kind == BlockKind::ListItem || b.kind == BlockKind::Paragraph)
        .map(|b| one_line(&b.text))
        .filter(|t| !t.is_empty())
        .take(n)
        .collect()
}

/// An NPC's role with the group they belong to: `mage, Gentle Bandits`.
fn npc_role(note: &Note) -> Option<String> {
    let fm = &note.frontmatter;
    let filled = |v: String| {
        let v = strip_link(v.trim());
        (!v.is_empty() && !crate::vault::placeholder::is_placeholder(&v)).then_some(v)
    };
    let role = fm.text(keys::ROLE).and_then(filled);
    let faction = fm.list(keys::FACTION).into_iter().find_map(filled);
    match (role, faction) {
        (Some(r), Some(f)) if !r.contains(&f) => Some(format!("{r}, {f}")),
        (r, f) => r.or(f),
    }
}

fn build_npc(cx: &mut Ctx<'_>, note: &Note) -> Npc {
    let fm = &note.frontmatter;
    let voice = match fm.text(&["voice"]) {
        Some(v) => vec![v],
        None => note
            .body
            .section_blocks(&NPC_SECTIONS[..1])
            .or_else(|| note.body.section_blocks(&NPC_SECTIONS[1..]))
            .map(|b| bullets(&b, 2))
            .unwrap_or_default(),
    };
    let (location, location_text) = cx.place(note, keys::LOCATION);
    let status = fm
        .text(keys::NPC_STATUS)
        .map(|s| match s.to_lowercase().as_str() {
            // `Alive: Yes` / `alive: false` as GMs write them.
            "yes" | "true" => "alive".to_string(),
            "no" | "false" => "dead".to_string(),
            _ => s,
        })
        .or_else(|| status_from_tags(note))
        .unwrap_or_else(|| "active".into());
    let (mut hp_current, mut hp_max) = hp_of(cx, note);
    let mut ac = cx.int(note, AC_KEYS, "AC");
    // A Fantasy Statblocks block in the body: `hp` and `ac` when the frontmatter has none.
    for (block, _) in &note.body.statblocks {
        if block.len() > MAX_FRONTMATTER_BYTES {
            continue;
        }
        if let Ok(yaml::Value::Map(m)) = yaml::parse(block) {
            let get = |k: &str| m.get(k).and_then(|v| value_int(v).ok().flatten());
            // The statblock's `hp` is the maximum; the current HP, once write-back has
            // set one, is the frontmatter's (`hp_current:` beside the block).
            if hp_max.is_none() {
                hp_max = get("hp");
                if hp_current.is_none() {
                    hp_current = hp_max;
                } else if let (Some(c), Some(m)) = (hp_current, hp_max) {
                    if c > m {
                        cx.diags.push(Diagnostic::warning(
                            &note.path,
                            note.frontmatter
                                .get(keys::HP)
                                .map_or(1, |(k, _)| note.frontmatter.line_of(k).max(1)),
                            Code::BadValue,
                            format!("current HP {c} is above the statblock's hp {m}; the context shows it as written"),
                        ));
                    }
                }
            }
            ac = ac.or_else(|| get("ac"));
        }
    }
    if voice.is_empty() && !is_absent_status(&status) {
        cx.diags.push(Diagnostic::new(
            &note.path,
            note.frontmatter.line.max(1),
            Severity::Info,
            Code::NoVoice,
            "NPC has no voice: add `voice:` or a `## Personality` list whose first bullets say how they talk",
        ));
    }
    Npc {
        id: note.path.clone(),
        name: note.name(),
        aliases: note.aliases(),
        role: npc_role(note),
        status,
        disposition: fm.text(keys::DISPOSITION).or_else(|| {
            note.tags
                .iter()
                .find_map(|t| keys::tag_disposition(t).map(|(_, d)| d))
        }),
        location,
        location_text,
        hp_current,
        hp_max,
        ac,
        voice,
        summary: first_paragraph(note),
        source: source(note),
    }
}

fn build_location(cx: &mut Ctx<'_>, note: &Note) -> Location {
    let description = note
        .body
        .section_blocks(PLACE_SECTIONS)
        .and_then(|b| {
            b.iter()
                .find(|b| {
                    b.kind == BlockKind::Paragraph
                        && b.prose
                        && b.callout.is_none()
                        && !crate::vault::placeholder::is_placeholder(&b.text)
                })
                .map(|b| one_line(&b.text))
        })
        // An empty `## Description`: the first prose anywhere, else the first bullets
        // (the facts under `## Notes`).
        .or_else(|| note.body.summary());
    let description = with_own_summary(note, description);
    let kind = note
        .frontmatter
        .text(&["type", "kind"])
        .filter(|t| !matches!(t.to_lowercase().as_str(), "location" | "place"));
    let (parent, _) = cx.place(note, keys::PARENT);
    Location {
        id: note.path.clone(),
        name: note.name(),
        aliases: note.aliases(),
        kind,
        parent,
        description,
        source: source(note),
    }
}

fn add_lines(t: &mut Thread, lines: &str) {
    for l in lines.lines() {
        let l = l.trim();
        if l.is_empty() {
            continue;
        }
        match crate::vault::threads::next_text(l) {
            Some(n) => {
                if t.next.is_none() && !n.is_empty() {
                    t.next = Some(n.to_string());
                }
            }
            None => t.summary.push(l.to_string()),
        }
    }
}

/// The threads of a thread list (`canon/open-threads.md`), as `vault::threads` reads them:
/// the one reading write-back edits them through.
fn parse_threads(note: &Note, diags: &mut Vec<Diagnostic>) -> Vec<Thread> {
    let blocks = &note.body.blocks;
    let list = crate::vault::threads::read_threads(blocks);
    let mut warned_section: Option<u32> = None;
    let mut out = Vec::with_capacity(list.threads.len());
    let ranks: Vec<Option<usize>> = list.threads.iter().map(|t| t.rank(&list)).collect();
    for (lt, rank) in list.threads.into_iter().zip(ranks) {
        let own = &blocks[lt.block];
        let priority = match rank {
            Some(r) => Priority::parse(PRIORITY_WORDS[r]).unwrap_or(Priority::Medium),
            None => {
                if warned_section != Some(own.section) {
                    diags.push(Diagnostic::warning(
                        &note.path,
                        lt.line,
                        Code::ThreadNoPriority,
                        format!("thread \"{}\" is not under an Urgent/High/Medium/Low/Resolved heading; treated as medium", lt.title),
                    ));
                    warned_section = Some(own.section);
                }
                Priority::Medium
            }
        };
        let mut t = Thread {
            id: format!("{}#{}", note.path, lt.title),
            title: lt.title,
            aliases: vec![],
            priority,
            summary: vec![],
            next: None,
            source: Source::new(&note.path, lt.line),
        };
        if lt.level == 0 {
            add_lines(&mut t, &lt.rest);
            let tail: Vec<&str> = own.text.lines().skip(1).collect();
            add_lines(&mut t, &tail.join("\n"));
        }
        for &i in &lt.body {
            add_lines(&mut t, &blocks[i].text);
        }
        out.push(t);
    }
    out
}

/// A priority rank's word.
const PRIORITY_WORDS: [&str; 5] = ["urgent", "high", "medium", "low", "resolved"];

/// Folder names that hold finished quests.
fn closed_folder(path: &str) -> bool {
    let segs: Vec<&str> = path.split('/').collect();
    segs[..segs.len().saturating_sub(1)].iter().any(|s| {
        let w = crate::names::folder_word(s);
        matches!(
            w.as_str(),
            "completed"
                | "complete"
                | "resolved"
                | "done"
                | "closed"
                | "finished"
                | "failed"
                | "archive"
                | "archived"
                | "completed missions"
                | "completed quests"
                | "finished quests"
                | "old quests"
        )
    })
}

/// A quest log kept as a checklist (`Quests.md`: `- [ ] Destroy Strahd`, `- [x] Return the
/// skull`): each open top-level item is a storyline, its open sub-items the next steps; a
/// ticked item is done. `None` for a note with fewer than two checkboxes (one quest).
fn quest_list(note: &Note) -> Option<Vec<Thread>> {
    let blocks: Vec<&Block> = note.body.blocks.iter().collect();
    checklist_threads(note, &blocks, 2)
}

/// Headings under which a home or index note keeps the party's open quests as a checklist.
const QUEST_SECTIONS: &[&str] = &[
    "current objectives",
    "objectives",
    "current quests",
    "active quests",
    "open quests",
    "quests",
    "party goals",
    "goals",
    "open threads",
    "aufgaben",
    "quêtes",
    "misiones",
    "missioni",
];

/// The open quests a home or index note lists as a checklist under `## Current Objectives`
/// (or another [`QUEST_SECTIONS`] heading), as [`quest_list`] reads a whole quest log.
fn quest_section(note: &Note) -> Option<Vec<Thread>> {
    let blocks = note.body.section_blocks(QUEST_SECTIONS)?;
    checklist_threads(note, &blocks, 1).filter(|t| !t.is_empty())
}

/// The storylines of a checklist, as `vault::threads::read_checklist` reads it (titles by
/// the rule of thread lists): one per open top-level item, its open sub-items the next step
/// and the summary. `None` with fewer than `min` checkboxes.
fn checklist_threads(note: &Note, blocks: &[&Block], min: usize) -> Option<Vec<Thread>> {
    let items = crate::vault::threads::read_checklist(blocks, min)?;
    let mut out: Vec<Thread> = Vec::new();
    let mut open = false;
    for c in items {
        if c.top {
            open = !c.done && !c.title.is_empty();
            if open {
                out.push(Thread {
                    id: format!("{}#{}", note.path, c.title),
                    title: c.title,
                    aliases: vec![],
                    priority: Priority::Medium,
                    summary: (!c.rest.is_empty()).then_some(c.rest).into_iter().collect(),
                    next: None,
                    source: Source::new(&note.path, c.line),
                });
            }
        } else if open && !c.done {
            if let Some(t) = out.last_mut() {
                if t.next.is_none() {
                    t.next = Some(c.text);
                } else {
                    t.summary.push(c.text);
                }
            }
        }
    }
    Some(out)
}

fn build_thread_note(note: &Note, diags: &mut Vec<Diagnostic>) -> Thread {
    let fm = &note.frontmatter;
    let status = fm.text(keys::THREAD_STATUS);
    // A closing status wins over any priority: a resolved quest is never injected.
    let closed = status
        .as_deref()
        .and_then(Priority::parse)
        .filter(|p| *p == Priority::Resolved)
        .is_some()
        || fm
            .text(&[
                "completed",
                "complete",
                "done",
                "resolved",
                "finished",
                "closed",
            ])
            .is_some_and(|v| matches!(v.to_lowercase().as_str(), "true" | "yes" | "x"))
        || fm
            .text(&["active", "open"])
            .is_some_and(|v| matches!(v.to_lowercase().as_str(), "false" | "no"))
        || note.tags.iter().any(|t| {
            t.split('/')
                .any(|seg| Priority::parse(seg) == Some(Priority::Resolved))
        })
        || closed_folder(&note.path);
    let priority = if closed {
        Some(Priority::Resolved)
    } else {
        fm.text(keys::PRIORITY)
            .and_then(|p| Priority::parse(&p))
            .or_else(|| status.as_deref().and_then(Priority::parse))
    };
    let priority = priority.unwrap_or_else(|| {
        // An open quest without a priority is ordinary: medium, said quietly.
        let (sev, msg) = if status.is_some() {
            (
                Severity::Info,
                "quest has no `priority:` (urgent, high, medium, low); treated as medium",
            )
        } else {
            (
                Severity::Warning,
                "thread note has no `priority:` (urgent, high, medium, low or resolved); treated as medium",
            )
        };
        diags.push(Diagnostic::new(
            &note.path,
            note.frontmatter.line_of("priority"),
            sev,
            Code::ThreadNoPriority,
            msg,
        ));
        Priority::Medium
    });
    let mut t = Thread {
        id: note.path.clone(),
        title: note.name(),
        aliases: note.aliases(),
        priority,
        summary: fm
            .text(&["summary", "synopsis", "description"])
            .into_iter()
            .collect(),
        next: fm.text(&["next", "next_step", "next step"]),
        source: source(note),
    };
    for b in &note.body.blocks {
        if matches!(b.kind, BlockKind::Heading(_)) {
            continue;
        }
        let keep_summary = !t.summary.is_empty();
        let before = t.summary.len();
        add_lines(&mut t, &b.text);
        if keep_summary {
            t.summary.truncate(before);
        }
    }
    t
}

fn day_of_heading(h: &str) -> Option<i64> {
    period::day(h).map(|(d, _)| d)
}

/// Which note is the campaign's timeline: the one rule the context reads its recent events
/// by and write-back (`/event`) appends by. `canon/timeline.md` when there is one; else, of
/// the notes read as timelines, the first by
/// 1. a name that is the timeline's (`Timeline`, `Campaign Timeline`: a file name that is or
///    ends with "timeline"),
/// 2. `type: timeline` in its frontmatter,
/// 3. `Day N` headings (days of play, not a calendar of the world),
/// 4. path order.
///
/// A reference note only tagged `#timeline` (a city's holidays, a history page) loses to
/// any of those and is read as lore. Returns the note and the others that were candidates.
pub fn campaign_timeline(vault: &Vault, kinds: &[NoteKind]) -> Option<(usize, Vec<usize>)> {
    if let Some(i) = vault.note_index(TIMELINE) {
        return Some((i, Vec::new()));
    }
    let rank = |note: &Note| {
        let stem = note.stem.to_lowercase();
        let named = stem.trim() == "timeline" || stem.trim_end().ends_with("timeline");
        let declared = note
            .frontmatter
            .text(&["type"])
            .is_some_and(|t| t.trim().eq_ignore_ascii_case("timeline"));
        let headings = || {
            note.body
                .blocks
                .iter()
                .filter(|b| matches!(b.kind, BlockKind::Heading(_)))
        };
        let days = headings().any(|b| period::day(&b.text).is_some());
        // Dated headings (`## 1499`, `## Year 3`) hold events the reader can read; a page
        // whose events are in embedded HTML or a plugin's block has none.
        let dated = headings().any(|b| period::of_heading(&b.text) == period::Period::Dated);
        std::cmp::Reverse((named, declared, days, dated))
    };
    let mut candidates: Vec<usize> = (0..vault.notes.len())
        .filter(|&i| kinds.get(i) == Some(&NoteKind::Timeline))
        .collect();
    // Stable: equal ranks stay in path order.
    candidates.sort_by_key(|&i| rank(&vault.notes[i]));
    let first = *candidates.first()?;
    Some((first, candidates[1..].to_vec()))
}

/// Header cells of a timeline table (`| Day | Event |`), not an event.
fn is_header_cell(c: &str) -> bool {
    matches!(
        c.trim().to_lowercase().as_str(),
        "" | "day"
            | "date"
            | "when"
            | "event"
            | "events"
            | "what happened"
            | "description"
            | "hyperlink"
            | "link"
            | "items found"
            | "session"
            | "notes"
            | "note"
            | "---"
    )
}

/// A timeline: `canon/timeline.md` (strict: `## Day N` headings and bullets), or a note named
/// Timeline anywhere (`lenient`: any heading is a moment — `## Day 12 — Market day`,
/// `## 24 Calistril 4710`, `# The Possession` — and bullets, table rows or, under a heading
/// with neither, the first sentence of each paragraph are its events).
fn parse_timeline(note: &Note, diags: &mut Vec<Diagnostic>, lenient: bool) -> Vec<Event> {
    let mut out = Vec::new();
    // The current moment: (day number, label, whether the day is a real day number).
    let mut at: Option<(i64, String, bool)> = None;
    let mut day_level = 0u8;
    let mut ordinal = 0i64;
    // Paragraph events wait until the heading turns out to have no bullets or rows.
    let mut paragraphs: Vec<Event> = Vec::new();
    let mut listed = false;
    let flush = |out: &mut Vec<Event>, paragraphs: &mut Vec<Event>, listed: bool| {
        if !listed {
            out.extend(paragraphs.drain(..).take(3));
        }
        paragraphs.clear();
    };
    for b in &note.body.blocks {
        let event = |day: i64, when: &str, numbered: bool, text: String| Event {
            day,
            when: when.to_string(),
            numbered,
            text,
            source: Source::new(&note.path, b.line as usize),
        };
        match b.kind {
            BlockKind::Heading(level) => {
                if let Some(d) = day_of_heading(&b.text) {
                    flush(&mut out, &mut paragraphs, listed);
                    listed = false;
                    at = Some((d, format!("Day {d}"), true));
                    day_level = level;
                } else if lenient && period::is_aside(&b.text) {
                    // `## Open Mysteries`, `## Notes`: what is not known yet is no event.
                    flush(&mut out, &mut paragraphs, listed);
                    listed = false;
                    at = None;
                    day_level = level;
                } else if lenient && level >= 1 && !b.text.trim().is_empty() {
                    flush(&mut out, &mut paragraphs, listed);
                    listed = false;
                    ordinal += 1;
                    at = Some((ordinal, one_line(&b.text), false));
                    day_level = level;
                } else if level <= day_level {
                    at = None;
                }
            }
            BlockKind::ListItem if lenient && b.text.trim_end().ends_with('?') => {}
            BlockKind::ListItem => match &at {
                Some((d, when, n)) => {
                    listed = true;
                    out.push(event(*d, when, *n, one_line(&b.text)));
                }
                None if lenient => {}
                None => diags.push(Diagnostic::warning(
                    &note.path,
                    b.line as usize,
                    Code::EventNoDay,
                    "timeline event is not under a `## Day N` heading; it was ignored",
                )),
            },
            BlockKind::TableRow => {
                let cells: Vec<&str> = b.text.split(" | ").map(str::trim).collect();
                if cells.iter().all(|c| is_header_cell(c)) {
                    continue;
                }
                let (first, rest) = (cells[0], cells[1..].join(" — "));
                if let Some(d) = day_of_heading(first) {
                    listed = true;
                    out.push(event(d, &format!("Day {d}"), true, one_line(&rest)));
                } else if lenient && !rest.trim_matches([' ', '—']).is_empty() {
                    listed = true;
                    ordinal += 1;
                    let when = if first.is_empty() {
                        at.as_ref().map_or_else(String::new, |a| a.1.clone())
                    } else {
                        first.to_string()
                    };
                    out.push(event(ordinal, &when, false, one_line(&rest)));
                } else if let Some((d, when, n)) = &at {
                    listed = true;
                    out.push(event(*d, when, *n, one_line(&b.text)));
                }
            }
            BlockKind::Paragraph if lenient => {
                if let Some((d, when, n)) = &at {
                    let text = text::first_sentence(&one_line(&b.text)).to_string();
                    if !text.is_empty() {
                        paragraphs.push(event(*d, when, *n, text));
                    }
                }
            }
            _ => {}
        }
    }
    flush(&mut out, &mut paragraphs, listed);
    out
}

/// Where the campaign keeps its current day — the one rule the build reads the clock by and
/// write-back writes it by: `canon/temporal-index.json` when the vault has one; else the
/// first campaign or party note (by path) whose frontmatter has a [`keys::CLOCK_DAY`] key; else
/// the temporal index in vaultdm's own layout (a `canon/` folder); else vaultdm's own
/// `.vaultdm/clock.json`, so a vault that keeps no clock never gets a `canon/` folder.
pub fn clock_home(vault: &Vault, kinds: &[NoteKind], files: &CanonFiles) -> ClockHome {
    if files.temporal != TemporalFile::Missing {
        return ClockHome::TemporalIndex;
    }
    for (i, note) in vault.notes.iter().enumerate() {
        let declared = note
            .frontmatter
            .text(&["type"])
            .is_some_and(|t| matches!(t.trim().to_lowercase().as_str(), "campaign" | "world"));
        let keys: &[&str] = match kinds.get(i) {
            Some(NoteKind::Party) => keys::CLOCK_DAY,
            _ if declared => keys::CLOCK_DAY,
            Some(NoteKind::Meta | NoteKind::Lore) => &keys::CLOCK_DAY[..7],
            _ => continue,
        };
        let Some((key, value)) = note.frontmatter.get(keys) else {
            continue;
        };
        let date = match day_number(value) {
            Some(_) => None,
            None => crate::vault::frontmatter::value_text(value),
        };
        return ClockHome::Note {
            path: note.path.clone(),
            day_key: key.to_string(),
            time_key: note
                .frontmatter
                .get(keys::CLOCK_TIME)
                .map(|(k, _)| k.to_string()),
            date,
        };
    }
    if files.canon_folder {
        ClockHome::TemporalIndex
    } else {
        ClockHome::Own
    }
}

/// A day number as a clock field holds it: `12`, `"12"`, `Day 12`.
fn day_number(v: &yaml::Value) -> Option<i64> {
    match v {
        yaml::Value::Int(n) => Some(*n),
        yaml::Value::String(s) => {
            let t = s.trim();
            t.parse().ok().or_else(|| {
                period::day(t)
                    .filter(|(_, rest)| rest.trim().is_empty())
                    .map(|(d, _)| d)
            })
        }
        _ => None,
    }
}

/// The current day and time from where the campaign keeps them ([`clock_home`]).
fn read_clock(
    vault: &Vault,
    home: &ClockHome,
    files: &CanonFiles,
    diags: &mut Vec<Diagnostic>,
) -> (Option<i64>, Option<String>) {
    match home {
        ClockHome::TemporalIndex => parse_temporal(TEMPORAL_INDEX, &files.temporal, files, diags),
        ClockHome::Own => parse_temporal(OWN_CLOCK, &files.clock, files, diags),
        ClockHome::Note {
            path,
            day_key,
            time_key,
            ..
        } => {
            let Some(note) = vault.note_index(path).map(|i| &vault.notes[i]) else {
                return (None, None);
            };
            let day = note
                .frontmatter
                .get(&[day_key.as_str()])
                .and_then(|(_, v)| day_number(v));
            let time = time_key
                .as_deref()
                .and_then(|k| note.frontmatter.text(&[k]))
                .filter(|t| !t.trim().is_empty());
            (day, time)
        }
    }
}

fn parse_temporal(
    path: &str,
    file: &TemporalFile,
    files: &CanonFiles,
    diags: &mut Vec<Diagnostic>,
) -> (Option<i64>, Option<String>) {
    let text = match file {
        TemporalFile::Text(t) => t,
        TemporalFile::Missing if path == OWN_CLOCK => {
            diags.push(Diagnostic::new(
                ".",
                0,
                Severity::Info,
                Code::NoTemporalIndex,
                "no in-game clock: the latest timeline day is used; `/day` keeps one in .vaultdm/clock.json (or keep `current_day:` in the party or campaign note)",
            ));
            return (None, None);
        }
        TemporalFile::Missing => {
            // Without `canon/`, an in-game clock is optional: say so quietly.
            let own_layout = files.canon_folder;
            diags.push(Diagnostic::new(
                TEMPORAL_INDEX,
                0,
                if own_layout { Severity::Warning } else { Severity::Info },
                Code::NoTemporalIndex,
                "missing: create it with {\"current_day\": 1, \"current_time\": \"morning\"}; the latest timeline day is used",
            ));
            return (None, None);
        }
        TemporalFile::Unreadable(e) => {
            diags.push(Diagnostic::error(
                path,
                0,
                Code::TemporalIndex,
                format!("could not read: {e}"),
            ));
            return (None, None);
        }
    };
    let text = text.as_str();
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(m)) => {
            let day = m.get("current_day").or_else(|| m.get("day"));
            let day = match day {
                Some(serde_json::Value::Number(n)) => n.as_i64(),
                Some(serde_json::Value::String(s)) => s
                    .trim()
                    .trim_start_matches(|c: char| !c.is_ascii_digit())
                    .parse()
                    .ok(),
                _ => None,
            };
            if day.is_none() {
                diags.push(Diagnostic::error(
                    path,
                    line_of(text, "current_day"),
                    Code::TemporalIndex,
                    "`current_day` is missing or not a number",
                ));
            }
            let time = m
                .get("current_time")
                .or_else(|| m.get("time"))
                .and_then(|v| {
                    v.as_str()
                        .map(String::from)
                        .or_else(|| (!v.is_null()).then(|| v.to_string()))
                })
                .filter(|s| !s.trim().is_empty());
            (day, time)
        }
        Ok(_) => {
            diags.push(Diagnostic::error(
                path,
                1,
                Code::TemporalIndex,
                "must be a JSON object like {\"current_day\": 6, \"current_time\": \"dusk\"}",
            ));
            (None, None)
        }
        Err(e) => {
            diags.push(Diagnostic::error(
                path,
                e.line(),
                Code::TemporalIndex,
                format!("invalid JSON: {e}"),
            ));
            (None, None)
        }
    }
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .map_or(1, |i| i + 1)
}

/// One note, typed.
// Boxed: one of these is held per note until canon is assembled, and unboxed each would
// take the size of the largest record (megabytes on a big vault, at the process's peak).
enum Typed {
    Pc(Box<Pc>),
    Npc(Box<Npc>),
    Location(Box<Location>),
    Thread(Box<Thread>),
    Lore(Box<Lore>),
    Session(Box<Session>),
    Party(Box<Party>),
    Threads(Vec<Thread>),
    Events(Vec<Event>),
    Nothing,
}

/// The number in `Session 12`, `Session-01-The-Spore-Breach`, `S03E02` … (the first run of
/// digits after the word session, else none).
fn session_number(stem: &str) -> Option<i64> {
    let lower = stem.to_lowercase();
    let Some(rest) = [
        "session", "sitzung", "sesion", "sesión", "séance", "sessione", "sessão",
    ]
    .iter()
    .find_map(|w| lower.split(w).nth(1)) else {
        // `03 - Eulenturm`, `12. The Vault`: a session folder's notes numbered first.
        let digits: String = lower.chars().take_while(char::is_ascii_digit).collect();
        return digits.parse().ok().filter(|_| !looks_like_date(&lower));
    };
    let rest = rest.trim_start_matches([' ', '-', '_', '#', '.']);
    // `Session - 2065-09-01`: a date, not the 2065th session.
    if looks_like_date(rest) {
        return None;
    }
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// A date at the start of a name (`2026-08-13`), not a session number.
fn looks_like_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 8 && b[..4].iter().all(u8::is_ascii_digit) && matches!(b[4], b'-' | b'.' | b'_')
}

/// A note written to prepare a session (in a `Session Prep` folder, or named so), not a
/// record of one.
pub(crate) fn is_prep(path: &str) -> bool {
    path.split('/').any(|seg| {
        let w = crate::names::folder_word(seg.trim_end_matches(".md"));
        w.split(' ').any(|x| {
            matches!(
                x,
                "prep"
                    | "preparation"
                    | "preparations"
                    | "planning"
                    | "plans"
                    | "vorbereitung"
                    | "préparation"
                    | "preparación"
                    | "preparazione"
            )
        })
    })
}

fn build_session(cx: &Ctx<'_>, note: &Note) -> Session {
    let fm = &note.frontmatter;
    let recap = note.body.section_blocks(SESSION_SECTIONS);
    let own = recap.as_ref().and_then(|b| {
        b.iter()
            .find(|b| !b.text.trim().is_empty() && !placeholder::is_placeholder(&b.text))
            .map(|b| one_line(&b.text))
    });
    // A copy of the session template whose recap was never written: not played yet.
    let unplayed = recap.is_some() && own.is_none();
    let (summary, ending) = match own {
        Some(s) => (Some(s), None),
        None => {
            let summary = first_paragraph(note);
            // A log kept as bullets: where it ended, when that is not its opening.
            let ending = note
                .body
                .ending()
                .filter(|e| summary.as_deref().is_none_or(|s| !s.contains(e.as_str())));
            (summary, ending)
        }
    };
    Session {
        id: note.path.clone(),
        name: note.name(),
        number: fm
            .text(&["session_number", "sessionnumber", "number", "session"])
            .and_then(|n| n.trim().parse().ok())
            .or_else(|| session_number(&note.stem)),
        prep: unplayed || is_prep(&note.path),
        date: fm.text(&[
            "date",
            "played",
            "session_date",
            "sessiondate",
            "in_game_date",
            "game_date",
        ]),
        summary,
        ending: ending.map(|e| one_line(&e)),
        pcs: linked_pcs(cx, note),
        last_place: last_place(cx, note),
        source: source(note),
    }
}

/// The location note a note's text links to last (not an embed, not a frontmatter link).
fn last_place(cx: &Ctx<'_>, note: &Note) -> Option<String> {
    note.links
        .iter()
        .filter(|l| !l.embed && !l.in_frontmatter() && !note.body.in_after_matter(l.line))
        .rev()
        .find_map(
            |l| match cx.vault.resolve_from(&l.target.note, Some(&note.path)) {
                Resolution::Found(i) if cx.kinds[i] == NoteKind::Location => {
                    Some(cx.vault.notes[i].path.clone())
                }
                _ => None,
            },
        )
}

/// The PC notes a note links to, in link order, each once.
fn linked_pcs(cx: &Ctx<'_>, note: &Note) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for l in &note.links {
        if let Resolution::Found(i) = cx.vault.resolve_from(&l.target.note, Some(&note.path)) {
            if cx.kinds[i] == NoteKind::Pc {
                let id = cx.vault.notes[i].path.clone();
                if !out.contains(&id) {
                    out.push(id);
                }
            }
        }
    }
    out
}

/// What `check` says when the reading of a PC, NPC, place or group note looks wrong: its
/// kind won against a stronger single sign, or a PC has nothing of a PC but its folder
/// (`kind-doubt`); its `title:` names something else than its file (`title-differs`).
/// Asked for by [`super::Loaded::diagnostics`] (`check`, `watch`), not on every load: a
/// context never shows them.
pub(crate) fn reading_doubts(
    vault: &Vault,
    kinds: &[NoteKind],
    config: &Config,
) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    for (note, kind) in vault.notes.iter().zip(kinds) {
        if matches!(
            kind,
            NoteKind::Pc | NoteKind::Npc | NoteKind::Location | NoteKind::Party
        ) {
            doubts(note, config, &mut diags);
        }
    }
    diags
}

fn doubts(note: &Note, config: &Config, diags: &mut Vec<Diagnostic>) {
    let line = note.frontmatter.line.max(1);
    if let Some(why) = super::kind::doubt(note, &config.folders) {
        diags.push(Diagnostic::warning(&note.path, line, Code::KindDoubt, why));
    }
    if let Some(title) = note.title_alias() {
        let name = note.name();
        diags.push(Diagnostic::warning(
            &note.path,
            note.frontmatter.line_of("title").max(1),
            Code::TitleDiffers,
            format!(
                "`title: {title}` is not the file's name: as in Obsidian, the note is {name} and `{title}` is matched as another name; rename the file if `{title}` is what players call it"
            ),
        ));
    }
}

/// A party note: its members are the PC notes it links to (frontmatter `members:` or any
/// link in the body).
fn build_party(cx: &Ctx<'_>, note: &Note) -> Party {
    Party {
        id: note.path.clone(),
        name: note.name(),
        aliases: note.aliases(),
        members: linked_pcs(cx, note),
        source: source(note),
    }
}

/// More active PCs than a table seats: the vault holds several tables' characters.
const TABLE_SIZE: usize = 6;

/// With more active PCs than one table seats and no groups to tell them apart, the PCs the
/// latest session notes link to are the ones in play (the others leave the party line, with
/// the reason).
fn sessions_party(c: &mut Campaign) {
    let active = c.pcs.iter().filter(|p| p.active).count();
    if active <= TABLE_SIZE {
        return;
    }
    let mut sessions: Vec<&Session> = c.sessions.iter().filter(|s| !s.pcs.is_empty()).collect();
    sessions.sort_by(|a, b| {
        (b.number, b.date.as_deref(), &b.id).cmp(&(a.number, a.date.as_deref(), &a.id))
    });
    let latest: Vec<&Session> = sessions.into_iter().take(3).collect();
    let mut members: Vec<String> = Vec::new();
    for s in &latest {
        for p in &s.pcs {
            if !members.contains(p) && c.pcs.iter().any(|pc| &pc.id == p && pc.active) {
                members.push(p.clone());
            }
        }
    }
    if members.is_empty() || members.len() >= active {
        return;
    }
    let names: Vec<&str> = latest.iter().map(|s| s.name.as_str()).collect();
    let why = format!(
        "the PCs linked from the latest sessions ({})",
        names.join(", ")
    );
    for p in c
        .pcs
        .iter_mut()
        .filter(|p| p.active && !members.contains(&p.id))
    {
        p.active = false;
        p.inactive_reason = Some(format!("not in the latest sessions ({})", names.join(", ")));
    }
    c.parties.push(Party {
        id: "(latest sessions)".into(),
        name: "the PCs of the latest sessions".into(),
        aliases: vec![],
        members,
        source: latest[0].source.clone(),
    });
    c.active_party = Some((c.parties.len() - 1, why));
}

/// The campaign-wide pass after every note is typed (the full build and the incremental
/// reload both run it over the whole campaign): which group of PCs is in play, and which
/// PCs in play cannot be placed in a scene (`no-location` warnings).
pub(crate) fn settle(c: &mut Campaign, vault: &Vault, config: &Config) -> Vec<Diagnostic> {
    settle_parties(c, config);
    let mut diags = Vec::new();
    let active: Vec<&Pc> = c.pcs.iter().filter(|p| p.active).collect();
    if active.is_empty() && !vault.notes.is_empty() {
        diags.push(Diagnostic::warning(
            ".",
            0,
            Code::NoParty,
            if c.pcs.is_empty() {
                "no PC found: every context has an empty party; mark the PC notes with `type: pc`, a `pc` tag or a PCs/Players folder (`vaultdm check --explain-types` shows how each note was read)".to_string()
            } else {
                format!(
                    "none of the {} PCs is in play ({}): every context has an empty party",
                    c.pcs.len(),
                    c.pcs[0]
                        .inactive_reason
                        .clone()
                        .unwrap_or_else(|| format!("status {}", c.pcs[0].status))
                )
            },
        ));
    }
    let placed = active
        .iter()
        .filter(|p| p.location.is_some() || p.location_text.is_some())
        .count();
    if placed == 0 && active.len() > 1 {
        // A vault that does not track where PCs are: one note, not one warning per PC.
        diags.push(Diagnostic::new(
            &active[0].id,
            1,
            Severity::Info,
            Code::NoLocation,
            format!(
                "none of the {} active PCs has a `location:`: the full context cannot describe a scene; add `location: [[Place]]` to the PCs' notes",
                active.len()
            ),
        ));
        return diags;
    }
    for p in active {
        if p.location.is_none() && p.location_text.is_none() {
            let line = vault
                .note_index(&p.id)
                .map_or(1, |i| vault.notes[i].frontmatter.line.max(1));
            diags.push(Diagnostic::warning(
                &p.id,
                line,
                Code::NoLocation,
                "active PC has no `location:`; the context cannot place them in a scene",
            ));
        }
    }
    diags
}

/// In a folder holding a character sheet (`vaerenth-character-sheet.md`), the other notes
/// read as PCs (`…-development`, `background-lore`, with the player's name) are about that
/// character: they leave the party line, with the reason.
fn sheets_are_the_characters(c: &mut Campaign) {
    let folder = |id: &str| id.rsplit_once('/').map_or("", |(d, _)| d).to_string();
    let sheets: Vec<(String, String)> = c
        .pcs
        .iter()
        .filter(|p| p.sheet)
        .map(|p| (folder(&p.id), p.name.clone()))
        .collect();
    if sheets.is_empty() {
        return;
    }
    for p in c.pcs.iter_mut().filter(|p| p.active && !p.sheet) {
        let at = folder(&p.id);
        if let Some((_, name)) = sheets
            .iter()
            .find(|(f, _)| at == *f || at.starts_with(&format!("{f}/")))
        {
            p.active = false;
            p.inactive_reason = Some(format!(
                "a note about {name}, whose character sheet is beside it"
            ));
        }
    }
}

/// Which PCs are in play. With no party notes and PCs all in one folder, every active PC is.
/// With groups — party notes listing their members, or active PCs split between sibling
/// folders (`Players MKE 2024/`, `Players Maseeh 3012/`) — one group is in play: the one
/// `party = "…"` names in `vaultdm.toml`, else the one whose members' notes were saved most
/// recently. The others' PCs leave the party line, with the reason.
fn settle_parties(c: &mut Campaign, config: &Config) {
    start_from_notes(c);
    drop_non_parties(c);
    if c.parties.is_empty() {
        c.parties = folder_groups(c);
    }
    if c.parties.is_empty() {
        sessions_party(c);
        return;
    }
    let (idx, why) = party_in_play(c, config);
    leave_other_groups(c, idx);
    c.active_party = Some((idx, why));
}

/// Each PC in play or not as its own note says (groups found last time are found again),
/// and the notes beside a character sheet out.
fn start_from_notes(c: &mut Campaign) {
    for p in c.pcs.iter_mut() {
        p.active = p.out_by_note.is_none();
        p.inactive_reason = p.out_by_note.clone();
    }
    c.active_party = None;
    sheets_are_the_characters(c);
}

/// Keeps the party notes that can be the party: notes with members, not a lone PC's old
/// group, not a group within a larger one.
fn drop_non_parties(c: &mut Campaign) {
    c.parties
        .retain(|p| p.id.to_lowercase().ends_with(".md") && !p.members.is_empty());
    // A group holding one PC of several is that PC's old crew or order, not a party; so is
    // a group whose PCs all belong to a larger group (a faction some of the party joined).
    let active = c.pcs.iter().filter(|p| p.active).count();
    c.parties
        .retain(|p| p.members.len() >= 2 || p.members.len() >= active);
    let within_larger: Vec<bool> = c
        .parties
        .iter()
        .map(|p| {
            c.parties.iter().any(|q| {
                q.members.len() > p.members.len() && p.members.iter().all(|m| q.members.contains(m))
            })
        })
        .collect();
    let mut k = 0;
    c.parties.retain(|_| {
        k += 1;
        !within_larger[k - 1]
    });
}

/// Implicit groups: the active PCs by their folder, when two folders or more hold two PCs
/// or more (else none).
fn folder_groups(c: &Campaign) -> Vec<Party> {
    let mut by_folder: Vec<(String, Vec<String>)> = Vec::new();
    for p in c.pcs.iter().filter(|p| p.active) {
        let folder = p.id.rsplit_once('/').map_or("", |(d, _)| d).to_string();
        match by_folder.iter_mut().find(|(f, _)| *f == folder) {
            Some((_, v)) => v.push(p.id.clone()),
            None => by_folder.push((folder, vec![p.id.clone()])),
        }
    }
    let groups: Vec<_> = by_folder
        .into_iter()
        .filter(|(_, m)| m.len() >= 2)
        .collect();
    if groups.len() < 2 {
        return Vec::new();
    }
    groups
        .into_iter()
        .map(|(folder, members)| Party {
            name: folder.rsplit('/').next().unwrap_or(&folder).to_string(),
            id: folder.clone(),
            aliases: vec![],
            source: Source::new(&members[0], 1),
            members,
        })
        .collect()
}

/// The index of the party in play and why: the one `party = "…"` names in the
/// configuration, else the only one, else the one whose members' notes were saved most
/// recently.
fn party_in_play(c: &Campaign, config: &Config) -> (usize, String) {
    let modified = |p: &Party| {
        p.members
            .iter()
            .filter_map(|m| c.pcs.iter().find(|pc| &pc.id == m))
            .filter_map(|pc| pc.modified)
            .max()
    };
    let chosen = config.party.as_deref().and_then(|want| {
        let key = norm_key(want);
        c.parties.iter().position(|p| {
            norm_key(&p.name) == key
                || p.aliases.iter().any(|a| norm_key(a) == key)
                || norm_key(crate::vault::links::strip_md(&p.id)) == key
                || norm_key(p.id.rsplit('/').next().unwrap_or("")) == key
        })
    });
    match chosen {
        Some(i) => (
            i,
            format!(
                "set by party = \"{}\" in vaultdm.toml",
                config.party.as_deref().unwrap_or_default()
            ),
        ),
        None if c.parties.len() == 1 => (0, "the only party".to_string()),
        None => {
            let i = (0..c.parties.len())
                .max_by(|&a, &b| {
                    modified(&c.parties[a])
                        .cmp(&modified(&c.parties[b]))
                        .then(c.parties[b].name.cmp(&c.parties[a].name))
                })
                .unwrap_or(0);
            (i, "its members' notes were edited most recently; party = \"…\" in vaultdm.toml picks another".to_string())
        }
    }
}

/// The active PCs outside party `idx` leave the party line, with the reason.
fn leave_other_groups(c: &mut Campaign, idx: usize) {
    let members: std::collections::HashSet<String> =
        c.parties[idx].members.iter().cloned().collect();
    let name = c.parties[idx].name.clone();
    for p in c
        .pcs
        .iter_mut()
        .filter(|p| p.active && !members.contains(&p.id))
    {
        p.active = false;
        let other = c
            .parties
            .iter()
            .find(|g| g.members.contains(&p.id))
            .map(|g| g.name.clone());
        p.inactive_reason = Some(match other {
            Some(g) => format!("in another group ({g}), not the party in play ({name})"),
            None => format!("not a member of the party in play ({name})"),
        });
    }
}

/// The sections of an NPC's body [`build_npc`] reads for the voice: `## Voice`, else
/// `## Personality`.
const NPC_SECTIONS: &[&str] = &["voice", "personality"];
/// The sections of a place's body [`build_location`] reads for its description.
const PLACE_SECTIONS: &[&str] = &[
    "description",
    "quick description",
    "overview",
    "summary",
    "beschreibung",
    "descripción",
    "descrizione",
];
/// The sections of a session note's body [`build_session`] reads for its summary.
const SESSION_SECTIONS: &[&str] = &[
    "summary",
    "recap",
    "session summary",
    "session recap",
    "what happened",
    "events",
    "zusammenfassung",
    "rückblick",
    "résumé",
    "resumen",
    "resumen sesión anterior",
    "sucesos",
    "riassunto",
    "resoconto",
    "podsumowanie",
];

/// Drops from a freshly parsed note the blocks [`build`] and everything after it never
/// read (nothing past canon reads a note's body). Every kind is named by its title, and
/// - a lore note is read for its summary: the blocks after those go, and the sections after
///   them;
/// - a PC or player note for its summary and its first blocks (where the kind rule looks
///   for "played by"), a party note also for its members sections, a meta note for its
///   summary and quest sections, an NPC for its summary and voice sections, a place for
///   its summary and description sections, a session note for its summary, recap sections
///   and ending: every other block goes
///   ([`crate::vault::markdown::Body::keep_title_summary_and_sections`]);
/// - threads and timelines are read whole, and so are `canon/open-threads.md` and
///   `canon/timeline.md`.
///
/// Run on every note as it is parsed, it keeps a big vault's history, secrets and
/// world-building text from being held for the session. Links, tags, fields and
/// statblocks stay. Returns the note's kind, decided before anything was dropped.
pub(crate) fn shed_unread(note: &mut Note, config: &Config) -> NoteKind {
    let kind = kind_of(note, config);
    if note.path == OPEN_THREADS || note.path == TIMELINE {
        return kind;
    }
    // The GM's secrets stay: canon reads them for the DM-only part of the context.
    let rules = config.secrets.rules();
    let mut secret = rules.blocks(&note.body);
    if rules.whole(note).is_some() {
        secret.extend(crate::vault::secret::SecretRules::whole_blocks(&note.body));
        secret.sort_unstable();
        secret.dedup();
    }
    let body = &mut note.body;
    match kind {
        NoteKind::Lore => body.keep_title_and_summary(&secret),
        // What the kind rule reads stays, so the note is read as the same kind again.
        NoteKind::Pc | NoteKind::Player => {
            body.keep_title_summary_sections_where(|_| false, kind::BODY_BLOCKS_READ, &secret)
        }
        NoteKind::Party => body.keep_title_summary_sections_where(
            kind::is_members_heading,
            kind::BODY_BLOCKS_READ,
            &secret,
        ),
        NoteKind::Meta => body.keep_title_summary_and_sections(QUEST_SECTIONS, &secret),
        NoteKind::Npc => body.keep_title_summary_and_sections(NPC_SECTIONS, &secret),
        NoteKind::Location => body.keep_title_summary_and_sections(PLACE_SECTIONS, &secret),
        NoteKind::Session => body.keep_title_summary_sections_and_ending(SESSION_SECTIONS, &secret),
        NoteKind::Thread | NoteKind::Timeline => {}
    }
    kind
}

/// Builds the campaign from a vault's notes, its configuration and the other files canon
/// reads ([`CanonFiles`], read by the loading step): a pure step, no file is read here.
pub fn build(vault: &Vault, config: &Config, files: &CanonFiles) -> Built {
    let kinds: Vec<NoteKind> = vault.notes.par_iter().map(|n| kind_of(n, config)).collect();
    build_kinded(vault, config, files, kinds)
}

/// [`build`] with each note's [`kind_of`] already known (`kinds[i]` of `vault.notes[i]`),
/// as loading decides them while it parses.
pub(crate) fn build_kinded(
    vault: &Vault,
    config: &Config,
    files: &CanonFiles,
    kinds: Vec<NoteKind>,
) -> Built {
    debug_assert_eq!(kinds.len(), vault.notes.len());
    let mut c = named_campaign(config, files);
    // One note is the campaign's timeline; other notes read as timelines are reference.
    let timeline = campaign_timeline(vault, &kinds);
    let chosen = timeline.as_ref().map(|t| t.0);
    // Type every note in parallel (each with its own diagnostics), then gather in path order.
    let typed: Vec<(Typed, Vec<Diagnostic>)> = vault
        .notes
        .par_iter()
        .enumerate()
        .map(|(i, note)| type_note(vault, &kinds, chosen, i, note, config.secrets.rules()))
        .collect();
    let rules = config.secrets.rules();
    c.secrets = vault
        .notes
        .par_iter()
        .filter_map(|note| note_gm(note, rules).map(|g| (note.path.clone(), g)))
        .collect::<Vec<_>>()
        .into_iter()
        .collect();
    let mut diags = Vec::new();
    let found = gather(&mut c, typed, &mut diags);
    diags.extend(settle(&mut c, vault, config));
    tell_missing_lists(&c, vault, found, &mut diags);
    if let Some((i, others)) = &timeline {
        c.timeline = Some(vault.notes[*i].path.clone());
        tell_timeline_choice(vault, *i, others, &mut diags);
    }
    set_clock(&mut c, vault, &kinds, files, found.timeline, &mut diags);
    duplicate_names(&c, vault, &mut diags);
    parent_loops(&c, &mut diags);
    Built {
        campaign: std::sync::Arc::new(c),
        diagnostics: diags,
        kinds,
    }
}

/// What a note holds for the GM only, cleaned as canon text; `None` when nothing.
fn note_gm(note: &Note, rules: &crate::vault::secret::SecretRules) -> Option<NoteGm> {
    let found = rules.of(note);
    if found.whole.is_none() && found.texts.is_empty() {
        return None;
    }
    // A note kept whole is said to the DM as it is written (up to its first paragraphs),
    // not as the ~200-character card the players' notes get.
    let body = match &found.whole {
        Some(why) => crate::vault::secret::SecretRules::whole_blocks(&note.body)
            .into_iter()
            .map(|i| &note.body.blocks[i])
            .filter(|b| !found.texts.iter().any(|t| t.line == b.line as usize))
            .map(|b| Secret {
                text: text::clean_owned(b.text.to_string(), text::PARAGRAPH),
                why: why.clone(),
                line: b.line as usize,
            })
            .filter(|s| !s.text.is_empty())
            .collect(),
        None => Vec::new(),
    };
    Some(NoteGm {
        whole: found.whole,
        body,
        secrets: found
            .texts
            .into_iter()
            .map(|t| Secret {
                text: text::clean_owned(t.text, text::PARAGRAPH),
                why: t.why,
                line: t.line,
            })
            .filter(|s| !s.text.is_empty())
            .collect(),
    })
}

/// An empty campaign with its name (`name` in the configuration, else the vault folder's,
/// title-cased) and setting line.
fn named_campaign(config: &Config, files: &CanonFiles) -> Campaign {
    Campaign {
        name: text::clean(
            &config
                .name
                .clone()
                .unwrap_or_else(|| title_case(files.folder_name.as_deref().unwrap_or("Campaign"))),
            text::SHORT,
        ),
        setting: text::clean_opt(config.setting.clone(), text::LINE),
        ..Campaign::default()
    }
}

/// Types note `i` as its kind says, with the problems found doing so. `chosen` is the
/// campaign's timeline note, if any.
fn type_note(
    vault: &Vault,
    kinds: &[NoteKind],
    chosen: Option<usize>,
    i: usize,
    note: &Note,
    rules: &crate::vault::secret::SecretRules,
) -> (Typed, Vec<Diagnostic>) {
    // What is the GM's is never a summary, a description, a voice or a thread line: canon
    // reads the note without it (its secrets are kept apart, in `Campaign::secrets`).
    let secret = rules.blocks(&note.body);
    let without;
    let note = if secret.is_empty() {
        note
    } else {
        let mut n = note.clone();
        let mut i = 0;
        n.body.blocks.retain(|_| {
            let keep = !secret.contains(&i);
            i += 1;
            keep
        });
        without = n;
        &without
    };
    let mut cx = Ctx {
        vault,
        kinds,
        diags: Vec::new(),
    };
    let threads = |t: Vec<Thread>| Typed::Threads(t.into_iter().map(Clean::cleaned).collect());
    let events = |e: Vec<Event>| Typed::Events(e.into_iter().map(Clean::cleaned).collect());
    let t = if note.path == OPEN_THREADS {
        threads(parse_threads(note, &mut cx.diags))
    } else if note.path == TIMELINE {
        events(parse_timeline(note, &mut cx.diags, false))
    } else {
        match kinds[i] {
            NoteKind::Pc => Typed::Pc(Box::new(build_pc(&mut cx, note).cleaned())),
            NoteKind::Npc => Typed::Npc(Box::new(build_npc(&mut cx, note).cleaned())),
            NoteKind::Location => {
                Typed::Location(Box::new(build_location(&mut cx, note).cleaned()))
            }
            NoteKind::Thread => match quest_list(note) {
                Some(t) => threads(t),
                None => Typed::Thread(Box::new(build_thread_note(note, &mut cx.diags).cleaned())),
            },
            NoteKind::Session => Typed::Session(Box::new(build_session(&cx, note).cleaned())),
            NoteKind::Party => {
                let party = build_party(&cx, note);
                if party.members.is_empty() {
                    // A group of NPCs (a cult, a crew): lore with a card.
                    typed_lore(note)
                } else {
                    Typed::Party(Box::new(party.cleaned()))
                }
            }
            NoteKind::Timeline if chosen == Some(i) && note.path != TIMELINE => {
                events(parse_timeline(note, &mut cx.diags, true))
            }
            NoteKind::Timeline | NoteKind::Lore => typed_lore(note),
            NoteKind::Meta => quest_section(note).map_or(Typed::Nothing, threads),
            NoteKind::Player => Typed::Nothing,
        }
    };
    (t, cx.diags)
}

/// A note as lore: its name, aliases and summary.
fn typed_lore(note: &Note) -> Typed {
    Typed::Lore(Box::new(
        Lore {
            id: note.path.clone(),
            name: note.name(),
            aliases: note.aliases(),
            summary: first_paragraph(note),
            source: source(note),
        }
        .cleaned(),
    ))
}

/// Which lists of their own the notes gave: a threads file or quest list, a timeline.
#[derive(Debug, Clone, Copy)]
struct Found {
    /// Some note is a list of threads (`canon/open-threads.md`, a quest list or section).
    threads: bool,
    /// Some note is the campaign's timeline.
    timeline: bool,
}

/// Moves the typed notes into the campaign, in path order, and their problems into `diags`.
fn gather(
    c: &mut Campaign,
    typed: Vec<(Typed, Vec<Diagnostic>)>,
    diags: &mut Vec<Diagnostic>,
) -> Found {
    let mut found = Found {
        threads: false,
        timeline: false,
    };
    for (t, d) in typed {
        diags.extend(d);
        match t {
            Typed::Threads(t) => {
                found.threads = true;
                c.threads.extend(t);
            }
            Typed::Events(e) => {
                found.timeline = true;
                c.events.extend(e);
            }
            Typed::Pc(p) => c.pcs.push(*p),
            Typed::Npc(n) => c.npcs.push(*n),
            Typed::Location(l) => c.locations.push(*l),
            Typed::Thread(t) => c.threads.push(*t),
            Typed::Lore(l) => c.lore.push(*l),
            Typed::Session(s) => c.sessions.push(*s),
            Typed::Party(p) => c.parties.push(*p),
            Typed::Nothing => {}
        }
    }
    found
}

/// Tells the GM when no threads or no timeline were found, and where they can go.
fn tell_missing_lists(c: &Campaign, vault: &Vault, found: Found, diags: &mut Vec<Diagnostic>) {
    if found.threads && c.threads.is_empty() {
        diags.push(Diagnostic::new(
            OPEN_THREADS,
            0,
            Severity::Info,
            Code::NoThreads,
            "holds no threads: no storylines will be injected (add `### Title` or `- **Title**` items under ## Urgent / ## High / ## Medium / ## Low)",
        ));
    }
    // A vault vaultdm did not lay out (no `canon/` folder) is told where things can go in
    // its own terms.
    let own_layout = vault.notes.iter().any(|n| n.path.starts_with("canon/"));
    if !found.threads && c.threads.is_empty() {
        let (path, msg) = if own_layout {
            (OPEN_THREADS, "missing: no open threads will be injected (create it with ## Urgent / ## High / ## Medium / ## Low sections)")
        } else {
            (".", "no quests or threads found: quest notes (`type: quest`, or notes in a Quests folder) are injected as storylines")
        };
        diags.push(Diagnostic::new(
            path,
            0,
            Severity::Info,
            Code::NoThreads,
            msg,
        ));
    }
    if !found.timeline {
        let (path, msg) = if own_layout {
            (TIMELINE, "missing: no recent events will be injected (create it with ## Day N headings and bullet events)")
        } else {
            (".", "no timeline found: a note named Timeline (with `## Day N` or dated headings) gives the recent events; meanwhile the latest session note's summary stands in")
        };
        diags.push(Diagnostic::new(
            path,
            0,
            Severity::Info,
            Code::NoTimeline,
            msg,
        ));
    }
}

/// Tells the GM which note is the campaign's timeline (note `i`) when `others` were read
/// as timelines too.
fn tell_timeline_choice(vault: &Vault, i: usize, others: &[usize], diags: &mut Vec<Diagnostic>) {
    if others.is_empty() {
        return;
    }
    let names: Vec<&str> = others
        .iter()
        .map(|&k| vault.notes[k].path.as_str())
        .collect();
    diags.push(Diagnostic::new(
        &vault.notes[i].path,
        1,
        Severity::Info,
        Code::TimelineChoice,
        format!(
            "the campaign's timeline: recent events are read here and `/event` writes here; {} {} read as reference (name the campaign's timeline `Timeline` or give it `type: timeline` to choose another)",
            names.join(", "),
            if names.len() == 1 { "is" } else { "are" }
        ),
    ));
}

/// The campaign's day and time: read from its clock, else the latest `Day N` event's day;
/// a current day the timeline (`has_timeline`) has no events up to is worth a word.
fn set_clock(
    c: &mut Campaign,
    vault: &Vault,
    kinds: &[NoteKind],
    files: &CanonFiles,
    has_timeline: bool,
    diags: &mut Vec<Diagnostic>,
) {
    c.clock = clock_home(vault, kinds, files);
    let (day, time) = read_clock(vault, &c.clock, files, diags);
    c.day = day.or_else(|| c.events.iter().filter(|e| e.numbered).map(|e| e.day).max());
    c.time = text::clean_opt(time, text::SHORT);
    // Only `Day N` events have days a clock counts (a calendar's are places in the timeline).
    let days: Vec<i64> = c
        .events
        .iter()
        .filter(|e| e.numbered)
        .map(|e| e.day)
        .collect();
    if let Some(d) = day {
        if has_timeline && days.iter().any(|&e| e < d) && !days.contains(&d) {
            diags.push(Diagnostic::new(
                TIMELINE,
                0,
                Severity::Info,
                Code::NoCurrentDay,
                format!("no events under `## Day {d}`, the current day from {TEMPORAL_INDEX}; recent events come from earlier days"),
            ));
        }
        if has_timeline && !days.is_empty() && !days.iter().any(|&e| e <= d) {
            diags.push(Diagnostic::warning(
                TIMELINE,
                0,
                Code::TimelineFuture,
                format!("every event is after the current day {d} from {TEMPORAL_INDEX}"),
            ));
        }
    }
}

/// The file line where a note writes one of `keys` (its `name:` or `aliases:`), else the
/// line of its `# Title` for a name, else the note's first line.
fn key_line(vault: &Vault, src: &Source, keys: &[&str], is_name: bool) -> usize {
    let Some(note) = vault.note_index(&src.path).map(|i| &vault.notes[i]) else {
        return src.line;
    };
    if let Some((k, _)) = note.frontmatter.get(keys) {
        return note.frontmatter.line_of(k);
    }
    if is_name {
        if let Some(s) = note.body.sections.iter().find(|s| s.level == 1) {
            return s.line as usize;
        }
    }
    src.line
}

/// A location that is its own ancestor (`parent:` chains that loop) is a warning: nothing
/// breaks, but "where is this?" has no answer.
fn parent_loops(c: &Campaign, diags: &mut Vec<Diagnostic>) {
    for l in &c.locations {
        let mut cur = l.parent.clone();
        let mut hops = 0;
        while let Some(p) = cur {
            if p == l.id {
                diags.push(Diagnostic::warning(
                    &l.source.path,
                    l.source.line,
                    Code::ParentLoop,
                    format!(
                        "{} is inside itself: its `parent:` chain leads back to it",
                        l.name
                    ),
                ));
                break;
            }
            hops += 1;
            if hops > 64 {
                break;
            }
            cur = c.location(&p).and_then(|x| x.parent.clone());
        }
    }
}

/// Names and aliases shared by several notes: one warning per group (on the first note by
/// path, at its `name:`/`aliases:` line) naming a few of the others — linear in the number
/// of names, however many notes share one.
fn duplicate_names(c: &Campaign, vault: &Vault, diags: &mut Vec<Diagnostic>) {
    const SHOWN: usize = 5;
    // FxHash: the keys are the campaign's own names, and the groups are sorted below.
    let mut names: FxHashMap<String, Vec<(&str, &Source, bool)>> = FxHashMap::default();
    let entities = c
        .pcs
        .iter()
        .map(|p| (&p.name, &p.aliases, &p.source))
        .chain(c.npcs.iter().map(|n| (&n.name, &n.aliases, &n.source)))
        .chain(c.locations.iter().map(|l| (&l.name, &l.aliases, &l.source)));
    for (name, aliases, src) in entities {
        let key = norm_key(name);
        for a in aliases {
            let k = norm_key(a);
            if k != key {
                names.entry(k).or_default().push((a, src, false));
            }
        }
        names.entry(key).or_default().push((name, src, true));
    }
    let mut groups: Vec<_> = names.into_iter().filter(|(_, v)| v.len() > 1).collect();
    groups.sort_by(|a, b| a.0.cmp(&b.0));
    for (_, mut v) in groups {
        v.sort_by(|a, b| a.1.path.cmp(&b.1.path));
        v.dedup_by(|a, b| a.1.path == b.1.path);
        if v.len() < 2 {
            continue;
        }
        let all_names = v.iter().all(|(_, _, is_name)| *is_name);
        let (n, src, is_name) = v[0];
        let line = if is_name {
            key_line(vault, src, &["name", "title"], true)
        } else {
            key_line(vault, src, &["aliases", "alias"], false)
        };
        let mut others: Vec<&str> = v[1..]
            .iter()
            .take(SHOWN)
            .map(|(_, s, _)| s.path.as_str())
            .collect();
        let more = v.len() - 1 - others.len();
        let more = if more > 0 {
            format!(" and {more} more notes")
        } else {
            String::new()
        };
        let list = {
            let last = others.pop();
            match (others.is_empty(), last) {
                (_, None) => String::new(),
                (true, Some(l)) => l.to_string(),
                (false, Some(l)) if more.is_empty() => format!("{} and {l}", others.join(", ")),
                (false, Some(l)) => format!("{}, {l}", others.join(", ")),
            }
        };
        diags.push(Diagnostic::warning(
            &src.path,
            line,
            if all_names {
                Code::DuplicateName
            } else {
                Code::SharedAlias
            },
            format!("\"{n}\" is also used by {list}{more}; mentions of it are ambiguous"),
        ));
    }
}

#[cfg(test)]
mod tests {

    #[rstest::rstest]
    #[case("Session 12", Some(12))]
    #[case("Session-01-The-Spore-Breach", Some(1))]
    #[case("03 - Eulenturm", Some(3))]
    #[case("2026-08-13", None)]
    #[case("Game-Date-Session-2065-09-01", None)]
    #[case("Sesion 24", Some(24))]
    fn session_numbers(#[case] stem: &str, #[case] want: Option<i64>) {
        assert_eq!(session_number(stem), want, "{stem}");
    }
    use super::*;

    proptest::proptest! {
        /// `one_line` on ASCII (its own path) is words joined by one space.
        #[test]
        fn one_line_is_words_joined(s in "[ \t\n\x0b\x0c\rab.]{0,40}") {
            let plain = s.split_whitespace().collect::<Vec<_>>().join(" ");
            proptest::prop_assert_eq!(one_line(&s), plain);
        }
    }

    fn thread_note(body: &str) -> (Vec<Thread>, Vec<Diagnostic>) {
        let n = Note::parse(OPEN_THREADS, body.as_bytes());
        let mut d = vec![];
        (parse_threads(&n, &mut d), d)
    }

    #[test]
    fn threads_in_both_styles() {
        let (t, d) = thread_note("# Open Threads\n\n## Urgent\n### The Bell\nRang at noon.\n→ Next: Reach the Cathedral.\n\n## High\n- **The Forged Pass** — posted at every gate.\n  → Next: Get Jory to alter the seal.\n- **Second**: other\n  Next: go\n\n## Resolved\n### Done Thing\nOver.\n");
        assert!(d.is_empty(), "{d:?}");
        let got: Vec<_> = t
            .iter()
            .map(|t| (t.title.as_str(), t.priority, t.next.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("The Bell", Priority::Urgent, Some("Reach the Cathedral.")),
                (
                    "The Forged Pass",
                    Priority::High,
                    Some("Get Jory to alter the seal.")
                ),
                ("Second", Priority::High, Some("go")),
                ("Done Thing", Priority::Resolved, None),
            ]
        );
        assert_eq!(t[1].summary, ["posted at every gate."]);
        assert_eq!(t[0].source.line, 4);
    }

    #[test]
    fn a_ticked_thread_is_resolved_and_titles_follow_one_rule() {
        let (t, d) = thread_note(
            "## High\n- [x] **The Debt:** paid.\n- [ ] A Bell: rings twice — at noon.\n",
        );
        assert!(d.is_empty(), "{d:?}");
        let got: Vec<_> = t.iter().map(|t| (t.title.as_str(), t.priority)).collect();
        assert_eq!(
            got,
            [("The Debt", Priority::Resolved), ("A Bell", Priority::High)]
        );
        assert_eq!(t[1].summary, ["rings twice — at noon."]);
    }

    #[test]
    fn thread_without_priority_is_flagged() {
        let (t, d) = thread_note("### Lost Thread\nSomething.\n");
        assert_eq!(t[0].priority, Priority::Medium);
        assert_eq!(d[0].code, "thread-no-priority");
    }

    /// The campaign's timeline among several notes read as timelines: a name beats
    /// `type: timeline`, which beats `Day N` headings, which beat path order.
    #[rstest::rstest]
    #[case::named(&[("Lore/Holidays.md", "---\ntags: [timeline]\n---\n## Day 1\n- a\n"), ("World/Campaign Timeline.md", "## Year 3\n- b\n")], "World/Campaign Timeline.md")]
    #[case::declared(&[("A.md", "---\ntags: [timeline]\n---\n## Day 1\n- a\n"), ("B.md", "---\ntype: timeline\n---\n## Year 3\n- b\n")], "B.md")]
    #[case::days(&[("A.md", "---\ntags: [timeline]\n---\n## Spring\n- a\n"), ("B.md", "---\ntags: [timeline]\n---\n## Day 2\n- b\n")], "B.md")]
    #[case::path_order(&[("A.md", "---\ntags: [timeline]\n---\n## Spring\n- a\n"), ("B.md", "---\ntags: [timeline]\n---\n## Summer\n- b\n")], "A.md")]
    // Two `all-timeline` pages: one whose events are a plugin's rendered HTML, one with year
    // sections (a public vault's layout).
    #[case::dated(&[("faerun/all-timeline.md", "---\ntags: [timeline]\n---\n# Game Time\n- [Calendar](https://x)\n\n## Timeline\n<div class=\"timeline\"><h2>1485</h2></div>\n"), ("heist/all-timeline.md", "---\ntags: [timeline]\n---\n# Timeline\n## 1499\n- `1499-Ches-3` The heist.\n")], "heist/all-timeline.md")]
    fn one_note_is_the_campaigns_timeline(#[case] notes: &[(&str, &str)], #[case] want: &str) {
        let v = Vault::from_notes(
            std::path::PathBuf::from("."),
            notes
                .iter()
                .map(|(p, t)| Note::parse(p, t.as_bytes()))
                .collect(),
            vec![],
        );
        let b = build(&v, &Config::default(), &CanonFiles::default());
        assert_eq!(b.campaign.timeline.as_deref(), Some(want));
        assert!(b.campaign.events.iter().all(|e| e.source.path == want));
        assert!(b
            .diagnostics
            .iter()
            .any(|d| d.code == "timeline-choice" && d.path == want));
    }

    /// Where the clock is kept: a party note's `day`, a campaign note's date, never a home
    /// note's `date:` (the day a template made it); else vaultdm's own clock.
    #[test]
    fn the_clock_is_read_where_the_vault_keeps_it() {
        let home_of = |path: &str, text: &str| {
            let v = Vault::from_notes(
                std::path::PathBuf::from("."),
                vec![Note::parse(path, text.as_bytes())],
                vec![],
            );
            let b = build(&v, &Config::default(), &CanonFiles::default());
            (b.campaign.clock.clone(), b.campaign.day)
        };
        let (home, day) = home_of("Party.md", "---\ntype: party\nday: Day 4\n---\n[[A]]\n");
        assert!(
            matches!(home, ClockHome::Note { ref day_key, date: None, .. } if day_key == "day")
        );
        assert_eq!(day, Some(4));
        let (home, day) = home_of(
            "Campaign.md",
            "---\ntype: campaign\ndate: 12 Mirtul 1492\n---\n",
        );
        assert!(matches!(home, ClockHome::Note { date: Some(ref d), .. } if d == "12 Mirtul 1492"));
        assert_eq!(day, None);
        let (home, _) = home_of("Homepage.md", "---\ndate: 2024-03-12\n---\n# Home\n");
        assert_eq!(home, ClockHome::Own);
    }

    #[test]
    fn timeline_days() {
        let n = Note::parse(
            TIMELINE,
            "# T\n## Day 1\n- a\n- b\n## Day 6 — dusk\n- c\n## Notes\n- not an event\n".as_bytes(),
        );
        let mut d = vec![];
        let e = parse_timeline(&n, &mut d, false);
        let got: Vec<_> = e.iter().map(|e| (e.day, e.text.as_str())).collect();
        assert_eq!(got, [(1, "a"), (1, "b"), (6, "c")]);
        assert_eq!(d.len(), 1);
    }

    #[test]
    fn hp_as_a_pair_and_no_conditions() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pcs = dir.path().join("canon/pcs");
        std::fs::create_dir_all(&pcs).expect("mkdir");
        std::fs::write(
            pcs.join("jake.md"),
            "---\nname: Jake\nhp: 13/20\nconditions: none\n---\n",
        )
        .expect("write");
        std::fs::write(
            pcs.join("ann.md"),
            "---\nname: Ann\nhp: 4 / 9\nmax_hp: 10\n---\n",
        )
        .expect("write");
        let v = Vault::load(dir.path()).expect("load");
        let b = build(&v, &Config::default(), &CanonFiles::default());
        let jake = b
            .campaign
            .pcs
            .iter()
            .find(|p| p.name == "Jake")
            .expect("jake");
        assert_eq!((jake.hp_current, jake.hp_max), (Some(13), Some(20)));
        assert!(jake.conditions.is_empty());
        let ann = b
            .campaign
            .pcs
            .iter()
            .find(|p| p.name == "Ann")
            .expect("ann");
        assert_eq!((ann.hp_current, ann.hp_max), (Some(4), Some(10)));
    }

    #[test]
    fn status_from_tags_and_inline_fields() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("heist/people")).expect("mkdir");
        std::fs::create_dir_all(root.join("heist/places")).expect("mkdir");
        std::fs::write(
            root.join("heist/people/vex.md"),
            "---\ntags: [heist/npc/dead]\n---\n# Vex\n",
        )
        .expect("write");
        std::fs::write(
            root.join("heist/people/mara.md"),
            "# Mara\n\nlocation:: [[The Docks]]\nrole:: fence\n\n## Personality\n- Haggles.\n",
        )
        .expect("write");
        std::fs::write(
            root.join("heist/places/The Docks.md"),
            "# The Docks\n\nWet.\n",
        )
        .expect("write");
        let v = Vault::load(root).expect("load");
        let b = build(&v, &Config::default(), &CanonFiles::default());
        let vex = b
            .campaign
            .npcs
            .iter()
            .find(|n| n.name == "Vex")
            .expect("vex");
        assert_eq!(vex.status, "dead");
        assert!(vex.is_absent());
        let mara = b
            .campaign
            .npcs
            .iter()
            .find(|n| n.name == "Mara")
            .expect("mara");
        assert_eq!(mara.location.as_deref(), Some("heist/places/The Docks.md"));
        assert_eq!(mara.role.as_deref(), Some("fence"));
        assert_eq!(mara.status, "active");
    }

    #[test]
    fn parent_loops_are_flagged() {
        let dir = tempfile::tempdir().expect("tempdir");
        let locs = dir.path().join("canon/locations");
        std::fs::create_dir_all(&locs).expect("mkdir");
        std::fs::write(locs.join("a.md"), "---\nname: A\nparent: b\n---\n").expect("write");
        std::fs::write(locs.join("b.md"), "---\nname: B\nparent: a\n---\n").expect("write");
        std::fs::write(locs.join("c.md"), "---\nname: C\nparent: a\n---\n").expect("write");
        let v = Vault::load(dir.path()).expect("load");
        let b = build(&v, &Config::default(), &CanonFiles::default());
        let loops: Vec<_> = b
            .diagnostics
            .iter()
            .filter(|d| d.code == "parent-loop")
            .map(|d| d.path.as_str())
            .collect();
        assert_eq!(loops, ["canon/locations/a.md", "canon/locations/b.md"]);
    }

    #[test]
    fn title_case_folder() {
        assert_eq!(title_case("curse-of_the night"), "Curse Of The Night");
    }

    #[test]
    fn build_reads_no_file_only_what_it_is_given() {
        // The vault folder holds a temporal index saying day 9; build is given day 3.
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("canon")).expect("mkdir");
        std::fs::write(
            root.join("canon/temporal-index.json"),
            "{\"current_day\": 9, \"current_time\": \"dusk\"}",
        )
        .expect("write");
        let v = Vault::from_notes(
            root.to_path_buf(),
            vec![Note::parse(
                "canon/timeline.md",
                b"# Timeline\n## Day 2\n- Rain.\n",
            )],
            vec![],
        );
        let given = CanonFiles {
            temporal: TemporalFile::Text("{\"current_day\": 3, \"time\": \"noon\"}".into()),
            folder_name: Some("the-salt-march".into()),
            canon_folder: true,
            ..CanonFiles::default()
        };
        let b = build(&v, &Config::default(), &given);
        assert_eq!(b.campaign.day, Some(3));
        assert_eq!(b.campaign.time.as_deref(), Some("noon"));
        assert_eq!(b.campaign.name, "The Salt March");
        // Missing: a warning in vaultdm's own layout, a quiet note elsewhere.
        for (canon_folder, severity) in [(true, Severity::Warning), (false, Severity::Info)] {
            let files = CanonFiles {
                canon_folder,
                ..CanonFiles::default()
            };
            let b = build(&v, &Config::default(), &files);
            let d = b
                .diagnostics
                .iter()
                .find(|d| d.code == "no-temporal-index")
                .expect("missing index said");
            assert_eq!(d.severity, severity);
            assert_eq!(b.campaign.day, Some(2), "the latest timeline day");
        }
        let unreadable = CanonFiles {
            temporal: TemporalFile::Unreadable("a link out of the vault".into()),
            ..CanonFiles::default()
        };
        let b = build(&v, &Config::default(), &unreadable);
        assert!(b
            .diagnostics
            .iter()
            .any(|d| d.code == "temporal-index" && d.message.contains("a link out of the vault")));
    }
}
