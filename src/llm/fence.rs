//! The fenced-block fallback for canon-change proposals, for models and servers without tool
//! support.
//!
//! Such a model is asked to put its proposals in a fenced block whose info string is
//! `vaultdm-changes`:
//!
//! ````text
//! The ogre staggers back, bleeding.
//!
//! ```vaultdm-changes
//! {"npc": "Grum", "hp": -7}
//! ```
//! ````
//!
//! The fences follow CommonMark: three or more backticks or tildes, indented by at most three
//! spaces; the closing fence uses the opening character and is at least as long; the info
//! string's first word is compared case-insensitively. Other code fences (```` ```python ````)
//! are prose and pass through untouched — a `vaultdm-changes` line inside one is not an opener.
//! A block still open when the text ends (the reply was cut off) is taken as a block too.
//!
//! [`split_fenced`] takes a whole reply apart; [`FenceFilter`] does the same while it
//! streams, so the player never sees the block, yet ordinary text is passed on at once: only
//! a line that may still turn out to be an opening fence is held back, and never longer than
//! that one line. The streamed prose is exactly `strip_fenced`'s (the tests' reference); [`split_fenced`] also
//! collapses the blank lines a removed block leaves behind.

/// The info string that marks a block of proposed canon changes.
pub(crate) const INFO_STRING: &str = "vaultdm-changes";

/// A fence: its character (`` ` `` or `~`) and length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fence {
    ch: char,
    len: usize,
}

/// What the lines seen so far are inside of.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Mode {
    /// Prose, shown to the player.
    #[default]
    Prose,
    /// Another fenced code block: shown, but openers inside it do not count.
    Other(Fence),
    /// A `vaultdm-changes` block: hidden, collected.
    Changes(Fence),
}

/// `line` without up to three leading spaces; `None` when it is indented four or more.
fn strip_indent(line: &str) -> Option<&str> {
    let n = line.bytes().take_while(|&b| b == b' ').count();
    (n <= 3).then(|| &line[n..])
}

/// An opening fence line (without its line end): the fence and its trimmed info string.
fn opening(line: &str) -> Option<(Fence, &str)> {
    let rest = strip_indent(line)?;
    let ch = rest.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let len = rest.bytes().take_while(|&b| b == ch as u8).count();
    if len < 3 {
        return None;
    }
    let info = &rest[len..];
    if ch == '`' && info.contains('`') {
        return None;
    }
    Some((Fence { ch, len }, info.trim()))
}

/// The fence of a line that opens a `vaultdm-changes` block.
fn changes_opener(line: &str) -> Option<Fence> {
    opening(line)
        .filter(|(_, info)| {
            info.split_whitespace()
                .next()
                .is_some_and(|w| w.eq_ignore_ascii_case(INFO_STRING))
        })
        .map(|(f, _)| f)
}

/// Whether `line` closes a block opened by `fence`.
fn closes(line: &str, fence: Fence) -> bool {
    let Some(rest) = strip_indent(line) else {
        return false;
    };
    let len = rest.bytes().take_while(|&b| b == fence.ch as u8).count();
    len >= fence.len && rest[len..].trim().is_empty()
}

/// Whether a line beginning with `line` could still turn out to open a `vaultdm-changes`
/// block. Once false it stays false however the line goes on.
fn may_open_changes(line: &str) -> bool {
    let Some(rest) = strip_indent(line) else {
        return false;
    };
    let Some(ch) = rest.chars().next() else {
        return true; // only indentation so far
    };
    if !matches!(ch, '`' | '~') {
        return false;
    }
    let len = rest.bytes().take_while(|&b| b == ch as u8).count();
    let after = &rest[len..];
    if after.is_empty() {
        return true; // the run may grow
    }
    if len < 3 || (ch == '`' && after.contains('`')) {
        return false;
    }
    let info = after.trim_start();
    match info.find(char::is_whitespace) {
        Some(end) => info[..end].eq_ignore_ascii_case(INFO_STRING),
        None => {
            info.len() <= INFO_STRING.len()
                && INFO_STRING.as_bytes()[..info.len()].eq_ignore_ascii_case(info.as_bytes())
        }
    }
}

/// The prose pieces between removed blocks (one more than there are blocks) and the blocks.
fn scan(text: &str) -> (Vec<String>, Vec<String>) {
    let mut pieces = vec![String::new()];
    let mut blocks = Vec::new();
    let mut block = String::new();
    let mut mode = Mode::Prose;
    for line in text.split_inclusive('\n') {
        let content = line.strip_suffix('\n').unwrap_or(line);
        match mode {
            Mode::Prose => {
                if let Some(f) = changes_opener(content) {
                    mode = Mode::Changes(f);
                } else {
                    if let Some(last) = pieces.last_mut() {
                        last.push_str(line);
                    }
                    if let Some((f, _)) = opening(content) {
                        mode = Mode::Other(f);
                    }
                }
            }
            Mode::Other(f) => {
                if let Some(last) = pieces.last_mut() {
                    last.push_str(line);
                }
                if closes(content, f) {
                    mode = Mode::Prose;
                }
            }
            Mode::Changes(f) => {
                if closes(content, f) {
                    blocks.push(std::mem::take(&mut block));
                    pieces.push(String::new());
                    mode = Mode::Prose;
                } else {
                    block.push_str(line);
                }
            }
        }
    }
    if matches!(mode, Mode::Changes(_)) {
        blocks.push(block);
        pieces.push(String::new());
    }
    (pieces, blocks)
}

#[cfg(test)]
/// The text with every `vaultdm-changes` block removed (opening and closing fence lines
/// included), and each block's inner text, in order. Nothing else changes: this is exactly
/// what a [`FenceFilter`] shows when the text streams through it.
pub(crate) fn strip_fenced(text: &str) -> (String, Vec<String>) {
    let (pieces, blocks) = scan(text);
    (pieces.concat(), blocks)
}

/// The prose with every `vaultdm-changes` block removed, and each block's inner text (the
/// lines between the fences, line ends kept), in order.
///
/// Where a block was removed, the blank lines it leaves are collapsed so the prose reads
/// naturally: a blank line before the block swallows the blank lines after it, and a block
/// at the very start or end takes its adjacent blank lines with it. An unterminated block at
/// the end (a cut-off reply) is still a block.
pub(crate) fn split_fenced(text: &str) -> (String, Vec<String>) {
    let (pieces, blocks) = scan(text);
    let mut out = String::new();
    let mut rest = pieces.iter();
    if let Some(first) = rest.next() {
        out.push_str(first);
    }
    for piece in rest {
        let piece = if out.is_empty() || ends_with_blank_line(&out) {
            skip_leading_blank_lines(piece)
        } else {
            piece.as_str()
        };
        out.push_str(piece);
    }
    if pieces.len() > 1 && pieces.last().is_some_and(|p| p.trim().is_empty()) {
        // A block at the end: drop the blank lines before it.
        let keep = out.trim_end().len();
        if let Some(nl) = out[keep..].find('\n') {
            out.truncate(keep + nl + 1);
        } else {
            out.truncate(keep);
        }
    }
    (out, blocks)
}

/// Whether `text` ends in a line end whose line holds only whitespace.
fn ends_with_blank_line(text: &str) -> bool {
    text.strip_suffix('\n')
        .and_then(|body| body.rsplit('\n').next())
        .is_some_and(|last| last.trim().is_empty())
}

fn skip_leading_blank_lines(mut text: &str) -> &str {
    while let Some(nl) = text.find('\n') {
        if !text[..nl].trim().is_empty() {
            break;
        }
        text = &text[nl + 1..];
    }
    text
}

/// Removes `vaultdm-changes` blocks from streamed text as it arrives.
///
/// Feed each piece of the reply to [`push`](Self::push) and show what it returns; call
/// [`finish`](Self::finish) at the end for the rest and the blocks. Whatever the pieces, the
/// text shown adds up to `strip_fenced`'s. Text is held back only while the current line
/// may still be an opening fence (it begins with up to three spaces and then a backtick or
/// tilde), and at most until that line ends.
#[derive(Debug, Default)]
pub(crate) struct FenceFilter {
    mode: Mode,
    /// The current line so far, without its line end.
    line: String,
    /// In prose: the current line is being shown (it cannot open a changes block).
    shown: bool,
    /// The changes block being collected.
    block: String,
    /// Finished blocks.
    blocks: Vec<String>,
}

impl FenceFilter {
    /// A filter at the start of a reply.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Feed the next piece of the reply; returns the text that is safe to show now.
    pub(crate) fn push(&mut self, chunk: &str) -> String {
        let mut out = String::new();
        let mut rest = chunk;
        while let Some(nl) = rest.find('\n') {
            self.extend_line(&rest[..nl], &mut out);
            self.end_line(&mut out);
            rest = &rest[nl + 1..];
        }
        self.extend_line(rest, &mut out);
        out
    }

    /// End of the reply: the text still to show, and every block found (a block still open
    /// is included: the reply was cut off).
    pub(crate) fn finish(mut self) -> (String, Vec<String>) {
        let mut out = String::new();
        match self.mode {
            Mode::Prose => {
                if !self.shown {
                    if changes_opener(&self.line).is_some() {
                        self.blocks.push(String::new());
                    } else {
                        out.push_str(&self.line);
                    }
                }
            }
            Mode::Other(_) => {}
            Mode::Changes(f) => {
                if !closes(&self.line, f) {
                    self.block.push_str(&self.line);
                }
                self.blocks.push(self.block);
            }
        }
        (out, self.blocks)
    }

    /// More of the current line (no line end in `seg`).
    fn extend_line(&mut self, seg: &str, out: &mut String) {
        if seg.is_empty() {
            return;
        }
        self.line.push_str(seg);
        match self.mode {
            Mode::Prose => {
                if self.shown {
                    out.push_str(seg);
                } else if !may_open_changes(&self.line) {
                    out.push_str(&self.line);
                    self.shown = true;
                }
            }
            Mode::Other(_) => out.push_str(seg),
            Mode::Changes(_) => {}
        }
    }

    /// The current line ended with `\n`.
    fn end_line(&mut self, out: &mut String) {
        match self.mode {
            Mode::Prose => {
                let opener = if self.shown {
                    None
                } else {
                    changes_opener(&self.line)
                };
                if let Some(f) = opener {
                    self.mode = Mode::Changes(f);
                } else {
                    if !self.shown {
                        out.push_str(&self.line);
                    }
                    out.push('\n');
                    if let Some((f, _)) = opening(&self.line) {
                        self.mode = Mode::Other(f);
                    }
                }
            }
            Mode::Other(f) => {
                out.push('\n');
                if closes(&self.line, f) {
                    self.mode = Mode::Prose;
                }
            }
            Mode::Changes(f) => {
                if closes(&self.line, f) {
                    self.blocks.push(std::mem::take(&mut self.block));
                    self.mode = Mode::Prose;
                } else {
                    self.block.push_str(&self.line);
                    self.block.push('\n');
                }
            }
        }
        self.line.clear();
        self.shown = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rstest::rstest;

    #[rstest]
    #[case::none("Just prose.\nMore.", "Just prose.\nMore.", &[])]
    #[case::middle(
        "The ogre falls.\n\n```vaultdm-changes\n{\"hp\":-7}\n```\n\nThe party cheers.",
        "The ogre falls.\n\nThe party cheers.",
        &["{\"hp\":-7}\n"]
    )]
    #[case::tight("A\n```vaultdm-changes\nx\n```\nB\n", "A\nB\n", &["x\n"])]
    #[case::at_end("Prose.\n\n```vaultdm-changes\nx\n```\n", "Prose.\n", &["x\n"])]
    #[case::at_start("```vaultdm-changes\nx\n```\n\nHello", "Hello", &["x\n"])]
    #[case::tilde_long_indented(
        "A\n\n   ~~~~ VaultDM-Changes json\nx\n~~~\n~~~~~\n\nB",
        "A\n\nB",
        &["x\n~~~\n"]
    )]
    #[case::longer_close("A\n```vaultdm-changes\nx\n`````\nB", "A\nB", &["x\n"])]
    #[case::unterminated("Prose.\n\n```vaultdm-changes\n{\"hp\":", "Prose.\n", &["{\"hp\":"])]
    #[case::opener_only("Prose.\n```vaultdm-changes", "Prose.\n", &[""])]
    #[case::two_blocks(
        "A\n\n```vaultdm-changes\n1\n```\n\n```vaultdm-changes\n2\n```\n\nB",
        "A\n\nB",
        &["1\n", "2\n"]
    )]
    #[case::other_fence_untouched(
        "```python\nprint(1)\n```vaultdm-changes\n```\nafter",
        "```python\nprint(1)\n```vaultdm-changes\n```\nafter",
        &[]
    )]
    #[case::four_spaces_is_code("    ```vaultdm-changes\nx", "    ```vaultdm-changes\nx", &[])]
    #[case::other_word("```vaultdm-changesx\ny\n```", "```vaultdm-changesx\ny\n```", &[])]
    #[case::backtick_close_for_tilde(
        "~~~vaultdm-changes\n```\n~~~\nB",
        "B",
        &["```\n"]
    )]
    #[case::crlf(
        "A\r\n\r\n```vaultdm-changes\r\nx\r\n```\r\n\r\nB",
        "A\r\n\r\nB",
        &["x\r\n"]
    )]
    fn splits(#[case] text: &str, #[case] prose: &str, #[case] blocks: &[&str]) {
        let (p, b) = split_fenced(text);
        assert_eq!(p, prose);
        assert_eq!(b, blocks);
    }

    #[test]
    fn strip_keeps_blank_lines() {
        let text = "A\n\n```vaultdm-changes\nx\n```\n\nB";
        assert_eq!(
            strip_fenced(text),
            ("A\n\n\nB".to_owned(), vec!["x\n".to_owned()])
        );
    }

    #[test]
    fn ordinary_text_is_not_delayed() {
        let mut f = FenceFilter::new();
        assert_eq!(f.push("The ogre "), "The ogre ");
        assert_eq!(f.push("falls.\nThe party"), "falls.\nThe party");
        assert_eq!(f.push(" cheers `loudly`.\n"), " cheers `loudly`.\n");
        // A possible fence start is held until the line decides.
        assert_eq!(f.push("``"), "");
        assert_eq!(f.push("`py"), "```py");
        assert_eq!(f.push("thon\n"), "thon\n");
        assert_eq!(f.push("x\n```\n"), "x\n```\n");
        assert_eq!(f.push("```vaultdm-"), "");
        assert_eq!(f.push("changes\n{\"a\""), "");
        assert_eq!(f.push(":1}\n``"), "");
        assert_eq!(f.push("`\nDone."), "Done.");
        assert_eq!(f.finish(), (String::new(), vec!["{\"a\":1}\n".to_owned()]));
    }

    #[test]
    fn held_line_is_released_when_it_cannot_open() {
        let mut f = FenceFilter::new();
        assert_eq!(f.push("~~~vault"), "");
        assert_eq!(f.push("dm-notes"), "~~~vaultdm-notes");
        assert_eq!(f.push(" more"), " more");
    }

    /// Pieces that make fences, near-fences and prose likely.
    fn fragment() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "```vaultdm-changes\n",
            "~~~~ VaultDM-Changes json\n",
            "   ```vaultdm-changes",
            "    ```vaultdm-changes\n",
            "```vaultdm-changesx\n",
            "```python\n",
            "```\n",
            "````\n",
            "~~~\n",
            "~~~~~",
            "``",
            "`",
            "~",
            "  ",
            "\n",
            "\r\n",
            "\n\n",
            "The ogre falls. ",
            "{\"hp\": -7}",
            "é🐉",
            "vaultdm",
            "-changes",
        ])
    }

    fn text_and_cuts() -> impl Strategy<Value = (String, Vec<usize>)> {
        (
            prop::collection::vec(fragment(), 0..24).prop_map(|v| v.concat()),
            prop::collection::vec(any::<usize>(), 0..12),
        )
    }

    /// Split `text` at the given positions (taken modulo its length, moved to char
    /// boundaries).
    fn chunks(text: &str, cuts: &[usize]) -> Vec<String> {
        let mut at: Vec<usize> = cuts
            .iter()
            .map(|c| {
                let mut i = c % (text.len() + 1);
                while !text.is_char_boundary(i) {
                    i -= 1;
                }
                i
            })
            .collect();
        at.push(0);
        at.push(text.len());
        at.sort_unstable();
        at.dedup();
        at.windows(2).map(|w| text[w[0]..w[1]].to_owned()).collect()
    }

    proptest! {
        #[test]
        fn streaming_equals_strip_for_any_chunking((text, cuts) in text_and_cuts()) {
            let mut f = FenceFilter::new();
            let mut shown = String::new();
            for c in chunks(&text, &cuts) {
                shown.push_str(&f.push(&c));
                // What was shown is always a prefix of the final prose.
                prop_assert!(strip_fenced(&text).0.starts_with(&shown));
            }
            let (rest, blocks) = f.finish();
            shown.push_str(&rest);
            let (stripped, want_blocks) = strip_fenced(&text);
            prop_assert_eq!(&shown, &stripped);
            prop_assert_eq!(&blocks, &want_blocks);
            let (prose, split_blocks) = split_fenced(&text);
            prop_assert_eq!(&split_blocks, &want_blocks);
            if want_blocks.is_empty() {
                prop_assert_eq!(&prose, &text);
            }
            // Collapsing only drops blank lines: the rest of the stripped text is all there.
            let squeeze = |t: &str| t.split_whitespace().collect::<String>();
            prop_assert_eq!(squeeze(&prose), squeeze(&stripped));
            prop_assert!(prose.len() <= stripped.len());
        }

        #[test]
        fn text_without_fence_characters_passes_at_once(
            parts in prop::collection::vec("[a-zA-Z0-9.,!é🐉\n]{0,12}", 0..12)
        ) {
            let mut f = FenceFilter::new();
            for p in &parts {
                prop_assert_eq!(&f.push(p), p);
            }
            prop_assert_eq!(f.finish(), (String::new(), Vec::new()));
        }

        #[test]
        fn held_back_text_is_at_most_the_current_line((text, cuts) in text_and_cuts()) {
            let mut f = FenceFilter::new();
            let mut fed = String::new();
            let mut shown = String::new();
            for c in chunks(&text, &cuts) {
                fed.push_str(&c);
                shown.push_str(&f.push(&c));
                if f.mode == Mode::Prose {
                    // Everything before the current line has been decided.
                    let line_start = fed.rfind('\n').map_or(0, |i| i + 1);
                    let decided = strip_fenced(&fed[..line_start]).0;
                    prop_assert!(shown.starts_with(&decided));
                }
            }
        }
    }
}
