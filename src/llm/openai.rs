//! The OpenAI-compatible Chat Completions protocol: request body and a tolerant stream decoder.
//!
//! "OpenAI-compatible" servers differ in the details (Ollama, llama.cpp, vLLM, LM Studio,
//! OpenRouter all have quirks), so the decoder reads JSON loosely: unknown fields are ignored,
//! `usage` may be missing or null, `finish_reason` may be `""` or null on every chunk,
//! `choices` may be empty (the final usage chunk), and a server that ignores `stream: true`
//! and answers with one plain JSON completion is understood too.
//!
//! Tool calls arrive as `choices[0].delta.tool_calls[]` pieces keyed by `index`: the first
//! piece of a call carries `id` and `function.name`, later ones `function.arguments` text.
//! Servers differ here as well — some repeat the id on every piece, send the whole call in one
//! piece, omit `index`, or send `arguments` as a JSON object — so [`Decoder`] maps each piece
//! to a call slot by index, else by id, else to the call in progress.

use serde_json::{json, Value};

use super::client::Item;
use super::sse::SseEvent;
use super::{ChatRequest, LlmConfig, Usage};

/// Build the JSON body for `POST {base}/chat/completions`.
///
/// The system prompt becomes the first message (role `system`). OpenAI's own API gets
/// `max_completion_tokens` (its newer models reject `max_tokens`); every other server gets the
/// widely supported `max_tokens`. `stream_options.include_usage` asks for token counts.
pub(super) fn request_body(cfg: &LlmConfig, req: &ChatRequest) -> Value {
    let mut messages = Vec::with_capacity(req.messages.len() + 1);
    if !req.system.is_empty() {
        messages.push(json!({"role": "system", "content": req.system}));
    }
    for m in &req.messages {
        messages.push(json!({"role": m.role, "content": m.content}));
    }
    let mut body = json!({
        "model": cfg.model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    let limit_field = if cfg.base_url.contains("api.openai.com") {
        "max_completion_tokens"
    } else {
        "max_tokens"
    };
    body[limit_field] = json!(cfg.max_tokens);
    for (k, v) in &cfg.extra {
        body[k.as_str()] = v.clone();
    }
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                }})
            })
            .collect();
        body["tools"] = Value::Array(tools);
    }
    body
}

/// Stream decoder state: the tool calls seen so far, to map each piece to its call.
#[derive(Debug, Default)]
pub(super) struct Decoder {
    /// Per call slot: the protocol's `index` and the call id, where known.
    calls: Vec<(Option<u64>, Option<String>)>,
    /// The slot of the latest piece: where a piece naming neither index nor id belongs.
    current: Option<usize>,
}

impl Decoder {
    /// Translate one SSE event into stream items.
    pub(super) fn on_event(&mut self, ev: &SseEvent, out: &mut Vec<Item>) {
        let data = ev.data.trim();
        if data.is_empty() {
            return;
        }
        if data == "[DONE]" {
            out.push(Item::Complete);
            out.push(Item::Stop);
            return;
        }
        let value: Value = match serde_json::from_str(data) {
            Ok(v) => v,
            Err(e) => {
                if ev.event.as_deref() == Some("error") {
                    out.push(Item::Error(data.to_owned()));
                } else {
                    out.push(Item::Warning(format!(
                        "skipped an unreadable stream event ({e}): {}",
                        super::client::excerpt(data)
                    )));
                }
                return;
            }
        };
        if let Some(msg) = error_message(&value) {
            out.push(Item::Error(msg));
            return;
        }
        if ev.event.as_deref() == Some("error") {
            out.push(Item::Error(super::client::excerpt(data)));
            return;
        }
        if value.get("choices").is_none() && super::anthropic::is_anthropic_event(&value) {
            out.push(Item::OtherProtocol(super::ProviderKind::Anthropic));
            return;
        }
        if value.get("choices").is_some() {
            out.push(Item::Known);
        }
        let mut finish = None;
        if let Some(choices) = value.get("choices").and_then(Value::as_array) {
            for choice in choices {
                if choice.get("index").and_then(Value::as_u64).unwrap_or(0) != 0 {
                    continue;
                }
                let text = choice
                    .get("delta")
                    .and_then(|d| d.get("content"))
                    .or_else(|| choice.get("message").and_then(|m| m.get("content")))
                    .and_then(Value::as_str);
                if let Some(t) = text {
                    if !t.is_empty() {
                        out.push(Item::Text(t.to_owned()));
                    }
                }
                let calls = choice
                    .get("delta")
                    .and_then(|d| d.get("tool_calls"))
                    .filter(|c| !c.is_null())
                    .or_else(|| choice.get("message").and_then(|m| m.get("tool_calls")))
                    .and_then(Value::as_array);
                for call in calls.into_iter().flatten() {
                    self.on_tool_call(call, out);
                }
                if let Some(r) = choice.get("finish_reason").and_then(Value::as_str) {
                    if !r.is_empty() {
                        finish = Some(r.to_owned());
                    }
                }
            }
        }
        if let Some(u) = value.get("usage").and_then(parse_usage) {
            out.push(Item::Usage(u));
        }
        if let Some(r) = finish {
            out.push(Item::FinishReason(r));
            out.push(Item::Complete);
        }
    }
}

impl Decoder {
    /// One `tool_calls[]` piece: find (or open) its slot and pass on what it carries.
    fn on_tool_call(&mut self, call: &Value, out: &mut Vec<Item>) {
        let index = call.get("index").and_then(Value::as_u64);
        let id = call
            .get("id")
            .and_then(Value::as_str)
            .filter(|i| !i.is_empty())
            .map(str::to_owned);
        let function = call.get("function");
        let name = function
            .and_then(|f| f.get("name"))
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .map(str::to_owned);
        let arguments = match function.and_then(|f| f.get("arguments")) {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(a)) => a.clone(),
            // Some servers send the arguments as an object rather than JSON text.
            Some(other) => other.to_string(),
        };
        let slot = self.slot(index, id.as_deref());
        out.push(Item::ToolCall {
            slot,
            id,
            name,
            arguments,
        });
    }

    /// The slot of a piece: by `index` (unless it names a different id than the call at that
    /// index: some servers send every call as index 0), else by id, else the call in progress.
    fn slot(&mut self, index: Option<u64>, id: Option<&str>) -> usize {
        let same_id = |known: &Option<String>| match (known.as_deref(), id) {
            (Some(k), Some(i)) => k == i,
            _ => true,
        };
        let found = match index {
            Some(ix) => self
                .calls
                .iter()
                .rposition(|(i, known)| *i == Some(ix) && same_id(known)),
            None => match id {
                Some(id) => self
                    .calls
                    .iter()
                    .position(|(_, known)| known.as_deref() == Some(id)),
                None => self.current,
            },
        };
        let slot = match found {
            Some(slot) => {
                if let (Some(id), None) = (id, &self.calls[slot].1) {
                    self.calls[slot].1 = Some(id.to_owned());
                }
                slot
            }
            None => {
                self.calls.push((index, id.map(str::to_owned)));
                self.calls.len() - 1
            }
        };
        self.current = Some(slot);
        slot
    }
}

/// `{"error": {"message": ...}}` or `{"error": "..."}` as sent mid-stream by several servers.
fn error_message(value: &Value) -> Option<String> {
    let err = value.get("error")?;
    if err.is_null() {
        return None;
    }
    Some(
        err.get("message")
            .and_then(Value::as_str)
            .or_else(|| err.as_str())
            .map(str::to_owned)
            .unwrap_or_else(|| err.to_string()),
    )
}

fn parse_usage(u: &Value) -> Option<Usage> {
    if !u.is_object() {
        return None;
    }
    let n = |v: Option<&Value>| v.and_then(Value::as_u64);
    Some(Usage {
        input_tokens: n(u.get("prompt_tokens")).or_else(|| n(u.get("input_tokens"))),
        output_tokens: n(u.get("completion_tokens")).or_else(|| n(u.get("output_tokens"))),
        cached_tokens: n(u
            .get("prompt_tokens_details")
            .and_then(|d| d.get("cached_tokens")))
        .or_else(|| n(u.get("prompt_cache_hit_tokens"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{ChatMessage, ProviderKind};
    use rstest::rstest;

    fn decode(data: &str) -> Vec<Item> {
        let mut out = Vec::new();
        Decoder::default().on_event(
            &SseEvent {
                data: data.into(),
                ..SseEvent::default()
            },
            &mut out,
        );
        out.retain(|i| *i != Item::Known);
        out
    }

    #[test]
    fn anthropic_events_are_a_provider_mismatch() {
        let out = decode(r#"{"type":"message_start","message":{"id":"m"}}"#);
        assert_eq!(
            out,
            vec![Item::OtherProtocol(crate::llm::ProviderKind::Anthropic)]
        );
    }

    #[rstest]
    #[case::content(r#"{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}"#, vec![Item::Text("Hi".into())])]
    #[case::empty_finish(r#"{"choices":[{"delta":{"content":"Hi"},"finish_reason":""}]}"#, vec![Item::Text("Hi".into())])]
    #[case::role_only(r#"{"choices":[{"delta":{"role":"assistant"}}]}"#, vec![])]
    #[case::empty_choices(r#"{"choices":[],"usage":null}"#, vec![])]
    #[case::unknown_fields(r#"{"id":"x","object":"chat.completion.chunk","system_fingerprint":"f","choices":[{"delta":{"content":"a","reasoning_content":"hm"},"logprobs":null}]}"#, vec![Item::Text("a".into())])]
    #[case::finish(r#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#, vec![Item::FinishReason("stop".into()), Item::Complete])]
    #[case::usage(r#"{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":8}}}"#,
        vec![Item::Usage(Usage{input_tokens:Some(10),output_tokens:Some(3),cached_tokens:Some(8)})])]
    #[case::done("[DONE]", vec![Item::Complete, Item::Stop])]
    #[case::error(r#"{"error":{"message":"overloaded","code":502}}"#, vec![Item::Error("overloaded".into())])]
    #[case::error_string(r#"{"error":"boom"}"#, vec![Item::Error("boom".into())])]
    #[case::null_error(r#"{"error":null,"choices":[{"delta":{"content":"x"}}]}"#, vec![Item::Text("x".into())])]
    #[case::non_streamed(r#"{"choices":[{"message":{"role":"assistant","content":"Whole"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1}}"#,
        vec![Item::Text("Whole".into()), Item::Usage(Usage{input_tokens:Some(1),..Usage::default()}), Item::FinishReason("stop".into()), Item::Complete])]
    #[case::other_index(r#"{"choices":[{"index":1,"delta":{"content":"no"}}]}"#, vec![])]
    fn decodes(#[case] data: &str, #[case] expected: Vec<Item>) {
        assert_eq!(decode(data), expected);
    }

    /// Feed several events to one decoder; `Known` items dropped.
    fn decode_all(events: &[&str]) -> Vec<Item> {
        let mut d = Decoder::default();
        let mut out = Vec::new();
        for data in events {
            d.on_event(
                &SseEvent {
                    data: (*data).into(),
                    ..SseEvent::default()
                },
                &mut out,
            );
        }
        out.retain(|i| *i != Item::Known);
        out
    }

    fn call(slot: usize, id: Option<&str>, name: Option<&str>, args: &str) -> Item {
        Item::ToolCall {
            slot,
            id: id.map(str::to_owned),
            name: name.map(str::to_owned),
            arguments: args.into(),
        }
    }

    #[test]
    fn tool_call_pieces_by_index() {
        let items = decode_all(&[
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"propose","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"hp\":"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","function":{"name":"move","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"-7}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        ]);
        assert_eq!(
            items,
            vec![
                call(0, Some("call_a"), Some("propose"), ""),
                call(0, None, None, "{\"hp\":"),
                call(1, Some("call_b"), Some("move"), "{}"),
                call(0, None, None, "-7}"),
                Item::FinishReason("tool_calls".into()),
                Item::Complete,
            ]
        );
    }

    #[test]
    fn tool_call_pieces_without_index() {
        // No `index` at all: by id, else the call in progress.
        let items = decode_all(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"g","arguments":"[1"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"arguments":" "}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"]"}}]}}]}"#,
        ]);
        let slots: Vec<usize> = items
            .iter()
            .filter_map(|i| match i {
                Item::ToolCall { slot, .. } => Some(*slot),
                _ => None,
            })
            .collect();
        assert_eq!(slots, vec![0, 0, 1, 0, 0]);
    }

    #[test]
    fn every_call_as_index_zero_with_its_own_id() {
        // Some servers number every call 0 but give each its id; a repeated id stays put.
        let items = decode_all(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"g","arguments":"{"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"b","function":{"arguments":"}"}}]}}]}"#,
        ]);
        let slots: Vec<usize> = items
            .iter()
            .filter_map(|i| match i {
                Item::ToolCall { slot, .. } => Some(*slot),
                _ => None,
            })
            .collect();
        assert_eq!(slots, vec![0, 1, 1]);
    }

    #[test]
    fn non_streamed_tool_calls_and_object_arguments() {
        let items = decode_all(&[
            r#"{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"propose","arguments":"{\"a\":1}"}},{"id":"c2","type":"function","function":{"name":"move","arguments":{"to":"Keep"}}}]},"finish_reason":"tool_calls"}]}"#,
        ]);
        assert_eq!(
            items,
            vec![
                call(0, Some("c1"), Some("propose"), "{\"a\":1}"),
                call(1, Some("c2"), Some("move"), "{\"to\":\"Keep\"}"),
                Item::FinishReason("tool_calls".into()),
                Item::Complete,
            ]
        );
    }

    #[test]
    fn tools_only_when_given() {
        let cfg = LlmConfig::new(ProviderKind::OpenAi, "http://localhost:11434/v1", "m");
        let mut req = ChatRequest {
            messages: vec![ChatMessage::user("hi")],
            ..ChatRequest::default()
        };
        assert!(request_body(&cfg, &req).get("tools").is_none());
        req.tools.push(crate::llm::ToolSpec {
            name: "propose_changes".into(),
            description: "Propose canon changes.".into(),
            parameters: json!({"type":"object","properties":{}}),
        });
        let body = request_body(&cfg, &req);
        assert_eq!(
            body["tools"],
            json!([{"type":"function","function":{
                "name":"propose_changes",
                "description":"Propose canon changes.",
                "parameters":{"type":"object","properties":{}}
            }}])
        );
        assert!(body.get("tool_choice").is_none());
    }

    #[test]
    fn garbage_is_a_warning_not_a_crash() {
        let items = decode("{not json");
        assert!(matches!(&items[..], [Item::Warning(w)] if w.contains("unreadable")));
    }

    #[test]
    fn body_layout() {
        let cfg = LlmConfig::new(
            ProviderKind::OpenAi,
            "http://localhost:11434/v1",
            "llama3.1",
        );
        let req = ChatRequest {
            system: "You are the DM.".into(),
            messages: vec![ChatMessage::user("Player: hi")],
            ..ChatRequest::default()
        };
        let body = request_body(&cfg, &req);
        assert_eq!(
            body["messages"][0],
            json!({"role":"system","content":"You are the DM."})
        );
        assert_eq!(
            body["messages"][1],
            json!({"role":"user","content":"Player: hi"})
        );
        assert_eq!(body["stream"], json!(true));
        assert_eq!(body["max_tokens"], json!(1024));
        let official = LlmConfig::new(ProviderKind::OpenAi, "https://api.openai.com/v1", "gpt-4o");
        assert_eq!(
            request_body(&official, &req)["max_completion_tokens"],
            json!(1024)
        );
        let no_system = ChatRequest {
            system: String::new(),
            ..req
        };
        assert_eq!(
            request_body(&cfg, &no_system)["messages"][0]["role"],
            json!("user")
        );
    }
}
