//! `vaultdm serve` driven by the official `openai` Python package, streaming and not.
//!
//! Skipped when `python3 -c "import openai"` fails, unless `VAULTDM_REQUIRE_OPENAI_PY=1`
//! (set by `.ci/run` after it installs the package), when a missing package is a failure.

use crate::support;

use crate::support::fake_llm::{openai_sse, FakeLlm, Scripted};
use crate::support::served::Served;
use std::path::Path;
use std::process::Command;

fn has_openai() -> bool {
    Command::new("python3")
        .args(["-c", "import openai"])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_openai_client_gets_canon_injected_replies() {
    if !has_openai() {
        assert!(
            std::env::var("VAULTDM_REQUIRE_OPENAI_PY").as_deref() != Ok("1"),
            "VAULTDM_REQUIRE_OPENAI_PY=1 but `import openai` fails: pip install openai"
        );
        eprintln!("skipped: the openai Python package is not installed (pip install openai)");
        return;
    }
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path().join("vault-template");
    support::copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("vault-template"),
        &root,
    );
    let fake = FakeLlm::start(vec![
        Scripted::sse(openai_sse(
            &["Odessa sets ", "down her glass."],
            Some("stop"),
            true,
            true,
        )),
        Scripted::sse(openai_sse(
            &["\"It sings ", "when the air ", "is good.\""],
            Some("stop"),
            true,
            true,
        )),
        Scripted::json(401, r#"{"error":{"message":"bad key"}}"#),
    ])
    .await;
    let base = fake.base_url_v1();
    let s = Served::start(
        &root,
        &[
            "--provider",
            "openai",
            "--base-url",
            &base,
            "--model",
            "test-model",
        ],
        &[
            ("OPENAI_API_KEY", "sk-upstream-never-shown-0000"),
            ("VAULTDM_SERVE_TOKEN", "table-token-1234"),
        ],
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/openai_client.py");
    let url = s.url("/v1");
    let out = tokio::task::spawn_blocking(move || {
        Command::new("python3")
            .arg(script)
            .arg(url)
            .arg("table-token-1234")
            .output()
            .expect("python3")
    })
    .await
    .expect("join");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_str(stdout.trim()).expect("client json");
    eprintln!("openai {} saw: {j}", j["version"]);
    assert_eq!(
        j["models"],
        serde_json::json!(["vault-template", "vault-template/test-model"])
    );
    assert_eq!(j["plain"], "Odessa sets down her glass.");
    assert_eq!(j["plain_finish"], "stop");
    assert_eq!(j["plain_usage"], 49);
    assert_eq!(j["stream"], "\"It sings when the air is good.\"");
    assert_eq!(j["stream_finish"], "stop");
    assert!(j["stream_chunks"].as_u64().unwrap_or(0) >= 4, "{j}");
    assert_eq!(j["error"]["status"], 502);
    assert_eq!(j["error"]["code"], "upstream_unauthorized");
    assert!(!j["error"]["message"]
        .as_str()
        .unwrap_or("")
        .contains("sk-upstream-never-shown"));
    assert_eq!(j["wrong_token"], 401);

    // The canon reached the upstream: the full context with the first message, and again
    // (re-injected) in the streamed request's history; a light context with the new one.
    let reqs = fake.requests();
    let last = reqs[0].last_message();
    assert!(
        last.contains("Brannock Tull") && last.contains("Odessa Flint"),
        "{last}"
    );
    let second = reqs[1].json();
    assert_eq!(second["model"], "test-model");
    assert_eq!(second["temperature"], serde_json::json!(0.5));
    let msgs = second["messages"].as_array().expect("messages");
    assert_eq!(msgs[1]["content"].as_str(), Some(last.as_str()));
    let now = msgs
        .last()
        .and_then(|m| m["content"].as_str())
        .expect("now");
    assert!(
        now.starts_with("[Day ") && now.ends_with("I ask her about the canary."),
        "{now}"
    );
    assert_eq!(
        reqs[0].header("authorization"),
        Some("Bearer sk-upstream-never-shown-0000"),
        "the upstream key goes upstream, never the table's token"
    );
}
