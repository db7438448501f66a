//! The corruption probe's row (`corruption`).

use sparktest_contract::corruption;

use super::*;

pub const ROW: RowDef =
    relative(corruption::ROW, true, 0.0, |r, c| pass_rate(r, c, corruption::INSTRUMENT, None, chatter));

/// The serve kept the text; the model talked around it.
fn chatter(_: &Run, given: &[&CaseRecord]) -> Result<String, Missing> {
    let n = given.iter().filter(|c| note(c, corruption::MODEL_ADDED_WORDS).is_some()).count();
    Ok(if n > 0 { format!(" ({n} intact inside words the model added)") } else { String::new() })
}
