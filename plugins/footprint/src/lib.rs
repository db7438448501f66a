//! `footprint` (row "Box footprint"): the memory the serve holds before it
//! does any work.
//!
//! Measured by the host when it launched the target, once the server was
//! healthy and before any request: the resident memory of the server's
//! whole process tree, the host's available memory before and after the
//! launch, and the GPU memory its processes hold where `nvidia-smi` exists
//! (the board scores resident + GPU process memory). They reach the
//! instrument as `footprint.*` server facts. For a target the harness did
//! not launch, the case is N/A with that reason.

use sparktest_sdk::*;

struct Footprint;

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

impl Instrument for Footprint {
    fn describe() -> Info {
        Info::new(
            "footprint",
            "Box footprint",
            env!("CARGO_PKG_VERSION"),
            "The memory the running serve occupies before it does any work, measured on the \
             box by the harness that launched it: resident memory of the server's process \
             tree, the host's available memory before and after the launch, and GPU memory \
             where nvidia-smi exists. A server the harness did not launch is N/A.",
        )
    }

    fn cases(_config: &str) -> Result<Vec<CaseInfo>, String> {
        Ok(vec![CaseInfo::new("idle::memory").tag("Box footprint")])
    }

    fn run(_config: &str, _case: &str) -> Outcome {
        let f = server_facts();
        let get = |k: &str| f.extra.iter().find(|p| p.key == k).map(|p| p.value.clone());
        let bytes = |k: &str| get(k).and_then(|v| v.parse::<f64>().ok());
        if let Some(why) = get("footprint.not_measured") {
            return Outcome::not_applicable(why);
        }
        let Some(rss) = bytes("footprint.rss_bytes") else {
            return Outcome::not_applicable("the host could not read the launched server's memory");
        };
        let mut outcome = Outcome::pass().metric("resident-gib", rss / GIB, "GiB");
        if let (Some(before), Some(after)) =
            (bytes("footprint.mem_available_before_bytes"), bytes("footprint.mem_available_after_bytes"))
        {
            outcome = outcome
                .metric("mem-available-before-gib", before / GIB, "GiB")
                .metric("mem-available-after-gib", after / GIB, "GiB")
                .metric("mem-available-drop-gib", (before - after) / GIB, "GiB");
        }
        if let Some(mib) = bytes("footprint.gpu_process_memory_mib") {
            outcome = outcome.metric("gpu-process-memory-gib", mib / 1024.0, "GiB");
        }
        if let Some(gpus) = get("footprint.gpu_memory_used_mib") {
            // Whole devices, other processes included: recorded, not scored.
            outcome = outcome.note("gpu-memory-used-mib-per-device", gpus);
        }
        outcome
    }
}

register_instrument!(Footprint);
