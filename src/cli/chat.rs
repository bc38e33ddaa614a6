//! `vaultdm chat`: play with the DM in the terminal.
//!
//! A rustyline REPL: each line goes out with its injected canon, the reply streams back as
//! tokens arrive (a spinner waits for the first one, only on a terminal), Ctrl-C cancels the
//! reply in flight (what arrived is kept, marked interrupted), Ctrl-D exits. Canon reloads
//! from the watcher are shown between turns, never inside a streamed reply.

use super::llm_args::{open_session, open_table, resolve, LlmArgs};
use super::{signals, Outcome};
use crate::play::command::{self, Command, Input, HELP};
use crate::play::{SendError, Table, Turn};
use crate::watch::{Canon, Fallback, Reload, WatchOptions};
use rustyline::error::ReadlineError;
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;

/// `println!` that never panics on a closed or full stdout (`chat | head -1`,
/// `chat > /dev/full`): see [`out_line`].
macro_rules! println {
    () => {
        out_line(format_args!(""))
    };
    ($($t:tt)*) => {
        out_line(format_args!($($t)*))
    };
}

/// Writes one line to stdout. A closed pipe ends the chat quietly (exit 0, as ripgrep does); a
/// full or failing device ends it with one clear line on stderr (exit 2). Either way the
/// session is whole: every record is written to the log before it is shown.
fn out_line(args: std::fmt::Arguments<'_>) {
    let mut o = std::io::stdout().lock();
    let written = o
        .write_fmt(args)
        .and_then(|()| o.write_all(b"\n"))
        .and_then(|()| o.flush());
    if let Err(e) = written {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        let _ = writeln!(
            std::io::stderr(),
            "vaultdm: cannot write to the output ({e}); the session is saved"
        );
        std::process::exit(2);
    }
}

/// Arguments of `chat`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
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

/// Starts live canon and says how it is kept current when not by native events.
fn start_canon(root: &Path, poll: bool) -> anyhow::Result<Canon> {
    let opts = WatchOptions {
        poll,
        ..WatchOptions::default()
    };
    let canon = Canon::start(root, &opts)?;
    match canon.fallback() {
        Some(Fallback::Polling(reason)) => {
            eprintln!("native file events unavailable ({reason}); watching the vault by polling")
        }
        Some(Fallback::Unwatched(why)) => eprintln!(
            "warning: canon will not reload on edits ({why}); use /reload after editing notes"
        ),
        None => {}
    }
    Ok(canon)
}

/// Resolves the LLM settings, opens the session and sets the table.
fn open(root: &Path, args: &Args, canon: &Canon) -> anyhow::Result<Table> {
    let loaded = canon.live().loaded();
    super::refuse_empty_vault(root, loaded)?;
    super::report_skipped(loaded);
    let settings = resolve(loaded, &args.llm)?;
    for w in &settings.warnings {
        eprintln!("warning: {w}");
    }
    let (session, next_free) = match &args.session {
        Some(s) => (s.clone(), false),
        None => (
            crate::session::default_name(chrono::Local::now().date_naive()),
            true,
        ),
    };
    let store = open_session(root, &session, next_free)?;
    let engine = canon.live().engine().clone();
    let mut table = open_table(loaded, engine, &settings, store)?;
    for w in table.store().warnings() {
        eprintln!("warning: {w}");
    }
    for n in table.take_notices() {
        eprintln!("vaultdm: {n}");
    }
    Ok(table)
}

/// Runs `chat`.
pub(super) fn execute(root: &Path, args: Args) -> anyhow::Result<Outcome> {
    signals::install();
    super::clean_leftovers(root);
    let mut canon = start_canon(root, args.poll)?;
    let mut table = open(root, &args, &canon)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut rl = rustyline::DefaultEditor::new()?;
    let history_file = root.join(".vaultdm").join("chat-history.txt");
    if !std::fs::symlink_metadata(&history_file).is_ok_and(|m| m.file_type().is_symlink()) {
        let _ = rl.load_history(&history_file);
    }
    let cfg = table.client().map(|c| c.config().clone());
    println!(
        "vaultdm: {} — session \"{}\" ({} earlier exchanges){}",
        table.engine().campaign().name,
        table.store().name(),
        table.store().history().len(),
        cfg.map(|c| format!(", {} at {}", c.model, crate::secrets::mask_url(&c.base_url)))
            .unwrap_or_default()
    );
    println!("Type to play, /help for commands, Ctrl-D to leave.");
    let mut at = At {
        root,
        canon: &mut canon,
        table: &mut table,
        rt: &rt,
    };
    let outcome = at.play(&mut rl)?;
    save_history(&mut rl, &history_file);
    Ok(outcome)
}

/// What a turn at the table works with.
struct At<'a> {
    root: &'a Path,
    canon: &'a mut Canon,
    table: &'a mut Table,
    rt: &'a tokio::runtime::Runtime,
}

impl At<'_> {
    /// Reads lines until the GM leaves (or a signal ends the session).
    fn play(&mut self, rl: &mut rustyline::DefaultEditor) -> anyhow::Result<Outcome> {
        let mut resend: Option<String> = None;
        let mut warned_unsaved = false;
        loop {
            self.apply_pending();
            let line = match resend.take() {
                Some(m) => rl.readline_with_initial("> ", (&m, "")),
                None => rl.readline("> "),
            };
            let line = match line {
                Ok(l) => l,
                Err(ReadlineError::Interrupted) => continue,
                Err(ReadlineError::Eof) => {
                    if self.may_leave(&mut warned_unsaved) {
                        return Ok(Outcome::Ok);
                    }
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            let input = command::parse(&line);
            if input == Input::Empty {
                continue;
            }
            // Notes saved while the prompt waited: apply them before this message is built.
            self.apply_pending();
            let _ = rl.add_history_entry(line.trim());
            let message = match input {
                Input::Message(m) => Some(m),
                Input::Command(Command::Continue) => None,
                Input::Command(Command::Quit) => {
                    if self.may_leave(&mut warned_unsaved) {
                        return Ok(Outcome::Ok);
                    }
                    continue;
                }
                Input::Command(c) => {
                    self.command(c);
                    continue;
                }
                Input::Empty => continue,
            };
            // Until the turn is told, a SIGTERM/SIGHUP cancels the reply instead of exiting.
            let guard = signals::ReplyGuard::new();
            let result = self.turn(message.as_deref());
            if report_turn(&result) {
                resend = message;
            }
            if let Ok(turn) = &result {
                self.proposals(&turn.proposals);
            }
            for n in self.table.take_notices() {
                eprintln!("vaultdm: {n}");
            }
            drop(guard);
            if let Some(code) = signals::exit_code() {
                return Ok(Outcome::Code(code));
            }
        }
    }

    /// Whether the GM may leave now: a reply the full disk kept out of the log is saved
    /// first if it can be; if not, the GM is told, and at a terminal must ask twice.
    fn may_leave(&mut self, warned: &mut bool) -> bool {
        if !self.table.has_unsaved_reply() {
            return true;
        }
        match self.table.save_unsaved_reply() {
            Ok(()) => {
                for n in self.table.take_notices() {
                    eprintln!("vaultdm: {n}");
                }
                true
            }
            Err(e) => {
                eprintln!("vaultdm: {}", e.error);
                let ask_again = std::io::stdin().is_terminal() && !*warned;
                if ask_again {
                    eprintln!("[leaving now loses the last reply from the session log (it is on your screen); free some space and leave again, or leave again to go without it]");
                    *warned = true;
                }
                !ask_again
            }
        }
    }

    /// Sends a message (or `/continue` without one) and streams the reply to stdout.
    fn turn(&mut self, message: Option<&str>) -> Result<Turn, SendError> {
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
        let result = match message {
            Some(m) => self
                .rt
                .block_on(self.table.send(m, &mut on_token, signals::cancelled())),
            None => self.rt.block_on(
                self.table
                    .continue_reply(&mut on_token, signals::cancelled()),
            ),
        };
        drop(spin);
        // A reply stopped early (Ctrl-C) dropped its upstream response; the connection's task
        // runs only inside `block_on`: let it close the connection now, so the provider stops
        // generating instead of streaming into a socket nobody reads until the next turn.
        if !result.as_ref().is_ok_and(|t| t.reply.complete) {
            self.rt.block_on(async {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            });
        }
        println!();
        result
    }

    /// Runs a slash command (all but `/continue` and `/quit`, which the loop handles).
    fn command(&mut self, c: Command) {
        match c {
            Command::Help => println!("{HELP}"),
            Command::Full => {
                self.table.force_full();
                println!("the next message carries the full session context");
            }
            Command::Undo => match self.table.undo() {
                Ok(true) => {
                    println!("the last exchange is out of the DM's memory (the log keeps it)")
                }
                Ok(false) => println!("nothing to undo"),
                Err(e) => eprintln!("error: {e}"),
            },
            Command::Roll(expr) => match crate::dice::roll(&expr) {
                Ok(r) => {
                    println!("🎲 {r}  (sent with your next message)");
                    self.table.add_roll(r.to_string());
                }
                Err(e) => eprintln!("error: {e}"),
            },
            Command::Reload => {
                let r = self.canon.reload_now();
                if !self.show_reload(&r) {
                    println!("canon reloaded: no changes");
                }
            }
            Command::Sessions => list_sessions(self.root),
            Command::Context(message) => self.preview(message.as_deref()),
            Command::Write(name, args) => {
                let r = self.table.write_command(&name, &args);
                self.written(r.map(Some));
            }
            Command::Pending => {
                show_pending(&self.table.pending());
                for d in self.table.decided(5) {
                    println!("  {}. {}", d.number, d.describe());
                }
            }
            Command::Accept(which) => {
                let r = self.table.accept(&which);
                if matches!(r, Ok(None)) {
                    println!("no pending proposal");
                }
                self.written(r);
            }
            Command::Reject(which) => match self.table.reject(&which) {
                Ok(0) => println!("no pending proposal"),
                Ok(n) => println!("dropped {n} proposal(s); canon is unchanged"),
                Err(e) => eprintln!("error: {e}"),
            },
            Command::Edit(n, line) => {
                let r = self.table.edit(n, &line);
                self.written(r.map(Some));
            }
            Command::Revert => match self.table.revert() {
                Ok((lines, paths)) => {
                    println!("reverted: {}", lines.join("; "));
                    let r = self.table.reload_written(self.canon, &paths);
                    for d in &r.diagnostics {
                        eprintln!("{d}");
                    }
                }
                Err(e) => eprintln!("error: {e}"),
            },
            Command::Bad(why) => eprintln!("error: {why}"),
            Command::Unknown(name) => eprintln!("unknown command /{name}; /help lists them"),
            Command::Continue | Command::Quit => {}
        }
    }

    /// `/context`: what the next message would inject, with the reasons.
    fn preview(&mut self, message: Option<&str>) {
        match self.table.preview(message) {
            Ok(p) => {
                println!("{}", p.block);
                let layers = p.memory.block();
                if !layers.is_empty() {
                    println!("{layers}");
                }
                let mut out = std::io::stdout().lock();
                let _ = super::context::write_explain(&mut out, &p.injected);
                for r in &p.memory.passages {
                    let _ = writeln!(
                        out,
                        "recalled exchange {} (score {:.2}): shares {}",
                        r.turn + 1,
                        r.score,
                        r.why.join(", ")
                    );
                }
                if p.dropped_exchanges > 0 {
                    println!(
                        "({} older exchanges left out of the prompt by the history budget)",
                        p.dropped_exchanges
                    );
                }
            }
            Err(e) => eprintln!("error: {e}"),
        }
    }

    /// What the DM proposed with its reply: listed for review, or (auto) what was written.
    fn proposals(&mut self, p: &crate::play::Proposals) {
        for u in &p.unreadable {
            eprintln!("vaultdm: the DM proposed changes that could not be read: {u}");
        }
        if p.applied.is_some() {
            self.written(Ok(p.applied.clone()));
        }
        for r in &p.refused {
            eprintln!("vaultdm: {}. {}", r.number, r.describe());
        }
        if !p.pending.is_empty() {
            show_pending(&p.pending);
        }
    }

    /// Says what a write did and takes it into canon at once.
    fn written(&mut self, r: Result<Option<crate::write::Written>, crate::play::PlayError>) {
        let w = match r {
            Ok(Some(w)) => w,
            Ok(None) => return,
            Err(e) => {
                eprintln!("error: {e}");
                return;
            }
        };
        for rej in &w.plan.rejected {
            eprintln!("not applied: {}", rej.reason);
        }
        for u in &w.plan.unchanged {
            println!("nothing to write: {}", u.summary);
        }
        if let Some((_, applied)) = &w.applied {
            for line in &applied.summaries {
                println!("✔ {line}");
            }
            let paths = applied.paths(self.root);
            let r = self.table.reload_written(self.canon, &paths);
            for d in &r.diagnostics {
                eprintln!("{d}");
            }
        }
    }

    /// Applies the edits that arrived since the last look, and says what changed.
    fn apply_pending(&mut self) {
        let (reload, errors) = self.canon.pending();
        for e in errors {
            eprintln!("warning: {e}");
        }
        if let Some(r) = reload {
            self.show_reload(&r);
        }
    }

    /// Takes a reload to the table and prints it; false when it changed nothing to say.
    fn show_reload(&mut self, r: &Reload) -> bool {
        for d in &r.diagnostics {
            eprintln!("{d}");
        }
        self.table.take_reload(r, self.canon.live());
        if !r.changes.is_empty() {
            let lines: Vec<String> = r.changes.iter().map(|c| c.to_string()).collect();
            println!("{}: {}", r.summary(), lines.join("; "));
        }
        let notices = r.settings_notices();
        for n in &notices {
            println!("{n}");
        }
        !(r.changes.is_empty() && notices.is_empty())
    }
}

/// `/pending`: the DM's proposals waiting for the GM.
fn show_pending(list: &[crate::play::PendingView]) {
    if list.is_empty() {
        println!("no pending proposal");
        return;
    }
    println!(
        "proposed canon changes (/accept, /accept N, /reject, /edit N /set ...; numbers never change):"
    );
    for p in list {
        println!("  {}. {}", p.number, p.line);
    }
}

/// `/sessions`: every saved session, with its size and last time.
fn list_sessions(root: &Path) {
    match crate::session::list_all_sessions(root) {
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
    }
}

/// Saves the line-editing history, never through a link out of the vault.
fn save_history(rl: &mut rustyline::DefaultEditor, path: &Path) {
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if path.parent().is_some_and(Path::is_dir) && !is_link {
        let _ = rl.save_history(path);
    }
}

/// Tells the GM how a turn ended; true when the message should be offered for re-sending.
fn report_turn(result: &Result<Turn, SendError>) -> bool {
    match result {
        Ok(turn) => {
            if turn.reply.hit_token_limit() {
                eprintln!("[the DM was cut off at its token limit; what arrived is kept — /continue asks it to go on]");
            } else if let Some(why) = turn.reply.incomplete_reason() {
                eprintln!(
                    "[reply incomplete: {why}; what arrived is kept — /continue asks the DM to go on]"
                );
            }
            false
        }
        Err(e) => {
            eprintln!("error: {e}");
            if e.reply_saved {
                eprintln!("[the part of the reply that arrived is saved in the session; /continue asks the DM to go on]");
                false
            } else if e.message_saved {
                eprintln!("[your message is saved; press Enter to send it again]");
                true
            } else {
                eprintln!("[your message was NOT saved (see the error above); it is back in the input line — press Enter to try again]");
                true
            }
        }
    }
}
