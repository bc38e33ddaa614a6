//! Write-back edits on the bundled campaign: each edit changes what canon reads and nothing
//! else, and edits undone give back the GM's exact bytes.

use crate::support::{load, template_copy};
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

/// The threads canon reads from an open-threads file: (title, priority, next, summary).
fn canon_threads(text: &str) -> Vec<(String, Priority, Option<String>, Vec<String>)> {
    use vaultdm::vault::{Note, Vault};
    let note = Note::parse(vaultdm::canon::OPEN_THREADS, text.as_bytes());
    let v = Vault::from_notes("/nowhere".into(), vec![note], vec![]);
    let b = vaultdm::canon::build(
        &v,
        &vaultdm::config::Config::default(),
        &vaultdm::canon::CanonFiles::default(),
    );
    b.campaign
        .threads
        .iter()
        .map(|t| {
            (
                t.title.clone(),
                t.priority,
                t.next.clone(),
                t.summary.clone(),
            )
        })
        .collect()
}

/// The non-blank lines of a text, without line ends, a checklist box read as open, sorted:
/// what a move must keep (it may only move lines, tick a box and add a section heading).
fn kept_lines(s: &str, added: &str) -> Vec<String> {
    let mut v: Vec<String> = s
        .lines()
        .map(|l| l.trim_end_matches('\r').trim_start_matches('\u{feff}'))
        .filter(|l| !l.trim().is_empty() && *l != added)
        .map(|l| l.replacen("[x]", "[ ]", 1))
        .collect();
    v.sort();
    v
}

mod threads_prop {
    use super::{canon_threads, kept_lines};
    use proptest::prelude::*;
    use vaultdm::canon::Priority;
    use vaultdm::vault::edit;

    /// How a generated thread is written.
    #[derive(Debug, Clone)]
    enum Style {
        /// `### Title`, summary lines.
        Heading,
        /// `- **Title** — summary`.
        Bold,
        /// `- **Title:** summary`.
        BoldColon,
        /// `- Title: rest — more`.
        Plain,
        /// `- [ ] Title — rest` or `- [x] **Title** — rest`.
        Checkbox(bool, bool),
        /// `1. Title - rest`.
        Numbered,
    }

    #[derive(Debug, Clone)]
    struct Gen {
        style: Style,
        extra: usize,
        next: Option<bool>,
        link: bool,
    }

    fn style() -> impl Strategy<Value = Style> {
        prop_oneof![
            Just(Style::Heading),
            Just(Style::Bold),
            Just(Style::BoldColon),
            Just(Style::Plain),
            (any::<bool>(), any::<bool>()).prop_map(|(t, b)| Style::Checkbox(t, b)),
            Just(Style::Numbered),
        ]
    }

    fn thread() -> impl Strategy<Value = Gen> {
        (
            style(),
            0usize..3,
            prop::option::of(any::<bool>()),
            any::<bool>(),
        )
            .prop_map(|(style, extra, next, link)| Gen {
                style,
                extra,
                next,
                link,
            })
    }

    const NAMES: [[&str; 2]; 5] = [
        ["Urgent", "Urgent"],
        ["High", "High Priority"],
        ["Medium", "Ongoing"],
        ["Low", "Background"],
        ["Resolved", "Done"],
    ];
    const WORDS: [&str; 8] = [
        "Bell", "Debt", "Ferry", "Kiln", "Oath", "Ledger", "Lamp", "Strike",
    ];

    /// A generated open-threads file.
    fn file() -> impl Strategy<Value = String> {
        (
            prop::collection::vec(
                (
                    0usize..5,
                    any::<bool>(),
                    prop::collection::vec(thread(), 0..4),
                ),
                1..5,
            ),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(|(sections, crlf, bom, front, gap)| {
                let mut lines: Vec<String> = Vec::new();
                if front {
                    lines.extend(["---".into(), "tags: [threads]".into(), "---".into()]);
                }
                lines.push("# Open Threads".into());
                let mut used = std::collections::HashSet::new();
                let mut n = 0;
                for (rank, alt, threads) in sections {
                    if !used.insert(rank) {
                        continue;
                    }
                    lines.push(String::new());
                    lines.push(format!("## {}", NAMES[rank][usize::from(alt)]));
                    if gap {
                        lines.push(String::new());
                    }
                    // A section of heading-style threads holds bold items besides (a
                    // plain item under a heading is its text); a list section any item.
                    let headed = threads.iter().any(|g| matches!(g.style, Style::Heading));
                    for mut g in threads {
                        if headed && !matches!(g.style, Style::Heading) {
                            g.style = Style::Bold;
                        }
                        n += 1;
                        let word = WORDS[n % WORDS.len()];
                        let title = if g.link {
                            format!("The [[{word}]] {n}")
                        } else {
                            format!("The {word} {n}")
                        };
                        let indent = if matches!(g.style, Style::Heading) {
                            ""
                        } else {
                            "  "
                        };
                        match g.style {
                            Style::Heading => {
                                lines.push(String::new());
                                lines.push(format!("### {title}"));
                            }
                            Style::Bold => lines.push(format!("- **{title}** — it began.")),
                            Style::BoldColon => lines.push(format!("- **{title}:** it began.")),
                            Style::Plain => lines.push(format!("- {title}: it rang — twice.")),
                            Style::Checkbox(ticked, bold) => {
                                let b = if ticked { "x" } else { " " };
                                if bold {
                                    lines.push(format!("- [{b}] **{title}** — it began."))
                                } else {
                                    lines.push(format!("- [{b}] {title} — it began."))
                                }
                            }
                            Style::Numbered => lines.push(format!("{n}. {title} - it began.")),
                        }
                        for e in 0..g.extra {
                            lines.push(format!("{indent}Detail {e} of {word}."));
                        }
                        match g.next {
                            Some(true) => lines.push(format!("{indent}→ Next: Ask about {word}.")),
                            Some(false) => lines.push(format!("{indent}Next step: Find {word}.")),
                            None => {}
                        }
                    }
                }
                let eol = if crlf { "\r\n" } else { "\n" };
                let mut t = lines.join(eol);
                t.push_str(eol);
                if bom {
                    t.insert(0, '\u{feff}');
                }
                t
            })
    }

    const TO: [&str; 5] = ["Urgent", "High", "Medium", "Low", "Resolved"];
    const RANKED: [Priority; 5] = [
        Priority::Urgent,
        Priority::High,
        Priority::Medium,
        Priority::Low,
        Priority::Resolved,
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 192, max_global_rejects: 4096, ..ProptestConfig::default() })]
        /// Every thread title the reader reports can be moved (resolved) and given a next
        /// step by the writer, and the reader then finds it with its new state, every other
        /// thread as it was, and no line of the note lost or changed.
        #[test]
        fn every_title_the_reader_reports_is_edited_and_found_again(
            text in file(),
            pick in any::<prop::sample::Index>(),
            to in 0usize..5,
            next in "[A-Z][a-z]{1,8}( [a-z]{1,6}){0,3}\\.",
        ) {
            let before = canon_threads(&text);
            prop_assume!(!before.is_empty());
            let k = pick.index(before.len());
            let title = before[k].0.clone();
            prop_assume!(before.iter().filter(|t| t.0 == title).count() == 1);
            let others = |all: &[(String, Priority, Option<String>, Vec<String>)]| {
                let mut v: Vec<_> = all.iter().filter(|t| t.0 != title).cloned().collect();
                v.sort_by(|a, b| a.0.cmp(&b.0));
                v
            };

            // Move (to Resolved: resolve).
            let moved = edit::thread_move(&text, &title, TO[to]).expect("move");
            let after = canon_threads(&moved);
            let t = after.iter().find(|t| t.0 == title).expect("found again");
            prop_assert_eq!(t.1, RANKED[to], "{}", moved);
            prop_assert_eq!(&t.2, &before[k].2);
            prop_assert_eq!(&t.3, &before[k].3);
            prop_assert_eq!(others(&after), others(&before));
            let heading = format!("## {}", TO[to]);
            prop_assert_eq!(kept_lines(&moved, &heading), kept_lines(&text, &heading), "{}", moved);
            prop_assert_eq!(moved.starts_with('\u{feff}'), text.starts_with('\u{feff}'));

            // A new thread, in the section's own style.
            let to_add = TO[to % 4];
            let added = edit::thread_add(&text, to_add, "Zz New Thread", "It began.", Some(&next)).expect("add");
            let after = canon_threads(&added);
            let t = after.iter().find(|t| t.0 == "Zz New Thread").expect("found");
            prop_assert_eq!(t.1, RANKED[to % 4], "{}", added);
            prop_assert_eq!(t.2.as_deref(), Some(next.as_str()));
            prop_assert_eq!(after.len(), before.len() + 1);
            let old: Vec<_> = after.iter().filter(|t| t.0 != "Zz New Thread").cloned().collect();
            prop_assert_eq!(old, before.clone());

            // Next step.
            let nexted = edit::thread_set_next(&text, &title, &next).expect("next");
            let after = canon_threads(&nexted);
            let t = after.iter().find(|t| t.0 == title).expect("found again");
            prop_assert_eq!(t.2.as_deref(), Some(next.as_str()), "{}", nexted);
            prop_assert_eq!(t.1, before[k].1);
            prop_assert_eq!(&t.3, &before[k].3);
            prop_assert_eq!(others(&after), others(&before));
            let (b, a): (Vec<&str>, Vec<&str>) = (text.lines().collect(), nexted.lines().collect());
            if a.len() == b.len() {
                prop_assert_eq!((0..b.len()).filter(|&i| a[i] != b[i]).count(), 1);
            } else {
                prop_assert_eq!(a.len(), b.len() + 1);
                let at = (0..a.len()).find(|&i| a.get(i) != b.get(i)).expect("added");
                let mut without = a.clone();
                without.remove(at);
                prop_assert_eq!(without, b);
            }
        }
    }
}

mod inline_prop {
    use proptest::prelude::*;
    use vaultdm::vault::edit::{self, Scalar};
    use vaultdm::vault::Note;

    /// How a generated inline field is written.
    #[derive(Debug, Clone)]
    enum Form {
        Line,
        Item,
        BoldKey,
        Bracketed,
        Paren,
        Quote,
    }

    fn form() -> impl Strategy<Value = Form> {
        prop_oneof![
            Just(Form::Line),
            Just(Form::Item),
            Just(Form::BoldKey),
            Just(Form::Bracketed),
            Just(Form::Paren),
            Just(Form::Quote),
        ]
    }

    fn value() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z]{1,8}",
            (0i64..500).prop_map(|n| n.to_string()),
            "[A-Z][a-z]{1,6} [a-z]{1,6}",
            "[A-Z][a-z]{1,6}".prop_map(|p| format!("[[{p} Hall]]")),
        ]
    }

    const KEYS: [&str; 5] = ["mood", "hp", "location", "Max HP", "due"];

    /// A note with inline fields (and decoys in code, inline code and comments).
    fn note() -> impl Strategy<Value = String> {
        (
            prop::collection::vec((0usize..5, form(), value(), any::<bool>()), 1..6),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(|(fields, front, crlf, bom)| {
                let mut lines: Vec<String> = Vec::new();
                if front {
                    lines.extend(["---".into(), "name: Odessa".into(), "---".into()]);
                }
                lines.push("# Odessa".into());
                for (k, form, v, decoy) in fields {
                    let key = KEYS[k];
                    if decoy {
                        lines.push(String::new());
                        lines.push("```".into());
                        lines.push(format!("{key}:: decoy"));
                        lines.push("```".into());
                        lines.push(format!("Not a field: `{key}:: decoy` %% {key}:: decoy %%"));
                    }
                    lines.push(String::new());
                    lines.push(match form {
                        Form::Line => format!("{key}:: {v}"),
                        Form::Item => format!("- {key}:: {v}"),
                        Form::BoldKey => format!("- **{key}**:: {v}"),
                        Form::Bracketed => format!("She seems [{key}:: {v}] today."),
                        Form::Paren => format!("Noted ({key}:: {v}) at dusk."),
                        Form::Quote => format!("> {key}:: {v}"),
                    });
                }
                let eol = if crlf { "\r\n" } else { "\n" };
                let mut t = lines.join(eol);
                t.push_str(eol);
                if bom {
                    t.insert(0, '\u{feff}');
                }
                t
            })
    }

    /// What canon reads for each key.
    fn read(text: &str) -> Vec<Option<String>> {
        let n = Note::parse("people/odessa.md", text.as_bytes());
        KEYS.iter()
            .map(|k| n.frontmatter.text(&[&k.to_lowercase().replace(' ', "_")]))
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Every inline field the reader reports is the one the writer finds and edits; the
        /// reader then reads the new value, every other field as it was, only that line
        /// changed, and setting the old value back gives back the exact bytes.
        #[test]
        fn every_inline_field_the_reader_reports_is_edited_and_read_again(
            text in note(),
            pick in 0usize..5,
            new in value(),
        ) {
            let before = read(&text);
            let Some(old) = before[pick].clone() else {
                return Ok(());
            };
            let key = KEYS[pick].to_lowercase().replace(' ', "_");
            let keys = [key.as_str()];
            prop_assert_eq!(edit::get_field(&text, &keys).map(|f| f.1), Some(old.clone()));
            let after = edit::set_field(&text, &keys, &Scalar::Text(new.clone())).expect("set");
            let now = read(&after);
            prop_assert_eq!(now[pick].as_deref(), Some(new.as_str()), "{}", after);
            for i in (0..KEYS.len()).filter(|&i| i != pick) {
                prop_assert_eq!(&now[i], &before[i]);
            }
            let (b, a): (Vec<&str>, Vec<&str>) = (text.split('\n').collect(), after.split('\n').collect());
            prop_assert_eq!(a.len(), b.len());
            prop_assert!((0..b.len()).filter(|&i| a[i] != b[i]).count() <= 1);
            let back = edit::set_field(&after, &keys, &Scalar::Text(old)).expect("back");
            prop_assert_eq!(back, text);
        }
    }
}
