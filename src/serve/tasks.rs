//! Front ends' background tasks: requests that are not play.
//!
//! Open WebUI asks the chat's own model for a title, tags and follow-up questions after a
//! reply (on by default), and for search queries, an autocompletion or an emoji when those
//! features are on; SillyTavern's quiet prompts summarise the chat, classify a character's
//! emotion, write the player's next line or an image prompt. Played as turns, each would get
//! the DM prompt, the canon and the write-back tool, a session of its own (two notes in the
//! vault's `sessions/` folder), and its prompt would enter campaign memory.
//!
//! [`recognise`] tells them apart, from the request as it arrived (before it is read as a
//! turn: SillyTavern sends its quiet prompt as a trailing `system` message), by the table
//! [`PATTERNS`] — one place, one doc line per front-end prompt — or by a task name in the
//! session header (Open WebUI's `{{TASK}}`) or the body's `metadata.task`. The proxy passes
//! a task upstream as it came: no canon, no tools, no session, no memory.

use serde_json::Value;

/// A recognised background task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Task {
    /// What it is (`title_generation`, `sillytavern-summary`, …).
    pub name: String,
}

/// How a task prompt is known: all of `all` appear in the text (case-insensitive).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pattern {
    /// The task's name.
    pub name: &'static str,
    /// Pieces of its default template that all appear in it.
    pub all: &'static [&'static str],
}

/// Task prompts of the front ends vaultdm is used with, from their default templates. A GM's
/// own template keeps these pieces as long as it keeps the front end's markers (Open WebUI's
/// `### Task:` and `<chat_history>`).
pub(crate) const PATTERNS: &[Pattern] = &[
    Pattern {
        name: "openwebui-task",
        // Open WebUI: title, tags, follow-ups, search/RAG queries, image prompt (`### Task:` over `<chat_history>`)
        all: &["### task:", "<chat_history>"],
    },
    Pattern {
        name: "openwebui-autocomplete",
        // Open WebUI: autocompletion of the message being typed (`<type>` and `<text>`)
        all: &["### task:", "autocompletion system"],
    },
    Pattern {
        name: "openwebui-emoji",
        // Open WebUI: the emoji for a message (call mode)
        all: &["facial expression", "fitting emoji"],
    },
    Pattern {
        name: "openwebui-tools",
        // Open WebUI: choosing a tool for the query (function calling, default mode)
        all: &["available tools:", "choose and return the correct tool"],
    },
    Pattern {
        name: "openwebui-moa",
        // Open WebUI: merging the responses of several models (mixture of agents)
        all: &["set of responses from various models"],
    },
    Pattern {
        name: "sillytavern-summary",
        // SillyTavern Summarize extension: the story so far in N words
        all: &["summarize the most important facts and events"],
    },
    Pattern {
        name: "sillytavern-expression",
        // SillyTavern Character Expressions (LLM classifier): one emotion label
        all: &["classify the emotion of the last message"],
    },
    Pattern {
        name: "sillytavern-impersonate",
        // SillyTavern Impersonate: the player's next line, written for them
        all: &[
            "write your next reply from the point of view of",
            "chat history so far as a guideline",
        ],
    },
    Pattern {
        name: "sillytavern-image-prompt",
        // SillyTavern Image Generation: keywords describing a scene or character
        all: &["comma-delimited list of keywords"],
    },
    Pattern {
        name: "librechat-title",
        // LibreChat: the conversation's title
        all: &["5-word-or-less title for the conversation"],
    },
];

/// Open WebUI's task names (its `TASKS`), as `{{TASK}}` gives them in a header and its
/// `metadata.task` in a body.
pub(crate) const OPEN_WEBUI_TASKS: &[&str] = &[
    "title_generation",
    "follow_up_generation",
    "tags_generation",
    "emoji_generation",
    "query_generation",
    "image_prompt_generation",
    "autocomplete_generation",
    "function_calling",
    "moa_response_generation",
];

/// The task a front end's task name in a session header stands for: the header ends with
/// one of [`OPEN_WEBUI_TASKS`] (`owui-<chat>-title_generation`).
pub(crate) fn of_session_header(header: &str) -> Option<Task> {
    let h = header.trim().to_ascii_lowercase();
    OPEN_WEBUI_TASKS
        .iter()
        .find(|t| h.ends_with(*t))
        .map(|t| Task {
            name: (*t).to_owned(),
        })
}

/// The text of a message's content (a string, or the text parts of a list).
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| match p {
                Value::String(s) => Some(s.as_str()),
                Value::Object(o) => o.get("text").and_then(Value::as_str),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Whether `text` is one of [`PATTERNS`].
pub(crate) fn of_prompt(text: &str) -> Option<Task> {
    let lower = text.to_lowercase();
    PATTERNS
        .iter()
        .find(|p| p.all.iter().all(|piece| lower.contains(piece)))
        .map(|p| Task {
            name: p.name.to_owned(),
        })
}

/// Whether a request is a background task: by the session header's task name, the body's
/// `metadata.task`, or its last message (any role) or its first system message matching
/// [`PATTERNS`].
pub(crate) fn recognise(body: &Value, session_header: Option<&str>) -> Option<Task> {
    if let Some(t) = session_header.and_then(of_session_header) {
        return Some(t);
    }
    if let Some(t) = body
        .get("metadata")
        .and_then(|m| m.get("task"))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        return Some(Task { name: t.to_owned() });
    }
    let messages = body.get("messages")?.as_array()?;
    let last = messages.last().and_then(|m| m.get("content")).map(text)?;
    if let Some(t) = of_prompt(&last) {
        return Some(t);
    }
    // A template may put its instructions in the system message and the history after it.
    let system = messages
        .iter()
        .find(|m| matches!(m.get("role").and_then(Value::as_str), Some("system")))
        .and_then(|m| m.get("content"))
        .map(text)?;
    of_prompt(&system)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    /// Open WebUI's default title prompt (v0.6), filled in.
    pub(super) const OWUI_TITLE: &str = "### Task:\nGenerate a concise, 3-5 word title with an emoji summarizing the chat history.\n### Guidelines:\n- The title should clearly represent the main theme or subject of the conversation.\n### Output:\nJSON format: { \"title\": \"your concise title here\" }\n### Chat History:\n<chat_history>\nUSER: We enter the Brass Canary.\nASSISTANT: Odessa looks up.\n</chat_history>";

    #[rstest]
    #[case(OWUI_TITLE, "openwebui-task")]
    #[case("### Task:\nSuggest 3-5 relevant follow-up questions or prompts that the user might naturally ask next in this conversation as a **user**, based on the chat history...\n### Chat History:\n<chat_history>\nUSER: hi\n</chat_history>", "openwebui-task")]
    #[case("### Task:\nGenerate 1-3 broad tags categorizing the main themes of the chat history...\n<chat_history>\n</chat_history>", "openwebui-task")]
    #[case("### Task:\nAnalyze the chat history to determine the necessity of generating search queries...\n<chat_history>\n</chat_history>", "openwebui-task")]
    #[case("### Task:\nYou are an autocompletion system. Continue the text in `<text>` based on the **completion type** in `<type>`", "openwebui-autocomplete")]
    #[case("Your task is to reflect the speaker's likely facial expression through a fitting emoji.\nMessage: ```hi```", "openwebui-emoji")]
    #[case("Available Tools: []\n\nYour task is to choose and return the correct tool(s) from the list of available tools based on the query.", "openwebui-tools")]
    #[case("You have been provided with a set of responses from various models to the latest user query", "openwebui-moa")]
    #[case("Ignore previous instructions. Summarize the most important facts and events in the story so far.", "sillytavern-summary")]
    #[case("[Pause your roleplay. Summarize the most important facts and events that have happened in the chat so far.]", "sillytavern-summary")]
    #[case("Ignore previous instructions. Classify the emotion of the last message. Output just one word", "sillytavern-expression")]
    #[case("[Write your next reply from the point of view of Mira, using the chat history so far as a guideline for the writing style of Mira.]", "sillytavern-impersonate")]
    #[case("[In the next response I want you to provide only a detailed comma-delimited list of keywords and phrases]", "sillytavern-image-prompt")]
    #[case("Please generate a concise, 5-word-or-less title for the conversation, using its same language", "librechat-title")]
    fn task_prompts_are_recognised(#[case] prompt: &str, #[case] name: &str) {
        assert_eq!(of_prompt(prompt).map(|t| t.name).as_deref(), Some(name));
    }

    #[rstest]
    #[case("We walk into the Brass Canary and look for Odessa Flint.")]
    #[case("### Task: I search the desk")]
    #[case("I summarize what we know so far for the party.")]
    #[case("What is the chat history of the Brass Canary?")]
    fn play_is_not_a_task(#[case] prompt: &str) {
        assert_eq!(of_prompt(prompt), None);
    }

    #[test]
    fn header_and_metadata_name_tasks() {
        let play = json!({"messages": [{"role": "user", "content": "We go in."}]});
        assert_eq!(recognise(&play, Some("owui-1234-")), None);
        assert_eq!(recognise(&play, Some("owui-1234")), None);
        assert_eq!(
            recognise(&play, Some("owui-1234-title_generation")).map(|t| t.name),
            Some("title_generation".into())
        );
        let meta = json!({"metadata": {"task": "tags_generation"}, "messages": []});
        assert_eq!(
            recognise(&meta, None).map(|t| t.name),
            Some("tags_generation".into())
        );
        // SillyTavern's quiet prompt comes last, as a system message.
        let st = json!({"messages": [
            {"role": "system", "content": "You are Mira."},
            {"role": "assistant", "content": "The mine bell tolls."},
            {"role": "user", "content": "We go in."},
            {"role": "system", "content": "Ignore previous instructions. Summarize the most important facts and events in the story so far."}]});
        assert_eq!(
            recognise(&st, None).map(|t| t.name),
            Some("sillytavern-summary".into())
        );
    }

    #[test]
    fn every_pattern_has_pieces_in_lower_case() {
        for p in PATTERNS {
            assert!(!p.all.is_empty(), "{}", p.name);
            for piece in p.all {
                assert_eq!(*piece, piece.to_lowercase(), "{}", p.name);
            }
        }
    }
}
