//! `media`: Free memory with a media stack loaded, against its budget.

use super::*;

/// The values of [`VERDICT`].
pub mod verdict {
    /// The media stack fits beside the serve.
    pub const YES: &str = "YES";
    /// It fits once the serve gives up KV cache.
    pub const YES_WITH_KV_TRADE: &str = "YES WITH KV TRADE";
    /// It fits with no room to spare.
    pub const MARGINAL: &str = "MARGINAL";
    /// It does not fit.
    pub const NO: &str = "NO";
}

/// The instrument's name.
pub const INSTRUMENT: &str = "media";
/// The row "Shares a box with media".
pub const ROW: Row = Row { title: "Shares a box with media", instrument: INSTRUMENT };
/// Metric: the media budget.
pub const BUDGET_GIB: Metric = Metric("budget-gib");
/// Metric: free memory after the KV trade.
pub const FREE_AFTER_TRADE_GIB: Metric = Metric("free-after-trade-gib");
/// Metric: free memory before the media loadout.
pub const FREE_ALONE_GIB: Metric = Metric("free-alone-gib");
/// Metric: free memory with the media stack loaded.
pub const FREE_GIB: Metric = Metric("free-gib");
/// Metric: KV bytes per token.
pub const KV_BYTES_PER_TOKEN: Metric = Metric("kv-bytes-per-token");
/// Metric: KV tokens given up.
pub const KV_GIVEN_TOKENS: Metric = Metric("kv-given-tokens");
/// Metric: KV tokens kept.
pub const KV_KEPT_TOKENS: Metric = Metric("kv-kept-tokens");
/// Metric: the KV pool, in tokens.
pub const KV_POOL_TOKENS: Metric = Metric("kv-pool-tokens");
/// Metric: the media loadout.
pub const LOADOUT_GIB: Metric = Metric("loadout-gib");
/// Metric: free memory beyond the budget.
pub const MARGIN_GIB: Metric = Metric("margin-gib");
/// Metric: the memory pool's size.
pub const POOL_TOTAL_GIB: Metric = Metric("pool-total-gib");
/// Note: the budget's name.
pub const BUDGET: Note = Note("budget");
/// Note: where the KV bytes per token came from.
pub const KV_BYTES_SOURCE: Note = Note("kv-bytes-source");
/// Note: why no KV trade was possible.
pub const NO_TRADE: Note = Note("no-trade");
/// Note: the memory pool read.
pub const POOL: Note = Note("pool");
/// Note: YES, YES WITH KV TRADE, MARGINAL or NO.
pub const VERDICT: Note = Note("verdict");
