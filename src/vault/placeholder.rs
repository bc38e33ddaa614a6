//! Template text nobody filled in — the one rule for it.
//!
//! GMs make notes from templates (Templater's `<% tp.file.title %>`, core templates'
//! `{{title}}`, a template's own `[Short description]` prompts). A copy that was never
//! filled in still holds them, and they are never a name, a card's text or a session's
//! summary.

/// What templates write where the GM is to write (in the languages GMs write).
const FILLER: &[&str] = &[
    "text here",
    "your text here",
    "description here",
    "add description",
    "lorem ipsum",
    "tbd",
    "tba",
    "todo",
    "texte ici",
    "votre texte ici",
    "texto aquí",
    "texto aqui",
    "testo qui",
    "hier text",
    "text hier",
];

/// Whether `text` is template text: it holds a Templater command (`<% … %>`), a `{{…}}`
/// variable, or is made only of `[Prompt]` brackets (not links) and `-`/`…` filler.
pub fn is_placeholder(text: &str) -> bool {
    let t = text.trim();
    if t.contains("<%") || t.contains("{{") {
        return true;
    }
    let bare = t
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    if FILLER.contains(&bare.as_str()) {
        return true;
    }
    // `[Klein mit Bart] [Hasst Wein]`, `[Kurzbeschreibung]`, `[Name]`: every word inside
    // square brackets that are not Markdown or wiki links.
    let mut depth = 0usize;
    let mut outside = false;
    let mut inside = false;
    let mut prev = '\0';
    for c in t.chars() {
        match c {
            '[' => {
                if prev == '[' {
                    return false;
                }
                depth += 1;
            }
            ']' => depth = depth.saturating_sub(1),
            '(' if prev == ']' => return false,
            c if c.is_alphanumeric() => {
                if depth == 0 {
                    outside = true;
                } else {
                    inside = true;
                }
            }
            _ => {}
        }
        prev = c;
    }
    inside && !outside
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("<% tp.file.title %>", true)]
    #[case("{{title}}", true)]
    #[case("Name: {{Contenido}}", true)]
    #[case("[Kurzbeschreibung]", true)]
    #[case("[Klein mit Bart] [Hasst Wein] [Langsam]", true)]
    #[case("- [ ]", false)]
    #[case("[[Waterdeep]]", false)]
    #[case("[Waterdeep](waterdeep.md)", false)]
    #[case("Ida is soft-spoken [citation needed]", false)]
    #[case("A tavern.", false)]
    #[case("TEXTE ICI", true)]
    #[case("[To be established in play]", true)]
    fn placeholders(#[case] text: &str, #[case] want: bool) {
        assert_eq!(is_placeholder(text), want, "{text}");
    }
}
