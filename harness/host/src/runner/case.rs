//! One case, from libtest trial to record: run it in the sandbox (or not,
//! when the run has stopped), check its snapshots, give it its verdict by
//! the host's rules ([`super::verdict`]), and emit its events.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::SystemTime;

use libtest_mimic::{Completion, Failed, Trial};
use sparktest_record::{CallRecord, CaseRecord, ClientCeiling, Latency, Percentiles, Verdict};

use super::control::RunControl;
use super::prepare::{Broken, Instrument};
use super::verdict;
use crate::events::{Event, Finished, Sinks};
use crate::plugin::{CaseInfo, Judge, PluginHost, Reach, Restarter};
use crate::signal;
use crate::snapshot::{self, SnapshotStatus};
use crate::timestamp::rfc3339;
use sparktest_endpoint::Endpoint;

/// How often, and how many times, a lost case looks again for its
/// server's exit (a process killed closes its sockets, then exits).
const DEATH_POLL: std::time::Duration = std::time::Duration::from_millis(50);
const DEATH_WAITS: u32 = 20;

/// What every trial shares.
pub struct Shared {
    /// The runtime cases block on.
    pub rt: tokio::runtime::Handle,
    /// The sandbox (one for every repeat of the run).
    pub host: Arc<PluginHost>,
    /// The run's target, and each arm's, by target name.
    pub endpoints: BTreeMap<String, Arc<Endpoint>>,
    /// Restarters of the launched targets, by name.
    pub restarters: BTreeMap<String, Restarter>,
    /// The launched servers, by name: a case that may restart one waits for
    /// any restart still going before it lets the next case run.
    pub launched: BTreeMap<String, Arc<std::sync::Mutex<crate::target::Launched>>>,
    /// The target under test.
    pub main_target: String,
    /// The judge, when there is one.
    pub judge: Option<Arc<Judge>>,
    /// The suite's pinned files.
    pub files: Arc<BTreeMap<String, Vec<u8>>>,
    /// `snapshots/<target>`.
    pub snapshots: PathBuf,
    /// Every consumer of the run's events.
    pub sinks: Sinks,
    /// Exclusive cases take it for writing, the others for reading.
    pub exclusive: RwLock<()>,
    /// The client's own ceiling.
    pub ceiling: Option<ClientCeiling>,
    /// When the run stops early.
    pub control: RunControl,
    /// Keys out of every record (a server may echo one in an error).
    pub redactor: crate::redact::Redactor,
}

/// The libtest trials of a run: every selected case of every instrument,
/// then one failing case per broken instrument.
pub fn trials(
    shared: &Arc<Shared>,
    instruments: &[Arc<Instrument>],
    broken: &[Arc<Broken>],
    selected: &dyn Fn(&str) -> bool,
) -> Vec<Trial> {
    let mut trials = Vec::new();
    for inst in instruments {
        for case in &inst.cases {
            let id = format!("{}::{}", inst.prefix(), case.name);
            if !selected(&id) {
                continue;
            }
            let (shared, inst, case) = (shared.clone(), inst.clone(), case.clone());
            trials.push(Trial::ignorable_test(id, move || {
                // A bug in the harness still leaves a record of the case.
                match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_case(&shared, &inst, &case))) {
                    Ok(result) => result,
                    Err(panic) => {
                        let what = panic
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()));
                        let id = format!("{}::{}", inst.prefix(), case.name);
                        let why = verdict::harness_failed(&what.unwrap_or_default());
                        let mut record = bare_record(&id, &inst.plugin.info.name, &case.name, why);
                        record.tags = case.tags.clone();
                        record.arm = inst.arm.as_ref().map(|(a, _)| a.clone());
                        finish(&shared, record, None)
                    }
                }
            }));
        }
    }
    for b in broken {
        let id = b.case_id();
        if !selected(&id) {
            continue;
        }
        let (shared, b) = (shared.clone(), b.clone());
        trials.push(Trial::ignorable_test(id.clone(), move || {
            let _ = shared.sinks.emit(&Event::CaseStarted);
            let record = bare_record(&id, &b.name, "setup::load", verdict::broken(&b.message));
            finish(&shared, record, None)
        }));
    }
    trials
}

/// A record for a case that made no call.
fn bare_record(id: &str, instrument: &str, case: &str, verdict: Verdict) -> CaseRecord {
    CaseRecord {
        id: id.to_string(),
        instrument: instrument.to_string(),
        case: case.to_string(),
        tags: Vec::new(),
        outcome: verdict.outcome(),
        reason: verdict.reason().map(str::to_string),
        metrics: Vec::new(),
        notes: Vec::new(),
        started_at: rfc3339(SystemTime::now()),
        seconds: 0.0,
        endpoint_seconds: 0.0,
        calls: Vec::new(),
        prompt_tokens: None,
        completion_tokens: None,
        transcript_sha256: crate::files::sha256_hex(b""),
        snapshots: Vec::new(),
        arm: None,
        latency: None,
    }
}

/// Emit the record and turn it into libtest's verdict.
fn finish(
    shared: &Shared,
    mut record: CaseRecord,
    transcript: Option<crate::transcript::Transcript>,
) -> Result<Completion, Failed> {
    record.reason = record.reason.map(|r| shared.redactor.redact(&r));
    for (_, v) in record.notes.iter_mut() {
        *v = shared.redactor.redact(v);
    }
    let verdict = record.verdict();
    let event = Event::CaseFinished(Box::new(Finished { record, transcript: transcript.map(Arc::new) }));
    if let Err(err) = shared.sinks.emit(&event) {
        return Err(Failed::from(format!(
            "part of this case's output was not written: {}",
            sparktest_record::foreign::shown(&err.to_string())
        )));
    }
    // A reason is foreign text (a server's body, an instrument's words):
    // printed through the one printer, after words of ours, since libtest
    // starts a line with a failure's message.
    let shown = |r: &str| sparktest_record::foreign::shown(r).into_owned();
    match verdict {
        Verdict::Pass => Ok(Completion::Completed),
        Verdict::Fail(r) => Err(Failed::from(format!("failed: {}", shown(&r)))),
        // libtest has no third verdict: a lost case fails with `lost:`.
        Verdict::Lost(r) => Err(Failed::from(format!("lost: {}", shown(&r)))),
        Verdict::NotApplicable(r) => Ok(Completion::ignored_with(format!("not applicable: {}", shown(&r)))),
        // Neither passed nor failed: the harness was stopped.
        Verdict::Interrupted(r) => Ok(Completion::ignored_with(format!("interrupted: {}", shown(&r)))),
    }
}

/// A held turn on the exclusive lock (held only to be dropped).
#[allow(dead_code)]
enum Turn<'a> {
    Write(std::sync::RwLockWriteGuard<'a, ()>),
    Read(std::sync::RwLockReadGuard<'a, ()>),
}

/// Why the case's launched server exited on its own, if it did. A dying
/// process closes its sockets before it can be reaped: a case lost to a
/// closed connection waits a moment for the exit to show.
fn died_with(shared: &Shared, target: &str, verdict: &Verdict) -> Option<String> {
    shared.launched.get(target).and_then(|l| {
        let waits = if matches!(verdict, Verdict::Lost(_)) { DEATH_WAITS } else { 0 };
        (0..=waits).find_map(|i| {
            if i > 0 {
                std::thread::sleep(DEATH_POLL);
            }
            l.lock().unwrap_or_else(|p| p.into_inner()).died()
        })
    })
}

/// The case's snapshots against their baselines, each as (name, status);
/// a changed one changes the verdict. Snapshots are committed files: a
/// reply that echoes a key is redacted like every other output.
fn check_snapshots(
    shared: &Shared,
    inst: &Instrument,
    case: &CaseInfo,
    taken: &[(String, String)],
    verdict: &mut Verdict,
) -> Vec<(String, String)> {
    let snap_dir = shared.snapshots.join(inst.prefix().replace("::", "/"));
    let mut snapshots = Vec::new();
    for (snap_name, content) in taken {
        let content = shared.redactor.redact(content);
        let status = snapshot::check(&snap_dir, &format!("{}__{snap_name}", case.name.replace("::", "__")), &content);
        if status == SnapshotStatus::Changed {
            *verdict = verdict::snapshot_changed(verdict.clone(), snap_name, &shared.snapshots);
        }
        snapshots.push((snap_name.clone(), status.as_str().to_string()));
    }
    snapshots
}

fn run_case(shared: &Shared, inst: &Instrument, case: &CaseInfo) -> Result<Completion, Failed> {
    let id = format!("{}::{}", inst.prefix(), case.name);
    let _ = shared.sinks.emit(&Event::CaseStarted);
    // Exclusive cases run alone; the others may share the server.
    let _turn = if inst.exclusive {
        Turn::Write(shared.exclusive.write().unwrap_or_else(|p| p.into_inner()))
    } else {
        Turn::Read(shared.exclusive.read().unwrap_or_else(|p| p.into_inner()))
    };
    // Checked once the turn is ours: the run may have been interrupted or
    // have stopped while this case waited for it. After a stop signal no
    // case starts, and none is recorded: `--resume` runs them.
    if let Some(signal) = signal::interrupted() {
        return Ok(Completion::ignored_with(format!("not run: interrupted by {}", signal::name(signal))));
    }
    if let Some(stop) = shared.control.stopped() {
        let mut record = bare_record(&id, &inst.plugin.info.name, &case.name, verdict::stopped(&stop.reason));
        record.tags = case.tags.clone();
        record.arm = inst.arm.as_ref().map(|(a, _)| a.clone());
        return finish(shared, record, None);
    }
    let target = inst.arm.as_ref().map_or(&shared.main_target, |(_, t)| t);
    let endpoint = shared.endpoints[target].clone();
    // Only a case that runs alone may restart its server.
    let restart = if inst.exclusive { shared.restarters.get(target).cloned() } else { None };
    let reach = Reach { judge: shared.judge.clone(), restart, ceiling: shared.ceiling.clone() };
    let started_at = rfc3339(SystemTime::now());
    let started = std::time::Instant::now();
    // A stop signal cancels the case where it is: what it was waiting for
    // is the harness's own stop, not the server's answer.
    let result = shared.rt.block_on(async {
        tokio::select! {
            result = shared.host.run(&inst.plugin, endpoint, shared.files.clone(), reach, &inst.config, &case.name) => Ok(result),
            signal = signal::until_interrupted() => Err(signal),
        }
    });
    let result = match result {
        Ok(result) => result,
        Err(signal) => {
            let mut record = bare_record(&id, &inst.plugin.info.name, &case.name, verdict::cancelled(signal));
            record.tags = case.tags.clone();
            record.arm = inst.arm.as_ref().map(|(a, _)| a.clone());
            record.started_at = started_at;
            record.seconds = started.elapsed().as_secs_f64();
            return finish(shared, record, None);
        }
    };
    // A restart the case started goes on after a timeout: wait for it
    // before the next case may reach the server.
    if inst.exclusive
        && let Some(l) = shared.launched.get(target)
    {
        drop(l.lock().unwrap_or_else(|p| p.into_inner()));
    }
    // A signal that came in as the case ended is read now.
    let mut verdict = verdict::of_run(&result.ended, result.log.first_lost.as_deref(), signal::interrupted());
    // A launched server that exited on its own ends the run: this case's
    // reason says so, and every case after it is lost with the same words.
    // A dying process closes its sockets before it can be reaped: a case
    // lost to a closed connection waits a moment for the exit to show.
    let died = died_with(shared, target, &verdict);
    if let Some(why) = &died {
        shared.control.died(why);
    }
    if let Some(why) = &died {
        verdict = verdict::server_died(verdict, why);
    }
    let finding = result.finding();
    let snapshots = check_snapshots(shared, inst, case, finding.map_or(&[][..], |f| &f.snapshots), &mut verdict);
    let sum = |f: fn(&CallRecord) -> Option<u32>| -> Option<u64> {
        let counts: Vec<u64> = result.log.calls.iter().filter_map(|c| f(c).map(u64::from)).collect();
        (!counts.is_empty()).then(|| counts.iter().sum())
    };
    let metrics = finding.map(|f| verdict::finite(&f.metrics)).unwrap_or_default();
    let mut notes = finding.map(|f| f.notes.clone()).unwrap_or_default();
    notes.extend(ceiling_notes(shared.ceiling.as_ref(), &metrics));
    if !snapshots.is_empty() {
        // Which baseline the case was compared with.
        let folder = shared.snapshots.file_name().map_or_else(String::new, |f| f.to_string_lossy().into_owned());
        notes.push(("snapshot-baseline".into(), format!("snapshots/{folder}")));
    }
    let transcript = result.log.recorder.transcript().clone();
    let record = CaseRecord {
        id: id.clone(),
        instrument: inst.plugin.info.name.clone(),
        case: case.name.clone(),
        tags: case.tags.clone(),
        outcome: verdict.outcome(),
        reason: verdict.reason().map(str::to_string),
        metrics,
        notes,
        started_at,
        seconds: result.elapsed.as_secs_f64(),
        endpoint_seconds: result.log.endpoint_time.as_secs_f64(),
        prompt_tokens: sum(|c| c.prompt_tokens),
        completion_tokens: sum(|c| c.completion_tokens),
        latency: latency(&result.log.calls, &transcript),
        calls: result.log.calls.clone(),
        transcript_sha256: result.log.recorder.sha256(),
        snapshots,
        arm: inst.arm.as_ref().map(|(a, _)| a.clone()),
    };
    shared.control.observe(&id, record.outcome, record.reason.as_deref(), result.log.stop.as_deref());
    finish(shared, record, Some(transcript))
}

/// p50 / p90 / p99 of TTFT, inter-token latency and request latency over a
/// case's calls, when it timed more than one.
fn latency(calls: &[CallRecord], transcript: &crate::transcript::Transcript) -> Option<Latency> {
    let answered: Vec<&CallRecord> = calls.iter().filter(|c| c.result == "ok" && c.kind != "judge").collect();
    if answered.len() < 2 {
        return None;
    }
    let ttft: Vec<f64> = answered.iter().filter_map(|c| c.ttft_ms).collect();
    let e2e: Vec<f64> = answered.iter().map(|c| c.total_ms).collect();
    // Inter-token gaps come from the chunk arrivals kept in the transcript.
    let mut itl = Vec::new();
    for x in transcript.exchanges.iter().filter(|x| x.kind != "judge") {
        let arrivals: Vec<f64> = x
            .timing
            .as_ref()
            .and_then(|t| t.get("chunk_arrivals_ms"))
            .and_then(|a| a.as_array())
            .map(|a| a.iter().filter_map(serde_json::Value::as_f64).collect())
            .unwrap_or_default();
        itl.extend(arrivals.windows(2).map(|w| w[1] - w[0]));
    }
    Some(Latency { ttft_ms: Percentiles::of(&ttft), itl_ms: Percentiles::of(&itl), e2e_ms: Percentiles::of(&e2e) })
}

/// Flag every tok/s figure above the ceiling's margin: it may measure the
/// client rather than the server.
fn ceiling_notes(ceiling: Option<&ClientCeiling>, metrics: &[sparktest_record::Metric]) -> Vec<(String, String)> {
    let Some(c) = ceiling else { return Vec::new() };
    metrics
        .iter()
        .filter(|m| m.unit == "tok/s" && m.value > c.max_tok_s * c.flag_margin)
        .map(|m| {
            (
                "near-client-ceiling".to_string(),
                format!(
                    "{} = {:.1} tok/s is above {:.0}% of this client's ceiling ({:.0} tok/s): it may measure the client",
                    m.name,
                    m.value,
                    c.flag_margin * 100.0,
                    c.max_tok_s
                ),
            )
        })
        .collect()
}
