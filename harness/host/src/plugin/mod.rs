//! The plugin host: instruments and reporters are WASM components run in a
//! sandbox.
//!
//! One file per released interface version (`v1.rs` … `v5.rs`): its
//! generated bindings, conversions and imports, adapting to the host's one
//! case state (`state.rs`) and guest view (`adapter.rs`); what the versions
//! share is written once, in `adapter.rs`'s macros. The rest of the harness
//! sees only the host's own types.

#[macro_use]
mod adapter;
mod build;
mod cache;
mod host;
mod state;
mod v1;
mod v2;
mod v3;
mod v4;
mod v5;

#[cfg(test)]
pub(crate) use adapter::Finding;
pub use build::{component_for, own_workspace, trusted_workspaces};
pub use cache::compile_cache_dir;
pub use host::{CaseInfo, Ended, INTERFACES, InstrumentPlugin, PluginHost, Reach};
pub use state::{Judge, Restarter};
