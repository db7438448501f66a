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
async fn concurrent_calls_come_back_in_request_order_each_read_on_its_own() {
    // The first request's answer waits 400 ms before its token, the
    // second's comes at once; the third is refused. Each call is a task
    // of its own (issue 39), and the results still follow the requests.
    let server = FakeServer::respond(std::sync::Arc::new(|req: &str, _| {
        if req.starts_with("GET /v1/models") {
            return models();
        }
        let answer = |pause: u64, text: &str| {
            Script::sse()
                .pause(std::time::Duration::from_millis(pause))
                .data(&openai::content(text))
                .data(&openai::finish("stop"))
                .done()
        };
        if req.contains("first") {
            answer(400, "one")
        } else if req.contains("second") {
            answer(0, "two")
        } else {
            Script::json(400, r#"{"error":"too long"}"#)
        }
    }))
    .await;
    let e = Endpoint::connect(client(&server.url()), None).await.unwrap();
    let ask = |text: &str| {
        let mut req = request(true);
        req.messages = vec![sparktest_endpoint::Message::text(sparktest_endpoint::Role::User, text)];
        req
    };
    let results = e.chat_concurrent(&[ask("first"), ask("second"), ask("third")]).await;
    assert_eq!(results.len(), 3);
    let (one, two) = (results[0].as_ref().unwrap(), results[1].as_ref().unwrap());
    assert_eq!((one.text.as_str(), two.text.as_str()), ("one", "two"), "{results:?}");
    assert!(matches!(results[2], Err(CallError::Rejected { status: 400, .. })), "{:?}", results[2]);
    // Each stream's time is its own: the second's token did not wait for
    // the first's.
    let ttft = |r: &sparktest_endpoint::Reply| r.timing.ttft_ms.unwrap_or(f64::NAN);
    assert!(ttft(one) >= 390.0 && ttft(two) < 300.0, "ttft {} and {}", ttft(one), ttft(two));
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
