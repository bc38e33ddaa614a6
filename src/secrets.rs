//! Recognising API keys, so none is ever printed.
//!
//! Keys belong in environment variables, but GMs paste them where they do not belong: into
//! `vaultdm.toml`, or as the *name* of the variable (`--api-key-env sk-…`). vaultdm refuses
//! both, and everything it prints that could hold one — `check` snippets, settings, errors —
//! goes through [`mask_secrets`] or is checked with [`looks_like_secret`] first.

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
pub fn looks_like_secret(s: &str) -> bool {
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
pub fn mask(secret: &str) -> String {
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
pub fn mask_secrets(text: &str) -> String {
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

/// True when `name` can be an environment variable name (`[A-Za-z_][A-Za-z0-9_]*`).
pub fn is_var_name(name: &str) -> bool {
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
    pub const PLANTED: &[&str] = &[
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

    #[test]
    fn var_names() {
        assert!(is_var_name("OPENAI_API_KEY"));
        assert!(is_var_name("_x1"));
        assert!(!is_var_name("sk-abc"));
        assert!(!is_var_name("1ABC"));
        assert!(!is_var_name(""));
    }
}
