//! A deterministic synthetic campaign vault for the benchmarks.
//!
//! A crate of its own (`vaultdm-gen`: a dev-dependency, never published), so the criterion
//! benches, the examples (`gen_vault`, `gen_campaign`) and the integration tests share it
//! as an ordinary dependency instead of including its files. It uses only std: a
//! splitmix64 generator picks from word lists, so the same `(notes, seed)` always writes
//! byte-identical files.
//!
//! The mix follows a long-running campaign: a handful of PCs, ~40% NPCs, ~8% locations
//! (regions, districts and places nested under them), a few hundred threads in
//! `canon/open-threads.md`, a timeline of many days, and the rest lore in nested folders.
//! Notes average ~3 KB and use the variants the vault format accepts: synonym keys,
//! list / flow-list / comma-string values, locations written as slugs, names, aliases and
//! quoted or unquoted wikilinks, nested tags, inline `#tags`, Dataview fields, callouts,
//! `%% comments %%`, embeds and links with headings and aliases. Every name is unique, so
//! links resolve and `vaultdm check` reports nothing.

pub mod campaign;

use std::collections::HashSet;
use std::fmt::Write as _;
use std::io;
use std::path::Path;

/// Notes in the benchmark vault.
pub const DEFAULT_NOTES: usize = 10_000;
/// Seed of the benchmark vault.
pub const DEFAULT_SEED: u64 = 0x5e_ed0f_7a11;
/// A hidden file (skipped by the walk) that marks a folder as generated, so it may be replaced.
pub const MARKER: &str = ".vaultdm-bench-vault";

/// The bundled campaign's everyday nouns (a snowbound mining town), for the benches' text:
/// the memory and leak benches pick from all of them, the long campaign from the first 25.
pub const MINING_WORDS: &[&str] = &[
    "lamp",
    "shaft",
    "snow",
    "silver",
    "scrip",
    "strike",
    "bell",
    "ore",
    "mule",
    "rope",
    "powder",
    "ledger",
    "whisky",
    "stove",
    "boots",
    "telegraph",
    "rail",
    "furnace",
    "piano",
    "chapel",
    "rifle",
    "coat",
    "ribbon",
    "map",
    "key",
    "safe",
    "hymn",
    "crate",
    "ladder",
    "dust",
];

/// `from` followed by `then`, once per list (the benches' word lists built from shared
/// parts, in the order they were written).
pub fn joined(from: &[&'static str], then: &[&[&'static str]]) -> Vec<&'static str> {
    let mut out = from.to_vec();
    for part in then {
        out.extend_from_slice(part);
    }
    out
}

/// splitmix64: tiny, fast and good enough to pick words.
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `p` percent.
    pub fn pct(&mut self, p: usize) -> bool {
        self.below(100) < p
    }

    /// One word of a list.
    pub fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

/// What was written.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// Markdown notes written.
    pub notes: usize,
    /// Bytes of those notes.
    pub note_bytes: u64,
    /// Bytes of every file written (notes, `vaultdm.toml`, JSON, attachments).
    pub total_bytes: u64,
    /// PC notes (one of them retired).
    pub pcs: usize,
    /// NPC notes.
    pub npcs: usize,
    /// Location notes.
    pub locations: usize,
    /// Lore notes.
    pub lore: usize,
    /// Threads in `canon/open-threads.md`.
    pub threads: usize,
    /// Days in `canon/timeline.md`.
    pub days: usize,
    /// Events in `canon/timeline.md`.
    pub events: usize,
}

const ONSETS: &[&str] = &[
    "b", "br", "c", "d", "dr", "f", "g", "gr", "h", "j", "k", "l", "m", "n", "p", "r", "s", "st",
    "t", "th", "v", "w", "z", "ash", "bel", "cor", "el", "mar", "or", "quel", "sar", "tal", "ul",
    "ves", "yr",
];
const VOWELS: &[&str] = &["a", "e", "i", "o", "u", "ae", "ei", "ia", "ou", "y"];
const CODAS: &[&str] = &[
    "", "", "", "n", "r", "l", "s", "th", "nd", "rk", "ss", "m", "x", "ck", "lt", "rn", "ve",
];
const HONORIFICS: &[&str] = &[
    "Captain", "Sister", "Brother", "Old", "Lord", "Lady", "Doctor", "Mother", "Sergeant", "Master",
];
const ADJ: &[&str] = &[
    "Ashen",
    "Brass",
    "Copper",
    "Crimson",
    "Drowned",
    "Gilded",
    "Grey",
    "Hollow",
    "Iron",
    "Silent",
    "Silver",
    "Sunken",
    "Tallow",
    "Velvet",
    "Weeping",
    "Winter",
    "Broken",
    "Burning",
    "Crooked",
    "Gentle",
    "Hanged",
    "Laughing",
    "Lonely",
    "Painted",
    "Pale",
    "Quiet",
    "Rusted",
    "Salted",
    "Scarlet",
    "Sleeping",
    "Thorned",
    "Twice-Born",
    "Veiled",
    "Wandering",
    "Whispering",
    "Wicked",
];
const NOUN: &[&str] = &[
    "Anchor", "Bell", "Candle", "Crow", "Crown", "Eel", "Fox", "Gate", "Hand", "Harp", "Heron",
    "Key", "Lamp", "Lantern", "Mask", "Mill", "Moth", "Needle", "Oak", "Owl", "Raven", "Rose",
    "Saint", "Serpent", "Spire", "Stag", "Thorn", "Tower", "Veil", "Widow", "Wolf", "Wren",
];
const PLACE_KINDS: &[&str] = &[
    "Market",
    "Docks",
    "Chapel",
    "Square",
    "Bridge",
    "Warehouse",
    "Stair",
    "Yard",
    "Gardens",
    "Baths",
    "Archive",
    "Foundry",
    "Lighthouse",
    "Almshouse",
    "Barracks",
    "Cistern",
    "Rookery",
];
const PLACE_TYPES: &[&str] = &[
    "tavern",
    "market",
    "temple",
    "docks",
    "manor",
    "shop",
    "ruin",
    "warehouse",
    "guildhall",
    "street",
    "bridge",
    "tower",
    "graveyard",
    "inn",
];
const REGION_KINDS: &[&str] = &["Ward", "District", "Reach", "Quarter", "Vale", "March"];
const LORE_KINDS: &[&str] = &[
    "Accord",
    "Compact",
    "Rebellion",
    "Schism",
    "Liturgy",
    "Codex",
    "Chronicle",
    "Charter",
    "Pact",
    "Heresy",
    "Feast",
    "Plague",
    "Treaty",
    "Ballad",
    "Order",
    "Society",
];
const LORE_FOLDERS: &[&str] = &[
    "factions",
    "history",
    "religion",
    "bestiary",
    "artifacts",
    "rumours",
    "songs",
    "customs",
    "families",
    "trade",
];
const REALMS: &[&str] = &[
    "north",
    "south",
    "coast",
    "old-empire",
    "underways",
    "isles",
];
const ROLES: &[&str] = &[
    "fence",
    "harbourmaster",
    "priest",
    "smuggler",
    "guard captain",
    "alchemist",
    "innkeeper",
    "moneylender",
    "scribe",
    "courier",
    "bosun",
    "gravedigger",
    "apothecary",
    "spy",
    "magistrate",
    "cartographer",
    "fortune teller",
    "blacksmith",
    "ropemaker",
    "tax collector",
    "bard",
    "street urchin",
    "archivist",
    "mercenary",
    "noble",
    "ferryman",
    "tinker",
    "lamplighter",
];
const ROLE_KEYS: &[&str] = &["role", "occupation", "Role"];
const DISPOSITIONS: &[&str] = &[
    "friendly", "wary", "hostile", "neutral", "loyal", "scheming", "indebted", "unknown", "fond",
];
const DISPOSITION_KEYS: &[&str] = &["disposition", "relationship", "attitude"];
const LOCATION_KEYS: &[&str] = &[
    "location",
    "location",
    "location",
    "loc",
    "current_location",
];
const PARENT_KEYS: &[&str] = &["parent", "parent", "region", "district"];
const TRAITS: &[&str] = &[
    "Speaks in clipped sentences and never uses a name twice",
    "Laughs too loudly at their own jokes",
    "Answers every question with a question",
    "Counts coins while talking, always twice",
    "Calls everyone \"friend\" in a way that sounds like a threat",
    "Hums old sea shanties under their breath",
    "Never sits with their back to a door",
    "Quotes scripture, usually wrongly",
    "Smells faintly of tar and cloves",
    "Lowers their voice before saying anything true",
    "Keeps a crow feather tucked behind one ear",
    "Taps the table three times before making a promise",
    "Refuses to say the name of the drowned god",
    "Talks to their cat as if it were a business partner",
];
const VOICES: &[&str] = &[
    "Gravelly, slow, pauses mid-sentence to sip tea.",
    "Bright and fast, finishes other people's sentences.",
    "Soft-spoken; makes you lean in to hear the threat.",
    "Booming parade-ground voice, even indoors.",
    "Dry, bored drawl that hides a sharp mind.",
    "Sing-song lilt, full of old harbour slang.",
];
const SUBJECTS: &[&str] = &[
    "The night watch",
    "A travelling tinker",
    "Half the harbour",
    "Someone in the guild",
    "Every dockhand",
    "The council",
    "A masked courier",
    "The temple choir",
    "Two smugglers",
    "The old families",
    "A drunk sailor",
    "The lamplighters",
];
const VERBS: &[&str] = &[
    "swears that",
    "whispers that",
    "once claimed that",
    "will not admit that",
    "keeps a ledger proving that",
    "heard at the market that",
    "is certain that",
    "sold the rumour that",
];
const CLAUSES: &[&str] = &[
    "the tithe money ends up with {}",
    "{} pays for silence in silver",
    "the bells ring wrong whenever {} is near",
    "the old road past {} floods every spring",
    "nobody has seen the cellar under {} in years",
    "{} still owes a debt to the drowned god",
    "the last letter from {} was written in a stranger's hand",
    "the fire at {} was no accident",
    "{} keeps a second set of books",
    "a door under {} opens only at low tide",
];
const PHRASES: &[&str] = &[
    "the old lighthouse",
    "the harbour master's widow",
    "the drowned chapel",
    "the night market",
    "the salt tax",
    "the eastern breakwater",
    "the guild of lamplighters",
    "the last tide-priest",
];
const TAILS: &[&str] = &[
    "",
    "",
    " and nobody believes it",
    " before the winter feast",
    " for the third year running",
    ", though the proof went missing",
    " and the watch looks the other way",
];
const RELATIONS: &[&str] = &[
    "owes a favour",
    "old rival",
    "sworn enemy",
    "former lover",
    "business partner",
    "blackmails them",
    "sibling, estranged",
    "pays them for news",
];
const ITEMS: &[&str] = &[
    "silvered dagger",
    "rope (50 ft)",
    "thieves' tools",
    "healing potion",
    "lockpicks",
    "grappling hook",
    "signet ring",
    "forged writ of passage",
    "spyglass",
    "bag of caltrops",
];
const PC_CLASSES: &[&str] = &["Rogue", "Wizard", "Fighter", "Cleric", "Bard", "Ranger"];
const PCS: &[&str] = &[
    "Kestrel Ashdown",
    "Orrin Marrowind",
    "Sela Holloway",
    "Dorrik Stonebrand",
    "Wren Castellane",
    "Tobiah Greaves",
];
const TIMES: &[&str] = &[
    "dawn",
    "morning",
    "noon",
    "afternoon",
    "dusk",
    "evening",
    "midnight",
];
const TAGS: &[&str] = &[
    "lore", "history", "faction", "rumour", "secret", "religion", "mystery", "politics", "trade",
];

/// One named note the generator links to.
#[derive(Debug, Clone)]
struct Ent {
    name: String,
    slug: String,
    /// Vault-relative path with `.md`.
    path: String,
    aliases: Vec<String>,
}

/// A slug like vaultdm's: lower-case alphanumerics joined by dashes, apostrophes dropped.
fn slug(s: &str) -> String {
    let mut out = String::new();
    let mut dash = false;
    for c in s.to_lowercase().chars() {
        if c.is_alphanumeric() {
            if dash && !out.is_empty() {
                out.push('-');
            }
            dash = false;
            out.push(c);
        } else if c != '\'' {
            dash = true;
        }
    }
    out
}

fn cap(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

struct Gen {
    rng: Rng,
    used: HashSet<String>,
    pcs: Vec<Ent>,
    npcs: Vec<Ent>,
    locations: Vec<Ent>,
    lore: Vec<Ent>,
    summary: Summary,
}

impl Gen {
    fn word(&mut self) -> String {
        let syl = if self.rng.pct(80) { 2 } else { 3 };
        let mut w = String::new();
        for i in 0..syl {
            w.push_str(self.rng.pick(ONSETS));
            w.push_str(self.rng.pick(VOWELS));
            if i + 1 == syl {
                w.push_str(self.rng.pick(CODAS));
            }
        }
        cap(&w)
    }

    /// A name nobody else uses (as name, alias or file stem).
    fn unique(&mut self, mut make: impl FnMut(&mut Gen) -> String) -> String {
        for attempt in 0.. {
            let mut n = make(self);
            if attempt > 40 {
                n = format!("{n} {attempt}");
            }
            let key = n.to_lowercase();
            let s = slug(&n);
            if !self.used.contains(&key) && !self.used.contains(&s) {
                self.used.insert(key);
                self.used.insert(s);
                return n;
            }
        }
        unreachable!()
    }

    fn the_adj_noun(&mut self) -> String {
        format!("The {} {}", self.rng.pick(ADJ), self.rng.pick(NOUN))
    }

    fn ent(name: String, folder: &str, aliases: Vec<String>) -> Ent {
        let slug = slug(&name);
        Ent {
            path: format!("{folder}/{slug}.md"),
            name,
            slug,
            aliases,
        }
    }

    fn plan(&mut self, npcs: usize, locations: usize, lore: usize) {
        for (i, &name) in PCS.iter().enumerate() {
            self.used.insert(name.to_lowercase());
            self.used.insert(slug(name));
            let first = name.split(' ').next().unwrap_or(name).to_string();
            let aliases = if i % 2 == 0 { vec![first] } else { vec![] };
            self.pcs
                .push(Gen::ent(name.to_string(), "canon/pcs", aliases));
        }
        let regions = (locations / 12).max(3);
        for i in 0..locations {
            let name = self.unique(|g| {
                if i < regions {
                    format!("{} {}", g.word(), g.rng.pick(REGION_KINDS))
                } else if g.rng.pct(40) {
                    g.the_adj_noun()
                } else {
                    format!("{} {}", g.word(), g.rng.pick(PLACE_KINDS))
                }
            });
            let mut aliases = vec![];
            if self.rng.pct(20) {
                let a = self.unique(|g| format!("{} {}", g.rng.pick(ADJ), g.rng.pick(NOUN)));
                aliases.push(a);
            }
            self.locations
                .push(Gen::ent(name, "canon/locations", aliases));
        }
        for _ in 0..npcs {
            let name = self.unique(|g| {
                let base = format!("{} {}", g.word(), g.word());
                if g.rng.pct(12) {
                    format!("{} {base}", g.rng.pick(HONORIFICS))
                } else {
                    base
                }
            });
            let mut aliases = vec![];
            match self.rng.below(100) {
                0..=11 => aliases.push(self.unique(Gen::the_adj_noun)),
                12..=23 => aliases.push(self.unique(|g| g.word())),
                24..=29 => {
                    aliases.push(self.unique(|g| format!("{} the {}", g.word(), g.rng.pick(ADJ))))
                }
                _ => {}
            }
            self.npcs.push(Gen::ent(name, "canon/npcs", aliases));
        }
        let sessions = (lore / 25).max(1);
        let subfolders: Vec<String> = (0..12)
            .map(|_| format!("{}-papers", slug(&self.word())))
            .collect();
        for i in 0..lore {
            if i < sessions {
                let name = format!("Session {}", i + 1);
                self.used.insert(name.to_lowercase());
                let e = Ent {
                    path: format!("notes/sessions/session-{:03}.md", i + 1),
                    slug: format!("session-{:03}", i + 1),
                    name,
                    aliases: vec![],
                };
                self.lore.push(e);
                continue;
            }
            let name = self.unique(|g| match g.rng.below(4) {
                0 => format!("The {} {}", g.word(), g.rng.pick(LORE_KINDS)),
                1 => format!(
                    "{} of the {} {}",
                    g.rng.pick(LORE_KINDS),
                    g.rng.pick(ADJ),
                    g.rng.pick(NOUN)
                ),
                2 => format!("House {}", g.word()),
                _ => format!("{} {}", g.word(), g.rng.pick(LORE_KINDS)),
            });
            let realm = self.rng.pick(REALMS);
            let folder = self.rng.pick(LORE_FOLDERS);
            let dir = if self.rng.pct(50) {
                format!("lore/{realm}/{folder}")
            } else {
                format!(
                    "lore/{realm}/{folder}/{}",
                    subfolders[self.rng.below(subfolders.len())]
                )
            };
            let aliases = if self.rng.pct(15) {
                vec![self.unique(|g| g.word())]
            } else {
                vec![]
            };
            self.lore.push(Gen::ent(name, &dir, aliases));
        }
    }

    fn any_ent(&mut self) -> &Ent {
        let r = self.rng.below(100);
        let (v, k) = if r < 45 {
            (&self.npcs, self.rng.below(self.npcs.len()))
        } else if r < 70 {
            (&self.locations, self.rng.below(self.locations.len()))
        } else if r < 97 {
            (&self.lore, self.rng.below(self.lore.len()))
        } else {
            (&self.pcs, self.rng.below(self.pcs.len()))
        };
        &v[k]
    }

    /// A reference to some note, in one of the forms GMs write.
    fn link(&mut self) -> String {
        let form = self.rng.below(100);
        let e = self.any_ent().clone();
        match form {
            0..=44 => format!("[[{}]]", e.name),
            45..=59 => format!("[[{}|{}]]", e.slug, e.aliases.first().unwrap_or(&e.name)),
            60..=69 => format!("[[{}#History]]", e.name),
            70..=77 => format!("[[{}|{}]]", e.path.trim_end_matches(".md"), e.name),
            78..=84 => match e.aliases.first() {
                Some(a) => format!("[[{a}]]"),
                None => format!("[[{}]]'s", e.name),
            },
            _ => e.name.clone(),
        }
    }

    fn sentence(&mut self) -> String {
        let subj = self.rng.pick(SUBJECTS);
        let verb = self.rng.pick(VERBS);
        let clause = self.rng.pick(CLAUSES);
        let tail = self.rng.pick(TAILS);
        // About half the sentences link a note; the rest name one in plain text or name nothing.
        let l = match self.rng.below(10) {
            0..=4 => self.link(),
            5..=6 => self.any_ent().name.clone(),
            _ => self.rng.pick(PHRASES).to_string(),
        };
        format!("{subj} {verb} {}{tail}.", clause.replacen("{}", &l, 1))
    }

    fn paragraph(&mut self, sentences: usize) -> String {
        (0..sentences)
            .map(|_| self.sentence())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// A location reference for frontmatter, in one of the accepted forms.
    fn place_value(&mut self, loc: &Ent) -> String {
        match self.rng.below(7) {
            0 | 1 => loc.slug.clone(),
            2 => loc.name.clone(),
            3 => format!("\"[[{}]]\"", loc.name),
            4 => format!("[[{}]]", loc.slug),
            5 => loc
                .aliases
                .first()
                .cloned()
                .unwrap_or_else(|| loc.slug.clone()),
            _ => format!("\"[[{}|{}]]\"", loc.path.trim_end_matches(".md"), loc.name),
        }
    }

    fn list_value(&mut self, key: &str, items: &[String]) -> String {
        match self.rng.below(3) {
            0 => format!("{key}: [{}]\n", items.join(", ")),
            1 => {
                let mut s = format!("{key}:\n");
                for i in items {
                    let _ = writeln!(s, "  - {i}");
                }
                s
            }
            _ => format!("{key}: \"{}\"\n", items.join(", ")),
        }
    }

    fn aliases_fm(&mut self, aliases: &[String]) -> String {
        match aliases {
            [] => String::new(),
            [one] if self.rng.pct(30) => format!("alias: {one}\n"),
            many => self.list_value("aliases", many),
        }
    }

    fn tags_fm(&mut self, tags: &[String]) -> String {
        match tags {
            [one] if self.rng.pct(30) => format!("tag: {one}\n"),
            many => self.list_value("tags", many),
        }
    }

    /// History paragraphs, relationships and secrets until the note reaches `target` bytes.
    fn pad(&mut self, s: &mut String, target: usize) {
        s.push_str("\n## History\n");
        let mut paras = 0;
        while s.len() < target.saturating_sub(700) || paras == 0 {
            let n = self.rng.range(3, 5);
            let p = self.paragraph(n);
            let _ = write!(s, "\n{p}\n");
            paras += 1;
        }
        s.push_str("\n## Connections\n");
        for _ in 0..self.rng.range(2, 4) {
            let l = self.link();
            let _ = writeln!(s, "- {l} — {}", self.rng.pick(RELATIONS));
        }
        let l = self.link();
        let _ = writeln!(s, "\nFaction:: {l}");
        if self.rng.pct(40) {
            let p = self.paragraph(2);
            let _ = write!(s, "\n> [!secret] GM only\n> {p}\n");
        }
        if self.rng.pct(20) {
            let _ = write!(s, "\n%% TODO: {} %%\n", self.sentence());
        }
        if self.rng.pct(10) {
            s.push_str("\n```dataview\nTABLE status FROM \"canon/npcs\" WHERE location = this.file.link\n```\n");
        }
    }

    fn write(&mut self, root: &Path, rel: &str, text: &str) -> io::Result<()> {
        let p = root.join(rel);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d)?;
        }
        std::fs::write(&p, text)?;
        self.summary.total_bytes += text.len() as u64;
        if rel.ends_with(".md") {
            self.summary.notes += 1;
            self.summary.note_bytes += text.len() as u64;
        }
        Ok(())
    }

    fn pcs(&mut self, root: &Path, hot: [usize; 2]) -> io::Result<()> {
        for (i, e) in self.pcs.clone().iter().enumerate() {
            let retired = i == self.pcs.len() - 1;
            let loc = self.locations[if i == 3 { hot[1] } else { hot[0] }].clone();
            let mut s = String::from("---\n");
            let _ = writeln!(s, "name: {}", e.name);
            let _ = writeln!(s, "class: {}", PC_CLASSES[i % PC_CLASSES.len()]);
            let _ = writeln!(s, "level: {}", 3 + i);
            let _ = writeln!(s, "player: Player {}", i + 1);
            let _ = writeln!(s, "status: {}", if retired { "retired" } else { "active" });
            let hp_max = 18 + 7 * i;
            let (hk, mk) = if i % 2 == 0 {
                ("hp_current", "hp_max")
            } else {
                ("hp", "max_hp")
            };
            let _ = writeln!(s, "{hk}: {}\n{mk}: {hp_max}", hp_max - i * 2);
            let _ = writeln!(s, "location: {}", self.place_value(&loc));
            let _ = writeln!(
                s,
                "{}: {}",
                if i % 2 == 0 { "gold" } else { "gp" },
                20 + 13 * i
            );
            if i == 1 {
                s.push_str("conditions: [poisoned]\n");
            }
            let mut items: Vec<String> = (0..4)
                .map(|k| ITEMS[(i * 3 + k) % ITEMS.len()].to_string())
                .collect();
            items.push(format!("the Lantern of {}", self.word()));
            s.push_str(&self.list_value(if i % 2 == 0 { "inventory" } else { "items" }, &items));
            s.push_str(&self.aliases_fm(&e.aliases));
            s.push_str(&self.tags_fm(&["pc".into(), "party/active".into()]));
            let _ = write!(s, "---\n# {}\n\n{}\n", e.name, self.paragraph(3));
            let _ = write!(
                s,
                "\n## Goals\n- {}\n- {}\n",
                self.sentence(),
                self.sentence()
            );
            let target = 3500;
            self.pad(&mut s, target);
            self.write(root, &e.path, &s)?;
            self.summary.pcs += 1;
        }
        Ok(())
    }

    fn npcs(&mut self, root: &Path, hot: [usize; 2]) -> io::Result<()> {
        let nl = self.locations.len();
        for (i, e) in self.npcs.clone().iter().enumerate() {
            // A busy tavern for the main party, a second scene for the split PC, the
            // rest spread over the city.
            let loc = match i {
                _ if i % 200 == 7 => None,
                _ if i % 220 == 3 => Some(hot[0]),
                _ if i % 400 == 5 => Some(hot[1]),
                _ => Some(self.rng.below(nl)),
            };
            let mut s = String::from("---\n");
            let _ = writeln!(s, "name: {}", e.name);
            let _ = writeln!(s, "{}: {}", self.rng.pick(ROLE_KEYS), self.rng.pick(ROLES));
            let status = match self.rng.below(100) {
                0..=4 => "dead",
                5..=7 => "missing",
                8..=9 => "departed",
                10..=12 => "wounded",
                _ => "active",
            };
            let _ = writeln!(s, "status: {status}");
            if self.rng.pct(85) {
                let _ = writeln!(
                    s,
                    "{}: {}",
                    self.rng.pick(DISPOSITION_KEYS),
                    self.rng.pick(DISPOSITIONS)
                );
            }
            if let Some(l) = loc {
                let loc = self.locations[l].clone();
                let _ = writeln!(
                    s,
                    "{}: {}",
                    self.rng.pick(LOCATION_KEYS),
                    self.place_value(&loc)
                );
            }
            let voice_fm = self.rng.pct(25);
            if voice_fm {
                let _ = writeln!(s, "voice: \"{}\"", self.rng.pick(VOICES));
            }
            s.push_str(&self.aliases_fm(&e.aliases));
            let tags = match self.rng.below(4) {
                0 => vec!["npc".to_string()],
                1 => vec![format!(
                    "npc/{}",
                    if status == "dead" { "dead" } else { "alive" }
                )],
                2 => vec!["npc".to_string(), self.rng.pick(TAGS).to_string()],
                _ => vec![format!(
                    "city/npc/{}",
                    self.rng.pick(ROLES).replace(' ', "-")
                )],
            };
            s.push_str(&self.tags_fm(&tags));
            let _ = write!(s, "---\n# {}\n\n{}\n", e.name, self.paragraph(2));
            if !voice_fm || self.rng.pct(30) {
                let heading = if self.rng.pct(15) {
                    "Voice"
                } else {
                    "Personality"
                };
                let _ = writeln!(s, "\n## {heading}");
                for _ in 0..self.rng.range(2, 4) {
                    let _ = writeln!(s, "- {}.", self.rng.pick(TRAITS));
                }
            }
            let _ = write!(s, "\n## Description\n{}\n", self.paragraph(2));
            if self.rng.pct(30) {
                let _ = writeln!(s, "\n#{} #{}", self.rng.pick(TAGS), self.rng.pick(REALMS));
            }
            let target = self.rng.range(2200, 3800);
            self.pad(&mut s, target);
            self.write(root, &e.path, &s)?;
            self.summary.npcs += 1;
        }
        Ok(())
    }

    fn locations(&mut self, root: &Path, regions: usize) -> io::Result<()> {
        for (i, e) in self.locations.clone().iter().enumerate() {
            let mut s = String::from("---\n");
            let _ = writeln!(s, "name: {}", e.name);
            if i < regions {
                s.push_str("type: region\n");
                if i > 0 && self.rng.pct(30) {
                    let p = self.locations[self.rng.below(i)].clone();
                    let _ = writeln!(
                        s,
                        "{}: {}",
                        self.rng.pick(PARENT_KEYS),
                        self.place_value(&p)
                    );
                }
            } else {
                let _ = writeln!(s, "type: {}", self.rng.pick(PLACE_TYPES));
                // Mostly a region, sometimes another place (a room in a manor, a stall in a market).
                let p = if self.rng.pct(75) {
                    self.rng.below(regions)
                } else {
                    self.rng.below(i)
                };
                let p = self.locations[p].clone();
                let _ = writeln!(
                    s,
                    "{}: {}",
                    self.rng.pick(PARENT_KEYS),
                    self.place_value(&p)
                );
            }
            s.push_str(&self.aliases_fm(&e.aliases));
            let tag = if self.rng.pct(50) {
                "location"
            } else {
                "place/city"
            };
            s.push_str(&self.tags_fm(&[tag.to_string()]));
            let _ = write!(s, "---\n# {}\n\n", e.name);
            if self.rng.pct(20) {
                let _ = writeln!(s, "![[map-of-{}.png]]\n", e.slug);
            }
            let k = self.rng.range(3, 5);
            let _ = write!(s, "## Description\n{}\n", self.paragraph(k));
            let _ = writeln!(s, "\n## Features");
            for _ in 0..self.rng.range(2, 5) {
                let _ = writeln!(s, "- {}", self.sentence());
            }
            let target = self.rng.range(2200, 3800);
            self.pad(&mut s, target);
            self.write(root, &e.path, &s)?;
            self.summary.locations += 1;
        }
        Ok(())
    }

    fn lore(&mut self, root: &Path) -> io::Result<()> {
        for e in self.lore.clone() {
            let mut s = String::new();
            if !e.path.starts_with("notes/") && (self.rng.pct(90) || !e.aliases.is_empty()) {
                s.push_str("---\n");
                if self.rng.pct(50) {
                    let _ = writeln!(s, "title: {}", e.name);
                }
                if self.rng.pct(30) {
                    let _ = writeln!(
                        s,
                        "type: {}",
                        self.rng
                            .pick(&["faction", "event", "artifact", "deity", "custom"])
                    );
                }
                s.push_str(&self.aliases_fm(&e.aliases));
                let mut tags = vec![format!("lore/{}", self.rng.pick(TAGS))];
                if self.rng.pct(50) {
                    tags.push(self.rng.pick(TAGS).to_string());
                }
                s.push_str(&self.tags_fm(&tags));
                let _ = writeln!(
                    s,
                    "created: 2025-{:02}-{:02}",
                    self.rng.range(1, 12),
                    self.rng.range(1, 28)
                );
                s.push_str("---\n");
            }
            let k = self.rng.range(2, 4);
            let _ = write!(s, "# {}\n\n{}\n", e.name, self.paragraph(k));
            if self.rng.pct(40) {
                s.push_str("\n| Year | Event |\n|---|---|\n");
                for y in 0..self.rng.range(2, 5) {
                    let _ = writeln!(s, "| {} | {} |", 1100 + y * 7, self.link());
                }
            }
            let target = self.rng.range(2200, 3800);
            self.pad(&mut s, target);
            self.write(root, &e.path, &s)?;
            self.summary.lore += 1;
        }
        Ok(())
    }

    fn threads(&mut self, root: &Path, n: usize) -> io::Result<()> {
        // Share of each priority, in percent: a long campaign has resolved most of its threads.
        let shares = [
            ("Urgent", 3),
            ("High", 10),
            ("Medium", 22),
            ("Low", 20),
            ("Resolved", 45),
        ];
        let mut s = String::from("# Open Threads\n");
        for (section, pct) in shares {
            let _ = write!(s, "\n## {section}\n");
            for _ in 0..(n * pct / 100).max(1) {
                let title = self.unique(|g| match g.rng.below(3) {
                    0 => g.the_adj_noun(),
                    1 => format!("The {} {}", g.word(), g.rng.pick(LORE_KINDS)),
                    _ => format!("{} {}", g.rng.pick(ADJ), g.rng.pick(LORE_KINDS)),
                });
                let summary = self.sentence();
                let next = self.sentence();
                if self.rng.pct(50) {
                    let _ = write!(s, "### {title}\n{summary}\n→ Next: {next}\n\n");
                } else {
                    let arrow = if self.rng.pct(70) {
                        "→ Next:"
                    } else {
                        "Next:"
                    };
                    let _ = writeln!(s, "- **{title}** — {summary}\n  {arrow} {next}");
                }
                self.summary.threads += 1;
            }
        }
        self.write(root, "canon/open-threads.md", &s)
    }

    fn timeline(&mut self, root: &Path, days: usize) -> io::Result<()> {
        let mut s = String::from("# Timeline\n");
        for d in 1..=days {
            if d == days {
                let _ = write!(s, "\n## Day {d} — evening\n");
            } else {
                let _ = write!(s, "\n## Day {d}\n");
            }
            for _ in 0..self.rng.range(3, 7) {
                let _ = writeln!(s, "- {}", self.sentence());
                self.summary.events += 1;
            }
        }
        self.summary.days = days;
        self.write(root, "canon/timeline.md", &s)?;
        let time = TIMES[days % TIMES.len()];
        self.write(
            root,
            "canon/temporal-index.json",
            &format!("{{\"current_day\": {days}, \"current_time\": \"{time}\"}}\n"),
        )
    }
}

/// Writes a vault of `notes` Markdown notes (at least 100) into `root`, which should be
/// empty. The same `(notes, seed)` always gives the same files.
pub fn generate(root: &Path, notes: usize, seed: u64) -> io::Result<Summary> {
    let n = notes.max(100);
    let npcs = n * 40 / 100;
    let locations = n * 8 / 100;
    let lore = n - 2 - PCS.len() - npcs - locations;
    let threads = (n * 3 / 100).max(20);
    let days = (n / 50).max(10);
    let mut g = Gen {
        rng: Rng::new(seed),
        used: HashSet::new(),
        pcs: vec![],
        npcs: vec![],
        locations: vec![],
        lore: vec![],
        summary: Summary::default(),
    };
    g.plan(npcs, locations, lore);
    let regions = (locations / 12).max(3);
    // The party's tavern and the split-off PC's scene: places, not regions.
    let hot = [regions, regions + 1];
    std::fs::create_dir_all(root)?;
    g.write(root, MARKER, "generated by benches/gen; safe to delete\n")?;
    g.write(
        root,
        "vaultdm.toml",
        "name = \"The Drowned Bells\"\n\
         setting = \"A rain-soaked harbour city of guilds, smugglers and a god asleep under the bay.\"\n\n\
         [context]\nnpc_cap = 5\nrecent_events = 5\n",
    )?;
    g.write(
        root,
        ".obsidian/app.json",
        "{\"alwaysUpdateLinks\": true}\n",
    )?;
    g.write(
        root,
        "attachments/README.txt",
        "maps and handouts live here\n",
    )?;
    g.pcs(root, hot)?;
    g.npcs(root, hot)?;
    g.locations(root, regions)?;
    g.lore(root)?;
    g.threads(root, threads)?;
    g.timeline(root, days)?;
    Ok(g.summary)
}
