//! Faults in what the body carries: a stream that stops early, JSON that is
//! not JSON, an error event, bytes that are not UTF-8.

use std::time::Duration;

use sparktest_endpoint::CallError;

use crate::fake_server::{FakeServer, Script, openai};
use crate::{client, lost, ok, request};

#[tokio::test]
async fn stream_ending_before_its_finish_reason_is_lost() {
    // Cleanly framed HTTP, but no finish reason and no [DONE].
    let script = Script::sse().data(&openai::role()).data(&openai::content("Hel")).data(&openai::content("lo"));
    let server = FakeServer::start(script).await;
    let reason = lost(client(&server.url()).chat(&request(true)).await);
    assert!(reason.starts_with("stream cut before its finish reason"), "{reason}");
    assert!(reason.contains("after 2 content chunks"), "{reason}");
}

#[tokio::test]
async fn a_stream_cut_inside_a_line_says_so() {
    let script = Script::sse().data(&openai::content("Hel")).bytes("data: {\"choices\":[{\"del");
    let server = FakeServer::start(script).await;
    let reason = lost(client(&server.url()).chat(&request(true)).await);
    assert!(reason.contains("the last line was cut short"), "{reason}");
}

#[tokio::test]
async fn every_optional_part_of_the_protocol_may_be_missing() {
    // No role chunk, no usage chunk, no [DONE]: a finish reason and a clean
    // close complete the stream.
    let script = Script::sse().data(&openai::content("Hi")).data(&openai::finish("stop"));
    let server = FakeServer::start(script).await;
    let reply = ok(client(&server.url()).chat(&request(true)).await);
    assert_eq!((reply.text.as_str(), reply.finish_reason.as_deref()), ("Hi", Some("stop")));
    assert_eq!(reply.usage.completion_tokens, None);
    // Keep-alive comments, and the last event without its blank line.
    let script = Script::sse()
        .keep_alive()
        .data(&openai::role())
        .keep_alive()
        .data(&openai::content("Hi"))
        .bytes(format!("data: {}\n", openai::finish("length")));
    let server = FakeServer::start(script).await;
    let reply = ok(client(&server.url()).chat(&request(true)).await);
    assert_eq!((reply.text.as_str(), reply.finish_reason.as_deref()), ("Hi", Some("length")));
    assert_eq!(reply.timing.chunk_arrivals_ms.len(), 1, "keep-alives are not content");
    // [DONE] alone completes it too (some servers send no finish reason).
    let script = Script::sse().data(&openai::content("Hi")).done();
    let server = FakeServer::start(script).await;
    assert_eq!(ok(client(&server.url()).chat(&request(true)).await).text, "Hi");
}

#[tokio::test]
async fn malformed_json_in_a_whole_body_is_lost() {
    let body = r#"{"choices":[{"message":{"role":"assistant","content":"Hello"}}"#;
    let server = FakeServer::start(Script::json(200, body)).await;
    let reason = lost(client(&server.url()).chat(&request(false)).await);
    assert!(reason.starts_with("malformed JSON in the response"), "{reason}");
    assert!(reason.contains(body), "{reason}");
}

#[tokio::test]
async fn malformed_json_in_a_stream_chunk_is_lost() {
    let broken = r#"{"choices":[{"index":0,"delta":{"content":"lo"}}]"#;
    let script = Script::sse().data(&openai::role()).data(&openai::content("Hel")).data(broken).done();
    let server = FakeServer::start(script).await;
    let reason = lost(client(&server.url()).chat(&request(true)).await);
    assert!(reason.starts_with("malformed JSON in a stream chunk"), "{reason}");
    assert!(reason.contains(broken), "{reason}");
}

#[tokio::test]
async fn error_event_mid_stream_is_lost() {
    // vLLM's shape for an error raised after the stream started: its 5xx
    // code is kept, so the call is unanswered (lost), as that status would
    // be before the stream, and an engine module may read its words.
    let error = r#"{"error":{"object":"error","message":"engine dead: CUDA out of memory","type":"InternalServerError","code":500}}"#;
    let script = Script::sse().data(&openai::role()).data(&openai::content("Hel")).data(error).done();
    let server = FakeServer::start(script).await;
    match client(&server.url()).chat(&request(true)).await {
        Err(CallError::Unanswered { status: 500, body, .. }) => {
            assert!(body.starts_with("the server reported an error mid-stream"), "{body}");
            assert!(body.contains("CUDA out of memory"), "{body}");
        }
        other => panic!("expected no answer (HTTP 500), got {other:?}"),
    }
    // Without a status code it is lost all the same.
    let error = r#"{"error":{"message":"engine dead"}}"#;
    let script = Script::sse().data(&openai::role()).data(&openai::content("Hel")).data(error).done();
    let server = FakeServer::start(script).await;
    let reason = lost(client(&server.url()).chat(&request(true)).await);
    assert!(reason.starts_with("the server reported an error mid-stream"), "{reason}");
}

#[tokio::test]
async fn invalid_utf8_in_a_delta_becomes_a_replacement_character() {
    // A raw 0xFF inside the JSON string of a content delta.
    let mut bad = br#"data: {"choices":[{"index":0,"delta":{"content":"caf"#.to_vec();
    bad.push(0xFF);
    bad.extend_from_slice(b"s\"}}]}\n\n");
    let script = Script::sse()
        .data(&openai::role())
        .data(&openai::content("Un "))
        .bytes(bad)
        .data(&openai::content(" au lait"))
        .data(&openai::finish("stop"))
        .done();
    let server = FakeServer::start(script).await;
    let reply = ok(client(&server.url()).chat(&request(true)).await);
    assert_eq!(reply.text, "Un caf\u{FFFD}s au lait");
    assert_eq!(reply.timing.chunk_arrivals_ms.len(), 3);
}

#[tokio::test]
async fn character_split_across_writes_is_joined() {
    let event = format!("data: {}\n\n", openai::content("日本語"));
    let bytes = event.as_bytes();
    // Cut inside 本 (three bytes): its first byte ends the first write.
    let cut = event.find('本').expect("the character is in the event") + 1;
    let script = Script::sse()
        .data(&openai::role())
        .bytes(&bytes[..cut])
        .pause(Duration::from_millis(30))
        .bytes(&bytes[cut..])
        .data(&openai::content("です"))
        .done();
    let server = FakeServer::start(script).await;
    let reply = ok(client(&server.url()).chat(&request(true)).await);
    assert_eq!(reply.text, "日本語です");
    assert_eq!(reply.timing.chunk_arrivals_ms.len(), 2);
}
