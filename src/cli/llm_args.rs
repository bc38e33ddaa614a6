//! Flags shared by `chat`, `ask` and `config`, and turning them into a table at play.

use crate::canon::Loaded;
use crate::context::{Engine, Options};
use crate::llm::settings::{self, LlmFlags, LlmSettings};
use crate::llm::LlmClient;
use crate::play::Table;
use crate::session::{SessionError, Store};
use std::path::Path;

/// LLM flags.
#[derive(Debug, Clone, clap::Args, Default)]
pub(crate) struct LlmArgs {
    /// `openai` (any OpenAI-compatible server: OpenAI, Ollama, LM Studio, llama.cpp, vLLM,
    /// OpenRouter) or `anthropic`.
    #[arg(long)]
    pub provider: Option<String>,
    /// Model name.
    #[arg(long)]
    pub model: Option<String>,
    /// Base URL, e.g. http://localhost:11434/v1.
    #[arg(long)]
    pub base_url: Option<String>,
    /// Name of the environment variable holding the API key.
    #[arg(long)]
    pub api_key_env: Option<String>,
    /// Max tokens of a reply.
    #[arg(long)]
    pub max_tokens: Option<u32>,
    /// Token budget for the prompt history.
    #[arg(long)]
    pub history_budget: Option<usize>,
}

impl LlmArgs {
    /// The flags as settings resolution takes them.
    pub(crate) fn flags(&self) -> LlmFlags {
        LlmFlags {
            provider: self.provider.clone(),
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            api_key_env: self.api_key_env.clone(),
            max_tokens: self.max_tokens,
            history_budget: self.history_budget,
        }
    }
}

/// Resolves the effective LLM settings: flags > environment > vault > user config.
pub(super) fn resolve(loaded: &Loaded, args: &LlmArgs) -> anyhow::Result<LlmSettings> {
    Ok(settings::resolve_here(
        &args.flags(),
        loaded.config.llm.as_ref(),
    )?)
}

/// Opens a session for writing. With `next_free_if_locked` (no `--session` given), a session
/// open in another window makes this one play the next free name (`2026-11-23-2`) and say
/// so; otherwise the lock error names the holder.
pub(super) fn open_session(
    root: &Path,
    name: &str,
    next_free_if_locked: bool,
) -> anyhow::Result<Store> {
    match Store::open(root, name) {
        Err(SessionError::Locked { holder, .. }) if next_free_if_locked => {
            for n in 2..1000 {
                let other = format!("{name}-{n}");
                if crate::session::log_path(root, &other).exists() {
                    continue;
                }
                let store = Store::open(root, &other)?;
                eprintln!(
                    "vaultdm: session \"{name}\" is open in another vaultdm ({holder}); this window plays session \"{other}\""
                );
                return Ok(store);
            }
            Err(SessionError::Locked {
                name: name.to_owned(),
                holder,
            }
            .into())
        }
        other => Ok(other?),
    }
}

/// Sets up a table: the context engine for the loaded canon, the client and the session.
pub(super) fn open_table(
    loaded: &Loaded,
    engine: Engine,
    settings: &LlmSettings,
    store: Store,
) -> anyhow::Result<Table> {
    let base = Options::for_vault(&loaded.config.context);
    let notifier: crate::llm::Notifier = std::sync::Arc::new(|n: &crate::llm::Notice| {
        use std::io::IsTerminal;
        let clear = if std::io::stderr().is_terminal() {
            "\r\x1b[2K"
        } else {
            ""
        };
        eprintln!("{clear}vaultdm: {n}");
    });
    let client = LlmClient::new(settings.to_config()?)?.with_notifier(notifier);
    let mut table = Table::new(
        engine,
        base,
        Some(client),
        store,
        settings.history_budget.value,
        loaded.config.context.full_context_after_changes,
    )?;
    table.set_review(loaded.config.write.review);
    table.set_memory_config(loaded.config.memory.clone());
    Ok(table)
}
