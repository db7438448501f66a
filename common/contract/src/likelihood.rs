//! `likelihood`: Bits per character over a held-out corpus.

use super::*;

pub mod bpc;

/// The instrument's name.
pub const INSTRUMENT: &str = "likelihood";
/// The row "Likelihood (bits per character)".
pub const ROW: Row = Row { title: "Likelihood (bits per character)", instrument: INSTRUMENT };
/// Metric: total bits.
pub const BITS: Metric = Metric("bits");
/// Metric: bits per character.
pub const BPC: Metric = Metric("bpc");
/// Metric: characters scored.
pub const CHARS: Metric = Metric("chars");
/// Metric: tokens scored.
pub const SCORED_TOKENS: Metric = Metric("scored-tokens");
/// Metric: texts scored.
pub const TEXTS: Metric = Metric("texts");
/// Metric: tokens not scored.
pub const UNSCORED_TOKENS: Metric = Metric("unscored-tokens");
/// Note: a text left out, and why.
pub const TEXT: Note = Note("text");
