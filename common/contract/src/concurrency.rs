//! `concurrency`: Requests at once: what one agent gets while others work.

use super::*;

/// The instrument's name.
pub const INSTRUMENT: &str = "concurrency";
/// The row "Concurrency".
pub const ROW: Row = Row { title: "Concurrency", instrument: INSTRUMENT };
/// Case group: one level of requests at once, `level::c<n>`.
pub const LEVEL: Group = Group("level");

/// The case name of level `n`: `level::c2`.
pub fn level(n: u32) -> GroupCase<Level> {
    LEVEL.case(Level(n))
}

/// The level of a case name as written (`"2"` for `level::c2`), when
/// it is one.
pub fn level_of(case: &str) -> Option<&str> {
    LEVEL.item(case)?.strip_prefix('c')
}

/// A level's item in its case name, displayed as `c<n>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Level(pub u32);

impl core::fmt::Display for Level {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "c{}", self.0)
    }
}
/// Metric: completion tokens of all requests over the wall time.
pub const AGGREGATE_TOK_S: Metric = Metric("aggregate-tok-s");
/// Metric: completion tokens of all requests.
pub const COMPLETION_TOKENS: Metric = Metric("completion-tokens");
/// Metric: requests sent at once.
pub const CONCURRENCY: Metric = Metric("concurrency");
/// Metric: mean per-request tokens over the request's whole time.
pub const PER_REQUEST_E2E_TOK_S: Metric = Metric("per-request-e2e-tok-s");
/// Metric: the slowest request's, the same way.
pub const PER_REQUEST_E2E_TOK_S_MIN: Metric = Metric("per-request-e2e-tok-s-min");
/// Metric: mean per-request decode rate.
pub const PER_REQUEST_TOK_S: Metric = Metric("per-request-tok-s");
/// Metric: the fastest request's decode rate.
pub const PER_REQUEST_TOK_S_MAX: Metric = Metric("per-request-tok-s-max");
/// Metric: the slowest request's decode rate.
pub const PER_REQUEST_TOK_S_MIN: Metric = Metric("per-request-tok-s-min");
/// Metric: requests the server had waiting.
pub const QUEUED_REQUESTS: Metric = Metric("queued-requests");
/// Metric: most requests the server ran at once.
pub const SERVER_RUNNING_MAX: Metric = Metric("server-running-max");
/// Metric: mean requests the server ran.
pub const SERVER_RUNNING_MEAN: Metric = Metric("server-running-mean");
/// Metric: live-load samples taken.
pub const SERVER_SAMPLES: Metric = Metric("server-samples");
/// Metric: most requests the server had waiting.
pub const SERVER_WAITING_MAX: Metric = Metric("server-waiting-max");
/// Metric: wall time of the level.
pub const WALL_MS: Metric = Metric("wall-ms");
/// Note: what was queued.
pub const QUEUED: Note = Note("queued");
/// Note: one request's figures.
pub const REQUEST: Note = Note("request");
/// Note: whether the server's own count confirms the concurrency.
pub const SERVER_CONFIRMED: Note = Note("server-confirmed");
/// Note: where the live load was read.
pub const SERVER_LOAD_SOURCE: Note = Note("server-load-source");
/// Note: where token counts came from.
pub const TOKEN_SOURCE: Note = Note("token-source");
