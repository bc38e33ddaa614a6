//! Token counting, shared by the context budget and the prompt history budget.
//!
//! Counts use OpenAI's `o200k_base` vocabulary (tiktoken), loaded once and lazily (~0.2 s),
//! and never fall below one token per four characters: other providers' tokenizers are
//! usually less efficient than o200k, so a budget that holds under both holds in practice.

/// A cheap estimate: one token per four characters (rounded up).
pub fn estimate(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

/// Exact count with the `o200k_base` vocabulary.
pub fn o200k(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    tiktoken_rs::o200k_base_singleton()
        .encode_ordinary(text)
        .len()
}

/// The count budgets use: the larger of [`o200k`] and [`estimate`].
pub fn count(text: &str) -> usize {
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
}
