//! `repro`: The same request, repeated and across a restart.

use super::*;

/// The value of an identity note that held.
pub const YES: &str = "yes";
/// The value of an identity note that did not.
pub const NO: &str = "no";

/// The instrument's name.
pub const INSTRUMENT: &str = "repro";
/// The row "Reproducibility".
pub const ROW: Row = Row { title: "Reproducibility", instrument: INSTRUMENT };
/// Metric: distinct answers.
pub const DISTINCT_ANSWERS: Metric = Metric("distinct-answers");
/// Metric: distinct replies byte for byte.
pub const DISTINCT_REPLIES: Metric = Metric("distinct-replies");
/// Metric: requests repeated.
pub const REPEATS: Metric = Metric("repeats");
/// Note: yes or no.
pub const ANSWER_IDENTICAL: Note = Note("answer-identical");
/// Note: yes or no.
pub const BYTE_IDENTICAL: Note = Note("byte-identical");
/// Note: yes, no or why not measured.
pub const RESTART_ANSWER_IDENTICAL: Note = Note("restart-answer-identical");
/// Note: yes, no or why not measured.
pub const RESTART_BYTE_IDENTICAL: Note = Note("restart-byte-identical");
