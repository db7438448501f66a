//! Faults below HTTP: refused, reset, closed mid-body, silent.

use std::time::Duration;

use sparktest_endpoint::Timeouts;

use crate::fake_server::{End, FakeServer, Framing, Script, closed_port_url, openai};
use crate::{client, client_with, lost, request};

#[tokio::test]
async fn refused_connection_is_lost() {
    let url = closed_port_url().await;
    let reason = lost(client(&url).chat(&request(true)).await);
    assert!(reason.starts_with("connection failed"), "{reason}");
    assert!(reason.to_lowercase().contains("refused"), "{reason}");
}

#[tokio::test]
async fn reset_mid_stream_is_lost() {
    let script = Script::sse()
        .data(&openai::role())
        .data(&openai::content("Hel"))
        .pause(Duration::from_millis(50))
        .end(End::Reset);
    let server = FakeServer::start(script).await;
    let reason = lost(client(&server.url()).chat(&request(true)).await);
    assert!(reason.starts_with("response body cut"), "{reason}");
    assert!(reason.to_lowercase().contains("reset"), "{reason}");
}

#[tokio::test]
async fn close_mid_chunked_stream_is_lost() {
    // FIN inside the chunked body: the HTTP framing itself is broken.
    let script = Script::sse().data(&openai::role()).data(&openai::content("Hel")).end(End::Close);
    let server = FakeServer::start(script).await;
    let reason = lost(client(&server.url()).chat(&request(true)).await);
    assert!(reason.starts_with("response body cut"), "{reason}");
}

#[tokio::test]
async fn close_mid_whole_body_is_lost() {
    // Content-Length promises more than is sent before FIN.
    let partial = r#"{"choices":[{"message":{"role":"assistant","content":"Hel"#;
    let script = Script::json(200, partial).framing(Framing::Length(partial.len() + 100)).end(End::Close);
    let server = FakeServer::start(script).await;
    let reason = lost(client(&server.url()).chat(&request(false)).await);
    assert!(reason.starts_with("response body cut"), "{reason}");
}

#[tokio::test]
async fn silent_server_times_out() {
    let tiny = Timeouts { request: Duration::from_millis(300), ..crate::TIMEOUTS };
    // The request is read, then no status line ever comes.
    let server = FakeServer::start(Script::silent()).await;
    let reason = lost(client_with(&server.url(), tiny).chat(&request(true)).await);
    assert!(reason.starts_with("timed out"), "{reason}");
}

#[tokio::test]
async fn stream_stalled_mid_body_is_lost_after_the_idle_limit() {
    // The whole call may take 5 s; a silence of 300 ms is a stall.
    let tiny = Timeouts { idle: Duration::from_millis(300), ..crate::TIMEOUTS };
    let script = Script::sse().data(&openai::role()).data(&openai::content("Hel")).end(End::Stall);
    let server = FakeServer::start(script).await;
    let started = std::time::Instant::now();
    let reason = lost(client_with(&server.url(), tiny).chat(&request(true)).await);
    assert!(reason.starts_with("stream stalled: no byte for 0 s") || reason.starts_with("stream stalled"), "{reason}");
    assert!(started.elapsed() < Duration::from_secs(4), "lost at the idle limit, not the total one");
}

/// A stream of `tokens` "x" tokens, each after a pause of `gap`, then its finish.
fn steady(tokens: usize, gap: Duration) -> Script {
    let mut script = Script::sse().data(&openai::role());
    for _ in 0..tokens {
        script = script.pause(gap).data(&openai::content("x"));
    }
    script.data(&openai::finish("stop"))
}

#[tokio::test]
async fn a_slow_but_steady_stream_is_not_a_stall() {
    // Gaps shorter than the idle limit, a total longer than it.
    let tiny = Timeouts { idle: Duration::from_millis(400), ..crate::TIMEOUTS };
    let server = FakeServer::start(steady(6, Duration::from_millis(150))).await;
    let reply = crate::ok(client_with(&server.url(), tiny).chat(&request(true)).await);
    assert_eq!(reply.text, "xxxxxx");
}

#[tokio::test]
async fn a_steady_stream_past_the_whole_call_limit_times_out() {
    // Progress every 100 ms never trips the idle limit; the whole call's
    // limit (kept by the stream's own read, not reqwest's) still ends it.
    let tiny = Timeouts { request: Duration::from_millis(600), ..crate::TIMEOUTS };
    let server = FakeServer::start(steady(100, Duration::from_millis(100))).await;
    let started = std::time::Instant::now();
    let reason = lost(client_with(&server.url(), tiny).chat(&request(true)).await);
    assert!(reason.starts_with("timed out") && reason.contains("request-timeout-secs"), "{reason}");
    assert!(started.elapsed() < Duration::from_secs(5), "lost at the whole call's limit, not the stream's end");
}

#[tokio::test]
async fn a_streamed_calls_error_body_that_stops_coming_times_out_whole() {
    // A 500's body, promised 100 bytes, stops after 9: its status decides
    // the class, and the whole call's limit ends the read, not the idle one.
    let tiny = Timeouts { request: Duration::from_millis(600), ..crate::TIMEOUTS };
    let script = Script::status(500)
        .header("Content-Type", "application/json")
        .framing(Framing::Length(100))
        .bytes(r#"{"error":"#)
        .end(End::Stall);
    let server = FakeServer::start(script).await;
    let started = std::time::Instant::now();
    let err = client_with(&server.url(), tiny).chat(&request(true)).await.expect_err("a 500 is no reply");
    assert!(matches!(err, sparktest_endpoint::CallError::Unanswered { status: 500, .. }), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(4), "read until the whole call's limit, not the idle one");
}

#[tokio::test]
async fn limits_too_long_to_add_are_never() {
    // A user's file may say any number of seconds: none is a panic.
    let never = Timeouts { request: Duration::MAX, idle: Duration::MAX, head: Duration::MAX, ..crate::TIMEOUTS };
    let script = Script::sse().data(&openai::role()).data(&openai::content("Hi")).data(&openai::finish("stop"));
    let server = FakeServer::start(script).await;
    let reply = crate::ok(client_with(&server.url(), never).chat(&request(true)).await);
    assert_eq!(reply.text, "Hi");
    let body = r#"{"choices":[{"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}]}"#;
    let server = FakeServer::start(Script::json(200, body)).await;
    let reply = crate::ok(client_with(&server.url(), never).chat(&request(false)).await);
    assert_eq!(reply.text, "Hi");
}

#[tokio::test]
async fn a_whole_body_stalled_after_its_first_byte_is_lost_at_the_idle_limit() {
    // Before its first byte only the whole call's limit bounds a body;
    // after it, silence longer than the idle limit is a stall.
    let tiny = Timeouts { idle: Duration::from_millis(300), request: Duration::from_secs(30), ..crate::TIMEOUTS };
    let script = Script::status(200)
        .header("Content-Type", "application/json")
        .framing(Framing::Length(100))
        .bytes(r#"{"choices":"#)
        .end(End::Stall);
    let server = FakeServer::start(script).await;
    let started = std::time::Instant::now();
    let reason = lost(client_with(&server.url(), tiny).chat(&request(false)).await);
    assert!(reason.starts_with("stream stalled: no byte"), "{reason}");
    assert!(started.elapsed() < Duration::from_secs(10), "lost at the idle limit, not the whole call's");
}
