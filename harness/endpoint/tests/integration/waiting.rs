//! Issue 28: one waiting rule before the first token. Between the response
//! head and the first content, a silent server and one sending keep-alive
//! comments are judged alike, by `head-timeout-secs` from the send; after
//! the first content both count against `idle-timeout-secs`.

use std::time::{Duration, Instant};

use sparktest_endpoint::Timeouts;

use crate::fake_server::{FakeServer, Script, openai};
use crate::{client_with, lost, ok, request};

/// The head at once, then `prefill` of silence or of a comment every
/// 100 ms, then the reply.
fn prefill(prefill: Duration, pinging: bool) -> Script {
    let mut script = Script::sse();
    let steps = (prefill.as_millis() / 100) as usize;
    for _ in 0..steps {
        script = script.pause(Duration::from_millis(100));
        if pinging {
            script = script.keep_alive();
        }
    }
    script.data(&openai::role()).data(&openai::content("Hi")).data(&openai::content("!")).data(&openai::finish("stop"))
}

#[tokio::test]
async fn a_prefill_longer_than_the_idle_limit_passes_silent_or_pinging() {
    // The report's pair, scaled down: idle 5 s and an 8 s prefill become
    // 400 ms and 1.2 s. Pinging was lost at the first comment + idle.
    let timeouts = Timeouts { idle: Duration::from_millis(400), head: Duration::from_secs(4), ..crate::TIMEOUTS };
    for pinging in [false, true] {
        let server = FakeServer::start(prefill(Duration::from_millis(1200), pinging)).await;
        let reply = ok(client_with(&server.url(), timeouts).chat(&request(true)).await);
        assert_eq!(reply.text, "Hi!", "pinging {pinging}");
        let ttft = reply.timing.ttft_ms.expect("content came");
        assert!(ttft >= 1100.0, "pinging {pinging}: ttft {ttft} ms");
    }
}

#[tokio::test]
async fn no_first_content_within_the_head_limit_is_lost_alike() {
    // Comments or silence for 4 s: both lost at the head limit (700 ms),
    // with the same words, and not at the idle limit nor the request's.
    let timeouts = Timeouts { idle: Duration::from_millis(300), head: Duration::from_millis(700), ..crate::TIMEOUTS };
    let mut reasons = Vec::new();
    for pinging in [false, true] {
        let server = FakeServer::start(prefill(Duration::from_secs(4), pinging)).await;
        let started = Instant::now();
        let reason = lost(client_with(&server.url(), timeouts).chat(&request(true)).await);
        let took = started.elapsed();
        assert!(reason.starts_with("no content within 1 s of the send"), "{reason}");
        assert!(reason.contains("head-timeout-secs"), "{reason}");
        assert!(
            took >= Duration::from_millis(650) && took < Duration::from_millis(2500),
            "pinging {pinging}: {took:?}"
        );
        reasons.push(reason.split(" after ").next().unwrap_or_default().to_string());
    }
    assert_eq!(reasons[0], reasons[1], "silence and comments are judged alike");
}

#[tokio::test]
async fn after_the_first_content_comments_count_against_the_idle_limit() {
    // The head limit (5 s) is far off; the idle one (300 ms) applies from
    // the first content on, comments or not.
    let timeouts = Timeouts { idle: Duration::from_millis(300), ..crate::TIMEOUTS };
    let mut script = Script::sse().data(&openai::content("Hi"));
    for _ in 0..40 {
        script = script.pause(Duration::from_millis(100)).keep_alive();
    }
    let server = FakeServer::start(script).await;
    let started = Instant::now();
    let reason = lost(client_with(&server.url(), timeouts).chat(&request(true)).await);
    assert!(reason.starts_with("stream stalled: no content for"), "{reason}");
    assert!(started.elapsed() < Duration::from_millis(2000), "lost at the idle limit: {:?}", started.elapsed());
}
