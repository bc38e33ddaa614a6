//! The memory note: `sessions/<name>.memory.md`, beside the session's transcript, where the
//! GM reads what vaultdm remembers and corrects it. vaultdm rewrites it after each exchange;
//! the GM's edits win: a changed line is what the next prompt uses, a deleted line is
//! forgotten, a line added in the same form is used too.

use super::glossary::Term;
use std::path::PathBuf;

/// The note's path, relative to the vault.
pub fn rel_path(session: &str) -> PathBuf {
    PathBuf::from("sessions").join(format!("{session}.memory.md"))
}

const MARK: &str = "<!-- vaultdm: through passage ";

/// The note's text: the glossary, and how many passages it covers (terms coined after that
/// are new to the GM).
pub fn render(session: &str, terms: &[Term], through: usize) -> String {
    let mut s = format!(
        "# Memory: {session}\n\nWhat vaultdm remembers of this session beyond its notes. Edit a line and the next message uses your words; delete a line and it is forgotten; add one as `- Term: what it is`.\n\n## Glossary\n\n"
    );
    for t in terms {
        let sentence = t.sentence.replace('\n', " ");
        s.push_str(&format!("- {}: {}\n", t.term.replace(':', " "), sentence));
    }
    s.push_str(&format!("\n{MARK}{through} -->\n"));
    s
}

/// The glossary as the note holds it, and the passage count it covers; `None` when the text
/// is not a memory note vaultdm wrote (no mark).
pub fn parse(text: &str) -> Option<(Vec<Term>, usize)> {
    let through = text
        .lines()
        .find_map(|l| l.trim().strip_prefix(MARK))
        .and_then(|r| r.trim_end_matches("-->").trim().parse::<usize>().ok())?;
    let mut terms = Vec::new();
    let mut in_glossary = false;
    for line in text.lines() {
        let t = line.trim();
        if let Some(h) = t.strip_prefix("## ") {
            in_glossary = h.trim().eq_ignore_ascii_case("glossary");
            continue;
        }
        if !in_glossary {
            continue;
        }
        let Some(item) = t.strip_prefix("- ").or_else(|| t.strip_prefix("* ")) else {
            continue;
        };
        if let Some((term, sentence)) = item.split_once(':') {
            let term = term.trim().trim_matches('*').trim();
            if !term.is_empty() {
                terms.push(Term {
                    term: term.to_string(),
                    sentence: sentence.trim().to_string(),
                    turn: 0,
                    pinned: true,
                });
            }
        }
    }
    Some((terms, through))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_gm_edits() {
        let terms = vec![
            Term {
                term: "Pell Harrow".into(),
                sentence: "A one-eyed mule driver.".into(),
                turn: 1,
                pinned: false,
            },
            Term {
                term: "seam-song".into(),
                sentence: "The hum before a cave-in.".into(),
                turn: 5,
                pinned: false,
            },
        ];
        let text = render("night", &terms, 12);
        let (back, through) = parse(&text).expect("parses");
        assert_eq!(through, 12);
        assert_eq!(back.len(), 2);
        assert_eq!(
            (back[0].term.as_str(), back[0].sentence.as_str()),
            ("Pell Harrow", "A one-eyed mule driver.")
        );
        let edited = text
            .replace(
                "A one-eyed mule driver.",
                "A mule driver with one eye; owes Kit a favour.",
            )
            .replace("- seam-song: The hum before a cave-in.\n", "")
            .replace(
                "## Glossary\n\n",
                "## Glossary\n\n- **Vault 3**: the superintendent's strongbox\n",
            );
        let (back, _) = parse(&edited).expect("parses");
        let names: Vec<&str> = back.iter().map(|t| t.term.as_str()).collect();
        assert_eq!(names, ["Vault 3", "Pell Harrow"]);
        assert_eq!(
            back[1].sentence,
            "A mule driver with one eye; owes Kit a favour."
        );
        assert!(parse("# Some other note\n- a: b\n").is_none());
    }
}
