//! What the SDK notes on an image request the engine refused.

use super::*;

/// Note: `none` (no vision in this build), `refused` (refused for
/// another reason) or `read`.
pub const VISION: Note = Note("vision");
/// Note: what the engine's probe said of its modalities.
pub const VISION_PROBE: Note = Note("vision-probe");
/// The value of [`VISION`] for a build that cannot read images.
pub const NONE: &str = "none";
/// The value of [`VISION`] for a request refused for another reason.
pub const REFUSED: &str = "refused";
/// The value of [`VISION`] for images read.
pub const READ: &str = "read";
