//! Coined terms: the names and words a session invents that no note holds — a mule driver
//! the DM named, an alias used at a hotel, a password, a song — each with the sentence that
//! defined it. Found without a model: a name after "called", "named", "known as" or "the
//! password is", a quoted phrase in such a sentence, and runs of capitalised words that no
//! canon name covers.

/// A coined term and where it was defined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    /// The term as written.
    pub term: String,
    /// The sentence that defined it (clipped).
    pub sentence: String,
    /// The exchange it came from (0-based).
    pub turn: usize,
    /// Written or corrected by the GM (in the memory note): always shown.
    pub pinned: bool,
}

const CUES: &[&str] = &[
    "called ",
    "named ",
    "known as ",
    "goes by ",
    "name is ",
    "name was ",
    "calls himself ",
    "calls herself ",
    "calls itself ",
    "call it ",
    "call them ",
    "call him ",
    "call her ",
    "under the name ",
    "signed as ",
    "password is ",
    "countersign is ",
];

/// Words that start sentences or are capitalised for other reasons: never a coined name
/// alone.
const COMMON_CAPS: &[&str] = &[
    "The", "A", "An", "He", "She", "It", "They", "We", "You", "I", "His", "Her", "Their", "Your",
    "Our", "My", "This", "That", "These", "Those", "There", "Then", "When", "Where", "What", "Who",
    "Why", "How", "If", "But", "And", "Or", "So", "As", "At", "In", "On", "Of", "For", "From",
    "With", "By", "To", "Word", "No", "Yes", "Not", "One", "Two", "Day", "Mr", "Mrs", "Miss",
    "Company", "Sir", "Ma'am",
];

fn sentences(text: &str) -> Vec<&str> {
    // A line end ends a definition too (a list of names, one per line).
    super::split_sentences(text, true)
}

fn is_cap(w: &str) -> bool {
    w.chars()
        .next()
        .is_some_and(|c| c.is_uppercase() || c.is_ascii_digit())
}

fn clean(w: &str) -> &str {
    w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-'))
        .trim_end_matches("'s")
}

/// A capitalised name starting at `rest` (words like "of", "the", "Below" allowed inside).
fn name_at(rest: &str) -> Option<String> {
    let mut words: Vec<&str> = Vec::new();
    for raw in rest.split_whitespace().take(6) {
        let w = clean(raw);
        if w.is_empty() {
            break;
        }
        let joiner = !words.is_empty() && matches!(w, "of" | "the" | "de" | "von" | "van");
        if is_cap(w) || joiner {
            words.push(w);
        } else {
            break;
        }
        if raw.ends_with([',', '.', ';', ':', '!', '?', '"', '”']) {
            break;
        }
    }
    while words
        .last()
        .is_some_and(|w| matches!(*w, "of" | "the" | "de" | "von" | "van"))
    {
        words.pop();
    }
    (!words.is_empty()).then(|| words.join(" "))
}

/// A quoted phrase in `s` (straight or curly quotes), at most 8 words.
fn quoted(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (open, close) in [('"', '"'), ('“', '”')] {
        let mut rest = s;
        while let Some(a) = rest.find(open) {
            let after = &rest[a + open.len_utf8()..];
            let Some(b) = after.find(close) else { break };
            let q = after[..b].trim().trim_end_matches([',', '.']);
            if !q.is_empty() && q.split_whitespace().count() <= 8 {
                out.push(q.to_string());
            }
            rest = &after[b + close.len_utf8()..];
        }
    }
    out
}

/// The coined terms of one DM reply. `known` says whether a name is already canon (or
/// already in the glossary).
pub(crate) fn coined(text: &str, turn: usize, known: &dyn Fn(&str) -> bool) -> Vec<Term> {
    let mut out: Vec<Term> = Vec::new();
    let mut push = |term: String, sentence: &str| {
        let t = term.trim().to_string();
        if t.chars().count() < 3 || known(&t) || out.iter().any(|x| x.term.eq_ignore_ascii_case(&t))
        {
            return;
        }
        let sentence: String = sentence.chars().take(240).collect();
        out.push(Term {
            term: t,
            sentence,
            turn,
            pinned: false,
        });
    };
    for s in sentences(text) {
        let lower = s.to_lowercase();
        let cued = CUES.iter().any(|c| lower.contains(c))
            || [
                "password",
                "signal",
                "song",
                "title",
                "alias",
                "codeword",
                "code word",
            ]
            .iter()
            .any(|w| lower.contains(w));
        for cue in CUES {
            let mut from = 0;
            while let Some(i) = lower[from..].find(cue) {
                let at = from + i + cue.len();
                from = at;
                let rest = &s[at..];
                let rest = rest.strip_prefix("the ").unwrap_or(rest);
                if let Some(n) = name_at(rest) {
                    push(n, s);
                } else {
                    // A lower-case coinage: "the miners call it the seam-song".
                    let w: Vec<&str> = rest
                        .split_whitespace()
                        .take(3)
                        .map(clean)
                        .take_while(|w| !w.is_empty())
                        .collect();
                    if let Some(first) = w.first() {
                        if first.contains('-') || w.len() == 1 {
                            push((*first).to_string(), s);
                        }
                    }
                }
            }
        }
        if cued {
            for q in quoted(s) {
                push(q, s);
            }
        }
        // Runs of two or more capitalised words no canon name covers.
        let words: Vec<&str> = s.split_whitespace().collect();
        let mut i = 0;
        while i < words.len() {
            let w = clean(words[i]);
            if is_cap(w) && !COMMON_CAPS.contains(&w) {
                let mut j = i + 1;
                while j < words.len() && j - i < 4 {
                    let n = clean(words[j]);
                    if !is_cap(n)
                        || COMMON_CAPS.contains(&n)
                        || words[j - 1].ends_with([',', '.', ';', ':'])
                    {
                        break;
                    }
                    j += 1;
                }
                // Shouted text (a telegram, a sign) is not a name.
                let shouted = words[i..j].iter().all(|w| {
                    let w = clean(w);
                    w.len() > 1 && w.chars().all(|c| !c.is_lowercase())
                });
                if j - i >= 2 && !shouted {
                    let name = words[i..j]
                        .iter()
                        .map(|w| clean(w))
                        .collect::<Vec<_>>()
                        .join(" ");
                    push(name, s);
                }
                i = j;
            } else {
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(text: &str) -> Vec<String> {
        let known = |t: &str| t == "Jonah Sallow" || t == "Brass Canary";
        coined(text, 0, &known)
            .into_iter()
            .map(|t| t.term)
            .collect()
    }

    #[test]
    fn names_after_a_cue_and_quoted_passwords() {
        assert_eq!(
            terms("A one-eyed mule driver called Pell Harrow spits into the snow."),
            ["Pell Harrow"]
        );
        assert_eq!(
            terms("The watchman says the password is \"the canary sings at midnight\"."),
            ["the canary sings at midnight"]
        );
        assert_eq!(
            terms("The old miners call it the seam-song."),
            ["seam-song"]
        );
        assert_eq!(
            terms("Jonah's sister Mae Sallow keeps the wire office at the Depot."),
            ["Mae Sallow"]
        );
        assert!(terms("Jonah Sallow nods at the Brass Canary.").is_empty());
        assert!(terms("The stove crackles. He laughs.").is_empty());
    }
}
