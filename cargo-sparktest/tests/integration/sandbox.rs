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
    assert_eq!(run.cases.len(), 13, "every case has a record");

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

#[test]
fn an_instrument_that_panics_while_listing_fails_alone_and_the_others_run() {
    let suite_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suites/broken");
    let suite = suite_dir.display().to_string();
    let p = Project::new("");
    let list = p.run(&["--suite", &suite, "--list"]);
    assert!(list.status.success(), "{}", text(&list));
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(listed.contains("fixture::setup::load: test") && listed.contains("repro::probe::short_fact: test"), "{listed}");

    let server = Server::start();
    let out = p.run(&["--suite", &suite, "--endpoint", &server.url, "--model", "SmolLM2-135M-Instruct-Q4_1"]);
    assert_eq!(out.status.code(), Some(101), "{}", text(&out));
    let runs = p.measurements();
    let run = &runs[0];
    let broken = run.case("fixture::setup::load");
    assert_eq!(broken.outcome, Outcome::Fail);
    let why = broken.reason.as_deref().unwrap();
    assert!(why.contains("failed to list its cases") && why.contains("listing refused on purpose"), "{why}");
    assert_eq!(run.case("repro::probe::short_fact").calls.len(), 2, "the other instrument ran");
    assert_eq!(run.manifest.instruments.len(), 1);
}

#[test]
fn a_prebuilt_component_loads_by_path_and_its_pin_is_checked() {
    let p = Project::new("");
    // Build the fixture through a suite once, then load the .wasm it made.
    let built = p.run(&["--suite", &fixture_suite(), "--list"]);
    assert!(built.status.success(), "{}", text(&built));
    let wasm = repo().join("target/wasm32-wasip2/plugin/sparktest_fixture.wasm");
    let digest = {
        let out = std::process::Command::new("sha256sum").arg(&wasm).output().unwrap();
        String::from_utf8_lossy(&out.stdout).split_whitespace().next().unwrap().to_string()
    };
    let dir = p.path().join("prebuilt");
    std::fs::create_dir_all(&dir).unwrap();
    let write = |pin: &str| {
        std::fs::write(
            dir.join("suite.toml"),
            format!("[suite]\nname = \"prebuilt\"\nversion = \"1\"\n[[instrument]]\nwasm = {:?}\nsha256 = \"{pin}\"\n", wasm.display().to_string()),
        )
        .unwrap();
    };
    write(&digest);
    let out = p.run(&["--suite", &dir.display().to_string(), "--list"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("fixture::cpu::spin: test"));
    write(&"0".repeat(64));
    let out = p.run(&["--suite", &dir.display().to_string(), "--list"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(text(&out).contains("does not match its pin"), "{}", text(&out));
}
