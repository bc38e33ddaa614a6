//! Budgets that hold at the extremes: hundreds of threads, a message naming hundreds of
//! NPCs, and every budget in between — the block lands within the budget, close under it,
//! and `--explain` says what was cut.

use crate::support;

use crate::support::{context_with, Scratch};
use proptest::prelude::*;
use std::sync::OnceLock;
use vaultdm::canon::Loaded;
use vaultdm::context::{Cut, DropStep, ModeChoice, Reason, DEFAULT_BUDGET};

/// saltreach with 500 open threads of every priority and 300 more NPCs at the docks.
fn crowded() -> &'static (Scratch, Loaded) {
    static VAULT: OnceLock<(Scratch, Loaded)> = OnceLock::new();
    VAULT.get_or_init(|| {
        let s = Scratch::of("saltreach");
        let mut threads = String::from("# Open Threads\n");
        for (p, prio) in ["Urgent", "High", "Medium", "Low"].iter().enumerate() {
            threads.push_str(&format!("\n## {prio}\n"));
            for i in 0..125 {
                threads.push_str(&format!(
                    "- **{prio} matter {i}** — Someone at pier {p}{i} owes the harbour a favour.\n  → Next: Ask around pier {i}.\n"
                ));
            }
        }
        s.write("canon/open-threads.md", &threads);
        for i in 0..300 {
            s.write(
                &format!("canon/npcs/docker-{i}.md"),
                &format!("---\nname: Docker Quill{i}\nrole: dock hand\nlocation: the-lower-docks\nvoice: Talks of tides and tar, always tide {i}.\n---\nA dock hand who has worked pier {i} for years.\n"),
            );
        }
        let loaded = s.load();
        (s, loaded)
    })
}

fn exact(text: &str) -> usize {
    vaultdm::tokens::count(text)
}

/// Reported counts add up per line: never under the exact count, within 2% over.
fn close_to_exact(reported: usize, text: &str) {
    let n = exact(text);
    assert!(
        reported >= n && reported <= n + n / 50 + 2,
        "{reported} for {n}"
    );
}

#[test]
fn five_hundred_threads_fill_the_budget_instead_of_emptying_it() {
    let (_, loaded) = crowded();
    let unlimited = context_with(loaded, None, ModeChoice::Full, None);
    assert!(unlimited.tokens > 10_000, "{}", unlimited.tokens);
    for budget in [1500, 3000, DEFAULT_BUDGET, 8000] {
        let inj = context_with(loaded, None, ModeChoice::Full, Some(budget));
        assert!(inj.tokens <= budget, "budget {budget}: {}", inj.tokens);
        close_to_exact(inj.tokens, &inj.text);
        // One thread line is ~25 tokens: the block is never more than a few under.
        assert!(
            inj.tokens + 60 >= budget,
            "budget {budget} kept only {} tokens",
            inj.tokens
        );
        assert!(
            inj.text.contains("[URGENT] Urgent matter 0"),
            "{}",
            inj.text
        );
        let dropped_low = inj.items.iter().any(|i| {
            i.kind == "thread" && matches!(i.reason, Reason::Dropped(DropStep::LowThreads, _))
        });
        assert!(dropped_low);
    }
}

#[test]
fn the_default_budget_holds_a_big_vault_to_what_models_take() {
    let (_, loaded) = crowded();
    let inj = support::context(loaded, None);
    assert!(inj.tokens <= DEFAULT_BUDGET && inj.tokens + 60 >= DEFAULT_BUDGET);
}

#[test]
fn a_message_naming_hundreds_shrinks_cards_then_names_them_on_one_line() {
    let (_, loaded) = crowded();
    let names: Vec<String> = (0..300).map(|i| format!("Docker Quill{i}")).collect();
    let msg = format!("I shout at {}.", names.join(", "));
    let unlimited = context_with(loaded, Some(&msg), ModeChoice::Light, None);
    assert!(unlimited.tokens > 8_000, "{}", unlimited.tokens);
    for budget in [600, 1500, 4000] {
        let inj = context_with(loaded, Some(&msg), ModeChoice::Light, Some(budget));
        assert!(inj.tokens <= budget, "budget {budget}: {}", inj.tokens);
        assert!(inj.tokens + 60 >= budget, "budget {budget}: {}", inj.tokens);
        let cards: Vec<_> = inj.items.iter().filter(|i| i.kind == "card").collect();
        assert_eq!(cards.len(), 300, "every mention is explained");
        let cut = |c: Cut| {
            cards
                .iter()
                .filter(|i| matches!(&i.reason, Reason::Card(_, k) if *k == c))
                .count()
        };
        // Cards go lowest-ranked (last-named) first: kept cards, then names, then counts,
        // in message order.
        let order: Vec<u8> = cards
            .iter()
            .map(|i| match &i.reason {
                Reason::Card(_, Cut::None | Cut::Shortened) => 0,
                Reason::Card(_, Cut::NameOnly) => 1,
                _ => 2,
            })
            .collect();
        assert!(order.windows(2).all(|w| w[0] <= w[1]), "{order:?}");
        assert!(cut(Cut::NameOnly) <= vaultdm::context::budget::ALSO_NAMED);
        assert!(
            cut(Cut::NameOnly) + cut(Cut::Counted) > 0,
            "budget {budget}"
        );
        assert!(
            inj.text.contains("Docker Quill0 - dock hand"),
            "{}",
            inj.text
        );
        assert!(inj.text.contains("- Also mentioned: "), "{}", inj.text);
        if cut(Cut::Counted) > 0 {
            assert!(inj
                .text
                .contains(&format!("and {} more", cut(Cut::Counted))));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Any budget, any mode: within the budget unless nothing is left to cut, and the
    /// party (never cut) is always there.
    #[test]
    fn every_budget_holds(budget in 40usize..9000, full in any::<bool>(), named in 0usize..300) {
        let (_, loaded) = crowded();
        let names: Vec<String> = (0..named).map(|i| format!("Docker Quill{i}")).collect();
        let msg = format!("We look for {}.", names.join(" and "));
        let mode = if full { ModeChoice::Full } else { ModeChoice::Light };
        let inj = context_with(loaded, Some(&msg), mode, Some(budget));
        let floor = context_with(loaded, Some(&msg), mode, Some(1));
        prop_assert!(inj.tokens <= budget.max(floor.tokens), "budget {budget}: {}", inj.tokens);
        prop_assert!(inj.text.contains("Orla Venn"));
        prop_assert!(exact(&inj.text) <= inj.tokens);
    }
}
