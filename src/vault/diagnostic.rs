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
    pub code: &'static str,
    /// A message a GM understands.
    pub message: String,
}

impl Diagnostic {
    /// An error diagnostic.
    pub fn error(path: &str, line: usize, code: &'static str, message: impl Into<String>) -> Self {
        Self::new(path, line, Severity::Error, code, message)
    }

    /// A warning diagnostic.
    pub fn warning(
        path: &str,
        line: usize,
        code: &'static str,
        message: impl Into<String>,
    ) -> Self {
        Self::new(path, line, Severity::Warning, code, message)
    }

    /// A diagnostic of any severity.
    pub fn new(
        path: &str,
        line: usize,
        severity: Severity,
        code: &'static str,
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
