//! `vaultdm serve`: parse the flags, start the server, print where it listens, stop on
//! Ctrl-C or SIGTERM.

use super::llm_args::LlmArgs;
use super::Outcome;
use crate::serve::{Limits, Running, ServeOptions};
use crate::watch::WatchOptions;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `serve`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The vaults to serve (each a campaign, its id the folder's name); with none, --vault
    /// or the vault found as for every command.
    #[arg(value_name = "DIR")]
    pub vaults: Vec<PathBuf>,
    /// Where to listen. Anything but a loopback address needs a token (the GM's: one is made
    /// and printed when none is set).
    #[arg(long, default_value = "127.0.0.1:8765", value_name = "ADDR:PORT")]
    pub listen: SocketAddr,
    /// More vaults to serve (the same as naming them as arguments).
    #[arg(long = "also", value_name = "DIR")]
    pub also: Vec<PathBuf>,
    /// The GM's bearer token: every route (the inspector, the canon API, the DM's
    /// proposals, the chat).
    #[arg(long, env = "VAULTDM_SERVE_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// A player's bearer token: the chat only (completions and models), with nothing
    /// GM-only in its answers; repeat, or separate with commas, for one per player. With a
    /// player token set, requests without a token are refused even on loopback, and a GM
    /// token is made and printed when none is set.
    #[arg(
        long = "player-token",
        env = "VAULTDM_SERVE_PLAYER_TOKEN",
        hide_env_values = true,
        value_delimiter = ',',
        value_name = "TOKEN"
    )]
    pub player_tokens: Vec<String>,
    /// A web page origin allowed to call the server from a browser (CORS), e.g.
    /// http://localhost:3000; repeat for more.
    #[arg(long = "cors-origin", value_name = "URL")]
    pub cors: Vec<String>,
    /// A host name accepted in requests to a loopback address besides localhost names.
    #[arg(long = "allow-host", value_name = "NAME")]
    pub hosts: Vec<String>,
    /// Largest request body, in bytes.
    #[arg(long, default_value_t = Limits::default().max_body_bytes)]
    pub max_body_bytes: usize,
    /// Longest player message, in characters.
    #[arg(long, default_value_t = Limits::default().max_message_chars)]
    pub max_message_chars: usize,
    /// Connections served at once; one more is answered 503 and closed.
    #[arg(long, default_value_t = Limits::default().max_connections)]
    pub max_connections: usize,
    /// Seconds a client has to send a request's headers (and the longest a kept-alive
    /// connection may sit idle), and then its body.
    #[arg(long, value_name = "SECONDS", default_value_t = Limits::default().header_timeout.as_secs())]
    pub request_timeout: u64,
    /// Conversations open at once per campaign; opening one more closes the least recently
    /// used idle one (its session is saved and unlocked, and opens again when it is next used).
    #[arg(long, default_value_t = crate::serve::DEFAULT_MAX_CONVERSATIONS)]
    pub max_conversations: usize,
    /// Close a conversation idle for this many seconds (its session is saved and unlocked,
    /// and opens again on its next request).
    #[arg(long, value_name = "SECONDS", default_value_t = 1800)]
    pub close_idle_after: u64,
    /// The upstream model front ends' background tasks (titles, tags, follow-ups,
    /// summaries) go to, without canon: a small, fast one keeps them off the DM's model
    /// (default: the model each request asks for).
    #[arg(long, value_name = "MODEL")]
    pub task_model: Option<String>,
    /// Hold a reply to a player that may give away a GM secret until the GM releases it
    /// (`POST /campaigns/ID/held/N/release`) or drops it; nothing of a player's reply is
    /// streamed before it is checked (docs/secrets.md).
    #[arg(long)]
    pub hold_leaks: bool,
    /// Seconds a held reply waits for the GM before it is dropped.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 120,
        requires = "hold_leaks"
    )]
    pub hold_for: u64,
    /// Poll the folders instead of using native file events.
    #[arg(long)]
    pub poll: bool,
    /// The upstream LLM (as for `chat`).
    #[command(flatten)]
    pub llm: LlmArgs,
}

/// A token nobody can guess: 24 random bytes as hex.
fn new_token() -> anyhow::Result<String> {
    use std::io::Read;
    let mut b = [0u8; 24];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut b)?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// Runs `serve` until Ctrl-C or SIGTERM.
pub(super) fn execute(vault: Option<PathBuf>, args: Args) -> anyhow::Result<Outcome> {
    let vaults = vaults_of(vault, &args)?;
    let mut token = args.token.clone().filter(|t| !t.trim().is_empty());
    let players = args
        .player_tokens
        .iter()
        .filter(|t| !t.trim().is_empty())
        .count();
    let mut made = false;
    // Off loopback, and beside player tokens (a request without a token must not have the
    // GM's rights), the GM needs a token: made for this run when none is set.
    if token.is_none() && (!args.listen.ip().is_loopback() || players > 0) {
        token = Some(new_token()?);
        made = true;
    }
    let opts = options(vaults, &args, token.clone());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("vaultdm-serve")
        .build()?;
    rt.block_on(async move {
        let running = crate::serve::start(opts).await?;
        announce(&running, token.as_deref().filter(|_| made), players)?;
        running.serve(until_stopped()).await?;
        eprintln!("vaultdm serve: stopped; every session is saved");
        anyhow::Ok(())
    })?;
    Ok(Outcome::Ok)
}

/// The vaults to serve: `--vault` (or the one found as for every command) when it is given
/// or nothing else is, then the ones named; leftovers of a crash are cleaned from each.
fn vaults_of(vault: Option<PathBuf>, args: &Args) -> anyhow::Result<Vec<PathBuf>> {
    let mut vaults = Vec::new();
    if vault.is_some() || (args.vaults.is_empty() && args.also.is_empty()) {
        vaults.push(super::find_vault(vault)?);
    }
    for v in args.vaults.iter().chain(&args.also) {
        vaults.push(super::find_vault(Some(v.clone()))?);
    }
    for v in &vaults {
        super::clean_leftovers(v);
    }
    Ok(vaults)
}

/// The server's options from the flags (counts and timeouts at least 1).
fn options(vaults: Vec<PathBuf>, args: &Args, token: Option<String>) -> ServeOptions {
    ServeOptions {
        vaults,
        listen: args.listen,
        token,
        player_tokens: args
            .player_tokens
            .iter()
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty())
            .collect(),
        cors: args.cors.clone(),
        hosts: args.hosts.clone(),
        limits: Limits {
            max_body_bytes: args.max_body_bytes,
            max_message_chars: args.max_message_chars,
            max_connections: args.max_connections.max(1),
            header_timeout: Duration::from_secs(args.request_timeout.max(1)),
            body_timeout: Duration::from_secs(args.request_timeout.max(1)),
        },
        llm: args.llm.flags(),
        close_idle_after: Duration::from_secs(args.close_idle_after.max(1)),
        max_conversations: args.max_conversations.max(1),
        task_model: args.task_model.clone().filter(|m| !m.trim().is_empty()),
        hold_leaks: args
            .hold_leaks
            .then(|| Duration::from_secs(args.hold_for.max(1))),
        watch: WatchOptions {
            poll: args.poll,
            debounce: Duration::from_millis(150),
            ..WatchOptions::default()
        },
    }
}

/// Says on stderr what is served: each campaign and its upstream, the GM's token when one
/// was made for this run (`made_token`), how many player tokens there are (never the tokens),
/// and where the server listens.
fn announce(running: &Running, made_token: Option<&str>, players: usize) -> std::io::Result<()> {
    let mut err = std::io::stderr().lock();
    for c in &running.campaigns {
        let s = c.snapshot();
        let upstream = match &c.upstream {
            crate::serve::campaign::Upstream::Ready { client, .. } => format!(
                "upstream {} {} at {}",
                client.config().provider,
                client.config().model,
                client.shown_endpoint()
            ),
            crate::serve::campaign::Upstream::Missing(why) => {
                format!("no upstream ({})", why.lines().next().unwrap_or(why))
            }
        };
        writeln!(
            err,
            "vaultdm serve: campaign {} — {} ({} notes, {} errors, {} warnings; {}); {upstream}",
            c.id,
            c.root.display(),
            s.check.notes,
            s.check.errors,
            s.check.warnings,
            c.backend
        )?;
    }
    if let Some(t) = made_token {
        writeln!(
            err,
            "vaultdm serve: token for this run: {t}\n  (the GM's: give it as the API key in your front end; set VAULTDM_SERVE_TOKEN to choose your own)"
        )?;
    }
    if players > 0 {
        writeln!(
            err,
            "vaultdm serve: {players} player token(s): chat only (/v1/chat/completions, /v1/models); everything else wants the GM's token"
        )?;
    }
    writeln!(
        err,
        "vaultdm serve: listening on http://{} — OpenAI base URL http://{}/v1, inspector http://{}/; Ctrl-C to stop",
        running.addr, running.addr, running.addr
    )
}

/// Resolves on Ctrl-C, SIGTERM or SIGHUP (closing the terminal stops as cleanly), saying
/// what stopping does.
async fn until_stopped() {
    use tokio::signal::unix::{signal, SignalKind};
    let wait = |kind: SignalKind| async move {
        match signal(kind) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = wait(SignalKind::terminate()) => {}
        _ = wait(SignalKind::hangup()) => {}
    }
    eprintln!("vaultdm serve: stopping: replies in progress are cut off and saved");
}
