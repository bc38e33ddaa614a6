//! Context rules, each on a fixture vault: resume commands, mention matching (whole words,
//! longest match, common words, possessives, first names, wikilinks), cards, the NPC cap,
//! the budget's drop order, template overrides, `--pc` focus and the gaps a vault can have.

use crate::support;

use crate::support::{context, context_with, engine, load_fixture, options, triples, Scratch};
use rstest::rstest;
use vaultdm::canon::{Loaded, Priority};
use vaultdm::context::{
    is_resume, ContextError, GmOnly, Injected, Item, Mode, ModeChoice, Options, Target, Templates,
    RESUME_COMMANDS,
};

/// The engine counts rendered lines with o200k and caches them; the sum of line counts is
/// close to counting the whole text at once (the issue allows 5%).
fn close_to_exact(reported: usize, text: &str) -> bool {
    let exact = vaultdm::tokens::count(text);
    reported.abs_diff(exact) <= exact / 20 + 3
}

fn item<'a>(inj: &'a Injected, kind: &str, name: &str) -> &'a Item {
    inj.items
        .iter()
        .find(|i| i.kind == kind && i.name == name)
        .unwrap_or_else(|| panic!("no {kind} item {name:?} in {:#?}", inj.items))
}

/// Names of everything a message mentions, as `kind:name`.
fn mentions(loaded: &Loaded, message: &str) -> Vec<String> {
    let c = &loaded.built.campaign;
    engine(loaded)
        .matcher()
        .find(message)
        .into_iter()
        .map(|m| match m.target {
            Target::Pc(i) => format!("pc:{}", c.pcs[i as usize].name),
            Target::Npc(i) => format!("npc:{}", c.npcs[i as usize].name),
            Target::Location(i) => format!("location:{}", c.locations[i as usize].name),
            Target::Thread(i) => format!("thread:{}", c.threads[i as usize].title),
            Target::Item(p, j) => format!("item:{}", c.pcs[p as usize].inventory[usize::from(j)]),
            Target::Lore(i) => format!("lore:{}", c.lore[i as usize].name),
            Target::Session(i) => format!("session:{}", c.sessions[i as usize].name),
        })
        .collect()
}

// ---------------------------------------------------------------- resume commands

#[test]
fn the_resume_commands_are_exactly_these() {
    assert_eq!(
        RESUME_COMMANDS,
        [
            "continue",
            "resume",
            "go",
            "start",
            "begin",
            "proceed",
            "what now",
            "whats next",
            "what's next",
            "next",
            "start session",
            "resume session",
            "continue session",
        ]
    );
}

#[rstest]
#[case("continue", true)]
#[case("RESUME", true)]
#[case("  go  ", true)]
#[case("Start!", true)]
#[case("begin.", true)]
#[case("proceed?!", true)]
#[case("What now?", true)]
#[case("whats next", true)]
#[case("What's next?", true)]
#[case("what’s next?", true)]
#[case("next...", true)]
#[case("Start session", true)]
#[case("resume  session", true)]
#[case("Continue Session.", true)]
#[case("continue the fight", false)]
#[case("go north", false)]
#[case("what is next", false)]
#[case("next time", false)]
#[case("start the session", false)]
#[case("?continue", false)]
#[case("ok", false)]
#[case("1", false)]
fn resume_commands_choose_the_full_context(#[case] message: &str, #[case] resume: bool) {
    assert_eq!(is_resume(message), resume, "{message:?}");
    let loaded = load_fixture("saltreach");
    let inj = context(&loaded, Some(message));
    let want = if resume { Mode::Full } else { Mode::Light };
    assert_eq!(inj.mode, want, "{message:?}");
    assert_eq!(inj.text.contains("### Party"), resume);
}

#[test]
fn no_message_and_flags_choose_the_mode() {
    let loaded = load_fixture("saltreach");
    assert_eq!(context(&loaded, None).mode, Mode::Full);
    let full = context_with(&loaded, Some("I wait."), ModeChoice::Full, None);
    assert_eq!(full.mode, Mode::Full);
    let light = context_with(&loaded, Some("continue"), ModeChoice::Light, None);
    assert_eq!(light.mode, Mode::Light);
}

// ---------------------------------------------------------------- mentions

#[rstest]
#[case::whole_words_only("A phoenix banner hangs over the door.", &[])]
#[case::whole_word_fires("Nix, over here!", &["npc:Nix"])]
#[case::common_word_lower_case("The grey fog rolls in off the water.", &[])]
#[case::common_word_capitalised("I pay Grey for passage.", &["npc:Grey"])]
#[case::longest_match_thread_over_name("Tell me about Merrin's Wager.", &["thread:Merrin's Wager"])]
#[case::longest_match_full_name("Lord Halden Sauvage waves.", &["npc:Lord Halden Sauvage"])]
#[case::possessive("I search Jory's stash.", &["npc:Jory Two-Knives"])]
#[case::curly_possessive("I search Jory’s stash.", &["npc:Jory Two-Knives"])]
#[case::full_name_possessive("Mother Ashka's ledger", &["npc:Mother Ashka"])]
#[case::first_name("Where is Halden tonight?", &["npc:Lord Halden Sauvage"])]
#[case::shared_surname_is_no_name("The Sauvage family is rich.", &[])]
#[case::any_case("i ask corwenna about the bell", &["npc:Abbess Corwenna"])]
#[case::alias_list("I tell the Iron Captain to back off.", &["npc:Captain Idris Marr"])]
#[case::alias_string("Quickhand deals me in.", &["npc:Pell Quickhand"])]
#[case::location_alias("Is the Exchange open?", &["location:The Copper Exchange"])]
#[case::wikilink_name("I mark [[Wren Ashdown]] as a suspect.", &["npc:Wren Ashdown"])]
#[case::wikilink_stem("I mark [[wren-ashdown]] as a suspect.", &["npc:Wren Ashdown"])]
#[case::wikilink_path_alias("I mark [[canon/npcs/wren-ashdown.md|her]].", &["npc:Wren Ashdown"])]
#[case::inventory_item("Orla checks the brass astrolabe.", &["pc:Orla Venn", "item:brass astrolabe"])]
#[case::order_of_appearance("Pell and Nix and Grey", &["npc:Pell Quickhand", "npc:Nix", "npc:Grey"])]
#[case::each_once("Nix? Nix! NIX!", &["npc:Nix"])]
fn mention_rules(#[case] message: &str, #[case] want: &[&str]) {
    let loaded = load_fixture("saltreach");
    assert_eq!(mentions(&loaded, message), want, "{message:?}");
}

#[rstest]
#[case::thread_note_stem("I read [[the-stolen-map]].", &["thread:The Stolen Map"])]
#[case::thread_note_path("[[notes/rumour.md|that rumour]]", &["thread:Rumour"])]
#[case::location_note_non_ascii("[[Café Noir]] opens late", &["location:Café Noir"])]
#[case::lore_alias("The Brine Order blesses us.", &["lore:The Salt Priests"])]
#[case::gm_session_note("[[session-1]]", &["session:Session One Prep"])]
#[case::heading_link("[[the-gilded-eel#Description]]", &["location:The Gilded Eel"])]
#[case::longest_location_over_thread("the salt vault chamber", &["location:The Salt Vault Chamber"])]
#[case::thread_title("the salt vault", &["thread:The Salt Vault"])]
fn mention_rules_variants(#[case] message: &str, #[case] want: &[&str]) {
    let loaded = load_fixture("variants");
    assert_eq!(mentions(&loaded, message), want, "{message:?}");
}

#[test]
fn a_first_name_two_npcs_share_is_not_a_mention() {
    let s = Scratch::of("saltreach");
    s.write(
        "canon/npcs/pell-marsh.md",
        "---\nname: Pell Marsh\nlocation: the-lower-docks\nvoice: Hums.\n---\n",
    );
    let loaded = s.load();
    assert_eq!(mentions(&loaded, "Pell deals."), Vec::<String>::new());
    assert_eq!(mentions(&loaded, "Pell Marsh deals."), ["npc:Pell Marsh"]);
    assert_eq!(
        mentions(&loaded, "Pell Quickhand deals."),
        ["npc:Pell Quickhand"]
    );
}

#[test]
fn a_mentioned_dead_npc_shows_as_dead() {
    let loaded = load_fixture("saltreach");
    let inj = context(&loaded, Some("Who killed Old Gannet?"));
    assert_eq!(inj.mode, Mode::Light);
    assert!(
        inj.text
            .contains("- NPC Old Gannet - pier fisherman [dead]"),
        "{}",
        inj.text
    );
    // In the full context he is not in the room, but the mention still gets a card.
    let full = context_with(
        &loaded,
        Some("Who killed Old Gannet?"),
        ModeChoice::Full,
        None,
    );
    assert!(!full.text.contains("Old Gannet [dead] -"), "{}", full.text);
    assert!(full
        .text
        .contains("### Mentioned\n- NPC Old Gannet - pier fisherman [dead]"));
    assert_eq!(
        item(&full, "npc", "Old Gannet").reason,
        "at The Gilded Eel but dead"
    );
    assert_eq!(
        item(&full, "card", "npc Old Gannet").reason,
        "mentioned as \"Old Gannet\""
    );
}

#[test]
fn two_npcs_sharing_an_alias_still_build_and_explain_says_so() {
    let s = Scratch::of("saltreach");
    s.edit(
        "canon/npcs/lisbet-fairweather.md",
        "role: singer",
        "role: singer\naliases: [the Songbird]",
    )
    .edit(
        "canon/npcs/wren-ashdown.md",
        "role: harbour clerk",
        "role: harbour clerk\naliases: [the Songbird]",
    );
    let loaded = s.load();
    let d = triples(&loaded.diagnostics());
    assert!(
        d.contains(&("canon/npcs/lisbet-fairweather.md".into(), 4, "shared-alias")),
        "{d:?}"
    );
    assert!(
        loaded
            .diagnostics()
            .iter()
            .any(|d| d.code == "shared-alias" && d.message.contains("canon/npcs/wren-ashdown.md")),
        "{d:?}"
    );
    let inj = context(&loaded, Some("I ask the Songbird for a tune."));
    assert_eq!(
        mentions(&loaded, "I ask the Songbird for a tune."),
        ["npc:Lisbet Fairweather", "npc:Wren Ashdown"]
    );
    let shared = "mentioned as \"the Songbird\" (alias, shared by several)";
    assert_eq!(
        item(&inj, "npc", "Lisbet Fairweather").reason,
        format!("present, {shared}")
    );
    assert_eq!(item(&inj, "card", "npc Wren Ashdown").reason, shared);
}

#[rstest]
#[case::npc("Captain Idris Marr", "- NPC Captain Idris Marr - captain of the harbour watch [active] | hostile | at The Lower Docks | voice: clipped military cadence, never uses contractions")]
#[case::location("the Cathedral of the Drowned", "- Place Cathedral of the Drowned: ")]
#[case::thread("the Forged Pass", "- Thread The Forged Pass [high]: Captain Marr has posted Orla's likeness at every dock gate. → Next: Get Jory Two-Knives to alter the pass seal.")]
#[case::item(
    "the forged harbour pass",
    "- Item forged harbour pass: carried by Orla Venn"
)]
#[case::pc(
    "Brother Tomas",
    "- PC Brother Tomas (Cleric 4) | HP 31/31 | at The Gilded Eel | carries: "
)]
fn mention_cards(#[case] named: &str, #[case] card: &str) {
    let loaded = load_fixture("saltreach");
    let inj = context(&loaded, Some(&format!("What about {named}?")));
    assert!(inj.text.contains("\nMentioned:\n"), "{}", inj.text);
    assert!(inj.text.contains(card), "{card}\n---\n{}", inj.text);
}

#[test]
fn location_card_has_the_first_sentences_and_who_is_there() {
    let loaded = load_fixture("saltreach");
    let inj = context(&loaded, Some("We head for the Cathedral."));
    let line = inj
        .text
        .lines()
        .find(|l| l.starts_with("- Place Cathedral of the Drowned"))
        .expect("card");
    assert_eq!(
        line,
        "- Place Cathedral of the Drowned: A half-sunk basilica where the tide rings the bells at midnight. Pilgrims wade to the altar at low water. | here: Abbess Corwenna"
    );
}

#[test]
fn light_context_is_one_line_plus_mentions_only_when_named() {
    let loaded = load_fixture("saltreach");
    let plain = context(&loaded, Some("I draw my dagger and watch the door."));
    assert_eq!(plain.text.lines().count(), 1, "{}", plain.text);
    assert_eq!(
        plain.text,
        "[Day 6 | dusk | Brother Tomas HP 31/31 | Orla Venn HP 17/27 (poisoned) | at The Gilded Eel | with Merrin Sauvage, Pell Quickhand, Mother Ashka, Lisbet Fairweather]\n"
    );
}

// ---------------------------------------------------------------- NPC cap

fn crowded_eel() -> Scratch {
    let s = Scratch::of("saltreach");
    for name in ["Hobb", "Ivo", "Jessa"] {
        s.write(
            &format!("canon/npcs/{}.md", name.to_lowercase()),
            &format!("---\nname: {name}\nrole: regular\ndisposition: neutral\nlocation: the-gilded-eel\nvoice: {name} talks.\n---\n"),
        );
    }
    s
}

#[test]
fn the_npc_cap_keeps_the_best_ranked() {
    let loaded = crowded_eel().load();
    let inj = context(&loaded, None);
    let npcs: Vec<_> = inj
        .items
        .iter()
        .filter(|i| i.kind == "npc" && i.reason.to_string().starts_with("present"))
        .map(|i| (i.name.as_str(), i.included))
        .collect();
    assert_eq!(
        npcs,
        [
            ("Merrin Sauvage", true),
            ("Pell Quickhand", true),
            ("Mother Ashka", true),
            ("Hobb", true),
            ("Ivo", true),
            ("Jessa", false),
            ("Lisbet Fairweather", false),
        ]
    );
    assert_eq!(
        item(&inj, "npc", "Jessa").reason,
        "present, but over the NPC cap (5)"
    );
    assert!(!inj.text.contains("Lisbet"));
}

#[test]
fn a_mentioned_npc_is_never_dropped_by_the_cap() {
    let loaded = crowded_eel().load();
    let inj = context_with(
        &loaded,
        Some("Lisbet, sing for us."),
        ModeChoice::Full,
        None,
    );
    let lisbet = item(&inj, "npc", "Lisbet Fairweather");
    assert!(lisbet.included);
    assert_eq!(
        lisbet.reason,
        "present, mentioned as \"Lisbet\" (a given name, surname or title no one else has)"
    );
    assert!(inj.text.contains("- Lisbet Fairweather [active] - singer"));
    assert!(item(&inj, "npc", "Ivo").included);
    assert!(
        !item(&inj, "npc", "Jessa").included,
        "the cap still holds for the rest"
    );
}

#[test]
fn the_cap_comes_from_the_vault_config() {
    let s = crowded_eel();
    s.write(
        "vaultdm.toml",
        "name = \"Saltreach\"\n[context]\nnpc_cap = 2\n",
    );
    let loaded = s.load();
    assert_eq!(options(&loaded).npc_cap, 2);
    let inj = context(&loaded, None);
    let shown = inj
        .items
        .iter()
        .filter(|i| i.kind == "npc" && i.included)
        .count();
    assert_eq!(shown, 2);
}

// ---------------------------------------------------------------- budget

/// The documented drop stages, in order.
const STAGES: [&str; 6] = [
    "low threads",
    "older events",
    "voices",
    "medium threads",
    "location description",
    "present NPCs",
];

/// For each stage: (candidates, dropped) in a budgeted context of saltreach.
fn stage_counts(loaded: &Loaded, inj: &Injected) -> [(usize, usize); 6] {
    let c = &loaded.built.campaign;
    let thread_p = |name: &str| {
        c.threads
            .iter()
            .find(|t| t.title == name)
            .map(|t| t.priority)
    };
    let budget = |i: &Item| {
        i.reason
            .to_string()
            .contains("dropped for the token budget")
    };
    let mut out = [(0, 0); 6];
    let day = format!("Day {}:", c.day.expect("day"));
    for i in &inj.items {
        let stage = match i.kind.as_str() {
            "thread" if thread_p(&i.name) == Some(Priority::Low) => Some((0, budget(i))),
            "event" if !i.name.starts_with(&day) && (i.included || budget(i)) => {
                Some((1, budget(i)))
            }
            "thread" if thread_p(&i.name) == Some(Priority::Medium) => Some((3, budget(i))),
            "location" => Some((4, i.reason.to_string().contains("description"))),
            _ => None,
        };
        if let Some((s, dropped)) = stage {
            out[s].0 += 1;
            out[s].1 += usize::from(dropped);
        }
        if i.kind == "npc"
            && (i.included || budget(i))
            && !i.reason.to_string().contains("mentioned")
        {
            if !i.reason.to_string().contains("no voice in the note") {
                out[2].0 += 1;
                out[2].1 +=
                    usize::from(i.reason.to_string().contains("voice dropped") || !i.included);
            }
            out[5].0 += 1;
            out[5].1 += usize::from(!i.included);
        }
    }
    out
}

#[test]
fn the_budget_drops_in_the_documented_order() {
    let loaded = load_fixture("saltreach");
    let unlimited = context(&loaded, None);
    let counts = stage_counts(&loaded, &unlimited);
    for (s, (n, dropped)) in counts.iter().enumerate() {
        assert!(*n > 0, "the fixture has nothing for stage {}", STAGES[s]);
        assert_eq!(*dropped, 0);
    }
    let mut seen_started = [false; 6];
    for budget in (120..=unlimited.tokens).rev().step_by(7) {
        let inj = context_with(&loaded, None, ModeChoice::Auto, Some(budget));
        let counts = stage_counts(&loaded, &inj);
        for (s, &(n, dropped)) in counts.iter().enumerate() {
            if dropped == 0 {
                continue;
            }
            seen_started[s] = true;
            for (earlier, &(en, edropped)) in counts[..s].iter().enumerate() {
                assert_eq!(
                    edropped, en,
                    "budget {budget}: {} started before {} was done\n{}",
                    STAGES[s], STAGES[earlier], inj.text
                );
            }
            assert!(dropped <= n);
        }
        // Never dropped: header, day, party.
        for kept in [
            "## SESSION CONTEXT: Saltreach",
            "Day 6 - dusk",
            "Orla Venn",
            "17/27",
            "Brother Tomas",
            "31/31",
        ] {
            assert!(
                inj.text.contains(kept),
                "budget {budget} dropped {kept:?}\n{}",
                inj.text
            );
        }
        assert!(
            close_to_exact(inj.tokens, &inj.text),
            "{} tokens reported",
            inj.tokens
        );
        let everything_gone = counts.iter().all(|&(n, d)| n == d);
        assert!(
            inj.tokens <= budget || everything_gone,
            "budget {budget}: {} tokens",
            inj.tokens
        );
    }
    assert_eq!(seen_started, [true; 6], "every stage was reached");
}

#[test]
fn budget_reasons_name_the_budget() {
    let loaded = load_fixture("saltreach");
    let inj = context_with(&loaded, None, ModeChoice::Auto, Some(450));
    let low = item(&inj, "thread", "The Astrolabe's Star");
    assert!(!low.included);
    assert_eq!(low.tokens, 0);
    assert_eq!(low.reason, "dropped for the token budget (450)");
    assert!(inj.tokens <= 450);
}

#[test]
fn a_tight_budget_keeps_mentions_and_shortens_them_before_dropping() {
    let loaded = load_fixture("saltreach");
    let msg = "I ask the Iron Captain about Orla's pass.";
    let roomy = context_with(&loaded, Some(msg), ModeChoice::Auto, None);
    // As the budget tightens the card goes full -> short -> a name on the "Also
    // mentioned" line -> counted there, never back; the party is always there.
    let mut seen = Vec::new();
    for budget in (20..=roomy.tokens).rev() {
        let inj = context_with(&loaded, Some(msg), ModeChoice::Auto, Some(budget));
        assert!(inj.text.contains("17/27") && inj.text.contains("31/31"));
        let card = item(&inj, "card", "npc Captain Idris Marr");
        assert!(card.included);
        let reason = card.reason.to_string();
        let stage = if reason.ends_with("shortened for the token budget") {
            1
        } else if reason.contains("only named under \"also mentioned\"") {
            assert!(
                inj.text.contains("Also mentioned: Captain Idris Marr"),
                "{}",
                inj.text
            );
            2
        } else if reason.contains("only counted") {
            assert!(inj.text.contains(" more"), "{}", inj.text);
            3
        } else {
            assert!(inj.text.contains("Captain Idris Marr"), "{}", inj.text);
            0
        };
        assert!(
            seen.last().is_none_or(|&s| s <= stage),
            "budget {budget}: {reason}"
        );
        if seen.last() != Some(&stage) {
            seen.push(stage);
        }
    }
    assert_eq!(seen, [0, 1, 2, 3]);
}

#[test]
fn a_mentioned_present_npc_survives_the_budget_in_full_context() {
    let loaded = load_fixture("saltreach");
    let inj = context_with(
        &loaded,
        Some("Lisbet, a song!"),
        ModeChoice::Full,
        Some(150),
    );
    let lisbet = item(&inj, "npc", "Lisbet Fairweather");
    assert!(lisbet.included, "{:#?}", inj.items);
    assert!(inj.text.contains("Lisbet Fairweather"));
    assert!(!item(&inj, "npc", "Mother Ashka").included);
}

// ---------------------------------------------------------------- templates

#[test]
fn an_override_template_changes_the_wording() {
    let s = Scratch::of("split-party");
    s.write(
        "vaultdm.toml",
        "name = \"Split Party\"\ntemplates = \"templates\"\n",
    )
    .write(
        "templates/light.j2",
        "Tag {{ day }}{% for pc in party %}, {{ pc.name }} (TP {{ pc.hp }}){% endfor %}\n",
    );
    let loaded = s.load();
    let inj = context(&loaded, Some("Ich schaue mich um."));
    assert_eq!(inj.text, "Tag 2, Rook (TP 14/16), Sable Vey (TP 6/15)\n");
    // Templates not overridden keep the built-in wording.
    assert!(context(&loaded, None)
        .text
        .starts_with("## SESSION CONTEXT: Split Party\n"));
}

#[rstest]
#[case::syntax_error(
    "full.j2",
    "## {{ campaign }}\n\n{% for x in party %}\n{{ x.name }\n{% endfor %}\n",
    4
)]
#[case::unclosed_block("full.j2", "## {{ campaign }}\n{% if day %}\nDay\n", 3)]
#[case::unknown_filter("light.j2", "[{{ day }}]\n{{ party | no_such_filter }}\n", 2)]
fn a_broken_override_is_an_error_with_its_line(
    #[case] name: &str,
    #[case] body: &str,
    #[case] line: usize,
) {
    let s = Scratch::of("split-party");
    s.write(&format!("templates/{name}"), body);
    let dir = s.root.join("templates");
    let err = match Templates::load(Some(&dir)) {
        Err(e) => e.to_string(),
        Ok(t) => {
            // Some problems only show when rendering: that must fail too, not fall back.
            let loaded = s.load();
            let engine = vaultdm::context::Engine::new(loaded.built.campaign.clone(), t);
            let opts = Options {
                message: Some("hello".into()),
                mode: if name == "full.j2" {
                    ModeChoice::Full
                } else {
                    ModeChoice::Light
                },
                ..options(&loaded)
            };
            match engine.build(&opts) {
                Err(ContextError::Template(e)) => e.to_string(),
                Err(other) => panic!("unexpected error {other}"),
                Ok(inj) => panic!("a broken template rendered:\n{}", inj.text),
            }
        }
    };
    let want = format!("{}:{line}: template error", dir.join(name).display());
    assert!(err.starts_with(&want), "{err}\nwant {want}");
}

// ---------------------------------------------------------------- focus and gaps

#[test]
fn pc_focus_puts_the_scene_where_that_pc_is() {
    let loaded = load_fixture("split-party");
    let opts = Options {
        pc: Some("sable".into()),
        ..options(&loaded)
    };
    let inj = engine(&loaded).build(&opts).expect("builds");
    assert!(inj.text.contains("### Location: The Sewers"));
    assert!(
        !inj.text.contains("### Location: The Bell Tower"),
        "{}",
        inj.text
    );
    assert!(inj.text.contains("The Rat King"));
    assert!(!inj.text.contains("Old Tobin"));
    let party: Vec<_> = inj
        .items
        .iter()
        .filter(|i| i.kind == "pc")
        .map(|i| (i.name.as_str(), i.source.as_str()))
        .collect();
    assert_eq!(
        party,
        [
            ("Sable Vey", "canon/pcs/sable.md:1"),
            ("Rook", "canon/pcs/rook.md:1")
        ],
        "the focus PC comes first, each with its own source"
    );
    let first_pc_line = inj
        .text
        .lines()
        .find(|l| l.starts_with("- "))
        .expect("party line");
    assert!(first_pc_line.starts_with("- Sable Vey"), "{first_pc_line}");
}

#[rstest]
#[case::full_name("Sable Vey", Some("Sable Vey"))]
#[case::any_case("sable vey", Some("Sable Vey"))]
#[case::first_name("Sable", Some("Sable Vey"))]
#[case::file_stem("rook", Some("Rook"))]
#[case::a_letter_is_no_name("e", None)]
#[case::a_fragment_is_no_name("ook", None)]
fn pc_focus_by_name(#[case] asked: &str, #[case] found: Option<&str>) {
    let loaded = load_fixture("split-party");
    let opts = Options {
        pc: Some(asked.into()),
        ..options(&loaded)
    };
    match (engine(&loaded).build(&opts), found) {
        (Ok(inj), Some(name)) => {
            let first = inj.items.iter().find(|i| i.kind == "pc").expect("pc");
            assert_eq!(first.name, name);
        }
        (Err(ContextError::UnknownPc { .. }), None) => {}
        (other, _) => panic!("{asked:?}: {other:?}"),
    }
}

#[test]
fn focus_on_an_inactive_pc_is_explained() {
    let s = Scratch::of("split-party");
    s.edit(
        "canon/pcs/rook.md",
        "level: 2",
        "level: 2\nstatus: inactive",
    );
    let loaded = s.load();
    let opts = Options {
        pc: Some("Rook".into()),
        ..options(&loaded)
    };
    let inj = engine(&loaded).build(&opts).expect("builds");
    let rook = item(&inj, "pc", "Rook");
    assert!(rook.included);
    assert_eq!(rook.source, "canon/pcs/rook.md:1");
    assert_eq!(
        rook.reason,
        "the focus PC (--pc), though not in the active party"
    );
}

#[test]
fn an_unknown_pc_is_an_error_naming_the_pcs() {
    let loaded = load_fixture("split-party");
    let opts = Options {
        pc: Some("Nobody".into()),
        ..options(&loaded)
    };
    match engine(&loaded).build(&opts) {
        Err(e @ ContextError::UnknownPc { .. }) => {
            assert_eq!(
                e.to_string(),
                "no PC named \"Nobody\"; the PCs are: Rook, Sable Vey"
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_split_party_shows_each_location_and_who_is_where() {
    let loaded = load_fixture("split-party");
    let full = context(&loaded, None);
    assert!(full.text.contains("### Location: The Bell Tower (Lowtown)"));
    assert!(full.text.contains("### Location: The Sewers (Lowtown)"));
    assert!(full
        .text
        .contains("- Old Tobin [active] - bellringer | at The Bell Tower"));
    assert!(full
        .text
        .contains("- The Rat King [active] - sewer boss | at The Sewers"));
    assert!(
        !full.text.contains("Marta Vell"),
        "in the district, not in either scene"
    );
    let light = context(&loaded, Some("We wait."));
    assert_eq!(
        light.text,
        "[Day 2 | midnight | Rook HP 14/16 at The Bell Tower | Sable Vey HP 6/15 (frightened) at The Sewers | with Old Tobin at The Bell Tower; The Rat King at The Sewers]\n"
    );
}

#[test]
fn a_pc_with_no_location_still_builds_and_explain_says_so() {
    let s = Scratch::of("split-party");
    s.edit("canon/pcs/rook.md", "location: bell-tower\n", "");
    let loaded = s.load();
    assert!(triples(&loaded.diagnostics()).contains(&(
        "canon/pcs/rook.md".into(),
        1,
        "no-location"
    )));
    let inj = context(&loaded, None);
    assert!(
        inj.text.contains("- Rook (Monk 2) | HP 14/16 | 3 gp\n"),
        "{}",
        inj.text
    );
    assert!(inj.text.contains("### Location: The Sewers"));
    assert_eq!(
        item(&inj, "location", "(none)").reason,
        "Rook has no location"
    );
    let light = context(&loaded, Some("hm"));
    assert!(
        light
            .text
            .starts_with("[Day 2 | midnight | Rook HP 14/16 | Sable Vey"),
        "{}",
        light.text
    );
}

#[test]
fn a_location_no_note_matches_still_builds_and_explain_says_so() {
    let s = Scratch::of("split-party");
    s.edit(
        "canon/pcs/rook.md",
        "location: bell-tower",
        "location: The Moon",
    );
    let loaded = s.load();
    let inj = context(&loaded, None);
    assert!(
        inj.text
            .contains("- Rook (Monk 2) | HP 14/16 | at The Moon | 3 gp"),
        "{}",
        inj.text
    );
    assert_eq!(
        item(&inj, "location", "The Moon").reason,
        "Rook's location \"The Moon\" matches no location note"
    );
}

#[test]
fn an_npc_with_no_voice_is_explained() {
    let loaded = load_fixture("variants");
    let inj = context(&loaded, None);
    assert!(inj.text.contains("- Mother Ashka [active]"));
    let s = Scratch::of("variants");
    s.edit(
        "canon/npcs/mother-ashka.md",
        "voice: Speaks only in gambling metaphors.\n",
        "",
    )
    .edit("canon/npcs/mother-ashka.md", "## Personality", "## Other");
    let inj = context(&s.load(), None);
    let ashka = item(&inj, "npc", "Mother Ashka");
    assert!(ashka.included);
    assert!(
        ashka.reason.to_string().ends_with("; no voice in the note"),
        "{}",
        ashka.reason
    );
    assert!(
        inj.text
            .contains("- Mother Ashka [active] - fence and moneylender | wary ally\n"),
        "{}",
        inj.text
    );
}

#[test]
fn an_empty_threads_file_still_builds_and_explain_says_so() {
    let s = Scratch::of("split-party");
    s.write("canon/open-threads.md", "");
    let loaded = s.load();
    let codes: Vec<_> = loaded.diagnostics().iter().map(|d| d.code).collect();
    assert!(
        codes.contains(&vaultdm::vault::Code::NoThreads),
        "{codes:?}"
    );
    let inj = context(&loaded, None);
    assert!(!inj.text.contains("storylines"));
    assert_eq!(
        item(&inj, "thread", "(none)").reason,
        "no open threads in canon/open-threads.md or thread notes"
    );
}

#[test]
fn a_timeline_with_no_current_day_still_builds_and_explain_says_so() {
    let s = Scratch::of("split-party");
    s.write(
        "canon/temporal-index.json",
        r#"{"current_day": 5, "current_time": "dawn"}"#,
    );
    let loaded = s.load();
    assert!(triples(&loaded.diagnostics()).contains(&(
        "canon/timeline.md".into(),
        0,
        "no-current-day"
    )));
    let inj = context(&loaded, None);
    assert!(inj.text.contains("Day 5 - dawn"));
    assert!(inj
        .text
        .contains("- Day 2: Sable went down into the sewers."));
    assert!(item(&inj, "event", "(nothing on Day 5)")
        .reason
        .to_string()
        .starts_with("the timeline has no events for the current day"));

    // A timeline without a single day heading.
    s.write("canon/timeline.md", "# Timeline\n\nNothing yet.\n");
    let loaded = s.load();
    let inj = context(&loaded, None);
    assert!(!inj.text.contains("Recent events"));
    assert_eq!(
        item(&inj, "event", "(nothing on Day 5)").reason,
        "the timeline has no events up to the current day"
    );
}

#[test]
fn recent_events_are_the_last_of_the_current_day_topped_up() {
    let loaded = load_fixture("saltreach");
    let inj = context(&loaded, None);
    let events: Vec<_> = inj
        .text
        .lines()
        .filter(|l| l.starts_with("- Day "))
        .collect();
    assert_eq!(
        events,
        [
            "- Day 5: Sister Velka vanished after evening prayers.",
            "- Day 5: Orla was poisoned by a dart in the Undercroft.",
            "- Day 6: Merrin Sauvage wagered her inheritance against Pell Quickhand.",
            "- Day 6: The cathedral bell rang at noon.",
            "- Day 6: Kesh left the party to guard the ship.",
        ]
    );
}

#[test]
fn a_vault_with_no_canon_builds_an_honest_context() {
    let loaded = load_fixture("no-canon");
    let full = context(&loaded, None);
    assert_eq!(full.text, "## SESSION CONTEXT: No Canon\n");
    assert!(!item(&full, "time", "(no day)").included);
    let light = context(&loaded, Some("hello"));
    assert_eq!(light.text, "", "nothing to say is said with nothing");
}

#[test]
fn json_shape_of_the_injected_context() {
    let loaded = load_fixture("saltreach");
    let inj = context(&loaded, Some("Quickhand deals me in."));
    let v = serde_json::to_value(&inj).expect("json");
    assert_eq!(v["mode"], "light");
    assert_eq!(v["text"], inj.text.as_str());
    assert_eq!(v["tokens"], inj.tokens);
    let first = &v["items"][0];
    for key in ["kind", "name", "source", "tokens", "included", "reason"] {
        assert!(first.get(key).is_some(), "items lack {key}: {first}");
    }
    let card = v["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|i| i["kind"] == "npc" && i["name"] == "Pell Quickhand")
        .expect("Pell");
    assert_eq!(card["source"], "canon/npcs/pell-quickhand.md:1");
    assert_eq!(card["included"], true);
}

// ---------------------------------------------------------------- never panics

mod robustness {
    use crate::support::Scratch;
    use proptest::prelude::*;
    use vaultdm::context::{Engine, ModeChoice, Options, Templates};

    fn piece() -> impl Strategy<Value = &'static str> {
        prop_oneof![
            Just("---\n"),
            Just("name: Ada\n"),
            Just("name: Grey\n"),
            Just("aliases: [Ada, the Eel]\n"),
            Just("location: the-eel\n"),
            Just("location: [[Ada]]\n"),
            Just("hp: ten\n"),
            Just("hp: 3\n"),
            Just("status: dead\n"),
            Just("voice: Hm.\n"),
            Just("parent: the-eel\n"),
            Just("priority: low\n"),
            Just("# The Eel\n"),
            Just("## Urgent\n"),
            Just("## Day 2\n"),
            Just("### T\n"),
            Just("- **B** — c\n"),
            Just("→ Next: go\n"),
            Just("- event\n"),
            Just("## Personality\n"),
            Just("[[Ada]] "),
            Just("%%"),
            Just("```\n"),
            Just("text. More text. "),
            Just("\r\n"),
            Just("é"),
            Just("#npc "),
            Just("\u{0}"),
        ]
    }

    fn note() -> impl Strategy<Value = String> {
        proptest::collection::vec(piece(), 0..14).prop_map(|v| v.concat())
    }

    const PATHS: [&str; 8] = [
        "canon/pcs/ada.md",
        "canon/npcs/grey.md",
        "canon/npcs/ada.md",
        "canon/locations/the-eel.md",
        "canon/open-threads.md",
        "canon/timeline.md",
        "people/x.md",
        "notes/Ada.md",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Any vault made of note-shaped junk loads, checks and builds contexts of every
        /// kind without panicking, and a budget is respected or everything droppable goes.
        #[test]
        fn random_vaults_never_panic(
            notes in proptest::collection::vec(note(), PATHS.len()),
            temporal in prop_oneof![Just(""), Just("{\"current_day\": 2}"), Just("{"), Just("[]")],
            message in prop_oneof![
                Just(None),
                Just(Some("continue".to_string())),
                Just(Some("Ada's Eel? [[grey]]".to_string())),
                "\\PC{0,30}".prop_map(Some),
            ],
            budget in prop_oneof![Just(None), (1usize..400).prop_map(Some)],
            npc_cap in 0usize..3,
        ) {
            let s = Scratch::empty("junk");
            for (path, text) in PATHS.iter().zip(&notes) {
                s.write(path, text);
            }
            s.write("canon/temporal-index.json", temporal);
            let loaded = s.load();
            let _ = loaded.diagnostics();
            let engine = Engine::new(loaded.built.campaign.clone(), Templates::load(None).expect("built-in"));
            for mode in [ModeChoice::Auto, ModeChoice::Full, ModeChoice::Light] {
                let opts = Options { message: message.clone(), mode, budget, npc_cap, ..Options::default() };
                let inj = engine.build(&opts).expect("builds");
                prop_assert!(super::close_to_exact(inj.tokens, &inj.text), "{} tokens reported", inj.tokens);
            }
        }
    }
}

// ---------------------------------------------------------------- as players type

#[rstest]
#[case::lower_case_given_name("i talk to ezra", &["npc:Ezra Coil"])]
#[case::lower_case_possessive("i check odessa's ledger", &["npc:Odessa Flint"])]
#[case::head_noun_title("we ask the doctor", &["npc:Doctor Amos Fitch"])]
#[case::head_noun_kind("back to the saloon", &["location:The Brass Canary"])]
#[case::head_noun_name("we reach the office", &["location:The Assay Office"])]
#[case::common_word_still_needs_a_capital("the grey fog", &[])]
fn mentions_as_players_type(#[case] message: &str, #[case] want: &[&str]) {
    let loaded =
        support::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("vault-template"));
    assert_eq!(mentions(&loaded, message), want, "{message:?}");
}

#[test]
fn a_head_noun_two_entities_share_is_no_mention() {
    let s = Scratch::of("saltreach");
    s.write(
        "canon/locations/chapel-of-the-lamp.md",
        "---\nname: Chapel of the Lamp\n---\nA small chapel.\n",
    );
    assert_eq!(
        mentions(&s.load(), "we pray in the chapel"),
        ["location:Chapel of the Lamp"]
    );
    s.write(
        "canon/locations/harbour-chapel.md",
        "---\nname: Harbour Chapel\n---\nAnother chapel.\n",
    );
    assert!(mentions(&s.load(), "we pray in the chapel").is_empty());
}

#[test]
fn a_name_typed_decomposed_is_the_same_name() {
    let s = Scratch::of("saltreach");
    s.write(
        "canon/npcs/zoe-marr.md",
        "---\nname: Zoë Marr\nlocation: the-gilded-eel\n---\n",
    );
    // `e` followed by a combining diaeresis, as some keyboards type it.
    assert_eq!(
        mentions(&s.load(), "I wave to Zoe\u{0308} Marr."),
        ["npc:Zoë Marr"]
    );
}

/// The bundled campaign, loaded from the repository.
fn coldharrow() -> Loaded {
    support::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("vault-template"))
}

/// Under every budget, a secret about an NPC is in the DM-only part only while that NPC is
/// in the context: the budget drops a present NPC with what the DM knew of them.
#[test]
fn an_npcs_secrets_never_outlive_their_row_under_the_budget() {
    let loaded = coldharrow();
    let unlimited = context(&loaded, None);
    assert!(
        unlimited
            .gm_only
            .iter()
            .any(|g| g.about == "NPC Jonah Sallow"),
        "{}",
        unlimited.text
    );
    let mut dropped_some = false;
    for budget in (300..=unlimited.tokens).rev().step_by(23) {
        let inj = context_with(&loaded, None, ModeChoice::Auto, Some(budget));
        let (public, dm) = inj
            .text
            .split_once("### For the DM only")
            .unwrap_or((inj.text.as_str(), ""));
        for g in &inj.gm_only {
            let Some(name) = g.about.strip_prefix("NPC ") else {
                continue;
            };
            assert!(
                public.contains(name),
                "budget {budget}: a secret of {name} without {name}:\n{}",
                inj.text
            );
            assert!(dm.contains(&g.text), "{}", inj.text);
        }
        dropped_some |= !inj.text.contains("### NPCs present");
    }
    assert!(dropped_some, "some budget dropped the NPCs present");
}

/// What the GM plans for an NPC (a timeline entry after today that names them) comes with
/// them in any context, for the DM only; the rest of the plan does not come with a light one.
#[test]
fn an_npcs_future_travels_with_them_for_the_dm_only() {
    let loaded = coldharrow();
    let message = "I go up Company Hill to confront Vane in his office.";
    let inj = context_with(&loaded, Some(message), ModeChoice::Light, None);
    let plan: Vec<&GmOnly> = inj
        .gm_only
        .iter()
        .filter(|g| g.about == "The GM's plan for Superintendent Cornelius Vane")
        .collect();
    assert_eq!(plan.len(), 1, "{}", inj.text);
    assert!(plan[0].text.starts_with("Day 7: The buyer from back east"));
    assert!(
        !inj.text.contains("At dawn the Company blasts"),
        "{}",
        inj.text
    );
    let opts = Options {
        message: Some(message.into()),
        mode: ModeChoice::Light,
        player: true,
        ..options(&loaded)
    };
    let player = engine(&loaded).build(&opts).expect("builds");
    assert!(!player.text.contains("Ashgrove"), "{}", player.text);
    assert!(player.gm_only.is_empty());
    // In a full context the entry is the campaign's plan, said once.
    let full = context(&loaded, Some(message));
    assert_eq!(
        full.text.matches("Mr. Ashgrove").count(),
        1,
        "{}",
        full.text
    );
}

/// A note the GM keeps whole reaches the DM as written (not cut to a card), and its name
/// takes no words from a public name inside it: the players still get that card.
#[test]
fn a_gm_only_note_is_said_whole_and_hides_no_public_name() {
    let loaded = coldharrow();
    let message = "Oriel asks the mountain: what is the truth of the hum?";
    let inj = context(&loaded, Some(message));
    let said: Vec<&str> = inj
        .gm_only
        .iter()
        .filter(|g| g.about == "Note The truth of the hum")
        .map(|g| g.text.as_str())
        .collect();
    assert!(
        said.iter()
            .any(|t| t.contains("the hum changing key means the stone has noticed the town")),
        "{said:?}"
    );
    assert!(inj.text.contains("- The Hum: A low note"), "{}", inj.text);
    let opts = Options {
        message: Some(message.into()),
        player: true,
        ..options(&loaded)
    };
    let player = engine(&loaded).build(&opts).expect("builds");
    assert!(
        player.text.contains("- The Hum: A low note"),
        "{}",
        player.text
    );
    assert!(!player.text.contains("singing stone"), "{}", player.text);
    assert!(
        !player.text.to_lowercase().contains("truth of the hum"),
        "{}",
        player.text
    );
}
