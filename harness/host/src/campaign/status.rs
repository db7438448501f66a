//! `cargo sparktest campaign status ID`: where every configuration of a
//! campaign stands, from the configurations' journals (and their locks:
//! who runs one now, and where) and, for a campaign submitted to Slurm,
//! from what Slurm says of its array tasks; and what earlier runs say is
//! left. With `--record` (the board job), a configuration that did not
//! finish and that no process runs gets a campaign record naming why, so
//! the board says it instead of leaving it missing.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::file::Campaign;
use super::journal::{self, Read};
use super::{lock, plan, slurm, steps};
use crate::config::Config;
use crate::error::Error;

/// Everything `campaign status` needs.
#[derive(Debug)]
pub struct StatusArgs {
    /// The campaign id.
    pub id: String,
    /// Override of the measurements folder.
    pub measurements_dir: Option<PathBuf>,
    /// Write a campaign record for each configuration that did not finish
    /// and that no process runs.
    pub record: bool,
    /// The Slurm array job to ask about (default: the one `--slurm`
    /// submitted, else the one the journals name).
    pub array_job: Option<String>,
    /// Where the command was started.
    pub cwd: PathBuf,
}

/// How a configuration stands.
#[derive(Debug, Clone, PartialEq)]
pub enum Stand {
    /// Every suite finished.
    Done,
    /// Its suites finished, but it failed the gate: why (the gate's
    /// failing checks, the suites it skipped).
    GateFailed(String),
    /// A process has it now: where, and on which step.
    Running(String),
    /// Its last process ended with suites unfinished, and why.
    Failed(String),
    /// Its last process never ended (killed, its node lost), and what Slurm says.
    Killed(String),
    /// No process took it up yet, and what Slurm says.
    NotStarted(String),
}

impl Stand {
    fn word(&self) -> &'static str {
        match self {
            Stand::Done => "done",
            Stand::GateFailed(_) => "gate failed",
            Stand::Running(_) => "running",
            Stand::Failed(_) => "failed",
            Stand::Killed(_) => "killed",
            Stand::NotStarted(_) => "pending",
        }
    }
}

/// The campaign as its plan read it, for its suites and configurations
/// (parsed again from the text the plan kept, so the file need not exist).
fn campaign_of(plan: &journal::Plan, config: &Config) -> Result<Campaign, Error> {
    let path = Path::new(&plan.file);
    Campaign::parse(path, &plan.file_text, config)
        .or_else(|e| Campaign::parse_project(path, &plan.file_text, &plan.name, config).map_err(|_| e))
}

/// How each configuration stands, by name, with Slurm's word on tasks
/// where the campaign runs there.
pub fn stands(
    campaign: &Campaign,
    dir: &Path,
    journals: &BTreeMap<String, Read>,
    slurm: &BTreeMap<String, slurm::TaskState>,
) -> Vec<(String, Stand)> {
    let mut out = Vec::new();
    for (i, c) in campaign.configurations.iter().enumerate() {
        let task = slurm.get(&i.to_string());
        let said = |what: &str| match task {
            Some(t) => format!("{what}; Slurm: {}", t.describe()),
            None => what.to_string(),
        };
        let read = journals.get(&c.name);
        let held = lock::held_by(&journal::path(dir, &c.name).with_extension("lock"));
        let stand = match (read, held) {
            (_, Some(h)) => {
                let at = read
                    .and_then(|r| r.steps.last())
                    .map_or(String::new(), |s| format!(", {} since {}", s.suite.as_deref().unwrap_or("launch"), s.at));
                Stand::Running(format!("{}{at}", h.describe()))
            }
            (None, None) => Stand::NotStarted(said(match task {
                Some(_) => "no process has taken it up",
                None => "no process has taken it up, and Slurm knows no task of it",
            })),
            (Some(r), None) => {
                let finished = campaign.suites.iter().all(|s| plan::finished(Some(r), &s.suite));
                let ended = r.ends.len() >= r.sessions.len();
                match (finished, ended) {
                    (true, _) => gate_failed(r).map_or(Stand::Done, Stand::GateFailed),
                    (false, true) => {
                        let why = r
                            .steps
                            .iter()
                            .rev()
                            .find_map(|s| s.reason.clone())
                            .unwrap_or_else(|| "suites left unfinished".into());
                        Stand::Failed(said(why.lines().next().unwrap_or_default()))
                    }
                    (false, false) => {
                        Stand::Killed(said("its last process ended without a word (killed, or its node lost)"))
                    }
                }
            }
        };
        out.push((c.name.clone(), stand));
    }
    out
}

/// Why a configuration whose suites finished failed its gate, if it did:
/// the gate's step and what it says, and the suites its verdict skipped.
fn gate_failed(r: &Read) -> Option<String> {
    use super::journal::{Phase, Skip, State};
    let gate = r.steps.iter().rev().find(|s| s.phase == Phase::Suite && s.gate == Some(false))?;
    let mut why = format!("the gate ({}) failed", gate.suite.as_deref().unwrap_or("its suite"));
    if let Some(c) = &gate.counts {
        let _ = write!(why, ": {} of its checks failed, {} lost", c.failed, c.lost);
    }
    if let Some(reason) = gate.reason.as_deref().and_then(|r| r.lines().next()) {
        let _ = write!(why, "; {reason}");
    }
    let skipped: Vec<&str> = r
        .steps
        .iter()
        .filter(|s| s.state == State::Skipped && s.skip == Some(Skip::Gate))
        .filter_map(|s| s.suite.as_deref())
        .collect();
    if !skipped.is_empty() {
        let _ = write!(why, "; not run: {}", skipped.join(", "));
    }
    Some(why)
}

/// Print where each configuration stands; with `record`, write the records
/// of those that did not finish. Returns the exit code: 0.
pub fn status(args: StatusArgs) -> Result<i32, Error> {
    super::check_id(&args.id)?;
    let project = Config::discover(&args.cwd)?;
    let measurements = project.measurements_dir(args.measurements_dir.as_deref());
    let dir = journal::dir(&measurements, &args.id);
    let Some(plan) = journal::plan(&dir)? else {
        return Err(Error::setup(format!("no campaign {} in {} (no campaign.json)", args.id, measurements.display())));
    };
    let campaign = campaign_of(&plan, &project)?;
    let journals = journal::read_all(&dir)?;
    let array = args
        .array_job
        .clone()
        .filter(|a| !a.is_empty())
        .or_else(|| slurm::submitted(&dir).map(|s| s.array_job))
        .or_else(|| journals.values().flat_map(|r| &r.sessions).find_map(|s| s.job.as_ref()?.array_job_id.clone()));
    let tasks = array.as_deref().map(|a| slurm::tasks(a, campaign.configurations.len())).unwrap_or_default();
    let stands = stands(&campaign, &dir, &journals, &tasks);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "campaign {} ({}): {} configurations × {} suites{}",
        args.id,
        plan.file,
        campaign.configurations.len(),
        campaign.suites.len(),
        array.as_deref().map_or(String::new(), |a| format!(", Slurm array job {a}"))
    );
    for (name, stand) in &stands {
        let detail = match stand {
            Stand::Done => String::new(),
            Stand::GateFailed(s) | Stand::Running(s) | Stand::Failed(s) | Stand::Killed(s) | Stand::NotStarted(s) => {
                s.clone()
            }
        };
        let _ = writeln!(out, "  {name:<28} {:<8} {detail}", stand.word());
    }
    let history = plan::History::read(&measurements);
    let (mut secs, mut unknown) = (0.0, 0);
    for (name, stand) in &stands {
        if matches!(stand, Stand::Done | Stand::GateFailed(_)) {
            continue;
        }
        for s in campaign.suites.iter().filter(|s| !plan::finished(journals.get(name), &s.suite)) {
            match history.per_run(name, &s.name) {
                Some(x) => secs += x,
                None => unknown += 1,
            }
        }
    }
    let _ = writeln!(
        out,
        "left: {}",
        match (secs > 0.0, unknown) {
            (false, 0) => "nothing".to_string(),
            (false, u) => format!("unknown ({} with no earlier run to go by)", plan::steps_word(u)),
            (true, 0) => format!("{} by earlier runs", plan::about(secs)),
            (true, u) => format!("{} by earlier runs, plus {} with none", plan::about(secs), plan::steps_word(u)),
        }
    );
    print!("{out}");
    if args.record {
        for (i, (c, (_, stand))) in campaign.configurations.iter().zip(&stands).enumerate() {
            // The array has ended (the board job runs after it): what is
            // unfinished now was not run, and the board says why. A
            // configuration that ended on its own (a failed launch, a
            // failed gate) has said so in its own record already.
            let ended_by_slurm = tasks.get(&i.to_string()).is_some_and(|t| t.state != "COMPLETED");
            let why = match stand {
                Stand::Killed(s) => format!("not run: the configuration's process was killed: {s}"),
                Stand::NotStarted(s) => format!("not run: {s}"),
                Stand::Failed(s) if ended_by_slurm => format!("not run: {s}"),
                Stand::Failed(_) | Stand::Done | Stand::GateFailed(_) | Stand::Running(_) => continue,
            };
            let config = steps::config(&campaign, &project);
            if super::record::record_not_run(
                &campaign,
                &config,
                &args.id,
                &measurements,
                c,
                journals.get(&c.name),
                &why,
            )? {
                crate::warn_line!("sparktest: campaign {}: {}: recorded {why}", args.id, c.name);
            }
        }
    }
    Ok(sparktest_record::exit_code::OK)
}
