//! Server-sent events from a byte stream, via the `eventsource-stream` crate.
//!
//! Engines have been seen to cut a multi-byte character across chunks and,
//! when broken, to send invalid UTF-8. `eventsource-stream` wants valid UTF-8,
//! so bytes pass through [`Utf8Repair`] first: a character split across
//! chunks is joined, and invalid bytes become U+FFFD, which the corruption
//! instrument then sees in the reply instead of the whole call failing.

use bytes::Bytes;
use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures_util::{Stream, StreamExt};

/// Joins characters split across chunks and replaces invalid bytes.
#[derive(Default, Debug)]
pub struct Utf8Repair {
    pending: Vec<u8>,
    /// How many invalid sequences were replaced.
    pub replaced: usize,
}

impl Utf8Repair {
    /// Feed one chunk; returns the valid text it completes.
    pub fn push(&mut self, chunk: &[u8]) -> String {
        let mut buf = std::mem::take(&mut self.pending);
        buf.extend_from_slice(chunk);
        let mut out = String::with_capacity(buf.len());
        let mut rest = &buf[..];
        loop {
            match std::str::from_utf8(rest) {
                Ok(valid) => {
                    out.push_str(valid);
                    break;
                }
                Err(err) => {
                    let (valid, after) = rest.split_at(err.valid_up_to());
                    // SAFETY-free: `valid` was just checked by from_utf8.
                    out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                    match err.error_len() {
                        Some(len) => {
                            out.push('\u{FFFD}');
                            self.replaced += 1;
                            rest = &after[len..];
                        }
                        None => {
                            // An incomplete character at the end: wait for more.
                            self.pending = after.to_vec();
                            break;
                        }
                    }
                }
            }
        }
        out
    }

    /// Bytes of an incomplete character still waiting at the end.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }
}

/// Turn an HTTP body stream into SSE events, repairing UTF-8 on the way.
pub fn events<S, E>(body: S) -> impl Stream<Item = Result<Event, EventStreamError<E>>>
where
    S: Stream<Item = Result<Bytes, E>>,
{
    let mut repair = Utf8Repair::default();
    body.map(move |chunk| chunk.map(|bytes| Bytes::from(repair.push(&bytes)))).eventsource()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_a_character_split_across_chunks() {
        let bytes = "日本".as_bytes();
        let mut r = Utf8Repair::default();
        let a = r.push(&bytes[..2]);
        assert_eq!(a, "");
        assert_eq!(r.pending(), 2);
        let b = r.push(&bytes[2..]);
        assert_eq!(format!("{a}{b}"), "日本");
        assert_eq!(r.replaced, 0);
    }

    #[test]
    fn replaces_invalid_bytes() {
        let mut r = Utf8Repair::default();
        assert_eq!(r.push(b"a\xffb\xc3("), "a\u{FFFD}b\u{FFFD}(");
        assert_eq!(r.replaced, 2);
    }

    #[tokio::test]
    async fn parses_events_across_odd_chunk_boundaries() {
        let text = "data: {\"a\":\"é\"}\n\ndata: [DONE]\n\n".as_bytes();
        let chunks: Vec<Result<Bytes, std::convert::Infallible>> =
            text.chunks(3).map(|c| Ok(Bytes::copy_from_slice(c))).collect();
        let got: Vec<String> = events(futures_util::stream::iter(chunks))
            .map(|e| e.unwrap().data)
            .collect()
            .await;
        assert_eq!(got, vec!["{\"a\":\"é\"}".to_string(), "[DONE]".to_string()]);
    }
}
