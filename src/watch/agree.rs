//! The walk, the native watcher's filter, the poller and the live reload agree on which
//! files are notes: one table of paths, each checked against all four.

use super::live::Live;
use super::poll::scan;
use super::watcher::add;
use crate::vault::scope::{is_noise, leads_outside};
use crate::vault::{walk, Scope};
use notify::event::{CreateKind, EventKind};
use notify_debouncer_full::DebouncedEvent;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Where a path goes: a note (the walk finds it, the live reload puts it in canon), seen by
/// the watcher's filter, reported by the poller.
struct Row {
    rel: &'static str,
    note: bool,
    watched: bool,
    polled: bool,
}

const fn row(rel: &'static str, note: bool, watched: bool, polled: bool) -> Row {
    Row {
        rel,
        note,
        watched,
        polled,
    }
}

/// Notes are seen by all; settings, templates and other files reach the watcher and the
/// poller (a reload may need them) but are no notes; noise reaches nothing.
const TABLE: &[Row] = &[
    row("canon/npcs/ida.md", true, true, true),
    row("notes/Shout.MD", true, true, true),
    row("heist/sessions/s1.md", true, true, true),
    row("Sessions/s2.md", true, true, true),
    row("canon/npcs/linked-ida.md", true, true, true), // a link that stays inside
    row("vaultdm.toml", false, true, true),
    row("canon/temporal-index.json", false, true, true),
    row("notes/handout.txt", false, true, true),
    row("Templates/npc.md", false, true, true),
    row("tpl/full.j2", false, true, true),
    // A transcript vaultdm writes (its log is in .vaultdm/sessions/) and a GM's session
    // note beside it.
    row("sessions/2026-01-01.md", false, true, true),
    row("sessions/Session 33 - Nyema.md", true, true, true),
    row(".obsidian/workspace.md", false, false, false),
    row("notes/.trash/old.md", false, false, false),
    row("drafts~/draft.md", false, false, false),
    row("notes/ida.md~", false, false, false),
    row("notes/.ida.md.swp", false, false, false),
    row("notes/#ida.md#", false, false, false),
    row("notes/~$ida.md", false, false, false),
    row("notes/ida.tmp.md", false, false, false),
    row("notes/4913", false, false, false),
    // Through a link out of the vault: the path alone passes the watcher's filter (native
    // events never come from there), but nothing reads it.
    row("linked-out/far.md", false, true, false),
];

fn rel(root: &Path, p: &Path) -> String {
    walk::rel_path(root, p).unwrap_or_default()
}

#[cfg(unix)]
#[test]
fn walk_watcher_poller_and_reload_agree_on_notes() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let outside = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let root = dir
        .path()
        .join("vault")
        .canonicalize()
        .or_else(|_| {
            std::fs::create_dir_all(dir.path().join("vault"))?;
            dir.path().join("vault").canonicalize()
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let write = |rel: &str| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap_or(&root)).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(&p, "---\nname: Someone\n---\n").unwrap_or_else(|e| panic!("{e}"));
    };
    // Start with a vault holding one note, so live canon loads before the rest arrives.
    std::fs::create_dir_all(root.join("canon")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(root.join("canon/keep.md"), "# Keep\n").unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(root.join("vaultdm.toml"), "templates = \"tpl\"\n")
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(root.join(".vaultdm/sessions")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(root.join(".vaultdm/sessions/2026-01-01.jsonl"), "")
        .unwrap_or_else(|e| panic!("{e}"));
    let mut live = Live::load(&root).unwrap_or_else(|e| panic!("{e}"));

    std::fs::write(outside.path().join("far.md"), "# Far\n").unwrap_or_else(|e| panic!("{e}"));
    symlink(outside.path(), root.join("linked-out")).unwrap_or_else(|e| panic!("{e}"));
    for r in TABLE {
        match r.rel {
            "linked-out/far.md" | "vaultdm.toml" => {}
            "canon/npcs/linked-ida.md" => {}
            other => write(other),
        }
    }
    symlink(
        root.join("canon/npcs/ida.md"),
        root.join("canon/npcs/linked-ida.md"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let table_paths: BTreeSet<&str> = TABLE.iter().map(|r| r.rel).collect();

    // The walk (what a cold load reads).
    let mut scope = Scope::detect(&root, &[]);
    let (found, _) = walk::walk(&root, &mut scope);
    let walked: BTreeSet<String> = found
        .into_iter()
        .map(|f| f.rel)
        .filter(|r| table_paths.contains(r.as_str()))
        .collect();

    // The poller's scan.
    let polled: BTreeSet<String> = scan(&root)
        .into_keys()
        .map(|p| rel(&root, &p))
        .filter(|r| table_paths.contains(r.as_str()))
        .collect();

    // The native watcher's filter, given an event for every path.
    let events: Vec<DebouncedEvent> = TABLE
        .iter()
        .map(|r| {
            let e =
                notify::Event::new(EventKind::Create(CreateKind::File)).add_path(root.join(r.rel));
            DebouncedEvent::new(e, Instant::now())
        })
        .collect();
    let (mut passed, mut errors) = (BTreeSet::<PathBuf>::new(), Vec::new());
    add(&root, Ok(events), &mut passed, &mut errors);
    let watched: BTreeSet<String> = passed.iter().map(|p| rel(&root, p)).collect();

    // The live reload, given every path the watcher passed.
    let paths: Vec<PathBuf> = passed.into_iter().collect();
    live.apply(&paths);
    let in_canon: BTreeSet<String> = live
        .loaded()
        .vault
        .notes
        .iter()
        .map(|n| n.path.clone())
        .filter(|p| table_paths.contains(p.as_str()))
        .collect();

    let want = |f: fn(&Row) -> bool| -> BTreeSet<String> {
        TABLE
            .iter()
            .filter(|r| f(r))
            .map(|r| r.rel.to_string())
            .collect()
    };
    assert_eq!(walked, want(|r| r.note), "the walk");
    assert_eq!(in_canon, want(|r| r.note), "the live reload");
    assert_eq!(watched, want(|r| r.watched), "the watcher's filter");
    assert_eq!(polled, want(|r| r.polled), "the poller");
    for r in TABLE {
        if r.note {
            assert!(
                r.watched && r.polled,
                "{}: a note every watcher sees",
                r.rel
            );
        }
        // The scope says the same, but for what only the disk can tell.
        let by_path = scope.is_note(r.rel) && !leads_outside(&root, &root.join(r.rel));
        assert_eq!(by_path, r.note, "{}", r.rel);
        assert_eq!(!is_noise(r.rel), r.watched, "{}", r.rel);
    }
}
