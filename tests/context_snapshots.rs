//! Snapshots of what a GM actually sees: rendered full, light, budgeted and split-party
//! contexts on fixture vaults, the `--explain` table, and `check` on the broken vault.
//!
//! Review a changed snapshot by eye before accepting it (`INSTA_UPDATE=always cargo test`):
//! is it what a GM would want to send?

use crate::support::{context, context_with, fixture, load_fixture};
use assert_cmd::Command;
use vaultdm::context::ModeChoice;

#[test]
fn full_context_saltreach() {
    let loaded = load_fixture("saltreach");
    insta::assert_snapshot!("full_saltreach", context(&loaded, None).text);
}

#[test]
fn full_context_variants() {
    let loaded = load_fixture("variants");
    insta::assert_snapshot!("full_variants", context(&loaded, None).text);
}

#[test]
fn light_context_with_mentions() {
    let loaded = load_fixture("saltreach");
    let inj = context(
        &loaded,
        Some("I ask the Iron Captain about Orla's pass, then we head for the Cathedral to ask after Old Gannet and the Forged Pass."),
    );
    insta::assert_snapshot!("light_mentions_saltreach", inj.text);
}

#[test]
fn light_context_without_mentions() {
    let loaded = load_fixture("saltreach");
    insta::assert_snapshot!(
        "light_plain_saltreach",
        context(&loaded, Some("I draw my dagger and watch the door.")).text
    );
}

#[test]
fn full_context_with_a_mention_of_someone_elsewhere() {
    let loaded = load_fixture("saltreach");
    let inj = context_with(
        &loaded,
        Some("Where is Halden tonight?"),
        ModeChoice::Full,
        None,
    );
    insta::assert_snapshot!("full_with_mention_saltreach", inj.text);
}

#[test]
fn budgeted_context() {
    let loaded = load_fixture("saltreach");
    let inj = context_with(&loaded, None, ModeChoice::Auto, Some(300));
    assert!(inj.tokens <= 300, "{} tokens", inj.tokens);
    insta::assert_snapshot!("budget_300_saltreach", inj.text);
}

#[test]
fn budgeted_light_context_with_mentions() {
    let loaded = load_fixture("saltreach");
    let inj = context_with(
        &loaded,
        Some("I ask the Iron Captain about Orla's pass."),
        ModeChoice::Auto,
        Some(80),
    );
    insta::assert_snapshot!("budget_80_light_saltreach", inj.text);
}

#[test]
fn split_party_full_and_light() {
    let loaded = load_fixture("split-party");
    insta::assert_snapshot!("split_party_full", context(&loaded, None).text);
    insta::assert_snapshot!(
        "split_party_light",
        context(&loaded, Some("Sable lights the black candle.")).text
    );
}

fn vaultdm() -> Command {
    let mut cmd = Command::cargo_bin("vaultdm").expect("binary");
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("VAULTDM_VAULT");
    cmd
}

fn stdout(cmd: &mut Command) -> String {
    let out = cmd.output().expect("runs");
    String::from_utf8(out.stdout).expect("utf-8")
}

#[test]
fn explain_table_for_a_budgeted_context() {
    let text = stdout(vaultdm().args([
        "--vault",
        "tests/fixtures/saltreach",
        "context",
        "--budget",
        "400",
        "--explain",
    ]));
    insta::assert_snapshot!("explain_budget_400_saltreach", text);
}

#[test]
fn check_output_on_the_broken_vault() {
    let out = vaultdm()
        .args(["check", "--vault", "tests/fixtures/broken"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).expect("utf-8");
    assert!(!text.contains(&*fixture("broken").to_string_lossy()));
    insta::assert_snapshot!("check_broken", text);
}
