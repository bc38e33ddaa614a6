//! `vaultdm chat` as a GM plays it, with the fake LLM server: lines typed on stdin, the
//! vault edited while the chat runs, and what reaches the provider.

mod common;
#[path = "support/fake_llm.rs"]
mod fake_llm;

use fake_llm::{openai_sse, FakeLlm, Scripted};
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_vaultdm");
const DEADLINE: Duration = Duration::from_secs(30);

/// Collects a child's output on a thread.
struct Seen(Arc<Mutex<Vec<u8>>>);

impl Seen {
    fn of(mut r: impl Read + Send + 'static) -> Seen {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s2 = Arc::clone(&seen);
        std::thread::spawn(move || {
            let mut buf = [0u8; 512];
            while let Ok(n) = r.read(&mut buf) {
                if n == 0 {
                    break;
                }
                if let Ok(mut v) = s2.lock() {
                    v.extend_from_slice(&buf[..n]);
                }
            }
        });
        Seen(seen)
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().map(|v| v.clone()).unwrap_or_default()).into_owned()
    }
}

fn ok(text: &str) -> Scripted {
    Scripted::sse(openai_sse(&[text], Some("stop"), true, true))
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(p, text).expect("write");
}

/// Every message's text in a request, in order.
fn contents(req: &fake_llm::Recorded) -> Vec<String> {
    req.json()["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn template_and_context_edits_reach_a_running_chat() {
    let v = common::template_copy();
    let root = v.path().to_path_buf();
    let system = include_str!("../src/context/templates/system.j2");
    let light = include_str!("../src/context/templates/light.j2");
    let toml = std::fs::read_to_string(root.join("vaultdm.toml")).expect("toml");
    write(
        &root,
        "vaultdm.toml",
        &format!("templates = \"tpl\"\n{toml}"),
    );
    write(&root, "tpl/system.j2", &format!("SYSTEM ONE\n{system}"));
    write(&root, "tpl/light.j2", &format!("LIGHT ONE\n{light}"));
    let fake = FakeLlm::start(vec![ok("First reply."), ok("Second reply.")]).await;
    let base = fake.base_url_v1();
    let (out, err) = tokio::task::spawn_blocking(move || {
        let mut child = Command::new(BIN)
            .env_clear()
            .env("HOME", root.join("no-home"))
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .arg("--vault")
            .arg(&root)
            .args([
                "chat",
                "--session",
                "live",
                "--model",
                "m",
                "--base-url",
                &base,
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let mut stdin = child.stdin.take().expect("stdin");
        let out = Seen::of(child.stdout.take().expect("stdout"));
        let err = Seen::of(child.stderr.take().expect("stderr"));
        let wait_for = |what: &str, seen: &Seen| {
            let start = Instant::now();
            while !seen.text().contains(what) {
                assert!(
                    start.elapsed() < DEADLINE,
                    "no {what:?} in:\n{}\nstderr:\n{}",
                    seen.text(),
                    err.text()
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        };
        stdin.write_all(b"We arrive in town.\n").expect("stdin");
        wait_for("First reply.", &out);

        // Only templates and [context] settings change: no canon at all.
        write(&root, "tpl/system.j2", &format!("SYSTEM TWO\n{system}"));
        write(&root, "tpl/light.j2", &format!("LIGHT TWO\n{light}"));
        let toml = std::fs::read_to_string(root.join("vaultdm.toml")).expect("toml");
        write(
            &root,
            "vaultdm.toml",
            &toml.replace("npc_cap = 5 ", "npc_cap = 2 "),
        );
        // Reloads are applied between turns: nudge the prompt until both are told.
        let start = Instant::now();
        while !(out.text().contains("templates reloaded")
            && out.text().contains("[context] settings changed"))
        {
            assert!(start.elapsed() < DEADLINE, "{}\n{}", out.text(), err.text());
            stdin.write_all(b"/help\n").expect("stdin");
            std::thread::sleep(Duration::from_millis(300));
        }
        stdin.write_all(b"I order a drink.\n").expect("stdin");
        wait_for("Second reply.", &out);
        stdin.write_all(b"/quit\n").expect("stdin");
        let status = child.wait().expect("wait");
        assert!(status.success(), "{}", err.text());
        (out.text(), err.text())
    })
    .await
    .expect("join");
    assert!(
        out.contains("templates reloaded: the next message uses them"),
        "{out}"
    );
    assert!(
        out.contains(
            "[context] settings changed in vaultdm.toml (npc_cap 5 -> 2): the next message uses them"
        ),
        "{out}"
    );
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 2, "{err}");
    let (first, second) = (contents(&reqs[0]), contents(&reqs[1]));
    assert!(first[0].starts_with("SYSTEM ONE"), "{}", first[0]);
    assert!(second[0].starts_with("SYSTEM TWO"), "{}", second[0]);
    let last = second.last().expect("the new message");
    assert!(
        last.contains("LIGHT TWO") && !last.contains("LIGHT ONE"),
        "{last}"
    );
}
