//! `corruption`: Text the serve must keep byte for byte.

use super::*;

/// The instrument's name.
pub const INSTRUMENT: &str = "corruption";
/// The row "Corruption probe".
pub const ROW: Row = Row { title: "Corruption probe", instrument: INSTRUMENT };
/// Metric: 1 when the reply held the text byte for byte.
pub const BYTE_EXACT: Metric = Metric("byte-exact");
/// Metric: 1 when the text was intact inside words the model added.
pub const INTACT_WITHIN_CHATTER: Metric = Metric("intact-within-chatter");
/// Metric: 1 when equal after NFC normalisation.
pub const NFC_EQUAL: Metric = Metric("nfc-equal");
/// Note: whether the text came back byte for byte.
pub const BYTE_EXACT_NOTE: Note = Note("byte-exact");
/// Note: the text asked for.
pub const EXPECTED: Note = Note("expected");
/// Note: the text returned.
pub const GOT: Note = Note("got");
/// Note: present when the model talked around the intact text.
pub const MODEL_ADDED_WORDS: Note = Note("model-added-words");
/// Note: whether equal after NFC normalisation.
pub const NFC_EQUAL_NOTE: Note = Note("nfc-equal");
