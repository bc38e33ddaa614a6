//! Long-session memory: what the DM still knows at turn 200 of what was said at turn 7.
//!
//! Canon covers what the GM wrote down; a session creates facts nobody wrote down. History
//! is trimmed to a budget, so what falls out of the hot window would be gone. Two layers
//! carry it back, with no model needed:
//!
//! - the **glossary** ([`glossary`]): names and words coined in play, each with the sentence
//!   that defined it;
//! - **recalled passages** ([`index`]): the earlier exchanges most relevant to the message,
//!   found by BM25 over their words and the canon entities they name (the message "the
//!   saloon owner" names Odessa Flint through canon, so her exchanges match).
//!
//! [`Memory`] is derived from the session's exchanges (rebuilt on open, extended after each
//! turn); the session log stays the only truth. `play::Table` lays the layers out with the
//! message, each within its share of the prompt budget, and `vaultdm prompt` shows them.

pub(crate) mod glossary;
pub(crate) mod index;
pub(crate) mod moments;
pub(crate) mod note;
pub(crate) mod store;
pub(crate) mod words;

use crate::llm::prompt::Exchange;
use crate::mentions::{Matcher, Mention, Target};
use index::{Index, Stats};

/// Token shares of the memory layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shares {
    /// The glossary.
    pub glossary: usize,
    /// The story so far (moments).
    pub story: usize,
    /// Recalled passages.
    pub recalled: usize,
    /// Moments shown at most.
    pub moments: usize,
}

impl Shares {
    /// The defaults when the prompt has no total budget (chat, `ask`).
    pub const DEFAULT: Shares = Shares {
        glossary: 400,
        story: 300,
        recalled: 1200,
        moments: moments::SHOW,
    };
}

/// One passage recalled for a message, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Recalled {
    /// The exchange (0-based in the session's history).
    pub turn: usize,
    /// Its BM25 score for the message.
    pub score: f64,
    /// The text shown.
    pub text: String,
    /// Why it was recalled: the message's words and canon names it shares.
    pub why: Vec<String>,
    /// The session it is from, when another (`turn` is then its exchange there).
    pub session: Option<String>,
}

/// The campaign's recall of its other sessions, searched with a session's own memory.
#[derive(Clone, Copy)]
pub struct Prior<'a> {
    /// The campaign's recall.
    pub recall: &'a store::Recall,
    /// This session (its passages are the memory's own).
    pub session: &'a str,
    /// A memory tag (`@npc3`) as the recall's stable tag (`@npc:odessa flint`).
    pub stable: &'a dyn Fn(&str) -> Option<String>,
}

/// The memory layers for one message.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Layers {
    /// The glossary block (empty when nothing was coined or nothing fits).
    pub glossary: String,
    /// Terms shown.
    pub terms: usize,
    /// The cold summary of what the hot history no longer carries ("Previously").
    pub previously: String,
    /// The story so far: the most significant moments related to the message.
    pub story: String,
    /// Moments shown.
    pub moments: usize,
    /// The recalled block.
    pub recalled: String,
    /// The dormant-threads line (callbacks), when it is due.
    pub callbacks: String,
    /// What was recalled, best first.
    pub passages: Vec<Recalled>,
}

impl Layers {
    /// The layers as one block for the message (empty when there is nothing).
    pub fn block(&self) -> String {
        let mut s = String::new();
        for part in [
            &self.previously,
            &self.glossary,
            &self.story,
            &self.recalled,
            &self.callbacks,
        ] {
            if !part.is_empty() {
                if !s.is_empty() {
                    s.push('\n');
                }
                s.push_str(part);
            }
        }
        s
    }
}

/// A session's memory.
#[derive(Debug, Clone, Default)]
pub struct Memory {
    index: Index,
    exchanges: Vec<(String, String)>,
    /// Where each passage came from, when not this session (`session 2026-11-20`).
    origin: Vec<Option<String>>,
    glossary: Vec<glossary::Term>,
    /// The most significant moments, in story order.
    moments: Vec<moments::Moment>,
    /// How many moments are kept (0: the default).
    keep: usize,
    /// The exchanges each canon entity was named in (its tag and the last few turns).
    named: rustc_hash::FxHashMap<String, Vec<usize>>,
    /// The canon entities each exchange names (as tags), by turn.
    tags: Vec<Vec<String>>,
    /// Passages from before this session (earlier sessions, the GM's session notes).
    prior: usize,
}

fn tag(t: Target) -> Option<String> {
    Some(match t {
        Target::Pc(i) => format!("@pc{i}"),
        Target::Npc(i) => format!("@npc{i}"),
        Target::Location(i) => format!("@loc{i}"),
        Target::Thread(i) => format!("@thread{i}"),
        Target::Lore(i) => format!("@lore{i}"),
        _ => return None,
    })
}

/// The canon entities `text` names, as memory tags (`@npc3`), sorted.
pub fn tags(m: &Matcher, text: &str) -> Vec<String> {
    let mut t: Vec<String> = m
        .find(text)
        .into_iter()
        .filter(|x| !x.ambiguous)
        .filter_map(|x| tag(x.target))
        .collect();
    t.sort();
    t.dedup();
    t
}

impl Memory {
    /// The memory of these exchanges (oldest first).
    pub fn build(exchanges: &[Exchange], m: &Matcher, known: &dyn Fn(&str) -> bool) -> Memory {
        let mut mem = Memory::default();
        for e in exchanges {
            mem.add(e, m, known);
        }
        mem
    }

    /// Number of exchanges remembered.
    pub fn len(&self) -> usize {
        self.exchanges.len()
    }

    /// True when nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.exchanges.is_empty()
    }

    /// Every coined term, oldest first.
    pub fn glossary(&self) -> &[glossary::Term] {
        &self.glossary
    }

    /// Canon entities (as tags: `@npc3`, `@thread1`) named at least twice, but not in the
    /// last `quiet` passages: dormant, worth bringing back. Most named first, at most `n`.
    pub fn dormant(&self, quiet: usize, n: usize) -> Vec<String> {
        let now = self.exchanges.len();
        let mut out: Vec<(usize, &String)> = self
            .named
            .iter()
            .filter(|(t, turns)| {
                (t.starts_with("@npc") || t.starts_with("@thread"))
                    && turns.len() >= 2
                    && turns.last().is_some_and(|l| l + quiet < now)
            })
            .map(|(t, turns)| (turns.len(), t))
            .collect();
        out.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
        out.into_iter().take(n).map(|(_, t)| t.clone()).collect()
    }

    /// Keeps `n` moments (the most significant) from now on.
    pub fn set_kept(&mut self, n: usize) {
        self.keep = n.max(1);
    }

    /// Passages from before this session.
    pub fn prior(&self) -> usize {
        self.prior
    }

    /// Remembers a passage from before this session (an earlier session's exchange, a
    /// session note), labelled with where it came from. Call before any [`Memory::add`].
    pub fn add_prior(
        &mut self,
        e: &Exchange,
        origin: &str,
        m: &Matcher,
        known: &dyn Fn(&str) -> bool,
    ) {
        self.add(e, m, known);
        if let Some(o) = self.origin.last_mut() {
            *o = Some(origin.to_string());
        }
        self.prior += 1;
    }

    /// Remembers one more exchange.
    pub fn add(&mut self, e: &Exchange, m: &Matcher, known: &dyn Fn(&str) -> bool) {
        let turn = self.exchanges.len();
        let text = format!("{}\n{}", e.player, e.dm);
        let tagged = tags(m, &text);
        for t in &tagged {
            let turns = self.named.entry(t.clone()).or_default();
            turns.push(turn);
            if turns.len() > 8 {
                turns.remove(0);
            }
        }
        self.index.add(&text, &tagged);
        let seen =
            |t: &str| known(t) || self.glossary.iter().any(|g| g.term.eq_ignore_ascii_case(t));
        let new = glossary::coined(&e.dm, turn, &seen);
        let coined: Vec<String> = new.iter().map(|t| t.term.clone()).collect();
        if let Some(mo) = moments::of_reply(&e.dm, turn, &coined) {
            self.moments.push(mo);
            let keep = if self.keep == 0 {
                moments::KEEP
            } else {
                self.keep
            };
            moments::keep(&mut self.moments, keep);
        }
        self.glossary.extend(new);
        self.exchanges.push((e.player.clone(), e.dm.clone()));
        self.origin.push(None);
        self.tags.push(tagged);
    }

    /// The query for a message: its words, and the canon entities it names (as tags and as
    /// the words of their names).
    fn query(&self, message: &str, m: &Matcher) -> Vec<(String, f64)> {
        let mut q: Vec<(String, f64)> = words::terms(message)
            .into_iter()
            .map(|t| (t, 1.0))
            .collect();
        for x in m.find(message) {
            if x.ambiguous {
                continue;
            }
            if let Some(t) = tag(x.target) {
                q.push((t, 1.5));
            }
        }
        q
    }

    /// The layers for `message`: the glossary, and passages from before `hot_from` (earlier
    /// sessions, and this session's exchanges the prompt's history no longer carries; an
    /// index over all passages, prior ones first), each within its share.
    pub fn layers(
        &self,
        message: &str,
        hot_from: usize,
        m: &Matcher,
        shares: Shares,
        count: &dyn Fn(&str) -> usize,
    ) -> Layers {
        self.layers_with(&self.glossary, message, hot_from, m, shares, count)
    }

    /// [`Memory::layers`] with another glossary (the GM's, from the memory note).
    pub fn layers_with(
        &self,
        glossary: &[glossary::Term],
        message: &str,
        hot_from: usize,
        m: &Matcher,
        shares: Shares,
        count: &dyn Fn(&str) -> usize,
    ) -> Layers {
        self.layers_prior(glossary, message, hot_from, m, shares, count, None)
    }

    /// [`Memory::layers_with`], recalling also from the campaign's other sessions
    /// (`prior`): their passages and this memory's are ranked together, as one collection.
    #[allow(clippy::too_many_arguments)]
    pub fn layers_prior(
        &self,
        glossary: &[glossary::Term],
        message: &str,
        hot_from: usize,
        m: &Matcher,
        shares: Shares,
        count: &dyn Fn(&str) -> usize,
        prior: Option<Prior<'_>>,
    ) -> Layers {
        let mut out = Layers::default();
        if self.exchanges.is_empty() && prior.is_none_or(|p| p.recall.is_empty()) {
            return out;
        }
        let q = Query::new(self.query(message, m));
        if shares.glossary > 0 && !glossary.is_empty() {
            glossary_layer(&mut out, glossary, hot_from, &q, shares.glossary, count);
        }
        if shares.story > 0 {
            self.story_layer(&mut out, hot_from, &q, shares, count);
        }
        let any = hot_from > 0 || prior.is_some_and(|p| !p.recall.is_empty());
        if shares.recalled > 0 && any {
            self.recalled_layer(
                &mut out,
                message,
                hot_from,
                m,
                &q,
                shares.recalled,
                count,
                prior,
            );
        }
        out
    }

    /// The story so far: the kept moments most related to the message, in story order.
    fn story_layer(
        &self,
        out: &mut Layers,
        hot_from: usize,
        q: &Query,
        shares: Shares,
        count: &dyn Fn(&str) -> usize,
    ) {
        let mut order: Vec<(usize, u32, usize)> = self
            .moments
            .iter()
            .enumerate()
            .filter(|(_, mo)| mo.turn < hot_from)
            .map(|(i, mo)| (q.overlap(&mo.text), mo.significance, i))
            .collect();
        order.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(b.2.cmp(&a.2)));
        let head = "Story so far:\n";
        let mut used = count(head);
        let mut chosen: Vec<usize> = Vec::new();
        for (_, _, i) in order {
            if chosen.len() == shares.moments {
                break;
            }
            let n = count(&self.moments[i].text) + 8;
            if used + n > shares.story {
                continue;
            }
            used += n;
            chosen.push(i);
        }
        if !chosen.is_empty() {
            chosen.sort_unstable();
            let mut block = String::from(head);
            for i in &chosen {
                block.push_str(&format!("- {}\n", self.moments[*i].text));
            }
            out.story = block;
            out.moments = chosen.len();
        }
    }

    /// Recalled passages, best first, shown in the order they happened.
    #[allow(clippy::too_many_arguments)]
    fn recalled_layer(
        &self,
        out: &mut Layers,
        message: &str,
        hot_from: usize,
        m: &Matcher,
        q: &Query,
        share: usize,
        count: &dyn Fn(&str) -> usize,
        prior: Option<Prior<'_>>,
    ) {
        let hits = self.hits(&q.weighted, hot_from, prior);
        let head = "Recalled from earlier in this campaign:\n";
        let mut used = count(head);
        // (recalled, label, order): the order they happened in.
        let mut chosen: Vec<(Recalled, String, (u8, usize))> = Vec::new();
        // What the message names, found once (each passage's names were tagged when it was
        // indexed).
        let asked: Vec<_> = m
            .find(message)
            .into_iter()
            .filter(|x| !x.ambiguous)
            .filter_map(|x| tag(x.target).map(|t| (x, t)))
            .collect();
        for hit in hits {
            let c = self.candidate(&hit, &asked, prior);
            let text = excerpt(c.player, c.dm, &|s| q.overlap(s));
            let n = count(&text) + 2;
            if used + n > share {
                continue;
            }
            used += n;
            let doc = words::terms(&format!("{} {}", c.player, c.dm));
            let mut why: Vec<String> = q
                .terms()
                .filter(|t| !t.starts_with('@') && doc.iter().any(|d| d == *t))
                .map(|t| t.to_string())
                .collect();
            why.dedup();
            for (x, t) in &asked {
                if c.tagged.contains(t) && !why.contains(&x.text) {
                    why.push(x.text.clone());
                }
            }
            chosen.push((
                Recalled {
                    turn: c.turn,
                    score: c.score,
                    text,
                    why,
                    session: c.session,
                },
                c.label,
                c.order,
            ));
        }
        if !chosen.is_empty() {
            let mut shown: Vec<&(Recalled, String, (u8, usize))> = chosen.iter().collect();
            shown.sort_by_key(|c| c.2);
            let mut block = String::from(head);
            for (r, from, _) in shown {
                block.push_str(&format!("- ({from}) {}\n", r.text));
            }
            out.recalled = block;
            out.passages = chosen.into_iter().map(|c| c.0).collect();
        }
    }

    /// A hit as a passage to show: its words, the message's names it carries, its label and
    /// where it happened.
    fn candidate<'h>(
        &'h self,
        hit: &'h Hit,
        asked: &[(Mention, String)],
        prior: Option<Prior<'_>>,
    ) -> Candidate<'h> {
        match hit {
            Hit::Own(turn, score) => {
                let (player, dm) = &self.exchanges[*turn];
                let label = match &self.origin[*turn] {
                    Some(o) => o.clone(),
                    None => format!("exchange {}", turn - self.prior + 1),
                };
                let order = if *turn < self.prior {
                    (0, *turn)
                } else {
                    (2, *turn)
                };
                Candidate {
                    player,
                    dm,
                    tagged: self.tags[*turn].clone(),
                    label,
                    order,
                    turn: *turn,
                    session: None,
                    score: *score,
                }
            }
            Hit::Prior(p) => {
                let stable = prior.map(|x| x.stable);
                // The message's tags as this passage's stable ones.
                let tagged: Vec<String> = asked
                    .iter()
                    .filter(|(_, t)| {
                        stable
                            .and_then(|f| f(t))
                            .is_some_and(|s| p.tags.contains(&s))
                    })
                    .map(|(_, t)| t.clone())
                    .collect();
                Candidate {
                    player: &p.player,
                    dm: &p.dm,
                    tagged,
                    label: format!("session {}", p.session),
                    order: (1, p.order),
                    turn: p.turn,
                    session: Some(p.session.clone()),
                    score: p.score,
                }
            }
        }
    }
}

/// The glossary layer: the terms most related to the message first, then the newest; terms
/// coined in the hot history are in the prompt already.
fn glossary_layer(
    out: &mut Layers,
    glossary: &[glossary::Term],
    hot_from: usize,
    q: &Query,
    share: usize,
    count: &dyn Fn(&str) -> usize,
) {
    let mut order: Vec<(usize, usize)> = glossary
        .iter()
        .enumerate()
        .filter(|(_, g)| g.pinned || g.turn < hot_from)
        .map(|(i, g)| (q.overlap(&g.sentence), i))
        .collect();
    order.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
    let head = "Names and words from earlier in play:\n";
    let mut block = String::from(head);
    let mut used = count(head);
    for (_, i) in order {
        let g = &glossary[i];
        let line = format!("- {}: {}\n", g.term, g.sentence);
        let n = count(&line);
        if used + n > share {
            continue;
        }
        used += n;
        block.push_str(&line);
        out.terms += 1;
    }
    if out.terms > 0 {
        out.glossary = block;
    }
}

/// A message's query: its weighted terms, and how many of them a text shares.
struct Query {
    weighted: Vec<(String, f64)>,
}

impl Query {
    fn new(weighted: Vec<(String, f64)>) -> Self {
        Self { weighted }
    }

    /// The query's terms, in order.
    fn terms(&self) -> impl Iterator<Item = &str> {
        self.weighted.iter().map(|(t, _)| t.as_str())
    }

    /// How many of `text`'s terms are the query's.
    fn overlap(&self, text: &str) -> usize {
        words::terms(text)
            .iter()
            .filter(|t| self.terms().any(|q| q == t.as_str()))
            .count()
    }
}

/// A recalled passage before it is fitted in: what [`Memory::candidate`] makes of a hit.
struct Candidate<'h> {
    player: &'h str,
    dm: &'h str,
    /// The message's names this passage carries, as tags.
    tagged: Vec<String>,
    label: String,
    /// Where it happened: earlier sessions' notes, other sessions, this session.
    order: (u8, usize),
    turn: usize,
    session: Option<String>,
    score: f64,
}

/// A passage found for a message: this memory's (its turn) or another session's.
enum Hit {
    Own(usize, f64),
    Prior(store::Passage),
}

impl Memory {
    /// The 8 passages best matching the query: this memory's before `hot_from` and the
    /// campaign's other sessions', ranked as one collection (one BM25 over both).
    fn hits(&self, q: &[(String, f64)], hot_from: usize, prior: Option<Prior<'_>>) -> Vec<Hit> {
        const K: usize = 8;
        let own = Stats {
            docs: self.index.len(),
            total_len: self.index.total_len(),
        };
        let Some(p) = prior else {
            return self
                .index
                .search(q, K, |i| i < hot_from)
                .into_iter()
                .map(|(t, s)| Hit::Own(t, s))
                .collect();
        };
        let stable = |t: &str| -> String {
            if t.starts_with('@') {
                (p.stable)(t).unwrap_or_else(|| t.to_string())
            } else {
                t.to_string()
            }
        };
        p.recall.view(|v| {
            let theirs = v.stats(p.session);
            let stats = Stats {
                docs: own.docs + theirs.docs,
                total_len: own.total_len + theirs.total_len,
            };
            let df = |t: &str| self.index.df(t) + v.df(&stable(t), p.session);
            let weighed = index::weigh(q, stats, &df);
            let mine = self.index.score(&weighed, stats, K, |i| i < hot_from);
            let stable_q: Vec<(String, f64)> =
                weighed.iter().map(|(t, w)| (stable(t), *w)).collect();
            let others = v.search(&stable_q, stats, K, p.session);
            // Best first; on a tie, this session's (the newer) first.
            let mut all: Vec<(f64, u8, usize, Hit)> = mine
                .into_iter()
                .map(|(t, s)| (s, 1, t, Hit::Own(t, s)))
                .chain(
                    others
                        .into_iter()
                        .map(|x| (x.score, 0, x.order, Hit::Prior(x))),
                )
                .collect();
            all.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)).then(b.2.cmp(&a.2)));
            all.into_iter().take(K).map(|x| x.3).collect()
        })
    }
}

/// A passage as recalled: the player's words and the DM sentences that best match, in
/// their order, within about 600 characters.
fn excerpt(player: &str, dm: &str, overlap: &dyn Fn(&str) -> usize) -> String {
    const MAX: usize = 600;
    let player: String = player.chars().take(160).collect();
    let sentences = sentences(dm);
    let mut ranked: Vec<(usize, usize)> = sentences
        .iter()
        .enumerate()
        .map(|(i, s)| (overlap(s), i))
        .collect();
    ranked.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut keep = Vec::new();
    let mut len = player.len();
    for (_, i) in ranked {
        let s = sentences[i];
        if len + s.len() > MAX && !keep.is_empty() {
            continue;
        }
        len += s.len() + 1;
        keep.push(i);
    }
    keep.sort_unstable();
    let dm: Vec<&str> = keep.iter().map(|i| sentences[*i]).collect();
    let mut dm = dm.join(" ");
    if dm.len() > MAX {
        let mut cut = MAX;
        while !dm.is_char_boundary(cut) {
            cut -= 1;
        }
        dm.truncate(cut);
        dm.push('…');
    }
    format!("Player: {player} / DM: {dm}")
}

/// The story-so-far block from moment lines (the memory note's: the provider's or the
/// GM's): of the last `kept`, the `shown` sharing most words with the message, in story order, within `max` tokens. Returns the block and how many it shows.
pub fn story_block(
    lines: &[String],
    message: &str,
    max: usize,
    (kept, shown): (usize, usize),
    count: &dyn Fn(&str) -> usize,
) -> (String, usize) {
    let q = words::terms(message);
    let start = lines.len().saturating_sub(kept);
    let mut order: Vec<(usize, usize)> = lines[start..]
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let n = words::terms(l).iter().filter(|t| q.contains(t)).count();
            (n, start + i)
        })
        .collect();
    order.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
    let head = "Story so far:\n";
    let mut used = count(head);
    let mut chosen = Vec::new();
    for (_, i) in order {
        if chosen.len() == shown {
            break;
        }
        let n = count(&lines[i]) + 2;
        if used + n <= max {
            used += n;
            chosen.push(i);
        }
    }
    if chosen.is_empty() {
        return (String::new(), 0);
    }
    chosen.sort_unstable();
    let mut block = String::from(head);
    for i in &chosen {
        block.push_str(&format!("- {}\n", lines[*i]));
    }
    (block, chosen.len())
}

/// `text` cut at a sentence end to fit `max` tokens (whole when it fits).
pub fn clip_to(text: &str, max: usize, count: &dyn Fn(&str) -> usize) -> String {
    if count(text) <= max {
        return text.to_string();
    }
    let mut out = String::new();
    for s in sentences(text) {
        let next = format!("{out}{s} ");
        if count(&next) > max {
            break;
        }
        out = next;
    }
    let out = out.trim_end().to_string();
    if out.is_empty() {
        out
    } else {
        format!("{out}\n")
    }
}

/// The sentences of a text.
pub(crate) fn sentences(text: &str) -> Vec<&str> {
    split_sentences(text, false)
}

/// The sentences of a text, ending at `.`, `!` or `?` (and at a line end when `lines`)
/// before a space, a quote or the end.
pub(crate) fn split_sentences(text: &str, lines: bool) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let b = text.as_bytes();
    for (i, c) in text.char_indices() {
        if (matches!(c, '.' | '!' | '?') || (lines && c == '\n'))
            && b.get(i + 1)
                .is_none_or(|n| n.is_ascii_whitespace() || *n == b'"')
        {
            let s = text[start..=i].trim();
            if !s.is_empty() {
                out.push(s);
            }
            start = i + 1;
        }
    }
    let s = text[start..].trim();
    if !s.is_empty() {
        out.push(s);
    }
    out
}
