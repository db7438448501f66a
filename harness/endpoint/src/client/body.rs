//! Request bodies: the JSON sent for a chat or a completion request.

use serde_json::{Map, Value, json};

use crate::types::*;

/// Keys a request body's `extra-body` may not set: they decide what is
/// measured (the model, the conversation, streaming and its usage chunk).
const RESERVED: &[&str] = &["model", "messages", "prompt", "stream", "stream_options"];

fn message_json(m: &Message) -> Value {
    let content = match m.content.as_slice() {
        [ContentPart::Text(text)] => Value::String(text.clone()),
        [] if !m.tool_calls.is_empty() => Value::Null,
        parts => Value::Array(
            parts
                .iter()
                .map(|p| match p {
                    ContentPart::Text(text) => json!({"type": "text", "text": text}),
                    ContentPart::ImageUrl(url) => {
                        json!({"type": "image_url", "image_url": {"url": url}})
                    }
                })
                .collect(),
        ),
    };
    let mut obj = Map::new();
    obj.insert("role".into(), m.role.as_str().into());
    obj.insert("content".into(), content);
    if !m.tool_calls.is_empty() {
        obj.insert(
            "tool_calls".into(),
            m.tool_calls
                .iter()
                .map(
                    |c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}),
                )
                .collect(),
        );
    }
    if let Some(id) = &m.tool_call_id {
        obj.insert("tool_call_id".into(), id.clone().into());
    }
    Value::Object(obj)
}

fn parse_json_text(what: &str, text: &str) -> Result<Value, CallError> {
    serde_json::from_str(text).map_err(|err| CallError::Invalid(format!("{what} is not valid JSON: {err}")))
}

fn merge_extra(body: &mut Map<String, Value>, extra: &Option<String>) -> Result<(), CallError> {
    if let Some(extra) = extra {
        match parse_json_text("extra-body", extra)? {
            Value::Object(fields) => {
                if let Some(key) = fields.keys().find(|k| RESERVED.contains(&k.as_str())) {
                    return Err(CallError::Invalid(format!(
                        "extra-body may not set {key:?}: the model, the conversation and streaming are the host's"
                    )));
                }
                body.extend(fields)
            }
            _ => {
                return Err(CallError::Invalid("extra-body must be a JSON object".into()));
            }
        }
    }
    Ok(())
}

/// The fields chat and completions share. What is unset is left out, so
/// the engine's defaults apply; a streamed call asks for the usage chunk.
fn sampling(
    body: &mut Map<String, Value>,
    max_tokens: Option<u32>,
    temperature: Option<f32>,
    seed: Option<u64>,
    stop: &[String],
    stream: bool,
) {
    if let Some(n) = max_tokens {
        body.insert("max_tokens".into(), n.into());
    }
    if let Some(t) = temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(seed) = seed {
        body.insert("seed".into(), seed.into());
    }
    if !stop.is_empty() {
        body.insert("stop".into(), stop.into());
    }
    if stream {
        body.insert("stream".into(), true.into());
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
}

/// The JSON body of a chat request.
pub fn chat_body(model: &str, req: &ChatRequest) -> Result<Value, CallError> {
    let mut body = Map::new();
    body.insert("model".into(), model.into());
    body.insert("messages".into(), req.messages.iter().map(message_json).collect());
    if !req.tools.is_empty() {
        let mut tools = Vec::new();
        for t in &req.tools {
            let params = parse_json_text(&format!("parameters of tool {}", t.name), &t.parameters)?;
            tools.push(json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": params}}));
        }
        body.insert("tools".into(), tools.into());
    }
    if let Some(choice) = &req.tool_choice {
        let v = match choice {
            ToolChoice::Auto => json!("auto"),
            ToolChoice::None => json!("none"),
            ToolChoice::Required => json!("required"),
            ToolChoice::Function(name) => json!({"type": "function", "function": {"name": name}}),
        };
        body.insert("tool_choice".into(), v);
    }
    sampling(&mut body, req.max_tokens, req.temperature, req.seed, &req.stop, req.stream);
    if let Some(p) = req.top_p {
        body.insert("top_p".into(), json!(p));
    }
    if let Some(format) = &req.response_format {
        let v = match format {
            ResponseFormat::Text => json!({"type": "text"}),
            ResponseFormat::JsonObject => json!({"type": "json_object"}),
            ResponseFormat::JsonSchema { name, schema, strict } => {
                let schema = parse_json_text("response-format schema", schema)?;
                json!({"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": strict}})
            }
        };
        body.insert("response_format".into(), v);
    }
    merge_extra(&mut body, &req.extra_body)?;
    Ok(Value::Object(body))
}

/// The JSON body of a completion request.
pub fn completion_body(model: &str, req: &CompletionRequest) -> Result<Value, CallError> {
    let mut body = Map::new();
    body.insert("model".into(), model.into());
    body.insert("prompt".into(), req.prompt.clone().into());
    sampling(&mut body, req.max_tokens, req.temperature, req.seed, &req.stop, req.stream);
    merge_extra(&mut body, &req.extra_body)?;
    Ok(Value::Object(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_body_cannot_take_over_what_is_measured() {
        for key in ["model", "messages", "stream", "stream_options"] {
            let mut req = ChatRequest::new(vec![Message::text(Role::User, "hi")]);
            req.extra_body = Some(format!("{{\"{key}\": 1}}"));
            let err = chat_body("m", &req).unwrap_err();
            assert!(matches!(&err, CallError::Invalid(r) if r.contains(key)), "{err}");
        }
    }

    #[test]
    fn chat_body_shapes() {
        let mut req = ChatRequest::new(vec![Message::text(Role::User, "hi")]);
        req.stream = true;
        req.tools.push(ToolDef {
            name: "f".into(),
            description: "d".into(),
            parameters: "{\"type\":\"object\"}".into(),
        });
        req.tool_choice = Some(ToolChoice::Function("f".into()));
        req.extra_body = Some("{\"cache_prompt\":false}".into());
        let body = chat_body("m", &req).unwrap();
        assert_eq!(body["messages"][0]["content"], "hi");
        assert_eq!(body["stream_options"]["include_usage"], true);
        assert_eq!(body["tools"][0]["function"]["parameters"]["type"], "object");
        assert_eq!(body["tool_choice"]["function"]["name"], "f");
        assert_eq!(body["cache_prompt"], false);
        req.tools[0].parameters = "{nope".into();
        assert!(matches!(chat_body("m", &req), Err(CallError::Invalid(_))));
    }
}
