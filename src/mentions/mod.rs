//! Mentions: find every canon entity a text names.
//!
//! One [`Matcher`] is built per canon load: an aho-corasick automaton over every name,
//! alias, article-less name, unambiguous first name, thread title and carried item, all
//! case-folded. A match counts only on whole words ("Al" never fires inside "Always"),
//! the longest match wins ("Silent Circle Salon" over "Silent Circle"), and a name that is
//! also a common English word fires only when capitalised ("Grey" the ferryman, not grey fog)
//! — unless the player writes without capitals at all and the word is not among the most
//! common ones (`we meet weaver`, `jerrex sends pebble ahead`).
//!
//! Why it is a module of its own, just above `canon` and `names`: the context finds what a
//! player's message names, but write-back (`write/`: which entity a GM command means) and
//! memory (`memory/`: which entities a passage names) ask the same question of the same
//! canon. Kept here, none of them reaches up into another to ask it.
//!
//! The parts, by concern:
//! - `rules.rs` — which words of a name count: honorifics, articles, given names and
//!   surnames, head nouns (`the chapel`), vague nouns, common words that need a capital;
//! - `prepare.rs` — each entity's names folded into patterns, with the key (a hash of what
//!   they are made from) that tells a reload which entities changed;
//! - `index.rs` — the matcher's tables: patterns spread over [`index::SHARDS`] automata, who holds
//!   each short name and head noun, `[[link]]` keys; built, or patched after a reload;
//! - `find.rs` — a text searched: whole words, capitals, longest match, links.

mod find;
mod index;
mod prepare;
mod rules;

pub use index::Matcher;

// FxHash: keys are the campaign's own names; a rename rebuilds these maps while the GM waits.
type HashMap<K, V> = rustc_hash::FxHashMap<K, V>;
type HashSet<K> = rustc_hash::FxHashSet<K>;

/// A folded name as the matcher keeps it: inline up to 24 bytes, as almost every name is (a
/// 10k-note vault's matcher holds ~75k of them for as long as a chat runs).
type Text = compact_str::CompactString;

/// The entities holding a short name: almost always one, kept in place.
type Holders = smallvec::SmallVec<[Target; 1]>;

/// What a mention points at (indices into the campaign's vectors). Eight bytes: the
/// matcher holds one in every pattern, prepared name and link key (~100k on a 10k-note
/// vault), so the indices are 32-bit ([`Target::at`] makes one from a `usize`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    /// A player character.
    Pc(u32),
    /// An NPC.
    Npc(u32),
    /// A location.
    Location(u32),
    /// A thread.
    Thread(u32),
    /// An item carried by a PC: (pc, item index); a PC's items past the 65,536th are not
    /// matched.
    Item(u32, u16),
    /// A lore note.
    Lore(u32),
    /// A session note (matched only by its whole title or a link).
    Session(u32),
}

// The layout the matcher's memory figures rely on.
const _: () = assert!(std::mem::size_of::<Target>() == 8);

impl Target {
    /// An index into one of the campaign's vectors, as a target holds it.
    pub fn at(i: usize) -> u32 {
        u32::try_from(i).expect("fewer than 4 billion entities of a kind")
    }
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
