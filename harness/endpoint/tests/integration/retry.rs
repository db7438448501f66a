//! The server asks the client to come back later (429, 408, 503): retried
//! with backoff within the run's budget, `Retry-After` honoured, then lost
//! with the status — never a wrong answer.

use std::sync::Arc;
use std::time::{Duration, Instant};

use sparktest_endpoint::{CallError, ClientConfig, RetryBudget};

use crate::fake_server::{FakeServer, Script, openai};
use crate::{client_config, ok, request};

fn retrying(budget: Duration, attempts: u32) -> ClientConfig {
    ClientConfig {
        timeouts: crate::TIMEOUTS,
        retry: Arc::new(RetryBudget::new(budget, attempts)),
        ..ClientConfig::default()
    }
}

fn answer() -> Script {
    Script::sse().data(&openai::content("ok")).data(&openai::finish("stop")).done()
}

#[tokio::test]
async fn rate_limits_are_retried_and_the_attempts_recorded() {
    for status in [429, 408, 503] {
        let busy = Script::json(status, r#"{"error":"busy"}"#).header("Retry-After", "0");
        let server = FakeServer::sequence(vec![busy.clone(), busy, answer()]).await;
        let reply = ok(client_config(&server.url(), retrying(Duration::from_secs(10), 5)).chat(&request(true)).await);
        assert_eq!((reply.text.as_str(), reply.attempts), ("ok", 3), "status {status}");
        assert_eq!(server.exchanges().len(), 3);
    }
}

#[tokio::test]
async fn retry_after_is_honoured() {
    let busy = Script::json(429, r#"{"error":"slow down"}"#).header("Retry-After", "1");
    let server = FakeServer::sequence(vec![busy, answer()]).await;
    let started = Instant::now();
    let reply = ok(client_config(&server.url(), retrying(Duration::from_secs(10), 5)).chat(&request(true)).await);
    assert_eq!(reply.attempts, 2);
    assert!(started.elapsed() >= Duration::from_millis(950), "waited {:?}", started.elapsed());
}

#[tokio::test]
async fn a_spent_budget_ends_in_a_lost_call_naming_the_status() {
    let busy = Script::json(429, r#"{"error":"quota"}"#).header("Retry-After", "5");
    let server = FakeServer::start(busy).await;
    let started = Instant::now();
    let err = client_config(&server.url(), retrying(Duration::from_secs(1), 5)).chat(&request(true)).await.unwrap_err();
    assert!(matches!(&err, CallError::Unanswered { status: 429, body, .. } if body.contains("retry budget")), "{err}");
    assert!(err.is_lost());
    assert_eq!(err.attempts(), 1, "the wait asked for is more than the budget: one send");
    assert!(started.elapsed() < Duration::from_secs(3), "did not wait past the budget");
    // Out of attempts before the budget.
    let server = FakeServer::start(Script::json(503, "{}").header("Retry-After", "0")).await;
    let err =
        client_config(&server.url(), retrying(Duration::from_secs(60), 3)).chat(&request(false)).await.unwrap_err();
    assert!(
        matches!(&err, CallError::Unanswered { status: 503, body, .. } if body.contains("after 3 attempts")),
        "{err}"
    );
    assert_eq!((err.attempts(), server.exchanges().len()), (3, 3));
}

#[tokio::test]
async fn a_call_lost_after_a_retry_counts_every_send() {
    // Answered on the second send, then cut before its finish reason; or
    // refused cleanly on the second: the call took both sends either way.
    let busy = Script::json(503, r#"{"error":"busy"}"#).header("Retry-After", "0");
    let cut = Script::sse().data(&openai::content("half"));
    let server = FakeServer::sequence(vec![busy.clone(), cut]).await;
    let err =
        client_config(&server.url(), retrying(Duration::from_secs(10), 5)).chat(&request(true)).await.unwrap_err();
    assert!(err.is_lost() && err.reason().contains("finish reason"), "{err}");
    assert_eq!((err.attempts(), server.exchanges().len()), (2, 2));
    let refused = Script::json(400, r#"{"error":"too long"}"#);
    let server = FakeServer::sequence(vec![busy, refused]).await;
    let err =
        client_config(&server.url(), retrying(Duration::from_secs(10), 5)).chat(&request(true)).await.unwrap_err();
    assert!(matches!(&err, CallError::Rejected { status: 400, .. }), "{err}");
    assert_eq!(err.attempts(), 2);
}
