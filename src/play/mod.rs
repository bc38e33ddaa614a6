//! A turn of play: canon -> context -> prompt -> streamed reply -> transcript.
//!
//! [`Table`] is one running session with the DM. For each player message it decides which
//! context to inject (full at the start, on a resume command, on `/full`, or after many canon
//! changes; light otherwise), prepends a `Canon updated:` block when notes changed since the
//! last message, attaches pending dice rolls, lays out the prompt (stable system prompt, lean
//! history, the current message with its context), streams the reply and writes both sides
//! to the session log before and after the request — so a crash, a cut connection or Ctrl-C
//! never loses a word.

pub(crate) mod command;
mod extract;
pub mod leak;
mod recall;
pub(crate) mod relay;
mod summary;
mod write;

pub use write::{DecidedView, PendingView, Proposals};

use crate::context::{ContextError, Engine, Injected, Mode, ModeChoice, Options};
use crate::llm::prompt::{build_prompt, plan_history, Exchange, PromptInput};
use crate::llm::{ChatRequest, CutOff, LlmClient, LlmError, Reply};
use crate::session::{ContextMode, SessionError, Store};
use crate::tokens;
use crate::watch::{Live, Reload};
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

/// The system prompt, with the request for canon proposals unless review is off.
fn with_guide(mut system: String, review: crate::config::Review) -> String {
    if review != crate::config::Review::Off {
        system.push_str("\n\n");
        system.push_str(crate::write::guide::GUIDE);
    }
    system
}

/// Errors of a turn.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
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
    /// A canon change could not be made (nothing was written), with why.
    #[error("{0}")]
    Write(String),
}

/// What will be sent with the next message.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The context built for the message.
    pub injected: Injected,
    /// The whole block injected (changes, context, rolls), as the session log keeps it.
    pub block: String,
    /// The memory layers sent with the message (after the block; derived, not logged).
    pub memory: crate::memory::Layers,
    /// The request that would be sent.
    pub request: ChatRequest,
    /// Exchanges left out of the prompt by the history budget.
    pub dropped_exchanges: usize,
}

/// A turn that failed, and what of it is safe on disk.
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct SendError {
    /// What went wrong.
    #[source]
    pub error: PlayError,
    /// The player's message is in the session log (and so is never lost).
    pub message_saved: bool,
    /// Part of a reply arrived and is in the session log.
    pub reply_saved: bool,
}

/// What `/continue` sends: the DM picks up its last reply where it stopped.
pub const CONTINUE_MESSAGE: &str =
    "(Your last reply was cut off. Continue it exactly where it stopped, without repeating anything.)";

/// How often a streaming reply's journal is synced to disk.
pub const JOURNAL_EVERY: std::time::Duration = std::time::Duration::from_millis(500);

/// The result of one turn.
#[derive(Debug, Clone)]
pub struct Turn {
    /// What was injected.
    pub prepared: Prepared,
    /// The reply (possibly partial: see `complete` / `cut_off`).
    pub reply: Reply,
    /// The canon changes the DM proposed with it.
    pub proposals: Proposals,
    /// Where the reply seems to recite a GM secret it was given ([`leak`]); each is also a
    /// notice for the GM.
    pub leaks: Vec<leak::Leak>,
}

/// The memory of a campaign's session notes, indexed once and shared by every table that
/// plays it (one per conversation behind `serve`): the canon it was built from, the moments
/// kept, the memory.
pub type NoteMemory = std::sync::Arc<
    std::sync::Mutex<
        Option<(
            std::sync::Arc<crate::canon::Campaign>,
            usize,
            crate::memory::Memory,
        )>,
    >,
>;

/// The campaign's recall of its sessions ([`crate::memory::store::Recall`]), opened once and
/// shared by every table that plays it (one per conversation behind `serve`).
pub type SharedRecall =
    std::sync::Arc<std::sync::Mutex<Option<std::sync::Arc<crate::memory::store::Recall>>>>;

/// A reply's stream after it ended: its journal, who answered, and why it stopped early.
struct Sent {
    journal: crate::session::Journal,
    provider: String,
    model: String,
    why: Option<CutOff>,
}

/// One running session with the DM, in owned parts: the canon it plays from, what rides
/// with the next message, the budgets, the DM's proposals and the session's memory. Every
/// method that changes any of them takes `&mut self`; the one cell left is `CountCache`, a
/// memo of token counts.
pub struct Table {
    canon: CanonHeld,
    next: Next,
    budgets: Budgets,
    proposing: Proposing,
    mem: recall::Remembering,
    client: Option<LlmClient>,
    store: Store,
    counts: CountCache,
    /// Things to tell the GM that did not stop play, for [`Table::take_notices`].
    notices: Vec<String>,
    /// A reply that arrived but neither its record nor its whole journal could be written
    /// (a full disk): kept here and written before anything else goes to the log.
    unsaved: Option<UnsavedReply>,
    /// The public text of the canon the leak guard last measured against.
    public: Option<(
        std::sync::Arc<crate::canon::Campaign>,
        std::rc::Rc<leak::PublicText>,
    )>,
}

/// The canon a table plays from.
struct CanonHeld {
    /// The context engine over the current canon and templates.
    engine: Engine,
    /// The options every message's context starts from (`[context]`, `--pc`).
    base: Options,
    /// The system prompt (with the proposals guide unless review is off).
    system: String,
    /// When the canon in `engine` was read: a note modified after it is newer than what the
    /// DM was given (see `play/write.rs`, the conflict rule).
    at: std::time::SystemTime,
}

/// What rides with the next message, and what decides its context mode.
#[derive(Default)]
struct Next {
    /// `/roll` results.
    rolls: Vec<String>,
    /// One-line canon changes for the `Canon updated:` block.
    changes: Vec<String>,
    /// Canon changes since the DM last had the full context.
    changes_since_full: usize,
    /// `/full` was asked for.
    force_full: bool,
}

/// The table's budgets.
struct Budgets {
    /// Tokens of hot history in the prompt.
    history: usize,
    /// After this many canon changes the next message carries the full context again.
    full_after_changes: usize,
    /// A total prompt budget in tokens (`vaultdm prompt --budget`), shared out between the
    /// layers; `None`: the canon budget, the memory shares and the history budget as set.
    prompt: Option<usize>,
}

/// The DM's canon proposals: how they are reviewed and the session's change log.
struct Proposing {
    review: crate::config::Review,
    /// False once the server refused a request with tools: proposals come fenced.
    tools_ok: bool,
    log: crate::write::ChangeLog,
}

/// A reply held in memory until the session log can take it.
struct UnsavedReply {
    reply: Reply,
    provider: String,
    model: String,
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
        let system = with_guide(engine.system_prompt()?, crate::config::Review::Ask);
        let mut notices = Vec::new();
        let changes_log = match crate::write::ChangeLog::open(store.vault(), store.name()) {
            Ok(l) => {
                notices.extend(l.warnings.iter().cloned());
                l
            }
            Err(e) => {
                notices.push(format!(
                    "the change log could not be read ({e}); /revert knows only this run's changes"
                ));
                crate::write::ChangeLog::empty(store.vault(), store.name())
            }
        };
        // What was written to canon since the DM last replied here (another process's
        // `/set`, another chat's accepts) goes to the next `Canon updated:` block.
        let changes = store
            .last_reply_time()
            .map(|t| crate::write::log::written_since(store.vault(), t))
            .unwrap_or_default();
        Ok(Table {
            canon: CanonHeld {
                engine,
                base,
                system,
                at: std::time::SystemTime::now(),
            },
            next: Next {
                changes_since_full: changes.len(),
                changes,
                ..Next::default()
            },
            budgets: Budgets {
                history: history_budget,
                full_after_changes,
                prompt: None,
            },
            proposing: Proposing {
                review: crate::config::Review::Ask,
                tools_ok: true,
                log: changes_log,
            },
            mem: recall::Remembering::default(),
            client,
            store,
            counts: CountCache::default(),
            notices,
            unsaved: None,
            public: None,
        })
    }

    /// The session store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The context engine (current canon).
    pub fn engine(&self) -> &Engine {
        &self.canon.engine
    }

    /// The client, if configured.
    pub fn client(&self) -> Option<&LlmClient> {
        self.client.as_ref()
    }

    /// Replaces the canon after a reload; `changes` are the one-line canon changes.
    pub fn canon_reloaded(&mut self, engine: Engine, changes: Vec<String>) {
        self.next.changes_since_full += changes.len();
        self.next.changes.extend(changes);
        self.canon.engine = engine;
        self.canon.at = std::time::SystemTime::now();
        self.mem.known = None;
        // The system prompt stays stable unless the campaign's name or setting changed.
        if let Ok(s) = self.canon.engine.system_prompt() {
            self.canon.system = with_guide(s, self.proposing.review);
        }
    }

    /// Takes a reload of live canon to the table, from the next message on: the engine
    /// (canon and templates, which change without any canon change), the canon changes for
    /// the `Canon updated:` block, and — when `vaultdm.toml`'s `[context]` changed — the new
    /// context settings.
    pub fn take_reload(&mut self, reload: &Reload, live: &Live) {
        let changes = reload.changes.iter().map(ToString::to_string).collect();
        self.canon_reloaded(live.engine().clone(), changes);
        if !reload.context.is_empty() {
            self.context_settings(&live.loaded().config.context);
        }
    }

    /// New `[context]` settings (the GM edited `vaultdm.toml`), from the next message on.
    pub fn context_settings(&mut self, cfg: &crate::config::ContextConfig) {
        self.canon.base = Options {
            pc: self.canon.base.pc.take(),
            ..Options::for_vault(cfg)
        };
        self.budgets.full_after_changes = cfg.full_context_after_changes;
    }

    /// What the next message would carry for `/context`: for `message`, or with none yet,
    /// for a placeholder one.
    pub fn preview(&mut self, message: Option<&str>) -> Result<Prepared, PlayError> {
        self.prepare(message.unwrap_or("…"))
    }

    /// `/full`: the next message carries the full context.
    pub fn force_full(&mut self) {
        self.next.force_full = true;
    }

    /// `/roll`: a roll result that rides along with the next message.
    pub fn add_roll(&mut self, roll: String) {
        self.next.rolls.push(roll);
    }

    /// Pending rolls.
    pub fn rolls(&self) -> &[String] {
        &self.next.rolls
    }

    /// `/undo`: drop the last exchange from the prompt history (nothing is deleted on disk).
    pub fn undo(&mut self) -> Result<bool, PlayError> {
        Ok(self.store.undo()?)
    }

    /// Supersedes the last `n` exchanges: a front end regenerated or edited them
    /// ([`Store::supersede`]). They leave the prompt history and the session's memory (rebuilt
    /// from the log on the next message), and other sessions' recall (which reads the log the
    /// same way). Returns the undo markers written.
    pub fn supersede(&mut self, n: usize) -> Result<usize, PlayError> {
        let written = self.store.supersede(n)?;
        if written > 0 {
            self.mem.memory = crate::memory::Memory::default();
        }
        Ok(written)
    }

    fn mode_choice(&self, message: &str, history: &[Exchange]) -> ModeChoice {
        let plan = plan_history(history, self.budgets.history, &|t| self.counts.count(t));
        let facts = crate::context::mode::SessionFacts {
            forced: self.next.force_full,
            full_in_history: plan.has_full_context,
            changes_since_full: self.next.changes_since_full,
            full_after_changes: self.budgets.full_after_changes,
        };
        crate::context::mode::for_session(facts, message)
    }

    /// Builds what the next message would carry, without sending or recording anything;
    /// with the explain items (for `/context`).
    pub fn prepare(&mut self, message: &str) -> Result<Prepared, PlayError> {
        self.prepare_with(message, true)
    }

    fn prepare_with(&mut self, message: &str, explain: bool) -> Result<Prepared, PlayError> {
        let history = self.store.history();
        self.prepare_over(message, recall::Over::Log(&history), explain)
    }

    /// [`Table::prepare`] over a given prompt history: the session's log, or a front end's
    /// (`vaultdm serve`).
    fn prepare_over(
        &mut self,
        message: &str,
        over: recall::Over<'_>,
        explain: bool,
    ) -> Result<Prepared, PlayError> {
        let history = over.history();
        let mode = self.mode_choice(message, history);
        let opts = Options {
            message: Some(message.to_string()),
            mode,
            explain,
            ..self.canon.base.clone()
        };
        let shares = self.shares(message);
        let opts = Options {
            budget: shares.map_or(opts.budget, |s| Some(s.canon)),
            ..opts
        };
        let injected = self.canon.engine.build(&opts)?;
        let mut block = String::new();
        if !self.next.changes.is_empty() && injected.mode == Mode::Light {
            block.push_str("Canon updated:\n");
            for c in &self.next.changes {
                block.push_str("- ");
                block.push_str(c);
                block.push('\n');
            }
            block.push('\n');
        }
        block.push_str(&injected.text);
        if !self.next.rolls.is_empty() {
            block.push_str("\nRolls:\n");
            for r in &self.next.rolls {
                block.push_str("- ");
                block.push_str(r);
                block.push('\n');
            }
        }
        let (memory, history_budget) = self.recall(message, over, &block, shares);
        let mut context = block.clone();
        let layers = memory.block();
        if !layers.is_empty() {
            if !context.is_empty() {
                context.push('\n');
            }
            context.push_str(&layers);
        }
        let prompt = build_prompt(
            &PromptInput {
                system: &self.canon.system,
                history,
                player_message: message,
                context: &context,
                history_budget,
            },
            &|t| self.counts.count(t),
        );
        Ok(Prepared {
            injected,
            block,
            memory,
            request: prompt.request,
            dropped_exchanges: prompt.plan.dropped,
        })
    }

    /// Sends a message: records it, streams the reply through `on_token`, records the reply
    /// (complete, cut off or interrupted).
    ///
    /// The order is what makes a turn safe: the player's message is on disk (synced) before
    /// anything that can fail — building the context included, so a broken template still
    /// keeps the words — and the reply is journaled as it streams (synced every half second),
    /// then folded into one DM record. `cancel` resolves with the reason to stop
    /// ([`CutOff::Interrupted`] for Ctrl-C, [`CutOff::Terminated`] for SIGTERM/SIGHUP); what
    /// arrived is kept either way. On failure, [`SendError`] says whether the message and any
    /// partial reply were saved, so the GM is never told "saved" when it was not.
    pub async fn send<C: Future<Output = CutOff>>(
        &mut self,
        message: &str,
        on_token: &mut (dyn FnMut(&str) + Send),
        cancel: C,
    ) -> Result<Turn, SendError> {
        self.save_unsaved_reply()?;
        let prepared = match self.prepare_with(message, false) {
            Ok(p) => p,
            Err(error) => return Err(self.unsent(message, error)),
        };
        self.send_prepared(message, prepared, on_token, cancel)
            .await
    }

    /// `/continue`: asks the DM to go on with its last reply from where it was cut off (a
    /// token limit, a cap, a broken connection). No canon is injected with it.
    pub async fn continue_reply<C: Future<Output = CutOff>>(
        &mut self,
        on_token: &mut (dyn FnMut(&str) + Send),
        cancel: C,
    ) -> Result<Turn, SendError> {
        self.save_unsaved_reply()?;
        // Nothing rides with it: no canon, no memory layers, no rolls (they wait for the
        // next message), only the history the cut-off reply is in.
        let history = self.store.history();
        let prompt = build_prompt(
            &PromptInput {
                system: &self.canon.system,
                history: &history,
                player_message: CONTINUE_MESSAGE,
                context: "",
                history_budget: self.budgets.history,
            },
            &|t| self.counts.count(t),
        );
        let prepared = Prepared {
            injected: Injected {
                mode: Mode::Light,
                text: String::new(),
                tokens: 0,
                items: Vec::new(),
                gm_only: Vec::new(),
            },
            block: String::new(),
            memory: crate::memory::Layers::default(),
            request: prompt.request,
            dropped_exchanges: prompt.plan.dropped,
        };
        self.send_prepared(CONTINUE_MESSAGE, prepared, on_token, cancel)
            .await
    }

    async fn send_prepared<C: Future<Output = CutOff>>(
        &mut self,
        message: &str,
        mut prepared: Prepared,
        on_token: &mut (dyn FnMut(&str) + Send),
        cancel: C,
    ) -> Result<Turn, SendError> {
        let Some(client) = self.client.clone() else {
            let error = PlayError::Llm(LlmError::NotConfigured {
                what: "no provider configured".into(),
            });
            return Err(self.unsent(message, error));
        };
        let provider = client.config().provider.as_str().to_string();
        let model = client.config().model.clone();
        let journal =
            std::sync::Mutex::new(self.open_reply(message, &prepared, &provider, &model)?);
        let reason = std::sync::Mutex::new(None::<CutOff>);
        if self.proposing.review != crate::config::Review::Off && self.proposing.tools_ok {
            prepared.request.tools = vec![crate::write::guide::tool_spec()];
        }
        // The DM's proposal blocks are never shown to the players.
        let fence = std::sync::Mutex::new(crate::llm::fence::FenceFilter::new());
        let result = {
            let cancel = async {
                let why = cancel.await;
                if let Ok(mut r) = reason.lock() {
                    *r = Some(why);
                }
            };
            tokio::pin!(cancel);
            let mut tee = |t: &str| {
                let shown = fence
                    .lock()
                    .map(|mut f| f.push(t))
                    .unwrap_or_else(|_| t.to_string());
                if !shown.is_empty() {
                    on_token(&shown);
                }
                if let Ok(mut j) = journal.lock() {
                    j.push(t);
                }
            };
            self.stream_reply(
                &client,
                &mut prepared.request,
                &mut tee,
                &journal,
                &mut cancel,
            )
            .await
        };
        let tail = fence.into_inner().map(|f| f.finish().0).unwrap_or_default();
        if !tail.is_empty() {
            on_token(&tail);
        }
        let mut journal = journal.into_inner().unwrap_or_else(|p| p.into_inner());
        journal.flush();
        if let Some(e) = journal.error() {
            self.notices.push(format!(
                "the reply could not be journaled while it streamed ({e})"
            ));
        }
        let why = reason.into_inner().unwrap_or_else(|p| p.into_inner());
        let sent = Sent {
            journal,
            provider,
            model,
            why,
        };
        match result {
            Ok(reply) => self.reply_arrived(message, prepared, reply, sent).await,
            Err(e) => Err(self.reply_failed(&prepared, e, sent)),
        }
    }

    /// Writes the player's message (with the context it carries) to the log and opens the
    /// reply's journal: nothing is sent that could not be kept.
    fn open_reply(
        &mut self,
        message: &str,
        prepared: &Prepared,
        provider: &str,
        model: &str,
    ) -> Result<crate::session::Journal, SendError> {
        let mode = match prepared.injected.mode {
            Mode::Full => ContextMode::Full,
            Mode::Light => ContextMode::Light,
        };
        let context = (!prepared.block.is_empty()).then(|| prepared.block.clone());
        if let Err(e) = self.store.record_player(message, context, Some(mode)) {
            // Not on disk: do not send what could not be kept.
            return Err(SendError {
                error: e.into(),
                message_saved: false,
                reply_saved: false,
            });
        }
        self.store
            .begin_reply(provider, model)
            .map_err(|e| SendError {
                error: e.into(),
                message_saved: true,
                reply_saved: false,
            })
    }

    /// Streams the reply to `tee`, flushing the journal as it comes; a server that takes no
    /// tools says so before any token, and is asked again without them (proposals then come
    /// in the fenced block the system prompt describes).
    async fn stream_reply<C: Future<Output = ()> + Unpin>(
        &mut self,
        client: &LlmClient,
        request: &mut ChatRequest,
        tee: &mut (dyn FnMut(&str) + Send),
        journal: &std::sync::Mutex<crate::session::Journal>,
        cancel: &mut C,
    ) -> Result<Reply, LlmError> {
        loop {
            let r = {
                let stream = client.stream_chat(request, tee, &mut *cancel);
                tokio::pin!(stream);
                let mut tick = tokio::time::interval(JOURNAL_EVERY);
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    tokio::select! {
                        r = &mut stream => break r,
                        _ = tick.tick() => {
                            if let Ok(mut j) = journal.lock() {
                                j.flush();
                            }
                        }
                    }
                }
            };
            match &r {
                Err(LlmError::Rejected {
                    status, message, ..
                }) if !request.tools.is_empty()
                    && matches!(status, 400 | 422 | 501)
                    && message.to_lowercase().contains("tool") =>
                {
                    request.tools.clear();
                    self.proposing.tools_ok = false;
                    self.notices.push(
                        "the server does not take tools; the DM proposes canon changes in a fenced block instead".into(),
                    );
                }
                _ => return r,
            }
        }
    }

    /// A whole (or cut-off) reply: logged, then its proposals, extraction and summaries.
    async fn reply_arrived(
        &mut self,
        message: &str,
        prepared: Prepared,
        mut reply: Reply,
        mut sent: Sent,
    ) -> Result<Turn, SendError> {
        if let (Some(CutOff::Interrupted), Some(w)) = (reply.cut_off, sent.why) {
            reply.cut_off = Some(w);
        }
        sent.journal.finish(&reply);
        if let Err(e) = self.store.record_dm(&reply, &sent.provider, &sent.model) {
            return Err(self.reply_not_saved(e, reply, &sent.journal, sent.provider, sent.model));
        }
        self.after_sent(&prepared);
        let proposals = self.proposals_of(&reply);
        let leaks = self.leaks_in(message, &prepared, &reply.text);
        self.extract_if_on(message, &reply.text).await;
        self.summarise_if_due().await;
        Ok(Turn {
            prepared,
            reply,
            proposals,
            leaks,
        })
    }

    /// Where a reply recites a secret of the DM-only part it was sent with: one notice per
    /// secret ("the DM's reply may give away a GM secret…"), the GM decides.
    fn leaks_in(&mut self, message: &str, prepared: &Prepared, reply: &str) -> Vec<leak::Leak> {
        let gm = &prepared.injected.gm_only;
        if gm.is_empty() || reply.trim().is_empty() {
            return Vec::new();
        }
        let secrets: Vec<leak::SecretText> = gm
            .iter()
            .map(|g| leak::SecretText::new(&g.text, &g.source, Some(&g.about)))
            .collect();
        let public = self.public_text();
        let leaks = leak::Guard::with_public(&secrets, &public).check(reply, message);
        let mut told = std::collections::HashSet::new();
        for l in &leaks {
            if told.insert(l.source.clone()) {
                self.notices.push(format!(
                    "the DM's reply may give away a GM secret ({}, {}): \"{}\"",
                    l.entity.as_deref().unwrap_or("secret"),
                    l.source,
                    l.excerpt
                ));
            }
        }
        leaks
    }

    /// The campaign's public text (what the players may know), indexed once per canon: the
    /// leak guard's measure of which words are ordinary.
    fn public_text(&mut self) -> std::rc::Rc<leak::PublicText> {
        let arc = self.canon.engine.campaign_arc().clone();
        if let Some((c, p)) = &self.public {
            if std::sync::Arc::ptr_eq(c, &arc) {
                return p.clone();
            }
        }
        let p = std::rc::Rc::new(leak::PublicText::new(&leak::public_canon(&arc)));
        self.public = Some((arc, p.clone()));
        p
    }

    /// A reply that failed: what arrived before the failure is logged, the error returned.
    fn reply_failed(&mut self, prepared: &Prepared, e: LlmError, mut sent: Sent) -> SendError {
        let mut reply_saved = false;
        match e.partial() {
            Some(partial) if !partial.text.is_empty() => {
                sent.journal.finish(partial);
                if let Err(se) = self.store.record_dm(partial, &sent.provider, &sent.model) {
                    let partial = partial.clone();
                    return self.reply_not_saved(
                        se,
                        partial,
                        &sent.journal,
                        sent.provider,
                        sent.model,
                    );
                }
                reply_saved = true;
                self.after_sent(prepared);
            }
            _ => self.store.discard_journal(),
        }
        SendError {
            error: PlayError::Llm(e),
            message_saved: true,
            reply_saved,
        }
    }

    /// A message that cannot be sent: its words are still kept in the session log.
    fn unsent(&mut self, message: &str, error: PlayError) -> SendError {
        let saved = self.store.record_player(message, None, None).is_ok();
        SendError {
            error,
            message_saved: saved,
            reply_saved: false,
        }
    }

    /// The reply arrived but its record could not be written. When its journal is whole,
    /// the next start recovers it from there; when the journal failed too (the disk filled
    /// while it streamed), the reply is held here and written before the next message, and
    /// the GM is told exactly that — never that a journal keeps what it does not.
    fn reply_not_saved(
        &mut self,
        e: SessionError,
        reply: Reply,
        journal: &crate::session::Journal,
        provider: String,
        model: String,
    ) -> SendError {
        let chars = reply.text.chars().count();
        if journal.whole() {
            self.notices.push(format!(
                "the reply ({chars} characters) could not be written to the session log; its journal keeps it and the next start of this session recovers it"
            ));
        } else {
            let kept = journal.kept_chars().min(chars);
            self.notices.push(format!(
                "the reply ({chars} characters) could not be written to the session log, and its journal holds only the first {kept} of them ({}); the whole reply is on your screen, and vaultdm writes it to the log before your next message here — free some space first; if vaultdm stops before then, the next start recovers only those {kept} characters",
                journal.error().unwrap_or_else(|| "not synced".into())
            ));
            self.unsaved = Some(UnsavedReply {
                reply,
                provider,
                model,
            });
        }
        SendError {
            error: e.into(),
            message_saved: true,
            reply_saved: false,
        }
    }

    /// Writes a reply held since a failed write (`Table::reply_not_saved`) before anything
    /// else goes to the log: the session stays in order, and the journal that holds part of
    /// it is not overwritten by the next reply's. Refuses the next message while it cannot.
    pub fn save_unsaved_reply(&mut self) -> Result<(), SendError> {
        let Some(u) = self.unsaved.take() else {
            return Ok(());
        };
        match self.store.record_dm(&u.reply, &u.provider, &u.model) {
            Ok(()) => {
                self.notices.push(format!(
                    "the last reply ({} characters), which could not be saved before, is now in the session log",
                    u.reply.text.chars().count()
                ));
                Ok(())
            }
            Err(e) => {
                self.unsaved = Some(u);
                Err(SendError {
                    error: PlayError::Write(format!(
                        "the last reply is still not in the session log ({e}); free some space and try again"
                    )),
                    message_saved: false,
                    reply_saved: false,
                })
            }
        }
    }

    /// Whether a reply is held in memory because the session log could not take it.
    pub fn has_unsaved_reply(&self) -> bool {
        self.unsaved.is_some()
    }

    /// Things to tell the GM that did not stop play (from the session store and the turn):
    /// each is returned once.
    pub fn take_notices(&mut self) -> Vec<String> {
        let mut n = self.store.take_notices();
        n.append(&mut self.notices);
        n
    }

    /// After a reply (whole or partial) is in the log: what rode with the message is spent.
    /// A message that carried no block (`/continue`) leaves the rolls and canon changes for
    /// the next one.
    fn after_sent(&mut self, prepared: &Prepared) {
        if !prepared.block.is_empty() {
            self.next.rolls.clear();
            self.next.changes.clear();
        }
        self.write_memory_note();
        if prepared.injected.mode == Mode::Full {
            self.next.force_full = false;
            self.next.changes_since_full = 0;
        }
    }
}
