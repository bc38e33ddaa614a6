//! Deciding what a note is: folder, then frontmatter `type:`, then tags, then a folder
//! name anywhere in its path.

use crate::config::FolderConfig;
use crate::vault::Note;

/// What a note describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NoteKind {
    /// A player character.
    Pc,
    /// A non-player character.
    Npc,
    /// A place.
    Location,
    /// A storyline note.
    Thread,
    /// Anything else: indexed for links and names.
    Lore,
}

fn word_kind(w: &str) -> Option<NoteKind> {
    Some(match w {
        "pc" | "pcs" | "player" | "players" | "party" | "player-character" | "player character" => {
            NoteKind::Pc
        }
        "npc" | "npcs" | "people" | "person" => NoteKind::Npc,
        "location" | "locations" | "place" | "places" => NoteKind::Location,
        "thread" | "threads" | "quest" | "quests" | "storyline" => NoteKind::Thread,
        _ => return None,
    })
}

fn folder_kind(seg: &str) -> Option<NoteKind> {
    Some(match seg {
        "pcs" | "party" | "players" => NoteKind::Pc,
        "npcs" | "people" | "npc" => NoteKind::Npc,
        "locations" | "places" => NoteKind::Location,
        "threads" | "quests" => NoteKind::Thread,
        _ => return None,
    })
}

fn under(path: &str, folder: &str) -> bool {
    let f = folder.trim_matches('/').to_lowercase();
    !f.is_empty() && path.to_lowercase().starts_with(&format!("{f}/"))
}

/// Decides the kind of a note.
pub fn classify(note: &Note, folders: &FolderConfig) -> NoteKind {
    let p = note.path.as_str();
    for (prefix, k) in [
        ("canon/pcs", NoteKind::Pc),
        ("canon/npcs", NoteKind::Npc),
        ("canon/locations", NoteKind::Location),
        ("canon/threads", NoteKind::Thread),
    ] {
        if under(p, prefix) {
            return k;
        }
    }
    for (list, k) in [
        (&folders.pcs, NoteKind::Pc),
        (&folders.npcs, NoteKind::Npc),
        (&folders.locations, NoteKind::Location),
        (&folders.threads, NoteKind::Thread),
    ] {
        if list.iter().any(|f| under(p, f)) {
            return k;
        }
    }
    if let Some(t) = note.frontmatter.text(&["type"]) {
        if let Some(k) = word_kind(&t.trim().to_lowercase()) {
            return k;
        }
    }
    for tag in &note.tags {
        for seg in tag.split('/') {
            if let Some(k) = word_kind(seg) {
                if seg != "party" && seg != "players" && seg != "people" {
                    return k;
                }
            }
        }
    }
    let dirs: Vec<&str> = p.split('/').collect();
    for seg in dirs[..dirs.len().saturating_sub(1)].iter().rev() {
        if let Some(k) = folder_kind(&seg.to_lowercase()) {
            return k;
        }
    }
    NoteKind::Lore
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("canon/npcs/a.md", "", NoteKind::Npc)]
    #[case("canon/locations/a.md", "type: tavern\n", NoteKind::Location)]
    #[case("notes/a.md", "type: NPC\n", NoteKind::Npc)]
    #[case("notes/a.md", "tags: [heist/npc/dead]\n", NoteKind::Npc)]
    #[case("notes/a.md", "tags: heist/pc\n", NoteKind::Pc)]
    #[case("notes/a.md", "tags: [place]\n", NoteKind::Location)]
    #[case("notes/a.md", "tags: [quest]\n", NoteKind::Thread)]
    #[case("heist/People/a.md", "", NoteKind::Npc)]
    #[case("world/places/x/a.md", "", NoteKind::Location)]
    #[case("heist/sessions/s1.md", "", NoteKind::Lore)]
    #[case("canon/pcs/a.md", "type: npc\n", NoteKind::Pc)]
    #[case("party/a.md", "tags: [npc]\n", NoteKind::Npc)]
    fn classifies(#[case] path: &str, #[case] fm: &str, #[case] want: NoteKind) {
        let n = Note::parse(path, format!("---\n{fm}---\nbody\n").as_bytes());
        assert_eq!(classify(&n, &FolderConfig::default()), want);
    }

    #[test]
    fn configured_folders() {
        let n = Note::parse("cast/a.md", b"x");
        let f = FolderConfig {
            npcs: vec!["cast".into()],
            ..Default::default()
        };
        assert_eq!(classify(&n, &f), NoteKind::Npc);
    }
}
