//! `hard-question`: The configuration battery's hard questions.

use super::*;

/// The instrument's name.
pub const INSTRUMENT: &str = "hard-question";
/// The row "Configuration battery".
pub const ROW: Row = Row { title: "Configuration battery", instrument: INSTRUMENT };
