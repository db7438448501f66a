//! Huge or hostile replies: a body or one event past its cap is lost as
//! "reply too large", never blamed on the instrument's memory.

use sparktest_endpoint::ClientConfig;

use crate::fake_server::{FakeServer, Script, openai};
use crate::{client_config, lost, ok, request};

fn capped(reply: usize, event: usize) -> ClientConfig {
    ClientConfig {
        timeouts: crate::TIMEOUTS,
        max_reply_bytes: reply,
        max_event_bytes: event,
        ..ClientConfig::default()
    }
}

#[tokio::test]
async fn a_whole_body_past_the_cap_is_lost_as_too_large() {
    let text = "x".repeat(64 * 1024);
    let body = format!(r#"{{"choices":[{{"message":{{"content":"{text}"}},"finish_reason":"stop"}}]}}"#);
    let server = FakeServer::start(Script::json(200, &body)).await;
    let reason = lost(client_config(&server.url(), capped(16 * 1024, 16 * 1024)).chat(&request(false)).await);
    assert!(reason.starts_with("reply too large"), "{reason}");
    // The same body under a larger cap is a reply.
    let reply = ok(client_config(&server.url(), capped(1 << 20, 1 << 20)).chat(&request(false)).await);
    assert_eq!(reply.text.len(), 64 * 1024);
}

#[tokio::test]
async fn one_event_past_its_cap_is_lost_as_too_large() {
    let big = openai::content(&"y".repeat(32 * 1024));
    let script = Script::sse().data(&openai::content("a")).data(&big).data(&openai::finish("stop"));
    let server = FakeServer::start(script).await;
    let reason = lost(client_config(&server.url(), capped(1 << 20, 8 * 1024)).chat(&request(true)).await);
    assert!(reason.starts_with("reply too large") && reason.contains("server-sent event"), "{reason}");
}

#[tokio::test]
async fn an_endless_stream_is_lost_at_the_reply_cap() {
    let mut script = Script::sse();
    for _ in 0..200 {
        script = script.data(&openai::content(&"z".repeat(1024)));
    }
    let server = FakeServer::start(script.data(&openai::finish("stop"))).await;
    let reason = lost(client_config(&server.url(), capped(64 * 1024, 64 * 1024)).chat(&request(true)).await);
    assert!(reason.starts_with("reply too large"), "{reason}");
}

#[tokio::test]
async fn a_large_event_parses_whole_across_many_reads() {
    // One 4 MiB event written in 4 KiB pieces: linear parsing, whole text.
    let text = "w".repeat(4 << 20);
    let event = format!("data: {}\n\n", openai::content(&text));
    let mut script = Script::sse();
    for piece in event.as_bytes().chunks(4096) {
        script = script.bytes(piece.to_vec());
    }
    let server = FakeServer::start(script.data(&openai::finish("stop"))).await;
    let reply = ok(client_config(&server.url(), ClientConfig { timeouts: crate::TIMEOUTS, ..ClientConfig::default() })
        .chat(&request(true))
        .await);
    assert_eq!(reply.text.len(), 4 << 20);
}
