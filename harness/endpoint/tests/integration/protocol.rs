//! Issue 28: protocol breaks are named. Content or another finish reason
//! after a stream's finish reason, and a content encoding the client never
//! asked for, are lost with those words; nothing after the finish is
//! appended.

use serde_json::json;

use crate::fake_server::{FakeServer, Script, openai};
use crate::{client, lost, ok, request};

#[tokio::test]
async fn content_after_the_finish_reason_is_a_protocol_break() {
    let script = Script::sse()
        .data(&openai::content("Hel"))
        .data(&openai::content("lo"))
        .data(&openai::finish("stop"))
        .data(&openai::content(" again"))
        .done();
    let server = FakeServer::start(script).await;
    assert_eq!(
        lost(client(&server.url()).chat(&request(true)).await),
        "protocol break: content after the finish reason"
    );
}

#[tokio::test]
async fn duplicated_chunks_after_the_finish_are_a_break_never_appended() {
    // The last content chunk, with its finish reason, sent twice.
    let last =
        json!({"model": "fake-model", "choices": [{"index": 0, "delta": {"content": "lo"}, "finish_reason": "stop"}]})
            .to_string();
    let script = Script::sse().data(&openai::content("Hel")).data(&last).data(&last).done();
    let server = FakeServer::start(script).await;
    assert_eq!(
        lost(client(&server.url()).chat(&request(true)).await),
        "protocol break: content after the finish reason"
    );
    // A tool call's delta after the finish, through the general path.
    let call = json!({"model": "fake-model", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f", "arguments": "{}"}}]}}]})
        .to_string();
    let script = Script::sse().data(&openai::content("Hi")).data(&openai::finish("stop")).data(&call).done();
    let server = FakeServer::start(script).await;
    assert_eq!(
        lost(client(&server.url()).chat(&request(true)).await),
        "protocol break: content after the finish reason"
    );
}

#[tokio::test]
async fn a_second_finish_reason_is_a_protocol_break() {
    // The reply would silently change from stop to length.
    let script = Script::sse()
        .data(&openai::content("Hi"))
        .data(&openai::finish("stop"))
        .data(&openai::finish("length"))
        .data(&openai::usage(3, 1))
        .done();
    let server = FakeServer::start(script).await;
    assert_eq!(
        lost(client(&server.url()).chat(&request(true)).await),
        "protocol break: a second finish reason (length) after the first (stop)"
    );
    // The same reason again, carrying nothing new (a usage chunk that
    // repeats it), changes nothing: an answer.
    let repeat = json!({"model": "fake-model", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 3, "completion_tokens": 1}})
        .to_string();
    let script = Script::sse().data(&openai::content("Hi")).data(&openai::finish("stop")).data(&repeat).done();
    let server = FakeServer::start(script).await;
    let reply = ok(client(&server.url()).chat(&request(true)).await);
    assert_eq!((reply.text.as_str(), reply.finish_reason.as_deref()), ("Hi", Some("stop")));
    assert_eq!(reply.usage.completion_tokens, Some(1));
}

#[tokio::test]
async fn an_encoding_the_client_did_not_request_is_named() {
    // Gzip's magic bytes and some of a body: the client sends no
    // Accept-Encoding, so it was "stream cut before its finish reason".
    let gzipped: &[u8] =
        &[0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00];
    for stream in [true, false] {
        let script =
            if stream { Script::sse() } else { Script::status(200).header("Content-Type", "application/json") }
                .header("Content-Encoding", "gzip")
                .bytes(gzipped);
        let server = FakeServer::start(script).await;
        let reason = lost(client(&server.url()).chat(&request(stream)).await);
        assert_eq!(
            reason,
            "protocol break: the server sent its reply in content-encoding gzip, which the client did not request",
            "stream {stream}"
        );
    }
    // `identity` is no encoding.
    let script =
        Script::sse().header("Content-Encoding", "identity").data(&openai::content("Hi")).data(&openai::finish("stop"));
    let server = FakeServer::start(script).await;
    assert_eq!(ok(client(&server.url()).chat(&request(true)).await).text, "Hi");
}
