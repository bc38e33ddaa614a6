//! `vaultdm review`: the DM's proposed canon changes for a session, outside chat — list
//! them, accept or reject them, or revert the last applied set.

use super::Outcome;
use crate::canon::Loaded;
use crate::context::{Engine, Options};
use crate::play::Table;
use std::io::Write;
use std::path::Path;

/// Arguments of `review`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The session (default: the most recent one).
    #[arg(long)]
    pub session: Option<String>,
    /// Apply these pending proposals (their numbers as listed, which never change; none: all
    /// of them).
    #[arg(long, num_args = 0.., value_name = "N", conflicts_with_all = ["reject", "revert"])]
    pub accept: Option<Vec<usize>>,
    /// Drop these pending proposals (their numbers as listed; none: all of them).
    #[arg(long, num_args = 0.., value_name = "N", conflicts_with = "revert")]
    pub reject: Option<Vec<usize>>,
    /// Put back the last applied change set (if its notes did not change since).
    #[arg(long)]
    pub revert: bool,
}

/// A table for writing only: canon, the session, no provider.
pub(crate) fn write_table(root: &Path, loaded: &Loaded, session: &str) -> anyhow::Result<Table> {
    super::clean_leftovers(root);
    let store = super::llm_args::open_session(root, session, false)?;
    table_for(root, loaded, store)
}

/// A table with no provider on an open session.
pub(crate) fn table_for(
    root: &Path,
    loaded: &Loaded,
    store: crate::session::Store,
) -> anyhow::Result<Table> {
    let engine = Engine::for_vault(root, loaded)?;
    let mut table = Table::new(
        engine,
        Options::for_vault(&loaded.config.context),
        None,
        store,
        0,
        loaded.config.context.full_context_after_changes,
    )?;
    table.set_review(loaded.config.write.review);
    table.set_memory_config(loaded.config.memory.clone());
    for n in table.take_notices() {
        eprintln!("vaultdm: {n}");
    }
    Ok(table)
}

/// Prints what a write did; true when it did what was asked (wrote it, or found canon
/// already says it).
pub(crate) fn print_written(
    out: &mut impl Write,
    w: &crate::write::Written,
) -> std::io::Result<bool> {
    for r in &w.plan.rejected {
        eprintln!("not applied: {}", r.reason);
    }
    for u in &w.plan.unchanged {
        writeln!(out, "nothing to write: {}", u.summary)?;
    }
    match &w.applied {
        Some((_, applied)) => {
            for line in &applied.summaries {
                writeln!(out, "✔ {line}")?;
            }
            Ok(true)
        }
        None => Ok(!w.plan.unchanged.is_empty()),
    }
}

/// Prints the pending proposals by id, then the latest decided ones.
pub(crate) fn print_proposals(out: &mut impl Write, table: &Table) -> std::io::Result<()> {
    for p in table.pending() {
        writeln!(out, "  {}. {}", p.number, p.line)?;
    }
    let decided = table.decided(5);
    if !decided.is_empty() {
        writeln!(out, "  decided:")?;
        for d in decided {
            writeln!(out, "  {}. {}", d.number, d.describe())?;
        }
    }
    Ok(())
}

/// Runs `review`.
pub(super) fn execute(root: &Path, args: Args) -> anyhow::Result<Outcome> {
    let loaded = Loaded::load(root)?;
    let session = match args.session {
        Some(s) => s,
        None => crate::session::list_all_sessions(root)?
            .into_iter()
            .max_by_key(|s| s.last_time)
            .map(|s| s.name)
            .ok_or_else(|| anyhow::anyhow!("no session yet in {}", root.display()))?,
    };
    let listing = !args.revert && args.accept.is_none() && args.reject.is_none();
    let mut table = if listing {
        // Listing writes nothing: a session a chat holds is read without its lock. Deciding
        // needs the lock, so the chat and this command never decide the same proposal twice.
        let store = crate::session::Store::open_to_read(root, &session)?;
        table_for(root, &loaded, store)?
    } else {
        write_table(root, &loaded, &session)?
    };
    let mut out = super::stdout();
    if args.revert {
        let (lines, _) = table.revert()?;
        writeln!(out, "reverted: {}", lines.join("; "))?;
        return Ok(Outcome::Ok);
    }
    if let Some(which) = args.accept {
        return Ok(match table.accept(&which)? {
            Some(w) if print_written(&mut out, &w)? => Outcome::Ok,
            Some(_) => Outcome::Code(1), // nothing held
            None => {
                writeln!(out, "no pending proposal in session \"{session}\"")?;
                Outcome::Ok
            }
        });
    }
    if let Some(which) = args.reject {
        let n = table.reject(&which)?;
        writeln!(out, "dropped {n} proposal(s); canon is unchanged")?;
        return Ok(Outcome::Ok);
    }
    let pending = table.pending();
    if pending.is_empty() {
        writeln!(out, "no pending proposal in session \"{session}\"")?;
        if !table.decided(1).is_empty() {
            print_proposals(&mut out, &table)?;
        }
    } else {
        writeln!(out, "session \"{session}\": proposed canon changes")?;
        print_proposals(&mut out, &table)?;
        writeln!(
            out,
            "accept with `vaultdm review --session {session} --accept [N ...]`, drop with --reject (numbers stay the same after each decision)"
        )?;
    }
    Ok(Outcome::Ok)
}
