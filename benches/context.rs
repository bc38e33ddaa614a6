//! Building contexts from loaded canon on the generated 10,000-note vault.
//!
//! `matcher_new` builds the mention automaton once per canon (issue 3: < 50 ms).
//! `build/*` is `Engine::build` for one message from loaded canon: mention matching,
//! selection, budgeting and rendering (issue 3: < 1 ms median). `tokens/*` times the
//! token count alone on the texts those builds produce, to show where the time goes. Run
//! with `cargo bench --bench context -- --warm-up-time 1 --measurement-time 3`.

// criterion_group! generates an undocumented `pub fn`.
#![allow(missing_docs)]

use vaultdm_gen as gen;

use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Instant;
use vaultdm::canon::{Campaign, Loaded, Priority};
use vaultdm::context::{Engine, Matcher, ModeChoice, Options, Templates};
use vaultdm::tokens;

/// A player message naming an NPC across town, an NPC by alias, a location, an item a PC
/// carries, a thread and a lore note by wikilink.
fn message(c: &Campaign) -> String {
    let npc = &c.npcs[c.npcs.len() / 3].name;
    let alias = c
        .npcs
        .iter()
        .rev()
        .find_map(|n| n.aliases.first())
        .map_or("nobody", String::as_str);
    let loc = &c.locations[c.locations.len() / 2].name;
    let item = c
        .pcs
        .iter()
        .find_map(|p| p.inventory.last())
        .map_or("lamp", String::as_str);
    let thread = c
        .threads
        .iter()
        .find(|t| t.priority == Priority::Low)
        .map_or("the bells", |t| t.title.as_str());
    let lore = &c.lore[c.lore.len() / 2].id;
    let lore = lore
        .trim_end_matches(".md")
        .rsplit('/')
        .next()
        .unwrap_or(lore);
    format!(
        "I slip {npc}'s letter to {alias} and ask what they know about {loc}. I show them {item} \
         - is any of this tied to {thread}? And what does [[{lore}]] say about the old families?"
    )
}

fn context(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("a temp dir for the generated vault");
    gen::generate(dir.path(), gen::DEFAULT_NOTES, gen::DEFAULT_SEED).expect("generate the vault");
    let loaded = Loaded::load(dir.path()).expect("the vault loads");
    let campaign = (*loaded.built.campaign).clone();
    let templates = Templates::load(None).expect("built-in templates");

    c.bench_function("matcher_new", |b| {
        b.iter_with_large_drop(|| Matcher::new(&campaign))
    });
    // A rename: the reload path rebuilds the matcher from the one before it.
    let before = Matcher::new(&campaign);
    let mut renamed = campaign.clone();
    let mid = renamed.npcs.len() / 2;
    if let Some(n) = renamed.npcs.get_mut(mid) {
        n.name = format!("{} the Younger", n.name);
        n.aliases.push("Young Blood".into());
    }
    c.bench_function("matcher_rebuilt_after_rename", |b| {
        b.iter_with_large_drop(|| before.rebuilt(&renamed))
    });

    let engine = Engine::new(campaign.clone(), templates);
    let t = Instant::now();
    tokens::count("warm the tokenizer");
    eprintln!("o200k tokenizer first use: {:.1?}", t.elapsed());

    let msg = message(&campaign);
    // No budget unless a case names one, so the figures compare with earlier ones.
    let light = Options {
        message: Some(msg.clone()),
        mode: ModeChoice::Light,
        budget: None,
        ..Options::default()
    };
    let light_plain = Options {
        message: Some("I look around the room and order another drink.".into()),
        mode: ModeChoice::Light,
        budget: None,
        ..Options::default()
    };
    let full = Options {
        mode: ModeChoice::Full,
        budget: None,
        ..Options::default()
    };
    let full_default_budget = Options {
        budget: Some(vaultdm::context::DEFAULT_BUDGET),
        ..full.clone()
    };
    let full_budget = Options {
        budget: Some(1500),
        ..full.clone()
    };
    let full_budget_loose = Options {
        budget: Some(8000),
        ..full.clone()
    };
    let cases = [
        ("light_mentions", &light),
        ("light_no_mentions", &light_plain),
        ("full", &full),
        ("full_budget_1500", &full_budget),
        ("full_budget_8000", &full_budget_loose),
        ("full_default_budget", &full_default_budget),
    ];
    eprintln!("message: {msg}");
    for (name, o) in cases {
        let inj = engine.build(o).expect("the context builds");
        let dropped = inj
            .items
            .iter()
            .filter(|i| matches!(i.reason, vaultdm::context::Reason::Dropped(..)))
            .count();
        let cards = inj.items.iter().filter(|i| i.kind == "card").count();
        eprintln!(
            "{name}: {} bytes, {} tokens, {} items, {cards} cards, {dropped} dropped for the budget",
            inj.text.len(),
            inj.tokens,
            inj.items.len()
        );
    }

    // The chat path builds without explain items; `--explain` / JSON builds them too.
    let mut g = c.benchmark_group("build");
    for (name, o) in &cases {
        let o = Options {
            explain: false,
            ..(*o).clone()
        };
        g.bench_function(*name, |b| {
            b.iter_with_large_drop(|| engine.build(&o).expect("the context builds"))
        });
    }
    g.bench_function("light_mentions_with_explain", |b| {
        b.iter_with_large_drop(|| engine.build(&light).expect("the context builds"))
    });
    g.finish();

    let mut g = c.benchmark_group("tokens");
    for (name, o) in [("light_mentions_text", &light), ("full_text", &full)] {
        let text = engine.build(o).expect("the context builds").text;
        g.bench_function(name, |b| b.iter(|| tokens::count(&text)));
    }
    g.finish();
}

criterion_group!(benches, context);
criterion_main!(benches);
