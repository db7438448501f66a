//! What the reader's unit tests build runs from.

use super::Run;
use crate::*;

pub(super) fn manifest(version: &str) -> Line {
    Line::Manifest(Manifest {
        format_version: version.into(),
        run_id: "r".into(),
        started_at: "2026-01-01T00:00:00Z".into(),
        harness: HarnessInfo { version: "0.1.0".into(), git_revision: None },
        suite: SuiteInfo { name: "s".into(), version: "1".into(), sha256: "00".into(), files: vec![] },
        target: TargetInfo {
            name: "t".into(),
            base_url: "http://127.0.0.1:1".into(),
            model_id: "m".into(),
            engine: "llama.cpp".into(),
            build: None,
            model_path: None,
            model_sha256: None,
            launch_command: None,
            facts: vec![],
            host: None,
            tool_choice: None,
            label: None,
            note: None,
            description: None,
        },
        client_host: HostInfo {
            hostname: None,
            cpu_model: None,
            cores: 2,
            memory_bytes: 1,
            memory_available_bytes: 1,
            os: None,
            kernel: None,
            accelerators: vec![],
        },
        route: "direct".into(),
        instruments: vec![],
        arms: vec![],
        client_ceiling: None,
        judge: None,
        partition: None,
        resumes: None,
        suite_cases: Default::default(),
        repeat: None,
        campaign: None,
        job: None,
        rows: Vec::new(),
    })
}

fn case(id: &str, outcome: &str) -> CaseRecord {
    serde_json::from_value(serde_json::json!({
        "id": id, "instrument": "a", "case": id, "tags": [], "outcome": outcome, "reason": null,
        "metrics": [], "notes": [], "started_at": "t", "seconds": 1.0, "endpoint_seconds": 0.5,
        "calls": [], "prompt_tokens": null, "completion_tokens": 10, "transcript_sha256": "00",
        "snapshots": []
    }))
    .unwrap()
}

fn summary() -> Summary {
    Summary {
        finished_at: "t".into(),
        seconds: 1.0,
        passed: 0,
        failed: 0,
        lost: 0,
        not_applicable: 0,
        instruments: vec![],
        gate: None,
        stopped: None,
        interrupted: None,
        interrupted_cases: 0,
    }
}

/// A run `id` started at `at`, with `(case, outcome)` records.
pub(super) fn run(id: &str, at: &str, cases: &[(&str, &str)]) -> Run {
    let Line::Manifest(mut m) = manifest("1.4") else { unreachable!() };
    m.run_id = id.into();
    m.started_at = at.into();
    let mut r = Run::new(m);
    r.cases = cases.iter().map(|(c, o)| case(c, o)).collect();
    r.summary = Some(summary());
    r
}
