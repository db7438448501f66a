//! `corruption`: does text survive the round trip through the engine?
//!
//! The model is asked to repeat a string exactly. Multi-byte text (accents,
//! CJK, emoji with ZWJ sequences, combining marks, right-to-left scripts) must
//! come back intact. Byte-exact and NFC-equal are judged and recorded
//! separately; a U+FFFD in the reply that the source lacked is named as
//! mangled bytes. The case passes when the text came back byte-exact, alone
//! or with words the model added around it (chatter is the model's, not a
//! corruption by the serve: recorded apart as `model-added-words`). Each
//! reply is kept as an insta snapshot per target, so an engine that starts
//! mangling text between runs shows up for review.

use serde::Deserialize;
use sparktest_sdk::contract::corruption as names;
use sparktest_sdk::*;
use unicode_normalization::UnicodeNormalization;

struct Corruption;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    /// Suite file with the strings.
    #[serde(default = "default_strings")]
    strings: String,
    #[serde(default = "default_max_tokens")]
    max_tokens: u32,
}

fn default_strings() -> String {
    "corruption/strings.json".into()
}

fn default_max_tokens() -> u32 {
    128
}

#[derive(Deserialize)]
struct Probe {
    group: String,
    name: String,
    text: String,
}

const SYSTEM: &str = "You repeat text exactly. Reply with the text only: no quotes, no explanation.";

fn load(config: &Config) -> Result<Vec<Probe>, String> {
    let text = read_text(&config.strings)?;
    serde_json::from_str(&text).map_err(|err| format!("{}: {err}", config.strings))
}

/// What the reply did to the text.
#[derive(Debug, PartialEq)]
struct Judgement {
    byte_exact: bool,
    nfc_equal: bool,
    replacement_char: bool,
    /// The text is in the reply byte for byte, with other words around it.
    intact_within: bool,
}

fn judge(expected: &str, reply: &str) -> Judgement {
    // Only surrounding whitespace is forgiven: chat templates add newlines.
    let got = reply.trim();
    let nfc = |s: &str| s.nfc().collect::<String>();
    Judgement {
        byte_exact: got == expected,
        nfc_equal: nfc(got) == nfc(expected),
        replacement_char: got.contains('\u{FFFD}') && !expected.contains('\u{FFFD}'),
        intact_within: got != expected && !expected.is_empty() && got.contains(expected),
    }
}

fn clip(text: &str) -> String {
    text.chars().take(120).collect()
}

fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

impl Instrument for Corruption {
    type Config = Config;
    type Case = Probe;

    fn describe() -> Info {
        Info::new(
            "corruption",
            names::ROW.title,
            env!("CARGO_PKG_VERSION"),
            "Sends prompts whose correct answers must round-trip multi-byte characters \
             (accents, CJK, emoji incl. ZWJ sequences, combining marks, right-to-left text) \
             intact, at temperature 0. Byte-exact and NFC-equal are recorded separately; \
             a case passes when the text comes back byte-exact after trimming surrounding \
             whitespace, alone or inside words the model added (chatter is the model's \
             instruction-following, not the serve changing text: counted apart).",
        )
    }

    fn cases(config: &Config) -> Result<Vec<Case<Probe>>, String> {
        let probes = load(config)?;
        Ok(probes.into_iter().map(|p| Case::new(format!("{}::{}", p.group, p.name), p).tag(names::ROW.title)).collect())
    }

    fn run(config: &Config, probe: &Probe) -> Finding {
        let req =
            ChatRequest::new(vec![Message::system(SYSTEM), Message::user(&format!("Repeat exactly:\n{}", probe.text))])
                .greedy()
                .max_tokens(config.max_tokens);
        let reply = match chat(&req) {
            Ok(reply) => reply,
            Err(err) => return err.into(),
        };
        let j = judge(&probe.text, &reply.text);
        let outcome = if j.byte_exact {
            Finding::pass()
        } else if j.intact_within {
            // The serve kept every byte; the model said more than asked.
            Finding::pass()
                .note(names::MODEL_ADDED_WORDS, "the text came back intact, with words the model added around it")
        } else if j.replacement_char {
            Finding::fail("reply holds U+FFFD: bytes were mangled")
        } else if j.nfc_equal {
            Finding::fail("NFC-equal but not byte-exact: normalisation changed the bytes")
        } else {
            Finding::fail(format!("reply differs from the text: got {:?}", clip(reply.text.trim())))
        };
        outcome
            .note(names::BYTE_EXACT_NOTE, yes_no(j.byte_exact))
            .note(names::NFC_EQUAL_NOTE, yes_no(j.nfc_equal))
            .note(names::EXPECTED, probe.text.clone())
            .note(names::GOT, reply.text.trim().to_string())
            .metric(names::BYTE_EXACT, if j.byte_exact { 1.0 } else { 0.0 }, "bool")
            .metric(names::NFC_EQUAL, if j.nfc_equal { 1.0 } else { 0.0 }, "bool")
            .metric(names::INTACT_WITHIN_CHATTER, if j.intact_within { 1.0 } else { 0.0 }, "bool")
            // The reply itself must repeat between runs too.
            .snapshot(&probe.name, reply.text.trim().to_string())
    }
}

register_instrument!(Corruption);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_passes_both() {
        let j = judge("café", "café\n");
        assert!(j.byte_exact && j.nfc_equal && !j.replacement_char);
    }

    #[test]
    fn decomposed_is_nfc_equal_only() {
        // "e" + COMBINING ACUTE vs precomposed é.
        let j = judge("caf\u{e9}", "cafe\u{301}");
        assert!(!j.byte_exact);
        assert!(j.nfc_equal);
    }

    #[test]
    fn replacement_char_is_named() {
        let j = judge("日本語", "日\u{FFFD}語");
        assert!(!j.nfc_equal && j.replacement_char);
    }

    #[test]
    fn chatter_around_intact_text_is_not_corruption() {
        // As vLLM on CPU answered: the Arabic intact, then an explanation.
        let j = judge("مرحبا بالعالم", "مرحبا بالعالم\n\nThis is a repeating sentence.");
        assert!(j.intact_within && !j.byte_exact && !j.replacement_char);
        // Changed text inside chatter is still changed.
        let j = judge("Größe", "Here: Grosse");
        assert!(!j.intact_within && !j.nfc_equal);
        assert!(!judge("café", "café").intact_within, "exact is not chatter");
    }

    #[test]
    fn zwj_sequence_broken_is_not_equal() {
        // Family emoji without its zero-width joiners.
        let j = judge("👨\u{200D}👩\u{200D}👧", "👨👩👧");
        assert!(!j.byte_exact && !j.nfc_equal);
    }
}
