//! `vaultdm chat`: play with the DM in the terminal.
//!
//! A rustyline REPL: each line goes out with its injected canon, the reply streams back as
//! tokens arrive (a spinner waits for the first one, only on a terminal), Ctrl-C cancels the
//! reply in flight (what arrived is kept, marked interrupted), Ctrl-D exits. Canon reloads
//! from the watcher are shown between turns, never inside a streamed reply.

use super::llm_args::{open_table, resolve, LlmArgs};
use super::Outcome;
use crate::play::{PlayError, Table};
use crate::watch::{Live, LiveWatch, Reload, WatchOptions};
use rustyline::error::ReadlineError;
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;

/// Arguments of `chat`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Session name (default: today's date); an existing session resumes with its history.
    #[arg(long)]
    pub session: Option<String>,
    /// Poll the vault for changes instead of native file events (network drives, WSL).
    #[arg(long)]
    pub poll: bool,
    /// LLM flags.
    #[command(flatten)]
    pub llm: LlmArgs,
}

const HELP: &str = "\
/context [message]  what the next message would inject, with the reasons
/full               send the full session context with the next message
/roll 2d6+3         roll dice; the result rides along with your next message
/undo               drop the last exchange from what the DM remembers (the log keeps it)
/reload             re-read the whole vault now
/sessions           list saved sessions
/help               this help
/quit               leave (Ctrl-D works too)
Ctrl-C cancels a reply in flight; the part that arrived is kept.";

/// A spinner on stderr until the first token, only on a terminal. Stopping it takes the
/// same lock its frames are drawn under, so no frame is drawn over the streamed reply.
struct Spinner {
    state: Arc<std::sync::Mutex<bool>>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Spinner {
    fn start() -> Spinner {
        let state = Arc::new(std::sync::Mutex::new(std::io::stderr().is_terminal()));
        let s2 = state.clone();
        let handle = std::io::stderr().is_terminal().then(|| {
            std::thread::spawn(move || {
                let frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
                for i in 0.. {
                    {
                        let Ok(on) = s2.lock() else { return };
                        if !*on {
                            return;
                        }
                        eprint!("\r{} the DM is thinking…", frames[i % frames.len()]);
                        let _ = std::io::stderr().flush();
                    }
                    std::thread::sleep(std::time::Duration::from_millis(80));
                }
            })
        });
        Spinner { state, handle }
    }

    /// Stops the spinner and clears its line (idempotent, cheap after the first call).
    fn stop(&self) {
        if let Ok(mut on) = self.state.lock() {
            if *on {
                *on = false;
                eprint!("\r\x1b[2K");
                let _ = std::io::stderr().flush();
            }
        }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.stop();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Canon for the session: watched, or static when the watcher could not start.
enum Canon {
    Watched(Box<LiveWatch>),
    Static(Box<Live>),
}

impl Canon {
    fn live(&self) -> &Live {
        match self {
            Canon::Watched(w) => w.live(),
            Canon::Static(l) => l,
        }
    }

    fn pending(&mut self) -> (Option<Reload>, Vec<String>) {
        match self {
            Canon::Watched(w) => (w.try_reload(), w.take_errors()),
            Canon::Static(_) => (None, vec![]),
        }
    }

    fn reload_now(&mut self) -> Reload {
        match self {
            Canon::Watched(w) => w.reload_now(),
            Canon::Static(l) => l.reload_now(),
        }
    }
}

/// Runs `chat`.
pub fn execute(root: &Path, args: Args) -> anyhow::Result<Outcome> {
    let opts = WatchOptions {
        poll: args.poll,
        ..WatchOptions::default()
    };
    let mut canon = match LiveWatch::start(root, &opts) {
        Ok(w) => {
            if let Some(reason) = w.watcher().fallback_reason() {
                eprintln!(
                    "native file events unavailable ({reason}); watching the vault by polling"
                );
            }
            Canon::Watched(Box::new(w))
        }
        Err(e) => {
            let live = Live::load(root)?;
            eprintln!(
                "warning: canon will not reload on edits ({e}); use /reload after editing notes"
            );
            Canon::Static(Box::new(live))
        }
    };
    let loaded = canon.live().loaded();
    let settings = resolve(loaded, &args.llm)?;
    for w in &settings.warnings {
        eprintln!("warning: {w}");
    }
    let session = match &args.session {
        Some(s) => s.clone(),
        None => crate::session::default_name(chrono::Local::now().date_naive()),
    };
    let engine = canon.live().engine().clone();
    let mut table = open_table(root, loaded, engine, &settings, &session)?;
    for w in table.store().warnings() {
        eprintln!("warning: {w}");
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut rl = rustyline::DefaultEditor::new()?;
    let history_file = root.join(".vaultdm").join("chat-history.txt");
    let _ = rl.load_history(&history_file);

    let cfg = table.client().map(|c| c.config().clone());
    println!(
        "vaultdm: {} — session \"{}\" ({} earlier exchanges){}",
        table.engine().campaign().name,
        session,
        table.store().history().len(),
        cfg.map(|c| format!(", {} at {}", c.model, c.base_url))
            .unwrap_or_default()
    );
    println!("Type to play, /help for commands, Ctrl-D to leave.");

    let mut resend: Option<String> = None;
    loop {
        apply_pending(&mut canon, &mut table);
        let line = match resend.take() {
            Some(m) => rl.readline_with_initial("> ", (&m, "")),
            None => rl.readline("> "),
        };
        let line = match line {
            Ok(l) => l,
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(e.into()),
        };
        let msg = line.trim();
        if msg.is_empty() {
            continue;
        }
        // Notes saved while the prompt waited: apply them before this message is built.
        apply_pending(&mut canon, &mut table);
        let _ = rl.add_history_entry(msg);
        if let Some(cmd) = msg.strip_prefix('/') {
            let (name, rest) = cmd.split_once(' ').unwrap_or((cmd, ""));
            match name {
                "quit" | "exit" | "q" => break,
                "help" | "?" => println!("{HELP}"),
                "full" => {
                    table.force_full();
                    println!("the next message carries the full session context");
                }
                "undo" => match table.undo() {
                    Ok(true) => {
                        println!("the last exchange is out of the DM's memory (the log keeps it)")
                    }
                    Ok(false) => println!("nothing to undo"),
                    Err(e) => eprintln!("error: {e}"),
                },
                "roll" | "r" => match crate::dice::roll(rest.trim()) {
                    Ok(r) => {
                        println!("🎲 {r}  (sent with your next message)");
                        table.add_roll(r.to_string());
                    }
                    Err(e) => eprintln!("error: {e}"),
                },
                "reload" => {
                    let r = canon.reload_now();
                    let quiet = r.changes.is_empty();
                    table_reloaded(&mut table, &canon, r);
                    if quiet {
                        println!("canon reloaded: no changes");
                    }
                }
                "sessions" => match crate::session::list_sessions(root) {
                    Ok(list) => {
                        for s in list {
                            println!(
                                "{:<28} {:>4} records  {}",
                                s.name,
                                s.records,
                                s.last_time
                                    .map(|t| t.format("%Y-%m-%d %H:%M").to_string())
                                    .unwrap_or_default()
                            );
                        }
                    }
                    Err(e) => eprintln!("error: {e}"),
                },
                "context" => {
                    let probe = if rest.trim().is_empty() {
                        "…"
                    } else {
                        rest.trim()
                    };
                    match table.prepare(probe) {
                        Ok(p) => {
                            println!("{}", p.block);
                            let mut out = std::io::stdout().lock();
                            let _ = super::context::write_explain(&mut out, &p.injected);
                            if p.dropped_exchanges > 0 {
                                println!("({} older exchanges left out of the prompt by the history budget)", p.dropped_exchanges);
                            }
                        }
                        Err(e) => eprintln!("error: {e}"),
                    }
                }
                _ => eprintln!("unknown command /{name}; /help lists them"),
            }
            continue;
        }

        let spin = Spinner::start();
        let mut first = true;
        let mut on_token = |tok: &str| {
            if first {
                first = false;
                spin.stop();
            }
            let mut o = std::io::stdout().lock();
            let _ = o.write_all(tok.as_bytes());
            let _ = o.flush();
        };
        let cancel = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        let result = rt.block_on(table.send(msg, &mut on_token, cancel));
        drop(spin);
        println!();
        match result {
            Ok(turn) => {
                if let Some(why) = turn.reply.incomplete_reason() {
                    eprintln!("[reply incomplete: {why}; what arrived is kept]");
                }
            }
            Err(e) => {
                eprintln!("error: {e}");
                if let PlayError::Llm(l) = &e {
                    if l.partial().is_some_and(|p| !p.text.is_empty()) {
                        eprintln!("[the part of the reply that arrived is kept in the session]");
                    }
                }
                eprintln!("[your message is saved; press Enter to send it again]");
                resend = Some(msg.to_string());
            }
        }
    }
    if let Some(dir) = history_file.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let _ = rl.save_history(&history_file);
    Ok(Outcome::Ok)
}

fn apply_pending(canon: &mut Canon, table: &mut Table) {
    let (reload, errors) = canon.pending();
    for e in errors {
        eprintln!("warning: {e}");
    }
    if let Some(r) = reload {
        table_reloaded(table, canon, r);
    }
}

fn table_reloaded(table: &mut Table, canon: &Canon, r: Reload) {
    for d in &r.diagnostics {
        eprintln!("{d}");
    }
    if r.changes.is_empty() {
        return;
    }
    let lines: Vec<String> = r.changes.iter().map(|c| c.to_string()).collect();
    println!("{}: {}", r.summary(), lines.join("; "));
    table.canon_reloaded(canon.live().engine().clone(), lines);
}
