//! Canon diff: what changed between two builds of the campaign, entity by entity.
//!
//! A live reload must tell the DM *what* changed, not that "something" did: `Jake: HP
//! 13/13 -> 4/13`, `Marlena: location The Salty Sigil -> The Docks`, `Day 5 dusk -> Day 6
//! morning`. Each [`Change`] carries the raw old and new values (for tools, via JSON) and
//! one line of text for humans and for the `Canon updated:` block sent to the model.
//!
//! Entities are paired by identity (the note's vault path), then through the renames the
//! caller detected (a note moved with its content unchanged), then by name within the same
//! kind (a note moved *and* edited). Only what is left is added or removed. Locations are
//! shown by display name, looked up in the campaign each side belongs to.

use super::model::{Campaign, Event, Location, Lore, Npc, Pc, Thread};
use crate::vault::links::norm_key;
use serde::Serialize;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt;

/// What happened to an entity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    /// It is new.
    Added,
    /// It is gone.
    Removed,
    /// One of its fields changed (`field`, `old`, `new` say which and how).
    Changed,
    /// Its note moved to another path; it is still the same entity.
    Renamed,
}

/// What sort of canon an entity is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EntityType {
    /// Campaign-wide settings (name, setting line).
    Campaign,
    /// The current day and time of day.
    Time,
    /// A player character.
    Pc,
    /// A non-player character.
    Npc,
    /// A place.
    Location,
    /// An open storyline.
    Thread,
    /// A timeline event.
    Event,
    /// Any other note.
    Lore,
}

impl EntityType {
    /// The word used in change lines (`NPC added: Marlena`).
    pub fn label(self) -> &'static str {
        match self {
            EntityType::Campaign => "campaign",
            EntityType::Time => "time",
            EntityType::Pc => "PC",
            EntityType::Npc => "NPC",
            EntityType::Location => "location",
            EntityType::Thread => "thread",
            EntityType::Event => "event",
            EntityType::Lore => "lore note",
        }
    }
}

/// One entity-level change between two campaigns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// Added, removed, changed or renamed.
    pub kind: ChangeKind,
    /// What sort of entity.
    #[serde(rename = "type")]
    pub entity_type: EntityType,
    /// The entity's identity after the change (its identity before, when removed).
    pub id: String,
    /// The entity's display name (an event's `Day N`, a thread's title).
    pub entity: String,
    /// Which field changed (`location`, `hp`, `priority`, `file`…); `None` for whole-entity
    /// changes.
    pub field: Option<String>,
    /// The old value as shown to humans (`None` when added).
    pub old: Option<String>,
    /// The new value as shown to humans (`None` when removed).
    pub new: Option<String>,
    /// One line for humans, e.g. `Jake: HP 13/13 -> 4/13`.
    pub text: String,
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// The longest value shown inline in a change line; the full value stays in `old`/`new`.
const SHOWN_CHARS: usize = 80;

fn shown(s: &str) -> String {
    if s.chars().count() <= SHOWN_CHARS {
        s.to_string()
    } else {
        let cut: String = s.chars().take(SHOWN_CHARS - 1).collect();
        format!("{}…", cut.trim_end())
    }
}

fn opt(s: Option<&str>) -> String {
    match s.map(str::trim) {
        Some(s) if !s.is_empty() => s.to_string(),
        _ => "none".to_string(),
    }
}

fn list(v: &[String]) -> String {
    if v.is_empty() {
        "none".to_string()
    } else {
        v.join(", ")
    }
}

fn num(n: Option<i64>) -> String {
    n.map_or_else(|| "none".to_string(), |n| n.to_string())
}

fn hp(cur: Option<i64>, max: Option<i64>) -> String {
    match (cur, max) {
        (None, None) => "none".to_string(),
        (c, m) => format!(
            "{}/{}",
            c.map_or_else(|| "?".to_string(), |c| c.to_string()),
            m.map_or_else(|| "?".to_string(), |m| m.to_string())
        ),
    }
}

/// Day and time as one phrase: `Day 6 morning`, `Day 6`, `morning`, `no day`.
pub(crate) fn day_time(day: Option<i64>, time: Option<&str>) -> String {
    match (day, time.map(str::trim).filter(|t| !t.is_empty())) {
        (Some(d), Some(t)) => format!("Day {d} {t}"),
        (Some(d), None) => format!("Day {d}"),
        (None, Some(t)) => t.to_string(),
        (None, None) => "no day".to_string(),
    }
}

/// The entity a field change belongs to.
#[derive(Clone, Copy)]
struct Who<'a> {
    t: EntityType,
    id: &'a str,
    name: &'a str,
}

impl<'a> Who<'a> {
    fn new(t: EntityType, id: &'a str, name: &'a str) -> Self {
        Who { t, id, name }
    }
}

/// Collects the changes of one diff.
struct Out {
    changes: Vec<Change>,
}

impl Change {
    fn new(
        kind: ChangeKind,
        entity_type: EntityType,
        id: &str,
        entity: &str,
        text: String,
    ) -> Change {
        Change {
            kind,
            entity_type,
            id: id.to_string(),
            entity: entity.to_string(),
            field: None,
            old: None,
            new: None,
            text,
        }
    }

    fn values(mut self, field: Option<&str>, old: Option<String>, new: Option<String>) -> Change {
        self.field = field.map(str::to_string);
        self.old = old;
        self.new = new;
        self
    }
}

impl Out {
    /// A field whose values are short: `Name: label old -> new`.
    fn field(&mut self, w: Who<'_>, field: &str, label: &str, old: String, new: String) {
        let (t, id, name) = (w.t, w.id, w.name);
        if old == new {
            return;
        }
        let text = if label.is_empty() {
            format!("{name}: {} -> {}", shown(&old), shown(&new))
        } else {
            format!("{name}: {label} {} -> {}", shown(&old), shown(&new))
        };
        self.changes
            .push(Change::new(ChangeKind::Changed, t, id, name, text).values(
                Some(field),
                Some(old),
                Some(new),
            ));
    }

    /// A prose field (summary, description): the line says it changed and shows the new text.
    fn prose(&mut self, w: Who<'_>, field: &str, old: Option<&str>, new: Option<&str>) {
        let (t, id, name) = (w.t, w.id, w.name);
        if old == new {
            return;
        }
        let text = match new {
            Some(n) => format!("{name}: {field} now \"{}\"", shown(n)),
            None => format!("{name}: {field} removed"),
        };
        self.changes
            .push(Change::new(ChangeKind::Changed, t, id, name, text).values(
                Some(field),
                Some(opt(old)),
                Some(opt(new)),
            ));
    }

    /// A list of items: `Name: inventory +rope, -torch`.
    fn items(&mut self, w: Who<'_>, field: &str, old: &[String], new: &[String]) {
        let (t, id, name) = (w.t, w.id, w.name);
        if old == new {
            return;
        }
        let was: HashSet<String> = old.iter().map(|s| norm_key(s)).collect();
        let now: HashSet<String> = new.iter().map(|s| norm_key(s)).collect();
        let mut parts: Vec<String> = new
            .iter()
            .filter(|s| !was.contains(&norm_key(s)))
            .map(|s| format!("+{s}"))
            .collect();
        parts.extend(
            old.iter()
                .filter(|s| !now.contains(&norm_key(s)))
                .map(|s| format!("-{s}")),
        );
        let text = if parts.is_empty() {
            format!("{name}: {field} reordered")
        } else {
            format!("{name}: {field} {}", shown(&parts.join(", ")))
        };
        self.changes
            .push(Change::new(ChangeKind::Changed, t, id, name, text).values(
                Some(field),
                Some(list(old)),
                Some(list(new)),
            ));
    }
}

/// What pairing needs from an entity.
trait Entity {
    fn id(&self) -> &str;
    fn name(&self) -> &str;
}

macro_rules! entity {
    ($t:ty, $name:ident) => {
        impl Entity for $t {
            fn id(&self) -> &str {
                &self.id
            }
            fn name(&self) -> &str {
                &self.$name
            }
        }
    };
}
entity!(Pc, name);
entity!(Npc, name);
entity!(Location, name);
entity!(Thread, title);
entity!(Lore, name);

/// The result of pairing two lists of entities.
struct Pairs<'a, T> {
    /// (old, new) pairs that differ, in new order.
    matched: Vec<(&'a T, &'a T)>,
    added: Vec<&'a T>,
    removed: Vec<&'a T>,
}

fn pair<'a, T: Entity + PartialEq>(
    old: &[&'a T],
    new: &[&'a T],
    renames: &HashMap<&str, &str>,
) -> Pairs<'a, T> {
    // The usual case on a reload: the same entities in the same order, a few edited.
    if old.len() == new.len() && old.iter().zip(new).all(|(o, n)| o.id() == n.id()) {
        return Pairs {
            matched: old
                .iter()
                .zip(new)
                .filter(|(o, n)| o != n)
                .map(|(o, n)| (*o, *n))
                .collect(),
            added: Vec::new(),
            removed: Vec::new(),
        };
    }
    let new_by_id: HashMap<&str, usize> =
        new.iter().enumerate().map(|(i, e)| (e.id(), i)).collect();
    let mut partner: Vec<Option<usize>> = vec![None; new.len()];
    let mut lost: Vec<usize> = Vec::new();
    for (i, o) in old.iter().enumerate() {
        let by_id = new_by_id
            .get(o.id())
            .copied()
            .filter(|&j| partner[j].is_none());
        let by_rename = || {
            renames
                .get(o.id())
                .and_then(|n| new_by_id.get(n).copied())
                .filter(|&j| partner[j].is_none())
        };
        match by_id.or_else(by_rename) {
            Some(j) => partner[j] = Some(i),
            None => lost.push(i),
        }
    }
    // A note moved and edited in the same reload: pair by name within the kind, but only
    // when the name is unique on both sides.
    if !lost.is_empty() {
        let mut unpaired_new: HashMap<String, Vec<usize>> = HashMap::new();
        for (j, n) in new.iter().enumerate() {
            if partner[j].is_none() {
                unpaired_new.entry(norm_key(n.name())).or_default().push(j);
            }
        }
        let mut lost_by_name: HashMap<String, usize> = HashMap::new();
        for &i in &lost {
            *lost_by_name.entry(norm_key(old[i].name())).or_default() += 1;
        }
        lost.retain(|&i| {
            let key = norm_key(old[i].name());
            match unpaired_new.get(&key).map(Vec::as_slice) {
                Some(&[j]) if lost_by_name[&key] == 1 => {
                    partner[j] = Some(i);
                    false
                }
                _ => true,
            }
        });
    }
    let mut out = Pairs {
        matched: Vec::new(),
        added: Vec::new(),
        removed: lost.into_iter().map(|i| old[i]).collect(),
    };
    for (j, p) in partner.iter().enumerate() {
        match p {
            Some(i) if old[*i] == new[j] => {}
            Some(i) => out.matched.push((old[*i], new[j])),
            None => out.added.push(new[j]),
        }
    }
    out
}

/// Emits added / removed / renamed lines for one list and returns the matched pairs that
/// differ.
fn whole<'a, T: Entity + PartialEq>(
    out: &mut Out,
    t: EntityType,
    old: &[&'a T],
    new: &[&'a T],
    renames: &HashMap<&str, &str>,
    added_detail: impl Fn(&T) -> Option<String>,
) -> Vec<(&'a T, &'a T)> {
    let p = pair(old, new, renames);
    for a in &p.added {
        let detail = added_detail(a)
            .map(|d| format!(" ({d})"))
            .unwrap_or_default();
        let text = format!("{} added: {}{detail}", t.label(), a.name());
        out.changes.push(
            Change::new(ChangeKind::Added, t, a.id(), a.name(), text).values(
                None,
                None,
                Some(a.name().to_string()),
            ),
        );
    }
    for r in &p.removed {
        let text = format!("{} removed: {}", t.label(), r.name());
        out.changes.push(
            Change::new(ChangeKind::Removed, t, r.id(), r.name(), text).values(
                None,
                Some(r.name().to_string()),
                None,
            ),
        );
    }
    for (o, n) in &p.matched {
        if o.id() != n.id() {
            let text = format!("{}: note moved {} -> {}", n.name(), o.id(), n.id());
            out.changes.push(
                Change::new(ChangeKind::Renamed, t, n.id(), n.name(), text).values(
                    Some("file"),
                    Some(o.id().to_string()),
                    Some(n.id().to_string()),
                ),
            );
        }
        if o.name() != n.name() {
            out.field(
                Who::new(t, n.id(), n.name()),
                "name",
                "name",
                o.name().to_string(),
                n.name().to_string(),
            );
        }
    }
    p.matched
}

#[cfg(test)]
/// Entity-level changes from `old` to `new`, pairing entities by identity (vault path).
pub(crate) fn diff(old: &Campaign, new: &Campaign) -> Vec<Change> {
    diff_with_renames(old, new, &[])
}

/// Like `diff`, with notes known to have moved: `(old path, new path)` pairs. An entity
/// whose note moved is reported as [`ChangeKind::Renamed`], not as removed and added.
pub(crate) fn diff_with_renames(
    old: &Campaign,
    new: &Campaign,
    renames: &[(String, String)],
) -> Vec<Change> {
    diff_inner(old, new, renames, None)
}

/// Like [`diff_with_renames`] when the caller knows which notes' entities can differ (a
/// live reload rebuilt only those): NPCs, locations and lore notes from other notes are
/// not compared. The campaign-wide fields, PCs (few, and the party in play can change with
/// any note), threads and events always are. `old` need hold no more than that: those
/// notes' NPCs, locations and lore, and the campaign-wide parts (a place another note's
/// entity names is looked up in `new`, where it is unchanged).
pub(crate) fn diff_notes(
    old: &Campaign,
    new: &Campaign,
    renames: &[(String, String)],
    notes: &BTreeSet<String>,
) -> Vec<Change> {
    diff_inner(old, new, renames, Some(notes))
}

/// The entities of `v` (sorted by note path) that come from `notes`, or all of them.
fn pick<'a, T: Entity>(v: &'a [T], notes: Option<&BTreeSet<String>>) -> Vec<&'a T> {
    match notes {
        None => v.iter().collect(),
        Some(notes) => {
            let mut out = Vec::new();
            for p in notes {
                let from = v.partition_point(|e| e.id() < p.as_str());
                out.extend(v[from..].iter().take_while(|e| e.id() == p.as_str()));
            }
            out
        }
    }
}

/// The diff behind `diff` (in tests), [`diff_with_renames`] and [`diff_notes`]: the campaign-wide
/// fields, then each kind of entity in turn.
fn diff_inner(
    old: &Campaign,
    new: &Campaign,
    renames: &[(String, String)],
    notes: Option<&BTreeSet<String>>,
) -> Vec<Change> {
    let mut d = Differ {
        old,
        new,
        renames: renames
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect(),
        notes,
        out: Out {
            changes: Vec::new(),
        },
    };
    d.campaign_wide();
    d.pcs();
    d.npcs();
    d.locations();
    d.threads();
    events(&mut d.out, &old.events, &new.events);
    whole(
        &mut d.out,
        EntityType::Lore,
        &pick(&old.lore, notes),
        &pick(&new.lore, notes),
        &d.renames,
        |_| None,
    );
    d.out.changes
}

/// One diff: the two campaigns, what is compared, and the changes found so far; one method
/// per kind of entity.
struct Differ<'a> {
    old: &'a Campaign,
    new: &'a Campaign,
    /// Notes known to have moved: old path to new path.
    renames: HashMap<&'a str, &'a str>,
    /// The notes whose NPCs, locations and lore are compared (all, when `None`).
    notes: Option<&'a BTreeSet<String>>,
    out: Out,
}

impl<'a> Differ<'a> {
    /// The campaign's name and setting, and the day and time.
    fn campaign_wide(&mut self) {
        let (old, new) = (self.old, self.new);
        let w = Who::new(EntityType::Campaign, "", new.name.as_str());
        self.out
            .field(w, "name", "name", old.name.clone(), new.name.clone());
        if old.setting != new.setting {
            self.out
                .prose(w, "setting", old.setting.as_deref(), new.setting.as_deref());
        }
        let (was, now) = (
            day_time(old.day, old.time.as_deref()),
            day_time(new.day, new.time.as_deref()),
        );
        if was != now {
            let text = format!("{was} -> {now}");
            self.out.changes.push(
                Change::new(ChangeKind::Changed, EntityType::Time, "", "time", text).values(
                    Some("day"),
                    Some(was),
                    Some(now),
                ),
            );
        }
    }

    /// The display name of a place as campaign `c` (one of the two) names it: the location
    /// `id`, else the place's `text`, else `none`.
    fn place(&self, c: &Campaign, id: &Option<String>, text: &Option<String>) -> String {
        // With `notes`, `old` may hold only those notes' places: a place from any other
        // note did not change, so its name is read from `new`.
        let untouched = |i: &str| self.notes.is_some_and(|n| !n.contains(i));
        let name = id
            .as_deref()
            .and_then(|i| {
                c.location(i)
                    .or_else(|| self.new.location(i).filter(|_| untouched(i)))
            })
            .map(|l| l.name.clone())
            .or_else(|| text.clone());
        opt(name.as_deref())
    }

    /// Every PC: the party in play can change with any note.
    fn pcs(&mut self) {
        let new = self.new;
        let pairs = whole(
            &mut self.out,
            EntityType::Pc,
            &pick(&self.old.pcs, None),
            &pick(&new.pcs, None),
            &self.renames,
            |p| {
                new.place_name(p.location.as_deref(), p.location_text.as_deref())
                    .map(|l| format!("at {l}"))
            },
        );
        for (o, n) in pairs {
            self.pc(o, n);
        }
    }

    /// What changed in one PC.
    fn pc(&mut self, o: &Pc, n: &Pc) {
        let w = Who::new(EntityType::Pc, &n.id, &n.name);
        let (t, id, name) = (w.t, w.id, w.name);
        let out = &mut self.out;
        out.field(w, "status", "status", o.status.clone(), n.status.clone());
        if o.active != n.active && o.status == n.status {
            let text = if n.active {
                "joined the active party"
            } else {
                "left the active party"
            };
            out.changes.push(
                Change::new(ChangeKind::Changed, t, id, name, format!("{name}: {text}")).values(
                    Some("active"),
                    Some(o.active.to_string()),
                    Some(n.active.to_string()),
                ),
            );
        }
        out.field(
            w,
            "hp",
            "HP",
            hp(o.hp_current, o.hp_max),
            hp(n.hp_current, n.hp_max),
        );
        let was = self.place(self.old, &o.location, &o.location_text);
        let now = self.place(self.new, &n.location, &n.location_text);
        let out = &mut self.out;
        out.field(w, "location", "location", was, now);
        out.field(
            w,
            "conditions",
            "conditions",
            list(&o.conditions),
            list(&n.conditions),
        );
        out.items(w, "inventory", &o.inventory, &n.inventory);
        out.field(w, "ac", "AC", num(o.ac), num(n.ac));
        out.field(w, "gold", "gold", num(o.gold), num(n.gold));
        out.field(w, "level", "level", num(o.level), num(n.level));
        out.field(
            w,
            "class",
            "class",
            opt(o.class.as_deref()),
            opt(n.class.as_deref()),
        );
        out.field(
            w,
            "player",
            "player",
            opt(o.player.as_deref()),
            opt(n.player.as_deref()),
        );
        out.field(w, "aliases", "aliases", list(&o.aliases), list(&n.aliases));
        out.prose(w, "summary", o.summary.as_deref(), n.summary.as_deref());
    }

    /// The NPCs of the notes compared.
    fn npcs(&mut self) {
        let new = self.new;
        let pairs = whole(
            &mut self.out,
            EntityType::Npc,
            &pick(&self.old.npcs, self.notes),
            &pick(&new.npcs, self.notes),
            &self.renames,
            |p| {
                new.place_name(p.location.as_deref(), p.location_text.as_deref())
                    .map(|l| format!("at {l}"))
            },
        );
        for (o, n) in pairs {
            self.npc(o, n);
        }
    }

    /// What changed in one NPC.
    fn npc(&mut self, o: &Npc, n: &Npc) {
        let w = Who::new(EntityType::Npc, &n.id, &n.name);
        let out = &mut self.out;
        out.field(w, "status", "status", o.status.clone(), n.status.clone());
        out.field(
            w,
            "hp",
            "HP",
            hp(o.hp_current, o.hp_max),
            hp(n.hp_current, n.hp_max),
        );
        out.field(w, "ac", "AC", num(o.ac), num(n.ac));
        let was = self.place(self.old, &o.location, &o.location_text);
        let now = self.place(self.new, &n.location, &n.location_text);
        let out = &mut self.out;
        out.field(w, "location", "location", was, now);
        out.field(
            w,
            "disposition",
            "disposition",
            opt(o.disposition.as_deref()),
            opt(n.disposition.as_deref()),
        );
        out.field(
            w,
            "role",
            "role",
            opt(o.role.as_deref()),
            opt(n.role.as_deref()),
        );
        if o.voice != n.voice {
            let q = |v: &[String]| {
                if v.is_empty() {
                    "none".to_string()
                } else {
                    format!("\"{}\"", v.join("\" / \""))
                }
            };
            out.field(w, "voice", "voice", q(&o.voice), q(&n.voice));
        }
        out.field(w, "aliases", "aliases", list(&o.aliases), list(&n.aliases));
        out.prose(w, "summary", o.summary.as_deref(), n.summary.as_deref());
    }

    /// The locations of the notes compared.
    fn locations(&mut self) {
        let new = self.new;
        let pairs = whole(
            &mut self.out,
            EntityType::Location,
            &pick(&self.old.locations, self.notes),
            &pick(&new.locations, self.notes),
            &self.renames,
            |l| {
                l.parent
                    .as_deref()
                    .and_then(|p| new.location(p))
                    .map(|p| format!("in {}", p.name))
            },
        );
        for (o, n) in pairs {
            self.location(o, n);
        }
    }

    /// What changed in one location.
    fn location(&mut self, o: &Location, n: &Location) {
        let w = Who::new(EntityType::Location, &n.id, &n.name);
        let was = self.place(self.old, &o.parent, &None);
        let now = self.place(self.new, &n.parent, &None);
        let out = &mut self.out;
        out.field(w, "parent", "inside", was, now);
        out.field(
            w,
            "kind",
            "kind",
            opt(o.kind.as_deref()),
            opt(n.kind.as_deref()),
        );
        out.field(w, "aliases", "aliases", list(&o.aliases), list(&n.aliases));
        out.prose(
            w,
            "description",
            o.description.as_deref(),
            n.description.as_deref(),
        );
    }

    /// Every thread.
    fn threads(&mut self) {
        let pairs = whole(
            &mut self.out,
            EntityType::Thread,
            &pick(&self.old.threads, None),
            &pick(&self.new.threads, None),
            &self.renames,
            |t| Some(t.priority.as_str().to_string()),
        );
        for (o, n) in pairs {
            self.thread(o, n);
        }
    }

    /// What changed in one thread.
    fn thread(&mut self, o: &Thread, n: &Thread) {
        let w = Who::new(EntityType::Thread, &n.id, &n.title);
        let out = &mut self.out;
        out.field(
            w,
            "priority",
            "",
            o.priority.as_str().to_string(),
            n.priority.as_str().to_string(),
        );
        if o.next != n.next {
            out.prose(w, "next step", o.next.as_deref(), n.next.as_deref());
        }
        let (os, ns) = (o.summary.join(" "), n.summary.join(" "));
        out.prose(
            w,
            "summary",
            Some(os.as_str()).filter(|s| !s.is_empty()),
            Some(ns.as_str()).filter(|s| !s.is_empty()),
        );
        out.field(w, "aliases", "aliases", list(&o.aliases), list(&n.aliases));
    }
}

fn event_line(e: &Event) -> String {
    format!("Day {}: {}", e.day, e.text)
}

/// Events have no identity: compare them as a multiset of (day, text).
fn events(out: &mut Out, old: &[Event], new: &[Event]) {
    let mut count: HashMap<(i64, &str), i64> = HashMap::new();
    for e in old {
        *count.entry((e.day, e.text.as_str())).or_default() += 1;
    }
    let mut added = Vec::new();
    for e in new {
        let c = count.entry((e.day, e.text.as_str())).or_default();
        if *c > 0 {
            *c -= 1;
        } else {
            added.push(e);
        }
    }
    for e in old.iter().rev() {
        let c = count.entry((e.day, e.text.as_str())).or_default();
        if *c > 0 {
            *c -= 1;
            let line = event_line(e);
            let text = format!("event removed: {}", shown(&line));
            out.changes.push(
                Change::new(
                    ChangeKind::Removed,
                    EntityType::Event,
                    &e.source.to_string(),
                    &format!("Day {}", e.day),
                    text,
                )
                .values(None, Some(e.text.clone()), None),
            );
        }
    }
    for e in added {
        let line = event_line(e);
        let text = format!("event added: {}", shown(&line));
        out.changes.push(
            Change::new(
                ChangeKind::Added,
                EntityType::Event,
                &e.source.to_string(),
                &format!("Day {}", e.day),
                text,
            )
            .values(None, None, Some(e.text.clone())),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canon::model::{Priority, Source};

    fn pc(id: &str, name: &str) -> Pc {
        Pc {
            id: id.into(),
            name: name.into(),
            aliases: vec![],
            class: Some("Rogue".into()),
            level: Some(3),
            player: None,
            sheet: false,
            status: "active".into(),
            active: true,
            inactive_reason: None,
            out_by_note: None,
            hp_current: Some(13),
            hp_max: Some(13),
            ac: None,
            location: None,
            location_text: None,
            gold: Some(10),
            conditions: vec![],
            inventory: vec!["rope".into(), "torch".into()],
            summary: None,
            source: Source::new(id, 1),
            modified: None,
        }
    }

    fn npc(id: &str, name: &str, loc: Option<&str>) -> Npc {
        Npc {
            id: id.into(),
            name: name.into(),
            aliases: vec![],
            role: None,
            status: "active".into(),
            disposition: Some("friendly".into()),
            location: loc.map(String::from),
            location_text: None,
            hp_current: None,
            hp_max: None,
            ac: None,
            voice: vec![],
            summary: None,
            source: Source::new(id, 1),
        }
    }

    fn loc(id: &str, name: &str) -> Location {
        Location {
            id: id.into(),
            name: name.into(),
            aliases: vec![],
            kind: None,
            parent: None,
            description: None,
            source: Source::new(id, 1),
        }
    }

    fn thread(title: &str, p: Priority) -> Thread {
        Thread {
            id: format!("canon/open-threads.md#{title}"),
            title: title.into(),
            aliases: vec![],
            priority: p,
            summary: vec![],
            next: None,
            source: Source::new("canon/open-threads.md", 3),
        }
    }

    fn campaign() -> Campaign {
        Campaign {
            name: "Test".into(),
            day: Some(5),
            time: Some("dusk".into()),
            pcs: vec![pc("canon/pcs/jake.md", "Jake")],
            npcs: vec![
                npc(
                    "canon/npcs/marlena.md",
                    "Marlena",
                    Some("canon/locations/salty-sigil.md"),
                ),
                npc("canon/npcs/old-gannet.md", "Old Gannet", None),
            ],
            locations: vec![
                loc("canon/locations/docks.md", "The Docks"),
                loc("canon/locations/salty-sigil.md", "The Salty Sigil"),
            ],
            threads: vec![thread("The Fading Muffle", Priority::High)],
            events: vec![Event {
                day: 5,
                when: "Day 5".into(),
                numbered: true,
                text: "The bell rang.".into(),
                source: Source::new("canon/timeline.md", 3),
            }],
            ..Campaign::default()
        }
    }

    fn texts(c: &[Change]) -> Vec<&str> {
        c.iter().map(|c| c.text.as_str()).collect()
    }

    #[test]
    fn identical_campaigns_have_no_changes() {
        assert!(diff(&campaign(), &campaign()).is_empty());
    }

    #[test]
    fn field_changes_read_like_the_table_talks() {
        let old = campaign();
        let mut new = campaign();
        new.pcs[0].hp_current = Some(4);
        new.npcs[0].location = Some("canon/locations/docks.md".into());
        new.threads[0].priority = Priority::Urgent;
        new.day = Some(6);
        new.time = Some("morning".into());
        new.npcs[1].status = "dead".into();
        new.npcs[0].disposition = Some("hostile".into());
        let c = diff(&old, &new);
        assert_eq!(
            texts(&c),
            [
                "Day 5 dusk -> Day 6 morning",
                "Jake: HP 13/13 -> 4/13",
                "Marlena: location The Salty Sigil -> The Docks",
                "Marlena: disposition friendly -> hostile",
                "Old Gannet: status active -> dead",
                "The Fading Muffle: high -> urgent",
            ]
        );
        let hp = &c[1];
        assert_eq!(
            (hp.kind, hp.entity_type),
            (ChangeKind::Changed, EntityType::Pc)
        );
        assert_eq!(hp.field.as_deref(), Some("hp"));
        assert_eq!(
            (hp.old.as_deref(), hp.new.as_deref()),
            (Some("13/13"), Some("4/13"))
        );
        assert_eq!(c[2].id, "canon/npcs/marlena.md");
    }

    #[test]
    fn lists_conditions_inventory_gold() {
        let old = campaign();
        let mut new = campaign();
        new.pcs[0].conditions = vec!["poisoned".into()];
        new.pcs[0].inventory = vec!["rope".into(), "silver key".into()];
        new.pcs[0].gold = Some(40);
        assert_eq!(
            texts(&diff(&old, &new)),
            [
                "Jake: conditions none -> poisoned",
                "Jake: inventory +silver key, -torch",
                "Jake: gold 10 -> 40",
            ]
        );
    }

    #[test]
    fn added_removed_and_events() {
        let old = campaign();
        let mut new = campaign();
        new.npcs.remove(1);
        new.npcs.push(npc(
            "canon/npcs/zed.md",
            "Zed",
            Some("canon/locations/docks.md"),
        ));
        new.locations
            .push(loc("canon/locations/the-yard.md", "The Yard"));
        new.threads.push(thread("The Bell", Priority::Urgent));
        new.events.push(Event {
            day: 6,
            when: "Day 6".into(),
            numbered: true,
            text: "Zed arrived.".into(),
            source: Source::new("canon/timeline.md", 6),
        });
        assert_eq!(
            texts(&diff(&old, &new)),
            [
                "NPC added: Zed (at The Docks)",
                "NPC removed: Old Gannet",
                "location added: The Yard",
                "thread added: The Bell (urgent)",
                "event added: Day 6: Zed arrived.",
            ]
        );
        let back = diff(&new, &old);
        assert!(back
            .iter()
            .any(|c| c.text == "event removed: Day 6: Zed arrived."));
        assert!(back.iter().any(|c| c.text == "NPC added: Old Gannet"));
    }

    #[test]
    fn renamed_note_keeps_identity() {
        let old = campaign();
        let mut new = campaign();
        new.npcs[0].id = "canon/npcs/dead/marlena.md".into();
        let renames = [(
            "canon/npcs/marlena.md".to_string(),
            "canon/npcs/dead/marlena.md".to_string(),
        )];
        let c = diff_with_renames(&old, &new, &renames);
        assert_eq!(
            texts(&c),
            ["Marlena: note moved canon/npcs/marlena.md -> canon/npcs/dead/marlena.md"]
        );
        assert_eq!(c[0].kind, ChangeKind::Renamed);
        // Without the rename map, the unique name still pairs them.
        assert_eq!(diff(&old, &new), c);
    }

    #[test]
    fn rename_with_new_name_pairs_through_the_map() {
        let old = campaign();
        let mut new = campaign();
        new.npcs[1].id = "canon/npcs/gannet.md".into();
        new.npcs[1].name = "gannet".into();
        let renames = [(
            "canon/npcs/old-gannet.md".to_string(),
            "canon/npcs/gannet.md".to_string(),
        )];
        assert_eq!(
            texts(&diff_with_renames(&old, &new, &renames)),
            [
                "gannet: note moved canon/npcs/old-gannet.md -> canon/npcs/gannet.md",
                "gannet: name Old Gannet -> gannet",
            ]
        );
        assert_eq!(
            texts(&diff(&old, &new)),
            ["NPC added: gannet", "NPC removed: Old Gannet"]
        );
    }

    #[test]
    fn long_values_are_shortened_in_text_only() {
        let old = campaign();
        let mut new = campaign();
        let long = "word ".repeat(40);
        new.npcs[0].summary = Some(long.trim().to_string());
        let c = diff(&old, &new);
        assert!(c[0].text.ends_with("…\""), "{}", c[0].text);
        assert!(c[0].text.chars().count() < 120);
        assert_eq!(c[0].new.as_deref(), Some(long.trim()));
    }

    #[test]
    fn an_npcs_hp_and_ac_are_canon_changes() {
        let mut old = campaign();
        old.npcs[0].hp_current = Some(80);
        old.npcs[0].hp_max = Some(80);
        let mut new = old.clone();
        new.npcs[0].hp_current = Some(45);
        new.npcs[0].ac = Some(17);
        assert_eq!(
            texts(&diff(&old, &new)),
            ["Marlena: HP 80/80 -> 45/80", "Marlena: AC none -> 17"]
        );
    }

    #[test]
    fn serializes_for_tools() {
        let old = campaign();
        let mut new = campaign();
        new.pcs[0].hp_current = Some(4);
        let j = serde_json::to_value(&diff(&old, &new)[0]).expect("serializable");
        assert_eq!(
            j,
            serde_json::json!({
                "kind": "changed", "type": "pc", "id": "canon/pcs/jake.md", "entity": "Jake",
                "field": "hp", "old": "13/13", "new": "4/13", "text": "Jake: HP 13/13 -> 4/13"
            })
        );
    }
}
