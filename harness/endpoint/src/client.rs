//! The OpenAI-compatible HTTP client: chat and completions, streamed or not.
//!
//! Classification is the point of this file. A call ends in a [`Reply`], or
//! in [`CallError::Lost`] (refused or reset connection, timeout, a stall
//! between bytes, a stream cut before its finish reason, a reply over its
//! size cap, a body that is not the JSON the protocol promises), in
//! [`CallError::Unanswered`] (a 5xx, or a 429/408/503 that outlasted the
//! retries), in [`CallError::Unauthorized`] (401/403: the setup's fault) or
//! in [`CallError::Rejected`] (any other 4xx: a clean refusal, with its
//! body).
//!
//! Every limit is explicit ([`ClientConfig`]): the server is untrusted input.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue, RETRY_AFTER};
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
    /// The longest silence between two reads of a reply once it has started
    /// (a stalled stream is lost after this, not after `request`). For a
    /// stream, silence is time without an event that carries content:
    /// keep-alive comments keep the connection alive, not the call.
    pub idle: Duration,
    /// For the response head of a streamed call, from the send (a server
    /// whose head never completes is lost after this, not after `request`).
    /// A non-streamed call's head comes with its whole reply: only
    /// `request` bounds it.
    pub head: Duration,
    /// For one auxiliary read (probes, `/metrics`, `/slots`).
    pub aux: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(10),
            request: Duration::from_secs(600),
            idle: Duration::from_secs(60),
            head: Duration::from_secs(300),
            aux: Duration::from_secs(10),
        }
    }
}

/// Retries of a call the server asked to come back later (HTTP 429, 408,
/// 503), shared by every client of a run: the whole run waits at most
/// `budget` in backoff.
#[derive(Debug)]
pub struct RetryBudget {
    /// Sends per call, the first included.
    pub max_attempts: u32,
    /// First backoff; doubled per attempt unless the server says
    /// `Retry-After`.
    pub first_backoff: Duration,
    /// Longest single wait.
    pub max_backoff: Duration,
    left: Mutex<Duration>,
}

impl RetryBudget {
    /// A budget of `total` waiting for the whole run.
    pub fn new(total: Duration, max_attempts: u32) -> Self {
        RetryBudget {
            max_attempts,
            first_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
            left: Mutex::new(total),
        }
    }

    /// No retries at all.
    pub fn none() -> Self {
        Self::new(Duration::ZERO, 1)
    }

    /// Take `wait` from the budget; false (and nothing taken) if it has less.
    fn take(&self, wait: Duration) -> bool {
        let mut left = self.left.lock().unwrap_or_else(|p| p.into_inner());
        if *left < wait {
            return false;
        }
        *left -= wait;
        true
    }

    /// What is left.
    pub fn left(&self) -> Duration {
        *self.left.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Everything a client needs besides where it goes.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Time limits.
    pub timeouts: Timeouts,
    /// Largest reply body read, in bytes; a larger one is lost ("reply too
    /// large").
    pub max_reply_bytes: usize,
    /// Largest single server-sent event, in bytes.
    pub max_event_bytes: usize,
    /// Shared retry budget.
    pub retry: Arc<RetryBudget>,
    /// Bearer token sent with every request (`api-key-env`).
    pub api_key: Option<Secret>,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            timeouts: Timeouts::default(),
            max_reply_bytes: 64 << 20,
            max_event_bytes: 16 << 20,
            retry: Arc::new(RetryBudget::none()),
            api_key: None,
        }
    }
}

/// A credential: its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wrap a credential.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The credential itself, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

/// A URL with any `user:password@` and any credential-looking query
/// value (`key`, `api_key`, `token`, …) replaced, for records and messages.
pub fn redact_url(url: &str) -> String {
    let url = match url.split_once("://") {
        Some((scheme, rest)) => {
            let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
            match rest[..authority_end].rfind('@') {
                Some(at) => format!("{scheme}://[redacted]@{}", &rest[at + 1..]),
                None => url.to_string(),
            }
        }
        None => url.to_string(),
    };
    let Some((base, query)) = url.split_once('?') else {
        return url;
    };
    let query: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((k, _))
                if ["key", "api_key", "apikey", "api-key", "token", "access_token", "secret", "password"]
                    .contains(&k.to_ascii_lowercase().as_str()) =>
            {
                format!("{k}=[redacted]")
            }
            _ => pair.to_string(),
        })
        .collect();
    format!("{base}?{}", query.join("&"))
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
    /// No pooled connections: the one resend of a request whose reused
    /// connection the server had closed goes out on a fresh one.
    fresh: reqwest::Client,
    base_url: String,
    model: String,
    config: ClientConfig,
}

pub(crate) fn millis(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

/// Keys a request body's `extra-body` may not set: they decide what is
/// measured (the model, the conversation, streaming and its usage chunk).
const RESERVED: &[&str] = &["model", "messages", "prompt", "stream", "stream_options"];

/// Statuses that ask the client to come back later.
fn retryable(status: u16) -> bool {
    matches!(status, 408 | 429 | 503)
}

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
        let build = |pooled: bool| {
            http_builder()
                .connect_timeout(config.timeouts.connect)
                .timeout(config.timeouts.request)
                .default_headers(headers.clone())
                .redirect(reqwest::redirect::Policy::none())
                .pool_idle_timeout(Duration::from_secs(3))
                .pool_max_idle_per_host(if pooled { 64 } else { 0 })
                .build()
                .map_err(|err| format!("failed to build the HTTP client: {err}"))
        };
        let (http, fresh) = (build(true)?, build(false)?);
        // An OpenAI SDK base URL (`http://host:8000/v1`) names the same
        // server as `http://host:8000`: the paths below carry `/v1`.
        let trimmed = base_url.trim_end_matches('/');
        let base_url = trimmed.strip_suffix("/v1").unwrap_or(trimmed).to_string();
        Ok(Client { http, fresh, base_url, model: model.to_string(), config })
    }

    /// The base URL, credentials redacted.
    pub fn base_url(&self) -> String {
        redact_url(&self.base_url)
    }

    /// The model id named in requests.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The limits this client works within.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// `POST /v1/chat/completions`.
    pub async fn chat(&self, req: &ChatRequest) -> Result<Reply, CallError> {
        let body = chat_body(&self.model, req)?;
        self.post("/v1/chat/completions", body, req.stream, Shape::Chat).await.map_err(|err| match err {
            // The probe read /v1/models before any case: a chat path that
            // is not there is the setup's error, not a lost serve.
            CallError::Unanswered { status: status @ (404 | 405), body } => CallError::Misdirected(format!(
                "POST {}/v1/chat/completions answered HTTP {status} ({body}) where /v1/models answered: is the base URL right?",
                self.base_url()
            )),
            other => other,
        })
    }

    /// `POST /v1/completions`.
    pub async fn complete(&self, req: &CompletionRequest) -> Result<Reply, CallError> {
        let body = completion_body(&self.model, req)?;
        self.post("/v1/completions", body, req.stream, Shape::Completion).await
    }

    /// `GET` an auxiliary path (a probe, `/metrics`, `/slots`) within the
    /// auxiliary time limit and an 8 MiB cap; 4xx and 5xx are errors.
    pub async fn get_text(&self, path: &str) -> Result<String, CallError> {
        let url = format!("{}{path}", self.base_url);
        let resp = self.http.get(&url).timeout(self.config.timeouts.aux).send().await.map_err(|err| self.lost(err))?;
        let status = resp.status().as_u16();
        if let Some(err) = redirected(&resp) {
            return Err(err);
        }
        if !(200..300).contains(&status) {
            let body = self.error_body(resp).await;
            return Err(classify_status(status, &body).expect_err("a non-2xx status is an error"));
        }
        let bytes = self.read_body(resp, 8 << 20).await?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// `POST` a JSON body to a path and return the JSON answer; 4xx is
    /// `Rejected`, 5xx, a dropped connection or non-JSON is lost.
    pub async fn post_json(&self, path: &str, body: &Value) -> Result<Value, CallError> {
        let (resp, _, _) = self.send(path, body).await?;
        let status = resp.status().as_u16();
        if !(200..300).contains(&status) {
            let body = self.error_body(resp).await;
            return Err(classify_status(status, &body).expect_err("a non-2xx status is an error"));
        }
        let bytes = self.read_body(resp, self.config.max_reply_bytes).await?;
        let text = String::from_utf8_lossy(&bytes);
        serde_json::from_str(&text)
            .map_err(|err| CallError::Lost(format!("malformed JSON in the response ({err}): {}", clip(&text))))
    }

    fn lost(&self, err: reqwest::Error) -> CallError {
        lost(err, self.config.timeouts)
    }

    /// Send, coming back later while the server asks to (429, 408, 503)
    /// and the run's retry budget lasts. Returns the response and the
    /// number of sends.
    async fn send(&self, path: &str, body: &Value) -> Result<(reqwest::Response, u32, Instant), CallError> {
        let url = format!("{}{path}", self.base_url);
        let retry = &self.config.retry;
        let streamed = body.get("stream").and_then(Value::as_bool).unwrap_or(false);
        let mut attempt = 1;
        let mut resent_fresh = false;
        loop {
            let sent = Instant::now();
            let http = if resent_fresh { &self.fresh } else { &self.http };
            let sending = http.post(&url).json(body).send();
            let answer = if streamed {
                match tokio::time::timeout(self.config.timeouts.head, sending).await {
                    Ok(answer) => answer,
                    Err(_) => {
                        return Err(CallError::Lost(format!(
                            "no complete response head within {:.0} s (head-timeout-secs)",
                            self.config.timeouts.head.as_secs_f64()
                        )));
                    }
                }
            } else {
                sending.await
            };
            let resp = match answer {
                Ok(resp) => resp,
                // A pooled connection the server closed as the request went
                // out (cpp-httplib closes idle ones after 5 s): no byte of a
                // reply came, so the request is sent once more, on a fresh
                // connection. Refused connections and timeouts are not.
                Err(err) if !resent_fresh && !err.is_connect() && !err.is_timeout() => {
                    resent_fresh = true;
                    attempt += 1;
                    continue;
                }
                Err(err) => return Err(self.lost(err)),
            };
            let status = resp.status().as_u16();
            if let Some(err) = redirected(&resp) {
                return Err(err);
            }
            if !retryable(status) {
                return Ok((resp, attempt, sent));
            }
            let asked = resp.headers().get(RETRY_AFTER).and_then(|v| v.to_str().ok()).and_then(retry_after);
            let backoff = retry.first_backoff.saturating_mul(1 << (attempt - 1).min(16));
            let wait = asked.unwrap_or(backoff).min(retry.max_backoff);
            // A server that asks for a longer wait than a retry may take is
            // not waited for, rather than asked again too soon.
            let too_long = asked.is_some_and(|a| a > retry.max_backoff);
            if too_long || attempt >= retry.max_attempts || !retry.take(wait) {
                let body = self.error_body(resp).await;
                let why = if too_long {
                    format!(
                        "the server asked to wait {} s, more than a retry waits ({} s)",
                        asked.unwrap_or_default().as_secs(),
                        retry.max_backoff.as_secs()
                    )
                } else if attempt >= retry.max_attempts {
                    format!("gave up after {attempt} attempts")
                } else {
                    format!(
                        "gave up after {attempt} attempts: the run's retry budget has {:.1} s left",
                        retry.left().as_secs_f64()
                    )
                };
                return Err(CallError::Unanswered { status, body: format!("{} ({why})", clip(&body)) });
            }
            drop(resp);
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    /// An error answer's body, as far as it can be read: its status decides
    /// the class, whatever happens to the body.
    async fn error_body(&self, resp: reqwest::Response) -> String {
        let bytes = self.read_body(resp, 64 << 10).await.unwrap_or_default();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// Read a whole body within `cap` bytes and the idle limit (which starts
    /// at the first byte: a server may send its headers before it has
    /// generated anything).
    async fn read_body(&self, mut resp: reqwest::Response, cap: usize) -> Result<Vec<u8>, CallError> {
        if resp.content_length().is_some_and(|n| n > cap as u64) {
            return Err(too_large(cap));
        }
        let mut out = Vec::new();
        let mut idle = Idle::new(self.config.timeouts.idle);
        loop {
            let chunk = match idle.next(&mut resp).await {
                None => return Err(stalled(self.config.timeouts.idle, out.len())),
                Some(Err(err)) => return Err(self.lost(err)),
                Some(Ok(None)) => return Ok(out),
                Some(Ok(Some(chunk))) => chunk,
            };
            if out.len() + chunk.len() > cap {
                return Err(too_large(cap));
            }
            out.extend_from_slice(&chunk);
        }
    }

    async fn post(&self, path: &str, body: Value, stream: bool, shape: Shape) -> Result<Reply, CallError> {
        // Timing starts at the send that was answered, not at the first.
        let (resp, attempts, started) = self.send(path, &body).await?;
        let status = resp.status().as_u16();
        let is_sse = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !(200..300).contains(&status) {
            let body = self.error_body(resp).await;
            return Err(classify_status(status, &body).expect_err("a non-2xx status is an error"));
        }
        let mut reply = if !stream || !is_sse {
            let bytes = self.read_body(resp, self.config.max_reply_bytes).await?;
            let text = String::from_utf8_lossy(&bytes);
            let value: Value = serde_json::from_str(&text)
                .map_err(|err| CallError::Lost(format!("malformed JSON in the response ({err}): {}", clip(&text))))?;
            parse_whole(&value, shape)?
        } else {
            self.read_stream(resp, started, shape).await?
        };
        reply.status = status;
        reply.attempts = attempts;
        reply.timing.total_ms = millis(started);
        Ok(reply)
    }

    /// Read an SSE reply. It is complete when `[DONE]` arrived, or when its
    /// finish reason arrived and the connection then closed cleanly; the
    /// usage chunk, the `[DONE]` line, a role-only first chunk and
    /// keep-alive comments are each optional. The idle limit counts from
    /// the last event that carried something (content, a tool call, the
    /// finish reason, the counts): comments alone are a stall.
    async fn read_stream(
        &self,
        mut resp: reqwest::Response,
        started: Instant,
        shape: Shape,
    ) -> Result<Reply, CallError> {
        let cfg = &self.config;
        let mut parser = sse::Parser::new(cfg.max_event_bytes);
        let mut acc = StreamAcc::default();
        let mut events = Vec::new();
        let mut read = 0usize;
        let mut done = false;
        let mut idle = Idle::new(cfg.timeouts.idle);
        idle.by_progress = true;
        while !done {
            let chunk = match idle.next(&mut resp).await {
                None => {
                    return Err(CallError::Lost(format!(
                        "stream stalled: no content for {:.0} s (idle-timeout-secs) after {read} bytes, {} content chunks and {} keep-alive comments",
                        cfg.timeouts.idle.as_secs_f64(),
                        acc.arrivals.len(),
                        parser.comments
                    )));
                }
                Some(Err(err)) => return Err(self.lost(err)),
                Some(Ok(None)) => {
                    if parser.finish(&mut events) {
                        acc.cut_line = true;
                    }
                    for event in events.drain(..) {
                        done |= acc.event(&event.data, millis(started), shape)?;
                    }
                    break;
                }
                Some(Ok(Some(chunk))) => chunk,
            };
            let at = millis(started);
            read += chunk.len();
            if read > cfg.max_reply_bytes {
                return Err(too_large(cfg.max_reply_bytes));
            }
            parser.push(&chunk, &mut events).map_err(|err| CallError::Lost(format!("reply too large: {err}")))?;
            let before = acc.progress();
            for event in events.drain(..) {
                if acc.event(&event.data, at, shape)? {
                    done = true;
                    break;
                }
            }
            if acc.progress() != before {
                idle.progress();
            }
        }
        if !done && acc.finish_reason.is_none() {
            return Err(CallError::Lost(format!(
                "stream cut before its finish reason after {} content chunks{}",
                acc.arrivals.len(),
                if acc.cut_line { " (the last line was cut short)" } else { "" }
            )));
        }
        Ok(acc.finish())
    }
}

/// The idle limit on a body. Before the first byte only the total limit
/// applies (a long prompt's prefill may take minutes); after it, silence
/// longer than the idle limit is a stall. One timer serves the whole body:
/// it is re-armed only when it fires early (bytes came since it was set),
/// not once per read, which would cost a timer-wheel insert and removal per
/// streamed token.
struct Idle {
    limit: Duration,
    last: tokio::time::Instant,
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
    /// Bytes do not re-arm it, [`Idle::progress`] does (streams: a
    /// keep-alive comment is bytes, not progress).
    by_progress: bool,
}

impl Idle {
    fn new(limit: Duration) -> Self {
        Idle { limit, last: tokio::time::Instant::now(), timer: None, by_progress: false }
    }

    /// Something that counts arrived.
    fn progress(&mut self) {
        self.last = tokio::time::Instant::now();
    }

    /// The next chunk of the body; `None` when it stalled.
    async fn next(&mut self, resp: &mut reqwest::Response) -> Option<reqwest::Result<Option<bytes::Bytes>>> {
        let Idle { limit, last, timer, by_progress } = self;
        let got = loop {
            let Some(timer) = timer.as_mut() else {
                break resp.chunk().await;
            };
            tokio::select! {
                biased;
                got = resp.chunk() => break got,
                () = timer.as_mut() => {
                    let deadline = *last + *limit;
                    if tokio::time::Instant::now() >= deadline {
                        return None;
                    }
                    timer.as_mut().reset(deadline);
                }
            }
        };
        if timer.is_none() || !*by_progress {
            *last = tokio::time::Instant::now();
        }
        if timer.is_none() {
            *timer = Some(Box::pin(tokio::time::sleep_until(*last + *limit)));
        }
        Some(got)
    }
}

/// A 3xx from a target: the setup points at the wrong place (a redirect
/// would measure another server); the run stops naming where it points.
fn redirected(resp: &reqwest::Response) -> Option<CallError> {
    let status = resp.status();
    if !status.is_redirection() {
        return None;
    }
    let location = resp.headers().get(reqwest::header::LOCATION).and_then(|v| v.to_str().ok()).unwrap_or("(none)");
    Some(CallError::Misdirected(format!(
        "the server answered HTTP {} with Location: {} (redirects are not followed: the other server would be measured as this one)",
        status.as_u16(),
        redact_url(location)
    )))
}

/// A `Retry-After` value: seconds, or an HTTP date (RFC 9110 §10.2.3;
/// IMF-fixdate, RFC 850 or asctime), as the wait from now (zero when past).
fn retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = http_date(value)?;
    Some(at.duration_since(std::time::SystemTime::now()).unwrap_or(Duration::ZERO))
}

fn http_date(value: &str) -> Option<std::time::SystemTime> {
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let month = |m: &str| MONTHS.iter().position(|x| x.eq_ignore_ascii_case(m)).map(|i| i + 1);
    let parts: Vec<&str> = value.split([' ', ',']).filter(|p| !p.is_empty()).collect();
    let (day, mon, year, time) = match parts[..] {
        // Sun, 06 Nov 1994 08:49:37 GMT
        [_, day, mon, year, time, "GMT"] => (day.parse::<u32>().ok()?, month(mon)?, year.parse::<u32>().ok()?, time),
        // Sunday, 06-Nov-94 08:49:37 GMT
        [_, date, time, "GMT"] => {
            let mut d = date.split('-');
            let (day, mon, yy) = (d.next()?.parse::<u32>().ok()?, month(d.next()?)?, d.next()?.parse::<u32>().ok()?);
            (day, mon, if yy < 70 { 2000 + yy } else { 1900 + yy }, time)
        }
        // Sun Nov  6 08:49:37 1994
        [_, mon, day, time, year] => (day.parse::<u32>().ok()?, month(mon)?, year.parse::<u32>().ok()?, time),
        _ => return None,
    };
    let stamp = format!("{year:04}-{mon:02}-{day:02}T{time}Z");
    humantime::parse_rfc3339(&stamp).ok()
}

fn too_large(cap: usize) -> CallError {
    CallError::Lost(format!("reply too large: more than {} bytes (max-reply-mib)", cap))
}

fn stalled(idle: Duration, read: usize) -> CallError {
    CallError::Lost(format!(
        "stream stalled: no byte for {:.0} s (idle-timeout-secs) after {read} bytes",
        idle.as_secs_f64()
    ))
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

fn lost(err: reqwest::Error, timeouts: Timeouts) -> CallError {
    let what = if err.is_timeout() {
        format!("timed out (connect {:?}, request {:?})", timeouts.connect, timeouts.request)
    } else if err.is_connect() {
        "connection failed".to_string()
    } else if err.is_body() || err.is_decode() {
        "response body cut".to_string()
    } else {
        "request failed".to_string()
    };
    // The source chain says refused vs reset. The URL stays out: it may
    // carry credentials, and the caller knows where it sent the request.
    let err = err.without_url();
    let mut detail = err.to_string();
    let mut source = std::error::Error::source(&err);
    while let Some(s) = source {
        detail.push_str(": ");
        detail.push_str(&s.to_string());
        source = s.source();
    }
    CallError::Lost(format!("{what}: {detail}"))
}

/// Who is to blame decides: 401/403/407 are the setup's (credentials); a
/// 4xx about the request itself (400 invalid or too long, 413 too large,
/// 422 unprocessable) is a clean refusal; 501 says the server does not
/// implement the call (the instrument's N/A); anything else (5xx, 404, 405,
/// 409, a 408/429 that outlasted the retries …) is no answer.
fn classify_status(status: u16, body: &str) -> Result<(), CallError> {
    match status {
        200..=299 => Ok(()),
        401 | 403 | 407 => Err(CallError::Unauthorized { status, body: clip(body) }),
        400 | 413 | 422 => Err(CallError::Rejected { status, body: clip(body) }),
        501 => {
            Err(CallError::Unsupported(format!("the server does not implement this call (HTTP 501: {})", clip(body))))
        }
        _ => Err(CallError::Unanswered { status, body: clip(body) }),
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

/// Reads counts, noting every one that is present but not a count.
#[derive(Default)]
struct Counts(Vec<String>);

impl Counts {
    /// A count: a non-negative integer within u32 (no reply has more
    /// tokens). `null` or absent is no count; anything else is invalid.
    fn read(&mut self, name: &str, v: Option<&Value>) -> Option<u32> {
        match v {
            None | Some(Value::Null) => None,
            Some(v) => {
                let n = v.as_u64().and_then(|n| u32::try_from(n).ok());
                if n.is_none() {
                    self.0.push(format!("{name} = {}", clip(&v.to_string())));
                }
                n
            }
        }
    }

    fn finish(self, mut usage: Usage) -> Usage {
        if !self.0.is_empty() {
            usage.source = TokenSource::Invalid;
            usage.invalid = Some(self.0.join(", "));
        }
        usage
    }
}

/// Token counts: `usage` when present, else llama.cpp `timings`. A count
/// that is not one (-5, 1e300, "8", 10^12) is recorded as invalid, with
/// its value: never read as a count, never silently dropped.
fn usage_of(value: &Value) -> Option<Usage> {
    let mut c = Counts::default();
    if let Some(u) = value.get("usage").filter(|u| u.is_object()) {
        let usage = Usage {
            prompt_tokens: c.read("prompt_tokens", u.get("prompt_tokens")),
            completion_tokens: c.read("completion_tokens", u.get("completion_tokens")),
            cached_tokens: c.read("cached_tokens", u.pointer("/prompt_tokens_details/cached_tokens")),
            source: TokenSource::ServerUsage,
            invalid: None,
        };
        return Some(c.finish(usage));
    }
    let t = value.get("timings").filter(|t| t.is_object())?;
    let cache = c.read("timings.cache_n", t.get("cache_n"));
    let usage = Usage {
        prompt_tokens: c.read("timings.prompt_n", t.get("prompt_n")).map(|n| n.saturating_add(cache.unwrap_or(0))),
        completion_tokens: c.read("timings.predicted_n", t.get("predicted_n")),
        cached_tokens: cache,
        source: TokenSource::ServerTimings,
        invalid: None,
    };
    Some(c.finish(usage))
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
            // llama.cpp and older vLLM say `reasoning_content`; newer vLLM
            // and Ollama `reasoning`.
            reply.reasoning = str_of(message.get("reasoning_content")).or_else(|| str_of(message.get("reasoning")));
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
    /// Tool calls by their delta index, and where each index sits.
    calls: Vec<(u64, ToolCall)>,
    call_slots: std::collections::HashMap<u64, usize>,
    finish_reason: Option<String>,
    model: Option<String>,
    usage: Option<Usage>,
    timing: Timing,
    arrivals: Vec<f64>,
    /// The stream ended inside a line.
    cut_line: bool,
    /// The stream named more tool calls than [`MAX_TOOL_CALLS`].
    too_many_calls: bool,
}

/// More tool calls in one reply than any agent makes: a hostile stream.
const MAX_TOOL_CALLS: usize = 1024;

/// A stream chunk as most are: text, and maybe the finish reason. Anything
/// else present (usage, timings, tool calls, an error) sends the chunk down
/// the general path.
#[derive(serde::Deserialize)]
struct FastChunk<'a> {
    #[serde(borrow, default)]
    model: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    choices: Vec<FastChoice<'a>>,
    #[serde(default)]
    usage: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    timings: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    error: Option<serde::de::IgnoredAny>,
}

#[derive(serde::Deserialize)]
struct FastChoice<'a> {
    #[serde(borrow, default)]
    delta: Option<FastDelta<'a>>,
    #[serde(borrow, default)]
    text: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    finish_reason: Option<std::borrow::Cow<'a, str>>,
}

#[derive(serde::Deserialize)]
struct FastDelta<'a> {
    #[serde(borrow, default)]
    content: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    reasoning_content: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    reasoning: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    tool_calls: Option<serde::de::IgnoredAny>,
}

impl FastChunk<'_> {
    fn plain(&self) -> bool {
        self.usage.is_none()
            && self.timings.is_none()
            && self.error.is_none()
            && self.choices.iter().all(|c| c.delta.as_ref().is_none_or(|d| d.tool_calls.is_none()))
    }
}

impl StreamAcc {
    /// A figure that grows with everything a stream can carry: what the
    /// idle limit counts as progress.
    fn progress(&self) -> (usize, usize, usize, bool, bool) {
        (
            self.arrivals.len(),
            self.calls.iter().map(|(_, c)| c.arguments.len() + c.name.len()).sum(),
            self.reasoning.as_ref().map_or(0, String::len),
            self.finish_reason.is_some(),
            self.usage.is_some(),
        )
    }

    /// Take one event's data; true when it was the `[DONE]` sentinel.
    fn event(&mut self, data: &str, at: f64, shape: Shape) -> Result<bool, CallError> {
        let data = data.trim();
        if data == "[DONE]" {
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        // Most chunks carry a few characters of text and nothing else: read
        // those into borrowed fields without building a JSON tree.
        if let Ok(fast) = serde_json::from_str::<FastChunk<'_>>(data)
            && fast.plain()
        {
            self.fast(fast, at, shape);
            return Ok(false);
        }
        let value: Value = serde_json::from_str(data)
            .map_err(|err| CallError::Lost(format!("malformed JSON in a stream chunk ({err}): {}", clip(data))))?;
        if let Some(err) = value.get("error").filter(|e| !e.is_null()) {
            // vLLM reports some request errors after the stream started,
            // with their HTTP code: a 4xx there is still a clean refusal.
            let code = err.get("code").and_then(Value::as_u64).and_then(|c| u16::try_from(c).ok());
            if let Some(status @ (400 | 413 | 422)) = code {
                return Err(CallError::Rejected { status, body: clip(&err.to_string()) });
            }
            // A 5xx said mid-stream (llama.cpp: a tool call its template
            // could not parse) is the same answer as that status before the
            // stream: no answer, unless the engine reads it otherwise.
            if let Some(status @ 500..=599) = code {
                return Err(CallError::Unanswered {
                    status,
                    body: format!("the server reported an error mid-stream: {}", clip(&err.to_string())),
                });
            }
            return Err(CallError::Lost(format!(
                "the server reported an error mid-stream: {}",
                clip(&err.to_string())
            )));
        }
        self.chunk(&value, at, shape);
        if self.too_many_calls {
            return Err(CallError::Lost(format!("reply too large: more than {MAX_TOOL_CALLS} tool calls")));
        }
        Ok(false)
    }

    /// The same as [`StreamAcc::chunk`] for a plain chunk.
    fn fast(&mut self, f: FastChunk<'_>, at: f64, shape: Shape) {
        if self.model.is_none() {
            self.model = f.model.map(|m| m.into_owned());
        }
        let Some(choice) = f.choices.into_iter().next() else {
            return;
        };
        if let Some(reason) = choice.finish_reason {
            self.finish_reason = Some(reason.into_owned());
        }
        let mut carries = false;
        match shape {
            Shape::Chat => {
                let Some(delta) = choice.delta else { return };
                if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                    self.text.push_str(&text);
                    carries = true;
                }
                if let Some(text) = delta.reasoning_content.or(delta.reasoning).filter(|t| !t.is_empty()) {
                    self.reasoning.get_or_insert_with(String::new).push_str(&text);
                    carries = true;
                }
            }
            Shape::Completion => {
                if let Some(text) = choice.text.filter(|t| !t.is_empty()) {
                    self.text.push_str(&text);
                    carries = true;
                }
            }
        }
        if carries {
            self.arrivals.push(at);
        }
    }

    fn chunk(&mut self, value: &Value, at: f64, shape: Shape) {
        if self.model.is_none() {
            self.model = str_of(value.get("model"));
        }
        if let Some(usage) = usage_of(value) {
            // The usage chunk comes last; a later one replaces an earlier one.
            self.usage = Some(usage);
        }
        server_timings(value, &mut self.timing);
        let Some(choice) = value.pointer("/choices/0") else {
            return;
        };
        if let Some(reason) = str_of(choice.get("finish_reason")) {
            self.finish_reason = Some(reason);
        }
        let mut carries = false;
        match shape {
            Shape::Chat => {
                let Some(delta) = choice.get("delta") else {
                    return;
                };
                if let Some(text) = delta.get("content").and_then(Value::as_str).filter(|t| !t.is_empty()) {
                    self.text.push_str(text);
                    carries = true;
                }
                let reasoning = delta.get("reasoning_content").or_else(|| delta.get("reasoning"));
                if let Some(text) = reasoning.and_then(Value::as_str).filter(|t| !t.is_empty()) {
                    self.reasoning.get_or_insert_with(String::new).push_str(text);
                    carries = true;
                }
                if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                    for (pos, c) in calls.iter().enumerate() {
                        carries = true;
                        let index = c.get("index").and_then(Value::as_u64).unwrap_or(pos as u64);
                        let slot = match self.call_slots.get(&index) {
                            Some(slot) => *slot,
                            None if self.calls.len() >= MAX_TOOL_CALLS => {
                                self.too_many_calls = true;
                                continue;
                            }
                            None => {
                                self.calls.push((
                                    index,
                                    ToolCall { id: String::new(), name: String::new(), arguments: String::new() },
                                ));
                                self.call_slots.insert(index, self.calls.len() - 1);
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
        // Decode time is first to last content chunk: one chunk has none
        // (not a decode of 0 ms, which would make a rate infinite).
        timing.decode_ms = match self.arrivals.as_slice() {
            [first, .., last] => Some(last - first),
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
            attempts: 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The typed fast path reads a plain chunk exactly as the JSON-tree path
    /// does, and leaves every other chunk to it.
    #[test]
    fn fast_path_matches_general_path() {
        let chunks = [
            r#"{"id":"x","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}]}"#,
            r#"{"model":"m","choices":[{"index":0,"delta":{"content":"Hi \"you\" \u00e9"},"finish_reason":null}]}"#,
            r#"{"model":"m","choices":[{"index":0,"delta":{"reasoning_content":"hm"}}]}"#,
            r#"{"model":"m","choices":[{"index":0,"delta":{"reasoning":" ok"}}]}"#,
            r#"{"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{}"}}]}}]}"#,
            r#"{"model":"m","choices":[{"index":0,"delta":{"content":"!"},"finish_reason":"stop"}],"error":null}"#,
            r#"{"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2},"timings":{"prompt_ms":1.5,"predicted_ms":2.5}}"#,
            r#"{"model":7,"choices":[{"delta":{"content":"odd model"}}]}"#,
        ];
        let mut fast = StreamAcc::default();
        let mut tree = StreamAcc::default();
        for (i, data) in chunks.iter().enumerate() {
            assert!(!fast.event(data, i as f64, Shape::Chat).expect("chunk"));
            tree.chunk(&serde_json::from_str(data).expect("json"), i as f64, Shape::Chat);
        }
        let (fast, tree) = (fast.finish(), tree.finish());
        assert_eq!(fast.text, tree.text);
        assert_eq!(fast.text, "Hi \"you\" \u{e9}!odd model");
        assert_eq!(fast.reasoning, tree.reasoning);
        assert_eq!(fast.reasoning.as_deref(), Some("hm ok"), "both spellings of the reasoning field");
        assert_eq!(fast.tool_calls, tree.tool_calls);
        assert_eq!(fast.tool_calls.len(), 1);
        assert_eq!(fast.finish_reason, tree.finish_reason);
        assert_eq!(fast.model, tree.model);
        assert_eq!(fast.usage, tree.usage);
        assert_eq!(fast.usage.completion_tokens, Some(2));
        assert_eq!(fast.timing.server_decode_ms, Some(2.5));
        assert_eq!(fast.timing.chunk_arrivals_ms, tree.timing.chunk_arrivals_ms);
        // A chunk that is an error is never taken as plain text.
        let mut acc = StreamAcc::default();
        assert!(acc.event(r#"{"error":{"message":"boom"},"choices":[]}"#, 0.0, Shape::Chat).is_err());
        // llama.cpp's own words for a tool call it could not parse, after
        // the tool-call deltas of a 200 stream: the status it names.
        let peg = r#"{"error":{"code":500,"message":"The model produced output that does not match the expected peg-native format","type":"server_error"}}"#;
        match StreamAcc::default().event(peg, 0.0, Shape::Chat) {
            Err(CallError::Unanswered { status: 500, body }) => assert!(body.contains("peg-native"), "{body}"),
            other => panic!("{other:?}"),
        }
    }

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
        acc.chunk(
            &json!({"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ty\":\"Oslo\"}"}}]}}]}),
            3.0,
            Shape::Chat,
        );
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
    fn counts_that_are_not_counts_are_recorded_as_invalid() {
        for bad in [json!(-5), json!(1_000_000_000_000u64), json!(1e300), json!("8"), json!(3.5)] {
            let u = usage_of(&json!({"usage": {"prompt_tokens": 4, "completion_tokens": bad}})).unwrap();
            assert_eq!(u.source, TokenSource::Invalid, "{bad}");
            assert_eq!(u.completion_tokens, None);
            assert_eq!(u.prompt_tokens, Some(4), "a valid count stays");
            assert_eq!(u.invalid.as_deref(), Some(format!("completion_tokens = {bad}").as_str()));
        }
        let u = usage_of(&json!({"usage": {"prompt_tokens": 4, "completion_tokens": null}})).unwrap();
        assert_eq!((u.source, u.invalid), (TokenSource::ServerUsage, None), "null is no count, not a wrong one");
        let u = usage_of(&json!({"timings": {"prompt_n": 1, "predicted_n": -1}})).unwrap();
        assert_eq!(u.source, TokenSource::Invalid);
        assert!(u.invalid.unwrap().contains("timings.predicted_n = -1"));
    }

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        assert_eq!(retry_after(" 7 "), Some(Duration::from_secs(7)));
        assert_eq!(retry_after("Sun, 06 Nov 1994 08:49:37 GMT"), Some(Duration::ZERO), "a past date: now");
        assert_eq!(retry_after("Sunday, 06-Nov-94 08:49:37 GMT"), Some(Duration::ZERO));
        assert_eq!(retry_after("Sun Nov  6 08:49:37 1994"), Some(Duration::ZERO));
        let future = retry_after("Fri, 01 Jan 2100 00:00:00 GMT").unwrap();
        assert!(future > Duration::from_secs(365 * 24 * 3600), "{future:?}");
        assert_eq!(retry_after("soon"), None);
        assert_eq!(http_date("Sun, 06 Nov 1994 08:49:37 GMT"), humantime::parse_rfc3339("1994-11-06T08:49:37Z").ok());
    }

    #[test]
    fn status_classes() {
        assert!(classify_status(200, "").is_ok());
        assert!(matches!(classify_status(400, "too long"), Err(CallError::Rejected { status: 400, .. })));
        assert!(matches!(classify_status(503, "busy"), Err(CallError::Unanswered { status: 503, .. })));
        assert!(matches!(classify_status(401, "no"), Err(CallError::Unauthorized { status: 401, .. })));
        assert!(matches!(classify_status(403, "no"), Err(CallError::Unauthorized { status: 403, .. })));
        assert!(matches!(classify_status(407, "proxy"), Err(CallError::Unauthorized { status: 407, .. })));
        assert!(matches!(classify_status(413, "big"), Err(CallError::Rejected { status: 413, .. })));
        // Not about the request: no answer.
        assert!(matches!(classify_status(501, "nope"), Err(CallError::Unsupported(_))));
        for s in [404, 405, 409, 425] {
            assert!(matches!(classify_status(s, ""), Err(CallError::Unanswered { .. })), "{s}");
        }
    }

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
    fn credentials_in_urls_are_redacted() {
        assert_eq!(redact_url("http://u:sk-123@h:8000/v1"), "http://[redacted]@h:8000/v1");
        assert_eq!(redact_url("http://h:8000/a@b"), "http://h:8000/a@b");
        assert_eq!(redact_url("http://h:8000"), "http://h:8000");
        assert_eq!(redact_url("https://h/v1?api_key=sk-1&x=2"), "https://h/v1?api_key=[redacted]&x=2");
        assert_eq!(format!("{:?}", Secret::new("sk-123")), "Secret([redacted])");
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
