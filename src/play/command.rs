//! The language of the table: what a line typed in `vaultdm chat` means.
//!
//! A line is a message to the DM, or — when it starts with `/` — a command: `/roll 2d6+3`,
//! `/context what if we run?`, `/quit`. Command names are read forgivingly (any case, any
//! whitespace before the argument: a phone capitalises `/Roll`), and a line starting with `/`
//! is never sent to the DM, so a mistyped command is an [`Command::Unknown`], not a message.

/// What a line typed at the table means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Input {
    /// A blank line: nothing to do.
    Empty,
    /// A message to the DM, trimmed.
    Message(String),
    /// A slash command.
    Command(Command),
}

/// A slash command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Command {
    /// `/context [message]`: what the next message (or this one) would inject, with reasons.
    Context(Option<String>),
    /// `/full`: the next message carries the full session context.
    Full,
    /// `/roll 2d6+3` (`/r`): roll dice; the result rides along with the next message. The
    /// expression as typed (maybe empty: the dice roller says what is wrong).
    Roll(String),
    /// `/continue`: the DM goes on with a reply that was cut off (any argument is ignored).
    Continue,
    /// `/undo`: drop the last exchange from what the DM remembers.
    Undo,
    /// `/reload`: re-read the whole vault now.
    Reload,
    /// `/sessions`: list saved sessions.
    Sessions,
    /// A write command (`set`, `move`, `day`, `event`, `resolve`) and its arguments: the
    /// GM changes canon directly (see [`crate::write::command`]).
    Write(String, String),
    /// `/accept [N ...]`: apply the DM's pending proposals (all, or these numbers).
    Accept(Vec<usize>),
    /// `/reject [N ...]`: drop the DM's pending proposals (all, or these numbers).
    Reject(Vec<usize>),
    /// `/edit N <command>`: replace pending proposal N with a write command and apply it
    /// (e.g. `/edit 2 /set brannock hp 12`).
    Edit(usize, String),
    /// `/pending`: list the DM's pending proposals.
    Pending,
    /// `/revert`: undo the last applied change set (if its notes did not change since).
    Revert,
    /// A command whose arguments could not be read, and why.
    Bad(String),
    /// `/help` (`/?`): the list of commands.
    Help,
    /// `/quit` (`/exit`, `/q`): leave.
    Quit,
    /// Anything else after a `/`: the name as typed, for the error.
    Unknown(String),
}

/// The commands, one line each, for `/help`.
pub(crate) const HELP: &str = "\
/context [message]  what the next message would inject, with the reasons
/full               send the full session context with the next message
/roll 2d6+3         roll dice; the result rides along with your next message
/continue           ask the DM to go on with a reply that was cut off
/undo               drop the last exchange from what the DM remembers (the log keeps it)
/reload             re-read the whole vault now
/sessions           list saved sessions
/set <who> <field> <value>   change canon: /set brannock hp 15, /set ida marsh status dead
/move <who|party> <place>    /move party the assay office
/day [+N|N] [time]           /day +1 morning
/event <text>                add to today's timeline
/resolve <thread>            mark a thread resolved
/pending            the DM's proposed canon changes, numbered
/accept [N ...]     apply them (all, or these)
/reject [N ...]     drop them (all, or these)
/edit N /set ...    replace proposal N with your own change and apply it
/revert             undo the last applied change set (/undo is the last exchange)
/help               this help
/quit               leave (Ctrl-D works too)
Ctrl-C cancels a reply in flight; the part that arrived is kept.";

/// Reads a line typed at the table.
pub(crate) fn parse(line: &str) -> Input {
    let line = line.trim();
    if line.is_empty() {
        return Input::Empty;
    }
    let Some(cmd) = line.strip_prefix('/') else {
        return Input::Message(line.to_string());
    };
    let (name, rest) = cmd
        .split_once(char::is_whitespace)
        .map_or((cmd, ""), |(n, r)| (n, r.trim()));
    let arg = (!rest.is_empty()).then(|| rest.to_string());
    Input::Command(match name.to_lowercase().as_str() {
        "context" => Command::Context(arg),
        "full" => Command::Full,
        "roll" | "r" => Command::Roll(rest.to_string()),
        "continue" => Command::Continue,
        "undo" => Command::Undo,
        "reload" => Command::Reload,
        "sessions" => Command::Sessions,
        "set" | "move" | "day" | "event" | "resolve" => {
            Command::Write(name.to_lowercase(), rest.to_string())
        }
        "accept" => numbers(rest).map_or_else(Command::Bad, Command::Accept),
        "reject" => numbers(rest).map_or_else(Command::Bad, Command::Reject),
        "edit" => match rest.split_once(char::is_whitespace) {
            Some((n, cmd)) if n.parse::<usize>().is_ok_and(|n| n > 0) => {
                Command::Edit(n.parse().unwrap_or(1), cmd.trim().to_string())
            }
            _ => Command::Bad("usage: /edit N /set <who> <field> <value>".into()),
        },
        "pending" | "proposals" => Command::Pending,
        "revert" => Command::Revert,

        "help" | "?" => Command::Help,
        "quit" | "exit" | "q" => Command::Quit,
        _ => Command::Unknown(name.to_string()),
    })
}

/// Reads `1 3 4` (or `1,3`) as proposal numbers; nothing means all.
fn numbers(rest: &str) -> Result<Vec<usize>, String> {
    rest.split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .map(|w| {
            w.parse::<usize>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("\"{w}\" is not a proposal number (see /pending)"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn cmd(c: Command) -> Input {
        Input::Command(c)
    }

    #[rstest]
    #[case::context("/context", cmd(Command::Context(None)))]
    #[case::context_message("/context we run for the gate", cmd(Command::Context(Some("we run for the gate".into()))))]
    #[case::full("/full", cmd(Command::Full))]
    #[case::roll("/roll 2d6+3", cmd(Command::Roll("2d6+3".into())))]
    #[case::roll_short("/r d20", cmd(Command::Roll("d20".into())))]
    #[case::roll_spaced("/roll 2d6 + 3", cmd(Command::Roll("2d6 + 3".into())))]
    #[case::roll_nothing("/roll", cmd(Command::Roll(String::new())))]
    #[case::continue_("/continue", cmd(Command::Continue))]
    #[case::continue_ignores_words("/continue please", cmd(Command::Continue))]
    #[case::undo("/undo", cmd(Command::Undo))]
    #[case::reload("/reload", cmd(Command::Reload))]
    #[case::sessions("/sessions", cmd(Command::Sessions))]
    #[case::help("/help", cmd(Command::Help))]
    #[case::help_short("/?", cmd(Command::Help))]
    #[case::quit("/quit", cmd(Command::Quit))]
    #[case::exit("/exit", cmd(Command::Quit))]
    #[case::q("/q", cmd(Command::Quit))]
    #[case::set("/set brannock hp 15", cmd(Command::Write("set".into(), "brannock hp 15".into())))]
    #[case::set_shouted("/SET Kit gold +5", cmd(Command::Write("set".into(), "Kit gold +5".into())))]
    #[case::move_("/move party the assay office", cmd(Command::Write("move".into(), "party the assay office".into())))]
    #[case::day("/day +1 morning", cmd(Command::Write("day".into(), "+1 morning".into())))]
    #[case::accept_all("/accept", cmd(Command::Accept(vec![])))]
    #[case::accept_some("/accept 2, 3", cmd(Command::Accept(vec![2, 3])))]
    #[case::reject_bad("/reject x", cmd(Command::Bad("\"x\" is not a proposal number (see /pending)".into())))]
    #[case::edit("/edit 2 /set brannock hp 12", cmd(Command::Edit(2, "/set brannock hp 12".into())))]
    #[case::revert("/revert", cmd(Command::Revert))]
    fn each_command(#[case] line: &str, #[case] want: Input) {
        assert_eq!(parse(line), want, "{line:?}");
    }

    #[rstest]
    #[case::capitalised("/Quit", cmd(Command::Quit))]
    #[case::shouted("/ROLL 1d4", cmd(Command::Roll("1d4".into())))]
    #[case::argument_keeps_its_case("/context Ask MARLENA", cmd(Command::Context(Some("Ask MARLENA".into()))))]
    #[case::around("   /undo  ", cmd(Command::Undo))]
    #[case::tab("/roll\t2d6", cmd(Command::Roll("2d6".into())))]
    #[case::many_spaces("/context    the docks  ", cmd(Command::Context(Some("the docks".into()))))]
    #[case::blank_argument("/context   ", cmd(Command::Context(None)))]
    fn case_and_whitespace(#[case] line: &str, #[case] want: Input) {
        assert_eq!(parse(line), want, "{line:?}");
    }

    #[rstest]
    #[case::unknown("/dance", "dance")]
    #[case::unknown_keeps_case("/Dance wildly", "Dance")]
    #[case::glued("/continuefoo", "continuefoo")]
    #[case::slash_alone("/", "")]
    #[case::space_after_slash("/ quit", "")]
    fn unknown_commands_are_never_messages(#[case] line: &str, #[case] name: &str) {
        assert_eq!(parse(line), cmd(Command::Unknown(name.into())), "{line:?}");
    }

    #[rstest]
    #[case::plain("I open the door.", "I open the door.")]
    #[case::trimmed("  what now?  \n", "what now?")]
    #[case::slash_inside("and/or the gate", "and/or the gate")]
    #[case::resume_word("continue", "continue")]
    fn messages(#[case] line: &str, #[case] want: &str) {
        assert_eq!(parse(line), Input::Message(want.into()));
    }

    #[rstest]
    #[case("")]
    #[case("   ")]
    #[case("\t\n")]
    fn blank_lines(#[case] line: &str) {
        assert_eq!(parse(line), Input::Empty);
    }

    #[test]
    fn help_names_every_command() {
        for name in [
            "/context",
            "/full",
            "/roll",
            "/continue",
            "/undo",
            "/reload",
            "/sessions",
            "/set",
            "/move",
            "/day",
            "/event",
            "/resolve",
            "/pending",
            "/accept",
            "/reject",
            "/edit",
            "/revert",
            "/help",
            "/quit",
        ] {
            assert!(HELP.contains(name), "{name}");
            assert!(
                !matches!(parse(name), Input::Command(Command::Unknown(_))),
                "{name}"
            );
        }
    }
}
