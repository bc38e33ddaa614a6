//! The leak guard: after each DM reply, did the DM recite a GM secret?
//!
//! The DM is given GM-only text (a `## Secrets` section, a `> [!secret]` callout, a `%%`
//! comment) so that it can run the game; the players must discover it through play, never
//! read it recited. [`Guard`] compares each finished reply with those secrets and reports
//! a [`Leak`] for the GM in three cases:
//!
//! - [`LeakKind::Verbatim`]: [`RUN_WORDS`] or more consecutive words of a secret, compared
//!   case-, accent- and punctuation-insensitively (line breaks, curly quotes and `—` do not
//!   hide a recitation); a secret shorter than that is a run when said whole
//!   ([`SHORT_WORDS`]). A run the public text also holds does not count (a secret may quote
//!   canon the players know), nor one of fewer than two words that are not function words
//!   ([`is_function_word`]: "and all of them were in the" is no recitation).
//! - [`LeakKind::Distinctive`]: a name of a secret that the public text never uses: "The
//!   mayor is really Vexhollow" makes `Vexhollow` distinctive. A single word counts when the
//!   secret writes it with a capital, it has [`TERM_MIN_CHARS`] letters or more and no
//!   digit, and it is no common English word (the 17,500 of `mentions/common-words.txt`,
//!   inflected or prefixed: `Resonates`, `Unconfirmed`), weekday, month or nationality: a
//!   secret's `Silver`, `Buyer` or `Sunday` never flag. A phrase of capitalised words with
//!   only spaces between them (`Black Lantern`, `Gilford Junction`, `Eli Brandt`) counts
//!   when the public text never says it and one of its words, titles aside, is written
//!   with a capital nowhere in the public text: `Father Lusk` is no new name when the canon
//!   knows `Father Gideon Lusk`, nor `Captain Vell` when it knows `Ida Vell`.
//! - [`LeakKind::Marked`]: a phrase the GM marked in the secret as the thing never to be
//!   said, with an Obsidian highlight: `==the Black Lantern==` ([`marked_phrases`]),
//!   matched without its leading and trailing function words. Always watched, even when
//!   common or public: the GM said so; it is also how a GM has a lower-case word watched
//!   (`==argentite==`). Highlights, not `**bold**`: GMs bold labels and emphasis everywhere
//!   (`**Next:**`, thread titles), while a highlight is rare and deliberate.
//!
//! What the players already know never counts: the public text given to [`Guard::new`],
//! anything told to [`Guard::learn`] since, and the player's own message of the turn (a DM
//! echoing "is the mayor Vexhollow?" is answering, not leaking).
//!
//! The public text must be the whole public canon (every note without its GM-only parts)
//! and what the table has heard since, not the context of one message: with only what
//! `vaultdm context` injects for the opening scene, names the scene left out (`Father
//! Lusk`, `the Sump`) look distinctive, and 21 of the 200 ordinary replies below raise an
//! alarm instead of none.
//!
//! # Thresholds, measured
//!
//! `tests/leak.rs` measures the guard on the bundled campaign (`vault-template/`): 26 GM
//! secrets written for it the ways GMs write them (callouts, `%%` notes, prep bullets, a
//! frontmatter one-liner, a future timeline entry), its public canon as the public text,
//! the 200 ordinary DM replies of a generated session, 25 replies that recite or name a
//! secret and 5 that only paraphrase one (fixtures in `tests/fixtures/leak/`).
//!
//! | run length | ordinary replies flagged (of 200) | recitations caught (of 14) |
//! |-----------:|----------------------------------:|---------------------------:|
//! | 3 words    | 37                                | 14                         |
//! | 4 words    | 36                                | 14                         |
//! | 5 words    | 33                                | 14                         |
//! | 6–9 words  | 0                                 | 14                         |
//!
//! The 33 at five words are a single phrase, "on the switchback road and", of a line the
//! session repeats: a campaign's turns of phrase recur by the dozen, so one run shared with
//! a secret is not one false alarm but one per use. The recitations ran 8 to 17 words (and
//! one whole 4-word secret). [`RUN_WORDS`] = 7 keeps two words of margin over the longest
//! ordinary run and one under the shortest recitation.
//!
//! Distinctive words: counting lower-case rare words too (not only capitalised ones) caught
//! nothing more and flagged one ordinary reply ("a narrow stair goes down": the list has
//! `stairs`, not `stair`). [`TERM_MIN_CHARS`] of 3, 4 or 5 gave the same results; 5 would
//! never watch a four-letter name (`Lusk`, `Vane`, `Tull` are four), 3 would watch
//! abbreviations and exclamations, and a three-letter name still counts inside a phrase.
//!
//! **With these values: 0 false alarms on 200 ordinary replies; 25 of 25 recitations and
//! namings flagged (14 verbatim, 8 distinctive names, 3 marked phrases).** The limit: none
//! of the 5 bare paraphrases ("the ore down there is alive, and it has been listening to
//! the town") is caught; that takes a model, not a guard.
//!
//! The public text is indexed once per canon ([`PublicText`]), a guard once per context
//! ([`Guard::with_public`]: the secrets' runs and terms in hash tables; [`Guard::new`] does
//! both), and [`Guard::check`] costs a few hash lookups per word of the reply, whatever the
//! number of secrets (`benches/leak.rs`).

use crate::names;
use rustc_hash::{FxHashMap, FxHashSet, FxHasher};
use std::hash::Hasher;
use std::ops::Range;
use std::sync::OnceLock;

/// How many consecutive words of a secret make a verbatim leak (see the module docs for
/// the measurement behind it).
pub const RUN_WORDS: usize = 7;

/// A secret shorter than [`RUN_WORDS`] is a run when said whole, if it has this many words
/// (and two that are not function words): `Strand was murdered` is.
pub const SHORT_WORDS: usize = 3;

/// The fewest letters a single distinctive word needs.
pub const TERM_MIN_CHARS: usize = 4;

/// A run counts only when at least this many of its words are not function words.
const RUN_CONTENT_WORDS: usize = 2;

/// GM-only text the DM was given, with where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SecretText {
    /// The text, as the DM saw it (Markdown is fine: marks and punctuation are ignored).
    pub text: String,
    /// Where it is, for the GM: `canon/npcs/mayor.md:14`.
    pub source: String,
    /// The entity it is about, when known: `Mayor Aldous Crane`.
    pub entity: Option<String>,
    /// Phrases that must never be said, whatever the public text holds: the
    /// `==highlighted==` phrases of `text` ([`SecretText::new`] fills it), and any others
    /// the recognition side found (a frontmatter `secret:` value, say).
    pub marked: Vec<String>,
}

impl SecretText {
    /// A secret whose [`marked`](SecretText::marked) phrases are the `==highlights==` of
    /// its text.
    pub fn new(text: &str, source: &str, entity: Option<&str>) -> SecretText {
        SecretText {
            text: text.to_string(),
            source: source.to_string(),
            entity: entity.map(str::to_string),
            marked: marked_phrases(text),
        }
    }
}

/// The phrases of `text` between `==` pairs on one line (Obsidian's highlight), trimmed;
/// empty ones are skipped. `==the Black Lantern==` gives `the Black Lantern`.
pub fn marked_phrases(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut rest = line;
        while let Some(open) = rest.find("==") {
            let after = &rest[open + 2..];
            let Some(close) = after.find("==") else {
                break;
            };
            let phrase = after[..close].trim();
            if !phrase.is_empty() {
                out.push(phrase.to_string());
            }
            rest = &after[close + 2..];
        }
    }
    out
}

/// A reply that recites or names a secret.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Leak {
    /// Where the secret is (`canon/npcs/mayor.md:14`).
    pub source: String,
    /// The entity the secret is about, when known.
    pub entity: Option<String>,
    /// The reply's words that match, as the reply wrote them (in Unicode NFC).
    pub excerpt: String,
    /// What matched.
    #[serde(flatten)]
    pub kind: LeakKind,
}

/// How a reply matched a secret.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LeakKind {
    /// A run of this many consecutive words of the secret (at least [`RUN_WORDS`]).
    Verbatim {
        /// The run's length in words.
        words: usize,
    },
    /// A word or capitalised phrase of the secret that the public text never uses, as the
    /// secret spells it.
    Distinctive {
        /// The term.
        term: String,
    },
    /// A phrase the GM marked in the secret as never to be said, as the GM wrote it.
    Marked {
        /// The phrase.
        phrase: String,
    },
}

/// Words that say nothing of a secret by themselves: a run of these only ("and all of
/// them were in the") is a stock phrase, never a recitation.
pub fn is_function_word(key: &str) -> bool {
    const WORDS: &[&str] = &[
        "a", "about", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as", "at",
        "be", "been", "before", "being", "both", "but", "by", "can", "could", "did", "do", "does",
        "down", "each", "even", "every", "for", "from", "had", "has", "have", "he", "her", "here",
        "hers", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "just", "may",
        "me", "might", "more", "most", "must", "my", "no", "nor", "not", "now", "of", "off", "on",
        "once", "one", "only", "onto", "or", "other", "our", "out", "over", "own", "same", "shall",
        "she", "should", "so", "some", "still", "such", "than", "that", "the", "their", "them",
        "then", "there", "these", "they", "this", "those", "through", "to", "too", "under",
        "until", "up", "us", "very", "was", "we", "were", "what", "when", "where", "which",
        "while", "who", "whom", "why", "will", "with", "would", "yet", "you", "your",
    ];
    WORDS.binary_search(&key).is_ok()
}

/// Titles before a name: `Captain Vell` is no new name when the public text knows
/// `Ida Vell`.
fn is_title(key: &str) -> bool {
    matches!(
        key,
        "mr" | "mrs"
            | "ms"
            | "miss"
            | "mister"
            | "sir"
            | "lord"
            | "lady"
            | "dame"
            | "master"
            | "mistress"
            | "captain"
            | "doctor"
            | "dr"
            | "father"
            | "mother"
            | "sister"
            | "brother"
            | "saint"
            | "old"
            | "young"
            | "granny"
            | "uncle"
            | "aunt"
            | "deputy"
            | "sheriff"
            | "mayor"
            | "judge"
            | "king"
            | "queen"
            | "prince"
            | "princess"
    )
}

/// Everyday capitalised words the common-words list leaves out (it drops words a
/// dictionary knows only with a capital): a secret's `Sunday` or `Christmas` is no name of
/// the campaign's.
fn is_everyday_name(key: &str) -> bool {
    matches!(
        key,
        "monday"
            | "tuesday"
            | "wednesday"
            | "thursday"
            | "friday"
            | "saturday"
            | "sunday"
            | "january"
            | "february"
            | "april"
            | "june"
            | "july"
            | "august"
            | "september"
            | "october"
            | "november"
            | "december"
            | "christmas"
            | "easter"
            | "christ"
            | "jesus"
            | "satan"
            | "american"
            | "english"
            | "french"
            | "spanish"
            | "german"
            | "irish"
            | "scottish"
            | "mexican"
            | "indian"
            | "chinese"
            | "british"
    )
}

/// Whether a word (a [`Word::key`]) is a common English word or an inflection of one
/// (`resonates`, `listening`, `hollowed`), or an everyday name ([`is_everyday_name`]).
fn is_common(key: &str) -> bool {
    static WORDS: OnceLock<FxHashSet<&'static str>> = OnceLock::new();
    let words = WORDS.get_or_init(|| {
        include_str!("../mentions/common-words.txt")
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .collect()
    });
    if words.contains(key) || is_everyday_name(key) {
        return true;
    }
    let inflected = |key: &str| {
        ["s", "es", "ed", "d", "ing", "ly", "er", "ers", "est"]
            .iter()
            .filter_map(|suffix| key.strip_suffix(suffix))
            .filter(|stem| stem.len() >= 3)
            .any(|stem| words.contains(stem) || words.contains(format!("{stem}e").as_str()))
    };
    // A prefix on a common word (`unconfirmed`, `rewritten`), when four letters or more
    // remain: `Unwin` and `Overton` are names, not `win` and `ton` undone.
    let prefixed = [
        "un", "re", "dis", "in", "im", "non", "mis", "over", "under", "out", "pre",
    ]
    .iter()
    .filter_map(|prefix| key.strip_prefix(prefix))
    .filter(|rest| rest.len() >= 4)
    .any(|rest| words.contains(rest) || inflected(rest));
    inflected(key) || prefixed
}

/// A word as terms are compared: a plural's final `s` off (`lanterns` and `lantern` meet).
fn base(key: &str) -> &str {
    if key.len() > 4 && key.ends_with('s') && !key.ends_with("ss") {
        &key[..key.len() - 1]
    } else {
        key
    }
}

/// One word of a text.
#[derive(Debug, Clone)]
struct Word {
    /// Folded (lower case, accents off) letters and digits only: `Brannock's` -> `brannock`,
    /// `don't` -> `dont`.
    key: String,
    /// Its bytes in the NFC text.
    span: Range<usize>,
    /// Written with a capital.
    cap: bool,
    /// First of a sentence or a line (its capital says nothing).
    opens: bool,
}

/// A text split into words, with its NFC form (which the words' spans index).
#[derive(Debug)]
struct Words {
    nfc: String,
    words: Vec<Word>,
}

impl Words {
    /// Splits `text` into words: runs of letters and digits; an apostrophe inside a word
    /// joins it (a final `'s` is dropped); anything else separates.
    fn of(text: &str) -> Words {
        let (folded, nfc, map) = names::fold_text(text);
        let mut words = Vec::new();
        let mut key = String::new();
        let (mut start, mut end) = (0, 0);
        let mut opens = true;
        let mut chars = folded.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c.is_alphanumeric() {
                if key.is_empty() {
                    start = i;
                }
                key.push(c);
                end = i + c.len_utf8();
                continue;
            }
            let next = chars.peek().map(|&(_, n)| n);
            if c == '\'' && !key.is_empty() && next.is_some_and(char::is_alphanumeric) {
                if next == Some('s') {
                    let mut ahead = chars.clone();
                    ahead.next();
                    if !ahead.peek().is_some_and(|&(_, n)| n.is_alphanumeric()) {
                        chars.next();
                    }
                }
                continue;
            }
            if !key.is_empty() {
                words.push(Self::word(&nfc, &map, &mut key, start..end, opens));
                opens = false;
            }
            // Bullets, quotes and headings' marks leave `opens` as it is: they are no words.
            if matches!(c, '.' | '!' | '?' | ':' | ';' | '\n') {
                opens = true;
            }
        }
        if !key.is_empty() {
            words.push(Self::word(&nfc, &map, &mut key, start..end, opens));
        }
        Words { nfc, words }
    }

    fn word(nfc: &str, map: &[usize], key: &mut String, f: Range<usize>, opens: bool) -> Word {
        let span = map[f.start]..map[f.end];
        let cap = nfc[span.clone()]
            .chars()
            .next()
            .is_some_and(char::is_uppercase);
        Word {
            key: std::mem::take(key),
            span,
            cap,
            opens,
        }
    }

    /// The NFC text of words `r` (from the first's start to the last's end).
    fn excerpt(&self, r: Range<usize>) -> &str {
        match (
            self.words.get(r.start),
            r.end.checked_sub(1).and_then(|e| self.words.get(e)),
        ) {
            (Some(a), Some(b)) => &self.nfc[a.span.start..b.span.end],
            _ => "",
        }
    }

    /// The hash of each word's key.
    fn hashes(&self) -> Vec<u64> {
        self.words.iter().map(|w| hash_one(&w.key)).collect()
    }

    /// Every window of `n` words, by its start: its hash.
    fn windows(&self, n: usize) -> impl Iterator<Item = (usize, u64)> + '_ {
        let h = self.hashes();
        (0..(h.len() + 1).saturating_sub(n)).map(move |i| (i, window_hash(&h[i..i + n])))
    }

    /// The keys joined by single spaces, with a space at each end (so a phrase is found
    /// as ` black lantern ` with its word boundaries).
    fn joined(&self) -> String {
        let mut s = String::from(" ");
        for w in &self.words {
            s.push_str(base(&w.key));
            s.push(' ');
        }
        s
    }
}

fn hash_one(key: &str) -> u64 {
    let mut h = FxHasher::default();
    h.write(key.as_bytes());
    h.finish()
}

fn window_hash(words: &[u64]) -> u64 {
    let mut h = FxHasher::default();
    for w in words {
        h.write_u64(*w);
    }
    h.finish()
}

/// A term the guard watches for: a distinctive phrase or word, or a marked phrase.
#[derive(Debug, Clone)]
struct Term {
    /// Its words' [`base`] forms.
    keys: Vec<String>,
    /// As the secret writes it.
    display: String,
    secret: usize,
    /// The phrase as the GM marked it, when it is a marked one.
    marked: Option<String>,
}

/// Where a secret came from, and its words for checking a run found by hash.
#[derive(Debug, Clone)]
struct Secret {
    source: String,
    entity: Option<String>,
    keys: Vec<String>,
}

/// The public text indexed for guards: its words, the words it ever writes with a
/// capital, its runs, and the whole of it joined for phrase lookups. The public canon
/// changes less often than the secrets of a context: index it once per canon and build
/// each context's guard with [`Guard::with_public`].
#[derive(Debug, Clone)]
pub struct PublicText {
    words: FxHashSet<String>,
    capitals: FxHashSet<String>,
    runs: FxHashSet<u64>,
    joined: String,
    /// The window length of `runs`.
    run: usize,
}

impl PublicText {
    /// The public text indexed for runs of [`RUN_WORDS`].
    pub fn new(text: &str) -> PublicText {
        PublicText::with_run_words(text, RUN_WORDS)
    }

    /// The public text indexed for runs of `words` words (at least 1) instead of
    /// [`RUN_WORDS`]: for measuring where the threshold should be.
    pub fn with_run_words(text: &str, words: usize) -> PublicText {
        let run = words.max(1);
        let w = Words::of(text);
        let (mut all, mut capitals) = (FxHashSet::default(), FxHashSet::default());
        for x in &w.words {
            let b = base(&x.key);
            if !all.contains(b) {
                all.insert(b.to_string());
            }
            if x.cap && !capitals.contains(b) {
                capitals.insert(b.to_string());
            }
        }
        PublicText {
            words: all,
            capitals,
            runs: w.windows(run).map(|(_, h)| h).collect(),
            joined: w.joined(),
            run,
        }
    }
}

/// The leak guard for one context: the secrets the DM was given, indexed against the
/// public text. Build it once ([`Guard::new`]), then [`Guard::check`] each reply.
#[derive(Debug, Clone, Default)]
pub struct Guard {
    secrets: Vec<Secret>,
    /// The words of a verbatim run (the public text's: [`RUN_WORDS`] unless measuring).
    run: usize,
    /// Each countable window of a secret: (secret, start word, words).
    runs: FxHashMap<u64, Vec<(u32, u32, u32)>>,
    /// The lengths of the secrets shorter than `run` words, indexed whole.
    short: Vec<usize>,
    /// Terms by their first word's [`base`].
    terms: FxHashMap<String, Vec<Term>>,
}

/// A match before it becomes a [`Leak`]: which secret, which reply words, what.
struct Hit {
    secret: usize,
    words: Range<usize>,
    kind: LeakKind,
}

impl Hit {
    /// Whether `earlier` (of the same reply, found first) already tells the GM this: it
    /// is of the same secret and covers these words, or names the same term.
    fn repeats(&self, earlier: &Hit) -> bool {
        let covered =
            earlier.words.start <= self.words.start && self.words.end <= earlier.words.end;
        let same_term =
            earlier.kind == self.kind && !matches!(self.kind, LeakKind::Verbatim { .. });
        earlier.secret == self.secret && (covered || same_term)
    }
}

impl Guard {
    /// A guard for `secrets`, given that the players already share `public` (the whole
    /// public canon: its words are never distinctive, its runs never leaks).
    pub fn new(secrets: &[SecretText], public: &str) -> Guard {
        Guard::with_public(secrets, &PublicText::new(public))
    }

    /// A guard for `secrets` against a public text indexed before (once per canon); its
    /// runs are as long as the public text was indexed for.
    pub fn with_public(secrets: &[SecretText], public: &PublicText) -> Guard {
        let mut g = Guard {
            run: public.run,
            ..Guard::default()
        };
        for (i, s) in secrets.iter().enumerate() {
            let w = Words::of(&s.text);
            g.index_runs(i, &w, public);
            let marked: Vec<Vec<String>> =
                s.marked.iter().filter_map(|m| g.add_marked(i, m)).collect();
            g.index_terms(i, &w, public, &marked);
            g.secrets.push(Secret {
                source: s.source.clone(),
                entity: s.entity.clone(),
                keys: w.words.into_iter().map(|x| x.key).collect(),
            });
        }
        g
    }

    /// The secret's windows of `run` words; a secret shorter than that (but of
    /// [`SHORT_WORDS`] or more) as one window of its length, so a short secret said whole
    /// is a run too.
    fn index_runs(&mut self, secret: usize, w: &Words, public: &PublicText) {
        let len = w.words.len();
        let n = if len < self.run && len >= SHORT_WORDS {
            let whole: Vec<&str> = w.words.iter().map(|x| base(&x.key)).collect();
            if public.joined.contains(&format!(" {} ", whole.join(" "))) {
                return;
            }
            if !self.short.contains(&len) {
                self.short.push(len);
            }
            len
        } else {
            self.run
        };
        let content: Vec<usize> = w
            .words
            .iter()
            .map(|x| usize::from(!is_function_word(&x.key)))
            .collect();
        for (i, h) in w.windows(n) {
            let content: usize = content[i..i + n].iter().sum();
            if content >= RUN_CONTENT_WORDS && (n < self.run || !public.runs.contains(&h)) {
                let at = (secret as u32, i as u32, n as u32);
                let list = self.runs.entry(h).or_default();
                if !list.contains(&at) {
                    list.push(at);
                }
            }
        }
    }

    /// The distinctive words and capitalised phrases of a secret, but those inside a
    /// phrase the GM marked in it (`marked`, its keys): they are watched as that phrase.
    fn index_terms(
        &mut self,
        secret: usize,
        w: &Words,
        public: &PublicText,
        marked: &[Vec<String>],
    ) {
        let add = |g: &mut Guard, r: Range<usize>| {
            let keys: Vec<String> = w.words[r.clone()]
                .iter()
                .map(|x| base(&x.key).to_string())
                .collect();
            if !marked
                .iter()
                .any(|m| m.windows(keys.len()).any(|k| k == keys))
            {
                g.add_term(secret, w, r, keys, None);
            }
        };
        for (i, x) in w.words.iter().enumerate() {
            let b = base(&x.key);
            if x.cap
                && x.key.chars().count() >= TERM_MIN_CHARS
                && !x.key.chars().any(|c| c.is_ascii_digit())
                && !public.words.contains(b)
                && !is_common(&x.key)
                && !is_common(b)
            {
                add(self, i..i + 1);
            }
        }
        for r in capitalised_phrases(w) {
            let phrase: Vec<&str> = w.words[r.clone()].iter().map(|x| base(&x.key)).collect();
            let said = public.joined.contains(&format!(" {} ", phrase.join(" ")));
            let new_name = w.words[r.clone()]
                .iter()
                .any(|x| x.cap && !is_title(&x.key) && !public.capitals.contains(base(&x.key)));
            if !said && new_name {
                add(self, r);
            }
        }
    }

    /// A phrase the GM marked, watched without its leading and trailing function words
    /// (`the Black Lantern` is said as "a black lantern" too), as the GM wrote it; its
    /// keys, unless it has no word.
    fn add_marked(&mut self, secret: usize, phrase: &str) -> Option<Vec<String>> {
        let w = Words::of(phrase);
        let content = |x: &&Word| !is_function_word(&x.key);
        let start = w.words.iter().position(|x| content(&x)).unwrap_or(0);
        let end = w
            .words
            .iter()
            .rposition(|x| content(&x))
            .map_or(w.words.len(), |e| e + 1);
        if start >= end {
            return None;
        }
        let keys: Vec<String> = w.words[start..end]
            .iter()
            .map(|x| base(&x.key).to_string())
            .collect();
        self.add_term(
            secret,
            &w,
            start..end,
            keys.clone(),
            Some(phrase.trim().to_string()),
        );
        Some(keys)
    }

    /// Watches words `r` of `w` (a secret's or a marked phrase's), whose [`base`] forms are
    /// `keys`, as one term; `marked` holds the GM's phrase when it is a marked one.
    fn add_term(
        &mut self,
        secret: usize,
        w: &Words,
        r: Range<usize>,
        keys: Vec<String>,
        marked: Option<String>,
    ) {
        let Some(first) = keys.first() else {
            return;
        };
        let list = self.terms.entry(first.clone()).or_default();
        if list.iter().any(|t| t.secret == secret && t.keys == keys) {
            return;
        }
        let display = w.words[r].iter().map(|x| &w.nfc[x.span.clone()]);
        list.push(Term {
            keys,
            display: display.collect::<Vec<_>>().join(" "),
            secret,
            marked,
        });
    }

    /// The leaks in `reply`, in the order the reply makes them. `player` is the message
    /// the reply answers (empty when there is none): words and runs the player used are
    /// theirs to hear again.
    pub fn check(&self, reply: &str, player: &str) -> Vec<Leak> {
        let r = Words::of(reply);
        let p = Words::of(player);
        let mut hits = self.run_hits(&r, &p);
        hits.extend(self.term_hits(&r, &p));
        // One report per place: a name inside a recited run, a word inside a phrase, the
        // same term twice.
        hits.sort_by_key(|h| (h.words.start, std::cmp::Reverse(h.words.end)));
        let mut kept: Vec<Hit> = Vec::new();
        for h in hits {
            if !kept.iter().any(|k| h.repeats(k)) {
                kept.push(h);
            }
        }
        kept.into_iter()
            .map(|h| {
                let s = &self.secrets[h.secret];
                Leak {
                    source: s.source.clone(),
                    entity: s.entity.clone(),
                    excerpt: r.excerpt(h.words).to_string(),
                    kind: h.kind,
                }
            })
            .collect()
    }

    /// The verbatim runs: every window of the reply found among the secrets' windows, each
    /// secret's windows joined into maximal runs.
    fn run_hits(&self, r: &Words, p: &Words) -> Vec<Hit> {
        let mut found: Vec<(usize, usize, usize)> = Vec::new();
        for n in self.lengths() {
            let theirs: FxHashSet<u64> = p.windows(n).map(|(_, h)| h).collect();
            for (i, h) in r.windows(n) {
                if theirs.contains(&h) {
                    continue;
                }
                for &(s, at, len) in self.runs.get(&h).into_iter().flatten() {
                    let (s, at) = (s as usize, at as usize);
                    let same = len as usize == n
                        && self.secrets[s].keys[at..at + n]
                            .iter()
                            .zip(&r.words[i..i + n])
                            .all(|(a, b)| *a == b.key);
                    if same {
                        found.push((s, i, i + n));
                    }
                }
            }
        }
        found.sort_unstable();
        found.dedup();
        let mut hits: Vec<Hit> = Vec::new();
        for (s, i, end) in found {
            match hits.last_mut() {
                Some(h) if h.secret == s && i <= h.words.end => h.words.end = h.words.end.max(end),
                _ => hits.push(Hit {
                    secret: s,
                    words: i..end,
                    kind: LeakKind::Verbatim { words: 0 },
                }),
            }
        }
        for h in &mut hits {
            h.kind = LeakKind::Verbatim {
                words: h.words.len(),
            };
        }
        hits
    }

    /// The window lengths to look up: `run`, and each short secret's.
    fn lengths(&self) -> impl Iterator<Item = usize> + '_ {
        std::iter::once(self.run).chain(self.short.iter().copied())
    }

    /// The distinctive and marked terms the reply says and the player did not.
    fn term_hits(&self, r: &Words, p: &Words) -> Vec<Hit> {
        let theirs: FxHashSet<&str> = p.words.iter().map(|w| base(&w.key)).collect();
        let mut hits = Vec::new();
        for (i, w) in r.words.iter().enumerate() {
            for t in self.terms.get(base(&w.key)).into_iter().flatten() {
                let end = i + t.keys.len();
                let said = r
                    .words
                    .get(i..end)
                    .is_some_and(|ws| ws.iter().zip(&t.keys).all(|(a, b)| base(&a.key) == b));
                if !said || t.keys.iter().all(|k| theirs.contains(k.as_str())) {
                    continue;
                }
                let kind = match &t.marked {
                    Some(phrase) => LeakKind::Marked {
                        phrase: phrase.clone(),
                    },
                    None => LeakKind::Distinctive {
                        term: t.display.clone(),
                    },
                };
                hits.push(Hit {
                    secret: t.secret,
                    words: i..end,
                    kind,
                });
            }
        }
        hits
    }

    /// Tells the guard the players now know `text` (a reply the GM let stand, a revealed
    /// secret read aloud): its runs and words stop counting, marked phrases included.
    pub fn learn(&mut self, text: &str) {
        let w = Words::of(text);
        let lengths: Vec<usize> = self.lengths().collect();
        for n in lengths {
            for (_, h) in w.windows(n) {
                self.runs.remove(&h);
            }
        }
        let joined = w.joined();
        for list in self.terms.values_mut() {
            list.retain(|t| !joined.contains(&format!(" {} ", t.keys.join(" "))));
        }
        self.terms.retain(|_, list| !list.is_empty());
    }

    /// The distinctive and marked terms watched for, with the source of their secret,
    /// sorted: what a GM checks to see why a reply was flagged, or why one was not.
    pub fn terms(&self) -> Vec<(&str, &str)> {
        let mut out: Vec<(&str, &str)> = self
            .terms
            .values()
            .flatten()
            .map(|t| {
                let shown = t.marked.as_deref().unwrap_or(&t.display);
                (self.secrets[t.secret].source.as_str(), shown)
            })
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// The runs of capitalised words of a secret (two or more, `of`/`the` allowed between
/// them: `Chapel of the Lamp`), without a leading function word (`The`), and apart only by
/// spaces (`Corwin Tull, Brannock` is two names).
fn capitalised_phrases(w: &Words) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < w.words.len() {
        let x = &w.words[i];
        if !x.cap || is_function_word(&x.key) {
            i += 1;
            continue;
        }
        let (start, mut end, mut caps) = (i, i + 1, 1);
        let mut j = i + 1;
        while let Some(y) = w.words.get(j) {
            let gap = &w.nfc[w.words[j - 1].span.end..y.span.start];
            if !gap.chars().all(char::is_whitespace) {
                break;
            }
            if y.cap && !y.opens {
                caps += 1;
                end = j + 1;
            } else if !matches!(y.key.as_str(), "of" | "the") || y.opens {
                break;
            }
            j += 1;
        }
        if caps >= 2 {
            out.push(start..end);
        }
        i = end.max(i + 1);
    }
    out
}

/// The campaign's public canon as one text: every name, alias, role, summary, description,
/// thread line and event up to today of what is not the GM's alone. Secrets are kept apart
/// in canon, so none is in it.
pub fn public_canon(c: &crate::canon::Campaign) -> String {
    let gm = |path: &str| c.secrets.get(path).is_some_and(|g| g.whole.is_some());
    let mut out = String::new();
    let mut add = |s: &str| {
        out.push_str(s);
        out.push('\n');
    };
    add(&c.name);
    c.setting.as_deref().map(&mut add);
    for p in &c.pcs {
        add(&p.name);
        p.aliases.iter().for_each(|a| add(a));
        p.summary.as_deref().map(&mut add);
        p.inventory.iter().for_each(|i| add(i));
    }
    for n in c.npcs.iter().filter(|n| !gm(&n.source.path)) {
        add(&n.name);
        n.aliases.iter().for_each(|a| add(a));
        n.role.as_deref().map(&mut add);
        n.summary.as_deref().map(&mut add);
        n.voice.iter().for_each(|v| add(v));
    }
    for l in c.locations.iter().filter(|l| !gm(&l.source.path)) {
        add(&l.name);
        l.aliases.iter().for_each(|a| add(a));
        l.description.as_deref().map(&mut add);
    }
    for t in c.threads.iter().filter(|t| !gm(&t.source.path)) {
        add(&t.title);
        t.summary.iter().for_each(|s| add(s));
        t.next.as_deref().map(&mut add);
    }
    for e in c
        .events
        .iter()
        .filter(|e| c.day.is_none_or(|d| !e.numbered || e.day <= d))
    {
        add(&e.text);
    }
    for l in c.lore.iter().filter(|l| !gm(&l.source.path)) {
        add(&l.name);
        l.aliases.iter().for_each(|a| add(a));
        l.summary.as_deref().map(&mut add);
    }
    for s in &c.sessions {
        s.summary.as_deref().map(&mut add);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rstest::rstest;

    const PUBLIC: &str = "Mayor Aldous Crane runs the town of Saltreach from the harbour \
        office. Captain Ida Vell commands the watch. The Drowned Bell is a tavern by the \
        docks, where the fishermen drink.";

    fn secrets() -> Vec<SecretText> {
        vec![
            SecretText::new(
                "The mayor is really Vexhollow, a vampire who came over on the \
                 plague ship forty years ago and has fed on the harbour ever since.",
                "canon/npcs/mayor.md:14",
                Some("Mayor Aldous Crane"),
            ),
            SecretText::new(
                "Captain Vell keeps the stolen charts in a sealed chest under the \
                 floor of the Drowned Bell's cellar; she answers to ==the Black Lantern==.",
                "canon/npcs/ida-vell.md:9",
                Some("Captain Ida Vell"),
            ),
            SecretText::new(
                "The smugglers meet at the Saint Orrin Steps at low tide. The Drowned Bell \
                 is a tavern by the docks, and its cellar opens on the smugglers' tunnel.",
                "canon/locations/docks.md:20",
                None,
            ),
            SecretText::new(
                "The harbourmaster drowned her husband.",
                "canon/npcs/harbourmaster.md:3",
                None,
            ),
        ]
    }

    fn guard() -> Guard {
        Guard::new(&secrets(), PUBLIC)
    }

    fn kinds(leaks: &[Leak]) -> Vec<(String, String)> {
        leaks
            .iter()
            .map(|l| {
                let k = match &l.kind {
                    LeakKind::Verbatim { words } => format!("verbatim {words}"),
                    LeakKind::Distinctive { term } => format!("distinctive {term}"),
                    LeakKind::Marked { phrase } => format!("marked {phrase}"),
                };
                (l.source.clone(), k)
            })
            .collect()
    }

    #[rstest]
    #[case::verbatim_case_punctuation_lines(
        "\"Who CAME over on the PLAGUE-ship,\nforty years ago!\" she whispers.",
        &[("canon/npcs/mayor.md:14", "verbatim 10")]
    )]
    #[case::verbatim_curly_and_dashes(
        "You learn he has fed on the harbour — ever since — and you shiver.",
        &[("canon/npcs/mayor.md:14", "verbatim 7")]
    )]
    #[case::verbatim_mid_paragraph(
        "The rain drums. Vell looks away: she keeps the stolen charts in a sealed chest under the floor, and smiles.",
        &[("canon/npcs/ida-vell.md:9", "verbatim 11")]
    )]
    #[case::distinctive_name_in_paraphrase(
        "The old woman spits. \"Crane? His true name is Vexhollow's, and it is older than the docks.\"",
        &[("canon/npcs/mayor.md:14", "distinctive Vexhollow")]
    )]
    #[case::distinctive_phrase(
        "Smugglers? Try the saint orrin steps when the water is low.",
        &[("canon/locations/docks.md:20", "distinctive Saint Orrin Steps")]
    )]
    #[case::marked_phrase(
        "A card on the table bears the sign of the black lanterns.",
        &[("canon/npcs/ida-vell.md:9", "marked the Black Lantern")]
    )]
    #[case::a_short_secret_said_whole(
        "They say the Harbourmaster drowned her husband, you know.",
        &[("canon/npcs/harbourmaster.md:3", "verbatim 5")]
    )]
    #[case::accents_and_case(
        "VEXHÖLLOW, says the graffito.",
        &[("canon/npcs/mayor.md:14", "distinctive Vexhollow")]
    )]
    fn leaks_are_flagged(#[case] reply: &str, #[case] want: &[(&str, &str)]) {
        let got = kinds(&guard().check(reply, ""));
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        assert_eq!(got, want, "{reply}");
    }

    #[rstest]
    #[case::public_names_and_common_words(
        "Mayor Aldous Crane greets you at the harbour office; Captain Ida Vell nods from the door."
    )]
    #[case::secret_common_words_alone(
        "A vampire story, the fishermen say, about a ship and a chest of charts years ago."
    )]
    #[case::short_runs(
        "Forty years ago the harbour was smaller. The mayor is tired, and the floor is wet."
    )]
    #[case::public_run_in_a_secret(
        "The Drowned Bell is a tavern by the docks, where the fishermen drink."
    )]
    #[case::known_names_in_a_new_order("Captain Crane? No, Mayor Vell. You mix them up.")]
    #[case::a_short_secret_in_other_order("The harbourmaster's husband drowned, years ago.")]
    #[case::numbers_and_dice("Roll 3d6 at DC 14; the 40 crates hold 12 charts each.")]
    fn ordinary_replies_are_not_flagged(#[case] reply: &str) {
        assert_eq!(
            kinds(&guard().check(reply, "")),
            Vec::<(String, String)>::new()
        );
    }

    #[test]
    fn the_players_own_words_are_theirs() {
        let g = guard();
        let reply = "Vexhollow? The mayor laughs at the name.";
        assert_eq!(g.check(reply, "is the mayor called vexhollow?"), vec![]);
        assert_eq!(g.check(reply, "is the mayor a vampire?").len(), 1);
    }

    #[test]
    fn learned_text_stops_counting() {
        let mut g = guard();
        let reply = "The mayor is really Vexhollow, a vampire who came over on the plague ship.";
        assert!(!g.check(reply, "").is_empty());
        g.learn(reply);
        assert_eq!(g.check(reply, ""), vec![]);
        assert!(!g.check("Try the Saint Orrin Steps.", "").is_empty());
    }

    #[test]
    fn the_excerpt_and_entity_are_the_replys() {
        let leaks = guard().check("Ah, Vexhöllow.", "");
        assert_eq!(leaks.len(), 1);
        assert_eq!(leaks[0].excerpt, "Vexhöllow");
        assert_eq!(leaks[0].entity.as_deref(), Some("Mayor Aldous Crane"));
    }

    #[test]
    fn a_name_inside_a_recited_run_is_one_leak() {
        let leaks = guard().check(
            "The mayor is really Vexhollow, a vampire who came over.",
            "",
        );
        assert_eq!(
            kinds(&leaks),
            [("canon/npcs/mayor.md:14".into(), "verbatim 10".into())]
        );
    }

    #[test]
    fn the_watched_terms_are_listed() {
        let g = guard();
        let terms: Vec<&str> = g.terms().into_iter().map(|(_, t)| t).collect();
        assert_eq!(
            terms,
            [
                "Orrin",
                "Saint Orrin Steps",
                "the Black Lantern",
                "Vexhollow"
            ]
        );
    }

    #[rstest]
    #[case("==the Black Lantern== and ==Vault 3==", &["the Black Lantern", "Vault 3"])]
    #[case("a == b, but ==  == is empty", &[" b, but "])]
    #[case("==unclosed\n==", &[])]
    fn highlights_are_marked(#[case] text: &str, #[case] want: &[&str]) {
        let want: Vec<String> = want.iter().map(|s| s.trim().to_string()).collect();
        assert_eq!(marked_phrases(text), want);
    }

    #[test]
    fn function_words_are_sorted() {
        // `is_function_word` searches its list by halves.
        let mut probe = ["the", "your", "a", "with", "through"].to_vec();
        probe.retain(|w| !is_function_word(w));
        assert!(probe.is_empty());
    }

    /// Words for secrets: lower-case ASCII, never function words (a run of those never
    /// counts, by design).
    fn word() -> impl Strategy<Value = String> {
        "[a-z]{2,9}".prop_filter("a function word", |w| !is_function_word(w))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Any window of RUN_WORDS or more words of a secret, in any case, joined by any
        /// separators and put inside any text, is flagged with the secret's source.
        #[test]
        fn a_copied_window_is_flagged(
            secret in proptest::collection::vec(word(), RUN_WORDS..40),
            start in 0usize..40,
            extra in 0usize..8,
            upper in proptest::collection::vec(any::<bool>(), 48),
            seps in proptest::collection::vec(prop_oneof![
                Just(" "), Just(", "), Just("\n"), Just(" — "), Just("; "), Just("… "), Just(" \"")
            ], 48),
            before in "\\PC{0,60}",
            after in "\\PC{0,60}",
        ) {
            let start = start % (secret.len() - RUN_WORDS + 1);
            let end = (start + RUN_WORDS + extra).min(secret.len());
            let mut copied = String::new();
            for (k, w) in secret[start..end].iter().enumerate() {
                if k > 0 {
                    copied.push_str(seps[k]);
                }
                copied.push_str(&if upper[k] { w.to_uppercase() } else { w.clone() });
            }
            let s = SecretText::new(&secret.join(" "), "canon/x.md:1", None);
            let g = Guard::new(&[s], "");
            let reply = format!("{before} {copied} {after}");
            let leaks = g.check(&reply, "");
            prop_assert!(
                leaks.iter().any(|l| l.source == "canon/x.md:1"
                    && matches!(l.kind, LeakKind::Verbatim { words } if words >= end - start)),
                "{reply:?}: {leaks:?}"
            );
        }

        /// Splitting into words: every word's span is a slice of the NFC text whose own
        /// split is that one word.
        #[test]
        fn words_map_back_to_the_text(text in "\\PC{0,80}") {
            let w = Words::of(&text);
            for x in &w.words {
                prop_assert!(!x.key.is_empty());
                let again = Words::of(&w.nfc[x.span.clone()]);
                prop_assert_eq!(again.words.len(), 1, "{:?} in {:?}", x, text);
                prop_assert_eq!(&again.words[0].key, &x.key);
            }
        }
    }
}
