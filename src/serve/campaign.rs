//! One served vault: its live canon (reloaded by a watcher thread the moment a note
//! changes), its check report, the canon-change events, the upstream client and the open
//! conversations.

use super::conversation::Conversation;
use crate::canon::Loaded;
use crate::check::Report;
use crate::config::{ContextConfig, MemoryConfig, Review};
use crate::context::Engine;
use crate::llm::settings::{LlmFlags, LlmSettings};
use crate::llm::LlmClient;
use crate::watch::{LiveWatch, WatchOptions};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tokio::sync::broadcast;

/// Canon changes kept for conversations that have not caught up yet.
const KEPT_CHANGES: usize = 500;

/// The campaign as it is now; replaced whole on every reload.
#[derive(Clone)]
pub(crate) struct Snapshot {
    /// Bumped on every reload.
    pub version: u64,
    /// The context engine over the current canon and templates.
    pub engine: Engine,
    /// `[context]` settings.
    pub context: ContextConfig,
    /// `[write] review`.
    pub review: Review,
    /// `[memory]` settings.
    pub memory: MemoryConfig,
    /// What `check` says now.
    pub check: Arc<Report>,
    /// The campaign's name, from canon.
    pub name: String,
    /// Canon changes since the server started, for conversations to catch up.
    pub changes: Arc<Changes>,
}

/// Canon changes by the version that brought them, oldest first: the last
/// `KEPT_CHANGES`, and the newest version whose changes are no longer all kept.
#[derive(Debug, Clone, Default)]
pub(crate) struct Changes {
    kept: Vec<(u64, String)>,
    dropped: u64,
}

impl Changes {
    /// Adds a version's changes, dropping the oldest past `KEPT_CHANGES`.
    pub(crate) fn push(&mut self, version: u64, changes: impl IntoIterator<Item = String>) {
        self.kept.extend(changes.into_iter().map(|c| (version, c)));
        let excess = self.kept.len().saturating_sub(KEPT_CHANGES);
        for (v, _) in self.kept.drain(..excess) {
            self.dropped = self.dropped.max(v);
        }
    }

    /// The changes after `version`, and whether some of them are no longer kept.
    pub(crate) fn since(&self, version: u64) -> (Vec<String>, bool) {
        let changes = self
            .kept
            .iter()
            .filter(|(v, _)| *v > version)
            .map(|(_, c)| c.clone())
            .collect();
        (changes, self.dropped > version)
    }
}

impl Snapshot {
    fn of(root: &Path, loaded: &Loaded, engine: Engine, version: u64) -> Snapshot {
        Snapshot {
            version,
            name: loaded.built.campaign.name.clone(),
            engine,
            context: loaded.config.context.clone(),
            review: loaded.config.write.review,
            memory: loaded.config.memory.clone(),
            check: Arc::new(Report::of(root, loaded)),
            changes: Arc::default(),
        }
    }
}

/// The upstream provider of a campaign, or why there is none.
pub(crate) enum Upstream {
    /// Ready.
    Ready {
        /// The client (its model is the default one).
        client: Box<LlmClient>,
        /// The history budget of the settings.
        history_budget: usize,
    },
    /// Not configured (the CLI's own words).
    Missing(String),
}

/// One event of a campaign's stream (`GET /campaigns/{id}/events`): its name and its JSON.
#[derive(Debug, Clone)]
pub(crate) struct Published {
    /// The event's name: `reload`, `leak`, `held`, `held_decided`.
    pub kind: &'static str,
    /// Its data.
    pub json: String,
}

/// Where a campaign's events are sent (the watcher, the conversations, the proxy).
pub(crate) type Publisher = broadcast::Sender<Published>;

/// Sends an event (no subscriber is not an error).
pub(crate) fn publish(events: &Publisher, kind: &'static str, data: &serde_json::Value) {
    let _ = events.send(Published {
        kind,
        json: data.to_string(),
    });
}

/// One served vault.
pub(crate) struct Campaign {
    /// Its id in URLs and model names: the vault folder's name as a slug.
    pub id: String,
    /// The vault folder.
    pub root: PathBuf,
    pub(super) state: Arc<RwLock<Snapshot>>,
    events: Publisher,
    /// Replies held back from a player until the GM decides (`serve --hold-leaks`).
    pub held: super::held::Holds,
    /// The upstream provider.
    pub upstream: Upstream,
    /// Open conversations by session name.
    conversations: Mutex<HashMap<String, Arc<Conversation>>>,
    /// Conversations open at once (`--max-conversations`): opening one more closes the
    /// least recently used idle one.
    pub max_conversations: usize,
    /// Held while a conversation opens (two requests of a new conversation at once).
    opening: tokio::sync::Mutex<()>,
    /// The session notes' memory, indexed once per canon for every conversation.
    note_memory: crate::play::NoteMemory,
    /// The recall of the campaign's sessions, opened once for every conversation.
    recall: crate::play::SharedRecall,
    stop: Arc<AtomicBool>,
    watcher: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// How the watcher reads the folder.
    pub backend: String,
}

/// Why a conversation could not be opened.
#[derive(Debug)]
#[non_exhaustive]
pub(crate) enum OpenError {
    /// Its session could not be opened (another process holds it, a bad name, …).
    Busy(String),
    /// The campaign has as many conversations open as it may, all mid-turn.
    Full(String),
}

/// Why a vault cannot be served.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum CampaignError {
    /// The vault could not be loaded or watched.
    #[error("{}: {source}", root.display())]
    Load {
        /// The vault.
        root: PathBuf,
        /// Why.
        source: crate::watch::WatchError,
    },
    /// The watcher thread could not start.
    #[error("could not start the watcher thread: {0}")]
    Thread(std::io::Error),
    /// The folder holds no notes.
    #[error("{} holds no notes (no .md files outside hidden folders): is this your vault? Pass --vault DIR with the folder Obsidian opens", .0.display())]
    Empty(PathBuf),
}

/// `My Campaign (2)` → `my-campaign-2`.
pub(crate) fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    if out.is_empty() {
        "campaign".into()
    } else {
        out
    }
}

impl Campaign {
    /// Loads and starts watching a vault; `flags` are the `serve` command's LLM flags.
    pub(crate) fn open(
        id: String,
        root: &Path,
        flags: &LlmFlags,
        watch: &WatchOptions,
    ) -> Result<Campaign, CampaignError> {
        let lw = LiveWatch::start(root, watch).map_err(|source| CampaignError::Load {
            root: root.to_owned(),
            source,
        })?;
        let loaded = lw.live().loaded();
        if loaded.vault.notes.is_empty() {
            return Err(CampaignError::Empty(root.to_owned()));
        }
        let snapshot = Snapshot::of(root, loaded, lw.live().engine().clone(), 0);
        let upstream = match crate::llm::settings::resolve_here(flags, loaded.config.llm.as_ref()) {
            Ok(s) => upstream_of(&s),
            Err(e) => Upstream::Missing(e.to_string()),
        };
        let backend = match lw.watcher().fallback_reason() {
            Some(why) => format!("polling ({why})"),
            None => lw.watcher().backend().to_string(),
        };
        let state = Arc::new(RwLock::new(snapshot));
        let (events, _) = broadcast::channel::<Published>(256);
        let stop = Arc::new(AtomicBool::new(false));
        let watcher = std::thread::Builder::new()
            .name(format!("vaultdm-watch-{id}"))
            .spawn({
                let (state, events, stop) = (state.clone(), events.clone(), stop.clone());
                let root = root.to_owned();
                move || watch_loop(lw, &root, &state, &events, &stop)
            })
            .map_err(CampaignError::Thread)?;
        Ok(Campaign {
            id,
            root: root.to_owned(),
            state,
            events,
            held: super::held::Holds::default(),
            upstream,
            conversations: Mutex::new(HashMap::new()),
            max_conversations: super::DEFAULT_MAX_CONVERSATIONS,
            opening: tokio::sync::Mutex::new(()),
            note_memory: crate::play::NoteMemory::default(),
            recall: crate::play::SharedRecall::default(),
            stop,
            watcher: Mutex::new(Some(watcher)),
            backend,
        })
    }

    /// The campaign as it is now.
    pub(crate) fn snapshot(&self) -> Snapshot {
        self.state
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The campaign's events: one per reload (as `watch --format json` prints), per reply
    /// that may give a secret away, per reply held for the GM and per decision on one.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Published> {
        self.events.subscribe()
    }

    /// Tells the campaign's event stream (no subscriber is not an error).
    pub(crate) fn publish(&self, kind: &'static str, data: &serde_json::Value) {
        publish(&self.events, kind, data);
    }

    /// The conversation of session `name`, opened on first use.
    pub(crate) async fn conversation(
        &self,
        name: &str,
        shutdown: &tokio::sync::watch::Receiver<bool>,
    ) -> Result<Arc<Conversation>, OpenError> {
        let find = || {
            self.conversations
                .lock()
                .ok()
                .and_then(|c| c.get(name).cloned())
        };
        if let Some(c) = find() {
            return Ok(c);
        }
        let _opening = self.opening.lock().await;
        if let Some(c) = find() {
            return Ok(c);
        }
        let (history_budget, upstream) = match &self.upstream {
            Upstream::Ready {
                history_budget,
                client,
            } => (*history_budget, Some(client.config().clone())),
            Upstream::Missing(_) => (crate::llm::settings::DEFAULT_HISTORY_BUDGET, None),
        };
        let setup = super::conversation::Setup {
            root: self.root.clone(),
            state: self.state.clone(),
            history_budget,
            upstream,
            note_memory: self.note_memory.clone(),
            recall: self.recall.clone(),
            shutdown: shutdown.clone(),
            campaign: self.id.clone(),
            events: self.events.clone(),
        };
        self.make_room().await.map_err(OpenError::Full)?;
        let c = Arc::new(
            Conversation::open(name.to_owned(), setup)
                .await
                .map_err(OpenError::Busy)?,
        );
        if let Ok(mut m) = self.conversations.lock() {
            m.insert(name.to_owned(), c.clone());
        }
        Ok(c)
    }

    /// Keeps the open conversations under the cap before one more opens: the least
    /// recently used one that no request holds is closed (its session saved and unlocked;
    /// it opens again on its next request). When every open one is mid-turn, the new one is
    /// refused rather than let threads and memory grow without bound.
    async fn make_room(&self) -> Result<(), String> {
        let evicted = {
            let Ok(mut m) = self.conversations.lock() else {
                return Ok(());
            };
            if m.len() < self.max_conversations {
                return Ok(());
            }
            let lru = m
                .iter()
                .filter(|(_, c)| Arc::strong_count(c) == 1)
                .max_by_key(|(_, c)| c.idle_for())
                .map(|(n, _)| n.clone());
            match lru.and_then(|n| m.remove(&n)) {
                Some(c) => c,
                None => {
                    return Err(format!(
                        "{} conversations are in play at once on this campaign (the most `--max-conversations` allows); try again when one ends",
                        m.len()
                    ))
                }
            }
        };
        let _ = tokio::task::spawn_blocking(move || evicted.close()).await;
        Ok(())
    }

    /// An open conversation, if there is one.
    pub(crate) fn open_conversation(&self, name: &str) -> Option<Arc<Conversation>> {
        self.conversations
            .lock()
            .ok()
            .and_then(|c| c.get(name).cloned())
    }

    /// Closes the conversations idle for `idle` or longer that no request holds (a turn
    /// still streaming ends first): their sessions are flushed and unlocked, and open again
    /// on their next request. Returns how many were closed.
    pub(crate) fn close_idle(&self, idle: Duration) -> usize {
        let idle_ones: Vec<Arc<Conversation>> = match self.conversations.lock() {
            Ok(mut m) => {
                let names: Vec<String> = m
                    .iter()
                    .filter(|(_, c)| Arc::strong_count(c) == 1 && c.idle_for() >= idle)
                    .map(|(n, _)| n.clone())
                    .collect();
                names.iter().filter_map(|n| m.remove(n)).collect()
            }
            Err(_) => Vec::new(),
        };
        for c in &idle_ones {
            c.close();
        }
        idle_ones.len()
    }

    /// Stops the watcher and closes every conversation (their session records are flushed
    /// and their locks released).
    pub(crate) fn close(&self) {
        self.stop.store(true, Ordering::SeqCst);
        let conversations: Vec<_> = self
            .conversations
            .lock()
            .map(|mut c| c.drain().map(|(_, v)| v).collect())
            .unwrap_or_default();
        for c in conversations {
            c.close();
        }
        if let Some(h) = self.watcher.lock().ok().and_then(|mut w| w.take()) {
            let _ = h.join();
        }
    }
}

fn upstream_of(s: &LlmSettings) -> Upstream {
    match s.to_config().and_then(LlmClient::new) {
        Ok(client) => Upstream::Ready {
            client: Box::new(client),
            history_budget: s.history_budget.value,
        },
        Err(e) => Upstream::Missing(e.to_string()),
    }
}

fn watch_loop(
    mut lw: LiveWatch,
    root: &Path,
    state: &RwLock<Snapshot>,
    events: &Publisher,
    stop: &AtomicBool,
) {
    while !stop.load(Ordering::SeqCst) {
        for e in lw.take_errors() {
            eprintln!("vaultdm serve: watch {}: {e}", root.display());
        }
        let Some(reload) = lw.wait_reload(Duration::from_millis(100)) else {
            continue;
        };
        if reload.is_empty() {
            continue;
        }
        let live = lw.live();
        {
            let mut s = state
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let version = s.version + 1;
            let mut next = Snapshot::of(root, live.loaded(), live.engine().clone(), version);
            next.changes = std::mem::take(&mut s.changes);
            Arc::make_mut(&mut next.changes)
                .push(version, reload.changes.iter().map(ToString::to_string));
            *s = next;
        }
        if let Ok(json) = serde_json::to_string(&reload) {
            // No subscriber is not an error.
            let _ = events.send(Published {
                kind: "reload",
                json,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{slug, Changes, KEPT_CHANGES};

    #[test]
    fn changes_since_a_version_and_whether_some_were_dropped() {
        let mut c = Changes::default();
        c.push(1, ["a".to_string()]);
        c.push(3, ["b".to_string(), "c".to_string()]); // version 2 changed nothing
        assert_eq!(c.since(1), (vec!["b".to_string(), "c".to_string()], false));
        assert_eq!(c.since(0).0.len(), 3);
        c.push(4, (0..KEPT_CHANGES).map(|i| format!("x{i}")));
        let (kept, missed) = c.since(1);
        assert_eq!(kept.len(), KEPT_CHANGES);
        assert!(missed, "versions 1-3 fell out");
        assert_eq!(c.since(3), (kept.clone(), false));
    }

    #[test]
    fn slugs() {
        assert_eq!(slug("Coldharrow"), "coldharrow");
        assert_eq!(slug("My Campaign (2)"), "my-campaign-2");
        assert_eq!(slug("  --  "), "campaign");
        assert_eq!(slug("Ærendil's Vault"), "ærendil-s-vault");
    }
}
