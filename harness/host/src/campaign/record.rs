//! A configuration's own record: its launch, the memory its server gave
//! back and the suites not run, as a measurement file of the `campaign`
//! instrument that the board reads like any other.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Instant, SystemTime};

use sparktest_contract::campaign::{self as names, INSTRUMENT};
use sparktest_record::{
    CampaignRef, CaseRecord, HarnessInfo, InstrumentInfo, Manifest, Metric, Outcome, SuiteInfo, Summary, TargetInfo,
};

use super::context::Context;
use super::file::{Campaign, Configuration};
use super::journal::{self, Memory};
use crate::config::Config;
use crate::error::Error;
use crate::events::{Event, Finished, Sink};
use crate::sinks::measurement::MeasurementWriter;
use crate::timestamp::rfc3339;

/// The configuration's own record: launch, memory released, suites not
/// run; a measurement file of the `campaign` instrument, written as the
/// steps happen (opened once the launch is known), so that a campaign
/// killed mid-configuration leaves its launch on the record, with no
/// summary line to say it ended.
pub(super) struct Record {
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
        transcript_sha256: crate::files::sha256_hex(b""),
        snapshots: vec![],
        arm: None,
        latency: None,
    }
}

impl Record {
    pub(super) fn new() -> Record {
        Record { started_at: rfc3339(SystemTime::now()), cases: Vec::new(), writer: None }
    }

    /// Add a case, written at once where the file is open.
    pub(super) fn push(&mut self, case: CaseRecord) -> Result<(), Error> {
        if let Some(w) = &self.writer {
            w.event(&Event::CaseFinished(Box::new(Finished { record: case.clone(), transcript: None })))?;
            w.sync()?;
        }
        self.cases.push(case);
        Ok(())
    }

    pub(super) fn launch(
        &mut self,
        secs: f64,
        before: (f64, Option<f64>),
        failed: Option<&str>,
        kind: &str,
    ) -> Result<(), Error> {
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

    pub(super) fn released(&mut self, m: &Memory, campaign: &Campaign) -> Result<(), Error> {
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

    pub(super) fn died(&mut self, why: &str) -> Result<(), Error> {
        let case = names::STOP.case(names::SERVER_DIED).to_string();
        self.push(record(&case, Outcome::Fail, Some(why.to_string()), vec![]))
    }

    pub(super) fn not_run(&mut self, suite: &str, why: &str) -> Result<(), Error> {
        self.push(record(
            &names::NOT_RUN.case(suite).to_string(),
            Outcome::NotApplicable,
            Some(why.to_string()),
            vec![],
        ))
    }

    /// Create the file: its manifest (the launched target, or what the
    /// configuration names of one that never came up) and the cases so far.
    pub(super) fn open(
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
    pub(super) fn open_as(
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
    pub(super) fn close(self, interrupted: Option<i32>) -> Result<(), Error> {
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
    let tag = crate::files::sha256_hex(why.as_bytes());
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
