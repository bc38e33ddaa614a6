//! Adopting a vault: what vaultdm makes of a vault it did not lay out, shown to the GM and
//! written down as a `vaultdm.toml` they can correct — without touching a note.
//!
//! [`Mapping::of`] groups every note by the kind [`super::kind::classify_why`] gives it and
//! the reason (a folder, a `type:`, a tag, a file-name prefix), with counts and examples;
//! `vaultdm init --adopt` prints it and writes [`Mapping::to_toml`], `vaultdm check
//! --explain-types` prints it.

use super::kind::{classify_why, NoteKind, Why};
use super::Loaded;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// How many example names a group shows.
const EXAMPLES: usize = 3;

/// One reason a group of notes got their kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// The reason (`folder 1. The Party/`, `tag #npc`).
    pub why: Why,
    /// How many notes.
    pub count: usize,
    /// A few of their names.
    pub examples: Vec<String>,
}

/// What vaultdm reads a vault as.
#[derive(Debug, Clone, Default)]
pub struct Mapping {
    /// Notes by kind, then by reason (largest first).
    pub kinds: BTreeMap<NoteKind, Vec<Group>>,
    /// Template folders and why they are ones.
    pub templates: Vec<(String, &'static str)>,
    /// The timeline: `canon/timeline.md` or the Timeline notes used.
    pub timelines: Vec<String>,
    /// The party in play and why, when the vault has groups of PCs.
    pub party: Option<String>,
    /// Campaign name.
    pub name: String,
}

impl Mapping {
    /// Groups the notes of a loaded vault.
    pub fn of(loaded: &Loaded) -> Mapping {
        let mut by: BTreeMap<(NoteKind, Why), (usize, Vec<String>)> = BTreeMap::new();
        for (i, note) in loaded.vault.notes.iter().enumerate() {
            let kind = loaded.built.kinds[i];
            let (_, why) = classify_why(note, &loaded.config.folders);
            let e = by.entry((kind, why)).or_default();
            e.0 += 1;
            if e.1.len() < EXAMPLES {
                e.1.push(note.name());
            }
        }
        let mut kinds: BTreeMap<NoteKind, Vec<Group>> = BTreeMap::new();
        for ((kind, why), (count, examples)) in by {
            kinds.entry(kind).or_default().push(Group {
                why,
                count,
                examples,
            });
        }
        for groups in kinds.values_mut() {
            groups.sort_by(|a, b| b.count.cmp(&a.count).then(a.why.cmp(&b.why)));
        }
        let c = &loaded.built.campaign;
        let timelines = loaded
            .vault
            .notes
            .iter()
            .enumerate()
            .filter(|(i, n)| {
                n.path == super::TIMELINE
                    || (loaded.built.kinds[*i] == NoteKind::Timeline
                        && loaded.vault.note_index(super::TIMELINE).is_none())
            })
            .map(|(_, n)| n.path.clone())
            .collect();
        Mapping {
            kinds,
            templates: loaded
                .vault
                .scope
                .template_folders
                .iter()
                .map(|t| (t.path.clone(), t.why))
                .collect(),
            timelines,
            party: c
                .active_party
                .as_ref()
                .map(|(i, why)| format!("{} ({why})", c.parties[*i].name)),
            name: c.name.clone(),
        }
    }

    /// Notes of one kind.
    pub fn count(&self, kind: NoteKind) -> usize {
        self.kinds
            .get(&kind)
            .map_or(0, |g| g.iter().map(|g| g.count).sum())
    }

    /// The mapping for a GM to read.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        for kind in [
            NoteKind::Pc,
            NoteKind::Npc,
            NoteKind::Location,
            NoteKind::Thread,
            NoteKind::Party,
            NoteKind::Player,
            NoteKind::Session,
            NoteKind::Timeline,
            NoteKind::Meta,
            NoteKind::Lore,
        ] {
            let groups = self.kinds.get(&kind).map(Vec::as_slice).unwrap_or(&[]);
            let _ = writeln!(out, "{} ({})", kind.label(), self.count(kind));
            let shown = if kind == NoteKind::Lore { 3 } else { 6 };
            for g in groups.iter().take(shown) {
                let _ = writeln!(
                    out,
                    "  {:>4}  {} — e.g. {}",
                    g.count,
                    g.why,
                    g.examples.join(", ")
                );
            }
            if groups.len() > shown {
                let rest: usize = groups[shown..].iter().map(|g| g.count).sum();
                let _ = writeln!(out, "  {rest:>4}  in {} other groups", groups.len() - shown);
            }
        }
        let _ = writeln!(
            out,
            "timeline: {}",
            if self.timelines.is_empty() {
                "none (no canon/timeline.md, no note named Timeline)".to_string()
            } else {
                self.timelines.join(", ")
            }
        );
        if let Some(p) = &self.party {
            let _ = writeln!(out, "party in play: {p}");
        }
        if self.templates.is_empty() {
            let _ = writeln!(out, "templates: none found");
        } else {
            for (path, why) in &self.templates {
                let _ = writeln!(out, "templates: {path}/ (from {why}) — not canon");
            }
        }
        out
    }

    /// Folders that decided a kind, most notes first.
    fn folders(&self, kind: NoteKind) -> Vec<String> {
        let mut v: Vec<(usize, String)> = self
            .kinds
            .get(&kind)
            .into_iter()
            .flatten()
            .filter_map(|g| match &g.why {
                Why::Folder(f) | Why::Configured(f) if !f.starts_with("canon/") => {
                    Some((g.count, f.clone()))
                }
                _ => None,
            })
            .collect();
        v.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        v.into_iter().map(|(_, f)| f).collect()
    }

    /// A commented `vaultdm.toml` that records this mapping (for `init --adopt`).
    pub fn to_toml(&self, date: &str) -> String {
        let q = |s: &str| toml::Value::String(s.to_string()).to_string();
        let list = |v: &[String]| v.iter().map(|s| q(s)).collect::<Vec<_>>().join(", ");
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# vaultdm.toml — written by `vaultdm init --adopt` on {date}.\n\
             # vaultdm read this vault as it is and changed no note. The folders below are what it\n\
             # found; edit them to correct it (a note's `type:` or tags still win inside them), or\n\
             # delete a line to let vaultdm decide again. `vaultdm check --explain-types` shows the\n\
             # whole mapping. Docs: docs/vault-format.md (\"Adopting a vault\").\n"
        );
        let _ = writeln!(out, "name = {}", q(&self.name));
        let _ = writeln!(
            out,
            "# setting = \"One line about the world, shown under the name\""
        );
        match &self.party {
            Some(p) => {
                let _ = writeln!(out, "# party in play now: {p}");
                let _ = writeln!(out, "# party = \"…\"   # pick the party in play by name");
            }
            None => {
                let _ = writeln!(
                    out,
                    "# party = \"…\"   # when PCs form several groups: the one in play"
                );
            }
        }
        let _ = writeln!(out, "\n[folders]");
        for (key, kind) in [
            ("pcs", NoteKind::Pc),
            ("npcs", NoteKind::Npc),
            ("locations", NoteKind::Location),
            ("threads", NoteKind::Thread),
            ("sessions", NoteKind::Session),
        ] {
            let folders = self.folders(kind);
            let others: Vec<String> = self
                .kinds
                .get(&kind)
                .into_iter()
                .flatten()
                .filter(|g| !matches!(g.why, Why::Folder(_) | Why::Configured(_)))
                .map(|g| format!("{} ({})", g.why, g.count))
                .collect();
            if folders.is_empty() {
                let _ = writeln!(out, "# {key} = []");
            } else {
                let _ = writeln!(out, "{key} = [{}]", list(&folders));
            }
            if !others.is_empty() {
                let _ = writeln!(
                    out,
                    "#   {} also found by: {}",
                    kind.label(),
                    others.join("; ")
                );
            }
        }
        let templates: Vec<String> = self
            .templates
            .iter()
            .filter(|(_, why)| *why == "its name" || *why == "vaultdm.toml")
            .map(|(p, _)| p.clone())
            .collect();
        let from_obsidian: Vec<String> = self
            .templates
            .iter()
            .filter(|(_, why)| *why != "its name" && *why != "vaultdm.toml")
            .map(|(p, why)| format!("{p} ({why})"))
            .collect();
        if templates.is_empty() {
            let _ = writeln!(out, "# templates = []");
        } else {
            let _ = writeln!(out, "templates = [{}]", list(&templates));
        }
        if !from_obsidian.is_empty() {
            let _ = writeln!(
                out,
                "#   template folders Obsidian's settings name (read every time): {}",
                from_obsidian.join(", ")
            );
        }
        let _ = writeln!(
            out,
            "\n[context]\n# budget = 4000               # tokens for the injected block (0 = no budget)\n# npc_cap = 5                 # most present, unmentioned NPCs in a full context\n# recent_events = 5           # events in a full context"
        );
        out
    }
}
