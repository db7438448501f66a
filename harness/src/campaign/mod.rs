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
//! - [`steps`]: one configuration's launch, suites, stop and record.

pub mod file;
pub mod journal;
pub mod lock;
pub mod plan;
pub mod steps;

use std::path::PathBuf;
use std::time::{Instant, SystemTime};

use crate::config::Config;
use crate::error::{Error, ErrorKind};
use crate::runner::select::PartitionSpec;
use crate::timestamp::{self, rfc3339};
use file::Campaign;
use journal::{Begin, End, Journal, Line};

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
    /// Where the command was started.
    pub cwd: PathBuf,
}

fn setup(message: String) -> Error {
    Error::new(ErrorKind::Setup, message)
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
            .map_err(|e| setup(format!("failed to read {}: {e}", project.display())))?;
        if toml::from_str::<toml::Table>(&text)
            .ok()
            .and_then(|t| t.get("campaign").and_then(|c| c.as_table()).map(|c| c.contains_key(name)))
            .unwrap_or(false)
        {
            return Campaign::parse_project(&project, &text, name, config);
        }
    }
    Err(setup(format!(
        "{}: no such campaign file, and no [campaign.{}] in {} (give the path of a campaign TOML file or the name \
         of a [campaign.NAME] table of the project's sparktest.toml; see the README's Campaigns section)",
        path.display(),
        args.file,
        if project.is_file() { project.display().to_string() } else { "a project sparktest.toml".to_string() }
    )))
}

/// This box's share of the configurations, by name.
fn share(campaign: &Campaign, partition: Option<&str>) -> Result<Vec<String>, Error> {
    let names = campaign.configurations.iter().map(|c| c.name.clone());
    let Some(p) = partition else {
        return Ok(names.collect());
    };
    let spec = PartitionSpec::parse(p).map_err(|e| setup(format!("--partition: {}", e.message)))?;
    Ok(names.enumerate().filter(|(i, n)| spec.holds(*i, n)).map(|(_, n)| n).collect())
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

/// Run (or plan, or resume) a campaign. Returns the process exit code.
pub fn campaign(args: CampaignArgs) -> Result<i32, Error> {
    let project = Config::discover(&args.cwd)?;
    let campaign = locate(&project, &args)?;
    let dir = project.measurements_dir(args.measurements_dir.as_deref());
    let config = steps::config(&campaign, &project);
    let mine = share(&campaign, args.partition.as_deref())?;
    if args.plan {
        // With --resume: only what the journal says is left.
        let read = match &args.resume {
            Some(id) => {
                check_id(id)?;
                Some(journal::read(&journal::path(&dir, id))?)
            }
            None => None,
        };
        return plan::print(&campaign, &config, &mine, &dir, read.as_ref());
    }
    // One writer per campaign id: a second run of it is refused, naming
    // the first, before anything is read or launched.
    let id_now = match (&args.resume, &args.id) {
        (Some(id), _) | (None, Some(id)) => {
            check_id(id)?;
            id.clone()
        }
        (None, None) => format!("{}-{}", campaign.name, timestamp::compact(SystemTime::now())),
    };
    let _lock =
        lock::Lock::acquire(&journal::path(&dir, &id_now).with_extension("lock"), &format!("campaign {id_now}"))?;
    let (mut journal, done) = match &args.resume {
        Some(id) => {
            let path = journal::path(&dir, id);
            let mut read = journal::read(&path)?;
            if let Some(why) = read.refusal(&path) {
                if !args.force {
                    return Err(setup(why));
                }
                let kept = journal::Journal::drop_damaged(&path, &read)?;
                crate::warn_line!(
                    "sparktest: warning: campaign journal {}: --force dropped {} damaged line(s) ({}); the journal as \
                     it was is kept as {}",
                    path.display(),
                    read.damaged.len(),
                    read.damaged.iter().map(|(n, why, _)| format!("line {n}: {why}")).collect::<Vec<_>>().join("; "),
                    kept.display()
                );
                read = journal::read(&path)?;
            }
            if let Some(d) = &read.damage {
                crate::warn_line!(
                    "sparktest: warning: campaign journal {}: {d}; that line is dropped and the campaign goes on from \
                     the steps before it",
                    path.display()
                );
            }
            if read.begin.file_sha256 != campaign.sha256 && !args.force {
                return Err(setup(format!(
                    "{}: the campaign file changed since campaign {id} began ({}); give --force to go on with the \
                     file as it is now",
                    campaign.file.display(),
                    changed(&read.begin.file_text, &campaign.text)
                )));
            }
            if read.begin.partition.as_deref() != args.partition.as_deref() {
                return Err(setup(format!(
                    "--resume {id}: that campaign ran {}; give the same --partition",
                    read.begin
                        .partition
                        .as_deref()
                        .map_or("every configuration".to_string(), |p| format!("partition {p}"))
                )));
            }
            (Journal::reopen(&path, &read)?, Some(read))
        }
        None => {
            let id = id_now.clone();
            let begin = Begin {
                id: id.clone(),
                name: campaign.name.clone(),
                file: campaign.file.display().to_string(),
                file_sha256: campaign.sha256.clone(),
                file_text: campaign.text.clone(),
                started_at: rfc3339(SystemTime::now()),
                partition: args.partition.clone(),
                configurations: campaign.configurations.clone(),
                mine: mine.clone(),
                suites: campaign.suites.clone(),
                on_gate_fail: campaign.on_gate_fail,
            };
            (Journal::create(&journal::path(&dir, &id), begin)?, None)
        }
    };
    let id =
        args.resume.clone().or(args.id.clone()).unwrap_or_else(|| {
            journal.path().file_stem().map_or_else(String::new, |s| s.to_string_lossy().into_owned())
        });
    crate::warn_line!(
        "sparktest: campaign {id}: {} configurations × {} suites{}; journal {}",
        mine.len(),
        campaign.suites.len(),
        args.partition
            .as_deref()
            .map_or(String::new(), |p| format!(" (partition {p} of {})", campaign.configurations.len())),
        journal.path().display()
    );
    let started = Instant::now();
    let history = plan::History::read(&dir);
    let mut session = crate::runner::Session::new(config)?;
    // A stop signal is a request to end the campaign between steps (or
    // the suite in flight), recorded in the journal, not an exit on the spot.
    crate::runner::signal::cases_running(true);
    let mut results = Vec::new();
    let mut signal = None;
    for (k, name) in mine.iter().enumerate() {
        let configuration =
            campaign.configurations.iter().find(|c| &c.name == name).expect("a configuration of the campaign");
        let ctx = steps::Context {
            campaign: &campaign,
            id: &id,
            dir: &dir,
            index: (k + 1, mine.len()),
            started,
            partition: args.partition.as_deref(),
            done: done.as_ref(),
            history: &history,
            mine: &mine,
            forced: args.force,
        };
        let outcome = steps::configuration(&mut session, &mut journal, &ctx, configuration)?;
        signal = outcome.interrupted.or_else(crate::runner::signal::interrupted);
        results.push(outcome);
        if signal.is_some() {
            break;
        }
    }
    crate::runner::signal::cases_running(false);
    let code = steps::exit_code(&results, signal);
    let table = steps::table(&campaign, &results, &mine);
    eprint!("{table}");
    let summary = journal::path(&dir, &id).with_extension("summary.md");
    std::fs::write(&summary, &table).map_err(|e| {
        Error::new(ErrorKind::Io, format!("failed to write the campaign summary {}: {e}", summary.display()))
    })?;
    journal.append(&Line::End(End {
        finished_at: rfc3339(SystemTime::now()),
        interrupted: signal.map(|s| crate::runner::signal::name(s).to_string()),
        code,
    }))?;
    crate::warn_line!(
        "sparktest: campaign {id} {} after {:.1} min; summary in {}",
        if signal.is_some() { "interrupted" } else { "ended" },
        started.elapsed().as_secs_f64() / 60.0,
        summary.display()
    );
    Ok(code)
}

/// A campaign id becomes a file name: the same rule as every name.
fn check_id(id: &str) -> Result<(), Error> {
    crate::config::check_name("campaign id", id).map_err(|e| setup(format!("--resume/--id: {e}")))
}
