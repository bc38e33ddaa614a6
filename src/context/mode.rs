//! Full or light: which context a message gets. This is the one home of that rule, for
//! `vaultdm context` (the message alone) and for a session at the table (what the DM has
//! already seen).

use serde::Serialize;

/// Which context a message gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The full session context.
    Full,
    /// The one-line light context plus mention cards.
    Light,
}

/// How to choose the mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ModeChoice {
    /// Full with no message or on a resume command, light otherwise.
    #[default]
    Auto,
    /// Always full.
    Full,
    /// Always light.
    Light,
}

/// The exact resume commands (compared lower-cased, trimmed, trailing `?!.` stripped).
pub const RESUME_COMMANDS: &[&str] = &[
    "continue",
    "resume",
    "go",
    "start",
    "begin",
    "proceed",
    "what now",
    "whats next",
    "what's next",
    "next",
    "start session",
    "resume session",
    "continue session",
];

/// True when the message is a resume command.
pub fn is_resume(message: &str) -> bool {
    let m = message
        .trim()
        .trim_end_matches(['?', '!', '.'])
        .trim()
        .to_lowercase()
        .replace('\u{2019}', "'");
    let m = m.split_whitespace().collect::<Vec<_>>().join(" ");
    RESUME_COMMANDS.contains(&m.as_str())
}

/// What a session knows when it chooses the mode of its next message.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SessionFacts {
    /// The GM asked for a full context (`/full`, or a reload that changed templates).
    pub forced: bool,
    /// The prompt history still holds a full context.
    pub full_in_history: bool,
    /// Canon changes since the last full context.
    pub changes_since_full: usize,
    /// More changes than this send a full context again (0: never).
    pub full_after_changes: usize,
}

/// The mode for a message alone: full with no message, an empty one or a resume command.
pub(crate) fn for_message(choice: ModeChoice, message: Option<&str>) -> Mode {
    match choice {
        ModeChoice::Full => Mode::Full,
        ModeChoice::Light => Mode::Light,
        ModeChoice::Auto => match message {
            None => Mode::Full,
            Some(m) if m.trim().is_empty() || is_resume(m) => Mode::Full,
            Some(_) => Mode::Light,
        },
    }
}

/// The mode for a message in a session: full when asked, when the DM no longer has a full
/// context in its history, on a resume command, or after many canon changes; else light.
pub(crate) fn for_session(facts: SessionFacts, message: &str) -> ModeChoice {
    if facts.forced
        || !facts.full_in_history
        || is_resume(message)
        || (facts.full_after_changes > 0 && facts.changes_since_full > facts.full_after_changes)
    {
        ModeChoice::Full
    } else {
        ModeChoice::Light
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("continue", true)]
    #[case("Resume", true)]
    #[case("what's next?", true)]
    #[case("what’s next?", true)]
    #[case("  start session  ", true)]
    #[case("Continue session.", true)]
    #[case("WHAT NOW", true)]
    #[case("whats next!?", true)]
    #[case("go", true)]
    #[case("continue the fight", false)]
    #[case("go north", false)]
    #[case("yes", false)]
    #[case("nextt", false)]
    fn resume_commands(#[case] m: &str, #[case] want: bool) {
        assert_eq!(is_resume(m), want);
    }

    #[test]
    fn a_session_goes_full_when_the_dm_lacks_one_or_canon_moved_on() {
        let light = SessionFacts {
            full_in_history: true,
            full_after_changes: 8,
            ..SessionFacts::default()
        };
        assert_eq!(for_session(light, "I sit."), ModeChoice::Light);
        assert_eq!(for_session(light, "continue"), ModeChoice::Full);
        for facts in [
            SessionFacts {
                forced: true,
                ..light
            },
            SessionFacts {
                full_in_history: false,
                ..light
            },
            SessionFacts {
                changes_since_full: 9,
                ..light
            },
        ] {
            assert_eq!(for_session(facts, "I sit."), ModeChoice::Full, "{facts:?}");
        }
        let never = SessionFacts {
            changes_since_full: 99,
            full_after_changes: 0,
            ..light
        };
        assert_eq!(for_session(never, "I sit."), ModeChoice::Light);
        assert_eq!(for_message(ModeChoice::Auto, None), Mode::Full);
        assert_eq!(for_message(ModeChoice::Auto, Some("  ")), Mode::Full);
        assert_eq!(for_message(ModeChoice::Auto, Some("I sit.")), Mode::Light);
    }
}
