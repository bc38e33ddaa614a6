//! Context: select and render exactly the canon a message needs.
//!
//! A *full* context (session start, resume commands, `--full`) carries the campaign header,
//! day and time, the party, where they are, who is there, the open storylines and recent
//! events. Every other message gets a one-line *light* context plus a card for each thing
//! it mentions. A token budget drops the least important parts first and never the header,
//! the day, the party, or the present NPCs and open threads the player named (cards of
//! other named things shrink to a name on one line first; see `budget.rs`). Every
//! candidate is kept as an [`Item`] with the reason it is in or out, for `--explain` and
//! `--format json`.

pub mod budget;
mod cards;
pub(crate) mod explain;
pub(crate) mod mode;
mod plan;
mod rank;
pub(crate) mod render;
mod scene;
mod secrets;
pub(crate) mod setup;

pub use crate::mentions::{How, Matcher, Mention, Target};
pub use budget::{DropStep, DEFAULT_BUDGET};
pub use explain::{Cut, ItemKind, Reason};
pub use mode::{is_resume, Mode, ModeChoice, RESUME_COMMANDS};
pub use render::{TemplateError, Templates};
pub use setup::{load_templates, Overrides};

use crate::canon::Campaign;
use serde::Serialize;
use std::sync::Arc;

/// What to build.
#[derive(Debug, Clone)]
pub struct Options {
    /// The player's message, if any.
    pub message: Option<String>,
    /// Mode choice.
    pub mode: ModeChoice,
    /// Token budget for the whole block (None = unlimited).
    pub budget: Option<usize>,
    /// Always count [`Injected::tokens`] exactly. Off, a block whose bytes fit the budget
    /// (or that has no budget) is not counted, since a token is at least one byte: the
    /// text output of `vaultdm context` needs no count and skips loading the vocabulary.
    pub count_tokens: bool,
    /// The PC speaking: their location is the scene.
    pub pc: Option<String>,
    /// Cap on present, unmentioned NPCs.
    pub npc_cap: usize,
    /// How many recent events a full context shows.
    pub recent_events: usize,
    /// Fill [`Injected::items`] (for `--explain` and JSON); the chat path leaves it off.
    pub explain: bool,
    /// The player's view (`context --player`): no GM-only text and no GM-only thing at all.
    pub player: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            message: None,
            mode: ModeChoice::Auto,
            budget: Some(DEFAULT_BUDGET),
            count_tokens: true,
            pc: None,
            npc_cap: 5,
            recent_events: 5,
            explain: true,
            player: false,
        }
    }
}

/// One candidate piece of canon and why it is in or out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Item {
    /// `header`, `time`, `pc`, `location`, `npc`, `thread`, `event`, `card`.
    pub kind: ItemKind,
    /// Display name (or event text).
    pub name: String,
    /// `file:line` it came from.
    pub source: String,
    /// Estimated tokens it costs (0 when left out).
    pub tokens: usize,
    /// Whether it is in the injected text.
    pub included: bool,
    /// Why.
    pub reason: Reason,
}

impl Item {
    /// A secret, a GM-only thing, or the GM's plan: never in the player's view.
    pub fn gm_only(&self) -> bool {
        self.kind == ItemKind::Secret
            || matches!(
                self.reason,
                Reason::Secret(_) | Reason::GmOnly(_) | Reason::AfterToday(_)
            )
    }
}

/// The built context.
#[derive(Debug, Clone, Serialize)]
pub struct Injected {
    /// Which mode was built.
    pub mode: Mode,
    /// Exactly what is injected.
    pub text: String,
    /// Tokens of `text` (see [`crate::tokens::count`]); with [`Options::count_tokens`]
    /// off and the text uncounted, its length in bytes (an upper bound).
    pub tokens: usize,
    /// Every candidate and why it is in or out (empty unless [`Options::explain`]).
    pub items: Vec<Item>,
    /// The GM-only texts in [`Injected::text`]'s DM-only part: what the leak guard holds
    /// the DM's replies against.
    pub gm_only: Vec<GmOnly>,
}

/// One GM-only text the DM was given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GmOnly {
    /// What it is about (`NPC Odessa Flint`, `The GM's plan`).
    pub about: String,
    /// The text.
    pub text: String,
    /// `file:line`.
    pub source: String,
    /// Why it is the GM's.
    pub why: String,
}

/// Errors building a context.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ContextError {
    /// A template failed.
    #[error(transparent)]
    Template(#[from] TemplateError),
    /// `--pc` named no PC.
    #[error("no PC named \"{name}\"; the PCs are: {known}")]
    UnknownPc {
        /// What was asked for.
        name: String,
        /// The PCs there are.
        known: String,
    },
}

/// Everything needed to build contexts for one canon: the campaign, its mention matcher
/// (built once) and the templates.
#[derive(Debug, Clone)]
pub struct Engine {
    campaign: Arc<Campaign>,
    /// Built on first use: a full context or a `check` never needs it, and on a big
    /// vault it is real work (docs/benchmarks.md).
    matcher: Arc<std::sync::OnceLock<Arc<Matcher>>>,
    templates: Arc<Templates>,
    counts: Arc<LineCounts>,
}

/// Token counts of rendered lines already seen. Contexts for one canon repeat most of their
/// lines from message to message, and counting o200k tokens is not free, so counts are kept
/// per line; line counts add up to the whole text's count within a fraction of a percent.
#[derive(Debug, Default)]
struct LineCounts(std::sync::Mutex<std::collections::HashMap<u64, usize>>);

impl LineCounts {
    fn count(&self, text: &str) -> usize {
        use std::hash::{Hash, Hasher};
        let mut total = 0;
        let Ok(mut map) = self.0.lock() else {
            return crate::tokens::count(text);
        };
        if map.len() > 100_000 {
            map.clear();
        }
        for line in text.split_inclusive('\n') {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            line.hash(&mut h);
            total += *map
                .entry(h.finish())
                .or_insert_with(|| crate::tokens::o200k(line));
        }
        total.max(crate::tokens::estimate(text))
    }
}

impl Engine {
    /// Builds the engine for a campaign (the mention matcher is built on first use).
    pub fn new(campaign: impl Into<Arc<Campaign>>, templates: Templates) -> Engine {
        Engine {
            campaign: campaign.into(),
            matcher: Arc::default(),
            templates: Arc::new(templates),
            counts: Arc::default(),
        }
    }

    /// Builds an engine from parts already shared (e.g. a matcher updated elsewhere).
    pub fn from_parts(
        campaign: Arc<Campaign>,
        matcher: Arc<Matcher>,
        templates: Arc<Templates>,
    ) -> Engine {
        Engine {
            campaign,
            matcher: Arc::new(std::sync::OnceLock::from(matcher)),
            templates,
            counts: Arc::default(),
        }
    }

    /// Tokens of a rendered text ([`crate::tokens::count`], with per-line counts cached).
    pub fn count_tokens(&self, text: &str) -> usize {
        self.counts.count(text)
    }

    /// The campaign.
    pub fn campaign(&self) -> &Campaign {
        &self.campaign
    }

    /// The campaign, shared: the same `Arc` for as long as canon is unchanged.
    pub fn campaign_arc(&self) -> &Arc<Campaign> {
        &self.campaign
    }

    /// Builds the mention matcher for this one message, when none is built yet: a one-shot
    /// `context -m` searches only its message, so only the names it holds become patterns
    /// ([`Matcher::for_message`]); any other text searched later builds the whole matcher.
    pub fn match_only(&self, message: &str) {
        self.matcher
            .get_or_init(|| Arc::new(Matcher::for_message(&self.campaign, message)));
    }

    /// The mention matcher.
    pub fn matcher(&self) -> &Matcher {
        self.matcher
            .get_or_init(|| Arc::new(Matcher::new(&self.campaign)))
    }

    /// The templates.
    pub fn templates(&self) -> &Arc<Templates> {
        &self.templates
    }

    /// Decides the mode for a message (see [`mode`]).
    pub fn mode_for(&self, opts: &Options) -> Mode {
        mode::for_message(opts.mode, opts.message.as_deref())
    }

    /// The DM's system prompt (`system.j2`): stable for a campaign, so providers can cache it.
    pub fn system_prompt(&self) -> Result<String, ContextError> {
        let c = self.campaign();
        Ok(self.templates.render(
            "system.j2",
            minijinja::context! { campaign => &c.name, setting => &c.setting },
        )?)
    }

    /// Builds the context for a message.
    pub fn build(&self, opts: &Options) -> Result<Injected, ContextError> {
        let mut plan = plan::Plan::new(self, opts)?;
        let fitted = budget::fit(self, &mut plan, opts.budget)?;
        let tokens = match fitted.tokens {
            Some(n) => n,
            None if opts.count_tokens => self.count_tokens(&fitted.text),
            None => fitted.text.len(),
        };
        let mut items = if opts.explain {
            explain::explain(&plan, opts.budget)
        } else {
            Vec::new()
        };
        if opts.player {
            // Not even the names of what the players must not know.
            items.retain(|i| !i.gm_only());
        }
        let gm_only = secrets::shown(&plan)
            .into_iter()
            .map(|s| GmOnly {
                about: s.about.clone(),
                text: s.text.clone(),
                source: s.source.clone(),
                why: s.why.to_string(),
            })
            .collect();
        Ok(Injected {
            mode: plan.mode,
            text: fitted.text,
            tokens,
            items,
            gm_only,
        })
    }
}
