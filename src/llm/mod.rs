//! Talking to the LLM Dungeon Master: providers, streaming, prompts and settings.
//!
//! vaultdm speaks two wire protocols, because together they cover nearly every way a GM runs
//! a model: the OpenAI-compatible Chat Completions API (OpenAI itself, and local servers —
//! Ollama, LM Studio, llama.cpp, vLLM — plus routers like OpenRouter) and the Anthropic
//! Messages API. Both stream their reply as Server-Sent Events, decoded by our own small
//! [`sse`] decoder and a tolerant per-protocol decoder that ignores fields it does not know.
//!
//! The central promise is honesty about what arrived: a [`Reply`] is `complete` only when the
//! protocol's end event was seen. A stream that stops early yields the text received so far,
//! marked with a [`CutOff`] reason — streamed text is never thrown away, whether the GM pressed
//! Ctrl-C, the connection dropped or the provider reported an error mid-reply (then the
//! partial reply rides on the [`LlmError`]).
//!
//! The API key lives in an [`ApiKey`], whose `Debug` and `Display` only ever show a masked
//! form; it is sent in the auth header and nowhere else.
//!
//! Tool calls carry write-back: the DM may propose canon changes (an NPC takes damage, the
//! party moves, a day passes) as structured data beside its prose. A [`ChatRequest`] lists
//! [`ToolSpec`]s (sent as OpenAI `function` tools or Anthropic tools, with no `tool_choice`:
//! the model decides); the calls stream back in pieces and end up in [`Reply::tool_calls`],
//! each [`ToolCall`]'s `arguments` the raw JSON text as the model wrote it. A reply that ends
//! in `tool_calls` / `tool_use` is complete; a cut-off one keeps the calls that started, with
//! whatever part of their arguments arrived (maybe not valid JSON — the consumer decides). For
//! models and servers without tool support, [`fence`] finds proposals the model was told to
//! write in a ```` ```vaultdm-changes ```` fenced block, both in a whole reply
//! ([`fence::split_fenced`]) and while it streams ([`fence::FenceFilter`], which keeps the
//! block off the player's screen without delaying ordinary text).
//!
//! Submodules: [`prompt`] lays out the request (system prompt, trimmed history, injected
//! context; token counts come from the caller, e.g. [`crate::tokens::count`]), [`settings`]
//! resolves provider/model/key with provenance, [`sse`] decodes event streams, [`fence`] handles
//! `vaultdm-changes` blocks.

mod anthropic;
mod client;
mod error;
pub(crate) mod fence;
mod openai;
pub mod prompt;
pub(crate) mod settings;
pub(crate) mod sse;

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use client::{stream_chat, LlmClient, Notifier};
pub use error::{LlmError, CONFIGURE_HELP};

/// Which wire protocol to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// OpenAI-compatible Chat Completions (`POST {base}/chat/completions`): OpenAI, Ollama,
    /// LM Studio, llama.cpp, vLLM, OpenRouter, ...
    #[serde(rename = "openai")]
    OpenAi,
    /// Anthropic Messages (`POST {base}/v1/messages`).
    Anthropic,
}

impl ProviderKind {
    /// The name used in flags, environment variables and config files.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
        }
    }

    /// The provider's own public endpoint, used when no base URL is configured.
    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "https://api.openai.com/v1",
            ProviderKind::Anthropic => "https://api.anthropic.com",
        }
    }

    /// The environment variable conventionally holding this provider's key.
    pub fn default_key_var(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "OPENAI_API_KEY",
            ProviderKind::Anthropic => "ANTHROPIC_API_KEY",
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Error for an unrecognised provider name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown provider `{0}`: use `openai` (also for Ollama, LM Studio, llama.cpp, vLLM, OpenRouter) or `anthropic`")]
pub struct UnknownProvider(pub String);

impl FromStr for ProviderKind {
    type Err = UnknownProvider;

    /// Accepts `openai` (and the aliases `openai-compatible`, `ollama`, `lmstudio`,
    /// `llamacpp`, `vllm`, `openrouter`) and `anthropic` (alias `claude`), case-insensitively.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s
            .trim()
            .to_ascii_lowercase()
            .replace(['_', ' '], "-")
            .as_str()
        {
            "openai" | "openai-compatible" | "oai" | "ollama" | "lmstudio" | "lm-studio"
            | "llamacpp" | "llama.cpp" | "llama-cpp" | "vllm" | "openrouter" => {
                Ok(ProviderKind::OpenAi)
            }
            "anthropic" | "claude" => Ok(ProviderKind::Anthropic),
            _ => Err(UnknownProvider(s.to_owned())),
        }
    }
}

/// A secret API key. `Debug` and `Display` print a masked form such as `sk-…abcd`; the
/// secret itself is only handed to the HTTP layer.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey {
    secret: String,
    source_var: Option<String>,
}

impl ApiKey {
    /// Wrap a secret; `source_var` names the environment variable it came from (used in
    /// error messages such as "check the key in $OPENAI_API_KEY").
    pub fn new(secret: impl Into<String>, source_var: Option<String>) -> Self {
        Self {
            secret: secret.into().trim().to_owned(),
            source_var,
        }
    }

    /// The environment variable the key was read from, if known.
    pub fn source_var(&self) -> Option<&str> {
        self.source_var.as_deref()
    }

    /// A masked rendering safe for logs: first three and last four characters of keys long
    /// enough for that to reveal nothing useful, otherwise just `…`.
    pub fn masked(&self) -> String {
        crate::secrets::mask(&self.secret)
    }

    /// The secret, for the HTTP layer only.
    pub(crate) fn expose(&self) -> &str {
        &self.secret
    }

    /// Replace every occurrence of the secret in `text` by its masked form (servers
    /// sometimes echo what they were sent).
    pub(crate) fn scrub(&self, text: &str) -> String {
        if self.secret.len() < 4 {
            return text.to_owned();
        }
        text.replace(&self.secret, &self.masked())
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiKey")
            .field("masked", &self.masked())
            .field("source_var", &self.source_var)
            .finish()
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.masked())?;
        if let Some(var) = &self.source_var {
            write!(f, " (from ${var})")?;
        }
        Ok(())
    }
}

/// The three timeouts of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Establishing the TCP/TLS connection.
    pub connect: Duration,
    /// From sending the request until the first piece of reply text (covers the response
    /// headers, model loading and prompt processing; keep-alive comments do not count).
    pub first_token: Duration,
    /// Longest silence allowed between two received chunks once text has started.
    pub idle: Duration,
}

impl Default for Timeouts {
    /// 10 s connect, 120 s to the first token (local models may need to load), 60 s idle.
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(10),
            first_token: Duration::from_secs(120),
            idle: Duration::from_secs(60),
        }
    }
}

/// Caps on one reply, so a server that streams forever (or ignores `max_tokens`) cannot
/// grow memory or the session log without bound. What arrived before a cap is kept and the
/// reply is marked [`CutOff::TooLong`] or [`CutOff::Deadline`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplyLimits {
    /// Most characters kept from one reply.
    pub max_chars: usize,
    /// Most tokens kept from one reply: counted as stream deltas (servers send about one
    /// token per delta) or characters / 4, whichever is larger.
    pub max_tokens: usize,
    /// Longest a whole reply may take, from sending the request to the end event.
    pub deadline: Duration,
}

impl ReplyLimits {
    /// Defaults for a given `max_tokens`: 4x it in tokens (at least 8,192), 8 characters per
    /// capped token, and a 10-minute deadline — far above any reply the model was asked for.
    pub fn for_max_tokens(max_tokens: u32) -> Self {
        let tokens = (max_tokens as usize).saturating_mul(4).max(8192);
        Self {
            max_chars: tokens.saturating_mul(8),
            max_tokens: tokens,
            deadline: Duration::from_secs(600),
        }
    }
}

impl Default for ReplyLimits {
    fn default() -> Self {
        Self::for_max_tokens(LlmConfig::DEFAULT_MAX_TOKENS)
    }
}

/// Bounded exponential backoff for 429 and 5xx answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (so `max_retries + 1` requests at most).
    pub max_retries: u32,
    /// Delay before the first retry; doubled for each further one.
    pub base_delay: Duration,
    /// Cap on the computed exponential delay.
    pub max_delay: Duration,
    /// Longest server-requested `Retry-After` vaultdm waits for; a longer one ends the
    /// request at once with the time the server named.
    pub retry_after_cap: Duration,
}

impl Default for RetryPolicy {
    /// 3 retries, 0.5 s, 1 s, 2 s … capped at 8 s; `Retry-After` honoured up to 2 minutes.
    fn default() -> Self {
        Self {
            max_retries: 3,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(8),
            retry_after_cap: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (0-based): the server's `Retry-After` if given,
    /// else `base_delay * 2^retry` capped at `max_delay`. `None` when the server asks for
    /// more than `retry_after_cap`: not worth holding the table for.
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Option<Duration> {
        if let Some(ra) = retry_after {
            return (ra <= self.retry_after_cap).then_some(ra);
        }
        let factor = 2u32.saturating_pow(retry.min(20));
        Some(self.base_delay.saturating_mul(factor).min(self.max_delay))
    }
}

/// Something the GM should see while a request waits (a rate limit, a retry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// The server answered 429/5xx; vaultdm waits before trying again.
    Waiting {
        /// HTTP status that caused the wait.
        status: u16,
        /// How long.
        wait: Duration,
        /// Wall-clock time the retry goes out.
        until: chrono::DateTime<chrono::Local>,
        /// The retry about to be made (1-based).
        retry: u32,
        /// Retries allowed in all.
        max_retries: u32,
    },
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Notice::Waiting {
                status,
                wait,
                until,
                retry,
                max_retries,
            } => {
                let why = if *status == 429 {
                    "the provider is rate-limiting us (HTTP 429)".to_string()
                } else {
                    format!("the provider failed with HTTP {status}")
                };
                write!(
                    f,
                    "{why}; waiting {}s, until {}, then retry {retry} of {max_retries} (Ctrl-C to stop)",
                    wait.as_secs_f64().ceil() as u64,
                    until.format("%H:%M:%S")
                )
            }
        }
    }
}

/// Everything needed to talk to one model. Build it by hand or with
/// [`settings::LlmSettings::to_config`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LlmConfig {
    /// Wire protocol.
    pub provider: ProviderKind,
    /// Base URL, e.g. `http://localhost:11434/v1` or `https://api.anthropic.com`.
    pub base_url: String,
    /// Model name as the server knows it.
    pub model: String,
    /// Key, if the server needs one (local servers usually do not).
    pub api_key: Option<ApiKey>,
    /// Connect, first-token and idle timeouts.
    pub timeouts: Timeouts,
    /// Backoff for rate limits and server errors.
    pub retry: RetryPolicy,
    /// Upper bound on the reply length, in tokens (sent to the provider).
    pub max_tokens: u32,
    /// Caps vaultdm itself enforces on a reply, whatever the provider does.
    pub limits: ReplyLimits,
    /// More request body fields, sent as given in the provider's own names (`temperature`,
    /// `top_p`, `stop` / `stop_sequences`, …): what `vaultdm serve` passes on from a front end.
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl LlmConfig {
    /// Default reply length cap.
    pub const DEFAULT_MAX_TOKENS: u32 = 1024;

    /// A config with default timeouts, retries and `max_tokens`, and no key.
    pub fn new(
        provider: ProviderKind,
        base_url: impl Into<String>,
        model: impl Into<String>,
    ) -> Self {
        Self {
            provider,
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            timeouts: Timeouts::default(),
            retry: RetryPolicy::default(),
            max_tokens: Self::DEFAULT_MAX_TOKENS,
            limits: ReplyLimits::default(),
            extra: serde_json::Map::new(),
        }
    }

    /// The URL requests are POSTed to: `{base}/chat/completions` for OpenAI-compatible
    /// servers, `{base}/v1/messages` for Anthropic. A base that already ends in the endpoint
    /// path (or, for Anthropic, in `/v1`) is accepted as is.
    pub fn endpoint(&self) -> String {
        let base = self.base_url.trim().trim_end_matches('/');
        match self.provider {
            ProviderKind::OpenAi => {
                if base.ends_with("/chat/completions") {
                    base.to_owned()
                } else {
                    format!("{base}/chat/completions")
                }
            }
            ProviderKind::Anthropic => {
                if base.ends_with("/v1/messages") {
                    base.to_owned()
                } else if base.ends_with("/v1") {
                    format!("{base}/messages")
                } else {
                    format!("{base}/v1/messages")
                }
            }
        }
    }
}

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The GM/players (carries injected context).
    User,
    /// The model, as Dungeon Master.
    Assistant,
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// Speaker.
    pub role: Role,
    /// Text.
    pub content: String,
}

impl ChatMessage {
    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: content.into(),
        }
    }

    /// An assistant message.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// A provider-neutral request: the system prompt plus alternating messages ending with a
/// user message. Build it with [`prompt::build_prompt`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ChatRequest {
    /// System prompt (OpenAI: first message with role `system`; Anthropic: top-level
    /// `system`). Empty means none.
    pub system: String,
    /// The conversation, oldest first.
    pub messages: Vec<ChatMessage>,
    /// Tools the model may call alongside its prose (write-back proposals). Empty means
    /// none, and then the request carries no `tools` field at all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSpec>,
}

/// A tool the model may call: sent as an OpenAI `function` tool or an Anthropic tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The name the model calls it by (`[a-zA-Z0-9_-]`, at most 64 characters for both
    /// providers).
    pub name: String,
    /// What the tool is for, in words the model reads.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: serde_json::Value,
}

/// One tool call the model made, as it arrived.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's call id (`call_…`, `toolu_…`); empty if the server sent none.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The raw JSON text of the arguments, concatenated from the streamed pieces. In a
    /// cut-off reply it may be unfinished (invalid JSON); it is kept as it arrived.
    pub arguments: String,
}

/// Token accounting reported by the provider; every field is optional because many
/// OpenAI-compatible servers omit some or all of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens, including cached ones (Anthropic: input + cache read + cache write).
    pub input_tokens: Option<u64>,
    /// Reply tokens.
    pub output_tokens: Option<u64>,
    /// Prompt tokens served from the provider's prompt cache.
    pub cached_tokens: Option<u64>,
}

/// Why a reply is incomplete.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CutOff {
    /// The GM cancelled (Ctrl-C).
    Interrupted,
    /// The stream closed cleanly but without the protocol's end event.
    EndedEarly,
    /// The stream went silent past the idle timeout.
    IdleTimeout,
    /// The connection broke mid-stream.
    ConnectionLost,
    /// The provider sent an error event mid-stream.
    ProviderError,
    /// The model stopped at its token limit (`finish_reason: "length"`, Anthropic
    /// `stop_reason: "max_tokens"`): the text likely ends mid-sentence.
    TokenLimit,
    /// The provider's content filter stopped the reply.
    Filtered,
    /// The reply passed vaultdm's own size cap ([`ReplyLimits`]); the rest was not read.
    TooLong,
    /// The reply passed vaultdm's total deadline ([`ReplyLimits::deadline`]).
    Deadline,
    /// vaultdm was stopped (killed, crashed, power lost) while the reply streamed; the text
    /// flushed to disk before that was recovered on the next start.
    Crashed,
    /// vaultdm was asked to stop (SIGTERM, or the terminal closed) while the reply streamed.
    Terminated,
}

impl CutOff {
    /// The reason for a provider's stop reason, `None` when the model ended naturally
    /// (`stop`, `end_turn`, `stop_sequence`, tool calls, or anything unknown).
    pub fn from_finish_reason(reason: &str) -> Option<CutOff> {
        match reason.trim().to_ascii_lowercase().as_str() {
            "length" | "max_tokens" | "model_length" | "max_output_tokens" => {
                Some(CutOff::TokenLimit)
            }
            "content_filter" | "refusal" | "safety" => Some(CutOff::Filtered),
            _ => None,
        }
    }
}

impl fmt::Display for CutOff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CutOff::Interrupted => "interrupted",
            CutOff::EndedEarly => "the stream ended before the reply finished",
            CutOff::IdleTimeout => "the stream went silent (idle timeout)",
            CutOff::ConnectionLost => "the connection broke",
            CutOff::ProviderError => "the provider reported an error",
            CutOff::TokenLimit => "the model hit its token limit (max_tokens)",
            CutOff::Filtered => "the provider's content filter stopped it",
            CutOff::TooLong => "it passed vaultdm's reply size cap",
            CutOff::Deadline => "it passed vaultdm's reply deadline",
            CutOff::Crashed => "vaultdm was stopped mid-reply",
            CutOff::Terminated => "vaultdm was asked to quit mid-reply",
        })
    }
}

/// The model's reply, complete or not.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Reply {
    /// All text received, in order.
    pub text: String,
    /// True only if the protocol's end event arrived (OpenAI: a non-empty `finish_reason` or
    /// `[DONE]`; Anthropic: `message_stop`) and the model ended for a natural reason: a
    /// token-limit or content-filter stop is not complete (see [`CutOff::from_finish_reason`]).
    pub complete: bool,
    /// The provider's stop reason (`stop`, `length`, `end_turn`, `max_tokens`, ...).
    pub finish_reason: Option<String>,
    /// Token accounting, if the provider sent any.
    pub usage: Option<Usage>,
    /// Why the reply is incomplete; `None` when complete.
    pub cut_off: Option<CutOff>,
    /// Stream oddities that were skipped (unreadable events), for diagnostics.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Tool calls the model made, in the order they started. Kept in a cut-off reply too,
    /// with whatever part of the arguments arrived.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
}

impl Reply {
    /// Whether the model stopped because it hit `max_tokens` (the text likely ends
    /// mid-sentence; `/continue` asks the DM to go on).
    pub fn hit_token_limit(&self) -> bool {
        self.cut_off == Some(CutOff::TokenLimit)
            || self
                .finish_reason
                .as_deref()
                .and_then(CutOff::from_finish_reason)
                == Some(CutOff::TokenLimit)
    }

    /// Whether the GM interrupted this reply.
    pub fn interrupted(&self) -> bool {
        self.cut_off == Some(CutOff::Interrupted)
    }

    /// Why the reply is incomplete, for a GM (`None` when it is complete).
    pub fn incomplete_reason(&self) -> Option<String> {
        (!self.complete).then(|| {
            self.cut_off
                .map_or_else(|| "cut off".to_string(), |c| c.to_string())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("openai", ProviderKind::OpenAi)]
    #[case("OpenAI", ProviderKind::OpenAi)]
    #[case("ollama", ProviderKind::OpenAi)]
    #[case("openai_compatible", ProviderKind::OpenAi)]
    #[case("anthropic", ProviderKind::Anthropic)]
    #[case(" Claude ", ProviderKind::Anthropic)]
    fn parses_provider(#[case] s: &str, #[case] expected: ProviderKind) {
        assert_eq!(s.parse::<ProviderKind>(), Ok(expected));
    }

    #[test]
    fn unknown_provider_is_explained() {
        let err = "gemini"
            .parse::<ProviderKind>()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("gemini") && err.contains("openai") && err.contains("anthropic"));
    }

    #[rstest]
    #[case(
        ProviderKind::OpenAi,
        "http://localhost:11434/v1",
        "http://localhost:11434/v1/chat/completions"
    )]
    #[case(
        ProviderKind::OpenAi,
        "http://localhost:11434/v1/",
        "http://localhost:11434/v1/chat/completions"
    )]
    #[case(
        ProviderKind::OpenAi,
        "http://h/v1/chat/completions",
        "http://h/v1/chat/completions"
    )]
    #[case(
        ProviderKind::Anthropic,
        "https://api.anthropic.com",
        "https://api.anthropic.com/v1/messages"
    )]
    #[case(
        ProviderKind::Anthropic,
        "https://api.anthropic.com/",
        "https://api.anthropic.com/v1/messages"
    )]
    #[case(ProviderKind::Anthropic, "http://proxy/v1", "http://proxy/v1/messages")]
    fn endpoints(#[case] p: ProviderKind, #[case] base: &str, #[case] expected: &str) {
        assert_eq!(LlmConfig::new(p, base, "m").endpoint(), expected);
    }

    #[test]
    fn key_is_masked_everywhere() {
        let key = ApiKey::new(
            "sk-proj-abcdefghijklmnop1234",
            Some("OPENAI_API_KEY".into()),
        );
        let cfg = LlmConfig {
            api_key: Some(key.clone()),
            ..LlmConfig::new(ProviderKind::OpenAi, "http://x/v1", "m")
        };
        for shown in [
            format!("{key}"),
            format!("{key:?}"),
            format!("{cfg:?}"),
            format!("{cfg:#?}"),
        ] {
            assert!(!shown.contains("abcdefghijklmnop"), "{shown}");
        }
        assert_eq!(key.masked(), "sk-…1234");
        assert_eq!(key.to_string(), "sk-…1234 (from $OPENAI_API_KEY)");
        assert_eq!(ApiKey::new("short", None).masked(), "…");
        assert_eq!(
            key.scrub("bad key sk-proj-abcdefghijklmnop1234!"),
            "bad key sk-…1234!"
        );
    }

    #[rstest]
    #[case(0, None, Some(500))]
    #[case(1, None, Some(1000))]
    #[case(2, None, Some(2000))]
    #[case(3, None, Some(4000))]
    #[case(4, None, Some(8000))]
    #[case(10, None, Some(8000))]
    #[case(0, Some(3000), Some(3000))]
    #[case(0, Some(90_000), Some(90_000))]
    #[case(0, Some(600_000), None)]
    fn backoff(
        #[case] retry: u32,
        #[case] retry_after_ms: Option<u64>,
        #[case] expected_ms: Option<u64>,
    ) {
        let p = RetryPolicy::default();
        assert_eq!(
            p.delay(retry, retry_after_ms.map(Duration::from_millis)),
            expected_ms.map(Duration::from_millis)
        );
    }

    #[rstest]
    #[case("stop", None)]
    #[case("end_turn", None)]
    #[case("stop_sequence", None)]
    #[case("tool_calls", None)]
    #[case("tool_use", None)]
    #[case("pause_turn", None)]
    #[case("function_call", None)]
    #[case("length", Some(CutOff::TokenLimit))]
    #[case("max_tokens", Some(CutOff::TokenLimit))]
    #[case("content_filter", Some(CutOff::Filtered))]
    #[case("refusal", Some(CutOff::Filtered))]
    fn finish_reasons(#[case] reason: &str, #[case] want: Option<CutOff>) {
        assert_eq!(CutOff::from_finish_reason(reason), want);
    }

    #[test]
    fn token_limit_detection() {
        let r = Reply {
            finish_reason: Some("length".into()),
            cut_off: Some(CutOff::TokenLimit),
            ..Reply::default()
        };
        assert!(r.hit_token_limit());
        assert!(!Reply::default().hit_token_limit());
    }

    #[test]
    fn reply_limits_are_far_above_max_tokens() {
        let l = ReplyLimits::for_max_tokens(1024);
        assert_eq!(l.max_tokens, 8192);
        let l = ReplyLimits::for_max_tokens(4000);
        assert_eq!(l.max_tokens, 16_000);
        assert_eq!(l.max_chars, 128_000);
    }
}
