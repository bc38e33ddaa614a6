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
//!
//! The map lives in memory: after a restart, a conversation without the session header
//! continues in a new session. docs/serve.md says why the header is the way to run it.

use crate::llm::{ChatMessage, Role};
use std::collections::HashMap;

/// The hash of a conversation so far (FNV-1a: stable across builds and runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct State(u64);

impl State {
    /// The empty conversation of `user` (the request's `user` field, if any).
    pub fn start(user: Option<&str>) -> State {
        let mut s = State(0xcbf2_9ce4_8422_2325);
        s.bytes(b"vaultdm-conversation\x1e");
        if let Some(u) = user.map(str::trim).filter(|u| !u.is_empty()) {
            s.bytes(u.as_bytes());
        }
        s.bytes(b"\x1e");
        s
    }

    /// The state of `messages` (in order) from the start of `user`'s conversation.
    pub fn of(user: Option<&str>, messages: &[ChatMessage]) -> State {
        messages.iter().fold(State::start(user), |s, m| s.then(m))
    }

    fn bytes(&mut self, b: &[u8]) {
        for x in b {
            self.0 ^= u64::from(*x);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    /// The state after one more message. Whitespace is normalised (front ends trim and
    /// re-wrap what they show).
    pub fn then(mut self, m: &ChatMessage) -> State {
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
pub enum Found {
    /// No conversation is there: a new one.
    Nothing,
    /// Exactly one session is there.
    One(String),
    /// Several sessions reached the same state (identical conversations).
    Ambiguous(usize),
}

/// A recorded turn of a session: the state it continued from, with the player's message,
/// and after its reply.
#[derive(Debug, Clone, Copy)]
struct Turn {
    from: State,
    asked: State,
    to: State,
}

/// The states of one campaign's conversations.
#[derive(Debug, Default)]
pub struct Threads {
    /// State after a reply → the sessions whose conversation is there.
    at: HashMap<State, Vec<String>>,
    /// Each session's turns, oldest first.
    turns: HashMap<String, Vec<Turn>>,
}

/// A bound on what is remembered: past it, the map starts again (conversations continue in
/// new sessions, nothing crosses).
const MAX_STATES: usize = 100_000;

impl Threads {
    /// The session a conversation at `state` continues.
    pub fn find(&self, state: State) -> Found {
        match self.at.get(&state).map(Vec::as_slice) {
            None | Some([]) => Found::Nothing,
            Some([one]) => Found::One(one.clone()),
            Some(many) => Found::Ambiguous(many.len()),
        }
    }

    /// How many of `session`'s turns a request continuing from `from` (and asking `asked`:
    /// `from` with its new message) replaces: the turns from the one that continued from
    /// `from` on (0: it continues the last one). From where the session's first turn began, only
    /// the same first message is a regenerate: another one under the same session name is a
    /// new chat given that name (a header set once for all chats), and replaces nothing.
    pub fn superseded(&self, session: &str, from: State, asked: State) -> usize {
        let Some(turns) = self.turns.get(session) else {
            return 0;
        };
        match turns.iter().rposition(|t| t.from == from) {
            Some(0) if turns[0].asked != asked => 0,
            Some(k) => turns.len() - k,
            None => 0,
        }
    }

    /// Records that `session` played a turn from `from` to `to` (the reply as shown), after
    /// dropping the turns it superseded.
    pub fn record(&mut self, session: &str, from: State, asked: State, to: State) {
        if self.at.len() > MAX_STATES {
            self.at.clear();
            self.turns.clear();
        }
        let turns = self.turns.entry(session.to_owned()).or_default();
        if let Some(k) = turns.iter().rposition(|t| t.from == from) {
            for gone in turns.drain(k..) {
                if let Some(v) = self.at.get_mut(&gone.to) {
                    v.retain(|s| s != session);
                    if v.is_empty() {
                        self.at.remove(&gone.to);
                    }
                }
            }
        }
        turns.push(Turn { from, asked, to });
        let there = self.at.entry(to).or_default();
        if !there.iter().any(|s| s == session) {
            there.push(session.to_owned());
        }
    }

    /// Forgets a session (deleted, or closed for good).
    pub fn forget(&mut self, session: &str) {
        if let Some(turns) = self.turns.remove(session) {
            for t in turns {
                if let Some(v) = self.at.get_mut(&t.to) {
                    v.retain(|s| s != session);
                }
            }
        }
        self.at.retain(|_, v| !v.is_empty());
    }
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
    }

    #[test]
    fn identical_replies_do_not_join_conversations() {
        let mut t = Threads::default();
        let (a0, b0) = (
            State::of(None, &[u("Hello")]),
            State::of(None, &[u("Hi there")]),
        );
        let a1 = a0.then(&a("Welcome."));
        let b1 = b0.then(&a("Welcome."));
        t.record("alice", State::start(None), a0, a1);
        t.record("bob", State::start(None), b0, b1);
        assert_eq!(t.find(a1), Found::One("alice".into()));
        assert_eq!(t.find(b1), Found::One("bob".into()));
        // Two chats identical to the letter: neither is continued.
        t.record("carol", State::start(None), a0, a1);
        assert_eq!(t.find(a1), Found::Ambiguous(2));
    }

    #[test]
    fn regenerate_supersedes_the_turns_it_replaces() {
        let mut t = Threads::default();
        let s0 = State::start(None);
        let p1 = s0.then(&u("We go in."));
        let s1 = p1.then(&a("Dark."));
        let p2 = s1.then(&u("I light a torch."));
        let s2 = p2.then(&a("Shadows dance."));
        t.record("s", s0, p1, s1);
        t.record("s", s1, p2, s2);
        let ask = |s: State, m: &str| s.then(&u(m));
        assert_eq!(t.superseded("s", s2, ask(s2, "On.")), 0, "the next turn");
        assert_eq!(t.superseded("s", s1, p2), 1, "Regenerate of the last reply");
        assert_eq!(
            t.superseded("s", s1, ask(s1, "I run.")),
            1,
            "the last message edited"
        );
        assert_eq!(
            t.superseded("s", s0, p1),
            2,
            "Regenerate of the first reply"
        );
        assert_eq!(
            t.superseded("s", s0, ask(s0, "Another chat.")),
            0,
            "a new chat under the same session name replaces nothing"
        );
        // The regenerated reply replaces the old one: its state is gone.
        let s2b = p2.then(&a("The torch gutters."));
        t.record("s", s1, p2, s2b);
        assert_eq!(t.find(s2), Found::Nothing);
        assert_eq!(t.find(s2b), Found::One("s".into()));
        assert_eq!(t.superseded("s", s2b, ask(s2b, "On.")), 0);
        t.forget("s");
        assert_eq!(t.find(s2b), Found::Nothing);
    }
}
