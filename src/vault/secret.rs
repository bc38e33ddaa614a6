//! What in a note is for the GM only: the one home of the rule.
//!
//! GMs keep secrets in the same notes as canon, and mark them in a handful of ways, all
//! recognised here:
//!
//! - **a section** headed `## Secrets`, `## Secrets and Clues` (the Lazy DM habit),
//!   `# GM Notes`, `## DM Only`, `## Spoilers`… ([`SecretRules::heading`]), with its
//!   subsections;
//! - **a callout** `> [!secret]`, `> [!gm]`, `> [!dm]`, `> [!spoiler]`, `> [!hidden]`,
//!   `> [!private]`, and the same as an Admonition (```` ```ad-secret ````);
//! - **an Obsidian comment** `%% … %%` (hidden in reading view) with words in it, when the
//!   vault says so (`[secrets] comments = true`): by default a comment is nobody's — GMs
//!   keep undecided ideas there ("not canon yet") — and never reaches any context;
//! - **a field** `secret:`, `secrets:`, `gm_notes:`, `dm_notes:`, `gm_only:` … in the
//!   frontmatter or as a Dataview inline field (`secret:: …`);
//! - **a whole note**: `secret: true` (or `gm_only: true`, `visibility: gm`), a tag such
//!   as `#secret` or `#gm-only`, or a place in a folder named `GM/`, `DM Only/`,
//!   `Secrets/`…
//!
//! Timeline entries dated after the current day are the GM's plan; canon knows the day, so
//! that rule lives with the timeline (`context/plan.rs`), not here.
//!
//! A vault adds its own markers in `vaultdm.toml`'s `[secrets]` (headings, callouts,
//! fields, tags, folders; `comments = false` if its `%%` comments are not secrets);
//! `vaultdm check --explain-secrets` lists what is GM-only and why.

use super::markdown::{Block, Body};
use super::yaml::Value;
use super::Note;

/// Section headings that mark what follows as the GM's (compared lower-case, a trailing
/// `:` and emoji ignored).
pub(crate) const HEADINGS: &[&str] = &[
    "secret",
    "secrets",
    "secrets and clues",
    "secrets & clues",
    "clues and secrets",
    "gm notes",
    "dm notes",
    "gm note",
    "dm note",
    "gm only",
    "dm only",
    "gm info",
    "dm info",
    "gm secrets",
    "dm secrets",
    "notes for the gm",
    "notes for the dm",
    "for the gm",
    "for the dm",
    "spoilers",
    "spoiler",
    "hidden",
    "hidden agenda",
    "true nature",
    "behind the scenes",
];

/// Callout (and Admonition) types that hold what the players must not hear.
pub(crate) const CALLOUTS: &[&str] = &[
    "secret", "secrets", "gm", "dm", "spoiler", "hidden", "private", "gm-only", "dm-only",
];

/// Fields whose text is the GM's (frontmatter or inline); `true` on one marks the whole
/// note.
pub(crate) const FIELDS: &[&str] = &[
    "secret",
    "secrets",
    "gm_notes",
    "dm_notes",
    "gm_note",
    "dm_note",
    "gm_only",
    "dm_only",
    "gm_secret",
    "dm_secret",
    "hidden",
];

/// Tags that mark a whole note as the GM's (lower case, without `#`; a nested tag such as
/// `#status/secret` counts by its last part).
pub(crate) const TAGS: &[&str] = &[
    "secret", "gm-only", "dm-only", "gm_only", "dm_only", "spoiler",
];

/// Folders whose notes are the GM's (a path part, compared lower-case).
pub(crate) const FOLDERS: &[&str] = &[
    "gm", "dm", "gm only", "dm only", "gm-only", "dm-only", "gm notes", "dm notes", "secrets",
    "_gm", "_dm",
];

/// Fewest words a `%% comment %%` needs to be a secret (shorter ones are the GM's plumbing:
/// `%% todo %%`, `%% fix %%`).
const COMMENT_WORDS: usize = 3;

/// Why a piece of text is the GM's.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(tag = "kind", content = "what", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Why {
    /// In a section with this heading.
    Section(String),
    /// In a callout of this type.
    Callout(String),
    /// In a `%% comment %%`.
    Comment,
    /// The value of this field.
    Field(String),
    /// The whole note: this field says so (`secret: true`).
    NoteField(String),
    /// The whole note: it has this tag.
    Tag(String),
    /// The whole note: it is in this folder.
    Folder(String),
    /// A timeline entry after the current day (the GM's plan).
    AfterToday(i64),
}

impl std::fmt::Display for Why {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Why::Section(h) => write!(f, "in the section \"{h}\""),
            Why::Callout(t) => write!(f, "in a [!{t}] callout"),
            Why::Comment => write!(f, "in a %% comment %%"),
            Why::Field(k) => write!(f, "the field `{k}`"),
            Why::NoteField(k) => write!(f, "the whole note (`{k}` marks it)"),
            Why::Tag(t) => write!(f, "the whole note (tagged #{t})"),
            Why::Folder(d) => write!(f, "the whole note (in the folder {d}/)"),
            Why::AfterToday(d) => write!(f, "dated Day {d}, after today (the GM's plan)"),
        }
    }
}

/// One piece of GM-only text in a note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretText {
    /// The text, as written (canon cleans it).
    pub text: String,
    /// 1-based file line.
    pub line: usize,
    /// Why it is the GM's.
    pub why: Why,
}

/// What of a note is the GM's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NoteSecrets {
    /// The whole note is the GM's, and why.
    pub whole: Option<Why>,
    /// Its GM-only pieces.
    pub texts: Vec<SecretText>,
}

/// Most paragraphs of a note the GM keeps whole that the DM is given (a GM's campaign
/// bible in `GM/` would otherwise fill the context; its first paragraphs say what it is).
pub(crate) const WHOLE_BLOCKS: usize = 12;

/// About how many characters of a note the GM keeps whole the DM is given (some 400
/// tokens): the block that crosses it is the last.
pub(crate) const WHOLE_CHARS: usize = 1_600;

/// The markers a vault uses: the built-in ones plus its `[secrets]` settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretRules {
    headings: Vec<String>,
    callouts: Vec<String>,
    fields: Vec<String>,
    tags: Vec<String>,
    folders: Vec<String>,
    comments: bool,
}

impl Default for SecretRules {
    fn default() -> Self {
        let own = |l: &[&str]| l.iter().map(|s| (*s).to_string()).collect();
        SecretRules {
            headings: own(HEADINGS),
            callouts: own(CALLOUTS),
            fields: own(FIELDS),
            tags: own(TAGS),
            folders: own(FOLDERS),
            comments: false,
        }
    }
}

/// Lower case, a trailing `:` and leading/trailing emoji and punctuation trimmed.
fn fold(s: &str) -> String {
    s.trim()
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

impl SecretRules {
    /// The built-in markers and a vault's own (`[secrets]` in `vaultdm.toml`): headings,
    /// callout types, field names, tags and folders, added to the built-in ones; `comments`
    /// false when the vault's `%% comments %%` are not secrets.
    pub fn with(
        headings: &[String],
        callouts: &[String],
        fields: &[String],
        tags: &[String],
        folders: &[String],
        comments: bool,
    ) -> SecretRules {
        let mut r = SecretRules::default();
        let add = |to: &mut Vec<String>, more: &[String], f: &dyn Fn(&str) -> String| {
            for m in more {
                let m = f(m);
                if !m.is_empty() && !to.contains(&m) {
                    to.push(m);
                }
            }
        };
        add(&mut r.headings, headings, &fold);
        add(&mut r.callouts, callouts, &|s: &str| {
            s.trim()
                .trim_start_matches("[!")
                .trim_end_matches(']')
                .to_lowercase()
        });
        add(&mut r.fields, fields, &|s: &str| {
            s.trim().to_lowercase().replace(' ', "_")
        });
        add(&mut r.tags, tags, &|s: &str| {
            s.trim().trim_start_matches('#').to_lowercase()
        });
        add(&mut r.folders, folders, &|s: &str| {
            s.trim().trim_matches('/').to_lowercase()
        });
        r.comments = comments;
        r
    }

    /// Whether a section heading marks its text as the GM's.
    pub fn heading(&self, h: &str) -> bool {
        let h = fold(h);
        self.headings.contains(&h)
    }

    /// Whether a callout type (lower case, as the parser gives it) is the GM's.
    pub fn callout(&self, kind: &str) -> bool {
        let k = kind.strip_prefix("ad-").unwrap_or(kind);
        self.callouts.iter().any(|x| x == k)
    }

    /// Whether a field (a frontmatter key, lower case) holds the GM's text.
    pub fn field(&self, key: &str) -> bool {
        let k = key.trim().to_lowercase().replace([' ', '-'], "_");
        self.fields.contains(&k)
    }

    /// Whether `%% comments %%` are secrets in this vault.
    pub fn comments(&self) -> bool {
        self.comments
    }

    /// The folder of `path` (vault-relative, `/`-separated) that makes a note the GM's.
    pub fn folder<'p>(&self, path: &'p str) -> Option<&'p str> {
        let mut parts: Vec<&str> = path.split('/').collect();
        parts.pop();
        parts.into_iter().find(|p| {
            let f = p
                .trim()
                .trim_start_matches(|c: char| {
                    c.is_ascii_digit() || c == '.' || c == '-' || c == '_' || c == ' '
                })
                .to_lowercase();
            let plain = p.trim().to_lowercase();
            self.folders.iter().any(|x| *x == f || *x == plain)
        })
    }

    /// The tag that makes a note the GM's, if it has one.
    pub fn tag<'t>(&self, tags: impl IntoIterator<Item = &'t str>) -> Option<&'t str> {
        tags.into_iter().find(|t| {
            let last = t.rsplit('/').next().unwrap_or(t);
            self.tags.iter().any(|x| x == t || x == last)
        })
    }

    /// For each section of a body, the secret heading it is under (its own or an
    /// enclosing section's), if any.
    pub fn sections(&self, body: &Body) -> Vec<Option<Why>> {
        // The enclosing headings, by level: a secret one marks everything under it.
        let mut open: Vec<(u8, Option<Why>)> = Vec::new();
        body.sections
            .iter()
            .map(|s| {
                while open.last().is_some_and(|(l, _)| *l >= s.level) {
                    open.pop();
                }
                let own = s
                    .heading
                    .as_deref()
                    .filter(|h| self.heading(h))
                    .map(|h| Why::Section(h.trim().to_string()));
                let why = own.or_else(|| open.last().and_then(|(_, w)| w.clone()));
                if s.level > 0 {
                    open.push((s.level, why.clone()));
                }
                why
            })
            .collect()
    }

    /// Whether a block is the GM's, given its body's [`SecretRules::sections`]: in a secret
    /// callout, or in a secret section. Returns why.
    pub fn block(&self, sections: &[Option<Why>], b: &Block) -> Option<Why> {
        if let Some(kind) = b.callout.as_deref().filter(|k| self.callout(k)) {
            return Some(Why::Callout(kind.to_string()));
        }
        sections.get(b.section as usize).cloned().flatten()
    }

    /// The indexes of a body's GM-only blocks.
    pub fn blocks(&self, body: &Body) -> Vec<usize> {
        let any_callout = body.blocks.iter().any(|b| b.callout.is_some());
        let sections = self.sections(body);
        if !any_callout && sections.iter().all(Option::is_none) {
            return Vec::new();
        }
        (0..body.blocks.len())
            .filter(|&i| {
                let b = &body.blocks[i];
                !matches!(b.kind, super::markdown::BlockKind::Heading(_))
                    && self.block(&sections, b).is_some()
            })
            .collect()
    }

    /// The blocks a note the GM keeps whole gives the DM: its first paragraphs and list
    /// items with words, in file order, up to [`WHOLE_BLOCKS`] of them and about
    /// [`WHOLE_CHARS`] characters (headings and bare link lines are not said).
    pub fn whole_blocks(body: &Body) -> Vec<usize> {
        let mut chars = 0;
        (0..body.blocks.len())
            .filter(|&i| {
                let b = &body.blocks[i];
                b.prose
                    && !matches!(b.kind, super::markdown::BlockKind::Heading(_))
                    && !b.text.trim().is_empty()
            })
            .take(WHOLE_BLOCKS)
            .take_while(|&i| {
                let before = chars;
                chars += body.blocks[i].text.len();
                before < WHOLE_CHARS
            })
            .collect()
    }

    /// Whether the whole note is the GM's: a field (`secret: true`), a tag or a folder.
    pub fn whole(&self, note: &Note) -> Option<Why> {
        for (key, value) in note.frontmatter.iter() {
            if self.field(key) && is_true(value) {
                return Some(Why::NoteField(key.to_string()));
            }
            if matches!(key, "visibility" | "audience" | "access")
                && value_is(
                    value,
                    &[
                        "gm", "dm", "gm only", "dm only", "gm-only", "dm-only", "secret",
                        "private", "hidden",
                    ],
                )
            {
                return Some(Why::NoteField(key.to_string()));
            }
        }
        if let Some(t) = self.tag(note.tags.iter().map(|t| t.as_str())) {
            return Some(Why::Tag(t.to_string()));
        }
        self.folder(&note.path).map(|f| Why::Folder(f.to_string()))
    }

    /// What of a note is the GM's (see the module docs). The body must still hold its
    /// secret blocks: canon reads them before it sheds what it does not keep.
    pub fn of(&self, note: &Note) -> NoteSecrets {
        let mut texts = Vec::new();
        // Blocks of a secret section or callout, a list item's nested items joined to it.
        let body = &note.body;
        let sections = self.sections(body);
        let mut last_why: Option<(Why, u32)> = None;
        for b in &body.blocks {
            if matches!(b.kind, super::markdown::BlockKind::Heading(_)) {
                last_why = None;
                continue;
            }
            let Some(why) = self.block(&sections, b) else {
                last_why = None;
                continue;
            };
            let text = b.text.trim();
            if text.is_empty() || text.starts_with("[!") && !text.contains(char::is_whitespace) {
                continue;
            }
            let owned;
            let first_of_callout = b.callout.is_some()
                && !matches!(&last_why, Some((w, s)) if *w == why && *s == b.section);
            let text = match callout_body(text, first_of_callout) {
                Some(t) => {
                    owned = t;
                    owned.as_str()
                }
                None => text,
            };
            // A callout's paragraphs are one secret.
            if let (Some((w, section)), Some(prev)) = (&last_why, texts.last_mut()) {
                if *w == why && *section == b.section && matches!(why, Why::Callout(_)) {
                    let prev: &mut SecretText = prev;
                    prev.text.push(' ');
                    prev.text.push_str(text);
                    continue;
                }
            }
            if !text.is_empty() {
                texts.push(SecretText {
                    text: text.to_string(),
                    line: b.line as usize,
                    why: why.clone(),
                });
            }
            last_why = Some((why, b.section));
        }
        if self.comments {
            for c in &body.comments {
                if c.text.split_whitespace().count() >= COMMENT_WORDS && !is_plumbing(&c.text) {
                    texts.push(SecretText {
                        text: c.text.trim().to_string(),
                        line: c.line as usize,
                        why: Why::Comment,
                    });
                }
            }
        }
        for (key, value) in note.frontmatter.iter() {
            if !self.field(key) || is_true(value) || is_false(value) {
                continue;
            }
            let line = note.frontmatter.line_of(key);
            for text in super::frontmatter::value_list(value) {
                let text = text.trim();
                if !text.is_empty() {
                    texts.push(SecretText {
                        text: text.to_string(),
                        line,
                        why: Why::Field(key.to_string()),
                    });
                }
            }
        }
        texts.sort_by_key(|t| t.line);
        NoteSecrets {
            whole: self.whole(note),
            texts,
        }
    }
}

/// A callout's first block without its `[!type]` marker; a title on the marker's line
/// becomes `Title: ` before the body (`[!secret] The lost report` / `Vane paid him…`).
fn callout_body(text: &str, first: bool) -> Option<String> {
    let rest = match text.strip_prefix("[!") {
        Some(rest) => {
            let close = rest.find(']')?;
            rest[close + 1..].trim_start_matches(['-', '+'])
        }
        // The parser took the marker: a short first line of the first block is the title.
        None if first => {
            let (title, _) = text.split_once('\n')?;
            let title = title.trim();
            if title.chars().count() > 60 || title.ends_with(['.', '!', '?']) {
                return None;
            }
            text
        }
        None => return None,
    };
    let (title, body) = match rest.split_once('\n') {
        Some((t, b)) => (t.trim(), b.trim()),
        None => ("", rest.trim()),
    };
    Some(match (title.is_empty(), body.is_empty()) {
        (true, _) => body.to_string(),
        (false, true) => title.to_string(),
        (false, false) if title.ends_with(['.', ':', '!', '?']) => format!("{title} {body}"),
        (false, false) => format!("{title}: {body}"),
    })
}

/// A comment that is the vault's machinery, not a note to the GM: a Dataview or Templater
/// query kept out of sight (`%% LIST FROM #npc WHERE location = this.file.link %%`).
fn is_plumbing(text: &str) -> bool {
    let t = text.trim();
    let first = t
        .trim_start_matches("Dataview:")
        .split_whitespace()
        .next()
        .unwrap_or("");
    matches!(
        first,
        "LIST" | "TABLE" | "TASK" | "CALENDAR" | "dataview" | "dataviewjs"
    ) || t.contains("this.file")
        || t.contains("<%")
        || t.contains("dv.")
        || t.starts_with('[') && t.ends_with(']') && !t.contains(' ')
}

fn is_true(v: &Value) -> bool {
    match v {
        Value::Bool(b) => *b,
        Value::String(s) => matches!(s.trim().to_lowercase().as_str(), "true" | "yes"),
        _ => false,
    }
}

fn is_false(v: &Value) -> bool {
    match v {
        Value::Bool(b) => !*b,
        Value::Null => true,
        Value::String(s) => matches!(s.trim().to_lowercase().as_str(), "false" | "no" | ""),
        _ => false,
    }
}

fn value_is(v: &Value, any: &[&str]) -> bool {
    match v {
        Value::String(s) => any.contains(&s.trim().to_lowercase().as_str()),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn secrets(path: &str, text: &str, rules: &SecretRules) -> NoteSecrets {
        rules.of(&Note::parse(path, text.as_bytes()))
    }

    #[test]
    fn a_whole_notes_blocks_stop_at_the_count_or_the_characters() {
        let short: String = (1..=20)
            .map(|i| format!("Paragraph {i} says a little.\n\n"))
            .collect();
        let note = Note::parse("GM/bible.md", format!("# Bible\n\n{short}").as_bytes());
        let blocks = SecretRules::whole_blocks(&note.body);
        assert_eq!(blocks.len(), WHOLE_BLOCKS);
        assert!(note.body.blocks[blocks[0]].text.starts_with("Paragraph 1 "));
        let long: String = (1..=6)
            .map(|i| format!("{i} {}\n\n", "word ".repeat(100)))
            .collect();
        let note = Note::parse("GM/bible.md", format!("# Bible\n\n{long}").as_bytes());
        let blocks = SecretRules::whole_blocks(&note.body);
        // 500 characters a paragraph: the fourth crosses 1,600 and is the last.
        assert_eq!(blocks.len(), 4);
    }

    fn with_comments() -> SecretRules {
        SecretRules::with(&[], &[], &[], &[], &[], true)
    }

    #[rstest]
    #[case::section(
        "# Vane\nPublic.\n\n## Secrets\nHe sells the ore east.\n",
        "He sells the ore east.",
        Why::Section("Secrets".into())
    )]
    #[case::lazy_dm(
        "# Prep\n\n## Secrets and Clues\n- The ledger is green.\n",
        "The ledger is green.",
        Why::Section("Secrets and Clues".into())
    )]
    #[case::subsection_of_gm_notes(
        "# Mill\nA mill.\n\n# GM Notes\n## Traps\nThe third stair is rotten.\n",
        "The third stair is rotten.",
        Why::Section("GM Notes".into())
    )]
    #[case::callout_with_title(
        "# Crake\nThe deputy.\n\n> [!secret] The lost report\n> Vane paid him.\n",
        "The lost report: Vane paid him.",
        Why::Callout("secret".into())
    )]
    #[case::gm_callout(
        "# Crake\nThe deputy.\n\n> [!gm]\n> He drinks on duty.\n",
        "He drinks on duty.",
        Why::Callout("gm".into())
    )]
    #[case::comment(
        "# Sump\nDark water.\n\n%% The cavern opens on Day 7. %%\n",
        "The cavern opens on Day 7.",
        Why::Comment
    )]
    #[case::field(
        "---\nsecret: He sold the strike date.\n---\n# Jonah\nPlays piano.\n",
        "He sold the strike date.",
        Why::Field("secret".into())
    )]
    #[case::inline_field(
        "# Jonah\nPlays piano.\n\ngm_notes:: Owes Vane money.\n",
        "Owes Vane money.",
        Why::Field("gm_notes".into())
    )]
    fn each_form_is_read_with_why(#[case] text: &str, #[case] want: &str, #[case] why: Why) {
        let found = secrets("n.md", text, &with_comments());
        assert!(
            found.texts.iter().any(|t| t.text == want && t.why == why),
            "{found:#?}"
        );
        assert!(found.whole.is_none());
    }

    #[rstest]
    #[case::field("secret-folder/n.md", "---\ngm_only: true\n---\n# Wren\n", Why::NoteField("gm_only".into()))]
    #[case::visibility("n.md", "---\nvisibility: GM\n---\n# Wren\n", Why::NoteField("visibility".into()))]
    #[case::tag("n.md", "---\ntags: [lore, secret]\n---\n# Moon\n", Why::Tag("secret".into()))]
    #[case::nested_tag("n.md", "# Moon\n#status/secret\n", Why::Tag("status/secret".into()))]
    #[case::folder("DM Only/Masked Man.md", "# The Masked Man\n", Why::Folder("DM Only".into()))]
    #[case::numbered_folder("99. GM/Plot.md", "# Plot\n", Why::Folder("99. GM".into()))]
    fn whole_notes(#[case] path: &str, #[case] text: &str, #[case] why: Why) {
        assert_eq!(
            secrets(path, text, &SecretRules::default()).whole,
            Some(why)
        );
    }

    #[test]
    fn ordinary_notes_and_plumbing_are_not_secrets() {
        let text = "---\nsecret: false\n---\n# Inn\nA warm inn.\n\n## Personality\n- Loud.\n\n> [!note]\n> Open late.\n\n%% LIST FROM #npc WHERE location = this.file.link %%\n%% todo %%\n";
        let found = secrets("Places/Inn.md", text, &with_comments());
        assert_eq!(found, NoteSecrets::default());
        // Comments reach the DM only when the vault says so.
        let found = secrets(
            "n.md",
            "# A\n%% The well is dry, truly. %%\n",
            &SecretRules::default(),
        );
        assert!(found.texts.is_empty(), "{found:?}");
    }

    #[test]
    fn a_vaults_own_markers_add_to_the_built_in_ones() {
        let rules = SecretRules::with(
            &["Behind the Curtain".into()],
            &["[!twist]".into()],
            &["True Name".into()],
            &["#prep".into()],
            &["Campaign Secrets/".into()],
            false,
        );
        let text = "---\ntrue_name: Aldric Vesk\n---\n# Crane\nMayor.\n\n## Behind the Curtain\nA deserter.\n\n> [!twist]\n> He is the bandit's paymaster.\n\n## Secrets\nStill read.\n";
        let found = secrets("n.md", text, &rules);
        let texts: Vec<&str> = found.texts.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "Aldric Vesk",
                "A deserter.",
                "He is the bandit's paymaster.",
                "Still read."
            ]
        );
        assert!(rules
            .whole(&Note::parse("Campaign Secrets/x.md", b"# X\n"))
            .is_some());
        assert!(rules.whole(&Note::parse("x.md", b"# X\n#prep\n")).is_some());
    }
}
