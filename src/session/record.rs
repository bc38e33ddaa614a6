//! One line of a session log, and how a list of them becomes prompt history.

use chrono::{DateTime, FixedOffset};
use serde::{Deserialize, Serialize};

use crate::llm::prompt::{
    clip_for_history, Exchange, MAX_HISTORY_CONTEXT_CHARS, MAX_HISTORY_TEXT_CHARS,
};
use crate::llm::{CutOff, Reply, Usage};

/// Who a record is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RecordRole {
    /// The players (as typed by the GM).
    Player,
    /// The LLM Dungeon Master.
    Dm,
    /// vaultdm itself (markers such as undo).
    System,
}

/// How much canon was injected with a player message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ContextMode {
    /// The full context block; kept in prompt history.
    Full,
    /// Light lines / mention cards for this turn only; not kept in history.
    Light,
}

/// A system marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SystemEvent {
    /// `/undo`: drop the last exchange from prompt history (nothing is deleted on disk).
    Undo,
    /// `vaultdm session exclude`: from here on the session stays out of campaign memory (other
    /// sessions' recall and "Previously"); its own play is unchanged.
    Exclude,
    /// `vaultdm session include`: the session is back in campaign memory.
    Include,
    /// A marker written by a newer vaultdm; ignored.
    #[serde(other)]
    Unknown,
}

fn yes() -> bool {
    true
}

/// One JSONL record. Fields other than `time` and `role` default when missing, so older or
/// hand-edited logs still load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// When it was written (RFC 3339).
    pub time: DateTime<FixedOffset>,
    /// Who.
    pub role: RecordRole,
    /// What was said (empty for markers).
    #[serde(default)]
    pub text: String,
    /// For player records: the context sent with the message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub injected_context: Option<String>,
    /// For player records: full or light context (`null` when none).
    #[serde(default)]
    pub mode: Option<ContextMode>,
    /// For DM records: provider name.
    #[serde(default)]
    pub provider: Option<String>,
    /// For DM records: model name.
    #[serde(default)]
    pub model: Option<String>,
    /// For DM records: token usage, if reported.
    #[serde(default)]
    pub usage: Option<Usage>,
    /// For DM records: the protocol's end event arrived.
    #[serde(default = "yes")]
    pub complete: bool,
    /// For DM records: the GM interrupted the reply.
    #[serde(default)]
    pub interrupted: bool,
    /// For incomplete DM records: why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_off: Option<CutOff>,
    /// For system records: which marker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<SystemEvent>,
}

fn now() -> DateTime<FixedOffset> {
    chrono::Local::now().fixed_offset()
}

impl Record {
    fn base(role: RecordRole) -> Self {
        Self {
            time: now(),
            role,
            text: String::new(),
            injected_context: None,
            mode: None,
            provider: None,
            model: None,
            usage: None,
            complete: true,
            interrupted: false,
            cut_off: None,
            event: None,
        }
    }

    /// A player message and the context injected with it.
    pub fn player(
        text: impl Into<String>,
        context: Option<String>,
        mode: Option<ContextMode>,
    ) -> Self {
        let context = context.filter(|c| !c.trim().is_empty());
        Self {
            text: text.into(),
            mode: if context.is_some() { mode } else { None },
            injected_context: context,
            ..Self::base(RecordRole::Player)
        }
    }

    /// The DM's reply (complete or partial) as returned by [`crate::llm`].
    pub fn dm(reply: &Reply, provider: &str, model: &str) -> Self {
        Self {
            text: reply.text.clone(),
            provider: Some(provider.to_owned()),
            model: Some(model.to_owned()),
            usage: reply.usage,
            complete: reply.complete,
            interrupted: reply.interrupted(),
            cut_off: if reply.complete { None } else { reply.cut_off },
            ..Self::base(RecordRole::Dm)
        }
    }

    /// The `/undo` marker.
    pub fn undo() -> Self {
        Self {
            event: Some(SystemEvent::Undo),
            ..Self::base(RecordRole::System)
        }
    }

    /// The marker `session exclude` (`true`) or `session include` (`false`) writes.
    pub fn memory(excluded: bool) -> Self {
        Self {
            event: Some(if excluded {
                SystemEvent::Exclude
            } else {
                SystemEvent::Include
            }),
            ..Self::base(RecordRole::System)
        }
    }

    /// Whether this is an undo marker.
    pub fn is_undo(&self) -> bool {
        self.role == RecordRole::System && self.event == Some(SystemEvent::Undo)
    }
}

/// Whether the GM left a session out of campaign memory: its last exclude or include marker
/// says so (none: it is in).
pub fn excluded(records: &[Record]) -> bool {
    records
        .iter()
        .rev()
        .filter(|r| r.role == RecordRole::System)
        .find_map(|r| match r.event {
            Some(SystemEvent::Exclude) => Some(true),
            Some(SystemEvent::Include) => Some(false),
            _ => None,
        })
        .unwrap_or(false)
}

/// Rebuild prompt history from a session log.
///
/// A player record followed by a DM record makes one [`Exchange`]; its context is kept only
/// if it was full context. A player record with no reply (the request failed) is left out —
/// and replaced if another player record follows. Each undo marker removes the pending
/// unanswered player message if there is one, else the last exchange.
pub fn history_from_records(records: &[Record]) -> Vec<Exchange> {
    let mut history: Vec<Exchange> = Vec::new();
    let mut pending: Option<(&str, Option<&str>)> = None;
    for r in records {
        match r.role {
            RecordRole::Player => {
                let full = match r.mode {
                    Some(ContextMode::Full) => r.injected_context.as_deref(),
                    _ => None,
                };
                pending = Some((&r.text, full));
            }
            RecordRole::Dm => {
                if let Some((player, full)) = pending.take() {
                    history.push(Exchange {
                        player: clip_for_history(player, MAX_HISTORY_TEXT_CHARS),
                        dm: clip_for_history(&r.text, MAX_HISTORY_TEXT_CHARS),
                        full_context: full.map(|c| clip_for_history(c, MAX_HISTORY_CONTEXT_CHARS)),
                    });
                }
            }
            RecordRole::System => {
                if r.is_undo() && pending.take().is_none() {
                    history.pop();
                }
            }
        }
    }
    history
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(text: &str, complete: bool) -> Reply {
        Reply {
            text: text.into(),
            complete,
            cut_off: (!complete).then_some(CutOff::Interrupted),
            ..Reply::default()
        }
    }

    #[test]
    fn serialises_to_the_documented_shape() {
        let r = Record::dm(&reply("Hi", false), "openai", "llama3.1");
        let v: serde_json::Value = serde_json::to_value(&r).unwrap_or_default();
        for key in [
            "time",
            "role",
            "text",
            "mode",
            "provider",
            "model",
            "usage",
            "complete",
            "interrupted",
        ] {
            assert!(v.get(key).is_some(), "missing {key}: {v}");
        }
        assert_eq!(v["role"], "dm");
        assert_eq!(v["interrupted"], true);
        assert_eq!(v["complete"], false);
        assert_eq!(v["mode"], serde_json::Value::Null);
        let u: serde_json::Value = serde_json::to_value(Record::undo()).unwrap_or_default();
        assert_eq!(
            (u["role"].as_str(), u["event"].as_str()),
            (Some("system"), Some("undo"))
        );
    }

    #[test]
    fn minimal_and_future_records_load() {
        let r: Record = serde_json::from_str(r#"{"time":"2026-11-22T20:00:00+01:00","role":"system","event":"bookmark","new_field":1}"#)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.event, Some(SystemEvent::Unknown));
        assert!(r.complete);
    }

    #[test]
    fn history_rules() {
        let records = vec![
            Record::player("a", Some("FULL".into()), Some(ContextMode::Full)),
            Record::dm(&reply("A", true), "p", "m"),
            Record::player("b", Some("light".into()), Some(ContextMode::Light)),
            Record::dm(&reply("B", false), "p", "m"),
            Record::player("failed", None, None),
            Record::player("c", None, None),
            Record::dm(&reply("C", true), "p", "m"),
            Record::undo(),
            Record::player("d", None, None),
            Record::undo(),
            Record::dm(&reply("orphan", true), "p", "m"),
        ];
        let h = history_from_records(&records);
        assert_eq!(h.len(), 2);
        assert_eq!(h[0].full_context.as_deref(), Some("FULL"));
        assert_eq!(
            (
                h[1].player.as_str(),
                h[1].dm.as_str(),
                h[1].full_context.as_deref()
            ),
            ("b", "B", None)
        );
    }
}
