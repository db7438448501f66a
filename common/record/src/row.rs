//! A board row declared as data (1.7): what a suite's `[[row]]` table says,
//! copied into the manifest of every run of that suite, so that a reporter
//! reading only measurement files knows the row, its figure and its rule.
//! `sparktest-rows` computes the figures; the book's "Declaring a row"
//! documents the fields.

use serde::{Deserialize, Serialize};

/// One declared row.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RowDeclaration {
    /// The row's title, as the board prints it; unique on a board.
    pub title: String,
    /// The instrument whose records feed it (its name, the first segment
    /// of its case ids).
    pub instrument: String,
    /// How the row measures, for the board's methodology; empty: the
    /// instrument's own description.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub methodology: String,
    /// What the figure is.
    pub figure: FigureKind,
    /// The metric a figure of a metric is computed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    /// The figure's unit, as the cell writes it (`ms`, `tok/s`); empty: the
    /// unit the records give the metric.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub unit: String,
    /// Which way is better.
    #[serde(default)]
    pub better: Better,
    /// How the figure becomes a 0–10 standing.
    #[serde(default)]
    pub standing: Standing,
    /// Relative figures within this share of each other tie (0 to <1).
    #[serde(default)]
    pub tie_margin: f64,
    /// Only cases carrying one of these tags feed the row; empty: every
    /// case of the instrument.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Only cases of these groups (the first segment of a case name,
    /// `country` in `country::france`) feed the row; empty: every group.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    /// The suite that declared it, as `name@version` (the host writes it).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub declared_by: String,
}

/// What a declared row's figure is: a small closed set.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum FigureKind {
    /// The share of the answered items that passed, with its Wilson
    /// interval (lm-eval's `acc`).
    PassShare,
    /// The mean of a metric over the passed cases, with a bootstrap
    /// interval.
    Mean,
    /// The nearest-rank percentile (1–99; 50 is the median) of a metric
    /// over the passed cases, with a bootstrap interval.
    Percentile(u8),
    /// The highest value of a metric over the passed cases (a load's
    /// sustained rate): one figure, no interval.
    Highest,
}

impl FigureKind {
    /// The kinds as the suite file spells them.
    pub const SPELLINGS: &'static str = "pass-share, mean, median, p1 … p99, highest";

    /// Whether the figure is computed from a metric.
    pub fn needs_metric(self) -> bool {
        self != FigureKind::PassShare
    }
}

impl TryFrom<String> for FigureKind {
    type Error = String;

    fn try_from(s: String) -> Result<FigureKind, String> {
        let kind = match s.as_str() {
            "pass-share" => Some(FigureKind::PassShare),
            "mean" => Some(FigureKind::Mean),
            "median" => Some(FigureKind::Percentile(50)),
            "highest" => Some(FigureKind::Highest),
            p => p
                .strip_prefix('p')
                .filter(|n| !n.starts_with('0'))
                .and_then(|n| n.parse::<u8>().ok())
                .filter(|n| (1..=99).contains(n))
                .map(FigureKind::Percentile),
        };
        kind.ok_or_else(|| format!("figure {s:?} is none of {}", FigureKind::SPELLINGS))
    }
}

impl From<FigureKind> for String {
    fn from(k: FigureKind) -> String {
        match k {
            FigureKind::PassShare => "pass-share".into(),
            FigureKind::Mean => "mean".into(),
            FigureKind::Percentile(50) => "median".into(),
            FigureKind::Percentile(p) => format!("p{p}"),
            FigureKind::Highest => "highest".into(),
        }
    }
}

/// Which way a figure is better.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Better {
    /// Higher is better (a pass share, a rate).
    #[default]
    Higher,
    /// Lower is better (a latency, bits per character).
    Lower,
}

/// How a declared figure becomes a standing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Standing {
    /// 10 × figure ÷ best (best ÷ figure where lower is better), to the
    /// nearest half point, within the row.
    #[default]
    Relative,
    /// 10 × the share itself, to one decimal: for a pass share only.
    Fraction,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figure_kinds_read_as_spelled_and_nothing_else() {
        let kind = |s: &str| FigureKind::try_from(s.to_string());
        assert_eq!(kind("pass-share"), Ok(FigureKind::PassShare));
        assert_eq!(kind("median"), Ok(FigureKind::Percentile(50)));
        assert_eq!(kind("p90"), Ok(FigureKind::Percentile(90)));
        for bad in ["p0", "p100", "p050", "P90", "avg", ""] {
            assert!(kind(bad).unwrap_err().contains("is none of"), "{bad}");
        }
        for k in [FigureKind::PassShare, FigureKind::Mean, FigureKind::Percentile(50), FigureKind::Percentile(95)] {
            assert_eq!(kind(&String::from(k)), Ok(k));
        }
    }
}
