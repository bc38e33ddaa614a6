//! The soak test: a long session of whole `vaultdm ask` processes against the fake server,
//! with random cut streams, token-limit stops, server errors, `kill -9`, SIGTERM, Ctrl-C and
//! the session log replaced under a running process. Afterwards every exchange that was
//! acknowledged is in the log, in order, and the session resumes.
//!
//! Ignored by default (it takes minutes); run it with
//!
//! ```sh
//! cargo test --release --test soak -- --ignored --nocapture
//! ```
//!
//! `VAULTDM_SOAK_TURNS` (default 1000) and `VAULTDM_SOAK_SEED` change the length and the
//! random sequence.

mod support;

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::fake_llm::{openai_chunk, openai_sse, FakeLlm, Scripted, Step};
use vaultdm::session::{RecordRole, Store};

const BIN: &str = env!("CARGO_BIN_EXE_vaultdm");

/// xorshift64*: a small deterministic generator, so a failing seed can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    /// A normal, complete reply.
    Complete,
    /// The model stops at its token limit.
    TokenLimit,
    /// The connection drops mid-reply.
    Dropped,
    /// The server answers 500 (no retries configured).
    ServerError,
    /// `kill -9` once text streams.
    Kill,
    /// SIGTERM once text streams.
    Term,
    /// Ctrl-C (SIGINT) once text streams.
    Interrupt,
    /// A sync tool replaces the session log while the reply streams; the reply completes.
    Replace,
}

fn pick(rng: &mut Rng) -> Fault {
    match rng.below(100) {
        0..=44 => Fault::Complete,
        45..=52 => Fault::TokenLimit,
        53..=62 => Fault::Dropped,
        63..=67 => Fault::ServerError,
        68..=77 => Fault::Kill,
        78..=84 => Fault::Term,
        85..=89 => Fault::Interrupt,
        _ => Fault::Replace,
    }
}

fn script(fault: Fault, turn: usize) -> Scripted {
    let words = [
        format!("Reply {turn} begins. "),
        "The ".into(),
        "lamp ".into(),
        "gutters.".into(),
    ];
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    match fault {
        Fault::Complete => Scripted::sse(openai_sse(&words, Some("stop"), true, true)),
        Fault::TokenLimit => Scripted::sse(openai_sse(&words, Some("length"), true, true)),
        Fault::Dropped => Scripted::sse_steps(vec![
            Step::Send(openai_sse(&words[..2], None, false, false).into_bytes()),
            Step::Drop,
        ]),
        Fault::ServerError => Scripted::json(500, r#"{"error":{"message":"boom"}}"#),
        Fault::Kill | Fault::Term | Fault::Interrupt => Scripted::sse_steps(vec![
            Step::Send(openai_chunk(words[0]).into_bytes()),
            Step::Repeat(
                openai_chunk("on ").into_bytes(),
                100_000,
                Duration::from_millis(5),
            ),
        ]),
        Fault::Replace => Scripted::sse_steps(vec![
            Step::Send(openai_chunk(words[0]).into_bytes()),
            Step::Repeat(
                openai_chunk("on ").into_bytes(),
                40,
                Duration::from_millis(10),
            ),
            Step::Send(openai_sse(&[], Some("stop"), false, true).into_bytes()),
        ]),
    }
}

/// Replaces the session log the way a sync tool does: a copy written beside it, renamed over.
fn replace_log(log: &Path) {
    let tmp = log.with_extension("sync-tmp");
    if std::fs::copy(log, &tmp).is_ok() {
        let _ = std::fs::rename(&tmp, log);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "soak test (minutes): cargo test --release --test soak -- --ignored --nocapture"]
async fn a_long_session_survives_cuts_kills_and_replacements() {
    let turns: usize = std::env::var("VAULTDM_SOAK_TURNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let seed: u64 = std::env::var("VAULTDM_SOAK_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_cafe);
    let mut rng = Rng(seed | 1);
    let faults: Vec<Fault> = (0..turns).map(|_| pick(&mut rng)).collect();
    let v = support::template_copy();
    let cfg = v.path().join("vaultdm.toml");
    let text = std::fs::read_to_string(&cfg).expect("toml");
    // One scripted reply per turn: no retries, and no cold-summary calls (which a long
    // session makes to the provider, and which would take the next turn's reply).
    std::fs::write(
        &cfg,
        format!("{text}\n[llm]\nmax_retries = 0\n\n[memory]\nsummarise = false\n"),
    )
    .expect("write");
    let mut scripts: Vec<Scripted> = faults
        .iter()
        .enumerate()
        .map(|(i, f)| script(*f, i))
        .collect();
    scripts.push(Scripted::sse(openai_sse(
        &["Welcome back."],
        Some("stop"),
        true,
        true,
    )));
    let fake = FakeLlm::start(scripts).await;
    let base = fake.base_url_v1();
    let root = v.path().to_path_buf();
    let started = Instant::now();

    let outcomes = tokio::task::spawn_blocking(move || {
        let log = root.join(".vaultdm/sessions/soak.jsonl");
        let mut outcomes = Vec::new();
        for (i, fault) in faults.iter().enumerate() {
            let msg = format!("turn {i}: I press on.");
            let mut child = Command::new(BIN)
                .env_clear()
                .env("HOME", root.join("no-home"))
                .args(["--vault"])
                .arg(&root)
                .args([
                    "ask",
                    &msg,
                    "--session",
                    "soak",
                    "--model",
                    "m",
                    "--base-url",
                    &base,
                ])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn");
            let mut out = child.stdout.take().expect("stdout");
            let mut seen = Vec::new();
            let signal = match fault {
                Fault::Kill => Some("-KILL"),
                Fault::Term => Some("-TERM"),
                Fault::Interrupt => Some("-INT"),
                _ => None,
            };
            if signal.is_some() || *fault == Fault::Replace {
                // Wait for text, then strike.
                let mut buf = [0u8; 64];
                while seen.len() < 20 {
                    match out.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                match signal {
                    Some(sig) => {
                        let _ = Command::new("kill")
                            .args([sig, &child.id().to_string()])
                            .status();
                    }
                    None => replace_log(&log),
                }
            }
            let _ = out.read_to_end(&mut seen);
            let status = child.wait().expect("wait");
            outcomes.push((
                msg,
                *fault,
                status.code(),
                String::from_utf8_lossy(&seen).into_owned(),
            ));
        }
        outcomes
    })
    .await
    .expect("join");

    // The session resumes: one more turn, complete.
    let root = v.path().to_path_buf();
    let b2 = fake.base_url_v1();
    let last = tokio::task::spawn_blocking(move || {
        Command::new(BIN)
            .env_clear()
            .env("HOME", root.join("no-home"))
            .arg("--vault")
            .arg(&root)
            .args([
                "ask",
                "Where were we?",
                "--session",
                "soak",
                "--model",
                "m",
                "--base-url",
                &b2,
            ])
            .output()
            .expect("run")
    })
    .await
    .expect("join");
    assert!(
        last.status.success(),
        "{}",
        String::from_utf8_lossy(&last.stderr)
    );

    let store = Store::open(v.path(), "soak").expect("reopen");
    let records = store.records().to_vec();
    let warnings: Vec<String> = store.warnings().iter().map(ToString::to_string).collect();
    drop(store);
    // Every player message (each was acknowledged: written before the request) is in the
    // log exactly once and in order; the reply that follows is what the GM was shown.
    let mut at = 0usize;
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    for (msg, fault, code, seen) in &outcomes {
        *counts.entry(format!("{fault:?} -> {code:?}")).or_default() += 1;
        let p = records[at..]
            .iter()
            .position(|r| r.role == RecordRole::Player && &r.text == msg)
            .unwrap_or_else(|| panic!("{msg} ({fault:?}, exit {code:?}) is missing from the log"));
        at += p + 1;
        let reply = records.get(at).filter(|r| r.role == RecordRole::Dm);
        match fault {
            Fault::Complete | Fault::Replace => {
                assert_eq!(*code, Some(0), "{msg}");
                let r = reply.unwrap_or_else(|| panic!("{msg}: reply missing"));
                assert!(
                    r.complete
                        && r.text
                            .starts_with(&format!("Reply {}", &msg[5..msg.find(':').unwrap_or(6)]))
                );
            }
            Fault::TokenLimit | Fault::Dropped => {
                assert_eq!(*code, Some(1), "{msg}");
                let r = reply.unwrap_or_else(|| panic!("{msg}: reply missing"));
                assert!(!r.complete && seen.starts_with(&r.text), "{msg}");
            }
            Fault::ServerError => assert_eq!(*code, Some(2), "{msg}"),
            Fault::Term => assert_eq!(*code, Some(143), "{msg}"),
            Fault::Interrupt => assert_eq!(*code, Some(130), "{msg}"),
            Fault::Kill => {
                assert_eq!(*code, None, "{msg}: killed by a signal");
                if let Some(r) = reply {
                    assert!(
                        seen.starts_with(&r.text),
                        "{msg}: the recovered reply was shown"
                    );
                }
            }
        }
        if matches!(fault, Fault::Term | Fault::Interrupt) {
            let r = reply.unwrap_or_else(|| panic!("{msg}: the partial reply is missing"));
            assert!(seen.starts_with(&r.text) && !r.text.is_empty(), "{msg}");
        }
    }
    assert!(
        warnings.iter().all(|w| w.contains("incomplete last line")),
        "{warnings:?}"
    );
    println!(
        "soak: {turns} turns in {:.0} s, {} records, outcomes {counts:#?}",
        started.elapsed().as_secs_f64(),
        records.len()
    );
}
