//! Long-session memory through the CLI: `session import` (both formats), `prompt` with its
//! layers and budget, recall across sessions, and the glossary.

use crate::support;

use assert_cmd::Command;
use std::path::Path;

fn cmd(vault: &Path) -> Command {
    let mut c = Command::cargo_bin("vaultdm").expect("bin");
    c.env_clear()
        .env("HOME", vault.join("no-home"))
        .arg("--vault")
        .arg(vault);
    c
}

/// A session of `n` ordinary exchanges with one planted fact at exchange `at`.
fn session(n: usize, at: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        let (player, dm) = if i == at {
            (
                "who's the fellow at the door?".to_string(),
                "A lanky telegraph boy called Silas Breck hands you a note: the adit key is under the third stair of the chapel.".to_string(),
            )
        } else {
            (
                format!("we wait and drink, round {i}"),
                format!("The stove crackles and the miners talk about snow and scrip for the {i}th time. Odessa polishes a glass."),
            )
        };
        s.push_str(&serde_json::json!({"player": player, "dm": dm}).to_string());
        s.push('\n');
    }
    s
}

fn import(v: &Path, file_text: &str, name: &str) {
    let f = v.join("import.jsonl");
    std::fs::write(&f, file_text).expect("write");
    let out = cmd(v)
        .args(["session", "import"])
        .arg(&f)
        .args(["--session", name])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_file(f).expect("rm");
}

fn prompt(v: &Path, session: &str, message: &str, budget: usize) -> serde_json::Value {
    let out = cmd(v)
        .args([
            "prompt",
            "--session",
            session,
            "--message",
            message,
            "--format",
            "json",
        ])
        .args(["--budget", &budget.to_string()])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

fn whole(p: &serde_json::Value) -> String {
    p["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn an_old_fact_is_recalled_within_the_budget_and_the_layers_say_so() {
    let v = support::template_copy();
    import(v.path(), &session(120, 7), "long");
    let p = prompt(
        v.path(),
        "long",
        "where did that note say the adit key was hidden?",
        3000,
    );
    let text = whole(&p);
    assert!(text.contains("third stair of the chapel"), "{text}");
    assert!(p["tokens"].as_u64().expect("tokens") <= 3000, "{p}");
    assert!(!p["layers"]["recalled"]["passages"]
        .as_array()
        .expect("passages")
        .is_empty());
    assert_eq!(p["layers"]["recalled"]["passages"][0]["exchange"], 8);
    // The coined name is in the glossary with its sentence, whatever the message.
    let p = prompt(v.path(), "long", "we leave the saloon", 3000);
    assert!(
        whole(&p).contains("Silas Breck: A lanky telegraph boy"),
        "{}",
        whole(&p)
    );
    assert!(p["layers"]["glossary"]["terms"].as_u64().expect("terms") >= 1);
    // The hot history carries the last exchanges verbatim.
    assert!(whole(&p).contains("round 119"));
}

#[test]
fn a_new_session_remembers_the_last_one() {
    let v = support::template_copy();
    import(v.path(), &session(30, 3), "night-1");
    let p = prompt(
        v.path(),
        "night-2",
        "what did the telegraph boy tell us about the key?",
        4000,
    );
    let text = whole(&p);
    assert!(text.contains("third stair of the chapel"), "{text}");
    assert!(text.contains("(session night-1)"), "{text}");
}

#[test]
fn sillytavern_exports_import_as_exchanges() {
    let v = support::template_copy();
    let st = [
        serde_json::json!({"user_name": "GM", "character_name": "DM", "create_date": "2025-1-1"}),
        serde_json::json!({"name": "DM", "is_user": false, "mes": "The lamps gutter."}),
        serde_json::json!({"name": "GM", "is_user": true, "mes": "I light a match."}),
        serde_json::json!({"name": "DM", "is_user": false, "mes": "A woman named Vera Quill steps out of the dark."}),
    ]
    .iter()
    .map(|j| format!("{j}\n"))
    .collect::<String>();
    import(v.path(), &st, "st");
    let log = std::fs::read_to_string(v.path().join(".vaultdm/sessions/st.jsonl")).expect("log");
    assert_eq!(
        log.lines().count(),
        4,
        "two exchanges, a player and a DM record each"
    );
    assert!(log.contains("I light a match."));
    let out = cmd(v.path())
        .args([
            "session",
            "import",
            "/nonexistent/file.jsonl",
            "--session",
            "x",
        ])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/file.jsonl"));
}

#[test]
fn prompt_without_a_session_leaves_nothing_behind() {
    let v = support::template_copy();
    let out = cmd(v.path())
        .args(["prompt", "--message", "We arrive."])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("## system"), "{text}");
    assert!(text.contains("## user: this message (full canon"), "{text}");
    let left: Vec<_> = std::fs::read_dir(v.path().join(".vaultdm/sessions"))
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn dormant_npcs_are_offered_back_but_never_the_dead() {
    let v = support::template_copy();
    let mut s = String::new();
    for i in 0..60 {
        let dm = match i {
            2 | 5 => {
                "Ezra Coil mutters about the assay ledgers. Abel Strand's name comes up again."
                    .to_string()
            }
            _ => format!("The stove crackles, round {i}. Odessa polishes a glass."),
        };
        s.push_str(&serde_json::json!({"player": format!("we wait {i}"), "dm": dm}).to_string());
        s.push('\n');
    }
    import(v.path(), &s, "quiet");
    let p = prompt(v.path(), "quiet", "we look around", 6000);
    let text = whole(&p);
    let line = text
        .lines()
        .find(|l| l.starts_with("Dormant threads you may bring back:"))
        .unwrap_or_else(|| panic!("no callback line:\n{text}"));
    assert!(line.contains("Ezra Coil"), "{line}");
    assert!(!line.contains("Strand"), "the dead stay dead: {line}");
}

#[test]
fn the_layer_budgets_of_a_long_session() {
    let v = support::template_copy();
    import(v.path(), &session(120, 7), "long");
    let p = prompt(
        v.path(),
        "long",
        "where did that note say the adit key was hidden?",
        4000,
    );
    let why = &p["layers"]["recalled"]["passages"][0]["why"];
    assert!(
        why.as_array().is_some_and(|w| w.iter().any(|x| x == "key")),
        "{why}"
    );
    let layers = serde_json::to_string_pretty(&p["layers"]).expect("json");
    insta::assert_snapshot!("layers_long_session_4000", layers);
    assert!(p["tokens"].as_u64().expect("tokens") <= 4000);
}

#[test]
fn a_new_session_starts_with_the_last_sessions_summary() {
    let v = support::template_copy();
    import(v.path(), &session(10, 3), "night-1");
    std::fs::write(
        v.path().join("sessions/night-1.memory.md"),
        "# Memory: night-1\n\n## Previously\n\nThe party found the adit key under the chapel stair.\n\n## Glossary\n\n<!-- vaultdm: through passage 10 -->\n<!-- vaultdm: summary through passage 4 -->\n",
    )
    .expect("note");
    let p = prompt(v.path(), "night-2", "we set out", 4000);
    let text = whole(&p);
    assert!(
        text.contains(
            "Previously:\n(session night-1) The party found the adit key under the chapel stair."
        ),
        "{text}"
    );
}

#[test]
fn prompt_reads_a_session_a_chat_holds_without_writing_to_it() {
    let v = support::template_copy();
    import(v.path(), &session(40, 3), "tonight");
    let log = v.path().join(".vaultdm/sessions/tonight.jsonl");
    let before = std::fs::read(&log).expect("log");
    // A chat holds the session.
    let held = vaultdm::session::Store::open(v.path(), "tonight").expect("held");
    let p = prompt(v.path(), "tonight", "where was the adit key hidden?", 4000);
    assert!(
        whole(&p).contains("third stair of the chapel"),
        "{}",
        whole(&p)
    );
    drop(held);
    assert_eq!(std::fs::read(&log).expect("log"), before, "nothing written");
}

#[test]
fn the_recall_index_is_kept_on_disk_and_rebuilt_when_broken() {
    let v = support::template_copy();
    import(v.path(), &session(30, 3), "night-1");
    let ask = "what did the telegraph boy tell us about the key?";
    let p = prompt(v.path(), "night-2", ask, 4000);
    assert!(whole(&p).contains("third stair of the chapel"));
    let index = v.path().join(".vaultdm/memory/recall.idx");
    assert!(index.is_file(), "the index is written on first use");
    // Cut short, then overwritten: rebuilt from the logs, the same recall.
    let bytes = std::fs::read(&index).expect("index");
    for broken in [bytes[..bytes.len() / 3].to_vec(), b"garbage".to_vec()] {
        std::fs::write(&index, &broken).expect("break it");
        let p = prompt(v.path(), "night-2", ask, 4000);
        assert!(whole(&p).contains("third stair of the chapel"));
        assert_eq!(std::fs::read(&index).expect("rewritten"), bytes);
    }
    // Another process appends to night-1 after the index was written: its new exchange is
    // recalled (read from where the index stopped).
    let log = v.path().join(".vaultdm/sessions/night-1.jsonl");
    let mut text = std::fs::read_to_string(&log).expect("log");
    for (role, t) in [
        ("player", "what about the smelter?"),
        (
            "dm",
            "Mae Sallow says the smelter's ledger is sewn into the organ bellows.",
        ),
    ] {
        text.push_str(
            &serde_json::json!({"time": "2026-11-26T21:00:00+00:00", "role": role, "text": t})
                .to_string(),
        );
        text.push('\n');
    }
    std::fs::write(&log, text).expect("append");
    let p = prompt(
        v.path(),
        "night-2",
        "where is the smelter ledger hidden?",
        4000,
    );
    assert!(whole(&p).contains("organ bellows"), "{}", whole(&p));
    // The index file itself was not rewritten for one exchange.
    assert_eq!(std::fs::read(&index).expect("index"), bytes);
}
