//! The sustained-load row (`sustained-load`): the highest offered rate the
//! server held with goodput at the suite's threshold, over every load of
//! the row's mix (a sweep's rates and the fixed-rate cases alike); and the
//! points the charts draw (p99 TTFT and goodput against the offered rate;
//! aggregate against per-request speed). [`requests`]: the figure read
//! again from resampled requests, the samples `diff` tests.

use sparktest_contract::sustained_load::{self as names, kind};

use super::*;

pub mod requests;

/// The Sustained load row: the highest offered rate any load held.
pub const ROW: RowDef = relative(names::ROW, true, 0.05, figure_of);

/// One load as the charts read it: a point of a sweep, or a fixed-rate case.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// `synchronous`, `throughput` or `rate`.
    pub kind: String,
    /// Requests per second offered (the schedule's).
    pub offered: Option<f64>,
    /// Completions per second the server achieved.
    pub achieved: Option<f64>,
    /// p99 time to first token, ms.
    pub ttft_p99_ms: Option<f64>,
    /// The share of measured requests that met the objectives, %.
    pub goodput: Option<f64>,
    /// Output tokens per second, all requests.
    pub aggregate_tok_s: Option<f64>,
    /// Output tokens per second of one request.
    pub per_request_tok_s: Option<f64>,
    /// Whether the host could not hold the schedule (its figures are not
    /// the server's).
    pub client_bound: bool,
}

/// A mix's name and its loads (sweeps and fixed rates) in a run.
pub type MixLoads<'a> = (&'a str, Vec<&'a CaseRecord>);

/// The sustained-load cases of a run (sweeps and fixed rates), by mix in
/// name order, each mix's cases in case-name order.
fn by_mix(run: &Run) -> Vec<MixLoads<'_>> {
    let mut cases: Vec<&CaseRecord> = run
        .cases_of(names::INSTRUMENT)
        .filter(|c| (names::SWEEP.holds(&c.case) || names::RATE.holds(&c.case)) && c.outcome != Outcome::Interrupted)
        .collect();
    cases.sort_by(|a, b| a.case.cmp(&b.case));
    let mut out: Vec<MixLoads> = Vec::new();
    for c in cases {
        let Some(mix) = names::mix_of(&c.case) else { continue };
        match out.iter_mut().find(|(m, _)| *m == mix) {
            Some((_, list)) => list.push(c),
            None => out.push((mix, vec![c])),
        }
    }
    out.sort_by(|a, b| a.0.cmp(b.0));
    out
}

/// A load's points, in the order they ran: a sweep's every point, a
/// fixed-rate case's one.
pub fn points(c: &CaseRecord) -> Vec<Point> {
    if names::RATE.holds(&c.case) {
        let at = |m: sparktest_contract::Metric| metric(c, m).filter(|v| v.is_finite());
        return vec![Point {
            kind: kind::RATE.to_string(),
            offered: at(names::SCHEDULED_REQ_S).or_else(|| at(names::OFFERED_REQ_S)),
            achieved: at(names::ACHIEVED_REQ_S),
            ttft_p99_ms: at(names::TTFT_MS_P99),
            goodput: at(names::GOODPUT),
            aggregate_tok_s: at(names::OUTPUT_TOK_S),
            per_request_tok_s: at(names::PER_REQUEST_TOK_S),
            client_bound: note(c, names::CLIENT_BOUND).is_some(),
        }];
    }
    let n = metric(c, names::POINTS).map_or(0, |n| n.max(0.0) as u32);
    let at = |i: u32, m: sparktest_contract::Metric| {
        let name = names::point(i, m).to_string();
        crate::metric(c, &name).filter(|v| v.is_finite())
    };
    let noted = |i: u32, k: sparktest_contract::Note| {
        let name = names::point_note(i, k).to_string();
        crate::note(c, &name).map(str::to_string)
    };
    (1..=n)
        .map(|i| Point {
            kind: noted(i, names::KIND).unwrap_or_else(|| kind::RATE.to_string()),
            offered: at(i, names::SCHEDULED_REQ_S).or_else(|| at(i, names::OFFERED_REQ_S)),
            achieved: at(i, names::ACHIEVED_REQ_S),
            ttft_p99_ms: at(i, names::TTFT_MS_P99),
            goodput: at(i, names::GOODPUT),
            aggregate_tok_s: at(i, names::OUTPUT_TOK_S),
            per_request_tok_s: at(i, names::PER_REQUEST_TOK_S),
            client_bound: noted(i, names::CLIENT_BOUND).is_some(),
        })
        .collect()
}

/// The loads the row reads on `col`: the latest run with any, its first
/// mix by name (so every column is read on the same mix) and that mix's
/// cases.
pub fn latest_mix<'a>(runs: &'a Runs, col: &str) -> Option<(&'a Run, &'a str, Vec<&'a CaseRecord>)> {
    let (run, mut mixes) = latest_loads(runs, col)?;
    let (mix, cases) = mixes.drain(..).next()?;
    Some((run, mix, cases))
}

/// Every mix's loads in the run the row reads on `col` (the frontier
/// draws them all).
pub fn latest_loads<'a>(runs: &'a Runs, col: &str) -> Option<(&'a Run, Vec<MixLoads<'a>>)> {
    let run = pick(runs, col, |r| !by_mix(r).is_empty())?;
    Some((run, by_mix(run)))
}

fn figure_of(runs: &Runs, col: &str) -> Result<Figure, Missing> {
    let (run, mix, cases) = latest_mix(runs, col).ok_or(Missing::NotMeasured)?;
    let measured: Vec<&CaseRecord> =
        cases.iter().copied().filter(|c| matches!(c.outcome, Outcome::Pass | Outcome::Fail)).collect();
    if measured.is_empty() {
        return Err(missing_from(run, &cases));
    }
    // The highest rate any of the mix's loads held at its threshold.
    let best = measured
        .iter()
        .filter_map(|c| Some((*c, metric(c, names::SUSTAINED_REQ_S).filter(|v| v.is_finite())?)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let Some((held_by, rate)) = best else {
        let why: Vec<String> = measured
            .iter()
            .map(|c| {
                format!("{}: {}", c.case, note(c, names::SUSTAINED).unwrap_or("the case recorded no sustained rate"))
            })
            .collect();
        return Err(Missing::Because {
            reason: format!("no rate held on {mix}: {}", why.join("; ")),
            records: measured.iter().map(|c| run.record_id(c)).collect(),
        });
    };
    let threshold = metric(held_by, names::GOODPUT_THRESHOLD).unwrap_or(90.0);
    let pts = points(held_by);
    let held = pts.iter().find(|p| p.offered.is_some_and(|o| (o - rate).abs() <= 1e-9 * rate.max(1.0)));
    let mut raw = format!("{rate:.2} req/s held on {mix} at goodput ≥ {threshold:.0}%");
    if let Some(t) = held.and_then(|p| p.ttft_p99_ms) {
        raw.push_str(&format!(" (p99 TTFT {t:.0} ms"));
        if let Some(g) = held.and_then(|p| p.goodput) {
            raw.push_str(&format!(", goodput {g:.0}%"));
        }
        raw.push(')');
    }
    raw.push_str(if names::SWEEP.holds(&held_by.case) { ", by the sweep" } else { ", at a fixed rate" });
    let sweep = measured.iter().find(|c| names::SWEEP.holds(&c.case));
    if let Some(s) = sweep.and_then(|c| metric(c, names::SATURATED_AT_REQ_S)) {
        raw.push_str(&format!("; saturated at {s:.2} req/s"));
    }
    let all: Vec<Point> = measured.iter().flat_map(|c| points(c)).collect();
    let bound = all.iter().filter(|p| p.client_bound).count();
    if bound > 0 {
        raw.push_str(&format!("; {bound} of {} loads client-bound, not counted", all.len()));
    }
    if let Some(sync) = sweep.and_then(|c| metric(c, names::SYNCHRONOUS_REQ_S)) {
        raw.push_str(&format!("; synchronous {sync:.2} req/s"));
    }
    Ok(figure(run, rate, raw, &measured))
}
