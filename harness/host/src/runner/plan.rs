//! What a run is before it starts: its target, its judge, the cases it
//! selects (filters, partition, resume), and the manifest that opens its
//! measurement file.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

use libtest_mimic::{Arguments, Trial};
use sparktest_record::{ArmInfo, GateFailure, HarnessInfo, InstrumentInfo, Manifest};

use super::connect::{Connector, Targets};
use super::prepare::Prepared;
use super::select::{self, PartitionSpec, Resumed};
use super::{RunArgs, TargetChoice};
use crate::config::{Config, TargetConfig};
use crate::error::{Error, ErrorKind};
use crate::plugin::Judge;
use crate::redact::Redactor;
use crate::suite::Suite;
use crate::timestamp::{self, rfc3339};

/// The run before it starts.
pub struct Plan {
    /// The target under test.
    pub target_name: String,
    target_cfg: TargetConfig,
    /// The judge target, when one is configured.
    pub judge_name: Option<String>,
    /// Case ids this run runs, in listing order.
    pub selected: Vec<String>,
    partition: Option<PartitionSpec>,
    run_group: Option<String>,
    resumed: Option<Resumed>,
    /// Cases the command line's filters left out.
    filtered_out: usize,
    /// Every key the run's targets use.
    pub redactor: Redactor,
}

impl Plan {
    /// Resolve the target, judge and selection.
    pub fn new(config: &Config, args: &RunArgs, suite: &Suite, prepared: &Prepared) -> Result<Plan, Error> {
        let (target_name, target_cfg) = match &args.target {
            TargetChoice::Named(name) => (name.clone(), config.target(name)?.clone()),
            TargetChoice::Endpoint { url, model } => (
                "endpoint".to_string(),
                TargetConfig {
                    description: format!("{model} at {}", sparktest_endpoint::redact_url(url)),
                    model: model.clone(),
                    model_aliases: Vec::new(),
                    base_url: Some(url.clone()),
                    launch: None,
                    route: "direct".into(),
                    pins: BTreeMap::new(),
                    api_key_env: None,
                    tool_choice: None,
                    label: None,
                    note: None,
                },
            ),
        };
        let mut target_cfg = target_cfg;
        if let Some(label) = &args.label {
            target_cfg.label = Some(label.clone());
        }
        let judge_name = args.judge.clone().or_else(|| config.run.judge.clone());
        if let Some(j) = &judge_name
            && j != &target_name
        {
            config.target(j)?;
        }
        let dir = config.measurements_dir(args.measurements_dir.as_deref());
        let resumed = args.resume.as_deref().map(|id| select::resumed(&dir, id)).transpose()?;
        if let Some(r) = &resumed
            && (r.manifest.suite.sha256 != suite.info.sha256 || r.manifest.target.name != target_name)
        {
            return Err(Error::new(
                ErrorKind::Setup,
                format!(
                    "--resume {}: that run measured suite {} ({}) on target {}; this one is suite {} ({}) on {}",
                    r.manifest.run_id,
                    r.manifest.suite.name,
                    r.manifest.suite.sha256.get(..12).unwrap_or(&r.manifest.suite.sha256),
                    r.manifest.target.name,
                    suite.name,
                    &suite.info.sha256[..12],
                    target_name
                ),
            ));
        }
        let partition = match (&args.partition, &resumed) {
            (Some(p), _) => Some(PartitionSpec::parse(p)?),
            // The earlier run's part, checked as the command line's would be
            // (its file is input like any other).
            (None, Some(r)) => match r.manifest.partition.as_ref() {
                Some(p) => Some(
                    PartitionSpec::parse(&format!("{}:{}/{}", p.scheme, p.index, p.total))
                        .map_err(|e| Error::setup(format!("--resume {}: its partition: {e}", r.manifest.run_id)))?,
                ),
                None => None,
            },
            (None, None) => None,
        };
        let run_group = args
            .run_group
            .clone()
            .or_else(|| resumed.as_ref().and_then(|r| r.manifest.partition.as_ref().map(|p| p.group.clone())));
        // Selection: libtest's filters, then the partition over what they
        // keep (the same on every machine given the same arguments), then
        // what a resumed run still needs.
        let all = prepared.case_ids();
        let every = all.len();
        let filtered: Vec<String> =
            all.into_iter().filter(|id| !args.libtest.is_filtered_out(&Trial::test(id.clone(), || Ok(())))).collect();
        let filtered_out = every - filtered.len();
        let selected = filtered
            .into_iter()
            .enumerate()
            .filter(|(i, id)| partition.as_ref().is_none_or(|p| p.holds(*i, id)))
            .map(|(_, id)| id)
            .filter(|id| resumed.as_ref().is_none_or(|r| !r.done.contains_key(id)))
            .collect();
        // Every key the run may use, the arms' and the judge's included.
        let arm_targets: Vec<&String> =
            prepared.instruments.iter().filter_map(|i| i.arm.as_ref().map(|(_, t)| t)).collect();
        let mut names: Vec<(&str, &TargetConfig)> = vec![(&target_name, &target_cfg)];
        names.extend(
            config
                .targets
                .iter()
                .filter(|(n, _)| Some(*n) == judge_name.as_ref() || arm_targets.contains(n))
                .map(|(n, c)| (n.as_str(), c)),
        );
        let redactor = Connector::new(config, &names)?.redactor;
        crate::redact::set_printed(&redactor);
        Ok(Plan {
            target_name,
            target_cfg,
            judge_name,
            selected,
            partition,
            run_group,
            resumed,
            filtered_out,
            redactor,
        })
    }

    /// The checks a gate suite's run answers for: every case of the suite,
    /// or of this part of a partitioned run (a filter that skips one fails
    /// the gate).
    pub fn gate_checks(&self, prepared: &Prepared) -> usize {
        let ids = prepared.case_ids();
        match &self.partition {
            Some(p) => ids.iter().enumerate().filter(|(i, id)| p.holds(*i, id)).count(),
            None => ids.len(),
        }
    }

    /// What a resumed run carries into its gate: the checks the earlier runs
    /// recorded, and those of them that did not pass.
    pub fn gate_carry(&self) -> (usize, Vec<GateFailure>) {
        let (done, mut failing) = self
            .resumed
            .as_ref()
            .map_or((0, Vec::new()), |r| (r.done.len(), r.done.values().flatten().cloned().collect()));
        // A partition takes its share of what the filters kept, so a part's
        // count of checks cannot show what they left out: say it here.
        if self.partition.is_some() && self.filtered_out > 0 {
            failing.push(GateFailure::NotRun(format!(
                "{} checks were left out by the command line's filters",
                self.filtered_out
            )));
        }
        (done, failing)
    }

    /// Whether any selected case runs (not all ignored by libtest's rules).
    pub fn any_selected(&self, libtest: &Arguments) -> bool {
        self.selected.iter().any(|id| !libtest.is_ignored(&Trial::test(id.clone(), || Ok(()))))
    }

    /// Connect the target under test, every arm's and the judge's, into
    /// `targets` (what a session already reached is reused).
    pub fn connect(
        &self,
        rt: &tokio::runtime::Runtime,
        config: &Config,
        prepared: &Prepared,
        targets: &mut Targets,
    ) -> Result<(), Error> {
        let mut all: Vec<(String, TargetConfig)> = vec![(self.target_name.clone(), self.target_cfg.clone())];
        for inst in &prepared.instruments {
            if let Some((_, t)) = &inst.arm {
                all.push((t.clone(), config.target(t)?.clone()));
            }
        }
        if let Some(j) = &self.judge_name
            && j != &self.target_name
        {
            all.push((j.clone(), config.target(j)?.clone()));
        }
        let names: Vec<(&str, &TargetConfig)> = all.iter().map(|(n, c)| (n.as_str(), c)).collect();
        let connector = Connector::new(config, &names)?;
        for (name, cfg) in &all {
            targets.ensure(rt, &connector, name, cfg)?;
        }
        Ok(())
    }

    /// The judge, as cases reach it.
    pub fn judge(&self, targets: &Targets) -> Option<Arc<Judge>> {
        let name = self.judge_name.as_ref()?;
        Some(Arc::new(Judge { name: name.clone(), endpoint: targets.get(name).endpoint.clone() }))
    }

    /// The manifest: what is measured, where, with what; `ceiling` is what
    /// this client can measure at all, `revision` the project's.
    pub fn manifest(
        &self,
        suite: &Suite,
        prepared: &Prepared,
        targets: &Targets,
        ceiling: Option<sparktest_record::ClientCeiling>,
        revision: Option<String>,
    ) -> Manifest {
        let started = SystemTime::now();
        let run_id =
            format!("{}-{}-{}-{:x}", timestamp::compact(started), suite.name, self.target_name, std::process::id());
        let mut instruments: Vec<InstrumentInfo> = Vec::new();
        for i in &prepared.instruments {
            if !instruments.contains(&i.plugin.info) {
                instruments.push(i.plugin.info.clone());
            }
        }
        let mut arms: Vec<ArmInfo> = Vec::new();
        for (arm, t) in prepared.instruments.iter().filter_map(|i| i.arm.as_ref()) {
            if !arms.iter().any(|a| &a.name == arm) {
                arms.push(ArmInfo { name: arm.clone(), target: targets.get(t).info.clone() });
            }
        }
        let group = self.partition.as_ref().map(|_| {
            select::run_group(self.run_group.as_deref(), &suite.info.sha256, &self.target_name, revision.as_deref())
        });
        Manifest {
            format_version: sparktest_record::FORMAT_VERSION.into(),
            run_id,
            started_at: rfc3339(started),
            harness: HarnessInfo { version: env!("CARGO_PKG_VERSION").into(), git_revision: revision },
            suite: suite.info.clone(),
            target: targets.get(&self.target_name).info.clone(),
            client_host: crate::hostinfo::snapshot(),
            route: self.target_cfg.route.clone(),
            instruments,
            arms,
            client_ceiling: ceiling,
            judge: self.judge_name.as_ref().map(|j| targets.get(j).info.clone()),
            partition: self.partition.as_ref().zip(group).map(|(p, g)| p.record(g)),
            resumes: self.resumed.as_ref().map(|r| r.manifest.run_id.clone()),
            suite_cases: prepared.instruments.iter().fold(Default::default(), |mut n, i| {
                *n.entry(i.plugin.info.name.clone()).or_insert(0) += i.cases.len() as u64;
                n
            }),
            repeat: None,
            campaign: None,
            job: crate::hostinfo::job(),
            rows: suite.rows.clone(),
        }
    }
}

/// The project's git revision (`-dirty` with uncommitted changes).
pub fn git_revision(root: &Path) -> Option<String> {
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
