//! The trade-off frontier: for each column, aggregate output
//! throughput against the speed one request gets, at every concurrency
//! level and every sustained-load rate of every mix (the prompt and output
//! lengths of the suite) it was measured at, the points no
//! other point of the column beats on both marked as its Pareto frontier:
//! which configuration gives more users more speed. In `standings.json` as
//! `frontier`; drawn in the HTML.

use serde::Serialize;
use sparktest_sdk::contract::concurrency;

use crate::rows::sustained_load;
use crate::run::{Runs, metric, pick};

/// One measured point.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Point {
    /// Where it was measured: `concurrency c=2`, `sustained-load agent-turn
    /// 0.50 req/s`, `sustained-load long-prefill throughput`.
    pub source: String,
    /// Output tokens per second over all requests.
    pub aggregate_tok_s: f64,
    /// Output tokens per second one request got.
    pub per_request_tok_s: f64,
    /// No other point of the column has both more aggregate and more
    /// per-request speed.
    pub pareto: bool,
    /// `run-id#case-id` of the record behind it.
    pub record: String,
}

/// A column's points.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Series {
    /// The column's key.
    pub column: String,
    /// Its points, by aggregate throughput.
    pub points: Vec<Point>,
}

/// Every column's points and frontier, the columns with none left out.
pub fn frontier(runs: &Runs, columns: &[String]) -> Vec<Series> {
    let mut out = Vec::new();
    for col in columns {
        let mut points = Vec::new();
        if let Some(run) = pick(runs, col, |r| r.cases_of(concurrency::INSTRUMENT).next().is_some()) {
            for c in run.cases_of(concurrency::INSTRUMENT).filter(|c| c.outcome == sparktest_record::Outcome::Pass) {
                let (Some(n), Some(agg), Some(per)) = (
                    metric(c, concurrency::CONCURRENCY),
                    metric(c, concurrency::AGGREGATE_TOK_S),
                    metric(c, concurrency::PER_REQUEST_TOK_S),
                ) else {
                    continue;
                };
                points.push(Point {
                    source: format!("concurrency c={n}"),
                    aggregate_tok_s: agg,
                    per_request_tok_s: per,
                    pareto: false,
                    record: run.record_id(c).to_string(),
                });
            }
        }
        if let Some((run, mixes)) = sustained_load::latest_loads(runs, col) {
            for c in mixes.into_iter().flat_map(|(_, cases)| cases) {
                let mix = sparktest_sdk::contract::sustained_load::mix_of(&c.case)
                    .map(|m| format!("{m} "))
                    .unwrap_or_default();
                for p in sustained_load::points(c).into_iter().filter(|p| !p.client_bound) {
                    let (Some(agg), Some(per)) = (p.aggregate_tok_s, p.per_request_tok_s) else { continue };
                    let at = match (p.kind.as_str(), p.offered) {
                        (sparktest_sdk::contract::sustained_load::kind::RATE, Some(o)) => format!("{o:.2} req/s"),
                        (k, _) => k.to_string(),
                    };
                    points.push(Point {
                        source: format!("sustained-load {mix}{at}"),
                        aggregate_tok_s: agg,
                        per_request_tok_s: per,
                        pareto: false,
                        record: run.record_id(c).to_string(),
                    });
                }
            }
        }
        points.retain(|p| p.aggregate_tok_s.is_finite() && p.per_request_tok_s.is_finite());
        if points.is_empty() {
            continue;
        }
        mark_pareto(&mut points);
        points.sort_by(|a, b| a.aggregate_tok_s.total_cmp(&b.aggregate_tok_s).then(a.source.cmp(&b.source)));
        out.push(Series { column: col.clone(), points });
    }
    out
}

/// Mark the points no other point dominates (at least as good on both
/// axes and better on one).
fn mark_pareto(points: &mut [Point]) {
    let dominated: Vec<bool> = points
        .iter()
        .map(|p| {
            points.iter().any(|q| {
                q.aggregate_tok_s >= p.aggregate_tok_s
                    && q.per_request_tok_s >= p.per_request_tok_s
                    && (q.aggregate_tok_s > p.aggregate_tok_s || q.per_request_tok_s > p.per_request_tok_s)
            })
        })
        .collect();
    for (p, d) in points.iter_mut().zip(dominated) {
        p.pareto = !d;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(source: &str, agg: f64, per: f64) -> Point {
        Point {
            source: source.into(),
            aggregate_tok_s: agg,
            per_request_tok_s: per,
            pareto: false,
            record: String::new(),
        }
    }

    #[test]
    fn the_frontier_is_the_points_nothing_beats_on_both() {
        let mut pts = vec![p("c=1", 20.0, 20.0), p("c=2", 30.0, 15.0), p("c=4", 28.0, 7.0), p("r", 30.0, 15.0)];
        mark_pareto(&mut pts);
        let on: Vec<(&str, bool)> = pts.iter().map(|p| (p.source.as_str(), p.pareto)).collect();
        // c=4 is beaten by c=2 on both; two equal points both stand.
        assert_eq!(on, [("c=1", true), ("c=2", true), ("c=4", false), ("r", true)]);
    }
}
