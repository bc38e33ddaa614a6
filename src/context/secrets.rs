//! The DM-only part of a context: the GM's secrets that travel with what the context shows.
//!
//! What is GM-only is decided once, when notes are read ([`crate::vault::secret`]); canon
//! keeps it per note ([`crate::canon::Campaign::secrets`]). Here a plan's rows pick theirs
//! up: a shown PC, place, NPC, thread or mention card brings its note's secrets, a full
//! context brings the GM's plan (timeline entries after the current day) and the latest
//! session note's secrets (the prep's "Secrets and Clues"). A thing whose whole note is the
//! GM's (a hidden villain in `GM/`) leaves the public rows and is told in this part only.
//!
//! The part is rendered last, under its own heading ("for the DM only: reveal through play,
//! never recite"; `secrets.j2`), budgeted like the rest (the plan, then the lowest-ranked
//! secrets go first: [`super::DropStep::Plan`], [`super::DropStep::Secrets`]) and listed by
//! `--explain` as secret. The player's view (`Options::player`, `context --player`) has no
//! such part and no GM-only thing at all.

use super::cards::Card;
use super::explain::Reason;
use super::plan::Plan;
use super::Mode;
use crate::canon::{Campaign, NoteGm, SecretWhy};
use serde::Serialize;

/// One secret in the DM-only part.
#[derive(Debug, Clone, Serialize)]
pub(super) struct SecretRow {
    /// What it is about (`NPC Odessa Flint`, `The GM's plan`), empty for the scene.
    pub about: String,
    /// The text.
    pub text: String,
    /// Why it is the GM's.
    #[serde(skip)]
    pub why: SecretWhy,
    /// `file:line`.
    #[serde(skip)]
    pub source: String,
    /// Lower ranks stay longer under the budget.
    #[serde(skip)]
    pub rank: (u8, usize),
    /// A timeline entry after today.
    #[serde(skip)]
    pub plan: bool,
    #[serde(skip)]
    pub included: bool,
    #[serde(skip)]
    pub reason: Reason,
}

/// Most plan entries (timeline entries after today) a full context carries.
const PLAN_ENTRIES: usize = 5;

/// The note path of a `file:line` source.
pub(super) fn path_of(source: &str) -> &str {
    source.rsplit_once(':').map_or(source, |(p, _)| p)
}

/// The GM-only part of a note, if it has one.
pub(super) fn gm_of<'c>(c: &'c Campaign, path: &str) -> Option<&'c NoteGm> {
    c.secrets.get(path)
}

/// Whether a note is the GM's as a whole.
pub(super) fn whole(c: &Campaign, path: &str) -> Option<SecretWhy> {
    gm_of(c, path).and_then(|g| g.whole.clone())
}

/// Takes the GM-only things out of a plan's public rows: in the player's view they go, in
/// the DM's they move to the DM-only part. Then gathers every shown thing's secrets.
pub(super) fn settle(plan: &mut Plan<'_>, player: bool) {
    let c = plan.c;
    let mut rows: Vec<SecretRow> = Vec::new();
    let mut rank = 0usize;
    let mut next_rank = || {
        rank += 1;
        rank
    };
    // Whole GM-only NPCs at the scene.
    for n in plan.npcs.iter_mut().filter(|n| n.included) {
        let npc = &c.npcs[n.idx];
        if let Some(why) = whole(c, &npc.source.path) {
            n.included = false;
            n.reason = Reason::GmOnly(why.clone());
            if !player {
                let text = [npc.role.as_deref(), npc.summary.as_deref()]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join("; ");
                rows.push(row(
                    format!("NPC {} (here, unknown to the players)", npc.name),
                    if text.is_empty() {
                        "present".into()
                    } else {
                        text
                    },
                    why,
                    npc.source.to_string(),
                    (0, next_rank()),
                ));
            }
        }
    }
    for t in plan.threads.iter_mut().filter(|t| t.included) {
        let th = &c.threads[t.idx];
        if let Some(why) = whole(c, &th.source.path) {
            t.included = false;
            t.reason = Reason::GmOnly(why.clone());
            if !player {
                let mut text = th.summary.join(" ");
                if let Some(n) = &th.next {
                    text.push_str(&format!(" Next: {n}"));
                }
                rows.push(row(
                    format!("Thread {}", th.title),
                    text.trim().to_string(),
                    why,
                    th.source.to_string(),
                    (1, next_rank()),
                ));
            }
        }
    }
    let cards = std::mem::take(&mut plan.cards);
    for card in cards {
        match whole(c, path_of(&card.source)) {
            Some(why) => {
                if !player {
                    rows.push(row(
                        format!("{} {}", kind_word(card.kind), card.name),
                        card_text(&card),
                        why,
                        card.source.clone(),
                        (0, next_rank()),
                    ));
                }
            }
            None => plan.cards.push(card),
        }
    }
    if player {
        // A place the players know may list someone they do not.
        for card in &mut plan.cards {
            card.here.retain(|name| !is_gm_only_npc(c, name));
        }
        plan.secrets = Vec::new();
        return;
    }
    // The secrets of what is shown, most important first: the scene, who is in it, the
    // party, then the cards and the storylines. A light context stays lean: only what the
    // message names (its cards) brings its secrets; the scene's came with the full context.
    let full = plan.mode == Mode::Full;
    let mut shown: Vec<(String, String, u8)> = Vec::new();
    for l in plan.scene.iter().filter(|_| full) {
        if let Some(loc) = c.location(&l.id) {
            shown.push((format!("Place {}", loc.name), loc.source.path.clone(), 0));
        }
    }
    for n in plan.npcs.iter().filter(|n| full && n.included) {
        let npc = &c.npcs[n.idx];
        shown.push((format!("NPC {}", npc.name), npc.source.path.clone(), 0));
    }
    for p in plan.party.iter().filter(|_| full) {
        shown.push((format!("PC {}", p.name), path_of(&p.source).to_string(), 1));
    }
    for card in &plan.cards {
        shown.push((
            format!("{} {}", kind_word(card.kind), card.name),
            path_of(&card.source).to_string(),
            0,
        ));
    }
    for t in plan.threads.iter().filter(|t| t.included) {
        let th = &c.threads[t.idx];
        if th.source.path != crate::canon::OPEN_THREADS {
            shown.push((format!("Thread {}", th.title), th.source.path.clone(), 1));
        }
    }
    if plan.mode == Mode::Full {
        // The latest session note, and the GM's prep ("Secrets and clues" to reveal).
        if let Some(s) = c.latest_session() {
            shown.push((format!("Session {}", s.name), s.source.path.clone(), 1));
        }
        for path in c.secrets.keys().filter(|p| crate::canon::build::is_prep(p)) {
            shown.push(("Prep".into(), path.clone(), 1));
        }
    }
    let mut seen = std::collections::HashSet::new();
    for (about, path, tier) in shown {
        if !seen.insert(path.clone()) {
            continue;
        }
        let Some(g) = gm_of(c, &path) else {
            continue;
        };
        for s in &g.secrets {
            rows.push(row(
                about.clone(),
                s.text.clone(),
                s.why.clone(),
                format!("{path}:{}", s.line),
                (tier, next_rank()),
            ));
        }
    }
    if plan.mode == Mode::Full {
        if let Some(today) = c.day {
            let mut ahead: Vec<&crate::canon::Event> = c
                .events
                .iter()
                .filter(|e| e.numbered && e.day > today)
                .collect();
            ahead.sort_by_key(|e| e.day);
            for e in ahead.into_iter().take(PLAN_ENTRIES) {
                let mut r = row(
                    "The GM's plan".into(),
                    format!("{}: {}", e.when, e.text),
                    SecretWhy::AfterToday(e.day),
                    e.source.to_string(),
                    (2, next_rank()),
                );
                r.plan = true;
                rows.push(r);
            }
        }
    }
    plan.secrets = rows;
}

fn row(
    about: String,
    text: String,
    why: SecretWhy,
    source: String,
    rank: (u8, usize),
) -> SecretRow {
    SecretRow {
        about,
        text,
        reason: Reason::Secret(why.clone()),
        why,
        source,
        rank,
        plan: false,
        included: true,
    }
}

fn is_gm_only_npc(c: &Campaign, name: &str) -> bool {
    c.npcs
        .iter()
        .any(|n| n.name == name && whole(c, &n.source.path).is_some())
}

fn kind_word(kind: &str) -> &'static str {
    match kind {
        "npc" => "NPC",
        "pc" => "PC",
        "location" => "Place",
        "thread" => "Thread",
        "session" => "Session",
        "item" => "Item",
        _ => "Note",
    }
}

/// What a GM-only thing's card says, as one line.
fn card_text(card: &Card) -> String {
    let parts: Vec<&str> = [
        card.role.as_deref(),
        card.status.as_deref(),
        card.location.as_deref(),
        card.summary.as_deref(),
        card.description.as_deref(),
        card.next.as_deref(),
    ]
    .into_iter()
    .flatten()
    .filter(|s| !s.is_empty())
    .collect();
    if parts.is_empty() {
        "(a note the GM keeps to themself)".into()
    } else {
        parts.join("; ")
    }
}

/// The rows a render shows.
pub(super) fn shown<'p>(plan: &'p Plan<'_>) -> Vec<&'p SecretRow> {
    plan.secrets.iter().filter(|s| s.included).collect()
}

/// Drops one secret for the budget: the plan's last entry first when `plan`, else the
/// lowest-ranked secret. Returns about how many characters it saved.
pub(super) fn drop_one(
    plan: &mut Plan<'_>,
    step: super::DropStep,
    plan_only: bool,
) -> Option<usize> {
    let s = plan
        .secrets
        .iter_mut()
        .filter(|s| s.included && s.plan == plan_only)
        .max_by_key(|s| s.rank)?;
    s.included = false;
    s.reason = Reason::Dropped(step, None);
    Some(s.about.len() + s.text.len() + 6)
}
