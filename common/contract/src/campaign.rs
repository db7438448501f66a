//! `campaign`: the host's own records of one configuration of a campaign
//! (`cargo sparktest campaign`): its launch, the memory its server gave
//! back after the stop, and every suite not run with why. No row reads
//! them; the board shows them with the campaign and the configuration.

use super::*;

/// The host's instrument name, and the suite name of its files.
pub const INSTRUMENT: &str = "campaign";
/// `launch::healthy`: the launch, to healthy, or why it failed.
pub const LAUNCH: Group = Group("launch");
/// The one case of [`LAUNCH`].
pub const HEALTHY: &str = "healthy";
/// `stop::memory-released`: the memory back after the stop.
pub const STOP: Group = Group("stop");
/// The one case of [`STOP`].
pub const MEMORY_RELEASED: &str = "memory-released";
/// `stop::server-died`: the server exited on its own before the
/// campaign stopped it (failed, with its exit status and log's end).
pub const SERVER_DIED: &str = "server-died";
/// `not-run::<suite>`: a suite not run, and why (not applicable).
pub const NOT_RUN: Group = Group("not-run");
/// Note on `launch::healthy`: which launch of the configuration it was
/// (the campaign's, a resume's, a forced resume's).
pub const LAUNCH_KIND: Note = Note("launch-kind");
/// Seconds from the launch to healthy (or to the failure).
pub const LAUNCH_SECS: Metric = Metric("launch-secs");
/// Host memory available before the launch.
pub const MEMORY_AVAILABLE_BEFORE_GIB: Metric = Metric("memory-available-before-gib");
/// GPU memory in use before the launch, where a GPU is seen.
pub const GPU_MEMORY_USED_BEFORE_GIB: Metric = Metric("gpu-memory-used-before-gib");
/// Host memory available once the server stopped and the wait ended.
pub const MEMORY_AVAILABLE_AFTER_GIB: Metric = Metric("memory-available-after-gib");
/// How much less was available after than before (0 when all back).
pub const MEMORY_NOT_GIVEN_BACK_GIB: Metric = Metric("memory-not-given-back-gib");
/// GPU memory in use after the wait.
pub const GPU_MEMORY_USED_AFTER_GIB: Metric = Metric("gpu-memory-used-after-gib");
/// Seconds waited after the stop.
pub const SETTLE_SECS: Metric = Metric("settle-secs");
