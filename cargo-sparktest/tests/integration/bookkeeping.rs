//! What a run leaves for CI and for later: JUnit XML, partitions across
//! machines merged by the board, a killed run resumed, progress on a
//! terminal.

use std::sync::Arc;
use std::time::{Duration, Instant};

use sparktest_record::Outcome;

use crate::board::cell as board_cell;
use crate::fake_server::{FakeServer, Script, openai};
use crate::support::*;

/// A server whose streamed replies fail (lost), whose long prompts are
/// refused (fail), and whose short whole replies are answers (pass).
fn fake(rt: &tokio::runtime::Runtime) -> FakeServer {
    rt.block_on(FakeServer::respond(Arc::new(|req: &str, _| {
        let path = req.split_whitespace().nth(1).unwrap_or("").to_string();
        if path.starts_with("/v1/models") {
            return Script::json(200, r#"{"object":"list","data":[{"id":"fake-model","object":"model"}]}"#);
        }
        if !path.starts_with("/v1/chat") {
            return Script::json(404, r#"{"error":"not found"}"#);
        }
        if req.contains("\"stream\":true") {
            return Script::sse().data(&openai::content("Hel")).end(crate::fake_server::End::Close);
        }
        if req.len() > 20_000 {
            return Script::json(400, r#"{"error":{"message":"the request exceeds the available context size"}}"#);
        }
        Script::json(200, r#"{"model":"fake-model","choices":[{"index":0,"message":{"content":"Hello!"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2}}"#)
    })))
}

#[test]
fn junit_reports_lost_as_error_fail_as_failure_and_na_as_skipped() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let server = fake(&rt);
    let p = Project::new("");
    let out = p.run(&[
        "--suite",
        &fixture_suite(),
        "--endpoint",
        &server.url(),
        "--model",
        "fake-model",
        "--junit",
        "reports/junit.xml",
        "--skip",
        "hostile",
        "--skip",
        "cpu::",
        "--skip",
        "memory::",
        "--format",
        "json",
        "-Z",
        "unstable-options",
    ]);
    assert_eq!(out.status.code(), Some(101), "{}", text(&out));
    // libtest's JSON, as CI reads it: an N/A case is ignored with its
    // reason as "message", and what the filters left out is counted.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let ignored = stdout.lines().find(|l| l.contains("logprobs::teacher_forced") && l.contains("\"ignored\""));
    let ignored: serde_json::Value = serde_json::from_str(ignored.unwrap_or_else(|| panic!("{stdout}"))).unwrap();
    assert!(ignored["message"].as_str().is_some_and(|m| m.starts_with("not applicable:")), "{ignored}");
    let summary = stdout.lines().rev().find(|l| l.contains("\"type\": \"suite\"")).unwrap();
    let summary: serde_json::Value = serde_json::from_str(summary).unwrap();
    assert!(summary["filtered_out"].as_u64().is_some_and(|n| n > 0), "{summary}");
    let xml = std::fs::read_to_string(p.path().join("reports/junit.xml")).unwrap();
    // What CI systems read: it parses as JUnit, one testcase per case.
    let report = quick_junit::Report::deserialize_from_str(&xml).unwrap_or_else(|e| panic!("{e}: {xml}"));
    let run = &p.measurements()[0];
    let cases: Vec<&quick_junit::TestCase> = report.test_suites.iter().flat_map(|s| s.test_cases.iter()).collect();
    assert_eq!(cases.len(), run.cases.len());
    let status = |name: &str| {
        cases.iter().find(|c| c.name.as_str() == name).unwrap_or_else(|| panic!("no {name}")).status.clone()
    };
    use quick_junit::{NonSuccessKind, TestCaseStatus};
    assert!(matches!(status("chat::hello"), TestCaseStatus::Success { .. }));
    assert!(
        matches!(status("chat::streamed"), TestCaseStatus::NonSuccess { kind: NonSuccessKind::Error, .. }),
        "lost is an error"
    );
    assert!(
        matches!(status("data::unpinned"), TestCaseStatus::NonSuccess { kind: NonSuccessKind::Failure, .. }),
        "fail is a failure"
    );
    match status("logprobs::teacher_forced") {
        TestCaseStatus::Skipped { message, .. } => {
            assert!(message.unwrap().as_str().starts_with("not applicable:"))
        }
        other => panic!("N/A should be skipped: {other:?}"),
    }
    assert!(xml.contains("<error") && xml.contains("<failure") && xml.contains("<skipped"), "{xml}");
    assert_eq!(report.test_suites[0].name.as_str(), "fixture");
    assert!(report.test_suites[0].tests > 0);
}

#[test]
fn three_partitions_merge_into_one_column_and_a_missing_part_is_said() {
    let server = Server::start();
    let p = Project::new("");
    let mut all = Vec::new();
    for k in 1..=3 {
        let dir = format!("part{k}");
        let out = p.run(&[
            "--suite",
            &suite("smoke"),
            "--endpoint",
            &server.url,
            "--model",
            "SmolLM2-135M-Instruct-Q4_1",
            "--partition",
            &format!("count:{k}/3"),
            "--run-group",
            "ci-123",
            "--measurements",
            &dir,
            "corruption::",
        ]);
        assert!(matches!(out.status.code(), Some(0) | Some(101)), "{}", text(&out));
        let files: Vec<_> = std::fs::read_dir(p.path().join(&dir))
            .unwrap()
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
            .collect();
        assert_eq!(files.len(), 1);
        let run = Run::parse(&std::fs::read_to_string(files[0].path()).unwrap());
        assert_eq!(run.cases.len(), 4, "12 corruption cases in three parts");
        assert_eq!(
            run.manifest.partition.as_ref().map(|x| (x.index, x.total, x.group.as_str())),
            Some((k, 3, "ci-123"))
        );
        all.extend(run.cases.iter().map(|c| c.id.clone()));
        std::fs::create_dir_all(p.path().join("merged")).unwrap();
        std::fs::copy(files[0].path(), p.path().join("merged").join(files[0].file_name())).unwrap();
    }
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 12, "every case ran in exactly one part");
    let board = |dir: &str, out: &str| {
        let o = p.run(&["board", "--measurements", dir, "--out", out]);
        assert!(o.status.success(), "{}", text(&o));
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(p.path().join(out).join("standings.json")).unwrap()).unwrap();
        let md = std::fs::read_to_string(p.path().join(out).join("board.md")).unwrap();
        (s, md)
    };
    let (s, md) = board("merged", "b1");
    assert_eq!(s["board"]["columns"].as_array().unwrap().len(), 1, "one column");
    let cell = board_cell(&s, "Corruption probe", "endpoint · SmolLM2-135M-Instruct-Q4_1").clone();
    // "N/12 correct", then how many came back intact inside chatter, if any.
    assert!(cell["raw"].as_str().unwrap().split(" (").next().unwrap().ends_with("/12 correct"), "{cell}");
    assert!(cell.get("partial").is_none(), "every corruption case of the suite recorded: {cell}");
    assert!(!md.contains("PARTIAL"), "all parts present");
    // Part 3 gone: the board still merges, and says what is missing.
    for e in std::fs::read_dir(p.path().join("merged")).unwrap().flatten() {
        if std::fs::read_to_string(e.path()).unwrap().contains("\"index\":3") {
            std::fs::remove_file(e.path()).unwrap();
        }
    }
    let (s, md) = board("merged", "b2");
    assert!(md.contains("PARTIAL: part 3 of 3 missing"), "{md}");
    // The cell itself says what it covers: two parts' cases of twelve.
    let cell = board_cell(&s, "Corruption probe", "endpoint · SmolLM2-135M-Instruct-Q4_1").clone();
    assert_eq!(cell["partial"], "partial: 8 of 12 corruption cases recorded", "{cell}");

    // Part 1 run again in the same run group: each case counts once, from
    // its later record, and both runs of the part stay in the run log.
    let again = p.run(&[
        "--suite",
        &suite("smoke"),
        "--endpoint",
        &server.url,
        "--model",
        "SmolLM2-135M-Instruct-Q4_1",
        "--partition",
        "count:1/3",
        "--run-group",
        "ci-123",
        "--measurements",
        "merged",
        "corruption::",
    ]);
    assert!(matches!(again.status.code(), Some(0) | Some(101)), "{}", text(&again));
    let (s, md) = board("merged", "b3");
    let cell = board_cell(&s, "Corruption probe", "endpoint · SmolLM2-135M-Instruct-Q4_1").clone();
    assert_eq!(cell["partial"], "partial: 8 of 12 corruption cases recorded", "still 8 items: {cell}");
    assert_eq!(cell["spread"]["n"], 8, "the interval counts each item once: {cell}");
    assert_eq!(cell["records"].as_array().unwrap().len(), 8, "{cell}");
    assert!(cell["raw"].as_str().unwrap().split(" (").next().unwrap().ends_with("/8 correct"), "{cell}");
    assert_eq!(md.matches("part 1/3 of run group ci-123 again").count(), 1, "{md}");
}

#[test]
fn a_killed_run_resumed_gives_a_complete_board() {
    let server = Server::start();
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
    let started = Instant::now();
    while p.cases_written() < 4 {
        assert!(started.elapsed() < Duration::from_secs(300), "no progress");
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    let _ = child.wait();
    let first = p.measurements().remove(0);
    assert!(first.summary.is_none(), "a killed run has no summary");
    let done = first.cases.len();
    assert!((4..15).contains(&done), "{done}");

    let out = p.run(&[
        "--suite",
        &suite("smoke"),
        "--endpoint",
        &server.url,
        "--model",
        "SmolLM2-135M-Instruct-Q4_1",
        "--resume",
        &first.manifest.run_id,
    ]);
    assert!(matches!(out.status.code(), Some(0) | Some(101)), "{}", text(&out));
    let runs = p.measurements();
    let second = runs.iter().find(|r| r.manifest.resumes.is_some()).unwrap();
    assert_eq!(second.manifest.resumes.as_deref(), Some(first.manifest.run_id.as_str()));
    assert_eq!(second.cases.len(), 15 - done, "only what the first run did not record");
    assert!(second.cases.iter().all(|c| first.cases.iter().all(|f| f.id != c.id)));

    // The board reads the two as one complete run.
    let o = p.run(&["board"]);
    assert!(o.status.success(), "{}", text(&o));
    let md = std::fs::read_to_string(p.path().join("board/board.md")).unwrap();
    assert!(md.contains(&format!("resumed by {}", second.manifest.run_id)), "{md}");
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.path().join("board/standings.json")).unwrap()).unwrap();
    let corruption = s["board"]["rows"].as_array().unwrap().iter().find(|r| r["title"] == "Corruption probe").unwrap()
        ["cells"]["endpoint · SmolLM2-135M-Instruct-Q4_1"]
        .clone();
    assert!(corruption["raw"].as_str().unwrap().split(" (").next().unwrap().ends_with("/12 correct"), "{corruption}");
    assert_eq!(p.measurements().iter().filter(|r| r.cases.iter().any(|c| c.outcome == Outcome::Lost)).count(), 0);
}

#[test]
fn progress_is_drawn_on_a_terminal_and_nowhere_else() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let server = fake(&rt);
    let p = Project::new("");
    let args = format!(
        "{} sparktest --suite {} --endpoint {} --model fake-model chat::hello",
        env!("CARGO_BIN_EXE_cargo-sparktest"),
        fixture_suite(),
        server.url()
    );
    // `script` gives the harness a terminal.
    let tty =
        std::process::Command::new("script").args(["-qec", &args, "/dev/null"]).current_dir(p.path()).output().unwrap();
    let on_tty = String::from_utf8_lossy(&tty.stdout).to_string();
    assert!(on_tty.contains("cases") && on_tty.contains("pass"), "{on_tty}");
    let plain =
        p.run(&["--suite", &fixture_suite(), "--endpoint", &server.url(), "--model", "fake-model", "chat::hello"]);
    assert!(!String::from_utf8_lossy(&plain.stderr).contains("cases ·"), "{}", text(&plain));
}
