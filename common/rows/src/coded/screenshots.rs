//! The screenshot and photo reading row (`screenshots`).

use sparktest_contract::screenshots;

use super::*;

pub const ROW: RowDef = fraction(screenshots::ROW, "the mean reading score (0, 0.5 or 1 per item)", figure_of);

fn figure_of(runs: &Runs, col: &str) -> Result<Figure, Missing> {
    let (run, cases) = vision_cases(runs, col, screenshots::INSTRUMENT)?;
    let scored: Vec<f64> = cases.iter().map(|c| metric(c, screenshots::SCORE).unwrap_or(0.0)).collect();
    if cases.iter().all(|c| metric(c, screenshots::SCORE).is_none()) {
        return Err(missing_from(run, &cases));
    }
    let answered = cases.iter().filter(|c| metric(c, screenshots::ANSWERED) == Some(1.0)).count();
    let mean = scored.iter().sum::<f64>() / cases.len() as f64;
    let mut raw = format!("{:.1}/10 - {answered}/{} answered", 10.0 * mean, cases.len());
    let lost = cases.iter().filter(|c| c.outcome == Outcome::Lost).count();
    if lost > 0 {
        raw.push_str(&format!(" - {lost} LOST"));
    }
    Ok(figure(run, mean, raw, &cases))
}
