//! Agent-shaped tasks in the A-Bench format: messages, optional follow-up
//! turns, tools, an optional JSON-schema response format, and the
//! expectation in the checker language of `sparktest-checks`
//! (`suites/a-bench/README.md` documents the format).

use std::collections::BTreeMap;

use serde_json::Value;
use sparktest_checks::{Call, Check, Reply as CheckReply};
use sparktest_sdk::*;

/// One message of a task.
pub fn message(v: &Value, at: &str) -> Result<Message, String> {
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
                    id: c.get("id").and_then(Value::as_str).unwrap_or_default().to_string(),
                    name: c.get("name").and_then(Value::as_str).unwrap_or_default().to_string(),
                    arguments: c.get("arguments").map(Value::to_string).unwrap_or_else(|| "{}".into()),
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
        tool_call_id: v.get("tool_call_id").and_then(Value::as_str).map(str::to_string),
    })
}

/// A task, parsed and checked, ready to send.
pub struct Task {
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// User turns sent after each reply, in order.
    pub followups: Vec<String>,
    /// Tools offered.
    pub tools: Vec<ToolDef>,
    /// Each tool's parameters schema, for the checker.
    pub tool_schemas: BTreeMap<String, Value>,
    /// The tool choice, if the task sets one.
    pub tool_choice: Option<ToolChoice>,
    /// The JSON schema the reply must follow, if any.
    pub response_format: Option<JsonSchemaFormat>,
    /// Completion budget per turn.
    pub max_tokens: u32,
    /// What a correct reply looks like.
    pub expect: Check,
}

/// Parse a task; `at` names it in errors.
pub fn parse_task(v: &Value, at: &str) -> Result<Task, String> {
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
        .map(|f| f.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default();
    let mut tools = Vec::new();
    let mut tool_schemas = BTreeMap::new();
    for (i, t) in v.get("tools").and_then(Value::as_array).into_iter().flatten().enumerate() {
        let name = t.get("name").and_then(Value::as_str).ok_or(format!("{at}.tools[{i}]: name missing"))?;
        let params = t.get("parameters").cloned().unwrap_or_else(|| serde_json::json!({"type": "object"}));
        tools.push(ToolDef {
            name: name.into(),
            description: t.get("description").and_then(Value::as_str).unwrap_or_default().into(),
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
        name: f.get("name").and_then(Value::as_str).unwrap_or("reply").into(),
        schema: f.get("schema").cloned().unwrap_or(Value::Bool(true)).to_string(),
        strict: true,
    });
    let max_tokens = v.get("max_tokens").and_then(Value::as_u64).unwrap_or(256) as u32;
    let expect = Check::parse(v.get("expect").ok_or(format!("{at}: expect missing"))?, at)?;
    Ok(Task { messages, followups, tools, tool_schemas, tool_choice, response_format, max_tokens, expect })
}

impl Task {
    /// The request for `messages` with this task's tools, format and budget.
    pub fn request(&self, messages: Vec<Message>, json_schema: bool) -> ChatRequest {
        let mut req = ChatRequest::new(messages).greedy().max_tokens(self.max_tokens);
        req.tools = self.tools.clone();
        req.tool_choice = self.tool_choice.clone();
        if json_schema {
            req.response_format = self.response_format.clone().map(ResponseFormat::JsonSchema);
        }
        req
    }

    /// `Ok` when `reply` meets the task's expectation, else the reason.
    pub fn check(&self, reply: &Reply) -> Result<(), String> {
        let calls: Vec<Call> =
            reply.tool_calls.iter().map(|c| Call { name: c.name.clone(), arguments: c.arguments.clone() }).collect();
        self.expect.evaluate(&CheckReply { text: &reply.text, calls: &calls, tools: &self.tool_schemas })
    }
}
