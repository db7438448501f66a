//! The smoke suite on the reference target, launched and stopped by the
//! harness: a whole, honest measurement file.

use sparktest_record::Outcome;

use crate::support::*;

#[test]
fn smoke_on_the_launched_reference_target_writes_a_whole_measurement_file() {
    let p = Project::new("");
    let out = p.run(&["--suite", &suite("smoke"), "--test-threads", "2"]);
    let said = text(&out);
    // The tiny model fails some cases: that is a result, not an error.
    assert!(matches!(out.status.code(), Some(0) | Some(101)), "{said}");
    assert!(said.contains("test result:"), "{said}");

    let runs = p.measurements();
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    let m = &run.manifest;
    assert_eq!(m.suite.name, "smoke");
    assert_eq!(m.suite.files.len(), 2);
    assert_eq!(m.target.name, "local");
    assert_eq!(m.target.engine, "llama.cpp");
    assert_eq!(m.target.model_id, "SmolLM2-135M-Instruct-Q4_1");
    let cmd = m.target.launch_command.as_ref().expect("launch command recorded");
    assert!(cmd.iter().any(|a| a == "--jinja") && cmd.iter().any(|a| a == "--metrics"));
    assert!(m.target.model_sha256.as_deref().is_some_and(|s| s.len() == 64));
    assert!(m.client_host.cores >= 1 && m.client_host.memory_bytes > 0);
    assert_eq!(m.instruments.len(), 2);
    assert!(m.target.facts.iter().any(|(k, v)| k == "slots" && v == "2"), "{:?}", m.target.facts);
    assert!(m.target.facts.iter().any(|(k, v)| k == "metrics" && v.starts_with("on")), "{:?}", m.target.facts);
    assert!(
        m.target.facts.iter().any(|(k, v)| k == "engine_evidence" && v.contains("total_slots")),
        "{:?}",
        m.target.facts
    );
    // The server's host is recorded when the harness launched it.
    assert!(m.target.host.as_ref().is_some_and(|h| h.cores >= 1));

    assert_eq!(run.cases.len(), 15);
    assert_eq!(run.count(Outcome::Lost), 0, "no lost case while the server is healthy");
    for c in &run.cases {
        assert!(matches!(c.outcome, Outcome::Pass | Outcome::Fail), "{c:?}");
        assert_eq!(c.outcome == Outcome::Fail, c.reason.is_some(), "{c:?}");
        assert!(!c.calls.is_empty() && c.calls.iter().all(|call| call.result == "ok"), "{c:?}");
        assert!(c.completion_tokens.unwrap_or(0) > 0 && c.prompt_tokens.unwrap_or(0) > 0, "{c:?}");
        assert_eq!(c.transcript_sha256.len(), 64);
    }
    let summary = run.summary.as_ref().expect("summary line");
    assert_eq!(summary.passed + summary.failed, 15);
    // The efficiency readout, per instrument, from the same records.
    let corruption = summary.instruments.iter().find(|i| i.name == "corruption").unwrap();
    assert_eq!(corruption.given, 12);
    assert_eq!(
        corruption.correct,
        run.cases.iter().filter(|c| c.instrument == "corruption" && c.outcome == Outcome::Pass).count() as u64
    );
    assert!(corruption.mean_seconds > 0.0 && corruption.mean_harness_seconds < corruption.mean_seconds);
    // The corruption instrument judges byte-exact and NFC-equal apart.
    let french = run.case("corruption::accents::french");
    assert!(french.notes.iter().any(|(k, _)| k == "byte-exact"));
    assert!(french.notes.iter().any(|(k, _)| k == "nfc-equal"));
    // Repro sent each probe 3 times and kept a snapshot of the reply.
    let fact = run.case("repro::probe::short_fact");
    assert_eq!(fact.calls.len(), 3);
    // Beside other cases the server is not restarted; the record says why.
    let restart = fact.notes.iter().find(|(k, _)| k == "restart-byte-identical").map(|(_, v)| v.as_str());
    assert_eq!(
        restart,
        Some("not measured: the harness can restart only a server it launched, for an instrument marked exclusive")
    );
    assert_eq!(fact.snapshots, vec![("short_fact".to_string(), "new".to_string())]);
    assert!(p.path().join("snapshots/local/repro/probe__short_fact__short_fact.snap").is_file());
    // The corruption probe keeps its replies as snapshots too.
    assert_eq!(french.snapshots, vec![("french".to_string(), "new".to_string())]);
    assert!(p.path().join("snapshots/local/corruption/accents__french__french.snap").is_file());

    // Every exchange can be read again: the transcript beside the file, by
    // its address, and `cargo sparktest show RUN#CASE`.
    for c in &run.cases {
        let t = p.path().join("measurements/transcripts").join(format!("{}.json", c.transcript_sha256));
        assert!(t.is_file(), "no transcript for {}", c.id);
    }
    let shown = p.run(&["show", &format!("{}#repro::probe::short_fact", m.run_id)]);
    assert!(shown.status.success(), "{}", text(&shown));
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.contains("[user] What is the capital of France?") && shown.contains("[reply]"), "{shown}");
    // Three calls timed: their distribution is in the record.
    let latency = fact.latency.as_ref().expect("latency distribution");
    let e2e = latency.e2e_ms.as_ref().unwrap();
    assert!(e2e.count == 3 && e2e.p50 > 0.0 && e2e.p99 >= e2e.p50, "{latency:?}");
}

#[test]
fn a_drifted_snapshot_fails_the_case_and_leaves_it_pending_for_review() {
    let server = Server::start();
    let p = Project::new("");
    let args = [
        "--suite",
        &suite("smoke"),
        "--endpoint",
        &server.url,
        "--model",
        "SmolLM2-135M-Instruct-Q4_1",
        "--exact",
        "repro::probe::short_fact",
    ];
    let first = p.run(&args);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    // The baseline is keyed by what the probe found, and the case says which.
    let first_case = p.measurements()[0].case("repro::probe::short_fact").clone();
    let baseline = note(&first_case, "snapshot-baseline").expect("the baseline compared with").to_string();
    assert!(baseline.starts_with("snapshots/endpoint-SmolLM2-135M-Instruct-Q4_1-"), "{baseline}");
    let snap = p.path().join(&baseline).join("repro/probe__short_fact__short_fact.snap");
    let stored = std::fs::read_to_string(&snap).unwrap();

    // Same server, same request: the snapshot matches.
    let second = p.run(&args);
    assert_eq!(second.status.code(), Some(0), "{}", text(&second));

    // Force a drift, as a changed engine build would.
    std::fs::write(&snap, stored.replace("Paris", "Lyon").replace("paris", "lyon") + "drift\n").unwrap();
    let third = p.run(&args);
    assert_eq!(third.status.code(), Some(101), "{}", text(&third));
    assert!(text(&third).contains("cargo insta review"), "{}", text(&third));
    assert!(snap.with_extension("snap.new").is_file(), "a pending snapshot waits for review");
    let runs = p.measurements();
    let last = runs.last().unwrap().case("repro::probe::short_fact").clone();
    assert_eq!(last.outcome, Outcome::Fail);
    assert_eq!(last.snapshots, vec![("short_fact".to_string(), "changed".to_string())]);
    assert_eq!(runs[0].case("repro::probe::short_fact").snapshots[0].1, "new");
    assert_eq!(runs[1].case("repro::probe::short_fact").snapshots[0].1, "match");
}
