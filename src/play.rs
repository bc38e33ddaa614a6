//! A turn of play: canon -> context -> prompt -> streamed reply -> transcript.
//!
//! [`Table`] is one running session with the DM. For each player message it decides which
//! context to inject (full at the start, on a resume command, on `/full`, or after many canon
//! changes; light otherwise), prepends a `Canon updated:` block when notes changed since the
//! last message, attaches pending dice rolls, lays out the prompt (stable system prompt, lean
//! history, the current message with its context), streams the reply and writes both sides
//! to the session log before and after the request — so a crash, a cut connection or Ctrl-C
//! never loses a word.

use crate::context::{ContextError, Engine, Injected, Mode, ModeChoice, Options};
use crate::llm::prompt::{build_prompt, plan_history, Exchange, PromptInput};
use crate::llm::{ChatRequest, LlmClient, LlmError, Reply};
use crate::session::{ContextMode, SessionError, Store};
use crate::tokens;
use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::hash::{Hash, Hasher};

/// Token counts of texts already seen: history is re-counted every turn, and an exact count
/// of a full context costs milliseconds.
#[derive(Debug, Default)]
struct CountCache(RefCell<HashMap<u64, usize>>);

impl CountCache {
    fn count(&self, text: &str) -> usize {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        text.hash(&mut h);
        let key = h.finish();
        if let Some(n) = self.0.borrow().get(&key) {
            return *n;
        }
        let n = tokens::count(text);
        let mut m = self.0.borrow_mut();
        if m.len() > 4096 {
            m.clear();
        }
        m.insert(key, n);
        n
    }
}

/// Errors of a turn.
#[derive(Debug, thiserror::Error)]
pub enum PlayError {
    /// Building the context failed (e.g. a broken template).
    #[error(transparent)]
    Context(#[from] ContextError),
    /// Writing the session failed.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The provider failed; any partial reply was saved.
    #[error(transparent)]
    Llm(#[from] LlmError),
}

/// What will be sent with the next message.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The context built for the message.
    pub injected: Injected,
    /// The whole block injected (changes, context, rolls).
    pub block: String,
    /// The request that would be sent.
    pub request: ChatRequest,
    /// Exchanges left out of the prompt by the history budget.
    pub dropped_exchanges: usize,
}

/// The result of one turn.
#[derive(Debug, Clone)]
pub struct Turn {
    /// What was injected.
    pub prepared: Prepared,
    /// The reply (possibly partial: see `complete` / `cut_off`).
    pub reply: Reply,
}

/// One running session with the DM.
pub struct Table {
    engine: Engine,
    base: Options,
    client: Option<LlmClient>,
    store: Store,
    system: String,
    history_budget: usize,
    full_after_changes: usize,
    rolls: Vec<String>,
    changes: Vec<String>,
    changes_since_full: usize,
    force_full: bool,
    counts: CountCache,
}

impl Table {
    /// A table for a session. `client` may be None for previews (`/context`) only.
    pub fn new(
        engine: Engine,
        base: Options,
        client: Option<LlmClient>,
        store: Store,
        history_budget: usize,
        full_after_changes: usize,
    ) -> Result<Table, PlayError> {
        let system = engine.system_prompt()?;
        Ok(Table {
            engine,
            base,
            client,
            store,
            system,
            history_budget,
            full_after_changes,
            rolls: Vec::new(),
            changes: Vec::new(),
            changes_since_full: 0,
            force_full: false,
            counts: CountCache::default(),
        })
    }

    /// The session store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The context engine (current canon).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The client, if configured.
    pub fn client(&self) -> Option<&LlmClient> {
        self.client.as_ref()
    }

    /// Replaces the canon after a reload; `changes` are the one-line canon changes.
    pub fn canon_reloaded(&mut self, engine: Engine, changes: Vec<String>) {
        self.changes_since_full += changes.len();
        self.changes.extend(changes);
        self.engine = engine;
        // The system prompt stays stable unless the campaign's name or setting changed.
        if let Ok(s) = self.engine.system_prompt() {
            self.system = s;
        }
    }

    /// `/full`: the next message carries the full context.
    pub fn force_full(&mut self) {
        self.force_full = true;
    }

    /// `/roll`: a roll result that rides along with the next message.
    pub fn add_roll(&mut self, roll: String) {
        self.rolls.push(roll);
    }

    /// Pending rolls.
    pub fn rolls(&self) -> &[String] {
        &self.rolls
    }

    /// `/undo`: drop the last exchange from the prompt history (nothing is deleted on disk).
    pub fn undo(&mut self) -> Result<bool, PlayError> {
        Ok(self.store.undo()?)
    }

    fn mode_choice(&self, message: &str, history: &[Exchange]) -> ModeChoice {
        let plan = plan_history(history, self.history_budget, &|t| self.counts.count(t));
        if self.force_full
            || !plan.has_full_context
            || crate::context::is_resume(message)
            || (self.full_after_changes > 0 && self.changes_since_full > self.full_after_changes)
        {
            ModeChoice::Full
        } else {
            ModeChoice::Light
        }
    }

    /// Builds what the next message would carry, without sending or recording anything;
    /// with the explain items (for `/context`).
    pub fn prepare(&self, message: &str) -> Result<Prepared, PlayError> {
        self.prepare_with(message, true)
    }

    fn prepare_with(&self, message: &str, explain: bool) -> Result<Prepared, PlayError> {
        let history = self.store.history();
        let mode = self.mode_choice(message, &history);
        let opts = Options {
            message: Some(message.to_string()),
            mode,
            explain,
            ..self.base.clone()
        };
        let injected = self.engine.build(&opts)?;
        let mut block = String::new();
        if !self.changes.is_empty() && injected.mode == Mode::Light {
            block.push_str("Canon updated:\n");
            for c in &self.changes {
                block.push_str("- ");
                block.push_str(c);
                block.push('\n');
            }
            block.push('\n');
        }
        block.push_str(&injected.text);
        if !self.rolls.is_empty() {
            block.push_str("\nRolls:\n");
            for r in &self.rolls {
                block.push_str("- ");
                block.push_str(r);
                block.push('\n');
            }
        }
        let prompt = build_prompt(
            &PromptInput {
                system: &self.system,
                history: &history,
                player_message: message,
                context: &block,
                history_budget: self.history_budget,
            },
            &|t| self.counts.count(t),
        );
        Ok(Prepared {
            injected,
            block,
            request: prompt.request,
            dropped_exchanges: prompt.plan.dropped,
        })
    }

    /// Sends a message: records it, streams the reply through `on_token`, records the reply
    /// (complete, cut off or interrupted). On a provider error the partial reply, if any, is
    /// recorded and the error returned; the player's message stays in the log and the next
    /// message (or a re-send) replaces it in the prompt history.
    pub async fn send<C: Future<Output = ()>>(
        &mut self,
        message: &str,
        on_token: &mut (dyn FnMut(&str) + Send),
        cancel: C,
    ) -> Result<Turn, PlayError> {
        let prepared = self.prepare_with(message, false)?;
        let Some(client) = self.client.clone() else {
            return Err(PlayError::Llm(LlmError::NotConfigured {
                what: "no provider configured".into(),
            }));
        };
        let mode = match prepared.injected.mode {
            Mode::Full => ContextMode::Full,
            Mode::Light => ContextMode::Light,
        };
        self.store
            .record_player(message, Some(prepared.block.clone()), Some(mode))?;
        let provider = client.config().provider.as_str().to_string();
        let model = client.config().model.clone();
        match client
            .stream_chat(&prepared.request, on_token, cancel)
            .await
        {
            Ok(reply) => {
                self.store.record_dm(&reply, &provider, &model)?;
                self.after_sent(prepared.injected.mode);
                Ok(Turn { prepared, reply })
            }
            Err(e) => {
                if let Some(partial) = e.partial() {
                    if !partial.text.is_empty() {
                        self.store.record_dm(partial, &provider, &model)?;
                        self.after_sent(prepared.injected.mode);
                    }
                }
                Err(PlayError::Llm(e))
            }
        }
    }

    fn after_sent(&mut self, mode: Mode) {
        self.rolls.clear();
        self.changes.clear();
        if mode == Mode::Full {
            self.force_full = false;
            self.changes_since_full = 0;
        }
    }
}
