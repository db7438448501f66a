//! The board's rows as data, and their figures: one crate, built for the
//! host (`diff`, the terminal summary, the suite loader) and for the board
//! component alike, so that a row is declared once and computed the same
//! way everywhere.
//!
//! - [`check`], [`feeds`], [`settle`]: a declared row
//!   ([`RowDeclaration`], a suite's `[[row]]`) read field by field, the
//!   cases that feed it, and the declarations of many runs settled into
//!   one list, a title to a row, built-in titles kept.
//! - [`declared`]: a declared row's figure over one run's cases, with its
//!   interval: the share passed (Wilson), a metric's mean or nearest-rank
//!   percentile (seeded bootstrap), or the highest value held.
//! - [`Spread`], [`short`]: a figure's uncertainty and how a figure is
//!   written, for every row.
//! - [`compared`]: the per-item metrics `diff` tests for a row;
//!   [`by_requests`]: a figure one record gives once, whose samples are
//!   its requests (Sustained load's).
//! - [`metric`], [`note`]: a record's metric or note by name.
//! - [`run`]: the runs a board reads (a measurement file, or the parts and
//!   resumes of one run read as one), their columns, and which run a row
//!   reads.
//! - [`coded`]: every row of a board ([`coded::all`]): the built-in
//!   rows whose figure needs code of its own, one module per instrument
//!   (named as the instrument, `spec-decode` is `spec_decode`), then the
//!   rows the runs' suites declare.
//! - [`cell`]: what a row gives a column: a [`cell::Figure`] or why there is
//!   none ([`cell::Missing`]).
#![warn(missing_docs)]

pub mod cell;
pub mod coded;
mod declaration;
mod figure;
pub mod run;

pub use coded::{ByRequests, by_requests};
pub use declaration::{BUILT_IN_TITLES, Declared, FieldError, Settled, check, declared_by, feeds, settle};
pub use figure::{BOOTSTRAP_SEED, Computed, NoFigure, RESAMPLES, Spread, compared, declared, short};
pub use sparktest_record::{Better, FigureKind, RowDeclaration, Standing};

use sparktest_record::CaseRecord;

/// How a row's figures become standings.
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    /// 10 × figure ÷ best (higher is better) or 10 × best ÷ figure (lower is
    /// better), to the nearest half point; figures within the tie margin of
    /// each other share a standing.
    Relative,
    /// The figure is already a 0–10 standing (long-prompt points, the gate).
    Absolute,
    /// The figure is a speed-up ratio; the standing is on the gain (ratio −
    /// 1; none for a slowdown): 10 × gain ÷ best gain. Ratios within the
    /// tie margin of each other share a standing.
    Gain,
    /// The figure is a share from 0 to 1 (complied, mean reading score);
    /// the standing is 10 × it, to one decimal, as the seed shows it.
    Fraction,
}

/// A record's metric by name, when it holds it.
pub fn metric<C>(c: &CaseRecord<C>, name: &str) -> Option<f64> {
    c.metrics.iter().find(|m| m.name == name).map(|m| m.value)
}

/// A record's note by key, when it holds it.
pub fn note<'a, C>(c: &'a CaseRecord<C>, key: &str) -> Option<&'a str> {
    c.notes.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

#[cfg(test)]
mod test_case {
    use sparktest_record::{CaseRecord, Outcome};

    pub(crate) fn case(id: &str, outcome: Outcome, metric: Option<f64>) -> CaseRecord<()> {
        CaseRecord {
            id: format!("capitals::{id}"),
            instrument: "capitals".into(),
            case: id.into(),
            tags: vec![],
            outcome,
            reason: None,
            metrics: metric
                .map(|v| sparktest_record::Metric { name: "ms".into(), value: v, unit: "ms".into() })
                .into_iter()
                .collect(),
            notes: vec![],
            started_at: String::new(),
            seconds: 0.0,
            endpoint_seconds: 0.0,
            calls: vec![],
            prompt_tokens: None,
            completion_tokens: None,
            transcript_sha256: String::new(),
            snapshots: vec![],
            arm: None,
            latency: None,
        }
    }
}
