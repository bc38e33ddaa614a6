//! The routes answered in-process, as axum tests a `Router`: the [`router`] of an [`App`]
//! opened as `serve` opens it ([`App::open`]), each request sent with `oneshot`; no socket,
//! no process. What needs the socket or the process (the flags, signals, kills, the
//! connection cap, timeouts, slow clients, kept-alive connections, threads and memory, a
//! real upstream) is tested in tests/serve.rs.
//!
//! [`App::open`] resolves the upstream as `serve` does, from the flags first, then the
//! environment and the user's config: the provider, model and base URL are named by flags
//! here, so a developer's own settings do not change them.

use super::*;
use axum::body::Body;
use axum::http::{header, Request, Response, StatusCode};
use futures_util::StreamExt;
use serde_json::{json, Value};
use std::path::Path;
use tower::ServiceExt;

/// The bundled campaign's id (its folder's name).
const ID: &str = "vault-template";
/// A token long enough for a public address (the GM's).
const TOKEN: &str = "in-process-token-0123456789";
/// A player's token.
const PLAYER: &str = "in-process-player-9876543210";

/// A copy of the bundled campaign, served in-process; its campaigns are closed (watchers
/// stopped, sessions unlocked) when it is dropped.
struct Served {
    app: Arc<App>,
    _stop: watch::Sender<bool>,
    _dir: tempfile::TempDir,
}

/// Recursively copies a folder (files and folders only).
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("{}: {e}", to.display()));
    for e in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
        let e = e.unwrap_or_else(|e| panic!("{e}"));
        let target = to.join(e.file_name());
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target)
                .unwrap_or_else(|e| panic!("{}: {e}", target.display()));
        }
    }
}

/// The LLM flags of an upstream that is configured (and never called).
fn upstream() -> crate::llm::settings::LlmFlags {
    crate::llm::settings::LlmFlags {
        provider: Some("openai".into()),
        model: Some("test-model".into()),
        base_url: Some("http://127.0.0.1:9/v1".into()),
        ..Default::default()
    }
}

/// `serve`'s options for `vault` on loopback, no token, default limits, [`upstream`].
fn options(vault: &Path) -> ServeOptions {
    ServeOptions {
        vaults: vec![vault.to_owned()],
        listen: SocketAddr::from(([127, 0, 0, 1], 0)),
        token: None,
        player_tokens: Vec::new(),
        cors: Vec::new(),
        hosts: Vec::new(),
        limits: Limits::default(),
        llm: upstream(),
        watch: WatchOptions::default(),
        close_idle_after: std::time::Duration::from_secs(1800),
        max_conversations: DEFAULT_MAX_CONVERSATIONS,
        task_model: None,
        hold_leaks: None,
    }
}

/// A copy of the bundled campaign in a folder named as its id, and the folder that holds it.
fn template() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let root = dir.path().join(ID);
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join(ID), &root);
    (dir, root)
}

/// The bundled campaign served with [`options`] changed by `tweak`.
async fn serve(tweak: impl FnOnce(&mut ServeOptions)) -> Served {
    serve_vault(|_| {}, tweak).await
}

/// The bundled campaign, its copy changed by `prepare` first, served with [`options`]
/// changed by `tweak`.
async fn serve_vault(prepare: impl FnOnce(&Path), tweak: impl FnOnce(&mut ServeOptions)) -> Served {
    let (dir, root) = template();
    prepare(&root);
    let mut opts = options(&root);
    tweak(&mut opts);
    let (app, stop) = App::open(&opts).await.unwrap_or_else(|e| panic!("{e:#}"));
    Served {
        app,
        _stop: stop,
        _dir: dir,
    }
}

impl Served {
    /// The router's answer to `req`.
    async fn call(&self, req: Request<Body>) -> Response<Body> {
        router(self.app.clone())
            .oneshot(req)
            .await
            .unwrap_or_else(|e| match e {})
    }

    /// The answer to `GET path`.
    async fn get(&self, path: &str) -> Response<Body> {
        self.call(request(Method::GET, path, &[], Body::empty()))
            .await
    }

    /// The answer to `POST path` with a JSON body.
    async fn post(&self, path: &str, body: &Value) -> Response<Body> {
        self.call(json_request(Method::POST, path, &[], body)).await
    }

    /// The served campaign.
    fn campaign(&self) -> Arc<Campaign> {
        self.app.campaigns[0].clone()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        for c in &self.app.campaigns {
            c.close();
        }
    }
}

/// A request with headers.
fn request(method: Method, path: &str, headers: &[(&str, &str)], body: Body) -> Request<Body> {
    let mut r = Request::builder().method(method).uri(path);
    for (k, v) in headers {
        r = r.header(*k, *v);
    }
    r.body(body).unwrap_or_else(|e| panic!("{e}"))
}

/// A request with headers and a JSON body.
fn json_request(
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
    body: &Value,
) -> Request<Body> {
    let mut headers = headers.to_vec();
    headers.push(("content-type", "application/json"));
    request(method, path, &headers, Body::from(body.to_string()))
}

/// A chat completion request of one user message.
fn say(message: &str) -> Value {
    json!({"messages": [{"role": "user", "content": message}]})
}

/// The answer's body as JSON.
async fn json_of(r: Response<Body>) -> Value {
    let bytes = axum::body::to_bytes(r.into_body(), usize::MAX)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&bytes)))
}

/// The answer's status and its error's `code` (in the documented OpenAI shape).
async fn error_of(r: Response<Body>) -> (StatusCode, Value) {
    let status = r.status();
    let j = json_of(r).await;
    assert!(j["error"]["message"].is_string(), "{j}");
    assert!(j["error"]["type"].is_string(), "{j}");
    (status, j["error"]["code"].clone())
}

/// A route's path with its parameters filled in: this campaign, session `lamp`.
fn sample(path: &str) -> String {
    path.replace("{id}", ID)
        .replace("{session}", "lamp")
        .replace("{n}", "1")
}

/// The body sent to every `POST` route in the walks: a JSON object each route reads as
/// its own (proposal numbers; the context's fields, none given).
fn walk_body() -> Value {
    json!({"numbers": [1]})
}

/// A request for a route of the table, with these headers.
fn route_request(method: &Method, path: &str, headers: &[(&str, &str)]) -> Request<Body> {
    if *method == Method::POST {
        json_request(Method::POST, path, headers, &walk_body())
    } else {
        request(method.clone(), path, headers, Body::empty())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_route_table_is_what_the_router_answers() {
    let s = serve(|_| {}).await;
    let table = routes();
    for Route { method, path, .. } in &table {
        let r = s.call(route_request(method, &sample(path), &[])).await;
        assert_ne!(
            r.status(),
            StatusCode::METHOD_NOT_ALLOWED,
            "{method} {path}"
        );
        if r.status() == StatusCode::NOT_FOUND {
            let (_, code) = error_of(r).await;
            assert_ne!(code, "not_found", "{method} {path} is routed");
        }
        // The other method on the same path is not allowed, unless the table has it too.
        for other in [Method::GET, Method::POST] {
            if table.iter().any(|r| r.method == other && r.path == *path) {
                continue;
            }
            let r = s.call(route_request(&other, &sample(path), &[])).await;
            assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED, "{other} {path}");
        }
    }
    // Any other path: 404 in the documented shape, naming the path.
    for (method, path) in [
        (Method::GET, "/nowhere"),
        (Method::POST, "/v1/completions"),
        (Method::GET, "/campaigns/vault-template/notes"),
    ] {
        let r = s.call(route_request(&method, path, &[])).await;
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "{method} {path}");
        let j = json_of(r).await;
        assert_eq!(j["error"]["code"], "not_found", "{j}");
        assert_eq!(j["error"]["type"], "invalid_request_error", "{j}");
        assert!(
            j["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains(path)),
            "{j}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_wants_the_token_on_a_public_address() {
    let s = serve(|o| {
        o.listen = SocketAddr::from(([0, 0, 0, 0], 0));
        o.token = Some(TOKEN.into());
    })
    .await;
    let bearer = format!("Bearer {TOKEN}");
    let lower = format!("bearer {TOKEN}");
    for Route { method, path, .. } in routes() {
        let path = sample(path);
        for headers in [vec![], vec![("authorization", "Bearer wrong")]] {
            let r = s.call(route_request(&method, &path, &headers)).await;
            assert_eq!(
                r.status(),
                StatusCode::UNAUTHORIZED,
                "{method} {path} {headers:?}"
            );
            assert_eq!(r.headers()[header::WWW_AUTHENTICATE], "Bearer");
            let j = json_of(r).await;
            assert_eq!(j["error"]["code"], "invalid_api_key", "{j}");
            assert_eq!(j["error"]["type"], "invalid_request_error", "{j}");
        }
        let wrong_query = format!("{path}?token=wrong");
        let r = s.call(route_request(&method, &wrong_query, &[])).await;
        assert_eq!(
            r.status(),
            StatusCode::UNAUTHORIZED,
            "{method} {wrong_query}"
        );
        // The token as a header (either case of `Bearer`) or in the address passes.
        let query = format!("{path}?token={TOKEN}");
        for r in [
            s.call(route_request(&method, &path, &[("authorization", &bearer)]))
                .await,
            s.call(route_request(&method, &path, &[("authorization", &lower)]))
                .await,
            s.call(route_request(&method, &query, &[])).await,
        ] {
            assert_ne!(r.status(), StatusCode::UNAUTHORIZED, "{method} {path}");
        }
    }
    // The unknown path, too: nothing is said about it without the token.
    let r = s.get("/nowhere").await;
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    // The inspector page by its address, as a browser opens it.
    let r = s.get(&format!("/?token={TOKEN}")).await;
    assert_eq!(r.status(), StatusCode::OK);
    let page = axum::body::to_bytes(r.into_body(), usize::MAX)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(String::from_utf8_lossy(&page).contains("vaultdm"));
    // A percent-encoded token in the address is decoded.
    let r = s
        .get("/campaigns?token=in-process%2Dtoken-0123456789")
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    // On a public address the Host is not checked (the token is).
    let r = s
        .call(request(
            Method::GET,
            "/campaigns",
            &[("host", "vault.example:8765"), ("authorization", &bearer)],
            Body::empty(),
        ))
        .await;
    assert_eq!(r.status(), StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_token_is_refused_only_off_loopback() {
    let (_dir, root) = template();
    let mut opts = options(&root);
    opts.token = Some("x".into());
    opts.listen = SocketAddr::from(([0, 0, 0, 0], 0));
    let err = match App::open(&opts).await {
        Ok(_) => panic!("a one-character token on 0.0.0.0 was accepted"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("at least 16"), "{err}");
    assert!(err.contains("VAULTDM_SERVE_TOKEN"), "{err}");
    opts.listen = SocketAddr::from(([127, 0, 0, 1], 0));
    let (app, _stop) = App::open(&opts)
        .await
        .unwrap_or_else(|e| panic!("on loopback any token will do: {e:#}"));
    for c in &app.campaigns {
        c.close();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_campaigns_are_404_on_every_campaign_route() {
    let s = serve(|_| {}).await;
    for Route { method, path, .. } in routes() {
        if !path.contains("{id}") {
            continue;
        }
        let path = path
            .replace("{id}", "nowhere")
            .replace("{session}", "lamp")
            .replace("{n}", "1");
        let r = s.call(route_request(&method, &path, &[])).await;
        let (status, code) = error_of(r).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{method} {path}");
        assert_eq!(code, "campaign_not_found", "{method} {path}");
    }
    // Ids are matched without regard to case.
    let r = s.get("/campaigns/Vault-Template/check").await;
    assert_eq!(r.status(), StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_canon_api_answers_for_a_fresh_campaign() {
    let s = serve(|_| {}).await;
    let j = json_of(s.get("/campaigns").await).await;
    let c = &j["campaigns"][0];
    assert_eq!(c["id"], ID, "{j}");
    assert_eq!(c["name"], "Coldharrow");
    assert_eq!(c["notes"], 33);
    assert_eq!(c["errors"], 0);
    assert_eq!(c["provider"], "openai");
    assert_eq!(c["model"], "test-model");
    assert_eq!(c["upstream_error"], Value::Null);

    let j = json_of(s.get("/campaigns/vault-template/check").await).await;
    assert_eq!(j["errors"], 0, "{j}");
    assert_eq!(j["notes"], 33);

    let r = s
        .get("/campaigns/vault-template/context?message=I+talk+to+Brannock&mode=light")
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    let j = json_of(r).await;
    assert_eq!(j["mode"], "light");
    assert!(
        j["text"]
            .as_str()
            .is_some_and(|t| t.contains("Brannock Tull")),
        "{j}"
    );
    assert!(j["items"].as_array().is_some_and(|i| !i.is_empty()), "{j}");
    for (query, code) in [
        ("mode=sideways", "invalid_mode"),
        ("budget=lots", "invalid_budget"),
    ] {
        let r = s
            .get(&format!("/campaigns/vault-template/context?{query}"))
            .await;
        assert_eq!(
            error_of(r).await,
            (StatusCode::BAD_REQUEST, json!(code)),
            "{query}"
        );
    }
    // The POST form, for a message too long for a URL.
    let r = s
        .post(
            "/campaigns/vault-template/context",
            &json!({"message": "I ask Odessa about the canary.", "mode": "light", "budget": 2000}),
        )
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(json_of(r).await["mode"], "light");
    for (body, code) in [
        (Body::from("not json"), "invalid_json"),
        (Body::from("[1, 2]"), "invalid_json"),
    ] {
        let r = s
            .call(request(
                Method::POST,
                "/campaigns/vault-template/context",
                &[],
                body,
            ))
            .await;
        assert_eq!(error_of(r).await, (StatusCode::BAD_REQUEST, json!(code)));
    }

    let j = json_of(s.get("/campaigns/vault-template/sessions").await).await;
    assert_eq!(j, json!({"sessions": []}));

    // The event stream opens with `ready`.
    let r = s.get("/campaigns/vault-template/events").await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.headers()[header::CONTENT_TYPE], "text/event-stream");
    let mut body = r.into_body().into_data_stream();
    let first = tokio::time::timeout(std::time::Duration::from_secs(10), body.next())
        .await
        .unwrap_or_else(|_| panic!("no first event"))
        .and_then(Result::ok)
        .unwrap_or_else(|| panic!("the stream ended"));
    let first = String::from_utf8_lossy(&first);
    assert!(first.contains("event: ready"), "{first}");
    assert!(first.contains(r#""campaign":"vault-template""#), "{first}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn models_list_each_campaign_by_its_name() {
    let s = serve(|_| {}).await;
    let j = json_of(s.get("/v1/models").await).await;
    assert_eq!(j["object"], "list");
    let data = j["data"].as_array().unwrap_or_else(|| panic!("{j}"));
    assert_eq!(data.len(), 2, "{j}");
    assert_eq!(data[0]["id"], ID);
    assert_eq!(data[0]["name"], "Coldharrow", "{j}");
    assert_eq!(data[1]["id"], "vault-template/test-model");
    assert_eq!(data[1]["name"], "Coldharrow (test-model)");
    for m in data {
        assert_eq!(m["object"], "model");
        assert_eq!(m["owned_by"], "vaultdm");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_campaign_without_an_upstream_answers_503_and_serves_its_canon() {
    // A key variable named by flag and unset: the upstream is not configured, whatever the
    // developer's environment holds.
    let s = serve(|o| o.llm.api_key_env = Some("VAULTDM_IN_PROCESS_TEST_NO_KEY".into())).await;
    let r = s.post("/v1/chat/completions", &say("Hello?")).await;
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    let j = json_of(r).await;
    assert_eq!(j["error"]["code"], "upstream_not_configured");
    assert_eq!(j["error"]["type"], "server_error");
    let m = j["error"]["message"].as_str().unwrap_or_default();
    assert!(m.contains("VAULTDM_IN_PROCESS_TEST_NO_KEY"), "{m}");
    let j = json_of(s.get("/v1/models").await).await;
    assert_eq!(j["data"].as_array().map(Vec::len), Some(1), "{j}");
    let j = json_of(s.get("/campaigns").await).await;
    assert_eq!(j["campaigns"][0]["provider"], Value::Null);
    assert!(j["campaigns"][0]["upstream_error"].is_string(), "{j}");
    let r = s
        .get("/campaigns/vault-template/context?message=I+talk+to+Brannock&mode=light")
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    let j = json_of(s.get("/campaigns/vault-template/check").await).await;
    assert_eq!(j["notes"], 33);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completions_vaultdm_refuses_itself() {
    let s = serve(|o| o.limits.max_message_chars = 1000).await;
    // A session name Windows cannot hold is refused, with the rule.
    for bad in ["CON", "lpt1.md", "abc."] {
        let r = s
            .call(json_request(
                Method::POST,
                "/v1/chat/completions",
                &[("x-vaultdm-session", bad)],
                &say("Hi."),
            ))
            .await;
        assert_eq!(
            error_of(r).await,
            (StatusCode::BAD_REQUEST, json!("invalid_session")),
            "{bad}"
        );
    }
    // A placeholder the front end did not fill in.
    let r = s
        .call(json_request(
            Method::POST,
            "/v1/chat/completions",
            &[("x-vaultdm-session", "{{CHAT_ID}}")],
            &say("Hi."),
        ))
        .await;
    assert_eq!(
        error_of(r).await,
        (StatusCode::BAD_REQUEST, json!("invalid_session"))
    );
    for (body, status, code) in [
        (
            json!({"messages": []}),
            StatusCode::BAD_REQUEST,
            "no_user_message",
        ),
        (
            json!({"messages": 3}),
            StatusCode::BAD_REQUEST,
            "missing_messages",
        ),
        (
            say(&"m".repeat(1001)),
            StatusCode::PAYLOAD_TOO_LARGE,
            "message_too_long",
        ),
    ] {
        let r = s.post("/v1/chat/completions", &body).await;
        assert_eq!(error_of(r).await, (status, json!(code)), "{body}");
    }
    let r = s
        .call(request(
            Method::POST,
            "/v1/chat/completions",
            &[],
            Body::from("nope"),
        ))
        .await;
    assert_eq!(
        error_of(r).await,
        (StatusCode::BAD_REQUEST, json!("invalid_json"))
    );
    // A campaign named by header that is not served.
    let r = s
        .call(json_request(
            Method::POST,
            "/v1/chat/completions",
            &[("x-vaultdm-campaign", "elsewhere")],
            &say("Hi."),
        ))
        .await;
    assert_eq!(
        error_of(r).await,
        (StatusCode::NOT_FOUND, json!("campaign_not_found"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proposals_named_wrongly_are_the_requests_mistake() {
    let s = serve(|_| {}).await;
    // No conversation open for the session yet.
    let r = s
        .get("/campaigns/vault-template/sessions/lamp/pending")
        .await;
    assert_eq!(
        error_of(r).await,
        (StatusCode::NOT_FOUND, json!("session_not_open"))
    );
    let r = s
        .post(
            "/campaigns/vault-template/sessions/lamp/accept",
            &json!({"all": true}),
        )
        .await;
    assert_eq!(
        error_of(r).await,
        (StatusCode::NOT_FOUND, json!("session_not_open"))
    );
    // A conversation opens as a front end's first message opens it.
    s.campaign()
        .conversation("lamp", &s.app.shutdown)
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    let j = json_of(
        s.get("/campaigns/vault-template/sessions/lamp/pending")
            .await,
    )
    .await;
    assert_eq!(j, json!({"pending": []}));
    for decide in ["accept", "reject"] {
        let path = format!("/campaigns/vault-template/sessions/lamp/{decide}");
        for (body, status, code) in [
            (
                json!({"numbers": [7]}),
                StatusCode::NOT_FOUND,
                "proposal_not_found",
            ),
            (
                json!({"numbers": ["x"]}),
                StatusCode::BAD_REQUEST,
                "invalid_numbers",
            ),
            (
                json!({"numbers": [0]}),
                StatusCode::BAD_REQUEST,
                "invalid_numbers",
            ),
            (
                json!({"numbers": 2}),
                StatusCode::BAD_REQUEST,
                "invalid_numbers",
            ),
            (json!({}), StatusCode::BAD_REQUEST, "no_proposals_named"),
        ] {
            let r = s.post(&path, &body).await;
            let (got, got_code) = error_of(r).await;
            assert_eq!((got, got_code), (status, json!(code)), "{decide} {body}");
        }
        let r = s.post(&path, &json!({"numbers": [7, 8]})).await;
        let j = json_of(r).await;
        let m = j["error"]["message"].as_str().unwrap_or_default();
        assert!(m.contains("7, 8") && m.contains("pending: none"), "{m}");
        let r = s
            .call(request(Method::POST, &path, &[], Body::from("{")))
            .await;
        assert_eq!(
            error_of(r).await,
            (StatusCode::BAD_REQUEST, json!("invalid_json"))
        );
        // Nothing pending: `all` is no mistake.
        let r = s.post(&path, &json!({"all": true})).await;
        assert_eq!(r.status(), StatusCode::OK, "{decide} all");
    }
    let j = json_of(s.get("/campaigns/vault-template/sessions").await).await;
    assert_eq!(
        j,
        json!({"sessions": [{"name": "lamp", "open": true, "excluded": false}]})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browsers_get_cors_only_for_allowed_origins() {
    let s = serve(|o| {
        o.cors = vec!["http://localhost:3000/".into()];
        o.hosts = vec!["vault.lan".into()];
    })
    .await;
    let preflight = |origin: &str| {
        request(
            Method::OPTIONS,
            "/v1/chat/completions",
            &[
                ("origin", origin),
                ("access-control-request-method", "POST"),
                (
                    "access-control-request-headers",
                    "authorization, content-type",
                ),
            ],
            Body::empty(),
        )
    };
    let r = s.call(preflight("http://localhost:3000")).await;
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    let h = r.headers();
    assert_eq!(h["access-control-allow-origin"], "http://localhost:3000");
    assert_eq!(
        h["access-control-allow-headers"],
        "authorization, content-type"
    );
    assert_eq!(h["access-control-allow-methods"], "GET, POST, OPTIONS");
    assert_eq!(h["vary"], "Origin");
    let r = s.call(preflight("https://evil.example")).await;
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert!(r.headers().get("access-control-allow-origin").is_none());
    assert_eq!(error_of(r).await.1, "origin_not_allowed");
    // A page on another origin gets nothing; an allowed one gets its answer with CORS.
    let with_origin = |origin: &str, host: &str| {
        request(
            Method::GET,
            "/campaigns",
            &[("origin", origin), ("host", host)],
            Body::empty(),
        )
    };
    let r = s
        .call(with_origin("https://evil.example", "127.0.0.1:8765"))
        .await;
    assert_eq!(
        error_of(r).await,
        (StatusCode::FORBIDDEN, json!("origin_not_allowed"))
    );
    let r = s
        .call(with_origin("http://localhost:3000", "127.0.0.1:8765"))
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(
        r.headers()["access-control-allow-origin"],
        "http://localhost:3000"
    );
    // The inspector's own origin is no cross-origin call: served, no CORS headers.
    let r = s
        .call(with_origin("http://127.0.0.1:8765", "127.0.0.1:8765"))
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    assert!(r.headers().get("access-control-allow-origin").is_none());
    // DNS rebinding: a loopback server answers only to loopback names and those allowed.
    for (host, status) in [
        ("evil.example", StatusCode::FORBIDDEN),
        ("192.168.1.4:8765", StatusCode::FORBIDDEN),
        ("localhost:8765", StatusCode::OK),
        ("[::1]:8765", StatusCode::OK),
        ("vault.lan:8765", StatusCode::OK),
    ] {
        let r = s
            .call(request(
                Method::GET,
                "/campaigns",
                &[("host", host)],
                Body::empty(),
            ))
            .await;
        assert_eq!(r.status(), status, "{host}");
        if status == StatusCode::FORBIDDEN {
            assert_eq!(error_of(r).await.1, "host_not_allowed", "{host}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn preflights_pass_without_the_token_and_refusals_carry_cors() {
    let s = serve(|o| {
        o.token = Some(TOKEN.into());
        o.cors = vec!["http://localhost:3000".into()];
    })
    .await;
    // Browsers send no token with a preflight.
    let r = s
        .call(request(
            Method::OPTIONS,
            "/campaigns",
            &[
                ("origin", "http://localhost:3000"),
                ("access-control-request-method", "GET"),
            ],
            Body::empty(),
        ))
        .await;
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    // A page of an allowed origin without the token can read why it was refused.
    let r = s
        .call(request(
            Method::GET,
            "/campaigns",
            &[("origin", "http://localhost:3000")],
            Body::empty(),
        ))
        .await;
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        r.headers()["access-control-allow-origin"],
        "http://localhost:3000"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_hold_for_bodies_and_messages() {
    let s = serve(|o| {
        o.limits.max_body_bytes = 2000;
        o.limits.max_message_chars = 40;
    })
    .await;
    for path in [
        "/v1/chat/completions",
        "/campaigns/vault-template/context",
        "/campaigns/vault-template/sessions/lamp/accept",
    ] {
        let r = s.post(path, &say(&"x".repeat(5000))).await;
        let j = json_of(r).await;
        assert_eq!(j["error"]["code"], "request_too_large", "{path}: {j}");
        assert!(
            j["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("2000")),
            "{j}"
        );
    }
    let r = s
        .post("/v1/chat/completions", &say(&"x".repeat(5000)))
        .await;
    assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let r = s.post("/v1/chat/completions", &say(&"y".repeat(41))).await;
    assert_eq!(
        error_of(r).await,
        (StatusCode::PAYLOAD_TOO_LARGE, json!("message_too_long"))
    );
    let r = s.post("/v1/chat/completions", &say(&"y".repeat(40))).await;
    assert_ne!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);
    // A message too long for the limit, asked of /context: 413 message_too_long.
    let r = s
        .post(
            "/campaigns/vault-template/context",
            &json!({"message": "z".repeat(41)}),
        )
        .await;
    assert_eq!(
        error_of(r).await,
        (StatusCode::PAYLOAD_TOO_LARGE, json!("message_too_long"))
    );
    let r = s
        .get(&format!(
            "/campaigns/vault-template/context?message={}",
            "z".repeat(41)
        ))
        .await;
    assert_eq!(
        error_of(r).await,
        (StatusCode::PAYLOAD_TOO_LARGE, json!("message_too_long"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_too_long_for_context_is_413_message_too_long() {
    // Within the body limit (8 MB by default), over the message limit.
    let s = serve(|o| o.limits.max_message_chars = 1000).await;
    let r = s
        .post(
            "/campaigns/vault-template/context",
            &json!({"message": "a".repeat(150_000)}),
        )
        .await;
    assert_eq!(
        error_of(r).await,
        (StatusCode::PAYLOAD_TOO_LARGE, json!("message_too_long"))
    );
}

/// Canon the DM is given: planted in Odessa Flint's first trait, which every context she is
/// in carries (the full context's NPC line, her card).
const CANON_MARK: &str = "CANON-MARK-5521";
/// A GM secret: planted in a `## Secrets` section of her note.
const SECRET_MARK: &str = "SECRET-MARK-7731";

/// Plants [`CANON_MARK`] and [`SECRET_MARK`] in Odessa Flint's note.
fn plant_secrets(root: &Path) {
    let note = root.join("canon/npcs/odessa-flint.md");
    let text = std::fs::read_to_string(&note).unwrap_or_else(|e| panic!("{e}"));
    let text = text.replacen(
        "sets it down when she has decided about you.",
        &format!("sets it down when she has decided about you ({CANON_MARK})."),
        1,
    );
    assert!(text.contains(CANON_MARK), "the trait moved: {text}");
    let text = format!(
        "{text}\n## Secrets\n- She poisoned her second husband with lamp oil ({SECRET_MARK}).\n"
    );
    std::fs::write(&note, text).unwrap_or_else(|e| panic!("{e}"));
}

/// A fake OpenAI upstream on 127.0.0.1:0 (its base URL returned), answering by the model a
/// request names: `play` streams a reply and a proposal of the DM's; `echo-400`, `echo-404`
/// and `echo-422` answer that status with an error quoting the marks the prompt carries (as
/// servers that quote the request they choke on do); `echo-stream` streams a piece of reply
/// and then such an error.
async fn fake_upstream() -> String {
    async fn answer(body: axum::body::Bytes) -> axum::response::Response {
        use axum::response::IntoResponse;
        let prompt = String::from_utf8_lossy(&body);
        let quoted: Vec<&str> = [CANON_MARK, SECRET_MARK]
            .into_iter()
            .filter(|m| prompt.contains(m))
            .collect();
        let echo = json!({"error": {"message": format!(
            "model `x` cannot take this prompt: it says {}", quoted.join(" and ")
        )}});
        let model = serde_json::from_slice::<Value>(&body)
            .ok()
            .and_then(|v| v["model"].as_str().map(str::to_owned))
            .unwrap_or_default();
        let chunk = |delta: Value, finish: Option<&str>| {
            format!(
                "data: {}\n\n",
                json!({"id": "c1", "object": "chat.completion.chunk",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
            )
        };
        let sse =
            |body: String| ([(header::CONTENT_TYPE, "text/event-stream")], body).into_response();
        match model.as_str() {
            "play" => {
                let call = json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                    "function": {"name": "propose_canon_changes",
                        "arguments": r#"{"changes": [{"op": "event", "text": "Odessa set the glass down."}]}"#}}]});
                sse([
                    chunk(json!({"role": "assistant", "content": ""}), None),
                    chunk(json!({"content": "Odessa sets the glass down."}), None),
                    chunk(call, None),
                    chunk(json!({}), Some("tool_calls")),
                    "data: [DONE]\n\n".to_owned(),
                ]
                .concat())
            }
            "echo-stream" => sse([
                chunk(json!({"role": "assistant", "content": "Odessa "}), None),
                format!("data: {echo}\n\n"),
            ]
            .concat()),
            other => {
                let status = match other {
                    "echo-404" => StatusCode::NOT_FOUND,
                    "echo-422" => StatusCode::UNPROCESSABLE_ENTITY,
                    _ => StatusCode::BAD_REQUEST,
                };
                (status, axum::Json(echo)).into_response()
            }
        }
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
    let app = Router::new().route("/v1/chat/completions", post(answer));
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/v1")
}

/// The answer's `x-vaultdm-*` headers.
fn vaultdm_headers(r: &Response<Body>) -> Vec<(String, String)> {
    r.headers()
        .iter()
        .filter(|(k, _)| k.as_str().starts_with("x-vaultdm-"))
        .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
        .collect()
}

/// Everything a client reads of an answer: its status, and its headers and body as text.
async fn whole(r: Response<Body>) -> (StatusCode, String) {
    let (status, head, body) = parts(r).await;
    (status, head + &body)
}

/// An answer's status, its headers as text, its body as text.
async fn parts(r: Response<Body>) -> (StatusCode, String, String) {
    let mut seen = format!("{}\n", r.status());
    for (k, v) in r.headers() {
        seen.push_str(&format!("{k}: {}\n", String::from_utf8_lossy(v.as_bytes())));
    }
    let status = r.status();
    let bytes = axum::body::to_bytes(r.into_body(), usize::MAX)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    (status, seen, String::from_utf8_lossy(&bytes).into_owned())
}

/// The reply text of a completion: a `chat.completion` object, or a stream's chunks.
fn reply_text(body: &str) -> String {
    let Ok(v) = serde_json::from_str::<Value>(body) else {
        return body
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter_map(|d| serde_json::from_str::<Value>(d).ok())
            .filter_map(|v| {
                v["choices"][0]["delta"]["content"]
                    .as_str()
                    .map(str::to_owned)
            })
            .collect();
    };
    v["choices"][0]["message"]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_players_token_may_only_chat() {
    let s = serve(|o| {
        o.listen = SocketAddr::from(([0, 0, 0, 0], 0));
        o.token = Some(TOKEN.into());
        o.player_tokens = vec![PLAYER.into(), "another-players-token-000".into()];
        o.limits.max_body_bytes = 2000;
    })
    .await;
    let gm = format!("Bearer {TOKEN}");
    let player = format!("Bearer {PLAYER}");
    let table = routes();
    assert_eq!(
        table
            .iter()
            .filter(|r| r.players)
            .map(|r| (r.method.clone(), r.path))
            .collect::<Vec<_>>(),
        vec![
            (Method::GET, "/v1/models"),
            (Method::POST, "/v1/chat/completions")
        ],
        "players chat and nothing else"
    );
    for Route {
        method,
        path,
        players,
        ..
    } in table
    {
        let path = sample(path);
        let query = format!("{path}?token={PLAYER}");
        for r in [
            s.call(route_request(&method, &path, &[("authorization", &player)]))
                .await,
            s.call(route_request(&method, &query, &[])).await,
        ] {
            if players {
                assert!(
                    ![StatusCode::UNAUTHORIZED, StatusCode::FORBIDDEN].contains(&r.status()),
                    "{method} {path}: {}",
                    r.status()
                );
                continue;
            }
            assert_eq!(r.status(), StatusCode::FORBIDDEN, "{method} {path}");
            let j = json_of(r).await;
            assert_eq!(j["error"]["code"], "gm_only", "{j}");
            assert_eq!(j["error"]["type"], "invalid_request_error", "{j}");
            let m = j["error"]["message"].as_str().unwrap_or_default();
            assert!(m.contains("POST /v1/chat/completions"), "{m}");
            assert!(!m.contains("Coldharrow") && !m.contains(ID), "{m}");
        }
        // The GM's token: as before.
        let r = s
            .call(route_request(&method, &path, &[("authorization", &gm)]))
            .await;
        assert!(
            ![StatusCode::UNAUTHORIZED, StatusCode::FORBIDDEN].contains(&r.status()),
            "{method} {path}: {}",
            r.status()
        );
        // No token, or a wrong one: 401.
        for headers in [vec![], vec![("authorization", "Bearer wrong")]] {
            let r = s.call(route_request(&method, &path, &headers)).await;
            assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "{method} {path}");
        }
    }
    // The other player's token is a player's too.
    let r = s
        .call(route_request(
            &Method::GET,
            "/campaigns",
            &[("authorization", "Bearer another-players-token-000")],
        ))
        .await;
    assert_eq!(error_of(r).await.1, "gm_only");
    let r = s
        .call(route_request(
            &Method::GET,
            "/v1/models",
            &[("authorization", "Bearer another-players-token-000")],
        ))
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    // Refused before the body is read: a body over the limit is still `gm_only`.
    let r = s
        .call(json_request(
            Method::POST,
            &sample("/campaigns/{id}/sessions/{session}/accept"),
            &[("authorization", &player)],
            &json!({"numbers": [1], "pad": "x".repeat(5000)}),
        ))
        .await;
    assert_eq!(error_of(r).await, (StatusCode::FORBIDDEN, json!("gm_only")));
    // HEAD is GET's; a method no route has on a player's path is no way round.
    for (method, path) in [
        (Method::HEAD, "/campaigns"),
        (Method::GET, "/v1/chat/completions"),
        (Method::POST, "/v1/models"),
    ] {
        let r = s
            .call(request(
                method.clone(),
                path,
                &[("authorization", &player)],
                Body::empty(),
            ))
            .await;
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "{method} {path}");
    }
    // A path no route has: the fallback's 404, which names only the path asked.
    let r = s
        .call(request(
            Method::GET,
            "/nowhere",
            &[("authorization", &player)],
            Body::empty(),
        ))
        .await;
    assert_eq!(
        error_of(r).await,
        (StatusCode::NOT_FOUND, json!("not_found"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn player_tokens_need_a_gm_token_even_on_loopback() {
    let (_dir, root) = template();
    let mut opts = options(&root);
    // Player tokens alone: a request without a token would be the GM's. Refused.
    opts.player_tokens = vec![PLAYER.into()];
    let err = match App::open(&opts).await {
        Ok(_) => panic!("player tokens without a GM token were accepted"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("GM token"), "{err}");
    // A player token that is the GM's.
    opts.token = Some(PLAYER.into());
    let err = match App::open(&opts).await {
        Ok(_) => panic!("a player token equal to the GM's was accepted"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("of their own"), "{err}");
    // A short player token off loopback.
    opts.token = Some(TOKEN.into());
    opts.player_tokens = vec!["short".into()];
    opts.listen = SocketAddr::from(([0, 0, 0, 0], 0));
    let err = match App::open(&opts).await {
        Ok(_) => panic!("a five-character player token on 0.0.0.0 was accepted"),
        Err(e) => e.to_string(),
    };
    assert!(
        err.contains("player token") && err.contains("at least 16"),
        "{err}"
    );
    // On loopback with both: no token is no role, not the GM's.
    let s = serve(|o| {
        o.token = Some(TOKEN.into());
        o.player_tokens = vec![PLAYER.into()];
    })
    .await;
    for path in ["/", "/campaigns", "/v1/models"] {
        let r = s.get(path).await;
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "{path}");
    }
    let r = s
        .call(request(
            Method::GET,
            "/campaigns",
            &[("authorization", &format!("Bearer {TOKEN}"))],
            Body::empty(),
        ))
        .await;
    assert_eq!(r.status(), StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_players_answer_carries_no_proposals_while_the_gms_does() {
    let base = fake_upstream().await;
    let s = serve(|o| {
        o.token = Some(TOKEN.into());
        o.player_tokens = vec![PLAYER.into()];
        o.llm.base_url = Some(base);
    })
    .await;
    for stream in [false, true] {
        for (who, token) in [("gm", TOKEN), ("player", PLAYER)] {
            let session = format!("{who}-{}", if stream { "stream" } else { "plain" });
            let r = s
                .call(json_request(
                    Method::POST,
                    "/v1/chat/completions",
                    &[
                        ("authorization", &format!("Bearer {token}")),
                        ("x-vaultdm-session", &session),
                    ],
                    &json!({"model": "play", "stream": stream,
                        "messages": [{"role": "user", "content": "We ask Odessa Flint for a drink."}]}),
                ))
                .await;
            assert_eq!(r.status(), StatusCode::OK, "{session}");
            let headers = vaultdm_headers(&r);
            assert!(
                headers.contains(&("x-vaultdm-session".into(), session.clone())),
                "{session}: {headers:?}"
            );
            if !stream {
                assert!(
                    headers.iter().any(|(k, _)| k == "x-vaultdm-context"),
                    "{session}: {headers:?}"
                );
            }
            let (_, head, body) = parts(r).await;
            let text = reply_text(&body);
            if who == "gm" {
                assert!(
                    text.starts_with("Odessa sets the glass down.")
                        && text.contains("the DM proposes canon changes")
                        && text.contains(&format!("/sessions/{session}/accept")),
                    "{session}: {text}"
                );
            } else {
                assert_eq!(text, "Odessa sets the glass down.", "{session}");
                assert!(!body.contains("proposes"), "{session}: {body}");
                assert!(!head.contains("propos"), "{session}: {head}");
                for (k, _) in &headers {
                    assert!(role::PLAYER_HEADERS.contains(&k.as_str()), "{k}");
                }
            }
            // The proposal waits for the GM all the same.
            let r = s
                .call(request(
                    Method::GET,
                    &format!("/campaigns/{ID}/sessions/{session}/pending"),
                    &[("authorization", &format!("Bearer {TOKEN}"))],
                    Body::empty(),
                ))
                .await;
            let j = json_of(r).await;
            assert_eq!(
                j["pending"].as_array().map(Vec::len),
                Some(1),
                "{session}: {j}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_error_a_player_can_cause_carries_canon() {
    let base = fake_upstream().await;
    let s = serve_vault(plant_secrets, |o| {
        o.token = Some(TOKEN.into());
        o.player_tokens = vec![PLAYER.into()];
        o.llm.base_url = Some(base.clone());
    })
    .await;
    let vault = s.campaign().root.display().to_string();
    let asking = |model: &str, stream: bool| {
        json!({"model": model, "stream": stream,
            "messages": [{"role": "user", "content": "We ask Odessa Flint about her husbands."}]})
    };
    // The marks reach the prompt, and the upstream quotes them back: the GM reads them.
    let r = s
        .call(json_request(
            Method::POST,
            "/v1/chat/completions",
            &[
                ("authorization", &format!("Bearer {TOKEN}")),
                ("x-vaultdm-session", "gm-echo"),
            ],
            &asking("echo-400", false),
        ))
        .await;
    let (status, seen) = whole(r).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{seen}");
    assert!(
        seen.contains(CANON_MARK),
        "the canon reached the echo: {seen}"
    );

    let player = format!("Bearer {PLAYER}");
    let mut n = 0;
    let mut ask = |headers: Vec<(&'static str, String)>, body: Body| {
        n += 1;
        let mut h = vec![
            ("authorization", player.clone()),
            ("content-type", "application/json".to_owned()),
        ];
        h.extend(headers);
        if !h.iter().any(|(k, _)| *k == "x-vaultdm-session") {
            h.push(("x-vaultdm-session", format!("player-{n}")));
        }
        let h: Vec<(&str, &str)> = h.iter().map(|(k, v)| (*k, v.as_str())).collect();
        request(Method::POST, "/v1/chat/completions", &h, body)
    };
    let json_body = |v: Value| Body::from(v.to_string());
    let cases: Vec<(&str, Request<Body>, StatusCode, &str)> = vec![
        (
            "not json",
            ask(vec![], Body::from("{ Odessa")),
            StatusCode::BAD_REQUEST,
            "invalid_json",
        ),
        (
            "no messages",
            ask(vec![], json_body(json!({"messages": 3}))),
            StatusCode::BAD_REQUEST,
            "missing_messages",
        ),
        (
            "a wizard's message",
            ask(
                vec![],
                json_body(json!({"messages": [{"role": "wizard", "content": "Odessa?"}]})),
            ),
            StatusCode::BAD_REQUEST,
            "invalid_role",
        ),
        (
            "no user message",
            ask(
                vec![],
                json_body(json!({"messages": [
                    {"role": "user", "content": "We ask Odessa Flint about her husbands."},
                    {"role": "assistant", "content": "She wipes a glass."}]})),
            ),
            StatusCode::BAD_REQUEST,
            "no_user_message",
        ),
        (
            "a session name Windows cannot hold (under `player-` too)",
            ask(
                vec![("x-vaultdm-session", "abc.".into())],
                json_body(asking("play", false)),
            ),
            StatusCode::BAD_REQUEST,
            "invalid_session",
        ),
        (
            "a campaign not served",
            ask(
                vec![("x-vaultdm-campaign", "elsewhere".into())],
                json_body(asking("play", false)),
            ),
            StatusCode::NOT_FOUND,
            "campaign_not_found",
        ),
        (
            "a model the upstream does not know",
            ask(vec![], json_body(asking("echo-404", false))),
            StatusCode::NOT_FOUND,
            "model_not_found",
        ),
        (
            "the upstream rejects the request",
            ask(vec![], json_body(asking("echo-400", false))),
            StatusCode::BAD_REQUEST,
            "upstream_rejected",
        ),
        (
            "the upstream fails",
            ask(vec![], json_body(asking("echo-422", true))),
            StatusCode::BAD_GATEWAY,
            "upstream_error",
        ),
        (
            "the upstream fails mid-reply",
            ask(vec![], json_body(asking("echo-stream", false))),
            StatusCode::OK,
            "",
        ),
        (
            "the upstream fails mid-stream",
            ask(vec![], json_body(asking("echo-stream", true))),
            StatusCode::OK,
            "",
        ),
    ];
    for (what, req, status, code) in cases {
        let (got, seen) = whole(s.call(req).await).await;
        assert_eq!(got, status, "{what}: {seen}");
        if !code.is_empty() {
            assert!(
                seen.contains(&format!(r#""code":"{code}""#)),
                "{what}: {seen}"
            );
        }
        for secret in [CANON_MARK, SECRET_MARK, &vault, &base] {
            assert!(!seen.contains(secret), "{what} carries {secret}: {seen}");
        }
    }
    // A GM route: refused in fixed words.
    let r = s
        .call(request(
            Method::GET,
            &format!("/campaigns/{ID}/context?message=Odessa+Flint"),
            &[("authorization", &player)],
            Body::empty(),
        ))
        .await;
    let (got, seen) = whole(r).await;
    assert_eq!(got, StatusCode::FORBIDDEN);
    assert!(
        !seen.contains(CANON_MARK) && !seen.contains("Odessa"),
        "{seen}"
    );
}
