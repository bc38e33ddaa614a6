//! The DM's proposals end to end, against the fake server: a fenced block (never shown to the
//! player) and a streamed tool call, listed for review, accepted with `vaultdm review`, the
//! auto mode, a server that refuses tools, and a scripted session after which the vault
//! holds every accepted change and `check` is clean.

use crate::support;

use crate::support::fake_llm::{openai_finish, openai_sse, openai_tool_chunk, FakeLlm, Scripted};
use assert_cmd::Command;
use std::path::Path;

fn cmd(vault: &Path) -> Command {
    let mut c = Command::cargo_bin("vaultdm").expect("bin");
    c.env_clear()
        .env("HOME", vault.join("no-home"))
        .env("OPENAI_API_KEY", "sk-test-000111222333444")
        .arg("--vault")
        .arg(vault);
    c
}

fn ask(root: &Path, base: &str, session: &str, message: &str) -> std::process::Output {
    cmd(root)
        .args([
            "ask",
            "--session",
            session,
            "--model",
            "m",
            "--base-url",
            base,
            message,
        ])
        .output()
        .expect("run")
}

fn read(vault: &Path, rel: &str) -> String {
    std::fs::read_to_string(vault.join(rel)).expect("read")
}

const FENCED: &[&str] = &[
    "The door gives. Brannock takes a splinter ",
    "in the arm.\n\n```vault",
    "dm-changes\n[{\"op\": \"set\", \"entity\": \"Brannock Tull\", \"field\": \"hp\", \"value\": \"-7\"},\n",
    " {\"op\": \"move\", \"entity\": \"party\", \"to\": \"The Assay Office\"},\n",
    " {\"op\": \"set\", \"entity\": \"Nobody Here\", \"field\": \"hp\", \"value\": 1}]\n```\n",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fenced_proposals_are_hidden_listed_and_accepted_by_review() {
    let v = support::template_copy();
    let fake = FakeLlm::start(vec![Scripted::sse(openai_sse(
        FENCED,
        Some("stop"),
        true,
        true,
    ))])
    .await;
    let base = fake.base_url_v1();
    let root = v.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || ask(&root, &base, "night", "I kick the door."))
        .await
        .expect("join");
    let shown = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(shown.contains("splinter in the arm."), "{shown}");
    assert!(
        !shown.contains("vaultdm-changes") && !shown.contains("\"op\""),
        "the block is never shown:\n{shown}"
    );
    assert!(err.contains("1. Brannock Tull: HP 22/30 -> 15/30"), "{err}");
    assert!(
        err.contains("2. party: The Brass Canary -> The Assay Office"),
        "{err}"
    );
    // What cannot be made is said at once, and decided as not applied.
    assert!(
        err.contains("3. not applied: ")
            && err.contains("(no PC or NPC is called \"Nobody Here\")"),
        "{err}"
    );
    // Nothing is written before the GM accepts.
    assert!(read(v.path(), "canon/pcs/brannock-tull.md").contains("hp: 22\n"));
    // The request offered the tool, and the system prompt describes the fence.
    let req = fake.requests()[0].json();
    assert_eq!(req["tools"][0]["function"]["name"], "propose_canon_changes");
    assert!(req["messages"][0]["content"]
        .as_str()
        .unwrap_or("")
        .contains("vaultdm-changes"));

    // Outside chat: the proposals survived the process; accept two of them.
    let list = cmd(v.path())
        .args(["review", "--session", "night"])
        .output()
        .expect("run");
    let list = String::from_utf8_lossy(&list.stdout).into_owned();
    assert!(
        list.contains("1. Brannock Tull: HP 22/30 -> 15/30"),
        "{list}"
    );
    let acc = cmd(v.path())
        .args(["review", "--session", "night", "--accept", "1", "2"])
        .output()
        .expect("run");
    assert!(
        acc.status.success(),
        "{}",
        String::from_utf8_lossy(&acc.stderr)
    );
    assert!(read(v.path(), "canon/pcs/brannock-tull.md").contains("hp: 15\n"));
    assert!(read(v.path(), "canon/pcs/oriel-fenn.md").contains("location: The Assay Office\n"));
    let left = cmd(v.path())
        .args(["review", "--session", "night"])
        .output()
        .expect("run");
    let left = String::from_utf8_lossy(&left.stdout).into_owned();
    // Numbers never move: the decided ones are listed as decided, under their own numbers.
    assert!(left.contains("no pending proposal"), "{left}");
    assert!(
        left.contains("1. accepted: Brannock Tull: HP 22/30 -> 15/30")
            && left.contains("2. accepted: party: The Brass Canary -> The Assay Office")
            && left.contains("3. not applied: "),
        "{left}"
    );
    // Accepting the one that could not be made writes nothing and says why.
    let bad = cmd(v.path())
        .args(["review", "--session", "night", "--accept", "3"])
        .output()
        .expect("run");
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("proposal 3 was already rejected"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
    let log = read(v.path(), ".vaultdm/sessions/night.changes.jsonl");
    let decided: Vec<serde_json::Value> = log
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["kind"] == "decided")
        .collect();
    let first = decided.first().expect("a decision");
    assert_eq!(first["items"], serde_json::json!([3]), "{log}");
    assert_eq!(first["accepted"], false, "{log}");
    assert!(
        first["reason"]
            .as_str()
            .is_some_and(|r| r.contains("Nobody Here")),
        "{log}"
    );
    let rej = cmd(v.path())
        .args(["review", "--session", "night", "--reject"])
        .output()
        .expect("run");
    assert!(rej.status.success());
    let none = cmd(v.path())
        .args(["review", "--session", "night"])
        .output()
        .expect("run");
    assert!(String::from_utf8_lossy(&none.stdout).contains("no pending proposal"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_tool_call_is_a_proposal_too() {
    let v = support::template_copy();
    let mut body = openai_sse(&["Night falls over the Row."], None, false, false);
    let args = r#"{"changes": [{"op": "time", "advance": 1, "time": "morning"}, {"op": "event", "text": "The strike bell rang."}]}"#;
    let (a, b) = args.split_at(37);
    body.push_str(&openai_tool_chunk(
        Some(0),
        Some("call_1"),
        Some("propose_canon_changes"),
        Some(a),
    ));
    body.push_str(&openai_tool_chunk(Some(0), None, None, Some(b)));
    body.push_str(&openai_finish("tool_calls"));
    body.push_str("data: [DONE]\n\n");
    let fake = FakeLlm::start(vec![Scripted::sse_bytewise(body)]).await;
    let base = fake.base_url_v1();
    let root = v.path().to_path_buf();
    std::fs::write(root.join("vaultdm.toml"), "[write]\nreview = \"auto\"\n").expect("toml");
    let out = tokio::task::spawn_blocking(move || ask(&root, &base, "night", "We sleep."))
        .await
        .expect("join");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("applied: clock: Day 6 evening -> Day 7 morning"),
        "{err}"
    );
    assert!(
        err.contains("applied: timeline Day 7: + The strike bell rang."),
        "{err}"
    );
    assert!(read(v.path(), "canon/temporal-index.json").contains("\"current_day\": 7"));
    assert!(read(v.path(), "canon/timeline.md").contains("- The strike bell rang."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_refuses_tools_is_asked_again_without_them() {
    let v = support::template_copy();
    let fake = FakeLlm::start(vec![
        Scripted::json(
            400,
            r#"{"error": {"message": "tools param requires --jinja flag"}}"#,
        ),
        Scripted::sse(openai_sse(&["Fine."], Some("stop"), true, true)),
    ])
    .await;
    let base = fake.base_url_v1();
    let root = v.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || ask(&root, &base, "s", "Hello?"))
        .await
        .expect("join");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("Fine."));
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 2);
    assert!(reqs[0].json().get("tools").is_some());
    assert!(reqs[1].json().get("tools").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scripted_session_leaves_every_accepted_change_in_the_vault() {
    let v = support::template_copy();
    let block = |json: &str| format!("\n```vaultdm-changes\n{json}\n```\n");
    let replies = [
        format!(
            "You climb to the assay office.{}",
            block(r#"[{"op":"move","entity":"party","to":"The Assay Office"}]"#)
        ),
        format!(
            "A guard clubs Brannock.{}",
            block(
                r#"[{"op":"set","entity":"Brannock","field":"hp","value":"-5"},{"op":"add","entity":"Kit","item":"a brass key"}]"#
            )
        ),
        format!(
            "Lottie is found below the shaft, cold.{}",
            block(
                r#"[{"op":"set","entity":"Lottie Greaves","field":"status","value":"dead"},{"op":"event","text":"Lottie Greaves was found dead below Shaft Nine."}]"#
            )
        ),
        format!(
            "A mule driver named Tobiah offers help.{}",
            block(
                r#"[{"op":"new_npc","name":"Tobiah Venn","role":"mule driver","location":"The Assay Office","disposition":"friendly","summary":"Drives the ore mules; owes Jonah a favour."}]"#
            )
        ),
        format!(
            "The miners vote; the strike is over.{}",
            block(
                r#"[{"op":"resolve","thread":"The Scrip Strike"},{"op":"new_thread","title":"Tobiah's Debt","priority":"low","summary":"Tobiah owes Jonah a favour.","next":"Ask Tobiah what he owes."}]"#
            )
        ),
    ];
    let fake = FakeLlm::start(
        replies
            .iter()
            .map(|r| Scripted::sse(openai_sse(&[r.as_str()], Some("stop"), true, true)))
            .collect(),
    )
    .await;
    let base = fake.base_url_v1();
    let root = v.path().to_path_buf();
    std::fs::write(root.join("vaultdm.toml"), "[write]\nreview = \"auto\"\n").expect("toml");
    let outs = tokio::task::spawn_blocking(move || {
        (0..5)
            .map(|i| ask(&root, &base, "scripted", &format!("turn {i}")))
            .collect::<Vec<_>>()
    })
    .await
    .expect("join");
    for o in &outs {
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{err}");
        assert!(!err.contains("could not"), "{err}");
    }
    let r = |p: &str| read(v.path(), p);
    assert!(r("canon/pcs/brannock-tull.md").contains("hp: 17\n"));
    assert!(r("canon/pcs/kit-calloway.md").contains("a brass key"));
    assert!(r("canon/npcs/lottie-greaves.md").contains("status: dead"));
    assert!(r("canon/timeline.md").contains("- Lottie Greaves was found dead below Shaft Nine."));
    assert!(r("canon/npcs/tobiah-venn.md").contains("mule driver"));
    let threads = r("canon/open-threads.md");
    assert!(
        threads
            .split("## Resolved")
            .nth(1)
            .unwrap_or("")
            .contains("The Scrip Strike"),
        "{threads}"
    );
    assert!(threads.contains("Tobiah's Debt"));
    let check = cmd(v.path()).arg("check").output().expect("run");
    let report = String::from_utf8_lossy(&check.stdout);
    assert!(check.status.success(), "{report}");
    assert!(report.contains("0 errors, 0 warnings"), "{report}");
    // The new NPC is canon at once: the next context at the assay office shows him.
    let ctx = cmd(v.path())
        .args(["context", "--light", "-m", "Tobiah?"])
        .output()
        .expect("run");
    assert!(String::from_utf8_lossy(&ctx.stdout).contains("Tobiah Venn"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_memory_note_is_written_and_the_gms_edit_is_what_the_next_prompt_uses() {
    let v = support::template_copy();
    let fake = FakeLlm::start(vec![
        Scripted::sse(openai_sse(
            &["A one-eyed mule driver called Pell Harrow spits into the snow."],
            Some("stop"),
            true,
            true,
        )),
        Scripted::sse(openai_sse(
            &["The road is quiet."],
            Some("stop"),
            true,
            true,
        )),
    ])
    .await;
    let base = fake.base_url_v1();
    let root = v.path().to_path_buf();
    let outs = tokio::task::spawn_blocking(move || {
        (
            ask(&root, &base, "mem", "who is that?"),
            ask(&root, &base, "mem", "we ride on."),
        )
    })
    .await
    .expect("join");
    assert!(outs.0.status.success() && outs.1.status.success());
    let note_path = v.path().join("sessions/mem.memory.md");
    let note = std::fs::read_to_string(&note_path).expect("the memory note");
    assert!(
        note.contains("- Pell Harrow: A one-eyed mule driver called Pell Harrow"),
        "{note}"
    );
    // The GM corrects it in Obsidian.
    let edited = note.replace(
        "A one-eyed mule driver called Pell Harrow spits into the snow.",
        "Mule driver, one eye; secretly paid by Vane.",
    );
    std::fs::write(&note_path, &edited).expect("edit");
    let out = cmd(v.path())
        .args([
            "prompt",
            "--session",
            "mem",
            "--message",
            "can we trust Pell?",
        ])
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Pell Harrow: Mule driver, one eye; secretly paid by Vane."),
        "{text}"
    );
    assert!(!text.contains("Pell Harrow: A one-eyed"), "{text}");
}

fn ordinary_session(v: &Path, n: usize) {
    let mut s = String::new();
    for i in 0..n {
        let dm = if i == 1 {
            "Odessa hides the strongbox key inside the piano and swears you to silence.".to_string()
        } else {
            format!("The stove crackles, round {i}, and the miners talk about snow and scrip.")
        };
        s.push_str(&serde_json::json!({"player": format!("we wait {i}"), "dm": dm}).to_string());
        s.push('\n');
    }
    let f = v.join("import.jsonl");
    std::fs::write(&f, s).expect("write");
    let out = cmd(v)
        .args(["session", "import"])
        .arg(&f)
        .args(["--session", "long"])
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_file(f).expect("rm");
    std::fs::write(v.join("vaultdm.toml"), "[llm]\nhistory_budget = 300\n").expect("toml");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_hot_history_is_summarised_into_previously() {
    let v = support::template_copy();
    ordinary_session(v.path(), 14);
    let fake = FakeLlm::start(vec![
        Scripted::sse(openai_sse(&["The snow keeps falling."], Some("stop"), true, true)),
        Scripted::sse(openai_sse(
            &["The party waited out the snow at the Canary; Odessa hid the strongbox key in the piano."],
            Some("stop"),
            true,
            true,
        )),
    ])
    .await;
    let base = fake.base_url_v1();
    let root = v.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || ask(&root, &base, "long", "we keep waiting"))
        .await
        .expect("join");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 2, "the reply, then the summary");
    let asked = reqs[1].json()["messages"][1]["content"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(asked.contains("Odessa hides the strongbox key"), "{asked}");
    let note = std::fs::read_to_string(v.path().join("sessions/long.memory.md")).expect("note");
    assert!(
        note.contains("## Previously\n\nThe party waited out the snow"),
        "{note}"
    );
    let p = cmd(v.path())
        .args(["prompt", "--session", "long", "--message", "what now?"])
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&p.stdout);
    assert!(
        text.contains("Previously:\nThe party waited out the snow"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_summary_never_blocks_play_and_the_moments_still_carry_the_past() {
    let v = support::template_copy();
    ordinary_session(v.path(), 14);
    let fake = FakeLlm::start(vec![
        Scripted::sse(openai_sse(
            &["The snow keeps falling."],
            Some("stop"),
            true,
            true,
        )),
        Scripted::json(400, r#"{"error": {"message": "context too long"}}"#),
    ])
    .await;
    let base = fake.base_url_v1();
    let root = v.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || ask(&root, &base, "long", "we keep waiting"))
        .await
        .expect("join");
    assert!(out.status.success(), "the reply still counts");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the session summary could not be written"),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("The snow keeps falling."));
    let p = cmd(v.path())
        .args([
            "prompt",
            "--session",
            "long",
            "--message",
            "where is the key?",
        ])
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&p.stdout);
    assert!(!text.contains("Previously:"), "{text}");
    assert!(text.contains("Odessa hides the strongbox key"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_provider_extracts_moments_and_terms_into_the_memory_note() {
    let v = support::template_copy();
    std::fs::write(v.path().join("vaultdm.toml"), "[memory]\nextract = true\n").expect("toml");
    let extracted = r#"Here you go: {"moments": [{"summary": "Ida agreed to test the ringing ore in secret", "significance": 4}, {"summary": "it snowed", "significance": 1}], "terms": [{"term": "Bellrock", "definition": "the miners' name for the ringing ore"}]}"#;
    let fake = FakeLlm::start(vec![
        Scripted::sse(openai_sse(
            &["Ida nods. \"Bring me the Bellrock after dark.\""],
            Some("stop"),
            true,
            true,
        )),
        Scripted::sse(openai_sse(&[extracted], Some("stop"), true, true)),
        Scripted::sse(openai_sse(&["Night falls."], Some("stop"), true, true)),
        Scripted::sse(openai_sse(&["no json at all"], Some("stop"), true, true)),
    ])
    .await;
    let base = fake.base_url_v1();
    let root = v.path().to_path_buf();
    let outs = tokio::task::spawn_blocking(move || {
        (
            ask(&root, &base, "x", "we ask Ida about the ore"),
            ask(&root, &base, "x", "we wait"),
        )
    })
    .await
    .expect("join");
    assert!(outs.0.status.success() && outs.1.status.success());
    assert!(
        String::from_utf8_lossy(&outs.1.stderr).contains("memory extraction answered without JSON")
    );
    let note = std::fs::read_to_string(v.path().join("sessions/x.memory.md")).expect("note");
    assert!(
        note.contains("## Moments\n\n- Ida agreed to test the ringing ore in secret (exchange 1)"),
        "{note}"
    );
    assert!(
        !note.contains("it snowed"),
        "insignificant moments are left out: {note}"
    );
    assert!(
        note.contains("- Bellrock: the miners' name for the ringing ore"),
        "{note}"
    );
    let p = cmd(v.path())
        .args([
            "prompt",
            "--session",
            "x",
            "--message",
            "what did Ida agree to?",
        ])
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&p.stdout);
    assert!(
        text.contains("Story so far:\n- Ida agreed to test the ringing ore in secret"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_mid_summary_loses_nothing_and_the_summary_is_tried_again() {
    let v = support::template_copy();
    ordinary_session(v.path(), 14);
    let fake = FakeLlm::start(vec![
        Scripted::sse(openai_sse(
            &["The snow keeps falling."],
            Some("stop"),
            true,
            true,
        )),
        // The summary call hangs: vaultdm is killed while it waits.
        Scripted::sse(openai_sse(&["never sent"], Some("stop"), true, true))
            .delay_headers(std::time::Duration::from_secs(30)),
        Scripted::sse(openai_sse(&["Morning comes."], Some("stop"), true, true)),
        Scripted::sse(openai_sse(
            &["Odessa hid the strongbox key in the piano; the party waited out the snow."],
            Some("stop"),
            true,
            true,
        )),
    ])
    .await;
    let base = fake.base_url_v1();
    let root = v.path().to_path_buf();
    let b2 = base.clone();
    tokio::task::spawn_blocking(move || {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_vaultdm"))
            .env_clear()
            .env("HOME", root.join("no-home"))
            .env("OPENAI_API_KEY", "sk-test-000111222333444")
            .arg("--vault")
            .arg(&root)
            .args([
                "ask",
                "--session",
                "long",
                "--model",
                "m",
                "--base-url",
                &b2,
                "we keep waiting",
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        let mut out = child.stdout.take().expect("stdout");
        let mut seen = String::new();
        let mut buf = [0u8; 256];
        while !seen.contains("The snow keeps falling.") {
            use std::io::Read;
            let n = out.read(&mut buf).expect("read");
            assert!(n > 0, "the reply never came: {seen}");
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
        std::thread::sleep(std::time::Duration::from_millis(300));
        child.kill().expect("kill -9");
        child.wait().expect("reaped");
    })
    .await
    .expect("join");
    // The exchange is in the log; no half summary anywhere.
    let log = std::fs::read_to_string(v.path().join(".vaultdm/sessions/long.jsonl")).expect("log");
    assert!(log.contains("The snow keeps falling."));
    let note =
        std::fs::read_to_string(v.path().join("sessions/long.memory.md")).unwrap_or_default();
    assert!(!note.contains("## Previously"), "{note}");
    // The next exchange tries the summary again.
    let root = v.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || ask(&root, &base, "long", "dawn?"))
        .await
        .expect("join");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let note = std::fs::read_to_string(v.path().join("sessions/long.memory.md")).expect("note");
    assert!(
        note.contains("## Previously\n\nOdessa hid the strongbox key"),
        "{note}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_summary_past_its_share_is_compressed_again() {
    let v = support::template_copy();
    ordinary_session(v.path(), 14);
    let long = "The party waited and the snow fell and the miners talked. ".repeat(60);
    let fake = FakeLlm::start(vec![
        Scripted::sse(openai_sse(
            &["The snow keeps falling."],
            Some("stop"),
            true,
            true,
        )),
        Scripted::sse(openai_sse(&[long.as_str()], Some("stop"), true, true)),
        Scripted::sse(openai_sse(
            &["The party waited out the snow."],
            Some("stop"),
            true,
            true,
        )),
    ])
    .await;
    let base = fake.base_url_v1();
    let root = v.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || ask(&root, &base, "long", "we keep waiting"))
        .await
        .expect("join");
    assert!(out.status.success());
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 3, "reply, summary, shorter summary");
    assert!(reqs[2].json()["messages"][1]["content"]
        .as_str()
        .unwrap_or("")
        .starts_with("Shorten this summary"));
    let note = std::fs::read_to_string(v.path().join("sessions/long.memory.md")).expect("note");
    assert!(
        note.contains("## Previously\n\nThe party waited out the snow.\n"),
        "{note}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_next_summary_merges_the_last_one() {
    let v = support::template_copy();
    ordinary_session(v.path(), 14);
    let fake = FakeLlm::start(vec![
        Scripted::sse(openai_sse(&["Snow."], Some("stop"), true, true)),
        Scripted::sse(openai_sse(
            &["FIRST: Odessa hid the key."],
            Some("stop"),
            true,
            true,
        )),
        Scripted::sse(openai_sse(&["More snow."], Some("stop"), true, true)),
        Scripted::sse(openai_sse(
            &["SECOND: Odessa hid the key; the party waited."],
            Some("stop"),
            true,
            true,
        )),
    ])
    .await;
    let base = fake.base_url_v1();
    let root = v.path().to_path_buf();
    let outs = tokio::task::spawn_blocking(move || {
        let first = ask(&root, &base, "long", "we wait");
        // Six more exchanges: summaries come in batches of six.
        let more: String = (0..6)
            .map(|i| {
                format!(
                    "{}\n",
                    serde_json::json!({"player": format!("later {i}"), "dm": "Snow again."})
                )
            })
            .collect();
        let f = root.join("more.jsonl");
        std::fs::write(&f, more).expect("write");
        let imp = cmd(&root)
            .args(["session", "import"])
            .arg(&f)
            .args(["--session", "long"])
            .output()
            .expect("run");
        assert!(imp.status.success());
        std::fs::remove_file(f).expect("rm");
        (first, ask(&root, &base, "long", "we wait more"))
    })
    .await
    .expect("join");
    assert!(outs.0.status.success() && outs.1.status.success());
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 4);
    let second = reqs[3].json()["messages"][1]["content"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(
        second.starts_with("Summary so far:\nFIRST: Odessa hid the key."),
        "{second}"
    );
    assert!(
        second.contains("[10] Player: we wait 9"),
        "only what the first did not cover: {second}"
    );
    assert!(!second.contains("[9] Player"), "{second}");
    let note = std::fs::read_to_string(v.path().join("sessions/long.memory.md")).expect("note");
    assert!(note.contains("## Previously\n\nSECOND:"), "{note}");
    assert!(
        note.contains("<!-- vaultdm: summary through passage 16 -->"),
        "{note}"
    );
}

/// Saves `rel` as Obsidian does, from another process: the new text to a temp file beside
/// it, then renamed over the note.
fn gm_saves(vault: &Path, rel: &str, edit: &str) {
    let path = vault.join(rel);
    let tmp = vault.join(format!("{rel}.obsidian-tmp"));
    let st = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "sed -e '{edit}' \"$1\" > \"$2\" && mv \"$2\" \"$1\""
        ))
        .arg("sh")
        .arg(&path)
        .arg(&tmp)
        .status()
        .expect("sh");
    assert!(st.success());
}

/// Proposes "Brannock HP -7" (shown 22/30 -> 15/30) and "Kit + a lantern" in session `s`.
async fn propose_two(v: &Path) {
    let block = "A bolt hits Brannock.\n```vaultdm-changes\n[{\"op\":\"set\",\"entity\":\"Brannock\",\"field\":\"hp\",\"value\":\"-7\"},{\"op\":\"add\",\"entity\":\"Kit\",\"item\":\"a lantern\"}]\n```\n";
    let fake = FakeLlm::start(vec![Scripted::sse(openai_sse(
        &[block],
        Some("stop"),
        true,
        true,
    ))])
    .await;
    let base = fake.base_url_v1();
    let root = v.to_path_buf();
    let out = tokio::task::spawn_blocking(move || ask(&root, &base, "s", "I duck."))
        .await
        .expect("join");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("1. Brannock Tull: HP 22/30 -> 15/30"), "{err}");
}

const BRANNOCK: &str = "canon/pcs/brannock-tull.md";

/// Each kind of GM edit made (by another process, as Obsidian saves) while a proposal waits:
/// the value it replaces changed or deleted is a conflict — nothing is written, the GM sees
/// old / now / proposed, the proposal stays pending under its number; another line changed
/// is no conflict, and the GM's line is kept. Through `review --accept` and `ask /accept`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accepting_over_the_gms_edit_is_a_conflict_and_writes_nothing() {
    for (edit, how, conflict) in [
        ("s/^hp: 22$/hp: 19/", "review", Some("is 19 now")),
        ("s/^hp: 22$/hp: 19/", "accept", Some("is 19 now")),
        ("/^hp: 22$/d", "review", Some("is missing now")),
        ("s/^hp: 22$/hp_current: 19/", "review", Some("is 19 now")),
        ("s/^max_hp: 30$/max_hp: 32/", "review", None),
    ] {
        let v = support::template_copy();
        propose_two(v.path()).await;
        gm_saves(v.path(), BRANNOCK, edit);
        let gm = read(v.path(), BRANNOCK);
        let kit = read(v.path(), "canon/pcs/kit-calloway.md");
        let out = if how == "review" {
            cmd(v.path())
                .args(["review", "--session", "s", "--accept", "1", "2"])
                .output()
                .expect("run")
        } else {
            cmd(v.path())
                .args(["ask", "--session", "s", "/accept 1 2"])
                .output()
                .expect("run")
        };
        let err = String::from_utf8_lossy(&out.stderr);
        match conflict {
            Some(now) => {
                assert_eq!(out.status.code(), Some(2), "{edit}: {err}");
                assert!(
                    err.contains("conflict: proposed Brannock Tull: HP 22/30 -> 15/30")
                        && err.contains("was 22 when proposed")
                        && err.contains(now)
                        && err.contains("nothing was written"),
                    "{edit}: {err}"
                );
                assert_eq!(read(v.path(), BRANNOCK), gm, "{edit}");
                assert_eq!(read(v.path(), "canon/pcs/kit-calloway.md"), kit, "{edit}");
                let list = cmd(v.path())
                    .args(["review", "--session", "s"])
                    .output()
                    .expect("run");
                let list = String::from_utf8_lossy(&list.stdout);
                assert!(
                    list.contains("1. conflict: proposed Brannock Tull")
                        && list.contains("2. Kit Calloway: inventory + a lantern"),
                    "{edit}: {list}"
                );
            }
            None => {
                assert!(out.status.success(), "{edit}: {err}");
                let now = read(v.path(), BRANNOCK);
                assert!(
                    now.contains("hp: 15\n") && now.contains("max_hp: 32\n"),
                    "{edit}: {now}"
                );
            }
        }
    }
}

/// A relative change is written as the absolute value it was shown as, never re-based on a
/// value the GM never saw: -7 shown as 22 -> 15 writes 15 (when HP is still 22), and the
/// change log records what was shown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relative_change_is_written_as_shown() {
    let v = support::template_copy();
    propose_two(v.path()).await;
    let log = read(v.path(), ".vaultdm/sessions/s.changes.jsonl");
    assert!(
        log.contains(r#""shown":"Brannock Tull: HP 22/30 -> 15/30""#)
            && log.contains(r#""value":15"#),
        "{log}"
    );
    let out = cmd(v.path())
        .args(["review", "--session", "s", "--accept", "1"])
        .output()
        .expect("run");
    assert!(out.status.success());
    assert!(read(v.path(), BRANNOCK).contains("hp: 15\n"));
}

/// Proposal numbers never move: after an accept, a reject, an /edit and a restart, each
/// number still names the change it was printed with.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proposal_numbers_are_stable_across_decisions_and_restarts() {
    let v = support::template_copy();
    let block = "Much happens.\n```vaultdm-changes\n[{\"op\":\"set\",\"entity\":\"Brannock\",\"field\":\"hp\",\"value\":20},{\"op\":\"add\",\"entity\":\"Kit\",\"item\":\"a lantern\"},{\"op\":\"set\",\"entity\":\"Lottie Greaves\",\"field\":\"status\",\"value\":\"missing\"},{\"op\":\"add\",\"entity\":\"Kit\",\"item\":\"chalk\"},{\"op\":\"set\",\"entity\":\"Brannock\",\"field\":\"ac\",\"value\":15},{\"op\":\"add\",\"entity\":\"Kit\",\"item\":\"a rope\"},{\"op\":\"set\",\"entity\":\"Brannock\",\"field\":\"gold\",\"value\":3}]\n```\n";
    let fake = FakeLlm::start(vec![Scripted::sse(openai_sse(
        &[block],
        Some("stop"),
        true,
        true,
    ))])
    .await;
    let base = fake.base_url_v1();
    let root = v.path().to_path_buf();
    tokio::task::spawn_blocking(move || ask(&root, &base, "s", "Go."))
        .await
        .expect("join");
    let review = |args: &[&str]| {
        let mut c = cmd(v.path());
        c.args(["review", "--session", "s"]).args(args);
        c.output().expect("run")
    };
    // Accept 2 (the lantern), then 7 and 3 still mean gold and Lottie.
    assert!(review(&["--accept", "2"]).status.success());
    assert!(review(&["--reject", "5", "7"]).status.success());
    assert!(review(&["--accept", "3"]).status.success());
    assert!(read(v.path(), "canon/npcs/lottie-greaves.md").contains("status: missing"));
    assert!(!read(v.path(), BRANNOCK).contains("gold: 3\n"));
    // /edit 4 replaces the chalk with the GM's own change; 1 is still Brannock's HP.
    let e = cmd(v.path())
        .args([
            "ask",
            "--session",
            "s",
            "/edit 4 /set kit inventory +white chalk",
        ])
        .output()
        .expect("run");
    assert!(e.status.success(), "{}", String::from_utf8_lossy(&e.stderr));
    let kit = read(v.path(), "canon/pcs/kit-calloway.md");
    assert!(
        kit.contains("white chalk") && kit.contains("a lantern"),
        "{kit}"
    );
    // A new process (a restart) lists the same numbers, decided ones as decided.
    let list = String::from_utf8_lossy(&review(&[]).stdout).into_owned();
    for line in [
        "1. Brannock Tull: HP 22/30 -> 20/30",
        "6. Kit Calloway: inventory + a rope",
        "2. accepted: Kit Calloway: inventory + a lantern",
        "3. accepted: Lottie Greaves: status",
        "4. rejected: Kit Calloway: inventory + chalk",
        "5. rejected: Brannock Tull: AC",
        "7. rejected: Brannock Tull: gold",
    ] {
        let line = line.replace("4. rejected", "4. replaced");
        assert!(list.contains(&line), "{line}\n{list}");
    }
    let again = review(&["--accept", "2"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("proposal 2 was already accepted"));
    assert!(review(&["--accept", "6", "1"]).status.success());
    let b = read(v.path(), BRANNOCK);
    assert!(b.contains("hp: 20\n"), "{b}");
    assert!(read(v.path(), "canon/pcs/kit-calloway.md").contains("a rope"));
}

/// A GM's `/set` between two `ask`s of one session (another process, in this session or
/// another) reaches the DM's next prompt as `Canon updated:`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_between_two_asks_reaches_the_next_prompt() {
    let v = support::template_copy();
    let fake = FakeLlm::start(vec![
        Scripted::sse(openai_sse(
            &["The mine is quiet."],
            Some("stop"),
            true,
            true,
        )),
        Scripted::sse(openai_sse(&["Brannock winces."], Some("stop"), true, true)),
    ])
    .await;
    let base = fake.base_url_v1();
    let root = v.path().to_path_buf();
    let reqs = tokio::task::spawn_blocking(move || {
        let first = ask(&root, &base, "s", "We walk in.");
        assert!(first.status.success());
        for (session, line) in [
            ("s", "/set brannock hp 12"),
            ("gm", "/set lottie status dead"),
        ] {
            let w = cmd(&root)
                .args(["ask", "--session", session, line])
                .output()
                .expect("run");
            assert!(w.status.success(), "{}", String::from_utf8_lossy(&w.stderr));
        }
        ask(&root, &base, "s", "How is Brannock?")
    })
    .await
    .expect("join");
    assert!(reqs.status.success());
    let last = fake.requests()[1].last_message();
    let block = last.split("Canon updated:").nth(1).unwrap_or("");
    assert!(
        block.contains("- Brannock Tull: HP 22/30 -> 12/30")
            && block.contains("- Lottie Greaves: status "),
        "{last}"
    );
    // The first prompt had nothing of the kind.
    assert!(!fake.requests()[0].last_message().contains("Canon updated:"));
}

/// `auto` mode while the GM saves the note as the reply streams (the canon the DM was given
/// is older than the note): the change is not applied over the GM's edit; it waits as a
/// conflict, and `review` later shows what it would now read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_mode_never_applies_over_a_gm_save_made_while_the_reply_streamed() {
    let v = support::template_copy();
    std::fs::write(
        v.path().join("vaultdm.toml"),
        "[write]\nreview = \"auto\"\n",
    )
    .expect("toml");
    let block = "A bolt hits Brannock.\n```vaultdm-changes\n[{\"op\":\"set\",\"entity\":\"Brannock\",\"field\":\"hp\",\"value\":\"-7\"},{\"op\":\"add\",\"entity\":\"Kit\",\"item\":\"a lantern\"}]\n```\n";
    let fake = FakeLlm::start(vec![Scripted::sse(openai_sse(
        &[block],
        Some("stop"),
        true,
        true,
    ))
    .delay_headers(std::time::Duration::from_millis(1500))])
    .await;
    let base = fake.base_url_v1();
    let root = v.path().to_path_buf();
    let asking = tokio::task::spawn_blocking(move || ask(&root, &base, "s", "I duck."));
    tokio::time::sleep(std::time::Duration::from_millis(600)).await;
    gm_saves(v.path(), BRANNOCK, "s/^hp: 22$/hp: 19/");
    let out = asking.await.expect("join");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(read(v.path(), BRANNOCK).contains("hp: 19\n"), "{err}");
    assert!(
        err.contains("1. conflict: proposed Brannock Tull: HP 22/30 -> 15/30")
            && err.contains("applied: Kit Calloway: inventory + a lantern"),
        "{err}"
    );
    let list = cmd(v.path())
        .args(["review", "--session", "s"])
        .output()
        .expect("run");
    let list = String::from_utf8_lossy(&list.stdout);
    assert!(
        list.contains("1. conflict: proposed Brannock Tull: HP 22/30 -> 15/30 but it would now read Brannock Tull: HP 19/30 -> 15/30"),
        "{list}"
    );
}
