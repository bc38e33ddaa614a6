//! The plan of a context: every row that may go into the block, built from the canon and
//! the message, then rendered through the mode's template. The budget (`budget.rs`) cuts
//! rows of a plan; `explain.rs` reads it.

use super::cards::{card_for, Card};
use super::explain::{Cut, ItemKind, Reason, Via};
use super::scene::left_out;
use super::{rank, scene, ContextError, Engine, Item, Mode, Options};
use crate::canon::{Campaign, Priority};
use crate::mentions::Target;
use serde::Serialize;
use std::collections::HashMap;

#[derive(Debug, Clone, Serialize)]
pub(super) struct PcRow {
    pub name: String,
    pub class_level: Option<String>,
    pub hp: Option<String>,
    pub location: Option<String>,
    pub gold: Option<i64>,
    pub conditions: Vec<String>,
    pub inventory: Vec<String>,
    pub status: Option<String>,
    pub summary: Option<String>,
    #[serde(skip)]
    pub source: String,
    #[serde(skip)]
    pub active: bool,
}

#[derive(Debug, Clone, Serialize)]
pub(super) struct LocRow {
    pub id: String,
    pub name: String,
    pub parent: Option<String>,
    pub description: Option<String>,
    /// No PC has a place: the session whose last place this is.
    pub from_session: Option<String>,
    #[serde(skip)]
    pub full: Option<String>,
    #[serde(skip)]
    pub cut: Cut,
}

#[derive(Debug, Clone, Serialize)]
pub(super) struct NpcRow {
    pub name: String,
    /// Where the NPC is (display name); templates show it when the party is split.
    pub at: Option<String>,
    pub status: Option<String>,
    pub role: Option<String>,
    pub disposition: Option<String>,
    pub voice: Option<String>,
    /// HP when the GM tracks it (a boss in the scene).
    pub hp: Option<String>,
    #[serde(skip)]
    pub idx: usize,
    #[serde(skip)]
    pub mentioned: bool,
    #[serde(skip)]
    pub included: bool,
    #[serde(skip)]
    pub reason: Reason,
}

#[derive(Debug, Clone, Serialize)]
pub(super) struct ThreadRow {
    pub priority: &'static str,
    pub title: String,
    pub summary: Option<String>,
    pub next: Option<String>,
    #[serde(skip)]
    pub idx: usize,
    #[serde(skip)]
    pub p: Priority,
    #[serde(skip)]
    pub mentioned: bool,
    #[serde(skip)]
    pub included: bool,
    #[serde(skip)]
    pub reason: Reason,
}

#[derive(Debug, Clone, Serialize)]
pub(super) struct EventRow {
    pub day: i64,
    pub when: String,
    pub text: String,
    #[serde(skip)]
    pub idx: usize,
    #[serde(skip)]
    pub current_day: bool,
    #[serde(skip)]
    pub included: bool,
    #[serde(skip)]
    pub reason: Reason,
}

/// Every row of one context, with what is in and why.
#[derive(Debug, Clone)]
pub(super) struct Plan<'a> {
    pub mode: Mode,
    pub c: &'a Campaign,
    pub party: Vec<PcRow>,
    pub scene: Vec<LocRow>,
    pub npcs: Vec<NpcRow>,
    pub threads: Vec<ThreadRow>,
    pub events: Vec<EventRow>,
    pub cards: Vec<Card>,
    pub items_out: Vec<Item>,
    pub split: bool,
    /// No place for the party: the NPCs listed are those the recent events name.
    pub npcs_in_events: bool,
    /// The DM-only part: the GM's secrets that travel with what is shown (`secrets.rs`).
    pub secrets: Vec<super::secrets::SecretRow>,
    /// The next step of the budget's drop order to try (`budget::ORDER`).
    pub cursor: usize,
}

impl<'a> Plan<'a> {
    /// Plans the context for a message, before any budget.
    pub(super) fn new(engine: &'a Engine, opts: &Options) -> Result<Plan<'a>, ContextError> {
        let c = engine.campaign();
        let mode = engine.mode_for(opts);
        let mentions = opts
            .message
            .as_deref()
            .map(|m| {
                engine
                    .matcher()
                    .find_beside(m, &|t| super::secrets::is_gm_only_target(c, t))
            })
            .unwrap_or_default();
        let mentioned: HashMap<Target, Via> =
            mentions.iter().map(|m| (m.target, Via::of(m))).collect();

        let focus = scene::focus(c, opts.pc.as_deref())?;
        let mut items_out: Vec<Item> = Vec::new();
        let mut sc = scene::scene(c, focus, &mentioned, &mut items_out);
        rank::rank_and_cap(c, &mut sc.npcs, opts.npc_cap);
        let threads = threads(c, mode, &mentioned);
        let events = events(c, mode, opts.recent_events, &mut items_out);
        let npcs_in_events = mode == Mode::Full && sc.ids.is_empty() && sc.npcs.is_empty();
        if npcs_in_events {
            let texts: Vec<&str> = events
                .iter()
                .filter(|e| e.included)
                .map(|e| e.text.as_str())
                .collect();
            sc.npcs = scene::named_in_events(
                c,
                &texts,
                engine.matcher(),
                &mentioned,
                opts.npc_cap,
                &mut items_out,
            );
        }

        // Cards for what is mentioned and not already shown.
        let mut cards: Vec<Card> = Vec::new();
        for (position, m) in mentions.iter().enumerate() {
            let shown = mode == Mode::Full
                && match m.target {
                    Target::Npc(i) => sc.npcs.iter().any(|r| r.idx == i as usize && r.included),
                    Target::Pc(i) => c.pcs[i as usize].active,
                    Target::Location(i) => sc.ids.contains(&c.locations[i as usize].id),
                    Target::Thread(i) => threads.iter().any(|t| t.idx == i as usize && t.included),
                    _ => false,
                };
            if shown {
                continue;
            }
            if mode == Mode::Full {
                if let Target::Npc(i) = m.target {
                    // A mentioned NPC over the cap is shown in the list, never dropped.
                    if let Some(r) = sc.npcs.iter_mut().find(|r| r.idx == i as usize) {
                        r.included = true;
                        continue;
                    }
                }
            }
            cards.push(card_for(c, m.target, Via::of(m), position));
        }
        let mut plan = Plan {
            mode,
            c,
            party: sc.party,
            scene: sc.locations,
            npcs: sc.npcs,
            threads,
            events,
            cards,
            items_out,
            split: sc.split,
            npcs_in_events,
            secrets: Vec::new(),
            cursor: 0,
        };
        super::secrets::settle(&mut plan, opts.player);
        Ok(plan)
    }

    /// Renders the plan through the mode's template.
    pub(super) fn render(&self, engine: &Engine) -> Result<String, ContextError> {
        let c = self.c;
        let npcs: Vec<&NpcRow> = self.npcs.iter().filter(|n| n.included).collect();
        // Present NPCs grouped by where they are, in scene order (for a split party).
        let mut with_groups: Vec<(String, Vec<&str>)> = self
            .scene
            .iter()
            .map(|l| (l.name.clone(), vec![]))
            .collect();
        for n in &npcs {
            let at = n.at.clone().unwrap_or_default();
            match with_groups.iter_mut().find(|(a, _)| *a == at) {
                Some((_, names)) => names.push(&n.name),
                None => with_groups.push((at, vec![&n.name])),
            }
        }
        with_groups.retain(|(_, names)| !names.is_empty());
        let cards: Vec<&Card> = self
            .cards
            .iter()
            .filter(|c| matches!(c.cut, Cut::None | Cut::Shortened))
            .collect();
        let also: Vec<&str> = self
            .cards
            .iter()
            .filter(|c| c.cut == Cut::NameOnly)
            .map(|c| c.name.as_str())
            .collect();
        let also_more = self.cards.iter().filter(|c| c.cut == Cut::Counted).count();
        let ctx = minijinja::context! {
            campaign => &c.name,
            setting => &c.setting,
            day => c.day,
            time => &c.time,
            party => &self.party,
            party_group => party_group(c),
            split => self.split,
            scene => self.scene.iter().map(|l| l.name.as_str()).collect::<Vec<_>>().join(", "),
            locations => &self.scene,
            npcs => &npcs,
            npcs_in_events => self.npcs_in_events,
            with => npcs.iter().map(|n| n.name.as_str()).collect::<Vec<_>>(),
            with_groups => with_groups
                .iter()
                .map(|(at, names)| minijinja::context! { at => at, names => names })
                .collect::<Vec<_>>(),
            threads => self.threads.iter().filter(|t| t.included).collect::<Vec<_>>(),
            events => self.events.iter().filter(|e| e.included).collect::<Vec<_>>(),
            last_session => last_session(c, self.mode),
            cards => cards,
            also_mentioned => also,
            also_more => also_more,
            secrets => super::secrets::shown(self),
        };
        let name = match self.mode {
            Mode::Full => "full.j2",
            Mode::Light => "light.j2",
        };
        Ok(engine.templates().render(name, ctx)?)
    }
}

/// Every thread, in priority order: open ones in a full context, with their reasons.
fn threads(c: &Campaign, mode: Mode, mentioned: &HashMap<Target, Via>) -> Vec<ThreadRow> {
    let mut threads: Vec<ThreadRow> = c
        .threads
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mentioned = mentioned.contains_key(&Target::Thread(Target::at(i)));
            ThreadRow {
                priority: t.priority.as_str(),
                title: t.title.clone(),
                summary: t.summary.first().cloned(),
                next: t.next.clone(),
                idx: i,
                p: t.priority,
                mentioned,
                included: t.priority != Priority::Resolved && mode == Mode::Full,
                reason: if t.priority == Priority::Resolved {
                    Reason::Resolved
                } else if mode == Mode::Light {
                    Reason::LightNoThreads
                } else {
                    Reason::Thread(t.priority.as_str(), mentioned)
                },
            }
        })
        .collect();
    threads.sort_by_key(|t| (t.p, t.idx));
    threads
}

/// The current day when `e` is dated after it. Only a `Day N` event has a day the clock
/// counts; an event of the vault's own calendar (`## Year 3`) carries its place in the
/// timeline instead, which no clock day cuts.
fn after_today(c: &Campaign, e: &crate::canon::Event) -> Option<i64> {
    c.day.filter(|&d| e.numbered && e.day > d)
}

/// The events up to the current day; the last `recent` of them in a full context.
fn events(c: &Campaign, mode: Mode, recent: usize, out: &mut Vec<Item>) -> Vec<EventRow> {
    let mut eligible: Vec<usize> = (0..c.events.len())
        .filter(|&i| after_today(c, &c.events[i]).is_none())
        .collect();
    eligible.sort_by_key(|&i| (c.events[i].day, i));
    let keep_from = eligible.len().saturating_sub(recent);
    let events: Vec<EventRow> = eligible
        .iter()
        .enumerate()
        .map(|(k, &i)| {
            let e = &c.events[i];
            let inc = k >= keep_from && mode == Mode::Full;
            EventRow {
                day: e.day,
                when: e.when.clone(),
                text: e.text.clone(),
                idx: i,
                current_day: Some(e.day) == c.day,
                included: inc,
                reason: if mode == Mode::Light {
                    Reason::LightNoEvents
                } else if inc {
                    Reason::RecentEvent
                } else {
                    Reason::OlderThan(recent)
                },
            }
        })
        .collect();
    if mode == Mode::Full {
        if c.threads.is_empty() {
            out.push(left_out(
                ItemKind::Thread,
                "(none)".into(),
                format!("{}:1", crate::canon::OPEN_THREADS),
                Reason::NoThreads,
            ));
        }
        // A timeline of the vault's own calendar has no day the clock names.
        let by_day = c.events.is_empty() || c.events.iter().any(|e| e.numbered);
        if let Some(d) = c.day.filter(|_| by_day) {
            if !c.events.iter().any(|e| e.numbered && e.day == d) {
                out.push(left_out(
                    ItemKind::Event,
                    format!("(nothing on Day {d})"),
                    format!("{}:1", crate::canon::TIMELINE),
                    if events.is_empty() {
                        Reason::NoEventsYet
                    } else {
                        Reason::NoEventsToday
                    },
                ));
            }
        }
    }
    for e in c.events.iter().filter(|e| after_today(c, e).is_some()) {
        out.push(left_out(
            ItemKind::Event,
            e.text.clone(),
            e.source.to_string(),
            Reason::AfterToday(e.day),
        ));
    }
    events
}

/// `The Copper Crew (in play: …; other groups: …)` when the vault has several groups of
/// PCs: the DM and the GM both see which one is in play.
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

/// The latest played session note's summary (and how it ended): "what happened last" in a
/// full context, beside the timeline's recent events when there is one.
fn last_session(c: &Campaign, mode: Mode) -> Option<minijinja::Value> {
    if mode != Mode::Full {
        return None;
    }
    let s = c.latest_session()?;
    Some(minijinja::context! {
        name => &s.name,
        summary => s.summary.as_deref(),
        ending => s.ending.as_deref(),
    })
}
