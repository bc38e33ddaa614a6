//! A canon change: what the GM types (`/set`, `/move`, `/day`, `/event`, `/resolve`) or the
//! DM proposes, as data. The JSON form (`{"op": "set", ...}`) is the proposal format the DM
//! writes (in a tool call, or a ```` ```vaultdm-changes ```` block); names are written as
//! the table says them and resolved against canon when the change is planned.

use serde::{Deserialize, Serialize};

/// One change to canon.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Change {
    /// Set a PC's or NPC's field: `hp` (a number, or `+5`/`-7` relative), `max_hp`, `ac`,
    /// `level`, `gold` (number or relative), `status`, `disposition`, `role`, `location`.
    Set {
        /// Who (name, alias, file name or unique given name, any case).
        entity: String,
        /// Which field.
        field: String,
        /// The new value (a number or a text).
        value: serde_json::Value,
    },
    /// Move a PC, an NPC or the whole party (`"party"`) to a location.
    Move {
        /// Who, or `party`.
        entity: String,
        /// Where.
        to: String,
    },
    /// Add an item to a PC's inventory (or a condition: `field: "conditions"`).
    Add {
        /// Who.
        entity: String,
        /// `inventory` (the default) or `conditions`.
        #[serde(default = "inventory")]
        field: String,
        /// The item or condition.
        item: String,
    },
    /// Remove an item (or a condition) from a PC.
    Remove {
        /// Who.
        entity: String,
        /// `inventory` (the default) or `conditions`.
        #[serde(default = "inventory")]
        field: String,
        /// The item or condition.
        item: String,
    },
    /// Move the in-game clock: advance by days, or set the day, and/or set the time of day.
    Time {
        /// Days to advance.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        advance: Option<i64>,
        /// The day to set (instead of advancing).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        day: Option<i64>,
        /// The time of day (`morning`, `dusk`, ...).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        time: Option<String>,
    },
    /// A timeline event (today's, unless a day is given).
    Event {
        /// One fact, one line.
        text: String,
        /// The day (default: the current day).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        day: Option<i64>,
    },
    /// A new open thread.
    NewThread {
        /// Its title.
        title: String,
        /// `urgent`, `high`, `medium` (the default) or `low`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        priority: Option<String>,
        /// One line on what it is.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
        /// The next step.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        next: Option<String>,
    },
    /// Mark a thread resolved.
    Resolve {
        /// The thread's title (or a unique part of it).
        thread: String,
    },
    /// Re-prioritise a thread.
    Prioritise {
        /// The thread.
        thread: String,
        /// `urgent`, `high`, `medium`, `low`.
        priority: String,
    },
    /// Set a thread's next step.
    Next {
        /// The thread.
        thread: String,
        /// The next step.
        next: String,
    },
    /// A new NPC note.
    NewNpc {
        /// The NPC's name.
        name: String,
        /// What they do.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        role: Option<String>,
        /// Where they are.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        location: Option<String>,
        /// Their attitude to the party.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        disposition: Option<String>,
        /// One paragraph about them.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
    },
    /// A new location note.
    NewLocation {
        /// Its name.
        name: String,
        /// The place it is in.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent: Option<String>,
        /// One paragraph about it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
}

fn inventory() -> String {
    "inventory".into()
}

/// A field of a PC or NPC that [`Change::Set`] can write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// Current hit points.
    Hp,
    /// Maximum hit points.
    MaxHp,
    /// Armour class.
    Ac,
    /// Level.
    Level,
    /// Gold pieces.
    Gold,
    /// Status (`active`, `dead`, `missing`, ...).
    Status,
    /// Attitude to the party.
    Disposition,
    /// Role.
    Role,
    /// Where they are (the same as a move).
    Location,
    /// Conditions (a list: add and remove).
    Conditions,
    /// Inventory (a list: add and remove).
    Inventory,
}

impl Field {
    /// Reads a field name as GMs type it (`hp`, `HP`, `hit points`, `max hp`, `gp`...).
    pub fn parse(word: &str) -> Option<Field> {
        let w: String = word
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| !matches!(c, ' ' | '_' | '-'))
            .collect();
        Some(match w.as_str() {
            "hp" | "hitpoints" | "hpcurrent" | "currenthp" | "health" => Field::Hp,
            "maxhp" | "hpmax" | "maxhitpoints" => Field::MaxHp,
            "ac" | "armorclass" | "armourclass" => Field::Ac,
            "level" | "lvl" => Field::Level,
            "gold" | "gp" | "money" => Field::Gold,
            "status" | "state" => Field::Status,
            "disposition" | "attitude" | "relationship" => Field::Disposition,
            "role" | "occupation" | "job" => Field::Role,
            "location" | "loc" | "place" | "where" => Field::Location,
            "conditions" | "condition" => Field::Conditions,
            "inventory" | "items" | "item" => Field::Inventory,
            _ => return None,
        })
    }

    /// The field's name in the diff line.
    pub fn label(self) -> &'static str {
        match self {
            Field::Hp => "HP",
            Field::MaxHp => "max HP",
            Field::Ac => "AC",
            Field::Level => "level",
            Field::Gold => "gold",
            Field::Status => "status",
            Field::Disposition => "disposition",
            Field::Role => "role",
            Field::Location => "location",
            Field::Conditions => "conditions",
            Field::Inventory => "inventory",
        }
    }

    /// The names `/set` accepts, for its error and `/help`.
    pub const NAMES: &'static str =
        "hp, max_hp, ac, level, gold, status, disposition, role, location, conditions, inventory";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_form_reads_as_documented() {
        let c: Change =
            serde_json::from_str(r#"{"op":"set","entity":"Brannock","field":"hp","value":15}"#)
                .expect("set");
        assert_eq!(
            c,
            Change::Set {
                entity: "Brannock".into(),
                field: "hp".into(),
                value: 15.into()
            }
        );
        let c: Change =
            serde_json::from_str(r#"{"op":"add","entity":"Kit","item":"a lamp"}"#).expect("add");
        assert!(matches!(c, Change::Add { field, .. } if field == "inventory"));
        let c: Change =
            serde_json::from_str(r#"{"op":"time","advance":1,"time":"morning"}"#).expect("time");
        assert_eq!(
            c,
            Change::Time {
                advance: Some(1),
                day: None,
                time: Some("morning".into())
            }
        );
        let back = serde_json::to_string(&c).expect("json");
        assert_eq!(back, r#"{"op":"time","advance":1,"time":"morning"}"#);
    }

    #[test]
    fn field_names_as_typed() {
        assert_eq!(Field::parse("HP"), Some(Field::Hp));
        assert_eq!(Field::parse("hit points"), Some(Field::Hp));
        assert_eq!(Field::parse("max_hp"), Some(Field::MaxHp));
        assert_eq!(Field::parse("gp"), Some(Field::Gold));
        assert_eq!(Field::parse("Status"), Some(Field::Status));
        assert_eq!(Field::parse("colour"), None);
    }
}
