//! `vaultdm ask TEXT|-`: one message to the DM, the reply on stdout (for scripts).
//!
//! Exit codes (docs/commands.md keeps the same table):
//!
//! | code | meaning |
//! |---|---|
//! | 0 | the reply is complete |
//! | 1 | a reply arrived but is incomplete (token limit, size cap, deadline, connection lost, …); what arrived is printed and saved |
//! | 2 | no reply: vaultdm could not run or the provider sent no text (configuration, vault, refused request, timeout before the first token) |
//! | 130 | interrupted by Ctrl-C (what arrived is saved) |
//! | 129 / 143 | stopped by SIGHUP / SIGTERM (what arrived is saved) |

use super::format::Format;
use super::llm_args::{open_table, resolve, LlmArgs};
use super::{signals, Outcome};
use crate::canon::Loaded;
use crate::llm::CutOff;
use crate::play::{SendError, Table, Turn, CONTINUE_MESSAGE};
use anyhow::Context as _;
use std::io::{Read, Write};
use std::path::Path;

/// Arguments of `ask`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The player's message, or `-` to read it from stdin; `/continue` asks the DM to go on
    /// with a reply that was cut off (use it with --session).
    pub message: String,
    /// Continue this session (default: a new one named after the time).
    #[arg(long)]
    pub session: Option<String>,
    /// Output format.
    #[arg(long, default_value = "text", value_parser = Format::described(
        "The reply text, streamed",
        "`{reply, complete, cut_off, injected_context, usage, session}`",
    ))]
    pub format: Format,
    /// LLM flags.
    #[command(flatten)]
    pub llm: LlmArgs,
}

/// The exit code for a reply that arrived: 0 complete, 130 interrupted, 128 + signal when
/// terminated, 1 for any other cut-off.
fn code_for(cut_off: Option<CutOff>, complete: bool) -> u8 {
    match cut_off {
        _ if complete => 0,
        Some(CutOff::Interrupted) => 130,
        Some(CutOff::Terminated) => signals::exit_code().unwrap_or(143),
        _ => 1,
    }
}

/// Runs `ask`.
pub(super) fn execute(root: &Path, args: Args) -> anyhow::Result<Outcome> {
    signals::install();
    let message = read_message(&args)?;
    // A write command needs no provider: it changes the notes and says what changed.
    if let crate::play::command::Input::Command(c) = crate::play::command::parse(&message) {
        if is_write(&c) {
            return write_command(root, &args, c);
        }
    }
    let (mut table, session) = open(root, &args)?;
    let stream = args.format == Format::Text;
    // The chat's command language: `/continue`, `/Continue`, `/continue please`.
    let continuing = matches!(
        crate::play::command::parse(&message),
        crate::play::command::Input::Command(crate::play::command::Command::Continue)
    );
    let turn = match play(&mut table, &message, continuing, stream)? {
        Ok(t) => t,
        Err(e) => return Ok(failed(&e, &session, stream)),
    };
    let sent = if continuing {
        CONTINUE_MESSAGE
    } else {
        &message
    };
    let mut out = super::stdout();
    match args.format {
        Format::Text => {
            writeln!(out)?;
            report_text(&turn, &session);
        }
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &json_of(&turn, sent, &session))?;
            writeln!(out)?;
        }
    }
    out.flush()?;
    Ok(Outcome::Code(code_for(
        turn.reply.cut_off,
        turn.reply.complete,
    )))
}

/// The message: the argument, or stdin (trimmed) for `-`; an empty one is an error.
fn read_message(args: &Args) -> anyhow::Result<String> {
    let message = if args.message == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .context("reading the message from stdin")?;
        s.trim().to_string()
    } else {
        args.message.clone()
    };
    if message.is_empty() {
        anyhow::bail!("the message is empty");
    }
    Ok(message)
}

/// Loads the vault, resolves the LLM settings and opens the table on the session (the one
/// named, else a new one); warnings and notices go to stderr.
fn open(root: &Path, args: &Args) -> anyhow::Result<(Table, String)> {
    // The vocabulary loads on a second thread once the parse no longer needs both cores.
    let mut loaded = Loaded::load_then(root, crate::tokens::warm_up_in_background)?;
    super::refuse_empty_vault(root, &loaded)?;
    super::report_skipped(&loaded);
    let settings = resolve(&loaded, &args.llm)?;
    for w in &settings.warnings {
        eprintln!("warning: {w}");
    }
    let session = args
        .session
        .clone()
        .unwrap_or_else(|| crate::session::one_shot_name(root, "ask"));
    let engine = crate::context::Engine::taking_canon(root, &mut loaded)?;
    loaded.release_notes();
    let store = super::llm_args::open_session(root, &session, false)?;
    let mut table = open_table(&loaded, engine, &settings, store)?;
    for w in table.store().warnings() {
        eprintln!("warning: {w}");
    }
    for n in table.take_notices() {
        eprintln!("vaultdm: {n}");
    }
    Ok((table, session))
}

/// Sends the message (or continues the last reply), streaming the reply to stdout when
/// `stream`; a signal cuts it off.
fn play(
    table: &mut Table,
    message: &str,
    continuing: bool,
    stream: bool,
) -> anyhow::Result<Result<Turn, SendError>> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut on_token = |t: &str| {
        if stream {
            let mut o = std::io::stdout().lock();
            let _ = o.write_all(t.as_bytes());
            let _ = o.flush();
        }
    };
    let guard = signals::ReplyGuard::new();
    let turn = if continuing {
        rt.block_on(table.continue_reply(&mut on_token, signals::cancelled()))
    } else {
        rt.block_on(table.send(message, &mut on_token, signals::cancelled()))
    };
    drop(guard);
    for n in table.take_notices() {
        eprintln!("vaultdm: {n}");
    }
    Ok(turn)
}

/// A turn that failed: what went wrong and what was saved, on stderr; exit 1 when part of a
/// reply arrived, else 2.
fn failed(e: &SendError, session: &str, stream: bool) -> Outcome {
    if stream && e.reply_saved {
        let _ = writeln!(std::io::stdout());
    }
    let saved = if e.reply_saved {
        format!("your message and the part of the reply that arrived are saved in session \"{session}\"; `vaultdm ask --session {session:?} /continue` asks the DM to go on")
    } else if e.message_saved {
        format!("your message is saved in session \"{session}\"; re-send it with: vaultdm ask --session {session:?} ...")
    } else {
        "your message was NOT saved".to_string()
    };
    eprintln!("vaultdm: {e}\n({saved})");
    Outcome::Code(if e.reply_saved { 1 } else { 2 })
}

/// After a streamed reply: whether it is incomplete, and the DM's proposals and what became
/// of them, on stderr.
fn report_text(turn: &Turn, session: &str) {
    if let Some(why) = turn.reply.incomplete_reason() {
        eprintln!("vaultdm: the reply is incomplete ({why}); what arrived is saved in session \"{session}\"; `vaultdm ask --session {session:?} /continue` asks the DM to go on");
    }
    let p = &turn.proposals;
    for u in &p.unreadable {
        eprintln!("vaultdm: the DM proposed changes that could not be read: {u}");
    }
    if let Some(w) = &p.applied {
        for r in &w.plan.rejected {
            eprintln!("vaultdm: not applied: {}", r.reason);
        }
        if let Some((_, a)) = &w.applied {
            for line in &a.summaries {
                eprintln!("vaultdm: applied: {line}");
            }
        }
    }
    for r in &p.refused {
        eprintln!("vaultdm: {}. {}", r.number, r.describe());
    }
    if !p.pending.is_empty() {
        eprintln!(
            "vaultdm: the DM proposed canon changes (review: vaultdm review --session {session}):"
        );
        for v in &p.pending {
            eprintln!("  {}. {}", v.number, v.line);
        }
    }
}

/// The turn as `--format json` prints it.
fn json_of(turn: &Turn, sent: &str, session: &str) -> serde_json::Value {
    serde_json::json!({
        "message": sent,
        "reply": turn.reply.text,
        "complete": turn.reply.complete,
        "cut_off": turn.reply.cut_off,
        "cut_off_reason": turn.reply.incomplete_reason(),
        "finish_reason": turn.reply.finish_reason,
        "injected_context": turn.prepared.block,
        "mode": turn.prepared.injected.mode,
        "usage": turn.reply.usage,
        "proposals": turn.proposals.pending.iter().map(|v| serde_json::json!({"number": v.number, "change": v.line, "valid": v.valid})).collect::<Vec<_>>(),
        "refused": turn.proposals.refused.iter().map(|v| serde_json::json!({"number": v.number, "change": v.line, "reason": v.reason})).collect::<Vec<_>>(),
        "applied": turn.proposals.applied.as_ref().and_then(|w| w.applied.as_ref()).map(|(_, a)| a.summaries.clone()).unwrap_or_default(),
        "session": session,
    })
}

fn is_write(c: &crate::play::command::Command) -> bool {
    use crate::play::command::Command as C;
    matches!(
        c,
        C::Write(..)
            | C::Accept(_)
            | C::Reject(_)
            | C::Edit(..)
            | C::Revert
            | C::Pending
            | C::Bad(_)
    )
}

/// `ask "/set brannock hp 15"`: the GM's write commands, without a provider. Exit 0 when
/// the change was written, 2 when nothing was.
fn write_command(
    root: &Path,
    args: &Args,
    c: crate::play::command::Command,
) -> anyhow::Result<Outcome> {
    use crate::play::command::Command as C;
    let loaded = Loaded::load(root)?;
    super::refuse_empty_vault(root, &loaded)?;
    let session = args
        .session
        .clone()
        .unwrap_or_else(|| crate::session::one_shot_name(root, "ask"));
    let mut table = super::review::write_table(root, &loaded, &session)?;
    let mut out = super::stdout();
    let written = match c {
        C::Write(name, a) => table.write_command(&name, &a).map(Some),
        C::Accept(which) => table.accept(&which),
        C::Edit(n, line) => table.edit(n, &line).map(Some),
        C::Reject(which) => {
            let n = table.reject(&which)?;
            writeln!(out, "dropped {n} proposal(s); canon is unchanged")?;
            return Ok(Outcome::Ok);
        }
        C::Revert => {
            let (lines, _) = table.revert()?;
            writeln!(out, "reverted: {}", lines.join("; "))?;
            return Ok(Outcome::Ok);
        }
        C::Pending => {
            super::review::print_proposals(&mut out, &table)?;
            return Ok(Outcome::Ok);
        }
        C::Bad(why) => anyhow::bail!(why),
        _ => return Ok(Outcome::Code(2)),
    };
    let written = match written {
        Ok(w) => w,
        Err(e) => {
            eprintln!("vaultdm: {e}");
            return Ok(Outcome::Code(2));
        }
    };
    let wrote = match &written {
        Some(w) if args.format == Format::Json => {
            let v = serde_json::json!({
                "applied": w.applied.as_ref().map(|(_, a)| a.summaries.clone()).unwrap_or_default(),
                "unchanged": w.plan.unchanged.iter().map(|u| u.summary.clone()).collect::<Vec<_>>(),
                "files": w.applied.as_ref().map(|(_, a)| a.files.iter().map(|f| f.path.clone()).collect::<Vec<_>>()).unwrap_or_default(),
                "rejected": w.plan.rejected.iter().map(|r| r.reason.clone()).collect::<Vec<_>>(),
                "session": session,
            });
            serde_json::to_writer_pretty(&mut out, &v)?;
            writeln!(out)?;
            w.applied.is_some() || !w.plan.unchanged.is_empty()
        }
        Some(w) => super::review::print_written(&mut out, w)?,
        None => false,
    };
    out.flush()?;
    Ok(if wrote { Outcome::Ok } else { Outcome::Code(2) })
}
