//! Facts about the machine, via the `sysinfo` crate, and about its GPUs via
//! `nvidia-smi` where it exists.

use sparktest_record::{Accelerator, HostInfo};
use sysinfo::{CpuRefreshKind, MemoryRefreshKind, RefreshKind, System};

/// A snapshot of this machine.
pub fn snapshot() -> HostInfo {
    let kinds =
        RefreshKind::nothing().with_cpu(CpuRefreshKind::nothing()).with_memory(MemoryRefreshKind::nothing().with_ram());
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
        accelerators: accelerators(),
    }
}

/// `nvidia-smi --query-gpu=…` as CSV lines, or None where it does not run.
fn nvidia_smi(fields: &str) -> Option<Vec<Vec<String>>> {
    nvidia_smi_query(&format!("--query-gpu={fields}"))
}

/// One `nvidia-smi` query (`--query-gpu=…`, `--query-compute-apps=…`): its
/// CSV lines split into trimmed fields, or None where it does not run.
fn nvidia_smi_query(query: &str) -> Option<Vec<Vec<String>>> {
    let out = std::process::Command::new("nvidia-smi").args([query, "--format=csv,noheader,nounits"]).output().ok()?;
    if !out.status.success() {
        return None;
    }
    Some(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.split(',').map(|f| f.trim().to_string()).collect())
            .collect(),
    )
}

/// A GPU's memory figure; "[N/A]" or "Not Supported" where the GPU has no
/// memory of its own (a unified pool, e.g. GB10).
fn mib(field: Option<&String>) -> Option<u64> {
    field.and_then(|f| f.parse().ok())
}

/// Every GPU `nvidia-smi` reports: name, driver, memory total and used.
pub fn accelerators() -> Vec<Accelerator> {
    parse_accelerators(nvidia_smi("name,driver_version,memory.total,memory.used").unwrap_or_default())
}

fn parse_accelerators(rows: Vec<Vec<String>>) -> Vec<Accelerator> {
    rows.into_iter()
        .map(|r| {
            let total = mib(r.get(2));
            Accelerator {
                name: r.first().cloned().unwrap_or_default(),
                driver: r.get(1).cloned().filter(|d| !d.is_empty()),
                memory_total_mib: total,
                memory_used_mib: mib(r.get(3)),
                unified_memory: total.is_none(),
            }
        })
        .collect()
}

/// The box's memory pools now: each GPU's free memory, or the host's
/// available memory where the GPU shares it (unified) or there is no GPU.
pub fn memory_pools() -> Vec<crate::endpoint::MemoryPool> {
    use crate::endpoint::{MemoryPool, PoolKind};
    let rows = nvidia_smi("name,memory.total,memory.free").unwrap_or_default();
    let host = || {
        let sys =
            System::new_with_specifics(RefreshKind::nothing().with_memory(MemoryRefreshKind::nothing().with_ram()))
                .ok()?;
        Some((sys.total_memory(), sys.available_memory()))
    };
    let mut pools = Vec::new();
    let mut unified = false;
    for r in &rows {
        match (mib(r.get(1)), mib(r.get(2))) {
            (Some(total), Some(free)) => pools.push(MemoryPool {
                kind: PoolKind::Gpu,
                device: r.first().cloned().unwrap_or_default(),
                total_bytes: total << 20,
                free_bytes: free << 20,
            }),
            _ => unified = true,
        }
    }
    if (unified || rows.is_empty())
        && let Some((total, free)) = host()
    {
        let kind = if unified { PoolKind::Unified } else { PoolKind::System };
        let device =
            if unified { rows.first().and_then(|r| r.first().cloned()).unwrap_or_default() } else { "host".into() };
        pools.push(MemoryPool { kind, device, total_bytes: total, free_bytes: free });
    }
    pools
}

/// sha256 of a model file, read in a stream (a 35B GGUF is never held in
/// memory), regular files only, with a progress line per 4 GiB. The digest
/// is cached by path, size and modification time under `cache`.
pub fn file_sha256(path: &std::path::Path, cache: &std::path::Path) -> Result<String, String> {
    use sha2::{Digest, Sha256};
    use std::io::Read;
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!("{} is not a regular file", path.display()));
    }
    let mtime =
        meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos());
    let key = format!("{}\t{}\t{mtime}", path.display(), meta.len());
    let cache_file = cache.join("model-digests.tsv");
    let cached = std::fs::read_to_string(&cache_file).unwrap_or_default();
    if let Some(hit) = cached.lines().find_map(|l| l.strip_prefix(&format!("{key}\t"))) {
        return Ok(hit.to_string());
    }
    let mut file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let (mut read, mut next_report) = (0u64, 4u64 << 30);
    loop {
        let n = file.read(&mut buf).map_err(|e| format!("{}: {e}", path.display()))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        read += n as u64;
        if read >= next_report {
            crate::warn_line!(
                "sparktest: hashing {}: {:.0} of {:.0} GiB",
                path.display(),
                read as f64 / 1073741824.0,
                meta.len() as f64 / 1073741824.0
            );
            next_report += 4 << 30;
        }
    }
    let digest: String = hasher.finalize().iter().map(|b| format!("{b:02x}")).collect();
    // A cache that cannot be written only costs a rehash next time. Written
    // aside and renamed: a concurrent run reads a whole file.
    let _ = std::fs::create_dir_all(cache);
    let tmp = cache.join(format!(".model-digests.{}.tmp", std::process::id()));
    if std::fs::write(&tmp, format!("{cached}{key}\t{digest}\n")).is_ok() {
        let _ = std::fs::rename(&tmp, &cache_file);
    }
    Ok(digest)
}

/// Memory the host has available now, in bytes (Linux `MemAvailable`).
pub fn memory_available() -> Option<u64> {
    let sys =
        System::new_with_specifics(RefreshKind::nothing().with_memory(MemoryRefreshKind::nothing().with_ram())).ok()?;
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
    let rows = nvidia_smi_query("--query-compute-apps=pid,used_memory")?;
    // No row of these processes with a figure (another pid namespace, or a
    // GPU that reports no per-process memory) is not a measured 0.
    let held: Vec<u64> = rows
        .iter()
        .filter_map(|r| {
            let pid: u32 = r.first()?.parse().ok()?;
            pids.contains(&pid).then(|| r.get(1)?.parse::<u64>().ok()).flatten()
        })
        .collect();
    (!held.is_empty()).then(|| held.iter().sum())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpus_with_and_without_their_own_memory() {
        let rows = vec![
            vec!["NVIDIA H200".into(), "580.95".into(), "143771".into(), "1470".into()],
            vec!["NVIDIA GB10".into(), "580.95".into(), "[N/A]".into(), "[N/A]".into()],
        ];
        let a = parse_accelerators(rows);
        assert_eq!((a[0].memory_total_mib, a[0].unified_memory), (Some(143771), false));
        assert_eq!((a[1].memory_total_mib, a[1].unified_memory), (None, true));
        assert_eq!(a[1].driver.as_deref(), Some("580.95"));
    }

    #[test]
    fn a_model_digest_streams_and_is_cached() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("m.gguf");
        std::fs::write(&f, b"abc").unwrap();
        let sha = file_sha256(&f, dir.path()).unwrap();
        assert_eq!(sha, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert!(std::fs::read_to_string(dir.path().join("model-digests.tsv")).unwrap().contains(&sha));
        assert_eq!(file_sha256(&f, dir.path()).unwrap(), sha);
        assert!(file_sha256(dir.path(), dir.path()).unwrap_err().contains("not a regular file"));
    }
}
