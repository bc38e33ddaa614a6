//! Building the campaign from a loaded vault.

use super::kind::{classify, NoteKind};
use super::model::*;
use super::{OPEN_THREADS, TEMPORAL_INDEX, TIMELINE};
use crate::config::Config;
use crate::vault::frontmatter::value_int;
use crate::vault::links::{as_single_link, norm_key};
use crate::vault::markdown::{Block, BlockKind};
use crate::vault::{Diagnostic, Note, Resolution, Severity, Vault};
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::Path;

/// A built campaign with the problems found while typing it.
#[derive(Debug, Clone)]
pub struct Built {
    /// The campaign.
    pub campaign: Campaign,
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
                    "bad-value",
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
        let target = as_single_link(&raw).map_or(raw.clone(), |t| t.note);
        let line = note.frontmatter.line_of(key);
        match self.vault.resolve(&target) {
            Resolution::Found(i) => {
                if self.kinds[i] == NoteKind::Location {
                    (Some(self.vault.notes[i].path.clone()), None)
                } else {
                    self.diags.push(Diagnostic::warning(
                        &note.path,
                        line,
                        "not-a-location",
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
                    "unknown-location",
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
                    "ambiguous-location",
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

fn first_paragraph(note: &Note) -> Option<String> {
    note.body.first_paragraph().map(|b| one_line(&b.text))
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn source(note: &Note) -> Source {
    Source::new(&note.path, 1)
}

fn build_pc(cx: &mut Ctx<'_>, note: &Note) -> Pc {
    let fm = &note.frontmatter;
    let status = fm
        .text(&["status"])
        .or_else(|| status_from_tags(note))
        .unwrap_or_else(|| "active".into());
    let st = status.to_lowercase();
    let active = !INACTIVE_PC_STATUSES
        .iter()
        .any(|s| st.split(|c: char| !c.is_alphanumeric()).next() == Some(s))
        && fm.text(&["active"]).map_or(true, |a| a != "false");
    let (location, location_text) = cx.place(note, &["location", "loc", "current_location"]);
    if active && location.is_none() && location_text.is_none() {
        cx.diags.push(Diagnostic::warning(
            &note.path,
            note.frontmatter.line.max(1),
            "no-location",
            "active PC has no `location:`; the context cannot place them in a scene",
        ));
    }
    // `hp: 17/27` carries both numbers.
    const HP_KEYS: &[&str] = &["hp_current", "hp", "current_hp", "hp_cur"];
    const MAX_KEYS: &[&str] = &["hp_max", "max_hp", "maxhp", "hpmax"];
    let (hp_current, hp_max) = match fm.text(HP_KEYS).and_then(|t| hp_pair(&t)) {
        Some((cur, max)) => (Some(cur), cx.int(note, MAX_KEYS, "max HP").or(Some(max))),
        None => (
            cx.int(note, HP_KEYS, "current HP"),
            cx.int(note, MAX_KEYS, "max HP"),
        ),
    };
    Pc {
        id: note.path.clone(),
        name: note.name(),
        aliases: note.aliases(),
        class: fm.text(&["class", "classes"]),
        level: cx.int(note, &["level", "lvl"], "level"),
        player: fm.text(&["player"]),
        status,
        active,
        hp_current,
        hp_max,
        location,
        location_text,
        gold: cx.int(note, &["gold", "gp"], "gold"),
        conditions: fm
            .list(&["conditions", "condition"])
            .into_iter()
            .filter(|c| {
                !matches!(
                    c.to_lowercase().as_str(),
                    "none" | "-" | "n/a" | "healthy" | "ok" | "fine"
                )
            })
            .collect(),
        inventory: fm.list(&["inventory", "items"]),
        summary: first_paragraph(note),
        source: source(note),
    }
}

/// A status written as a tag segment (`npc/dead`, `heist/npc/missing`, `#departed`), for
/// GMs who track status with tags instead of a `status:` key.
fn status_from_tags(note: &Note) -> Option<String> {
    note.tags.iter().find_map(|t| {
        t.split('/')
            .find(|seg| {
                ABSENT_STATUSES.contains(seg)
                    || INACTIVE_PC_STATUSES.contains(seg)
                    || *seg == "alive"
            })
            .map(|seg| {
                if seg == "alive" {
                    "active".to_string()
                } else {
                    seg.to_string()
                }
            })
    })
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

fn build_npc(cx: &mut Ctx<'_>, note: &Note) -> Npc {
    let fm = &note.frontmatter;
    let voice = match fm.text(&["voice"]) {
        Some(v) => vec![v],
        None => note
            .body
            .section_blocks(&["voice"])
            .or_else(|| note.body.section_blocks(&["personality"]))
            .map(|b| bullets(&b, 2))
            .unwrap_or_default(),
    };
    let (location, location_text) = cx.place(note, &["location", "loc", "current_location"]);
    let status = fm
        .text(&["status"])
        .or_else(|| status_from_tags(note))
        .unwrap_or_else(|| "active".into());
    if voice.is_empty() && !is_absent_status(&status) {
        cx.diags.push(Diagnostic::new(
            &note.path,
            note.frontmatter.line.max(1),
            Severity::Info,
            "no-voice",
            "NPC has no voice: add `voice:` or a `## Personality` list whose first bullets say how they talk",
        ));
    }
    Npc {
        id: note.path.clone(),
        name: note.name(),
        aliases: note.aliases(),
        role: fm.text(&["role", "occupation", "job", "title_role"]),
        status,
        disposition: fm.text(&["disposition", "relationship", "attitude"]),
        location,
        location_text,
        voice,
        summary: first_paragraph(note),
        source: source(note),
    }
}

fn build_location(cx: &mut Ctx<'_>, note: &Note) -> Location {
    let description = note
        .body
        .section_blocks(&["description"])
        .and_then(|b| {
            b.iter()
                .find(|b| b.kind == BlockKind::Paragraph)
                .map(|b| one_line(&b.text))
        })
        .or_else(|| first_paragraph(note));
    let kind = note
        .frontmatter
        .text(&["type", "kind"])
        .filter(|t| !matches!(t.to_lowercase().as_str(), "location" | "place"));
    let (parent, _) = cx.place(note, &["parent", "region", "district"]);
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

fn is_next(line: &str) -> Option<String> {
    let t = line.trim().trim_start_matches(['-', '*']).trim();
    let t = t
        .strip_prefix('→')
        .or_else(|| t.strip_prefix("->"))
        .or_else(|| t.strip_prefix("=>"))
        .unwrap_or(t)
        .trim();
    let lower = t.to_lowercase();
    for p in ["next step:", "next:"] {
        if lower.starts_with(p) {
            return Some(t[p.len()..].trim().to_string());
        }
    }
    None
}

fn strip_sep(s: &str) -> &str {
    s.trim_start()
        .trim_start_matches(['—', '–', '-', ':', '|'])
        .trim_start()
}

fn add_lines(t: &mut Thread, lines: &str) {
    for l in lines.lines() {
        let l = l.trim();
        if l.is_empty() {
            continue;
        }
        if let Some(n) = is_next(l) {
            if t.next.is_none() && !n.is_empty() {
                t.next = Some(n);
            }
        } else {
            t.summary.push(l.to_string());
        }
    }
}

fn parse_threads(note: &Note, diags: &mut Vec<Diagnostic>) -> Vec<Thread> {
    let mut out: Vec<Thread> = Vec::new();
    let mut priority: Option<Priority> = None;
    let mut warned_section: Option<usize> = None;
    // Index in `out` of the thread that following paragraphs belong to.
    let mut current: Option<usize> = None;
    let mut heading_level_of_thread = 0u8;
    let new_thread = |title: String,
                      line: usize,
                      priority: Option<Priority>,
                      diags: &mut Vec<Diagnostic>,
                      section: usize,
                      warned: &mut Option<usize>|
     -> Thread {
        let p = priority.unwrap_or_else(|| {
            if *warned != Some(section) {
                diags.push(Diagnostic::warning(
                    &note.path,
                    line,
                    "thread-no-priority",
                    format!("thread \"{title}\" is not under an Urgent/High/Medium/Low/Resolved heading; treated as medium"),
                ));
                *warned = Some(section);
            }
            Priority::Medium
        });
        Thread {
            id: format!("{}#{}", note.path, title),
            title,
            aliases: vec![],
            priority: p,
            summary: vec![],
            next: None,
            source: Source::new(&note.path, line),
        }
    };
    for b in &note.body.blocks {
        match b.kind {
            BlockKind::Heading(level) => {
                // The file's `# Title` ("Open Threads") is not a priority section; a level-1
                // heading is one only when it is a lone priority word (`# Urgent`).
                let as_priority = Priority::parse(&b.text)
                    .filter(|_| level >= 2 || b.text.split_whitespace().count() == 1);
                if let Some(p) = as_priority.filter(|_| level <= 2 || priority.is_none()) {
                    if level <= 2 || Priority::parse(&b.text).is_some() && current.is_none() {
                        priority = Some(p);
                        current = None;
                        continue;
                    }
                }
                if level <= 1 {
                    current = None;
                    continue;
                }
                if level == 2 {
                    // A level-2 heading that is not a priority: a thread title without a section.
                    priority = None;
                }
                let t = new_thread(
                    one_line(&b.text),
                    b.line,
                    priority,
                    diags,
                    b.section,
                    &mut warned_section,
                );
                out.push(t);
                current = Some(out.len() - 1);
                heading_level_of_thread = level;
            }
            BlockKind::ListItem
                if b.depth <= 1
                    && (b.strong_prefix.is_some()
                        || current.is_none()
                        || heading_level_of_thread == 0) =>
            {
                let first = b.text.lines().next().unwrap_or("");
                let (title, rest) = match &b.strong_prefix {
                    Some(p) => {
                        let p = p.trim();
                        let rest = first.trim_start().strip_prefix(p).unwrap_or("");
                        (
                            p.trim_end_matches(':').trim().to_string(),
                            strip_sep(rest).to_string(),
                        )
                    }
                    None => match first
                        .split_once(" — ")
                        .or_else(|| first.split_once(" – "))
                        .or_else(|| first.split_once(" - "))
                        .or_else(|| first.split_once(": "))
                    {
                        Some((t, r)) => (t.trim().to_string(), r.trim().to_string()),
                        None => (first.trim().to_string(), String::new()),
                    },
                };
                if title.is_empty() {
                    continue;
                }
                let mut t = new_thread(
                    title,
                    b.line,
                    priority,
                    diags,
                    b.section,
                    &mut warned_section,
                );
                let tail: Vec<&str> = b.text.lines().skip(1).collect();
                add_lines(&mut t, &rest);
                add_lines(&mut t, &tail.join("\n"));
                out.push(t);
                current = Some(out.len() - 1);
                heading_level_of_thread = 0;
            }
            _ => {
                if let Some(i) = current {
                    add_lines(&mut out[i], &b.text);
                }
            }
        }
    }
    out
}

fn build_thread_note(note: &Note, diags: &mut Vec<Diagnostic>) -> Thread {
    let fm = &note.frontmatter;
    let priority = fm
        .text(&["priority"])
        .and_then(|p| Priority::parse(&p))
        .or_else(|| {
            fm.text(&["status"])
                .and_then(|s| Priority::parse(&s))
                .filter(|p| *p == Priority::Resolved)
        });
    let priority = priority.unwrap_or_else(|| {
        diags.push(Diagnostic::warning(
            &note.path,
            note.frontmatter.line_of("priority"),
            "thread-no-priority",
            "thread note has no `priority:` (urgent, high, medium, low or resolved); treated as medium",
        ));
        Priority::Medium
    });
    let mut t = Thread {
        id: note.path.clone(),
        title: note.name(),
        aliases: note.aliases(),
        priority,
        summary: fm.text(&["summary"]).into_iter().collect(),
        next: fm.text(&["next", "next_step"]),
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
    let lower = h.trim().to_lowercase();
    let rest = lower.strip_prefix("day")?;
    let digits: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().ok()
}

fn parse_timeline(note: &Note, diags: &mut Vec<Diagnostic>) -> Vec<Event> {
    let mut out = Vec::new();
    let mut day: Option<i64> = None;
    let mut day_level = 0u8;
    for b in &note.body.blocks {
        match b.kind {
            BlockKind::Heading(level) => {
                if let Some(d) = day_of_heading(&b.text) {
                    day = Some(d);
                    day_level = level;
                } else if level <= day_level {
                    day = None;
                }
            }
            BlockKind::ListItem => match day {
                Some(d) => out.push(Event {
                    day: d,
                    text: one_line(&b.text),
                    source: Source::new(&note.path, b.line),
                }),
                None => diags.push(Diagnostic::warning(
                    &note.path,
                    b.line,
                    "event-no-day",
                    "timeline event is not under a `## Day N` heading; it was ignored",
                )),
            },
            _ => {}
        }
    }
    out
}

fn read_temporal(root: &Path, diags: &mut Vec<Diagnostic>) -> (Option<i64>, Option<String>) {
    let path = root.join(TEMPORAL_INDEX);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            diags.push(Diagnostic::warning(
                TEMPORAL_INDEX,
                0,
                "no-temporal-index",
                "missing: create it with {\"current_day\": 1, \"current_time\": \"morning\"}; the latest timeline day is used",
            ));
            return (None, None);
        }
        Err(e) => {
            diags.push(Diagnostic::error(
                TEMPORAL_INDEX,
                0,
                "temporal-index",
                format!("could not read: {e}"),
            ));
            return (None, None);
        }
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
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
                    TEMPORAL_INDEX,
                    line_of(text, "current_day"),
                    "temporal-index",
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
                TEMPORAL_INDEX,
                1,
                "temporal-index",
                "must be a JSON object like {\"current_day\": 6, \"current_time\": \"dusk\"}",
            ));
            (None, None)
        }
        Err(e) => {
            diags.push(Diagnostic::error(
                TEMPORAL_INDEX,
                e.line(),
                "temporal-index",
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
enum Typed {
    Pc(Pc),
    Npc(Npc),
    Location(Location),
    Thread(Thread),
    Lore(Lore),
    Threads(Vec<Thread>),
    Events(Vec<Event>),
}

/// Builds the campaign from a vault and its configuration.
pub fn build(vault: &Vault, config: &Config) -> Built {
    let kinds: Vec<NoteKind> = vault
        .notes
        .iter()
        .map(|n| {
            if n.path == OPEN_THREADS || n.path == TIMELINE {
                NoteKind::Lore
            } else {
                classify(n, &config.folders)
            }
        })
        .collect();
    let mut cx = Ctx {
        vault,
        kinds: &kinds,
        diags: Vec::new(),
    };
    let mut c = Campaign {
        name: config.name.clone().unwrap_or_else(|| {
            let folder = vault
                .root
                .canonicalize()
                .ok()
                .and_then(|p| p.file_name().map(|f| f.to_string_lossy().into_owned()))
                .unwrap_or_else(|| "Campaign".into());
            title_case(&folder)
        }),
        setting: config.setting.clone(),
        ..Campaign::default()
    };
    // Type every note in parallel (each with its own diagnostics), then gather in path order.
    let typed: Vec<(Typed, Vec<Diagnostic>)> = vault
        .notes
        .par_iter()
        .enumerate()
        .map(|(i, note)| {
            let mut cx = Ctx {
                vault,
                kinds: &kinds,
                diags: Vec::new(),
            };
            let t = if note.path == OPEN_THREADS {
                Typed::Threads(parse_threads(note, &mut cx.diags))
            } else if note.path == TIMELINE {
                Typed::Events(parse_timeline(note, &mut cx.diags))
            } else {
                match kinds[i] {
                    NoteKind::Pc => Typed::Pc(build_pc(&mut cx, note)),
                    NoteKind::Npc => Typed::Npc(build_npc(&mut cx, note)),
                    NoteKind::Location => Typed::Location(build_location(&mut cx, note)),
                    NoteKind::Thread => Typed::Thread(build_thread_note(note, &mut cx.diags)),
                    NoteKind::Lore => Typed::Lore(Lore {
                        id: note.path.clone(),
                        name: note.name(),
                        aliases: note.aliases(),
                        summary: first_paragraph(note),
                        source: source(note),
                    }),
                }
            };
            (t, cx.diags)
        })
        .collect();
    let mut has_threads_file = false;
    let mut has_timeline = false;
    for (t, d) in typed {
        cx.diags.extend(d);
        match t {
            Typed::Threads(t) => {
                has_threads_file = true;
                c.threads.extend(t);
            }
            Typed::Events(e) => {
                has_timeline = true;
                c.events.extend(e);
            }
            Typed::Pc(p) => c.pcs.push(p),
            Typed::Npc(n) => c.npcs.push(n),
            Typed::Location(l) => c.locations.push(l),
            Typed::Thread(t) => c.threads.push(t),
            Typed::Lore(l) => c.lore.push(l),
        }
    }
    let mut diags = cx.diags;
    if has_threads_file && c.threads.is_empty() {
        diags.push(Diagnostic::new(
            OPEN_THREADS,
            0,
            Severity::Info,
            "no-threads",
            "holds no threads: no storylines will be injected (add `### Title` or `- **Title**` items under ## Urgent / ## High / ## Medium / ## Low)",
        ));
    }
    if !has_threads_file && c.threads.is_empty() {
        diags.push(Diagnostic::new(
            OPEN_THREADS,
            0,
            Severity::Info,
            "no-threads",
            "missing: no open threads will be injected (create it with ## Urgent / ## High / ## Medium / ## Low sections)",
        ));
    }
    if !has_timeline {
        diags.push(Diagnostic::new(
            TIMELINE,
            0,
            Severity::Info,
            "no-timeline",
            "missing: no recent events will be injected (create it with ## Day N headings and bullet events)",
        ));
    }
    let (day, time) = read_temporal(&vault.root, &mut diags);
    c.day = day.or_else(|| c.events.iter().map(|e| e.day).max());
    c.time = time;
    if let Some(d) = day {
        if has_timeline
            && !c.events.is_empty()
            && c.events.iter().any(|e| e.day < d)
            && !c.events.iter().any(|e| e.day == d)
        {
            diags.push(Diagnostic::new(
                TIMELINE,
                0,
                Severity::Info,
                "no-current-day",
                format!("no events under `## Day {d}`, the current day from {TEMPORAL_INDEX}; recent events come from earlier days"),
            ));
        }
        if has_timeline && !c.events.is_empty() && !c.events.iter().any(|e| e.day <= d) {
            diags.push(Diagnostic::warning(
                TIMELINE,
                0,
                "timeline-future",
                format!("every event is after the current day {d} from {TEMPORAL_INDEX}"),
            ));
        }
    }
    duplicate_names(&c, vault, &mut diags);
    parent_loops(&c, &mut diags);
    Built {
        campaign: c,
        diagnostics: diags,
        kinds,
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
            return s.line;
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
                    "parent-loop",
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

fn duplicate_names(c: &Campaign, vault: &Vault, diags: &mut Vec<Diagnostic>) {
    let mut names: HashMap<String, Vec<(&str, &Source, bool)>> = HashMap::new();
    let entities = c
        .pcs
        .iter()
        .map(|p| (&p.name, &p.aliases, &p.source))
        .chain(c.npcs.iter().map(|n| (&n.name, &n.aliases, &n.source)))
        .chain(c.locations.iter().map(|l| (&l.name, &l.aliases, &l.source)));
    for (name, aliases, src) in entities {
        names
            .entry(norm_key(name))
            .or_default()
            .push((name, src, true));
        for a in aliases {
            if norm_key(a) != norm_key(name) {
                names.entry(norm_key(a)).or_default().push((a, src, false));
            }
        }
    }
    let mut keys: Vec<_> = names.into_iter().filter(|(_, v)| v.len() > 1).collect();
    keys.sort_by(|a, b| a.0.cmp(&b.0));
    for (_, v) in keys {
        let mut paths: Vec<&str> = v.iter().map(|(_, s, _)| s.path.as_str()).collect();
        paths.sort_unstable();
        paths.dedup();
        if paths.len() < 2 {
            continue;
        }
        let all_names = v.iter().all(|(_, _, is_name)| *is_name);
        for (n, src, is_name) in &v {
            let others: Vec<&str> = paths.iter().copied().filter(|p| *p != src.path).collect();
            let line = if *is_name {
                key_line(vault, src, &["name", "title"], true)
            } else {
                key_line(vault, src, &["aliases", "alias"], false)
            };
            diags.push(Diagnostic::warning(
                &src.path,
                line,
                if all_names {
                    "duplicate-name"
                } else {
                    "shared-alias"
                },
                format!(
                    "\"{n}\" is also used by {}; mentions of it are ambiguous",
                    others.join(", ")
                ),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn thread_without_priority_is_flagged() {
        let (t, d) = thread_note("### Lost Thread\nSomething.\n");
        assert_eq!(t[0].priority, Priority::Medium);
        assert_eq!(d[0].code, "thread-no-priority");
    }

    #[test]
    fn timeline_days() {
        let n = Note::parse(
            TIMELINE,
            "# T\n## Day 1\n- a\n- b\n## Day 6 — dusk\n- c\n## Notes\n- not an event\n".as_bytes(),
        );
        let mut d = vec![];
        let e = parse_timeline(&n, &mut d);
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
        let b = build(&v, &Config::default());
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
        let b = build(&v, &Config::default());
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
        let b = build(&v, &Config::default());
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
}
