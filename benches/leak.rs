//! The leak guard (issue 28) at the size of a real context: 50 GM secrets of ~100 words
//! and a public canon of ~4,000 words, against a 500-word reply.
//!
//! `public_4000_words`: index the public text (`PublicText::new`), once per canon.
//! `new_50_secrets`: build a guard against that index (`Guard::with_public`: the secrets'
//! runs and names), once per context. `check_500_words`: check one reply that recites one
//! secret and names another, as a table does after every reply.
//! Run with `cargo bench --bench leak -- --warm-up-time 1 --measurement-time 3`.

// criterion_group! generates an undocumented `pub fn`.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use vaultdm::play::leak::{Guard, PublicText, SecretText};
use vaultdm_gen::Rng;

/// Words a reply or a secret says: function words, the town's nouns, what people do.
const FUNCTION_WORDS: &[&str] = &[
    "the", "a", "of", "and", "to", "in", "is", "was", "he", "she", "they", "it", "with", "at",
    "on", "from", "by", "that", "her", "his",
];

const DEEDS_AND_THINGS: &[&str] = &[
    "keeps", "hides", "knows", "sold", "buried", "found", "stole", "paid", "owes", "fears",
    "loves", "watches", "cellar", "roof", "mountain", "water", "night", "winter", "miner",
    "deputy", "doctor", "widow", "clerk", "child", "brother", "sister", "letter", "coin", "debt",
    "secret", "truth", "lie", "old", "cold", "dark", "deep", "quiet", "broken", "sealed", "hidden",
    "real", "false", "last",
];

fn words() -> &'static [&'static str] {
    static WORDS: std::sync::OnceLock<Vec<&str>> = std::sync::OnceLock::new();
    WORDS.get_or_init(|| {
        vaultdm_gen::joined(
            FUNCTION_WORDS,
            &[vaultdm_gen::MINING_WORDS, DEEDS_AND_THINGS],
        )
    })
}

const NAMES: &[&str] = &[
    "Odessa", "Jonah", "Ida", "Ezra", "Crake", "Tamsin", "Gideon", "Mags", "Vane", "Lottie",
    "Brannock", "Hesper", "Oriel", "Strand", "Fitch",
];

fn sentence(rng: &mut Rng, out: &mut String, names: &[String]) {
    let n = rng.range(6, 14);
    for k in 0..n {
        if k > 0 {
            out.push(' ');
        }
        if rng.pct(12) {
            if rng.pct(30) && !names.is_empty() {
                out.push_str(&names[rng.below(names.len())]);
            } else {
                out.push_str(rng.pick(NAMES));
            }
        } else {
            out.push_str(rng.pick(words()));
        }
    }
    out.push_str(". ");
}

fn text(rng: &mut Rng, words: usize, names: &[String]) -> String {
    let mut out = String::new();
    while out.split_whitespace().count() < words {
        sentence(rng, &mut out, names);
    }
    out
}

/// An invented name: two syllables, capitalised (`Vexhollow`, `Marrowin`).
fn invented(rng: &mut Rng) -> String {
    const PARTS: &[&str] = &[
        "vex", "hol", "low", "mar", "row", "kear", "sley", "gil", "ford", "ash", "grove", "brandt",
        "cor", "win", "hal", "lo", "ran", "tul",
    ];
    let mut s = String::new();
    for _ in 0..rng.range(2, 3) {
        s.push_str(rng.pick(PARTS));
    }
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

fn bench(c: &mut Criterion) {
    let mut rng = Rng::new(28);
    let public = text(&mut rng, 4000, &[]);
    let secrets: Vec<SecretText> = (0..50)
        .map(|i| {
            let names = [invented(&mut rng), invented(&mut rng)];
            let mut t = text(&mut rng, 100, &names);
            if i % 5 == 0 {
                t.push_str("They call it ==the Black Lantern==.");
            }
            SecretText::new(&t, &format!("canon/npcs/npc-{i}.md:12"), Some("An NPC"))
        })
        .collect();
    let recited: Vec<&str> = secrets[17]
        .text
        .split_whitespace()
        .skip(20)
        .take(10)
        .collect();
    let mut reply = text(&mut rng, 250, &[]);
    reply.push_str(&recited.join(" "));
    reply.push(' ');
    reply.push_str(&text(&mut rng, 240, &[]));
    let named = secrets[31].text.split_whitespace().find(|w| {
        w.chars().next().is_some_and(char::is_uppercase)
            && !NAMES.contains(&w.trim_end_matches('.'))
    });
    reply.push_str(named.unwrap_or("Vexhollow"));

    let known = PublicText::new(&public);
    let guard = Guard::with_public(&secrets, &known);
    let leaks = guard.check(&reply, "");
    eprintln!(
        "reply of {} words: {} leaks, {} terms watched",
        reply.split_whitespace().count(),
        leaks.len(),
        guard.terms().len()
    );
    assert!(leaks.iter().any(|l| l.source == "canon/npcs/npc-17.md:12"));

    let mut g = c.benchmark_group("leak");
    g.bench_function("public_4000_words", |b| {
        b.iter(|| PublicText::new(black_box(&public)))
    });
    g.bench_function("new_50_secrets", |b| {
        b.iter(|| Guard::with_public(black_box(&secrets), black_box(&known)))
    });
    g.bench_function("check_500_words", |b| {
        b.iter(|| guard.check(black_box(&reply), black_box("we look at the map")))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
