//! Reading a vault: walk the folder, parse every note, index names for link resolution.
//!
//! One bad note never stops the vault: each note carries its own diagnostics and the rest
//! load. Parsing runs in parallel; the result is sorted by path so every run is identical.

pub(crate) mod boundary;
pub(crate) mod diagnostic;
pub mod edit;
pub mod frontmatter;
pub(crate) mod links;
pub mod markdown;
pub(crate) mod note;
pub(crate) mod period;
pub(crate) mod placeholder;
pub(crate) mod scope;
pub(crate) mod secret;
pub(crate) mod threads;
pub(crate) mod walk;
pub mod yaml;

pub use diagnostic::{Code, Diagnostic, Severity};
pub use links::{LinkIndex, Resolution};
pub use note::Note;
pub use scope::Scope;

use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// Errors that stop a vault from loading at all (a single bad note never does).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VaultError {
    /// The vault folder does not exist or is not a folder.
    #[error("{path}: not a vault folder: {source}")]
    NotAFolder {
        /// The folder given.
        path: PathBuf,
        /// Why it could not be used.
        source: std::io::Error,
    },
}

/// A loaded vault: its notes, sorted by path, and the index used to resolve links.
#[derive(Debug, Clone, Default)]
pub struct Vault {
    /// The vault folder.
    pub root: PathBuf,
    /// Every note, sorted by vault-relative path.
    pub notes: Vec<Note>,
    /// Name lookup for links.
    pub index: LinkIndex,
    /// Problems found while walking (unreadable files, symlink loops).
    pub walk_diagnostics: Vec<Diagnostic>,
    /// Which files are notes (template folders are not).
    pub scope: Scope,
}

/// Sorts parsed notes by path, and `extras` (what was found for each note, at its index)
/// in step. The order is found on indices and then applied by following its cycles, so each
/// note moves about once: sorting the notes themselves moves every one ~log2(n) times, which
/// on 10,000 notes took longer than building the link index. Paths are unique, so the order
/// is the same either way.
fn sort_by_path<T>(notes: &mut [Note], extras: &mut [T]) {
    debug_assert_eq!(notes.len(), extras.len());
    // Paths beside their indices (one pointer to follow per comparison, not two), sorted on
    // both cores; the index breaks ties, so the order is the same on every run.
    let mut keyed: Vec<(&str, usize)> = notes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.path.as_str(), i))
        .collect();
    keyed.par_sort_unstable();
    let mut order: Vec<usize> = keyed.into_iter().map(|(_, i)| i).collect();
    // `order[k]` is the note that belongs at `k`; each cycle is walked once and marked done.
    for start in 0..order.len() {
        let mut k = start;
        loop {
            let from = order[k];
            order[k] = k;
            if from == start {
                break;
            }
            notes.swap(k, from);
            extras.swap(k, from);
            k = from;
        }
    }
}

/// Reads one file into a note; an unreadable file becomes a note with a diagnostic.
pub fn read_note(abs: &Path, rel: &str) -> Note {
    use std::io::Read;
    let unreadable = |e: std::io::Error| {
        let mut n = Note::parse(rel, b"");
        n.diagnostics.clear();
        n.diagnostics.push(Diagnostic::error(
            rel,
            0,
            Code::Unreadable,
            format!("could not read note: {e}"),
        ));
        n
    };
    let mut f = match std::fs::File::open(abs) {
        Ok(f) => f,
        Err(e) => return unreadable(e),
    };
    // One `fstat` for both the size and the time.
    let meta = f.metadata().ok();
    let len = meta.as_ref().map_or(0, std::fs::Metadata::len);
    if len > note::MAX_NOTE_BYTES {
        // Do not read huge files into memory: parse an over-limit placeholder.
        let mut n = Note::parse(rel, b"");
        n.diagnostics.clear();
        n.diagnostics.push(Diagnostic::error(
            rel,
            0,
            Code::TooLarge,
            format!(
                "note is {:.1} MB, over the {} MB limit for a note; it was skipped",
                len as f64 / 1e6,
                note::MAX_NOTE_BYTES / (1024 * 1024)
            ),
        ));
        return n;
    }
    let modified = meta.and_then(|m| m.modified().ok());
    let mut bytes = Vec::with_capacity(len as usize + 1);
    // Through `Take`, not the file itself: `File::read_to_end` asks the kernel for the size
    // and position again (an `fstat` and an `lseek` per note) to size a buffer that is
    // already sized. The limit only guards a file growing past the cap after the `fstat`.
    match (&mut f)
        .take(note::MAX_NOTE_BYTES + 1)
        .read_to_end(&mut bytes)
    {
        Ok(_) => {
            let mut n = Note::parse(rel, &bytes);
            n.modified = modified;
            n
        }
        Err(e) => unreadable(e),
    }
}

/// A note's diagnostics, and its body links (index, line) that match no note.
type NoteCheck = (Vec<Diagnostic>, Vec<(usize, usize)>);

/// A file line as parsed notes keep it (4 bytes, not 8: a vault holds ~30 lines per note of
/// blocks, links and sections; a note of more than 4 billion lines is not read).
pub(crate) fn line32(line: usize) -> u32 {
    u32::try_from(line).unwrap_or(u32::MAX)
}

impl Vault {
    /// Loads every note under `root`, with the template folders its Obsidian settings and
    /// folder names show ([`Scope::detect`]).
    pub fn load(root: &Path) -> Result<Vault, VaultError> {
        Self::load_scoped(root, Scope::detect(root, &[]))
    }

    /// Loads every note under `root` that `scope` counts as a note.
    pub fn load_scoped(root: &Path, scope: Scope) -> Result<Vault, VaultError> {
        Self::load_scoped_then(root, scope, |_| {}, || {}).map(|(v, _)| v)
    }

    /// Like [`Vault::load_scoped`], with two hooks: `each_note` gets every note as soon as it
    /// is parsed, on the thread that parsed it (canon drops there what it will never read,
    /// so a big vault is never held whole), and `after_read` runs once every note is read
    /// and parsed, before the link index is built: work that should not take a core from
    /// the parse (loading the token vocabulary) starts there. What `each_note` returns for
    /// each note comes back in the vault's note order (`extras[i]` for `notes[i]`).
    pub fn load_scoped_then<T: Send>(
        root: &Path,
        mut scope: Scope,
        each_note: impl Fn(&mut Note) -> T + Sync,
        after_read: impl FnOnce(),
    ) -> Result<(Vault, Vec<T>), VaultError> {
        let meta = std::fs::metadata(root).map_err(|source| VaultError::NotAFolder {
            path: root.to_path_buf(),
            source,
        })?;
        if !meta.is_dir() {
            return Err(VaultError::NotAFolder {
                path: root.to_path_buf(),
                source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "is a file"),
            });
        }
        // The walk runs on its own thread and hands each note over as it finds it: both
        // cores read and parse while the folders are still being listed.
        let (tx, rx) = std::sync::mpsc::channel::<walk::Found>();
        let (notes, walk_diagnostics) = std::thread::scope(|s| {
            let scope = &mut scope;
            // `tx` moves into the walker and is dropped when it ends, which ends `rx`.
            let walker = s.spawn(move || {
                walk::walk_each(root, root, scope, &mut |f| {
                    let _ = tx.send(f);
                })
            });
            // Straight into two vectors (rayon keeps each pair at the same index): a vector
            // of pairs had to be unzipped into new ones, a copy of every note.
            let notes: (Vec<Note>, Vec<T>) = rx
                .into_iter()
                .par_bridge()
                .map(|f| {
                    let mut note = read_note(&f.abs, &f.rel);
                    let extra = each_note(&mut note);
                    (note, extra)
                })
                .unzip();
            (notes, walker.join())
        });
        let walk_diagnostics = match walk_diagnostics {
            Ok(d) => d,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        after_read();
        // In path order, each note's extra at its index.
        let (mut notes, mut extras) = notes;
        sort_by_path(&mut notes, &mut extras);
        let mut v = Self::from_notes(root.to_path_buf(), notes, walk_diagnostics);
        v.scope = scope;
        Ok((v, extras))
    }

    /// Builds a vault from already parsed notes (sorted here by path).
    pub fn from_notes(
        root: PathBuf,
        mut notes: Vec<Note>,
        walk_diagnostics: Vec<Diagnostic>,
    ) -> Vault {
        notes.sort_by(|a, b| a.path.cmp(&b.path));
        let mut v = Vault {
            root,
            notes,
            index: LinkIndex::default(),
            walk_diagnostics,
            scope: Scope::default(),
        };
        v.reindex();
        v
    }

    /// Rebuilds the link index from the notes.
    pub fn reindex(&mut self) {
        let keys: Vec<links::NoteKeys> = self
            .notes
            .par_iter()
            .map(|n| LinkIndex::keys(&n.path, &n.stem, &n.names()))
            .collect();
        self.index = LinkIndex::from_keys(&keys);
    }

    /// Resolves a link target or plain reference to a note, from no note in particular.
    pub fn resolve(&self, target: &str) -> Resolution {
        self.resolve_from(target, None)
    }

    /// Resolves a link written in the note at `from` (a vault path) the way Obsidian does:
    /// `./` and `../` targets relative to that note's folder (exact path only); otherwise the
    /// exact vault path, then the end of a path, the file name, a display name or alias, the
    /// slug of a file name. When several files share the name, the one in the linking note's
    /// own folder wins, then the shortest path (then the first in path order) — so
    /// `[[00 Index]]` in every folder resolves as Obsidian shows it. Two notes with the same
    /// display name or alias stay ambiguous.
    pub fn resolve_from(&self, target: &str, from: Option<&str>) -> Resolution {
        let t = crate::names::trim(target);
        if t.starts_with("./") || t.starts_with("../") {
            let Some(from) = from else {
                return Resolution::NotFound;
            };
            let mut parts: Vec<&str> = from.split('/').collect();
            parts.pop(); // the note's own file name
            for seg in t.split('/') {
                match seg {
                    "." | "" => {}
                    ".." => {
                        if parts.pop().is_none() {
                            return Resolution::NotFound; // above the vault
                        }
                    }
                    s => parts.push(s),
                }
            }
            return match self.index.resolve_tiered(&parts.join("/")) {
                (links::Tier::Path, r) => r,
                _ => Resolution::NotFound,
            };
        }
        let named = self.index.named(t);
        if named.tier().is_file() && named.is_many() {
            return Resolution::Found(self.obsidian_pick(named, t, from));
        }
        named.resolution()
    }

    /// Obsidian's tie-break among files of the same name: the linking note's folder, then
    /// the shortest path, then path order. It is the minimum of one order, so any subset
    /// holding the winner picks the same winner (incremental reloads rely on that). A file
    /// name many folders share (`Overview` in every place's folder) is asked for by every
    /// link to it: the one in the linking note's folder is looked up by its path, and only
    /// when there is none are the candidates compared (in place, nothing copied).
    fn obsidian_pick(&self, named: links::Named<'_>, target: &str, from: Option<&str>) -> usize {
        fn folder(p: &str) -> &str {
            p.rsplit_once('/').map_or("", |(d, _)| d)
        }
        let here = from.map(folder);
        if let (links::Tier::Stem, Some(dir)) = (named.tier(), here.filter(|d| !d.is_empty())) {
            // The same-folder file of that name is the note at `<folder>/<name>`.
            if let Some((key, _)) = links::lookup_keys(target) {
                let name = crate::names::last_segment(&key);
                let path = links::norm_key(&format!("{dir}/{name}"));
                if let Some(i) = self.index.at_path(&path) {
                    if folder(&self.notes[i].path) == dir && named.notes().any(|n| n == i) {
                        return i;
                    }
                }
            }
        }
        named
            .notes()
            .min_by_key(|&i| {
                let p = self.notes[i].path.as_str();
                (here != Some(folder(p)), p.len(), p)
            })
            .expect("several notes are named")
    }

    /// The index of the note at a vault-relative path.
    pub fn note_index(&self, path: &str) -> Option<usize> {
        self.notes
            .binary_search_by(|n| n.path.as_str().cmp(path))
            .ok()
    }

    /// Every diagnostic from walking and parsing, plus unresolved and ambiguous links. Body
    /// links to notes that do not exist yet — which Obsidian shows as notes to create, and
    /// real vaults hold by the hundred — are one info line per name, not one per link.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let mut out = self.walk_diagnostics.clone();
        // Notes are checked in parallel, each link resolved once; body links to notes not
        // created yet are then counted per name, in path order.
        let checked: Vec<NoteCheck> = (0..self.notes.len())
            .into_par_iter()
            .map(|i| self.check_note(i))
            .collect();
        // key -> (first path, first line, target as written, links, notes)
        let mut uncreated: std::collections::BTreeMap<
            String,
            (String, usize, String, usize, usize),
        > = std::collections::BTreeMap::new();
        for (i, (diags, missing)) in checked.into_iter().enumerate() {
            out.extend(diags);
            let n = &self.notes[i];
            let mut seen_here = std::collections::HashSet::new();
            for (link, line) in missing {
                let target = &n.links[link].target.note;
                let key = links::norm_key(target);
                let e = uncreated
                    .entry(key.clone())
                    .or_insert_with(|| (n.path.clone(), line, target.to_string(), 0, 0));
                e.3 += 1;
                if seen_here.insert(key) {
                    e.4 += 1;
                }
            }
        }
        for (_, (path, line, target, links, notes)) in uncreated {
            let count = match (links, notes) {
                (1, _) => String::new(),
                (l, 1) => format!(" ({l} links here)"),
                (l, n) => format!(" ({l} links in {n} notes)"),
            };
            out.push(Diagnostic::new(
                &path,
                line,
                Severity::Info,
                Code::UnresolvedLink,
                format!("[[{}]] matches no note in the vault{count}; Obsidian shows it as a note not created yet", shown_target(&target)),
            ));
        }
        out
    }

    /// The diagnostics of one note (by index): its parse problems, then its ambiguous links
    /// and the frontmatter links that resolve to nothing (a body link to a note not created
    /// yet is reported once per name by [`Vault::diagnostics`]).
    pub fn note_diagnostics(&self, i: usize) -> Vec<Diagnostic> {
        self.check_note(i).0
    }

    /// A note's diagnostics, and its body links (index in `links`, line) that match no
    /// note: each link resolved once.
    fn check_note(&self, i: usize) -> NoteCheck {
        let Some(n) = self.notes.get(i) else {
            return (Vec::new(), Vec::new());
        };
        let mut out = n.diagnostics.clone();
        let mut missing = Vec::new();
        for (j, l) in n.links.iter().enumerate() {
            if !is_checked_link(&l.target.note) {
                continue;
            }
            match self.resolve_from(&l.target.note, Some(&n.path)) {
                Resolution::Found(_) => {}
                Resolution::NotFound if !l.in_frontmatter() => missing.push((j, l.line as usize)),
                Resolution::NotFound => out.push(Diagnostic::warning(
                    &n.path,
                    l.line as usize,
                    Code::UnresolvedLink,
                    format!(
                        "[[{}]] matches no note in the vault",
                        shown_target(&l.target.note)
                    ),
                )),
                Resolution::Ambiguous(c) => out.push(Diagnostic::warning(
                    &n.path,
                    l.line as usize,
                    Code::AmbiguousLink,
                    format!(
                        "[[{}]] matches {} notes: {}{}; use the path, e.g. [[{}]]",
                        shown_target(&l.target.note),
                        c.len(),
                        c.iter()
                            .take(5)
                            .map(|&i| self.notes[i].path.as_str())
                            .collect::<Vec<_>>()
                            .join(", "),
                        if c.len() > 5 {
                            format!(" and {} more", c.len() - 5)
                        } else {
                            String::new()
                        },
                        links::strip_md(&self.notes[c[0]].path)
                    ),
                )),
            }
        }
        (out, missing)
    }

    /// Puts a note in the vault, replacing the note at the same path if there is one (which
    /// is returned). The link index is updated in place.
    pub fn upsert_note(&mut self, note: Note) -> Option<Note> {
        match self
            .notes
            .binary_search_by(|n| n.path.as_str().cmp(&note.path))
        {
            Ok(i) => {
                let names = note.names();
                // Same path, so the same stem: only changed names touch the index.
                if self.notes[i].names() != names {
                    self.index.remove(i);
                    self.index.add(i, &note.path, &note.stem, &names);
                }
                Some(std::mem::replace(&mut self.notes[i], note))
            }
            Err(i) => {
                self.index.shift(i, true);
                self.index.add(i, &note.path, &note.stem, &note.names());
                self.notes.insert(i, note);
                None
            }
        }
    }

    /// Takes the note at a vault-relative path out of the vault. The link index is updated
    /// in place.
    pub fn remove_note(&mut self, path: &str) -> Option<Note> {
        let i = self.note_index(path)?;
        self.index.remove(i);
        self.index.shift(i, false);
        Some(self.notes.remove(i))
    }

    /// Applies many changes at once: removes `removals` (vault-relative paths), then puts
    /// every note of `upserts` in (replacing same-path notes). A few changes update the
    /// link index in place; more rebuild it once, which is faster than many small updates.
    pub fn update_notes(&mut self, upserts: Vec<Note>, removals: &[String]) {
        const IN_PLACE: usize = 8;
        if upserts.len() + removals.len() <= IN_PLACE {
            for r in removals {
                self.remove_note(r);
            }
            for n in upserts {
                self.upsert_note(n);
            }
            return;
        }
        let gone: std::collections::HashSet<&str> = removals
            .iter()
            .map(String::as_str)
            .chain(upserts.iter().map(|n| n.path.as_str()))
            .collect();
        self.notes.retain(|n| !gone.contains(n.path.as_str()));
        self.notes.extend(upserts);
        self.notes.sort_by(|a, b| a.path.cmp(&b.path));
        self.reindex();
    }
}

/// Whether a link target names a note `check` should find: not a heading in the same note,
/// not a URL, not an attachment (`[[map.png]]`, `![[song.mp3]]`).
/// A link target as a problem quotes it: whole up to 120 characters, else its start and
/// `…` (a runaway paste between `[[` and `]]` must not make a megabyte line).
fn shown_target(target: &str) -> std::borrow::Cow<'_, str> {
    const MAX: usize = 120;
    match target.char_indices().nth(MAX) {
        None => target.into(),
        Some((at, _)) => format!("{}…", &target[..at]).into(),
    }
}

fn is_checked_link(target: &str) -> bool {
    // `contains("://")` without building a substring searcher per link.
    let b = target.as_bytes();
    let url = memchr::memchr_iter(b':', b).any(|i| b[i + 1..].starts_with(b"//"));
    !target.is_empty() && !url && !has_non_md_extension(target)
}

fn has_non_md_extension(target: &str) -> bool {
    let last = crate::names::last_segment(target);
    match memchr::memrchr(b'.', last.as_bytes()).map(|i| &last[i + 1..]) {
        Some(ext) => !ext.eq_ignore_ascii_case("md") && ext.len() <= 5 && !ext.contains(' '),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What the per-note hook returns comes back at its note's index, in path order, on a
    /// vault big enough for both cores to share the parse.
    #[test]
    fn each_notes_extra_comes_back_at_its_index() {
        let dir = tempfile::tempdir().expect("tempdir");
        for i in 0..400 {
            let folder = dir.path().join(format!("f{}", i % 7));
            std::fs::create_dir_all(&folder).expect("mkdir");
            std::fs::write(
                folder.join(format!("n{i}.md")),
                format!("# Note {i}\n\ntext\n"),
            )
            .expect("write");
        }
        let (vault, extras) =
            Vault::load_scoped_then(dir.path(), Scope::default(), |n| n.path.clone(), || {})
                .expect("loads");
        assert_eq!(vault.notes.len(), 400);
        assert_eq!(extras.len(), 400);
        for (n, e) in vault.notes.iter().zip(&extras) {
            assert_eq!(&n.path, e);
        }
        assert!(vault.notes.windows(2).all(|w| w[0].path < w[1].path));
    }

    proptest! {
        /// Following the cycles of the index order gives what sorting the notes themselves
        /// gives, each note still beside its own extra.
        #[test]
        fn sort_by_path_is_a_sort(paths in proptest::collection::hash_set("[a-c/]{0,6}\\.md", 0..40)) {
            let mut notes: Vec<Note> = paths.iter().map(|p| Note::parse(p, b"")).collect();
            let mut extras: Vec<String> = paths.iter().cloned().collect();
            let mut expected: Vec<String> = paths.into_iter().collect();
            expected.sort();
            sort_by_path(&mut notes, &mut extras);
            let got: Vec<&str> = notes.iter().map(|n| n.path.as_str()).collect();
            prop_assert_eq!(got, expected.iter().map(String::as_str).collect::<Vec<_>>());
            for (n, extra) in notes.iter().zip(&extras) {
                prop_assert_eq!(&n.path, extra);
            }
        }

        /// Obsidian's tie-break, as the plain rule: among the files the target names on its
        /// tier, the one in the linking note's folder, then the shortest path, then path
        /// order (the same-folder lookup by path must never change the answer).
        #[test]
        fn ties_break_as_obsidian_does(
            files in proptest::collection::hash_set(
                ("(|a|b|A|a/b|a/B|b/a)", "(Overview|overview|Notes|Over view| Overview)"),
                1..14,
            ),
            target in "(Overview|overview|Notes|a/Overview|b/overview|Over view)",
            from_dir in "(|a|b|A|a/b|c)",
        ) {
            let paths: Vec<String> = files
                .iter()
                .map(|(d, n)| if d.is_empty() { format!("{n}.md") } else { format!("{d}/{n}.md") })
                .collect();
            let notes: Vec<Note> = paths.iter().map(|p| Note::parse(p, b"")).collect();
            let v = Vault::from_notes(PathBuf::from("/v"), notes, Vec::new());
            let from = if from_dir.is_empty() { "x.md".to_string() } else { format!("{from_dir}/x.md") };
            let folder = |p: &str| p.rsplit_once('/').map_or("", |(d, _)| d).to_string();
            let want = match v.index.resolve_tiered(&target) {
                (tier, Resolution::Ambiguous(c)) if tier.is_file() => Resolution::Found(
                    c.into_iter()
                        .min_by_key(|&i| {
                            let p = v.notes[i].path.clone();
                            (Some(folder(&p)) != Some(folder(&from)), p.len(), p)
                        })
                        .expect("several"),
                ),
                (_, r) => r,
            };
            prop_assert_eq!(v.resolve_from(&target, Some(&from)), want);
        }
    }
}
