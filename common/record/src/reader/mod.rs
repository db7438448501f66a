//! The one reader of measurement files: the board's host and reporter,
//! `diff`, `show` and `--resume` all read through it, so a change to the
//! format is made and tested once.
//!
//! - [`File`]: one file read as far as it is whole, every line parsed once,
//!   keeping of each endpoint call only what the reader asks for (`C`).
//! - [`list`]: the measurement files of a folder.
//! - [`chain`]: a run read back through the runs it resumes.
//! - [`merge`]: runs in start order, each run id once, the parts of a
//!   partitioned run and a run with its resumes read as one [`Run`], each
//!   case once (its later record wins), and every file's run kept for the
//!   run log ([`Logged`]).
//! - [`Run::failed`]: whether a run failed as a run (answered nothing,
//!   stopped early, interrupted, never finished).

mod chain;
mod file;
#[cfg(test)]
mod fixtures;
mod log;
mod merge;
mod run;

pub use chain::{Chain, chain};
pub use file::{File, FileError, FileErrorKind, MAX_FILE_BYTES, list, open_in_folder};
pub use log::{Logged, night};
pub use merge::{Merged, merge};
pub use run::Run;

/// What a reader that needs nothing of the endpoint calls keeps of each:
/// nothing (`File::<Unread>`): the calls are skipped unread.
pub type Unread = serde::de::IgnoredAny;
