//! The campaign file: which configurations, which suites in which order,
//! the gate, repeats, and grids of configurations over one base target.
//! Everything is checked before anything launches; an error names the
//! file, its line and the key.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::config::{Config, TargetConfig, check_name};
use crate::error::Error;

/// The gate a campaign runs first when its file names none.
pub const DEFAULT_GATE: &str = "battery";

#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct FileToml {
    campaign: CampaignToml,
    #[serde(default)]
    configuration: Vec<ConfigurationToml>,
    #[serde(default)]
    grid: Vec<GridToml>,
    /// Targets of the campaign's own, as in a `sparktest.toml`.
    #[serde(default)]
    target: BTreeMap<String, Spanned<TargetConfig>>,
}

/// A project's `sparktest.toml`, read for its `[campaign.NAME]` tables only
/// (its other keys are the project configuration's, checked there).
#[derive(Debug, Deserialize)]
struct ProjectToml {
    #[serde(default)]
    campaign: BTreeMap<String, Spanned<CampaignToml>>,
}

/// How a campaign's keys are spelt in errors: `campaign.` and top-level
/// tables in a campaign file, all under `campaign.NAME.` in a project's.
struct Scope {
    /// Before the `[campaign]` keys.
    campaign: String,
    /// Before `configuration[k]`, `grid[k]`.
    tables: String,
}

impl Scope {
    fn file() -> Self {
        Scope { campaign: "campaign.".into(), tables: String::new() }
    }

    fn project(name: &str) -> Self {
        Scope { campaign: format!("campaign.{name}."), tables: format!("campaign.{name}.") }
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct CampaignToml {
    /// A campaign file's `[campaign]` names it; a project's
    /// `[campaign.NAME]` is named by its table.
    #[serde(default)]
    name: Option<Spanned<String>>,
    #[serde(default)]
    description: String,
    #[serde(default)]
    suites: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    gate: Option<Spanned<String>>,
    #[serde(default)]
    on_gate_fail: OnGateFail,
    #[serde(default = "one")]
    repeat: u32,
    #[serde(default)]
    suite_repeat: BTreeMap<String, Spanned<u32>>,
    #[serde(default = "settle_secs")]
    settle_secs: u64,
    #[serde(default = "settle_gib")]
    settle_gib: f64,
    /// A project's `[[campaign.NAME.configuration]]` (a file's stand at
    /// its top level).
    #[serde(default)]
    configuration: Vec<ConfigurationToml>,
    /// A project's `[[campaign.NAME.grid]]`.
    #[serde(default)]
    grid: Vec<GridToml>,
    /// `[campaign.slurm]`: what `--slurm` asks Slurm for.
    #[serde(default)]
    slurm: Option<SlurmSettings>,
}

/// `[campaign.slurm]`: the resources of each array task and of the board
/// job, as `#SBATCH` lines (every key optional: Slurm's defaults apply).
#[derive(Debug, Clone, Default, Deserialize, serde::Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct SlurmSettings {
    /// `--partition`.
    #[serde(default)]
    pub partition: Option<String>,
    /// `--account`.
    #[serde(default)]
    pub account: Option<String>,
    /// `--gres`, e.g. `gpu:1`.
    #[serde(default)]
    pub gres: Option<String>,
    /// `--cpus-per-task`.
    #[serde(default)]
    pub cpus: Option<u32>,
    /// `--mem`, e.g. `64G`.
    #[serde(default)]
    pub mem: Option<String>,
    /// `--time`, e.g. `4:00:00` (each task: one configuration's suites).
    #[serde(default)]
    pub time: Option<String>,
    /// The most configurations at once (`--array=…%M`); all by default.
    #[serde(default)]
    pub max_parallel: Option<u32>,
    /// More `#SBATCH` lines, each without its `#SBATCH ` (`--qos=high`).
    #[serde(default)]
    pub extra: Vec<String>,
    /// Shell lines run before the campaign in every job (`module load
    /// cuda`, `source venv/bin/activate`).
    #[serde(default)]
    pub setup: Vec<String>,
}

fn one() -> u32 {
    1
}

fn settle_secs() -> u64 {
    120
}

fn settle_gib() -> f64 {
    0.5
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct ConfigurationToml {
    target: Spanned<String>,
    #[serde(default)]
    name: Option<Spanned<String>>,
    #[serde(default)]
    label: Option<String>,
    #[serde(default)]
    note: Option<String>,
    #[serde(default)]
    arms: BTreeMap<String, Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct GridToml {
    base: Spanned<String>,
    #[serde(default)]
    name: Option<Spanned<String>>,
    #[serde(default)]
    label: Option<String>,
    #[serde(default)]
    note: Option<String>,
    vary: Spanned<BTreeMap<String, Vec<String>>>,
    #[serde(default)]
    arms: BTreeMap<String, Spanned<String>>,
}

/// What a failed gate does to the configuration's other suites.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnGateFail {
    /// They are recorded "not run: gate failed" (the default).
    #[default]
    Skip,
    /// They run anyway; the board greys the column as it does any column
    /// whose battery failed.
    Continue,
}

/// A grid value that leaves the flag out of the command.
pub const ABSENT: &str = "absent";
/// A grid value that gives the flag alone, without a value.
pub const PRESENT: &str = "present";

/// One configuration of a campaign: a target (a grid's expansion is a
/// target of its own, registered in the campaign's configuration), its
/// column's label and note, and arm overrides for paired instruments.
#[derive(Debug, Clone, PartialEq, serde::Serialize, Deserialize)]
pub struct Configuration {
    /// Its name in the journal, the plan and `--partition`: unique.
    pub name: String,
    /// The target it measures.
    pub target: String,
    /// The board column's label, over the target's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// A line under the column's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Arm name → target, for paired instruments (`--arm`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub arms: BTreeMap<String, String>,
    /// For a grid's configuration: the flags it sets, in the grid's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub varied: Vec<(String, String)>,
}

/// One suite step of every configuration.
#[derive(Debug, Clone, PartialEq, serde::Serialize, Deserialize)]
pub struct SuiteStep {
    /// The suite as the file gave it: a name under `suites/`, or a path.
    pub suite: String,
    /// The suite's own name (its `suite.toml`'s).
    pub name: String,
    /// Runs of it on the same launched server (`--repeat`).
    pub repeat: u32,
    /// Whether it is the campaign's gate.
    pub gate: bool,
}

/// A campaign, checked and expanded.
#[derive(Debug, Clone)]
pub struct Campaign {
    /// Where it was read from.
    pub file: PathBuf,
    /// sha256 of the file's bytes: a resume refuses a changed file.
    pub sha256: String,
    /// The text it was read from, to name what changed.
    pub text: String,
    /// Its name: the prefix of its id.
    pub name: String,
    /// For people.
    pub description: String,
    /// Configurations in the file's order, grids expanded after the plain
    /// ones in their own order.
    pub configurations: Vec<Configuration>,
    /// Suites in order, the gate first.
    pub suites: Vec<SuiteStep>,
    /// What a failed gate does.
    pub on_gate_fail: OnGateFail,
    /// The longest wait, after a server stops, for the memory it held.
    pub settle_secs: u64,
    /// How close to the memory before launch counts as given back, GiB.
    pub settle_gib: f64,
    /// The targets the file brought and the grids made, by name, to add
    /// to the project's.
    pub grid_targets: BTreeMap<String, TargetConfig>,
    /// `[campaign.slurm]`, for `--slurm`.
    pub slurm: SlurmSettings,
}

/// "file:line: key: words" for something a span points at.
fn at(file: &Path, text: &str, span: std::ops::Range<usize>, key: &str, words: impl std::fmt::Display) -> Error {
    let line = text.get(..span.start).map_or(1, |t| t.matches('\n').count() + 1);
    Error::setup(format!("{}:{line}: {key}: {words}", file.display()))
}

impl Campaign {
    /// Read and check a campaign file against the project's targets and
    /// suites: unknown keys, targets, suites and arms, duplicates, a gate
    /// that is not among the suites, and grids whose flags the engine's
    /// command does not take are refused, naming the file, line and key.
    pub fn load(file: &Path, config: &Config) -> Result<Campaign, Error> {
        let bytes = std::fs::read(file).map_err(|e| Error::setup(format!("failed to read {}: {e}", file.display())))?;
        let text = String::from_utf8(bytes.clone())
            .map_err(|e| Error::setup(format!("{}: the file is not UTF-8 ({e})", file.display())))?;
        Campaign::parse(file, &text, config)
    }

    /// [`Campaign::load`] on text already read.
    pub fn parse(file: &Path, text: &str, config: &Config) -> Result<Campaign, Error> {
        let parsed: FileToml = toml::from_str(text).map_err(|e| Error::setup(format!("{}: {e}", file.display())))?;
        let Some(name) = parsed.campaign.name.clone() else {
            return Err(Error::setup(format!(
                "{}: campaign.name: missing (a campaign file names its campaign)",
                file.display()
            )));
        };
        if !parsed.campaign.configuration.is_empty() || !parsed.campaign.grid.is_empty() {
            return Err(Error::setup(format!(
                "{}: campaign.configuration, campaign.grid: a campaign file has its [[configuration]] and [[grid]] at its top level",
                file.display()
            )));
        }
        Campaign::check(file, text, name, parsed, config, &Scope::file())
    }

    /// The `[campaign.NAME]` table of a project's `sparktest.toml` (`file`,
    /// its `text`): the same keys as a campaign file's `[campaign]`, with
    /// its `[[campaign.NAME.configuration]]` and `[[campaign.NAME.grid]]`
    /// under it, against the project's own targets. Errors name the
    /// project file, its line and the key under `campaign.NAME`.
    pub fn parse_project(file: &Path, text: &str, name: &str, config: &Config) -> Result<Campaign, Error> {
        let parsed: ProjectToml = toml::from_str(text).map_err(|e| Error::setup(format!("{}: {e}", file.display())))?;
        let mut tables = parsed.campaign;
        let Some(table) = tables.remove(name) else {
            let known: Vec<String> = tables.keys().cloned().collect();
            return Err(Error::setup(format!(
                "{}: no [campaign.{name}] table{}",
                file.display(),
                match known.is_empty() {
                    true => String::new(),
                    false => format!("; its campaigns: {}", known.join(", ")),
                }
            )));
        };
        let span = table.span();
        let mut campaign = table.into_inner();
        if let Some(n) = &campaign.name {
            return Err(at(
                file,
                text,
                n.span(),
                &format!("campaign.{name}.name"),
                "the table names the campaign: leave name out",
            ));
        }
        let parsed = FileToml {
            configuration: std::mem::take(&mut campaign.configuration),
            grid: std::mem::take(&mut campaign.grid),
            campaign,
            target: BTreeMap::new(),
        };
        Campaign::check(file, text, Spanned::new(span, name.to_string()), parsed, config, &Scope::project(name))
    }

    /// Check and expand a parsed campaign; `scope` spells its keys.
    fn check(
        file: &Path,
        text: &str,
        name: Spanned<String>,
        parsed: FileToml,
        config: &Config,
        scope: &Scope,
    ) -> Result<Campaign, Error> {
        let ck = &scope.campaign;
        check_name("campaign", name.get_ref()).map_err(|e| at(file, text, name.span(), &format!("{ck}name"), e))?;
        let own_targets = own_targets(file, text, &parsed.target, config)?;
        let mut with_own = config.clone();
        with_own.targets.extend(own_targets.clone());
        let checking = Checking { file, text, config: &with_own, scope };
        let c = &parsed.campaign;
        let suites = checking.suites(c, &name)?;
        if c.repeat == 0 {
            return Err(Error::setup(format!("{}: {ck}repeat: must be at least 1", file.display())));
        }
        if let Some(sl) = &c.slurm {
            check_slurm(sl)
                .map_err(|(key, why)| Error::setup(format!("{}: {ck}slurm.{key}: {why}", file.display())))?;
        }
        if !c.settle_gib.is_finite() || c.settle_gib < 0.0 {
            return Err(Error::setup(format!("{}: {ck}settle-gib: must be a non-negative number", file.display())));
        }
        let mut names = Names::default();
        let mut configurations = checking.configurations(&parsed.configuration, &own_targets, &mut names)?;
        let mut grid_targets = own_targets;
        for (i, g) in parsed.grid.iter().enumerate() {
            configurations.extend(checking.grid(i, g, &mut grid_targets, &mut names)?);
        }
        if configurations.is_empty() {
            let tk = &scope.tables;
            return Err(Error::setup(format!(
                "{}: no [[{tk}configuration]] or [[{tk}grid]]: nothing to measure",
                file.display()
            )));
        }
        let c = parsed.campaign;
        Ok(Campaign {
            file: file.to_path_buf(),
            sha256: crate::files::sha256_hex(text.as_bytes()),
            text: text.to_string(),
            name: name.get_ref().clone(),
            description: c.description,
            configurations,
            suites,
            on_gate_fail: c.on_gate_fail,
            settle_secs: c.settle_secs,
            settle_gib: c.settle_gib,
            grid_targets,
            slurm: c.slurm.unwrap_or_default(),
        })
    }

    /// The project's configuration with the file's and the grids' targets
    /// added, what every
    /// step of the campaign runs against.
    pub fn config(&self, config: &Config) -> Config {
        let mut config = config.clone();
        config.targets.extend(self.grid_targets.clone());
        config
    }
}

/// The file's own targets, checked: each named as a target may be, none
/// named as a project's target (one name, one configuration), each with
/// exactly one of a base URL and a launch.
fn own_targets(
    file: &Path,
    text: &str,
    given: &BTreeMap<String, Spanned<TargetConfig>>,
    config: &Config,
) -> Result<BTreeMap<String, TargetConfig>, Error> {
    let mut own = BTreeMap::new();
    for (name, target) in given {
        let key = format!("target.{name}");
        check_name("target", name).map_err(|e| at(file, text, target.span(), &key, e))?;
        if config.targets.contains_key(name) {
            return Err(at(file, text, target.span(), &key, "the project already has a target of this name"));
        }
        let t = target.get_ref();
        if t.base_url.is_some() == t.launch.is_some() {
            return Err(at(file, text, target.span(), &key, "give exactly one of base-url and launch"));
        }
        own.insert(name.clone(), t.clone());
    }
    Ok(own)
}

/// What the checks of one campaign read: the file and its text (an error
/// points at its line), the project's targets with the file's own, and
/// how its keys are spelt.
struct Checking<'a> {
    file: &'a Path,
    text: &'a str,
    config: &'a Config,
    scope: &'a Scope,
}

/// The configuration names taken so far, each where it was given.
#[derive(Default)]
struct Names(BTreeMap<String, std::ops::Range<usize>>);

impl Checking<'_> {
    fn at(&self, span: std::ops::Range<usize>, key: &str, words: impl std::fmt::Display) -> Error {
        at(self.file, self.text, span, key, words)
    }

    /// A target the project or the file defines, else refused with the
    /// known ones.
    fn known_target(&self, name: &Spanned<String>, key: &str) -> Result<(), Error> {
        if self.config.targets.contains_key(name.get_ref()) {
            return Ok(());
        }
        let known: Vec<&str> = self.config.targets.keys().map(String::as_str).collect();
        Err(self.at(
            name.span(),
            key,
            format!("no target named {:?}; known targets: {}", name.get_ref(), known.join(", ")),
        ))
    }

    /// A configuration's arms, each a known target.
    fn arms(&self, given: &BTreeMap<String, Spanned<String>>, key: &str) -> Result<BTreeMap<String, String>, Error> {
        let mut out = BTreeMap::new();
        for (arm, t) in given {
            self.known_target(t, &format!("{key}.arms.{arm}"))?;
            out.insert(arm.clone(), t.get_ref().clone());
        }
        Ok(out)
    }

    /// A configuration name, checked and taken: a name a target may have,
    /// not all digits (`--configuration N` reads digits as an index), not
    /// taken before.
    fn take(&self, names: &mut Names, name: &str, span: std::ops::Range<usize>, key: &str) -> Result<(), Error> {
        check_name("configuration", name).map_err(|e| self.at(span.clone(), key, e))?;
        if name.bytes().all(|b| b.is_ascii_digit()) {
            return Err(self.at(
                span,
                key,
                format!(
                    "configuration name {name:?} reads as an index (`--configuration {name}` chooses the \
                     configuration at that place): give it a name with a letter"
                ),
            ));
        }
        if names.0.insert(name.to_string(), span.clone()).is_some() {
            return Err(self.at(span, key, format!("a second configuration named {name:?}")));
        }
        Ok(())
    }

    /// The suites in the order they run: the file's list, else the gate
    /// then every board suite; the gate first; each with its repeats.
    fn suites(&self, c: &CampaignToml, name: &Spanned<String>) -> Result<Vec<SuiteStep>, Error> {
        let ck = &self.scope.campaign;
        let gate_name = c.gate.as_ref().map(|g| g.get_ref().clone());
        let listed: Vec<(String, Option<std::ops::Range<usize>>)> = match &c.suites {
            Some(list) => list.iter().map(|s| (s.get_ref().clone(), Some(s.span()))).collect(),
            None => std::iter::once(gate_name.clone().unwrap_or_else(|| DEFAULT_GATE.to_string()))
                .chain(crate::suite::board_suites().into_iter().map(String::from))
                .map(|s| (s, None))
                .collect(),
        };
        if listed.is_empty() {
            return Err(self.at(name.span(), &format!("{ck}suites"), "names no suite"));
        }
        let loaded = self.load_suites(&listed)?;
        let gate = self.gate(c, &loaded)?;
        // The gate runs first, whatever the list's order.
        let mut ordered: Vec<String> = gate.iter().cloned().collect();
        ordered.extend(listed.iter().map(|(s, _)| s.clone()).filter(|s| Some(s) != gate.as_ref()));
        let name_of =
            |given: &str| loaded.iter().find(|(g, _, _)| g == given).map_or(given.to_string(), |l| l.1.clone());
        for (s, n) in &c.suite_repeat {
            if !ordered.iter().any(|given| given == s || name_of(given) == *s) {
                return Err(self.at(n.span(), &format!("{ck}suite-repeat.{s}"), "names no suite of the campaign"));
            }
            if *n.get_ref() == 0 {
                return Err(self.at(n.span(), &format!("{ck}suite-repeat.{s}"), "must be at least 1"));
            }
        }
        Ok(ordered
            .into_iter()
            .map(|s| {
                let name = name_of(&s);
                SuiteStep {
                    repeat: c.suite_repeat.get(&s).or(c.suite_repeat.get(&name)).map_or(c.repeat, |n| *n.get_ref()),
                    gate: Some(&s) == gate.as_ref(),
                    suite: s,
                    name,
                }
            })
            .collect())
    }

    /// Each listed suite loaded, once: (as given, its own name, whether
    /// its file makes it a gate).
    fn load_suites(
        &self,
        listed: &[(String, Option<std::ops::Range<usize>>)],
    ) -> Result<Vec<(String, String, bool)>, Error> {
        let ck = &self.scope.campaign;
        let mut seen = BTreeSet::new();
        let mut loaded = Vec::new();
        for (s, span) in listed {
            let error = |words: String| match span {
                Some(span) => self.at(span.clone(), &format!("{ck}suites"), words),
                None => Error::setup(format!("{}: {ck}suites (the default list): {words}", self.file.display())),
            };
            let suite = crate::suite::locate(&self.config.root, s)
                .and_then(|path| crate::suite::load(&path))
                .map_err(|e| error(e.message))?;
            if !seen.insert(suite.name.clone()) {
                return Err(error(format!("{s:?} is listed twice (suite {})", suite.name)));
            }
            loaded.push((s.clone(), suite.name, suite.gate));
        }
        Ok(loaded)
    }

    /// The gate, as given: the one the file names (among its suites), else
    /// the first suite whose own file makes it a gate (the battery).
    fn gate(&self, c: &CampaignToml, loaded: &[(String, String, bool)]) -> Result<Option<String>, Error> {
        let Some(g) = &c.gate else {
            return Ok(loaded.iter().find(|(_, _, gate)| *gate).map(|(given, _, _)| given.clone()));
        };
        let named = |(given, name, _): &&(String, String, bool)| given == g.get_ref() || name == g.get_ref();
        match loaded.iter().find(named) {
            Some(found) => Ok(Some(found.0.clone())),
            None => Err(self.at(
                g.span(),
                &format!("{}gate", self.scope.campaign),
                format!("{:?} is not among the suites", g.get_ref()),
            )),
        }
    }

    /// The plain configurations, each named apart from every target but
    /// its own.
    fn configurations(
        &self,
        given: &[ConfigurationToml],
        own_targets: &BTreeMap<String, TargetConfig>,
        names: &mut Names,
    ) -> Result<Vec<Configuration>, Error> {
        let mut out = Vec::new();
        for (i, entry) in given.iter().enumerate() {
            let key = format!("{}configuration[{}]", self.scope.tables, i + 1);
            self.known_target(&entry.target, &format!("{key}.target"))?;
            let (name, span) = match &entry.name {
                Some(n) => (n.get_ref().clone(), n.span()),
                None => (entry.target.get_ref().clone(), entry.target.span()),
            };
            // A configuration is run as a target of its own name: named as
            // another target, it would take that target's place.
            if name != *entry.target.get_ref()
                && (self.config.targets.contains_key(&name) || own_targets.contains_key(&name))
            {
                return Err(self.at(
                    span,
                    &format!("{key}.name"),
                    format!("{name:?} is the name of another target: name the configuration apart from every target"),
                ));
            }
            self.take(names, &name, span, &format!("{key}.name"))?;
            out.push(Configuration {
                name,
                target: entry.target.get_ref().clone(),
                label: entry.label.clone(),
                note: entry.note.clone(),
                arms: self.arms(&entry.arms, &key)?,
                varied: Vec::new(),
            });
        }
        Ok(out)
    }

    /// One grid's configurations, one per combination of its flags' values,
    /// each a target of its own name (added to `grid_targets`).
    fn grid(
        &self,
        i: usize,
        g: &GridToml,
        grid_targets: &mut BTreeMap<String, TargetConfig>,
        names: &mut Names,
    ) -> Result<Vec<Configuration>, Error> {
        let key = format!("{}grid[{}]", self.scope.tables, i + 1);
        self.known_target(&g.base, &format!("{key}.base"))?;
        let base = &self.config.targets[g.base.get_ref()];
        let Some(launch) = &base.launch else {
            return Err(self.at(
                g.base.span(),
                &format!("{key}.base"),
                format!("target {:?} is not launched by the harness: a grid varies launch flags", g.base.get_ref()),
            ));
        };
        if g.vary.get_ref().is_empty() || g.vary.get_ref().values().any(Vec::is_empty) {
            return Err(self.at(g.vary.span(), &format!("{key}.vary"), "every flag needs at least one value"));
        }
        if let Some(flag) = g.vary.get_ref().keys().find(|f| !f.starts_with('-')) {
            return Err(self.at(g.vary.span(), &format!("{key}.vary.{flag}"), "a flag starts with '-'"));
        }
        let mut out = Vec::new();
        for combo in combinations(g.vary.get_ref()) {
            let name = match &g.name {
                Some(template) => fill(template.get_ref(), &combo),
                None => default_name(g.base.get_ref(), &combo),
            };
            let span = g.name.as_ref().map_or(g.base.span(), |n| n.span());
            // A grid's configuration becomes a target of its name: one
            // named as a target would relaunch every configuration that
            // uses that target with the grid's flags.
            self.take(names, &name, span.clone(), &format!("{key}.name"))?;
            if self.config.targets.contains_key(&name) || grid_targets.contains_key(&name) {
                return Err(self.at(
                    span,
                    &format!("{key}.name"),
                    format!(
                        "{name:?} is the name of a target: a grid's configurations are targets of their own, \
                         named apart from every target of the project and the file"
                    ),
                ));
            }
            let mut target = base.clone();
            let mut launch = launch.clone();
            for (flag, value) in &combo {
                set_flag(&mut launch.command, flag, value);
            }
            target.launch = Some(launch);
            let words: Vec<String> = combo.iter().map(|(f, v)| said(f, v)).collect();
            target.label = Some(match &g.label {
                Some(template) => fill(template, &combo),
                None => format!("{} · {}", base.label.as_deref().unwrap_or(g.base.get_ref()), words.join(" · ")),
            });
            target.note = g.note.clone().or(target.note);
            target.description = format!("{} (grid: {})", target.description, words.join(", "));
            grid_targets.insert(name.clone(), target);
            out.push(Configuration {
                name: name.clone(),
                target: name,
                label: None,
                note: None,
                arms: self.arms(&g.arms, &key)?,
                varied: combo,
            });
        }
        Ok(out)
    }
}

/// `[campaign.slurm]`, checked before a script is written: each value
/// that becomes an `#SBATCH` option is one sbatch reads whole (no newline
/// or other control character, which would end the line and with it the
/// `#SBATCH` block), and each `setup` entry one shell line. The error is
/// the key and why.
fn check_slurm(sl: &SlurmSettings) -> Result<(), (&'static str, String)> {
    if sl.max_parallel == Some(0) {
        return Err(("max-parallel", "must be at least 1".into()));
    }
    let options = [
        ("partition", &sl.partition),
        ("account", &sl.account),
        ("gres", &sl.gres),
        ("mem", &sl.mem),
        ("time", &sl.time),
    ];
    for (key, value) in options {
        if let Some(why) = value.as_deref().and_then(super::script::sbatch_refusal) {
            return Err((key, why));
        }
    }
    for e in &sl.extra {
        if let Some(why) = super::script::sbatch_refusal(e.trim_matches(' ')) {
            return Err(("extra", why));
        }
        if !e.trim_start().starts_with('-') {
            return Err((
                "extra",
                format!("{e:?} is not one sbatch option (write it as \"--qos=high\", without #SBATCH)"),
            ));
        }
    }
    if let Some(why) = sl.setup.iter().find_map(|l| super::script::shell_line_refusal(l)) {
        return Err(("setup", why));
    }
    Ok(())
}

/// Every combination of a grid's values, flags in the grid's order.
fn combinations(vary: &BTreeMap<String, Vec<String>>) -> Vec<Vec<(String, String)>> {
    let mut out: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for (flag, values) in vary {
        out = out
            .into_iter()
            .flat_map(|combo| {
                values.iter().map(move |v| {
                    let mut c = combo.clone();
                    c.push((flag.clone(), v.clone()));
                    c
                })
            })
            .collect();
    }
    out
}

/// How a varied flag is said in a label: `--ctx-size 4096`, `--flash-attn`,
/// `no --flash-attn`.
fn said(flag: &str, value: &str) -> String {
    match value {
        ABSENT => format!("no {flag}"),
        PRESENT => flag.to_string(),
        v => format!("{flag} {v}"),
    }
}

/// `{ctx-size}` in a template is the value given for `--ctx-size`.
fn fill(template: &str, combo: &[(String, String)]) -> String {
    let mut out = template.to_string();
    for (flag, value) in combo {
        out = out.replace(&format!("{{{}}}", flag.trim_start_matches('-')), value);
    }
    out
}

/// `local-ctx-size-4096-parallel-1` for a grid with no name template.
fn default_name(base: &str, combo: &[(String, String)]) -> String {
    let mut name = base.to_string();
    for (flag, value) in combo {
        let piece: String = format!("{}-{value}", flag.trim_start_matches('-'))
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '.' { c } else { '-' })
            .collect();
        name.push('-');
        name.push_str(piece.trim_matches('-'));
    }
    name
}

/// Set a flag in a launch command: its value replaced where the command
/// has it, the flag and value appended where not; [`ABSENT`] takes it out,
/// [`PRESENT`] gives it alone.
fn set_flag(cmd: &mut Vec<String>, flag: &str, value: &str) {
    // `--flag=old`: one argument, replaced whole.
    if let Some(i) = cmd.iter().position(|a| a.strip_prefix(flag).is_some_and(|rest| rest.starts_with('='))) {
        match value {
            ABSENT => {
                cmd.remove(i);
            }
            PRESENT => cmd[i] = flag.to_string(),
            v => cmd[i] = format!("{flag}={v}"),
        }
        return;
    }
    if let Some(i) = cmd.iter().position(|a| a == flag) {
        // The old value, whatever it looks like: a negative number (`--seed
        // -1`) is a value, another flag is not.
        let has_value = cmd.get(i + 1).is_some_and(|v| !v.starts_with('-') || v.parse::<f64>().is_ok());
        let end = if has_value { i + 2 } else { i + 1 };
        cmd.drain(i..end);
        match value {
            ABSENT => {}
            PRESENT => cmd.insert(i, flag.to_string()),
            v => {
                cmd.insert(i, v.to_string());
                cmd.insert(i, flag.to_string());
            }
        }
        return;
    }
    match value {
        ABSENT => {}
        PRESENT => cmd.push(flag.to_string()),
        v => cmd.extend([flag.to_string(), v.to_string()]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    fn config() -> Config {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        Config::load(&root, None).unwrap()
    }

    fn parse(text: &str) -> Result<Campaign, Error> {
        Campaign::parse(Path::new("campaign.toml"), text, &config())
    }

    #[test]
    fn the_gate_runs_first_and_the_default_suites_are_the_boards() {
        let c = parse("[campaign]\nname = \"night\"\n[[configuration]]\ntarget = \"local\"\n").unwrap();
        let suites: Vec<&str> = c.suites.iter().map(|s| s.suite.as_str()).collect();
        assert_eq!(suites[0], "battery");
        assert!(c.suites[0].gate && !c.suites[1].gate);
        assert_eq!(&suites[1..], crate::suite::board_suites());
        let c = parse(
            "[campaign]\nname = \"n\"\nsuites = [\"smoke\", \"battery\"]\nrepeat = 2\nsuite-repeat = { smoke = 3 }\n\
             [[configuration]]\ntarget = \"local\"\n",
        )
        .unwrap();
        assert_eq!(
            c.suites,
            [
                SuiteStep { suite: "battery".into(), name: "battery".into(), repeat: 2, gate: true },
                SuiteStep { suite: "smoke".into(), name: "smoke".into(), repeat: 3, gate: false }
            ]
        );
    }

    #[test]
    fn the_board_s_suites_are_read_from_the_suites_in_the_rows_order() {
        let suites = crate::suite::board_suites();
        assert_eq!(
            suites,
            [
                "a-bench",
                "adversarial",
                "compliance",
                "compliance-severe",
                "likelihood",
                "speed",
                "concurrency",
                "sustained-load",
                "spec-decode",
                "smoke",
                "context",
                "footprint",
                "ocr",
                "long-prompt",
                "screenshots",
                "media",
            ],
            "the gate is not among them, and smoke goes where Reproducibility goes"
        );
    }

    #[test]
    fn the_book_lists_the_default_suites_the_code_runs() {
        let book = include_str!("../../../../docs/campaigns.md");
        let at = book.find("Without `suites`, the list is").expect("the book's paragraph on the default suites");
        let paragraph = &book[at..at + book[at..].find("\n\n").unwrap_or(book.len() - at)];
        let listed = &paragraph[paragraph.find("row order:").expect("row order:")..];
        let listed = &listed[..listed.find("(read from").expect("(read from")];
        let names: Vec<&str> = listed.split('`').skip(1).step_by(2).collect();
        let suites = crate::suite::board_suites();
        assert_eq!(names, suites, "docs/campaigns.md lists other default suites than the suites' files give");
        for suite in suites {
            assert!(!book.contains(&format!("`{suite}` is not in that list")), "the book leaves {suite} out");
        }
    }

    #[test]
    fn a_slurm_value_that_would_end_its_line_is_refused_by_its_key() {
        for key in ["partition", "account", "gres", "mem", "time", "extra", "setup"] {
            for bad in ["a\nb", "a\rb", "a\u{0}b", "a\u{1b}b", "a\u{7f}b"] {
                let value = toml::Value::String(bad.to_string());
                let value = if matches!(key, "extra" | "setup") { format!("[{value}]") } else { value.to_string() };
                let text = format!(
                    "[campaign]\nname = \"n\"\nsuites = [\"smoke\"]\n[campaign.slurm]\n{key} = {value}\n\
                     [[configuration]]\ntarget = \"local\"\n"
                );
                let e = parse(&text).unwrap_err();
                assert_eq!(e.kind, ErrorKind::Setup);
                assert!(e.message.starts_with(&format!("campaign.toml: campaign.slurm.{key}: ")), "{e}");
            }
        }
        let e =
            parse("[campaign]\nname = \"n\"\n[campaign.slurm]\nmem = \"\"\n[[configuration]]\ntarget = \"local\"\n");
        assert!(e.unwrap_err().message.contains("campaign.slurm.mem: empty"));
        // Spaces, quotes, `$()` and backticks are values: the scripts quote them.
        let text = "[campaign]\nname = \"n\"\nsuites = [\"smoke\"]\n[campaign.slurm]\n\
                    account = \"a 'b' \\\"c\\\" $(d) `e`\"\nextra = [\"--comment=a b\"]\n\
                    [[configuration]]\ntarget = \"local\"\n";
        assert_eq!(parse(text).unwrap().slurm.account.as_deref(), Some("a 'b' \"c\" $(d) `e`"));
    }

    #[test]
    fn a_configuration_name_that_reads_as_an_index_is_refused() {
        let e = parse(
            "[campaign]\nname = \"n\"\nsuites = [\"smoke\"]\n[[configuration]]\ntarget = \"local\"\n\
             [[configuration]]\ntarget = \"local\"\nname = \"0\"\n",
        )
        .unwrap_err();
        assert_eq!(e.kind, ErrorKind::Setup);
        assert!(
            e.message.starts_with("campaign.toml:8: configuration[2].name: configuration name \"0\" reads as an index"),
            "{e}"
        );
        let e = parse(
            "[campaign]\nname = \"n\"\nsuites = [\"smoke\"]\n[[grid]]\nbase = \"local\"\nname = \"{parallel}\"\n\
             [grid.vary]\n\"--parallel\" = [\"1\", \"2\"]\n",
        )
        .unwrap_err();
        assert!(e.message.contains("grid[1].name: configuration name \"1\" reads as an index"), "{e}");
        assert!(
            parse(
                "[campaign]\nname = \"n\"\nsuites = [\"smoke\"]\n[[configuration]]\ntarget = \"local\"\nname = \"0b\"\n"
            )
            .is_ok()
        );
    }

    #[test]
    fn a_grid_or_configuration_named_as_a_target_is_refused_and_a_varied_value_replaces_any_old_one() {
        let err = |text: &str| parse(text).unwrap_err();
        // `local-draft` is a built-in target: a grid of that name would
        // relaunch every configuration using it with the grid's flags.
        let e =
            err("[campaign]\nname = \"g\"\nsuites = [\"smoke\"]\n[[grid]]\nbase = \"local\"\nname = \"local-draft\"\n\
                     [grid.vary]\n\"--seed\" = [\"7\"]\n");
        assert_eq!(e.kind, ErrorKind::Setup);
        assert!(
            e.message.contains("grid[1].name") && e.message.contains("\"local-draft\" is the name of a target"),
            "{e}"
        );
        let e = err(
            "[campaign]\nname = \"g\"\nsuites = [\"smoke\"]\n[[configuration]]\ntarget = \"local\"\nname = \"local-draft\"\n",
        );
        assert!(e.message.contains("configuration[1].name") && e.message.contains("another target"), "{e}");
        // Named as its own target is what every plain configuration is.
        assert!(parse("[campaign]\nname = \"g\"\nsuites = [\"smoke\"]\n[[configuration]]\ntarget = \"local\"\nname = \"local\"\n").is_ok());
        // A varied flag replaces its old value, negative or `=`-joined.
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let mut cmd = args(&["srv", "--seed", "-1", "--jinja"]);
        set_flag(&mut cmd, "--seed", "7");
        assert_eq!(cmd, args(&["srv", "--seed", "7", "--jinja"]));
        let mut cmd = args(&["srv", "--temp", "-0.5"]);
        set_flag(&mut cmd, "--temp", ABSENT);
        assert_eq!(cmd, args(&["srv"]));
        let mut cmd = args(&["srv", "--seed=-1", "--jinja"]);
        set_flag(&mut cmd, "--seed", "7");
        assert_eq!(cmd, args(&["srv", "--seed=7", "--jinja"]));
        let mut cmd = args(&["srv", "--jinja", "--metrics"]);
        set_flag(&mut cmd, "--jinja", ABSENT);
        assert_eq!(cmd, args(&["srv", "--metrics"]), "a flag after a bare flag is not its value");
    }

    #[test]
    fn mistakes_are_named_by_file_line_and_key_before_anything_launches() {
        let err = |text: &str| parse(text).unwrap_err().to_string();
        let e = err("[campaign]\nname = \"n\"\n\n[[configuration]]\ntarget = \"nope\"\n");
        assert!(e.starts_with("campaign.toml:5: configuration[1].target: no target named \"nope\""), "{e}");
        let e =
            err("[campaign]\nname = \"n\"\nsuites = [\"smoke\",\n  \"smok\"]\n[[configuration]]\ntarget = \"local\"\n");
        assert!(e.starts_with("campaign.toml:4: campaign.suites:") && e.contains("did you mean smoke"), "{e}");
        let e =
            err("[campaign]\nname = \"n\"\nsuites = [\"smoke\", \"smoke\"]\n[[configuration]]\ntarget = \"local\"\n");
        assert!(e.contains("\"smoke\" is listed twice (suite smoke)"), "{e}");
        let e = err(
            "[campaign]\nname = \"n\"\n[[configuration]]\ntarget = \"local\"\n[[configuration]]\ntarget = \"local\"\n",
        );
        assert!(e.starts_with("campaign.toml:6: configuration[2].name: a second configuration named \"local\""), "{e}");
        let e = err("[campaign]\nname = \"n\"\ncolour = 1\n[[configuration]]\ntarget = \"local\"\n");
        assert!(e.contains("campaign.toml") && e.contains("line 3") && e.contains("colour"), "{e}");
        let e = err(
            "[campaign]\nname = \"n\"\nsuites = [\"smoke\"]\ngate = \"battery\"\n[[configuration]]\ntarget = \"local\"\n",
        );
        assert!(e.starts_with("campaign.toml:4: campaign.gate: \"battery\" is not among the suites"), "{e}");
        let e = err("[campaign]\nname = \"n\"\n[[configuration]]\ntarget = \"local\"\narms = { draft = \"gone\" }\n");
        assert!(e.contains("configuration[1].arms.draft: no target named \"gone\""), "{e}");
        assert!(err("[campaign]\nname = \"n\"\n").contains("nothing to measure"));
    }

    #[test]
    fn the_example_campaign_shaped_like_the_seed_reads() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let file = root.join("examples/campaign/campaign.toml");
        let c = Campaign::load(&file, &config()).unwrap();
        assert_eq!(c.configurations.len(), 4 + 4, "four named, a grid of four");
        assert_eq!(c.suites[0].name, "battery");
        assert!(c.suites[0].gate);
        assert_eq!(c.suites.iter().find(|s| s.name == "speed").map(|s| s.repeat), Some(3));
        let grid = c.configurations.iter().find(|x| x.name == "llamacpp-q4km-ctx32768-p1").unwrap();
        assert_eq!(grid.varied, [("--ctx-size".to_string(), "32768".to_string()), ("--parallel".into(), "1".into())]);
        assert!(c.config(&config()).target("sglang-fp8").is_ok(), "the file's own targets");
        // A name the project has already is refused, by line.
        let e = parse("[campaign]\nname = \"n\"\n[target.local]\nmodel = \"m\"\nbase-url = \"http://h\"\n[[configuration]]\ntarget = \"local\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("target.local: the project already has a target of this name"), "{e}");
    }

    #[test]
    fn a_grid_expands_into_named_configurations_with_the_varied_flags() {
        let c = parse(
            "[campaign]\nname = \"g\"\nsuites = [\"smoke\"]\n[[grid]]\nbase = \"local\"\nname = \"local-c{ctx-size}-p{parallel}\"\n\
             [grid.vary]\n\"--ctx-size\" = [\"4096\", \"8192\"]\n\"--parallel\" = [\"1\", \"2\"]\n\"--flash-attn\" = [\"present\", \"absent\"]\n",
        );
        let e = c.unwrap_err().to_string();
        assert!(
            e.contains("a second configuration named \"local-c4096-p1\""),
            "the template must tell them apart: {e}"
        );
        let c = parse(
            "[campaign]\nname = \"g\"\nsuites = [\"smoke\"]\n[[grid]]\nbase = \"local\"\n\
             [grid.vary]\n\"--ctx-size\" = [\"4096\", \"8192\"]\n\"--flash-attn\" = [\"present\", \"absent\"]\n",
        )
        .unwrap();
        let names: Vec<&str> = c.configurations.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "local-ctx-size-4096-flash-attn-present",
                "local-ctx-size-4096-flash-attn-absent",
                "local-ctx-size-8192-flash-attn-present",
                "local-ctx-size-8192-flash-attn-absent"
            ]
        );
        let t = &c.grid_targets["local-ctx-size-8192-flash-attn-present"];
        let cmd = &t.launch.as_ref().unwrap().command;
        let at = cmd.iter().position(|a| a == "--ctx-size").unwrap();
        assert_eq!(cmd[at + 1], "8192", "replaced where the command has it");
        assert_eq!(cmd.iter().filter(|a| *a == "--ctx-size").count(), 1);
        assert_eq!(cmd.last().map(String::as_str), Some("--flash-attn"), "added where it has not");
        assert_eq!(t.label.as_deref(), Some("local · --ctx-size 8192 · --flash-attn"));
        let absent = &c.grid_targets["local-ctx-size-4096-flash-attn-absent"];
        assert!(!absent.launch.as_ref().unwrap().command.iter().any(|a| a == "--flash-attn"));
        assert_eq!(absent.label.as_deref(), Some("local · --ctx-size 4096 · no --flash-attn"));
        // The campaign's configuration knows them as targets.
        assert!(c.config(&config()).target("local-ctx-size-4096-flash-attn-absent").is_ok());
    }

    #[test]
    fn a_campaign_table_of_the_project_file_reads_as_a_campaign_file_does() {
        let text = "[run]\ncase-timeout-secs = 600\n\n[campaign.night]\nsuites = [\"smoke\", \"battery\"]\n\
                    [[campaign.night.configuration]]\ntarget = \"local\"\nlabel = \"SmolLM2\"\n\
                    [[campaign.night.grid]]\nbase = \"local\"\n[campaign.night.grid.vary]\n\"--parallel\" = [\"1\", \"2\"]\n\
                    [campaign.other]\n[[campaign.other.configuration]]\ntarget = \"nope\"\n";
        let file = Path::new("sparktest.toml");
        let c = Campaign::parse_project(file, text, "night", &config()).unwrap();
        assert_eq!(c.name, "night", "the table's name is the campaign's");
        assert_eq!(c.file, file);
        let names: Vec<&str> = c.configurations.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["local", "local-parallel-1", "local-parallel-2"]);
        assert_eq!(c.configurations[0].label.as_deref(), Some("SmolLM2"));
        assert!(c.suites[0].gate && c.suites[0].suite == "battery", "the gate first");
        // Its mistakes are named by the project file, its line and the key
        // under campaign.NAME.
        let e = Campaign::parse_project(file, text, "other", &config()).unwrap_err().to_string();
        assert!(
            e.starts_with("sparktest.toml:15: campaign.other.configuration[1].target: no target named \"nope\""),
            "{e}"
        );
        let e = Campaign::parse_project(file, "[campaign.n]\ncolour = 1\n", "n", &config()).unwrap_err().to_string();
        assert!(e.contains("sparktest.toml") && e.contains("line 2") && e.contains("colour"), "{e}");
        let e = Campaign::parse_project(
            file,
            "[campaign.n]\nrepeat = 0\n[[campaign.n.configuration]]\ntarget = \"local\"\n",
            "n",
            &config(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("campaign.n.repeat: must be at least 1"), "{e}");
        let e = Campaign::parse_project(file, "[campaign.n]\n", "n", &config()).unwrap_err().to_string();
        assert!(e.contains("no [[campaign.n.configuration]] or [[campaign.n.grid]]"), "{e}");
        let e = Campaign::parse_project(file, "[campaign.n]\nname = \"m\"\n", "n", &config()).unwrap_err().to_string();
        assert!(e.starts_with("sparktest.toml:2: campaign.n.name: the table names the campaign"), "{e}");
        // A campaign file keeps its configurations at its top level, and names itself.
        let e = parse("[campaign]\nname = \"n\"\n[[campaign.configuration]]\ntarget = \"local\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("a campaign file has its [[configuration]] and [[grid]] at its top level"), "{e}");
        let e = parse("[campaign]\n[[configuration]]\ntarget = \"local\"\n").unwrap_err().to_string();
        assert!(e.contains("campaign.name: missing"), "{e}");
        let e = Campaign::parse_project(file, text, "day", &config()).unwrap_err().to_string();
        assert!(e.contains("no [campaign.day] table; its campaigns: night, other"), "{e}");
    }
}
