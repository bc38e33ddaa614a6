//! A small, incremental Server-Sent Events decoder.
//!
//! Both providers stream their replies as SSE. Network chunks arrive split at arbitrary byte
//! boundaries — inside a UTF-8 character, between `\r` and `\n`, in the middle of a field
//! name — so the decoder buffers raw bytes and only decodes whole lines. It follows the
//! WHATWG event-stream rules (lines end in `\r\n`, `\n` or `\r`; `:` starts a comment;
//! multi-line `data:` fields join with `\n`; a blank line dispatches the event), and is
//! forgiving where servers are sloppy: [`SseDecoder::finish`] still delivers a last event that
//! was not followed by a blank line, so a reply is never lost to a missing terminator.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct SseEvent {
    /// The `event:` field, if the server sent one.
    pub event: Option<String>,
    /// All `data:` lines joined with `\n`.
    pub data: String,
    /// The `id:` field, if any.
    pub id: Option<String>,
}

/// Incremental decoder: feed chunks with [`push`](Self::push), then call
/// [`finish`](Self::finish) at end of stream.
#[derive(Debug)]
pub(crate) struct SseDecoder {
    /// Bytes of the current, not yet terminated line.
    line: Vec<u8>,
    /// The previous chunk ended in `\r`: a leading `\n` in the next chunk belongs to it.
    after_cr: bool,
    /// The next line ended is the stream's first (a UTF-8 BOM may lead it).
    first_line: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
    id: Option<String>,
    comments: u64,
}

impl Default for SseDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl SseDecoder {
    /// A fresh decoder.
    pub(crate) fn new() -> Self {
        Self {
            line: Vec::new(),
            after_cr: false,
            first_line: true,
            event: None,
            data: String::new(),
            has_data: false,
            id: None,
            comments: 0,
        }
    }

    #[cfg(test)]
    /// How many `:` comment lines (keep-alives) have been seen so far.
    pub(crate) fn comments_seen(&self) -> u64 {
        self.comments
    }

    /// Feed one network chunk; returns the events it completed, in order.
    pub(crate) fn push(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        for &b in chunk {
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\n' => self.end_line(&mut out),
                b'\r' => {
                    self.after_cr = true;
                    self.end_line(&mut out);
                }
                _ => self.line.push(b),
            }
        }
        out
    }

    /// End of stream: process an unterminated last line and deliver a pending event even
    /// without its closing blank line.
    pub(crate) fn finish(&mut self) -> Vec<SseEvent> {
        let mut out = Vec::new();
        if !self.line.is_empty() {
            self.end_line(&mut out);
        }
        self.dispatch(&mut out);
        out
    }

    fn end_line(&mut self, out: &mut Vec<SseEvent>) {
        let mut line = std::mem::take(&mut self.line);
        if self.first_line {
            self.first_line = false;
            if line.starts_with(b"\xEF\xBB\xBF") {
                line.drain(..3);
            }
        }
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        let text = String::from_utf8_lossy(&line);
        if text.starts_with(':') {
            self.comments += 1;
            return;
        }
        let (field, value) = match text.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (text.as_ref(), ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = Some(value.to_owned()),
            "id" if !value.contains('\0') => self.id = Some(value.to_owned()),
            _ => {} // `retry` and unknown fields are ignored
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        if !self.has_data {
            // Per spec an event without data is not dispatched; reset the event type.
            self.event = None;
            return;
        }
        out.push(SseEvent {
            event: self.event.take(),
            data: std::mem::take(&mut self.data),
            id: self.id.clone(),
        });
        self.has_data = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rstest::rstest;

    fn decode_all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        for c in chunks {
            out.extend(d.push(c));
        }
        out.extend(d.finish());
        out
    }

    fn ev(event: Option<&str>, data: &str) -> SseEvent {
        SseEvent {
            event: event.map(str::to_owned),
            data: data.to_owned(),
            id: None,
        }
    }

    #[rstest]
    #[case::lf("data: a\n\ndata: b\n\n", vec![ev(None, "a"), ev(None, "b")])]
    #[case::crlf("data: a\r\n\r\ndata: b\r\n\r\n", vec![ev(None, "a"), ev(None, "b")])]
    #[case::cr("data: a\r\rdata: b\r\r", vec![ev(None, "a"), ev(None, "b")])]
    #[case::multiline("data: one\ndata: two\n\n", vec![ev(None, "one\ntwo")])]
    #[case::no_space("data:x\n\n", vec![ev(None, "x")])]
    #[case::two_spaces("data:  x\n\n", vec![ev(None, " x")])]
    #[case::comment(": keep-alive\n\ndata: x\n\n", vec![ev(None, "x")])]
    #[case::event("event: ping\ndata: {}\n\n", vec![ev(Some("ping"), "{}")])]
    #[case::event_without_data("event: ping\n\ndata: x\n\n", vec![ev(None, "x")])]
    #[case::unterminated("data: [DONE]", vec![ev(None, "[DONE]")])]
    #[case::no_blank_line("data: [DONE]\n", vec![ev(None, "[DONE]")])]
    #[case::bom("\u{FEFF}data: x\n\n", vec![ev(None, "x")])]
    #[case::unknown_field("retry: 10\nfoo: bar\ndata: x\n\n", vec![ev(None, "x")])]
    #[case::empty_data("data:\n\n", vec![ev(None, "")])]
    fn decodes(#[case] input: &str, #[case] expected: Vec<SseEvent>) {
        assert_eq!(decode_all(&[input.as_bytes()]), expected);
    }

    #[test]
    fn id_is_kept() {
        let events = decode_all(&[b"id: 7\ndata: x\n\n"]);
        assert_eq!(events[0].id.as_deref(), Some("7"));
    }

    #[test]
    fn counts_comments() {
        let mut d = SseDecoder::new();
        d.push(b": ping\n: ping\n\n");
        assert_eq!(d.comments_seen(), 2);
    }

    #[test]
    fn crlf_split_across_chunks_is_one_line_end() {
        let events = decode_all(&[b"data: a\r", b"\n", b"\r", b"\ndata: b\n\n"]);
        assert_eq!(events, vec![ev(None, "a"), ev(None, "b")]);
    }

    #[test]
    fn utf8_split_inside_a_character() {
        let s = "data: Dragón 🐉\n\n".as_bytes();
        let chunks: Vec<&[u8]> = s.chunks(1).collect();
        assert_eq!(decode_all(&chunks), vec![ev(None, "Dragón 🐉")]);
    }

    const SAMPLE: &str =
        "\u{FEFF}: hi\r\nevent: message_start\r\ndata: {\"a\":\"Zwölf 🐉\"}\r\n\r\n\
                          data: one\rdata: two\r\r: ka\n\ndata: x\ndata: y\n\nevent: e\ndata: z";

    proptest! {
        #[test]
        fn any_split_gives_the_same_events(cuts in proptest::collection::vec(0usize..200, 0..12)) {
            let bytes = SAMPLE.as_bytes();
            let whole = decode_all(&[bytes]);
            let mut points: Vec<usize> = cuts.into_iter().map(|c| c % (bytes.len() + 1)).collect();
            points.sort_unstable();
            let mut chunks: Vec<&[u8]> = Vec::new();
            let mut last = 0;
            for p in points {
                chunks.push(&bytes[last..p]);
                last = p;
            }
            chunks.push(&bytes[last..]);
            prop_assert_eq!(decode_all(&chunks), whole);
        }

        #[test]
        fn data_roundtrips(lines in proptest::collection::vec("[^\r\n]{0,20}", 1..5)) {
            let mut wire = String::new();
            for l in &lines {
                wire.push_str("data:");
                wire.push_str(l);
                wire.push('\n');
            }
            wire.push('\n');
            let expected: Vec<String> = lines.iter().map(|l| l.strip_prefix(' ').unwrap_or(l).to_owned()).collect();
            let events = decode_all(&[wire.as_bytes()]);
            prop_assert_eq!(events.len(), 1);
            prop_assert_eq!(&events[0].data, &expected.join("\n"));
        }
    }

    #[test]
    fn every_byte_split_of_sample() {
        let bytes = SAMPLE.as_bytes();
        let whole = decode_all(&[bytes]);
        assert_eq!(whole.len(), 4);
        for i in 0..=bytes.len() {
            assert_eq!(
                decode_all(&[&bytes[..i], &bytes[i..]]),
                whole,
                "split at {i}"
            );
        }
        let singles: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(decode_all(&singles), whole);
    }
}
