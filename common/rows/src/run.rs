//! The runs the board reads: a measurement file or several read as one,
//! the column each belongs to, which run a row reads, and a case's figures
//! by their names in the contract.

use std::collections::BTreeMap;

use sparktest_contract::spec_decode::arm;
use sparktest_contract::{Fact, Metric, Note, facts};
use sparktest_record::TargetInfo;
use sparktest_record::reader::Logged;

/// What the board reads of an endpoint call: its HTTP status (and, by the
/// length of the list, how many calls a case made). The rest of each call
/// is skipped unread: the calls are a quarter of a measurement file's bytes.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub struct Call {
    /// The HTTP status of the call's reply, where one came.
    #[serde(default)]
    pub status: Option<u16>,
}

/// A case as the board reads it.
pub type CaseRecord = sparktest_record::CaseRecord<Call>;

/// A run as the board reads it: the reader's run (a measurement file, or
/// the parts of a partitioned run and a run with its resumes read as one),
/// its column, and what every cell asks of it, found once by
/// [`Runs::new`], the only way a board run is made.
#[derive(Debug, Clone)]
pub struct Run {
    read: sparktest_record::reader::Run<Call>,
    /// The column of the run's target ([`assign_columns`]).
    pub column: String,
    /// The column of its `bare` arm, for paired instruments.
    pub bare_column: Option<String>,
    /// Each case's record id, by the case's place in `cases`, shared by
    /// every cell that names the record.
    ids: Vec<Id>,
    /// The configuration line of the run's target.
    config: String,
    /// Per instrument, how many different cases it recorded.
    recorded: BTreeMap<String, u64>,
}

impl std::ops::Deref for Run {
    type Target = sparktest_record::reader::Run<Call>;
    fn deref(&self) -> &Self::Target {
        &self.read
    }
}

/// A record id, shared: the same record is named by a cell, each of its
/// repeats, and the three files of the board.
pub type Id = std::rc::Rc<str>;

impl Run {
    /// `run-id#case-id`: names the record behind a figure (the run the
    /// record came from, for merged runs).
    pub fn record_id(&self, case: &CaseRecord) -> Id {
        // A case of this run is found by its place in `cases`; its id was
        // built once. Anything else (a case from elsewhere) is named anew.
        let at = (case as *const CaseRecord as usize).wrapping_sub(self.cases.as_ptr() as usize)
            / std::mem::size_of::<CaseRecord>().max(1);
        match (self.cases.get(at), self.ids.get(at)) {
            (Some(c), Some(id)) if std::ptr::eq(c, case) => id.clone(),
            _ => self.read.record_id(case).into(),
        }
    }

    /// How many different cases of `instrument` the run recorded (a case
    /// run again by a resume counts once).
    pub fn recorded(&self, instrument: &str) -> u64 {
        self.recorded.get(instrument).copied().unwrap_or(0)
    }

    /// The configuration line of the run's target ([`config_line`]).
    pub fn config(&self) -> String {
        self.config.clone()
    }

    /// Whether this is a campaign's own record of a configuration (its
    /// launch and memory, the host's `campaign` instrument): it measures no
    /// row and names no column.
    pub fn is_campaign_record(&self) -> bool {
        self.manifest.suite.name == sparktest_contract::campaign::INSTRUMENT
    }

    /// This run's cases of one instrument.
    pub fn cases_of<'a>(&'a self, instrument: &'a str) -> impl Iterator<Item = &'a CaseRecord> + 'a {
        self.measured().filter(move |c| c.instrument == instrument)
    }
}

/// A target's name and model: its column, unless the records hold several
/// configurations under that pair.
pub fn base_key(t: &TargetInfo) -> String {
    format!("{} · {}", t.label.as_deref().unwrap_or(&t.name), t.model_id)
}

/// FNV-1a, 64 bits: a stable digest (the same on every build and
/// machine), for the board's configuration digests and the host's board
/// index alike.
pub fn fnv1a(bytes: impl IntoIterator<Item = u8>) -> u64 {
    bytes.into_iter().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// A short, stable digest (FNV-1a) to tell configurations apart.
fn digest8(s: &str) -> String {
    format!("{:08x}", fnv1a(s.bytes()) >> 32)
}

/// One column per serving configuration: `name · model`, or, where the
/// records hold several configurations (flags, build, pins, engine) under
/// one name and model, `name · model · <digest of the configuration>`.
/// Each run's column and its `bare` arm's, in the runs' order.
pub fn assign_columns(runs: &[sparktest_record::reader::Run<Call>]) -> Vec<(String, Option<String>)> {
    let mut configs: BTreeMap<String, std::collections::BTreeSet<String>> = BTreeMap::new();
    // A campaign's own record (a launch that may have failed) names no
    // configuration of its own, so it sets no column apart.
    let measured =
        |r: &&sparktest_record::reader::Run<Call>| r.manifest.suite.name != sparktest_contract::campaign::INSTRUMENT;
    for r in runs.iter().filter(measured) {
        let bare = r.manifest.arms.iter().find(|a| a.name == arm::BARE.name()).map(|a| &a.target);
        for t in std::iter::once(&r.manifest.target).chain(bare) {
            configs.entry(base_key(t)).or_default().insert(config_line(t));
        }
    }
    let key = |t: &TargetInfo| {
        let base = base_key(t);
        if configs.get(&base).is_some_and(|c| c.len() > 1) {
            format!("{base} · {}", digest8(&config_line(t)))
        } else {
            base
        }
    };
    runs.iter()
        .map(|r| {
            (
                key(&r.manifest.target),
                r.manifest.arms.iter().find(|a| a.name == arm::BARE.name()).map(|a| key(&a.target)),
            )
        })
        .collect()
}

/// The configuration line of a target: what produced a figure, each thing
/// said once. The launch is its flags ([`TargetInfo::launch_flags`]: no
/// wrapper environment, no paths of this machine, nothing that repeats
/// the model id); a build the engine cannot name (llama.cpp built from an
/// sdist says `b0-unknown`) is the engine's pinned package instead.
pub fn config_line(t: &TargetInfo) -> String {
    // "1.0 sha256:<64 hex> …" → "1.0 sha256:<12 hex> …", a bare digest
    // (what a provisioner built) to its first 12; the pinned configurations
    // section keeps the whole digest.
    let short = |v: &str| match v.find("sha256:") {
        Some(at) => {
            let (head, digest) = v.split_at(at + 7);
            let hex = digest.bytes().take_while(u8::is_ascii_hexdigit).count();
            format!("{head}{}{}", &digest[..hex.min(12)], &digest[hex..])
        }
        None if v.len() == 64 && v.bytes().all(|b| b.is_ascii_hexdigit()) => v[..12].to_string(),
        None => v.to_string(),
    };
    let pins: Vec<(&str, &str)> = t
        .facts
        .iter()
        .filter_map(|(k, v)| Some((k.strip_prefix("pin.").or_else(|| k.strip_prefix("provisioned."))?, v.as_str())))
        .collect();
    let squash = |s: &str| s.chars().filter(char::is_ascii_alphanumeric).collect::<String>().to_lowercase();
    let unnamed = t.build.as_deref().is_none_or(|b| b.is_empty() || b.contains("unknown"));
    let engine_pin =
        pins.iter().position(|(k, _)| unnamed && !t.engine.is_empty() && squash(k).contains(&squash(&t.engine)));
    let mut parts = vec![t.engine.clone()];
    match (engine_pin, &t.build) {
        (Some(i), _) => parts.push(format!("build {} {}", pins[i].0, short(pins[i].1))),
        (None, Some(b)) => parts.push(format!("build {b}")),
        (None, None) => {}
    }
    parts.push(t.model_id.clone());
    // What the server itself says of its configuration: a server the harness
    // did not launch has no flags here, and the same model served with
    // another context or slot count is another configuration.
    for (k, what) in [(facts::CONTEXT_PER_REQUEST, "context"), (facts::SLOTS, "slots")] {
        if let Some(v) = fact(t, k) {
            parts.push(format!("{what} {v}"));
        }
    }
    for (i, (pin, v)) in pins.iter().enumerate() {
        if Some(i) != engine_pin {
            parts.push(format!("{pin} {}", short(v)));
        }
    }
    if let Some(flags) = t.launch_flags().filter(|f| !f.is_empty()) {
        parts.push(flags);
    }
    if let Some(choice) = &t.tool_choice {
        parts.push(format!("tool_choice {choice} forced by the target"));
    }
    parts.join(" · ")
}

/// The runs the board reads, in start order, with what every cell asks of
/// them found once: each column's runs, each repeat group's runs, each
/// run id's run, each record's id.
#[derive(Debug, Clone, Default)]
pub struct Runs {
    runs: Vec<Run>,
    by_column: BTreeMap<String, Vec<usize>>,
    by_group: BTreeMap<String, Vec<usize>>,
    by_id: BTreeMap<String, usize>,
    /// Every file's run, as the run log shows it.
    log: Vec<Logged>,
}

impl std::ops::Deref for Runs {
    type Target = [Run];
    fn deref(&self) -> &[Run] {
        &self.runs
    }
}

impl Runs {
    /// The board's runs from the reader's: each run's column, record ids,
    /// configuration line and counts found once, and the indexes built.
    pub fn new(read: sparktest_record::reader::Merged<Call>) -> Runs {
        let columns = assign_columns(&read.runs);
        let mut index = Runs { log: read.log, ..Runs::default() };
        for (i, (r, (column, bare_column))) in read.runs.into_iter().zip(columns).enumerate() {
            index.by_column.entry(column.clone()).or_default().push(i);
            if let Some(rep) = &r.manifest.repeat {
                index.by_group.entry(rep.group.clone()).or_default().push(i);
            }
            index.by_id.entry(r.manifest.run_id.clone()).or_insert(i);
            // The parts and resumes read into it name their records by
            // their own run ids.
            for origin in r.origin.values() {
                if !index.by_id.contains_key(origin) {
                    index.by_id.insert(origin.clone(), i);
                }
            }
            index.runs.push(Run {
                ids: r.cases.iter().map(|c| r.record_id(c).into()).collect(),
                config: config_line(&r.manifest.target),
                recorded: count_recorded(&r.cases),
                column,
                bare_column,
                read: r,
            });
        }
        index
    }

    /// With runs the host handed as their run-log line only (a night it
    /// did not hand whole, [`sparktest_record::handover::Handover::logged`]): in
    /// the log in start order, among the runs read whole; a run id already
    /// logged is not logged twice.
    pub fn with_logged(mut self, more: Vec<Logged>) -> Runs {
        if more.is_empty() {
            return self;
        }
        let known: std::collections::BTreeSet<String> = self.log.iter().map(|l| l.run_id.clone()).collect();
        self.log.extend(more.into_iter().filter(|l| !known.contains(&l.run_id)));
        self.log.sort_by(|a, b| (&a.started_at, &a.run_id).cmp(&(&b.started_at, &b.run_id)));
        self
    }

    /// Every file's run in start order, each its own entry, whatever the
    /// board read it with.
    pub fn log(&self) -> &[Logged] {
        &self.log
    }

    /// The runs of one column, in start order.
    pub fn of_column<'a>(&'a self, column: &str) -> impl Iterator<Item = &'a Run> + 'a {
        self.by_column.get(column).into_iter().flatten().map(|&i| &self.runs[i])
    }

    /// The first run of this run id, or the run a part or resume of this
    /// run id was read into.
    pub fn by_id(&self, run_id: &str) -> Option<&Run> {
        self.by_id.get(run_id).map(|&i| &self.runs[i])
    }

    /// The runs of a repeat group, in start order.
    pub fn group(&self, group: &str) -> impl Iterator<Item = &Run> + '_ {
        self.by_group.get(group).into_iter().flatten().map(|&i| &self.runs[i])
    }
}

/// Per instrument, its different case ids.
fn count_recorded(cases: &[CaseRecord]) -> BTreeMap<String, u64> {
    let mut ids: BTreeMap<&str, std::collections::BTreeSet<&str>> = BTreeMap::new();
    for c in cases {
        ids.entry(&c.instrument).or_default().insert(&c.id);
    }
    ids.into_iter().map(|(i, set)| (i.to_string(), set.len() as u64)).collect()
}

/// The run a cell of `column` reads: the latest (by start time) in which
/// `has` holds and that did not fail as a run ([`sparktest_record::reader::Run::failed`]), else the
/// latest failed one. A later run that answered nothing or stopped early
/// never replaces a measurement; the cell says it failed ([`failed_later`]).
pub fn pick<'a>(runs: &'a Runs, column: &str, has: impl Fn(&Run) -> bool) -> Option<&'a Run> {
    let candidates = || runs.of_column(column).filter(|r| visible(r) && has(r));
    newest(candidates().filter(|r| r.failed().is_none())).or_else(|| newest(candidates()))
}

/// The latest run (by start time) for `column` in which `has` holds,
/// failed or not: what the column's marks and its battery verdict read (a
/// battery the server died under is the configuration's failure).
pub fn latest<'a>(runs: &'a Runs, column: &str, has: impl Fn(&Run) -> bool) -> Option<&'a Run> {
    newest(runs.of_column(column).filter(|r| visible(r) && has(r)))
}

/// The runs of `column` after `shown` that failed as runs and recorded any
/// of `cases` (case ids): each with why. What a cell says when an earlier
/// measurement stands over them.
pub fn failed_later<'a>(runs: &'a Runs, column: &str, shown: &Run, cases: &[&str]) -> Vec<(&'a Run, String)> {
    let after =
        |r: &Run| (&r.manifest.started_at, &r.manifest.run_id) > (&shown.manifest.started_at, &shown.manifest.run_id);
    runs.of_column(column)
        .filter(|r| visible(r) && after(r))
        .filter(|r| r.cases.iter().any(|c| cases.contains(&c.id.as_str())))
        .filter_map(|r| r.failed().map(|why| (r, why)))
        .collect()
}

thread_local! {
    /// While one repeat's figure is computed ([`with_repeat`]): the group,
    /// and the index of its one run the rows may see.
    static PINNED: std::cell::RefCell<Option<(String, u32)>> = const { std::cell::RefCell::new(None) };
}

/// Whether the rows may read this run now: always, except while one
/// repeat's figure is computed: then only that repeat's run. (A newer run
/// of the column outside the group, a filtered run say, would otherwise
/// stand in for the repeat, and the repeat would give no figure of its
/// own; which runs stand between the group's nights is no part of it.)
fn visible(r: &Run) -> bool {
    PINNED.with_borrow(|p| match (p, &r.manifest.repeat) {
        (None, _) => true,
        (Some((group, index)), Some(rep)) => &rep.group == group && rep.index == *index,
        (Some(_), None) => false,
    })
}

/// Compute `f` as if the board held only the repeat group's run `index`.
pub fn with_repeat<T>(group: &str, index: u32, f: impl FnOnce() -> T) -> T {
    PINNED.with_borrow_mut(|p| *p = Some((group.to_string(), index)));
    let out = f();
    PINNED.with_borrow_mut(|p| *p = None);
    out
}

/// [`pick`] over every run: the latest for which `has` holds and that did
/// not fail as a run, else the latest failed one.
pub fn pick_by(runs: &[Run], has: impl Fn(&Run) -> bool) -> Option<&Run> {
    let candidates = || runs.iter().filter(|r| visible(r) && has(r));
    newest(candidates().filter(|r| r.failed().is_none())).or_else(|| newest(candidates()))
}

fn newest<'a>(runs: impl Iterator<Item = &'a Run>) -> Option<&'a Run> {
    runs.max_by(|a, b| (&a.manifest.started_at, &a.manifest.run_id).cmp(&(&b.manifest.started_at, &b.manifest.run_id)))
}

/// Per column, its latest run (by start time) in which `has` holds.
pub fn latest_per_column(runs: &[Run], has: impl Fn(&Run) -> bool) -> BTreeMap<String, &Run> {
    let mut out: BTreeMap<String, &Run> = BTreeMap::new();
    for r in runs.iter().filter(|r| visible(r) && has(r)) {
        let newer = out.get(&r.column).is_none_or(|old| {
            (&old.manifest.started_at, &old.manifest.run_id) <= (&r.manifest.started_at, &r.manifest.run_id)
        });
        if newer {
            out.insert(r.column.clone(), r);
        }
    }
    out
}

/// Mean of some values; None when empty.
pub fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// A case's metric, by its name in the contract.
pub fn metric(c: &CaseRecord, name: Metric) -> Option<f64> {
    crate::metric(c, name.name())
}

/// A case's note, by its name in the contract.
pub fn note(c: &CaseRecord, key: Note) -> Option<&str> {
    crate::note(c, key.name())
}

/// A fact the host recorded about a target (a run's, or an arm's).
pub fn fact(target: &TargetInfo, name: Fact) -> Option<&str> {
    target.facts.iter().find(|(k, _)| k == name.name()).map(|(_, v)| v.as_str())
}
