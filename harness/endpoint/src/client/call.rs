//! The [`Client`]: its settings, and the chat, completion and plain calls
//! that send through [`super::transport`] and read through
//! [`super::reply`] or [`super::stream`].

use std::time::{Duration, Instant};

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use serde_json::Value;

use super::body::{chat_body, completion_body};
use super::reply::{bound_counts, completion_cap, parse_whole};
use super::transport::{ClientConfig, Sends, after, classify_status, http_builder, redact_url, redirected};
use crate::types::*;

/// An OpenAI-compatible server at a base URL, serving one model.
#[derive(Debug, Clone)]
pub struct Client {
    pub(super) http: reqwest::Client,
    pub(super) base_url: String,
    model: String,
    pub(super) config: ClientConfig,
    /// Tokens in one request's context, where the probe found it: a prompt
    /// counted longer is no count.
    pub(crate) context: Option<u64>,
}

pub(crate) fn millis(since: Instant) -> f64 {
    millis_at(since, Instant::now())
}

/// Milliseconds from `since` to `now`, a clock read already taken.
pub(crate) fn millis_at(since: Instant, now: Instant) -> f64 {
    now.duration_since(since).as_secs_f64() * 1000.0
}

// Sending and reading a body are in `transport`, reading a stream in `stream`.
impl Client {
    /// A client for `base_url` (e.g. `http://127.0.0.1:8080`), naming `model`
    /// in every request.
    pub fn new(base_url: &str, model: &str, config: ClientConfig) -> Result<Self, String> {
        let mut headers = HeaderMap::new();
        if let Some(key) = &config.api_key {
            let mut value = HeaderValue::from_str(&format!("Bearer {}", key.expose()))
                .map_err(|_| "failed to build the HTTP client: the API key is not a valid header value".to_string())?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        // A target's 3xx is never followed: the other server's reply would be
        // recorded as the target's (and a 302 turns the POST into a GET).
        // Idle connections are kept shorter than engines keep them open
        // (cpp-httplib and uvicorn close after 5 s), so few are reused as
        // the server closes them.
        let http = http_builder()
            .connect_timeout(config.timeouts.connect)
            .default_headers(headers)
            .redirect(reqwest::redirect::Policy::none())
            .pool_idle_timeout(Duration::from_secs(3))
            .pool_max_idle_per_host(64)
            .build()
            .map_err(|err| format!("failed to build the HTTP client: {err}"))?;
        // An OpenAI SDK base URL (`http://host:8000/v1`) names the same
        // server as `http://host:8000`: the paths below carry `/v1`.
        let trimmed = base_url.trim_end_matches('/');
        let base_url = trimmed.strip_suffix("/v1").unwrap_or(trimmed).to_string();
        Ok(Client { http, base_url, model: model.to_string(), config, context: None })
    }

    /// The base URL, credentials redacted.
    pub fn base_url(&self) -> String {
        redact_url(&self.base_url)
    }

    /// The model id named in requests.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Whether a reply naming `name` as its model comes from the client's
    /// model: its id or one of its aliases. A gateway's fallback to another
    /// model must never score for this one.
    pub fn serves(&self, name: &str) -> bool {
        name == self.model || self.config.model_aliases.iter().any(|a| a == name)
    }

    /// A reply's `model`, checked: none or empty says nothing; any other
    /// name than the client's model is lost.
    pub(super) fn check_model(&self, name: Option<&str>) -> Result<(), CallError> {
        match name {
            Some(name) if !name.is_empty() && !self.serves(name) => Err(another_model(name)),
            _ => Ok(()),
        }
    }

    /// The limits this client works within.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// `POST /v1/chat/completions`.
    pub async fn chat(&self, req: &ChatRequest) -> Result<Reply, CallError> {
        self.chat_sent(req, Sends::Retrying).await
    }

    /// `POST /v1/chat/completions`, sent as `sends` says.
    pub async fn chat_sent(&self, req: &ChatRequest, sends: Sends) -> Result<Reply, CallError> {
        let body = chat_body(&self.model, req)?;
        self.post("/v1/chat/completions", body, req.stream, Shape::Chat, sends).await.map_err(|err| match err {
            // The probe read /v1/models before any case: a chat path that
            // is not there is the setup's error, not a lost serve.
            CallError::Unanswered { status: status @ (404 | 405), body, attempts } => CallError::Misdirected {
                reason: format!(
                    "POST {}/v1/chat/completions answered HTTP {status} ({body}) where /v1/models answered: is the base URL right?",
                    self.base_url()
                ),
                attempts,
            },
            other => other,
        })
    }

    /// `POST /v1/completions`.
    pub async fn complete(&self, req: &CompletionRequest) -> Result<Reply, CallError> {
        let body = completion_body(&self.model, req)?;
        self.post("/v1/completions", body, req.stream, Shape::Completion, Sends::Retrying).await
    }

    /// `GET` an auxiliary path (a probe, `/metrics`, `/slots`) within the
    /// auxiliary time limit and an 8 MiB cap; 4xx and 5xx are errors.
    pub async fn get_text(&self, path: &str) -> Result<String, CallError> {
        let url = format!("{}{path}", self.base_url);
        let whole = after(Instant::now(), self.config.timeouts.aux);
        let resp = self.http.get(&url).timeout(self.config.timeouts.aux).send().await.map_err(|err| self.lost(err))?;
        let status = resp.status().as_u16();
        if let Some(err) = redirected(&resp) {
            return Err(err);
        }
        if !(200..300).contains(&status) {
            let body = self.error_body(resp, whole).await;
            return Err(classify_status(status, &body).expect_err("a non-2xx status is an error"));
        }
        unrequested_encoding(&resp)?;
        let bytes = self.read_body(resp, 8 << 20, whole).await?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// `POST` a JSON body to a path and return the JSON answer; 4xx is
    /// `Rejected`, 5xx, a dropped connection or non-JSON is lost.
    pub async fn post_json(&self, path: &str, body: &Value) -> Result<Value, CallError> {
        let (resp, attempts, sent) = self.send(path, body, Sends::Retrying).await?;
        self.json_answer(resp, after(sent, self.config.timeouts.request)).await.map_err(|err| err.sent(attempts))
    }

    async fn json_answer(&self, resp: reqwest::Response, whole: Instant) -> Result<Value, CallError> {
        let status = resp.status().as_u16();
        if !(200..300).contains(&status) {
            let body = self.error_body(resp, whole).await;
            return Err(classify_status(status, &body).expect_err("a non-2xx status is an error"));
        }
        unrequested_encoding(&resp)?;
        let bytes = self.read_body(resp, self.config.max_reply_bytes, whole).await?;
        let text = String::from_utf8_lossy(&bytes);
        let value: Value = serde_json::from_str(&text)
            .map_err(|err| CallError::lost(format!("malformed JSON in the response ({err}): {}", clip(&text))))?;
        self.check_model(value.get("model").and_then(Value::as_str))?;
        Ok(value)
    }

    async fn post(
        &self,
        path: &str,
        body: Value,
        stream: bool,
        shape: Shape,
        sends: Sends,
    ) -> Result<Reply, CallError> {
        // Timing starts at the send that was answered, not at the first.
        let (resp, attempts, started) = self.send(path, &body, sends).await?;
        // Whatever becomes of the answer, the call took every send.
        let mut reply = self.answer(resp, started, stream, shape).await.map_err(|err| err.sent(attempts))?;
        bound_counts(&mut reply.usage, completion_cap(&body), self.context);
        reply.attempts = attempts;
        reply.timing.total_ms = millis(started);
        Ok(reply)
    }

    /// The answer to a send: a reply, or why there is none.
    async fn answer(
        &self,
        resp: reqwest::Response,
        started: Instant,
        stream: bool,
        shape: Shape,
    ) -> Result<Reply, CallError> {
        let status = resp.status().as_u16();
        let is_sse = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let whole = after(started, self.config.timeouts.request);
        if !(200..300).contains(&status) {
            let body = self.error_body(resp, whole).await;
            return Err(classify_status(status, &body).expect_err("a non-2xx status is an error"));
        }
        unrequested_encoding(&resp)?;
        let mut reply = if !stream || !is_sse {
            let bytes = self.read_body(resp, self.config.max_reply_bytes, whole).await?;
            let text = String::from_utf8_lossy(&bytes);
            let value: Value = serde_json::from_str(&text)
                .map_err(|err| CallError::lost(format!("malformed JSON in the response ({err}): {}", clip(&text))))?;
            let reply = parse_whole(&value, shape)?;
            self.check_model(reply.model.as_deref())?;
            reply
        } else {
            // Every chunk's model is checked as it arrives.
            self.read_stream(resp, started, shape).await?
        };
        reply.status = status;
        Ok(reply)
    }
}

#[derive(Clone, Copy, PartialEq)]
pub(super) enum Shape {
    Chat,
    Completion,
}

/// A body in a content encoding the client never asked for (it sends no
/// `Accept-Encoding`, so only `identity` may come): unreadable, and lost
/// for what it is, not as a cut stream or bad JSON.
fn unrequested_encoding(resp: &reqwest::Response) -> Result<(), CallError> {
    let Some(value) = resp.headers().get(reqwest::header::CONTENT_ENCODING) else {
        return Ok(());
    };
    let encoding = String::from_utf8_lossy(value.as_bytes()).trim().to_string();
    if encoding.is_empty() || encoding.eq_ignore_ascii_case("identity") {
        return Ok(());
    }
    Err(CallError::lost(format!(
        "protocol break: the server sent its reply in content-encoding {}, which the client did not request",
        clip(&encoding)
    )))
}

/// The reply came from another model than the target's.
pub(super) fn another_model(name: &str) -> CallError {
    CallError::lost(format!("answered by another model: {}", clip(name)))
}

pub(super) fn clip(text: &str) -> String {
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
