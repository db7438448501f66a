//! `spec-decode` (row "Speculative decoding"): the same prompts against a
//! bare arm and a drafter arm.
//!
//! The suite pairs two targets as arms (`arms = { bare = …, draft = … }`);
//! the host runs this instrument once per arm and tells it which (`arm` in
//! its config). Each arm times the same prompts exactly as `speed` does
//! (`sparktest_workload::speed`), and re-verifies structured output: an
//! invalid output on either arm fails the case and no speed counts. The
//! speed-up ratio is the drafter arm's mean decode tok/s over the bare
//! arm's, read from the two arms' records by the reporter.
//!
//! Draft acceptance is the change in the engine's own counters over each
//! case's window only (read before and after through the host, which knows
//! each engine's metric names: llama.cpp and vLLM count drafted and accepted
//! tokens; SGLang reports a mean accept length, recorded as it is).

use serde::Deserialize;
use sparktest_sdk::contract;
use sparktest_sdk::contract::spec_decode as names;
use sparktest_sdk::*;
use sparktest_workload::data::{Prompt, Timed, timed_cases};
use sparktest_workload::speed::{at_least_one_repetition, prompt_request, repeat, repeat_task, summarise, warm_up};
use sparktest_workload::task::Task;

struct SpecDecode;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    arm: String,
    #[serde(default = "default_prompts")]
    prompts: String,
    #[serde(default)]
    structured: Option<String>,
    #[serde(default = "sparktest_workload::data::default_repetitions")]
    repetitions: u32,
    #[serde(default = "sparktest_workload::data::default_max_tokens")]
    max_tokens: u32,
    #[serde(default = "sparktest_workload::data::default_warmup_tokens")]
    warmup_tokens: u32,
}

fn default_prompts() -> String {
    "spec-decode/prompts.json".into()
}

fn check(c: &Config) -> Result<(), String> {
    at_least_one_repetition("spec-decode", c.repetitions)
}

/// The engine's draft counters now, in the engine's own terms (the host
/// knows each engine's metric names), or why they cannot be read: an
/// engine that keeps none, or a `/metrics` that did not answer in time.
fn counters() -> Result<DraftCounts, String> {
    draft_counters().map_err(|err| err.reason())
}

/// Acceptance over the case's window, from counters before and after.
fn acceptance(outcome: Finding, before: Result<DraftCounts, String>, after: Result<DraftCounts, String>) -> Finding {
    match (before, after) {
        (Ok(DraftCounts::Tokens(b)), Ok(DraftCounts::Tokens(a))) => {
            let (drafted, accepted) = (a.drafted - b.drafted, a.accepted - b.accepted);
            let outcome = outcome.metric(names::DRAFTED_TOKENS, drafted, "tokens").metric(
                names::ACCEPTED_TOKENS,
                accepted,
                "tokens",
            );
            if drafted > 0.0 {
                outcome.metric(names::DRAFT_ACCEPTANCE, accepted / drafted, "ratio")
            } else {
                outcome.note(names::DRAFT_ACCEPTANCE_NOTE, "n/a: the engine drafted nothing in this window")
            }
        }
        (_, Ok(DraftCounts::AcceptLength(len))) => outcome.metric(names::ACCEPT_LENGTH, len, "tokens"),
        // Say which read failed and why: a scrape that timed out is not an
        // engine without counters.
        (Err(why), _) => {
            outcome.note(names::DRAFT_ACCEPTANCE_NOTE, format!("n/a: draft counters before the case: {why}"))
        }
        (_, Err(why)) => {
            outcome.note(names::DRAFT_ACCEPTANCE_NOTE, format!("n/a: draft counters after the case: {why}"))
        }
        (Ok(_), Ok(_)) => {
            outcome.note(names::DRAFT_ACCEPTANCE_NOTE, "n/a: the engine changed its kind of draft counters")
        }
    }
}

fn decode_case(c: &Config, prompt: &Prompt) -> Finding {
    let category = prompt.category.as_str();
    if let Err(outcome) = warm_up(c.warmup_tokens) {
        return outcome;
    }
    let before = counters();
    match repeat(&prompt_request(&prompt.prompt, c.max_tokens), c.repetitions, |_| Ok(())) {
        Ok(samples) => {
            let outcome = summarise(Finding::pass(), &samples)
                .note(names::ARM, c.arm.clone())
                .note(contract::workload::CATEGORY, category);
            acceptance(outcome, before, counters())
        }
        Err(outcome) => outcome.note(names::ARM, c.arm.clone()),
    }
}

fn structured_case(c: &Config, task: &Task) -> Finding {
    let before = counters();
    match repeat_task(task, c.repetitions) {
        Ok(samples) => {
            let outcome = summarise(Finding::pass(), &samples)
                .note(names::ARM, c.arm.clone())
                .note(contract::workload::VALID, "every repetition");
            acceptance(outcome, before, counters())
        }
        Err(outcome) => outcome.note(names::ARM, c.arm.clone()),
    }
}

impl Instrument for SpecDecode {
    type Config = Config;
    type Case = Timed;

    fn describe() -> Info {
        Info::new(
            "spec-decode",
            names::ROW.title,
            env!("CARGO_PKG_VERSION"),
            "Paired arms: the same prompts (code, reasoning, prose; warm-up discarded, three \
             repetitions) against a bare target and a drafter target, timed like Prose speed; \
             the speed-up is the drafter arm's mean decode tok/s over the bare arm's. Draft \
             acceptance is the change in the engine's own counters over each case's window \
             only. Structured output is re-verified on each arm before its speed counts.",
        )
    }

    fn cases(c: &Config) -> Result<Vec<Case<Timed>>, String> {
        check(c)?;
        timed_cases(&c.prompts, None, c.structured.as_deref(), names::ROW.title, names::STRUCTURED, "structured-output")
    }

    fn run(c: &Config, case: &Timed) -> Finding {
        match case {
            Timed::Decode(prompt) => decode_case(c, prompt),
            Timed::Task(task) => structured_case(c, task),
        }
    }
}

register_instrument!(SpecDecode);
