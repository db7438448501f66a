//! `speed` (row "Prose speed"): single-stream decode speed.
//!
//! - `decode::<category>`: one prompt per category (code, reasoning, prose),
//!   a discarded warm-up request first, then `repetitions` streamed
//!   completions of `max_tokens` at temperature 0. Every repetition is
//!   recorded, then mean and spread; TTFT and input tok/s separately. The
//!   figures are computed by `sparktest_workload::speed` (decode excludes
//!   the time to first token; token counts from the server).
//! - `agent::<task>`: an agent-shaped workload (JSON schema, code edit, tool
//!   call) in the A-Bench task format; every repetition's output must pass
//!   its check before the case's speed counts. An invalid output fails the
//!   case and no speed figure is recorded for it.
//!
//! Cases must run alone on the server: the suite marks the instrument
//! `exclusive`.

use serde::Deserialize;
use sparktest_sdk::contract;
use sparktest_sdk::contract::speed as names;
use sparktest_sdk::*;
use sparktest_workload::data::{Prompt, Timed, timed_cases};
use sparktest_workload::speed::{at_least_one_repetition, prompt_request, repeat, repeat_task, summarise, warm_up};
use sparktest_workload::task::Task;

struct Speed;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    #[serde(default = "default_prompts")]
    prompts: String,
    /// A-Bench-format tasks for the agent workload; none when absent.
    #[serde(default)]
    agent: Option<String>,
    #[serde(default = "sparktest_workload::data::default_repetitions")]
    repetitions: u32,
    #[serde(default = "sparktest_workload::data::default_max_tokens")]
    max_tokens: u32,
    #[serde(default = "sparktest_workload::data::default_warmup_tokens")]
    warmup_tokens: u32,
    /// Run only these prompt categories (all when absent).
    #[serde(default)]
    categories: Option<Vec<String>>,
}

fn default_prompts() -> String {
    "speed/prompts.json".into()
}

fn check(c: &Config) -> Result<(), String> {
    at_least_one_repetition("speed", c.repetitions)
}

fn decode_case(c: &Config, prompt: &Prompt) -> Finding {
    let category = prompt.category.as_str();
    let timed = warm_up(c.warmup_tokens)
        .and_then(|()| repeat(&prompt_request(&prompt.prompt, c.max_tokens), c.repetitions, |_| Ok(())));
    match timed {
        Ok(samples) => summarise(Finding::pass(), &samples).note(contract::workload::CATEGORY, category),
        Err(outcome) => outcome,
    }
}

fn agent_case(c: &Config, task: &Task) -> Finding {
    match repeat_task(task, c.repetitions) {
        Ok(samples) => {
            summarise(Finding::pass(), &samples).note(contract::workload::VALID, format!("{0} of {0}", c.repetitions))
        }
        Err(outcome) => outcome,
    }
}

impl Instrument for Speed {
    type Config = Config;
    type Case = Timed;

    fn describe() -> Info {
        Info::new(
            "speed",
            names::ROW.title,
            env!("CARGO_PKG_VERSION"),
            "Single-stream decode across three prompt types (code, reasoning, prose), three \
             repetitions each, 512-token completions, with a discarded warm-up request first. \
             Decode tok/s excludes the time to first token; token counts come from the server. \
             Every repetition is recorded with mean and spread; TTFT and input tok/s \
             separately. An agent-shaped workload (JSON schema, code edit, tool call) counts \
             only when every output validates. Input tok/s comes only from repetitions whose prompt missed the prefix cache.",
        )
    }

    fn cases(c: &Config) -> Result<Vec<Case<Timed>>, String> {
        check(c)?;
        timed_cases(
            &c.prompts,
            c.categories.as_deref(),
            c.agent.as_deref(),
            names::ROW.title,
            names::AGENT,
            "agent-workload",
        )
    }

    fn run(c: &Config, case: &Timed) -> Finding {
        match case {
            Timed::Decode(prompt) => decode_case(c, prompt),
            Timed::Task(task) => agent_case(c, task),
        }
    }
}

register_instrument!(Speed);
