//! `vaultdm serve` as a front end meets it: the time-to-first-token the proxy adds, and many
//! streaming conversations at once.
//!
//! Run with `cargo bench --bench serve`. It starts, in this process, an upstream that speaks
//! the OpenAI streaming protocol at once (no model: its first token leaves as soon as the
//! request is read), and the release `vaultdm serve` as a child process on the generated 10k
//! vault (`target/bench-vaults/n10000`, as `benches/process.rs` makes it). Then:
//!
//! 1. **TTFT overhead**: one conversation of `VAULTDM_BENCH_TURNS` (default 200) turns, each
//!    message naming NPCs and places, its history growing as a front end's does. Each turn is
//!    sent straight to the upstream and through the proxy, alternating which goes first; the
//!    overhead is the paired difference of the time to the first content token. The first
//!    5 turns warm up (the first loads the mention matcher) and are left out.
//! 2. **Concurrency**: `VAULTDM_BENCH_STREAMS` (default 50) conversations at once, each
//!    streaming 200 numbered tokens 2 ms apart; every client must get every token, in order.

use vaultdm_gen as gen;

use axum::body::{Body, Bytes};
use axum::routing::post;
use axum::Router;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const WARM_UP: usize = 5;

fn chunk(content: &str) -> String {
    format!(
        "data: {}\n\n",
        json!({"id":"u","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":content},"finish_reason":null}]})
    )
}

/// The upstream: `tokens` in the request's `max_tokens`-free form: a body with
/// `"bench_tokens": N` and `"bench_gap_ms": G` is answered with N numbered tokens G ms apart;
/// otherwise a short reply, all at once.
async fn upstream(body: Bytes) -> axum::response::Response {
    let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let last = v["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
        .to_owned();
    let (n, gap) = match last.rsplit_once("STREAM ") {
        Some((_, spec)) => {
            let mut it = spec.split_whitespace();
            let n = it.next().and_then(|x| x.parse().ok()).unwrap_or(10);
            let g = it.next().and_then(|x| x.parse().ok()).unwrap_or(0);
            (n, g)
        }
        None => (3, 0),
    };
    let stream = futures_util::stream::unfold(0usize, move |i| async move {
        if i > n {
            return None;
        }
        let out = if i == 0 {
            format!(
                "data: {}\n\n{}",
                json!({"id":"u","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}),
                chunk("t0 ")
            )
        } else if i == n {
            format!(
                "data: {}\n\ndata: [DONE]\n\n",
                json!({"id":"u","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})
            )
        } else {
            if gap > 0 {
                tokio::time::sleep(Duration::from_millis(gap)).await;
            }
            chunk(&format!("t{i} "))
        };
        Some((Ok::<_, std::convert::Infallible>(Bytes::from(out)), i + 1))
    });
    axum::response::Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(stream))
        .expect("response")
}

struct Server(Child, String);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status();
        let _ = self.0.wait();
    }
}

fn start_server(vault: &std::path::Path, upstream: &str) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_vaultdm"))
        .args(["serve", "--listen", "127.0.0.1:0", "--provider", "openai"])
        .args(["--base-url", upstream, "--model", "bench", "--vault"])
        .arg(vault)
        .env("HOME", vault.join("no-home"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start vaultdm serve");
    let err = child.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            if let Some(rest) = line.split("listening on http://").nth(1) {
                let _ = tx.send(rest.split_whitespace().next().unwrap_or("").to_owned());
            }
        }
    });
    let addr = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("vaultdm serve prints its address");
    Server(child, format!("http://{addr}/v1"))
}

/// Sends a streaming request; the time to the first non-empty content, and all the text.
async fn ttft(c: &reqwest::Client, base: &str, body: &Value, session: &str) -> (Duration, String) {
    let start = Instant::now();
    let mut r = c
        .post(format!("{base}/chat/completions"))
        .header("X-Vaultdm-Session", session)
        .json(body)
        .send()
        .await
        .expect("send");
    if !r.status().is_success() {
        let status = r.status();
        panic!("{status}: {}", r.text().await.unwrap_or_default());
    }
    let mut first = None;
    let mut raw = String::new();
    while let Some(b) = r.chunk().await.expect("chunk") {
        raw.push_str(&String::from_utf8_lossy(&b));
        if first.is_none() && raw.contains("\"content\":\"t0 ") {
            first = Some(start.elapsed());
        }
    }
    let mut text = String::new();
    for l in raw.lines().filter_map(|l| l.strip_prefix("data: ")) {
        if let Ok(v) = serde_json::from_str::<Value>(l) {
            if let Some(c) = v["choices"][0]["delta"]["content"].as_str() {
                text.push_str(c);
            }
        }
    }
    (first.expect("a first token"), text)
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

const MESSAGES: &[&str] = &[
    "We ask the barkeep about the missing caravan.",
    "I look around the market square for anyone suspicious.",
    "Can we rest here for the night?",
    "I draw my sword and step between them.",
    "What does the old map show about the northern pass?",
    "We head back to the guild hall and report.",
];

fn main() {
    let turns: usize = std::env::var("VAULTDM_BENCH_TURNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let streams: usize = std::env::var("VAULTDM_BENCH_STREAMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let vault = repo.join("target/bench-vaults/n10000");
    if !vault.join(".generated").exists() {
        let _ = std::fs::remove_dir_all(&vault);
        gen::generate(&vault, 10_000, gen::DEFAULT_SEED).expect("generate the bench vault");
        std::fs::write(vault.join(".generated"), "").expect("mark");
    }
    // Sessions of earlier runs would grow the recall index from run to run.
    clean(&vault);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let root = vault.clone();
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let up = format!("http://{}/v1", listener.local_addr().expect("addr"));
        tokio::spawn(async move {
            let app = Router::new().route("/v1/chat/completions", post(upstream));
            let _ = axum::serve(listener, app).await;
        });
        let server = tokio::task::spawn_blocking({
            let (vault, up) = (vault.clone(), up.clone());
            move || start_server(&vault, &up)
        })
        .await
        .expect("join");
        let proxy = server.1.clone();
        let c = reqwest::Client::new();

        // 1. TTFT overhead over one growing conversation.
        let mut history: Vec<Value> = vec![json!({"role": "system", "content": "You are the DM."})];
        let names = npc_names(&vault);
        let mut direct = Vec::new();
        let mut proxied = Vec::new();
        let mut diffs = Vec::new();
        for i in 0..turns {
            let msg = format!(
                "{} {} and {} are with us.",
                MESSAGES[i % MESSAGES.len()],
                names[i % names.len()],
                names[(i * 7 + 3) % names.len()]
            );
            let mut messages = history.clone();
            messages.push(json!({"role": "user", "content": msg}));
            let body = json!({"model": "n10000", "stream": true, "messages": messages});
            let (d, p, text) = if i % 2 == 0 {
                let (d, _) = ttft(&c, &up, &body, "bench").await;
                let (p, text) = ttft(&c, &proxy, &body, "bench").await;
                (d, p, text)
            } else {
                let (p, text) = ttft(&c, &proxy, &body, "bench").await;
                let (d, _) = ttft(&c, &up, &body, "bench").await;
                (d, p, text)
            };
            history.push(json!({"role": "user", "content": msg}));
            history.push(json!({"role": "assistant", "content": text}));
            if i >= WARM_UP {
                direct.push(d.as_secs_f64() * 1e3);
                proxied.push(p.as_secs_f64() * 1e3);
                diffs.push((p.as_secs_f64() - d.as_secs_f64()) * 1e3);
            }
        }
        for v in [&mut direct, &mut proxied, &mut diffs] {
            v.sort_by(f64::total_cmp);
        }
        println!(
            "serve ttft, 10k-note vault, {} turns (after {WARM_UP} warm-up), one growing conversation:",
            diffs.len()
        );
        println!(
            "  direct to upstream   p50 {:.2} ms  p95 {:.2} ms",
            pct(&direct, 0.5),
            pct(&direct, 0.95)
        );
        println!(
            "  through vaultdm      p50 {:.2} ms  p95 {:.2} ms",
            pct(&proxied, 0.5),
            pct(&proxied, 0.95)
        );
        println!(
            "  overhead (paired)    p50 {:.2} ms  p95 {:.2} ms  max {:.2} ms  (target p95 <= 5 ms)",
            pct(&diffs, 0.5),
            pct(&diffs, 0.95),
            diffs.last().copied().unwrap_or(0.0)
        );

        // 2. Many streaming conversations at once.
        let tokens = 200;
        let start = Instant::now();
        let mut tasks = Vec::new();
        for k in 0..streams {
            let c = c.clone();
            let proxy = proxy.clone();
            tasks.push(tokio::spawn(async move {
                let body = json!({"model": "n10000", "stream": true, "messages": [
                    {"role": "user", "content": format!("Conversation {k}: STREAM {tokens} 2")}]});
                ttft(&c, &proxy, &body, &format!("crowd-{k}")).await
            }));
        }
        let expected: String = (0..tokens).map(|i| format!("t{i} ")).collect();
        let mut worst_first = Duration::ZERO;
        let mut complete = 0;
        for t in tasks {
            let (first, text) = t.await.expect("join");
            worst_first = worst_first.max(first);
            if text == expected {
                complete += 1;
            }
        }
        println!(
            "serve concurrency: {streams} streaming conversations x {tokens} tokens (2 ms apart): {complete}/{streams} complete and in order; slowest first token {:.1} ms; all done in {:.2} s",
            worst_first.as_secs_f64() * 1e3,
            start.elapsed().as_secs_f64()
        );
        assert_eq!(complete, streams, "a stream lost or reordered tokens");
        drop(server);
    });
    clean(&root);
}

/// Removes what the runs leave in the vault: session logs and memory notes.
fn clean(vault: &std::path::Path) {
    let _ = std::fs::remove_dir_all(vault.join(".vaultdm"));
    if let Ok(dir) = std::fs::read_dir(vault.join("sessions")) {
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            // This bench's sessions: transcripts and memory notes.
            if name.starts_with("bench") || name.starts_with("crowd-") {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// Some NPC names of the generated vault, for messages that mention them.
fn npc_names(vault: &std::path::Path) -> Vec<String> {
    let mut names = Vec::new();
    for e in walkdir::WalkDir::new(vault).into_iter().flatten() {
        if names.len() >= 64 {
            break;
        }
        let p = e.path();
        if p.extension().is_some_and(|x| x == "md")
            && p.to_string_lossy().to_lowercase().contains("npc")
        {
            if let Some(s) = p.file_stem() {
                names.push(s.to_string_lossy().replace('-', " "));
            }
        }
    }
    if names.is_empty() {
        names.push("the stranger".into());
    }
    names
}
