//! Which session a front end's request continues, when no header names it.
//!
//! An OpenAI-style request carries its whole conversation. After each reply the server
//! remembers the conversation's *state*: a hash of every user and assistant message in order
//! (roles included, whitespace normalised), the reply as the front end got it last, salted
//! with the request's `user`. The next request of that conversation sends exactly those
//! messages before its new one, so its history hashes to that state. Two conversations share
//! a state only if every message of both is the same, in the same order: a reply's text alone
//! (a deterministic model, a stock answer) never joins them, and neither does a first line.
//!
//! * A state no conversation reached (a new chat, or its first reply regenerated) opens a new
//!   session; so does a state two sessions reached (identical conversations cannot be told
//!   apart: neither is continued, nothing crosses).
//! * A request that continues from a state *before* a session's last turn (Regenerate, a swipe,
//!   an edited or deleted message) supersedes the turns it replaces: see [`Threads::superseded`].
//! * A front end that cuts its oldest messages to fit its context (SillyTavern does) no longer
//!   sends a known state. Its last [`TAIL`] messages (two exchanges) are then the key, again
//!   only when one session alone ended that way.
//!
//! Each turn is also appended to `<vault>/.vaultdm/serve-conversations.jsonl` (session and the
//! three states, no text), which [`Threads::load`] replays when the server starts again, so a
//! conversation without the header continues its session after a restart. The file is a
//! cache: a line that cannot be read is skipped, and past `MAX_STATES` lines it starts anew.

use crate::llm::{ChatMessage, Role};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where a campaign's conversation states are kept, relative to the vault.
pub(crate) const FILE: &str = ".vaultdm/serve-conversations.jsonl";

/// How many last messages key a conversation whose front end cut its oldest ones.
pub(crate) const TAIL: usize = 4;

/// The hash of a conversation so far (FNV-1a: stable across builds and runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct State(u64);

impl State {
    /// The empty conversation of `user` (the request's `user` field, if any).
    pub(crate) fn start(user: Option<&str>) -> State {
        let mut s = State(0xcbf2_9ce4_8422_2325);
        s.bytes(b"vaultdm-conversation\x1e");
        if let Some(u) = user.map(str::trim).filter(|u| !u.is_empty()) {
            s.bytes(u.as_bytes());
        }
        s.bytes(b"\x1e");
        s
    }

    /// The state of `messages` (in order) from the start of `user`'s conversation.
    pub(crate) fn of(user: Option<&str>, messages: &[ChatMessage]) -> State {
        messages.iter().fold(State::start(user), |s, m| s.then(m))
    }

    /// The key of a conversation's last [`TAIL`] messages (`None` when it has fewer).
    pub(crate) fn tail(user: Option<&str>, messages: &[ChatMessage]) -> Option<State> {
        let from = messages.len().checked_sub(TAIL)?;
        let mut s = State::start(user);
        s.bytes(b"tail\x1e");
        Some(messages[from..].iter().fold(s, |s, m| s.then(m)))
    }

    fn bytes(&mut self, b: &[u8]) {
        for x in b {
            self.0 ^= u64::from(*x);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    /// The state after one more message. Whitespace is normalised (front ends trim and
    /// re-wrap what they show).
    pub(crate) fn then(mut self, m: &ChatMessage) -> State {
        self.bytes(match m.role {
            Role::User => b"u\x1f",
            Role::Assistant => b"a\x1f",
        });
        for (i, w) in m.content.split_whitespace().enumerate() {
            if i > 0 {
                self.bytes(b" ");
            }
            self.bytes(w.as_bytes());
        }
        self.bytes(b"\x1e");
        self
    }
}

/// What a state says about a request's session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Found {
    /// No conversation is there: a new one.
    Nothing,
    /// Exactly one session is there.
    One(String),
    /// Several sessions reached the same state (identical conversations).
    Ambiguous(usize),
}

/// A request's place in its conversation: before its new message and with it.
#[derive(Debug, Clone)]
pub(crate) struct Asked {
    /// The conversation before the new message.
    pub from: State,
    /// Its last [`TAIL`] messages.
    pub from_tail: Option<State>,
    /// The conversation with the new message.
    pub asked: State,
    user: Option<String>,
    /// The last messages, the new one included, for the tail after the reply.
    last: Vec<ChatMessage>,
}

impl Asked {
    /// A request's `user` and its messages (the new one last).
    pub(crate) fn of(user: Option<&str>, messages: &[ChatMessage]) -> Asked {
        let (earlier, new) = messages.split_at(messages.len().saturating_sub(1));
        let from = State::of(user, earlier);
        Asked {
            from,
            from_tail: State::tail(user, earlier),
            asked: new.iter().fold(from, |s, m| s.then(m)),
            user: user.map(str::to_owned),
            last: messages[messages.len().saturating_sub(TAIL - 1)..].to_vec(),
        }
    }

    /// The turn this request makes with `reply` (as the front end got it), after which the
    /// session's log holds `exchanges` exchanges.
    pub(crate) fn step(&self, reply: &str, exchanges: Option<usize>) -> Step {
        let reply = ChatMessage::assistant(reply);
        let mut last = self.last.clone();
        last.push(reply.clone());
        Step {
            from: self.from,
            from_tail: self.from_tail,
            asked: self.asked,
            to: self.asked.then(&reply),
            to_tail: State::tail(self.user.as_deref(), &last),
            exchanges,
        }
    }
}

/// A recorded turn of a session: the state it continued from, with the player's message,
/// and after its reply (and the tails of the first and the last).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Step {
    /// Before the new message.
    pub from: State,
    /// The tail before it.
    pub from_tail: Option<State>,
    /// With the new message.
    pub asked: State,
    /// After the reply.
    pub to: State,
    /// The tail after the reply.
    pub to_tail: Option<State>,
    /// The exchanges in the session's log after the turn.
    pub exchanges: Option<usize>,
}

/// The states of one campaign's conversations.
#[derive(Debug, Default)]
pub(crate) struct Threads {
    /// State after a reply → the sessions whose conversation is there.
    at: HashMap<State, Vec<String>>,
    /// The tail after a reply → the sessions that ended so.
    tails: HashMap<State, Vec<String>>,
    /// Each session's turns, oldest first.
    turns: HashMap<String, Vec<Step>>,
    /// Replies the front end stopped: the conversation with the player's message → the
    /// session and the text streamed before the stream closed (in memory only).
    stopped: HashMap<State, Vec<(String, String)>>,
    /// The vault whose [`FILE`] keeps them (`None`: memory only).
    vault: Option<PathBuf>,
    /// Lines in the file.
    lines: usize,
}

/// One line of [`FILE`].
#[derive(serde::Serialize, serde::Deserialize)]
struct Line {
    session: String,
    from: String,
    asked: String,
    to: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    from_tail: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    to_tail: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    exchanges: Option<usize>,
}

fn hex(s: State) -> String {
    format!("{:016x}", s.0)
}

fn unhex(s: &str) -> Option<State> {
    u64::from_str_radix(s, 16).ok().map(State)
}

impl Line {
    fn step(&self) -> Option<Step> {
        let tail = |t: &Option<String>| t.as_deref().and_then(unhex);
        Some(Step {
            from: unhex(&self.from)?,
            from_tail: tail(&self.from_tail),
            asked: unhex(&self.asked)?,
            to: unhex(&self.to)?,
            to_tail: tail(&self.to_tail),
            exchanges: self.exchanges,
        })
    }
}

/// A bound on what is remembered: past it, the map starts again (conversations continue in
/// new sessions, nothing crosses).
const MAX_STATES: usize = 100_000;

fn found(sessions: Option<&Vec<String>>) -> Found {
    match sessions.map(Vec::as_slice) {
        None | Some([]) => Found::Nothing,
        Some([one]) => Found::One(one.clone()),
        Some(many) => Found::Ambiguous(many.len()),
    }
}

fn drop_from(map: &mut HashMap<State, Vec<String>>, key: State, session: &str) {
    if let Some(v) = map.get_mut(&key) {
        v.retain(|s| s != session);
        if v.is_empty() {
            map.remove(&key);
        }
    }
}

/// Where in `turns` a request from `from` (tail `from_tail`) asking `asked` branches off:
/// the first turn it replaces. From where the session's first turn began (an empty chat, or
/// its greeting), only the same first message is a regenerate: another one under the same
/// session name is a new chat given that name (a header set once for all chats), and
/// replaces nothing.
/// Only turns that the session's last turn continues, one from the other, can be replaced
/// (undo takes the log's last exchanges): a branch point behind another chat's turns under
/// the same session name replaces nothing.
fn branch(turns: &[Step], from: State, from_tail: Option<State>, asked: State) -> Option<usize> {
    let start = turns.first()?.from;
    let k = turns
        .iter()
        .rposition(|t| t.from == from && (from != start || t.asked == asked))
        .or_else(|| {
            let tail = from_tail?;
            turns.iter().rposition(|t| t.from_tail == Some(tail))
        })?;
    let chained = turns[k..].windows(2).all(|w| {
        w[1].from == w[0].to || (w[1].from_tail.is_some() && w[1].from_tail == w[0].to_tail)
    });
    chained.then_some(k)
}

impl Threads {
    /// The conversations of the vault at `root`, as its [`FILE`] recorded them; new turns are
    /// appended to it.
    pub(crate) fn load(root: &Path) -> Threads {
        let mut t = Threads::default();
        let text = crate::vault::boundary::read_text_inside(root, Path::new(FILE), 64 << 20)
            .unwrap_or_default();
        let mut lines = 0;
        for l in text.lines() {
            lines += 1;
            let Ok(line) = serde_json::from_str::<Line>(l) else {
                continue;
            };
            if crate::session::validate_name(&line.session).is_err() {
                continue;
            }
            if let Some(step) = line.step() {
                t.remember(&line.session, step);
            }
        }
        t.vault = Some(root.to_owned());
        t.lines = lines;
        if lines > MAX_STATES {
            t.start_again();
        }
        t
    }

    /// Forgets everything, and empties the file.
    fn start_again(&mut self) {
        self.at.clear();
        self.tails.clear();
        self.turns.clear();
        self.lines = 0;
        if let Some(root) = &self.vault {
            if let Ok(dir) = crate::vault::boundary::dir_inside(root, Path::new(".vaultdm")) {
                let path = dir.join("serve-conversations.jsonl");
                let _ = crate::vault::boundary::open_inside(
                    &path,
                    std::fs::OpenOptions::new()
                        .write(true)
                        .truncate(true)
                        .create(true),
                );
            }
        }
    }

    /// Appends a turn to the file.
    fn append(&mut self, line: &Line) -> Result<(), String> {
        let Some(root) = &self.vault else {
            return Ok(());
        };
        let dir = crate::vault::boundary::dir_inside(root, Path::new(".vaultdm"))
            .map_err(|e| e.to_string())?;
        let path = dir.join("serve-conversations.jsonl");
        let mut f = crate::vault::boundary::open_inside(
            &path,
            std::fs::OpenOptions::new().append(true).create(true),
        )
        .map_err(|e| e.to_string())?;
        let mut text = serde_json::to_string(line).map_err(|e| e.to_string())?;
        text.push('\n');
        f.write_all(text.as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))?;
        self.lines += 1;
        Ok(())
    }

    /// The session a conversation at `state` continues; when no conversation reached it,
    /// the one session whose conversation ended with the same last messages (`tail`).
    pub(crate) fn find(&self, state: State, tail: Option<State>) -> Found {
        match found(self.at.get(&state)) {
            Found::Nothing => tail.map_or(Found::Nothing, |t| found(self.tails.get(&t))),
            f => f,
        }
    }

    /// How many of `session`'s turns a request replaces: the turns from the one that
    /// continued from where it continues on (0: it continues the last one). See `branch`.
    pub(crate) fn superseded(&self, session: &str, asked: &Asked) -> usize {
        self.turns.get(session).map_or(0, |turns| {
            branch(turns, asked.from, asked.from_tail, asked.asked).map_or(0, |k| turns.len() - k)
        })
    }

    /// Remembers a reply the front end stopped (its Stop button closed the stream): it keeps
    /// what it got — all of `shown` or, since a closed connection shows only on a later
    /// write, a little less — and sends that back with its next message.
    pub(crate) fn stopped(&mut self, session: &str, asked: State, shown: &str) {
        if self.stopped.len() > 10_000 {
            self.stopped.clear();
        }
        self.stopped
            .entry(asked)
            .or_default()
            .push((session.to_owned(), shown.to_owned()));
    }

    /// The session whose reply, stopped after `asked`, the front end kept as `reply`: the one
    /// session whose stopped reply begins with it.
    pub(crate) fn find_stopped(&self, asked: State, reply: &str) -> Found {
        let reply = reply.trim();
        if reply.is_empty() {
            return Found::Nothing;
        }
        let mut sessions: Vec<&str> = self
            .stopped
            .get(&asked)
            .map(|v| {
                v.iter()
                    .filter(|(_, shown)| shown.trim_start().starts_with(reply))
                    .map(|(s, _)| s.as_str())
                    .collect()
            })
            .unwrap_or_default();
        sessions.dedup();
        match sessions.as_slice() {
            [] => Found::Nothing,
            [one] => Found::One((*one).to_owned()),
            many => Found::Ambiguous(many.len()),
        }
    }

    /// How many exchanges `session`'s log held after its last turn here (`None`: unknown). A
    /// log that holds another number was played elsewhere since (`chat`): superseding would
    /// take back the wrong exchanges.
    pub(crate) fn last_exchanges(&self, session: &str) -> Option<usize> {
        self.turns.get(session)?.last()?.exchanges
    }

    /// Records that `session` played a turn, after dropping the turns it superseded, and
    /// appends it to the vault's [`FILE`]. An error writing the file is returned (the turn is
    /// remembered all the same).
    pub(crate) fn record(&mut self, session: &str, step: Step) -> Result<(), String> {
        if self.lines > MAX_STATES || self.at.len() > MAX_STATES {
            self.start_again();
        }
        self.remember(session, step);
        self.append(&Line {
            session: session.to_owned(),
            from: hex(step.from),
            asked: hex(step.asked),
            to: hex(step.to),
            from_tail: step.from_tail.map(hex),
            to_tail: step.to_tail.map(hex),
            exchanges: step.exchanges,
        })
    }

    fn remember(&mut self, session: &str, step: Step) {
        let turns = self.turns.entry(session.to_owned()).or_default();
        if let Some(k) = branch(turns, step.from, step.from_tail, step.asked) {
            for gone in turns.drain(k..) {
                drop_from(&mut self.at, gone.to, session);
                if let Some(t) = gone.to_tail {
                    drop_from(&mut self.tails, t, session);
                }
            }
        }
        turns.push(step);
        let there = self.at.entry(step.to).or_default();
        if !there.iter().any(|s| s == session) {
            there.push(session.to_owned());
        }
        if let Some(t) = step.to_tail {
            let there = self.tails.entry(t).or_default();
            if !there.iter().any(|s| s == session) {
                there.push(session.to_owned());
            }
        }
    }

    #[cfg(test)]
    /// Forgets a session (deleted, or closed for good).
    pub(crate) fn forget(&mut self, session: &str) {
        if let Some(turns) = self.turns.remove(session) {
            for t in turns {
                drop_from(&mut self.at, t.to, session);
                if let Some(tail) = t.to_tail {
                    drop_from(&mut self.tails, tail, session);
                }
            }
        }
    }
}

/// Removes a session's turns from the vault's [`FILE`] (`vaultdm session delete`): a
/// conversation that continues it opens a new session. Returns whether there were any.
pub(crate) fn forget_in_file(root: &Path, session: &str) -> Result<bool, String> {
    let text = match crate::vault::boundary::read_text_inside(root, Path::new(FILE), 64 << 20) {
        Ok(t) => t,
        Err(e) if e.is_not_found() => return Ok(false),
        Err(e) => return Err(e.to_string()),
    };
    let mut kept = String::with_capacity(text.len());
    let mut gone = false;
    for l in text.lines() {
        if serde_json::from_str::<Line>(l).is_ok_and(|line| line.session == session) {
            gone = true;
        } else {
            kept.push_str(l);
            kept.push('\n');
        }
    }
    if gone {
        crate::vault::boundary::write_atomic_inside(root, Path::new(FILE), kept.as_bytes())
            .map_err(|e| e.to_string())?;
    }
    Ok(gone)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(t: &str) -> ChatMessage {
        ChatMessage::user(t)
    }
    fn a(t: &str) -> ChatMessage {
        ChatMessage::assistant(t)
    }

    /// Plays `lines` (user and assistant in turn, the last a user's) as `session` with
    /// `reply`, and gives the request's [`Asked`].
    fn play(t: &mut Threads, session: &str, lines: &[&str], reply: &str) -> Asked {
        let asked = Asked::of(None, &msgs(lines));
        let n = t.turns.get(session).map_or(0, Vec::len);
        let _ = t.record(session, asked.step(reply, Some(n + 1)));
        asked
    }

    fn msgs(lines: &[&str]) -> Vec<ChatMessage> {
        lines
            .iter()
            .enumerate()
            .map(|(i, l)| if i % 2 == 0 { u(l) } else { a(l) })
            .collect()
    }

    fn next(t: &Threads, lines: &[&str]) -> (Found, Asked) {
        let asked = Asked::of(None, &msgs(lines));
        (t.find(asked.from, asked.from_tail), asked)
    }

    #[test]
    fn the_whole_history_names_the_state() {
        let alice = [u("I greet Odessa."), a("She nods.")];
        let bob = [u("I leave."), a("She nods.")];
        assert_ne!(State::of(None, &alice), State::of(None, &bob));
        assert_ne!(
            State::of(Some("alice"), &alice),
            State::of(Some("bob"), &alice),
            "the request's `user` keeps two players' identical chats apart"
        );
        assert_eq!(
            State::of(None, &[u("I greet  Odessa.\n"), a(" She nods.")]),
            State::of(None, &alice),
            "whitespace is the front end's"
        );
        assert_ne!(
            State::of(None, &[a("I greet Odessa."), u("She nods.")]),
            State::of(None, &alice),
            "roles count"
        );
        let step = State::of(None, &alice[..1]).then(&alice[1]);
        assert_eq!(step, State::of(None, &alice));
        assert_eq!(State::tail(None, &alice), None, "fewer than TAIL messages");
    }

    #[test]
    fn identical_replies_do_not_join_conversations() {
        let mut t = Threads::default();
        play(&mut t, "alice", &["Hello"], "Welcome.");
        play(&mut t, "bob", &["Hi there"], "Welcome.");
        assert_eq!(
            next(&t, &["Hello", "Welcome.", "x"]).0,
            Found::One("alice".into())
        );
        assert_eq!(
            next(&t, &["Hi there", "Welcome.", "x"]).0,
            Found::One("bob".into())
        );
        assert_eq!(next(&t, &["Howdy", "Welcome.", "x"]).0, Found::Nothing);
        // Two chats identical to the letter: neither is continued.
        play(&mut t, "carol", &["Hello"], "Welcome.");
        assert_eq!(next(&t, &["Hello", "Welcome.", "x"]).0, Found::Ambiguous(2));
    }

    #[test]
    fn a_trimmed_history_is_found_by_its_last_messages() {
        let mut t = Threads::default();
        play(&mut t, "s", &["A", "a1", "B"], "b1");
        play(&mut t, "s", &["A", "a1", "B", "b1", "C"], "c1");
        // The front end cut its oldest messages.
        let (f, asked) = next(&t, &["B", "b1", "C", "c1", "D"]);
        assert_eq!(f, Found::One("s".into()));
        assert_eq!(t.superseded("s", &asked), 0);
        let _ = t.record("s", asked.step("d1", Some(3)));
        // A swipe of that reply, still trimmed: it supersedes.
        let (f, asked) = next(&t, &["B", "b1", "C", "c1", "D"]);
        assert_eq!(f, Found::One("s".into()));
        assert_eq!(t.superseded("s", &asked), 1);
        // Another chat that ended the same two exchanges: neither is continued.
        play(&mut t, "other", &["Z", "z1", "B", "b1", "C"], "c1");
        assert_eq!(
            next(&t, &["B", "b1", "C", "c1", "D"]).0,
            Found::Ambiguous(2)
        );
    }

    #[test]
    fn regenerate_supersedes_the_turns_it_replaces() {
        let mut t = Threads::default();
        play(&mut t, "s", &["We go in."], "Dark.");
        play(
            &mut t,
            "s",
            &["We go in.", "Dark.", "I light a torch."],
            "Shadows dance.",
        );
        let sup = |t: &Threads, lines: &[&str]| t.superseded("s", &Asked::of(None, &msgs(lines)));
        let all = [
            "We go in.",
            "Dark.",
            "I light a torch.",
            "Shadows dance.",
            "On.",
        ];
        assert_eq!(sup(&t, &all), 0, "the next turn");
        assert_eq!(sup(&t, &all[..3]), 1, "Regenerate of the last reply");
        assert_eq!(
            sup(&t, &["We go in.", "Dark.", "I run."]),
            1,
            "the last message edited"
        );
        assert_eq!(sup(&t, &all[..1]), 2, "Regenerate of the first reply");
        assert_eq!(
            sup(&t, &["Another chat."]),
            0,
            "a new chat under the same session name replaces nothing"
        );
        // The regenerated reply replaces the old one: its state is gone.
        play(&mut t, "s", &all[..3], "The torch gutters.");
        assert_eq!(next(&t, &all).0, Found::Nothing);
        let regen = [
            "We go in.",
            "Dark.",
            "I light a torch.",
            "The torch gutters.",
            "On.",
        ];
        assert_eq!(next(&t, &regen).0, Found::One("s".into()));
        play(&mut t, "s", &["Another chat."], "Hm.");
        play(&mut t, "s", &["A third chat."], "Hm.");
        assert_eq!(t.turns["s"].len(), 4, "and keeps what was there");
        assert_eq!(sup(&t, &["A fourth chat."]), 0);
        assert_eq!(
            sup(&t, &["Another chat."]),
            0,
            "another chat's turn came after it: the log cannot take it back"
        );
        assert_eq!(sup(&t, &["A third chat."]), 1, "the last chat's Regenerate");
        assert_eq!(sup(&t, &all[..3]), 0, "behind the other chats");
        t.forget("s");
        assert_eq!(next(&t, &regen).0, Found::Nothing);
    }

    #[test]
    fn a_stopped_reply_is_found_by_what_the_front_end_kept() {
        let mut t = Threads::default();
        let asked = State::of(None, &[u("We wait.")]);
        t.stopped("s", asked, "The wind howls and howls");
        assert_eq!(
            t.find_stopped(asked, "The wind howls"),
            Found::One("s".into())
        );
        assert_eq!(
            t.find_stopped(asked, " The wind howls and howls "),
            Found::One("s".into())
        );
        assert_eq!(t.find_stopped(asked, "The rain"), Found::Nothing);
        assert_eq!(t.find_stopped(asked, ""), Found::Nothing);
        t.stopped("other", asked, "The wind howls on");
        assert_eq!(t.find_stopped(asked, "The wind howls"), Found::Ambiguous(2));
    }

    #[test]
    fn the_file_brings_the_states_back() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let mut t = Threads::load(dir.path());
        play(&mut t, "s", &["We go in."], "Dark.");
        play(&mut t, "s", &["We go in.", "Dark.", "On."], "Light.");
        play(&mut t, "s", &["We go in.", "Dark.", "On."], "Regenerated.");
        let again = Threads::load(dir.path());
        let lines = ["We go in.", "Dark.", "On.", "Regenerated.", "Next."];
        assert_eq!(next(&again, &lines).0, Found::One("s".into()));
        assert_eq!(
            next(&again, &["We go in.", "Dark.", "On.", "Light.", "Next."]).0,
            Found::Nothing
        );
        assert_eq!(again.turns["s"].len(), 2);
        assert_eq!(forget_in_file(dir.path(), "s"), Ok(true));
        assert_eq!(next(&Threads::load(dir.path()), &lines).0, Found::Nothing);
        assert_eq!(forget_in_file(dir.path(), "s"), Ok(false));
    }
}
