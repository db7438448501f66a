//! One configuration of a campaign: launch once, the gate, every suite
//! against the same server through the runner, stop, wait for the memory,
//! and the configuration's own record (launch time, memory released, the
//! suites not run and why) as a measurement file the board reads like any
//! other. Every step is journaled as it happens.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use sparktest_record::{
    CampaignRef, CaseRecord, HarnessInfo, InstrumentInfo, Manifest, Metric, Outcome, SuiteInfo, Summary, TargetInfo,
};

use super::file::{Campaign, Configuration, OnGateFail, SuiteStep};
use super::journal::{self, ConfigJournal, Counts, Memory, Phase, Skip, State, Step};
use crate::config::Config;
use crate::error::Error;
use crate::events::{Event, Finished, Sink};
use crate::runner::{RunArgs, Session, TargetChoice};
use crate::sinks::measurement::MeasurementWriter;
use crate::timestamp::rfc3339;

use sparktest_contract::campaign as names;
pub use sparktest_contract::campaign::INSTRUMENT;

/// The configuration a campaign runs against: the project's targets, the
/// grids' targets, and each configuration as a target of its own name
/// carrying its label and note (so its runs' columns and snapshots are its
/// own).
pub fn config(campaign: &Campaign, project: &Config) -> Config {
    let mut config = campaign.config(project);
    for c in &campaign.configurations {
        let mut target = config.targets[&c.target].clone();
        if c.label.is_some() {
            target.label = c.label.clone();
        }
        if c.note.is_some() {
            target.note = c.note.clone();
        }
        config.targets.insert(c.name.clone(), target);
    }
    config
}

/// What every configuration's steps share.
pub struct Context<'a> {
    /// The campaign.
    pub campaign: &'a Campaign,
    /// Its id.
    pub id: &'a str,
    /// The measurements folder.
    pub dir: &'a Path,
    /// This configuration's place: k of N.
    pub index: (usize, usize),
    /// When the campaign (or this resume of it) started.
    pub started: Instant,
    /// This box's share.
    pub partition: Option<&'a str>,
    /// This configuration's journal read back, when an earlier process
    /// took it up (a resume, a requeued task).
    pub done: Option<&'a journal::Read>,
    /// Earlier runs in the folder, for the time left.
    pub history: &'a super::plan::History,
    /// The configurations this box runs, in order.
    pub mine: &'a [String],
    /// A resume given `--force` (the campaign file changed, or a damaged
    /// journal line dropped).
    pub forced: bool,
    /// The batch job this process runs in (a Slurm array task).
    pub job: Option<&'a sparktest_record::JobRef>,
}

impl Context<'_> {
    /// What a launch of this configuration is, for its record: the
    /// campaign's first, or one a resume made (with `--force`).
    fn launch_kind(&self) -> String {
        let kind = match (self.done.is_some(), self.forced) {
            (false, _) => "the campaign's launch".to_string(),
            (true, false) => format!("a resume's launch (campaign {} --resume)", self.id),
            (true, true) => format!("a forced resume's launch (campaign {} --resume --force)", self.id),
        };
        match self.job {
            Some(job) => format!("{kind}, {}", job.describe()),
            None => kind,
        }
    }

    /// What earlier runs say is left from suite `j` of configuration `k`
    /// (both 0-based) on: minutes, how many steps no earlier run tells, and
    /// how many steps there are.
    fn remaining_from(&self, k: usize, j: usize) -> (f64, usize, usize) {
        let mut secs = 0.0;
        let mut unknown = 0;
        let mut steps = 0;
        for (ci, name) in self.mine.iter().enumerate().skip(k) {
            for (si, s) in self.campaign.suites.iter().enumerate() {
                if ci == k && si < j {
                    continue;
                }
                steps += 1;
                match self.history.per_run(name, &s.name) {
                    Some(x) => secs += x * f64::from(s.repeat),
                    None => unknown += 1,
                }
            }
            if ci > k {
                secs += self.history.launch(name).unwrap_or(0.0);
            }
        }
        (secs / 60.0, unknown, steps)
    }
}

/// How one suite of a configuration ended.
#[derive(Debug, Clone)]
pub struct SuiteOutcome {
    /// The suite.
    pub suite: String,
    /// How it stands.
    pub state: State,
    /// Its cases by outcome.
    pub counts: Option<Counts>,
    /// Minutes it took.
    pub minutes: f64,
    /// For the gate: whether it passed.
    pub gate: Option<bool>,
    /// Why it failed, was skipped or interrupted.
    pub reason: Option<String>,
    /// Whether an earlier run of the campaign did it (a resume skipped it).
    pub earlier: bool,
}

/// How one configuration went.
#[derive(Debug, Clone)]
pub struct ConfigOutcome {
    /// Its name.
    pub name: String,
    /// Seconds to healthy, or why the launch failed; None when nothing was
    /// left to launch for.
    pub launch: Option<Result<f64, String>>,
    /// Every suite, in order.
    pub suites: Vec<SuiteOutcome>,
    /// The memory its server held and gave back.
    pub memory: Option<Memory>,
    /// The signal that interrupted it.
    pub interrupted: Option<i32>,
    /// Why its server is gone, when it exited on its own.
    pub died: Option<String>,
}

impl ConfigOutcome {
    /// A configuration another process had taken up (its lock held): not
    /// run here, and said so.
    pub fn held_elsewhere(name: &str, why: &str) -> ConfigOutcome {
        ConfigOutcome {
            name: name.to_string(),
            launch: Some(Err(format!("not taken up here: {why}"))),
            suites: Vec::new(),
            memory: None,
            interrupted: None,
            died: None,
        }
    }
}

fn step(c: &Configuration, phase: Phase, suite: Option<&str>, state: State) -> Step {
    Step {
        configuration: c.name.clone(),
        phase,
        suite: suite.map(str::to_string),
        state,
        at: rfc3339(SystemTime::now()),
        run_id: None,
        reason: None,
        seconds: 0.0,
        counts: None,
        memory: None,
        gate: None,
        skip: None,
    }
}

/// Memory now: host available and GPU in use, GiB.
fn memory_now() -> (f64, Option<f64>) {
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    let host = crate::hostinfo::memory_available().map_or(0.0, gib);
    let gpus = crate::hostinfo::accelerators();
    let used: Vec<u64> = gpus.iter().filter_map(|a| a.memory_used_mib).collect();
    let gpu = (!used.is_empty()).then(|| used.iter().sum::<u64>() as f64 / 1024.0);
    (host, gpu)
}

/// After a stop: wait until the memory is back within `settle_gib` of what
/// it was before the launch, at most `settle_secs`.
fn wait_for_memory(before: (f64, Option<f64>), campaign: &Campaign) -> Memory {
    let started = Instant::now();
    let limit = Duration::from_secs(campaign.settle_secs);
    loop {
        let now = memory_now();
        let host_back = now.0 + campaign.settle_gib >= before.0;
        let gpu_back = match (before.1, now.1) {
            (Some(b), Some(n)) => n <= b + campaign.settle_gib,
            _ => true,
        };
        if (host_back && gpu_back) || started.elapsed() >= limit {
            return Memory {
                before_gib: before.0,
                after_gib: now.0,
                gpu_before_gib: before.1,
                gpu_after_gib: now.1,
                waited_secs: started.elapsed().as_secs_f64(),
                released: host_back && gpu_back,
            };
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// Run one configuration's steps that are left.
pub fn configuration(
    session: &mut Session,
    journal: &mut ConfigJournal,
    ctx: &Context,
    c: &Configuration,
) -> Result<ConfigOutcome, Error> {
    let campaign = ctx.campaign;
    let mut out = ConfigOutcome {
        name: c.name.clone(),
        launch: None,
        suites: Vec::new(),
        memory: None,
        interrupted: None,
        died: None,
    };
    // What an earlier run of the campaign finished stays finished (a suite
    // that ran its course, one a failed gate skipped); a suite it began and
    // did not finish is resumed by its run id; one it skipped for a failed
    // launch or a server gone is run on a new launch.
    let prior = |suite: &str| ctx.done.and_then(|d| d.suite(suite));
    let finished = |s: &Step| super::plan::finished(ctx.done, s.suite.as_deref().unwrap_or_default());
    let left = campaign.suites.iter().any(|s| prior(&s.suite).is_none_or(|p| !finished(p)));
    if !left {
        out.suites = campaign
            .suites
            .iter()
            .filter_map(|s| prior(&s.suite).map(|p| outcome_recorded_before(p, &s.name)))
            .collect();
        crate::warn_line!("sparktest: campaign: {} done earlier, not launched", c.name);
        return Ok(out);
    }
    let (k, n) = ctx.index;
    crate::warn_line!("sparktest: campaign: configuration {k} of {n}: {} (target {})", c.name, c.target);
    let before = memory_now();
    // The record starts with the launch: the run log puts it before the
    // configuration's suites, in the order the steps ran.
    let mut record = Record::new();
    let info = launch(session, journal, ctx, c, &mut record, &mut out, before)?;
    record.open(ctx, info.as_ref(), session.config(), c)?;
    let mut skip: Option<(Skip, String)> = out
        .launch
        .as_ref()
        .and_then(|l| l.as_ref().err())
        .map(|why| (Skip::Launch, format!("not run: the launch failed: {why}")));
    // Why the launched server is gone, once it exited on its own.
    let mut died: Option<String> = None;
    for (j, s) in campaign.suites.iter().enumerate() {
        // A stop signal between steps (launching, waiting) ends the
        // campaign here, the step not begun left for the resume.
        if let Some(sig) = crate::signal::interrupted() {
            out.interrupted = Some(sig);
            break;
        }
        let before_step = prior(&s.suite);
        if let Some(p) = before_step.filter(|p| finished(p)) {
            let e = outcome_recorded_before(p, &s.name);
            if s.gate && e.gate == Some(false) && campaign.on_gate_fail == OnGateFail::Skip {
                skip = Some((Skip::Gate, format!("not run: the gate ({}) failed", s.name)));
            }
            out.suites.push(e);
            continue;
        }
        // A server that died between suites leaves the rest unrun.
        if skip.is_none()
            && let Some(why) = session.died(&c.name)
        {
            died.get_or_insert(why.clone());
            skip =
                Some((Skip::ServerGone, format!("not run: the server died before this suite: {}", first_line(&why))));
        }
        if let Some((cause, why)) = &skip {
            out.suites.push(skipped(journal, &mut record, c, s, *cause, why)?);
            continue;
        }
        let resume = before_step.and_then(|p| p.run_id.clone()).filter(|_| s.repeat <= 1);
        let (ran, interrupted) = suite(session, journal, ctx, c, (j, s), resume)?;
        let (state, gate, reason) = (ran.state, ran.gate, ran.reason.clone());
        out.suites.push(ran);
        out.interrupted = interrupted;
        if out.interrupted.is_some() {
            // What was not started stays for the resume.
            break;
        }
        if s.gate && gate == Some(false) && campaign.on_gate_fail == OnGateFail::Skip {
            skip = Some((Skip::Gate, format!("not run: the gate ({}) failed", s.name)));
        }
        if let Some(why) = session.died(&c.name) {
            skip =
                Some((Skip::ServerGone, format!("not run: the server died in suite {}: {}", s.name, first_line(&why))));
            died.get_or_insert(why);
        } else if state == State::Failed && !session.healthy(&c.name) {
            skip = Some((
                Skip::ServerGone,
                format!(
                    "not run: the server stopped answering in suite {} ({})",
                    s.name,
                    reason.as_deref().unwrap_or("")
                ),
            ));
        }
    }
    out.died = died.or_else(|| session.died(&c.name));
    stop(session, journal, c, &mut record, &mut out, info.is_some().then_some(before), campaign)?;
    record.close(out.interrupted)?;
    Ok(out)
}

/// The launch: journaled (started, then done or failed), recorded and
/// said; the target as it came up, or none.
fn launch(
    session: &mut Session,
    journal: &mut ConfigJournal,
    ctx: &Context,
    c: &Configuration,
    record: &mut Record,
    out: &mut ConfigOutcome,
    before: (f64, Option<f64>),
) -> Result<Option<sparktest_record::TargetInfo>, Error> {
    journal.step(step(c, Phase::Launch, None, State::Started))?;
    let t0 = Instant::now();
    match session.launch(&c.name) {
        Ok(info) => {
            let secs = t0.elapsed().as_secs_f64();
            journal.step(Step { seconds: secs, ..step(c, Phase::Launch, None, State::Done) })?;
            record.launch(secs, before, None, &ctx.launch_kind())?;
            out.launch = Some(Ok(secs));
            Ok(Some(info))
        }
        Err(e) => {
            let secs = t0.elapsed().as_secs_f64();
            journal.step(Step {
                seconds: secs,
                reason: Some(e.message.clone()),
                ..step(c, Phase::Launch, None, State::Failed)
            })?;
            crate::warn_line!("sparktest: campaign: {} failed to launch: {}", c.name, e.message);
            record.launch(secs, before, Some(&e.message), &ctx.launch_kind())?;
            out.launch = Some(Err(e.message));
            Ok(None)
        }
    }
}

/// A suite not run, with why: journaled and recorded.
fn skipped(
    journal: &mut ConfigJournal,
    record: &mut Record,
    c: &Configuration,
    s: &SuiteStep,
    cause: Skip,
    why: &str,
) -> Result<SuiteOutcome, Error> {
    journal.step(Step {
        reason: Some(why.to_string()),
        skip: Some(cause),
        ..step(c, Phase::Suite, Some(&s.suite), State::Skipped)
    })?;
    record.not_run(&s.name, why)?;
    Ok(SuiteOutcome {
        suite: s.name.clone(),
        state: State::Skipped,
        counts: None,
        minutes: 0.0,
        gate: None,
        reason: Some(why.to_string()),
        earlier: false,
    })
}

/// What is left of the campaign, in words, by what earlier runs took.
fn time_left(ctx: &Context, k: usize, j: usize) -> String {
    let (left, unknown, steps) = ctx.remaining_from(k - 1, j);
    if unknown == steps {
        "time left unknown (no earlier run here to go by)".to_string()
    } else if unknown > 0 {
        format!(
            "{} left by earlier runs (+{} never run here before)",
            super::plan::about(left * 60.0),
            super::plan::steps_word(unknown)
        )
    } else {
        format!("{} left by earlier runs", super::plan::about(left * 60.0))
    }
}

/// One suite on the launched server (`j`: its place in the campaign's
/// list), resumed from `resume` where an earlier run began it: said with
/// the time left, run, journaled. Its outcome, and the stop signal that
/// interrupted it, if one did.
fn suite(
    session: &mut Session,
    journal: &mut ConfigJournal,
    ctx: &Context,
    c: &Configuration,
    (j, s): (usize, &SuiteStep),
    resume: Option<String>,
) -> Result<(SuiteOutcome, Option<i32>), Error> {
    let campaign = ctx.campaign;
    let (k, n) = ctx.index;
    crate::warn_line!(
        "sparktest: campaign: configuration {k} of {n} ({}), suite {} of {}: {}{}; {:.1} min elapsed, {}",
        c.name,
        j + 1,
        campaign.suites.len(),
        s.name,
        if s.gate { " (the gate)" } else { "" },
        ctx.started.elapsed().as_secs_f64() / 60.0,
        time_left(ctx, k, j),
    );
    let args = RunArgs {
        suite: s.suite.clone(),
        target: TargetChoice::Named(c.name.clone()),
        measurements_dir: Some(ctx.dir.to_path_buf()),
        libtest: libtest_mimic::Arguments::default(),
        cwd: session.config().root.clone(),
        arms: c.arms.iter().map(|(a, t)| (a.clone(), t.clone())).collect(),
        judge: None,
        junit: None,
        partition: None,
        run_group: None,
        resume: resume.clone(),
        label: None,
        repeat: s.repeat,
        campaign: Some(CampaignRef {
            id: ctx.id.to_string(),
            configuration: c.name.clone(),
            configurations: campaign.configurations.iter().map(|x| x.name.clone()).collect(),
            partition: ctx.partition.map(str::to_string),
        }),
    };
    let t = Instant::now();
    let mut started_id = None;
    let ran = session.run(&args, &mut |m: &Manifest| {
        started_id = Some(m.run_id.clone());
        journal.step(Step { run_id: Some(m.run_id.clone()), ..step(c, Phase::Suite, Some(&s.suite), State::Started) })
    });
    // The runner ends its span of interruptible work with the run; the
    // campaign's goes on until it ends.
    crate::signal::cases_running(true);
    let secs = t.elapsed().as_secs_f64();
    let mut interrupted = None;
    let (state, counts, gate, reason, run_id) = match ran {
        Ok(r) => {
            let state = match (r.interrupted, &r.stopped) {
                (Some(_), _) => State::Interrupted,
                (None, Some(_)) => State::Failed,
                (None, None) => State::Done,
            };
            let reason =
                r.interrupted.map(|sig| format!("interrupted by {}", crate::signal::name(sig))).or(r.stopped.clone());
            interrupted = r.interrupted;
            // A resumed suite counts the whole run, every part of it, as
            // the board reads it; this part alone is what it re-ran.
            let counts = match (&resume, &r.run_id) {
                (Some(_), Some(id)) => counts_with_resumes(ctx.dir, id).unwrap_or(Counts::from(r.counts)),
                _ => Counts::from(r.counts),
            };
            (state, Some(counts), r.gate, reason, r.run_id.or(started_id))
        }
        Err(e) => (State::Failed, None, None, Some(e.message.clone()), started_id),
    };
    journal.step(Step {
        seconds: secs,
        counts,
        gate,
        reason: reason.clone(),
        run_id,
        ..step(c, Phase::Suite, Some(&s.suite), state)
    })?;
    let outcome =
        SuiteOutcome { suite: s.name.clone(), state, counts, minutes: secs / 60.0, gate, reason, earlier: false };
    Ok((outcome, interrupted))
}

/// Stop the configuration's servers and, where one was launched (`before`:
/// the memory free before it), wait for what it held: journaled,
/// recorded, said when it was not given back. A server that had died
/// (`out.died`) was not stopped: the step says so.
fn stop(
    session: &mut Session,
    journal: &mut ConfigJournal,
    c: &Configuration,
    record: &mut Record,
    out: &mut ConfigOutcome,
    before: Option<(f64, Option<f64>)>,
    campaign: &Campaign,
) -> Result<(), Error> {
    let t = Instant::now();
    let died = out.died.clone();
    session.stop_all();
    let Some(before) = before else { return Ok(()) };
    let memory = wait_for_memory(before, campaign);
    let state = if memory.released { State::Done } else { State::Failed };
    journal.step(Step {
        seconds: t.elapsed().as_secs_f64(),
        memory: Some(memory),
        reason: died.as_ref().map(|why| format!("the server had died: {}", first_line(why))),
        ..step(c, Phase::Stop, None, state)
    })?;
    if let Some(why) = &died {
        record.died(why)?;
    }
    if !memory.released {
        crate::warn_line!(
            "sparktest: campaign: {}'s server did not give its memory back within {} s ({:.1} GiB available, {:.1} \
             before launch); the next configuration runs anyway",
            c.name,
            campaign.settle_secs,
            memory.after_gib,
            memory.before_gib
        );
    }
    record.released(&memory, campaign)?;
    out.memory = Some(memory);
    Ok(())
}

/// A run's cases by outcome with the runs it resumed, each case once (its
/// later record winning); None where its files cannot be read.
fn counts_with_resumes(dir: &Path, run_id: &str) -> Option<Counts> {
    let chain = sparktest_record::reader::chain::<sparktest_record::reader::Unread>(dir, run_id).ok()?;
    let n = |o: Outcome| chain.run.cases.iter().filter(|c| c.outcome == o).count() as u64;
    Some(Counts {
        passed: n(Outcome::Pass),
        failed: n(Outcome::Fail),
        lost: n(Outcome::Lost),
        not_applicable: n(Outcome::NotApplicable),
    })
}

/// A campaign record for a configuration that did not finish and that no
/// process runs now (Slurm cancelled its task, killed it at its time
/// limit, or it never started): each suite the journal does not show
/// finished is `not-run::<suite>` with `why`, so that the board names it
/// rather than leave it missing. Written once per configuration and why.
pub fn record_not_run(
    campaign: &Campaign,
    config: &Config,
    id: &str,
    measurements: &Path,
    c: &Configuration,
    done: Option<&journal::Read>,
    why: &str,
) -> Result<bool, Error> {
    let tag = crate::suite::sha256_hex(why.as_bytes());
    let run_id = format!("{id}-{}-not-run-{}", c.name, &tag[..8]);
    if measurements.join(format!("{run_id}.jsonl")).exists() {
        return Ok(false);
    }
    let history = super::plan::History::default();
    let mine = vec![c.name.clone()];
    let ctx = Context {
        campaign,
        id,
        dir: measurements,
        index: (1, 1),
        started: Instant::now(),
        partition: None,
        done,
        history: &history,
        mine: &mine,
        forced: false,
        job: None,
    };
    let mut record = Record::new();
    for s in &campaign.suites {
        if !super::plan::finished(done, &s.suite) {
            record.not_run(&s.name, why)?;
        }
    }
    record.open_as(&ctx, None, config, c, Some(run_id))?;
    record.close(None)?;
    Ok(true)
}

/// The first line of a server's death (its exit status, before its log).
fn first_line(why: &str) -> &str {
    why.lines().next().unwrap_or(why)
}

/// An outcome an earlier run of the campaign recorded.
fn outcome_recorded_before(p: &Step, name: &str) -> SuiteOutcome {
    SuiteOutcome {
        suite: name.to_string(),
        state: p.state,
        counts: p.counts,
        minutes: p.seconds / 60.0,
        gate: p.gate,
        reason: p.reason.clone(),
        earlier: true,
    }
}

/// The configuration's own record: launch, memory released, suites not
/// run; a measurement file of the `campaign` instrument, written as the
/// steps happen (opened once the launch is known), so that a campaign
/// killed mid-configuration leaves its launch on the record, with no
/// summary line to say it ended.
struct Record {
    started_at: String,
    /// Every case so far; those before [`Record::open`] wait for the file.
    cases: Vec<CaseRecord>,
    writer: Option<MeasurementWriter>,
}

fn record(
    case: &str,
    outcome: Outcome,
    reason: Option<String>,
    metrics: Vec<(sparktest_contract::Metric, f64, &str)>,
) -> CaseRecord {
    CaseRecord {
        id: format!("{INSTRUMENT}::{case}"),
        instrument: INSTRUMENT.into(),
        case: case.into(),
        tags: vec![],
        outcome,
        reason,
        metrics: metrics
            .into_iter()
            .map(|(n, v, u)| Metric { name: n.name().into(), value: v, unit: u.into() })
            .collect(),
        notes: vec![],
        started_at: rfc3339(SystemTime::now()),
        seconds: 0.0,
        endpoint_seconds: 0.0,
        calls: vec![],
        prompt_tokens: None,
        completion_tokens: None,
        transcript_sha256: crate::suite::sha256_hex(b""),
        snapshots: vec![],
        arm: None,
        latency: None,
    }
}

impl Record {
    fn new() -> Record {
        Record { started_at: rfc3339(SystemTime::now()), cases: Vec::new(), writer: None }
    }

    /// Add a case, written at once where the file is open.
    fn push(&mut self, case: CaseRecord) -> Result<(), Error> {
        if let Some(w) = &self.writer {
            w.event(&Event::CaseFinished(Box::new(Finished { record: case.clone(), transcript: None })))?;
            w.sync()?;
        }
        self.cases.push(case);
        Ok(())
    }

    fn launch(&mut self, secs: f64, before: (f64, Option<f64>), failed: Option<&str>, kind: &str) -> Result<(), Error> {
        let mut metrics = vec![(names::LAUNCH_SECS, secs, "s"), (names::MEMORY_AVAILABLE_BEFORE_GIB, before.0, "GiB")];
        if let Some(g) = before.1 {
            metrics.push((names::GPU_MEMORY_USED_BEFORE_GIB, g, "GiB"));
        }
        let (outcome, reason) = match failed {
            None => (Outcome::Pass, None),
            Some(why) => (Outcome::Fail, Some(format!("failed to launch: {why}"))),
        };
        let mut case = record(&names::LAUNCH.case(names::HEALTHY).to_string(), outcome, reason, metrics);
        case.notes.push((names::LAUNCH_KIND.name().to_string(), kind.to_string()));
        self.push(case)
    }

    fn released(&mut self, m: &Memory, campaign: &Campaign) -> Result<(), Error> {
        let mut metrics = vec![
            (names::MEMORY_AVAILABLE_AFTER_GIB, m.after_gib, "GiB"),
            (names::MEMORY_NOT_GIVEN_BACK_GIB, (m.before_gib - m.after_gib).max(0.0), "GiB"),
            (names::SETTLE_SECS, m.waited_secs, "s"),
        ];
        if let Some(g) = m.gpu_after_gib {
            metrics.push((names::GPU_MEMORY_USED_AFTER_GIB, g, "GiB"));
        }
        let (outcome, reason) = if m.released {
            (Outcome::Pass, None)
        } else {
            (
                Outcome::Fail,
                Some(format!(
                    "memory not given back within {} s: {:.2} GiB available, {:.2} before the launch (settle-gib {})",
                    campaign.settle_secs, m.after_gib, m.before_gib, campaign.settle_gib
                )),
            )
        };
        self.push(record(&names::STOP.case(names::MEMORY_RELEASED).to_string(), outcome, reason, metrics))
    }

    fn died(&mut self, why: &str) -> Result<(), Error> {
        let case = names::STOP.case(names::SERVER_DIED).to_string();
        self.push(record(&case, Outcome::Fail, Some(why.to_string()), vec![]))
    }

    fn not_run(&mut self, suite: &str, why: &str) -> Result<(), Error> {
        self.push(record(
            &names::NOT_RUN.case(suite).to_string(),
            Outcome::NotApplicable,
            Some(why.to_string()),
            vec![],
        ))
    }

    /// Create the file: its manifest (the launched target, or what the
    /// configuration names of one that never came up) and the cases so far.
    fn open(
        &mut self,
        ctx: &Context,
        info: Option<&TargetInfo>,
        config: &Config,
        c: &Configuration,
    ) -> Result<(), Error> {
        self.open_as(ctx, info, config, c, None)
    }

    /// [`Record::open`] under a run id of the caller's, else the next free
    /// `<id>-<configuration>-campaign[-k]`.
    fn open_as(
        &mut self,
        ctx: &Context,
        info: Option<&TargetInfo>,
        config: &Config,
        c: &Configuration,
        run_id: Option<String>,
    ) -> Result<(), Error> {
        let target = info.cloned().unwrap_or_else(|| unlaunched(config, c));
        let run_id = run_id.unwrap_or_else(|| {
            (1..)
                .map(|i| {
                    format!("{}-{}-campaign{}", ctx.id, c.name, if i == 1 { String::new() } else { format!("-{i}") })
                })
                .find(|id| !ctx.dir.join(format!("{id}.jsonl")).exists())
                .unwrap_or_default()
        });
        let manifest = Manifest {
            format_version: sparktest_record::FORMAT_VERSION.into(),
            run_id: run_id.clone(),
            started_at: self.started_at.clone(),
            harness: HarnessInfo { version: env!("CARGO_PKG_VERSION").into(), git_revision: None },
            suite: SuiteInfo {
                name: INSTRUMENT.into(),
                version: ctx.campaign.name.clone(),
                sha256: ctx.campaign.sha256.clone(),
                files: vec![],
            },
            target,
            client_host: crate::hostinfo::snapshot(),
            route: config.targets.get(&c.name).map_or("direct".into(), |t| t.route.clone()),
            instruments: vec![InstrumentInfo {
                name: INSTRUMENT.into(),
                row: "Campaign steps".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                description: "The campaign's own steps for this configuration: its launch (seconds to healthy, \
                              memory before), the memory its server gave back after the stop, and the suites not run \
                              and why."
                    .into(),
                component_sha256: String::new(),
                interface: None,
            }],
            arms: vec![],
            client_ceiling: None,
            judge: None,
            partition: None,
            resumes: None,
            suite_cases: BTreeMap::new(),
            repeat: None,
            campaign: Some(CampaignRef {
                id: ctx.id.to_string(),
                configuration: c.name.clone(),
                configurations: ctx.campaign.configurations.iter().map(|x| x.name.clone()).collect(),
                partition: ctx.partition.map(str::to_string),
            }),
            job: ctx.job.cloned(),
            rows: Vec::new(),
        };
        let writer = MeasurementWriter::create(ctx.dir, &run_id)?;
        writer.event(&Event::RunStarted { manifest: Box::new(manifest), cases: self.cases.len() })?;
        for case in &self.cases {
            writer.event(&Event::CaseFinished(Box::new(Finished { record: case.clone(), transcript: None })))?;
        }
        writer.sync()?;
        self.writer = Some(writer);
        Ok(())
    }

    /// The summary line: the configuration's steps ended.
    fn close(self, interrupted: Option<i32>) -> Result<(), Error> {
        let Some(writer) = self.writer else { return Ok(()) };
        let count = |o: Outcome| self.cases.iter().filter(|x| x.outcome == o).count() as u64;
        let summary = Summary {
            finished_at: rfc3339(SystemTime::now()),
            seconds: 0.0,
            passed: count(Outcome::Pass),
            failed: count(Outcome::Fail),
            lost: count(Outcome::Lost),
            not_applicable: count(Outcome::NotApplicable),
            instruments: vec![],
            gate: None,
            stopped: None,
            // The configuration's steps were cut short: the rest are left
            // for a resume, not "every suite ran".
            interrupted: interrupted.map(|s| crate::signal::name(s).to_string()),
            interrupted_cases: 0,
        };
        writer.event(&Event::RunFinished(Box::new(summary)))?;
        writer.sync()
    }
}

/// What the record says of a target that never came up: what its
/// configuration names.
fn unlaunched(config: &Config, c: &Configuration) -> TargetInfo {
    let t = config.targets.get(&c.name);
    TargetInfo {
        name: c.name.clone(),
        base_url: t.and_then(|t| t.base_url.clone()).unwrap_or_default(),
        model_id: t.map_or(String::new(), |t| t.model.clone()),
        engine: String::new(),
        build: None,
        model_path: None,
        model_sha256: None,
        launch_command: t.and_then(|t| t.launch.as_ref().map(|l| l.command.clone())),
        facts: t.map_or_else(Vec::new, |t| t.pins.iter().map(|(k, v)| (format!("pin.{k}"), v.clone())).collect()),
        host: None,
        tool_choice: None,
        label: t.and_then(|t| t.label.clone()),
        note: t.and_then(|t| t.note.clone()),
        description: t.map(|t| t.description.clone()),
    }
}

/// 0 when every case of every step passed or was not applicable; 101 when
/// any failed or was lost, a launch failed, a server kept its memory; 128 +
/// the signal when interrupted.
pub fn exit_code(results: &[ConfigOutcome], signal: Option<i32>) -> i32 {
    if let Some(s) = signal {
        return 128 + s;
    }
    let bad = results.iter().any(|r| {
        matches!(r.launch, Some(Err(_)))
            || r.died.is_some()
            || r.memory.is_some_and(|m| !m.released)
            || r.suites.iter().any(|s| {
                s.state == State::Failed || s.counts.is_some_and(|c| c.failed + c.lost > 0) || s.gate == Some(false)
            })
    });
    if bad { sparktest_record::exit_code::CASES_FAILED } else { sparktest_record::exit_code::OK }
}

/// The exit code of a Slurm array task (`--configuration` in a Slurm
/// array job): 0 when its configuration ran, every suite to its end or
/// skipped by the gate's verdict, whatever its cases' verdicts (the
/// journal, `campaign status` and the board keep them), since Slurm calls
/// a non-zero task FAILED, the word for a dead node. 4 when it could not
/// run its configuration (the launch failed, the server died or stopped
/// answering, a suite stopped before its end); 128 + the signal when
/// interrupted.
pub fn task_exit_code(results: &[ConfigOutcome], signal: Option<i32>) -> i32 {
    if let Some(s) = signal {
        return 128 + s;
    }
    let ran = |r: &ConfigOutcome| {
        !matches!(r.launch, Some(Err(_)))
            && r.died.is_none()
            && r.interrupted.is_none()
            && r.suites.iter().all(|s| !matches!(s.state, State::Failed | State::Interrupted | State::Started))
    };
    if results.iter().all(ran) { sparktest_record::exit_code::OK } else { sparktest_record::exit_code::TARGET }
}

/// The whole campaign's table, from every configuration's journal (each
/// suite as its last step left it): what `summary.md` holds, whichever box
/// or task wrote last.
pub fn summary(campaign: &Campaign, journals: &BTreeMap<String, journal::Read>) -> String {
    let mut outcomes = Vec::new();
    for c in &campaign.configurations {
        let Some(read) = journals.get(&c.name) else { continue };
        let last = |phase: Phase| read.steps.iter().rev().find(|s| s.phase == phase && s.state != State::Started);
        let launch = last(Phase::Launch).map(|s| match s.state {
            State::Done => Ok(s.seconds),
            _ => Err(s.reason.clone().unwrap_or_default()),
        });
        let suites = campaign
            .suites
            .iter()
            .filter_map(|x| {
                let s = read.suite(&x.suite)?;
                Some(SuiteOutcome {
                    suite: x.name.clone(),
                    state: s.state,
                    counts: s.counts,
                    minutes: s.seconds / 60.0,
                    gate: s.gate,
                    reason: s.reason.clone(),
                    earlier: false,
                })
            })
            .collect();
        let stop = last(Phase::Stop);
        outcomes.push(ConfigOutcome {
            name: c.name.clone(),
            launch,
            suites,
            memory: stop.and_then(|s| s.memory),
            interrupted: None,
            died: stop.and_then(|s| s.reason.clone()).filter(|r| r.starts_with("the server had died")),
        });
    }
    let all: Vec<String> = campaign.configurations.iter().map(|c| c.name.clone()).collect();
    table(campaign, &outcomes, &all)
}

/// The end-of-campaign table: configuration × suite.
pub fn table(campaign: &Campaign, results: &[ConfigOutcome], mine: &[String]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "\n# Campaign {}\n", campaign.name);
    let _ = writeln!(out, "| configuration | step | state | passed | failed | lost | n/a | minutes | gate | why |");
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|---|---|");
    let cell = |s: &str| s.replace('|', "\\|").replace('\n', " ");
    for r in results {
        let launch = match &r.launch {
            None => "done earlier".to_string(),
            Some(Ok(secs)) => format!("healthy in {secs:.1} s"),
            Some(Err(why)) => format!("FAILED: {}", cell(why)),
        };
        let _ = writeln!(out, "| {} | launch | {launch} | | | | | | | |", r.name);
        for s in &r.suites {
            let (p, f, l, n) = s.counts.map_or((String::new(), String::new(), String::new(), String::new()), |c| {
                (c.passed.to_string(), c.failed.to_string(), c.lost.to_string(), c.not_applicable.to_string())
            });
            let state = format!("{:?}{}", s.state, if s.earlier { " (earlier)" } else { "" }).to_lowercase();
            let gate = match s.gate {
                Some(true) => "PASSED",
                Some(false) => "FAILED",
                None => "",
            };
            let _ = writeln!(
                out,
                "| {} | {} | {state} | {p} | {f} | {l} | {n} | {:.1} | {gate} | {} |",
                r.name,
                s.suite,
                s.minutes,
                cell(s.reason.as_deref().unwrap_or(""))
            );
        }
        if let Some(m) = &r.memory {
            let _ = writeln!(
                out,
                "| {} | stop | {} | | | | | {:.1} | | {:.2} GiB available after, {:.2} before launch |",
                r.name,
                match (&r.died, m.released) {
                    (Some(_), true) => "SERVER DIED; memory back",
                    (Some(_), false) => "SERVER DIED; MEMORY HELD",
                    (None, true) => "memory given back",
                    (None, false) => "MEMORY HELD",
                },
                m.waited_secs / 60.0,
                m.after_gib,
                m.before_gib
            );
        }
    }
    let ran: Vec<&str> = results.iter().map(|r| r.name.as_str()).collect();
    let left: Vec<&str> = mine.iter().map(String::as_str).filter(|n| !ran.contains(n)).collect();
    if !left.is_empty() {
        let _ = writeln!(out, "\nnot reached (interrupted before them): {}", left.join(", "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suite(state: State, failed: u64) -> SuiteOutcome {
        SuiteOutcome {
            suite: "s".into(),
            state,
            counts: Some(Counts { failed, ..Counts::default() }),
            minutes: 0.0,
            gate: None,
            reason: None,
            earlier: false,
        }
    }

    fn ran(suites: Vec<SuiteOutcome>) -> ConfigOutcome {
        ConfigOutcome { name: "c".into(), launch: Some(Ok(1.0)), suites, memory: None, interrupted: None, died: None }
    }

    #[test]
    fn an_array_task_whose_suites_all_ran_exits_0_whatever_the_verdicts() {
        // A failed case and a gate's skip are verdicts: the campaign's own
        // code says 101, the task's 0.
        let failed_case = ran(vec![
            SuiteOutcome { gate: Some(false), ..suite(State::Done, 1) },
            SuiteOutcome { counts: None, ..suite(State::Skipped, 0) },
        ]);
        assert_eq!(exit_code(std::slice::from_ref(&failed_case), None), 101);
        assert_eq!(task_exit_code(std::slice::from_ref(&failed_case), None), 0);
        // What could not run its configuration is a task that failed.
        let launch = ConfigOutcome { launch: Some(Err("exited".into())), ..ran(vec![suite(State::Skipped, 0)]) };
        let died = ConfigOutcome { died: Some("signal: 9".into()), ..ran(vec![suite(State::Failed, 0)]) };
        let stopped = ran(vec![suite(State::Done, 0), suite(State::Failed, 0)]);
        for r in [launch, died, stopped] {
            assert_eq!(task_exit_code(std::slice::from_ref(&r), None), 4, "{r:?}");
        }
        assert_eq!(task_exit_code(&[failed_case], Some(15)), 143, "a requeue's SIGTERM");
    }
}
