//! What the host hands the board reporter besides the measurement files,
//! as JSON across the component boundary: the files it could not read
//! whole, the files of a run another file already gave, and the nights it
//! folded into counts. One definition, serialised by the host and read by
//! the reporter.

use serde::{Deserialize, Serialize};

/// A measurement file the board could not read whole: where it broke.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Damage {
    /// The file's name.
    pub file: String,
    /// The first line not read (1-based).
    pub line: usize,
    /// Why.
    pub message: String,
    /// Whether the file's whole lines before it were kept.
    pub kept: bool,
}

/// A whole measurement file of a run another file already gave: the run
/// is read once, from the first file by name; this one is named apart from
/// the damaged files (it is not damaged).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReadOnce {
    /// The file's name.
    pub file: String,
    /// The file the run was read from.
    pub first: String,
    /// The run both files hold.
    pub run_id: String,
    /// Whether it holds the same bytes as `first` (else it is another file
    /// of the same run id, and its records are not used).
    pub identical: bool,
}

impl ReadOnce {
    /// What is said of the file, on stderr and on the board.
    pub fn message(&self) -> String {
        let (first, run) = (&self.first, &self.run_id);
        if self.identical {
            format!("an identical copy of {first} (run {run}, the same bytes): read once")
        } else {
            format!(
                "a second file of run {run} (the first is {first}), not the same bytes: the run is read once, from {first}"
            )
        }
    }
}

/// A night of the run log handed to the reporter as counts: a board of
/// more history than the reporter is handed whole lists the latest
/// night's runs, and each older night as one line.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct FoldedNight {
    /// `campaign nightly-1206` or `2026-12-06`.
    pub label: String,
    /// Its first run's start: what places it in time.
    pub first: String,
    /// Its runs, each run id once.
    pub runs: usize,
    /// Runs with a failed case.
    pub failed_case: usize,
    /// Runs with a lost case.
    pub lost_case: usize,
    /// Runs with no summary line, or interrupted.
    pub unfinished: usize,
    /// Each run that failed as a run, or resumed or was resumed: `run id
    /// (file): what`, so that every failure stays one file away.
    #[serde(default)]
    pub notable: Vec<String>,
}
