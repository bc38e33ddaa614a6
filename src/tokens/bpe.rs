//! An exact `o200k_base` token counter over a compact, embedded vocabulary.
//!
//! tiktoken-rs builds a `HashMap<Vec<u8>, u32>` of 200k tokens plus decoder maps (tens of
//! megabytes, docs/benchmarks.md) to encode; we only ever need the number of tokens of
//! `encode_ordinary`. This
//! module embeds the vocabulary as one byte buffer (`assets/o200k_base.bin`, 1.6 MB: for each
//! rank in order, a length byte then the token's bytes; written by `examples/o200k_vocab.rs`
//! from tiktoken-rs's copy of OpenAI's MIT-licensed `o200k_base.tiktoken`) and, on first use,
//! indexes it with one open-addressing table of `u32` slots (2 MiB) plus one offset per rank
//! (0.8 MB): no allocation per token.
//!
//! The count follows tiktoken's `encode_ordinary` step by step: split the text with the
//! o200k pattern, count a piece that is a token as one, else merge byte pairs by lowest rank
//! exactly as `_byte_pair_merge` (pieces under 100 bytes) and `_byte_pair_merge_large` do.
//! The pattern's one non-regular part, `\s+(?!\S)`, is emulated (see [`Splitter`]) so that
//! a lazy DFA (`regex-automata`) splits, faster than `fancy-regex`'s backtracking.
//! The tests compare every count with tiktoken-rs's.

use std::cell::RefCell;
use std::collections::BinaryHeap;
use std::sync::OnceLock;

use regex_automata::{hybrid, Anchored, Input};

/// The vocabulary: for each rank from 0, one length byte then that many bytes.
static VOCAB: &[u8] = include_bytes!("../../assets/o200k_base.bin");

/// Number of ordinary tokens in `o200k_base` (ranks `0..TOKENS`; special tokens are never
/// produced by `encode_ordinary`).
const TOKENS: usize = 199_998;

type Rank = u32;

/// "No merge here", as in tiktoken.
const NO_RANK: Rank = Rank::MAX;

/// log2 of the table's slots: 2^19 slots for 200k keys keeps probes short (load 0.38).
const TABLE_BITS: u32 = 19;
/// Ranks fit in 18 bits (2^18 = 262,144 > 199,998); the upper 14 bits of a slot hold a tag
/// from the key's hash, so most mismatches are rejected without comparing bytes.
const RANK_BITS: u32 = 18;
const RANK_MASK: u32 = (1 << RANK_BITS) - 1;
/// An empty slot (its rank part, 2^18 − 1, is no token's rank).
const EMPTY: u32 = u32::MAX;

/// The pre-tokenizer pattern of `o200k_base`, copied from tiktoken-rs 0.12.1
/// (`src/tiktoken_ext/openai_public.rs`, `O200K_BASE_PAT_STR`, itself OpenAI's tiktoken),
/// with its sixth and seventh alternatives `\s+(?!\S)|\s+` merged into `\s+`, a look-ahead
/// regular expressions do not have; [`Splitter`] restores its effect.
const PATTERN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"\p{N}{1,3}",
    "|",
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
    "|",
    r"\s*[\r\n]+",
    "|",
    r"\s+",
);

/// The counter: the vocabulary's index and the splitting pattern, built once.
pub(super) struct Counter {
    vocab: Vocab,
    split: Splitter,
}

/// The process's counter, built on first use.
pub(super) fn counter() -> &'static Counter {
    static COUNTER: OnceLock<Counter> = OnceLock::new();
    COUNTER.get_or_init(Counter::new)
}

impl Counter {
    fn new() -> Counter {
        Counter {
            vocab: Vocab::new(),
            split: Splitter::new(),
        }
    }

    /// The length of tiktoken's `o200k_base().encode_ordinary(text)`.
    pub(super) fn count(&self, text: &str) -> usize {
        let mut n = 0;
        self.split
            .for_each_piece(text, |piece| n += self.vocab.piece_tokens(piece));
        n
    }
}

/// Splits text into the pieces of the o200k pattern, as `fancy_regex::Regex::find_iter`
/// does with the original pattern.
///
/// Why merging `\s+(?!\S)|\s+` into `\s+` and trimming afterwards is exact: every other
/// alternative ends in something that is not whitespace, or in `\r`/`\n` (the fourth and
/// fifth), so a piece that ends in whitespace other than `\r`/`\n` came from `\s+` and is a
/// whole run of whitespace without `\r`/`\n` (else the fifth alternative would have won).
/// Where the original tried `\s+(?!\S)` on such a run: at the end of the text it takes the
/// whole run; before a non-space it backs off one character, which succeeds if the run has
/// two characters or more; a one-character run falls through to `\s+`, the whole run.
///
/// Every character starts a piece (letters, digits, whitespace and everything else each
/// have an alternative), so the next piece starts where the last one ended: one anchored
/// forward search of a lazy DFA finds its end, with no reverse search for its start and
/// no per-search set-up of a full `regex::Regex`. Should the DFA ever report no match or
/// an error, `regex::Regex::find_at` (same pattern, same semantics) takes over.
struct Splitter {
    dfa: hybrid::dfa::DFA,
    fallback: OnceLock<regex::Regex>,
}

thread_local! {
    /// The lazy DFA's state cache, one per thread that counts.
    static DFA_CACHE: RefCell<Option<hybrid::dfa::Cache>> = const { RefCell::new(None) };
}

impl Splitter {
    fn new() -> Splitter {
        // The pattern is a constant known to compile; a failure is a bug caught by every test.
        let dfa = hybrid::dfa::DFA::new(PATTERN).expect("the o200k pattern compiles");
        Splitter {
            dfa,
            fallback: OnceLock::new(),
        }
    }

    /// Calls `f` with this thread's DFA cache.
    fn with_cache<R>(&self, f: impl FnOnce(&mut hybrid::dfa::Cache) -> R) -> R {
        DFA_CACHE.with(|c| {
            let mut c = c.borrow_mut();
            let cache = c.get_or_insert_with(|| self.dfa.create_cache());
            f(cache)
        })
    }

    /// Calls `piece` on every piece of `text`, in order.
    fn for_each_piece(&self, text: &str, mut piece: impl FnMut(&[u8])) {
        self.with_cache(|cache| {
            let mut at = 0;
            while at < text.len() {
                let input = Input::new(text).range(at..).anchored(Anchored::Yes);
                let (start, end) = match self.dfa.try_search_fwd(cache, &input) {
                    Ok(Some(m)) if m.offset() > at => (at, m.offset()),
                    _ => match self.find_slow(text, at) {
                        Some(m) => m,
                        None => return,
                    },
                };
                let end = trim_lookahead(text, start, end);
                piece(&text.as_bytes()[start..end]);
                at = end;
            }
        });
    }

    /// The next match at or after `at` through `regex::Regex` (not expected to be used).
    #[cold]
    fn find_slow(&self, text: &str, at: usize) -> Option<(usize, usize)> {
        let re = self
            .fallback
            .get_or_init(|| regex::Regex::new(PATTERN).expect("the o200k pattern compiles"));
        re.find_at(text, at).map(|m| (m.start(), m.end()))
    }
}

/// Where the piece `start..end` ends under the original `\s+(?!\S)` (see [`Splitter`]).
#[inline]
fn trim_lookahead(text: &str, start: usize, end: usize) -> usize {
    if end >= text.len() {
        return end;
    }
    let mut chars = text[start..end].chars();
    match chars.next_back() {
        Some(last)
            if last != '\r' && last != '\n' && last.is_whitespace() && chars.next().is_some() =>
        {
            end - last.len_utf8()
        }
        _ => end,
    }
}

/// The vocabulary's index: ranks by bytes.
struct Vocab {
    /// Where each rank's bytes start in [`VOCAB`] (its length is the byte before).
    starts: Vec<u32>,
    /// Open addressing, linear probing: `rank | tag << RANK_BITS`, or [`EMPTY`].
    slots: Vec<u32>,
}

/// Hash of a token's bytes: FxHash-style word folding, then a multiplicative mix so both the
/// top bits (the slot) and the low bits (the tag) depend on every byte.
#[inline]
fn hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = (bytes.len() as u64).wrapping_mul(K);
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h.rotate_left(23) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(23) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    }
    h ^ (h >> 29)
}

#[inline]
fn slot_of(h: u64) -> usize {
    (h.wrapping_mul(0xD6E8_FEB8_6659_FD93) >> (64 - TABLE_BITS)) as usize
}

#[inline]
fn tag_of(h: u64) -> u32 {
    // 14 bits; never all ones together with the rank bits of a real rank.
    ((h as u32) & 0x3FFF) << RANK_BITS
}

impl Vocab {
    fn new() -> Vocab {
        let mut starts = Vec::with_capacity(TOKENS);
        let mut at = 0;
        while at < VOCAB.len() {
            let len = usize::from(VOCAB[at]);
            starts.push((at + 1) as u32);
            at += 1 + len;
        }
        debug_assert_eq!(starts.len(), TOKENS);
        let mask = (1usize << TABLE_BITS) - 1;
        let mut slots = vec![EMPTY; 1 << TABLE_BITS];
        for (rank, &start) in starts.iter().enumerate() {
            let start = start as usize;
            let bytes = &VOCAB[start..start + usize::from(VOCAB[start - 1])];
            let h = hash(bytes);
            let mut i = slot_of(h);
            while slots[i] != EMPTY {
                i = (i + 1) & mask;
            }
            slots[i] = rank as u32 | tag_of(h);
        }
        Vocab { starts, slots }
    }

    #[inline]
    fn bytes(&self, rank: Rank) -> &'static [u8] {
        let start = self.starts[rank as usize] as usize;
        &VOCAB[start..start + usize::from(VOCAB[start - 1])]
    }

    /// The rank of `bytes` if it is a token.
    #[inline]
    fn rank(&self, bytes: &[u8]) -> Option<Rank> {
        if bytes.len() > usize::from(u8::MAX) {
            return None;
        }
        let h = hash(bytes);
        let tag = tag_of(h);
        let mask = self.slots.len() - 1;
        let mut i = slot_of(h);
        loop {
            let s = self.slots[i];
            if s == EMPTY {
                return None;
            }
            if s & !RANK_MASK == tag {
                let rank = s & RANK_MASK;
                if self.bytes(rank) == bytes {
                    return Some(rank);
                }
            }
            i = (i + 1) & mask;
        }
    }

    #[inline]
    fn rank_or_none(&self, bytes: &[u8]) -> Rank {
        self.rank(bytes).unwrap_or(NO_RANK)
    }

    /// Tokens of one piece of the split: one if it is a token, else its byte-pair merge.
    fn piece_tokens(&self, piece: &[u8]) -> usize {
        match piece.len() {
            0 => 0,
            1 => 1,
            _ if self.rank(piece).is_some() => 1,
            n if n < 100 => self.merge_small(piece),
            _ => self.merge_large(piece),
        }
    }

    /// tiktoken's `_byte_pair_merge`, counting the parts instead of returning them: a
    /// vector of (start, rank of the pair starting here), the lowest rank merged first
    /// (the leftmost among equals), on the stack since pieces here are under 100 bytes.
    fn merge_small(&self, piece: &[u8]) -> usize {
        let n = piece.len();
        debug_assert!((2..100).contains(&n));
        let mut parts = [(0u32, NO_RANK); 101];
        let mut len = 0;
        let mut min: (Rank, usize) = (NO_RANK, usize::MAX);
        for i in 0..n - 1 {
            let rank = self.rank_or_none(&piece[i..i + 2]);
            if rank < min.0 {
                min = (rank, i);
            }
            parts[len] = (i as u32, rank);
            len += 1;
        }
        parts[len] = ((n - 1) as u32, NO_RANK);
        parts[len + 1] = (n as u32, NO_RANK);
        len += 2;

        let get_rank = |parts: &[(u32, Rank)], len: usize, i: usize| -> Rank {
            if i + 3 < len {
                self.rank_or_none(&piece[parts[i].0 as usize..parts[i + 3].0 as usize])
            } else {
                NO_RANK
            }
        };
        while min.0 != NO_RANK {
            let i = min.1;
            if i > 0 {
                parts[i - 1].1 = get_rank(&parts, len, i - 1);
            }
            parts[i].1 = get_rank(&parts, len, i);
            parts.copy_within(i + 2..len, i + 1);
            len -= 1;

            min = (NO_RANK, usize::MAX);
            for (j, &(_, rank)) in parts[..len - 1].iter().enumerate() {
                if rank < min.0 {
                    min = (rank, j);
                }
            }
        }
        len - 1
    }

    /// tiktoken's `_byte_pair_merge_large` (a heap of candidate merges and a linked list of
    /// parts), counting the resulting tokens.
    fn merge_large(&self, piece: &[u8]) -> usize {
        #[derive(Clone, Copy)]
        struct State {
            prev: usize,
            end: usize,
            next_end: usize,
            next_rank: Rank,
        }
        #[derive(PartialEq, Eq)]
        struct Merge {
            start: usize,
            rank: Rank,
        }
        impl Ord for Merge {
            fn cmp(&self, other: &Self) -> std::cmp::Ordering {
                other
                    .rank
                    .cmp(&self.rank)
                    .then_with(|| other.start.cmp(&self.start))
            }
        }
        impl PartialOrd for Merge {
            fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
                Some(self.cmp(other))
            }
        }

        let n = piece.len();
        let mut state = Vec::with_capacity(n);
        state.push(State {
            prev: usize::MAX,
            end: 1,
            next_end: 2,
            next_rank: NO_RANK,
        });
        let mut heap = BinaryHeap::with_capacity(n);
        for i in 0..n - 1 {
            if let Some(rank) = self.rank(&piece[i..i + 2]) {
                heap.push(Merge { start: i, rank });
                state[i].next_rank = rank;
            }
            state.push(State {
                prev: i,
                end: i + 2,
                next_end: i + 3,
                next_rank: NO_RANK,
            });
        }

        let potential_merge =
            |state: &mut [State], heap: &mut BinaryHeap<Merge>, start: usize, next_end: usize| {
                state[start].next_end = next_end;
                state[start].next_rank = NO_RANK;
                if next_end <= n {
                    if let Some(rank) = self.rank(&piece[start..next_end]) {
                        heap.push(Merge { start, rank });
                        state[start].next_rank = rank;
                    }
                }
            };

        while let Some(left) = heap.pop() {
            if left.rank == NO_RANK {
                break;
            }
            if left.rank != state[left.start].next_rank {
                continue;
            }
            let left_start = left.start;
            let right_start = state[left_start].end;
            let right_end = state[left_start].next_end;
            let right_next_end = state[right_start].next_end;

            state[left_start].end = right_end;
            potential_merge(&mut state, &mut heap, left_start, right_next_end);
            if right_end < state.len() {
                state[right_end].prev = left_start;
            }
            if left_start > 0 {
                let prev_start = state[left_start].prev;
                potential_merge(&mut state, &mut heap, prev_start, right_end);
            }
            state[right_start].next_rank = NO_RANK;
        }

        let mut count = 0;
        let mut i = 0;
        while i < state.len() {
            count += 1;
            i = state[i].end;
        }
        count
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// tiktoken-rs's count, the reference.
    fn reference(text: &str) -> usize {
        tiktoken_rs::o200k_base_singleton()
            .encode_ordinary(text)
            .len()
    }

    fn ours(text: &str) -> usize {
        counter().count(text)
    }

    #[track_caller]
    fn assert_exact(text: &str) {
        assert_eq!(ours(text), reference(text), "text: {text:?}");
    }

    #[test]
    fn the_embedded_vocabulary_is_o200k_base() {
        let reference = tiktoken_rs::o200k_base_singleton();
        let vocab = &counter().vocab;
        assert_eq!(vocab.starts.len(), TOKENS);
        for rank in 0..TOKENS as Rank {
            let bytes = reference
                .decode_bytes(&[rank])
                .expect("every ordinary rank decodes");
            assert_eq!(vocab.bytes(rank), bytes.as_slice(), "rank {rank}");
            assert_eq!(vocab.rank(&bytes), Some(rank), "rank {rank}");
        }
        assert!(reference.decode_bytes(&[TOKENS as Rank]).is_err());
    }

    #[test]
    fn pieces_not_in_the_vocabulary_are_not_found() {
        let vocab = &counter().vocab;
        assert_eq!(vocab.rank(b""), None);
        assert_eq!(vocab.rank(&[0xFF; 200]), None);
        assert_eq!(vocab.rank(&[0xFF; 300]), None);
        assert_eq!(vocab.rank(b"qzxqzxqzxqzx"), None);
    }

    /// The `regex::Regex` fallback splits exactly as the lazy DFA does.
    #[test]
    fn the_fallback_splits_as_the_dfa() {
        let split = &counter().split;
        let text = "Hello, world!  It's 12345 o'clock\r\n\n  \t x 日本語 😀😀 e\u{301} ";
        let mut dfa = Vec::new();
        split.for_each_piece(text, |p| dfa.push(p.to_vec()));
        let mut slow = Vec::new();
        let mut at = 0;
        while let Some((start, end)) = split.find_slow(text, at) {
            let end = trim_lookahead(text, start, end);
            slow.push(text.as_bytes()[start..end].to_vec());
            at = end;
        }
        assert_eq!(dfa, slow);
        assert!(dfa.len() > 15);
    }

    /// Every file of the bundled vault, the test fixtures and the docs, whole and line by
    /// line (the context budget counts per line).
    #[test]
    fn exact_on_the_repository_texts() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = 0;
        for dir in ["vault-template", "tests/fixtures", "docs"] {
            for e in walkdir::WalkDir::new(root.join(dir))
                .into_iter()
                .filter_map(Result::ok)
                .filter(|e| e.file_type().is_file())
            {
                let Ok(text) = std::fs::read(e.path()) else {
                    continue;
                };
                let text = String::from_utf8_lossy(&text);
                assert_eq!(ours(&text), reference(&text), "{}", e.path().display());
                for line in text.split_inclusive('\n') {
                    assert_exact(line);
                }
                files += 1;
            }
        }
        assert!(files > 20, "only {files} files found");
    }

    #[test]
    fn exact_on_hand_picked_texts() {
        let mut texts: Vec<String> = [
            "",
            " ",
            "\n",
            "\r\n",
            "a",
            "Hello, world!",
            "I'm sure they'll say it's THEIR'S, we've WE'VE You'D i'M",
            "don't DON'T Don'T can't'nt 's 'S",
            "  two spaces before\tand\ttabs\t \t after \n\n\n  \r\n\r\n  x",
            "trailing spaces   ",
            "trailing newline spaces \n   ",
            "\u{3000}ideographic\u{3000}\u{3000}space \u{a0}\u{a0}nbsp\u{2028}ls\u{2029}ps\u{85}nel",
            "日本語のテキストです。東京は大きい都市です。",
            "中文文本，包括标点符号！还有数字１２３和ABC。",
            "한국어 텍스트입니다",
            "Привет, мир! ПРИВЕТ Мир. ёЁ",
            "שלום עולם! مرحبا بالعالم 123 ٣٤٥ ۱۲۳",
            "e\u{301}te\u{301} cafe\u{301} A\u{30a}ngstro\u{308}m \u{301}\u{301}alone",
            "emoji 😀😃😄 👩‍👩‍👧‍👦 🇫🇷🇩🇪 👍🏽 ✨✨✨",
            "ǅungla ǈ ǋ ʰʲ ᾈᾉ ß ẞ ﬁ ﬃ",
            "1 12 123 1234 12345 123456 1234567 3.14159 1,000,000 0x1F ½ ² ⅷ ①②",
            "path/to/file.md:42 https://example.com/a?b=c&d=e#frag //comment /* c */",
            "**bold** _it_ `code` [[Wiki Link|alias]] #tag ![[embed.png]] %% comment %%",
            "---\ntitle: Note\ntags: [a, b]\n---\n# Heading\n\n- item\n  - sub\n",
            "fn main() {\n    println!(\"{}\", 1 + 2);\n}\r\n",
            "... !!! ??? --- === +++ *** ### $$$ %%% ^^^ &&& ||| ~~~",
            "\t\t\t\tindented\n\t\n \t \n",
            "\u{feff}bom \u{200b}zwsp\u{200d}zwj \u{0}nul \u{7f}del",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for n in [1, 2, 3, 50, 99, 100, 101, 150, 300] {
            texts.push(" ".repeat(n));
            texts.push(format!("{}x", " ".repeat(n)));
            texts.push(format!("a{}b", " ".repeat(n)));
            texts.push(format!("{}\n", " ".repeat(n)));
            texts.push(format!("{}\n{}y", " ".repeat(n), "\t".repeat(n)));
            texts.push("7".repeat(n));
            texts.push("ab".repeat(n));
            texts.push("Zq".repeat(n));
            texts.push("😀".repeat(n));
            texts.push("日本".repeat(n));
            texts.push("!?".repeat(n));
            texts.push("\r\n".repeat(n));
            texts.push("é".repeat(n));
        }
        // Long pieces (≥ 100 bytes) go through the heap merge.
        texts.push("abcdefghijklmnopqrstuvwxyz".repeat(20));
        texts.push("aGVsbG8gd29ybGQgdGhpcyBpcyBiYXNlNjQ".repeat(10));
        for t in &texts {
            assert_exact(t);
        }
    }

    /// Fragments chosen to meet at the pattern's edges: contractions, case changes, marks,
    /// digits, whitespace of every kind, punctuation and newlines.
    fn fragment() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "a",
            "Z",
            "word",
            "Word",
            "WORD",
            "'s",
            "'S",
            "'ll",
            "'LL",
            "'re",
            "'Ve",
            "'m",
            "'d",
            "'t",
            "'",
            "’",
            " ",
            "  ",
            "   ",
            "\t",
            "\n",
            "\r",
            "\r\n",
            "\n\n",
            "\u{3000}",
            "\u{a0}",
            "\u{2028}",
            "\u{85}",
            "\u{b}",
            "\u{c}",
            "1",
            "12",
            "1234",
            "٣",
            "½",
            "①",
            ".",
            ",",
            "!",
            "?",
            "/",
            "//",
            "...",
            "-",
            "_",
            "#",
            "[[",
            "]]",
            "*",
            "`",
            "é",
            "e\u{301}",
            "\u{301}",
            "\u{93f}",
            "ǅ",
            "ʰ",
            "ß",
            "日",
            "本語",
            "。",
            "、",
            "한",
            "Ж",
            "жи",
            "ש",
            "ب",
            "😀",
            "👩‍👧",
            "🇫🇷",
            "\u{200d}",
            "\u{feff}",
            "\u{0}",
        ])
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn exact_on_joined_fragments(parts in prop::collection::vec(fragment(), 0..60)) {
            let text: String = parts.concat();
            prop_assert_eq!(ours(&text), reference(&text), "text: {:?}", text);
        }

        #[test]
        fn exact_on_random_strings(text in any::<String>()) {
            prop_assert_eq!(ours(&text), reference(&text), "text: {:?}", text);
        }

        #[test]
        fn exact_on_random_bytes_made_utf8(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
            let text = String::from_utf8_lossy(&bytes);
            prop_assert_eq!(ours(&text), reference(&text), "text: {:?}", text);
        }

        #[test]
        fn exact_on_ascii_soup(text in "[ a-zA-Z0-9'\t\r\n.,!?/-]{0,300}") {
            prop_assert_eq!(ours(&text), reference(&text), "text: {:?}", text);
        }
    }
}
