//! The plugin host: instruments are WASM components run in a sandbox.
//!
//! Generated bindings stay in `bindings`; the rest of the harness sees only
//! the host's own types.

mod bindings;
mod build;
mod host;
mod state;

pub use build::component_for;
pub use host::{CaseInfo, CaseResult, CaseVerdict, InstrumentPlugin, Limits, PluginHost};
pub use state::CallLog;
