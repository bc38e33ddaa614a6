//! Memory that scales with a campaign (issue 25): what a long campaign costs each open.
//!
//! Run with `cargo bench --bench campaign`. It writes (once, outside the repository:
//! `VAULTDM_BENCH_CAMPAIGN`, default `/tmp/vaultdm-campaign`) the bundled campaign with 300
//! session logs of 20,000 exchanges in all plus one ~300 MB session (`benches/gen/src/campaign.rs`;
//! `VAULTDM_BENCH_HUGE_MB` sets its size), and beside it the bundled campaign with no session
//! (`…-empty`). An upstream in this process answers at once. Then, with the release binary:
//!
//! 1. the first open, which builds the recall index (`.vaultdm/memory/recall.idx`);
//! 2. `prompt` for a new session, as a whole process, alternating with the empty vault;
//! 3. `ask` for a new session (start-up, the request and a four-token reply), alternating
//!    with the empty vault: the ratio of the medians;
//! 4. `serve`: each of 100 new conversations' first token through vaultdm and straight to
//!    the upstream, paired; the overhead's p50 and p95; then the server's peak RSS with the
//!    100 conversations open.

use axum::{body::Body, body::Bytes, routing::post, Router};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use vaultdm_gen::campaign;

const ROUNDS: usize = 11;
const CONVERSATIONS: usize = 100;

async fn upstream(_body: Bytes) -> axum::response::Response {
    let mut out = String::new();
    for w in ["t0 ", "the ", "road ", "north."] {
        out.push_str(&format!(
            "data: {}\n\n",
            json!({"id":"u","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":w},"finish_reason":null}]})
        ));
    }
    out.push_str(&format!(
        "data: {}\n\ndata: [DONE]\n\n",
        json!({"id":"u","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})
    ));
    axum::response::Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from(out))
        .expect("response")
}

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_vaultdm")
}

fn run(vault: &Path, args: &[&str]) -> Duration {
    let start = Instant::now();
    let out = Command::new(bin())
        .arg("--vault")
        .arg(vault)
        .args(args)
        .env("HOME", vault.join("no-home"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .expect("run vaultdm");
    let took = start.elapsed();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Removes the sessions this bench made (the generated ones stay).
fn clean(vault: &Path) {
    for dir in [vault.join(".vaultdm/sessions"), vault.join("sessions")] {
        if let Ok(d) = std::fs::read_dir(&dir) {
            for e in d.flatten() {
                if e.file_name().to_string_lossy().starts_with("bench-") {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
    }
}

fn main() {
    let base = PathBuf::from(
        std::env::var("VAULTDM_BENCH_CAMPAIGN").unwrap_or_else(|_| "/tmp/vaultdm-campaign".into()),
    );
    let huge: usize = std::env::var("VAULTDM_BENCH_HUGE_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let empty = base.with_file_name(format!(
        "{}-empty",
        base.file_name().unwrap_or_default().to_string_lossy()
    ));
    let template = Path::new(env!("CARGO_MANIFEST_DIR")).join("vault-template");
    if !base.join(".generated").exists() {
        let _ = std::fs::remove_dir_all(&base);
        let t = Instant::now();
        campaign::campaign(&base, &template, 300, 20_000, huge).expect("generate the campaign");
        std::fs::write(base.join(".generated"), "").expect("mark");
        println!("campaign written in {:.1} s", t.elapsed().as_secs_f64());
    }
    if !empty.join(".generated").exists() {
        let _ = std::fs::remove_dir_all(&empty);
        campaign::campaign(&empty, &template, 0, 0, 0).expect("copy the campaign");
        std::fs::write(empty.join(".generated"), "").expect("mark");
    }
    clean(&base);
    clean(&empty);

    // 1. The first open builds the index.
    let _ = std::fs::remove_dir_all(base.join(".vaultdm/memory"));
    let first = run(
        &base,
        &["prompt", "--session", "bench-first", "--message", "hello"],
    );
    let size = std::fs::metadata(base.join(".vaultdm/memory/recall.idx")).map_or(0, |m| m.len());
    println!(
        "first open (index built from 300 sessions + {huge} MB): {:.2} s, index {:.1} MB",
        first.as_secs_f64(),
        size as f64 / 1e6
    );

    // 2. `prompt`, a new session each time.
    let msg = "where did Hesper hide the adit key?";
    let (mut full, mut none) = (Vec::new(), Vec::new());
    for i in 0..ROUNDS {
        let s = format!("bench-p{i}");
        full.push(run(&base, &["prompt", "--session", &s, "--message", msg]).as_secs_f64() * 1e3);
        none.push(run(&empty, &["prompt", "--session", &s, "--message", msg]).as_secs_f64() * 1e3);
    }
    println!(
        "prompt, new session: campaign {:.1} ms, empty vault {:.1} ms (medians of {ROUNDS})",
        median(&mut full),
        median(&mut none)
    );

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let up = rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let up = format!("http://{}/v1", listener.local_addr().expect("addr"));
        tokio::spawn(async move {
            let app = Router::new().route("/v1/chat/completions", post(upstream));
            let _ = axum::serve(listener, app).await;
        });
        up
    });

    // 3. `ask`, a new session each time.
    let llm = [
        "--provider",
        "openai",
        "--base-url",
        &up,
        "--model",
        "bench",
    ];
    let (mut full, mut none) = (Vec::new(), Vec::new());
    for i in 0..ROUNDS {
        let s = format!("bench-a{i}");
        let mut args = vec!["ask", "--session", &s, msg];
        args.extend_from_slice(&llm);
        full.push(run(&base, &args).as_secs_f64() * 1e3);
        none.push(run(&empty, &args).as_secs_f64() * 1e3);
    }
    let (f, n) = (median(&mut full), median(&mut none));
    println!(
        "ask, new session: campaign {f:.1} ms, empty vault {n:.1} ms, ratio {:.2} (medians of {ROUNDS})",
        f / n
    );

    // 4. `serve`: new conversations.
    let mut child = Command::new(bin())
        .args(["serve", "--listen", "127.0.0.1:0", "--provider", "openai"])
        .args(["--base-url", &up, "--model", "bench", "--vault"])
        .arg(&base)
        .env("HOME", base.join("no-home"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start vaultdm serve");
    let err = child.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(err).lines().map_while(Result::ok) {
            if let Some(rest) = line.split("listening on http://").nth(1) {
                let _ = tx.send(rest.split_whitespace().next().unwrap_or("").to_owned());
            }
        }
    });
    let addr = rx
        .recv_timeout(Duration::from_secs(120))
        .expect("vaultdm serve prints its address");
    let proxy = format!("http://{addr}/v1");
    let diffs = rt.block_on(async {
        let c = reqwest::Client::new();
        let mut diffs = Vec::new();
        for i in 0..CONVERSATIONS {
            let body = json!({"model": "bench", "stream": true, "messages": [
                {"role": "user", "content": format!("{msg} (conversation {i})")}]});
            let s = format!("bench-c{i}");
            let (d, p) = if i % 2 == 0 {
                let d = ttft(&c, &up, &body, &s).await;
                (d, ttft(&c, &proxy, &body, &s).await)
            } else {
                let p = ttft(&c, &proxy, &body, &s).await;
                (ttft(&c, &up, &body, &s).await, p)
            };
            // The first opens the campaign's recall: a warm-up.
            if i > 0 {
                diffs.push((p.as_secs_f64() - d.as_secs_f64()) * 1e3);
            }
        }
        diffs
    });
    let mut diffs = diffs;
    diffs.sort_by(f64::total_cmp);
    let status =
        std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap_or_default();
    let field = |k: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(k))
            .map(|v| v.trim().to_string())
            .unwrap_or_else(|| "?".into())
    };
    println!(
        "serve, {} new conversations (after 1 warm-up): first-token overhead p50 {:.2} ms, p95 {:.2} ms, max {:.2} ms; with {CONVERSATIONS} open: peak RSS {}, RSS {}",
        diffs.len(),
        pct(&diffs, 0.5),
        pct(&diffs, 0.95),
        diffs.last().copied().unwrap_or(0.0),
        field("VmHWM:"),
        field("VmRSS:")
    );
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let _ = child.wait();
    clean(&base);
    clean(&empty);
}

/// Sends a streaming request; the time to the first content token.
async fn ttft(c: &reqwest::Client, base: &str, body: &Value, session: &str) -> Duration {
    let start = Instant::now();
    let mut r = c
        .post(format!("{base}/chat/completions"))
        .header("X-Vaultdm-Session", session)
        .json(body)
        .send()
        .await
        .expect("send");
    assert!(r.status().is_success(), "{}", r.status());
    let mut first = None;
    let mut raw = String::new();
    while let Some(b) = r.chunk().await.expect("chunk") {
        raw.push_str(&String::from_utf8_lossy(&b));
        if first.is_none() && raw.contains("\"content\":\"t0 ") {
            first = Some(start.elapsed());
        }
    }
    first.expect("a first token")
}
