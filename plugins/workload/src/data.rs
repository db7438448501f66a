//! Suite data the speed-type instruments share: prompt files and task files.

use serde::Deserialize;
use serde_json::Value;
use sparktest_sdk::read_text;

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
    let Some(path) = path else { return Ok(Vec::new()) };
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
