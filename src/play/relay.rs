//! A turn whose conversation a front end keeps (`vaultdm serve`).
//!
//! In `chat` the session log is the conversation. Behind `serve`, a front end (SillyTavern,
//! Open WebUI, an Obsidian chat plugin) keeps it and sends it whole with every request; its
//! messages are the truth, swipes and edits included. The table still builds the context,
//! records the exchange and takes the DM's proposals, but the prompt is the front end's own
//! messages, in their order, with two things added:
//!
//! * vaultdm's system prompt first (stable), then the front end's system text;
//! * the canon: on the user message where this session once sent the full context, that
//!   context again, byte for byte as it was sent (the model keeps the canon and the prompt
//!   prefix stays the same for the provider's cache), and on the new message the context this
//!   message needs. Full or light is decided from the request: no earlier DM turn, a resume
//!   command, no earlier message that carried the full context, or enough canon changes
//!   since → full.

use super::{Prepared, SendError, Table, Turn};
use crate::llm::prompt::Exchange;
use crate::llm::{ChatMessage, CutOff, LlmClient, Role};
use crate::session::{ContextMode, RecordRole};
use std::collections::HashMap;
use std::future::Future;

/// Adjacent messages of one role become one (some front ends send two user messages in a
/// row; the Anthropic API refuses them) and empty ones go.
pub(crate) fn merge_turns(messages: &[ChatMessage]) -> Vec<ChatMessage> {
    let mut out: Vec<ChatMessage> = Vec::with_capacity(messages.len());
    for m in messages {
        if m.content.trim().is_empty() {
            continue;
        }
        match out.last_mut() {
            Some(last) if last.role == m.role => {
                last.content.push_str("\n\n");
                last.content.push_str(&m.content);
            }
            _ => out.push(m.clone()),
        }
    }
    out
}

impl Table {
    /// The full context blocks this session sent, by the player message they came with.
    fn full_contexts(&self) -> HashMap<&str, &str> {
        self.store
            .records()
            .iter()
            .filter(|r| r.role == RecordRole::Player && r.mode == Some(ContextMode::Full))
            .filter_map(|r| Some((r.text.trim(), r.injected_context.as_deref()?)))
            .collect()
    }

    /// The front end's earlier messages (merged, no system ones) as exchanges, each with
    /// the full context it carried when this session sent it.
    fn exchanges_of(&self, earlier: &[ChatMessage]) -> Vec<Exchange> {
        let full = self.full_contexts();
        let mut out: Vec<Exchange> = Vec::new();
        for m in earlier {
            match m.role {
                Role::User => out.push(Exchange {
                    player: m.content.clone(),
                    dm: String::new(),
                    full_context: full.get(m.content.trim()).map(|c| (*c).to_owned()),
                }),
                Role::Assistant => match out.last_mut() {
                    Some(e) if e.dm.is_empty() => e.dm = m.content.clone(),
                    _ => out.push(Exchange {
                        dm: m.content.clone(),
                        ..Exchange::default()
                    }),
                },
            }
        }
        out
    }

    /// Builds what a front end's message would carry, without sending or recording:
    /// `earlier` are its messages before `message` (user and assistant, merged), `system`
    /// its own system text.
    pub fn prepare_relay(
        &mut self,
        message: &str,
        earlier: &[ChatMessage],
        system: &str,
    ) -> Result<Prepared, super::PlayError> {
        let history = self.exchanges_of(earlier);
        let mut prepared =
            self.prepare_over(message, super::recall::Over::FrontEnd(&history), false)?;
        let mut messages = Vec::with_capacity(earlier.len() + 1);
        let mut history = history.iter();
        for m in earlier {
            let content = match m.role {
                Role::User => {
                    let e = history.find(|e| !e.player.is_empty());
                    match e.and_then(|e| e.full_context.as_deref()) {
                        Some(c) => format!("{}\n\n{}", c.trim_end(), m.content),
                        None => m.content.clone(),
                    }
                }
                Role::Assistant => m.content.clone(),
            };
            messages.push(ChatMessage {
                role: m.role,
                content,
            });
        }
        let mut context = prepared.block.trim_end().to_owned();
        let layers = prepared.memory.block();
        if !layers.trim().is_empty() {
            if !context.is_empty() {
                context.push_str("\n\n");
            }
            context.push_str(layers.trim_end());
        }
        messages.push(ChatMessage::user(if context.is_empty() {
            message.to_owned()
        } else {
            format!("{context}\n\n{message}")
        }));
        prepared.request.messages = messages;
        if !system.trim().is_empty() {
            prepared.request.system =
                format!("{}\n\n{}", self.canon.system.trim_end(), system.trim());
        }
        Ok(prepared)
    }

    /// Sends a front end's message through `client` (the upstream model it asked for) and
    /// records the exchange in this session: [`Table::send`] with the conversation the front
    /// end keeps. See the module docs for the prompt.
    pub async fn relay<C: Future<Output = CutOff>>(
        &mut self,
        message: &str,
        earlier: &[ChatMessage],
        system: &str,
        client: LlmClient,
        on_token: &mut (dyn FnMut(&str) + Send),
        cancel: C,
    ) -> Result<Turn, SendError> {
        let prepared = match self.prepare_relay(message, earlier, system) {
            Ok(p) => p,
            Err(error) => return Err(self.unsent(message, error)),
        };
        let kept = self.client.replace(client);
        let turn = self
            .send_prepared(message, prepared, on_token, cancel)
            .await;
        self.client = kept;
        turn
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adjacent_turns_merge_and_empty_ones_go() {
        let m = merge_turns(&[
            ChatMessage::assistant("Welcome."),
            ChatMessage::user("a"),
            ChatMessage::user(" "),
            ChatMessage::user("b"),
            ChatMessage::assistant("c"),
        ]);
        assert_eq!(
            m,
            vec![
                ChatMessage::assistant("Welcome."),
                ChatMessage::user("a\n\nb"),
                ChatMessage::assistant("c"),
            ]
        );
    }
}
