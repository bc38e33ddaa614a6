//! Whole-process latency and peak memory, as a GM meets them: `vaultdm check` and
//! `vaultdm context` run as child processes on generated vaults of 1k, 10k and 50k notes,
//! alternating in the same run with the single-threaded parse floor
//! (`../shared/tools/parse-floor`: walk, read and pulldown-cmark, nothing else).
//!
//! Run with `cargo bench --bench process`. Environment:
//! - `VAULTDM_BENCH_SIZES` (default `1000,10000,50000`): note counts to generate and time;
//! - `VAULTDM_BENCH_ROUNDS` (default 7): alternating rounds per size (the median is shown).
//!
//! A last row per vault is a running `vaultdm chat` on a copy of it: two messages answered
//! by a fake OpenAI-compatible stream on 127.0.0.1 (a thread in this program), then `/quit`;
//! its peak memory is what a session holds (the notes for live reload, canon, the mention
//! matcher, the session).
//!
//! Vaults are generated once into `target/bench-vaults/` (the generator is deterministic).
//! The floor is built from `../shared/tools/parse-floor` with `cargo build --release`; when
//! that folder is missing the floor column is left out. Peak memory comes from
//! `/usr/bin/time -f %M` when it is installed.

use vaultdm_gen as gen;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A fake OpenAI-compatible upstream on 127.0.0.1: every chat completion is answered with a
/// short stream of four tokens; `GET` (the model list) with one model. Returns its base URL.
fn fake_upstream() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the fake upstream");
    let addr = listener.local_addr().expect("its address");
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || answer(stream));
        }
    });
    format!("http://{addr}/v1")
}

/// One request to the fake upstream: headers, the body by its length, then the reply, and
/// the connection closes.
fn answer(stream: std::net::TcpStream) {
    let mut reader = BufReader::new(stream);
    let (mut first, mut len) = (String::new(), 0usize);
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        if first.is_empty() {
            first = line.clone();
        }
        let l = line.to_ascii_lowercase();
        if let Some(v) = l.strip_prefix("content-length:") {
            len = v.trim().parse().unwrap_or(0);
        }
        if line == "\r\n" {
            break;
        }
    }
    let mut body = vec![0u8; len];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let mut out = reader.into_inner();
    let reply = if first.starts_with("GET") {
        let json = r#"{"object":"list","data":[{"id":"bench","object":"model"}]}"#;
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{json}",
            json.len()
        )
    } else {
        let mut r = String::from(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n",
        );
        for w in ["The ", "innkeeper ", "points ", "north."] {
            r.push_str(&format!(
                "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{w}\"}}}}]}}\n\n"
            ));
        }
        r.push_str(
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
        );
        r.push_str("data: [DONE]\n\n");
        r
    };
    let _ = out.write_all(reply.as_bytes());
}

/// A running chat on a copy of `vault`: two messages, then `/quit`, under
/// `/usr/bin/time -f %M`. Returns the wall time and the peak memory (KiB).
fn chat_run(bin: &str, vault: &Path, upstream: &str, time_bin: &Path) -> Run {
    let mut cmd = Command::new(time_bin);
    cmd.args(["-f", "%M", bin, "chat", "--vault"])
        .arg(vault)
        .args([
            "--provider",
            "openai",
            "--base-url",
            upstream,
            "--model",
            "bench",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().expect("start vaultdm chat");
    child
        .stdin
        .take()
        .expect("its stdin")
        .write_all(b"We ask the innkeeper about the road north\nWhat does the guard say?\n/quit\n")
        .expect("send the messages");
    let out = child.wait_with_output().expect("the chat ends");
    let wall = start.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "chat failed: {stderr}");
    let rss_kib = stderr.lines().last().and_then(|l| l.trim().parse().ok());
    Run { wall, rss_kib }
}

/// Copies a vault's files (the chat writes its session log into the vault).
fn copy_vault(from: &Path, to: &Path) {
    for e in walkdir::WalkDir::new(from)
        .into_iter()
        .filter_map(Result::ok)
    {
        let rel = e.path().strip_prefix(from).expect("inside the vault");
        let dest = to.join(rel);
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&dest).expect("copy a folder");
        } else if e.file_type().is_file() {
            std::fs::copy(e.path(), &dest).expect("copy a file");
        }
    }
}

/// One program run: wall time and peak resident memory (KiB) when known.
struct Run {
    wall: Duration,
    rss_kib: Option<u64>,
}

/// A command to time: a label and its argument list (program first).
struct Job {
    label: String,
    argv: Vec<String>,
}

fn run(job: &Job, time_bin: Option<&Path>) -> Run {
    let mut cmd = match time_bin {
        Some(t) => {
            let mut c = Command::new(t);
            c.args(["-f", "%M"]).args(&job.argv);
            c
        }
        None => {
            let mut c = Command::new(&job.argv[0]);
            c.args(&job.argv[1..]);
            c
        }
    };
    cmd.stdout(Stdio::null()).stderr(Stdio::piped());
    let start = Instant::now();
    let out = cmd.output().expect("run the benchmarked command");
    let wall = start.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() || job.label.starts_with("check"),
        "{} failed: {stderr}",
        job.label
    );
    let rss_kib = time_bin.and_then(|_| stderr.lines().last()?.trim().parse().ok());
    Run { wall, rss_kib }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Builds `../shared/tools/parse-floor` into `target/parse-floor` and returns the binary.
fn floor_binary(repo: &Path) -> Option<PathBuf> {
    let manifest = repo.join("../shared/tools/parse-floor/Cargo.toml");
    if !manifest.exists() {
        eprintln!("no ../shared/tools/parse-floor: the floor column is left out");
        return None;
    }
    let target = repo.join("target/parse-floor");
    let ok = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["build", "--release", "--quiet", "--manifest-path"])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target)
        .status()
        .is_ok_and(|s| s.success());
    let bin = target.join("release/parse-floor");
    (ok && bin.exists()).then_some(bin)
}

fn vault_bytes(root: &Path) -> u64 {
    walkdir::WalkDir::new(root)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum()
}

fn main() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let bin = env!("CARGO_BIN_EXE_vaultdm").to_string();
    let sizes: Vec<usize> = std::env::var("VAULTDM_BENCH_SIZES")
        .unwrap_or_else(|_| "1000,10000,50000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let rounds: usize = std::env::var("VAULTDM_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(7)
        .max(1);
    let time_bin = Some(PathBuf::from("/usr/bin/time")).filter(|p| p.exists());
    let floor = floor_binary(&repo);

    let mut vaults: Vec<(String, PathBuf)> =
        vec![("vault-template".into(), repo.join("vault-template"))];
    for n in &sizes {
        let dir = repo.join(format!("target/bench-vaults/n{n}"));
        if !dir.join("vaultdm.toml").exists() {
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("create the bench vault folder");
            gen::generate(&dir, *n, gen::DEFAULT_SEED).expect("generate the bench vault");
        }
        vaults.push((format!("{n} notes"), dir));
    }

    println!(
        "whole process, median of {rounds} alternating rounds; memory = peak RSS ({})",
        if time_bin.is_some() {
            "/usr/bin/time"
        } else {
            "not measured"
        }
    );
    println!(
        "{:<16} {:<22} {:>10} {:>10} {:>7} {:>10} {:>8}",
        "vault", "command", "median ms", "floor ms", "ratio", "peak MiB", "x bytes"
    );
    let mut upstream: Option<String> = None;
    for (name, dir) in &vaults {
        let d = dir.to_string_lossy().to_string();
        let bytes = vault_bytes(dir);
        let vault_args = |cmd: &[&str]| {
            let mut v = vec![bin.clone()];
            v.extend(cmd.iter().map(|s| s.to_string()));
            v.extend(["--vault".to_string(), d.clone()]);
            v
        };
        let mut jobs = vec![
            Job {
                label: "check".into(),
                argv: vault_args(&["check"]),
            },
            Job {
                label: "context (full)".into(),
                argv: vault_args(&["context"]),
            },
            Job {
                label: "context -m (light)".into(),
                argv: vault_args(&["context", "-m", "We ask the innkeeper about the road north"]),
            },
        ];
        if let Some(f) = &floor {
            jobs.insert(
                0,
                Job {
                    label: "parse-floor".into(),
                    argv: vec![f.to_string_lossy().to_string(), d.clone()],
                },
            );
        }
        // One warm-up pass puts the files in the page cache for everyone.
        for j in &jobs {
            run(j, None);
        }
        let mut walls: Vec<Vec<Duration>> = vec![Vec::new(); jobs.len()];
        let mut rss: Vec<Vec<u64>> = vec![Vec::new(); jobs.len()];
        for _ in 0..rounds {
            for (i, j) in jobs.iter().enumerate() {
                let r = run(j, time_bin.as_deref());
                walls[i].push(r.wall);
                rss[i].extend(r.rss_kib);
            }
        }
        let floor_ms = floor.as_ref().map(|_| ms(median(walls[0].clone())));
        for (i, j) in jobs.iter().enumerate() {
            let m = ms(median(walls[i].clone()));
            let peak = {
                let mut r = rss[i].clone();
                r.sort_unstable();
                r.get(r.len() / 2).copied()
            };
            let mib = peak.map(|k| k as f64 / 1024.0);
            println!(
                "{:<16} {:<22} {:>10.1} {:>10} {:>7} {:>10} {:>8}",
                name,
                j.label,
                m,
                floor_ms.map_or("-".into(), |f| format!("{f:.1}")),
                floor_ms.map_or("-".into(), |f| format!("{:.2}x", m / f)),
                mib.map_or("-".into(), |m| format!("{m:.1}")),
                mib.map_or("-".into(), |m| format!(
                    "{:.1}x",
                    m * 1024.0 * 1024.0 / bytes.max(1) as f64
                )),
            );
        }
        // A running chat, on a copy (it writes its session log into the vault).
        if let Some(t) = &time_bin {
            let copy = tempfile::tempdir().expect("a temp dir for the chat's vault copy");
            copy_vault(dir, copy.path());
            let upstream = upstream.get_or_insert_with(fake_upstream);
            let runs: Vec<Run> = (0..3)
                .map(|_| chat_run(&bin, copy.path(), upstream, t))
                .collect();
            let m = ms(median(runs.iter().map(|r| r.wall).collect()));
            let mut kib: Vec<u64> = runs.iter().filter_map(|r| r.rss_kib).collect();
            kib.sort_unstable();
            let mib = kib.get(kib.len() / 2).map(|&k| k as f64 / 1024.0);
            println!(
                "{:<16} {:<22} {:>10.1} {:>10} {:>7} {:>10} {:>8}",
                name,
                "running chat (2 msgs)",
                m,
                "-",
                "-",
                mib.map_or("-".into(), |m| format!("{m:.1}")),
                mib.map_or("-".into(), |m| format!(
                    "{:.1}x",
                    m * 1024.0 * 1024.0 / bytes.max(1) as f64
                )),
            );
        }
    }
}
