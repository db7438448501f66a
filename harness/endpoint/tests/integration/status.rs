//! HTTP status classes: 5xx means no answer, 4xx is a clean refusal.

use sparktest_endpoint::CallError;

use crate::fake_server::{FakeServer, Script};
use crate::{client, request};

#[tokio::test]
async fn http_503_is_unanswered_with_status_and_body() {
    // llama-server while the model loads (no retries in this client).
    let body = r#"{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}"#;
    let server = FakeServer::start(Script::json(503, body)).await;
    let err = client(&server.url()).chat(&request(true)).await.unwrap_err();
    assert!(err.is_lost(), "{err}");
    assert_eq!(err.status(), Some(503));
    assert!(err.reason().starts_with("HTTP 503") && err.reason().contains("Loading model"), "{err}");
}

#[tokio::test]
async fn http_500_mid_request_is_lost_never_rejected() {
    let server = FakeServer::start(Script::json(500, r#"{"error":"boom"}"#)).await;
    let err = client(&server.url()).chat(&request(false)).await.unwrap_err();
    assert!(matches!(err, CallError::Unanswered { status: 500, .. }), "{err}");
}

#[tokio::test]
async fn http_400_context_exceeded_is_rejected_with_body() {
    // llama-server when the prompt does not fit the slot's context.
    let body = r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}}"#;
    let server = FakeServer::start(Script::json(400, body)).await;
    match client(&server.url()).chat(&request(true)).await {
        Err(CallError::Rejected { status, body: kept, .. }) => {
            assert_eq!(status, 400);
            assert_eq!(kept, body);
        }
        other => panic!("expected Rejected, got {other:?}"),
    }
}
