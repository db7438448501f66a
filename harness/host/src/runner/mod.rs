//! The run: suite → instruments → cases → libtest trials → events → sinks.
//!
//! libtest-mimic gives the familiar command line and output; every case
//! emits its events to the run's sinks (the measurement file, the terminal
//! summary, JUnit, progress, transcripts). A lost case is a failed trial
//! whose message starts with `lost:`; a not-applicable case is an ignored
//! one; the measurement file keeps all four apart.
//!
//! - [`prepare`]: build, load and list the instruments.
//! - [`select`]: partitions and resumed runs.
//! - [`connect`]: launch and probe the targets (under test, arms, judge).
//! - [`case`]: one case, from trial to record; [`verdict`]: the host's
//!   rules over a case's verdict.
//! - [`control`]: when a run stops early; `crate::signal`: stop signals.
//!   [`gate`]: a gate suite's verdict.

pub mod case;
pub mod connect;
pub mod control;
pub mod gate;
pub mod plan;
pub mod prepare;
pub mod select;
pub mod verdict;

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::{Instant, SystemTime};

use libtest_mimic::{Arguments, Trial};
use sparktest_record::{Summary, exit_code};

use crate::config::Config;
use crate::error::Error;
use crate::events::{Event, Sinks};
use crate::signal;
use crate::sinks::measurement::MeasurementWriter;
use crate::sinks::summary::TerminalSummary;
use crate::sinks::{junit::JunitSink, progress::ProgressSink, transcripts::TranscriptStore};
use crate::tally::{self, TallySink};
use crate::timestamp::rfc3339;
use crate::{snapshot, suite};

/// Which server to measure.
#[derive(Debug, Clone)]
pub enum TargetChoice {
    /// A target named in the configuration.
    Named(String),
    /// A running server given on the command line.
    Endpoint {
        /// Base URL.
        url: String,
        /// Model id it must serve.
        model: String,
    },
}

/// Everything `cargo sparktest --suite …` needs.
#[derive(Debug)]
pub struct RunArgs {
    /// Suite name or path.
    pub suite: String,
    /// The target.
    pub target: TargetChoice,
    /// Override of the measurements folder.
    pub measurements_dir: Option<PathBuf>,
    /// libtest arguments (filters, `--list`, `--format` …).
    pub libtest: Arguments,
    /// Where the command was started.
    pub cwd: PathBuf,
    /// Arm overrides, arm name → target name (`--arm draft=my-draft`).
    pub arms: Vec<(String, String)>,
    /// The judge target (`--judge`), over the configuration's.
    pub judge: Option<String>,
    /// Write a JUnit report here.
    pub junit: Option<PathBuf>,
    /// `count:K/N` or `hash:K/N`.
    pub partition: Option<String>,
    /// What the parts of a partitioned run share.
    pub run_group: Option<String>,
    /// Run only the lost or unrecorded cases of this earlier run.
    pub resume: Option<String>,
    /// The board column's label (`--label`), replacing the target's.
    pub label: Option<String>,
    /// Run the selected cases this many times (`--repeat N`), each repeat
    /// its own measurement file; 0 and 1 both mean once.
    pub repeat: u32,
    /// The campaign this run is a step of, for its manifest.
    pub campaign: Option<sparktest_record::CampaignRef>,
}

fn runtime() -> Result<tokio::runtime::Runtime, Error> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::io("start the async runtime", e))
}

/// Run a suite. Returns the process exit code.
pub fn run(args: RunArgs) -> Result<i32, Error> {
    let config = Config::discover(&args.cwd)?;
    let mut session = Session::new(config)?;
    Ok(session.run(&args, &mut |_| Ok(()))?.code)
}

/// A project's runtime and the targets it has reached. A `--suite` run is
/// one session with one run; a campaign runs every suite of a
/// configuration in one session, its server launched once, and stops it
/// before the next. The targets stop when the session drops.
pub struct Session {
    config: Config,
    rt: tokio::runtime::Runtime,
    targets: connect::Targets,
    /// The client's own ceiling, measured before the first run against the
    /// targets reached now (again after [`Session::stop_all`]).
    ceiling: Option<Option<sparktest_record::ClientCeiling>>,
    /// The project's revision, read once.
    revision: Option<Option<String>>,
}

/// What one run of a suite came to.
#[derive(Debug, Clone, Default)]
pub struct Ran {
    /// The process exit code a `--suite` run gives.
    pub code: i32,
    /// The run's id (its first repeat's, for `--repeat N`); None when no
    /// case ran.
    pub run_id: Option<String>,
    /// Cases by outcome, over every repeat.
    pub counts: tally::Counts,
    /// A gate suite's verdict (its last repeat's).
    pub gate: Option<bool>,
    /// Why it stopped early (the serve taken as gone, credentials refused).
    pub stopped: Option<String>,
    /// The stop signal that interrupted it.
    pub interrupted: Option<i32>,
}

impl Ran {
    /// Add one repeat's cases by outcome.
    fn add(&mut self, t: &tally::Counts) {
        self.counts.passed += t.passed;
        self.counts.failed += t.failed;
        self.counts.lost += t.lost;
        self.counts.not_applicable += t.not_applicable;
        self.counts.interrupted += t.interrupted;
    }
}

impl Session {
    /// A session on a project's configuration: its runtime, the stop
    /// signals watched, no target reached yet.
    pub fn new(config: Config) -> Result<Session, Error> {
        snapshot::init(&config.root);
        let rt = runtime()?;
        signal::install(&rt);
        Ok(Session { config, rt, targets: connect::Targets::default(), ceiling: None, revision: None })
    }

    /// The configuration it runs against.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Launch (or reach) a target and check its identity, as the first run
    /// against it would; what its manifests will record of it.
    pub fn launch(&mut self, name: &str) -> Result<sparktest_record::TargetInfo, Error> {
        let cfg = self.config.target(name)?.clone();
        let connector = connect::Connector::new(&self.config, &[(name, &cfg)])?;
        self.targets.ensure(&self.rt, &connector, name, &cfg)?;
        Ok(self.targets.get(name).info.clone())
    }

    /// Whether a target the harness launched still runs (one it only
    /// reaches is taken as running).
    pub fn healthy(&self, name: &str) -> bool {
        self.targets
            .0
            .get(name)
            .and_then(|c| c.launched.as_ref())
            .is_none_or(|l| l.lock().unwrap_or_else(|p| p.into_inner()).running())
    }

    /// Why a target the harness launched is gone, when it exited on its
    /// own: its exit status and the end of its log.
    pub fn died(&self, name: &str) -> Option<String> {
        let launched = self.targets.0.get(name)?.launched.as_ref()?;
        launched.lock().unwrap_or_else(|p| p.into_inner()).died()
    }

    /// Stop every server the session launched, now.
    pub fn stop_all(&mut self) {
        self.targets.0.clear();
        self.ceiling = None;
    }

    /// What this client can measure at all, before trusting any speed
    /// figure: measured against a loopback stream once for the targets the
    /// session reaches now.
    fn ceiling(&mut self) -> Option<sparktest_record::ClientCeiling> {
        let rt = &self.rt;
        self.ceiling
            .get_or_insert_with(|| match rt.block_on(sparktest_endpoint::measure_client_ceiling()) {
                Ok(c) => Some(c),
                Err(err) => {
                    crate::warn_line!("sparktest: warning: the client ceiling could not be measured: {err}");
                    None
                }
            })
            .clone()
    }

    /// How many cases a suite lists (built and listed, nothing launched).
    pub fn count_cases(&self, suite: &str) -> Result<usize, Error> {
        let suite = suite::load(&suite::locate(&self.config.root, suite)?)?;
        let files = Arc::new(suite.files.clone());
        Ok(prepare::prepare(&self.rt, &self.config, &suite, &files, &[])?.case_ids().len())
    }

    /// Run a suite against this session's targets, launching what it needs
    /// that is not yet reached. `on_start` hears the manifest before the
    /// first case (a campaign journals its run id); its error stops the run.
    pub fn run(
        &mut self,
        args: &RunArgs,
        on_start: &mut dyn FnMut(&sparktest_record::Manifest) -> Result<(), Error>,
    ) -> Result<Ran, Error> {
        let config = &self.config;
        let rt = &self.rt;
        let suite = suite::load(&suite::locate(&config.root, &args.suite)?)?;
        prepare::check_arm_overrides(&suite, &args.arms)?;
        let files = Arc::new(suite.files.clone());
        let prepared = prepare::prepare(rt, config, &suite, &files, &args.arms)?;
        let plan = plan::Plan::new(config, args, &suite, &prepared)?;
        // A gate counts every check of the suite: a filter that skips one fails it.
        let checks = suite.gate.then(|| (plan.gate_checks(&prepared), plan.gate_carry()));
        if args.libtest.list || !plan.any_selected(&args.libtest) {
            return Ok(list_only(args, &plan, checks.as_ref(), &suite.name));
        }
        plan.connect(rt, config, &prepared, &mut self.targets)?;
        let ceiling = self.ceiling();
        let revision = self.revision.get_or_insert_with(|| plan::git_revision(&self.config.root)).clone();
        let (config, rt, targets) = (&self.config, &self.rt, &self.targets);
        let mut first = plan.manifest(&suite, &prepared, targets, ceiling, revision);
        first.campaign = args.campaign.clone();
        let dir = config.measurements_dir(args.measurements_dir.as_deref());
        let snapshots = config.path(&config.run.snapshots_dir).join(snapshot_folder(&first.target));
        let (host, instruments, broken) = (
            Arc::new(prepared.host),
            prepared.instruments.into_iter().map(Arc::new).collect::<Vec<_>>(),
            prepared.broken.into_iter().map(Arc::new).collect::<Vec<_>>(),
        );
        // A case a name filter leaves out is still handed to libtest, which
        // leaves it out again and counts it (`filtered_out`), as `cargo test`
        // does; partitions and resumes are this tool's, not libtest's.
        let by_name = |id: &str| args.libtest.is_filtered_out(&Trial::test(id.to_string(), || Ok(())));
        let selected = |id: &str| plan.selected.iter().any(|s| s == id) || by_name(id);
        let repeats = args.repeat.max(1);
        let mut ran = Ran::default();
        for index in 1..=repeats {
            let manifest = repeat_manifest(&first, index, repeats);
            if index == 1 {
                ran.run_id = Some(manifest.run_id.clone());
                on_start(&manifest)?;
            }
            let writer = Arc::new(MeasurementWriter::create(&dir, &manifest.run_id)?.redacting(plan.redactor.clone()));
            let tally = Arc::new(TallySink::default());
            let sinks = sinks(args, &dir, &writer, &tally, &plan, &suite);
            let cases = plan.selected.len();
            sinks.emit(&Event::RunStarted { manifest: Box::new(manifest.clone()), cases })?;
            let shared = Arc::new(case::Shared {
                rt: rt.handle().clone(),
                host: host.clone(),
                endpoints: targets.0.iter().map(|(n, c)| (n.clone(), c.endpoint.clone())).collect(),
                restarters: targets.0.iter().filter_map(|(n, c)| Some((n.clone(), c.restarter()?))).collect(),
                launched: targets.0.iter().filter_map(|(n, c)| Some((n.clone(), c.launched.clone()?))).collect(),
                main_target: plan.target_name.clone(),
                judge: plan.judge(targets),
                files: files.clone(),
                snapshots: snapshots.clone(),
                sinks: sinks.clone(),
                exclusive: RwLock::new(()),
                ceiling: manifest.client_ceiling.clone(),
                control: control::RunControl::new(config.run.max_lost_in_row),
                redactor: plan.redactor.clone(),
            });
            let trials = case::trials(&shared, &instruments, &broken, &selected);
            let started = Instant::now();
            signal::cases_running(true);
            let conclusion = libtest_mimic::run(&args.libtest, trials);
            let interrupted = signal::interrupted();
            let stop = shared.control.stopped();
            let mut summary = summary(&tally, started, checks.clone(), stop.as_ref(), &plan.redactor);
            if let Some(signal) = interrupted {
                summary.interrupted = Some(signal::name(signal).to_string());
            }
            // A gate fails the exit code even where libtest saw nothing fail: a
            // check not applicable, or one a filter skipped.
            let gate_failed = summary.gate.as_ref().is_some_and(|g| !g.passed);
            ran.gate = summary.gate.as_ref().map(|g| g.passed);
            ran.stopped = summary.stopped.clone();
            ran.add(&tally.tally().counts);
            sinks.emit(&Event::RunFinished(Box::new(summary)))?;
            signal::cases_running(false);
            if let Some(signal) = interrupted {
                ran.interrupted = Some(signal);
                ran.code = 128 + signal;
                return Ok(ran);
            }
            match stop {
                Some(s) if s.refused => {
                    ran.code = exit_code::TARGET;
                    return Ok(ran);
                }
                // A run stopped early (the server kept losing cases): the next
                // repeat would measure the same dead server.
                Some(_) => {
                    if conclusion.has_failed() || gate_failed {
                        ran.code = exit_code::CASES_FAILED;
                    }
                    return Ok(ran);
                }
                None if conclusion.has_failed() || gate_failed => ran.code = exit_code::CASES_FAILED,
                None => {}
            }
        }
        Ok(ran)
    }
}

/// A gate suite's checks: how many it has, and what earlier runs of a
/// resumed run carried (checks done, those that failed).
type GateChecks = (usize, (usize, Vec<sparktest_record::GateFailure>));

/// Listing, or nothing selected: libtest prints the cases, and no server
/// is needed. A gate with nothing to run stands on what earlier runs
/// recorded (a resume with nothing left), else it has not passed.
fn list_only(args: &RunArgs, plan: &plan::Plan, checks: Option<&GateChecks>, suite: &str) -> Ran {
    let trials = plan.selected.iter().map(|n| Trial::test(n.clone(), || Ok(()))).collect();
    let failed = libtest_mimic::run(&args.libtest, trials).has_failed();
    let mut ran = Ran::default();
    if let Some((total, carried)) = checks.filter(|_| !args.libtest.list) {
        let gate = gate::verdict(&Default::default(), *total, carried);
        ran.gate = Some(gate.passed);
        if !gate.passed {
            crate::warn_line!("sparktest: gate {suite}: FAILED: {}", gate.failing.join("; "));
            ran.code = exit_code::CASES_FAILED;
            return ran;
        }
    }
    ran.code = if failed && !args.libtest.list { exit_code::CASES_FAILED } else { exit_code::OK };
    ran
}

/// The manifest of repeat `index` of `repeats`: with more than one, every
/// repeat its own file and id, the group tying them, and said.
fn repeat_manifest(first: &sparktest_record::Manifest, index: u32, repeats: u32) -> sparktest_record::Manifest {
    let mut manifest = first.clone();
    if repeats > 1 {
        if index > 1 {
            manifest.started_at = rfc3339(SystemTime::now());
        }
        manifest.run_id = format!("{}-r{index}", first.run_id);
        manifest.repeat =
            Some(sparktest_record::Repeat { index, total: repeats, group: format!("repeat-{}", first.run_id) });
        crate::warn_line!("sparktest: repeat {index} of {repeats} ({})", manifest.run_id);
    }
    manifest
}

/// The folder of a run's byte-for-byte baselines under `snapshots/`: a
/// named target's own name; for `--endpoint`, what the probe found (engine,
/// build, model and its path, context, slots), so a second ad-hoc server is
/// never judged against another server's replies.
fn snapshot_folder(target: &sparktest_record::TargetInfo) -> String {
    if target.name != "endpoint" {
        return target.name.clone();
    }
    let fact = |k: &str| target.facts.iter().find(|(f, _)| f == k).map_or("", |(_, v)| v.as_str());
    let identity = [
        target.engine.as_str(),
        target.build.as_deref().unwrap_or(""),
        target.model_id.as_str(),
        target.model_path.as_deref().unwrap_or(""),
        fact(sparktest_contract::facts::CONTEXT_PER_REQUEST.name()),
        fact(sparktest_contract::facts::SLOTS.name()),
    ]
    .join("\n");
    let model: String =
        target.model_id.chars().map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '-' }).collect();
    let model: String = model.trim_start_matches(['.', '-', '_']).chars().take(48).collect();
    format!("endpoint-{model}-{}", &crate::files::sha256_hex(identity.as_bytes())[..12])
}

/// The run's last line: the tally, the gate over the suite's checks where
/// it is one, and why it stopped early.
fn summary(
    tally: &TallySink,
    started: Instant,
    gate: Option<GateChecks>,
    stop: Option<&control::Stop>,
    redactor: &crate::redact::Redactor,
) -> Summary {
    let t = tally.tally();
    Summary {
        finished_at: rfc3339(SystemTime::now()),
        seconds: started.elapsed().as_secs_f64(),
        passed: t.counts.passed,
        failed: t.counts.failed,
        lost: t.counts.lost,
        not_applicable: t.counts.not_applicable,
        instruments: t.instruments(),
        gate: gate.map(|(checks, carried)| gate::verdict(&t, checks, &carried)),
        // A refusal's body may echo a key: redacted before any sink (the
        // terminal summary prints it as it is).
        stopped: stop.map(|s| redactor.redact(&s.reason)),
        interrupted: None,
        interrupted_cases: t.counts.interrupted,
    }
}

/// The run's sinks: the measurement file, the tally, the terminal summary,
/// transcripts, and JUnit and progress where asked for.
fn sinks(
    args: &RunArgs,
    dir: &std::path::Path,
    writer: &Arc<MeasurementWriter>,
    tally: &Arc<TallySink>,
    plan: &plan::Plan,
    suite: &suite::Suite,
) -> Sinks {
    let mut sinks = Sinks::default();
    sinks.push(writer.clone());
    sinks.push(tally.clone());
    sinks.push(Arc::new(TranscriptStore::new(dir, plan.redactor.clone())));
    sinks.push(Arc::new(TerminalSummary::new(writer.path().to_path_buf(), suite.name.clone())));
    if let Some(path) = &args.junit {
        sinks.push(Arc::new(JunitSink::new(args.cwd.join(path))));
    }
    let json = matches!(args.libtest.format, Some(libtest_mimic::FormatSetting::Json));
    if ProgressSink::wanted(json) {
        sinks.push(Arc::new(ProgressSink::new()));
    }
    sinks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(model: &str, ctx: &str) -> sparktest_record::TargetInfo {
        sparktest_record::TargetInfo {
            name: "endpoint".into(),
            base_url: "http://127.0.0.1:8000".into(),
            model_id: model.into(),
            engine: "llama.cpp".into(),
            build: Some("b1".into()),
            model_path: None,
            model_sha256: None,
            launch_command: None,
            facts: vec![("context_per_request".into(), ctx.into())],
            host: None,
            tool_choice: None,
            label: None,
            note: None,
            description: None,
        }
    }

    #[test]
    fn endpoint_baselines_follow_what_the_probe_found() {
        let a = snapshot_folder(&endpoint("org/Model 7B", "4096"));
        assert!(a.starts_with("endpoint-org-Model-7B-") && a.len() == "endpoint-org-Model-7B-".len() + 12, "{a}");
        // The same configuration at another address shares the baseline.
        let mut moved = endpoint("org/Model 7B", "4096");
        moved.base_url = "http://10.0.0.2:8000".into();
        assert_eq!(snapshot_folder(&moved), a);
        // Another context, build or model is another baseline.
        assert_ne!(snapshot_folder(&endpoint("org/Model 7B", "8192")), a);
        let mut rebuilt = endpoint("org/Model 7B", "4096");
        rebuilt.build = Some("b2".into());
        assert_ne!(snapshot_folder(&rebuilt), a);
        // A name never becomes a path piece it should not: no separators.
        assert!(!snapshot_folder(&endpoint("../../etc", "1")).contains('/'));
        let mut named = endpoint("m", "1");
        named.name = "local".into();
        assert_eq!(snapshot_folder(&named), "local");
    }
}
