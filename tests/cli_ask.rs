//! `vaultdm ask` and `vaultdm config` as a script would run them, against the fake server.

use crate::support;

use crate::support::fake_llm::{openai_sse, FakeLlm, Scripted};
use assert_cmd::Command;
use std::path::Path;

const SECRET: &str = "sk-cli-test-SECRET-000111222333";

fn cmd(vault: &Path) -> Command {
    let mut c = Command::cargo_bin("vaultdm").expect("bin");
    c.env_clear()
        .env("HOME", vault.join("no-home"))
        .env("OPENAI_API_KEY", SECRET)
        .arg("--vault")
        .arg(vault);
    c
}

fn all_files(dir: &Path) -> String {
    let mut s = String::new();
    for e in walkdir::WalkDir::new(dir).into_iter().flatten() {
        if e.file_type().is_file() {
            s.push_str(&String::from_utf8_lossy(
                &std::fs::read(e.path()).unwrap_or_default(),
            ));
        }
    }
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_streams_the_reply_and_keeps_the_session() {
    let v = support::template_copy();
    let fake = FakeLlm::start(vec![
        Scripted::sse(openai_sse(
            &["The canary ", "sings."],
            Some("stop"),
            true,
            true,
        )),
        Scripted::sse(openai_sse(
            &["Odessa ", "smiles."],
            Some("stop"),
            true,
            true,
        )),
    ])
    .await;
    let base = fake.base_url_v1();
    let root = v.path().to_path_buf();
    let (out1, out2) = tokio::task::spawn_blocking(move || {
        let a = cmd(&root)
            .args([
                "ask",
                "continue",
                "--session",
                "night-1",
                "--model",
                "m",
                "--base-url",
                &base,
            ])
            .output()
            .expect("run");
        let b = cmd(&root)
            .args([
                "ask",
                "--session",
                "night-1",
                "--format",
                "json",
                "--model",
                "m",
                "--base-url",
                &base,
                "I ask Odessa about the canary.",
            ])
            .output()
            .expect("run");
        (a, b)
    })
    .await
    .expect("join");
    assert!(
        out1.status.success(),
        "{}",
        String::from_utf8_lossy(&out1.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out1.stdout).trim(),
        "The canary sings."
    );
    assert!(
        out2.status.success(),
        "{}",
        String::from_utf8_lossy(&out2.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out2.stdout).expect("json");
    assert_eq!(j["reply"], "Odessa smiles.");
    assert_eq!(j["complete"], true);
    assert_eq!(j["session"], "night-1");
    assert_eq!(j["mode"], "light");
    assert!(j["injected_context"]
        .as_str()
        .unwrap_or_default()
        .contains("NPC Odessa Flint"));
    assert_eq!(j["usage"]["output_tokens"], 7);

    let reqs = fake.requests();
    assert_eq!(reqs.len(), 2);
    // The second request carries the first exchange as history.
    let msgs = reqs[1].json()["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(msgs.len(), 4);
    // The key goes in the auth header and nowhere else: not in bodies, logs or transcripts.
    for r in &reqs {
        assert_eq!(
            r.header("authorization"),
            Some(format!("Bearer {SECRET}").as_str())
        );
        assert!(!r.json().to_string().contains(SECRET));
    }
    let files = all_files(v.path());
    assert!(!files.contains(SECRET));
    let md = std::fs::read_to_string(v.path().join("sessions/night-1.md")).expect("transcript");
    assert!(md.contains("The canary sings.") && md.contains("I ask Odessa about the canary."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_explains_a_dead_server_and_keeps_the_message() {
    let v = support::template_copy();
    // A socket bound but never listening: connections to its port are refused, and no
    // other test's fake server can take the port while this one runs.
    let reserved = tokio::net::TcpSocket::new_v4().expect("socket");
    reserved
        .bind("127.0.0.1:0".parse().expect("addr"))
        .expect("bind");
    let port = reserved.local_addr().expect("addr").port();
    let root = v.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || {
        cmd(&root)
            .args([
                "ask",
                "--session",
                "s",
                "--model",
                "m",
                "--base-url",
                &format!("http://127.0.0.1:{port}/v1"),
                "Hello?",
            ])
            .output()
            .expect("run")
    })
    .await
    .expect("join");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("127.0.0.1:{port}")), "{err}");
    assert!(err.contains("re-send"), "{err}");
    let log = std::fs::read_to_string(v.path().join(".vaultdm/sessions/s.jsonl")).expect("log");
    assert!(log.contains("Hello?"));
}

#[test]
fn no_provider_says_how_to_set_one() {
    let v = support::template_copy();
    let out = Command::cargo_bin("vaultdm")
        .expect("bin")
        .env_clear()
        .env("HOME", v.path().join("no-home"))
        .args(["ask", "hi", "--vault"])
        .arg(v.path())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("localhost:11434") && err.contains("OPENAI_API_KEY"),
        "{err}"
    );
}

#[test]
fn config_shows_sources_and_masks_the_key() {
    let v = support::template_copy();
    let out = cmd(v.path())
        .env("VAULTDM_MODEL", "llama3.1")
        .args(["config", "--base-url", "http://localhost:11434/v1"])
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("llama3.1") && s.contains("VAULTDM_MODEL"), "{s}");
    assert!(
        s.contains("http://localhost:11434/v1") && s.contains("flag"),
        "{s}"
    );
    assert!(!s.contains(SECRET), "{s}");
}

/// Scripts that call `ask` without `--session`: three at once, and two in the same second,
/// each get a session of their own (date-time and a short suffix) — none continues another's
/// history or fails on its lock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asks_without_a_session_name_never_share_one() {
    let v = support::template_copy();
    let fake = FakeLlm::start(
        (0..5)
            .map(|_| Scripted::sse(openai_sse(&["Noted."], Some("stop"), true, true)))
            .collect(),
    )
    .await;
    let base = fake.base_url_v1();
    let root = v.path().to_path_buf();
    let outs = tokio::task::spawn_blocking(move || {
        let spawn = |i: usize| {
            std::process::Command::new(assert_cmd::cargo::cargo_bin("vaultdm"))
                .env_clear()
                .env("HOME", root.join("no-home"))
                .env("OPENAI_API_KEY", SECRET)
                .arg("--vault")
                .arg(&root)
                .args(["ask", "--model", "m", "--base-url", &base])
                .arg(format!("message {i}"))
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("spawn")
        };
        let parallel: Vec<_> = (0..3).map(spawn).collect();
        let mut outs: Vec<_> = parallel
            .into_iter()
            .map(|c| c.wait_with_output().expect("wait"))
            .collect();
        // Two more one after the other, well within a second.
        outs.extend((3..5).map(|i| spawn(i).wait_with_output().expect("wait")));
        outs
    })
    .await
    .expect("join");
    for o in &outs {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let logs: Vec<String> = std::fs::read_dir(v.path().join(".vaultdm/sessions"))
        .expect("sessions")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("ask-") && n.ends_with(".jsonl") && !n.contains(".changes"))
        .collect();
    assert_eq!(logs.len(), 5, "{logs:?}");
    // Each request carried only its own message: no history from another session.
    for r in fake.requests() {
        let players = r.json()["messages"]
            .as_array()
            .map_or(0, |m| m.iter().filter(|m| m["role"] == "user").count());
        assert_eq!(players, 1, "{}", r.json());
    }
}
