//! `ocr`: Handwritten pages, crossed-out words noticed.

use super::*;

/// The instrument's name.
pub const INSTRUMENT: &str = "ocr";
/// The row "Handwriting OCR".
pub const ROW: Row = Row { title: "Handwriting OCR", instrument: INSTRUMENT };
/// Metric: struck words read as live.
pub const STRUCK_AS_LIVE: Metric = Metric("struck-as-live");
/// Metric: struck words neither way.
pub const STRUCK_INDETERMINATE: Metric = Metric("struck-indeterminate");
/// Metric: struck words noticed.
pub const STRUCK_NOTICED: Metric = Metric("struck-noticed");
/// Metric: struck words on the page.
pub const STRUCK_TOTAL: Metric = Metric("struck-total");
/// Metric: live words read as struck.
pub const STRUCK_WRONG: Metric = Metric("struck-wrong");
/// Metric: word accuracy, percent.
pub const WORD_ACCURACY: Metric = Metric("word-accuracy");
/// Metric: word edits against the key.
pub const WORD_EDITS: Metric = Metric("word-edits");
/// Metric: word recall, percent.
pub const WORD_RECALL: Metric = Metric("word-recall");
/// Metric: words in the key.
pub const WORDS: Metric = Metric("words");
/// Metric: words recalled.
pub const WORDS_RECALLED: Metric = Metric("words-recalled");
