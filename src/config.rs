//! `vaultdm.toml`: the vault's own settings (campaign name, context defaults, folders,
//! template folder, LLM defaults). A missing file means defaults; a broken one is a
//! diagnostic at its line, and defaults are used for what could not be read.

use crate::vault::Diagnostic;
use serde::Deserialize;
use std::path::Path;

/// The file name of the vault configuration.
pub const CONFIG_FILE: &str = "vaultdm.toml";

/// Context defaults (`[context]`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ContextConfig {
    /// Most present-but-unmentioned NPCs shown in a full context.
    pub npc_cap: usize,
    /// Default token budget for the injected block (0 = no budget).
    pub budget: usize,
    /// How many recent timeline events a full context shows.
    pub recent_events: usize,
    /// More canon changes than this between two messages send a new full context.
    pub full_context_after_changes: usize,
}

impl Default for ContextConfig {
    fn default() -> Self {
        Self {
            npc_cap: 5,
            budget: 0,
            recent_events: 5,
            full_context_after_changes: 8,
        }
    }
}

/// Extra folder names that mark a note's type (`[folders]`).
#[derive(Debug, Clone, Deserialize, PartialEq, Default)]
#[serde(default, deny_unknown_fields)]
pub struct FolderConfig {
    /// Folders holding player characters.
    pub pcs: Vec<String>,
    /// Folders holding NPCs.
    pub npcs: Vec<String>,
    /// Folders holding locations.
    pub locations: Vec<String>,
    /// Folders holding thread notes.
    pub threads: Vec<String>,
}

/// The whole `vaultdm.toml`.
#[derive(Debug, Clone, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct Config {
    /// Campaign name (default: the vault folder's name, title-cased).
    pub name: Option<String>,
    /// One setting line shown under the header.
    pub setting: Option<String>,
    /// Folder (relative to the vault) of minijinja templates overriding the defaults.
    pub templates: Option<String>,
    /// Context defaults.
    pub context: ContextConfig,
    /// Extra type folders.
    pub folders: FolderConfig,
    /// The `[llm]` table, read by `llm::settings`.
    pub llm: Option<toml::Table>,
}

impl Config {
    /// Loads `vaultdm.toml` from the vault root. Missing: defaults, no diagnostic.
    pub fn load(root: &Path) -> (Config, Vec<Diagnostic>) {
        let path = root.join(CONFIG_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return (Config::default(), vec![])
            }
            Err(e) => {
                return (
                    Config::default(),
                    vec![Diagnostic::error(
                        CONFIG_FILE,
                        0,
                        "config",
                        format!("could not read: {e}"),
                    )],
                )
            }
        };
        Self::parse(&text)
    }

    /// Parses the text of a `vaultdm.toml`.
    pub fn parse(text: &str) -> (Config, Vec<Diagnostic>) {
        match toml::from_str::<Config>(text) {
            Ok(c) => {
                let mut d = vec![];
                if let Some(llm) = &c.llm {
                    for k in ["api_key", "key", "token"] {
                        if llm.contains_key(k) {
                            d.push(Diagnostic::error(
                                CONFIG_FILE,
                                line_of_key(text, k),
                                "secret-in-vault",
                                format!("[llm] {k} holds a secret: keys never belong in the vault; set api_key_env = \"OPENAI_API_KEY\" and export the key instead"),
                            ));
                        }
                    }
                }
                (c, d)
            }
            Err(e) => {
                let line = e.span().map_or(0, |s| {
                    text[..s.start.min(text.len())].matches('\n').count() + 1
                });
                let msg = e.message().to_string();
                // Keep what can be read: fall back to the loose table for name/setting.
                let mut c = Config::default();
                if let Ok(t) = toml::from_str::<toml::Table>(text) {
                    c.name = t.get("name").and_then(|v| v.as_str()).map(String::from);
                    c.setting = t.get("setting").and_then(|v| v.as_str()).map(String::from);
                }
                (
                    c,
                    vec![Diagnostic::error(
                        CONFIG_FILE,
                        line,
                        "config",
                        format!("{msg}; defaults were used"),
                    )],
                )
            }
        }
    }
}

fn line_of_key(text: &str, key: &str) -> usize {
    text.lines()
        .position(|l| l.trim_start().starts_with(key) && l.contains('='))
        .map_or(0, |i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_values() {
        let (c, d) = Config::parse("name = \"X\"\n[context]\nnpc_cap = 3\n");
        assert!(d.is_empty());
        assert_eq!(c.name.as_deref(), Some("X"));
        assert_eq!(c.context.npc_cap, 3);
        assert_eq!(c.context.recent_events, 5);
    }

    #[test]
    fn bad_value_has_line() {
        let (c, d) = Config::parse("name = \"X\"\n[context]\nnpc_cap = \"five\"\n");
        assert_eq!(d[0].line, 3);
        assert_eq!(c.name.as_deref(), Some("X"));
        assert_eq!(c.context.npc_cap, 5);
    }

    #[test]
    fn secret_refused() {
        let (_, d) = Config::parse("[llm]\napi_key = \"sk-x\"\n");
        assert_eq!(d[0].code, "secret-in-vault");
        assert!(!d[0].message.contains("sk-x"));
    }
}
