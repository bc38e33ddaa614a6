//! A session at the table against the fake LLM server: what vaultdm sends each turn (stable
//! system prompt, full context then light lines, canon updates, rolls, trimmed history), what
//! it records, and how it survives provider failures without losing a word.

use crate::support;

use crate::support::fake_llm::{openai_sse, FakeLlm, Scripted, Step};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;
use vaultdm::canon::Loaded;
use vaultdm::context::{Engine, Options};
use vaultdm::llm::{LlmClient, LlmConfig, ProviderKind, RetryPolicy, Timeouts};
use vaultdm::play::{PlayError, SendError, Table};
use vaultdm::session::Store;

fn engine(root: &Path) -> Engine {
    let loaded = Loaded::load(root).expect("load");
    Engine::for_vault(root, &loaded).expect("templates")
}

fn cfg(fake: &FakeLlm) -> LlmConfig {
    LlmConfig {
        timeouts: Timeouts {
            connect: Duration::from_secs(2),
            first_token: Duration::from_secs(5),
            idle: Duration::from_secs(2),
        },
        retry: RetryPolicy {
            max_retries: 1,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(2),
            retry_after_cap: Duration::from_millis(5),
        },
        ..LlmConfig::new(ProviderKind::OpenAi, fake.base_url_v1(), "test-model")
    }
}

fn table(root: &Path, fake: &FakeLlm, session: &str) -> Table {
    Table::new(
        engine(root),
        Options::default(),
        Some(LlmClient::new(cfg(fake)).expect("client")),
        Store::open(root, session).expect("store"),
        6000,
        8,
    )
    .expect("table")
}

fn ok(tokens: &[&str]) -> Scripted {
    Scripted::sse(openai_sse(tokens, Some("stop"), true, true))
}

fn messages(req: &Value) -> Vec<(String, String)> {
    req["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap_or_default().to_string(),
                m["content"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

async fn send(t: &mut Table, msg: &str) -> Result<vaultdm::play::Turn, SendError> {
    let mut got = String::new();
    let mut on = |s: &str| got.push_str(s);
    t.send(msg, &mut on, std::future::pending()).await
}

#[tokio::test]
async fn turns_carry_full_then_light_context_with_a_stable_system_prompt() {
    let v = support::template_copy();
    let fake = FakeLlm::start(vec![
        ok(&["The stove ", "crackles."]),
        ok(&["Odessa nods."]),
        ok(&["Back to it."]),
    ])
    .await;
    let mut t = table(v.path(), &fake, "s1");

    let first = send(&mut t, "We sit by the stove.").await.expect("turn 1");
    assert!(first.reply.complete);
    assert_eq!(first.reply.text, "The stove crackles.");
    assert!(
        first
            .prepared
            .block
            .contains("## SESSION CONTEXT: Coldharrow"),
        "first message gets the full context"
    );

    let second = send(&mut t, "I ask Odessa about the canary.")
        .await
        .expect("turn 2");
    assert!(
        second.prepared.block.starts_with("[Day 6"),
        "{}",
        second.prepared.block
    );
    assert!(second.prepared.block.contains("NPC Odessa Flint"));

    send(&mut t, "continue").await.expect("turn 3");
    let reqs: Vec<Value> = fake.requests().iter().map(|r| r.json()).collect();
    assert_eq!(reqs.len(), 3);
    let m: Vec<_> = reqs.iter().map(messages).collect();
    // The system prompt is the first message and identical every turn.
    assert_eq!(m[0][0].0, "system");
    assert!(m.iter().all(|r| r[0] == m[0][0]));
    // Turn 3: the full context stays on the first exchange (a stable prefix), the light
    // line of turn 2 is not repeated, and "continue" brings a new full context.
    let third = &m[2];
    assert_eq!(third.len(), 6, "{third:?}");
    assert_eq!(
        third[1], m[0][1],
        "the first user message is byte-identical in later requests"
    );
    assert_eq!(third[2], ("assistant".into(), "The stove crackles.".into()));
    assert_eq!(third[3].1, "Player: I ask Odessa about the canary.");
    assert!(third[5].1.contains("## SESSION CONTEXT") && third[5].1.ends_with("Player: continue"));
}

#[tokio::test]
async fn canon_changes_and_rolls_ride_on_the_next_message_only() {
    let v = support::template_copy();
    let fake = FakeLlm::start(vec![ok(&["a"]), ok(&["b"]), ok(&["c"])]).await;
    let mut t = table(v.path(), &fake, "s2");
    send(&mut t, "hello").await.expect("turn 1");

    t.canon_reloaded(
        engine(v.path()),
        vec!["Hesper Quill: HP 14/19 -> 3/19".into()],
    );
    t.add_roll("1d20+2: [17] + 2 = 19".into());
    let turn = send(&mut t, "I climb.").await.expect("turn 2");
    let block = &turn.prepared.block;
    assert!(
        block.starts_with("Canon updated:\n- Hesper Quill: HP 14/19 -> 3/19\n"),
        "{block}"
    );
    assert!(block.contains("Rolls:\n- 1d20+2: [17] + 2 = 19"));

    let turn = send(&mut t, "I climb more.").await.expect("turn 3");
    assert!(!turn.prepared.block.contains("Canon updated"));
    assert!(!turn.prepared.block.contains("Rolls:"));
}

#[tokio::test]
async fn continue_carries_no_context_and_leaves_rolls_and_changes_for_the_next_message() {
    let v = support::template_copy();
    let cut = openai_sse(&["The door "], Some("length"), true, true);
    let fake = FakeLlm::start(vec![
        Scripted::sse(cut),
        ok(&["creaks open."]),
        ok(&["You see a stair."]),
    ])
    .await;
    let mut t = table(v.path(), &fake, "s-continue");
    let first = send(&mut t, "I push the door.").await.expect("turn 1");
    assert!(!first.reply.complete, "cut at the token limit");

    t.canon_reloaded(
        engine(v.path()),
        vec!["Odessa Flint: status -> wary".into()],
    );
    t.add_roll("1d20: [12] = 12".into());
    let mut got = String::new();
    let mut on = |s: &str| got.push_str(s);
    let cont = t
        .continue_reply(&mut on, std::future::pending())
        .await
        .expect("continue");
    assert_eq!(cont.reply.text, "creaks open.");
    assert!(cont.prepared.block.is_empty() && cont.prepared.injected.text.is_empty());
    assert!(cont.prepared.memory.block().is_empty(), "no memory layers");
    let reqs: Vec<Value> = fake.requests().iter().map(|r| r.json()).collect();
    let last = messages(&reqs[1]);
    assert_eq!(
        last.last().map(|m| m.1.as_str()),
        Some(format!("Player: {}", vaultdm::play::CONTINUE_MESSAGE).as_str()),
        "{last:?}"
    );
    assert!(
        !last
            .iter()
            .any(|m| m.1.contains("1d20: [12]") || m.1.contains("status -> wary")),
        "{last:?}"
    );
    assert_eq!(
        t.rolls(),
        ["1d20: [12] = 12"],
        "the roll waits for the next message"
    );

    let next = send(&mut t, "I climb the stair.").await.expect("turn 3");
    assert!(
        next.prepared
            .block
            .starts_with("Canon updated:\n- Odessa Flint: status -> wary\n"),
        "{}",
        next.prepared.block
    );
    assert!(next.prepared.block.contains("Rolls:\n- 1d20: [12] = 12"));
}

#[tokio::test]
async fn a_reply_that_recites_a_gm_secret_is_flagged_and_an_ordinary_one_is_not() {
    let v = support::template_copy();
    let fake = FakeLlm::start(vec![
        ok(&["The stove crackles and Jonah plays a slow verse."]),
        ok(&[
            "Jonah leans in: \"I already sold the date of the strike to ",
            "Superintendent Vane in exchange for a ticket east for my sister.\"",
        ]),
    ])
    .await;
    let mut t = table(v.path(), &fake, "s-leak");
    let first = send(&mut t, "We sit by the stove.").await.expect("turn 1");
    assert!(
        first.prepared.block.contains("For the DM only")
            && first
                .prepared
                .injected
                .gm_only
                .iter()
                .any(|g| g.text.contains("sold the date of the strike")),
        "the DM was given the secret: {}",
        first.prepared.block
    );
    assert!(first.leaks.is_empty(), "{:?}", first.leaks);
    assert!(!t.take_notices().iter().any(|n| n.contains("GM secret")));

    let second = send(&mut t, "I ask Jonah what he is hiding.")
        .await
        .expect("turn 2");
    assert!(
        second
            .leaks
            .iter()
            .any(|l| l.source.starts_with("canon/npcs/jonah-sallow.md")),
        "{:?}",
        second.leaks
    );
    let notices = t.take_notices();
    assert!(
        notices
            .iter()
            .any(|n| n.contains("may give away a GM secret") && n.contains("jonah-sallow.md")),
        "{notices:?}"
    );
    // The transcript the GM keeps in sessions/ never holds the context it was sent with.
    let transcript =
        std::fs::read_to_string(v.path().join("sessions/s-leak.md")).expect("transcript");
    assert!(!transcript.contains("For the DM only"), "{transcript}");
}

#[tokio::test]
async fn many_canon_changes_send_a_new_full_context() {
    let v = support::template_copy();
    let fake = FakeLlm::start(vec![ok(&["a"]), ok(&["b"])]).await;
    let mut t = table(v.path(), &fake, "s3");
    send(&mut t, "hello").await.expect("turn 1");
    let changes: Vec<String> = (0..9).map(|i| format!("change {i}")).collect();
    t.canon_reloaded(engine(v.path()), changes);
    let turn = send(&mut t, "look around").await.expect("turn 2");
    assert!(turn.prepared.block.contains("## SESSION CONTEXT"));
}

#[tokio::test]
async fn a_failed_request_keeps_the_message_and_a_resend_replaces_it() {
    let v = support::template_copy();
    let fake = FakeLlm::start(vec![
        Scripted::json(500, r#"{"error":{"message":"boom"}}"#),
        Scripted::json(500, r#"{"error":{"message":"boom"}}"#),
        ok(&["Recovered."]),
    ])
    .await;
    let mut t = table(v.path(), &fake, "s4");
    let err = send(&mut t, "I open the door.").await.expect_err("500s");
    assert!(matches!(err.error, PlayError::Llm(_)), "{err}");
    assert!(err.message_saved && !err.reply_saved);
    let log = std::fs::read_to_string(t.store().log_path()).expect("log");
    assert!(
        log.contains("I open the door."),
        "the player's words are on disk before the request"
    );

    send(&mut t, "I open the door.").await.expect("re-send");
    let hist = t.store().history();
    assert_eq!(
        hist.len(),
        1,
        "the unanswered message is replaced, not doubled: {hist:?}"
    );
    assert_eq!(hist[0].dm, "Recovered.");
}

#[tokio::test]
async fn a_stream_cut_mid_reply_is_kept_and_marked() {
    let v = support::template_copy();
    let body = openai_sse(&["The floor ", "gives way"], None, false, false);
    let fake = FakeLlm::start(vec![Scripted::sse_steps(vec![
        Step::Send(body.into_bytes()),
        Step::Drop,
    ])])
    .await;
    let mut t = table(v.path(), &fake, "s5");
    let r = send(&mut t, "I step forward.").await;
    let text = match r {
        Ok(turn) => {
            assert!(!turn.reply.complete);
            turn.reply.text
        }
        Err(SendError {
            error: PlayError::Llm(e),
            reply_saved: true,
            ..
        }) => e.partial().map(|p| p.text.clone()).unwrap_or_default(),
        Err(e) => panic!("{e}"),
    };
    assert_eq!(text, "The floor gives way");
    let log = std::fs::read_to_string(t.store().log_path()).expect("log");
    let last: Value = serde_json::from_str(log.lines().last().expect("line")).expect("json");
    assert_eq!(last["role"], "dm");
    assert_eq!(last["text"], "The floor gives way");
    assert_eq!(last["complete"], false);
    let md = std::fs::read_to_string(t.store().transcript_path()).expect("transcript");
    assert!(md.contains("The floor gives way"));
}

#[tokio::test]
async fn a_session_resumes_with_its_history() {
    let v = support::template_copy();
    let fake = FakeLlm::start(vec![ok(&["one"]), ok(&["two"])]).await;
    {
        let mut t = table(v.path(), &fake, "s6");
        send(&mut t, "first").await.expect("turn 1");
    }
    let mut t = table(v.path(), &fake, "s6");
    assert_eq!(t.store().history().len(), 1);
    let turn = send(&mut t, "second").await.expect("turn 2");
    assert!(
        turn.prepared.block.starts_with("[Day 6"),
        "resumed history already holds a full context"
    );
    let m = messages(&fake.requests()[1].json());
    assert_eq!(m.len(), 4);
    assert!(m[1].1.contains("## SESSION CONTEXT"));
}

#[tokio::test]
async fn undo_drops_the_last_exchange_from_the_prompt() {
    let v = support::template_copy();
    let fake = FakeLlm::start(vec![ok(&["one"]), ok(&["two"]), ok(&["three"])]).await;
    let mut t = table(v.path(), &fake, "s7");
    send(&mut t, "first").await.expect("turn 1");
    send(&mut t, "second").await.expect("turn 2");
    assert!(t.undo().expect("undo"));
    send(&mut t, "third").await.expect("turn 3");
    let m = messages(&fake.requests()[2].json());
    assert!(
        !m.iter().any(|(_, c)| c.contains("second") || c == "two"),
        "{m:?}"
    );
}

#[tokio::test]
async fn a_session_with_a_runaway_reply_on_record_still_resumes() {
    // An old vaultdm (or another tool) kept a 20 MB reply in the log.
    let v = support::template_copy();
    let fake = FakeLlm::start(vec![ok(&["one"]), ok(&["two"])]).await;
    {
        let mut t = table(v.path(), &fake, "big");
        send(&mut t, "first").await.expect("turn 1");
    }
    let log = v.path().join(".vaultdm/sessions/big.jsonl");
    let mut recs: Vec<Value> = std::fs::read_to_string(&log)
        .expect("log")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    recs[1]["text"] = Value::String("The tunnel goes on. ".repeat(1_000_000));
    let text: String = recs.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&log, text).expect("write");

    let started = std::time::Instant::now();
    let mut t = table(v.path(), &fake, "big");
    let turn = send(&mut t, "second").await.expect("turn 2");
    // A guard against the old behaviour (a 40 GB allocation), not a benchmark.
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(turn.reply.complete);
    let body = fake.requests()[1].body.len();
    assert!(
        body < 200_000,
        "the old reply is clipped in the prompt: {body} bytes"
    );
    let m = messages(&fake.requests()[1].json());
    assert!(m.iter().all(|(_, c)| c.chars().count() < 40_000));
    // The log keeps every character.
    let kept = vaultdm::session::load(v.path(), "big").expect("load");
    assert_eq!(kept.records[1].text.len(), 20_000_000);
}
