//! The last line of a run that ended normally, and each instrument's
//! efficiency readout.

use serde::{Deserialize, Serialize};

use crate::Gate;

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
