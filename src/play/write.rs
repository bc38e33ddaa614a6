//! Write-back at the table: the GM's write commands, the DM's proposals and their review,
//! `/revert`, and taking what was written back into canon at once.

use super::{PlayError, Table};
use crate::config::Review;
use crate::watch::{Canon, Reload};
use crate::write::{self, plan, Change, From, Written};
use std::path::PathBuf;

/// A pending proposal as the GM sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingView {
    /// Its number for `/accept N`, `/reject N`, `/edit N`.
    pub number: usize,
    /// The diff line, or why it cannot be made.
    pub line: String,
    /// False when it would be rejected (the line says why).
    pub valid: bool,
}

/// What the DM proposed with a reply.
#[derive(Debug, Clone, Default)]
pub struct Proposals {
    /// In `ask` mode: every pending proposal, numbered (this reply's and older ones).
    pub pending: Vec<PendingView>,
    /// In `auto` mode: what was written.
    pub applied: Option<Written>,
    /// Proposal blocks that could not be read, with why.
    pub unreadable: Vec<String>,
}

/// Reads one proposal block (a tool call's arguments or a fenced block): a JSON array of
/// changes, an object with a `changes` array, one change object, or one change per line.
pub fn parse_block(text: &str) -> Result<Vec<Change>, String> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(Vec::new());
    }
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(t) {
        let list = match v {
            serde_json::Value::Array(a) => a,
            serde_json::Value::Object(mut o) if o.contains_key("changes") => {
                match o.remove("changes") {
                    Some(serde_json::Value::Array(a)) => a,
                    _ => return Err("`changes` is not a list".into()),
                }
            }
            other => vec![other],
        };
        return list
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                serde_json::from_value::<Change>(c).map_err(|e| format!("change {}: {e}", i + 1))
            })
            .collect();
    }
    t.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str::<Change>(l.trim()).map_err(|e| format!("line {}: {e}", i + 1))
        })
        .collect()
}

impl Table {
    /// What happens to the DM's proposals.
    pub fn review(&self) -> Review {
        self.review
    }

    /// Sets what happens to the DM's proposals (`[write] review`).
    pub fn set_review(&mut self, review: Review) {
        self.review = review;
        if let Ok(s) = self.engine.system_prompt() {
            self.system = super::with_guide(s, review);
        }
    }

    fn write_changes(&mut self, changes: &[Change], from: From) -> Result<Written, PlayError> {
        let root = self.store.vault().to_path_buf();
        write::write(
            self.engine.campaign(),
            self.engine.matcher(),
            &root,
            &mut self.changes_log,
            changes,
            from,
        )
        .map_err(|e| PlayError::Write(e.to_string()))
    }

    /// A write command typed by the GM (`/set`, `/move`, `/day`, `/event`, `/resolve`):
    /// read, checked and written at once — typing it is the consent. A change that does not
    /// hold is an error and writes nothing.
    pub fn write_command(&mut self, name: &str, args: &str) -> Result<Written, PlayError> {
        let change =
            write::command::parse(name, args, self.engine.campaign(), self.engine.matcher())
                .map_err(PlayError::Write)?;
        let written = self.write_changes(std::slice::from_ref(&change), From::Gm)?;
        if let Some(r) = written.plan.rejected.first() {
            return Err(PlayError::Write(r.reason.clone()));
        }
        // HP already 22, the party already there: said, not a silent exit.
        if written.applied.is_none() {
            return Err(PlayError::Write(format!(
                "nothing to write: canon already says that (/{name} {})",
                args.trim()
            )));
        }
        Ok(written)
    }

    /// Takes the DM's proposal blocks from a reply: records them with the session, then
    /// (by the review setting) applies the valid ones (`auto`), lists what waits for the GM
    /// (`ask`), or ignores them (`off`).
    pub fn take_proposals(&mut self, blocks: &[String]) -> Proposals {
        let mut out = Proposals::default();
        if self.review == Review::Off {
            return out;
        }
        let mut changes = Vec::new();
        for b in blocks {
            match parse_block(b) {
                Ok(c) => changes.extend(c),
                Err(e) => out.unreadable.push(e),
            }
        }
        if changes.is_empty() {
            return out;
        }
        if let Err(e) = self.changes_log.propose(changes) {
            out.unreadable.push(format!(
                "the proposals could not be kept with the session: {e}"
            ));
            return out;
        }
        if self.review == Review::Auto {
            match self.accept(&[]) {
                Ok(w) => out.applied = w,
                Err(e) => out.unreadable.push(e.to_string()),
            }
        }
        out.pending = self.pending();
        out
    }

    /// The proposals in a reply (its fenced blocks and its `propose_canon_changes` calls),
    /// taken as the review setting says.
    pub(super) fn proposals_of(&mut self, reply: &crate::llm::Reply) -> Proposals {
        let (_, mut blocks) = crate::llm::fence::split_fenced(&reply.text);
        blocks.extend(
            reply
                .tool_calls
                .iter()
                .filter(|c| c.name == crate::write::guide::TOOL_NAME)
                .map(|c| c.arguments.clone()),
        );
        if blocks.is_empty() {
            return Proposals::default();
        }
        self.take_proposals(&blocks)
    }

    /// The DM's pending proposals, numbered, each checked against canon as it is now.
    pub fn pending(&self) -> Vec<PendingView> {
        let root = self.store.vault();
        self.changes_log
            .pending()
            .into_iter()
            .enumerate()
            .map(|(i, (_, _, change))| {
                let p = plan::plan(
                    self.engine.campaign(),
                    self.engine.matcher(),
                    root,
                    std::slice::from_ref(&change),
                );
                match (p.planned.first(), p.rejected.first()) {
                    (Some(ok), _) => PendingView {
                        number: i + 1,
                        line: ok.summary.clone(),
                        valid: true,
                    },
                    (None, Some(r)) => PendingView {
                        number: i + 1,
                        line: format!("cannot apply: {} ({})", r.reason, describe(&change)),
                        valid: false,
                    },
                    (None, None) => PendingView {
                        number: i + 1,
                        line: format!("no change: {}", describe(&change)),
                        valid: false,
                    },
                }
            })
            .collect()
    }

    fn chosen(&self, which: &[usize]) -> Result<Vec<(u64, usize, Change)>, PlayError> {
        let pending = self.changes_log.pending();
        if let Some(n) = which.iter().find(|n| **n == 0 || **n > pending.len()) {
            return Err(PlayError::Write(format!(
                "there is no pending proposal {n} ({} pending; /pending lists them)",
                pending.len()
            )));
        }
        Ok(pending
            .into_iter()
            .enumerate()
            .filter(|(i, _)| which.is_empty() || which.contains(&(i + 1)))
            .map(|(_, p)| p)
            .collect())
    }

    fn decide(&mut self, chosen: &[(u64, usize, Change)], accepted: bool) -> Result<(), PlayError> {
        let mut by: std::collections::BTreeMap<u64, Vec<usize>> = Default::default();
        for (p, i, _) in chosen {
            by.entry(*p).or_default().push(*i);
        }
        for (p, items) in by {
            self.changes_log
                .decide(p, items, accepted)
                .map_err(|e| PlayError::Write(e.to_string()))?;
        }
        Ok(())
    }

    /// `/accept [N ...]`: writes the chosen pending proposals (all when none is named) in one
    /// set. The ones that no longer hold are dropped with their reasons (in the result's
    /// plan); on a conflict nothing is written and they stay pending.
    pub fn accept(&mut self, which: &[usize]) -> Result<Option<Written>, PlayError> {
        let chosen = self.chosen(which)?;
        if chosen.is_empty() {
            return Ok(None);
        }
        let changes: Vec<Change> = chosen.iter().map(|(_, _, c)| c.clone()).collect();
        let written = self.write_changes(&changes, From::Dm)?;
        // The log says what was written: a proposal that did not hold is decided as not
        // accepted (its reason is in the result), never recorded as accepted.
        let (refused, taken): (Vec<_>, Vec<_>) = chosen.into_iter().partition(|(_, _, c)| {
            written.applied.is_none() || written.plan.rejected.iter().any(|r| r.change == *c)
        });
        self.decide(&taken, true)?;
        self.decide(&refused, false)?;
        Ok(Some(written))
    }

    /// `/reject [N ...]`: drops the chosen pending proposals (all when none is named);
    /// returns how many.
    pub fn reject(&mut self, which: &[usize]) -> Result<usize, PlayError> {
        let chosen = self.chosen(which)?;
        self.decide(&chosen, false)?;
        Ok(chosen.len())
    }

    /// `/edit N /set ...`: replaces pending proposal N with the GM's own write command, and
    /// writes it.
    pub fn edit(&mut self, n: usize, line: &str) -> Result<Written, PlayError> {
        let chosen = self.chosen(&[n])?;
        let line = line.trim().trim_start_matches('/');
        let (name, args) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let written = self.write_command(&name.to_lowercase(), args)?;
        self.decide(&chosen, false)?;
        Ok(written)
    }

    /// `/revert`: puts back the last applied change set, if none of its notes changed since.
    /// Returns its diff lines and the files written.
    pub fn revert(&mut self) -> Result<(Vec<String>, Vec<PathBuf>), PlayError> {
        let Some((set, applied)) = self.changes_log.last_applied() else {
            return Err(PlayError::Write("no applied change to revert".into()));
        };
        let applied = applied.clone();
        let root = self.store.vault().to_path_buf();
        let paths =
            write::apply::revert(&root, &applied).map_err(|e| PlayError::Write(e.to_string()))?;
        self.changes_log
            .reverted(set)
            .map_err(|e| PlayError::Write(e.to_string()))?;
        Ok((applied.summaries, paths))
    }

    /// Takes vaultdm's own writes into canon now: reloads exactly these files, so the next
    /// message's context shows them (the watcher later finds them unchanged).
    pub fn reload_written(&mut self, canon: &mut Canon, paths: &[PathBuf]) -> Reload {
        let r = canon.reload_paths(paths);
        self.take_reload(&r, canon.live());
        r
    }
}

/// A change in a few words, for one that cannot be planned.
fn describe(c: &Change) -> String {
    serde_json::to_string(c).unwrap_or_else(|_| format!("{c:?}"))
}
