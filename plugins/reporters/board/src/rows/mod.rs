//! The rows of the scorecard, one module per instrument (named as the
//! instrument, `spec-decode` is `spec_decode`): which records feed each
//! row, how its figure is computed, and which way is better. Each row reads
//! the latest run of its instrument on the column's target, by the names in
//! `sparktest-contract`. A new row is a module here and its line in
//! [`ROWS`].

use sparktest_record::Outcome;
use sparktest_sdk::contract::{Metric, Row, vision};

use crate::config::Rule;
use crate::figure::{Figure, Missing, Spread, incapable, missing_from, thousands};
use crate::run::{CaseRecord, Run, Runs, config_line, latest, mean, metric, note, pick, pick_by};

mod a_bench;
mod adversarial;
mod compliance;
mod concurrency;
mod context;
mod corruption;
mod footprint;
mod hard_question;
mod likelihood;
mod long_prompt;
mod media;
mod ocr;
mod repro;
mod screenshots;
mod spec_decode;
mod speed;
pub mod sustained_load;

/// One row's definition.
pub struct RowDef {
    /// The row's title, from the contract.
    pub title: &'static str,
    /// The instrument whose records feed it (its `describe` is the row's
    /// methodology).
    pub instrument: &'static str,
    pub higher_better: bool,
    pub rule: Rule,
    pub tie_margin: f64,
    /// For absolute rows: how the figure is a standing.
    pub absolute_rule: &'static str,
    pub figure: fn(&Runs, &str) -> Result<Figure, Missing>,
}

const fn relative(
    row: Row,
    higher_better: bool,
    tie_margin: f64,
    figure: fn(&Runs, &str) -> Result<Figure, Missing>,
) -> RowDef {
    RowDef {
        title: row.title,
        instrument: row.instrument,
        higher_better,
        rule: Rule::Relative,
        tie_margin,
        absolute_rule: "",
        figure,
    }
}

const fn absolute(row: Row, absolute_rule: &'static str, figure: fn(&Runs, &str) -> Result<Figure, Missing>) -> RowDef {
    RowDef {
        title: row.title,
        instrument: row.instrument,
        higher_better: true,
        rule: Rule::Absolute,
        tie_margin: 0.0,
        absolute_rule,
        figure,
    }
}

const fn fraction(row: Row, what: &'static str, figure: fn(&Runs, &str) -> Result<Figure, Missing>) -> RowDef {
    RowDef {
        title: row.title,
        instrument: row.instrument,
        higher_better: true,
        rule: Rule::Fraction,
        tie_margin: 0.0,
        absolute_rule: what,
        figure,
    }
}

/// Every measured row, in the seed's order (then this tool's own rows).
/// A judged row takes its place by title (Fine-tune path after
/// Long-prompt robustness).
pub const ROWS: &[RowDef] = &[
    a_bench::AGENT_TASKS,
    a_bench::TOOLS,
    a_bench::MULTI_TURN,
    adversarial::RELIABILITY,
    compliance::BARE,
    compliance::AGENT,
    compliance::SEVERE,
    compliance::SEVERE_AGENT,
    likelihood::BITS_PER_CHARACTER,
    speed::PROSE_SPEED,
    concurrency::CONCURRENCY,
    sustained_load::SUSTAINED_LOAD,
    spec_decode::SPECULATIVE_DECODING,
    repro::REPRODUCIBILITY,
    context::CONTEXT_WINDOW,
    footprint::BOX_FOOTPRINT,
    ocr::HANDWRITING,
    long_prompt::ROBUSTNESS,
    screenshots::READING,
    media::SHARES_A_BOX,
    corruption::PROBE,
    hard_question::BATTERY,
];

/// Where a row of another name (a judged one) goes among the measured rows:
/// after this title.
pub const JUDGED_AFTER: &[(&str, &str)] = &[("Fine-tune path", sparktest_sdk::contract::long_prompt::ROW.title)];

fn figure(run: &Run, value: f64, raw: String, cases: &[&CaseRecord]) -> Figure {
    Figure {
        value,
        raw,
        config: run.config(),
        records: cases.iter().map(|c| run.record_id(c)).collect(),
        // A figure from one record has nothing to spread over.
        spread: (cases.len() == 1)
            .then(|| Spread::OneSample { note: "one sample, no spread: no interval can be computed".into() }),
        partial: coverage(run, cases),
        items: None,
        repeats: None,
    }
}

/// What a figure covers when it is less than its suite: the instrument's
/// cases recorded (every part and resume merged) against the number its
/// suite lists, parts missing, items lost (never counted as answers), a
/// run stopped early or never finished. None when whole, or when the
/// records do not say (files older than the count).
fn coverage(run: &Run, cases: &[&CaseRecord]) -> Option<String> {
    let instrument = &cases.first()?.instrument;
    let mut gaps = Vec::new();
    if let Some(&total) = run.manifest.suite_cases.get(instrument) {
        let recorded = run.recorded(instrument);
        if recorded < total {
            gaps.push(format!("{recorded} of {total} {instrument} cases recorded"));
        }
    }
    let lost = cases.iter().filter(|c| c.outcome == Outcome::Lost).count();
    if lost > 0 {
        gaps.push(format!("{lost} lost, not counted"));
    }
    match &run.summary {
        None => gaps.push("run not finished".into()),
        Some(s) => {
            if let Some(signal) = &s.interrupted {
                gaps.push(format!("interrupted by {signal}"));
            } else if let Some(why) = &s.stopped {
                gaps.push(format!("stopped early: {why}"));
            }
        }
    }
    (!gaps.is_empty()).then(|| format!("partial: {}", gaps.join("; ")))
}

fn has(run: &Run, instrument: &str) -> bool {
    run.measured().any(|c| c.instrument == instrument)
}

/// Correct over answered: not-applicable cases left out, lost cases
/// counted apart and never in the denominator (the cell is then partial);
/// a run that answered nothing is N/A, never 0. Then what the instrument
/// adds (`detail`: its words after the count, or why the cell cannot be
/// measured).
fn pass_rate(
    runs: &Runs,
    col: &str,
    instrument: &str,
    tag: Option<&str>,
    detail: fn(&Run, &[&CaseRecord]) -> Result<String, Missing>,
) -> Result<Figure, Missing> {
    let matches = |c: &CaseRecord| c.instrument == instrument && tag.is_none_or(|t| c.tags.iter().any(|x| x == t));
    let run = pick(runs, col, |r| r.measured().any(matches)).ok_or(Missing::NotMeasured)?;
    let cases: Vec<&CaseRecord> = run.measured().filter(|c| matches(c)).collect();
    let given: Vec<&CaseRecord> = cases.iter().copied().filter(|c| c.outcome != Outcome::NotApplicable).collect();
    if given.is_empty() {
        return Err(missing_from(run, &cases));
    }
    let answered: Vec<&CaseRecord> = given.iter().copied().filter(|c| c.outcome != Outcome::Lost).collect();
    if answered.is_empty() {
        return Err(missing_from(run, &given));
    }
    let detail = detail(run, &answered)?;
    let passed = answered.iter().filter(|c| c.outcome == Outcome::Pass).count();
    let lost = given.len() - answered.len();
    let mut raw = format!("{passed}/{} correct", answered.len());
    if lost > 0 {
        raw.push_str(&format!(" of answered · {lost} lost"));
    }
    raw.push_str(&detail);
    let mut f = figure(run, passed as f64 / answered.len() as f64, raw, &given);
    f.spread = Spread::wilson(passed, answered.len());
    f.items = Some((
        answered.iter().map(|c| c.id.clone()).collect(),
        answered.iter().filter(|c| c.outcome == Outcome::Pass).map(|c| c.id.clone()).collect(),
    ));
    Ok(f)
}

/// A vision row's cases, or 0 with the reason when the build cannot read
/// images at all.
fn vision_cases<'a>(runs: &'a Runs, col: &str, instrument: &'a str) -> Result<(&'a Run, Vec<&'a CaseRecord>), Missing> {
    let run = pick(runs, col, |r| has(r, instrument)).ok_or(Missing::NotMeasured)?;
    let cases: Vec<&CaseRecord> = run.cases_of(instrument).collect();
    let refused = cases.iter().filter(|c| note(c, vision::VISION) == Some(vision::NONE)).count();
    if refused > 0 && refused == cases.len() {
        let status = cases
            .iter()
            .find_map(|c| c.calls.first().and_then(|k| k.status))
            .map_or(String::new(), |s| format!("HTTP {s}, "));
        return Err(Missing::Incapable {
            reason: format!(
                "no vision in this build - images rejected ({status}all {})",
                if instrument == sparktest_sdk::contract::ocr::INSTRUMENT { "pages" } else { "items" }
            ),
            records: cases.iter().map(|c| run.record_id(c)).collect(),
        });
    }
    Ok((run, cases))
}

fn one_case<'a>(runs: &'a Runs, col: &str, instrument: &'a str) -> Result<(&'a Run, &'a CaseRecord), Missing> {
    let run = pick(runs, col, |r| has(r, instrument)).ok_or(Missing::NotMeasured)?;
    let cases: Vec<&CaseRecord> = run.cases_of(instrument).collect();
    match cases.iter().find(|c| c.outcome == Outcome::Pass) {
        Some(c) => Ok((run, c)),
        None => Err(missing_from(run, &cases)),
    }
}

/// A metric the row needs, present and finite.
fn finite(run: &Run, c: &CaseRecord, name: Metric) -> Result<f64, Missing> {
    metric(c, name).filter(|v| v.is_finite()).ok_or_else(|| Missing::Because {
        reason: format!("the record has no finite {name}"),
        records: vec![run.record_id(c)],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_board_shows_the_contracts_rows_in_its_order() {
        let board: Vec<(&str, &str)> = ROWS.iter().map(|d| (d.title, d.instrument)).collect();
        let contract: Vec<(&str, &str)> =
            sparktest_sdk::contract::ROWS.iter().map(|r| (r.title, r.instrument)).collect();
        assert_eq!(board, contract);
    }
}
