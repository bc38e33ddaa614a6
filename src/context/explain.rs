//! Explain: every candidate piece of canon, whether it is in the block, and why.
//!
//! Item kinds and reasons are data ([`ItemKind`], [`Reason`]); their words, the strings
//! `--explain` prints and `--format json` carries, are written here and nowhere else.

use super::budget::DropStep;
use super::cards::Card;
use super::plan::Plan;
use super::{Item, Mode};
use crate::mentions::{How, Mention};
use crate::tokens;
use serde::Serialize;
use std::fmt;

/// What an explain item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ItemKind {
    /// The campaign header.
    Header,
    /// The day and time.
    Time,
    /// A player character.
    Pc,
    /// A scene location.
    Location,
    /// An NPC at the scene.
    Npc,
    /// An open storyline.
    Thread,
    /// A timeline event.
    Event,
    /// A card for something the message mentions.
    Card,
    /// A GM secret, in the DM-only part.
    Secret,
}

impl ItemKind {
    /// The word `--explain` and JSON use.
    pub fn as_str(self) -> &'static str {
        match self {
            ItemKind::Header => "header",
            ItemKind::Time => "time",
            ItemKind::Pc => "pc",
            ItemKind::Location => "location",
            ItemKind::Npc => "npc",
            ItemKind::Thread => "thread",
            ItemKind::Event => "event",
            ItemKind::Card => "card",
            ItemKind::Secret => "secret",
        }
    }
}

impl fmt::Display for ItemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl PartialEq<&str> for ItemKind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// How the message named something: `mentioned as "Marr" (alias)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Via {
    /// The words as the player wrote them.
    pub text: String,
    /// How they name it.
    pub how: How,
    /// The same words name several entities.
    pub shared: bool,
}

impl Via {
    /// The via of a mention.
    pub fn of(m: &Mention) -> Via {
        Via {
            text: m.text.clone(),
            how: m.how,
            shared: m.ambiguous,
        }
    }
}

impl fmt::Display for Via {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.shared {
            write!(
                f,
                "mentioned as \"{}\" ({}, shared by several)",
                self.text,
                self.how.as_str()
            )
        } else if self.how == How::Name {
            write!(f, "mentioned as \"{}\"", self.text)
        } else {
            write!(f, "mentioned as \"{}\" ({})", self.text, self.how.as_str())
        }
    }
}

/// What the budget did to a piece that is still in the block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Cut {
    /// Nothing.
    #[default]
    None,
    /// Shortened (a location's description to its first sentence, a card to its short form).
    Shortened,
    /// Cut to its bare name (a location without description, a card in `also mentioned`).
    NameOnly,
    /// Only counted: `also mentioned: …, and 3 more`.
    Counted,
}

/// Why a candidate is in or out of the block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// The header and the day: always in.
    Always,
    /// No current day anywhere.
    NoDay,
    /// A PC of the active party.
    ActivePc,
    /// The `--pc` PC, not in the active party.
    FocusPc,
    /// A PC outside the active party, and why.
    NotInParty(String),
    /// A PC's location resolves to no location note.
    UnknownLocation {
        /// The PC.
        pc: String,
        /// What their note says.
        text: String,
    },
    /// A PC has no location.
    NoLocation(String),
    /// A party location, and what the budget cut of it.
    PartyLocation(Mode, Cut),
    /// An NPC at the scene.
    Present(String),
    /// An NPC at the scene that the message names.
    PresentMentioned(Via),
    /// No place for the party: an NPC the recent events name.
    InRecentEvents,
    /// An NPC at the scene but dead, departed…
    Absent {
        /// Where.
        at: String,
        /// Its status.
        status: String,
    },
    /// Present, but more unmentioned NPCs than the cap.
    OverNpcCap(usize),
    /// A resolved thread.
    Resolved,
    /// An open thread of this priority (and whether the message names it).
    Thread(&'static str, bool),
    /// The light context has no storylines.
    LightNoThreads,
    /// The light context has no events.
    LightNoEvents,
    /// One of the last events.
    RecentEvent,
    /// Older than the last N events.
    OlderThan(usize),
    /// An event after the current day.
    AfterToday(i64),
    /// No open threads at all.
    NoThreads,
    /// No events up to the current day.
    NoEventsYet,
    /// No events on the current day.
    NoEventsToday,
    /// Dropped by the budget at this step (the budget is filled in when explaining).
    Dropped(DropStep, Option<usize>),
    /// A mention card, and what the budget cut of it.
    Card(Via, Cut),
    /// An NPC's reason, and what became of its voice.
    Voice(Box<Reason>, VoiceNote),
    /// A GM secret, in the DM-only part, and why it is one.
    Secret(crate::canon::SecretWhy),
    /// A thing whose whole note is the GM's: told in the DM-only part, never in the
    /// player's view.
    GmOnly(crate::canon::SecretWhy),
}

/// What became of a present NPC's voice line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VoiceNote {
    /// The budget dropped it.
    Dropped,
    /// The note has none.
    NoneInNote,
}

impl Reason {
    /// Adds the budget to a budget drop (`dropped for the token budget (450)`).
    fn with_budget(self, budget: Option<usize>) -> Reason {
        match self {
            Reason::Dropped(d, _) => Reason::Dropped(d, budget),
            r => r,
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Always => f.write_str("always"),
            Reason::NoDay => f.write_str("no current day in the temporal index or timeline"),
            Reason::ActivePc => f.write_str("active PC"),
            Reason::FocusPc => f.write_str("the focus PC (--pc), though not in the active party"),
            Reason::NotInParty(why) => write!(f, "not in the active party ({why})"),
            Reason::UnknownLocation { pc, text } => {
                write!(f, "{pc}'s location \"{text}\" matches no location note")
            }
            Reason::NoLocation(pc) => write!(f, "{pc} has no location"),
            Reason::PartyLocation(Mode::Light, _) => {
                f.write_str("party location (name only in light context)")
            }
            Reason::PartyLocation(_, Cut::None) => f.write_str("party location"),
            Reason::PartyLocation(_, Cut::Shortened) => {
                f.write_str("party location; description cut to its first sentence for the budget")
            }
            Reason::PartyLocation(_, Cut::NameOnly | Cut::Counted) => {
                f.write_str("party location; description dropped for the budget")
            }
            Reason::Present(at) => write!(f, "present at {at}"),
            Reason::InRecentEvents => {
                write!(f, "named in the recent events (no place for the party)")
            }
            Reason::PresentMentioned(via) => write!(f, "present, {via}"),
            Reason::Absent { at, status } => write!(f, "at {at} but {status}"),
            Reason::OverNpcCap(cap) => write!(f, "present, but over the NPC cap ({cap})"),
            Reason::Resolved => f.write_str("resolved"),
            Reason::Thread(p, false) => write!(f, "{p} thread"),
            Reason::Thread(p, true) => write!(f, "{p} thread, mentioned"),
            Reason::LightNoThreads => f.write_str("light context carries no storylines"),
            Reason::LightNoEvents => f.write_str("light context carries no events"),
            Reason::RecentEvent => f.write_str("recent event"),
            Reason::OlderThan(n) => write!(f, "older than the last {n}"),
            Reason::AfterToday(day) => write!(f, "day {day} is after the current day"),
            Reason::NoThreads => {
                f.write_str("no open threads in canon/open-threads.md or thread notes")
            }
            Reason::NoEventsYet => f.write_str("the timeline has no events up to the current day"),
            Reason::NoEventsToday => f.write_str(
                "the timeline has no events for the current day; the latest earlier ones are shown",
            ),
            Reason::Dropped(_, None) => f.write_str("dropped for the token budget"),
            Reason::Dropped(_, Some(b)) => write!(f, "dropped for the token budget ({b})"),
            Reason::Card(via, Cut::None) => write!(f, "{via}"),
            Reason::Card(via, Cut::Shortened) => {
                write!(f, "{via}; shortened for the token budget")
            }
            Reason::Voice(r, VoiceNote::Dropped) => {
                write!(f, "{r}; voice dropped for the token budget")
            }
            Reason::Voice(r, VoiceNote::NoneInNote) => write!(f, "{r}; no voice in the note"),
            Reason::Secret(why) => write!(f, "secret ({why}): DM-only part"),
            Reason::GmOnly(why) => write!(f, "GM-only ({why}): DM-only part, never the players'"),
            Reason::Card(via, Cut::NameOnly) => {
                write!(
                    f,
                    "{via}; only named under \"also mentioned\" for the token budget"
                )
            }
            Reason::Card(via, Cut::Counted) => {
                write!(
                    f,
                    "{via}; only counted under \"also mentioned\" for the token budget"
                )
            }
        }
    }
}

impl Serialize for Reason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl PartialEq<str> for Reason {
    fn eq(&self, other: &str) -> bool {
        self.to_string().as_str() == other
    }
}

impl PartialEq<String> for Reason {
    fn eq(&self, other: &String) -> bool {
        *self == *other.as_str()
    }
}

impl PartialEq<&str> for Reason {
    fn eq(&self, other: &&str) -> bool {
        *self == **other
    }
}

fn item(kind: ItemKind, name: String, source: String, tokens: usize, reason: Reason) -> Item {
    Item {
        kind,
        name,
        source,
        tokens,
        included: true,
        reason,
    }
}

/// Every candidate of a plan, in block order, then what was left out before planning.
pub(super) fn explain(p: &Plan<'_>, budget: Option<usize>) -> Vec<Item> {
    let c = p.c;
    let est = tokens::estimate;
    let mut items = vec![item(
        ItemKind::Header,
        c.name.clone(),
        "vaultdm.toml".into(),
        est(&c.name) + c.setting.as_deref().map_or(0, est) + 4,
        Reason::Always,
    )];
    let clock = c.day.is_some() || c.time.is_some();
    items.push(Item {
        included: clock,
        ..item(
            ItemKind::Time,
            match (c.day, &c.time) {
                (Some(d), Some(t)) => format!("Day {d} - {t}"),
                (Some(d), None) => format!("Day {d}"),
                (None, Some(t)) => t.clone(),
                (None, None) => "(no day)".into(),
            },
            format!("{}:1", crate::canon::TEMPORAL_INDEX),
            if clock { 5 } else { 0 },
            if c.day.is_some() {
                Reason::Always
            } else {
                Reason::NoDay
            },
        )
    });
    for r in &p.party {
        items.push(item(
            ItemKind::Pc,
            r.name.clone(),
            r.source.clone(),
            est(&serde_json::to_string(r).unwrap_or_default()) / 2,
            if r.active {
                Reason::ActivePc
            } else {
                Reason::FocusPc
            },
        ));
    }
    for l in &p.scene {
        let src = c
            .location(&l.id)
            .map(|l| l.source.to_string())
            .unwrap_or_default();
        let tokens = match p.mode {
            Mode::Full => est(&l.name) + l.description.as_deref().map_or(0, est),
            Mode::Light => est(&l.name),
        };
        items.push(item(
            ItemKind::Location,
            l.name.clone(),
            src,
            tokens,
            Reason::PartyLocation(p.mode, l.cut),
        ));
    }
    for n in &p.npcs {
        let npc = &c.npcs[n.idx];
        let voice =
            if n.included && n.voice.is_none() && !npc.voice.is_empty() && p.mode == Mode::Full {
                Some(VoiceNote::Dropped)
            } else if n.included && npc.voice.is_empty() {
                Some(VoiceNote::NoneInNote)
            } else {
                None
            };
        let reason = match voice {
            Some(v) => Reason::Voice(Box::new(n.reason.clone()), v),
            None => n.reason.clone(),
        };
        let tokens = if n.included {
            est(&n.name) + n.voice.as_deref().map_or(0, est) + 8
        } else {
            0
        };
        items.push(Item {
            included: n.included,
            ..item(
                ItemKind::Npc,
                n.name.clone(),
                npc.source.to_string(),
                tokens,
                reason,
            )
        });
    }
    for t in &p.threads {
        let tokens = if t.included {
            est(&t.title)
                + t.summary.as_deref().map_or(0, est)
                + t.next.as_deref().map_or(0, est)
                + 6
        } else {
            0
        };
        items.push(Item {
            included: t.included,
            ..item(
                ItemKind::Thread,
                t.title.clone(),
                c.threads[t.idx].source.to_string(),
                tokens,
                t.reason.clone(),
            )
        });
    }
    for e in &p.events {
        items.push(Item {
            included: e.included,
            ..item(
                ItemKind::Event,
                format!("{}: {}", e.when, e.text),
                c.events[e.idx].source.to_string(),
                if e.included { est(&e.text) + 4 } else { 0 },
                e.reason.clone(),
            )
        });
    }
    for card in &p.cards {
        items.push(card_item(card));
    }
    for s in &p.secrets {
        items.push(Item {
            included: s.included,
            ..item(
                ItemKind::Secret,
                format!("{}: {}", s.about, s.text),
                s.source.clone(),
                if s.included {
                    est(&s.about) + est(&s.text) + 3
                } else {
                    0
                },
                s.reason.clone(),
            )
        });
    }
    items.extend(p.items_out.iter().cloned());
    for i in items.iter_mut() {
        i.reason = std::mem::replace(&mut i.reason, Reason::Always).with_budget(budget);
    }
    items
}

fn card_item(card: &Card) -> Item {
    item(
        ItemKind::Card,
        format!("{} {}", card.kind, card.name),
        card.source.clone(),
        match card.cut {
            Cut::NameOnly => tokens::estimate(&card.name) + 1,
            Cut::Counted => 0,
            _ => tokens::estimate(&format!("{card:?}")) / 3,
        },
        Reason::Card(card.via.clone(), card.cut),
    )
}
