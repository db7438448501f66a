//! The configuration battery row (`hard-question` and the battery suite's
//! gate).

use sparktest_contract::hard_question;
use sparktest_record::GateFailure;

use super::*;

pub const ROW: RowDef =
    absolute(hard_question::ROW, "10 when every check of the gate passed, else 10 × checks passed ÷ checks", figure_of);

fn figure_of(runs: &Runs, col: &str) -> Result<Figure, Missing> {
    let run =
        latest(runs, col, |r| r.summary.as_ref().is_some_and(|s| s.gate.is_some())).ok_or(Missing::NotMeasured)?;
    let gate = run.summary.as_ref().and_then(|s| s.gate.as_ref()).ok_or(Missing::NotMeasured)?;
    let cases: Vec<&CaseRecord> = run.measured().collect();
    let passed = cases.iter().filter(|c| c.outcome == Outcome::Pass).count();
    let (value, raw) = if gate.passed {
        (10.0, format!("PASSED: all {} checks", cases.len()))
    } else {
        let failures: Vec<GateFailure> = gate.failures().collect();
        let names: Vec<&str> = failures.iter().map(GateFailure::name).collect();
        (
            10.0 * passed as f64 / cases.len().max(1) as f64,
            format!("FAILED: {passed}/{} checks passed; failing: {}", cases.len(), names.join(", ")),
        )
    };
    Ok(figure(run, value, raw, &cases))
}
