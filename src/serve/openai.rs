//! The OpenAI Chat Completions wire format as `vaultdm serve` speaks it to front ends:
//! reading a request leniently (string or multi-part content, `developer` as `system`, the
//! sampling fields a front end sets), writing `chat.completion` objects and
//! `chat.completion.chunk` events, and OpenAI-style error bodies.

use crate::llm::{ChatMessage, LlmError, ProviderKind, Role};
use crate::play::{PlayError, SendError};
use axum::http::StatusCode;
use serde_json::{json, Map, Value};

/// A chat completion request as the proxy needs it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Request {
    /// `model` as sent (may name the campaign: `coldharrow/gpt-4o-mini`).
    pub model: String,
    /// Stream the reply as server-sent events.
    pub stream: bool,
    /// Send a usage chunk at the end of a stream (`stream_options.include_usage`).
    pub include_usage: bool,
    /// The front end's system text (every `system`/`developer` message, in order).
    pub system: String,
    /// User and assistant messages, in order (adjacent ones of one role merged).
    pub messages: Vec<ChatMessage>,
    /// `max_tokens` or `max_completion_tokens`.
    pub max_tokens: Option<u32>,
    /// Sampling fields passed on as the front end set them.
    pub sampling: Map<String, Value>,
    /// `user`, when given (not forwarded).
    pub user: Option<String>,
}

/// The sampling fields passed on to an OpenAI-compatible upstream.
const OPENAI_SAMPLING: &[&str] = &[
    "temperature",
    "top_p",
    "stop",
    "presence_penalty",
    "frequency_penalty",
    "seed",
];

/// A request that cannot be served, as an OpenAI error.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// OpenAI `type`.
    pub kind: &'static str,
    /// OpenAI `code`.
    pub code: &'static str,
    /// What happened, in the CLI's words.
    pub message: String,
}

impl ApiError {
    /// A 400 `invalid_request_error`.
    pub(crate) fn invalid(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            kind: "invalid_request_error",
            code,
            message: message.into(),
        }
    }

    /// Any status.
    pub(crate) fn new(
        status: StatusCode,
        kind: &'static str,
        code: &'static str,
        message: impl Into<String>,
    ) -> ApiError {
        ApiError {
            status,
            kind,
            code,
            message: message.into(),
        }
    }

    /// `{"error": {"message", "type", "code", "param"}}`.
    pub(crate) fn body(&self) -> Value {
        json!({"error": {
            "message": self.message,
            "type": self.kind,
            "code": self.code,
            "param": null,
        }})
    }
}

impl axum::response::IntoResponse for ApiError {
    fn into_response(self) -> axum::response::Response {
        (self.status, axum::Json(self.body())).into_response()
    }
}

/// The text of a message's `content`: a string, or the text parts of a list (images and
/// other parts are left out).
fn content_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Null => Some(String::new()),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|p| match p {
                    Value::String(s) => Some(s.as_str()),
                    Value::Object(o) => o.get("text").and_then(Value::as_str),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    }
}

/// Reads a request body as JSON.
pub(crate) fn json_of(body: &[u8]) -> Result<Value, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::invalid("invalid_json", format!("the request is not JSON: {e}")))
}

/// Reads a request body.
#[cfg(test)]
fn parse(body: &[u8]) -> Result<Request, ApiError> {
    parse_value(&json_of(body)?)
}

/// Reads a background task's messages as they came (see [`super::tasks`]): the leading
/// `system` messages are the system text, a later one (SillyTavern's quiet prompt) is read
/// as the user's; adjacent messages of one role are merged.
pub(crate) fn task_prompt(v: &Value) -> Result<crate::llm::ChatRequest, ApiError> {
    let Some(list) = v.get("messages").and_then(Value::as_array) else {
        return Err(ApiError::invalid(
            "missing_messages",
            "`messages` must be a list of {role, content}",
        ));
    };
    let mut system = Vec::new();
    let mut messages = Vec::new();
    for (i, m) in list.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        let text = m.get("content").and_then(content_text).ok_or_else(|| {
            ApiError::invalid(
                "invalid_content",
                format!("messages[{i}].content must be text or a list of text parts"),
            )
        })?;
        match role {
            "system" | "developer" if messages.is_empty() => system.push(text),
            "system" | "developer" | "user" => messages.push(ChatMessage::user(text)),
            "assistant" => messages.push(ChatMessage::assistant(text)),
            _ => {}
        }
    }
    let messages = crate::play::relay::merge_turns(&messages);
    if messages.is_empty() {
        return Err(ApiError::invalid(
            "no_user_message",
            "the request has no message to answer",
        ));
    }
    Ok(crate::llm::ChatRequest {
        system: system.join("\n\n"),
        messages,
        tools: Vec::new(),
    })
}

/// The sampling fields a front end set, as passed on, and the reply length it asked for
/// (`max_completion_tokens` or `max_tokens`).
pub(crate) fn sampling_of(o: &Map<String, Value>) -> (Map<String, Value>, Option<u32>) {
    let max_tokens = ["max_completion_tokens", "max_tokens"]
        .iter()
        .find_map(|k| o.get(*k).and_then(Value::as_u64))
        .map(|n| u32::try_from(n).unwrap_or(u32::MAX));
    let sampling = OPENAI_SAMPLING
        .iter()
        .filter_map(|k| {
            o.get(*k)
                .filter(|v| !v.is_null())
                .map(|v| ((*k).to_owned(), v.clone()))
        })
        .collect();
    (sampling, max_tokens)
}

/// Reads a parsed request body.
pub(crate) fn parse_value(v: &Value) -> Result<Request, ApiError> {
    let Some(o) = v.as_object() else {
        return Err(ApiError::invalid(
            "invalid_json",
            "the request must be a JSON object",
        ));
    };
    let Some(list) = o.get("messages").and_then(Value::as_array) else {
        return Err(ApiError::invalid(
            "missing_messages",
            "`messages` must be a list of {role, content}",
        ));
    };
    let mut system = Vec::new();
    let mut messages = Vec::new();
    for (i, m) in list.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        let text = m.get("content").and_then(content_text).ok_or_else(|| {
            ApiError::invalid(
                "invalid_content",
                format!("messages[{i}].content must be text or a list of text parts"),
            )
        })?;
        match role {
            "system" | "developer" => system.push(text),
            "user" => messages.push(ChatMessage::user(text)),
            "assistant" => messages.push(ChatMessage::assistant(text)),
            // Tool results and function messages belong to the front end's own tools.
            "tool" | "function" => {}
            other => {
                return Err(ApiError::invalid(
                    "invalid_role",
                    format!("messages[{i}].role `{other}` is not system, user or assistant"),
                ))
            }
        }
    }
    let messages = crate::play::relay::merge_turns(&messages);
    match messages.last() {
        Some(m) if m.role == Role::User => {}
        _ => {
            return Err(ApiError::invalid(
                "no_user_message",
                "the last message must be the player's (role `user`): vaultdm injects the canon that message needs",
            ))
        }
    }
    let (sampling, max_tokens) = sampling_of(o);
    Ok(Request {
        model: o
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim()
            .to_owned(),
        stream: o.get("stream").and_then(Value::as_bool).unwrap_or(false),
        include_usage: o
            .get("stream_options")
            .and_then(|s| s.get("include_usage"))
            .and_then(Value::as_bool)
            .unwrap_or(false),
        system: system
            .into_iter()
            .filter(|s| !s.trim().is_empty())
            .collect::<Vec<_>>()
            .join("\n\n"),
        messages,
        max_tokens,
        sampling,
        user: o.get("user").and_then(Value::as_str).map(str::to_owned),
    })
}

/// The sampling fields in the upstream's own names: Anthropic takes `temperature`, `top_p`
/// and `stop_sequences` (a list), and nothing else of these.
pub(crate) fn sampling_for(
    kind: ProviderKind,
    sampling: &Map<String, Value>,
) -> Map<String, Value> {
    match kind {
        ProviderKind::OpenAi => sampling.clone(),
        ProviderKind::Anthropic => {
            let mut out = Map::new();
            for k in ["temperature", "top_p"] {
                if let Some(v) = sampling.get(k) {
                    out.insert(k.to_owned(), v.clone());
                }
            }
            match sampling.get("stop") {
                Some(Value::String(s)) => {
                    out.insert("stop_sequences".into(), json!([s]));
                }
                Some(Value::Array(a)) => {
                    out.insert("stop_sequences".into(), Value::Array(a.clone()));
                }
                _ => {}
            }
            out
        }
    }
}

/// The OpenAI `finish_reason` for a reply.
pub(crate) fn finish_reason(reply: &crate::llm::Reply) -> &'static str {
    if reply.hit_token_limit() {
        "length"
    } else {
        // Tool calls included: vaultdm took the proposals; to the front end the reply ended.
        "stop"
    }
}

/// One `chat.completion.chunk` event's data.
pub(crate) fn chunk(
    id: &str,
    created: i64,
    model: &str,
    delta: Value,
    finish: Option<&str>,
) -> String {
    json!({
        "id": id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "system_fingerprint": null,
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
    })
    .to_string()
}

/// The usage object.
pub(crate) fn usage(u: Option<&crate::llm::Usage>) -> Value {
    let input = u.and_then(|u| u.input_tokens).unwrap_or(0);
    let output = u.and_then(|u| u.output_tokens).unwrap_or(0);
    json!({"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output})
}

/// The upstream's usage, with what it left out counted by vaultdm's token counter
/// ([`crate::tokens::count`]): the prompt as sent, and the reply's text.
pub(crate) fn usage_counted(
    u: Option<crate::llm::Usage>,
    prompt: &crate::llm::ChatRequest,
    reply: &str,
) -> crate::llm::Usage {
    let mut u = u.unwrap_or_default();
    if u.input_tokens.is_none() {
        let n = crate::tokens::count(&prompt.system)
            + prompt
                .messages
                .iter()
                .map(|m| crate::tokens::count(&m.content) + 4)
                .sum::<usize>();
        u.input_tokens = Some(n as u64);
    }
    if u.output_tokens.is_none() {
        u.output_tokens = Some(crate::tokens::count(reply) as u64);
    }
    u
}

/// The usage event that ends a stream (`stream_options.include_usage`).
pub(crate) fn usage_event(id: &str, created: i64, model: &str, u: &crate::llm::Usage) -> String {
    format!(
        "data: {}\n\n",
        json!({
            "id": id, "object": "chat.completion.chunk",
            "created": created, "model": model,
            "choices": [], "usage": usage(Some(u)),
        })
    )
}

/// A whole `chat.completion` object.
pub(crate) fn completion(
    id: &str,
    created: i64,
    model: &str,
    text: &str,
    finish: &str,
    u: Option<&crate::llm::Usage>,
) -> Value {
    json!({
        "id": id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "system_fingerprint": null,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": text, "refusal": null},
            "logprobs": null,
            "finish_reason": finish,
        }],
        "usage": usage(u),
    })
}

/// What an error's message ends with when the player's message was saved before the failure.
pub(crate) const SAVED_NOTE: &str = " (the message is saved in the session log)";

/// An upstream failure as an OpenAI error: the status says whose fault it was (the request's,
/// the upstream's, or a wait), the message is the CLI's.
pub(crate) fn error_of(e: &SendError) -> ApiError {
    let message = e.to_string();
    let (status, kind, code) = match &e.error {
        PlayError::Llm(l) => match l {
            LlmError::NotConfigured { .. } | LlmError::InvalidUrl { .. } => (
                StatusCode::SERVICE_UNAVAILABLE,
                "server_error",
                "upstream_not_configured",
            ),
            LlmError::Unauthorized { .. } => (
                StatusCode::BAD_GATEWAY,
                "upstream_error",
                "upstream_unauthorized",
            ),
            LlmError::UnknownModel { .. } => (
                StatusCode::NOT_FOUND,
                "invalid_request_error",
                "model_not_found",
            ),
            LlmError::RateLimited { .. } => (
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limit_error",
                "rate_limit_exceeded",
            ),
            LlmError::Rejected { status: 400, .. } => (
                StatusCode::BAD_REQUEST,
                "invalid_request_error",
                "upstream_rejected",
            ),
            LlmError::FirstTokenTimeout { .. }
            | LlmError::IdleTimeout { .. }
            | LlmError::ConnectTimeout { .. } => (
                StatusCode::GATEWAY_TIMEOUT,
                "upstream_error",
                "upstream_timeout",
            ),
            _ => (StatusCode::BAD_GATEWAY, "upstream_error", "upstream_error"),
        },
        PlayError::Session(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            "session_not_saved",
        ),
        PlayError::Context(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            "context_failed",
        ),
        PlayError::Write(_) => (StatusCode::CONFLICT, "server_error", "write_failed"),
    };
    let saved = if e.message_saved { SAVED_NOTE } else { "" };
    ApiError::new(status, kind, code, format!("{message}{saved}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_front_ends_send() {
        let r = parse(
            br#"{"model":"coldharrow/gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},
            "temperature":0.7,"max_tokens":300,"logit_bias":{},"messages":[
              {"role":"system","content":"You are Seraphina."},
              {"role":"assistant","content":"Welcome, traveller."},
              {"role":"user","content":[{"type":"text","text":"I greet Brannock."},{"type":"image_url","image_url":{"url":"x"}}]},
              {"role":"user","content":"And look around."}]}"#,
        )
        .expect("parse");
        assert_eq!(r.model, "coldharrow/gpt-4o-mini");
        assert!(r.stream && r.include_usage);
        assert_eq!(r.system, "You are Seraphina.");
        assert_eq!(r.max_tokens, Some(300));
        assert_eq!(r.sampling.get("temperature"), Some(&json!(0.7)));
        assert!(!r.sampling.contains_key("logit_bias"));
        assert_eq!(
            r.messages,
            vec![
                ChatMessage::assistant("Welcome, traveller."),
                ChatMessage::user("I greet Brannock.\n\nAnd look around."),
            ]
        );
    }

    #[test]
    fn refuses_with_a_reason() {
        for (body, code) in [
            (&b"nope"[..], "invalid_json"),
            (br#"{"messages":3}"#, "missing_messages"),
            (
                br#"{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}"#,
                "no_user_message",
            ),
            (br#"{"messages":[{"role":"wizard","content":"a"}]}"#, "invalid_role"),
            (br#"{"messages":[{"role":"user","content":5}]}"#, "invalid_content"),
        ] {
            assert_eq!(parse(body).expect_err("refused").code, code);
        }
    }

    #[test]
    fn anthropic_sampling_names() {
        let s: Map<String, Value> = serde_json::from_str(
            r#"{"temperature":0.5,"stop":"END","seed":3,"presence_penalty":1}"#,
        )
        .expect("json");
        let a = sampling_for(ProviderKind::Anthropic, &s);
        assert_eq!(
            Value::Object(a),
            json!({"temperature":0.5,"stop_sequences":["END"]})
        );
        assert_eq!(sampling_for(ProviderKind::OpenAi, &s), s);
    }
}
