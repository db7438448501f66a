//! `cargo sparktest campaign` (issue 29) on the real reference server:
//! configurations × suites, each configuration launched once, the gate
//! first, failures kept, Ctrl-C and `--resume`, a cut journal recovered,
//! `--plan`, and the board reading the campaign's files in order.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::*;

/// The project: the reference target, a target whose launch fails, and a
/// campaign of `local`, the failing one and a grid over `local` (with and
/// without `--metrics`, which the gate checks) × a gate and a probe suite.
fn project() -> Project {
    let p = Project::new(
        "[target.broken]\nmodel = \"nothing\"\n[target.broken.launch]\ncommand = [\"/bin/false\", \"--port\", \"{port}\"]\nstartup-timeout-secs = 5\n",
    );
    let campaign = format!(
        "[campaign]\nname = \"night\"\nsuites = [\"{}\", \"{}\"]\nsettle-secs = 30\n\n\
         [[configuration]]\ntarget = \"local\"\nlabel = \"local (campaign)\"\n\n\
         [[configuration]]\ntarget = \"broken\"\n\n\
         [[grid]]\nbase = \"local\"\nname = \"local-metrics-{{metrics}}\"\n[grid.vary]\n\"--metrics\" = [\"present\", \"absent\"]\n",
        test_suite("campaign-probe"),
        test_suite("campaign-gate"),
    );
    std::fs::write(p.path().join("campaign.toml"), campaign).unwrap();
    p
}

/// The journal's lines as JSON.
fn journal(p: &Project, id: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(p.path().join(format!("measurements/campaigns/{id}.jsonl"))).unwrap();
    text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

fn steps<'a>(lines: &'a [Value], configuration: &str, phase: &str) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|l| l["type"] == "step" && l["data"]["configuration"] == configuration && l["data"]["phase"] == phase)
        .map(|l| &l["data"])
        .collect()
}

#[test]
fn a_campaign_launches_each_configuration_once_gates_first_keeps_failures_and_resumes() {
    let p = project();
    // The plan: every configuration × suite with case counts, nothing launched.
    let plan = p.run(&["campaign", "campaign.toml", "--plan"]);
    assert_eq!(plan.status.code(), Some(0), "{}", text(&plan));
    let said = String::from_utf8_lossy(&plan.stdout);
    assert!(said.contains("4 of 4 configurations × 2 suites"), "{said}");
    assert!(said.contains("local-metrics-present (target local-metrics-present; grid: --metrics present)"), "{said}");
    assert!(said.contains("campaign-gate") && said.contains("2 cases, the gate"), "{said}");
    assert!(!p.path().join("measurements/campaigns").exists(), "--plan writes no journal");

    // Run it; Ctrl-C once the grid's first configuration has begun its probe.
    let child = p
        .command(&["campaign", "campaign.toml", "--id", "night-1"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    loop {
        let lines = std::fs::read_to_string(p.path().join("measurements/campaigns/night-1.jsonl")).unwrap_or_default();
        let begun = lines.lines().any(|l| {
            l.contains("\"configuration\":\"local-metrics-present\"")
                && l.contains("campaign-probe")
                && l.contains("started")
        });
        if begun {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(300), "the campaign made no progress: {lines}");
        std::thread::sleep(Duration::from_millis(20));
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(130), "{err}");
    let lines = journal(&p, "night-1");
    assert_eq!(lines.last().unwrap()["data"]["interrupted"], "SIGINT", "{lines:?}");
    // local: launched once, the gate first and passed, then the probe.
    let local = steps(&lines, "local", "launch");
    assert_eq!(local.iter().filter(|s| s["state"] == "done").count(), 1, "{local:?}");
    let suites: Vec<(&str, &str)> = steps(&lines, "local", "suite")
        .iter()
        .filter(|s| s["state"] != "started")
        .map(|s| (s["suite"].as_str().unwrap(), s["state"].as_str().unwrap()))
        .collect();
    assert_eq!(suites.len(), 2);
    assert!(suites[0].0.ends_with("campaign-gate"), "the gate runs first: {suites:?}");
    assert_eq!(steps(&lines, "local", "suite")[1]["gate"], true, "{lines:?}");
    // broken: the launch failed, recorded with its reason, its suites skipped.
    let broken = steps(&lines, "broken", "launch");
    assert!(
        broken.iter().any(|s| s["state"] == "failed" && s["reason"].as_str().unwrap().contains("exited")),
        "{broken:?}"
    );
    assert!(steps(&lines, "broken", "suite").iter().all(|s| s["state"] == "skipped"));
    // The interrupted suite is journaled as such.
    let probe = steps(&lines, "local-metrics-present", "suite");
    assert!(probe.iter().any(|s| s["state"] == "interrupted"), "{probe:?}");

    // Resume after cutting the journal's last line, as a power loss would.
    let path = p.path().join("measurements/campaigns/night-1.jsonl");
    let whole = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, &whole[..whole.len() - 10]).unwrap();
    let out = p.run(&["campaign", "campaign.toml", "--resume", "night-1"]);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(101), "a failed launch and a failed gate: {err}");
    assert!(err.contains("the line is cut short"), "the cut line is named: {err}");
    assert!(err.contains("local done earlier, not launched"), "{err}");
    let lines = journal(&p, "night-1");
    assert_eq!(
        steps(&lines, "local", "launch").iter().filter(|s| s["state"] == "done").count(),
        1,
        "not launched again"
    );
    // A launch that failed is tried again by the resume (a gate's verdict is not).
    let failed = steps(&lines, "broken", "launch").iter().filter(|s| s["state"] == "failed").count();
    assert_eq!(failed, 2, "{lines:?}");
    let present = steps(&lines, "local-metrics-present", "suite");
    let last = present.iter().rev().find(|s| s["suite"].as_str().unwrap().ends_with("campaign-probe")).unwrap();
    assert_eq!(last["state"], "done", "{present:?}");
    // The resumed probe finished through --resume of its run.
    let resumed: Vec<Run> = p.measurements().into_iter().filter(|r| r.manifest.resumes.is_some()).collect();
    assert!(resumed.iter().any(|r| r.manifest.target.name == "local-metrics-present"), "resumed by run id");
    // The grid's configuration without --metrics fails the gate: its probe
    // is skipped, saying why.
    let absent = steps(&lines, "local-metrics-absent", "suite");
    assert_eq!(absent[absent.len() - 2]["gate"], false, "{absent:?}");
    let skipped = absent.last().unwrap();
    assert_eq!(skipped["state"], "skipped");
    assert!(skipped["reason"].as_str().unwrap().contains("the gate (campaign-gate) failed"), "{skipped}");
    // Memory measured before each launch and after each stop.
    for c in ["local", "local-metrics-present", "local-metrics-absent"] {
        let stop = steps(&lines, c, "stop");
        assert!(stop.iter().any(|s| s["memory"]["before_gib"].as_f64().unwrap() > 0.0), "{c}: {stop:?}");
    }
    // Every file carries the campaign id and its configuration.
    let runs = p.measurements();
    assert!(runs.iter().all(|r| r.manifest.campaign.as_ref().is_some_and(|c| c.id == "night-1")), "campaign ids");
    let summary = std::fs::read_to_string(p.path().join("measurements/campaigns/night-1.summary.md")).unwrap();
    assert!(summary.contains("| local-metrics-absent | campaign-probe | skipped |"), "{summary}");

    // The board: the configurations' columns, the run log in order, the
    // failed launch and the skipped suite named, each launch's time.
    let out = p.run(&["board"]);
    assert!(out.status.success(), "{}", text(&out));
    let md = std::fs::read_to_string(p.path().join("board/board.md")).unwrap();
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(p.path().join("board/standings.json")).unwrap()).unwrap();
    let labels: Vec<&str> =
        s["board"]["columns"].as_array().unwrap().iter().map(|c| c["label"].as_str().unwrap()).collect();
    assert!(labels.contains(&"local (campaign)"), "{labels:?}");
    assert!(
        !labels.iter().any(|l| l.contains("broken")),
        "a configuration that never came up has no column: {labels:?}"
    );
    assert!(md.contains("failed to launch: target broken exited during startup"), "{md}");
    assert!(md.contains("## Campaigns"), "{md}");
    let html = std::fs::read_to_string(p.path().join("board/board.html")).unwrap();
    assert!(html.contains("campaign-probe: not run: the gate (campaign-gate) failed"), "the skipped suite, why");
    assert!(html.contains("healthy in "), "each launch's time to healthy");
    assert!(html.contains("given back in "), "the memory its server gave back");
    // The run log keeps every step's file in the order they ran.
    let logged: Vec<usize> =
        ["night-1-local-campaign", "night-1-broken-campaign", "night-1-local-metrics-absent-campaign"]
            .iter()
            .map(|id| md.find(&format!("| {id} |")).unwrap_or_else(|| panic!("{id} not in the run log: {md}")))
            .collect();
    assert!(logged.windows(2).all(|w| w[0] < w[1]), "in order: {logged:?}");
}

/// A campaign kept in the project's `sparktest.toml` as `[campaign.NAME]`
/// runs by its name; a name the file has not is refused with exit 3,
/// naming both what was looked for and where.
#[test]
fn a_campaign_table_of_sparktest_toml_is_planned_by_its_name() {
    let p = Project::new(&format!(
        "[campaign.night]\nsuites = [\"{}\", \"{}\"]\n[[campaign.night.configuration]]\ntarget = \"local\"\nlabel = \"from the project\"\n",
        test_suite("campaign-probe"),
        test_suite("campaign-gate"),
    ));
    let plan = p.run(&["campaign", "night", "--plan"]);
    assert_eq!(plan.status.code(), Some(0), "{}", text(&plan));
    let said = String::from_utf8_lossy(&plan.stdout);
    assert!(said.contains("1 of 1 configurations × 2 suites"), "{said}");
    assert!(said.contains("campaign-gate") && said.contains("2 cases, the gate"), "{said}");
    let out = p.run(&["campaign", "day", "--plan"]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(3), "{said}");
    assert!(
        said.contains("no such campaign file, and no [campaign.day] in") && said.contains("sparktest.toml"),
        "{said}"
    );
    // A mistake in the table is named by the project file's line and key.
    let p = Project::new(&format!(
        "[campaign.night]\nsuites = [\"{}\"]\n[[campaign.night.configuration]]\ntarget = \"nope\"\n",
        test_suite("campaign-probe")
    ));
    let out = p.run(&["campaign", "night", "--plan"]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(3), "{said}");
    assert!(
        said.contains("sparktest.toml:9: campaign.night.configuration[1].target: no target named \"nope\""),
        "{said}"
    );
}
