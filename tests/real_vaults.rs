//! Vaults in the layouts real GMs use (all notes invented for these fixtures), read with zero
//! configuration: numbered folders and a home note (`real-numbered`), the people at the table
//! beside the characters they play (`real-players`), session notes in a root `sessions/`
//! folder (`real-sessions`), nested tags and quest notes (`real-tags`), plugin-heavy notes
//! with infoboxes, Admonitions, statblocks and Dataview (`real-infobox`), and a world built
//! before session zero with no PCs yet (`real-worldbuilding`).
//!
//! Each expectation is what the GM would expect from the notes. Where vaultdm reads a note
//! otherwise, the test stays as written and is `#[ignore]`d with the reason.

use crate::support;

use crate::support::{context, load_fixture, Scratch};
use assert_cmd::Command;
use vaultdm::canon::kind::classify_why;
use vaultdm::canon::{Loaded, NoteKind, Priority};
use vaultdm::context::{Mode, ModeChoice};

fn vaultdm() -> Command {
    let mut c = Command::cargo_bin("vaultdm").expect("bin");
    c.env_remove("VAULTDM_VAULT");
    c
}

/// `vaultdm check` on a fixture vault: its stdout.
fn check(vault: &str, explain_types: bool) -> String {
    let mut cmd = vaultdm();
    cmd.args(["check", "--vault"]).arg(support::fixture(vault));
    if explain_types {
        cmd.arg("--explain-types");
    }
    let out = cmd.output().expect("run check");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A note's kind as vaultdm built it (with [`classify_why`]'s reason in the message when it
/// is not `want`).
fn assert_kind(loaded: &Loaded, path: &str, want: NoteKind) {
    let i = loaded
        .vault
        .note_index(path)
        .unwrap_or_else(|| panic!("no note {path}"));
    let (k, why) = classify_why(&loaded.vault.notes[i], &loaded.config.folders);
    assert_eq!(
        loaded.built.kinds[i], want,
        "{path} (classify_why on the loaded note: {k:?}, {why})"
    );
}

/// Names of the PCs in the party in play.
fn party(loaded: &Loaded) -> Vec<&str> {
    loaded
        .built
        .campaign
        .party()
        .map(|p| p.name.as_str())
        .collect()
}

/// Titles of the storylines that are not resolved.
fn open_threads(loaded: &Loaded) -> Vec<&str> {
    loaded
        .built
        .campaign
        .threads
        .iter()
        .filter(|t| t.priority != Priority::Resolved)
        .map(|t| t.title.as_str())
        .collect()
}

/// The light context for a player's message.
fn light(loaded: &Loaded, message: &str) -> String {
    let inj = support::context_with(loaded, Some(message), ModeChoice::Light, None);
    assert_eq!(inj.mode, Mode::Light);
    inj.text
}

/// The one card line starting `- <head>` in a rendered context.
fn card<'a>(text: &'a str, head: &str) -> &'a str {
    let want = format!("- {head}");
    let found: Vec<&str> = text.lines().filter(|l| l.starts_with(&want)).collect();
    assert_eq!(found.len(), 1, "one card `{want}` in:\n{text}");
    found[0]
}

/// The lines under a `### <heading>` of the full context, up to the next heading.
fn section<'a>(text: &'a str, heading: &str) -> Vec<&'a str> {
    let head = format!("### {heading}");
    let mut lines = text.lines().skip_while(|l| !l.starts_with(&head));
    assert!(lines.next().is_some(), "no `{head}` in:\n{text}");
    lines
        .take_while(|l| !l.starts_with("### "))
        .filter(|l| !l.trim().is_empty())
        .collect()
}

// ------------------------------------------------------------------ 1. who is in the party

#[test]
fn pcs_tagged_player_character_and_person_are_pcs_and_the_core_group_is_the_party() {
    let loaded = load_fixture("real-numbered");
    // `1. Characters/` holds PCs and NPCs alike; the `player-character` tag decides, even
    // for Osk and Tamsin, who have no `player:` and no level (only `person` and the folder
    // would say NPC).
    for pc in ["Kestrel Vane", "Brother Osk", "Tamsin Reel"] {
        assert_kind(&loaded, &format!("1. Characters/{pc}.md"), NoteKind::Pc);
    }
    for npc in [
        "Magistrate Hollis Crane",
        "Old Mother Soot",
        "Captain Ferro Lask",
    ] {
        assert_kind(&loaded, &format!("1. Characters/{npc}.md"), NoteKind::Npc);
    }
    // The faction note listing the PCs under `## Core group` is the group, not a PC.
    assert_kind(
        &loaded,
        "1. Characters/Factions/The Cinder Wardens.md",
        NoteKind::Party,
    );
    let c = &loaded.built.campaign;
    assert!(c.pcs.iter().all(|p| p.name != "The Cinder Wardens"));
    assert_eq!(
        party(&loaded),
        ["Brother Osk", "Kestrel Vane", "Tamsin Reel"]
    );
    let (i, _why) = c.active_party.clone().expect("a party in play");
    assert_eq!(c.parties[i].name, "The Cinder Wardens");
    assert_eq!(c.parties[i].members.len(), 3);
    // `#npc/dead` is the status.
    let soot = c
        .npcs
        .iter()
        .find(|n| n.name == "Old Mother Soot")
        .expect("Soot");
    assert_eq!(soot.status, "dead");
    // The full context's party is the three PCs, and the dead widow is not in the scene.
    let full = context(&loaded, None).text;
    let lines = section(&full, "Party");
    assert_eq!(
        lines,
        [
            "- Brother Osk (Cleric) | HP 27/27 | at Cinderholt",
            "- Kestrel Vane (Ranger 4) | HP 31/34 | at Cinderholt",
            "- Tamsin Reel (Rogue) | HP 19/24 | at Cinderholt",
        ]
    );
    assert!(!section(&full, "NPCs present")
        .iter()
        .any(|l| l.contains("Soot")));
}

#[test]
fn a_cult_listing_its_npc_members_is_lore_with_a_card() {
    let loaded = load_fixture("real-numbered");
    // The cult's members are NPCs: a group note, but no party; the GM wants its card.
    assert_kind(
        &loaded,
        "1. Characters/Factions/The Ashen Choir.md",
        NoteKind::Party,
    );
    let c = &loaded.built.campaign;
    assert!(c.parties.iter().all(|p| p.name != "The Ashen Choir"));
    assert!(c.lore.iter().any(|l| l.name == "The Ashen Choir"));
    let text = light(&loaded, "what do we know about the Ashen Choir?");
    assert!(
        card(&text, "The Ashen Choir").contains("sings the buried dead back up"),
        "{text}"
    );
}

#[test]
fn players_are_people_at_the_table_and_their_characters_are_pcs() {
    let loaded = load_fixture("real-players");
    // "Sam is one of the players": a real person, even in `Players/` and even tagged `player`.
    for p in ["Sam", "Priya", "Jonah"] {
        assert_kind(&loaded, &format!("Players/{p}.md"), NoteKind::Player);
    }
    // The characters they play are PCs: by fact lines, by "played by [[Jonah]]" in a
    // `Characters/` folder, by `[pc, "#party"]` tags with `player:` and `class:`.
    for pc in [
        "Wren Halloway",
        "Orrin Tull",
        "Dagny Stormhold",
        "Fennick Bell",
    ] {
        assert_kind(&loaded, &format!("Characters/{pc}.md"), NoteKind::Pc);
    }
    let c = &loaded.built.campaign;
    let pcs: Vec<&str> = c.pcs.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        pcs,
        [
            "Dagny Stormhold",
            "Fennick Bell",
            "Orrin Tull",
            "Wren Halloway"
        ]
    );
    let dagny = c
        .pcs
        .iter()
        .find(|p| p.name == "Dagny Stormhold")
        .expect("Dagny");
    assert_eq!(
        (dagny.class.as_deref(), dagny.player.as_deref()),
        (Some("Fighter"), Some("Priya"))
    );
    // The group note listing `## Founding Members` is the party in play, with all four.
    assert_kind(&loaded, "Factions/The Lantern Company.md", NoteKind::Party);
    assert_eq!(
        party(&loaded),
        [
            "Dagny Stormhold",
            "Fennick Bell",
            "Orrin Tull",
            "Wren Halloway"
        ]
    );
    let (i, _) = c.active_party.clone().expect("a party in play");
    assert_eq!(c.parties[i].name, "The Lantern Company");
    assert_eq!(c.parties[i].members.len(), 4);
    // No player is ever in the party line, and a player's name brings no card.
    let full = context(&loaded, None).text;
    let lines = section(&full, "Party");
    assert_eq!(lines.len(), 4, "{full}");
    for p in ["Sam", "Priya", "Jonah"] {
        assert!(!lines.iter().any(|l| l.contains(p)), "{p} in {lines:?}");
    }
    let text = light(&loaded, "We wait for Sam and Priya before we start.");
    assert!(!text.contains("Mentioned"), "{text}");
}

/// One folder per player, each holding the character's sheet and notes about the character
/// (development, background, art prompts, the player's name on each): the sheets are the
/// party, named without "character sheet" or the player's aside.
#[test]
fn character_sheets_are_the_party_and_the_notes_beside_them_are_not() {
    let v = Scratch::empty("sheets");
    v.write(
        "01-CHARACTERS/andi-character/vaerenth-character-sheet.md",
        "---\nplayer: Andi\nlevel: 1\n---\n# Vaerenth (Andi's Character)\n\n**Class**: Ranger\n",
    )
    .write(
        "01-CHARACTERS/andi-character/vaerenth-development.md",
        "---\nplayer: Andi\n---\n# Vaerenth - Development\n\nShe learns to trust the pack.\n",
    )
    .write(
        "01-CHARACTERS/andi-character/resources/art-prompts.md",
        "---\nplayer: Andi\n---\n# Vaerenth art prompts\n\nA goblin ranger in moss green.\n",
    )
    .write(
        "01-CHARACTERS/carly-character/hart-briar-character-sheet.md",
        "---\nplayer: Carly\nlevel: 1\n---\n# Hart Briar\n\n**Class**: Bard\n",
    )
    .write(
        "01-CHARACTERS/carly-character/character-notes.md",
        "---\nplayer: Carly\n---\n# Character notes\n\nHart hums when nervous.\n",
    );
    let loaded = Loaded::load(&v.root).expect("loads");
    assert_eq!(party(&loaded), ["Vaerenth", "Hart Briar"]);
    let out = &loaded.built.campaign.pcs;
    let notes = out
        .iter()
        .find(|p| p.id.ends_with("character-notes.md"))
        .expect("the notes are read");
    assert!(!notes.active);
    assert!(
        notes
            .inactive_reason
            .as_deref()
            .is_some_and(|r| r.contains("Hart Briar")),
        "{notes:?}"
    );
}

#[test]
fn a_faction_with_one_pc_member_is_not_the_party() {
    // No party note: the party is all the PCs, whatever one faction says of one of them.
    let loaded = load_fixture("real-tags");
    assert_eq!(
        party(&loaded),
        ["Corin Thale", "Isolde Brack", "Pell Murrow"]
    );
    let c = &loaded.built.campaign;
    assert!(c.pcs.iter().all(|p| p.name != "The Night Ledger"));
    if let Some((i, why)) = &c.active_party {
        assert_eq!(c.parties[*i].members.len(), 3, "{why}");
    }
    let full = context(&loaded, None).text;
    assert_eq!(section(&full, "Party").len(), 3, "{full}");
    assert!(!full.contains("Group: The Night Ledger"), "{full}");

    // Beside the real party note, a faction holding one of its PCs is not the party either.
    let loaded = load_fixture("real-players");
    let c = &loaded.built.campaign;
    let (i, _) = c.active_party.clone().expect("a party in play");
    assert_eq!(c.parties[i].name, "The Lantern Company");
    assert_eq!(party(&loaded).len(), 4);
}

#[test]
fn check_says_no_party_for_a_vault_with_no_pcs() {
    // A world built before session zero: players listed, no characters made yet.
    let loaded = load_fixture("real-worldbuilding");
    assert!(loaded.built.campaign.pcs.is_empty());
    assert_kind(&loaded, "00 Table/Ana.md", NoteKind::Player);
    let out = check("real-worldbuilding", false);
    assert!(out.contains(".:0: warning[no-party]: no PC found"), "{out}");
    // Vaults with PCs do not get the warning.
    for v in [
        "real-numbered",
        "real-players",
        "real-sessions",
        "real-tags",
    ] {
        assert!(!check(v, false).contains("no-party"), "{v}");
    }
}

#[test]
fn explain_types_lists_the_people_at_the_table() {
    let out = check("real-players", true);
    assert!(
        out.contains("players (the people at the table) (3)"),
        "{out}"
    );
    assert!(out.contains("Jonah, Priya, Sam"), "{out}");
}

#[test]
fn explain_types_says_a_group_note_is_one_by_its_members_list() {
    let out = check("real-numbered", true);
    assert!(
        out.contains("the text: lists members — e.g. The Ashen Choir, The Cinder Wardens"),
        "{out}"
    );
    let out = check("real-players", true);
    assert!(
        out.contains("the text: lists members — e.g. The Iron Oath, The Lantern Company")
            || out.contains("the text: lists members — e.g. The Lantern Company"),
        "{out}"
    );
    // The public classifier agrees with the build on the loaded note.
    let loaded = load_fixture("real-numbered");
    let i = loaded
        .vault
        .note_index("1. Characters/Factions/The Cinder Wardens.md")
        .expect("note");
    let (k, _) = classify_why(&loaded.vault.notes[i], &loaded.config.folders);
    assert_eq!(k, NoteKind::Party);
}

// ------------------------------------------------------------------ 2. names

#[test]
fn the_file_name_is_the_name() {
    let loaded = load_fixture("real-infobox");
    let c = &loaded.built.campaign;
    let npcs: Vec<&str> = c.npcs.iter().map(|n| n.name.as_str()).collect();
    // `ida-marsh.md` with `# Ida Marsh` is Ida Marsh; `Grimble.md` with `title: Grimble the
    // Grey` is Grimble.
    assert_eq!(
        npcs,
        [
            "Bog Hag",
            "Grimble",
            "Harrow Oakes",
            "Sylvi Arden",
            "Ida Marsh"
        ]
    );
    let grimble = c
        .npcs
        .iter()
        .find(|n| n.name == "Grimble")
        .expect("Grimble");
    assert!(
        grimble.aliases.iter().any(|a| a == "Grimble the Grey"),
        "{:?}",
        grimble.aliases
    );
    // The title is matched in messages, and the card carries the file's name.
    let text = light(&loaded, "We ask Grimble the Grey for a riddle.");
    assert!(
        card(&text, "NPC Grimble").starts_with("- NPC Grimble - hedge wizard"),
        "{text}"
    );
    let text = light(&loaded, "we pay ida marsh the toll");
    assert!(
        card(&text, "NPC Ida Marsh").contains("toll bridge"),
        "{text}"
    );
    // `check` says the title differs, at its line.
    let out = check("real-infobox", false);
    assert!(
        out.contains("People/Grimble.md:2: warning[title-differs]: `title: Grimble the Grey` is not the file's name"),
        "{out}"
    );
    assert_eq!(out.matches("title-differs").count(), 1, "{out}");
}

#[test]
fn a_city_note_opening_with_a_history_heading_is_named_by_its_file() {
    let loaded = load_fixture("real-numbered");
    let c = &loaded.built.campaign;
    let places: Vec<&str> = c.locations.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(places, ["Cinderholt", "Emberford", "The Singed Goose"]);
    let full = context(&loaded, None).text;
    assert!(full.contains("### Location: Cinderholt\n"), "{full}");
    assert!(!full.contains("Location: History"), "{full}");
    // Its name is matched in messages.
    let text = light(&loaded, "We walk back to Cinderholt.");
    assert!(
        card(&text, "Place Cinderholt").contains("salt spring"),
        "{text}"
    );
}

#[test]
fn a_history_heading_is_no_name_players_use() {
    let loaded = load_fixture("real-numbered");
    let cinderholt = loaded
        .built
        .campaign
        .locations
        .iter()
        .find(|l| l.name == "Cinderholt")
        .expect("Cinderholt");
    assert!(
        !cinderholt.aliases.iter().any(|a| a == "History"),
        "{:?}",
        cinderholt.aliases
    );
    let text = light(&loaded, "Brother Osk tells the History of the Lamp.");
    assert!(!text.contains("Place Cinderholt"), "{text}");
}

// ------------------------------------------------------------------ 3. cards carry the facts

#[test]
fn a_destroyed_tavern_says_so_in_its_card() {
    let loaded = load_fixture("real-numbered");
    let text = light(&loaded, "we go to the Singed Goose");
    let goose = card(&text, "Place The Singed Goose");
    assert!(goose.contains("Destroyed in the fire of Year 3"), "{goose}");
    assert!(
        goose.contains("coaching inn on the Emberford road"),
        "{goose}"
    );
    // The tag line above it is no text.
    assert!(!goose.contains('#'), "{goose}");

    // The binary says the same.
    let out = vaultdm()
        .args(["context", "--vault"])
        .arg(support::fixture("real-numbered"))
        .args(["-m", "we go to the Singed Goose"])
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("- Place The Singed Goose: Destroyed in the fire of Year 3;"),
        "{stdout}"
    );
}

#[test]
fn an_infobox_occupation_is_the_npcs_role() {
    let loaded = load_fixture("real-infobox");
    let c = &loaded.built.campaign;
    let role = |name: &str| {
        c.npcs
            .iter()
            .find(|n| n.name == name)
            .and_then(|n| n.role.clone())
    };
    assert_eq!(role("Harrow Oakes").as_deref(), Some("Blacksmith"));
    assert_eq!(role("Sylvi Arden").as_deref(), Some("Herbalist"));
    // The `| Location |` row places them.
    let text = light(&loaded, "We walk to Millbrook.");
    let here = card(&text, "Place Millbrook");
    assert!(
        here.contains("Harrow Oakes") && here.contains("Sylvi Arden"),
        "{here}"
    );
    let text = light(&loaded, "I ask Harrow Oakes to mend my shield.");
    let harrow = card(&text, "NPC Harrow Oakes");
    assert!(
        harrow.starts_with(
            "- NPC Harrow Oakes - Blacksmith [Alive] | at Millbrook | Harrow shoes every horse"
        ),
        "{harrow}"
    );
    // An Admonition block is content.
    let text = light(&loaded, "We buy a tincture from Sylvi Arden.");
    let sylvi = card(&text, "NPC Sylvi Arden");
    assert!(
        sylvi.starts_with("- NPC Sylvi Arden - Herbalist [active] | at Millbrook"),
        "{sylvi}"
    );
    assert!(
        sylvi.contains("Sells a tincture that lets the drinker see in the dark"),
        "{sylvi}"
    );
    assert!(!sylvi.contains("| Race |"), "{sylvi}");
}

#[test]
fn fact_lines_and_infobox_rows_give_a_pcs_class() {
    let loaded = load_fixture("real-players");
    let wren = loaded
        .built
        .campaign
        .pcs
        .iter()
        .find(|p| p.name == "Wren Halloway")
        .expect("Wren");
    assert_eq!(wren.class.as_deref(), Some("Ranger"));
    let full = context(&loaded, None).text;
    assert!(
        section(&full, "Party").contains(&"- Wren Halloway (Ranger)"),
        "{full}"
    );
    // The `**Player:** Sam` line is never card text.
    let text = light(&loaded, "Wren counts the steps to the causeway.");
    let card = card(&text, "PC Wren Halloway");
    assert!(card.starts_with("- PC Wren Halloway (Ranger)"), "{card}");
    assert!(
        card.contains("Grew up guiding pilgrims across the Thornwick marshes"),
        "{card}"
    );
    for bad in ["Player: Sam", "Player - Sam", "Player Sam", "**"] {
        assert!(!card.contains(bad), "{bad:?} in {card}");
    }

    // An infobox's `| Class |` and `| Level |` rows on a PC.
    let loaded = load_fixture("real-infobox");
    let full = context(&loaded, None).text;
    assert!(
        section(&full, "Party").contains(&"- Marek Vos (Cleric 2) | HP 20/22 | at The Mill Wheel"),
        "{full}"
    );
}

#[test]
fn a_players_real_name_never_reaches_the_card() {
    let loaded = load_fixture("real-players");
    let text = light(&loaded, "Wren counts the steps to the causeway.");
    let card = card(&text, "PC Wren Halloway");
    // Sam is a person at the table, not someone in the world.
    assert!(!card.contains("Sam"), "{card}");
}

#[test]
fn embeds_block_ids_queries_statblocks_and_templater_code_are_never_card_text() {
    let loaded = load_fixture("real-infobox");
    for (message, head, want) in [
        (
            "I ask Harrow Oakes about horses.",
            "NPC Harrow Oakes",
            "forges a little on the side for anyone who pays in silver.",
        ),
        (
            "We look around the Mill Wheel.",
            "Place The Mill Wheel",
            "built into the old mill so the wheel still turns behind the bar.",
        ),
        (
            "We walk to Millbrook.",
            "Place Millbrook",
            "A mill village on the river Lisk, half a day's walk from the coast.",
        ),
        (
            "We climb up to Ravensmoor.",
            "Place Ravensmoor",
            "A moor of standing stones north of Millbrook",
        ),
        (
            "We fight the Bog Hag.",
            "NPC Bog Hag",
            "wears their teeth as a necklace.",
        ),
    ] {
        let text = light(&loaded, message);
        let line = card(&text, head);
        assert!(line.contains(want), "{line}");
        for bad in [
            ".png",
            ".jpg",
            "![[",
            "^intro",
            "^desc",
            "TABLE",
            "this.file",
            "=this",
            "Population:",
            "<%",
            "tR",
            "statblock",
            "stats:",
            "size: Medium",
            "#Population",
        ] {
            assert!(!line.contains(bad), "{bad:?} in {line}");
        }
    }
    // The statblock is read for what it is: the hag's HP and AC.
    let text = light(&loaded, "We fight the Bog Hag.");
    assert!(
        card(&text, "NPC Bog Hag").contains("| HP 82/82 | AC 17 |"),
        "{text}"
    );
}

// ------------------------------------------------------------------ 4. threads and sessions

#[test]
fn closed_quest_notes_are_not_active_storylines() {
    let loaded = load_fixture("real-tags");
    // `complete: true` and `status: Abgeschlossen` close a quest; no status leaves it open.
    assert_eq!(
        open_threads(&loaded),
        ["The Abbot's Debt", "Wolves at Harrowgate"]
    );
    let closed: Vec<&str> = loaded
        .built
        .campaign
        .threads
        .iter()
        .filter(|t| t.priority == Priority::Resolved)
        .map(|t| t.title.as_str())
        .collect();
    assert_eq!(closed, ["Der Schwarze Turm", "The Missing Miller"]);
    let full = context(&loaded, None).text;
    let lines = section(&full, "Active storylines");
    assert_eq!(lines.len(), 2, "{full}");
    assert!(lines[0].starts_with("- [MEDIUM] The Abbot's Debt: The abbot owes Mags Fell"));
    assert!(lines[1].starts_with("- [MEDIUM] Wolves at Harrowgate: Wolves take a sheep"));
    assert!(!full.contains("Schwarze") && !full.contains("Missing Miller"));
}

#[test]
fn a_quests_checklist_gives_one_storyline_per_open_item() {
    let loaded = load_fixture("real-sessions");
    assert_kind(&loaded, "Quests.md", NoteKind::Thread);
    assert_eq!(
        open_threads(&loaded),
        [
            "Silence the drowned bell of Saltmere Abbey",
            "Find out who paid Abbot Corve to seal the bell tower",
        ]
    );
    let full = context(&loaded, None).text;
    assert_eq!(
        section(&full, "Active storylines"),
        [
            "- [MEDIUM] Silence the drowned bell of Saltmere Abbey",
            "- [MEDIUM] Find out who paid Abbot Corve to seal the bell tower",
        ]
    );
    assert!(!full.contains("ferryman his toll"), "{full}");
    assert!(!full.contains("Nell's brother home"), "{full}");
}

#[test]
fn a_home_notes_current_objectives_are_storylines() {
    let loaded = load_fixture("real-numbered");
    assert_kind(&loaded, "0. Home.md", NoteKind::Meta);
    assert_eq!(
        open_threads(&loaded),
        [
            "Escort the salt caravan to Emberford before the pass closes",
            "Learn who poisoned the well at Cinderholt",
        ]
    );
    let full = context(&loaded, None).text;
    let lines = section(&full, "Active storylines");
    assert_eq!(
        lines,
        [
            "- [MEDIUM] Escort the salt caravan to Emberford before the pass closes",
            "- [MEDIUM] Learn who poisoned the well at Cinderholt",
        ]
    );
    assert!(!full.contains("Recover Hollis Crane's ledger"), "{full}");
}

#[test]
fn an_unfilled_session_template_is_not_the_last_session() {
    let loaded = load_fixture("real-sessions");
    let c = &loaded.built.campaign;
    let twelve = c
        .sessions
        .iter()
        .find(|s| s.name == "Session 12")
        .expect("Session 12");
    assert!(
        twelve.prep,
        "an empty `## Summary` and `{{{{content}}}}`: not played"
    );
    let eleven = c
        .sessions
        .iter()
        .find(|s| s.name == "Session 11")
        .expect("Session 11");
    assert!(!eleven.prep);
    let full = context(&loaded, None).text;
    assert!(full.contains("### Last session: Session 11\n"), "{full}");
    assert!(!full.contains("Session 12"), "{full}");
    assert!(!full.contains("{{content}}"), "{full}");
}

#[test]
fn a_session_log_kept_as_bullets_says_how_it_ended() {
    let loaded = load_fixture("real-sessions");
    let full = context(&loaded, None).text;
    let last = section(&full, "Last session: Session 11");
    assert!(
        last[0].starts_with("Arrived at Saltmere Abbey at dusk"),
        "{full}"
    );
    let ended = last
        .iter()
        .find(|l| l.starts_with("It ended: "))
        .unwrap_or_else(|| panic!("no `It ended:` in {full}"));
    // How it ended, not again what the opening already said.
    assert_eq!(
        *ended, "It ended: Ended on the abbey roof with the tide rising around the island",
        "{full}"
    );
}

#[test]
fn sessions_numbered_one_to_twelve_sort_numerically() {
    let loaded = load_fixture("real-sessions");
    let c = &loaded.built.campaign;
    let mut numbered: Vec<(i64, &str)> = c
        .sessions
        .iter()
        .map(|s| (s.number.expect("numbered"), s.name.as_str()))
        .collect();
    numbered.sort();
    let want: Vec<(i64, String)> = (1..=12).map(|n| (n, format!("Session {n}"))).collect();
    let got: Vec<(i64, String)> = numbered
        .into_iter()
        .map(|(n, s)| (n, s.to_string()))
        .collect();
    assert_eq!(got, want);
    // Sorted as text, Session 9 would come last of the played ones; 11 is the latest.
    let full = context(&loaded, None).text;
    assert!(full.contains("### Last session: Session 11\n"), "{full}");
    assert!(!full.contains("Last session: Session 9"), "{full}");
}

#[test]
fn gm_session_notes_in_a_root_sessions_folder_are_read_and_transcripts_skipped() {
    let loaded = load_fixture("real-sessions");
    let paths: Vec<&str> = loaded
        .vault
        .notes
        .iter()
        .map(|n| n.path.as_str())
        .filter(|p| p.starts_with("sessions/"))
        .collect();
    assert_eq!(paths.len(), 12, "{paths:?}");
    assert!(paths.iter().all(|p| p.starts_with("sessions/Session ")));
    // vaultdm's own transcript beside `.vaultdm/sessions/friday-table.jsonl` is no note.
    assert!(loaded
        .vault
        .note_index("sessions/friday-table.md")
        .is_none());
    assert_eq!(loaded.built.campaign.sessions.len(), 12);
    let full = context(&loaded, None).text;
    assert!(!full.contains("wade out to the abbey"), "{full}");

    // Only a session log makes a note in `sessions/` vaultdm's: give Session 11 one and it
    // is skipped, and Session 10 is the last played.
    let s = Scratch::of("real-sessions");
    s.write(
        ".vaultdm/sessions/Session 11.jsonl",
        "{\"time\":\"2026-01-19T21:00:00+00:00\",\"role\":\"player\",\"text\":\"We climb.\"}\n",
    );
    let loaded = s.load();
    assert!(loaded.vault.note_index("sessions/Session 11.md").is_none());
    assert_eq!(loaded.built.campaign.sessions.len(), 11);
    let full = context(&loaded, None).text;
    assert!(full.contains("### Last session: Session 10\n"), "{full}");
}

// ------------------------------------------------------------------ 5. timeline

#[test]
fn the_latest_years_items_are_the_recent_events_and_mysteries_never_are() {
    let loaded = load_fixture("real-numbered");
    assert_kind(&loaded, "World/Timeline.md", NoteKind::Timeline);
    let c = &loaded.built.campaign;
    let events: Vec<(&str, &str)> = c
        .events
        .iter()
        .map(|e| (e.when.as_str(), e.text.as_str()))
        .collect();
    assert_eq!(events.len(), 9, "{events:#?}");
    assert!(events[..2].iter().all(|e| e.0 == "Year 1"), "{events:#?}");
    assert!(events[2..4].iter().all(|e| e.0 == "Year 2"), "{events:#?}");
    assert!(events[4..].iter().all(|e| e.0 == "Year 3"), "{events:#?}");
    for (_, text) in &events {
        assert!(!text.contains('?'), "{text}");
        assert!(!text.contains("Mother Soot saw"), "{text}");
    }
    let full = context(&loaded, None).text;
    assert_eq!(
        section(&full, "Recent events"),
        [
            "- Year 3: The Singed Goose burns down on the Emberford road.",
            "- Year 3: Old Mother Soot is found dead beside the Cinderholt well.",
            "- Year 3: Magistrate Hollis Crane closes the well-house.",
            "- Year 3: The Wardens recover the magistrate's ledger from the bandits.",
            "- Year 3: The salt caravan waits at Cinderholt for an escort.",
        ]
    );
    assert!(!full.contains("Who poisoned the well"), "{full}");
    assert!(!full.contains("running water"), "{full}");
}

// ------------------------------------------------------------------ templates and checks

#[test]
fn template_folders_are_no_canon() {
    for (vault, folder) in [
        ("real-numbered", "Templates/"),
        ("real-infobox", "Templates/"),
        ("real-tags", "z_Templates/"),
    ] {
        let loaded = load_fixture(vault);
        assert!(
            loaded
                .vault
                .notes
                .iter()
                .all(|n| !n.path.starts_with(folder)),
            "{vault}"
        );
        let c = &loaded.built.campaign;
        let names = c
            .pcs
            .iter()
            .map(|p| &p.name)
            .chain(c.npcs.iter().map(|n| &n.name))
            .chain(c.locations.iter().map(|l| &l.name))
            .chain(c.threads.iter().map(|t| &t.title))
            .chain(c.sessions.iter().map(|s| &s.name));
        for n in names {
            assert!(!n.contains("<%") && !n.contains("tp."), "{vault}: {n}");
        }
        let full = context(&loaded, None).text;
        assert!(!full.contains("<%"), "{vault}: {full}");
    }
}

#[test]
fn the_real_vaults_check_without_errors() {
    for v in [
        "real-numbered",
        "real-players",
        "real-sessions",
        "real-tags",
        "real-infobox",
        "real-worldbuilding",
    ] {
        let out = check(v, false);
        assert!(out.contains(" 0 errors, "), "{v}: {out}");
    }
}
