//! From measurement files to the board: runs, columns (serving
//! configurations), rows (one per measured thing) and cells with their
//! standing, raw figure, configuration line and the records behind them.

use std::collections::BTreeMap;

use serde::Serialize;
use sparktest_record::{CaseRecord, Line, Manifest, Outcome, Summary, TargetInfo};

use crate::config::{Config, Judgements, Rule};
use crate::rows::{ROWS, RowDef};

/// One run: a measurement file, or several read as one (the parts of a
/// partitioned run; a run and the runs that resumed it).
#[derive(Debug, Clone)]
pub struct Run {
    pub manifest: Manifest,
    pub cases: Vec<CaseRecord>,
    pub summary: Option<Summary>,
    /// The column of the run's target ([`assign_columns`]).
    pub column: String,
    /// The column of its `bare` arm, for paired instruments.
    pub bare_column: Option<String>,
    /// Case id → the run id its record came from, where that is not this
    /// run's own (merged parts and resumes).
    pub origin: BTreeMap<String, String>,
    /// What was merged into this run, for the record of runs.
    pub merged: Vec<String>,
}

impl Run {
    /// Parse one file; `n` names it in errors (1-based, in the host's order).
    pub fn parse(text: &str, n: usize) -> Result<Run, String> {
        let lines = sparktest_record::parse(text).map_err(|e| format!("measurement file #{n}: {e}"))?;
        let mut it = lines.into_iter();
        let Some(Line::Manifest(manifest)) = it.next() else {
            return Err(format!("measurement file #{n}: no manifest"));
        };
        let mut run = Run {
            manifest,
            cases: Vec::new(),
            summary: None,
            column: String::new(),
            bare_column: None,
            origin: BTreeMap::new(),
            merged: Vec::new(),
        };
        for line in it {
            match line {
                Line::Case(c) => run.cases.push(c),
                Line::Summary(s) => run.summary = Some(s),
                Line::Manifest(_) => {
                    return Err(format!("measurement file #{n}: a second manifest"));
                }
            }
        }
        Ok(run)
    }

    /// `run-id#case-id`: names the record behind a figure (the run the
    /// record came from, for merged runs).
    pub fn record_id(&self, case: &CaseRecord) -> String {
        let run = self.origin.get(&case.id).unwrap_or(&self.manifest.run_id);
        format!("{run}#{}", case.id)
    }

    /// This run's cases of one instrument.
    pub fn cases_of<'a>(&'a self, instrument: &'a str) -> impl Iterator<Item = &'a CaseRecord> + 'a {
        self.measured().filter(move |c| c.instrument == instrument)
    }

    /// The cases that ended in a verdict: an interrupted case (the harness
    /// was stopped while it ran) measured nothing and counts for no row.
    pub fn measured(&self) -> impl Iterator<Item = &CaseRecord> + '_ {
        self.cases.iter().filter(|c| c.outcome != Outcome::Interrupted)
    }
}

/// A target's name and model: its column, unless the records hold several
/// configurations under that pair.
pub fn base_key(t: &TargetInfo) -> String {
    format!("{} · {}", t.label.as_deref().unwrap_or(&t.name), t.model_id)
}

/// A short, stable digest (FNV-1a) to tell configurations apart.
fn digest8(s: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{:08x}", h >> 32)
}

/// One column per serving configuration: `name · model`, or, where the
/// records hold several configurations (flags, build, pins, engine) under
/// one name and model, `name · model · <digest of the configuration>`.
pub fn assign_columns(runs: &mut [Run]) {
    let mut configs: BTreeMap<String, std::collections::BTreeSet<String>> = BTreeMap::new();
    for r in runs.iter() {
        let bare = r.manifest.arms.iter().find(|a| a.name == "bare").map(|a| &a.target);
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
    for r in runs.iter_mut() {
        r.column = key(&r.manifest.target);
        r.bare_column = r.manifest.arms.iter().find(|a| a.name == "bare").map(|a| key(&a.target));
    }
}

/// The configuration line of a target: what produced a figure.
pub fn config_line(t: &TargetInfo) -> String {
    let mut parts = vec![t.engine.clone()];
    if let Some(b) = &t.build {
        parts.push(format!("build {b}"));
    }
    parts.push(t.model_id.clone());
    // What the server itself says of its configuration: a server the harness
    // did not launch has no flags here, and the same model served with
    // another context or slot count is another configuration.
    for (k, what) in [("context_per_request", "context"), ("slots", "slots")] {
        if let Some((_, v)) = t.facts.iter().find(|(f, _)| f == k) {
            parts.push(format!("{what} {v}"));
        }
    }
    for (k, v) in &t.facts {
        if let Some(pin) = k.strip_prefix("pin.").or_else(|| k.strip_prefix("provisioned.")) {
            // "1.0 sha256:<64 hex>" → "1.0 sha256:<12 hex>", a bare digest
            // (what a provisioner built) to its first 12; the pinned
            // configurations section keeps the whole digest.
            let short = match v.find("sha256:") {
                Some(at) => v.get(..at + 7 + 12).unwrap_or(v).to_string(),
                None if v.len() == 64 && v.bytes().all(|b| b.is_ascii_hexdigit()) => v[..12].to_string(),
                None => v.clone(),
            };
            parts.push(format!("{pin} {short}"));
        }
    }
    if let Some(cmd) = &t.launch_command {
        parts.push(launch_flags(cmd));
    }
    if let Some(choice) = &t.tool_choice {
        parts.push(format!("tool_choice {choice} forced by the target"));
    }
    parts.join(" · ")
}

/// The launch command without the program, model path, host and port: the
/// flags that make the configuration.
pub fn launch_flags(cmd: &[String]) -> String {
    let mut out = Vec::new();
    let mut skip = false;
    for (i, a) in cmd.iter().enumerate() {
        if i == 0 || skip {
            skip = false;
            continue;
        }
        if matches!(a.as_str(), "--port" | "--host" | "--model" | "-m" | "--model-draft" | "-md") {
            skip = true;
            if a.starts_with("--model") || a == "-m" || a == "-md" {
                out.push(format!("{a} {}", cmd.get(i + 1).map(|p| p.rsplit('/').next().unwrap_or(p)).unwrap_or("")));
            }
            continue;
        }
        out.push(a.clone());
    }
    out.join(" ")
}

/// A serving configuration: one column.
#[derive(Debug, Clone, Serialize)]
pub struct Column {
    pub key: String,
    pub target: String,
    /// The name the column is shown by: the target's `label` (or
    /// `--label`), else the target's name.
    pub label: String,
    /// The target's `note`, a line under the name.
    pub note: Option<String>,
    pub model: String,
    pub engine: String,
    pub config: String,
    /// What the served build accepts beyond text: `vision ✓`, `no vision
    /// in this build`, `vision not entered` …
    pub marks: Vec<String>,
    /// Where another column has the same name and model: what this
    /// column's configuration has that the others do not ("context 8192 ·
    /// --ctx-size 8192"), so a reader can tell them apart.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub differs: Option<String>,
    /// Whether its numbers are admitted: the configuration battery is the
    /// gate a configuration passes before its numbers count.
    pub admission: Admission,
}

/// A column's standing with the configuration battery.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Admission {
    /// No battery run on this configuration.
    NotRun,
    /// Its latest battery passed.
    Passed { record: String },
    /// Its latest battery failed these many checks: the column is shown
    /// behind a "not admitted" mark, out of the weighted order unless the
    /// reader opts in.
    Failed { failing: usize, checks: usize, record: String },
}

/// A computed figure for one cell.
#[derive(Debug, Clone)]
pub struct Figure {
    /// What standings are computed from.
    pub value: f64,
    /// What a reader sees.
    pub raw: String,
    /// The configuration line behind it.
    pub config: String,
    /// `run-id#case-id` of every record used.
    pub records: Vec<String>,
    /// The figure's uncertainty from its own data, where it has one.
    pub spread: Option<Spread>,
    /// Set when the run behind it recorded fewer of the instrument's cases
    /// than its suite lists, or did not finish: what it covers.
    pub partial: Option<String>,
    /// For a pass/fail row: the items given (case ids) and those that
    /// passed, so repeats can say which passed in every run.
    pub items: Option<(Vec<String>, Vec<String>)>,
    /// Set when the figure is the median of a `--repeat` group's runs.
    pub repeats: Option<Repeats>,
}

/// The runs of a `--repeat N` group behind one cell (issue 21): every
/// run's figure, which one the cell shows, and for pass/fail rows how many
/// items passed in every run, in some and in none.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Repeats {
    pub group: String,
    pub runs: Vec<RepeatRun>,
    /// The repeat whose figure is the cell's: the median by value (the
    /// lower of the two middle ones for an even count).
    pub shown: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<RepeatItems>,
}

/// One run of a repeat group, as the cell reads it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RepeatRun {
    pub index: u32,
    pub run: String,
    /// Its figure; None when the run gave none (every case lost, say).
    pub value: Option<f64>,
    /// The figure as the cell's "runs:" list writes it (`21` for 21/24).
    pub short: String,
}

/// Items of a pass/fail row over a group's runs.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RepeatItems {
    pub every: usize,
    pub some: usize,
    pub none: usize,
}

/// A cell's uncertainty, from its own data (issue 21): the standing is
/// unchanged; this is shown beside the raw figure.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Spread {
    /// A k/n figure: the Wilson 95% score interval of the proportion
    /// (Wilson 1927).
    Wilson { k: u64, n: u64, low: f64, high: f64 },
    /// Several samples of one figure (the repetitions of each speed
    /// category): a 95% percentile bootstrap interval of the figure,
    /// each category's samples resampled on its own, seeded.
    Bootstrap { low: f64, high: f64, samples: usize, resamples: usize, seed: u64 },
    /// The repeats of a `--repeat N` group: the lowest and highest of the
    /// runs' figures. With a handful of runs this range is what the data
    /// say; no distribution is assumed.
    Runs { low: f64, high: f64, runs: usize },
    /// One sample and no spread: no interval can be computed from the
    /// cell's data, and none is invented.
    OneSample { note: String },
}

impl Spread {
    /// The Wilson 95% interval of `k` of `n`; None when `n` is 0.
    pub fn wilson(k: usize, n: usize) -> Option<Spread> {
        let (k, n) = (k as u64, n as u64);
        sparktest_stats::wilson(k, n, sparktest_stats::Z95).map(|i| Spread::Wilson { k, n, low: i.low, high: i.high })
    }

    /// The words beside the raw figure.
    pub fn words(&self) -> String {
        match self {
            Spread::Wilson { low, high, .. } => format!("95% CI {:.0}–{:.0}%", low * 100.0, high * 100.0),
            Spread::Bootstrap { low, high, samples, .. } => {
                let mut w = format!("95% bootstrap CI {}–{} over {samples} samples", short(*low), short(*high));
                // A percentile bootstrap over so few samples is too narrow
                // (sparktest-stats' known limitation; `diff` says the same).
                if *samples < 10 {
                    w.push_str(": too few to bootstrap, likely too narrow");
                }
                w
            }
            Spread::Runs { low, high, runs } => format!("range over {runs} runs {}–{}", short(*low), short(*high)),
            Spread::OneSample { note } => note.clone(),
        }
    }

    /// The interval in the figure's own units, where there is one.
    pub fn interval(&self) -> Option<(f64, f64)> {
        match self {
            Spread::Wilson { low, high, .. } | Spread::Bootstrap { low, high, .. } | Spread::Runs { low, high, .. } => {
                Some((*low, *high))
            }
            Spread::OneSample { .. } => None,
        }
    }
}

/// One cell of the scorecard.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Cell {
    Measured {
        standing: f64,
        value: f64,
        raw: String,
        config: String,
        records: Vec<String>,
        /// The figure's uncertainty, where it has one.
        #[serde(skip_serializing_if = "Option::is_none")]
        spread: Option<Spread>,
        /// What a partial cell covers ("partial: 2 of 70 compliance cases
        /// recorded"); absent when the run covered its suite.
        #[serde(skip_serializing_if = "Option::is_none")]
        partial: Option<String>,
        /// The runs of a `--repeat` group behind the figure.
        #[serde(skip_serializing_if = "Option::is_none")]
        repeats: Option<Repeats>,
    },
    Judged {
        standing: f64,
        raw: String,
        reason: String,
    },
    NotApplicable {
        reason: String,
        records: Vec<String>,
    },
    /// The configuration cannot produce the measurement at all (an engine
    /// with no prompt logprobs, a build with no vision): a standing of 0,
    /// below any measured figure, with the reason. A ranking rule, not a
    /// prediction of what it would score.
    Incapable {
        reason: String,
        records: Vec<String>,
    },
}

impl Cell {
    /// The standing used for ordering: N/A counts as zero.
    pub fn standing(&self) -> Option<f64> {
        match self {
            Cell::Measured { standing, .. } | Cell::Judged { standing, .. } => Some(*standing),
            Cell::Incapable { .. } => Some(0.0),
            Cell::NotApplicable { .. } => None,
        }
    }
}

/// One row of the scorecard.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub title: String,
    pub description: String,
    /// How the standing is computed, in words.
    pub rule: String,
    pub judged: bool,
    /// Column key → cell; every column has one.
    pub cells: BTreeMap<String, Cell>,
    /// The leading columns of this row that are not separated beyond
    /// their intervals: the best figure's column and every column whose
    /// interval overlaps the best one's. Empty when the best figure has
    /// no interval, or when no other column overlaps it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_separated: Vec<String>,
}

/// Why a cell has no figure: not measured, what the records said, or that
/// the configuration cannot produce it.
pub enum Missing {
    NotMeasured,
    Because { reason: String, records: Vec<String> },
    Incapable { reason: String, records: Vec<String> },
}

/// The latest run (by start time) for `column` in which `has` holds.
pub fn latest<'a>(runs: &'a [Run], column: &str, has: impl Fn(&Run) -> bool) -> Option<&'a Run> {
    latest_by(runs, |r| r.column == column && has(r))
}

thread_local! {
    /// While one repeat's figure is computed ([`with_repeat`]): the group,
    /// and the index of its one run the rows may see.
    static PINNED: std::cell::RefCell<Option<(String, u32)>> = const { std::cell::RefCell::new(None) };
}

/// Whether the rows may read this run now: always, except the other runs
/// of a repeat group while one of its repeats is computed.
fn visible(r: &Run) -> bool {
    PINNED.with_borrow(|p| match (p, &r.manifest.repeat) {
        (Some((group, index)), Some(rep)) => &rep.group != group || rep.index == *index,
        _ => true,
    })
}

/// Compute `f` as if the repeat group held only its run `index`.
pub fn with_repeat<T>(group: &str, index: u32, f: impl FnOnce() -> T) -> T {
    PINNED.with_borrow_mut(|p| *p = Some((group.to_string(), index)));
    let out = f();
    PINNED.with_borrow_mut(|p| *p = None);
    out
}

/// The latest run (by start time) for which `pick` holds.
pub fn latest_by(runs: &[Run], pick: impl Fn(&Run) -> bool) -> Option<&Run> {
    runs.iter()
        .filter(|r| visible(r) && pick(r))
        .max_by(|a, b| (&a.manifest.started_at, &a.manifest.run_id).cmp(&(&b.manifest.started_at, &b.manifest.run_id)))
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

/// What the served build accepts beyond text, as the seed marks it under
/// each model: measured by a vision instrument, else as the engine reports.
fn vision_mark(runs: &[Run], column: &str) -> String {
    let vision = |r: &Run| {
        r.cases.iter().any(|c| matches!(c.instrument.as_str(), "ocr" | "screenshots") && note(c, "vision").is_some())
    };
    if let Some(run) = latest(runs, column, vision) {
        let said = |v: &str| run.cases.iter().any(|c| note(c, "vision") == Some(v));
        return if said("read") {
            "vision ✓".into()
        } else if said("none") {
            "no vision in this build".into()
        } else {
            "vision reported, images refused".into()
        };
    }
    let reported = latest(runs, column, |r| r.manifest.target.facts.iter().any(|(k, _)| k == "vision"))
        .and_then(|r| r.manifest.target.facts.iter().find(|(k, _)| k == "vision").map(|(_, v)| v.clone()));
    match reported.as_deref() {
        Some("true") => "vision reported, not verified".into(),
        Some("false") => "no vision reported, not verified".into(),
        _ => "vision not entered".into(),
    }
}

/// Audio, as the engine reports it (llama.cpp's `/props` `modalities`):
/// the seed marks `audio ✓`; no instrument here sends audio, so it is
/// said as reported, and nothing is said where the engine reports none.
fn audio_mark(runs: &[Run], column: &str) -> Option<String> {
    let modalities = |r: &Run| r.manifest.target.facts.iter().find(|(k, _)| k == "modalities").map(|(_, v)| v.clone());
    let run = latest(runs, column, |r| modalities(r).is_some())?;
    let value: serde_json::Value = serde_json::from_str(&modalities(run)?).ok()?;
    (value.get("audio")? == &serde_json::Value::Bool(true)).then(|| "audio reported, not verified".to_string())
}

/// The column's latest configuration battery.
fn admission(runs: &[Run], column: &str) -> Admission {
    let Some(run) = latest(runs, column, |r| r.summary.as_ref().is_some_and(|s| s.gate.is_some())) else {
        return Admission::NotRun;
    };
    let Some(gate) = run.summary.as_ref().and_then(|s| s.gate.as_ref()) else {
        return Admission::NotRun;
    };
    let record = run.manifest.run_id.clone();
    if gate.passed {
        Admission::Passed { record }
    } else {
        Admission::Failed { failing: gate.failing.len(), checks: run.cases.len(), record }
    }
}

/// Round to the nearest half point, within 0–10.
pub fn half_points(x: f64) -> f64 {
    ((x * 2.0).round() / 2.0).clamp(0.0, 10.0)
}

/// Relative standings with ties: figures within `margin` (relative) of the
/// best figure of their group share that group's standing. With `gain`, the
/// figures are speed-up ratios scored on ratio − 1 (a slowdown scores 0),
/// ties still judged on the ratios.
pub fn relative_standings(
    values: &[(String, f64)],
    higher_better: bool,
    margin: f64,
    gain: bool,
) -> BTreeMap<String, f64> {
    let mut sorted: Vec<&(String, f64)> = values.iter().filter(|(_, v)| v.is_finite()).collect();
    sorted.sort_by(|a, b| {
        if higher_better { b.1.total_cmp(&a.1) } else { a.1.total_cmp(&b.1) }.then_with(|| a.0.cmp(&b.0))
    });
    let Some(best) = sorted.first().map(|(_, v)| *v) else {
        return BTreeMap::new();
    };
    let score = |v: f64| -> f64 {
        if gain {
            if best <= 1.0 { 0.0 } else { 10.0 * (v - 1.0).max(0.0) / (best - 1.0) }
        } else if higher_better {
            if best <= 0.0 { 0.0 } else { 10.0 * v / best }
        } else if v <= 0.0 {
            10.0
        } else {
            10.0 * best / v
        }
    };
    let mut out = BTreeMap::new();
    let mut head: Option<f64> = None;
    for (key, v) in sorted {
        let within = head.is_some_and(|h| {
            let scale = h.abs().max(v.abs());
            scale == 0.0 || (h - v).abs() / scale <= margin
        });
        if !within {
            head = Some(*v);
        }
        out.insert(key.clone(), half_points(score(head.unwrap_or(*v))));
    }
    out
}

/// The whole board.
#[derive(Debug, Clone, Serialize)]
pub struct Board {
    pub title: String,
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
    /// Published figures read elsewhere, apart from the measured columns
    /// and never scored.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub references: Vec<crate::config::Reference>,
}

/// Build the board from parsed runs.
pub fn build(runs: &[Run], config: &Config, judgements: &Judgements) -> Board {
    // Runs are in start order: a later run's description of the column wins.
    let mut columns: BTreeMap<String, Column> = BTreeMap::new();
    for r in runs {
        let bare = r.manifest.arms.iter().find(|a| a.name == "bare").map(|a| &a.target);
        let keyed = std::iter::once((&r.column, &r.manifest.target)).chain(r.bare_column.as_ref().zip(bare));
        for (key, t) in keyed {
            columns.insert(
                key.clone(),
                Column {
                    key: key.clone(),
                    target: t.name.clone(),
                    label: t.label.clone().unwrap_or_else(|| t.name.clone()),
                    note: t.note.clone(),
                    model: t.model_id.clone(),
                    engine: t.engine.clone(),
                    config: config_line(t),
                    marks: Vec::new(),
                    differs: None,
                    admission: Admission::NotRun,
                },
            );
        }
    }
    for (key, col) in columns.iter_mut() {
        col.marks = vec![vision_mark(runs, key)];
        col.marks.extend(audio_mark(runs, key));
        // A model that must call cannot be scored on when not to call.
        if latest(runs, key, |r| r.manifest.target.tool_choice.is_some()).is_some() {
            col.marks.push("tool calls forced (tool_choice: required)".into());
        }
        col.admission = admission(runs, key);
    }
    differences(&mut columns);
    let mut rows = Vec::new();
    for def in ROWS {
        let rc = config.rows.get(def.title).cloned().unwrap_or_default();
        if rc.hidden {
            continue;
        }
        rows.push(measured_row(
            def,
            runs,
            &columns,
            rc.rule.unwrap_or(def.rule),
            rc.tie_margin.unwrap_or(def.tie_margin),
        ));
    }
    for j in &judgements.row {
        let mut cells = BTreeMap::new();
        for (key, col) in &columns {
            // A target name stands for a column only when it names one.
            let unique = columns.values().filter(|c| c.target == col.target).count() == 1;
            let cell = match j.cell.iter().find(|c| c.column == *key || (unique && c.column == col.target)) {
                Some(c) => {
                    Cell::Judged { standing: half_points(c.standing), raw: c.raw.clone(), reason: c.reason.clone() }
                }
                None => Cell::NotApplicable { reason: "not judged for this configuration".into(), records: Vec::new() },
            };
            cells.insert(key.clone(), cell);
        }
        let row = Row {
            title: j.title.clone(),
            description: j.description.clone(),
            rule: "judged, not measured: a standing and a reason per cell from the judgements file".into(),
            judged: true,
            cells,
            not_separated: Vec::new(),
        };
        // A seed row of the judged kind takes its seed place.
        let at = crate::rows::JUDGED_AFTER
            .iter()
            .find(|(t, _)| *t == j.title)
            .and_then(|(_, after)| rows.iter().position(|r: &Row| r.title == *after))
            .map_or(rows.len(), |i| i + 1);
        rows.insert(at, row);
    }
    Board {
        title: config.title.clone().unwrap_or_else(|| "cargo-sparktest board".into()),
        columns: columns.into_values().collect(),
        rows,
        references: Vec::new(),
    }
}

/// Columns that share a name and model are different configurations (the
/// key carries a digest): each says what of its configuration is not
/// shared by all of them, part by part and flag by flag.
fn differences(columns: &mut BTreeMap<String, Column>) {
    let mut groups: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for (k, c) in columns.iter() {
        groups.entry((c.label.clone(), c.model.clone())).or_default().push(k.clone());
    }
    for keys in groups.values().filter(|k| k.len() > 1) {
        let items: Vec<(String, Vec<String>)> =
            keys.iter().map(|k| (k.clone(), config_items(&columns[k].config))).collect();
        // What every column of the group shares says nothing; the rest of
        // each line is what sets it apart.
        let common: Vec<&String> = items[0].1.iter().filter(|i| items.iter().all(|(_, o)| o.contains(i))).collect();
        for (k, own) in &items {
            let rest: Vec<&str> = own.iter().filter(|i| !common.contains(i)).map(String::as_str).collect();
            let text = if rest.is_empty() {
                "only what the other columns of this name add (see theirs)".to_string()
            } else {
                rest.join(" · ")
            };
            if let Some(c) = columns.get_mut(k) {
                c.differs = Some(text);
            }
        }
    }
}

/// A configuration line as comparable items: its ` · ` parts, the launch
/// flags split into one item per flag with its values (`--ctx-size 4096`).
fn config_items(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in line.split(" · ") {
        if !part.starts_with('-') {
            out.push(part.to_string());
            continue;
        }
        let mut flag = String::new();
        for word in part.split(' ') {
            if word.starts_with('-') && !flag.is_empty() {
                out.push(std::mem::take(&mut flag));
            }
            if !flag.is_empty() {
                flag.push(' ');
            }
            flag.push_str(word);
        }
        if !flag.is_empty() {
            out.push(flag);
        }
    }
    out
}

fn measured_row(def: &RowDef, runs: &[Run], columns: &BTreeMap<String, Column>, rule: Rule, margin: f64) -> Row {
    let mut figures: BTreeMap<String, Result<Figure, Missing>> = BTreeMap::new();
    for key in columns.keys() {
        figures.insert(key.clone(), (def.figure)(runs, key));
    }
    // The runs of a repeat group: the cell's figure is their median.
    for (k, f) in figures.iter_mut() {
        if let Ok(fig) = f {
            repeated(def, runs, k, fig);
        }
    }
    // A figure that is not a finite number is no figure.
    for (k, f) in figures.iter_mut() {
        if let Ok(fig) = f
            && !fig.value.is_finite()
        {
            let records = fig.records.clone();
            *f = Err(Missing::Because { reason: format!("no finite figure for {k}"), records });
        }
    }
    let values: Vec<(String, f64)> =
        figures.iter().filter_map(|(k, f)| f.as_ref().ok().map(|f| (k.clone(), f.value))).collect();
    let standings = match rule {
        Rule::Relative => relative_standings(&values, def.higher_better, margin, false),
        Rule::Gain => relative_standings(&values, true, margin, true),
        Rule::Absolute => values.iter().map(|(k, v)| (k.clone(), half_points(*v))).collect(),
        Rule::Fraction => {
            values.iter().map(|(k, v)| (k.clone(), ((v * 100.0).round() / 10.0).clamp(0.0, 10.0))).collect()
        }
    };
    let description = runs
        .iter()
        .rev()
        .flat_map(|r| r.manifest.instruments.iter())
        .find(|i| i.name == def.instrument)
        .map(|i| i.description.clone())
        .unwrap_or_default();
    let cells = figures
        .into_iter()
        .map(|(k, f)| {
            let cell = match f {
                Ok(f) => Cell::Measured {
                    standing: standings.get(&k).copied().unwrap_or(0.0),
                    value: f.value,
                    raw: f.raw,
                    config: f.config,
                    records: f.records,
                    spread: f.spread,
                    partial: f.partial,
                    repeats: f.repeats,
                },
                Err(Missing::NotMeasured) => {
                    Cell::NotApplicable { reason: "not measured on this configuration".into(), records: Vec::new() }
                }
                Err(Missing::Because { reason, records }) => Cell::NotApplicable { reason, records },
                Err(Missing::Incapable { reason, records }) => Cell::Incapable { reason, records },
            };
            (k, cell)
        })
        .collect();
    let rule_text = match rule {
        Rule::Relative => format!(
            "{}; 10 × {} to the nearest half point; figures within {:.1}% of each other tie{}",
            if def.higher_better { "higher is better" } else { "lower is better (the standing is flipped)" },
            if def.higher_better { "figure ÷ best" } else { "best ÷ figure" },
            margin * 100.0,
            ""
        ),
        Rule::Gain => format!(
            "higher is better; the figure is the speed-up (draft ÷ bare decode tok/s); 10 × (speed-up − 1) ÷ (best − 1), \
             a slowdown scores 0; speed-ups within {:.1}% of each other tie",
            margin * 100.0
        ),
        Rule::Absolute => format!("absolute: {}", def.absolute_rule),
        Rule::Fraction => format!("absolute: 10 × {}, to one decimal; higher is better", def.absolute_rule),
    };
    let not_separated = not_separated(&cells, def.higher_better || rule == Rule::Gain);
    Row { title: def.title.into(), description, rule: rule_text, judged: false, cells, not_separated }
}

/// The best figure's column and every column whose interval overlaps the
/// best one's: a sorted view's leaders that their data cannot tell apart.
fn not_separated(cells: &BTreeMap<String, Cell>, higher_better: bool) -> Vec<String> {
    type Led<'a> = (&'a String, f64, Option<(f64, f64)>);
    let figures: Vec<Led> = cells
        .iter()
        .filter_map(|(k, c)| match c {
            Cell::Measured { value, spread, .. } => Some((k, *value, spread.as_ref().and_then(Spread::interval))),
            _ => None,
        })
        .collect();
    let best = figures.iter().max_by(|a, b| {
        let by = if higher_better { a.1.total_cmp(&b.1) } else { b.1.total_cmp(&a.1) };
        by.then_with(|| b.0.cmp(a.0))
    });
    let Some((best_key, _, Some((low, high)))) = best else {
        return Vec::new();
    };
    let overlapping: Vec<String> = figures
        .iter()
        .filter(|(k, _, i)| k != best_key && i.is_some_and(|(l, h)| l <= *high && *low <= h))
        .map(|(k, _, _)| (*k).clone())
        .collect();
    if overlapping.is_empty() {
        return Vec::new();
    }
    std::iter::once((*best_key).clone()).chain(overlapping).collect()
}

/// A figure to three significant digits, trailing zeros dropped.
pub fn short(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let digits = (2 - x.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{x:.digits$}");
    if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s }
}

/// Where the figure behind a cell came from a run of a `--repeat` group:
/// the group's median figure, every run's figure beside it, the range of
/// the runs (or, for a k/n row, the shown run's Wilson interval), and for
/// pass/fail rows the items passed in every run, in some and in none. The
/// standing is computed from the median. A figure from no group is left
/// as it is.
fn repeated(def: &RowDef, runs: &[Run], key: &str, fig: &mut Figure) {
    let run_of = |record: &str| {
        let id = record.split('#').next().unwrap_or("");
        runs.iter().find(|r| r.manifest.run_id == id)
    };
    let Some(group) = fig.records.first().and_then(|r| run_of(r)).and_then(|r| r.manifest.repeat.as_ref()) else {
        return;
    };
    let mut members: Vec<(u32, &Run)> = runs
        .iter()
        .filter_map(|r| r.manifest.repeat.as_ref().filter(|x| x.group == group.group).map(|x| (x.index, r)))
        .collect();
    members.sort_by_key(|(i, _)| *i);
    if members.len() < 2 {
        return;
    }
    let per: Vec<(u32, &Run, Option<Figure>)> = members
        .iter()
        .map(|(i, r)| {
            let f = with_repeat(&group.group, *i, || (def.figure)(runs, key)).ok().filter(|f| f.value.is_finite());
            // A figure from another run (an older one, where this repeat
            // measured nothing of the row) is not this repeat's.
            let own = f.filter(|f| {
                f.records.first().and_then(|x| run_of(x)).is_some_and(|x| x.manifest.run_id == r.manifest.run_id)
            });
            (*i, *r, own)
        })
        .collect();
    let mut ok: Vec<(u32, &Figure)> = per.iter().filter_map(|(i, _, f)| Some((*i, f.as_ref()?))).collect();
    if ok.is_empty() {
        return;
    }
    ok.sort_by(|a, b| a.1.value.total_cmp(&b.1.value).then(a.0.cmp(&b.0)));
    let (shown, median) = ok[(ok.len() - 1) / 2];
    let short_of = |f: &Figure| match &f.spread {
        Some(Spread::Wilson { k, .. }) => k.to_string(),
        _ => short(f.value),
    };
    let list: Vec<RepeatRun> = per
        .iter()
        .map(|(i, r, f)| RepeatRun {
            index: *i,
            run: r.manifest.run_id.clone(),
            value: f.as_ref().map(|f| f.value),
            short: f.as_ref().map_or("—".into(), short_of),
        })
        .collect();
    let mut out = median.clone();
    let shorts: Vec<&str> = list.iter().map(|r| r.short.as_str()).collect();
    out.raw = format!("{} - runs: {}", median.raw, shorts.join(", "));
    let missing = list.iter().filter(|r| r.value.is_none()).count();
    if missing > 0 {
        out.raw.push_str(&format!(" ({missing} of {} runs gave no figure)", list.len()));
    }
    // Items passed in every run, in some, in none: where every run with a
    // figure says which of its items passed.
    let items = per.iter().filter_map(|(_, _, f)| f.as_ref()).map(|f| f.items.as_ref()).collect::<Option<Vec<_>>>();
    let items = items.filter(|v| v.len() >= 2).map(|v| {
        let all: std::collections::BTreeSet<&String> = v.iter().flat_map(|(given, _)| given).collect();
        let passed: Vec<std::collections::BTreeSet<&String>> = v.iter().map(|(_, p)| p.iter().collect()).collect();
        let every = all.iter().filter(|id| passed.iter().all(|p| p.contains(*id))).count();
        let none = all.iter().filter(|id| passed.iter().all(|p| !p.contains(*id))).count();
        (RepeatItems { every, some: all.len() - every - none, none }, all.len(), v.len())
    });
    if let Some((i, n, runs)) = &items {
        out.raw.push_str(&format!(" - {}/{n} in all {runs} runs, {} in some, {} in none", i.every, i.some, i.none));
    }
    if !matches!(out.spread, Some(Spread::Wilson { .. })) && ok.len() >= 2 {
        let low = ok.iter().map(|(_, f)| f.value).fold(f64::INFINITY, f64::min);
        let high = ok.iter().map(|(_, f)| f.value).fold(f64::NEG_INFINITY, f64::max);
        out.spread = Some(Spread::Runs { low, high, runs: ok.len() });
    }
    out.records = per.iter().filter_map(|(_, _, f)| f.as_ref()).flat_map(|f| f.records.iter().cloned()).collect();
    out.repeats = Some(Repeats { group: group.group.clone(), runs: list, shown, items: items.map(|(i, _, _)| i) });
    *fig = out;
}

/// Mean of some values; None when empty.
pub fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// A case's metric.
pub fn metric(c: &CaseRecord, name: &str) -> Option<f64> {
    c.metrics.iter().find(|m| m.name == name).map(|m| m.value)
}

/// A case's note.
pub fn note<'a>(c: &'a CaseRecord, key: &str) -> Option<&'a str> {
    c.notes.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

/// For a row whose measurement the engine cannot produce at all: N/A
/// becomes a standing of 0 with the reason ("could not be tested: engine
/// returns no prompt logprobs"), below any measured figure, as the seed
/// ranks it.
pub fn incapable(m: Missing) -> Missing {
    match m {
        Missing::Because { reason, records } if reason.starts_with("not applicable: ") => {
            Missing::Incapable { reason: reason.replacen("not applicable: ", "could not be tested: ", 1), records }
        }
        other => other,
    }
}

/// Why no case gave a figure: the first N/A, lost or failed case's reason.
pub fn missing_from(run: &Run, cases: &[&CaseRecord]) -> Missing {
    let pick = |o: Outcome| cases.iter().find(|c| c.outcome == o);
    let (label, case) = if let Some(c) = pick(Outcome::NotApplicable) {
        ("not applicable", c)
    } else if let Some(c) = pick(Outcome::Lost) {
        ("lost", c)
    } else if let Some(c) = pick(Outcome::Fail) {
        ("no valid figure", c)
    } else {
        return Missing::NotMeasured;
    };
    Missing::Because {
        reason: format!("{label}: {}", case.reason.as_deref().unwrap_or("")),
        records: cases.iter().map(|c| run.record_id(c)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(pairs: &[(&str, f64)]) -> Vec<(String, f64)> {
        pairs.iter().map(|(k, x)| (k.to_string(), *x)).collect()
    }

    #[test]
    fn relative_with_ties_and_flipped_rows() {
        let s = relative_standings(&v(&[("a", 100.0), ("b", 98.5), ("c", 50.0)]), true, 0.02, false);
        assert_eq!((s["a"], s["b"], s["c"]), (10.0, 10.0, 5.0));
        let s = relative_standings(&v(&[("a", 0.5), ("b", 0.6)]), false, 0.01, false);
        assert_eq!((s["a"], s["b"]), (10.0, 8.5));
        // Nothing positive to compare with: nobody earns points.
        let s = relative_standings(&v(&[("a", 0.0), ("b", 0.0)]), true, 0.0, false);
        assert_eq!((s["a"], s["b"]), (0.0, 0.0));
    }

    #[test]
    fn speed_ups_score_on_their_gain_and_a_slowdown_scores_nothing() {
        let s = relative_standings(&v(&[("a", 3.0), ("b", 2.0), ("c", 0.45), ("d", 2.99)]), true, 0.03, true);
        assert_eq!((s["a"], s["b"], s["c"], s["d"]), (10.0, 5.0, 0.0, 10.0));
        let s = relative_standings(&v(&[("a", 0.45)]), true, 0.03, true);
        assert_eq!(s["a"], 0.0, "a lone slowdown is no gain");
    }

    #[test]
    fn non_finite_figures_get_no_standing() {
        let s = relative_standings(&v(&[("a", f64::NAN), ("b", 2.0)]), true, 0.0, false);
        assert_eq!(s.get("a"), None);
        assert_eq!(s["b"], 10.0);
    }
}
