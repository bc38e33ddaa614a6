//! `vaultdm serve`: the vault's canon behind an OpenAI-compatible endpoint, a canon API and
//! an inspector page, for the chat front ends GMs already use.
//!
//! * [`campaign`]: one served vault on live canon (a watcher thread per vault).
//! * [`conversation`]: one front-end conversation = one session, played on its own thread.
//! * [`proxy`]: `POST /v1/chat/completions`, `GET /v1/models`.
//! * [`api`]: `/campaigns…` and the inspector page at `/`.
//! * [`openai`]: the wire format.
//! * [`guard`]: the bearer tokens (the GM's and the players'), Host and Origin checks, CORS.
//! * [`role`]: what a player may call and what a player's answer may carry.
//! * [`tasks`]: front ends' background tasks (titles, tags, summaries), passed through.
//! * [`threads`]: which session a request without the session header continues.
//!
//! docs/serve.md is the user's guide.

pub(crate) mod api;
pub(crate) mod campaign;
pub(crate) mod conversation;
pub(crate) mod guard;
pub(crate) mod held;
pub(crate) mod openai;
pub(crate) mod proxy;
pub(crate) mod role;
pub(crate) mod tasks;
pub(crate) mod threads;

#[cfg(test)]
mod tests;

use crate::llm::settings::LlmFlags;
use crate::watch::WatchOptions;
use axum::extract::DefaultBodyLimit;
use axum::http::Method;
use axum::routing::{get, post, MethodRouter};
use axum::Router;
use campaign::Campaign;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::watch;

/// Request limits: sizes, the time a client has to send a request, connections at once.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Largest request body.
    pub max_body_bytes: usize,
    /// Longest player message (characters).
    pub max_message_chars: usize,
    /// Connections served at once; one more is answered `503` and closed at once, so slow
    /// or idle clients can never use up the process's file descriptors.
    pub max_connections: usize,
    /// Time to send a request's headers, and the longest a kept-alive connection waits idle
    /// for its next request (checked before the token: a client that never finishes its
    /// headers is dropped either way).
    pub header_timeout: std::time::Duration,
    /// Time to send a request's body once its headers are in.
    pub body_timeout: std::time::Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_body_bytes: 8 * 1024 * 1024,
            max_message_chars: 100_000,
            max_connections: 256,
            header_timeout: std::time::Duration::from_secs(30),
            body_timeout: std::time::Duration::from_secs(30),
        }
    }
}

/// What `serve` was asked for.
#[derive(Debug, Clone)]
pub(crate) struct ServeOptions {
    /// The vaults.
    pub vaults: Vec<PathBuf>,
    /// Where to listen.
    pub listen: SocketAddr,
    /// The GM's bearer token (`None`: no auth, loopback only; a server with player tokens
    /// needs one).
    pub token: Option<String>,
    /// The players' tokens: each may only chat ([`role::Role::Player`]).
    pub player_tokens: Vec<String>,
    /// Origins allowed to call from a browser page (CORS).
    pub cors: Vec<String>,
    /// Extra host names accepted in `Host` on a loopback bind.
    pub hosts: Vec<String>,
    /// Size limits.
    pub limits: Limits,
    /// The LLM flags (the upstream).
    pub llm: LlmFlags,
    /// How to watch the vaults.
    pub watch: WatchOptions,
    /// A conversation idle this long is closed (its session unlocked) until its next request.
    pub close_idle_after: std::time::Duration,
    /// Conversations open at once per campaign (each holds a thread and its session's
    /// caches); opening one more closes the least recently used idle one first.
    pub max_conversations: usize,
    /// The upstream model for front ends' background tasks (`None`: the one each asks for).
    pub task_model: Option<String>,
    /// Hold a player's reply that may give a GM secret away until the GM releases it, at
    /// most this long ([`held`]); `None`: replies go out as they arrive.
    pub hold_leaks: Option<std::time::Duration>,
}

/// Conversations open at once per campaign unless `--max-conversations` says otherwise.
pub(crate) const DEFAULT_MAX_CONVERSATIONS: usize = 64;

/// The running server's shared state.
pub(crate) struct App {
    /// Served campaigns.
    pub campaigns: Vec<Arc<Campaign>>,
    /// Limits.
    pub limits: Limits,
    /// Becomes true when the server stops.
    pub shutdown: watch::Receiver<bool>,
    guard: guard::Guard,
    ids: AtomicU64,
    /// Each campaign's conversations by their history (see [`threads`]).
    threads: Mutex<HashMap<String, threads::Threads>>,
    /// The upstream model background tasks go to (`None`: the one the request asked for).
    task_model: Option<String>,
    /// How long a player's reply that may give a secret away waits for the GM (`None`: no
    /// reply is held).
    hold_leaks: Option<std::time::Duration>,
}

impl App {
    /// The server's state for `opts`, with no socket: refuses a short token off loopback,
    /// loads every vault (a folder named twice is one campaign). Errors name the vault.
    /// The sender stops the server (and every conversation) when it sends `true` or is
    /// dropped. [`start`] binds the address after this; the tests serve [`router`] of it
    /// in-process.
    pub(crate) async fn open(
        opts: &ServeOptions,
    ) -> anyhow::Result<(Arc<App>, watch::Sender<bool>)> {
        check_tokens(opts)?;
        let mut campaigns: Vec<Arc<Campaign>> = Vec::new();
        let (stop, shutdown) = watch::channel(false);
        for given in &opts.vaults {
            let root = std::fs::canonicalize(given).unwrap_or_else(|_| given.clone());
            // The same folder named twice is one campaign.
            if campaigns.iter().any(|c| c.root == root) {
                continue;
            }
            let name = root
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| root.display().to_string());
            let mut id = campaign::slug(&name);
            let mut n = 2;
            while campaigns.iter().any(|c| c.id == id) {
                id = format!("{}-{n}", campaign::slug(&name));
                n += 1;
            }
            let (llm, watch) = (opts.llm.clone(), opts.watch.clone());
            let mut c =
                tokio::task::spawn_blocking(move || Campaign::open(id, &root, &llm, &watch))
                    .await??;
            c.max_conversations = opts.max_conversations.max(1);
            campaigns.push(Arc::new(c));
        }
        let app = Arc::new(App {
            campaigns,
            limits: opts.limits,
            shutdown,
            // The bound address has the IP asked for (only a port 0 changes): whether it is
            // loopback is known before binding.
            guard: guard::Guard::new(opts, player_routes()),
            ids: AtomicU64::new(1),
            threads: Mutex::new(HashMap::new()),
            task_model: opts.task_model.clone(),
            hold_leaks: opts.hold_leaks,
        });
        Ok((app, stop))
    }

    fn next_id(&self) -> u64 {
        self.ids.fetch_add(1, Ordering::Relaxed)
    }

    /// Works on a campaign's [`threads::Threads`] (read from the vault on first use).
    fn threads<T>(&self, campaign: &Campaign, f: impl FnOnce(&mut threads::Threads) -> T) -> T {
        let mut all = self
            .threads
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(all
            .entry(campaign.id.clone())
            .or_insert_with(|| threads::Threads::load(&campaign.root)))
    }

    /// Records a turn of a conversation (see [`threads`]); a state that cannot be kept on
    /// disk is said on stderr (the conversation goes on; after a restart it would continue in
    /// a new session).
    fn record_turn(&self, campaign: &Campaign, session: &str, step: threads::Step) {
        if let Err(e) = self.threads(campaign, |t| t.record(session, step)) {
            eprintln!(
                "vaultdm serve: {}: could not keep the conversation state of session {session} ({e}); after a restart it continues in a new session",
                campaign.id
            );
        }
    }
}

/// Refuses tokens that would not hold: one shorter than [`MIN_TOKEN_CHARS`] off loopback,
/// player tokens without a GM token (a request without a token would have no role the GM
/// could trust: `serve` makes the GM one), a player token that is the GM's.
fn check_tokens(opts: &ServeOptions) -> anyhow::Result<()> {
    fn given(t: &str) -> Option<&str> {
        Some(t.trim()).filter(|t| !t.is_empty())
    }
    let gm = opts.token.as_deref().and_then(given);
    let players: Vec<&str> = opts.player_tokens.iter().filter_map(|t| given(t)).collect();
    if !opts.listen.ip().is_loopback() {
        let short = |t: &&str| t.chars().count() < MIN_TOKEN_CHARS;
        if let Some(t) = gm.filter(short) {
            anyhow::bail!(
                "the token is {} characters; on {} (reachable from other machines) it must be at least {MIN_TOKEN_CHARS} — leave --token and VAULTDM_SERVE_TOKEN unset and vaultdm makes and prints a strong one",
                t.chars().count(),
                opts.listen
            );
        }
        if let Some(t) = players.iter().copied().find(short) {
            anyhow::bail!(
                "a player token is {} characters; on {} (reachable from other machines) it must be at least {MIN_TOKEN_CHARS} — `openssl rand -hex 24` makes a strong one",
                t.chars().count(),
                opts.listen
            );
        }
    }
    match gm {
        None if !players.is_empty() => anyhow::bail!(
            "player tokens need a GM token beside them (a request without a token must not have the GM's rights): set --token or VAULTDM_SERVE_TOKEN"
        ),
        Some(gm) if players.contains(&gm) => anyhow::bail!(
            "a player token is the GM's token: give each player a token of their own (--player-token)"
        ),
        _ => Ok(()),
    }
}

/// One route of the table: a method and path, its handler, and whether a player's token may
/// call it.
struct Route {
    method: Method,
    path: &'static str,
    handler: MethodRouter<Arc<App>>,
    players: bool,
}

impl Route {
    /// A route for the GM only: every route is, unless it says [`Route::for_players`].
    fn new(method: Method, path: &'static str, handler: MethodRouter<Arc<App>>) -> Route {
        Route {
            method,
            path,
            handler,
            players: false,
        }
    }

    /// Opens the route to players' tokens too (the guard answers them `403 gm_only` on every
    /// other route, before the body is read). A player's answers are stripped of what is
    /// GM-only ([`role`]).
    fn for_players(self) -> Route {
        Route {
            players: true,
            ..self
        }
    }
}

/// The route table: every method and path the server answers, its handler, and who may
/// call it (GM-only unless [`Route::for_players`]). [`router`] mounts each one, the guard
/// asks it what a player may call ([`player_routes`]); the tests walk it (every route wants
/// the token, answers its method, refuses a player's token unless open to players).
fn routes() -> Vec<Route> {
    vec![
        Route::new(Method::GET, "/", get(api::inspector)),
        Route::new(Method::GET, "/v1/models", get(proxy::models)).for_players(),
        Route::new(
            Method::POST,
            "/v1/chat/completions",
            post(proxy::completions),
        )
        .for_players(),
        Route::new(Method::GET, "/campaigns", get(api::campaigns)),
        Route::new(Method::GET, "/campaigns/{id}/context", get(api::context)),
        Route::new(
            Method::POST,
            "/campaigns/{id}/context",
            post(api::context_post),
        ),
        Route::new(Method::GET, "/campaigns/{id}/check", get(api::check)),
        Route::new(Method::GET, "/campaigns/{id}/events", get(api::events)),
        Route::new(Method::GET, "/campaigns/{id}/sessions", get(api::sessions)),
        Route::new(
            Method::GET,
            "/campaigns/{id}/sessions/{session}/pending",
            get(api::pending),
        ),
        Route::new(
            Method::POST,
            "/campaigns/{id}/sessions/{session}/accept",
            post(api::accept),
        ),
        Route::new(
            Method::POST,
            "/campaigns/{id}/sessions/{session}/reject",
            post(api::reject),
        ),
        Route::new(Method::GET, "/campaigns/{id}/held", get(held::list)),
        Route::new(
            Method::POST,
            "/campaigns/{id}/held/{n}/release",
            post(held::release),
        ),
        Route::new(
            Method::POST,
            "/campaigns/{id}/held/{n}/drop",
            post(held::drop_held),
        ),
    ]
}

/// The methods and paths of the table open to players.
fn player_routes() -> Vec<(Method, &'static str)> {
    routes()
        .into_iter()
        .filter(|r| r.players)
        .map(|r| (r.method, r.path))
        .collect()
}

/// The routes, behind the guard.
pub(crate) fn router(app: Arc<App>) -> Router {
    let limit = app.limits.max_body_bytes;
    routes()
        .into_iter()
        // Two methods on one path are merged into one route.
        .fold(Router::new(), |r, route| r.route(route.path, route.handler))
        .fallback(api::not_found)
        .layer(DefaultBodyLimit::max(limit))
        // Inside the guard: a body is read only from a client that passed it.
        .layer(axum::middleware::from_fn_with_state(
            app.clone(),
            guard::body_within,
        ))
        .layer(axum::middleware::from_fn_with_state(
            app.clone(),
            guard::check,
        ))
        .with_state(app)
}

/// A server that is listening.
pub(crate) struct Running {
    /// The address bound (the port is real when 0 was asked).
    pub addr: SocketAddr,
    /// The campaigns served.
    pub campaigns: Vec<Arc<Campaign>>,
    app: Arc<App>,
    listener: tokio::net::TcpListener,
    stop: watch::Sender<bool>,
    close_idle_after: std::time::Duration,
}

/// The shortest token accepted on an address other than loopback: anyone who can reach the
/// server may try tokens, and a short one falls to a few thousand requests.
pub(crate) const MIN_TOKEN_CHARS: usize = 16;

/// Loads every vault ([`App::open`]), binds the address. Errors name the vault or the
/// address.
pub(crate) async fn start(opts: ServeOptions) -> anyhow::Result<Running> {
    let (app, stop) = App::open(&opts).await?;
    let listener = tokio::net::TcpListener::bind(opts.listen)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", opts.listen))?;
    let addr = listener.local_addr()?;
    Ok(Running {
        addr,
        campaigns: app.campaigns.clone(),
        app,
        listener,
        stop,
        close_idle_after: opts.close_idle_after,
    })
}

impl Running {
    /// Serves until `until` resolves, then stops: replies in progress are cut off and
    /// recorded, every session is flushed and unlocked, the watchers stop.
    pub(crate) async fn serve(
        self,
        until: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        let Running {
            app,
            listener,
            stop,
            campaigns,
            close_idle_after,
            ..
        } = self;
        let mut stopped = stop.subscribe();
        // Idle conversations give their sessions back (a `chat` or `review` may want them).
        let reaper = {
            let campaigns = campaigns.clone();
            let tick = (close_idle_after / 4).clamp(
                std::time::Duration::from_millis(200),
                std::time::Duration::from_secs(60),
            );
            tokio::spawn(async move {
                let mut every = tokio::time::interval(tick);
                every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    every.tick().await;
                    let campaigns = campaigns.clone();
                    let _ = tokio::task::spawn_blocking(move || {
                        for c in &campaigns {
                            let n = c.close_idle(close_idle_after);
                            if n > 0 {
                                eprintln!(
                                    "vaultdm serve: {}: closed {n} idle conversation(s); their sessions are saved and unlocked",
                                    c.id
                                );
                            }
                        }
                    })
                    .await;
                }
            })
        };
        let signal = async move {
            until.await;
            let _ = stop.send(true);
        };
        let limits = app.limits;
        let connections = Arc::new(tokio::sync::Semaphore::new(limits.max_connections.max(1)));
        let accept = tokio::spawn(accept_loop(
            listener,
            router(app),
            limits,
            connections.clone(),
            stopped.clone(),
        ));
        signal.await;
        let _ = stopped.wait_for(|s| *s).await;
        reaper.abort();
        let _ = accept.await;
        // Streams end on their own once their turns are cut off; give them a moment (every
        // connection gives its permit back when it ends).
        let all = u32::try_from(limits.max_connections.max(1)).unwrap_or(u32::MAX);
        let _ = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            connections.acquire_many(all),
        )
        .await;
        tokio::task::spawn_blocking(move || {
            for c in &campaigns {
                c.close();
            }
        })
        .await?;
        Ok(())
    }
}

/// What a client over the connection cap gets before its connection is closed.
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: 114\r\n\r\n{\"error\":{\"message\":\"too many connections at once; try again\",\"type\":\"server_busy\",\"code\":\"too_many_connections\"}}";

/// Accepts connections until the server stops: at most `limits.max_connections` at once
/// (one more is answered [`BUSY`] and closed), each with a header read timeout that also
/// ends a kept-alive connection left idle, and shut down gracefully when the server stops.
async fn accept_loop(
    listener: tokio::net::TcpListener,
    router: Router,
    limits: Limits,
    connections: Arc<tokio::sync::Semaphore>,
    mut stopped: watch::Receiver<bool>,
) {
    loop {
        let stream = tokio::select! {
            r = listener.accept() => match r {
                Ok((stream, _)) => stream,
                // Out of descriptors (or a connection reset before it was accepted): wait
                // for some to come back rather than spin.
                Err(_) => {
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = async { let _ = stopped.wait_for(|s| *s).await; } => return,
        };
        let Ok(permit) = connections.clone().try_acquire_owned() else {
            // Never queued: a refusal now, and the descriptor back at once.
            let _ = stream.try_write(BUSY);
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let service = hyper_util::service::TowerToHyperService::new(router.clone());
        let mut stop = stopped.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(limits.header_timeout);
            let conn = builder.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                () = async { let _ = stop.wait_for(|s| *s).await; } => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
        });
    }
}
