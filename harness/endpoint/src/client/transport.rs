//! Transport: limits, retries, credentials, sending, reading a body, and what a status means.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::header::RETRY_AFTER;
use serde_json::Value;

use super::{Client, clip};
use crate::types::*;

/// How long to wait, per call.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    /// To open the connection.
    pub connect: Duration,
    /// For the whole call, from its send to the last byte of its reply.
    pub request: Duration,
    /// The longest silence between two reads of a reply once it has started
    /// (a stalled stream is lost after this, not after `request`). For a
    /// stream, silence is time without an event that carries content,
    /// counted from its first content: keep-alive comments keep the
    /// connection alive, not the call.
    pub idle: Duration,
    /// For a streamed call's response head and its first content together,
    /// from the send (a server whose head or first token never comes is
    /// lost after this, not after `request`): before the first content,
    /// silence and keep-alive comments are alike. A non-streamed call's
    /// head comes with its whole reply: only `request` bounds it.
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
    pub fn remaining(&self) -> Duration {
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
    /// Other names the server may give the client's model in its replies
    /// (a target's `model-aliases`); a reply naming any other model is
    /// lost ("answered by another model: …").
    pub model_aliases: Vec<String>,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            timeouts: Timeouts::default(),
            max_reply_bytes: 64 << 20,
            max_event_bytes: 16 << 20,
            retry: Arc::new(RetryBudget::none()),
            api_key: None,
            model_aliases: Vec::new(),
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

/// What a lost send adds to its reason: how many sends there were, and why
/// the last was not made again. A request whose bytes were written may have
/// been read: it is never sent again. (hyper-util alone resends, and
/// unseen, a request it took back from a pooled connection found closed
/// before any byte of it was written: that request never left.)
fn sends(attempt: u32, err: &reqwest::Error) -> String {
    if attempt > 1 {
        format!(" (after {attempt} sends)")
    } else if err.is_connect() {
        String::new()
    } else {
        " (1 send: not sent again, since the server may have read it)".to_string()
    }
}

/// A reqwest client builder with TLS ready. reqwest is built without a
/// default TLS provider (aws-lc is slow to build); ring is installed here,
/// once per process (a second install is a harmless no-op).
pub fn http_builder() -> reqwest::ClientBuilder {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
}

/// Statuses that ask the client to come back later.
fn retryable(status: u16) -> bool {
    matches!(status, 408 | 429 | 503)
}

/// How often a request may be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sends {
    /// A single call: a 408/429/503 is asked again while the run's retry
    /// budget lasts. A connection that fails after the request was written
    /// is lost, never sent again: the server may have read it.
    #[default]
    Retrying,
    /// A request a schedule owns (open-loop load): sent once, at its
    /// instant. A 429 is a refusal and a 503 or a refused connection no
    /// answer, each recorded as it came (with the server's `Retry-After`
    /// in its words), never asked again inside the schedule. A connection
    /// closed after the request was written is lost, as in
    /// [`Sends::Retrying`].
    Once,
}

impl Client {
    pub(super) fn lost(&self, err: reqwest::Error) -> CallError {
        CallError::lost(lost_reason(err, self.config.timeouts))
    }

    /// One send of the request, its answer as reqwest gives it. A stream's
    /// whole-call limit is kept by its read (`Idle`: reqwest's would poll a
    /// timer per token), so only its response head is timed here, lost
    /// when it does not come in time.
    async fn send_once(
        &self,
        url: &str,
        body: &Value,
        streamed: bool,
        attempt: u32,
    ) -> Result<Result<reqwest::Response, reqwest::Error>, CallError> {
        let timeouts = self.config.timeouts;
        if !streamed {
            return Ok(self.http.post(url).json(body).timeout(timeouts.request).send().await);
        }
        // A stream's connection is not reused: llama.cpp's server closes
        // it as the stream ends while it still says keep-alive, and a
        // request sent on it in that instant is written into a closing
        // socket and lost (it may have been read, so never sent again).
        // One connection per stream, as vLLM's own benchmark client opens.
        let sending = self.http.post(url).header(reqwest::header::CONNECTION, "close").json(body).send();
        match tokio::time::timeout(timeouts.head.min(timeouts.request), sending).await {
            Ok(answer) => Ok(answer),
            Err(_) => {
                let sends = if attempt > 1 { format!(" (after {attempt} sends)") } else { String::new() };
                let reason = if timeouts.request < timeouts.head {
                    format!("{}: no complete response head within request-timeout-secs{sends}", timed_out(timeouts))
                } else {
                    format!(
                        "no complete response head within {:.0} s (head-timeout-secs){sends}",
                        timeouts.head.as_secs_f64()
                    )
                };
                Err(CallError::Lost { reason, attempts: attempt })
            }
        }
    }

    /// Send, coming back later while the server asks to (429, 408, 503)
    /// and the run's retry budget lasts, unless `mode` is [`Sends::Once`].
    /// Returns the response and the number of sends.
    pub(super) async fn send(
        &self,
        path: &str,
        body: &Value,
        mode: Sends,
    ) -> Result<(reqwest::Response, u32, Instant), CallError> {
        let url = format!("{}{path}", self.base_url);
        let retry = &self.config.retry;
        let streamed = body.get("stream").and_then(Value::as_bool).unwrap_or(false);
        let mut attempt = 1;
        loop {
            let sent = Instant::now();
            let resp = match self.send_once(&url, body, streamed, attempt).await? {
                Ok(resp) => resp,
                // Whatever failed once the request was written (a reset, a
                // close, a reused connection the server closed as it went
                // out) may have reached the server: never sent twice.
                Err(err) => {
                    let note = sends(attempt, &err);
                    let why = lost_reason(err, self.config.timeouts);
                    return Err(CallError::Lost { reason: format!("{why}{note}"), attempts: attempt });
                }
            };
            let status = resp.status().as_u16();
            if let Some(err) = redirected(&resp) {
                return Err(err.sent(attempt));
            }
            if !retryable(status) {
                return Ok((resp, attempt, sent));
            }
            let asked = resp.headers().get(RETRY_AFTER).and_then(|v| v.to_str().ok()).and_then(retry_after);
            if mode == Sends::Once {
                let body = self.error_body(resp, after(sent, self.config.timeouts.request)).await;
                let asked = asked.map_or(String::new(), |a| {
                    format!(" (Retry-After: {} s; a scheduled request is not sent again)", a.as_secs())
                });
                return Err(match classify_status(status, &body) {
                    // Too many requests: the server refused this one, cleanly.
                    Err(CallError::Unanswered { status: 429, body, .. }) => {
                        CallError::Rejected { status, body: format!("{body}{asked}"), attempts: 1 }
                    }
                    Err(CallError::Unanswered { status, body, .. }) => {
                        CallError::Unanswered { status, body: format!("{body}{asked}"), attempts: 1 }
                    }
                    other => other.err().unwrap_or_else(|| CallError::lost(format!("HTTP {status}"))),
                });
            }
            let backoff = retry.first_backoff.saturating_mul(1 << (attempt - 1).min(16));
            let wait = asked.unwrap_or(backoff).min(retry.max_backoff);
            // A server that asks for a longer wait than a retry may take is
            // not waited for, rather than asked again too soon.
            let too_long = asked.is_some_and(|a| a > retry.max_backoff);
            if too_long || attempt >= retry.max_attempts || !retry.take(wait) {
                let body = self.error_body(resp, after(sent, self.config.timeouts.request)).await;
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
                        retry.remaining().as_secs_f64()
                    )
                };
                return Err(CallError::Unanswered {
                    status,
                    body: format!("{} ({why})", clip(&body)),
                    attempts: attempt,
                });
            }
            drop(resp);
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    /// An error answer's body, as far as it can be read: its status decides
    /// the class, whatever happens to the body.
    pub(super) async fn error_body(&self, resp: reqwest::Response, whole: Instant) -> String {
        let bytes = self.read_body(resp, 64 << 10, whole).await.unwrap_or_default();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// Read a whole body within `cap` bytes and the idle limit (which starts
    /// at the first byte: a server may send its headers before it has
    /// generated anything), and the whole call's, which ends at `whole`.
    pub(super) async fn read_body(
        &self,
        mut resp: reqwest::Response,
        cap: usize,
        whole: Instant,
    ) -> Result<Vec<u8>, CallError> {
        if resp.content_length().is_some_and(|n| n > cap as u64) {
            return Err(too_large(cap));
        }
        let mut out = Vec::new();
        let mut idle = Idle::body(self.config.timeouts.idle, whole);
        loop {
            let chunk = match idle.next(&mut resp).await {
                None if idle.ran_out() => return Err(ran_out(self.config.timeouts, out.len())),
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
}

/// The idle limit on a body or a stream, and the whole call's limit. A
/// body: before its first byte only the whole call's limit applies (a long
/// prompt's prefill may take minutes); after it, silence longer than the
/// idle limit is a stall. A stream: until its first progress (content, a
/// tool call, a finish, the counts) one deadline applies however the server
/// spends the wait, silent or sending keep-alive comments; after it, the
/// idle limit counts from the last progress. Neither outlasts the whole
/// call's limit (`request`), which this timer keeps for a stream: reqwest's
/// own would poll a second timer per streamed token. One timer serves the
/// whole read: it is re-armed only when it fires early, not once per read,
/// which would cost a timer-wheel insert and removal per streamed token.
pub(super) struct Idle {
    limit: Duration,
    last: tokio::time::Instant,
    /// A stream's deadline for its first progress; `None` for a body.
    first: Option<tokio::time::Instant>,
    /// The whole call's end: the send plus `request`.
    whole: tokio::time::Instant,
    /// Something that counts arrived (a body's byte, a stream's progress).
    counted: bool,
    timer: Pin<Box<tokio::time::Sleep>>,
    /// The read stopped at the whole call's limit, not at a silence.
    ran_out: bool,
}

impl Idle {
    /// For a whole body: every byte counts; `whole` ends the call.
    pub(super) fn body(limit: Duration, whole: Instant) -> Self {
        Idle::new(limit, None, whole)
    }

    /// For a stream: only [`Idle::progress`] counts (a keep-alive comment
    /// is bytes, not progress), and the first must come by `first`.
    pub(super) fn stream(limit: Duration, first: Instant, whole: Instant) -> Self {
        Idle::new(limit, Some(tokio::time::Instant::from_std(first)), whole)
    }

    fn new(limit: Duration, first: Option<tokio::time::Instant>, whole: Instant) -> Self {
        let whole = tokio::time::Instant::from_std(whole);
        let mut idle = Idle {
            limit,
            last: tokio::time::Instant::now(),
            first,
            whole,
            counted: false,
            timer: Box::pin(tokio::time::sleep_until(whole)),
            ran_out: false,
        };
        let at = idle.deadline();
        idle.timer.as_mut().reset(at);
        idle
    }

    /// When the read is lost if nothing more counts by then.
    fn deadline(&self) -> tokio::time::Instant {
        let own = match self.first {
            Some(first) if !self.counted => first,
            None if !self.counted => self.whole,
            _ => self.last.checked_add(self.limit).unwrap_or(self.whole),
        };
        own.min(self.whole)
    }

    /// Something that counts arrived, `at` (the clock read that timed it).
    pub(super) fn progress(&mut self, at: Instant) {
        self.last = tokio::time::Instant::from_std(at);
        if !self.counted {
            self.counted = true;
            // The first-content deadline may lie past the idle one.
            let at = self.deadline();
            self.timer.as_mut().reset(at);
        }
    }

    /// Whether anything that counts has arrived: a stall before it is the
    /// first-content limit's, after it the idle limit's.
    pub(super) fn started(&self) -> bool {
        self.counted
    }

    /// Whether the read stopped at the whole call's limit
    /// (request-timeout-secs) rather than at a silence.
    pub(super) fn ran_out(&self) -> bool {
        self.ran_out
    }

    /// The next chunk of the body; `None` when it stalled or the whole
    /// call's limit passed ([`Idle::ran_out`] says which).
    pub(super) async fn next(&mut self, resp: &mut reqwest::Response) -> Option<reqwest::Result<Option<bytes::Bytes>>> {
        let got = loop {
            tokio::select! {
                biased;
                got = resp.chunk() => break got,
                () = self.timer.as_mut() => {
                    let (at, now) = (self.deadline(), tokio::time::Instant::now());
                    if now >= at {
                        self.ran_out = now >= self.whole;
                        return None;
                    }
                    self.timer.as_mut().reset(at);
                }
            }
        };
        if self.first.is_none() {
            self.last = tokio::time::Instant::now();
            if !self.counted {
                self.counted = true;
                // Until the first byte only the whole call's limit applied.
                let at = self.deadline();
                self.timer.as_mut().reset(at);
            }
        }
        Some(got)
    }
}

/// A 3xx from a target: the setup points at the wrong place (a redirect
/// would measure another server); the run stops naming where it points.
pub(super) fn redirected(resp: &reqwest::Response) -> Option<CallError> {
    let status = resp.status();
    if !status.is_redirection() {
        return None;
    }
    let location = resp.headers().get(reqwest::header::LOCATION).and_then(|v| v.to_str().ok()).unwrap_or("(none)");
    Some(CallError::Misdirected {
        reason: format!(
            "the server answered HTTP {} with Location: {} (redirects are not followed: the other server would be measured as this one)",
            status.as_u16(),
            redact_url(location)
        ),
        attempts: 1,
    })
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

pub(super) fn too_large(cap: usize) -> CallError {
    CallError::lost(format!("reply too large: more than {} bytes (max-reply-mib)", cap))
}

/// `limit` after `from`, or as good as never where a limit from a user's
/// file is too long to add.
pub(super) fn after(from: Instant, limit: Duration) -> Instant {
    from.checked_add(limit).unwrap_or_else(|| from + Duration::from_secs(30 * 365 * 86_400))
}

/// A read stopped at the whole call's limit: lost as a timeout, as
/// reqwest's own limit on a send says.
pub(super) fn ran_out(timeouts: Timeouts, read: usize) -> CallError {
    CallError::lost(format!(
        "{}: the reply was not whole within request-timeout-secs, after {read} bytes",
        timed_out(timeouts)
    ))
}

/// The head of every whole-call timeout's reason, ours or reqwest's.
fn timed_out(timeouts: Timeouts) -> String {
    format!("timed out (connect {:?}, request {:?})", timeouts.connect, timeouts.request)
}

fn stalled(idle: Duration, read: usize) -> CallError {
    CallError::lost(format!(
        "stream stalled: no byte for {:.0} s (idle-timeout-secs) after {read} bytes",
        idle.as_secs_f64()
    ))
}

/// What a failed send or read says of itself: timeout, failed
/// connection, cut body, with its source chain.
fn lost_reason(err: reqwest::Error, timeouts: Timeouts) -> String {
    let what = if err.is_timeout() {
        timed_out(timeouts)
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
    format!("{what}: {detail}")
}

/// A 4xx about the request itself (400 invalid or too long, 413 too
/// large, 422 unprocessable), before a stream or in the middle of one: a
/// clean refusal.
pub(super) fn refusal(status: u16) -> bool {
    matches!(status, 400 | 413 | 422)
}

/// Who is to blame decides: 401/403/407 are the setup's (credentials); a
/// [`refusal`] is clean; 501 says the server does not implement the call
/// (the instrument's N/A); anything else (5xx, 404, 405, 409, a 408/429
/// that outlasted the retries …) is no answer. What each class does to a
/// case is [`CallError::class`]'s; the caller counts the sends.
pub(super) fn classify_status(status: u16, body: &str) -> Result<(), CallError> {
    let body = clip(body);
    match status {
        200..=299 => Ok(()),
        401 | 403 | 407 => Err(CallError::Unauthorized { status, body, attempts: 1 }),
        s if refusal(s) => Err(CallError::Rejected { status, body, attempts: 1 }),
        501 => Err(CallError::Unsupported(format!("the server does not implement this call (HTTP 501: {body})"))),
        _ => Err(CallError::Unanswered { status, body, attempts: 1 }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn credentials_in_urls_are_redacted() {
        assert_eq!(redact_url("http://u:sk-123@h:8000/v1"), "http://[redacted]@h:8000/v1");
        assert_eq!(redact_url("http://h:8000/a@b"), "http://h:8000/a@b");
        assert_eq!(redact_url("http://h:8000"), "http://h:8000");
        assert_eq!(redact_url("https://h/v1?api_key=sk-1&x=2"), "https://h/v1?api_key=[redacted]&x=2");
        assert_eq!(format!("{:?}", Secret::new("sk-123")), "Secret([redacted])");
    }
}
