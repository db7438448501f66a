//! `context`: The KV pool the server keeps.

use super::*;

/// The instrument's name.
pub const INSTRUMENT: &str = "context";
/// The row "Context window".
pub const ROW: Row = Row { title: "Context window", instrument: INSTRUMENT };
/// Metric: context per request, in tokens.
pub const CONTEXT_PER_REQUEST_TOKENS: Metric = Metric("context-per-request-tokens");
/// Metric: the KV pool, in tokens.
pub const KV_POOL_TOKENS: Metric = Metric("kv-pool-tokens");
/// Metric: the server's slots.
pub const SLOTS: Metric = Metric("slots");
/// Note: the engine read.
pub const ENGINE: Note = Note("engine");
/// Note: where the pool size was read.
pub const KV_POOL_SOURCE: Note = Note("kv-pool-source");
