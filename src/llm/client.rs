//! The HTTP side: send the request, retry what is worth retrying, stream the reply.
//!
//! One request goes through three phases, each with its own failure story for the GM:
//! connecting (refused → "nothing answers at …", connect timeout), the response status
//! (401/403 → which key variable, 404 → which model or which URL, 429/5xx → bounded
//! exponential backoff honouring `Retry-After`), and streaming (first-token and idle
//! timeouts, a broken connection, an in-stream error). Retries only ever happen before any
//! reply text was shown, so the GM never sees text twice. Cancellation (Ctrl-C) is a future
//! the caller passes in; when it resolves, whatever text arrived is returned as an
//! interrupted [`Reply`].

use std::future::Future;
use std::time::Duration;

use futures_util::StreamExt;
use reqwest::header::{HeaderMap, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use reqwest::StatusCode;
use serde_json::Value;
use tokio::time::{timeout_at, Instant};

use super::sse::{SseDecoder, SseEvent};
use super::{
    anthropic, openai, ChatRequest, CutOff, LlmConfig, LlmError, Notice, ProviderKind, Reply,
};

/// What a protocol decoder extracts from one SSE event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Item {
    /// Reply text to show and keep.
    Text(String),
    /// A piece of a tool call. `slot` numbers the reply's calls densely from 0 in the order
    /// they started (the decoder maps the protocol's own index or id to it); `id` and `name`
    /// fill in the call's fields if still empty, `arguments` is appended to its arguments.
    ToolCall {
        /// Position of the call in [`Reply::tool_calls`].
        slot: usize,
        /// The call id, when this piece carries one.
        id: Option<String>,
        /// The tool name, when this piece carries one.
        name: Option<String>,
        /// A piece of the arguments' JSON text (may be empty).
        arguments: String,
    },
    /// The provider's stop reason.
    FinishReason(String),
    /// The protocol's end event: the reply is complete.
    Complete,
    /// Nothing more of interest will follow; stop reading.
    Stop,
    /// Latest usage figures (replace earlier ones).
    Usage(super::Usage),
    /// The provider reported an error in the stream.
    Error(String),
    /// Something unreadable was skipped.
    Warning(String),
    /// An event of this protocol that carries nothing to keep (a ping, a block start).
    Known,
    /// The event is plainly the other protocol's (a provider/format mismatch).
    OtherProtocol(ProviderKind),
}

/// Per-protocol stream decoder.
enum Decoder {
    OpenAi(openai::Decoder),
    Anthropic(anthropic::Decoder),
}

impl Decoder {
    fn new(kind: ProviderKind) -> Self {
        match kind {
            ProviderKind::OpenAi => Decoder::OpenAi(openai::Decoder::default()),
            ProviderKind::Anthropic => Decoder::Anthropic(anthropic::Decoder::default()),
        }
    }

    fn on_event(&mut self, ev: &SseEvent, out: &mut Vec<Item>) {
        match self {
            Decoder::OpenAi(d) => d.on_event(ev, out),
            Decoder::Anthropic(d) => d.on_event(ev, out),
        }
    }
}

/// At most this many warnings are kept on a reply.
const MAX_WARNINGS: usize = 10;
/// Error bodies are read up to this size.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// Waits shorter than this are not announced (a quick backoff is not worth a line).
const NOTICE_AFTER: Duration = Duration::from_secs(1);

/// Receives [`Notice`]s while a request waits.
pub type Notifier = std::sync::Arc<dyn Fn(&Notice) + Send + Sync>;

/// A reusable client for one configured model; keeps the connection pool between turns.
#[derive(Clone)]
pub struct LlmClient {
    http: reqwest::Client,
    cfg: LlmConfig,
    endpoint: String,
    /// The endpoint as printed: any password or key in the URL masked.
    shown: String,
    notifier: Option<Notifier>,
}

impl std::fmt::Debug for LlmClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmClient")
            .field("cfg", &self.cfg)
            .field("endpoint", &self.shown)
            .finish_non_exhaustive()
    }
}

/// What the start of a response body looked like.
#[derive(Debug, Default)]
struct BodySeen {
    /// The first bytes, for an excerpt in an error.
    head: Vec<u8>,
    /// Some event was understood by the protocol decoder.
    understood: bool,
    /// Events that could not be read.
    warnings: usize,
}

impl BodySeen {
    fn note_bytes(&mut self, bytes: &[u8]) {
        let room = 600usize.saturating_sub(self.head.len());
        self.head.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    /// Whether the body held anything but SSE comments and blank lines.
    fn has_content(&self) -> bool {
        self.warnings > 0
            || String::from_utf8_lossy(&self.head)
                .lines()
                .any(|l| !l.trim().is_empty() && !l.starts_with(':'))
    }
}

/// `95 s`, `4 min`, `2 h 5 min`.
fn human_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s < 120 {
        format!("{s} s")
    } else if s < 7200 {
        format!("{} min", s.div_ceil(60))
    } else {
        format!("{} h {} min", s / 3600, (s % 3600) / 60)
    }
}

/// Stream one reply with a one-off client. See [`LlmClient::stream_chat`]; prefer a
/// long-lived [`LlmClient`] in a chat loop so connections are reused.
pub async fn stream_chat<C>(
    cfg: &LlmConfig,
    req: &ChatRequest,
    on_token: &mut (dyn FnMut(&str) + Send),
    cancel: C,
) -> Result<Reply, LlmError>
where
    C: Future<Output = ()>,
{
    LlmClient::new(cfg.clone())?
        .stream_chat(req, on_token, cancel)
        .await
}

impl LlmClient {
    /// Validate the config and build the HTTP client.
    pub fn new(cfg: LlmConfig) -> Result<Self, LlmError> {
        let endpoint = cfg.endpoint();
        match reqwest::Url::parse(&endpoint) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => {}
            _ => {
                return Err(LlmError::InvalidUrl {
                    url: crate::secrets::mask_url(&cfg.base_url),
                })
            }
        }
        if cfg.model.trim().is_empty() {
            return Err(LlmError::NotConfigured {
                what: "no model set".into(),
            });
        }
        let http = reqwest::Client::builder()
            .connect_timeout(cfg.timeouts.connect)
            .user_agent(concat!("vaultdm/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|source| LlmError::ClientSetup { source })?;
        Ok(Self {
            http,
            cfg,
            shown: crate::secrets::mask_url(&endpoint),
            endpoint,
            notifier: None,
        })
    }

    /// The same client (and connection pool) for one request with another model, reply
    /// length or extra body fields: what a front end asked `vaultdm serve` for.
    pub fn for_request(
        &self,
        model: Option<&str>,
        max_tokens: Option<u32>,
        extra: serde_json::Map<String, serde_json::Value>,
    ) -> LlmClient {
        let mut c = self.clone();
        if let Some(m) = model.map(str::trim).filter(|m| !m.is_empty()) {
            c.cfg.model = m.to_owned();
        }
        if let Some(n) = max_tokens.filter(|n| *n > 0) {
            c.cfg.max_tokens = n;
            let room = super::ReplyLimits::for_max_tokens(n);
            c.cfg.limits.max_tokens = c.cfg.limits.max_tokens.max(room.max_tokens);
            c.cfg.limits.max_chars = c.cfg.limits.max_chars.max(room.max_chars);
        }
        c.cfg.extra = extra;
        c
    }

    /// Announce waits (rate limits, retries) to `notifier`, e.g. a line on stderr.
    pub fn with_notifier(mut self, notifier: Notifier) -> Self {
        self.notifier = Some(notifier);
        self
    }

    /// The configuration this client was built from.
    pub fn config(&self) -> &LlmConfig {
        &self.cfg
    }

    /// The URL requests go to, as it may be printed (a password or key in it masked).
    pub fn shown_endpoint(&self) -> &str {
        &self.shown
    }

    /// Send `req` and stream the reply, calling `on_token` with each piece of text as it
    /// arrives.
    ///
    /// * `Ok(reply)` with `reply.complete == true`: the protocol's end event arrived.
    /// * `Ok(reply)` with `complete == false`: the stream closed early
    ///   ([`CutOff::EndedEarly`]) or `cancel` resolved ([`CutOff::Interrupted`]); `text`
    ///   holds everything received.
    /// * `Err(e)`: see [`LlmError`]; [`LlmError::partial`] returns text received before a
    ///   mid-stream failure.
    ///
    /// `cancel` is any future that resolves when the GM wants to stop, e.g.
    /// `async { let _ = tokio::signal::ctrl_c().await; }`, or `std::future::pending()`.
    pub async fn stream_chat<C>(
        &self,
        req: &ChatRequest,
        on_token: &mut (dyn FnMut(&str) + Send),
        cancel: C,
    ) -> Result<Reply, LlmError>
    where
        C: Future<Output = ()>,
    {
        let mut reply = Reply::default();
        let outcome = {
            let run = self.run(req, on_token, &mut reply);
            tokio::pin!(run);
            tokio::pin!(cancel);
            tokio::select! {
                biased;
                () = &mut cancel => None,
                r = &mut run => Some(r),
            }
        };
        match outcome {
            Some(r) => r,
            // Cancelled. A reply whose end event already arrived stays complete.
            None => {
                reply.cut_off = if reply.complete {
                    None
                } else {
                    Some(CutOff::Interrupted)
                };
                Ok(reply)
            }
        }
    }

    fn body(&self, req: &ChatRequest) -> Value {
        match self.cfg.provider {
            ProviderKind::OpenAi => openai::request_body(&self.cfg, req),
            ProviderKind::Anthropic => anthropic::request_body(&self.cfg, req),
        }
    }

    fn headers(&self) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        h.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        if self.cfg.provider == ProviderKind::Anthropic {
            h.insert(
                "anthropic-version",
                HeaderValue::from_static(anthropic::API_VERSION),
            );
        }
        if let Some(key) = &self.cfg.api_key {
            let (name, value) = match self.cfg.provider {
                ProviderKind::OpenAi => {
                    (AUTHORIZATION.as_str(), format!("Bearer {}", key.expose()))
                }
                ProviderKind::Anthropic => ("x-api-key", key.expose().to_owned()),
            };
            // A key with characters not allowed in a header is simply not sent; the server's
            // 401 then names the variable to check.
            if let Ok(mut v) = HeaderValue::from_str(&value) {
                v.set_sensitive(true);
                if let Ok(n) = reqwest::header::HeaderName::from_bytes(name.as_bytes()) {
                    h.insert(n, v);
                }
            }
        }
        h
    }

    fn scrub(&self, text: &str) -> String {
        let text = match &self.cfg.api_key {
            Some(k) => k.scrub(text),
            None => text.to_owned(),
        };
        crate::secrets::mask_printed(&text)
    }

    /// Connect and get a success status, retrying 429/5xx. Returns the response and the
    /// first-token deadline of the successful attempt.
    ///
    /// A 400 that complains about an optional field this client added (`stream_options`, or
    /// `max_tokens` where the server wants `max_completion_tokens`) is answered by resending
    /// without it / with the other name — servers differ, and the GM should not have to
    /// care. Every wait before a retry is announced through the notifier, with the time the
    /// retry goes out; a `Retry-After` longer than the policy's cap ends the request at once.
    async fn start(&self, body: &Value) -> Result<(reqwest::Response, Instant), LlmError> {
        let policy = self.cfg.retry;
        let mut body = body.clone();
        let mut attempt: u32 = 0;
        loop {
            attempt += 1;
            let deadline = Instant::now() + self.cfg.timeouts.first_token;
            let send = self
                .http
                .post(&self.endpoint)
                .headers(self.headers())
                .json(&body)
                .send();
            let resp = match timeout_at(deadline, send).await {
                Err(_) => return Err(self.first_token_timeout()),
                Ok(Err(e)) => return Err(self.send_error(e)),
                Ok(Ok(r)) => r,
            };
            let status = resp.status();
            if status.is_success() {
                return Ok((resp, deadline));
            }
            let retry_after = retry_after(resp.headers());
            let raw = read_body(resp, Instant::now() + Duration::from_secs(10)).await;
            let mut info = ErrorInfo::parse(&self.scrub(&raw));
            let retryable = status == StatusCode::TOO_MANY_REQUESTS
                || status.is_server_error()
                || status.as_u16() == 529;
            if retryable && attempt <= policy.max_retries {
                match policy.delay(attempt - 1, retry_after) {
                    Some(wait) => {
                        if wait >= NOTICE_AFTER {
                            self.notify(&Notice::Waiting {
                                status: status.as_u16(),
                                wait,
                                until: chrono::Local::now()
                                    + chrono::Duration::from_std(wait).unwrap_or_default(),
                                retry: attempt,
                                max_retries: policy.max_retries,
                            });
                        }
                        tokio::time::sleep(wait).await;
                        continue;
                    }
                    None => {
                        let wait = retry_after.unwrap_or_default();
                        let until = chrono::Local::now()
                            + chrono::Duration::from_std(wait).unwrap_or_default();
                        let asked = format!(
                            "the server asks to wait {} (until {}) — longer than vaultdm waits at the table; try again then",
                            human_duration(wait),
                            until.format("%H:%M:%S")
                        );
                        info.message = if info.message.is_empty() {
                            asked
                        } else {
                            format!("{}; {asked}", info.message)
                        };
                    }
                }
            }
            // Each adjustment removes what it reacts to, so this resends at most twice.
            if status == StatusCode::BAD_REQUEST && adjust_body(&mut body, &info.message) {
                attempt -= 1;
                continue;
            }
            return Err(self.status_error(status, attempt, info));
        }
    }

    fn notify(&self, notice: &Notice) {
        if let Some(n) = &self.notifier {
            n(notice);
        }
    }

    /// Send the request, then read the reply off the body into `reply` (kept by the
    /// caller, so a cancelled read still has what arrived).
    async fn run(
        &self,
        req: &ChatRequest,
        on_token: &mut (dyn FnMut(&str) + Send),
        reply: &mut Reply,
    ) -> Result<Reply, LlmError> {
        let hard_deadline = Instant::now() + self.cfg.limits.deadline;
        let body = self.body(req);
        let (resp, first_deadline) = self.start(&body).await?;
        let content_type = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let mut read = Reading {
            client: self,
            reply,
            on_token,
            is_sse: decode_as_sse(content_type.as_deref()),
            content_type,
            sse: SseDecoder::new(),
            whole_body: Vec::new(),
            decoder: Decoder::new(self.cfg.provider),
            got_text: false,
            deadline: first_deadline,
            hard_deadline,
            seen: BodySeen::default(),
            deltas: 0,
            chars: 0,
        };
        let mut stream = resp.bytes_stream();
        loop {
            let next = timeout_at(read.deadline.min(hard_deadline), stream.next()).await;
            let at_end = matches!(next, Ok(None));
            let events = match next {
                Err(_) => match read.timed_out() {
                    Flow::Read | Flow::Finish => break,
                    Flow::Return(r) => return r,
                },
                Ok(None) => read.end_of_body(),
                Ok(Some(Err(e))) => {
                    if read.reply.complete {
                        break;
                    }
                    return Err(read.connection_lost(&e));
                }
                Ok(Some(Ok(bytes))) => read.push_bytes(&bytes)?,
            };
            match read.on_events(&events) {
                Flow::Read if !at_end => {}
                Flow::Read | Flow::Finish => break,
                Flow::Return(r) => return r,
            }
        }
        read.settle()
    }

    fn bad_response(&self, content_type: Option<&str>, seen: &BodySeen) -> LlmError {
        LlmError::BadResponse {
            url: self.shown.clone(),
            content_type: content_type.unwrap_or("none").to_owned(),
            excerpt: self.scrub(&excerpt(&String::from_utf8_lossy(&seen.head))),
        }
    }

    fn model_hint(&self) -> String {
        let m = &self.cfg.model;
        if self.endpoint.contains(":11434") || self.endpoint.contains("ollama") {
            format!("pull it with `ollama pull {m}` (see `ollama list`)")
        } else {
            "check the model name against the provider's model list (--model, $VAULTDM_MODEL or `model` in [llm])".into()
        }
    }

    fn first_token_timeout(&self) -> LlmError {
        LlmError::FirstTokenTimeout {
            url: self.shown.clone(),
            after: self.cfg.timeouts.first_token,
        }
    }

    fn send_error(&self, e: reqwest::Error) -> LlmError {
        let url = self.shown.clone();
        if e.is_timeout() {
            return LlmError::ConnectTimeout {
                url,
                after: self.cfg.timeouts.connect,
                hint: local_hint(&self.endpoint),
            };
        }
        if e.is_connect() && has_io_kind(&e, std::io::ErrorKind::ConnectionRefused) {
            return LlmError::ConnectionRefused {
                hint: local_hint(&self.endpoint),
                url: crate::secrets::mask_url(self.cfg.base_url.trim_end_matches('/')),
            };
        }
        LlmError::Connect {
            url,
            detail: self.scrub(&error_chain(&e)),
            source: e,
        }
    }

    fn status_error(&self, status: StatusCode, attempts: u32, info: ErrorInfo) -> LlmError {
        let url = self.shown.clone();
        let code = status.as_u16();
        let model_problem = info.code.as_deref() == Some("model_not_found")
            || info.message.to_ascii_lowercase().contains("model");
        match code {
            401 | 403 => LlmError::Unauthorized {
                status: code,
                url,
                key_var: self.cfg.api_key.as_ref().map(|k| {
                    k.source_var()
                        .unwrap_or(self.cfg.provider.default_key_var())
                        .to_owned()
                }),
                message: prefixed(" — ", &info.message),
            },
            404 if model_problem => LlmError::UnknownModel {
                model: self.cfg.model.clone(),
                hint: self.model_hint(),
                url,
                message: prefixed(": ", &info.message),
            },
            404 => LlmError::NotFound {
                url,
                message: prefixed(": ", &info.message),
            },
            400 if info.code.as_deref() == Some("model_not_found") => LlmError::UnknownModel {
                model: self.cfg.model.clone(),
                hint: self.model_hint(),
                url,
                message: prefixed(": ", &info.message),
            },
            429 => LlmError::RateLimited {
                url,
                attempts,
                message: prefixed(": ", &info.message),
            },
            c if c >= 500 => LlmError::Server {
                status: c,
                url,
                attempts,
                message: prefixed(": ", &info.message),
            },
            c => LlmError::Rejected {
                status: c,
                url,
                message: prefixed(": ", &info.message),
            },
        }
    }
}

/// How reading a reply goes on after one step.
enum Flow {
    /// Read the next piece of the body.
    Read,
    /// Nothing more will come: settle the reply.
    Finish,
    /// Stop here with this result.
    Return(Result<Reply, LlmError>),
}

/// One reply being read off a response body: how the body is decoded, what it looked like,
/// and the counters the reply limits and the timeouts are checked against.
struct Reading<'a> {
    client: &'a LlmClient,
    /// The reply so far (the caller's, so a cancelled read keeps it).
    reply: &'a mut Reply,
    on_token: &'a mut (dyn FnMut(&str) + Send),
    content_type: Option<String>,
    /// Decode as SSE; else the whole body is one event, read at its end.
    is_sse: bool,
    sse: SseDecoder,
    /// A non-SSE body, gathered until it ends.
    whole_body: Vec<u8>,
    decoder: Decoder,
    /// Text or a tool call arrived (the idle timeout applies from then on).
    got_text: bool,
    /// When the next piece must arrive (first-token, then idle).
    deadline: Instant,
    /// When the whole reply must be done ([`super::ReplyLimits::deadline`]).
    hard_deadline: Instant,
    /// What the body looked like, to tell a broken server from a cut-off stream.
    seen: BodySeen,
    /// Text and tool-call pieces received.
    deltas: usize,
    /// Characters kept.
    chars: usize,
}

impl Reading<'_> {
    /// A deadline passed with nothing read: a complete reply is settled, one with text past
    /// the hard deadline is cut off there; otherwise the timeout that fired is the error.
    fn timed_out(&mut self) -> Flow {
        if self.reply.complete {
            return Flow::Finish;
        }
        if Instant::now() >= self.hard_deadline && self.got_text {
            self.reply.cut_off = Some(CutOff::Deadline);
            return Flow::Return(Ok(self.reply.clone()));
        }
        if !self.got_text {
            return Flow::Return(Err(self.client.first_token_timeout()));
        }
        Flow::Return(Err(LlmError::IdleTimeout {
            url: self.client.shown.clone(),
            after: self.client.cfg.timeouts.idle,
            partial: Box::new(cut(self.reply, CutOff::IdleTimeout)),
        }))
    }

    /// The connection broke mid-reply.
    fn connection_lost(&self, e: &reqwest::Error) -> LlmError {
        LlmError::StreamCut {
            url: self.client.shown.clone(),
            detail: self.client.scrub(&error_chain(e)),
            partial: Box::new(cut(self.reply, CutOff::ConnectionLost)),
        }
    }

    /// The events the body's end completes (a non-SSE body is one event).
    fn end_of_body(&mut self) -> Vec<SseEvent> {
        if self.is_sse {
            self.sse.finish()
        } else {
            vec![SseEvent {
                data: String::from_utf8_lossy(&self.whole_body).into_owned(),
                ..SseEvent::default()
            }]
        }
    }

    /// The events a piece of the body completes; a non-SSE body larger than a reply may
    /// be is a bad response.
    fn push_bytes(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, LlmError> {
        if self.got_text {
            self.deadline = Instant::now() + self.client.cfg.timeouts.idle;
        }
        self.seen.note_bytes(bytes);
        if self.is_sse {
            return Ok(self.sse.push(bytes));
        }
        let max = self.client.cfg.limits.max_chars.saturating_mul(4);
        if self.whole_body.len() + bytes.len() > max {
            return Err(self.bad_response());
        }
        self.whole_body.extend_from_slice(bytes);
        Ok(Vec::new())
    }

    /// Decode events into items and apply them, up to the first event that says stop.
    fn on_events(&mut self, events: &[SseEvent]) -> Flow {
        let mut items = Vec::new();
        for ev in events {
            self.decoder.on_event(ev, &mut items);
            let mut stop = false;
            for item in items.drain(..) {
                match self.on_item(item) {
                    Flow::Read => {}
                    Flow::Finish => stop = true,
                    done @ Flow::Return(_) => return done,
                }
            }
            if stop {
                return Flow::Finish;
            }
        }
        Flow::Read
    }

    /// Apply one decoded item to the reply.
    fn on_item(&mut self, item: Item) -> Flow {
        match item {
            Item::Text(t) => return self.on_text(&t),
            Item::ToolCall {
                slot,
                id,
                name,
                arguments,
            } => return self.on_tool_piece(slot, id, name, &arguments),
            Item::FinishReason(r) => {
                self.seen.understood = true;
                self.reply.finish_reason = Some(r);
            }
            Item::Complete => {
                self.seen.understood = true;
                self.reply.complete = true;
            }
            Item::Stop => return Flow::Finish,
            Item::Usage(u) => {
                self.seen.understood = true;
                self.reply.usage = Some(u);
            }
            Item::Known => self.seen.understood = true,
            Item::Warning(w) => {
                self.seen.warnings += 1;
                if self.reply.warnings.len() < MAX_WARNINGS {
                    self.reply.warnings.push(self.client.scrub(&w));
                }
            }
            Item::OtherProtocol(other) => {
                if !self.seen.understood {
                    return Flow::Return(Err(LlmError::ProviderMismatch {
                        url: self.client.shown.clone(),
                        configured: self.client.cfg.provider,
                        looks_like: other,
                    }));
                }
            }
            Item::Error(msg) => {
                return Flow::Return(Err(LlmError::StreamError {
                    url: self.client.shown.clone(),
                    message: self.client.scrub(&msg),
                    partial: Box::new(cut(self.reply, CutOff::ProviderError)),
                }));
            }
        }
        Flow::Read
    }

    /// Reply text: shown and kept up to the reply limits; past them the reply is cut off.
    fn on_text(&mut self, t: &str) -> Flow {
        let limits = self.client.cfg.limits;
        self.seen.understood = true;
        self.deltas += 1;
        let room = limits.max_chars.saturating_sub(self.chars);
        let (t, mut over) = match t.char_indices().nth(room) {
            Some((at, _)) => (&t[..at], true),
            None => (t, false),
        };
        let n = t.chars().count();
        // Tokens: stream deltas or chars / 4, whichever is larger.
        if self.deltas.max((self.chars + n) / 4) > limits.max_tokens {
            over = true;
        } else {
            self.chars += n;
            if !t.is_empty() {
                (self.on_token)(t);
                self.reply.text.push_str(t);
            }
        }
        if over {
            return self.too_long();
        }
        self.got_output();
        Flow::Read
    }

    /// A piece of a tool call, counted against the reply limits like text.
    fn on_tool_piece(
        &mut self,
        slot: usize,
        id: Option<String>,
        name: Option<String>,
        arguments: &str,
    ) -> Flow {
        let limits = self.client.cfg.limits;
        self.seen.understood = true;
        self.deltas += 1;
        let n = arguments.chars().count();
        if self.chars + n > limits.max_chars
            || self.deltas.max((self.chars + n) / 4) > limits.max_tokens
        {
            return self.too_long();
        }
        self.chars += n;
        merge_tool_call(&mut self.reply.tool_calls, slot, id, name, arguments);
        self.got_output();
        Flow::Read
    }

    /// The first output starts the idle timeout.
    fn got_output(&mut self) {
        if !self.got_text {
            self.got_text = true;
            self.deadline = Instant::now() + self.client.cfg.timeouts.idle;
        }
    }

    /// The reply passed a limit: stop reading (dropping the stream closes the connection).
    fn too_long(&mut self) -> Flow {
        self.reply.complete = false;
        self.reply.cut_off = Some(CutOff::TooLong);
        Flow::Return(Ok(self.reply.clone()))
    }

    /// The body ended or the protocol said stop: a body nothing understood is a bad
    /// response; a reply is complete only after its end event and a natural stop reason.
    fn settle(self) -> Result<Reply, LlmError> {
        if !self.seen.understood && self.seen.has_content() {
            return Err(self.bad_response());
        }
        let reply = self.reply;
        // Complete only for a natural end: a token-limit or filter stop is a cut-off reply.
        let unnatural = reply
            .finish_reason
            .as_deref()
            .and_then(CutOff::from_finish_reason);
        if reply.complete && unnatural.is_none() {
            reply.cut_off = None;
            // A finished call that streamed no argument pieces takes no arguments.
            for call in &mut reply.tool_calls {
                if call.arguments.trim().is_empty() {
                    call.arguments = "{}".to_owned();
                }
            }
        } else {
            reply.complete = false;
            reply.cut_off = Some(unnatural.unwrap_or(CutOff::EndedEarly));
        }
        Ok(reply.clone())
    }

    fn bad_response(&self) -> LlmError {
        self.client
            .bad_response(self.content_type.as_deref(), &self.seen)
    }
}

/// Drop or rename an optional OpenAI field a server rejected; `true` if the body changed.
fn adjust_body(body: &mut Value, message: &str) -> bool {
    let Some(obj) = body.as_object_mut() else {
        return false;
    };
    let mut changed = false;
    if message.contains("stream_options") && obj.remove("stream_options").is_some() {
        changed = true;
    }
    if message.contains("max_completion_tokens") {
        if let Some(v) = obj.remove("max_tokens") {
            obj.insert("max_completion_tokens".into(), v);
            changed = true;
        }
    }
    changed
}

/// Whether to decode a body with this content type as SSE. Anything that is not clearly
/// JSON is treated as SSE (many servers omit or mislabel the content type).
fn decode_as_sse(content_type: Option<&str>) -> bool {
    match content_type {
        None => true,
        Some(ct) => !ct
            .trim_start()
            .to_ascii_lowercase()
            .starts_with("application/json"),
    }
}

/// Apply one tool-call piece: the call at `slot` (created, with any calls before it, if
/// new) takes `id` and `name` when it has none yet and appends `arguments`.
fn merge_tool_call(
    calls: &mut Vec<super::ToolCall>,
    slot: usize,
    id: Option<String>,
    name: Option<String>,
    arguments: &str,
) {
    if calls.len() <= slot {
        calls.resize_with(slot + 1, super::ToolCall::default);
    }
    let call = &mut calls[slot];
    if let Some(id) = id.filter(|i| !i.is_empty()) {
        if call.id.is_empty() {
            call.id = id;
        }
    }
    if let Some(name) = name.filter(|n| !n.is_empty()) {
        if call.name.is_empty() {
            call.name = name;
        }
    }
    call.arguments.push_str(arguments);
}

fn cut(reply: &Reply, why: CutOff) -> Reply {
    Reply {
        complete: false,
        cut_off: Some(why),
        ..reply.clone()
    }
}

fn prefixed(prefix: &str, msg: &str) -> String {
    if msg.is_empty() {
        String::new()
    } else {
        format!("{prefix}{msg}")
    }
}

/// A one-line excerpt of server text, at most 300 characters.
pub(super) fn excerpt(text: &str) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > 300 {
        let cut: String = one_line.chars().take(300).collect();
        format!("{cut}…")
    } else {
        one_line
    }
}

/// The useful parts of an error response body.
#[derive(Debug, Default)]
struct ErrorInfo {
    message: String,
    code: Option<String>,
}

impl ErrorInfo {
    fn parse(body: &str) -> Self {
        let Ok(v) = serde_json::from_str::<Value>(body) else {
            return Self {
                message: excerpt(body),
                code: None,
            };
        };
        let err = v.get("error").filter(|e| !e.is_null()).unwrap_or(&v);
        let message = err
            .get("message")
            .and_then(Value::as_str)
            .or_else(|| err.as_str())
            .or_else(|| v.get("message").and_then(Value::as_str))
            .or_else(|| v.get("detail").and_then(Value::as_str))
            .map(excerpt)
            .unwrap_or_else(|| excerpt(body));
        let code = err
            .get("code")
            .and_then(Value::as_str)
            .or_else(|| err.get("type").and_then(Value::as_str))
            .map(str::to_owned);
        Self { message, code }
    }
}

async fn read_body(mut resp: reqwest::Response, deadline: Instant) -> String {
    let mut buf = Vec::new();
    while let Ok(Ok(Some(chunk))) = timeout_at(deadline, resp.chunk()).await {
        buf.extend_from_slice(&chunk);
        if buf.len() >= MAX_ERROR_BODY {
            break;
        }
    }
    String::from_utf8_lossy(&buf).into_owned()
}

/// `retry-after-ms` (OpenAI), `retry-after` in (possibly fractional) seconds, or an HTTP date.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        if ms.is_finite() && ms >= 0.0 {
            return Some(Duration::from_secs_f64(ms / 1000.0));
        }
    }
    let v = get("retry-after")?;
    if let Ok(secs) = v.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0)
            .then(|| Duration::from_secs_f64(secs.min(86_400.0)));
    }
    let when = chrono::DateTime::parse_from_rfc2822(v).ok()?;
    let delta = when.with_timezone(&chrono::Utc) - chrono::Utc::now();
    Some(delta.to_std().unwrap_or(Duration::ZERO))
}

fn has_io_kind(e: &(dyn std::error::Error + 'static), kind: std::io::ErrorKind) -> bool {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            if io.kind() == kind {
                return true;
            }
        }
        cur = err.source();
    }
    false
}

/// "outer: inner: innermost", skipping repeats.
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        let s = err.to_string();
        if !parts.iter().any(|p| p.contains(&s)) {
            parts.push(s);
        }
        cur = err.source();
    }
    parts.join(": ")
}

/// A friendly guess at what should be listening on a local URL.
fn local_hint(url: &str) -> String {
    let Ok(u) = reqwest::Url::parse(url) else {
        return String::new();
    };
    let local = matches!(
        u.host_str(),
        Some("localhost" | "127.0.0.1" | "[::1]" | "::1" | "0.0.0.0")
    );
    if !local {
        return String::new();
    }
    match u.port_or_known_default() {
        Some(11434) => " — is Ollama running? (start it with `ollama serve`)".into(),
        Some(1234) => " — is LM Studio's local server running?".into(),
        Some(8080) => " — is the llama.cpp server running?".into(),
        Some(8000) => " — is the vLLM server running?".into(),
        _ => " — is the local model server running?".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case(&[("retry-after", "2")], Some(2000))]
    #[case(&[("retry-after", "0.25")], Some(250))]
    #[case(&[("retry-after-ms", "1500"), ("retry-after", "9")], Some(1500))]
    #[case(&[("retry-after", "soon")], None)]
    #[case(&[("retry-after", "-3")], None)]
    #[case(&[], None)]
    fn parses_retry_after(
        #[case] headers: &[(&'static str, &'static str)],
        #[case] expected_ms: Option<u64>,
    ) {
        let mut h = HeaderMap::new();
        for (k, v) in headers {
            h.insert(
                reqwest::header::HeaderName::from_static(k),
                HeaderValue::from_static(v),
            );
        }
        assert_eq!(retry_after(&h), expected_ms.map(Duration::from_millis));
    }

    #[test]
    fn retry_after_http_date_in_the_past_is_zero() {
        let mut h = HeaderMap::new();
        h.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&h), Some(Duration::ZERO));
    }

    #[rstest]
    #[case("http://localhost:11434/v1/chat/completions", "Ollama")]
    #[case("http://127.0.0.1:1234/v1/chat/completions", "LM Studio")]
    #[case("http://127.0.0.1:9/v1", "local model server")]
    #[case("https://api.openai.com/v1", "")]
    fn hints(#[case] url: &str, #[case] needle: &str) {
        let h = local_hint(url);
        if needle.is_empty() {
            assert!(h.is_empty());
        } else {
            assert!(h.contains(needle), "{h}");
        }
    }

    #[rstest]
    #[case(
        r#"{"error":{"message":"The model `x` does not exist","code":"model_not_found"}}"#,
        "The model `x` does not exist",
        Some("model_not_found")
    )]
    #[case(
        r#"{"type":"error","error":{"type":"not_found_error","message":"model: x"}}"#,
        "model: x",
        Some("not_found_error")
    )]
    #[case(r#"{"error":"model 'x' not found"}"#, "model 'x' not found", None)]
    #[case("<html>Bad Gateway</html>", "<html>Bad Gateway</html>", None)]
    fn error_info(#[case] body: &str, #[case] msg: &str, #[case] code: Option<&str>) {
        let info = ErrorInfo::parse(body);
        assert_eq!(info.message, msg);
        assert_eq!(info.code.as_deref(), code);
    }

    #[test]
    fn excerpt_is_short_and_single_line() {
        let long = "a\n".repeat(500);
        let e = excerpt(&long);
        assert!(!e.contains('\n'));
        assert!(e.chars().count() <= 301);
    }
}
