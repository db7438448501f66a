//! A figure's uncertainty, how a figure is written, and a declared row's
//! figure over one run's cases.

use serde::Serialize;
use sparktest_record::{CaseRecord, FigureKind, Outcome, RowDeclaration};

/// The seed of every bootstrap on the board, recorded in each interval:
/// the same files give the same board.
pub const BOOTSTRAP_SEED: u64 = 21;

/// Bootstrap resamples of a cell's interval.
pub const RESAMPLES: usize = 2000;

/// A cell's uncertainty, from its own data: the standing is
/// unchanged; this is shown beside the raw figure.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Spread {
    /// A k/n figure: the Wilson 95% score interval of the proportion
    /// (Wilson 1927).
    Wilson {
        /// Passed.
        k: u64,
        /// Answered.
        n: u64,
        /// Lower bound.
        low: f64,
        /// Upper bound.
        high: f64,
    },
    /// Several samples of one figure: a 95% percentile bootstrap interval
    /// of the figure, seeded.
    Bootstrap {
        /// Lower bound.
        low: f64,
        /// Upper bound.
        high: f64,
        /// Samples resampled.
        samples: usize,
        /// Resamples drawn.
        resamples: usize,
        /// The generator's seed.
        seed: u64,
    },
    /// The repeats of a `--repeat N` group: the lowest and highest of the
    /// runs' figures. With a handful of runs this range is what the data
    /// say; no distribution is assumed.
    Runs {
        /// Lowest.
        low: f64,
        /// Highest.
        high: f64,
        /// Runs with a figure.
        runs: usize,
    },
    /// One sample and no spread: no interval can be computed from the
    /// cell's data, and none is invented.
    OneSample {
        /// Why there is none.
        note: String,
    },
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

/// A figure to three significant digits, trailing zeros dropped.
pub fn short(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let digits = (2 - x.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{x:.digits$}");
    if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s }
}

/// A declared row's figure for one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Computed {
    /// What standings are computed from.
    pub value: f64,
    /// What a reader sees.
    pub raw: String,
    /// Its interval, where its data give one.
    pub spread: Option<Spread>,
    /// For a pass share: the items answered (case ids) and those passed.
    pub items: Option<(Vec<String>, Vec<String>)>,
}

/// Why a declared row has no figure for a run.
#[derive(Debug, Clone, PartialEq)]
pub enum NoFigure {
    /// No case gave one (all lost, not applicable, failed): the caller
    /// says why from the cases.
    NoneGiven,
    /// No record of the instrument carries the metric the row declares.
    NoMetric(String),
}

fn answered(o: Outcome) -> bool {
    matches!(o, Outcome::Pass | Outcome::Fail)
}

/// A declared row's figure over the cases of one run that feed it
/// ([`crate::feeds`]). Lost and interrupted cases are never in a
/// denominator; a figure of a metric is over the passed cases (a failed
/// case's figure is no valid one), its interval a seeded percentile
/// bootstrap of the same statistic.
pub fn declared<C>(d: &RowDeclaration, cases: &[&CaseRecord<C>]) -> Result<Computed, NoFigure> {
    let Some(name) = d.metric.as_deref().filter(|_| d.figure.needs_metric()) else {
        return pass_share(cases);
    };
    if !cases.iter().any(|c| c.metrics.iter().any(|m| m.name == name)) {
        return Err(NoFigure::NoMetric(format!(
            "no record of {} carries the metric {name:?} that the row declares",
            d.instrument
        )));
    }
    let unit = if d.unit.is_empty() {
        cases.iter().flat_map(|c| &c.metrics).find(|m| m.name == name).map_or("", |m| m.unit.as_str())
    } else {
        d.unit.as_str()
    };
    let mut values: Vec<f64> = cases
        .iter()
        .filter(|c| c.outcome == Outcome::Pass)
        .filter_map(|c| crate::metric(c, name))
        .filter(|v| v.is_finite())
        .collect();
    if values.is_empty() {
        return Err(NoFigure::NoneGiven);
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    let lost = cases.iter().filter(|c| !answered(c.outcome) && c.outcome != Outcome::NotApplicable).count();
    // The figure's words are its kind as the suite spells it (`median`,
    // `p90`, `highest`).
    let value = stat(d.figure, &values);
    let unit = if unit.is_empty() { String::new() } else { format!(" {unit}") };
    let mut raw = format!("{}{unit} {} over {n} passed case{}", short_or_whole(value), String::from(d.figure), s(n));
    if lost > 0 {
        raw.push_str(&format!(" · {lost} lost, not counted"));
    }
    let spread = if d.figure == FigureKind::Highest { None } else { bootstrap(d.figure, &values) };
    Ok(Computed { value, raw, spread, items: None })
}

fn s(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Whole numbers as they are, others to three significant digits.
fn short_or_whole(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 { format!("{x:.0}") } else { short(x) }
}

/// The statistic of sorted values.
fn stat(kind: FigureKind, sorted: &[f64]) -> f64 {
    match kind {
        FigureKind::Mean => sorted.iter().sum::<f64>() / sorted.len() as f64,
        FigureKind::Percentile(p) => sparktest_stats::nearest_rank(sorted, f64::from(p)).unwrap_or(f64::NAN),
        FigureKind::Highest | FigureKind::PassShare => sorted.last().copied().unwrap_or(f64::NAN),
    }
}

/// A seeded percentile bootstrap of the statistic; None for one value.
fn bootstrap(kind: FigureKind, sorted: &[f64]) -> Option<Spread> {
    if sorted.len() < 2 {
        return None;
    }
    let mut draw = vec![0.0; sorted.len()];
    let i = sparktest_stats::bootstrap_with(stat(kind, sorted), RESAMPLES, BOOTSTRAP_SEED, |rng| {
        for x in draw.iter_mut() {
            *x = sorted[rng.below(sorted.len())];
        }
        draw.sort_by(f64::total_cmp);
        Some(stat(kind, &draw))
    })?;
    Some(Spread::Bootstrap {
        low: i.low,
        high: i.high,
        samples: sorted.len(),
        resamples: RESAMPLES,
        seed: BOOTSTRAP_SEED,
    })
}

/// Passed over answered, with its Wilson interval; not-applicable cases
/// left out, lost ones counted apart.
fn pass_share<C>(cases: &[&CaseRecord<C>]) -> Result<Computed, NoFigure> {
    let given: Vec<&&CaseRecord<C>> = cases.iter().filter(|c| c.outcome != Outcome::NotApplicable).collect();
    let answered: Vec<&&CaseRecord<C>> = given.iter().copied().filter(|c| answered(c.outcome)).collect();
    if answered.is_empty() {
        return Err(NoFigure::NoneGiven);
    }
    let passed: Vec<String> = answered.iter().filter(|c| c.outcome == Outcome::Pass).map(|c| c.id.clone()).collect();
    let (k, n, lost) = (passed.len(), answered.len(), given.len() - answered.len());
    let mut raw = format!("{k}/{n} passed");
    if lost > 0 {
        raw.push_str(&format!(" of answered · {lost} lost"));
    }
    Ok(Computed {
        value: k as f64 / n as f64,
        raw,
        spread: Spread::wilson(k, n),
        items: Some((answered.iter().map(|c| c.id.clone()).collect(), passed)),
    })
}

/// The per-item metrics `diff` tests for a row, each with whether higher
/// is better: a declared row's own metric, else (a built-in row) every
/// metric of the built-in rows that its records carry.
pub fn compared(declared: Option<&RowDeclaration>) -> Vec<(String, bool)> {
    use sparktest_contract::{concurrency, likelihood, workload};
    match declared {
        Some(d) => d
            .metric
            .iter()
            .filter(|_| d.figure.needs_metric())
            .map(|m| (m.clone(), d.better == sparktest_record::Better::Higher))
            .collect(),
        None => [
            (workload::DECODE_TOK_S, true),
            (workload::TTFT_MS, false),
            (concurrency::PER_REQUEST_E2E_TOK_S, true),
            (concurrency::PER_REQUEST_TOK_S, true),
            (concurrency::AGGREGATE_TOK_S, true),
            (likelihood::BPC, false),
        ]
        .iter()
        .map(|(m, hb)| (m.name().to_string(), *hb))
        .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_case::case;
    use sparktest_record::{Better, Standing};

    fn row(figure: FigureKind, metric: Option<&str>) -> RowDeclaration {
        RowDeclaration {
            title: "Capital cities".into(),
            instrument: "capitals".into(),
            methodology: String::new(),
            figure,
            metric: metric.map(Into::into),
            unit: String::new(),
            better: Better::Lower,
            standing: Standing::Relative,
            tie_margin: 0.0,
            tags: vec![],
            groups: vec![],
            declared_by: String::new(),
        }
    }

    #[test]
    fn a_pass_share_counts_answered_items_with_a_wilson_interval() {
        let cases = [
            case("a", Outcome::Pass, None),
            case("b", Outcome::Pass, None),
            case("c", Outcome::Fail, None),
            case("d", Outcome::Lost, None),
            case("e", Outcome::NotApplicable, None),
        ];
        let refs: Vec<&CaseRecord<()>> = cases.iter().collect();
        let c = declared(&row(FigureKind::PassShare, None), &refs).unwrap();
        assert_eq!(c.raw, "2/3 passed of answered · 1 lost");
        assert!((c.value - 2.0 / 3.0).abs() < 1e-12);
        let Some(Spread::Wilson { k: 2, n: 3, low, high }) = c.spread else { panic!("{:?}", c.spread) };
        // Wilson 95% of 2/3 (computed by hand: 0.2077–0.9385).
        assert!((low - 0.2077).abs() < 1e-3 && (high - 0.9385).abs() < 1e-3, "{low} {high}");
        assert_eq!(c.items.unwrap().1, vec!["capitals::a", "capitals::b"]);
        let lost = [case("d", Outcome::Lost, None)];
        assert_eq!(declared(&row(FigureKind::PassShare, None), &[&lost[0]]), Err(NoFigure::NoneGiven));
    }

    #[test]
    fn a_metric_figure_is_over_passed_cases_with_a_seeded_bootstrap() {
        let cases: Vec<CaseRecord<()>> = (1..=10)
            .map(|i| case(&i.to_string(), Outcome::Pass, Some(f64::from(i) * 10.0)))
            .chain([case("failed", Outcome::Fail, Some(1e9)), case("lost", Outcome::Lost, None)])
            .collect();
        let refs: Vec<&CaseRecord<()>> = cases.iter().collect();
        let median = declared(&row(FigureKind::Percentile(50), Some("ms")), &refs).unwrap();
        assert_eq!(
            (median.value, median.raw.as_str()),
            (50.0, "50 ms median over 10 passed cases · 1 lost, not counted")
        );
        let p90 = declared(&row(FigureKind::Percentile(90), Some("ms")), &refs).unwrap();
        assert_eq!(p90.value, 90.0);
        let mean = declared(&row(FigureKind::Mean, Some("ms")), &refs).unwrap();
        assert_eq!(mean.value, 55.0);
        let Some(Spread::Bootstrap { low, high, samples: 10, seed: BOOTSTRAP_SEED, .. }) = mean.spread else {
            panic!("{:?}", mean.spread)
        };
        assert!(low < 55.0 && 55.0 < high && low > 10.0 && high < 100.0, "{low} {high}");
        assert_eq!(
            declared(&row(FigureKind::Mean, Some("ms")), &refs),
            Ok(mean),
            "seeded: the same files, the same figure"
        );
        let highest = declared(&row(FigureKind::Highest, Some("ms")), &refs).unwrap();
        assert_eq!((highest.value, highest.spread), (100.0, None));
    }

    #[test]
    fn a_metric_no_record_carries_is_said_so() {
        let cases = [case("a", Outcome::Pass, Some(1.0))];
        let err = declared(&row(FigureKind::Mean, Some("tok-s")), &[&cases[0]]).unwrap_err();
        assert_eq!(
            err,
            NoFigure::NoMetric("no record of capitals carries the metric \"tok-s\" that the row declares".into())
        );
    }

    #[test]
    fn diff_compares_a_declared_rows_own_metric_with_its_direction() {
        assert_eq!(compared(Some(&row(FigureKind::Mean, Some("ms")))), vec![("ms".to_string(), false)]);
        assert!(compared(Some(&row(FigureKind::PassShare, None))).is_empty());
        assert!(compared(None).contains(&("bpc".to_string(), false)));
    }
}
