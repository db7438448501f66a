//! The engine of `cargo sparktest`: it runs instrument plugins against a
//! serving target and writes what they measured.
//!
//! - [`suite`] loads `suites/<name>/suite.toml` (the project's, else the
//!   [`builtin`] one shipped in the binary) and checks its data against
//!   their sha256 pins.
//! - [`plugin`] builds instrument crates for `wasm32-wasip2`, loads them with
//!   wasmtime, sandboxed (no files, sockets, environment or clocks; capped
//!   memory; fuel-bounded CPU), and runs one fresh instance per case.
//! - [`endpoint`] is the only way out of the sandbox: an OpenAI-compatible
//!   client (reqwest + tokio, SSE with per-chunk timing) and a probe per
//!   engine.
//! - [`runner`] turns cases into libtest trials; every case and the run
//!   itself are events (`events.rs`), fanned out to the sinks (`sinks/`:
//!   measurement file, terminal summary, JUnit, progress, transcripts);
//!   `snapshot.rs` keeps byte-for-byte repeats as insta snapshots.
//! - `target.rs` launches a configured server (the reference target) in
//!   its own process group and stops it after, or when the harness is
//!   stopped; `signal.rs` stops them on a stop signal.
//! - [`board()`] runs a reporter plugin over a folder of measurement files;
//!   [`show()`] prints a case's transcript; [`diff()`] tells a change
//!   between two runs from run-to-run variation.
//! - [`redact`] keeps keys out of every output.
//!
//! # Known limitations
//!
//! - Prompt logprobs of vLLM and SGLang are tested on recorded responses
//!   only; llama.cpp has none, so the call answers `unsupported`.
#![warn(missing_docs)]

pub mod board;
pub mod builtin;
pub mod campaign;
pub mod config;
pub mod diff;
pub mod error;
pub(crate) mod events;
pub(crate) mod hostinfo;
pub mod plugin;
pub mod redact;
pub mod runner;
pub mod scaffold;
pub mod show;
pub(crate) mod signal;
pub(crate) mod sinks;
pub(crate) mod snapshot;
pub mod suite;
pub(crate) mod target;
pub(crate) mod timestamp;
pub(crate) mod transcript;

pub use board::{BoardArgs, board};
pub use campaign::status::{StatusArgs, status as campaign_status};
pub use campaign::{CampaignArgs, campaign};
pub use diff::{DiffArgs, DiffFormat, diff};
pub use error::{Error, ErrorKind};
pub use runner::{RunArgs, TargetChoice, run};
pub use show::show;
pub use sparktest_endpoint as endpoint;
