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

/// Memory the host has available now, in bytes (Linux `MemAvailable`).
pub fn memory_available() -> Option<u64> {
    let sys = System::new_with_specifics(RefreshKind::nothing().with_memory(MemoryRefreshKind::nothing().with_ram())).ok()?;
    Some(sys.available_memory()).filter(|n| *n > 0)
}

/// Resident memory of a process and all its descendants, in bytes, and
/// their process ids.
pub fn process_tree(root: u32) -> Option<(u64, Vec<u32>)> {
    use sysinfo::{Pid, ProcessRefreshKind, ProcessesToUpdate, UpdateKind};
    let mut sys = System::new().ok()?;
    sys.refresh_processes_specifics(
        ProcessesToUpdate::All,
        true,
        ProcessRefreshKind::nothing().with_memory().with_exe(UpdateKind::Never),
    );
    let root = Pid::from_u32(root);
    sys.process(root)?;
    let in_tree = |mut pid: Pid| loop {
        if pid == root {
            return true;
        }
        match sys.process(pid).and_then(|p| p.parent()) {
            Some(parent) => pid = parent,
            None => return false,
        }
    };
    // sysinfo lists a process's threads as tasks with the process's own
    // memory: count processes only.
    let members: Vec<(&Pid, &sysinfo::Process)> =
        sys.processes().iter().filter(|(pid, p)| p.thread_kind().is_none() && in_tree(**pid)).collect();
    Some((members.iter().map(|(_, p)| p.memory()).sum(), members.iter().map(|(pid, _)| pid.as_u32()).collect()))
}

/// GPU memory held by these processes, in MiB, where `nvidia-smi` exists
/// (its compute-apps query: one `pid, used_memory` line per process).
pub fn gpu_process_memory_mib(pids: &[u32]) -> Option<u64> {
    let out = std::process::Command::new("nvidia-smi")
        .args(["--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    Some(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| {
                let (pid, mib) = l.split_once(',')?;
                let pid: u32 = pid.trim().parse().ok()?;
                pids.contains(&pid).then(|| mib.trim().parse::<u64>().ok()).flatten()
            })
            .sum(),
    )
}

/// GPU memory in use per device, in MiB, where `nvidia-smi` exists.
pub fn gpu_memory_used_mib() -> Option<Vec<u64>> {
    let out = std::process::Command::new("nvidia-smi")
        .args(["--query-gpu=memory.used", "--format=csv,noheader,nounits"])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8_lossy(&out.stdout).lines().map(|l| l.trim().parse().ok()).collect()
}
