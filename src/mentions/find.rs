//! Finding mentions in a text: `[[links]]` by their keys, then every shard's automaton,
//! whole words only, capitals where a name is also a common word, the longest match first.

use super::index::{Matcher, Pattern};
use super::rules::{is_word_char, very_common_words};
use super::{HashSet, How, Mention, Target};
use crate::names::{fold_text, norm_key, slug};
use crate::vault::links::{find_wikilinks, strip_md};

impl Matcher {
    /// Every entity the message names, in order of first appearance, each once.
    pub fn find(&self, message: &str) -> Vec<Mention> {
        if let Some(only) = self.only.as_ref().filter(|o| o.message != message) {
            return only
                .whole
                .get_or_init(|| Matcher::new(&only.campaign))
                .find(message);
        }
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

    /// As [`Matcher::find`], but a match whose every target is `quiet` takes no words from
    /// the others: a GM-only note's name ("the truth of the hum") must not hide a public
    /// name inside it ("the hum") from the players' view or the DM's.
    pub fn find_beside(&self, message: &str, quiet: &dyn Fn(Target) -> bool) -> Vec<Mention> {
        let found = self.find(message);
        if !found.iter().any(|m| quiet(m.target)) {
            return found;
        }
        self.find_with(message, Some(quiet))
    }

    fn find_uncached(&self, message: &str) -> Vec<Mention> {
        self.find_with(message, None)
    }

    fn find_with(&self, message: &str, quiet: Option<&dyn Fn(Target) -> bool>) -> Vec<Mention> {
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
                .get(norm_key(key).as_str())
                .or_else(|| self.links.keys.get(slug(key).as_str()))
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
        // A player who writes no capitals at all tells nothing by a missing one.
        let no_capitals = !message.chars().any(char::is_uppercase);
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
                    .filter(|&(s, e, p)| {
                        !p.needs_capital
                            || message[map[s]..]
                                .chars()
                                .next()
                                .is_some_and(char::is_uppercase)
                            || (no_capitals && !very_common_words().contains(&folded[s..e]))
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
            if !quiet.is_some_and(|q| pat.targets.iter().all(|t| q(*t))) {
                taken_until = e;
            }
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
pub(super) mod tests {
    use super::*;
    use crate::canon::{Campaign, Npc, Source};
    use crate::names::slug;

    pub(crate) fn npc(name: &str, aliases: &[&str]) -> Npc {
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

    pub(crate) fn campaign() -> Campaign {
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
                Target::Npc(i) => c.npcs[i as usize].name.clone(),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn a_quiet_name_takes_no_words_from_the_names_inside_it() {
        let c = campaign();
        let m = Matcher::new(&c);
        let msg = "We ask about the Silent Circle Salon tonight.";
        let salon = Target::Npc(5);
        let circle = Target::Npc(4);
        // Longest first: the salon hides the circle...
        let plain: Vec<Target> = m.find(msg).into_iter().map(|x| x.target).collect();
        assert_eq!(plain, vec![salon]);
        // ...unless the salon is quiet (a note the GM keeps whole): both are named.
        let beside: Vec<Target> = m
            .find_beside(msg, &|t| t == salon)
            .into_iter()
            .map(|x| x.target)
            .collect();
        assert_eq!(beside, vec![salon, circle]);
        // Nothing quiet named: the same as `find`.
        let none: Vec<Target> = m
            .find_beside(msg, &|t| t == Target::Npc(0))
            .into_iter()
            .map(|x| x.target)
            .collect();
        assert_eq!(none, plain);
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

    /// What `m` finds in `msg`: NPC names, anything else as its target.
    fn npc_names(c: &Campaign, m: &Matcher, msg: &str) -> Vec<String> {
        m.find(msg)
            .into_iter()
            .map(|x| match x.target {
                Target::Npc(i) => c.npcs[i as usize].name.clone(),
                other => format!("{other:?}"),
            })
            .collect()
    }

    /// A player who writes a name without its accents (or with them on a plain name)
    /// finds it; lower case only where capitals tell nothing.
    #[test]
    fn accents_do_not_hide_a_name() {
        let c = Campaign {
            npcs: vec![npc("Renée Dubois", &[]), npc("Zoë Marr", &[])],
            ..Campaign::default()
        };
        let m = Matcher::new(&c);
        let found = |msg: &str| npc_names(&c, &m, msg);
        assert_eq!(found("we ask renee dubois"), ["Renée Dubois"]);
        assert_eq!(found("Zoe waves"), ["Zoë Marr"]);
        assert_eq!(found("RENÉE!"), ["Renée Dubois"]);
        assert!(found("René waves").is_empty());
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
        let found = |msg: &str| npc_names(&c, &m, msg);
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
}
