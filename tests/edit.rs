//! Write-back edits on the bundled campaign: each edit changes what canon reads and nothing
//! else, and edits undone give back the GM's exact bytes.

mod common;

use common::{load, template_copy};
use std::path::Path;
use vaultdm::canon::Priority;
use vaultdm::vault::edit::{self, Scalar};

fn read(root: &Path, rel: &str) -> String {
    std::fs::read_to_string(root.join(rel)).expect("read")
}

fn write(root: &Path, rel: &str, text: &str) {
    std::fs::write(root.join(rel), text).expect("write");
}

/// Every Markdown file of the template with a frontmatter block.
fn notes_with_frontmatter(root: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("read_dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                let text = std::fs::read_to_string(&p).expect("read");
                if text.starts_with("---") {
                    let rel = p.strip_prefix(root).expect("rel");
                    out.push((rel.to_string_lossy().replace('\\', "/"), text));
                }
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_template_note_round_trips_in_every_encoding() {
    let dir = template_copy();
    let notes = notes_with_frontmatter(dir.path());
    assert!(notes.len() > 10, "the template has notes");
    let (mut lists, mut numbers) = (0, 0);
    for (rel, base) in notes {
        for crlf in [false, true] {
            for bom in [false, true] {
                let mut text = if crlf {
                    base.replace('\n', "\r\n")
                } else {
                    base.clone()
                };
                if bom {
                    text.insert(0, '\u{feff}');
                }
                // A list item added then removed, whatever list style the note uses.
                for keys in [
                    &["tags"][..],
                    &["aliases", "alias"],
                    &["inventory", "items"],
                ] {
                    let Ok(added) = edit::list_add(&text, keys, "Zz New Item") else {
                        continue;
                    };
                    let back = edit::list_remove(&added, keys, "zz new item").expect("remove");
                    if edit::get_scalar(&text, keys).is_some() {
                        assert_eq!(back, text, "{rel} {keys:?}");
                        lists += 1;
                    }
                }
                // Every number set to another and back.
                let keys: Vec<String> = base
                    .lines()
                    .skip(1)
                    .take_while(|l| *l != "---")
                    .filter_map(|l| l.split_once(": ").map(|(k, _)| k.to_string()))
                    .filter(|k| !k.starts_with([' ', '-']))
                    .collect();
                for k in keys {
                    let Some((_, v)) = edit::get_scalar(&text, &[&k]) else {
                        continue;
                    };
                    if let Ok(n) = v.parse::<i64>() {
                        let changed =
                            edit::set_scalar(&text, &[&k], &Scalar::Int(n + 1)).expect("set");
                        assert_ne!(changed, text);
                        let back =
                            edit::set_scalar(&changed, &[&k], &Scalar::Int(n)).expect("set back");
                        assert_eq!(back, text, "{rel} {k}");
                        numbers += 1;
                    }
                }
            }
        }
    }
    println!("{lists} list and {numbers} number round trips");
    assert!(
        lists > 20 && numbers > 20,
        "{lists} lists, {numbers} numbers"
    );
}

#[test]
fn canon_reads_what_the_edits_wrote() {
    let dir = template_copy();
    let root = dir.path();
    let before = load(root);
    let diags_before = before.diagnostics().len();

    let pc = "canon/pcs/brannock-tull.md";
    let t = read(root, pc);
    let t = edit::set_scalar(&t, &["hp_current", "hp"], &Scalar::Int(9)).expect("hp");
    let t = edit::set_scalar(&t, &["gold", "gp"], &Scalar::Int(3)).expect("gold");
    let t = edit::set_scalar(&t, &["location"], &Scalar::Text("[[Shaft Nine]]".into()))
        .expect("location");
    let t = edit::list_add(&t, &["inventory", "items"], "silver key").expect("item");
    let t = edit::list_remove(&t, &["conditions"], "exhausted").expect("condition");
    write(root, pc, &t);

    let threads = "canon/open-threads.md";
    let t = read(root, threads);
    let t = edit::thread_move(&t, "The Scrip Strike", "Resolved").expect("move");
    let t = edit::thread_set_next(&t, "strand's ringing ore", "Ask Ida tonight.").expect("next");
    let t = edit::thread_add(
        &t,
        "Urgent",
        "The Hired Guns",
        "Twenty men.",
        Some("Count them."),
    )
    .expect("add");
    write(root, threads, &t);

    let timeline = "canon/timeline.md";
    let t = read(root, timeline);
    let t = edit::append_event(&t, 6, None, "The party reached the adit.").expect("day 6");
    let t = edit::append_event(&t, 7, Some("dawn"), "The blasting was called off.").expect("day 7");
    write(root, timeline, &t);
    let clock = "canon/temporal-index.json";
    let t = edit::set_temporal(&read(root, clock), Some(7), Some("dawn")).expect("clock");
    write(root, clock, &t);

    let after = load(root);
    assert_eq!(after.diagnostics().len(), diags_before, "no new problems");
    let c = &after.built.campaign;
    let b = c
        .pcs
        .iter()
        .find(|p| p.name == "Brannock Tull")
        .expect("pc");
    assert_eq!(b.hp_current, Some(9));
    assert_eq!(b.gold, Some(3));
    assert!(
        b.inventory.iter().any(|i| i == "silver key"),
        "{:?}",
        b.inventory
    );
    assert!(b.conditions.is_empty(), "{:?}", b.conditions);
    let strike = c
        .threads
        .iter()
        .find(|t| t.title == "The Scrip Strike")
        .expect("strike");
    assert_eq!(strike.priority, Priority::Resolved);
    assert!(strike.next.is_some());
    let ore = c
        .threads
        .iter()
        .find(|t| t.title == "Strand's Ringing Ore")
        .expect("ore");
    assert_eq!(ore.next.as_deref(), Some("Ask Ida tonight."));
    let guns = c
        .threads
        .iter()
        .find(|t| t.title == "The Hired Guns")
        .expect("new thread");
    assert_eq!(guns.priority, Priority::Urgent);
    assert_eq!(guns.next.as_deref(), Some("Count them."));
    assert_eq!(c.threads.len(), before.built.campaign.threads.len() + 1);
    assert_eq!(c.day, Some(7));
    assert_eq!(c.time.as_deref(), Some("dawn"));
    let last = c.events.last().expect("events");
    assert_eq!(
        (last.day, last.text.as_str()),
        (7, "The blasting was called off.")
    );
    assert!(c
        .events
        .iter()
        .any(|e| e.day == 6 && e.text == "The party reached the adit."));
}

proptest::proptest! {
    /// Any printable one-line value set through write-back reads back through canon's own
    /// reader as exactly that value: quotes, backslashes, `#`, `: ` and links included.
    #[test]
    fn any_printable_value_set_reads_back_the_same(
        v in "[ -~\u{e9}\u{2014}\u{201c}\u{201d}]{1,40}",
        old in proptest::sample::select(vec!["miller", "\"quoted\"", "'single'", "", "~"]),
    ) {
        let v = v.trim().to_string();
        proptest::prop_assume!(!v.is_empty());
        let text = format!("---\nname: Hob\nrole: {old}\ntags: [npc]\n---\n# Hob\n");
        let after = edit::set_scalar(&text, &["role"], &Scalar::Text(v.clone())).expect("sets");
        let note = vaultdm::vault::Note::parse("Hob.md", after.as_bytes());
        proptest::prop_assert_eq!(note.frontmatter.text(&["role"]), Some(v.clone()), "{}", after);
        // And in a `{...}` frontmatter.
        let flow = "---\n{name: Hob, role: miller, tags: [npc]}\n---\n# Hob\n";
        let after = edit::set_scalar(flow, &["role"], &Scalar::Text(v.clone())).expect("sets");
        let note = vaultdm::vault::Note::parse("Hob.md", after.as_bytes());
        proptest::prop_assert_eq!(note.frontmatter.text(&["role"]), Some(v), "{}", after);
    }

    /// A tag renamed and renamed back gives back the exact bytes.
    #[test]
    fn a_tag_renamed_and_back_is_the_same_note(
        style in 0usize..4,
        word in "(dead|missing|departed)",
    ) {
        let text = match style {
            0 => "---\ntags: [npc/alive, iff/positive]\n---\n# Hob\n".to_string(),
            1 => "---\ntags:\n  - \"npc/alive\"\n  - iff/positive\n---\n# Hob\n".to_string(),
            2 => "# Hob\n\n#npc/alive #iff/positive\n\n```\n#npc/alive\n```\n".to_string(),
            _ => "\u{feff}---\r\ntags: npc/alive, iff/positive\r\n---\r\n# Hob #npc/alive\r\n".to_string(),
        };
        let new = format!("npc/{word}");
        let there = edit::tag_rename(&text, "npc/alive", &new).expect("renames");
        proptest::prop_assert!(edit::tags_as_written(&there).contains(&new));
        proptest::prop_assert!(!edit::tags_as_written(&there).iter().any(|t| t == "npc/alive"));
        let back = edit::tag_rename(&there, &new, "npc/alive").expect("renames back");
        proptest::prop_assert_eq!(back, text);
    }
}
