//! Which files of a vault are notes: the one rule the walk, the watcher, the poller and the
//! live reload share.
//!
//! A file is a note when it is a `.md` file outside hidden folders (`.obsidian/`, `.trash/`,
//! `.vaultdm/`, `.git/`) and backup folders (`name~`), not one of vaultdm's own transcripts
//! in the root `sessions/` folder ([`Scope::is_transcript`]: a GM's own session notes there
//! are notes), not an editor's swap, backup, lock or temporary file ([`is_temp_name`]),
//! outside the vault's **template folders**, and not reached through a link leading out of
//! the vault ([`leads_outside`]). Templates are not canon: a Templater
//! template is full of `<% tp.file.title %>` and placeholder NPCs, and reading it as a note
//! made `check` fail on healthy vaults.
//!
//! Split by what each user can know:
//!
//! - [`is_noise`]: by the path alone, files that are never read at all — neither notes nor
//!   settings nor templates. The watcher and the poller drop these (they must still pass
//!   `vaultdm.toml`, the temporal index and the vault's minijinja templates).
//! - [`Scope::is_note`]: by the path, the vault's template folders and vaultdm's session
//!   logs, the notes. The walk and the live reload keep exactly these.
//! - [`leads_outside`]: on disk, a path whose real place is outside the vault. The walk, the
//!   poller and the live reload do not follow it.
//!
//! Template folders are found the way Obsidian knows them — the core Templates plugin's
//! `.obsidian/templates.json` (`"folder"`) and Templater's
//! `.obsidian/plugins/templater-obsidian/data.json` (`"templates_folder"`), when the folder
//! they name exists (they often name one that no longer does) — plus any folder whose name is
//! `templates` once numbering and sort prefixes are stripped (`z_Templates`, `_templates`,
//! `97. Templates`, `Assets/Templates`), plus `[folders] templates = [...]` in `vaultdm.toml`.

use super::boundary;
use crate::names::folder_word;
use std::path::Path;

/// The rule for one vault.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    /// Template folders: vault-relative, `/`-separated, lower case, no trailing `/`.
    templates: Vec<String>,
    /// Each template folder as written, with why it is one (for `check` and `init --adopt`).
    pub template_folders: Vec<TemplateFolder>,
    /// The vault, to tell vaultdm's transcripts from a GM's session notes (none in tests).
    root: Option<std::path::PathBuf>,
}

/// A folder whose notes are templates, not canon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateFolder {
    /// Vault-relative path as written.
    pub path: String,
    /// Where vaultdm learned it: `.obsidian/templates.json`, Templater's settings,
    /// `vaultdm.toml`, or its name.
    pub why: &'static str,
}

/// Where vaultdm writes readable transcripts, relative to the vault (with the `/`).
const TRANSCRIPTS: &str = "sessions/";
/// Where vaultdm keeps its session logs, relative to the vault.
const SESSION_LOGS: &str = ".vaultdm/sessions";

/// Largest Obsidian settings file read.
const MAX_SETTINGS_BYTES: u64 = 1024 * 1024;

fn json_string(root: &Path, rel: &str, key: &str) -> Option<String> {
    let text = boundary::read_text_inside(root, Path::new(rel), MAX_SETTINGS_BYTES).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let s = v.get(key)?.as_str()?.trim().trim_matches('/').to_string();
    (!s.is_empty()).then_some(s)
}

/// True for file names that editors, office suites and sync tools write while saving:
/// swap, backup, lock and temporary files (vim's `.note.md.swp`, `note.md~` and `4913`,
/// emacs's `.#note.md` and `#note.md#`, JetBrains' `___jb_tmp___`, Office's `~$`, `.tmp`).
pub(crate) fn is_temp_name(name: &str) -> bool {
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
    // JetBrains' names searched for only where they can be (a substring search is set up
    // anew per call); `.tmp.` is a part between two dots.
    let jetbrains = || n.contains("___jb_tmp___") || n.contains("___jb_old___");
    let tmp_part = n
        .split_once('.')
        .and_then(|(_, rest)| rest.rsplit_once('.'))
        .is_some_and(|(inner, _)| inner.split('.').any(|part| part == "tmp"));
    if (n.contains('_') && jetbrains()) || tmp_part {
        return true;
    }
    let ext = n.rsplit_once('.').map_or("", |(_, e)| e);
    let swap = ext.len() == 3 && ext.starts_with("sw") && ext.as_bytes()[2].is_ascii_lowercase();
    swap || matches!(
        ext,
        "tmp" | "temp" | "bak" | "part" | "partial" | "crdownload" | "crswap" | "kate-swp" | "swpx"
    )
}

/// True for a vault-relative path (`/`-separated) inside, or naming, a folder the vault
/// never reads: hidden folders (`.obsidian/`, `.trash/`, `.vaultdm/`, `.git/`) and backup
/// folders (`name~`).
pub(crate) fn is_skipped_folder(rel: &str) -> bool {
    // Asked of every file a walk meets: a part starting with `.` or ending with `~` is
    // found in one pass over the bytes, not by cutting the path into parts.
    let b = rel.as_bytes();
    b.first() == Some(&b'.')
        || b.last() == Some(&b'~')
        || b.windows(2)
            .any(|w| (w[0] == b'/' && w[1] == b'.') || (w[0] == b'~' && w[1] == b'/'))
}

/// True for a vault-relative path that is never read, whatever it is: anything in a
/// skipped folder ([`is_skipped_folder`]) and editors' temporary files ([`is_temp_name`]).
pub(crate) fn is_noise(rel: &str) -> bool {
    let last = rel.rsplit('/').find(|s| !s.is_empty()).unwrap_or("");
    is_skipped_folder(rel) || is_temp_name(last)
}

/// True for a Markdown file name (`.md`, any case).
pub(crate) fn is_markdown(rel: &str) -> bool {
    let b = rel.as_bytes();
    b.len() >= 3 && b[b.len() - 3..].eq_ignore_ascii_case(b".md")
}

/// True when `abs` exists and its real place (every link on the way followed) is outside
/// the vault whose real path is `canon_root`: a link leading out, never followed.
pub(crate) fn leads_outside(canon_root: &Path, abs: &Path) -> bool {
    abs.canonicalize()
        .is_ok_and(|real| !real.starts_with(canon_root))
}

/// True for a folder name that means "templates" (`Templates`, `z_Templates`, `_template`).
pub(crate) fn is_template_folder_name(seg: &str) -> bool {
    // Every such name holds `templat` in ASCII letters (no other character lower-cases to
    // one of them), so most folders are passed over without making their word.
    let has_templat = seg
        .as_bytes()
        .windows(7)
        .any(|w| w.eq_ignore_ascii_case(b"templat"));
    has_templat
        && matches!(
            folder_word(seg).as_str(),
            "templates" | "template" | "templater" | "templater templates"
        )
}

/// `path` is the folder `dir` or inside it (both `/`-separated, compared as they are).
fn is_at_or_under(path: &str, dir: &str) -> bool {
    path.strip_prefix(dir)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

impl Scope {
    /// Finds the template folders of the vault at `root`; `configured` are the folders named
    /// in `vaultdm.toml` (`[folders] templates`).
    pub fn detect(root: &Path, configured: &[String]) -> Scope {
        let mut s = Scope {
            root: Some(root.to_path_buf()),
            ..Scope::default()
        };
        let add = |path: String, why: &'static str, s: &mut Scope| {
            let key = path.trim_matches('/').to_lowercase();
            if key.is_empty() || s.templates.contains(&key) {
                return;
            }
            s.templates.push(key);
            s.template_folders.push(TemplateFolder { path, why });
        };
        for c in configured {
            add(c.trim_matches('/').to_string(), "vaultdm.toml", &mut s);
        }
        for (file, key, why) in [
            (
                ".obsidian/templates.json",
                "folder",
                ".obsidian/templates.json",
            ),
            (
                ".obsidian/plugins/templater-obsidian/data.json",
                "templates_folder",
                "Templater's settings",
            ),
        ] {
            if let Some(folder) = json_string(root, file, key) {
                // A folder that is gone is a stale setting, not a template folder.
                if boundary::check_inside(root, Path::new(&folder)).is_ok_and(|p| p.is_dir()) {
                    add(folder, why, &mut s);
                }
            }
        }
        s
    }

    /// A scope with only the named template folders (for tests and tools).
    pub fn with_templates(folders: &[&str]) -> Scope {
        let mut s = Scope::default();
        for f in folders {
            s.templates.push(f.trim_matches('/').to_lowercase());
            s.template_folders.push(TemplateFolder {
                path: f.to_string(),
                why: "vaultdm.toml",
            });
        }
        s
    }

    /// True when the vault-relative path lies in a template folder: one the vault's settings
    /// name, or any folder named like `templates`.
    pub fn is_template(&self, rel: &str) -> bool {
        // Asked of every file a walk meets: nothing is allocated unless the vault has
        // template folders to compare with.
        if !self.templates.is_empty() {
            let lower = rel.to_lowercase();
            if self.templates.iter().any(|t| is_at_or_under(&lower, t)) {
                return true;
            }
        }
        rel.rsplit_once('/')
            .is_some_and(|(folders, _)| folders.split('/').any(is_template_folder_name))
    }

    /// True when the vault-relative path is a note, by its path: a `.md` file that is not
    /// [noise](is_noise) and not in a template folder. See the module docs.
    pub fn is_note(&self, rel: &str) -> bool {
        is_markdown(rel) && !is_noise(rel) && !self.is_template(rel) && !self.is_transcript(rel)
    }

    /// True for a transcript vaultdm writes: `sessions/<name>.md` (or its memory note
    /// `<name>.memory.md`) at the vault root, beside a session log
    /// `.vaultdm/sessions/<name>.jsonl`. Everything else in `sessions/` — a GM's own session
    /// notes — is a note. Asked on disk each time: a session started after the walk is one.
    pub fn is_transcript(&self, rel: &str) -> bool {
        let Some(root) = &self.root else {
            return false;
        };
        let Some(file) = rel.trim_start_matches('/').strip_prefix(TRANSCRIPTS) else {
            return false;
        };
        let Some(stem) = file.strip_suffix(".md").filter(|s| !s.contains('/')) else {
            return false;
        };
        let name = stem.strip_suffix(".memory").unwrap_or(stem);
        !name.is_empty()
            && root
                .join(SESSION_LOGS)
                .join(format!("{name}.jsonl"))
                .symlink_metadata()
                .is_ok_and(|m| m.is_file())
    }

    /// Records a template folder found by its name during a walk (for `check`'s info line).
    pub(super) fn note_named_template(&mut self, rel_dir: &str) {
        let key = rel_dir.to_lowercase();
        if !self.templates.iter().any(|t| is_at_or_under(&key, t)) {
            self.templates.push(key);
            self.template_folders.push(TemplateFolder {
                path: rel_dir.to_string(),
                why: "its name",
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The one-pass check is the plain one: a non-empty part starts with `.` or ends
        /// with `~`.
        #[test]
        fn skipped_folder_is_the_definition(rel in "[/.~as]{0,12}|(/?sessions)?[/.~a]{0,8}") {
            let plain = rel
                .split('/')
                .filter(|s| !s.is_empty())
                .any(|s| s.starts_with('.') || s.ends_with('~'));
            proptest::prop_assert_eq!(is_skipped_folder(&rel), plain);
        }
    }
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
    #[case("sessions/2026-01-01.jsonl", false)]
    #[case("heist/sessions/s1.md", false)]
    #[case("drafts~/x.md", true)]
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
    #[case("canon/npcs/ida..tmp..md", true)]
    #[case("canon/npcs/tmp.md", false)]
    #[case("canon/npcs/a.tmpl.md", false)]
    #[case("canon/npcs/ida.md___jb_tmp___", true)]
    #[case("canon/npcs/~$ida.docx", true)]
    #[case("canon/npcs/ida.md.bak", true)]
    #[case("canon/npcs/day 2.md", false)]
    #[case("canon/npcs/2024.md", false)]
    fn noise(#[case] rel: &str, #[case] want: bool) {
        assert_eq!(is_noise(rel), want, "{rel}");
    }

    #[rstest]
    #[case("canon/npcs/a.md", true)]
    #[case("heist/sessions/s1.md", true)]
    #[case("Sessions/s1.md", true)]
    #[case("sessions/2026.md", true)]
    #[case(".obsidian/x.md", false)]
    #[case("notes/.trash/x.md", false)]
    #[case("notes/x.txt", false)]
    #[case("notes/X.MD", true)]
    #[case("notes/x.md~", false)]
    #[case("notes/~$x.md", false)]
    #[case("Templates/npc.md", false)]
    #[case("vaultdm.toml", false)]
    fn notes(#[case] rel: &str, #[case] want: bool) {
        assert_eq!(Scope::default().is_note(rel), want, "{rel}");
    }

    #[rstest]
    #[case("z_Templates/NPC.md", true)]
    #[case("Assets/Templates/Character.md", true)]
    #[case("97. Templates/x.md", true)]
    #[case("_templates/x.md", true)]
    #[case("Zeke Prep Content/Templates/Session.md", true)]
    #[case("notes/templates.md", false)]
    #[case("canon/npcs/templar.md", false)]
    #[case("Characters/Template Knight.md", false)]
    fn template_folders_by_name(#[case] rel: &str, #[case] want: bool) {
        assert_eq!(Scope::default().is_template(rel), want, "{rel}");
    }

    /// vaultdm's transcripts (beside a session log) are not notes; a GM's session notes in
    /// the same `sessions/` folder are, and so is a note in a deeper folder of that name.
    #[test]
    fn transcripts_are_not_notes_session_notes_are() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path();
        for (rel, text) in [
            (".vaultdm/sessions/heist.jsonl", "{}\n"),
            ("sessions/heist.md", "# Session heist\n"),
            ("sessions/heist.memory.md", "# memory\n"),
            ("sessions/Session 33 - Nyema.md", "# Session 33\n"),
            ("sessions/old/heist.md", "# Old\n"),
        ] {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap_or(root)).unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(&p, text).unwrap_or_else(|e| panic!("{e}"));
        }
        let s = Scope::detect(root, &[]);
        assert!(!s.is_note("sessions/heist.md"));
        assert!(!s.is_note("sessions/heist.memory.md"));
        assert!(s.is_note("sessions/Session 33 - Nyema.md"));
        assert!(s.is_note("sessions/old/heist.md"));
        assert!(s.is_note("Sessions/heist.md") || cfg!(target_os = "macos"));
        // A session started after the scope was made: its transcript is known at once.
        std::fs::write(
            root.join(".vaultdm/sessions/Session 33 - Nyema.jsonl"),
            "{}\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(!s.is_note("sessions/Session 33 - Nyema.md"));
    }

    #[test]
    fn obsidian_settings_name_template_folders_that_exist() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path();
        std::fs::create_dir_all(root.join(".obsidian/plugins/templater-obsidian"))
            .unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(root.join("Misc/Blueprints")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(
            root.join(".obsidian/templates.json"),
            r#"{"folder": "Misc/Blueprints"}"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(
            root.join(".obsidian/plugins/templater-obsidian/data.json"),
            r#"{"templates_folder": "Gone/Stuff", "trigger_on_file_creation": true}"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let s = Scope::detect(root, &["Stencils".into()]);
        assert!(s.is_template("Misc/Blueprints/NPC.md"));
        assert!(s.is_template("stencils/x.md"));
        assert!(!s.is_template("Gone/Stuff/x.md"), "a stale setting");
        assert!(!s.is_note("Misc/Blueprints/NPC.md"));
        assert!(s.is_note("Characters/Ezra.md"));
        let why: Vec<_> = s.template_folders.iter().map(|t| t.why).collect();
        assert_eq!(why, ["vaultdm.toml", ".obsidian/templates.json"]);
    }
}
