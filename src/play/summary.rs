//! The cold summary: when the hot history passes 80% of its budget, the exchanges beyond a
//! kept tail are summarised by the provider into a "Previously" block, merged with the
//! earlier summary and re-compressed when it grows past its share. It lives in the memory
//! note (`## Previously`), where the GM can read and correct it. A failed call never blocks
//! play: the story so far (moments) still carries the past, and the summary is tried again
//! after the next exchange. The note is only replaced once a summary arrived whole, so a
//! crash mid-summary loses nothing.

use super::Table;
use crate::llm::prompt::plan_history;
use crate::llm::{ChatMessage, ChatRequest};

/// Exchanges kept out of the summary at the end of the history (they are in the prompt).
const KEEP_TAIL: usize = 6;
/// The summary's length, in words, asked of the provider.
const SUMMARY_WORDS: usize = 250;

const SYSTEM: &str = "You keep the running summary of a tabletop roleplaying session for the Dungeon Master. Write plain prose, past tense, no headings. Keep every name, number, place, promise, debt, secret, clue and decision exact; drop small talk.";

impl Table {
    /// The summary the prompt uses: this session's, else the most recent earlier session's.
    pub(super) fn previously(
        &mut self,
        note: Option<&crate::memory::note::NoteData>,
    ) -> Option<String> {
        if let Some(n) = note.filter(|n| !n.previously.is_empty()) {
            return Some(n.previously.clone());
        }
        // The last session's summary does not change while this one runs: read it once.
        if let Some(p) = &self.mem.last_previously {
            return p.clone();
        }
        let p = self.last_session_summary();
        self.mem.last_previously = Some(p.clone());
        p
    }

    /// The most recent earlier session's cold summary, from its memory note.
    fn last_session_summary(&mut self) -> Option<String> {
        let recall = self.campaign_recall();
        {
            {
                let vault = self.store.vault();
                // Listed, not read: the latest written log first, from the recall's own table
                // of logs (brought up to date for this message, the sessions the GM left out
                // of campaign memory not in it); only sessions with a memory note are opened.
                let notes: std::collections::HashSet<std::ffi::OsString> =
                    crate::vault::boundary::list_inside(vault, std::path::Path::new("sessions"))
                        .unwrap_or_default()
                        .into_iter()
                        .collect();
                recall
                    .latest_first()
                    .into_iter()
                    .filter(|name| name != self.store.name())
                    .find_map(|name| {
                        let rel = crate::session::memory_note_rel_path(&name);
                        notes.contains(rel.file_name()?).then_some(())?;
                        let text =
                            crate::vault::boundary::read_text_inside(vault, &rel, 4 << 20).ok()?;
                        let n = crate::memory::note::parse(&text)?;
                        (!n.previously.is_empty())
                            .then(|| format!("(session {name}) {}", n.previously))
                    })
            }
        }
    }

    /// After an exchange: summarises what the hot history is about to lose, if it is time.
    /// Errors become notices; play goes on.
    pub(super) async fn summarise_if_due(&mut self) {
        if !self.mem.config.summarise {
            return;
        }
        let Some(client) = self.client.clone() else {
            return;
        };
        let history = self.store.history();
        let count = |t: &str| self.counts.count(t);
        let plan = plan_history(&history, self.budgets.history, &count);
        if plan.tokens * 5 < self.budgets.history * 4 && plan.dropped == 0 {
            return;
        }
        let note = self.read_note().unwrap_or_default();
        let end = history.len().saturating_sub(KEEP_TAIL);
        // In batches: one call per KEEP_TAIL new exchanges, not one per message (the first
        // summary of a session takes whatever there is).
        if end <= note.summarised || (note.summarised > 0 && end - note.summarised < KEEP_TAIL) {
            return;
        }
        let mut text = String::new();
        for (i, e) in history[note.summarised..end].iter().enumerate() {
            text.push_str(&format!(
                "[{}] Player: {}\nDM: {}\n",
                note.summarised + i + 1,
                e.player,
                e.dm
            ));
        }
        let ask = format!(
            "Summary so far:\n{}\n\nNew exchanges:\n{text}\nWrite the updated summary of the whole session so far in at most {SUMMARY_WORDS} words.",
            if note.previously.is_empty() { "(none yet)" } else { note.previously.as_str() }
        );
        let mut summary = match self.summary_call(&client, ask).await {
            Ok(s) => s,
            Err(e) => {
                self.notices.push(format!(
                    "the session summary could not be written ({e}); the story so far still carries the past, and the summary is tried again after the next exchange"
                ));
                return;
            }
        };
        // Re-compressed when it grew past its share.
        let share = self.mem.config.previously_tokens;
        if count(&summary) > share {
            let shorter = format!(
                "Shorten this summary to at most {} words, keeping every name and number exact:\n{summary}",
                SUMMARY_WORDS / 2
            );
            if let Ok(s) = self.summary_call(&client, shorter).await {
                summary = s;
            }
        }
        self.write_note_with(Some((summary, end)));
    }

    async fn summary_call(
        &self,
        client: &crate::llm::LlmClient,
        user: String,
    ) -> Result<String, String> {
        let req = ChatRequest {
            system: SYSTEM.into(),
            messages: vec![ChatMessage::user(user)],
            tools: Vec::new(),
        };
        let reply = client
            .stream_chat(&req, &mut |_| {}, std::future::pending::<()>())
            .await
            .map_err(|e| e.to_string())?;
        let text = reply.text.trim().to_string();
        if !reply.complete || text.is_empty() {
            return Err(reply
                .incomplete_reason()
                .unwrap_or_else(|| "the reply was empty".into()));
        }
        Ok(text)
    }
}
