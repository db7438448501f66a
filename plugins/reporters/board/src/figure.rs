//! What a row computes for one cell: the figure, its spread, its repeats,
//! or why there is none; and how figures are written.

use serde::Serialize;
use sparktest_record::Outcome;

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

/// The runs of a `--repeat N` group behind one cell (issue 21): every
/// run's figure, which one the cell shows, and for pass/fail rows how many
/// items passed in every run, in some and in none.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Repeats {
    pub group: String,
    pub runs: Vec<RepeatRun>,
    /// The repeat whose figure is the cell's: the median by value (the
    /// lower of the two middle ones for an even count).
    pub shown: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<RepeatItems>,
}

/// One run of a repeat group, as the cell reads it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RepeatRun {
    pub index: u32,
    pub run: String,
    /// Its figure; None when the run gave none (every case lost, say).
    pub value: Option<f64>,
    /// The figure as the cell's "runs:" list writes it (`21` for 21/24).
    pub short: String,
}

/// Items of a pass/fail row over a group's runs.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RepeatItems {
    pub every: usize,
    pub some: usize,
    pub none: usize,
}

/// A cell's uncertainty, from its own data (issue 21): the standing is
/// unchanged; this is shown beside the raw figure.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Spread {
    /// A k/n figure: the Wilson 95% score interval of the proportion
    /// (Wilson 1927).
    Wilson { k: u64, n: u64, low: f64, high: f64 },
    /// Several samples of one figure (the repetitions of each speed
    /// category): a 95% percentile bootstrap interval of the figure,
    /// each category's samples resampled on its own, seeded.
    Bootstrap { low: f64, high: f64, samples: usize, resamples: usize, seed: u64 },
    /// The repeats of a `--repeat N` group: the lowest and highest of the
    /// runs' figures. With a handful of runs this range is what the data
    /// say; no distribution is assumed.
    Runs { low: f64, high: f64, runs: usize },
    /// One sample and no spread: no interval can be computed from the
    /// cell's data, and none is invented.
    OneSample { note: String },
}

impl Spread {
    /// The Wilson 95% interval of `k` of `n`; None when `n` is 0.
    pub fn wilson(k: usize, n: usize) -> Option<Spread> {
        let (k, n) = (k as u64, n as u64);
        sparktest_stats::wilson(k, n, sparktest_stats::Z95).map(|i| Spread::Wilson { k, n, low: i.low, high: i.high })
    }

    /// The words beside the raw figure.
    pub fn words(&self) -> String {
        match self {
            Spread::Wilson { low, high, .. } => format!("95% CI {:.0}–{:.0}%", low * 100.0, high * 100.0),
            Spread::Bootstrap { low, high, samples, .. } => {
                let mut w = format!("95% bootstrap CI {}–{} over {samples} samples", short(*low), short(*high));
                // A percentile bootstrap over so few samples is too narrow
                // (sparktest-stats' known limitation; `diff` says the same).
                if *samples < 10 {
                    w.push_str(": too few to bootstrap, likely too narrow");
                }
                w
            }
            Spread::Runs { low, high, runs } => format!("range over {runs} runs {}–{}", short(*low), short(*high)),
            Spread::OneSample { note } => note.clone(),
        }
    }

    /// The interval in the figure's own units, where there is one.
    pub fn interval(&self) -> Option<(f64, f64)> {
        match self {
            Spread::Wilson { low, high, .. } | Spread::Bootstrap { low, high, .. } | Spread::Runs { low, high, .. } => {
                Some((*low, *high))
            }
            Spread::OneSample { .. } => None,
        }
    }
}

/// Why a cell has no figure: not measured, what the records said, or that
/// the configuration cannot produce it.
pub enum Missing {
    NotMeasured,
    Because { reason: String, records: Vec<Id> },
    Incapable { reason: String, records: Vec<Id> },
}

/// A figure to three significant digits, trailing zeros dropped.
pub fn short(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let digits = (2 - x.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{x:.digits$}");
    if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s }
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
