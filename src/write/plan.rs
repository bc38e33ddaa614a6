//! From changes to file edits: each change is checked against canon (the entity exists, the
//! location resolves, the value has the right type) and becomes edits of the notes that hold
//! it, with a one-line diff for the GM. A change that does not hold is rejected with its
//! reason and touches nothing; the others still go ahead.

use super::change::{Change, Field};
use super::error::{OpError, PlanError, ReadError};
use super::log::{Basis, Was};
use super::resolve::{self, Who};
use crate::canon::kind::NoteKind;
use crate::canon::model::ClockHome;
use crate::canon::model::{Campaign, Priority};
use crate::canon::{keys, NEW_TIMELINE, OPEN_THREADS, OWN_CLOCK, TEMPORAL_INDEX, TIMELINE};
use crate::config::HpBounds;
use crate::mentions::Matcher;
use crate::names::slug;
use crate::vault::boundary;
use crate::vault::edit::{self, Scalar};
use std::collections::BTreeMap;
use std::path::Path;

/// The largest note vaultdm edits.
pub const MAX_EDIT_BYTES: u64 = 4 * 1024 * 1024;

/// One edit of a file, kept so it can be made again on a note that changed since the plan
/// (after checking that what it replaces is still there).
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// Set a frontmatter key; `expect` is the raw value it held when planned.
    Set {
        /// The key's spellings.
        keys: &'static [&'static str],
        /// The new value.
        value: Scalar,
        /// The old raw value (`None`: the key was missing).
        expect: Option<String>,
    },
    /// Add a list item.
    ListAdd {
        /// The key's spellings.
        keys: &'static [&'static str],
        /// The item.
        item: String,
    },
    /// Remove a list item.
    ListRemove {
        /// The key's spellings.
        keys: &'static [&'static str],
        /// The item.
        item: String,
    },
    /// Append a timeline event.
    Event {
        /// The day.
        day: i64,
        /// The time of day, for a new day heading.
        time: Option<String>,
        /// The event.
        text: String,
    },
    /// Set the clock in the temporal index; `expect` is the day it held.
    Clock {
        /// The new day.
        day: Option<i64>,
        /// The new time of day.
        time: Option<String>,
        /// The day it held when planned.
        expect: Option<i64>,
    },
    /// Move a thread to another priority section.
    ThreadMove {
        /// The thread's title.
        title: String,
        /// The section.
        to: String,
    },
    /// Set a thread's next step.
    ThreadNext {
        /// The thread's title.
        title: String,
        /// The next step.
        next: String,
    },
    /// Add a thread.
    ThreadAdd {
        /// The section.
        priority: String,
        /// The title.
        title: String,
        /// The summary.
        summary: String,
        /// The next step.
        next: Option<String>,
    },
    /// Rename a tag (a status kept as a tag: `npc/alive` -> `npc/dead`).
    Tag {
        /// The tag as written.
        old: String,
        /// The new tag.
        new: String,
    },
    /// Create a new note with this text.
    Create {
        /// The whole note.
        text: String,
    },
}

impl Op {
    /// Makes this edit on `text`.
    pub fn apply(&self, text: &str) -> Result<String, OpError> {
        let r = match self {
            Op::Set { keys, value, .. } => edit::set_field(text, keys, value),
            Op::ListAdd { keys, item } => edit::list_add(text, keys, item),
            Op::ListRemove { keys, item } => edit::list_remove(text, keys, item),
            Op::Tag { old, new } => edit::tag_rename(text, old, new),
            Op::Event { day, time, text: t } => edit::append_event(text, *day, time.as_deref(), t),
            Op::Clock { day, time, .. } => edit::set_temporal(text, *day, time.as_deref()),
            Op::ThreadMove { title, to } => edit::thread_move(text, title, to),
            Op::ThreadNext { title, next } => edit::thread_set_next(text, title, next),
            Op::ThreadAdd {
                priority,
                title,
                summary,
                next,
            } => edit::thread_add(text, priority, title, summary, next.as_deref()),
            Op::Create { text: t } => {
                return if text.is_empty() {
                    Ok(t.clone())
                } else {
                    Err(OpError::Exists)
                }
            }
        };
        r.map_err(OpError::from)
    }

    /// The value this edit replaces, as planned: (key, raw value), for the edits that
    /// replace one.
    pub fn replaces(&self) -> Option<(&str, Option<String>)> {
        match self {
            Op::Set { keys, expect, .. } => Some((keys[0], expect.clone())),
            Op::Clock { expect, .. } => Some(("current_day", expect.map(|d| d.to_string()))),
            _ => None,
        }
    }

    /// On a note that changed since the plan: whether this edit still applies to what the
    /// GM sees (the value it replaces is still there), else why not.
    pub fn still_holds(&self, text: &str) -> Result<(), OpError> {
        match self {
            Op::Set { keys, expect, .. } => {
                let now = edit::get_field(text, keys).map(|(_, v)| v);
                if now.as_deref().map(str::trim) == expect.as_deref().map(str::trim) {
                    Ok(())
                } else {
                    Err(OpError::ValueChanged {
                        key: keys[0],
                        now,
                        was: expect.clone(),
                    })
                }
            }
            Op::Clock { expect, .. } => {
                let now = serde_json::from_str::<serde_json::Value>(text)
                    .ok()
                    .and_then(|v| v.get("current_day").and_then(serde_json::Value::as_i64));
                if now == *expect {
                    Ok(())
                } else {
                    Err(OpError::DayChanged { now, was: *expect })
                }
            }
            Op::Tag { old, .. } => {
                if edit::tags_as_written(text)
                    .iter()
                    .any(|t| t.eq_ignore_ascii_case(old))
                {
                    Ok(())
                } else {
                    Err(OpError::TagGone { tag: old.clone() })
                }
            }
            Op::Create { .. } if !text.is_empty() => Err(OpError::CreatedMeanwhile),
            _ => Ok(()),
        }
    }
}

/// The edits of one file.
#[derive(Debug, Clone, PartialEq)]
pub struct FileEdit {
    /// Vault-relative path, `/`-separated.
    pub path: String,
    /// The text when planned (`None`: the file does not exist yet).
    pub before: Option<String>,
    /// The text after the edits.
    pub after: String,
    /// The edits, in order.
    pub ops: Vec<Op>,
}

/// A change that will be made, with its diff line.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    /// The change.
    pub change: Change,
    /// One line for the GM: `Brannock Tull: HP 22/30 -> 15/30`.
    pub summary: String,
    /// The change as planned: a relative number (`-7`) made the absolute value it was
    /// planned as (`15`).
    pub absolute: Change,
}

/// A change that will not be made, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejected {
    /// The change.
    pub change: Change,
    /// Why, in the GM's words.
    pub reason: String,
}

/// What a set of changes does to the vault.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    /// The changes that hold, in order.
    pub planned: Vec<Planned>,
    /// The changes that do not, with reasons.
    pub rejected: Vec<Rejected>,
    /// The changes canon already says (HP already 23, the rope already carried): nothing
    /// to write; their lines say so.
    pub unchanged: Vec<Planned>,
    /// The files to write.
    pub files: Vec<FileEdit>,
}

impl Plan {
    /// Nothing to write.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The values this plan's edits replace, as they were when planned.
    pub fn replaces(&self) -> Vec<Was> {
        self.files
            .iter()
            .flat_map(|f| {
                f.ops.iter().filter_map(|op| {
                    op.replaces().map(|(key, value)| Was {
                        path: f.path.clone(),
                        key: key.to_string(),
                        value,
                    })
                })
            })
            .collect()
    }
}

/// What `change` is shown as and made against on canon as it is now: its diff line, its
/// absolute form and the values it replaces; or why it cannot be made.
pub fn basis(c: &Campaign, m: &Matcher, root: &Path, change: &Change) -> Result<Basis, PlanError> {
    let (p, why) = plan_why(c, m, root, std::slice::from_ref(change));
    if let Some(e) = why.into_iter().next() {
        return Err(e);
    }
    let was = p.replaces();
    let planned = p
        .planned
        .into_iter()
        .chain(p.unchanged)
        .next()
        .ok_or(PlanError::NothingToPlan)?;
    Ok(Basis {
        change: planned.absolute,
        shown: planned.summary,
        was,
        stale: false,
    })
}

struct Files<'a> {
    root: &'a Path,
    files: BTreeMap<String, FileEdit>,
    order: Vec<String>,
}

impl Files<'_> {
    /// The current planned text of `path` (reading it on first use).
    fn text(&mut self, path: &str) -> Result<String, ReadError> {
        if let Some(f) = self.files.get(path) {
            return Ok(f.after.clone());
        }
        let before = read_note(self.root, path)?;
        let after = before.clone().unwrap_or_default();
        self.files.insert(
            path.to_string(),
            FileEdit {
                path: path.to_string(),
                before,
                after: after.clone(),
                ops: Vec::new(),
            },
        );
        self.order.push(path.to_string());
        Ok(after)
    }

    fn exists(&mut self, path: &str) -> Result<bool, ReadError> {
        self.text(path)?;
        Ok(self
            .files
            .get(path)
            .is_some_and(|f| f.before.is_some() || !f.after.is_empty()))
    }

    fn edit(&mut self, path: &str, op: Op) -> Result<(), PlanError> {
        let text = self.text(path)?;
        let after = op.apply(&text).map_err(|source| PlanError::Edit {
            path: path.to_string(),
            source,
        })?;
        if let Some(f) = self.files.get_mut(path) {
            f.after = after;
            f.ops.push(op);
        }
        Ok(())
    }
}

/// Reads a note's text as it is on disk, byte for byte (`None` when missing). A note that is
/// not UTF-8 or lies outside the vault is not edited.
pub fn read_note(root: &Path, path: &str) -> Result<Option<String>, ReadError> {
    match boundary::read_inside(root, Path::new(path), MAX_EDIT_BYTES) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|e| ReadError::NotUtf8 {
                path: path.to_string(),
                source: e.utf8_error(),
            }),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Plans `changes` on the campaign read from the vault at `root`.
pub fn plan(c: &Campaign, m: &Matcher, root: &Path, changes: &[Change]) -> Plan {
    plan_why(c, m, root, changes).0
}

/// [`plan`], and why each rejected change was rejected, in the order of
/// [`Plan::rejected`] (whose reasons are these errors' messages).
fn plan_why(c: &Campaign, m: &Matcher, root: &Path, changes: &[Change]) -> (Plan, Vec<PlanError>) {
    let mut files = Files {
        root,
        files: BTreeMap::new(),
        order: Vec::new(),
    };
    let mut out = Plan::default();
    let mut why = Vec::new();
    let mut clock = Clock {
        day: c.day,
        time: c.time.clone(),
    };
    let mut new_names: Vec<(String, String)> = Vec::new(); // (norm name, path) of notes created
    let hp_bounds = crate::config::Config::load(root).0.write.hp_bounds;
    for change in changes {
        let snapshot = (files.files.clone(), files.order.clone(), clock.clone());
        let mut cx = Cx {
            c,
            m,
            files: &mut files,
            clock: &mut clock,
            new_names: &mut new_names,
            absolute: None,
            hp_bounds,
        };
        let r = cx.one(change);
        let cx_absolute = cx.absolute.filter(|_| is_relative(change));
        let same = |f: &FileEdit| {
            snapshot
                .0
                .get(&f.path)
                .map_or(f.before.as_deref(), |s| Some(s.after.as_str()))
                == Some(f.after.as_str())
        };
        let changed = files.files.values().any(|f| !same(f));
        match r {
            Ok(summary) if !changed => {
                (files.files, files.order, clock) = snapshot;
                out.unchanged.push(Planned {
                    change: change.clone(),
                    summary: already(&summary),
                    absolute: change.clone(),
                })
            }
            Ok(summary) => out.planned.push(Planned {
                change: change.clone(),
                summary,
                absolute: match (change, cx_absolute) {
                    (Change::Set { entity, field, .. }, Some(n)) => Change::Set {
                        entity: entity.clone(),
                        field: field.clone(),
                        value: n.into(),
                    },
                    _ => change.clone(),
                },
            }),
            Err(e) => {
                (files.files, files.order, clock) = snapshot;
                out.rejected.push(Rejected {
                    change: change.clone(),
                    reason: e.to_string(),
                });
                why.push(e);
            }
        }
    }
    out.files = files
        .order
        .iter()
        .filter_map(|p| files.files.remove(p))
        .filter(|f| f.before.as_deref() != Some(f.after.as_str()) && !f.ops.is_empty())
        .collect();
    (out, why)
}

#[derive(Debug, Clone)]
struct Clock {
    day: Option<i64>,
    time: Option<String>,
}

impl Clock {
    fn show(&self) -> String {
        match (&self.day, &self.time) {
            (Some(d), Some(t)) => format!("Day {d} {t}"),
            (Some(d), None) => format!("Day {d}"),
            (None, Some(t)) => t.clone(),
            (None, None) => "unset".into(),
        }
    }
}

struct Cx<'a, 'b> {
    c: &'a Campaign,
    m: &'a Matcher,
    files: &'b mut Files<'a>,
    clock: &'b mut Clock,
    new_names: &'b mut Vec<(String, String)>,
    /// The number a `set` came to (for a relative change, the absolute value it was planned
    /// as).
    absolute: Option<i64>,
    hp_bounds: HpBounds,
}

/// A diff line for a change canon already says: `Rowen: HP 23 -> 23` becomes
/// `Rowen: HP already 23`; `Kit: inventory + rope`, `Kit: inventory already has rope`.
fn already(summary: &str) -> String {
    if let Some((left, right)) = summary.rsplit_once(" -> ") {
        if let Some(label) = left.strip_suffix(right) {
            return format!("{label}already {right}");
        }
        return format!("{summary} (already so)");
    }
    if let Some((left, item)) = summary.rsplit_once(" + ") {
        return format!("{left} already has {item}");
    }
    if let Some((left, item)) = summary.rsplit_once(" - ") {
        return format!("{left} has no {item}");
    }
    format!("{summary} (already so)")
}

/// Whether a change's value is relative (`+5`, `-7`).
fn is_relative(change: &Change) -> bool {
    matches!(change, Change::Set { value: serde_json::Value::String(s), .. }
        if s.trim().starts_with(['+', '-']))
}

/// The one spelling of `keys` that is `key`, as a list of one (`keys` when none is).
fn static_key(keys: &'static [&'static str], key: &str) -> &'static [&'static str] {
    keys.iter()
        .position(|k| k.eq_ignore_ascii_case(key))
        .map_or(keys, |i| &keys[i..=i])
}

/// Why an HP is out of bounds for a max: above it, or below minus it (the floor: a blow
/// that leaves a creature at minus its max kills it outright, in 5e and in the -10 rules
/// of older editions alike).
fn hp_out_of_bounds(hp: i64, max: Option<i64>) -> Option<String> {
    let max = max.filter(|m| *m > 0)?;
    if hp > max {
        Some(format!("above max HP {max}"))
    } else if hp < -max {
        Some(format!("below -{max}, the floor for max HP {max}"))
    } else {
        None
    }
}

/// The keys a note's type is read from.
const TYPE_KEYS: &[&str] = &["type", "category", "kind"];

/// How a vault marks a note's kind.
#[derive(Debug, Clone, PartialEq)]
enum Typing {
    /// A key and its value, as the vault writes them (`type: NPC`).
    Key(String, String),
    /// A tag (`npc`, `greyfen/npc`, `npc/alive`).
    Tag(String),
}

/// The part of a kind tag that says the kind: a sub-type after it is dropped
/// (`place/tavern` -> `place`), a status kept in it is not (`npc/alive` stays).
fn kind_tag(tag: &str, kind: NoteKind) -> String {
    let mut segs: Vec<&str> = tag.split('/').collect();
    while segs.len() > 1 {
        let shorter = segs[..segs.len() - 1].join("/");
        let last = segs[segs.len() - 1];
        if keys::tag_status(last).is_some()
            || crate::canon::kind::tag_kind(&shorter.to_lowercase()) != Some(kind)
        {
            break;
        }
        segs.pop();
    }
    segs.join("/")
}

/// A new note with `fm` in order, typed by `typing` (a tag goes into `tags: [...]`).
fn typed_note(
    name: &str,
    fm: Vec<(String, String)>,
    typing: &Typing,
    body: &str,
) -> Result<String, PlanError> {
    let fm: Vec<(&str, Scalar)> = fm
        .iter()
        .map(|(k, v)| (k.as_str(), Scalar::Text(v.clone())))
        .collect();
    let text = edit::new_note(name, &fm, body);
    match typing {
        Typing::Tag(t) => edit::list_add(&text, edit::TAG_KEYS, t).map_err(PlanError::NewNote),
        Typing::Key(..) => Ok(text),
    }
}

/// Status words one another's tag may say instead (a vault writes one of them).
const STATUS_SYNONYMS: &[&[&str]] = &[
    &["dead", "deceased", "killed", "slain"],
    &["missing", "vanished", "disappeared", "gone"],
    &["departed", "left", "fled"],
    &["captured", "imprisoned"],
    &["exiled", "banished"],
    &["inactive", "retired", "benched", "former"],
];

/// Attitude words one another's tag may say instead.
const DISPOSITION_SYNONYMS: &[&[&str]] = &[
    &["positive", "friendly", "ally", "allied", "helpful", "green"],
    &["negative", "hostile", "enemy", "unfriendly", "red"],
    &["neutral", "indifferent", "unknown", "yellow"],
];

/// Whether tag `t` has the segments of `segs` but for segment `seg` (in any case).
fn same_but(t: &str, segs: &[&str], seg: usize) -> bool {
    let o: Vec<&str> = t.split('/').collect();
    o.len() == segs.len() && (0..segs.len()).all(|i| i == seg || o[i].eq_ignore_ascii_case(segs[i]))
}

/// The status tag of a note's text, by canon's rule (the first in sorted order, as the
/// reader finds it), as written.
fn status_tag_of(text: &str) -> Option<String> {
    let mut tags: Vec<String> = edit::tags_as_written(text)
        .into_iter()
        .filter(|t| keys::tag_status(t).is_some())
        .collect();
    tags.sort_by_key(|t| t.to_lowercase());
    tags.into_iter().next()
}

/// The status canon reads from a tag (lower case; empty when it reads none).
fn status_read_as(tag: &str) -> String {
    keys::tag_status(tag).map(|(_, s)| s).unwrap_or_default()
}

/// `word` (lower case) in the case `like` is written in: `Dead` after `Alive`, `DEAD`
/// after `ALIVE`, `dead` after `alive` (or nothing to go by).
fn same_case(word: &str, like: &str) -> String {
    let letters: Vec<char> = like.chars().filter(|c| c.is_alphabetic()).collect();
    if letters.len() > 1 && letters.iter().all(|c| c.is_uppercase()) {
        word.to_uppercase()
    } else if letters.first().is_some_and(|c| c.is_uppercase()) {
        let mut c = word.chars();
        c.next()
            .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
            .unwrap_or_default()
    } else {
        word.to_string()
    }
}

/// A file name for a new note titled `title`: the title itself (without the characters
/// Obsidian refuses in names) when the vault names notes by their titles (`spaced`), else
/// its slug.
fn file_stem(title: &str, spaced: bool) -> String {
    if spaced {
        title
            .chars()
            .filter(|c| !"/\\:*?\"<>|#^[]".contains(*c))
            .collect::<String>()
            .trim()
            .to_string()
    } else {
        slug(title)
    }
}

fn stem(path: &str) -> &str {
    let file = path.rsplit('/').next().unwrap_or(path);
    file.strip_suffix(".md").unwrap_or(file)
}

fn text_value(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) => Some(s.trim().to_string()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
    .filter(|s| !s.is_empty())
}

/// A number, or `+N` / `-N` relative to `current`.
fn number(v: &serde_json::Value, current: Option<i64>, field: Field) -> Result<i64, PlanError> {
    let bad = || PlanError::NotANumber {
        field,
        value: v.clone(),
    };
    match v {
        serde_json::Value::Number(n) => n.as_i64().ok_or_else(bad),
        serde_json::Value::String(s) => {
            let s = s.trim();
            let relative = s.starts_with('+') || s.starts_with('-');
            let n: i64 = s.trim_start_matches('+').parse().map_err(|_| bad())?;
            if relative {
                let cur = current.ok_or_else(|| PlanError::NoValueYet {
                    field,
                    by: s.to_string(),
                })?;
                Ok(cur.saturating_add(n))
            } else {
                Ok(n)
            }
        }
        _ => Err(bad()),
    }
}

fn clean_line(s: &str, what: &'static str) -> Result<String, PlanError> {
    let t = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if t.is_empty() {
        return Err(PlanError::Empty { what });
    }
    if t.chars().count() > 500 {
        return Err(PlanError::TooLong { what });
    }
    Ok(t)
}

fn priority_word(p: &str) -> Result<Priority, PlanError> {
    Priority::parse(p).ok_or_else(|| PlanError::UnknownPriority {
        word: p.to_string(),
    })
}

/// The heading of a priority's section in the list of threads (`Urgent`).
pub(super) fn section_of(p: Priority) -> &'static str {
    match p {
        Priority::Urgent => "Urgent",
        Priority::High => "High",
        Priority::Medium => "Medium",
        Priority::Low => "Low",
        Priority::Resolved => "Resolved",
    }
}

/// The entity a `set` changes: who, its name, and its note's path and text before the
/// change.
struct SetOn {
    who: Who,
    path: String,
    name: String,
    text: String,
}

/// A PC's or an NPC's numbers as canon read them.
struct Stats {
    hp: Option<i64>,
    hp_max: Option<i64>,
    ac: Option<i64>,
}

/// The HP, max HP and AC of `who`.
fn stats(c: &Campaign, who: Who) -> Stats {
    let (hp, hp_max, ac) = match who {
        Who::Pc(i) => (c.pcs[i].hp_current, c.pcs[i].hp_max, c.pcs[i].ac),
        Who::Npc(i) => (c.npcs[i].hp_current, c.npcs[i].hp_max, c.npcs[i].ac),
    };
    Stats { hp, hp_max, ac }
}

/// A number in a diff line (`unset` when there is none).
fn shown_number(n: Option<i64>) -> String {
    n.map_or("unset".to_string(), |n| n.to_string())
}

/// HP in a diff line: `17/27`, or the current HP alone when there is no maximum.
fn shown_hp(cur: Option<i64>, max: Option<i64>) -> String {
    match max {
        Some(m) => format!("{}/{m}", shown_number(cur)),
        None => shown_number(cur),
    }
}

/// A new quest note's frontmatter: the model note's keys, in its order, with the new
/// quest's values.
struct QuestFront {
    /// The keys and values, in order.
    keys: Vec<(String, Scalar)>,
    /// The model's tags key and how many keys come before it.
    tags_key: Option<(String, usize)>,
    /// The summary went into a key (else it goes in the body).
    has_summary: bool,
    /// The next step went into a key (else it goes in the body).
    has_next: bool,
}

/// The frontmatter of a new quest note `title` (priority `p`, open as `open_word`) with the
/// keys of the model's frontmatter `fm`: its name, type, status, priority, summary and next
/// step keys; a priority other than medium is written even when the model has no key for it.
fn quest_front(
    fm: &crate::vault::frontmatter::Frontmatter,
    title: &str,
    p: Priority,
    summary: &str,
    next: Option<&str>,
    open_word: &str,
) -> QuestFront {
    let mut keys_in_order: Vec<(usize, String)> = fm
        .iter()
        .map(|(k, _)| (fm.line_of(k), k.to_string()))
        .collect();
    keys_in_order.sort();
    let mut out = QuestFront {
        keys: Vec::new(),
        tags_key: None,
        has_summary: false,
        has_next: false,
    };
    let mut has_priority = false;
    let front = &mut out.keys;
    for (_, k) in &keys_in_order {
        let k = k.as_str();
        if matches!(k, "tags" | "tag") {
            out.tags_key = Some((k.to_string(), front.len()));
        } else if matches!(k, "name" | "title") {
            front.push((k.into(), Scalar::Text(title.to_string())));
        } else if matches!(k, "type" | "kind" | "category") {
            if let Some(v) = fm.text(&[k]) {
                front.push((k.into(), Scalar::Text(v)));
            }
        } else if keys::THREAD_STATUS.contains(&k) {
            front.push((k.into(), Scalar::Text(open_word.to_string())));
        } else if keys::PRIORITY.contains(&k) {
            has_priority = true;
            let word = section_of(p).to_lowercase();
            front.push((k.into(), Scalar::Text(cased_like(&word, fm.text(&[k])))));
        } else if keys::SUMMARY.contains(&k) && !summary.is_empty() {
            out.has_summary = true;
            front.push((k.into(), Scalar::Text(summary.to_string())));
        } else if matches!(k, "next" | "next_step") {
            if let Some(n) = next {
                out.has_next = true;
                front.push((k.into(), Scalar::Text(n.to_string())));
            }
        }
    }
    if !has_priority && p != Priority::Medium {
        front.push((
            "priority".into(),
            Scalar::Text(section_of(p).to_lowercase()),
        ));
    }
    out
}

/// `word` capitalised when `like` (a value as the vault wrote it) is.
fn cased_like(word: &str, like: Option<String>) -> String {
    match like {
        Some(l) if l.chars().next().is_some_and(char::is_uppercase) => {
            let mut c = word.chars();
            c.next()
                .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
                .unwrap_or_default()
        }
        _ => word.to_string(),
    }
}

/// A new quest note's `text` with the `tags` its folder's notes share under the model's
/// tags key (`tags_key`: the key and how many keys come before it): a flow list in the
/// model's place among the keys, or one item at a time when a tag needs quoting.
fn with_quest_tags(
    mut text: String,
    tags_key: Option<(String, usize)>,
    tags: &[String],
) -> Result<String, PlanError> {
    let Some((k, at)) = tags_key.filter(|_| !tags.is_empty()) else {
        return Ok(text);
    };
    let plain = |t: &String| {
        t.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '/' | '-' | '_'))
    };
    if tags.iter().all(plain) {
        // In the model's place among the keys, as a flow list.
        let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
        lines.insert(at + 1, format!("{k}: [{}]", tags.join(", ")));
        text = lines.join("\n");
    } else {
        for t in tags {
            text = edit::list_add(&text, &[k.as_str()], t).map_err(PlanError::NewNote)?;
        }
    }
    Ok(text)
}

impl Cx<'_, '_> {
    /// [`number`], remembering the value it came to.
    fn number(
        &mut self,
        v: &serde_json::Value,
        current: Option<i64>,
        field: Field,
    ) -> Result<i64, PlanError> {
        let n = number(v, current, field)?;
        self.absolute = Some(n);
        Ok(n)
    }

    fn one(&mut self, change: &Change) -> Result<String, PlanError> {
        match change {
            Change::Set {
                entity,
                field,
                value,
            } => {
                let f = Field::parse(field).ok_or_else(|| PlanError::UnknownField {
                    field: field.clone(),
                })?;
                let who = resolve::entity(self.c, self.m, entity)?;
                match f {
                    Field::Location => {
                        let to = text_value(value).ok_or(PlanError::NotText { field: f })?;
                        self.move_one(who, &to)
                    }
                    Field::Conditions | Field::Inventory => {
                        Err(PlanError::ListAsAWhole { field: f })
                    }
                    _ => self.set(who, f, value),
                }
            }
            Change::Move { entity, to } => {
                if resolve::is_party(self.c, entity) {
                    self.move_party(to)
                } else {
                    let who = resolve::entity(self.c, self.m, entity)?;
                    self.move_one(who, to)
                }
            }
            Change::Add {
                entity,
                field,
                item,
            } => self.list(entity, field, item, true),
            Change::Remove {
                entity,
                field,
                item,
            } => self.list(entity, field, item, false),
            Change::Time { advance, day, time } => self.time(*advance, *day, time.as_deref()),
            Change::Event { text, day } => self.event(text, *day),
            Change::NewThread {
                title,
                priority,
                summary,
                next,
            } => self.new_thread(
                title,
                priority.as_deref(),
                summary.as_deref(),
                next.as_deref(),
            ),
            Change::Resolve { thread } => self.thread_priority(thread, Priority::Resolved),
            Change::Prioritise { thread, priority } => {
                self.thread_priority(thread, priority_word(priority)?)
            }
            Change::Next { thread, next } => self.thread_next(thread, next),
            Change::NewNpc {
                name,
                role,
                location,
                disposition,
                summary,
            } => self.new_npc(
                name,
                role.as_deref(),
                location.as_deref(),
                disposition.as_deref(),
                summary.as_deref(),
            ),
            Change::NewLocation {
                name,
                parent,
                description,
            } => self.new_location(name, parent.as_deref(), description.as_deref()),
        }
    }

    fn set(&mut self, who: Who, f: Field, value: &serde_json::Value) -> Result<String, PlanError> {
        let path = who.path(self.c).to_string();
        let name = who.name(self.c).to_string();
        let text = self.files.text(&path)?;
        let on = SetOn {
            who,
            path,
            name,
            text,
        };
        match f {
            Field::Hp => self.set_hp(&on, value),
            Field::MaxHp => self.set_max_hp(&on, value),
            Field::Ac => {
                let old = stats(self.c, who).ac;
                let n = self.number(value, old, f)?;
                self.set_key(&on.path, keys::AC, Scalar::Int(n))?;
                Ok(format!("{}: AC {} -> {n}", on.name, shown_number(old)))
            }
            Field::Level => {
                let Who::Pc(i) = who else {
                    return Err(PlanError::PcOnly {
                        name: on.name.clone(),
                        field: f,
                    });
                };
                let old = self.c.pcs[i].level;
                let n = self.number(value, old, f)?;
                self.set_key(&on.path, keys::LEVEL, Scalar::Int(n))?;
                Ok(format!("{}: level {} -> {n}", on.name, shown_number(old)))
            }
            Field::Gold => self.set_gold(&on, value),
            Field::Status => self.set_status(&on, value),
            Field::Disposition | Field::Role => self.set_npc_word(&on, f, value),
            Field::Location | Field::Conditions | Field::Inventory => {
                Err(PlanError::NotSetThisWay { field: f })
            }
        }
    }

    /// Sets the current HP: `hp: 17/27` keeps its maximum beside it; HP past the bounds is
    /// refused or flagged as the configuration says.
    fn set_hp(&mut self, on: &SetOn, value: &serde_json::Value) -> Result<String, PlanError> {
        let Stats { hp, hp_max, .. } = stats(self.c, on.who);
        let name = &on.name;
        let n = self.number(value, hp, Field::Hp)?;
        let (value, new_max) = match edit::get_field(&on.text, keys::HP) {
            // `hp: 17/27` keeps its maximum beside it.
            Some((_, raw)) if raw.contains('/') => {
                let max = raw.split('/').nth(1).unwrap_or("").trim().to_string();
                (Scalar::Text(format!("{n}/{max}")), hp_max)
            }
            _ => (Scalar::Int(n), hp_max),
        };
        let flag = match (hp_out_of_bounds(n, new_max), self.hp_bounds) {
            (Some(why), HpBounds::Refuse) => {
                return Err(PlanError::HpOutOfBounds {
                    hp: n,
                    why,
                    name: name.clone(),
                })
            }
            (Some(why), HpBounds::Flag) => format!(" (flagged: {why})"),
            (None, _) => String::new(),
        };
        self.set_key(&on.path, keys::HP, value)?;
        Ok(format!(
            "{name}: HP {} -> {}{flag}",
            shown_hp(hp, hp_max),
            shown_hp(Some(n), new_max)
        ))
    }

    /// Sets the maximum HP: beside the current HP when the note writes `hp: 17/27`.
    fn set_max_hp(&mut self, on: &SetOn, value: &serde_json::Value) -> Result<String, PlanError> {
        let hp_max = stats(self.c, on.who).hp_max;
        let n = self.number(value, hp_max, Field::MaxHp)?;
        if n <= 0 {
            return Err(PlanError::MaxHpNotPositive { max: n });
        }
        match edit::get_field(&on.text, keys::HP) {
            Some((_, raw))
                if raw.contains('/') && edit::get_field(&on.text, keys::HP_MAX).is_none() =>
            {
                let cur = raw.split('/').next().unwrap_or("").trim().to_string();
                self.set_key(&on.path, keys::HP, Scalar::Text(format!("{cur}/{n}")))?;
            }
            _ => self.set_key(&on.path, keys::HP_MAX, Scalar::Int(n))?,
        }
        Ok(format!(
            "{}: max HP {} -> {n}",
            on.name,
            shown_number(hp_max)
        ))
    }

    /// Sets a PC's gold, never below 0.
    fn set_gold(&mut self, on: &SetOn, value: &serde_json::Value) -> Result<String, PlanError> {
        let name = &on.name;
        let Who::Pc(i) = on.who else {
            return Err(PlanError::PcOnly {
                name: name.clone(),
                field: Field::Gold,
            });
        };
        let old = self.c.pcs[i].gold;
        let n = self.number(value, old, Field::Gold)?;
        if n < 0 {
            return Err(PlanError::NotEnoughGold {
                name: name.clone(),
                gold: old,
                left: n,
            });
        }
        self.set_key(&on.path, keys::GOLD, Scalar::Int(n))?;
        Ok(format!("{name}: gold {} -> {n}", shown_number(old)))
    }

    /// Sets a status: in its key (written as the vault writes statuses, or as `alive:
    /// true/false`), with a status tag beside it changed to match; or, with no key, in its
    /// status tag.
    fn set_status(&mut self, on: &SetOn, value: &serde_json::Value) -> Result<String, PlanError> {
        let c = self.c;
        let (path, name) = (&on.path, &on.name);
        let new = text_value(value).ok_or(PlanError::NotText {
            field: Field::Status,
        })?;
        let new = clean_line(&new, "status")?.to_lowercase();
        let (keys, old) = match on.who {
            Who::Pc(i) => (keys::PC_STATUS, c.pcs[i].status.clone()),
            Who::Npc(i) => (keys::NPC_STATUS, c.npcs[i].status.clone()),
        };
        let held = edit::get_field(&on.text, keys);
        // No status key, but a status tag (`npc/alive`): the tag is changed.
        if held.is_none() {
            if let Some(tag) = status_tag_of(&on.text) {
                let new_tag = self.set_status_tag(on, &tag, &new)?;
                return Ok(format!(
                    "{name}: status {old} -> {new} (tag {tag} -> {new_tag})"
                ));
            }
        }
        // `alive: true/false`, as some GMs keep it.
        let value = match &held {
            Some((k, _)) if k.eq_ignore_ascii_case("alive") => Scalar::Text(
                if matches!(new.as_str(), "alive" | "active") {
                    "true"
                } else {
                    "false"
                }
                .into(),
            ),
            Some((_, raw)) if !raw.trim().is_empty() => Scalar::Text(same_case(&new, raw)),
            _ => Scalar::Text(same_case(&new, &self.status_sample(keys))),
        };
        let shown = match (&held, &value) {
            (Some((k, _)), _) if k.eq_ignore_ascii_case("alive") => new.clone(),
            (_, Scalar::Text(t)) => t.clone(),
            _ => new.clone(),
        };
        self.set_key(path, keys, value)?;
        let also = self.match_status_tag(path, &new)?;
        Ok(format!("{name}: status {old} -> {shown}{also}"))
    }

    /// Changes the status tag `tag` of a note with no status key to say `new`; the new tag.
    fn set_status_tag(&mut self, on: &SetOn, tag: &str, new: &str) -> Result<String, PlanError> {
        let new_tag = self.status_tag(tag, new)?;
        self.files.edit(
            &on.path,
            Op::Tag {
                old: tag.to_string(),
                new: new_tag.clone(),
            },
        )?;
        let now = status_tag_of(&self.files.text(&on.path)?)
            .and_then(|t| keys::tag_status(&t).map(|(_, s)| s));
        if now.as_deref() != Some(status_read_as(&new_tag).as_str()) {
            return Err(PlanError::StatusInSeveralTags {
                name: on.name.clone(),
            });
        }
        Ok(new_tag)
    }

    /// A status tag beside the key says the same after the change: what the diff line adds.
    fn match_status_tag(&mut self, path: &str, new: &str) -> Result<String, PlanError> {
        let Some(tag) = status_tag_of(&self.files.text(path)?) else {
            return Ok(String::new());
        };
        match self.status_tag(&tag, new) {
            Ok(new_tag) if !new_tag.eq_ignore_ascii_case(&tag) => {
                self.files.edit(
                    path,
                    Op::Tag {
                        old: tag.clone(),
                        new: new_tag.clone(),
                    },
                )?;
                Ok(format!(" (and tag {tag} -> {new_tag})"))
            }
            Ok(_) => Ok(String::new()),
            Err(_) => Ok(format!(" (the tag {tag} is left as it is)")),
        }
    }

    /// Sets an NPC's disposition or role (`f`); a disposition with no key but an attitude
    /// tag (`iff/positive`) changes the tag.
    fn set_npc_word(
        &mut self,
        on: &SetOn,
        f: Field,
        value: &serde_json::Value,
    ) -> Result<String, PlanError> {
        let (path, name) = (&on.path, &on.name);
        let Who::Npc(i) = on.who else {
            return Err(PlanError::NpcOnly {
                name: name.clone(),
                field: f,
            });
        };
        let new = text_value(value).ok_or(PlanError::NotText { field: f })?;
        let new = clean_line(&new, f.label())?;
        let (keys, old) = if f == Field::Role {
            (keys::ROLE, self.c.npcs[i].role.clone())
        } else {
            (keys::DISPOSITION, self.c.npcs[i].disposition.clone())
        };
        let old = old.as_deref().unwrap_or("unset");
        if f == Field::Disposition && edit::get_field(&on.text, keys).is_none() {
            if let Some(line) = self.set_disposition_tag(on, old, &new)? {
                return Ok(line);
            }
        }
        self.set_key(path, keys, Scalar::Text(new.clone()))?;
        Ok(format!("{name}: {} {old} -> {new}", f.label()))
    }

    /// No attitude key, but an attitude tag (`iff/positive`): the tag is changed to say
    /// `new`, and the diff line says so. `None` when the note has no such tag.
    fn set_disposition_tag(
        &mut self,
        on: &SetOn,
        old: &str,
        new: &str,
    ) -> Result<Option<String>, PlanError> {
        let mut tags: Vec<String> = edit::tags_as_written(&on.text)
            .into_iter()
            .filter(|t| keys::tag_disposition(t).is_some())
            .collect();
        tags.sort_by_key(|t| t.to_lowercase());
        let Some(tag) = tags.into_iter().next() else {
            return Ok(None);
        };
        let new_tag = self.disposition_tag(&tag, new)?;
        self.files.edit(
            &on.path,
            Op::Tag {
                old: tag.clone(),
                new: new_tag.clone(),
            },
        )?;
        Ok(Some(format!(
            "{}: disposition {old} -> {} (tag {tag} -> {new_tag})",
            on.name,
            keys::tag_disposition(&new_tag).map_or(new.to_string(), |(_, d)| d)
        )))
    }

    /// A status as the vault writes it, for a note that has none yet: the status key of
    /// the first other note that has one.
    fn status_sample(&self, keys: &[&str]) -> String {
        self.c
            .npcs
            .iter()
            .map(|n| n.source.path.as_str())
            .chain(self.c.pcs.iter().map(|p| p.source.path.as_str()))
            .take(200)
            .filter_map(|p| read_note(self.files.root, p).ok().flatten())
            .find_map(|t| edit::get_field(&t, keys).map(|(_, v)| v))
            .filter(|v| v.chars().any(char::is_alphabetic))
            .unwrap_or_default()
    }

    /// The tag a status tag becomes for the status `new` (lower case): its status segment
    /// replaced by the word the vault's own tags use for it (`npc/alive` -> `npc/dead`, or
    /// `npc/deceased` in a vault that writes that), checked to read back as `new` and as the
    /// same kind of note.
    fn status_tag(&self, tag: &str, new: &str) -> Result<String, PlanError> {
        let (seg, _) = keys::tag_status(tag).ok_or_else(|| PlanError::NotAStatusTag {
            tag: tag.to_string(),
        })?;
        let segs: Vec<&str> = tag.split('/').collect();
        let same_prefix = |t: &str| same_but(t, &segs, seg);
        let vocab = self.tag_vocab(
            |t| same_prefix(t) && keys::tag_status(t).is_some_and(|(i, _)| i == seg),
            seg,
        );
        let want = if new == "active" { "alive" } else { new };
        let group = STATUS_SYNONYMS
            .iter()
            .find(|g| g.contains(&want))
            .copied()
            .unwrap_or(&[]);
        let word = vocab
            .iter()
            .find(|w| w.eq_ignore_ascii_case(want))
            .or_else(|| {
                group
                    .iter()
                    .find_map(|g| vocab.iter().find(|w| w.eq_ignore_ascii_case(g)))
            })
            .cloned()
            .unwrap_or_else(|| same_case(want, segs[seg]));
        let mut out: Vec<&str> = segs.clone();
        out[seg] = &word;
        let new_tag = out.join("/");
        let reads = keys::tag_status(&new_tag).map(|(_, s)| s);
        let reads_ok = reads.as_deref().is_some_and(|r| {
            r == want
                || r == new
                || group.contains(&r)
                || (r == "active" && matches!(want, "alive" | "active"))
        });
        if !reads_ok || crate::canon::kind::tag_kind(&new_tag) != crate::canon::kind::tag_kind(tag)
        {
            return Err(PlanError::StatusNotATag {
                tag: tag.to_string(),
                status: new.to_string(),
            });
        }
        Ok(new_tag)
    }

    /// The words the vault's PC and NPC notes write at segment `seg` of the tags `like`
    /// accepts, as written, most used first.
    fn tag_vocab(&self, like: impl Fn(&str) -> bool, seg: usize) -> Vec<String> {
        let mut counts: Vec<(String, usize)> = Vec::new();
        for p in self
            .c
            .npcs
            .iter()
            .map(|n| n.source.path.as_str())
            .chain(self.c.pcs.iter().map(|p| p.source.path.as_str()))
            .take(300)
        {
            let Some(text) = read_note(self.files.root, p).ok().flatten() else {
                continue;
            };
            for t in edit::tags_as_written(&text) {
                if like(&t) {
                    let w = t.split('/').nth(seg).unwrap_or("").to_string();
                    match counts.iter_mut().find(|(x, _)| *x == w) {
                        Some((_, n)) => *n += 1,
                        None => counts.push((w, 1)),
                    }
                }
            }
        }
        counts.sort_by_key(|c| std::cmp::Reverse(c.1));
        counts.into_iter().map(|(w, _)| w).collect()
    }

    /// The tag an attitude tag becomes for the attitude `new`: its last segment replaced by
    /// the vault's word for it (`iff/positive` -> `iff/negative` for "hostile" in a vault
    /// that writes `iff/negative`), else by `new` itself when it is one word.
    fn disposition_tag(&self, tag: &str, new: &str) -> Result<String, PlanError> {
        let (seg, _) = keys::tag_disposition(tag).ok_or_else(|| PlanError::NotAnAttitudeTag {
            tag: tag.to_string(),
        })?;
        let segs: Vec<&str> = tag.split('/').collect();
        let vocab = self.tag_vocab(|t| same_but(t, &segs, seg), seg);
        let want = new.trim().to_lowercase();
        let group = DISPOSITION_SYNONYMS
            .iter()
            .find(|g| g.contains(&want.as_str()))
            .copied()
            .unwrap_or(&[]);
        let word = vocab
            .iter()
            .find(|w| w.eq_ignore_ascii_case(&want))
            .or_else(|| {
                group
                    .iter()
                    .find_map(|g| vocab.iter().find(|w| w.eq_ignore_ascii_case(g)))
            })
            .cloned()
            .unwrap_or_else(|| same_case(&want, segs[seg]));
        if word.is_empty()
            || !word
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-'))
        {
            return Err(PlanError::AttitudeNotAWord {
                tag: tag.to_string(),
                attitude: new.to_string(),
            });
        }
        let mut out = segs.clone();
        out[seg] = &word;
        Ok(out.join("/"))
    }

    fn set_key(
        &mut self,
        path: &str,
        keys: &'static [&'static str],
        value: Scalar,
    ) -> Result<(), PlanError> {
        let text = self.files.text(path)?;
        let expect = edit::get_field(&text, keys).map(|(_, v)| v);
        self.files.edit(
            path,
            Op::Set {
                keys,
                value,
                expect,
            },
        )
    }

    /// The location's name and how to write it where `old_raw` was written.
    fn location_value(&self, to: usize, old_raw: Option<&str>) -> String {
        let l = &self.c.locations[to];
        let s = stem(&l.source.path);
        let same = crate::names::norm_key(s) == crate::names::norm_key(&l.name);
        match old_raw.map(str::trim) {
            // A link keeps its form: a path stays a path (`.md` kept if it had one), a file
            // name a file name, a name a name; display text stays display text.
            Some(raw) if raw.starts_with("[[") => {
                let inner = raw.trim_start_matches("[[").trim_end_matches("]]");
                let (target, display) = match inner.split_once('|') {
                    Some((t, d)) => (t, Some(d)),
                    None => (inner, None),
                };
                let target = target.split('#').next().unwrap_or(target).trim();
                let path = l.source.path.as_str();
                // Obsidian finds a link by file name (or path): that is the target.
                let new_target = if target.contains('/') {
                    if target.ends_with(".md") {
                        path.to_string()
                    } else {
                        path.strip_suffix(".md").unwrap_or(path).to_string()
                    }
                } else if self.links_by_name(target) {
                    l.name.clone()
                } else {
                    s.to_string()
                };
                let shown = stem(&new_target);
                if shown != l.name && display.is_some() {
                    format!("[[{new_target}|{}]]", l.name)
                } else {
                    format!("[[{new_target}]]")
                }
            }
            Some(raw) if !raw.is_empty() && !raw.contains(' ') && raw == raw.to_lowercase() => {
                s.to_string()
            }
            Some(raw) if !raw.is_empty() => l.name.clone(),
            _ if same => format!("[[{}]]", l.name),
            _ => format!("[[{s}|{}]]", l.name),
        }
    }

    /// Whether a link target names a location by its name rather than its file name
    /// (`[[The Brass Canary]]` to `the-brass-canary.md`).
    fn links_by_name(&self, target: &str) -> bool {
        let t = crate::names::norm_key(target);
        let by_file = self
            .c
            .locations
            .iter()
            .any(|l| crate::names::norm_key(stem(&l.source.path)) == t);
        let by_name = self
            .c
            .locations
            .iter()
            .any(|l| crate::names::norm_key(&l.name) == t);
        if by_file || by_name {
            by_name && !by_file
        } else {
            target.contains(' ') || target != target.to_lowercase()
        }
    }

    fn location_name(&self, path: Option<&str>, text: Option<&str>) -> String {
        path.and_then(|p| self.c.locations.iter().find(|l| l.source.path == p))
            .map(|l| l.name.clone())
            .or_else(|| text.map(str::to_string))
            .unwrap_or_else(|| "nowhere".into())
    }

    fn move_to(&mut self, who: Who, to: usize) -> Result<(), PlanError> {
        let path = who.path(self.c).to_string();
        let text = self.files.text(&path)?;
        let old = edit::get_field(&text, keys::LOCATION).map(|(_, v)| v);
        let value = self.location_value(to, old.as_deref());
        self.set_key(&path, keys::LOCATION, Scalar::Text(value))
    }

    fn where_is(&self, who: Who) -> String {
        match who {
            Who::Pc(i) => {
                let p = &self.c.pcs[i];
                self.location_name(p.location.as_deref(), p.location_text.as_deref())
            }
            Who::Npc(i) => {
                let n = &self.c.npcs[i];
                self.location_name(n.location.as_deref(), n.location_text.as_deref())
            }
        }
    }

    fn move_one(&mut self, who: Who, to: &str) -> Result<String, PlanError> {
        let dest = resolve::location(self.c, self.m, to)?;
        let from = self.where_is(who);
        self.move_to(who, dest)?;
        Ok(format!(
            "{}: {from} -> {}",
            who.name(self.c),
            self.c.locations[dest].name
        ))
    }

    fn move_party(&mut self, to: &str) -> Result<String, PlanError> {
        let dest = resolve::location(self.c, self.m, to)?;
        let members: Vec<usize> = match &self.c.active_party {
            Some((p, _)) => self.c.parties[*p]
                .members
                .iter()
                .filter_map(|id| self.c.pcs.iter().position(|pc| &pc.id == id && pc.active))
                .collect(),
            None => Vec::new(),
        };
        let members = if members.is_empty() {
            (0..self.c.pcs.len())
                .filter(|&i| self.c.pcs[i].active)
                .collect()
        } else {
            members
        };
        if members.is_empty() {
            return Err(PlanError::NoActivePc);
        }
        let mut from: Vec<String> = members.iter().map(|&i| self.where_is(Who::Pc(i))).collect();
        from.dedup();
        for i in members {
            self.move_to(Who::Pc(i), dest)?;
        }
        Ok(format!(
            "party: {} -> {}",
            from.join(" / "),
            self.c.locations[dest].name
        ))
    }

    fn list(
        &mut self,
        entity: &str,
        field: &str,
        item: &str,
        add: bool,
    ) -> Result<String, PlanError> {
        let f = Field::parse(field).filter(|f| matches!(f, Field::Inventory | Field::Conditions));
        let f = f.ok_or_else(|| PlanError::NotAList {
            field: field.to_string(),
        })?;
        let who = resolve::entity(self.c, self.m, entity)?;
        let Who::Pc(_) = who else {
            return Err(PlanError::PcOnly {
                name: who.name(self.c).to_string(),
                field: f,
            });
        };
        let item = clean_line(item, "item")?;
        let keys = if f == Field::Inventory {
            keys::INVENTORY
        } else {
            keys::CONDITIONS
        };
        let path = who.path(self.c).to_string();
        let op = if add {
            Op::ListAdd {
                keys,
                item: item.clone(),
            }
        } else {
            Op::ListRemove {
                keys,
                item: item.clone(),
            }
        };
        self.files.edit(&path, op)?;
        Ok(format!(
            "{}: {} {} {item}",
            who.name(self.c),
            f.label(),
            if add { "+" } else { "-" }
        ))
    }

    fn time(
        &mut self,
        advance: Option<i64>,
        day: Option<i64>,
        time: Option<&str>,
    ) -> Result<String, PlanError> {
        let before = self.clock.show();
        let new_day = match (advance, day) {
            (Some(_), Some(_)) => return Err(PlanError::AdvanceAndDay),
            (Some(n), None) => {
                if !(0..=3650).contains(&n) {
                    return Err(PlanError::AdvanceOutOfRange { days: n });
                }
                Some(self.clock.day.unwrap_or(1) + n)
            }
            (None, Some(d)) => {
                if d < 1 {
                    return Err(PlanError::DayBelowOne { day: d });
                }
                Some(d)
            }
            (None, None) => None,
        };
        let time = match time {
            Some(t) => Some(clean_line(t, "time of day")?),
            None => None,
        };
        if new_day.is_none() && time.is_none() {
            return Err(PlanError::NoTime);
        }
        match self.c.clock.clone() {
            ClockHome::TemporalIndex => self.clock_file(TEMPORAL_INDEX, new_day, time.clone())?,
            ClockHome::Own => self.clock_file(OWN_CLOCK, new_day, time.clone())?,
            ClockHome::Note {
                path,
                day_key,
                time_key,
                date,
            } => {
                if let Some(d) = new_day {
                    if let Some(date) = date {
                        return Err(PlanError::CalendarDate {
                            date,
                            path,
                            key: day_key,
                        });
                    }
                    let keys = static_key(keys::CLOCK_DAY, &day_key);
                    let text = self.files.text(&path)?;
                    // `current_day: Day 12` stays written as a day.
                    let value = match edit::get_field(&text, keys) {
                        Some((_, raw))
                            if crate::vault::period::day(raw.trim_matches(['"', '\'']))
                                .is_some() =>
                        {
                            Scalar::Text(format!("Day {d}"))
                        }
                        _ => Scalar::Int(d),
                    };
                    self.set_key(&path, keys, value)?;
                }
                if let Some(t) = &time {
                    let keys = match &time_key {
                        Some(k) => static_key(keys::CLOCK_TIME, k),
                        None => &keys::CLOCK_TIME[..1],
                    };
                    self.set_key(&path, keys, Scalar::Text(t.clone()))?;
                }
            }
        }
        if let Some(d) = new_day {
            self.clock.day = Some(d);
        }
        if time.is_some() {
            self.clock.time = time;
        }
        Ok(format!("clock: {before} -> {}", self.clock.show()))
    }

    /// Sets the day and time in a clock file (`canon/temporal-index.json`, or vaultdm's own
    /// `.vaultdm/clock.json`), creating it when missing.
    fn clock_file(
        &mut self,
        path: &str,
        new_day: Option<i64>,
        time: Option<String>,
    ) -> Result<(), PlanError> {
        let text = self.files.text(path)?;
        let expect = serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .and_then(|v| v.get("current_day").and_then(serde_json::Value::as_i64));
        self.files.edit(
            path,
            Op::Clock {
                day: new_day.or(self.clock.day),
                time,
                expect,
            },
        )
    }

    /// The campaign's timeline, as canon chose it ([`crate::canon::build::campaign_timeline`]):
    /// the note the context reads recent events from. A vault with none gets
    /// `canon/timeline.md` in vaultdm's own layout (a `canon/` folder), else a `Timeline.md`
    /// at its top, which the reader takes as the timeline by its name.
    fn timeline_path(&self) -> String {
        match &self.c.timeline {
            Some(p) => p.clone(),
            None if self.files.root.join("canon").is_dir() => TIMELINE.to_string(),
            None => NEW_TIMELINE.to_string(),
        }
    }

    fn event(&mut self, text: &str, day: Option<i64>) -> Result<String, PlanError> {
        let text = clean_line(text, "event")?;
        let path = self.timeline_path();
        let current = self.files.text(&path)?;
        let place =
            edit::event_place(&current, day.or(self.clock.day).unwrap_or(1)).map_err(|e| {
                PlanError::Edit {
                    path: path.clone(),
                    source: e.into(),
                }
            })?;
        let day = if place.is_day() {
            let day = day.or(self.clock.day).ok_or(PlanError::NoCurrentDay)?;
            if day < 1 {
                return Err(PlanError::DayBelowOne { day });
            }
            day
        } else {
            if let Some(d) = day {
                return Err(PlanError::CalendarTimeline {
                    path,
                    latest: place.label(),
                    day: d,
                });
            }
            0
        };
        if !self.files.exists(&path)? {
            self.files.edit(
                &path,
                Op::Create {
                    text: "# Timeline\n".into(),
                },
            )?;
        }
        let time = if Some(day) == self.clock.day {
            self.clock.time.clone()
        } else {
            None
        };
        self.files.edit(
            &path,
            Op::Event {
                day,
                time,
                text: text.clone(),
            },
        )?;
        let label = match place {
            edit::EventPlace::Day { .. } => format!("Day {day}"),
            p => p.label(),
        };
        Ok(format!("timeline {label}: + {text}"))
    }

    /// Whether a thread lives in a list of threads (open-threads.md) rather than a note of
    /// its own.
    fn in_list(&self, i: usize) -> bool {
        let p = &self.c.threads[i].source.path;
        p == OPEN_THREADS
            || self
                .c
                .threads
                .iter()
                .filter(|t| &t.source.path == p)
                .count()
                > 1
    }

    fn thread_priority(&mut self, thread: &str, to: Priority) -> Result<String, PlanError> {
        let i = resolve::thread(self.c, self.m, thread)?;
        let t = &self.c.threads[i];
        if t.priority == to {
            return Err(PlanError::AlreadyPriority {
                title: t.title.clone(),
                priority: to,
            });
        }
        let path = t.source.path.clone();
        let title = t.title.clone();
        let from = section_of(t.priority).to_lowercase();
        if self.in_list(i) {
            self.files.edit(
                &path,
                Op::ThreadMove {
                    title: title.clone(),
                    to: section_of(to).into(),
                },
            )?;
        } else if to == Priority::Resolved {
            // The vault's own word for a closed quest (`completed`, `Done`), else `resolved`.
            let word = self.status_word(true)?.unwrap_or_else(|| "resolved".into());
            self.set_key(&path, keys::THREAD_STATUS, Scalar::Text(word))?;
        } else {
            let text = self.files.text(&path)?;
            // A closing status would win over the new priority: reopen it.
            if edit::get_field(&text, keys::THREAD_STATUS)
                .is_some_and(|(_, v)| Priority::parse(&v) == Some(Priority::Resolved))
            {
                let word = self.status_word(false)?.unwrap_or_else(|| "open".into());
                self.set_key(&path, keys::THREAD_STATUS, Scalar::Text(word))?;
            }
            self.set_key(
                &path,
                keys::PRIORITY,
                Scalar::Text(section_of(to).to_lowercase()),
            )?;
        }
        Ok(format!(
            "thread {title}: {from} -> {}",
            section_of(to).to_lowercase()
        ))
    }

    fn thread_next(&mut self, thread: &str, next: &str) -> Result<String, PlanError> {
        let i = resolve::thread(self.c, self.m, thread)?;
        let next = clean_line(next, "next step")?;
        let t = &self.c.threads[i];
        let (path, title) = (t.source.path.clone(), t.title.clone());
        if !self.in_list(i) {
            return Err(PlanError::ThreadIsANote { title, path });
        }
        self.files.edit(
            &path,
            Op::ThreadNext {
                title: title.clone(),
                next: next.clone(),
            },
        )?;
        Ok(format!("thread {title}: next -> {next}"))
    }

    fn new_thread(
        &mut self,
        title: &str,
        priority: Option<&str>,
        summary: Option<&str>,
        next: Option<&str>,
    ) -> Result<String, PlanError> {
        let title = clean_line(title, "thread title")?;
        if let Ok(i) = resolve::thread(self.c, self.m, &title) {
            if crate::names::norm_key(&self.c.threads[i].title) == crate::names::norm_key(&title) {
                return Err(PlanError::ThreadExists {
                    title: self.c.threads[i].title.clone(),
                });
            }
        }
        let p = priority_word(priority.unwrap_or("medium"))?;
        if p == Priority::Resolved {
            return Err(PlanError::NewThreadResolved);
        }
        let summary = match summary {
            Some(s) => clean_line(s, "summary")?,
            None => String::new(),
        };
        let next = next.map(|n| clean_line(n, "next step")).transpose()?;
        if !self.keeps_thread_list()? {
            return self.new_quest_note(&title, p, &summary, next.as_deref());
        }
        if !self.files.exists(OPEN_THREADS)? {
            self.files.edit(
                OPEN_THREADS,
                Op::Create {
                    text: "# Open Threads\n".into(),
                },
            )?;
        }
        self.files.edit(
            OPEN_THREADS,
            Op::ThreadAdd {
                priority: section_of(p).into(),
                title: title.clone(),
                summary,
                next,
            },
        )?;
        Ok(format!(
            "new thread ({}): {title}",
            section_of(p).to_lowercase()
        ))
    }

    /// Whether a thread is a quest note: a note of its own, not an item of a list.
    fn is_quest_note(&self, i: usize) -> bool {
        let t = &self.c.threads[i];
        !self.in_list(i) && t.id == t.source.path
    }

    /// Whether new threads go to `canon/open-threads.md`: the vault has it, or is of
    /// vaultdm's own layout (a `canon/` folder) and keeps no quest notes of its own.
    fn keeps_thread_list(&mut self) -> Result<bool, PlanError> {
        let quest_notes = (0..self.c.threads.len()).any(|i| self.is_quest_note(i));
        Ok(self.files.exists(OPEN_THREADS)?
            || (self.files.root.join("canon").is_dir() && !quest_notes))
    }

    /// A new thread as a quest note in the vault's own style: in the folder most of its
    /// quest notes are in, with the frontmatter keys they share (its `type:`, status word,
    /// priority and summary keys, the tags every one of them carries), named as they are
    /// named. Refused, with the reason, when the vault keeps no quest notes.
    fn new_quest_note(
        &mut self,
        title: &str,
        p: Priority,
        summary: &str,
        next: Option<&str>,
    ) -> Result<String, PlanError> {
        let notes = self.quest_notes_to_follow(title)?;
        let (folder, in_folder) = self.quest_folder(&notes);
        // The model: the folder's last open quest note, else its last one.
        let model_i = in_folder
            .iter()
            .rev()
            .find(|&&i| self.c.threads[i].priority != Priority::Resolved)
            .or(in_folder.last())
            .copied()
            .ok_or(PlanError::NoQuestNote)?;
        let model_path = self.c.threads[model_i].source.path.clone();
        let model_text = self.files.text(&model_path)?;
        let model = crate::vault::Note::parse(&model_path, model_text.as_bytes());
        let tags = self.shared_tags(&in_folder)?;
        let open_word = self.status_word(false)?.unwrap_or_else(|| "active".into());
        let front = quest_front(&model.frontmatter, title, p, summary, next, &open_word);
        let mut body = Vec::new();
        if !front.has_summary && !summary.is_empty() {
            body.push(summary.to_string());
        }
        if let (false, Some(n)) = (front.has_next, next) {
            body.push(format!("Next: {n}"));
        }
        let fm_refs: Vec<(&str, Scalar)> = front
            .keys
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        let text = edit::new_note(title, &fm_refs, &body.join("\n\n"));
        let text = with_quest_tags(text, front.tags_key, &tags)?;
        // Named as the folder's notes are: `The Missing Caravan.md` or `missing-caravan.md`.
        let spaced = in_folder
            .iter()
            .any(|&i| stem(&self.c.threads[i].source.path).contains(' '));
        let path = self.free_path(title, &folder, spaced)?;
        self.files.edit(&path, Op::Create { text })?;
        Ok(format!(
            "new thread ({}): {title} ({path})",
            section_of(p).to_lowercase()
        ))
    }

    /// The quest notes a new quest note `title` can follow; refused, with the reason and
    /// where to add it by hand, when the vault keeps none.
    fn quest_notes_to_follow(&self, title: &str) -> Result<Vec<usize>, PlanError> {
        let notes: Vec<usize> = (0..self.c.threads.len())
            .filter(|&i| self.is_quest_note(i))
            .collect();
        if !notes.is_empty() {
            return Ok(notes);
        }
        let lists: Vec<&str> = self
            .c
            .threads
            .iter()
            .map(|t| t.source.path.as_str())
            .collect();
        let title = title.to_string();
        Err(match lists.first() {
            Some(l) => PlanError::QuestsInAChecklist {
                list: l.to_string(),
                title,
            },
            None => PlanError::NoQuests { title },
        })
    }

    /// The folder most of the quest `notes` are in, and the ones in it.
    fn quest_folder(&self, notes: &[usize]) -> (String, Vec<usize>) {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for &i in notes {
            let p = self.c.threads[i].source.path.as_str();
            *counts
                .entry(p.rsplit_once('/').map_or("", |(d, _)| d))
                .or_default() += 1;
        }
        let folder = counts
            .into_iter()
            .max_by_key(|(_, n)| *n)
            .map(|(d, _)| d.to_string())
            .unwrap_or_default();
        let in_folder: Vec<usize> = notes
            .iter()
            .copied()
            .filter(|&i| {
                let p = &self.c.threads[i].source.path;
                p.rsplit_once('/').map_or("", |(d, _)| d) == folder
            })
            .collect();
        (folder, in_folder)
    }

    /// The tags every one of the quest notes `in_folder` carries.
    fn shared_tags(&mut self, in_folder: &[usize]) -> Result<Vec<String>, PlanError> {
        let mut shared: Option<Vec<String>> = None;
        for &i in in_folder {
            let path = self.c.threads[i].source.path.clone();
            let text = self.files.text(&path)?;
            let n = crate::vault::Note::parse(&path, text.as_bytes());
            let tags = n.frontmatter.list(&["tags", "tag"]);
            shared = Some(match shared {
                None => tags,
                Some(s) => s.into_iter().filter(|t| tags.contains(t)).collect(),
            });
        }
        Ok(shared.unwrap_or_default())
    }

    /// The status word the vault's quest notes use most for an open (or, with `closed`, a
    /// resolved) quest: `active`, `Open`, `completed`.
    fn status_word(&mut self, closed: bool) -> Result<Option<String>, PlanError> {
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for i in 0..self.c.threads.len() {
            if !self.is_quest_note(i)
                || (self.c.threads[i].priority == Priority::Resolved) != closed
            {
                continue;
            }
            let path = self.c.threads[i].source.path.clone();
            let text = self.files.text(&path)?;
            if let Some((_, v)) = edit::get_field(&text, keys::THREAD_STATUS) {
                let v = v.trim().trim_matches(['"', '\'']).to_string();
                let resolved = Priority::parse(&v) == Some(Priority::Resolved);
                if !v.is_empty() && resolved == closed {
                    *counts.entry(v).or_default() += 1;
                }
            }
        }
        Ok(counts.into_iter().max_by_key(|(_, n)| *n).map(|(w, _)| w))
    }

    /// How the vault marks notes of a kind, from the notes it has (up to 60 of them): a
    /// type key (`type: npc`, as they write it) or a tag (`npc`, `greyfen/npc`,
    /// `npc/alive`), whichever more of them use; `type: <word>` in a vault with neither.
    fn typing(&self, paths: Vec<&str>, kind: NoteKind, word: &str) -> Typing {
        let mut by_key: BTreeMap<(String, String), usize> = BTreeMap::new();
        let mut by_tag: BTreeMap<String, usize> = BTreeMap::new();
        for p in paths.into_iter().take(60) {
            let Some(text) = read_note(self.files.root, p).ok().flatten() else {
                continue;
            };
            let typed = TYPE_KEYS.iter().find_map(|k| {
                let (key, v) = edit::get_scalar(&text, &[k])?;
                let w = v.trim().trim_start_matches('#').to_string();
                (crate::canon::kind::word_kind(&w.to_lowercase()) == Some(kind)).then_some((key, w))
            });
            if let Some(kv) = typed {
                *by_key.entry(kv).or_default() += 1;
                continue;
            }
            let tag = edit::tags_as_written(&text).into_iter().find(|t| {
                crate::canon::kind::tag_kind(&t.to_lowercase()) == Some(kind)
                    && keys::tag_status(t).is_none_or(|(_, s)| s == "active")
            });
            if let Some(t) = tag {
                *by_tag.entry(kind_tag(&t, kind)).or_default() += 1;
            }
        }
        if by_tag.values().sum::<usize>() > 0
            && by_tag.values().sum::<usize>() > by_key.values().sum::<usize>()
        {
            let best = by_tag.values().copied().max().unwrap_or(0);
            by_tag
                .into_iter()
                .find(|(_, n)| *n == best)
                .map_or(Typing::Key("type".into(), word.into()), |(t, _)| {
                    Typing::Tag(t)
                })
        } else {
            let best = by_key.values().copied().max().unwrap_or(0);
            by_key
                .into_iter()
                .find(|(_, n)| *n == best && best > 0)
                .map_or(Typing::Key("type".into(), word.into()), |((k, v), _)| {
                    Typing::Key(k, v)
                })
        }
    }

    /// The folder new notes of a kind go to: `canon/<kind>` in vaultdm's layout, else the
    /// folder most notes of that kind are in.
    /// In a vault of the GM's own layout (no `canon/` folder) that has no note of the kind
    /// yet, a folder of its own at the top (`own`), never a new `canon/` folder.
    fn folder_for(&self, paths: Vec<&str>, default: &str, own: &str) -> String {
        if self.files.root.join(default).is_dir() {
            return default.to_string();
        }
        if paths.is_empty() {
            return if self.files.root.join("canon").is_dir() {
                default.to_string()
            } else {
                own.to_string()
            };
        }
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for p in paths {
            let dir = p.rsplit_once('/').map_or("", |(d, _)| d);
            *counts.entry(dir).or_default() += 1;
        }
        counts
            .into_iter()
            .max_by_key(|(_, n)| *n)
            .map(|(d, _)| d.to_string())
            .unwrap_or_else(|| default.to_string())
    }

    fn new_note_path(
        &mut self,
        name: &str,
        folder: &str,
        siblings: &[&str],
    ) -> Result<String, PlanError> {
        let taken = resolve::entity(self.c, self.m, name)
            .is_ok_and(|w| crate::names::norm_key(w.name(self.c)) == crate::names::norm_key(name))
            || self
                .c
                .locations
                .iter()
                .any(|l| crate::names::norm_key(&l.name) == crate::names::norm_key(name))
            || self
                .new_names
                .iter()
                .any(|(n, _)| *n == crate::names::norm_key(name));
        if taken {
            return Err(PlanError::NameTaken {
                name: name.to_string(),
            });
        }
        // Named as the folder's notes are (`Pell Orrin.md` beside `Aldric Venn.md`, else
        // `pell-orrin.md`); in a new folder, as Obsidian names notes unless the vault is of
        // vaultdm's layout.
        let in_folder: Vec<&str> = siblings
            .iter()
            .copied()
            .filter(|p| p.rsplit_once('/').map_or("", |(d, _)| d) == folder)
            .collect();
        let spaced = if in_folder.is_empty() {
            !self.files.root.join("canon").is_dir()
        } else {
            in_folder.iter().any(|p| stem(p).contains(' '))
        };
        self.free_path(name, folder, spaced)
    }

    /// The path of a new note titled `title` in `folder`, named as [`file_stem`] says; an
    /// error when the title makes no file name or the file exists.
    fn free_path(&mut self, title: &str, folder: &str, spaced: bool) -> Result<String, PlanError> {
        let file = file_stem(title, spaced);
        if file.is_empty() {
            return Err(PlanError::NoFileName {
                title: title.to_string(),
            });
        }
        let path = if folder.is_empty() {
            format!("{file}.md")
        } else {
            format!("{folder}/{file}.md")
        };
        if self.files.exists(&path)? {
            return Err(PlanError::FileExists { path });
        }
        Ok(path)
    }

    fn new_npc(
        &mut self,
        name: &str,
        role: Option<&str>,
        location: Option<&str>,
        disposition: Option<&str>,
        summary: Option<&str>,
    ) -> Result<String, PlanError> {
        let name = clean_line(name, "name")?;
        let folder = self.folder_for(
            self.c.npcs.iter().map(|n| n.source.path.as_str()).collect(),
            "canon/npcs",
            "NPCs",
        );
        let siblings: Vec<String> = self.c.npcs.iter().map(|n| n.source.path.clone()).collect();
        let siblings: Vec<&str> = siblings.iter().map(String::as_str).collect();
        let path = self.new_note_path(&name, &folder, &siblings)?;
        let typing = self.typing(
            self.c.npcs.iter().map(|n| n.source.path.as_str()).collect(),
            NoteKind::Npc,
            "npc",
        );
        let mut fm: Vec<(String, String)> = vec![("name".into(), name.clone())];
        if let Typing::Key(k, v) = &typing {
            fm.push((k.clone(), v.clone()));
        }
        if let Some(r) = role {
            fm.push(("role".into(), clean_line(r, "role")?));
        }
        let status_in_tag = matches!(&typing, Typing::Tag(t) if keys::tag_status(t).is_some());
        if !status_in_tag {
            fm.push((
                "status".into(),
                same_case("active", &self.status_sample(keys::NPC_STATUS)),
            ));
        }
        if let Some(l) = location {
            let l = self.new_or_known_location(l)?;
            fm.push(("location".into(), l));
        }
        if let Some(d) = disposition {
            fm.push(("disposition".into(), clean_line(d, "disposition")?));
        }
        let body = summary
            .map(|s| clean_line(s, "summary"))
            .transpose()?
            .unwrap_or_default();
        let text = typed_note(&name, fm, &typing, &body)?;
        self.files.edit(&path, Op::Create { text })?;
        self.new_names
            .push((crate::names::norm_key(&name), path.clone()));
        Ok(format!("new NPC: {name} ({path})"))
    }

    /// A location value for a new note: a known location as a link, or one created earlier
    /// in the same set.
    fn new_or_known_location(&self, name: &str) -> Result<String, PlanError> {
        match resolve::location(self.c, self.m, name) {
            Ok(i) => Ok(self.location_value(i, self.location_sample().as_deref())),
            Err(e) => self
                .new_names
                .iter()
                .find(|(n, p)| *n == crate::names::norm_key(name) && p.ends_with(".md"))
                .map(|(_, p)| format!("[[{}|{}]]", stem(p), name.trim()))
                .ok_or(e.into()),
        }
    }

    /// How the vault's NPC and PC notes write a location (the first one that has one), so
    /// a new note writes its location in the same form.
    fn location_sample(&self) -> Option<String> {
        self.c
            .npcs
            .iter()
            .map(|n| n.source.path.as_str())
            .chain(self.c.pcs.iter().map(|p| p.source.path.as_str()))
            .take(50)
            .filter_map(|p| read_note(self.files.root, p).ok().flatten())
            .find_map(|t| edit::get_field(&t, keys::LOCATION).map(|(_, v)| v))
            .filter(|v| !v.trim().is_empty())
    }

    fn new_location(
        &mut self,
        name: &str,
        parent: Option<&str>,
        description: Option<&str>,
    ) -> Result<String, PlanError> {
        let name = clean_line(name, "name")?;
        let folder = self.folder_for(
            self.c
                .locations
                .iter()
                .map(|l| l.source.path.as_str())
                .collect(),
            "canon/locations",
            "Locations",
        );
        let siblings: Vec<String> = self
            .c
            .locations
            .iter()
            .map(|l| l.source.path.clone())
            .collect();
        let siblings: Vec<&str> = siblings.iter().map(String::as_str).collect();
        let path = self.new_note_path(&name, &folder, &siblings)?;
        let typing = self.typing(
            self.c
                .locations
                .iter()
                .map(|l| l.source.path.as_str())
                .collect(),
            NoteKind::Location,
            "location",
        );
        let mut fm: Vec<(String, String)> = vec![("name".into(), name.clone())];
        if let Typing::Key(k, v) = &typing {
            fm.push((k.clone(), v.clone()));
        }
        if let Some(p) = parent {
            fm.push(("parent".into(), self.new_or_known_location(p)?));
        }
        let body = description
            .map(|s| clean_line(s, "description"))
            .transpose()?
            .map(|d| format!("## Description\n{d}"))
            .unwrap_or_default();
        let text = typed_note(&name, fm, &typing, &body)?;
        self.files.edit(&path, Op::Create { text })?;
        self.new_names
            .push((crate::names::norm_key(&name), path.clone()));
        Ok(format!("new location: {name} ({path})"))
    }
}
