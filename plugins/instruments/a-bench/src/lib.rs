//! `a-bench`: 60 fixed agent tasks, 12 in each of five categories — tool
//! calling (`a-tool`), JSON-schema structured output (`a-schema`),
//! instruction sequencing (`a-seq`), multi-turn memory (`a-turn`) and long
//! accumulating context (`a-ctx`) — at temperature 0.
//!
//! Tasks are data (`suites/a-bench/tasks/<category>.json`, digest-pinned):
//! messages, optional follow-up turns, tools, an optional response format,
//! and the expectation in the checker language of `sparktest-checks`.
//! Adding a task needs no code.
//!
//! Structured output: a task with a `response_format` is sent with
//! `json_schema`; if the engine refuses that parameter with a 4xx, the task is
//! re-sent with the instructions alone, and the note `structured-output`
//! records which was used. A prompt beyond the target's context that gets a
//! clean 4xx is a fail with reason `context: …`, never lost.

use serde_json::Value;
use sparktest_sdk::contract::a_bench as names;
use sparktest_sdk::*;
use sparktest_workload::task::{Task, parse_task};

struct ABench;

const CATEGORIES: &[&str] = &["a-tool", "a-schema", "a-seq", "a-turn", "a-ctx"];

/// The board rows each category feeds (besides "Agent tasks").
fn rows(category: &str) -> &'static [&'static str] {
    match category {
        "a-tool" | "a-schema" => &[names::AGENT_TASKS.title, names::TOOLS.title],
        "a-seq" | "a-turn" => &[names::AGENT_TASKS.title, names::MULTI_TURN.title],
        _ => &[names::AGENT_TASKS.title],
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    /// Folder of `<category>.json` task files.
    #[serde(default = "default_tasks_dir")]
    tasks_dir: String,
    /// Categories to run (all five by default).
    #[serde(default)]
    categories: Option<Vec<String>>,
}

fn default_tasks_dir() -> String {
    "tasks".into()
}

fn task_files(config: &Config) -> Vec<(String, String)> {
    let categories: Vec<String> = match &config.categories {
        Some(list) => list.clone(),
        None => CATEGORIES.iter().map(|c| c.to_string()).collect(),
    };
    categories.into_iter().map(|c| (format!("{}/{c}.json", config.tasks_dir), c)).collect()
}

fn load_category(path: &str) -> Result<Vec<Value>, String> {
    let text = read_text(path)?;
    match serde_json::from_str(&text).map_err(|err| format!("{path}: {err}"))? {
        Value::Array(tasks) => Ok(tasks),
        _ => Err(format!("{path}: expected a list of tasks")),
    }
}

fn task_id(task: &Value, path: &str, i: usize) -> Result<String, String> {
    task.get("id")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| format!("{path}: task #{} has no id", i + 1))
}

fn is_context_refusal(body: &str) -> bool {
    let b = body.to_lowercase();
    ["context", "too long", "exceed", "maximum", "n_ctx", "tokens"].iter().any(|w| b.contains(w))
}

impl Instrument for ABench {
    type Config = Config;
    type Case = Task;

    fn describe() -> Info {
        Info::new(
            "a-bench",
            names::AGENT_TASKS.title,
            env!("CARGO_PKG_VERSION"),
            "60 fixed agent tasks, 12 in each of five categories (tool calling, JSON-schema \
             structured output, instruction sequencing, multi-turn memory, long accumulating \
             context), run at temperature 0. Tool calls are checked like the Berkeley Function \
             Calling Leaderboard: name, required parameters present, no unexpected ones, \
             types, values within their allowed answers, parallel calls in any order. Scores \
             show correct/attempted; tasks the server never answered are lost and shown, not \
             counted as wrong. Tools & structured output = a-tool + a-schema; Multi-turn & \
             sequencing = a-turn + a-seq.",
        )
    }

    fn cases(config: &Config) -> Result<Vec<Case<Task>>, String> {
        let mut cases = Vec::new();
        for (path, category) in task_files(config) {
            let tasks = load_category(&path)?;
            for (i, t) in tasks.iter().enumerate() {
                let id = task_id(t, &path, i)?;
                // Parsed now, so a broken task is refused before the run.
                let task = parse_task(t, &format!("{path}: {id}"))?;
                let mut case = Case::new(format!("{category}::{id}"), task).tag(category.as_str());
                for row in rows(&category) {
                    case = case.tag(*row);
                }
                cases.push(case);
            }
        }
        Ok(cases)
    }

    fn run(_config: &Config, task: &Task) -> Finding {
        let mut messages = task.messages.clone();
        let mut structured = task.response_format.as_ref().map(|_| "json_schema");
        let mut turns = 0;
        // Every tool call the model made in the task, over all its turns: a
        // configuration that makes none in the whole suite cannot call tools.
        let mut tool_calls = 0;
        let mut reply;
        let mut pending_followups = task.followups.iter();
        loop {
            let req = task.request(messages.clone(), structured == Some("json_schema"));
            reply = match chat(&req) {
                Ok(r) => r,
                Err(CallError::Rejected(r))
                    if structured == Some("json_schema") && r.body.to_lowercase().contains("response_format") =>
                {
                    // The engine refuses json_schema: the instructions alone must do.
                    structured = Some("instructions");
                    continue;
                }
                Err(CallError::Rejected(r)) if is_context_refusal(&r.body) => {
                    return Finding::fail(format!(
                        "context: HTTP {}: {}",
                        r.status,
                        r.body.chars().take(200).collect::<String>()
                    ))
                    .note(names::TURNS, turns.to_string())
                    .note(names::TOOL_CALLS, tool_calls.to_string());
                }
                Err(err) => return Finding::from(err).note(names::TOOL_CALLS, tool_calls.to_string()),
            };
            turns += 1;
            tool_calls += reply.tool_calls.len();
            match pending_followups.next() {
                Some(next) => {
                    messages.push(Message::from_reply(&reply));
                    messages.push(Message::user(next));
                }
                None => break,
            }
        }
        let outcome = match task.check(&reply) {
            Ok(()) => Finding::pass(),
            Err(why) => Finding::fail(why),
        };
        let mut outcome = outcome.note(names::TURNS, turns.to_string()).note(names::TOOL_CALLS, tool_calls.to_string());
        if let Some(mode) = structured {
            outcome = outcome.note(names::STRUCTURED_OUTPUT, mode);
        }
        outcome
    }
}

register_instrument!(ABench);
