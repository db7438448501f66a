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

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

use super::CampaignArgs;
use super::file::Campaign;
use super::journal;
use super::script::{self, SbatchOption, Slot};
use crate::config::Config;
use crate::error::Error;
use crate::timestamp::rfc3339;

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

/// The `#SBATCH` lines the settings give (`gres`, `cpus`, `mem` and
/// `time` for the array's tasks only), each value named by its key.
fn resources(campaign: &Campaign, task: bool) -> Vec<SbatchOption> {
    let s = &campaign.slurm;
    let key = |k: &str| format!("{}: [campaign.slurm] {k}", campaign.file.display());
    let mut out = Vec::new();
    let mut add = |flag: &'static str, k: &str, value: Option<String>| {
        if let Some(value) = value {
            out.push(SbatchOption { flag, key: key(k), value });
        }
    };
    add("--partition", "partition", s.partition.clone());
    add("--account", "account", s.account.clone());
    if task {
        add("--gres", "gres", s.gres.clone());
        add("--cpus-per-task", "cpus", s.cpus.map(|c| c.to_string()));
        add("--mem", "mem", s.mem.clone());
        add("--time", "time", s.time.clone());
    }
    // Each `extra` entry is one argument of sbatch, written whole.
    out.extend(s.extra.iter().map(|e| SbatchOption {
        flag: "",
        key: key("extra"),
        value: e.trim_matches(' ').to_string(),
    }));
    out
}

/// `--output` in a folder: Slurm reads `%` in it as a pattern (`%%` is
/// one `%`), and a backslash anywhere turns the patterns off, which would
/// put every task's log in one file named `%A_%a.out`.
fn output(logs: &Path, pattern: &str) -> Result<Slot, Error> {
    let folder = logs.display().to_string();
    if folder.contains('\\') {
        return Err(Error::setup(format!(
            "the measurements folder (--measurements) {folder:?} holds a backslash, which turns off Slurm's \
             %A/%a/%j in #SBATCH --output: give a folder without one"
        )));
    }
    Ok(Slot::Value {
        key: "the measurements folder (--measurements)".into(),
        value: format!("{}/{pattern}", folder.replace('%', "%%")),
    })
}

/// The two scripts: the array (a task per configuration) and the board
/// job. A value that cannot be written so that sbatch and bash read it
/// whole is refused, naming its key (exit 3).
pub fn scripts(
    campaign: &Campaign,
    project: &Config,
    file_arg: &str,
    id: &str,
    measurements: &Path,
    binary: &Path,
) -> Result<(String, String), Error> {
    let s = &campaign.slurm;
    let n = campaign.configurations.len();
    let m = s.max_parallel.map_or(n, |m| (m as usize).min(n)).max(1);
    let dir = journal::dir(measurements, id);
    let logs = folder(&dir).join("logs");
    let path = |p: &Path| Slot::Word(p.display().to_string());
    let common = |task: bool| {
        [
            ("id", Slot::Comment(id.to_string())),
            ("id-word", Slot::Word(id.to_string())),
            ("resources", Slot::Options(resources(campaign, task))),
            (
                "setup",
                Slot::Shell {
                    key: format!("{}: [campaign.slurm] setup", campaign.file.display()),
                    lines: s.setup.clone(),
                },
            ),
            ("project", path(&project.root)),
            ("binary", path(binary)),
            ("measurements", path(measurements)),
        ]
    };
    let mut array = common(true).to_vec();
    array.extend([
        ("name", Slot::Comment(campaign.name.clone())),
        ("file", Slot::Comment(file_arg.to_string())),
        ("file-word", Slot::Word(file_arg.to_string())),
        (
            "configurations",
            Slot::CommentLines(
                campaign.configurations.iter().enumerate().map(|(i, c)| format!("  {i}  {}", c.name)).collect(),
            ),
        ),
        ("job-name", Slot::Value { key: "--id".into(), value: format!("sparktest-{id}") }),
        (
            "array",
            Slot::Value {
                key: "[campaign.slurm] max-parallel".into(),
                value: format!("0-{}%{m}", n.saturating_sub(1)),
            },
        ),
        ("output", output(&logs, "%A_%a.out")?),
    ]);
    let mut board = common(false).to_vec();
    board.extend([
        ("board", Slot::Comment(dir.join("board").display().to_string())),
        ("board-word", path(&dir.join("board"))),
        ("job-name", Slot::Value { key: "--id".into(), value: format!("sparktest-{id}-board") }),
        ("output", output(&logs, "board-%j.out")?),
    ]);
    Ok((script::render(script::ARRAY, &array)?, script::render(script::BOARD, &board)?))
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
        std::path::absolute(measurements).map_err(|e| Error::io(format!("resolve {}", measurements.display()), e))?;
    // The campaign file as every task will find it: absolute where it is a
    // file, else the name of a [campaign.NAME] of the project's config.
    let given = args.cwd.join(&args.file);
    let file_arg = if given.is_file() {
        std::path::absolute(&given).map_or(args.file.clone(), |p| p.display().to_string())
    } else {
        args.file.clone()
    };
    let binary = std::env::current_exe().map_err(|e| Error::io("find this program's path", e))?;
    // Written before anything is created: a value refused leaves nothing.
    let (array, board) = scripts(campaign, project, &file_arg, id, &measurements, &binary)?;
    let dir = journal::dir(&measurements, id);
    let slurm = folder(&dir);
    std::fs::create_dir_all(slurm.join("logs")).map_err(|e| Error::io(format!("create {}", slurm.display()), e))?;
    let array_path = slurm.join("array.sbatch");
    let board_path = slurm.join("board.sbatch");
    for (path, text) in [(&array_path, &array), (&board_path, &board)] {
        crate::files::replace(path, text.as_bytes()).map_err(|e| Error::io(format!("write {}", path.display()), e))?;
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
            "sparktest: campaign {id}: wrote {} and {} (nothing submitted); submit with",
            array_path.display(),
            board_path.display()
        );
        crate::warn_line!("  sbatch --parsable {}", array_path.display());
        crate::warn_line!("  sbatch --dependency=afterany:<its id> {} <its id>", board_path.display());
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
    crate::files::replace(&slurm.join("submitted.json"), text.as_bytes())
        .map_err(|e| Error::io(format!("write {}", slurm.display()), e))?;
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
        Error::setup(format!(
            "failed to run sbatch ({e}): is Slurm's client on this machine's PATH? `--dry-run` only writes the scripts"
        ))
    })?;
    let said = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() {
        return Err(Error::setup(format!(
            "sbatch {} refused it ({}): {}",
            script.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    // `--parsable` prints `id` or `id;cluster`.
    let id = said.split(';').next().unwrap_or_default().to_string();
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Error::setup(format!("sbatch {} answered {said:?}, not a job id", script.display())));
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
    }

    /// The arguments sbatch reads from a script's `#SBATCH` lines, as its
    /// parser does (Slurm 22.05, `_get_argument` of sbatch/opt.c): up to
    /// the first line that is not a comment or blank; `"…"` and `'…'`
    /// group, `\` takes the next character but a space, an unquoted `#`
    /// ends the line.
    fn sbatch_reads(script: &str) -> Vec<String> {
        let mut args = Vec::new();
        for line in script.lines().skip(1) {
            let Some(rest) = line.strip_prefix("#SBATCH") else {
                if line.trim().is_empty() || line.trim_start().starts_with('#') {
                    continue;
                }
                break;
            };
            let (mut arg, mut quote, mut chars) = (None::<String>, None, rest.chars().peekable());
            while let Some(c) = chars.next() {
                match (quote, c) {
                    (_, '\\') if chars.peek().is_some_and(|n| quote.is_some() || !n.is_whitespace()) => {
                        arg.get_or_insert_default().extend(chars.next())
                    }
                    (Some(q), c) if c == q => quote = None,
                    (None, '"' | '\'') => {
                        quote = Some(c);
                        arg.get_or_insert_default();
                    }
                    (None, '#') => break,
                    (None, c) if c.is_whitespace() => args.extend(arg.take()),
                    (_, c) => arg.get_or_insert_default().push(c),
                }
            }
            args.extend(arg);
        }
        args
    }

    /// A campaign of two configurations under a hostile file path, with
    /// `[campaign.slurm]` set to `value` for every key.
    fn campaign(value: &str) -> Campaign {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let config = Config::load(&root, None).unwrap();
        let text = "[campaign]\nname = \"n\"\nsuites = [\"smoke\"]\n[[configuration]]\ntarget = \"local\"\n\
                    [[configuration]]\ntarget = \"local\"\nname = \"b\"\n";
        let mut c = Campaign::parse(Path::new(&format!("/c/{value}.toml")), text, &config).unwrap();
        let v = || Some(value.to_string());
        c.slurm = crate::campaign::file::SlurmSettings {
            partition: v(),
            account: v(),
            gres: v(),
            cpus: Some(2),
            mem: v(),
            time: v(),
            max_parallel: None,
            extra: vec![format!("--comment={value}")],
            setup: Vec::new(),
        };
        c
    }

    /// What bash runs of a script: its program's arguments, with a stand-in
    /// program that prints them, NUL-separated.
    fn bash_runs(script: &str, cwd: &Path) -> Vec<Vec<String>> {
        let path = cwd.join("script");
        std::fs::write(&path, script).unwrap();
        let check = Command::new("bash").arg("-n").arg(&path).output().unwrap();
        assert!(check.status.success(), "bash -n: {}\n{script}", String::from_utf8_lossy(&check.stderr));
        let out = Command::new("bash").arg(&path).arg("77").env("SLURM_ARRAY_TASK_ID", "1").output().unwrap();
        assert!(out.status.success(), "{}\n{script}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        text.split("\0\n").filter(|r| !r.is_empty()).map(|r| r.split('\0').map(str::to_string).collect()).collect()
    }

    #[test]
    fn every_value_reaches_sbatch_and_bash_whole_or_is_refused_by_its_key() {
        let tmp = tempfile::tempdir().unwrap();
        let program = tmp.path().join("print args");
        std::fs::write(&program, "#!/bin/sh\nfor a; do printf '%s\\0' \"$a\"; done; printf '\\n'\n").unwrap();
        let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
        std::fs::set_permissions(&program, mode).unwrap();
        let mut project = Config::load(tmp.path(), None).unwrap();
        project.root = tmp.path().to_path_buf();
        for value in ["a b", "it's \"q\"", "$(touch injected)", "`touch injected`", "#x %j 100%", "x\\y"] {
            let c = campaign(value);
            let file = c.file.display().to_string();
            let measurements = tmp.path().join(format!("m {value}").replace('\\', ""));
            let (array, board) = scripts(&c, &project, &file, "n-1", &measurements, &program).unwrap();
            // sbatch reads every option whole, the resources after it too.
            let args = sbatch_reads(&array);
            let logs = measurements.join("campaigns/n-1/slurm/logs").display().to_string().replace('%', "%%");
            for want in [
                format!("--partition={value}"),
                format!("--account={value}"),
                format!("--gres={value}"),
                "--cpus-per-task=2".into(),
                format!("--mem={value}"),
                format!("--time={value}"),
                format!("--comment={value}"),
                format!("--output={logs}/%A_%a.out"),
                "--array=0-1%2".into(),
            ] {
                assert!(args.contains(&want), "{want:?} not in {args:?}\n{array}");
            }
            assert_eq!(args.len(), 12, "{args:?}");
            let board_args = sbatch_reads(&board);
            assert!(
                board_args.contains(&format!("--account={value}"))
                    && !board_args.iter().any(|a| a.starts_with("--mem"))
            );
            assert!(board_args.contains(&format!("--output={logs}/board-%j.out")), "{board_args:?}");
            // bash runs the one command, each path one word, nothing injected.
            let m = measurements.display().to_string();
            let ran = bash_runs(&array, tmp.path());
            assert_eq!(
                ran,
                [["sparktest", "campaign", &file, "--id", "n-1", "--measurements", &m, "--configuration", "1"]]
            );
            let ran = bash_runs(&board, tmp.path());
            assert_eq!(ran.len(), 2, "{ran:?}");
            assert_eq!(ran[1][..3], ["sparktest", "board", "--measurements"]);
            assert_eq!(ran[1][3], m);
            assert!(!tmp.path().join("injected").exists());
        }
        // A control character in any key is refused, naming it; in a
        // comment it is escaped; in a word it is part of the word.
        for key in ["partition", "account", "gres", "mem", "time", "extra"] {
            let mut c = campaign("ok");
            let bad = Some("x\n#SBATCH --mem=1".to_string());
            match key {
                "partition" => c.slurm.partition = bad,
                "account" => c.slurm.account = bad,
                "gres" => c.slurm.gres = bad,
                "mem" => c.slurm.mem = bad,
                "time" => c.slurm.time = bad,
                _ => c.slurm.extra = vec!["--qos=x\r".into()],
            }
            let e = scripts(&c, &project, "f", "n-1", tmp.path(), &program).unwrap_err();
            assert_eq!(e.kind, crate::error::ErrorKind::Setup);
            assert!(e.message.contains(&format!("[campaign.slurm] {key}:")), "{e}");
        }
        let c = campaign("ok");
        for bad in ["m\nx", "m\\x"] {
            let e = scripts(&c, &project, "f", "n-1", &tmp.path().join(bad), &program).unwrap_err();
            assert!(e.message.contains("the measurements folder (--measurements)"), "{e}");
        }
        let file = "/c/a\n#SBATCH --mem=1\necho injected > injected\n.toml";
        let (array, _) = scripts(&c, &project, file, "n-1", tmp.path(), &program).unwrap();
        assert!(array.contains("campaign /c/a\\n#SBATCH --mem=1\\necho injected"), "{array}");
        assert!(!sbatch_reads(&array).iter().any(|a| a == "--mem=1"));
        let ran = bash_runs(&array, tmp.path());
        assert_eq!(ran[0][2], file);
        assert!(!tmp.path().join("injected").exists());
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
