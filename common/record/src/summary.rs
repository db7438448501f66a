//! The last line of a run that ended normally, and each instrument's
//! efficiency readout.

use serde::{Deserialize, Serialize};

use std::collections::BTreeMap;

use crate::{CaseRecord, Gate, Outcome};

/// The last line of a run that ended normally.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    /// RFC 3339 UTC end time.
    pub finished_at: String,
    /// Wall seconds of the cases (connecting and launching not included).
    pub seconds: f64,
    /// Cases passed.
    pub passed: u64,
    /// Cases failed.
    pub failed: u64,
    /// Cases lost.
    pub lost: u64,
    /// Cases not applicable.
    pub not_applicable: u64,
    /// Per instrument: the efficiency readout.
    #[serde(default)]
    pub instruments: Vec<InstrumentSummary>,
    /// For a gate suite (1.1, e.g. the configuration battery): passed only
    /// when every case passed; the others are named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<Gate>,
    /// Why the run stopped before its last case (1.2): credentials refused,
    /// or too many cases lost in a row. The cases it did not run are
    /// recorded as lost with this reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// The harness was stopped by a signal (1.3), e.g. `SIGINT`: the run is
    /// unfinished. The case in flight is recorded `interrupted`, no later
    /// case was started, and `--resume` runs what is left.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<String>,
    /// Cases interrupted (1.3).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub interrupted_cases: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One instrument's efficiency readout over a run: how much time and output
/// a correct answer cost.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct InstrumentSummary {
    /// Instrument name.
    pub name: String,
    /// Cases given (all outcomes).
    pub given: u64,
    /// Cases passed.
    pub correct: u64,
    /// Cases failed.
    pub failed: u64,
    /// Cases lost.
    pub lost: u64,
    /// Cases not applicable.
    pub not_applicable: u64,
    /// Mean wall seconds per case.
    pub mean_seconds: f64,
    /// Completion tokens over all cases divided by correct answers; None
    /// when nothing was correct or the server counted no tokens.
    pub output_tokens_per_correct: Option<f64>,
    /// Mean seconds per case spent in the harness and the instrument, not
    /// waiting on the server.
    pub mean_harness_seconds: f64,
}

/// Each instrument's efficiency readout, summed from its cases: the host
/// adds each case as it finishes, and a reader that reads several files as
/// one run (the parts of a partition, a run and its resumes) adds the cases
/// it kept, so the readout always says what the run's records say.
#[derive(Debug, Clone, Default)]
pub struct Efficiency {
    per_instrument: BTreeMap<String, Sums>,
}

#[derive(Debug, Clone, Default)]
struct Sums {
    passed: u64,
    failed: u64,
    lost: u64,
    not_applicable: u64,
    interrupted: u64,
    seconds: f64,
    harness_seconds: f64,
    completion_tokens: u64,
    counted_tokens: bool,
}

impl Efficiency {
    /// Count one finished case.
    pub fn add<C>(&mut self, record: &CaseRecord<C>) {
        let s = self.per_instrument.entry(record.instrument.clone()).or_default();
        match record.outcome {
            Outcome::Pass => s.passed += 1,
            Outcome::Fail => s.failed += 1,
            Outcome::Lost => s.lost += 1,
            Outcome::NotApplicable => s.not_applicable += 1,
            Outcome::Interrupted => s.interrupted += 1,
        }
        s.seconds += record.seconds;
        s.harness_seconds += (record.seconds - record.endpoint_seconds).max(0.0);
        if let Some(n) = record.completion_tokens {
            s.completion_tokens += n;
            s.counted_tokens = true;
        }
    }

    /// The readout of every instrument counted, by name.
    pub fn summaries(&self) -> Vec<InstrumentSummary> {
        self.per_instrument
            .iter()
            .map(|(name, s)| {
                // An interrupted case was given to no one.
                let given = s.passed + s.failed + s.lost + s.not_applicable;
                let per = |x: f64| if given == 0 { 0.0 } else { x / given as f64 };
                InstrumentSummary {
                    name: name.clone(),
                    given,
                    correct: s.passed,
                    failed: s.failed,
                    lost: s.lost,
                    not_applicable: s.not_applicable,
                    mean_seconds: per(s.seconds),
                    output_tokens_per_correct: (s.passed > 0 && s.counted_tokens)
                        .then(|| s.completion_tokens as f64 / s.passed as f64),
                    mean_harness_seconds: per(s.harness_seconds),
                }
            })
            .collect()
    }
}
