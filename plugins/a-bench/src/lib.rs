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

use std::collections::BTreeMap;

use serde_json::Value;
use sparktest_checks::{Call, Check, Reply as CheckReply};
use sparktest_sdk::*;

struct ABench;

const CATEGORIES: &[&str] = &["a-tool", "a-schema", "a-seq", "a-turn", "a-ctx"];

/// The board rows each category feeds (besides "Agent tasks").
fn rows(category: &str) -> &'static [&'static str] {
    match category {
        "a-tool" | "a-schema" => &["Agent tasks", "Tools & structured output"],
        "a-seq" | "a-turn" => &["Agent tasks", "Multi-turn & sequencing"],
        _ => &["Agent tasks"],
    }
}

fn task_files(config: &str) -> Result<Vec<(String, String)>, String> {
    let config: Value =
        serde_json::from_str(config).map_err(|err| format!("a-bench config: {err}"))?;
    let dir = config
        .get("tasks_dir")
        .and_then(Value::as_str)
        .unwrap_or("tasks");
    let categories: Vec<String> = match config.get("categories").and_then(Value::as_array) {
        Some(list) => list
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        None => CATEGORIES.iter().map(|c| c.to_string()).collect(),
    };
    Ok(categories
        .into_iter()
        .map(|c| (format!("{dir}/{c}.json"), c))
        .collect())
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

fn message(v: &Value, at: &str) -> Result<Message, String> {
    let role = match v.get("role").and_then(Value::as_str) {
        Some("system") => Role::System,
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        Some("tool") => Role::Tool,
        other => return Err(format!("{at}: unknown role {other:?}")),
    };
    let content = v.get("content").and_then(Value::as_str).unwrap_or_default();
    let tool_calls = v
        .get("tool_calls")
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .map(|c| ToolCall {
                    id: c
                        .get("id")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    name: c
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    arguments: c
                        .get("arguments")
                        .map(Value::to_string)
                        .unwrap_or_else(|| "{}".into()),
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Message {
        role,
        content: if content.is_empty() && role == Role::Assistant {
            Vec::new()
        } else {
            vec![ContentPart::Text(content.into())]
        },
        tool_calls,
        tool_call_id: v
            .get("tool_call_id")
            .and_then(Value::as_str)
            .map(str::to_string),
    })
}

/// A task, parsed and checked, ready to send.
struct Task {
    messages: Vec<Message>,
    followups: Vec<String>,
    tools: Vec<ToolDef>,
    tool_schemas: BTreeMap<String, Value>,
    tool_choice: Option<ToolChoice>,
    response_format: Option<JsonSchemaFormat>,
    max_tokens: u32,
    expect: Check,
}

fn parse_task(v: &Value, at: &str) -> Result<Task, String> {
    let messages = v
        .get("messages")
        .and_then(Value::as_array)
        .ok_or(format!("{at}: messages missing"))?
        .iter()
        .enumerate()
        .map(|(i, m)| message(m, &format!("{at}.messages[{i}]")))
        .collect::<Result<Vec<_>, _>>()?;
    let followups = v
        .get("followups")
        .and_then(Value::as_array)
        .map(|f| {
            f.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let mut tools = Vec::new();
    let mut tool_schemas = BTreeMap::new();
    for (i, t) in v
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let name = t
            .get("name")
            .and_then(Value::as_str)
            .ok_or(format!("{at}.tools[{i}]: name missing"))?;
        let params = t
            .get("parameters")
            .cloned()
            .unwrap_or_else(|| serde_json::json!({"type": "object"}));
        tools.push(ToolDef {
            name: name.into(),
            description: t
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .into(),
            parameters: params.to_string(),
        });
        tool_schemas.insert(name.to_string(), params);
    }
    let tool_choice = match v.get("tool_choice").and_then(Value::as_str) {
        None => None,
        Some("auto") => Some(ToolChoice::Auto),
        Some("none") => Some(ToolChoice::None),
        Some("required") => Some(ToolChoice::Required),
        Some(other) => Some(ToolChoice::Function(other.into())),
    };
    let response_format = v.get("response_format").map(|f| JsonSchemaFormat {
        name: f
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("reply")
            .into(),
        schema: f
            .get("schema")
            .cloned()
            .unwrap_or(Value::Bool(true))
            .to_string(),
        strict: true,
    });
    let max_tokens = v.get("max_tokens").and_then(Value::as_u64).unwrap_or(256) as u32;
    let expect = Check::parse(v.get("expect").ok_or(format!("{at}: expect missing"))?, at)?;
    Ok(Task {
        messages,
        followups,
        tools,
        tool_schemas,
        tool_choice,
        response_format,
        max_tokens,
        expect,
    })
}

fn find_task(config: &str, case: &str) -> Result<Task, String> {
    let (category, id) = case
        .split_once("::")
        .ok_or(format!("bad case name {case}"))?;
    let (path, _) = task_files(config)?
        .into_iter()
        .find(|(_, c)| c == category)
        .ok_or(format!("no category {category} in this suite"))?;
    let tasks = load_category(&path)?;
    for (i, t) in tasks.iter().enumerate() {
        if task_id(t, &path, i)? == id {
            return parse_task(t, &format!("{path}: {id}"));
        }
    }
    Err(format!("{path}: no task {id}"))
}

fn is_context_refusal(body: &str) -> bool {
    let b = body.to_lowercase();
    [
        "context", "too long", "exceed", "maximum", "n_ctx", "tokens",
    ]
    .iter()
    .any(|w| b.contains(w))
}

impl Instrument for ABench {
    fn describe() -> Info {
        Info::new(
            "a-bench",
            "Agent tasks",
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

    fn cases(config: &str) -> Result<Vec<CaseInfo>, String> {
        let mut cases = Vec::new();
        for (path, category) in task_files(config)? {
            let tasks = load_category(&path)?;
            for (i, t) in tasks.iter().enumerate() {
                let id = task_id(t, &path, i)?;
                // Parse now so a broken task is refused before the run.
                parse_task(t, &format!("{path}: {id}"))?;
                let mut case = CaseInfo::new(format!("{category}::{id}")).tag(category.as_str());
                for row in rows(&category) {
                    case = case.tag(*row);
                }
                cases.push(case);
            }
        }
        Ok(cases)
    }

    fn run(config: &str, case: &str) -> Outcome {
        let task = match find_task(config, case) {
            Ok(task) => task,
            Err(err) => return Outcome::fail(err),
        };
        let mut messages = task.messages.clone();
        let mut structured = task.response_format.as_ref().map(|_| "json_schema");
        let mut turns = 0;
        let mut reply;
        let mut pending_followups = task.followups.iter();
        loop {
            let mut req = ChatRequest::new(messages.clone())
                .greedy()
                .max_tokens(task.max_tokens);
            req.tools = task.tools.clone();
            req.tool_choice = task.tool_choice.clone();
            if structured == Some("json_schema") {
                req.response_format = task.response_format.clone().map(ResponseFormat::JsonSchema);
            }
            reply = match chat(&req) {
                Ok(r) => r,
                Err(CallError::Rejected(r))
                    if structured == Some("json_schema")
                        && r.body.to_lowercase().contains("response_format") =>
                {
                    // The engine refuses json_schema: the instructions alone must do.
                    structured = Some("instructions");
                    continue;
                }
                Err(CallError::Rejected(r)) if is_context_refusal(&r.body) => {
                    return Outcome::fail(format!(
                        "context: HTTP {}: {}",
                        r.status,
                        r.body.chars().take(200).collect::<String>()
                    ))
                    .note("turns", turns.to_string());
                }
                Err(err) => return err.into(),
            };
            turns += 1;
            match pending_followups.next() {
                Some(next) => {
                    messages.push(Message::from_reply(&reply));
                    messages.push(Message::user(next));
                }
                None => break,
            }
        }
        let calls: Vec<Call> = reply
            .tool_calls
            .iter()
            .map(|c| Call {
                name: c.name.clone(),
                arguments: c.arguments.clone(),
            })
            .collect();
        let view = CheckReply {
            text: &reply.text,
            calls: &calls,
            tools: &task.tool_schemas,
        };
        let outcome = match task.expect.evaluate(&view) {
            Ok(()) => Outcome::pass(),
            Err(why) => Outcome::fail(why),
        };
        let mut outcome = outcome.note("turns", turns.to_string());
        if let Some(mode) = structured {
            outcome = outcome.note("structured-output", mode);
        }
        outcome
    }
}

register_instrument!(ABench);
