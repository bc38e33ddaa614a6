//! Words for recall: lower-cased, light-stemmed content words, with stop words dropped and
//! a few everyday synonyms folded together, so "the physician's wire" finds "the doctor's
//! telegram". No model: the same words always give the same terms.

/// Words too common to say what a passage is about.
const STOP: &[&str] = &[
    "a", "about", "above", "after", "again", "all", "also", "am", "an", "and", "any", "are",
    "around", "as", "at", "back", "be", "been", "before", "being", "both", "but", "by", "can",
    "could", "did", "do", "does", "doing", "down", "each", "even", "ever", "every", "few", "for",
    "from", "get", "got", "had", "has", "have", "having", "he", "her", "here", "hers", "him",
    "his", "how", "i", "if", "in", "into", "is", "it", "its", "just", "let", "like", "me", "more",
    "most", "much", "my", "no", "nor", "not", "now", "of", "off", "oh", "ok", "okay", "on", "once",
    "one", "only", "or", "other", "our", "out", "over", "own", "really", "right", "said", "same",
    "say", "says", "she", "should", "so", "some", "still", "such", "tell", "than", "that", "the",
    "their", "them", "then", "there", "these", "they", "thing", "this", "those", "through", "to",
    "too", "up", "us", "very", "was", "we", "were", "what", "when", "where", "which", "while",
    "who", "whom", "why", "will", "with", "would", "yes", "yet", "you", "your", "yours", "again",
    "remind", "wait", "exactly", "actually", "know", "think", "way", "go", "going", "want", "make",
    "made", "take", "took",
];

/// Everyday synonyms a table uses for the same thing, folded to one term. General words
/// of play, not any campaign's names.
const SYNONYMS: &[(&str, &[&str])] = &[
    (
        "doctor",
        &["physician", "medic", "surgeon", "healer", "doc"],
    ),
    ("telegram", &["wire", "cable", "telegraph"]),
    ("map", &["chart", "survey"]),
    (
        "gun",
        &[
            "rifle", "firearm", "pistol", "revolver", "shotgun", "musket",
        ],
    ),
    (
        "lawman",
        &["deputy", "sheriff", "marshal", "constable", "lawmen"],
    ),
    (
        "guard",
        &["watchman", "sentry", "sentinel", "lookout", "guardsman"],
    ),
    (
        "password",
        &["passphrase", "countersign", "watchword", "challenge"],
    ),
    (
        "hide",
        &[
            "stash", "conceal", "hid", "hidden", "stashed", "tuck", "tucked",
        ],
    ),
    (
        "promise",
        &["swear", "swore", "sworn", "vow", "oath", "pledge"],
    ),
    ("song", &["tune", "melody", "ballad", "hymn"]),
    ("owe", &["debt", "owed", "owes", "settle", "payback"]),
    ("pay", &["paid", "bribe", "cost", "price", "fee"]),
    ("kill", &["killed", "murder", "slay", "slain"]),
    ("die", &["died", "death", "dead", "dying"]),
    ("train", &["rail", "railway", "locomotive"]),
    ("sister", &["sibling"]),
    ("brother", &["sibling"]),
    ("money", &["coin", "cash", "silver", "dollars"]),
    ("hour", &["time", "clock", "oclock"]),
    ("saloon", &["tavern", "inn", "bar", "pub", "taproom"]),
    (
        "boss",
        &["superintendent", "foreman", "overseer", "manager"],
    ),
    ("strongbox", &["safe", "vault", "lockbox", "chest"]),
    ("sound", &["noise", "hum", "humming"]),
    ("lamp", &["light", "lantern", "torch", "candle"]),
    (
        "paper",
        &[
            "paperwork",
            "papers",
            "document",
            "documents",
            "record",
            "records",
        ],
    ),
    (
        "relative",
        &["sister", "brother", "cousin", "family", "kin"],
    ),
    ("organiser", &["organizer", "leader", "agitator"]),
];

/// A light stem: plural and past endings off, so "copies"/"copy", "hidden"/"hid" meet.
pub(crate) fn stem(w: &str) -> String {
    let w = w.trim_end_matches("'s").trim_end_matches('\'');
    let n = w.len();
    let s = if n > 4 && w.ends_with("ies") {
        format!("{}y", &w[..n - 3])
    } else if n > 4
        && (w.ends_with("sses") || w.ends_with("shes") || w.ends_with("ches") || w.ends_with("xes"))
    {
        w[..n - 2].to_string()
    } else if n > 3 && w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") {
        w[..n - 1].to_string()
    } else if n > 5 && w.ends_with("ing") {
        w[..n - 3].to_string()
    } else if n > 4 && w.ends_with("ed") && !w.ends_with("eed") {
        w[..n - 2].to_string()
    } else {
        w.to_string()
    };
    s
}

/// The canonical term of a word (its synonym group's head, stemmed).
fn canonical(w: &str) -> String {
    for (head, others) in SYNONYMS {
        if w == *head || others.contains(&w) {
            return stem(head);
        }
    }
    stem(w)
}

/// The content words of a text as recall terms, in order (repeats kept).
pub(crate) fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for raw in text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’' || c == '-')) {
        for part in raw.split('-') {
            let w = part
                .trim_matches(|c: char| c == '\'' || c == '’')
                .replace('’', "'")
                .to_lowercase();
            let w = w.strip_suffix("'s").unwrap_or(&w).to_string();
            if w.is_empty()
                || STOP.contains(&w.as_str())
                || (w.len() < 3 && !w.chars().all(|c| c.is_ascii_digit()))
            {
                continue;
            }
            out.push(canonical(&w));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_are_stemmed_stopped_and_folded() {
        assert_eq!(terms("The physician's wire!"), ["doctor", "telegram"]);
        assert_eq!(terms("those copies of the reports"), ["copy", "report"]);
        assert_eq!(
            terms("we stashed it; hidden well"),
            ["hide", "hide", "well"]
        );
        assert_eq!(terms("4:40 in the morning"), ["4", "40", "morn"]);
        assert_eq!(terms("seam-song"), ["seam", "song"]);
    }
}
