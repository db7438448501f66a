//! Suite data the speed-type instruments share: prompt files and task files.

use serde::Deserialize;
use serde_json::Value;
use sparktest_sdk::contract::Group;
use sparktest_sdk::contract::workload::DECODE;
use sparktest_sdk::{Case, read_text};

use crate::task::{Task, parse_task};

/// A timed prompt: one user turn, of a category (code, reasoning, prose).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prompt {
    /// The category, which names the case.
    pub category: String,
    /// The user turn.
    pub prompt: String,
}

/// The prompts of a JSON list file, only `categories` when given.
pub fn load_prompts(path: &str, categories: Option<&[String]>) -> Result<Vec<Prompt>, String> {
    let all: Vec<Prompt> = serde_json::from_str(&read_text(path)?).map_err(|err| format!("{path}: {err}"))?;
    Ok(all.into_iter().filter(|p| categories.is_none_or(|cs| cs.contains(&p.category))).collect())
}

/// The prompt of one category.
pub fn find_prompt(path: &str, category: &str) -> Result<Prompt, String> {
    load_prompts(path, None)?
        .into_iter()
        .find(|p| p.category == category)
        .ok_or_else(|| format!("{path}: no prompt of category {category}"))
}

/// The tasks of an A-Bench-format list file, by id; none without a file.
pub fn load_tasks(path: Option<&str>) -> Result<Vec<(String, Value)>, String> {
    let Some(path) = path else {
        return Ok(Vec::new());
    };
    let list: Vec<Value> = serde_json::from_str(&read_text(path)?).map_err(|err| format!("{path}: {err}"))?;
    list.into_iter()
        .enumerate()
        .map(|(i, t)| {
            let id = t.get("id").and_then(Value::as_str).ok_or(format!("{path}: task #{} has no id", i + 1))?;
            Ok((id.to_string(), t))
        })
        .collect()
}

/// One task, parsed.
pub fn find_task(path: Option<&str>, id: &str) -> Result<Task, String> {
    let (_, t) = load_tasks(path)?.into_iter().find(|(i, _)| i == id).ok_or(format!("no task {id}"))?;
    parse_task(&t, id)
}

/// Timed repetitions of each prompt, by default.
pub fn default_repetitions() -> u32 {
    3
}

/// Completion length of each timed request, by default.
pub fn default_max_tokens() -> u32 {
    512
}

/// Completion length of the discarded warm-up request, by default.
pub fn default_warmup_tokens() -> u32 {
    32
}

/// One case of a speed-type instrument.
pub enum Timed {
    /// A prompt decoded single-stream.
    Decode(Prompt),
    /// A task of the workload, replayed.
    Task(Task),
}

/// The cases of a speed-type instrument: `decode::<category>` per prompt
/// (tagged with `row` and the category), then `<task_group>::<id>` per task
/// (tagged `task_tag`), every task parsed now so a broken one is refused
/// before the run.
pub fn timed_cases(
    prompts: &str,
    categories: Option<&[String]>,
    tasks: Option<&str>,
    row: &str,
    task_group: Group,
    task_tag: &str,
) -> Result<Vec<Case<Timed>>, String> {
    let mut cases: Vec<Case<Timed>> = load_prompts(prompts, categories)?
        .into_iter()
        .map(|p| {
            let (name, category) = (DECODE.case(&p.category).to_string(), p.category.clone());
            Case::new(name, Timed::Decode(p)).tag(row).tag(category)
        })
        .collect();
    for (id, t) in load_tasks(tasks)? {
        let task = parse_task(&t, &id)?;
        cases.push(Case::new(task_group.case(&id).to_string(), Timed::Task(task)).tag(task_tag));
    }
    Ok(cases)
}
