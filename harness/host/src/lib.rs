//! The engine of `cargo sparktest`: it runs instrument plugins against a
//! serving target and writes what they measured.
//!
//! - `suite` loads `suites/<name>/suite.toml` (the project's, else the
//!   `builtin` one shipped in the binary) and checks its data against
//!   their sha256 pins.
//! - `plugin` builds instrument crates for `wasm32-wasip2`, loads them with
//!   wasmtime, sandboxed (no files, sockets, environment or clocks; capped
//!   memory; fuel-bounded CPU), and runs one fresh instance per case.
//! - [`endpoint`] is the only way out of the sandbox: an OpenAI-compatible
//!   client (reqwest + tokio, SSE with per-chunk timing) and a probe per
//!   engine.
//! - `runner` turns cases into libtest trials; every case and the run
//!   itself are events (`events.rs`), fanned out to the sinks (`sinks/`:
//!   measurement file, terminal summary, JUnit, progress, transcripts);
//!   `snapshot.rs` keeps byte-for-byte repeats as insta snapshots.
//! - `target.rs` launches a configured server (the reference target) in
//!   its own process group and stops it after, or when the harness is
//!   stopped; `signal.rs` stops them on a stop signal.
//! - [`board()`] runs a reporter plugin over a folder of measurement files;
//!   [`show()`] prints a case's transcript; [`diff()`] tells a change
//!   between two runs from run-to-run variation.
//! - `redact` keeps (what [`redacted`] does to a printed error) keys out of every output.
//!
//! # Known limitations
//!
//! - Prompt logprobs of vLLM and SGLang are tested on recorded responses
//!   only; llama.cpp has none, so the call answers `unsupported`.
#![warn(missing_docs)]

// Every module is private: what the CLI, the tests and the benchmarks call
// is re-exported below, and nothing else is the crate's surface.
//
// The modules stand on floors, listed from the ground up, one group of
// lines a floor: a module imports only modules of the floors below its
// own, never one of its own floor or above, and nothing through the crate
// root (the tree test holds this). A helper lives on the lowest floor that
// every room using it stands on.

// The ground: errors, files, names, redaction and printing, stop signals,
// times.
mod error;
mod files;
mod names;
mod redact;
mod signal;
mod timestamp;

// The project, the machine, a case's transcript and snapshots.
mod config;
mod hostinfo;
mod snapshot;
mod transcript;

// The bytes the binary carries, a run's events, the sandbox's limits.
mod carried;
mod events;
mod limits;

// Suites, the measurements folder, a run's tally, the launched targets.
mod measurements;
mod suite;
mod tally;
mod target;

// Plugins and the sinks of a run's events.
mod plugin;
mod sinks;

// The run.
mod runner;

// The commands over runs and measurements.
mod board;
mod campaign;
mod diff;
mod scaffold;
mod show;

// The commands, one function and its arguments each.
pub use board::{BoardArgs, Selection, board};
pub use campaign::status::{StatusArgs, status as campaign_status};
pub use campaign::{CampaignArgs, campaign};
pub use diff::{DiffArgs, DiffFormat, diff};
pub use runner::{RunArgs, TargetChoice, run};
pub use scaffold::{init, new_instrument, pin, version};
pub use show::{ShowArgs, show};

// What they fail with, and how an error is printed.
pub use error::{Error, ErrorKind};
pub use redact::{printed as redacted, shown};

// The project's config and its suites.
pub use config::Config;
pub use files::sha256_hex;
pub use suite::{Source, board_suites, known as known_suites, load as load_suite};

// Plugins: the host, its compile cache, the built-in components, and what
// the board benchmark times step by step.
pub use board::read_measurements;
pub use carried::{COMPONENTS, compare as compare_components, component as builtin_component};
pub use limits::Limits;
pub use measurements::index_path as board_index_path;
pub use plugin::{PluginHost, compile_cache_dir, component_for, trusted_workspaces};

// The HTTP side, its own crate.
pub use sparktest_endpoint as endpoint;
