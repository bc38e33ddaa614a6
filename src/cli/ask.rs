//! `vaultdm ask TEXT|-`: one message to the DM, the reply on stdout (for scripts).

use super::llm_args::{open_table, resolve, LlmArgs};
use super::Outcome;
use crate::canon::Loaded;
use anyhow::Context as _;
use std::io::{Read, Write};
use std::path::Path;

/// Output format.
#[derive(Debug, Clone, Copy, clap::ValueEnum, PartialEq, Eq)]
pub enum Format {
    /// The reply text, streamed.
    Text,
    /// `{reply, complete, injected_context, usage, session}`.
    Json,
}

/// Arguments of `ask`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The player's message, or `-` to read it from stdin.
    pub message: String,
    /// Continue this session (default: a new one named after the time).
    #[arg(long)]
    pub session: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// LLM flags.
    #[command(flatten)]
    pub llm: LlmArgs,
}

/// Runs `ask`.
pub fn execute(root: &Path, args: Args) -> anyhow::Result<Outcome> {
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
    let loaded = Loaded::load(root)?;
    let settings = resolve(&loaded, &args.llm)?;
    let session = args
        .session
        .clone()
        .unwrap_or_else(|| format!("ask-{}", chrono::Local::now().format("%Y-%m-%d-%H%M%S")));
    let engine = super::context::engine_for(root, &loaded)?;
    let mut table = open_table(root, &loaded, engine, &settings, &session)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let stream = args.format == Format::Text;
    let mut on_token = |t: &str| {
        if stream {
            let mut o = std::io::stdout().lock();
            let _ = o.write_all(t.as_bytes());
            let _ = o.flush();
        }
    };
    let cancel = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let turn = rt.block_on(table.send(&message, &mut on_token, cancel));
    let turn = match turn {
        Ok(t) => t,
        Err(e) => {
            anyhow::bail!(
                "{e}\n(your message is saved in session \"{session}\"; re-send it with: vaultdm ask --session {session:?} ...)"
            )
        }
    };
    let mut out = super::stdout();
    match args.format {
        Format::Text => {
            writeln!(out)?;
            if let Some(why) = turn.reply.incomplete_reason() {
                eprintln!("vaultdm: the reply is incomplete ({why}); what arrived is saved in session \"{session}\"");
            }
        }
        Format::Json => {
            let v = serde_json::json!({
                "reply": turn.reply.text,
                "complete": turn.reply.complete,
                "cut_off": turn.reply.cut_off.map(|c| c.to_string()),
                "injected_context": turn.prepared.block,
                "mode": turn.prepared.injected.mode,
                "usage": turn.reply.usage,
                "session": session,
            });
            serde_json::to_writer_pretty(&mut out, &v)?;
            writeln!(out)?;
        }
    }
    out.flush()?;
    Ok(if turn.reply.complete {
        Outcome::Ok
    } else {
        Outcome::Problems
    })
}
