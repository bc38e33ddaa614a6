//! Setting a vault up for contexts: the [`Engine`] with the vault's templates, the
//! [`Options`] from flags over the vault's `[context]` defaults, and the check of the
//! vault's template overrides.
//!
//! `context`, `ask`, `chat`, `check`, the live reload and the tests all start here, so a
//! default or a template rule lives in one place.

use super::{ContextError, Engine, ModeChoice, Options, TemplateError, Templates};
use crate::canon::{Campaign, Loaded};
use crate::config::{Config, ContextConfig, CONFIG_FILE, MAX_CONFIG_BYTES};
use crate::vault::Code;
use crate::vault::{boundary, Diagnostic};
use std::path::Path;
use std::sync::Arc;

/// The vault's templates: the built-in ones, with the overrides found in the folder
/// `templates = "…"` in `vaultdm.toml` names.
pub fn load_templates(root: &Path, config: &Config) -> Result<Templates, TemplateError> {
    Templates::load(config.templates_dir(root).as_deref())
}

impl Engine {
    /// The engine for a loaded vault: its campaign and its templates ([`load_templates`]).
    pub fn for_vault(root: &Path, loaded: &Loaded) -> Result<Engine, TemplateError> {
        let templates = load_templates(root, &loaded.config)?;
        Ok(Engine::new(loaded.built.campaign.clone(), templates))
    }

    /// Like [`Engine::for_vault`], moving the campaign out of `loaded` instead of copying
    /// it, for a one-shot command that reads canon afterwards only through the engine
    /// (`context`: on a big vault the copy showed at the process's peak).
    pub fn taking_canon(root: &Path, loaded: &mut Loaded) -> Result<Engine, TemplateError> {
        let templates = load_templates(root, &loaded.config)?;
        let campaign = std::mem::take(&mut loaded.built.campaign);
        Ok(Engine::new(campaign, templates))
    }
}

/// What a command line (or a caller) asks for over the vault's `[context]` defaults.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// The player's message, if any.
    pub message: Option<String>,
    /// Mode choice.
    pub mode: ModeChoice,
    /// Token budget (None: the vault's `budget`; 0: none).
    pub budget: Option<usize>,
    /// The PC speaking.
    pub pc: Option<String>,
}

impl Options {
    /// Options with the vault's `[context]` defaults and nothing asked for.
    pub fn for_vault(config: &ContextConfig) -> Options {
        Options::with_overrides(config, Overrides::default())
    }

    /// Options from what was asked for, the vault's `[context]` defaults filling the rest
    /// (a budget of 0 means none).
    pub fn with_overrides(config: &ContextConfig, asked: Overrides) -> Options {
        let budget = asked.budget.unwrap_or(config.budget);
        Options {
            message: asked.message,
            mode: asked.mode,
            budget: (budget > 0).then_some(budget),
            pc: asked.pc,
            npc_cap: config.npc_cap,
            recent_events: config.recent_events,
            ..Options::default()
        }
    }
}

/// The line of `templates = …` in `vaultdm.toml` (0 when it cannot be found).
fn templates_key_line(root: &Path) -> usize {
    let toml = boundary::read_text_inside(root, Path::new(CONFIG_FILE), MAX_CONFIG_BYTES)
        .unwrap_or_default();
    toml.lines()
        .position(|l| l.trim_start().starts_with("templates") && l.contains('='))
        .map_or(0, |i| i + 1)
}

/// What happens when a template is broken: said at the end of its diagnostic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WhenBroken {
    /// `check`: `context` refuses to run until the template is fixed.
    Refuse,
    /// A live reload: the last good templates stay in use.
    KeepPrevious,
}

/// A template problem as a diagnostic at the template's file and line (vault-relative when
/// the template is the vault's), or at the `templates` line of `vaultdm.toml` when a file
/// could not be read.
fn template_diagnostic(root: &Path, e: TemplateError, when: WhenBroken) -> Diagnostic {
    let keep = "the previous templates are kept";
    match e {
        TemplateError::Template {
            name,
            line,
            message,
        } => {
            let path = Path::new(&name)
                .strip_prefix(root)
                .map(|p| p.to_string_lossy().replace('\\', "/"))
                .unwrap_or(name);
            Diagnostic::error(
                &path,
                line.unwrap_or(0),
                Code::Template,
                match when {
                    WhenBroken::Refuse => format!(
                        "template error: {message}; `context` refuses to run until it is fixed"
                    ),
                    WhenBroken::KeepPrevious => format!("template error: {message}; {keep}"),
                },
            )
        }
        read @ TemplateError::Read { .. } => Diagnostic::error(
            CONFIG_FILE,
            templates_key_line(root),
            Code::Template,
            match when {
                WhenBroken::Refuse => read.to_string(),
                WhenBroken::KeepPrevious => format!("{read}; {keep}"),
            },
        ),
    }
}

/// Loads the vault's templates and tries each mode once with `campaign`, since some
/// mistakes (an unknown filter, a bad call) only show when rendering. A template that does
/// not load or render is a diagnostic at its file and line that says what happens instead.
pub(crate) fn checked_templates(
    root: &Path,
    config: &Config,
    campaign: &Campaign,
    when: WhenBroken,
) -> Result<Arc<Templates>, Vec<Diagnostic>> {
    let templates =
        load_templates(root, config).map_err(|e| vec![template_diagnostic(root, e, when)])?;
    let engine = Engine::new(campaign.clone(), templates);
    let mut out = Vec::new();
    for (mode, message) in [
        (ModeChoice::Full, None),
        (ModeChoice::Light, Some("vaultdm check".to_string())),
    ] {
        let opts = Options {
            mode,
            message,
            ..Options::default()
        };
        if let Err(ContextError::Template(e)) = engine.build(&opts) {
            let d = template_diagnostic(root, e, when);
            if !out.contains(&d) {
                out.push(d);
            }
        }
    }
    if out.is_empty() {
        Ok(Arc::clone(engine.templates()))
    } else {
        Err(out)
    }
}

/// Problems with the vault's template overrides, for `check`: a `templates` folder that
/// does not exist, or a template that does not load or render (with its file and line),
/// since `context` refuses to run on a broken template.
pub(crate) fn template_diagnostics(root: &Path, loaded: &Loaded) -> Vec<Diagnostic> {
    let Some(folder) = loaded.config.templates.as_deref() else {
        return vec![];
    };
    if !root.join(folder).is_dir() {
        return vec![Diagnostic::warning(
            CONFIG_FILE,
            templates_key_line(root),
            Code::Templates,
            format!("templates = \"{folder}\": no such folder in the vault; the built-in templates are used"),
        )];
    }
    let when = WhenBroken::Refuse;
    match checked_templates(root, &loaded.config, &loaded.built.campaign, when) {
        Ok(_) => vec![],
        Err(d) => d,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_win_over_the_vaults_defaults() {
        let cfg = ContextConfig {
            npc_cap: 2,
            budget: 900,
            recent_events: 3,
            full_context_after_changes: 8,
        };
        let o = Options::for_vault(&cfg);
        assert_eq!((o.npc_cap, o.recent_events, o.budget), (2, 3, Some(900)));
        assert!(o.explain && o.message.is_none() && o.mode == ModeChoice::Auto);
        let o = Options::with_overrides(
            &cfg,
            Overrides {
                budget: Some(0),
                mode: ModeChoice::Full,
                pc: Some("Jake".into()),
                message: Some("hi".into()),
            },
        );
        assert_eq!(o.budget, None, "0 means no budget");
        assert_eq!(o.mode, ModeChoice::Full);
        assert_eq!(o.pc.as_deref(), Some("Jake"));
        assert_eq!(o.message.as_deref(), Some("hi"));
        let default = Options::for_vault(&ContextConfig::default());
        assert_eq!(default.budget, Some(crate::context::DEFAULT_BUDGET));
        let unlimited = Options::for_vault(&ContextConfig {
            budget: 0,
            ..ContextConfig::default()
        });
        assert_eq!(unlimited.budget, None, "0 in the vault means no budget");
    }
}
