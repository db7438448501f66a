//! Whole (non-streamed) replies, and the token counts and server timings a stream reads too.

use serde_json::Value;

use super::{Shape, clip};
use crate::types::*;

/// Reads counts, noting every one that is present but not a count.
#[derive(Default)]
struct Counts(Vec<String>);

impl Counts {
    /// A count: a non-negative integer within u32 (no reply has more
    /// tokens). `null` or absent is no count; anything else is invalid.
    fn read(&mut self, name: &str, v: Option<&Value>) -> Option<u32> {
        match v {
            None | Some(Value::Null) => None,
            Some(v) => {
                let n = v.as_u64().and_then(|n| u32::try_from(n).ok());
                if n.is_none() {
                    self.0.push(format!("{name} = {}", clip(&v.to_string())));
                }
                n
            }
        }
    }

    fn finish(self, mut usage: Usage) -> Usage {
        if !self.0.is_empty() {
            usage.source = TokenSource::Invalid;
            usage.invalid = Some(self.0.join(", "));
        }
        usage
    }
}

/// Token counts: `usage` when present, else llama.cpp `timings`. A count
/// that is not one (-5, 1e300, "8", 10^12) is recorded as invalid, with
/// its value: never read as a count, never silently dropped.
pub(super) fn usage_of(value: &Value) -> Option<Usage> {
    let mut c = Counts::default();
    if let Some(u) = value.get("usage").filter(|u| u.is_object()) {
        let usage = Usage {
            prompt_tokens: c.read("prompt_tokens", u.get("prompt_tokens")),
            completion_tokens: c.read("completion_tokens", u.get("completion_tokens")),
            cached_tokens: c.read("cached_tokens", u.pointer("/prompt_tokens_details/cached_tokens")),
            source: TokenSource::ServerUsage,
            invalid: None,
        };
        return Some(c.finish(usage));
    }
    let t = value.get("timings").filter(|t| t.is_object())?;
    let cache = c.read("timings.cache_n", t.get("cache_n"));
    let usage = Usage {
        prompt_tokens: c.read("timings.prompt_n", t.get("prompt_n")).map(|n| n.saturating_add(cache.unwrap_or(0))),
        completion_tokens: c.read("timings.predicted_n", t.get("predicted_n")),
        cached_tokens: cache,
        source: TokenSource::ServerTimings,
        invalid: None,
    };
    Some(c.finish(usage))
}

/// The most completion tokens a request allows: its `max_tokens` (or
/// `max_completion_tokens`), times the choices it asks for (`n`,
/// `best_of`). None when it sets no cap.
pub(super) fn completion_cap(body: &Value) -> Option<u64> {
    let count = |key: &str| body.get(key).and_then(Value::as_u64);
    let cap = match (count("max_tokens"), count("max_completion_tokens")) {
        (Some(a), Some(b)) => a.max(b),
        (a, b) => a.or(b)?,
    };
    let choices = count("n").unwrap_or(1).max(count("best_of").unwrap_or(1)).max(1);
    Some(cap.saturating_mul(choices))
}

/// Counts the request makes impossible are invalid like the other absurd
/// ones, with their values and why: more completion tokens than the
/// request allowed (`cap`), a prompt longer than the server's context. A
/// rate built on them would be the server's error, not its speed.
pub(super) fn bound_counts(usage: &mut Usage, cap: Option<u64>, context: Option<u64>) {
    let timings = usage.source == TokenSource::ServerTimings;
    let mut wrong = Vec::new();
    if let (Some(n), Some(cap)) = (usage.completion_tokens, cap)
        && u64::from(n) > cap
    {
        let name = if timings { "timings.predicted_n" } else { "completion_tokens" };
        wrong.push(format!("{name} = {n} (more than the request's max_tokens, {cap})"));
        usage.completion_tokens = None;
    }
    if let (Some(n), Some(context)) = (usage.prompt_tokens, context)
        && u64::from(n) > context
    {
        let name = if timings { "timings.prompt_n + cache_n" } else { "prompt_tokens" };
        wrong.push(format!("{name} = {n} (more than the server's context, {context})"));
        usage.prompt_tokens = None;
    }
    if wrong.is_empty() {
        return;
    }
    usage.source = TokenSource::Invalid;
    usage.invalid = Some(match usage.invalid.take() {
        Some(earlier) => format!("{earlier}, {}", wrong.join(", ")),
        None => wrong.join(", "),
    });
}

pub(super) fn server_timings(value: &Value, timing: &mut Timing) {
    if let Some(t) = value.get("timings") {
        timing.server_prompt_ms = t.get("prompt_ms").and_then(Value::as_f64);
        timing.server_decode_ms = t.get("predicted_ms").and_then(Value::as_f64);
    }
}

fn tool_calls_of(calls: Option<&Value>) -> Vec<ToolCall> {
    calls
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .map(|c| ToolCall {
                    id: c.get("id").and_then(Value::as_str).unwrap_or_default().to_string(),
                    name: c.pointer("/function/name").and_then(Value::as_str).unwrap_or_default().to_string(),
                    arguments: match c.pointer("/function/arguments") {
                        Some(Value::String(s)) => s.clone(),
                        Some(other) => other.to_string(),
                        None => String::new(),
                    },
                })
                .collect()
        })
        .unwrap_or_default()
}

pub(super) fn str_of(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str).map(str::to_string)
}

/// A whole (non-streamed) response.
pub(super) fn parse_whole(value: &Value, shape: Shape) -> Result<Reply, CallError> {
    let choice = value
        .pointer("/choices/0")
        .ok_or_else(|| CallError::lost(format!("response has no choices: {}", clip(&value.to_string()))))?;
    let mut reply = Reply {
        model: str_of(value.get("model")),
        finish_reason: str_of(choice.get("finish_reason")),
        usage: usage_of(value).unwrap_or_default(),
        ..Reply::default()
    };
    match shape {
        Shape::Chat => {
            let message = choice.get("message").unwrap_or(&Value::Null);
            reply.text = str_of(message.get("content")).unwrap_or_default();
            // llama.cpp and older vLLM say `reasoning_content`; newer vLLM
            // and Ollama `reasoning`.
            reply.reasoning = str_of(message.get("reasoning_content")).or_else(|| str_of(message.get("reasoning")));
            reply.tool_calls = tool_calls_of(message.get("tool_calls"));
        }
        Shape::Completion => reply.text = str_of(choice.get("text")).unwrap_or_default(),
    }
    server_timings(value, &mut reply.timing);
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn usage_beats_timings_and_timings_fill_in() {
        let both = json!({"usage":{"prompt_tokens":32,"completion_tokens":5},"timings":{"prompt_n":1,"cache_n":31,"predicted_n":5}});
        let u = usage_of(&both).unwrap();
        assert_eq!((u.prompt_tokens, u.source), (Some(32), TokenSource::ServerUsage));
        let timings_only = json!({"timings":{"prompt_n":1,"cache_n":31,"predicted_n":5}});
        let u = usage_of(&timings_only).unwrap();
        assert_eq!((u.prompt_tokens, u.completion_tokens, u.source), (Some(32), Some(5), TokenSource::ServerTimings));
        assert!(usage_of(&json!({})).is_none());
    }

    #[test]
    fn counts_the_request_makes_impossible_are_invalid() {
        let body = json!({"max_tokens": 16});
        assert_eq!(completion_cap(&body), Some(16));
        assert_eq!(completion_cap(&json!({"max_completion_tokens": 8, "n": 3})), Some(24));
        assert_eq!(completion_cap(&json!({})), None);
        let mut u = usage_of(&json!({"usage": {"prompt_tokens": 9000, "completion_tokens": 5000}})).unwrap();
        bound_counts(&mut u, completion_cap(&body), Some(8192));
        assert_eq!((u.source, u.prompt_tokens, u.completion_tokens), (TokenSource::Invalid, None, None));
        assert_eq!(
            u.invalid.as_deref(),
            Some(
                "completion_tokens = 5000 (more than the request's max_tokens, 16), \
                 prompt_tokens = 9000 (more than the server's context, 8192)"
            )
        );
        // At the cap, or with no cap and no context known: counts.
        let mut u = usage_of(&json!({"usage": {"prompt_tokens": 9000, "completion_tokens": 16}})).unwrap();
        bound_counts(&mut u, Some(16), None);
        assert_eq!((u.source, u.completion_tokens, u.invalid), (TokenSource::ServerUsage, Some(16), None));
        // llama.cpp's timings by their own names; after an earlier bad count
        // (the source no longer says timings) by the record's.
        let mut u = usage_of(&json!({"timings": {"prompt_n": 3, "predicted_n": 40}})).unwrap();
        bound_counts(&mut u, Some(16), None);
        assert_eq!(u.invalid.as_deref(), Some("timings.predicted_n = 40 (more than the request's max_tokens, 16)"));
        let mut u = usage_of(&json!({"timings": {"prompt_n": "x", "predicted_n": 40}})).unwrap();
        bound_counts(&mut u, Some(16), None);
        assert_eq!(
            u.invalid.as_deref(),
            Some("timings.prompt_n = \"x\", completion_tokens = 40 (more than the request's max_tokens, 16)")
        );
    }

    #[test]
    fn counts_that_are_not_counts_are_recorded_as_invalid() {
        for bad in [json!(-5), json!(1_000_000_000_000u64), json!(1e300), json!("8"), json!(3.5)] {
            let u = usage_of(&json!({"usage": {"prompt_tokens": 4, "completion_tokens": bad}})).unwrap();
            assert_eq!(u.source, TokenSource::Invalid, "{bad}");
            assert_eq!(u.completion_tokens, None);
            assert_eq!(u.prompt_tokens, Some(4), "a valid count stays");
            assert_eq!(u.invalid.as_deref(), Some(format!("completion_tokens = {bad}").as_str()));
        }
        let u = usage_of(&json!({"usage": {"prompt_tokens": 4, "completion_tokens": null}})).unwrap();
        assert_eq!((u.source, u.invalid), (TokenSource::ServerUsage, None), "null is no count, not a wrong one");
        let u = usage_of(&json!({"timings": {"prompt_n": 1, "predicted_n": -1}})).unwrap();
        assert_eq!(u.source, TokenSource::Invalid);
        assert!(u.invalid.unwrap().contains("timings.predicted_n = -1"));
    }
}
