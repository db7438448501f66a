//! `sustained-load`: open-loop arrivals at offered rates, and the rate the
//! serve holds with the suite's latency objectives met (goodput).
//!
//! Cases: `rate::<mix>::<rate>` (one offered rate, [`rate`]) and
//! `sweep::<mix>` (a synchronous baseline, the maximum throughput, then
//! rates between, stopping once the server saturates). A rate case records
//! its figures by these names; a sweep records each point's under
//! [`point`] (`point2-ttft-ms-p99`) and the row's
//! figure, [`SUSTAINED_REQ_S`], at its top
//! level.

use super::*;

/// The instrument's name.
pub const INSTRUMENT: &str = "sustained-load";
/// The row "Sustained load".
pub const ROW: Row = Row { title: "Sustained load", instrument: INSTRUMENT };
/// Case group: one fixed offered rate of one mix, `rate::<mix>::<rate>`.
pub const RATE: Group = Group("rate");
/// Case group: a sweep of one mix, `sweep::<mix>`.
pub const SWEEP: Group = Group("sweep");

/// The case name of `mix` offered at `req_s` requests per second:
/// `rate::agent-turn::0_25rps` (a dot is written `_`).
pub fn rate(mix: &str, req_s: f64) -> GroupCase<RateItem<'_>> {
    RATE.case(RateItem { mix, req_s })
}

/// The case name of the sweep of `mix`: `sweep::agent-turn`.
pub fn sweep(mix: &str) -> GroupCase<&str> {
    SWEEP.case(mix)
}

/// The mix of a rate or sweep case name (`agent-turn` for
/// `rate::agent-turn::0_25rps` and `sweep::agent-turn`).
pub fn mix_of(case: &str) -> Option<&str> {
    if let Some(item) = RATE.item(case) {
        return item.split_once("::").map(|(mix, _)| mix);
    }
    SWEEP.item(case)
}

/// The latency objectives a request must meet to count as good (vLLM's
/// `--goodput ttft:… tpot:… e2el:…`), in milliseconds: one rule, read
/// by the instrument when it counts goodput and by `diff` when it
/// resamples a sweep's requests. Displayed as `ttft <= 2000 ms, tpot
/// <= 250 ms`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Objectives {
    /// Time to first token at most.
    pub ttft_ms: Option<f64>,
    /// Time per output token at most.
    pub tpot_ms: Option<f64>,
    /// End-to-end latency at most.
    pub e2e_ms: Option<f64>,
}

impl Objectives {
    /// Whether an answered request met every objective, from its time
    /// to first token, its time per output token ([`tpot_ms`]) and its
    /// end-to-end time. A reply of one token has no TPOT and is judged
    /// by the others; a reply with no content chunk has no TTFT and
    /// misses a TTFT objective. A request never answered meets none:
    /// the caller does not ask.
    pub fn met(&self, ttft_ms: Option<f64>, tpot_ms: Option<f64>, total_ms: f64) -> bool {
        let ttft = self.ttft_ms.is_none_or(|max| ttft_ms.is_some_and(|t| t <= max));
        let tpot = self.tpot_ms.is_none_or(|max| tpot_ms.is_none_or(|t| t <= max));
        let e2e = self.e2e_ms.is_none_or(|max| total_ms <= max);
        ttft && tpot && e2e
    }
}

impl core::fmt::Display for Objectives {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let mut first = true;
        for (name, ms) in [("ttft", self.ttft_ms), ("tpot", self.tpot_ms), ("e2el", self.e2e_ms)] {
            if let Some(ms) = ms {
                if !first {
                    f.write_str(", ")?;
                }
                write!(f, "{name} <= {ms} ms")?;
                first = false;
            }
        }
        Ok(())
    }
}

/// A request's latency from its intended send, not from when it went:
/// `ms` (timed by the host from the send) plus the send lag
/// (`sent_ms − intended_ms`, never below 0). A request the client sent late is
/// charged its wait, as a user who meant to send it then would feel
/// it, so a client that falls behind never hides a queue (coordinated
/// omission). The instrument's figures and `diff`'s resampling both
/// take TTFT and end-to-end times this way.
pub fn since_intended(intended_ms: f64, sent_ms: f64, ms: f64) -> f64 {
    (sent_ms - intended_ms).max(0.0) + ms
}

/// Time per output token after the first, `decode_ms / (tokens - 1)`,
/// where the reply had two tokens or more and a decode time.
pub fn tpot_ms(decode_ms: Option<f64>, output_tokens: u32) -> Option<f64> {
    let decode = decode_ms?;
    (output_tokens >= 2 && decode > 0.0).then(|| decode / f64::from(output_tokens - 1))
}

/// A rate case's item, displayed as `<mix>::<rate>rps`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateItem<'a> {
    /// The mix's name.
    pub mix: &'a str,
    /// The offered rate, requests per second.
    pub req_s: f64,
}

impl core::fmt::Display for RateItem<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}::", self.mix)?;
        core::fmt::Write::write_fmt(&mut NoDots(f), format_args!("{}", self.req_s))?;
        f.write_str("rps")
    }
}

/// Writes through, a `.` as `_` (case names hold no dots).
struct NoDots<'a, 'b>(&'a mut core::fmt::Formatter<'b>);

impl core::fmt::Write for NoDots<'_, '_> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        for (i, part) in s.split('.').enumerate() {
            if i > 0 {
                self.0.write_str("_")?;
            }
            self.0.write_str(part)?;
        }
        Ok(())
    }
}

/// A figure or note of point `n` (from 1) of a sweep:
/// `point<n>-<name>`, e.g. `point3-goodput`.
pub fn point(n: u32, metric: Metric) -> PointName {
    PointName { n, name: metric.0 }
}

/// A note of point `n` of a sweep, named as [`point`] names figures.
pub fn point_note(n: u32, note: Note) -> PointName {
    PointName { n, name: note.0 }
}

/// The point and the figure or note a sweep's name is of
/// (`(3, "goodput")` for `point3-goodput`), when it is one.
pub fn point_of(name: &str) -> Option<(u32, &str)> {
    let rest = name.strip_prefix(POINT_PREFIX)?;
    let (n, what) = rest.split_once('-')?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) || what.is_empty() {
        return None;
    }
    Some((n.parse().ok()?, what))
}

const POINT_PREFIX: &str = "point";

/// A name of one point of a sweep, displayed as `point<n>-<name>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PointName {
    /// The point, from 1 in the order the sweep ran them.
    pub n: u32,
    /// The figure's or note's own name.
    pub name: &'static str,
}

impl core::fmt::Display for PointName {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{POINT_PREFIX}{}-{}", self.n, self.name)
    }
}

/// The values of [`KIND`]: what a sweep's point was.
pub mod kind {
    /// One request at a time (max concurrency 1): the baseline.
    pub const SYNCHRONOUS: &str = "synchronous";
    /// Every request at once: the most the server delivers.
    pub const THROUGHPUT: &str = "throughput";
    /// Open-loop arrivals at a fixed offered rate.
    pub const RATE: &str = "rate";
}

/// Metric: the rate a case sustained: on a sweep the highest offered
/// rate that held (not saturated, not client-bound) with goodput at or
/// above [`GOODPUT_THRESHOLD`], as its schedule offered it (that
/// point's [`SCHEDULED_REQ_S`]); on a rate case its own rate, where it
/// held so, req/s. The row's figure is the highest of a mix's cases.
pub const SUSTAINED_REQ_S: Metric = Metric("sustained-req-s");
/// Metric: the goodput a rate must reach to count for the figure, %.
pub const GOODPUT_THRESHOLD: Metric = Metric("goodput-threshold");
/// Metric: the requests per second offered (the schedule's nominal rate).
pub const OFFERED_REQ_S: Metric = Metric("offered-req-s");
/// Metric: the rate the seeded schedule itself came to over the
/// measured requests (intended send times), req/s.
pub const SCHEDULED_REQ_S: Metric = Metric("scheduled-req-s");
/// Metric: completions per second the server achieved, between the
/// first and the last measured completion.
pub const ACHIEVED_REQ_S: Metric = Metric("achieved-req-s");
/// Metric: output tokens of every answered measured request over the
/// window, tok/s.
pub const OUTPUT_TOK_S: Metric = Metric("output-tok-s");
/// Metric: the mean of each answered request's decode rate, tok/s.
pub const PER_REQUEST_TOK_S: Metric = Metric("per-request-tok-s");
/// Metric: the share of measured requests that met every objective, %.
pub const GOODPUT: Metric = Metric("goodput");
/// Metric: requests that met every objective, per second: the achieved
/// rate ([`ACHIEVED_REQ_S`]) times the share of answered requests that
/// met them, so it is taken over the same window and never above it.
pub const GOODPUT_REQ_S: Metric = Metric("goodput-req-s");
/// Metric: time to first token, median.
pub const TTFT_MS_P50: Metric = Metric("ttft-ms-p50");
/// Metric: time to first token, 90th percentile.
pub const TTFT_MS_P90: Metric = Metric("ttft-ms-p90");
/// Metric: time to first token, 99th percentile.
pub const TTFT_MS_P99: Metric = Metric("ttft-ms-p99");
/// Metric: time per output token after the first, median.
pub const TPOT_MS_P50: Metric = Metric("tpot-ms-p50");
/// Metric: time per output token, 90th percentile.
pub const TPOT_MS_P90: Metric = Metric("tpot-ms-p90");
/// Metric: time per output token, 99th percentile.
pub const TPOT_MS_P99: Metric = Metric("tpot-ms-p99");
/// Metric: the gap between two content chunks, median.
pub const ITL_MS_P50: Metric = Metric("itl-ms-p50");
/// Metric: the gap between two content chunks, 90th percentile.
pub const ITL_MS_P90: Metric = Metric("itl-ms-p90");
/// Metric: the gap between two content chunks, 99th percentile.
pub const ITL_MS_P99: Metric = Metric("itl-ms-p99");
/// Metric: a request's end-to-end latency, median.
pub const E2E_MS_P50: Metric = Metric("e2e-ms-p50");
/// Metric: end-to-end latency, 90th percentile.
pub const E2E_MS_P90: Metric = Metric("e2e-ms-p90");
/// Metric: end-to-end latency, 99th percentile.
pub const E2E_MS_P99: Metric = Metric("e2e-ms-p99");
/// Metric: the objective on time to first token.
pub const TTFT_OBJECTIVE_MS: Metric = Metric("ttft-objective-ms");
/// Metric: the objective on time per output token.
pub const TPOT_OBJECTIVE_MS: Metric = Metric("tpot-objective-ms");
/// Metric: the objective on end-to-end latency.
pub const E2E_OBJECTIVE_MS: Metric = Metric("e2e-objective-ms");
/// Metric: measured requests sent (warm-up excluded).
pub const REQUESTS: Metric = Metric("requests");
/// Metric: measured requests answered.
pub const ANSWERED_REQUESTS: Metric = Metric("answered-requests");
/// Metric: measured requests lost (never answered): counted apart,
/// never in a latency.
pub const LOST_REQUESTS: Metric = Metric("lost-requests");
/// Metric: measured requests the server refused (4xx).
pub const REJECTED_REQUESTS: Metric = Metric("rejected-requests");
/// Metric: warm-up requests sent first and left out of every figure.
pub const WARMUP_REQUESTS: Metric = Metric("warmup-requests");
/// Metric: output tokens of the answered measured requests.
pub const OUTPUT_TOKENS: Metric = Metric("output-tokens");
/// Metric: the mean prompt tokens of an answered request.
pub const PROMPT_TOKENS_MEAN: Metric = Metric("prompt-tokens-mean");
/// Metric: from the first measured send to the last measured reply.
pub const WINDOW_MS: Metric = Metric("window-ms");
/// Metric: the 99th percentile of actual send after intended send,
/// as the host measured it.
pub const SEND_LAG_P99_MS: Metric = Metric("send-lag-p99-ms");
/// Metric: the largest send lag of a measured request.
pub const SEND_LAG_MAX_MS: Metric = Metric("send-lag-max-ms");
/// Metric: the cap on requests in flight, where one was set.
pub const MAX_CONCURRENCY: Metric = Metric("max-concurrency");
/// Metric: the gamma arrival process's burstiness factor.
pub const BURSTINESS: Metric = Metric("burstiness");
/// Metric: most requests the server ran at once in the window.
pub const SERVER_RUNNING_MAX: Metric = Metric("server-running-max");
/// Metric: mean requests the server ran in the window.
pub const SERVER_RUNNING_MEAN: Metric = Metric("server-running-mean");
/// Metric: most requests the server had waiting in the window.
pub const SERVER_WAITING_MAX: Metric = Metric("server-waiting-max");
/// Metric: the server's live-load readings in the window.
pub const SERVER_SAMPLES: Metric = Metric("server-samples");
/// Metric: 1 when the rate saturated the server (achieved below 90%
/// of the schedule, or lost past the budget), else 0.
pub const SATURATED: Metric = Metric("saturated");
/// Metric: on a sweep, the offered rate at which the server saturated.
pub const SATURATED_AT_REQ_S: Metric = Metric("saturated-at-req-s");
/// Metric: on a sweep, the synchronous baseline's achieved rate.
pub const SYNCHRONOUS_REQ_S: Metric = Metric("synchronous-req-s");
/// Metric: on a sweep, the all-at-once point's achieved rate.
pub const THROUGHPUT_REQ_S: Metric = Metric("throughput-req-s");
/// Metric: on a sweep, the points run.
pub const POINTS: Metric = Metric("points");
/// Note: the mix of prompt and output lengths.
pub const MIX: Note = Note("mix");
/// Note: the arrival process: `constant`, `poisson` or `gamma(<b>)`.
pub const ARRIVAL: Note = Note("arrival");
/// Note: the arrival schedule's seed.
pub const SEED: Note = Note("seed");
/// Note: the objectives goodput is judged by, in words.
pub const OBJECTIVES: Note = Note("objectives");
/// Note: a point's kind (values in [`kind`]).
pub const KIND: Note = Note("kind");
/// Note: why the host marked the rate client-bound; its figures are
/// then not the server's and are not recorded.
pub const CLIENT_BOUND: Note = Note("client-bound");
/// Note: whether and why the rate saturated the server.
pub const SATURATION: Note = Note("saturation");
/// Note: the lost and refused requests, by reason.
pub const LOST: Note = Note("lost");
/// Note: where the server's running and waiting counts came from, or
/// n/a with why.
pub const SERVER_LOAD: Note = Note("server-load");
/// Note: where the token counts came from.
pub const TOKEN_SOURCE: Note = Note("token-source");
/// Note: on a sweep, how the row's figure was chosen, or why there is
/// none.
pub const SUSTAINED: Note = Note("sustained");
/// Note: on a sweep, the rates not run once the server saturated.
pub const NOT_RUN: Note = Note("not-run");
