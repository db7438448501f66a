//! The sustained-load row (`sustained-load`): the highest offered rate the
//! server held with goodput at the suite's threshold, from a sweep; and
//! the points the charts draw (p99 TTFT and goodput against the offered
//! rate; aggregate against per-request speed).

use sparktest_sdk::contract::sustained_load::{self as names, kind};

use super::*;

pub const SUSTAINED_LOAD: RowDef = relative(names::ROW, true, 0.05, figure_of);

/// One point of a sweep as the charts read it.
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

/// The sweep the row reads on a run: the first mix in name order, so every
/// column is read on the same mix.
fn sweep_case(run: &Run) -> Option<&CaseRecord> {
    sweeps(run).first().copied()
}

/// Every sweep of a run, one per mix, in mix name order.
fn sweeps(run: &Run) -> Vec<&CaseRecord> {
    let mut sweeps: Vec<&CaseRecord> = run
        .cases_of(names::INSTRUMENT)
        .filter(|c| names::SWEEP.holds(&c.case) && c.outcome != Outcome::Interrupted)
        .collect();
    sweeps.sort_by(|a, b| a.case.cmp(&b.case));
    sweeps
}

/// A sweep's points, in the order they ran.
pub fn points(c: &CaseRecord) -> Vec<Point> {
    let n = metric(c, names::POINTS).map_or(0, |n| n.max(0.0) as u32);
    let at = |i: u32, m: sparktest_sdk::contract::Metric| {
        let name = names::point(i, m).to_string();
        c.metrics.iter().find(|x| x.name == name).map(|x| x.value).filter(|v| v.is_finite())
    };
    let noted = |i: u32, k: sparktest_sdk::contract::Note| {
        let name = names::point_note(i, k).to_string();
        c.notes.iter().find(|(n, _)| *n == name).map(|(_, v)| v.clone())
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

/// The column's sweep, its run and its points, for the charts: the first
/// of [`latest_sweeps`].
pub fn latest_sweep<'a>(runs: &'a Runs, col: &str) -> Option<(&'a Run, &'a CaseRecord)> {
    let (run, sweeps) = latest_sweeps(runs, col)?;
    Some((run, sweeps.first().copied()?))
}

/// Every mix's sweep in the run the row reads on `col` (the frontier draws
/// them all).
pub fn latest_sweeps<'a>(runs: &'a Runs, col: &str) -> Option<(&'a Run, Vec<&'a CaseRecord>)> {
    let run = pick(runs, col, |r| sweep_case(r).is_some())?;
    Some((run, sweeps(run)))
}

fn figure_of(runs: &Runs, col: &str) -> Result<Figure, Missing> {
    let (run, c) = latest_sweep(runs, col).ok_or(Missing::NotMeasured)?;
    if c.outcome != Outcome::Pass && c.outcome != Outcome::Fail {
        return Err(missing_from(run, &[c]));
    }
    let mix = names::mix_of(&c.case).unwrap_or("");
    let Some(rate) = metric(c, names::SUSTAINED_REQ_S).filter(|v| v.is_finite()) else {
        return Err(Missing::Because {
            reason: format!(
                "no rate held on {mix}: {}",
                note(c, names::SUSTAINED).unwrap_or("the sweep recorded no sustained rate")
            ),
            records: vec![run.record_id(c)],
        });
    };
    let threshold = metric(c, names::GOODPUT_THRESHOLD).unwrap_or(90.0);
    let pts = points(c);
    let held = pts.iter().find(|p| p.offered.is_some_and(|o| (o - rate).abs() <= 1e-9 * rate.max(1.0)));
    let mut raw = format!("{rate:.2} req/s held on {mix} at goodput ≥ {threshold:.0}%");
    if let Some(t) = held.and_then(|p| p.ttft_p99_ms) {
        raw.push_str(&format!(" (p99 TTFT {t:.0} ms"));
        if let Some(g) = held.and_then(|p| p.goodput) {
            raw.push_str(&format!(", goodput {g:.0}%"));
        }
        raw.push(')');
    }
    if let Some(s) = metric(c, names::SATURATED_AT_REQ_S) {
        raw.push_str(&format!("; saturated at {s:.2} req/s"));
    }
    let bound = pts.iter().filter(|p| p.client_bound).count();
    if bound > 0 {
        raw.push_str(&format!("; {bound} of {} points client-bound, not counted", pts.len()));
    }
    if let Some(sync) = metric(c, names::SYNCHRONOUS_REQ_S) {
        raw.push_str(&format!("; synchronous {sync:.2} req/s"));
    }
    Ok(figure(run, rate, raw, &[c]))
}
