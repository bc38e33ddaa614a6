//! The canon API: what a campaign is, the context a message would get, what `check` says,
//! canon changes as they happen, the DM's proposals for review — and the inspector page.

use super::campaign::{Campaign, Upstream};
use super::conversation::Decision;
use super::openai::ApiError;
use super::App;
use crate::context::{ModeChoice, Options, Overrides};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use axum::Json;
use futures_util::Stream;
use serde_json::json;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

/// The inspector page: plain HTML and a little JS, served from the binary.
pub(crate) const INSPECTOR: &str = include_str!("inspector.html");

/// `GET /`.
pub(crate) async fn inspector() -> Html<&'static str> {
    Html(INSPECTOR)
}

pub(super) fn campaign(app: &App, id: &str) -> Result<Arc<Campaign>, ApiError> {
    app.campaigns
        .iter()
        .find(|c| c.id.eq_ignore_ascii_case(id))
        .cloned()
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                "invalid_request_error",
                "campaign_not_found",
                format!("no campaign `{id}` is served"),
            )
        })
}

/// `GET /campaigns`.
pub(crate) async fn campaigns(State(app): State<Arc<App>>) -> Response {
    let list: Vec<_> = app
        .campaigns
        .iter()
        .map(|c| {
            let s = c.snapshot();
            let (provider, model, upstream_error) = match &c.upstream {
                Upstream::Ready { client, .. } => (
                    Some(client.config().provider.as_str()),
                    Some(client.config().model.clone()),
                    None,
                ),
                Upstream::Missing(why) => (None, None, Some(why.clone())),
            };
            json!({
                "id": c.id,
                "name": s.name,
                "vault": c.root.display().to_string(),
                "version": s.version,
                "notes": s.check.notes,
                "pcs": s.check.pcs,
                "npcs": s.check.npcs,
                "locations": s.check.locations,
                "threads": s.check.threads,
                "errors": s.check.errors,
                "warnings": s.check.warnings,
                "provider": provider,
                "model": model,
                "upstream_error": upstream_error,
                "watching": c.backend,
            })
        })
        .collect();
    Json(json!({ "campaigns": list })).into_response()
}

/// `GET /campaigns/{id}/context`: the same JSON as `vaultdm context --format json`.
///
/// Query: `message`, `mode` (`full`, `light` or `auto`), `budget` (tokens), `pc`.
pub(crate) async fn context(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    Query(q): Query<std::collections::HashMap<String, String>>,
) -> Result<Response, ApiError> {
    context_for(&app, &id, &q).await
}

/// `POST /campaigns/{id}/context` with `{"message", "mode", "budget", "pc"}`: the same as
/// the `GET`, for a message too long for a URL (HTTP servers refuse URLs over 64 KiB with a
/// bare `414` before vaultdm sees them).
pub(crate) async fn context_post(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    let v: serde_json::Value = serde_json::from_slice(&body)
        .map_err(|e| ApiError::invalid("invalid_json", format!("the body is not JSON: {e}")))?;
    let Some(o) = v.as_object() else {
        return Err(ApiError::invalid(
            "invalid_json",
            "the body must be a JSON object: {\"message\": …, \"mode\": …, \"budget\": …, \"pc\": …}",
        ));
    };
    let q = o
        .iter()
        .filter_map(|(k, v)| {
            let v = match v {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Number(n) => n.to_string(),
                _ => return None,
            };
            Some((k.clone(), v))
        })
        .collect();
    context_for(&app, &id, &q).await
}

async fn context_for(
    app: &App,
    id: &str,
    q: &std::collections::HashMap<String, String>,
) -> Result<Response, ApiError> {
    let c = campaign(app, id)?;
    let budget = match q.get("budget").map(|b| b.trim()).filter(|b| !b.is_empty()) {
        None => None,
        Some(b) => Some(b.parse::<usize>().map_err(|_| {
            ApiError::invalid(
                "invalid_budget",
                format!("budget `{b}` is not a number of tokens"),
            )
        })?),
    };
    let message = q.get("message").cloned();
    let pc = q.get("pc").cloned().filter(|p| !p.trim().is_empty());
    let mode = match q.get("mode").map(|m| m.to_ascii_lowercase()).as_deref() {
        None | Some("" | "auto") => ModeChoice::Auto,
        Some("full") => ModeChoice::Full,
        Some("light") => ModeChoice::Light,
        Some(other) => {
            return Err(ApiError::invalid(
                "invalid_mode",
                format!("mode `{other}` is not full, light or auto"),
            ))
        }
    };
    if message
        .as_ref()
        .is_some_and(|m| m.chars().count() > app.limits.max_message_chars)
    {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "invalid_request_error",
            "message_too_long",
            format!(
                "the message is over {} characters",
                app.limits.max_message_chars
            ),
        ));
    }
    let s = c.snapshot();
    let mut opts = Options::with_overrides(
        &s.context,
        Overrides {
            message: message.filter(|m| !m.trim().is_empty()),
            mode,
            budget,
            pc,
        },
    );
    opts.count_tokens = true;
    opts.explain = true;
    let built = tokio::task::spawn_blocking(move || s.engine.build(&opts))
        .await
        .map_err(|e| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "server_error",
                "context_failed",
                e.to_string(),
            )
        })?;
    match built {
        Ok(inj) => Ok(Json(inj).into_response()),
        Err(e) => Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            "context_failed",
            format!("building the context: {e}"),
        )),
    }
}

/// `GET /campaigns/{id}/check`: the same JSON as `vaultdm check --format json`.
pub(crate) async fn check(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let c = campaign(&app, &id)?;
    let report = c.snapshot().check;
    Ok(Json(&*report).into_response())
}

/// `GET /campaigns/{id}/events`: server-sent events, a `ready` event first; then one `reload`
/// event per reload with the same JSON as `vaultdm watch --format json`, a `leak` event per
/// reply that may give a GM secret away, a `held` event per reply held back from a player
/// and a `held_decided` event when the GM (or the wait) decides it (docs/serve.md).
pub(crate) async fn events(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let c = campaign(&app, &id)?;
    let rx = c.subscribe();
    let version = c.snapshot().version;
    let shutdown = app.shutdown.clone();
    let ready = Event::default()
        .event("ready")
        .data(json!({"campaign": c.id, "version": version}).to_string());
    let stream = futures_util::stream::unfold(
        (Some(ready), rx, shutdown),
        |(first, mut rx, mut shutdown)| async move {
            if let Some(ev) = first {
                return Some((Ok(ev), (None, rx, shutdown)));
            }
            let ev = tokio::select! {
                r = rx.recv() => match r {
                    Ok(p) => Event::default().event(p.kind).data(p.json),
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => Event::default()
                        .event("lagged")
                        .data(json!({"missed": n}).to_string()),
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
                },
                _ = shutdown.wait_for(|s| *s) => return None,
            };
            Some((Ok(ev), (None, rx, shutdown)))
        },
    );
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}

/// `GET /campaigns/{id}/sessions`: the sessions of the vault, and which this server has open.
pub(crate) async fn sessions(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let c = campaign(&app, &id)?;
    let root = c.root.clone();
    let list = tokio::task::spawn_blocking(move || crate::session::list_all_sessions(&root))
        .await
        .map_err(|e| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "server_error",
                "sessions",
                e.to_string(),
            )
        })?
        .map_err(|e| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "server_error",
                "sessions",
                e.to_string(),
            )
        })?;
    let list: Vec<_> = list
        .iter()
        .map(|s| json!({"name": s.name, "open": c.open_conversation(&s.name).is_some(), "excluded": s.excluded}))
        .collect();
    Ok(Json(json!({ "sessions": list })).into_response())
}

fn not_open(session: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "invalid_request_error",
        "session_not_open",
        format!("session `{session}` has no conversation open in this server (use `vaultdm review --session {session}`)"),
    )
}

/// `GET /campaigns/{id}/sessions/{session}/pending`: the DM's proposals awaiting review.
pub(crate) async fn pending(
    State(app): State<Arc<App>>,
    Path((id, session)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let c = campaign(&app, &id)?;
    let conv = c
        .open_conversation(&session)
        .ok_or_else(|| not_open(&session))?;
    let list = conv.pending().await.ok_or_else(|| not_open(&session))?;
    let list: Vec<_> = list
        .iter()
        .map(|p| json!({"number": p.number, "line": p.line, "valid": p.valid}))
        .collect();
    Ok(Json(json!({ "pending": list })).into_response())
}

/// Which proposals a decision is about: `{"numbers": [1, 2]}` or `{"all": true}`.
fn numbers_of(body: &[u8]) -> Result<Vec<usize>, ApiError> {
    let v: serde_json::Value = if body.iter().all(u8::is_ascii_whitespace) {
        json!({})
    } else {
        serde_json::from_slice(body)
            .map_err(|e| ApiError::invalid("invalid_json", format!("the body is not JSON: {e}")))?
    };
    if v.get("all").and_then(serde_json::Value::as_bool) == Some(true) {
        return Ok(Vec::new());
    }
    let mut numbers: Vec<usize> = Vec::new();
    match v.get("numbers") {
        None | Some(serde_json::Value::Null) => {}
        Some(serde_json::Value::Array(a)) => {
            for n in a {
                match n.as_u64().and_then(|n| usize::try_from(n).ok()) {
                    Some(n) if n > 0 => numbers.push(n),
                    _ => {
                        return Err(ApiError::invalid(
                            "invalid_numbers",
                            format!("`{n}` is not a proposal number: numbers are 1, 2, … as `pending` lists them"),
                        ))
                    }
                }
            }
        }
        Some(other) => {
            return Err(ApiError::invalid(
                "invalid_numbers",
                format!("`numbers` must be a list like [1, 2], not `{other}`"),
            ))
        }
    }
    if numbers.is_empty() {
        return Err(ApiError::invalid(
            "no_proposals_named",
            "name the proposals: {\"numbers\": [1, 2]}, or {\"all\": true} for every pending one",
        ));
    }
    Ok(numbers)
}

async fn decide(app: &App, id: &str, session: &str, d: Decision) -> Result<Response, ApiError> {
    let c = campaign(app, id)?;
    let conv = c
        .open_conversation(session)
        .ok_or_else(|| not_open(session))?;
    // Numbers that name no pending proposal are the request's mistake, not a failed write.
    let named = match &d {
        Decision::Accept(n) | Decision::Reject(n) => n.clone(),
    };
    if !named.is_empty() {
        let pending = conv.pending().await.ok_or_else(|| not_open(session))?;
        let unknown: Vec<String> = named
            .iter()
            .filter(|n| !pending.iter().any(|p| p.number == **n))
            .map(ToString::to_string)
            .collect();
        if !unknown.is_empty() {
            let open: Vec<String> = pending.iter().map(|p| p.number.to_string()).collect();
            return Err(ApiError::new(
                StatusCode::NOT_FOUND,
                "invalid_request_error",
                "proposal_not_found",
                format!(
                    "no pending proposal {} in session {session} (pending: {})",
                    unknown.join(", "),
                    if open.is_empty() {
                        "none".to_owned()
                    } else {
                        open.join(", ")
                    }
                ),
            ));
        }
    }
    match conv.decide(d).await.ok_or_else(|| not_open(session))? {
        Ok(lines) => Ok(Json(json!({ "done": lines })).into_response()),
        Err(e) => Err(ApiError::new(
            StatusCode::CONFLICT,
            "invalid_request_error",
            "write_failed",
            e,
        )),
    }
}

/// `POST /campaigns/{id}/sessions/{session}/accept` with `{"numbers": [1, 2]}` or
/// `{"all": true}`.
pub(crate) async fn accept(
    State(app): State<Arc<App>>,
    Path((id, session)): Path<(String, String)>,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    let n = numbers_of(&body)?;
    decide(&app, &id, &session, Decision::Accept(n)).await
}

/// `POST /campaigns/{id}/sessions/{session}/reject` with `{"numbers": [1]}` or
/// `{"all": true}`.
pub(crate) async fn reject(
    State(app): State<Arc<App>>,
    Path((id, session)): Path<(String, String)>,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    let n = numbers_of(&body)?;
    decide(&app, &id, &session, Decision::Reject(n)).await
}

/// Any other path.
pub(crate) async fn not_found(uri: axum::http::Uri) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "invalid_request_error",
        "not_found",
        format!(
            "no route {}: the API is /v1/chat/completions, /v1/models and /campaigns (docs/serve.md)",
            uri.path()
        ),
    )
}
