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

/// The batch job this process runs in, from what its scheduler put in its
/// environment: a Slurm job (or array task), or a Kubernetes Indexed Job's
/// pod (`JOB_COMPLETION_INDEX`); None outside one.
pub fn job() -> Option<sparktest_record::JobRef> {
    job_from(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
}

fn job_from(var: impl Fn(&str) -> Option<String>) -> Option<sparktest_record::JobRef> {
    if let Some(job_id) = var("SLURM_JOB_ID") {
        return Some(sparktest_record::JobRef {
            scheduler: "slurm".into(),
            job_id,
            array_job_id: var("SLURM_ARRAY_JOB_ID"),
            array_task_id: var("SLURM_ARRAY_TASK_ID"),
            restart_count: var("SLURM_RESTART_COUNT").and_then(|v| v.parse().ok()).unwrap_or(0),
            node: var("SLURMD_NODENAME"),
            partition: var("SLURM_JOB_PARTITION"),
            gpus: var("SLURM_JOB_GPUS"),
            visible_devices: var("CUDA_VISIBLE_DEVICES"),
        });
    }
    let index = var("JOB_COMPLETION_INDEX")?;
    Some(sparktest_record::JobRef {
        scheduler: "kubernetes".into(),
        job_id: var("HOSTNAME").unwrap_or_default(),
        array_task_id: Some(index),
        node: var("NODE_NAME"),
        visible_devices: var("CUDA_VISIBLE_DEVICES"),
        ..Default::default()
    })
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
    let rows = nvidia_smi("index,uuid,name,driver_version,memory.total,memory.used").unwrap_or_default();
    let visible = std::env::var("CUDA_VISIBLE_DEVICES").ok();
    parse_accelerators(visible_only(rows, visible.as_deref()))
}

/// The GPUs this process's servers may use: where `CUDA_VISIBLE_DEVICES`
/// names them (by index or UUID, as Slurm and Kubernetes set it), those
/// only, in its order; else every one. The leading index and UUID fields
/// are dropped.
fn visible_only(rows: Vec<Vec<String>>, visible: Option<&str>) -> Vec<Vec<String>> {
    let strip = |r: &Vec<String>| r.iter().skip(2).cloned().collect::<Vec<String>>();
    let Some(visible) = visible.map(str::trim).filter(|v| !v.is_empty()) else {
        return rows.iter().map(strip).collect();
    };
    visible
        .split(',')
        .map(str::trim)
        .filter_map(|want| {
            rows.iter().find(|r| {
                r.first().is_some_and(|i| i == want)
                    || r.get(1).is_some_and(|u| !want.is_empty() && u.starts_with(want))
            })
        })
        .map(strip)
        .collect()
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
/// Only the GPUs `CUDA_VISIBLE_DEVICES` gives this process, where it is
/// set: another Slurm task's server on the same node is not ours to wait
/// for.
pub fn memory_pools() -> Vec<sparktest_endpoint::MemoryPool> {
    use sparktest_endpoint::{MemoryPool, PoolKind};
    let rows = nvidia_smi("index,uuid,name,memory.total,memory.free").unwrap_or_default();
    let visible = std::env::var("CUDA_VISIBLE_DEVICES").ok();
    let rows = visible_only(rows, visible.as_deref());
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
    fn only_the_gpus_a_job_was_given_are_its_hardware() {
        let row =
            |i: &str, u: &str| vec![i.into(), u.into(), "NVIDIA H200".into(), "580".into(), "1".into(), "0".into()];
        let rows = vec![row("0", "GPU-aaa"), row("1", "GPU-bbb"), row("2", "GPU-ccc")];
        assert_eq!(visible_only(rows.clone(), None).len(), 3);
        assert_eq!(visible_only(rows.clone(), Some("")).len(), 3);
        let two = visible_only(rows.clone(), Some("2,0"));
        assert_eq!(two.len(), 2);
        assert_eq!(two[0][0], "NVIDIA H200", "index and UUID dropped");
        assert_eq!(visible_only(rows.clone(), Some("GPU-bbb")).len(), 1);
        assert_eq!(visible_only(rows, Some("7")).len(), 0, "none of them: none");
        // The job's GPUs from Slurm's environment.
        let env =
            [("SLURM_JOB_ID", "12"), ("SLURM_JOB_GPUS", "2"), ("CUDA_VISIBLE_DEVICES", "0"), ("SLURMD_NODENAME", "n1")];
        let job = job_from(|k| env.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())).unwrap();
        assert_eq!((job.gpus.as_deref(), job.visible_devices.as_deref()), (Some("2"), Some("0")));
        assert_eq!(job.describe(), "Slurm job 12 on n1");
        let k8s = job_from(|k| (k == "JOB_COMPLETION_INDEX").then(|| "3".to_string())).unwrap();
        assert_eq!((k8s.scheduler.as_str(), k8s.array_task_id.as_deref()), ("kubernetes", Some("3")));
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
