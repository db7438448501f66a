//! Server-sent events, parsed incrementally in linear time.
//!
//! Why not a crate: `eventsource-stream` (used until format 1.2) re-parses
//! its whole pending buffer on every read, so one large event arriving in
//! many reads costs time quadratic in its size (a 4 MiB event parsed about
//! 100× slower per byte than 4 KiB ones; `docs/benchmarks.md`). This parser
//! scans every byte once: it remembers how far it has looked for a line end,
//! and keeps the fields of the event being built as it goes.
//!
//! It follows the WHATWG rules the OpenAI-style engines rely on: lines end in
//! LF, CR or CRLF; `data:` lines accumulate (joined by LF); a blank line
//! dispatches the event; lines starting with `:` are comments (keep-alives);
//! `event:`, `id:` and `retry:` are read and ignored. Bytes that are not
//! UTF-8 become U+FFFD when the event is dispatched, so a character split
//! across reads survives and a broken engine's bytes show up in the reply
//! instead of failing the call.

/// Why the stream could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SseError {
    /// One event grew past the cap, in bytes.
    EventTooLarge {
        /// The cap.
        limit: usize,
    },
}

impl std::fmt::Display for SseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SseError::EventTooLarge { limit } => {
                write!(f, "one server-sent event is larger than {limit} bytes")
            }
        }
    }
}

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The `data` lines, joined by LF.
    pub data: String,
}

/// An incremental parser: feed it bytes as they arrive.
#[derive(Debug)]
pub struct Parser {
    buf: Vec<u8>,
    /// Start of the first unconsumed line in `buf`.
    start: usize,
    /// Up to here, `buf[start..]` holds no line end.
    scanned: usize,
    data: Vec<u8>,
    has_data: bool,
    max_event: usize,
    /// Comment lines seen (keep-alives).
    pub comments: usize,
}

impl Parser {
    /// A parser refusing events larger than `max_event` bytes.
    pub fn new(max_event: usize) -> Self {
        Parser { buf: Vec::new(), start: 0, scanned: 0, data: Vec::new(), has_data: false, max_event, comments: 0 }
    }

    /// Feed bytes; every event they complete is pushed to `out`.
    pub fn push(&mut self, bytes: &[u8], out: &mut Vec<Event>) -> Result<(), SseError> {
        self.buf.extend_from_slice(bytes);
        loop {
            let Some(rel) = memchr::memchr2(b'\n', b'\r', &self.buf[self.scanned..]) else {
                self.scanned = self.buf.len();
                break;
            };
            let end = self.scanned + rel;
            // A CR at the very end may be the first half of a CRLF.
            let skip = if self.buf[end] == b'\r' {
                match self.buf.get(end + 1) {
                    Some(b'\n') => 2,
                    Some(_) => 1,
                    None => {
                        self.scanned = end;
                        break;
                    }
                }
            } else {
                1
            };
            let (start, next) = (self.start, end + skip);
            self.start = next;
            self.scanned = next;
            self.line(start, end, out);
        }
        // Compact once the consumed prefix dominates: amortised linear.
        if self.start > 0 && self.start * 2 >= self.buf.len() {
            self.buf.drain(..self.start);
            self.scanned -= self.start;
            self.start = 0;
        }
        if self.data.len() + (self.buf.len() - self.start) > self.max_event {
            return Err(SseError::EventTooLarge { limit: self.max_event });
        }
        Ok(())
    }

    /// The stream ended: dispatch what complete lines have built (a server
    /// that closes without the final blank line), and say whether a partial
    /// line was left over.
    pub fn finish(&mut self, out: &mut Vec<Event>) -> bool {
        // A CR held back as a possible CRLF ends its line after all.
        if self.buf.last() == Some(&b'\r') && self.start < self.buf.len() {
            let (start, end) = (self.start, self.buf.len() - 1);
            self.start = self.buf.len();
            self.line(start, end, out);
        }
        let partial = self.start < self.buf.len();
        if self.has_data {
            self.dispatch(out);
        }
        partial
    }

    fn line(&mut self, start: usize, end: usize, out: &mut Vec<Event>) {
        let line = &self.buf[start..end];
        if line.is_empty() {
            if self.has_data {
                self.dispatch(out);
            }
            return;
        }
        if line[0] == b':' {
            self.comments += 1;
            return;
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        if field == b"data" {
            if self.has_data {
                self.data.push(b'\n');
            }
            self.data.extend_from_slice(value);
            self.has_data = true;
        }
    }

    fn dispatch(&mut self, out: &mut Vec<Event>) {
        let data = match String::from_utf8(std::mem::take(&mut self.data)) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        };
        self.has_data = false;
        out.push(Event { data });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_in(chunks: &[&[u8]]) -> (Vec<String>, bool) {
        let mut p = Parser::new(1 << 20);
        let mut out = Vec::new();
        for c in chunks {
            p.push(c, &mut out).unwrap();
        }
        let partial = p.finish(&mut out);
        (out.into_iter().map(|e| e.data).collect(), partial)
    }

    #[test]
    fn events_across_odd_chunk_boundaries() {
        let text = "data: {\"a\":\"é\"}\n\ndata: [DONE]\n\n".as_bytes();
        for size in 1..text.len() {
            let chunks: Vec<&[u8]> = text.chunks(size).collect();
            assert_eq!(parse_in(&chunks).0, ["{\"a\":\"é\"}", "[DONE]"], "chunk size {size}");
        }
    }

    #[test]
    fn line_ends_comments_and_multiline_data() {
        let (events, partial) =
            parse_in(&[b": keep-alive\r\n\r\ndata:a\r\ndata: b\rid: 7\revent: x\r\r", b"data: c\n"]);
        assert_eq!(events, ["a\nb", "c"]);
        assert!(!partial);
        // A CR split from its LF across reads is one line end.
        assert_eq!(parse_in(&[b"data: x\r", b"\n\r", b"\n"]).0, ["x"]);
    }

    #[test]
    fn invalid_bytes_become_replacement_characters() {
        assert_eq!(parse_in(&[b"data: a\xffb\xc3(\n\n"]).0, ["a\u{FFFD}b\u{FFFD}("]);
        // A character split across reads is whole.
        let bytes = "data: 日本\n\n".as_bytes();
        assert_eq!(parse_in(&[&bytes[..8], &bytes[8..]]).0, ["日本"]);
    }

    #[test]
    fn a_partial_line_at_the_end_is_reported() {
        assert_eq!(parse_in(&[b"data: a\n\ndata: {\"cho"]), (vec!["a".to_string()], true));
    }

    #[test]
    fn an_event_past_the_cap_is_refused() {
        let mut p = Parser::new(16);
        let mut out = Vec::new();
        assert!(p.push(b"data: 0123456789", &mut out).is_ok());
        assert_eq!(p.push(b"0123456789", &mut out), Err(SseError::EventTooLarge { limit: 16 }));
        // Many small events pass the same cap.
        let mut p = Parser::new(16);
        for _ in 0..100 {
            p.push(b"data: 0123\n\n", &mut out).unwrap();
        }
        assert_eq!(out.len(), 100);
    }
}
