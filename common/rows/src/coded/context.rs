//! The context window row (`context`).

use sparktest_contract::context;

use super::*;

pub const ROW: RowDef = relative(context::ROW, true, 0.01, figure_of);

fn figure_of(runs: &Runs, col: &str) -> Result<Figure, Missing> {
    let (run, c) = one_case(runs, col, context::INSTRUMENT)?;
    let pool = finite(run, c, context::KV_POOL_TOKENS)?;
    let mut raw = format!("KV pool {} tokens", thousands(pool));
    if let Some(ctx) = metric(c, context::CONTEXT_PER_REQUEST_TOKENS) {
        raw.push_str(&format!(" at ctx {} per request", thousands(ctx)));
    }
    if let Some(slots) = metric(c, context::SLOTS) {
        raw.push_str(&format!(" × {slots:.0} slots"));
    }
    Ok(figure(run, pool, raw, &[c]))
}
