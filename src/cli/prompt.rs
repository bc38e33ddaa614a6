//! `vaultdm prompt`: exactly what the next message would send — every message of the
//! request, the layers labelled — without sending anything.

use super::format::Format;
use super::Outcome;
use crate::canon::Loaded;
use std::io::Write;
use std::path::Path;

/// Arguments of `prompt`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The session whose history and memory the prompt uses (default: none, a first message).
    #[arg(long)]
    pub session: Option<String>,
    /// The player's message.
    #[arg(long, short)]
    pub message: String,
    /// Total prompt budget in tokens, shared out between the layers (default: each layer's
    /// own budget).
    #[arg(long)]
    pub budget: Option<usize>,
    /// Output format.
    #[arg(long, default_value = "text", value_parser = Format::described(
        "The request as text, one labelled section per message",
        "`{messages, layers, budget, tokens}`",
    ))]
    pub format: Format,
}

/// Runs `prompt`.
pub(super) fn execute(root: &Path, args: Args) -> anyhow::Result<Outcome> {
    let loaded = Loaded::load(root)?;
    super::refuse_empty_vault(root, &loaded)?;
    let session = args
        .session
        .clone()
        .unwrap_or_else(|| format!("prompt-{}", chrono::Local::now().format("%Y%m%d-%H%M%S-%f")));
    let preview_only = args.session.is_none();
    // A session a chat is playing is read without its lock: a preview writes nothing.
    let store = crate::session::Store::open_to_read(root, &session)?;
    let mut table = super::review::table_for(root, &loaded, store)?;
    let history_budget = loaded
        .config
        .llm
        .as_ref()
        .and_then(|t| t.get("history_budget"))
        .and_then(toml::Value::as_integer)
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(crate::llm::settings::DEFAULT_HISTORY_BUDGET);
    table.set_history_budget(history_budget);
    let p = match args.budget {
        None => table.prepare_quiet(&args.message)?,
        Some(b) => {
            let (p, tokens) = fit(&mut table, &args.message, b)?;
            if tokens > b {
                // Under the part no layer can give up (system prompt, message, framing): say
                // the smallest budget that holds, rather than print a request over it.
                let mut min = fit(&mut table, &args.message, 1)?.1;
                for _ in 0..16 {
                    let (_, t) = fit(&mut table, &args.message, min)?;
                    if t <= min {
                        break;
                    }
                    min = t;
                }
                drop(table);
                remove_preview(root, &session, preview_only);
                anyhow::bail!(
                    "--budget {b} is below the smallest this request can be: {min} tokens (the system prompt alone is {}, the message {}); use --budget {min} or more",
                    crate::tokens::count(&p.request.system),
                    crate::tokens::count(&args.message)
                );
            }
            p
        }
    };
    drop(table);
    remove_preview(root, &session, preview_only);
    let count = crate::tokens::count;
    let mut out = super::stdout();
    let total = request_tokens(&p);
    match args.format {
        Format::Text => {
            out.write_all(render_text(&p, args.budget).as_bytes())?;
        }
        Format::Json => {
            let v = serde_json::json!({
                "messages": std::iter::once(serde_json::json!({"role": "system", "content": p.request.system}))
                    .chain(p.request.messages.iter().map(|m| serde_json::json!({"role": m.role, "content": m.content})))
                    .collect::<Vec<_>>(),
                "layers": {
                    "system": {"tokens": count(&p.request.system)},
                    "canon": {"mode": p.injected.mode, "tokens": count(&p.block)},
                    "previously": {"tokens": count(&p.memory.previously)},
                    "glossary": {"tokens": count(&p.memory.glossary), "terms": p.memory.terms},
                    "story": {"tokens": count(&p.memory.story), "moments": p.memory.moments},
                    "callbacks": {"tokens": count(&p.memory.callbacks)},
                    "recalled": {
                        "tokens": count(&p.memory.recalled),
                        "passages": p.memory.passages.iter().map(|r| serde_json::json!({"exchange": r.turn + 1, "score": (r.score * 100.0).round() / 100.0, "why": r.why})).collect::<Vec<_>>(),
                    },
                    "history": {
                        "exchanges": p.request.messages.len().saturating_sub(1) / 2,
                        "dropped": p.dropped_exchanges,
                    },
                },
                "budget": args.budget,
                "tokens": total,
            });
            serde_json::to_writer_pretty(&mut out, &v)?;
            writeln!(out)?;
        }
    }
    out.flush()?;
    Ok(Outcome::Ok)
}

/// The message prepared within `budget` tokens as printed, labels included: when the labels
/// tip it over, the layers get that much less. Returns the request and its printed size.
fn fit(
    table: &mut crate::play::Table,
    message: &str,
    budget: usize,
) -> anyhow::Result<(crate::play::Prepared, usize)> {
    let size = |p: &crate::play::Prepared| {
        request_tokens(p).max(render_text(p, Some(budget)).chars().count() / 4)
    };
    table.set_prompt_budget(budget);
    let mut p = table.prepare_quiet(message)?;
    for _ in 0..3 {
        let tokens = size(&p);
        if tokens <= budget {
            return Ok((p, tokens));
        }
        let now = table.prompt_budget().unwrap_or(budget);
        table.set_prompt_budget(now.saturating_sub(tokens - budget + 8).max(1));
        p = table.prepare_quiet(message)?;
    }
    let tokens = size(&p);
    Ok((p, tokens))
}

/// A preview without a session leaves nothing behind.
fn remove_preview(root: &Path, session: &str, preview_only: bool) {
    if preview_only {
        let _ = std::fs::remove_file(crate::session::log_path(root, session));
        let _ = std::fs::remove_file(crate::session::lock_path(root, session));
        let _ = std::fs::remove_file(crate::session::transcript_path(root, session));
    }
}

/// Tokens of the whole request.
fn request_tokens(p: &crate::play::Prepared) -> usize {
    let count = crate::tokens::count;
    count(&p.request.system)
        + p.request
            .messages
            .iter()
            .map(|m| count(&m.content))
            .sum::<usize>()
}

/// The request as text: one labelled section per message.
fn render_text(p: &crate::play::Prepared, budget: Option<usize>) -> String {
    use std::fmt::Write as _;
    let count = crate::tokens::count;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## system ({} tokens)\n{}",
        count(&p.request.system),
        p.request.system
    );
    let n = p.request.messages.len();
    for (i, m) in p.request.messages.iter().enumerate() {
        let role = match m.role {
            crate::llm::Role::User => "user",
            crate::llm::Role::Assistant => "dm",
        };
        if i + 1 == n {
            let _ = writeln!(
                out,
                "## {role}: this message ({} canon {} tokens, glossary {} terms, {} recalled)\n{}",
                match p.injected.mode {
                    crate::context::Mode::Full => "full",
                    crate::context::Mode::Light => "light",
                },
                count(&p.block),
                p.memory.terms,
                p.memory.passages.len(),
                m.content
            );
        } else {
            let _ = writeln!(out, "## {role}\n{}", m.content);
        }
    }
    let _ = writeln!(
        out,
        "## total {} tokens{}",
        request_tokens(p),
        budget.map(|b| format!(" of {b}")).unwrap_or_default()
    );
    out
}
