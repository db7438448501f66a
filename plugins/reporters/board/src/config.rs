//! The board's config (`board.toml` → JSON) and judged rows.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use sparktest_rows::Rule;

/// A row's scoring, as configured.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RowConfig {
    /// Override the rule.
    pub rule: Option<Rule>,
    /// Override the relative tie margin (0.01 = 1%).
    pub tie_margin: Option<f64>,
    /// Leave the row off the board.
    #[serde(default)]
    pub hidden: bool,
}

/// The reporter's config.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Config {
    /// The board's title.
    pub title: Option<String>,
    /// Per-row overrides, by row title.
    #[serde(default)]
    pub rows: BTreeMap<String, RowConfig>,
}

/// A judged row: a researched judgement per column, not a measurement.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct JudgedRow {
    pub title: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub cell: Vec<Judgement>,
}

/// One judged cell.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Judgement {
    /// The column: a target name as the measurement files give it.
    pub column: String,
    pub standing: f64,
    pub raw: String,
    pub reason: String,
}

/// The judgements file (`judgements.json`, from the user's TOML).
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Judgements {
    #[serde(default)]
    pub row: Vec<JudgedRow>,
    /// Whether a judgements file was given at all (a seed row it leaves
    /// out says which).
    #[serde(skip)]
    pub given: bool,
}

/// Published figures read elsewhere (`board --references FILE`): drawn
/// apart from the measured columns, never scored, never mixed into a
/// measured cell (seed 000's "Evidence": what was read, not measured).
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct References {
    #[serde(default)]
    pub reference: Vec<Reference>,
}

/// One published configuration: its figures, where and when they were
/// published.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    /// Its name on the board, e.g. "RTX 5090 · vLLM 0.11 · FP8".
    pub label: String,
    /// Where the figures were read: a URL or a citation.
    pub source: String,
    /// When they were published (or read): `YYYY-MM-DD`.
    pub date: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(default)]
    pub figure: Vec<ReferenceFigure>,
}

/// One published figure, as its source gives it.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ReferenceFigure {
    /// The board row it stands beside.
    pub row: String,
    /// The figure as published ("182 tok/s, batch 1").
    pub raw: String,
    /// Where this figure was read, when not the reference's own source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// When, where not the reference's own date.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
}

/// A date as `YYYY-MM-DD`, `YYYY-MM` or `YYYY`.
pub fn is_date(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    let digits = |p: &str, n: usize| p.len() == n && p.bytes().all(|b| b.is_ascii_digit());
    match parts.as_slice() {
        [y] => digits(y, 4),
        [y, m] => digits(y, 4) && digits(m, 2),
        [y, m, d] => digits(y, 4) && digits(m, 2) && digits(d, 2),
        _ => false,
    }
}
