//! `sustained-load` (row "Sustained load"): the rate a serve holds before
//! its latency breaks, open loop.
//!
//! The instrument says what to send and when (the mix's prompts, a rate,
//! the arrival process and its seed); the host keeps the clock, sends each
//! request at its instant whether or not earlier ones came back
//! (`open_loop`), and reports every request's intended and actual send
//! time with its reply. So a server that falls behind builds a queue
//! instead of slowing the client, and a client that falls behind is seen
//! (the host marks the load client-bound) instead of being read as a slow
//! server.
//!
//! - `rate::<mix>::<rate>`: one fixed offered rate ([`record::rate_case`]).
//! - `sweep::<mix>`: GuideLLM's sweep ([`sweep`]): one request at a time,
//!   every request at once, then rates between; it carries the row's
//!   figure, the highest offered rate that held with goodput at or above
//!   the suite's threshold.
//!
//! Every case first sends one short probe: the host's timing of it seeds a
//! tag that starts every prompt of the case, so that no prompt of the case
//! was sent before (in this run or an earlier one on the same server) and
//! no prefix cache serves it. The figures are computed in [`figures`] and
//! recorded in [`record`]; the config is read in [`config`].

pub mod config;
pub mod figures;
pub mod record;
pub mod sweep;

use serde_json::{Map, Value};
use sparktest_sdk::contract::sustained_load as names;
use sparktest_sdk::contract::workload::PHASE;
use sparktest_sdk::*;

use config::{Mix, Prompt, Settings};
use figures::{Answer, Counted, Load, Missed, Sent, ServerLoad};
use sweep::{Kind, Point, PointPlan};

struct SustainedLoad;

/// What a case runs.
#[derive(Debug, Clone)]
pub enum Item {
    /// Mix `mix` of the settings at a fixed offered rate.
    Rate {
        /// Index into the settings' mixes.
        mix: usize,
        /// Requests per second.
        rate: f64,
    },
    /// The sweep of mix `mix`.
    Sweep {
        /// Index into the settings' mixes.
        mix: usize,
    },
}

fn prompts(mix: &Mix) -> Result<Vec<Prompt>, String> {
    config::prompts(mix, &read_text(&mix.prompts)?)
}

/// A tag no earlier prompt began with: from the host's timing of one short
/// probe (its microseconds differ from run to run).
fn tag(reply: &Reply) -> String {
    let mut x = reply.timing.total_ms.to_bits() ^ reply.timing.ttft_ms.unwrap_or(0.0).to_bits().rotate_left(17);
    // SplitMix64's finaliser: every bit of the timing moves every bit.
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^= x >> 31;
    format!("{:08x}", x as u32)
}

/// The requests of point `point` of a load: each prompt of the mix in
/// turn, its first turn starting with its own `[tag-point-i]`.
pub fn requests(mix: &Mix, prompts: &[Prompt], tag: &str, point: u32, n: u32) -> Vec<ChatRequest> {
    (0..n as usize)
        .map(|i| {
            let p = &prompts[i % prompts.len()];
            let head = format!("[{tag}-{point}-{i}] ");
            let messages = match &p.system {
                Some(system) => vec![Message::system(&format!("{head}{system}")), Message::user(&p.user)],
                None => vec![Message::user(&format!("{head}{}", p.user))],
            };
            let mut req = ChatRequest::new(messages).greedy().max_tokens(mix.max_tokens).streamed();
            if mix.ignore_eos {
                req.extra_body = Some(r#"{"ignore_eos":true}"#.into());
            }
            req
        })
        .collect()
}

/// The host's report of a load, in the figures' terms.
pub fn load_of(result: &LoadResult) -> Load {
    let requests = result
        .requests
        .iter()
        .map(|r| {
            let (answer, ended_ms) = match &r.reply {
                Ok(reply) => (Ok(answer_of(reply, r.intended_ms, r.sent_ms)), r.sent_ms + reply.timing.total_ms),
                Err(CallError::Lost(f)) => (Err(Missed::Lost(with_status(&f.reason, f.status))), r.sent_ms),
                Err(CallError::Rejected(rej)) => {
                    (Err(Missed::Rejected(format!("HTTP {}: {}", rej.status, short(&rej.body)))), r.sent_ms)
                }
                Err(CallError::Unsupported(f)) => (Err(Missed::Rejected(f.reason.clone())), r.sent_ms),
            };
            Sent { intended_ms: r.intended_ms, sent_ms: r.sent_ms, ended_ms, warmup: r.warmup, answer }
        })
        .collect();
    Load {
        requests,
        window_ms: result.window_ms,
        lag_p99_ms: result.lag_p99_ms,
        client_bound: result.client_bound.clone(),
        server: result.load.as_ref().map(|l| ServerLoad {
            source: l.source.clone(),
            samples: l.samples,
            running_max: l.running_max,
            running_mean: l.running_mean,
            waiting_max: l.waiting_max,
        }),
    }
}

fn with_status(reason: &str, status: Option<u16>) -> String {
    match status {
        Some(s) if !reason.contains(&s.to_string()) => format!("{reason} (HTTP {s})"),
        _ => reason.to_string(),
    }
}

/// A refusal's body, cut for a note.
fn short(body: &str) -> String {
    let body = body.trim();
    match body.char_indices().nth(120) {
        Some((at, _)) => format!("{}…", &body[..at]),
        None => body.to_string(),
    }
}

/// An answered request's figures, its latencies from its intended send
/// ([`names::since_intended`]).
fn answer_of(reply: &Reply, intended_ms: f64, sent_ms: f64) -> Answer {
    let t = &reply.timing;
    let late = |ms: f64| names::since_intended(intended_ms, sent_ms, ms);
    let (output_tokens, counted) = match (reply.usage.completion_tokens, reply.usage.source) {
        (Some(n), TokenSource::ServerUsage) => (n, Counted::ServerUsage),
        (Some(n), TokenSource::ServerTimings) => (n, Counted::ServerTimings),
        _ => (u32::try_from(t.chunk_arrivals_ms.len()).unwrap_or(u32::MAX), Counted::Chunks),
    };
    Answer {
        ttft_ms: t.ttft_ms.map(late),
        decode_ms: t.decode_ms,
        total_ms: late(t.total_ms),
        chunk_arrivals_ms: t.chunk_arrivals_ms.clone(),
        output_tokens,
        counted,
        prompt_tokens: reply.usage.prompt_tokens,
    }
}

/// Point `n` of a case: its plan sent through the host, judged.
fn run_point(s: &Settings, mix: &Mix, prompts: &[Prompt], tag: &str, n: u32, plan: &PointPlan) -> Load {
    let total = plan.warmup + plan.count;
    let result = open_loop(&LoadPlan {
        requests: requests(mix, prompts, tag, n, total),
        rate: plan.kind.rate(),
        arrival: match s.arrival {
            config::Arrival::Constant => Arrival::Constant,
            config::Arrival::Poisson => Arrival::Poisson,
            config::Arrival::Gamma(b) => Arrival::Gamma(b),
        },
        seed: s.seed,
        warmup: plan.warmup,
        count: plan.count,
        max_concurrency: plan.max_concurrency,
    });
    load_of(&result)
}

/// The probe every case starts with, and the tag it gives.
fn probe() -> Result<String, Finding> {
    let req = ChatRequest::new(vec![Message::user("Say OK.")]).greedy().max_tokens(1);
    chat(&req).map(|reply| tag(&reply)).map_err(|err| Finding::from(err).note(PHASE, "probe"))
}

fn run_case(s: &Settings, item: &Item) -> Finding {
    let (Item::Rate { mix, .. } | Item::Sweep { mix }) = item;
    let mix = &s.mixes[*mix];
    let prompts = match prompts(mix) {
        Ok(p) => p,
        Err(err) => return Finding::fail(err),
    };
    let tag = match probe() {
        Ok(tag) => tag,
        Err(finding) => return finding,
    };
    match item {
        Item::Rate { rate, .. } => {
            let plan = PointPlan::new(s, Kind::Rate(*rate));
            let load = run_point(s, mix, &prompts, &tag, 1, &plan);
            record::rate_case(s, mix, &Point::judge(plan, load, mix, s))
        }
        Item::Sweep { .. } => {
            let mut n = 0;
            let sw = sweep::sweep(s, mix, |plan| {
                n += 1;
                run_point(s, mix, &prompts, &tag, n, plan)
            });
            record::sweep_case(s, mix, &sw)
        }
    }
}

impl Instrument for SustainedLoad {
    type Config = Map<String, Value>;
    type Case = Item;

    fn describe() -> Info {
        Info::new(
            names::INSTRUMENT,
            names::ROW.title,
            env!("CARGO_PKG_VERSION"),
            "Open-loop load, as vllm bench serve and GuideLLM: the host sends each streamed request at \
             its instant of a seeded arrival schedule (constant, Poisson or gamma with a burstiness \
             factor; the seed recorded), whether or not earlier ones came back, once (a refusal or no \
             answer is recorded at its instant, never sent again), and records every request's \
             intended and actual send time. One case per fixed offered rate and mix (a short agent \
             turn, a long prefill), and a sweep per mix: one request at a time, shares of that rate \
             (sweep-below), every request at once, then rates spaced between their achieved rates, \
             rising until one saturates the server (achieved below 90% of what the schedule offered, \
             or more lost or refused than the budget). Per rate, warm-up excluded: offered, scheduled \
             and achieved requests/s; output tok/s in all and per request; TTFT, TPOT, ITL and \
             end-to-end latency at p50/p90/p99 (nearest rank), from the intended send; goodput, the \
             share of requests meeting the suite's objectives (ttft, tpot, e2el) over the achieved \
             rate's window; lost and refused requests counted apart, never in a latency; the server's \
             own running and waiting counts. Token counts are the server's. The p99 send lag is \
             recorded, and a rate the host could not hold is marked client-bound and none of its \
             figures reported as the server's. The row's figure: the highest offered rate, of the \
             sweep or a fixed-rate case, that held with goodput at or above the threshold (90% unless \
             the suite says otherwise), as its seeded schedule offered it. Each case's prompts \
             start with a tag no earlier prompt had, so no prefix cache serves them.",
        )
    }

    fn cases(c: &Map<String, Value>) -> Result<Vec<Case<Item>>, String> {
        let s = config::settings(c).map_err(|err| format!("{} config: {err}", names::INSTRUMENT))?;
        let host = limits();
        let limits = config::Limits {
            case_secs: host.case_timeout_ms as f64 / 1000.0,
            request_secs: host.request_timeout_ms as f64 / 1000.0,
            max_load_requests: host.max_load_requests,
        };
        config::fits(&s, limits).map_err(|err| format!("{} config: {err}", names::INSTRUMENT))?;
        let mut cases = Vec::new();
        for (i, mix) in s.mixes.iter().enumerate() {
            prompts(mix)?;
            for rate in &mix.rates {
                cases.push(Case::new(names::rate(&mix.name, *rate).to_string(), Item::Rate { mix: i, rate: *rate }));
            }
            cases.push(Case::new(names::sweep(&mix.name).to_string(), Item::Sweep { mix: i }));
        }
        Ok(cases.into_iter().map(|c| c.tag(names::ROW.title)).collect())
    }

    fn run(c: &Map<String, Value>, item: &Item) -> Finding {
        match config::settings(c) {
            Ok(s) => run_case(&s, item),
            Err(err) => Finding::fail(format!("{} config: {err}", names::INSTRUMENT)),
        }
    }
}

register_instrument!(SustainedLoad);
