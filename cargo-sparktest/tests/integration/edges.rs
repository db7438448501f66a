//! Issue 19's edges end to end: a reply sent in one burst is a figure that
//! cannot be taken (N/A with its reason), never the model's failure. The
//! server is a scripted fake: no real engine sends a whole reply in one
//! write on demand.

use std::sync::Arc;
use std::time::Duration;

use sparktest_record::Outcome;

use crate::fake_server::{FakeServer, Framing, Script, openai};
use crate::support::*;

pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap()
}

/// An OpenAI-shaped fake whose streamed replies are `reply`; the model
/// list names `fake-model`.
fn fake(rt: &tokio::runtime::Runtime, reply: Script) -> FakeServer {
    rt.block_on(FakeServer::respond(Arc::new(move |req: &str, _| {
        let path = req.split_whitespace().nth(1).unwrap_or("");
        if path.starts_with("/v1/models") {
            return Script::json(200, r#"{"object":"list","data":[{"id":"fake-model","object":"model"}]}"#);
        }
        if path.starts_with("/v1/chat") {
            return reply.clone();
        }
        Script::json(404, r#"{"error":"not found"}"#)
    })))
}

/// A whole short reply in one write: role, `n` content chunks, the finish
/// reason and `[DONE]`, no usage chunk.
pub(crate) fn burst(n: usize) -> Script {
    let mut body = format!("data: {}\n\n", openai::role());
    for i in 0..n {
        body.push_str(&format!("data: {}\n\n", openai::content(&format!("w{i} "))));
    }
    body.push_str(&format!("data: {}\n\ndata: [DONE]\n\n", openai::finish("length")));
    Script::sse().framing(Framing::Length(body.len())).bytes(body)
}

#[test]
fn a_reply_in_one_burst_makes_the_speed_figures_not_applicable_not_failed() {
    let rt = runtime();
    let server = fake(&rt, burst(32));
    let p = Project::new("");
    let out = p.run(&[
        "--suite",
        &suite("concurrency"),
        "--endpoint",
        &server.url(),
        "--model",
        "fake-model",
        "--test-threads",
        "1",
        "concurrency::level::c",
    ]);
    // Not applicable is no failure: the run passes.
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let runs = p.measurements();
    let run = runs.last().unwrap();
    assert!(!run.cases.is_empty(), "{}", text(&out));
    for c in &run.cases {
        assert_eq!(c.outcome, Outcome::NotApplicable, "{}: {:?}", c.id, c.reason);
        let reason = c.reason.as_deref().unwrap_or("");
        assert!(reason.contains("cannot be taken") && reason.contains("one burst"), "{}: {reason}", c.id);
        // No usage chunk: it says it counted chunks, not tokens.
        assert!(reason.contains("content chunks") && reason.contains("no valid token count"), "{}: {reason}", c.id);
        assert!(c.calls.iter().all(|call| call.result == "ok"), "{}: {:?}", c.id, c.calls);
    }

    // The same short reply spread over time is timed, from chunks, and
    // says so.
    let mut spread = Script::sse().data(&openai::role());
    for i in 0..8 {
        spread = spread.pause(Duration::from_millis(5)).data(&openai::content(&format!("w{i} ")));
    }
    let server = fake(&rt, spread.data(&openai::finish("length")).done());
    let out = p.run(&[
        "--suite",
        &suite("concurrency"),
        "--endpoint",
        &server.url(),
        "--model",
        "fake-model",
        "--exact",
        "concurrency::level::c2",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let runs = p.measurements();
    let c = runs.last().unwrap().case("concurrency::level::c2");
    assert_eq!(c.outcome, Outcome::Pass, "{:?}", c.reason);
    assert_eq!(note(c, "token-source"), Some("chunks"), "{:?}", c.notes);
    assert_eq!(metric(c, "completion-tokens"), Some(16.0), "{:?}", c.metrics);
}
