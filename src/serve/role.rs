//! The two roles at the table: the GM, who sees everything, and a player, who may only chat.
//!
//! GMs keep secrets in their notes, and the DM is given them to reveal through play only. A
//! player's token must therefore reach the chat and nothing else, and no answer to it may
//! carry canon text by a side door. Who is who is decided by the guard
//! ([`super::guard`]) from the token a request carries, and put in the request's extensions
//! as a [`Role`]; which routes a player may call is a property of the route table
//! (`serve/mod.rs`: `Route::for_players`), so a route is GM-only unless it says otherwise.
//! This module is what a player's answer may carry:
//!
//! * **headers**: of vaultdm's own `x-vaultdm-*`, only [`PLAYER_HEADERS`] ([`strip_headers`],
//!   run by the guard on every answer to a player): a header added later is GM-only;
//! * **errors**: the message as it is only for the [`PLAYER_READABLE`] codes, whose messages
//!   are made of the request and fixed words; any other code — an upstream failure (whose
//!   text may quote the prompt, and with it the canon), a session, context or write failure
//!   (which name files, lock holders and notes), a code added later — gets a fixed line
//!   ([`Role::error`]), and the GM reads the whole message on the server's stderr;
//! * **the DM's proposals**: never (the appendix after a reply, `proxy.rs`);
//! * **another's session**: a player plays only sessions named `player-…`
//!   ([`PLAYER_SESSION_PREFIX`]): the name a player's front end gives is put under it, so a
//!   player never chats on top of the GM's own conversations with the DM.

use super::openai::{ApiError, SAVED_NOTE};
use axum::http::HeaderMap;

/// Who sent a request, by its token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// The GM's token (`--token`), or any request to a server without tokens: every route,
    /// every answer whole.
    Gm,
    /// A player's token (`--player-token`): the chat only (the routes the table opens to
    /// players), its answers stripped of what is GM-only.
    Player,
}

/// vaultdm's own headers a player's answer may carry: where the turn was played and how
/// (campaign, session, context mode, task, why a reply stops — none holds canon text).
/// Every other `x-vaultdm-*` header is taken off a player's answer.
pub(crate) const PLAYER_HEADERS: &[&str] = &[
    "x-vaultdm-campaign",
    "x-vaultdm-session",
    "x-vaultdm-context",
    "x-vaultdm-task",
    "x-vaultdm-cut-off",
];

/// The error codes whose message a player reads as it is: each is made only of what the
/// request sent (its body, its headers, its path) and fixed words, or names what `/v1/models`
/// lists anyway (`campaign_not_found`). `model_not_found` is not among them: the upstream's
/// answer for an unknown model comes under the same code, in its own words.
pub(crate) const PLAYER_READABLE: &[&str] = &[
    "invalid_json",
    "missing_messages",
    "invalid_content",
    "invalid_role",
    "no_user_message",
    "invalid_session",
    "request_too_large",
    "message_too_long",
    "body_timeout",
    "campaign_not_found",
    "not_found",
    "invalid_api_key",
    "gm_only",
    "host_not_allowed",
    "origin_not_allowed",
    "too_many_conversations",
    "reply_cut_off",
    "session_stopped",
    "task_stopped",
    "shutting_down",
    "reply_held",
];

/// A player's line for an error whose message is the GM's: what happened, in fixed words.
fn player_line(code: &str) -> &'static str {
    match code {
        "model_not_found" => {
            "no campaign or upstream model goes by that name: `GET /v1/models` lists what is served"
        }
        "upstream_not_configured" => {
            "this campaign has no upstream model; the GM's server says why"
        }
        "upstream_unauthorized" => {
            "the upstream model refused the server's API key; the GM's server says more"
        }
        "upstream_rejected" => "the upstream model rejected the request; the GM's server says why",
        "rate_limit_exceeded" => "the upstream model is rate-limiting the server; try again later",
        "upstream_timeout" => "the upstream model did not answer in time; try again",
        "upstream_error" => "the upstream model failed; the GM's server says why",
        "session_busy" => {
            "the session is busy (another request, or the GM's own chat, has it); try again"
        }
        "session_not_saved" | "context_failed" | "write_failed" => {
            "vaultdm could not play this turn; the GM's server says why"
        }
        _ => "vaultdm could not answer this request; the GM's server says why",
    }
}

/// The start of every session a player's token plays: a player's front end may name any
/// session, and the GM's own (a prep conversation asking the DM about the twist) must not
/// become the history of a player's chat. The GM plays any session, these included.
pub(crate) const PLAYER_SESSION_PREFIX: &str = "player-";

impl Role {
    /// The session a request naming `name` plays: the name itself for the GM; for a
    /// player, the name under [`PLAYER_SESSION_PREFIX`] (once).
    pub(crate) fn session_name(self, name: String) -> String {
        match self {
            Role::Player if !name.starts_with(PLAYER_SESSION_PREFIX) => {
                format!("{PLAYER_SESSION_PREFIX}{name}")
            }
            _ => name,
        }
    }

    /// Whether this role may play session `name`.
    pub(crate) fn may_play(self, name: &str) -> bool {
        self == Role::Gm || name.starts_with(PLAYER_SESSION_PREFIX)
    }

    /// The error as this role may read it: whole for the GM; for a player, whole when its
    /// code is [`PLAYER_READABLE`], else the code with a fixed line (and whether the message
    /// was saved), the whole message said on stderr for the GM.
    pub(crate) fn error(self, e: ApiError) -> ApiError {
        if self == Role::Gm || PLAYER_READABLE.contains(&e.code) {
            return e;
        }
        eprintln!(
            "vaultdm serve: a player's request failed ({} {}): {}",
            e.status.as_u16(),
            e.code,
            e.message
        );
        let saved = if e.message.ends_with(SAVED_NOTE) {
            SAVED_NOTE
        } else {
            ""
        };
        ApiError {
            message: format!("{}{saved}", player_line(e.code)),
            ..e
        }
    }
}

/// Takes every `x-vaultdm-*` header but [`PLAYER_HEADERS`] off a player's answer.
pub(crate) fn strip_headers(headers: &mut HeaderMap) {
    let gm_only: Vec<_> = headers
        .keys()
        .filter(|k| k.as_str().starts_with("x-vaultdm-") && !PLAYER_HEADERS.contains(&k.as_str()))
        .cloned()
        .collect();
    for k in gm_only {
        headers.remove(k);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::{HeaderValue, StatusCode};

    #[test]
    fn a_players_errors_keep_their_code_and_lose_the_gms_words() {
        let upstream = ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            "upstream_rejected",
            format!("http://10.0.0.2/v1 rejected the request (HTTP 400): bad prompt: Odessa poisoned him{SAVED_NOTE}"),
        );
        let shown = Role::Player.error(upstream.clone());
        assert_eq!(
            (shown.status, shown.kind, shown.code),
            (upstream.status, upstream.kind, upstream.code)
        );
        assert!(!shown.message.contains("Odessa"), "{}", shown.message);
        assert!(!shown.message.contains("10.0.0.2"), "{}", shown.message);
        assert!(shown.message.ends_with(SAVED_NOTE), "{}", shown.message);
        assert_eq!(Role::Gm.error(upstream.clone()), upstream);
        // A code nobody listed (added later) is the GM's.
        let new = ApiError::new(
            StatusCode::CONFLICT,
            "server_error",
            "brand_new",
            "canon text",
        );
        assert!(!Role::Player.error(new).message.contains("canon text"));
        let own = ApiError::invalid("no_user_message", "the last message must be the player's");
        assert_eq!(Role::Player.error(own.clone()), own);
    }

    /// docs/serve.md's table of response headers is exactly [`PLAYER_HEADERS`], as the note
    /// under it says: a header added for the GM alone changes the note, and this test.
    #[test]
    fn the_guide_lists_the_players_headers() {
        let guide = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/serve.md"),
        )
        .unwrap_or_else(|e| panic!("docs/serve.md: {e}"));
        let table = guide
            .split("### Response headers")
            .nth(1)
            .and_then(|t| t.split("\n### ").next())
            .unwrap_or_else(|| panic!("docs/serve.md has no Response headers section"));
        let mut listed: Vec<&str> = table
            .lines()
            .filter_map(|l| l.strip_prefix("| `"))
            .filter_map(|l| l.split('`').next())
            .collect();
        listed.sort_unstable();
        let mut ours = PLAYER_HEADERS.to_vec();
        ours.sort_unstable();
        assert_eq!(listed, ours);
        assert!(guide.contains("`gm_only`"));
    }

    #[test]
    fn a_players_headers_are_the_listed_ones() {
        let mut h = HeaderMap::new();
        for name in PLAYER_HEADERS.iter().chain(&[
            "x-vaultdm-proposals",
            "x-vaultdm-secret",
            "content-type",
        ]) {
            h.insert(*name, HeaderValue::from_static("v"));
        }
        strip_headers(&mut h);
        let mut left: Vec<&str> = h.keys().map(|k| k.as_str()).collect();
        left.sort_unstable();
        let mut want: Vec<&str> = PLAYER_HEADERS.to_vec();
        want.push("content-type");
        want.sort_unstable();
        assert_eq!(left, want);
    }
}

#[cfg(test)]
mod session_tests {
    use super::{Role, PLAYER_SESSION_PREFIX};

    #[test]
    fn a_player_plays_only_player_sessions_and_the_gm_plays_any() {
        assert_eq!(
            Role::Player.session_name("gm-prep".into()),
            "player-gm-prep"
        );
        assert_eq!(Role::Player.session_name("player-x".into()), "player-x");
        assert_eq!(Role::Gm.session_name("gm-prep".into()), "gm-prep");
        assert!(!Role::Player.may_play("gm-prep"));
        assert!(Role::Player.may_play(&format!("{PLAYER_SESSION_PREFIX}table")));
        assert!(Role::Gm.may_play("player-table") && Role::Gm.may_play("gm-prep"));
    }
}
