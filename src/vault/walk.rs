//! Walking a vault: which files are notes.
//!
//! Skips hidden folders (`.obsidian/`, `.trash/`, `.vaultdm/`, `.git/`), non-Markdown
//! files and the root `sessions/` folder, where vaultdm writes transcripts. Symlinks are
//! followed only when they stay inside the vault; loops and escapes are diagnostics.

use super::diagnostic::Diagnostic;
use std::path::{Path, PathBuf};

/// A Markdown file found in the vault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Absolute path on disk.
    pub abs: PathBuf,
    /// Vault-relative path with `/` separators.
    pub rel: String,
}

/// Converts a path under `root` into the vault-relative `/`-separated form.
pub fn rel_path(root: &Path, abs: &Path) -> Option<String> {
    let rel = abs.strip_prefix(root).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// True when a vault-relative path is never canon: hidden segments, the root `sessions/`
/// folder, and anything that is not a `.md` file.
pub fn is_ignored(rel: &str) -> bool {
    let mut segs = rel.split('/');
    let first = segs.clone().next().unwrap_or("");
    if first == "sessions" {
        return true;
    }
    if segs.any(|s| s.starts_with('.') || s.ends_with('~')) {
        return true;
    }
    !rel.to_ascii_lowercase().ends_with(".md")
}

/// Walks the vault, returning its notes (sorted by path) and walk problems.
pub fn walk(root: &Path) -> (Vec<Found>, Vec<Diagnostic>) {
    walk_under(root, root)
}

/// Walks one folder of the vault (`dir`, inside `root`) with the same rules as [`walk`]:
/// used when a folder appears or moves while watching.
pub fn walk_under(root: &Path, dir: &Path) -> (Vec<Found>, Vec<Diagnostic>) {
    let mut found = Vec::new();
    let mut diags = Vec::new();
    let canon_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let mut escaped: Vec<Diagnostic> = Vec::new();
    // Depth of `dir` below the root, so the root `sessions/` rule holds from any start.
    let base = dir.strip_prefix(root).map_or(0, |r| r.components().count());
    let it = walkdir::WalkDir::new(dir)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            if e.depth() == 0 {
                return true;
            }
            let name = e.file_name().to_string_lossy();
            let depth = base + e.depth();
            if name.starts_with('.') || (depth == 1 && e.file_type().is_dir() && name == "sessions")
            {
                return false;
            }
            if e.path_is_symlink() {
                if let Some(d) = escape_check(root, &canon_root, e.path()) {
                    escaped.push(d);
                    return false;
                }
            }
            true
        });
    for entry in it {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                let path = e
                    .path()
                    .and_then(|p| rel_path(root, p))
                    .unwrap_or_else(|| ".".into());
                let msg = if e.loop_ancestor().is_some() {
                    "symlink loop; not followed".to_string()
                } else {
                    format!("could not read: {e}")
                };
                diags.push(Diagnostic::warning(&path, 0, "walk", msg));
                continue;
            }
        };
        if !entry.file_type().is_file() {
            continue;
        }
        let Some(rel) = rel_path(root, entry.path()) else {
            continue;
        };
        if is_ignored(&rel) {
            continue;
        }
        found.push(Found {
            abs: entry.path().to_path_buf(),
            rel,
        });
    }
    diags.extend(escaped);
    (found, diags)
}

fn escape_check(root: &Path, canon_root: &Path, p: &Path) -> Option<Diagnostic> {
    let real = p.canonicalize().ok()?;
    (!real.starts_with(canon_root)).then(|| {
        Diagnostic::new(
            &rel_path(root, p).unwrap_or_default(),
            0,
            super::Severity::Info,
            "outside-vault",
            "symlink points outside the vault; not followed",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("canon/npcs/a.md", false)]
    #[case("heist/sessions/s1.md", false)]
    #[case("sessions/2026.md", true)]
    #[case(".obsidian/x.md", true)]
    #[case("notes/.trash/x.md", true)]
    #[case("notes/x.txt", true)]
    #[case("notes/X.MD", false)]
    #[case("notes/x.md~", true)]
    fn ignores(#[case] rel: &str, #[case] ignored: bool) {
        assert_eq!(is_ignored(rel), ignored);
    }
}
