//! `concurrency` (row "Concurrency"): what one request gets while others
//! run, and what the server delivers in total.
//!
//! One case per level (`c1`, `c2`, `c4` by default): that many streamed
//! requests sent at once (each a different prompt, so no prefix is shared),
//! each timed by the host. Per request: decode tok/s excluding TTFT
//! (`sparktest_workload::speed`). Aggregate: all completion tokens over the
//! wall time from send to the last reply. The host samples the server's own
//! count of running requests during the window (`ServerLoad`): the record
//! keeps what the server actually ran, and when it ran fewer at once than
//! were sent, the requests that waited for a slot are named (the ones with
//! the latest first token). A queued level still passes: queueing is a
//! property of the serve, and the record says so.

use serde::Deserialize;
use sparktest_sdk::contract::concurrency as names;
use sparktest_sdk::*;
use sparktest_workload::speed::{Stats, sample};

struct Concurrency;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    #[serde(default = "default_levels")]
    levels: Vec<u32>,
    #[serde(default = "default_max_tokens")]
    max_tokens: u32,
    #[serde(default = "default_prompts")]
    prompts: String,
}

fn default_levels() -> Vec<u32> {
    vec![1, 2, 4]
}
fn default_max_tokens() -> u32 {
    256
}
fn default_prompts() -> String {
    "concurrency/prompts.json".into()
}

fn check(c: &Config) -> Result<(), String> {
    if c.levels.is_empty() || c.levels.contains(&0) {
        return Err("concurrency config: levels must be a non-empty list of positive numbers".into());
    }
    Ok(())
}

fn prompts(c: &Config) -> Result<Vec<String>, String> {
    let list: Vec<String> =
        serde_json::from_str(&read_text(&c.prompts)?).map_err(|err| format!("{}: {err}", c.prompts))?;
    if list.is_empty() {
        return Err(format!("{}: no prompts", c.prompts));
    }
    Ok(list)
}

fn level_case(c: &Config, level: u32) -> Finding {
    let prompts = match prompts(c) {
        Ok(p) => p,
        Err(err) => return Finding::fail(err),
    };
    let reqs: Vec<ChatRequest> = (0..level as usize)
        .map(|i| {
            // Different prompts: no shared prefix for the cache to reuse.
            let prompt = &prompts[i % prompts.len()];
            let text = if i < prompts.len() { prompt.clone() } else { format!("(agent {}) {prompt}", i + 1) };
            ChatRequest::new(vec![Message::user(&text)]).greedy().max_tokens(c.max_tokens).streamed()
        })
        .collect();
    let replies = chat_concurrent(&reqs);
    let mut per_request = Vec::new();
    let mut end_to_end = Vec::new();
    let mut ttfts = Vec::new();
    let mut tokens = 0u32;
    let mut sources: Vec<&'static str> = Vec::new();
    let mut wall_ms: f64 = 0.0;
    for (i, r) in replies.into_iter().enumerate() {
        let reply = match r {
            Ok(reply) => reply,
            Err(err) => return Finding::from(err).note(names::REQUEST, (i + 1).to_string()),
        };
        let s = match sample(&reply) {
            Ok(s) => s,
            // A limit of the timing (a reply sent in one burst), not the
            // model's failure: the figure is N/A with its reason.
            Err(why) => {
                return Finding::not_applicable(format!("request {}: the decode rate cannot be taken: {why}", i + 1));
            }
        };
        if !sources.contains(&s.token_source) {
            sources.push(s.token_source);
        }
        tokens += s.tokens;
        wall_ms = wall_ms.max(reply.timing.total_ms);
        per_request.push(s.decode_tok_s);
        // What the agent got, waiting for a slot and the first token included.
        end_to_end.push(f64::from(s.tokens) / (reply.timing.total_ms / 1000.0));
        ttfts.push(s.ttft_ms);
    }
    let (Some(stats), Some(e2e)) = (Stats::of(&per_request), Stats::of(&end_to_end)) else {
        return Finding::fail("no requests");
    };
    let aggregate = f64::from(tokens) / (wall_ms / 1000.0);
    let mut outcome = Finding::pass()
        .metric(names::CONCURRENCY, f64::from(level), "requests")
        .metric(names::PER_REQUEST_TOK_S, stats.mean, "tok/s")
        .metric(names::PER_REQUEST_TOK_S_MIN, stats.min, "tok/s")
        .metric(names::PER_REQUEST_TOK_S_MAX, stats.max, "tok/s")
        .metric(names::PER_REQUEST_E2E_TOK_S, e2e.mean, "tok/s")
        .metric(names::PER_REQUEST_E2E_TOK_S_MIN, e2e.min, "tok/s")
        .metric(names::AGGREGATE_TOK_S, aggregate, "tok/s")
        .metric(names::COMPLETION_TOKENS, f64::from(tokens), "tokens")
        .metric(names::WALL_MS, wall_ms, "ms")
        // Where the token counts behind every tok/s figure came from
        // (`chunks` when the server gave no valid count).
        .note(names::TOKEN_SOURCE, sources.join(", "));
    for (i, (rate, ttft)) in per_request.iter().zip(&ttfts).enumerate() {
        outcome = outcome.metric(format!("request{}-tok-s", i + 1), *rate, "tok/s").metric(
            format!("request{}-ttft-ms", i + 1),
            *ttft,
            "ms",
        );
    }
    match last_load_window() {
        // Too little to go on: a reading or two, or a server that never
        // showed a running request although every request completed.
        Some(load) if load.samples < 2 || load.running_max == 0 => {
            outcome.metric(names::SERVER_SAMPLES, f64::from(load.samples), "samples").note(
                names::SERVER_CONFIRMED,
                format!(
                    "n/a: {} reading(s) of {} showed at most {} running: too few to confirm what the server ran",
                    load.samples, load.source, load.running_max
                ),
            )
        }
        Some(load) => {
            outcome = outcome
                .metric(names::SERVER_RUNNING_MAX, f64::from(load.running_max), "requests")
                .metric(names::SERVER_RUNNING_MEAN, load.running_mean, "requests")
                .metric(names::SERVER_SAMPLES, f64::from(load.samples), "samples")
                .note(names::SERVER_LOAD_SOURCE, load.source.clone());
            if let Some(w) = load.waiting_max {
                outcome = outcome.metric(names::SERVER_WAITING_MAX, f64::from(w), "requests");
            }
            if load.running_max < level || load.waiting_max.is_some_and(|w| w > 0) {
                // The requests that started last are the ones that waited.
                let mut order: Vec<usize> = (0..ttfts.len()).collect();
                order.sort_by(|a, b| ttfts[*b].total_cmp(&ttfts[*a]));
                let waited =
                    (level.saturating_sub(load.running_max) as usize).max(load.waiting_max.unwrap_or(0) as usize);
                let mut names: Vec<String> =
                    order[..waited.min(order.len())].iter().map(|i| format!("request{}", i + 1)).collect();
                names.sort();
                outcome = outcome.metric(names::QUEUED_REQUESTS, waited as f64, "requests").note(
                    names::QUEUED,
                    format!(
                        "the server ran at most {} of {level} at once; {} waited for a free slot",
                        load.running_max,
                        names.join(", ")
                    ),
                );
            } else {
                outcome = outcome.metric(names::QUEUED_REQUESTS, 0.0, "requests");
            }
            outcome.note(names::SERVER_CONFIRMED, format!("ran {} at once", load.running_max))
        }
        None => outcome.note(names::SERVER_CONFIRMED, "n/a: the engine reports no live request count"),
    }
}

impl Instrument for Concurrency {
    type Config = Config;
    type Case = u32;

    fn describe() -> Info {
        Info::new(
            "concurrency",
            names::ROW.title,
            env!("CARGO_PKG_VERSION"),
            "Simultaneous streamed requests at each of the suite's levels (1, 2 and 4 unless it says \
             otherwise): per-request decode tok/s (what one \
             agent gets while the others work) and aggregate tok/s (all tokens over the \
             window) at each level, never mixed. The concurrency is confirmed at the server as \
             well as the client: the host samples the engine's own count of running requests \
             during the window (llama.cpp /slots, vLLM and SGLang metrics), and requests that \
             queued behind full slots are named. The row's figure is per-request tokens over \
             the request's whole time, waiting included: what one agent gets.",
        )
    }

    fn cases(c: &Config) -> Result<Vec<Case<u32>>, String> {
        check(c)?;
        prompts(c)?;
        Ok(c.levels.iter().map(|&l| Case::new(names::level(l).to_string(), l).tag(names::ROW.title)).collect())
    }

    fn run(c: &Config, level: &u32) -> Finding {
        level_case(c, *level)
    }
}

register_instrument!(Concurrency);
