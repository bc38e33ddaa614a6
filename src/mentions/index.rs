//! The matcher's tables: patterns spread over [`SHARDS`] automata by a hash of their text,
//! who holds each short name and head noun, and the `[[link]]` keys. Built from the
//! prepared names, or patched after a reload for the few entities whose names changed
//! (deciding again only the texts they share), so a reload rebuilds only the shards whose
//! patterns changed.

use super::prepare::{counts, owner_of, prepare_all, Prepared};
use super::rules::{head_counts, head_text, needs_capital, prepare};
use super::{HashMap, Holders, How, Mention, Target, Text};
use crate::canon::Campaign;
use crate::names::{fold_name, fold_text, norm_key, slug};
use crate::vault::links::strip_md;
use aho_corasick::{AhoCorasick, MatchKind};
use rayon::prelude::*;
use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Pattern {
    /// Almost every text names one entity: kept inline (a heap vector of one target took
    /// 96 bytes, the room for four, for each of the ~23k patterns of a 10k-note vault).
    pub(super) targets: smallvec::SmallVec<[Target; 1]>,
    pub(super) needs_capital: bool,
    pub(super) how: How,
}

/// A text searched and what it names.
type Found = (String, Vec<Mention>);

/// The mention matcher for one canon.
///
/// The patterns (every name, alias, unique short name and head noun, folded) are spread
/// over [`SHARDS`] automata by a hash of their text. A rename changes a few patterns, so a
/// reload ([`Matcher::rebuilt`]) patches the pattern table for the entities whose names
/// changed and builds again only the shards whose patterns changed.
#[derive(Debug, Clone)]
pub struct Matcher {
    /// Shared between a matcher and the ones rebuilt from it: an unchanged shard is the
    /// same allocation, not a copy of its patterns.
    pub(super) shards: Vec<Arc<Shard>>,
    pub(super) links: Arc<Links>,
    /// Each entity's prepared names and head nouns, with a hash of what they are made from
    /// (the target and its names, aliases, items, role or kind): a rebuild prepares only
    /// the entities that changed, and a patch knows which ones did.
    pub(super) prepared: Arc<Prepared>,
    /// Who holds each short name and head noun, by the pattern text it would make, spread
    /// like the shards (`index[i]` for the texts of `shards[i]`): what a patch needs to
    /// decide whether a short name or head noun is unique once an entity changed.
    pub(super) index: Vec<Arc<Bucket>>,
    /// The last text searched and what it names: one message is looked up by the context,
    /// the memory's query and its recall reasons, and a scan is one pass per shard.
    pub(super) memo: Arc<std::sync::Mutex<Option<Found>>>,
    /// Set on a matcher built for one message ([`Matcher::for_message`]).
    pub(super) only: Option<Arc<Only>>,
}

/// A matcher built for one message: the message, its campaign, and the whole matcher,
/// built the first time any other text is searched.
#[derive(Debug)]
pub(super) struct Only {
    pub(super) message: String,
    pub(super) campaign: Arc<Campaign>,
    pub(super) whole: OnceLock<Matcher>,
}

/// Short names and head nouns keyed by the pattern text they would make.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Bucket {
    /// A folded short name -> the entities whose names have it (sorted, each once).
    pub(super) firsts: HashMap<Text, Holders>,
    /// `the <head>` folded -> each head noun folding to it and the entities holding that
    /// head noun (sorted by head, targets sorted, each once).
    pub(super) heads: HashMap<Text, Vec<(Text, Vec<Target>)>>,
}

/// A reload patches the matcher when at most this many entities' names or head nouns
/// changed (and no entity came or went); more, and it builds the matcher again.
const PATCH_MAX: usize = 64;

/// `[[link]]` keys (path, stem, slug) of every entity note, and a hash of the ids they came
/// from, in order (equal ids give equal keys, so a reload that moves no note reuses them;
/// hashing the new ids reads half the memory comparing them with the old ones would).
#[derive(Debug, Default)]
pub(super) struct Links {
    pub(super) ids: u64,
    pub(super) keys: HashMap<Text, Target>,
}

/// How many automata the patterns are spread over: more make a rename cheaper (fewer
/// patterns per rebuilt shard) and every message dearer (one scan per shard); 64 was the
/// best trade measured (docs/benchmarks.md, issue 11's matcher rows).
pub(super) const SHARDS: usize = 64;

/// One automaton over some of the patterns (`texts[i]` is `patterns[i]`'s folded text).
#[derive(Debug, Clone, Default)]
pub(super) struct Shard {
    pub(super) ac: Option<AhoCorasick>,
    pub(super) texts: Vec<Text>,
    pub(super) patterns: Vec<Pattern>,
}

impl Shard {
    fn build(texts: Vec<Text>, patterns: Vec<Pattern>) -> Shard {
        let ac = (!texts.is_empty())
            .then(|| {
                AhoCorasick::builder()
                    .match_kind(MatchKind::Standard)
                    .kind(Some(aho_corasick::AhoCorasickKind::ContiguousNFA))
                    .build(&texts)
                    .ok()
            })
            .flatten();
        Shard {
            ac,
            texts,
            patterns,
        }
    }
}

fn shard_of(text: &str) -> usize {
    use std::hash::{BuildHasher, BuildHasherDefault};
    let h = BuildHasherDefault::<rustc_hash::FxHasher>::default().hash_one(text);
    (h % SHARDS as u64) as usize
}

struct Builder<'a> {
    pub(super) by_text: HashMap<Text, Pattern>,
    /// For a matcher built for one message: the folded message. A text that does not occur
    /// in it is never found in it, so it makes no pattern.
    pub(super) within: Option<&'a str>,
}

impl Builder<'_> {
    fn add_how(&mut self, text: &str, target: Target, how: How) {
        if let Some((folded, needs_capital)) = prepare(text) {
            self.insert(folded, needs_capital, target, how);
        }
    }

    fn insert(&mut self, folded: Text, needs_capital: bool, target: Target, how: How) {
        if self.within.is_some_and(|m| !m.contains(folded.as_str())) {
            return;
        }
        let p = self.by_text.entry(folded).or_insert(Pattern {
            targets: smallvec::SmallVec::new(),
            needs_capital,
            how,
        });
        if !p.targets.contains(&target) {
            p.targets.push(target);
        }
    }
}

/// `[[link]]` keys of every entity note: `old`'s when no id changed.
fn links_for(c: &Campaign, old: Option<&Arc<Links>>) -> Arc<Links> {
    let ids = c
        .pcs
        .iter()
        .enumerate()
        .map(|(i, p)| (&p.id, Target::Pc(Target::at(i))))
        .chain(
            c.npcs
                .iter()
                .enumerate()
                .map(|(i, n)| (&n.id, Target::Npc(Target::at(i)))),
        )
        .chain(
            c.locations
                .iter()
                .enumerate()
                .map(|(i, l)| (&l.id, Target::Location(Target::at(i)))),
        )
        .chain(
            c.lore
                .iter()
                .enumerate()
                .map(|(i, l)| (&l.id, Target::Lore(Target::at(i)))),
        )
        .chain(
            c.sessions
                .iter()
                .enumerate()
                .map(|(i, s)| (&s.id, Target::Session(Target::at(i)))),
        )
        // Thread notes (threads from canon/open-threads.md have a `#Title` id, no note).
        .chain(
            c.threads
                .iter()
                .enumerate()
                .filter(|(_, t)| !t.id.contains('#'))
                .map(|(i, t)| (&t.id, Target::Thread(Target::at(i)))),
        );
    let hash = {
        use std::hash::{BuildHasher, Hash, Hasher};
        let mut h = std::hash::BuildHasherDefault::<rustc_hash::FxHasher>::default().build_hasher();
        for (id, t) in ids.clone() {
            id.hash(&mut h);
            t.hash(&mut h);
        }
        h.finish()
    };
    match old {
        Some(o) if o.ids == hash => o.clone(),
        _ => {
            let mut keys: HashMap<Text, Target> = HashMap::default();
            for (id, t) in ids {
                let p = strip_md(id);
                keys.insert(norm_key(p).into(), t);
                let stem = p.rsplit('/').next().unwrap_or(p);
                keys.entry(norm_key(stem).into()).or_insert(t);
                keys.entry(slug(stem).into()).or_insert(t);
            }
            Arc::new(Links { ids: hash, keys })
        }
    }
}

/// The pattern `text` makes in `now`, when the entities at `changed` (sorted slots) are the
/// only ones whose names changed since the pattern was `was`, and `bucket` (the text's)
/// already holds the new short names and head nouns. The same rules as a build:
/// names, aliases and items first (every entity adding the text, in campaign order, the
/// first deciding how it matches), then a short name exactly one entity has, then the
/// first head noun (by spelling) exactly one entity holds.
fn pattern_at(
    text: &str,
    was: Option<&Pattern>,
    changed: &[usize],
    now: &Prepared,
    bucket: &Bucket,
) -> Option<Pattern> {
    // The entities adding the text: as before, less the changed ones, plus the changed
    // ones adding it now.
    let mut owners: Vec<usize> = Vec::new();
    if let Some(p) = was.filter(|p| matches!(p.how, How::Name | How::Alias | How::Item)) {
        owners.extend(p.targets.iter().map(|t| now.slot(owner_of(*t))));
    }
    owners.retain(|s| changed.binary_search(s).is_err());
    owners.extend(
        changed
            .iter()
            .copied()
            .filter(|&s| now.adds[s].1.adds.iter().any(|a| a.0 == text)),
    );
    owners.sort_unstable();
    owners.dedup();
    let mut pattern: Option<Pattern> = None;
    for s in owners {
        for (folded, needs_capital, t, how) in &now.adds[s].1.adds {
            if folded != text {
                continue;
            }
            match &mut pattern {
                None => {
                    pattern = Some(Pattern {
                        targets: smallvec::smallvec![*t],
                        needs_capital: *needs_capital,
                        how: *how,
                    });
                }
                Some(p) => {
                    if !p.targets.contains(t) {
                        p.targets.push(*t);
                    }
                }
            }
        }
    }
    if pattern.is_some() {
        return pattern;
    }
    if let Some(&[t]) = bucket.firsts.get(text).map(|h| h.as_slice()) {
        if let Some(cap) = needs_capital(text) {
            return Some(Pattern {
                targets: smallvec::smallvec![t],
                needs_capital: cap,
                how: How::ShortName,
            });
        }
    }
    let (_, holders) = bucket
        .heads
        .get(text)?
        .iter()
        .find(|(h, ts)| head_counts(h, ts.len()))?;
    Some(Pattern {
        targets: smallvec::smallvec![holders[0]],
        needs_capital: needs_capital(text)?,
        how: How::HeadNoun,
    })
}

impl Matcher {
    /// Builds the matcher for a campaign.
    pub fn new(c: &Campaign) -> Matcher {
        Matcher::build(c, None, None)
    }

    /// A matcher for one message, as a one-shot `context -m` needs: only the
    /// texts that occur in the folded message become patterns, so the automata are built
    /// over a handful of names instead of every name of the vault. A text is found by the
    /// overlapping search only where it occurs, whatever else is searched with it, so the
    /// message's mentions are exactly [`Matcher::new`]'s. Any other text searched later
    /// (or a reload) gets the whole matcher, built then.
    pub fn for_message(c: &Arc<Campaign>, message: &str) -> Matcher {
        let (folded, _, _) = fold_text(message);
        let mut m = Matcher::build(c, None, Some(&folded));
        m.only = Some(Arc::new(Only {
            message: message.to_owned(),
            campaign: Arc::clone(c),
            whole: OnceLock::new(),
        }));
        m
    }

    /// The matcher for a changed campaign; always equal to [`Matcher::new`] on `c`.
    ///
    /// When no entity came or went and few changed their names, aliases, items, role or
    /// kind, `self`'s pattern table is patched: only the texts those entities' names make
    /// or made are decided again (with every other entity sharing them, so a short name
    /// becomes unique or ambiguous as it should), and only the shards whose patterns
    /// changed are built again (a rename rebuilds a few of [`SHARDS`]). Otherwise the
    /// matcher is built again, reusing every entity's prepared names and every automaton
    /// that did not change.
    pub fn rebuilt(&self, c: &Campaign) -> Matcher {
        if self.only.is_some() {
            // Built for one message: nothing to patch from.
            return Matcher::new(c);
        }
        self.patched(c)
            .unwrap_or_else(|| Matcher::build(c, Some(self), None))
    }

    /// Whether this matcher serves `c` unchanged: `c` has as many entities of each kind as
    /// the campaign it was built for, each in the same place with the same note id, name,
    /// aliases, items, role or kind (the keys its names were prepared from), so
    /// [`Matcher::new`] on `c` would build this matcher again. The one rule for when a
    /// matcher must be rebuilt ([`Matcher::rebuilt`]) for changed canon.
    pub fn serves(&self, c: &Campaign) -> bool {
        self.prepared.serves(c)
    }

    /// [`Matcher::serves`], when `c` differs from the campaign this matcher was built for
    /// at most in its PCs, its threads and the NPCs, places, lore and sessions of the notes
    /// at `notes` (as after a live reload of those notes): only their keys are compared, so
    /// a reload of one note does not hash every name of the vault.
    pub fn serves_after(&self, c: &Campaign, notes: &BTreeSet<String>) -> bool {
        self.prepared.serves_in(c, notes)
    }

    /// How many automata `self` shares with `other`.
    #[cfg(test)]
    fn shared_shards(&self, other: &Matcher) -> usize {
        self.shards
            .iter()
            .zip(&other.shards)
            .filter(|(a, b)| a.texts == b.texts && a.patterns == b.patterns)
            .count()
    }

    /// The matcher for `c`, reusing what `old` prepared; with `within` (a folded message),
    /// only the texts that occur in it become patterns.
    fn build(c: &Campaign, old: Option<&Matcher>, within: Option<&str>) -> Matcher {
        // Each entity's names are folded on both cores, then merged in campaign order (the
        // first to add a text decides how it matches, as a serial build would).
        let prepared = prepare_all(c, old.map(|o| &*o.prepared));
        let mut b = Builder {
            by_text: HashMap::default(),
            within,
        };
        for (_, a) in &prepared.adds {
            for (folded, needs_capital, t, how) in &a.adds {
                b.insert(folded.clone(), *needs_capital, *t, *how);
            }
        }
        let mut index: Vec<Bucket> = vec![Bucket::default(); SHARDS];
        // Given names, surnames and titles only when exactly one entity has them and they are
        // no entity's full name or alias.
        for (_, a) in &prepared.adds {
            for (key, _, t) in &a.firsts {
                let firsts = &mut index[shard_of(key)].firsts;
                match firsts.get_mut(key) {
                    Some(holders) => {
                        if holders.last() != Some(t) {
                            holders.push(*t);
                        }
                    }
                    None => {
                        firsts.insert(key.clone(), smallvec::smallvec![*t]);
                    }
                }
            }
        }
        let unique: Vec<(Text, bool, Target)> = prepared
            .adds
            .iter()
            .flat_map(|(_, a)| a.firsts.iter())
            .filter(|(key, _, _)| {
                index[shard_of(key)]
                    .firsts
                    .get(key)
                    .is_some_and(|h| h.len() == 1)
                    && !b.by_text.contains_key(key)
            })
            .filter_map(|(key, cap, t)| cap.map(|cap| (key.clone(), cap, *t)))
            .collect();
        for (key, cap, t) in unique {
            b.insert(key, cap, t, How::ShortName);
        }
        // `the chapel`, `the doctor`, `the foreman`: a place's or person's head noun, when
        // exactly one entity holds it.
        let mut heads: HashMap<&str, Vec<Target>> = HashMap::default();
        for (slot, (_, hs)) in prepared.heads.iter().enumerate() {
            let t = prepared.head_owner(slot);
            for h in hs.iter() {
                let holders = heads.entry(h.as_str()).or_default();
                if holders.last() != Some(&t) {
                    holders.push(t);
                }
            }
        }
        let mut unique: Vec<(&str, Target)> = heads
            .iter()
            .filter(|(h, ts)| head_counts(h, ts.len()))
            .map(|(h, ts)| (*h, ts[0]))
            .collect();
        unique.sort();
        for (h, t) in unique {
            let text = format!("the {h}");
            if !b.by_text.contains_key(fold_name(&text).as_str()) {
                b.add_how(&text, t, How::HeadNoun);
            }
        }
        for (h, ts) in heads {
            let text = head_text(h);
            index[shard_of(&text)]
                .heads
                .entry(text)
                .or_default()
                .push((Text::from(h), ts));
        }
        index.iter_mut().for_each(Bucket::settle);
        // Links: paths and stems of every entity note.
        let links = links_for(c, old.map(|o| &o.links));
        let shards = shards_of(b.by_text, old);
        Matcher {
            shards,
            links,
            prepared: Arc::new(prepared),
            index: index.into_iter().map(Arc::new).collect(),
            memo: Arc::default(),
            only: None,
        }
    }

    /// `self` patched for `c` (see [`Matcher::rebuilt`]); None when entities came or went
    /// or more than [`PATCH_MAX`] changed.
    fn patched(&self, c: &Campaign) -> Option<Matcher> {
        let old = &*self.prepared;
        if counts(c) != old.counts {
            return None;
        }
        let now = prepare_all(c, Some(old));
        let changed: Vec<usize> = (0..now.adds.len())
            .filter(|&i| now.adds[i].0 != old.adds[i].0)
            .collect();
        let changed_heads: Vec<usize> = (0..now.heads.len())
            .filter(|&i| now.heads[i].0 != old.heads[i].0)
            .collect();
        if changed.len() + changed_heads.len() > PATCH_MAX {
            return None;
        }
        // The texts whose pattern may change, and the short names and head nouns as they
        // are now (a bucket is copied only when one of its texts changes).
        let mut index = self.index.clone();
        let mut texts: Vec<Text> = Vec::new();
        for &slot in &changed {
            let (was, is) = (&old.adds[slot].1, &now.adds[slot].1);
            texts.extend(was.adds.iter().chain(&is.adds).map(|a| a.0.clone()));
            patch_firsts(&mut index, &was.firsts, &is.firsts, &mut texts);
        }
        for &slot in &changed_heads {
            let t = old.head_owner(slot);
            patch_heads(
                &mut index,
                t,
                &old.heads[slot].1,
                &now.heads[slot].1,
                &mut texts,
            );
        }
        texts.sort_unstable();
        texts.dedup();
        // Each text's pattern decided again; a shard is built again only when one changed.
        let mut edits: Vec<Vec<(Text, Option<Pattern>)>> = vec![Vec::new(); SHARDS];
        for text in texts {
            let s = shard_of(&text);
            let shard = &self.shards[s];
            let was = shard
                .texts
                .binary_search(&text)
                .ok()
                .map(|i| &shard.patterns[i]);
            let is = pattern_at(&text, was, &changed, &now, &index[s]);
            if is.as_ref() != was {
                edits[s].push((text, is));
            }
        }
        let shards = self
            .shards
            .par_iter()
            .zip(edits)
            .map(|(shard, edits)| {
                if edits.is_empty() {
                    return shard.clone();
                }
                let mut texts = shard.texts.clone();
                let mut patterns = shard.patterns.clone();
                for (text, p) in edits {
                    match (texts.binary_search(&text), p) {
                        (Ok(i), Some(p)) => patterns[i] = p,
                        (Ok(i), None) => {
                            texts.remove(i);
                            patterns.remove(i);
                        }
                        (Err(i), Some(p)) => {
                            texts.insert(i, text);
                            patterns.insert(i, p);
                        }
                        (Err(_), None) => {}
                    }
                }
                Arc::new(Shard::build(texts, patterns))
            })
            .collect();
        Some(Matcher {
            shards,
            links: links_for(c, Some(&self.links)),
            prepared: Arc::new(now),
            index,
            memo: Arc::default(),
            only: None,
        })
    }
}

/// The shards for the patterns `by_text`, each sorted by text; `old`'s automaton is kept for
/// a shard whose patterns are unchanged.
fn shards_of(by_text: HashMap<Text, Pattern>, old: Option<&Matcher>) -> Vec<Arc<Shard>> {
    let mut parts: Vec<Vec<(Text, Pattern)>> = vec![Vec::new(); SHARDS];
    for (text, pattern) in by_text {
        parts[shard_of(&text)].push((text, pattern));
    }
    parts
        .into_par_iter()
        .enumerate()
        .map(|(i, mut entries)| {
            entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            let (texts, patterns): (Vec<Text>, Vec<Pattern>) = entries.into_iter().unzip();
            match old.and_then(|o| o.shards.get(i)) {
                Some(s) if s.texts == texts && s.patterns == patterns => s.clone(),
                _ => Arc::new(Shard::build(texts, patterns)),
            }
        })
        .collect()
}

impl Bucket {
    /// Sorted, and without growth slack: kept for as long as the matcher is.
    fn settle(&mut self) {
        for list in self.heads.values_mut() {
            list.sort();
            for (_, holders) in list.iter_mut() {
                holders.shrink_to_fit();
            }
            list.shrink_to_fit();
        }
        self.firsts.shrink_to_fit();
        self.heads.shrink_to_fit();
    }
}

/// Moves one entity's short names in `index` from `was` to `is` (a bucket is copied only
/// when one of its texts changes), adding every text touched to `texts`.
fn patch_firsts(
    index: &mut [Arc<Bucket>],
    was: &[(Text, Option<bool>, Target)],
    is: &[(Text, Option<bool>, Target)],
    texts: &mut Vec<Text>,
) {
    for (key, _, t) in was {
        let bucket = Arc::make_mut(&mut index[shard_of(key)]);
        if let Some(holders) = bucket.firsts.get_mut(key) {
            holders.retain(|h| h != t);
            if holders.is_empty() {
                bucket.firsts.remove(key);
            }
        }
        texts.push(key.clone());
    }
    for (key, _, t) in is {
        let bucket = Arc::make_mut(&mut index[shard_of(key)]);
        let holders = bucket.firsts.entry(key.clone()).or_default();
        if let Err(at) = holders.binary_search(t) {
            holders.insert(at, *t);
        }
        texts.push(key.clone());
    }
}

/// Moves `t`'s head nouns in `index` from `was` to `is`, adding every text touched to
/// `texts`.
fn patch_heads(
    index: &mut [Arc<Bucket>],
    t: Target,
    was: &[String],
    is: &[String],
    texts: &mut Vec<Text>,
) {
    for h in was {
        let text = head_text(h);
        let bucket = Arc::make_mut(&mut index[shard_of(&text)]);
        if let Some(list) = bucket.heads.get_mut(&text) {
            if let Ok(at) = list.binary_search_by(|(x, _)| x.as_str().cmp(h)) {
                list[at].1.retain(|x| *x != t);
                if list[at].1.is_empty() {
                    list.remove(at);
                }
            }
            if list.is_empty() {
                bucket.heads.remove(&text);
            }
        }
        texts.push(text);
    }
    for h in is {
        let text = head_text(h);
        let bucket = Arc::make_mut(&mut index[shard_of(&text)]);
        let list = bucket.heads.entry(text.clone()).or_default();
        match list.binary_search_by(|(x, _)| x.as_str().cmp(h)) {
            Ok(at) => {
                if let Err(p) = list[at].1.binary_search(&t) {
                    list[at].1.insert(p, t);
                }
            }
            Err(at) => list.insert(at, (Text::from(h.as_str()), vec![t])),
        }
        texts.push(text);
    }
}

#[cfg(test)]
mod tests {
    use super::super::find::tests::{campaign, npc};
    use super::*;
    use crate::canon::{Npc, Source};

    /// A rename rebuilds only the shards whose patterns changed, and the rebuilt matcher
    /// finds exactly what a matcher built from nothing finds.
    #[test]
    fn a_rename_rebuilds_few_shards_and_matches_a_fresh_build() {
        let mut c = campaign();
        for i in 0..300 {
            c.npcs.push(npc(&format!("Docker Quill{i} Vantregal"), &[]));
        }
        let before = Matcher::new(&c);
        c.npcs[2].name = "Lord Halden Sauvin".into();
        c.npcs[2].aliases.push("the Tin Lord".into());
        let rebuilt = before.rebuilt(&c);
        let fresh = Matcher::new(&c);
        assert_eq!(rebuilt.shared_shards(&fresh), SHARDS);
        // Eight pattern texts changed here (the name, its parts, Merrin's now-unique
        // surname, the alias); the other shards are reused.
        let changed = SHARDS - rebuilt.shared_shards(&before);
        assert!((1..=8).contains(&changed), "{changed} shards rebuilt");
        // Only the renamed NPC's names were prepared again.
        let reused = rebuilt
            .prepared
            .adds
            .iter()
            .zip(&before.prepared.adds)
            .filter(|(a, b)| Arc::ptr_eq(&a.1, &b.1))
            .count();
        assert_eq!(reused, rebuilt.prepared.adds.len() - 1);
        for msg in [
            "Lord Halden Sauvin and the Tin Lord meet Docker Quill7 Vantregal",
            "Halden, Sauvin, Sauvage, Merrin and the copper lord",
            "Docker Quill299 Vantregal waves at Jory’s Grey cat",
        ] {
            assert_eq!(rebuilt.find(msg), fresh.find(msg), "{msg}");
        }
        assert_eq!(rebuilt.find("Lord Halden Sauvin")[0].target, Target::Npc(2));
    }

    /// Random renames, alias, item, role and kind edits, ids moved, entities added and
    /// removed: a matcher patched (or rebuilt) after each one is the matcher built from
    /// nothing, table for table, and finds the same mentions.
    mod patch {
        use super::*;
        use crate::canon::{Location, Lore, Pc, Priority, Session, Thread};
        use proptest::prelude::*;

        // Few words, so names share given names, surnames, titles and head nouns, and
        // collide with other entities' aliases; some common words, some Unicode.
        const WORDS: &[&str] = &[
            "Halden",
            "Sauvage",
            "Merrin",
            "Grey",
            "Flint",
            "Al",
            "Jory",
            "Ada",
            "Vey",
            "Marr",
            "Éowyn",
            "Zoe\u{308}",
            "Zoë",
            "Chapel",
            "Lamp",
            "Office",
            "Silent",
            "Circle",
            "Copper",
            "Tin",
            "Tavern",
            "x",
        ];
        const LEADS: &[&str] = &[
            "", "", "Lord ", "Captain ", "Doctor ", "Old ", "The ", "Sister ",
        ];
        const ROLES: &[&str] = &[
            "",
            "town doctor",
            "mine foreman",
            "clerk at the Assay Office",
            "chapel keeper",
            "people person",
            "Tavern keeper",
        ];
        const KINDS: &[&str] = &[
            "",
            "tavern",
            "chapel",
            "office",
            "Chapel of the Lamp",
            "area",
        ];

        fn name(seed: usize) -> String {
            let lead = LEADS[seed % LEADS.len()];
            let a = WORDS[(seed / 7) % WORDS.len()];
            match (seed / 151) % 3 {
                0 => format!("{lead}{a}"),
                1 => format!("{lead}{a} {}", WORDS[(seed / 11) % WORDS.len()]),
                _ => format!(
                    "{lead}{a} {} {}",
                    WORDS[(seed / 13) % WORDS.len()],
                    WORDS[(seed / 17) % WORDS.len()]
                ),
            }
        }

        fn aliases(seed: usize) -> Vec<String> {
            (0..seed % 3).map(|k| name(seed / 3 + k * 31)).collect()
        }

        fn opt(list: &[&str], seed: usize) -> Option<String> {
            Some(list[seed % list.len()].to_string()).filter(|s| !s.is_empty())
        }

        fn pc(i: usize, seed: usize) -> Pc {
            Pc {
                id: format!("canon/pcs/p{i}.md"),
                name: name(seed),
                aliases: aliases(seed / 5),
                class: None,
                level: None,
                player: None,
                sheet: false,
                status: "active".into(),
                active: true,
                inactive_reason: None,
                out_by_note: None,
                hp_current: None,
                hp_max: None,
                ac: None,
                location: None,
                location_text: None,
                gold: None,
                conditions: vec![],
                inventory: (0..seed % 3)
                    .map(|k| format!("the {}", WORDS[(seed / 3 + k) % WORDS.len()]))
                    .collect(),
                summary: None,
                source: Source::default(),
                modified: None,
            }
        }

        fn npc_at(i: usize, seed: usize) -> Npc {
            let mut n = npc(&name(seed), &[]);
            n.id = format!("canon/npcs/n{i}.md");
            n.aliases = aliases(seed / 5);
            n.role = opt(ROLES, seed / 3);
            n
        }

        fn location(i: usize, seed: usize) -> Location {
            Location {
                id: format!("canon/locations/l{i}.md"),
                name: name(seed),
                aliases: aliases(seed / 5),
                kind: opt(KINDS, seed / 3),
                parent: None,
                description: None,
                source: Source::default(),
            }
        }

        fn fixture(seed: usize) -> Campaign {
            Campaign {
                pcs: (0..3).map(|i| pc(i, seed + i * 977)).collect(),
                npcs: (0..24).map(|i| npc_at(i, seed + i * 1009)).collect(),
                locations: (0..10).map(|i| location(i, seed + i * 1013)).collect(),
                threads: (0..4)
                    .map(|i| Thread {
                        id: if i == 0 {
                            "canon/open-threads.md#Grey".into()
                        } else {
                            format!("canon/threads/t{i}.md")
                        },
                        title: name(seed + i * 1019),
                        aliases: aliases(seed / 7 + i),
                        priority: Priority::Medium,
                        summary: vec![],
                        next: None,
                        source: Source::default(),
                    })
                    .collect(),
                lore: (0..4)
                    .map(|i| Lore {
                        id: format!("canon/lore/r{i}.md"),
                        name: name(seed + i * 1021),
                        aliases: aliases(seed / 11 + i),
                        summary: None,
                        source: Source::default(),
                    })
                    .collect(),
                sessions: (0..2)
                    .map(|i| Session {
                        id: format!("sessions/s{i}.md"),
                        name: format!("Session {i}: {}", name(seed + i)),
                        number: None,
                        date: None,
                        summary: None,
                        ending: None,
                        pcs: vec![],
                        last_place: None,
                        prep: false,
                        source: Source::default(),
                    })
                    .collect(),
                ..Campaign::default()
            }
        }

        /// One edit, chosen and placed by `op`, `at` and `seed`.
        fn edit(c: &mut Campaign, op: usize, at: usize, seed: usize) {
            match op % 14 {
                0 | 1 => {
                    let i = at % c.npcs.len();
                    c.npcs[i].name = name(seed);
                }
                2 => {
                    let i = at % c.npcs.len();
                    c.npcs[i].aliases = aliases(seed);
                }
                3 => {
                    let i = at % c.npcs.len();
                    c.npcs[i].role = opt(ROLES, seed);
                }
                4 => {
                    let i = at % c.pcs.len();
                    c.pcs[i].name = name(seed);
                }
                5 => {
                    let i = at % c.pcs.len();
                    c.pcs[i] = Pc {
                        id: c.pcs[i].id.clone(),
                        ..pc(i, seed)
                    };
                }
                6 => {
                    let i = at % c.locations.len();
                    c.locations[i].name = name(seed);
                }
                7 => {
                    let i = at % c.locations.len();
                    c.locations[i].kind = opt(KINDS, seed);
                    c.locations[i].aliases = aliases(seed / 2);
                }
                8 => {
                    let i = at % c.threads.len();
                    c.threads[i].title = name(seed);
                }
                9 => {
                    let i = at % c.lore.len();
                    c.lore[i].aliases = aliases(seed);
                    c.sessions[i % 2].name = name(seed / 3);
                }
                10 if c.npcs.len() > 2 => {
                    c.npcs.remove(at % c.npcs.len());
                }
                11 => {
                    let i = at % (c.npcs.len() + 1);
                    c.npcs.insert(i, npc_at(900 + seed % 50, seed));
                }
                12 => {
                    let i = at % c.npcs.len();
                    c.npcs[i].id = format!("canon/npcs/{}.md", slug(&name(seed)));
                }
                _ => {
                    // Two at once: an alias taken from another entity.
                    let i = at % c.npcs.len();
                    let j = seed % c.locations.len();
                    c.npcs[i].aliases.push(c.locations[j].name.clone());
                    c.locations[j].aliases.push(c.npcs[i].name.clone());
                }
            }
        }

        fn assert_same(got: &Matcher, want: &Matcher, c: &Campaign) {
            for (i, (a, b)) in got.shards.iter().zip(&want.shards).enumerate() {
                assert_eq!(a.texts, b.texts, "shard {i}");
                assert_eq!(a.patterns, b.patterns, "shard {i}");
            }
            assert_eq!(got.shards.len(), want.shards.len());
            for (a, b) in got.index.iter().zip(&want.index) {
                assert_eq!(a, b);
            }
            assert_eq!(got.links.keys, want.links.keys);
            let names = c
                .pcs
                .iter()
                .map(|p| p.name.as_str())
                .chain(c.npcs.iter().map(|n| n.name.as_str()))
                .chain(c.locations.iter().map(|l| l.name.as_str()))
                .chain(
                    c.npcs
                        .iter()
                        .flat_map(|n| n.aliases.iter().map(String::as_str)),
                )
                .collect::<Vec<_>>();
            let mut messages: Vec<String> = names
                .chunks(3)
                .map(|ch| format!("I ask {} about [[n3]] and the chapel", ch.join(", then ")))
                .collect();
            messages.push(WORDS.join(" and the ").to_lowercase());
            messages.push(WORDS.join(", "));
            messages.push("the doctor, the foreman, the clerk, the tavern, the office".into());
            for m in &messages {
                assert_eq!(got.find(m), want.find(m), "{m}");
            }
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(64))]
            #[test]
            fn a_patched_matcher_is_a_fresh_one(
                seed in 0usize..100_000,
                edits in proptest::collection::vec((0usize..14, 0usize..64, 0usize..100_000), 1..12),
            ) {
                let mut c = fixture(seed);
                let mut m = Matcher::new(&c);
                assert_same(&m, &Matcher::new(&c), &c);
                for (op, at, s) in edits {
                    edit(&mut c, op, at, s);
                    let counts_same = counts(&c) == m.prepared.counts;
                    prop_assert_eq!(m.patched(&c).is_some(), counts_same);
                    m = m.rebuilt(&c);
                    assert_same(&m, &Matcher::new(&c), &c);
                }
            }
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(48))]
            /// A matcher built for one message finds in it exactly what the whole matcher
            /// finds, with far fewer patterns; any other text gets the whole matcher's answer.
            #[test]
            fn a_matcher_for_one_message_finds_what_the_whole_one_does(
                seed in 0usize..100_000,
                picks in proptest::collection::vec(0usize..64, 1..6),
                glue in proptest::sample::select(vec![", ", " and ", " asks ", "'s ", " -- the ", " "]),
            ) {
                let c = Arc::new(fixture(seed));
                let whole = Matcher::new(&c);
                let names: Vec<String> = c
                    .pcs
                    .iter()
                    .map(|p| p.name.clone())
                    .chain(c.npcs.iter().flat_map(|n| std::iter::once(n.name.clone()).chain(n.aliases.clone())))
                    .chain(c.locations.iter().map(|l| l.name.clone()))
                    .chain(c.pcs.iter().flat_map(|p| p.inventory.clone()))
                    .chain(WORDS.iter().map(|w| w.to_string()))
                    .collect();
                let words: Vec<&str> = picks.iter().map(|&i| names[i % names.len()].as_str()).collect();
                let message = format!("I ask {} about [[n3]] and the chapel", words.join(glue));
                let one = Matcher::for_message(&c, &message);
                let patterns = |m: &Matcher| m.shards.iter().map(|s| s.patterns.len()).sum::<usize>();
                prop_assert!(patterns(&one) < patterns(&whole));
                prop_assert_eq!(one.find(&message), whole.find(&message));
                // Another text: the whole matcher, built then.
                let other = names.join(" and ");
                prop_assert_eq!(one.find(&other), whole.find(&other));
                prop_assert_eq!(one.find(&message), whole.find(&message));
            }
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(48))]
            /// A matcher that says it serves a changed campaign is the one a build gives.
            #[test]
            fn a_matcher_serves_only_what_a_build_would_give(
                seed in 0usize..100_000,
                edits in proptest::collection::vec((0usize..14, 0usize..64, 0usize..100_000), 1..6),
            ) {
                let mut c = fixture(seed);
                let m = Matcher::new(&c);
                prop_assert!(m.serves(&c));
                for (op, at, s) in edits {
                    edit(&mut c, op, at, s);
                    if m.serves(&c) {
                        assert_same(&m, &Matcher::new(&c), &c);
                    }
                }
            }
        }

        /// A role, a kind or a note's id is part of what a matcher is built from; a PC's HP
        /// is not.
        #[test]
        fn what_a_matcher_serves() {
            let c = fixture(11);
            let m = Matcher::new(&c);
            let mut hp = c.clone();
            hp.pcs[0].hp_current = Some(3);
            hp.npcs[1].status = "dead".into();
            assert!(m.serves(&hp));
            let mut role = c.clone();
            role.npcs[1].role = Some("night ferryman".into());
            assert!(!m.serves(&role));
            let mut kind = c.clone();
            kind.locations[0].kind = Some("lighthouse".into());
            assert!(!m.serves(&kind));
            let mut id = c.clone();
            id.lore[0].id = "canon/lore/elsewhere.md".into();
            assert!(!m.serves(&id));
            let mut gone = c.clone();
            gone.sessions.pop();
            assert!(!m.serves(&gone));
        }

        /// A patch copies no automaton and no bucket it does not change.
        #[test]
        fn a_patch_shares_what_did_not_change() {
            let mut c = fixture(7);
            let before = Matcher::new(&c);
            c.npcs[3].name = "Quillon Brassmoor".into();
            let after = before.rebuilt(&c);
            let same = |a: &[Arc<Bucket>], b: &[Arc<Bucket>]| {
                a.iter().zip(b).filter(|(x, y)| Arc::ptr_eq(x, y)).count()
            };
            assert!(same(&after.index, &before.index) >= SHARDS - 8);
            let shared = after
                .shards
                .iter()
                .zip(&before.shards)
                .filter(|(x, y)| Arc::ptr_eq(x, y))
                .count();
            assert!(shared >= SHARDS - 12, "{shared}");
            assert!(Arc::ptr_eq(&after.links, &before.links));
            assert_eq!(after.find("Quillon Brassmoor")[0].target, Target::Npc(3));
        }
    }
}
