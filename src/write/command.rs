//! The GM's write commands, read into [`Change`]s: `/set <entity> <field> <value>`,
//! `/move <entity|party> <location>`, `/day [+N|N] [time]`, `/event <text>`,
//! `/resolve <thread>`. Names of several words need no quotes (`/set ida marsh status dead`):
//! the words are split where both sides make sense against canon; quotes are accepted too
//! (`/set "Ida Marsh" status dead`).

use super::change::{Change, Field};
use super::error::CommandError;
use super::resolve;
use crate::canon::model::Campaign;
use crate::mentions::Matcher;

/// A write command's name and its usage line.
pub(crate) const USAGE: &[(&str, &str)] = &[
    ("set", "/set <who> <field> <value>   e.g. /set brannock hp 15, /set \"Ida Marsh\" status dead, /set kit gold +5"),
    ("move", "/move <who|party> <place>   e.g. /move party the assay office"),
    ("day", "/day [+N|N] [time]          e.g. /day +1 morning, /day dusk"),
    ("event", "/event <text>                today's timeline, e.g. /event The telegraph wire was repaired."),
    ("resolve", "/resolve <thread>            mark a thread resolved"),
];

/// `usage: <line>` for the command `name` (see [`CommandError::Usage`]).
pub(super) fn usage(name: &str) -> String {
    USAGE
        .iter()
        .find(|(n, _)| *n == name)
        .map_or_else(String::new, |(_, u)| format!("usage: {u}"))
}

/// Splits arguments into words; `"..."` keeps spaces inside one word (`\"` is a quote
/// inside it).
pub(crate) fn words(args: &str) -> Vec<String> {
    word_spans(args).into_iter().map(|(w, _)| w).collect()
}

/// The words of `args` with the byte where each ends in `args`.
fn word_spans(args: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut had = false;
    let mut chars = args.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match quote {
            Some(q) if c == '\\' && chars.peek().is_some_and(|&(_, n)| n == q || n == '\\') => {
                if let Some((_, n)) = chars.next() {
                    cur.push(n);
                }
            }
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '"' || c == '“' || c == '”' => {
                quote = Some(if c == '“' { '”' } else { '"' });
                had = true;
            }
            None if c.is_whitespace() => {
                if !cur.is_empty() || had {
                    out.push((std::mem::take(&mut cur), i));
                    had = false;
                }
            }
            None => cur.push(c),
        }
    }
    if !cur.is_empty() || had {
        out.push((cur, args.len()));
    }
    out
}

/// The value of `/set`: the text after the field word as typed, quotes inside it kept; one
/// quoted word (`"the \"Red\" Hand"`) is that word.
fn raw_value(args: &str, field_end: usize) -> String {
    let rest = args[field_end..].trim();
    let quoted = rest.starts_with(['"', '“']) && word_spans(rest).len() == 1;
    let whole = word_spans(rest)
        .first()
        .is_some_and(|(_, end)| *end == rest.len());
    if quoted && whole {
        words(rest).join(" ")
    } else {
        rest.to_string()
    }
}

/// Reads a write command (`name` without the slash, lower-case) and its arguments into a
/// change; the error is what to tell the GM (with the usage line).
pub(crate) fn parse(
    name: &str,
    args: &str,
    c: &Campaign,
    m: &Matcher,
) -> Result<Change, CommandError> {
    let w = words(args);
    match name {
        "set" => set(&w, args, c, m),
        "move" => mv(&w, c, m),
        "day" => day(&w),
        "event" => {
            let text = args.trim();
            if text.is_empty() {
                Err(CommandError::Usage { command: "event" })
            } else {
                Ok(Change::Event {
                    text: text.to_string(),
                    day: None,
                })
            }
        }
        "resolve" => {
            let thread = w.join(" ");
            if thread.is_empty() {
                Err(CommandError::Usage { command: "resolve" })
            } else {
                Ok(Change::Resolve { thread })
            }
        }
        _ => Err(CommandError::NotACommand {
            name: name.to_string(),
        }),
    }
}

fn set(w: &[String], args: &str, c: &Campaign, m: &Matcher) -> Result<Change, CommandError> {
    // The field is the first word after at least one word of name that is a field name
    // and leaves a value after it; of several such splits, the one whose name resolves.
    let splits: Vec<usize> = (1..w.len().saturating_sub(1))
        .filter(|&k| Field::parse(&w[k]).is_some())
        .collect();
    if splits.is_empty() {
        return Err(if w.len() < 3 {
            CommandError::Usage { command: "set" }
        } else {
            CommandError::NoField { words: w.join(" ") }
        });
    }
    let pick = splits
        .iter()
        .copied()
        .find(|&k| resolve::entity(c, m, &w[..k].join(" ")).is_ok())
        .unwrap_or(splits[0]);
    let value = match word_spans(args).get(pick) {
        Some((_, end)) => raw_value(args, *end),
        None => w[pick + 1..].join(" "),
    };
    // A list (`inventory`, `conditions`): `+rope` adds an entry, `-torch` removes one.
    if matches!(
        Field::parse(&w[pick]),
        Some(Field::Inventory | Field::Conditions)
    ) {
        let entity = w[..pick].join(" ");
        let field = w[pick].to_lowercase();
        let v = value.trim();
        return match (v.strip_prefix('+'), v.strip_prefix('-')) {
            (Some(item), _) if !item.trim().is_empty() => Ok(Change::Add {
                entity,
                field,
                item: item.trim().to_string(),
            }),
            (_, Some(item)) if !item.trim().is_empty() => Ok(Change::Remove {
                entity,
                field,
                item: item.trim().to_string(),
            }),
            _ => Err(CommandError::ListValue { entity, field }),
        };
    }
    let value = match value.parse::<i64>() {
        Ok(n) if !value.starts_with('+') && !value.starts_with('-') => serde_json::Value::from(n),
        _ => serde_json::Value::from(value),
    };
    Ok(Change::Set {
        entity: w[..pick].join(" "),
        field: w[pick].clone(),
        value,
    })
}

fn mv(w: &[String], c: &Campaign, m: &Matcher) -> Result<Change, CommandError> {
    if w.len() < 2 {
        return Err(CommandError::Usage { command: "move" });
    }
    let who_ok = |s: &str| resolve::is_party(c, s) || resolve::entity(c, m, s).is_ok();
    let place = |k: usize| {
        let rest = &w[k..];
        let rest = match rest.first().map(|s| s.to_lowercase()) {
            Some(t) if (t == "to" || t == "into") && rest.len() > 1 => &rest[1..],
            _ => rest,
        };
        rest.join(" ")
    };
    let splits: Vec<usize> = (1..w.len()).collect();
    let both = splits
        .iter()
        .copied()
        .find(|&k| who_ok(&w[..k].join(" ")) && resolve::location(c, m, &place(k)).is_ok());
    let k = both
        .or_else(|| splits.iter().copied().find(|&k| who_ok(&w[..k].join(" "))))
        .unwrap_or(1);
    Ok(Change::Move {
        entity: w[..k].join(" "),
        to: place(k),
    })
}

fn day(w: &[String]) -> Result<Change, CommandError> {
    let mut advance = None;
    let mut day = None;
    let mut rest = w;
    if let Some(first) = w.first() {
        if let Some(n) = first.strip_prefix('+') {
            advance = Some(
                n.parse::<i64>()
                    .map_err(|_| CommandError::Usage { command: "day" })?,
            );
            rest = &w[1..];
        } else if let Ok(n) = first.parse::<i64>() {
            day = Some(n);
            rest = &w[1..];
        } else if first.eq_ignore_ascii_case("day") {
            if let Some(n) = w.get(1).and_then(|s| s.parse::<i64>().ok()) {
                day = Some(n);
                rest = &w[2..];
            }
        }
    }
    let time = (!rest.is_empty()).then(|| rest.join(" "));
    if advance.is_none() && day.is_none() && time.is_none() {
        return Err(CommandError::Usage { command: "day" });
    }
    Ok(Change::Time { advance, day, time })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_keep_quoted_names() {
        assert_eq!(
            words(r#""Ida Marsh" status dead"#),
            ["Ida Marsh", "status", "dead"]
        );
        assert_eq!(words("  brannock   hp 15 "), ["brannock", "hp", "15"]);
        assert_eq!(
            words("“Ida Marsh” status dead"),
            ["Ida Marsh", "status", "dead"]
        );
    }

    #[test]
    fn day_forms() {
        let w = |s: &str| words(s);
        assert_eq!(
            day(&w("+1 morning")),
            Ok(Change::Time {
                advance: Some(1),
                day: None,
                time: Some("morning".into())
            })
        );
        assert_eq!(
            day(&w("7")),
            Ok(Change::Time {
                advance: None,
                day: Some(7),
                time: None
            })
        );
        assert_eq!(
            day(&w("the small hours")),
            Ok(Change::Time {
                advance: None,
                day: None,
                time: Some("the small hours".into())
            })
        );
        assert!(day(&w("")).is_err());
        assert!(day(&w("+x")).is_err());
    }
}
