//! The measurement file of cargo-sparktest, and its exit codes.
//!
//! A measurement file is JSON Lines: every line is one message
//! `{"type": "...", "data": {...}}`. The first line is a `manifest`, then one
//! `case` line per finished case, in the order they finished, and last a
//! `summary` line when the run ended normally (a file without one is the
//! record of a run that crashed or was killed: every case in it still counts).
//! New fields may be added within a format version; readers ignore fields
//! they do not know. `docs/measurement-file.md` documents every field.
//!
//! This crate is small on purpose: the host writes these types and reporter
//! plugins read them. One concern a module:
//!
//! - `manifest`: the first line ([`Manifest`]: target, suite, hosts, arms,
//!   partition, resume, repeat);
//! - `case`: a case line ([`CaseRecord`]) and its calls ([`CallRecord`]);
//! - `summary`: the last line ([`Summary`]) and the efficiency readout;
//! - `verdict`: how a case ended ([`Outcome`], [`Verdict`]);
//! - `gate`: a gate suite's verdict ([`Gate`], [`GateFailure`]);
//! - `row`: a board row a suite declares ([`RowDeclaration`]);
//! - [`reader`]: the one reader: files as far as they are whole, folders,
//!   runs read together (parts, resumes, each case once), a run's failure;
//! - [`exit_code`]: the process exit codes;
//! - [`foreign`]: the one printer of foreign text (terminal, CI, JUnit).
#![warn(missing_docs)]

mod case;
pub mod exit_code;
pub mod foreign;
mod gate;
pub mod handover;
mod manifest;
mod read;
pub mod reader;
mod row;
mod summary;
mod verdict;

use serde::{Deserialize, Serialize};

pub use case::{CallRecord, CaseRecord, Latency, LoadWindow, Metric, Percentiles};
pub use gate::{Gate, GateFailure};
pub use manifest::{
    Accelerator, ArmInfo, CampaignRef, ClientCeiling, FilePin, HarnessInfo, HostInfo, InstrumentInfo, JobRef,
    LAUNCH_PORT, Manifest, Partition, Repeat, SuiteInfo, TargetInfo,
};
pub use read::ReadError;
pub use row::{Better, FigureKind, RowDeclaration, Standing};
pub use summary::{Efficiency, InstrumentSummary, Summary};
pub use verdict::{Outcome, Verdict};

/// Version of the measurement-file format. A reader refuses a file whose
/// major version it does not know.
pub const FORMAT_VERSION: &str = "1.7";

/// One line of a measurement file. `C` is what a reader keeps of each
/// endpoint call ([`reader::File`]); the whole [`CallRecord`] by default.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", content = "data", rename_all = "kebab-case")]
#[allow(clippy::large_enum_variant)] // one manifest per file; boxing buys nothing
pub enum Line<C = CallRecord> {
    /// The first line: what was measured, where, with what.
    Manifest(Manifest),
    /// One finished case.
    Case(CaseRecord<C>),
    /// The last line of a run that ended normally.
    Summary(Summary),
}
