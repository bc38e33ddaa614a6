//! The command line, end to end: exit codes, output formats, `init`, how the vault is
//! found (`--vault` anywhere, `$VAULTDM_VAULT`, upwards from the working directory).

use crate::support;

use crate::support::{fixture, Scratch};
use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

/// The binary, run from the repository root with no vault in the environment.
fn vaultdm() -> Command {
    let mut cmd = Command::cargo_bin("vaultdm").expect("binary");
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("VAULTDM_VAULT");
    cmd
}

fn stdout_of(cmd: &mut Command) -> String {
    let out = cmd.assert().success().get_output().stdout.clone();
    String::from_utf8(out).expect("utf-8")
}

fn json_of(cmd: &mut Command) -> Value {
    serde_json::from_str(&stdout_of(cmd)).expect("valid JSON")
}

// ---------------------------------------------------------------- check

#[test]
fn check_on_the_template_is_clean_without_a_single_diagnostic() {
    vaultdm()
        .args(["check", "--vault", "vault-template"])
        .assert()
        .code(0)
        .stdout("checked 33 notes: 4 PCs, 13 NPCs, 9 locations, 7 threads, 20 events; 0 errors, 0 warnings\n")
        .stderr("");
}

#[test]
fn check_reports_every_entity_of_saltreach() {
    vaultdm()
        .args(["check", "--vault", "tests/fixtures/saltreach"])
        .assert()
        .code(0)
        .stdout(predicate::str::ends_with(
            "3 PCs, 16 NPCs, 8 locations, 5 threads, 12 events; 0 errors, 0 warnings\n",
        ));
}

#[test]
fn check_exits_1_on_errors() {
    vaultdm()
        .args(["check", "--vault", "tests/fixtures/broken"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "canon/npcs/yaml-error.md:3: error[yaml-syntax]: ",
        ))
        .stdout(predicate::str::contains(
            "    3 | role: spy: double agent\n",
        ))
        .stderr("");
}

#[test]
fn check_with_only_warnings_exits_0() {
    let s = support::Scratch::of("split-party");
    s.remove("canon/temporal-index.json");
    s.remove("canon/open-threads.md");
    vaultdm()
        .args(["check", "--vault"])
        .arg(&s.root)
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "canon/temporal-index.json:0: warning[no-temporal-index]",
        ))
        .stdout(predicate::str::contains(
            "canon/open-threads.md:0: info[no-threads]",
        ));
    vaultdm()
        .args(["check", "--vault", "tests/fixtures/no-canon"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(".:0: info[no-timeline]"));
}

#[test]
fn check_exits_2_when_the_vault_is_missing() {
    vaultdm()
        .args(["check", "--vault", "tests/fixtures/does-not-exist"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains(
            "does-not-exist: no such vault folder",
        ));
}

#[test]
fn check_json() {
    let out = vaultdm()
        .args([
            "check",
            "--vault",
            "tests/fixtures/broken",
            "--format",
            "json",
        ])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).expect("valid JSON");
    assert_eq!(v["pcs"], 3);
    assert_eq!(v["npcs"], 6);
    assert_eq!(v["notes"], 19);
    assert_eq!(v["errors"], 6);
    assert_eq!(v["warnings"], 7);
    let diags = v["diagnostics"].as_array().expect("diagnostics");
    assert_eq!(diags.len(), 17);
    let yaml = diags
        .iter()
        .find(|d| d["code"] == "yaml-syntax")
        .expect("yaml diagnostic");
    assert_eq!(yaml["path"], "canon/npcs/yaml-error.md");
    assert_eq!(yaml["line"], 3);
    assert_eq!(yaml["severity"], "error");
    assert!(yaml["message"]
        .as_str()
        .is_some_and(|m| m.contains("mapping values")));
}

#[test]
fn check_never_panics_on_a_hostile_vault() {
    let s = Scratch::of("broken");
    std::fs::File::create(s.root.join("notes/huge.md"))
        .and_then(|f| f.set_len(50 * 1024 * 1024))
        .expect("huge note");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&s.root, s.root.join("notes/loop")).expect("symlink");
        std::os::unix::fs::symlink("/etc", s.root.join("etc-link")).expect("symlink");
    }
    vaultdm()
        .args(["check", "--vault"])
        .arg(&s.root)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "notes/huge.md:0: error[too-large]",
        ))
        .stderr(predicate::str::contains("panicked").not());
}

// ---------------------------------------------------------------- init

#[test]
fn init_creates_a_clean_campaign_named_after_its_folder() {
    let s = Scratch::empty("parent");
    let dir = s.root.join("frost-road");
    vaultdm()
        .arg("init")
        .arg(&dir)
        .assert()
        .code(0)
        .stdout(predicate::str::starts_with("created "));
    let toml = std::fs::read_to_string(dir.join("vaultdm.toml")).expect("vaultdm.toml");
    assert!(toml.contains("name = \"Frost Road\"\n"), "{toml}");
    // Every template file is there, byte for byte (except the name).
    let template = fixture("../../vault-template");
    for rel in [
        "canon/open-threads.md",
        "canon/pcs/hesper-quill.md",
        "canon/temporal-index.json",
    ] {
        assert_eq!(
            std::fs::read(dir.join(rel)).expect("copied"),
            std::fs::read(template.join(rel)).expect("template"),
            "{rel}"
        );
    }
    vaultdm()
        .args(["check", "--vault"])
        .arg(&dir)
        .assert()
        .code(0)
        .stdout(predicate::str::ends_with("0 errors, 0 warnings\n"))
        .stdout(predicate::str::contains(": info[").not());
    vaultdm()
        .args(["context", "--vault"])
        .arg(&dir)
        .assert()
        .code(0)
        .stdout(predicate::str::starts_with(
            "## SESSION CONTEXT: Frost Road\n",
        ));
}

#[test]
fn init_name_flag_sets_the_campaign_name() {
    let s = Scratch::empty("parent");
    let dir = s.root.join("x");
    vaultdm()
        .arg("init")
        .arg(&dir)
        .args(["--name", "The \"Frost\" Road"])
        .assert()
        .code(0);
    let toml = std::fs::read_to_string(dir.join("vaultdm.toml")).expect("vaultdm.toml");
    let parsed: toml::Table = toml::from_str(&toml).expect("still valid TOML");
    assert_eq!(parsed["name"].as_str(), Some("The \"Frost\" Road"));
    assert!(parsed.contains_key("setting"));
}

#[test]
fn init_into_an_existing_empty_folder_works() {
    let s = Scratch::empty("empty-campaign");
    vaultdm().arg("init").arg(&s.root).assert().code(0);
    assert!(s.root.join("canon/timeline.md").is_file());
}

#[test]
fn init_refuses_a_non_empty_folder_and_touches_nothing() {
    let s = Scratch::empty("taken");
    s.write("notes.md", "mine\n");
    vaultdm()
        .arg("init")
        .arg(&s.root)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("folder is not empty"));
    assert_eq!(
        std::fs::read_to_string(s.root.join("notes.md")).expect("kept"),
        "mine\n"
    );
    assert!(!s.root.join("vaultdm.toml").exists());
}

// ---------------------------------------------------------------- context

#[test]
fn context_text_is_exactly_what_is_injected() {
    let text = stdout_of(vaultdm().args(["context", "--vault", "tests/fixtures/split-party"]));
    assert!(text.starts_with(
        "## SESSION CONTEXT: Split Party\nTwo crews, one city, one night.\nDay 2 - midnight\n"
    ));
    assert!(text.ends_with("- Day 2: Sable went down into the sewers.\n"));
    assert!(!text.contains("explain"));
}

#[test]
fn context_json() {
    let v = json_of(vaultdm().args([
        "context",
        "--vault",
        "tests/fixtures/split-party",
        "--message",
        "Where is the Rat King?",
        "--format",
        "json",
    ]));
    assert_eq!(v["mode"], "light");
    let text = v["text"].as_str().expect("text");
    assert!(text.starts_with("[Day 2 | midnight | Rook"));
    assert!(text.contains("- NPC The Rat King - sewer boss [active]"));
    assert!(v["tokens"].as_u64().is_some_and(|t| t > 10));
    let items = v["items"].as_array().expect("items");
    for i in items {
        let keys: Vec<_> = i.as_object().expect("object").keys().cloned().collect();
        assert_eq!(
            keys,
            ["included", "kind", "name", "reason", "source", "tokens"]
        );
    }
    let rat = items
        .iter()
        .find(|i| i["kind"] == "npc" && i["name"] == "The Rat King")
        .expect("Rat King");
    assert_eq!(rat["source"], "canon/npcs/ratking.md:1");
    assert_eq!(rat["included"], true);
    assert_eq!(rat["reason"], "present, mentioned as \"the Rat King\"");
}

#[test]
fn context_flags_full_light_budget_pc() {
    let full = stdout_of(vaultdm().args([
        "context",
        "--vault",
        "tests/fixtures/split-party",
        "-m",
        "We wait.",
        "--full",
        "--pc",
        "Rook",
    ]));
    assert!(full.contains("### Location: The Bell Tower"));
    assert!(!full.contains("### Location: The Sewers"));
    let light = stdout_of(vaultdm().args([
        "context",
        "--vault",
        "tests/fixtures/split-party",
        "--light",
        "--budget",
        "30",
    ]));
    assert!(light.starts_with("[Day 2 | midnight | Rook HP 14/16"));
    vaultdm()
        .args([
            "context",
            "--vault",
            "tests/fixtures/split-party",
            "--full",
            "--light",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot be used with"));
    vaultdm()
        .args([
            "context",
            "--vault",
            "tests/fixtures/split-party",
            "--pc",
            "Nobody",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no PC named \"Nobody\"; the PCs are: Rook, Sable Vey",
        ));
}

#[test]
fn context_explain_prints_a_table_after_the_text() {
    let text = stdout_of(vaultdm().args([
        "context",
        "--vault",
        "tests/fixtures/variants",
        "--message",
        "Ask the Widow about Old Gannet.",
        "--explain",
    ]));
    let (injected, table) = text
        .split_once("\n---- explain: Light context, ")
        .expect("explain header");
    assert!(injected.starts_with("[Day 3 | night | Ada Quill"));
    let mut lines = table.lines();
    assert!(lines.next().is_some_and(|l| l.ends_with(" tokens ----")));
    assert!(lines
        .next()
        .is_some_and(|l| l.starts_with("in  kind") && l.ends_with("reason")));
    let rows: Vec<&str> = lines.collect();
    assert!(
        rows.iter()
            .any(|r| r.starts_with("+   npc      Mother Ashka")
                && r.ends_with("present, mentioned as \"the Widow\" (alias)")),
        "{table}"
    );
    assert!(
        rows.iter().any(|r| r.starts_with("-   npc      Old Gannet")
            && r.ends_with("at The Gilded Eel but dead")),
        "{table}"
    );
    assert!(
        rows.iter()
            .any(|r| r.starts_with("+   card     npc Old Gannet")
                && r.contains("heist/contacts/old-gannet.md:1")),
        "{table}"
    );
    assert!(
        rows.iter().any(|r| r.starts_with("-   pc       Quinn")
            && r.ends_with("not in the active party (status retired)")),
        "{table}"
    );
}

#[test]
fn a_broken_override_template_fails_with_its_line() {
    let s = Scratch::of("split-party");
    s.write(
        "vaultdm.toml",
        "name = \"Split Party\"\ntemplates = \"tpl\"\n",
    )
    .write(
        "tpl/full.j2",
        "## {{ campaign }}\n{% for pc in party %}\n- {{ pc.name ) }}\n{% endfor %}\n",
    );
    let path = s.root.join("tpl/full.j2");
    vaultdm()
        .args(["context", "--vault"])
        .arg(&s.root)
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains(format!(
            "{}:3: template error",
            path.display()
        )));
    // Every template is checked up front: a follow-up fails the same way, rather than
    // running on a half-working set.
    vaultdm()
        .args(["context", "-m", "hi", "--vault"])
        .arg(&s.root)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("tpl/full.j2:3: template error"));
}

// ---------------------------------------------------------------- finding the vault

#[test]
fn vault_flag_before_or_after_the_subcommand() {
    let before = stdout_of(vaultdm().args([
        "--vault",
        "tests/fixtures/split-party",
        "context",
        "-m",
        "hm",
    ]));
    let after = stdout_of(vaultdm().args([
        "context",
        "-m",
        "hm",
        "--vault",
        "tests/fixtures/split-party",
    ]));
    assert_eq!(before, after);
    assert!(before.starts_with("[Day 2 | midnight"));
    let check = stdout_of(vaultdm().args(["--vault", "tests/fixtures/split-party", "check"]));
    assert!(check.ends_with("0 errors, 0 warnings\n"));
}

#[test]
fn vault_from_the_environment_and_the_flag_wins() {
    vaultdm()
        .env("VAULTDM_VAULT", fixture("split-party"))
        .arg("check")
        .assert()
        .code(0)
        .stdout(predicate::str::contains("2 PCs, 3 NPCs"));
    vaultdm()
        .env("VAULTDM_VAULT", fixture("split-party"))
        .args(["check", "--vault", "tests/fixtures/broken"])
        .assert()
        .code(1);
    vaultdm()
        .env("VAULTDM_VAULT", fixture("does-not-exist"))
        .arg("check")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no such vault folder"));
}

#[test]
fn vault_found_upwards_from_the_working_directory() {
    let s = Scratch::of("split-party");
    vaultdm()
        .current_dir(s.root.join("canon/npcs"))
        .arg("check")
        .assert()
        .code(0)
        .stdout(predicate::str::contains("2 PCs, 3 NPCs"));
    // A vault marked only by vaultdm.toml.
    let t = Scratch::of("no-canon");
    vaultdm()
        .current_dir(t.root.join("notes"))
        .args(["context"])
        .assert()
        .code(0)
        .stdout("## SESSION CONTEXT: No Canon\n");
}

#[test]
fn no_vault_anywhere_is_a_clear_error() {
    let s = Scratch::empty("nowhere");
    vaultdm()
        .current_dir(&s.root)
        .arg("check")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no vault found: pass --vault DIR, set VAULTDM_VAULT",
        ));
}

#[test]
fn check_reports_template_overrides_that_would_stop_context() {
    let s = Scratch::of("split-party");
    s.write(
        "vaultdm.toml",
        "name = \"Split Party\"\n\ntemplates = \"tpl\"\n",
    );
    vaultdm()
        .args(["check", "--vault"])
        .arg(&s.root)
        .assert()
        .code(0)
        .stdout(predicate::str::starts_with(
            "vaultdm.toml:3: warning[templates]: templates = \"tpl\": no such folder in the vault",
        ));
    s.write(
        "tpl/light.j2",
        "[{{ day }}]\n{{ party | no_such_filter }}\n",
    );
    vaultdm()
        .args(["check", "--vault"])
        .arg(&s.root)
        .assert()
        .code(1)
        .stdout(predicate::str::starts_with(
            "tpl/light.j2:2: error[template]: template error: filter no_such_filter is unknown",
        ));
    s.write(
        "tpl/full.j2",
        "## {{ campaign }}\n\n{% for pc in party %}\n",
    );
    vaultdm()
        .args(["check", "--vault"])
        .arg(&s.root)
        .assert()
        .code(1)
        .stdout(predicate::str::starts_with(
            "tpl/full.j2:3: error[template]: ",
        ));
}

// ---------------------------------------------------------------- session

#[test]
fn session_list_exclude_include_and_delete() {
    let s = Scratch::empty("sessions");
    let v = s.root.to_str().expect("utf-8 path").to_owned();
    for name in ["2026-11-22", "test chat"] {
        let mut st = vaultdm::session::Store::open(&s.root, name).expect("open");
        st.record_player("We go in.", None, None).expect("player");
    }
    let list = stdout_of(vaultdm().args(["session", "list", "--vault", &v]));
    assert!(
        list.contains("2026-11-22") && list.contains("test chat"),
        "{list}"
    );
    assert!(!list.contains("excluded"), "{list}");
    let out = stdout_of(vaultdm().args(["session", "exclude", "test chat", "--vault", &v]));
    assert!(out.contains("excluded from campaign memory"), "{out}");
    let list = stdout_of(vaultdm().args(["session", "list", "--vault", &v]));
    assert!(
        list.lines()
            .any(|l| l.starts_with("test chat") && l.contains("excluded")),
        "{list}"
    );
    stdout_of(vaultdm().args(["session", "include", "test chat", "--vault", &v]));
    let out = stdout_of(vaultdm().args(["session", "delete", "test chat", "--vault", &v]));
    assert!(out.contains("is deleted"), "{out}");
    assert!(!s.root.join(".vaultdm/sessions/test chat.jsonl").exists());
    assert!(!s.root.join("sessions/test chat.md").exists());
    vaultdm()
        .args(["session", "delete", "CON", "--vault", &v])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("Windows reserves"));
    vaultdm()
        .args(["session", "delete", "test chat", "--vault", &v])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no session \"test chat\""));
}
