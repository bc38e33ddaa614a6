//! Token counting throughput: our exact o200k counter (`vaultdm::tokens::o200k`) against
//! tiktoken-rs's `encode_ordinary`, which it replaced and must match.
//!
//! `docs_whole/*` counts all of `docs/*.md` concatenated as one text; `docs_lines/*` counts
//! the same text line by line (what the context budget does: it caches counts per line).
//! The vocabularies are loaded before timing; what first use costs in a fresh process is
//! measured by `cargo run --release --example tokens_load -- new|old`.
//! Run with `cargo bench --bench tokens -- --warm-up-time 1 --measurement-time 3`.

// criterion_group! generates an undocumented `pub fn`.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};

fn docs() -> String {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("docs/ is readable")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| std::fs::read_to_string(p).expect("a doc is UTF-8"))
        .collect()
}

fn bench(c: &mut Criterion) {
    let text = docs();
    let tiktoken = tiktoken_rs::o200k_base_singleton();
    assert_eq!(
        vaultdm::tokens::o200k(&text),
        tiktoken.encode_ordinary(&text).len()
    );

    let mut g = c.benchmark_group("docs_whole");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("ours", |b| {
        b.iter(|| vaultdm::tokens::o200k(black_box(&text)))
    });
    g.bench_function("tiktoken_rs", |b| {
        b.iter(|| tiktoken.encode_ordinary(black_box(&text)).len())
    });
    g.finish();

    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut g = c.benchmark_group("docs_lines");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("ours", |b| {
        b.iter(|| {
            lines
                .iter()
                .map(|l| vaultdm::tokens::o200k(black_box(l)))
                .sum::<usize>()
        })
    });
    g.bench_function("tiktoken_rs", |b| {
        b.iter(|| {
            lines
                .iter()
                .map(|l| tiktoken.encode_ordinary(black_box(l)).len())
                .sum::<usize>()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
