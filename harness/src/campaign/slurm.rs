//! A campaign on a Slurm cluster: `cargo sparktest campaign FILE --id ID
//! --slurm` writes an sbatch script with one array task per configuration
//! (each runs `campaign FILE --id ID --configuration $SLURM_ARRAY_TASK_ID`,
//! which takes up its configuration's journal where it stands, so a task
//! Slurm requeues resumes), and a board job that runs when the array ends
//! (`--dependency=afterany`), records what Slurm says of the tasks that did
//! not finish, and builds the board. Both are kept beside the journals
//! (`measurements/campaigns/<id>/slurm/`), readable, to review, edit and
//! submit by hand; `--dry-run` only writes them. Slurm is the scheduler:
//! one task per configuration lets it hand the next configuration to
//! whichever node frees first.
//!
//! What Slurm says of a task is read with `scontrol`, and with `sacct` for
//! the tasks `scontrol` has forgotten (no accounting database is assumed;
//! `sacct` answers only where one runs).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

use super::CampaignArgs;
use super::file::{Campaign, SlurmSettings};
use super::journal;
use crate::config::Config;
use crate::error::{Error, ErrorKind};
use crate::timestamp::rfc3339;

fn setup(message: String) -> Error {
    Error::new(ErrorKind::Setup, message)
}

fn io(what: String, e: std::io::Error) -> Error {
    Error::new(ErrorKind::Io, format!("failed to {what}: {e}"))
}

/// What `--slurm` submitted, kept beside the scripts for `status` and the
/// board job.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Submitted {
    /// The array job's id.
    pub array_job: String,
    /// The board job's id.
    pub board_job: String,
    /// RFC 3339 UTC.
    pub submitted_at: String,
}

/// The campaign's Slurm folder.
pub fn folder(dir: &Path) -> PathBuf {
    dir.join("slurm")
}

/// What was submitted for a campaign, when `--slurm` submitted it.
pub fn submitted(dir: &Path) -> Option<Submitted> {
    let text = std::fs::read_to_string(folder(dir).join("submitted.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// A word for a shell, quoted: `'it'\''s'`.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The `#SBATCH` lines the settings give (`gres`, `cpus`, `mem` and
/// `time` for the array's tasks only).
fn resources(s: &SlurmSettings, task: bool) -> String {
    let mut out = String::new();
    let mut line = |opt: &str| {
        let _ = writeln!(out, "#SBATCH {opt}");
    };
    if let Some(p) = &s.partition {
        line(&format!("--partition={p}"));
    }
    if let Some(a) = &s.account {
        line(&format!("--account={a}"));
    }
    if task {
        if let Some(g) = &s.gres {
            line(&format!("--gres={g}"));
        }
        if let Some(c) = s.cpus {
            line(&format!("--cpus-per-task={c}"));
        }
        if let Some(m) = &s.mem {
            line(&format!("--mem={m}"));
        }
        if let Some(t) = &s.time {
            line(&format!("--time={t}"));
        }
    }
    for e in &s.extra {
        line(e.trim());
    }
    out
}

/// The two scripts: the array (a task per configuration) and the board job.
pub fn scripts(
    campaign: &Campaign,
    project: &Config,
    file_arg: &str,
    id: &str,
    measurements: &Path,
    binary: &Path,
) -> (String, String) {
    let s = &campaign.slurm;
    let n = campaign.configurations.len();
    let m = s.max_parallel.map_or(n, |m| (m as usize).min(n)).max(1);
    let dir = journal::dir(measurements, id);
    let logs = folder(&dir).join("logs");
    let list: Vec<String> =
        campaign.configurations.iter().enumerate().map(|(i, c)| format!("#   {i}  {}", c.name)).collect();
    let setup: String = s.setup.iter().map(|l| format!("{l}\n")).collect();
    let common = format!("set -euo pipefail\n{setup}cd {}\n", quote(&project.root.display().to_string()));
    let array = format!(
        "#!/bin/bash\n\
         # cargo-sparktest campaign {name}, id {id}: one array task per configuration,\n\
         # written by `cargo sparktest campaign {file} --id {id} --slurm`. Review or edit\n\
         # it, then submit it with `sbatch`, and the board job after it with\n\
         # `sbatch --dependency=afterany:<this job's id> board.sbatch <this job's id>`.\n\
         # A requeued task (node failure, preemption, `scontrol requeue`) takes its\n\
         # configuration up where its journal stands.\n\
         #\n\
         # Task index and configuration:\n{list}\n\
         #SBATCH --job-name=sparktest-{id}\n\
         #SBATCH --array=0-{last}%{m}\n\
         #SBATCH --requeue\n\
         #SBATCH --open-mode=append\n\
         #SBATCH --output={logs}/%A_%a.out\n\
         {res}{common}\
         exec {bin} sparktest campaign {file_q} --id {id_q} --measurements {m_q} --configuration \"$SLURM_ARRAY_TASK_ID\"\n",
        name = campaign.name,
        file = file_arg,
        list = list.join("\n"),
        last = n.saturating_sub(1),
        logs = logs.display(),
        res = resources(s, true),
        bin = quote(&binary.display().to_string()),
        file_q = quote(file_arg),
        id_q = quote(id),
        m_q = quote(&measurements.display().to_string()),
    );
    let board = format!(
        "#!/bin/bash\n\
         # The board of campaign {id}, once its array job has ended (whatever became of\n\
         # each task): what Slurm says of the tasks that did not finish is recorded,\n\
         # then the board is built into {board}. Its argument is the array job's id.\n\
         #SBATCH --job-name=sparktest-{id}-board\n\
         #SBATCH --output={logs}/board-%j.out\n\
         {res}{common}\
         {bin} sparktest campaign status {id_q} --measurements {m_q} --record --array-job \"${{1:-}}\"\n\
         exec {bin} sparktest board --measurements {m_q} --out {board_q}\n",
        board = dir.join("board").display(),
        logs = logs.display(),
        res = resources(s, false),
        bin = quote(&binary.display().to_string()),
        id_q = quote(id),
        m_q = quote(&measurements.display().to_string()),
        board_q = quote(&dir.join("board").display().to_string()),
    );
    (array, board)
}

/// Write the scripts (and the campaign's plan), and submit them unless
/// `--dry-run`. Returns the exit code.
pub fn submit(
    campaign: &Campaign,
    project: &Config,
    args: &CampaignArgs,
    id: &str,
    measurements: &Path,
) -> Result<i32, Error> {
    let measurements =
        std::path::absolute(measurements).map_err(|e| io(format!("resolve {}", measurements.display()), e))?;
    let dir = journal::dir(&measurements, id);
    let slurm = folder(&dir);
    std::fs::create_dir_all(slurm.join("logs")).map_err(|e| io(format!("create {}", slurm.display()), e))?;
    // The campaign file as every task will find it: absolute where it is a
    // file, else the name of a [campaign.NAME] of the project's config.
    let given = args.cwd.join(&args.file);
    let file_arg = if given.is_file() {
        std::path::absolute(&given).map_or(args.file.clone(), |p| p.display().to_string())
    } else {
        args.file.clone()
    };
    let binary = std::env::current_exe().map_err(|e| io("find this program's path".into(), e))?;
    let (array, board) = scripts(campaign, project, &file_arg, id, &measurements, &binary);
    let array_path = slurm.join("array.sbatch");
    let board_path = slurm.join("board.sbatch");
    for (path, text) in [(&array_path, &array), (&board_path, &board)] {
        super::lock::replace(path, text.as_bytes()).map_err(|e| io(format!("write {}", path.display()), e))?;
    }
    let plan = journal::Plan {
        id: id.to_string(),
        name: campaign.name.clone(),
        file: campaign.file.display().to_string(),
        file_sha256: campaign.sha256.clone(),
        file_text: campaign.text.clone(),
        started_at: rfc3339(std::time::SystemTime::now()),
        configurations: campaign.configurations.clone(),
        suites: campaign.suites.clone(),
        on_gate_fail: campaign.on_gate_fail,
    };
    journal::plan_once(&dir, &plan)?;
    if args.dry_run {
        crate::warn_line!(
            "sparktest: campaign {id}: wrote {} and {} (nothing submitted); submit with\n  sbatch --parsable {}\n  \
             sbatch --dependency=afterany:<its id> {} <its id>",
            array_path.display(),
            board_path.display(),
            array_path.display(),
            board_path.display()
        );
        return Ok(sparktest_record::exit_code::OK);
    }
    let array_job = sbatch(&[], &array_path, None)?;
    let board_job = sbatch(&[format!("--dependency=afterany:{array_job}")], &board_path, Some(&array_job))?;
    let record = Submitted {
        array_job: array_job.clone(),
        board_job: board_job.clone(),
        submitted_at: rfc3339(std::time::SystemTime::now()),
    };
    let text = serde_json::to_string_pretty(&record).unwrap_or_default();
    super::lock::replace(&slurm.join("submitted.json"), text.as_bytes())
        .map_err(|e| io(format!("write {}", slurm.display()), e))?;
    crate::warn_line!(
        "sparktest: campaign {id}: submitted array job {array_job} ({} configurations, {} at once) and board job \
         {board_job} after it; scripts in {}; `cargo sparktest campaign status {id}` says where each stands",
        campaign.configurations.len(),
        campaign
            .slurm
            .max_parallel
            .map_or(campaign.configurations.len(), |m| m as usize)
            .min(campaign.configurations.len()),
        slurm.display()
    );
    Ok(sparktest_record::exit_code::OK)
}

/// `sbatch --parsable [opts] script [arg]`: the job id.
fn sbatch(opts: &[String], script: &Path, arg: Option<&str>) -> Result<String, Error> {
    let mut cmd = Command::new("sbatch");
    cmd.arg("--parsable").args(opts).arg(script);
    if let Some(a) = arg {
        cmd.arg(a);
    }
    let out = cmd.output().map_err(|e| {
        setup(format!(
            "failed to run sbatch ({e}): is Slurm's client on this machine's PATH? `--dry-run` only writes the scripts"
        ))
    })?;
    let said = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() {
        return Err(setup(format!(
            "sbatch {} refused it ({}): {}",
            script.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    // `--parsable` prints `id` or `id;cluster`.
    let id = said.split(';').next().unwrap_or_default().to_string();
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return Err(setup(format!("sbatch {} answered {said:?}, not a job id", script.display())));
    }
    Ok(id)
}

/// What Slurm says of one array task now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskState {
    /// `PENDING`, `RUNNING`, `COMPLETED`, `CANCELLED`, `TIMEOUT`, `FAILED`, `NODE_FAIL` …
    pub state: String,
    /// Slurm's reason (`JobArrayTaskLimit`, `TimeLimit`, `None` …).
    pub reason: String,
    /// Where it runs or ran.
    pub node: Option<String>,
}

impl TaskState {
    /// In words: `CANCELLED (reason: None) on vm`.
    pub fn describe(&self) -> String {
        let mut s = self.state.clone();
        if !self.reason.is_empty() && self.reason != "None" {
            s.push_str(&format!(" ({})", self.reason));
        }
        if let Some(n) = self.node.as_ref().filter(|n| !n.is_empty() && *n != "(null)") {
            s.push_str(&format!(" on {n}"));
        }
        s
    }
}

/// Every task Slurm still remembers of an array job, by task index:
/// `scontrol -o show job <id>` for the tasks it still holds (it keeps an
/// ended one for `MinJobAge`, 300 s by default), then `sacct` for those it
/// has forgotten, where an accounting database answers. Empty where
/// Slurm's client is not here or the job is forgotten by both. `sacct` is
/// asked only when `scontrol` knows fewer than `count` tasks.
pub fn tasks(array_job: &str, count: usize) -> std::collections::BTreeMap<String, TaskState> {
    let mut out = from_scontrol(array_job);
    if out.len() >= count {
        return out;
    }
    for (task, state) in from_sacct(array_job) {
        out.entry(task).or_insert(state);
    }
    out
}

/// `sacct -n -P -X -j <id> -o JobID,State,Reason,NodeList`: one line per
/// task (`1234_5|CANCELLED by 0|None|node1`), a pending remainder as
/// `1234_[3-5%2]`. Without accounting, sacct says so and lists nothing.
fn from_sacct(array_job: &str) -> std::collections::BTreeMap<String, TaskState> {
    let run = |fields: &str| {
        Command::new("sacct")
            .args(["-n", "-P", "-X", "-j", array_job, "-o", fields])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    };
    // Reason is a field of sacct from Slurm 20.11 on; older ones refuse it.
    let (text, with_reason) = match run("JobID,State,Reason,NodeList") {
        Some(t) => (t, true),
        None => (run("JobID,State,NodeList").unwrap_or_default(), false),
    };
    sacct_lines(array_job, &text, with_reason)
}

fn sacct_lines(array_job: &str, text: &str, with_reason: bool) -> std::collections::BTreeMap<String, TaskState> {
    let mut out = std::collections::BTreeMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split('|').collect();
        let (id, state, reason, node) = match (with_reason, f.as_slice()) {
            (true, [id, state, reason, node]) => (*id, *state, *reason, *node),
            (false, [id, state, node]) => (*id, *state, "", *node),
            _ => continue,
        };
        let Some(task) = id.strip_prefix(array_job).and_then(|t| t.strip_prefix('_')) else { continue };
        let task = task.trim_start_matches('[').trim_end_matches(']');
        // `CANCELLED by 0`: the state is the first word.
        let state = state.split_whitespace().next().unwrap_or_default().to_string();
        let node = match node.trim() {
            "" | "None assigned" => None,
            n => Some(n.to_string()),
        };
        for i in expand(task) {
            out.insert(i, TaskState { state: state.clone(), reason: reason.to_string(), node: node.clone() });
        }
    }
    out
}

fn from_scontrol(array_job: &str) -> std::collections::BTreeMap<String, TaskState> {
    let mut out = std::collections::BTreeMap::new();
    if let Ok(o) = Command::new("scontrol").args(["-o", "show", "job", array_job]).output() {
        for line in String::from_utf8_lossy(&o.stdout).lines() {
            let field =
                |k: &str| line.split_whitespace().find_map(|w| w.strip_prefix(&format!("{k}="))).map(str::to_string);
            if field("ArrayJobId").as_deref() != Some(array_job) {
                continue;
            }
            let Some(task) = field("ArrayTaskId") else { continue };
            // A pending remainder is listed as one line `ArrayTaskId=2-4%2`.
            let indices: Vec<String> = expand(&task);
            for i in indices {
                out.insert(
                    i,
                    TaskState {
                        state: field("JobState").unwrap_or_default(),
                        reason: field("Reason").unwrap_or_default(),
                        node: field("NodeList"),
                    },
                );
            }
        }
    }
    out
}

/// `2`, `2-4`, `2-4%2`, `1,3,5-6` as task indices.
fn expand(spec: &str) -> Vec<String> {
    let spec = spec.split('%').next().unwrap_or_default();
    let mut out = Vec::new();
    for part in spec.split(',') {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) {
                    out.extend((a..=b.min(a.saturating_add(100_000))).map(|i| i.to_string()));
                }
            }
            None if !part.is_empty() => out.push(part.to_string()),
            None => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_lists_expand_and_a_state_says_itself() {
        assert_eq!(expand("2"), ["2"]);
        assert_eq!(expand("2-4%2"), ["2", "3", "4"]);
        assert_eq!(expand("1,3,5-6"), ["1", "3", "5", "6"]);
        let t = TaskState { state: "CANCELLED".into(), reason: "None".into(), node: Some("vm".into()) };
        assert_eq!(t.describe(), "CANCELLED on vm");
        let t = TaskState { state: "TIMEOUT".into(), reason: "TimeLimit".into(), node: None };
        assert_eq!(t.describe(), "TIMEOUT (TimeLimit)");
        assert_eq!(quote("it's"), r"'it'\''s'");
    }

    #[test]
    fn sacct_lines_give_each_task_its_state() {
        let text = "77_0|COMPLETED|None|node1\n77_1|CANCELLED by 0|None|node2\n77_[2-3%1]|PENDING|JobArrayTaskLimit|None assigned\n78_0|FAILED|None|x\n";
        let t = sacct_lines("77", text, true);
        assert_eq!(t.len(), 4, "{t:?}");
        assert_eq!(t["1"].describe(), "CANCELLED on node2");
        assert_eq!(t["3"].describe(), "PENDING (JobArrayTaskLimit)");
        let t = sacct_lines("77", "77_4|TIMEOUT|node3\n", false);
        assert_eq!(t["4"].describe(), "TIMEOUT on node3");
    }
}
