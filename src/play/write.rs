//! Write-back at the table: the GM's write commands, the DM's proposals and their review,
//! `/revert`, and taking what was written back into canon at once.

use super::{PlayError, Table};
use crate::config::Review;
use crate::watch::{Canon, Reload};
use crate::write::log::{Basis, Proposal};
use crate::write::{self, plan, Change, From, PlanError, Written};
use std::path::PathBuf;

/// A pending proposal as the GM sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingView {
    /// Its id for `/accept N`, `/reject N`, `/edit N`: kept for its whole life (the n-th
    /// change the DM proposed in this session), so a number typed from a list printed
    /// earlier still names the same change after others were decided.
    pub number: usize,
    /// The diff line, or why it cannot be made.
    pub line: String,
    /// False when it would be rejected or is in conflict (the line says why).
    pub valid: bool,
}

/// A proposal that was decided, as the GM sees it in the list.
#[derive(Debug, Clone, PartialEq)]
pub struct DecidedView {
    /// Its id.
    pub number: usize,
    /// The diff line it was shown as.
    pub line: String,
    /// Whether it was accepted.
    pub accepted: bool,
    /// Why it was not accepted, when vaultdm decided.
    pub reason: Option<String>,
}

impl DecidedView {
    /// Its line: `accepted: …`, `rejected: …`, `not applied: … (why)`.
    pub fn describe(&self) -> String {
        match (self.accepted, &self.reason) {
            (true, _) => format!("accepted: {}", self.line),
            (false, Some(why)) if why.starts_with(REPLACED) => {
                format!("replaced: {} ({why})", self.line)
            }
            (false, Some(why)) => format!("not applied: {} ({why})", self.line),
            (false, None) => format!("rejected: {}", self.line),
        }
    }
}

/// What the DM proposed with a reply.
#[derive(Debug, Clone, Default)]
pub struct Proposals {
    /// In `ask` mode: every pending proposal, by id (this reply's and older ones).
    pub pending: Vec<PendingView>,
    /// In `auto` mode: what was written.
    pub applied: Option<Written>,
    /// Proposed changes that cannot be made (in every mode), each with why; they are
    /// logged as not accepted with that reason.
    pub refused: Vec<DecidedView>,
    /// Proposal blocks that could not be read, with why.
    pub unreadable: Vec<String>,
}

/// Reads one proposal block (a tool call's arguments or a fenced block): a JSON array of
/// changes, an object with a `changes` array, one change object, or one change per line.
pub(super) fn parse_block(text: &str) -> Result<Vec<Change>, String> {
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
        self.proposing.review
    }

    /// Sets what happens to the DM's proposals (`[write] review`).
    pub fn set_review(&mut self, review: Review) {
        self.proposing.review = review;
        if let Ok(s) = self.canon.engine.system_prompt() {
            self.canon.system = super::with_guide(s, review);
        }
    }

    fn write_changes(&mut self, changes: &[Change], from: From) -> Result<Written, PlayError> {
        let root = self.store.vault().to_path_buf();
        write::write(
            self.canon.engine.campaign(),
            self.canon.engine.matcher(),
            &root,
            &mut self.proposing.log,
            changes,
            from,
        )
        .map_err(|e| PlayError::Write(e.to_string()))
    }

    /// A write command typed by the GM (`/set`, `/move`, `/day`, `/event`, `/resolve`):
    /// read, checked and written at once — typing it is the consent. A change that does not
    /// hold is an error and writes nothing; one canon already says writes nothing and its
    /// result says so (`plan.unchanged`).
    pub fn write_command(&mut self, name: &str, args: &str) -> Result<Written, PlayError> {
        let change = write::command::parse(
            name,
            args,
            self.canon.engine.campaign(),
            self.canon.engine.matcher(),
        )
        .map_err(|e| PlayError::Write(e.to_string()))?;
        let written = self.write_changes(std::slice::from_ref(&change), From::Gm)?;
        if let Some(r) = written.plan.rejected.first() {
            return Err(PlayError::Write(r.reason.clone()));
        }
        Ok(written)
    }

    /// Takes the DM's proposal blocks from a reply: records them with the session, each with
    /// the line it is shown as and the values it replaces (its basis), then (by the review
    /// setting) applies the valid ones (`auto`), lists what waits for the GM (`ask`), or
    /// ignores them (`off`). A change that cannot be made is shown in every mode and logged
    /// as not accepted, with why.
    pub fn take_proposals(&mut self, blocks: &[String]) -> Proposals {
        let mut out = Proposals::default();
        if self.proposing.review == Review::Off {
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
        let root = self.store.vault().to_path_buf();
        let bases: Vec<Result<Basis, PlanError>> = changes
            .iter()
            .map(|c| {
                let mut b = plan::basis(
                    self.canon.engine.campaign(),
                    self.canon.engine.matcher(),
                    &root,
                    c,
                )?;
                b.stale = self.newer_than_canon(&b).is_some();
                Ok(b)
            })
            .collect();
        let first = self.proposing.log.proposals().len() + 1;
        let proposal = match self.proposing.log.propose(
            changes.clone(),
            bases.iter().map(|b| b.as_ref().ok().cloned()).collect(),
        ) {
            Ok(p) => p,
            Err(e) => {
                out.unreadable.push(format!(
                    "the proposals could not be kept with the session: {e}"
                ));
                return out;
            }
        };
        // What cannot be made is decided now, with its reason, in every mode.
        for (i, (c, b)) in changes.iter().zip(&bases).enumerate() {
            if let Err(e) = b {
                let reason = e.to_string();
                let decided =
                    self.proposing
                        .log
                        .decide(proposal, vec![i + 1], false, Some(reason.clone()));
                if let Err(e) = decided {
                    out.unreadable.push(e.to_string());
                }
                out.refused.push(DecidedView {
                    number: first + i,
                    line: describe(c),
                    accepted: false,
                    reason: Some(reason),
                });
            }
        }
        if self.proposing.review == Review::Auto {
            // What checks clean is applied; a conflict (the GM saved the note while the
            // reply streamed) stays pending and is listed.
            let all = self.proposing.log.proposals();
            let ids: Vec<usize> = (first..first + changes.len())
                .filter(|id| bases[id - first].is_ok())
                .filter(|id| {
                    all.iter()
                        .find(|p| p.id == *id)
                        .is_some_and(|p| self.check(p).is_ok())
                })
                .collect();
            if !ids.is_empty() {
                match self.accept(&ids) {
                    Ok(w) => out.applied = w,
                    Err(e) => out.unreadable.push(e.to_string()),
                }
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

    /// Where a proposal stands against canon as it is now: `Ok` with its line when it can
    /// be written as shown; `Err` with why not (it no longer holds, or the values it
    /// replaces changed since it was proposed: old / now / proposed).
    fn check(&self, p: &Proposal) -> Result<String, String> {
        let root = self.store.vault();
        let (c, m) = (self.canon.engine.campaign(), self.canon.engine.matcher());
        let Some(b) = &p.basis else {
            // Logged before bases were kept: checked as it is now.
            return plan::basis(c, m, root, &p.change)
                .map(|now| now.shown)
                .map_err(|e| e.to_string());
        };
        let now = plan::basis(c, m, root, &b.change)
            .map_err(|why| format!("cannot apply: {why} (was: {})", b.shown))?;
        if b.stale && now.shown != b.shown && now.was == b.was {
            return Err(format!(
                "conflict: proposed {} but it would now read {}",
                b.shown, now.shown
            ));
        }
        let changed: Vec<String> = b
            .was
            .iter()
            .filter(|w| !now.was.contains(w))
            .map(|w| {
                let is = now
                    .was
                    .iter()
                    .find(|n| n.path == w.path && n.key == w.key)
                    .and_then(|n| n.value.clone());
                format!(
                    "{} `{}` was {} when proposed and is {} now",
                    w.path,
                    w.key,
                    shown_value(w.value.as_deref()),
                    shown_value(is.as_deref()),
                )
            })
            .collect();
        if changed.is_empty() && now.was.len() == b.was.len() {
            if let Some(path) = self.newer_than_canon(b) {
                return Err(format!(
                    "conflict: proposed {} but {path} changed after the DM was given canon; it is checked again when canon reloads (or with `vaultdm review`)",
                    b.shown
                ));
            }
            Ok(b.shown.clone())
        } else if changed.is_empty() {
            Err(format!(
                "conflict: {} (the note changed since it was proposed)",
                b.shown
            ))
        } else {
            Err(format!(
                "conflict: proposed {} but {}",
                b.shown,
                changed.join("; ")
            ))
        }
    }

    /// A note a proposal replaces a value of that was modified after the canon the DM was
    /// given was read (the GM saved it while the reply streamed, before a reload): its
    /// values in canon are not the note's. A time in the future (a sync tool's clock) says
    /// nothing and is not taken as newer.
    fn newer_than_canon(&self, b: &Basis) -> Option<String> {
        let root = self.store.vault();
        let now = std::time::SystemTime::now();
        b.was
            .iter()
            .map(|w| &w.path)
            .find(|p| {
                std::fs::metadata(root.join(p))
                    .and_then(|m| m.modified())
                    .is_ok_and(|t| t > self.canon.at && t <= now)
            })
            .cloned()
    }

    /// The DM's pending proposals, by id, each checked against canon as it is now.
    pub fn pending(&self) -> Vec<PendingView> {
        self.proposing
            .log
            .pending()
            .iter()
            .map(|p| match self.check(p) {
                Ok(line) => PendingView {
                    number: p.id,
                    line,
                    valid: true,
                },
                Err(line) => PendingView {
                    number: p.id,
                    line,
                    valid: false,
                },
            })
            .collect()
    }

    /// The proposals decided in this session, by id, the latest `last` of them.
    pub fn decided(&self, last: usize) -> Vec<DecidedView> {
        let all: Vec<DecidedView> = self
            .proposing
            .log
            .proposals()
            .into_iter()
            .filter_map(|p| {
                let (accepted, reason) = p.decided?;
                Some(DecidedView {
                    number: p.id,
                    line: p.basis.map_or_else(|| describe(&p.change), |b| b.shown),
                    accepted,
                    reason,
                })
            })
            .collect();
        let skip = all.len().saturating_sub(last);
        all.into_iter().skip(skip).collect()
    }

    /// The pending proposals `which` names by id (all pending ones when it names none).
    fn chosen(&self, which: &[usize]) -> Result<Vec<Proposal>, PlayError> {
        let all = self.proposing.log.proposals();
        for n in which {
            match all.iter().find(|p| p.id == *n) {
                None => {
                    let pending: Vec<String> = all
                        .iter()
                        .filter(|p| p.decided.is_none())
                        .map(|p| p.id.to_string())
                        .collect();
                    return Err(PlayError::Write(format!(
                        "there is no proposal {n} (pending: {}; /pending lists them)",
                        if pending.is_empty() {
                            "none".to_string()
                        } else {
                            pending.join(", ")
                        }
                    )));
                }
                Some(Proposal {
                    decided: Some((accepted, _)),
                    ..
                }) => {
                    return Err(PlayError::Write(format!(
                        "proposal {n} was already {}",
                        if *accepted { "accepted" } else { "rejected" }
                    )))
                }
                Some(_) => {}
            }
        }
        Ok(all
            .into_iter()
            .filter(|p| p.decided.is_none() && (which.is_empty() || which.contains(&p.id)))
            .collect())
    }

    fn decide(
        &mut self,
        chosen: &[Proposal],
        accepted: bool,
        reason: impl Fn(&Proposal) -> Option<String>,
    ) -> Result<(), PlayError> {
        let mut by: std::collections::BTreeMap<(u64, Option<String>), Vec<usize>> =
            Default::default();
        for p in chosen {
            by.entry((p.proposal, reason(p))).or_default().push(p.item);
        }
        for ((p, why), items) in by {
            self.proposing
                .log
                .decide(p, items, accepted, why)
                .map_err(|e| PlayError::Write(e.to_string()))?;
        }
        Ok(())
    }

    /// `/accept [N ...]`: writes the chosen pending proposals (all when none is named) in
    /// one set, each exactly as it was shown (a relative change as the absolute value it
    /// was shown as). If a value one of them replaces changed since it was proposed (the
    /// GM edited, deleted or moved it), that is a conflict: nothing is written, they stay
    /// pending, and the error shows old / now / proposed. The ones that no longer hold at
    /// all are decided as not accepted with their reasons (in the result's plan).
    pub fn accept(&mut self, which: &[usize]) -> Result<Option<Written>, PlayError> {
        let chosen = self.chosen(which)?;
        if chosen.is_empty() {
            return Ok(None);
        }
        let mut conflicts = Vec::new();
        for p in &chosen {
            if let Err(why) = self.check(p) {
                if why.starts_with("conflict") {
                    conflicts.push(format!("#{} {why}", p.id));
                }
            }
        }
        if !conflicts.is_empty() {
            return Err(PlayError::Write(format!(
                "{}; nothing was written. The proposals stay pending: /edit N with your own \
                 /set makes it against the note as it is now, /reject N drops it",
                conflicts.join("; ")
            )));
        }
        let changes: Vec<Change> = chosen
            .iter()
            .map(|p| p.basis.as_ref().map_or(&p.change, |b| &b.change).clone())
            .collect();
        let written = self.write_changes(&changes, From::Dm)?;
        // The log says what was written: a proposal that did not hold is decided as not
        // accepted with its reason, never recorded as accepted.
        let reason_of = |p: &Proposal| {
            let c = p.basis.as_ref().map_or(&p.change, |b| &b.change);
            written
                .plan
                .rejected
                .iter()
                .find(|r| r.change == *c)
                .map(|r| r.reason.clone())
        };
        let (refused, taken): (Vec<_>, Vec<_>) =
            chosen.into_iter().partition(|p| reason_of(p).is_some());
        self.decide(&taken, true, |_| None)?;
        self.decide(&refused, false, reason_of)?;
        Ok(Some(written))
    }

    /// `/reject [N ...]`: drops the chosen pending proposals (all when none is named);
    /// returns how many.
    pub fn reject(&mut self, which: &[usize]) -> Result<usize, PlayError> {
        let chosen = self.chosen(which)?;
        self.decide(&chosen, false, |_| None)?;
        Ok(chosen.len())
    }

    /// `/edit N /set ...`: replaces pending proposal N with the GM's own write command, and
    /// writes it.
    pub fn edit(&mut self, n: usize, line: &str) -> Result<Written, PlayError> {
        let chosen = self.chosen(&[n])?;
        let line = line.trim().trim_start_matches('/');
        let (name, args) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let written = self.write_command(&name.to_lowercase(), args)?;
        let why = format!("{REPLACED} /{line}");
        self.decide(&chosen, false, |_| Some(why.clone()))?;
        Ok(written)
    }

    /// `/revert`: puts back the last applied change set, if none of its notes changed since.
    /// Returns its diff lines and the files written.
    pub fn revert(&mut self) -> Result<(Vec<String>, Vec<PathBuf>), PlayError> {
        let Some((set, applied)) = self.proposing.log.last_applied() else {
            return Err(PlayError::Write("no applied change to revert".into()));
        };
        let applied = applied.clone();
        let root = self.store.vault().to_path_buf();
        let paths =
            write::apply::revert(&root, &applied).map_err(|e| PlayError::Write(e.to_string()))?;
        self.proposing
            .log
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

/// The reason `/edit` gives the proposal it replaces.
const REPLACED: &str = "replaced by the GM's";

/// A raw value as the GM reads it.
fn shown_value(v: Option<&str>) -> String {
    match v.map(str::trim) {
        None | Some("") => "missing".into(),
        Some(v) => v.to_string(),
    }
}

/// A change in a few words, for one that cannot be planned.
fn describe(c: &Change) -> String {
    serde_json::to_string(c).unwrap_or_else(|_| format!("{c:?}"))
}
