//! The name rules: which words of a name a player may use alone, which need a capital,
//! and which words stand for one entity (`the chapel`). Kept apart from the index so the
//! rules read as rules, and a build and a patch apply the same ones.

use super::{HashSet, Text};
use crate::names::fold_name;
use std::sync::OnceLock;

fn common_words() -> &'static HashSet<&'static str> {
    static WORDS: OnceLock<HashSet<&'static str>> = OnceLock::new();
    WORDS.get_or_init(|| {
        include_str!("common-words.txt")
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .collect()
    })
}

/// How many of the most frequent words (the top of `common-words.txt`) need a capital even
/// from a player who writes none: `grey`, `flint`, `rose` are words first.
const VERY_COMMON: usize = 5000;

pub(super) fn very_common_words() -> &'static HashSet<&'static str> {
    static WORDS: OnceLock<HashSet<&'static str>> = OnceLock::new();
    WORDS.get_or_init(|| {
        include_str!("common-words.txt")
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .take(VERY_COMMON)
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

pub(super) fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Head nouns too vague to stand for one entity even when only one holds them.
const VAGUE_NOUNS: &[&str] = &[
    "people", "person", "thing", "place", "time", "night", "there", "where", "other", "group",
    "party", "member", "members", "npcs", "npc", "player", "players", "unknown", "area",
];

/// A text folded for matching, and whether it needs a capital; None when it is too short
/// to be a name.
pub(super) fn prepare(text: &str) -> Option<(Text, bool)> {
    let folded = Text::from(fold_name(text));
    let cap = needs_capital(&folded)?;
    Some((folded, cap))
}

/// Whether a folded text needs a capital to count; None when it is too short to be a name.
pub(super) fn needs_capital(folded: &str) -> Option<bool> {
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
    Some(single && common_words().contains(folded))
}

/// The pattern text a head noun makes (`the chapel`).
pub(super) fn head_text(head: &str) -> Text {
    fold_name(&format!("the {head}")).into()
}

/// Whether a head noun held by `holders` entities may stand for one of them.
pub(super) fn head_counts(head: &str, holders: usize) -> bool {
    holders == 1 && head.chars().count() >= 4 && !VAGUE_NOUNS.contains(&head)
}

/// The name without its leading article, in the languages GMs write (`The Gilded Eel`,
/// `Il Fondo del Barile`, `La Posada`, `Der Graue Turm`, `L'Auberge`).
pub(super) fn strip_article(name: &str) -> Option<&str> {
    const ARTICLES: [&str; 17] = [
        "the ", "a ", "an ", "il ", "lo ", "la ", "le ", "les ", "el ", "los ", "las ", "der ",
        "die ", "das ", "l'", "l’", "gli ",
    ];
    for a in ARTICLES {
        let Some(head) = name.get(..a.len()) else {
            continue;
        };
        if head.eq_ignore_ascii_case(a) && name.len() > a.len() {
            let rest = name[a.len()..].trim();
            // English articles before anything (`a silvered dagger`); the others before a
            // capital only (`L'Auberge`, not an Italian phrase that opens with `la`).
            let english = matches!(a, "the " | "a " | "an ");
            if english || rest.chars().next().is_some_and(char::is_uppercase) {
                return Some(rest);
            }
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
pub(super) struct PersonParts {
    pub(super) first: Option<String>,
    pub(super) surname: Option<String>,
    pub(super) title: Option<String>,
    pub(super) without: Option<String>,
}

/// Honorific-like words that are descriptions, not titles a player would use alone.
const NOT_TITLES: &[&str] = &["the", "a", "an", "old", "young", "little", "big", "high"];

pub(super) fn person_parts(name: &str) -> PersonParts {
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
pub(super) fn place_heads(name: &str, kind: Option<&str>) -> Vec<String> {
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
pub(super) fn npc_heads(name: &str, role: Option<&str>) -> Vec<String> {
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
