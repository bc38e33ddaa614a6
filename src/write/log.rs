//! The session's change log: `<vault>/.vaultdm/sessions/<name>.changes.jsonl`, append-only
//! like the session log. It keeps the DM's proposals until the GM decides (so they survive a
//! restart and `vaultdm review` can show them outside chat), and every change set applied,
//! with each note's text before and after, so `/revert` can put it back.

use super::apply::Applied;
use super::change::Change;
pub(crate) use super::error::LogError;
use crate::vault::boundary;
use chrono::{DateTime, FixedOffset};
use serde::{Deserialize, Serialize};
use std::fs::OpenOptions;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

/// Where a change came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum From {
    /// Typed by the GM (`/set`, `/move`, ...).
    Gm,
    /// Proposed by the DM and accepted by the GM (or applied in `auto` mode).
    Dm,
}

/// One line of the change log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Entry {
    /// The DM proposed changes with a reply.
    Proposed {
        /// When.
        time: DateTime<FixedOffset>,
        /// The proposal's number in this session.
        id: u64,
        /// The changes, as the DM wrote them.
        changes: Vec<Change>,
        /// What each change was shown as and made against (same order as `changes`;
        /// `None` where it could not be planned when proposed). Empty in logs written
        /// before it was kept.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        basis: Vec<Option<Basis>>,
    },
    /// The GM decided on some of a proposal's changes (numbered from 1 in the proposal).
    Decided {
        /// When.
        time: DateTime<FixedOffset>,
        /// The proposal.
        proposal: u64,
        /// Changes decided (1-based), accepted or not.
        items: Vec<usize>,
        /// Whether they were accepted.
        accepted: bool,
        /// Why they were not, when vaultdm decided (a change that did not hold).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// A change set was written to the vault.
    Applied {
        /// When.
        time: DateTime<FixedOffset>,
        /// The set's number in this session.
        set: u64,
        /// Who asked for it.
        from: From,
        /// What was written.
        applied: Applied,
    },
    /// A change set was put back.
    Reverted {
        /// When.
        time: DateTime<FixedOffset>,
        /// The set.
        set: u64,
    },
}

/// A value a proposed change replaces, as it was when the change was proposed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Was {
    /// Vault-relative path of the note.
    pub path: String,
    /// The key (or `current_day`).
    pub key: String,
    /// Its raw value (`None`: missing).
    pub value: Option<String>,
}

/// What a proposed change was shown as and made against: accepting it writes exactly
/// this, and only while the values it replaces are still these.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Basis {
    /// The change as shown: a relative value (`-7`) made the absolute value it was shown
    /// as (`15`).
    pub change: Change,
    /// The diff line the GM saw.
    pub shown: String,
    /// The values it replaces, as they were.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub was: Vec<Was>,
    /// A note it edits was saved after the canon the DM was given was read: the line was
    /// made from older canon than the note, so it holds only if the line reads the same
    /// on canon that is up to date.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stale: bool,
}

/// A proposed change and where it stands.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    /// Its id in this session: proposed changes are counted from 1 in the order the DM made
    /// them, and a change keeps its id for its whole life (accepted, rejected, restarted).
    pub id: usize,
    /// The proposal (reply) it came with.
    pub proposal: u64,
    /// Its place in that proposal (from 1).
    pub item: usize,
    /// The change, as the DM wrote it.
    pub change: Change,
    /// What it was shown as, when known.
    pub basis: Option<Basis>,
    /// `None` while pending; else whether it was accepted, and why not when vaultdm decided.
    pub decided: Option<(bool, Option<String>)>,
}

/// A pending proposed change.
pub(crate) type PendingChange = Proposal;

/// What was written to canon after `since`, by any session or command (every change log
/// under `.vaultdm/sessions/`), oldest first, as `Canon updated:` lines: the writes a session
/// did not see happen (a GM's `ask "/set …"` between two `ask`s, another chat's accepts).
/// Only logs modified after `since` are read.
pub(crate) fn written_since(vault: &Path, since: DateTime<FixedOffset>) -> Vec<String> {
    let dir = vault.join(".vaultdm/sessions");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let since_sys: std::time::SystemTime = since.into();
    let mut found: Vec<(DateTime<FixedOffset>, String)> = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(session) = name.strip_suffix(".changes.jsonl") else {
            continue;
        };
        let fresh = e
            .metadata()
            .ok()
            .filter(|m| m.file_type().is_file())
            .and_then(|m| m.modified().ok())
            .is_some_and(|t| t > since_sys);
        if !fresh {
            continue;
        }
        let Ok(log) = ChangeLog::open(vault, session) else {
            continue;
        };
        let mut sets: std::collections::HashMap<u64, Vec<String>> = Default::default();
        for entry in &log.entries {
            match entry {
                Entry::Applied {
                    time, set, applied, ..
                } => {
                    sets.insert(*set, applied.summaries.clone());
                    if *time > since {
                        found.extend(applied.summaries.iter().map(|s| (*time, s.clone())));
                    }
                }
                Entry::Reverted { time, set } if *time > since => {
                    if let Some(lines) = sets.get(set) {
                        found.push((*time, format!("put back: {}", lines.join("; "))));
                    }
                }
                _ => {}
            }
        }
    }
    found.sort_by_key(|(t, _)| *t);
    found.into_iter().map(|(_, s)| s).collect()
}

/// The change log of one session.
#[derive(Debug)]
pub struct ChangeLog {
    vault: PathBuf,
    rel: PathBuf,
    entries: Vec<Entry>,
    /// Lines that could not be read (file:line and why).
    pub warnings: Vec<String>,
}

fn now() -> DateTime<FixedOffset> {
    chrono::Local::now().fixed_offset()
}

impl ChangeLog {
    /// `<vault>/.vaultdm/sessions/<name>.changes.jsonl`, relative to the vault.
    pub fn rel_path(name: &str) -> PathBuf {
        Path::new(".vaultdm/sessions").join(format!("{name}.changes.jsonl"))
    }

    /// An empty log for session `name` (when the file could not be read).
    pub fn empty(vault: &Path, name: &str) -> ChangeLog {
        ChangeLog {
            vault: vault.to_path_buf(),
            rel: Self::rel_path(name),
            entries: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// Opens (reads) the change log of session `name`; a missing log is empty. A line that
    /// cannot be read is skipped with a warning, never fatal.
    pub fn open(vault: &Path, name: &str) -> Result<ChangeLog, LogError> {
        let rel = Self::rel_path(name);
        let path = vault.join(&rel);
        let mut log = ChangeLog {
            vault: vault.to_path_buf(),
            rel: rel.clone(),
            entries: Vec::new(),
            warnings: Vec::new(),
        };
        let bytes = match boundary::read_inside(vault, &rel, 256 * 1024 * 1024) {
            Ok(b) => b,
            Err(e) if e.is_not_found() => return Ok(log),
            Err(e) => {
                return Err(LogError {
                    path,
                    why: e.to_string(),
                })
            }
        };
        for (i, line) in bytes.lines().enumerate() {
            let Ok(line) = line else { continue };
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Entry>(&line) {
                Ok(e) => log.entries.push(e),
                Err(e) => log
                    .warnings
                    .push(format!("{}:{}: skipped ({e})", path.display(), i + 1)),
            }
        }
        Ok(log)
    }

    /// Every entry, oldest first.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    fn append(&mut self, entry: Entry) -> Result<(), LogError> {
        let path = self.vault.join(&self.rel);
        let err = |why: String| LogError {
            path: path.clone(),
            why,
        };
        let mut line = serde_json::to_string(&entry).map_err(|e| err(e.to_string()))?;
        line.push('\n');
        let dir = self.rel.parent().unwrap_or(Path::new(""));
        boundary::dir_inside(&self.vault, dir).map_err(|e| err(e.to_string()))?;
        let mut f = boundary::open_inside(&path, OpenOptions::new().append(true).create(true))
            .map_err(|e| err(e.to_string()))?;
        f.write_all(line.as_bytes())
            .and_then(|()| f.sync_data())
            .map_err(|e| err(e.to_string()))?;
        self.entries.push(entry);
        Ok(())
    }

    /// Records a proposal from the DM with what each change was shown as; returns its number.
    pub fn propose(
        &mut self,
        changes: Vec<Change>,
        basis: Vec<Option<Basis>>,
    ) -> Result<u64, LogError> {
        let id = 1 + self
            .entries
            .iter()
            .filter_map(|e| match e {
                Entry::Proposed { id, .. } => Some(*id),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        self.append(Entry::Proposed {
            time: now(),
            id,
            changes,
            basis,
        })?;
        Ok(id)
    }

    /// Records the decision on some pending changes (`reason`: why vaultdm did not accept
    /// them).
    pub fn decide(
        &mut self,
        proposal: u64,
        items: Vec<usize>,
        accepted: bool,
        reason: Option<String>,
    ) -> Result<(), LogError> {
        self.append(Entry::Decided {
            time: now(),
            proposal,
            items,
            accepted,
            reason,
        })
    }

    /// Records an applied set; returns its number.
    pub fn applied(&mut self, from: From, applied: Applied) -> Result<u64, LogError> {
        let set = 1 + self
            .entries
            .iter()
            .filter_map(|e| match e {
                Entry::Applied { set, .. } => Some(*set),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        self.append(Entry::Applied {
            time: now(),
            set,
            from,
            applied,
        })?;
        Ok(set)
    }

    /// Records that a set was put back.
    pub fn reverted(&mut self, set: u64) -> Result<(), LogError> {
        self.append(Entry::Reverted { time: now(), set })
    }

    /// Every proposed change with its id and where it stands, oldest first.
    pub fn proposals(&self) -> Vec<Proposal> {
        let mut out: Vec<Proposal> = Vec::new();
        for e in &self.entries {
            match e {
                Entry::Proposed {
                    id, changes, basis, ..
                } => {
                    for (i, c) in changes.iter().enumerate() {
                        out.push(Proposal {
                            id: out.len() + 1,
                            proposal: *id,
                            item: i + 1,
                            change: c.clone(),
                            basis: basis.get(i).cloned().flatten(),
                            decided: None,
                        });
                    }
                }
                Entry::Decided {
                    proposal,
                    items,
                    accepted,
                    reason,
                    ..
                } => {
                    for p in out.iter_mut().filter(|p| {
                        p.decided.is_none() && p.proposal == *proposal && items.contains(&p.item)
                    }) {
                        p.decided = Some((*accepted, reason.clone()));
                    }
                }
                _ => {}
            }
        }
        out
    }

    /// Proposed changes the GM has not decided on, oldest first.
    pub fn pending(&self) -> Vec<PendingChange> {
        self.proposals()
            .into_iter()
            .filter(|p| p.decided.is_none())
            .collect()
    }

    /// The last applied set not yet put back.
    pub fn last_applied(&self) -> Option<(u64, &Applied)> {
        let reverted: Vec<u64> = self
            .entries
            .iter()
            .filter_map(|e| match e {
                Entry::Reverted { set, .. } => Some(*set),
                _ => None,
            })
            .collect();
        self.entries.iter().rev().find_map(|e| match e {
            Entry::Applied { set, applied, .. } if !reverted.contains(set) => Some((*set, applied)),
            _ => None,
        })
    }
}
