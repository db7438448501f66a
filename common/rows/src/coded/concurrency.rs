//! The concurrency row (`concurrency`).

use sparktest_contract::concurrency;

use super::*;

pub const ROW: RowDef = relative(concurrency::ROW, true, 0.03, figure_of);

/// What one agent gets while another works: per-request tokens over the
/// request's whole time (queueing and first token included) at c=2.
fn figure_of(runs: &Runs, col: &str) -> Result<Figure, Missing> {
    let run = pick(runs, col, |r| has(r, concurrency::INSTRUMENT)).ok_or(Missing::NotMeasured)?;
    let cases: Vec<&CaseRecord> = run.cases_of(concurrency::INSTRUMENT).collect();
    let level =
        |n: u32| cases.iter().find(|c| c.case == concurrency::level(n).to_string() && c.outcome == Outcome::Pass);
    let c2 = concurrency::level(2).to_string();
    if !cases.iter().any(|c| c.case == c2) {
        return Err(Missing::Because {
            reason: "the run measured no c=2 level, the row's figure".into(),
            records: cases.iter().map(|c| run.record_id(c)).collect(),
        });
    }
    let Some(c2) = level(2) else {
        return Err(missing_from(run, &cases.iter().copied().filter(|c| c.case == c2).collect::<Vec<_>>()));
    };
    let (Some(e2e), Some(decode), Some(agg)) = (
        metric(c2, concurrency::PER_REQUEST_E2E_TOK_S).filter(|v| v.is_finite()),
        metric(c2, concurrency::PER_REQUEST_TOK_S),
        metric(c2, concurrency::AGGREGATE_TOK_S),
    ) else {
        return Err(Missing::Because {
            reason: "the c=2 record lacks its per-request figures (recorded by an older concurrency instrument)".into(),
            records: vec![run.record_id(c2)],
        });
    };
    let mut raw = format!("{e2e:.2} tok/s per agent at c=2, waiting included (decode {decode:.2}; {agg:.2} agg)");
    for n in [2, 1, 4] {
        let Some(c) = level(n) else { continue };
        if n != 2
            && let (Some(per), Some(agg)) =
                (metric(c, concurrency::PER_REQUEST_E2E_TOK_S), metric(c, concurrency::AGGREGATE_TOK_S))
        {
            raw.push_str(&format!("; c={n} {per:.2}/agent ({agg:.2} agg)"));
        }
        if let Some(q) = metric(c, concurrency::QUEUED_REQUESTS).filter(|q| *q > 0.0) {
            raw.push_str(&format!(", {q:.0} queued at the server at c={n}"));
        }
    }
    Ok(figure(run, e2e, raw, &cases))
}
