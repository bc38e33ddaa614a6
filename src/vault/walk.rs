//! Walking a vault: finding its notes.
//!
//! Which files are notes is [`super::scope`]'s rule (the watcher and the poller use the
//! same): the walk does not enter skipped folders (hidden and backup ones) or
//! template folders, and keeps the files [`Scope::is_note`] accepts. Symlinks are followed
//! only when they stay inside the vault; loops and escapes are diagnostics.

use super::diagnostic::Diagnostic;
use super::scope::{is_skipped_folder, leads_outside, Scope};
use crate::vault::Code;
use std::path::{Path, PathBuf};

/// A Markdown file found in the vault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    /// Absolute path on disk.
    pub abs: PathBuf,
    /// Vault-relative path with `/` separators.
    pub rel: String,
}

/// `a/b/c` as [`rel_path`] would rebuild it from its components: no empty, `.` or `..`
/// part.
fn is_clean_rel(s: &str) -> bool {
    !s.is_empty() && s.split('/').all(|c| !c.is_empty() && c != "." && c != "..")
}

/// Converts a path under `root` into the vault-relative `/`-separated form.
pub(crate) fn rel_path(root: &Path, abs: &Path) -> Option<String> {
    // On Unix the walk's paths start with the root's very bytes: cut them off as bytes.
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let r = root.as_os_str().as_bytes();
        let r = r.strip_suffix(b"/").unwrap_or(r);
        let rest = abs
            .as_os_str()
            .as_bytes()
            .strip_prefix(r)
            .and_then(|x| x.strip_prefix(b"/"));
        if let Some(s) = rest.and_then(|x| std::str::from_utf8(x).ok()) {
            if is_clean_rel(s) {
                return Some(s.to_string());
            }
        }
    }
    let rel = abs.strip_prefix(root).ok()?;
    let mut out = String::with_capacity(rel.as_os_str().len());
    for c in rel.components() {
        if !out.is_empty() {
            out.push('/');
        }
        out.push_str(&c.as_os_str().to_string_lossy());
    }
    (!out.is_empty()).then_some(out)
}

/// Walks the vault, returning its notes (sorted by path) and walk problems. Template
/// folders ([`Scope`]) are not entered; one info diagnostic names each.
pub(crate) fn walk(root: &Path, scope: &mut Scope) -> (Vec<Found>, Vec<Diagnostic>) {
    walk_under(root, root, scope)
}

/// Walks one folder of the vault (`dir`, inside `root`) with the same rules as [`walk`]:
/// used when a folder appears or moves while watching.
pub(crate) fn walk_under(
    root: &Path,
    dir: &Path,
    scope: &mut Scope,
) -> (Vec<Found>, Vec<Diagnostic>) {
    let mut found = Vec::new();
    let diags = walk_each(root, dir, scope, &mut |f| found.push(f));
    found.sort_unstable_by(|a, b| a.rel.cmp(&b.rel));
    (found, diags)
}

/// Walks like [`walk_under`], handing each note to `each` as soon as it is found (so notes
/// can be read while the walk goes on), and returns the walk's diagnostics.
pub(crate) fn walk_each(
    root: &Path,
    dir: &Path,
    scope: &mut Scope,
    each: &mut dyn FnMut(Found),
) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let canon_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let mut escaped: Vec<Diagnostic> = Vec::new();
    let mut templates: Vec<String> = Vec::new();
    let mut leftovers: Vec<String> = Vec::new();
    // Not sorted: the loader sorts the notes it parsed, `walk_under` what it found, and
    // the problems are sorted below (walkdir's sort takes each name apart again per
    // comparison, a tenth of the walk).
    let it = walkdir::WalkDir::new(dir)
        .follow_links(true)
        .into_iter()
        .filter_entry(|e| {
            if e.depth() == 0 {
                return true;
            }
            if let Some(rel) = rel_path(root, e.path()) {
                // Hidden and backup entries: not even looked at, but for the temp files
                // a killed write of vaultdm's own left.
                if is_skipped_folder(&rel) {
                    if super::boundary::is_own_temp(&e.file_name().to_string_lossy()) {
                        leftovers.push(rel);
                    }
                    return false;
                }
                if e.file_type().is_dir() && scope.is_template(&format!("{rel}/x.md")) {
                    templates.push(rel);
                    return false;
                }
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
                diags.push(Diagnostic::warning(&path, 0, Code::Walk, msg));
                continue;
            }
        };
        if !entry.file_type().is_file() {
            continue;
        }
        let Some(rel) = rel_path(root, entry.path()) else {
            continue;
        };
        if !scope.is_note(&rel) {
            continue;
        }
        each(Found {
            abs: entry.path().to_path_buf(),
            rel,
        });
    }
    diags.extend(escaped);
    diags.extend(leftovers.into_iter().map(|rel| {
        Diagnostic::warning(
            &rel,
            0,
            Code::LeftoverTemp,
            "a temp file left by a vaultdm write that was stopped before it finished (the note itself is whole); `chat`, `serve` and `review` remove it when they start, or delete it",
        )
    }));
    templates.sort_unstable();
    for rel in templates {
        scope.note_named_template(&rel);
        let why = scope
            .template_folders
            .iter()
            .find(|t| t.path.eq_ignore_ascii_case(&rel))
            .map_or("its name", |t| t.why);
        diags.push(Diagnostic::new(
            &rel,
            0,
            super::Severity::Info,
            Code::Templates,
            format!("a template folder (from {why}): its notes are templates, not canon"),
        ));
    }
    diags.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    diags
}

fn escape_check(root: &Path, canon_root: &Path, p: &Path) -> Option<Diagnostic> {
    leads_outside(canon_root, p).then(|| {
        Diagnostic::new(
            &rel_path(root, p).unwrap_or_default(),
            0,
            super::Severity::Info,
            Code::OutsideVault,
            "symlink points outside the vault; not followed",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("/v", "/v/a/b.md", Some("a/b.md"))]
    #[case("/v/", "/v/a/b.md", Some("a/b.md"))]
    #[case("v", "v/a.md", Some("a.md"))]
    #[case(".", "./x/y.md", Some("x/y.md"))]
    #[case("/", "/a/b.md", Some("a/b.md"))]
    #[case("/v", "/v", None)]
    #[case("/v", "/v2/a.md", None)]
    #[case("/v", "/w/a.md", None)]
    #[case("/v", "/v//a.md", Some("a.md"))]
    #[case("/v", "/v/a/../b.md", Some("a/../b.md"))]
    fn relative_paths(#[case] root: &str, #[case] abs: &str, #[case] want: Option<&str>) {
        assert_eq!(
            rel_path(Path::new(root), Path::new(abs)).as_deref(),
            want,
            "{root} {abs}"
        );
    }
}
