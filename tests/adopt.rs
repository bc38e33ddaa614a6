//! Adopting vaults vaultdm did not lay out, in three layouts GMs really use (fixtures written
//! to imitate public GM vaults): numbered folders with quest notes and session logs; a
//! Waterdeep-style vault with nested tags, Dataview fields and template folders; a vault with
//! a group note, a retired PC and a rival party. Zero configuration: no `vaultdm.toml`.

use crate::support;

use crate::support::{fixture, Scratch};
use assert_cmd::Command;
use std::time::{Duration, SystemTime};
use vaultdm::canon::adopt::Mapping;
use vaultdm::canon::NoteKind;
use vaultdm::context::ModeChoice;

fn vaultdm() -> Command {
    let mut c = Command::cargo_bin("vaultdm").expect("bin");
    c.env_remove("VAULTDM_VAULT");
    c
}

fn kind(loaded: &vaultdm::canon::Loaded, path: &str) -> NoteKind {
    let i = loaded
        .vault
        .note_index(path)
        .unwrap_or_else(|| panic!("no note {path}"));
    loaded.built.kinds[i]
}

/// Sets a file's modification time (which group of PCs is in play follows it).
fn touch(s: &Scratch, rel: &str, ago: Duration) {
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(s.root.join(rel))
        .expect("open");
    f.set_modified(SystemTime::now() - ago).expect("set mtime");
}

#[test]
fn healthy_adopted_vaults_check_clean() {
    for v in ["adopt-numbered", "adopt-nested-tags", "adopt-groups"] {
        let out = vaultdm()
            .args(["check", "--vault"])
            .arg(fixture(v))
            .output()
            .expect("run");
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{v}: {text}");
        assert!(
            text.ends_with("0 errors, 0 warnings\n"),
            "{v}: no warnings either: {text}"
        );
    }
}

#[test]
fn numbered_folders_read_as_a_gm_means_them() {
    let loaded = support::load_fixture("adopt-numbered");
    let c = &loaded.built.campaign;
    for (path, k) in [
        ("01. The Party/Mira Holt.md", NoteKind::Pc),
        ("01. The Party/The Party.md", NoteKind::Party),
        ("02. NPCs/NPC - Brannoch the Fence.md", NoteKind::Npc),
        (
            "04. Quests/Completed/The Smuggler's Debt.md",
            NoteKind::Thread,
        ),
        (
            "05. Session Logs/Session 02 - The Lantern.md",
            NoteKind::Session,
        ),
        ("06. World/Timeline.md", NoteKind::Timeline),
        ("00. Index.md", NoteKind::Meta),
        ("Drawings/Harbour.excalidraw.md", NoteKind::Meta),
    ] {
        assert_eq!(kind(&loaded, path), k, "{path}");
    }
    // Templates are not canon at all.
    assert!(loaded
        .vault
        .notes
        .iter()
        .all(|n| !n.path.starts_with("99. Templates")));
    // The retired PC is out of the party, with the reason.
    let garrick = c
        .pcs
        .iter()
        .find(|p| p.name == "Old Garrick")
        .expect("Garrick");
    assert!(!garrick.active);
    assert_eq!(
        garrick.inactive_reason.as_deref(),
        Some("in the Retired folder")
    );
    // Closing statuses win over priority; emoji are read through.
    let open: Vec<&str> = c
        .threads
        .iter()
        .filter(|t| t.priority != vaultdm::canon::Priority::Resolved)
        .map(|t| t.title.as_str())
        .collect();
    assert_eq!(open, ["The Missing Cartographer"]);
    let ysolde = c
        .npcs
        .iter()
        .find(|n| n.name == "Captain Ysolde Varr")
        .expect("Ysolde");
    assert!(ysolde.is_absent(), "🚪 departed keeps her out of the scene");
    // The kind prefix is not part of the name; NPC HP is canon.
    let brannoch = c
        .npcs
        .iter()
        .find(|n| n.name == "Brannoch the Fence")
        .expect("Brannoch");
    assert_eq!(
        (brannoch.hp_current, brannoch.hp_max, brannoch.ac),
        (Some(45), Some(80), Some(14))
    );
    // The timeline was found in its own folder.
    assert_eq!(c.day, Some(2));
}

#[test]
fn numbered_folders_full_context() {
    let loaded = support::load_fixture("adopt-numbered");
    let inj = support::context(&loaded, None);
    insta::assert_snapshot!("adopt_numbered_full", inj.text);
    let explain = support::context(&loaded, None);
    let ysolde = explain
        .items
        .iter()
        .find(|i| i.name == "Captain Ysolde Varr")
        .expect("explained");
    assert!(!ysolde.included);
    assert_eq!(ysolde.reason, "at The Drowned Lantern but 🚪 departed");
}

#[test]
fn players_type_lower_case_and_head_nouns() {
    let loaded = support::load_fixture("adopt-numbered");
    let inj = support::context_with(
        &loaded,
        Some("i check marta's stall, then we take tobias to the doctor and pray at the chapel"),
        ModeChoice::Light,
        None,
    );
    insta::assert_snapshot!("adopt_numbered_mentions", inj.text);
}

#[test]
fn nested_tags_and_template_folders() {
    let loaded = support::load_fixture("adopt-nested-tags");
    let c = &loaded.built.campaign;
    // Session recaps tagged heist/events/pc are sessions, never PCs.
    let pcs: Vec<&str> = c.pcs.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(pcs, ["Ilsa", "Rowen"]);
    assert_eq!(c.sessions.len(), 2);
    // Both template folders (Templater's setting, and one found by its name) are skipped.
    let templates: Vec<&str> = loaded
        .vault
        .scope
        .template_folders
        .iter()
        .map(|t| t.path.as_str())
        .collect();
    assert_eq!(templates, ["z_Templates", "_templates"]);
    // A statuses from tags and from Dataview fields with emoji.
    let floon = c
        .npcs
        .iter()
        .find(|n| n.name == "Floon Blagmaar")
        .expect("Floon");
    assert!(floon.is_absent());
    let yagra = c
        .npcs
        .iter()
        .find(|n| n.name == "Yagra Stonefist")
        .expect("Yagra");
    assert_eq!(yagra.status, "dead");
    // Cards from real notes: an HTML subhead is a fine summary, the navigation line and the
    // Dataview field are not; an Admonition block is content.
    let renaer = c
        .npcs
        .iter()
        .find(|n| n.name == "Renaer Neverember")
        .expect("Renaer");
    assert_eq!(
        renaer.summary.as_deref(),
        Some("Son of the Open Lord, estranged and charming. Speaks like a man who has practised being likeable.")
    );
    let heist = c
        .lore
        .iter()
        // `heist.md`: the file name is the name, its `# Dragon Heist` an alias.
        .find(|l| l.name == "Heist" && l.aliases.iter().any(|a| a == "Dragon Heist"))
        .expect("lore");
    assert_eq!(
        heist.summary.as_deref(),
        Some("The party hunts a cache of half a million dragons under Waterdeep.")
    );
    let portal = c
        .locations
        .iter()
        .find(|l| l.name == "The Yawning Portal")
        .expect("portal");
    assert_eq!(
        portal.description.as_deref(),
        Some("A famous tavern built around the well that leads into Undermountain.")
    );
    // "Floon" alone does not pull in the session titled "… Floon's Rescue".
    let inj = support::context_with(&loaded, Some("we ask about floon"), ModeChoice::Light, None);
    insta::assert_snapshot!("adopt_nested_tags_mentions", inj.text);
    let full = support::context(&loaded, None);
    insta::assert_snapshot!("adopt_nested_tags_full", full.text);
}

#[test]
fn the_group_whose_members_were_edited_last_is_in_play_and_config_can_pick() {
    let s = Scratch::of("adopt-groups");
    let old = Duration::from_secs(86_400);
    let recent = Duration::from_secs(60);
    for p in ["Party/Ashe.md", "Party/Bram.md", "Party/Cyrus.md"] {
        touch(&s, p, recent);
    }
    for p in ["Party/Rivals/Vex.md", "Party/Rivals/Nyx.md"] {
        touch(&s, p, old);
    }
    let loaded = s.load();
    let c = &loaded.built.campaign;
    let party: Vec<&str> = c.party().map(|p| p.name.as_str()).collect();
    assert_eq!(party, ["Ashe", "Bram", "Cyrus"], "the group note is no PC");
    let vex = c.pcs.iter().find(|p| p.name == "Vex").expect("Vex");
    assert_eq!(
        vex.inactive_reason.as_deref(),
        Some("in another group (The Black Lanterns), not the party in play (The Copper Crew)")
    );
    let dorian = c.pcs.iter().find(|p| p.name == "Dorian").expect("Dorian");
    assert_eq!(
        dorian.inactive_reason.as_deref(),
        Some("in the Retired folder")
    );
    let full = support::context(&loaded, None);
    insta::assert_snapshot!("adopt_groups_full", full.text);
    // A boss's HP is canon: the card shows it.
    let inj = support::context_with(
        &loaded,
        Some("we attack Warden Kessa"),
        ModeChoice::Light,
        None,
    );
    assert!(
        inj.text
            .contains("Warden Kessa - warden of the Sunken Market [active] | HP 45/80 | AC 17"),
        "{}",
        inj.text
    );

    // The rivals edited last: they are in play.
    for p in ["Party/Rivals/Vex.md", "Party/Rivals/Nyx.md"] {
        touch(&s, p, Duration::from_secs(1));
    }
    let party: Vec<String> = s
        .load()
        .built
        .campaign
        .party()
        .map(|p| p.name.clone())
        .collect();
    assert_eq!(party, ["Nyx", "Vex"]);
    // `party = "…"` picks, whatever was edited.
    s.write("vaultdm.toml", "party = \"the Crew\"\n");
    let loaded = s.load();
    let party: Vec<&str> = loaded
        .built
        .campaign
        .party()
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(party, ["Ashe", "Bram", "Cyrus"]);
    let (i, why) = loaded.built.campaign.active_party.clone().expect("a party");
    assert_eq!(loaded.built.campaign.parties[i].name, "The Copper Crew");
    assert_eq!(why, "set by party = \"the Crew\" in vaultdm.toml");
}

#[test]
fn adopt_prints_the_mapping_and_writes_only_a_commented_toml() {
    for v in ["adopt-numbered", "adopt-nested-tags", "adopt-groups"] {
        let s = Scratch::of(v);
        let before = support::all_files(&s.root);
        let out = vaultdm()
            .args(["init", "--adopt"])
            .arg(&s.root)
            .output()
            .expect("run");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let after = support::all_files(&s.root);
        // Every note is byte for byte as it was; one file was added.
        let added: Vec<&String> = after.keys().filter(|k| !before.contains_key(*k)).collect();
        assert_eq!(added, ["vaultdm.toml"], "{v}");
        assert!(
            before.iter().all(|(k, bytes)| after.get(k) == Some(bytes)),
            "{v}"
        );
        // The written settings read back to the same canon.
        let loaded = s.load();
        assert!(
            loaded.config_diagnostics.is_empty(),
            "{v}: {:?}",
            loaded.config_diagnostics
        );
        let zero = support::load_fixture(v);
        assert_eq!(
            loaded.built.kinds, zero.built.kinds,
            "{v}: the written mapping reads the vault the same way"
        );
        // A second run never overwrites.
        let again = vaultdm()
            .args(["init", "--adopt"])
            .arg(&s.root)
            .output()
            .expect("run");
        assert!(
            String::from_utf8_lossy(&again.stdout).contains("exists already: nothing was written")
        );
        assert_eq!(support::all_files(&s.root), after);
    }
}

#[test]
fn adopt_mapping_snapshots() {
    for v in ["adopt-numbered", "adopt-nested-tags"] {
        let loaded = support::load_fixture(v);
        let m = Mapping::of(&loaded);
        insta::assert_snapshot!(format!("{v}_mapping"), m.summary());
        insta::assert_snapshot!(format!("{v}_toml"), m.to_toml("2026-11-23"));
    }
}

#[test]
fn a_folder_holding_obsidian_settings_is_found_as_the_vault() {
    let s = Scratch::of("adopt-nested-tags");
    let inside = s.root.join("heist/people");
    let out = vaultdm()
        .current_dir(&inside)
        .args(["check"])
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("checked 14 notes"));
}
