//! Diagnostics: every problem found in a vault, mapped back to a file and line.
//!
//! Nothing the reader finds wrong is dropped silently: each problem becomes a
//! [`Diagnostic`] and the rest of the vault keeps loading.

use serde::Serialize;
use std::fmt;

/// How bad a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; nothing is wrong with the canon.
    Info,
    /// Something is probably not what the GM meant; canon still builds.
    Warning,
    /// A part of the note could not be read; `check` exits 1.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// What kind of problem a diagnostic is: a short stable code (`yaml-syntax`), listed with
/// its meaning in docs/commands.md (a test holds the two together).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Code {
    /// `ambiguous-link`
    AmbiguousLink,
    /// `ambiguous-location`
    AmbiguousLocation,
    /// `bad-value`
    BadValue,
    /// `binary`
    Binary,
    /// `config`
    Config,
    /// `duplicate-key`
    DuplicateKey,
    /// `duplicate-name`
    DuplicateName,
    /// `empty-note`
    EmptyNote,
    /// `event-no-day`
    EventNoDay,
    /// `frontmatter-not-mapping`
    FrontmatterNotMapping,
    /// `frontmatter-too-complex`
    FrontmatterTooComplex,
    /// `no-current-day`
    NoCurrentDay,
    /// `no-location`
    NoLocation,
    /// `no-notes`
    NoNotes,
    /// `no-temporal-index`
    NoTemporalIndex,
    /// `no-threads`
    NoThreads,
    /// `no-timeline`
    NoTimeline,
    /// `timeline-choice`
    TimelineChoice,
    /// `no-voice`
    NoVoice,
    /// `no-party`
    NoParty,
    /// `kind-doubt`
    KindDoubt,
    /// `title-differs`
    TitleDiffers,
    /// `not-a-location`
    NotALocation,
    /// `not-utf8`
    NotUtf8,
    /// `note-fixed`
    NoteFixed,
    /// `outside-vault`
    OutsideVault,
    /// `leftover-temp`
    LeftoverTemp,
    /// `parent-loop`
    ParentLoop,
    /// `secret-in-vault`
    SecretInVault,
    /// `shared-alias`
    SharedAlias,
    /// `stale-note`
    StaleNote,
    /// `template`
    Template,
    /// `template-fixed`
    TemplateFixed,
    /// `templater`
    Templater,
    /// `templates`
    Templates,
    /// `temporal-index`
    TemporalIndex,
    /// `thread-no-priority`
    ThreadNoPriority,
    /// `timeline-future`
    TimelineFuture,
    /// `too-large`
    TooLarge,
    /// `unclosed-frontmatter`
    UnclosedFrontmatter,
    /// `unknown-location`
    UnknownLocation,
    /// `unreadable`
    Unreadable,
    /// `unresolved-link`
    UnresolvedLink,
    /// `vault-moved`
    VaultMoved,
    /// `walk`
    Walk,
    /// `yaml-syntax`
    YamlSyntax,
}

impl Code {
    /// Every code.
    pub const ALL: [Code; 46] = [
        Code::DuplicateName,
        Code::SharedAlias,
        Code::AmbiguousLink,
        Code::AmbiguousLocation,
        Code::BadValue,
        Code::Binary,
        Code::Config,
        Code::DuplicateKey,
        Code::EmptyNote,
        Code::EventNoDay,
        Code::FrontmatterNotMapping,
        Code::FrontmatterTooComplex,
        Code::NoCurrentDay,
        Code::NoLocation,
        Code::NoNotes,
        Code::NoTemporalIndex,
        Code::NoThreads,
        Code::NoTimeline,
        Code::TimelineChoice,
        Code::NoVoice,
        Code::NoParty,
        Code::KindDoubt,
        Code::TitleDiffers,
        Code::NotALocation,
        Code::NotUtf8,
        Code::NoteFixed,
        Code::OutsideVault,
        Code::LeftoverTemp,
        Code::ParentLoop,
        Code::SecretInVault,
        Code::StaleNote,
        Code::Template,
        Code::TemplateFixed,
        Code::Templater,
        Code::Templates,
        Code::TemporalIndex,
        Code::ThreadNoPriority,
        Code::TimelineFuture,
        Code::TooLarge,
        Code::UnclosedFrontmatter,
        Code::UnknownLocation,
        Code::Unreadable,
        Code::UnresolvedLink,
        Code::VaultMoved,
        Code::Walk,
        Code::YamlSyntax,
    ];

    /// The code as `check` prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::AmbiguousLink => "ambiguous-link",
            Code::AmbiguousLocation => "ambiguous-location",
            Code::BadValue => "bad-value",
            Code::Binary => "binary",
            Code::Config => "config",
            Code::DuplicateKey => "duplicate-key",
            Code::DuplicateName => "duplicate-name",
            Code::EmptyNote => "empty-note",
            Code::EventNoDay => "event-no-day",
            Code::FrontmatterNotMapping => "frontmatter-not-mapping",
            Code::FrontmatterTooComplex => "frontmatter-too-complex",
            Code::NoCurrentDay => "no-current-day",
            Code::NoLocation => "no-location",
            Code::NoNotes => "no-notes",
            Code::NoTemporalIndex => "no-temporal-index",
            Code::NoThreads => "no-threads",
            Code::NoTimeline => "no-timeline",
            Code::TimelineChoice => "timeline-choice",
            Code::NoVoice => "no-voice",
            Code::NoParty => "no-party",
            Code::KindDoubt => "kind-doubt",
            Code::TitleDiffers => "title-differs",
            Code::NotALocation => "not-a-location",
            Code::NotUtf8 => "not-utf8",
            Code::NoteFixed => "note-fixed",
            Code::OutsideVault => "outside-vault",
            Code::LeftoverTemp => "leftover-temp",
            Code::ParentLoop => "parent-loop",
            Code::SecretInVault => "secret-in-vault",
            Code::SharedAlias => "shared-alias",
            Code::StaleNote => "stale-note",
            Code::Template => "template",
            Code::TemplateFixed => "template-fixed",
            Code::Templater => "templater",
            Code::Templates => "templates",
            Code::TemporalIndex => "temporal-index",
            Code::ThreadNoPriority => "thread-no-priority",
            Code::TimelineFuture => "timeline-future",
            Code::TooLarge => "too-large",
            Code::UnclosedFrontmatter => "unclosed-frontmatter",
            Code::UnknownLocation => "unknown-location",
            Code::Unreadable => "unreadable",
            Code::UnresolvedLink => "unresolved-link",
            Code::VaultMoved => "vault-moved",
            Code::Walk => "walk",
            Code::YamlSyntax => "yaml-syntax",
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Codes sort as their text does, so `check` output keeps its order.
impl PartialOrd for Code {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Code {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl PartialEq<&str> for Code {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// One problem in one file, at one line.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Diagnostic {
    /// Path relative to the vault root, with `/` separators.
    pub path: String,
    /// 1-based line in the file (0 when the problem concerns the whole file).
    pub line: usize,
    /// How bad it is.
    pub severity: Severity,
    /// A short stable code, e.g. `yaml-syntax` or `unresolved-link`.
    pub code: Code,
    /// A message a GM understands.
    pub message: String,
}

impl Diagnostic {
    /// An error diagnostic.
    pub fn error(path: &str, line: usize, code: Code, message: impl Into<String>) -> Self {
        Self::new(path, line, Severity::Error, code, message)
    }

    /// A warning diagnostic.
    pub fn warning(path: &str, line: usize, code: Code, message: impl Into<String>) -> Self {
        Self::new(path, line, Severity::Warning, code, message)
    }

    /// A diagnostic of any severity.
    pub fn new(
        path: &str,
        line: usize,
        severity: Severity,
        code: Code,
        message: impl Into<String>,
    ) -> Self {
        Self {
            path: path.to_string(),
            line,
            severity,
            code,
            message: message.into(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}[{}]: {}",
            self.path, self.line, self.severity, self.code, self.message
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// docs/commands.md lists every code, and no code that does not exist.
    #[test]
    fn every_code_is_documented() {
        let docs = include_str!("../../docs/commands.md");
        let table = docs
            .split("### Diagnostic codes")
            .nth(1)
            .and_then(|t| t.split("\n\n").nth(1))
            .unwrap_or_default();
        let documented: BTreeSet<&str> = table
            .lines()
            .filter_map(|l| l.strip_prefix("| "))
            .filter_map(|l| l.split(" |").next())
            .flat_map(|cell| cell.split(", "))
            .filter_map(|c| c.strip_prefix('`')?.strip_suffix('`'))
            .collect();
        let codes: BTreeSet<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(
            codes.difference(&documented).collect::<Vec<_>>(),
            Vec::<&&str>::new(),
            "codes missing from docs/commands.md"
        );
        assert_eq!(
            documented.difference(&codes).collect::<Vec<_>>(),
            Vec::<&&str>::new(),
            "docs/commands.md lists codes that do not exist"
        );
        assert_eq!(
            codes.len(),
            Code::ALL.len(),
            "a code is listed twice in ALL"
        );
    }
}
