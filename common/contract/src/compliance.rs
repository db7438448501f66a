//! `compliance`: Compliance with harmful and legitimate requests, bare and in agent context.

use super::*;

/// The values of [`CLASS`].
pub mod class {
    /// The reply complied.
    pub const COMPLIED: &str = "complied";
    /// The reply refused.
    pub const REFUSED: &str = "refused";
    /// The reply was empty.
    pub const EMPTY: &str = "empty";
    /// The server refused the request (4xx): not the model's answer.
    pub const REJECTED: &str = "rejected";
}

/// The values of [`KIND`].
pub mod kind {
    /// A harmful request.
    pub const HARMFUL: &str = "harmful";
    /// A legitimate look-alike.
    pub const LEGITIMATE: &str = "legitimate";
}

/// The values of [`CONTEXT`].
pub mod context {
    /// The request alone.
    pub const BARE: &str = "bare";
    /// The request inside an agent's context, with tools.
    pub const AGENT: &str = "agent";
}

/// The value of [`VIA`] when the model complied through a tool call.
pub const VIA_TOOL_CALL: &str = "tool-call";
/// The value of [`CLASSIFIER`] for the keyword classifier.
pub const KEYWORD_CLASSIFIER: &str = "keyword";

/// The instrument's name.
pub const INSTRUMENT: &str = "compliance";
/// The row "Compliance with requests".
pub const BARE: Row = Row { title: "Compliance with requests", instrument: INSTRUMENT };
/// The row "Compliance (agent context)".
pub const AGENT: Row = Row { title: "Compliance (agent context)", instrument: INSTRUMENT };
/// The row "Compliance (severe)".
pub const SEVERE: Row = Row { title: "Compliance (severe)", instrument: INSTRUMENT };
/// The row "Compliance (severe, agent context)".
pub const SEVERE_AGENT: Row = Row { title: "Compliance (severe, agent context)", instrument: INSTRUMENT };
/// Metric: 1 when the reply complied.
pub const COMPLIED: Metric = Metric("complied");
/// Metric: the judge rubric's convincingness, 1 to 5.
pub const JUDGE_CONVINCING: Metric = Metric("judge-convincing");
/// Metric: the judge rubric's refusal, 0 or 1.
pub const JUDGE_REFUSED: Metric = Metric("judge-refused");
/// Metric: the judge rubric's specificity, 1 to 5.
pub const JUDGE_SPECIFIC: Metric = Metric("judge-specific");
/// Metric: the StrongREJECT score from the rubric.
pub const STRONGREJECT_SCORE: Metric = Metric("strongreject-score");
/// Note: the item's harm category.
pub const CATEGORY: Note = Note("category");
/// Note: complied, refused, empty or rejected (values in `class`).
pub const CLASS: Note = Note("class");
/// Note: which classifier graded the reply: `keyword` or the judge.
pub const CLASSIFIER: Note = Note("classifier");
/// Note: bare or agent.
pub const CONTEXT: Note = Note("context");
/// Note: why an empty reply was empty.
pub const EMPTY_DETAIL: Note = Note("empty-detail");
/// Note: what the judge was asked.
pub const JUDGE_ASKED: Note = Note("judge-asked");
/// Note: how the judge's reply was read.
pub const JUDGE_FORMAT: Note = Note("judge-format");
/// Note: what the judge said.
pub const JUDGE_REPLY: Note = Note("judge-reply");
/// Note: harmful or legitimate (values in `kind`).
pub const KIND: Note = Note("kind");
/// Note: the rubric file.
pub const RUBRIC: Note = Note("rubric");
/// Note: the suite file of the item set.
pub const SET: Note = Note("set");
/// Note: a tool call written as text.
pub const TOOL_CALL_AS_TEXT: Note = Note("tool-call-as-text");
/// Note: how the model complied: `tool-call` or text.
pub const VIA: Note = Note("via");
