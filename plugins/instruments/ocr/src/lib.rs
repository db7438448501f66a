//! `ocr` (row "Handwriting OCR"): read handwritten pages, and notice the
//! words the writer crossed out.
//!
//! Each page is sent as an image (`data:` URL) with one fixed prompt. The
//! reply is scored on word accuracy and word recall against the page's
//! ground truth, and, separately, on each crossed-out word: noticed, read as
//! live text, or left out ([`score`]). An engine without vision answers the
//! image with a 4xx: that is recorded as such ("no vision in this build"),
//! with what the probe said about the build's modalities — never a crash,
//! never lost.

pub mod score;

use serde::Deserialize;
use sparktest_sdk::contract;
use sparktest_sdk::contract::ocr as names;
use sparktest_sdk::*;

struct Ocr;

/// The suite's config.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The ground truth: pages with their image and lines.
    #[serde(default = "truth")]
    truth: String,
    #[serde(default = "prompt")]
    prompt: String,
    #[serde(default = "max_tokens")]
    max_tokens: u32,
    /// Word accuracy a page needs to pass (with every deletion noticed).
    #[serde(default = "pass_accuracy")]
    pass_accuracy: f64,
}

fn truth() -> String {
    "truth.json".into()
}
fn prompt() -> String {
    "Transcribe this handwritten page exactly, line by line, keeping the writer's words, numbers and punctuation. \
     Where a word is crossed out, write it as ~~word~~. Write nothing else."
        .into()
}
fn max_tokens() -> u32 {
    768
}
fn pass_accuracy() -> f64 {
    90.0
}

#[derive(Deserialize)]
struct Truth {
    pages: Vec<Page>,
}

#[derive(Deserialize)]
struct Page {
    id: String,
    image: String,
    lines: Vec<String>,
}

fn pages(c: &Config) -> Result<Vec<Page>, String> {
    let t: Truth = serde_json::from_str(&read_text(&c.truth)?).map_err(|e| format!("{}: {e}", c.truth))?;
    Ok(t.pages)
}

impl Instrument for Ocr {
    type Config = Config;
    type Case = Page;

    fn describe() -> Info {
        Info::new(
            "ocr",
            names::ROW.title,
            env!("CARGO_PKG_VERSION"),
            "Ground-truthed handwritten pages with deliberately crossed-out words, each sent as an \
             image with one fixed prompt. Scored on word accuracy (100 x (1 - word edit distance / \
             words), order counts) and word recall (the share of the page's words read anywhere), \
             and separately on every crossed-out word: noticed (marked as struck), read as live \
             text, or left out. A build without vision rejects the images: recorded as no vision, \
             never as lost.",
        )
    }

    fn cases(c: &Config) -> Result<Vec<Case<Page>>, String> {
        Ok(pages(c)?.into_iter().map(|p| Case::new(format!("page::{}", p.id), p).tag(names::ROW.title)).collect())
    }

    fn run(c: &Config, page: &Page) -> Finding {
        let reply = match chat_with_images(&c.prompt, &[&page.image], c.max_tokens) {
            Ok(r) => r,
            Err(not_read) => return not_read,
        };
        let s = score::score(&page.lines, &reply.text);
        let ok = s.accuracy() >= c.pass_accuracy && s.struck.noticed == s.struck.total && s.struck.wrong == 0;
        let outcome = if ok {
            Finding::pass()
        } else {
            Finding::fail(format!(
                "word accuracy {:.1}%, {}/{} crossed-out words noticed ({} read as live, {} live words struck)",
                s.accuracy(),
                s.struck.noticed,
                s.struck.total,
                s.struck.as_live,
                s.struck.wrong
            ))
        };
        outcome
            .note(contract::vision::VISION, contract::vision::READ)
            .metric(names::WORD_ACCURACY, s.accuracy(), "%")
            .metric(names::WORD_RECALL, s.recall(), "%")
            .metric(names::WORDS, s.words as f64, "words")
            .metric(names::WORD_EDITS, s.edits as f64, "words")
            .metric(names::WORDS_RECALLED, s.recalled as f64, "words")
            .metric(names::STRUCK_TOTAL, s.struck.total as f64, "words")
            .metric(names::STRUCK_NOTICED, s.struck.noticed as f64, "words")
            .metric(names::STRUCK_AS_LIVE, s.struck.as_live as f64, "words")
            .metric(names::STRUCK_INDETERMINATE, s.struck.indeterminate as f64, "words")
            .metric(names::STRUCK_WRONG, s.struck.wrong as f64, "words")
    }
}

register_instrument!(Ocr);
