//! Errors from talking to an LLM provider, worded for the GM at the table.
//!
//! Every variant names the URL (never the key) and, where the failure happened after text
//! started to stream, carries the partial [`Reply`] so no streamed text is ever lost: the
//! caller can still show and save it, marked as cut off. [`LlmError::partial`] gives uniform
//! access to it.

use std::time::Duration;

use super::Reply;

/// How to configure a provider; appended to [`LlmError::NotConfigured`].
pub const CONFIGURE_HELP: &str = "set one with flags, environment variables or the [llm] table in vaultdm.toml, e.g.\n  \
     local Ollama: vaultdm chat --provider openai --base-url http://localhost:11434/v1 --model llama3.1\n  \
     OpenAI:       export OPENAI_API_KEY=...   (then vaultdm chat --model gpt-4o-mini)\n  \
     Anthropic:    export ANTHROPIC_API_KEY=...";

/// Everything that can go wrong between vaultdm and the model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LlmError {
    /// No usable provider/model was configured.
    #[error("no LLM provider configured: {what}\n{CONFIGURE_HELP}")]
    NotConfigured {
        /// What exactly is missing (provider, model, a key variable...).
        what: String,
    },

    /// The base URL could not be turned into a request URL.
    #[error("the LLM base URL `{url}` is not a valid http(s) URL")]
    InvalidUrl {
        /// The offending URL as configured.
        url: String,
    },

    /// The HTTP client itself could not be set up (TLS initialisation).
    #[error("could not set up the HTTP client")]
    ClientSetup {
        /// The underlying reqwest error.
        #[source]
        source: reqwest::Error,
    },

    /// Nothing listens at the configured address.
    #[error("nothing answers at {url} (connection refused){hint}")]
    ConnectionRefused {
        /// The endpoint URL.
        url: String,
        /// A hint such as " — is Ollama running?" (may be empty).
        hint: String,
    },

    /// Connecting did not succeed within the connect timeout.
    #[error("connecting to {url} timed out after {}s (connect timeout){hint}", after.as_secs_f64())]
    ConnectTimeout {
        /// The endpoint URL.
        url: String,
        /// The configured connect timeout.
        after: Duration,
        /// A hint (may be empty).
        hint: String,
    },

    /// Any other failure to reach the server (DNS, TLS, reset before a response).
    #[error("could not reach {url}: {detail}")]
    Connect {
        /// The endpoint URL.
        url: String,
        /// A readable description of the cause chain.
        detail: String,
        /// The underlying reqwest error.
        #[source]
        source: reqwest::Error,
    },

    /// 401/403: the key is missing, wrong or lacks permission.
    #[error("{url} refused the API key (HTTP {status}): {}{message}", key_advice(key_var.as_deref()))]
    Unauthorized {
        /// HTTP status (401 or 403).
        status: u16,
        /// The endpoint URL.
        url: String,
        /// The environment variable the key came from, if any.
        key_var: Option<String>,
        /// The server's message (key material scrubbed), prefixed with "— " when present.
        message: String,
    },

    /// The server does not know the configured model.
    #[error("{url} does not know the model `{model}`{message}\n  {hint}")]
    UnknownModel {
        /// The model name as configured.
        model: String,
        /// The endpoint URL.
        url: String,
        /// The server's message, prefixed with ": " when present.
        message: String,
        /// What to do about it (Ollama gets `ollama pull`).
        hint: String,
    },

    /// 404 that is not about the model: most likely a wrong base URL.
    #[error("{url} answered 404 Not Found{message}\n  check the base URL (OpenAI-compatible servers usually end in /v1, e.g. http://localhost:11434/v1)")]
    NotFound {
        /// The endpoint URL.
        url: String,
        /// The server's message, prefixed with ": " when present.
        message: String,
    },

    /// 429 after all retries.
    #[error("{url} is rate-limiting us (HTTP 429), gave up after {attempts} attempts{message}")]
    RateLimited {
        /// The endpoint URL.
        url: String,
        /// How many requests were made.
        attempts: u32,
        /// The server's message, prefixed with ": " when present.
        message: String,
    },

    /// 5xx (or Anthropic's 529 overloaded) after all retries.
    #[error("{url} failed with HTTP {status} after {attempts} attempts{message}")]
    Server {
        /// HTTP status.
        status: u16,
        /// The endpoint URL.
        url: String,
        /// How many requests were made.
        attempts: u32,
        /// The server's message, prefixed with ": " when present.
        message: String,
    },

    /// Any other non-success status (400 bad request, 413, ...).
    #[error("{url} rejected the request (HTTP {status}){message}")]
    Rejected {
        /// HTTP status.
        status: u16,
        /// The endpoint URL.
        url: String,
        /// The server's message, prefixed with ": " when present.
        message: String,
    },

    /// No text arrived within the first-token timeout.
    #[error("{url} sent no reply within {}s (first-token timeout); the model may still be loading — try again or raise the timeout", after.as_secs_f64())]
    FirstTokenTimeout {
        /// The endpoint URL.
        url: String,
        /// The configured first-token timeout.
        after: Duration,
    },

    /// The stream went silent for longer than the idle timeout after text had started.
    #[error("{url} went silent for {}s mid-reply (idle timeout); kept the {} characters received", after.as_secs_f64(), partial.text.chars().count())]
    IdleTimeout {
        /// The endpoint URL.
        url: String,
        /// The configured idle timeout.
        after: Duration,
        /// What had arrived so far.
        partial: Box<Reply>,
    },

    /// The connection broke while the reply was streaming.
    #[error("the connection to {url} broke mid-reply ({detail}); kept the {} characters received", partial.text.chars().count())]
    StreamCut {
        /// The endpoint URL.
        url: String,
        /// A readable description of the transport error.
        detail: String,
        /// What had arrived so far.
        partial: Box<Reply>,
    },

    /// The server answered 200 with a body that is no LLM reply stream (an HTML page, a
    /// proxy's login form, invalid JSON).
    #[error("{url} answered with something that is not an LLM reply (content-type: {content_type}): {excerpt}\n  check the base URL: it should be the API root of an OpenAI-compatible server (usually ending in /v1) or Anthropic's API")]
    BadResponse {
        /// The endpoint URL.
        url: String,
        /// The response's content type as sent.
        content_type: String,
        /// The start of the body, one line, keys scrubbed.
        excerpt: String,
    },

    /// The server speaks the other protocol than the one configured.
    #[error("{url} answers in the {looks_like} format, but vaultdm is set to `{configured}`; set --provider {looks_like} (or provider = \"{looks_like}\" in [llm])")]
    ProviderMismatch {
        /// The endpoint URL.
        url: String,
        /// The provider configured.
        configured: super::ProviderKind,
        /// The protocol the stream looks like.
        looks_like: super::ProviderKind,
    },

    /// The provider reported an error inside the stream.
    #[error("{url} reported an error mid-reply: {message}")]
    StreamError {
        /// The endpoint URL.
        url: String,
        /// The provider's error message (key material scrubbed).
        message: String,
        /// What had arrived so far.
        partial: Box<Reply>,
    },
}

fn key_advice(key_var: Option<&str>) -> String {
    match key_var {
        Some(var) => format!("check the key in ${var}"),
        None => "no API key was sent; export the provider's key variable (e.g. OPENAI_API_KEY or ANTHROPIC_API_KEY) or set api_key_env".to_owned(),
    }
}

impl LlmError {
    /// The text that had streamed before the failure, if any was received.
    pub fn partial(&self) -> Option<&Reply> {
        match self {
            LlmError::IdleTimeout { partial, .. }
            | LlmError::StreamCut { partial, .. }
            | LlmError::StreamError { partial, .. } => Some(partial),
            _ => None,
        }
    }

    /// Whether retrying the same request later could plausibly succeed (rate limits,
    /// server errors, timeouts, broken connections), as opposed to configuration mistakes.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            LlmError::RateLimited { .. }
                | LlmError::Server { .. }
                | LlmError::FirstTokenTimeout { .. }
                | LlmError::IdleTimeout { .. }
                | LlmError::StreamCut { .. }
                | LlmError::StreamError { .. }
                | LlmError::ConnectTimeout { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::CutOff;

    fn partial(text: &str, why: CutOff) -> Box<Reply> {
        Box::new(Reply {
            text: text.into(),
            cut_off: Some(why),
            ..Reply::default()
        })
    }

    /// The exact wording a GM sees, reviewed as one snapshot.
    #[test]
    fn messages_read_well() {
        let url = "http://localhost:11434/v1/chat/completions".to_owned();
        let errors = vec![
            LlmError::NotConfigured {
                what: "no model set".into(),
            },
            LlmError::InvalidUrl {
                url: "localhost:11434".into(),
            },
            LlmError::ConnectionRefused {
                url: "http://localhost:11434/v1".into(),
                hint: " — is Ollama running? (start it with `ollama serve`)".into(),
            },
            LlmError::ConnectTimeout {
                url: url.clone(),
                after: Duration::from_secs(10),
                hint: String::new(),
            },
            LlmError::Unauthorized {
                status: 401,
                url: url.clone(),
                key_var: Some("OPENAI_API_KEY".into()),
                message: " — Incorrect API key provided: sk-…1234".into(),
            },
            LlmError::Unauthorized {
                status: 401,
                url: url.clone(),
                key_var: None,
                message: String::new(),
            },
            LlmError::UnknownModel {
                model: "llama9".into(),
                url: url.clone(),
                message: ": model \"llama9\" not found, try pulling it first".into(),
                hint: "pull it with `ollama pull llama9` (see `ollama list`)".into(),
            },
            LlmError::NotFound {
                url: url.clone(),
                message: ": 404 page not found".into(),
            },
            LlmError::RateLimited {
                url: url.clone(),
                attempts: 4,
                message: ": slow down".into(),
            },
            LlmError::Server {
                status: 503,
                url: url.clone(),
                attempts: 4,
                message: String::new(),
            },
            LlmError::Rejected {
                status: 400,
                url: url.clone(),
                message: ": messages: roles must alternate".into(),
            },
            LlmError::FirstTokenTimeout {
                url: url.clone(),
                after: Duration::from_secs(120),
            },
            LlmError::IdleTimeout {
                url: url.clone(),
                after: Duration::from_secs(60),
                partial: partial("The orc", CutOff::IdleTimeout),
            },
            LlmError::StreamCut {
                url: url.clone(),
                detail: "connection closed before message completed".into(),
                partial: partial("The orc", CutOff::ConnectionLost),
            },
            LlmError::StreamError {
                url: url.clone(),
                message: "Overloaded (overloaded_error)".into(),
                partial: partial("", CutOff::ProviderError),
            },
            LlmError::BadResponse {
                url: url.clone(),
                content_type: "text/html".into(),
                excerpt: "<html><body>Sign in to continue</body></html>".into(),
            },
            LlmError::ProviderMismatch {
                url,
                configured: crate::llm::ProviderKind::OpenAi,
                looks_like: crate::llm::ProviderKind::Anthropic,
            },
        ];
        let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
        insta::assert_snapshot!(text.join("\n---\n"), @r#"
        no LLM provider configured: no model set
        set one with flags, environment variables or the [llm] table in vaultdm.toml, e.g.
          local Ollama: vaultdm chat --provider openai --base-url http://localhost:11434/v1 --model llama3.1
          OpenAI:       export OPENAI_API_KEY=...   (then vaultdm chat --model gpt-4o-mini)
          Anthropic:    export ANTHROPIC_API_KEY=...
        ---
        the LLM base URL `localhost:11434` is not a valid http(s) URL
        ---
        nothing answers at http://localhost:11434/v1 (connection refused) — is Ollama running? (start it with `ollama serve`)
        ---
        connecting to http://localhost:11434/v1/chat/completions timed out after 10s (connect timeout)
        ---
        http://localhost:11434/v1/chat/completions refused the API key (HTTP 401): check the key in $OPENAI_API_KEY — Incorrect API key provided: sk-…1234
        ---
        http://localhost:11434/v1/chat/completions refused the API key (HTTP 401): no API key was sent; export the provider's key variable (e.g. OPENAI_API_KEY or ANTHROPIC_API_KEY) or set api_key_env
        ---
        http://localhost:11434/v1/chat/completions does not know the model `llama9`: model "llama9" not found, try pulling it first
          pull it with `ollama pull llama9` (see `ollama list`)
        ---
        http://localhost:11434/v1/chat/completions answered 404 Not Found: 404 page not found
          check the base URL (OpenAI-compatible servers usually end in /v1, e.g. http://localhost:11434/v1)
        ---
        http://localhost:11434/v1/chat/completions is rate-limiting us (HTTP 429), gave up after 4 attempts: slow down
        ---
        http://localhost:11434/v1/chat/completions failed with HTTP 503 after 4 attempts
        ---
        http://localhost:11434/v1/chat/completions rejected the request (HTTP 400): messages: roles must alternate
        ---
        http://localhost:11434/v1/chat/completions sent no reply within 120s (first-token timeout); the model may still be loading — try again or raise the timeout
        ---
        http://localhost:11434/v1/chat/completions went silent for 60s mid-reply (idle timeout); kept the 7 characters received
        ---
        the connection to http://localhost:11434/v1/chat/completions broke mid-reply (connection closed before message completed); kept the 7 characters received
        ---
        http://localhost:11434/v1/chat/completions reported an error mid-reply: Overloaded (overloaded_error)
        ---
        http://localhost:11434/v1/chat/completions answered with something that is not an LLM reply (content-type: text/html): <html><body>Sign in to continue</body></html>
          check the base URL: it should be the API root of an OpenAI-compatible server (usually ending in /v1) or Anthropic's API
        ---
        http://localhost:11434/v1/chat/completions answers in the anthropic format, but vaultdm is set to `openai`; set --provider anthropic (or provider = "anthropic" in [llm])
        "#);
    }
}
