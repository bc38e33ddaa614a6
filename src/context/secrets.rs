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
    /// The note of the NPC a plan entry travels with (empty: the campaign's plan).
    #[serde(skip)]
    pub with: String,
    #[serde(skip)]
    pub included: bool,
    #[serde(skip)]
    pub reason: Reason,
}

/// Most plan entries (timeline entries after today) a full context carries.
const PLAN_ENTRIES: usize = 5;

/// Most plan entries naming one NPC that come with them (beyond the campaign's plan).
const PLAN_PER_NPC: usize = 3;

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
        let path = path_of(&card.source);
        match whole(c, path) {
            Some(why) => {
                if player {
                    continue;
                }
                let about = format!("{} {}", kind_word(card.kind), card.name);
                let said = written(c, path);
                // Who or what it is (a role, a status, a place) before what the note says.
                let header: Vec<&str> = [
                    card.role.as_deref(),
                    card.status.as_deref(),
                    card.location.as_deref(),
                ]
                .into_iter()
                .flatten()
                .filter(|s| !s.is_empty())
                .collect();
                if !said.is_empty() && !header.is_empty() {
                    rows.push(row(
                        about.clone(),
                        header.join("; "),
                        why.clone(),
                        card.source.clone(),
                        (0, next_rank()),
                    ));
                }
                if said.is_empty() {
                    rows.push(row(
                        about.clone(),
                        card_text(&card),
                        why,
                        card.source.clone(),
                        (0, next_rank()),
                    ));
                }
                for s in said {
                    rows.push(row(
                        about.clone(),
                        s.text.clone(),
                        s.why.clone(),
                        format!("{path}:{}", s.line),
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
    // The NPCs shown (at the scene, or named), for what the GM plans for them.
    let mut npcs_shown: Vec<usize> = Vec::new();
    for n in plan.npcs.iter().filter(|n| full && n.included) {
        let npc = &c.npcs[n.idx];
        shown.push((format!("NPC {}", npc.name), npc.source.path.clone(), 0));
        npcs_shown.push(n.idx);
    }
    for p in plan.party.iter().filter(|_| full) {
        shown.push((format!("PC {}", p.name), path_of(&p.source).to_string(), 1));
    }
    for card in &plan.cards {
        if card.kind == "npc" {
            let path = path_of(&card.source);
            if let Some(i) = c.npcs.iter().position(|n| n.source.path == path) {
                if !npcs_shown.contains(&i) {
                    npcs_shown.push(i);
                }
            }
        }
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
    if let Some(today) = c.day {
        let mut ahead: Vec<&crate::canon::Event> = c
            .events
            .iter()
            .filter(|e| e.numbered && e.day > today)
            .collect();
        ahead.sort_by_key(|e| e.day);
        let mut planned: std::collections::HashSet<String> = std::collections::HashSet::new();
        // A full context: the next entries, whoever they are about.
        for e in ahead.iter().filter(|_| full).take(PLAN_ENTRIES) {
            planned.insert(e.source.to_string());
            rows.push(plan_row(
                "The GM's plan".into(),
                e,
                String::new(),
                next_rank(),
            ));
        }
        // Any context: what is planned for an NPC it shows (an NPC's future).
        for idx in npcs_shown.into_iter().filter(|_| !ahead.is_empty()) {
            let npc = &c.npcs[idx];
            let names: Vec<String> = std::iter::once(&npc.name)
                .chain(&npc.aliases)
                .map(|n| n.to_lowercase())
                .filter(|n| n.chars().count() >= 3)
                .collect();
            // "Vane" for Superintendent Cornelius Vane, when no other NPC is a Vane.
            let surname = npc
                .name
                .rsplit(' ')
                .next()
                .filter(|w| w.len() >= 3 && *w != npc.name && w.starts_with(char::is_uppercase))
                .filter(|w| {
                    c.npcs
                        .iter()
                        .filter(|o| o.name.rsplit(' ').next() == Some(*w))
                        .count()
                        == 1
                });
            let theirs = ahead
                .iter()
                .filter(|e| {
                    let lower = e.text.to_lowercase();
                    names.iter().any(|n| names_word(&lower, n))
                        || surname.is_some_and(|w| names_word(&e.text, w))
                })
                .filter(|e| planned.insert(e.source.to_string()))
                .take(PLAN_PER_NPC);
            for e in theirs {
                let mut r = plan_row(
                    format!("The GM's plan for {}", npc.name),
                    e,
                    npc.source.path.clone(),
                    next_rank(),
                );
                // With the party's and the storylines' secrets, before the campaign's plan.
                r.rank.0 = 1;
                rows.push(r);
            }
        }
    }
    plan.secrets = rows;
}

/// A timeline entry after today, for the DM only; `with` is the note of the NPC it travels
/// with (it leaves when the budget drops them), empty for the campaign's plan.
fn plan_row(about: String, e: &crate::canon::Event, with: String, rank: usize) -> SecretRow {
    let mut r = row(
        about,
        format!("{}: {}", e.when, e.text),
        SecretWhy::AfterToday(e.day),
        e.source.to_string(),
        (2, rank),
    );
    r.plan = true;
    r.with = with;
    r
}

/// Whether `text` has `name` as whole words (both lower case).
fn names_word(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(i, m)| {
        let before = text[..i].chars().next_back();
        let after = text[i + m.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// Drops the secrets that travel with a note the budget dropped (an NPC no longer at the
/// scene takes what the DM knew of them along); returns about how many characters it saved.
pub(super) fn drop_with(plan: &mut Plan<'_>, path: &str, step: super::DropStep) -> usize {
    let mut saved = 0;
    for s in plan
        .secrets
        .iter_mut()
        .filter(|s| s.included && (s.with == path || (!s.plan && path_of(&s.source) == path)))
    {
        s.included = false;
        s.reason = Reason::Dropped(step, None);
        saved += s.about.len() + s.text.len() + 6;
    }
    saved
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
        with: String::new(),
        included: true,
    }
}

/// Whether a mention's target is a note the GM keeps whole (its name takes no words from
/// public names, `mentions::Matcher::find_beside`).
pub(super) fn is_gm_only_target(c: &Campaign, t: crate::mentions::Target) -> bool {
    use crate::mentions::Target;
    if c.secrets.is_empty() {
        return false;
    }
    let path = match t {
        Target::Pc(i) | Target::Item(i, _) => c.pcs.get(i as usize).map(|x| &x.source.path),
        Target::Npc(i) => c.npcs.get(i as usize).map(|x| &x.source.path),
        Target::Location(i) => c.locations.get(i as usize).map(|x| &x.source.path),
        Target::Thread(i) => c.threads.get(i as usize).map(|x| &x.source.path),
        Target::Lore(i) => c.lore.get(i as usize).map(|x| &x.source.path),
        Target::Session(i) => c.sessions.get(i as usize).map(|x| &x.source.path),
    };
    path.is_some_and(|p| whole(c, p).is_some())
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

/// What a note the GM keeps whole says, as written: its paragraphs and its marked pieces,
/// in file order.
fn written<'c>(c: &'c Campaign, path: &str) -> Vec<&'c crate::canon::Secret> {
    let Some(g) = gm_of(c, path) else {
        return Vec::new();
    };
    let mut all: Vec<&crate::canon::Secret> = g.body.iter().chain(&g.secrets).collect();
    all.sort_by_key(|s| s.line);
    all
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
