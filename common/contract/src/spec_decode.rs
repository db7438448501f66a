//! `spec-decode`: Decode with and without a drafter.

use super::*;

/// The instrument's name.
pub const INSTRUMENT: &str = "spec-decode";
/// The row "Speculative decoding".
pub const ROW: Row = Row { title: "Speculative decoding", instrument: INSTRUMENT };

/// The arms the instrument's suite pairs, as the row reads them.
pub mod arm {
    use super::super::Arm;

    /// The target without a drafter: the column the pair is filed under.
    pub const BARE: Arm = Arm("bare");
    /// The same target with its drafter.
    pub const DRAFT: Arm = Arm("draft");
}

/// Case group: a structured-output task replayed on an arm,
/// `structured::<task>`; its decode cases are [`workload::DECODE`]'s.
pub const STRUCTURED: Group = Group("structured");
/// Metric: mean accepted length.
pub const ACCEPT_LENGTH: Metric = Metric("accept-length");
/// Metric: draft tokens accepted.
pub const ACCEPTED_TOKENS: Metric = Metric("accepted-tokens");
/// Metric: accepted over drafted.
pub const DRAFT_ACCEPTANCE: Metric = Metric("draft-acceptance");
/// Metric: draft tokens proposed.
pub const DRAFTED_TOKENS: Metric = Metric("drafted-tokens");
/// Note: bare or draft.
pub const ARM: Note = Note("arm");
/// Note: why no acceptance figure.
pub const DRAFT_ACCEPTANCE_NOTE: Note = Note("draft-acceptance");
