//! `vaultdm chat` as a GM plays it, with the fake LLM server: lines typed on stdin, the
//! vault edited while the chat runs, and what reaches the provider.

use crate::support;
use crate::support::fake_llm;

use crate::support::fake_llm::{openai_sse, FakeLlm, Scripted};
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
    let v = support::template_copy();
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_back_at_the_table_closes_the_loop() {
    let v = support::template_copy();
    let root = v.path().to_path_buf();
    let proposal = "The guard swings.\n```vaultdm-changes\n[{\"op\": \"set\", \"entity\": \"Brannock\", \"field\": \"hp\", \"value\": \"-7\"}]\n```\n";
    let fake = FakeLlm::start(vec![ok(proposal), ok("Noted."), ok("Still here.")]).await;
    let base = fake.base_url_v1();
    let r2 = root.clone();
    let (out, err) = tokio::task::spawn_blocking(move || {
        let root = r2;
        let mut child = Command::new(BIN)
            .env_clear()
            .env("HOME", root.join("no-home"))
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .arg("--vault")
            .arg(&root)
            .args([
                "chat",
                "--session",
                "wb",
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
        stdin.write_all(b"I block the door.\n").expect("stdin");
        wait_for("1. Brannock Tull: HP 22/30 -> 15/30", &out);
        stdin.write_all(b"/accept\n").expect("stdin");
        wait_for("\u{2714} Brannock Tull: HP 22/30 -> 15/30", &out);
        stdin
            .write_all(b"/move party the assay office\n")
            .expect("stdin");
        wait_for("\u{2714} party: The Brass Canary -> The Assay Office", &out);
        // The watcher sees vaultdm's own writes: they are not reported as edits. A human
        // edit that lands meanwhile is.
        std::thread::sleep(Duration::from_millis(600));
        let ida = root.join("canon/npcs/ida-marsh.md");
        let text = std::fs::read_to_string(&ida).expect("read");
        std::fs::write(
            &ida,
            text.replace("disposition: wary", "disposition: hostile"),
        )
        .expect("write");
        let start = Instant::now();
        while !out.text().contains("canon reloaded") {
            assert!(start.elapsed() < DEADLINE, "{}\n{}", out.text(), err.text());
            stdin.write_all(b"/help\n").expect("stdin");
            std::thread::sleep(Duration::from_millis(300));
        }
        stdin.write_all(b"We look around.\n").expect("stdin");
        wait_for("Noted.", &out);
        stdin.write_all(b"/revert\n").expect("stdin");
        wait_for(
            "reverted: party: The Brass Canary -> The Assay Office",
            &out,
        );
        stdin.write_all(b"/quit\n").expect("stdin");
        let status = child.wait().expect("wait");
        assert!(status.success(), "{}", err.text());
        (out.text(), err.text())
    })
    .await
    .expect("join");
    assert!(
        !out.contains("vaultdm-changes") && !out.contains("\"op\""),
        "{out}"
    );
    let reloads: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("canon reloaded"))
        .collect();
    assert_eq!(
        reloads.len(),
        1,
        "only the GM's own edit is reported:\n{out}\n{err}"
    );
    assert!(reloads[0].contains("Ida Marsh"), "{out}");
    let reqs = fake.requests();
    let last = contents(&reqs[1]).last().cloned().unwrap_or_default();
    assert!(last.contains("Canon updated"), "{last}");
    assert!(
        last.contains("The Assay Office"),
        "the new scene is in the light context:\n{last}"
    );
    assert!(
        std::fs::read_to_string(root.join("canon/pcs/brannock-tull.md"))
            .expect("read")
            .contains("hp: 15\n"),
        "the revert undid only the move"
    );
    assert!(
        std::fs::read_to_string(root.join("canon/pcs/hesper-quill.md"))
            .expect("read")
            .contains("location: the-brass-canary\n")
    );
}
