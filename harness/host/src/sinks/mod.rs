//! The consumers of a run's events.
//!
//! - [`measurement`]: the measurement file (JSON Lines).
//! - [`summary`]: the terminal summary, printed from the run's summary line.
//! - [`junit`]: JUnit XML for CI.
//! - [`progress`]: a progress bar on a terminal.
//! - [`transcripts`]: every case's exchanges beside the measurement file.

pub mod junit;
pub mod measurement;
pub mod progress;
pub mod summary;
pub mod transcripts;
