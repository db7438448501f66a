//! `a-bench`: A-Bench: agent tasks checked by tool call, schema and text.

use super::*;

/// The instrument's name.
pub const INSTRUMENT: &str = "a-bench";
/// The row "Agent tasks".
pub const AGENT_TASKS: Row = Row { title: "Agent tasks", instrument: INSTRUMENT };
/// The row "Tools & structured output".
pub const TOOLS: Row = Row { title: "Tools & structured output", instrument: INSTRUMENT };
/// The row "Multi-turn & sequencing".
pub const MULTI_TURN: Row = Row { title: "Multi-turn & sequencing", instrument: INSTRUMENT };
/// Note: whether the reply was checked as structured output.
pub const STRUCTURED_OUTPUT: Note = Note("structured-output");
/// Note: how many tool calls the model made in the task.
pub const TOOL_CALLS: Note = Note("tool-calls");
/// Note: the conversation turns the task took.
pub const TURNS: Note = Note("turns");
