//! The Anthropic Messages protocol: request body and a tolerant stream decoder.
//!
//! The stream is a sequence of typed events (`message_start`, `content_block_delta`,
//! `message_delta`, `message_stop`, `ping`, `error`); only `message_stop` means the reply is
//! complete. Unknown event types and unknown fields are ignored so new API features (thinking
//! blocks, tool use) do not break the reader. Prompt caching is requested with
//! `cache_control` breakpoints on the system prompt and on the newest user message, so the
//! stable prefix (system prompt, earlier turns with their full context) is reused turn after
//! turn.
//!
//! Tool use streams as its own content block: `content_block_start` with a `tool_use` block
//! (`id`, `name`, an `input` that is usually `{}`), then `input_json_delta` pieces of the
//! arguments' JSON text, then `content_block_stop`. Text and tool blocks interleave, told
//! apart by their `index`.

use serde_json::{json, Value};

use super::client::Item;
use super::sse::SseEvent;
use super::{ChatRequest, LlmConfig, Role, Usage};

/// The `anthropic-version` header value sent with every request.
pub(super) const API_VERSION: &str = "2023-06-01";

/// Build the JSON body for `POST {base}/v1/messages`.
pub(super) fn request_body(cfg: &LlmConfig, req: &ChatRequest) -> Value {
    let last = req.messages.len().saturating_sub(1);
    let mut messages: Vec<Value> = req
        .messages
        .iter()
        .enumerate()
        .map(|(i, m)| {
            if i == last {
                json!({"role": m.role, "content": [
                    {"type": "text", "text": m.content, "cache_control": {"type": "ephemeral"}}
                ]})
            } else {
                json!({"role": m.role, "content": m.content})
            }
        })
        .collect();
    // The Messages API wants a user turn first; front ends often open with the DM's greeting.
    if req
        .messages
        .first()
        .is_some_and(|m| m.role == Role::Assistant)
    {
        messages.insert(
            0,
            json!({"role": "user", "content": "(The session begins.)"}),
        );
    }
    let mut body = json!({
        "model": cfg.model,
        "max_tokens": cfg.max_tokens,
        "messages": messages,
        "stream": true,
    });
    for (k, v) in &cfg.extra {
        body[k.as_str()] = v.clone();
    }
    if !req.system.is_empty() {
        body["system"] = json!([
            {"type": "text", "text": req.system, "cache_control": {"type": "ephemeral"}}
        ]);
    }
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "description": t.description,
                    "input_schema": t.parameters,
                })
            })
            .collect();
        body["tools"] = Value::Array(tools);
    }
    body
}

/// A `tool_use` content block in progress.
#[derive(Debug)]
struct ToolBlock {
    /// The block's `index` in the message.
    index: Option<u64>,
    /// Its slot in the reply's tool calls.
    slot: usize,
    /// Some `input_json_delta` arrived (else the start event's `input` is the arguments).
    streamed: bool,
    /// The `input` given in the start event.
    input: Value,
}

/// The arguments text of a tool call that streamed no pieces: its `input`, or `{}`.
fn input_text(input: &Value) -> String {
    match input {
        Value::Object(m) if !m.is_empty() => input.to_string(),
        _ => "{}".to_owned(),
    }
}

/// Whether a JSON event is plainly one of the Messages API's (its `type` names one).
pub(super) fn is_anthropic_event(value: &Value) -> bool {
    matches!(
        value.get("type").and_then(Value::as_str),
        Some(
            "message_start"
                | "content_block_start"
                | "content_block_delta"
                | "content_block_stop"
                | "message_delta"
                | "message_stop"
                | "ping"
        )
    )
}

/// An event's JSON, or `None` after saying why there is none: `[DONE]` means an
/// OpenAI-compatible server; unreadable text is an error in an `error` event, else a warning.
fn parse_event(ev: &SseEvent, data: &str, out: &mut Vec<Item>) -> Option<Value> {
    if data == "[DONE]" {
        out.push(Item::OtherProtocol(super::ProviderKind::OpenAi));
        return None;
    }
    match serde_json::from_str(data) {
        Ok(v) => Some(v),
        Err(e) => {
            if ev.event.as_deref() == Some("error") {
                out.push(Item::Error(super::client::excerpt(data)));
            } else if !data.is_empty() {
                out.push(Item::Warning(format!(
                    "skipped an unreadable stream event ({e}): {}",
                    super::client::excerpt(data)
                )));
            }
            None
        }
    }
}

/// The message of an `error` event, with its type when the message does not say it.
fn error_message(value: &Value, data: &str) -> String {
    let err = value.get("error").unwrap_or(value);
    let msg = err
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| super::client::excerpt(data));
    match err.get("type").and_then(Value::as_str) {
        Some(t) if !msg.contains(t) => format!("{msg} ({t})"),
        _ => msg,
    }
}

/// Stream decoder; keeps the usage counters, which arrive split over two events, and the
/// tool-use blocks seen so far.
#[derive(Debug, Default)]
pub(super) struct Decoder {
    tools: Vec<ToolBlock>,
    input: Option<u64>,
    cache_read: Option<u64>,
    cache_write: Option<u64>,
    output: Option<u64>,
}

impl Decoder {
    /// Translate one SSE event into stream items.
    pub(super) fn on_event(&mut self, ev: &SseEvent, out: &mut Vec<Item>) {
        let data = ev.data.trim();
        let Some(value) = parse_event(ev, data, out) else {
            return;
        };
        let kind = ev
            .event
            .as_deref()
            .or_else(|| value.get("type").and_then(Value::as_str))
            .unwrap_or("");
        if kind.is_empty() && value.get("choices").is_some() {
            out.push(Item::OtherProtocol(super::ProviderKind::OpenAi));
            return;
        }
        if is_anthropic_event(&value) || !kind.is_empty() && ev.event.is_some() {
            out.push(Item::Known);
        }
        match kind {
            "message_start" => {
                if let Some(u) = value.get("message").and_then(|m| m.get("usage")) {
                    self.merge_usage(u, out);
                }
            }
            "content_block_start" => self.on_block_start(&value, out),
            "content_block_delta" => self.on_block_delta(&value, out),
            "message_delta" => self.on_message_delta(&value, out),
            "content_block_stop" => self.on_block_stop(&value, out),
            "message_stop" => {
                out.push(Item::Complete);
                out.push(Item::Stop);
            }
            "error" => out.push(Item::Error(error_message(&value, data))),
            // A server that ignored `stream: true` and sent the whole message at once.
            "message" => self.on_whole_message(&value, out),
            _ => {} // ping, and whatever comes next
        }
    }

    /// `content_block_start`: a tool block is registered and its id and name sent; a text
    /// block's opening text (rarely any) is sent.
    fn on_block_start(&mut self, value: &Value, out: &mut Vec<Item>) {
        let block = value.get("content_block");
        if block.and_then(|b| b.get("type")).and_then(Value::as_str) == Some("tool_use") {
            let field = |k: &str| {
                block
                    .and_then(|b| b.get(k))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            };
            let slot = self.tools.len();
            self.tools.push(ToolBlock {
                index: value.get("index").and_then(Value::as_u64),
                slot,
                streamed: false,
                input: block
                    .and_then(|b| b.get("input"))
                    .cloned()
                    .unwrap_or(Value::Null),
            });
            out.push(Item::ToolCall {
                slot,
                id: field("id"),
                name: field("name"),
                arguments: String::new(),
            });
        }
        if let Some(t) = block
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .and_then(|b| b.get("text"))
            .and_then(Value::as_str)
        {
            if !t.is_empty() {
                out.push(Item::Text(t.to_owned()));
            }
        }
    }

    /// `content_block_delta`: a piece of a tool call's arguments, or of the text (other
    /// delta kinds, such as thinking, are skipped).
    fn on_block_delta(&mut self, value: &Value, out: &mut Vec<Item>) {
        let delta = value.get("delta");
        let delta_type = delta.and_then(|d| d.get("type")).and_then(Value::as_str);
        if delta_type == Some("input_json_delta") {
            let piece = delta
                .and_then(|d| d.get("partial_json"))
                .and_then(Value::as_str)
                .unwrap_or("");
            if let Some(block) = self.tool_block(value.get("index")) {
                block.streamed = true;
                let slot = block.slot;
                out.push(Item::ToolCall {
                    slot,
                    id: None,
                    name: None,
                    arguments: piece.to_owned(),
                });
            }
            return;
        }
        let is_text = delta_type.is_none_or(|t| t == "text_delta");
        if let Some(t) = delta.and_then(|d| d.get("text")).and_then(Value::as_str) {
            if is_text && !t.is_empty() {
                out.push(Item::Text(t.to_owned()));
            }
        }
    }

    /// `message_delta`: the stop reason and the closing usage counts.
    fn on_message_delta(&mut self, value: &Value, out: &mut Vec<Item>) {
        if let Some(r) = value
            .get("delta")
            .and_then(|d| d.get("stop_reason"))
            .and_then(Value::as_str)
        {
            if !r.is_empty() {
                out.push(Item::FinishReason(r.to_owned()));
            }
        }
        if let Some(u) = value.get("usage") {
            self.merge_usage(u, out);
        }
    }

    /// `content_block_stop`: a tool block that streamed no arguments sends its start
    /// event's `input` (or `{}`).
    fn on_block_stop(&mut self, value: &Value, out: &mut Vec<Item>) {
        if let Some(block) = self.tool_block(value.get("index")) {
            if !block.streamed {
                block.streamed = true;
                let slot = block.slot;
                let arguments = input_text(&block.input);
                out.push(Item::ToolCall {
                    slot,
                    id: None,
                    name: None,
                    arguments,
                });
            }
        }
    }

    /// A whole message sent at once: its text and tool blocks, usage, and — when it has a
    /// stop reason — the end of the reply.
    fn on_whole_message(&mut self, value: &Value, out: &mut Vec<Item>) {
        if let Some(blocks) = value.get("content").and_then(Value::as_array) {
            for b in blocks {
                match b.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        if let Some(t) = b.get("text").and_then(Value::as_str) {
                            out.push(Item::Text(t.to_owned()));
                        }
                    }
                    Some("tool_use") => self.on_whole_tool_block(b, out),
                    _ => {}
                }
            }
        }
        if let Some(u) = value.get("usage") {
            self.merge_usage(u, out);
        }
        if let Some(r) = value.get("stop_reason").and_then(Value::as_str) {
            out.push(Item::FinishReason(r.to_owned()));
            out.push(Item::Complete);
            out.push(Item::Stop);
        }
    }

    /// One `tool_use` block of a whole message: the complete call in one item.
    fn on_whole_tool_block(&mut self, b: &Value, out: &mut Vec<Item>) {
        let field = |k: &str| b.get(k).and_then(Value::as_str).map(str::to_owned);
        let slot = self.tools.len();
        self.tools.push(ToolBlock {
            index: None,
            slot,
            streamed: true,
            input: Value::Null,
        });
        out.push(Item::ToolCall {
            slot,
            id: field("id"),
            name: field("name"),
            arguments: input_text(b.get("input").unwrap_or(&Value::Null)),
        });
    }

    /// The tool block an event's `index` names (the latest tool block if it has none).
    fn tool_block(&mut self, index: Option<&Value>) -> Option<&mut ToolBlock> {
        match index.and_then(Value::as_u64) {
            Some(ix) => self.tools.iter_mut().rev().find(|b| b.index == Some(ix)),
            None => self.tools.last_mut(),
        }
    }

    fn merge_usage(&mut self, u: &Value, out: &mut Vec<Item>) {
        let n = |k: &str| u.get(k).and_then(Value::as_u64);
        self.input = n("input_tokens").or(self.input);
        self.cache_read = n("cache_read_input_tokens").or(self.cache_read);
        self.cache_write = n("cache_creation_input_tokens").or(self.cache_write);
        self.output = n("output_tokens").or(self.output);
        let input = match (self.input, self.cache_read, self.cache_write) {
            (None, None, None) => None,
            (a, b, c) => Some(a.unwrap_or(0) + b.unwrap_or(0) + c.unwrap_or(0)),
        };
        out.push(Item::Usage(Usage {
            input_tokens: input,
            output_tokens: self.output,
            cached_tokens: self.cache_read,
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{ChatMessage, ProviderKind};

    fn feed(d: &mut Decoder, event: &str, data: &str) -> Vec<Item> {
        let mut out = Vec::new();
        d.on_event(
            &SseEvent {
                event: Some(event.into()),
                data: data.into(),
                id: None,
            },
            &mut out,
        );
        out.retain(|i| *i != Item::Known);
        out
    }

    #[test]
    fn full_stream() {
        let mut d = Decoder::default();
        let mut items = Vec::new();
        for (e, data) in [
            (
                "message_start",
                r#"{"type":"message_start","message":{"id":"m","usage":{"input_tokens":20,"cache_read_input_tokens":100,"output_tokens":1}}}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            ),
            ("ping", r#"{"type":"ping"}"#),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"The "}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"orc."}}"#,
            ),
            (
                "content_block_stop",
                r#"{"type":"content_block_stop","index":0}"#,
            ),
            (
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":7}}"#,
            ),
            ("message_stop", r#"{"type":"message_stop"}"#),
        ] {
            items.extend(feed(&mut d, e, data));
        }
        let text: String = items
            .iter()
            .filter_map(|i| match i {
                Item::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(text, "The orc.");
        assert!(items.contains(&Item::FinishReason("end_turn".into())));
        assert_eq!(items[items.len() - 2..], [Item::Complete, Item::Stop]);
        let last_usage = items.iter().rev().find_map(|i| match i {
            Item::Usage(u) => Some(*u),
            _ => None,
        });
        assert_eq!(
            last_usage,
            Some(Usage {
                input_tokens: Some(120),
                output_tokens: Some(7),
                cached_tokens: Some(100)
            })
        );
    }

    #[test]
    fn tool_use_blocks_interleave_with_text() {
        let mut d = Decoder::default();
        let mut items = Vec::new();
        for (e, data) in [
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Ouch."}}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"propose","input":{}}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"hp\""}}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_2","name":"rest","input":{}}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":":-7}"}}"#,
            ),
            (
                "content_block_stop",
                r#"{"type":"content_block_stop","index":1}"#,
            ),
            (
                "content_block_stop",
                r#"{"type":"content_block_stop","index":2}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_3","name":"go","input":{"to":"Keep"}}}"#,
            ),
            (
                "content_block_stop",
                r#"{"type":"content_block_stop","index":3}"#,
            ),
            (
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"}}"#,
            ),
            ("message_stop", r#"{"type":"message_stop"}"#),
        ] {
            items.extend(feed(&mut d, e, data));
        }
        let call = |slot: usize, id: Option<&str>, name: Option<&str>, args: &str| Item::ToolCall {
            slot,
            id: id.map(str::to_owned),
            name: name.map(str::to_owned),
            arguments: args.into(),
        };
        assert_eq!(
            items,
            vec![
                Item::Text("Ouch.".into()),
                call(0, Some("toolu_1"), Some("propose"), ""),
                call(0, None, None, "{\"hp\""),
                call(1, Some("toolu_2"), Some("rest"), ""),
                call(0, None, None, ":-7}"),
                call(1, None, None, "{}"),
                call(2, Some("toolu_3"), Some("go"), ""),
                call(2, None, None, "{\"to\":\"Keep\"}"),
                Item::FinishReason("tool_use".into()),
                Item::Complete,
                Item::Stop,
            ]
        );
    }

    #[test]
    fn non_streamed_message_with_tool_use() {
        let items = feed(
            &mut Decoder::default(),
            "message",
            r#"{"type":"message","content":[{"type":"text","text":"Hm."},{"type":"tool_use","id":"t1","name":"f","input":{"a":1}}],"stop_reason":"tool_use"}"#,
        );
        assert_eq!(
            items,
            vec![
                Item::Text("Hm.".into()),
                Item::ToolCall {
                    slot: 0,
                    id: Some("t1".into()),
                    name: Some("f".into()),
                    arguments: "{\"a\":1}".into(),
                },
                Item::FinishReason("tool_use".into()),
                Item::Complete,
                Item::Stop,
            ]
        );
    }

    #[test]
    fn tools_only_when_given() {
        let cfg = LlmConfig::new(ProviderKind::Anthropic, "https://api.anthropic.com", "c");
        let mut req = ChatRequest {
            messages: vec![ChatMessage::user("hi")],
            ..ChatRequest::default()
        };
        assert!(request_body(&cfg, &req).get("tools").is_none());
        req.tools.push(crate::llm::ToolSpec {
            name: "propose_changes".into(),
            description: "Propose canon changes.".into(),
            parameters: json!({"type":"object"}),
        });
        assert_eq!(
            request_body(&cfg, &req)["tools"],
            json!([{"name":"propose_changes","description":"Propose canon changes.","input_schema":{"type":"object"}}])
        );
    }

    #[test]
    fn error_event() {
        let items = feed(
            &mut Decoder::default(),
            "error",
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        );
        assert_eq!(
            items,
            vec![Item::Error("Overloaded (overloaded_error)".into())]
        );
    }

    #[test]
    fn type_from_data_when_event_field_missing() {
        let mut out = Vec::new();
        Decoder::default().on_event(
            &SseEvent {
                data: r#"{"type":"message_stop"}"#.into(),
                ..SseEvent::default()
            },
            &mut out,
        );
        out.retain(|i| *i != Item::Known);
        assert_eq!(out, vec![Item::Complete, Item::Stop]);
    }

    #[test]
    fn openai_chunks_are_a_provider_mismatch() {
        for data in [
            r#"{"id":"x","object":"chat.completion.chunk","choices":[{"delta":{"content":"a"}}]}"#,
            "[DONE]",
        ] {
            let mut out = Vec::new();
            Decoder::default().on_event(
                &SseEvent {
                    data: data.into(),
                    ..SseEvent::default()
                },
                &mut out,
            );
            assert_eq!(
                out,
                vec![Item::OtherProtocol(crate::llm::ProviderKind::OpenAi)]
            );
        }
    }

    #[test]
    fn body_layout() {
        let cfg = LlmConfig::new(
            ProviderKind::Anthropic,
            "https://api.anthropic.com",
            "claude",
        );
        let req = ChatRequest {
            system: "You are the DM.".into(),
            messages: vec![
                ChatMessage::user("Player: a"),
                ChatMessage::assistant("b"),
                ChatMessage::user("Player: c"),
            ],
            ..ChatRequest::default()
        };
        let body = request_body(&cfg, &req);
        assert_eq!(body["system"][0]["text"], json!("You are the DM."));
        assert_eq!(
            body["messages"][0],
            json!({"role":"user","content":"Player: a"})
        );
        assert_eq!(
            body["messages"][2]["content"][0]["text"],
            json!("Player: c")
        );
        assert_eq!(body["max_tokens"], json!(1024));
        assert!(body["messages"].as_array().is_some_and(|m| m.len() == 3));
    }
}
