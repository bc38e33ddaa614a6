//! First use of the o200k counter in a fresh process, and counting throughput:
//! `cargo run --release --example tokens_load -- new|old [FILE…]`.
//!
//! `new` is `vaultdm::tokens::o200k` (our counter over the embedded compact vocabulary),
//! `old` is tiktoken-rs's `o200k_base_singleton().encode_ordinary` (what it replaced).
//! Prints the time and the resident-set growth (`VmRSS`, Linux) of the first count, which
//! loads the vocabulary, then the throughput of counting the files (default: `docs/*.md`
//! concatenated) as one text and line by line. Run each mode in its own process.

use std::process::ExitCode;
use std::time::{Duration, Instant};

/// A `kB` field of `/proc/self/status`, in KiB.
fn status_kib(field: &str) -> u64 {
    let Ok(s) = std::fs::read_to_string("/proc/self/status") else {
        return 0;
    };
    s.lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_default();
    let count: fn(&str) -> usize = match mode.as_str() {
        "new" => vaultdm::tokens::o200k,
        "old" => |t| tiktoken_rs::o200k_base_singleton().encode_ordinary(t).len(),
        _ => {
            eprintln!("usage: tokens_load new|old [FILE…]");
            return ExitCode::from(2);
        }
    };
    let mut files: Vec<std::path::PathBuf> = args.map(Into::into).collect();
    if files.is_empty() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
        if let Ok(rd) = std::fs::read_dir(dir) {
            files = rd
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "md"))
                .collect();
        }
        files.sort();
    }
    let mut text = String::new();
    for f in &files {
        match std::fs::read_to_string(f) {
            Ok(t) => text.push_str(&t),
            Err(e) => {
                eprintln!("{}: {e}", f.display());
                return ExitCode::from(2);
            }
        }
    }

    let rss0 = status_kib("VmRSS:");
    let t = Instant::now();
    let first = count("Hello, world!");
    let load = t.elapsed();
    let rss1 = status_kib("VmRSS:");
    println!(
        "{mode}: first use {:.2} ms, RSS +{:.1} MiB ({first} tokens)",
        load.as_secs_f64() * 1e3,
        (rss1.saturating_sub(rss0)) as f64 / 1024.0
    );

    let mb = text.len() as f64 / 1e6;
    let rate = |f: &dyn Fn() -> usize| -> (usize, f64) {
        let mut n = 0;
        let mut best = Duration::MAX;
        for _ in 0..5 {
            let t = Instant::now();
            n = f();
            best = best.min(t.elapsed());
        }
        (n, mb / best.as_secs_f64())
    };
    let (n, whole) = rate(&|| count(&text));
    let (_, lines) = rate(&|| text.split_inclusive('\n').map(count).sum());
    println!(
        "{mode}: {n} tokens in {:.2} MB; whole text {whole:.1} MB/s, line by line {lines:.1} MB/s (best of 5)",
        mb
    );
    println!(
        "{mode}: peak RSS {:.1} MiB",
        status_kib("VmHWM:") as f64 / 1024.0
    );
    ExitCode::SUCCESS
}
