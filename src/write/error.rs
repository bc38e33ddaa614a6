//! Why a change is not written: the errors of write-back, in one place.
//!
//! Each stage of a write has its own error: reading the GM's command ([`CommandError`]),
//! finding what a name means ([`ResolveError`]), reading a note to edit ([`ReadError`]),
//! making one edit on a note's text ([`OpError`]), checking a change against canon
//! ([`PlanError`]), writing a plan to disk ([`WriteError`], with its [`ConflictReason`] and
//! [`IoReason`]) and recording it ([`LogError`], [`WriteFailed`]). Every message is what the
//! GM is told: it names the note (and the key or line) where one is known and says the way
//! out where there is one; the error underneath is kept as the source.

use super::change::Field;
use crate::canon::model::Priority;
use crate::vault::boundary::BoundaryError;
use crate::vault::edit::EditError;
use std::path::PathBuf;

/// Why a write command typed by the GM (`/set`, `/move`, `/day`, `/event`, `/resolve`)
/// could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CommandError {
    /// The arguments do not make the command: its usage line
    /// ([`super::command::USAGE`]).
    #[error("{}", super::command::usage(.command))]
    Usage {
        /// The command, without the slash.
        command: &'static str,
    },
    /// The name is not one of the write commands.
    #[error("/{name} is not a write command")]
    NotACommand {
        /// The command as typed, without the slash.
        name: String,
    },
    /// `/set` names no field among its words.
    #[error("no field named in \"{words}\" (fields: {})", Field::NAMES)]
    NoField {
        /// The arguments, as words.
        words: String,
    },
    /// A list (`inventory`, `conditions`) was given something other than `+item` or
    /// `-item`.
    #[error("{field} is a list: add an entry with +name, remove one with -name (/set {entity} {field} +rope)")]
    ListValue {
        /// The entity as typed.
        entity: String,
        /// The field, lower case.
        field: String,
    },
}

/// Why a name in a change does not mean one entity, location or thread.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// Nothing of the kind has the name.
    #[error("no {what} is called \"{asked}\"")]
    NotFound {
        /// The kind: `PC or NPC`, `location`, `thread`.
        what: &'static str,
        /// The name as given.
        asked: String,
    },
    /// Several have the name, each by a different name: the full name says which.
    #[error("\"{asked}\" could be {}; use the full name", .candidates.join(" or "))]
    Ambiguous {
        /// The name as given.
        asked: String,
        /// The names of the candidates (up to four).
        candidates: Vec<String>,
    },
    /// Several have the name and two of them share their full name: the note's path says
    /// which.
    #[error("\"{asked}\" could be {}; name it by its path (without .md) to say which", named(.candidates))]
    SameName {
        /// The name as given.
        asked: String,
        /// The candidates' names and notes (up to four).
        candidates: Vec<(String, String)>,
    },
}

/// `Name (path) or Name (path)`.
fn named(candidates: &[(String, String)]) -> String {
    candidates
        .iter()
        .map(|(n, path)| format!("{n} ({path})"))
        .collect::<Vec<_>>()
        .join(" or ")
}

/// Why a note could not be read to be edited.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// The note is not UTF-8 text (vaultdm does not edit it).
    #[error("{path} is not UTF-8 text; vaultdm does not edit it")]
    NotUtf8 {
        /// Vault-relative path.
        path: String,
        /// Where the text stops being UTF-8.
        source: std::str::Utf8Error,
    },
    /// The note could not be read inside the vault (a link out of it, too large, an I/O
    /// error); the error names it.
    #[error(transparent)]
    Vault(#[from] BoundaryError),
}

/// Why one edit ([`super::plan::Op`]) cannot be made on a note's text, or no longer holds
/// on a note the GM changed since the change was planned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OpError {
    /// The text does not take the edit (its message names the key and line).
    #[error(transparent)]
    Edit(#[from] EditError),
    /// A new note was to be created where one exists.
    #[error("the note already exists")]
    Exists,
    /// The value the edit replaces is no longer what it was when the change was made.
    #[error("`{key}` is now {} (it was {} when the change was made)", or_missing(.now), or_missing(.was))]
    ValueChanged {
        /// The key.
        key: &'static str,
        /// Its raw value now (`None`: missing).
        now: Option<String>,
        /// Its raw value when the change was made (`None`: missing).
        was: Option<String>,
    },
    /// The campaign's day is no longer what it was when the change was made.
    #[error("the day is now {} (it was {} when the change was made)", day_or_missing(.now), day_or_missing(.was))]
    DayChanged {
        /// The day now.
        now: Option<i64>,
        /// The day when the change was made.
        was: Option<i64>,
    },
    /// The tag the edit renames is gone.
    #[error("the tag `{tag}` is no longer there")]
    TagGone {
        /// The tag as written.
        tag: String,
    },
    /// The note the edit creates was created meanwhile.
    #[error("the note was created meanwhile")]
    CreatedMeanwhile,
}

fn or_missing(v: &Option<String>) -> &str {
    v.as_deref().unwrap_or("missing")
}

fn day_or_missing(d: &Option<i64>) -> String {
    d.map_or("missing".into(), |d| d.to_string())
}

/// A number in a message (`unset` when there is none).
fn number_or_unset(n: &Option<i64>) -> String {
    n.map_or("unset".to_string(), |n| n.to_string())
}

/// Why a change cannot be made: it does not hold against canon, or the notes that hold it
/// do not take it. The change is rejected with this reason
/// ([`super::Rejected::reason`]) and touches nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// A name in the change does not mean one thing.
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    /// A note the change edits could not be read.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// A note does not take the edit.
    #[error("{path}: {source}")]
    Edit {
        /// Vault-relative path.
        path: String,
        /// Why not.
        source: OpError,
    },
    /// A new note's text does not take its tags.
    #[error(transparent)]
    NewNote(EditError),
    /// The change planned to nothing (a caller bug, reported rather than panicking).
    #[error("nothing to plan")]
    NothingToPlan,
    /// `set` names a field vaultdm does not know.
    #[error("unknown field \"{field}\" (use {})", Field::NAMES)]
    UnknownField {
        /// The field as given.
        field: String,
    },
    /// A number field was given something else.
    #[error("{} must be a whole number (or +N / -N to change it), not {value}", .field.label())]
    NotANumber {
        /// The field.
        field: Field,
        /// The value as given.
        value: serde_json::Value,
    },
    /// A relative change (`+5`) of a field that has no value yet.
    #[error("{} has no value yet, so it cannot change by {by}", .field.label())]
    NoValueYet {
        /// The field.
        field: Field,
        /// The change as given (`+5`).
        by: String,
    },
    /// A field that takes words was given a number, a list or nothing.
    #[error("{}", not_text(.field))]
    NotText {
        /// The field.
        field: Field,
    },
    /// A list was set as a whole.
    #[error("{} is a list: add or remove one entry at a time", .field.label())]
    ListAsAWhole {
        /// The field.
        field: Field,
    },
    /// A field that is changed another way (a move, a list entry).
    #[error("{} is not set this way", .field.label())]
    NotSetThisWay {
        /// The field.
        field: Field,
    },
    /// A field only PCs have, asked of an NPC.
    #[error("{name} is an NPC; {}", pc_only(.field))]
    PcOnly {
        /// The NPC.
        name: String,
        /// The field.
        field: Field,
    },
    /// A field only NPCs have, asked of a PC.
    #[error("{name} is a PC; {} is kept for NPCs", .field.label())]
    NpcOnly {
        /// The PC.
        name: String,
        /// The field.
        field: Field,
    },
    /// The field named in `add` / `remove` is not a list.
    #[error("\"{field}\" is not a list (use inventory or conditions)")]
    NotAList {
        /// The field as given.
        field: String,
    },
    /// A line of text (a name, an event, a status) is empty.
    #[error("the {what} is empty")]
    Empty {
        /// What the text is.
        what: &'static str,
    },
    /// A line of text is over 500 characters.
    #[error("the {what} is over 500 characters; keep it to one line")]
    TooLong {
        /// What the text is.
        what: &'static str,
    },
    /// HP past its bounds while `[write] hp_bounds` is `refuse`.
    #[error("HP {hp} would be {why} for {name} (change max hp first, or set `[write] hp_bounds = \"flag\"` to write it anyway)")]
    HpOutOfBounds {
        /// The HP asked for.
        hp: i64,
        /// How it is out of bounds (`above max HP 30`).
        why: String,
        /// The entity.
        name: String,
    },
    /// A maximum HP of 0 or less.
    #[error("max HP must be above 0, not {max}")]
    MaxHpNotPositive {
        /// The maximum asked for.
        max: i64,
    },
    /// Gold below 0.
    #[error("{name} has {} gold; that would leave {left}", number_or_unset(.gold))]
    NotEnoughGold {
        /// The PC.
        name: String,
        /// The gold they have.
        gold: Option<i64>,
        /// What would be left.
        left: i64,
    },
    /// The status is kept in several tags, which one change cannot keep in step.
    #[error("{name}'s status is kept in more than one tag; change them by hand")]
    StatusInSeveralTags {
        /// The entity.
        name: String,
    },
    /// A tag taken for a status tag is not one (a caller bug, reported rather than
    /// panicking).
    #[error("not a status tag")]
    NotAStatusTag {
        /// The tag.
        tag: String,
    },
    /// The status is kept in a tag, and the new status is not one canon reads from a tag.
    #[error("the status is kept in the tag `{tag}`, and `{status}` is not a status vaultdm reads from a tag (use alive, dead, missing, departed, captured, retired…)")]
    StatusNotATag {
        /// The tag as written.
        tag: String,
        /// The new status.
        status: String,
    },
    /// A tag taken for an attitude tag is not one (a caller bug, reported rather than
    /// panicking).
    #[error("not an attitude tag")]
    NotAnAttitudeTag {
        /// The tag.
        tag: String,
    },
    /// The attitude is kept in a tag, and the new one is more than a word.
    #[error(
        "the attitude is kept in the tag `{tag}`, and a tag holds one word, not \"{attitude}\""
    )]
    AttitudeNotAWord {
        /// The tag as written.
        tag: String,
        /// The new attitude.
        attitude: String,
    },
    /// `move party` with no active PC.
    #[error("there is no active PC to move")]
    NoActivePc,
    /// `time` given both days to advance and a day.
    #[error("give either days to advance or a day, not both")]
    AdvanceAndDay,
    /// Days to advance past the bounds.
    #[error("advance by 0 to 3650 days, not {days}")]
    AdvanceOutOfRange {
        /// The days asked for.
        days: i64,
    },
    /// A day below 1.
    #[error("days count from 1, not {day}")]
    DayBelowOne {
        /// The day asked for.
        day: i64,
    },
    /// `time` given neither days, a day nor a time of day.
    #[error("say how many days pass (+1), which day (7) or the time of day")]
    NoTime,
    /// The campaign's clock is a calendar date, which vaultdm cannot count in days.
    #[error("the campaign's date is \"{date}\" ({path}, `{key}:`), a calendar vaultdm cannot count in days: change it there (the time of day alone can be set, e.g. /day dusk)")]
    CalendarDate {
        /// The date as written.
        date: String,
        /// The note that holds it.
        path: String,
        /// Its key.
        key: String,
    },
    /// An event with no day given, in a campaign with no current day.
    #[error("the campaign has no current day: set one with /day 1")]
    NoCurrentDay,
    /// An event for a day number, on a timeline dated by the vault's own calendar.
    #[error("{path} is dated by the vault's own calendar (its latest section is \"{latest}\"), not by day numbers, so an event cannot go on Day {day}; events go under its latest section")]
    CalendarTimeline {
        /// The timeline.
        path: String,
        /// Its latest section's heading.
        latest: String,
        /// The day asked for.
        day: i64,
    },
    /// The thread already has the priority.
    #[error("\"{title}\" is already {}", super::plan::section_of(*.priority).to_lowercase())]
    AlreadyPriority {
        /// The thread.
        title: String,
        /// Its priority.
        priority: Priority,
    },
    /// A priority word vaultdm does not know.
    #[error("unknown priority \"{word}\" (use urgent, high, medium, low or resolved)")]
    UnknownPriority {
        /// The word as given.
        word: String,
    },
    /// The next step of a thread that is a note of its own (not an item of a list).
    #[error("\"{title}\" is a note of its own ({path}); edit its Next line there")]
    ThreadIsANote {
        /// The thread.
        title: String,
        /// Its note.
        path: String,
    },
    /// A new thread with the title of one that exists.
    #[error("there is already a thread \"{title}\"")]
    ThreadExists {
        /// The existing thread's title.
        title: String,
    },
    /// A new thread given the priority `resolved`.
    #[error("a new thread is open: give it urgent, high, medium or low")]
    NewThreadResolved,
    /// No quest note to model a new one on (a caller bug, reported rather than panicking).
    #[error("no quest note to follow")]
    NoQuestNote,
    /// A new thread in a vault that keeps its quests as a checklist vaultdm does not write.
    #[error("this vault keeps its quests as a checklist in {list}; add \"{title}\" there by hand (vaultdm writes new threads as quest notes or into canon/open-threads.md)")]
    QuestsInAChecklist {
        /// The note that holds the checklist.
        list: String,
        /// The new thread.
        title: String,
    },
    /// A new thread in a vault that keeps no quests vaultdm can add to.
    #[error("this vault keeps no quests vaultdm can add to (no quest notes, no canon/open-threads.md); add \"{title}\" by hand, e.g. a note in a Quests folder with `type: quest`")]
    NoQuests {
        /// The new thread.
        title: String,
    },
    /// A new note's name already names something in canon.
    #[error("\"{name}\" already names something in canon")]
    NameTaken {
        /// The name.
        name: String,
    },
    /// A new note's title makes no file name.
    #[error("\"{title}\" cannot be a file name")]
    NoFileName {
        /// The title.
        title: String,
    },
    /// A new note's file exists.
    #[error("{path} already exists")]
    FileExists {
        /// Vault-relative path.
        path: String,
    },
}

/// What a field that takes words says when given something else.
fn not_text(field: &Field) -> &'static str {
    match field {
        Field::Location => "a location is a name",
        Field::Status => "a status is a word like active, dead, missing",
        _ => "expected a word or a phrase",
    }
}

/// What a field only PCs have says of an NPC.
fn pc_only(field: &Field) -> String {
    match field {
        Field::Level => "only PCs have a level".into(),
        f => format!("{} is kept for PCs", f.label()),
    }
}

/// Why a change set was not written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// A note changed since the change was proposed, and the change no longer holds.
    #[error("{path} changed since the change was made: {why}; nothing was written")]
    Conflict {
        /// The note.
        path: String,
        /// What no longer holds.
        #[source]
        why: ConflictReason,
    },
    /// A note could not be read or written.
    #[error("{path}: {why}; nothing was written")]
    Io {
        /// The note.
        path: String,
        /// What went wrong.
        #[source]
        why: IoReason,
    },
}

/// What no longer holds in a [`WriteError::Conflict`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConflictReason {
    /// An edit no longer holds on the note as it is now.
    #[error(transparent)]
    Edit(#[from] OpError),
    /// The note the change edits was deleted or moved.
    #[error("the note was deleted or moved")]
    Deleted,
    /// The note kept changing while vaultdm wrote it.
    #[error("it kept changing while vaultdm wrote it")]
    KeptChanging,
    /// Revert: the note was deleted or moved after the change was applied.
    #[error("it was deleted or moved after the change was applied, so nothing is put back")]
    GoneSinceApplied,
    /// Revert: the note was edited after the change was applied.
    #[error("it was edited after the change was applied, so it is left as it is")]
    EditedSinceApplied,
}

/// What went wrong in a [`WriteError::Io`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IoReason {
    /// The note could not be read.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The note could not be replaced inside the vault.
    #[error(transparent)]
    Vault(#[from] BoundaryError),
    /// A note the set created could not be removed again.
    #[error(transparent)]
    Remove(#[from] std::io::Error),
    /// The note stopped being UTF-8 text while vaultdm wrote it.
    #[error("it is no longer UTF-8 text; vaultdm does not edit it")]
    NoLongerUtf8 {
        /// Where the text stops being UTF-8.
        source: std::str::Utf8Error,
    },
    /// The thread writing the note stopped (a bug, reported rather than panicking).
    #[error("the write stopped unexpectedly")]
    Stopped,
}

/// Why the change log could not be used.
#[derive(Debug, thiserror::Error)]
#[error("{}: {why}", path.display())]
pub struct LogError {
    /// The log.
    pub path: PathBuf,
    /// What went wrong.
    pub why: String,
}

/// Why writing failed as a whole.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteFailed {
    /// Nothing was written (a conflict, a read or write error).
    #[error(transparent)]
    Write(#[from] WriteError),
    /// The notes were written but the session's change log could not record it (so
    /// `/revert` will not know of it).
    #[error("the change was written, but the change log could not record it: {0}")]
    Log(#[from] LogError),
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    /// The words the GM reads, for the variants whose message is put together from parts
    /// (they were `format!` strings; these are those strings' output).
    #[rstest]
    #[case::usage(CommandError::Usage { command: "move" }.to_string(), "usage: /move <who|party> <place>   e.g. /move party the assay office")]
    #[case::no_field(CommandError::NoField { words: "kit hat blue".into() }.to_string(), "no field named in \"kit hat blue\" (fields: hp, max_hp, ac, level, gold, status, disposition, role, location, conditions, inventory)")]
    #[case::list_value(CommandError::ListValue { entity: "kit".into(), field: "inventory".into() }.to_string(), "inventory is a list: add an entry with +name, remove one with -name (/set kit inventory +rope)")]
    #[case::ambiguous(ResolveError::Ambiguous { asked: "ida".into(), candidates: vec!["Ida Marsh".into(), "Ida Vell".into()] }.to_string(), "\"ida\" could be Ida Marsh or Ida Vell; use the full name")]
    #[case::same_name(ResolveError::SameName { asked: "ida".into(), candidates: vec![("Ida".into(), "a/ida.md".into()), ("Ida".into(), "b/ida.md".into())] }.to_string(), "\"ida\" could be Ida (a/ida.md) or Ida (b/ida.md); name it by its path (without .md) to say which")]
    #[case::value_changed(OpError::ValueChanged { key: "hp", now: None, was: Some("22".into()) }.to_string(), "`hp` is now missing (it was 22 when the change was made)")]
    #[case::day_changed(OpError::DayChanged { now: Some(4), was: None }.to_string(), "the day is now 4 (it was missing when the change was made)")]
    #[case::not_a_number(PlanError::NotANumber { field: Field::MaxHp, value: "lots".into() }.to_string(), "max HP must be a whole number (or +N / -N to change it), not \"lots\"")]
    #[case::no_value_yet(PlanError::NoValueYet { field: Field::Gold, by: "+5".into() }.to_string(), "gold has no value yet, so it cannot change by +5")]
    #[case::not_text_location(PlanError::NotText { field: Field::Location }.to_string(), "a location is a name")]
    #[case::not_text_status(PlanError::NotText { field: Field::Status }.to_string(), "a status is a word like active, dead, missing")]
    #[case::not_text_role(PlanError::NotText { field: Field::Role }.to_string(), "expected a word or a phrase")]
    #[case::pc_only_level(PlanError::PcOnly { name: "Ida".into(), field: Field::Level }.to_string(), "Ida is an NPC; only PCs have a level")]
    #[case::pc_only_gold(PlanError::PcOnly { name: "Ida".into(), field: Field::Gold }.to_string(), "Ida is an NPC; gold is kept for PCs")]
    #[case::pc_only_list(PlanError::PcOnly { name: "Ida".into(), field: Field::Inventory }.to_string(), "Ida is an NPC; inventory is kept for PCs")]
    #[case::npc_only(PlanError::NpcOnly { name: "Kit".into(), field: Field::Disposition }.to_string(), "Kit is a PC; disposition is kept for NPCs")]
    #[case::gold_unset(PlanError::NotEnoughGold { name: "Kit".into(), gold: None, left: -3 }.to_string(), "Kit has unset gold; that would leave -3")]
    #[case::already(PlanError::AlreadyPriority { title: "The Bell".into(), priority: Priority::Resolved }.to_string(), "\"The Bell\" is already resolved")]
    #[case::edit(PlanError::Edit { path: "n.md".into(), source: OpError::Exists }.to_string(), "n.md: the note already exists")]
    #[case::conflict(WriteError::Conflict { path: "n.md".into(), why: ConflictReason::KeptChanging }.to_string(), "n.md changed since the change was made: it kept changing while vaultdm wrote it; nothing was written")]
    #[case::io(WriteError::Io { path: "n.md".into(), why: IoReason::Stopped }.to_string(), "n.md: the write stopped unexpectedly; nothing was written")]
    fn messages_read_as_before(#[case] shown: String, #[case] expected: &str) {
        assert_eq!(shown, expected);
    }
}
