//! Mention cards: how a thing the message names reads in the block, in full and short.

use super::explain::{Cut, Via};
use crate::canon::text::{first_sentence, lead};
use crate::canon::{Campaign, Npc, Pc};
use crate::mentions::Target;
use serde::Serialize;

/// One card. `short` is what the budget shortens it to; past that it is only named.
#[derive(Debug, Clone, Serialize)]
pub(super) struct Card {
    pub kind: &'static str,
    pub name: String,
    pub role: Option<String>,
    pub status: Option<String>,
    pub disposition: Option<String>,
    pub location: Option<String>,
    pub voice: Option<String>,
    pub summary: Option<String>,
    pub parent: Option<String>,
    pub description: Option<String>,
    pub here: Vec<String>,
    pub class_level: Option<String>,
    pub hp: Option<String>,
    pub ac: Option<i64>,
    pub conditions: Vec<String>,
    pub inventory: Vec<String>,
    pub priority: Option<&'static str>,
    pub next: Option<String>,
    pub carrier: Option<String>,
    #[serde(skip)]
    pub source: String,
    #[serde(skip)]
    pub via: Via,
    /// Entities rank above items, sessions and lore; then message order.
    #[serde(skip)]
    pub rank: (u8, usize),
    #[serde(skip)]
    pub short: Option<Box<Card>>,
    #[serde(skip)]
    pub cut: Cut,
}

impl Card {
    fn new(kind: &'static str, name: String, source: String, via: Via, position: usize) -> Card {
        let rank = match kind {
            "npc" | "pc" | "location" | "thread" => 0,
            _ => 1,
        };
        Card {
            kind,
            name,
            role: None,
            status: None,
            disposition: None,
            location: None,
            voice: None,
            summary: None,
            parent: None,
            description: None,
            here: Vec::new(),
            class_level: None,
            hp: None,
            ac: None,
            conditions: Vec::new(),
            inventory: Vec::new(),
            priority: None,
            next: None,
            carrier: None,
            source,
            via,
            rank: (rank, position),
            short: None,
            cut: Cut::None,
        }
    }

    /// Replaces the card by its short form; returns about how many characters that saved.
    pub(super) fn shorten(&mut self) -> usize {
        let before = self.len();
        if let Some(s) = self.short.take() {
            *self = Card {
                cut: Cut::Shortened,
                source: std::mem::take(&mut self.source),
                via: self.via.clone(),
                rank: self.rank,
                ..*s
            };
        }
        before.saturating_sub(self.len())
    }

    /// About how many characters the card takes in the block.
    pub(super) fn len(&self) -> usize {
        [
            &self.role,
            &self.status,
            &self.disposition,
            &self.location,
            &self.voice,
            &self.summary,
            &self.parent,
            &self.description,
            &self.class_level,
            &self.hp,
            &self.next,
            &self.carrier,
        ]
        .iter()
        .map(|f| f.as_deref().map_or(0, str::len) + 4)
        .sum::<usize>()
            + self.name.len()
            + [&self.here, &self.conditions, &self.inventory]
                .iter()
                .map(|v| v.iter().map(|x| x.len() + 2).sum::<usize>())
                .sum::<usize>()
    }
}

/// `17/27`, `17`, `?/27`.
pub(super) fn hp_text(cur: Option<i64>, max: Option<i64>) -> Option<String> {
    match (cur, max) {
        (Some(a), Some(b)) => Some(format!("{a}/{b}")),
        (Some(a), None) => Some(a.to_string()),
        (None, Some(b)) => Some(format!("?/{b}")),
        _ => None,
    }
}

/// `Fighter 5`, `Fighter`, `level 5`.
pub(super) fn class_level(p: &Pc) -> Option<String> {
    match (&p.class, p.level) {
        (Some(c), Some(l)) => Some(format!("{c} {l}")),
        (Some(c), None) => Some(c.clone()),
        (None, Some(l)) => Some(format!("level {l}")),
        (None, None) => None,
    }
}

/// Joins voice lines into one: sentences with a space, fragments with `; `.
pub(super) fn join_voice(lines: &[String]) -> Option<String> {
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

/// How much of a note's summary a full card carries: the sentences that fit (a card under
/// budget pressure keeps only the first, [`short_summary`]).
const CARD_TEXT: usize = 260;

fn summary(s: Option<&str>) -> Option<String> {
    s.map(|s| lead(s, CARD_TEXT).to_string())
}

fn short_summary(s: Option<&str>) -> Option<String> {
    s.map(|s| first_sentence(s).to_string())
}

fn npc_card(c: &Campaign, n: &Npc, card: Card) -> Card {
    let mut card = Card {
        role: n.role.clone(),
        hp: hp_text(n.hp_current, n.hp_max),
        ac: n.ac,
        status: Some(n.status.clone()),
        disposition: n.disposition.clone(),
        location: c.place_name(n.location.as_deref(), n.location_text.as_deref()),
        voice: join_voice(&n.voice),
        summary: summary(n.summary.as_deref()),
        ..card
    };
    let mut short = card.clone();
    short.summary = None;
    short.voice = n.voice.first().cloned();
    short.disposition = None;
    card.short = Some(Box::new(short));
    card
}

/// Active PCs and present NPCs at a location.
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

/// The card for a mentioned target; `position` is the mention's place in the message.
pub(super) fn card_for(c: &Campaign, t: Target, via: Via, position: usize) -> Card {
    match t {
        Target::Npc(i) => {
            let n = &c.npcs[i as usize];
            let base = Card::new("npc", n.name.clone(), n.source.to_string(), via, position);
            npc_card(c, n, base)
        }
        Target::Pc(i) => {
            let p = &c.pcs[i as usize];
            let mut card = Card {
                class_level: class_level(p),
                status: (!p.active).then(|| p.status.clone()),
                hp: hp_text(p.hp_current, p.hp_max),
                ac: p.ac,
                location: c.place_name(p.location.as_deref(), p.location_text.as_deref()),
                conditions: p.conditions.clone(),
                inventory: p.inventory.clone(),
                summary: summary(p.summary.as_deref()),
                ..Card::new("pc", p.name.clone(), p.source.to_string(), via, position)
            };
            let mut short = card.clone();
            short.summary = None;
            short.inventory.clear();
            card.short = Some(Box::new(short));
            card
        }
        Target::Location(i) => {
            let l = &c.locations[i as usize];
            let mut card = Card {
                parent: l
                    .parent
                    .as_deref()
                    .and_then(|p| c.location(p))
                    .map(|p| p.name.clone()),
                description: summary(l.description.as_deref()),
                here: who_is_at(c, &l.id),
                ..Card::new(
                    "location",
                    l.name.clone(),
                    l.source.to_string(),
                    via,
                    position,
                )
            };
            let mut short = card.clone();
            short.here.truncate(3);
            short.parent = None;
            short.description = short_summary(l.description.as_deref());
            card.short = Some(Box::new(short));
            card
        }
        Target::Thread(i) => {
            let t = &c.threads[i as usize];
            let mut card = Card {
                priority: Some(t.priority.as_str()),
                summary: t.summary.first().cloned(),
                next: t.next.clone(),
                ..Card::new(
                    "thread",
                    t.title.clone(),
                    t.source.to_string(),
                    via,
                    position,
                )
            };
            let mut short = card.clone();
            short.summary = None;
            card.short = Some(Box::new(short));
            card
        }
        Target::Item(p, j) => Card {
            carrier: Some(c.pcs[p as usize].name.clone()),
            ..Card::new(
                "item",
                c.pcs[p as usize].inventory[usize::from(j)].clone(),
                c.pcs[p as usize].source.to_string(),
                via,
                position,
            )
        },
        Target::Session(i) => {
            let s = &c.sessions[i as usize];
            let mut card = Card {
                summary: summary(s.summary.as_deref()),
                ..Card::new(
                    "session",
                    s.name.clone(),
                    s.source.to_string(),
                    via,
                    position,
                )
            };
            let mut short = card.clone();
            short.summary = short_summary(s.summary.as_deref());
            card.short = Some(Box::new(short));
            card
        }
        Target::Lore(i) => {
            let l = &c.lore[i as usize];
            let mut card = Card {
                summary: summary(l.summary.as_deref()),
                ..Card::new("lore", l.name.clone(), l.source.to_string(), via, position)
            };
            let mut short = card.clone();
            short.summary = short_summary(l.summary.as_deref());
            card.short = Some(Box::new(short));
            card
        }
    }
}
