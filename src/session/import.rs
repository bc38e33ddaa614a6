//! Bringing exchanges in from elsewhere: JSON Lines of `{"player": …, "dm": …}` (one
//! exchange per line), or a SillyTavern chat export (`.jsonl`: a header line, then one
//! message per line with `is_user` and `mes`). A GM brings an old campaign in, and the
//! memory benchmark replays a scripted session.

use super::record::Record;
use super::{SessionError, Store};
use crate::llm::Reply;

/// One imported exchange.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imported {
    /// What the player said.
    pub player: String,
    /// What the DM answered.
    pub dm: String,
}

/// Reads exchanges from the text of an import file. Lines that are neither form are
/// reported with their number; a file with none is an error.
pub fn parse(text: &str) -> Result<(Vec<Imported>, Vec<String>), String> {
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    let mut pending_user: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let v: serde_json::Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                warnings.push(format!("line {}: not JSON ({e}); skipped", i + 1));
                continue;
            }
        };
        let s = |k: &str| {
            v.get(k)
                .and_then(serde_json::Value::as_str)
                .map(str::to_string)
        };
        if let (Some(p), Some(d)) = (s("player"), s("dm")) {
            out.push(Imported { player: p, dm: d });
        } else if let Some(mes) = s("mes") {
            // SillyTavern: user messages, then the character's reply.
            let is_user = v
                .get("is_user")
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(false);
            let system = v
                .get("is_system")
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(false);
            if system {
                continue;
            }
            if is_user {
                if let Some(prev) = pending_user.take() {
                    out.push(Imported {
                        player: prev,
                        dm: String::new(),
                    });
                }
                pending_user = Some(mes);
            } else {
                match pending_user.take() {
                    Some(p) => out.push(Imported { player: p, dm: mes }),
                    // A greeting before the first user message: an exchange with no words.
                    None => out.push(Imported {
                        player: String::new(),
                        dm: mes,
                    }),
                }
            }
        } else if v.get("user_name").is_some() || v.get("chat_metadata").is_some() {
            // SillyTavern's header line.
        } else if v.get("probe").is_some() {
            // Not an exchange (the memory benchmark's probes): skipped quietly.
        } else {
            warnings.push(format!(
                "line {}: neither {{\"player\", \"dm\"}} nor a SillyTavern message; skipped",
                i + 1
            ));
        }
    }
    if let Some(p) = pending_user {
        out.push(Imported {
            player: p,
            dm: String::new(),
        });
    }
    if out.is_empty() {
        return Err("no exchange found (expected JSON Lines of {\"player\": …, \"dm\": …} or a SillyTavern chat export)".into());
    }
    Ok((out, warnings))
}

impl Store {
    /// Appends imported exchanges to the session, each as a player and a DM record.
    pub fn import(&mut self, exchanges: &[Imported]) -> Result<usize, SessionError> {
        for e in exchanges {
            self.append(Record::player(e.player.clone(), None, None))?;
            let reply = Reply {
                text: e.dm.clone(),
                complete: true,
                ..Reply::default()
            };
            self.append(Record::dm(&reply, "import", "import"))?;
        }
        Ok(exchanges.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_formats() {
        let (x, w) = parse("{\"player\": \"hi\", \"dm\": \"hello\"}\n\n{\"turn\": 2, \"player\": \"a\", \"dm\": \"b\"}\n").expect("jsonl");
        assert_eq!(x.len(), 2);
        assert!(w.is_empty());
        let st = "{\"user_name\":\"GM\",\"character_name\":\"DM\"}\n{\"name\":\"DM\",\"is_user\":false,\"mes\":\"Welcome.\"}\n{\"name\":\"GM\",\"is_user\":true,\"mes\":\"I enter.\"}\n{\"name\":\"DM\",\"is_user\":false,\"mes\":\"It is dark.\"}\n";
        let (x, _) = parse(st).expect("sillytavern");
        assert_eq!(
            x,
            vec![
                Imported {
                    player: String::new(),
                    dm: "Welcome.".into()
                },
                Imported {
                    player: "I enter.".into(),
                    dm: "It is dark.".into()
                }
            ]
        );
        assert!(parse("nonsense\n").is_err());
        let (_, w) = parse("{\"player\":\"a\",\"dm\":\"b\"}\n{oops\n").expect("one good");
        assert_eq!(w.len(), 1);
    }
}
