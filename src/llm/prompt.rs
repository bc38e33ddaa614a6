//! Prompt layout: system prompt, trimmed history, and the current message with its context.
//!
//! The layout is designed for prompt caching and for the way canon is injected:
//!
//! * The **system prompt** is the same for the whole session, so it is a stable prefix.
//! * **Full context** (the big canon block sent at the start, or again when canon changed)
//!   stays inside the user message it was sent with, forever: re-sending history reproduces
//!   the earlier request byte for byte, so providers can serve it from their prompt cache.
//! * **Light context** lines and mention cards are only for the turn they were sent with;
//!   they are not kept in history (the [`Exchange`] has no place for them).
//! * History is trimmed to a token budget, **oldest exchanges first**, keeping a contiguous
//!   run of the newest ones. The exchange carrying the most recent full context is pinned:
//!   it is kept even when older than the trimmed window, because without it the model would
//!   lose the canon. Only if that exchange alone exceeds the budget is it dropped, and
//!   [`HistoryPlan::dropped_full_context`] says so — the caller should then send full context
//!   again with the current message.
//!
//! A user message with context is laid out as the context block, a blank line, then
//! `Player: <message>` (see [`user_message`]); without context it is just `Player: <message>`.

use super::{ChatMessage, ChatRequest};

/// One past player message and the DM's reply.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Exchange {
    /// What the player said.
    pub player: String,
    /// What the DM answered (possibly a cut-off reply; empty if nothing arrived).
    pub dm: String,
    /// The full context block sent with this player message, if it carried one.
    pub full_context: Option<String>,
}

/// Stand-in for a DM reply of which no text arrived (providers reject empty messages).
pub const NO_REPLY: &str = "(no reply)";

/// Most characters one past message (player text or DM reply) contributes to a prompt. A
/// runaway reply kept in an old session is clipped here, so any session that was written
/// can be resumed; the session log keeps every character.
pub const MAX_HISTORY_TEXT_CHARS: usize = 32_000;

/// Most characters a full context block kept in history contributes (the context budget
/// normally keeps it far smaller).
pub const MAX_HISTORY_CONTEXT_CHARS: usize = 256_000;

/// `text` as it enters prompt history: whole, or its first `max` characters and a note
/// saying how much was left out.
pub fn clip_for_history(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((at, _)) => {
            let left = text[at..].chars().count();
            format!(
                "{}\n[… {left} more characters left out of the prompt; the session log keeps them]",
                &text[..at]
            )
        }
    }
}

/// The user message: `"{context}\n\nPlayer: {message}"`, or `"Player: {message}"` when
/// `context` is empty or only whitespace.
pub fn user_message(context: &str, player: &str) -> String {
    let context = context.trim_end();
    if context.trim().is_empty() {
        format!("Player: {player}")
    } else {
        format!("{context}\n\nPlayer: {player}")
    }
}

/// Which history exchanges fit the budget.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HistoryPlan {
    /// Indices into the history of the exchanges to send, oldest first.
    pub kept: Vec<usize>,
    /// How many exchanges were left out.
    pub dropped: usize,
    /// The most recent exchange with full context had to be left out (it alone exceeds the
    /// budget): send full context again with the current message.
    pub dropped_full_context: bool,
    /// Whether the kept history contains a full context block.
    pub has_full_context: bool,
    /// Tokens used by the kept history, per the counter.
    pub tokens: usize,
}

/// Decide which exchanges to keep under `budget` tokens; see the module docs for the rules.
pub fn plan_history(
    history: &[Exchange],
    budget: usize,
    count: &dyn Fn(&str) -> usize,
) -> HistoryPlan {
    let cost = |e: &Exchange| {
        count(&user_message(
            e.full_context.as_deref().unwrap_or(""),
            &e.player,
        )) + count(dm_text(&e.dm))
    };
    let pinned = history.iter().rposition(|e| e.full_context.is_some());
    let mut used = 0usize;
    let mut keep = vec![false; history.len()];
    let mut dropped_full_context = false;
    if let Some(p) = pinned {
        let c = cost(&history[p]);
        if c <= budget {
            keep[p] = true;
            used = c;
        } else {
            dropped_full_context = true;
        }
    }
    for i in (0..history.len()).rev() {
        if Some(i) == pinned {
            continue;
        }
        let c = cost(&history[i]);
        if used + c > budget {
            break;
        }
        used += c;
        keep[i] = true;
    }
    let kept: Vec<usize> = (0..history.len()).filter(|&i| keep[i]).collect();
    HistoryPlan {
        dropped: history.len() - kept.len(),
        has_full_context: kept.iter().any(|&i| history[i].full_context.is_some()),
        kept,
        dropped_full_context,
        tokens: used,
    }
}

fn dm_text(dm: &str) -> &str {
    if dm.trim().is_empty() {
        NO_REPLY
    } else {
        dm
    }
}

/// Everything a turn's prompt is made of.
#[derive(Debug, Clone, Copy)]
pub struct PromptInput<'a> {
    /// The session's system prompt.
    pub system: &'a str,
    /// Past exchanges, oldest first.
    pub history: &'a [Exchange],
    /// What the player says now.
    pub player_message: &'a str,
    /// Context injected with this message (full or light; empty for none).
    pub context: &'a str,
    /// Token budget for the history (system prompt and current message not included).
    pub history_budget: usize,
}

/// A built request plus what trimming did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    /// Ready to send.
    pub request: ChatRequest,
    /// How the history was trimmed.
    pub plan: HistoryPlan,
}

/// Lay out the request: system prompt, kept history as alternating user/assistant
/// messages, then the current user message with its context.
pub fn build_prompt(input: &PromptInput<'_>, count: &dyn Fn(&str) -> usize) -> Prompt {
    let plan = plan_history(input.history, input.history_budget, count);
    let mut messages = Vec::with_capacity(plan.kept.len() * 2 + 1);
    for &i in &plan.kept {
        let e = &input.history[i];
        messages.push(ChatMessage::user(user_message(
            e.full_context.as_deref().unwrap_or(""),
            &e.player,
        )));
        messages.push(ChatMessage::assistant(dm_text(&e.dm)));
    }
    messages.push(ChatMessage::user(user_message(
        input.context,
        input.player_message,
    )));
    Prompt {
        request: ChatRequest {
            system: input.system.to_owned(),
            messages,
            tools: Vec::new(),
        },
        plan,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Role;
    use proptest::prelude::*;
    use rstest::rstest;

    fn words(s: &str) -> usize {
        s.split_whitespace().count()
    }

    fn ex(player: &str, dm: &str, ctx: Option<&str>) -> Exchange {
        Exchange {
            player: player.into(),
            dm: dm.into(),
            full_context: ctx.map(str::to_owned),
        }
    }

    #[rstest]
    #[case("", "hi", "Player: hi")]
    #[case("  \n", "hi", "Player: hi")]
    #[case(
        "## Canon\nBorin is a dwarf.\n",
        "hi",
        "## Canon\nBorin is a dwarf.\n\nPlayer: hi"
    )]
    fn user_message_layout(#[case] ctx: &str, #[case] msg: &str, #[case] expected: &str) {
        assert_eq!(user_message(ctx, msg), expected);
    }

    #[test]
    fn layout_with_history() {
        let history = vec![ex("a", "b", Some("CANON")), ex("c", "", None)];
        let p = build_prompt(
            &PromptInput {
                system: "SYS",
                history: &history,
                player_message: "now",
                context: "light",
                history_budget: 1000,
            },
            &words,
        );
        let m = &p.request.messages;
        assert_eq!(p.request.system, "SYS");
        assert_eq!(m.len(), 5);
        assert_eq!(m[0], ChatMessage::user("CANON\n\nPlayer: a"));
        assert_eq!(m[1], ChatMessage::assistant("b"));
        assert_eq!(m[2], ChatMessage::user("Player: c"));
        assert_eq!(m[3], ChatMessage::assistant(NO_REPLY));
        assert_eq!(m[4], ChatMessage::user("light\n\nPlayer: now"));
        assert!(p.plan.has_full_context);
    }

    #[test]
    fn trims_oldest_first_but_keeps_pinned_full_context() {
        // Each exchange costs 2 words ("Player: pN" = 2, dm = 1) + ... count precisely:
        let history = vec![
            ex("p0", "d0", None),
            ex("p1", "d1", Some("c c c")),
            ex("p2", "d2", None),
            ex("p3", "d3", None),
            ex("p4", "d4", None),
        ];
        // plain exchange: "Player: pN" (2) + "dN" (1) = 3; pinned: "c c c\n\nPlayer: p1" (5) + 1 = 6
        let plan = plan_history(&history, 12, &words);
        assert_eq!(plan.kept, vec![1, 3, 4]);
        assert_eq!(plan.dropped, 2);
        assert!(!plan.dropped_full_context);
        assert_eq!(plan.tokens, 12);
    }

    #[test]
    fn oversized_full_context_is_dropped_and_reported() {
        let history = vec![ex("p0", "d0", Some(&"w ".repeat(50))), ex("p1", "d1", None)];
        let plan = plan_history(&history, 10, &words);
        assert_eq!(plan.kept, vec![1]);
        assert!(plan.dropped_full_context);
        assert!(!plan.has_full_context);
    }

    #[test]
    fn huge_history_texts_are_clipped() {
        let big = "é".repeat(MAX_HISTORY_TEXT_CHARS + 10);
        let c = clip_for_history(&big, MAX_HISTORY_TEXT_CHARS);
        assert!(c.starts_with(&"é".repeat(MAX_HISTORY_TEXT_CHARS)));
        assert!(
            c.ends_with("10 more characters left out of the prompt; the session log keeps them]")
        );
        assert_eq!(clip_for_history("short", 5), "short");
    }

    #[test]
    fn zero_budget_sends_only_the_current_message() {
        let history = vec![ex("p0", "d0", None)];
        let p = build_prompt(
            &PromptInput {
                system: "",
                history: &history,
                player_message: "x",
                context: "",
                history_budget: 0,
            },
            &words,
        );
        assert_eq!(p.request.messages, vec![ChatMessage::user("Player: x")]);
    }

    proptest! {
        #[test]
        fn plan_respects_budget_and_alternation(
            sizes in proptest::collection::vec((1usize..20, 1usize..20, proptest::option::of(1usize..40)), 0..12),
            budget in 0usize..200,
        ) {
            let history: Vec<Exchange> = sizes
                .iter()
                .map(|(p, d, c)| ex(&"p ".repeat(*p), &"d ".repeat(*d), c.map(|n| "c ".repeat(n)).as_deref()))
                .collect();
            let plan = plan_history(&history, budget, &words);
            prop_assert!(plan.tokens <= budget);
            prop_assert!(plan.kept.windows(2).all(|w| w[0] < w[1]));
            // the newest exchanges form a contiguous kept run, apart from the pinned one
            let pinned = history.iter().rposition(|e| e.full_context.is_some());
            let others: Vec<usize> = plan.kept.iter().copied().filter(|&i| Some(i) != pinned).collect();
            if let Some(&first) = others.first() {
                prop_assert_eq!(others.len(), history.len() - first - usize::from(pinned.is_some_and(|p| p > first)));
            }
            if let Some(p) = pinned {
                prop_assert_eq!(plan.kept.contains(&p), !plan.dropped_full_context);
            }
            let p = build_prompt(&PromptInput { system: "s", history: &history, player_message: "m", context: "", history_budget: budget }, &words);
            for (i, m) in p.request.messages.iter().enumerate() {
                prop_assert_eq!(m.role, if i % 2 == 0 { Role::User } else { Role::Assistant });
            }
            prop_assert_eq!(p.request.messages.len(), plan.kept.len() * 2 + 1);
        }
    }
}
