//! Deciding what a note is — the one rule, used by the build, live reload, `check
//! --explain-types` and `init --adopt`.
//!
//! GMs lay out vaults their own way, so every signal is read, strongest first:
//!
//! 1. vaultdm's own folders (`canon/pcs` …);
//! 2. plugin notes that are never entities (Excalidraw drawings, Kanban boards, dashboards
//!    and index notes);
//! 3. frontmatter `type:` (or `category:`/`categories:`), with the words GMs use (`pc`,
//!    `player`, `npc`, `creature`, `locale`, `landmark`, `quest`, `mission`, `session`,
//!    `party`, `timeline` …), and flags such as `pc: true`;
//! 4. tags, where the type word is the tag itself (`#npc`), either segment of a two-part tag
//!    (`npc/dead`, `heist/pc`, `type/npc`), the first of a longer one, or a middle one followed
//!    only by status words (`heist/npc/dead`) — never a middle word that names something else
//!    (`heist/events/pc` is a session about the PCs, not a PC);
//! 5. a file-name prefix (`NPC - Eda Oweland`);
//! 6. the folders named in `vaultdm.toml` (`[folders]`);
//! 7. the nearest folder with a telling name, numbering stripped (`1. The Party`, `0 PCs`,
//!    `Session Notes`, `Quests/Completed`, `Entities/NPCs`), deepest first;
//! 8. otherwise lore.
//!
//! Session notes (recaps, logs, journals, prep) are context for memory, never PCs or NPCs.

use crate::config::FolderConfig;
use crate::names::folder_word;
use crate::vault::markdown::BlockKind;
use crate::vault::Note;

/// What a note describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NoteKind {
    /// A player character.
    Pc,
    /// A non-player character (or a creature with a statblock).
    Npc,
    /// A place.
    Location,
    /// A storyline or quest note.
    Thread,
    /// A session note: recap, log, journal, prep.
    Session,
    /// A party or group note: its links name the PCs who belong to it.
    Party,
    /// A timeline note (used when `canon/timeline.md` is missing).
    Timeline,
    /// Anything else: indexed for links and names, a card when mentioned.
    Lore,
    /// Not an entity at all: drawings, boards, dashboards, index notes.
    Meta,
    /// A real person at the table (a player), never a PC: the characters they play are.
    Player,
}

impl NoteKind {
    /// Plural label for listings (`PCs`, `session notes` …).
    pub fn label(self) -> &'static str {
        match self {
            NoteKind::Pc => "PCs",
            NoteKind::Npc => "NPCs",
            NoteKind::Location => "locations",
            NoteKind::Thread => "threads/quests",
            NoteKind::Session => "session notes",
            NoteKind::Party => "party/group notes",
            NoteKind::Timeline => "timeline",
            NoteKind::Lore => "lore",
            NoteKind::Meta => "not entities (drawings, boards, dashboards, indexes)",
            NoteKind::Player => "players (the people at the table)",
        }
    }

    /// One note of the kind (`a PC`), and the `type:` word that declares it.
    pub fn one(self) -> (&'static str, &'static str) {
        match self {
            NoteKind::Pc => ("a PC", "pc"),
            NoteKind::Npc => ("an NPC", "npc"),
            NoteKind::Location => ("a location", "location"),
            NoteKind::Thread => ("a quest", "quest"),
            NoteKind::Session => ("a session note", "session"),
            NoteKind::Party => ("a party/group note", "party"),
            NoteKind::Timeline => ("the timeline", "timeline"),
            NoteKind::Lore => ("lore", "lore"),
            NoteKind::Meta => ("not an entity", "index"),
            NoteKind::Player => ("a player (a real person)", "player"),
        }
    }
}

/// Why a note got its kind, for `check --explain-types` and `init --adopt`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Why {
    /// A vaultdm folder (`canon/npcs`) or a folder configured in `vaultdm.toml`.
    Configured(String),
    /// A plugin or index note.
    Plugin(&'static str),
    /// Frontmatter `type:` (the value) or a flag such as `pc: true`.
    Frontmatter(String),
    /// A tag.
    Tag(String),
    /// A file-name prefix.
    Prefix(String),
    /// The note's own name (a note named Timeline).
    Named(String),
    /// A folder of the path (vault-relative).
    Folder(String),
    /// What the body says (a members list, "one of the players", "played by").
    Body(String),
    /// Nothing told: lore.
    Default,
}

impl std::fmt::Display for Why {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Why::Configured(s) => write!(f, "folder {s}/ (configured)"),
            Why::Plugin(s) => write!(f, "{s}"),
            Why::Frontmatter(s) => write!(f, "frontmatter {s}"),
            Why::Tag(s) => write!(f, "tag #{s}"),
            Why::Prefix(s) => write!(f, "file name \"{s} - …\""),
            Why::Named(s) => write!(f, "a note named {s}"),
            Why::Folder(s) => write!(f, "folder {s}/"),
            Why::Body(s) => write!(f, "the text: {s}"),
            Why::Default => write!(f, "no type, tag or telling folder"),
        }
    }
}

/// The kind a type word (from `type:`, a tag or a file-name prefix) names.
pub fn word_kind(w: &str) -> Option<NoteKind> {
    let w = w.trim().to_lowercase();
    let w = w.trim_matches(|c: char| !c.is_alphanumeric());
    Some(match w {
        "pc"
        | "pcs"
        | "player"
        | "players"
        | "player-character"
        | "player character"
        | "player-characters"
        | "playercharacter"
        | "character-pc"
        | "hero"
        | "adventurer"
        | "spielercharakter"
        | "spielercharaktere"
        | "sc"
        | "pj"
        | "pjs"
        | "personnage joueur"
        | "personaje jugador"
        | "pg"
        | "personaggio giocante"
        | "bohater" => NoteKind::Pc,
        "npc"
        | "npcs"
        | "person"
        | "people"
        | "individual"
        | "creature"
        | "monster"
        | "villain"
        | "bbeg"
        | "non-player character"
        | "nonplayercharacter"
        | "ally"
        | "enemy"
        | "contact"
        | "familiar"
        | "companion"
        | "nsc"
        | "nichtspielercharakter"
        | "pnj"
        | "pnjs"
        | "png"
        | "pnp"
        | "personaje"
        | "personnage"
        | "personaggio" => NoteKind::Npc,
        "location" | "locations" | "place" | "places" | "locale" | "landmark" | "settlement"
        | "city" | "town" | "village" | "region" | "district" | "building" | "shop" | "tavern"
        | "inn" | "dungeon" | "poi" | "point of interest" | "area" | "room" | "continent"
        | "realm" | "plane" | "province" | "territory" | "kingdom" | "nation" | "lokace"
        | "ort" | "orte" | "stadt" | "dorf" | "lieu" | "ville" | "lugar" | "ciudad"
        | "ubicación" | "luogo" | "città" | "local" => NoteKind::Location,
        "thread" | "threads" | "quest" | "quests" | "storyline" | "mission" | "missions"
        | "subplot" | "plot" | "hook" | "objective" | "job" | "quête" | "mision" | "misión"
        | "missione" | "auftrag" | "aufgabe" => NoteKind::Thread,
        "session" | "sessions" | "session-note" | "session note" | "sessionnote"
        | "session-notes" | "sessionnotes" | "session_report" | "session-report"
        | "sessionjournal" | "sessionjournals" | "session-journal" | "recap" | "session-log"
        | "session log" | "journal" | "sitzung" | "séance" | "sesión" | "sesion" | "sessione"
        | "sessão" | "sesja" => NoteKind::Session,
        "party" | "group-pc" | "adventuring party" => NoteKind::Party,
        "timeline" => NoteKind::Timeline,
        _ => return None,
    })
}

/// Status words a tag may end with after its type word (`heist/npc/dead`).
const TAG_STATUSES: &[&str] = &[
    "alive", "dead", "deceased", "undead", "missing", "departed", "retired", "active", "inactive",
    "captured", "unknown", "former", "left", "gone", "friendly", "hostile", "neutral", "ally",
    "enemy",
];

/// The kind a tag names, by the rule in the module docs.
pub fn tag_kind(tag: &str) -> Option<NoteKind> {
    let segs: Vec<&str> = tag.split('/').filter(|s| !s.is_empty()).collect();
    let k = |s: &str| word_kind(s);
    match segs.as_slice() {
        [] => None,
        [one] => k(one),
        [a, b] => {
            if matches!(*a, "type" | "kind" | "category") {
                k(b)
            } else {
                k(a).or_else(|| k(b))
            }
        }
        [a, b, rest @ ..] => {
            if matches!(*a, "type" | "kind" | "category") {
                return k(b);
            }
            k(a).or_else(|| {
                k(b).filter(|_| {
                    rest.iter()
                        .all(|s| TAG_STATUSES.contains(&s.to_lowercase().as_str()))
                })
            })
        }
    }
}

/// The kind a folder name means (numbering stripped: `1. The Party`, `0 PCs`).
pub fn folder_kind(seg: &str) -> Option<NoteKind> {
    kind_of_folder_word(&folder_word(seg))
}

/// [`folder_kind`] of a name already made a [`folder_word`].
fn kind_of_folder_word(w: &str) -> Option<NoteKind> {
    Some(match w {
        "pcs"
        | "pc"
        | "players"
        | "player characters"
        | "player character"
        | "party"
        | "the party"
        | "party members"
        | "adventurers"
        | "heroes"
        | "characters pcs"
        | "pcs and players"
        | "spielercharaktere"
        | "spieler charaktere"
        | "helden"
        | "pjs"
        | "personnages joueurs"
        | "personajes jugadores"
        | "personaggi giocanti"
        | "pg"
        | "personaggi"
        | "bohaterowie"
        | "gruppe"
        | "groupe"
        | "grupo"
        | "gruppo" => NoteKind::Pc,
        "npcs"
        | "npc"
        | "people"
        | "non player characters"
        | "nonplayercharacters"
        | "characters"
        | "individuals"
        | "cast"
        | "persons"
        | "major npcs"
        | "important people"
        | "notable people"
        | "key people"
        | "important npcs"
        | "notable npcs"
        | "key npcs"
        | "notable figures"
        | "minor npcs"
        | "creatures"
        | "allies"
        | "enemies"
        | "villains"
        | "friend"
        | "enemy"
        | "friends"
        | "contacts"
        | "pnj"
        | "pnjs"
        | "png"
        | "pnp"
        | "nsc"
        | "nscs"
        | "nichtspielercharaktere"
        | "personnages non joueurs"
        | "personajes no jugadores"
        | "personaggi non giocanti"
        | "personen"
        | "personnages"
        | "personajes"
        | "familiars"
        | "companions" => NoteKind::Npc,
        "locations" | "location" | "places" | "place" | "atlas" | "geography" | "settlements"
        | "regions" | "cities" | "towns" | "poi" | "pois" | "points of interest" | "dungeons"
        | "buildings" | "districts" | "areas" | "localizaciones" | "world locations" | "orte"
        | "schauplätze" | "lieux" | "lugares" | "ubicaciones" | "luoghi" | "locais" | "miejsca"
        | "mapa" => NoteKind::Location,
        "quests"
        | "quest"
        | "threads"
        | "missions"
        | "open missions"
        | "completed missions"
        | "subplots"
        | "storylines"
        | "plots"
        | "plot threads"
        | "quests and encounters"
        | "faction quests"
        | "side quests"
        | "jobs"
        | "quêtes"
        | "misiones"
        | "missioni"
        | "aufträge"
        | "auftraege"
        | "plot"
        | "handlung"
        | "handlungsstränge"
        | "questy"
        | "zadania" => NoteKind::Thread,
        "sessions" | "session" | "session notes" | "session logs" | "session log"
        | "session journals" | "session journal" | "session summaries" | "session reports"
        | "sessions reports" | "recaps" | "journal" | "journals" | "transcripts"
        | "playing notes" | "session prep" | "session planning" | "preparations" | "prep"
        | "session recaps" | "adventure log" | "adventure logs" | "campaign log" | "sitzungen"
        | "spielsitzungen" | "séances" | "sesiones" | "sessioni" | "resoconti" | "resoconto"
        | "sessões" | "sesje" | "sesiones de juego" | "tagebuch" | "chroniken" => {
            NoteKind::Session
        }
        _ => return None,
    })
}

/// Whether a [`folder_word`] names a folder under which nothing is campaign canon (rules and
/// bestiary dumps).
fn is_reference_word(w: &str) -> bool {
    matches!(
        w,
        "reference" | "references" | "srd" | "rules" | "bestiary" | "reference content"
    )
}

fn under(path: &str, folder: &str) -> bool {
    let f = folder.trim_matches('/');
    if f.is_empty() {
        return false;
    }
    if f.is_ascii() && path.is_ascii() {
        // The common case, without lower-casing copies: ASCII case folding keeps lengths.
        return path.len() > f.len()
            && path.as_bytes()[f.len()] == b'/'
            && path[..f.len()].eq_ignore_ascii_case(f);
    }
    path.to_lowercase()
        .starts_with(&format!("{}/", f.to_lowercase()))
}

/// Stems of index notes and dashboards (after numbering is stripped).
fn is_index_stem(stem: &str) -> bool {
    let w = folder_word(stem);
    matches!(
        w.as_str(),
        "index"
            | "home"
            | "homepage"
            | "home page"
            | "dashboard"
            | "gm screen"
            | "dm screen"
            | "readme"
            | "moc"
            | "map of content"
            | "map of contents"
            | "table of contents"
            | "toc"
            | "contents"
            | "start here"
            | "overview"
            | "campaign dashboard"
            | "dm dashboard"
            | "gm dashboard"
    ) || w.ends_with(" index")
        || w.ends_with(" dashboard")
        || w.split(' ').any(|x| {
            matches!(
                x,
                "übersicht"
                    | "uebersicht"
                    | "inventory"
                    | "inventar"
                    | "inventaire"
                    | "inventario"
                    | "template"
                    | "vorlage"
                    | "plantilla"
                    | "modèle"
                    | "modello"
            )
        })
        || w.rsplit(' ')
            .next()
            .is_some_and(|x| matches!(x, "overview" | "aperçu" | "resumen" | "panoramica"))
            && w.contains(' ')
            && is_kind_plural(w.split(' ').next().unwrap_or(""))
}

/// A plural kind word that an overview note is named after (`NPC Overview`, `Quests
/// Overview`).
fn is_kind_plural(w: &str) -> bool {
    kind_of_folder_word(w).is_some() || word_kind(w).is_some()
}

/// Stems of a quest log kept as a checklist (`Quests`, `Current To Do List`, `Objectives`).
fn is_quest_log_stem(stem: &str) -> bool {
    matches!(
        folder_word(stem).as_str(),
        "quests"
            | "quest log"
            | "questlog"
            | "objectives"
            | "current objectives"
            | "current to do list"
            | "party to do list"
            | "party goals"
            | "goals"
            | "aufgaben"
            | "quêtes"
            | "misiones"
            | "missioni"
    )
}

fn plugin_note(note: &Note) -> Option<&'static str> {
    let fm = &note.frontmatter;
    if note.path.to_lowercase().ends_with(".excalidraw.md")
        || fm.get(&["excalidraw-plugin"]).is_some()
    {
        return Some("an Excalidraw drawing");
    }
    if fm.get(&["kanban-plugin"]).is_some() {
        return Some("a Kanban board");
    }
    if is_transcript(note) {
        return Some("a chat transcript in vaultdm's sessions/ folder");
    }
    let css = fm.list(&["cssclasses", "cssclass", "cssclasses"]);
    if css.iter().any(|c| c.to_lowercase().contains("dashboard")) || is_index_stem(&note.stem) {
        return Some("a dashboard or index note");
    }
    None
}

/// A chat transcript in the root `sessions/` folder, where vaultdm writes them (one whose
/// session log is gone, or copied from another vault): turns led by `**Player:**` and
/// `**DM:**`. What was said at the table is the sessions' memory, not canon.
fn is_transcript(note: &Note) -> bool {
    if !note.path.starts_with("sessions/") || note.path[9..].contains('/') {
        return false;
    }
    let (mut turns, mut other) = (0usize, 0usize);
    for b in &note.body.blocks {
        if matches!(b.kind, BlockKind::Heading(_)) {
            continue;
        }
        match b
            .strong_prefix
            .as_deref()
            .map(|p| p.trim_end_matches(':').trim())
        {
            Some("Player" | "DM") => turns += 1,
            _ if b
                .text
                .lines()
                .any(|l| l.starts_with("Player:") || l.starts_with("DM:")) =>
            {
                turns += 1
            }
            _ => other += 1,
        }
    }
    turns > 0 && turns >= other
}

/// Type words that name something that is not a PC, NPC, place, quest or session: the note
/// is lore (and no folder name overrides that).
fn is_lore_word(w: &str) -> bool {
    let w = w.trim().to_lowercase();
    // `project-note`, `item note`: the kind of note is its first word.
    let w = w
        .strip_suffix("-note")
        .or_else(|| w.strip_suffix(" note"))
        .unwrap_or(&w);
    matches!(
        w,
        "item"
            | "items"
            | "object"
            | "objects"
            | "artifact"
            | "artefact"
            | "weapon"
            | "armor"
            | "armour"
            | "equipment"
            | "loot"
            | "treasure"
            | "faction"
            | "factions"
            | "organization"
            | "organisation"
            | "organizations"
            | "guild"
            | "deity"
            | "god"
            | "gods"
            | "religion"
            | "spell"
            | "spells"
            | "lore"
            | "handout"
            | "map"
            | "calendar"
            | "campaign"
            | "adventure"
            | "act"
            | "scene"
            | "chapter"
            | "clue"
            | "encounter"
            | "race"
            | "class"
            | "rule"
            | "rules"
            | "feat"
            | "ability"
            | "language"
            | "history"
            | "culture"
            | "event"
            | "project"
            | "projects"
            | "inventory"
            | "vehicle"
            | "ship"
    )
}

/// A `type:` value (or one of several: `NPC, Undead`) as a kind.
fn frontmatter_kind(note: &Note) -> Option<(NoteKind, String)> {
    let fm = &note.frontmatter;
    for key in [
        "type",
        "category",
        "categories",
        "kind",
        "note-type",
        "notetype",
        // Metadata Menu's class of a note.
        "fileclass",
    ] {
        for v in fm.list(&[key]) {
            for part in v.split([',', '/', '|']) {
                let part = part.trim().trim_start_matches('#');
                if is_lore_word(part) {
                    return Some((NoteKind::Lore, format!("{key}: {part}")));
                }
                if let Some(k) = word_kind(part) {
                    // `type: notes` is a session only with a session's marks.
                    return Some((k, format!("{key}: {part}")));
                }
                if part.eq_ignore_ascii_case("notes")
                    && fm
                        .get(&["number", "session_number", "sessionnumber", "session"])
                        .is_some()
                {
                    return Some((NoteKind::Session, format!("{key}: {part} (numbered)")));
                }
            }
        }
    }
    let flag = |k: &str| {
        fm.text(&[k])
            .is_some_and(|v| matches!(v.to_lowercase().as_str(), "true" | "yes"))
    };
    if flag("pc") || flag("player_character") || flag("is_pc") {
        return Some((NoteKind::Pc, "pc: true".into()));
    }
    if flag("npc") {
        return Some((NoteKind::Npc, "npc: true".into()));
    }
    if flag("statblock") {
        return Some((NoteKind::Npc, "statblock: true".into()));
    }
    if fm
        .get(&["session_number", "sessionnumber", "session_date", "played"])
        .is_some()
    {
        return Some((NoteKind::Session, "a session number or date".into()));
    }
    None
}

/// A `Kind - Name` file-name prefix.
fn prefix_kind(stem: &str) -> Option<(NoteKind, String)> {
    let (head, _) = stem.split_once(" - ")?;
    let head = head.trim();
    (head.split_whitespace().count() == 1)
        .then(|| word_kind(head).map(|k| (k, head.to_string())))
        .flatten()
}

/// The kind `canon::build` gives a note: `canon/open-threads.md` and `canon/timeline.md` are
/// read as campaign-wide files, every other note by [`classify`].
pub fn kind_of(note: &Note, config: &crate::config::Config) -> NoteKind {
    if note.path == super::OPEN_THREADS || note.path == super::TIMELINE {
        NoteKind::Lore
    } else {
        classify(note, &config.folders)
    }
}

/// Decides the kind of a note (see the module docs).
pub fn classify(note: &Note, folders: &FolderConfig) -> NoteKind {
    classify_why(note, folders).0
}

/// How strongly a signal speaks for a kind. The kind with the most weight wins, so a
/// specific signal beats a generic one wherever each stands: a `player-character` tag over a
/// `person` tag, a `type/group` tag over a `place/waterdeep` tag, `player:` and `class:`
/// fields over a `party` tag.
mod weight {
    /// `type:` (or `category:` …) in the frontmatter, a flag such as `pc: true`, a
    /// `type/…` tag.
    pub(super) const DECLARED: u32 = 10;
    /// A folder named in `vaultdm.toml`.
    pub(super) const CONFIGURED: u32 = 8;
    /// A note that lists the PCs under a members heading; a note about a real player.
    pub(super) const GROUP: u32 = 8;
    /// A `Kind - Name` file-name prefix.
    pub(super) const PREFIX: u32 = 7;
    /// A tag whose word names the kind itself (`#npc`, `heist/pc`, `npc/dead`).
    pub(super) const TAG: u32 = 6;
    /// A `player:` field, or a character "played by" someone.
    pub(super) const PLAYER_FIELD: u32 = 5;
    /// The nearest folder with a telling name.
    pub(super) const FOLDER: u32 = 4;
    /// A generic tag word (`person`, `character`, `creature`) or PC-shaped fields (`class`
    /// with `level`).
    pub(super) const GENERIC: u32 = 3;
    /// A tag that files the note under a thing of that kind (`place/waterdeep`): where it
    /// is, not what it is.
    pub(super) const FILED_UNDER: u32 = 1;
}

/// Tag and type words that say little about which kind of thing a note is: a person may be
/// a PC or an NPC.
fn is_generic_word(w: &str) -> bool {
    matches!(
        w.trim().to_lowercase().as_str(),
        "person"
            | "people"
            | "individual"
            | "character"
            | "characters"
            | "creature"
            | "monster"
            | "contact"
            | "ally"
            | "enemy"
            | "player"
            | "players"
    )
}

/// Words for a person that say nothing of who plays them (tags, folders).
fn is_person_word(w: &str) -> bool {
    matches!(
        w.trim().to_lowercase().as_str(),
        "person" | "people" | "persons" | "individual" | "individuals" | "character" | "characters"
    )
}

/// One piece of evidence for a kind.
struct Signal {
    kind: NoteKind,
    weight: u32,
    why: Why,
}

/// Every signal of a note, weighed into one decision ([`classify_why`]).
#[derive(Default)]
struct Evidence {
    signals: Vec<Signal>,
}

impl Evidence {
    fn add(&mut self, kind: NoteKind, weight: u32, why: Why) {
        self.signals.push(Signal { kind, weight, why });
    }

    /// A sign of a person, PC or NPC alike (an NPC first, so that alone it reads as one).
    fn add_person(&mut self, weight: u32, why: Why) {
        self.add(NoteKind::Npc, weight, why.clone());
        self.add(NoteKind::Pc, weight, why);
    }

    /// The kind with the most weight (ties go to the kind whose first signal came first, in
    /// the order of the module docs), with its strongest reason.
    fn decide(&self) -> Option<(NoteKind, Why)> {
        let mut totals: Vec<(NoteKind, u32, usize)> = Vec::new();
        for (i, s) in self.signals.iter().enumerate() {
            match totals.iter_mut().find(|t| t.0 == s.kind) {
                Some(t) => t.1 += s.weight,
                None => totals.push((s.kind, s.weight, i)),
            }
        }
        let (kind, _, _) = totals
            .iter()
            .copied()
            .max_by(|a, b| a.1.cmp(&b.1).then(b.2.cmp(&a.2)))?;
        let why = self
            .signals
            .iter()
            .filter(|s| s.kind == kind)
            .max_by(|a, b| a.weight.cmp(&b.weight))
            .map(|s| s.why.clone())?;
        Some((kind, why))
    }
}

/// The weight a tag gives its kind: a type tag is declared, a kind word with only status or
/// kind words after it names the kind, a generic word less, and a kind word with a name
/// after it (`place/waterdeep/dock`) only files the note under such a thing.
fn tag_signal(tag: &str) -> Option<(NoteKind, u32)> {
    let segs: Vec<&str> = tag.split('/').filter(|s| !s.is_empty()).collect();
    let first = *segs.first()?;
    if matches!(first, "type" | "kind" | "category") {
        let w = segs.get(1)?;
        if is_lore_word(w) || is_group_word(w) {
            return Some((NoteKind::Lore, weight::DECLARED));
        }
        return word_kind(w).map(|k| (k, weight::DECLARED));
    }
    let k = tag_kind(tag)?;
    let at = segs
        .iter()
        .position(|s| word_kind(s) == Some(k))
        .unwrap_or(0);
    let rest = &segs[at + 1..];
    let named = rest.iter().any(|s| {
        let s = s.to_lowercase();
        !TAG_STATUSES.contains(&s.as_str()) && word_kind(&s).is_none()
    });
    Some(if named {
        (k, weight::FILED_UNDER)
    } else if is_generic_word(segs[at]) {
        (k, weight::GENERIC)
    } else {
        (k, weight::TAG)
    })
}

/// Words for an organised group that is not the party (`type/group/mercenary`).
fn is_group_word(w: &str) -> bool {
    matches!(
        w.trim().to_lowercase().as_str(),
        "group" | "groups" | "company" | "cult" | "order" | "band" | "gang" | "clan" | "house"
    )
}

/// How many blocks from the top the body signals read ("one of the players", "played by").
pub(crate) const BODY_BLOCKS_READ: usize = 40;

/// Headings under which a group note lists the party's members.
pub(crate) fn is_members_heading(h: &str) -> bool {
    let h = h.trim().trim_end_matches(':').to_lowercase();
    // `Founding Members`, `Original members`, `Current Members`.
    h.split_whitespace().last() == Some("members")
        || matches!(
            h.as_str(),
            "members"
                | "party members"
                | "core group"
                | "the party"
                | "party"
                | "roster"
                | "current members"
                | "active members"
                | "mitglieder"
                | "membres"
                | "miembros"
                | "membri"
        )
}

/// Phrases that say a note is about a real person at the table, in the languages GMs
/// write.
const PLAYER_PHRASES: &[&str] = &[
    "one of the players",
    "one of our players",
    "is a player at",
    "einer der spieler",
    "eine der spielerinnen",
    "un des joueurs",
    "une des joueuses",
    "uno de los jugadores",
    "una de las jugadoras",
    "uno dei giocatori",
    "una delle giocatrici",
    "um dos jogadores",
    "jeden z graczy",
];

/// Phrases that say a character is played by someone: the note is a PC.
const PLAYED_BY: &[&str] = &[
    "played by",
    "gespielt von",
    "joué par",
    "jouée par",
    "jugado por",
    "jugada por",
    "giocato da",
    "giocata da",
    "jogado por",
    "jogada por",
    "grany przez",
];

/// What the body says of the note: a members list (a group note), a real player, a
/// character played by someone.
fn body_signals(note: &Note, ev: &mut Evidence) {
    let members = note
        .body
        .sections
        .iter()
        .enumerate()
        .filter(|(_, s)| s.heading.as_deref().is_some_and(is_members_heading))
        .map(|(i, _)| {
            note.body
                .blocks
                .iter()
                .filter(|b| b.section as usize == i && b.kind == BlockKind::ListItem)
                .count()
        })
        .max()
        .unwrap_or(0);
    if members >= 2 {
        ev.add(
            NoteKind::Party,
            weight::GROUP,
            Why::Body("lists members".into()),
        );
    }
    let text = || {
        note.body
            .blocks
            .iter()
            .take(BODY_BLOCKS_READ)
            .filter(|b| !matches!(b.kind, BlockKind::Heading(_)))
            .map(|b| b.text.to_lowercase())
    };
    if let Some(p) = text().find_map(|t| PLAYER_PHRASES.iter().find(|p| t.contains(*p))) {
        ev.add(
            NoteKind::Player,
            weight::GROUP,
            Why::Body(format!("\"{p}\"")),
        );
    } else if let Some(p) = text().find_map(|t| PLAYED_BY.iter().find(|p| t.contains(*p))) {
        ev.add(
            NoteKind::Pc,
            weight::PLAYER_FIELD,
            Why::Body(format!("\"{p} …\"")),
        );
    }
}

/// PC-shaped frontmatter: a `player:`, or a class with a level.
fn field_signals(note: &Note, ev: &mut Evidence) {
    let fm = &note.frontmatter;
    let filled = |k: &[&str]| {
        fm.text(k)
            .is_some_and(|v| !v.trim().is_empty() && !crate::vault::placeholder::is_placeholder(&v))
    };
    if filled(&[
        "player",
        "played_by",
        "spieler",
        "joueur",
        "jugador",
        "giocatore",
    ]) {
        ev.add(
            NoteKind::Pc,
            weight::PLAYER_FIELD,
            Why::Frontmatter("player: (a character someone plays)".into()),
        );
    }
    if filled(&["class", "classes", "klasse", "classe", "clase"])
        && filled(&["level", "lvl", "stufe", "niveau", "nivel", "livello"])
    {
        ev.add(
            NoteKind::Pc,
            weight::GENERIC,
            Why::Frontmatter("class and level".into()),
        );
    }
}

/// [`classify`], with the reason.
pub fn classify_why(note: &Note, folders: &FolderConfig) -> (NoteKind, Why) {
    let (kind, why, _) = weigh(note, folders);
    (kind, why)
}

/// What makes a note's kind doubtful, for `check`: the kind won only by adding weak signals
/// up against a stronger single one (a `pc` folder and class fields over an `npc` tag), or
/// a PC whose only sign of being one is where it is filed (no class, level, player or hp).
pub fn doubt(note: &Note, folders: &FolderConfig) -> Option<String> {
    let (kind, why, ev) = weigh(note, folders);
    let ev = ev?;
    let best = |k: NoteKind| {
        ev.signals
            .iter()
            .filter(|s| s.kind == k)
            .max_by_key(|s| s.weight)
    };
    let won = best(kind)?;
    let entity = |k: NoteKind| {
        matches!(
            k,
            NoteKind::Pc | NoteKind::Npc | NoteKind::Location | NoteKind::Party | NoteKind::Player
        )
    };
    // A specific sign (a type, tag or prefix) for another kind of entity, outweighed only by
    // the sum of vaguer ones. A `party` tag on a PC says it is in the party: no doubt.
    if let Some(lost) = ev
        .signals
        .iter()
        .filter(|s| {
            s.kind != kind
                && s.weight > won.weight
                && s.weight >= weight::TAG
                && entity(s.kind)
                && !(s.kind == NoteKind::Party && kind == NoteKind::Pc)
        })
        .max_by_key(|s| s.weight)
    {
        return Some(format!(
            "read as {} by adding up weaker signs ({why}, …), though {} says {}; add `type: {}` (or the type you mean) to settle it",
            kind.one().0,
            lost.why,
            lost.kind.one().0,
            lost.kind.one().1
        ));
    }
    let fm = &note.frontmatter;
    let pc_fields = [
        "class",
        "classe",
        "clase",
        "klasse",
        "level",
        "lvl",
        "player",
        "played_by",
        "hp",
        "hp_max",
        "max_hp",
        "spieler",
        "joueur",
        "jugador",
        "giocatore",
    ];
    if kind == NoteKind::Pc && won.weight <= weight::FOLDER && fm.text(&pc_fields).is_none() {
        return Some(format!(
            "read as a PC only by {why}, with no class, level, player or hp: if it is not a player character, give it `type:` (npc, location, lore…)"
        ));
    }
    None
}

/// The kind, its strongest reason, and the evidence weighed (none when a vaultdm folder or
/// a plugin decided alone).
fn weigh(note: &Note, folders: &FolderConfig) -> (NoteKind, Why, Option<Evidence>) {
    let p = note.path.as_str();
    for (prefix, k) in [
        ("canon/pcs", NoteKind::Pc),
        ("canon/npcs", NoteKind::Npc),
        ("canon/locations", NoteKind::Location),
        ("canon/threads", NoteKind::Thread),
    ] {
        if under(p, prefix) {
            return (k, Why::Configured(prefix.into()), None);
        }
    }
    if let Some(what) = plugin_note(note) {
        return (NoteKind::Meta, Why::Plugin(what), None);
    }
    let configured = [
        (&folders.pcs, NoteKind::Pc),
        (&folders.npcs, NoteKind::Npc),
        (&folders.locations, NoteKind::Location),
        (&folders.threads, NoteKind::Thread),
        (&folders.sessions, NoteKind::Session),
    ]
    .into_iter()
    .find_map(|(list, k)| {
        list.iter()
            .find(|f| under(p, f))
            .map(|f| (k, Why::Configured(f.trim_matches('/').to_string())))
    });
    let dirs: Vec<&str> = p.split('/').collect();
    let dirs = &dirs[..dirs.len().saturating_sub(1)];
    // Each folder's word once: the rules below read it up to three times.
    let words: Vec<String> = dirs.iter().map(|d| folder_word(d)).collect();
    let session_folder = matches!(configured, Some((NoteKind::Session, _)))
        || words
            .iter()
            .any(|w| kind_of_folder_word(w) == Some(NoteKind::Session));
    // Under a rules or bestiary folder nothing is campaign canon by its folder alone.
    let reference = words.iter().any(|w| is_reference_word(w)) && configured.is_none();
    let mut ev = Evidence::default();
    // A to-do list is the party's among the session notes; elsewhere it is the GM's own
    // (prep tasks, a list of plugins to learn).
    let todo = session_folder
        && matches!(
            folder_word(&note.stem).as_str(),
            "to do" | "todo" | "to do list" | "todo list"
        );
    if (is_quest_log_stem(&note.stem) || todo)
        && note
            .body
            .blocks
            .iter()
            .filter(|b| b.checkbox().is_some())
            .count()
            >= 2
    {
        // As strong as a session folder, and weighed first: a quest log kept among the
        // session notes is still the quest log.
        ev.add(
            NoteKind::Thread,
            weight::DECLARED,
            Why::Named(format!("{} (a checklist of quests)", note.stem)),
        );
    }
    if note.is_sheet() && !session_folder {
        ev.add(
            NoteKind::Pc,
            weight::GROUP,
            Why::Named(format!("{} (a character sheet)", note.stem)),
        );
    }
    if let Some((k, why)) = frontmatter_kind(note) {
        // A session folder wins over a stray PC/NPC type on a recap.
        if !(session_folder && matches!(k, NoteKind::Pc | NoteKind::Npc)) {
            ev.add(k, weight::DECLARED, Why::Frontmatter(why));
        }
    }
    if !session_folder {
        for tag in &note.tags {
            if let Some((k, w)) = tag_signal(tag) {
                if k == NoteKind::Npc && w == weight::GENERIC && is_person_word(tag) {
                    // `#person`, `#character`: a PC as much as an NPC.
                    ev.add_person(w, Why::Tag(tag.to_string()));
                } else {
                    ev.add(k, w, Why::Tag(tag.to_string()));
                }
            } else if !tag.contains('/') && (is_lore_word(tag) || is_group_word(tag)) {
                ev.add(NoteKind::Lore, weight::TAG, Why::Tag(tag.to_string()));
            }
        }
        if let Some((k, head)) = prefix_kind(&note.stem) {
            ev.add(k, weight::PREFIX, Why::Prefix(head));
        }
        body_signals(note, &mut ev);
        field_signals(note, &mut ev);
    }
    // A folder named in `vaultdm.toml` comes after what the note says of itself.
    if let Some((k, why)) = configured {
        ev.add(k, weight::CONFIGURED, why);
    }
    if reference {
        ev.add(NoteKind::Lore, weight::FOLDER, Why::Default);
    } else if let Some((i, k)) = words
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, w)| kind_of_folder_word(w).map(|k| (i, k)))
    {
        // The party folder's own note (`The Party/The Party.md`, `Party/Party.md`) is the
        // group, not a PC.
        let stem = folder_word(&note.stem);
        let k = if k == NoteKind::Pc
            && (stem == words[i] || matches!(stem.as_str(), "party" | "the party" | "group"))
        {
            NoteKind::Party
        } else {
            k
        };
        // In a session folder, the folder decides (a recap tagged `pc` is still a recap).
        let w = if k == NoteKind::Session {
            weight::DECLARED
        } else {
            weight::FOLDER
        };
        if k == NoteKind::Npc && is_person_word(&words[i]) {
            // `Characters/`, `People/`: PCs and NPCs alike; what the note says decides.
            ev.add_person(w, Why::Folder(dirs[..=i].join("/")));
        } else {
            ev.add(k, w, Why::Folder(dirs[..=i].join("/")));
        }
    }
    if note.stem.eq_ignore_ascii_case("timeline") || folder_word(&note.stem).ends_with("timeline") {
        ev.add(
            NoteKind::Timeline,
            weight::FOLDER,
            Why::Named(note.stem.clone()),
        );
    }
    match ev.decide() {
        Some((k, why)) => (k, why, Some(ev)),
        None => (NoteKind::Lore, Why::Default, Some(ev)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("canon/npcs/a.md", "", NoteKind::Npc)]
    #[case("canon/locations/a.md", "type: tavern\n", NoteKind::Location)]
    #[case("notes/a.md", "type: NPC\n", NoteKind::Npc)]
    #[case("notes/a.md", "type: NPC, Undead\n", NoteKind::Npc)]
    #[case("notes/a.md", "tags: [heist/npc/dead]\n", NoteKind::Npc)]
    #[case("notes/a.md", "tags: [npc/dead]\n", NoteKind::Npc)]
    #[case("notes/a.md", "tags: heist/pc\n", NoteKind::Pc)]
    #[case("notes/a.md", "tags: [type/place/shop]\n", NoteKind::Location)]
    #[case(
        "notes/a.md",
        "tags: [heist/events/pc, timeline]\nplayed: 2022-02-06\n",
        NoteKind::Session
    )]
    #[case("notes/a.md", "tags: [heist/events/pc]\n", NoteKind::Lore)]
    #[case("notes/a.md", "tags: [place]\n", NoteKind::Location)]
    // The deepest folder that names a kind wins: people listed under a place.
    #[case("World/Places/Alrathion/Important People/Tunda.md", "", NoteKind::Npc)]
    #[case("Places/Alrathion/Notable NPCs/Tunda.md", "", NoteKind::Npc)]
    #[case("notes/a.md", "tags: [quest]\n", NoteKind::Thread)]
    #[case("notes/a.md", "tags: [party]\n", NoteKind::Party)]
    #[case("notes/a.md", "type: party\n", NoteKind::Party)]
    #[case("heist/People/a.md", "", NoteKind::Npc)]
    #[case("world/places/x/a.md", "", NoteKind::Location)]
    #[case("heist/sessions/s1.md", "", NoteKind::Session)]
    #[case("Session Notes/Session 3.md", "tags: [pc]\n", NoteKind::Session)]
    #[case("canon/pcs/a.md", "type: npc\n", NoteKind::Pc)]
    #[case("party/a.md", "tags: [npc]\n", NoteKind::Npc)]
    #[case("1. The Party/Rowen.md", "", NoteKind::Pc)]
    #[case("1. The Party/The Party.md", "", NoteKind::Party)]
    #[case("Quests/Completed/Old Job.md", "", NoteKind::Thread)]
    #[case("Characters/0 PCs/Bard.md", "", NoteKind::Pc)]
    #[case("Characters/Players/Asvir.md", "pc: true\n", NoteKind::Pc)]
    #[case("Characters/Ireena.md", "alias: Ireena\n", NoteKind::Npc)]
    #[case("Compendium/Party/Quests/Find Zybilna.md", "", NoteKind::Thread)]
    #[case("04-Missions/Completed-Missions/Spore.md", "", NoteKind::Thread)]
    #[case("05-Sessions-Reports/Session-01.md", "", NoteKind::Session)]
    #[case(
        "Archive/Session Summaries/Session-2022-02-04.md",
        "",
        NoteKind::Session
    )]
    #[case("reference/npcs/Strahd.md", "", NoteKind::Lore)]
    #[case("2. Mechanics/NPC - Eda Oweland.md", "", NoteKind::Npc)]
    #[case(
        "Drawings/Map.excalidraw.md",
        "excalidraw-plugin: parsed\n",
        NoteKind::Meta
    )]
    #[case("Boards/Todo.md", "kanban-plugin: basic\n", NoteKind::Meta)]
    #[case("Characters/00 Index.md", "", NoteKind::Meta)]
    #[case("1.Tools/GM Screen.md", "tags: [GMScreen]\n", NoteKind::Meta)]
    #[case("1.Tools/Homepage.md", "", NoteKind::Meta)]
    #[case("World/Timeline.md", "", NoteKind::Timeline)]
    #[case("notes/x.md", "type: timeline\n", NoteKind::Timeline)]
    #[case("notes/Session 5.md", "type: notes\nnumber: 5\n", NoteKind::Session)]
    #[case("Bestiary/Amber Ghast.md", "statblock: true\n", NoteKind::Npc)]
    #[case("The Party/Seasonal Tokens.md", "type: item\n", NoteKind::Lore)]
    #[case("NPCs/Harpers.md", "type: faction\n", NoteKind::Lore)]
    #[case("Notes/Ida.md", "fileClass: npc\n", NoteKind::Npc)]
    #[case(
        "PCs/Backpack Build.md",
        "type: project-note\ntags: [pc]\n",
        NoteKind::Lore
    )]
    fn classifies(#[case] path: &str, #[case] fm: &str, #[case] want: NoteKind) {
        let n = Note::parse(path, format!("---\n{fm}---\nbody\n").as_bytes());
        assert_eq!(classify(&n, &FolderConfig::default()), want, "{path} {fm}");
    }

    /// Every sign of a note is weighed: the table of the module docs, one row per rule, on
    /// whole notes (frontmatter and body).
    #[rstest]
    #[case::specific_tag_over_generic(
        "People/Ada.md",
        "---\ntags: [person, player-character]\n---\nAda.\n",
        NoteKind::Pc
    )]
    #[case::members_heading_makes_a_group(
        "Factions/The Crew.md",
        "---\ntags: [faction, player-character]\n---\n## Core group\n- [[Ada]]\n- [[Bo]]\n",
        NoteKind::Party
    )]
    #[case::founding_members(
        "factions/the-party.md",
        "---\ntags: [faction]\n---\n## Founding Members\n- [[ada]], elf\n- [[bo]], dwarf\n",
        NoteKind::Party
    )]
    #[case::a_real_player(
        "Players/Sam.md",
        "Sam is one of the players; he brings snacks.\n",
        NoteKind::Player
    )]
    #[case::played_by(
        "Characters/Ada.md",
        "Ada, a ranger played by [[Sam]].\n",
        NoteKind::Pc
    )]
    #[case::party_tag_with_player_and_class(
        "Party/Jinx.md",
        "---\ntags: [party]\nplayer: Kim\nclass: Sorcerer\n---\nJinx.\n",
        NoteKind::Pc
    )]
    #[case::class_and_level_in_a_characters_folder(
        "Characters/Bo.md",
        "---\nclass: Fighter\nlevel: 3\n---\nBo.\n",
        NoteKind::Pc
    )]
    #[case::filed_under_a_place_is_not_a_place(
        "NPCs/Mirt.md",
        "---\ntags: [npc, place/waterdeep]\n---\nMirt.\n",
        NoteKind::Npc
    )]
    #[case::quest_log_among_session_notes(
        "1. Session Notes/Current To Do List.md",
        "- [ ] Find Dane's Dad\n- [ ] Free the lady\n",
        NoteKind::Thread
    )]
    #[case::a_gms_own_todo_list(
        "9. Misc/To Do List.md",
        "- [ ] Learn Templater\n- [ ] Try Dataview\n",
        NoteKind::Lore
    )]
    #[case::a_chat_transcript(
        "sessions/2026-01-01.md",
        "# Session 1\n\n**Player:** We wait.\n\n**DM:** Rain falls.\n",
        NoteKind::Meta
    )]
    #[case::a_session_note_beside_transcripts(
        "sessions/Session 3.md",
        "# Session 3\n\nThe party crossed the ford.\n",
        NoteKind::Session
    )]
    #[case::overview_is_no_npc("NPCs/NPC Overview.md", "- [[Ada]]\n- [[Bo]]\n", NoteKind::Meta)]
    fn weighs(#[case] path: &str, #[case] text: &str, #[case] want: NoteKind) {
        let n = Note::parse(path, text.as_bytes());
        let (got, why) = classify_why(&n, &FolderConfig::default());
        assert_eq!(got, want, "{path}: {why}");
    }

    /// `check`'s `kind-doubt`: a specific sign outweighed by vague ones, a PC with nothing
    /// of a PC; no doubt where the signs agree or a `party` tag sits on a PC.
    #[rstest]
    #[case::npc_tag_outweighed(
        "Characters/Ada.md",
        "---\ntags: [npc]\nclass: Rogue\nlevel: 2\nplayer: Sam\n---\nAda.\n",
        true
    )]
    #[case::pc_by_folder_only("Party/Group Notes.md", "Notes of the group.\n", true)]
    #[case::a_plain_pc(
        "Party/Jinx.md",
        "---\ntags: [party]\nplayer: Kim\n---\nJinx.\n",
        false
    )]
    #[case::a_plain_npc("NPCs/Mirt.md", "---\ntags: [npc]\n---\nMirt.\n", false)]
    fn doubts(#[case] path: &str, #[case] text: &str, #[case] want: bool) {
        let n = Note::parse(path, text.as_bytes());
        let d = doubt(&n, &FolderConfig::default());
        assert_eq!(d.is_some(), want, "{path}: {d:?}");
    }

    #[test]
    fn configured_folders() {
        let n = Note::parse("cast/a.md", b"x");
        let f = FolderConfig {
            npcs: vec!["cast".into()],
            ..Default::default()
        };
        assert_eq!(classify(&n, &f), NoteKind::Npc);
        let n = Note::parse("Logbook/a.md", b"x");
        let f = FolderConfig {
            sessions: vec!["Logbook".into()],
            ..Default::default()
        };
        assert_eq!(classify(&n, &f), NoteKind::Session);
    }
}
