//! The plugin host: instruments and reporters are WASM components run in a
//! sandbox.
//!
//! Generated bindings stay in `bindings` (one module per released interface
//! version); the rest of the harness sees only the host's own types.

mod bindings;
mod build;
mod host;
mod names;
mod state;

pub use build::{component_for, trusted_workspaces};
pub use host::{CaseInfo, CaseResult, InstrumentPlugin, Limits, PluginHost, Reach};
pub use names::check_segments;
pub use state::{CallLog, Judge, Restarter};
