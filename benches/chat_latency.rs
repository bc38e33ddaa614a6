//! Chat latency on the 10,000-note vault (issue 4's targets), against a local raw-TCP
//! fake server on 127.0.0.1:0:
//!
//! * Enter -> first byte of the request on the wire (context build, prompt layout, the
//!   session log's write + sync_data, connect, send): target < 10 ms.
//! * each streamed token -> handed to the terminal writer: target < 5 ms after the server
//!   wrote it.
//!
//! `cargo bench --bench chat_latency` prints medians and p95s. Plain `main` (no criterion):
//! the quantities are timestamps taken on both ends of a socket, not a closure's run time.

use vaultdm_gen as gen;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use vaultdm::canon::Loaded;
use vaultdm::context::{Engine, Options, Templates};
use vaultdm::llm::{LlmClient, LlmConfig, ProviderKind};
use vaultdm::play::Table;
use vaultdm::session::Store;

const TURNS: usize = 30;
const TOKENS: usize = 40;

enum Ev {
    FirstByte(Instant),
    Wrote(Instant),
}

fn serve(listener: TcpListener, tx: mpsc::Sender<Ev>) {
    for sock in listener.incoming() {
        let Ok(mut sock) = sock else { continue };
        let _ = sock.set_nodelay(true);
        let mut buf = Vec::new();
        let mut tmp = [0u8; 65536];
        let mut first = true;
        // Read the head and the body (Content-Length).
        loop {
            let n = match sock.read(&mut tmp) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            if first {
                let _ = tx.send(Ev::FirstByte(Instant::now()));
                first = false;
            }
            buf.extend_from_slice(&tmp[..n]);
            if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&buf[..end]).to_lowercase();
                let len = head
                    .lines()
                    .find_map(|l| {
                        l.strip_prefix("content-length:")
                            .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                    })
                    .unwrap_or(0);
                if buf.len() >= end + 4 + len {
                    break;
                }
            }
        }
        let _ = sock.write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n",
        );
        for i in 0..TOKENS {
            std::thread::sleep(Duration::from_millis(2));
            let chunk = format!(
                "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"tok{i} \"}},\"finish_reason\":null}}]}}\n\n"
            );
            let _ = tx.send(Ev::Wrote(Instant::now()));
            let _ = sock.write_all(chunk.as_bytes());
            let _ = sock.flush();
        }
        let _ = sock.write_all(b"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
    }
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    gen::generate(dir.path(), gen::DEFAULT_NOTES, gen::DEFAULT_SEED).expect("generate");
    let loaded = Loaded::load(dir.path()).expect("load");
    let engine = Engine::new(
        loaded.built.campaign.clone(),
        Templates::load(None).expect("templates"),
    );
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || serve(listener, tx));
    let cfg = LlmConfig::new(ProviderKind::OpenAi, format!("http://{addr}/v1"), "bench");
    let mut table = Table::new(
        engine,
        Options::default(),
        Some(LlmClient::new(cfg).expect("client")),
        Store::open(dir.path(), "bench").expect("store"),
        6000,
        8,
    )
    .expect("table");
    // The provider's cold summary is a separate request after a reply (once the history
    // fills); this bench times the message's own request, so it is off here.
    table.set_memory_config(vaultdm::config::MemoryConfig {
        summarise: false,
        ..Default::default()
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("rt");
    let names: Vec<String> = loaded
        .built
        .campaign
        .npcs
        .iter()
        .take(TURNS)
        .map(|n| n.name.clone())
        .collect();
    let mut enter_to_first = Vec::new();
    let mut token_lag = Vec::new();
    let mut prep = Vec::new();
    let mut eng = Vec::new();
    for (turn, name) in names.iter().enumerate() {
        let msg = if turn == 0 {
            "continue".to_string()
        } else {
            format!("I ask {name} about the ledger.")
        };
        let mut arrivals: Vec<Instant> = Vec::new();
        let mut sink = std::io::sink();
        let mut on = |t: &str| {
            let _ = sink.write_all(t.as_bytes());
            let _ = sink.flush();
            arrivals.push(Instant::now());
        };
        let te = Instant::now();
        let _ = table.engine().build(&Options {
            message: Some(msg.clone()),
            ..Options::default()
        });
        eng.push(te.elapsed().as_secs_f64() * 1e3);
        let tp = Instant::now();
        let _ = table.prepare(&msg).expect("prepare");
        prep.push(tp.elapsed().as_secs_f64() * 1e3);
        let t0 = Instant::now();
        let r = rt.block_on(table.send(&msg, &mut on, std::future::pending()));
        let reply = r.expect("turn");
        assert!(reply.reply.complete);
        let mut wrote = Vec::new();
        let mut first = None;
        while let Ok(ev) = rx.try_recv() {
            match ev {
                Ev::FirstByte(t) => first = Some(t),
                Ev::Wrote(t) => wrote.push(t),
            }
        }
        if let Some(f) = first {
            enter_to_first.push(f.duration_since(t0).as_secs_f64() * 1e3);
        }
        // Arrivals without an empty role chunk line up one-to-one with writes.
        for (w, a) in wrote.iter().zip(arrivals.iter()) {
            token_lag.push(a.saturating_duration_since(*w).as_secs_f64() * 1e3);
        }
    }
    println!("  context alone: median {:.2} ms", pct(&mut eng, 0.5));
    println!(
        "  of which building context + prompt: median {:.2} ms",
        pct(&mut prep, 0.5)
    );
    let n1 = enter_to_first.len();
    let n2 = token_lag.len();
    println!(
        "enter -> first request byte: median {:.2} ms, p95 {:.2} ms over {n1} turns (target < 10 ms)",
        pct(&mut enter_to_first.clone(), 0.5),
        pct(&mut enter_to_first, 0.95)
    );
    println!(
        "token written by server -> handed to the terminal: median {:.3} ms, p95 {:.3} ms over {n2} tokens (target < 5 ms)",
        pct(&mut token_lag.clone(), 0.5),
        pct(&mut token_lag, 0.95)
    );
}
