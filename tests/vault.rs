//! Vault reading on fixture vaults: which files are notes, every Obsidian syntax variant,
//! link resolution, and every kind of bad input giving the right diagnostic at the right
//! file line while the rest of the vault still loads.

use crate::support::{fixture, load_fixture, triples, Scratch};
use proptest::prelude::*;
use rstest::rstest;
use vaultdm::vault::markdown::BlockKind;
use vaultdm::vault::{Note, Resolution, Severity, Vault};

fn vault(name: &str) -> Vault {
    Vault::load(&fixture(name)).expect("vault loads")
}

fn note<'a>(v: &'a Vault, path: &str) -> &'a Note {
    let i = v
        .note_index(path)
        .unwrap_or_else(|| panic!("{path} is not a note"));
    &v.notes[i]
}

fn resolved_path(v: &Vault, target: &str) -> Option<String> {
    match v.resolve(target) {
        Resolution::Found(i) => Some(v.notes[i].path.clone()),
        _ => None,
    }
}

// ---------------------------------------------------------------- walking

#[rstest]
#[case::canon_note("canon/pcs/ada.md", true)]
#[case::non_ascii_file_name("canon/locations/Café Noir.md", true)]
#[case::gm_session_notes_are_canon("heist/sessions/session-1.md", true)]
#[case::folder_anywhere("heist/people/jory.md", true)]
#[case::vaultdm_transcripts_are_not_notes("sessions/2026-01-01.md", false)]
#[case::gm_session_notes_beside_them_are("sessions/Session 2 - The Vault.md", true)]
#[case::obsidian_settings(".obsidian/workspace.md", false)]
#[case::obsidian_trash(".trash/deleted-npc.md", false)]
#[case::json_is_not_a_note("canon/temporal-index.json", false)]
#[case::toml_is_not_a_note("vaultdm.toml", false)]
fn walk_keeps_notes_and_skips_the_rest(#[case] path: &str, #[case] is_note: bool) {
    let v = vault("variants");
    assert_eq!(v.note_index(path).is_some(), is_note, "{path}");
}

#[test]
fn variants_vault_reads_with_nothing_but_the_planted_no_voice_notes() {
    let loaded = load_fixture("variants");
    let want: Vec<(String, usize, &str)> = vec![
        ("heist/people/jory.md".into(), 1, "no-voice"),
        ("notes/grey.md".into(), 1, "no-voice"),
    ];
    assert_eq!(triples(&loaded.diagnostics()), want);
}

#[test]
fn decoys_in_skipped_folders_never_reach_the_index() {
    let v = vault("variants");
    assert_eq!(v.resolve("Zanzibar"), Resolution::NotFound);
    // vaultdm's transcript (its log is in .vaultdm/sessions/) is no note; the GM's own
    // session note beside it is.
    let in_sessions: Vec<&str> = v
        .notes
        .iter()
        .filter(|n| n.path.starts_with("sessions/"))
        .map(|n| n.path.as_str())
        .collect();
    assert_eq!(in_sessions, ["sessions/Session 2 - The Vault.md"]);
}

// ---------------------------------------------------------------- encodings

#[test]
fn crlf_note_reads_like_lf_with_the_same_lines() {
    let v = vault("variants");
    let raw = std::fs::read(fixture("variants/canon/pcs/eve.md")).expect("read");
    assert!(
        raw.windows(2).any(|w| w == b"\r\n"),
        "fixture lost its CRLF"
    );
    let n = note(&v, "canon/pcs/eve.md");
    assert!(n.diagnostics.is_empty(), "{:?}", n.diagnostics);
    assert_eq!(n.name(), "Eve Sorrel");
    assert_eq!(n.frontmatter.line_of("location"), 10);
    assert_eq!(n.links.len(), 1);
    assert_eq!(&*n.links[0].target.note, "the-gilded-eel");
    assert_eq!(n.links[0].line, 10);
    assert_eq!(n.body.title(), Some("Eve Sorrel"));
    assert_eq!(n.body.sections[1].line, 12);
}

#[test]
fn bom_note_still_has_frontmatter() {
    let v = vault("variants");
    let raw = std::fs::read(fixture("variants/canon/npcs/wren-ashdown.md")).expect("read");
    assert!(raw.starts_with(b"\xef\xbb\xbf"), "fixture lost its BOM");
    let n = note(&v, "canon/npcs/wren-ashdown.md");
    assert!(n.diagnostics.is_empty(), "{:?}", n.diagnostics);
    assert_eq!(
        n.frontmatter.text(&["role"]).as_deref(),
        Some("harbour clerk")
    );
    assert_eq!(n.frontmatter.line_of("role"), 3);
}

#[test]
fn non_ascii_file_name_is_the_stem_and_the_name() {
    let v = vault("variants");
    let n = note(&v, "canon/locations/Café Noir.md");
    assert_eq!(n.stem, "Café Noir");
    assert_eq!(n.name(), "Café Noir");
    assert_eq!(n.aliases(), ["the Café"]);
}

// ---------------------------------------------------------------- Obsidian syntax

fn all_text(n: &Note) -> String {
    n.body
        .blocks
        .iter()
        .map(|b| &*b.text)
        .collect::<Vec<_>>()
        .join("\n")
}

#[rstest]
#[case::comment_inline("secretly")]
#[case::comment_block_link("Nowhere Comment")]
#[case::dataview_block("Zephyrine")]
#[case::dataviewjs_block("Zanzibar")]
#[case::dataviewjs_link("Nowhere Dataview")]
fn ignored_syntax_is_not_content(#[case] hidden: &str) {
    let v = vault("variants");
    let n = note(&v, "canon/npcs/wren-ashdown.md");
    assert!(
        !all_text(n).contains(hidden),
        "{hidden} leaked into the body"
    );
    assert!(n.links.iter().all(|l| !l.target.note.contains(hidden)));
}

#[test]
fn callouts_inline_fields_and_tags() {
    let v = vault("variants");
    let n = note(&v, "canon/npcs/wren-ashdown.md");
    let secret: Vec<_> = n
        .body
        .blocks
        .iter()
        .filter(|b| b.callout.as_deref() == Some("secret"))
        .map(|b| &*b.text)
        .collect();
    assert_eq!(secret, ["Hidden debt\nShe owes Mother Ashka forty crowns."]);
    // The inline field is read into the frontmatter, with its line (not kept twice).
    assert_eq!(
        n.frontmatter.text(&["mood"]).as_deref(),
        Some("nervous #informant")
    );
    assert_eq!(n.frontmatter.line_of("mood"), 14);
    assert_eq!(n.tags, ["informant"]);
    // The first paragraph drops the comment but keeps the text around it.
    let summary = n.body.first_paragraph().expect("paragraph").text.clone();
    assert!(summary.starts_with("Wren keeps the harbour ledgers."));
    assert!(summary.ends_with("She signs everything twice."));
}

#[test]
fn every_wikilink_form_with_its_line() {
    let v = vault("variants");
    let n = note(&v, "canon/npcs/wren-ashdown.md");
    let got: Vec<_> = n
        .links
        .iter()
        .map(|l| {
            (
                &*l.target.note,
                l.target.heading(),
                l.target.alias(),
                l.embed,
                l.line,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("Mother Ashka", None, None, false, 12),
            ("the-gilded-eel", Some("Description"), None, false, 24),
            (
                "canon/locations/the-lower-docks.md",
                None,
                Some("the docks"),
                false,
                24
            ),
            ("Mother Ashka", None, None, true, 24),
            ("harbour-map.png", None, None, true, 24),
        ]
    );
    // Links show as their display text in the body; an embedded picture is not words.
    assert!(all_text(n).contains("See the-gilded-eel, the docks, Mother Ashka and ."));
}

#[test]
fn tag_line_is_not_a_description() {
    let v = vault("variants");
    let n = note(&v, "notes/lighthouse.md");
    assert_eq!(n.tags, ["place"]);
    assert_eq!(
        n.body.first_paragraph().map(|b| &*b.text),
        Some("The lamp has not been lit in ten years.")
    );
}

#[test]
fn unquoted_wikilink_in_frontmatter_is_a_link() {
    let v = vault("variants");
    let n = note(&v, "heist/party/fenn.md");
    assert_eq!(n.links.len(), 1);
    assert_eq!(&*n.links[0].target.note, "the-gilded-eel");
    assert_eq!(n.links[0].target.alias(), Some("the Eel"));
    assert!(n.links[0].in_frontmatter());
    assert_eq!(n.link_key(&n.links[0]), Some("location"));
    assert_eq!(n.links[0].line, 5);
}

#[test]
fn list_forms_in_frontmatter() {
    let v = vault("variants");
    let yaml_list = note(&v, "canon/pcs/ada.md")
        .frontmatter
        .list(&["inventory"]);
    let flow = note(&v, "canon/pcs/bram.md").frontmatter.list(&["items"]);
    let comma = note(&v, "canon/pcs/cleo.md").frontmatter.list(&["items"]);
    assert_eq!(yaml_list, ["thieves' tools", "brass astrolabe"]);
    assert_eq!(flow, ["storm lantern", "coil of rope"]);
    assert_eq!(comma, ["lockpicks", "forged harbour pass", "smoke bomb"]);
    let tags_string = note(&v, "lore/salt-priests.md");
    assert_eq!(tags_string.tags, ["faction"]);
    assert_eq!(tags_string.aliases(), ["Salt Men", "the Brine Order"]);
}

// ---------------------------------------------------------------- link resolution

#[rstest]
#[case::exact_path(
    "canon/locations/the-gilded-eel.md",
    "canon/locations/the-gilded-eel.md"
)]
#[case::path_without_md("canon/locations/the-gilded-eel", "canon/locations/the-gilded-eel.md")]
#[case::stem("the-gilded-eel", "canon/locations/the-gilded-eel.md")]
#[case::stem_any_case("THE-Gilded-EEL", "canon/locations/the-gilded-eel.md")]
#[case::display_name("The Gilded Eel", "canon/locations/the-gilded-eel.md")]
#[case::alias("the eel", "canon/locations/the-gilded-eel.md")]
#[case::non_ascii_stem("Café Noir", "canon/locations/Café Noir.md")]
#[case::non_ascii_upper("CAFÉ NOIR", "canon/locations/Café Noir.md")]
#[case::non_ascii_decomposed("Cafe\u{301} Noir", "canon/locations/Café Noir.md")]
#[case::non_ascii_alias("the café", "canon/locations/Café Noir.md")]
#[case::alias_string("the Widow", "canon/npcs/mother-ashka.md")]
#[case::alias_flow_list("Pell the Hand", "canon/npcs/pell-quickhand.md")]
#[case::h1_title_name("Session One Prep", "heist/sessions/session-1.md")]
#[case::frontmatter_title("The Drowned Rumour", "notes/rumour.md")]
fn links_resolve(#[case] target: &str, #[case] path: &str) {
    let v = vault("variants");
    assert_eq!(resolved_path(&v, target).as_deref(), Some(path), "{target}");
}

#[test]
fn same_named_files_resolve_as_obsidian_does_and_same_names_stay_ambiguous() {
    let v = vault("broken");
    let path = |r: Resolution| match r {
        Resolution::Found(i) => v.notes[i].path.clone(),
        other => format!("{other:?}"),
    };
    // No linking note: the shortest path, then path order.
    assert_eq!(path(v.resolve("Dup")), "notes/a/Dup.md");
    // From a note in notes/b/: its own folder wins.
    assert_eq!(
        path(v.resolve_from("Dup", Some("notes/b/Other.md"))),
        "notes/b/Dup.md"
    );
    // A path, a partial path and a relative path.
    assert_eq!(path(v.resolve("notes/b/Dup")), "notes/b/Dup.md");
    assert_eq!(path(v.resolve("b/Dup")), "notes/b/Dup.md");
    assert_eq!(
        path(v.resolve_from("../b/Dup", Some("notes/a/Dup.md"))),
        "notes/b/Dup.md"
    );
    assert_eq!(
        v.resolve_from("../../../x", Some("notes/a/Dup.md")),
        Resolution::NotFound
    );
    // Two notes whose display name is the same: a real ambiguity, never guessed.
    match v.resolve("Captain Marr") {
        Resolution::Ambiguous(c) => {
            let paths: Vec<_> = c.iter().map(|&i| v.notes[i].path.as_str()).collect();
            assert_eq!(paths, ["canon/npcs/dup-1.md", "canon/npcs/dup-2.md"]);
        }
        other => panic!("Captain Marr should be ambiguous, got {other:?}"),
    }
    assert_eq!(v.resolve("Nowhere"), Resolution::NotFound);
}

// ---------------------------------------------------------------- bad input

#[rstest]
#[case::yaml_syntax("canon/npcs/yaml-error.md", 3, "yaml-syntax", Severity::Error)]
#[case::wrong_type("canon/pcs/bad-hp.md", 3, "bad-value", Severity::Error)]
#[case::unclosed("canon/npcs/unclosed.md", 1, "unclosed-frontmatter", Severity::Error)]
#[case::templater("canon/npcs/templater.md", 3, "templater", Severity::Error)]
#[case::list("notes/list-fm.md", 2, "frontmatter-not-mapping", Severity::Warning)]
#[case::string("notes/string-fm.md", 2, "frontmatter-not-mapping", Severity::Warning)]
#[case::empty("notes/empty.md", 0, "empty-note", Severity::Info)]
#[case::binary("notes/junk.md", 0, "binary", Severity::Error)]
#[case::unresolved("notes/links.md", 3, "unresolved-link", Severity::Info)]
#[case::ambiguous("notes/links.md", 3, "ambiguous-link", Severity::Warning)]
#[case::unknown_location("canon/pcs/lost.md", 5, "unknown-location", Severity::Warning)]
#[case::duplicate_name("canon/npcs/dup-1.md", 2, "duplicate-name", Severity::Warning)]
#[case::no_priority("canon/open-threads.md", 3, "thread-no-priority", Severity::Warning)]
#[case::bad_json("canon/temporal-index.json", 4, "temporal-index", Severity::Error)]
#[case::event_without_day("canon/timeline.md", 3, "event-no-day", Severity::Warning)]
fn bad_input_is_a_diagnostic_at_its_line(
    #[case] path: &str,
    #[case] line: usize,
    #[case] code: &str,
    #[case] severity: Severity,
) {
    let loaded = load_fixture("broken");
    let diags = loaded.diagnostics();
    let found: Vec<_> = diags
        .iter()
        .filter(|d| d.path == path && d.code == code)
        .collect();
    assert_eq!(found.len(), 1, "{path} {code}: {diags:#?}");
    assert_eq!(found[0].line, line, "{}", found[0]);
    assert_eq!(found[0].severity, severity, "{}", found[0]);
}

#[test]
fn broken_vault_reports_exactly_the_planted_problems() {
    let loaded = load_fixture("broken");
    let got = triples(&loaded.diagnostics());
    let want: Vec<(String, usize, &str)> = [
        // Once per group, naming the other note.
        ("canon/npcs/dup-1.md", 2, "duplicate-name"),
        ("canon/npcs/templater.md", 3, "templater"),
        // Read as body only, the note has no voice either.
        ("canon/npcs/unclosed.md", 1, "no-voice"),
        ("canon/npcs/unclosed.md", 1, "unclosed-frontmatter"),
        ("canon/npcs/yaml-error.md", 1, "no-voice"),
        ("canon/npcs/yaml-error.md", 3, "yaml-syntax"),
        ("canon/open-threads.md", 3, "thread-no-priority"),
        ("canon/pcs/bad-hp.md", 3, "bad-value"),
        ("canon/pcs/lost.md", 5, "unknown-location"),
        ("canon/temporal-index.json", 4, "temporal-index"),
        ("canon/timeline.md", 3, "event-no-day"),
        ("notes/empty.md", 0, "empty-note"),
        ("notes/junk.md", 0, "binary"),
        ("notes/links.md", 3, "ambiguous-link"),
        ("notes/links.md", 3, "unresolved-link"),
        ("notes/list-fm.md", 2, "frontmatter-not-mapping"),
        ("notes/string-fm.md", 2, "frontmatter-not-mapping"),
    ]
    .into_iter()
    .map(|(p, l, c)| (p.to_string(), l, c))
    .collect();
    assert_eq!(got, want);
}

#[test]
fn yaml_error_message_is_readable_and_keeps_the_body() {
    let v = vault("broken");
    let n = note(&v, "canon/npcs/yaml-error.md");
    let d = &n.diagnostics[0];
    assert!(d.message.contains("mapping values are not allowed"), "{d}");
    assert!(
        !d.message.contains(" at line "),
        "line belongs in the position: {d}"
    );
    // The lines that read alone are kept: the note keeps its name, role and location.
    assert_eq!(
        n.frontmatter.text(&["role"]).as_deref(),
        Some("spy: double agent")
    );
    assert_eq!(n.name(), "Yaml Error");
    assert_eq!(
        n.body.first_paragraph().map(|b| &*b.text),
        Some("Still has a body.")
    );
}

#[test]
fn the_rest_of_a_broken_vault_still_loads() {
    let loaded = load_fixture("broken");
    let c = &loaded.built.campaign;
    assert_eq!(loaded.vault.notes.len(), 19);
    let ada = c.pcs.iter().find(|p| p.name == "Ada Good").expect("Ada");
    assert_eq!((ada.hp_current, ada.hp_max), (Some(10), Some(10)));
    assert_eq!(
        ada.location.as_deref(),
        Some("canon/locations/the-harbour.md")
    );
    let bad = c.pcs.iter().find(|p| p.name == "Bad Hp").expect("Bad Hp");
    assert_eq!((bad.hp_current, bad.hp_max), (None, Some(12)));
    let gull = c.npcs.iter().find(|n| n.name == "Good Gull").expect("Gull");
    assert_eq!(gull.voice, ["Squawks the tide tables."]);
    // Notes with broken frontmatter are still indexed for links and names.
    assert!(resolved_path(&loaded.vault, "list-fm").is_some());
    assert!(resolved_path(&loaded.vault, "Yaml Error").is_some());
    // The time falls back to the timeline when the temporal index is broken.
    assert_eq!(c.day, Some(4));
    assert_eq!(c.time, None);
}

// ---------------------------------------------------------------- generated at test time

#[cfg(unix)]
#[test]
fn symlink_loops_and_links_out_of_the_vault_are_not_followed() {
    use std::os::unix::fs::symlink;
    let s = Scratch::of("split-party");
    let outside = tempfile::tempdir().expect("tempdir");
    std::fs::write(outside.path().join("secret.md"), "# Outside Secret\n").expect("write");
    std::fs::create_dir_all(outside.path().join("dir")).expect("mkdir");
    std::fs::write(outside.path().join("dir/other.md"), "# Outside Other\n").expect("write");
    symlink(&s.root, s.root.join("canon/loop")).expect("symlink");
    symlink(
        outside.path().join("secret.md"),
        s.root.join("notes-secret.md"),
    )
    .expect("symlink");
    symlink(outside.path().join("dir"), s.root.join("outside-dir")).expect("symlink");
    symlink(s.root.join("canon/npcs"), s.root.join("npc-alias")).expect("symlink");

    let loaded = s.load();
    let d = loaded.diagnostics();
    let codes = triples(&d);
    assert!(
        codes.contains(&("canon/loop".into(), 0, "walk")),
        "{codes:?}"
    );
    assert!(d
        .iter()
        .any(|d| d.path == "canon/loop" && d.message.contains("symlink loop")));
    assert!(codes.contains(&("notes-secret.md".into(), 0, "outside-vault")));
    assert!(codes.contains(&("outside-dir".into(), 0, "outside-vault")));
    assert!(loaded
        .vault
        .notes
        .iter()
        .all(|n| !n.path.contains("secret") && !n.path.starts_with("outside-dir")));
    assert_eq!(loaded.vault.resolve("Outside Secret"), Resolution::NotFound);
    // The rest of the vault is intact.
    assert_eq!(loaded.built.campaign.pcs.len(), 2);
    assert_eq!(loaded.built.campaign.locations.len(), 3);
}

#[test]
fn a_huge_note_is_skipped_with_a_message_and_the_rest_loads() {
    let s = Scratch::of("split-party");
    let path = s.root.join("notes/huge.md");
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let f = std::fs::File::create(&path).expect("create");
    f.set_len(50 * 1024 * 1024).expect("set_len");
    let loaded = s.load();
    let d: Vec<_> = loaded
        .diagnostics()
        .into_iter()
        .filter(|d| d.path == "notes/huge.md")
        .collect();
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].code, "too-large");
    assert!(d[0].message.contains("52.4 MB"), "{}", d[0]);
    assert_eq!(loaded.built.campaign.pcs.len(), 2);
}

#[test]
fn md_extension_in_any_case_is_stripped_once() {
    let s = Scratch::empty("ext");
    s.write("notes/Shout.MD", "# Loud\n")
        .write("notes/double.md.md", "# Double\n")
        .write(
            "notes/links.md",
            "[[Shout]] [[double.md]] [[notes/Shout.MD]]\n",
        );
    let loaded = s.load();
    let v = &loaded.vault;
    assert_eq!(note(v, "notes/Shout.MD").stem, "Shout");
    assert_eq!(note(v, "notes/double.md.md").stem, "double.md");
    assert_eq!(resolved_path(v, "Shout").as_deref(), Some("notes/Shout.MD"));
    assert_eq!(
        resolved_path(v, "double.md").as_deref(),
        Some("notes/double.md.md")
    );
    assert_eq!(triples(&v.diagnostics()), vec![], "every link resolves");
}

#[test]
fn a_missing_vault_folder_is_an_error_not_a_panic() {
    let s = Scratch::empty("gone");
    let missing = s.root.join("nope");
    assert!(Vault::load(&missing).is_err());
    let file = s.root.join("file.md");
    std::fs::write(&file, "x").expect("write");
    assert!(Vault::load(&file).is_err());
}

// ---------------------------------------------------------------- properties

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Any bytes parse without panicking, and every diagnostic points inside the file.
    #[test]
    fn any_bytes_parse(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let n = Note::parse("x.md", &bytes);
        let lines = bytes.iter().filter(|&&b| b == b'\n' || b == b'\r').count() + 1;
        for d in &n.diagnostics {
            prop_assert!(d.line <= lines, "{d} beyond {lines} lines");
        }
    }

    /// Note-shaped text: frontmatter fences, YAML-ish keys, links, comments, code fences.
    #[test]
    fn note_shaped_text_parses(
        parts in proptest::collection::vec(
            prop_oneof![
                Just("---\n"), Just("name: A\n"), Just("hp: ten\n"), Just("- x\n"),
                Just("[[A|b]] "), Just("![[c.png]]"), Just("%%"), Just("```dataview\n"),
                Just("```\n"), Just("# H\n"), Just("> [!note] t\n"), Just("k:: v\n"),
                Just("\r\n"), Just("\u{feff}"), Just("<% x %>"), Just("#tag "), Just("é"),
            ],
            0..30,
        )
    ) {
        let text: String = parts.concat();
        let n = Note::parse("n.md", text.as_bytes());
        let lines = text.matches('\n').count() + 1;
        for d in &n.diagnostics {
            prop_assert!(d.line <= lines, "{d} beyond {lines} lines");
        }
        for l in &n.links {
            prop_assert!(l.line >= 1 && l.line as usize <= lines);
        }
        for b in &n.body.blocks {
            prop_assert!(b.line >= 1 && b.line as usize <= lines);
            prop_assert!(b.kind != BlockKind::Heading(0));
        }
    }
}

#[test]
fn a_megabyte_link_target_and_value_load_and_the_other_links_resolve() {
    let s = Scratch::of("split-party");
    let huge = "x".repeat(2 * 1024 * 1024);
    let value = "y ".repeat(400 * 1024); // under the 1 MB frontmatter cap
    s.write(
        "notes/paste.md",
        &format!(
            "---\nrelated: \"{value}\"\n---\n# Paste\n\nSee [[Ferryman]], [[{huge}]] and [[Nowhere Else]].\n"
        ),
    );
    let loaded = s.load();
    let v = &loaded.vault;
    let n = v
        .notes
        .iter()
        .find(|n| n.path == "notes/paste.md")
        .expect("the note is read");
    assert_eq!(n.links.len(), 3);
    assert_eq!(n.links[1].target.note.len(), huge.len());
    assert_eq!(
        n.frontmatter.text(&["related"]).map(|t| t.len()),
        Some(value.trim().len())
    );
    // The huge target is looked up like any other, and lookups after it still work.
    let d = loaded.diagnostics();
    let here: Vec<_> = d
        .iter()
        .filter(|d| d.path == "notes/paste.md")
        .map(|d| d.message.clone())
        .collect();
    assert!(here.iter().all(|m| !m.contains("[[Ferryman]]")), "{here:?}");
    // Quoted in its problem by its start, not whole.
    assert!(
        here.iter()
            .any(|m| m.starts_with("[[xxxx") && m.contains("…]]") && m.len() < 400),
        "{:?}",
        here.iter().map(|m| m.len()).collect::<Vec<_>>()
    );
    assert_eq!(
        resolved_path(v, "Ferryman").as_deref(),
        Some("canon/npcs/ferryman.md")
    );
    assert_eq!(resolved_path(v, &huge), None);
    assert_eq!(
        resolved_path(v, "Ferryman").as_deref(),
        Some("canon/npcs/ferryman.md")
    );
}
