//! The speculative decoding row (`spec-decode`).

use std::collections::BTreeMap;

use sparktest_contract::spec_decode::{self, arm};
use sparktest_contract::{Arm, workload};

use super::*;

pub const ROW: RowDef = RowDef {
    title: Cow::Borrowed(spec_decode::ROW.title),
    instrument: Cow::Borrowed(spec_decode::ROW.instrument),
    higher_better: true,
    rule: Rule::Gain,
    tie_margin: 0.03,
    absolute_rule: "",
    compute: Compute::Code(figure_of),
};

/// Draft arm over bare arm, on the categories both arms measured; filed
/// under the bare arm's column.
fn figure_of(runs: &Runs, col: &str) -> Result<Figure, Missing> {
    let run =
        pick_by(runs, |r| r.bare_column.as_deref().unwrap_or(&r.column) == col && has(r, spec_decode::INSTRUMENT))
            .ok_or(Missing::NotMeasured)?;
    let cases: Vec<&CaseRecord> = run.cases_of(spec_decode::INSTRUMENT).collect();
    let decode = |arm: Arm| -> BTreeMap<&str, f64> {
        cases
            .iter()
            .filter(|c| arm.is(c.arm.as_deref()) && workload::DECODE.holds(&c.case) && c.outcome == Outcome::Pass)
            .filter_map(|c| {
                Some((c.case.as_str(), metric(c, workload::DECODE_TOK_S).filter(|v| v.is_finite() && *v > 0.0)?))
            })
            .collect()
    };
    let (bare, draft) = (decode(arm::BARE), decode(arm::DRAFT));
    let paired: Vec<&str> = bare.keys().filter(|k| draft.contains_key(*k)).copied().collect();
    let (Some(b), Some(d)) = (
        mean(&paired.iter().map(|k| bare[k]).collect::<Vec<_>>()),
        mean(&paired.iter().map(|k| draft[k]).collect::<Vec<_>>()),
    ) else {
        return Err(missing_from(run, &cases));
    };
    let ratio = d / b;
    let drafted: f64 = cases
        .iter()
        .filter(|c| arm::DRAFT.is(c.arm.as_deref()))
        .filter_map(|c| metric(c, spec_decode::DRAFTED_TOKENS))
        .sum();
    let accepted: f64 = cases
        .iter()
        .filter(|c| arm::DRAFT.is(c.arm.as_deref()))
        .filter_map(|c| metric(c, spec_decode::ACCEPTED_TOKENS))
        .sum();
    let mut raw = format!("{b:.2} -> {d:.2} tok/s ({ratio:.2}x)");
    if drafted > 0.0 {
        raw.push_str(&format!(" - {:.0}% draft acceptance", 100.0 * accepted / drafted));
    }
    let all: std::collections::BTreeSet<&str> =
        cases.iter().filter(|c| workload::DECODE.holds(&c.case)).map(|c| c.case.as_str()).collect();
    if paired.len() < all.len() {
        raw.push_str(&format!(" - on the {} of {} prompts both arms measured", paired.len(), all.len()));
    }
    let structured: Vec<&&CaseRecord> = cases.iter().filter(|c| spec_decode::STRUCTURED.holds(&c.case)).collect();
    if !structured.is_empty() {
        let valid = structured.iter().filter(|c| c.outcome == Outcome::Pass).count();
        raw.push_str(&format!(" - structured output valid on {valid}/{} arm runs", structured.len()));
    }
    let mut f = figure(run, ratio, raw, &cases);
    let config = |arm: Arm| run.manifest.arms.iter().find(|a| a.name == arm.name()).map(|a| config_line(&a.target));
    if let (Some(bare), Some(draft)) = (config(arm::BARE), config(arm::DRAFT)) {
        f.config = format!("{}: {bare} | {}: {draft}", arm::BARE, arm::DRAFT);
    }
    Ok(f)
}
