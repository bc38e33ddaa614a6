//! Each entity's names prepared for the index, and the key each is prepared from.
//!
//! A key is a hash of an entity's place in the campaign and the texts its patterns are
//! made from. A reload compares keys to prepare again only the entities that changed, to
//! patch only their patterns, and to tell whether the matcher serves a campaign at all.

use super::rules::{npc_heads, person_parts, place_heads, prepare, strip_article};
use super::{How, Target, Text};
use crate::canon::Campaign;
use crate::names::fold_name;
use rayon::prelude::*;
use std::collections::BTreeSet;
use std::sync::Arc;

/// The entity kinds whose names make patterns, in the order a build adds them (the order of
/// [`Target`] without items).
pub(super) const KINDS: usize = 6;

/// Each entity's prepared names (PCs, then NPCs, locations, threads, lore, sessions) and
/// head nouns (NPCs, then locations), each with the hash it was prepared from.
#[derive(Debug, Default)]
pub(super) struct Prepared {
    /// How many entities of each kind, in the order of `adds`.
    pub(super) counts: [usize; KINDS],
    pub(super) adds: Vec<(u64, Arc<Adds>)>,
    pub(super) heads: Vec<(u64, Arc<Vec<String>>)>,
}

impl Prepared {
    /// Where the entity owning `t` is in `adds` (an item belongs to its PC).
    pub(super) fn slot(&self, t: Target) -> usize {
        let (kind, i) = match t {
            Target::Pc(i) | Target::Item(i, _) => (0, i),
            Target::Npc(i) => (1, i),
            Target::Location(i) => (2, i),
            Target::Thread(i) => (3, i),
            Target::Lore(i) => (4, i),
            Target::Session(i) => (5, i),
        };
        self.counts[..kind].iter().sum::<usize>() + i as usize
    }

    /// The entity at `slot` in `heads`.
    pub(super) fn head_owner(&self, slot: usize) -> Target {
        if slot < self.counts[1] {
            Target::Npc(Target::at(slot))
        } else {
            Target::Location(Target::at(slot - self.counts[1]))
        }
    }
}

pub(super) fn counts(c: &Campaign) -> [usize; KINDS] {
    [
        c.pcs.len(),
        c.npcs.len(),
        c.locations.len(),
        c.threads.len(),
        c.lore.len(),
        c.sessions.len(),
    ]
}

/// The entity a pattern's target belongs to (an item's PC).
pub(super) fn owner_of(t: Target) -> Target {
    match t {
        Target::Item(i, _) => Target::Pc(i),
        t => t,
    }
}

/// A hash of a target and the texts its patterns are made from.
fn key_of(t: Target, parts: &[&str], lists: &[&[String]]) -> u64 {
    use std::hash::{BuildHasher, Hash, Hasher};
    let mut h = std::hash::BuildHasherDefault::<rustc_hash::FxHasher>::default().build_hasher();
    t.hash(&mut h);
    for p in parts {
        p.hash(&mut h);
    }
    for l in lists {
        l.hash(&mut h);
    }
    h.finish()
}

/// `f(index, item)` for every item, on both cores, in order.
fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(usize, &T) -> R + Sync + Send) -> Vec<R> {
    items.par_iter().enumerate().map(|(i, x)| f(i, x)).collect()
}

/// One entity's patterns, prepared apart from the others: (folded text, needs a capital,
/// target, how), and its short names (as written, folded) for the uniqueness count.
#[derive(Debug, Default)]
pub(super) struct Adds {
    pub(super) adds: Vec<(Text, bool, Target, How)>,
    /// Short names: folded, whether they need a capital (None: too short to be a name).
    pub(super) firsts: Vec<(Text, Option<bool>, Target)>,
}

impl Adds {
    /// Without growth slack: an entity has two or three names, and a vector grown by pushes
    /// keeps room for four (56 bytes each), for every entity, for as long as a chat runs.
    fn shrunk(mut self) -> Adds {
        self.adds.shrink_to_fit();
        self.firsts.shrink_to_fit();
        self
    }

    fn add(&mut self, text: &str, t: Target, how: How) {
        if let Some((folded, cap)) = prepare(text) {
            self.adds.push((folded, cap, t, how));
        }
    }

    /// A name, its aliases (each also without `The`), and for a person the name without
    /// honorifics and the short names to count.
    fn names(name: &str, aliases: &[String], t: Target, person: bool) -> Adds {
        let mut a = Adds::default();
        a.add(name, t, How::Name);
        if let Some(s) = strip_article(name) {
            a.add(s, t, How::Name);
        }
        for alias in aliases {
            a.add(alias, t, How::Alias);
            if let Some(s) = strip_article(alias) {
                a.add(s, t, How::Alias);
            }
        }
        if person {
            let parts = person_parts(name);
            if let Some(w) = parts.without {
                a.add(&w, t, How::Name);
            }
            // Short names become patterns later, only where exactly one entity has them.
            for short in [parts.first, parts.surname, parts.title]
                .into_iter()
                .flatten()
            {
                match prepare(&short) {
                    Some((folded, cap)) => a.firsts.push((folded, Some(cap), t)),
                    None => a.firsts.push((fold_name(&short).into(), None, t)),
                }
            }
        }
        a
    }
}

/// The key the names of the entity of `kind` at `i` are prepared from: its place, its
/// note's id (`[[links]]` resolve by it), its name and aliases, and a PC's items. Equal keys
/// give equal patterns and link keys.
fn names_key(c: &Campaign, kind: usize, i: usize) -> u64 {
    let t = Target::at(i);
    match kind {
        0 => {
            let p = &c.pcs[i];
            key_of(
                Target::Pc(t),
                &[&p.id, &p.name],
                &[&p.aliases, &p.inventory],
            )
        }
        1 => {
            let n = &c.npcs[i];
            key_of(Target::Npc(t), &[&n.id, &n.name], &[&n.aliases])
        }
        2 => {
            let l = &c.locations[i];
            key_of(Target::Location(t), &[&l.id, &l.name], &[&l.aliases])
        }
        3 => {
            let x = &c.threads[i];
            key_of(Target::Thread(t), &[&x.id, &x.title], &[&x.aliases])
        }
        4 => {
            let l = &c.lore[i];
            key_of(Target::Lore(t), &[&l.id, &l.name], &[&l.aliases])
        }
        _ => {
            let s = &c.sessions[i];
            key_of(Target::Session(t), &[&s.id, &s.name], &[])
        }
    }
}

/// The key the head nouns at `slot` of [`Prepared::heads`] are prepared from: the NPC's
/// name and role, or the place's name and kind.
fn heads_key(c: &Campaign, slot: usize) -> u64 {
    let npcs = c.npcs.len();
    let (t, name, other) = match c.npcs.get(slot) {
        Some(n) => (Target::Npc(Target::at(slot)), &n.name, &n.role),
        None => {
            let l = &c.locations[slot - npcs];
            (Target::Location(Target::at(slot - npcs)), &l.name, &l.kind)
        }
    };
    key_of(t, &[name, other.as_deref().unwrap_or("\u{0}")], &[])
}

impl Prepared {
    /// Whether `c` would prepare exactly these names: as many entities of each kind, and
    /// every entity's names and head nouns made from the same key. This is the one rule for
    /// whether a matcher must be rebuilt for a changed campaign.
    pub(super) fn serves(&self, c: &Campaign) -> bool {
        counts(c) == self.counts
            && (0..KINDS).all(|kind| self.same_names(c, kind, 0..self.counts[kind]))
            && (0..self.heads.len()).all(|slot| self.heads[slot].0 == heads_key(c, slot))
    }

    /// [`Prepared::serves`] for a `c` that may differ from the campaign these names were
    /// prepared for only in its PCs, its threads and the NPCs, places, lore and sessions of
    /// the notes at `notes`: only those entities' keys are compared.
    ///
    /// Each key holds the entity's place and note id, so an entity of `notes` found at
    /// another entity's old place differs; with the counts equal, the entities of the other
    /// notes keep their places and keys (vectors are sorted by note path).
    pub(super) fn serves_in(&self, c: &Campaign, notes: &BTreeSet<String>) -> bool {
        if counts(c) != self.counts {
            return false;
        }
        /// The places in `v` (sorted by note path) of the entities of `notes`.
        fn of<T>(v: &[T], notes: &BTreeSet<String>, id: impl Fn(&T) -> &str) -> Vec<usize> {
            let mut out = Vec::new();
            for p in notes {
                let from = v.partition_point(|e| id(e) < p.as_str());
                out.extend((from..v.len()).take_while(|&i| id(&v[i]) == p.as_str()));
            }
            out
        }
        let npcs = of(&c.npcs, notes, |e| &e.id);
        let places = of(&c.locations, notes, |e| &e.id);
        self.same_names(c, 0, 0..self.counts[0])
            && self.same_names(c, 3, 0..self.counts[3])
            && self.same_names(c, 1, npcs.iter().copied())
            && self.same_names(c, 2, places.iter().copied())
            && self.same_names(c, 4, of(&c.lore, notes, |e| &e.id))
            && self.same_names(c, 5, of(&c.sessions, notes, |e| &e.id))
            && (npcs.iter().copied())
                .chain(places.iter().map(|i| c.npcs.len() + i))
                .all(|slot| self.heads[slot].0 == heads_key(c, slot))
    }

    /// Whether the entities of `kind` at `at` have the keys their names were prepared from.
    fn same_names(&self, c: &Campaign, kind: usize, at: impl IntoIterator<Item = usize>) -> bool {
        let first = self.counts[..kind].iter().sum::<usize>();
        at.into_iter()
            .all(|i| self.adds[first + i].0 == names_key(c, kind, i))
    }
}

/// Each entity's names and head nouns, prepared on both cores, reusing `old`'s for every
/// entity whose names (and role or kind) did not change.
pub(super) fn prepare_all(c: &Campaign, old: Option<&Prepared>) -> Prepared {
    let counts = counts(c);
    // The prepared names of the entity of `kind` at `i` in `old`, when made from `key`.
    let old_adds = |kind: usize, i: usize, key: u64| -> Option<Arc<Adds>> {
        let o = old.filter(|o| i < o.counts[kind])?;
        let (k, a) = &o.adds[o.counts[..kind].iter().sum::<usize>() + i];
        (*k == key).then(|| a.clone())
    };
    let cached = |kind: usize, i: usize, key: u64, make: &dyn Fn() -> Adds| {
        let a = old_adds(kind, i, key).unwrap_or_else(|| Arc::new(make().shrunk()));
        (key, a)
    };
    let pcs: Vec<(u64, Arc<Adds>)> = par_map(&c.pcs, |i, p| {
        let key = names_key(c, 0, i);
        cached(0, i, key, &|| {
            let mut a = Adds::names(&p.name, &p.aliases, Target::Pc(Target::at(i)), true);
            // A target holds an item's place in 16 bits: items past that are not matched.
            for (j, item) in p
                .inventory
                .iter()
                .enumerate()
                .take(usize::from(u16::MAX) + 1)
            {
                let t = Target::Item(Target::at(i), u16::try_from(j).expect("taken up to 2^16"));
                let item = item.trim();
                a.add(item, t, How::Item);
                if let Some(s) = strip_article(item) {
                    a.add(s, t, How::Item);
                }
            }
            a
        })
    });
    let named = |kind: usize, i: usize, t: Target, name: &str, aliases: &[String], person| {
        let key = names_key(c, kind, i);
        cached(kind, i, key, &|| Adds::names(name, aliases, t, person))
    };
    let npcs: Vec<(u64, Arc<Adds>)> = par_map(&c.npcs, |i, n| {
        named(1, i, Target::Npc(Target::at(i)), &n.name, &n.aliases, true)
    });
    let locations: Vec<(u64, Arc<Adds>)> = par_map(&c.locations, |i, l| {
        named(
            2,
            i,
            Target::Location(Target::at(i)),
            &l.name,
            &l.aliases,
            false,
        )
    });
    let threads: Vec<(u64, Arc<Adds>)> = par_map(&c.threads, |i, t| {
        named(
            3,
            i,
            Target::Thread(Target::at(i)),
            &t.title,
            &t.aliases,
            false,
        )
    });
    let lore: Vec<(u64, Arc<Adds>)> = par_map(&c.lore, |i, l| {
        named(
            4,
            i,
            Target::Lore(Target::at(i)),
            &l.name,
            &l.aliases,
            false,
        )
    });
    let sessions: Vec<(u64, Arc<Adds>)> = par_map(&c.sessions, |i, s| {
        let key = names_key(c, 5, i);
        cached(5, i, key, &|| {
            // The whole title only: a word of "Session 4: Floon's Rescue" is no mention.
            let mut a = Adds::default();
            a.add(&s.name, Target::Session(Target::at(i)), How::Name);
            a
        })
    });
    let (npc_heads, place_heads) = prepare_heads(c, old);
    Prepared {
        counts,
        adds: pcs
            .into_iter()
            .chain(npcs)
            .chain(locations)
            .chain(threads)
            .chain(lore)
            .chain(sessions)
            .collect(),
        heads: npc_heads.into_iter().chain(place_heads).collect(),
    }
}

/// Head nouns, each entity's with the key they were prepared from.
type Heads = Vec<(u64, Arc<Vec<String>>)>;

/// Each NPC's and place's head nouns (`the chapel`, `the doctor`, `the foreman`), prepared
/// on both cores, reusing `old`'s for every entity whose name, role or kind did not change.
fn prepare_heads(c: &Campaign, old: Option<&Prepared>) -> (Heads, Heads) {
    // `slot` is the entity's place in `old`'s heads, `at` its place in the new ones.
    let heads_of = |slot: Option<usize>, at: usize, make: &dyn Fn() -> Vec<String>| {
        let key = heads_key(c, at);
        let h = slot
            .and_then(|s| old.and_then(|o| o.heads.get(s)))
            .filter(|(k, _)| *k == key)
            .map_or_else(
                || {
                    let mut h = make();
                    h.shrink_to_fit();
                    Arc::new(h)
                },
                |(_, h)| h.clone(),
            );
        (key, h)
    };
    let npc_heads: Vec<(u64, Arc<Vec<String>>)> = par_map(&c.npcs, |i, n| {
        let role = n.role.as_deref();
        let slot = old.filter(|o| i < o.counts[1]).map(|_| i);
        heads_of(slot, i, &|| npc_heads(&n.name, role))
    });
    let place_heads: Vec<(u64, Arc<Vec<String>>)> = par_map(&c.locations, |i, l| {
        let kind = l.kind.as_deref();
        let slot = old.filter(|o| i < o.counts[2]).map(|o| o.counts[1] + i);
        heads_of(slot, c.npcs.len() + i, &|| place_heads(&l.name, kind))
    });
    (npc_heads, place_heads)
}
