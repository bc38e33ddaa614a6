//! A scriptable fake LLM server on 127.0.0.1 speaking HTTP/1.1 by hand.
//!
//! Hand-written on a raw `TcpListener` rather than axum so a test controls every byte on the
//! wire: responses can be written one byte per chunk, pause before the headers or before the
//! first event, or drop the connection in the middle of a chunked body. Each test queues the
//! responses it wants (one per request, in order) and afterwards inspects every request that
//! arrived — headers and JSON body — to check what vaultdm sent.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One step of a scripted response body.
#[derive(Debug, Clone)]
pub(crate) enum Step {
    /// Write these bytes as one chunk.
    Send(Vec<u8>),
    /// Write these bytes one byte per chunk, flushing and pausing briefly after each.
    SendBytewise(Vec<u8>),
    /// Pause.
    Sleep(Duration),
    /// Write these bytes as `times` separate chunks, pausing between them; stops quietly when
    /// the client hangs up (a server that streams forever).
    Repeat(Vec<u8>, usize, Duration),
    /// Close the connection abruptly, without the terminating chunk.
    Drop,
}

/// A scripted response.
#[derive(Debug, Clone)]
pub(crate) struct Scripted {
    /// HTTP status code.
    pub status: u16,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// Pause before sending the status line.
    pub delay_headers: Duration,
    /// Body steps; a streamed (chunked) body when `chunked`, else concatenated.
    pub steps: Vec<Step>,
    /// Use chunked transfer encoding.
    pub chunked: bool,
}

impl Scripted {
    /// A 200 `text/event-stream` response with `body` as one chunk.
    pub(crate) fn sse(body: impl Into<String>) -> Self {
        Self {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            delay_headers: Duration::ZERO,
            steps: vec![Step::Send(body.into().into_bytes())],
            chunked: true,
        }
    }

    /// A 200 `text/event-stream` response sent one byte per chunk.
    pub(crate) fn sse_bytewise(body: impl Into<String>) -> Self {
        Self {
            steps: vec![Step::SendBytewise(body.into().into_bytes())],
            ..Self::sse("")
        }
    }

    /// A 200 event stream made of explicit steps.
    pub(crate) fn sse_steps(steps: Vec<Step>) -> Self {
        Self {
            steps,
            ..Self::sse("")
        }
    }

    /// A plain (non-streamed) response with a JSON body.
    pub(crate) fn json(status: u16, body: impl Into<String>) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            delay_headers: Duration::ZERO,
            steps: vec![Step::Send(body.into().into_bytes())],
            chunked: false,
        }
    }

    /// Add a header.
    pub(crate) fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Pause before the status line.
    pub(crate) fn delay_headers(mut self, d: Duration) -> Self {
        self.delay_headers = d;
        self
    }
}

/// A request as received.
#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    /// Method, e.g. `POST`.
    pub method: String,
    /// Request path.
    pub path: String,
    /// Headers, names lower-cased, in order.
    pub headers: Vec<(String, String)>,
    /// Raw body.
    pub body: Vec<u8>,
    /// The whole request (head and body) as text.
    pub raw: String,
}

impl Recorded {
    /// First header with this (case-insensitive) name.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body parsed as JSON (`Value::Null` if it is not JSON).
    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The text of the request's last message (the player's, with what vaultdm injected).
    pub(crate) fn last_message(&self) -> String {
        self.json()["messages"]
            .as_array()
            .and_then(|m| m.last())
            .and_then(|m| m["content"].as_str())
            .expect("a last message with text content")
            .to_owned()
    }
}

#[derive(Default)]
struct State {
    script: VecDeque<Scripted>,
    requests: Vec<Recorded>,
    /// Streams the client hung up on before they ended (a `Repeat` whose write failed).
    hangups: usize,
}

/// The running server; stops when dropped.
pub(crate) struct FakeLlm {
    /// Where it listens.
    pub addr: SocketAddr,
    state: Arc<Mutex<State>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeLlm {
    /// Start serving the given responses, one per request, in order. Requests beyond the
    /// script get a 500.
    pub(crate) async fn start(script: Vec<Scripted>) -> FakeLlm {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("bind 127.0.0.1:0: {e}"));
        let addr = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("local_addr: {e}"));
        let state = Arc::new(Mutex::new(State {
            script: script.into(),
            ..State::default()
        }));
        let st = state.clone();
        let task = tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                let st = st.clone();
                tokio::spawn(async move {
                    let _ = serve(sock, st).await;
                });
            }
        });
        FakeLlm { addr, state, task }
    }

    /// `http://127.0.0.1:PORT` (Anthropic-style base).
    pub(crate) fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:PORT/v1` (OpenAI-compatible base).
    pub(crate) fn base_url_v1(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// How many streams the client hung up on before they ended (the connection closed
    /// under a `Step::Repeat`): what a cancelled request looks like to a provider.
    pub(crate) fn hangups(&self) -> usize {
        self.state.lock().map(|s| s.hangups).unwrap_or(0)
    }

    /// Every request received so far.
    pub(crate) fn requests(&self) -> Vec<Recorded> {
        self.state
            .lock()
            .map(|s| s.requests.clone())
            .unwrap_or_default()
    }
}

async fn serve(mut sock: TcpStream, state: Arc<Mutex<State>>) -> std::io::Result<()> {
    sock.set_nodelay(true)?;
    let mut buf = Vec::new();
    let head_end = loop {
        let mut tmp = [0u8; 4096];
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&tmp[..n]);
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default().to_owned();
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let path = parts.next().unwrap_or_default().to_owned();
    let headers: Vec<(String, String)> = lines
        .filter(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end..].to_vec();
    while body.len() < len {
        let mut tmp = [0u8; 4096];
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&tmp[..n]);
    }
    let raw = format!("{head}{}", String::from_utf8_lossy(&body));
    let scripted = {
        let mut st = state
            .lock()
            .map_err(|_| std::io::Error::other("poisoned"))?;
        st.requests.push(Recorded {
            method,
            path,
            headers,
            body,
            raw,
        });
        st.script.pop_front()
    };
    let scripted = scripted.unwrap_or_else(|| {
        Scripted::json(
            500,
            r#"{"error":{"message":"fake server: no scripted response left"}}"#,
        )
    });

    tokio::time::sleep(scripted.delay_headers).await;
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        scripted.status,
        reason(scripted.status)
    );
    for (k, v) in &scripted.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("connection: close\r\n");
    if scripted.chunked {
        head.push_str("transfer-encoding: chunked\r\n\r\n");
        sock.write_all(head.as_bytes()).await?;
        sock.flush().await?;
        for step in scripted.steps {
            match step {
                Step::Send(bytes) => {
                    if !bytes.is_empty() {
                        write_chunk(&mut sock, &bytes).await?;
                    }
                }
                Step::SendBytewise(bytes) => {
                    for b in bytes {
                        write_chunk(&mut sock, &[b]).await?;
                        tokio::time::sleep(Duration::from_micros(100)).await;
                    }
                }
                Step::Sleep(d) => tokio::time::sleep(d).await,
                Step::Repeat(bytes, times, pause) => {
                    for _ in 0..times {
                        if write_chunk(&mut sock, &bytes).await.is_err() {
                            if let Ok(mut st) = state.lock() {
                                st.hangups += 1;
                            }
                            return Ok(());
                        }
                        if !pause.is_zero() {
                            tokio::time::sleep(pause).await;
                        }
                    }
                }
                Step::Drop => {
                    // Close mid-body: no terminating chunk.
                    return Ok(());
                }
            }
        }
        sock.write_all(b"0\r\n\r\n").await?;
    } else {
        let mut body = Vec::new();
        for step in scripted.steps {
            match step {
                Step::Send(b) | Step::SendBytewise(b) => body.extend(b),
                Step::Repeat(b, times, _) => {
                    for _ in 0..times {
                        body.extend_from_slice(&b);
                    }
                }
                Step::Sleep(d) => tokio::time::sleep(d).await,
                Step::Drop => return Ok(()),
            }
        }
        head.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
        sock.write_all(head.as_bytes()).await?;
        sock.write_all(&body).await?;
    }
    sock.flush().await?;
    sock.shutdown().await?;
    Ok(())
}

async fn write_chunk(sock: &mut TcpStream, bytes: &[u8]) -> std::io::Result<()> {
    sock.write_all(format!("{:x}\r\n", bytes.len()).as_bytes())
        .await?;
    sock.write_all(bytes).await?;
    sock.write_all(b"\r\n").await?;
    sock.flush().await
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Status",
    }
}

/// One OpenAI-compatible stream event carrying `text`.
pub(crate) fn openai_chunk(text: &str) -> String {
    format!(
        "data: {}\n\n",
        serde_json::json!({"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":text},"finish_reason":null}]})
    )
}

/// An OpenAI-style chat.completion.chunk stream: one chunk per token, then optionally a
/// finish chunk, a usage chunk and `[DONE]`.
pub(crate) fn openai_sse(tokens: &[&str], finish: Option<&str>, usage: bool, done: bool) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "data: {}\n\n",
        serde_json::json!({"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]})
    ));
    for t in tokens {
        s.push_str(&format!(
            "data: {}\n\n",
            serde_json::json!({"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":t},"finish_reason":null}]})
        ));
    }
    if let Some(f) = finish {
        s.push_str(&format!(
            "data: {}\n\n",
            serde_json::json!({"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":f}]})
        ));
    }
    if usage {
        s.push_str(&format!(
            "data: {}\n\n",
            serde_json::json!({"id":"c1","choices":[],"usage":{"prompt_tokens":42,"completion_tokens":7,"total_tokens":49,"prompt_tokens_details":{"cached_tokens":32}}})
        ));
    }
    if done {
        s.push_str("data: [DONE]\n\n");
    }
    s
}

/// An Anthropic Messages event stream; `stop` adds `message_delta` + `message_stop`.
pub(crate) fn anthropic_sse(tokens: &[&str], stop: bool) -> String {
    anthropic_sse_reason(tokens, stop.then_some("end_turn"))
}

/// An Anthropic Messages stream ending with `stop_reason` (and `message_stop`) when given.
pub(crate) fn anthropic_sse_reason(tokens: &[&str], stop_reason: Option<&str>) -> String {
    let stop = stop_reason.is_some();
    let reason = stop_reason.unwrap_or("end_turn");
    let mut s = String::new();
    let ev = |s: &mut String, name: &str, data: Value| {
        s.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    };
    ev(
        &mut s,
        "message_start",
        serde_json::json!({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-test","stop_reason":null,"usage":{"input_tokens":30,"cache_read_input_tokens":100,"cache_creation_input_tokens":0,"output_tokens":1}}}),
    );
    ev(
        &mut s,
        "content_block_start",
        serde_json::json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
    );
    ev(&mut s, "ping", serde_json::json!({"type":"ping"}));
    for t in tokens {
        ev(
            &mut s,
            "content_block_delta",
            serde_json::json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":t}}),
        );
    }
    if stop {
        ev(
            &mut s,
            "content_block_stop",
            serde_json::json!({"type":"content_block_stop","index":0}),
        );
        ev(
            &mut s,
            "message_delta",
            serde_json::json!({"type":"message_delta","delta":{"stop_reason":reason,"stop_sequence":null},"usage":{"output_tokens":9}}),
        );
        ev(
            &mut s,
            "message_stop",
            serde_json::json!({"type":"message_stop"}),
        );
    }
    s
}

/// One OpenAI-compatible stream event carrying a `tool_calls` piece; `None` fields are left
/// out (servers differ in which they repeat).
pub(crate) fn openai_tool_chunk(
    index: Option<u64>,
    id: Option<&str>,
    name: Option<&str>,
    arguments: Option<&str>,
) -> String {
    let mut call = serde_json::json!({});
    if let Some(i) = index {
        call["index"] = i.into();
    }
    if let Some(id) = id {
        call["id"] = id.into();
        call["type"] = "function".into();
    }
    let mut function = serde_json::json!({});
    if let Some(n) = name {
        function["name"] = n.into();
    }
    if let Some(a) = arguments {
        function["arguments"] = a.into();
    }
    call["function"] = function;
    format!(
        "data: {}\n\n",
        serde_json::json!({"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[call]},"finish_reason":null}]})
    )
}

/// One OpenAI-compatible stream event with only a `finish_reason`.
pub(crate) fn openai_finish(reason: &str) -> String {
    format!(
        "data: {}\n\n",
        serde_json::json!({"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":reason}]})
    )
}

/// One Anthropic Messages event: `event: {type}` plus the JSON `data` (whose `type` it takes).
pub(crate) fn anthropic_event(data: Value) -> String {
    let name = data
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("unknown")
        .to_owned();
    format!("event: {name}\ndata: {data}\n\n")
}
