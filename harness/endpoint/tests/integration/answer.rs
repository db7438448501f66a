//! Issue 28: who answered and what it counted. A reply (whole, or any
//! stream chunk) naming another model than the target's is lost, unless the
//! target declares the name an alias; counts the request makes impossible
//! are `invalid`.

use serde_json::json;
use sparktest_endpoint::{ClientConfig, TokenSource};

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

#[tokio::test]
async fn a_count_beyond_the_request_s_max_tokens_is_invalid() {
    // 5,000 completion tokens for max_tokens = 16: 35,217 tok/s per
    // request in the report, taken as the server's count.
    let script = Script::sse()
        .data(&openai::content("Hi"))
        .data(&openai::content("!"))
        .data(&openai::finish("length"))
        .data(&openai::usage(12, 5000))
        .done();
    let server = FakeServer::start(script).await;
    let mut req = request(true);
    req.max_tokens = Some(16);
    let reply = ok(client(&server.url()).chat(&req).await);
    assert_eq!(reply.usage.source, TokenSource::Invalid);
    assert_eq!((reply.usage.prompt_tokens, reply.usage.completion_tokens), (Some(12), None));
    assert_eq!(
        reply.usage.invalid.as_deref(),
        Some("completion_tokens = 5000 (more than the request's max_tokens, 16)")
    );
    // The same count within a cap the request allows is the server's.
    let mut req = request(true);
    req.max_tokens = Some(5000);
    let reply = ok(client(&server.url()).chat(&req).await);
    assert_eq!((reply.usage.source, reply.usage.completion_tokens), (TokenSource::ServerUsage, Some(5000)));
    // A whole reply too.
    let body = json!({"model": "fake-model", "choices": [{"message": {"content": "Hi"}, "finish_reason": "length"}], "usage": {"prompt_tokens": 3, "completion_tokens": 17}});
    let server = FakeServer::start(Script::json(200, &body.to_string())).await;
    let mut req = request(false);
    req.max_tokens = Some(16);
    let reply = ok(client(&server.url()).chat(&req).await);
    assert_eq!(reply.usage.source, TokenSource::Invalid);
}

#[tokio::test]
async fn a_prompt_count_beyond_the_server_s_context_is_invalid() {
    // llama.cpp says 4,096 tokens per request; a reply counting 9,000
    // prompt tokens cannot be right.
    let props = json!({"total_slots": 1, "default_generation_settings": {"n_ctx": 4096}, "build_info": "b1"});
    let models = json!({"object": "list", "data": [{"id": "fake-model", "object": "model"}]});
    let script = Script::sse().data(&openai::content("Hi")).data(&openai::finish("stop")).data(&openai::usage(9000, 2));
    let server = FakeServer::routes(vec![
        ("/v1/models", Script::json(200, &models.to_string())),
        ("/props", Script::json(200, &props.to_string())),
        ("/v1/chat/completions", script),
    ])
    .await;
    let endpoint = sparktest_endpoint::Endpoint::connect(client(&server.url()), None).await.unwrap();
    assert_eq!(endpoint.facts().context_per_request, Some(4096));
    let reply = ok(endpoint.chat(&request(true)).await);
    assert_eq!(reply.usage.source, TokenSource::Invalid);
    assert_eq!((reply.usage.prompt_tokens, reply.usage.completion_tokens), (None, Some(2)));
    assert_eq!(reply.usage.invalid.as_deref(), Some("prompt_tokens = 9000 (more than the server's context, 4096)"));
}
