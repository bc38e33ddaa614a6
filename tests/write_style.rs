//! Write-back in the GM's own style (issue 24, item 4 and the frontmatter-value damage): on
//! fixture vaults laid out as real GMs keep them, each command through `vaultdm ask` leaves
//! the note byte for byte as expected, and the next context reads back what was written.

use crate::support;

use crate::support::Scratch;
use assert_cmd::Command;
use std::path::Path;
use vaultdm::write::{apply, plan, Change};

fn ask(vault: &Path, line: &str) -> String {
    let out = Command::cargo_bin("vaultdm")
        .expect("bin")
        .env_clear()
        .env("HOME", vault.join("no-home"))
        .arg("--vault")
        .arg(vault)
        .args(["ask", "--session", "s1", line])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{line}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn ask_fails(vault: &Path, line: &str) -> String {
    let out = Command::cargo_bin("vaultdm")
        .expect("bin")
        .env_clear()
        .env("HOME", vault.join("no-home"))
        .arg("--vault")
        .arg(vault)
        .args(["ask", "--session", "s1", line])
        .output()
        .expect("runs");
    assert!(!out.status.success(), "{line} should fail");
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn context(vault: &Path, message: &str) -> String {
    let out = Command::cargo_bin("vaultdm")
        .expect("bin")
        .env_clear()
        .env("HOME", vault.join("no-home"))
        .arg("--vault")
        .arg(vault)
        .args(["context", "--light", "-m", message])
        .output()
        .expect("runs");
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn check_clean(vault: &Path) {
    let out = Command::cargo_bin("vaultdm")
        .expect("bin")
        .env_clear()
        .env("HOME", vault.join("no-home"))
        .arg("--vault")
        .arg(vault)
        .arg("check")
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(text.contains("0 errors, 0 warnings"), "{text}");
}

fn read(vault: &Path, rel: &str) -> String {
    std::fs::read_to_string(vault.join(rel)).expect("read")
}

#[test]
fn a_status_kept_in_a_tag_is_changed_in_the_tag_in_the_vaults_own_words() {
    let v = Scratch::of("style-tags");
    // The vault writes the dead as `npc/deceased` (Old Wyn): that word is used.
    let said = ask(&v.root, "/set hob status dead");
    assert!(
        said.contains("Hob Greaves: status active -> dead (tag npc/alive -> npc/deceased)"),
        "{said}"
    );
    assert_eq!(
        read(&v.root, "NPCs/Hob Greaves.md"),
        "---\ntags: [npc/deceased, iff/positive]\nrole: miller\nlocation: \"[[sew-and-tell|Sew and Tell]]\"\n---\n# Hob Greaves\n\nThe Greywater miller, flour to the elbows, owes the tailor a favour.\n"
    );
    assert!(context(&v.root, "Hob Greaves").contains("Hob Greaves - miller [deceased]"));
    // An inline `#npc/alive` in the body: the hashtag changes, nothing is added.
    ask(&v.root, "/set marla status missing");
    assert_eq!(
        read(&v.root, "NPCs/Marla Quist.md"),
        "# Marla Quist\n\n#npc/missing #iff/negative\n\nFence and pawnbroker on Harbour Row. Lives at [[places/harbour-row]].\n\nlocation:: [[places/harbour-row|Harbour Row]]\n"
    );
    // And back to life: `alive` is the living tag canon reads.
    ask(&v.root, "/set hob status active");
    assert!(
        read(&v.root, "NPCs/Hob Greaves.md").starts_with("---\ntags: [npc/alive, iff/positive]\n")
    );
    // A word canon does not read from a tag is refused, not written.
    let before = read(&v.root, "NPCs/Sister Vell.md");
    let err = ask_fails(&v.root, "/set sister vell status wounded");
    assert!(err.contains("kept in the tag `npc/alive`"), "{err}");
    assert_eq!(read(&v.root, "NPCs/Sister Vell.md"), before);
    // A status key beside a status tag: the key is what canon reads, and the tag follows it.
    v.write(
        "NPCs/Dara Finch.md",
        "---\nstatus: alive\ntags: [npc/alive]\n---\n# Dara Finch\n\nRows the night ferry.\n",
    );
    let said = ask(&v.root, "/set dara status dead");
    assert!(
        said.contains("(and tag npc/alive -> npc/deceased)"),
        "{said}"
    );
    assert_eq!(
        read(&v.root, "NPCs/Dara Finch.md"),
        "---\nstatus: dead\ntags: [npc/deceased]\n---\n# Dara Finch\n\nRows the night ferry.\n"
    );
    check_clean(&v.root);
}

#[test]
fn status_words_follow_the_vaults_case() {
    let v = Scratch::of("style-capitals");
    let said = ask(&v.root, "/set aldric status dead");
    assert!(said.contains("Aldric Venn: status Alive -> Dead"), "{said}");
    assert_eq!(
        read(&v.root, "World/People/Aldric Venn.md"),
        "---\ntype: NPC\nstatus: Dead\nrole: harbourmaster\nlocation: \"[[World/Places/Old Mill|the mill]]\"\n---\n# Aldric Venn\n\nCounts every barrel twice and trusts no one who counts once.\n"
    );
}

#[test]
fn a_statblock_npc_keeps_its_max_beside_the_current_hp() {
    let v = Scratch::of("style-tags");
    assert!(context(&v.root, "the Bone Warden").contains("HP 52/52"));
    let said = ask(&v.root, "/set bone warden hp 42");
    assert!(said.contains("Bone Warden: HP 52/52 -> 42/52"), "{said}");
    assert_eq!(
        read(&v.root, "NPCs/Bone Warden.md"),
        "---\ntags: [npc/alive, iff/negative]\nlocation: \"[[sew-and-tell|Sew and Tell]]\"\nhp_current: 42\n---\n# Bone Warden\n\nA skeleton in a tailor's apron that guards the cellar.\n\n```statblock\nname: Bone Warden\nsize: Medium\ntype: undead\nac: 15\nhp: 52\nspeed: 30 ft.\n```\n"
    );
    assert!(context(&v.root, "the Bone Warden").contains("HP 42/52"));
    check_clean(&v.root);
}

#[test]
fn annotations_after_a_number_are_kept() {
    let v = Scratch::of("style-tags");
    ask(&v.root, "/set sister vell hp 30");
    ask(&v.root, "/set sister vell ac 14");
    assert_eq!(
        read(&v.root, "NPCs/Sister Vell.md"),
        "---\ntags: [npc/alive, iff/positive]\nrole: healer\nhp: 30 (5d8 + 10)\nac: 14 (natural armor)\nlocation: \"[[the-nymphs-knickers|The Nymph's Knickers]]\"\n---\n# Sister Vell\n\nPatches up the dockhands for a song.\n"
    );
    let ctx = context(&v.root, "Sister Vell");
    assert!(ctx.contains("HP 30 | AC 14"), "{ctx}");
}

#[test]
fn links_keep_their_form() {
    let v = Scratch::of("style-tags");
    // File name and display text.
    ask(&v.root, "/move hob to the nymph's knickers");
    assert_eq!(
        read(&v.root, "NPCs/Hob Greaves.md"),
        "---\ntags: [npc/alive, iff/positive]\nrole: miller\nlocation: \"[[the-nymphs-knickers|The Nymph's Knickers]]\"\n---\n# Hob Greaves\n\nThe Greywater miller, flour to the elbows, owes the tailor a favour.\n"
    );
    // A path stays a path (in an inline field).
    ask(&v.root, "/move marla to sew and tell");
    assert!(read(&v.root, "NPCs/Marla Quist.md")
        .ends_with("\nlocation:: [[Places/sew-and-tell|Sew and Tell]]\n"));
    let c = Scratch::of("style-capitals");
    ask(&c.root, "/move brisa to old mill");
    assert!(read(&c.root, "World/People/Brisa Thorn.md")
        .contains("\nlocation: \"[[World/Places/Old Mill]]\"\n"));
    assert!(context(&v.root, "Hob Greaves").contains("at The Nymph's Knickers"));
    check_clean(&v.root);
}

#[test]
fn a_flow_mapping_frontmatter_is_edited_inside_the_mapping() {
    let v = Scratch::of("style-tags");
    let said = ask(&v.root, "/set kit hp 5");
    assert!(said.contains("Kit Calloway: HP 20/24 -> 5/24"), "{said}");
    ask(&v.root, "/set kit gold 30");
    ask(&v.root, "/set kit ac 13");
    assert_eq!(
        read(&v.root, "Characters/Kit Calloway.md"),
        "---\n{name: Kit Calloway, class: Ranger, player: Ana, hp: 5, hp_max: 24, location: \"[[harbour-row|Harbour Row]]\", gold: 30, ac: 13}\n---\n# Kit Calloway\n\nA ranger from the fens, in town to sell pelts.\n"
    );
    let ctx = context(&v.root, "Kit Calloway");
    assert!(
        ctx.contains("PC Kit Calloway (Ranger) | HP 5/24 | AC 13 | at Harbour Row"),
        "{ctx}"
    );
    // Canon still reads every key of the mapping.
    let loaded = support::load(&v.root);
    let kit = loaded
        .built
        .campaign
        .pcs
        .iter()
        .find(|p| p.name == "Kit Calloway")
        .expect("Kit is a PC");
    assert_eq!(kit.class.as_deref(), Some("Ranger"));
    assert_eq!(kit.gold, Some(30));
    assert_eq!(kit.location.as_deref(), Some("Places/harbour-row.md"));
    assert_eq!(
        (kit.hp_current, kit.hp_max, kit.ac),
        (Some(5), Some(24), Some(13))
    );
    check_clean(&v.root);
}

#[test]
fn a_flow_mapping_vaultdm_cannot_edit_is_refused_with_the_reason() {
    let v = Scratch::of("style-tags");
    let text =
        "---\n{name: Kit Calloway, class: Ranger,\n hp: 20 and\n more}\n---\n# Kit Calloway\n";
    v.write("Characters/Kit Calloway.md", text);
    let err = ask_fails(&v.root, "/set kit hp 5");
    assert!(err.contains("one `{...}` mapping (line 2)"), "{err}");
    assert_eq!(read(&v.root, "Characters/Kit Calloway.md"), text);
}

#[test]
fn double_quotes_inside_a_value_are_kept() {
    let v = Scratch::of("style-tags");
    ask(&v.root, "/set hob role the \"Red\" Hand");
    ask(&v.root, "/set sister vell role \"the \\\"Red\\\" Hand\"");
    assert!(read(&v.root, "NPCs/Hob Greaves.md").contains("\nrole: the \"Red\" Hand\n"));
    assert!(read(&v.root, "NPCs/Sister Vell.md").contains("\nrole: the \"Red\" Hand\n"));
    let ctx = context(&v.root, "Hob Greaves and Sister Vell");
    assert!(ctx.contains("Hob Greaves - the \"Red\" Hand"), "{ctx}");
    assert!(ctx.contains("Sister Vell - the \"Red\" Hand"), "{ctx}");
    check_clean(&v.root);
}

#[test]
fn a_pc_tagged_party_is_written() {
    let v = Scratch::of("style-tags");
    let said = ask(&v.root, "/set Jinx hp 40");
    assert!(said.contains("Jinx: HP 21/40 -> 40/40"), "{said}");
    assert_eq!(
        read(&v.root, "Characters/Jinx.md"),
        "---\ntags: [party]\nclass: Rogue\nplayer: Sam\nlevel: 3\nhp: 40\nhp_max: 40\nlocation: \"[[harbour-row|Harbour Row]]\"\n---\n# Jinx\n\nA halfling pickpocket with a debt to Marla.\n"
    );
}

fn new_npc(root: &Path, name: &str, location: &str) -> plan::Plan {
    let loaded = support::load(root);
    let engine = support::engine(&loaded);
    let p = plan::plan(
        engine.campaign(),
        engine.matcher(),
        root,
        &[Change::NewNpc {
            name: name.into(),
            role: Some("net-mender".into()),
            location: Some(location.into()),
            disposition: None,
            summary: Some("Mends nets and hears everything.".into()),
        }],
    );
    assert!(p.rejected.is_empty(), "{:?}", p.rejected);
    apply::apply(root, &p).expect("applies");
    p
}

#[test]
fn new_notes_copy_the_vaults_typing_and_folder() {
    // Typed by tags, statuses in tags: `tags: [npc/alive]`, no `type:`, no `status:`; named
    // as the folder's notes are (`Pell Orrin.md` beside `Old Wyn.md`, `net-lofts.md` beside
    // `harbour-row.md`).
    let v = Scratch::of("style-tags");
    new_npc(&v.root, "Pell Orrin", "Harbour Row");
    assert_eq!(
        read(&v.root, "NPCs/Pell Orrin.md"),
        "---\nname: Pell Orrin\nrole: net-mender\nlocation: \"[[harbour-row|Harbour Row]]\"\ntags: [npc/alive]\n---\n# Pell Orrin\n\nMends nets and hears everything.\n"
    );
    assert!(context(&v.root, "Pell Orrin").contains("NPC Pell Orrin - net-mender [active]"));
    // A place in a vault whose places carry `place/<sort>` tags gets `place`.
    let loaded = support::load(&v.root);
    let engine = support::engine(&loaded);
    let p = plan::plan(
        engine.campaign(),
        engine.matcher(),
        &v.root,
        &[Change::NewLocation {
            name: "Net Lofts".into(),
            parent: None,
            description: Some("Where the nets dry.".into()),
        }],
    );
    assert!(p.rejected.is_empty(), "{:?}", p.rejected);
    apply::apply(&v.root, &p).expect("applies");
    assert_eq!(
        read(&v.root, "Places/net-lofts.md"),
        "---\nname: Net Lofts\ntags: [place]\n---\n# Net Lofts\n\n## Description\nWhere the nets dry.\n"
    );
    // Typed by `type: NPC`, statuses capitalised.
    let c = Scratch::of("style-capitals");
    new_npc(&c.root, "Pell Orrin", "Saltgate");
    assert_eq!(
        read(&c.root, "World/People/Pell Orrin.md"),
        "---\nname: Pell Orrin\ntype: NPC\nrole: net-mender\nstatus: Active\nlocation: \"[[World/Places/Saltgate]]\"\n---\n# Pell Orrin\n\nMends nets and hears everything.\n"
    );
    check_clean(&c.root);
}

#[test]
fn hp_above_max_or_below_the_floor_is_refused_with_the_max_named() {
    let v = Scratch::of("style-tags");
    let rel = "Characters/Kit Calloway.md";
    let before = read(&v.root, rel);
    let err = ask_fails(&v.root, "/set kit hp 30");
    assert!(
        err.contains("HP 30 would be above max HP 24 for Kit Calloway"),
        "{err}"
    );
    // `-50` is a change: 20 - 50 = -30, below -24.
    let err = ask_fails(&v.root, "/set kit hp -50");
    assert!(err.contains("below -24, the floor for max HP 24"), "{err}");
    assert_eq!(read(&v.root, rel), before);
    // Down to the floor is fine.
    ask(&v.root, "/set kit hp -44");
    assert!(read(&v.root, rel).contains(" hp: -24,"));
}

#[test]
fn hp_out_of_bounds_is_written_and_flagged_when_the_vault_says_so() {
    let v = Scratch::of("style-tags");
    v.write("vaultdm.toml", "[write]\nhp_bounds = \"flag\"\n");
    let said = ask(&v.root, "/set kit hp 30");
    assert!(
        said.contains("Kit Calloway: HP 20/24 -> 30/24 (flagged: above max HP 24)"),
        "{said}"
    );
    let said = ask(&v.root, "/set bone warden hp 60");
    assert!(said.contains("(flagged: above max HP 52)"), "{said}");
    let out = Command::cargo_bin("vaultdm")
        .expect("bin")
        .env_clear()
        .env("HOME", v.root.join("no-home"))
        .arg("--vault")
        .arg(&v.root)
        .arg("check")
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "Characters/Kit Calloway.md:2: warning[bad-value]: current HP 30 is above max HP 24"
        ),
        "{text}"
    );
    assert!(
        text.contains("NPCs/Bone Warden.md:4: warning[bad-value]: current HP 60 is above the statblock's hp 52"),
        "{text}"
    );
}

#[test]
fn a_dm_proposal_with_quotes_keeps_them() {
    let v = Scratch::of("style-tags");
    let loaded = support::load(&v.root);
    let engine = support::engine(&loaded);
    let p = plan::plan(
        engine.campaign(),
        engine.matcher(),
        &v.root,
        &[Change::Set {
            entity: "Hob".into(),
            field: "role".into(),
            value: serde_json::json!("miller, called \"Flour-Fist\" \\ the fen's \"friend\""),
        }],
    );
    assert!(p.rejected.is_empty(), "{:?}", p.rejected);
    apply::apply(&v.root, &p).expect("applies");
    assert!(read(&v.root, "NPCs/Hob Greaves.md")
        .contains("\nrole: miller, called \"Flour-Fist\" \\ the fen's \"friend\"\n"));
    let ctx = context(&v.root, "Hob Greaves");
    assert!(
        ctx.contains("Hob Greaves - miller, called \"Flour-Fist\" \\ the fen's \"friend\""),
        "{ctx}"
    );
}

#[test]
fn an_attitude_kept_in_a_tag_is_read_and_changed_in_the_tag() {
    let v = Scratch::of("style-tags");
    assert!(context(&v.root, "Hob Greaves").contains("Hob Greaves - miller [active] | positive |"));
    // The vault says `iff/negative` for the hostile.
    let said = ask(&v.root, "/set hob disposition hostile");
    assert!(
        said.contains(
            "Hob Greaves: disposition positive -> negative (tag iff/positive -> iff/negative)"
        ),
        "{said}"
    );
    assert_eq!(
        read(&v.root, "NPCs/Hob Greaves.md"),
        "---\ntags: [npc/alive, iff/negative]\nrole: miller\nlocation: \"[[sew-and-tell|Sew and Tell]]\"\n---\n# Hob Greaves\n\nThe Greywater miller, flour to the elbows, owes the tailor a favour.\n"
    );
    assert!(context(&v.root, "Hob Greaves").contains("| negative |"));
    let err = ask_fails(&v.root, "/set hob disposition wary but fair");
    assert!(err.contains("a tag holds one word"), "{err}");
    check_clean(&v.root);
}

/// The notes of the vault, without vaultdm's own folder.
fn notes(root: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut all = support::all_files(root);
    all.retain(|k, _| !k.starts_with(".vaultdm/") && !k.starts_with("no-home/"));
    all
}

/// The NPCs a Dataview-style query `FROM #npc/<word>` lists (the tag in `tags:` or in the
/// body, any case), by file name.
fn tagged(root: &Path, tag: &str) -> Vec<String> {
    let mut out: Vec<String> = notes(root)
        .into_iter()
        .filter(|(k, _)| k.starts_with("NPCs/"))
        .filter(|(_, bytes)| {
            let text = String::from_utf8_lossy(bytes).to_lowercase();
            text.split(|c: char| c.is_whitespace() || matches!(c, '[' | ']' | ',' | '"'))
                .any(|w| w.trim_start_matches('#') == tag)
        })
        .map(|(k, _)| {
            k.trim_start_matches("NPCs/")
                .trim_end_matches(".md")
                .to_string()
        })
        .collect();
    out.sort();
    out
}

#[test]
fn a_scripted_session_agrees_with_the_gms_tag_queries_and_reverts_to_the_same_bytes() {
    let v = Scratch::of("style-tags");
    let original = notes(&v.root);
    let script = [
        "/set hob status dead",
        "/set marla status captured",
        "/set bone warden hp 40",
        "/set sister vell hp 31",
        "/set sister vell ac 13",
        "/move sister vell to sew and tell",
        "/set kit hp 12",
        "/move kit to the nymph's knickers",
        "/set jinx hp 35",
        "/set bone warden disposition friendly",
    ];
    for line in script {
        ask(&v.root, line);
    }
    check_clean(&v.root);
    // The GM's own queries and the context agree on who is alive.
    assert_eq!(tagged(&v.root, "npc/alive"), ["Bone Warden", "Sister Vell"]);
    assert_eq!(tagged(&v.root, "npc/deceased"), ["Hob Greaves", "Old Wyn"]);
    assert_eq!(tagged(&v.root, "npc/captured"), ["Marla Quist"]);
    assert_eq!(
        tagged(&v.root, "iff/positive"),
        ["Bone Warden", "Hob Greaves", "Sister Vell"]
    );
    let loaded = support::load(&v.root);
    let c = &loaded.built.campaign;
    let status = |n: &str| {
        c.npcs
            .iter()
            .find(|x| x.name == n)
            .map(|x| x.status.clone())
            .expect("npc")
    };
    assert_eq!(status("Hob Greaves"), "deceased");
    assert_eq!(status("Marla Quist"), "captured");
    assert_eq!(status("Bone Warden"), "active");
    assert!(!notes(&v.root)
        .iter()
        .any(|(_, b)| String::from_utf8_lossy(b).contains("\nstatus:")));
    // Every change undone, newest first: the exact bytes and files come back.
    for _ in script {
        ask(&v.root, "/revert");
    }
    assert_eq!(notes(&v.root), original);
}

/// An adopted vault with no NPC yet gets its first NPC in a folder of its own at the top,
/// named by its title — never a new `canon/` folder.
#[test]
fn a_first_npc_in_an_adopted_vault_never_makes_a_canon_folder() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path();
    std::fs::create_dir_all(root.join("Party")).expect("dir");
    std::fs::create_dir_all(root.join("Places")).expect("dir");
    std::fs::write(
        root.join("Party/Rook.md"),
        "---\ntype: pc\nclass: Rogue\nlevel: 2\nlocation: \"[[Saltgate]]\"\n---\n# Rook\n",
    )
    .expect("pc");
    std::fs::write(
        root.join("Places/Saltgate.md"),
        "---\ntype: location\n---\n# Saltgate\n\nA port of grey stone.\n",
    )
    .expect("place");
    new_npc(root, "Pell Orrin", "Saltgate");
    assert!(!root.join("canon").exists());
    let text = read(root, "NPCs/Pell Orrin.md");
    assert!(
        text.starts_with("---\nname: Pell Orrin\n") && text.ends_with('\n'),
        "{text}"
    );
}

/// A PC whose HP is only a fact line of its sheet (`**HP:** 50 | **AC:** 16`): `/set` writes
/// the current HP beside it and the sheet's HP is then read as the maximum (`HP 43/50`); the
/// sheet's line is left as the GM wrote it.
#[test]
fn a_sheets_fact_line_hp_becomes_the_max_beside_a_written_current_hp() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path();
    std::fs::create_dir_all(root.join("Party")).expect("dir");
    let sheet = "---\nname: Rook\nclass: Rogue\nlevel: 5\ntags:\n  - party\n---\n# Rook\n\n**HP:** 50 | **AC:** 16 (leather)\n\nA cutpurse from the docks.\n";
    std::fs::write(root.join("Party/Rook.md"), sheet).expect("pc");
    ask(root, "/set rook hp -7");
    assert_eq!(
        read(root, "Party/Rook.md"),
        sheet.replace("  - party\n---", "  - party\nhp_current: 43\n---")
    );
    let ctx = context(root, "Rook");
    assert!(ctx.contains("HP 43/50"), "{ctx}");
}
