//! `cargo sparktest campaign` (issue 29) on the real reference server:
//! configurations × suites, each configuration launched once, the gate
//! first, failures kept, Ctrl-C and `--resume`, a cut journal recovered,
//! `--plan`, and the board reading the campaign's files in order.

use std::time::{Duration, Instant};

use serde_json::Value;
use sparktest_record::Outcome;

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

/// Every configuration's journal lines as JSON, each step line naming its
/// configuration (one journal per configuration, in name order).
fn journal(p: &Project, id: &str) -> Vec<Value> {
    let dir = p.path().join(format!("measurements/campaigns/{id}"));
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|f| f.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    files
        .iter()
        .flat_map(|f| std::fs::read_to_string(f).unwrap().lines().map(str::to_string).collect::<Vec<_>>())
        .filter_map(|l| serde_json::from_str(&l).ok())
        .collect()
}

/// One configuration's journal file.
fn journal_file(p: &Project, id: &str, configuration: &str) -> std::path::PathBuf {
    p.path().join(format!("measurements/campaigns/{id}/{configuration}.jsonl"))
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
        let lines = std::fs::read_to_string(journal_file(&p, "night-1", "local-metrics-present")).unwrap_or_default();
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
    let present = std::fs::read_to_string(journal_file(&p, "night-1", "local-metrics-present")).unwrap();
    let end: Value = serde_json::from_str(present.lines().last().unwrap()).unwrap();
    assert_eq!(end["data"]["interrupted"], "SIGINT", "{present}");
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

    // Resume after cutting a journal's last line, as a disk losing its
    // end would.
    let path = journal_file(&p, "night-1", "local-metrics-present");
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
    let summary = std::fs::read_to_string(p.path().join("measurements/campaigns/night-1/summary.md")).unwrap();
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
    // `campaign status`: the configuration that failed its gate says so,
    // with why, never "done".
    let out = p.run(&["campaign", "status", "night-1"]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    let line =
        said.lines().find(|l| l.trim_start().starts_with("local-metrics-absent ")).unwrap_or_else(|| panic!("{said}"));
    assert!(line.contains("gate failed") && line.contains("campaign-gate) failed"), "{line}");
    assert!(line.contains("not run: ") && line.contains("campaign-probe"), "the suites it skipped: {line}");
    let passed = said.lines().find(|l| l.trim_start().starts_with("local-metrics-present ")).unwrap();
    assert!(passed.contains(" done"), "{passed}");

    // One configuration by its index, as a Kubernetes Indexed Job's pod
    // runs it (no Slurm here): its failed gate is data, exit 0; a launch
    // that failed is a configuration not run, exit 4.
    let out = p.run(&["campaign", "campaign.toml", "--id", "night-2", "--configuration", "3"]);
    assert_eq!(out.status.code(), Some(0), "a failed gate and failed cases are verdicts: {}", text(&out));
    let lines = journal(&p, "night-2");
    let absent = steps(&lines, "local-metrics-absent", "suite");
    assert_eq!(absent[absent.len() - 2]["gate"], false, "the gate did fail: {absent:?}");
    let out = p.run(&["campaign", "campaign.toml", "--id", "night-2", "--configuration", "1"]);
    assert_eq!(out.status.code(), Some(4), "the launch failed: {}", text(&out));
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

/// The launched server's process (not its watchdog) among the children of
/// the harness process `parent`, by its command name.
fn server_child(parent: u32, comm: &str) -> Option<i32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: i32 = e.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let rest = &stat[stat.rfind(')')? + 2..];
        let ppid: u32 = rest.split_whitespace().nth(1)?.parse().ok()?;
        let name = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
        (ppid == parent && name.trim() == comm).then_some(pid)
    })
}

/// Issue 35's campaign faults on the real reference server: the server is
/// killed (SIGKILL, as the kernel's out-of-memory killer would) as the
/// configuration's first suite begins. The suite ends there
/// with the server's exit status as the lost cases' reason, the next suite
/// is "not run: the server died", the stop says the server had died, and
/// the board's Campaigns table names it. A second `--resume` of the same
/// id while the first runs is refused naming the first; the resume
/// relaunches, measures what the death left, and the summary counts each
/// suite's whole run. A byte damaged in the middle of the journal is
/// refused by line, and nothing is deleted.
#[test]
fn a_server_that_dies_mid_suite_stops_its_configuration_and_a_resume_measures_what_it_left() {
    let p = Project::new("");
    std::fs::write(
        p.path().join("campaign.toml"),
        format!(
            "[campaign]\nname = \"faults\"\nsuites = [\"{}\", \"{}\"]\nsettle-secs = 30\n\n[[configuration]]\ntarget = \"local\"\n",
            test_suite("campaign-chats"),
            test_suite("campaign-probe"),
        ),
    )
    .unwrap();
    let child = p
        .command(&["campaign", "campaign.toml", "--id", "f-1"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once the first suite has begun (its run id journaled, its cases
    // about to reach the server), kill its server.
    let started = Instant::now();
    let begun = || {
        std::fs::read_to_string(journal_file(&p, "f-1", "local"))
            .unwrap_or_default()
            .lines()
            .any(|l| l.contains("campaign-chats") && l.contains("\"started\""))
    };
    let killed = loop {
        if begun()
            && let Some(pid) = server_child(child.id(), "llama-server")
        {
            unsafe { libc::kill(pid, libc::SIGKILL) };
            break pid;
        }
        assert!(started.elapsed() < Duration::from_secs(300), "the first suite never recorded a case");
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(101), "{err}");
    let lines = journal(&p, "f-1");
    let chats: Vec<&Value> = steps(&lines, "local", "suite")
        .into_iter()
        .filter(|s| s["suite"].as_str().unwrap().ends_with("campaign-chats") && s["state"] != "started")
        .collect();
    assert_eq!(chats.len(), 1, "{lines:?}");
    assert_eq!(chats[0]["state"], "failed", "the suite the server died in: {:?}", chats[0]);
    let why = chats[0]["reason"].as_str().unwrap();
    assert!(why.contains("the server of target local exited") && why.contains("signal: 9"), "{why}");
    let probe = steps(&lines, "local", "suite")
        .into_iter()
        .find(|s| s["suite"].as_str().unwrap().ends_with("campaign-probe"))
        .expect("the next suite is journaled");
    assert_eq!((probe["state"].as_str(), probe["skip"].as_str()), (Some("skipped"), Some("server-gone")), "{probe}");
    assert!(
        probe["reason"].as_str().unwrap().starts_with("not run: the server died in suite campaign-chats"),
        "{probe}"
    );
    let stop = steps(&lines, "local", "stop");
    assert!(stop[0]["reason"].as_str().unwrap().starts_with("the server had died"), "{stop:?}");
    // The cases the death left are lost with its words, never "done".
    let chat_run = p.measurements().into_iter().find(|r| r.manifest.suite.name == "campaign-chats").unwrap();
    let lost: Vec<_> = chat_run.cases.iter().filter(|c| c.outcome == Outcome::Lost).collect();
    assert!(!lost.is_empty(), "{:?}", chat_run.cases);
    assert!(lost.iter().all(|c| c.reason.as_deref().unwrap().contains("exited (signal: 9")), "{lost:?}");
    assert!(chat_run.summary.as_ref().unwrap().stopped.as_deref().unwrap().contains("exited"));
    let record = p.measurements().into_iter().find(|r| r.manifest.run_id == "f-1-local-campaign").unwrap();
    assert!(
        record.cases.iter().any(|c| c.case == "stop::server-died" && c.outcome == Outcome::Fail),
        "{:?}",
        record.cases
    );
    assert_ne!(killed, 0);

    // A byte damaged in the middle of the journal: refused by its line,
    // nothing dropped; put back, the resume goes on.
    let path = journal_file(&p, "f-1", "local");
    let whole = std::fs::read(&path).unwrap();
    let second = whole.iter().position(|b| *b == b'\n').unwrap() + 1;
    let mut damaged = whole.clone();
    damaged[second + 2] = b'#';
    std::fs::write(&path, &damaged).unwrap();
    let out = p.run(&["campaign", "campaign.toml", "--resume", "f-1"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(text(&out).contains("line 2 is damaged") && text(&out).contains("--force"), "{}", text(&out));
    assert_eq!(std::fs::read(&path).unwrap(), damaged, "nothing deleted");
    std::fs::write(&path, &whole).unwrap();

    // Two resumes of one id at once: the second is refused, naming the first.
    let first = p
        .command(&["campaign", "campaign.toml", "--resume", "f-1"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let lock = p.path().join("measurements/campaigns/f-1/all.lock");
    let started = Instant::now();
    while !lock.exists() {
        assert!(started.elapsed() < Duration::from_secs(60), "the first resume never took its lock");
        std::thread::sleep(Duration::from_millis(20));
    }
    let second = p.run(&["campaign", "campaign.toml", "--resume", "f-1"]);
    let said = text(&second);
    assert_eq!(second.status.code(), Some(3), "{said}");
    assert!(said.contains(&format!("campaign f-1 (every configuration) is in use by pid {}", first.id())), "{said}");
    let out = first.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!lock.exists(), "released");
    // The resume relaunched and measured what the death left: every suite
    // done, each counted whole.
    let lines = journal(&p, "f-1");
    assert_eq!(steps(&lines, "local", "launch").iter().filter(|s| s["state"] == "done").count(), 2, "{lines:?}");
    let ends = lines.iter().filter(|l| l["type"] == "end").count();
    assert_eq!(ends, 2, "one end per process that took the configuration up: {lines:?}");
    let summary = std::fs::read_to_string(p.path().join("measurements/campaigns/f-1/summary.md")).unwrap();
    let row =
        summary.lines().find(|l| l.contains("| campaign-chats | done |")).unwrap_or_else(|| panic!("{summary}\n{err}"));
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    let counted: u64 = cells[4..8].iter().map(|c| c.parse::<u64>().unwrap_or(0)).sum();
    assert_eq!(counted, 4, "the whole run's four cases, not the resumed part: {row}");
    assert!(summary.contains("| campaign-probe | done |"), "{summary}");
    // The board's Campaigns table: both launches, in order, the first
    // naming the death.
    let out = p.run(&["board"]);
    assert!(out.status.success(), "{}", text(&out));
    let md = std::fs::read_to_string(p.path().join("board/board.md")).unwrap();
    let first_row = md.find("the campaign's launch").unwrap_or_else(|| panic!("{md}"));
    let second_row = md.find("a resume's launch").unwrap_or_else(|| panic!("{md}"));
    assert!(first_row < second_row, "in order: {md}");
    assert!(md.contains("SERVER DIED: the server of target local exited"), "{md}");
}

/// Grids and identity (issue 35): a grid named as a target is refused
/// before anything launches (exit 3, its line and key named), and a port
/// given to the server as a positional argument is the launch's, never
/// the configuration's: two runs of the same target, each launched on
/// its own port, are one board column.
#[test]
fn a_grid_named_as_a_target_is_refused_and_a_positional_port_makes_no_column_of_its_own() {
    let p = Project::new(
        "[target.wrapped]\nmodel = \"SmolLM2-135M-Instruct-Q4_1\"\n[target.wrapped.launch]\nprovision = \"builtin:reference-target\"\n\
         command = [\"bash\", \"-c\", \"exec \\\"$0\\\" --model \\\"$1\\\" --alias SmolLM2-135M-Instruct-Q4_1 --host 127.0.0.1 --port \\\"$2\\\" --threads 1 --parallel 1\", \"{server}\", \"{model}\", \"{port}\"]\n\
         health-path = \"/health\"\n",
    );
    std::fs::write(
        p.path().join("shadow.toml"),
        format!(
            "[campaign]\nname = \"s\"\nsuites = [\"{}\"]\n\n[[grid]]\nbase = \"local\"\nname = \"wrapped\"\n[grid.vary]\n\"--seed\" = [\"7\"]\n",
            test_suite("campaign-probe")
        ),
    )
    .unwrap();
    let out = p.run(&["campaign", "shadow.toml", "--plan"]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(3), "{said}");
    assert!(said.contains("shadow.toml:7: grid[1].name: \"wrapped\" is the name of a target"), "{said}");
    for _ in 0..2 {
        let out = p.run(&["--suite", &test_suite("campaign-probe"), "--target", "wrapped"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    }
    let runs = p.measurements();
    let ports: Vec<&str> = runs
        .iter()
        .filter_map(|r| r.manifest.target.facts.iter().find(|(k, _)| k == sparktest_record::LAUNCH_PORT))
        .map(|(_, v)| v.as_str())
        .collect();
    assert_eq!(ports.len(), 2);
    assert_ne!(ports[0], ports[1], "each launch on a port of its own");
    let out = p.run(&["board"]);
    assert!(out.status.success(), "{}", text(&out));
    let s = crate::board::standings(&p.path().join("board"));
    let columns = s["board"]["columns"].as_array().unwrap();
    assert_eq!(columns.len(), 1, "one configuration, one column: {columns:?}");
    // The launch command's home folder is written `~` on the board.
    let html = std::fs::read_to_string(p.path().join("board/board.html")).unwrap();
    let home = std::env::var("HOME").unwrap();
    assert!(html.contains("~/.cache/sparktest/reference/"), "the server's path, from the home folder");
    assert!(!html.contains(&format!("{home}/.cache")), "no absolute home folder on the board");
}

/// A journal line that is not UTF-8 is a damaged line like any other
/// (issue 46): a resume refuses it by its number and deletes nothing, and
/// `--force` drops that line alone, the others kept byte for byte and the
/// journal as it was kept beside it. A configuration whose launch fails
/// writes a journal of several lines with no server.
#[test]
fn a_journal_line_that_is_not_utf8_is_refused_by_number_and_dropped_alone_with_force() {
    let p = Project::new(
        "[target.broken]\nmodel = \"nothing\"\n[target.broken.launch]\ncommand = [\"/bin/false\", \"--port\", \"{port}\"]\nstartup-timeout-secs = 5\n",
    );
    std::fs::write(
        p.path().join("campaign.toml"),
        format!(
            "[campaign]\nname = \"bytes\"\nsuites = [\"{}\"]\n\n[[configuration]]\ntarget = \"broken\"\n",
            test_suite("campaign-probe")
        ),
    )
    .unwrap();
    let first = p.run(&["campaign", "campaign.toml", "--id", "b-1"]);
    let path = journal_file(&p, "b-1", "broken");
    let whole = std::fs::read(&path).unwrap_or_else(|e| panic!("{e}: {}", text(&first)));
    let lines: Vec<&[u8]> = whole.split_inclusive(|b| *b == b'\n').collect();
    assert!(lines.len() >= 3, "{}", String::from_utf8_lossy(&whole));
    let mut damaged = whole.clone();
    damaged[lines[0].len() + 3] = 0xff;
    std::fs::write(&path, &damaged).unwrap();

    let out = p.run(&["campaign", "campaign.toml", "--resume", "b-1"]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(3), "{said}");
    assert!(said.contains("line 2 is damaged (the line is not UTF-8") && said.contains("--force"), "{said}");
    assert_eq!(std::fs::read(&path).unwrap(), damaged, "nothing deleted");

    let out = p.run(&["campaign", "campaign.toml", "--resume", "b-1", "--force"]);
    let said = text(&out);
    assert_eq!(out.status.code(), first.status.code(), "as the first run ended: {said}");
    assert!(said.contains("--force dropped 1 damaged line(s) (line 2: the line is not UTF-8"), "{said}");
    let kept: Vec<u8> = lines.iter().enumerate().filter(|(i, _)| *i != 1).flat_map(|(_, l)| l.to_vec()).collect();
    let after = std::fs::read(&path).unwrap();
    assert!(after.starts_with(&kept) && after.len() > kept.len(), "{}", String::from_utf8_lossy(&after));
    let copy = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("broken.jsonl.damaged-"))
        .expect("the journal as it was, kept beside it");
    assert_eq!(std::fs::read(copy.path()).unwrap(), damaged);
}
