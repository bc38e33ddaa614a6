//! Worst-case single notes: what one pathological note costs to parse, per megabyte, from
//! 1 MB to the 16 MB limit. A linear parser shows the same ms/MB at every size.
//!
//! Cases: frontmatter of deeply nested flow lists (took 24.5 s for 200 KB before the
//! pre-scan), frontmatter of YAML anchors and aliases, a single paragraph with no sentence
//! end, deeply nested Markdown lists and block quotes, one long line of wikilinks, and a
//! large flat YAML list (a frontmatter under the 1 MB cap, parsed for real).
//!
//! `worst_case_yaml` parses YAML alone (`vault::yaml::parse`) at 256 KB and at the 1 MB
//! frontmatter cap, in the shapes that are slow for a YAML parser: flow lists nested 30
//! deep over and over, block mappings nested 30 deep, flow mappings, thousands of
//! anchors, a `[` never closed, and aliases that would expand exponentially.
//! Run with `cargo bench --bench worst_case`; docs/benchmarks.md has the table.

// criterion_group! generates an undocumented `pub fn`.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use vaultdm::canon::Loaded;
use vaultdm::vault::{yaml, Note};

const MB: usize = 1024 * 1024;

/// A note of about `bytes` bytes in the given pathological shape.
fn note(kind: &str, bytes: usize) -> String {
    match kind {
        "nested_flow" => {
            let n = bytes / 2 - 40;
            format!(
                "---\ninventory: {}{}\n---\nBody.\n",
                "[".repeat(n),
                "]".repeat(n)
            )
        }
        "anchors" => {
            let mut s = String::from("---\na: &a [x, x, x, x, x, x, x, x]\n");
            let line = "b: [*a, *a, *a, *a, *a, *a, *a, *a]\n";
            while s.len() + line.len() < bytes - 8 {
                s.push_str(line);
            }
            s + "---\n"
        }
        "flat_list" => {
            // Stays under the 1 MB frontmatter limit, then body text.
            let mut s = String::from("---\ninventory: [");
            while s.len() < (MB - 64).min(bytes) {
                s.push_str("torch, ");
            }
            s.push_str("rope]\n---\n");
            while s.len() < bytes {
                s.push_str("The party walks on through the snow. ");
            }
            s
        }
        "paragraph" => format!("---\nname: Wordy\n---\n{}\n", "word ".repeat(bytes / 5)),
        "nested_lists" => {
            let mut s = String::from("# Deep\n\n");
            let mut depth = 0usize;
            while s.len() < bytes {
                s.push_str(&" ".repeat((depth % 64) * 2));
                s.push_str("- item [[Link]] #tag\n");
                depth += 1;
            }
            s
        }
        "nested_quotes" => {
            let mut s = String::from("# Deep\n\n");
            let mut depth = 1usize;
            while s.len() < bytes {
                s.push_str(&">".repeat(depth % 200 + 1));
                s.push_str(" [!note] quote text\n");
                depth += 1;
            }
            s
        }
        "links" => {
            let mut s = String::from("# Links\n\n");
            while s.len() < bytes {
                s.push_str("[[Some Note|alias]] [[Other#Heading]] ");
            }
            s
        }
        _ => unreachable!("unknown case {kind}"),
    }
}

const CASES: &[&str] = &[
    "nested_flow",
    "anchors",
    "flat_list",
    "paragraph",
    "nested_lists",
    "nested_quotes",
    "links",
];

fn parse(c: &mut Criterion) {
    let mut g = c.benchmark_group("worst_case_note");
    g.sample_size(10);
    for kind in CASES {
        for mb in [1usize, 4, 16] {
            // 16 MB is the limit: stay just under it.
            let text = note(kind, mb * MB - 1024);
            g.throughput(Throughput::Bytes(text.len() as u64));
            g.bench_with_input(BenchmarkId::new(*kind, format!("{mb}MB")), &text, |b, t| {
                b.iter_with_large_drop(|| Note::parse("canon/npcs/worst.md", t.as_bytes()))
            });
        }
    }
    g.finish();

    // The whole pipeline on one such note in a small vault: notes, canon, diagnostics.
    let mut g = c.benchmark_group("worst_case_vault");
    g.sample_size(10);
    for kind in ["nested_flow", "paragraph", "nested_lists"] {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("canon/npcs")).expect("mkdir");
        let text = note(kind, 16 * MB - 1024);
        std::fs::write(dir.path().join("canon/npcs/worst.md"), &text).expect("write");
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_function(BenchmarkId::new(kind, "16MB"), |b| {
            b.iter_with_large_drop(|| {
                let l = Loaded::load(dir.path()).expect("load");
                let d = l.diagnostics();
                (l, d)
            })
        });
    }
    g.finish();
}

/// YAML of about `bytes` bytes in a shape that is hard for a YAML parser.
fn yaml_text(kind: &str, bytes: usize) -> String {
    let mut s = String::new();
    let mut i = 0usize;
    while s.len() < bytes {
        match kind {
            "nested_flow_30" => {
                if i == 0 {
                    s.push_str("a: [");
                }
                s.push_str(&format!("{}x{}, ", "[".repeat(30), "]".repeat(30)));
            }
            "nested_block_30" => {
                for d in 0..30 {
                    s.push_str(&format!("{}k{i}_{d}:\n", " ".repeat(d * 2)));
                }
                s.push_str(&format!("{}v\n", " ".repeat(60)));
            }
            "flow_maps" => {
                if i == 0 {
                    s.push_str("items:\n");
                }
                s.push_str("  - {name: rope, qty: 2, note: \"fine\"}\n");
            }
            "anchors" => s.push_str(&format!("k{i}: &a{i} [x, y]\n")),
            "unclosed_flow" => {
                if i == 0 {
                    s.push_str("a: [");
                }
                s.push_str("torch, ");
            }
            "laughs" => {
                // Each level lists the one before nine times: 9^n values if expanded.
                if i == 0 {
                    s.push_str("l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
                } else {
                    let refs = vec![format!("*l{}", i - 1); 9].join(", ");
                    s.push_str(&format!("l{i}: &l{i} [{refs}]\n"));
                }
            }
            _ => unreachable!("unknown case {kind}"),
        }
        i += 1;
    }
    if kind == "nested_flow_30" {
        s.push_str("x]\n");
    }
    s
}

fn yaml_shapes(c: &mut Criterion) {
    let mut g = c.benchmark_group("worst_case_yaml");
    g.sample_size(10);
    for kind in [
        "nested_flow_30",
        "nested_block_30",
        "flow_maps",
        "anchors",
        "unclosed_flow",
        "laughs",
    ] {
        for kb in [256usize, 1024] {
            let text = yaml_text(kind, kb * 1024 - 64);
            g.throughput(Throughput::Bytes(text.len() as u64));
            g.bench_with_input(BenchmarkId::new(kind, format!("{kb}KB")), &text, |b, t| {
                b.iter_with_large_drop(|| yaml::parse(t))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, parse, yaml_shapes);
criterion_main!(benches);
