//! The leak guard at a served table: telling the GM, and holding a reply back.
//!
//! After every turn the table compares the DM's reply with the GM secrets it was given
//! ([`crate::play::leak`]). `serve` tells the GM of a match three ways: a `leak` event on the
//! campaign's event stream (sent by the conversation as the turn ends, whoever asked), an
//! `x-vaultdm-leak` header on a GM's whole (non-streamed) answer, and the server's stderr.
//! A player never learns of it: the event stream is GM-only, the header is not one a
//! player's answer may carry ([`super::role::PLAYER_HEADERS`]).
//!
//! With `--hold-leaks`, a player's reply is not streamed as it arrives: the whole reply is
//! checked first, and one that matches is held ([`Holds`]) — a `held` event gives the GM the
//! reply and what matched — until the GM releases it (the player gets it as if it had just
//! arrived) or drops it (the exchange is taken back from the DM's history, kept marked in
//! the log, and the player is asked to send the message again), or `--hold-for` passes,
//! which drops it. Replies to the GM are never held.

use super::campaign::Campaign;
use super::conversation::Event;
use super::openai::ApiError;
use super::App;
use crate::play::leak::Leak;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// What the GM decided for a held reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The player gets the reply.
    Release,
    /// The reply is taken back; the player sends the message again.
    Drop,
}

impl Verdict {
    fn word(self) -> &'static str {
        match self {
            Verdict::Release => "released",
            Verdict::Drop => "dropped",
        }
    }
}

/// A reply held back from a player.
struct Waiting {
    session: String,
    since: chrono::DateTime<chrono::Utc>,
    reply: String,
    leaks: Vec<Leak>,
    decide: oneshot::Sender<Verdict>,
}

/// A campaign's held replies, by number.
#[derive(Default)]
pub(crate) struct Holds {
    next: AtomicU64,
    waiting: Mutex<BTreeMap<u64, Waiting>>,
}

impl Holds {
    fn waiting(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Waiting>> {
        self.waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Holds a reply: its number, and where the GM's verdict arrives.
    fn hold(
        &self,
        session: &str,
        reply: &str,
        leaks: &[Leak],
    ) -> (u64, oneshot::Receiver<Verdict>) {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let (tx, rx) = oneshot::channel();
        self.waiting().insert(
            id,
            Waiting {
                session: session.to_owned(),
                since: chrono::Utc::now(),
                reply: reply.to_owned(),
                leaks: leaks.to_vec(),
                decide: tx,
            },
        );
        (id, rx)
    }

    /// Decides held reply `id`; false when no reply is held under it (decided already, or
    /// its wait ended).
    fn decide(&self, id: u64, verdict: Verdict) -> bool {
        match self.waiting().remove(&id) {
            Some(w) => w.decide.send(verdict).is_ok(),
            None => false,
        }
    }

    /// Forgets held reply `id` (its wait ended); true when it was still held.
    fn forget(&self, id: u64) -> bool {
        self.waiting().remove(&id).is_some()
    }

    /// The replies held now, oldest first, as the API lists them.
    fn list(&self) -> Vec<Value> {
        self.waiting()
            .iter()
            .map(|(id, w)| {
                json!({
                    "id": id,
                    "session": w.session,
                    "since": w.since.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                    "reply": w.reply,
                    "leaks": w.leaks,
                })
            })
            .collect()
    }
}

/// The `leak` event: which reply of which session matched which secret.
pub(crate) fn leak_event(campaign: &str, session: &str, exchange: usize, leaks: &[Leak]) -> Value {
    json!({
        "campaign": campaign,
        "session": session,
        "exchange": exchange,
        "leaks": leaks,
    })
}

/// The `x-vaultdm-leak` header's value: how many secrets the reply may give away, and
/// where they are (`2; canon/npcs/jonah.md:6, GM/truth.md:3`), percent-escaped to ASCII.
pub(crate) fn leak_header(leaks: &[Leak]) -> String {
    let mut sources: Vec<&str> = Vec::new();
    for l in leaks {
        if !sources.contains(&l.source.as_str()) {
            sources.push(&l.source);
        }
    }
    let value = format!("{}; {}", sources.len(), sources.join(", "));
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if (0x20..0x7f).contains(&b) && b != b'%' {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The error a player gets for a reply the GM dropped (or did not release in time).
fn dropped() -> ApiError {
    ApiError::new(
        StatusCode::CONFLICT,
        "server_error",
        "reply_held",
        "the GM held this reply back; send your message again, or put it another way",
    )
}

/// A player's turn under `--hold-leaks`: the whole reply is waited for (nothing reaches the
/// player before it is checked), then given back as the turn's events — at once when it
/// matches no secret, after the GM releases it when it does. A dropped reply, or one not
/// released within `wait`, is taken back from the session and answered with
/// [`dropped`]; so is one held when the server stops.
pub(crate) async fn checked(
    app: &App,
    campaign: &Campaign,
    session: &str,
    mut rx: mpsc::UnboundedReceiver<Event>,
    first: Event,
    wait: Duration,
) -> Result<(mpsc::UnboundedReceiver<Event>, Event), ApiError> {
    let mut text = String::new();
    let mut next = Some(first);
    let done = loop {
        let event = match next.take() {
            Some(e) => Some(e),
            None => rx.recv().await,
        };
        match event {
            Some(Event::Token(t)) => text.push_str(&t),
            Some(Event::Done(d)) => break d,
            // The session stopped before the turn ended (the server stops).
            None => {
                return Err(ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "server_error",
                    "session_stopped",
                    "the session stopped before the reply ended",
                ))
            }
        }
    };
    let (leaks, exchanges) = match &*done {
        Ok(f) if !f.turn.leaks.is_empty() => (f.turn.leaks.clone(), f.exchanges),
        _ => return Ok(replay(text, done)),
    };
    let (id, verdict) = campaign.held.hold(session, &text, &leaks);
    let timeout = wait.as_secs();
    campaign.publish(
        "held",
        &json!({
            "id": id,
            "campaign": campaign.id,
            "session": session,
            "reply": text,
            "leaks": leaks,
            "timeout_secs": timeout,
        }),
    );
    eprintln!(
        "vaultdm serve: session {session}: a reply to a player is held (it may give away a GM secret): release it with `POST /campaigns/{}/held/{id}/release`, drop it with `…/drop`; it is dropped in {timeout} s",
        campaign.id
    );
    let mut shutdown = app.shutdown.clone();
    let (verdict, by) = tokio::select! {
        v = verdict => (v.unwrap_or(Verdict::Drop), "gm"),
        _ = tokio::time::sleep(wait) => (Verdict::Drop, "timeout"),
        _ = shutdown.wait_for(|s| *s) => (Verdict::Drop, "shutdown"),
    };
    if by != "gm" {
        campaign.held.forget(id);
    }
    campaign.publish(
        "held_decided",
        &json!({"id": id, "campaign": campaign.id, "session": session, "verdict": verdict.word(), "by": by}),
    );
    if verdict == Verdict::Release {
        return Ok(replay(text, done));
    }
    withdraw(campaign, session, exchanges).await;
    Err(dropped())
}

/// Takes a dropped reply's exchange back from its session (said on stderr when it cannot).
async fn withdraw(campaign: &Campaign, session: &str, exchanges: usize) {
    let taken = match campaign.open_conversation(session) {
        Some(c) => c.withdraw(exchanges).await,
        None => None,
    };
    match taken {
        Some(Ok(true)) => {}
        Some(Ok(false)) => eprintln!(
            "vaultdm serve: session {session}: the dropped reply stays in the DM's history: the session was played on since"
        ),
        Some(Err(e)) => eprintln!(
            "vaultdm serve: session {session}: the dropped reply could not be taken back: {e}"
        ),
        None => eprintln!(
            "vaultdm serve: session {session}: the dropped reply stays in the DM's history: the session was closed"
        ),
    }
}

/// A checked turn given back as the events the answer reads.
fn replay(
    text: String,
    done: Box<Result<super::conversation::Finished, crate::play::SendError>>,
) -> (mpsc::UnboundedReceiver<Event>, Event) {
    let (tx, rx) = mpsc::unbounded_channel();
    if text.is_empty() {
        return (rx, Event::Done(done));
    }
    let _ = tx.send(Event::Done(done));
    (rx, Event::Token(text))
}

/// `GET /campaigns/{id}/held`: the replies held back from players now, with what matched.
pub(crate) async fn list(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let c = super::api::campaign(&app, &id)?;
    Ok(Json(json!({"campaign": c.id, "held": c.held.list()})).into_response())
}

/// `POST /campaigns/{id}/held/{n}/release`: the player gets held reply `n`.
pub(crate) async fn release(
    State(app): State<Arc<App>>,
    Path((id, n)): Path<(String, u64)>,
) -> Result<Response, ApiError> {
    decide(&app, &id, n, Verdict::Release)
}

/// `POST /campaigns/{id}/held/{n}/drop`: held reply `n` is taken back.
pub(crate) async fn drop_held(
    State(app): State<Arc<App>>,
    Path((id, n)): Path<(String, u64)>,
) -> Result<Response, ApiError> {
    decide(&app, &id, n, Verdict::Drop)
}

fn decide(app: &App, id: &str, n: u64, verdict: Verdict) -> Result<Response, ApiError> {
    let c = super::api::campaign(app, id)?;
    if !c.held.decide(n, verdict) {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "invalid_request_error",
            "not_held",
            format!("no reply is held as {n} (decided already, or its wait ended): `GET /campaigns/{id}/held` lists them"),
        ));
    }
    Ok(Json(json!({"id": n, "verdict": verdict.word()})).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::play::leak::LeakKind;

    fn leak(source: &str) -> Leak {
        Leak {
            source: source.into(),
            entity: Some("NPC Jonah Sallow".into()),
            excerpt: "sold the date of the strike".into(),
            kind: LeakKind::Verbatim { words: 7 },
        }
    }

    #[test]
    fn the_header_names_each_source_once_in_ascii() {
        let l = [
            leak("canon/npcs/jonah.md:6"),
            leak("canon/npcs/jonah.md:6"),
            leak("GM/Geheimnisse – Mühle.md:3"),
        ];
        let h = leak_header(&l);
        assert_eq!(
            h,
            "2; canon/npcs/jonah.md:6, GM/Geheimnisse %E2%80%93 M%C3%BChle.md:3"
        );
        assert!(axum::http::HeaderValue::from_str(&h).is_ok());
    }

    #[test]
    fn a_leak_event_carries_what_matched_and_where() {
        let v = leak_event("coldharrow", "s1", 4, &[leak("canon/npcs/jonah.md:6")]);
        assert_eq!(v["session"], "s1");
        assert_eq!(v["exchange"], 4);
        assert_eq!(v["leaks"][0]["source"], "canon/npcs/jonah.md:6");
        assert_eq!(v["leaks"][0]["kind"], "verbatim");
        assert_eq!(v["leaks"][0]["words"], 7);
        assert_eq!(v["leaks"][0]["entity"], "NPC Jonah Sallow");
    }

    #[tokio::test]
    async fn a_held_reply_is_decided_once() {
        let holds = Holds::default();
        let (id, rx) = holds.hold("s1", "the reply", &[leak("a.md:1")]);
        assert_eq!(holds.list().len(), 1);
        assert_eq!(holds.list()[0]["reply"], "the reply");
        assert!(holds.decide(id, Verdict::Release));
        assert_eq!(rx.await.ok(), Some(Verdict::Release));
        assert!(!holds.decide(id, Verdict::Drop), "decided already");
        assert!(holds.list().is_empty());
        let (id2, _rx) = holds.hold("s1", "another", &[]);
        assert_ne!(id, id2);
        assert!(holds.forget(id2));
        assert!(!holds.decide(id2, Verdict::Release), "its wait ended");
    }
}
