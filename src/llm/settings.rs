//! Effective LLM settings, each with the place it came from.
//!
//! A GM configures vaultdm in layers, and must be able to see which layer won — so every
//! resolved value is a [`Setting`] carrying its [`Source`], printable by `vaultdm config`
//! with the key masked. Precedence, highest first:
//!
//! 1. command-line flags ([`LlmFlags`]);
//! 2. environment: `VAULTDM_PROVIDER`, `VAULTDM_MODEL`, `VAULTDM_BASE_URL`, then
//!    `OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL` for the chosen provider; the key is read from
//!    the variable named by `api_key_env` (default `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`);
//! 3. the vault's `vaultdm.toml`, table `[llm]`;
//! 4. the user's `~/.config/vaultdm/config.toml` (see [`user_config_path`]), table `[llm]`;
//! 5. defaults, and inference: with no provider named, a base URL means OpenAI-compatible,
//!    `ANTHROPIC_API_KEY` alone means Anthropic, `OPENAI_API_KEY` means OpenAI.
//!
//! `[llm]` keys: `provider`, `model`, `base_url`, `api_key_env`, `max_tokens`,
//! `history_budget`, `connect_timeout`, `first_token_timeout`, `idle_timeout` (seconds),
//! `max_retries`, and the reply caps `reply_max_tokens`, `reply_max_chars` and
//! `reply_deadline` (seconds; defaults from [`ReplyLimits::for_max_tokens`]). Keys themselves are only ever read from the environment: a vault is synced
//! and shared, so an `api_key` in a config file is refused with an error saying to use an
//! environment variable. The environment is injected as a lookup function and the files as
//! parsed tables, so resolution is pure and testable.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{ApiKey, LlmConfig, LlmError, ProviderKind, ReplyLimits, RetryPolicy, Timeouts};

/// Default history budget in tokens.
pub(crate) const DEFAULT_HISTORY_BUDGET: usize = 8000;
/// Model used with OpenAI's own endpoint when none is configured.
pub(crate) const DEFAULT_OPENAI_MODEL: &str = "gpt-4o-mini";
/// Model used with Anthropic's own endpoint when none is configured.
pub(crate) const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";

/// Where a setting's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Source {
    /// A command-line flag.
    Flag,
    /// The named environment variable.
    Env(String),
    /// The vault's `vaultdm.toml`.
    VaultFile,
    /// The user's config file.
    UserFile,
    /// Built-in default.
    Default,
    /// Inferred from other settings; the text says from what.
    Inferred(String),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Flag => f.write_str("flag"),
            Source::Env(var) => write!(f, "env ${var}"),
            Source::VaultFile => f.write_str("vault vaultdm.toml"),
            Source::UserFile => f.write_str("user config"),
            Source::Default => f.write_str("default"),
            Source::Inferred(why) => write!(f, "inferred ({why})"),
        }
    }
}

/// A value and its provenance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Setting<T> {
    /// The effective value.
    pub value: T,
    /// Where it came from.
    pub source: Source,
}

impl<T> Setting<T> {
    fn new(value: T, source: Source) -> Self {
        Self { value, source }
    }

    /// The same provenance for a converted value.
    fn map<U>(self, f: impl FnOnce(T) -> U) -> Setting<U> {
        Setting::new(f(self.value), self.source)
    }
}

/// LLM-related command-line flags (all optional). Keys are deliberately not a flag: shell
/// history and process lists would leak them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct LlmFlags {
    /// `--provider`.
    pub provider: Option<String>,
    /// `--model`.
    pub model: Option<String>,
    /// `--base-url`.
    pub base_url: Option<String>,
    /// `--api-key-env`: the variable to read the key from.
    pub api_key_env: Option<String>,
    /// `--max-tokens`.
    pub max_tokens: Option<u32>,
    /// `--history-budget`.
    pub history_budget: Option<usize>,
}

/// The inputs of resolution.
#[derive(Clone, Copy)]
pub(crate) struct SettingsSources<'a> {
    /// Parsed flags.
    pub flags: &'a LlmFlags,
    /// Environment lookup (e.g. `&|k| std::env::var(k).ok()`); empty values count as unset.
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// The vault's `[llm]` table (`crate::config::Config::llm`), or the whole parsed
    /// `vaultdm.toml` holding one.
    pub vault: Option<&'a toml::Table>,
    /// The user config's `[llm]` table, or the whole parsed file (as returned by
    /// [`load_config_file`]).
    pub user: Option<&'a toml::Table>,
}

/// A configuration file problem.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum SettingsError {
    /// An API key was written into a config file.
    #[error("{file} contains an API key (`{key}` in [llm]); keys must not live in config files — remove it and export it instead, e.g. `export OPENAI_API_KEY=...`, or set `api_key_env = \"MY_KEY_VAR\"`")]
    KeyInConfig {
        /// Which file ("vault vaultdm.toml" or "user config").
        file: Source,
        /// The offending key name (the value is never shown).
        key: String,
    },
    /// A value of the wrong type or out of range.
    #[error("{file}: [llm] {key} must be {expected}")]
    InvalidValue {
        /// Where the value came from.
        file: Source,
        /// The key.
        key: String,
        /// What was expected.
        expected: &'static str,
    },
    /// An unknown provider name.
    #[error("{source_}: {error}")]
    UnknownProvider {
        /// Where the name came from.
        source_: Source,
        /// The parse error (names the value and the valid choices).
        error: super::UnknownProvider,
    },
    /// `api_key_env` holds a key (or something else that cannot name a variable); the value
    /// is never shown.
    #[error("{source_}: api_key_env {problem}: it must be the NAME of the environment variable that holds the key, e.g. --api-key-env OPENAI_API_KEY after `export OPENAI_API_KEY=...`")]
    BadKeyVariable {
        /// Where the value came from.
        source_: Source,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// `$VAULTDM_CONFIG` names a file that does not exist.
    #[error("$VAULTDM_CONFIG names {}, which does not exist: fix the path, or unset VAULTDM_CONFIG to use ~/.config/vaultdm/config.toml", path.display())]
    MissingUserConfig {
        /// The file named.
        path: PathBuf,
    },
    /// A config file could not be read.
    #[error("could not read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A config file is not valid TOML.
    #[error("{} is not valid TOML: {source}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The TOML error (with line and column).
        #[source]
        source: toml::de::Error,
    },
}

/// The resolved settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LlmSettings {
    /// Wire protocol; `None` when nothing configures or implies one.
    pub provider: Option<Setting<ProviderKind>>,
    /// Base URL (`None` only without a provider).
    pub base_url: Option<Setting<String>>,
    /// Model name.
    pub model: Option<Setting<String>>,
    /// Variable the key is read from.
    pub api_key_env: Option<Setting<String>>,
    /// The key, if that variable is set.
    pub api_key: Option<Setting<ApiKey>>,
    /// Reply length cap.
    pub max_tokens: Setting<u32>,
    /// History token budget for [`super::prompt`].
    pub history_budget: Setting<usize>,
    /// Connect timeout.
    pub connect_timeout: Setting<Duration>,
    /// First-token timeout.
    pub first_token_timeout: Setting<Duration>,
    /// Idle timeout.
    pub idle_timeout: Setting<Duration>,
    /// Retries for 429/5xx.
    pub max_retries: Setting<u32>,
    /// Most tokens kept from one reply.
    pub reply_max_tokens: Setting<usize>,
    /// Most characters kept from one reply.
    pub reply_max_chars: Setting<usize>,
    /// Longest one reply may take.
    pub reply_deadline: Setting<Duration>,
    /// Non-fatal oddities (unknown keys, ambiguous keys) to show the GM.
    pub warnings: Vec<String>,
}

/// One line of `vaultdm config` output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SettingRow {
    /// Setting name as in `[llm]`.
    pub name: &'static str,
    /// Display value (keys masked; `(not set)` when absent).
    pub value: String,
    /// Where it came from (`-` when absent).
    pub source: String,
}

/// The user config file: `$VAULTDM_CONFIG` if set, else
/// `$XDG_CONFIG_HOME/vaultdm/config.toml`, else `$HOME/.config/vaultdm/config.toml`.
pub(crate) fn user_config_path(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let get = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    if let Some(p) = get("VAULTDM_CONFIG") {
        return Some(PathBuf::from(p));
    }
    if let Some(x) = get("XDG_CONFIG_HOME") {
        return Some(Path::new(&x).join("vaultdm").join("config.toml"));
    }
    let home = get("HOME").or_else(|| get("USERPROFILE"))?;
    Some(
        Path::new(&home)
            .join(".config")
            .join("vaultdm")
            .join("config.toml"),
    )
}

/// Read and parse a TOML config file; `Ok(None)` if it does not exist.
pub(crate) fn load_config_file(path: &Path) -> Result<Option<toml::Table>, SettingsError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(SettingsError::Read {
                path: path.to_owned(),
                source,
            })
        }
    };
    text.parse::<toml::Table>()
        .map(Some)
        .map_err(|source| SettingsError::Parse {
            path: path.to_owned(),
            source,
        })
}

/// A text setting: its `[llm]` key, its flag, and the environment variables read after the
/// flag and before the files (the vault's, then the user's).
struct Text {
    key: &'static str,
    flag: fn(&LlmFlags) -> Option<&String>,
    env: &'static [&'static str],
}

/// A whole-number setting: its `[llm]` key, its flag (if it has one) and the largest value a
/// file may give. No environment variable sets one.
struct Count {
    key: &'static str,
    flag: fn(&LlmFlags) -> Option<u64>,
    max: u64,
}

/// A duration in seconds, set only in the files.
struct Seconds {
    key: &'static str,
}

const PROVIDER: Text = Text {
    key: "provider",
    flag: |f| f.provider.as_ref(),
    env: &["VAULTDM_PROVIDER"],
};
const MODEL: Text = Text {
    key: "model",
    flag: |f| f.model.as_ref(),
    env: &["VAULTDM_MODEL"],
};
const BASE_URL: Text = Text {
    key: "base_url",
    flag: |f| f.base_url.as_ref(),
    env: &["VAULTDM_BASE_URL"],
};
const API_KEY_ENV: Text = Text {
    key: "api_key_env",
    flag: |f| f.api_key_env.as_ref(),
    env: &[],
};
const MAX_TOKENS: Count = Count {
    key: "max_tokens",
    flag: |f| f.max_tokens.map(u64::from),
    max: u32::MAX as u64,
};
const HISTORY_BUDGET: Count = Count {
    key: "history_budget",
    flag: |f| f.history_budget.map(|v| v as u64),
    max: 10_000_000,
};
const MAX_RETRIES: Count = Count {
    key: "max_retries",
    flag: |_| None,
    max: 10,
};
const REPLY_MAX_TOKENS: Count = Count {
    key: "reply_max_tokens",
    flag: |_| None,
    max: 1 << 40,
};
const REPLY_MAX_CHARS: Count = Count {
    key: "reply_max_chars",
    flag: |_| None,
    max: 1 << 40,
};
const CONNECT_TIMEOUT: Seconds = Seconds {
    key: "connect_timeout",
};
const FIRST_TOKEN_TIMEOUT: Seconds = Seconds {
    key: "first_token_timeout",
};
const IDLE_TIMEOUT: Seconds = Seconds {
    key: "idle_timeout",
};
const REPLY_DEADLINE: Seconds = Seconds {
    key: "reply_deadline",
};

/// Every key `[llm]` may hold; others are warned about.
const KNOWN_KEYS: &[&str] = &[
    PROVIDER.key,
    MODEL.key,
    BASE_URL.key,
    API_KEY_ENV.key,
    MAX_TOKENS.key,
    HISTORY_BUDGET.key,
    CONNECT_TIMEOUT.key,
    FIRST_TOKEN_TIMEOUT.key,
    IDLE_TIMEOUT.key,
    MAX_RETRIES.key,
    REPLY_MAX_TOKENS.key,
    REPLY_MAX_CHARS.key,
    REPLY_DEADLINE.key,
];

/// One `[llm]` table with its source, for typed lookups.
struct Layer<'a> {
    table: &'a toml::Table,
    source: Source,
}

impl Layer<'_> {
    fn string(&self, key: &str) -> Result<Option<String>, SettingsError> {
        match self.table.get(key) {
            None => Ok(None),
            Some(toml::Value::String(s)) if s.trim().is_empty() => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(s.trim().to_owned())),
            Some(_) => Err(self.invalid(key, "a string")),
        }
    }

    fn uint(&self, key: &str, max: u64) -> Result<Option<u64>, SettingsError> {
        match self.table.get(key) {
            None => Ok(None),
            Some(toml::Value::Integer(i)) if *i >= 0 && (*i as u64) <= max => Ok(Some(*i as u64)),
            Some(_) => Err(self.invalid(key, "a non-negative whole number in range")),
        }
    }

    fn seconds(&self, key: &str) -> Result<Option<Duration>, SettingsError> {
        let secs = match self.table.get(key) {
            None => return Ok(None),
            Some(toml::Value::Integer(i)) => *i as f64,
            Some(toml::Value::Float(f)) => *f,
            Some(_) => return Err(self.invalid(key, "a number of seconds")),
        };
        if secs.is_finite() && secs > 0.0 && secs <= 86_400.0 {
            Ok(Some(Duration::from_secs_f64(secs)))
        } else {
            Err(self.invalid(key, "a number of seconds between 0 and 86400"))
        }
    }

    fn invalid(&self, key: &str, expected: &'static str) -> SettingsError {
        SettingsError::InvalidValue {
            file: self.source.clone(),
            key: key.to_owned(),
            expected,
        }
    }
}

fn llm_layer<'a>(
    given: Option<&'a toml::Table>,
    source: Source,
    warnings: &mut Vec<String>,
) -> Result<Option<Layer<'a>>, SettingsError> {
    let Some(given) = given else { return Ok(None) };
    // Either the `[llm]` table itself or a whole file holding one.
    let table = match given.get("llm") {
        Some(toml::Value::Table(inner)) => {
            // A key at the top level of the file is refused as well: it would be just as exposed.
            if let Some(k) = given.keys().find(|k| looks_like_key_name(k)) {
                return Err(SettingsError::KeyInConfig {
                    file: source,
                    key: k.clone(),
                });
            }
            inner
        }
        Some(_) => {
            return Err(SettingsError::InvalidValue {
                file: source,
                key: "llm".into(),
                expected: "a table ([llm])",
            })
        }
        None => given,
    };
    for (k, v) in table.iter() {
        let holds_secret = v.as_str().is_some_and(crate::secrets::looks_like_secret);
        if looks_like_key_name(k) || holds_secret {
            return Err(SettingsError::KeyInConfig {
                file: source,
                key: k.clone(),
            });
        }
        if !KNOWN_KEYS.contains(&k.as_str()) {
            warnings.push(format!("{source}: unknown key `{k}` in [llm] (ignored)"));
        }
    }
    Ok(Some(Layer { table, source }))
}

fn looks_like_key_name(k: &str) -> bool {
    let k = k.to_ascii_lowercase().replace('-', "_");
    k != "api_key_env"
        && (k.contains("api_key")
            || k.contains("apikey")
            || k == "key"
            || k.ends_with("_key")
            || k == "token"
            || k.ends_with("_token"))
        && k != "max_tokens"
}

/// Resolves the settings a process uses: `flags` over the environment over the vault's
/// `[llm]` table over the user config file (read here, if there is one).
pub(crate) fn resolve_here(
    flags: &LlmFlags,
    vault: Option<&toml::Table>,
) -> Result<LlmSettings, SettingsError> {
    let env = |k: &str| std::env::var(k).ok();
    let named = env("VAULTDM_CONFIG").is_some_and(|v| !v.trim().is_empty());
    let user = match user_config_path(&env) {
        Some(p) => match load_config_file(&p)? {
            // A file the GM named on purpose is never skipped without a word.
            None if named => return Err(SettingsError::MissingUserConfig { path: p }),
            user => user,
        },
        None => None,
    };
    resolve(&SettingsSources {
        flags,
        env: &env,
        vault,
        user: user.as_ref(),
    })
}

/// Resolve the effective settings. Fails only on a malformed or key-holding config file or
/// an unknown provider name; a missing provider or model is reported later by
/// [`LlmSettings::to_config`] so `vaultdm config` can still show everything.
pub(crate) fn resolve(src: &SettingsSources<'_>) -> Result<LlmSettings, SettingsError> {
    let mut warnings = Vec::new();
    let look = Lookup::new(src, &mut warnings)?;
    let Endpoint {
        provider,
        base_url,
        model,
        api_key_env,
    } = look.endpoint(&mut warnings)?;
    let api_key = look.api_key(api_key_env.as_ref());

    let max_tokens = look
        .count(&MAX_TOKENS, u64::from(LlmConfig::DEFAULT_MAX_TOKENS))?
        .map(|v| u32::try_from(v).unwrap_or(u32::MAX));
    let history_budget = look
        .count(&HISTORY_BUDGET, DEFAULT_HISTORY_BUDGET as u64)?
        .map(|v| usize::try_from(v).unwrap_or(DEFAULT_HISTORY_BUDGET));
    let max_retries = look
        .count(&MAX_RETRIES, u64::from(RetryPolicy::default().max_retries))?
        .map(|v| u32::try_from(v).unwrap_or(3));
    let limits = ReplyLimits::for_max_tokens(max_tokens.value);
    let reply_max_tokens = look
        .count(&REPLY_MAX_TOKENS, limits.max_tokens as u64)?
        .map(|v| usize::try_from(v).unwrap_or(usize::MAX));
    let reply_max_chars = look
        .count(&REPLY_MAX_CHARS, limits.max_chars as u64)?
        .map(|v| usize::try_from(v).unwrap_or(usize::MAX));
    let t = Timeouts::default();

    Ok(LlmSettings {
        provider,
        base_url,
        model,
        api_key_env,
        api_key,
        max_tokens,
        history_budget,
        connect_timeout: look.seconds(&CONNECT_TIMEOUT, t.connect)?,
        first_token_timeout: look.seconds(&FIRST_TOKEN_TIMEOUT, t.first_token)?,
        idle_timeout: look.seconds(&IDLE_TIMEOUT, t.idle)?,
        max_retries,
        reply_max_tokens,
        reply_max_chars,
        reply_deadline: look.seconds(&REPLY_DEADLINE, limits.deadline)?,
        warnings,
    })
}

/// Everything resolution reads, highest precedence first: the flags, the environment, then the
/// `[llm]` layers (the vault's, then the user's).
struct Lookup<'a> {
    flags: &'a LlmFlags,
    env: &'a dyn Fn(&str) -> Option<String>,
    layers: Vec<Layer<'a>>,
}

/// Where the model is served: what [`Lookup::endpoint`] resolves.
struct Endpoint {
    provider: Option<Setting<ProviderKind>>,
    base_url: Option<Setting<String>>,
    model: Option<Setting<String>>,
    api_key_env: Option<Setting<String>>,
}

impl<'a> Lookup<'a> {
    /// Checks both files' `[llm]` tables (refusing keys, warning about unknown names).
    fn new(src: &SettingsSources<'a>, warnings: &mut Vec<String>) -> Result<Self, SettingsError> {
        let vault = llm_layer(src.vault, Source::VaultFile, warnings)?;
        let user = llm_layer(src.user, Source::UserFile, warnings)?;
        Ok(Self {
            flags: src.flags,
            env: src.env,
            layers: vault.into_iter().chain(user).collect(),
        })
    }

    /// An environment variable, trimmed; empty counts as unset.
    fn env(&self, var: &str) -> Option<String> {
        (self.env)(var)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    }

    /// The value of the first layer that sets one, read by `read`.
    fn in_files<T>(
        &self,
        read: impl Fn(&Layer<'_>) -> Result<Option<T>, SettingsError>,
    ) -> Result<Option<Setting<T>>, SettingsError> {
        for layer in &self.layers {
            if let Some(v) = read(layer)? {
                return Ok(Some(Setting::new(v, layer.source.clone())));
            }
        }
        Ok(None)
    }

    /// A text setting from its flag, its variables or the files.
    fn text(&self, spec: &Text) -> Result<Option<Setting<String>>, SettingsError> {
        self.text_or_var(spec, None)
    }

    /// [`Self::text`], reading `then` after the setting's own variables.
    fn text_or_var(
        &self,
        spec: &Text,
        then: Option<&str>,
    ) -> Result<Option<Setting<String>>, SettingsError> {
        let flag = (spec.flag)(self.flags)
            .map(|s| s.trim())
            .filter(|s| !s.is_empty());
        if let Some(v) = flag {
            return Ok(Some(Setting::new(v.to_owned(), Source::Flag)));
        }
        for var in spec.env.iter().copied().chain(then) {
            if let Some(v) = self.env(var) {
                return Ok(Some(Setting::new(v, Source::Env(var.to_owned()))));
            }
        }
        self.in_files(|l| l.string(spec.key))
    }

    /// A whole number from its flag or the files, else `default`.
    fn count(&self, spec: &Count, default: u64) -> Result<Setting<u64>, SettingsError> {
        if let Some(v) = (spec.flag)(self.flags) {
            return Ok(Setting::new(v, Source::Flag));
        }
        Ok(self
            .in_files(|l| l.uint(spec.key, spec.max))?
            .unwrap_or_else(|| Setting::new(default, Source::Default)))
    }

    /// A duration from the files, else `default`.
    fn seconds(
        &self,
        spec: &Seconds,
        default: Duration,
    ) -> Result<Setting<Duration>, SettingsError> {
        Ok(self
            .in_files(|l| l.seconds(spec.key))?
            .unwrap_or_else(|| Setting::new(default, Source::Default)))
    }

    /// The provider (named, else inferred), then — once there is one — its base URL, key
    /// variable and model, defaulting to the provider's own service.
    fn endpoint(&self, warnings: &mut Vec<String>) -> Result<Endpoint, SettingsError> {
        // Base URL independent of the provider (used for inference and resolution).
        let generic_base = self.text(&BASE_URL)?;
        let explicit_key_env = self.text(&API_KEY_ENV)?;
        if let Some(k) = &explicit_key_env {
            check_key_var(k)?;
        }
        let provider = match self.text(&PROVIDER)? {
            Some(named) => Some(parse_provider(named)?),
            None => infer_provider(&generic_base, &explicit_key_env, &|k| self.env(k), warnings),
        };
        let Some(kind) = provider.as_ref().map(|p| p.value) else {
            return Ok(Endpoint {
                provider,
                base_url: generic_base,
                model: self.text(&MODEL)?,
                api_key_env: explicit_key_env,
            });
        };
        let base = self
            .text_or_var(&BASE_URL, Some(base_url_var(kind)))?
            .unwrap_or_else(|| Setting::new(kind.default_base_url().to_owned(), Source::Default));
        let key_env = explicit_key_env
            .unwrap_or_else(|| Setting::new(kind.default_key_var().to_owned(), Source::Default));
        let model = match self.text(&MODEL)? {
            Some(m) => Some(m),
            None => is_official(kind, &base.value)
                .then(|| Setting::new(default_model(kind).to_owned(), Source::Default)),
        };
        Ok(Endpoint {
            provider,
            base_url: Some(base),
            model,
            api_key_env: Some(key_env),
        })
    }

    /// The key, read from the variable `var` names, if it is set.
    fn api_key(&self, var: Option<&Setting<String>>) -> Option<Setting<ApiKey>> {
        let var = &var?.value;
        self.env(var).map(|secret| {
            Setting::new(
                ApiKey::new(secret, Some(var.clone())),
                Source::Env(var.clone()),
            )
        })
    }
}

/// Refuses an `api_key_env` that holds a key, or anything else that cannot name a variable.
fn check_key_var(k: &Setting<String>) -> Result<(), SettingsError> {
    let problem = if crate::secrets::looks_like_secret(&k.value) {
        "looks like an API key itself (it was not printed)"
    } else if !crate::secrets::is_var_name(&k.value) {
        "is not a variable name (letters, digits and _ only)"
    } else {
        return Ok(());
    };
    Err(SettingsError::BadKeyVariable {
        source_: k.source.clone(),
        problem,
    })
}

/// A provider name, parsed; the error names where it came from.
fn parse_provider(named: Setting<String>) -> Result<Setting<ProviderKind>, SettingsError> {
    match named.value.parse::<ProviderKind>() {
        Ok(kind) => Ok(Setting::new(kind, named.source)),
        Err(error) => Err(SettingsError::UnknownProvider {
            source_: named.source,
            error,
        }),
    }
}

/// The variable naming a base URL for one provider only.
fn base_url_var(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::OpenAi => "OPENAI_BASE_URL",
        ProviderKind::Anthropic => "ANTHROPIC_BASE_URL",
    }
}

/// The model used with a provider's own service when none is configured.
fn default_model(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::OpenAi => DEFAULT_OPENAI_MODEL,
        ProviderKind::Anthropic => DEFAULT_ANTHROPIC_MODEL,
    }
}

/// Whether `base` is the provider's own service (which has a default model and needs a key).
fn is_official(kind: ProviderKind, base: &str) -> bool {
    base.trim_end_matches('/') == kind.default_base_url()
}

fn infer_provider(
    base: &Option<Setting<String>>,
    key_env: &Option<Setting<String>>,
    env: &dyn Fn(&str) -> Option<String>,
    warnings: &mut Vec<String>,
) -> Option<Setting<ProviderKind>> {
    if let Some(b) = base {
        let kind = if b.value.contains("anthropic.com") {
            ProviderKind::Anthropic
        } else {
            ProviderKind::OpenAi
        };
        return Some(Setting::new(
            kind,
            Source::Inferred(format!("base URL from {}", b.source)),
        ));
    }
    if let Some(k) = key_env {
        let kind = if k.value.to_ascii_uppercase().contains("ANTHROPIC") {
            ProviderKind::Anthropic
        } else {
            ProviderKind::OpenAi
        };
        return Some(Setting::new(
            kind,
            Source::Inferred(format!("api_key_env = {}", k.value)),
        ));
    }
    if env("OPENAI_BASE_URL").is_some() {
        return Some(Setting::new(
            ProviderKind::OpenAi,
            Source::Inferred("$OPENAI_BASE_URL is set".into()),
        ));
    }
    let anthropic = env("ANTHROPIC_API_KEY").is_some();
    let openai = env("OPENAI_API_KEY").is_some();
    match (openai, anthropic) {
        (false, true) => Some(Setting::new(
            ProviderKind::Anthropic,
            Source::Inferred("$ANTHROPIC_API_KEY is set".into()),
        )),
        (true, both) => {
            if both {
                warnings.push(
                    "both OPENAI_API_KEY and ANTHROPIC_API_KEY are set; using openai — pass --provider anthropic to choose the other".into(),
                );
            }
            Some(Setting::new(
                ProviderKind::OpenAi,
                Source::Inferred("$OPENAI_API_KEY is set".into()),
            ))
        }
        (false, false) => None,
    }
}

impl LlmSettings {
    /// Turn the settings into a client config, or explain what is missing.
    pub(crate) fn to_config(&self) -> Result<LlmConfig, LlmError> {
        let Some(provider) = &self.provider else {
            return Err(LlmError::NotConfigured {
                what: "no provider was named and none could be inferred (no --provider, $VAULTDM_PROVIDER, [llm] provider, base URL or API key found)".into(),
            });
        };
        let kind = provider.value;
        let base = self
            .base_url
            .as_ref()
            .map_or_else(|| kind.default_base_url().to_owned(), |b| b.value.clone());
        let Some(model) = &self.model else {
            return Err(LlmError::NotConfigured {
                what: format!(
                    "no model set for {} (use --model, $VAULTDM_MODEL or `model` in [llm])",
                    crate::secrets::mask_url(&base)
                ),
            });
        };
        if self.api_key.is_none() {
            if let Some(var) = &self.api_key_env {
                if var.source != Source::Default || is_official(kind, &base) {
                    return Err(LlmError::NotConfigured {
                        what: format!(
                            "${} is not set (the API key for {})",
                            var.value,
                            crate::secrets::mask_url(&base)
                        ),
                    });
                }
            }
        }
        Ok(LlmConfig {
            provider: kind,
            base_url: base,
            model: model.value.clone(),
            api_key: self.api_key.as_ref().map(|k| k.value.clone()),
            timeouts: Timeouts {
                connect: self.connect_timeout.value,
                first_token: self.first_token_timeout.value,
                idle: self.idle_timeout.value,
            },
            retry: RetryPolicy {
                max_retries: self.max_retries.value,
                ..RetryPolicy::default()
            },
            max_tokens: self.max_tokens.value,
            limits: ReplyLimits {
                max_chars: self.reply_max_chars.value,
                max_tokens: self.reply_max_tokens.value,
                deadline: self.reply_deadline.value,
            },
            extra: serde_json::Map::new(),
        })
    }

    /// Rows for `vaultdm config`: name, value (key masked), source.
    pub(crate) fn rows(&self) -> Vec<SettingRow> {
        fn row<T>(
            name: &'static str,
            s: Option<&Setting<T>>,
            show: impl Fn(&T) -> String,
        ) -> SettingRow {
            match s {
                Some(s) => SettingRow {
                    name,
                    value: show(&s.value),
                    source: s.source.to_string(),
                },
                None => SettingRow {
                    name,
                    value: "(not set)".into(),
                    source: "-".into(),
                },
            }
        }
        let secs = |d: &Duration| format!("{}s", d.as_secs_f64());
        vec![
            row(PROVIDER.key, self.provider.as_ref(), |p| p.to_string()),
            row(BASE_URL.key, self.base_url.as_ref(), |u| {
                crate::secrets::mask_url(u)
            }),
            row(MODEL.key, self.model.as_ref(), Clone::clone),
            row(API_KEY_ENV.key, self.api_key_env.as_ref(), Clone::clone),
            row("api_key", self.api_key.as_ref(), ApiKey::masked),
            row(MAX_TOKENS.key, Some(&self.max_tokens), u32::to_string),
            row(
                HISTORY_BUDGET.key,
                Some(&self.history_budget),
                usize::to_string,
            ),
            row(CONNECT_TIMEOUT.key, Some(&self.connect_timeout), secs),
            row(
                FIRST_TOKEN_TIMEOUT.key,
                Some(&self.first_token_timeout),
                secs,
            ),
            row(IDLE_TIMEOUT.key, Some(&self.idle_timeout), secs),
            row(MAX_RETRIES.key, Some(&self.max_retries), u32::to_string),
            row(
                REPLY_MAX_TOKENS.key,
                Some(&self.reply_max_tokens),
                usize::to_string,
            ),
            row(
                REPLY_MAX_CHARS.key,
                Some(&self.reply_max_chars),
                usize::to_string,
            ),
            row(REPLY_DEADLINE.key, Some(&self.reply_deadline), secs),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |k: &str| map.get(k).cloned()
    }

    fn toml(s: &str) -> toml::Table {
        s.parse().unwrap_or_else(|e| panic!("bad test toml: {e}"))
    }

    fn resolve_with(
        flags: &LlmFlags,
        env: &[(&str, &str)],
        vault: Option<&str>,
        user: Option<&str>,
    ) -> Result<LlmSettings, SettingsError> {
        let env = env_of(env);
        let vault = vault.map(toml);
        let user = user.map(toml);
        resolve(&SettingsSources {
            flags,
            env: &env,
            vault: vault.as_ref(),
            user: user.as_ref(),
        })
    }

    #[test]
    fn nothing_configured_explains_how() {
        let s =
            resolve_with(&LlmFlags::default(), &[], None, None).unwrap_or_else(|e| panic!("{e}"));
        assert!(s.provider.is_none());
        let err = s
            .to_config()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("--provider openai --base-url http://localhost:11434/v1 --model llama3.1"),
            "{err}"
        );
        assert!(err.contains("export OPENAI_API_KEY="), "{err}");
    }

    #[test]
    fn anthropic_key_alone_means_anthropic() {
        let s = resolve_with(
            &LlmFlags::default(),
            &[("ANTHROPIC_API_KEY", "sk-ant-aaaaaaaaaaaaaaaa9999")],
            None,
            None,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let cfg = s.to_config().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(cfg.provider, ProviderKind::Anthropic);
        assert_eq!(cfg.base_url, "https://api.anthropic.com");
        assert_eq!(cfg.model, DEFAULT_ANTHROPIC_MODEL);
        assert_eq!(
            cfg.api_key.as_ref().and_then(|k| k.source_var()),
            Some("ANTHROPIC_API_KEY")
        );
        assert!(matches!(
            s.provider.map(|p| p.source),
            Some(Source::Inferred(_))
        ));
    }

    #[test]
    fn base_url_means_openai_compatible_without_key() {
        let flags = LlmFlags {
            base_url: Some("http://localhost:11434/v1".into()),
            model: Some("llama3.1".into()),
            ..LlmFlags::default()
        };
        let s = resolve_with(&flags, &[], None, None).unwrap_or_else(|e| panic!("{e}"));
        let cfg = s.to_config().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(cfg.provider, ProviderKind::OpenAi);
        assert!(cfg.api_key.is_none());
        assert_eq!(s.model.map(|m| m.source), Some(Source::Flag));
    }

    #[test]
    fn precedence_flag_env_vault_user() {
        let vault = "[llm]\nprovider = \"openai\"\nmodel = \"vault-model\"\nbase_url = \"http://vault/v1\"\nmax_tokens = 500\n";
        let user = "[llm]\nmodel = \"user-model\"\nhistory_budget = 1234\nmax_tokens = 9\nidle_timeout = 5\n";
        let s = resolve_with(
            &LlmFlags::default(),
            &[("VAULTDM_MODEL", "env-model")],
            Some(vault),
            Some(user),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            s.model.as_ref().map(|m| (m.value.as_str(), &m.source)),
            Some(("env-model", &Source::Env("VAULTDM_MODEL".into())))
        );
        assert_eq!(
            s.base_url.as_ref().map(|b| &b.source),
            Some(&Source::VaultFile)
        );
        assert_eq!(
            (s.max_tokens.value, &s.max_tokens.source),
            (500, &Source::VaultFile)
        );
        assert_eq!(
            (s.history_budget.value, &s.history_budget.source),
            (1234, &Source::UserFile)
        );
        assert_eq!(s.idle_timeout.value, Duration::from_secs(5));
        let flags = LlmFlags {
            model: Some("flag-model".into()),
            ..LlmFlags::default()
        };
        let s = resolve_with(
            &flags,
            &[("VAULTDM_MODEL", "env-model")],
            Some(vault),
            Some(user),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.model.map(|m| m.value), Some("flag-model".into()));
        let s = resolve_with(&LlmFlags::default(), &[], Some(vault), Some(user))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.model.map(|m| m.value), Some("vault-model".into()));
        let s = resolve_with(&LlmFlags::default(), &[], None, Some(user))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.model.as_ref().map(|m| &m.source), Some(&Source::UserFile));
    }

    #[test]
    fn openai_base_url_env_is_used_for_openai() {
        let s = resolve_with(
            &LlmFlags::default(),
            &[
                ("OPENAI_BASE_URL", "http://router/v1"),
                ("VAULTDM_MODEL", "m"),
            ],
            None,
            None,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            s.base_url.map(|b| (b.value, b.source)),
            Some((
                "http://router/v1".into(),
                Source::Env("OPENAI_BASE_URL".into())
            ))
        );
    }

    #[test]
    fn custom_key_env() {
        let vault = "[llm]\nprovider = \"openai\"\nbase_url = \"https://openrouter.ai/api/v1\"\nmodel = \"x\"\napi_key_env = \"OPENROUTER_API_KEY\"\n";
        let s = resolve_with(
            &LlmFlags::default(),
            &[("OPENROUTER_API_KEY", "sk-or-v1-0123456789abcdef")],
            Some(vault),
            None,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let cfg = s.to_config().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            cfg.api_key.as_ref().and_then(|k| k.source_var()),
            Some("OPENROUTER_API_KEY")
        );
        // Named but unset: a clear error.
        let s = resolve_with(&LlmFlags::default(), &[], Some(vault), None)
            .unwrap_or_else(|e| panic!("{e}"));
        let err = s
            .to_config()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("$OPENROUTER_API_KEY is not set"), "{err}");
    }

    #[test]
    fn key_in_vault_file_is_refused_without_echoing_it() {
        for vault in [
            "[llm]\napi_key = \"sk-secret-abcdefghijklmnop\"\n",
            "[llm]\nmodel = \"sk-secret-abcdefghijklmnop\"\n",
            "api_key = \"sk-secret-abcdefghijklmnop\"\n",
            "[llm]\nopenai_api_key = \"x\"\n",
        ] {
            let err = resolve_with(&LlmFlags::default(), &[], Some(vault), None)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(
                err.contains("vault vaultdm.toml") && err.contains("export"),
                "{err}"
            );
            assert!(!err.contains("abcdefghijklmnop"), "{err}");
        }
    }

    #[test]
    fn bad_values_name_file_and_key() {
        let err = resolve_with(
            &LlmFlags::default(),
            &[],
            None,
            Some("[llm]\nmax_tokens = \"lots\"\n"),
        )
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
        assert_eq!(
            err,
            "user config: [llm] max_tokens must be a non-negative whole number in range"
        );
        let err = resolve_with(
            &LlmFlags::default(),
            &[("VAULTDM_PROVIDER", "gemini")],
            None,
            None,
        )
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
        assert!(
            err.starts_with("env $VAULTDM_PROVIDER: unknown provider `gemini`"),
            "{err}"
        );
    }

    #[test]
    fn accepts_the_bare_llm_table() {
        let s = resolve_with(
            &LlmFlags::default(),
            &[],
            Some("provider = \"anthropic\"\nmodel = \"claude-x\"\n"),
            None,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            s.model.map(|m| (m.value, m.source)),
            Some(("claude-x".into(), Source::VaultFile))
        );
        let err = resolve_with(
            &LlmFlags::default(),
            &[],
            Some("api_key = \"sk-aaaaaaaaaaaaaaaaaaaaaaaa\"\n"),
            None,
        )
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
        assert!(err.contains("contains an API key"), "{err}");
    }

    #[test]
    fn unknown_keys_warn() {
        let s = resolve_with(
            &LlmFlags::default(),
            &[],
            Some("[llm]\ntemprature = 0.7\n"),
            None,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(s.warnings.iter().any(|w| w.contains("temprature")));
    }

    #[test]
    fn rows_mask_the_key() {
        let s = resolve_with(
            &LlmFlags::default(),
            &[("OPENAI_API_KEY", "sk-proj-SECRETSECRETSECRET1234")],
            None,
            None,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let rows = s.rows();
        let key = rows
            .iter()
            .find(|r| r.name == "api_key")
            .map(|r| (r.value.clone(), r.source.clone()));
        assert_eq!(key, Some(("sk-…1234".into(), "env $OPENAI_API_KEY".into())));
        assert!(!format!("{rows:?}{s:?}").contains("SECRETSECRET"));
    }

    #[test]
    fn user_config_path_order() {
        let e = env_of(&[("HOME", "/home/gm")]);
        assert_eq!(
            user_config_path(&e),
            Some(PathBuf::from("/home/gm/.config/vaultdm/config.toml"))
        );
        let e = env_of(&[("HOME", "/home/gm"), ("XDG_CONFIG_HOME", "/xdg")]);
        assert_eq!(
            user_config_path(&e),
            Some(PathBuf::from("/xdg/vaultdm/config.toml"))
        );
        let e = env_of(&[("HOME", "/home/gm"), ("VAULTDM_CONFIG", "/tmp/c.toml")]);
        assert_eq!(user_config_path(&e), Some(PathBuf::from("/tmp/c.toml")));
    }

    #[test]
    fn load_missing_and_broken_files() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(
            load_config_file(&dir.path().join("none.toml")),
            Ok(None)
        ));
        let bad = dir.path().join("bad.toml");
        std::fs::write(&bad, "[llm\nmodel=").unwrap_or_else(|e| panic!("{e}"));
        let err = load_config_file(&bad)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("bad.toml") && err.contains("line"), "{err}");
    }
}
