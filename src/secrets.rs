//! Recognising API keys, so none is ever printed.
//!
//! Keys belong in environment variables, but GMs paste them where they do not belong: into
//! `vaultdm.toml`, or as the *name* of the variable (`--api-key-env sk-…`). vaultdm refuses
//! both, and everything it prints that could hold one — `check` snippets, settings, errors —
//! goes through [`mask_secrets`] or is checked with [`looks_like_secret`] first.
//!
//! A key can also hide in a base URL: `https://user:password@host/v1` or
//! `…/v1?api_key=…`. [`mask_url`] masks the password and such query values, and
//! [`mask_printed`] does both kinds of masking on any text about to be printed (settings,
//! banners, error messages).

/// Known key prefixes: OpenAI (`sk-`, `sk-proj-`), Anthropic (`sk-ant-`), OpenRouter
/// (`sk-or-`), Groq (`gsk_`), Google (`AIza`), xAI (`xai-`), Hugging Face (`hf_`),
/// Replicate (`r8_`), Perplexity (`pplx-`), GitHub (`ghp_`, `github_pat_`).
const PREFIXES: &[&str] = &[
    "sk-",
    "gsk_",
    "AIza",
    "xai-",
    "hf_",
    "r8_",
    "pplx-",
    "ghp_",
    "github_pat_",
];

fn is_key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == '_'
}

/// True when `s` (trimmed, optionally quoted) looks like an API key: a known provider prefix
/// followed by at least 16 key characters, or a 32+ character token of letters and digits
/// (both) with no spaces — the shape of Mistral, Together and most other keys. Environment
/// variable names (`OPENAI_API_KEY`) never match: they have no digits-and-lower-case mix.
pub(crate) fn looks_like_secret(s: &str) -> bool {
    let s = s.trim().trim_matches(['"', '\'']);
    if s.is_empty() || !s.chars().all(is_key_char) {
        return false;
    }
    if PREFIXES
        .iter()
        .any(|p| s.starts_with(p) && s.len() >= p.len() + 16)
    {
        return true;
    }
    let digits = s.chars().filter(char::is_ascii_digit).count();
    let lower = s.chars().filter(char::is_ascii_lowercase).count();
    let upper = s.chars().filter(char::is_ascii_uppercase).count();
    let separators = s.len() - digits - lower - upper;
    s.len() >= 32
        && separators <= 1
        && digits >= 4
        && lower + upper >= 8
        && (lower >= 4 || digits >= 8)
}

/// The masked form of a key: its first three and last four characters (`sk-…abcd`) when it
/// is long enough for that to reveal nothing useful, else `…`.
pub(crate) fn mask(secret: &str) -> String {
    let chars: Vec<char> = secret.chars().collect();
    if chars.len() >= 16 {
        let head: String = chars[..3].iter().collect();
        let tail: String = chars[chars.len() - 4..].iter().collect();
        format!("{head}…{tail}")
    } else {
        "…".to_owned()
    }
}

/// `text` with every token that [`looks_like_secret`] replaced by its [`mask`].
pub(crate) fn mask_secrets(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut token = String::new();
    let flush = |token: &mut String, out: &mut String| {
        if looks_like_secret(token) {
            out.push_str(&mask(token));
        } else {
            out.push_str(token);
        }
        token.clear();
    };
    for c in text.chars() {
        if is_key_char(c) {
            token.push(c);
        } else {
            flush(&mut token, &mut out);
            out.push(c);
        }
    }
    flush(&mut token, &mut out);
    out
}

/// Query parameters whose values are credentials (compared without case, `-` as `_`).
const SECRET_PARAMS: &[&str] = &[
    "key",
    "api_key",
    "apikey",
    "token",
    "access_token",
    "auth",
    "authorization",
    "password",
    "pass",
    "secret",
    "client_secret",
    "sig",
    "signature",
    "x_api_key",
    "code",
];

fn is_secret_param(name: &str) -> bool {
    let n = name.to_ascii_lowercase().replace('-', "_");
    SECRET_PARAMS.contains(&n.as_str()) || n.ends_with("_key") || n.ends_with("_token")
}

/// `url` with any password in it (`user:password@`) and the values of credential query
/// parameters (`?api_key=…`, `&token=…`) replaced by `…`; keys elsewhere in it are masked
/// by [`mask_secrets`]. Everything else is kept, so the GM still sees which server it is.
pub(crate) fn mask_url(url: &str) -> String {
    let (scheme, rest) = match url.find("://") {
        Some(i) => url.split_at(i + 3),
        None => ("", url),
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let authority = match authority.rfind('@') {
        Some(at) => {
            let user = &authority[..at];
            let host = &authority[at + 1..];
            match user.split_once(':') {
                Some((name, _)) if !name.is_empty() => format!("{name}:…@{host}"),
                _ => format!("…@{host}"),
            }
        }
        None => authority.to_owned(),
    };
    let (path, query_and_fragment) = match tail.find('?') {
        Some(q) => tail.split_at(q),
        None => (tail, ""),
    };
    let (query, fragment) = match query_and_fragment.find('#') {
        Some(h) => query_and_fragment.split_at(h),
        None => (query_and_fragment, ""),
    };
    let query = if query.is_empty() {
        String::new()
    } else {
        let pairs: Vec<String> = query[1..]
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, v)) if is_secret_param(k) && !v.is_empty() => format!("{k}=…"),
                _ => pair.to_owned(),
            })
            .collect();
        format!("?{}", pairs.join("&"))
    };
    mask_secrets(&format!("{scheme}{authority}{path}{query}{fragment}"))
}

/// `text` with every `http://` or `https://` URL in it passed through [`mask_url`] and every
/// other key-like token through [`mask_secrets`]: what everything vaultdm prints about its
/// settings and errors goes through.
pub(crate) fn mask_printed(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        // ASCII patterns: a byte match is always on a character boundary.
        let found = ["http://", "https://"]
            .iter()
            .filter_map(|p| {
                rest.as_bytes()
                    .windows(p.len())
                    .position(|w| w.eq_ignore_ascii_case(p.as_bytes()))
            })
            .min();
        let Some(start) = found else {
            out.push_str(&mask_secrets(rest));
            return out;
        };
        out.push_str(&mask_secrets(&rest[..start]));
        let after = &rest[start..];
        let end = after
            .find(|c: char| {
                c.is_whitespace() || matches!(c, '"' | '\'' | '`' | '<' | '>' | ')' | ']')
            })
            .unwrap_or(after.len());
        out.push_str(&mask_url(&after[..end]));
        rest = &after[end..];
    }
}

/// True when `name` can be an environment variable name (`[A-Za-z_][A-Za-z0-9_]*`).
pub(crate) fn is_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    /// Planted keys in each provider's shape (all fake).
    pub(super) const PLANTED: &[&str] = &[
        "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0fGh3i",
        "sk-ant-api03-Xy9_Zk2LmN4pQr6StUv8WxYz0aBcDeFgHiJkLmNoPqRsTuVwXyZ-12AbCdEf",
        "sk-or-v1-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "sk-5f3a9b2c7d1e4f6a8b0c2d4e6f8a0b1c",
        "gsk_4Fa9Kd2Lq8Zx1Vb7Nm3Pw6Ty0Ru5Es2Hc9Jg4Mk1Ld8Qf3Xa7",
        "AIzaSyD3x4mPl3K3yF0rT3st1ng0nlyAbCdEfGh",
        "xai-3kD9fLq2Zx8Vb1Nm7Pw4Ty6Ru0Es5Hc3Jg9Mk2Ld7Qf1Xa4Sd8Fg",
        "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
        "Zk2LmN4pQr6StUv8WxYz0aBcDeFgHi12",
    ];

    #[test]
    fn every_planted_key_is_recognised_and_masked() {
        for k in PLANTED {
            assert!(looks_like_secret(k), "{k}");
            let line = format!("api_key = \"{k}\" # mine");
            let shown = mask_secrets(&line);
            assert!(!shown.contains(&k[6..k.len() - 4]), "{shown}");
            assert!(shown.starts_with("api_key = \"") && shown.ends_with("\" # mine"));
        }
    }

    #[rstest]
    #[case("OPENAI_API_KEY")]
    #[case("ANTHROPIC_API_KEY")]
    #[case("MY_OPENROUTER_KEY_2")]
    #[case("gpt-4o-mini")]
    #[case("claude-sonnet-4-5-20250929")]
    #[case("http://localhost:11434/v1")]
    #[case("Brannock Tull")]
    #[case("2026-11-23T20:14:05+01:00")]
    #[case("canon/npcs/hesper-quill.md")]
    #[case("session_2024_notes_about_the_long_heist_plan_v2")]
    fn ordinary_values_are_not_secrets(#[case] s: &str) {
        assert!(!looks_like_secret(s), "{s}");
        assert_eq!(mask_secrets(s), s);
    }

    #[rstest]
    #[case(
        "https://gm:hunter2pass@llm.example.com/v1",
        "https://gm:…@llm.example.com/v1"
    )]
    #[case("http://hunter2@localhost:8080/v1", "http://…@localhost:8080/v1")]
    #[case(
        "https://llm.example.com/v1?api_key=abc123&model=x",
        "https://llm.example.com/v1?api_key=…&model=x"
    )]
    #[case(
        "https://h.example/v1?Token=zzz#frag",
        "https://h.example/v1?Token=…#frag"
    )]
    #[case(
        "https://h.example/v1?x-api-key=zzz",
        "https://h.example/v1?x-api-key=…"
    )]
    #[case("http://localhost:11434/v1", "http://localhost:11434/v1")]
    #[case(
        "https://api.openai.com/v1/chat/completions",
        "https://api.openai.com/v1/chat/completions"
    )]
    #[case("https://u@p@h/v1", "https://…@h/v1")]
    fn urls_are_masked(#[case] url: &str, #[case] shown: &str) {
        assert_eq!(mask_url(url), shown);
    }

    #[test]
    fn urls_inside_text_are_masked() {
        let text = "could not reach https://gm:hunter2pass@llm.example.com/v1/chat/completions: error sending request for url (https://gm:hunter2pass@llm.example.com/v1/chat/completions?key=abc)";
        let shown = mask_printed(text);
        assert!(!shown.contains("hunter2pass"), "{shown}");
        assert!(!shown.contains("key=abc"), "{shown}");
        assert!(shown.contains("https://gm:…@llm.example.com/v1/chat/completions"));
        assert!(shown.ends_with("?key=…)"), "{shown}");
        assert_eq!(
            mask_printed("no urls here, sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0fGh3i"),
            "no urls here, sk-…Gh3i"
        );
        assert_eq!(
            mask_printed("Ünïcode then HTTPS://a:b@c/d"),
            "Ünïcode then HTTPS://a:…@c/d"
        );
    }

    #[test]
    fn var_names() {
        assert!(is_var_name("OPENAI_API_KEY"));
        assert!(is_var_name("_x1"));
        assert!(!is_var_name("sk-abc"));
        assert!(!is_var_name("1ABC"));
        assert!(!is_var_name(""));
    }
}
