//! The token budget: what is dropped first, and fitting a plan to a budget.
//!
//! The block never drops the header, the day, the party, or a present NPC or open storyline
//! the message names (mention cards of things not in the block shrink, become names, and
//! at the very last only a count). Over budget it cuts, in [`ORDER`]: low threads, events before today, the voices of
//! present unmentioned NPCs, medium threads, the scene description past its first sentence,
//! present unmentioned NPCs; then the GM's plan and secrets in the DM-only part go, mention
//! cards shrink, the rest of the events, high
//! threads go, mention cards become names on one `Also mentioned:` line, urgent threads and
//! the scene description go, and last the names on that line become a count.
//!
//! Fitting lands within the budget and as close under it as one cut allows: a batch of cuts
//! sized by the excess is tried, then a bisection finds the fewest cuts that fit.

use super::cards::Card;
use super::explain::{Cut, Reason};
use super::plan::{Plan, ThreadRow};
use super::{ContextError, Engine};
use crate::canon::text::first_sentence;
use crate::canon::Priority;

/// The token budget a context gets when the vault sets none (`[context] budget`); it lives
/// with the settings, which every layer reads (none reads upwards).
pub use crate::config::DEFAULT_BUDGET;

/// Most names on the `Also mentioned:` line; past them, the lowest-ranked are counted.
pub const ALSO_NAMED: usize = 24;

/// One kind of cut, in the order the budget applies them ([`ORDER`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DropStep {
    /// Low-priority threads, last first.
    LowThreads,
    /// Events before the current day, oldest first.
    OlderEvents,
    /// Voice lines of present, unmentioned NPCs, lowest ranked first.
    Voices,
    /// Medium-priority threads.
    MediumThreads,
    /// A scene description past its first sentence.
    SceneDetail,
    /// Present, unmentioned NPCs, lowest ranked first.
    PresentNpcs,
    /// The GM's plan (timeline entries after today) in the DM-only part, latest first.
    Plan,
    /// The GM's secrets in the DM-only part, lowest ranked first (the storylines' and the
    /// party's before the scene's and the cards').
    Secrets,
    /// Mention cards to their short form, lowest ranked first.
    ShortenCards,
    /// The current day's events too.
    RemainingEvents,
    /// High-priority threads.
    HighThreads,
    /// Mention cards to a name on the `Also mentioned:` line, lowest ranked first.
    CardsToNames,
    /// Urgent threads.
    UrgentThreads,
    /// The rest of a scene description.
    SceneDescription,
    /// Names on the `Also mentioned:` line to `and N more`.
    NamesToCount,
}

/// The order of cuts. The first six are the documented contract (docs/commands.md); the
/// rest apply only when those are not enough.
pub const ORDER: [DropStep; 15] = [
    DropStep::LowThreads,
    DropStep::OlderEvents,
    DropStep::Voices,
    DropStep::MediumThreads,
    DropStep::SceneDetail,
    DropStep::PresentNpcs,
    DropStep::Plan,
    DropStep::Secrets,
    DropStep::ShortenCards,
    DropStep::RemainingEvents,
    DropStep::HighThreads,
    DropStep::CardsToNames,
    DropStep::UrgentThreads,
    DropStep::SceneDescription,
    DropStep::NamesToCount,
];

fn len(s: &Option<String>) -> usize {
    s.as_deref().map_or(0, str::len)
}

fn thread_len(t: &ThreadRow) -> usize {
    t.title.len() + len(&t.summary) + len(&t.next) + 24
}

fn drop_thread(p: &mut Plan<'_>, d: DropStep, prio: Priority) -> Option<usize> {
    let t = p
        .threads
        .iter_mut()
        .rev()
        .find(|t| t.included && !t.mentioned && t.p == prio)?;
    t.included = false;
    t.reason = Reason::Dropped(d, None);
    Some(thread_len(t))
}

fn drop_event(p: &mut Plan<'_>, d: DropStep, today_too: bool) -> Option<usize> {
    let e = p
        .events
        .iter_mut()
        .find(|e| e.included && (today_too || !e.current_day))?;
    e.included = false;
    e.reason = Reason::Dropped(d, None);
    Some(e.text.len() + 12)
}

/// The lowest-ranked card whose cut is `from`.
fn lowest_card<'p>(cards: &'p mut [Card], from: &[Cut]) -> Option<&'p mut Card> {
    cards
        .iter_mut()
        .filter(|c| from.contains(&c.cut))
        .max_by_key(|c| c.rank)
}

/// Applies one cut of kind `d`; returns about how many characters it saved, or None when
/// there is nothing of that kind left to cut.
fn apply(p: &mut Plan<'_>, d: DropStep) -> Option<usize> {
    match d {
        DropStep::LowThreads => drop_thread(p, d, Priority::Low),
        DropStep::MediumThreads => drop_thread(p, d, Priority::Medium),
        DropStep::HighThreads => drop_thread(p, d, Priority::High),
        DropStep::UrgentThreads => drop_thread(p, d, Priority::Urgent),
        DropStep::OlderEvents => drop_event(p, d, false),
        DropStep::RemainingEvents => drop_event(p, d, true),
        DropStep::Voices => {
            let n = p
                .npcs
                .iter_mut()
                .rev()
                .find(|n| n.included && !n.mentioned && n.voice.is_some())?;
            Some(n.voice.take().map_or(0, |v| v.len() + 9))
        }
        DropStep::PresentNpcs => {
            let c = p.c;
            let n = p
                .npcs
                .iter_mut()
                .rev()
                .find(|n| n.included && !n.mentioned)?;
            n.included = false;
            n.reason = Reason::Dropped(d, None);
            let saved = n.name.len()
                + len(&n.status)
                + len(&n.role)
                + len(&n.disposition)
                + len(&n.voice)
                + len(&n.at)
                + 24;
            // What the DM knew of them goes with them.
            let path = &c.npcs[n.idx].source.path;
            Some(saved + super::secrets::drop_with(p, path, d))
        }
        DropStep::SceneDetail => {
            let l = p
                .scene
                .iter_mut()
                .rev()
                .find(|l| l.cut == Cut::None && l.full.is_some())?;
            l.cut = Cut::Shortened;
            l.description = l.full.as_deref().map(|d| first_sentence(d).to_string());
            Some(len(&l.full) - len(&l.description))
        }
        DropStep::SceneDescription => {
            let l = p
                .scene
                .iter_mut()
                .rev()
                .find(|l| l.cut != Cut::NameOnly && l.description.is_some())?;
            l.cut = Cut::NameOnly;
            Some(len(&l.description.take()))
        }
        DropStep::ShortenCards => {
            let c = p
                .cards
                .iter_mut()
                .filter(|c| c.cut == Cut::None && c.short.is_some())
                .max_by_key(|c| c.rank)?;
            Some(c.shorten())
        }
        DropStep::CardsToNames => {
            let c = lowest_card(&mut p.cards, &[Cut::None, Cut::Shortened])?;
            c.cut = Cut::NameOnly;
            let mut saved = c.len().saturating_sub(c.name.len() + 2);
            // The line names the best-ranked of the rest; the lowest are counted.
            if p.cards.iter().filter(|c| c.cut == Cut::NameOnly).count() > ALSO_NAMED {
                if let Some(c) = lowest_card(&mut p.cards, &[Cut::NameOnly]) {
                    c.cut = Cut::Counted;
                    saved += c.name.len() + 2;
                }
            }
            Some(saved)
        }
        DropStep::Plan => super::secrets::drop_one(p, d, true),
        DropStep::Secrets => super::secrets::drop_one(p, d, false),
        DropStep::NamesToCount => {
            let c = lowest_card(&mut p.cards, &[Cut::NameOnly])?;
            c.cut = Cut::Counted;
            Some(c.name.len() + 2)
        }
    }
}

impl Plan<'_> {
    /// Applies the next cut in [`ORDER`]; None when nothing is left to cut.
    pub(super) fn shrink(&mut self) -> Option<usize> {
        while let Some(&d) = ORDER.get(self.cursor) {
            if let Some(saved) = apply(self, d) {
                return Some(saved.max(1));
            }
            self.cursor += 1;
        }
        None
    }
}

/// A rendered block and its token count (None: not counted, because its bytes already fit
/// the budget and a token is at least one byte).
pub(super) struct Fitted {
    pub text: String,
    pub tokens: Option<usize>,
}

/// Renders the plan within `budget` tokens, cutting it as little as possible.
pub(super) fn fit(
    engine: &Engine,
    plan: &mut Plan<'_>,
    budget: Option<usize>,
) -> Result<Fitted, ContextError> {
    let text = plan.render(engine)?;
    let Some(budget) = budget else {
        return Ok(Fitted { text, tokens: None });
    };
    if text.len() <= budget {
        return Ok(Fitted { text, tokens: None });
    }
    let mut count = engine.count_tokens(&text);
    if count <= budget {
        return Ok(Fitted {
            text,
            tokens: Some(count),
        });
    }
    // `over` is always a plan known to be over the budget; `over_text` its rendering.
    let mut over = plan.clone();
    let mut over_text = text;
    loop {
        // A batch of cuts about the size of the excess (four characters a token).
        let want = (count - budget) * 4;
        let mut trial = over.clone();
        let (mut saved, mut cuts) = (0, 0);
        while saved < want {
            match trial.shrink() {
                Some(s) => {
                    saved += s;
                    cuts += 1;
                }
                None => break,
            }
        }
        if cuts == 0 {
            // Nothing left to cut: the smallest block there is.
            *plan = over;
            return Ok(Fitted {
                text: over_text,
                tokens: Some(count),
            });
        }
        let text = trial.render(engine)?;
        let n = engine.count_tokens(&text);
        if n > budget {
            over = trial;
            over_text = text;
            count = n;
            continue;
        }
        // `cuts` fit; find the fewest that do.
        let mut best = (trial, text, n);
        let (mut lo, mut hi) = (0, cuts);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            let mut m = over.clone();
            for _ in 0..mid {
                m.shrink();
            }
            let text = m.render(engine)?;
            let n = engine.count_tokens(&text);
            if n <= budget {
                hi = mid;
                best = (m, text, n);
            } else {
                lo = mid;
            }
        }
        *plan = best.0;
        return Ok(Fitted {
            text: best.1,
            tokens: Some(best.2),
        });
    }
}
