//! Token counting, shared by the context budget and the prompt history budget.
//!
//! Counts are exactly those of OpenAI's `o200k_base` (tiktoken's `encode_ordinary`), by our
//! own counter over a compact embedded vocabulary (`tokens/bpe.rs`: 1.6 MB in the binary,
//! indexed once, lazily; far quicker and smaller than tiktoken-rs's maps, figures in
//! docs/benchmarks.md), and never fall below one token per four characters: other
//! providers' tokenizers are usually less efficient than o200k, so a budget that holds
//! under both holds in practice.

mod bpe;

/// A cheap estimate: one token per four characters (rounded up).
pub fn estimate(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

/// Exact count with the `o200k_base` vocabulary.
pub fn o200k(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    bpe::counter().count(text)
}

/// Builds the counter on a background thread, so that a command that will count tokens
/// does it while canon is built (a few ms of work, on the other core). `context` and `ask`
/// start it once the notes are parsed: during the parse both cores are busy.
pub fn warm_up_in_background() {
    std::thread::spawn(|| {
        let _ = bpe::counter();
    });
}

/// Texts longer than this (in bytes) are estimated, never tokenised: a runaway reply kept
/// in an old session must not cost gigabytes to count.
pub const EXACT_LIMIT: usize = 256 * 1024;

/// The count budgets use: the larger of [`o200k`] and [`estimate`]; above [`EXACT_LIMIT`]
/// bytes a cautious estimate (the larger of chars / 4 and bytes / 3, which holds for
/// English and for CJK text alike) in linear time and constant memory.
pub fn count(text: &str) -> usize {
    if text.len() > EXACT_LIMIT {
        return estimate(text).max(text.len().div_ceil(3));
    }
    o200k(text).max(estimate(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_sane() {
        let t = "The innkeeper, a stout dwarf named Borin, slides a mug across the bar.";
        assert!(o200k(t) > 10 && o200k(t) < 25);
        assert_eq!(count(t), o200k(t).max(estimate(t)));
        assert_eq!(count(""), 0);
        assert_eq!(estimate("abcde"), 2);
    }

    #[test]
    fn huge_texts_are_estimated_not_tokenised() {
        let big = "word ".repeat(EXACT_LIMIT);
        let t = std::time::Instant::now();
        let n = count(&big);
        assert!(n >= big.len() / 4, "{n}");
        // o200k on 1.3 MB takes far longer than an estimate; this only guards the branch.
        assert!(t.elapsed() < std::time::Duration::from_secs(1));
    }
}
