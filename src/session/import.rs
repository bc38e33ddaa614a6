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

/// A flag as front ends write it: `true`, `"true"`, `"True"`, `1`, `"1"`, `"yes"` (and the
/// false forms). `None` when absent; `Err` with the raw text when it is none of these.
fn flag(v: &serde_json::Value, key: &str) -> Result<Option<(bool, bool)>, String> {
    use serde_json::Value;
    let Some(x) = v.get(key) else {
        return Ok(None);
    };
    // (value, whether it was written in another form than a JSON boolean)
    match x {
        Value::Null => Ok(None),
        Value::Bool(b) => Ok(Some((*b, false))),
        Value::Number(n) if n.as_f64() == Some(1.0) => Ok(Some((true, true))),
        Value::Number(n) if n.as_f64() == Some(0.0) => Ok(Some((false, true))),
        Value::String(t) => match t.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "y" => Ok(Some((true, true))),
            "false" | "0" | "no" | "n" | "" => Ok(Some((false, true))),
            _ => Err(x.to_string()),
        },
        _ => Err(x.to_string()),
    }
}

/// Reads exchanges from the text of an import file. Lines that are neither form are
/// reported with their number; a file with none is an error. What the reader had to
/// interpret is reported too: flags written as strings or numbers, a flag it could not read
/// (the speaker's name decides), player messages in a row (joined into one), a last player
/// message with no reply.
pub fn parse(text: &str) -> Result<(Vec<Imported>, Vec<String>), String> {
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    // The player's message waiting for its reply, and the line it started on.
    let mut pending_user: Option<(String, usize)> = None;
    let mut user_name: Option<String> = None;
    let mut loose_flags = 0usize;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let v: serde_json::Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                warnings.push(format!("line {n}: not JSON ({e}); skipped"));
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
            let system = match flag(&v, "is_system") {
                Ok(f) => {
                    loose_flags += usize::from(f.is_some_and(|(_, loose)| loose));
                    f.is_some_and(|(b, _)| b)
                }
                Err(raw) => {
                    warnings.push(format!(
                        "line {n}: is_system is {raw}, not true or false; read as false"
                    ));
                    false
                }
            };
            if system {
                continue;
            }
            let by_name = || {
                let name = s("name");
                name.is_some() && name == user_name
            };
            let is_user = match flag(&v, "is_user") {
                Ok(Some((b, loose))) => {
                    loose_flags += usize::from(loose);
                    b
                }
                Ok(None) => by_name(),
                Err(raw) => {
                    let b = by_name();
                    warnings.push(format!(
                        "line {n}: is_user is {raw}, not true or false; read as {} (the speaker's name {} the header's user_name)",
                        if b { "the player's" } else { "the DM's" },
                        if b { "is" } else { "is not" }
                    ));
                    b
                }
            };
            if is_user {
                pending_user = Some(match pending_user.take() {
                    Some((prev, from)) => {
                        warnings.push(format!(
                            "line {n}: a second player message with no DM reply before it (from line {from}); joined into one message"
                        ));
                        (format!("{prev}\n\n{mes}"), from)
                    }
                    None => (mes, n),
                });
            } else {
                match pending_user.take() {
                    Some((p, _)) => out.push(Imported { player: p, dm: mes }),
                    // A greeting before the first user message: an exchange with no words.
                    None => out.push(Imported {
                        player: String::new(),
                        dm: mes,
                    }),
                }
            }
        } else if v.get("user_name").is_some() || v.get("chat_metadata").is_some() {
            // SillyTavern's header line: who the user is.
            user_name = s("user_name");
        } else if v.get("probe").is_some() {
            // Not an exchange (the memory benchmark's probes): skipped quietly.
        } else {
            warnings.push(format!(
                "line {n}: neither {{\"player\", \"dm\"}} nor a SillyTavern message; skipped"
            ));
        }
    }
    if let Some((p, from)) = pending_user {
        warnings.push(format!(
            "line {from}: the last player message has no DM reply; imported with an empty one"
        ));
        out.push(Imported {
            player: p,
            dm: String::new(),
        });
    }
    if loose_flags > 0 {
        warnings.push(format!(
            "{loose_flags} is_user/is_system flag(s) were written as strings or numbers (\"true\", 1); read as the true or false they say"
        ));
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
    fn sillytavern_flags_in_any_form_and_player_turns_in_a_row() {
        let st = concat!(
            "{\"user_name\":\"Mara\",\"character_name\":\"DM\"}\n",
            "{\"name\":\"Mara\",\"is_user\":\"true\",\"mes\":\"I knock.\"}\n",
            "{\"name\":\"Mara\",\"is_user\":1,\"mes\":\"Louder.\"}\n",
            "{\"name\":\"DM\",\"is_user\":\"false\",\"mes\":\"The door opens.\"}\n",
            "{\"name\":\"DM\",\"is_system\":\"true\",\"is_user\":false,\"mes\":\"[note]\"}\n",
            "{\"name\":\"Mara\",\"is_user\":\"maybe\",\"mes\":\"I step in.\"}\n",
            "{\"name\":\"DM\",\"mes\":\"Dust.\"}\n",
            "{\"name\":\"Mara\",\"is_user\":true,\"mes\":\"Hello?\"}\n",
        );
        let (x, w) = parse(st).expect("sillytavern");
        let pairs: Vec<(&str, &str)> = x
            .iter()
            .map(|e| (e.player.as_str(), e.dm.as_str()))
            .collect();
        assert_eq!(
            pairs,
            vec![
                ("I knock.\n\nLouder.", "The door opens."),
                ("I step in.", "Dust."),
                ("Hello?", ""),
            ]
        );
        let all = w.join("\n");
        assert!(all.contains("line 3: a second player message"), "{all}");
        assert!(all.contains("line 6: is_user is \"maybe\""), "{all}");
        assert!(
            all.contains("line 8: the last player message has no DM reply"),
            "{all}"
        );
        assert!(all.contains("4 is_user/is_system flag(s)"), "{all}");
    }

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
