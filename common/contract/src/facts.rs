//! What the host records about a target or hands an instrument as a
//! server fact.

use super::*;

/// The KV pool the engine reports, in tokens.
pub const KV_POOL_TOKENS: Fact = Fact("kv_pool_tokens");
/// The context each request gets, in tokens.
pub const CONTEXT_PER_REQUEST: Fact = Fact("context_per_request");
/// The engine's slots (parallel sequences).
pub const SLOTS: Fact = Fact("slots");
/// Whether the engine reports vision: `true` or `false`.
pub const VISION: Fact = Fact("vision");
/// The engine's reported modalities, as JSON (llama.cpp `/props`).
pub const MODALITIES: Fact = Fact("modalities");
/// The serve's resident bytes, for the footprint instrument.
pub const FOOTPRINT_RSS_BYTES: Fact = Fact("footprint.rss_bytes");
/// The serve's GPU process memory, MiB.
pub const FOOTPRINT_GPU_PROCESS_MEMORY_MIB: Fact = Fact("footprint.gpu_process_memory_mib");
/// Free memory before the serve was launched, bytes.
pub const FOOTPRINT_MEM_AVAILABLE_BEFORE_BYTES: Fact = Fact("footprint.mem_available_before_bytes");
/// Free memory with the serve loaded and idle, bytes.
pub const FOOTPRINT_MEM_AVAILABLE_AFTER_BYTES: Fact = Fact("footprint.mem_available_after_bytes");
/// Why the footprint was not measured.
pub const FOOTPRINT_NOT_MEASURED: Fact = Fact("footprint.not_measured");
/// The footprint facts above, which interface 0.3.0 gives its guests
/// typed instead (they stay in the manifest's facts).
pub const FOOTPRINT: &[Fact] = &[
    FOOTPRINT_RSS_BYTES,
    FOOTPRINT_GPU_PROCESS_MEMORY_MIB,
    FOOTPRINT_MEM_AVAILABLE_BEFORE_BYTES,
    FOOTPRINT_MEM_AVAILABLE_AFTER_BYTES,
    FOOTPRINT_NOT_MEASURED,
];
