//! The scene: who speaks (`--pc`), the party, where they are and which NPCs are there.
//!
//! This is the one place that decides which NPCs appear in a context: an NPC is present
//! when its location is one of the scene's and it is not absent (dead, departed…).

use super::cards::{class_level, hp_text, join_voice};
use super::explain::{ItemKind, Reason, Via};
use super::plan::{LocRow, NpcRow, PcRow};
use super::{ContextError, Item};
use crate::canon::text::first_sentence;
use crate::canon::{Campaign, Pc};
use crate::mentions::{Matcher, Target};
use std::collections::{HashMap, HashSet};

/// The PC `--pc` names: by name, given name, alias or file name, any case.
pub(super) fn focus(c: &Campaign, asked: Option<&str>) -> Result<Option<usize>, ContextError> {
    let Some(name) = asked else {
        return Ok(None);
    };
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
        Some(i) => Ok(Some(i)),
        None => Err(ContextError::UnknownPc {
            name: name.to_string(),
            known: c
                .pcs
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

fn pc_row(c: &Campaign, p: &Pc) -> PcRow {
    PcRow {
        name: p.name.clone(),
        class_level: class_level(p),
        hp: hp_text(p.hp_current, p.hp_max),
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

/// The party, the scene's locations and the NPCs there.
pub(super) struct Scene {
    pub party: Vec<PcRow>,
    pub ids: Vec<String>,
    pub locations: Vec<LocRow>,
    pub npcs: Vec<NpcRow>,
    /// The party is in more than one place.
    pub split: bool,
}

/// Builds the scene; what it leaves out goes to `out` with its reason.
pub(super) fn scene(
    c: &Campaign,
    focus: Option<usize>,
    mentioned: &HashMap<Target, Via>,
    out: &mut Vec<Item>,
) -> Scene {
    // The party, the focus PC first.
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
        out.push(left_out(
            ItemKind::Pc,
            p.name.clone(),
            p.source.to_string(),
            Reason::NotInParty(
                p.inactive_reason
                    .clone()
                    .unwrap_or_else(|| format!("status {}", p.status)),
            ),
        ));
    }
    let party: Vec<PcRow> = party_pcs.iter().map(|p| pc_row(c, p)).collect();

    // The party's locations (the focus PC's only, with --pc).
    let mut ids: Vec<String> = Vec::new();
    let scene_pcs: Vec<&Pc> = match focus {
        Some(f) => vec![&c.pcs[f]],
        None => party_pcs.clone(),
    };
    for p in &scene_pcs {
        match &p.location {
            Some(l) => {
                if !ids.contains(l) {
                    ids.push(l.clone());
                }
            }
            None => out.push(left_out(
                ItemKind::Location,
                p.location_text.clone().unwrap_or_else(|| "(none)".into()),
                p.source.to_string(),
                match &p.location_text {
                    Some(t) => Reason::UnknownLocation {
                        pc: p.name.clone(),
                        text: t.clone(),
                    },
                    None => Reason::NoLocation(p.name.clone()),
                },
            )),
        }
    }
    // No PC has a place at all: where the latest session left the party, said so.
    let mut from_session: Option<String> = None;
    if ids.is_empty()
        && scene_pcs
            .iter()
            .all(|p| p.location.is_none() && p.location_text.is_none())
    {
        if let Some((s, place)) = c
            .latest_session()
            .and_then(|s| s.last_place.as_ref().map(|p| (s, p)))
        {
            ids.push(place.clone());
            from_session = Some(s.name.clone());
        }
    }
    let split = {
        let all: HashSet<Option<&String>> = party_pcs.iter().map(|p| p.location.as_ref()).collect();
        all.len() > 1
    };
    let locations: Vec<LocRow> = ids
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
            cut: super::explain::Cut::None,
            from_session: from_session.clone(),
        })
        .collect();

    // NPCs at those locations, unless absent.
    let mut npcs: Vec<NpcRow> = Vec::new();
    for (i, n) in c.npcs.iter().enumerate() {
        let Some(loc) = n.location.as_ref() else {
            continue;
        };
        if !ids.contains(loc) {
            continue;
        }
        let at = c.place_name(Some(loc), None);
        if n.is_absent() {
            out.push(left_out(
                ItemKind::Npc,
                n.name.clone(),
                n.source.to_string(),
                Reason::Absent {
                    at: at.unwrap_or_default(),
                    status: n.status.clone(),
                },
            ));
            continue;
        }
        let m = mentioned.get(&Target::Npc(Target::at(i)));
        let reason = match m {
            Some(via) => Reason::PresentMentioned(via.clone()),
            None => Reason::Present(at.clone().unwrap_or_default()),
        };
        npcs.push(npc_row(c, i, m.is_some(), true, reason, at));
    }
    Scene {
        party,
        ids,
        locations,
        npcs,
        split,
    }
}

/// With no place for the party, the NPCs the recent events name are the ones in play: the
/// most named first, then the latest named; the dead and departed left out; `cap` unmentioned.
pub(super) fn named_in_events(
    c: &Campaign,
    events: &[&str],
    matcher: &Matcher,
    mentioned: &HashMap<Target, Via>,
    cap: usize,
    out: &mut Vec<Item>,
) -> Vec<NpcRow> {
    // npc index -> (times named, latest event named in)
    let mut named: HashMap<usize, (usize, usize)> = HashMap::new();
    for (k, text) in events.iter().enumerate() {
        let mut seen = HashSet::new();
        for m in matcher.find(text) {
            if let (Target::Npc(i), false) = (m.target, m.ambiguous) {
                if seen.insert(i) {
                    let e = named.entry(i as usize).or_default();
                    e.0 += 1;
                    e.1 = k;
                }
            }
        }
    }
    let mut order: Vec<(usize, (usize, usize))> = named.into_iter().collect();
    order.sort_by(|a, b| b.1.cmp(&a.1).then(c.npcs[a.0].name.cmp(&c.npcs[b.0].name)));
    let mut rows = Vec::new();
    let mut unmentioned = 0;
    for (i, _) in order {
        let n = &c.npcs[i];
        if n.is_absent() {
            out.push(left_out(
                ItemKind::Npc,
                n.name.clone(),
                n.source.to_string(),
                Reason::Absent {
                    at: "recent events".into(),
                    status: n.status.clone(),
                },
            ));
            continue;
        }
        let m = mentioned.get(&Target::Npc(Target::at(i)));
        if m.is_none() {
            unmentioned += 1;
        }
        let included = m.is_some() || unmentioned <= cap;
        let reason = if included {
            Reason::InRecentEvents
        } else {
            Reason::OverNpcCap(cap)
        };
        rows.push(npc_row(c, i, m.is_some(), included, reason, None));
    }
    rows
}

/// The row of NPC `i` in a context's NPC list.
fn npc_row(
    c: &Campaign,
    i: usize,
    mentioned: bool,
    included: bool,
    reason: Reason,
    at: Option<String>,
) -> NpcRow {
    let n = &c.npcs[i];
    NpcRow {
        name: n.name.clone(),
        status: Some(n.status.clone()),
        role: n.role.clone(),
        disposition: n.disposition.clone(),
        voice: join_voice(&n.voice),
        hp: hp_text(n.hp_current, n.hp_max),
        idx: i,
        mentioned,
        included,
        reason,
        at,
    }
}

/// An item left out before any budget.
pub(super) fn left_out(kind: ItemKind, name: String, source: String, reason: Reason) -> Item {
    Item {
        kind,
        name,
        source,
        tokens: 0,
        included: false,
        reason,
    }
}
