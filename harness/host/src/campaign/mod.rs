//! `cargo sparktest campaign FILE`: every configuration of a board measured
//! unattended. A campaign drives the run loop; it is not a second one: for
//! each configuration it launches the target once, verifies its identity,
//! runs the gate, then every suite through the same code a `--suite` run
//! uses ([`crate::runner::Session`]: the same events, sinks, measurement
//! files and `--resume`), stops the server and waits, bounded, for the
//! memory it held. Every step is appended to a journal that `--resume ID`
//! reads back; `--partition` splits the configurations across boxes.
//!
//! - [`mod@file`]: the campaign file, checked before anything launches.
//! - [`journal`]: the append-only, synced record of the steps.
//! - [`lock`]: one writer per journal, on one box or over NFS.
//! - [`plan`]: what `--plan` prints and the estimates from earlier runs.
//! - [`steps`]: one configuration's launch, suites and stop, over the
//!   `context` every configuration shares; [`record`]: its own record;
//!   [`outcome`]: how it went, the exit codes and tables.
//! - [`slurm`]: the campaign as a Slurm job array, one task a configuration,
//!   and the job that builds the board when it ends; its scripts are
//!   templates whose slots `script` quotes.
//! - [`status`]: where every configuration stands, from the journals and
//!   from Slurm.

mod context;
pub mod file;
pub mod journal;
mod lock;
pub mod outcome;
pub mod plan;
pub mod record;
mod script;
pub mod slurm;
pub mod status;
pub mod steps;

use std::path::PathBuf;
use std::time::{Instant, SystemTime};

use crate::config::Config;
use crate::error::Error;
use crate::runner::select::PartitionSpec;
use crate::timestamp::{self, rfc3339};
use file::Campaign;
use journal::{ConfigJournal, End, Line, Plan, Session};

/// Everything `cargo sparktest campaign` needs.
#[derive(Debug)]
pub struct CampaignArgs {
    /// The campaign file, or the name of a `[campaign.NAME]` in the
    /// project's `sparktest.toml`.
    pub file: String,
    /// Resume this campaign id from its journal.
    pub resume: Option<String>,
    /// With `resume`: go on although the campaign file changed.
    pub force: bool,
    /// Print the plan and launch nothing.
    pub plan: bool,
    /// `hash:K/N` or `count:K/N` over the configurations.
    pub partition: Option<String>,
    /// The campaign id (every box of a partitioned campaign gives the same
    /// one); by default the name and the start time.
    pub id: Option<String>,
    /// Override of the measurements folder.
    pub measurements_dir: Option<PathBuf>,
    /// Run only this configuration, by its index in the campaign (from 0,
    /// as `SLURM_ARRAY_TASK_ID` or `JOB_COMPLETION_INDEX` give it) or its
    /// name; its journal is taken up where it stands (a requeued task
    /// resumes).
    pub configuration: Option<String>,
    /// Write an sbatch script for the campaign (one array task per
    /// configuration) and submit it.
    pub slurm: bool,
    /// With `slurm`: write the scripts, submit nothing.
    pub dry_run: bool,
    /// Where the command was started.
    pub cwd: PathBuf,
}

/// The campaign file: a path, else a `[campaign.NAME]` table of the
/// project's configuration.
fn locate(config: &Config, args: &CampaignArgs) -> Result<Campaign, Error> {
    let path = args.cwd.join(&args.file);
    if path.is_file() {
        return Campaign::load(&path, config);
    }
    // Not a file: a `[campaign.NAME]` table of the project's sparktest.toml.
    let project = config.root.join(crate::config::CONFIG_FILE);
    let name = Some(args.file.as_str()).filter(|n| crate::config::check_name("campaign", n).is_ok());
    if let (Some(name), true) = (name, project.is_file()) {
        let text = std::fs::read_to_string(&project)
            .map_err(|e| Error::setup(format!("failed to read {}: {e}", project.display())))?;
        if toml::from_str::<toml::Table>(&text)
            .ok()
            .and_then(|t| t.get("campaign").and_then(|c| c.as_table()).map(|c| c.contains_key(name)))
            .unwrap_or(false)
        {
            return Campaign::parse_project(&project, &text, name, config);
        }
    }
    Err(Error::setup(format!(
        "{}: no such campaign file, and no [campaign.{}] in {} (give the path of a campaign TOML file or the name \
         of a [campaign.NAME] table of the project's sparktest.toml; see the README's Campaigns section)",
        path.display(),
        args.file,
        if project.is_file() { project.display().to_string() } else { "a project sparktest.toml".to_string() }
    )))
}

/// This process's share of the configurations, by name, and its words and
/// tag (`every configuration`/`all`, `partition hash:1/3`/`partition-hash-1-3`,
/// `configuration 2 (local-p2)`/`configuration-local-p2`).
fn share(
    campaign: &Campaign,
    partition: Option<&str>,
    configuration: Option<&str>,
) -> Result<(Vec<String>, String, String), Error> {
    let names: Vec<String> = campaign.configurations.iter().map(|c| c.name.clone()).collect();
    if let Some(one) = configuration {
        let found = match one.parse::<usize>() {
            Ok(i) => names.get(i).cloned().ok_or_else(|| {
                Error::setup(format!(
                    "--configuration {i}: the campaign has {} configurations, 0 to {} ({})",
                    names.len(),
                    names.len().saturating_sub(1),
                    names.join(", ")
                ))
            })?,
            Err(_) => names.iter().find(|n| *n == one).cloned().ok_or_else(|| {
                Error::setup(format!("--configuration {one}: no configuration of that name ({})", names.join(", ")))
            })?,
        };
        let index = names.iter().position(|n| *n == found).unwrap_or_default();
        return Ok((vec![found.clone()], format!("configuration {index} ({found})"), format!("configuration-{found}")));
    }
    let Some(p) = partition else {
        return Ok((names, "every configuration".into(), "all".into()));
    };
    let spec = PartitionSpec::parse(p).map_err(|e| Error::setup(format!("--partition: {}", e.message)))?;
    let mine = names.into_iter().enumerate().filter(|(i, n)| spec.holds(*i, n)).map(|(_, n)| n).collect();
    let tag: String = p.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    Ok((mine, format!("partition {p}"), format!("partition-{tag}")))
}

/// What changed in a campaign file since its journal began: the first
/// lines that differ.
fn changed(before: &str, now: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (before.lines().collect(), now.lines().collect());
    let mut out = Vec::new();
    for i in 0..a.len().max(b.len()) {
        let (x, y) = (a.get(i).copied(), b.get(i).copied());
        if x != y {
            out.push(format!("line {}: {:?} → {:?}", i + 1, x.unwrap_or(""), y.unwrap_or("")));
        }
        if out.len() == 3 {
            break;
        }
    }
    out.join("; ")
}

/// Run (or plan, or resume, or submit to Slurm) a campaign. Returns the
/// process exit code.
pub fn campaign(args: CampaignArgs) -> Result<i32, Error> {
    let project = Config::discover(&args.cwd)?;
    let campaign = locate(&project, &args)?;
    let measurements = project.measurements_dir(args.measurements_dir.as_deref());
    let config = steps::config(&campaign, &project);
    let (mine, share_words, share_tag) = share(&campaign, args.partition.as_deref(), args.configuration.as_deref())?;
    let id = campaign_id(&args, &campaign)?;
    let dir = journal::dir(&measurements, &id);
    let earlier = measurements.join("campaigns").join(format!("{id}.jsonl"));
    if earlier.is_file() {
        return Err(Error::setup(format!(
            "campaign {id} has a journal of an earlier cargo-sparktest ({}): resume it with that version, or give \
             another --id",
            earlier.display()
        )));
    }
    if args.plan {
        // With --resume: only what the journals say is left.
        let reads = if args.resume.is_some() { journal::read_all(&dir)? } else { Default::default() };
        return plan::print(&campaign, &config, &mine, &measurements, &reads);
    }
    if args.slurm {
        return slurm::submit(&campaign, &project, &args, &id, &measurements);
    }
    let taking_up = args.resume.is_some() || args.configuration.is_some();
    begin(&args, &campaign, &id, &dir, &measurements, taking_up)?;
    // One process per share of a campaign: a second run or resume of the
    // same share is refused, naming the first, before anything launches.
    let _share =
        lock::Lock::acquire(&dir.join(format!("{share_tag}.lock")), &format!("campaign {id} ({share_words})"))?;
    let job = crate::hostinfo::job();
    crate::warn_line!(
        "sparktest: campaign {id}: {} of {} configurations × {} suites ({share_words}{}); journals in {}",
        mine.len(),
        campaign.configurations.len(),
        campaign.suites.len(),
        job.as_ref().map_or(String::new(), |t| format!(", {}", t.describe())),
        dir.display()
    );
    let started = Instant::now();
    let mut session = crate::runner::Session::new(config)?;
    // A stop signal is a request to end the campaign between steps (or
    // the suite in flight), recorded in the journal, not an exit on the spot.
    crate::signal::cases_running(true);
    let turn = Session {
        started_at: String::new(),
        host: crate::files::host_name(),
        pid: std::process::id(),
        share: share_words,
        resumed: taking_up,
        forced: args.force,
        job: job.clone(),
    };
    let mine_ctx = Share { campaign: &campaign, id: &id, dir: &dir, measurements: &measurements, mine: &mine };
    let (results, signal) = configurations(&mut session, &args, &mine_ctx, turn, started)?;
    crate::signal::cases_running(false);
    finish(&args, &mine_ctx, &results, signal, started)
}

/// The campaign's id: the one to resume or the one given, else the
/// campaign's name and now. Refused where several processes must share
/// one and none was given.
fn campaign_id(args: &CampaignArgs, campaign: &Campaign) -> Result<String, Error> {
    Ok(match (&args.resume, &args.id) {
        (Some(id), _) | (None, Some(id)) => {
            check_id(id)?;
            id.clone()
        }
        (None, None) if args.configuration.is_some() || args.slurm => {
            return Err(Error::setup(
                "--configuration and --slurm need the campaign's --id (every task of a campaign gives the same one)",
            ));
        }
        (None, None) => format!("{}-{}", campaign.name, timestamp::compact(SystemTime::now())),
    })
}

/// The campaign's plan: written by the first process of the id, compared
/// by every later one (another box, a resume, a Slurm task). A second
/// start of an id, a resume of none, or a changed file (without `--force`)
/// is refused.
fn begin(
    args: &CampaignArgs,
    campaign: &Campaign,
    id: &str,
    dir: &std::path::Path,
    measurements: &std::path::Path,
    taking_up: bool,
) -> Result<(), Error> {
    let now = Plan {
        id: id.to_string(),
        name: campaign.name.clone(),
        file: campaign.file.display().to_string(),
        file_sha256: campaign.sha256.clone(),
        file_text: campaign.text.clone(),
        started_at: rfc3339(SystemTime::now()),
        configurations: campaign.configurations.clone(),
        suites: campaign.suites.clone(),
        on_gate_fail: campaign.on_gate_fail,
    };
    match journal::plan(dir)? {
        Some(_) if !taking_up && args.partition.is_none() => {
            return Err(Error::setup(format!(
                "campaign {id} already has a journal ({}): resume it with --resume {id}, or give another --id",
                dir.display()
            )));
        }
        None if args.resume.is_some() => {
            return Err(Error::setup(format!("--resume {id}: no campaign of that id in {}", measurements.display())));
        }
        _ => {}
    }
    let standing = journal::plan_once(dir, &now)?;
    if standing.file_sha256 != campaign.sha256 {
        if !args.force {
            return Err(Error::setup(format!(
                "{}: the campaign file changed since campaign {id} began ({}); give --force to go on with the file \
                 as it is now",
                campaign.file.display(),
                changed(&standing.file_text, &campaign.text)
            )));
        }
        journal::replan(dir, &now)?;
    }
    Ok(())
}

/// What one process of a campaign works on: its share of the
/// configurations, and where the journals and measurements go.
struct Share<'a> {
    campaign: &'a Campaign,
    id: &'a str,
    dir: &'a std::path::Path,
    measurements: &'a std::path::Path,
    mine: &'a [String],
}

/// Each configuration of the share, in turn, until a stop signal: its
/// outcomes, and the signal.
fn configurations(
    session: &mut crate::runner::Session,
    args: &CampaignArgs,
    share: &Share,
    turn: Session,
    started: Instant,
) -> Result<(Vec<outcome::ConfigOutcome>, Option<i32>), Error> {
    let Share { campaign, id, dir, measurements, mine } = *share;
    let history = plan::History::read(measurements);
    let mut results = Vec::new();
    let mut signal = None;
    for (k, name) in mine.iter().enumerate() {
        let configuration =
            campaign.configurations.iter().find(|c| &c.name == name).expect("a configuration of the campaign");
        let now = Session { started_at: rfc3339(SystemTime::now()), ..turn.clone() };
        let (mut cj, done) = match ConfigJournal::open(dir, name, now, args.force) {
            Ok(opened) => opened,
            // Another process has this configuration (a task given it
            // twice): it is never measured twice; the others go on.
            Err(e) if e.message.contains(" is in use by ") => {
                crate::warn_line!("sparktest: campaign: {name}: not taken up here: {}", e.message);
                results.push(outcome::ConfigOutcome::held_elsewhere(name, &e.message));
                continue;
            }
            Err(e) => return Err(e),
        };
        let ctx = context::Context {
            campaign,
            id,
            dir: measurements,
            index: (k + 1, mine.len()),
            started,
            partition: args.partition.as_deref(),
            done: (!done.sessions.is_empty()).then_some(&done),
            history: &history,
            mine,
            forced: args.force,
            job: turn.job.as_ref(),
        };
        let outcome = steps::configuration(session, &mut cj, &ctx, configuration)?;
        signal = outcome.interrupted.or_else(crate::signal::interrupted);
        cj.append(&Line::End(End {
            finished_at: rfc3339(SystemTime::now()),
            interrupted: signal.map(|s| crate::signal::name(s).to_string()),
            code: outcome::exit_code(std::slice::from_ref(&outcome), signal),
        }))?;
        results.push(outcome);
        if signal.is_some() {
            break;
        }
    }
    Ok((results, signal))
}

/// The exit code, the table on stderr and the whole campaign's summary
/// (every configuration's journal read: another box's or task's too).
fn finish(
    args: &CampaignArgs,
    share: &Share,
    results: &[outcome::ConfigOutcome],
    signal: Option<i32>,
    started: Instant,
) -> Result<i32, Error> {
    let Share { campaign, id, dir, mine, .. } = *share;
    // A task given its configuration by index (a Slurm array task, a
    // Kubernetes Indexed Job's pod, a static list) says with its code
    // whether it ran its configuration, not how the cases went: Slurm
    // calls any other FAILED, and Kubernetes retries the pod.
    let code = match args.configuration.is_some() {
        true => outcome::task_exit_code(results, signal),
        false => outcome::exit_code(results, signal),
    };
    let table = outcome::table(campaign, results, mine);
    eprint!("{table}");
    // The whole campaign's summary, every configuration's journal read:
    // another box's or task's too.
    let summary = dir.join("summary.md");
    let whole = outcome::summary(campaign, &journal::read_all(dir)?);
    crate::files::replace(&summary, whole.as_bytes())
        .map_err(|e| Error::io(format_args!("write the campaign summary {}", summary.display()), e))?;
    crate::warn_line!(
        "sparktest: campaign {id} {} after {:.1} min; summary in {}",
        if signal.is_some() { "interrupted" } else { "ended" },
        started.elapsed().as_secs_f64() / 60.0,
        summary.display()
    );
    Ok(code)
}

/// A campaign id becomes a file name: the same rule as every name.
pub(crate) fn check_id(id: &str) -> Result<(), Error> {
    crate::config::check_name("campaign id", id).map_err(|e| Error::setup(format!("--resume/--id: {e}")))
}
