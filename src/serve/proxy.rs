//! `POST /v1/chat/completions` and `GET /v1/models`: the OpenAI-compatible front door.
//!
//! A front end's background task (a title, tags, a summary: [`super::tasks`]) is passed
//! upstream as it came, with no session. Every other request is routed to a campaign (model
//! prefix, header, or the only vault served) and a conversation (the session header, the
//! front end's chat id, or its whole history: [`super::threads`]), then played as a turn of
//! that session: the canon it needs injected, forwarded upstream, the reply streamed back as
//! it arrives and recorded in the vault's session log. A message that replaces earlier turns
//! (Regenerate, a swipe, an edit) supersedes them in the log first.
//!
//! A player's request ([`Role::Player`]) is played the same way; its answer never carries
//! the DM's proposals, and its errors only what [`Role::error`] lets a player read.

use super::campaign::{Campaign, OpenError, Upstream};
use super::conversation::{Event, Finished, Relay};
use super::openai::{self, ApiError};
use super::role::Role;
use super::threads::{Asked, Found};
use super::App;
use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::{Extension, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use std::convert::Infallible;
use std::sync::Arc;
use tokio::sync::mpsc;

/// Header naming the campaign.
pub(crate) const CAMPAIGN_HEADER: &str = "x-vaultdm-campaign";
/// Header naming the session.
pub(crate) const SESSION_HEADER: &str = "x-vaultdm-session";

/// `GET /v1/models`: each campaign, alone (its configured model) and with that model named.
/// The id is the campaign's id (its folder, stable for routing); `name`, which front ends
/// show in their model menu (Open WebUI does), is the campaign's name from canon.
pub(crate) async fn models(State(app): State<Arc<App>>) -> Response {
    let mut data = Vec::new();
    for c in &app.campaigns {
        let name = c.snapshot().name;
        let name = if name.trim().is_empty() {
            c.id.clone()
        } else {
            name
        };
        data.push(json!({
            "id": c.id, "name": name, "object": "model", "created": 0, "owned_by": "vaultdm",
        }));
        if let Upstream::Ready { client, .. } = &c.upstream {
            let model = &client.config().model;
            data.push(json!({
                "id": format!("{}/{model}", c.id),
                "name": format!("{name} ({model})"),
                "object": "model",
                "created": 0,
                "owned_by": "vaultdm",
            }));
        }
    }
    axum::Json(json!({"object": "list", "data": data})).into_response()
}

/// Which campaign, and which upstream model (`None`: the configured one).
pub(crate) fn route(
    campaigns: &[Arc<Campaign>],
    model: &str,
    header: Option<&str>,
) -> Result<(Arc<Campaign>, Option<String>), ApiError> {
    let find = |id: &str| {
        campaigns
            .iter()
            .find(|c| c.id.eq_ignore_ascii_case(id))
            .cloned()
    };
    let served = || {
        campaigns
            .iter()
            .map(|c| c.id.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let split = model.split_once('/');
    if let Some(id) = header.map(str::trim).filter(|h| !h.is_empty()) {
        let c = find(id).ok_or_else(|| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                "invalid_request_error",
                "campaign_not_found",
                format!("no campaign `{id}` is served (served: {})", served()),
            )
        })?;
        let upstream = match split {
            Some((p, rest)) if p.eq_ignore_ascii_case(&c.id) => Some(rest.to_owned()),
            _ if model.is_empty() || model.eq_ignore_ascii_case(&c.id) => None,
            _ => Some(model.to_owned()),
        };
        return Ok((c, upstream));
    }
    if let Some((p, rest)) = split {
        if let Some(c) = find(p) {
            return Ok((c, Some(rest.to_owned()).filter(|r| !r.is_empty())));
        }
    }
    if let Some(c) = find(model) {
        return Ok((c, None));
    }
    if campaigns.len() == 1 {
        let c = campaigns[0].clone();
        return Ok((c, Some(model.to_owned()).filter(|m| !m.is_empty())));
    }
    Err(ApiError::new(
        StatusCode::NOT_FOUND,
        "invalid_request_error",
        "model_not_found",
        format!(
            "model `{model}` names no campaign: use `CAMPAIGN` or `CAMPAIGN/MODEL` (served: {}), or the {CAMPAIGN_HEADER} header",
            served()
        ),
    ))
}

/// Headers and body fields that name a front end's conversation, in the order they are
/// trusted: Open WebUI's `X-OpenWebUI-Chat-Id` (sent with
/// `ENABLE_FORWARD_USER_INFO_HEADERS`), and a `chat_id` in the body or its `metadata`.
fn conversation_id(headers: &HeaderMap, body: &Value) -> Option<String> {
    let raw = headers
        .get("x-openwebui-chat-id")
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned)
        .or_else(|| {
            [
                body.get("chat_id"),
                body.get("metadata").and_then(|m| m.get("chat_id")),
            ]
            .into_iter()
            .flatten()
            .find_map(|v| v.as_str().map(str::to_owned))
        })?;
    let id: String = raw
        .trim()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
        .take(64)
        .collect();
    // `local:…` chats (Open WebUI's temporary ones) and empty ids name nothing lasting.
    (!id.is_empty() && !raw.trim().starts_with("local")).then(|| format!("owui-{id}"))
}

/// The conversation before its last reply, and that reply, when the message follows one
/// (for a reply the front end stopped: [`super::threads::Threads::find_stopped`]).
fn stopped_reply(req: &openai::Request) -> Option<(super::threads::State, &str)> {
    let earlier = &req.messages[..req.messages.len() - 1];
    let (last, before) = earlier.split_last()?;
    (last.role == crate::llm::Role::Assistant).then(|| {
        (
            super::threads::State::of(req.user.as_deref(), before),
            last.content.as_str(),
        )
    })
}

/// Where a request goes: its session, and what it replaces there.
struct Routed {
    session: String,
    /// Where the request is in its conversation.
    asked: Asked,
    /// How many of the session's last exchanges the message replaces.
    supersede: usize,
    /// The exchanges its log held after its last turn here.
    log_had: Option<usize>,
}

/// The session of a request: the session header; else the conversation id a front end
/// sends; else the session whose conversation is exactly this one's history (see
/// [`super::threads`]); else a new one. Then what it replaces: a request that continues from
/// before the session's last turn is a Regenerate, a swipe or an edit.
fn session_of(
    app: &App,
    campaign: &Campaign,
    role: Role,
    headers: &HeaderMap,
    body: &Value,
    req: &openai::Request,
) -> Result<Routed, ApiError> {
    let asked = Asked::of(req.user.as_deref(), &req.messages);
    // Open WebUI's temporary chats have no lasting id (`local:…`): such a header names
    // nothing, and the conversation is found as if there were none.
    let header = headers
        .get(SESSION_HEADER)
        .filter(|h| !h.to_str().unwrap_or("").contains("local:"));
    let named = match header {
        Some(h) => {
            let name = h.to_str().unwrap_or("").trim().to_owned();
            if name.contains("{{") {
                return Err(ApiError::invalid(
                    "invalid_session",
                    format!("the session header `{name}` holds a placeholder the front end did not fill in; use the ones it documents (Open WebUI: {{{{CHAT_ID}}}}), or a plain name"),
                ));
            }
            Some(name)
        }
        None => conversation_id(headers, body),
    };
    let named = named.map(|n| role.session_name(n));
    if let Some(name) = &named {
        crate::session::validate_name(name)
            .map_err(|e| ApiError::invalid("invalid_session", e.to_string()))?;
    }
    let session = match named {
        Some(name) => name,
        None => match app.threads(campaign, |t| {
            match (t.find(asked.from, asked.from_tail), stopped_reply(req)) {
                (Found::Nothing, Some((before, reply))) => t.find_stopped(before, reply),
                (found, _) => found,
            }
        }) {
            Found::One(s) if role.may_play(&s) => s,
            _ => crate::session::one_shot_name(&campaign.root, &role.session_name("serve".into())),
        },
    };
    let (supersede, log_had) = app.threads(campaign, |t| {
        (t.superseded(&session, &asked), t.last_exchanges(&session))
    });
    Ok(Routed {
        session,
        asked,
        supersede,
        log_had,
    })
}

/// A front end's background task ([`super::tasks`]): passed to the upstream as it came —
/// no canon, no tools, no session, no memory — to the task model if one is set.
async fn pass_task(
    app: Arc<App>,
    role: Role,
    headers: &HeaderMap,
    body: &Value,
    task: super::tasks::Task,
) -> Result<Response, ApiError> {
    let prompt = openai::task_prompt(body)?;
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim()
        .to_owned();
    let wanted = headers.get(CAMPAIGN_HEADER).and_then(|h| h.to_str().ok());
    let (campaign, upstream_model) = route(&app.campaigns, &model, wanted)?;
    let Upstream::Ready { client, .. } = &campaign.upstream else {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "server_error",
            "upstream_not_configured",
            format!("campaign `{}` has no upstream model", campaign.id),
        ));
    };
    let (sampling, max_tokens) = body
        .as_object()
        .map(openai::sampling_of)
        .unwrap_or_default();
    let extra = openai::sampling_for(client.config().provider, &sampling);
    let model_asked = app.task_model.clone().or(upstream_model);
    let client = client.for_request(model_asked.as_deref(), max_tokens, extra);
    let stream = body.get("stream").and_then(Value::as_bool).unwrap_or(false);
    let include_usage = body
        .get("stream_options")
        .and_then(|s| s.get("include_usage"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let shown_model = if model.is_empty() {
        campaign.id.clone()
    } else {
        model
    };
    let id = format!("chatcmpl-vaultdm-{}", app.next_id());
    let created = chrono::Utc::now().timestamp();
    let headers_out = vec![
        header("x-vaultdm-campaign", &campaign.id),
        header("x-vaultdm-task", &task.name),
    ];
    let task = TaskStream {
        rx: run_task(client, prompt.clone()),
        role,
        pending: None,
        started: false,
        done: false,
        id,
        created,
        model: shown_model,
        include_usage,
        prompt,
    };
    let response = if stream {
        task.streamed().await?
    } else {
        task.whole().await?
    };
    Ok(with_headers(response, headers_out))
}

/// Streams a task's reply upstream on a task of its own, which stops when the receiver
/// goes away.
fn run_task(
    client: crate::llm::LlmClient,
    prompt: crate::llm::ChatRequest,
) -> mpsc::UnboundedReceiver<TaskEvent> {
    let (tx, rx) = mpsc::unbounded_channel::<TaskEvent>();
    tokio::spawn(async move {
        let tokens = tx.clone();
        let mut on_token = move |t: &str| {
            let _ = tokens.send(TaskEvent::Token(t.to_owned()));
        };
        let gone = tx.clone();
        let reply = client
            .stream_chat(&prompt, &mut on_token, async move { gone.closed().await })
            .await;
        let _ = tx.send(TaskEvent::Done(reply));
    });
    rx
}

/// An upstream failure of a passed-through task, as an OpenAI error (nothing was saved).
fn task_error(e: crate::llm::LlmError) -> ApiError {
    openai::error_of(&crate::play::SendError {
        error: crate::play::PlayError::Llm(e),
        message_saved: false,
        reply_saved: false,
    })
}

/// A passed-through task's reply as server-sent events.
struct TaskStream {
    rx: mpsc::UnboundedReceiver<TaskEvent>,
    /// Who asked: a player's errors are told as [`Role::error`] says.
    role: Role,
    pending: Option<TaskEvent>,
    started: bool,
    done: bool,
    id: String,
    created: i64,
    model: String,
    include_usage: bool,
    prompt: crate::llm::ChatRequest,
}

impl TaskStream {
    /// The whole reply as one completion (the tokens on the way are not needed: the reply
    /// holds its text).
    async fn whole(mut self) -> Result<Response, ApiError> {
        loop {
            match self.rx.recv().await {
                Some(TaskEvent::Token(_)) => {}
                Some(TaskEvent::Done(Ok(reply))) => {
                    let usage = openai::usage_counted(reply.usage, &self.prompt, &reply.text);
                    let body = openai::completion(
                        &self.id,
                        self.created,
                        &self.model,
                        &reply.text,
                        openai::finish_reason(&reply),
                        Some(&usage),
                    );
                    return Ok(axum::Json(body).into_response());
                }
                Some(TaskEvent::Done(Err(e))) => return Err(task_error(e)),
                None => {
                    return Err(ApiError::new(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "server_error",
                        "task_stopped",
                        "the task stopped before its reply ended",
                    ))
                }
            }
        }
    }

    /// The reply as server-sent events. Nothing is answered before the first event, so an
    /// upstream that fails at once gets an error status.
    async fn streamed(mut self) -> Result<Response, ApiError> {
        let first = self.rx.recv().await;
        if let Some(TaskEvent::Done(Err(e))) = first {
            return Err(task_error(e));
        }
        self.pending = first;
        let body = futures_util::stream::unfold(self, |mut st| async move {
            let out = st.next().await?;
            Some((Ok::<_, Infallible>(Bytes::from(out)), st))
        });
        Ok(sse(Body::from_stream(body)))
    }

    fn data(&self, delta: Value, finish: Option<&str>) -> String {
        format!(
            "data: {}\n\n",
            openai::chunk(&self.id, self.created, &self.model, delta, finish)
        )
    }

    async fn next(&mut self) -> Option<String> {
        if self.done {
            return None;
        }
        let event = match self.pending.take() {
            Some(e) => Some(e),
            None => self.rx.recv().await,
        };
        let mut out = String::new();
        if !std::mem::replace(&mut self.started, true) {
            out.push_str(&self.data(json!({"role": "assistant", "content": ""}), None));
        }
        match event {
            Some(TaskEvent::Token(t)) => {
                out.push_str(&self.data(json!({ "content": t }), None));
                return Some(out);
            }
            Some(TaskEvent::Done(Ok(reply))) => {
                out.push_str(&self.data(json!({}), Some(openai::finish_reason(&reply))));
                if self.include_usage {
                    let usage = openai::usage_counted(reply.usage, &self.prompt, &reply.text);
                    out.push_str(&openai::usage_event(
                        &self.id,
                        self.created,
                        &self.model,
                        &usage,
                    ));
                }
            }
            Some(TaskEvent::Done(Err(e))) => {
                out.push_str(&format!(
                    "data: {}\n\n",
                    self.role.error(task_error(e)).body()
                ));
            }
            None => {}
        }
        self.done = true;
        out.push_str("data: [DONE]\n\n");
        Some(out)
    }
}

/// What a passed-through task sends back while it runs.
enum TaskEvent {
    Token(String),
    Done(Result<crate::llm::Reply, crate::llm::LlmError>),
}

fn header(name: &'static str, value: &str) -> Option<(axum::http::HeaderName, HeaderValue)> {
    Some((
        axum::http::HeaderName::from_static(name),
        HeaderValue::from_str(value).ok()?,
    ))
}

/// What vaultdm adds after the reply: the DM's proposals and where to review them, or what
/// was written. Never to a player: the proposals are the GM's to review (they may name what
/// canon keeps from the players), and the player's front end keeps the reply without them.
fn appendix(f: &Finished, role: Role, campaign: &str, session: &str) -> Option<String> {
    if role == Role::Player {
        return None;
    }
    let p = &f.turn.proposals;
    if let Some(w) = &p.applied {
        let lines: Vec<&str> = w.plan.planned.iter().map(|p| p.summary.as_str()).collect();
        if !lines.is_empty() {
            return Some(format!(
                "\n\n*(vaultdm updated the canon: {})*",
                lines.join("; ")
            ));
        }
    }
    if !p.refused.is_empty() {
        let lines: Vec<String> = p
            .refused
            .iter()
            .map(|v| format!("{}. {}", v.number, v.describe()))
            .collect();
        return Some(format!(
            "\n\n*(vaultdm: the DM proposed canon changes that cannot be made — {} — canon is unchanged)*",
            lines.join("; ")
        ));
    }
    let proposed =
        !f.turn.reply.tool_calls.is_empty() || f.turn.reply.text.contains("```vaultdm-changes");
    if proposed && !p.pending.is_empty() {
        let lines: Vec<String> = p
            .pending
            .iter()
            .map(|v| format!("{}. {}", v.number, v.line))
            .collect();
        return Some(format!(
            "\n\n*(vaultdm: the DM proposes canon changes — {} — review them in the inspector (/), with `POST /campaigns/{campaign}/sessions/{session}/accept`, or with `vaultdm review --session {session}` once the server lets the session go)*",
            lines.join("; ")
        ));
    }
    None
}

struct Streaming {
    rx: mpsc::UnboundedReceiver<Event>,
    /// Who asked: what the answer may carry.
    role: Role,
    /// The event already taken from `rx` (the first, read before answering).
    pending: Option<Event>,
    /// The assistant role went out with the first chunk.
    started: bool,
    id: String,
    created: i64,
    model: String,
    include_usage: bool,
    campaign: String,
    /// The campaign played.
    played: Arc<Campaign>,
    session: String,
    /// Where the request is in its conversation.
    asked: Asked,
    shown: String,
    app: Arc<App>,
    done: bool,
}

impl Drop for Streaming {
    /// The front end went away mid-reply (its Stop button): it keeps the text it got, and
    /// sends it back with its next message, so that is where its conversation now is.
    fn drop(&mut self) {
        if !self.done && !self.shown.is_empty() {
            let (session, asked, shown) = (&self.session, self.asked.asked, &self.shown);
            self.app
                .threads(&self.played, |t| t.stopped(session, asked, shown));
        }
    }
}

impl Streaming {
    /// An error as a stream's event, as the asker's role may read it.
    fn error_event(&self, e: ApiError) -> String {
        format!("data: {}\n\n", self.role.error(e).body())
    }

    fn data(&self, delta: Value, finish: Option<&str>) -> String {
        format!(
            "data: {}\n\n",
            openai::chunk(&self.id, self.created, &self.model, delta, finish)
        )
    }

    async fn next(&mut self) -> Option<String> {
        if self.done {
            return None;
        }
        let event = match self.pending.take() {
            Some(e) => Some(e),
            None => self.rx.recv().await,
        };
        // The first chunk names the role, whatever comes first.
        let first = !std::mem::replace(&mut self.started, true);
        let mut out = String::new();
        if first && !matches!(event, Some(Event::Token(_))) {
            out.push_str(&self.data(json!({"role": "assistant", "content": ""}), None));
        }
        match event {
            Some(Event::Token(t)) => {
                self.shown.push_str(&t);
                let delta = if first {
                    json!({"role": "assistant", "content": t})
                } else {
                    json!({"content": t})
                };
                out.push_str(&self.data(delta, None));
                Some(out)
            }
            Some(Event::Done(r)) => {
                self.done = true;
                match *r {
                    Ok(f) => {
                        if let Some(a) = appendix(&f, self.role, &self.campaign, &self.session) {
                            self.shown.push_str(&a);
                            out.push_str(&self.data(json!({"content": a}), None));
                        }
                        let step = self.asked.step(&self.shown, Some(f.exchanges));
                        self.app.record_turn(&self.played, &self.session, step);
                        let reply = &f.turn.reply;
                        if !reply.complete && !reply.hit_token_limit() {
                            let why = reply.cut_off.map_or_else(
                                || "the reply ended early".to_owned(),
                                |c| c.to_string(),
                            );
                            out.push_str(&self.error_event(ApiError::new(
                                StatusCode::BAD_GATEWAY,
                                "upstream_error",
                                "reply_cut_off",
                                format!(
                                    "{why} (what arrived is saved in session {})",
                                    self.session
                                ),
                            )));
                        } else {
                            out.push_str(&self.data(json!({}), Some(openai::finish_reason(reply))));
                        }
                        if self.include_usage {
                            let usage = openai::usage_counted(
                                reply.usage,
                                &f.turn.prepared.request,
                                &reply.text,
                            );
                            out.push_str(&openai::usage_event(
                                &self.id,
                                self.created,
                                &self.model,
                                &usage,
                            ));
                        }
                    }
                    Err(e) => out.push_str(&self.error_event(openai::error_of(&e))),
                }
                out.push_str("data: [DONE]\n\n");
                Some(out)
            }
            None => {
                self.done = true;
                out.push_str(&self.error_event(ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "server_error",
                    "session_stopped",
                    "the session stopped before the reply ended (the server is shutting down)",
                )));
                out.push_str("data: [DONE]\n\n");
                Some(out)
            }
        }
    }
}

/// `POST /v1/chat/completions`, for the GM and players alike (the guard put the role in
/// the request's extensions).
pub(crate) async fn completions(
    State(app): State<Arc<App>>,
    Extension(role): Extension<Role>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    match complete(app, role, headers, body).await {
        Ok(r) => r,
        Err(e) => role.error(e).into_response(),
    }
}

async fn complete(
    app: Arc<App>,
    role: Role,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let body = body.map_err(|e| {
        ApiError::new(
            e.status(),
            "invalid_request_error",
            "request_too_large",
            format!(
                "{} (the limit is {} bytes; `vaultdm serve --max-body-bytes` sets it)",
                e.body_text(),
                app.limits.max_body_bytes
            ),
        )
    })?;
    let value = openai::json_of(&body)?;
    let session_header = headers.get(SESSION_HEADER).and_then(|h| h.to_str().ok());
    if let Some(task) = super::tasks::recognise(&value, session_header) {
        return pass_task(app, role, &headers, &value, task).await;
    }
    let req = openai::parse_value(&value)?;
    let message = checked_message(&app, &req)?;
    let wanted = headers.get(CAMPAIGN_HEADER).and_then(|h| h.to_str().ok());
    let (campaign, upstream_model) = route(&app.campaigns, &req.model, wanted)?;
    let extra = match &campaign.upstream {
        Upstream::Ready { client, .. } => {
            openai::sampling_for(client.config().provider, &req.sampling)
        }
        Upstream::Missing(why) => {
            return Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "server_error",
                "upstream_not_configured",
                format!("campaign `{}` has no upstream model: {why}", campaign.id),
            ))
        }
    };
    let Routed {
        session,
        asked,
        supersede,
        log_had,
    } = session_of(&app, &campaign, role, &headers, &value, &req)?;
    let (tx, rx) = mpsc::unbounded_channel();
    let relay = Relay {
        message,
        earlier: req.messages[..req.messages.len() - 1].to_vec(),
        supersede,
        log_had,
        system: req.system.clone(),
        model: upstream_model,
        max_tokens: req.max_tokens,
        extra,
        events: tx,
    };
    hand_over(&app, &campaign, &session, relay).await?;
    let answer = Answer {
        id: format!("chatcmpl-vaultdm-{}", app.next_id()),
        created: chrono::Utc::now().timestamp(),
        model: if req.model.is_empty() {
            campaign.id.clone()
        } else {
            req.model.clone()
        },
        headers: vec![
            header("x-vaultdm-campaign", &campaign.id),
            header("x-vaultdm-session", &session),
        ],
        app,
        role,
        campaign,
        session,
        asked,
    };
    answer.respond(rx, req.stream, req.include_usage).await
}

/// The message a request sends (its last), if it is within the length limit.
fn checked_message(app: &App, req: &openai::Request) -> Result<String, ApiError> {
    let message = req
        .messages
        .last()
        .map(|m| m.content.clone())
        .unwrap_or_default();
    let chars = message.chars().count();
    if chars > app.limits.max_message_chars {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "invalid_request_error",
            "message_too_long",
            format!(
                "the message is {chars} characters; the limit is {} (`vaultdm serve --max-message-chars` sets it)",
                app.limits.max_message_chars
            ),
        ));
    }
    Ok(message)
}

/// Opens the session's conversation (busy with another request, or one too many open, is
/// an error) and hands it the message to play.
async fn hand_over(
    app: &App,
    campaign: &Campaign,
    session: &str,
    relay: Relay,
) -> Result<(), ApiError> {
    let conversation = campaign
        .conversation(session, &app.shutdown)
        .await
        .map_err(|e| match e {
            OpenError::Busy(e) => {
                ApiError::new(StatusCode::CONFLICT, "server_error", "session_busy", e)
            }
            OpenError::Full(e) => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "server_error",
                "too_many_conversations",
                e,
            ),
        })?;
    if !conversation.relay(relay) {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "server_error",
            "shutting_down",
            "the server is shutting down",
        ));
    }
    Ok(())
}

/// The answer to a played turn: where it was played, and the id, model and headers it goes
/// out with.
struct Answer {
    app: Arc<App>,
    /// Who asked: what the answer may carry.
    role: Role,
    campaign: Arc<Campaign>,
    session: String,
    /// Where the request is in its conversation.
    asked: Asked,
    id: String,
    created: i64,
    /// The model named in the answer: the one asked for, else the campaign.
    model: String,
    headers: Vec<Option<(axum::http::HeaderName, HeaderValue)>>,
}

impl Answer {
    /// Waits for the turn's first event, then answers as a stream or as one completion.
    /// Nothing is answered before the first event: an upstream that fails before any text
    /// gets an error status the front end shows, not an empty stream.
    async fn respond(
        self,
        mut rx: mpsc::UnboundedReceiver<Event>,
        stream: bool,
        include_usage: bool,
    ) -> Result<Response, ApiError> {
        let first = match rx.recv().await {
            Some(Event::Done(r)) => match *r {
                Err(e) => return Err(openai::error_of(&e)),
                Ok(f) => Event::Done(Box::new(Ok(f))),
            },
            Some(e) => e,
            None => {
                return Err(ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "server_error",
                    "session_stopped",
                    "the session stopped before the reply began",
                ))
            }
        };
        // A player's reply that may give a secret away waits for the GM (`--hold-leaks`).
        let (rx, first) = match self.app.hold_leaks {
            Some(wait) if self.role == Role::Player => {
                super::held::checked(&self.app, &self.campaign, &self.session, rx, first, wait)
                    .await?
            }
            _ => (rx, first),
        };
        if stream {
            return Ok(self.streamed(rx, first, include_usage));
        }
        self.whole(rx, first).await
    }

    /// The reply as server-sent events, as it arrives.
    fn streamed(
        self,
        rx: mpsc::UnboundedReceiver<Event>,
        first: Event,
        include_usage: bool,
    ) -> Response {
        stream_response(
            Streaming {
                rx,
                role: self.role,
                pending: Some(first),
                started: false,
                id: self.id,
                created: self.created,
                model: self.model,
                include_usage,
                campaign: self.campaign.id.clone(),
                played: self.campaign,
                session: self.session,
                asked: self.asked,
                shown: String::new(),
                app: self.app,
                done: false,
            },
            self.headers,
        )
    }

    /// The whole reply as one completion, once the turn is done.
    async fn whole(
        self,
        mut rx: mpsc::UnboundedReceiver<Event>,
        first: Event,
    ) -> Result<Response, ApiError> {
        let mut text = String::new();
        let mut pending = Some(first);
        loop {
            let event = match pending.take() {
                Some(e) => Some(e),
                None => rx.recv().await,
            };
            match event {
                Some(Event::Token(t)) => text.push_str(&t),
                Some(Event::Done(r)) => return self.completion(text, *r),
                None => {
                    return Err(ApiError::new(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "server_error",
                        "session_stopped",
                        "the session stopped before the reply ended",
                    ))
                }
            }
        }
    }

    /// The completion of a finished turn (its text so far in `text`), recorded in the
    /// conversation's state.
    fn completion(
        mut self,
        mut text: String,
        done: Result<Finished, crate::play::SendError>,
    ) -> Result<Response, ApiError> {
        let (finish, usage, exchanges) = match done {
            Ok(f) => {
                let (finish, usage) = self.finished(&mut text, &f);
                (finish, Some(usage), Some(f.exchanges))
            }
            // Text arrived before the upstream failed: the players keep it, with why
            // it stops (as a stream ends with its error event after the text).
            Err(e) if e.reply_saved && !text.is_empty() => {
                let why = match self.role {
                    Role::Gm => e.error.to_string(),
                    // The upstream's words may quote the prompt.
                    Role::Player => self.role.error(openai::error_of(&e)).message,
                };
                cut_off(
                    &mut text,
                    &mut self.headers,
                    why.lines().next().unwrap_or(&why),
                );
                ("stop", None, None)
            }
            Err(e) => return Err(openai::error_of(&e)),
        };
        self.app.record_turn(
            &self.campaign,
            &self.session,
            self.asked.step(&text, exchanges),
        );
        let body = openai::completion(
            &self.id,
            self.created,
            &self.model,
            &text,
            finish,
            usage.as_ref(),
        );
        Ok(with_headers(axum::Json(body).into_response(), self.headers))
    }

    /// A turn that ended with a reply: vaultdm's appendix and any cut-off added to `text`,
    /// the headers saying so; its finish reason and usage.
    fn finished(&mut self, text: &mut String, f: &Finished) -> (&'static str, crate::llm::Usage) {
        if let Some(a) = appendix(f, self.role, &self.campaign.id, &self.session) {
            text.push_str(&a);
        }
        let reply = &f.turn.reply;
        // A reply cut off on the way keeps what arrived: the players see it,
        // with why it stops (a header says so too).
        if !reply.complete && !reply.hit_token_limit() {
            let why = reply
                .cut_off
                .map_or_else(|| "the reply ended early".to_owned(), |c| c.to_string());
            cut_off(text, &mut self.headers, &why);
        }
        self.headers.push(header(
            "x-vaultdm-context",
            if f.full() { "full" } else { "light" },
        ));
        // The GM's; a player's answer never carries it (`role::PLAYER_HEADERS`).
        if !f.turn.leaks.is_empty() {
            self.headers.push(header(
                "x-vaultdm-leak",
                &super::held::leak_header(&f.turn.leaks),
            ));
        }
        let usage = openai::usage_counted(reply.usage, &f.turn.prepared.request, &reply.text);
        (openai::finish_reason(reply), usage)
    }
}

/// The last line of a plain reply that broke off, and its header.
fn cut_off(
    text: &mut String,
    headers: &mut Vec<Option<(axum::http::HeaderName, HeaderValue)>>,
    why: &str,
) {
    text.push_str(&format!("\n\n*(vaultdm: the reply stops here: {why})*"));
    headers.push(header("x-vaultdm-cut-off", why));
}

fn with_headers(
    mut r: Response,
    headers: Vec<Option<(axum::http::HeaderName, HeaderValue)>>,
) -> Response {
    for (k, v) in headers.into_iter().flatten() {
        r.headers_mut().insert(k, v);
    }
    r
}

fn stream_response(
    st: Streaming,
    headers: Vec<Option<(axum::http::HeaderName, HeaderValue)>>,
) -> Response {
    let body = futures_util::stream::unfold(st, |mut st| async move {
        let out = st.next().await?;
        Some((Ok::<_, Infallible>(Bytes::from(out)), st))
    });
    with_headers(sse(Body::from_stream(body)), headers)
}

/// A server-sent events response.
fn sse(body: Body) -> Response {
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "text/event-stream; charset=utf-8")
        .header("cache-control", "no-cache")
        .header("x-accel-buffering", "no")
        .body(body)
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}
