//! Moments and coined terms from the provider: with `[memory] extract = true`, after each
//! exchange a small separate call asks for the exchange's moments (one line each, with a
//! significance) and the names and words it coined, as JSON. They join the memory note
//! (`## Moments`, `## Glossary`), where the GM reads and corrects them. The heuristics run
//! either way; a failed or unreadable call is a notice and never blocks play.

use super::Table;
use crate::llm::{ChatMessage, ChatRequest, LlmClient};
use crate::memory::glossary::Term;

const SYSTEM: &str =
    "You extract memory for a tabletop roleplaying session. Answer with JSON only, no prose.";

impl Table {
    /// Sets the `[memory]` settings.
    pub fn set_memory_config(&mut self, c: crate::config::MemoryConfig) {
        self.mem.config = c;
    }

    /// After an exchange, when `[memory] extract` is on and a provider is configured.
    pub(super) async fn extract_if_on(&mut self, player: &str, dm: &str) {
        if !self.mem.config.extract || dm.trim().is_empty() {
            return;
        }
        let Some(client) = self.client.clone() else {
            return;
        };
        let client = match &self.mem.config.extract_model {
            Some(m) => {
                let mut cfg = client.config().clone();
                cfg.model = m.clone();
                match LlmClient::new(cfg) {
                    Ok(c) => c,
                    Err(e) => {
                        self.notices
                            .push(format!("memory extraction is off for now ({e})"));
                        return;
                    }
                }
            }
            None => client,
        };
        let ask = format!(
            "Exchange:\nPlayer: {player}\nDM: {dm}\n\nReturn {{\"moments\": [{{\"summary\": \"one line: what changed in the story\", \"significance\": 1-5}}], \"terms\": [{{\"term\": \"a proper noun or invented word the DM coined\", \"definition\": \"one line\"}}]}}. Empty lists when nothing happened."
        );
        let req = ChatRequest {
            system: SYSTEM.into(),
            messages: vec![ChatMessage::user(ask)],
            tools: Vec::new(),
        };
        let reply = match client
            .stream_chat(&req, &mut |_| {}, std::future::pending::<()>())
            .await
        {
            Ok(r) if r.complete => r,
            Ok(r) => {
                self.notices.push(format!(
                    "memory extraction was cut off ({}); the heuristics still ran",
                    r.incomplete_reason().unwrap_or_default()
                ));
                return;
            }
            Err(e) => {
                self.notices.push(format!(
                    "memory extraction failed ({e}); the heuristics still ran"
                ));
                return;
            }
        };
        let Some(v) = json_in(&reply.text) else {
            self.notices
                .push("memory extraction answered without JSON; the heuristics still ran".into());
            return;
        };
        let turn = self.store.history().len();
        let mut moments = Vec::new();
        for m in v["moments"].as_array().into_iter().flatten() {
            let (Some(s), sig) = (
                m["summary"].as_str(),
                m["significance"].as_u64().unwrap_or(3),
            ) else {
                continue;
            };
            if sig >= 3 && !s.trim().is_empty() {
                moments.push(format!("{} (exchange {turn})", s.trim()));
            }
        }
        let mut terms = Vec::new();
        for t in v["terms"].as_array().into_iter().flatten() {
            if let (Some(term), Some(def)) = (t["term"].as_str(), t["definition"].as_str()) {
                if !term.trim().is_empty() {
                    terms.push(Term {
                        term: term.trim().to_string(),
                        sentence: def.trim().to_string(),
                        turn: turn.saturating_sub(1),
                        pinned: false,
                    });
                }
            }
        }
        self.mem.extracted_moments.extend(moments);
        self.mem.extracted_terms.extend(terms);
        self.write_note_with(None);
    }
}

/// The JSON object in a reply (models wrap it in prose or a code fence).
fn json_in(text: &str) -> Option<serde_json::Value> {
    let a = text.find('{')?;
    let b = text.rfind('}')?;
    serde_json::from_str(text.get(a..=b)?).ok()
}
