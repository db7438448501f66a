//! The adversarial row (`adversarial`).

use sparktest_contract::adversarial;

use super::*;

pub const ROW: RowDef = relative(adversarial::ROW, true, 0.0, |r, c| {
    pass_rate(r, c, adversarial::INSTRUMENT, None, |_, _| Ok(String::new()))
});
