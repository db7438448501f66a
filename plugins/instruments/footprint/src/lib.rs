//! `footprint` (row "Box footprint"): the memory the serve holds before it
//! does any work.
//!
//! Measured by the host when it launched the target, once the server was
//! healthy and before any request: the resident memory of the server's
//! whole process tree, the host's available memory before and after the
//! launch, and the GPU memory its processes hold where `nvidia-smi` exists
//! (the board scores resident + GPU process memory). They reach the
//! instrument as the typed `footprint` of the server facts. For a target the
//! harness did not launch, the case is N/A with that reason.

use sparktest_sdk::contract::footprint as names;
use sparktest_sdk::*;

struct Footprint;

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

impl Instrument for Footprint {
    type Config = NoConfig;
    type Case = ();

    fn describe() -> Info {
        Info::new(
            "footprint",
            names::ROW.title,
            env!("CARGO_PKG_VERSION"),
            "The memory the running serve occupies before it does any work, measured on the \
             box by the harness that launched it: resident memory of the server's process \
             tree, the host's available memory before and after the launch, and GPU memory \
             where nvidia-smi exists. A server the harness did not launch is N/A.",
        )
    }

    fn cases(_config: &NoConfig) -> Result<Vec<Case<()>>, String> {
        Ok(vec![Case::new("idle::memory", ()).tag(names::ROW.title)])
    }

    fn run(_config: &NoConfig, _case: &()) -> Finding {
        let f = server_facts();
        let Some(fp) = f.footprint else {
            return Finding::not_applicable(
                f.footprint_unmeasured.unwrap_or_else(|| "the host could not read the launched server's memory".into()),
            );
        };
        let mut outcome = Finding::pass().metric(names::RESIDENT_GIB, fp.resident_bytes as f64 / GIB, "GiB");
        if let (Some(before), Some(after)) = (fp.mem_available_before_bytes, fp.mem_available_after_bytes) {
            outcome = outcome
                .metric(names::MEM_AVAILABLE_BEFORE_GIB, before as f64 / GIB, "GiB")
                .metric(names::MEM_AVAILABLE_AFTER_GIB, after as f64 / GIB, "GiB")
                .metric(names::MEM_AVAILABLE_DROP_GIB, (before as f64 - after as f64) / GIB, "GiB");
        }
        if let Some(mib) = fp.gpu_process_memory_mib {
            outcome = outcome.metric(names::GPU_PROCESS_MEMORY_GIB, mib as f64 / 1024.0, "GiB");
        }
        for p in f.memory_pools.iter().filter(|p| p.kind == PoolKind::Gpu) {
            // Whole devices, other processes included: recorded, not scored.
            outcome = outcome.note(
                format!("gpu-memory-used-gib {}", p.device),
                format!("{:.2}", (p.total_bytes - p.free_bytes) as f64 / GIB),
            );
        }
        outcome
    }
}

register_instrument!(Footprint);
