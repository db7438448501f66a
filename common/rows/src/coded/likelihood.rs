//! The likelihood row (`likelihood`).

use sparktest_contract::likelihood;

use super::*;

pub const ROW: RowDef = relative(likelihood::ROW, false, 0.01, figure_of);

fn figure_of(runs: &Runs, col: &str) -> Result<Figure, Missing> {
    // An engine with no prompt logprobs cannot be measured at all: 0.
    let (run, c) = one_case(runs, col, likelihood::INSTRUMENT).map_err(incapable)?;
    let bpc = finite(run, c, likelihood::BPC)?;
    Ok(figure(run, bpc, format!("{bpc:.4} bpc"), &[c]))
}
