//! `long-prompt`: Long pastes: answered, refused cleanly or worse.

use super::*;

/// The values of [`OUTCOME`].
pub mod outcome {
    /// Answered correctly.
    pub const ANSWERED: &str = "answered";
    /// Answered, wrongly.
    pub const ANSWERED_WRONG: &str = "answered-wrong";
    /// Refused with an error naming the limit.
    pub const REFUSED_CLEANLY: &str = "refused-cleanly";
    /// Refused without naming the limit.
    pub const REFUSED_UNCLEARLY: &str = "refused-unclearly";
    /// The prompt was cut without a word.
    pub const TRUNCATED_SILENTLY: &str = "truncated-silently";
}

/// The instrument's name.
pub const INSTRUMENT: &str = "long-prompt";
/// The row "Long-prompt robustness".
pub const ROW: Row = Row { title: "Long-prompt robustness", instrument: INSTRUMENT };
/// Case group: one paste, `paste::<needle>`.
pub const PASTE: Group = Group("paste");
/// Metric: characters pasted.
pub const PASTE_CHARS: Metric = Metric("paste-chars");
/// Metric: prompt tokens the server counted.
pub const PROMPT_TOKENS: Metric = Metric("prompt-tokens");
/// Metric: seconds to the answer.
pub const SECONDS: Metric = Metric("seconds");
/// Metric: time to first token.
pub const TTFT_MS: Metric = Metric("ttft-ms");
/// Note: what the paste got (values in `outcome`).
pub const OUTCOME: Note = Note("outcome");
/// Note: the refusal the server gave.
pub const REFUSAL: Note = Note("refusal");
