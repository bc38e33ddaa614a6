//! Adventure moments without a model: the one sentence of a DM reply that most changed the
//! story — something hidden, owed, promised, found, killed, revealed; a number or a name
//! coined in it — scored by cues in its words. The most significant are kept (15 by
//! default) and the few most relevant to a message are shown as the story so far.

/// A moment.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Moment {
    /// The sentence.
    pub text: String,
    /// The exchange (0-based).
    pub turn: usize,
    /// How much it changed the story (higher is more).
    pub significance: u32,
}

/// How many moments are kept by default.
pub(crate) const KEEP: usize = 15;
/// How many are shown with a message by default.
pub(crate) const SHOW: usize = 5;

/// Word stems that mark a turn of the story.
const CUES: &[&str] = &[
    "hid", "hide", "hidden", "stash", "owe", "debt", "promis", "swore", "sworn", "vow", "gave",
    "give", "paid", "pay", "bribe", "found", "find", "discover", "kill", "dead", "die", "murder",
    "password", "signal", "warn", "threat", "agree", "deal", "stole", "steal", "burn", "wound",
    "hurt", "bought", "sold", "hire", "betray", "confess", "reveal", "learn", "secret", "escape",
    "captur", "arrest", "key", "map", "letter", "telegram", "name",
];

fn significance(sentence: &str, coined: &[String]) -> u32 {
    let lower = sentence.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    if words.len() < 6 {
        return 0;
    }
    let mut s = 0;
    if words.iter().any(|w| CUES.iter().any(|c| w.starts_with(c))) {
        s += 2;
    }
    if words.iter().any(|w| w.chars().any(|c| c.is_ascii_digit()))
        || ["hundred", "thousand", "forty", "twelve", "twenty", "dozen"]
            .iter()
            .any(|n| words.contains(n))
    {
        s += 1;
    }
    if coined.iter().any(|t| sentence.contains(t.as_str())) {
        s += 2;
    }
    if sentence.contains('"') || sentence.contains('“') {
        s += 1;
    }
    s
}

/// The moment of one DM reply, if it has one (`coined`: terms it coined).
pub(crate) fn of_reply(dm: &str, turn: usize, coined: &[String]) -> Option<Moment> {
    let best = super::sentences(dm)
        .into_iter()
        .map(|s| (significance(s, coined), s))
        .max_by_key(|(n, _)| *n)?;
    (best.0 >= 2).then(|| Moment {
        text: best.1.chars().take(300).collect(),
        turn,
        significance: best.0,
    })
}

/// Keeps the `n` most significant moments (the newer one on a tie), in story order.
pub(crate) fn keep(moments: &mut Vec<Moment>, n: usize) {
    if moments.len() <= n {
        return;
    }
    let mut ranked: Vec<usize> = (0..moments.len()).collect();
    ranked.sort_by(|a, b| {
        moments[*b]
            .significance
            .cmp(&moments[*a].significance)
            .then(moments[*b].turn.cmp(&moments[*a].turn))
    });
    let mut keep: Vec<usize> = ranked.into_iter().take(n).collect();
    keep.sort_unstable();
    let kept: Vec<Moment> = keep.into_iter().map(|i| moments[i].clone()).collect();
    *moments = kept;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_turning_sentence_is_the_moment() {
        let m = of_reply(
            "The stove crackles. Hesper hides the carbon copies inside the upright piano, where nobody will look. Jonah plays louder.",
            4,
            &[],
        )
        .expect("a moment");
        assert!(m.text.starts_with("Hesper hides"), "{m:?}");
        assert!(of_reply(
            "The stove crackles and the miners drink their coffee slowly.",
            1,
            &[]
        )
        .is_none());
        let mut many: Vec<Moment> = (0..30)
            .map(|i| Moment {
                text: format!("m{i}"),
                turn: i,
                significance: (i % 4) as u32,
            })
            .collect();
        keep(&mut many, KEEP);
        assert_eq!(many.len(), KEEP);
        assert!(many.windows(2).all(|w| w[0].turn < w[1].turn));
        assert!(many.iter().all(|m| m.significance >= 1));
        assert_eq!(many.iter().filter(|m| m.significance == 3).count(), 7);
    }
}
