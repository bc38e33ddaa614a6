//! The memory note: `sessions/<name>.memory.md`, beside the session's transcript (the path is
//! [`crate::session::memory_note_rel_path`], with the session's other files), where the
//! GM reads what vaultdm remembers and corrects it. vaultdm rewrites it after each exchange;
//! the GM's edits win: a changed line is what the next prompt uses, a deleted line is
//! forgotten, a line added in the same form is used too.

use super::glossary::Term;

const MARK: &str = "<!-- vaultdm: through passage ";
const SUMMARY_MARK: &str = "<!-- vaultdm: summary through passage ";

/// What the note holds.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct NoteData {
    /// The glossary, in the note's order.
    pub terms: Vec<Term>,
    /// The passages the glossary covers (terms coined after are new to the GM).
    pub through: usize,
    /// The cold summary ("Previously"), empty when there is none yet.
    pub previously: String,
    /// The passages the summary covers.
    pub summarised: usize,
    /// Moments the provider extracted (or the GM wrote), as lines.
    pub moments: Vec<String>,
}

/// The note's text.
pub(crate) fn render(session: &str, d: &NoteData) -> String {
    let mut s = format!(
        "# Memory: {session}\n\nWhat vaultdm remembers of this session beyond its notes. Edit a line and the next message uses your words; delete a line and it is forgotten; add one as `- Term: what it is`.\n\n"
    );
    if !d.previously.trim().is_empty() {
        s.push_str("## Previously\n\n");
        s.push_str(d.previously.trim());
        s.push_str("\n\n");
    }
    if !d.moments.is_empty() {
        s.push_str("## Moments\n\n");
        for m in &d.moments {
            s.push_str(&format!("- {}\n", m.replace('\n', " ")));
        }
        s.push('\n');
    }
    s.push_str("## Glossary\n\n");
    for t in &d.terms {
        let sentence = t.sentence.replace('\n', " ");
        s.push_str(&format!("- {}: {}\n", t.term.replace(':', " "), sentence));
    }
    s.push_str(&format!("\n{MARK}{} -->\n", d.through));
    if d.summarised > 0 {
        s.push_str(&format!("{SUMMARY_MARK}{} -->\n", d.summarised));
    }
    s
}

fn mark(text: &str, mark: &str) -> Option<usize> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix(mark))
        .and_then(|r| r.trim_end_matches("-->").trim().parse::<usize>().ok())
}

/// What a memory note holds; `None` when the text is not a memory note vaultdm wrote (no
/// mark).
pub(crate) fn parse(text: &str) -> Option<NoteData> {
    let through = mark(text, MARK)?;
    let summarised = mark(text, SUMMARY_MARK).unwrap_or(0);
    let mut terms = Vec::new();
    let mut previously = String::new();
    let mut moments = Vec::new();
    let mut section = String::new();
    for line in text.lines() {
        let t = line.trim();
        if let Some(h) = t.strip_prefix("## ") {
            section = h.trim().to_lowercase();
            continue;
        }
        if t.starts_with("<!-- vaultdm:") {
            continue;
        }
        if section == "previously" {
            previously.push_str(line);
            previously.push('\n');
            continue;
        }
        if section == "moments" {
            if let Some(m) = t.strip_prefix("- ").or_else(|| t.strip_prefix("* ")) {
                moments.push(m.trim().to_string());
            }
            continue;
        }
        if section != "glossary" {
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
    Some(NoteData {
        terms,
        through,
        previously: previously.trim().to_string(),
        summarised,
        moments,
    })
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
        let text = render(
            "night",
            &NoteData {
                terms,
                through: 12,
                previously: "The party reached Coldharrow.".into(),
                summarised: 9,
                moments: vec!["Hesper hid the copies in the piano.".into()],
            },
        );
        let d = parse(&text).expect("parses");
        assert_eq!((d.through, d.summarised), (12, 9));
        assert_eq!(d.previously, "The party reached Coldharrow.");
        assert_eq!(d.moments, ["Hesper hid the copies in the piano."]);
        let back = d.terms;
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
        let back = parse(&edited).expect("parses").terms;
        let names: Vec<&str> = back.iter().map(|t| t.term.as_str()).collect();
        assert_eq!(names, ["Vault 3", "Pell Harrow"]);
        assert_eq!(
            back[1].sentence,
            "A mule driver with one eye; owes Kit a favour."
        );
        assert!(parse("# Some other note\n- a: b\n").is_none());
    }
}
