//! Open-loop load against the loopback fake: the schedule kept by seed,
//! the lag recorded, a closed loop held to its slots, lost requests kept
//! in their place, and a schedule the client could not hold said to be
//! the client's.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use sparktest_endpoint::{Arrival, CallError, Endpoint, LoadPlan, LoadResult, schedule};

use crate::fake_server::{FakeServer, Script, openai};
use crate::{client, request};

fn models() -> Script {
    Script::json(200, &json!({"object": "list", "data": [{"id": "fake-model", "object": "model"}]}).to_string())
}

/// A streamed answer that takes `hold` before its first token.
fn answer(hold: Duration) -> Script {
    Script::sse()
        .data(&openai::role())
        .pause(hold)
        .data(&openai::content("Hello"))
        .data(&openai::content(" there"))
        .data(&openai::finish("stop"))
        .data(&openai::usage(5, 2))
        .done()
}

async fn endpoint(chat: Script) -> (FakeServer, Endpoint) {
    let server = FakeServer::routes(vec![("/v1/models", models()), ("/v1/chat/completions", chat)]).await;
    let e = Endpoint::connect(client(&server.url()), None).await.expect("the fake connects");
    (server, e)
}

fn plan(rate: Option<f64>, count: u32) -> LoadPlan {
    LoadPlan {
        requests: vec![request(true)],
        rate,
        arrival: Arrival::Constant,
        seed: 1,
        warmup: 0,
        count,
        max_concurrency: None,
    }
}

/// Most requests in flight at once, from their send and end times.
fn most_in_flight(result: &LoadResult) -> usize {
    let r = &result.requests;
    r.iter().map(|a| r.iter().filter(|b| b.sent_ms <= a.sent_ms && a.sent_ms < b.ended_ms).count()).max().unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_go_at_their_seeded_instants_and_each_keeps_its_lag() {
    let (_server, e) = endpoint(answer(Duration::from_millis(5))).await;
    let mut p = plan(Some(40.0), 12);
    p.arrival = Arrival::Poisson;
    p.seed = 99;
    p.warmup = 3;
    let result = e.open_loop(&p).await;
    assert_eq!(result.requests.len(), 15);
    // Intended instants are the schedule's, the seed's alone.
    let intended: Vec<f64> = result.requests.iter().map(|r| r.intended_ms).collect();
    for (got, want) in intended.iter().zip(schedule(&p)) {
        assert!((got - want).abs() < 1e-6, "{got} against {want}");
    }
    assert!(result.requests.iter().take(3).all(|r| r.warmup) && result.requests.iter().skip(3).all(|r| !r.warmup));
    for r in &result.requests {
        assert!(r.sent_ms >= r.intended_ms, "sent {} before its instant {}", r.sent_ms, r.intended_ms);
        assert!(r.ended_ms > r.sent_ms);
        let reply = r.reply.as_ref().expect("every request answered");
        assert_eq!(reply.text, "Hello there");
        assert!(reply.timing.ttft_ms.is_some_and(|t| t >= 4.0), "{:?}", reply.timing);
    }
    // The lag is the measured requests' own.
    let lags: Vec<f64> = result.requests[3..].iter().map(|r| r.sent_ms - r.intended_ms).collect();
    assert!(lags.iter().any(|l| *l >= result.lag_p99_ms) && lags.iter().all(|l| *l >= 0.0));
    // The window runs from the first measured send to the last measured end.
    let first = result.requests[3].sent_ms;
    let last = result.requests[3..].iter().map(|r| r.ended_ms).fold(0.0, f64::max);
    assert!((result.window_ms - (last - first)).abs() < 1e-6, "{}", result.window_ms);
    // The engine reports no live load: no window.
    assert_eq!(result.load, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_loop_keeps_to_its_slots_and_a_slot_s_request_was_meant_when_it_came_free() {
    let (_server, e) = endpoint(answer(Duration::from_millis(40))).await;
    let mut p = plan(None, 8);
    p.max_concurrency = Some(2);
    let result = e.open_loop(&p).await;
    assert!(result.requests.iter().all(|r| r.reply.is_ok()), "{result:?}");
    assert_eq!(most_in_flight(&result), 2, "{:?}", result.requests);
    // Four rounds of 40 ms at least.
    assert!(result.window_ms >= 160.0, "{}", result.window_ms);
    // Each request after the first two was meant to go when a slot came
    // free: when an earlier request ended, not at the start.
    for r in &result.requests[2..] {
        assert!(r.intended_ms >= 40.0, "{r:?}");
        assert!(result.requests.iter().any(|o| (o.ended_ms - r.intended_ms).abs() < 1e-6), "{r:?}");
    }
    // The synchronous baseline: one at a time, each after the last ended.
    p.max_concurrency = Some(1);
    p.count = 4;
    let sync = e.open_loop(&p).await;
    assert_eq!(most_in_flight(&sync), 1);
    for w in sync.requests.windows(2) {
        assert!(w[1].sent_ms >= w[0].ended_ms, "{w:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lost_requests_keep_their_place_and_their_status_and_the_rest_stand() {
    // Every third request is reset unanswered, every fifth answered 500.
    let server = FakeServer::respond(Arc::new(|req: &str, _| {
        let path = req.split_whitespace().nth(1).unwrap_or("");
        if path.starts_with("/v1/models") {
            return models();
        }
        let n: usize =
            req.rsplit("\"n-").next().and_then(|t| t.split('"').next()).and_then(|t| t.parse().ok()).unwrap_or(0);
        if n % 3 == 2 {
            Script::reset()
        } else if n % 5 == 4 {
            Script::json(500, r#"{"error":"overloaded"}"#)
        } else {
            answer(Duration::from_millis(2))
        }
    }))
    .await;
    let e = Endpoint::connect(client(&server.url()), None).await.unwrap();
    let mut p = plan(Some(200.0), 15);
    p.requests = (0..15)
        .map(|i| {
            let mut r = request(true);
            r.extra_body = Some(json!({"user": format!("n-{i}")}).to_string());
            r
        })
        .collect();
    let result = e.open_loop(&p).await;
    assert_eq!(result.requests.len(), 15, "no request is dropped");
    for (i, r) in result.requests.iter().enumerate() {
        match (&r.reply, i % 3 == 2, i % 5 == 4) {
            (Err(CallError::Lost { reason, .. }), true, _) => assert!(!reason.is_empty()),
            (Err(CallError::Unanswered { status: 500, .. }), false, true) => {}
            (Ok(reply), false, false) => assert_eq!(reply.text, "Hello there"),
            (other, ..) => panic!("request {i}: {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_the_slots_cannot_carry_is_the_client_s_limit_not_the_server_s() {
    let (_server, e) = endpoint(answer(Duration::from_millis(30))).await;
    let mut p = plan(Some(200.0), 12);
    p.max_concurrency = Some(1);
    let result = e.open_loop(&p).await;
    assert!(result.requests.iter().all(|r| r.reply.is_ok()));
    assert!(result.lag_p99_ms > 100.0, "{}", result.lag_p99_ms);
    let why = result.client_bound.expect("said to be client-bound");
    assert!(why.starts_with("the client could not hold the schedule"), "{why}");
    assert!(why.contains("found all 1 slots busy at their instant (max-concurrency 1)"), "{why}");
}

#[tokio::test(flavor = "current_thread")]
async fn a_blocked_runtime_is_the_client_s_lag() {
    let (_server, e) = endpoint(answer(Duration::from_millis(1))).await;
    // The one thread of the runtime is blocked for 150 ms early in the load.
    tokio::spawn(async {
        tokio::time::sleep(Duration::from_millis(20)).await;
        std::thread::sleep(Duration::from_millis(150));
    });
    let result = e.open_loop(&plan(Some(100.0), 30)).await;
    assert!(result.requests.iter().all(|r| r.reply.is_ok()));
    assert!(result.lag_p99_ms > 50.0, "{}", result.lag_p99_ms);
    let why = result.client_bound.expect("said to be client-bound");
    assert!(why.contains("the host's runtime was late to send them (busy or blocked)"), "{why}");
}

#[tokio::test]
async fn a_plan_that_cannot_run_sends_nothing_and_says_why() {
    let (server, e) = endpoint(answer(Duration::ZERO)).await;
    let result = e.open_loop(&plan(Some(0.0), 3)).await;
    assert!(result.requests.is_empty());
    assert_eq!(
        result.client_bound.as_deref(),
        Some("the plan cannot be run: the rate must be a positive number of requests per second, not 0")
    );
    assert_eq!(server.exchanges().iter().filter(|x| x.request.contains("chat/completions")).count(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_s_own_load_is_read_during_the_window() {
    let props = json!({"total_slots": 4, "default_generation_settings": {"n_ctx": 4096}});
    let slots = json!([
        {"id": 0, "n_ctx": 4096, "is_processing": true},
        {"id": 1, "n_ctx": 4096, "is_processing": true},
        {"id": 2, "n_ctx": 4096, "is_processing": false},
        {"id": 3, "n_ctx": 4096, "is_processing": false},
    ]);
    let server = FakeServer::routes(vec![
        ("/v1/models", models()),
        ("/props", Script::json(200, &props.to_string())),
        ("/slots", Script::json(200, &slots.to_string())),
        ("/metrics", Script::status(501).bytes("metrics off")),
        ("/v1/chat/completions", answer(Duration::from_millis(60))),
    ])
    .await;
    let e = Endpoint::connect(client(&server.url()), None).await.unwrap();
    assert_eq!(e.engine().name(), "llama.cpp");
    let result = e.open_loop(&plan(Some(50.0), 10)).await;
    assert!(result.requests.iter().all(|r| r.reply.is_ok()));
    let load = result.load.expect("llama.cpp reports its load");
    assert!(load.samples >= 2, "{load:?}");
    assert_eq!(load.running_max, 2, "{load:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_load_dropped_mid_way_stops_sending() {
    let (server, e) = endpoint(answer(Duration::from_millis(1))).await;
    let p = plan(Some(50.0), 50);
    let load = e.open_loop(&p);
    assert!(tokio::time::timeout(Duration::from_millis(150), load).await.is_err());
    let sent = |s: &FakeServer| s.exchanges().iter().filter(|x| x.request.contains("chat/completions")).count();
    let then = sent(&server);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(sent(&server), then, "no request went out after the load was dropped");
    assert!(then < 20, "{then}");
}
