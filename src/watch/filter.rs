//! Which changed paths a reload never needs to see.
//!
//! Editors and sync tools write a lot besides the note itself: vim writes `4913` to test the
//! folder, renames the old file to `note.md~` and keeps `.note.md.swp`; emacs writes
//! `.#note.md` locks and `#note.md#` autosaves; JetBrains writes `___jb_tmp___` files;
//! Obsidian keeps its settings in `.obsidian/` and deleted notes in `.trash/`. None of that
//! is canon, and waking the reloader for it would only cost time.

/// True for file names that editors, office suites and sync tools write while saving:
/// swap, backup, lock and temporary files.
pub fn is_temp_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    if n.is_empty() {
        return false;
    }
    if n.starts_with('.') || n.ends_with('~') || n.starts_with("~$") {
        return true;
    }
    if n.len() > 1 && n.starts_with('#') && n.ends_with('#') {
        return true;
    }
    // vim's folder-write test file: 4913, then 5036, 5159… (a folder named 2024 is fine).
    if let Ok(k) = n.parse::<u32>() {
        if k >= 4913 && (k - 4913) % 123 == 0 {
            return true;
        }
    }
    if n.contains("___jb_tmp___") || n.contains("___jb_old___") || n.contains(".tmp.") {
        return true;
    }
    let ext = n.rsplit_once('.').map_or("", |(_, e)| e);
    let swap = ext.len() == 3 && ext.starts_with("sw") && ext.as_bytes()[2].is_ascii_lowercase();
    swap || matches!(
        ext,
        "tmp" | "temp" | "bak" | "part" | "partial" | "crdownload" | "crswap" | "kate-swp" | "swpx"
    )
}

/// True for a vault-relative path (`/`-separated) the watcher never reports: anything in
/// a hidden folder (`.obsidian/`, `.trash/`, `.vaultdm/`, `.git/`), the root `sessions/`
/// folder where transcripts are written, and swap/backup/temp files.
pub fn is_noise(rel: &str) -> bool {
    let last = rel.rsplit('/').find(|s| !s.is_empty()).unwrap_or("");
    is_skipped_folder(rel) || is_temp_name(last)
}

/// True for a vault-relative path inside (or naming) a folder the vault never reads:
/// hidden folders and the root `sessions/`.
pub fn is_skipped_folder(rel: &str) -> bool {
    let mut segs = rel.split('/').filter(|s| !s.is_empty());
    let Some(first) = segs.clone().next() else {
        return false; // the vault folder itself
    };
    first == "sessions" || segs.any(|s| s.starts_with('.'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("canon/npcs/ida.md", false)]
    #[case("vaultdm.toml", false)]
    #[case("canon/temporal-index.json", false)]
    #[case("canon/npcs", false)]
    #[case("", false)]
    #[case(".obsidian/workspace.json", true)]
    #[case("notes/.trash/x.md", true)]
    #[case(".vaultdm/state", true)]
    #[case("sessions/2026-01-01.jsonl", true)]
    #[case("heist/sessions/s1.md", false)]
    #[case("canon/npcs/4913", true)]
    #[case("canon/npcs/5036", true)]
    #[case("notes/2024", false)]
    #[case("canon/npcs/ida.md~", true)]
    #[case("canon/npcs/.ida.md.swp", true)]
    #[case("canon/npcs/ida.md.swp", true)]
    #[case("canon/npcs/ida.md.swo", true)]
    #[case("canon/npcs/.#ida.md", true)]
    #[case("canon/npcs/#ida.md#", true)]
    #[case("canon/npcs/ida.md.tmp", true)]
    #[case("canon/npcs/ida.md.tmp.1234", true)]
    #[case("canon/npcs/ida.md___jb_tmp___", true)]
    #[case("canon/npcs/~$ida.docx", true)]
    #[case("canon/npcs/ida.md.bak", true)]
    #[case("canon/npcs/day 2.md", false)]
    #[case("canon/npcs/2024.md", false)]
    fn noise(#[case] rel: &str, #[case] want: bool) {
        assert_eq!(is_noise(rel), want, "{rel}");
    }
}
