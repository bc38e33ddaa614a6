//! Selection and budgeting: which canon goes into a context, and what a budget drops.

use super::mentions::Target;
use super::{ContextError, Engine, Injected, Item, Mode, Options};
use crate::canon::{Campaign, Npc, Pc, Priority};
use crate::tokens;
use serde::Serialize;
use std::collections::{HashMap, HashSet};

pub use crate::canon::text::first_sentence;

#[derive(Debug, Clone, Serialize)]
struct PcRow {
    name: String,
    class_level: Option<String>,
    hp: Option<String>,
    location: Option<String>,
    gold: Option<i64>,
    conditions: Vec<String>,
    inventory: Vec<String>,
    status: Option<String>,
    summary: Option<String>,
    #[serde(skip)]
    source: String,
    #[serde(skip)]
    active: bool,
}

/// `17/27`, `17`, `?/27`.
fn hp_text(cur: Option<i64>, max: Option<i64>) -> Option<String> {
    match (cur, max) {
        (Some(a), Some(b)) => Some(format!("{a}/{b}")),
        (Some(a), None) => Some(a.to_string()),
        (None, Some(b)) => Some(format!("?/{b}")),
        _ => None,
    }
}

fn pc_row(c: &Campaign, p: &Pc) -> PcRow {
    let class_level = match (&p.class, p.level) {
        (Some(c), Some(l)) => Some(format!("{c} {l}")),
        (Some(c), None) => Some(c.clone()),
        (None, Some(l)) => Some(format!("level {l}")),
        (None, None) => None,
    };
    let hp = hp_text(p.hp_current, p.hp_max);
    PcRow {
        name: p.name.clone(),
        class_level,
        hp,
        location: c.place_name(p.location.as_deref(), p.location_text.as_deref()),
        gold: p.gold,
        conditions: p.conditions.clone(),
        inventory: p.inventory.clone(),
        status: (!p.active).then(|| p.status.clone()),
        summary: p.summary.as_deref().map(|s| first_sentence(s).to_string()),
        source: p.source.to_string(),
        active: p.active,
    }
}

#[derive(Debug, Clone, Serialize)]
struct LocRow {
    id: String,
    name: String,
    parent: Option<String>,
    description: Option<String>,
    #[serde(skip)]
    full: Option<String>,
    #[serde(skip)]
    level: u8, // 0 whole description, 1 first sentence, 2 none
}

#[derive(Debug, Clone, Serialize)]
struct NpcRow {
    name: String,
    /// Where the NPC is (display name); templates show it when the party is split.
    at: Option<String>,
    status: Option<String>,
    role: Option<String>,
    disposition: Option<String>,
    voice: Option<String>,
    /// HP when the GM tracks it (a boss in the scene).
    hp: Option<String>,
    #[serde(skip)]
    idx: usize,
    #[serde(skip)]
    mentioned: bool,
    #[serde(skip)]
    included: bool,
    #[serde(skip)]
    reason: String,
}

#[derive(Debug, Clone, Serialize)]
struct ThreadRow {
    priority: &'static str,
    title: String,
    summary: Option<String>,
    next: Option<String>,
    #[serde(skip)]
    idx: usize,
    #[serde(skip)]
    p: Priority,
    #[serde(skip)]
    mentioned: bool,
    #[serde(skip)]
    included: bool,
    #[serde(skip)]
    reason: String,
}

#[derive(Debug, Clone, Serialize)]
struct EventRow {
    day: i64,
    when: String,
    text: String,
    #[serde(skip)]
    idx: usize,
    #[serde(skip)]
    current_day: bool,
    #[serde(skip)]
    included: bool,
    #[serde(skip)]
    reason: String,
}

#[derive(Debug, Clone, Serialize, Default)]
struct Card {
    kind: &'static str,
    name: String,
    role: Option<String>,
    status: Option<String>,
    disposition: Option<String>,
    location: Option<String>,
    voice: Option<String>,
    summary: Option<String>,
    parent: Option<String>,
    description: Option<String>,
    here: Vec<String>,
    class_level: Option<String>,
    hp: Option<String>,
    ac: Option<i64>,
    conditions: Vec<String>,
    inventory: Vec<String>,
    priority: Option<&'static str>,
    next: Option<String>,
    carrier: Option<String>,
    #[serde(skip)]
    source: String,
    #[serde(skip)]
    via: String,
    #[serde(skip)]
    short: Option<Box<Card>>,
    #[serde(skip)]
    shortened: bool,
}

struct Plan<'a> {
    mode: Mode,
    c: &'a Campaign,
    party: Vec<PcRow>,
    scene: Vec<LocRow>,
    npcs: Vec<NpcRow>,
    threads: Vec<ThreadRow>,
    events: Vec<EventRow>,
    cards: Vec<Card>,
    items_out: Vec<Item>,
    split: bool,
}

/// Joins voice lines into one: sentences with a space, fragments with `; `.
fn join_voice(lines: &[String]) -> Option<String> {
    let mut out = String::new();
    for l in lines {
        let l = l.trim();
        if l.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push_str(if out.ends_with(['.', '!', '?', '"']) {
                " "
            } else {
                "; "
            });
        }
        out.push_str(l);
    }
    (!out.is_empty()).then_some(out)
}

fn npc_card(c: &Campaign, n: &Npc, via: String) -> Card {
    let voice = join_voice(&n.voice);
    let mut card = Card {
        kind: "npc",
        name: n.name.clone(),
        role: n.role.clone(),
        hp: hp_text(n.hp_current, n.hp_max),
        ac: n.ac,
        status: Some(n.status.clone()),
        disposition: n.disposition.clone(),
        location: c.place_name(n.location.as_deref(), n.location_text.as_deref()),
        voice: voice.clone(),
        summary: n.summary.as_deref().map(|s| first_sentence(s).to_string()),
        source: n.source.to_string(),
        via,
        ..Card::default()
    };
    let mut short = card.clone();
    short.summary = None;
    short.voice = n.voice.first().cloned();
    short.disposition = None;
    card.short = Some(Box::new(short));
    card
}

fn who_is_at(c: &Campaign, loc: &str) -> Vec<String> {
    c.pcs
        .iter()
        .filter(|p| p.active && p.location.as_deref() == Some(loc))
        .map(|p| p.name.clone())
        .chain(
            c.npcs
                .iter()
                .filter(|n| !n.is_absent() && n.location.as_deref() == Some(loc))
                .map(|n| n.name.clone()),
        )
        .collect()
}

fn card_for(c: &Campaign, t: Target, via: String) -> Card {
    match t {
        Target::Npc(i) => npc_card(c, &c.npcs[i], via),
        Target::Pc(i) => {
            let p = &c.pcs[i];
            let r = pc_row(c, p);
            let mut card = Card {
                kind: "pc",
                name: r.name,
                class_level: r.class_level,
                status: r.status,
                hp: r.hp,
                ac: p.ac,
                location: r.location,
                conditions: r.conditions,
                inventory: r.inventory,
                summary: r.summary,
                source: p.source.to_string(),
                via,
                ..Card::default()
            };
            let mut short = card.clone();
            short.summary = None;
            short.inventory.clear();
            card.short = Some(Box::new(short));
            card
        }
        Target::Location(i) => {
            let l = &c.locations[i];
            let mut card = Card {
                kind: "location",
                name: l.name.clone(),
                parent: l
                    .parent
                    .as_deref()
                    .and_then(|p| c.location(p))
                    .map(|p| p.name.clone()),
                description: l
                    .description
                    .as_deref()
                    .map(|d| first_sentence(d).to_string()),
                here: who_is_at(c, &l.id),
                source: l.source.to_string(),
                via,
                ..Card::default()
            };
            let mut short = card.clone();
            short.here.truncate(3);
            short.parent = None;
            card.short = Some(Box::new(short));
            card
        }
        Target::Thread(i) => {
            let t = &c.threads[i];
            let mut card = Card {
                kind: "thread",
                name: t.title.clone(),
                priority: Some(t.priority.as_str()),
                summary: t.summary.first().cloned(),
                next: t.next.clone(),
                source: t.source.to_string(),
                via,
                ..Card::default()
            };
            let mut short = card.clone();
            short.summary = None;
            card.short = Some(Box::new(short));
            card
        }
        Target::Item(p, j) => Card {
            kind: "item",
            name: c.pcs[p].inventory[j].clone(),
            carrier: Some(c.pcs[p].name.clone()),
            source: c.pcs[p].source.to_string(),
            via,
            ..Card::default()
        },
        Target::Session(i) => {
            let s = &c.sessions[i];
            Card {
                kind: "session",
                name: s.name.clone(),
                summary: s.summary.as_deref().map(|s| first_sentence(s).to_string()),
                source: s.source.to_string(),
                via,
                ..Card::default()
            }
        }
        Target::Lore(i) => {
            let l = &c.lore[i];
            Card {
                kind: "lore",
                name: l.name.clone(),
                summary: l.summary.as_deref().map(|s| first_sentence(s).to_string()),
                source: l.source.to_string(),
                via,
                ..Card::default()
            }
        }
    }
}

/// Lower-cased text of the urgent and high threads, and of the last two days' events: NPCs
/// named there rank first among those present.
fn rank_texts(c: &Campaign) -> (String, String) {
    let mut threads = String::new();
    for t in c.threads.iter().filter(|t| t.priority <= Priority::High) {
        threads.push_str(&t.title);
        threads.push('\n');
        for l in &t.summary {
            threads.push_str(l);
            threads.push('\n');
        }
        if let Some(n) = &t.next {
            threads.push_str(n);
            threads.push('\n');
        }
    }
    let mut events = String::new();
    if let Some(day) = c.day {
        for e in c.events.iter().filter(|e| e.day >= day - 1 && e.day <= day) {
            events.push_str(&e.text);
            events.push('\n');
        }
    }
    (threads.to_lowercase(), events.to_lowercase())
}

fn rank_score(texts: &(String, String), n: &Npc) -> i32 {
    let key = n.name.to_lowercase();
    let first = key.split_whitespace().last().unwrap_or(&key).to_string();
    let mut s = 0;
    let in_text = |t: &str| t.contains(&key) || t.contains(&first);
    if in_text(&texts.0) {
        s += 4;
    }
    if in_text(&texts.1) {
        s += 3;
    }
    match n.disposition.as_deref().map(str::to_lowercase).as_deref() {
        None | Some("neutral") | Some("unknown") => {}
        Some(_) => s += 1,
    }
    s
}

pub(super) fn build(engine: &Engine, opts: &Options) -> Result<Injected, ContextError> {
    let c = engine.campaign();
    let mode = engine.mode_for(opts);
    let mentions = opts
        .message
        .as_deref()
        .map(|m| engine.matcher().find(m))
        .unwrap_or_default();
    let mentioned: HashMap<Target, String> = mentions
        .iter()
        .map(|m| {
            (
                m.target,
                if m.ambiguous {
                    format!(
                        "mentioned as \"{}\" ({}, shared by several)",
                        m.text,
                        m.how.as_str()
                    )
                } else if m.how == super::mentions::How::Name {
                    format!("mentioned as \"{}\"", m.text)
                } else {
                    format!("mentioned as \"{}\" ({})", m.text, m.how.as_str())
                },
            )
        })
        .collect();

    // The speaking PC, if any.
    let focus = match &opts.pc {
        Some(name) => {
            let key = name.trim().to_lowercase();
            let found = c.pcs.iter().position(|p| {
                p.name.to_lowercase() == key
                    || p.name.to_lowercase().split_whitespace().next() == Some(key.as_str())
                    || p.aliases.iter().any(|a| a.to_lowercase() == key)
                    || crate::vault::links::strip_md(&p.id)
                        .rsplit('/')
                        .next()
                        .map(str::to_lowercase)
                        .as_deref()
                        == Some(key.as_str())
            });
            match found {
                Some(i) => Some(i),
                None => {
                    return Err(ContextError::UnknownPc {
                        name: name.clone(),
                        known: c
                            .pcs
                            .iter()
                            .map(|p| p.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", "),
                    })
                }
            }
        }
        None => None,
    };

    let mut items_out: Vec<Item> = Vec::new();
    // Party.
    let mut party_pcs: Vec<&Pc> = c.party().collect();
    if let Some(f) = focus {
        if let Some(pos) = party_pcs.iter().position(|p| p.id == c.pcs[f].id) {
            let p = party_pcs.remove(pos);
            party_pcs.insert(0, p);
        } else {
            party_pcs.insert(0, &c.pcs[f]);
        }
    }
    for p in c
        .pcs
        .iter()
        .filter(|p| !p.active && Some(&p.id) != focus.map(|f| &c.pcs[f].id))
    {
        items_out.push(Item {
            kind: "pc",
            name: p.name.clone(),
            source: p.source.to_string(),
            tokens: 0,
            included: false,
            reason: format!(
                "not in the active party ({})",
                p.inactive_reason
                    .clone()
                    .unwrap_or_else(|| format!("status {}", p.status))
            ),
        });
    }
    let party: Vec<PcRow> = party_pcs.iter().map(|p| pc_row(c, p)).collect();

    // Scene: the party's locations (the focus PC's only, with --pc).
    let mut scene_ids: Vec<String> = Vec::new();
    let scene_pcs: Vec<&Pc> = match focus {
        Some(f) => vec![&c.pcs[f]],
        None => party_pcs.clone(),
    };
    for p in &scene_pcs {
        match &p.location {
            Some(l) => {
                if !scene_ids.contains(l) {
                    scene_ids.push(l.clone());
                }
            }
            None => items_out.push(Item {
                kind: "location",
                name: p.location_text.clone().unwrap_or_else(|| "(none)".into()),
                source: p.source.to_string(),
                tokens: 0,
                included: false,
                reason: match &p.location_text {
                    Some(t) => format!("{}'s location \"{t}\" matches no location note", p.name),
                    None => format!("{} has no location", p.name),
                },
            }),
        }
    }
    let split = {
        let all: HashSet<Option<&String>> = party_pcs.iter().map(|p| p.location.as_ref()).collect();
        all.len() > 1
    };
    let scene: Vec<LocRow> = scene_ids
        .iter()
        .filter_map(|id| c.location(id))
        .map(|l| LocRow {
            id: l.id.clone(),
            name: l.name.clone(),
            parent: l
                .parent
                .as_deref()
                .and_then(|p| c.location(p))
                .map(|p| p.name.clone()),
            description: l.description.clone(),
            full: l.description.clone(),
            level: 0,
        })
        .collect();

    // NPCs at the scene.
    let mut npcs: Vec<NpcRow> = Vec::new();
    for (i, n) in c.npcs.iter().enumerate() {
        let Some(loc) = n.location.as_ref() else {
            continue;
        };
        if !scene_ids.contains(loc) {
            continue;
        }
        if n.is_absent() {
            items_out.push(Item {
                kind: "npc",
                name: n.name.clone(),
                source: n.source.to_string(),
                tokens: 0,
                included: false,
                reason: format!(
                    "at {} but {}",
                    c.place_name(Some(loc), None).unwrap_or_default(),
                    n.status
                ),
            });
            continue;
        }
        let m = mentioned.get(&Target::Npc(i));
        npcs.push(NpcRow {
            name: n.name.clone(),
            at: c.place_name(Some(loc), None),
            status: Some(n.status.clone()),
            role: n.role.clone(),
            disposition: n.disposition.clone(),
            voice: join_voice(&n.voice),
            hp: hp_text(n.hp_current, n.hp_max),
            idx: i,
            mentioned: m.is_some(),
            included: true,
            reason: match m {
                Some(r) => format!("present, {r}"),
                None => format!(
                    "present at {}",
                    c.place_name(Some(loc), None).unwrap_or_default()
                ),
            },
        });
    }
    let texts = rank_texts(c);
    let scores: HashMap<usize, i32> = npcs
        .iter()
        .map(|r| (r.idx, rank_score(&texts, &c.npcs[r.idx])))
        .collect();
    npcs.sort_by(|a, b| {
        b.mentioned
            .cmp(&a.mentioned)
            .then(scores[&b.idx].cmp(&scores[&a.idx]))
            .then(a.name.cmp(&b.name))
    });
    let mut unmentioned = 0;
    for r in npcs.iter_mut() {
        if !r.mentioned {
            unmentioned += 1;
            if unmentioned > opts.npc_cap {
                r.included = false;
                r.reason = format!("present, but over the NPC cap ({})", opts.npc_cap);
            }
        }
    }

    // Threads.
    let mut threads: Vec<ThreadRow> = Vec::new();
    for (i, t) in c.threads.iter().enumerate() {
        let m = mentioned.get(&Target::Thread(i));
        let row = ThreadRow {
            priority: t.priority.as_str(),
            title: t.title.clone(),
            summary: t.summary.first().cloned(),
            next: t.next.clone(),
            idx: i,
            p: t.priority,
            mentioned: m.is_some(),
            included: t.priority != Priority::Resolved && mode == Mode::Full,
            reason: if t.priority == Priority::Resolved {
                "resolved".into()
            } else if mode == Mode::Light {
                "light context carries no storylines".into()
            } else {
                format!("{} thread", t.priority.as_str())
            },
        };
        threads.push(row);
    }
    threads.sort_by_key(|t| (t.p, t.idx));

    // Events: the last N up to the current day.
    let mut events: Vec<EventRow> = Vec::new();
    let mut eligible: Vec<usize> = (0..c.events.len())
        .filter(|&i| c.day.is_none_or(|d| c.events[i].day <= d))
        .collect();
    eligible.sort_by_key(|&i| (c.events[i].day, i));
    let keep_from = eligible.len().saturating_sub(opts.recent_events);
    for (k, &i) in eligible.iter().enumerate() {
        let e = &c.events[i];
        let inc = k >= keep_from && mode == Mode::Full;
        events.push(EventRow {
            day: e.day,
            when: e.when.clone(),
            text: e.text.clone(),
            idx: i,
            current_day: Some(e.day) == c.day,
            included: inc,
            reason: if mode == Mode::Light {
                "light context carries no events".into()
            } else if inc {
                "recent event".into()
            } else {
                format!("older than the last {}", opts.recent_events)
            },
        });
    }
    if mode == Mode::Full {
        if c.threads.is_empty() {
            items_out.push(Item {
                kind: "thread",
                name: "(none)".into(),
                source: format!("{}:1", crate::canon::OPEN_THREADS),
                tokens: 0,
                included: false,
                reason: "no open threads in canon/open-threads.md or thread notes".into(),
            });
        }
        if let Some(d) = c.day {
            if !c.events.iter().any(|e| e.day == d) {
                items_out.push(Item {
                    kind: "event",
                    name: format!("(nothing on Day {d})"),
                    source: format!("{}:1", crate::canon::TIMELINE),
                    tokens: 0,
                    included: false,
                    reason: if events.is_empty() {
                        "the timeline has no events up to the current day".into()
                    } else {
                        "the timeline has no events for the current day; the latest earlier ones are shown".into()
                    },
                });
            }
        }
    }
    for e in c.events.iter().filter(|e| c.day.is_some_and(|d| e.day > d)) {
        items_out.push(Item {
            kind: "event",
            name: e.text.clone(),
            source: e.source.to_string(),
            tokens: 0,
            included: false,
            reason: format!("day {} is after the current day", e.day),
        });
    }

    // Mention cards for what is not already shown.
    let mut cards: Vec<Card> = Vec::new();
    for m in &mentions {
        let via = mentioned.get(&m.target).cloned().unwrap_or_default();
        let shown = mode == Mode::Full
            && match m.target {
                Target::Npc(i) => npcs.iter().any(|r| r.idx == i && r.included),
                Target::Pc(i) => c.pcs[i].active,
                Target::Location(i) => scene_ids.contains(&c.locations[i].id),
                Target::Thread(i) => threads.iter().any(|t| t.idx == i && t.included),
                _ => false,
            };
        if shown {
            continue;
        }
        if mode == Mode::Full {
            if let Target::Npc(i) = m.target {
                // A mentioned NPC over the cap is shown in the list, never dropped.
                if let Some(r) = npcs.iter_mut().find(|r| r.idx == i) {
                    r.included = true;
                    continue;
                }
            }
        }
        cards.push(card_for(c, m.target, via));
    }

    let mut plan = Plan {
        mode,
        c,
        party,
        scene,
        npcs,
        threads,
        events,
        cards,
        items_out,
        split,
    };
    let mut text = render(engine, &plan)?;
    let mut count = engine.count_tokens(&text);
    if let Some(budget) = opts.budget {
        let mut step = 0;
        // Drop about as much as the excess (four characters a token), then render and
        // count once; repeat while still over. Re-rendering after every single drop would
        // cost a render and a count per dropped row.
        while count > budget {
            let want = (count - budget) * 4;
            let mut saved = 0;
            let mut dropped = false;
            while saved < want {
                match shrink(&mut plan, &mut step) {
                    Some(s) => {
                        saved += s.max(1);
                        dropped = true;
                    }
                    None => break,
                }
            }
            if !dropped {
                break;
            }
            text = render(engine, &plan)?;
            count = engine.count_tokens(&text);
        }
    }
    let items = if opts.explain {
        explain(&plan, opts.budget)
    } else {
        Vec::new()
    };
    Ok(Injected {
        mode,
        text,
        tokens: count,
        items,
    })
}

/// Applies the next budget drop and returns about how many characters it saved; None when
/// nothing is left to drop.
fn shrink(p: &mut Plan<'_>, step: &mut u8) -> Option<usize> {
    const BUDGET: &str = "dropped for the token budget";
    loop {
        let done = match *step {
            // 1. Low threads, last first.
            0 => drop_last(
                &mut p.threads,
                |t| t.included && !t.mentioned && t.p == Priority::Low,
                |t| {
                    t.included = false;
                    t.reason = BUDGET.into();
                    thread_len(t)
                },
            ),
            // 2. Older events: everything before the current day, oldest first.
            1 => drop_first(
                &mut p.events,
                |e| e.included && !e.current_day,
                |e| {
                    e.included = false;
                    e.reason = BUDGET.into();
                    e.text.len() + 12
                },
            ),
            // 3. Voice lines of present, unmentioned NPCs, lowest ranked first.
            2 => drop_last(
                &mut p.npcs,
                |n| n.included && !n.mentioned && n.voice.is_some(),
                |n| n.voice.take().map_or(0, |v| v.len() + 9),
            ),
            // 4. Medium threads.
            3 => drop_last(
                &mut p.threads,
                |t| t.included && !t.mentioned && t.p == Priority::Medium,
                |t| {
                    t.included = false;
                    t.reason = BUDGET.into();
                    thread_len(t)
                },
            ),
            // 5. Location description past its first sentence.
            4 => drop_last(
                &mut p.scene,
                |l| l.level == 0 && l.full.is_some(),
                |l| {
                    l.level = 1;
                    l.description = l.full.as_deref().map(|d| first_sentence(d).to_string());
                    len(&l.full) - len(&l.description)
                },
            ),
            // 6. Present, unmentioned NPCs.
            5 => drop_last(
                &mut p.npcs,
                |n| n.included && !n.mentioned,
                |n| {
                    n.included = false;
                    n.reason = BUDGET.into();
                    npc_len(n)
                },
            ),
            // Past the documented order: shorten mentioned cards, then the rest of the
            // events, high and urgent threads, and the scene description.
            6 => drop_last(
                &mut p.cards,
                |c| !c.shortened && c.short.is_some(),
                |c| {
                    let before = card_len(c);
                    if let Some(s) = c.short.take() {
                        *c = Card {
                            shortened: true,
                            source: c.source.clone(),
                            via: c.via.clone(),
                            ..*s
                        };
                    }
                    before.saturating_sub(card_len(c))
                },
            ),
            7 => drop_first(
                &mut p.events,
                |e| e.included,
                |e| {
                    e.included = false;
                    e.reason = BUDGET.into();
                    e.text.len() + 12
                },
            ),
            8 => drop_last(
                &mut p.threads,
                |t| t.included && !t.mentioned && t.p == Priority::High,
                |t| {
                    t.included = false;
                    t.reason = BUDGET.into();
                    thread_len(t)
                },
            ),
            9 => drop_last(
                &mut p.threads,
                |t| t.included && !t.mentioned && t.p == Priority::Urgent,
                |t| {
                    t.included = false;
                    t.reason = BUDGET.into();
                    thread_len(t)
                },
            ),
            10 => drop_last(
                &mut p.scene,
                |l| l.level < 2 && l.description.is_some(),
                |l| {
                    l.level = 2;
                    len(&l.description.take())
                },
            ),
            _ => return None,
        };
        if done.is_some() {
            return done;
        }
        *step += 1;
    }
}

fn drop_last<T>(
    v: &mut [T],
    pred: impl Fn(&T) -> bool,
    act: impl FnOnce(&mut T) -> usize,
) -> Option<usize> {
    v.iter_mut().rev().find(|x| pred(x)).map(act)
}

fn drop_first<T>(
    v: &mut [T],
    pred: impl Fn(&T) -> bool,
    act: impl FnOnce(&mut T) -> usize,
) -> Option<usize> {
    v.iter_mut().find(|x| pred(x)).map(act)
}

fn len(s: &Option<String>) -> usize {
    s.as_deref().map_or(0, str::len)
}

fn thread_len(t: &ThreadRow) -> usize {
    t.title.len() + len(&t.summary) + len(&t.next) + 24
}

fn npc_len(n: &NpcRow) -> usize {
    n.name.len()
        + len(&n.status)
        + len(&n.role)
        + len(&n.disposition)
        + len(&n.voice)
        + len(&n.at)
        + 24
}

fn card_len(c: &Card) -> usize {
    [
        &c.role,
        &c.status,
        &c.disposition,
        &c.location,
        &c.voice,
        &c.summary,
        &c.parent,
        &c.description,
        &c.class_level,
        &c.hp,
        &c.next,
        &c.carrier,
    ]
    .iter()
    .map(|f| len(f) + 4)
    .sum::<usize>()
        + c.name.len()
        + [&c.here, &c.conditions, &c.inventory]
            .iter()
            .map(|v| v.iter().map(|x| x.len() + 2).sum::<usize>())
            .sum::<usize>()
}

/// `The Copper Crew (its members' notes were edited most recently; …)` when the vault has
/// several groups of PCs: the DM and the GM both see which one is in play.
fn party_group(c: &Campaign) -> Option<String> {
    let (i, why) = c.active_party.as_ref()?;
    if c.parties.len() < 2 {
        return None;
    }
    let others: Vec<&str> = c
        .parties
        .iter()
        .enumerate()
        .filter(|(j, _)| j != i)
        .map(|(_, p)| p.name.as_str())
        .collect();
    Some(format!(
        "{} (in play: {why}; other groups: {})",
        c.parties[*i].name,
        others.join(", ")
    ))
}

/// With no timeline, the latest session note's summary stands for "what happened last"
/// in a full context (vaults that keep their story in session notes).
fn last_session(c: &Campaign, p: &Plan<'_>) -> Option<minijinja::Value> {
    if p.mode != Mode::Full || !c.events.is_empty() {
        return None;
    }
    let s = c
        .sessions
        .iter()
        .filter(|s| s.summary.is_some())
        .max_by(|a, b| {
            (a.number, a.date.as_deref(), &a.id).cmp(&(b.number, b.date.as_deref(), &b.id))
        })?;
    Some(minijinja::context! {
        name => &s.name,
        summary => s.summary.as_deref(),
    })
}

fn render(engine: &Engine, p: &Plan<'_>) -> Result<String, ContextError> {
    let c = p.c;
    let npcs: Vec<&NpcRow> = p.npcs.iter().filter(|n| n.included).collect();
    // Present NPCs grouped by where they are, in scene order (for a split party).
    let mut with_groups: Vec<(String, Vec<&str>)> =
        p.scene.iter().map(|l| (l.name.clone(), vec![])).collect();
    for n in &npcs {
        let at = n.at.clone().unwrap_or_default();
        match with_groups.iter_mut().find(|(a, _)| *a == at) {
            Some((_, names)) => names.push(&n.name),
            None => with_groups.push((at, vec![&n.name])),
        }
    }
    with_groups.retain(|(_, names)| !names.is_empty());
    let ctx = minijinja::context! {
        campaign => &c.name,
        setting => &c.setting,
        day => c.day,
        time => &c.time,
        party => &p.party,
        party_group => party_group(c),
        split => p.split,
        scene => p.scene.iter().map(|l| l.name.as_str()).collect::<Vec<_>>().join(", "),
        locations => &p.scene,
        npcs => &npcs,
        with => npcs.iter().map(|n| n.name.as_str()).collect::<Vec<_>>(),
        with_groups => with_groups
            .iter()
            .map(|(at, names)| minijinja::context! { at => at, names => names })
            .collect::<Vec<_>>(),
        threads => p.threads.iter().filter(|t| t.included).collect::<Vec<_>>(),
        events => p.events.iter().filter(|e| e.included).collect::<Vec<_>>(),
        last_session => last_session(c, p),
        cards => &p.cards,
    };
    let name = match p.mode {
        Mode::Full => "full.j2",
        Mode::Light => "light.j2",
    };
    Ok(engine.templates().render(name, ctx)?)
}

fn explain(p: &Plan<'_>, budget: Option<usize>) -> Vec<Item> {
    let c = p.c;
    let est = tokens::estimate;
    let mut items = vec![Item {
        kind: "header",
        name: c.name.clone(),
        source: "vaultdm.toml".into(),
        tokens: est(&c.name) + c.setting.as_deref().map_or(0, est) + 4,
        included: true,
        reason: "always".into(),
    }];
    items.push(Item {
        kind: "time",
        name: match (c.day, &c.time) {
            (Some(d), Some(t)) => format!("Day {d} - {t}"),
            (Some(d), None) => format!("Day {d}"),
            (None, Some(t)) => t.clone(),
            (None, None) => "(no day)".into(),
        },
        source: format!("{}:1", crate::canon::TEMPORAL_INDEX),
        tokens: if c.day.is_some() || c.time.is_some() {
            5
        } else {
            0
        },
        included: c.day.is_some() || c.time.is_some(),
        reason: if c.day.is_some() {
            "always".into()
        } else {
            "no current day in the temporal index or timeline".into()
        },
    });
    for r in &p.party {
        items.push(Item {
            kind: "pc",
            name: r.name.clone(),
            source: r.source.clone(),
            tokens: est(&serde_json::to_string(r).unwrap_or_default()) / 2,
            included: true,
            reason: if r.active {
                "active PC".into()
            } else {
                "the focus PC (--pc), though not in the active party".into()
            },
        });
    }
    for l in &p.scene {
        let src = c
            .location(&l.id)
            .map(|l| l.source.to_string())
            .unwrap_or_default();
        items.push(Item {
            kind: "location",
            name: l.name.clone(),
            source: src,
            tokens: if p.mode == Mode::Full {
                est(&l.name) + l.description.as_deref().map_or(0, est)
            } else {
                est(&l.name)
            },
            included: true,
            reason: match (p.mode, l.level) {
                (Mode::Light, _) => "party location (name only in light context)".into(),
                (_, 0) => "party location".into(),
                (_, 1) => {
                    "party location; description cut to its first sentence for the budget".into()
                }
                _ => "party location; description dropped for the budget".into(),
            },
        });
    }
    for n in &p.npcs {
        let npc = &c.npcs[n.idx];
        let mut reason = n.reason.clone();
        if n.included && n.voice.is_none() && !npc.voice.is_empty() && p.mode == Mode::Full {
            reason.push_str("; voice dropped for the token budget");
        } else if n.included && npc.voice.is_empty() {
            reason.push_str("; no voice in the note");
        }
        items.push(Item {
            kind: "npc",
            name: n.name.clone(),
            source: npc.source.to_string(),
            tokens: if n.included {
                est(&n.name) + n.voice.as_deref().map_or(0, est) + 8
            } else {
                0
            },
            included: n.included,
            reason,
        });
    }
    for t in &p.threads {
        let th = &c.threads[t.idx];
        items.push(Item {
            kind: "thread",
            name: t.title.clone(),
            source: th.source.to_string(),
            tokens: if t.included {
                est(&t.title)
                    + t.summary.as_deref().map_or(0, est)
                    + t.next.as_deref().map_or(0, est)
                    + 6
            } else {
                0
            },
            included: t.included,
            reason: if t.mentioned && t.included {
                format!("{} thread, mentioned", t.priority)
            } else {
                t.reason.clone()
            },
        });
    }
    for e in &p.events {
        items.push(Item {
            kind: "event",
            name: format!("Day {}: {}", e.day, e.text),
            source: c.events[e.idx].source.to_string(),
            tokens: if e.included { est(&e.text) + 4 } else { 0 },
            included: e.included,
            reason: e.reason.clone(),
        });
    }
    for card in &p.cards {
        items.push(Item {
            kind: "card",
            name: format!("{} {}", card.kind, card.name),
            source: card.source.clone(),
            tokens: est(&format!("{card:?}")) / 3,
            included: true,
            reason: if card.shortened {
                format!("{}; shortened for the token budget", card.via)
            } else {
                card.via.clone()
            },
        });
    }
    items.extend(p.items_out.iter().cloned());
    if budget.is_some() {
        for i in items.iter_mut() {
            if i.reason == "dropped for the token budget" {
                i.reason = format!("dropped for the token budget ({})", budget.unwrap_or(0));
            }
        }
    }
    items
}

#[cfg(test)]
mod tests {
    use super::first_sentence;

    #[test]
    fn first_sentences() {
        assert_eq!(first_sentence("A den. The floor lists."), "A den.");
        assert_eq!(
            first_sentence("St. Ives is near. Yes."),
            "St. Ives is near."
        );
        assert_eq!(first_sentence("No stop"), "No stop");
        assert_eq!(first_sentence("Costs 3.5 gp. Cheap."), "Costs 3.5 gp.");
    }
}
