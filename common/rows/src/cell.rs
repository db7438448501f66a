//! What a row computes for one cell: the figure, its spread, its repeats,
//! or why there is none; and how figures are written.

use serde::Serialize;
use sparktest_record::Outcome;

pub use crate::{Spread, short};

use crate::run::{CaseRecord, Id, Run};

/// A computed figure for one cell.
#[derive(Debug, Clone)]
pub struct Figure {
    /// What standings are computed from.
    pub value: f64,
    /// What a reader sees.
    pub raw: String,
    /// The configuration line behind it.
    pub config: String,
    /// `run-id#case-id` of every record used.
    pub records: Vec<Id>,
    /// The figure's uncertainty from its own data, where it has one.
    pub spread: Option<Spread>,
    /// Set when the run behind it recorded fewer of the instrument's cases
    /// than its suite lists, or did not finish: what it covers.
    pub partial: Option<String>,
    /// For a pass/fail row: the items given (case ids) and those that
    /// passed, so repeats can say which passed in every run.
    pub items: Option<(Vec<String>, Vec<String>)>,
    /// Set when the figure is the median of a `--repeat` group's runs.
    pub repeats: Option<Repeats>,
}

/// The runs of a `--repeat N` group behind one cell: every
/// run's figure, which one the cell shows, and for pass/fail rows how many
/// items passed in every run, in some and in none.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Repeats {
    /// The group's name (`--repeat`'s group id).
    pub group: String,
    /// Every run of the group, in repeat order.
    pub runs: Vec<RepeatRun>,
    /// The repeat whose figure is the cell's: the median by value (the
    /// lower of the two middle ones for an even count).
    pub shown: u32,
    /// For a pass/fail row: how many items passed in every run, some, none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<RepeatItems>,
}

/// One run of a repeat group, as the cell reads it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RepeatRun {
    /// Its place in the group, from 1.
    pub index: u32,
    /// Its run id.
    pub run: String,
    /// Its figure; None when the run gave none (every case lost, say).
    pub value: Option<f64>,
    /// The figure as the cell's "runs:" list writes it (`21` for 21/24).
    pub short: String,
}

/// Items of a pass/fail row over a group's runs.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RepeatItems {
    /// Passed in every run.
    pub every: usize,
    /// Passed in some runs, not all.
    pub some: usize,
    /// Passed in none.
    pub none: usize,
}

/// Why a cell has no figure: not measured, what the records said, or that
/// the configuration cannot produce it.
pub enum Missing {
    /// No run on the column has a case that feeds the row.
    NotMeasured,
    /// The records say why there is no figure (every case lost, say).
    Because {
        /// Why, in words.
        reason: String,
        /// The records behind it.
        records: Vec<Id>,
    },
    /// The configuration cannot produce the figure at all (a standing of 0).
    Incapable {
        /// Why, in words.
        reason: String,
        /// The records behind it.
        records: Vec<Id>,
    },
}

/// For a row whose measurement the engine cannot produce at all: N/A
/// becomes a standing of 0 with the reason ("could not be tested: engine
/// returns no prompt logprobs"), below any measured figure, as the seed
/// ranks it.
pub fn incapable(m: Missing) -> Missing {
    match m {
        Missing::Because { reason, records } if reason.starts_with("not applicable: ") => {
            Missing::Incapable { reason: reason.replacen("not applicable: ", "could not be tested: ", 1), records }
        }
        other => other,
    }
}

/// Why no case gave a figure: that the server answered none of them (all
/// lost: nothing to score, so no standing, not even 0), else the first
/// N/A, lost or failed case's reason.
pub fn missing_from(run: &Run, cases: &[&CaseRecord]) -> Missing {
    if let Some(first) = cases.first().filter(|_| cases.iter().all(|c| c.outcome == Outcome::Lost)) {
        return Missing::Because {
            reason: format!(
                "could not be tested — the server did not answer ({} lost: {})",
                cases.len(),
                first.reason.as_deref().unwrap_or("no reason recorded")
            ),
            records: cases.iter().map(|c| run.record_id(c)).collect(),
        };
    }
    let pick = |o: Outcome| cases.iter().find(|c| c.outcome == o);
    let (label, case) = if let Some(c) = pick(Outcome::NotApplicable) {
        ("not applicable", c)
    } else if let Some(c) = pick(Outcome::Lost) {
        ("lost", c)
    } else if let Some(c) = pick(Outcome::Fail) {
        ("no valid figure", c)
    } else {
        return Missing::NotMeasured;
    };
    Missing::Because {
        reason: format!("{label}: {}", case.reason.as_deref().unwrap_or("")),
        records: cases.iter().map(|c| run.record_id(c)).collect(),
    }
}

/// 8192 → "8,192".
pub fn thousands(x: f64) -> String {
    let n = x.round() as i64;
    let s = n.abs().to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    if n < 0 { format!("-{out}") } else { out }
}
