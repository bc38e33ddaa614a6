//! The typed campaign model: what the context builder selects from.

use serde::Serialize;
use std::fmt;

/// Where an entity was written: vault-relative file and 1-based line.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Default)]
pub struct Source {
    /// Vault-relative path.
    pub path: String,
    /// 1-based line.
    pub line: usize,
}

impl Source {
    /// A source at `path:line`.
    pub fn new(path: &str, line: usize) -> Self {
        Self {
            path: path.to_string(),
            line,
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.path, self.line.max(1))
    }
}

/// A player character.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pc {
    /// Identity: the note's vault path.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Other names.
    pub aliases: Vec<String>,
    /// Class, e.g. `Rogue`.
    pub class: Option<String>,
    /// Level.
    pub level: Option<i64>,
    /// The player's name.
    pub player: Option<String>,
    /// The note is the character's sheet (`…-character-sheet.md`): notes beside it are
    /// about the character.
    pub sheet: bool,
    /// Status word as written (`active` when missing).
    pub status: String,
    /// Whether the PC is in the active party.
    pub active: bool,
    /// Why the PC is out of the active party (status, a Retired folder, another group).
    pub inactive_reason: Option<String>,
    /// Why the note itself puts the PC out of play (status, `active: false`, a Retired
    /// folder), before groups are considered.
    #[serde(skip)]
    pub out_by_note: Option<String>,
    /// Current HP.
    pub hp_current: Option<i64>,
    /// Max HP.
    pub hp_max: Option<i64>,
    /// Armour class.
    pub ac: Option<i64>,
    /// Resolved location (a location's id).
    pub location: Option<String>,
    /// The location as written, when it resolved to no location.
    pub location_text: Option<String>,
    /// Gold pieces.
    pub gold: Option<i64>,
    /// Conditions (poisoned, prone…).
    pub conditions: Vec<String>,
    /// Carried items.
    pub inventory: Vec<String>,
    /// First paragraph of the note body.
    pub summary: Option<String>,
    /// Where it was written.
    pub source: Source,
    /// When the note was last saved (picks the active party when several groups exist).
    #[serde(skip)]
    pub modified: Option<std::time::SystemTime>,
}

/// A non-player character.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Npc {
    /// Identity: the note's vault path.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Other names.
    pub aliases: Vec<String>,
    /// Role or occupation.
    pub role: Option<String>,
    /// Status word as written (`active` when missing).
    pub status: String,
    /// Disposition towards the party.
    pub disposition: Option<String>,
    /// Resolved location (a location's id).
    pub location: Option<String>,
    /// The location as written, when it resolved to no location.
    pub location_text: Option<String>,
    /// Current HP (a boss the GM tracks).
    pub hp_current: Option<i64>,
    /// Max HP.
    pub hp_max: Option<i64>,
    /// Armour class.
    pub ac: Option<i64>,
    /// Voice lines: frontmatter `voice:`, else the first bullets of Personality / Voice.
    pub voice: Vec<String>,
    /// First paragraph of the note body.
    pub summary: Option<String>,
    /// Where it was written.
    pub source: Source,
}

impl Npc {
    /// True when the status keeps the NPC out of any scene (dead, departed, missing…).
    pub fn is_absent(&self) -> bool {
        is_absent_status(&self.status)
    }
}

/// Status words that keep an NPC out of a scene.
pub const ABSENT_STATUSES: &[&str] = &[
    "dead",
    "deceased",
    "departed",
    "missing",
    "gone",
    "destroyed",
    "absent",
    "killed",
    "slain",
    "left",
    "exiled",
    "banished",
    "imprisoned",
    "captured",
    "retired",
    "fled",
    "vanished",
    "disappeared",
];

/// Status words that keep a PC out of the active party.
pub const INACTIVE_PC_STATUSES: &[&str] = &[
    "inactive", "retired", "dead", "deceased", "absent", "away", "departed", "left", "benched",
    "former", "quit",
];

/// A status as GMs write it, as words: emoji, symbols and punctuation dropped, lower case
/// (`🚪 Departed!` -> `["departed"]`, `Alive?` -> `["alive"]`). A word after `not`/`no` is
/// dropped with it (`not dead`).
pub fn status_words(status: &str) -> Vec<String> {
    let lower = status.to_lowercase();
    let mut out = Vec::new();
    let mut negate = false;
    for w in lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        if matches!(w, "not" | "no" | "never") {
            negate = true;
            continue;
        }
        if !std::mem::take(&mut negate) {
            out.push(w.to_string());
        }
    }
    out
}

/// The word of `status` found in `list`, if any.
pub fn status_in(status: &str, list: &[&str]) -> Option<String> {
    status_words(status)
        .into_iter()
        .find(|w| list.contains(&w.as_str()))
}

/// True when `status` holds one of [`ABSENT_STATUSES`] (emoji and punctuation ignored).
pub fn is_absent_status(status: &str) -> bool {
    status_in(status, ABSENT_STATUSES).is_some()
}

/// A place.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Location {
    /// Identity: the note's vault path.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Other names.
    pub aliases: Vec<String>,
    /// Kind of place (`tavern`, `district`…).
    pub kind: Option<String>,
    /// The containing location's id.
    pub parent: Option<String>,
    /// `## Description`, else the first paragraph.
    pub description: Option<String>,
    /// Where it was written.
    pub source: Source,
}

/// Thread priority, most pressing first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    /// Must be dealt with now.
    Urgent,
    /// Important.
    High,
    /// Ongoing.
    Medium,
    /// Background.
    Low,
    /// Done: never injected.
    Resolved,
}

impl Priority {
    /// Reads a priority word (`urgent`, `High`, `resolved`, `closed`…).
    pub fn parse(s: &str) -> Option<Priority> {
        // The words are the vault's rule (`vault::threads::priority_rank`), shared with
        // write-back's reading of priority sections.
        Some(match crate::vault::threads::priority_rank(s)? {
            0 => Priority::Urgent,
            1 => Priority::High,
            2 => Priority::Medium,
            3 => Priority::Low,
            _ => Priority::Resolved,
        })
    }

    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Priority::Urgent => "urgent",
            Priority::High => "high",
            Priority::Medium => "medium",
            Priority::Low => "low",
            Priority::Resolved => "resolved",
        }
    }
}

/// An open storyline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Thread {
    /// Identity: `canon/open-threads.md#Title` or a thread note's path.
    pub id: String,
    /// Title.
    pub title: String,
    /// Other names (thread notes' aliases).
    pub aliases: Vec<String>,
    /// Priority.
    pub priority: Priority,
    /// Summary lines.
    pub summary: Vec<String>,
    /// The `→ Next:` step.
    pub next: Option<String>,
    /// Where it was written.
    pub source: Source,
}

/// A timeline event.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    /// Day number (for dated timelines, the entry's order).
    pub day: i64,
    /// How the timeline names the moment: `Day 6`, `24 Calistril 4710`, `2022-02-06`.
    pub when: String,
    /// True when `day` is a real day number (`## Day 6`), not an entry's order.
    #[serde(skip)]
    pub numbered: bool,
    /// What happened.
    pub text: String,
    /// Where it was written.
    pub source: Source,
}

/// A note that is none of the typed kinds, kept for names and mentions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Lore {
    /// Identity: the note's vault path.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Other names.
    pub aliases: Vec<String>,
    /// First paragraph.
    pub summary: Option<String>,
    /// Where it was written.
    pub source: Source,
}

/// A session note: recap, log, journal or prep. Context for memory, never an entity.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Session {
    /// Identity: the note's vault path.
    pub id: String,
    /// Title.
    pub name: String,
    /// Session number, when the note gives one.
    pub number: Option<i64>,
    /// Date played or in-game date, as written.
    pub date: Option<String>,
    /// Its recap, else its first paragraph.
    pub summary: Option<String>,
    /// With no recap section: how the note ends (where a log kept as bullets left the
    /// party), when that is not its first paragraph.
    pub ending: Option<String>,
    /// Ids of the PCs the note links to.
    pub pcs: Vec<String>,
    /// The place the note links to last in its text (where it left the party, as far as
    /// a note can tell): a location id.
    pub last_place: Option<String>,
    /// Not what was played: a note written before the session (prep, planning) or a copy
    /// of the session template whose recap is still empty.
    pub prep: bool,
    /// Where it was written.
    pub source: Source,
}

/// A party or group of PCs, from a party note (or the folders PCs are grouped in).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Party {
    /// Identity: the party note's path, or the shared folder.
    pub id: String,
    /// Name.
    pub name: String,
    /// Other names.
    pub aliases: Vec<String>,
    /// Ids of the member PCs.
    pub members: Vec<String>,
    /// Where it was written.
    pub source: Source,
}

/// Where a campaign keeps its current day and time: the one home the build reads them
/// from and write-back (`/day`, the DM's `time`) writes them to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub enum ClockHome {
    /// `canon/temporal-index.json`: a vault that has one, or vaultdm's own layout (a
    /// `canon/` folder).
    TemporalIndex,
    /// Frontmatter fields of a campaign or party note (`current_day: 12`, `date: 12 Mirtul
    /// 1492`).
    Note {
        /// The note.
        path: String,
        /// The key of the day or date, as the note writes it.
        day_key: String,
        /// The key of the time of day, when the note has one.
        time_key: Option<String>,
        /// The date as written, when it is not a day number vaultdm can count.
        date: Option<String>,
    },
    /// vaultdm's own state, `.vaultdm/clock.json`: for a vault that keeps no clock.
    #[default]
    Own,
}

/// The whole typed campaign.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Campaign {
    /// Campaign name.
    pub name: String,
    /// One setting line.
    pub setting: Option<String>,
    /// Current day from the temporal index.
    pub day: Option<i64>,
    /// Current time of day.
    pub time: Option<String>,
    /// Player characters (all, active or not), by path.
    pub pcs: Vec<Pc>,
    /// NPCs by path.
    pub npcs: Vec<Npc>,
    /// Locations by path.
    pub locations: Vec<Location>,
    /// Threads, in file order.
    pub threads: Vec<Thread>,
    /// Timeline events in order.
    pub events: Vec<Event>,
    /// The campaign's timeline ([`crate::canon::build::campaign_timeline`]'s one rule): the note its events
    /// are read from and write-back appends to (`None`: the vault has none).
    pub timeline: Option<String>,
    /// Where the current day and time are kept, read from and written to.
    pub clock: ClockHome,
    /// Other notes.
    pub lore: Vec<Lore>,
    /// Session notes, by path.
    pub sessions: Vec<Session>,
    /// Parties and groups of PCs.
    pub parties: Vec<Party>,
    /// The party in play (index into `parties`) and why it was chosen, when there are any.
    pub active_party: Option<(usize, String)>,
    /// What each note holds for the GM only, by note path ([`crate::vault::secret`]); notes
    /// with none are not listed.
    pub secrets: std::collections::BTreeMap<String, NoteGm>,
}

/// Why a piece of canon is the GM's ([`crate::vault::secret::Why`]).
pub use crate::vault::secret::Why as SecretWhy;

/// What one note holds for the GM only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct NoteGm {
    /// The whole note is the GM's, and why.
    pub whole: Option<SecretWhy>,
    /// When the whole note is the GM's: its first paragraphs as written
    /// ([`crate::vault::secret::WHOLE_BLOCKS`]), beside its marked pieces.
    pub body: Vec<Secret>,
    /// Its GM-only pieces, in file order.
    pub secrets: Vec<Secret>,
}

/// A piece of canon only the GM (and the DM) may know: the DM is to reveal it through
/// play, never recite it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Secret {
    /// The text, one clean line ([`crate::canon::text::PARAGRAPH`] characters at most).
    pub text: String,
    /// Why it is the GM's.
    pub why: SecretWhy,
    /// 1-based file line.
    pub line: usize,
}

impl Campaign {
    /// The latest session note that was played and says something: numbered ones by
    /// number, then by date, then by path. Prep notes and unfilled template copies are not
    /// played.
    pub fn latest_session(&self) -> Option<&Session> {
        self.sessions
            .iter()
            .filter(|s| s.summary.is_some() && !s.prep)
            .max_by(|a, b| {
                (a.number, a.date.as_deref(), &a.id).cmp(&(b.number, b.date.as_deref(), &b.id))
            })
    }

    /// A location by id.
    pub fn location(&self, id: &str) -> Option<&Location> {
        self.locations
            .binary_search_by(|l| l.id.as_str().cmp(id))
            .ok()
            .map(|i| &self.locations[i])
    }

    /// Active PCs.
    pub fn party(&self) -> impl Iterator<Item = &Pc> {
        self.pcs.iter().filter(|p| p.active)
    }

    /// The display name of a location id, or the raw text.
    pub fn place_name(&self, id: Option<&str>, text: Option<&str>) -> Option<String> {
        id.and_then(|i| self.location(i))
            .map(|l| l.name.clone())
            .or_else(|| text.map(str::to_string))
    }

    /// Whether `loc` is `ancestor` or lies inside it.
    pub fn is_within(&self, loc: &str, ancestor: &str) -> bool {
        let mut cur = Some(loc.to_string());
        let mut hops = 0;
        while let Some(c) = cur {
            if c == ancestor {
                return true;
            }
            hops += 1;
            if hops > 32 {
                return false;
            }
            cur = self.location(&c).and_then(|l| l.parent.clone());
        }
        false
    }
}
