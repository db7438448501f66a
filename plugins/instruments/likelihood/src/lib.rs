//! `likelihood` (row "Likelihood (bits per character)"): how unsurprised
//! the model is by ordinary English.
//!
//! Every text of a frozen, digest-pinned corpus is scored teacher-forced
//! through the host's `prompt-logprobs` (vLLM `echo` + `logprobs`, SGLang
//! `/generate` with `return_logprob` from position 0; the probe handles the
//! engine). Bits per character = Σ −log2 p(token) over all texts ÷ Σ
//! characters as sent (the `bpc` module). Lower is better. An engine without prompt
//! logprobs (llama.cpp) makes the case N/A with the engine's reason. Run it
//! with speculation off: speculative decoding corrupts prompt logprobs on
//! some engines.

use serde::Deserialize;
use sparktest_sdk::contract::likelihood as names;
use sparktest_sdk::contract::likelihood::bpc;
use sparktest_sdk::*;

struct Likelihood;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    #[serde(default = "default_corpus")]
    corpus: String,
}

fn default_corpus() -> String {
    "corpus.json".into()
}

fn texts(c: &Config) -> Result<Vec<String>, String> {
    let list: Vec<String> =
        serde_json::from_str(&read_text(&c.corpus)?).map_err(|err| format!("{}: {err}", c.corpus))?;
    if list.is_empty() {
        return Err(format!("{}: the corpus lists no texts", c.corpus));
    }
    // Text paths are relative to the corpus list's folder.
    Ok(list.iter().map(|p| beside(&c.corpus, p)).collect())
}

impl Instrument for Likelihood {
    type Config = Config;
    type Case = Vec<String>;

    fn describe() -> Info {
        Info::new(
            "likelihood",
            names::ROW.title,
            env!("CARGO_PKG_VERSION"),
            "Teacher-forced bits per character over a frozen, digest-pinned English corpus \
             (43 texts written for this project, CC0), identical characters for every model: \
             total -log2 p over every scored token divided by total characters as sent. Lower \
             is better (the board flips the standing). An engine that returns no prompt \
             logprobs cannot be measured: N/A with that reason. Measure with speculation off.",
        )
    }

    fn cases(config: &Config) -> Result<Vec<Case<Vec<String>>>, String> {
        Ok(vec![Case::new("corpus::bpc", texts(config)?).tag(names::ROW.title)])
    }

    fn run(_config: &Config, paths: &Vec<String>) -> Finding {
        let mut scores = Vec::new();
        let mut outcome = Finding::pass();
        for path in paths {
            let text = match read_text(path) {
                Ok(t) if !t.is_empty() => t,
                Ok(_) => return Finding::fail(format!("{path}: the text is empty")),
                Err(err) => return Finding::fail(err),
            };
            let logprobs = match prompt_logprobs(&text) {
                Ok(l) => l,
                Err(err) => return Finding::from(err).note(names::TEXT, path.clone()),
            };
            if logprobs.iter().all(|t| t.logprob.is_none()) {
                return Finding::fail(format!("{path}: the engine scored none of its tokens"));
            }
            let s = bpc::score(&text, logprobs.iter().map(|t| t.logprob));
            let stem = path.rsplit('/').next().unwrap_or(path).trim_end_matches(".txt");
            outcome = outcome.metric(format!("bpc-{stem}"), s.bpc(), "bpc");
            scores.push(s);
        }
        let chars: usize = scores.iter().map(|s| s.chars).sum();
        let tokens: usize = scores.iter().map(|s| s.scored_tokens).sum();
        let unscored: usize = scores.iter().map(|s| s.unscored_tokens).sum();
        let bits: f64 = scores.iter().map(|s| s.bits).sum();
        outcome
            .metric(names::BPC, bpc::corpus_bpc(&scores), "bpc")
            .metric(names::BITS, bits, "bits")
            .metric(names::CHARS, chars as f64, "chars")
            .metric(names::SCORED_TOKENS, tokens as f64, "tokens")
            .metric(names::UNSCORED_TOKENS, unscored as f64, "tokens")
            .metric(names::TEXTS, scores.len() as f64, "texts")
    }
}

register_instrument!(Likelihood);
