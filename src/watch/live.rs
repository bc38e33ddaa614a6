//! [`Live`]: canon that stays current as files change, one incremental reload at a time.

use super::incremental::{update, Before, Deps};
use super::WatchError;
use crate::canon::diff::{diff_notes, diff_with_renames};
use crate::canon::{Campaign, CanonFiles, Change, Loaded, OWN_CLOCK, TEMPORAL_INDEX};
use crate::config::ContextConfig;
use crate::config::{Config, CONFIG_FILE};
use crate::context::setup::{checked_templates, WhenBroken};
use crate::context::{load_templates, Engine, Templates};
use crate::mentions::Matcher;
use crate::vault::boundary::FileId;
use crate::vault::note::{hash_bytes, MAX_NOTE_BYTES};
use crate::vault::scope::{is_markdown, is_noise, leads_outside};
use crate::vault::Code;
use crate::vault::{read_note, walk, Diagnostic, Note, Scope, Severity};
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
    /// The vault's templates changed and the engine uses the new ones (a broken template
    /// is a diagnostic instead, and the last good templates stay).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub templates: bool,
    /// `[context]` settings of `vaultdm.toml` that changed, one `name old -> new` each: the
    /// next context uses them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<String>,
}

/// The `[context]` settings that differ, one `name old -> new` each.
fn context_changes(old: &ContextConfig, new: &ContextConfig) -> Vec<String> {
    [
        ("npc_cap", old.npc_cap, new.npc_cap),
        ("budget", old.budget, new.budget),
        ("recent_events", old.recent_events, new.recent_events),
        (
            "full_context_after_changes",
            old.full_context_after_changes,
            new.full_context_after_changes,
        ),
    ]
    .into_iter()
    .filter(|(_, a, b)| a != b)
    .map(|(name, a, b)| format!("{name} {a} -> {b}"))
    .collect()
}

fn as_ms<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64((d.as_secs_f64() * 1e5).round() / 100.0)
}

impl Reload {
    /// True when nothing changed: no file's bytes, no setting (e.g. a file was only touched).
    pub fn is_empty(&self) -> bool {
        self.files == 0 && !self.full && self.diagnostics.is_empty()
    }

    /// What changed besides canon, one line each for the GM: new templates, new
    /// `[context]` settings.
    pub fn settings_notices(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.templates {
            out.push("templates reloaded: the next message uses them".to_string());
        }
        if !self.context.is_empty() {
            out.push(format!(
                "[context] settings changed in {CONFIG_FILE} ({}): the next message uses them",
                self.context.join(", ")
            ));
        }
        out
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
        for n in self.settings_notices() {
            write!(f, "\n  {n}")?;
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

/// The notes one reload puts into canon.
struct Edit {
    /// New and changed notes (last good versions for those that stopped parsing).
    effective: Vec<Note>,
    /// Notes that left the vault.
    gone: Vec<String>,
    /// Moved notes, `(old path, new path)`.
    renames: Vec<(String, String)>,
    /// Rebuild canon whole (a full reload, or settings changed).
    full: bool,
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
    /// Shares `loaded.built.campaign`: canon is held once.
    engine: Engine,
    matcher: Arc<Matcher>,
    deps: Deps,
    templates: Arc<Templates>,
    template_diagnostics: Vec<Diagnostic>,
    /// Notes whose canon is a last good version (the file on disk does not parse).
    stale: HashSet<String>,
    /// The vault folder's identity when loaded (to notice it moving away).
    root_id: Option<FileId>,
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

/// An engine with an empty campaign, held for the moment the real one is being updated.
fn placeholder_engine(templates: &Arc<Templates>) -> Engine {
    let empty = Arc::new(Campaign::default());
    Engine::from_parts(
        Arc::clone(&empty),
        Arc::new(Matcher::new(&empty)),
        Arc::clone(templates),
    )
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
        let templates = load_templates(&root, &loaded.config)
            .map_err(|source| WatchError::Templates { source })?;
        let templates = Arc::new(templates);
        let matcher = Arc::new(Matcher::new(&loaded.built.campaign));
        let engine = Engine::from_parts(
            Arc::clone(&loaded.built.campaign),
            Arc::clone(&matcher),
            Arc::clone(&templates),
        );
        let deps = Deps::new(&loaded.vault);
        let root_id = FileId::of_path(&root);
        // Notes that load broken have no last good version yet.
        Ok(Live {
            canon_root: root.canonicalize().unwrap_or_else(|_| root.clone()),
            root,
            loaded,
            engine,
            matcher,
            deps,
            templates,
            template_diagnostics: Vec::new(),
            stale: HashSet::new(),
            root_id,
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
        let (config, _) = Config::load(&self.root);
        let mut scope = Scope::detect(&self.root, &config.folders.templates);
        let (found, walk_diagnostics) = walk::walk(&self.root, &mut scope);
        self.loaded.vault.scope = scope;
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
        if rel == OWN_CLOCK {
            plan.temporal = true;
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
        if is_markdown(&rel) {
            plan.notes.insert(rel.clone());
        }
        // A folder: created or moved here (walk it), or gone (its notes leave canon).
        let abs = self.root.join(&rel);
        if abs.is_dir() {
            let mut scope = self.loaded.vault.scope.clone();
            let (found, _) = walk::walk_under(&self.root, &abs, &mut scope);
            plan.notes.extend(found.into_iter().map(|f| f.rel));
        }
        plan.notes
            .extend(self.notes_under(&rel).map(|n| n.path.clone()));
    }

    fn read(&self, rel: &str) -> Read {
        if !self.loaded.vault.scope.is_note(rel) {
            return Read::Skip;
        }
        let abs = self.root.join(rel);
        let meta = match std::fs::metadata(&abs) {
            Ok(m) if m.is_file() => m,
            _ => return Read::Gone(rel.to_string()),
        };
        if leads_outside(&self.canon_root, &abs) {
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
                    let mut n = Note::parse(rel, &bytes);
                    n.modified = meta.modified().ok();
                    Read::Parsed(Box::new(n))
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Read::Gone(rel.to_string()),
            Err(_) => Read::Parsed(Box::new(read_note(&abs, rel))),
        }
    }

    /// Re-reads `vaultdm.toml` and canon's other files as the plan asks. Returns whether the
    /// settings changed (canon is then rebuilt whole) and whether the templates are due to
    /// be read again.
    fn settings(
        &mut self,
        plan: &Plan,
        reload: &mut Reload,
        extra_diags: &mut Vec<Diagnostic>,
    ) -> (bool, bool) {
        let mut templates = plan.templates;
        let mut config_changed = false;
        if plan.config {
            let (config, diags) = Config::load(&self.root);
            if config != self.loaded.config || diags != self.loaded.config_diagnostics {
                config_changed = config != self.loaded.config;
                templates |= config.templates != self.loaded.config.templates;
                reload.context = context_changes(&self.loaded.config.context, &config.context);
                extra_diags.extend(diags.iter().cloned());
                self.loaded.config = config;
                self.loaded.config_diagnostics = diags;
                reload.files += 1;
                reload.paths.push(CONFIG_FILE.to_string());
            }
        }
        // Canon's other inputs are read here, never by `build`: re-read on every reload, as
        // cheap as a stat, so canon never keeps an old day or time.
        let files = CanonFiles::read(&self.root);
        if plan.temporal && files.temporal != self.loaded.files.temporal {
            reload.files += 1;
            reload.paths.push(TEMPORAL_INDEX.to_string());
        }
        if plan.temporal && files.clock != self.loaded.files.clock {
            reload.files += 1;
            reload.paths.push(OWN_CLOCK.to_string());
        }
        self.loaded.files = files;
        if templates && !plan.full {
            reload.files += 1;
        }
        (config_changed, templates)
    }

    /// Reads the vault's templates again and tries them on the current canon. Templates
    /// that load and render replace the ones in use ([`Reload::templates`] when they
    /// differ); a broken one keeps the last good templates, with a diagnostic at its file
    /// and line saying so.
    fn reload_templates(&mut self, reload: &mut Reload, extra_diags: &mut Vec<Diagnostic>) {
        let checked = checked_templates(
            &self.root,
            &self.loaded.config,
            &self.loaded.built.campaign,
            WhenBroken::KeepPrevious,
        );
        match checked {
            Ok(t) => {
                reload.templates = t.fingerprint() != self.templates.fingerprint();
                self.templates = t;
                if !std::mem::take(&mut self.template_diagnostics).is_empty() {
                    let at = self.loaded.config.templates.clone().unwrap_or_default();
                    extra_diags.push(Diagnostic::new(
                        &at,
                        0,
                        Severity::Info,
                        Code::TemplateFixed,
                        "the templates load again; the next context uses them",
                    ));
                }
            }
            Err(diags) => {
                extra_diags.extend(diags.iter().cloned());
                self.template_diagnostics = diags;
            }
        }
    }

    fn run(&mut self, mut plan: Plan, start: Instant) -> Reload {
        let mut reload = Reload {
            full: plan.full,
            ..Reload::default()
        };
        // A vault that moved or vanished looks like every note deleted: never apply that.
        if FileId::of_path(&self.root) != self.root_id {
            reload.diagnostics.push(Diagnostic::error(
                ".",
                0,
                Code::VaultMoved,
                format!(
                    "the vault folder {} moved or was removed; canon is kept as it was — start vaultdm again in the vault's new place",
                    self.root.display()
                ),
            ));
            reload.elapsed = start.elapsed();
            return reload;
        }
        let mut extra_diags: Vec<Diagnostic> = Vec::new();

        // 1. Read the changed notes; 2. pair renames; 3. keep last good versions.
        let (gone, parsed) = self.read_notes(std::mem::take(&mut plan.notes));
        let renames = self.renames(&gone, &parsed);
        let effective = self.last_good(parsed, &renames, &gone, &mut extra_diags);
        reload.paths = gone
            .iter()
            .cloned()
            .chain(effective.iter().map(|n| n.path.clone()))
            .collect();
        reload.paths.sort();
        reload.paths.dedup();
        reload.files = reload.paths.len();
        let touched: Vec<String> = effective.iter().map(|n| n.path.clone()).collect();

        // 4. Settings and the temporal index (templates are tried on the new canon below).
        let (config_changed, templates) = self.settings(&plan, &mut reload, &mut extra_diags);

        if reload.files == 0 && !plan.full && extra_diags.is_empty() {
            reload.elapsed = start.elapsed();
            return reload;
        }

        // 5. Canon, templates, diff, matcher, engine.
        let old_diags = self.loaded.built.diagnostics.clone();
        let edit = Edit {
            effective,
            gone,
            renames,
            full: plan.full || config_changed,
        };
        reload.changes = self.update_canon(edit, templates, &mut reload, &mut extra_diags);

        // 6. Diagnostics: the touched notes' own, and canon problems that are new.
        reload.diagnostics = self.reload_diagnostics(&touched, extra_diags, &old_diags);
        reload.elapsed = start.elapsed();
        reload
    }

    /// Reads the changed note paths (in parallel: a checkout may bring hundreds): the
    /// notes in canon that are gone, and the new or changed notes.
    fn read_notes(&self, paths: BTreeSet<String>) -> (Vec<String>, Vec<Note>) {
        let paths: Vec<String> = paths.into_iter().collect();
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
        (gone, parsed)
    }

    /// Renames: a note gone and a new note with the same bytes in the same reload, as
    /// `(old path, new path)`.
    fn renames(&self, gone: &[String], parsed: &[Note]) -> Vec<(String, String)> {
        let vault = &self.loaded.vault;
        let mut gone_by_hash: HashMap<u64, Vec<&str>> = HashMap::new();
        for p in gone {
            if let Some(i) = vault.note_index(p) {
                gone_by_hash
                    .entry(vault.notes[i].content_hash)
                    .or_default()
                    .push(p);
            }
        }
        let mut renames: Vec<(String, String)> = Vec::new();
        for n in parsed {
            if vault.note_index(&n.path).is_some() {
                continue;
            }
            if let Some(from) = gone_by_hash.get_mut(&n.content_hash).and_then(Vec::pop) {
                renames.push((from.to_string(), n.path.clone()));
            }
        }
        renames
    }

    /// Last good versions: a note that stops parsing keeps its previous canon (under its
    /// new path when it moved), one that parses again says so. Returns the notes to put
    /// into the vault.
    fn last_good(
        &mut self,
        parsed: Vec<Note>,
        renames: &[(String, String)],
        gone: &[String],
        extra_diags: &mut Vec<Diagnostic>,
    ) -> Vec<Note> {
        let renamed_from: HashMap<&str, &str> = renames
            .iter()
            .map(|(a, b)| (b.as_str(), a.as_str()))
            .collect();
        let vault = &self.loaded.vault;
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
                        Code::StaleNote,
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
        for p in gone {
            self.stale.remove(p);
        }
        for p in &fixed {
            self.stale.remove(p);
            extra_diags.push(Diagnostic::new(
                p,
                0,
                Severity::Info,
                Code::NoteFixed,
                "the note parses again; its new version is in canon",
            ));
        }
        self.stale.extend(now_stale);
        effective
    }

    /// Puts the edit into the vault and canon (incrementally when few notes changed), tries
    /// the templates when due, then brings the matcher and the engine in step. Returns the
    /// canon changes.
    fn update_canon(
        &mut self,
        edit: Edit,
        templates: bool,
        reload: &mut Reload,
        extra_diags: &mut Vec<Diagnostic>,
    ) -> Vec<Change> {
        // Let the engine's share of the campaign go, so that it is updated in place (it is
        // copied first only while a table or a request still holds an older engine).
        let old_engine = std::mem::replace(&mut self.engine, placeholder_engine(&self.templates));
        drop(old_engine);
        let before = update(
            &mut self.loaded.vault,
            &mut self.loaded.built,
            &self.loaded.config,
            &self.loaded.files,
            &mut self.deps,
            edit.effective,
            &edit.gone,
            edit.full,
        );
        if templates {
            self.reload_templates(reload, extra_diags);
        }
        let new = &self.loaded.built.campaign;
        let (changes, serves) = match &before {
            Before::Notes(notes, was) => (
                diff_notes(was, new, &edit.renames, notes),
                self.matcher.serves_after(new, notes),
            ),
            Before::Whole(was) => (
                diff_with_renames(was, new, &edit.renames),
                self.matcher.serves(new),
            ),
        };
        drop(before);
        if !serves {
            self.matcher = Arc::new(self.matcher.rebuilt(new));
        }
        self.engine = Engine::from_parts(
            Arc::clone(new),
            Arc::clone(&self.matcher),
            Arc::clone(&self.templates),
        );
        changes
    }

    /// A reload's diagnostics, in order: each saved note's own problems (its error before
    /// the stale-note warning), settings, then canon problems that were not there before;
    /// each once.
    fn reload_diagnostics(
        &self,
        touched: &[String],
        extra_diags: Vec<Diagnostic>,
        old_diags: &[Diagnostic],
    ) -> Vec<Diagnostic> {
        let mut diags = Vec::new();
        for p in touched {
            if let Some(i) = self.loaded.vault.note_index(p) {
                diags.extend(self.loaded.vault.note_diagnostics(i));
            }
        }
        diags.extend(extra_diags);
        let was: HashSet<&Diagnostic> = old_diags.iter().collect();
        let new = &self.loaded.built.diagnostics;
        diags.extend(new.iter().filter(|d| !was.contains(d)).cloned());
        let mut once: HashSet<Diagnostic> = HashSet::new();
        diags.retain(|d| once.insert(d.clone()));
        diags
    }
}
