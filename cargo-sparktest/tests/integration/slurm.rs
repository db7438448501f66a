//! Campaigns on a real Slurm (issue 37): a single-node cluster of Debian's
//! `slurm-wlm` and `munge`, started by `scripts/slurm.sh` (as root), each
//! configuration of the reference target an array task. One task is
//! requeued in the middle of a suite and resumes; another campaign has a
//! task cancelled, which the board names as not run with Slurm's word.

use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::*;

/// One cluster at a time: it listens on fixed ports.
fn one_cluster() -> MutexGuard<'static, ()> {
    static CLUSTER: Mutex<()> = Mutex::new(());
    CLUSTER.lock().unwrap_or_else(|p| p.into_inner())
}

/// A running single-node Slurm, stopped when dropped.
struct Cluster {
    state: tempfile::TempDir,
    conf: String,
}

impl Cluster {
    fn start() -> Cluster {
        assert_eq!(unsafe { libc::geteuid() }, 0, "slurmctld and slurmd run as root on these machines");
        let state = tempfile::tempdir().unwrap();
        let out =
            Command::new("bash").arg(repo().join("scripts/slurm.sh")).arg("start").arg(state.path()).output().unwrap();
        assert!(out.status.success(), "slurm.sh start: {}", text(&out));
        let said = String::from_utf8_lossy(&out.stdout);
        let conf = said.lines().find_map(|l| l.strip_prefix("slurm-conf=")).expect("slurm-conf=").to_string();
        Cluster { state, conf }
    }

    /// A Slurm client command against this cluster.
    fn run(&self, program: &str, args: &[&str]) -> Output {
        Command::new(program).args(args).env("SLURM_CONF", &self.conf).output().unwrap()
    }

    /// `scontrol -o show job ID`: `Key=Value` pairs of the job's lines.
    fn job(&self, id: &str) -> String {
        String::from_utf8_lossy(&self.run("scontrol", &["-o", "show", "job", id]).stdout).into_owned()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new("bash").arg(repo().join("scripts/slurm.sh")).arg("stop").arg(self.state.path()).output();
    }
}

/// A project whose campaign `s` measures the reference target under
/// `labels` (each its own column), two configurations at once.
fn project(labels: &[&str], suites: &[String]) -> Project {
    let p = Project::new("");
    let mut file = format!(
        "[campaign]\nname = \"s\"\nsuites = [{}]\nsettle-secs = 30\n\n[campaign.slurm]\nmax-parallel = 2\ncpus = 1\nmem = \"2G\"\ntime = \"20:00\"\n",
        suites.iter().map(|s| format!("\"{s}\"")).collect::<Vec<_>>().join(", ")
    );
    for (i, l) in labels.iter().enumerate() {
        file.push_str(&format!("\n[[configuration]]\ntarget = \"local\"\nname = \"c{i}\"\nlabel = \"{l}\"\n"));
    }
    std::fs::write(p.path().join("campaign.toml"), file).unwrap();
    p
}

/// The campaign's measurements folder's journal of a configuration.
fn journal(p: &Project, configuration: &str) -> String {
    std::fs::read_to_string(p.path().join(format!("measurements/campaigns/s-1/{configuration}.jsonl")))
        .unwrap_or_default()
}

/// Wait for `done`, polling, at most `limit`.
fn wait_for(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The ids `--slurm` submitted.
fn submitted(p: &Project) -> (String, String) {
    let s: Value = serde_json::from_str(
        &std::fs::read_to_string(p.path().join("measurements/campaigns/s-1/slurm/submitted.json")).unwrap(),
    )
    .unwrap();
    (s["array_job"].as_str().unwrap().to_string(), s["board_job"].as_str().unwrap().to_string())
}

fn board_of(p: &Project) -> (Value, String) {
    let dir = p.path().join("measurements/campaigns/s-1/board");
    (crate::board::standings(&dir), std::fs::read_to_string(dir.join("board.md")).unwrap())
}

fn submit(p: &Project, cluster: &Cluster) {
    let out = p
        .command(&["campaign", "campaign.toml", "--id", "s-1", "--slurm"])
        .env("SLURM_CONF", &cluster.conf)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let script = std::fs::read_to_string(p.path().join("measurements/campaigns/s-1/slurm/array.sbatch")).unwrap();
    assert!(
        script.contains("#SBATCH --array=0-") && script.contains("%2") && script.contains("#SBATCH --requeue"),
        "{script}"
    );
    assert!(script.contains("--configuration \"$SLURM_ARRAY_TASK_ID\""), "{script}");
}

/// Wait for the board job to end (it runs after every task, whatever
/// became of them) and its board.
fn wait_for_board(p: &Project, cluster: &Cluster, board: &str) {
    let standings = p.path().join("measurements/campaigns/s-1/board/standings.json");
    wait_for(Duration::from_secs(900), "the board job's board", || {
        standings.is_file() && cluster.job(board).contains("JobState=COMPLETED")
    });
}

#[test]
fn a_campaign_on_slurm_runs_a_task_per_configuration_and_a_requeued_task_resumes() {
    let _one = one_cluster();
    let cluster = Cluster::start();
    let p = project(&["first", "second", "third"], &[test_suite("campaign-chats"), test_suite("campaign-probe")]);
    // --dry-run writes the scripts and submits nothing.
    let dry = p.command(&["campaign", "campaign.toml", "--id", "s-0", "--slurm", "--dry-run"]).output().unwrap();
    assert_eq!(dry.status.code(), Some(0), "{}", text(&dry));
    assert!(p.path().join("measurements/campaigns/s-0/slurm/board.sbatch").is_file());
    assert!(!p.path().join("measurements/campaigns/s-0/slurm/submitted.json").exists());

    submit(&p, &cluster);
    let (array, board) = submitted(&p);
    // Requeue the first configuration's task in the middle of its first suite.
    wait_for(Duration::from_secs(300), "c0's first suite", || {
        journal(&p, "c0").lines().any(|l| l.contains("campaign-chats") && l.contains("\"started\""))
    });
    let requeue = cluster.run("scontrol", &["requeue", &format!("{array}_0")]);
    assert!(requeue.status.success(), "{}", text(&requeue));
    // While it runs, the status says where each configuration stands.
    let status = p.command(&["campaign", "status", "s-1"]).env("SLURM_CONF", &cluster.conf).output().unwrap();
    assert_eq!(status.status.code(), Some(0), "{}", text(&status));
    assert!(String::from_utf8_lossy(&status.stdout).contains(&format!("Slurm array job {array}")), "{}", text(&status));
    wait_for_board(&p, &cluster, &board);

    // c0 was taken up twice: the second time by the requeued task, which
    // resumed the suite it was stopped in.
    let c0 = journal(&p, "c0");
    let sessions: Vec<Value> =
        c0.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).filter(|l| l["type"] == "session").collect();
    assert_eq!(sessions.len(), 2, "{c0}");
    assert_eq!(sessions[1]["data"]["job"]["restart_count"], 1, "{c0}");
    assert!(c0.contains("interrupted by SIGTERM"), "the requeue's SIGTERM, journaled: {c0}");
    let (s, md) = board_of(&p);
    let columns = s["board"]["columns"].as_array().unwrap();
    assert_eq!(columns.len(), 3, "{columns:?}");
    let node = Command::new("hostname").arg("-s").output().unwrap();
    let node = String::from_utf8_lossy(&node.stdout).trim().to_string();
    for c in columns {
        let on = c["measured_on"].as_str().unwrap();
        assert!(on.contains(&format!("on {node}")) && on.contains("Slurm job"), "each column names its box: {on}");
    }
    // Nothing counted twice: c0's chats run is one run, its resume folded in.
    let chats: Vec<Run> = p
        .measurements()
        .into_iter()
        .filter(|r| r.manifest.suite.name == "campaign-chats" && r.manifest.target.name == "c0")
        .collect();
    assert_eq!(chats.len(), 2, "the interrupted run and its resume");
    assert!(chats.iter().any(|r| r.manifest.resumes.is_some()), "resumed by run id");
    let mut ids: Vec<&str> = chats.iter().flat_map(|r| r.cases.iter()).map(|c| c.id.as_str()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 4, "four cases, each once over the two files");
    // The requeue is in the run log and the Campaigns table.
    assert!(md.contains("requeued 1 time"), "{md}");
    assert!(md.contains("a resume's launch"), "{md}");
}

#[test]
fn a_cancelled_task_is_on_the_board_as_not_run_with_slurm_s_word() {
    let _one = one_cluster();
    let cluster = Cluster::start();
    let p = project(&["kept", "cancelled"], &[test_suite("campaign-chats"), test_suite("campaign-probe")]);
    submit(&p, &cluster);
    let (array, board) = submitted(&p);
    wait_for(Duration::from_secs(300), "c1's first suite", || {
        journal(&p, "c1").lines().any(|l| l.contains("campaign-chats") && l.contains("\"started\""))
    });
    let cancel = cluster.run("scancel", &[&format!("{array}_1")]);
    assert!(cancel.status.success(), "{}", text(&cancel));
    wait_for_board(&p, &cluster, &board);
    let (s, md) = board_of(&p);
    assert!(md.contains("CANCELLED"), "Slurm's word on the cancelled task: {md}");
    let row =
        md.lines().find(|l| l.contains("| s-1 | c1 |") && l.contains("not run")).unwrap_or_else(|| panic!("{md}"));
    assert!(row.contains("campaign-probe: not run") && row.contains("CANCELLED"), "{row}");
    // The kept configuration is a column; the status says c1 failed.
    assert!(s["board"]["columns"].as_array().unwrap().iter().any(|c| c["label"] == "kept"));
    let status = p.command(&["campaign", "status", "s-1"]).env("SLURM_CONF", &cluster.conf).output().unwrap();
    let said = String::from_utf8_lossy(&status.stdout).to_string();
    let line = said.lines().find(|l| l.trim_start().starts_with("c1")).unwrap_or_else(|| panic!("{said}"));
    assert!(line.contains("failed") && line.contains("CANCELLED"), "{said}");
    let _ = Path::new("");
}

/// Issue 46: what a campaign file or a path holds reaches Slurm as values.
/// An account with a space, quotes, `#`, `$()` and backticks comes before
/// the memory and time; the measurements folder and the campaign file's
/// name hold the same. Each task runs with every resource asked, its log
/// lands in the folder given, and nothing injected runs. A task whose
/// gate failed a case ran its configuration: COMPLETED, exit 0, the
/// verdict on the board; a task whose launch failed could not: FAILED,
/// exit 4.
#[test]
fn hostile_values_reach_slurm_whole_and_a_task_that_ran_its_suites_completes() {
    let _one = one_cluster();
    let cluster = Cluster::start();
    let p = Project::new(
        "[target.broken]\nmodel = \"nothing\"\n[target.broken.launch]\ncommand = [\"/bin/false\", \"--port\", \"{port}\"]\nstartup-timeout-secs = 5\n",
    );
    let hostile = "a b 'q' \"dq\" #h $(touch injected) `touch injected`";
    let file = format!(
        "[campaign]\nname = \"s\"\nsuites = [\"{}\", \"{}\"]\nsettle-secs = 30\n\n[campaign.slurm]\nmax-parallel = 2\n\
         account = \"{}\"\ncpus = 1\nmem = \"700M\"\ntime = \"20:00\"\n\n[[configuration]]\ntarget = \"broken\"\n\n\
         [[grid]]\nbase = \"local\"\nname = \"nometrics\"\n[grid.vary]\n\"--metrics\" = [\"absent\"]\n",
        test_suite("campaign-gate"),
        test_suite("campaign-probe"),
        hostile.replace('"', "\\\""),
    );
    let name = "c $(touch injected) 'q' \"dq\".toml";
    std::fs::write(p.path().join(name), file).unwrap();
    let measurements = p.path().join("m $(touch injected) `touch injected` 'q' \"dq\" #h 100%x");
    let m = measurements.display().to_string();
    let out = p
        .command(&["campaign", name, "--id", "s-1", "--slurm", "--measurements", &m])
        .env("SLURM_CONF", &cluster.conf)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let dir = measurements.join("campaigns/s-1");
    let s: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("slurm/submitted.json")).unwrap()).unwrap();
    let (array, board) = (s["array_job"].as_str().unwrap(), s["board_job"].as_str().unwrap());
    wait_for(Duration::from_secs(600), "the board job", || cluster.job(board).contains("JobState=COMPLETED"));
    let jobs = cluster.job(array);
    let task = |i: u32| {
        jobs.lines().find(|l| l.contains(&format!(" ArrayTaskId={i} "))).unwrap_or_else(|| panic!("{jobs}")).to_string()
    };
    for (i, state, code) in [(0, "FAILED", "4:0"), (1, "COMPLETED", "0:0")] {
        let t = task(i);
        let log = std::fs::read_to_string(dir.join(format!("slurm/logs/{array}_{i}.out"))).unwrap_or_default();
        assert!(t.contains(&format!("JobState={state} ")) && t.contains(&format!(" ExitCode={code} ")), "{t}\n{log}");
        assert!(t.contains(&format!(" Account={hostile} QOS=")), "the account whole: {t}");
        assert!(
            t.contains(" MinMemoryNode=700M ") && t.contains(" TimeLimit=00:20:00 "),
            "the resources after it: {t}"
        );
        assert!(dir.join(format!("slurm/logs/{array}_{i}.out")).is_file(), "its log in the folder given");
    }
    assert!(cluster.job(board).contains(&format!(" Account={hostile} QOS=")));
    assert!(dir.join(format!("slurm/logs/board-{board}.out")).is_file());
    assert!(!p.path().join("injected").exists(), "nothing injected ran");
    // The gate's verdict is on the board; the failed launch too.
    let md = std::fs::read_to_string(dir.join("board/board.md")).unwrap();
    assert!(md.contains(r"campaign-probe: not run: the gate \(campaign-gate\) failed"), "{md}");
    assert!(md.contains("failed to launch: target broken exited during startup"), "{md}");
    // A newline is refused before anything is written.
    std::fs::write(p.path().join("n.toml"), "[campaign]\nname = \"n\"\n[campaign.slurm]\nmem = \"1G\\n#SBATCH --mem=2G\"\n[[configuration]]\ntarget = \"local\"\n").unwrap();
    let out =
        p.command(&["campaign", "n.toml", "--id", "n-1", "--slurm"]).env("SLURM_CONF", &cluster.conf).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(text(&out).contains("campaign.slurm.mem: "), "{}", text(&out));
}
