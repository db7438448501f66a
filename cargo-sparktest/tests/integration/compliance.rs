//! The compliance suites end to end on the reference target, with the
//! reference server also serving as the judge (a tiny judge is a real, poor
//! judge: these tests check the mechanics and the records, not the model).

use std::time::{Duration, Instant};

use sparktest_record::Outcome;

use crate::support::*;

const MODEL: &str = "SmolLM2-135M-Instruct-Q4_1";

fn listed(p: &Project, suite_arg: &str) -> Vec<String> {
    let out = p.run(&["--suite", suite_arg, "--list"]);
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| l.strip_suffix(": test")).map(str::to_string).collect()
}

#[test]
fn the_suites_list_every_item_bare_and_in_agent_context() {
    let p = Project::new("");
    let general = listed(&p, &suite("compliance"));
    assert_eq!(general.len(), 140, "63 + 7 items, bare and agent");
    assert_eq!(general.iter().filter(|c| c.starts_with("compliance::general::bare::h")).count(), 63);
    assert_eq!(general.iter().filter(|c| c.starts_with("compliance::general::agent::l")).count(), 7);
    let severe = listed(&p, &suite("compliance-severe"));
    assert_eq!(severe.len(), 60);
    assert!(severe.iter().all(|c| c.starts_with("compliance::severe::")), "{severe:?}");
}

#[test]
fn judged_and_keyword_classified_records() {
    let p = Project::new("");
    // Judged: the launched reference target grades its own replies.
    let out = p.run(&["--suite", &test_suite("compliance-quick"), "--judge", "local", "quick::bare::"]);
    assert!(matches!(out.status.code(), Some(0) | Some(101)), "{}", text(&out));
    let runs = p.measurements();
    let run = &runs[0];
    assert_eq!(run.manifest.judge.as_ref().map(|j| j.name.as_str()), Some("local"));
    assert_eq!(run.cases.len(), 4);
    for c in &run.cases {
        assert_ne!(c.outcome, Outcome::Lost, "{c:?}");
        let class = note(c, "class").unwrap_or_default();
        assert!(["complied", "refused", "empty"].contains(&class), "{c:?}");
        assert_eq!(c.outcome == Outcome::Pass, class == "complied", "{c:?}");
        let kinds: Vec<&str> = c.calls.iter().map(|k| k.kind.as_str()).collect();
        if class == "empty" {
            assert_eq!(kinds, ["chat"], "nothing to grade");
            continue;
        }
        assert!(note(c, "classifier").is_some_and(|x| x.starts_with("judge local")), "{c:?}");
        assert!(note(c, "rubric").is_some_and(|x| x.starts_with("strongreject sha256:")), "{c:?}");
        assert!(note(c, "judge-reply").is_some_and(|x| !x.is_empty()), "{c:?}");
        assert!(metric(c, "strongreject-score").is_some_and(|s| (0.0..=1.0).contains(&s)), "{c:?}");
        assert_eq!(kinds.first(), Some(&"chat"));
        assert!(kinds[1..].iter().all(|k| *k == "judge") && kinds.len() <= 3, "{kinds:?}");
    }
    assert_eq!(note(run.case("compliance::quick::bare::l01-friend-thinking-suicide"), "kind"), Some("legitimate"));

    // Without a judge: the keyword classifier, and the record says so. In
    // agent context the deployed agent's tools go with the request.
    let out = p.run(&[
        "--suite",
        &test_suite("compliance-quick"),
        "--exact",
        "compliance::quick::agent::h01-deceptive-email-banking",
    ]);
    assert!(matches!(out.status.code(), Some(0) | Some(101)), "{}", text(&out));
    let runs = p.measurements();
    let c = runs[1].case("compliance::quick::agent::h01-deceptive-email-banking");
    assert!(runs[1].manifest.judge.is_none());
    assert_eq!(note(c, "context"), Some("agent"));
    if note(c, "class") != Some("empty") {
        assert_eq!(note(c, "classifier"), Some("keyword"), "{c:?}");
    }
    let t = std::fs::read_to_string(
        p.path().join("measurements/transcripts").join(format!("{}.json", c.transcript_sha256)),
    )
    .unwrap();
    assert!(t.contains("send_email") && t.contains("Memory recall"), "the agent context went with the request");
}

#[test]
fn a_dead_judge_loses_the_cases_naming_it() {
    let target = Server::start();
    let mut judge = Server::start();
    let p = Project::new(&format!(
        "max-lost-in-row = 2\n[target.grader]\nmodel = \"{MODEL}\"\nbase-url = \"{}\"\n",
        judge.url
    ));
    let mut child = p
        .command(&[
            "--suite",
            &test_suite("compliance-quick"),
            "--endpoint",
            &target.url,
            "--model",
            MODEL,
            "--judge",
            "grader",
            "--test-threads",
            "1",
            "quick::bare::",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Once one case is on disk, the judge dies.
    let started = Instant::now();
    loop {
        let done = p.cases_written();
        if done >= 1 {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(300), "no case finished");
        std::thread::sleep(Duration::from_millis(100));
    }
    judge.kill();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(101));
    let run = &p.measurements()[0];
    let lost: Vec<_> = run.cases.iter().filter(|c| c.outcome == Outcome::Lost).collect();
    assert!(!lost.is_empty(), "{:?}", run.cases);
    for c in &lost {
        let why = c.reason.as_deref().unwrap();
        assert!(why.starts_with("judge grader:") || why.contains("the run stopped"), "{why}");
        // The target answered; the judge did not.
        if !c.calls.is_empty() {
            assert_eq!(c.calls[0].result, "ok", "{c:?}");
        }
    }
    assert!(lost.iter().any(|c| c.reason.as_deref().unwrap().starts_with("judge grader:")));
}
