//! Facts about the client machine, via the `sysinfo` crate.

use sparktest_record::HostInfo;
use sysinfo::{CpuRefreshKind, MemoryRefreshKind, RefreshKind, System};

/// A snapshot of this machine.
pub fn snapshot() -> HostInfo {
    let kinds = RefreshKind::nothing()
        .with_cpu(CpuRefreshKind::nothing())
        .with_memory(MemoryRefreshKind::nothing().with_ram());
    let sys = System::new_with_specifics(kinds).ok();
    let cpus = sys.as_ref().map(|s| s.cpus()).unwrap_or_default();
    HostInfo {
        hostname: System::host_name().ok(),
        cpu_model: cpus.first().map(|c| c.brand().trim().to_string()).filter(|b| !b.is_empty()),
        cores: cpus.len(),
        memory_bytes: sys.as_ref().map_or(0, System::total_memory),
        memory_available_bytes: sys.as_ref().map_or(0, System::available_memory),
        os: System::long_os_version().ok(),
        kernel: System::kernel_version().ok(),
    }
}
