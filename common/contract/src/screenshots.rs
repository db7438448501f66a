//! `screenshots`: Screenshots and photos read against a key.

use super::*;

/// The instrument's name.
pub const INSTRUMENT: &str = "screenshots";
/// The row "Real-world screenshot & photo reading".
pub const ROW: Row = Row { title: "Real-world screenshot & photo reading", instrument: INSTRUMENT };
/// Metric: 1 when the model answered.
pub const ANSWERED: Metric = Metric("answered");
/// Metric: the reading score, 0, 0.5 or 1.
pub const SCORE: Metric = Metric("score");
/// Note: why the reading scored so.
pub const READING: Note = Note("reading");
