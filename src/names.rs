//! Names: the one place that decides when two spellings are the same name.
//!
//! Links (`[[Éowyn]]`), frontmatter references (`location: the brass canary`), mentions in a
//! player's message ("i ask éowyn") and the watcher's rename detection all compare names, and
//! they must agree: a name typed with a decomposed `ë` (e + U+0308, as some keyboards and
//! macOS file names produce) is the same name as the precomposed `ë` a note uses. Every
//! comparison goes through Unicode NFC and lower-casing here.

use std::borrow::Cow;
use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};

/// `s` in Unicode NFC (borrowed when it already is, which is almost always).
pub fn nfc(s: &str) -> Cow<'_, str> {
    if s.is_ascii() || is_nfc_quick(s.chars()) == IsNormalized::Yes {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(s.nfc().collect())
    }
}

/// A name as a lookup key: NFC, lower case, trimmed, inner whitespace folded to one space.
pub fn norm_key(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    norm_key_into(s, &mut out);
    out
}

/// The last `/`-separated part of a path or link target (`npcs/Ida.md` -> `Ida.md`); the
/// whole text when it holds no `/`. A vectorised search from the end: every link of a vault
/// is cut this way.
pub fn last_segment(s: &str) -> &str {
    memchr::memrchr(b'/', s.as_bytes()).map_or(s, |i| &s[i + 1..])
}

/// `s.trim()`, deciding the common case (neither end is whitespace) on its first and last
/// byte instead of decoding characters from both ends: every link is trimmed several times.
pub fn trim(s: &str) -> &str {
    let visible = |b: u8| b > b' ' && b < 0x7f;
    match s.as_bytes() {
        [first, .., last] if visible(*first) && visible(*last) => s,
        [only] if visible(*only) => s,
        _ => s.trim(),
    }
}

/// Whether `b` is ASCII whose only whitespace is single spaces between words: a name or
/// path already in key form but for case, a text already on one clean line. Eight bytes are
/// checked at a time (a word's bytes as lanes; ASCII bytes never carry into the next lane).
pub fn is_single_spaced_ascii(b: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    if b.first() == Some(&b' ') || b.last() == Some(&b' ') || !b.is_ascii() {
        return false;
    }
    let mut prev_space = false;
    let mut words = b.chunks_exact(8);
    for word in &mut words {
        let w = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        // A lane of `\t`, `\n`, VT, FF or `\r` (9..=13): at least 9 and under 14.
        let control = w.wrapping_add(0x77 * ONES) & !w.wrapping_add(0x72 * ONES) & HIGH;
        // A lane that is a space: XOR makes it zero, and only a zero lane stays under 0x80
        // when 0x7f is added.
        let z = w ^ (0x20 * ONES);
        let spaces = !(((z & !HIGH) + !HIGH) | z) & HIGH;
        // A space followed by a space, in this word or across from the last one.
        let doubled = (spaces & (spaces >> 8)) | ((u64::from(prev_space) << 7) & spaces);
        if control | doubled != 0 {
            return false;
        }
        prev_space = spaces >> 63 != 0;
    }
    for &c in words.remainder() {
        if c.wrapping_sub(b'\t') < 5 || (c == b' ' && prev_space) {
            return false;
        }
        prev_space = c == b' ';
    }
    true
}

/// [`norm_key`] written into `out` (cleared first), so a caller looking keys up can reuse
/// one buffer.
pub fn norm_key_into(s: &str, out: &mut String) {
    // Every link, name and alias of a vault goes through here.
    out.clear();
    if is_single_spaced_ascii(s.as_bytes()) {
        out.push_str(s);
        out.make_ascii_lowercase();
        return;
    }
    if s.is_ascii() {
        // ASCII whitespace is what `split_whitespace` splits on (with VT).
        let mut space = false;
        for &b in s.as_bytes() {
            if b.is_ascii_whitespace() || b == 0x0b {
                space = !out.is_empty();
            } else {
                if space {
                    out.push(' ');
                    space = false;
                }
                out.push(char::from(b.to_ascii_lowercase()));
            }
        }
        return;
    }
    for w in nfc(s).to_lowercase().split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
}

/// A slug: lower-case alphanumerics joined by single dashes (`The Gilded Eel` ->
/// `the-gilded-eel`); apostrophes vanish (`Jory's` -> `jorys`).
pub fn slug(s: &str) -> String {
    let mut out = String::new();
    slug_of_key_into(&norm_key(s), &mut out);
    out
}

/// The [`slug`] of a text already in [`norm_key`] form, appended to `out` (so keys built
/// by the thousand share one buffer).
pub fn slug_of_key_into(key: &str, out: &mut String) {
    let start = out.len();
    let mut dash = false;
    if key.is_ascii() {
        // Byte by byte: for ASCII, `is_ascii_alphanumeric` is `char::is_alphanumeric`.
        for &b in key.as_bytes() {
            if b.is_ascii_alphanumeric() {
                if dash && out.len() > start {
                    out.push('-');
                }
                dash = false;
                out.push(char::from(b));
            } else if b != b'\'' {
                dash = true;
            }
        }
        return;
    }
    for c in key.chars() {
        if c.is_alphanumeric() {
            if dash && out.len() > start {
                out.push('-');
            }
            dash = false;
            out.push(c);
        } else if c != '\'' && c != '’' {
            dash = true;
        }
    }
}

/// Folds one character for matching names in running text: lower case, accents off,
/// curly apostrophes and backticks straightened.
fn fold_char(c: char, out: &mut String) {
    match c {
        '\u{2019}' | '\u{2018}' | '`' => out.push('\''),
        c if c.is_ascii() => out.push(c.to_ascii_lowercase()),
        // Accents off (`Renée` is found as `renee`, `Zoë` as `zoe`): a player types a name
        // as their keyboard lets them.
        c => {
            for lower in c.to_lowercase() {
                unicode_normalization::char::decompose_canonical(lower, |d| {
                    if !unicode_normalization::char::is_combining_mark(d) {
                        out.push(d);
                    }
                });
            }
        }
    }
}

/// Folds running text (a player's message) for matching: [`nfc`], then lower case with
/// straight apostrophes. Returns the folded text, the NFC text it came from, and for each
/// byte of the folded text the byte offset in the NFC text (plus one entry for the end).
pub fn fold_text(s: &str) -> (String, String, Vec<usize>) {
    let source = nfc(s).into_owned();
    let mut out = String::with_capacity(source.len());
    let mut map = Vec::with_capacity(source.len() + 1);
    for (i, c) in source.char_indices() {
        let start = out.len();
        fold_char(c, &mut out);
        map.extend(std::iter::repeat_n(i, out.len() - start));
    }
    map.push(source.len());
    (out, source, map)
}

/// Folds a name for matching, the way [`fold_text`] folds the text it is looked for in,
/// with whitespace runs folded to one space and the ends trimmed.
pub fn fold_name(s: &str) -> String {
    let s = nfc(s);
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for c in s.trim().chars() {
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if space && !out.is_empty() {
            out.push(' ');
        }
        space = false;
        fold_char(c, &mut out);
    }
    out
}

/// A folder name as a word, without the numbering and sort prefixes GMs put in front
/// (`1. The Party` -> `the party`, `0 PCs` -> `pcs`, `z_Templates` -> `templates`,
/// `Z99_Templates` -> `templates`, `02-Factions` -> `factions`, `_templates` -> `templates`),
/// lower case, `-` and `_` read as spaces.
pub fn folder_word(seg: &str) -> String {
    let seg = seg.trim();
    // Folder names are mostly ASCII: lower case without a copy when nothing changes.
    let s: std::borrow::Cow<str> = if seg.is_ascii() {
        if seg.bytes().any(|b| b.is_ascii_uppercase()) {
            seg.to_ascii_lowercase().into()
        } else {
            seg.into()
        }
    } else {
        seg.to_lowercase().into()
    };
    let mut s = s.trim_start_matches(|c: char| c.is_ascii_digit() || " ._-)".contains(c));
    // `z_`, `zz_`, `z99_`, `Z.` sort prefixes: z's, then digits, then a separator.
    let zs = s.len() - s.trim_start_matches('z').len();
    if zs > 0 {
        let rest = s[zs..].trim_start_matches(|c: char| c.is_ascii_digit());
        if let Some(r) = rest.strip_prefix(['_', '-', '.', ' ']) {
            s = r;
        }
    }
    let s = s.trim_start_matches(|c: char| c.is_ascii_digit() || " ._-)".contains(c));
    // `-` and `_` read as spaces, runs of them and of whitespace as one.
    let mut out = String::with_capacity(s.len());
    for w in s
        .split(|c: char| c == '_' || c == '-' || c.is_whitespace())
        .filter(|w| !w.is_empty())
    {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The ASCII pass of a slug is the character pass: each key's slug, appended after
        /// text already in the buffer, is the plain definition.
        #[test]
        fn ascii_slugs_are_the_char_definition(s in "[ -~\t]{0,24}", before in "[a-z-]{0,4}") {
            let key = norm_key(&s);
            let mut want = String::new();
            let mut dash = false;
            for c in key.chars() {
                if c.is_alphanumeric() {
                    if dash && !want.is_empty() {
                        want.push('-');
                    }
                    dash = false;
                    want.push(c);
                } else if c != '\'' {
                    dash = true;
                }
            }
            let mut out = before.clone();
            slug_of_key_into(&key, &mut out);
            proptest::prop_assert_eq!(out, format!("{before}{want}"));
        }

        /// The one-pass folder word is the plain definition: lower case, numbering and sort
        /// prefixes gone, `-`/`_` as spaces, whitespace runs to one space.
        #[test]
        fn folder_word_is_the_definition(s in "[ \\t_.)\\-zZ09aBÉé\u{3a3}İ]{0,16}") {
            let lower = s.trim().to_lowercase();
            let mut t = lower.trim_start_matches(|c: char| c.is_ascii_digit() || " ._-)".contains(c));
            let zs = t.len() - t.trim_start_matches('z').len();
            if zs > 0 {
                let rest = t[zs..].trim_start_matches(|c: char| c.is_ascii_digit());
                if let Some(r) = rest.strip_prefix(['_', '-', '.', ' ']) {
                    t = r;
                }
            }
            let t = t.trim_start_matches(|c: char| c.is_ascii_digit() || " ._-)".contains(c));
            let plain = t.replace(['_', '-'], " ").split_whitespace().collect::<Vec<_>>().join(" ");
            proptest::prop_assert_eq!(folder_word(&s), plain);
        }

        /// The word-at-a-time check is the plain one: ASCII, no control whitespace, no
        /// space at either end or after another space (long texts, so words are used).
        #[test]
        fn single_spaced_ascii_is_the_definition(
            s in proptest::prop_oneof!["[ aZ1-]{0,40}", "[ \\t\\x0b\\x0c\\r\\naZ1é-]{0,40}"],
        ) {
            let b = s.as_bytes();
            let plain = b.first() != Some(&b' ')
                && b.last() != Some(&b' ')
                && b.iter().all(|&c| c.is_ascii() && !(b'\t'..=b'\r').contains(&c))
                && !s.contains("  ");
            proptest::prop_assert_eq!(is_single_spaced_ascii(b), plain);
        }

        /// The quick trim is `str::trim`.
        #[test]
        fn trim_is_str_trim(s in "[ \\t\\x0b\\naZ\u{a0}\u{3000}é]{0,6}") {
            proptest::prop_assert_eq!(trim(&s), s.trim());
        }

        /// The one-pass key is the plain definition: NFC, lower case, whitespace runs to
        /// one space, trimmed.
        #[test]
        fn norm_key_is_the_definition(s in "[ \\t\\x0b\\x0c\\r\\nAaZzé\u{301}İ1'-]{0,24}") {
            let plain = nfc(&s).to_lowercase().split_whitespace().collect::<Vec<_>>().join(" ");
            proptest::prop_assert_eq!(norm_key(&s), plain);
        }
    }
    use rstest::rstest;

    const DECOMPOSED: &str = "Zoe\u{0308}";
    const COMPOSED: &str = "Zoë";

    #[test]
    fn every_comparison_is_nfc() {
        assert_ne!(DECOMPOSED, COMPOSED);
        assert_eq!(norm_key(DECOMPOSED), norm_key(COMPOSED));
        assert_eq!(slug(DECOMPOSED), slug(COMPOSED));
        assert_eq!(fold_name(DECOMPOSED), fold_name(COMPOSED));
        let (folded, source, map) = fold_text(&format!("I ask {DECOMPOSED}."));
        // Matching folds the accents away, the text it maps back to keeps them.
        assert!(folded.contains("zoe"));
        assert_eq!(fold_name("Renée"), fold_name("renee"));
        assert_eq!(map.len(), folded.len() + 1);
        assert!(source.contains(COMPOSED));
    }

    #[rstest]
    #[case("The Gilded Eel", "the-gilded-eel")]
    #[case("Jory's  Den", "jorys-den")]
    #[case("  Café Noir ", "café-noir")]
    fn slugs(#[case] s: &str, #[case] want: &str) {
        assert_eq!(slug(s), want);
    }

    #[rstest]
    #[case("1. The Party", "the party")]
    #[case("0 PCs", "pcs")]
    #[case("z_Templates", "templates")]
    #[case("Z99_Templates", "templates")]
    #[case("97. Templates", "templates")]
    #[case("_templates", "templates")]
    #[case("02-Factions-and-Bastions", "factions and bastions")]
    #[case("Session Notes", "session notes")]
    #[case("Zebras", "zebras")]
    #[case("2024", "")]
    fn folder_words(#[case] seg: &str, #[case] want: &str) {
        assert_eq!(folder_word(seg), want);
    }

    #[test]
    fn folding_keeps_offsets() {
        let (folded, source, map) = fold_text("Jory’s STASH");
        assert_eq!(folded, "jory's stash");
        let s = folded.find("stash").unwrap_or(0);
        assert_eq!(&source[map[s]..], "STASH");
    }
}
