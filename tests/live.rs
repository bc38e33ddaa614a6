//! Live canon without a watcher: files change on disk, [`Live::apply`] gets the paths the
//! watcher would report, and the result must equal a cold load of the same folder. No
//! waiting on file events, so each case is exact.

use crate::support::Scratch;
use std::path::PathBuf;
use vaultdm::canon::{Loaded, TEMPORAL_INDEX};
use vaultdm::context::{Engine, Options};
use vaultdm::watch::{Live, Reload};

/// A scratch copy of a fixture vault with live canon over it.
struct Table {
    s: Scratch,
    live: Live,
}

impl Table {
    fn of(fixture: &str) -> Table {
        let s = Scratch::of(fixture);
        let live = Live::load(&s.root).expect("live canon loads");
        Table { s, live }
    }

    fn apply(&mut self, rels: &[&str]) -> Reload {
        let paths: Vec<PathBuf> = rels.iter().map(|r| self.s.root.join(r)).collect();
        self.live.apply(&paths)
    }

    fn cold(&self) -> Loaded {
        Loaded::load(&self.s.root).expect("cold load")
    }

    /// Live canon, the engine's canon and the engine's mentions equal a cold load's.
    fn assert_matches_cold_load(&self, messages: &[&str]) {
        let cold = self.cold();
        assert_eq!(self.live.campaign(), &*cold.built.campaign, "live canon");
        // One copy of canon: the engine reads the live campaign itself, not a copy.
        assert!(
            std::ptr::eq(self.live.campaign(), self.live.engine().campaign()),
            "the engine holds a copy of canon"
        );
        assert!(std::ptr::eq(
            self.live.campaign(),
            &*self.live.loaded().built.campaign
        ));
        assert_eq!(
            self.live.engine().campaign(),
            &*cold.built.campaign,
            "the engine's canon"
        );
        let engine = Engine::for_vault(&self.s.root, &cold).expect("engine");
        for m in messages {
            let opts = Options {
                message: Some(m.to_string()),
                ..Options::for_vault(&cold.config.context)
            };
            let live = self.live.engine().build(&opts).expect("live context");
            let want = engine.build(&opts).expect("cold context");
            assert_eq!(live.text, want.text, "context for {m:?}");
        }
    }
}

#[test]
fn the_temporal_index_is_read_again_when_it_changes() {
    let mut t = Table::of("saltreach");
    let before = t.live.campaign().day;
    t.s.write(
        TEMPORAL_INDEX,
        "{\"current_day\": 42, \"current_time\": \"the small hours\"}\n",
    );
    let r = t.apply(&[TEMPORAL_INDEX]);
    assert!(!r.full, "an incremental reload: {r}");
    assert_eq!(r.paths, [TEMPORAL_INDEX]);
    assert_ne!(before, Some(42));
    assert_eq!(t.live.campaign().day, Some(42));
    assert_eq!(t.live.engine().campaign().day, Some(42));
    assert_eq!(t.live.campaign().time.as_deref(), Some("the small hours"));
    assert!(
        r.changes
            .iter()
            .any(|c| c.text.ends_with("-> Day 42 the small hours")),
        "{r}"
    );
    assert_eq!(t.live.loaded().files, t.cold().files);
    t.assert_matches_cold_load(&["What now?"]);

    // Broken, then gone: the same diagnostics and fallbacks as a cold load.
    t.s.write(TEMPORAL_INDEX, "{\"current_day\": \n");
    let r = t.apply(&[TEMPORAL_INDEX]);
    assert!(
        r.diagnostics.iter().any(|d| d.code == "temporal-index"),
        "{r}"
    );
    t.assert_matches_cold_load(&["What now?"]);
    t.s.remove(TEMPORAL_INDEX);
    t.apply(&[TEMPORAL_INDEX]);
    t.assert_matches_cold_load(&["What now?"]);
}

#[test]
fn session_notes_and_parties_reach_the_engine() {
    let mut t = Table::of("saltreach");
    t.s.write(
        "Session Notes/Session 1.md",
        "# Session 1: The Drowned Bell\n\nThe party heard the bell under the harbour.\n",
    );
    t.apply(&["Session Notes/Session 1.md"]);
    t.assert_matches_cold_load(&["What now?", "Remember The Drowned Bell?"]);
    t.s.write(
        "Session Notes/Session 2.md",
        "# Session 2: Salt and Smoke\n\nThe party burned the nets.\n",
    );
    t.s.remove("Session Notes/Session 1.md");
    t.apply(&["Session Notes/Session 1.md", "Session Notes/Session 2.md"]);
    t.assert_matches_cold_load(&["What now?", "Remember Salt and Smoke?"]);
}

#[test]
fn a_party_switch_reaches_every_pc_in_the_engine() {
    let s = Scratch::of("adopt-groups");
    // The Copper Crew's notes were edited an hour ago and the rivals' two hours ago.
    for (rel, ago) in [
        ("Party/Ashe.md", 3600),
        ("Party/Bram.md", 3600),
        ("Party/Cyrus.md", 3600),
        ("Party/Rivals/Vex.md", 7200),
        ("Party/Rivals/Nyx.md", 7200),
    ] {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(s.root.join(rel))
            .expect("open");
        f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(ago))
            .expect("set mtime");
    }
    let live = Live::load(&s.root).expect("live canon loads");
    let mut t = Table { s, live };
    let party = |c: &vaultdm::canon::Campaign| -> Vec<String> {
        c.party().map(|p| p.name.clone()).collect()
    };
    assert_eq!(party(t.live.engine().campaign()), ["Ashe", "Bram", "Cyrus"]);
    // The rivals are edited now: they are the party in play.
    t.s.edit(
        "Party/Rivals/Vex.md",
        "A Black Lantern.",
        "A Black Lantern, limping.",
    );
    t.s.edit("Party/Rivals/Nyx.md", "---\n", "---\nhp: 3/12\n");
    let r = t.apply(&["Party/Rivals/Vex.md", "Party/Rivals/Nyx.md"]);
    assert_eq!(party(t.live.campaign()), ["Nyx", "Vex"]);
    let said: Vec<&str> = r.changes.iter().map(|c| c.text.as_str()).collect();
    for who in ["Ashe", "Bram", "Cyrus"] {
        assert!(
            said.contains(&format!("{who}: left the active party").as_str()),
            "{said:?}"
        );
    }
    assert_eq!(party(t.live.engine().campaign()), ["Nyx", "Vex"]);
    t.assert_matches_cold_load(&["What now?", "Vex and Ashe argue"]);
}

/// A note linked by the end of its path (`[[docks/net-loft]]`) moves to another folder with
/// the same end: what links to it is built again and follows it, as a cold load would.
#[test]
fn a_note_linked_by_a_partial_path_is_followed_when_it_moves() {
    let s = Scratch::of("saltreach");
    s.write(
        "canon/locations/docks/net-loft.md",
        "---\nname: The Net Loft\n---\nNets dry under the eaves.\n",
    );
    s.write(
        "canon/npcs/old-wend.md",
        "---\nname: Old Wend\nstatus: active\nlocation: \"[[docks/net-loft]]\"\n---\nMends nets.\n",
    );
    let live = Live::load(&s.root).expect("live canon loads");
    let mut t = Table { s, live };
    let wend_at = |t: &Table| {
        let c = t.live.campaign();
        let wend = c
            .npcs
            .iter()
            .find(|n| n.name == "Old Wend")
            .expect("Old Wend");
        wend.location.clone()
    };
    assert_eq!(
        wend_at(&t).as_deref(),
        Some("canon/locations/docks/net-loft.md")
    );
    std::fs::create_dir_all(t.s.root.join("canon/locations/harbour/docks")).expect("mkdir");
    std::fs::rename(
        t.s.root.join("canon/locations/docks/net-loft.md"),
        t.s.root.join("canon/locations/harbour/docks/net-loft.md"),
    )
    .expect("mv");
    let r = t.apply(&[
        "canon/locations/docks/net-loft.md",
        "canon/locations/harbour/docks/net-loft.md",
    ]);
    assert!(!r.full, "{r}");
    assert_eq!(
        wend_at(&t).as_deref(),
        Some("canon/locations/harbour/docks/net-loft.md")
    );
    t.assert_matches_cold_load(&["Old Wend mends nets at the Net Loft"]);
}

#[test]
fn a_moved_thread_note_resolves_under_its_new_path() {
    let s = Scratch::of("saltreach");
    s.write(
        "canon/threads/job.md",
        "---\nname: The Vault Job\npriority: high\n---\nCrack the harbourmaster's vault before the tide.\n",
    );
    let live = Live::load(&s.root).expect("live canon loads");
    let mut t = Table { s, live };
    let mentioned = |t: &Table, msg: &str| -> Vec<String> {
        let e = t.live.engine();
        e.matcher()
            .find(msg)
            .iter()
            .map(|m| match m.target {
                vaultdm::context::Target::Thread(i) => e.campaign().threads[i as usize].id.clone(),
                other => format!("{other:?}"),
            })
            .collect()
    };
    assert_eq!(mentioned(&t, "we follow [[job]]"), ["canon/threads/job.md"]);
    std::fs::rename(
        t.s.root.join("canon/threads/job.md"),
        t.s.root.join("canon/threads/midnight-run.md"),
    )
    .expect("mv");
    let r = t.apply(&["canon/threads/job.md", "canon/threads/midnight-run.md"]);
    assert!(!r.full, "{r}");
    assert_eq!(
        mentioned(&t, "we follow [[midnight-run]]"),
        ["canon/threads/midnight-run.md"]
    );
    assert!(mentioned(&t, "we follow [[job]]").is_empty());
    t.assert_matches_cold_load(&["we follow [[midnight-run]]", "we follow [[job]]"]);
}

// ------------------------------------------------ settings and templates reach the table

const LIGHT: &str = include_str!("../src/context/templates/light.j2");

/// A table (no provider: previews only) playing on live canon.
fn table_at(t: &Table) -> vaultdm::play::Table {
    let cfg = &t.live.loaded().config.context;
    vaultdm::play::Table::new(
        t.live.engine().clone(),
        Options::for_vault(cfg),
        None,
        vaultdm::session::Store::open(&t.s.root, "live-test").expect("session"),
        6000,
        cfg.full_context_after_changes,
    )
    .expect("table")
}

/// A vault overriding `light.j2` with a marker line.
fn with_light_template(marker: &str) -> Table {
    let s = Scratch::of("saltreach");
    let toml = std::fs::read_to_string(s.root.join("vaultdm.toml")).expect("toml");
    s.write("vaultdm.toml", &format!("templates = \"tpl\"\n{toml}"));
    s.write("tpl/light.j2", &format!("{marker}\n{LIGHT}"));
    let live = Live::load(&s.root).expect("live canon loads");
    Table { s, live }
}

#[test]
fn a_template_edit_reaches_the_table_without_any_canon_change() {
    let mut t = with_light_template("MARKER ONE");
    let mut table = table_at(&t);
    let engine_text = |table: &vaultdm::play::Table| {
        let opts = Options {
            message: Some("I order a drink".into()),
            mode: vaultdm::context::ModeChoice::Light,
            ..Options::default()
        };
        table.engine().build(&opts).expect("context").text
    };
    assert!(engine_text(&table).contains("MARKER ONE"));

    t.s.write("tpl/light.j2", &format!("MARKER TWO\n{LIGHT}"));
    let r = t.apply(&["tpl/light.j2"]);
    assert!(r.changes.is_empty(), "no canon change: {r}");
    assert!(r.templates, "{r}");
    assert_eq!(
        r.settings_notices(),
        ["templates reloaded: the next message uses them"]
    );
    table.take_reload(&r, &t.live);
    let text = engine_text(&table);
    assert!(
        text.contains("MARKER TWO") && !text.contains("MARKER ONE"),
        "{text}"
    );
}

#[test]
fn a_broken_template_on_reload_keeps_the_last_good_ones_and_says_where() {
    let mut t = with_light_template("MARKER ONE");
    let mut table = table_at(&t);
    // Line 3 does not parse.
    t.s.write(
        "tpl/light.j2",
        "MARKER TWO\n{{ party }\n{% for x in party %}\n",
    );
    let r = t.apply(&["tpl/light.j2"]);
    assert!(!r.templates, "{r}");
    let d = r
        .diagnostics
        .iter()
        .find(|d| d.code == "template")
        .unwrap_or_else(|| panic!("no template diagnostic: {r}"));
    assert_eq!(d.path, "tpl/light.j2");
    assert!(d.line >= 2, "{d}");
    assert!(
        d.message.ends_with("the previous templates are kept"),
        "{d}"
    );
    assert!(t.live.diagnostics().contains(d));
    table.take_reload(&r, &t.live);
    let opts = Options {
        message: Some("I order a drink".into()),
        mode: vaultdm::context::ModeChoice::Light,
        ..Options::default()
    };
    let text = table
        .engine()
        .build(&opts)
        .expect("the last good templates render")
        .text;
    assert!(text.contains("MARKER ONE"), "{text}");

    // A template that parses but fails to render is refused too.
    t.s.write(
        "tpl/light.j2",
        "MARKER THREE {{ party | no_such_filter }}\n",
    );
    let r = t.apply(&["tpl/light.j2"]);
    assert!(!r.templates, "{r}");
    assert!(
        r.diagnostics
            .iter()
            .any(|d| d.path == "tpl/light.j2" && d.line == 1 && d.code == "template"),
        "{r}"
    );

    // Fixed: the new templates are in use, and the GM is told.
    t.s.write("tpl/light.j2", &format!("MARKER FOUR\n{LIGHT}"));
    let r = t.apply(&["tpl/light.j2"]);
    assert!(r.templates, "{r}");
    assert!(
        r.diagnostics.iter().any(|d| d.code == "template-fixed"),
        "{r}"
    );
    assert!(t.live.diagnostics().iter().all(|d| d.code != "template"));
    table.take_reload(&r, &t.live);
    let text = table.engine().build(&opts).expect("context").text;
    assert!(text.contains("MARKER FOUR"), "{text}");
}

#[test]
fn context_settings_reach_the_table() {
    let mut t = Table::of("saltreach");
    let mut table = table_at(&t);
    let npcs_shown = |table: &mut vaultdm::play::Table| {
        table.force_full();
        let p = table.preview(None).expect("preview");
        p.injected
            .items
            .iter()
            .filter(|i| i.kind == "npc" && i.included)
            .count()
    };
    let before = npcs_shown(&mut table);
    assert!(before > 1, "the fixture shows several NPCs in the scene");
    let toml = std::fs::read_to_string(t.s.root.join("vaultdm.toml")).expect("toml");
    t.s.write("vaultdm.toml", &format!("{toml}\n[context]\nnpc_cap = 1\n"));
    let r = t.apply(&["vaultdm.toml"]);
    assert_eq!(r.context, ["npc_cap 5 -> 1"]);
    assert_eq!(
        r.settings_notices(),
        ["[context] settings changed in vaultdm.toml (npc_cap 5 -> 1): the next message uses them"]
    );
    table.take_reload(&r, &t.live);
    assert_eq!(npcs_shown(&mut table), 1);
}

/// A role is what makes a head noun (`the lamplighter`): an NPC's new role reaches the mention
/// matcher on a reload, as a cold load has it, though no name, alias or id changed.
#[test]
fn a_changed_role_reaches_the_mention_matcher() {
    let mut t = Table::of("saltreach");
    let rel = "canon/npcs/bosun-kettle.md";
    let named = |t: &Table, msg: &str| -> Vec<String> {
        let e = t.live.engine();
        e.matcher()
            .find(msg)
            .iter()
            .map(|m| match m.target {
                vaultdm::context::Target::Npc(i) => e.campaign().npcs[i as usize].name.clone(),
                other => format!("{other:?}"),
            })
            .collect()
    };
    assert_eq!(named(&t, "we ask the bruiser"), ["Bosun Kettle"]);
    t.s.edit(rel, "dock bruiser for hire", "night lamplighter");
    let r = t.apply(&[rel]);
    assert!(!r.full, "{r}");
    assert_eq!(named(&t, "we ask the lamplighter"), ["Bosun Kettle"]);
    assert!(named(&t, "we ask the bruiser").is_empty());
    t.assert_matches_cold_load(&["we ask the lamplighter", "we ask the bruiser"]);
}
