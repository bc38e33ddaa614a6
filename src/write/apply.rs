//! Making a plan true on disk, all or nothing, and undoing it.
//!
//! Each note is re-read just before it is written. If it is what the plan saw, the planned
//! text is written; if the GM (or a sync tool) changed it since, every edit is checked
//! against the note as it is now (the value it replaces must still be there) and made
//! again on the new text; if one does not hold, nothing at all is written and the conflict
//! says which note and why. Every file is replaced atomically
//! ([`boundary::write_atomic_inside`]); if a write fails half-way through a set, the notes
//! already written are put back.

pub use super::error::{ConflictReason, IoReason, WriteError};
use super::plan::{read_note, FileEdit, Plan};
use crate::vault::boundary::{self, Replaced};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A file as one applied set left it: enough to know it is unchanged since and to put it
/// back. Only the part that changed is kept (an event appended to a long timeline keeps
/// the event, not the timeline twice), so a long session's change log stays small.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppliedFile {
    /// Vault-relative path.
    pub path: String,
    /// The set created the file (putting it back removes it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub created: bool,
    /// Bytes the text before and after share at the start.
    pub prefix: usize,
    /// Bytes they share at the end (after the prefix).
    pub suffix: usize,
    /// What stood between them before.
    pub before: String,
    /// What stands between them after.
    pub after: String,
    /// Length of the whole text after.
    pub after_len: usize,
    /// Hash of the whole text after ([`crate::vault::note::hash_bytes`]).
    pub after_hash: u64,
    /// Folders the set created for a new file, outermost first (putting it back removes
    /// them again when they are empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub created_dirs: Vec<String>,
}

impl AppliedFile {
    /// Records the change from `before` (`None`: a new file) to `after`.
    pub fn new(path: &str, before: Option<&str>, after: &str) -> AppliedFile {
        let b = before.unwrap_or("");
        let mut prefix = b
            .bytes()
            .zip(after.bytes())
            .take_while(|(x, y)| x == y)
            .count();
        while !b.is_char_boundary(prefix) || !after.is_char_boundary(prefix) {
            prefix -= 1;
        }
        let mut suffix = b[prefix..]
            .bytes()
            .rev()
            .zip(after[prefix..].bytes().rev())
            .take_while(|(x, y)| x == y)
            .count();
        while !b.is_char_boundary(b.len() - suffix) || !after.is_char_boundary(after.len() - suffix)
        {
            suffix -= 1;
        }
        AppliedFile {
            path: path.to_string(),
            created: before.is_none(),
            prefix,
            suffix,
            before: b[prefix..b.len() - suffix].to_string(),
            after: after[prefix..after.len() - suffix].to_string(),
            after_len: after.len(),
            after_hash: crate::vault::note::hash_bytes(after.as_bytes()),
            created_dirs: Vec::new(),
        }
    }

    /// Whether `now` is the text this set left.
    pub fn is_after(&self, now: &str) -> bool {
        now.len() == self.after_len
            && crate::vault::note::hash_bytes(now.as_bytes()) == self.after_hash
            && now.get(self.prefix..self.prefix + self.after.len()) == Some(self.after.as_str())
    }

    /// The text before, from the text after (`None`: the file did not exist).
    pub fn before_of(&self, now: &str) -> Option<String> {
        if self.created {
            return None;
        }
        let mut t = String::with_capacity(now.len() + self.before.len());
        t.push_str(&now[..self.prefix]);
        t.push_str(&self.before);
        t.push_str(&now[now.len() - self.suffix..]);
        Some(t)
    }
}

/// A change set that was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Applied {
    /// The diff lines of its changes.
    pub summaries: Vec<String>,
    /// The files it wrote.
    pub files: Vec<AppliedFile>,
}

impl Applied {
    /// The files written, as paths under `root` (for the live reload).
    pub fn paths(&self, root: &Path) -> Vec<PathBuf> {
        self.files.iter().map(|f| root.join(&f.path)).collect()
    }
}

/// The text to write for `f` given the note as it is now.
fn final_text(f: &FileEdit, now: Option<&str>) -> Result<String, WriteError> {
    if now == f.before.as_deref() {
        return Ok(f.after.clone());
    }
    let conflict = |why: ConflictReason| WriteError::Conflict {
        path: f.path.clone(),
        why,
    };
    let mut text = now.unwrap_or("").to_string();
    if now.is_none() && f.before.is_some() {
        return Err(conflict(ConflictReason::Deleted));
    }
    for op in &f.ops {
        op.still_holds(&text).map_err(|e| conflict(e.into()))?;
        text = op.apply(&text).map_err(|e| conflict(e.into()))?;
    }
    Ok(text)
}

/// How often a write re-plans on a note the GM keeps saving before it gives up.
const TRIES: usize = 8;

/// Replaces `path` with `text` (`None`: removes it) only while it still holds `expect`.
fn put(
    root: &Path,
    path: &str,
    expect: Option<&str>,
    text: Option<&str>,
) -> Result<Replaced, WriteError> {
    let io = |why: IoReason| WriteError::Io {
        path: path.to_string(),
        why,
    };
    match text {
        Some(t) => boundary::replace_inside_if(
            root,
            Path::new(path),
            t.as_bytes(),
            expect.map(str::as_bytes),
        )
        .map_err(|e| io(e.into())),
        None => {
            // Only a file inside the vault is removed, and only while it is what was written.
            let real = boundary::check_inside(root, Path::new(path)).map_err(|e| io(e.into()))?;
            let now = std::fs::read(&real).ok();
            if now.as_deref() != expect.map(str::as_bytes) {
                return Ok(Replaced::Changed(now));
            }
            std::fs::remove_file(&real).map_err(|e| io(e.into()))?;
            Ok(Replaced::Done(real))
        }
    }
}

/// What one file of a set became: (path, text it replaced, text written).
type Made = (String, Option<String>, Option<String>);

/// Writes one file of a set: `text_for` gives the text to write over what the note holds;
/// if the GM saves the note between vaultdm's read and its write, the text is made again on
/// the GM's version (or the conflict is reported) — never written over it.
fn put_checked(
    root: &Path,
    path: &str,
    mut now: Option<String>,
    text_for: &TextFor<'_>,
) -> Result<Made, WriteError> {
    for _ in 0..TRIES {
        let text = text_for(now.as_deref())?;
        match put(root, path, now.as_deref(), text.as_deref())? {
            Replaced::Done(_) => return Ok((path.to_string(), now, text)),
            Replaced::Changed(b) => {
                now = match b {
                    Some(b) => Some(String::from_utf8(b).map_err(|e| WriteError::Io {
                        path: path.to_string(),
                        why: IoReason::NoLongerUtf8 {
                            source: e.utf8_error(),
                        },
                    })?),
                    None => None,
                }
            }
        }
    }
    Err(WriteError::Conflict {
        path: path.to_string(),
        why: ConflictReason::KeptChanging,
    })
}

/// Writes each file of a set, side by side (the syncs of one wait while another writes);
/// if any fails, puts back the ones written (each only while it is still what was written).
fn write_all(
    root: &Path,
    jobs: Vec<(String, Option<String>, Box<TextFor<'_>>)>,
) -> Result<Vec<Made>, WriteError> {
    let results: Vec<Result<Made, WriteError>> = if jobs.len() < 2 {
        jobs.into_iter()
            .map(|(path, now, f)| put_checked(root, &path, now, &*f))
            .collect()
    } else {
        std::thread::scope(|s| {
            let handles: Vec<_> = jobs
                .into_iter()
                .map(|(path, now, f)| {
                    let p = path.clone();
                    (p, s.spawn(move || put_checked(root, &path, now, &*f)))
                })
                .collect();
            handles
                .into_iter()
                .map(|(path, h)| {
                    h.join().unwrap_or(Err(WriteError::Io {
                        path,
                        why: IoReason::Stopped,
                    }))
                })
                .collect()
        })
    };
    let mut made = Vec::with_capacity(results.len());
    let mut failed = None;
    for r in results {
        match r {
            Ok(m) => made.push(m),
            Err(e) => {
                failed.get_or_insert(e);
            }
        }
    }
    if let Some(e) = failed {
        for (path, before, after) in made.iter().rev() {
            let _ = put(root, path, after.as_deref(), before.as_deref());
        }
        return Err(e);
    }
    Ok(made)
}

/// Makes the text to write from what a note holds now.
type TextFor<'a> = dyn Fn(Option<&str>) -> Result<Option<String>, WriteError> + Send + Sync + 'a;

/// Writes a plan: all its files or none. Each note is compared with what the plan was made
/// on just before it is replaced (see [`boundary::replace_inside_if`]).
pub fn apply(root: &Path, plan: &Plan) -> Result<Applied, WriteError> {
    let mut jobs: Vec<(String, Option<String>, Box<TextFor<'_>>)> = Vec::new();
    for f in &plan.files {
        let now = read_note(root, &f.path).map_err(|e| WriteError::Io {
            path: f.path.clone(),
            why: e.into(),
        })?;
        // A conflict found now writes nothing at all.
        final_text(f, now.as_deref())?;
        jobs.push((
            f.path.clone(),
            now,
            Box::new(move |now: Option<&str>| final_text(f, now).map(Some)),
        ));
    }
    let dirs: Vec<Vec<String>> = jobs.iter().map(|(p, _, _)| missing_dirs(root, p)).collect();
    let made = write_all(root, jobs)?;
    Ok(Applied {
        summaries: plan.planned.iter().map(|p| p.summary.clone()).collect(),
        files: made
            .into_iter()
            .zip(dirs)
            .map(|((path, before, after), dirs)| AppliedFile {
                created_dirs: dirs,
                ..AppliedFile::new(&path, before.as_deref(), after.as_deref().unwrap_or(""))
            })
            .collect(),
    })
}

/// The folders above `path` that do not exist yet, outermost first.
fn missing_dirs(root: &Path, path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut at = Path::new(path).parent();
    while let Some(d) = at.filter(|d| !d.as_os_str().is_empty()) {
        if root.join(d).exists() {
            break;
        }
        out.push(d.to_string_lossy().replace('\\', "/"));
        at = d.parent();
    }
    out.reverse();
    out
}

/// Puts back what `set` changed, if none of its notes changed since (else a conflict and
/// nothing is written). Returns the paths written.
pub fn revert(root: &Path, set: &Applied) -> Result<Vec<PathBuf>, WriteError> {
    let mut jobs: Vec<(String, Option<String>, Box<TextFor<'_>>)> = Vec::new();
    for f in &set.files {
        let now = read_note(root, &f.path).map_err(|e| WriteError::Io {
            path: f.path.clone(),
            why: e.into(),
        })?;
        let back = move |now: Option<&str>| {
            let Some(now) = now else {
                return Err(WriteError::Conflict {
                    path: f.path.clone(),
                    why: ConflictReason::GoneSinceApplied,
                });
            };
            if !f.is_after(now) {
                return Err(WriteError::Conflict {
                    path: f.path.clone(),
                    why: ConflictReason::EditedSinceApplied,
                });
            }
            Ok(f.before_of(now))
        };
        back(now.as_deref())?;
        jobs.push((f.path.clone(), now, Box::new(back)));
    }
    write_all(root, jobs)?;
    // Folders the set created, innermost first, when nothing else was put in them since.
    for f in &set.files {
        for d in f.created_dirs.iter().rev() {
            if let Ok(real) = boundary::check_inside(root, Path::new(d)) {
                let _ = std::fs::remove_dir(real);
            }
        }
    }
    Ok(set.paths(root))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        /// The kept difference always gives back the text before, byte for byte.
        #[test]
        fn the_kept_difference_gives_back_the_text_before(
            before in "[a-cé\n -]{0,40}",
            after in "[a-cé\n -]{0,40}",
        ) {
            let f = AppliedFile::new("n.md", Some(&before), &after);
            prop_assert!(f.is_after(&after));
            prop_assert_eq!(f.before_of(&after), Some(before.clone()));
            prop_assert!(f.before.len() + f.after.len() <= before.len() + after.len());
        }
    }

    /// A note the GM deleted after the change is not "edited": the conflict says deleted.
    #[test]
    fn reverting_over_a_deleted_note_says_it_was_deleted() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let f = AppliedFile::new("n.md", Some("hp: 3\n"), "hp: 1\n");
        let set = Applied {
            summaries: vec![],
            files: vec![f],
        };
        match revert(dir.path(), &set) {
            Err(e @ WriteError::Conflict { .. }) => {
                assert!(
                    matches!(
                        e,
                        WriteError::Conflict {
                            why: ConflictReason::GoneSinceApplied,
                            ..
                        }
                    ),
                    "{e}"
                );
                assert!(e.to_string().contains("deleted"), "{e}");
            }
            other => panic!("expected a conflict, got {other:?}"),
        }
        assert!(!dir.path().join("n.md").exists());
    }

    /// A set that made a note in folders it created takes the folders away again on revert
    /// (and leaves a folder the GM has put something in since).
    #[test]
    fn reverting_a_new_note_removes_the_folders_it_made() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path();
        std::fs::create_dir(root.join("Quests")).unwrap_or_else(|e| panic!("{e}"));
        let plan = |path: &str| Plan {
            files: vec![FileEdit {
                path: path.into(),
                before: None,
                after: "# New\n".into(),
                ops: vec![super::super::plan::Op::Create {
                    text: "# New\n".into(),
                }],
            }],
            ..Plan::default()
        };
        let set = apply(root, &plan("Quests/Act 2/Side/new.md")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            set.files[0].created_dirs,
            ["Quests/Act 2", "Quests/Act 2/Side"]
        );
        revert(root, &set).unwrap_or_else(|e| panic!("{e}"));
        assert!(!root.join("Quests/Act 2").exists());
        assert!(
            root.join("Quests").is_dir(),
            "a folder that was there stays"
        );

        let set = apply(root, &plan("Lore/new.md")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(root.join("Lore/gm.md"), "mine").unwrap_or_else(|e| panic!("{e}"));
        revert(root, &set).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            root.join("Lore/gm.md").exists(),
            "the GM's file and its folder stay"
        );
    }

    #[test]
    fn an_appended_event_keeps_only_the_event() {
        let before = "# Timeline\n\n## Day 1\n- a\n".repeat(100);
        let after = format!("{before}- b\n");
        let f = AppliedFile::new("t.md", Some(&before), &after);
        assert_eq!((f.before.as_str(), f.after.as_str()), ("", "- b\n"));
        assert!(!f.is_after(&before));
        let created = AppliedFile::new("new.md", None, "x");
        assert_eq!(created.before_of("x"), None);
    }
}
