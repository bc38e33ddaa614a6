//! Live reload on the generated 10,000-note vault.
//!
//! `one_note_hp` edits a PC's HP and times `Live::apply` on that one path: re-read and parse
//! the note, update the link index in place, rebuild canon, diff, reuse the mention matcher
//! (no name changed), rebuild the engine. Issue 5 asks for under 20 ms. `one_note_name`
//! renames the PC instead, so the matcher is patched too (the shards holding its names
//! built again). `files_500` rewrites 500 notes and applies them as one reload;
//! `cold_load` is `Live::load` from nothing, the thing a burst reload must stay well under. Writing the files is outside the timed part.
//! Run with `cargo bench --bench reload -- --warm-up-time 1 --measurement-time 5`.

// criterion_group! generates an undocumented `pub fn`.
#![allow(missing_docs)]

use vaultdm_gen as gen;

use criterion::{criterion_group, criterion_main, Criterion};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use vaultdm::watch::Live;

const NOTES: usize = 10_000;

fn vault() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("vault");
    gen::generate(&root, NOTES, 42).expect("generate the bench vault");
    (dir, root)
}

/// Rewrites a frontmatter line starting with `key:` to `key: value`.
fn set_key(text: &str, key: &str, value: &str) -> String {
    let mut done = false;
    text.lines()
        .map(|l| {
            if !done && l.starts_with(&format!("{key}:")) {
                done = true;
                format!("{key}: {value}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// The first PC note whose frontmatter has a line starting with `key:`.
fn pc_with(live: &Live, key: &str) -> (String, String) {
    for p in &live.campaign().pcs {
        let text = std::fs::read_to_string(live.root().join(&p.id)).expect("read PC");
        if text.lines().any(|l| l.starts_with(&format!("{key}:"))) {
            return (p.id.clone(), text);
        }
    }
    panic!("no PC note has `{key}:`");
}

fn one_note(c: &mut Criterion, root: &Path) {
    let mut live = Live::load(root).expect("load");
    let (id, text) = pc_with(&live, "hp_current");
    let abs = root.join(&id);
    let mut g = c.benchmark_group("reload");
    g.sample_size(50);
    let mut n = 0u64;
    g.bench_function("one_note_hp", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                n += 1;
                std::fs::write(&abs, set_key(&text, "hp_current", &(n % 50).to_string()))
                    .expect("write");
                let t = Instant::now();
                let r = live.apply(std::slice::from_ref(&abs));
                total += t.elapsed();
                assert!(r.files == 1 && !r.changes.is_empty(), "{r}");
            }
            total
        });
    });
    std::fs::write(&abs, &text).expect("restore");
    live.apply(std::slice::from_ref(&abs));
    let (name_id, name_text) = pc_with(&live, "name");
    let abs = root.join(&name_id);
    g.bench_function("one_note_name", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                n += 1;
                let edited = set_key(&name_text, "name", &format!("Benchy {n}"));
                std::fs::write(&abs, edited).expect("write");
                let t = Instant::now();
                let r = live.apply(std::slice::from_ref(&abs));
                total += t.elapsed();
                assert!(r.files == 1 && !r.changes.is_empty(), "{r}");
            }
            total
        });
    });
    std::fs::write(&abs, &name_text).expect("restore");
    live.apply(std::slice::from_ref(&abs));
    g.finish();
}

fn burst(c: &mut Criterion, root: &Path) {
    let mut live = Live::load(root).expect("load");
    let targets: Vec<(PathBuf, String)> = live
        .loaded()
        .vault
        .notes
        .iter()
        .step_by(NOTES / 500)
        .take(500)
        .map(|n| {
            let abs = root.join(&n.path);
            let text = std::fs::read_to_string(&abs).expect("read");
            (abs, text)
        })
        .collect();
    let paths: Vec<PathBuf> = targets.iter().map(|(p, _)| p.clone()).collect();
    let mut g = c.benchmark_group("reload");
    g.sample_size(10);
    let mut n = 0u64;
    g.bench_function("files_500", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                n += 1;
                for (p, text) in &targets {
                    std::fs::write(p, format!("{text}\nEdited {n}.\n")).expect("write");
                }
                let t = Instant::now();
                let r = live.apply(&paths);
                total += t.elapsed();
                assert_eq!(r.files, 500);
            }
            total
        });
    });
    g.bench_function("cold_load", |b| b.iter(|| Live::load(root).expect("load")));
    g.finish();
    for (p, text) in &targets {
        std::fs::write(p, text).expect("restore");
    }
}

fn benches(c: &mut Criterion) {
    let (_dir, root) = vault();
    one_note(c, &root);
    burst(c, &root);
}

criterion_group!(reload, benches);
criterion_main!(reload);
