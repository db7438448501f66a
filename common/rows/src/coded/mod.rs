//! The rows of the scorecard. The built-in rows whose figure needs code of
//! its own are one module per instrument (named as the instrument,
//! `spec-decode` is `spec_decode`): which records feed each row, how its
//! figure is computed, and which way is better, by the names in
//! `sparktest-contract`. Every other row is declared as data by its suite
//! (`[[row]]`, carried in each run's manifest) and computed by
//! `sparktest-rows` (the private `declared` here). Each row reads the latest run of its
//! instrument on the column's target.

use std::borrow::Cow;

use crate::NoFigure;
use sparktest_contract::{Metric, Row, vision};
use sparktest_record::{Better, Outcome, RowDeclaration, Standing};

use crate::Rule;
use crate::cell::{Figure, Missing, Spread, incapable, missing_from, thousands};
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
#[derive(Clone)]
pub struct RowDef {
    /// The row's title, from the contract or its declaration.
    pub title: Cow<'static, str>,
    /// The instrument whose records feed it (its `describe` is the row's
    /// methodology, unless its declaration gives one).
    pub instrument: Cow<'static, str>,
    /// Whether a higher figure is better.
    pub higher_better: bool,
    /// How its figures become standings.
    pub rule: Rule,
    /// Figures this close (as a share of the better one) share a standing.
    pub tie_margin: f64,
    /// For absolute rows: how the figure is a standing.
    pub absolute_rule: &'static str,
    /// How its figure is computed.
    pub compute: Compute,
}

/// How a row's figure is computed.
#[derive(Clone)]
pub enum Compute {
    /// By a built-in row's own code.
    Code(fn(&Runs, &str) -> Result<Figure, Missing>),
    /// From its declaration, by `sparktest-rows`.
    Declared(Box<RowDeclaration>),
}

impl RowDef {
    /// The row's figure for one column, or why there is none.
    pub fn figure(&self, runs: &Runs, col: &str) -> Result<Figure, Missing> {
        match &self.compute {
            Compute::Code(f) => f(runs, col),
            Compute::Declared(d) => declared(d, runs, col),
        }
    }

    /// Its methodology, where its declaration gives one.
    pub fn methodology(&self) -> Option<&str> {
        match &self.compute {
            Compute::Declared(d) if !d.methodology.is_empty() => Some(&d.methodology),
            _ => None,
        }
    }
}

/// Every row of a board: the built-in ones in the seed's order, then each
/// row the runs' suites declare, in first-seen order; a title names one
/// row ([`crate::settle`]: a declaration only of the suite its run ran, the
/// first of two declarations of one title kept). The host names each
/// declaration left out; [`declared_rows`] gives the words.
pub fn all(runs: &Runs) -> Vec<RowDef> {
    ROWS.iter().cloned().chain(declared_rows(runs).rows.into_iter().map(RowDef::declared)).collect()
}

/// The rows the runs' suites declare, settled ([`crate::settle`]).
pub fn declared_rows(runs: &Runs) -> crate::Settled {
    crate::settle(runs.iter().flat_map(|r| {
        let m = &r.manifest;
        m.rows.iter().map(move |d| (d, m.suite.name.as_str(), format!("run {}", m.run_id)))
    }))
}

impl RowDef {
    fn declared(d: RowDeclaration) -> RowDef {
        let fraction = d.standing == Standing::Fraction;
        RowDef {
            title: Cow::Owned(d.title.clone()),
            instrument: Cow::Owned(d.instrument.clone()),
            higher_better: d.better == Better::Higher,
            rule: if fraction { Rule::Fraction } else { Rule::Relative },
            tie_margin: d.tie_margin,
            absolute_rule: if fraction { "the share passed" } else { "" },
            compute: Compute::Declared(Box::new(d)),
        }
    }
}

/// A declared row's figure: the latest run on the column whose suite
/// declares the row (another suite running the same instrument, a smoke
/// test say, feeds it nothing) with a case that feeds it, computed by
/// `sparktest-rows`.
fn declared(d: &RowDeclaration, runs: &Runs, col: &str) -> Result<Figure, Missing> {
    let feeds = |c: &CaseRecord| crate::feeds(d, c);
    // Its own suite's declaration: a file of another suite that carries
    // the row (a forged `declared_by`) feeds it nothing.
    let declares =
        |r: &Run| r.manifest.rows.iter().any(|x| x.title == d.title && crate::declared_by(x, &r.manifest.suite.name));
    let run = pick(runs, col, |r| declares(r) && r.measured().any(feeds)).ok_or(Missing::NotMeasured)?;
    let cases: Vec<&CaseRecord> = run.measured().filter(|c| feeds(c)).collect();
    match crate::declared(d, &cases) {
        Ok(c) => {
            let mut f = figure(run, c.value, c.raw, &cases);
            if c.spread.is_some() {
                f.spread = c.spread;
            } else if d.figure == crate::FigureKind::Highest {
                f.spread = Some(Spread::OneSample { note: "the highest held: one figure, no interval".into() });
            }
            f.items = c.items;
            Ok(f)
        }
        Err(NoFigure::NoneGiven) => Err(missing_from(run, &cases)),
        Err(NoFigure::NoMetric(reason)) => {
            Err(Missing::Because { reason, records: cases.iter().map(|c| run.record_id(c)).collect() })
        }
    }
}

const fn relative(
    row: Row,
    higher_better: bool,
    tie_margin: f64,
    figure: fn(&Runs, &str) -> Result<Figure, Missing>,
) -> RowDef {
    RowDef {
        title: Cow::Borrowed(row.title),
        instrument: Cow::Borrowed(row.instrument),
        higher_better,
        rule: Rule::Relative,
        tie_margin,
        absolute_rule: "",
        compute: Compute::Code(figure),
    }
}

const fn absolute(row: Row, absolute_rule: &'static str, figure: fn(&Runs, &str) -> Result<Figure, Missing>) -> RowDef {
    RowDef {
        title: Cow::Borrowed(row.title),
        instrument: Cow::Borrowed(row.instrument),
        higher_better: true,
        rule: Rule::Absolute,
        tie_margin: 0.0,
        absolute_rule,
        compute: Compute::Code(figure),
    }
}

const fn fraction(row: Row, what: &'static str, figure: fn(&Runs, &str) -> Result<Figure, Missing>) -> RowDef {
    RowDef {
        title: Cow::Borrowed(row.title),
        instrument: Cow::Borrowed(row.instrument),
        higher_better: true,
        rule: Rule::Fraction,
        tie_margin: 0.0,
        absolute_rule: what,
        compute: Compute::Code(figure),
    }
}

/// Every built-in row, in the order the board shows them: the seed's
/// order, then this tool's own rows. The one list: `diff` and every other
/// reader of measurement files knows the built-in rows from it (a
/// third-party instrument's rows are declared by its suite). A judged row
/// takes its place by title (Fine-tune path after Long-prompt robustness).
pub const ROWS: &[RowDef] = &[
    a_bench::AGENT_TASKS,
    a_bench::TOOLS,
    a_bench::MULTI_TURN,
    adversarial::ROW,
    compliance::BARE,
    compliance::AGENT,
    compliance::SEVERE,
    compliance::SEVERE_AGENT,
    likelihood::ROW,
    speed::ROW,
    concurrency::ROW,
    sustained_load::ROW,
    spec_decode::ROW,
    repro::ROW,
    context::ROW,
    footprint::ROW,
    ocr::ROW,
    long_prompt::ROW,
    screenshots::ROW,
    media::ROW,
    corruption::ROW,
    hard_question::ROW,
];

/// A row's figure that `diff` tests by resampling requests, not items:
/// one record gives one figure, and its requests are its samples.
#[derive(Debug, Clone, Copy)]
pub struct ByRequests {
    /// The metric it compares.
    pub metric: &'static str,
    /// Its unit.
    pub unit: &'static str,
    /// Whether higher is better.
    pub higher_better: bool,
    /// How the interval is taken, as `diff`'s report names it.
    pub method: &'static str,
    /// A record's requests, or None when the record is not one this
    /// figure reads (or cannot be trusted).
    pub read: fn(&sparktest_record::CaseRecord) -> Option<sustained_load::requests::Sweep>,
}

/// The figure of the row titled `title` that `diff` resamples by
/// requests, where it has one (Sustained load's `sustained-req-s`).
pub fn by_requests(title: &str) -> Option<ByRequests> {
    (title == sparktest_contract::sustained_load::ROW.title).then_some(ByRequests {
        metric: sparktest_contract::sustained_load::SUSTAINED_REQ_S.name(),
        unit: "req/s",
        higher_better: true,
        method: sustained_load::requests::METHOD,
        read: sustained_load::requests::sweep,
    })
}

/// Where a row of another name (a judged one) goes among the measured rows:
/// after this title.
pub const JUDGED_AFTER: &[(&str, &str)] = &[("Fine-tune path", sparktest_contract::long_prompt::ROW.title)];

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
                if instrument == sparktest_contract::ocr::INSTRUMENT { "pages" } else { "items" }
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
