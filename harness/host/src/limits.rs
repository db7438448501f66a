//! The sandbox's limits: what every plugin instance may use, from the
//! project's run settings.

use std::time::Duration;

use crate::config::Config;

/// Limits applied to every instance.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Guest CPU budget per case, in fuel units (about one per instruction).
    pub fuel: u64,
    /// Guest linear memory cap, bytes.
    pub memory_bytes: usize,
    /// Wall-clock limit per case, server time included.
    pub case_timeout: Duration,
    /// Limit of one request (what an instrument leaves after a load's last
    /// send).
    pub request_timeout: Duration,
    /// Wall-clock limit of `describe`, `cases` and `render`.
    pub setup_timeout: Duration,
    /// Most bytes a guest may hand the host in one call.
    pub hostcall_bytes: usize,
}

impl Limits {
    /// The sandbox's limits from the run settings.
    pub fn of_run(config: &Config) -> Limits {
        let run = &config.run;
        Limits {
            fuel: run.fuel_per_case,
            memory_bytes: usize::try_from(run.memory_per_instance_mib.saturating_mul(1 << 20)).unwrap_or(usize::MAX),
            case_timeout: Duration::from_secs(run.case_timeout_secs),
            request_timeout: Duration::from_secs(run.request_timeout_secs),
            setup_timeout: Duration::from_secs(run.setup_timeout_secs),
            hostcall_bytes: usize::try_from(run.hostcall_mib.saturating_mul(1 << 20)).unwrap_or(usize::MAX),
        }
    }
}
