//! End-to-end tests of the LLM client against a fake server on 127.0.0.1: streaming for both
//! protocols, request layout, retries, timeouts, cut-off replies and error messages.

use std::time::{Duration, Instant};

use crate::support::fake_llm::{
    anthropic_event, anthropic_sse, anthropic_sse_reason, openai_chunk, openai_finish, openai_sse,
    openai_tool_chunk, FakeLlm, Scripted, Step,
};
use serde_json::json;
use vaultdm::llm::prompt::{build_prompt, Exchange, PromptInput};
use vaultdm::llm::{
    stream_chat, ApiKey, ChatMessage, ChatRequest, CutOff, LlmClient, LlmConfig, LlmError,
    ProviderKind, Reply, ReplyLimits, RetryPolicy, Timeouts, ToolCall, ToolSpec, Usage,
};

const SECRET: &str = "sk-test-SECRETSECRETSECRET-9876";

fn openai_cfg(fake: &FakeLlm) -> LlmConfig {
    LlmConfig {
        api_key: Some(ApiKey::new(SECRET, Some("OPENAI_API_KEY".into()))),
        timeouts: Timeouts {
            connect: Duration::from_secs(2),
            first_token: Duration::from_secs(5),
            idle: Duration::from_secs(5),
        },
        retry: RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(5),
            retry_after_cap: Duration::from_secs(2),
        },
        ..LlmConfig::new(ProviderKind::OpenAi, fake.base_url_v1(), "llama3.1")
    }
}

fn anthropic_cfg(fake: &FakeLlm) -> LlmConfig {
    LlmConfig {
        provider: ProviderKind::Anthropic,
        base_url: fake.base_url(),
        model: "claude-test".into(),
        api_key: Some(ApiKey::new(SECRET, Some("ANTHROPIC_API_KEY".into()))),
        ..openai_cfg(fake)
    }
}

fn simple_request() -> ChatRequest {
    ChatRequest {
        system: "You are the Dungeon Master.".into(),
        messages: vec![ChatMessage::user("Player: I open the door.")],
        tools: Vec::new(),
    }
}

/// Run a request, collecting the streamed tokens.
async fn run(cfg: &LlmConfig, req: &ChatRequest) -> (Result<Reply, LlmError>, Vec<String>) {
    let mut tokens = Vec::new();
    let result = stream_chat(
        cfg,
        req,
        &mut |t: &str| tokens.push(t.to_owned()),
        std::future::pending(),
    )
    .await;
    (result, tokens)
}

fn assert_no_secret(err: &LlmError) {
    let shown = format!("{err} {err:?}");
    assert!(!shown.contains("SECRETSECRET"), "key leaked: {shown}");
}

#[tokio::test]
async fn openai_streams_tokens_split_at_every_byte() {
    let tokens = ["Hel", "lo, ", "wörld 🐉", "\r\n", "ünïcödé"];
    let fake = FakeLlm::start(vec![Scripted::sse_bytewise(openai_sse(
        &tokens,
        Some("stop"),
        true,
        true,
    ))])
    .await;
    let (reply, seen) = run(&openai_cfg(&fake), &simple_request()).await;
    let reply = reply.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(reply.text, tokens.concat());
    assert_eq!(seen.concat(), tokens.concat());
    assert!(reply.complete);
    assert_eq!(reply.cut_off, None);
    assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
    assert_eq!(
        reply.usage,
        Some(Usage {
            input_tokens: Some(42),
            output_tokens: Some(7),
            cached_tokens: Some(32)
        })
    );
}

#[tokio::test]
async fn openai_keepalives_crlf_missing_usage_and_done_only() {
    // Keep-alive comments, CRLF line ends, finish_reason "" and null, no usage, then [DONE].
    let body = ": keep-alive\r\n\r\n\
        data: {\"choices\":[{\"delta\":{\"content\":\"The \"},\"finish_reason\":\"\"}]}\r\n\r\n\
        : OPENROUTER PROCESSING\r\n\r\n\
        data: {\"choices\":[],\"usage\":null}\r\n\r\n\
        data: {\"choices\":[{\"delta\":{\"content\":\"orc\"},\"finish_reason\":null,\"extra\":{\"x\":1}}]}\r\n\r\n\
        data: [DONE]\r\n\r\n";
    let fake = FakeLlm::start(vec![Scripted::sse_bytewise(body)]).await;
    let (reply, _) = run(&openai_cfg(&fake), &simple_request()).await;
    let reply = reply.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(reply.text, "The orc");
    assert!(reply.complete, "[DONE] is an end event");
    assert_eq!(reply.finish_reason, None);
    assert_eq!(reply.usage, None);
}

#[tokio::test]
async fn openai_finish_reason_without_done_is_complete() {
    let fake = FakeLlm::start(vec![Scripted::sse(openai_sse(
        &["Done."],
        Some("stop"),
        false,
        false,
    ))])
    .await;
    let (reply, _) = run(&openai_cfg(&fake), &simple_request()).await;
    let reply = reply.unwrap_or_else(|e| panic!("{e}"));
    assert!(reply.complete);
    assert_eq!(reply.cut_off, None);
}

#[tokio::test]
async fn openai_token_limit_stop_is_a_cut_off_reply() {
    let fake = FakeLlm::start(vec![Scripted::sse(openai_sse(
        &["The ogre raises its club and"],
        Some("length"),
        true,
        true,
    ))])
    .await;
    let (reply, _) = run(&openai_cfg(&fake), &simple_request()).await;
    let reply = reply.unwrap_or_else(|e| panic!("{e}"));
    assert!(
        !reply.complete,
        "a token-limit stop is not a complete reply"
    );
    assert_eq!(reply.cut_off, Some(CutOff::TokenLimit));
    assert!(reply.hit_token_limit());
    assert_eq!(reply.text, "The ogre raises its club and");
    assert!(reply
        .incomplete_reason()
        .is_some_and(|r| r.contains("token limit")));
}

#[tokio::test]
async fn anthropic_max_tokens_stop_is_a_cut_off_reply() {
    let fake = FakeLlm::start(vec![Scripted::sse(anthropic_sse_reason(
        &["The vault door ", "swings"],
        Some("max_tokens"),
    ))])
    .await;
    let (reply, _) = run(&anthropic_cfg(&fake), &simple_request()).await;
    let reply = reply.unwrap_or_else(|e| panic!("{e}"));
    assert!(!reply.complete);
    assert_eq!(reply.cut_off, Some(CutOff::TokenLimit));
    assert_eq!(reply.finish_reason.as_deref(), Some("max_tokens"));
}

#[tokio::test]
async fn a_server_that_streams_forever_is_capped_and_kept() {
    // 1,000 characters per event, endlessly: the cap ends it, what arrived is kept.
    let chunk = openai_chunk(&format!("{} ", "a".repeat(999)));
    let fake = FakeLlm::start(vec![Scripted::sse_steps(vec![Step::Repeat(
        chunk.into_bytes(),
        1_000_000,
        Duration::ZERO,
    )])])
    .await;
    let cfg = LlmConfig {
        limits: ReplyLimits {
            max_chars: 50_000,
            max_tokens: 1_000_000,
            deadline: Duration::from_secs(30),
        },
        ..openai_cfg(&fake)
    };
    let started = Instant::now();
    let (reply, shown) = run(&cfg, &simple_request()).await;
    let reply = reply.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(reply.cut_off, Some(CutOff::TooLong));
    assert!(!reply.complete);
    assert_eq!(reply.text.chars().count(), 50_000);
    assert_eq!(
        shown.concat(),
        reply.text,
        "the GM saw exactly what is kept"
    );
    assert!(started.elapsed() < Duration::from_secs(10));

    // The token cap counts stream deltas too.
    let fake = FakeLlm::start(vec![Scripted::sse_steps(vec![Step::Repeat(
        openai_chunk("a").into_bytes(),
        1_000_000,
        Duration::ZERO,
    )])])
    .await;
    let cfg = LlmConfig {
        limits: ReplyLimits {
            max_chars: 1_000_000,
            max_tokens: 300,
            deadline: Duration::from_secs(30),
        },
        ..openai_cfg(&fake)
    };
    let (reply, _) = run(&cfg, &simple_request()).await;
    let reply = reply.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(reply.cut_off, Some(CutOff::TooLong));
    assert_eq!(reply.text.len(), 300);
}

#[tokio::test]
async fn a_reply_past_the_deadline_is_cut_and_kept() {
    let fake = FakeLlm::start(vec![Scripted::sse_steps(vec![Step::Repeat(
        openai_chunk("tick ").into_bytes(),
        10_000,
        Duration::from_millis(20),
    )])])
    .await;
    let cfg = LlmConfig {
        limits: ReplyLimits {
            deadline: Duration::from_millis(400),
            ..ReplyLimits::default()
        },
        ..openai_cfg(&fake)
    };
    let started = Instant::now();
    let (reply, _) = run(&cfg, &simple_request()).await;
    let reply = reply.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(reply.cut_off, Some(CutOff::Deadline));
    assert!(reply.text.starts_with("tick tick"));
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn an_html_page_is_not_an_ended_stream() {
    let page = "<!doctype html><html><body><h1>Sign in</h1></body></html>";
    let fake = FakeLlm::start(vec![Scripted {
        headers: vec![("content-type".into(), "text/html".into())],
        ..Scripted::sse(page)
    }])
    .await;
    let (reply, _) = run(&openai_cfg(&fake), &simple_request()).await;
    let err = reply.expect_err("an HTML page is not a reply");
    let msg = err.to_string();
    assert!(matches!(err, LlmError::BadResponse { .. }), "{msg}");
    assert!(
        msg.contains("content-type: text/html") && msg.contains("Sign in"),
        "{msg}"
    );
    assert!(msg.contains("check the base URL"), "{msg}");

    let fake = FakeLlm::start(vec![Scripted::json(200, "{\"this is\": not json")]).await;
    let (reply, _) = run(&openai_cfg(&fake), &simple_request()).await;
    assert!(
        matches!(reply, Err(LlmError::BadResponse { .. })),
        "{reply:?}"
    );
}

#[tokio::test]
async fn the_other_protocol_is_named() {
    let fake = FakeLlm::start(vec![Scripted::sse(anthropic_sse(&["Hi"], true))]).await;
    let (reply, _) = run(&openai_cfg(&fake), &simple_request()).await;
    let msg = reply.expect_err("mismatch").to_string();
    assert!(
        msg.contains("answers in the anthropic format") && msg.contains("--provider anthropic"),
        "{msg}"
    );

    let fake = FakeLlm::start(vec![Scripted::sse(openai_sse(
        &["Hi"],
        Some("stop"),
        true,
        true,
    ))])
    .await;
    let (reply, _) = run(&anthropic_cfg(&fake), &simple_request()).await;
    let msg = reply.expect_err("mismatch").to_string();
    assert!(msg.contains("--provider openai"), "{msg}");
}

#[tokio::test]
async fn a_long_retry_after_says_until_when_instead_of_hanging() {
    let fake = FakeLlm::start(vec![Scripted::json(
        429,
        r#"{"error":{"message":"Rate limit reached"}}"#,
    )
    .header("retry-after", "600")])
    .await;
    let started = Instant::now();
    let (reply, _) = run(&openai_cfg(&fake), &simple_request()).await;
    let msg = reply.expect_err("429").to_string();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "did not wait 10 minutes"
    );
    assert!(
        msg.contains("asks to wait 10 min (until ") && msg.contains("try again then"),
        "{msg}"
    );
    assert_eq!(fake.requests().len(), 1);
}

#[tokio::test]
async fn a_wait_for_a_rate_limit_is_announced() {
    let fake = FakeLlm::start(vec![
        Scripted::json(429, r#"{"error":{"message":"slow down"}}"#).header("retry-after", "1"),
        Scripted::sse(openai_sse(&["Hi."], Some("stop"), true, true)),
    ])
    .await;
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let s2 = seen.clone();
    let client = LlmClient::new(openai_cfg(&fake))
        .unwrap_or_else(|e| panic!("{e}"))
        .with_notifier(std::sync::Arc::new(move |n: &vaultdm::llm::Notice| {
            if let Ok(mut v) = s2.lock() {
                v.push(n.to_string());
            }
        }));
    let reply = client
        .stream_chat(&simple_request(), &mut |_| {}, std::future::pending())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(reply.complete);
    let seen = seen.lock().map(|v| v.clone()).unwrap_or_default();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(
        seen[0].starts_with("the provider is rate-limiting us (HTTP 429); waiting 1s, until ")
            && seen[0].contains("retry 1 of 3"),
        "{}",
        seen[0]
    );
}

#[tokio::test]
async fn openai_stream_closed_without_end_event_is_cut_off_not_lost() {
    let fake = FakeLlm::start(vec![Scripted::sse(openai_sse(
        &["The dragon ", "rears"],
        None,
        false,
        false,
    ))])
    .await;
    let (reply, _) = run(&openai_cfg(&fake), &simple_request()).await;
    let reply = reply.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(reply.text, "The dragon rears");
    assert!(!reply.complete);
    assert_eq!(reply.cut_off, Some(CutOff::EndedEarly));
}

#[tokio::test]
async fn connection_dropped_mid_stream_carries_partial_reply() {
    let partial = openai_sse(&["The bridge ", "collapses"], None, false, false);
    let fake = FakeLlm::start(vec![Scripted::sse_steps(vec![
        Step::Send(partial.into_bytes()),
        Step::Send(b"data: {\"choices\":[{\"delta\":{\"cont".to_vec()),
        Step::Sleep(Duration::from_millis(50)),
        Step::Drop,
    ])])
    .await;
    let (result, _) = run(&openai_cfg(&fake), &simple_request()).await;
    let err = result.err().unwrap_or_else(|| panic!("expected an error"));
    assert!(matches!(err, LlmError::StreamCut { .. }), "{err:?}");
    let partial = err.partial().unwrap_or_else(|| panic!("no partial"));
    assert_eq!(partial.text, "The bridge collapses");
    assert!(!partial.complete);
    assert_eq!(partial.cut_off, Some(CutOff::ConnectionLost));
    assert!(err.to_string().contains("broke mid-reply"), "{err}");
    assert_no_secret(&err);
}

#[tokio::test]
async fn openai_in_stream_error_carries_partial_reply() {
    let mut body = openai_sse(&["You see "], None, false, false);
    body.push_str(
        "data: {\"error\":{\"message\":\"upstream provider overloaded\",\"code\":502}}\n\n",
    );
    let fake = FakeLlm::start(vec![Scripted::sse(body)]).await;
    let (result, _) = run(&openai_cfg(&fake), &simple_request()).await;
    let err = result.err().unwrap_or_else(|| panic!("expected an error"));
    assert!(
        err.to_string().contains("upstream provider overloaded"),
        "{err}"
    );
    assert_eq!(err.partial().map(|p| p.text.as_str()), Some("You see "));
    assert_eq!(
        err.partial().and_then(|p| p.cut_off),
        Some(CutOff::ProviderError)
    );
}

#[tokio::test]
async fn openai_request_layout_and_key_only_in_auth_header() {
    let fake = FakeLlm::start(vec![Scripted::sse(openai_sse(
        &["ok"],
        Some("stop"),
        true,
        true,
    ))])
    .await;
    let history = vec![
        Exchange {
            player: "oldest".into(),
            dm: "old reply ".repeat(50),
            full_context: None,
        },
        Exchange {
            player: "we enter Phandalin".into(),
            dm: "The town is quiet.".into(),
            full_context: Some("## Canon\nPhandalin: a frontier town.".into()),
        },
        Exchange {
            player: "middle".into(),
            dm: "middle reply ".repeat(50),
            full_context: None,
        },
        Exchange {
            player: "recent".into(),
            dm: "recent reply".into(),
            full_context: None,
        },
    ];
    let count = |s: &str| s.split_whitespace().count();
    let prompt = build_prompt(
        &PromptInput {
            system: "You are the DM of the Lost Mine.",
            history: &history,
            player_message: "I ask Toblen about the Redbrands.",
            context: "- Toblen Stonehill: innkeeper",
            history_budget: 40,
        },
        &count,
    );
    assert_eq!(
        prompt.plan.kept,
        vec![1, 3],
        "oldest and oversized middle dropped, pinned kept"
    );
    let (reply, _) = run(&openai_cfg(&fake), &prompt.request).await;
    reply.unwrap_or_else(|e| panic!("{e}"));

    let reqs = fake.requests();
    assert_eq!(reqs.len(), 1);
    let r = &reqs[0];
    assert_eq!(r.method, "POST");
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {SECRET}").as_str())
    );
    assert_eq!(
        r.raw.matches(SECRET).count(),
        1,
        "key must appear only in the auth header"
    );
    let body = r.json();
    assert_eq!(body["model"], "llama3.1");
    assert_eq!(body["stream"], true);
    let msgs = body["messages"].as_array().cloned().unwrap_or_default();
    let roles: Vec<&str> = msgs.iter().filter_map(|m| m["role"].as_str()).collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "user", "assistant", "user"]
    );
    assert_eq!(msgs[0]["content"], "You are the DM of the Lost Mine.");
    assert_eq!(
        msgs[1]["content"],
        "## Canon\nPhandalin: a frontier town.\n\nPlayer: we enter Phandalin"
    );
    assert_eq!(msgs[3]["content"], "Player: recent");
    assert_eq!(
        msgs[5]["content"],
        "- Toblen Stonehill: innkeeper\n\nPlayer: I ask Toblen about the Redbrands."
    );
    assert!(!body.to_string().contains("oldest"));
    assert!(!body.to_string().contains("middle reply"));
}

#[tokio::test]
async fn anthropic_streams_bytewise_with_correct_request() {
    let tokens = ["The ", "goblin ", "grins — 🗡️"];
    let fake = FakeLlm::start(vec![Scripted::sse_bytewise(anthropic_sse(&tokens, true))]).await;
    let req = ChatRequest {
        system: "You are the DM.".into(),
        messages: vec![
            ChatMessage::user("CANON\n\nPlayer: hello"),
            ChatMessage::assistant("Welcome."),
            ChatMessage::user("Player: I attack"),
        ],
        ..ChatRequest::default()
    };
    let (reply, seen) = run(&anthropic_cfg(&fake), &req).await;
    let reply = reply.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(reply.text, tokens.concat());
    assert_eq!(seen.concat(), tokens.concat());
    assert!(reply.complete);
    assert_eq!(reply.finish_reason.as_deref(), Some("end_turn"));
    assert_eq!(
        reply.usage,
        Some(Usage {
            input_tokens: Some(130),
            output_tokens: Some(9),
            cached_tokens: Some(100)
        })
    );

    let reqs = fake.requests();
    let r = &reqs[0];
    assert_eq!(r.path, "/v1/messages");
    assert_eq!(r.header("x-api-key"), Some(SECRET));
    assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(r.header("authorization"), None);
    assert_eq!(r.raw.matches(SECRET).count(), 1);
    let body = r.json();
    assert_eq!(body["system"][0]["text"], "You are the DM.");
    assert_eq!(body["max_tokens"], 1024);
    let msgs = body["messages"].as_array().cloned().unwrap_or_default();
    assert_eq!(msgs.len(), 3);
    assert!(msgs.iter().all(|m| m["role"] != "system"));
    assert_eq!(msgs[0]["content"], "CANON\n\nPlayer: hello");
    assert_eq!(msgs[2]["content"][0]["text"], "Player: I attack");
}

#[tokio::test]
async fn anthropic_error_event_carries_partial_reply() {
    let mut body = anthropic_sse(&["The cave "], false);
    body.push_str("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n");
    let fake = FakeLlm::start(vec![Scripted::sse(body)]).await;
    let (result, _) = run(&anthropic_cfg(&fake), &simple_request()).await;
    let err = result.err().unwrap_or_else(|| panic!("expected an error"));
    assert!(matches!(err, LlmError::StreamError { .. }));
    assert!(err.to_string().contains("Overloaded"), "{err}");
    assert_eq!(err.partial().map(|p| p.text.as_str()), Some("The cave "));
}

#[tokio::test]
async fn anthropic_without_message_stop_is_cut_off() {
    let fake = FakeLlm::start(vec![Scripted::sse(anthropic_sse(&["Half a "], false))]).await;
    let (reply, _) = run(&anthropic_cfg(&fake), &simple_request()).await;
    let reply = reply.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(reply.text, "Half a ");
    assert!(!reply.complete);
    assert_eq!(reply.cut_off, Some(CutOff::EndedEarly));
}

#[tokio::test]
async fn retries_429_and_503_honouring_retry_after() {
    let fake = FakeLlm::start(vec![
        Scripted::json(429, r#"{"error":{"message":"slow down"}}"#).header("retry-after", "0.3"),
        Scripted::json(503, "<html>unavailable</html>"),
        Scripted::sse(openai_sse(&["finally"], Some("stop"), false, true)),
    ])
    .await;
    let start = Instant::now();
    let (reply, seen) = run(&openai_cfg(&fake), &simple_request()).await;
    let reply = reply.unwrap_or_else(|e| panic!("{e}"));
    assert!(
        start.elapsed() >= Duration::from_millis(300),
        "Retry-After ignored"
    );
    assert_eq!(reply.text, "finally");
    assert_eq!(seen, vec!["finally".to_owned()], "no text shown twice");
    assert_eq!(fake.requests().len(), 3);
}

#[tokio::test]
async fn rate_limit_gives_up_after_bounded_retries() {
    let fake = FakeLlm::start(vec![
        Scripted::json(
            429,
            r#"{"error":{"message":"quota exceeded"}}"#
        );
        5
    ])
    .await;
    let cfg = LlmConfig {
        retry: RetryPolicy {
            max_retries: 2,
            ..openai_cfg(&fake).retry
        },
        ..openai_cfg(&fake)
    };
    let (result, _) = run(&cfg, &simple_request()).await;
    let err = result.err().unwrap_or_else(|| panic!("expected an error"));
    assert!(
        matches!(err, LlmError::RateLimited { attempts: 3, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("quota exceeded"));
    assert_eq!(fake.requests().len(), 3);
}

#[tokio::test]
async fn server_errors_give_up_with_status() {
    let fake = FakeLlm::start(vec![Scripted::json(502, "bad gateway"); 4]).await;
    let (result, _) = run(&openai_cfg(&fake), &simple_request()).await;
    let err = result.err().unwrap_or_else(|| panic!("expected an error"));
    assert!(
        matches!(
            err,
            LlmError::Server {
                status: 502,
                attempts: 4,
                ..
            }
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn unauthorized_names_the_key_variable_not_the_key() {
    let body = format!(
        r#"{{"error":{{"message":"Incorrect API key provided: {SECRET}","code":"invalid_api_key"}}}}"#
    );
    let fake = FakeLlm::start(vec![Scripted::json(401, body)]).await;
    let (result, _) = run(&openai_cfg(&fake), &simple_request()).await;
    let err = result.err().unwrap_or_else(|| panic!("expected an error"));
    let msg = err.to_string();
    assert!(msg.contains("$OPENAI_API_KEY"), "{msg}");
    assert!(msg.contains("401"), "{msg}");
    assert_no_secret(&err);
    assert_eq!(fake.requests().len(), 1, "401 is not retried");
}

#[tokio::test]
async fn anthropic_403_names_its_variable() {
    let fake = FakeLlm::start(vec![Scripted::json(
        403,
        r#"{"type":"error","error":{"type":"permission_error","message":"no access"}}"#,
    )])
    .await;
    let (result, _) = run(&anthropic_cfg(&fake), &simple_request()).await;
    let msg = result.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(
        msg.contains("$ANTHROPIC_API_KEY") && msg.contains("no access"),
        "{msg}"
    );
}

#[tokio::test]
async fn unknown_model_is_named() {
    for body in [
        r#"{"error":{"message":"The model `llama3.1` does not exist","type":"invalid_request_error","code":"model_not_found"}}"#,
        r#"{"error":{"message":"model \"llama3.1\" not found, try pulling it first","type":"api_error"}}"#,
    ] {
        let fake = FakeLlm::start(vec![Scripted::json(404, body)]).await;
        let (result, _) = run(&openai_cfg(&fake), &simple_request()).await;
        let err = result.err().unwrap_or_else(|| panic!("expected an error"));
        assert!(matches!(err, LlmError::UnknownModel { .. }), "{err:?}");
        assert!(err.to_string().contains("`llama3.1`"), "{err}");
    }
}

#[tokio::test]
async fn plain_404_points_at_the_base_url() {
    let fake = FakeLlm::start(vec![Scripted::json(404, "404 page not found")]).await;
    let (result, _) = run(&openai_cfg(&fake), &simple_request()).await;
    let err = result.err().unwrap_or_else(|| panic!("expected an error"));
    assert!(matches!(err, LlmError::NotFound { .. }), "{err:?}");
    assert!(err.to_string().contains("base URL"), "{err}");
}

#[tokio::test]
async fn connection_refused_names_the_url() {
    // Bound but not listening: refused, and the port stays ours while the test runs.
    let reserved = tokio::net::TcpSocket::new_v4().unwrap_or_else(|e| panic!("{e}"));
    reserved
        .bind("127.0.0.1:0".parse().unwrap_or_else(|e| panic!("{e}")))
        .unwrap_or_else(|e| panic!("{e}"));
    let addr = reserved.local_addr().unwrap_or_else(|e| panic!("{e}"));
    let cfg = LlmConfig::new(
        ProviderKind::OpenAi,
        format!("http://{addr}/v1"),
        "llama3.1",
    );
    let (result, _) = run(&cfg, &simple_request()).await;
    let err = result.err().unwrap_or_else(|| panic!("expected an error"));
    assert!(matches!(err, LlmError::ConnectionRefused { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!("nothing answers at http://{addr}/v1 (connection refused) — is the local model server running?")
    );
}

#[tokio::test]
async fn slow_first_token_times_out() {
    let fake = FakeLlm::start(vec![Scripted::sse_steps(vec![
        Step::Send(b": still loading\n\n".to_vec()),
        Step::Sleep(Duration::from_secs(3)),
        Step::Send(openai_sse(&["late"], Some("stop"), false, true).into_bytes()),
    ])])
    .await;
    let cfg = LlmConfig {
        timeouts: Timeouts {
            first_token: Duration::from_millis(300),
            ..openai_cfg(&fake).timeouts
        },
        ..openai_cfg(&fake)
    };
    let start = Instant::now();
    let (result, _) = run(&cfg, &simple_request()).await;
    let err = result.err().unwrap_or_else(|| panic!("expected an error"));
    assert!(matches!(err, LlmError::FirstTokenTimeout { .. }), "{err:?}");
    assert!(err.to_string().contains("first-token timeout"), "{err}");
    assert!(start.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn slow_response_headers_count_against_first_token() {
    let fake = FakeLlm::start(vec![Scripted::sse(openai_sse(
        &["x"],
        Some("stop"),
        false,
        true,
    ))
    .delay_headers(Duration::from_secs(3))])
    .await;
    let cfg = LlmConfig {
        timeouts: Timeouts {
            first_token: Duration::from_millis(300),
            ..openai_cfg(&fake).timeouts
        },
        ..openai_cfg(&fake)
    };
    let (result, _) = run(&cfg, &simple_request()).await;
    assert!(
        matches!(result, Err(LlmError::FirstTokenTimeout { .. })),
        "{result:?}"
    );
}

#[tokio::test]
async fn idle_stream_times_out_keeping_partial_text() {
    let fake = FakeLlm::start(vec![Scripted::sse_steps(vec![
        Step::Send(openai_sse(&["The lich "], None, false, false).into_bytes()),
        Step::Sleep(Duration::from_secs(3)),
        Step::Send(openai_sse(&["laughs"], Some("stop"), false, true).into_bytes()),
    ])])
    .await;
    let cfg = LlmConfig {
        timeouts: Timeouts {
            idle: Duration::from_millis(300),
            ..openai_cfg(&fake).timeouts
        },
        ..openai_cfg(&fake)
    };
    let (result, _) = run(&cfg, &simple_request()).await;
    let err = result.err().unwrap_or_else(|| panic!("expected an error"));
    assert!(matches!(err, LlmError::IdleTimeout { .. }), "{err:?}");
    assert!(err.to_string().contains("idle timeout"), "{err}");
    assert_eq!(err.partial().map(|p| p.text.as_str()), Some("The lich "));
}

#[tokio::test]
async fn cancel_returns_interrupted_partial_reply() {
    let fake = FakeLlm::start(vec![Scripted::sse_steps(vec![
        Step::Send(openai_sse(&["Once ", "upon"], None, false, false).into_bytes()),
        Step::Sleep(Duration::from_secs(5)),
        Step::Send(openai_sse(&[" a time"], Some("stop"), false, true).into_bytes()),
    ])])
    .await;
    let client = LlmClient::new(openai_cfg(&fake)).unwrap_or_else(|e| panic!("{e}"));
    let (tx, mut rx) = tokio::sync::watch::channel(false);
    let mut got = String::new();
    let start = Instant::now();
    let reply = client
        .stream_chat(
            &simple_request(),
            &mut |t: &str| {
                got.push_str(t);
                if got == "Once upon" {
                    let _ = tx.send(true);
                }
            },
            async move {
                let _ = rx.wait_for(|v| *v).await;
            },
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(start.elapsed() < Duration::from_secs(3));
    assert_eq!(reply.text, "Once upon");
    assert!(!reply.complete);
    assert!(reply.interrupted());
    assert_eq!(reply.cut_off, Some(CutOff::Interrupted));
}

#[tokio::test]
async fn client_is_reusable_across_turns() {
    let fake = FakeLlm::start(vec![
        Scripted::sse(openai_sse(&["one"], Some("stop"), false, true)),
        Scripted::sse(openai_sse(&["two"], Some("stop"), false, true)),
    ])
    .await;
    let client = LlmClient::new(openai_cfg(&fake)).unwrap_or_else(|e| panic!("{e}"));
    for expected in ["one", "two"] {
        let reply = client
            .stream_chat(&simple_request(), &mut |_: &str| {}, std::future::pending())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(reply.text, expected);
    }
}

#[tokio::test]
async fn non_streaming_json_answer_is_understood() {
    let fake = FakeLlm::start(vec![Scripted::json(
        200,
        r#"{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"Whole reply"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2}}"#,
    )])
    .await;
    let (reply, seen) = run(&openai_cfg(&fake), &simple_request()).await;
    let reply = reply.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(reply.text, "Whole reply");
    assert_eq!(seen, vec!["Whole reply".to_owned()]);
    assert!(reply.complete);
}

#[tokio::test]
async fn unreadable_event_is_a_warning_and_text_survives() {
    let mut body = String::from("data: {broken json\n\n");
    body.push_str(&openai_sse(&["fine"], Some("stop"), false, true));
    let fake = FakeLlm::start(vec![Scripted::sse(body)]).await;
    let (reply, _) = run(&openai_cfg(&fake), &simple_request()).await;
    let reply = reply.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(reply.text, "fine");
    assert_eq!(reply.warnings.len(), 1);
}

#[tokio::test]
async fn local_server_without_key_sends_no_auth_header() {
    let fake = FakeLlm::start(vec![Scripted::sse(openai_sse(
        &["hi"],
        Some("stop"),
        false,
        true,
    ))])
    .await;
    let cfg = LlmConfig {
        api_key: None,
        ..openai_cfg(&fake)
    };
    let (reply, _) = run(&cfg, &simple_request()).await;
    reply.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(fake.requests()[0].header("authorization"), None);
}

#[tokio::test]
async fn server_rejecting_optional_fields_gets_a_plainer_request() {
    let fake = FakeLlm::start(vec![
        Scripted::json(
            400,
            r#"{"error":{"message":"Unrecognized request argument supplied: stream_options"}}"#,
        ),
        Scripted::json(
            400,
            r#"{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."}}"#,
        ),
        Scripted::sse(openai_sse(&["ok"], Some("stop"), false, true)),
    ])
    .await;
    let (reply, _) = run(&openai_cfg(&fake), &simple_request()).await;
    assert_eq!(reply.map(|r| r.text).ok().as_deref(), Some("ok"));
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 3);
    assert!(reqs[0].json().get("stream_options").is_some());
    assert!(reqs[1].json().get("stream_options").is_none());
    assert_eq!(reqs[2].json()["max_completion_tokens"], 1024);
    assert!(reqs[2].json().get("max_tokens").is_none());
}

#[tokio::test]
async fn other_bad_requests_are_not_resent() {
    let fake = FakeLlm::start(vec![Scripted::json(
        400,
        r#"{"error":{"message":"messages: roles must alternate"}}"#,
    )])
    .await;
    let (result, _) = run(&openai_cfg(&fake), &simple_request()).await;
    let err = result.err().unwrap_or_else(|| panic!("expected an error"));
    assert!(
        matches!(err, LlmError::Rejected { status: 400, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("roles must alternate"));
    assert_eq!(fake.requests().len(), 1);
}

// ---- Tool calls (write-back proposals) ----

fn tool_request() -> ChatRequest {
    ChatRequest {
        tools: vec![
            ToolSpec {
                name: "propose_changes".into(),
                description: "Propose changes to the campaign canon.".into(),
                parameters: json!({"type":"object","properties":{"npc":{"type":"string"},"hp":{"type":"integer"}}}),
            },
            ToolSpec {
                name: "advance_time".into(),
                description: "Let time pass.".into(),
                parameters: json!({"type":"object","properties":{"days":{"type":"integer"}}}),
            },
        ],
        ..simple_request()
    }
}

/// The arguments text of the first call, split mid-string, mid-`\u` escape and mid-emoji.
const ARG_PIECES: [&str; 8] = [
    r#"{"np"#,
    r#"c":"Gr\u0"#,
    r#"0f"#,
    r#"cm","hp":"#,
    r#"-7,"note":""#,
    "🐉 bi",
    r#"tes \""#,
    r#""}"#,
];

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

#[tokio::test]
async fn openai_tool_calls_stream_in_pieces_beside_text() {
    let mut body = openai_sse(&["The ogre ", "reels. "], None, false, false);
    body.push_str(&openai_tool_chunk(
        Some(0),
        Some("call_1"),
        Some("propose_changes"),
        Some(""),
    ));
    for piece in &ARG_PIECES[..4] {
        body.push_str(&openai_tool_chunk(Some(0), None, None, Some(piece)));
    }
    body.push_str(&openai_tool_chunk(
        Some(1),
        Some("call_2"),
        Some("advance_time"),
        Some(r#"{"days":"#),
    ));
    for piece in &ARG_PIECES[4..] {
        body.push_str(&openai_tool_chunk(Some(0), None, None, Some(piece)));
    }
    body.push_str(&openai_tool_chunk(Some(1), None, None, Some("1}")));
    body.push_str(&openai_finish("tool_calls"));
    body.push_str("data: [DONE]\n\n");
    let fake = FakeLlm::start(vec![Scripted::sse_bytewise(body)]).await;
    let (reply, seen) = run(&openai_cfg(&fake), &tool_request()).await;
    let reply = reply.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(reply.text, "The ogre reels. ");
    assert_eq!(seen.concat(), reply.text, "only prose reaches the screen");
    assert_eq!(
        reply.tool_calls,
        vec![
            call("call_1", "propose_changes", &ARG_PIECES.concat()),
            call("call_2", "advance_time", r#"{"days":1}"#),
        ]
    );
    let args: serde_json::Value =
        serde_json::from_str(&reply.tool_calls[0].arguments).unwrap_or_default();
    assert_eq!(args["npc"], json!("Grüm"));
    assert_eq!(args["note"], json!("🐉 bites \""));
    assert!(reply.complete, "finish_reason tool_calls is a natural end");
    assert_eq!(reply.cut_off, None);
    assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));

    let sent = fake.requests()[0].json();
    assert_eq!(
        sent["tools"][0]["function"]["name"],
        json!("propose_changes")
    );
    assert_eq!(sent["tools"][1]["type"], json!("function"));
    assert!(sent.get("tool_choice").is_none());
}

#[tokio::test]
async fn openai_tool_call_only_reply_from_a_sloppy_server() {
    // No text, no `index`, the id repeated on every piece, name and arguments in one chunk,
    // and no [DONE]: the finish_reason alone ends the reply.
    let mut body = openai_tool_chunk(None, Some("x1"), Some("advance_time"), Some(r#"{"da"#));
    body.push_str(&openai_tool_chunk(
        None,
        Some("x1"),
        None,
        Some(r#"ys":2}"#),
    ));
    body.push_str(&openai_finish("tool_calls"));
    let fake = FakeLlm::start(vec![Scripted::sse(body)]).await;
    let (reply, seen) = run(&openai_cfg(&fake), &tool_request()).await;
    let reply = reply.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(reply.text, "");
    assert!(seen.is_empty());
    assert_eq!(
        reply.tool_calls,
        vec![call("x1", "advance_time", r#"{"days":2}"#)]
    );
    assert!(reply.complete);
}

#[tokio::test]
async fn openai_stream_broken_mid_arguments_keeps_text_and_partial_call() {
    let mut partial = openai_sse(&["The bridge ", "sways."], None, false, false);
    partial.push_str(&openai_tool_chunk(
        Some(0),
        Some("call_9"),
        Some("propose_changes"),
        Some(r#"{"hp":"#),
    ));
    partial.push_str(&openai_tool_chunk(Some(0), None, None, Some("-")));
    let fake = FakeLlm::start(vec![Scripted::sse_steps(vec![
        Step::Send(partial.into_bytes()),
        Step::Send(b"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"ind".to_vec()),
        Step::Sleep(Duration::from_millis(50)),
        Step::Drop,
    ])])
    .await;
    let (result, _) = run(&openai_cfg(&fake), &tool_request()).await;
    let err = result.err().unwrap_or_else(|| panic!("expected an error"));
    assert!(matches!(err, LlmError::StreamCut { .. }), "{err:?}");
    let partial = err.partial().unwrap_or_else(|| panic!("no partial"));
    assert_eq!(partial.text, "The bridge sways.");
    assert_eq!(
        partial.tool_calls,
        vec![call("call_9", "propose_changes", r#"{"hp":-"#)],
        "the unfinished arguments are kept as they arrived"
    );
    assert!(!partial.complete);
    assert_eq!(partial.cut_off, Some(CutOff::ConnectionLost));
}

#[tokio::test]
async fn openai_non_streaming_json_with_tool_calls() {
    let fake = FakeLlm::start(vec![Scripted::json(
        200,
        r#"{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"Noted.","tool_calls":[{"id":"call_a","type":"function","function":{"name":"propose_changes","arguments":"{\"hp\":-3}"}},{"id":"call_b","type":"function","function":{"name":"advance_time","arguments":""}}]},"finish_reason":"tool_calls"}]}"#,
    )])
    .await;
    let (reply, _) = run(&openai_cfg(&fake), &tool_request()).await;
    let reply = reply.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(reply.text, "Noted.");
    assert_eq!(
        reply.tool_calls,
        vec![
            call("call_a", "propose_changes", r#"{"hp":-3}"#),
            call("call_b", "advance_time", "{}"),
        ]
    );
    assert!(reply.complete);
}

fn anthropic_tool_body(stop: bool) -> String {
    let mut s = anthropic_event(
        json!({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"usage":{"input_tokens":30,"output_tokens":1}}}),
    );
    s.push_str(&anthropic_event(
        json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
    ));
    s.push_str(&anthropic_event(json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"The ogre reels."}})));
    s.push_str(&anthropic_event(
        json!({"type":"content_block_stop","index":0}),
    ));
    s.push_str(&anthropic_event(json!({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"propose_changes","input":{}}})));
    for piece in &ARG_PIECES[..5] {
        s.push_str(&anthropic_event(json!({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":piece}})));
    }
    if !stop {
        return s;
    }
    for piece in &ARG_PIECES[5..] {
        s.push_str(&anthropic_event(json!({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":piece}})));
    }
    s.push_str(&anthropic_event(
        json!({"type":"content_block_stop","index":1}),
    ));
    s.push_str(&anthropic_event(
        json!({"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}),
    ));
    s.push_str(&anthropic_event(json!({"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":" Night falls."}})));
    s.push_str(&anthropic_event(
        json!({"type":"content_block_stop","index":2}),
    ));
    // A tool_use block with no input_json_delta: no arguments.
    s.push_str(&anthropic_event(json!({"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_2","name":"advance_time","input":{}}})));
    s.push_str(&anthropic_event(
        json!({"type":"content_block_stop","index":3}),
    ));
    s.push_str(&anthropic_event(json!({"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":40}})));
    s.push_str(&anthropic_event(json!({"type":"message_stop"})));
    s
}

#[tokio::test]
async fn anthropic_tool_use_streams_between_text_blocks() {
    let fake = FakeLlm::start(vec![Scripted::sse_bytewise(anthropic_tool_body(true))]).await;
    let (reply, seen) = run(&anthropic_cfg(&fake), &tool_request()).await;
    let reply = reply.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(reply.text, "The ogre reels. Night falls.");
    assert_eq!(seen.concat(), reply.text);
    assert_eq!(
        reply.tool_calls,
        vec![
            call("toolu_1", "propose_changes", &ARG_PIECES.concat()),
            call("toolu_2", "advance_time", "{}"),
        ]
    );
    assert!(reply.complete, "stop_reason tool_use is a natural end");
    assert_eq!(reply.finish_reason.as_deref(), Some("tool_use"));
    let sent = fake.requests()[0].json();
    assert_eq!(sent["tools"][0]["name"], json!("propose_changes"));
    assert_eq!(sent["tools"][1]["input_schema"]["type"], json!("object"));
}

#[tokio::test]
async fn anthropic_stream_ended_mid_arguments_keeps_the_partial_call() {
    let fake = FakeLlm::start(vec![Scripted::sse(anthropic_tool_body(false))]).await;
    let (reply, _) = run(&anthropic_cfg(&fake), &tool_request()).await;
    let reply = reply.unwrap_or_else(|e| panic!("{e}"));
    assert!(!reply.complete);
    assert_eq!(reply.cut_off, Some(CutOff::EndedEarly));
    assert_eq!(reply.text, "The ogre reels.");
    assert_eq!(
        reply.tool_calls,
        vec![call(
            "toolu_1",
            "propose_changes",
            &ARG_PIECES[..5].concat()
        )]
    );
}

#[tokio::test]
async fn requests_without_tools_carry_no_tools_field() {
    let fake = FakeLlm::start(vec![
        Scripted::sse(openai_sse(&["a"], Some("stop"), false, true)),
        Scripted::sse(anthropic_sse(&["a"], true)),
    ])
    .await;
    let (r, _) = run(&openai_cfg(&fake), &simple_request()).await;
    assert!(r.is_ok_and(|r| r.tool_calls.is_empty()));
    let (r, _) = run(&anthropic_cfg(&fake), &simple_request()).await;
    assert!(r.is_ok());
    for req in fake.requests() {
        assert!(req.json().get("tools").is_none(), "{}", req.raw);
    }
}
