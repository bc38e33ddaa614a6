//! Long-session memory (issue 13) on the bundled campaign with a generated session.
//!
//! `prompt_2000`: assemble the whole prompt for a message (canon context, glossary, recalled
//! passages, hot history, within a 6,000-token budget) over a 2,000-exchange session — the
//! memory is built on the first call, as a session does once on open; each measured call
//! then runs recall and layout. `index_one_exchange`: remember one more exchange (its terms,
//! the entities it names, its coined terms). `import_200`: `Store::import` of 200 exchanges
//! (each record synced to disk). Run with
//! `cargo bench --bench memory -- --warm-up-time 1 --measurement-time 3`.

// criterion_group! generates an undocumented `pub fn`.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use vaultdm::canon::Loaded;
use vaultdm::context::{Engine, Options};
use vaultdm::llm::prompt::Exchange;
use vaultdm::memory::Memory;
use vaultdm::play::Table;
use vaultdm::session::import::Imported;
use vaultdm::session::Store;

const WORDS: &[&str] = vaultdm_gen::MINING_WORDS;
const NAMES: &[&str] = &[
    "Odessa",
    "Jonah Sallow",
    "Ida Marsh",
    "Ezra Coil",
    "Deputy Crake",
    "Granny Tamsin Reed",
    "Father Gideon Lusk",
    "Mags Dunmore",
    "the Brass Canary",
    "Shaft Nine",
    "Company Hill",
];

fn splitmix(s: &mut u64) -> u64 {
    *s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn sentence(s: &mut u64) -> String {
    let pick = |s: &mut u64, xs: &[&'static str]| xs[(splitmix(s) % xs.len() as u64) as usize];
    let n = pick(s, NAMES);
    let (a, b, c) = (pick(s, WORDS), pick(s, WORDS), pick(s, WORDS));
    match splitmix(s) % 4 {
        0 => format!("{n} talks about the {a} and the {b} by the {c}."),
        1 => format!("A miner called Tam {a}-{b} asks about the {c}."),
        2 => format!("You find a {a} near the {b}; {n} says the {c} was moved."),
        _ => format!("The {a} rattles as {n} counts {} {b}s.", splitmix(s) % 90),
    }
}

fn exchanges(n: usize, seed: u64) -> Vec<Imported> {
    let mut s = seed;
    (0..n)
        .map(|_| Imported {
            player: format!(
                "we look at the {}",
                WORDS[(splitmix(&mut s) % WORDS.len() as u64) as usize]
            ),
            dm: (0..6)
                .map(|_| sentence(&mut s))
                .collect::<Vec<_>>()
                .join(" "),
        })
        .collect()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir").flatten() {
        let t = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_dir(&e.path(), &t);
        } else {
            std::fs::copy(e.path(), &t).expect("copy");
        }
    }
}

fn vault() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("coldharrow");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("vault-template"),
        &root,
    );
    (dir, root)
}

fn bench(c: &mut Criterion) {
    let (_dir, root) = vault();
    let loaded = Loaded::load(&root).expect("load");
    let mut store = Store::open(&root, "long").expect("session");
    store.import(&exchanges(2000, 7)).expect("import");
    let engine = Engine::for_vault(&root, &loaded).expect("engine");
    let mut table = Table::new(
        engine.clone(),
        Options::for_vault(&loaded.config.context),
        None,
        store,
        8000,
        8,
    )
    .expect("table");
    table.set_prompt_budget(6000);
    let t = Instant::now();
    table
        .prepare_quiet("what did odessa say about the piano?")
        .expect("first");
    eprintln!(
        "first prompt (builds the memory of 2,000 exchanges): {:?}",
        t.elapsed()
    );

    let mut g = c.benchmark_group("memory");
    g.sample_size(30);
    let messages = [
        "what did odessa say about the piano?",
        "where is the ledger now?",
        "who had the rifle crate?",
    ];
    let mut i = 0;
    g.bench_function("prompt_2000", |b| {
        b.iter(|| {
            i += 1;
            let p = table
                .prepare_quiet(messages[i % messages.len()])
                .expect("prompt");
            assert!(!p.memory.passages.is_empty());
            p
        })
    });

    let known = |_: &str| false;
    let history: Vec<Exchange> = exchanges(2000, 9)
        .into_iter()
        .map(|e| Exchange {
            player: e.player,
            dm: e.dm,
            full_context: None,
        })
        .collect();
    let mut mem = Memory::build(&history, engine.matcher(), &known);
    let extra: Vec<Exchange> = exchanges(5000, 11)
        .into_iter()
        .map(|e| Exchange {
            player: e.player,
            dm: e.dm,
            full_context: None,
        })
        .collect();
    let mut k = 0;
    g.bench_function("index_one_exchange", |b| {
        b.iter(|| {
            k = (k + 1) % extra.len();
            mem.add(&extra[k], engine.matcher(), &known);
        })
    });

    let batch = exchanges(200, 13);
    let mut n = 0;
    g.bench_function("import_200", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                n += 1;
                let mut s = Store::open(&root, &format!("import-{n}")).expect("session");
                let t = Instant::now();
                s.import(&batch).expect("import");
                total += t.elapsed();
            }
            total
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
