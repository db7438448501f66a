//! The client's own ceiling, measured against a loopback stream with known
//! timing before a run: how many streamed tokens per second this client can
//! take in at all, and how far its arrival times are from the server's write
//! times. A speed result near the ceiling measures the client, not the
//! server. `benches/client.rs` publishes the same figures in more detail
//! (CPU per token, batched writes).

use std::time::{Duration, Instant};

use sparktest_record::ClientCeiling;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::{ChatRequest, Client, ClientConfig, Message, Role};

/// Tokens in one unpaced stream.
const FAST_TOKENS: usize = 4000;
/// Unpaced streams; the best is kept (the ceiling is what the client can do).
const FAST_RUNS: usize = 3;
/// Tokens in the paced stream, their interval, and the wait before the first.
const PACED_TOKENS: usize = 40;
const PACED_ITL: Duration = Duration::from_millis(5);
const PACED_FIRST: Duration = Duration::from_millis(20);
/// A speed result above this share of the ceiling is flagged.
pub const FLAG_MARGIN: f64 = 0.5;

const ROLE: &str = r#"{"choices":[{"index":0,"delta":{"role":"assistant"}}]}"#;
const TOKEN: &str = r#"{"choices":[{"index":0,"delta":{"content":" token"}}]}"#;
const FINISH: &str = r#"{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}"#;

/// Read one HTTP request (headers and a `content-length` body).
async fn read_request(sock: &mut TcpStream) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = sock.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            while buf.len() < end + 4 + length {
                let n = sock.read(&mut chunk).await?;
                if n == 0 {
                    return Err(std::io::ErrorKind::UnexpectedEof.into());
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            return Ok(());
        }
    }
}

/// Serve one streamed reply of `tokens` tokens; returns the write times of
/// each token, in ms after the request was read.
async fn serve_one(
    listener: &TcpListener,
    tokens: usize,
    pace: Option<(Duration, Duration)>,
) -> std::io::Result<Vec<f64>> {
    let (mut sock, _) = listener.accept().await?;
    sock.set_nodelay(true)?;
    read_request(&mut sock).await?;
    let read_at = Instant::now();
    sock.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n").await?;
    sock.write_all(format!("data: {ROLE}\n\n").as_bytes()).await?;
    let event = format!("data: {TOKEN}\n\n");
    let mut writes = Vec::with_capacity(tokens);
    for i in 0..tokens {
        if let Some((first, itl)) = pace {
            tokio::time::sleep_until(tokio::time::Instant::from_std(read_at + first + itl * i as u32)).await;
        }
        sock.write_all(event.as_bytes()).await?;
        writes.push(read_at.elapsed().as_secs_f64() * 1000.0);
    }
    sock.write_all(format!("data: {FINISH}\n\ndata: [DONE]\n\n").as_bytes()).await?;
    sock.shutdown().await?;
    Ok(writes)
}

/// Measure the ceiling. Takes about half a second in a release build.
pub async fn measure() -> Result<ClientCeiling, String> {
    let listener = TcpListener::bind("127.0.0.1:0").await.map_err(|e| format!("failed to bind loopback: {e}"))?;
    let url = format!("http://{}", listener.local_addr().map_err(|e| e.to_string())?);
    let client = Client::new(&url, "loopback", ClientConfig::default())?;
    let mut req = ChatRequest::new(vec![Message::text(Role::User, "Count.")]);
    req.stream = true;

    let mut best: f64 = 0.0;
    for _ in 0..FAST_RUNS {
        let started = Instant::now();
        let (served, reply) = tokio::join!(serve_one(&listener, FAST_TOKENS, None), client.chat(&req));
        let wall = started.elapsed().as_secs_f64();
        served.map_err(|e| format!("loopback server: {e}"))?;
        let reply = reply.map_err(|e| format!("loopback stream: {e}"))?;
        if reply.timing.chunk_arrivals_ms.len() != FAST_TOKENS {
            return Err(format!(
                "loopback stream: {} of {FAST_TOKENS} tokens arrived",
                reply.timing.chunk_arrivals_ms.len()
            ));
        }
        best = best.max(FAST_TOKENS as f64 / wall);
    }

    let (served, reply) =
        tokio::join!(serve_one(&listener, PACED_TOKENS, Some((PACED_FIRST, PACED_ITL))), client.chat(&req));
    let writes = served.map_err(|e| format!("loopback server: {e}"))?;
    let reply = reply.map_err(|e| format!("loopback stream: {e}"))?;
    let arrivals = &reply.timing.chunk_arrivals_ms;
    if arrivals.len() != writes.len() {
        return Err(format!("paced loopback stream: {} of {} tokens arrived", arrivals.len(), writes.len()));
    }
    let errors: Vec<f64> =
        arrivals.windows(2).zip(writes.windows(2)).map(|(a, w)| ((a[1] - a[0]) - (w[1] - w[0])).abs()).collect();
    let itl_error_ms = errors.iter().sum::<f64>() / errors.len().max(1) as f64;
    let ttft = reply.timing.ttft_ms.ok_or("paced loopback stream: no first-token time")?;
    let ttft_error_ms = ttft - writes[0];
    Ok(ClientCeiling {
        max_tok_s: best,
        paced_itl_ms: PACED_ITL.as_secs_f64() * 1000.0,
        itl_error_ms,
        ttft_error_ms,
        flag_margin: FLAG_MARGIN,
    })
}
