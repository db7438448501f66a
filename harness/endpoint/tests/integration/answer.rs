//! Issue 28: who answered and what it counted. A reply (whole, or any
//! stream chunk) naming another model than the target's is lost, unless the
//! target declares the name an alias; counts the request makes impossible
//! are `invalid`.

use serde_json::json;
use sparktest_endpoint::ClientConfig;

use crate::fake_server::{FakeServer, Script, openai};
use crate::{client, client_config, lost, ok, request};

fn chunk_from(model: &str, content: Option<&str>, finish: Option<&str>) -> String {
    let delta = match content {
        Some(text) => json!({"content": text}),
        None => json!({}),
    };
    json!({"object": "chat.completion.chunk", "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        .to_string()
}

fn whole_from(model: &str) -> String {
    json!({"model": model, "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello"}, "finish_reason": "stop"}]})
        .to_string()
}

#[tokio::test]
async fn a_stream_from_another_model_is_lost() {
    let script = Script::sse()
        .data(&chunk_from("gpt-4o-fallback", Some("Hel"), None))
        .data(&chunk_from("gpt-4o-fallback", Some("lo"), None))
        .data(&chunk_from("gpt-4o-fallback", None, Some("stop")))
        .done();
    let server = FakeServer::start(script).await;
    assert_eq!(lost(client(&server.url()).chat(&request(true)).await), "answered by another model: gpt-4o-fallback");
}

#[tokio::test]
async fn a_fallback_mid_stream_is_lost() {
    // The first chunks are the target's; a later one is not.
    let script = Script::sse()
        .data(&openai::role())
        .data(&openai::content("Hel"))
        .data(&chunk_from("gpt-4o-fallback", Some("lo"), None))
        .data(&openai::finish("stop"))
        .done();
    let server = FakeServer::start(script).await;
    assert_eq!(lost(client(&server.url()).chat(&request(true)).await), "answered by another model: gpt-4o-fallback");
}

#[tokio::test]
async fn a_whole_reply_from_another_model_is_lost() {
    let server = FakeServer::start(Script::json(200, &whole_from("gpt-4o-fallback"))).await;
    assert_eq!(lost(client(&server.url()).chat(&request(false)).await), "answered by another model: gpt-4o-fallback");
    // The target's own name, or none at all, is an answer.
    let server = FakeServer::start(Script::json(200, &whole_from("fake-model"))).await;
    assert_eq!(ok(client(&server.url()).chat(&request(false)).await).text, "Hello");
    let body = r#"{"choices":[{"message":{"content":"Hello"},"finish_reason":"stop"}]}"#;
    let server = FakeServer::start(Script::json(200, body)).await;
    assert_eq!(ok(client(&server.url()).chat(&request(false)).await).text, "Hello");
}

#[tokio::test]
async fn a_declared_alias_is_the_target_s_model() {
    let aliased = || ClientConfig {
        timeouts: crate::TIMEOUTS,
        model_aliases: vec!["fake-model-2026-01".into()],
        ..ClientConfig::default()
    };
    let script = Script::sse()
        .data(&openai::content("Hel"))
        .data(&chunk_from("fake-model-2026-01", Some("lo"), None))
        .data(&chunk_from("fake-model-2026-01", None, Some("stop")))
        .done();
    let server = FakeServer::start(script).await;
    assert_eq!(ok(client_config(&server.url(), aliased()).chat(&request(true)).await).text, "Hello");
    let server = FakeServer::start(Script::json(200, &whole_from("fake-model-2026-01"))).await;
    assert_eq!(ok(client_config(&server.url(), aliased()).chat(&request(false)).await).text, "Hello");
    // Any other name is still another model.
    let server = FakeServer::start(Script::json(200, &whole_from("fake-model-2"))).await;
    assert_eq!(
        lost(client_config(&server.url(), aliased()).chat(&request(false)).await),
        "answered by another model: fake-model-2"
    );
}
