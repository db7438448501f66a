//! Guest code several instruments share: agent-shaped tasks in the A-Bench
//! format ([`task`]), decode-speed figures from a streamed reply
//! ([`speed`]), and the prompt and task files they read ([`data`]).
#![warn(missing_docs)]

pub mod data;
pub mod speed;
pub mod task;
