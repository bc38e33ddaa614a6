//! The leak guard (`src/play/leak.rs`) measured on the bundled campaign, Coldharrow.
//!
//! Fixtures in `tests/fixtures/leak/` (see its README): 26 GM secrets written for the
//! campaign in the ways GMs write them, the campaign's public canon (what `vaultdm context`
//! injects, then every note with its GM-only parts taken out), 200 ordinary exchanges of a
//! generated session, and 30 replies of a DM that gives secrets away: 25 recite or name
//! one (all must be flagged), 5 only paraphrase one (the guard's documented limit).

use crate::support::fixture;
use serde::Deserialize;
use vaultdm::play::leak::{Guard, Leak, LeakKind, PublicText, SecretText, RUN_WORDS};

#[derive(Deserialize)]
struct Secret {
    source: String,
    entity: Option<String>,
    text: String,
}

#[derive(Deserialize)]
struct Exchange {
    turn: usize,
    player: String,
    dm: String,
}

#[derive(Deserialize)]
struct Leaky {
    kind: String,
    source: String,
    reply: String,
}

fn read(name: &str) -> String {
    let path = fixture("leak").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn secrets() -> Vec<SecretText> {
    let raw: Vec<Secret> = serde_json::from_str(&read("coldharrow-secrets.json")).expect("json");
    raw.iter()
        .map(|s| SecretText::new(&s.text, &s.source, s.entity.as_deref()))
        .collect()
}

/// The whole public canon, or only the context `vaultdm context` injects (the file's first
/// part, before the notes).
fn public(context_only: bool) -> String {
    let all = read("coldharrow-public.md");
    if context_only {
        all.split("\n<!-- ").next().unwrap_or_default().to_string()
    } else {
        all
    }
}

fn ordinary() -> Vec<Exchange> {
    read("coldharrow-200.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).expect("jsonl"))
        .collect()
}

fn leaky() -> Vec<Leaky> {
    serde_json::from_str(&read("coldharrow-leaky.json")).expect("json")
}

fn describe(leaks: &[Leak]) -> String {
    leaks
        .iter()
        .map(|l| format!("  {} [{:?}] {:?}", l.source, l.kind, l.excerpt))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The ordinary replies the guard flags, printed with what matched.
fn false_alarms(guard: &Guard) -> Vec<usize> {
    let mut turns = Vec::new();
    for e in ordinary() {
        let leaks = guard.check(&e.dm, &e.player);
        if !leaks.is_empty() {
            eprintln!(
                "false alarm, turn {}: {}\n{}",
                e.turn,
                e.dm,
                describe(&leaks)
            );
            turns.push(e.turn);
        }
    }
    turns
}

fn kind_name(k: &LeakKind) -> &'static str {
    match k {
        LeakKind::Verbatim { .. } => "verbatim",
        LeakKind::Distinctive { .. } => "distinctive",
        LeakKind::Marked { .. } => "marked",
    }
}

/// Whether the guard flags a leaking reply as its fixture says (its secret, its kind).
fn caught(guard: &Guard, l: &Leaky) -> bool {
    guard
        .check(&l.reply, "")
        .iter()
        .any(|x| x.source == l.source && kind_name(&x.kind) == l.kind)
}

#[test]
fn the_fixtures_are_what_the_docs_say() {
    assert_eq!(secrets().len(), 26);
    assert_eq!(ordinary().len(), 200);
    let l = leaky();
    assert_eq!(l.iter().filter(|x| x.kind != "paraphrase").count(), 25);
    assert_eq!(l.len(), 30);
    // The public text holds none of the GM-only text.
    let public = public(false);
    assert!(!public.contains("[!secret]") && !public.contains("%%"));
    assert!(!public.contains("living seam"));
}

#[test]
fn ordinary_replies_raise_no_false_alarm() {
    let guard = Guard::new(&secrets(), &public(false));
    let alarms = false_alarms(&guard);
    eprintln!("false alarms: {} of 200", alarms.len());
    assert_eq!(alarms, Vec::<usize>::new());
}

#[test]
fn every_recitation_and_name_is_flagged() {
    let guard = Guard::new(&secrets(), &public(false));
    let mut missed = Vec::new();
    let all: Vec<Leaky> = leaky()
        .into_iter()
        .filter(|l| l.kind != "paraphrase")
        .collect();
    for l in &all {
        if !caught(&guard, l) {
            let got = guard.check(&l.reply, "");
            eprintln!(
                "missed ({} in {}): {}\n{}",
                l.kind,
                l.source,
                l.reply,
                describe(&got)
            );
            missed.push(l.reply.clone());
        }
    }
    eprintln!("recall: {} of {}", all.len() - missed.len(), all.len());
    assert!(missed.is_empty(), "{missed:#?}");
}

/// The limit: a paraphrase with neither a run nor a distinctive name goes through. They
/// share most of their content words with a secret, so this also shows that a secret's
/// ordinary words never flag.
#[test]
fn a_bare_paraphrase_is_not_caught() {
    let guard = Guard::new(&secrets(), &public(false));
    for l in leaky().iter().filter(|l| l.kind == "paraphrase") {
        let got = guard.check(&l.reply, "");
        assert!(got.is_empty(), "{}\n{}", l.reply, describe(&got));
    }
}

/// The measurement behind `RUN_WORDS` (the table in the module docs): false alarms on the
/// 200 ordinary replies and recitations caught, for each run length.
#[test]
fn the_run_length_is_measured() {
    let (secrets, public) = (secrets(), public(false));
    let recited: Vec<Leaky> = leaky()
        .into_iter()
        .filter(|l| l.kind == "verbatim")
        .collect();
    let mut table = Vec::new();
    for n in 3..=9 {
        let guard = Guard::with_public(&secrets, &PublicText::with_run_words(&public, n));
        let (mut alarms, mut runs) = (0, std::collections::BTreeSet::new());
        for e in ordinary() {
            let leaks = guard.check(&e.dm, &e.player);
            let verbatim: Vec<&Leak> = leaks
                .iter()
                .filter(|l| matches!(l.kind, LeakKind::Verbatim { .. }))
                .collect();
            alarms += usize::from(!verbatim.is_empty());
            runs.extend(verbatim.iter().map(|l| l.excerpt.clone()));
        }
        let caught = recited.iter().filter(|l| caught(&guard, l)).count();
        eprintln!(
            "{n} words: {alarms} false alarms of 200 (runs: {runs:?}), {caught} of {} recitations",
            recited.len()
        );
        table.push((n, alarms, caught));
    }
    let guard = Guard::new(&secrets, &public);
    let lengths: Vec<usize> = recited
        .iter()
        .filter_map(|l| {
            let leaks = guard.check(&l.reply, "");
            leaks
                .iter()
                .filter(|x| x.source == l.source)
                .filter_map(|x| match x.kind {
                    LeakKind::Verbatim { words } => Some(words),
                    _ => None,
                })
                .max()
        })
        .collect();
    eprintln!("the recitations' runs, in words: {lengths:?}");
    let at = |n: usize| table.iter().find(|t| t.0 == n).copied().unwrap_or_default();
    assert_eq!(at(RUN_WORDS), (RUN_WORDS, 0, recited.len()));
}

/// Why the public text must be the whole public canon, not the context of one message:
/// with only what `vaultdm context` injects, names the canon knows but this context left
/// out (Father Lusk and the Sump are not in the scene) look distinctive, and 21 of the 200
/// ordinary replies raise an alarm. (The module docs quote this number.)
#[test]
fn the_context_alone_is_not_enough_public_text() {
    let guard = Guard::new(&secrets(), &public(true));
    let alarms = false_alarms(&guard);
    eprintln!(
        "false alarms with the context alone: {} of 200",
        alarms.len()
    );
    assert_eq!(
        alarms.len(),
        21,
        "update the module docs of src/play/leak.rs"
    );
}

/// The terms the guard watches for on this campaign, printed for the record; the
/// campaign's public names are not among them.
#[test]
fn the_watched_terms() {
    let guard = Guard::new(&secrets(), &public(false));
    let terms = guard.terms();
    for (source, term) in &terms {
        eprintln!("{source}: {term}");
    }
    let names: Vec<&str> = terms.iter().map(|t| t.1).collect();
    for public in [
        "Vane",
        "Lusk",
        "Sump",
        "Father Lusk",
        "Granny Reed",
        "Lottie",
    ] {
        assert!(!names.contains(&public), "{public} is public: {names:?}");
    }
    for secret in [
        "Corwin",
        "Pinkerton",
        "Silas Marrow",
        "Gilford Junction",
        "Halloran",
    ] {
        assert!(names.contains(&secret), "{secret} is watched: {names:?}");
    }
}

/// The path a turn takes (`Table` after each reply): the bundled campaign's own DM-only part
/// (its full context's secrets) against the campaign's public canon (`public_canon`), over
/// the 200 ordinary replies: no false alarm.
#[test]
fn the_bundled_campaigns_own_secrets_raise_no_alarm_on_ordinary_replies() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("vault-template");
    let loaded = vaultdm::canon::Loaded::load(&root).expect("load");
    let engine = vaultdm::context::Engine::for_vault(&root, &loaded).expect("templates");
    let injected = engine
        .build(&vaultdm::context::Options::default())
        .expect("context");
    assert!(injected.gm_only.len() >= 5, "{:#?}", injected.gm_only);
    let secrets: Vec<SecretText> = injected
        .gm_only
        .iter()
        .map(|g| SecretText::new(&g.text, &g.source, Some(&g.about)))
        .collect();
    let public = PublicText::new(&vaultdm::play::leak::public_canon(engine.campaign()));
    let guard = Guard::with_public(&secrets, &public);
    let alarms: Vec<(usize, Vec<Leak>)> = ordinary()
        .into_iter()
        .enumerate()
        .map(|(i, e)| (i, guard.check(&e.dm, &e.player)))
        .filter(|(_, l)| !l.is_empty())
        .collect();
    assert!(alarms.is_empty(), "false alarms: {alarms:#?}");
}
