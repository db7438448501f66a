//! The OpenAI-compatible HTTP client: chat and completions, streamed or not.
//!
//! Classification is the point of this file. A call ends in a [`Reply`], or
//! in [`CallError::Lost`] (refused or reset connection, timeout, 5xx, a stream
//! cut before `[DONE]`, a body that is not the JSON the protocol promises),
//! or in [`CallError::Rejected`] (a 4xx, with its body).

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::{Map, Value, json};

use super::sse;
use super::types::*;

/// How long to wait, per call.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    /// To open the connection.
    pub connect: Duration,
    /// For the whole call, first byte to last.
    pub request: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts { connect: Duration::from_secs(10), request: Duration::from_secs(600) }
    }
}

/// A reqwest client builder with TLS ready. reqwest is built without a
/// default TLS provider (aws-lc is slow to build); ring is installed here,
/// once per process (a second install is a harmless no-op).
pub fn http_builder() -> reqwest::ClientBuilder {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
}

/// An OpenAI-compatible server at a base URL, serving one model.
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    base_url: String,
    model: String,
    timeouts: Timeouts,
}

/// A reply before classification: the wire facts a caller may also want.
pub(crate) fn millis(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

impl Client {
    /// A client for `base_url` (e.g. `http://127.0.0.1:8080`), naming `model`
    /// in every request.
    pub fn new(base_url: &str, model: &str, timeouts: Timeouts) -> Result<Self, String> {
        let http = http_builder()
            .connect_timeout(timeouts.connect)
            .timeout(timeouts.request)
            .pool_max_idle_per_host(64)
            .build()
            .map_err(|err| format!("failed to build the HTTP client: {err}"))?;
        Ok(Client { http, base_url: base_url.trim_end_matches('/').to_string(), model: model.to_string(), timeouts })
    }

    /// The base URL.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The model id named in requests.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// `POST /v1/chat/completions`.
    pub async fn chat(&self, req: &ChatRequest) -> Result<Reply, CallError> {
        let body = chat_body(&self.model, req)?;
        self.post("/v1/chat/completions", body, req.stream, Shape::Chat).await
    }

    /// `POST /v1/completions`.
    pub async fn complete(&self, req: &CompletionRequest) -> Result<Reply, CallError> {
        let body = completion_body(&self.model, req)?;
        self.post("/v1/completions", body, req.stream, Shape::Completion).await
    }

    /// `GET` a path and return its body as text; 4xx and 5xx are errors.
    pub async fn get_text(&self, path: &str) -> Result<String, CallError> {
        let url = format!("{}{path}", self.base_url);
        let resp = self.http.get(&url).send().await.map_err(|err| lost(&err, self.timeouts))?;
        let status = resp.status().as_u16();
        let text = resp.text().await.map_err(|err| lost(&err, self.timeouts))?;
        classify_status(status, &text)?;
        Ok(text)
    }

    /// `POST` a JSON body to a path and return the JSON answer; 4xx is
    /// `Rejected`, 5xx, a dropped connection or non-JSON is `Lost`.
    pub async fn post_json(&self, path: &str, body: &Value) -> Result<Value, CallError> {
        let url = format!("{}{path}", self.base_url);
        let resp = self.http.post(&url).json(body).send().await.map_err(|err| lost(&err, self.timeouts))?;
        let status = resp.status().as_u16();
        let text = resp.text().await.map_err(|err| lost(&err, self.timeouts))?;
        classify_status(status, &text)?;
        serde_json::from_str(&text)
            .map_err(|err| CallError::Lost(format!("malformed JSON in the response ({err}): {}", clip(&text))))
    }

    async fn post(&self, path: &str, body: Value, stream: bool, shape: Shape) -> Result<Reply, CallError> {
        let url = format!("{}{path}", self.base_url);
        let started = Instant::now();
        let resp = self.http.post(&url).json(&body).send().await.map_err(|err| lost(&err, self.timeouts))?;
        let status = resp.status().as_u16();
        let is_sse = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !(200..300).contains(&status) || !stream || !is_sse {
            let bytes = resp.bytes().await.map_err(|err| lost(&err, self.timeouts))?;
            let text = String::from_utf8_lossy(&bytes).into_owned();
            classify_status(status, &text)?;
            let value: Value = serde_json::from_str(&text)
                .map_err(|err| CallError::Lost(format!("malformed JSON in the response ({err}): {}", clip(&text))))?;
            let mut reply = parse_whole(&value, shape)?;
            reply.status = status;
            reply.timing.total_ms = millis(started);
            return Ok(reply);
        }
        let mut acc = StreamAcc::default();
        let mut events = std::pin::pin!(sse::events(resp.bytes_stream()));
        let mut done = false;
        while let Some(event) = events.next().await {
            let event = match event {
                Ok(event) => event,
                // The transport error's source chain says timeout vs reset.
                Err(eventsource_stream::EventStreamError::Transport(err)) => return Err(lost(&err, self.timeouts)),
                Err(err) => return Err(CallError::Lost(format!("stream cut: {err}"))),
            };
            let at = millis(started);
            let data = event.data.trim();
            if data == "[DONE]" {
                done = true;
                break;
            }
            if data.is_empty() {
                continue;
            }
            let value: Value = serde_json::from_str(data)
                .map_err(|err| CallError::Lost(format!("malformed JSON in a stream chunk ({err}): {}", clip(data))))?;
            if let Some(err) = value.get("error").filter(|e| !e.is_null()) {
                return Err(CallError::Lost(format!("the server reported an error mid-stream: {}", clip(&err.to_string()))));
            }
            acc.chunk(&value, at, shape);
        }
        if !done {
            return Err(CallError::Lost(format!(
                "stream cut before [DONE] after {} content chunks",
                acc.arrivals.len()
            )));
        }
        let mut reply = acc.finish();
        reply.status = status;
        reply.timing.total_ms = millis(started);
        Ok(reply)
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Shape {
    Chat,
    Completion,
}

fn clip(text: &str) -> String {
    const MAX: usize = 500;
    if text.len() <= MAX {
        return text.to_string();
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

fn lost(err: &reqwest::Error, timeouts: Timeouts) -> CallError {
    let what = if err.is_timeout() {
        format!("timed out (connect {:?}, request {:?})", timeouts.connect, timeouts.request)
    } else if err.is_connect() {
        "connection failed".to_string()
    } else if err.is_body() || err.is_decode() {
        "response body cut".to_string()
    } else {
        "request failed".to_string()
    };
    // The source chain says refused vs reset.
    let mut detail = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(s) = source {
        detail.push_str(": ");
        detail.push_str(&s.to_string());
        source = s.source();
    }
    CallError::Lost(format!("{what}: {detail}"))
}

/// 4xx is a clean refusal; 5xx (and any other non-2xx) means no answer.
fn classify_status(status: u16, body: &str) -> Result<(), CallError> {
    match status {
        200..=299 => Ok(()),
        400..=499 => Err(CallError::Rejected { status, body: clip(body) }),
        _ => Err(CallError::Lost(format!("HTTP {status}: {}", clip(body)))),
    }
}

fn message_json(m: &Message) -> Value {
    let content = match m.content.as_slice() {
        [ContentPart::Text(text)] => Value::String(text.clone()),
        [] if !m.tool_calls.is_empty() => Value::Null,
        parts => Value::Array(
            parts
                .iter()
                .map(|p| match p {
                    ContentPart::Text(text) => json!({"type": "text", "text": text}),
                    ContentPart::ImageUrl(url) => json!({"type": "image_url", "image_url": {"url": url}}),
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
                .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
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
            Value::Object(fields) => body.extend(fields),
            _ => return Err(CallError::Invalid("extra-body must be a JSON object".into())),
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

fn as_u32(v: Option<&Value>) -> Option<u32> {
    v.and_then(Value::as_u64).and_then(|n| u32::try_from(n).ok())
}

/// Token counts: `usage` when present, else llama.cpp `timings`.
fn usage_of(value: &Value) -> Option<Usage> {
    if let Some(u) = value.get("usage").filter(|u| u.is_object()) {
        return Some(Usage {
            prompt_tokens: as_u32(u.get("prompt_tokens")),
            completion_tokens: as_u32(u.get("completion_tokens")),
            cached_tokens: as_u32(u.pointer("/prompt_tokens_details/cached_tokens")),
            source: TokenSource::ServerUsage,
        });
    }
    let t = value.get("timings").filter(|t| t.is_object())?;
    Some(Usage {
        prompt_tokens: as_u32(t.get("prompt_n")).map(|n| n + as_u32(t.get("cache_n")).unwrap_or(0)),
        completion_tokens: as_u32(t.get("predicted_n")),
        cached_tokens: as_u32(t.get("cache_n")),
        source: TokenSource::ServerTimings,
    })
}

fn server_timings(value: &Value, timing: &mut Timing) {
    if let Some(t) = value.get("timings") {
        timing.server_prompt_ms = t.get("prompt_ms").and_then(Value::as_f64);
        timing.server_decode_ms = t.get("predicted_ms").and_then(Value::as_f64);
    }
}

fn tool_calls_of(calls: Option<&Value>) -> Vec<ToolCall> {
    calls
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .map(|c| ToolCall {
                    id: c.get("id").and_then(Value::as_str).unwrap_or_default().to_string(),
                    name: c.pointer("/function/name").and_then(Value::as_str).unwrap_or_default().to_string(),
                    arguments: match c.pointer("/function/arguments") {
                        Some(Value::String(s)) => s.clone(),
                        Some(other) => other.to_string(),
                        None => String::new(),
                    },
                })
                .collect()
        })
        .unwrap_or_default()
}

fn str_of(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str).map(str::to_string)
}

/// A whole (non-streamed) response.
fn parse_whole(value: &Value, shape: Shape) -> Result<Reply, CallError> {
    let choice = value
        .pointer("/choices/0")
        .ok_or_else(|| CallError::Lost(format!("response has no choices: {}", clip(&value.to_string()))))?;
    let mut reply = Reply {
        model: str_of(value.get("model")),
        finish_reason: str_of(choice.get("finish_reason")),
        usage: usage_of(value).unwrap_or_default(),
        ..Reply::default()
    };
    match shape {
        Shape::Chat => {
            let message = choice.get("message").unwrap_or(&Value::Null);
            reply.text = str_of(message.get("content")).unwrap_or_default();
            reply.reasoning = str_of(message.get("reasoning_content"));
            reply.tool_calls = tool_calls_of(message.get("tool_calls"));
        }
        Shape::Completion => reply.text = str_of(choice.get("text")).unwrap_or_default(),
    }
    server_timings(value, &mut reply.timing);
    Ok(reply)
}

/// Accumulates a streamed reply chunk by chunk.
#[derive(Default)]
struct StreamAcc {
    text: String,
    reasoning: Option<String>,
    /// Tool calls by their delta index.
    calls: Vec<(u64, ToolCall)>,
    finish_reason: Option<String>,
    model: Option<String>,
    usage: Option<Usage>,
    timing: Timing,
    arrivals: Vec<f64>,
}

impl StreamAcc {
    fn chunk(&mut self, value: &Value, at: f64, shape: Shape) {
        if self.model.is_none() {
            self.model = str_of(value.get("model"));
        }
        if let Some(usage) = usage_of(value) {
            // The usage chunk comes last; a later one replaces an earlier one.
            self.usage = Some(usage);
        }
        server_timings(value, &mut self.timing);
        let Some(choice) = value.pointer("/choices/0") else { return };
        if let Some(reason) = str_of(choice.get("finish_reason")) {
            self.finish_reason = Some(reason);
        }
        let mut carries = false;
        match shape {
            Shape::Chat => {
                let Some(delta) = choice.get("delta") else { return };
                if let Some(text) = delta.get("content").and_then(Value::as_str).filter(|t| !t.is_empty()) {
                    self.text.push_str(text);
                    carries = true;
                }
                if let Some(text) = delta.get("reasoning_content").and_then(Value::as_str).filter(|t| !t.is_empty()) {
                    self.reasoning.get_or_insert_with(String::new).push_str(text);
                    carries = true;
                }
                if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                    for (pos, c) in calls.iter().enumerate() {
                        carries = true;
                        let index = c.get("index").and_then(Value::as_u64).unwrap_or(pos as u64);
                        let slot = match self.calls.iter().position(|(i, _)| *i == index) {
                            Some(slot) => slot,
                            None => {
                                self.calls.push((index, ToolCall { id: String::new(), name: String::new(), arguments: String::new() }));
                                self.calls.len() - 1
                            }
                        };
                        let call = &mut self.calls[slot].1;
                        if let Some(id) = c.get("id").and_then(Value::as_str) {
                            call.id = id.to_string();
                        }
                        if let Some(name) = c.pointer("/function/name").and_then(Value::as_str) {
                            call.name.push_str(name);
                        }
                        if let Some(args) = c.pointer("/function/arguments").and_then(Value::as_str) {
                            call.arguments.push_str(args);
                        }
                    }
                }
            }
            Shape::Completion => {
                if let Some(text) = choice.get("text").and_then(Value::as_str).filter(|t| !t.is_empty()) {
                    self.text.push_str(text);
                    carries = true;
                }
            }
        }
        if carries {
            self.arrivals.push(at);
        }
    }

    fn finish(self) -> Reply {
        let mut timing = self.timing;
        timing.ttft_ms = self.arrivals.first().copied();
        timing.decode_ms = match (self.arrivals.first(), self.arrivals.last()) {
            (Some(first), Some(last)) => Some(last - first),
            _ => None,
        };
        timing.chunk_arrivals_ms = self.arrivals;
        let mut calls = self.calls;
        calls.sort_by_key(|(i, _)| *i);
        Reply {
            text: self.text,
            reasoning: self.reasoning,
            tool_calls: calls.into_iter().map(|(_, c)| c).collect(),
            finish_reason: self.finish_reason,
            model: self.model,
            usage: self.usage.unwrap_or_default(),
            timing,
            status: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_only_chunk_does_not_start_ttft() {
        let mut acc = StreamAcc::default();
        acc.chunk(&json!({"choices":[{"delta":{"role":"assistant","content":null}}]}), 5.0, Shape::Chat);
        acc.chunk(&json!({"choices":[{"delta":{"content":"Hi"}}]}), 9.0, Shape::Chat);
        acc.chunk(&json!({"choices":[{"delta":{"content":" there"},"finish_reason":"stop"}]}), 12.0, Shape::Chat);
        let reply = acc.finish();
        assert_eq!(reply.text, "Hi there");
        assert_eq!(reply.timing.ttft_ms, Some(9.0));
        assert_eq!(reply.timing.decode_ms, Some(3.0));
        assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
    }

    #[test]
    fn tool_calls_assemble_from_deltas() {
        let mut acc = StreamAcc::default();
        acc.chunk(&json!({"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"get_weather","arguments":"{\"ci"}}]}}]}), 1.0, Shape::Chat);
        acc.chunk(&json!({"choices":[{"delta":{"tool_calls":[{"index":1,"id":"c2","function":{"name":"get_time","arguments":"{}"}}]}}]}), 2.0, Shape::Chat);
        acc.chunk(&json!({"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ty\":\"Oslo\"}"}}]}}]}), 3.0, Shape::Chat);
        let reply = acc.finish();
        assert_eq!(reply.tool_calls.len(), 2);
        assert_eq!(reply.tool_calls[0].name, "get_weather");
        assert_eq!(reply.tool_calls[0].arguments, "{\"city\":\"Oslo\"}");
        assert_eq!(reply.tool_calls[1].id, "c2");
        assert_eq!(reply.timing.ttft_ms, Some(1.0));
    }

    #[test]
    fn usage_beats_timings_and_timings_fill_in() {
        let both = json!({"usage":{"prompt_tokens":32,"completion_tokens":5},"timings":{"prompt_n":1,"cache_n":31,"predicted_n":5}});
        let u = usage_of(&both).unwrap();
        assert_eq!((u.prompt_tokens, u.source), (Some(32), TokenSource::ServerUsage));
        let timings_only = json!({"timings":{"prompt_n":1,"cache_n":31,"predicted_n":5}});
        let u = usage_of(&timings_only).unwrap();
        assert_eq!((u.prompt_tokens, u.completion_tokens, u.source), (Some(32), Some(5), TokenSource::ServerTimings));
        assert!(usage_of(&json!({})).is_none());
    }

    #[test]
    fn status_classes() {
        assert!(classify_status(200, "").is_ok());
        assert!(matches!(classify_status(400, "too long"), Err(CallError::Rejected { status: 400, .. })));
        assert!(matches!(classify_status(503, "busy"), Err(CallError::Lost(r)) if r.contains("503")));
    }

    #[test]
    fn chat_body_shapes() {
        let mut req = ChatRequest::new(vec![Message::text(Role::User, "hi")]);
        req.stream = true;
        req.tools.push(ToolDef { name: "f".into(), description: "d".into(), parameters: "{\"type\":\"object\"}".into() });
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
