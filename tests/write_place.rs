//! Write-back lands where the GM keeps things: the campaign's timeline (not a reference
//! note tagged `timeline`), under the vault's own period headings, the clock in the note or
//! file the vault keeps it in (vaultdm's own `.vaultdm/clock.json` when it keeps none), new
//! threads as the vault's quest notes or refused with the reason. Each fixture gets a
//! scripted session — every file byte for byte after each command, `check` clean, then
//! every set reverted gives back the original bytes and folders.

use crate::support;

use crate::support::fake_llm::{openai_sse, FakeLlm, Scripted};
use assert_cmd::Command;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn cmd(vault: &Path) -> Command {
    let mut c = Command::cargo_bin("vaultdm").expect("bin");
    c.env_clear()
        .env("HOME", vault.join("no-home"))
        .env("OPENAI_API_KEY", "sk-test-000111222333444")
        .arg("--vault")
        .arg(vault);
    c
}

fn out_text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A GM command through `vaultdm ask`; it must succeed. Returns what was said.
fn gm(vault: &Path, line: &str) -> String {
    let o = cmd(vault)
        .args(["ask", "--session", "s", line])
        .output()
        .expect("runs");
    assert!(o.status.success(), "{line}: {}", out_text(&o));
    out_text(&o)
}

/// A GM command that must be refused (exit 2). Returns what was said.
fn refused(vault: &Path, line: &str) -> String {
    let o = cmd(vault)
        .args(["ask", "--session", "s", line])
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(2), "{line}: {}", out_text(&o));
    out_text(&o)
}

fn read(vault: &Path, rel: &str) -> String {
    std::fs::read_to_string(vault.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The DM proposes `json` (a `vaultdm-changes` block from the fake server) in session `s`;
/// returns what `ask` said.
async fn dm_proposes(vault: &Path, json: &str) -> String {
    let reply = format!("The story moves on.\n```vaultdm-changes\n{json}\n```\n");
    let fake = FakeLlm::start(vec![Scripted::sse(openai_sse(
        &[reply.as_str()],
        Some("stop"),
        true,
        true,
    ))])
    .await;
    let base = fake.base_url_v1();
    let root = vault.to_path_buf();
    let o = tokio::task::spawn_blocking(move || {
        cmd(&root)
            .args([
                "ask",
                "--session",
                "s",
                "--model",
                "m",
                "--base-url",
                &base,
                "What happens?",
            ])
            .output()
            .expect("runs")
    })
    .await
    .expect("join");
    assert!(o.status.success(), "{}", out_text(&o));
    out_text(&o)
}

fn accept_first(vault: &Path) -> String {
    let o = cmd(vault)
        .args(["review", "--session", "s", "--accept", "1"])
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", out_text(&o));
    out_text(&o)
}

/// Every file and folder of the vault but the session's own (its log under `.vaultdm/`
/// and its transcript under `sessions/`).
fn state(vault: &Path) -> (BTreeMap<String, Vec<u8>>, BTreeSet<String>) {
    let own = |k: &str| k.starts_with(".vaultdm") || k.starts_with("sessions") || k.is_empty();
    let files = support::all_files(vault)
        .into_iter()
        .filter(|(k, _)| !own(k))
        .collect();
    let dirs = walkdir::WalkDir::new(vault)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_dir())
        .filter_map(|e| {
            e.path()
                .strip_prefix(vault)
                .ok()
                .map(|p| p.to_string_lossy().replace('\\', "/"))
        })
        .filter(|k| !own(k))
        .collect();
    (files, dirs)
}

fn check_clean(vault: &Path) {
    let o = cmd(vault).arg("check").output().expect("runs");
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "check failed:\n{text}");
    assert!(text.contains("0 errors, 0 warnings"), "{text}");
}

/// Reverts every applied set of session `s`, newest first; returns how many.
fn revert_all(vault: &Path) -> usize {
    let mut n = 0;
    loop {
        let o = cmd(vault)
            .args(["review", "--session", "s", "--revert"])
            .output()
            .expect("runs");
        if !o.status.success() {
            let said = out_text(&o);
            assert!(!said.contains("edited after"), "{said}");
            return n;
        }
        n += 1;
        assert!(n < 50, "revert never ends");
    }
}

fn recent_events(vault: &Path) -> Vec<String> {
    let o = cmd(vault).arg("context").output().expect("runs");
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    text.split("### Recent events\n")
        .nth(1)
        .unwrap_or("")
        .lines()
        .take_while(|l| l.starts_with("- "))
        .map(str::to_string)
        .collect()
}

struct Vault {
    _s: support::Scratch,
    root: PathBuf,
}

fn vault(name: &str) -> Vault {
    let s = support::Scratch::of(name);
    let root = s.root.clone();
    Vault { _s: s, root }
}

/// Several notes tagged `timeline` (a city's holidays, a history page, a king list): only
/// the campaign's `Timeline` is read for recent events and written by `/event`; the day
/// lives in the party note's `current_day`, and `/day` writes it there; a new thread is a
/// quest note like the vault's others; `/resolve` writes the vault's own closing word.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reference_timelines_are_left_alone_and_the_party_note_keeps_the_day() {
    let v = vault("place-reference-timelines");
    let root = v.root.as_path();
    let original = state(root);
    let tl = "Campaign/Timeline.md";
    let party = "Campaign/The Lantern Company.md";

    let said = gm(root, "/event The ferryman is found drowned.");
    assert!(
        said.contains("timeline Day 4: + The ferryman is found drowned."),
        "{said}"
    );
    assert_eq!(
        read(root, tl),
        "---\ntags: [timeline]\n---\n# Timeline\n\n## Day 3\n- The party reaches Harrowgate by the river road.\n- Wren Ashby wins a dice game against the ferryman.\n\n## Day 4 — evening\n- The bell of Saint Aude is found missing from its tower.\n- The ferryman is found drowned.\n"
    );

    let said = gm(root, "/day +1 dawn");
    assert!(
        said.contains("clock: Day 4 evening -> Day 5 dawn"),
        "{said}"
    );
    assert_eq!(
        read(root, party),
        "---\ntype: party\ncurrent_day: 5\ntime_of_day: dawn\n---\n# The Lantern Company\n\nThe party: [[Wren Ashby]] and [[Tobin Marsh]].\n"
    );

    gm(root, "/event Sister Elna rings a borrowed bell.");
    assert_eq!(
        read(root, tl),
        "---\ntags: [timeline]\n---\n# Timeline\n\n## Day 3\n- The party reaches Harrowgate by the river road.\n- Wren Ashby wins a dice game against the ferryman.\n\n## Day 4 — evening\n- The bell of Saint Aude is found missing from its tower.\n- The ferryman is found drowned.\n\n## Day 5 — dawn\n- Sister Elna rings a borrowed bell.\n"
    );

    gm(root, "/resolve the missing bell");
    assert_eq!(
        read(root, "Quests/The Missing Bell.md"),
        "---\ntype: quest\nstatus: completed\npriority: high\ntags: [quest, harrowgate]\nsummary: Find who took the bell of Saint Aude.\n---\n# The Missing Bell\n\nSister Elna swears the tower was locked.\n"
    );

    let said = dm_proposes(
        root,
        r#"[{"op":"new_thread","title":"The Drowned Ferryman","priority":"urgent","summary":"Someone held the ferryman under.","next":"Ask at the east quay."}]"#,
    )
    .await;
    assert!(
        said.contains("new thread (urgent): The Drowned Ferryman (Quests/The Drowned Ferryman.md)"),
        "{said}"
    );
    accept_first(root);
    assert_eq!(
        read(root, "Quests/The Drowned Ferryman.md"),
        "---\ntype: quest\nstatus: active\npriority: urgent\ntags: [quest]\nsummary: Someone held the ferryman under.\n---\n# The Drowned Ferryman\n\nNext: Ask at the east quay.\n",
        "in the shape of the folder's quest notes"
    );

    // The reference notes were never written, and the context reads the campaign's timeline.
    let now = state(root);
    for rel in [
        "Lore/Holidays of the City.md",
        "Lore/History of the Vale.md",
        "Lore/Reign of the River Kings.md",
    ] {
        assert_eq!(now.0.get(rel), original.0.get(rel), "{rel}");
    }
    let events = recent_events(root);
    assert_eq!(
        events.last().map(String::as_str),
        Some("- Day 5: Sister Elna rings a borrowed bell."),
        "{events:?}"
    );
    assert!(events.iter().all(|e| e.starts_with("- Day ")), "{events:?}");
    check_clean(root);

    assert_eq!(revert_all(root), 5);
    assert_eq!(
        state(root),
        original,
        "revert of everything gives back bytes and folders"
    );
}

/// A timeline in `## Year N` sections that ends with `## Open Mysteries`: events go under
/// the latest year, never after the mysteries and never as a `## Day N` of their own; the
/// clock, which the vault does not keep, goes to `.vaultdm/clock.json` (no `canon/`
/// folder); recent events stay the latest years, not "Ancient Times"; a new thread in a
/// vault that keeps its quests as a checklist is refused with the reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn year_sections_take_events_under_the_latest_year() {
    let v = vault("place-year-sections");
    let root = v.root.as_path();
    let original = state(root);
    let tl = "World/Timeline.md";
    let head = "# Timeline of the Thornmarch\n\n## Ancient Times\n- The Thorn Kings raise the standing stones.\n- The stones go silent.\n\n## Year 1\n- Fort Brambleholt is built on the old king-road.\n\n## Year 2\n- A wolf-winter closes the passes.\n- The garrison at Brambleholt is halved.\n\n## Year 3\n- The party arrives at Brambleholt with the spring mule-train.\n- Captain Idris Vell hires the party to scout the stones.\n";
    let tail = "\n## Open Mysteries\n- Who woke the stones?\n- Where did the Thorn Kings go?\n";

    // No clock is needed: the event goes under the latest year.
    let said = gm(root, "/event The stones hum at dusk.");
    assert!(
        said.contains("timeline Year 3: + The stones hum at dusk."),
        "{said}"
    );
    assert_eq!(
        read(root, tl),
        format!("{head}- The stones hum at dusk.\n{tail}")
    );

    let said = gm(root, "/day 2 dusk");
    assert!(said.contains("clock: unset -> Day 2 dusk"), "{said}");
    assert_eq!(
        read(root, ".vaultdm/clock.json"),
        "{\"current_day\": 2, \"current_time\": \"dusk\"}\n"
    );
    assert!(
        !root.join("canon").exists(),
        "no canon/ folder in a vault that had none"
    );

    gm(root, "/event Maelis hears a name in the humming.");
    assert_eq!(
        read(root, tl),
        format!("{head}- The stones hum at dusk.\n- Maelis hears a name in the humming.\n{tail}")
    );
    // A day number has no place in a calendar of years.
    let said = dm_proposes(root, r#"[{"op":"event","text":"A rider comes.","day":9}]"#).await;
    assert!(
        said.contains("is dated by the vault's own calendar (its latest section is \"Year 3\")"),
        "{said}"
    );

    assert_eq!(
        recent_events(root),
        [
            "- Year 2: The garrison at Brambleholt is halved.",
            "- Year 3: The party arrives at Brambleholt with the spring mule-train.",
            "- Year 3: Captain Idris Vell hires the party to scout the stones.",
            "- Year 3: The stones hum at dusk.",
            "- Year 3: Maelis hears a name in the humming.",
        ]
    );

    let said = dm_proposes(
        root,
        r#"[{"op":"new_thread","title":"The Humming Name","priority":"high"}]"#,
    )
    .await;
    assert!(
        said.contains("this vault keeps its quests as a checklist in Quest Log.md; add \"The Humming Name\" there by hand"),
        "{said}"
    );
    check_clean(root);

    assert_eq!(revert_all(root), 3);
    assert_eq!(
        state(root),
        original,
        "revert of everything gives back bytes and folders"
    );
    assert!(!root.join(".vaultdm/clock.json").exists());
}

/// A campaign note keeps the date in the vault's own calendar (`date: 1500-Ches-14`):
/// vaultdm cannot count it, so `/day +1` is refused with the reason and writes nothing, the
/// time of day is written beside it, events go under the latest dated heading (before the
/// trailing `## Sources`), and a new thread in a vault with no quests is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_calendar_vaultdm_cannot_count_is_refused_with_the_reason() {
    let v = vault("place-calendar");
    let root = v.root.as_path();
    let original = state(root);

    let said = refused(root, "/day +1");
    assert!(
        said.contains("the campaign's date is \"1500-Ches-14\" (Campaign/Campaign.md, `date:`), a calendar vaultdm cannot count in days"),
        "{said}"
    );
    assert_eq!(state(root), original);

    gm(root, "/day dusk");
    assert_eq!(
        read(root, "Campaign/Campaign.md"),
        "---\ntype: campaign\ndate: 1500-Ches-14\ntime: dusk\n---\n# The Salt Road\n\nOur Forgotten Realms game along the Sword Coast.\n"
    );

    let said = gm(root, "/event Osric pays the ferryman in salt.");
    assert!(
        said.contains("timeline 1500-Ches-14: + Osric pays the ferryman in salt."),
        "{said}"
    );
    assert_eq!(
        read(root, "Campaign/Timeline.md"),
        "# Timeline\n\n## 1500-Ches-12\n- The caravan leaves Waterdeep by the south gate.\n\n## 1500-Ches-14\n- Bandits strike the caravan at Ironstone Ford.\n- Dagny Holm takes an arrow in the shoulder.\n- Osric pays the ferryman in salt.\n\n## Sources\n- Campaign calendar: Harptos.\n"
    );

    let said = dm_proposes(
        root,
        r#"[{"op":"new_thread","title":"The Zhentarim Debt","priority":"medium"}]"#,
    )
    .await;
    assert!(
        said.contains("this vault keeps no quests vaultdm can add to (no quest notes, no canon/open-threads.md)"),
        "{said}"
    );
    assert!(!root.join("canon").exists());
    check_clean(root);

    assert_eq!(revert_all(root), 2);
    assert_eq!(
        state(root),
        original,
        "revert of everything gives back bytes and folders"
    );
}

/// An adopted vault with no timeline gets a `Timeline.md` at its top (read as the timeline
/// by its name, never `canon/timeline.md`), and the revert removes it again.
#[test]
fn an_event_in_a_vault_without_a_timeline_makes_one_at_its_top() {
    let v = vault("place-calendar");
    let root = v.root.as_path();
    std::fs::remove_file(root.join("Campaign/Timeline.md")).expect("rm");
    std::fs::write(
        root.join("Campaign/Campaign.md"),
        "---\ntype: campaign\ncurrent_day: 3\n---\n# The Salt Road\n",
    )
    .expect("write");
    let original = state(root);
    let said = gm(root, "/event The caravan reaches Daggerford.");
    assert!(
        said.contains("timeline Day 3: + The caravan reaches Daggerford."),
        "{said}"
    );
    assert_eq!(
        read(root, "Timeline.md"),
        "# Timeline\n\n## Day 3\n- The caravan reaches Daggerford.\n"
    );
    assert!(!root.join("canon").exists());
    assert_eq!(
        recent_events(root),
        ["- Day 3: The caravan reaches Daggerford."]
    );
    check_clean(root);
    assert_eq!(revert_all(root), 1);
    assert_eq!(state(root), original);
}

/// Live canon (a chat's, reloaded after each write) follows the clock where the vault keeps
/// it — vaultdm's own `.vaultdm/clock.json`, a party note's `current_day` — and keeps the
/// campaign's timeline when a reference note tagged `timeline` changes: the same campaign
/// as a cold load.
#[test]
fn live_canon_follows_the_clock_and_the_timeline_where_the_vault_keeps_them() {
    let party = "---\ntype: party\ncurrent_day: 9\ntime_of_day: noon\n---\n# The Lantern Company\n\nThe party: [[Wren Ashby]] and [[Tobin Marsh]].\n";
    for (fixture, rel, text, day) in [
        (
            "place-year-sections",
            ".vaultdm/clock.json",
            "{\"current_day\": 7, \"current_time\": \"noon\"}\n",
            7,
        ),
        (
            "place-reference-timelines",
            "Campaign/The Lantern Company.md",
            party,
            9,
        ),
    ] {
        let s = support::Scratch::of(fixture);
        let mut live = vaultdm::watch::Live::load(&s.root).expect("loads");
        s.write(rel, text);
        live.apply(&[s.root.join(rel)]);
        let cold = vaultdm::canon::Loaded::load(&s.root).expect("cold load");
        assert_eq!(live.campaign(), &*cold.built.campaign, "{fixture}");
        let c = live.campaign();
        assert_eq!(
            (c.day, c.time.as_deref()),
            (Some(day), Some("noon")),
            "{fixture}"
        );
    }
    let s = support::Scratch::of("place-reference-timelines");
    let mut live = vaultdm::watch::Live::load(&s.root).expect("loads");
    let rel = "Lore/Holidays of the City.md";
    s.edit(rel, "## Lantern Night", "## Day 1 of Lantern Night");
    live.apply(&[s.root.join(rel)]);
    let cold = vaultdm::canon::Loaded::load(&s.root).expect("cold load");
    assert_eq!(live.campaign(), &*cold.built.campaign);
    assert_eq!(
        live.campaign().timeline.as_deref(),
        Some("Campaign/Timeline.md"),
        "a note named Timeline stays the campaign's timeline"
    );
}

mod agreement {
    use proptest::prelude::*;
    use vaultdm::canon::{build, CanonFiles};
    use vaultdm::config::Config;
    use vaultdm::vault::edit;
    use vaultdm::vault::{Note, Vault};

    /// A heading of a timeline: day, a date of the vault's own calendar, a moment without a
    /// date, or a section that is no moment.
    fn heading() -> impl Strategy<Value = String> {
        prop_oneof![
            (1i64..40).prop_map(|d| format!("Day {d}")),
            (1i64..900).prop_map(|y| format!("Year {y}")),
            (1u32..28).prop_map(|d| format!("2024-03-{d:02}")),
            (1u32..30).prop_map(|d| format!("{d} Mirtul 1492")),
            (1u32..30).prop_map(|d| format!("1500-Ches-{d}")),
            Just("Ancient Times".to_string()),
            Just("Open Mysteries".to_string()),
            Just("Notes".to_string()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Whatever periods a timeline is cut into, the event `/event` appends is read back
        /// by canon under the period the writer said it went to, and nothing else moves.
        #[test]
        fn the_reader_finds_the_event_where_the_writer_put_it(
            sections in prop::collection::vec((heading(), 0usize..3, 2usize..4), 1..7),
            day in 1i64..40,
            crlf in any::<bool>(),
        ) {
            let eol = if crlf { "\r\n" } else { "\n" };
            let mut text = format!("# Timeline{eol}");
            for (k, (h, n, level)) in sections.iter().enumerate() {
                text.push_str(&format!("{eol}{} {h}{eol}", "#".repeat(*level)));
                for i in 0..*n {
                    text.push_str(&format!("- event {k}.{i}{eol}"));
                }
                if *n == 0 && k % 2 == 1 {
                    text.push_str(&format!("{eol}Prose of section {k}.{eol}"));
                }
            }
            let Ok(place) = edit::event_place(&text, day) else {
                return Ok(()); // two headings for one day: refused, nothing written
            };
            let after = edit::append_event(&text, day, None, "NEW").expect("append");
            let read = |t: &str| {
                let v = Vault::from_notes(
                    std::path::PathBuf::from("."),
                    vec![Note::parse("World/Timeline.md", t.as_bytes())],
                    vec![],
                );
                build(&v, &Config::default(), &CanonFiles::default()).campaign.events.clone()
            };
            let (before, now) = (read(&text), read(&after));
            let new: Vec<_> = now.iter().filter(|e| e.text == "NEW").collect();
            prop_assert_eq!(new.len(), 1, "{}", after);
            prop_assert_eq!(&new[0].when, &place.label(), "{}", after);
            let old: Vec<&str> = now.iter().filter(|e| e.text != "NEW").map(|e| e.text.as_str()).collect();
            let was: Vec<&str> = before.iter().map(|e| e.text.as_str()).collect();
            prop_assert_eq!(old, was);
            // Only lines were added: the old text is still there, line for line, in order.
            let mut rest = after.lines();
            for l in text.lines() {
                prop_assert!(rest.any(|a| a == l), "{} lost from\n{}", l, after);
            }
        }
    }
}
