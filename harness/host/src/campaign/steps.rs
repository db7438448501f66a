//! One configuration of a campaign: launch once, the gate, every suite
//! against the same server through the runner, stop, wait for the memory,
//! each step written into the configuration's own record
//! ([`super::record`]). Every step is journaled as it happens.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use sparktest_record::{CampaignRef, Manifest, Outcome};

use super::context::Context;
use super::file::{Campaign, Configuration, OnGateFail, SuiteStep};
use super::journal::{ConfigJournal, Counts, Memory, Phase, Skip, State, Step};
use super::outcome::{ConfigOutcome, SuiteOutcome};
use super::record::Record;
use crate::config::Config;
use crate::error::Error;
use crate::runner::{RunArgs, Session, TargetChoice};
use crate::timestamp::rfc3339;

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
