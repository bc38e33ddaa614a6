//! `vaultdm.toml`: the vault's own settings (campaign name, context defaults, folders,
//! template folder, LLM defaults). A missing file means defaults; a broken one is a
//! diagnostic at its line, and defaults are used for what could not be read.

use crate::vault::boundary::{self, BoundaryError};
use crate::vault::Code;
use crate::vault::Diagnostic;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The file name of the vault configuration.
pub const CONFIG_FILE: &str = "vaultdm.toml";

/// The token budget a context gets when the vault sets none (`[context] budget`).
pub const DEFAULT_BUDGET: usize = 4000;

/// Largest `vaultdm.toml` read (a settings file is a few hundred bytes).
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// Context defaults (`[context]`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ContextConfig {
    /// Most present-but-unmentioned NPCs shown in a full context.
    pub npc_cap: usize,
    /// Token budget for the injected block (default
    /// [`DEFAULT_BUDGET`]; 0 = no budget, only when the vault asks).
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
            budget: DEFAULT_BUDGET,
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
    /// Folders holding thread (quest) notes.
    pub threads: Vec<String>,
    /// Folders holding session notes (recaps, logs, prep): context for memory, never
    /// entities.
    pub sessions: Vec<String>,
    /// Template folders: their notes are not canon (in addition to the ones Obsidian's
    /// settings and folder names show).
    pub templates: Vec<String>,
}

/// What happens to the canon changes the DM proposes (`[write] review`).
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Review {
    /// Shown after the reply; the GM accepts all, some or none (the default).
    #[default]
    Ask,
    /// Valid proposals are applied at once and what changed is printed.
    Auto,
    /// The DM is not asked for proposals and any it makes are ignored.
    Off,
}

/// What write-back does with an HP outside its bounds: above the max, or below minus the
/// max (`[write] hp_bounds`).
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum HpBounds {
    /// Not written; the reason names the max (the default).
    #[default]
    Refuse,
    /// Written, and the reply flags it.
    Flag,
}

/// Write-back settings (`[write]`).
#[derive(Debug, Clone, Deserialize, PartialEq, Default)]
#[serde(default, deny_unknown_fields)]
pub struct WriteConfig {
    /// `ask` (default), `auto` or `off`.
    pub review: Review,
    /// `refuse` (default) or `flag`: HP above the max or below minus the max.
    pub hp_bounds: HpBounds,
}

/// Long-session memory settings (`[memory]`); docs/memory.md explains each.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryConfig {
    /// After each exchange, ask the provider (a small separate call) for the moments and
    /// coined terms of the exchange, on top of the heuristics (default: off — it is one more
    /// request per message).
    pub extract: bool,
    /// The model for that call (default: the DM's model).
    pub extract_model: Option<String>,
    /// Let the provider write the cold summary ("Previously") when the hot history fills
    /// (default: on; a call every few exchanges once a session is long).
    pub summarise: bool,
    /// Percent of a total prompt budget (after the system prompt and the message) for the
    /// canon context.
    pub canon_share: usize,
    /// ... for the cold summary.
    pub previously_share: usize,
    /// ... for the glossary.
    pub glossary_share: usize,
    /// ... for the story so far.
    pub story_share: usize,
    /// ... for recalled passages.
    pub recalled_share: usize,
    /// Tokens for the cold summary without a total budget.
    pub previously_tokens: usize,
    /// Tokens for the glossary without a total budget.
    pub glossary_tokens: usize,
    /// Tokens for the story so far without a total budget.
    pub story_tokens: usize,
    /// Tokens for recalled passages without a total budget.
    pub recalled_tokens: usize,
    /// Moments kept (the most significant).
    pub moments_kept: usize,
    /// Moments shown with a message (the most related).
    pub moments_shown: usize,
    /// Every how many messages the dormant-threads line rides along (0: never).
    pub callbacks_every: usize,
    /// Exchanges without a mention after which an NPC or thread is dormant.
    pub callbacks_quiet: usize,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        Self {
            extract: false,
            extract_model: None,
            summarise: true,
            canon_share: 30,
            previously_share: 10,
            glossary_share: 8,
            story_share: 4,
            recalled_share: 20,
            previously_tokens: 500,
            glossary_tokens: 400,
            story_tokens: 300,
            recalled_tokens: 1200,
            moments_kept: 15,
            moments_shown: 5,
            callbacks_every: 10,
            callbacks_quiet: 30,
        }
    }
}

impl MemoryConfig {
    /// The shares as percentages that leave at least a quarter for the hot history (a
    /// vault asking for more is scaled down).
    pub fn percentages(&self) -> [usize; 5] {
        let v = [
            self.canon_share,
            self.previously_share,
            self.glossary_share,
            self.story_share,
            self.recalled_share,
        ];
        let sum: usize = v.iter().sum();
        if sum <= 75 {
            v
        } else {
            v.map(|x| x * 75 / sum)
        }
    }
}

/// A vault's own GM-only markers (`[secrets]`), added to the built-in ones
/// ([`crate::vault::secret`]; docs/secrets.md).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct SecretsConfig {
    /// Section headings whose text is the GM's (`"Plot Hooks"`).
    pub headings: Vec<String>,
    /// Callout types (`"gm-eyes-only"` for `> [!gm-eyes-only]`).
    pub callouts: Vec<String>,
    /// Frontmatter or inline fields (`"twist"`).
    pub fields: Vec<String>,
    /// Tags that make a whole note the GM's (`"prep"`).
    pub tags: Vec<String>,
    /// Folders whose notes are the GM's (`"Campaign Secrets"`).
    pub folders: Vec<String>,
    /// Whether `%% comments %%` with words in them go to the DM as secrets (default false:
    /// GMs keep undecided ideas there, "not canon yet"; hidden from everyone either way).
    pub comments: bool,
    /// The rules, built once.
    #[serde(skip)]
    rules: std::sync::OnceLock<crate::vault::secret::SecretRules>,
}

impl Default for SecretsConfig {
    fn default() -> Self {
        SecretsConfig {
            headings: Vec::new(),
            callouts: Vec::new(),
            fields: Vec::new(),
            tags: Vec::new(),
            folders: Vec::new(),
            comments: false,
            rules: std::sync::OnceLock::new(),
        }
    }
}

impl SecretsConfig {
    /// The built-in markers with this vault's.
    pub fn rules(&self) -> &crate::vault::secret::SecretRules {
        self.rules.get_or_init(|| {
            crate::vault::secret::SecretRules::with(
                &self.headings,
                &self.callouts,
                &self.fields,
                &self.tags,
                &self.folders,
                self.comments,
            )
        })
    }
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
    /// The party in play when the vault has several groups of PCs (a party note's name or a
    /// folder's name).
    pub party: Option<String>,
    /// Context defaults.
    pub context: ContextConfig,
    /// Extra type folders.
    pub folders: FolderConfig,
    /// Write-back settings.
    pub write: WriteConfig,
    /// Long-session memory settings.
    pub memory: MemoryConfig,
    /// GM-only markers.
    pub secrets: SecretsConfig,
    /// The `[llm]` table, read by `llm::settings`.
    pub llm: Option<toml::Table>,
}

impl Config {
    /// Loads `vaultdm.toml` from the vault root. Missing: defaults, no diagnostic. A file
    /// that is a link out of the vault is not read (defaults, and an error saying why), and
    /// a `templates` folder outside the vault is refused.
    pub fn load(root: &Path) -> (Config, Vec<Diagnostic>) {
        let text = match boundary::read_text_inside(root, Path::new(CONFIG_FILE), MAX_CONFIG_BYTES)
        {
            Ok(t) => t,
            Err(e) if e.is_not_found() => return (Config::default(), vec![]),
            Err(e) => {
                let msg = match e {
                    BoundaryError::Outside { .. } | BoundaryError::TooLarge { .. } => {
                        format!("{e}; defaults were used")
                    }
                    other => format!("could not read: {other}; defaults were used"),
                };
                return (
                    Config::default(),
                    vec![Diagnostic::error(CONFIG_FILE, 0, Code::Config, msg)],
                );
            }
        };
        let (mut config, mut diags) = Self::parse(&text);
        if let Some(t) = config.templates.clone() {
            if let Err(BoundaryError::Outside { target, .. }) =
                boundary::check_inside(root, Path::new(&t))
            {
                diags.push(Diagnostic::error(
                    CONFIG_FILE,
                    line_of_key(&text, "templates"),
                    Code::Config,
                    format!("templates = \"{t}\" leads outside the vault (to {target}); vaultdm never reads templates from outside it, so the built-in templates are used"),
                ));
                config.templates = None;
            }
        }
        (config, diags)
    }

    /// The vault's template folder, if `templates` names one (relative to `root`).
    pub fn templates_dir(&self, root: &Path) -> Option<PathBuf> {
        self.templates.as_ref().map(|t| root.join(t))
    }

    /// Parses the text of a `vaultdm.toml`. Forgiving, key by key: a key that is unknown
    /// or has a wrong value is a diagnostic at its line and is ignored, and every other
    /// setting — the rest of its table included — is used. Only a file that is not TOML at
    /// all falls back to defaults (keeping `name` and `setting` where they can be read).
    pub fn parse(text: &str) -> (Config, Vec<Diagnostic>) {
        let mut table = match toml::from_str::<toml::Table>(text) {
            Ok(t) => t,
            Err(e) => {
                let line = e.span().map_or(0, |s| {
                    text[..s.start.min(text.len())].matches('\n').count() + 1
                });
                let msg = format!("{}; defaults were used", e.message());
                return (
                    Config::default(),
                    vec![Diagnostic::error(CONFIG_FILE, line, Code::Config, msg)],
                );
            }
        };
        let mut d = vec![];
        // `templates` written under `[context]` (the line sat below a commented-out table
        // header when it was uncommented) means the top-level setting.
        if let Some(toml::Value::Table(ctx)) = table.get_mut("context") {
            if !ctx.contains_key("templates") {
            } else if let Some(v) = ctx.remove("templates") {
                let line = line_in_section(text, "context", "templates");
                if table.contains_key("templates") {
                    d.push(Diagnostic::warning(CONFIG_FILE, line, Code::Config, "`templates` is a top-level setting, not a [context] key; this one is ignored (the one above [context] is used)"));
                } else {
                    d.push(Diagnostic::warning(CONFIG_FILE, line, Code::Config, "`templates` is a top-level setting: move the line above the first [table]; it was read as if it were there"));
                    table.insert("templates".into(), v);
                }
            }
        }
        let mut c = Config {
            context: section(&mut table, "context", text, &mut d),
            folders: section(&mut table, "folders", text, &mut d),
            write: section(&mut table, "write", text, &mut d),
            memory: section(&mut table, "memory", text, &mut d),
            secrets: section(&mut table, "secrets", text, &mut d),
            ..Config::default()
        };
        for (k, v) in table {
            let line = line_of_key(text, &k);
            let wrong = |what: &str| {
                Diagnostic::error(
                    CONFIG_FILE,
                    line,
                    Code::Config,
                    format!("`{k}` must be {what}; it was ignored"),
                )
            };
            match (k.as_str(), v) {
                ("name", toml::Value::String(s)) => c.name = Some(s),
                ("setting", toml::Value::String(s)) => c.setting = Some(s),
                ("templates", toml::Value::String(s)) => c.templates = Some(s),
                ("party", toml::Value::String(s)) => c.party = Some(s),
                ("llm", toml::Value::Table(t)) => c.llm = Some(t),
                ("name" | "setting" | "templates" | "party", _) => d.push(wrong("a string")),
                ("llm", _) => d.push(wrong("a table ([llm])")),
                _ => d.push(Diagnostic::warning(
                    CONFIG_FILE,
                    line,
                    Code::Config,
                    format!("unknown setting `{k}` (ignored); the settings are name, setting, templates, party and the tables [context], [folders], [write], [memory], [secrets], [llm]"),
                )),
            }
        }
        if let Some(llm) = &c.llm {
            for (k, v) in llm {
                let value = v.as_str().unwrap_or("");
                let named_secret = matches!(k.as_str(), "api_key" | "key" | "token");
                if named_secret || crate::secrets::looks_like_secret(value) {
                    let what = if k == "api_key_env" {
                        "holds what looks like an API key itself, not the name of the variable holding it".to_string()
                    } else {
                        "holds a secret".to_string()
                    };
                    d.push(Diagnostic::error(
                        CONFIG_FILE,
                        line_of_key(text, k),
                        Code::SecretInVault,
                        format!("[llm] {k} {what}: keys never belong in the vault (it is synced and shared) — remove it, export the key in your shell and set api_key_env = \"OPENAI_API_KEY\" (the variable's name)"),
                    ));
                } else if k == "api_key_env"
                    && !value.is_empty()
                    && !crate::secrets::is_var_name(value)
                {
                    d.push(Diagnostic::error(
                        CONFIG_FILE,
                        line_of_key(text, k),
                        Code::Config,
                        "[llm] api_key_env must be the name of an environment variable (letters, digits and _), e.g. \"OPENAI_API_KEY\"",
                    ));
                }
            }
        }
        d.sort_by_key(|d| d.line);
        (c, d)
    }
}

/// One settings table (`[context]`, …) taken out of `table` and read key by key: a key its
/// type refuses (unknown, or a wrong value) is a diagnostic at its line and is left out;
/// the table's other keys are used.
fn section<T: serde::de::DeserializeOwned + Default>(
    table: &mut toml::Table,
    name: &str,
    text: &str,
    d: &mut Vec<Diagnostic>,
) -> T {
    let Some(value) = table.remove(name) else {
        return T::default();
    };
    let toml::Value::Table(keys) = value else {
        d.push(Diagnostic::error(
            CONFIG_FILE,
            line_of_key(text, name),
            Code::Config,
            format!("`{name}` must be a table ([{name}]); its defaults were used"),
        ));
        return T::default();
    };
    let mut good = toml::Table::new();
    for (k, v) in keys {
        let one: toml::Table = std::iter::once((k.clone(), v.clone())).collect();
        match T::deserialize(one) {
            Ok(_) => {
                good.insert(k, v);
            }
            Err(e) => d.push(Diagnostic::error(
                CONFIG_FILE,
                line_in_section(text, name, &k),
                Code::Config,
                format!(
                    "[{name}] {}; this key was ignored, the rest of [{name}] is used",
                    e.message().trim_end()
                ),
            )),
        }
    }
    T::deserialize(good).unwrap_or_default()
}

/// The line of `key = …` inside `[section]` (1-based; 0 when not found).
fn line_in_section(text: &str, section: &str, key: &str) -> usize {
    let header = format!("[{section}]");
    let mut inside = false;
    for (i, l) in text.lines().enumerate() {
        let t = l.trim_start();
        if t.starts_with('[') {
            inside = t.starts_with(&header);
        } else if inside && t.starts_with(key) && t[key.len()..].trim_start().starts_with('=') {
            return i + 1;
        }
    }
    line_of_key(text, key)
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
    fn one_bad_key_keeps_the_rest_of_its_table() {
        let (c, d) = Config::parse(
            "name = \"X\"\n[context]\nnpc_cap = 3\nrecent_evnts = 9\nbudget = \"lots\"\nrecent_events = 7\n[write]\nreview = \"auto\"\n",
        );
        assert_eq!(c.context.npc_cap, 3);
        assert_eq!(c.context.recent_events, 7);
        assert_eq!(c.context.budget, ContextConfig::default().budget);
        assert_eq!(c.write.review, Review::Auto);
        let lines: Vec<usize> = d.iter().map(|d| d.line).collect();
        assert_eq!(lines, vec![4, 5], "{d:?}");
        assert!(d[0].message.contains("recent_evnts"), "{}", d[0].message);
    }

    /// `init` wrote `# templates = …` below a commented `# [folders]`: uncommented, it sits
    /// in `[context]`. It is read as the top-level setting and `[context]` is kept.
    #[test]
    fn templates_uncommented_under_context_is_read_and_context_kept() {
        let text = "[context]\nnpc_cap = 2\n\n# [folders]\n# pcs = [\"party\"]\n\ntemplates = \"templates\"\n";
        let (c, d) = Config::parse(text);
        assert_eq!(c.templates.as_deref(), Some("templates"));
        assert_eq!(c.context.npc_cap, 2);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].line, 7);
        assert!(d[0].message.contains("top-level"), "{}", d[0].message);
    }

    /// The file `init` writes (vault-template's), with each commented setting uncommented
    /// (a commented table with its lines, or a lone line), is read without a diagnostic and
    /// without losing a table.
    #[test]
    fn each_commented_setting_of_the_template_config_uncomments_cleanly() {
        let text = include_str!("../vault-template/vaultdm.toml");
        let lines: Vec<&str> = text.lines().collect();
        fn setting(l: &str) -> Option<&str> {
            l.strip_prefix("# ").filter(|c| {
                c.starts_with('[')
                    || c.split_once('=')
                        .is_some_and(|(k, _)| !k.trim().contains(' '))
            })
        }
        let mut tried = 0;
        let mut i = 0;
        while i < lines.len() {
            let Some(code) = setting(lines[i]) else {
                i += 1;
                continue;
            };
            let mut edited = lines.clone();
            edited[i] = code;
            let mut j = i + 1;
            if code.starts_with('[') {
                while let Some(c) = lines.get(j).and_then(|l| setting(l)) {
                    edited[j] = c;
                    j += 1;
                }
            }
            let (c, d) = Config::parse(&edited.join("\n"));
            assert!(d.is_empty(), "uncommenting line {}: {d:?}", i + 1);
            assert_eq!(c.context.npc_cap, 5, "line {}", i + 1);
            tried += 1;
            i = j;
        }
        assert!(tried >= 3, "{tried}");
    }

    #[test]
    fn secret_refused() {
        let (_, d) = Config::parse("[llm]\napi_key = \"sk-x\"\n");
        assert_eq!(d[0].code, "secret-in-vault");
        assert!(!d[0].message.contains("sk-x"));
    }

    #[test]
    fn key_pasted_as_the_variable_name_is_refused_unseen() {
        let key = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z";
        let (_, d) = Config::parse(&format!("[llm]\nmodel = \"m\"\napi_key_env = \"{key}\"\n"));
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!((d[0].code, d[0].line), (Code::SecretInVault, 3));
        assert!(!d[0].message.contains("Ab3dEf6"), "{}", d[0].message);
        let (_, d) = Config::parse("[llm]\napi_key_env = \"my key\"\n");
        assert_eq!(d[0].code, "config");
    }
}
