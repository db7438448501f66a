//! The long-prompt robustness row (`long-prompt`).

use sparktest_contract::long_prompt::{self, outcome};

use super::*;

pub const ROW: RowDef = absolute(
    long_prompt::ROW,
    "10 × the mean over the pastes of: answered 1, refused cleanly naming the limit 0.65, \
         answered wrong, truncated silently, refused unclearly or lost 0",
    figure_of,
);

fn figure_of(runs: &Runs, col: &str) -> Result<Figure, Missing> {
    let run = pick(runs, col, |r| has(r, long_prompt::INSTRUMENT)).ok_or(Missing::NotMeasured)?;
    let cases: Vec<&CaseRecord> = run.cases_of(long_prompt::INSTRUMENT).collect();
    let mut points = Vec::new();
    let mut parts = Vec::new();
    for c in &cases {
        let name = long_prompt::PASTE.item(&c.case).unwrap_or(&c.case);
        let seconds = metric(c, long_prompt::SECONDS).map(|s| format!(" ({s:.1} s)")).unwrap_or_default();
        let (p, text) = match (c.outcome, note(c, long_prompt::OUTCOME)) {
            (Outcome::Pass, Some(outcome::ANSWERED)) => (1.0, format!("{name} ANSWERED{seconds}")),
            (Outcome::Pass, Some(outcome::REFUSED_CLEANLY)) => (0.65, format!("{name} clean refusal naming the limit")),
            (Outcome::Lost, _) => (0.0, format!("{name} LOST")),
            (Outcome::NotApplicable, _) => continue,
            (_, Some(o)) => (0.0, format!("{name} {}", o.to_uppercase())),
            (_, None) => (0.0, format!("{name} FAILED")),
        };
        points.push(p);
        parts.push(text);
    }
    let Some(m) = mean(&points) else {
        return Err(missing_from(run, &cases));
    };
    Ok(figure(run, 10.0 * m, parts.join(" - "), &cases))
}
