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
//! - [`compared`]: the per-item metrics `diff` tests for a row.
//! - [`metric`], [`note`]: a record's metric or note by name.
//!
//! # Known limitations
//!
//! - The built-in rows whose figure needs code of its own (prose speed's
//!   blend, concurrency confirmed at the server, compliance's arms, the
//!   vision rows' "no vision" rule) still compute it in the board
//!   component; their titles, instruments and compared metrics are here.
#![warn(missing_docs)]

mod declaration;
mod figure;

pub use declaration::{BUILT_IN_TITLES, FieldError, check, feeds, settle};
pub use figure::{BOOTSTRAP_SEED, Computed, NoFigure, RESAMPLES, Spread, compared, declared, short};
pub use sparktest_record::{Better, FigureKind, RowDeclaration, Standing};

use sparktest_record::CaseRecord;

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
