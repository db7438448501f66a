//! The edges of issue 19: keep-alive comments are not progress, a head that
//! never completes has its own limit, `Retry-After` as an HTTP date, a
//! pooled connection the server closed, redirects, an OpenAI SDK base URL
//! ending in `/v1`, and a chat path that is not there.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use sparktest_endpoint::{CallError, ClientConfig, RetryBudget, Timeouts};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::fake_server::{FakeServer, Script, openai};
use crate::{client, client_config, client_with, lost, ok, request};

#[tokio::test]
async fn keep_alive_comments_forever_are_a_stall_not_progress() {
    // A comment every 50 ms for longer than the whole test may take: the
    // idle limit (400 ms) counts from the last event with content.
    let tiny = Timeouts { idle: Duration::from_millis(400), request: Duration::from_secs(30), ..crate::TIMEOUTS };
    let mut script = Script::sse().data(&openai::role()).data(&openai::content("Hel"));
    for _ in 0..400 {
        script = script.pause(Duration::from_millis(50)).keep_alive();
    }
    let server = FakeServer::start(script).await;
    let started = Instant::now();
    let reason = lost(client_with(&server.url(), tiny).chat(&request(true)).await);
    assert!(reason.starts_with("stream stalled: no content for"), "{reason}");
    assert!(reason.contains("keep-alive comments"), "{reason}");
    assert!(started.elapsed() < Duration::from_secs(15), "lost at the idle limit, well before the request limit");
    // Comments between content chunks shorter apart than the limit are fine.
    let mut script = Script::sse().data(&openai::role());
    for _ in 0..6 {
        script = script.keep_alive().pause(Duration::from_millis(150)).data(&openai::content("x"));
    }
    let server = FakeServer::start(script.data(&openai::finish("stop"))).await;
    assert_eq!(ok(client_with(&server.url(), tiny).chat(&request(true)).await).text, "xxxxxx");
}

/// A server that sends the start of a head, then nothing.
async fn half_a_head() -> (String, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = stream.read(&mut buf).await;
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n").await;
                tokio::time::sleep(Duration::from_secs(30)).await;
            });
        }
    });
    (url, task)
}

#[tokio::test]
async fn a_head_that_never_completes_is_lost_at_the_head_limit() {
    let tiny = Timeouts { head: Duration::from_millis(300), request: Duration::from_secs(30), ..crate::TIMEOUTS };
    let (url, task) = half_a_head().await;
    let started = Instant::now();
    let reason = lost(client_with(&url, tiny).chat(&request(true)).await);
    assert!(reason.contains("head-timeout-secs"), "{reason}");
    assert!(started.elapsed() < Duration::from_secs(15), "lost at the head limit, well before the request limit");
    task.abort();
}

fn retrying() -> ClientConfig {
    ClientConfig {
        timeouts: crate::TIMEOUTS,
        retry: Arc::new(RetryBudget::new(Duration::from_secs(20), 5)),
        ..ClientConfig::default()
    }
}

fn http_date(at: SystemTime) -> String {
    // IMF-fixdate from RFC 3339: 2026-01-02T03:04:05Z → Fri, 02 Jan 2026 03:04:05 GMT.
    let stamp = humantime::format_rfc3339_seconds(at).to_string();
    let (date, time) = stamp.trim_end_matches('Z').split_once('T').unwrap();
    let mut d = date.split('-').map(|n| n.parse::<u32>().unwrap());
    let (y, m, day) = (d.next().unwrap(), d.next().unwrap(), d.next().unwrap());
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    // The weekday is read by no parser; any name does.
    format!("Mon, {day:02} {} {y} {time} GMT", MONTHS[m as usize - 1])
}

#[tokio::test]
async fn retry_after_as_an_http_date_is_honoured() {
    // Two seconds from now: the retry waits for it (the backoff alone
    // would resend after 0.5 s).
    let busy = Script::json(503, r#"{"error":"busy"}"#)
        .header("Retry-After", &http_date(SystemTime::now() + Duration::from_secs(2)));
    let answer = Script::sse().data(&openai::content("ok")).data(&openai::finish("stop")).done();
    let server = FakeServer::sequence(vec![busy, answer]).await;
    let started = Instant::now();
    let reply = ok(client_config(&server.url(), retrying()).chat(&request(true)).await);
    assert_eq!(reply.attempts, 2);
    assert!(started.elapsed() >= Duration::from_millis(900), "resent after {:?}", started.elapsed());
    // A date an hour away is longer than a retry waits: not asked again.
    let busy = Script::json(503, r#"{"error":"busy"}"#)
        .header("Retry-After", &http_date(SystemTime::now() + Duration::from_secs(3600)));
    let server = FakeServer::start(busy).await;
    match client_config(&server.url(), retrying()).chat(&request(true)).await {
        Err(CallError::Unanswered { status: 503, body, .. }) => assert!(body.contains("asked to wait"), "{body}"),
        other => panic!("expected 503 unanswered, got {other:?}"),
    }
    assert_eq!(server.exchanges().len(), 1);
}

/// A whole 200 reply of "ok" to the request in `buf`: server-sent events
/// when it asked to stream, else one JSON body.
fn answer_ok(buf: &[u8]) -> String {
    let body = if String::from_utf8_lossy(buf).contains("\"stream\":true") {
        format!("data: {}\n\ndata: {}\n\ndata: [DONE]\n\n", openai::content("ok"), openai::finish("stop"))
    } else {
        r#"{"model":"fake-model","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}"#
            .to_string()
    };
    let kind = if body.starts_with("data:") { "text/event-stream" } else { "application/json" };
    format!("HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\r\n{body}", body.len())
}

/// A keep-alive server that answers the first request on each connection
/// and closes the connection when a second one arrives on it, without a
/// byte of reply: cpp-httplib closing an idle connection just as it is
/// reused.
async fn closes_reused_connections() -> (String, Arc<std::sync::atomic::AtomicUsize>, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let answered = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = answered.clone();
    let task = tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let count = count.clone();
            tokio::spawn(async move {
                let mut served = 0;
                loop {
                    // Read one request (head + Content-Length body).
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    let complete = loop {
                        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                            let len: usize = head
                                .lines()
                                .find_map(|l| l.strip_prefix("content-length:"))
                                .and_then(|n| n.trim().parse().ok())
                                .unwrap_or(0);
                            if buf.len() >= end + 4 + len {
                                break true;
                            }
                        }
                        match stream.read(&mut chunk).await {
                            Ok(0) | Err(_) => break false,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    };
                    if !complete || served == 1 {
                        return; // closed with no byte of a reply
                    }
                    if stream.write_all(answer_ok(&buf).as_bytes()).await.is_err() {
                        return;
                    }
                    served += 1;
                    count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
            });
        }
    });
    (url, answered, task)
}

#[tokio::test]
async fn a_pooled_connection_the_server_read_and_closed_is_lost_not_sent_again() {
    let (url, answered, task) = closes_reused_connections().await;
    let client = client(&url);
    for i in 0..4 {
        // A call on a new connection is answered; the next one reuses it,
        // and the server reads it and closes: lost, sent once. The call
        // after opens a new connection.
        let result = client.chat(&request(false)).await;
        if i % 2 == 0 {
            assert_eq!(ok(result).attempts, 1, "call {i}");
        } else {
            assert!(lost(result).contains("(1 send: not sent again"), "call {i}");
        }
    }
    assert_eq!(answered.load(std::sync::atomic::Ordering::SeqCst), 2);
    task.abort();
}

/// llama.cpp's server closes the connection as a stream ends while it
/// says keep-alive (measured on the reference server): a stream's
/// connection is never reused, so the call after a stream is never written
/// into a closing socket and lost.
#[tokio::test]
async fn a_stream_s_connection_is_not_reused_so_the_call_after_it_is_answered() {
    let (url, answered, task) = closes_reused_connections().await;
    let client = client(&url);
    for i in 0..4 {
        assert_eq!(ok(client.chat(&request(true)).await).attempts, 1, "streamed call {i}");
    }
    assert_eq!(answered.load(std::sync::atomic::Ordering::SeqCst), 4, "each on a connection of its own");
    task.abort();
}

#[tokio::test]
async fn a_refused_connection_is_not_sent_again() {
    let url = crate::fake_server::closed_port_url().await;
    let reason = lost(client(&url).chat(&request(true)).await);
    assert!(reason.starts_with("connection failed"), "{reason}");
}

#[tokio::test]
async fn redirects_are_not_followed_and_name_the_location() {
    for status in [301, 302, 307, 308] {
        let moved = Script::status(status)
            .header("Location", "http://127.0.0.1:9/elsewhere")
            .framing(crate::fake_server::Framing::Length(0));
        let server = FakeServer::start(moved).await;
        match client(&server.url()).chat(&request(true)).await {
            Err(CallError::Misdirected { reason: why, .. }) => {
                assert!(
                    why.contains(&format!("HTTP {status}")) && why.contains("http://127.0.0.1:9/elsewhere"),
                    "{why}"
                )
            }
            other => panic!("expected misdirected, got {other:?}"),
        }
        assert_eq!(server.exchanges().len(), 1, "followed to nowhere else");
    }
}

#[tokio::test]
async fn a_missing_chat_path_is_the_setups_error() {
    for status in [404, 405] {
        let server = FakeServer::start(Script::json(status, r#"{"error":"no such path"}"#)).await;
        match client(&server.url()).chat(&request(true)).await {
            Err(CallError::Misdirected { reason: why, .. }) => {
                assert!(why.contains(&format!("HTTP {status}")) && why.contains("/v1/chat/completions"), "{why}")
            }
            other => panic!("expected misdirected, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_base_url_ending_in_v1_is_the_same_server() {
    let answer = Script::sse().data(&openai::content("ok")).data(&openai::finish("stop")).done();
    let server = FakeServer::start(answer).await;
    for url in [format!("{}/v1", server.url()), format!("{}/v1/", server.url()), server.url()] {
        assert_eq!(ok(client(&url).chat(&request(true)).await).text, "ok", "{url}");
    }
    for x in server.exchanges() {
        assert!(x.request.starts_with("POST /v1/chat/completions "), "{}", x.request.lines().next().unwrap_or(""));
    }
}

/// A keep-alive server like cpp-httplib: it answers every request on a
/// connection and closes a connection that stayed idle for `idle`, on a
/// timer, whatever the client is doing at that moment.
async fn closes_idle_connections(
    idle: Duration,
) -> (String, Arc<std::sync::atomic::AtomicUsize>, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let answered = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = answered.clone();
    let task = tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let count = count.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    // One request (head + Content-Length body); a connection
                    // idle past the limit is closed with no reply.
                    let complete = loop {
                        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                            let len: usize = head
                                .lines()
                                .find_map(|l| l.strip_prefix("content-length:"))
                                .and_then(|n| n.trim().parse().ok())
                                .unwrap_or(0);
                            if buf.len() >= end + 4 + len {
                                buf.drain(..end + 4 + len);
                                break true;
                            }
                        }
                        let read = if buf.is_empty() {
                            match tokio::time::timeout(idle, stream.read(&mut chunk)).await {
                                Ok(r) => r,
                                Err(_) => break false,
                            }
                        } else {
                            stream.read(&mut chunk).await
                        };
                        match read {
                            Ok(0) | Err(_) => break false,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    };
                    if !complete {
                        return;
                    }
                    if stream.write_all(answer_ok(&buf).as_bytes()).await.is_err() {
                        return;
                    }
                    count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
            });
        }
    });
    (url, answered, task)
}

#[tokio::test]
async fn calls_spaced_around_the_servers_idle_close_are_answered_or_lost_never_sent_twice() {
    // Calls spaced just under, at and just over the server's idle limit:
    // some go out on a connection the server is closing. A request hyper
    // takes back unwritten goes again (it never left); one written as the
    // server closed may have been read, so it is lost with one send, never
    // sent again. The server answers every request it reads, so what it
    // answered is exactly what the client counts answered.
    let idle = Duration::from_millis(120);
    let (url, answered, task) = closes_idle_connections(idle).await;
    let client = client(&url);
    let gaps: Vec<u64> = (0..30).map(|i| 116 + (i * 7) % 9).collect();
    let mut answered_here = 0;
    for (i, gap) in gaps.iter().enumerate() {
        match client.chat(&request(true)).await {
            Ok(reply) => {
                assert_eq!(reply.text, "ok", "call {i}");
                assert_eq!(reply.attempts, 1, "call {i}");
                answered_here += 1;
            }
            Err(CallError::Lost { reason, attempts }) => {
                assert_eq!(attempts, 1, "call {i}: {reason}");
                assert!(reason.contains("not sent again"), "call {i}: {reason}");
            }
            Err(other) => panic!("call {i}: {other:?}"),
        }
        tokio::time::sleep(Duration::from_millis(*gap)).await;
    }
    assert_eq!(answered.load(std::sync::atomic::Ordering::SeqCst), answered_here);
    // Well under the idle limit the pooled connection serves every call
    // (after a pause that lets the last one close in plain sight).
    tokio::time::sleep(idle * 3).await;
    let before = answered.load(std::sync::atomic::Ordering::SeqCst);
    for i in 0..5 {
        assert_eq!(ok(client.chat(&request(true)).await).attempts, 1, "short gap {i}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(answered.load(std::sync::atomic::Ordering::SeqCst), before + 5);
    task.abort();
}
