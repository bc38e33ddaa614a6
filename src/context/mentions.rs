//! Mentions: find every canon entity a player message names.
//!
//! One [`Matcher`] is built per canon load: an aho-corasick automaton over every name,
//! alias, article-less name, unambiguous first name, thread title and carried item, all
//! case-folded. A match counts only on whole words ("Al" never fires inside "Always"),
//! the longest match wins ("Silent Circle Salon" over "Silent Circle"), and a name that is
//! also a common English word fires only when capitalised ("Grey" the ferryman, not grey fog).

use crate::canon::Campaign;
use crate::names::{fold_name, fold_text, norm_key, slug};
use crate::vault::links::{find_wikilinks, strip_md};
use aho_corasick::{AhoCorasick, MatchKind};
use rayon::prelude::*;
use std::sync::OnceLock;

// FxHash: keys are the campaign's own names; a rename rebuilds these maps while the GM waits.
type HashMap<K, V> = rustc_hash::FxHashMap<K, V>;
type HashSet<K> = rustc_hash::FxHashSet<K>;

/// What a mention points at (indices into the campaign's vectors).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    /// A player character.
    Pc(usize),
    /// An NPC.
    Npc(usize),
    /// A location.
    Location(usize),
    /// A thread.
    Thread(usize),
    /// An item carried by a PC: (pc, item index).
    Item(usize, usize),
    /// A lore note.
    Lore(usize),
    /// A session note (matched only by its whole title or a link).
    Session(usize),
}

/// How a mention's words name its entity (for `--explain`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// The entity's name (or its name without `The`).
    Name,
    /// One of its aliases.
    Alias,
    /// A person's given name, surname or title, which no other entity shares.
    ShortName,
    /// `the` and a word only its name, title, role or kind holds (`the chapel`).
    HeadNoun,
    /// An item a PC carries.
    Item,
    /// A `[[wikilink]]`.
    Link,
}

impl How {
    /// A few words for `--explain`.
    pub fn as_str(self) -> &'static str {
        match self {
            How::Name => "name",
            How::Alias => "alias",
            How::ShortName => "a given name, surname or title no one else has",
            How::HeadNoun => "a word only its name, title, role or kind holds",
            How::Item => "carried item",
            How::Link => "link",
        }
    }
}

/// One thing the message names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mention {
    /// What it names.
    pub target: Target,
    /// The words as the player wrote them.
    pub text: String,
    /// True when the same words name more than one entity.
    pub ambiguous: bool,
    /// How the words name it.
    pub how: How,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Pattern {
    targets: Vec<Target>,
    needs_capital: bool,
    how: How,
}

/// A text searched and what it names.
type Found = (String, Vec<Mention>);

/// The mention matcher for one canon.
///
/// The patterns (every name, alias, unique short name and head noun, folded) are spread
/// over [`SHARDS`] automata by a hash of their text. A rename changes a few patterns, so a
/// reload ([`Matcher::rebuilt`]) builds again only the shards whose patterns changed.
#[derive(Debug, Clone)]
pub struct Matcher {
    /// Shared between a matcher and the ones rebuilt from it: an unchanged shard is the
    /// same allocation, not a copy of its patterns.
    shards: Vec<std::sync::Arc<Shard>>,
    links: std::sync::Arc<Links>,
    /// Each entity's prepared names and head nouns, by a hash of what they are made from
    /// (the target and its names, aliases, items, role or kind): a rebuild prepares only
    /// the entities that changed.
    prepared: std::sync::Arc<Prepared>,
    /// The last text searched and what it names: one message is looked up by the context,
    /// the memory's query and its recall reasons, and a scan is one pass per shard.
    memo: std::sync::Arc<std::sync::Mutex<Option<Found>>>,
}

#[derive(Debug, Default)]
struct Prepared {
    adds: HashMap<u64, std::sync::Arc<Adds>>,
    heads: HashMap<u64, std::sync::Arc<Vec<String>>>,
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

/// `[[link]]` keys (path, stem, slug) of every entity note, and the ids they came from
/// (equal ids give equal keys, so a reload that renames nothing reuses them).
#[derive(Debug, Default)]
struct Links {
    ids: Vec<(String, Target)>,
    keys: HashMap<String, Target>,
}

/// How many automata the patterns are spread over: more make a rename cheaper (fewer
/// patterns per rebuilt shard) and every message dearer (one scan per shard). At 64, a
/// rename on the 10k vault reloads in ~26 ms and a light context with mentions builds in
/// ~0.65 ms (16: 31 ms / 0.46 ms; 256: 23 ms / 1.04 ms).
pub const SHARDS: usize = 64;

/// One automaton over some of the patterns (`texts[i]` is `patterns[i]`'s folded text).
#[derive(Debug, Clone, Default)]
struct Shard {
    ac: Option<AhoCorasick>,
    texts: Vec<String>,
    patterns: Vec<Pattern>,
}

impl Shard {
    fn build(texts: Vec<String>, patterns: Vec<Pattern>) -> Shard {
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

/// `f(index, item)` for every item, on both cores, in order.
fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(usize, &T) -> R + Sync + Send) -> Vec<R> {
    items.par_iter().enumerate().map(|(i, x)| f(i, x)).collect()
}

fn shard_of(text: &str) -> usize {
    use std::hash::{BuildHasher, BuildHasherDefault};
    let h = BuildHasherDefault::<rustc_hash::FxHasher>::default().hash_one(text);
    (h % SHARDS as u64) as usize
}

fn common_words() -> &'static HashSet<&'static str> {
    static WORDS: OnceLock<HashSet<&'static str>> = OnceLock::new();
    WORDS.get_or_init(|| {
        include_str!("common-words.txt")
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .collect()
    })
}

/// Words that stand before a person's given name and are not part of it.
const HONORIFICS: &[&str] = &[
    "the",
    "a",
    "an",
    "lord",
    "lady",
    "sir",
    "dame",
    "captain",
    "capt",
    "sister",
    "brother",
    "mother",
    "father",
    "abbess",
    "abbot",
    "old",
    "young",
    "bosun",
    "king",
    "queen",
    "prince",
    "princess",
    "duke",
    "duchess",
    "count",
    "countess",
    "baron",
    "baroness",
    "master",
    "mistress",
    "doctor",
    "dr",
    "professor",
    "prof",
    "general",
    "sergeant",
    "sgt",
    "lieutenant",
    "lt",
    "commander",
    "mr",
    "mrs",
    "ms",
    "miss",
    "saint",
    "st",
    "elder",
    "uncle",
    "aunt",
    "granny",
    "grandma",
    "grandpa",
    "madam",
    "madame",
    "deputy",
    "sheriff",
    "marshal",
    "foreman",
    "reverend",
    "rev",
    "father",
    "friar",
    "high",
    "little",
    "big",
    "mayor",
    "magistrate",
    "judge",
    "chief",
    "admiral",
    "commodore",
    "bishop",
    "archbishop",
    "cardinal",
    "pastor",
    "parson",
    "nurse",
];

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

struct Builder {
    by_text: HashMap<String, Pattern>,
}

/// Head nouns too vague to stand for one entity even when only one holds them.
const VAGUE_NOUNS: &[&str] = &[
    "people", "person", "thing", "place", "time", "night", "there", "where", "other", "group",
    "party", "member", "members", "npcs", "npc", "player", "players", "unknown", "area",
];

/// A text folded for matching, and whether it needs a capital; None when it is too short
/// to be a name.
fn prepare(text: &str) -> Option<(String, bool)> {
    let folded = fold_name(text);
    if folded
        .chars()
        .filter(|c| c.is_alphanumeric())
        .take(2)
        .count()
        < 2
    {
        return None;
    }
    let single = !folded.contains(' ');
    let needs_capital = single && common_words().contains(folded.as_str());
    Some((folded, needs_capital))
}

impl Builder {
    fn add_how(&mut self, text: &str, target: Target, how: How) {
        if let Some((folded, needs_capital)) = prepare(text) {
            self.insert(folded, needs_capital, target, how);
        }
    }

    fn insert(&mut self, folded: String, needs_capital: bool, target: Target, how: How) {
        let p = self.by_text.entry(folded).or_insert(Pattern {
            targets: vec![],
            needs_capital,
            how,
        });
        if !p.targets.contains(&target) {
            p.targets.push(target);
        }
    }
}

/// One entity's patterns, prepared apart from the others: (folded text, needs a capital,
/// target, how), and its short names (as written, folded) for the uniqueness count.
#[derive(Debug, Default)]
struct Adds {
    adds: Vec<(String, bool, Target, How)>,
    /// Short names: folded, whether they need a capital (None: too short to be a name).
    firsts: Vec<(String, Option<bool>, Target)>,
}

impl Adds {
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
                    None => a.firsts.push((fold_name(&short), None, t)),
                }
            }
        }
        a
    }
}

fn strip_article(name: &str) -> Option<&str> {
    let lower = name.to_lowercase();
    for a in ["the ", "a ", "an "] {
        if lower.starts_with(a) && name.len() > a.len() {
            return Some(name[a.len()..].trim());
        }
    }
    None
}

/// The given name of a multi-word person's name, after any honorifics
/// (`Lord Halden Sauvage` -> `Halden`), and the name without honorifics (`Halden Sauvage`).
/// Parts of a multi-word person's name a player may use alone: the given name after any
/// honorifics (`Lord Halden Sauvage` -> `Halden`), the surname (`Sauvage`), the title
/// (`Lord`), and the name without honorifics (`Halden Sauvage`).
#[derive(Debug, Default, PartialEq, Eq)]
struct PersonParts {
    first: Option<String>,
    surname: Option<String>,
    title: Option<String>,
    without: Option<String>,
}

/// Honorific-like words that are descriptions, not titles a player would use alone.
const NOT_TITLES: &[&str] = &["the", "a", "an", "old", "young", "little", "big", "high"];

fn person_parts(name: &str) -> PersonParts {
    let words: Vec<&str> = name.split_whitespace().collect();
    if words.len() < 2 {
        return PersonParts::default();
    }
    let skip = words
        .iter()
        .take_while(|w| HONORIFICS.contains(&w.to_lowercase().trim_end_matches('.')))
        .count();
    if skip >= words.len() {
        return PersonParts::default();
    }
    let rest = &words[skip..];
    let clean = |w: &str| w.trim_end_matches([',', '.']).to_string();
    let title = words[..skip]
        .iter()
        .rev()
        .find(|w| !NOT_TITLES.contains(&w.to_lowercase().trim_end_matches('.')))
        .map(|w| clean(w));
    PersonParts {
        first: Some(clean(rest[0])),
        surname: (rest.len() > 1).then(|| clean(rest[rest.len() - 1])),
        title,
        without: (skip > 0 && rest.len() > 1).then(|| rest.join(" ")),
    }
}

fn last_word(s: &str) -> Option<String> {
    s.split_whitespace()
        .last()
        .map(|w| fold_name(w.trim_matches(|c: char| !c.is_alphanumeric())))
        .filter(|w| !w.is_empty())
}

/// The word of a phrase that names what it is: the last word before a preposition
/// (`Chapel of the Lamp` -> `chapel`, `junior clerk at the Assay Office` -> `clerk`), else
/// its last word (`The Assay Office` -> `office`, `town doctor` -> `doctor`).
fn head_of(phrase: &str) -> Option<String> {
    let words: Vec<&str> = phrase.split_whitespace().collect();
    let end = words
        .iter()
        .skip(1)
        .position(|w| {
            matches!(
                w.to_lowercase().as_str(),
                "of" | "at" | "in" | "for" | "from" | "on" | "to" | "with" | "by" | "under"
            )
        })
        .map_or(words.len(), |p| p + 1);
    last_word(&words[..end].join(" "))
}

/// A place's head nouns: its name's, and its kind's (`type: tavern`).
fn place_heads(name: &str, kind: Option<&str>) -> Vec<String> {
    let name = strip_article(name).unwrap_or(name);
    let mut v: Vec<String> = Vec::new();
    if name.split_whitespace().count() > 1 {
        v.extend(head_of(name));
    }
    v.extend(kind.and_then(head_of));
    v.dedup();
    v
}

/// A person's head nouns: the titles before the name (`Doctor Amos Fitch` -> `doctor`) and
/// the role's head (`town doctor`, `mine foreman`).
fn npc_heads(name: &str, role: Option<&str>) -> Vec<String> {
    let mut v: Vec<String> = name
        .split_whitespace()
        .take_while(|w| HONORIFICS.contains(&w.to_lowercase().trim_end_matches('.')))
        .map(|w| fold_name(w.trim_end_matches('.')))
        .filter(|w| !NOT_TITLES.contains(&w.as_str()))
        .collect();
    v.extend(role.and_then(head_of));
    v.sort();
    v.dedup();
    v
}

impl Matcher {
    /// Builds the matcher for a campaign.
    pub fn new(c: &Campaign) -> Matcher {
        Matcher::build(c, None)
    }

    /// The matcher for a changed campaign, reusing every automaton of `self` whose
    /// patterns did not change (a rename rebuilds one or two of [`SHARDS`]).
    pub fn rebuilt(&self, c: &Campaign) -> Matcher {
        Matcher::build(c, Some(self))
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

    fn build(c: &Campaign, old: Option<&Matcher>) -> Matcher {
        // Each entity's names are folded on both cores, then merged in campaign order (the
        // first to add a text decides how it matches, as a serial build would).
        let old_prepared = old.map(|o| &o.prepared);
        let cached = |key: u64, make: &dyn Fn() -> Adds| -> (u64, std::sync::Arc<Adds>) {
            match old_prepared.and_then(|p| p.adds.get(&key)) {
                Some(a) => (key, a.clone()),
                None => (key, std::sync::Arc::new(make())),
            }
        };
        let pcs: Vec<(u64, std::sync::Arc<Adds>)> = par_map(&c.pcs, |i, p| {
            let key = key_of(Target::Pc(i), &[&p.name], &[&p.aliases, &p.inventory]);
            cached(key, &|| {
                let mut a = Adds::names(&p.name, &p.aliases, Target::Pc(i), true);
                for (j, item) in p.inventory.iter().enumerate() {
                    let item = item.trim();
                    a.add(item, Target::Item(i, j), How::Item);
                    if let Some(s) = strip_article(item) {
                        a.add(s, Target::Item(i, j), How::Item);
                    }
                }
                a
            })
        });
        let named = |t: Target, name: &str, aliases: &[String], person: bool| {
            let key = key_of(t, &[name], &[aliases]);
            cached(key, &|| Adds::names(name, aliases, t, person))
        };
        let npcs: Vec<(u64, std::sync::Arc<Adds>)> = par_map(&c.npcs, |i, n| {
            named(Target::Npc(i), &n.name, &n.aliases, true)
        });
        let locations: Vec<(u64, std::sync::Arc<Adds>)> = par_map(&c.locations, |i, l| {
            named(Target::Location(i), &l.name, &l.aliases, false)
        });
        let threads: Vec<(u64, std::sync::Arc<Adds>)> = par_map(&c.threads, |i, t| {
            named(Target::Thread(i), &t.title, &t.aliases, false)
        });
        let lore: Vec<(u64, std::sync::Arc<Adds>)> = par_map(&c.lore, |i, l| {
            named(Target::Lore(i), &l.name, &l.aliases, false)
        });
        let sessions: Vec<(u64, std::sync::Arc<Adds>)> = par_map(&c.sessions, |i, s| {
            let key = key_of(Target::Session(i), &[&s.name], &[]);
            cached(key, &|| {
                // The whole title only: a word of "Session 4: Floon's Rescue" is no
                // mention.
                let mut a = Adds::default();
                a.add(&s.name, Target::Session(i), How::Name);
                a
            })
        });
        let mut prepared = Prepared::default();
        let mut b = Builder {
            by_text: HashMap::default(),
        };
        let ordered: Vec<(u64, std::sync::Arc<Adds>)> = pcs
            .into_iter()
            .chain(npcs)
            .chain(locations)
            .chain(threads)
            .chain(lore)
            .chain(sessions)
            .collect();
        for (_, a) in &ordered {
            for (folded, needs_capital, t, how) in &a.adds {
                b.insert(folded.clone(), *needs_capital, *t, *how);
            }
        }
        // Given names, surnames and titles only when exactly one entity has them and they are
        // no entity's full name or alias.
        // key -> the one target holding it, or None when several do.
        let mut count: HashMap<&str, Option<Target>> = HashMap::default();
        for (_, a) in &ordered {
            for (key, _, t) in &a.firsts {
                count
                    .entry(key)
                    .and_modify(|one| {
                        if *one != Some(*t) {
                            *one = None;
                        }
                    })
                    .or_insert(Some(*t));
            }
        }
        let unique: Vec<(String, bool, Target)> = ordered
            .iter()
            .flat_map(|(_, a)| a.firsts.iter())
            .filter(|(key, _, _)| {
                count.get(key.as_str()).is_some_and(Option::is_some) && !b.by_text.contains_key(key)
            })
            .filter_map(|(key, cap, t)| cap.map(|cap| (key.clone(), cap, *t)))
            .collect();
        drop(count);
        for (key, cap, t) in unique {
            b.insert(key, cap, t, How::ShortName);
        }
        for (key, a) in ordered {
            prepared.adds.insert(key, a);
        }
        // `the chapel`, `the doctor`, `the foreman`: a place's or person's head noun, when
        // exactly one entity holds it.
        let heads_of =
            |t: Target, name: &str, other: Option<&str>, make: &dyn Fn() -> Vec<String>| {
                let key = key_of(t, &[name, other.unwrap_or("\u{0}")], &[]);
                let h = match old_prepared.and_then(|p| p.heads.get(&key)) {
                    Some(h) => h.clone(),
                    None => std::sync::Arc::new(make()),
                };
                (key, t, h)
            };
        let npc_heads: Vec<(u64, Target, std::sync::Arc<Vec<String>>)> =
            par_map(&c.npcs, |i, n| {
                let role = n.role.as_deref();
                heads_of(Target::Npc(i), &n.name, role, &|| npc_heads(&n.name, role))
            });
        let place_heads: Vec<(u64, Target, std::sync::Arc<Vec<String>>)> =
            par_map(&c.locations, |i, l| {
                let kind = l.kind.as_deref();
                heads_of(Target::Location(i), &l.name, kind, &|| {
                    place_heads(&l.name, kind)
                })
            });
        let mut heads: HashMap<String, HashSet<Target>> = HashMap::default();
        for (key, t, hs) in npc_heads.into_iter().chain(place_heads) {
            for h in hs.iter() {
                heads.entry(h.clone()).or_default().insert(t);
            }
            prepared.heads.insert(key, hs);
        }
        let mut heads: Vec<(String, Target)> = heads
            .into_iter()
            .filter(|(h, ts)| {
                ts.len() == 1 && h.chars().count() >= 4 && !VAGUE_NOUNS.contains(&h.as_str())
            })
            .filter_map(|(h, ts)| ts.into_iter().next().map(|t| (h, t)))
            .collect();
        heads.sort();
        for (h, t) in heads {
            let text = format!("the {h}");
            if !b.by_text.contains_key(&fold_name(&text)) {
                b.add_how(&text, t, How::HeadNoun);
            }
        }
        // Links: paths and stems of every entity note.
        let ids = c
            .pcs
            .iter()
            .enumerate()
            .map(|(i, p)| (&p.id, Target::Pc(i)))
            .chain(
                c.npcs
                    .iter()
                    .enumerate()
                    .map(|(i, n)| (&n.id, Target::Npc(i))),
            )
            .chain(
                c.locations
                    .iter()
                    .enumerate()
                    .map(|(i, l)| (&l.id, Target::Location(i))),
            )
            .chain(
                c.lore
                    .iter()
                    .enumerate()
                    .map(|(i, l)| (&l.id, Target::Lore(i))),
            )
            .chain(
                c.sessions
                    .iter()
                    .enumerate()
                    .map(|(i, s)| (&s.id, Target::Session(i))),
            )
            // Thread notes (threads from canon/open-threads.md have a `#Title` id, no note).
            .chain(
                c.threads
                    .iter()
                    .enumerate()
                    .filter(|(_, t)| !t.id.contains('#'))
                    .map(|(i, t)| (&t.id, Target::Thread(i))),
            );
        let ids: Vec<(&String, Target)> = ids.collect();
        let links = match old {
            Some(o)
                if o.links.ids.len() == ids.len()
                    && o.links
                        .ids
                        .iter()
                        .zip(&ids)
                        .all(|(a, b)| (&a.0, a.1) == (b.0, b.1)) =>
            {
                o.links.clone()
            }
            _ => {
                let mut keys: HashMap<String, Target> = HashMap::default();
                for &(id, t) in &ids {
                    let p = strip_md(id);
                    keys.insert(norm_key(p), t);
                    let stem = p.rsplit('/').next().unwrap_or(p);
                    keys.entry(norm_key(stem)).or_insert(t);
                    keys.entry(slug(stem)).or_insert(t);
                }
                std::sync::Arc::new(Links {
                    ids: ids.into_iter().map(|(id, t)| (id.clone(), t)).collect(),
                    keys,
                })
            }
        };
        let mut parts: Vec<Vec<(String, Pattern)>> = vec![Vec::new(); SHARDS];
        for (text, pattern) in b.by_text {
            parts[shard_of(&text)].push((text, pattern));
        }
        let shards = parts
            .into_par_iter()
            .enumerate()
            .map(|(i, mut entries)| {
                entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                let (texts, patterns): (Vec<String>, Vec<Pattern>) = entries.into_iter().unzip();
                match old.and_then(|o| o.shards.get(i)) {
                    Some(s) if s.texts == texts && s.patterns == patterns => s.clone(),
                    _ => std::sync::Arc::new(Shard::build(texts, patterns)),
                }
            })
            .collect();
        Matcher {
            shards,
            links,
            prepared: std::sync::Arc::new(prepared),
            memo: std::sync::Arc::default(),
        }
    }

    /// Every entity the message names, in order of first appearance, each once.
    pub fn find(&self, message: &str) -> Vec<Mention> {
        const MEMO_MAX: usize = 16 * 1024;
        if message.len() > MEMO_MAX {
            return self.find_uncached(message);
        }
        if let Ok(m) = self.memo.lock() {
            if let Some((text, found)) = m.as_ref() {
                if text == message {
                    return found.clone();
                }
            }
        }
        let found = self.find_uncached(message);
        if let Ok(mut m) = self.memo.lock() {
            *m = Some((message.to_owned(), found.clone()));
        }
        found
    }

    fn find_uncached(&self, message: &str) -> Vec<Mention> {
        let mut out: Vec<(usize, Mention)> = Vec::new();
        let mut seen: HashSet<Target> = HashSet::default();
        let mut push = |pos: usize, m: Mention, out: &mut Vec<(usize, Mention)>| {
            if seen.insert(m.target) {
                out.push((pos, m));
            }
        };
        // [[wikilinks]] first: resolved by path or stem, else matched as text below.
        for l in find_wikilinks(message) {
            let key = strip_md(&l.target.note);
            if let Some(t) = self
                .links
                .keys
                .get(&norm_key(key))
                .or_else(|| self.links.keys.get(&slug(key)))
            {
                push(
                    l.range.start,
                    Mention {
                        target: *t,
                        text: l.target.display(),
                        ambiguous: false,
                        how: How::Link,
                    },
                    &mut out,
                );
            }
        }
        if self.shards.iter().all(|s| s.ac.is_none()) {
            return out.into_iter().map(|(_, m)| m).collect();
        }
        let (folded, message, map) = fold_text(message);
        let message = message.as_str();
        let mut cands: Vec<(usize, usize, &Pattern)> = Vec::new();
        for shard in &self.shards {
            let Some(ac) = &shard.ac else {
                continue;
            };
            cands.extend(
                ac.find_overlapping_iter(&folded)
                    .map(|m| (m.start(), m.end(), &shard.patterns[m.pattern().as_usize()]))
                    .filter(|&(s, e, _)| {
                        let before = folded[..s].chars().next_back();
                        let after = folded[e..].chars().next();
                        !before.is_some_and(is_word_char) && !after.is_some_and(is_word_char)
                    })
                    .filter(|&(s, _, p)| {
                        !p.needs_capital
                            || message[map[s]..]
                                .chars()
                                .next()
                                .is_some_and(char::is_uppercase)
                    }),
            );
        }
        // Leftmost first, longest first; equal spans keep their pattern order.
        cands.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        let mut taken_until = 0;
        for (s, e, pat) in cands {
            if s < taken_until {
                continue;
            }
            taken_until = e;
            let text = message[map[s]..map[e]].to_string();
            for t in &pat.targets {
                push(
                    s,
                    Mention {
                        target: *t,
                        text: text.clone(),
                        ambiguous: pat.targets.len() > 1,
                        how: pat.how,
                    },
                    &mut out,
                );
            }
        }
        out.sort_by_key(|(p, _)| *p);
        out.into_iter().map(|(_, m)| m).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canon::{Npc, Source};

    fn npc(name: &str, aliases: &[&str]) -> Npc {
        Npc {
            id: format!("canon/npcs/{}.md", slug(name)),
            name: name.into(),
            aliases: aliases.iter().map(|s| s.to_string()).collect(),
            role: None,
            status: "active".into(),
            disposition: None,
            location: None,
            location_text: None,
            hp_current: None,
            hp_max: None,
            ac: None,
            voice: vec![],
            summary: None,
            source: Source::default(),
        }
    }

    fn campaign() -> Campaign {
        Campaign {
            npcs: vec![
                npc("Al", &[]),
                npc("Grey", &[]),
                npc("Lord Halden Sauvage", &["the Copper Lord"]),
                npc("Merrin Sauvage", &[]),
                npc("Silent Circle", &[]),
                npc("Silent Circle Salon", &[]),
                npc("Jory Two-Knives", &[]),
                npc("Éowyn Dúnadan", &[]),
            ],
            ..Campaign::default()
        }
    }

    fn names(msg: &str) -> Vec<String> {
        let c = campaign();
        Matcher::new(&c)
            .find(msg)
            .into_iter()
            .map(|m| match m.target {
                Target::Npc(i) => c.npcs[i].name.clone(),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn whole_words_only() {
        assert!(names("Always ask").is_empty());
        assert_eq!(names("Ask Al."), ["Al"]);
    }

    #[test]
    fn common_words_need_capitals() {
        assert!(names("the grey fog").is_empty());
        assert_eq!(names("I pay Grey"), ["Grey"]);
    }

    #[test]
    fn longest_match_and_first_names() {
        assert_eq!(names("the silent circle salon"), ["Silent Circle Salon"]);
        assert_eq!(names("where is halden"), ["Lord Halden Sauvage"]);
        assert_eq!(
            names("Halden Sauvage and Merrin"),
            ["Lord Halden Sauvage", "Merrin Sauvage"]
        );
        assert!(names("Sauvage").is_empty());
    }

    #[test]
    fn surnames_and_titles_when_unambiguous() {
        let c = Campaign {
            npcs: vec![
                npc("Granny Tamsin Reed", &[]),
                npc("Deputy Hollis Crake", &[]),
                npc("Odessa Flint", &[]),
                npc("Captain Idris Marr", &[]),
                npc("Captain Ada Vey", &[]),
                npc("Old Gannet", &[]),
            ],
            ..Campaign::default()
        };
        let m = Matcher::new(&c);
        let found = |msg: &str| -> Vec<String> {
            m.find(msg)
                .into_iter()
                .map(|x| match x.target {
                    Target::Npc(i) => c.npcs[i].name.clone(),
                    other => format!("{other:?}"),
                })
                .collect()
        };
        assert_eq!(found("I ask Granny about the hum"), ["Granny Tamsin Reed"]);
        assert_eq!(
            found("the deputy shrugs; Crake lies"),
            ["Deputy Hollis Crake"]
        );
        assert_eq!(found("I ask Flint for a room"), ["Odessa Flint"]);
        assert!(
            found("I strike flint and steel").is_empty(),
            "a common-word surname needs a capital"
        );
        assert!(
            found("the Captain salutes").is_empty(),
            "two captains: the title alone is ambiguous"
        );
        assert_eq!(
            found("Vey and Marr argue"),
            ["Captain Ada Vey", "Captain Idris Marr"]
        );
        assert!(
            found("an old man").is_empty(),
            "`Old` is no title to use alone"
        );
    }

    #[test]
    fn possessives_links_and_unicode() {
        assert_eq!(names("I search Jory’s stash"), ["Jory Two-Knives"]);
        assert_eq!(names("see [[jory-two-knives]]"), ["Jory Two-Knives"]);
        assert_eq!(names("ÉOWYN smiles"), ["Éowyn Dúnadan"]);
        assert_eq!(names("the copper lord's men"), ["Lord Halden Sauvage"]);
    }

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
            .filter(|(k, a)| {
                before
                    .prepared
                    .adds
                    .get(*k)
                    .is_some_and(|b| std::sync::Arc::ptr_eq(a, b))
            })
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
}
