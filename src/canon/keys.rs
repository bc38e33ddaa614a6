//! The frontmatter keys each canon field is read from, in priority order: the one home of
//! the synonyms. [`mod@super::build`] reads a field from the first key a note has; write-back
//! (`crate::write`) edits that same key, and adds the first one when a note has none.

/// Current hit points (`hp: 17/27` carries the maximum too).
pub(crate) const HP: &[&str] = &[
    "hp_current",
    "hp",
    "current_hp",
    "hp_cur",
    "hit_points",
    "hitpoints",
];
/// Maximum hit points.
pub(crate) const HP_MAX: &[&str] = &["hp_max", "max_hp", "maxhp", "hpmax", "max_hit_points"];
/// Armour class.
pub(crate) const AC: &[&str] = &["ac", "armor_class", "armour_class", "armorclass"];
/// Where a PC or NPC is.
pub(crate) const LOCATION: &[&str] = &["location", "loc", "current_location"];
/// A PC's status.
pub(crate) const PC_STATUS: &[&str] = &["status", "state"];
/// An NPC's status (`alive: false` as some GMs write it).
pub(crate) const NPC_STATUS: &[&str] = &["status", "state", "alive"];
/// Gold pieces.
pub(crate) const GOLD: &[&str] = &["gold", "gp"];
/// Conditions (a list).
pub(crate) const CONDITIONS: &[&str] = &["conditions", "condition"];
/// Inventory (a list).
pub(crate) const INVENTORY: &[&str] = &["inventory", "items"];
/// An NPC's attitude to the party.
pub(crate) const DISPOSITION: &[&str] = &["disposition", "relationship", "attitude"];
/// An NPC's role.
pub(crate) const ROLE: &[&str] = &[
    "role",
    "occupation",
    "job",
    "title_role",
    "profession",
    "beruf",
    "klasse",
    "métier",
    "metier",
    "oficio",
    "profesión",
    "mestiere",
    "professione",
];
/// The group an NPC belongs to (shown with the role).
pub(crate) const FACTION: &[&str] = &[
    "faction",
    "factions",
    "affiliation",
    "allegiance",
    "organization",
    "organisation",
    "fraktion",
    "fraktionen",
    "faction_principale",
    "facción",
    "fazione",
];
/// A GM's own one-line summary of a note.
pub(crate) const SUMMARY: &[&str] = &[
    "summary",
    "description",
    "desc",
    "blurb",
    "tagline",
    "short_description",
    "beschreibung",
    "kurzbeschreibung",
    "résumé",
    "resume",
    "descripción",
    "descripcion",
    "resumen",
    "descrizione",
    "sommario",
];
/// Character level.
pub(crate) const LEVEL: &[&str] = &["level", "lvl"];
/// A thread note's priority.
pub(crate) const PRIORITY: &[&str] = &["priority", "urgency", "importance"];
/// A thread note's status.
pub(crate) const THREAD_STATUS: &[&str] = &["status", "state"];
/// A location's parent.
pub(crate) const PARENT: &[&str] = &["parent", "region", "district"];
/// The keys of a campaign or party note that hold the current day or date, in priority
/// order (read by `canon::build::clock_home`, written by `/day`). The last two, `day` and
/// `date`, count only in a party note or a note declared a campaign (`type: campaign`): a
/// home note's `date:` is most often the day the file was made.
pub(crate) const CLOCK_DAY: &[&str] = &[
    "current_day",
    "in_game_day",
    "game_day",
    "current_date",
    "in_game_date",
    "game_date",
    "campaign_date",
    "day",
    "date",
];
/// The keys beside [`CLOCK_DAY`] that hold the time of day (`/day` adds the first when the
/// note has none).
pub(crate) const CLOCK_TIME: &[&str] = &["current_time", "time_of_day", "time"];

/// Where a status kept as a tag is: the one rule canon reads it by and write-back changes it
/// by. The first segment of `tag` that is a status word canon knows (`npc/dead`,
/// `heist/npc/missing`, `#departed`) is the status; `alive` reads as `active`. Returns the
/// segment's index among the `/`-separated segments, and the status (lower case).
pub(crate) fn tag_status(tag: &str) -> Option<(usize, String)> {
    use super::model::{ABSENT_STATUSES, INACTIVE_PC_STATUSES};
    tag.trim_start_matches('#')
        .split('/')
        .enumerate()
        .find_map(|(i, seg)| {
            let seg = seg.to_lowercase();
            if seg == "alive" {
                Some((i, "active".to_string()))
            } else if ABSENT_STATUSES.contains(&seg.as_str())
                || INACTIVE_PC_STATUSES.contains(&seg.as_str())
            {
                Some((i, seg))
            } else {
                None
            }
        })
}

/// Tag segments after which the last segment is an NPC's attitude to the party
/// (`iff/positive`, `heist/attitude/hostile`).
pub(crate) const DISPOSITION_TAG_WORDS: &[&str] =
    &["iff", "attitude", "disposition", "relationship"];

/// Where an attitude kept as a tag is: the one rule canon reads it by and write-back changes
/// it by. A tag whose next-to-last segment is one of [`DISPOSITION_TAG_WORDS`] holds the
/// attitude in its last segment. Returns that segment's index and its text (as written).
pub(crate) fn tag_disposition(tag: &str) -> Option<(usize, String)> {
    let segs: Vec<&str> = tag.trim_start_matches('#').split('/').collect();
    let n = segs.len();
    (n >= 2
        && DISPOSITION_TAG_WORDS.contains(&segs[n - 2].to_lowercase().as_str())
        && !segs[n - 1].is_empty())
    .then(|| (n - 1, segs[n - 1].to_string()))
}
