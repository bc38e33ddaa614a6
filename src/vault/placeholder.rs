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
    // A template's label left where the text goes (`> [!tip]- **Nom**` / `> Description`).
    "description",
    "descripción",
    "descripcion",
    "beschreibung",
    "descrizione",
];

/// Whether `text` is template text: it holds a Templater command (`<% … %>`), a `{{…}}`
/// variable, or is made only of `[Prompt]` brackets (not links) and `-`/`…` filler.
pub(crate) fn is_placeholder(text: &str) -> bool {
    let t = text.trim();
    if t.contains("<%") || t.contains("{{") {
        return true;
    }
    // Asked of every line a summary reads: filler and stubs are short, prompts bracketed.
    if t.len() <= 120 {
        let bare = t
            .trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase();
        if FILLER.contains(&bare.as_str()) || is_description_stub(&bare) {
            return true;
        }
    }
    if !t.contains('[') {
        return false;
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

/// A template's stand-in sentence naming what is to be written (`Description de village
/// Village aux Esprits.`, `Description of the tavern`): the word for description, a
/// preposition, and a few words more.
fn is_description_stub(bare: &str) -> bool {
    let mut words = bare.split_whitespace();
    let (Some(first), Some(second)) = (words.next(), words.next()) else {
        return false;
    };
    matches!(
        first,
        "description" | "descripción" | "descripcion" | "descrizione" | "beschreibung"
    ) && matches!(
        second,
        "of" | "de" | "du" | "des" | "del" | "di" | "della" | "von" | "der"
    ) && words.count() <= 6
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
    #[case("Description de village Village aux Esprits.", true)]
    #[case("Description of the tavern", true)]
    #[case("Description de la ville: une cité de marchands bâtie sur trois collines au bord du fleuve.", false)]
    fn placeholders(#[case] text: &str, #[case] want: bool) {
        assert_eq!(is_placeholder(text), want, "{text}");
    }
}
