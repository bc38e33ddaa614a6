//! End-to-end against a real OpenAI-compatible server (`../shared/tools/local-llm.sh start`).
//! Runs only when `VAULTDM_E2E_BASE_URL` is set, e.g.
//! `VAULTDM_E2E_BASE_URL=http://127.0.0.1:8089/v1 cargo test --test e2e_local_llm -- --nocapture`.
//! `VAULTDM_E2E_MODEL` names the model (default `smollm2`).

mod common;

use assert_cmd::Command;

#[test]
fn three_turns_then_resume_against_a_real_server() {
    let Ok(base) = std::env::var("VAULTDM_E2E_BASE_URL") else {
        eprintln!("skipped: set VAULTDM_E2E_BASE_URL to run against a real server");
        return;
    };
    let model = std::env::var("VAULTDM_E2E_MODEL").unwrap_or_else(|_| "smollm2".into());
    let v = common::template_copy();
    let ask = |msg: &str| {
        let out = Command::cargo_bin("vaultdm")
            .expect("bin")
            .args([
                "ask",
                "--session",
                "e2e",
                "--format",
                "json",
                "--max-tokens",
                "60",
                "--model",
                &model,
                "--base-url",
                &base,
                "--vault",
            ])
            .arg(v.path())
            .arg(msg)
            .output()
            .expect("run");
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        // A tiny model with max_tokens 60 often stops at the limit: that reply is cut off,
        // honestly (exit 1, `token_limit`), and still kept.
        match out.status.code() {
            Some(0) => assert_eq!(j["complete"], true),
            Some(1) => assert_eq!(j["cut_off"], "token_limit", "{j}"),
            other => panic!("exit {other:?}: {}", String::from_utf8_lossy(&out.stderr)),
        }
        eprintln!("> {msg}\n[{} {}] {}\n", j["mode"], j["cut_off"], j["reply"]);
        j
    };
    let t1 = ask("continue");
    assert_eq!(t1["mode"], "full");
    assert!(!t1["reply"].as_str().unwrap_or_default().is_empty());
    let t2 = ask("I ask Odessa about the canary.");
    assert_eq!(t2["mode"], "light");
    ask("We head for Shaft Nine.");
    // A new process resumes the same session with its history.
    let t4 = ask("What do we see?");
    assert_eq!(
        t4["mode"], "light",
        "the resumed history already holds the full context"
    );
    let log = std::fs::read_to_string(v.path().join(".vaultdm/sessions/e2e.jsonl")).expect("log");
    assert_eq!(log.lines().count(), 8);
}
