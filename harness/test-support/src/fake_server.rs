//! A scripted HTTP/1.1 server on loopback, for the faults a real engine cannot
//! be made to produce on demand: a stream cut mid-body, a reset, a stall,
//! bytes that are not UTF-8, a character split across writes.
//!
//! Every connection reads one request, then plays the same [`Script`]: the
//! status line and headers, the body parts with their pauses, then an
//! [`End`]. Each body part is one `write` (one HTTP chunk when chunked), with
//! `TCP_NODELAY` on, so parts leave as separate segments.
//!
//! Shared by the integration tests and the benches; each uses part.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

/// How long a stalled connection waits for the client to go away.
const STALL_CAP: Duration = Duration::from_secs(10);
/// The largest request read; the client's are a few hundred bytes.
const MAX_REQUEST: usize = 1 << 20;

/// How the body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// `Transfer-Encoding: chunked`; each part is one chunk.
    Chunked,
    /// `Content-Length` as given (may exceed what is sent, to cut a body).
    Length(usize),
    /// Neither: the body ends when the connection closes.
    Eof,
}

/// How the response ends after the last part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The framing's own end (the `0` chunk when chunked), then FIN.
    Finish,
    /// FIN without the framing's end: a body cut short.
    Close,
    /// RST (`SO_LINGER` 0).
    Reset,
    /// Keep the connection open and silent until the client goes away.
    Stall,
}

/// One step of the body.
#[derive(Debug, Clone)]
pub enum Part {
    /// Bytes, sent in one write.
    Bytes(Vec<u8>),
    /// A pause before the next part.
    Pause(Duration),
}

/// What the server answers on every connection.
#[derive(Debug, Clone)]
pub struct Script {
    status: u16,
    headers: Vec<(String, String)>,
    framing: Framing,
    parts: Vec<Part>,
    end: End,
    silent: bool,
}

impl Script {
    /// A bare response with no headers and no body.
    pub fn status(status: u16) -> Self {
        Script {
            status,
            headers: Vec::new(),
            framing: Framing::Chunked,
            parts: Vec::new(),
            end: End::Finish,
            silent: false,
        }
    }

    /// Read the request, then send nothing at all and stall.
    pub fn silent() -> Self {
        Script { silent: true, ..Script::status(200).end(End::Stall) }
    }

    /// Read the request whole, then reset the connection (RST) without a
    /// byte of reply: a server that took the request and died.
    pub fn reset() -> Self {
        Script { silent: true, ..Script::status(200).end(End::Reset) }
    }

    /// Read the request whole, then close the connection (FIN) without a
    /// byte of reply.
    pub fn hang_up() -> Self {
        Script { silent: true, ..Script::status(200).end(End::Close) }
    }

    /// `200 text/event-stream`, chunked: an SSE stream to fill with [`Script::data`].
    pub fn sse() -> Self {
        Script::status(200).header("Content-Type", "text/event-stream")
    }

    /// A whole JSON body with its `Content-Length`.
    pub fn json(status: u16, body: &str) -> Self {
        Script::status(status)
            .header("Content-Type", "application/json")
            .framing(Framing::Length(body.len()))
            .bytes(body)
    }

    /// Add a header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Set the framing.
    pub fn framing(mut self, framing: Framing) -> Self {
        self.framing = framing;
        self
    }

    /// One SSE event: `data: {payload}` and a blank line, in one write.
    pub fn data(self, payload: &str) -> Self {
        self.bytes(format!("data: {payload}\n\n"))
    }

    /// A keep-alive comment line (`: ping`), as some servers send while busy.
    pub fn keep_alive(self) -> Self {
        self.bytes(": ping\n\n")
    }

    /// The stream's last event, `data: [DONE]`.
    pub fn done(self) -> Self {
        self.data("[DONE]")
    }

    /// Raw bytes in one write.
    pub fn bytes(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.parts.push(Part::Bytes(bytes.into()));
        self
    }

    /// Wait before the next part.
    pub fn pause(mut self, pause: Duration) -> Self {
        self.parts.push(Part::Pause(pause));
        self
    }

    /// Set how the response ends.
    pub fn end(mut self, end: End) -> Self {
        self.end = end;
        self
    }

    fn head(&self) -> Vec<u8> {
        let reason = match self.status {
            200 => "OK",
            400 => "Bad Request",
            401 => "Unauthorized",
            403 => "Forbidden",
            408 => "Request Timeout",
            429 => "Too Many Requests",
            404 => "Not Found",
            500 => "Internal Server Error",
            503 => "Service Unavailable",
            _ => "Status",
        };
        let mut head = format!("HTTP/1.1 {} {reason}\r\n", self.status);
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        match self.framing {
            Framing::Chunked => head.push_str("Transfer-Encoding: chunked\r\n"),
            Framing::Length(n) => head.push_str(&format!("Content-Length: {n}\r\n")),
            Framing::Eof => {}
        }
        head.push_str("Connection: close\r\n\r\n");
        head.into_bytes()
    }
}

/// What one connection saw.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// The request as read (head and body).
    pub request: String,
    /// When the whole request had been read.
    pub request_at: Instant,
    /// When each body part's write returned.
    pub writes_at: Vec<Instant>,
}

/// A running fake server; stops when dropped.
pub struct FakeServer {
    addr: SocketAddr,
    exchanges: Arc<Mutex<Vec<Exchange>>>,
    task: JoinHandle<()>,
}

/// Chooses the script for a request: its text (head and body) and how many
/// requests came before it.
pub type Responder = Arc<dyn Fn(&str, usize) -> Script + Send + Sync>;

impl FakeServer {
    /// Listen on `127.0.0.1:0` and answer every connection with `script`.
    /// Must be called inside a tokio runtime; the server runs on it.
    pub async fn start(script: Script) -> FakeServer {
        Self::respond(Arc::new(move |_, _| script.clone())).await
    }

    /// Answer the n-th request with the n-th script, the last one for every
    /// request after.
    pub async fn sequence(scripts: Vec<Script>) -> FakeServer {
        Self::respond(Arc::new(move |_, n| scripts[n.min(scripts.len() - 1)].clone())).await
    }

    /// Answer each request by its request line's path: the first route whose
    /// prefix matches, else 404.
    pub async fn routes(routes: Vec<(&'static str, Script)>) -> FakeServer {
        Self::respond(Arc::new(move |req, _| {
            let path = req.split_whitespace().nth(1).unwrap_or("");
            routes
                .iter()
                .find(|(prefix, _)| path.starts_with(prefix))
                .map_or_else(|| Script::json(404, r#"{"error":"not found"}"#), |(_, s)| s.clone())
        }))
        .await
    }

    /// Answer every request with what `responder` chooses.
    pub async fn respond(responder: Responder) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("failed to bind the fake server");
        let addr = listener.local_addr().expect("failed to read the fake server's address");
        let exchanges = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&exchanges);
        let task = tokio::spawn(async move {
            // Dropping the set (when the task is aborted) aborts every connection.
            let mut conns = JoinSet::new();
            while let Ok((stream, _)) = listener.accept().await {
                conns.spawn(serve(stream, Arc::clone(&responder), Arc::clone(&log)));
                while conns.try_join_next().is_some() {}
            }
        });
        FakeServer { addr, exchanges, task }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The exchanges so far, in the order they finished reading.
    pub fn exchanges(&self) -> Vec<Exchange> {
        self.exchanges.lock().expect("exchange log poisoned").clone()
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A URL on loopback where nothing listens: bound, then released.
pub async fn closed_port_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("failed to bind a probe port");
    let addr = listener.local_addr().expect("failed to read the probe port");
    drop(listener);
    format!("http://{addr}")
}

async fn serve(mut stream: TcpStream, responder: Responder, log: Arc<Mutex<Vec<Exchange>>>) {
    let _ = stream.set_nodelay(true);
    let Some(request) = read_request(&mut stream).await else {
        return;
    };
    let (slot, script) = {
        let mut log = log.lock().expect("exchange log poisoned");
        let script = responder(&request, log.len());
        log.push(Exchange { request, request_at: Instant::now(), writes_at: Vec::new() });
        (log.len() - 1, script)
    };
    if !script.silent && stream.write_all(&script.head()).await.is_err() {
        return;
    }
    let parts = if script.silent { &[][..] } else { &script.parts[..] };
    let mut writes_at = Vec::new();
    for part in parts {
        match part {
            Part::Pause(pause) => tokio::time::sleep(*pause).await,
            Part::Bytes(bytes) => {
                let sent = match script.framing {
                    Framing::Chunked => {
                        let mut framed = format!("{:x}\r\n", bytes.len()).into_bytes();
                        framed.extend_from_slice(bytes);
                        framed.extend_from_slice(b"\r\n");
                        stream.write_all(&framed).await
                    }
                    Framing::Length(_) | Framing::Eof => stream.write_all(bytes).await,
                };
                if sent.is_err() {
                    break;
                }
                writes_at.push(Instant::now());
            }
        }
    }
    log.lock().expect("exchange log poisoned")[slot].writes_at = writes_at;
    match script.end {
        End::Finish => {
            if script.framing == Framing::Chunked {
                let _ = stream.write_all(b"0\r\n\r\n").await;
            }
            let _ = stream.shutdown().await;
        }
        End::Close => {
            let _ = stream.shutdown().await;
        }
        End::Reset => {
            let _ = stream.set_zero_linger();
        }
        End::Stall => {
            let mut sink = [0u8; 1024];
            let _ = tokio::time::timeout(STALL_CAP, async {
                while let Ok(n) = stream.read(&mut sink).await {
                    if n == 0 {
                        break;
                    }
                }
            })
            .await;
        }
    }
}

/// Read one request: the head up to the blank line, then `Content-Length` bytes.
async fn read_request(stream: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos + 4;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 || buf.len() > MAX_REQUEST {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + length {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 || buf.len() > MAX_REQUEST {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// OpenAI chat-completion chunks, as vLLM and llama-server send them.
pub mod openai {
    use serde_json::{Value, json};

    fn chunk(delta: Value, finish_reason: Option<&str>) -> String {
        json!({
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "fake-model",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        })
        .to_string()
    }

    /// The first chunk: the role and no content.
    pub fn role() -> String {
        chunk(json!({"role": "assistant", "content": null}), None)
    }

    /// A chunk carrying `text`.
    pub fn content(text: &str) -> String {
        chunk(json!({"content": text}), None)
    }

    /// The chunk with the finish reason and an empty delta.
    pub fn finish(reason: &str) -> String {
        chunk(json!({}), Some(reason))
    }

    /// The `stream_options.include_usage` chunk: no choices, the counts.
    pub fn usage(prompt_tokens: u32, completion_tokens: u32) -> String {
        json!({
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "fake-model",
            "choices": [],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        })
        .to_string()
    }
}
