//! The prose speed row (`speed`).

use sparktest_contract::{speed, workload};

use super::*;

pub const ROW: RowDef = relative(speed::ROW, true, 0.03, figure_of);

fn figure_of(runs: &Runs, col: &str) -> Result<Figure, Missing> {
    let run = pick(runs, col, |r| r.cases_of(speed::INSTRUMENT).any(|c| workload::DECODE.holds(&c.case)))
        .ok_or(Missing::NotMeasured)?;
    let cases: Vec<&CaseRecord> = run.cases_of(speed::INSTRUMENT).filter(|c| workload::DECODE.holds(&c.case)).collect();
    let good: Vec<(&str, f64, &CaseRecord)> = cases
        .iter()
        .filter(|c| c.outcome == Outcome::Pass)
        .filter_map(|c| {
            Some((
                workload::DECODE.item(&c.case).unwrap_or(&c.case),
                metric(c, workload::DECODE_TOK_S).filter(|v| v.is_finite())?,
                *c,
            ))
        })
        .collect();
    let Some(m) = mean(&good.iter().map(|(_, v, _)| *v).collect::<Vec<_>>()) else {
        return Err(missing_from(run, &cases));
    };
    let parts: Vec<String> = good.iter().map(|(c, v, _)| format!("{c} {v:.2}")).collect();
    let mut raw = format!("{m:.2} tok/s mean ({})", parts.join(" / "));
    let missing: Vec<&str> = cases
        .iter()
        .map(|c| workload::DECODE.item(&c.case).unwrap_or(&c.case))
        .filter(|cat| !good.iter().any(|(g, _, _)| g == cat))
        .collect();
    if !missing.is_empty() {
        raw.push_str(&format!(" - partial: no figure for {}", missing.join(", ")));
    }
    let mut f = figure(run, m, raw, &cases);
    // Each category's repetitions (`decode-tok-s-rep1` …), resampled on
    // their own: the figure's own spread, not a range between runs.
    let reps: Vec<Vec<f64>> = good
        .iter()
        .map(|(_, _, c)| {
            c.metrics
                .iter()
                .filter(|x| workload::DECODE_TOK_S_REP.matches(&x.name))
                .map(|x| x.value)
                .collect::<Vec<_>>()
        })
        .collect();
    let samples: usize = reps.iter().map(Vec::len).sum();
    if samples > reps.len() {
        let (resamples, seed) = (crate::RESAMPLES, crate::BOOTSTRAP_SEED);
        if let Some(i) = sparktest_stats::bootstrap_mean_of_means(&reps, resamples, seed) {
            f.spread = Some(Spread::Bootstrap { low: i.low, high: i.high, samples, resamples, seed });
        }
    }
    Ok(f)
}
