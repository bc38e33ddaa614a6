//! Incremental canon: after a few notes change, rebuild only what they can affect.
//!
//! `canon::build` over 10,000 notes takes tens of milliseconds; a live reload has a budget of
//! 20. So a reload rebuilds canon for a small set of notes `T` and splices the result into
//! the previous campaign. `T` holds:
//!
//! - the changed notes;
//! - notes whose references may now resolve differently: when a changed note's lookup keys
//!   (path, stem, names, aliases) or kind changed, every note with a frontmatter value that
//!   could name it (a superset of the references `build` resolves);
//! - notes sharing a name or alias with any of those, closed transitively, so duplicate-name
//!   warnings are recomputed for whole groups;
//! - `canon/open-threads.md` and `canon/timeline.md`, which carry the campaign-wide parts
//!   (threads, events, current day, and the diagnostics about them).
//!
//! `T` is built with the real `canon::build` in a small vault `S` = `T` plus every note a
//! reference of `T` resolves to in the whole vault (all candidates of an ambiguous one).
//! Resolution in `S` then gives the same answer as in the whole vault: `S` is a subset, so
//! no tier can gain a match, and every note that matched is present. Nothing of `build`'s
//! logic is duplicated here; the `incremental_matches_full_build` tests compare the result
//! with a full build after every kind of edit.

use crate::canon::kind::kind_of;
use crate::canon::model::Campaign;
use crate::canon::{build, Built, CanonFiles, NoteKind, OPEN_THREADS, TEMPORAL_INDEX, TIMELINE};
use crate::config::Config;
use crate::vault::frontmatter::{value_list, value_text};
use crate::vault::links::{find_wikilinks, lookup_keys, norm_key, note_keys};
use crate::vault::note::hash_bytes;
use crate::vault::{Note, Resolution, Vault};
use rayon::prelude::*;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

/// More changed notes than this in one reload: a full build is as fast and simpler.
const MAX_CHANGED: usize = 8;
/// More notes to rebuild than this: a full build.
const MAX_REBUILT: usize = 1500;

/// A hashed lookup key. 32 bits: a chat holds one per possible reference of every note, and
/// two texts sharing a key only widen a reload's rebuild (a note rebuilt that did not need
/// it), never narrow it: whether a note's own keys changed is decided on the texts.
type Key = u32;

fn h(s: &str) -> Key {
    let x = hash_bytes(s.as_bytes());
    (x ^ (x >> 32)) as Key
}

/// Every text in a note's frontmatter that could be a reference to another note.
fn ref_targets(note: &Note) -> Vec<String> {
    let mut out = Vec::new();
    for (_, v) in note.frontmatter.iter() {
        let mut texts = value_list(v);
        texts.extend(value_text(v));
        for t in texts {
            out.extend(find_wikilinks(&t).into_iter().map(|l| l.target.note.into()));
            out.push(t);
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Hashed lookup keys of every possible reference of a note.
fn ref_keys(note: &Note) -> Box<[Key]> {
    let mut v: Vec<Key> = ref_targets(note)
        .iter()
        .filter_map(|t| lookup_keys(t))
        .flat_map(|(k, s)| [h(&k), h(&s)])
        .collect();
    v.sort_unstable();
    v.dedup();
    v.into_boxed_slice()
}

/// The keys the link index files a note under, sorted, each once.
fn link_key_texts(note: &Note) -> Vec<String> {
    let mut v = note_keys(&note.path, &note.stem, &note.names());
    v.sort_unstable();
    v.dedup();
    v
}

/// [`link_key_texts`], hashed.
fn hashed(texts: &[String]) -> Vec<Key> {
    let mut v: Vec<Key> = texts.iter().map(|k| h(k)).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Hashed keys the link index files a note under.
fn link_keys(note: &Note) -> Vec<Key> {
    hashed(&link_key_texts(note))
}

/// Hashed normalised names and aliases (what duplicate-name warnings group by).
fn name_keys(note: &Note) -> Vec<Key> {
    let mut v: Vec<Key> = note
        .names()
        .iter()
        .map(|n| norm_key(n))
        .filter(|k| !k.is_empty())
        .map(|k| h(&k))
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// What each note may refer to and be called, kept current across reloads.
#[derive(Debug, Default)]
pub(crate) struct Deps {
    /// Each note's path (shared with `by_name`) -> its reference keys.
    refs: HashMap<Arc<str>, Box<[Key]>>,
    by_name: HashMap<Key, Vec<Arc<str>>>,
}

impl Deps {
    /// Indexes every note of a vault.
    pub(crate) fn new(vault: &Vault) -> Deps {
        let keys: Vec<(Box<[Key]>, Vec<Key>)> = vault
            .notes
            .par_iter()
            .map(|n| (ref_keys(n), name_keys(n)))
            .collect();
        let mut d = Deps {
            refs: HashMap::with_capacity(vault.notes.len()),
            by_name: HashMap::with_capacity(vault.notes.len()),
        };
        for (n, (refs, names)) in vault.notes.iter().zip(keys) {
            let path: Arc<str> = n.path.as_str().into();
            for k in names {
                d.by_name.entry(k).or_default().push(Arc::clone(&path));
            }
            d.refs.insert(path, refs);
        }
        d
    }

    fn forget(&mut self, note: &Note) {
        self.refs.remove(note.path.as_str());
        for k in name_keys(note) {
            if let Some(v) = self.by_name.get_mut(&k) {
                v.retain(|p| **p != *note.path);
                if v.is_empty() {
                    self.by_name.remove(&k);
                }
            }
        }
    }

    fn learn(&mut self, note: &Note) {
        let path: Arc<str> = note.path.as_str().into();
        for k in name_keys(note) {
            let v = self.by_name.entry(k).or_default();
            if !v.iter().any(|p| **p == *note.path) {
                v.push(Arc::clone(&path));
            }
        }
        self.refs.insert(path, ref_keys(note));
    }
}

/// Puts changed notes into the vault and brings canon up to date: incrementally for a few
/// notes, with a full `build` for many (or when `full` is asked, e.g. settings changed).
/// `files` are canon's other inputs as the reload read them (the temporal index).
/// Returns the notes whose entities may have changed (rebuilt or removed), or `None` after
/// a full build.
#[allow(clippy::too_many_arguments)]
pub(crate) fn update(
    vault: &mut Vault,
    built: &mut Built,
    config: &Config,
    files: &CanonFiles,
    deps: &mut Deps,
    upserts: Vec<Note>,
    removals: &[String],
    full: bool,
) -> Before {
    let found = learn_changes(vault, built, config, deps, &upserts, removals);
    if full
        || upserts.len() + removals.len() > MAX_CHANGED
        || built.kinds.len() != vault.notes.len()
    {
        vault.update_notes(upserts, removals);
        return build_whole(vault, built, config, files);
    }
    let mut rebuilt = apply(vault, built, upserts, found.kinds, removals);
    add_referrers(&mut rebuilt, deps, found.changed_keys);
    add_name_groups(&mut rebuilt, vault, deps, found.name_seeds);
    rebuilt.retain(|p| vault.note_index(p).is_some());
    add_campaign_wide(&mut rebuilt, vault, built);
    if rebuilt.len() > MAX_REBUILT {
        return build_whole(vault, built, config, files);
    }
    let mini = small_vault(vault, built, &rebuilt);
    let part = build(&mini, config, files);
    let was = splice(built, part, &rebuilt, removals);
    // The campaign-wide pass, over the whole spliced campaign.
    built
        .diagnostics
        .retain(|d| d.code != "no-location" && d.code != "no-party");
    let settled = crate::canon::build::settle(Arc::make_mut(&mut built.campaign), vault, config);
    built.diagnostics.extend(settled);
    rebuilt.extend(removals.iter().cloned());
    Before::Notes(rebuilt, Box::new(was))
}

/// Canon built whole again; the campaign as it was.
fn build_whole(vault: &Vault, built: &mut Built, config: &Config, files: &CanonFiles) -> Before {
    let was = std::mem::replace(built, build(vault, config, files));
    Before::Whole(was.campaign)
}

/// What changed about how notes are found, from [`learn_changes`].
struct KeyChanges {
    /// The lookup keys of notes whose keys or kind changed, before and after.
    changed_keys: HashSet<Key>,
    /// The names and aliases of the changed notes, before and after.
    name_seeds: Vec<Key>,
    /// The kind of each upserted note.
    kinds: Vec<NoteKind>,
}

/// Compares each changed note with the vault's copy (lookup keys and kinds, before and
/// after) and brings `deps` up to date; the vault itself is not touched yet.
fn learn_changes(
    vault: &Vault,
    built: &Built,
    config: &Config,
    deps: &mut Deps,
    upserts: &[Note],
    removals: &[String],
) -> KeyChanges {
    let mut found = KeyChanges {
        changed_keys: HashSet::new(),
        name_seeds: Vec::new(),
        kinds: Vec::with_capacity(upserts.len()),
    };
    for r in removals {
        if let Some(i) = vault.note_index(r) {
            let old = &vault.notes[i];
            found.changed_keys.extend(link_keys(old));
            found.name_seeds.extend(name_keys(old));
            deps.forget(old);
        }
    }
    for u in upserts {
        let kind = kind_of(u, config);
        // Compared as texts, not hashes: two key sets that hash alike must not hide a change.
        let new_keys = link_key_texts(u);
        match vault.note_index(&u.path) {
            Some(i) => {
                let old = &vault.notes[i];
                let old_keys = link_key_texts(old);
                if old_keys != new_keys || built.kinds.get(i) != Some(&kind) {
                    found.changed_keys.extend(hashed(&old_keys));
                    found.changed_keys.extend(hashed(&new_keys));
                }
                found.name_seeds.extend(name_keys(old));
                deps.forget(old);
            }
            None => found.changed_keys.extend(hashed(&new_keys)),
        }
        found.name_seeds.extend(name_keys(u));
        deps.learn(u);
        found.kinds.push(kind);
    }
    found
}

/// Applies the changes to the vault, keeping `built.kinds` aligned with its notes; the
/// paths of the upserted notes.
fn apply(
    vault: &mut Vault,
    built: &mut Built,
    upserts: Vec<Note>,
    kinds: Vec<NoteKind>,
    removals: &[String],
) -> BTreeSet<String> {
    for r in removals {
        if let Some(i) = vault.note_index(r) {
            vault.remove_note(r);
            built.kinds.remove(i);
        }
    }
    let mut rebuilt: BTreeSet<String> = BTreeSet::new();
    for (u, kind) in upserts.into_iter().zip(kinds) {
        let path = u.path.clone();
        let replaced = vault.upsert_note(u).is_some();
        if let Some(i) = vault.note_index(&path) {
            if replaced {
                built.kinds[i] = kind;
            } else {
                built.kinds.insert(i, kind);
            }
        }
        rebuilt.insert(path);
    }
    rebuilt
}

/// Adds the notes whose references may resolve differently now: those with a possible
/// reference under one of `changed_keys`.
fn add_referrers(rebuilt: &mut BTreeSet<String>, deps: &Deps, changed_keys: HashSet<Key>) {
    if changed_keys.is_empty() {
        return;
    }
    // Sorted, and searched: the vault's reference keys are tens of thousands, and
    // hashing each of them again was most of a rename's reload.
    let mut changed: Vec<Key> = changed_keys.into_iter().collect();
    changed.sort_unstable();
    for (path, keys) in &deps.refs {
        if keys.iter().any(|k| changed.binary_search(k).is_ok()) {
            rebuilt.insert(path.to_string());
        }
    }
}

/// Adds whole duplicate-name groups of everything rebuilt and of `name_seeds`, closed
/// transitively (stopping once past [`MAX_REBUILT`]).
fn add_name_groups(
    rebuilt: &mut BTreeSet<String>,
    vault: &Vault,
    deps: &Deps,
    name_seeds: Vec<Key>,
) {
    let mut queue = name_seeds;
    for p in rebuilt.iter() {
        if let Some(i) = vault.note_index(p) {
            queue.extend(name_keys(&vault.notes[i]));
        }
    }
    let mut seen: HashSet<Key> = HashSet::new();
    while let Some(k) = queue.pop() {
        if !seen.insert(k) {
            continue;
        }
        for p in deps.by_name.get(&k).into_iter().flatten() {
            if rebuilt.insert(p.to_string()) {
                if let Some(i) = vault.note_index(p) {
                    queue.extend(name_keys(&vault.notes[i]));
                }
            }
        }
        if rebuilt.len() > MAX_REBUILT {
            break;
        }
    }
}

/// Adds the notes that carry the campaign-wide parts: the threads file and timeline, party
/// notes (their members are body links) and timelines, and the note that keeps the clock.
fn add_campaign_wide(rebuilt: &mut BTreeSet<String>, vault: &Vault, built: &Built) {
    for p in [OPEN_THREADS, TIMELINE] {
        if vault.note_index(p).is_some() {
            rebuilt.insert(p.to_string());
        }
    }
    for (i, k) in built.kinds.iter().enumerate() {
        if matches!(k, NoteKind::Party | NoteKind::Timeline) {
            rebuilt.insert(vault.notes[i].path.clone());
        }
    }
    if let crate::canon::ClockHome::Note { path, .. } = &built.campaign.clock {
        if vault.note_index(path).is_some() {
            rebuilt.insert(path.clone());
        }
    }
}

/// The small vault `S`: the `rebuilt` notes and everything their references resolve to,
/// every PC note, and a thread note when none of those is one.
fn small_vault(vault: &Vault, built: &Built, rebuilt: &BTreeSet<String>) -> Vault {
    let mut small: BTreeSet<usize> = BTreeSet::new();
    for p in rebuilt {
        let Some(i) = vault.note_index(p) else {
            continue;
        };
        small.insert(i);
        for t in ref_targets(&vault.notes[i]) {
            match vault.resolve_from(&t, Some(&vault.notes[i].path)) {
                Resolution::Found(j) => {
                    small.insert(j);
                }
                Resolution::Ambiguous(c) => small.extend(c),
                Resolution::NotFound => {}
            }
        }
    }
    // Party notes resolve their members among the PC notes: all of them are in `S`.
    for (i, k) in built.kinds.iter().enumerate() {
        if *k == NoteKind::Pc {
            small.insert(i);
        }
    }
    // Whether the campaign has any thread decides the `no-threads` diagnostic.
    if !small.iter().any(|&i| built.kinds[i] == NoteKind::Thread) {
        if let Some(i) = built.kinds.iter().position(|k| *k == NoteKind::Thread) {
            small.insert(i);
        }
    }
    let notes: Vec<Note> = small.iter().map(|&i| vault.notes[i].clone()).collect();
    Vault::from_notes(vault.root.clone(), notes, Vec::new())
}

/// What canon was before [`update`], for telling what changed.
#[derive(Debug)]
pub(crate) enum Before {
    /// Canon was built whole again: the whole campaign as it was.
    Whole(Arc<Campaign>),
    /// Only these notes were rebuilt (and the removed ones dropped): their NPCs, places,
    /// lore and sessions as they were, with the campaign-wide parts (PCs, threads, events,
    /// parties, name, setting, day and time) whole. Nothing else in the campaign changed.
    Notes(BTreeSet<String>, Box<Campaign>),
}

/// Removes the entities of the `gone` notes from a vector sorted by note path and inserts
/// those of `new` that came from `taken` notes, in order.
///
/// One pass over the vector, not a `drain` per gone note and an `insert` per new entity: a
/// rename rebuilds every note that may refer to the name (dozens) and the open-threads and
/// timeline files (hundreds of entities), and each `drain` or `insert` moved the vector's
/// tail (callgrind: half the instructions of a rename's reload were those moves).
fn replace_sorted<T>(
    v: &mut Vec<T>,
    new: Vec<T>,
    gone: &BTreeSet<&str>,
    taken: &BTreeSet<String>,
    key: impl Fn(&T) -> &str,
    removed: &mut Vec<T>,
) {
    let mut new: Vec<T> = new.into_iter().filter(|e| taken.contains(key(e))).collect();
    let removes = gone.iter().any(|g| {
        let at = v.partition_point(|e| key(e) < *g);
        v.get(at).is_some_and(|e| key(e) == *g)
    });
    if !removes && new.len() <= 1 {
        if let Some(e) = new.pop() {
            let at = v.partition_point(|x| key(x) <= key(&e));
            v.insert(at, e);
        }
        return;
    }
    // Stable, and old entities before new ones with the same key, as inserting each after
    // every entity with a key not greater than its own would place them.
    new.sort_by(|a, b| key(a).cmp(key(b)));
    let old = std::mem::take(v);
    let mut out = Vec::with_capacity(old.len() + new.len());
    let mut new = new.into_iter().peekable();
    let mut gone = gone.iter().peekable();
    for e in old {
        let k = key(&e);
        while gone.next_if(|g| **g < k).is_some() {}
        if gone.peek().is_some_and(|g| **g == k) {
            removed.push(e);
            continue;
        }
        while let Some(n) = new.next_if(|n| key(n) < k) {
            out.push(n);
        }
        out.push(e);
    }
    out.extend(new);
    *v = out;
}

/// Replaces, in `built`, everything that came from the `rebuilt` and `removed` notes with
/// what `part` built for the rebuilt ones, and the campaign-wide parts with `part`'s.
/// Returns what was replaced: the NPCs, places, lore and sessions of those notes (each
/// vector sorted by note path, as the campaign's), and the campaign-wide parts whole — what
/// [`crate::canon::diff::diff_notes`] compares with the new campaign.
fn splice(
    built: &mut Built,
    part: Built,
    rebuilt: &BTreeSet<String>,
    removed: &[String],
) -> Campaign {
    let gone: BTreeSet<&str> = rebuilt
        .iter()
        .map(String::as_str)
        .chain(removed.iter().map(String::as_str))
        .collect();
    // `part` was just built: nothing else holds its campaign.
    let p = Arc::try_unwrap(part.campaign).unwrap_or_else(|shared| (*shared).clone());
    // Copied here only when an engine made before this reload still holds the campaign.
    let c = Arc::make_mut(&mut built.campaign);
    let mut was = Campaign {
        pcs: c.pcs.clone(),
        threads: c.threads.clone(),
        parties: c.parties.clone(),
        active_party: c.active_party.clone(),
        ..Campaign::default()
    };
    // Each vector sorted by note path (`id`); the entities that leave go to `$into`.
    macro_rules! by_id {
        ($field:ident, $into:expr) => {
            replace_sorted(&mut c.$field, p.$field, &gone, rebuilt, |e| &e.id, $into)
        };
    }
    by_id!(pcs, &mut Vec::new());
    by_id!(npcs, &mut was.npcs);
    by_id!(locations, &mut was.locations);
    by_id!(lore, &mut was.lore);
    by_id!(sessions, &mut was.sessions);
    by_id!(parties, &mut Vec::new());
    // Threads by the note they are written in (`canon/open-threads.md` holds many).
    replace_sorted(
        &mut c.threads,
        p.threads,
        &gone,
        rebuilt,
        |e| &e.source.path,
        &mut Vec::new(),
    );
    was.events = std::mem::replace(&mut c.events, p.events);
    was.day = std::mem::replace(&mut c.day, p.day);
    was.time = std::mem::replace(&mut c.time, p.time);
    was.timeline = std::mem::replace(&mut c.timeline, p.timeline);
    was.clock = std::mem::replace(&mut c.clock, p.clock);
    was.name = std::mem::replace(&mut c.name, p.name);
    was.setting = std::mem::replace(&mut c.setting, p.setting);
    c.secrets.retain(|path, _| !gone.contains(path.as_str()));
    c.secrets.extend(p.secrets);
    let global = [OPEN_THREADS, TIMELINE, TEMPORAL_INDEX];
    built
        .diagnostics
        .retain(|d| !gone.contains(d.path.as_str()) && !global.contains(&d.path.as_str()));
    built.diagnostics.extend(
        part.diagnostics
            .into_iter()
            .filter(|d| rebuilt.contains(&d.path) || global.contains(&d.path.as_str())),
    );
    was
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vault::Diagnostic;

    fn vault(files: &[(&str, &str)]) -> Vault {
        let notes = files
            .iter()
            .map(|(p, t)| Note::parse(p, t.as_bytes()))
            .collect();
        Vault::from_notes(
            std::env::temp_dir().join("vaultdm-incremental-test-none"),
            notes,
            vec![],
        )
    }

    fn sorted(mut d: Vec<Diagnostic>) -> Vec<Diagnostic> {
        d.sort_by(|a, b| {
            (&a.path, a.line, a.code, &a.message).cmp(&(&b.path, b.line, b.code, &b.message))
        });
        d
    }

    /// Applies one change incrementally and compares with a full build of the result.
    fn check(files: &[(&str, &str)], upserts: &[(&str, &str)], removals: &[&str]) {
        let config = Config::default();
        let mut v = vault(files);
        let files = CanonFiles::default();
        let mut built = build(&v, &config, &files);
        let mut deps = Deps::new(&v);
        let ups = upserts
            .iter()
            .map(|(p, t)| Note::parse(p, t.as_bytes()))
            .collect();
        let rem: Vec<String> = removals.iter().map(|s| s.to_string()).collect();
        let whole_before = (*built.campaign).clone();
        let before = update(
            &mut v, &mut built, &config, &files, &mut deps, ups, &rem, false,
        );
        let Before::Notes(notes, was) = before else {
            panic!("took the full path");
        };
        // What was kept of the old campaign tells the same changes as all of it.
        let renames: Vec<(String, String)> = Vec::new();
        assert_eq!(
            crate::canon::diff::diff_notes(&was, &built.campaign, &renames, &notes),
            crate::canon::diff::diff_with_renames(&whole_before, &built.campaign, &renames),
        );
        // And the same answer to whether the mention matcher still serves.
        let matcher = crate::mentions::Matcher::new(&whole_before);
        assert_eq!(
            matcher.serves_after(&built.campaign, &notes),
            matcher.serves(&built.campaign),
        );
        let full = build(&v, &config, &files);
        assert_eq!(built.campaign, full.campaign);
        assert_eq!(built.kinds, full.kinds);
        assert_eq!(sorted(built.diagnostics), sorted(full.diagnostics));
        let fresh = Deps::new(&v);
        assert_eq!(deps.refs, fresh.refs);
        let norm = |m: &HashMap<Key, Vec<Arc<str>>>| {
            let mut v: Vec<(Key, Vec<Arc<str>>)> = m
                .iter()
                .map(|(k, v)| {
                    (*k, {
                        let mut v = v.clone();
                        v.sort();
                        v
                    })
                })
                .collect();
            v.sort();
            v
        };
        assert_eq!(norm(&deps.by_name), norm(&fresh.by_name));
    }

    const BASE: &[(&str, &str)] = &[
        (
            "canon/pcs/jake.md",
            "---\nname: Jake\nhp_current: 13\nhp_max: 13\nlocation: the-docks\n---\n# Jake\n",
        ),
        (
            "canon/npcs/marlena.md",
            "---\nname: Marlena\nlocation: \"[[The Salty Sigil]]\"\nstatus: active\n---\n",
        ),
        (
            "canon/npcs/gannet.md",
            "---\nname: Old Gannet\naliases: [Gannet]\nlocation: Sigil\n---\n",
        ),
        (
            "canon/locations/the-docks.md",
            "---\nname: The Docks\n---\n",
        ),
        (
            "canon/locations/the-salty-sigil.md",
            "---\nname: The Salty Sigil\naliases: [Sigil]\nparent: the-docks\n---\n",
        ),
        (
            "canon/open-threads.md",
            "# Open Threads\n## High\n### The Fading Muffle\nIt fades.\n",
        ),
        (
            "canon/timeline.md",
            "# Timeline\n## Day 5\n- The bell rang.\n",
        ),
        ("lore/gannet-notes.md", "# Gannet's notes\n"),
    ];

    #[test]
    fn incremental_matches_full_build_for_field_edits() {
        check(
            BASE,
            &[(
                "canon/pcs/jake.md",
                "---\nname: Jake\nhp_current: 4\nhp_max: 13\nlocation: the-docks\n---\n",
            )],
            &[],
        );
        check(
            BASE,
            &[(
                "canon/npcs/marlena.md",
                "---\nname: Marlena\nlocation: the-docks\nstatus: dead\n---\n",
            )],
            &[],
        );
        check(
            BASE,
            &[(
                "canon/open-threads.md",
                "# Open Threads\n## Urgent\n### The Fading Muffle\n",
            )],
            &[],
        );
        check(
            BASE,
            &[(
                "canon/timeline.md",
                "# Timeline\n## Day 5\n- The bell rang.\n## Day 6\n- More.\n",
            )],
            &[],
        );
        check(
            BASE,
            &[(
                "canon/pcs/jake.md",
                "---\nname: Jake\nhp_current: x\nlocation: nowhere\n---\n",
            )],
            &[],
        );
    }

    #[test]
    fn incremental_matches_full_build_for_names_and_kinds() {
        // A location renamed: references to its old name stop resolving.
        check(
            BASE,
            &[(
                "canon/locations/the-salty-sigil.md",
                "---\nname: The Sigil\n---\n",
            )],
            &[],
        );
        // A new note takes an alias another note uses: references become ambiguous,
        // and duplicate-name warnings appear on both.
        check(
            BASE,
            &[("canon/locations/sigil.md", "---\nname: Sigil\n---\n")],
            &[],
        );
        check(
            BASE,
            &[("canon/npcs/marlena-2.md", "---\nname: Marlena\n---\n")],
            &[],
        );
        // A lore note becomes a location by tag.
        check(
            BASE,
            &[(
                "lore/gannet-notes.md",
                "---\ntags: [place]\nname: Gannet's Rest\n---\n",
            )],
            &[],
        );
        // A location becomes an NPC by folder move.
        check(
            BASE,
            &[("canon/npcs/the-docks.md", "---\nname: The Docks\n---\n")],
            &["canon/locations/the-docks.md"],
        );
    }

    /// Two names whose 32-bit keys are the same, found by search (a birthday collision:
    /// about 80k names in).
    fn colliding_names() -> (String, String) {
        let mut seen: HashMap<Key, String> = HashMap::new();
        let mut i = 0u32;
        loop {
            let name = format!("Wharf{i}");
            if let Some(other) = seen.insert(h(&norm_key(&name)), name.clone()) {
                return (other, name);
            }
            i += 1;
        }
    }

    #[test]
    fn a_rename_to_a_name_whose_key_hashes_alike_still_rebuilds_what_refers_to_it() {
        let (a, b) = colliding_names();
        assert_ne!(norm_key(&a), norm_key(&b));
        let was = format!("---\nname: {a}\n---\n");
        let is = format!("---\nname: {b}\n---\n");
        let npc = format!("---\nname: Oskar\nlocation: {b}\n---\n");
        // Oskar's location resolves only after the rename: his note must be rebuilt.
        check(
            &[
                ("canon/locations/quay.md", was.as_str()),
                ("canon/npcs/oskar.md", npc.as_str()),
            ],
            &[("canon/locations/quay.md", is.as_str())],
            &[],
        );
    }

    #[test]
    fn incremental_matches_full_build_for_deletes_and_creates() {
        check(BASE, &[], &["canon/locations/the-docks.md"]);
        check(BASE, &[], &["canon/npcs/gannet.md"]);
        check(BASE, &[], &["canon/open-threads.md"]);
        check(BASE, &[], &["canon/timeline.md"]);
        check(
            BASE,
            &[(
                "canon/threads/heist.md",
                "---\npriority: high\n---\n# Heist\n",
            )],
            &[],
        );
        check(
            BASE,
            &[(
                "new/folder/zed.md",
                "---\ntype: npc\nname: Zed\nlocation: The Docks\n---\n",
            )],
            &[],
        );
        // Renamed note, same content.
        check(
            BASE,
            &[("canon/npcs/dead/marlena.md", BASE[1].1)],
            &["canon/npcs/marlena.md"],
        );
    }

    proptest::proptest! {
        /// The one-pass merge removes what draining each gone note's range removed, and puts
        /// entities where inserting each after every entity with a key not greater than its
        /// own did (equal keys: old ones first, new in order).
        #[test]
        fn replace_sorted_is_insertion_one_by_one(
            old in proptest::collection::vec(0u8..12, 0..40),
            new in proptest::collection::vec((0u8..12, 0u16..1000), 0..30),
            gone in proptest::collection::btree_set(0u8..12, 0..6),
            taken in proptest::collection::btree_set(0u8..12, 0..12),
        ) {
            let key = |k: u8| format!("k{k:02}");
            let mut old: Vec<(String, u16)> =
                old.into_iter().enumerate().map(|(i, k)| (key(k), i as u16)).collect();
            old.sort_by(|a, b| a.0.cmp(&b.0));
            let new: Vec<(String, u16)> = new.into_iter().map(|(k, n)| (key(k), n)).collect();
            let gone_keys: Vec<String> = gone.into_iter().map(key).collect();
            let gone: BTreeSet<&str> = gone_keys.iter().map(String::as_str).collect();
            let taken: BTreeSet<String> = taken.into_iter().map(key).collect();
            let mut want = old.clone();
            for g in &gone {
                let from = want.partition_point(|e| e.0.as_str() < *g);
                let to = from + want[from..].iter().take_while(|e| e.0 == *g).count();
                want.drain(from..to);
            }
            for e in new.iter().filter(|e| taken.contains(&e.0)) {
                let at = want.partition_point(|x| x.0 <= e.0);
                want.insert(at, e.clone());
            }
            let mut dropped: Vec<(String, u16)> = old
                .iter()
                .filter(|e| gone.contains(e.0.as_str()))
                .cloned()
                .collect();
            dropped.sort();
            let mut got = old;
            let mut removed = Vec::new();
            replace_sorted(&mut got, new, &gone, &taken, |e| e.0.as_str(), &mut removed);
            proptest::prop_assert_eq!(got, want);
            removed.sort();
            proptest::prop_assert_eq!(removed, dropped);
        }
    }
}
