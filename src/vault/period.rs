//! What a timeline heading says about time: the one rule shared by the reader (canon's
//! timeline, `canon::build`) and the writer ([`super::edit::append_event`]), so an event is
//! written under the heading the next context reads it from.
//!
//! A GM's timeline is cut into periods by headings: vaultdm's own `## Day 6`, or the vault's
//! own calendar — `## Year 3`, `## 2024-03-12`, `### 12 Mirtul 1492`, `## 1500-Ches-12`.
//! Between them stand sections that are no moment at all (`## Open Mysteries`, `## Notes`),
//! and moments without a date (`## Ancient Times`).

/// What a heading is, as a period of the timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Period {
    /// `Day N` (any case, any suffix: `Day 6 — evening`): a day vaultdm can count.
    Day(i64),
    /// A date in the vault's own calendar (`Year 3`, `2024-03-12`, `12 Mirtul 1492`,
    /// `1500-Ches-12`): a heading that names a number, which vaultdm does not count.
    Dated,
    /// A moment without a date (`Ancient Times`, `The Possession`).
    Undated,
    /// Not a moment: open questions, notes, hooks, links (`Open Mysteries`, `See also`).
    Aside,
}

/// The period a heading's text (without its `#`s) names.
pub(crate) fn of_heading(text: &str) -> Period {
    if let Some((n, _)) = day(text) {
        Period::Day(n)
    } else if is_aside(text) {
        Period::Aside
    } else if text.chars().any(|c| c.is_ascii_digit()) {
        Period::Dated
    } else {
        Period::Undated
    }
}

/// The day of a `Day N` heading or cell (`day` in any case, then the number) and what
/// follows the number (` — evening`).
pub(crate) fn day(text: &str) -> Option<(i64, &str)> {
    let t = text.trim();
    if !t.get(..3)?.eq_ignore_ascii_case("day") {
        return None;
    }
    let after = t[3..].trim_start();
    let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return None;
    }
    let n = after[..digits].parse().ok()?;
    Some((n, &after[digits..]))
}

/// A heading over what is not an event: open questions, notes, hooks, links.
pub(crate) fn is_aside(text: &str) -> bool {
    const WORDS: [&str; 23] = [
        "caveats",
        "mysteries",
        "mystery",
        "questions",
        "question",
        "unresolved",
        "unanswered",
        "open threads",
        "notes",
        "ideas",
        "hooks",
        "rumors",
        "rumours",
        "to do",
        "todo",
        "see also",
        "related",
        "references",
        "sources",
        "legend",
        "fragen",
        "misterios",
        "domande",
    ];
    let lower = text.trim().to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let joined = words.join(" ");
    WORDS.iter().any(|w| {
        if w.contains(' ') {
            joined.contains(w)
        } else {
            words.contains(w)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("Day 6", Period::Day(6))]
    #[case("day 12 — Market day", Period::Day(12))]
    #[case("Year 3", Period::Dated)]
    #[case("2024-03-12", Period::Dated)]
    #[case("12 Mirtul 1492", Period::Dated)]
    #[case("1500-Ches-12", Period::Dated)]
    #[case("Ancient Times", Period::Undated)]
    #[case("Daylight", Period::Undated)]
    #[case("Open Mysteries", Period::Aside)]
    #[case("Notes for Year 4", Period::Aside)]
    fn headings_name_periods(#[case] text: &str, #[case] want: Period) {
        assert_eq!(of_heading(text), want);
    }
}
