//! The shares-a-box-with-media row (`media`).

use sparktest_contract::media::{self, verdict};

use super::*;

/// The largest single agent input the seed recorded, in tokens: what a KV
/// trade's kept tokens are read against.
const LARGEST_AGENT_INPUT: f64 = 114_533.0;

pub const ROW: RowDef = absolute(
    media::ROW,
    "free memory with the media stack loaded against the budget: YES 9 to 10 (more spare memory scores \
         higher); YES WITH KV TRADE 6 to 8 by the KV tokens kept (8 at room for eight of the largest agent \
         inputs recorded, 114,533 tokens each); MARGINAL 3; NO 0 to 1 by how much of the budget is free",
    figure_of,
);

/// The largest budget's verdict (the seed's 15-second video): the same
/// whichever order the cases finished in.
fn figure_of(runs: &Runs, col: &str) -> Result<Figure, Missing> {
    let run = pick(runs, col, |r| has(r, media::INSTRUMENT)).ok_or(Missing::NotMeasured)?;
    let cases: Vec<&CaseRecord> = run.cases_of(media::INSTRUMENT).collect();
    let budget = |c: &CaseRecord| metric(c, media::BUDGET_GIB).filter(|b| b.is_finite()).unwrap_or(f64::NEG_INFINITY);
    let judged = cases.iter().filter(|c| note(c, media::VERDICT).is_some());
    let Some(c) = judged.max_by(|a, b| budget(a).total_cmp(&budget(b)).then_with(|| b.id.cmp(&a.id))) else {
        return Err(missing_from(run, &cases));
    };
    let (free, budget) = (finite(run, c, media::FREE_GIB)?, finite(run, c, media::BUDGET_GIB)?);
    let verdict = note(c, media::VERDICT).unwrap_or("");
    // Since the media stack's own memory is recorded apart, "free" is with
    // the stack loaded.
    let alone = metric(c, media::FREE_ALONE_GIB).filter(|a| a.is_finite());
    let with = if alone.is_some() { " with loadout" } else { "" };
    let (value, raw) = match verdict {
        verdict::YES => (
            9.0 + ((free - budget) / budget).clamp(0.0, 1.0),
            format!("YES - ~{free:.1} GiB free{with} vs {budget:.1} needed"),
        ),
        verdict::MARGINAL => (3.0, format!("MARGINAL - ~{free:.1} GiB free{with} vs {budget:.1} needed")),
        verdict::YES_WITH_KV_TRADE => {
            let kept = finite(run, c, media::KV_KEPT_TOKENS)?;
            let after = metric(c, media::FREE_AFTER_TRADE_GIB).unwrap_or(free);
            (
                // Ranked by the KV kept, in tokens: full marks at room for
                // eight of the largest agent inputs the seed recorded.
                6.0 + 2.0 * (kept / (8.0 * LARGEST_AGENT_INPUT)).clamp(0.0, 1.0),
                format!(
                    "YES WITH KV TRADE - KV kept: {} tokens - ~{after:.1} GiB free vs {budget:.1} needed",
                    thousands(kept)
                ),
            )
        }
        _ => (
            (free / budget).clamp(0.0, 1.0),
            format!(
                "NO - {} vs {budget:.1} needed{}",
                match alone {
                    Some(a) => format!("~{a:.1} GiB free alone, ~{free:.1} GiB after the media loadout"),
                    None => format!("~{free:.1} GiB free"),
                },
                note(c, media::NO_TRADE).map_or(String::new(), |w| format!("; {w}"))
            ),
        ),
    };
    let mut raw = raw;
    if let Some(b) = note(c, media::BUDGET) {
        raw.push_str(&format!(" ({b}, {})", note(c, media::POOL).unwrap_or("")));
    }
    Ok(figure(run, value, raw, &[c]))
}
