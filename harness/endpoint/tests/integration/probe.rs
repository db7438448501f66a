//! Engine identification by the shape of each probe's answer, and auxiliary
//! signals that degrade to "server did not confirm" instead of spoiling a
//! measurement.

use serde_json::json;
use sparktest_endpoint::{CallError, Endpoint, ProbeError};

use crate::fake_server::{FakeServer, Script, openai};
use crate::{client, request};

fn models() -> Script {
    Script::json(200, &json!({"object": "list", "data": [{"id": "fake-model", "object": "model"}]}).to_string())
}

fn fact<'a>(e: &'a Endpoint, key: &str) -> &'a str {
    e.facts().extra.iter().find(|(k, _)| k == key).map_or("", |(_, v)| v.as_str())
}

#[tokio::test]
async fn an_answer_of_the_wrong_shape_identifies_no_engine() {
    // Every probe path answers 200 with HTML or an unrelated JSON.
    let html = Script::status(200).header("Content-Type", "text/html").bytes("<html>login</html>");
    let server = FakeServer::routes(vec![
        ("/v1/models", models()),
        ("/props", Script::json(200, r#"{"hello":"world"}"#)),
        ("/get_server_info", html.clone()),
        ("/version", Script::json(200, r#"{"choices":[]}"#)),
        ("/api/version", html.clone()),
        ("/metrics", html),
    ])
    .await;
    let e = Endpoint::connect(client(&server.url()), None).await.unwrap();
    assert_eq!(e.engine().name(), "openai-compatible");
    assert!(fact(&e, "engine_evidence").contains("no known engine"), "{:?}", e.facts());
    assert!(fact(&e, "metrics").starts_with("off"), "{:?}", e.facts());
    // The metrics scrape, an auxiliary signal, is unsupported with its reason.
    let err = e.scrape_metrics().await.unwrap_err();
    assert!(matches!(&err, CallError::Unsupported(r) if r.contains("server did not confirm")), "{err}");
}

#[tokio::test]
async fn llama_cpp_is_recognised_by_its_shape_and_says_so() {
    let props = json!({"total_slots": 2, "default_generation_settings": {"n_ctx": 4096}, "build_info": "b1", "modalities": {"vision": false}});
    let slots =
        json!([{"id": 0, "n_ctx": 4096, "is_processing": false}, {"id": 1, "n_ctx": 4096, "is_processing": false}]);
    let server = FakeServer::routes(vec![
        ("/v1/models", models()),
        ("/props", Script::json(200, &props.to_string())),
        ("/slots", Script::json(200, &slots.to_string())),
        ("/metrics", Script::status(501).bytes("metrics off")),
    ])
    .await;
    let e = Endpoint::connect(client(&server.url()), None).await.unwrap();
    assert_eq!(e.engine().name(), "llama.cpp");
    assert_eq!((e.facts().kv_pool_tokens, e.facts().vision), (Some(8192), Some(false)));
    assert!(fact(&e, "engine_evidence").contains("total_slots 2"), "{:?}", e.facts());
    // Metrics off (501) is not applicable, and says why.
    match e.draft_counters().await {
        Err(CallError::Unsupported(why)) => {
            assert_eq!(
                why,
                "metrics are off on this server: the server does not implement this call (HTTP 501: metrics off)"
            )
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_broken_slots_endpoint_never_loses_the_requests() {
    // /slots answers a chat completion; the requests still count.
    let props = json!({"total_slots": 2, "default_generation_settings": {"n_ctx": 4096}});
    let answer = Script::sse().data(&openai::content("ok")).data(&openai::finish("stop"));
    let server = FakeServer::routes(vec![
        ("/v1/models", models()),
        ("/props", Script::json(200, &props.to_string())),
        ("/slots", Script::json(200, r#"{"choices":[{"message":{"content":"hi"}}]}"#)),
        ("/metrics", Script::status(200).bytes("<html></html>")),
        ("/v1/chat/completions", answer),
    ])
    .await;
    let e = Endpoint::connect(client(&server.url()), None).await.unwrap();
    let (results, window) = e.chat_concurrent_observed(&[request(true), request(true)]).await;
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    let window = window.unwrap();
    assert_eq!(window.samples, 0);
    assert!(window.source.contains("did not confirm") || window.source.contains("no reading"), "{window:?}");
}

#[tokio::test]
async fn refused_credentials_at_the_probe_stop_before_any_case() {
    let server = FakeServer::start(Script::json(401, r#"{"error":"missing key"}"#)).await;
    match Endpoint::connect(client(&server.url()), None).await {
        Err(ProbeError::Unauthorized { status: 401, url, .. }) => assert!(url.ends_with("/v1/models")),
        other => panic!("expected Unauthorized, got {other:?}"),
    }
    // A page that is not a model list is not a server.
    let server = FakeServer::start(Script::json(200, r#"{"status":"ok"}"#)).await;
    let err = Endpoint::connect(client(&server.url()), None).await.unwrap_err();
    assert!(err.to_string().contains("no \"data\" list"), "{err}");
}
