//! A server that dies mid-suite: every remaining case is lost, never failed,
//! the run stops after `max-lost-in-row` lost cases instead of timing out
//! through the rest, and the measurement file stays whole.

use std::time::{Duration, Instant};

use sparktest_record::Outcome;

use crate::support::*;

#[test]
fn killing_the_server_mid_suite_loses_the_remaining_cases() {
    let mut server = Server::start();
    let p = Project::new("");
    let mut child = p
        .command(&[
            "--suite",
            &suite("smoke"),
            "--endpoint",
            &server.url,
            "--model",
            "SmolLM2-135M-Instruct-Q4_1",
            "--test-threads",
            "1",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until three cases are on disk, then kill the server.
    let started = Instant::now();
    loop {
        let done = std::fs::read_dir(p.path().join("measurements"))
            .ok()
            .and_then(|mut d| d.find(|e| e.as_ref().is_ok_and(|e| e.path().extension().is_some_and(|x| x == "jsonl"))))
            .and_then(|e| std::fs::read_to_string(e.unwrap().path()).ok())
            .map(|t| t.lines().filter(|l| l.starts_with("{\"type\":\"case\"")).count())
            .unwrap_or(0);
        if done >= 3 {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(180), "the run made no progress");
        std::thread::sleep(Duration::from_millis(50));
    }
    server.kill();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(101));

    let runs = p.measurements();
    let run = &runs[0];
    assert_eq!(run.cases.len(), 15, "every case has a record");
    assert!(run.summary.is_some(), "the file is whole");
    let lost: Vec<_> = run.cases.iter().filter(|c| c.outcome == Outcome::Lost).collect();
    assert!(lost.len() >= 11, "{} lost", lost.len());
    // Once lost, always lost: nothing after the kill passed or failed.
    let first_lost = run.cases.iter().position(|c| c.outcome == Outcome::Lost).unwrap();
    assert!(run.cases[first_lost..].iter().all(|c| c.outcome == Outcome::Lost));
    for c in &lost {
        let reason = c.reason.as_deref().unwrap();
        assert!(reason.contains("connection") || reason.contains("cut") || reason.contains("closed"), "{reason}");
    }
    let summary = run.summary.as_ref().unwrap();
    assert_eq!(summary.lost as usize, lost.len());
    // After five lost in a row the run stopped: the cases after that were
    // not sent, and say why.
    let stopped = summary.stopped.as_deref().expect("the run says it stopped");
    assert!(stopped.starts_with("5 cases in a row were lost"), "{stopped}");
    let not_run = lost.iter().filter(|c| c.reason.as_deref().unwrap().starts_with("not run: the run stopped")).count();
    assert!(
        not_run >= 6 && lost.iter().all(|c| c.calls.is_empty() == c.reason.as_deref().unwrap().starts_with("not run")),
        "{not_run} not run"
    );
}
