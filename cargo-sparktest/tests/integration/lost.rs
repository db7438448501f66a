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

/// Case lines written so far in the newest measurement file.
fn cases_in_newest(p: &Project) -> usize {
    let mut files: Vec<_> = std::fs::read_dir(p.path().join("measurements"))
        .map(|d| d.flatten().map(|e| e.path()).filter(|f| f.extension().is_some_and(|x| x == "jsonl")).collect())
        .unwrap_or_default();
    files.sort();
    files
        .last()
        .and_then(|f| std::fs::read_to_string(f).ok())
        .map_or(0, |t| t.lines().filter(|l| l.starts_with("{\"type\":\"case\"")).count())
}

#[test]
fn a_run_the_server_died_in_replaces_no_measurement_and_fails_diff() {
    let mut server = Server::start();
    let p = Project::new("");
    let args = [
        "--suite",
        &suite("smoke"),
        "--endpoint",
        &server.url,
        "--model",
        "SmolLM2-135M-Instruct-Q4_1",
        "corruption::",
    ];
    let first = p.run(&args);
    assert!(matches!(first.status.code(), Some(0) | Some(101)), "{}", text(&first));
    let mut with_one_thread = args.to_vec();
    with_one_thread.extend(["--test-threads", "1"]);
    let mut child = p
        .command(&with_one_thread)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while cases_in_newest(&p) < 2 || p.measurements().len() < 2 {
        assert!(started.elapsed() < Duration::from_secs(180), "the second run made no progress");
        std::thread::sleep(Duration::from_millis(20));
    }
    server.kill();
    assert_eq!(child.wait().unwrap().code(), Some(101));
    let runs = p.measurements();
    let (good, dead) = (&runs[0], &runs[1]);
    assert!(dead.summary.as_ref().and_then(|s| s.stopped.as_ref()).is_some(), "the second run stopped early");
    let answered = good.count(Outcome::Pass) + good.count(Outcome::Fail);
    assert_eq!(answered, 12, "the first run answered every probe");

    // The board keeps the first run's figure and says the later one failed.
    let o = p.run(&["board"]);
    assert!(o.status.success(), "{}", text(&o));
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.path().join("board/standings.json")).unwrap()).unwrap();
    let probe = s["board"]["rows"].as_array().unwrap().iter().find(|r| r["title"] == "Corruption probe").unwrap()
        ["cells"]["endpoint · SmolLM2-135M-Instruct-Q4_1"]
        .clone();
    let passed = good.count(Outcome::Pass);
    assert_eq!(probe["kind"], "measured", "{probe}");
    assert!(probe["raw"].as_str().unwrap().starts_with(&format!("{passed}/12 correct")), "{probe}");
    let later = probe["failed_later"][0].as_str().unwrap();
    assert!(later.starts_with(&dead.manifest.run_id) && later.contains("stopped early"), "{later}");
    let md = std::fs::read_to_string(p.path().join("board/board.md")).unwrap();
    assert!(md.contains(&good.manifest.run_id) && md.contains(&dead.manifest.run_id), "both runs are in the log");

    // `diff` does not pass the dead candidate.
    let d = p.run(&["diff", &good.manifest.run_id, &dead.manifest.run_id, "--fail-on", "regression"]);
    assert_eq!(d.status.code(), Some(101), "{}", text(&d));
    let out = String::from_utf8_lossy(&d.stdout);
    assert!(out.contains("stopped early"), "{out}");
    assert!(out.contains("the baseline answered were lost or not recorded on B"), "{out}");
}
