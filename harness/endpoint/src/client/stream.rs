//! Streamed replies: the SSE read loop and the accumulator that builds a reply chunk by chunk.

use std::time::Instant;

use serde_json::Value;

use super::reply::{server_timings, usage_of};
use super::transport::{Idle, after, ran_out, refusal, too_large};
use super::{Client, Shape, another_model, clip, millis, millis_at};
use crate::sse;
use crate::types::*;

impl Client {
    /// Read an SSE reply. It is complete when `[DONE]` arrived, or when its
    /// finish reason arrived and the connection then closed cleanly; the
    /// usage chunk, the `[DONE]` line, a role-only first chunk and
    /// keep-alive comments are each optional. Until the first event that
    /// carries something (content, a tool call, the finish reason, the
    /// counts) the head limit from the send applies, to silence and
    /// comments alike; after it the idle limit counts from the last such
    /// event: comments alone are a stall.
    pub(super) async fn read_stream(
        &self,
        mut resp: reqwest::Response,
        started: Instant,
        shape: Shape,
    ) -> Result<Reply, CallError> {
        let cfg = &self.config;
        let mut parser = sse::Parser::new(cfg.max_event_bytes);
        let mut acc = StreamAcc { client: Some(self), ..StreamAcc::default() };
        let mut events = Vec::new();
        let mut read = 0usize;
        let mut done = false;
        // The head and the first content share one limit from the send:
        // a server may spend its prefill before the head or after it,
        // silent or sending keep-alive comments, and is judged alike.
        let mut idle =
            Idle::stream(cfg.timeouts.idle, after(started, cfg.timeouts.head), after(started, cfg.timeouts.request));
        while !done {
            let chunk = match idle.next(&mut resp).await {
                None if idle.ran_out() => return Err(ran_out(cfg.timeouts, read)),
                None if !idle.started() => {
                    return Err(CallError::lost(format!(
                        "no content within {:.0} s of the send (head-timeout-secs bounds the head and the first content together) after {read} bytes and {} keep-alive comments",
                        cfg.timeouts.head.as_secs_f64(),
                        parser.comments
                    )));
                }
                None => {
                    return Err(CallError::lost(format!(
                        "stream stalled: no content for {:.0} s (idle-timeout-secs) after {read} bytes, {} content chunks and {} keep-alive comments",
                        cfg.timeouts.idle.as_secs_f64(),
                        acc.arrivals.len(),
                        parser.comments
                    )));
                }
                Some(Err(err)) => return Err(self.lost(err)),
                Some(Ok(None)) => {
                    if parser.finish(&mut events) {
                        acc.cut_line = true;
                    }
                    for event in events.drain(..) {
                        done |= acc.event(&event.data, millis(started), shape)?;
                    }
                    break;
                }
                Some(Ok(Some(chunk))) => chunk,
            };
            // One clock read a chunk: its arrival time, and the idle limit's.
            let now = Instant::now();
            let at = millis_at(started, now);
            read += chunk.len();
            if read > cfg.max_reply_bytes {
                return Err(too_large(cfg.max_reply_bytes));
            }
            parser.push(&chunk, &mut events).map_err(|err| CallError::lost(format!("reply too large: {err}")))?;
            let before = acc.progress();
            for event in events.drain(..) {
                if acc.event(&event.data, at, shape)? {
                    done = true;
                    break;
                }
            }
            if acc.progress() != before {
                idle.progress(now);
            }
        }
        if !done && acc.finish_reason.is_none() {
            return Err(CallError::lost(format!(
                "stream cut before its finish reason after {} content chunks{}",
                acc.arrivals.len(),
                if acc.cut_line { " (the last line was cut short)" } else { "" }
            )));
        }
        Ok(acc.finish())
    }
}

/// Accumulates a streamed reply chunk by chunk.
#[derive(Default)]
struct StreamAcc<'c> {
    /// Whose model every chunk must name (none: any, in unit tests).
    client: Option<&'c Client>,
    /// The first chunk's model that is not the client's.
    another_model: Option<String>,
    /// How the stream broke the protocol, if it did.
    broken: Option<String>,
    text: String,
    reasoning: Option<String>,
    /// Tool calls by their delta index, and where each index sits.
    calls: Vec<(u64, ToolCall)>,
    call_slots: std::collections::HashMap<u64, usize>,
    finish_reason: Option<String>,
    model: Option<String>,
    usage: Option<Usage>,
    timing: Timing,
    arrivals: Vec<f64>,
    /// The stream ended inside a line.
    cut_line: bool,
    /// The stream named more tool calls than [`MAX_TOOL_CALLS`].
    too_many_calls: bool,
}

/// More tool calls in one reply than any agent makes: a hostile stream.
const MAX_TOOL_CALLS: usize = 1024;

/// A stream chunk as most are: text, and maybe the finish reason. Anything
/// else present (usage, timings, tool calls, an error) sends the chunk down
/// the general path.
#[derive(serde::Deserialize)]
struct FastChunk<'a> {
    #[serde(borrow, default)]
    model: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    choices: FirstChoice<'a>,
    #[serde(default)]
    usage: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    timings: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    error: Option<serde::de::IgnoredAny>,
}

/// The first of a chunk's choices, the others skipped unread: both paths
/// read only the first (`/choices/0`), and a `Vec` cost an allocation per
/// chunk.
#[derive(Default)]
struct FirstChoice<'a>(Option<FastChoice<'a>>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for FirstChoice<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        struct First<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for First<'a> {
            type Value = FirstChoice<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of choices")
            }
            fn visit_seq<S: serde::de::SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
                let first = seq.next_element()?;
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(FirstChoice(first))
            }
        }
        de.deserialize_seq(First(std::marker::PhantomData))
    }
}

#[derive(serde::Deserialize)]
struct FastChoice<'a> {
    #[serde(borrow, default)]
    delta: Option<FastDelta<'a>>,
    #[serde(borrow, default)]
    text: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    finish_reason: Option<std::borrow::Cow<'a, str>>,
}

#[derive(serde::Deserialize)]
struct FastDelta<'a> {
    #[serde(borrow, default)]
    content: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    reasoning_content: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    reasoning: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    tool_calls: Option<serde::de::IgnoredAny>,
}

impl FastChunk<'_> {
    fn plain(&self) -> bool {
        self.usage.is_none()
            && self.timings.is_none()
            && self.error.is_none()
            && self.choices.0.as_ref().is_none_or(|c| c.delta.as_ref().is_none_or(|d| d.tool_calls.is_none()))
    }
}

impl StreamAcc<'_> {
    /// A figure that grows with everything a stream can carry: what the
    /// idle limit counts as progress.
    fn progress(&self) -> (usize, usize, usize, bool, bool) {
        (
            self.arrivals.len(),
            self.calls.iter().map(|(_, c)| c.arguments.len() + c.name.len()).sum(),
            self.reasoning.as_ref().map_or(0, String::len),
            self.finish_reason.is_some(),
            self.usage.is_some(),
        )
    }

    /// Take one event's data; true when it was the `[DONE]` sentinel.
    fn event(&mut self, data: &str, at: f64, shape: Shape) -> Result<bool, CallError> {
        let data = data.trim();
        if data == "[DONE]" {
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        // Most chunks carry a few characters of text and nothing else: read
        // those into borrowed fields without building a JSON tree.
        if let Ok(fast) = serde_json::from_str::<FastChunk<'_>>(data)
            && fast.plain()
        {
            self.fast(fast, at, shape);
            return self.checked();
        }
        let value: Value = serde_json::from_str(data)
            .map_err(|err| CallError::lost(format!("malformed JSON in a stream chunk ({err}): {}", clip(data))))?;
        if let Some(err) = value.get("error").filter(|e| !e.is_null()) {
            // vLLM reports some request errors after the stream started,
            // with their HTTP code: a 4xx there is still a clean refusal.
            let code = err.get("code").and_then(Value::as_u64).and_then(|c| u16::try_from(c).ok());
            if let Some(status) = code.filter(|s| refusal(*s)) {
                return Err(CallError::Rejected { status, body: clip(&err.to_string()), attempts: 1 });
            }
            // A 5xx said mid-stream (llama.cpp: a tool call its template
            // could not parse) is the same answer as that status before the
            // stream: no answer, unless the engine reads it otherwise.
            if let Some(status @ 500..=599) = code {
                return Err(CallError::Unanswered {
                    status,
                    body: format!("the server reported an error mid-stream: {}", clip(&err.to_string())),
                    attempts: 1,
                });
            }
            return Err(CallError::lost(format!(
                "the server reported an error mid-stream: {}",
                clip(&err.to_string())
            )));
        }
        self.chunk(&value, at, shape);
        if self.too_many_calls {
            return Err(CallError::lost(format!("reply too large: more than {MAX_TOOL_CALLS} tool calls")));
        }
        self.checked()
    }

    /// After a chunk: lost if it named another model than the client's,
    /// or broke the protocol.
    fn checked(&mut self) -> Result<bool, CallError> {
        if let Some(name) = self.another_model.take() {
            return Err(another_model(&name));
        }
        match self.broken.take() {
            Some(why) => Err(CallError::lost(format!("protocol break: {why}"))),
            None => Ok(false),
        }
    }

    /// A finish reason. The first ends the reply; the same one again says
    /// nothing new (a usage chunk may repeat it); another one is a break:
    /// the reply would silently change from stop to length.
    fn finished(&mut self, reason: &str) {
        match &self.finish_reason {
            None => self.finish_reason = Some(reason.to_string()),
            Some(first) if first == reason => {}
            Some(first) => {
                let why = format!("a second finish reason ({}) after the first ({})", clip(reason), clip(first));
                self.broken.get_or_insert(why);
            }
        }
    }

    /// Content, reasoning or a tool call after the finish reason: never
    /// appended (a duplicated chunk would double the text), and a break.
    fn content_after_finish(&mut self) {
        self.broken.get_or_insert_with(|| "content after the finish reason".to_string());
    }

    /// A chunk's `model`: every chunk's is checked, not only the first
    /// (a gateway may fall back mid-stream).
    fn saw_model(&mut self, name: &str) {
        if self.model.is_none() {
            self.model = Some(name.to_string());
        }
        if !name.is_empty() && self.client.is_some_and(|c| !c.serves(name)) {
            self.another_model.get_or_insert_with(|| name.to_string());
        }
    }

    /// The same as [`StreamAcc::chunk`] for a plain chunk.
    fn fast(&mut self, f: FastChunk<'_>, at: f64, shape: Shape) {
        if let Some(name) = &f.model {
            self.saw_model(name);
        }
        let Some(choice) = f.choices.0 else {
            return;
        };
        let late = self.finish_reason.is_some();
        if let Some(reason) = choice.finish_reason {
            self.finished(&reason);
        }
        let mut carries = false;
        match shape {
            Shape::Chat => {
                let Some(delta) = choice.delta else { return };
                let reasoning = delta.reasoning_content.or(delta.reasoning).filter(|t| !t.is_empty());
                let content = delta.content.filter(|t| !t.is_empty());
                if late && (content.is_some() || reasoning.is_some()) {
                    return self.content_after_finish();
                }
                if let Some(text) = content {
                    self.text.push_str(&text);
                    carries = true;
                }
                if let Some(text) = reasoning {
                    self.reasoning.get_or_insert_with(String::new).push_str(&text);
                    carries = true;
                }
            }
            Shape::Completion => {
                if let Some(text) = choice.text.filter(|t| !t.is_empty()) {
                    if late {
                        return self.content_after_finish();
                    }
                    self.text.push_str(&text);
                    carries = true;
                }
            }
        }
        if carries {
            self.arrivals.push(at);
        }
    }

    fn chunk(&mut self, value: &Value, at: f64, shape: Shape) {
        if let Some(name) = value.get("model").and_then(Value::as_str) {
            self.saw_model(name);
        }
        if let Some(usage) = usage_of(value) {
            // The usage chunk comes last; a later one replaces an earlier one.
            self.usage = Some(usage);
        }
        server_timings(value, &mut self.timing);
        let Some(choice) = value.pointer("/choices/0") else {
            return;
        };
        let late = self.finish_reason.is_some();
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finished(reason);
        }
        let mut carries = false;
        match shape {
            Shape::Chat => {
                let Some(delta) = choice.get("delta") else {
                    return;
                };
                let content = delta.get("content").and_then(Value::as_str).filter(|t| !t.is_empty());
                let reasoning = delta.get("reasoning_content").or_else(|| delta.get("reasoning"));
                let reasoning = reasoning.and_then(Value::as_str).filter(|t| !t.is_empty());
                let calls = delta.get("tool_calls").and_then(Value::as_array).filter(|c| !c.is_empty());
                if late && (content.is_some() || reasoning.is_some() || calls.is_some()) {
                    return self.content_after_finish();
                }
                if let Some(text) = content {
                    self.text.push_str(text);
                    carries = true;
                }
                if let Some(text) = reasoning {
                    self.reasoning.get_or_insert_with(String::new).push_str(text);
                    carries = true;
                }
                if let Some(calls) = calls {
                    for (pos, c) in calls.iter().enumerate() {
                        carries = true;
                        let index = c.get("index").and_then(Value::as_u64).unwrap_or(pos as u64);
                        let slot = match self.call_slots.get(&index) {
                            Some(slot) => *slot,
                            None if self.calls.len() >= MAX_TOOL_CALLS => {
                                self.too_many_calls = true;
                                continue;
                            }
                            None => {
                                self.calls.push((
                                    index,
                                    ToolCall { id: String::new(), name: String::new(), arguments: String::new() },
                                ));
                                self.call_slots.insert(index, self.calls.len() - 1);
                                self.calls.len() - 1
                            }
                        };
                        let call = &mut self.calls[slot].1;
                        if let Some(id) = c.get("id").and_then(Value::as_str) {
                            call.id = id.to_string();
                        }
                        if let Some(name) = c.pointer("/function/name").and_then(Value::as_str) {
                            call.name.push_str(name);
                        }
                        if let Some(args) = c.pointer("/function/arguments").and_then(Value::as_str) {
                            call.arguments.push_str(args);
                        }
                    }
                }
            }
            Shape::Completion => {
                if let Some(text) = choice.get("text").and_then(Value::as_str).filter(|t| !t.is_empty()) {
                    if late {
                        return self.content_after_finish();
                    }
                    self.text.push_str(text);
                    carries = true;
                }
            }
        }
        if carries {
            self.arrivals.push(at);
        }
    }

    fn finish(self) -> Reply {
        let mut timing = self.timing;
        timing.ttft_ms = self.arrivals.first().copied();
        // Decode time is first to last content chunk: one chunk has none
        // (not a decode of 0 ms, which would make a rate infinite).
        timing.decode_ms = match self.arrivals.as_slice() {
            [first, .., last] => Some(last - first),
            _ => None,
        };
        timing.chunk_arrivals_ms = self.arrivals;
        let mut calls = self.calls;
        calls.sort_by_key(|(i, _)| *i);
        Reply {
            text: self.text,
            reasoning: self.reasoning,
            tool_calls: calls.into_iter().map(|(_, c)| c).collect(),
            finish_reason: self.finish_reason,
            model: self.model,
            usage: self.usage.unwrap_or_default(),
            timing,
            status: 0,
            attempts: 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The typed fast path reads a plain chunk exactly as the JSON-tree path
    /// does, and leaves every other chunk to it.
    #[test]
    fn fast_path_matches_general_path() {
        let chunks = [
            r#"{"id":"x","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}]}"#,
            r#"{"model":"m","choices":[{"index":0,"delta":{"content":"Hi \"you\" \u00e9"},"finish_reason":null}]}"#,
            r#"{"model":"m","choices":[{"index":0,"delta":{"reasoning_content":"hm"}}]}"#,
            r#"{"model":"m","choices":[{"index":0,"delta":{"reasoning":" ok"}}]}"#,
            r#"{"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{}"}}]}}]}"#,
            r#"{"model":7,"choices":[{"delta":{"content":"odd model"}}]}"#,
            // Only the first choice counts, on both paths: a second one,
            // with a tool call or not a choice at all, adds nothing.
            r#"{"model":"m","choices":[{"delta":{"content":" two"}},{"delta":{"tool_calls":[{"index":0,"id":"d","function":{"name":"g","arguments":"{}"}}]}},7]}"#,
            r#"{"model":"m","choices":[{"delta":{"content":","}},"not a choice"]}"#,
            r#"{"model":"m","choices":[{"index":0,"delta":{"content":"!"},"finish_reason":"stop"}],"error":null}"#,
            r#"{"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2},"timings":{"prompt_ms":1.5,"predicted_ms":2.5}}"#,
        ];
        let mut fast = StreamAcc::default();
        let mut tree = StreamAcc::default();
        for (i, data) in chunks.iter().enumerate() {
            assert!(!fast.event(data, i as f64, Shape::Chat).expect("chunk"));
            tree.chunk(&serde_json::from_str(data).expect("json"), i as f64, Shape::Chat);
        }
        let (fast, tree) = (fast.finish(), tree.finish());
        assert_eq!(fast.text, tree.text);
        assert_eq!(fast.text, "Hi \"you\" \u{e9}odd model two,!");
        assert_eq!(fast.reasoning, tree.reasoning);
        assert_eq!(fast.reasoning.as_deref(), Some("hm ok"), "both spellings of the reasoning field");
        assert_eq!(fast.tool_calls, tree.tool_calls);
        assert_eq!(fast.tool_calls.len(), 1);
        assert_eq!(fast.finish_reason, tree.finish_reason);
        assert_eq!(fast.model, tree.model);
        assert_eq!(fast.usage, tree.usage);
        assert_eq!(fast.usage.completion_tokens, Some(2));
        assert_eq!(fast.timing.server_decode_ms, Some(2.5));
        assert_eq!(fast.timing.chunk_arrivals_ms, tree.timing.chunk_arrivals_ms);
        // A chunk that is an error is never taken as plain text.
        let mut acc = StreamAcc::default();
        assert!(acc.event(r#"{"error":{"message":"boom"},"choices":[]}"#, 0.0, Shape::Chat).is_err());
        // llama.cpp's own words for a tool call it could not parse, after
        // the tool-call deltas of a 200 stream: the status it names.
        let peg = r#"{"error":{"code":500,"message":"The model produced output that does not match the expected peg-native format","type":"server_error"}}"#;
        match StreamAcc::default().event(peg, 0.0, Shape::Chat) {
            Err(CallError::Unanswered { status: 500, body, .. }) => assert!(body.contains("peg-native"), "{body}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn role_only_chunk_does_not_start_ttft() {
        let mut acc = StreamAcc::default();
        acc.chunk(&json!({"choices":[{"delta":{"role":"assistant","content":null}}]}), 5.0, Shape::Chat);
        acc.chunk(&json!({"choices":[{"delta":{"content":"Hi"}}]}), 9.0, Shape::Chat);
        acc.chunk(&json!({"choices":[{"delta":{"content":" there"},"finish_reason":"stop"}]}), 12.0, Shape::Chat);
        let reply = acc.finish();
        assert_eq!(reply.text, "Hi there");
        assert_eq!(reply.timing.ttft_ms, Some(9.0));
        assert_eq!(reply.timing.decode_ms, Some(3.0));
        assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
    }

    #[test]
    fn tool_calls_assemble_from_deltas() {
        let mut acc = StreamAcc::default();
        acc.chunk(&json!({"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"get_weather","arguments":"{\"ci"}}]}}]}), 1.0, Shape::Chat);
        acc.chunk(&json!({"choices":[{"delta":{"tool_calls":[{"index":1,"id":"c2","function":{"name":"get_time","arguments":"{}"}}]}}]}), 2.0, Shape::Chat);
        acc.chunk(
            &json!({"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ty\":\"Oslo\"}"}}]}}]}),
            3.0,
            Shape::Chat,
        );
        let reply = acc.finish();
        assert_eq!(reply.tool_calls.len(), 2);
        assert_eq!(reply.tool_calls[0].name, "get_weather");
        assert_eq!(reply.tool_calls[0].arguments, "{\"city\":\"Oslo\"}");
        assert_eq!(reply.tool_calls[1].id, "c2");
        assert_eq!(reply.timing.ttft_ms, Some(1.0));
    }
}
