//! `footprint`: What the serve holds, loaded and idle.

use super::*;

/// The instrument's name.
pub const INSTRUMENT: &str = "footprint";
/// The row "Box footprint".
pub const ROW: Row = Row { title: "Box footprint", instrument: INSTRUMENT };
/// Metric: GPU memory of the serve's processes.
pub const GPU_PROCESS_MEMORY_GIB: Metric = Metric("gpu-process-memory-gib");
/// Metric: free memory loaded and idle.
pub const MEM_AVAILABLE_AFTER_GIB: Metric = Metric("mem-available-after-gib");
/// Metric: free memory before launch.
pub const MEM_AVAILABLE_BEFORE_GIB: Metric = Metric("mem-available-before-gib");
/// Metric: the drop between the two.
pub const MEM_AVAILABLE_DROP_GIB: Metric = Metric("mem-available-drop-gib");
/// Metric: resident memory of the serve's processes.
pub const RESIDENT_GIB: Metric = Metric("resident-gib");
