//! Decode figures and cases the speed-like instruments share
//! (`sparktest-workload`): each figure with its `-min`, `-max` and `-stdev`
//! over the repetitions.

use super::*;

/// Case group: one prompt decoded single-stream, `decode::<category>`
/// (`speed`, and `spec-decode` on each arm).
pub const DECODE: Group = Group("decode");
/// Metric: mean decode rate over the repetitions, tok/s.
pub const DECODE_TOK_S: Metric = Metric("decode-tok-s");
/// Metric: the slowest repetition's decode rate.
pub const DECODE_TOK_S_MIN: Metric = Metric("decode-tok-s-min");
/// Metric: the fastest repetition's decode rate.
pub const DECODE_TOK_S_MAX: Metric = Metric("decode-tok-s-max");
/// Metric: the decode rate's standard deviation over the repetitions.
pub const DECODE_TOK_S_STDEV: Metric = Metric("decode-tok-s-stdev");
/// Metric: each repetition's decode rate (`decode-tok-s-rep1` …).
pub const DECODE_TOK_S_REP: Numbered = Numbered("decode-tok-s-rep");
/// Metric: each repetition's time to first token (`ttft-ms-rep1` …).
pub const TTFT_MS_REP: Numbered = Numbered("ttft-ms-rep");
/// Metric: prompt tokens over time to first token, tok/s.
pub const INPUT_TOK_S: Metric = Metric("input-tok-s");
/// Metric: the server's own decode rate, where it reports one.
pub const SERVER_DECODE_TOK_S: Metric = Metric("server-decode-tok-s");
/// Metric: time to first token, ms.
pub const TTFT_MS: Metric = Metric("ttft-ms");
/// Metric: completion tokens.
pub const COMPLETION_TOKENS: Metric = Metric("completion-tokens");
/// Note: why the input rate is what it is, or n/a.
pub const INPUT_TOK_S_NOTE: Note = Note("input-tok-s");
/// Note: the phase a lost or failed call was in.
pub const PHASE: Note = Note("phase");
/// Note: where the token counts came from.
pub const TOKEN_SOURCE: Note = Note("token-source");
/// Note: how many repetitions were valid.
pub const VALID: Note = Note("valid");
/// Note: the prompt's category.
pub const CATEGORY: Note = Note("category");
