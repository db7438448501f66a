//! `long-prompt` (row "Long-prompt robustness"): what happens when a huge
//! paste arrives.
//!
//! Each case sends one paste (25,000 and 95,000 characters by default) with
//! a checkable fact planted at its very end and a question about it, and
//! times the answer. Outcomes, recorded in the note `outcome`:
//!
//! | outcome | verdict |
//! |---|---|
//! | `answered` (the planted answer is in the reply) | pass |
//! | `refused-cleanly` (a 4xx whose body names the limit) | pass: you learn why and can split it |
//! | `answered-wrong` | fail |
//! | `truncated-silently` (the server counted far fewer prompt tokens than the paste holds) | fail |
//! | `refused-unclearly` (a 4xx that does not name a limit) | fail |
//! | crashed / no answer | lost |
//!
//! Silent truncation: English prose runs at about 4 characters per token;
//! fewer than one token per `max_chars_per_token` (default 8) characters
//! means the engine dropped part of the paste without saying so.

use serde::Deserialize;
use sparktest_sdk::contract::long_prompt as names;
use sparktest_sdk::*;

struct LongPrompt;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    #[serde(default = "default_needles")]
    needles: String,
    #[serde(default = "default_max_tokens")]
    max_tokens: u32,
    #[serde(default = "default_max_chars_per_token")]
    max_chars_per_token: f64,
}

fn default_needles() -> String {
    "needles.json".into()
}
fn default_max_tokens() -> u32 {
    32
}
fn default_max_chars_per_token() -> f64 {
    8.0
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Needle {
    name: String,
    paste: String,
    question: String,
    answer: String,
}

fn load(c: &Config) -> Result<Vec<Needle>, String> {
    serde_json::from_str(&read_text(&c.needles)?).map_err(|err| format!("{}: {err}", c.needles))
}

/// A refusal for length: HTTP 400 or 413 whose body names the context
/// limit (llama.cpp "exceeds the available context size", vLLM
/// "maximum context length" / `max_model_len`, SGLang "longer than the
/// model's context length"). A rate limit or a `max_tokens` complaint is not.
fn names_the_limit(status: u16, body: &str) -> bool {
    let b = body.to_lowercase();
    matches!(status, 400 | 413)
        && [
            "context size",
            "context length",
            "context window",
            "max_model_len",
            "n_ctx",
            "prompt is too long",
            "input is too long",
        ]
        .iter()
        .any(|w| b.contains(w))
}

fn run_needle(c: &Config, n: &Needle) -> Finding {
    // Paste paths are relative to the needles file's folder.
    let path = beside(&c.needles, &n.paste);
    let paste = match read_text(&path) {
        Ok(p) => p,
        Err(err) => return Finding::fail(err),
    };
    let chars = paste.chars().count();
    let prompt = format!("{paste}\n\n{}", n.question);
    let req = ChatRequest::new(vec![Message::user(&prompt)]).greedy().max_tokens(c.max_tokens).streamed();
    let base = Finding::pass().metric(names::PASTE_CHARS, chars as f64, "chars");
    match chat(&req) {
        Ok(reply) => {
            let seconds = reply.timing.total_ms / 1000.0;
            let mut outcome =
                Finding::pass().metric(names::PASTE_CHARS, chars as f64, "chars").metric(names::SECONDS, seconds, "s");
            if let Some(t) = reply.timing.ttft_ms {
                outcome = outcome.metric(names::TTFT_MS, t, "ms");
            }
            if let Some(p) = reply.usage.prompt_tokens {
                outcome = outcome.metric(names::PROMPT_TOKENS, f64::from(p), "tokens");
                if (p as f64) < chars as f64 / c.max_chars_per_token {
                    return Finding::fail(format!(
                        "truncated silently: the server counted {p} prompt tokens for a {chars}-character paste"
                    ))
                    .note(names::OUTCOME, names::outcome::TRUNCATED_SILENTLY);
                }
            }
            if reply.text.contains(&n.answer) {
                outcome.note(names::OUTCOME, names::outcome::ANSWERED)
            } else {
                let shown: String = reply.text.chars().take(120).collect();
                Finding::fail(format!("answered wrongly: expected {} in {shown:?}", n.answer))
                    .note(names::OUTCOME, names::outcome::ANSWERED_WRONG)
                    .metric(names::SECONDS, seconds, "s")
            }
        }
        Err(CallError::Rejected(r)) if names_the_limit(r.status, &r.body) => {
            let body: String = r.body.chars().take(300).collect();
            base.note(names::OUTCOME, names::outcome::REFUSED_CLEANLY)
                .note(names::REFUSAL, format!("HTTP {}: {body}", r.status))
        }
        Err(CallError::Rejected(r)) => {
            let body: String = r.body.chars().take(300).collect();
            Finding::fail(format!("refused without naming a limit: HTTP {}: {body}", r.status))
                .note(names::OUTCOME, names::outcome::REFUSED_UNCLEARLY)
        }
        Err(err) => Finding::from(err),
    }
}

impl Instrument for LongPrompt {
    type Config = Config;
    type Case = Needle;

    fn describe() -> Info {
        Info::new(
            "long-prompt",
            names::ROW.title,
            env!("CARGO_PKG_VERSION"),
            "25,000- and 95,000-character pastes (about 6k and 24k tokens) with a checkable \
             fact planted at the very end, so silent truncation cannot pass; timed to the \
             answer. Answering correctly is best; a clean 4xx naming the limit is acceptable \
             and recorded as such; a wrong answer or a silent truncation fails; a crash or no \
             answer is lost.",
        )
    }

    fn cases(config: &Config) -> Result<Vec<Case<Needle>>, String> {
        let needles = load(config)?;
        Ok(needles
            .into_iter()
            .map(|n| Case::new(names::PASTE.case(&n.name).to_string(), n).tag(names::ROW.title))
            .collect())
    }

    fn run(c: &Config, needle: &Needle) -> Finding {
        run_needle(c, needle)
    }
}

register_instrument!(LongPrompt);
