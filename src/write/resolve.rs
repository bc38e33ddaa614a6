//! Which entity, location or thread a name in a change means: the name, an alias or the
//! file name (any case, any spacing), else what the mention matcher finds when the words
//! are the whole name (a unique given name, a title, `the chapel`). Two candidates are an
//! error that names both; nothing is guessed.

use super::error::ResolveError;
use crate::canon::model::Campaign;
use crate::mentions::{Matcher, Target};
use crate::names::{norm_key, slug};

/// A PC or an NPC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Who {
    /// A player character (index into `Campaign::pcs`).
    Pc(usize),
    /// An NPC (index into `Campaign::npcs`).
    Npc(usize),
}

impl Who {
    /// The entity's name.
    pub(crate) fn name(self, c: &Campaign) -> &str {
        match self {
            Who::Pc(i) => &c.pcs[i].name,
            Who::Npc(i) => &c.npcs[i].name,
        }
    }

    /// The note the entity lives in.
    pub(crate) fn path(self, c: &Campaign) -> &str {
        match self {
            Who::Pc(i) => &c.pcs[i].source.path,
            Who::Npc(i) => &c.npcs[i].source.path,
        }
    }
}

fn stem(path: &str) -> &str {
    let file = path.rsplit('/').next().unwrap_or(path);
    file.strip_suffix(".md").unwrap_or(file)
}

/// Whether `a` folds to `want` (a [`norm_key`]): any case, any spacing. Allocation-free
/// for ASCII, since a lookup runs over every note of a kind.
fn same_key(a: &str, want: &str) -> bool {
    if !a.is_ascii() {
        return norm_key(a) == want;
    }
    let mut w = want.split(' ');
    for word in a.split_whitespace() {
        match w.next() {
            Some(x) if x.eq_ignore_ascii_case(word) => {}
            _ => return false,
        }
    }
    w.next().is_none()
}

/// The forms of a wanted name, folded once.
struct Want {
    key: String,
    slug: String,
}

impl Want {
    fn new(name: &str) -> Want {
        let key = norm_key(name);
        Want {
            slug: slug(&key),
            key,
        }
    }

    /// Whether a name, one of its aliases or its file name is this one.
    fn matches(&self, name: &str, aliases: &[String], path: &str) -> bool {
        let s = stem(path);
        same_key(name, &self.key)
            || name
                .strip_prefix("The ")
                .is_some_and(|n| same_key(n, &self.key))
            || aliases.iter().any(|a| same_key(a, &self.key))
            || same_key(s, &self.key)
            || same_key(crate::vault::links::strip_md(path), &self.key)
            || (!self.slug.is_empty()
                && (s.eq_ignore_ascii_case(&self.slug)
                    || (!s
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                        && slug(s) == self.slug)))
    }
}

/// The one candidate, or why not. `name` gives a candidate's name and note: when two
/// candidates share a name, the notes tell them apart (and the GM can use a file name).
fn pick<T: Copy + PartialEq>(
    found: Vec<T>,
    what: &'static str,
    asked: &str,
    name: impl Fn(T) -> (String, String),
) -> Result<T, ResolveError> {
    let mut found = found;
    found.dedup();
    match found.as_slice() {
        [one] => Ok(*one),
        [] => Err(ResolveError::NotFound {
            what,
            asked: asked.to_string(),
        }),
        many => {
            let named: Vec<(String, String)> = many.iter().take(4).map(|t| name(*t)).collect();
            let shared = named.iter().any(|(n, _)| {
                named
                    .iter()
                    .filter(|(m, _)| m.eq_ignore_ascii_case(n))
                    .count()
                    > 1
            });
            let asked = asked.to_string();
            Err(if shared {
                ResolveError::SameName {
                    asked,
                    candidates: named,
                }
            } else {
                ResolveError::Ambiguous {
                    asked,
                    candidates: named.into_iter().map(|(n, _)| n).collect(),
                }
            })
        }
    }
}

/// The mention targets the matcher finds when `text` is all one mention.
fn whole_mentions(m: &Matcher, text: &str) -> Vec<Target> {
    let want = norm_key(text);
    let mut out: Vec<Target> = m
        .find(text)
        .into_iter()
        .filter(|x| {
            norm_key(&x.text) == want
                || norm_key(&x.text) == norm_key(want.trim_start_matches("the "))
        })
        .map(|x| x.target)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The PC or NPC `name` means.
pub(crate) fn entity(c: &Campaign, m: &Matcher, name: &str) -> Result<Who, ResolveError> {
    let w = Want::new(name.trim().trim_matches('"'));
    let want = w.key.clone();
    let mut found: Vec<Who> = c
        .pcs
        .iter()
        .enumerate()
        .filter(|(_, p)| w.matches(&p.name, &p.aliases, &p.source.path))
        .map(|(i, _)| Who::Pc(i))
        .chain(
            c.npcs
                .iter()
                .enumerate()
                .filter(|(_, n)| w.matches(&n.name, &n.aliases, &n.source.path))
                .map(|(i, _)| Who::Npc(i)),
        )
        .collect();
    if found.is_empty() {
        found = whole_mentions(m, name)
            .into_iter()
            .filter_map(|t| match t {
                Target::Pc(i) => Some(Who::Pc(i as usize)),
                Target::Npc(i) => Some(Who::Npc(i as usize)),
                _ => None,
            })
            .collect();
    }
    if found.is_empty() {
        // A given name or surname, in any case (`kit`, `marsh`), when only one has it: the
        // mention matcher wants common words capitalised, a GM typing a command does not.
        let part = |n: &str| {
            let words: Vec<String> = n.split_whitespace().map(norm_key).collect();
            words.len() > 1 && (words.first() == Some(&want) || words.last() == Some(&want))
        };
        found = c
            .pcs
            .iter()
            .enumerate()
            .filter(|(_, p)| part(&p.name))
            .map(|(i, _)| Who::Pc(i))
            .chain(
                c.npcs
                    .iter()
                    .enumerate()
                    .filter(|(_, n)| part(&n.name))
                    .map(|(i, _)| Who::Npc(i)),
            )
            .collect();
    }
    pick(found, "PC or NPC", name.trim(), |w| {
        (w.name(c).to_string(), w.path(c).to_string())
    })
}

/// The location `name` means (an index into `Campaign::locations`).
pub(crate) fn location(c: &Campaign, m: &Matcher, name: &str) -> Result<usize, ResolveError> {
    let raw = name.trim().trim_matches('"');
    let raw = raw
        .strip_prefix("[[")
        .and_then(|r| r.strip_suffix("]]"))
        .map_or(raw, |r| r.split('|').next().unwrap_or(r));
    let w = Want::new(raw);
    let mut found: Vec<usize> = c
        .locations
        .iter()
        .enumerate()
        .filter(|(_, l)| w.matches(&l.name, &l.aliases, &l.source.path))
        .map(|(i, _)| i)
        .collect();
    if found.is_empty() {
        found = whole_mentions(m, raw)
            .into_iter()
            .filter_map(|t| match t {
                Target::Location(i) => Some(i as usize),
                _ => None,
            })
            .collect();
    }
    pick(found, "location", raw, |i| {
        (c.locations[i].name.clone(), c.locations[i].id.clone())
    })
}

/// The thread `name` means: its title, an alias, or a part of the title no other thread has.
pub(crate) fn thread(c: &Campaign, m: &Matcher, name: &str) -> Result<usize, ResolveError> {
    let w = Want::new(name.trim().trim_matches('"'));
    let want = w.key.clone();
    let exact: Vec<usize> = c
        .threads
        .iter()
        .enumerate()
        .filter(|(_, t)| w.matches(&t.title, &t.aliases, &t.title))
        .map(|(i, _)| i)
        .collect();
    let found = if !exact.is_empty() {
        exact
    } else {
        let mentioned: Vec<usize> = whole_mentions(m, name)
            .into_iter()
            .filter_map(|t| match t {
                Target::Thread(i) => Some(i as usize),
                _ => None,
            })
            .collect();
        if !mentioned.is_empty() {
            mentioned
        } else if want.len() >= 4 {
            c.threads
                .iter()
                .enumerate()
                .filter(|(_, t)| norm_key(&t.title).contains(&want))
                .map(|(i, _)| i)
                .collect()
        } else {
            Vec::new()
        }
    };
    pick(found, "thread", name.trim(), |i| {
        (c.threads[i].title.clone(), c.threads[i].source.path.clone())
    })
}

/// Whether `name` is the whole party.
pub(crate) fn is_party(c: &Campaign, name: &str) -> bool {
    let want = norm_key(name.trim());
    matches!(
        want.as_str(),
        "party" | "the party" | "everyone" | "all" | "group"
    ) || c
        .parties
        .iter()
        .any(|p| norm_key(&p.name) == want || p.aliases.iter().any(|a| norm_key(a) == want))
}
