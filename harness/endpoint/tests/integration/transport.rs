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

#[tokio::test]
async fn a_slow_but_steady_stream_is_not_a_stall() {
    // Gaps shorter than the idle limit, a total longer than it.
    let tiny = Timeouts { idle: Duration::from_millis(400), ..crate::TIMEOUTS };
    let mut script = Script::sse().data(&openai::role());
    for _ in 0..6 {
        script = script.pause(Duration::from_millis(150)).data(&openai::content("x"));
    }
    let server = FakeServer::start(script.data(&openai::finish("stop"))).await;
    let reply = crate::ok(client_with(&server.url(), tiny).chat(&request(true)).await);
    assert_eq!(reply.text, "xxxxxx");
}
