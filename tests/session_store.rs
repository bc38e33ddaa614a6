//! Session storage on a real file system (in a temp dir): crash recovery, undo, transcript,
//! names, listing.

use std::fs;
use std::io::Write;
use std::path::Path;

use vaultdm::llm::{CutOff, Reply, Usage};
use vaultdm::session::{list_sessions, load, ContextMode, Record, RecordRole, SessionError, Store};

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"))
}

fn reply(text: &str) -> Reply {
    Reply {
        text: text.into(),
        complete: true,
        finish_reason: Some("stop".into()),
        usage: Some(Usage {
            input_tokens: Some(100),
            output_tokens: Some(20),
            cached_tokens: None,
        }),
        ..Reply::default()
    }
}

fn open(vault: &Path, name: &str) -> Store {
    Store::open(vault, name).unwrap_or_else(|e| panic!("open {name}: {e}"))
}

/// Play two exchanges: the first with full context, the second light.
fn play_two(vault: &Path, name: &str) {
    let mut s = open(vault, name);
    s.record_player(
        "We enter the tavern.",
        Some("## Canon\nThe Yawning Portal.".into()),
        Some(ContextMode::Full),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    s.record_dm(&reply("Durnan nods at you."), "openai", "llama3.1")
        .unwrap_or_else(|e| panic!("{e}"));
    s.record_player(
        "I order an ale.",
        Some("- Durnan: barkeep".into()),
        Some(ContextMode::Light),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    s.record_dm(&reply("He slides it over."), "openai", "llama3.1")
        .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn records_are_one_json_line_each_with_the_documented_fields() {
    let dir = tmp();
    play_two(dir.path(), "s1");
    let text =
        fs::read_to_string(dir.path().join(".vaultdm/sessions/s1.jsonl")).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4);
    assert!(text.ends_with('\n'));
    let first: serde_json::Value = serde_json::from_str(lines[0]).unwrap_or_default();
    assert_eq!(first["role"], "player");
    assert_eq!(first["mode"], "full");
    assert_eq!(first["injected_context"], "## Canon\nThe Yawning Portal.");
    assert!(chrono::DateTime::parse_from_rfc3339(first["time"].as_str().unwrap_or("")).is_ok());
    let dm: serde_json::Value = serde_json::from_str(lines[1]).unwrap_or_default();
    assert_eq!(dm["role"], "dm");
    assert_eq!(dm["provider"], "openai");
    assert_eq!(dm["model"], "llama3.1");
    assert_eq!(dm["usage"]["input_tokens"], 100);
    assert_eq!(dm["complete"], true);
    assert_eq!(dm["interrupted"], false);
}

#[test]
fn reopening_restores_history_with_only_full_context_kept() {
    let dir = tmp();
    play_two(dir.path(), "s1");
    let s = open(dir.path(), "s1");
    assert!(s.warnings().is_empty());
    let h = s.history();
    assert_eq!(h.len(), 2);
    assert_eq!(h[0].player, "We enter the tavern.");
    assert_eq!(
        h[0].full_context.as_deref(),
        Some("## Canon\nThe Yawning Portal.")
    );
    assert_eq!(h[1].dm, "He slides it over.");
    assert_eq!(
        h[1].full_context, None,
        "light context is not kept in history"
    );
}

#[test]
fn torn_last_line_is_dropped_with_a_warning_and_nothing_else_is_lost() {
    let dir = tmp();
    play_two(dir.path(), "s1");
    let log = dir.path().join(".vaultdm/sessions/s1.jsonl");
    let mut f = fs::OpenOptions::new()
        .append(true)
        .open(&log)
        .unwrap_or_else(|e| panic!("{e}"));
    f.write_all(br#"{"time":"2026-11-22T20:00:00+01:00","role":"player","text":"I cast fi"#)
        .unwrap_or_else(|e| panic!("{e}"));
    drop(f);

    // Read-only load reports it and keeps everything before it.
    let loaded = load(dir.path(), "s1").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(loaded.records.len(), 4);
    assert_eq!(loaded.warnings.len(), 1);
    assert_eq!(loaded.warnings[0].line, 5);
    assert!(
        loaded.warnings[0]
            .to_string()
            .contains("s1.jsonl:5: incomplete last line"),
        "{}",
        loaded.warnings[0]
    );

    // Opening for writing removes the fragment so the next record starts on its own line.
    let mut s = open(dir.path(), "s1");
    assert_eq!(s.warnings().len(), 1);
    assert_eq!(s.history().len(), 2);
    s.record_player("I cast fireball.", None, None)
        .unwrap_or_else(|e| panic!("{e}"));
    drop(s);
    let s = open(dir.path(), "s1");
    assert!(s.warnings().is_empty(), "{:?}", s.warnings());
    assert_eq!(s.records().len(), 5);
    assert_eq!(s.records()[4].text, "I cast fireball.");
}

#[test]
fn complete_last_line_without_newline_is_kept_and_terminated() {
    let dir = tmp();
    play_two(dir.path(), "s1");
    let log = dir.path().join(".vaultdm/sessions/s1.jsonl");
    let text = fs::read_to_string(&log).unwrap_or_default();
    fs::write(&log, text.trim_end()).unwrap_or_else(|e| panic!("{e}"));
    let mut s = open(dir.path(), "s1");
    assert!(s.warnings().is_empty());
    assert_eq!(s.records().len(), 4);
    s.append(Record::undo()).unwrap_or_else(|e| panic!("{e}"));
    drop(s);
    let loaded = load(dir.path(), "s1").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(loaded.records.len(), 5);
    assert!(loaded.warnings.is_empty());
}

#[test]
fn corrupt_middle_line_is_skipped_with_file_and_line() {
    let dir = tmp();
    play_two(dir.path(), "s1");
    let log = dir.path().join(".vaultdm/sessions/s1.jsonl");
    let text = fs::read_to_string(&log).unwrap_or_default();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines.insert(2, "{this is not json}".into());
    lines.insert(3, String::new());
    fs::write(&log, lines.join("\n") + "\n").unwrap_or_else(|e| panic!("{e}"));

    let s = open(dir.path(), "s1");
    assert_eq!(s.records().len(), 4);
    assert_eq!(s.warnings().len(), 1);
    let w = s.warnings()[0].to_string();
    assert!(w.contains("s1.jsonl:3:") && w.contains("skipped"), "{w}");
    assert_eq!(s.history().len(), 2);
    // The bad line is left on disk untouched.
    assert!(fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("{this is not json}"));
}

#[test]
fn undo_drops_from_history_but_not_from_disk() {
    let dir = tmp();
    play_two(dir.path(), "s1");
    let mut s = open(dir.path(), "s1");
    assert!(s.undo().unwrap_or_else(|e| panic!("{e}")));
    assert_eq!(s.history().len(), 1);
    assert_eq!(s.history()[0].dm, "Durnan nods at you.");
    drop(s);

    let log = dir.path().join(".vaultdm/sessions/s1.jsonl");
    let text = fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(text.lines().count(), 5, "nothing deleted");
    let last: serde_json::Value =
        serde_json::from_str(text.lines().last().unwrap_or("")).unwrap_or_default();
    assert_eq!(
        (last["role"].as_str(), last["event"].as_str()),
        (Some("system"), Some("undo"))
    );

    let mut s = open(dir.path(), "s1");
    assert_eq!(s.history().len(), 1, "undo honoured on load");
    assert!(s.undo().unwrap_or_else(|e| panic!("{e}")));
    assert!(s.history().is_empty());
    assert!(
        !s.undo().unwrap_or_else(|e| panic!("{e}")),
        "nothing left to undo"
    );
    assert_eq!(s.records().len(), 6, "a no-op undo writes nothing");
}

#[test]
fn undo_removes_an_unanswered_player_message() {
    let dir = tmp();
    let mut s = open(dir.path(), "s1");
    s.record_player("hello?", None, None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(s.undo().unwrap_or_else(|e| panic!("{e}")));
    s.record_player("hello again", None, None)
        .unwrap_or_else(|e| panic!("{e}"));
    s.record_dm(&reply("Hi."), "anthropic", "claude")
        .unwrap_or_else(|e| panic!("{e}"));
    let h = s.history();
    assert_eq!(h.len(), 1);
    assert_eq!(h[0].player, "hello again");
}

#[test]
fn transcript_is_readable_marks_cut_offs_and_hides_context() {
    let dir = tmp();
    play_two(dir.path(), "s1");
    let mut s = open(dir.path(), "s1");
    s.record_player(
        "I attack the ogre.",
        Some("SECRET CANON".into()),
        Some(ContextMode::Full),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let interrupted = Reply {
        text: "The ogre swings".into(),
        complete: false,
        cut_off: Some(CutOff::Interrupted),
        ..Reply::default()
    };
    s.record_dm(&interrupted, "openai", "m")
        .unwrap_or_else(|e| panic!("{e}"));
    s.record_player("Again.", None, None)
        .unwrap_or_else(|e| panic!("{e}"));
    let dropped = Reply {
        text: "It roa".into(),
        complete: false,
        cut_off: Some(CutOff::ConnectionLost),
        ..Reply::default()
    };
    s.record_dm(&dropped, "openai", "m")
        .unwrap_or_else(|e| panic!("{e}"));
    s.undo().unwrap_or_else(|e| panic!("{e}"));

    let md = fs::read_to_string(dir.path().join("sessions/s1.md")).unwrap_or_default();
    insta::assert_snapshot!(md, @r"
    # Session s1

    **Player:** We enter the tavern.

    **DM:** Durnan nods at you.

    **Player:** I order an ale.

    **DM:** He slides it over.

    **Player:** I attack the ogre.

    **DM:** The ogre swings

    *(reply interrupted)*

    **Player:** Again.

    **DM:** It roa

    *(reply cut off: the connection broke)*

    *(last exchange undone — the DM no longer sees it)*
    ");
    assert!(!md.contains("SECRET CANON"));
    assert!(!md.contains("Yawning Portal"));

    // The interrupted reply is on record as such.
    let dm = &s.records()[5];
    assert_eq!(dm.role, RecordRole::Dm);
    assert!(dm.interrupted && !dm.complete);
}

#[test]
fn names_are_validated_before_touching_the_disk() {
    let dir = tmp();
    for bad in ["../escape", "a/b", "..", ".hidden", "", "x\\y"] {
        let err = Store::open(dir.path(), bad).err();
        assert!(
            matches!(err, Some(SessionError::InvalidName { .. })),
            "{bad:?}: {err:?}"
        );
    }
    assert!(!dir.path().join(".vaultdm").exists());
    assert!(!dir
        .path()
        .parent()
        .unwrap_or(dir.path())
        .join("escape.jsonl")
        .exists());
}

#[test]
fn list_sessions_reports_name_count_and_last_time() {
    let dir = tmp();
    assert!(list_sessions(dir.path())
        .unwrap_or_else(|e| panic!("{e}"))
        .is_empty());
    play_two(dir.path(), "2026-11-22");
    let mut s = open(dir.path(), "2026-11-29");
    s.record_player("hi", None, None)
        .unwrap_or_else(|e| panic!("{e}"));
    drop(s);
    fs::write(
        dir.path().join(".vaultdm/sessions/notes.txt"),
        "not a session",
    )
    .unwrap_or_else(|e| panic!("{e}"));

    let list = list_sessions(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let summary: Vec<(&str, usize)> = list.iter().map(|i| (i.name.as_str(), i.records)).collect();
    assert_eq!(summary, vec![("2026-11-22", 4), ("2026-11-29", 1)]);
    assert!(list.iter().all(|i| i.last_time.is_some()));
}

#[test]
fn an_excluded_session_leaves_campaign_memory_and_a_deleted_one_leaves_nothing() {
    let dir = tmp();
    play_two(dir.path(), "2026-11-22");
    play_two(dir.path(), "test chat");
    let memory_note = dir.path().join("sessions/test chat.memory.md");
    fs::write(&memory_note, "# memory").unwrap_or_else(|e| panic!("{e}"));
    let was = vaultdm::session::set_excluded(dir.path(), "test chat", true)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!was);
    let names = |l: Vec<vaultdm::session::SessionInfo>| -> Vec<(String, bool)> {
        l.into_iter().map(|i| (i.name, i.excluded)).collect()
    };
    assert_eq!(
        names(list_sessions(dir.path()).unwrap_or_else(|e| panic!("{e}"))),
        vec![("2026-11-22".to_owned(), false)],
        "campaign memory reads only the sessions not excluded"
    );
    assert_eq!(
        names(vaultdm::session::list_all_sessions(dir.path()).unwrap_or_else(|e| panic!("{e}"))),
        vec![
            ("2026-11-22".to_owned(), false),
            ("test chat".to_owned(), true)
        ]
    );
    // Its own history is unchanged; including it again takes it back.
    assert_eq!(open(dir.path(), "test chat").history().len(), 2);
    assert!(
        vaultdm::session::set_excluded(dir.path(), "test chat", false)
            .unwrap_or_else(|e| panic!("{e}"))
    );
    assert_eq!(list_sessions(dir.path()).map(|l| l.len()).unwrap_or(0), 2);

    // Delete: refused while it is open, then every file of it goes, only it.
    let held = open(dir.path(), "test chat");
    assert!(matches!(
        vaultdm::session::delete(dir.path(), "test chat"),
        Err(SessionError::Locked { .. })
    ));
    drop(held);
    let removed =
        vaultdm::session::delete(dir.path(), "test chat").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(removed.len(), 3, "{removed:?}");
    for p in [
        dir.path().join(".vaultdm/sessions/test chat.jsonl"),
        dir.path().join(".vaultdm/sessions/test chat.lock"),
        dir.path().join("sessions/test chat.md"),
        memory_note,
    ] {
        assert!(!p.exists(), "{}", p.display());
    }
    assert!(dir.path().join("sessions/2026-11-22.md").exists());
    assert_eq!(
        load(dir.path(), "2026-11-22")
            .map(|l| l.records.len())
            .unwrap_or(0),
        4
    );
    assert!(matches!(
        vaultdm::session::delete(dir.path(), "test chat"),
        Err(SessionError::NoSuchSession { .. })
    ));
    assert!(matches!(
        vaultdm::session::delete(dir.path(), "../2026-11-22"),
        Err(SessionError::InvalidName { .. })
    ));
}

#[test]
fn supersede_undoes_exchanges_and_an_unanswered_message() {
    let dir = tmp();
    play_two(dir.path(), "s");
    let mut s = open(dir.path(), "s");
    s.record_player("failed", None, None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.supersede(1).unwrap_or_else(|e| panic!("{e}")), 2);
    assert_eq!(s.history().len(), 1);
    assert_eq!(s.supersede(0).unwrap_or_else(|e| panic!("{e}")), 0);
}

// ---- Faults (docs/reliability.md) -------------------------------------------------------

#[test]
fn a_second_writer_is_refused_with_the_holder_named() {
    let dir = tmp();
    let _first = open(dir.path(), "night");
    let err = Store::open(dir.path(), "night")
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        err.contains("session \"night\" is already open in another vaultdm")
            && err.contains(&format!("pid {}", std::process::id()))
            && err.contains("--session NAME"),
        "{err}"
    );
    drop(_first);
    assert!(
        Store::open(dir.path(), "night").is_ok(),
        "the lock goes with its holder"
    );
}

#[test]
fn a_log_replaced_by_a_sync_tool_is_reopened_not_written_to_the_unlinked_file() {
    let dir = tmp();
    let mut s = open(dir.path(), "s1");
    s.record_player("one", None, None)
        .unwrap_or_else(|e| panic!("{e}"));
    s.record_dm(&reply("One."), "p", "m")
        .unwrap_or_else(|e| panic!("{e}"));
    // A sync tool writes its copy next to the file and renames it over.
    let log = dir.path().join(".vaultdm/sessions/s1.jsonl");
    let tmp_copy = dir.path().join(".vaultdm/sessions/.s1.jsonl.sync");
    fs::copy(&log, &tmp_copy).unwrap_or_else(|e| panic!("{e}"));
    fs::rename(&tmp_copy, &log).unwrap_or_else(|e| panic!("{e}"));

    s.record_player("two", None, None)
        .unwrap_or_else(|e| panic!("{e}"));
    s.record_dm(&reply("Two."), "p", "m")
        .unwrap_or_else(|e| panic!("{e}"));
    let notices = s.take_notices();
    assert!(
        notices.iter().any(|n| n.contains("was replaced on disk")),
        "{notices:?}"
    );
    drop(s);
    let loaded = load(dir.path(), "s1").unwrap_or_else(|e| panic!("{e}"));
    let texts: Vec<&str> = loaded.records.iter().map(|r| r.text.as_str()).collect();
    assert_eq!(texts, ["one", "One.", "two", "Two."]);
    assert!(loaded.warnings.is_empty());
}

#[test]
fn a_log_replaced_by_an_older_copy_gets_the_acknowledged_records_back() {
    let dir = tmp();
    let log = dir.path().join(".vaultdm/sessions/s1.jsonl");
    let mut s = open(dir.path(), "s1");
    s.record_player("one", None, None)
        .unwrap_or_else(|e| panic!("{e}"));
    let older = fs::read(&log).unwrap_or_default();
    s.record_dm(&reply("One."), "p", "m")
        .unwrap_or_else(|e| panic!("{e}"));
    // `git pull` brings back the version from before the reply.
    let staged = dir.path().join("older.jsonl");
    fs::write(&staged, &older).unwrap_or_else(|e| panic!("{e}"));
    fs::rename(&staged, &log).unwrap_or_else(|e| panic!("{e}"));
    s.record_player("two", None, None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(s
        .take_notices()
        .iter()
        .any(|n| n.contains("lacking 1 records") && n.contains("wrote them back")));
    drop(s);
    let loaded = load(dir.path(), "s1").unwrap_or_else(|e| panic!("{e}"));
    let texts: Vec<&str> = loaded.records.iter().map(|r| r.text.as_str()).collect();
    assert_eq!(texts, ["one", "One.", "two"]);
}

#[test]
fn a_moved_vault_is_never_written_and_no_ghost_folder_appears() {
    let parent = tmp();
    let vault = parent.path().join("campaign");
    fs::create_dir_all(&vault).unwrap_or_else(|e| panic!("{e}"));
    let mut s = open(&vault, "s1");
    s.record_player("before", None, None)
        .unwrap_or_else(|e| panic!("{e}"));
    let moved = parent.path().join("campaign-moved");
    fs::rename(&vault, &moved).unwrap_or_else(|e| panic!("{e}"));
    let err = s.record_player("after", None, None).err();
    assert!(
        matches!(err, Some(SessionError::VaultMoved { .. })),
        "{err:?}"
    );
    assert!(!vault.exists(), "no ghost folder at the old path");
    // A new folder at the old path is not the vault either.
    fs::create_dir_all(&vault).unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(
        s.record_player("after", None, None).err(),
        Some(SessionError::VaultMoved { .. })
    ));
    assert_eq!(fs::read_dir(&vault).map(|d| d.count()).unwrap_or(9), 0);
    let moved_log =
        fs::read_to_string(moved.join(".vaultdm/sessions/s1.jsonl")).unwrap_or_default();
    assert!(moved_log.contains("before") && !moved_log.contains("after"));
}

#[cfg(unix)]
#[test]
fn session_files_linked_out_of_the_vault_are_never_written() {
    use std::os::unix::fs::symlink;
    let vault = tmp();
    let outside = tmp();
    let victim = outside.path().join("victim.txt");
    fs::write(&victim, "the GM's other file\n").unwrap_or_else(|e| panic!("{e}"));

    // A planted transcript link: the record is saved, the link's target is untouched.
    fs::create_dir_all(vault.path().join("sessions")).unwrap_or_else(|e| panic!("{e}"));
    symlink(&victim, vault.path().join("sessions/s1.md")).unwrap_or_else(|e| panic!("{e}"));
    let mut s = open(vault.path(), "s1");
    s.record_player("secret plan", None, None)
        .unwrap_or_else(|e| panic!("{e}"));
    let notices = s.take_notices();
    assert!(
        notices.iter().any(|n| n.contains("outside the vault")),
        "{notices:?}"
    );
    drop(s);

    // A planted log link: the session does not open.
    fs::create_dir_all(vault.path().join(".vaultdm/sessions")).unwrap_or_else(|e| panic!("{e}"));
    symlink(&victim, vault.path().join(".vaultdm/sessions/s2.jsonl"))
        .unwrap_or_else(|e| panic!("{e}"));
    let err = Store::open(vault.path(), "s2").err().map(|e| e.to_string());
    assert!(
        err.as_deref()
            .is_some_and(|e| e.contains("outside the vault")),
        "{err:?}"
    );
    assert_eq!(
        fs::read_to_string(&victim).unwrap_or_default(),
        "the GM's other file\n"
    );

    // A `sessions/` folder that is itself a link out of the vault is refused.
    let other = tmp();
    let v2 = tmp();
    symlink(other.path(), v2.path().join("sessions")).unwrap_or_else(|e| panic!("{e}"));
    let err = Store::open(v2.path(), "s1").err().map(|e| e.to_string());
    assert!(
        err.as_deref()
            .is_some_and(|e| e.contains("sessions is a link")),
        "{err:?}"
    );
    assert_eq!(
        fs::read_dir(other.path()).map(|d| d.count()).unwrap_or(9),
        0
    );
}

#[test]
fn a_reply_journal_left_by_a_killed_process_is_recovered_as_a_cut_off_reply() {
    let dir = tmp();
    let mut s = open(dir.path(), "s1");
    s.record_player("I pick the lock.", None, None)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut j = s
        .begin_reply("openai", "m")
        .unwrap_or_else(|e| panic!("{e}"));
    j.push("The tumblers ");
    j.flush();
    j.push("click one by one");
    j.flush();
    j.push(" and then"); // never flushed: the process dies here
    drop(j);
    drop(s); // no record_dm: as if killed

    let mut s = open(dir.path(), "s1");
    let last = s
        .records()
        .last()
        .cloned()
        .unwrap_or_else(|| panic!("no records"));
    assert_eq!(last.role, RecordRole::Dm);
    assert_eq!(last.text, "The tumblers click one by one");
    assert!(!last.complete);
    assert_eq!(last.cut_off, Some(CutOff::Crashed));
    assert_eq!(last.model.as_deref(), Some("m"));
    assert!(s
        .take_notices()
        .iter()
        .any(|n| n.contains("recovered 29 characters")));
    assert!(!dir.path().join(".vaultdm/sessions/s1.partial").exists());
    let md = fs::read_to_string(dir.path().join("sessions/s1.md")).unwrap_or_default();
    assert!(
        md.contains(
            "The tumblers click one by one\n\n*(reply cut off: vaultdm was stopped mid-reply)*"
        ),
        "{md}"
    );
    drop(s);
    // Recovery happens once.
    assert_eq!(open(dir.path(), "s1").records().len(), 2);
}

#[test]
fn a_journal_whose_reply_was_already_recorded_is_discarded() {
    let dir = tmp();
    let mut s = open(dir.path(), "s1");
    s.record_player("hi", None, None)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut j = s.begin_reply("p", "m").unwrap_or_else(|e| panic!("{e}"));
    j.push("Hello.");
    j.flush();
    // The record was written but the process died before removing the journal.
    s.append(Record::dm(&reply("Hello."), "p", "m"))
        .unwrap_or_else(|e| panic!("{e}"));
    drop(j);
    drop(s);
    let s = open(dir.path(), "s1");
    assert_eq!(s.records().len(), 2, "no duplicate reply");
    assert!(!dir.path().join(".vaultdm/sessions/s1.partial").exists());
}

/// A GM's own session note in `sessions/` with the name of a session to play: vaultdm never
/// appends a transcript to it (nor hides it from canon by writing a log beside it); a
/// session it wrote itself resumes.
#[test]
fn a_gm_session_note_of_the_same_name_is_never_written_into() {
    let dir = tmp();
    let note = dir.path().join("sessions/Session 34.md");
    fs::create_dir_all(dir.path().join("sessions")).unwrap_or_else(|e| panic!("{e}"));
    let text = "# Session 34\n\nThe party reached the ferry at dusk.\n";
    fs::write(&note, text).unwrap_or_else(|e| panic!("{e}"));
    match Store::open(dir.path(), "Session 34") {
        Err(SessionError::NoteInTheWay { path }) => assert_eq!(path, note),
        other => panic!("expected NoteInTheWay, got {other:?}"),
    }
    assert_eq!(fs::read_to_string(&note).unwrap_or_default(), text);
    assert!(!dir
        .path()
        .join(".vaultdm/sessions/Session 34.jsonl")
        .exists());
    // vaultdm's own transcript (its log beside it) is resumed as before.
    play_two(dir.path(), "s1");
    let mut s = open(dir.path(), "s1");
    s.record_player("We go on.", None, None)
        .unwrap_or_else(|e| panic!("{e}"));
}
