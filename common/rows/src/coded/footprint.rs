//! The box footprint row (`footprint`).

use sparktest_contract::footprint;

use super::*;

pub const ROW: RowDef = relative(footprint::ROW, false, 0.02, figure_of);

fn figure_of(runs: &Runs, col: &str) -> Result<Figure, Missing> {
    let (run, c) = one_case(runs, col, footprint::INSTRUMENT)?;
    let rss = finite(run, c, footprint::RESIDENT_GIB)?;
    // What the serve holds: resident memory plus its GPU memory, where any.
    let gpu = metric(c, footprint::GPU_PROCESS_MEMORY_GIB).filter(|v| v.is_finite()).unwrap_or(0.0);
    let gib = rss + gpu;
    let mut raw = if gpu > 0.0 {
        format!("{gib:.2} GiB ({rss:.2} GiB resident + {gpu:.2} GiB GPU process memory)")
    } else {
        format!("{gib:.2} GiB resident")
    };
    if let (Some(b), Some(a)) =
        (metric(c, footprint::MEM_AVAILABLE_BEFORE_GIB), metric(c, footprint::MEM_AVAILABLE_AFTER_GIB))
    {
        raw.push_str(&format!(" (free memory {b:.2} GiB before launch, {a:.2} GiB loaded and idle)"));
    }
    Ok(figure(run, gib, raw, &[c]))
}
