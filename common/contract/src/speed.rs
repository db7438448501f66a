//! `speed`: Single-stream decode speed by category.

use super::*;

/// The instrument's name.
pub const INSTRUMENT: &str = "speed";
/// The row "Prose speed".
pub const ROW: Row = Row { title: "Prose speed", instrument: INSTRUMENT };
/// Case group: a task of the agent-shaped workload, `agent::<task>`
/// (not the row's figure); its decode cases are [`workload::DECODE`]'s.
pub const AGENT: Group = Group("agent");
