//! The consumers of a run's events.
//!
//! - [`measurement`]: the measurement file (JSON Lines).
//! - [`summary`]: the tally and the terminal summary.
//! - [`junit`]: JUnit XML for CI.
//! - [`progress`]: a progress bar on a terminal.
//! - [`transcripts`]: every case's exchanges beside the measurement file.

pub mod junit;
pub mod measurement;
pub mod progress;
pub mod summary;
pub mod transcripts;
