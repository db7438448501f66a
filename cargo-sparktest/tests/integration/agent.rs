//! The agent suites on the real reference target: complete, honest records.
//! The 135M model fails most tasks; that is a result, not a test failure.

use sparktest_record::Outcome;

use crate::support::*;

#[test]
fn a_bench_lists_sixty_cases_named_by_category() {
    let p = Project::new("");
    let out = p.run(&["--suite", &suite("a-bench"), "--list"]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let cases: Vec<&str> = stdout.lines().filter_map(|l| l.strip_suffix(": test")).collect();
    assert_eq!(cases.len(), 60, "{stdout}");
    for category in ["a-tool", "a-schema", "a-seq", "a-turn", "a-ctx"] {
        let n = cases.iter().filter(|c| c.starts_with(&format!("a-bench::{category}::"))).count();
        assert_eq!(n, 12, "{category}");
    }
}

#[test]
fn a_bench_and_adversarial_write_complete_records_on_the_reference_target() {
    // Long a-ctx prompts take minutes on one CPU thread under a loaded CI
    // machine: a generous call limit keeps a slow answer from being lost.
    let p = Project::new("request-timeout-secs = 1500");
    // A few cases, never the whole suites: every 12th A-Bench case is the
    // first of each of its five categories, every 5th adversarial case the
    // first of each of its four channels (the listing test counts all).
    for (name, part, count) in [("a-bench", "count:1/12", 5), ("adversarial", "count:1/5", 4)] {
        let out = p.run(&["--suite", &suite(name), "--partition", part, "--test-threads", "2"]);
        assert!(matches!(out.status.code(), Some(0) | Some(101)), "{}", text(&out));
        let runs = p.measurements();
        let run = runs.iter().find(|r| r.manifest.suite.name == name).unwrap();
        assert_eq!(run.cases.len(), count, "{name}: one record per case");
        let mut groups: Vec<&str> = run.cases.iter().map(|c| c.id.rsplit_once("::").unwrap().0).collect();
        groups.sort();
        groups.dedup();
        assert_eq!(groups.len(), count, "{name}: one case of each category");
        assert_eq!(run.count(Outcome::Lost), 0, "{name}: no lost case while the server is healthy");
        for c in &run.cases {
            assert!(matches!(c.outcome, Outcome::Pass | Outcome::Fail), "{c:?}");
            if c.outcome == Outcome::Fail {
                assert!(c.reason.as_deref().is_some_and(|r| !r.is_empty()), "{c:?}");
            }
            assert!(c.seconds > 0.0 && !c.calls.is_empty(), "{c:?}");
        }
        let summary = run.summary.as_ref().unwrap();
        let readout = summary.instruments.iter().find(|i| i.name == name).unwrap();
        assert_eq!(readout.given, count as u64);
        assert!(readout.mean_seconds > 0.0);
        if name == "adversarial" {
            // Every failure names the rule it broke.
            for c in run.cases.iter().filter(|c| c.outcome == Outcome::Fail) {
                let reason = c.reason.as_deref().unwrap();
                assert!(reason.starts_with("rule: ") || reason.starts_with("rejected"), "{reason}");
            }
        } else {
            // Cases carry the board rows they feed.
            let tool = run.cases.iter().find(|c| c.id.starts_with("a-bench::a-tool::")).unwrap();
            assert!(tool.tags.iter().any(|t| t == "Tools & structured output"), "{:?}", tool.tags);
            let turn = run.cases.iter().find(|c| c.id.starts_with("a-bench::a-turn::")).unwrap();
            assert!(turn.tags.iter().any(|t| t == "Multi-turn & sequencing"), "{:?}", turn.tags);
            // Multi-turn tasks really took several turns.
            assert!(turn.calls.len() >= 2, "{turn:?}");
            // SmolLM2 under llama-server makes no tool call at all: every
            // answered task says so, and the board reads the column as
            // unable to call tools rather than as wrong answers.
            for c in &run.cases {
                assert_eq!(note(c, "tool-calls"), Some("0"), "{c:?}");
            }
        }
    }
}

#[test]
fn a_task_added_as_data_runs_without_code() {
    let p = Project::new("");
    // Build the instrument once through its suite, then use the component.
    let built = p.run(&["--suite", &suite("a-bench"), "--list"]);
    assert!(built.status.success(), "{}", text(&built));
    let wasm = target_dir().join("wasm32-wasip2/plugin/sparktest_a_bench.wasm");
    let dir = p.path().join("my-suite");
    std::fs::create_dir_all(dir.join("tasks")).unwrap();
    let task = r#"[{
        "id": "001_echo_code",
        "title": "repeat a code",
        "messages": [{"role": "user", "content": "Reply with exactly this code and nothing else: ZX-41"}],
        "max_tokens": 16,
        "expect": {"contains": ["zx-41"]}
    }]"#;
    std::fs::write(dir.join("tasks/a-seq.json"), task).unwrap();
    let sha = |f: &std::path::Path| {
        let out = std::process::Command::new("sha256sum").arg(f).output().unwrap();
        String::from_utf8_lossy(&out.stdout).split_whitespace().next().unwrap().to_string()
    };
    let digest = sha(&dir.join("tasks/a-seq.json"));
    // The component sits in the suite folder, as every file of a suite does.
    std::fs::copy(&wasm, dir.join("a-bench.wasm")).unwrap();
    std::fs::write(
        dir.join("suite.toml"),
        format!(
            "[suite]\nname = \"mine\"\nversion = \"1\"\n[[instrument]]\nwasm = \"a-bench.wasm\"\nsha256 = \"{}\"\n[instrument.config]\ncategories = [\"a-seq\"]\n[files]\n\"tasks/a-seq.json\" = \"{digest}\"\n",
            sha(&wasm)
        ),
    )
    .unwrap();
    let out = p.run(&["--suite", &dir.display().to_string()]);
    assert!(matches!(out.status.code(), Some(0) | Some(101)), "{}", text(&out));
    let runs = p.measurements();
    let c = runs[0].case("a-bench::a-seq::001_echo_code");
    assert!(matches!(c.outcome, Outcome::Pass | Outcome::Fail), "{c:?}");
    assert_eq!(c.calls.len(), 1);
}
