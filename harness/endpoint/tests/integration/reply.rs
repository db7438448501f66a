//! What a good reply records: TTFT at the first content chunk, token counts
//! from the server and never from counted chunks.

use std::time::Duration;

use sparktest_endpoint::TokenSource;

use crate::fake_server::{FakeServer, Script, openai};
use crate::{client, ok, request};

#[tokio::test]
async fn ttft_starts_at_the_first_content_chunk_not_the_role_chunk() {
    let script = Script::sse()
        .data(&openai::role())
        .pause(Duration::from_millis(200))
        .data(&openai::content("Hel"))
        .data(&openai::content("lo"))
        .data(&openai::content("!"))
        .data(&openai::finish("stop"))
        .data(&openai::usage(12, 3))
        .done();
    let server = FakeServer::start(script).await;
    let reply = ok(client(&server.url()).chat(&request(true)).await);
    assert_eq!(reply.text, "Hello!");
    let ttft = reply.timing.ttft_ms.expect("a content chunk came");
    assert!(ttft >= 150.0, "ttft {ttft} ms: taken at the role-only chunk");
    assert_eq!(reply.timing.chunk_arrivals_ms.len(), 3, "one arrival per content chunk");
    assert_eq!(reply.timing.chunk_arrivals_ms[0], ttft);
    assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
    // The client asked for the usage chunk.
    let sent = &server.exchanges()[0].request;
    assert!(sent.contains(r#""include_usage":true"#), "{sent}");
}

#[tokio::test]
async fn token_counts_come_from_the_usage_chunk() {
    let script = Script::sse()
        .data(&openai::role())
        .data(&openai::content("one "))
        .data(&openai::content("two "))
        .data(&openai::content("three"))
        .data(&openai::finish("length"))
        .data(&openai::usage(11, 7))
        .done();
    let server = FakeServer::start(script).await;
    let reply = ok(client(&server.url()).chat(&request(true)).await);
    assert_eq!(reply.timing.chunk_arrivals_ms.len(), 3);
    assert_eq!(reply.usage.completion_tokens, Some(7), "counted chunks instead of reading usage");
    assert_eq!(reply.usage.prompt_tokens, Some(11));
    assert_eq!(reply.usage.source, TokenSource::ServerUsage);
}

#[tokio::test]
async fn no_usage_chunk_means_no_counts() {
    let script = Script::sse()
        .data(&openai::role())
        .data(&openai::content("one "))
        .data(&openai::content("two"))
        .data(&openai::finish("stop"))
        .done();
    let server = FakeServer::start(script).await;
    let reply = ok(client(&server.url()).chat(&request(true)).await);
    assert_eq!(reply.usage.completion_tokens, None, "counted chunks instead of saying none");
    assert_eq!(reply.usage.source, TokenSource::None);
}
