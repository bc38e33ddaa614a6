//! The prompt's budget shared out between its layers, and the memory layers for a message.
//!
//! With a total budget (`vaultdm prompt --budget N`), after the system prompt and the
//! message, each layer gets its `[memory]` share (by default 30% for the canon context, 10%
//! for the cold summary, 8% for the glossary, 4% for the story so far, 20% for recalled
//! passages) and the rest — with whatever those leave unused — goes to the hot history.
//! Without one, the canon budget (`[context] budget`), the `[memory]` token defaults and the
//! history budget (`history_budget`) apply as set.

use super::Table;
use crate::llm::prompt::{plan_history, Exchange};
use crate::memory::glossary::Term;
use crate::memory::{Layers, Memory, Shares};
use crate::names::norm_key;
use std::collections::HashSet;

/// The shares of a total prompt budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Split {
    /// The canon context's budget.
    pub canon: usize,
    /// The memory layers' shares.
    pub memory: Shares,
    /// What is left for the whole prompt after the system prompt and the message.
    pub rest: usize,
}

/// What a table remembers beyond the hot history, and the caches that keep recalling it
/// cheap.
#[derive(Default)]
pub(super) struct Remembering {
    /// `[memory]` settings (the provider's extraction of moments and terms).
    pub config: crate::config::MemoryConfig,
    /// What the session remembers beyond the hot history (derived from the log).
    pub memory: Memory,
    /// Terms and moments extracted since the memory note was last written.
    pub extracted_terms: Vec<Term>,
    pub extracted_moments: Vec<String>,
    /// The last earlier session's cold summary, once read.
    pub last_previously: Option<Option<String>>,
    /// The memory of the GM's session notes, shared by the tables of one campaign (`serve`).
    pub note_memory: Option<super::NoteMemory>,
    /// The campaign's recall of the other sessions, opened on the first message.
    pub recall: Option<std::sync::Arc<crate::memory::store::Recall>>,
    /// The recall shared by the tables of one campaign (`serve`).
    pub shared_recall: Option<super::SharedRecall>,
    /// The canon the recall's fingerprint was taken of, and the fingerprint.
    pub recall_canon: Option<(std::sync::Arc<crate::canon::Campaign>, u64)>,
    /// Canon names for the glossary, built once per canon.
    pub known: Option<std::rc::Rc<KnownNames>>,
}

/// Tokens kept back for the message's framing (`Player: `, blank lines, labels).
const FRAMING: usize = 40;

impl Table {
    /// Sets a total prompt budget in tokens (0 = none).
    pub fn set_prompt_budget(&mut self, budget: usize) {
        self.budgets.prompt = (budget > 0).then_some(budget);
    }

    /// The total prompt budget, if one is set.
    pub fn prompt_budget(&self) -> Option<usize> {
        self.budgets.prompt
    }

    /// Sets the history budget in tokens.
    pub fn set_history_budget(&mut self, budget: usize) {
        self.budgets.history = budget;
    }

    /// What the next message would carry, without the explain items (for `vaultdm prompt`).
    pub fn prepare_quiet(&mut self, message: &str) -> Result<super::Prepared, super::PlayError> {
        self.prepare_with(message, false)
    }

    pub(super) fn shares(&self, message: &str) -> Option<Split> {
        let total = self.budgets.prompt?;
        let fixed = self.counts.count(&self.canon.system) + self.counts.count(message) + FRAMING;
        // 4% is kept back for what the layer budgets do not see: each message's framing
        // (`Player: `, roles) and the gap between a token count and the text's length.
        let rest = (total - total / 25).saturating_sub(fixed);
        let [canon, _, glossary, story, recalled] = self.mem.config.percentages();
        Some(Split {
            canon: rest * canon / 100,
            memory: Shares {
                glossary: rest * glossary / 100,
                story: rest * story / 100,
                recalled: rest * recalled / 100,
                moments: self.mem.config.moments_shown,
            },
            rest,
        })
    }

    /// The canon names index, built once per canon.
    fn known_cached(&mut self) -> std::rc::Rc<KnownNames> {
        if let Some(k) = &self.mem.known {
            return k.clone();
        }
        let names = self.known_names();
        let mut by_word: std::collections::HashMap<String, Vec<u32>> = Default::default();
        for (i, n) in names.iter().enumerate() {
            for w in n.split(' ') {
                by_word.entry(w.to_string()).or_default().push(i as u32);
            }
        }
        let k = std::rc::Rc::new(KnownNames {
            exact: names,
            by_word,
        });
        self.mem.known = Some(k.clone());
        k
    }

    /// Canon names, for telling coined terms from known ones.
    fn known_names(&self) -> HashSet<String> {
        let c = self.canon.engine.campaign();
        let mut names = HashSet::new();
        let mut add = |n: &str| {
            let k = norm_key(n);
            names.insert(k.strip_prefix("the ").unwrap_or(&k).to_string());
            names.insert(k);
        };
        for p in &c.pcs {
            add(&p.name);
            p.aliases.iter().for_each(|a| add(a));
        }
        for n in &c.npcs {
            add(&n.name);
            n.aliases.iter().for_each(|a| add(a));
        }
        for l in &c.locations {
            add(&l.name);
            l.aliases.iter().for_each(|a| add(a));
        }
        for t in &c.threads {
            add(&t.title);
        }
        for l in &c.lore {
            add(&l.name);
            l.aliases.iter().for_each(|a| add(a));
        }
        names
    }

    /// Brings the memory up to the session's history (rebuilt when an `/undo` shortened it).
    fn sync_memory(&mut self, history: &[Exchange]) {
        let mem = &self.mem.memory;
        if !mem.is_empty() && mem.len() - mem.prior() == history.len() {
            return;
        }
        let names = self.known_cached();
        let known = |t: &str| names.covers(t);
        let mem = &self.mem.memory;
        if mem.len() - mem.prior() > history.len() || mem.is_empty() {
            self.mem.memory = self.notes_memory(self.canon.engine.matcher(), &known);
        }
        let m = self.canon.engine.matcher();
        let mem = &mut self.mem.memory;
        let have = mem.len() - mem.prior();
        for e in &history[have.min(history.len())..] {
            mem.add(e, m, &known);
        }
    }

    /// The glossary as the GM's memory note has it (their edits win), with the terms coined
    /// since the note was last written; `None` when there is no note.
    fn note_glossary(
        &self,
        mem: &Memory,
        note: Option<&crate::memory::note::NoteData>,
    ) -> Option<Vec<Term>> {
        let note = note?;
        let (mut terms, through) = (note.terms.clone(), note.through);
        // A line the GM left as it was keeps its place in time (terms from the hot history
        // are not repeated); an edited or added one is always shown.
        for t in &mut terms {
            if let Some(d) = mem
                .glossary()
                .iter()
                .find(|d| d.term.eq_ignore_ascii_case(&t.term) && d.sentence == t.sentence)
            {
                t.turn = d.turn;
                t.pinned = false;
            }
        }
        for t in mem.glossary().iter().filter(|t| t.turn >= through) {
            if !terms.iter().any(|x| x.term.eq_ignore_ascii_case(&t.term)) {
                terms.push(t.clone());
            }
        }
        Some(terms)
    }

    /// Rewrites the memory note after an exchange: the GM's version of the glossary plus
    /// what was coined since. Written atomically, and only when it changed.
    pub(super) fn write_memory_note(&mut self) {
        self.write_note_with(None);
    }

    /// The memory note as it is on disk, if vaultdm wrote one.
    pub(super) fn read_note(&self) -> Option<crate::memory::note::NoteData> {
        let rel = crate::session::memory_note_rel_path(self.store.name());
        let text =
            crate::vault::boundary::read_text_inside(self.store.vault(), &rel, 4 << 20).ok()?;
        crate::memory::note::parse(&text)
    }

    /// Rewrites the memory note: the GM's glossary plus new terms, and the summary (a new one
    /// when given, else the note's own).
    pub(super) fn write_note_with(&mut self, summary: Option<(String, usize)>) {
        let history = self.store.history();
        self.sync_memory(&history);
        let old_note = self.read_note();
        let mem = &self.mem.memory;
        let terms = self
            .note_glossary(mem, old_note.as_ref())
            .unwrap_or_else(|| mem.glossary().to_vec());
        let old = old_note.unwrap_or_default();
        let (previously, summarised) = summary.unwrap_or((old.previously, old.summarised));
        let mut moments = old.moments;
        moments.extend(std::mem::take(&mut self.mem.extracted_moments));
        let mut terms = terms;
        for t in std::mem::take(&mut self.mem.extracted_terms) {
            if !terms.iter().any(|x| x.term.eq_ignore_ascii_case(&t.term)) {
                terms.push(t);
            }
        }
        if terms.is_empty() && previously.is_empty() && moments.is_empty() {
            return;
        }
        let data = crate::memory::note::NoteData {
            terms,
            through: self.mem.memory.len(),
            previously,
            summarised,
            moments,
        };
        let text = crate::memory::note::render(self.store.name(), &data);
        let rel = crate::session::memory_note_rel_path(self.store.name());
        let vault = self.store.vault().to_path_buf();
        if crate::vault::boundary::read_text_inside(&vault, &rel, 4 << 20)
            .ok()
            .as_deref()
            == Some(text.as_str())
        {
            return;
        }
        if let Err(e) = crate::vault::boundary::write_atomic_inside(&vault, &rel, text.as_bytes()) {
            self.notices
                .push(format!("the memory note could not be written: {e}"));
        }
    }

    /// The name behind a memory tag (`@npc3`).
    fn tag_name(&self, tag: &str) -> Option<String> {
        let c = self.canon.engine.campaign();
        let n = |p: &str| tag.strip_prefix(p).and_then(|i| i.parse::<usize>().ok());
        if let Some(i) = n("@npc") {
            let npc = c.npcs.get(i)?;
            // The dead stay dead: no callback to an absent NPC.
            (!crate::canon::model::is_absent_status(&npc.status)).then(|| npc.name.clone())
        } else if let Some(i) = n("@thread") {
            let t = c.threads.get(i)?;
            (t.priority != crate::canon::model::Priority::Resolved).then(|| t.title.clone())
        } else {
            None
        }
    }

    /// What this session remembers from before it: the GM's session notes, then every
    /// earlier session's exchanges, oldest session first.
    fn note_passages(&self) -> Vec<(String, Exchange)> {
        let mut out = Vec::new();
        for s in &self.canon.engine.campaign().sessions {
            if let Some(summary) = &s.summary {
                out.push((
                    format!("session note {}", s.name),
                    Exchange {
                        player: String::new(),
                        dm: summary.clone(),
                        full_context: None,
                    },
                ));
            }
        }
        out
    }

    /// A memory tag (`@npc3`, canon's third NPC) as a tag that outlives canon's order
    /// (`@npc:odessa flint`): what the campaign's recall index keeps.
    fn stable_tag(&self, tag: &str) -> Option<String> {
        let c = self.canon.engine.campaign();
        let n = |p: &str| tag.strip_prefix(p).and_then(|i| i.parse::<usize>().ok());
        let (kind, name) = if let Some(i) = n("@pc") {
            ("pc", &c.pcs.get(i)?.name)
        } else if let Some(i) = n("@npc") {
            ("npc", &c.npcs.get(i)?.name)
        } else if let Some(i) = n("@loc") {
            ("loc", &c.locations.get(i)?.name)
        } else if let Some(i) = n("@thread") {
            ("thread", &c.threads.get(i)?.title)
        } else if let Some(i) = n("@lore") {
            ("lore", &c.lore.get(i)?.name)
        } else {
            return None;
        };
        Some(format!("@{kind}:{}", norm_key(name)))
    }

    /// What the recall index's tags depend on: every canon entity's names. An index made
    /// for other names is rebuilt.
    fn canon_fingerprint(&mut self) -> u64 {
        let arc = self.canon.engine.campaign_arc();
        if let Some((c, fp)) = &self.mem.recall_canon {
            if std::sync::Arc::ptr_eq(c, arc) {
                return *fp;
            }
        }
        let c = self.canon.engine.campaign();
        let mut s = String::new();
        let mut add = |kind: &str, name: &str, aliases: &[String]| {
            s.push_str(kind);
            s.push(':');
            s.push_str(&norm_key(name));
            for a in aliases {
                s.push('|');
                s.push_str(&norm_key(a));
            }
            s.push('\n');
        };
        c.pcs.iter().for_each(|p| add("pc", &p.name, &p.aliases));
        c.npcs.iter().for_each(|p| add("npc", &p.name, &p.aliases));
        c.locations
            .iter()
            .for_each(|p| add("loc", &p.name, &p.aliases));
        c.threads.iter().for_each(|t| add("thread", &t.title, &[]));
        c.lore.iter().for_each(|p| add("lore", &p.name, &p.aliases));
        let fp = crate::memory::store::checksum(s.as_bytes());
        self.mem.recall_canon = Some((arc.clone(), fp));
        fp
    }

    /// The campaign's recall of the other sessions, brought up to their logs: opened (read
    /// from `.vaultdm/memory/`, or rebuilt) on first use, shared with the campaign's other
    /// tables behind `serve`.
    pub(super) fn campaign_recall(&mut self) -> std::sync::Arc<crate::memory::store::Recall> {
        use crate::memory::store::Recall;
        let fingerprint = self.canon_fingerprint();
        let m = self.canon.engine.matcher();
        let tagger = |text: &str| -> Vec<String> {
            crate::memory::tags(m, text)
                .iter()
                .filter_map(|t| self.stable_tag(t))
                .collect()
        };
        let recall = match self
            .mem
            .recall
            .as_ref()
            .filter(|r| r.fingerprint() == fingerprint)
        {
            Some(r) => {
                r.refresh_recent(&tagger);
                r.clone()
            }
            None => {
                let open =
                    || std::sync::Arc::new(Recall::open(self.store.vault(), fingerprint, &tagger));
                match &self.mem.shared_recall {
                    Some(shared) => {
                        let mut slot = shared.lock().unwrap_or_else(|p| p.into_inner());
                        match slot.as_ref().filter(|r| r.fingerprint() == fingerprint) {
                            Some(r) => {
                                r.refresh_recent(&tagger);
                                r.clone()
                            }
                            None => {
                                let r = open();
                                *slot = Some(r.clone());
                                r
                            }
                        }
                    }
                    None => open(),
                }
            }
        };
        self.mem.recall = Some(recall.clone());
        self.notices.extend(recall.take_notices());
        recall
    }

    /// Shares the campaign's recall with the other tables of the campaign. Whoever runs the
    /// tables calls [`Table::log_changed`] after each turn, so the others recall it at once.
    pub fn share_recall(&mut self, shared: super::SharedRecall) {
        self.mem.shared_recall = Some(shared);
    }

    /// Tells the campaign's recall that this session's log changed (a turn played, a reply
    /// superseded): the campaign's other tables read it at their next message, not only at
    /// the recall's next look at every log ([`crate::memory::store::RESCAN`]).
    pub fn log_changed(&self) {
        let shared = self
            .mem
            .shared_recall
            .as_ref()
            .and_then(|s| s.lock().unwrap_or_else(|p| p.into_inner()).clone());
        if let Some(r) = shared.or_else(|| self.mem.recall.clone()) {
            r.touch(self.store.name());
        }
    }

    /// A memory holding the GM's session notes (the first passages before this session):
    /// indexed once per canon for all the tables sharing [`super::NoteMemory`].
    fn notes_memory(&self, m: &crate::mentions::Matcher, known: &dyn Fn(&str) -> bool) -> Memory {
        let kept = self.mem.config.moments_kept;
        let build = || {
            let mut mem = Memory::default();
            mem.set_kept(kept);
            for (origin, e) in self.note_passages() {
                mem.add_prior(&e, &origin, m, known);
            }
            mem
        };
        let Some(shared) = &self.mem.note_memory else {
            return build();
        };
        let campaign = self.canon.engine.campaign_arc();
        // Held while building: tables opening together wait for one build.
        let Ok(mut slot) = shared.lock() else {
            return build();
        };
        if let Some((c, k, mem)) = slot.as_ref() {
            if std::sync::Arc::ptr_eq(c, campaign) && *k == kept {
                return mem.clone();
            }
        }
        let mem = build();
        *slot = Some((campaign.clone(), kept, mem.clone()));
        mem
    }

    /// Shares the memory of the session notes with the other tables of the campaign.
    pub fn share_note_memory(&mut self, shared: super::NoteMemory) {
        self.mem.note_memory = Some(shared);
    }

    /// The memory layers for `message` and the history budget left beside them.
    pub(super) fn recall(
        &mut self,
        message: &str,
        over: Over<'_>,
        block: &str,
        split: Option<Split>,
    ) -> (Layers, usize) {
        // Memory is this session's log (and earlier sessions'); a front end's history behind
        // `serve` may be trimmed or reach back before the log, so it is not synced from it.
        // Each reply brings the memory up to the log (`write_note_with`), so only a session
        // just opened needs it here.
        let history = match over {
            Over::Log(history) => {
                self.sync_memory(history);
                history
            }
            Over::FrontEnd(history) => {
                if self.mem.memory.is_empty() {
                    self.sync_memory(&self.store.history());
                }
                history
            }
        };
        let recall = self.campaign_recall();
        // The memory note is read once per message, for all three layers it feeds.
        let note = self.read_note();
        // Previously: the cold summary (this session's, else the last session's).
        let previously = self.previously(note.as_ref());
        let count = |t: &str| self.counts.count(t);
        let (shares, history_budget) = match split {
            Some(s) => {
                let used = count(block);
                let left = s.rest.saturating_sub(used);
                (s.memory, left)
            }
            None => (
                Shares {
                    glossary: self.mem.config.glossary_tokens,
                    story: self.mem.config.story_tokens,
                    recalled: self.mem.config.recalled_tokens,
                    moments: self.mem.config.moments_shown,
                },
                self.budgets.history,
            ),
        };
        // The hot window if memory takes its whole share; memory covers what is older.
        let hot_budget = match split {
            Some(_) => {
                history_budget.saturating_sub(shares.glossary + shares.story + shares.recalled)
            }
            None => history_budget,
        };
        let plan = plan_history(history, hot_budget, &count);
        let mut hot_from = history.len();
        while hot_from > 0 && plan.kept.contains(&(hot_from - 1)) {
            hot_from -= 1;
        }
        let mem = &self.mem.memory;
        // The hot window is the newest exchanges of the history; memory's own are the same
        // newest ones of the log.
        let hot = history.len() - hot_from;
        let hot_from = mem.len().saturating_sub(hot).max(mem.prior());
        let glossary = self
            .note_glossary(mem, note.as_ref())
            .unwrap_or_else(|| mem.glossary().to_vec());
        let stable = |t: &str| self.stable_tag(t);
        let prior = crate::memory::Prior {
            recall: &recall,
            session: self.store.name(),
            stable: &stable,
        };
        let mut layers = mem.layers_prior(
            &glossary,
            message,
            hot_from,
            self.canon.engine.matcher(),
            shares,
            &count,
            Some(prior),
        );
        // Moments the provider extracted (or the GM wrote) in the memory note come first.
        if let Some(note) = note.as_ref().filter(|n| !n.moments.is_empty()) {
            let c = &self.mem.config;
            let (block, n) = crate::memory::story_block(
                &note.moments,
                message,
                shares.story,
                (c.moments_kept, c.moments_shown),
                &count,
            );
            if n > 0 {
                layers.story = block;
                layers.moments = n;
            }
        }
        if let Some(prev) = previously {
            let share = match split {
                Some(sp) => sp.rest * self.mem.config.percentages()[1] / 100,
                None => self.mem.config.previously_tokens,
            };
            layers.previously =
                crate::memory::clip_to(&format!("Previously:\n{prev}\n"), share, &count);
        }
        // Every `callbacks_every` messages, the NPCs and threads the story has left quiet.
        let every = self.mem.config.callbacks_every;
        if every > 0 && !history.is_empty() && history.len().is_multiple_of(every) {
            let names: Vec<String> = mem
                .dormant(self.mem.config.callbacks_quiet, 3)
                .iter()
                .filter_map(|t| self.tag_name(t))
                .collect();
            if !names.is_empty() {
                layers.callbacks = format!(
                    "Dormant threads you may bring back: {}.\n",
                    names.join("; ")
                );
            }
        }
        let budget = match split {
            Some(_) => history_budget.saturating_sub(count(&layers.block())),
            None => history_budget,
        };
        (layers, budget)
    }
}

/// The history a prompt is built over: the session's own log, or a front end's (`serve`),
/// which may be trimmed or reach back before the log.
#[derive(Clone, Copy)]
pub(super) enum Over<'h> {
    Log(&'h [Exchange]),
    FrontEnd(&'h [Exchange]),
}

impl<'h> Over<'h> {
    /// The exchanges.
    pub(super) fn history(self) -> &'h [Exchange] {
        match self {
            Over::Log(h) | Over::FrontEnd(h) => h,
        }
    }
}

/// Canon names (folded), and which names each word is in.
#[derive(Debug, Default)]
pub(super) struct KnownNames {
    exact: HashSet<String>,
    by_word: std::collections::HashMap<String, Vec<u32>>,
}

impl KnownNames {
    /// Whether a term is canon: a name, or words all in one canon name ("Doctor Fitch" and
    /// "Granny Tamsin" name canon people by part of their names).
    fn covers(&self, term: &str) -> bool {
        let k = norm_key(term);
        let k = k.strip_prefix("the ").unwrap_or(&k);
        if self.exact.contains(k) {
            return true;
        }
        let mut words = k.split(' ');
        let Some(first) = words.next().and_then(|w| self.by_word.get(w)) else {
            return false;
        };
        let mut common: Vec<u32> = first.clone();
        for w in words {
            let Some(ids) = self.by_word.get(w) else {
                return false;
            };
            common.retain(|i| ids.contains(i));
            if common.is_empty() {
                return false;
            }
        }
        !common.is_empty()
    }
}
