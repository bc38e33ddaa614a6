//! Who may talk to the server.
//!
//! * **Token**: with a token set (always on a non-loopback address), every route wants
//!   `Authorization: Bearer TOKEN` — or `?token=TOKEN`, for what a browser cannot give a
//!   header: the inspector page's address and its event stream.
//! * **Role**: the GM's token (or no token, on a server without any) is the GM's
//!   [`Role`]; a player's token (`--player-token`) is a player's, which may call only the
//!   routes the table opens to players (`403 gm_only` elsewhere, before a body is read) and
//!   whose answers lose every header that is not theirs ([`super::role`]). The role goes in
//!   the request's extensions for the handlers.
//! * **Host**: on a loopback address, `Host` must be a loopback name (or one allowed with
//!   `--allow-host`), so a web page cannot reach the server through DNS rebinding.
//! * **Origin**: a request from a browser page is served only if the page is the inspector
//!   itself or one of the `--cors-origin`s; those get CORS headers, and their preflights
//!   are answered without a token (browsers send none).
//! * **Time**: a request's body must arrive within `--body-timeout` of its headers
//!   ([`body_within`]); the headers themselves within the header timeout, which the accept
//!   loop (`serve/mod.rs`) sets on every connection before any check runs.

use super::openai::ApiError;
use super::role::{self, Role};
use super::{App, ServeOptions};
use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// The checks, as configured.
#[derive(Debug, Clone)]
pub(crate) struct Guard {
    /// The GM's token.
    token: Option<String>,
    /// The players' tokens.
    players: Vec<String>,
    /// The routes open to players: method and path as the table names them.
    player_routes: Vec<(Method, &'static str)>,
    cors: Vec<String>,
    loopback: bool,
    hosts: Vec<String>,
}

/// Whether two strings are equal, taking the same time wherever they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A query value as its bytes: `%XX` decoded, `+` a space.
fn percent_decoded(v: &str) -> Vec<u8> {
    let hex = |c: u8| (c as char).to_digit(16).and_then(|d| u8::try_from(d).ok());
    let b = v.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let pair = (b[i] == b'%')
            .then(|| Some((hex(*b.get(i + 1)?)?, hex(*b.get(i + 2)?)?)))
            .flatten();
        match (pair, b[i]) {
            (Some((hi, lo)), _) => {
                out.push(hi * 16 + lo);
                i += 3;
                continue;
            }
            (None, b'+') => out.push(b' '),
            (None, c) => out.push(c),
        }
        i += 1;
    }
    out
}

fn host_name(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    host.rsplit_once(':').map_or(host, |(h, _)| h)
}

impl Guard {
    /// The guard for these options (listening at `opts.listen`); a player's token may call
    /// `player_routes` (method and path as the route table names them) and nothing else.
    pub(crate) fn new(opts: &ServeOptions, player_routes: Vec<(Method, &'static str)>) -> Guard {
        let mut players: Vec<String> = opts
            .player_tokens
            .iter()
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty())
            .collect();
        players.sort_unstable();
        players.dedup();
        Guard {
            token: opts
                .token
                .as_deref()
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(str::to_owned),
            players,
            player_routes,
            cors: opts
                .cors
                .iter()
                .map(|o| o.trim().trim_end_matches('/').to_ascii_lowercase())
                .collect(),
            loopback: opts.listen.ip().is_loopback(),
            hosts: opts.hosts.iter().map(|h| h.to_ascii_lowercase()).collect(),
        }
    }

    fn host_ok(&self, host: Option<&str>) -> bool {
        if !self.loopback {
            return true;
        }
        let Some(host) = host else { return true };
        let name = host_name(host).to_ascii_lowercase();
        name == "localhost"
            || name.ends_with(".localhost")
            || name
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
            || self.hosts.contains(&name)
    }

    /// The allowed origin a request comes from: `Ok(None)` no Origin (not a browser page, or
    /// a same-origin GET), `Ok(Some)` allowed (CORS headers go on the answer), `Err` refused.
    fn origin<'a>(
        &self,
        origin: Option<&'a str>,
        host: Option<&str>,
    ) -> Result<Option<&'a str>, ()> {
        let Some(o) = origin else { return Ok(None) };
        let lower = o.trim_end_matches('/').to_ascii_lowercase();
        let own = host.is_some_and(|h| {
            lower == format!("http://{}", h.to_ascii_lowercase())
                || lower == format!("https://{}", h.to_ascii_lowercase())
        });
        if own {
            return Ok(None);
        }
        if self.cors.iter().any(|c| c == "*" || *c == lower) {
            return Ok(Some(o));
        }
        Err(())
    }

    /// The role of a request by the token it carries (`Authorization: Bearer`, or
    /// `?token=`): the GM's token makes it the GM's, a player's a player's; `None` is no
    /// known token. A server without tokens takes every request as the GM's; one with player
    /// tokens always has a GM token ([`super::App::open`] refuses it otherwise), so a request
    /// without a token never gets the GM's rights there, even on loopback.
    fn role(&self, req: &Request) -> Option<Role> {
        let Some(gm) = &self.token else {
            return Some(Role::Gm);
        };
        let bearer = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|h| h.to_str().ok())
            .and_then(|h| {
                h.strip_prefix("Bearer ")
                    .or_else(|| h.strip_prefix("bearer "))
            })
            .map(|b| b.trim().as_bytes().to_vec());
        let query = req.uri().query().into_iter().flat_map(|q| {
            q.split('&')
                .filter_map(|kv| kv.strip_prefix("token="))
                .map(percent_decoded)
        });
        let given: Vec<Vec<u8>> = bearer.into_iter().chain(query).collect();
        if given.iter().any(|t| same(t, gm.as_bytes())) {
            return Some(Role::Gm);
        }
        given
            .iter()
            .any(|t| self.players.iter().any(|p| same(t, p.as_bytes())))
            .then_some(Role::Player)
    }

    /// Whether a player may call this method on the route the request matched (`None`: no
    /// route, the fallback's `404`, which names only the path asked). `HEAD` is `GET`'s.
    fn open_to_players(&self, method: &Method, matched: Option<&str>) -> bool {
        let Some(path) = matched else { return true };
        let method = if method == Method::HEAD {
            &Method::GET
        } else {
            method
        };
        self.player_routes
            .iter()
            .any(|(m, p)| m == method && *p == path)
    }

    /// The routes open to players, as `METHOD path` for the refusal's message.
    fn player_routes_named(&self) -> String {
        self.player_routes
            .iter()
            .map(|(m, p)| format!("{m} {p}"))
            .collect::<Vec<_>>()
            .join(" and ")
    }
}

/// Reads a request's body within the body timeout (after [`check`] passed it): a client
/// that sends headers and then trickles or withholds its body is answered `408` and its
/// connection freed, instead of holding a handler forever. Bodies over the size limit are
/// answered `413` here, in the documented error shape.
pub(crate) async fn body_within(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    if matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS) {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    let read = axum::body::to_bytes(body, app.limits.max_body_bytes);
    match tokio::time::timeout(app.limits.body_timeout, read).await {
        Ok(Ok(bytes)) => {
            next.run(Request::from_parts(parts, axum::body::Body::from(bytes)))
                .await
        }
        Ok(Err(_)) => refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            "request_too_large",
            &format!(
                "the request body is over the limit of {} bytes (`vaultdm serve --max-body-bytes` sets it), or the client cut it off",
                app.limits.max_body_bytes
            ),
        ),
        Err(_) => refuse(
            StatusCode::REQUEST_TIMEOUT,
            "body_timeout",
            &format!(
                "the request body did not arrive within {}s",
                app.limits.body_timeout.as_secs_f64()
            ),
        ),
    }
}

fn refuse(status: StatusCode, code: &'static str, message: &str) -> Response {
    ApiError::new(status, "invalid_request_error", code, message).into_response()
}

fn cors_headers(r: &mut Response, origin: &str, asked: Option<&HeaderValue>) {
    let h = r.headers_mut();
    if let Ok(v) = HeaderValue::from_str(origin) {
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, v);
    }
    h.insert(header::VARY, HeaderValue::from_static("Origin"));
    // Whatever headers the page's client sends (the OpenAI JS library adds its own
    // `x-stainless-*`): an allowed origin is trusted with its headers.
    h.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        asked.cloned().unwrap_or(HeaderValue::from_static(
            "authorization, content-type, x-vaultdm-campaign, x-vaultdm-session",
        )),
    );
    h.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST, OPTIONS"),
    );
    h.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static(
            "x-vaultdm-campaign, x-vaultdm-session, x-vaultdm-context, x-vaultdm-task",
        ),
    );
    h.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("600"),
    );
}

/// The middleware: every request passes here first.
pub(crate) async fn check(State(app): State<Arc<App>>, mut req: Request, next: Next) -> Response {
    let g = &app.guard;
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned);
    if !g.host_ok(host.as_deref()) {
        return refuse(
            StatusCode::FORBIDDEN,
            "host_not_allowed",
            "this server listens on loopback and answers only to localhost names (`vaultdm serve --allow-host NAME` adds one)",
        );
    }
    let origin = req
        .headers()
        .get(header::ORIGIN)
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned);
    let allowed = match g.origin(origin.as_deref(), host.as_deref()) {
        Ok(a) => a.map(str::to_owned),
        Err(()) => {
            return refuse(
                StatusCode::FORBIDDEN,
                "origin_not_allowed",
                "requests from this web page's origin are not allowed (`vaultdm serve --cors-origin URL` allows one)",
            )
        }
    };
    let asked = req
        .headers()
        .get(header::ACCESS_CONTROL_REQUEST_HEADERS)
        .cloned();
    if req.method() == Method::OPTIONS {
        let mut r = StatusCode::NO_CONTENT.into_response();
        if let Some(o) = &allowed {
            cors_headers(&mut r, o, asked.as_ref());
        }
        return r;
    }
    let Some(role) = g.role(&req) else {
        let mut r = refuse(
            StatusCode::UNAUTHORIZED,
            "invalid_api_key",
            "this server wants its token: `Authorization: Bearer TOKEN` (the API key field of your front end), or ?token=TOKEN in the address",
        );
        r.headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        if let Some(o) = &allowed {
            cors_headers(&mut r, o, asked.as_ref());
        }
        return r;
    };
    let matched = req
        .extensions()
        .get::<MatchedPath>()
        .map(MatchedPath::as_str);
    if role == Role::Player && !g.open_to_players(req.method(), matched) {
        // Fixed words and the table's player routes: nothing of the campaign.
        let mut r = refuse(
            StatusCode::FORBIDDEN,
            "gm_only",
            &format!(
                "this is a player's token: it may call {} only; the inspector, the canon API and the DM's proposals want the GM's token",
                g.player_routes_named()
            ),
        );
        if let Some(o) = &allowed {
            cors_headers(&mut r, o, asked.as_ref());
        }
        return r;
    }
    req.extensions_mut().insert(role);
    let mut r = next.run(req).await;
    if role == Role::Player {
        role::strip_headers(r.headers_mut());
    }
    if let Some(o) = &allowed {
        cors_headers(&mut r, o, asked.as_ref());
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(loopback: bool, cors: &[&str]) -> Guard {
        Guard {
            token: Some("t0k".into()),
            players: Vec::new(),
            player_routes: Vec::new(),
            cors: cors.iter().map(|s| (*s).to_owned()).collect(),
            loopback,
            hosts: vec!["vault.lan".into()],
        }
    }

    #[test]
    fn hosts_on_loopback() {
        let g = guard(true, &[]);
        for ok in [
            "localhost:8080",
            "127.0.0.1:1",
            "[::1]:9",
            "vault.lan:3",
            "a.localhost",
        ] {
            assert!(g.host_ok(Some(ok)), "{ok}");
        }
        for bad in ["evil.example:8080", "192.168.1.4:80"] {
            assert!(!g.host_ok(Some(bad)), "{bad}");
        }
        assert!(guard(false, &[]).host_ok(Some("evil.example")));
    }

    #[test]
    fn origins() {
        let g = guard(true, &["http://localhost:8000"]);
        assert_eq!(g.origin(None, Some("127.0.0.1:5")), Ok(None));
        assert_eq!(
            g.origin(Some("http://127.0.0.1:5"), Some("127.0.0.1:5")),
            Ok(None)
        );
        assert_eq!(
            g.origin(Some("http://localhost:8000"), Some("127.0.0.1:5")),
            Ok(Some("http://localhost:8000"))
        );
        assert_eq!(
            g.origin(Some("https://evil.example"), Some("127.0.0.1:5")),
            Err(())
        );
    }

    #[test]
    fn tokens_in_addresses_are_decoded() {
        assert_eq!(percent_decoded("a%20b+c%2F"), b"a b c/");
        assert_eq!(percent_decoded("100%"), b"100%");
        assert_eq!(percent_decoded("%zz"), b"%zz");
        assert_eq!(percent_decoded("%C3%A9"), "é".as_bytes());
    }

    #[test]
    fn roles_by_token() {
        fn role(g: &Guard, auth: Option<&str>, uri: &str) -> Option<Role> {
            let mut r = axum::http::Request::builder().uri(uri);
            if let Some(a) = auth {
                r = r.header(header::AUTHORIZATION, a);
            }
            let r = r
                .body(axum::body::Body::empty())
                .unwrap_or_else(|e| panic!("{e}"));
            g.role(&r)
        }
        let mut g = guard(false, &[]);
        g.players = vec!["p1ay".into()];
        assert_eq!(role(&g, Some("Bearer t0k"), "/"), Some(Role::Gm));
        assert_eq!(role(&g, Some("Bearer p1ay"), "/"), Some(Role::Player));
        assert_eq!(role(&g, None, "/?token=p1ay"), Some(Role::Player));
        // The GM's token anywhere in the request is the GM's.
        assert_eq!(role(&g, Some("Bearer p1ay"), "/?token=t0k"), Some(Role::Gm));
        assert_eq!(role(&g, None, "/"), None);
        assert_eq!(role(&g, Some("Bearer p1a"), "/?token=x"), None);
        // No token at all: the GM's server, as before there were roles.
        g.token = None;
        g.players.clear();
        assert_eq!(role(&g, None, "/"), Some(Role::Gm));
    }

    #[test]
    fn constant_time_compare() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"abcd"));
    }
}
