//! One front-end conversation: a session of the vault, played by a [`Table`] on a thread of
//! its own (the table keeps per-session caches that are not shared between threads). Jobs
//! come in one at a time — the turns of one conversation never interleave — and each turn's
//! reply streams back as it arrives.

use super::campaign::Snapshot;
use crate::context::{Mode, Options};
use crate::llm::{ChatMessage, CutOff, LlmClient};
use crate::play::{PendingView, SendError, Table, Turn};
use crate::session::Store;
use std::sync::{Arc, Mutex, RwLock};
use tokio::sync::{mpsc, oneshot, watch};

/// What a turn sends back while it runs.
#[derive(Debug)]
pub(crate) enum Event {
    /// A piece of the reply, as the players may see it (proposal blocks are kept back).
    Token(String),
    /// The turn ended: the reply (maybe cut off) or why there is none.
    Done(Box<Result<Finished, SendError>>),
}

/// A finished turn.
#[derive(Debug)]
pub(crate) struct Finished {
    /// The turn.
    pub turn: Turn,
    /// The exchanges in the session's log after the turn.
    pub exchanges: usize,
}

impl Finished {
    /// Whether the turn carried the full context.
    pub(crate) fn full(&self) -> bool {
        self.turn.prepared.injected.mode == Mode::Full
    }
}

/// A front end's message for the DM.
pub(crate) struct Relay {
    /// The new message.
    pub message: String,
    /// The conversation before it (user and assistant, merged).
    pub earlier: Vec<ChatMessage>,
    /// How many of the session's last exchanges this message replaces (a front end's
    /// Regenerate, swipe or edit): superseded in the log and memory before it is played.
    pub supersede: usize,
    /// The exchanges the log held after this conversation's last turn as the server knows it:
    /// a log holding another number was played elsewhere since, and nothing is superseded.
    pub log_had: Option<usize>,
    /// The front end's system text.
    pub system: String,
    /// The upstream model asked for (`None`: the configured one).
    pub model: Option<String>,
    /// The reply length asked for.
    pub max_tokens: Option<u32>,
    /// Sampling fields for the upstream, in its own names.
    pub extra: serde_json::Map<String, serde_json::Value>,
    /// Where the reply goes.
    pub events: mpsc::UnboundedSender<Event>,
}

/// A review decision over the API.
pub(crate) enum Decision {
    /// Accept these proposals (all when empty).
    Accept(Vec<usize>),
    /// Reject these proposals (all when empty).
    Reject(Vec<usize>),
}

enum Job {
    Relay(Box<Relay>),
    /// Takes back the last exchange if the log still ends with it (it holds this many).
    Withdraw(usize, oneshot::Sender<Result<bool, String>>),
    Pending(oneshot::Sender<Vec<PendingView>>),
    Decide(Decision, oneshot::Sender<Result<Vec<String>, String>>),
}

/// A running conversation.
pub(crate) struct Conversation {
    jobs: Mutex<Option<std::sync::mpsc::Sender<Job>>>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// When it was last busy, and the jobs queued or running.
    activity: Arc<Activity>,
}

/// A conversation's activity: idle is counted from when its last job ended, and never while
/// one is queued or running (a long reply is not idleness).
#[derive(Debug)]
struct Activity {
    at: Mutex<std::time::Instant>,
    jobs: std::sync::atomic::AtomicUsize,
}

impl Activity {
    fn touch(&self) {
        if let Ok(mut t) = self.at.lock() {
            *t = std::time::Instant::now();
        }
    }

    fn started(&self) {
        self.jobs.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.touch();
    }

    fn ended(&self) {
        self.touch();
        self.jobs.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// What a conversation's thread needs from its campaign.
pub(crate) struct Setup {
    /// The vault.
    pub root: std::path::PathBuf,
    /// The campaign's live state.
    pub state: Arc<RwLock<Snapshot>>,
    /// The settings' history budget.
    pub history_budget: usize,
    /// The upstream's configuration (each conversation has its own connection pool: its
    /// connections live on its thread's runtime, which runs only while it plays a turn).
    pub upstream: Option<crate::llm::LlmConfig>,
    /// The campaign's shared memory of its session notes.
    pub note_memory: crate::play::NoteMemory,
    /// The campaign's shared recall of its sessions.
    pub recall: crate::play::SharedRecall,
    /// Becomes true when the server stops.
    pub shutdown: watch::Receiver<bool>,
    /// The campaign's id, for its events.
    pub campaign: String,
    /// The campaign's event stream: a reply that may give a secret away is told there.
    pub events: super::campaign::Publisher,
}

impl Conversation {
    /// Opens the session `name` (taking its lock) and starts its thread.
    pub(crate) async fn open(name: String, setup: Setup) -> Result<Conversation, String> {
        let (ready_tx, ready_rx) = oneshot::channel();
        let (tx, rx) = std::sync::mpsc::channel::<Job>();
        let thread_name = format!("vaultdm-session-{name}");
        let session = name.clone();
        let activity = Arc::new(Activity {
            at: Mutex::new(std::time::Instant::now()),
            jobs: std::sync::atomic::AtomicUsize::new(0),
        });
        let ran = activity.clone();
        let thread = std::thread::Builder::new()
            .name(thread_name)
            .spawn(move || run(session, setup, rx, ready_tx, &ran))
            .map_err(|e| format!("could not start the session's thread: {e}"))?;
        match ready_rx.await {
            Ok(Ok(())) => Ok(Conversation {
                jobs: Mutex::new(Some(tx)),
                thread: Mutex::new(Some(thread)),
                activity,
            }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(e)
            }
            Err(_) => Err("the session's thread stopped".into()),
        }
    }

    /// How long since its last job ended; zero while one is queued or running.
    pub(crate) fn idle_for(&self) -> std::time::Duration {
        if self.activity.jobs.load(std::sync::atomic::Ordering::SeqCst) > 0 {
            return std::time::Duration::ZERO;
        }
        self.activity
            .at
            .lock()
            .map(|t| t.elapsed())
            .unwrap_or_default()
    }

    fn send(&self, job: Job) -> bool {
        self.activity.started();
        let sent = self
            .jobs
            .lock()
            .ok()
            .and_then(|j| j.as_ref().map(|tx| tx.send(job).is_ok()))
            .unwrap_or(false);
        if !sent {
            self.activity.ended();
        }
        sent
    }

    /// Queues a turn; false if the conversation is closed.
    pub(crate) fn relay(&self, relay: Relay) -> bool {
        self.send(Job::Relay(Box::new(relay)))
    }

    /// The pending proposals.
    pub(crate) async fn pending(&self) -> Option<Vec<PendingView>> {
        let (tx, rx) = oneshot::channel();
        if !self.send(Job::Pending(tx)) {
            return None;
        }
        rx.await.ok()
    }

    /// Accepts or rejects proposals: the lines written or the count rejected, or why not.
    pub(crate) async fn decide(&self, d: Decision) -> Option<Result<Vec<String>, String>> {
        let (tx, rx) = oneshot::channel();
        if !self.send(Job::Decide(d, tx)) {
            return None;
        }
        rx.await.ok()
    }

    /// Takes back the session's last exchange (a reply the GM held back from a player and
    /// dropped: the DM must not remember saying it), if the log still holds `exchanges`
    /// exchanges — one played since is never taken. True when it was taken; `None` when the
    /// conversation is closed.
    pub(crate) async fn withdraw(&self, exchanges: usize) -> Option<Result<bool, String>> {
        let (tx, rx) = oneshot::channel();
        if !self.send(Job::Withdraw(exchanges, tx)) {
            return None;
        }
        rx.await.ok()
    }

    /// Ends the conversation after the turn in progress (which the server's shutdown cuts
    /// off and records), and waits for its session to be flushed and unlocked.
    pub(crate) fn close(&self) {
        if let Ok(mut j) = self.jobs.lock() {
            j.take();
        }
        if let Some(h) = self.thread.lock().ok().and_then(|mut t| t.take()) {
            let _ = h.join();
        }
    }
}

fn snapshot(state: &RwLock<Snapshot>) -> Snapshot {
    state
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
}

fn open_table(name: &str, setup: &Setup, snap: &Snapshot) -> Result<Table, String> {
    let store = Store::open(&setup.root, name).map_err(|e| e.to_string())?;
    let mut table = Table::new(
        snap.engine.clone(),
        Options::for_vault(&snap.context),
        None,
        store,
        setup.history_budget,
        snap.context.full_context_after_changes,
    )
    .map_err(|e| e.to_string())?;
    table.set_review(snap.review);
    table.share_note_memory(setup.note_memory.clone());
    table.share_recall(setup.recall.clone());
    // The front end keeps the conversation: no cold summaries (they would hold up the end of
    // every reply); the story so far comes from this session's log, recall from the
    // campaign's other sessions (those the GM did not exclude).
    table.set_memory_config(crate::config::MemoryConfig {
        summarise: false,
        ..snap.memory.clone()
    });
    Ok(table)
}

fn run(
    name: String,
    setup: Setup,
    jobs: std::sync::mpsc::Receiver<Job>,
    ready: oneshot::Sender<Result<(), String>>,
    activity: &Activity,
) {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = ready.send(Err(format!("could not start the session's runtime: {e}")));
            return;
        }
    };
    let session = name.clone();
    let notifier: crate::llm::Notifier = std::sync::Arc::new(move |n: &crate::llm::Notice| {
        eprintln!("vaultdm serve: session {session}: {n}");
    });
    let client = match setup.upstream.clone().map(LlmClient::new).transpose() {
        Ok(c) => c.map(|c| c.with_notifier(notifier)),
        Err(e) => {
            let _ = ready.send(Err(e.to_string()));
            return;
        }
    };
    let mut snap = snapshot(&setup.state);
    let mut table = match open_table(&name, &setup, &snap) {
        Ok(t) => t,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    for w in table.store().warnings() {
        eprintln!("vaultdm serve: session {name}: {w}");
    }
    let _ = ready.send(Ok(()));
    for job in jobs {
        let moved = setup
            .state
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .version
            != snap.version;
        if moved {
            let now = snapshot(&setup.state);
            let (changes, missed) = now.changes.since(snap.version);
            table.canon_reloaded(now.engine.clone(), changes);
            // More changes than the campaign keeps: the list would be partial, so the next
            // message carries the whole canon again.
            if missed {
                table.force_full();
            }
            table.context_settings(&now.context);
            table.set_review(now.review);
            snap = now;
        }
        match job {
            Job::Relay(r) => relay(&rt, &mut table, client.as_ref(), *r, &setup),
            Job::Withdraw(exchanges, tx) => {
                let _ = tx.send(withdraw(&mut table, exchanges));
            }
            Job::Pending(tx) => {
                let _ = tx.send(table.pending());
            }
            Job::Decide(d, tx) => {
                let result = match d {
                    Decision::Accept(n) => table.accept(&n).map(|w| {
                        w.map(|w| {
                            let applied = w.applied.is_some();
                            let plan = w.plan;
                            plan.planned
                                .into_iter()
                                .filter(|_| applied)
                                .map(|p| p.summary)
                                .chain(
                                    plan.unchanged
                                        .into_iter()
                                        .map(|u| format!("nothing to write: {}", u.summary)),
                                )
                                .chain(
                                    plan.rejected
                                        .into_iter()
                                        .map(|r| format!("not applied: {}", r.reason)),
                                )
                                .collect()
                        })
                        .unwrap_or_default()
                    }),
                    Decision::Reject(n) => table.reject(&n).map(|k| vec![format!("{k} rejected")]),
                };
                let _ = tx.send(result.map_err(|e| e.to_string()));
            }
        }
        table.log_changed();
        for n in table.take_notices() {
            eprintln!("vaultdm serve: session {name}: {n}");
        }
        activity.ended();
    }
}

/// The last exchange superseded (kept in the log, marked, out of the DM's history and the
/// memory) if the log holds `exchanges` live exchanges.
fn withdraw(table: &mut Table, exchanges: usize) -> Result<bool, String> {
    if table.store().history().len() != exchanges {
        return Ok(false);
    }
    table.supersede(1).map(|n| n > 0).map_err(|e| e.to_string())
}

fn relay(
    rt: &tokio::runtime::Runtime,
    table: &mut Table,
    client: Option<&LlmClient>,
    r: Relay,
    setup: &Setup,
) {
    let shutdown = setup.shutdown.clone();
    let Relay {
        message,
        earlier,
        supersede,
        log_had,
        system,
        model,
        max_tokens,
        extra,
        events,
    } = r;
    let has = table.store().history().len();
    if supersede > 0 && log_had.is_some_and(|n| n != has) {
        eprintln!(
            "vaultdm serve: session {}: the log was played elsewhere since the replaced reply (it holds {has} exchanges, not {}); the new reply is logged after it, nothing is taken back",
            table.store().name(),
            log_had.unwrap_or_default()
        );
    } else if supersede > 0 {
        if let Err(error) = table.supersede(supersede) {
            let error = SendError {
                error,
                message_saved: false,
                reply_saved: false,
            };
            let _ = events.send(Event::Done(Box::new(Err(error))));
            return;
        }
    }
    let Some(client) = client else {
        let error = SendError {
            error: crate::play::PlayError::Llm(crate::llm::LlmError::NotConfigured {
                what: "no upstream model".into(),
            }),
            message_saved: false,
            reply_saved: false,
        };
        let _ = events.send(Event::Done(Box::new(Err(error))));
        return;
    };
    let client = client.for_request(model.as_deref(), max_tokens, extra);
    let tokens = events.clone();
    let mut on_token = move |t: &str| {
        let _ = tokens.send(Event::Token(t.to_owned()));
    };
    let gone = events.clone();
    let cancel = async move {
        let mut shutdown = shutdown;
        tokio::select! {
            _ = gone.closed() => CutOff::Interrupted,
            r = shutdown.wait_for(|stop| *stop) => match r {
                Ok(_) => CutOff::Terminated,
                Err(_) => std::future::pending().await,
            },
        }
    };
    let result =
        rt.block_on(table.relay(&message, &earlier, &system, client, &mut on_token, cancel));
    // A reply stopped early (the front end went away, the server stops) dropped its upstream
    // response, but the connection's task lives on this thread's runtime, which runs only
    // inside `block_on`: run it a moment so the connection closes now and the provider stops
    // generating, instead of streaming on into a socket nobody reads until the next turn.
    let stopped_early = match &result {
        Ok(turn) => !turn.reply.complete,
        Err(_) => true,
    };
    if stopped_early {
        rt.block_on(async { tokio::time::sleep(std::time::Duration::from_millis(50)).await });
    }
    let done = result.map(|turn| Finished {
        turn,
        exchanges: table.store().history().len(),
    });
    if let Ok(f) = &done {
        if !f.turn.leaks.is_empty() {
            let data = super::held::leak_event(
                &setup.campaign,
                table.store().name(),
                f.exchanges,
                &f.turn.leaks,
            );
            super::campaign::publish(&setup.events, "leak", &data);
        }
    }
    let _ = events.send(Event::Done(Box::new(done)));
}
