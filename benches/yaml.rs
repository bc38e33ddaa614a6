//! Frontmatter YAML, single-threaded: every note of the generated 10,000-note vault, and
//! single frontmatters of the shapes GMs write.
//!
//! `frontmatter_10k/split_parse` runs `frontmatter::split` and `Frontmatter::parse` over
//! every note, texts already in memory (what a cold load spends on frontmatter, on one
//! thread). `fast_path` and `full_parser` run `yaml::parse_fast` and `yaml::parse_full`
//! alone over the same YAML blocks: the second is what every block would cost without the
//! fast path. `shape/*` parses one note's frontmatter of each typical kind; `statblock` and
//! `nested` take the full parser, `broken` the error path (recovery line by line).
//! Run with `cargo bench --bench yaml -- --warm-up-time 1 --measurement-time 3`.

// criterion_group! generates an undocumented `pub fn`.
#![allow(missing_docs)]

use vaultdm_gen as gen;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use vaultdm::vault::frontmatter::{self, Frontmatter};
use vaultdm::vault::yaml;

const SHAPES: &[(&str, &str)] = &[
    (
        "pc",
        "---\nname: Dorrik Stonebrand\nclass: Cleric\nlevel: 6\nplayer: Player 4\nstatus: active\nhp: 33\nmax_hp: 39\nlocation: \"[[canon/locations/the-hanged-thorn|The Hanged Thorn]]\"\ngp: 59\nitems:\n  - bag of caltrops\n  - silvered dagger\n  - rope (50 ft)\n  - thieves' tools\ntags: [pc, party/active]\n---\n",
    ),
    (
        "npc",
        "---\nname: Orydrokeilt Zythias\nrole: smuggler\nstatus: missing\nrelationship: wary\nlocation: [[Saruzia Rookery]]\nalias: The Sleeping Wren\ntags:\n  - npc\n---\n",
    ),
    (
        "lore",
        "---\ntitle: The Manux Heresy\ntags:\n  - lore/religion\n  - mystery\ncreated: 2025-01-13\n---\n",
    ),
    (
        "statblock",
        "---\nname: Breathstealer\nstatblock: true\nsize: Medium\nac: 12 (natural armor)\nhp: 32 (5d8 + 10)\nstats: [10, 14, 14, 6, 10, 8]\nactions:\n  - name: Claw\n    desc: \"Melee Weapon Attack: +4 to hit, reach 5 ft.\"\n  - name: Steal Breath\n    desc: >\n      The target must succeed on a DC 12 Constitution saving throw\n      or lose its next turn.\n---\n",
    ),
    (
        "nested",
        "---\nname: Harbour Watch\nranks:\n  captain: {name: Ada, since: 4710}\n  sergeants: [Bram, Cole]\nsecret: &s Smuggles for the guild\nrumour: *s\n---\n",
    ),
    (
        "broken",
        "---\nname: Yaml Error\nrole: spy: double agent\nlocation: the-harbour\ngoals: [revenge,\n---\n",
    ),
];

fn parse_note(path: &str, text: &str) -> Frontmatter {
    let mut diags = Vec::new();
    Frontmatter::parse(path, &frontmatter::split(text), &mut diags)
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("a temp dir for the generated vault");
    let s = gen::generate(dir.path(), gen::DEFAULT_NOTES, gen::DEFAULT_SEED)
        .expect("generate the vault");
    let mut notes: Vec<(String, String)> = walkdir::WalkDir::new(dir.path())
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
        .filter_map(|e| {
            let text = std::fs::read_to_string(e.path()).ok()?;
            Some((e.path().display().to_string(), text))
        })
        .collect();
    notes.sort();
    let blocks: Vec<&str> = notes
        .iter()
        .filter_map(|(_, t)| frontmatter::split(t).yaml)
        .collect();
    let yaml_bytes: usize = blocks.iter().map(|b| b.len()).sum();
    let fast = blocks
        .iter()
        .filter(|b| yaml::parse_fast(b).is_some())
        .count();
    eprintln!(
        "{} notes ({} generated), {} frontmatter blocks, {:.0} KB of YAML, {} on the fast path",
        notes.len(),
        s.notes,
        blocks.len(),
        yaml_bytes as f64 / 1024.0,
        fast
    );

    let mut g = c.benchmark_group("frontmatter_10k");
    g.sample_size(20);
    g.throughput(Throughput::Bytes(yaml_bytes as u64));
    g.bench_function("split_parse", |b| {
        b.iter(|| {
            notes
                .iter()
                .map(|(p, t)| parse_note(p, t).iter().count())
                .sum::<usize>()
        })
    });
    g.bench_function("fast_path", |b| {
        b.iter(|| {
            blocks
                .iter()
                .filter_map(|y| yaml::parse_fast(y))
                .map(|v| black_box(v).count())
                .sum::<usize>()
        })
    });
    g.bench_function("full_parser", |b| {
        b.iter(|| {
            blocks
                .iter()
                .filter_map(|y| yaml::parse_full(y).ok())
                .map(|v| black_box(v).count())
                .sum::<usize>()
        })
    });
    g.finish();

    let mut g = c.benchmark_group("shape");
    for (name, text) in SHAPES {
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_function(*name, |b| {
            b.iter(|| parse_note("canon/npcs/x.md", black_box(text)))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
