//! Token counting for history budgets.
//!
//! Prompt layout only needs to know roughly how big each message is, so callers choose between
//! an exact count ([`tiktoken_count`], OpenAI's `o200k_base` vocabulary — close enough for
//! other providers' tokenizers too) and a free estimate ([`estimate_tokens`]). The tiktoken
//! vocabulary is ~9 MB and takes ~0.2 s to load, so it is loaded once, lazily, on first use.

/// A cheap estimate: about four bytes of English per token, never less than the number of
/// whitespace-separated words. Calibrated to over- rather than under-count.
pub fn estimate_tokens(text: &str) -> usize {
    let by_bytes = text.len().div_ceil(4);
    let words = text.split_whitespace().count();
    by_bytes.max(words)
}

/// Exact token count with the `o200k_base` vocabulary (loaded on first call).
pub fn tiktoken_count(text: &str) -> usize {
    tiktoken_rs::o200k_base_singleton()
        .encode_with_special_tokens(text)
        .len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimate_is_in_the_right_ballpark() {
        let text = "The innkeeper, a stout dwarf named Borin, slides a mug across the bar.";
        let exact = tiktoken_count(text);
        let est = estimate_tokens(text);
        assert!(est >= exact / 2 && est <= exact * 2, "est {est} exact {exact}");
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(tiktoken_count(""), 0);
    }
}
