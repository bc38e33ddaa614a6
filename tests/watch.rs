//! Live reload, end to end: a real watcher on a temporary copy of `vault-template/`, real
//! file writes the way editors and tools make them, and the canon and diff that come out.
//!
//! Every test waits for the reload it needs with a deadline (`Vault::until`), never with a
//! bare sleep. After each change the live canon is also compared with a cold load of the
//! same folder, so the incremental path cannot drift from `canon::build`.

use crate::support::copy_dir;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use vaultdm::canon::{ChangeKind, EntityType, Loaded};
use vaultdm::context::{ModeChoice, Options};
use vaultdm::vault::Severity;
use vaultdm::watch::{LiveWatch, Reload, WatchOptions};

const DEADLINE: Duration = Duration::from_secs(15);

/// A watched copy of the template vault.
struct Vault {
    // Fields drop in order: stop watching before the folder goes.
    lw: LiveWatch,
    root: PathBuf,
    _dir: tempfile::TempDir,
}

fn options(poll: bool) -> WatchOptions {
    WatchOptions {
        poll,
        debounce: Duration::from_millis(80),
        quiet: Duration::from_millis(150),
        poll_interval: Duration::from_millis(150),
        ..WatchOptions::default()
    }
}

impl Vault {
    fn start() -> Vault {
        Vault::start_with(options(false))
    }

    fn start_with(opts: WatchOptions) -> Vault {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("coldharrow");
        copy_dir(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("vault-template"),
            &root,
        );
        let lw = LiveWatch::start(&root, &opts).expect("start watching");
        Vault {
            lw,
            root,
            _dir: dir,
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).expect("read note")
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.path(rel);
        if let Some(dir) = p.parent() {
            std::fs::create_dir_all(dir).expect("mkdir");
        }
        std::fs::write(p, text).expect("write note");
    }

    /// Replaces `from` with `to` in a note (exactly once).
    fn edit(&self, rel: &str, from: &str, to: &str) {
        let text = self.read(rel);
        assert_eq!(
            text.matches(from).count(),
            1,
            "{rel} should hold {from:?} once"
        );
        self.write(rel, &text.replacen(from, to, 1));
    }

    /// Applies reloads as they arrive until `done` holds for the live canon; returns every
    /// reload seen. Fails after the deadline.
    fn until(&mut self, what: &str, done: impl Fn(&vaultdm::watch::Live) -> bool) -> Vec<Reload> {
        let start = Instant::now();
        let mut seen = Vec::new();
        while start.elapsed() < DEADLINE {
            if let Some(r) = self.lw.wait_reload(Duration::from_millis(100)) {
                seen.push(r);
            }
            if done(self.lw.live()) {
                return seen;
            }
        }
        let lines: Vec<String> = seen.iter().map(ToString::to_string).collect();
        panic!(
            "timed out waiting for: {what}\nreloads seen:\n{}\nwatcher errors: {:?}",
            lines.join("\n"),
            self.lw.take_errors()
        );
    }

    /// Applies reloads as they arrive until one satisfies `want`, and returns it.
    fn reload_where(&mut self, what: &str, want: impl Fn(&Reload) -> bool) -> Reload {
        let start = Instant::now();
        let mut seen = Vec::new();
        while start.elapsed() < DEADLINE {
            if let Some(r) = self.lw.wait_reload(Duration::from_millis(100)) {
                if want(&r) {
                    return r;
                }
                seen.push(r.to_string());
            }
        }
        panic!(
            "timed out waiting for: {what}\nreloads seen:\n{}",
            seen.join("\n")
        );
    }

    /// The live canon equals a cold load of the same folder.
    fn assert_matches_cold_load(&self) {
        let cold = Loaded::load(&self.root).expect("cold load");
        let live = self.lw.live();
        assert_eq!(
            live.campaign(),
            &*cold.built.campaign,
            "live canon drifted from a cold load"
        );
        assert_eq!(
            live.engine().campaign(),
            &*cold.built.campaign,
            "the engine's canon drifted"
        );
        let mut a = live.loaded().diagnostics();
        let mut b = cold.diagnostics();
        a.sort_by(|x, y| {
            (&x.path, x.line, x.code, &x.message).cmp(&(&y.path, y.line, y.code, &y.message))
        });
        b.sort_by(|x, y| {
            (&x.path, x.line, x.code, &x.message).cmp(&(&y.path, y.line, y.code, &y.message))
        });
        assert_eq!(a, b, "live diagnostics drifted from a cold load");
    }
}

fn texts(reloads: &[Reload]) -> Vec<String> {
    reloads
        .iter()
        .flat_map(|r| r.changes.iter().map(|c| c.text.clone()))
        .collect()
}

fn npc<'a>(live: &'a vaultdm::watch::Live, name: &str) -> Option<&'a vaultdm::canon::Npc> {
    live.campaign().npcs.iter().find(|n| n.name == name)
}

fn pc<'a>(live: &'a vaultdm::watch::Live, name: &str) -> &'a vaultdm::canon::Pc {
    live.campaign()
        .pcs
        .iter()
        .find(|p| p.name == name)
        .expect("PC exists")
}

#[test]
fn editing_a_pcs_hp_reloads_with_the_change() {
    let mut v = Vault::start();
    v.edit(
        "canon/pcs/kit-calloway.md",
        "hp_current: 9",
        "hp_current: 4",
    );
    let seen = v.until("Kit at 4 HP", |l| {
        pc(l, "Kit Calloway").hp_current == Some(4)
    });
    assert_eq!(texts(&seen), ["Kit Calloway: HP 9/26 -> 4/26"]);
    let r = &seen[0];
    assert_eq!(
        (r.files, r.paths.as_slice()),
        (1, ["canon/pcs/kit-calloway.md".to_string()].as_slice())
    );
    assert!(r.diagnostics.is_empty(), "{r}");
    assert_eq!(
        r.to_string()
            .lines()
            .next()
            .map(|l| l.starts_with("canon reloaded (1 file, ")),
        Some(true)
    );
    assert!(
        r.to_string().ends_with("): Kit Calloway: HP 9/26 -> 4/26"),
        "{r}"
    );
    v.assert_matches_cold_load();
}

#[test]
fn moving_an_npc_into_the_partys_location_puts_them_in_the_scene() {
    let mut v = Vault::start();
    let scene_npcs = |v: &Vault| -> Vec<String> {
        let opts = Options {
            mode: ModeChoice::Full,
            npc_cap: 50,
            ..Options::default()
        };
        let inj = v.lw.live().engine().build(&opts).expect("context");
        inj.items
            .iter()
            .filter(|i| i.kind == "npc" && i.included)
            .map(|i| i.name.clone())
            .collect()
    };
    assert!(!scene_npcs(&v).contains(&"Ida Marsh".to_string()));
    v.edit(
        "canon/npcs/ida-marsh.md",
        "location: \"[[The Assay Office]]\"",
        "location: \"[[The Brass Canary]]\"",
    );
    let seen = v.until("Ida at the Canary", |l| {
        npc(l, "Ida Marsh").and_then(|n| n.location.as_deref())
            == Some("canon/locations/the-brass-canary.md")
    });
    assert_eq!(
        texts(&seen),
        ["Ida Marsh: location The Assay Office -> The Brass Canary"]
    );
    let c = &seen[0].changes[0];
    assert_eq!(
        (c.kind, c.entity_type, c.field.as_deref()),
        (ChangeKind::Changed, EntityType::Npc, Some("location"))
    );
    assert!(
        scene_npcs(&v).contains(&"Ida Marsh".to_string()),
        "{:?}",
        scene_npcs(&v)
    );
    v.assert_matches_cold_load();
}

#[test]
fn a_vim_style_save_is_one_edit() {
    let mut v = Vault::start();
    let rel = "canon/npcs/jonah-sallow.md";
    let new_text = v.read(rel).replacen("status: active", "status: dead", 1);
    // What vim does with `backupcopy=no`: probe the folder with 4913, move the original to
    // a backup, write a fresh file, drop the backup; with a swap file open all along.
    v.write("canon/npcs/.jonah-sallow.md.swp", "swap");
    v.write("canon/npcs/4913", "");
    std::fs::remove_file(v.path("canon/npcs/4913")).expect("rm 4913");
    std::fs::rename(v.path(rel), v.path("canon/npcs/jonah-sallow.md~")).expect("backup");
    v.write(rel, &new_text);
    std::fs::remove_file(v.path("canon/npcs/jonah-sallow.md~")).expect("rm backup");
    std::fs::remove_file(v.path("canon/npcs/.jonah-sallow.md.swp")).expect("rm swap");
    let seen = v.until("Jonah dead", |l| {
        npc(l, "Jonah Sallow").is_some_and(|n| n.status == "dead")
    });
    assert_eq!(texts(&seen), ["Jonah Sallow: status active -> dead"]);
    assert!(
        seen.iter().all(|r| r.paths == [rel.to_string()]),
        "only the note itself: {seen:?}"
    );

    // And the other common way: write a temp file beside it, rename it over.
    let text = v.read(rel).replacen("status: dead", "status: missing", 1);
    v.write("canon/npcs/jonah-sallow.md.tmp", &text);
    std::fs::rename(v.path("canon/npcs/jonah-sallow.md.tmp"), v.path(rel)).expect("rename over");
    let seen = v.until("Jonah missing", |l| {
        npc(l, "Jonah Sallow").is_some_and(|n| n.status == "missing")
    });
    assert_eq!(texts(&seen), ["Jonah Sallow: status dead -> missing"]);
    v.assert_matches_cold_load();
}

#[test]
fn a_deleted_note_leaves_canon() {
    let mut v = Vault::start();
    std::fs::remove_file(v.path("canon/npcs/mags-dunmore.md")).expect("rm");
    let seen = v.until("Mags gone", |l| npc(l, "Mags Dunmore").is_none());
    assert_eq!(texts(&seen), ["NPC removed: Mags Dunmore"]);
    assert_eq!(seen[0].changes[0].kind, ChangeKind::Removed);
    // The open threads link [[Mags Dunmore]]; that link now resolves to nothing.
    assert!(v
        .lw
        .live()
        .diagnostics()
        .iter()
        .any(|d| d.code == "unresolved-link" && d.message.contains("Mags Dunmore")));
    v.assert_matches_cold_load();
}

#[test]
fn a_renamed_note_keeps_its_identity() {
    let mut v = Vault::start();
    std::fs::create_dir_all(v.path("canon/npcs/company")).expect("mkdir");
    std::fs::rename(
        v.path("canon/npcs/ida-marsh.md"),
        v.path("canon/npcs/company/ida-marsh.md"),
    )
    .expect("mv");
    let seen = v.until("Ida moved", |l| {
        npc(l, "Ida Marsh").is_some_and(|n| n.id == "canon/npcs/company/ida-marsh.md")
    });
    let changes: Vec<_> = seen.iter().flat_map(|r| &r.changes).collect();
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0].kind, ChangeKind::Renamed);
    assert_eq!(
        changes[0].text,
        "Ida Marsh: note moved canon/npcs/ida-marsh.md -> canon/npcs/company/ida-marsh.md"
    );
    v.assert_matches_cold_load();
}

#[test]
fn a_note_created_in_a_new_folder_joins_canon() {
    let mut v = Vault::start();
    v.write(
        "arrivals/up-train/silas-pike.md",
        "---\ntype: npc\nname: Silas Pike\nrole: Pinkerton agent\nlocation: the-brass-canary\n---\n# Silas Pike\n\nA quiet man asking about Lottie.\n",
    );
    let seen = v.until("Silas here", |l| npc(l, "Silas Pike").is_some());
    assert_eq!(
        texts(&seen),
        ["NPC added: Silas Pike (at The Brass Canary)"]
    );
    // The matcher knows the new name.
    let m = v.lw.live().engine().matcher().find("I buy Silas a drink");
    assert_eq!(m.len(), 1, "{m:?}");
    v.assert_matches_cold_load();
}

#[test]
fn a_broken_note_keeps_its_last_good_version_until_fixed() {
    let mut v = Vault::start();
    let rel = "canon/pcs/oriel-fenn.md";
    let good = v.read(rel);
    // Half-typed YAML: an unclosed flow list, with the HP changed too.
    v.write(
        rel,
        &good
            .replacen("hp_current: 21", "hp_current: 3", 1)
            .replacen("conditions: []", "conditions: [poisoned", 1),
    );
    let seen = v.until("Oriel broken", |l| l.stale_notes() == [rel]);
    let r = seen.last().expect("a reload");
    assert!(r.changes.is_empty(), "canon must not change: {r}");
    assert!(
        r.diagnostics
            .iter()
            .any(|d| d.path == rel && d.code == "yaml-syntax" && d.severity == Severity::Error),
        "{r}"
    );
    assert!(
        r.diagnostics
            .iter()
            .any(|d| d.path == rel && d.code == "stale-note"),
        "{r}"
    );
    assert_eq!(pc(v.lw.live(), "Oriel Fenn").hp_current, Some(21));
    assert_eq!(
        pc(v.lw.live(), "Oriel Fenn").location.as_deref(),
        Some("canon/locations/the-brass-canary.md")
    );

    // Unclosed frontmatter is kept at bay the same way.
    v.write(rel, &good.replacen("---\n# Oriel", "# Oriel", 1));
    let r = v.reload_where("unclosed frontmatter reported", |r| {
        r.diagnostics
            .iter()
            .any(|d| d.code == "unclosed-frontmatter")
    });
    assert!(r.changes.is_empty(), "{r}");
    assert_eq!(v.lw.live().stale_notes(), [rel]);
    assert_eq!(pc(v.lw.live(), "Oriel Fenn").hp_current, Some(21));

    // Fixed: the new version applies.
    v.write(
        rel,
        &good
            .replacen("hp_current: 21", "hp_current: 3", 1)
            .replacen("conditions: []", "conditions: [poisoned]", 1),
    );
    let seen = v.until("Oriel fixed", |l| pc(l, "Oriel Fenn").hp_current == Some(3));
    assert!(v.lw.live().stale_notes().is_empty());
    let t = texts(&seen);
    assert!(
        t.contains(&"Oriel Fenn: HP 21/21 -> 3/21".to_string()),
        "{t:?}"
    );
    assert!(
        t.contains(&"Oriel Fenn: conditions none -> poisoned".to_string()),
        "{t:?}"
    );
    assert!(seen
        .iter()
        .flat_map(|r| &r.diagnostics)
        .any(|d| d.code == "note-fixed"));
    v.assert_matches_cold_load();
}

#[test]
fn three_hundred_files_at_once_are_one_or_few_reloads() {
    let mut v = Vault::start();
    for i in 0..300 {
        v.write(
            &format!("canon/npcs/crowd/miner-{i:03}.md"),
            &format!("---\nname: Miner No. {i}\nstatus: active\nlocation: the-sump\n---\nOne of the night shift.\n"),
        );
    }
    let seen = v.until("all 300 miners", |l| {
        l.campaign()
            .npcs
            .iter()
            .filter(|n| n.id.starts_with("canon/npcs/crowd/"))
            .count()
            == 300
    });
    assert!(seen.len() <= 3, "{} reloads for one burst", seen.len());
    let added = seen
        .iter()
        .flat_map(|r| &r.changes)
        .filter(|c| c.kind == ChangeKind::Added)
        .count();
    assert_eq!(added, 300);
    v.assert_matches_cold_load();
}

#[test]
fn settings_and_the_temporal_index_are_picked_up() {
    let mut v = Vault::start();
    v.write(
        "canon/temporal-index.json",
        "{\"current_day\": 7, \"current_time\": \"dawn\"}\n",
    );
    let seen = v.until("day 7", |l| l.campaign().day == Some(7));
    assert_eq!(texts(&seen), ["Day 6 evening -> Day 7 dawn"]);
    v.edit(
        "vaultdm.toml",
        "name = \"Coldharrow\"",
        "name = \"Coldharrow Nights\"",
    );
    let seen = v.until("renamed campaign", |l| {
        l.campaign().name == "Coldharrow Nights"
    });
    assert_eq!(
        texts(&seen),
        ["Coldharrow Nights: name Coldharrow -> Coldharrow Nights"]
    );
    v.assert_matches_cold_load();
}

#[test]
fn noise_never_reaches_a_reload() {
    let mut v = Vault::start();
    v.write(".obsidian/workspace.json", "{}");
    v.write(".trash/old.md", "---\nname: Old\n---\n");
    // A chat's transcript, beside its log: vaultdm's own file, never canon.
    v.write(".vaultdm/sessions/2026-11-22.jsonl", "");
    v.write(
        "sessions/2026-11-22.md",
        "# Session 2026-11-22\n\n**Player:** We wait.\n\n**DM:** Rain.\n",
    );
    v.write("canon/npcs/ezra-coil.md~", "backup");
    v.write("canon/npcs/#ezra-coil.md#", "autosave");
    v.edit(
        "canon/npcs/ezra-coil.md",
        "status: active",
        "status: missing",
    );
    let seen = v.until("Ezra missing", |l| {
        npc(l, "Ezra Coil").is_some_and(|n| n.status == "missing")
    });
    let paths: Vec<&String> = seen.iter().flat_map(|r| &r.paths).collect();
    assert_eq!(paths, ["canon/npcs/ezra-coil.md"]);
    v.assert_matches_cold_load();
}

#[test]
fn polling_sees_edits_too() {
    let mut v = Vault::start_with(options(true));
    assert_eq!(v.lw.watcher().backend(), vaultdm::watch::Backend::Poll);
    v.edit(
        "canon/pcs/hesper-quill.md",
        "hp_current: 14",
        "hp_current: 2",
    );
    let seen = v.until("Hesper at 2 HP", |l| {
        pc(l, "Hesper Quill").hp_current == Some(2)
    });
    assert_eq!(texts(&seen), ["Hesper Quill: HP 14/19 -> 2/19"]);
    v.assert_matches_cold_load();
}

#[test]
fn reload_now_rereads_everything() {
    let mut v = Vault::start();
    let r = v.lw.reload_now();
    assert!(r.full && r.changes.is_empty(), "{r}");
    v.assert_matches_cold_load();
}

/// `vaultdm watch --format json` prints one JSON line per reload and exits 0 on Ctrl-C.
#[cfg(unix)]
#[test]
fn the_watch_command_prints_json_lines_and_stops_on_ctrl_c() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("coldharrow");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("vault-template"),
        &root,
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_vaultdm"))
        .args(["watch", "--format", "json", "--debounce-ms", "80"])
        .env("VAULTDM_VAULT", &root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn vaultdm watch");
    let (tx, rx) = std::sync::mpsc::channel::<(bool, String)>();
    let out = child.stdout.take().expect("stdout");
    let err = child.stderr.take().expect("stderr");
    for (is_out, r) in [
        (true, Box::new(out) as Box<dyn std::io::Read + Send>),
        (false, Box::new(err)),
    ] {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(r).lines().map_while(Result::ok) {
                let _ = tx.send((is_out, line));
            }
        });
    }
    let next = |want_stdout: bool| -> String {
        let start = Instant::now();
        while start.elapsed() < DEADLINE {
            if let Ok((is_out, line)) = rx.recv_timeout(Duration::from_millis(100)) {
                if is_out == want_stdout {
                    return line;
                }
            }
        }
        panic!("no output from vaultdm watch");
    };
    assert!(next(false).starts_with("watching "), "ready line first");
    let note = root.join("canon/pcs/kit-calloway.md");
    let text = std::fs::read_to_string(&note).expect("read");
    std::fs::write(&note, text.replacen("hp_current: 9", "hp_current: 4", 1)).expect("write");
    let line = next(true);
    let json: serde_json::Value = serde_json::from_str(&line).expect("a JSON line");
    assert_eq!(json["changes"][0]["text"], "Kit Calloway: HP 9/26 -> 4/26");
    assert_eq!(json["files"], 1);
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill -INT");
    assert!(status.success());
    let start = Instant::now();
    let code = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        assert!(start.elapsed() < DEADLINE, "watch did not stop on SIGINT");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(code.success(), "exit status {code:?}");
}

#[test]
fn a_vault_moved_away_keeps_its_canon_instead_of_emptying_it() {
    let mut v = Vault::start();
    let npcs = v.lw.live().campaign().npcs.len();
    let moved = v.root.with_file_name("coldharrow-moved");
    std::fs::rename(&v.root, &moved).expect("move");
    let r = v.lw.reload_now();
    assert!(r.changes.is_empty(), "{:?}", r.changes);
    assert!(
        r.diagnostics.iter().any(|d| d.code == "vault-moved"),
        "{:?}",
        r.diagnostics
    );
    assert_eq!(v.lw.live().campaign().npcs.len(), npcs);
    assert!(!v.root.exists(), "no ghost folder");
    std::fs::rename(&moved, &v.root).expect("move back");
}
