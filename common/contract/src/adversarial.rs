//! `adversarial`: Adversarial agent scenarios.

use super::*;

/// The instrument's name.
pub const INSTRUMENT: &str = "adversarial";
/// The row "Reliability under adversarial agent scenarios".
pub const ROW: Row = Row { title: "Reliability under adversarial agent scenarios", instrument: INSTRUMENT };
/// Metric: the tool calls the scenario saw done.
pub const TOOL_CALLS: Metric = Metric("tool-calls");
/// Note: the scenario rule that decided.
pub const RULE: Note = Note("rule");
/// Note: the step at which it decided.
pub const STEP: Note = Note("step");
/// Note: the steps taken.
pub const STEPS: Note = Note("steps");
