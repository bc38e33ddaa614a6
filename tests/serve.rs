//! `vaultdm serve` as a front end meets it: a real server process on 127.0.0.1:0, the fake
//! upstream from the test suite, plain HTTP requests. Here goes what needs the process or the
//! socket: the flags and the environment, a real upstream, signals and kills, connections,
//! timeouts, threads and memory. What a route answers, and nothing else, is asked of the
//! router in-process (`src/serve/tests.rs`).

use crate::support;
use crate::support::fake_llm;

use crate::support::fake_llm::{openai_chunk, openai_sse, FakeLlm, Scripted, Step};
use crate::support::served::{sse_data, stream_text, Served};
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

/// A copy of the bundled campaign in a folder named `vault-template` (its campaign id).
struct Template {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
}

impl Template {
    fn path(&self) -> &Path {
        &self.root
    }
}

fn template() -> Template {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path().join("vault-template");
    support::copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("vault-template"),
        &root,
    );
    Template { _dir: dir, root }
}

const SECRET: &str = "sk-serve-test-SECRET-4242424242";

fn upstream(fake: &FakeLlm) -> Vec<String> {
    vec![
        "--provider".into(),
        "openai".into(),
        "--base-url".into(),
        fake.base_url_v1(),
        "--model".into(),
        "test-model".into(),
    ]
}

fn start(vault: &Path, fake: &FakeLlm, more: &[&str]) -> Served {
    let mut args = upstream(fake);
    args.extend(more.iter().map(|s| (*s).to_owned()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Served::start(vault, &args, &[("OPENAI_API_KEY", SECRET)])
}

fn log_of(vault: &Path, session: &str) -> Vec<Value> {
    let p = vault
        .join(".vaultdm")
        .join("sessions")
        .join(format!("{session}.jsonl"));
    std::fs::read_to_string(&p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// GET a URL and read its JSON body.
async fn get_json(c: &reqwest::Client, url: String) -> Value {
    c.get(url)
        .send()
        .await
        .expect("send")
        .json()
        .await
        .expect("json")
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_with_the_canon_and_continues_the_conversation() {
    let v = template();
    let fake = FakeLlm::start(vec![
        Scripted::sse(openai_sse(
            &["Odessa looks up ", "from the bar."],
            Some("stop"),
            true,
            true,
        )),
        Scripted::sse(openai_sse(&["She ", "whistles."], Some("stop"), true, true)),
    ])
    .await;
    let s = start(v.path(), &fake, &[]);
    let c = http();
    let first = "We walk into the Brass Canary and look for Odessa Flint.";
    let r = c
        .post(s.url("/v1/chat/completions"))
        .json(&json!({
            "model": "vault-template",
            "stream": true,
            "stream_options": {"include_usage": true},
            "temperature": 0.8,
            "messages": [
                {"role": "system", "content": "You are the narrator of a gothic tale."},
                {"role": "user", "content": first},
            ],
        }))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    assert!(r.headers()["content-type"]
        .to_str()
        .expect("ct")
        .starts_with("text/event-stream"));
    let session = r.headers()["x-vaultdm-session"]
        .to_str()
        .expect("session")
        .to_owned();
    let body = r.text().await.expect("body");
    let (text, finish) = stream_text(&body);
    assert_eq!(text, "Odessa looks up from the bar.");
    assert_eq!(finish.as_deref(), Some("stop"));
    assert_eq!(sse_data(&body).last().map(String::as_str), Some("[DONE]"));
    assert!(body.contains("\"usage\""), "{body}");

    // What reached the upstream: vaultdm's system prompt, then the front end's; the full
    // context with the player's message; the sampling field passed on.
    let up = fake.requests()[0].json();
    assert_eq!(up["model"], "test-model");
    assert_eq!(up["temperature"], json!(0.8));
    let msgs = up["messages"].as_array().expect("messages");
    assert_eq!(msgs[0]["role"], "system");
    let system = msgs[0]["content"].as_str().expect("system");
    assert!(
        system.ends_with("You are the narrator of a gothic tale."),
        "{system}"
    );
    assert!(
        system.len() > 200,
        "vaultdm's own system prompt comes first"
    );
    let sent1 = msgs.last().expect("user")["content"]
        .as_str()
        .expect("content")
        .to_owned();
    assert!(sent1.contains("Brannock Tull"), "full context: {sent1}");
    assert!(sent1.contains("Odessa Flint"));
    assert!(sent1.ends_with(first), "{sent1}");

    // The next request of the same conversation: light context on the new message, the
    // full context kept where it was first sent, the same session found by the reply.
    let second = "I ask Odessa about the canary.";
    let r = c
        .post(s.url("/v1/chat/completions"))
        .json(&json!({
            "model": "vault-template",
            "messages": [
                {"role": "system", "content": "You are the narrator of a gothic tale."},
                {"role": "user", "content": first},
                {"role": "assistant", "content": text},
                {"role": "user", "content": second},
            ],
        }))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["x-vaultdm-session"], session.as_str());
    assert_eq!(r.headers()["x-vaultdm-context"], "light");
    let j: Value = r.json().await.expect("json");
    assert_eq!(j["object"], "chat.completion");
    assert_eq!(j["choices"][0]["message"]["content"], "She whistles.");
    assert_eq!(j["choices"][0]["finish_reason"], "stop");
    let up = fake.requests()[1].json();
    let msgs = up["messages"].as_array().expect("messages");
    assert_eq!(msgs.len(), 4, "{msgs:?}");
    assert_eq!(
        msgs[1]["content"].as_str(),
        Some(sent1.as_str()),
        "the full context is re-sent byte for byte where it was first sent"
    );
    assert_eq!(msgs[2]["content"], "Odessa looks up from the bar.");
    let sent2 = msgs[3]["content"].as_str().expect("content");
    assert!(sent2.starts_with("[Day "), "light context: {sent2}");
    assert!(sent2.ends_with(second));

    // The session log holds both exchanges.
    let log = log_of(v.path(), &session);
    let said: Vec<(&str, &str)> = log
        .iter()
        .map(|r| {
            (
                r["role"].as_str().unwrap_or(""),
                r["text"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        said,
        vec![
            ("player", first),
            ("dm", "Odessa looks up from the bar."),
            ("player", second),
            ("dm", "She whistles."),
        ]
    );
    assert_eq!(log[0]["mode"], "full");
    assert_eq!(log[2]["mode"], "light");
    assert!(!s.stderr().contains(SECRET));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_errors_come_back_as_openai_errors() {
    let v = template();
    let fake = FakeLlm::start(vec![
        Scripted::json(401, r#"{"error":{"message":"Incorrect API key provided"}}"#),
        Scripted::json(400, r#"{"error":{"message":"context too long"}}"#),
    ])
    .await;
    let s = start(v.path(), &fake, &[]);
    let c = http();
    let ask = |stream: bool| {
        c.post(s.url("/v1/chat/completions"))
            .json(&json!({"model": "vault-template", "stream": stream,
                "messages": [{"role": "user", "content": "Hello?"}]}))
            .send()
    };
    let r = ask(true).await.expect("send");
    assert_eq!(r.status(), 502);
    let j: Value = r.json().await.expect("json");
    assert_eq!(j["error"]["code"], "upstream_unauthorized");
    assert_eq!(j["error"]["type"], "upstream_error");
    let m = j["error"]["message"].as_str().expect("message");
    assert!(m.contains("401") || m.to_lowercase().contains("key"), "{m}");
    assert!(!m.contains(SECRET), "the key never leaves the server: {m}");
    let r = ask(false).await.expect("send");
    assert_eq!(r.status(), 400);
    let j: Value = r.json().await.expect("json");
    assert_eq!(j["error"]["code"], "upstream_rejected");
    assert!(j["error"]["message"]
        .as_str()
        .expect("m")
        .contains("context too long"));
}

/// Nothing configured anywhere (the process's environment is empty): completions say so,
/// and the canon API still serves. The canon API's answers themselves are checked
/// in-process (`serve::tests::the_canon_api_answers_for_a_fresh_campaign`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_campaign_without_an_upstream_still_serves_its_canon() {
    let v = template();
    let s = Served::start(v.path(), &[], &[]);
    let c = http();
    let r = c
        .post(s.url("/v1/chat/completions"))
        .json(&json!({"messages": [{"role": "user", "content": "Hello?"}]}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 503);
    let j: Value = r.json().await.expect("json");
    assert_eq!(j["error"]["code"], "upstream_not_configured");
    assert!(j["error"]["message"]
        .as_str()
        .expect("m")
        .contains("no LLM provider configured"));
    let j: Value = get_json(
        &c,
        s.url("/campaigns/vault-template/context?message=I+talk+to+Brannock&mode=light"),
    )
    .await;
    assert_eq!(j["mode"], "light");
    assert!(j["text"].as_str().expect("text").contains("Brannock Tull"));
    assert!(j["items"].as_array().is_some_and(|i| !i.is_empty()), "{j}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn routes_by_model_prefix_across_vaults() {
    let dir = tempfile::tempdir().expect("tmp");
    let (a, b) = (
        dir.path().join("Coldharrow"),
        dir.path().join("Second Vale"),
    );
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("vault-template");
    support::copy_dir(&src, &a);
    support::copy_dir(&src, &b);
    let fake = FakeLlm::start(vec![
        Scripted::sse(openai_sse(&["From the vale."], Some("stop"), false, true)),
        Scripted::sse(openai_sse(&["From the harrow."], Some("stop"), false, true)),
    ])
    .await;
    let (a_arg, b_arg) = (a.display().to_string(), b.display().to_string());
    // `--vault A B A`: A and B (a folder named twice is one campaign).
    let s = start(&a, &fake, &[&b_arg, &a_arg]);
    let c = http();
    let models: Value = get_json(&c, s.url("/v1/models")).await;
    let ids: Vec<&str> = models["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter_map(|m| m["id"].as_str())
        .collect();
    assert_eq!(
        ids,
        vec![
            "coldharrow",
            "coldharrow/test-model",
            "second-vale",
            "second-vale/test-model"
        ]
    );
    let say = |model: &str, header: Option<&str>, msg: &str| {
        let mut r = c.post(s.url("/v1/chat/completions")).json(&json!({
            "model": model, "messages": [{"role": "user", "content": msg}]}));
        if let Some(h) = header {
            r = r.header("X-Vaultdm-Campaign", h);
        }
        r.send()
    };
    let r = say("second-vale/gpt-vale", None, "Where are we?")
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["x-vaultdm-campaign"], "second-vale");
    let session = r.headers()["x-vaultdm-session"]
        .to_str()
        .expect("s")
        .to_owned();
    assert_eq!(fake.requests()[0].json()["model"], "gpt-vale");
    assert_eq!(log_of(&b, &session).len(), 2);
    assert!(!a
        .join(".vaultdm/sessions")
        .join(format!("{session}.jsonl"))
        .exists());
    let r = say("gpt-4o", Some("coldharrow"), "And now?")
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    assert_eq!(fake.requests()[1].json()["model"], "gpt-4o");
    let r = say("gpt-4o", None, "Which vault?").await.expect("send");
    assert_eq!(r.status(), 404);
    let j: Value = r.json().await.expect("json");
    assert_eq!(j["error"]["code"], "model_not_found");
    assert!(j["error"]["message"]
        .as_str()
        .expect("m")
        .contains("coldharrow, second-vale"));
    assert_eq!(fake.requests().len(), 2);
}

/// On 0.0.0.0 a token is made and printed, or the GM's own is taken from the environment
/// (and never printed); either is what the server then wants.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_public_address_wants_the_token() {
    let v = template();
    let s = Served::start(v.path(), &["--listen", "0.0.0.0:0"], &[]);
    let err = s.stderr();
    let token = err
        .split("token for this run: ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .unwrap_or_else(|| panic!("no token printed: {err}"))
        .to_owned();
    assert!(token.len() >= 32);
    let c = http();
    // Every route, the inspector and the event stream included, is walked in-process
    // (`serve::tests::every_route_wants_the_token_on_a_public_address`).
    let r = c.get(s.url("/campaigns")).send().await.expect("send");
    assert_eq!(r.status(), 401);
    let r = c
        .get(s.url("/campaigns"))
        .bearer_auth("wrong")
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 401);
    let r = c
        .get(s.url("/campaigns"))
        .bearer_auth(&token)
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    drop(s);

    // A token of the GM's own is used and never printed.
    let s = Served::start(
        v.path(),
        &["--listen", "0.0.0.0:0"],
        &[("VAULTDM_SERVE_TOKEN", "correct-horse-battery")],
    );
    assert!(!s.stderr().contains("correct-horse-battery"));
    let r = c
        .get(s.url("/campaigns"))
        .bearer_auth("correct-horse-battery")
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
}

/// `--cors-origin`, `--max-body-bytes` and `--max-message-chars` reach a real server. Every
/// origin, host name and limit rule is checked in-process
/// (`serve::tests::browsers_get_cors_only_for_allowed_origins`,
/// `serve::tests::limits_hold_for_bodies_and_messages`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browsers_get_cors_only_for_allowed_origins_and_limits_hold() {
    let v = template();
    let s = Served::start(
        v.path(),
        &[
            "--cors-origin",
            "http://localhost:3000",
            "--max-body-bytes",
            "2000",
            "--max-message-chars",
            "40",
        ],
        &[],
    );
    let c = http();
    let pre = |origin: &str| {
        c.request(reqwest::Method::OPTIONS, s.url("/v1/chat/completions"))
            .header("Origin", origin)
            .header("Access-Control-Request-Method", "POST")
            .header(
                "Access-Control-Request-Headers",
                "authorization, content-type",
            )
            .send()
    };
    let r = pre("http://localhost:3000").await.expect("send");
    assert_eq!(r.status(), 204);
    assert_eq!(
        r.headers()["access-control-allow-origin"],
        "http://localhost:3000"
    );
    let r = pre("https://evil.example").await.expect("send");
    assert_eq!(r.status(), 403);
    assert!(r.headers().get("access-control-allow-origin").is_none());

    let big = "x".repeat(5000);
    let r = c
        .post(s.url("/v1/chat/completions"))
        .json(&json!({"messages": [{"role": "user", "content": big}]}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 413);
    let j: Value = r.json().await.expect("json");
    assert_eq!(j["error"]["code"], "request_too_large");
    let r = c
        .post(s.url("/v1/chat/completions"))
        .json(&json!({"messages": [{"role": "user", "content": "y".repeat(41)}]}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 413);
    let j: Value = r.json().await.expect("json");
    assert_eq!(j["error"]["code"], "message_too_long");
}

/// Reads an SSE body until `until` is seen (or the time is up); returns what was read.
async fn read_until(r: &mut reqwest::Response, until: &str, within: Duration) -> String {
    let mut seen = String::new();
    let deadline = tokio::time::Instant::now() + within;
    while !seen.contains(until) {
        match tokio::time::timeout_at(deadline, r.chunk()).await {
            Ok(Ok(Some(b))) => seen.push_str(&String::from_utf8_lossy(&b)),
            _ => break,
        }
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn canon_events_follow_note_edits() {
    let v = template();
    let s = Served::start(v.path(), &[], &[]);
    let c = http();
    let mut r = c
        .get(s.url("/campaigns/vault-template/events"))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    let seen = read_until(&mut r, "event: ready", Duration::from_secs(5)).await;
    assert!(seen.contains("event: ready"), "{seen}");
    let note = v.path().join("canon/npcs/odessa-flint.md");
    let text = std::fs::read_to_string(&note).expect("read");
    let edited = text.replacen("status: active", "status: dead", 1);
    assert_ne!(text, edited);
    std::fs::write(&note, edited).expect("write");
    let seen = read_until(&mut r, "event: reload", Duration::from_secs(10)).await;
    assert!(seen.contains("event: reload"), "{seen}");
    let data = sse_data(&seen)
        .into_iter()
        .rfind(|d| d.contains("changes"))
        .expect("reload data");
    let j: Value = serde_json::from_str(&data).expect("json");
    assert!(
        j["changes"].to_string().contains("Odessa"),
        "the change names the NPC: {j}"
    );
    // The API answers from the new canon at once.
    let ctx: Value = get_json(
        &c,
        s.url("/campaigns/vault-template/context?message=I+look+for+Odessa+Flint"),
    )
    .await;
    assert!(
        ctx["text"]
            .as_str()
            .expect("text")
            .to_lowercase()
            .contains("dead"),
        "{ctx}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_mid_reply_keeps_what_arrived() {
    let v = template();
    let fake = FakeLlm::start(vec![Scripted::sse_steps(vec![
        Step::Send(openai_chunk("The wind howls").into_bytes()),
        Step::Repeat(
            openai_chunk(" and howls").into_bytes(),
            2000,
            Duration::from_millis(20),
        ),
    ])])
    .await;
    let mut s = start(v.path(), &fake, &[]);
    let c = http();
    let mut r = c
        .post(s.url("/v1/chat/completions"))
        .header("X-Vaultdm-Session", "storm")
        .json(&json!({"stream": true, "messages": [{"role": "user", "content": "We wait out the storm."}]}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    let seen = read_until(&mut r, "and howls and howls", Duration::from_secs(10)).await;
    assert!(seen.contains("The wind howls"), "{seen}");
    let status = tokio::task::block_in_place(|| s.terminate(Duration::from_secs(20)))
        .expect("the server stops within 20 s");
    assert!(status.success(), "{status:?}: {}", s.stderr());
    let rest = read_until(&mut r, "[DONE]", Duration::from_secs(5)).await;
    assert!(
        rest.contains("reply_cut_off") || rest.contains("[DONE]"),
        "{rest}"
    );
    let log = log_of(v.path(), "storm");
    assert_eq!(log.len(), 2, "{log:?}");
    assert_eq!(log[1]["role"], "dm");
    assert!(log[1]["text"]
        .as_str()
        .expect("text")
        .starts_with("The wind howls and howls"));
    assert_eq!(log[1]["complete"], false);
    assert_eq!(log[1]["cut_off"], "terminated");
    let lock = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(v.path().join(".vaultdm/sessions/storm.lock"))
        .expect("lock file");
    assert!(lock.try_lock().is_ok(), "the session's lock is released");
    assert!(s.stderr().contains("every session is saved"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proposals_are_listed_and_accepted_over_the_api() {
    let v = template();
    let mut body = openai_sse(&["The strike bell rings out."], None, false, false);
    body.push_str(&fake_llm::openai_tool_chunk(
        Some(0),
        Some("call_1"),
        Some("propose_canon_changes"),
        Some(r#"{"changes": [{"op": "event", "text": "The strike bell rang at dusk."}]}"#),
    ));
    body.push_str(&fake_llm::openai_finish("tool_calls"));
    body.push_str("data: [DONE]\n\n");
    let fake = FakeLlm::start(vec![Scripted::sse(body)]).await;
    let s = start(v.path(), &fake, &[]);
    let c = http();
    let r = c
        .post(s.url("/v1/chat/completions"))
        .header("X-Vaultdm-Session", "bells")
        .json(&json!({"stream": true, "messages": [{"role": "user", "content": "We listen."}]}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    let (text, finish) = stream_text(&r.text().await.expect("body"));
    assert!(text.starts_with("The strike bell rings out."), "{text}");
    assert!(text.contains("the DM proposes canon changes"), "{text}");
    assert!(text.contains("/campaigns/vault-template/sessions/bells/accept"));
    assert_eq!(finish.as_deref(), Some("stop"));
    // The tools went upstream; the front end never sees a tool call.
    assert!(fake.requests()[0].json()["tools"].is_array());
    let pending: Value = get_json(
        &c,
        s.url("/campaigns/vault-template/sessions/bells/pending"),
    )
    .await;
    let list = pending["pending"].as_array().expect("pending");
    assert_eq!(list.len(), 1, "{pending}");
    assert!(list[0]["line"]
        .as_str()
        .expect("line")
        .contains("strike bell"));
    let r = c
        .post(s.url("/campaigns/vault-template/sessions/bells/accept"))
        .json(&json!({"numbers": [1]}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    let timeline = std::fs::read_to_string(v.path().join("canon/timeline.md")).expect("timeline");
    assert!(
        timeline.contains("The strike bell rang at dusk."),
        "{timeline}"
    );
    let pending: Value = get_json(
        &c,
        s.url("/campaigns/vault-template/sessions/bells/pending"),
    )
    .await;
    assert_eq!(pending["pending"], json!([]));
}

/// Player tokens from the flag (repeated, or commas between them) or else the environment:
/// on loopback, beside them, a GM token is made and printed (a request without a token is
/// refused), the player tokens are never printed; a player may chat and list models and
/// nothing else, and a player's reply carries no proposal. Every route and every error a player can cause are
/// walked in-process (`serve::tests::a_players_token_may_only_chat`,
/// `serve::tests::no_error_a_player_can_cause_carries_canon`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn player_tokens_chat_and_nothing_else() {
    let v = template();
    let mut body = openai_sse(&["The strike bell rings out."], None, false, false);
    body.push_str(&fake_llm::openai_tool_chunk(
        Some(0),
        Some("call_1"),
        Some("propose_canon_changes"),
        Some(r#"{"changes": [{"op": "event", "text": "The strike bell rang at dusk."}]}"#),
    ));
    body.push_str(&fake_llm::openai_finish("tool_calls"));
    body.push_str("data: [DONE]\n\n");
    let fake = FakeLlm::start(vec![Scripted::sse(body)]).await;
    let s = start(
        v.path(),
        &fake,
        &[
            "--player-token",
            "table-player-one-0001",
            "--player-token",
            "table-player-two-0002,table-player-three-03",
        ],
    );
    let err = s.stderr();
    let gm = err
        .split("token for this run: ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .unwrap_or_else(|| panic!("no GM token printed beside player tokens: {err}"))
        .to_owned();
    assert!(err.contains("3 player token(s)"), "{err}");
    assert!(!err.contains("table-player"), "{err}");
    let c = http();
    let r = c.get(s.url("/campaigns")).send().await.expect("send");
    assert_eq!(r.status(), 401, "no token on loopback is no role");
    let r = c
        .get(s.url("/campaigns"))
        .bearer_auth(&gm)
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    for player in [
        "table-player-one-0001",
        "table-player-two-0002",
        "table-player-three-03",
    ] {
        let r = c
            .get(s.url("/campaigns"))
            .bearer_auth(player)
            .send()
            .await
            .expect("send");
        assert_eq!(r.status(), 403, "{player}");
        let j: Value = r.json().await.expect("json");
        assert_eq!(j["error"]["code"], "gm_only", "{player}");
        let r = c
            .get(s.url("/v1/models"))
            .bearer_auth(player)
            .send()
            .await
            .expect("send");
        assert_eq!(r.status(), 200, "{player}");
    }
    let r = c
        .post(s.url("/v1/chat/completions"))
        .bearer_auth("table-player-two-0002")
        .header("X-Vaultdm-Session", "bells")
        .json(&json!({"stream": true, "messages": [{"role": "user", "content": "We listen."}]}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    // A player plays under `player-`: never on top of the GM's own sessions.
    assert_eq!(
        r.headers()
            .get("x-vaultdm-session")
            .and_then(|h| h.to_str().ok()),
        Some("player-bells")
    );
    let (text, finish) = stream_text(&r.text().await.expect("body"));
    assert_eq!(text, "The strike bell rings out.");
    assert_eq!(finish.as_deref(), Some("stop"));
    // The proposal waits for the GM.
    let pending: Value = c
        .get(s.url("/campaigns/vault-template/sessions/player-bells/pending"))
        .bearer_auth(&gm)
        .send()
        .await
        .expect("send")
        .json()
        .await
        .expect("json");
    assert_eq!(
        pending["pending"].as_array().map(Vec::len),
        Some(1),
        "{pending}"
    );
    drop(s);

    // The environment, when the flag is not given.
    let s = Served::start(
        v.path(),
        &[],
        &[(
            "VAULTDM_SERVE_PLAYER_TOKEN",
            "table-player-four-0004,table-player-five-0005",
        )],
    );
    assert!(s.stderr().contains("2 player token(s)"), "{}", s.stderr());
    let r = c
        .get(s.url("/campaigns"))
        .bearer_auth("table-player-five-0005")
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 403);
}

/// The GM saves the note (temp file + rename, from another process) while a proposal
/// waits: accepting it over the API is a conflict (409, old / now / proposed), nothing is
/// written, and it stays pending under its number.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accepting_over_the_api_after_the_gms_edit_is_a_conflict() {
    let v = template();
    let mut body = openai_sse(&["A bolt hits Brannock."], None, false, false);
    body.push_str(&fake_llm::openai_tool_chunk(
        Some(0),
        Some("call_1"),
        Some("propose_canon_changes"),
        Some(r#"{"changes": [{"op": "set", "entity": "Brannock", "field": "hp", "value": "-7"}]}"#),
    ));
    body.push_str(&fake_llm::openai_finish("tool_calls"));
    body.push_str("data: [DONE]\n\n");
    let fake = FakeLlm::start(vec![Scripted::sse(body)]).await;
    let s = start(v.path(), &fake, &[]);
    let c = http();
    let r = c
        .post(s.url("/v1/chat/completions"))
        .header("X-Vaultdm-Session", "bolt")
        .json(&json!({"stream": true, "messages": [{"role": "user", "content": "I duck."}]}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    let _ = r.text().await.expect("body");
    let note = v.path().join("canon/pcs/brannock-tull.md");
    let st = std::process::Command::new("sh")
        .arg("-c")
        .arg("sed -e 's/^hp: 22$/hp: 19/' \"$1\" > \"$1.tmp\" && mv \"$1.tmp\" \"$1\"")
        .arg("sh")
        .arg(&note)
        .status()
        .expect("sh");
    assert!(st.success());
    let gm = std::fs::read_to_string(&note).expect("note");
    let r = c
        .post(s.url("/campaigns/vault-template/sessions/bolt/accept"))
        .json(&json!({"numbers": [1]}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 409);
    let said = r.text().await.expect("body");
    assert!(
        said.contains("HP 22/30 -> 15/30")
            && said.contains("was 22 when proposed and is 19 now")
            && said.contains("nothing was written"),
        "{said}"
    );
    assert_eq!(std::fs::read_to_string(&note).expect("note"), gm);
    let pending: Value =
        get_json(&c, s.url("/campaigns/vault-template/sessions/bolt/pending")).await;
    assert_eq!(pending["pending"][0]["number"], 1, "{pending}");
    assert_eq!(pending["pending"][0]["valid"], false, "{pending}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_anthropic_upstream_streams_as_openai_chunks() {
    let v = template();
    let fake = FakeLlm::start(vec![Scripted::sse(fake_llm::anthropic_sse(
        &["The mine ", "breathes."],
        true,
    ))])
    .await;
    let base = fake.base_url();
    let s = Served::start(
        v.path(),
        &[
            "--provider",
            "anthropic",
            "--base-url",
            &base,
            "--model",
            "claude-test",
        ],
        &[("ANTHROPIC_API_KEY", SECRET)],
    );
    let r = http()
        .post(s.url("/v1/chat/completions"))
        .json(
            &json!({"stream": true, "temperature": 0.3, "stop": "THE END", "seed": 4,
            "messages": [
                {"role": "assistant", "content": "Welcome to Coldharrow."},
                {"role": "user", "content": "We go down the shaft."}]}),
        )
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    let (text, finish) = stream_text(&r.text().await.expect("body"));
    assert_eq!(text, "The mine breathes.");
    assert_eq!(finish.as_deref(), Some("stop"));
    let up = fake.requests()[0].json();
    assert_eq!(up["model"], "claude-test");
    assert_eq!(up["temperature"], json!(0.3));
    assert_eq!(up["stop_sequences"], json!(["THE END"]));
    assert!(up.get("seed").is_none(), "Anthropic takes no seed");
    let msgs = up["messages"].as_array().expect("messages");
    assert_eq!(
        msgs[0]["role"], "user",
        "the Messages API starts with a user turn"
    );
    assert_eq!(msgs[1]["content"], "Welcome to Coldharrow.");
    assert_eq!(fake.requests()[0].header("x-api-key"), Some(SECRET));
}

/// An upstream that keeps connections alive (as real servers do) and answers at once.
async fn keep_alive_upstream() -> String {
    use axum::routing::post;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        post(|| async {
            (
                [("content-type", "text/event-stream")],
                openai_sse(&["Aye."], Some("stop"), false, true),
            )
        }),
    );
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}/v1")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conversations_take_turns_over_kept_alive_connections() {
    // Each conversation plays on its own thread; a connection pooled by one must never be
    // handed to another (it would wait on a runtime that is not running).
    let v = template();
    std::fs::write(
        v.path().join("vaultdm.toml"),
        "[llm]\nfirst_token_timeout = 5\n",
    )
    .expect("toml");
    let base = keep_alive_upstream().await;
    let s = Served::start(
        v.path(),
        &["--provider", "openai", "--base-url", &base, "--model", "m"],
        &[],
    );
    let c = http();
    for round in 0..3 {
        for who in ["north", "south", "east"] {
            let r = c
                .post(s.url("/v1/chat/completions"))
                .header("X-Vaultdm-Session", who)
                .json(&json!({"stream": round % 2 == 0,
                    "messages": [{"role": "user", "content": format!("{who} {round}")}]}))
                .send()
                .await
                .expect("send");
            assert_eq!(
                r.status(),
                200,
                "{who} round {round}: {}",
                r.text().await.unwrap_or_default()
            );
            let _ = r.text().await;
        }
    }
    for who in ["north", "south", "east"] {
        assert_eq!(log_of(v.path(), who).len(), 6);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_reply_that_breaks_off_keeps_its_text() {
    let v = template();
    let fake = FakeLlm::start(vec![Scripted::sse_steps(vec![
        Step::Send(openai_chunk("The lamp gutters").into_bytes()),
        Step::Send(openai_chunk(" and dies").into_bytes()),
        Step::Drop,
    ])])
    .await;
    let s = start(v.path(), &fake, &[]);
    let r = http()
        .post(s.url("/v1/chat/completions"))
        .header("X-Vaultdm-Session", "dark")
        .json(&json!({"messages": [{"role": "user", "content": "We light the lamp."}]}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    assert!(r.headers().get("x-vaultdm-cut-off").is_some());
    let j: Value = r.json().await.expect("json");
    let text = j["choices"][0]["message"]["content"]
        .as_str()
        .expect("text");
    assert!(text.starts_with("The lamp gutters and dies"), "{text}");
    assert!(text.contains("vaultdm: the reply stops here"), "{text}");
    let log = log_of(v.path(), "dark");
    assert_eq!(log[1]["text"], "The lamp gutters and dies");
    assert_eq!(log[1]["complete"], false);
}

/// POSTs a chat request and gives back its status, its session header and its reply.
async fn say(c: &reqwest::Client, s: &Served, body: Value) -> (u16, Option<String>, Value) {
    let r = c
        .post(s.url("/v1/chat/completions"))
        .json(&body)
        .send()
        .await
        .expect("send");
    let status = r.status().as_u16();
    let session = r
        .headers()
        .get("x-vaultdm-session")
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned);
    let j: Value = r.json().await.unwrap_or(Value::Null);
    (status, session, j)
}

/// What a session's log says, as (role, text) pairs.
fn said(vault: &Path, session: &str) -> Vec<(String, String)> {
    log_of(vault, session)
        .iter()
        .map(|r| {
            (
                r["role"].as_str().unwrap_or("").to_owned(),
                r["text"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

/// Without the session header, a conversation is known by its whole history: two chats
/// that open with the same line are two sessions, and a model that gives every player the
/// same reply ("Aye.") never files one player's turn in the other's session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_conversations_with_identical_replies_stay_apart() {
    let v = template();
    let base = keep_alive_upstream().await;
    let s = Served::start(
        v.path(),
        &["--provider", "openai", "--base-url", &base, "--model", "m"],
        &[],
    );
    let c = http();
    let chat = |lines: &[&str]| {
        let mut messages = vec![json!({"role": "system", "content": "Any system text"})];
        for (i, l) in lines.iter().enumerate() {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            messages.push(json!({"role": role, "content": l}));
        }
        json!({ "messages": messages })
    };
    let (st, alice, j) = say(&c, &s, chat(&["I greet Odessa."])).await;
    assert_eq!(st, 200, "{j}");
    assert_eq!(j["choices"][0]["message"]["content"], "Aye.");
    let alice = alice.expect("session");
    let (_, bob, _) = say(&c, &s, chat(&["I leave the inn."])).await;
    let bob = bob.expect("session");
    assert_ne!(alice, bob);
    assert!(alice.starts_with("serve-"), "{alice}");
    // Both got "Aye."; each next turn goes to its own session.
    let (_, a2, _) = say(&c, &s, chat(&["I greet Odessa.", "Aye.", "I order ale."])).await;
    let (_, b2, _) = say(&c, &s, chat(&["I leave the inn.", "Aye.", "I walk north."])).await;
    assert_eq!(a2.as_deref(), Some(alice.as_str()));
    assert_eq!(b2.as_deref(), Some(bob.as_str()));
    // Another chat opening with Alice's line is another conversation.
    let (_, carol, _) = say(&c, &s, chat(&["I greet Odessa."])).await;
    let carol = carol.expect("session");
    assert_ne!(carol, alice, "the same first line does not join chats");
    // Carol's history is now Alice's first turn to the letter: it continues neither.
    let (_, c2, _) = say(&c, &s, chat(&["I greet Odessa.", "Aye.", "I order ale."])).await;
    let c2 = c2.expect("session");
    assert_ne!(
        c2, alice,
        "an identical history is never filed in another's session"
    );
    assert_ne!(c2, carol);
    let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    };
    assert_eq!(
        said(v.path(), &alice),
        pairs(&[
            ("player", "I greet Odessa."),
            ("dm", "Aye."),
            ("player", "I order ale."),
            ("dm", "Aye."),
        ])
    );
    assert_eq!(
        said(v.path(), &bob),
        pairs(&[
            ("player", "I leave the inn."),
            ("dm", "Aye."),
            ("player", "I walk north."),
            ("dm", "Aye."),
        ])
    );
    let transcript =
        std::fs::read_to_string(v.path().join(format!("sessions/{bob}.md"))).expect("transcript");
    assert!(!transcript.contains("ale"), "{transcript}");
    // The request's `user` tells two players' identical chats apart too.
    let mut dave = chat(&["I greet Odessa."]);
    dave["user"] = json!("dave");
    let (_, d1, _) = say(&c, &s, dave.clone()).await;
    let mut dave2 = chat(&["I greet Odessa.", "Aye.", "I order ale."]);
    dave2["user"] = json!("dave");
    let (_, d2, _) = say(&c, &s, dave2).await;
    assert_eq!(d1, d2, "dave's own history is his alone");
}

/// Regenerate (the same history, the last reply replaced): the reply it replaces is
/// superseded in the session log, leaves the session's history and memory, and the next turn
/// never sees it. With the session header and without.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regenerate_supersedes_the_reply_it_replaces() {
    let v = template();
    let reply = |t: &str| Scripted::sse(openai_sse(&[t], Some("stop"), true, true));
    let fake = FakeLlm::start(vec![
        reply("Dark stairs lead down."),
        reply("Shadows dance on the wall."),
        reply("The torch gutters and dies."),
        reply("You hear water below."),
        reply("Cold air."),
        reply("A bat."),
        reply("Silence."),
    ])
    .await;
    let s = start(v.path(), &fake, &[]);
    let c = http();
    let turn = |lines: &[&str], header: Option<&str>| {
        let mut messages = Vec::new();
        for (i, l) in lines.iter().enumerate() {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            messages.push(json!({"role": role, "content": l}));
        }
        let mut r = c
            .post(s.url("/v1/chat/completions"))
            .json(&json!({ "messages": messages }));
        if let Some(h) = header {
            r = r.header("X-Vaultdm-Session", h);
        }
        async move {
            let r = r.send().await.expect("send");
            assert_eq!(r.status(), 200);
            let session = r.headers()["x-vaultdm-session"]
                .to_str()
                .expect("session")
                .to_owned();
            let j: Value = r.json().await.expect("json");
            (
                session,
                j["choices"][0]["message"]["content"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned(),
            )
        }
    };
    let h = Some("owui-chat1-");
    let one = "We take the cellar stairs.";
    let two = "I light a torch.";
    let (_, r1) = turn(&[one], h).await;
    assert_eq!(r1, "Dark stairs lead down.");
    let (_, r2) = turn(&[one, &r1, two], h).await;
    assert_eq!(r2, "Shadows dance on the wall.");
    // Regenerate: the same request again.
    let (_, r2b) = turn(&[one, &r1, two], h).await;
    assert_eq!(r2b, "The torch gutters and dies.");
    let (_, r3) = turn(&[one, &r1, two, &r2b, "We go on."], h).await;
    assert_eq!(r3, "You hear water below.");
    let log = log_of(v.path(), "owui-chat1-");
    let kinds: Vec<String> = log
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                r["role"].as_str().unwrap_or(""),
                r["event"]
                    .as_str()
                    .unwrap_or(r["text"].as_str().unwrap_or(""))
            )
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            format!("player {one}"),
            "dm Dark stairs lead down.".to_owned(),
            format!("player {two}"),
            "dm Shadows dance on the wall.".to_owned(),
            "system undo".to_owned(),
            format!("player {two}"),
            "dm The torch gutters and dies.".to_owned(),
            "player We go on.".to_owned(),
            "dm You hear water below.".to_owned(),
        ]
    );
    let records: Vec<vaultdm::session::Record> = log
        .iter()
        .map(|r| serde_json::from_value(r.clone()).expect("record"))
        .collect();
    let history = vaultdm::session::history_from_records(&records);
    let dms: Vec<&str> = history.iter().map(|e| e.dm.as_str()).collect();
    assert_eq!(
        dms,
        vec![
            "Dark stairs lead down.",
            "The torch gutters and dies.",
            "You hear water below."
        ]
    );
    // The next turn's prompt (history, memory, recall) never carries the superseded reply.
    let sent = String::from_utf8_lossy(&fake.requests()[3].body).into_owned();
    assert!(!sent.contains("Shadows dance"), "{sent}");

    // Without the header: the conversation's history finds its session, and Regenerate
    // supersedes there too.
    let (s1, r1) = turn(&["We leave by the back door."], None).await;
    let (s2, r2) = turn(&["We leave by the back door.", &r1, "We run."], None).await;
    let (s2b, _) = turn(&["We leave by the back door.", &r1, "We run."], None).await;
    assert_eq!(s1, s2);
    assert_eq!(s2, s2b);
    assert_eq!(r2, "A bat.");
    let said = said(v.path(), &s1);
    assert_eq!(said.len(), 7, "{said:?}");
    assert_eq!(said[4].0, "system");
}

/// Front ends' background tasks — Open WebUI's title, tags and follow-ups, SillyTavern's
/// summary — go upstream as they came: no canon, no tools, no vaultdm prompt, no session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_prompts_pass_through_with_no_session() {
    let v = template();
    let fake = FakeLlm::start(vec![
        Scripted::sse(openai_sse(
            &["{\"title\": \"🍺 The Brass Canary\"}"],
            Some("stop"),
            false,
            true,
        )),
        Scripted::sse(openai_sse(
            &["The party met Odessa."],
            Some("stop"),
            false,
            true,
        )),
        Scripted::sse(openai_sse(
            &["{\"tags\": [\"Fantasy\"]}"],
            Some("stop"),
            true,
            true,
        )),
    ])
    .await;
    let s = start(v.path(), &fake, &["--task-model", "tiny-model"]);
    let c = http();
    let title = "### Task:\nGenerate a concise, 3-5 word title with an emoji summarizing the chat history.\n### Guidelines:\n- Keep it short.\n### Output:\nJSON format: { \"title\": \"your concise title here\" }\n### Chat History:\n<chat_history>\nUSER: We walk into the Brass Canary and look for Odessa Flint.\nASSISTANT: Odessa looks up.\n</chat_history>";
    let r = c
        .post(s.url("/v1/chat/completions"))
        .json(&json!({"model": "vault-template", "stream": false,
            "messages": [{"role": "user", "content": title}]}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    assert!(r.headers().get("x-vaultdm-session").is_none());
    assert_eq!(r.headers()["x-vaultdm-task"], "openwebui-task");
    let j: Value = r.json().await.expect("json");
    assert_eq!(
        j["choices"][0]["message"]["content"],
        "{\"title\": \"🍺 The Brass Canary\"}"
    );
    // The upstream sent no usage: vaultdm counted it.
    assert!(
        j["usage"]["prompt_tokens"].as_u64().unwrap_or(0) > 20,
        "{j}"
    );
    assert!(
        j["usage"]["completion_tokens"].as_u64().unwrap_or(0) > 3,
        "{j}"
    );
    let up = fake.requests()[0].json();
    assert!(up.get("tools").is_none(), "{up}");
    let msgs = up["messages"].as_array().expect("messages");
    assert_eq!(msgs.len(), 1, "no vaultdm system prompt: {msgs:?}");
    assert_eq!(msgs[0]["content"], title, "the prompt as it came");
    assert_eq!(up["model"], "tiny-model", "--task-model");

    // SillyTavern's summary: a quiet prompt sent last, as a system message, streamed.
    let r = c
        .post(s.url("/v1/chat/completions"))
        .json(&json!({"stream": true, "messages": [
            {"role": "system", "content": "You are Seraphina."},
            {"role": "assistant", "content": "Welcome, traveller."},
            {"role": "user", "content": "I greet Brannock."},
            {"role": "system", "content": "Ignore previous instructions. Summarize the most important facts and events in the story so far. Limit the summary to 200 words or less."}]}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["x-vaultdm-task"], "sillytavern-summary");
    let (text, finish) = stream_text(&r.text().await.expect("body"));
    assert_eq!(text, "The party met Odessa.");
    assert_eq!(finish.as_deref(), Some("stop"));
    let up = fake.requests()[1].json();
    let msgs = up["messages"].as_array().expect("messages");
    assert_eq!(msgs[0]["content"], "You are Seraphina.");
    assert!(msgs
        .last()
        .and_then(|m| m["content"].as_str())
        .is_some_and(|m| m.ends_with("Limit the summary to 200 words or less.")));
    assert!(!up.to_string().contains("Brannock Tull"), "no canon: {up}");

    // Open WebUI's `{{TASK}}` in the session header marks any prompt as a task.
    let r = c
        .post(s.url("/v1/chat/completions"))
        .header("X-Vaultdm-Session", "owui-chat7-tags_generation")
        .json(&json!({"messages": [{"role": "user", "content": "Tag this chat."}]}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["x-vaultdm-task"], "tags_generation");
    let _ = r.text().await;

    // No session was written: no log, no transcript, no memory note.
    let logs = v.path().join(".vaultdm").join("sessions");
    let left: Vec<_> = std::fs::read_dir(&logs)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
    assert!(!v.path().join("sessions").exists());
    assert_eq!(fake.requests().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_of_proposals_only_streams_the_appendix_once() {
    let v = template();
    let mut body = String::new();
    body.push_str(&fake_llm::openai_tool_chunk(
        Some(0),
        Some("call_1"),
        Some("propose_canon_changes"),
        Some(r#"{"changes": [{"op": "event", "text": "The bell cracked."}]}"#),
    ));
    body.push_str(&fake_llm::openai_finish("tool_calls"));
    body.push_str("data: [DONE]\n\n");
    let fake = FakeLlm::start(vec![Scripted::sse(body)]).await;
    let s = start(v.path(), &fake, &[]);
    let r = http()
        .post(s.url("/v1/chat/completions"))
        .header("X-Vaultdm-Session", "quiet")
        .json(&json!({"stream": true, "messages": [{"role": "user", "content": "We wait."}]}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    let (text, finish) = stream_text(&r.text().await.expect("body"));
    assert_eq!(
        text.matches("the DM proposes canon changes").count(),
        1,
        "{text}"
    );
    assert!(text.contains("The bell cracked."), "{text}");
    assert_eq!(finish.as_deref(), Some("stop"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_conversation_gives_its_session_back() {
    let v = template();
    let base = keep_alive_upstream().await;
    let s = Served::start(
        v.path(),
        &[
            "--provider",
            "openai",
            "--base-url",
            &base,
            "--model",
            "m",
            "--close-idle-after",
            "1",
        ],
        &[],
    );
    let c = http();
    let say = |n: u32| {
        c.post(s.url("/v1/chat/completions"))
            .header("X-Vaultdm-Session", "lull")
            .json(&json!({"messages": [{"role": "user", "content": format!("Turn {n}.")}]}))
            .send()
    };
    assert_eq!(say(1).await.expect("send").status(), 200);
    let lock = v.path().join(".vaultdm/sessions/lull.lock");
    let held = || {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&lock)
            .expect("lock file")
            .try_lock()
            .is_err()
    };
    assert!(
        held(),
        "the session is the server's while it plays: {}",
        s.stderr()
    );
    let mut released = false;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if !held() {
            released = true;
            break;
        }
    }
    assert!(
        released,
        "an idle conversation's session is unlocked: {}",
        s.stderr()
    );
    // The server says so just after it lets the lock go: wait for the line, not only the lock.
    let mut said = false;
    for _ in 0..50 {
        if s.stderr().contains("closed 1 idle conversation") {
            said = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        said,
        "the server says it closed the conversation: {}",
        s.stderr()
    );
    // The next request opens it again and the log goes on.
    assert_eq!(say(2).await.expect("send").status(), 200);
    assert_eq!(log_of(v.path(), "lull").len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_conversation_recalls_the_gms_session_notes() {
    // The session notes are indexed once per canon and shared by the conversations.
    let v = template();
    std::fs::create_dir_all(v.path().join("notes/sessions")).expect("dir");
    std::fs::write(
        v.path().join("notes/sessions/session-3.md"),
        "---\ntype: session\n---\n# Session 3\n\nThe party paid the ferryman with a silver thimble to cross the Blackwater at night.\n",
    )
    .expect("note");
    let fake = FakeLlm::start(vec![
        Scripted::sse(openai_sse(&["Aye."], Some("stop"), false, true)),
        Scripted::sse(openai_sse(&["Aye."], Some("stop"), false, true)),
    ])
    .await;
    let s = start(v.path(), &fake, &[]);
    let c = http();
    for who in ["east", "west"] {
        let r = c
            .post(s.url("/v1/chat/completions"))
            .header("X-Vaultdm-Session", who)
            .json(&json!({"messages": [{"role": "user",
                "content": "What did we pay the ferryman with to cross the Blackwater?"}]}))
            .send()
            .await
            .expect("send");
        assert_eq!(r.status(), 200);
    }
    for (i, up) in fake.requests().iter().enumerate() {
        let last = up.last_message();
        assert!(
            last.contains("silver thimble") && last.contains("session note"),
            "conversation {i} recalls the session note: {last}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vault_in_its_gms_own_layout_is_served_as_it_is_read() {
    // Numbered folders, a template folder, session logs, quests in Open/Completed: the
    // layout `vaultdm init --adopt` reads without a `canon/` folder.
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path().join("Harbour Campaign");
    support::copy_dir(&support::fixture("adopt-numbered"), &root);
    let fake = FakeLlm::start(vec![Scripted::sse(openai_sse(
        &["The fence grins."],
        Some("stop"),
        false,
        true,
    ))])
    .await;
    let s = start(&root, &fake, &[]);
    let c = http();
    let list = get_json(&c, s.url("/campaigns")).await;
    assert_eq!(list["campaigns"][0]["id"], "harbour-campaign");
    let check = get_json(&c, s.url("/campaigns/harbour-campaign/check")).await;
    assert_eq!(check["errors"], 0, "{check}");
    let ctx = get_json(
        &c,
        s.url("/campaigns/harbour-campaign/context?message=We+ask+Brannoch+about+the+cartographer&mode=light"),
    )
    .await;
    let text = ctx["text"].as_str().expect("text");
    assert!(text.contains("Brannoch"), "{text}");
    assert!(
        !text.contains("NPC Template"),
        "templates are not canon: {text}"
    );
    let r = c
        .post(s.url("/v1/chat/completions"))
        .json(&json!({"model": "harbour-campaign",
            "messages": [{"role": "user", "content": "We ask Brannoch about the missing cartographer."}]}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    let last = fake.requests()[0].last_message();
    assert!(
        last.contains("Brannoch") && last.contains("The Missing Cartographer"),
        "the full context of the GM's own notes: {last}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_mid_reply_loses_at_most_the_last_half_second() {
    let v = template();
    let fake = FakeLlm::start(vec![
        Scripted::sse_steps(vec![
            Step::Send(openai_chunk("The wind howls").into_bytes()),
            Step::Repeat(
                openai_chunk(" and howls").into_bytes(),
                2000,
                Duration::from_millis(20),
            ),
        ]),
        Scripted::sse(openai_sse(&["Morning comes."], Some("stop"), false, true)),
    ])
    .await;
    let s = start(v.path(), &fake, &[]);
    let c = http();
    let mut r = c
        .post(s.url("/v1/chat/completions"))
        .header("X-Vaultdm-Session", "gale")
        .json(&json!({"stream": true, "messages": [{"role": "user", "content": "We shelter."}]}))
        .send()
        .await
        .expect("send");
    let _ = read_until(
        &mut r,
        "and howls and howls and howls",
        Duration::from_secs(10),
    )
    .await;
    // Let a journal flush (every half second) pass, then SIGKILL: no shutdown code runs.
    tokio::time::sleep(Duration::from_millis(700)).await;
    let _ = std::process::Command::new("kill")
        .args(["-KILL", &s.pid().to_string()])
        .status();
    drop(s);
    // A new server opens the session again: the journal becomes a cut-off reply.
    let s = start(v.path(), &fake, &[]);
    let r = c
        .post(s.url("/v1/chat/completions"))
        .header("X-Vaultdm-Session", "gale")
        .json(
            &json!({"messages": [{"role": "user", "content": "We shelter."},
            {"role": "user", "content": "Is it morning?"}]}),
        )
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    let log = log_of(v.path(), "gale");
    assert_eq!(log[0]["text"], "We shelter.");
    assert_eq!(log[1]["role"], "dm");
    assert!(log[1]["text"]
        .as_str()
        .expect("text")
        .starts_with("The wind howls and howls"));
    assert_eq!(log[1]["cut_off"], "crashed");
}

/// A front end that goes away mid-reply (the GM closed the tab, pressed Stop) cancels the
/// upstream request: the provider sees the connection close, and stops generating (and
/// billing). What arrived is kept as interrupted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_goes_away_mid_reply_cancels_the_upstream_request() {
    let v = template();
    let fake = FakeLlm::start(vec![Scripted::sse_steps(vec![
        Step::Send(openai_chunk("The wind howls").into_bytes()),
        Step::Repeat(
            openai_chunk(" and howls").into_bytes(),
            3000,
            Duration::from_millis(20),
        ),
    ])])
    .await;
    let s = start(v.path(), &fake, &[]);
    let c = http();
    let mut r = c
        .post(s.url("/v1/chat/completions"))
        .header("X-Vaultdm-Session", "gone")
        .json(&json!({"stream": true, "messages": [{"role": "user", "content": "We wait."}]}))
        .send()
        .await
        .expect("send");
    let seen = read_until(&mut r, "and howls and howls", Duration::from_secs(10)).await;
    assert!(seen.contains("The wind howls"), "{seen}");
    drop(r);
    drop(c);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while fake.hangups() == 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        fake.hangups(),
        1,
        "the upstream stream is closed when the front end goes away: {}",
        s.stderr()
    );
    // The turn ended: what arrived is in the session, marked interrupted.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    let mut log = Vec::new();
    while tokio::time::Instant::now() < deadline {
        log = log_of(v.path(), "gone");
        if log.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(log.len(), 2, "{log:?}");
    assert_eq!(log[1]["complete"], false);
}

/// Clients that open a connection and never finish their headers (or their body) are
/// dropped after the request timeout, before any token check; meanwhile normal requests are
/// served; connections over the cap get a 503 at once instead of a descriptor each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_clients_are_dropped_and_normal_requests_served_meanwhile() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let v = template();
    let fake = FakeLlm::start(vec![]).await;
    let s = start(
        v.path(),
        &fake,
        &[
            "--request-timeout",
            "1",
            "--max-connections",
            "8",
            "--token",
            "tok-abcdefghijklmnop",
        ],
    );
    let addr = s.addr.clone();
    // Six clients send half a request and stop.
    let mut slow = Vec::new();
    for _ in 0..6 {
        let mut t = tokio::net::TcpStream::connect(&addr)
            .await
            .expect("connect");
        t.write_all(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            .await
            .expect("write");
        slow.push(t);
    }
    // One sends its headers (with the token) and withholds its body.
    let mut body_less = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    body_less
        .write_all(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer tok-abcdefghijklmnop\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
        .await
        .expect("write");
    // A normal request is served meanwhile.
    let c = http();
    let models = c
        .get(s.url("/v1/models"))
        .bearer_auth("tok-abcdefghijklmnop")
        .send()
        .await
        .expect("send");
    assert_eq!(models.status(), 200);
    // Over the cap: answered 503 at once, not left hanging.
    let mut over = Vec::new();
    for _ in 0..4 {
        over.push(
            tokio::net::TcpStream::connect(&addr)
                .await
                .expect("connect"),
        );
    }
    let mut refused = 0;
    for t in &mut over {
        let mut buf = vec![0u8; 512];
        if let Ok(Ok(n)) = tokio::time::timeout(Duration::from_millis(500), t.read(&mut buf)).await
        {
            if String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 503") {
                refused += 1;
            }
        }
    }
    assert!(refused >= 1, "connections over the cap are refused at once");
    // The half-sent ones are closed by the server within the timeout (plus slack).
    for t in &mut slow {
        let mut buf = [0u8; 256];
        let closed = tokio::time::timeout(Duration::from_secs(4), t.read(&mut buf)).await;
        assert!(
            matches!(closed, Ok(Ok(_)) | Ok(Err(_))),
            "a client that never finishes its headers is dropped"
        );
    }
    let mut buf = vec![0u8; 1024];
    let n = tokio::time::timeout(Duration::from_secs(4), body_less.read(&mut buf))
        .await
        .expect("answered within the timeout")
        .expect("read");
    let answer = String::from_utf8_lossy(&buf[..n]);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("body_timeout"), "{answer}");
    // And the server still serves.
    let again = c
        .get(s.url("/v1/models"))
        .bearer_auth("tok-abcdefghijklmnop")
        .send()
        .await
        .expect("send");
    assert_eq!(again.status(), 200);
}

fn threads_of(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| d.count())
        .unwrap_or(0)
}

fn rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// Two thousand conversations (a front end's every new chat, four at a time) keep at most
/// `--max-conversations` open: the least recently used idle one is closed, saved and
/// unlocked, so threads and memory stay bounded; a closed one opens again when used.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousands_of_conversations_stay_under_the_cap_in_threads_and_memory() {
    const N: usize = 2_000;
    const AT_ONCE: usize = 4;
    let v = template();
    let script: Vec<Scripted> = (0..N + 1)
        .map(|i| {
            Scripted::sse(openai_sse(
                &[&format!("Reply {i}.")],
                Some("stop"),
                false,
                true,
            ))
        })
        .collect();
    let fake = FakeLlm::start(script).await;
    let s = start(v.path(), &fake, &["--max-conversations", "8"]);
    let c = http();
    let ask = |session: String| {
        let c = c.clone();
        let url = s.url("/v1/chat/completions");
        async move {
            let r = c
                .post(url)
                .header("X-Vaultdm-Session", session)
                .json(&json!({"messages": [{"role": "user", "content": "We look around."}]}))
                .send()
                .await
                .expect("send");
            assert_eq!(r.status(), 200);
            let _ = r.bytes().await;
        }
    };
    for i in 0..20 {
        ask(format!("chat-{i}")).await;
    }
    let (threads_20, rss_20) = (threads_of(s.pid()), rss_kb(s.pid()));
    let mut open_max = 0;
    for batch in (20..N).collect::<Vec<_>>().chunks(AT_ONCE) {
        futures_util::future::join_all(batch.iter().map(|i| ask(format!("chat-{i}")))).await;
        open_max = open_max.max(threads_of(s.pid()));
    }
    let (threads_n, rss_n) = (threads_of(s.pid()), rss_kb(s.pid()));
    assert!(
        open_max <= threads_20 + 2 + AT_ONCE,
        "threads reached {open_max} (after 20 conversations: {threads_20})"
    );
    assert!(
        threads_n <= threads_20 + 2,
        "threads grew from {threads_20} to {threads_n}"
    );
    assert!(
        rss_n <= rss_20 + 40 * 1024,
        "memory grew from {rss_20} KB to {rss_n} KB"
    );
    let sessions = get_json(&c, s.url("/campaigns/vault-template/sessions")).await;
    let open = sessions["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .filter(|x| x["open"] == true)
        .count();
    assert!(open <= 8, "{open} open");
    // The first one was closed along the way; it opens again and goes on, its history intact.
    let r = c
        .post(s.url("/v1/chat/completions"))
        .header("X-Vaultdm-Session", "chat-0")
        .json(&json!({"messages": [
            {"role": "user", "content": "We look around."},
            {"role": "assistant", "content": "Reply 0."},
            {"role": "user", "content": "And then?"},
        ]}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    let log = log_of(v.path(), "chat-0");
    let said: Vec<&str> = log.iter().filter_map(|r| r["text"].as_str()).collect();
    assert_eq!(
        said,
        vec!["We look around.", "Reply 0.", "And then?", "Reply 2000."],
        "{log:?}"
    );
}

/// The smaller faults of issue 25 that want a real upstream or the process: usage counted
/// when the upstream sends none, a temporary chat's id ignored, and a short token refused on
/// a public address. The rest (the campaign's name in the model menu, session names that
/// hold on Windows, errors in the documented shape) are answered in-process: `serve::tests`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_temporary_chats_and_short_tokens_as_documented() {
    let v = template();
    let fake = FakeLlm::start(vec![
        Scripted::sse(openai_sse(
            &["The lamp burns low."],
            Some("stop"),
            false,
            true,
        )),
        Scripted::sse(openai_sse(&["Hm."], Some("stop"), false, true)),
    ])
    .await;
    let s = start(v.path(), &fake, &[]);
    let c = http();

    // Usage: the upstream sent none; vaultdm counts the prompt and the reply.
    let r = c
        .post(s.url("/v1/chat/completions"))
        .header("X-Vaultdm-Session", "lamp")
        .json(&json!({"messages": [{"role": "user", "content": "We rest."}]}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    let j: Value = r.json().await.expect("json");
    let u = &j["usage"];
    assert!(u["prompt_tokens"].as_u64().unwrap_or(0) > 100, "{j}");
    assert!(u["completion_tokens"].as_u64().unwrap_or(0) >= 4, "{j}");
    assert_eq!(
        u["total_tokens"].as_u64(),
        Some(
            u["prompt_tokens"].as_u64().unwrap_or(0) + u["completion_tokens"].as_u64().unwrap_or(0)
        )
    );

    // Open WebUI's temporary chat id in the header names nothing lasting: ignored.
    let r = c
        .post(s.url("/v1/chat/completions"))
        .header("X-Vaultdm-Session", "owui-local:Xy12-")
        .json(&json!({"messages": [{"role": "user", "content": "Just testing."}]}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    assert!(r.headers()["x-vaultdm-session"]
        .to_str()
        .expect("session")
        .starts_with("serve-"));
    drop(s);

    // A one-character token on a public address: refused at start, with the way out.
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("vaultdm"))
        .env_clear()
        .env("HOME", v.path().join("no-home"))
        .env("VAULTDM_SERVE_TOKEN", "x")
        .args(["serve", "--vault"])
        .arg(v.path())
        .args(["--listen", "0.0.0.0:0"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("at least 16"), "{err}");
}

/// Without the header, a conversation's state is kept in the vault: after a restart its next
/// turn continues its session, and a Regenerate still supersedes there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_continues_its_session_after_a_restart() {
    let v = template();
    let base = keep_alive_upstream().await;
    let args = ["--provider", "openai", "--base-url", &base, "--model", "m"];
    let c = http();
    let chat = |lines: &[&str]| {
        let messages: Vec<Value> = lines
            .iter()
            .enumerate()
            .map(|(i, l)| json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": l}))
            .collect();
        json!({ "messages": messages })
    };
    let mut s = Served::start(v.path(), &args, &[]);
    let (_, first, _) = say(&c, &s, chat(&["We board the train."])).await;
    let (_, again, _) = say(&c, &s, chat(&["We board the train.", "Aye.", "We sit."])).await;
    assert_eq!(first, again);
    assert!(s.terminate(Duration::from_secs(20)).is_some());
    let s = Served::start(v.path(), &args, &[]);
    let (_, after, _) = say(
        &c,
        &s,
        chat(&[
            "We board the train.",
            "Aye.",
            "We sit.",
            "Aye.",
            "We sleep.",
        ]),
    )
    .await;
    assert_eq!(after, first, "the same session after the restart");
    // Regenerate of the turn before the restart's.
    let (_, regen, _) = say(
        &c,
        &s,
        chat(&[
            "We board the train.",
            "Aye.",
            "We sit.",
            "Aye.",
            "We sleep.",
        ]),
    )
    .await;
    assert_eq!(regen, first);
    let said = said(v.path(), first.as_deref().expect("session"));
    assert_eq!(said.len(), 9, "{said:?}");
    assert_eq!(said[6].0, "system");
}

/// The GM played on in the session (`chat`) after the reply a front end regenerates: undo
/// would take back the GM's exchange, so nothing is superseded and the new reply is logged
/// after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regenerate_after_the_gm_played_on_takes_nothing_back() {
    let v = template();
    let base = keep_alive_upstream().await;
    let s = Served::start(
        v.path(),
        &[
            "--provider",
            "openai",
            "--base-url",
            &base,
            "--model",
            "m",
            "--close-idle-after",
            "1",
        ],
        &[],
    );
    let c = http();
    let body = json!({"messages": [{"role": "user", "content": "We wait."}]});
    let send = || {
        c.post(s.url("/v1/chat/completions"))
            .header("X-Vaultdm-Session", "table")
            .json(&body)
            .send()
    };
    assert_eq!(send().await.expect("send").status(), 200);
    // The server lets the session go; the GM plays an exchange in it.
    let mut store = None;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        if let Ok(st) = vaultdm::session::Store::open(v.path(), "table") {
            store = Some(st);
            break;
        }
    }
    let mut store = store.expect("the idle session is let go");
    store.record_player("I nap.", None, None).expect("player");
    store
        .record_dm(
            &vaultdm::llm::Reply {
                text: "Zzz.".into(),
                complete: true,
                ..Default::default()
            },
            "openai",
            "m",
        )
        .expect("dm");
    drop(store);
    // The front end regenerates its first reply.
    assert_eq!(send().await.expect("send").status(), 200);
    let said = said(v.path(), "table");
    assert!(said.iter().all(|(role, _)| role != "system"), "{said:?}");
    assert_eq!(said.len(), 6, "{said:?}");
    assert!(
        s.stderr().contains("nothing is taken back"),
        "{}",
        s.stderr()
    );
}

/// The front end stops a reply (its Stop button closes the stream) and keeps what it got:
/// its next message, without the header, still finds the session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_reply_keeps_its_conversation() {
    let v = template();
    let fake = FakeLlm::start(vec![
        Scripted::sse_steps(vec![
            Step::Send(openai_chunk("The wind howls").into_bytes()),
            Step::Repeat(
                openai_chunk(" and howls").into_bytes(),
                50,
                Duration::from_millis(400),
            ),
        ]),
        Scripted::sse(openai_sse(&["It dies down."], Some("stop"), false, true)),
    ])
    .await;
    let s = start(v.path(), &fake, &[]);
    let c = http();
    let first = "We wait out the storm.";
    let mut r = c
        .post(s.url("/v1/chat/completions"))
        .json(&json!({"stream": true, "messages": [{"role": "user", "content": first}]}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    let session = r.headers()["x-vaultdm-session"]
        .to_str()
        .expect("session")
        .to_owned();
    let mut body = String::new();
    while !body.contains("howls") {
        let chunk = tokio::time::timeout(Duration::from_secs(10), r.chunk())
            .await
            .expect("in time")
            .expect("chunk")
            .expect("more");
        body.push_str(&String::from_utf8_lossy(&chunk));
    }
    drop(r);
    let (got, _) = stream_text(&body);
    assert!(got.starts_with("The wind howls"), "{got}");
    // The interrupted turn ends on the server before the next one starts.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let (st, next, j) = say(
        &c,
        &s,
        json!({"messages": [
            {"role": "user", "content": first},
            {"role": "assistant", "content": got},
            {"role": "user", "content": "We wait longer."}]}),
    )
    .await;
    assert_eq!(st, 200, "{j}");
    assert_eq!(next.as_deref(), Some(session.as_str()));
    let said = said(v.path(), &session);
    assert_eq!(said.len(), 4, "{said:?}");
}

/// The GM's token of the leak-guard tests.
const GM: &str = "the-gms-own-token-0123";
/// A player's token of the leak-guard tests.
const PLAYER: &str = "a-players-token-0001";

/// The campaign's event stream, read up to its `ready` event.
async fn subscribed(c: &reqwest::Client, s: &Served) -> (reqwest::Response, String) {
    let mut events = c
        .get(s.url("/campaigns/vault-template/events"))
        .bearer_auth(GM)
        .send()
        .await
        .expect("send");
    assert_eq!(events.status(), 200);
    let mut seen = String::new();
    events_until(
        &mut events,
        &mut seen,
        "event: ready",
        Duration::from_secs(5),
    )
    .await;
    (events, seen)
}

/// One message to the chat with `token`, in session `session`.
async fn chat_as(
    c: &reqwest::Client,
    s: &Served,
    token: &str,
    session: &str,
    message: &str,
    stream: bool,
) -> reqwest::Response {
    c.post(s.url("/v1/chat/completions"))
        .bearer_auth(token)
        .header("X-Vaultdm-Session", session)
        .json(&json!({"stream": stream, "messages": [{"role": "user", "content": message}]}))
        .send()
        .await
        .expect("send")
}

/// A POST with the GM's token (or `token`) and no body: its status.
async fn post_as(c: &reqwest::Client, s: &Served, token: &str, path: &str) -> u16 {
    c.post(s.url(path))
        .bearer_auth(token)
        .send()
        .await
        .expect("send")
        .status()
        .as_u16()
}

/// Jonah Sallow's secret in the bundled campaign (his `secret:` field), as a careless DM
/// would say it.
const JONAH_RECITED: &str = "Jonah leans in. He has already sold the date of the strike to Superintendent Vane in exchange for a ticket east for his sister.";

/// The events of a campaign's stream as (name, data), read until `until` is seen.
async fn events_until(
    r: &mut reqwest::Response,
    seen: &mut String,
    until: &str,
    within: Duration,
) -> Vec<(String, Value)> {
    let deadline = tokio::time::Instant::now() + within;
    while !seen.contains(until) {
        match tokio::time::timeout_at(deadline, r.chunk()).await {
            Ok(Ok(Some(b))) => seen.push_str(&String::from_utf8_lossy(&b)),
            _ => break,
        }
    }
    seen.split("\n\n")
        .filter_map(|block| {
            let name = block.lines().find_map(|l| l.strip_prefix("event: "))?;
            let data = block.lines().find_map(|l| l.strip_prefix("data: "))?;
            Some((name.to_owned(), serde_json::from_str(data).ok()?))
        })
        .collect()
}

/// A reply that recites a GM secret is told to the GM: a `leak` event on the canon API's
/// stream, an `x-vaultdm-leak` header on the GM's answer; a player's answer carries neither.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_reciting_a_secret_is_told_to_the_gm_and_not_the_player() {
    let v = template();
    let fake = FakeLlm::start(vec![
        Scripted::sse(openai_sse(&[JONAH_RECITED], None, false, true)),
        Scripted::sse(openai_sse(&[JONAH_RECITED], None, false, true)),
        Scripted::sse(openai_sse(&["The fire pops."], None, false, true)),
    ])
    .await;
    let s = start(v.path(), &fake, &["--token", GM, "--player-token", PLAYER]);
    let c = http();
    let (mut events, mut seen) = subscribed(&c, &s).await;
    // The GM, a whole answer: the header names where the secret is.
    let r = chat_as(
        &c,
        &s,
        GM,
        "gm-table",
        "We find Jonah Sallow at the Canary.",
        false,
    )
    .await;
    assert_eq!(r.status(), 200);
    let leak = r
        .headers()
        .get("x-vaultdm-leak")
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned);
    assert_eq!(leak.as_deref(), Some("1; canon/npcs/jonah-sallow.md:8"));
    let got = events_until(
        &mut events,
        &mut seen,
        "event: leak",
        Duration::from_secs(10),
    )
    .await;
    let (_, data) = got
        .iter()
        .find(|(n, _)| n == "leak")
        .unwrap_or_else(|| panic!("no leak event: {seen}"));
    assert_eq!(data["session"], "gm-table");
    assert_eq!(data["leaks"][0]["source"], "canon/npcs/jonah-sallow.md:8");
    assert_eq!(data["leaks"][0]["kind"], "verbatim");
    // A player, streamed: the reply goes out (no hold asked), with no header of it; the GM
    // hears of it on the stream.
    let r = chat_as(
        &c,
        &s,
        PLAYER,
        "table",
        "We ask Jonah Sallow about the strike.",
        true,
    )
    .await;
    assert_eq!(r.status(), 200);
    assert!(r.headers().get("x-vaultdm-leak").is_none());
    let (text, _) = stream_text(&r.text().await.expect("body"));
    assert_eq!(text, JONAH_RECITED);
    let got = events_until(
        &mut events,
        &mut seen,
        "\"session\":\"player-table\"",
        Duration::from_secs(10),
    )
    .await;
    assert!(
        got.iter()
            .any(|(n, d)| n == "leak" && d["session"] == "player-table"),
        "{seen}"
    );
    // An ordinary reply: nothing told.
    let r = chat_as(&c, &s, GM, "gm-table", "We sit by the fire.", false).await;
    assert_eq!(r.status(), 200);
    assert!(r.headers().get("x-vaultdm-leak").is_none());
    assert!(
        s.stderr().contains("may give away a GM secret"),
        "{}",
        s.stderr()
    );
}

/// `--hold-leaks`: a player's reply that recites a secret waits for the GM, who releases it
/// (the player gets it whole) or drops it (the player is asked to send again, the exchange
/// is taken back from the DM's history and kept marked in the log); an ordinary reply is
/// not held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_reply_waits_for_the_gm() {
    let v = template();
    let fake = FakeLlm::start(vec![
        Scripted::sse(openai_sse(&[JONAH_RECITED], None, false, true)),
        Scripted::sse(openai_sse(&["Snow falls."], None, false, true)),
        Scripted::sse(openai_sse(&[JONAH_RECITED], None, false, true)),
    ])
    .await;
    let s = start(
        v.path(),
        &fake,
        &[
            "--token",
            GM,
            "--player-token",
            PLAYER,
            "--hold-leaks",
            "--hold-for",
            "30",
        ],
    );
    let c = http();
    let (mut events, mut seen) = subscribed(&c, &s).await;
    let s = std::sync::Arc::new(s);
    let ask = |message: &'static str| {
        let (c, s) = (c.clone(), s.clone());
        tokio::spawn(async move {
            let r = chat_as(&c, &s, PLAYER, "table", message, true).await;
            let status = r.status().as_u16();
            (status, r.text().await.expect("body"))
        })
    };
    // Held, then released.
    let asked = ask("We ask Jonah Sallow about the strike.");
    let got = events_until(
        &mut events,
        &mut seen,
        "event: held\n",
        Duration::from_secs(10),
    )
    .await;
    let held = got
        .iter()
        .find(|(n, _)| n == "held")
        .map(|(_, d)| d.clone())
        .unwrap_or_else(|| panic!("no held event: {seen}"));
    assert_eq!(held["reply"], JONAH_RECITED);
    assert_eq!(held["session"], "player-table");
    assert!(!asked.is_finished(), "the player waits for the GM");
    let list = get_json_auth(&c, s.url("/campaigns/vault-template/held"), GM).await;
    assert_eq!(list["held"][0]["id"], held["id"]);
    // A player may not decide.
    let release = format!("/campaigns/vault-template/held/{}/release", held["id"]);
    assert_eq!(post_as(&c, &s, PLAYER, &release).await, 403);
    assert_eq!(post_as(&c, &s, GM, &release).await, 200);
    let (status, body) = asked.await.expect("join");
    assert_eq!(status, 200);
    assert_eq!(stream_text(&body).0, JONAH_RECITED);
    // An ordinary reply is not held.
    let (status, body) = ask("We sit by the fire.").await.expect("join");
    assert_eq!(status, 200);
    assert_eq!(stream_text(&body).0, "Snow falls.");
    // Held, then dropped: the player is asked again; the DM does not remember saying it.
    seen.clear();
    let asked = ask("Jonah Sallow, what do you know?");
    let got = events_until(
        &mut events,
        &mut seen,
        "event: held\n",
        Duration::from_secs(10),
    )
    .await;
    let id = got
        .iter()
        .find(|(n, _)| n == "held")
        .map(|(_, d)| d["id"].clone())
        .unwrap_or_else(|| panic!("no held event: {seen}"));
    // Its decision comes after the drop below.
    seen.clear();
    let drop_it = format!("/campaigns/vault-template/held/{id}/drop");
    assert_eq!(post_as(&c, &s, GM, &drop_it).await, 200);
    let (status, body) = asked.await.expect("join");
    assert_eq!(status, 409, "{body}");
    let j: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(j["error"]["code"], "reply_held");
    assert!(!body.contains("sold the date"), "{body}");
    let got = events_until(
        &mut events,
        &mut seen,
        "event: held_decided",
        Duration::from_secs(10),
    )
    .await;
    assert!(
        got.iter()
            .any(|(n, d)| n == "held_decided" && d["verdict"] == "dropped" && d["by"] == "gm"),
        "{seen}"
    );
    // Decided once.
    let again = format!("/campaigns/vault-template/held/{id}/release");
    assert_eq!(post_as(&c, &s, GM, &again).await, 404);
    // The server stops (every session flushed) before its log is read.
    match std::sync::Arc::try_unwrap(s) {
        Ok(s) => drop(s),
        Err(_) => panic!("a request still holds the server"),
    }
    // The log keeps every word, the dropped exchange marked taken back.
    let log = log_of(v.path(), "player-table");
    let text = serde_json::to_string(&log).expect("json");
    let recited = log
        .iter()
        .filter(|r| r["role"] == "dm" && r["text"] == JONAH_RECITED)
        .count();
    assert_eq!(
        recited, 2,
        "the released and the dropped reply are both kept: {text}"
    );
    assert!(
        log.iter().any(|r| r.to_string().contains("undo")),
        "the dropped exchange is marked: {text}"
    );
}

async fn get_json_auth(c: &reqwest::Client, url: String, token: &str) -> Value {
    c.get(url)
        .bearer_auth(token)
        .send()
        .await
        .expect("send")
        .json()
        .await
        .expect("json")
}

/// The server stops (SIGTERM) while a player's reply is held: the player is told the reply
/// was held back, none of it reaches them, the server exits cleanly, and the log keeps the
/// reply with the exchange taken back from the DM's history.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_held_when_the_server_stops_is_dropped_and_kept_in_the_log() {
    let v = template();
    let fake = FakeLlm::start(vec![Scripted::sse(openai_sse(
        &[JONAH_RECITED],
        None,
        false,
        true,
    ))])
    .await;
    let mut s = start(
        v.path(),
        &fake,
        &["--token", GM, "--player-token", PLAYER, "--hold-leaks"],
    );
    let c = http();
    let (mut events, mut seen) = subscribed(&c, &s).await;
    let asked = {
        let (c, url) = (c.clone(), s.url("/v1/chat/completions"));
        tokio::spawn(async move {
            let r = c
                .post(url)
                .bearer_auth(PLAYER)
                .header("X-Vaultdm-Session", "table")
                .json(&json!({"stream": true, "messages": [{"role": "user", "content": "We ask Jonah Sallow about the strike."}]}))
                .send()
                .await;
            match r {
                Ok(r) => (r.status().as_u16(), r.text().await.unwrap_or_default()),
                Err(e) => (0, e.to_string()),
            }
        })
    };
    events_until(
        &mut events,
        &mut seen,
        "event: held\n",
        Duration::from_secs(10),
    )
    .await;
    assert!(seen.contains("event: held\n"), "{seen}");
    let status = tokio::task::block_in_place(|| s.terminate(Duration::from_secs(20)))
        .expect("the server exits");
    assert!(status.success(), "{status:?}: {}", s.stderr());
    let (code, body) = asked.await.expect("join");
    assert!(!body.contains("sold the date"), "{code}: {body}");
    assert_eq!(code, 409, "{body}");
    assert!(body.contains("reply_held"), "{body}");
    let log = log_of(v.path(), "player-table");
    let text = serde_json::to_string(&log).expect("json");
    assert!(
        log.iter()
            .any(|r| r["role"] == "dm" && r["text"] == JONAH_RECITED),
        "the reply is kept: {text}"
    );
    assert!(
        log.iter().any(|r| r["event"] == "undo"),
        "the exchange is taken back: {text}\n{}",
        s.stderr()
    );
}
