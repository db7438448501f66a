//! Guest code several instruments share: agent-shaped tasks in the A-Bench
//! format ([`task`]) and decode-speed figures from a streamed reply
//! ([`speed`]).
#![warn(missing_docs)]

pub mod speed;
pub mod task;
