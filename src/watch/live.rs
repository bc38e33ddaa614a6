//! [`Live`]: canon that stays current as files change, one incremental reload at a time.

use super::filter::is_noise;
use super::incremental::{update, Deps};
use super::WatchError;
use crate::canon::diff::{diff_notes, diff_with_renames};
use crate::canon::{Campaign, Change, Loaded, TEMPORAL_INDEX};
use crate::config::{Config, CONFIG_FILE};
use crate::context::{Engine, Matcher, Templates};
use crate::vault::note::{hash_bytes, MAX_NOTE_BYTES};
use crate::vault::{read_note, walk, Diagnostic, Note, Severity};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What one reload did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Reload {
    /// Entity-level canon changes, in a stable order (time, PCs, NPCs, locations, threads,
    /// events, lore).
    pub changes: Vec<Change>,
    /// Problems in the files this reload touched (a note that stopped parsing, a broken
    /// `vaultdm.toml`), plus canon problems that were not there before.
    pub diagnostics: Vec<Diagnostic>,
    /// How many files changed (read, created, removed): files whose bytes did not change
    /// are not counted.
    pub files: usize,
    /// Those files, vault-relative.
    pub paths: Vec<String>,
    /// Time from receiving the paths to updated canon, matcher and diff.
    #[serde(rename = "elapsed_ms", serialize_with = "as_ms")]
    pub elapsed: Duration,
    /// True for a full re-read ([`Live::reload_now`], or after the watcher lost events).
    pub full: bool,
}

fn as_ms<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64((d.as_secs_f64() * 1e5).round() / 100.0)
}

impl Reload {
    /// True when nothing changed: no file's bytes, no setting (e.g. a file was only touched).
    pub fn is_empty(&self) -> bool {
        self.files == 0 && !self.full && self.diagnostics.is_empty()
    }

    /// `canon reloaded (3 files, 4 ms)`.
    pub fn summary(&self) -> String {
        let ms = self.elapsed.as_secs_f64() * 1000.0;
        let ms = if ms < 1.0 {
            format!("{ms:.1}")
        } else {
            format!("{ms:.0}")
        };
        let what = if self.full {
            "canon fully reloaded"
        } else {
            "canon reloaded"
        };
        let s = if self.files == 1 { "" } else { "s" };
        format!("{what} ({} file{s}, {ms} ms)", self.files)
    }
}

impl fmt::Display for Reload {
    /// The summary, then one line per change and per diagnostic (a single change goes on
    /// the summary line: `canon reloaded (1 file, 3 ms): Jake: HP 13/13 -> 4/13`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.summary())?;
        match self.changes.as_slice() {
            [] => write!(f, "no canon changes")?,
            [one] => write!(f, "{one}")?,
            many => {
                write!(f, "{} changes", many.len())?;
                for c in many {
                    write!(f, "\n  {c}")?;
                }
            }
        }
        for d in &self.diagnostics {
            write!(f, "\n  {d}")?;
        }
        Ok(())
    }
}

/// What the changed paths call for.
#[derive(Debug, Default)]
struct Plan {
    notes: BTreeSet<String>,
    config: bool,
    temporal: bool,
    templates: bool,
    full: bool,
}

/// What reading one changed note path found.
enum Read {
    /// Not a note (ignored by the vault rules).
    Skip,
    /// The file is gone (deleted, moved away, or no longer a file).
    Gone(String),
    /// Same bytes as the note in canon.
    Unchanged,
    /// New or changed content.
    Parsed(Box<Note>),
}

/// Canon kept current while the vault changes: the notes, `vaultdm.toml`, the typed campaign,
/// the context [`Engine`], and for each note that stopped parsing its last good version.
///
/// [`Live::apply`] takes the paths a watcher reported and re-reads only those; nothing else
/// is parsed again. See the [module docs](super) for how it fits with [`super::Watcher`].
pub struct Live {
    root: PathBuf,
    canon_root: PathBuf,
    loaded: Loaded,
    engine: Engine,
    /// The engine's campaign: a second copy of `loaded.built.campaign`, kept in step by
    /// replacing only what changed.
    campaign: Arc<Campaign>,
    matcher: Arc<Matcher>,
    deps: Deps,
    templates: Arc<Templates>,
    template_diagnostics: Vec<Diagnostic>,
    temporal_hash: Option<u64>,
    /// Notes whose canon is a last good version (the file on disk does not parse).
    stale: HashSet<String>,
}

impl fmt::Debug for Live {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Live")
            .field("root", &self.root)
            .field("notes", &self.loaded.vault.notes.len())
            .field("stale", &self.stale)
            .finish_non_exhaustive()
    }
}

fn templates_dir(root: &Path, config: &Config) -> Option<PathBuf> {
    config.templates.as_ref().map(|t| root.join(t))
}

fn temporal_hash(root: &Path) -> Option<u64> {
    std::fs::read(root.join(TEMPORAL_INDEX))
        .ok()
        .map(|b| hash_bytes(&b))
}

/// `/`-joined vault-relative form of a relative path (`.` and empty parts dropped).
fn rel_of_relative(p: &Path) -> Option<String> {
    let mut parts = Vec::new();
    for c in p.components() {
        match c {
            Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(parts.join("/"))
}

/// Gives a note another path (a rename of a note whose canon is a last good version).
fn repath(mut note: Note, path: &str) -> Note {
    note.stem = path
        .rsplit('/')
        .next()
        .unwrap_or(path)
        .trim_end_matches(".md")
        .to_string();
    note.path = path.to_string();
    for d in &mut note.diagnostics {
        d.path = path.to_string();
    }
    note
}

/// True when the campaign's names, aliases, ids and order are the same, so the mention
/// matcher built for `a` serves `b` unchanged.
fn same_names(a: &Campaign, b: &Campaign) -> bool {
    a.pcs.len() == b.pcs.len()
        && a.npcs.len() == b.npcs.len()
        && a.locations.len() == b.locations.len()
        && a.threads.len() == b.threads.len()
        && a.lore.len() == b.lore.len()
        && a.pcs.iter().zip(&b.pcs).all(|(x, y)| {
            x.id == y.id && x.name == y.name && x.aliases == y.aliases && x.inventory == y.inventory
        })
        && a.npcs
            .iter()
            .zip(&b.npcs)
            .all(|(x, y)| x.id == y.id && x.name == y.name && x.aliases == y.aliases)
        && a.locations
            .iter()
            .zip(&b.locations)
            .all(|(x, y)| x.id == y.id && x.name == y.name && x.aliases == y.aliases)
        && a.threads
            .iter()
            .zip(&b.threads)
            .all(|(x, y)| x.title == y.title && x.aliases == y.aliases)
        && a.lore
            .iter()
            .zip(&b.lore)
            .all(|(x, y)| x.id == y.id && x.name == y.name && x.aliases == y.aliases)
}

/// An engine with an empty campaign, held for the moment the real one is being updated.
fn placeholder_engine(templates: &Arc<Templates>) -> Engine {
    let empty = Arc::new(Campaign::default());
    Engine::from_parts(
        Arc::clone(&empty),
        Arc::new(Matcher::new(&empty)),
        Arc::clone(templates),
    )
}

/// Makes `dst` equal to `src`, cloning only the entities that differ. With `notes`, only
/// entities from those notes can differ (vectors are sorted by note path).
fn sync(dst: &mut Campaign, src: &Campaign, notes: Option<&BTreeSet<String>>) {
    fn all<T: Clone + PartialEq>(dst: &mut Vec<T>, src: &[T]) {
        if dst.len() == src.len() {
            for (d, s) in dst.iter_mut().zip(src) {
                if d != s {
                    d.clone_from(s);
                }
            }
        } else {
            *dst = src.to_vec();
        }
    }
    fn some<T: Clone + PartialEq>(
        dst: &mut Vec<T>,
        src: &[T],
        notes: Option<&BTreeSet<String>>,
        id: impl Fn(&T) -> &str,
    ) {
        let Some(notes) = notes else {
            return all(dst, src);
        };
        for p in notes {
            let range = |v: &[T]| {
                let from = v.partition_point(|e| id(e) < p.as_str());
                from..from + v[from..].iter().take_while(|e| id(e) == p.as_str()).count()
            };
            let (d, s) = (range(dst), range(src));
            if dst[d.clone()] != src[s.clone()] {
                dst.splice(d, src[s].iter().cloned());
            }
        }
    }
    some(&mut dst.pcs, &src.pcs, notes, |e| &e.id);
    some(&mut dst.npcs, &src.npcs, notes, |e| &e.id);
    some(&mut dst.locations, &src.locations, notes, |e| &e.id);
    some(&mut dst.lore, &src.lore, notes, |e| &e.id);
    all(&mut dst.threads, &src.threads);
    all(&mut dst.events, &src.events);
    dst.name.clone_from(&src.name);
    dst.setting.clone_from(&src.setting);
    dst.day = src.day;
    dst.time.clone_from(&src.time);
    debug_assert!(dst == src, "the engine's campaign fell out of step");
}

impl Live {
    /// Reads the vault at `root` into live canon.
    pub fn load(root: &Path) -> Result<Live, WatchError> {
        let loaded = Loaded::load(root).map_err(WatchError::Vault)?;
        Live::from_loaded(loaded)
    }

    /// Makes live canon from a vault already loaded (its root is the vault folder).
    pub fn from_loaded(loaded: Loaded) -> Result<Live, WatchError> {
        let root = loaded.vault.root.clone();
        let templates = Templates::load(templates_dir(&root, &loaded.config).as_deref())
            .map_err(|source| WatchError::Templates { source })?;
        let templates = Arc::new(templates);
        let matcher = Arc::new(Matcher::new(&loaded.built.campaign));
        let campaign = Arc::new(loaded.built.campaign.clone());
        let engine = Engine::from_parts(
            Arc::clone(&campaign),
            Arc::clone(&matcher),
            Arc::clone(&templates),
        );
        let deps = Deps::new(&loaded.vault);
        // Notes that load broken have no last good version yet.
        Ok(Live {
            canon_root: root.canonicalize().unwrap_or_else(|_| root.clone()),
            temporal_hash: temporal_hash(&root),
            root,
            loaded,
            engine,
            campaign,
            matcher,
            deps,
            templates,
            template_diagnostics: Vec::new(),
            stale: HashSet::new(),
        })
    }

    /// The vault folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The vault, its settings and the built canon, as of the last reload.
    pub fn loaded(&self) -> &Loaded {
        &self.loaded
    }

    /// The context engine for the current canon (campaign, mention matcher, templates).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The current campaign.
    pub fn campaign(&self) -> &Campaign {
        &self.loaded.built.campaign
    }

    /// Vault-relative paths of notes that do not parse right now and whose last good
    /// version is in canon instead.
    pub fn stale_notes(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.stale.iter().map(String::as_str).collect();
        v.sort_unstable();
        v
    }

    /// Every current diagnostic: configuration, notes, links, canon and templates.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let mut d = self.loaded.diagnostics();
        d.extend(self.template_diagnostics.iter().cloned());
        d
    }

    /// Applies changed paths (absolute, or relative to the vault) as one reload: re-reads
    /// only those files, updates notes, link index, canon, matcher and engine, and returns
    /// what changed. Paths may be notes (created, modified, deleted), folders (created,
    /// moved, deleted: their notes follow), `vaultdm.toml`, `canon/temporal-index.json` or
    /// template files. Paths outside the vault, in hidden folders, under `sessions/`, and
    /// editor swap/backup/temp files are ignored. The vault folder itself means "re-read
    /// everything" (the watcher sends it when events were lost).
    pub fn apply(&mut self, paths: &[PathBuf]) -> Reload {
        let start = Instant::now();
        let mut plan = Plan::default();
        for p in paths {
            self.plan_path(p, &mut plan);
        }
        if plan.full {
            return self.full(start);
        }
        self.run(plan, start)
    }

    /// Re-reads the whole vault (for `/reload`), through the same path as [`Live::apply`]:
    /// notes that do not parse keep their last good version, and the reload lists what
    /// changed.
    pub fn reload_now(&mut self) -> Reload {
        self.full(Instant::now())
    }

    fn full(&mut self, start: Instant) -> Reload {
        let (found, walk_diagnostics) = walk::walk(&self.root);
        let mut plan = Plan {
            notes: found.into_iter().map(|f| f.rel).collect(),
            config: true,
            temporal: true,
            templates: true,
            full: true,
        };
        plan.notes
            .extend(self.loaded.vault.notes.iter().map(|n| n.path.clone()));
        self.loaded.vault.walk_diagnostics = walk_diagnostics;
        self.run(plan, start)
    }

    fn rel(&self, p: &Path) -> Option<String> {
        if p.is_relative() {
            return rel_of_relative(p);
        }
        let r = p
            .strip_prefix(&self.root)
            .or_else(|_| p.strip_prefix(&self.canon_root))
            .ok()?;
        rel_of_relative(r)
    }

    /// Notes in canon at `dir` or below it.
    fn notes_under(&self, dir: &str) -> impl Iterator<Item = &Note> {
        let prefix = format!("{dir}/");
        let notes = &self.loaded.vault.notes;
        let from = notes.partition_point(|n| n.path.as_str() < prefix.as_str());
        notes[from..]
            .iter()
            .take_while(move |n| n.path.starts_with(&prefix))
    }

    fn plan_path(&self, p: &Path, plan: &mut Plan) {
        let Some(rel) = self.rel(p) else {
            return;
        };
        if rel.is_empty() {
            plan.full = true;
            return;
        }
        if is_noise(&rel) {
            return;
        }
        if rel == CONFIG_FILE {
            plan.config = true;
            return;
        }
        if rel == TEMPORAL_INDEX {
            plan.temporal = true;
            return;
        }
        if let Some(t) = &self.loaded.config.templates {
            let t = t.trim_matches('/');
            if !t.is_empty() && (rel == t || rel.starts_with(&format!("{t}/"))) {
                plan.templates = true;
                return;
            }
        }
        if rel.to_ascii_lowercase().ends_with(".md") {
            plan.notes.insert(rel.clone());
        }
        // A folder: created or moved here (walk it), or gone (its notes leave canon).
        let abs = self.root.join(&rel);
        if abs.is_dir() {
            let (found, _) = walk::walk_under(&self.root, &abs);
            plan.notes.extend(found.into_iter().map(|f| f.rel));
        }
        plan.notes
            .extend(self.notes_under(&rel).map(|n| n.path.clone()));
    }

    fn read(&self, rel: &str) -> Read {
        if walk::is_ignored(rel) {
            return Read::Skip;
        }
        let abs = self.root.join(rel);
        let meta = match std::fs::metadata(&abs) {
            Ok(m) if m.is_file() => m,
            _ => return Read::Gone(rel.to_string()),
        };
        if std::fs::symlink_metadata(&abs).is_ok_and(|m| m.file_type().is_symlink())
            && !abs
                .canonicalize()
                .is_ok_and(|real| real.starts_with(&self.canon_root))
        {
            return Read::Gone(rel.to_string()); // the walk does not follow it either
        }
        let current = self
            .loaded
            .vault
            .note_index(rel)
            .map(|i| &self.loaded.vault.notes[i]);
        if meta.len() > MAX_NOTE_BYTES {
            return Read::Parsed(Box::new(read_note(&abs, rel)));
        }
        match std::fs::read(&abs) {
            Ok(bytes) => {
                if current.is_some_and(|n| n.content_hash == hash_bytes(&bytes)) {
                    Read::Unchanged
                } else {
                    Read::Parsed(Box::new(Note::parse(rel, &bytes)))
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Read::Gone(rel.to_string()),
            Err(_) => Read::Parsed(Box::new(read_note(&abs, rel))),
        }
    }

    fn run(&mut self, plan: Plan, start: Instant) -> Reload {
        let mut reload = Reload {
            full: plan.full,
            ..Reload::default()
        };
        let mut extra_diags: Vec<Diagnostic> = Vec::new();

        // 1. Read the changed notes (in parallel: a checkout may bring hundreds).
        let paths: Vec<String> = plan.notes.into_iter().collect();
        let reads: Vec<Read> = if paths.len() > 4 {
            paths.par_iter().map(|p| self.read(p)).collect()
        } else {
            paths.iter().map(|p| self.read(p)).collect()
        };
        let vault = &self.loaded.vault;
        let mut gone: Vec<String> = Vec::new();
        let mut parsed: Vec<Note> = Vec::new();
        for r in reads {
            match r {
                Read::Gone(p) if vault.note_index(&p).is_some() => gone.push(p),
                Read::Parsed(n) => parsed.push(*n),
                _ => {}
            }
        }

        // 2. Renames: a note gone and a new note with the same bytes in the same reload.
        let mut gone_by_hash: HashMap<u64, Vec<&str>> = HashMap::new();
        for p in &gone {
            if let Some(i) = vault.note_index(p) {
                gone_by_hash
                    .entry(vault.notes[i].content_hash)
                    .or_default()
                    .push(p);
            }
        }
        let mut renames: Vec<(String, String)> = Vec::new();
        for n in &parsed {
            if vault.note_index(&n.path).is_some() {
                continue;
            }
            if let Some(from) = gone_by_hash.get_mut(&n.content_hash).and_then(Vec::pop) {
                renames.push((from.to_string(), n.path.clone()));
            }
        }
        let renamed_from: HashMap<&str, &str> = renames
            .iter()
            .map(|(a, b)| (b.as_str(), a.as_str()))
            .collect();

        // 3. Last good versions: a note that stops parsing keeps its previous canon.
        let mut effective: Vec<Note> = Vec::with_capacity(parsed.len());
        let mut now_stale: Vec<String> = Vec::new();
        let mut fixed: Vec<String> = Vec::new();
        for n in parsed {
            let before_path = renamed_from
                .get(n.path.as_str())
                .copied()
                .unwrap_or(n.path.as_str());
            let before = vault.note_index(before_path).map(|i| &vault.notes[i]);
            let good_before = before.filter(|b| self.stale.contains(&b.path) || !b.has_errors());
            if n.has_errors() {
                if let Some(good) = good_before {
                    let mut keep = repath(good.clone(), &n.path);
                    keep.content_hash = n.content_hash;
                    keep.diagnostics = n.diagnostics.clone();
                    keep.diagnostics.push(Diagnostic::warning(
                        &n.path,
                        0,
                        "stale-note",
                        "the note does not parse; canon keeps its last good version until it is fixed",
                    ));
                    now_stale.push(n.path.clone());
                    effective.push(keep);
                    continue;
                }
            } else if self.stale.contains(before_path) {
                fixed.push(n.path.clone());
            }
            effective.push(n);
        }
        for p in &gone {
            self.stale.remove(p);
        }
        for p in &fixed {
            self.stale.remove(p);
            extra_diags.push(Diagnostic::new(
                p,
                0,
                Severity::Info,
                "note-fixed",
                "the note parses again; its new version is in canon",
            ));
        }
        self.stale.extend(now_stale);

        reload.paths = gone
            .iter()
            .cloned()
            .chain(effective.iter().map(|n| n.path.clone()))
            .collect();
        reload.paths.sort();
        reload.paths.dedup();
        reload.files = reload.paths.len();
        let touched: Vec<String> = effective.iter().map(|n| n.path.clone()).collect();

        // 4. Settings, temporal index, templates.
        let mut templates = plan.templates;
        let mut config_changed = false;
        if plan.config {
            let (config, diags) = Config::load(&self.root);
            if config != self.loaded.config || diags != self.loaded.config_diagnostics {
                config_changed = config != self.loaded.config;
                templates |= config.templates != self.loaded.config.templates;
                extra_diags.extend(diags.iter().cloned());
                self.loaded.config = config;
                self.loaded.config_diagnostics = diags;
                reload.files += 1;
                reload.paths.push(CONFIG_FILE.to_string());
            }
        }
        if plan.temporal {
            let h = temporal_hash(&self.root);
            if h != self.temporal_hash {
                self.temporal_hash = h;
                reload.files += 1;
                reload.paths.push(TEMPORAL_INDEX.to_string());
            }
        }
        if templates {
            let dir = templates_dir(&self.root, &self.loaded.config);
            match Templates::load(dir.as_deref()) {
                Ok(t) => {
                    self.templates = Arc::new(t);
                    self.template_diagnostics.clear();
                }
                Err(e) => {
                    let at = self.loaded.config.templates.clone().unwrap_or_default();
                    let d = Diagnostic::error(
                        &at,
                        0,
                        "template",
                        format!("{e}; the previous templates are kept"),
                    );
                    extra_diags.push(d.clone());
                    self.template_diagnostics = vec![d];
                }
            }
            if !plan.full {
                reload.files += 1;
            }
        }

        if reload.files == 0 && !plan.full && extra_diags.is_empty() {
            reload.elapsed = start.elapsed();
            return reload;
        }

        // 5. Notes into the vault, canon (incrementally when few notes changed), diff
        //    against the engine's copy of the old campaign, matcher, engine.
        let old_diags = self.loaded.built.diagnostics.clone();
        let touched_notes = update(
            &mut self.loaded.vault,
            &mut self.loaded.built,
            &self.loaded.config,
            &mut self.deps,
            effective,
            &gone,
            plan.full || config_changed,
        );
        let new = &self.loaded.built;
        // Drop the engine's share of the campaign so it can be updated in place.
        let old_engine = std::mem::replace(&mut self.engine, placeholder_engine(&self.templates));
        drop(old_engine);
        reload.changes = match &touched_notes {
            Some(notes) => diff_notes(&self.campaign, &new.campaign, &renames, notes),
            None => diff_with_renames(&self.campaign, &new.campaign, &renames),
        };
        if !same_names(&self.campaign, &new.campaign) {
            self.matcher = Arc::new(Matcher::new(&new.campaign));
        }
        sync(
            Arc::make_mut(&mut self.campaign),
            &new.campaign,
            touched_notes.as_ref(),
        );
        self.engine = Engine::from_parts(
            Arc::clone(&self.campaign),
            Arc::clone(&self.matcher),
            Arc::clone(&self.templates),
        );

        // 6. Diagnostics: the touched notes' own, and canon problems that are new.
        let mut diags = Vec::new();
        for p in &touched {
            if let Some(i) = self.loaded.vault.note_index(p) {
                diags.extend(self.loaded.vault.note_diagnostics(i));
            }
        }
        diags.extend(extra_diags);
        let was: HashSet<&Diagnostic> = old_diags.iter().collect();
        diags.extend(new.diagnostics.iter().filter(|d| !was.contains(d)).cloned());
        // In order: each saved note's own problems (its error before the stale-note
        // warning), settings, then new canon problems; each once.
        let mut once: HashSet<Diagnostic> = HashSet::new();
        diags.retain(|d| once.insert(d.clone()));
        reload.diagnostics = diags;
        reload.elapsed = start.elapsed();
        reload
    }
}
