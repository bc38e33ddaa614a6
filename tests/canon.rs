//! Typed canon from fixture vaults: every frontmatter synonym and list form, every way of
//! writing a location, how a note's type is decided, NPC voices, location descriptions
//! and parents, threads, timeline and the in-game clock.

use crate::support;
use vaultdm_gen as gen;

use crate::support::{load_fixture, triples, Scratch};
use rstest::rstest;
use vaultdm::canon::{Campaign, Loaded, NoteKind, Priority};

fn campaign(name: &str) -> Campaign {
    (*load_fixture(name).built.campaign).clone()
}

fn kind_of(loaded: &Loaded, path: &str) -> NoteKind {
    let i = loaded
        .vault
        .note_index(path)
        .unwrap_or_else(|| panic!("{path} is not a note"));
    loaded.built.kinds[i]
}

const EEL: &str = "canon/locations/the-gilded-eel.md";
const DOCKS: &str = "canon/locations/the-lower-docks.md";
const WARD: &str = "canon/locations/harbour-ward.md";
const CAFE: &str = "canon/locations/Café Noir.md";

// ---------------------------------------------------------------- note kinds

#[rstest]
#[case::canon_pcs_folder("canon/pcs/ada.md", NoteKind::Pc)]
#[case::canon_npcs_folder("canon/npcs/nix.md", NoteKind::Npc)]
#[case::canon_locations_folder_beats_type("canon/locations/the-gilded-eel.md", NoteKind::Location)]
#[case::canon_threads_folder("canon/threads/the-stolen-map.md", NoteKind::Thread)]
#[case::type_key_any_case("notes/grey.md", NoteKind::Npc)]
#[case::type_pc("notes/quinn.md", NoteKind::Pc)]
#[case::nested_tag_pc("notes/ghost.md", NoteKind::Pc)]
#[case::nested_tag_npc("heist/contacts/old-gannet.md", NoteKind::Npc)]
#[case::inline_tag_place("notes/lighthouse.md", NoteKind::Location)]
#[case::tag_quest("notes/rumour.md", NoteKind::Thread)]
#[case::folder_people("heist/people/jory.md", NoteKind::Npc)]
#[case::folder_party("heist/party/fenn.md", NoteKind::Pc)]
#[case::folder_places("heist/places/the-salt-vault.md", NoteKind::Location)]
#[case::folder_quests("heist/quests/the-lost-crew.md", NoteKind::Thread)]
#[case::gm_session_note_is_a_session("heist/sessions/session-1.md", NoteKind::Session)]
#[case::faction_is_lore("lore/salt-priests.md", NoteKind::Lore)]
#[case::threads_file_is_not_a_note_kind("canon/open-threads.md", NoteKind::Lore)]
fn note_kinds(#[case] path: &str, #[case] kind: NoteKind) {
    let loaded = load_fixture("variants");
    assert_eq!(kind_of(&loaded, path), kind, "{path}");
}

#[test]
fn configured_folders_mark_a_type() {
    let s = Scratch::of("variants");
    s.write("troupe/hobb.md", "---\nname: Hobb\n---\n");
    assert_eq!(kind_of(&s.load(), "troupe/hobb.md"), NoteKind::Lore);
    s.write(
        "vaultdm.toml",
        "name = \"Gullhaven\"\n[folders]\nnpcs = [\"troupe\"]\n",
    );
    assert_eq!(kind_of(&s.load(), "troupe/hobb.md"), NoteKind::Npc);
}

// ---------------------------------------------------------------- PCs

#[rstest]
//     id                     name          hp_cur    hp_max    gold       location
#[case::canonical_keys(
    "canon/pcs/ada.md",
    "Ada Quill",
    Some(17),
    Some(27),
    Some(42),
    Some(EEL)
)]
#[case::upper_case_synonyms(
    "canon/pcs/bram.md",
    "Bram Holt",
    Some(20),
    Some(24),
    Some(7),
    Some(EEL)
)]
#[case::hp_max_hp_gp_with_unit(
    "canon/pcs/cleo.md",
    "Cleo Marsh",
    Some(9),
    Some(12),
    Some(150),
    Some(EEL)
)]
#[case::quoted_wikilink("canon/pcs/dax.md", "Dax", Some(30), Some(30), Some(0), Some(EEL))]
#[case::unquoted_wikilink_crlf(
    "canon/pcs/eve.md",
    "Eve Sorrel",
    Some(8),
    Some(21),
    Some(12),
    Some(EEL)
)]
#[case::unquoted_wikilink_alias(
    "heist/party/fenn.md",
    "Fenn Ashby",
    Some(11),
    Some(11),
    None,
    Some(EEL)
)]
#[case::type_pc_retired("notes/quinn.md", "Quinn", Some(5), Some(20), None, Some(DOCKS))]
fn pc_values(
    #[case] id: &str,
    #[case] name: &str,
    #[case] hp_current: Option<i64>,
    #[case] hp_max: Option<i64>,
    #[case] gold: Option<i64>,
    #[case] location: Option<&str>,
) {
    let c = campaign("variants");
    let pc = c.pcs.iter().find(|p| p.id == id).expect("pc");
    assert_eq!(pc.name, name);
    assert_eq!(pc.hp_current, hp_current, "hp_current");
    assert_eq!(pc.hp_max, hp_max, "hp_max");
    assert_eq!(pc.gold, gold, "gold");
    assert_eq!(pc.location.as_deref(), location, "location");
    assert_eq!(pc.location_text, None);
}

#[rstest]
#[case::yaml_list("canon/pcs/ada.md", &["thieves' tools", "brass astrolabe"])]
#[case::flow_list_items("canon/pcs/bram.md", &["storm lantern", "coil of rope"])]
#[case::comma_string_items("canon/pcs/cleo.md", &["lockpicks", "forged harbour pass", "smoke bomb"])]
#[case::empty_flow_list("canon/pcs/dax.md", &[])]
#[case::crlf_yaml_list("canon/pcs/eve.md", &["holy symbol"])]
fn pc_inventory(#[case] id: &str, #[case] items: &[&str]) {
    let c = campaign("variants");
    let pc = c.pcs.iter().find(|p| p.id == id).expect("pc");
    assert_eq!(pc.inventory, items);
}

#[test]
fn pc_other_fields() {
    let c = campaign("variants");
    let ada = &c.pcs[0];
    assert_eq!(ada.id, "canon/pcs/ada.md");
    assert_eq!(ada.class.as_deref(), Some("Rogue"));
    assert_eq!(ada.level, Some(3));
    assert_eq!(ada.player.as_deref(), Some("Sam"));
    assert_eq!(ada.conditions, ["poisoned"]);
    assert_eq!(ada.status, "active");
    assert!(ada.active);
    assert_eq!(
        ada.summary.as_deref(),
        Some("A dockside cat burglar with quick hands.")
    );
    let bram = c.pcs.iter().find(|p| p.name == "Bram Holt").expect("Bram");
    assert_eq!(bram.aliases, ["Big Bram"]);
    assert_eq!(bram.level, Some(2));
}

#[rstest]
#[case::active_by_default("canon/pcs/ada.md", true)]
#[case::retired("notes/quinn.md", false)]
#[case::away("notes/ghost.md", false)]
fn pc_activity(#[case] id: &str, #[case] active: bool) {
    let c = campaign("variants");
    assert_eq!(
        c.pcs.iter().find(|p| p.id == id).expect("pc").active,
        active
    );
}

// ---------------------------------------------------------------- NPCs

#[rstest]
#[case::frontmatter_voice_beats_personality(
    "canon/npcs/mother-ashka.md",
    &["Speaks only in gambling metaphors."]
)]
#[case::personality_bullets_first_two(
    "canon/npcs/pell-quickhand.md",
    &["Rhymes when he is nervous.", "Shuffles a deck he never deals."]
)]
#[case::voice_section_beats_personality(
    "canon/npcs/nix.md",
    &["Whispers, then shouts.", "Clicks her tongue between sentences."]
)]
#[case::personality_after_callouts_and_code(
    "canon/npcs/wren-ashdown.md",
    &["Apologises before every sentence.", "Chews the end of her quill."]
)]
#[case::no_voice("heist/people/jory.md", &[])]
fn npc_voice(#[case] id: &str, #[case] voice: &[&str]) {
    let c = campaign("variants");
    let n = c.npcs.iter().find(|n| n.id == id).expect("npc");
    assert_eq!(n.voice, voice);
}

#[rstest]
//     id                                    role                       disposition       aliases                           location
#[case::synonyms("canon/npcs/mother-ashka.md", Some("fence and moneylender"), Some("wary ally"), &["the Widow"], Some(EEL))]
#[case::non_ascii_location_name("canon/npcs/pell-quickhand.md", Some("card sharp"), Some("hostile"), &["Quickhand", "Pell the Hand"], Some(CAFE))]
#[case::unquoted_wikilink_crlf("canon/npcs/nix.md", Some("lamplighter"), None, &[], Some(DOCKS))]
#[case::bom("canon/npcs/wren-ashdown.md", Some("harbour clerk"), Some("nervous"), &[], Some(DOCKS))]
#[case::type_key("notes/grey.md", Some("ferryman"), None, &[], Some(DOCKS))]
fn npc_values(
    #[case] id: &str,
    #[case] role: Option<&str>,
    #[case] disposition: Option<&str>,
    #[case] aliases: &[&str],
    #[case] location: Option<&str>,
) {
    let c = campaign("variants");
    let n = c.npcs.iter().find(|n| n.id == id).expect("npc");
    assert_eq!(n.role.as_deref(), role);
    assert_eq!(n.disposition.as_deref(), disposition);
    assert_eq!(n.aliases, aliases);
    assert_eq!(n.location.as_deref(), location);
}

#[test]
fn npc_status_and_summary() {
    let c = campaign("variants");
    let gannet = c
        .npcs
        .iter()
        .find(|n| n.name == "Old Gannet")
        .expect("Gannet");
    assert_eq!(gannet.status, "dead");
    assert!(gannet.is_absent());
    let wren = c
        .npcs
        .iter()
        .find(|n| n.name == "Wren Ashdown")
        .expect("Wren");
    assert_eq!(wren.status, "active");
    assert_eq!(
        wren.summary.as_deref(),
        Some("Wren keeps the harbour ledgers. She signs everything twice.")
    );
}

// ---------------------------------------------------------------- locations

#[rstest]
//     id                                   name                       description                                                                  parent
#[case::description_section_beats_first_paragraph(
    EEL,
    "The Gilded Eel",
    "A beached galleon turned tavern. Lanterns swing from the old rigging.",
    Some(WARD)
)]
#[case::first_paragraph(
    WARD,
    "Harbour Ward",
    "Salt-crusted streets that run downhill to the water. Every door has a bolt. The customs house.",
    None
)]
#[case::region_quoted_wikilink(
    DOCKS,
    "The Lower Docks",
    "Fish-gut stink and rotten planks. The tide comes in fast here.",
    Some(WARD)
)]
#[case::district_display_name_no_h1(
    CAFE,
    "Café Noir",
    "A black-fronted coffee house where debts are bought and sold. Nobody orders the coffee.",
    Some(WARD)
)]
#[case::parent_unquoted_wikilink_tag_line_skipped(
    "notes/lighthouse.md",
    "The Lighthouse",
    "The lamp has not been lit in ten years.",
    Some(WARD)
)]
#[case::parent_by_alias(
    "heist/places/the-salt-vault.md",
    "The Salt Vault Chamber",
    "A dry room under the customs house.",
    Some(CAFE)
)]
fn location_values(
    #[case] id: &str,
    #[case] name: &str,
    #[case] description: &str,
    #[case] parent: Option<&str>,
) {
    let c = campaign("variants");
    let l = c.location(id).expect("location");
    assert_eq!(l.name, name);
    assert_eq!(l.description.as_deref(), Some(description));
    assert_eq!(l.parent.as_deref(), parent);
}

#[test]
fn location_kind_and_nesting() {
    let c = campaign("variants");
    assert_eq!(
        c.location(EEL).and_then(|l| l.kind.as_deref()),
        Some("tavern")
    );
    assert_eq!(
        c.location(WARD).and_then(|l| l.kind.as_deref()),
        Some("district")
    );
    assert!(c.is_within("heist/places/the-salt-vault.md", WARD));
    assert!(!c.is_within(WARD, EEL));
}

// ---------------------------------------------------------------- threads, timeline, clock

#[test]
fn threads_from_the_file_and_from_notes() {
    let c = campaign("variants");
    let got: Vec<_> = c
        .threads
        .iter()
        .map(|t| {
            (
                t.title.as_str(),
                t.priority,
                t.next.as_deref(),
                t.source.line,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "The Salt Vault",
                Priority::Urgent,
                Some("Steal the key from Pell before the moon turns."),
                4
            ),
            (
                "The Forged Seal",
                Priority::High,
                Some("Find the engraver."),
                9
            ),
            (
                "Ashka's Debt",
                Priority::Medium,
                Some("Repay her by Day 5."),
                13
            ),
            (
                "The Singing Gull",
                Priority::Low,
                Some("Listen at midnight."),
                17
            ),
            ("The First Job", Priority::Resolved, None, 22),
            (
                "The Stolen Map",
                Priority::High,
                Some("Ask Wren who signed it out."),
                1
            ),
            ("The Lost Crew", Priority::Low, None, 1),
            (
                "Rumour",
                Priority::Medium,
                Some("Buy a drink for a fisherman."),
                1
            ),
        ]
    );
    assert_eq!(
        c.threads[0].summary,
        ["The vault under the customs house opens only at the new moon."]
    );
    assert_eq!(
        c.threads[1].summary,
        ["the harbourmaster's seal is a fake."]
    );
    assert_eq!(
        c.threads[2].summary,
        ["The crew owes Mother Ashka a favour."]
    );
}

#[test]
fn threads_before_any_priority_heading_are_flagged_not_silently_medium() {
    let s = Scratch::of("split-party");
    s.write(
        "canon/open-threads.md",
        "# Open Threads\n\n- **Orphan** — no section.\n  → Next: file it.\n\n## Low\n- **Kept** — fine.\n",
    );
    let loaded = s.load();
    let t = &loaded.built.campaign.threads;
    assert_eq!(t[0].title, "Orphan");
    assert_eq!(t[0].priority, Priority::Medium);
    assert_eq!(t[1].priority, Priority::Low);
    assert!(triples(&loaded.diagnostics()).contains(&(
        "canon/open-threads.md".into(),
        3,
        "thread-no-priority"
    )));
}

#[rstest]
#[case::single_word_h1("# Urgent\n### Fire\nIt burns.\n", Priority::Urgent)]
#[case::h2_with_suffix("## High priority\n### Fire\nIt burns.\n", Priority::High)]
#[case::h2_synonym("## Background\n- **Fire** — it burns.\n", Priority::Low)]
#[case::resolved("## Resolved\n- **Fire** — it burnt.\n", Priority::Resolved)]
fn priority_headings(#[case] body: &str, #[case] want: Priority) {
    let s = Scratch::of("split-party");
    s.write("canon/open-threads.md", body);
    let loaded = s.load();
    let t = &loaded.built.campaign.threads;
    assert_eq!(t.len(), 1, "{t:?}");
    assert_eq!((t[0].title.as_str(), t[0].priority), ("Fire", want));
    assert!(
        loaded.diagnostics().is_empty(),
        "{:?}",
        loaded.diagnostics()
    );
}

#[test]
fn timeline_and_clock() {
    let c = campaign("variants");
    let got: Vec<_> = c.events.iter().map(|e| (e.day, e.source.line)).collect();
    assert_eq!(got, [(1, 4), (1, 5), (2, 8), (3, 11), (3, 12)]);
    assert_eq!(
        c.events[4].text,
        "Old Gannet was found floating under the pier."
    );
    assert_eq!((c.day, c.time.as_deref()), (Some(3), Some("night")));
    assert_eq!(c.name, "Gullhaven");
    assert_eq!(
        c.setting.as_deref(),
        Some("A fog-bound port of smugglers, salt-priests and bad debts.")
    );
}

#[rstest]
#[case::missing_falls_back_to_the_timeline(None, Some(2), None, &["no-temporal-index"])]
#[case::string_day(Some(r#"{"current_day": "Day 9", "current_time": "noon"}"#), Some(9), Some("noon"), &["no-current-day"])]
#[case::short_keys(Some(r#"{"day": 7, "time": "dusk"}"#), Some(7), Some("dusk"), &["no-current-day"])]
#[case::not_an_object(Some("[6]"), Some(2), None, &["temporal-index"])]
#[case::no_day(Some(r#"{"current_time": "dawn"}"#), Some(2), Some("dawn"), &["temporal-index"])]
#[case::bom(Some("\u{feff}{\"current_day\": 2}"), Some(2), None, &[])]
fn temporal_index_forms(
    #[case] json: Option<&str>,
    #[case] day: Option<i64>,
    #[case] time: Option<&str>,
    #[case] codes: &[&str],
) {
    let s = Scratch::of("split-party");
    match json {
        Some(j) => {
            s.write("canon/temporal-index.json", j);
        }
        None => {
            s.remove("canon/temporal-index.json");
        }
    }
    let loaded = s.load();
    let c = &loaded.built.campaign;
    assert_eq!((c.day, c.time.as_deref()), (day, time));
    let got: Vec<_> = loaded.diagnostics().iter().map(|d| d.code).collect();
    assert_eq!(got, codes);
}

#[test]
fn campaign_name_from_the_folder_when_no_config_names_it() {
    let loaded = load_fixture("no-canon");
    let c = &loaded.built.campaign;
    assert_eq!(c.name, "No Canon");
    assert!(c.pcs.is_empty() && c.npcs.is_empty() && c.threads.is_empty());
    assert_eq!(c.day, None);
    assert_eq!(c.lore.len(), 1);
    let codes: Vec<_> = loaded
        .diagnostics()
        .iter()
        .map(|d| (d.path.clone(), d.code.as_str()))
        .collect();
    // A vault without `canon/` hears about quests and timelines in its own terms.
    assert_eq!(
        codes,
        [
            (".".to_string(), "no-party"),
            // No clock of its own: `/day` would keep one in `.vaultdm/clock.json`.
            (".".to_string(), "no-temporal-index"),
            (".".to_string(), "no-threads"),
            (".".to_string(), "no-timeline"),
        ]
    );
    // Gaps are information; a party of none is worth a warning.
    assert!(loaded
        .diagnostics()
        .iter()
        .all(|d| (d.severity == vaultdm::vault::Severity::Info) != (d.code == "no-party")));
}

#[test]
fn saltreach_loads_every_entity() {
    let c = campaign("saltreach");
    assert_eq!(
        (
            c.pcs.len(),
            c.npcs.len(),
            c.locations.len(),
            c.threads.len(),
            c.events.len()
        ),
        (3, 16, 8, 5, 12)
    );
    assert!(load_fixture("saltreach").diagnostics().is_empty());
}

#[test]
fn unknown_and_non_location_references() {
    let s = Scratch::of("variants");
    s.edit(
        "canon/pcs/ada.md",
        "location: the-gilded-eel",
        "location: Atlantis",
    )
    .edit(
        "canon/npcs/nix.md",
        "location: [[the-lower-docks]]",
        "location: Mother Ashka",
    );
    let loaded = s.load();
    let c = &loaded.built.campaign;
    let ada = c.pcs.iter().find(|p| p.name == "Ada Quill").expect("Ada");
    assert_eq!(ada.location, None);
    assert_eq!(ada.location_text.as_deref(), Some("Atlantis"));
    let nix = c.npcs.iter().find(|n| n.name == "Nix").expect("Nix");
    assert_eq!(nix.location, None);
    let d = triples(&loaded.diagnostics());
    assert!(
        d.contains(&("canon/pcs/ada.md".into(), 13, "unknown-location")),
        "{d:?}"
    );
    assert!(
        d.contains(&("canon/npcs/nix.md".into(), 5, "not-a-location")),
        "{d:?}"
    );
}

#[test]
fn shared_alias_is_reported_on_the_alias_line() {
    let s = Scratch::of("variants");
    s.edit(
        "canon/npcs/nix.md",
        "role: lamplighter",
        "role: lamplighter\r\naliases: [the Widow]",
    );
    let all = s.load().diagnostics();
    let d = triples(&all);
    assert!(
        d.contains(&("canon/npcs/mother-ashka.md".into(), 6, "shared-alias")),
        "{d:?}"
    );
    // Once per group: the warning names the other note instead of repeating on it.
    let shared: Vec<_> = all.iter().filter(|d| d.code == "shared-alias").collect();
    assert_eq!(shared.len(), 1, "{shared:?}");
    assert!(
        shared[0].message.contains("canon/npcs/nix.md"),
        "{shared:?}"
    );
}

#[test]
fn thousands_sharing_an_alias_is_one_short_warning() {
    let dir = tempfile::tempdir().expect("tempdir");
    let npcs = dir.path().join("canon/npcs");
    std::fs::create_dir_all(&npcs).expect("mkdir");
    for i in 0..4000 {
        std::fs::write(
            npcs.join(format!("guard-{i:04}.md")),
            format!("---\nname: Guard {i}\naliases: [the Guard]\n---\n"),
        )
        .expect("write");
    }
    let loaded = vaultdm::canon::Loaded::load(dir.path()).expect("load");
    let shared: Vec<_> = loaded
        .diagnostics()
        .into_iter()
        .filter(|d| d.code == "shared-alias")
        .collect();
    assert_eq!(shared.len(), 1);
    assert_eq!(shared[0].path, "canon/npcs/guard-0000.md");
    assert!(
        shared[0]
            .message
            .ends_with("and 3994 more notes; mentions of it are ambiguous"),
        "{}",
        shared[0].message
    );
    assert!(shared[0].message.len() < 400);
}

/// Notes lose the blocks canon never reads as they are parsed (to keep a big vault's memory
/// down): lore all but its title and summary, NPCs, places, PCs, parties and session notes
/// all but those and the sections their kind reads. Canon, its problems and every note's
/// name, links and problems must come out exactly as from the whole notes, on every fixture
/// layout, the bundled vault and a generated 600-note vault (NPCs with long histories,
/// places, sessions, threads, a timeline).
#[test]
fn shedding_unread_blocks_changes_nothing_canon_reads() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut vaults: Vec<std::path::PathBuf> = std::fs::read_dir(root.join("tests/fixtures"))
        .expect("fixtures")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    vaults.push(root.join("vault-template"));
    vaults.sort();
    let generated = tempfile::tempdir().expect("tempdir");
    gen::generate(generated.path(), 600, 7).expect("generate");
    vaults.push(generated.path().to_path_buf());
    let mut shed: std::collections::BTreeMap<String, usize> = Default::default();
    for dir in &vaults {
        let loaded = vaultdm::canon::Loaded::load(dir).expect("loads");
        let scope = vaultdm::vault::Scope::detect(dir, &loaded.config.folders.templates);
        let whole = vaultdm::vault::Vault::load_scoped(dir, scope).expect("loads");
        let built = vaultdm::canon::build(&whole, &loaded.config, &loaded.files);
        assert_eq!(built.campaign, loaded.built.campaign, "{}", dir.display());
        assert_eq!(
            format!("{:?}", built.diagnostics),
            format!("{:?}", loaded.built.diagnostics),
            "{}",
            dir.display()
        );
        assert_eq!(whole.notes.len(), loaded.vault.notes.len());
        for (w, l) in whole.notes.iter().zip(&loaded.vault.notes) {
            assert_eq!(w.path, l.path);
            assert_eq!(w.name(), l.name(), "{}", w.path);
            assert_eq!(w.links, l.links, "{}", w.path);
            assert_eq!(w.diagnostics, l.diagnostics, "{}", w.path);
            assert_eq!(w.body.statblocks, l.body.statblocks, "{}", w.path);
            let kind = vaultdm::canon::kind::kind_of(w, &loaded.config);
            // A shed note is read as the same kind, for the same reason (a rebuild after a
            // settings change types the notes it holds again).
            assert_eq!(
                vaultdm::canon::kind::classify_why(l, &loaded.config.folders),
                vaultdm::canon::kind::classify_why(w, &loaded.config.folders),
                "{}",
                w.path
            );
            assert_eq!(
                vaultdm::canon::kind::doubt(l, &loaded.config.folders),
                vaultdm::canon::kind::doubt(w, &loaded.config.folders),
                "{}",
                w.path
            );
            *shed.entry(format!("{kind:?}")).or_default() +=
                w.body.blocks.len() - l.body.blocks.len();
        }
    }
    // PC notes keep their first blocks (the kind rule reads "played by" there): few notes.
    for kind in ["Lore", "Npc", "Location", "Session"] {
        assert!(
            shed.get(kind).is_some_and(|&n| n > 0),
            "no {kind} note had blocks to shed: {shed:?}"
        );
    }
    assert_eq!(shed.get("Thread").copied().unwrap_or(0), 0, "{shed:?}");
}

/// A runaway world-building note (a pasted 8 MB history) is read, classed as lore and
/// summarised, but its body is not held: only the blocks its title and summary come from.
#[test]
fn a_huge_lore_note_is_summarised_and_not_held() {
    let dir = support::template_copy();
    let world = dir.path().join("World");
    std::fs::create_dir_all(&world).expect("mkdir");
    let mut text = String::from(
        "# The Long History\n\nA chronicle of the valley, from the first miners to the Company.\n\n",
    );
    let para = "The seams ran deeper every year and the town grew around the shafts. ";
    let mut i = 0;
    while text.len() < 8 * 1024 * 1024 {
        text.push_str(&format!(
            "## Year {i}\n\n{}\n\n- a detail\n- another\n\n",
            para.repeat(20)
        ));
        i += 1;
    }
    std::fs::write(world.join("The Long History.md"), &text).expect("write");

    let loaded = Loaded::load(dir.path()).expect("loads");
    let idx = loaded
        .vault
        .note_index("World/The Long History.md")
        .expect("the note is read");
    assert_eq!(loaded.built.kinds[idx], NoteKind::Lore);
    let note = &loaded.vault.notes[idx];
    assert_eq!(note.name(), "The Long History");
    let held: usize = note.body.blocks.iter().map(|b| b.text.len()).sum();
    assert_eq!(note.body.blocks.len(), 2, "title and summary only");
    assert!(held < 200, "{held} bytes of body held");
    let lore = loaded
        .built
        .campaign
        .lore
        .iter()
        .find(|l| l.name == "The Long History")
        .expect("in canon");
    assert_eq!(
        lore.summary.as_deref(),
        Some("A chronicle of the valley, from the first miners to the Company.")
    );
}

/// An NPC note in a layout nobody wrote for vaultdm (numbered folders, no `canon/`) with a
/// pasted 8 MB backstory under its voice: read and typed whole as before, its card the same,
/// but only its title, summary and `## Personality` are held for the session.
#[test]
fn a_huge_npc_backstory_is_read_and_not_held() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    support::copy_dir(&root.join("tests/fixtures/adopt-numbered"), dir.path());
    let path = dir.path().join("02. NPCs/Marta Quill.md");
    let mut text = std::fs::read_to_string(&path).expect("read");
    let para = "She came to the harbour the winter the eels failed, and stayed. ";
    let mut i = 0;
    while text.len() < 8 * 1024 * 1024 {
        text.push_str(&format!(
            "\n## Year {i}\n\n{}\n\n- a detail\n",
            para.repeat(20)
        ));
        i += 1;
    }
    std::fs::write(&path, &text).expect("write");

    let loaded = Loaded::load(dir.path()).expect("loads");
    let idx = loaded
        .vault
        .note_index("02. NPCs/Marta Quill.md")
        .expect("the note is read");
    assert_eq!(loaded.built.kinds[idx], NoteKind::Npc);
    let npc = loaded
        .built
        .campaign
        .npcs
        .iter()
        .find(|n| n.name == "Marta Quill")
        .expect("in canon");
    assert_eq!(
        npc.summary.as_deref(),
        Some("Sells eels and rumours from a stall by the tavern door.")
    );
    assert_eq!(
        npc.voice,
        [
            "Haggles over every copper.",
            "Laughs too loud when she is lying."
        ]
    );
    let held: usize = loaded.vault.notes[idx]
        .body
        .blocks
        .iter()
        .map(|b| b.text.len())
        .sum();
    assert!(held < 300, "{held} bytes of body held");
}
