//! One rule for names (`src/names.rs`): a name typed precomposed (`é`, U+00E9), decomposed
//! (`e` + U+0301, as some keyboards and macOS file names produce) or in capitals is the same
//! name for a frontmatter reference, a `[[link]]` in a note, a `[[link]]` in a message and a
//! plain mention in a message.

use crate::support::Scratch;
use rstest::rstest;
use vaultdm::canon::Loaded;
use vaultdm::context::{Engine, Target};
use vaultdm::vault::Resolution;

const PRE: &str = "Caf\u{e9}";
const DECOMPOSED: &str = "Cafe\u{301}";

/// A vault with an NPC named precomposed and a place whose file and name are decomposed.
fn vault() -> Scratch {
    let s = Scratch::of("saltreach");
    s.write(
        &format!("canon/npcs/{PRE} Ostrander.md"),
        &format!("---\nname: {PRE} Ostrander\nlocation: \"[[{DECOMPOSED} Noir]]\"\n---\nRuns the night market.\n"),
    );
    s.write(
        &format!("canon/locations/{DECOMPOSED} Noir.md"),
        &format!("---\nname: {DECOMPOSED} Noir\n---\nA cellar bar.\n"),
    );
    s
}

fn mentioned(loaded: &Loaded, message: &str) -> Vec<String> {
    let engine = Engine::for_vault(&loaded.vault.root, loaded).expect("engine");
    let c = engine.campaign();
    engine
        .matcher()
        .find(message)
        .into_iter()
        .map(|m| match m.target {
            Target::Npc(i) => format!("npc:{}", c.npcs[i as usize].id),
            Target::Location(i) => format!("location:{}", c.locations[i as usize].id),
            other => format!("{other:?}"),
        })
        .collect()
}

#[rstest]
#[case::precomposed_message("I greet Caf\u{e9} Ostrander.", "npc")]
#[case::decomposed_message("I greet Cafe\u{301} Ostrander.", "npc")]
#[case::capitals_decomposed("CAFE\u{301} OSTRANDER waves", "npc")]
#[case::link_precomposed("I greet [[Caf\u{e9} Ostrander]]", "npc")]
#[case::link_decomposed("I greet [[Cafe\u{301} Ostrander]]", "npc")]
#[case::place_precomposed("we meet at the Caf\u{e9} Noir", "location")]
#[case::place_decomposed("we meet at the Cafe\u{301} Noir", "location")]
#[case::place_link_precomposed("we meet at [[Caf\u{e9} Noir]]", "location")]
#[case::place_link_decomposed("we meet at [[Cafe\u{301} Noir]]", "location")]
fn mentions_and_links_agree_however_the_name_is_typed(#[case] message: &str, #[case] kind: &str) {
    let s = vault();
    let loaded = s.load();
    let c = &loaded.built.campaign;
    let npc = c
        .npcs
        .iter()
        .find(|n| n.name.ends_with("Ostrander"))
        .expect("the NPC");
    // The note's own reference, written decomposed, resolved to the place.
    let place = npc.location.clone().expect("the NPC's location resolved");
    let want = match kind {
        "npc" => format!("npc:{}", npc.id),
        _ => format!("location:{place}"),
    };
    assert_eq!(
        mentioned(&loaded, message),
        std::slice::from_ref(&want),
        "{message:?}"
    );
    // And a link in a note resolves to the same note as the mention in a message.
    if let Some(inner) = message.split("[[").nth(1) {
        let target = inner.trim_end_matches("]]");
        let Resolution::Found(i) = loaded.vault.resolve(target) else {
            panic!("{target:?} does not resolve in the vault");
        };
        assert_eq!(
            want.split_once(':').map(|x| x.1),
            Some(loaded.vault.notes[i].path.as_str())
        );
    }
}
