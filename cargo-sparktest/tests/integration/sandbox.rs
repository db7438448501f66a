//! The plugin sandbox: a misbehaving instrument ends its own cases with a
//! named error, and the others go on.

use sparktest_record::Outcome;

use crate::support::*;

fn reason(run: &Run, id: &str) -> String {
    let c = run.case(id);
    c.reason.clone().unwrap_or_else(|| panic!("{id} has no reason: {c:?}"))
}

#[test]
fn misbehaving_cases_end_with_named_errors_and_the_rest_run() {
    let server = Server::start();
    let p = Project::new("");
    let out = p.run(&["--suite", &fixture_suite(), "--endpoint", &server.url, "--model", "SmolLM2-135M-Instruct-Q4_1"]);
    assert_eq!(out.status.code(), Some(101), "{}", text(&out));
    let runs = p.measurements();
    let run = &runs[0];
    assert_eq!(run.cases.len(), 14, "every case has a record");

    let cpu = reason(run, "fixture::cpu::spin");
    assert!(cpu.contains("CPU budget"), "{cpu}");
    let mem = reason(run, "fixture::memory::grow");
    assert!(mem.contains("memory limit of 64 MiB"), "{mem}");
    let panic = reason(run, "fixture::panic::message");
    assert!(panic.contains("panicked") && panic.contains("fixture panic number 42"), "{panic}");
    let abort = reason(run, "fixture::trap::abort");
    assert!(abort.starts_with("instrument trapped"), "{abort}");
    for id in ["fixture::cpu::spin", "fixture::memory::grow", "fixture::panic::message", "fixture::trap::abort"] {
        assert_eq!(run.case(id).outcome, Outcome::Fail, "{id}");
    }

    // Only pinned suite files are readable.
    assert!(reason(run, "fixture::data::unpinned").contains("not pinned"));
    assert_eq!(run.case("fixture::data::pinned").outcome, Outcome::Pass);

    // Real calls after the misbehaviour still work.
    assert_eq!(run.case("fixture::chat::hello").outcome, Outcome::Pass);
    let streamed = run.case("fixture::chat::streamed");
    assert_eq!(streamed.outcome, Outcome::Pass, "{streamed:?}");
    assert!(streamed.calls[0].ttft_ms.is_some_and(|t| t > 0.0));
    assert_eq!(streamed.calls[0].token_source, "server-usage");
    assert_eq!(run.case("fixture::chat::concurrent").outcome, Outcome::Pass);
    assert_eq!(run.case("fixture::chat::concurrent").calls.len(), 2);

    // A prompt beyond the context is a clean 4xx: rejected, failed, never lost.
    let long = run.case("fixture::chat::overlong");
    assert_eq!(long.outcome, Outcome::Fail, "{long:?}");
    assert_eq!(long.calls[0].result, "rejected");
    assert_eq!(long.calls[0].status, Some(400));
    assert!(long.reason.as_deref().unwrap().starts_with("context"), "{long:?}");

    // llama.cpp gives no prompt logprobs: not applicable, with the reason.
    let lp = run.case("fixture::logprobs::teacher_forced");
    assert_eq!(lp.outcome, Outcome::NotApplicable);
    assert_eq!(lp.reason.as_deref(), Some("engine returns no prompt logprobs"));

    assert_eq!(run.case("fixture::metrics::scrape").outcome, Outcome::Pass);
    let facts = run.case("fixture::facts::model");
    assert!(facts.notes.contains(&("engine".to_string(), "llama.cpp".to_string())), "{facts:?}");
    let summary = run.summary.as_ref().unwrap();
    assert_eq!(summary.not_applicable, 1);
    assert_eq!(summary.lost, 0);
}
