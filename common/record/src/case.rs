//! A case line: one finished case, its figures and every endpoint call.

use serde::{Deserialize, Serialize};

use crate::{Outcome, Verdict};

/// A figure with its unit.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Metric {
    /// Name, e.g. `decode-tok-s`.
    pub name: String,
    /// Value.
    pub value: f64,
    /// Unit, e.g. `tok/s`.
    pub unit: String,
}

/// One endpoint call made during a case, as the host saw it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CallRecord {
    /// `chat`, `complete`, or `judge` (a call to the run's judge).
    pub kind: String,
    /// `ok`, `lost`, `unauthorized`, `rejected`.
    pub result: String,
    /// HTTP status, when a response arrived.
    pub status: Option<u16>,
    /// Milliseconds from send to the end of the reply.
    pub total_ms: f64,
    /// Time to first content chunk (streamed calls).
    pub ttft_ms: Option<f64>,
    /// First to last content chunk (streamed calls).
    pub decode_ms: Option<f64>,
    /// Prompt tokens as the server counted them.
    pub prompt_tokens: Option<u32>,
    /// Completion tokens as the server counted them.
    pub completion_tokens: Option<u32>,
    /// Where the token counts came from: `server-usage`, `server-timings`,
    /// `none`.
    pub token_source: String,
    /// For calls sent together (1.1): what the server itself reported running
    /// while they were in flight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_load: Option<LoadWindow>,
    /// Prompt tokens the engine took from its prefix cache (1.2), where it
    /// reports them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u32>,
    /// Times the request was sent (1.2): more than 1 when the server asked
    /// the client to come back later (HTTP 429, 408, 503) and it did.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub attempts: u32,
    /// Counts the server sent that are not token counts (1.3), with their
    /// values (`completion_tokens = -5`); `token_source` is then `invalid`
    /// and those counts are null.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid_counts: Option<String>,
    /// For a request of an open-loop load (1.5): when it was meant to go,
    /// in milliseconds from the load's start (its instant in the seeded
    /// schedule; in a closed loop, when a slot came free for it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intended_ms: Option<f64>,
    /// For a request of an open-loop load (1.5): when it went, measured
    /// just before the send, from the same start; `sent_ms - intended_ms`
    /// is its send lag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent_ms: Option<f64>,
    /// A warm-up request of a load (1.5), kept out of its figures.
    #[serde(default, skip_serializing_if = "is_false")]
    pub warmup: bool,
}

fn one() -> u32 {
    1
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// Distribution of one latency over a case's calls (1.2), in milliseconds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Percentiles {
    /// Values the distribution holds.
    pub count: u32,
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest.
    pub max: f64,
}

impl Percentiles {
    /// Nearest-rank percentiles of `values`; None when empty or not finite.
    pub fn of(values: &[f64]) -> Option<Percentiles> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let rank = |p: f64| sparktest_stats::nearest_rank(&v, p).unwrap_or(f64::NAN);
        Some(Percentiles {
            count: u32::try_from(v.len()).unwrap_or(u32::MAX),
            mean: v.iter().sum::<f64>() / v.len() as f64,
            p50: rank(50.0),
            p90: rank(90.0),
            p99: rank(99.0),
            max: v[v.len() - 1],
        })
    }
}

/// Latency distributions over the calls of a case that timed several
/// (1.2), as `vllm bench serve` and GuideLLM report them.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Latency {
    /// Time to first token, over the streamed calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<Percentiles>,
    /// Inter-token latency: the gaps between content chunks, over every
    /// streamed call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub itl_ms: Option<Percentiles>,
    /// Request latency, send to last byte, over every answered call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e2e_ms: Option<Percentiles>,
}

/// The server's own view of its load while concurrent calls were in flight,
/// sampled by the host (llama.cpp `/slots`, vLLM and SGLang metrics).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct LoadWindow {
    /// What was read, e.g. `llama.cpp /slots is_processing`.
    pub source: String,
    /// Samples taken.
    pub samples: u32,
    /// Most requests the server ran at once.
    pub running_max: u32,
    /// Mean requests running over the samples.
    pub running_mean: f64,
    /// Most requests the server reported waiting, where it reports that.
    pub waiting_max: Option<u32>,
}

/// One finished case. `C` is what a reader keeps of each endpoint call
/// ([`crate::reader::File`]); the whole [`CallRecord`] by default.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CaseRecord<C = CallRecord> {
    /// `instrument::group::case`.
    pub id: String,
    /// Instrument name.
    pub instrument: String,
    /// Case name within the instrument (`group::case`).
    pub case: String,
    /// Board rows or categories this case feeds.
    pub tags: Vec<String>,
    /// How it ended.
    pub outcome: Outcome,
    /// Why it failed, was lost or was not applicable.
    pub reason: Option<String>,
    /// The instrument's figures.
    pub metrics: Vec<Metric>,
    /// The instrument's short facts.
    pub notes: Vec<(String, String)>,
    /// RFC 3339 UTC time the case started.
    pub started_at: String,
    /// Wall seconds of the whole case.
    pub seconds: f64,
    /// Seconds spent inside endpoint calls (the server's share).
    pub endpoint_seconds: f64,
    /// Every endpoint call, in order.
    pub calls: Vec<C>,
    /// Prompt tokens summed over the calls, where the server counted them.
    pub prompt_tokens: Option<u64>,
    /// Completion tokens summed over the calls, where the server counted them.
    pub completion_tokens: Option<u64>,
    /// sha256 of the case's transcript (every request and reply body, in
    /// order), so two runs can be compared without storing the text.
    pub transcript_sha256: String,
    /// Snapshot results: name and `match`, `new`, `changed`.
    pub snapshots: Vec<(String, String)>,
    /// The arm this case ran on (1.1), for paired instruments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arm: Option<String>,
    /// Latency distributions (1.2), when the case timed more than one call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<Latency>,
}

impl<C> CaseRecord<C> {
    /// The outcome and reason as one [`Verdict`].
    pub fn verdict(&self) -> Verdict {
        let reason = self.reason.clone().unwrap_or_default();
        match self.outcome {
            Outcome::Pass => Verdict::Pass,
            Outcome::Fail => Verdict::Fail(reason),
            Outcome::Lost => Verdict::Lost(reason),
            Outcome::NotApplicable => Verdict::NotApplicable(reason),
            Outcome::Interrupted => Verdict::Interrupted(reason),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        let p = Percentiles::of(&v).unwrap();
        assert_eq!((p.count, p.p50, p.p90, p.p99, p.max), (100, 50.0, 90.0, 99.0, 100.0));
        assert_eq!(p.mean, 50.5);
        let one = Percentiles::of(&[7.0]).unwrap();
        assert_eq!((one.p50, one.p99), (7.0, 7.0));
        assert!(Percentiles::of(&[f64::NAN]).is_none());
        assert!(Percentiles::of(&[]).is_none());
    }
}
