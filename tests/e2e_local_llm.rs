//! End-to-end against a real OpenAI-compatible server (`../shared/tools/local-llm.sh start`).
//! Runs only when `VAULTDM_E2E_BASE_URL` is set, e.g.
//! `VAULTDM_E2E_BASE_URL=http://127.0.0.1:8089/v1 cargo test --test integration e2e_local_llm:: -- --nocapture`.
//! `VAULTDM_E2E_MODEL` names the model (default `smollm2`).

use crate::support;
use crate::support::served;

use assert_cmd::Command;

#[test]
fn three_turns_then_resume_against_a_real_server() {
    let Ok(base) = std::env::var("VAULTDM_E2E_BASE_URL") else {
        eprintln!("skipped: set VAULTDM_E2E_BASE_URL to run against a real server");
        return;
    };
    let model = std::env::var("VAULTDM_E2E_MODEL").unwrap_or_else(|_| "smollm2".into());
    let v = support::template_copy();
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

/// `vaultdm serve` in front of the real server: a streamed and a plain completion through the
/// proxy, both with the canon injected and recorded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_in_front_of_a_real_server() {
    let Ok(base) = std::env::var("VAULTDM_E2E_BASE_URL") else {
        eprintln!("skipped: set VAULTDM_E2E_BASE_URL to run against a real server");
        return;
    };
    let model = std::env::var("VAULTDM_E2E_MODEL").unwrap_or_else(|_| "smollm2".into());
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path().join("coldharrow");
    support::copy_dir(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("vault-template"),
        &root,
    );
    let s = served::Served::start(
        &root,
        &[
            "--provider",
            "openai",
            "--base-url",
            &base,
            "--model",
            &model,
        ],
        &[],
    );
    let c = reqwest::Client::new();
    let first = "We enter the Brass Canary.";
    let t0 = std::time::Instant::now();
    let r = c
        .post(s.url("/v1/chat/completions"))
        .header("X-Vaultdm-Session", "e2e-serve")
        .json(
            &serde_json::json!({"model": "coldharrow", "stream": true, "max_tokens": 40,
            "messages": [{"role": "user", "content": first}]}),
        )
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    let body = r.text().await.expect("body");
    let (text, finish) = served::stream_text(&body);
    eprintln!("streamed in {:?} [{finish:?}]: {text}", t0.elapsed());
    assert!(!text.trim().is_empty(), "{body}");
    assert!(
        matches!(finish.as_deref(), Some("stop" | "length")),
        "{body}"
    );
    let r = c
        .post(s.url("/v1/chat/completions"))
        .header("X-Vaultdm-Session", "e2e-serve")
        .json(
            &serde_json::json!({"model": format!("coldharrow/{model}"), "max_tokens": 40,
            "messages": [{"role": "user", "content": first},
                         {"role": "assistant", "content": text},
                         {"role": "user", "content": "I ask Odessa about the canary."}]}),
        )
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["x-vaultdm-context"], "light");
    let j: serde_json::Value = r.json().await.expect("json");
    let reply = j["choices"][0]["message"]["content"].as_str().unwrap_or("");
    eprintln!("plain: {reply}");
    assert!(!reply.trim().is_empty(), "{j}");
    let log = std::fs::read_to_string(root.join(".vaultdm/sessions/e2e-serve.jsonl")).expect("log");
    assert_eq!(log.lines().count(), 4);
    assert!(
        log.contains("Brannock Tull"),
        "the full context is in the log"
    );
}
