//! Ranking present NPCs, and the cap on how many unmentioned ones a context lists.
//!
//! Mentioned NPCs come first and are never capped; then NPCs named in the urgent and high
//! storylines, then in the last two days' events, then those with a disposition; then by
//! name.

use super::explain::Reason;
use super::plan::NpcRow;
use crate::canon::{Campaign, Npc, Priority};
use std::collections::HashMap;

/// Lower-cased text of the urgent and high threads, and of the last two days' events.
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

/// Sorts the present NPCs best first and leaves out the unmentioned ones over `cap`.
pub(super) fn rank_and_cap(c: &Campaign, npcs: &mut [NpcRow], cap: usize) {
    if npcs.is_empty() {
        return;
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
    for r in npcs.iter_mut().filter(|r| !r.mentioned) {
        unmentioned += 1;
        if unmentioned > cap {
            r.included = false;
            r.reason = Reason::OverNpcCap(cap);
        }
    }
}
