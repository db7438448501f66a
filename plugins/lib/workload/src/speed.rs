//! Decode-speed figures from one streamed reply, as every speed-type
//! instrument computes them.
//!
//! - Decode tok/s excludes the time to first token: (tokens − 1) over the
//!   time from the first to the last content chunk, both taken by the host at
//!   arrival. Token counts come from the server (usage or llama.cpp
//!   `timings`); only when it gives none are chunks counted, and the figure
//!   says so.
//! - Input tok/s: the prompt tokens the engine actually processed (prompt
//!   minus `cached_tokens`) over the time to first token, only from replies
//!   where at least half the prompt missed the prefix cache: a mostly cached
//!   prompt's TTFT measures the cache, not prefill.
//! - Server decode tok/s: the engine's own figure where it reports one
//!   (llama.cpp `timings.predicted_ms`), kept beside the client's.

use sparktest_sdk::contract::workload as names;
use sparktest_sdk::{ChatRequest, Finding, Message, Reply, TokenSource, chat};

use crate::task::Task;

/// A speed-type instrument's config check: a figure needs at least one
/// repetition.
pub fn at_least_one_repetition(instrument: &str, repetitions: u32) -> Result<(), String> {
    if repetitions == 0 {
        return Err(format!("{instrument} config: repetitions must be at least 1"));
    }
    Ok(())
}

/// The figures of one streamed reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Completion tokens.
    pub tokens: u32,
    /// Where `tokens` came from: `server-usage`, `server-timings`, `chunks`.
    pub token_source: &'static str,
    /// Decode tokens per second, time to first token excluded.
    pub decode_tok_s: f64,
    /// Time to first token, ms.
    pub ttft_ms: f64,
    /// Prompt tokens over the time to first token, where counted.
    pub input_tok_s: Option<f64>,
    /// The engine's own decode rate, where it reports its decode time.
    pub server_decode_tok_s: Option<f64>,
}

/// The figures of `reply`, or why it cannot give them.
pub fn sample(reply: &Reply) -> Result<Sample, String> {
    let t = &reply.timing;
    let (Some(ttft_ms), Some(decode_ms)) = (t.ttft_ms, t.decode_ms) else {
        return Err("the reply was not streamed: no per-chunk timing".into());
    };
    let (tokens, token_source) = match (reply.usage.completion_tokens, reply.usage.source) {
        (Some(n), TokenSource::ServerUsage) => (n, "server-usage"),
        (Some(n), TokenSource::ServerTimings) => (n, "server-timings"),
        _ => (u32::try_from(t.chunk_arrivals_ms.len()).unwrap_or(u32::MAX), "chunks"),
    };
    let unit =
        if token_source == "chunks" { "content chunks (the server gave no valid token count)" } else { "tokens" };
    if tokens < 2 {
        return Err(format!("too short to time: {tokens} {unit}"));
    }
    if decode_ms <= 0.0 {
        return Err(format!(
            "too short to time: the reply arrived in one burst ({tokens} {unit}, {} chunks within {decode_ms:.1} ms)",
            t.chunk_arrivals_ms.len()
        ));
    }
    let decode_tok_s = f64::from(tokens - 1) / (decode_ms / 1000.0);
    let cached = reply.usage.cached_tokens.unwrap_or(0);
    let input_tok_s = reply
        .usage
        .prompt_tokens
        .map(|n| n.saturating_sub(cached))
        .filter(|processed| {
            ttft_ms > 0.0
                && *processed > 0
                && 2 * u64::from(*processed) >= u64::from(reply.usage.prompt_tokens.unwrap_or(0))
        })
        .map(|processed| f64::from(processed) / (ttft_ms / 1000.0));
    let server_decode_tok_s = t.server_decode_ms.filter(|ms| *ms > 0.0).map(|ms| f64::from(tokens) / (ms / 1000.0));
    Ok(Sample { tokens, token_source, decode_tok_s, ttft_ms, input_tok_s, server_decode_tok_s })
}

/// The request a speed prompt is timed with: one user turn, temperature 0,
/// streamed.
pub fn prompt_request(prompt: &str, max_tokens: u32) -> ChatRequest {
    ChatRequest::new(vec![Message::user(prompt)]).greedy().max_tokens(max_tokens).streamed()
}

/// The warm-up's prompt: not any measured prompt, so the first measured
/// repetition finds nothing of its own in the prefix cache.
const WARM_UP: &str = "Say hello, then count from one to twenty in words.";

/// One discarded request: compiled kernels, caches and first-request costs
/// stay out of the figures.
pub fn warm_up(tokens: u32) -> Result<(), Finding> {
    chat(&prompt_request(WARM_UP, tokens)).map(|_| ()).map_err(|err| Finding::from(err).note(names::PHASE, "warm-up"))
}

/// Send `req` `repetitions` times, timing each; `validate` may refuse a
/// reply (its speed then does not count and the case fails).
pub fn repeat(
    req: &ChatRequest,
    repetitions: u32,
    validate: impl Fn(&Reply) -> Result<(), String>,
) -> Result<Vec<Sample>, Finding> {
    let mut samples = Vec::new();
    for rep in 1..=repetitions {
        let reply = chat(req).map_err(|err| Finding::from(err).note(names::PHASE, format!("repetition {rep}")))?;
        validate(&reply).map_err(|why| {
            Finding::fail(format!("repetition {rep}: output did not validate, so its speed does not count: {why}"))
                .note(names::VALID, format!("{} of {repetitions}", rep - 1))
        })?;
        // A reply too short to time is a limit of the timing, not the
        // model's failure: N/A with the reason.
        samples.push(sample(&reply).map_err(|why| {
            Finding::not_applicable(format!("repetition {rep}: the decode rate cannot be taken: {why}"))
        })?);
    }
    Ok(samples)
}

/// Time an agent-shaped task: streamed, with its JSON schema, every
/// repetition checked against its expectation.
pub fn repeat_task(task: &Task, repetitions: u32) -> Result<Vec<Sample>, Finding> {
    let req = task.request(task.messages.clone(), task.response_format.is_some()).streamed();
    repeat(&req, repetitions, |reply| task.check(reply))
}

/// Mean, spread and count of a list of figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    /// Arithmetic mean.
    pub mean: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
    /// Sample standard deviation (0 for one value).
    pub stdev: f64,
    /// How many.
    pub n: usize,
}

impl Stats {
    /// The stats of `xs`; None when empty.
    pub fn of(xs: &[f64]) -> Option<Stats> {
        if xs.is_empty() {
            return None;
        }
        let n = xs.len();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = if n > 1 { xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64 } else { 0.0 };
        Some(Stats {
            mean,
            min: xs.iter().copied().fold(f64::INFINITY, f64::min),
            max: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            stdev: var.sqrt(),
            n,
        })
    }

    /// Add `<name>`, `<name>-min`, `<name>-max`, `<name>-stdev` metrics.
    pub fn metrics(&self, outcome: Finding, name: &str, unit: &str) -> Finding {
        outcome
            .metric(name, self.mean, unit)
            .metric(format!("{name}-min"), self.min, unit)
            .metric(format!("{name}-max"), self.max, unit)
            .metric(format!("{name}-stdev"), self.stdev, unit)
    }
}

/// The samples of several replies: per-repetition metrics
/// (`decode-tok-s-rep1` …) and the mean and spread of each figure.
pub fn summarise(mut outcome: Finding, samples: &[Sample]) -> Finding {
    for (i, s) in samples.iter().enumerate() {
        outcome = outcome.metric(format!("{}{}", names::DECODE_TOK_S_REP, i + 1), s.decode_tok_s, "tok/s").metric(
            format!("{}{}", names::TTFT_MS_REP, i + 1),
            s.ttft_ms,
            "ms",
        );
    }
    let decode: Vec<f64> = samples.iter().map(|s| s.decode_tok_s).collect();
    let ttft: Vec<f64> = samples.iter().map(|s| s.ttft_ms).collect();
    let input: Vec<f64> = samples.iter().filter_map(|s| s.input_tok_s).collect();
    let server: Vec<f64> = samples.iter().filter_map(|s| s.server_decode_tok_s).collect();
    if let Some(st) = Stats::of(&decode) {
        outcome = st.metrics(outcome, names::DECODE_TOK_S.name(), "tok/s");
    }
    if let Some(st) = Stats::of(&ttft) {
        outcome = outcome.metric(names::TTFT_MS, st.mean, "ms");
    }
    match Stats::of(&input) {
        Some(st) => {
            outcome = outcome.metric(names::INPUT_TOK_S, st.mean, "tok/s").note(
                names::INPUT_TOK_S_NOTE,
                format!("from {} of {} repetitions whose prompt mostly missed the prefix cache", st.n, samples.len()),
            )
        }
        None => {
            outcome = outcome
                .note(names::INPUT_TOK_S_NOTE, "n/a: every repetition's prompt came mostly from the prefix cache")
        }
    }
    if let Some(st) = Stats::of(&server) {
        outcome = outcome.metric(names::SERVER_DECODE_TOK_S, st.mean, "tok/s");
    }
    let tokens: u32 = samples.iter().map(|s| s.tokens).sum();
    outcome = outcome.metric(names::COMPLETION_TOKENS, f64::from(tokens), "tokens");
    let sources: Vec<&str> = samples.iter().map(|s| s.token_source).collect();
    let source = if sources.iter().all(|s| *s == sources[0]) { sources[0].to_string() } else { sources.join(",") };
    outcome.note(names::TOKEN_SOURCE, source)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_of_three() {
        let s = Stats::of(&[1.0, 2.0, 3.0]).unwrap();
        assert_eq!((s.mean, s.min, s.max, s.n), (2.0, 1.0, 3.0, 3));
        assert!((s.stdev - 1.0).abs() < 1e-12);
        assert!(Stats::of(&[]).is_none());
    }
}
