//! `hard-question` (the battery's first check): a question that must be
//! answered correctly before a configuration's numbers count. A health
//! check's "200 OK" is no evidence that a model works; a right answer to a
//! question with one checkable answer is.
//!
//! Questions are tasks in the A-Bench format (`sparktest_workload::task`),
//! sent at temperature 0 and checked with the checker language.

use serde::Deserialize;
use sparktest_sdk::contract::hard_question as names;
use sparktest_sdk::*;
use sparktest_workload::data::load_tasks;
use sparktest_workload::task::{Task, parse_task};

struct HardQuestion;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    #[serde(default = "default_questions")]
    questions: String,
}

fn default_questions() -> String {
    "battery/questions.json".into()
}

impl Instrument for HardQuestion {
    type Config = Config;
    type Case = Task;

    fn describe() -> Info {
        Info::new(
            "hard-question",
            names::ROW.title,
            env!("CARGO_PKG_VERSION"),
            "A hard question that must be answered correctly at temperature 0 (a health check's \
             200 OK is not evidence a model works), checked against its one answer.",
        )
    }

    fn cases(config: &Config) -> Result<Vec<Case<Task>>, String> {
        load_tasks(Some(&config.questions))?
            .iter()
            .map(|(id, t)| parse_task(t, id).map(|task| Case::new(format!("question::{id}"), task).tag("battery")))
            .collect()
    }

    fn run(_config: &Config, task: &Task) -> Finding {
        match chat(&task.request(task.messages.clone(), task.response_format.is_some())) {
            Ok(reply) => match task.check(&reply) {
                Ok(()) => Finding::pass(),
                Err(why) => Finding::fail(format!("wrong answer: {why}")),
            },
            Err(err) => err.into(),
        }
    }
}

register_instrument!(HardQuestion);
