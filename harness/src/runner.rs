//! The run: suite → instruments → cases → libtest trials → records.
//!
//! libtest-mimic gives the familiar command line and output. Every finished
//! case becomes one [`Event`], fanned out to the measurement file and the
//! run's tally; the terminal shows it through libtest. A lost case is a
//! failed trial whose message starts with `lost:`; a not-applicable case is
//! an ignored one; the measurement file keeps all four apart.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime};

use libtest_mimic::{Arguments, Completion, Failed, Trial};
use sparktest_record::{
    ArmInfo, CaseRecord, ClientCeiling, Gate, HarnessInfo, InstrumentInfo, InstrumentSummary, Line, Manifest, Outcome,
    Summary, TargetInfo, exit_code,
};

use crate::config::{Config, TargetConfig};
use crate::endpoint::{Client, Endpoint, ProbeError, Timeouts};
use crate::error::{Error, ErrorKind};
use crate::measurement::{MeasurementWriter, rfc3339};
use crate::plugin::{self, CaseVerdict, InstrumentPlugin, Limits, PluginHost};
use crate::snapshot::{self, SnapshotStatus};
use crate::suite::{self, Suite};
use crate::target::{self, Launched};

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
}

/// One finished case, as the runner announces it.
#[derive(Debug, Clone)]
pub enum Event {
    /// A case ended.
    CaseFinished(Box<CaseRecord>),
}

/// A consumer of run events.
pub trait Sink: Send + Sync {
    /// Take one event.
    fn event(&self, event: &Event) -> Result<(), Error>;
}

impl Sink for MeasurementWriter {
    fn event(&self, event: &Event) -> Result<(), Error> {
        match event {
            Event::CaseFinished(record) => self.write(&Line::Case((**record).clone())),
        }
    }
}

/// Counts of each outcome, overall and per instrument.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    /// Passed.
    pub passed: u64,
    /// Failed.
    pub failed: u64,
    /// Lost.
    pub lost: u64,
    /// Not applicable.
    pub not_applicable: u64,
    /// Cases that did not pass: id, outcome and reason.
    pub not_passed: Vec<String>,
    per_instrument: BTreeMap<String, Sums>,
}

#[derive(Debug, Default, Clone)]
struct Sums {
    counts: [u64; 4],
    seconds: f64,
    harness_seconds: f64,
    completion_tokens: u64,
    counted_tokens: bool,
}

impl Tally {
    /// The efficiency readout per instrument.
    pub fn instruments(&self) -> Vec<InstrumentSummary> {
        self.per_instrument
            .iter()
            .map(|(name, s)| {
                let given: u64 = s.counts.iter().sum();
                let per = |x: f64| if given == 0 { 0.0 } else { x / given as f64 };
                InstrumentSummary {
                    name: name.clone(),
                    given,
                    correct: s.counts[0],
                    failed: s.counts[1],
                    lost: s.counts[2],
                    not_applicable: s.counts[3],
                    mean_seconds: per(s.seconds),
                    output_tokens_per_correct: (s.counts[0] > 0 && s.counted_tokens)
                        .then(|| s.completion_tokens as f64 / s.counts[0] as f64),
                    mean_harness_seconds: per(s.harness_seconds),
                }
            })
            .collect()
    }
}

impl Sink for Mutex<Tally> {
    fn event(&self, event: &Event) -> Result<(), Error> {
        let Event::CaseFinished(record) = event;
        let mut t = self.lock().unwrap_or_else(|p| p.into_inner());
        let slot = match record.outcome {
            Outcome::Pass => 0,
            Outcome::Fail => 1,
            Outcome::Lost => 2,
            Outcome::NotApplicable => 3,
        };
        match slot {
            0 => t.passed += 1,
            1 => t.failed += 1,
            2 => t.lost += 1,
            _ => t.not_applicable += 1,
        }
        if slot != 0 {
            let outcome = ["pass", "fail", "lost", "not applicable"][slot];
            let reason = record.reason.as_deref().unwrap_or("");
            t.not_passed.push(format!("{} ({outcome}: {reason})", record.id));
        }
        let sums = t.per_instrument.entry(record.instrument.clone()).or_default();
        sums.counts[slot] += 1;
        sums.seconds += record.seconds;
        sums.harness_seconds += (record.seconds - record.endpoint_seconds).max(0.0);
        if let Some(n) = record.completion_tokens {
            sums.completion_tokens += n;
            sums.counted_tokens = true;
        }
        Ok(())
    }
}

struct Instrument {
    plugin: InstrumentPlugin,
    config: String,
    cases: Vec<plugin::CaseInfo>,
    exclusive: bool,
    /// For a paired instrument: this copy's arm and its target's name.
    arm: Option<(String, String)>,
}

impl Instrument {
    /// The case id prefix: `name` or `name::arm`.
    fn prefix(&self) -> String {
        match &self.arm {
            Some((arm, _)) => format!("{}::{arm}", self.plugin.info.name),
            None => self.plugin.info.name.clone(),
        }
    }
}

/// What every trial shares.
struct Shared {
    rt: tokio::runtime::Handle,
    host: PluginHost,
    /// The run's target, and each arm's, by target name.
    endpoints: BTreeMap<String, Arc<Endpoint>>,
    main_target: String,
    files: Arc<BTreeMap<String, Vec<u8>>>,
    snapshots: PathBuf,
    sinks: Vec<Arc<dyn Sink>>,
    /// Exclusive cases take it for writing, the others for reading.
    exclusive: RwLock<()>,
    ceiling: Option<ClientCeiling>,
}

/// A target the run reaches: its record, its endpoint, and the server when
/// the harness launched it (stopped on drop).
struct Connected {
    info: TargetInfo,
    endpoint: Arc<Endpoint>,
    _launched: Option<Launched>,
}

/// Launch (if configured) and probe one target. For a launched target, the
/// memory it holds before any work is added to its facts (`footprint.*`).
fn connect(rt: &tokio::runtime::Runtime, config: &Config, name: &str, cfg: &TargetConfig) -> Result<Connected, Error> {
    let mut launched: Option<Launched> = None;
    let mut footprint: Vec<(String, String)> = Vec::new();
    let base_url = match (&cfg.base_url, &cfg.launch) {
        (Some(url), _) => url.clone(),
        (None, Some(launch)) => {
            eprintln!("sparktest: launching target {name} …");
            let before = crate::hostinfo::memory_available();
            let l = rt.block_on(target::launch(config, name, launch, &cache_dir(config)))?;
            // Measured once healthy and before any request: what the serve
            // holds doing nothing.
            if let Some((rss, pids)) = crate::hostinfo::process_tree(l.pid) {
                footprint.push(("footprint.rss_bytes".into(), rss.to_string()));
                if let Some(mib) = crate::hostinfo::gpu_process_memory_mib(&pids) {
                    footprint.push(("footprint.gpu_process_memory_mib".into(), mib.to_string()));
                }
            }
            if let Some(b) = before {
                footprint.push(("footprint.mem_available_before_bytes".into(), b.to_string()));
            }
            if let Some(a) = crate::hostinfo::memory_available() {
                footprint.push(("footprint.mem_available_after_bytes".into(), a.to_string()));
            }
            if let Some(gpus) = crate::hostinfo::gpu_memory_used_mib() {
                let list: Vec<String> = gpus.iter().map(u64::to_string).collect();
                // Whole devices, other processes included: context, not the figure.
                footprint.push(("footprint.gpu_memory_used_mib".into(), list.join(",")));
            }
            let url = l.base_url.clone();
            launched = Some(l);
            url
        }
        (None, None) => unreachable!("config validation guarantees a base-url or a launch"),
    };
    let timeouts = Timeouts {
        connect: Duration::from_secs(config.run.connect_timeout_secs),
        request: Duration::from_secs(config.run.request_timeout_secs),
    };
    let client = Client::new(&base_url, &cfg.model, timeouts).map_err(|e| Error::new(ErrorKind::Target, e))?;
    let command = launched.as_ref().map(|l| l.command.as_slice());
    let mut endpoint = rt.block_on(Endpoint::connect(client, command)).map_err(|e| {
        let hint = match e {
            ProbeError::ModelMismatch { .. } => "; the run stops before any case",
            ProbeError::Unreachable { .. } => "",
        };
        Error::new(ErrorKind::Target, format!("target {name}: {e}{hint}"))
    })?;
    if launched.is_none() {
        footprint.push((
            "footprint.not_measured".into(),
            "the harness did not launch this server, so it cannot see its memory".into(),
        ));
    }
    endpoint.add_facts(footprint);
    let facts = endpoint.facts().clone();
    let mut target_facts: Vec<(String, String)> = cfg.pins.iter().map(|(k, v)| (format!("pin.{k}"), v.clone())).collect();
    target_facts.extend(facts.extra.iter().cloned());
    for (k, v) in [
        ("context_per_request", facts.context_per_request.map(|n| n.to_string())),
        ("slots", facts.slots.map(|n| n.to_string())),
        ("kv_pool_tokens", facts.kv_pool_tokens.map(|n| n.to_string())),
    ] {
        if let Some(v) = v {
            target_facts.push((k.to_string(), v));
        }
    }
    let info = TargetInfo {
        name: name.to_string(),
        base_url,
        model_id: facts.model_id.clone(),
        engine: facts.engine.clone(),
        build: facts.build.clone(),
        model_path: facts.model_path.clone(),
        model_sha256: launched.as_ref().and_then(|_| model_sha256(facts.model_path.as_deref())),
        launch_command: launched.as_ref().map(|l| l.command.clone()),
        facts: target_facts,
    };
    Ok(Connected { info, endpoint: Arc::new(endpoint), _launched: launched })
}

fn cache_dir(config: &Config) -> PathBuf {
    config.path(Path::new("target/sparktest"))
}

/// An instrument that loaded but could not describe itself or list its
/// cases: it becomes one failing case, and the other instruments go on.
struct Broken {
    name: String,
    message: String,
}

impl Broken {
    fn case_id(&self) -> String {
        format!("{}::setup::load", self.name)
    }
}

/// A name for an instrument that could not say its own.
fn source_label(source: &suite::Source) -> String {
    match source {
        suite::Source::Crate(name) => name.clone(),
        suite::Source::Path(path) | suite::Source::Wasm { path, .. } => {
            path.file_stem().map_or_else(|| path.display().to_string(), |s| s.to_string_lossy().into_owned())
        }
    }
}

/// Build and load the suite's instruments and list their cases. A build
/// failure stops the run; a trap or panic while loading or listing breaks
/// only that instrument.
fn prepare(
    rt: &tokio::runtime::Runtime,
    config: &Config,
    suite: &Suite,
    files: &Arc<BTreeMap<String, Vec<u8>>>,
    arm_overrides: &[(String, String)],
) -> Result<(PluginHost, Vec<Instrument>, Vec<Broken>), Error> {
    let limits = Limits {
        fuel: config.run.fuel_per_case,
        memory_bytes: usize::try_from(config.run.memory_per_instance_mib.saturating_mul(1024 * 1024)).unwrap_or(usize::MAX),
        case_timeout: Duration::from_secs(config.run.case_timeout_secs),
    };
    let host = PluginHost::new(Some(&cache_dir(config).join("wasmtime-cache")), limits)?;
    let mut instruments: Vec<Instrument> = Vec::new();
    let mut broken = Vec::new();
    for entry in &suite.instruments {
        let wasm = plugin::component_for(&suite.dir, &entry.source)?;
        let plugin = match rt.block_on(host.load(&wasm)) {
            Ok(plugin) => plugin,
            Err(err) => {
                broken.push(Broken { name: source_label(&entry.source), message: err.message });
                continue;
            }
        };
        if let Some(twin) = instruments.iter().find(|i| i.plugin.info.name == plugin.info.name && i.arm.is_none()) {
            return Err(Error::new(
                ErrorKind::Setup,
                format!("suite {}: two instruments are named {}", suite.name, twin.plugin.info.name),
            ));
        }
        if entry.arms.is_empty() {
            match rt.block_on(host.cases(&plugin, files.clone(), &entry.config)) {
                Ok(cases) => instruments.push(Instrument {
                    plugin,
                    config: entry.config.clone(),
                    cases,
                    exclusive: entry.exclusive,
                    arm: None,
                }),
                Err(err) => broken.push(Broken { name: plugin.info.name.clone(), message: err.message }),
            }
            continue;
        }
        // A paired instrument: one copy per arm, told its arm in its config.
        for (arm, default_target) in &entry.arms {
            let target = arm_overrides.iter().find(|(a, _)| a == arm).map_or(default_target, |(_, t)| t);
            let mut table: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(&entry.config).unwrap_or_default();
            table.insert("arm".into(), arm.clone().into());
            let config = serde_json::Value::Object(table).to_string();
            match rt.block_on(host.cases(&plugin, files.clone(), &config)) {
                Ok(cases) => instruments.push(Instrument {
                    plugin: plugin.clone(),
                    config,
                    cases,
                    exclusive: entry.exclusive,
                    arm: Some((arm.clone(), target.clone())),
                }),
                Err(err) => broken.push(Broken { name: format!("{}::{arm}", plugin.info.name), message: err.message }),
            }
        }
    }
    Ok((host, instruments, broken))
}

fn git_revision(root: &Path) -> Option<String> {
    let out = std::process::Command::new("git").arg("-C").arg(root).args(["rev-parse", "HEAD"]).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let rev = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let dirty = std::process::Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["status", "--porcelain", "--untracked-files=no"])
        .output()
        .map(|o| !o.stdout.is_empty())
        .unwrap_or(false);
    Some(if dirty { format!("{rev}-dirty") } else { rev })
}

fn model_sha256(path: Option<&str>) -> Option<String> {
    // Only for a local file the harness can read, e.g. a launched target's.
    let bytes = std::fs::read(path?).ok()?;
    Some(suite::sha256_hex(&bytes))
}

/// Run a suite. Returns the process exit code.
pub fn run(args: RunArgs) -> Result<i32, Error> {
    let config = Config::discover(&args.cwd)?;
    snapshot::init(&config.root);
    let suite_file = suite::locate(&config.root, &args.suite);
    let suite = suite::load(&suite_file)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::new(ErrorKind::Io, format!("failed to start the async runtime: {e}")))?;
    let files = Arc::new(suite.files.clone());
    let (host, instruments, broken) = prepare(&rt, &config, &suite, &files, &args.arms)?;
    if let Some((arm, _)) = args.arms.iter().find(|(a, _)| !suite.instruments.iter().any(|i| i.arms.contains_key(a))) {
        return Err(Error::new(ErrorKind::Setup, format!("--arm {arm}=…: suite {} has no arm named {arm}", suite.name)));
    }

    let mut names: Vec<String> = instruments
        .iter()
        .flat_map(|i| i.cases.iter().map(move |c| format!("{}::{}", i.prefix(), c.name)))
        .collect();
    names.extend(broken.iter().map(Broken::case_id));
    if args.libtest.list {
        let trials = names.into_iter().map(|n| Trial::test(n, || Ok(()))).collect();
        let _listed = libtest_mimic::run(&args.libtest, trials);
        return Ok(exit_code::OK);
    }
    let any_runs = names.iter().any(|n| {
        let probe = Trial::test(n.clone(), || Ok(()));
        !args.libtest.is_filtered_out(&probe) && !args.libtest.is_ignored(&probe)
    });

    // The target: launched (and stopped when `launched` drops) or reached.
    let (target_name, target_cfg) = match &args.target {
        TargetChoice::Named(name) => (name.clone(), config.target(name)?.clone()),
        TargetChoice::Endpoint { url, model } => (
            "endpoint".to_string(),
            TargetConfig {
                description: format!("{model} at {url}"),
                model: model.clone(),
                base_url: Some(url.clone()),
                launch: None,
                route: "direct".into(),
                pins: BTreeMap::new(),
            },
        ),
    };
    if !any_runs {
        // Nothing selected: libtest prints its empty summary; no server needed.
        let trials = names.into_iter().map(|n| Trial::test(n, || Ok(()))).collect();
        return Ok(if libtest_mimic::run(&args.libtest, trials).has_failed() { exit_code::CASES_FAILED } else { exit_code::OK });
    }
    let mut targets: BTreeMap<String, Connected> = BTreeMap::new();
    targets.insert(target_name.clone(), connect(&rt, &config, &target_name, &target_cfg)?);
    for inst in &instruments {
        if let Some((_, arm_target)) = &inst.arm
            && !targets.contains_key(arm_target) {
                let cfg = config.target(arm_target)?.clone();
                targets.insert(arm_target.clone(), connect(&rt, &config, arm_target, &cfg)?);
            }
    }
    // What this client can measure at all, before trusting any speed figure.
    let ceiling = match rt.block_on(crate::endpoint::ceiling::measure()) {
        Ok(c) => Some(c),
        Err(err) => {
            eprintln!("sparktest: warning: the client ceiling could not be measured: {err}");
            None
        }
    };

    let started = SystemTime::now();
    let run_id = format!(
        "{}-{}-{}-{:x}",
        humantime::format_rfc3339_seconds(started).to_string().replace([':', '-'], "").trim_end_matches('Z'),
        suite.name,
        target_name,
        std::process::id()
    );
    let dir = args.measurements_dir.clone().unwrap_or_else(|| config.path(&config.run.measurements_dir));
    let writer = Arc::new(MeasurementWriter::create(&dir, &run_id)?);
    let manifest = Manifest {
        format_version: sparktest_record::FORMAT_VERSION.into(),
        run_id: run_id.clone(),
        started_at: rfc3339(started),
        harness: HarnessInfo { version: env!("CARGO_PKG_VERSION").into(), git_revision: git_revision(&config.root) },
        suite: suite.info.clone(),
        target: targets[&target_name].info.clone(),
        client_host: crate::hostinfo::snapshot(),
        route: target_cfg.route.clone(),
        instruments: {
            let mut infos: Vec<InstrumentInfo> = Vec::new();
            for i in &instruments {
                if !infos.contains(&i.plugin.info) {
                    infos.push(i.plugin.info.clone());
                }
            }
            infos
        },
        arms: {
            let mut arms: Vec<ArmInfo> = Vec::new();
            for (arm, t) in instruments.iter().filter_map(|i| i.arm.as_ref()) {
                if !arms.iter().any(|a| &a.name == arm) {
                    arms.push(ArmInfo { name: arm.clone(), target: targets[t].info.clone() });
                }
            }
            arms
        },
        client_ceiling: ceiling.clone(),
    };
    writer.write(&Line::Manifest(manifest))?;

    let tally = Arc::new(Mutex::new(Tally::default()));
    let shared = Arc::new(Shared {
        rt: rt.handle().clone(),
        host,
        endpoints: targets.iter().map(|(n, c)| (n.clone(), c.endpoint.clone())).collect(),
        main_target: target_name.clone(),
        files,
        snapshots: config.path(&config.run.snapshots_dir).join(&target_name),
        sinks: vec![writer.clone() as Arc<dyn Sink>, tally.clone() as Arc<dyn Sink>],
        exclusive: RwLock::new(()),
        ceiling,
    });
    let instruments: Vec<Arc<Instrument>> = instruments.into_iter().map(Arc::new).collect();
    let mut trials = Vec::new();
    for inst in &instruments {
        for case in &inst.cases {
            let (shared, inst, case) = (shared.clone(), inst.clone(), case.clone());
            let id = format!("{}::{}", inst.prefix(), case.name);
            trials.push(Trial::ignorable_test(id, move || run_case(&shared, &inst, &case)));
        }
    }
    for b in broken {
        let id = b.case_id();
        let record = CaseRecord {
            id: id.clone(),
            instrument: b.name.clone(),
            case: "setup::load".into(),
            tags: Vec::new(),
            outcome: Outcome::Fail,
            reason: Some(b.message.clone()),
            metrics: Vec::new(),
            notes: Vec::new(),
            started_at: rfc3339(SystemTime::now()),
            seconds: 0.0,
            endpoint_seconds: 0.0,
            calls: Vec::new(),
            prompt_tokens: None,
            completion_tokens: None,
            transcript_sha256: suite::sha256_hex(b""),
            snapshots: Vec::new(),
            arm: None,
        };
        let sinks = shared.sinks.clone();
        trials.push(Trial::test(id, move || {
            let event = Event::CaseFinished(Box::new(record.clone()));
            for sink in &sinks {
                sink.event(&event).map_err(|err| Failed::from(err.to_string()))?;
            }
            Err(Failed::from(b.message.clone()))
        }));
    }
    let total_cases = trials.len();
    let run_started = Instant::now();
    let conclusion = libtest_mimic::run(&args.libtest, trials);
    let t = tally.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let gate_verdict = suite.gate.then(|| gate(&t, total_cases));
    writer.write(&Line::Summary(Summary {
        finished_at: rfc3339(SystemTime::now()),
        seconds: run_started.elapsed().as_secs_f64(),
        passed: t.passed,
        failed: t.failed,
        lost: t.lost,
        not_applicable: t.not_applicable,
        instruments: t.instruments(),
        gate: gate_verdict.clone(),
    }))?;
    drop(targets);
    for i in t.instruments() {
        eprintln!(
            "sparktest: {}: {}/{} correct, {} lost, {:.2} s per case, {} output tokens per correct answer, harness {:.1} ms per case",
            i.name,
            i.correct,
            i.given,
            i.lost,
            i.mean_seconds,
            i.output_tokens_per_correct.map_or("n/a".to_string(), |n| format!("{n:.0}")),
            i.mean_harness_seconds * 1000.0
        );
    }
    eprintln!(
        "sparktest: {} passed, {} failed, {} lost, {} not applicable; measurements in {}",
        t.passed,
        t.failed,
        t.lost,
        t.not_applicable,
        writer.path().display()
    );
    if let Some(g) = &gate_verdict {
        if g.passed {
            eprintln!("sparktest: gate {}: PASSED, all {total_cases} checks passed", suite.name);
        } else {
            eprintln!("sparktest: gate {}: FAILED, {} checks did not pass:", suite.name, g.failing.len());
            for f in &g.failing {
                eprintln!("sparktest:   {f}");
            }
        }
    }
    Ok(if conclusion.has_failed() { exit_code::CASES_FAILED } else { exit_code::OK })
}

/// A gate passes only when every one of its checks ran and passed: a
/// filtered or skipped check is a failing one.
fn gate(t: &Tally, total: usize) -> Gate {
    let ran = usize::try_from(t.passed + t.failed + t.lost + t.not_applicable).unwrap_or(usize::MAX);
    let mut failing = t.not_passed.clone();
    if ran < total {
        failing.push(format!("{} of {total} checks did not run (filtered out or skipped)", total - ran));
    }
    Gate { passed: failing.is_empty() && total > 0, failing }
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

/// A held turn on the exclusive lock (held only to be dropped).
#[allow(dead_code)]
enum Lock<'a> {
    Write(std::sync::RwLockWriteGuard<'a, ()>),
    Read(std::sync::RwLockReadGuard<'a, ()>),
}

fn run_case(shared: &Shared, inst: &Instrument, case: &plugin::CaseInfo) -> Result<Completion, Failed> {
    let name = &inst.plugin.info.name;
    // Exclusive cases run alone; the others may share the server.
    let _turn = if inst.exclusive {
        Lock::Write(shared.exclusive.write().unwrap_or_else(|p| p.into_inner()))
    } else {
        Lock::Read(shared.exclusive.read().unwrap_or_else(|p| p.into_inner()))
    };
    let target = inst.arm.as_ref().map_or(&shared.main_target, |(_, t)| t);
    let endpoint = shared.endpoints[target].clone();
    let started_at = rfc3339(SystemTime::now());
    let result = shared.rt.block_on(shared.host.run(
        &inst.plugin,
        endpoint,
        shared.files.clone(),
        &inst.config,
        &case.name,
    ));
    let mut verdict = result.verdict.clone();
    let mut snapshots = Vec::new();
    let snap_dir = shared.snapshots.join(inst.prefix().replace("::", "/"));
    for (snap_name, content) in &result.snapshots {
        let status = snapshot::check(&snap_dir, &format!("{}__{snap_name}", case.name.replace("::", "__")), content);
        if status == SnapshotStatus::Changed && verdict == CaseVerdict::Pass {
            verdict = CaseVerdict::Fail(format!(
                "snapshot {snap_name} changed since the last run on this target; review with `cargo insta review`"
            ));
        }
        snapshots.push((snap_name.clone(), status.as_str().to_string()));
    }
    let (outcome, reason) = match &verdict {
        CaseVerdict::Pass => (Outcome::Pass, None),
        CaseVerdict::Fail(r) => (Outcome::Fail, Some(r.clone())),
        CaseVerdict::Lost(r) => (Outcome::Lost, Some(r.clone())),
        CaseVerdict::NotApplicable(r) => (Outcome::NotApplicable, Some(r.clone())),
    };
    let sum = |f: fn(&sparktest_record::CallRecord) -> Option<u32>| -> Option<u64> {
        let counts: Vec<u64> = result.log.calls.iter().filter_map(|c| f(c).map(u64::from)).collect();
        (!counts.is_empty()).then(|| counts.iter().sum())
    };
    let mut notes = result.notes.clone();
    notes.extend(ceiling_notes(shared.ceiling.as_ref(), &result.metrics));
    let record = CaseRecord {
        id: format!("{}::{}", inst.prefix(), case.name),
        instrument: name.clone(),
        case: case.name.clone(),
        tags: case.tags.clone(),
        outcome,
        reason: reason.clone(),
        metrics: result.metrics.clone(),
        notes,
        started_at,
        seconds: result.elapsed.as_secs_f64(),
        endpoint_seconds: result.log.endpoint_time.as_secs_f64(),
        prompt_tokens: sum(|c| c.prompt_tokens),
        completion_tokens: sum(|c| c.completion_tokens),
        calls: result.log.calls.clone(),
        transcript_sha256: result.log.transcript_sha256(),
        snapshots,
        arm: inst.arm.as_ref().map(|(a, _)| a.clone()),
    };
    let event = Event::CaseFinished(Box::new(record));
    for sink in &shared.sinks {
        if let Err(err) = sink.event(&event) {
            return Err(Failed::from(format!("the record of this case was not written: {err}")));
        }
    }
    match verdict {
        CaseVerdict::Pass => Ok(Completion::Completed),
        CaseVerdict::Fail(r) => Err(Failed::from(r)),
        CaseVerdict::Lost(r) => Err(Failed::from(format!("lost: {r}"))),
        CaseVerdict::NotApplicable(r) => Ok(Completion::ignored_with(format!("not applicable: {r}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gate_passes_only_when_every_check_ran_and_passed() {
        let all = Tally { passed: 3, ..Tally::default() };
        assert!(gate(&all, 3).passed);
        // A filter that ran one of three checks proves nothing.
        let filtered = Tally { passed: 1, ..Tally::default() };
        let g = gate(&filtered, 3);
        assert!(!g.passed);
        assert_eq!(g.failing, ["2 of 3 checks did not run (filtered out or skipped)"]);
        let failed = Tally { passed: 2, failed: 1, not_passed: vec!["x::y (fail: wrong)".into()], ..Tally::default() };
        assert_eq!(gate(&failed, 3).failing, ["x::y (fail: wrong)"]);
        assert!(!gate(&Tally::default(), 0).passed, "a gate with no checks is no gate");
    }
}
