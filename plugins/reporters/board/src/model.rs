//! From measurement files to the board: runs, columns (serving
//! configurations), rows (one per measured thing) and cells with their
//! standing, raw figure, configuration line and the records behind them.

use std::collections::BTreeMap;

use serde::Serialize;

use sparktest_sdk::contract::{facts, ocr, screenshots, spec_decode, vision};

use crate::config::{Config, Judgements, Rule};
pub use crate::figure::{Figure, Missing, RepeatItems, RepeatRun, Repeats, Spread, short};
use crate::rows::RowDef;
pub use crate::run::{Id, Run, Runs, config_line, latest, with_repeat};
use crate::run::{fact, note};

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
    /// Every box that measured it (`boxes.rs`): where its server ran
    /// (the harness's own box for a server it launched), its hardware, and
    /// the batch job; where there is more than one, each with the rows it
    /// gave, joined by ` + `.
    pub measured_on: String,
    /// Each box with the rows it gave, where there is more than one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub boxes: Vec<String>,
    /// Its kinds of hardware (`A`, `B`, `A + B` …) where the board's boxes
    /// are of more than one: standings compare like with like only within
    /// one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hardware: Option<String>,
    /// Its own boxes are unlike hardware: its rows do not compare like
    /// with like with each other.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unlike: bool,
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

/// One cell of the scorecard.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Cell {
    Measured {
        standing: f64,
        value: f64,
        raw: String,
        config: String,
        records: Vec<Id>,
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
        /// Later runs of the same cases that failed as runs (answered
        /// nothing, stopped early, never finished): they never replace this
        /// measurement, and the cell says so.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        failed_later: Vec<String>,
    },
    Judged {
        standing: f64,
        raw: String,
        reason: String,
    },
    NotApplicable {
        reason: String,
        /// The configuration line of the run behind the reason, where a
        /// run is.
        #[serde(skip_serializing_if = "Option::is_none")]
        config: Option<String>,
        records: Vec<Id>,
    },
    /// The configuration cannot produce the measurement at all (an engine
    /// with no prompt logprobs, a build with no vision): a standing of 0,
    /// below any measured figure, with the reason. A ranking rule, not a
    /// prediction of what it would score.
    Incapable {
        reason: String,
        /// The configuration line of the run behind the reason.
        #[serde(skip_serializing_if = "Option::is_none")]
        config: Option<String>,
        records: Vec<Id>,
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

/// What the served build accepts beyond text, as the seed marks it under
/// each model: measured by a vision instrument, else as the engine reports.
fn vision_mark(runs: &Runs, column: &str) -> String {
    let vision = |r: &Run| {
        r.cases.iter().any(|c| {
            (c.instrument == ocr::INSTRUMENT || c.instrument == screenshots::INSTRUMENT)
                && note(c, vision::VISION).is_some()
        })
    };
    if let Some(run) = latest(runs, column, vision) {
        let said = |v: &str| run.cases.iter().any(|c| note(c, vision::VISION) == Some(v));
        return if said(vision::READ) {
            "vision ✓".into()
        } else if said(vision::NONE) {
            "no vision in this build".into()
        } else {
            "vision reported, images refused".into()
        };
    }
    let reported = latest(runs, column, |r| fact(&r.manifest.target, facts::VISION).is_some())
        .and_then(|r| fact(&r.manifest.target, facts::VISION));
    match reported {
        Some("true") => "vision reported, not verified".into(),
        Some("false") => "no vision reported, not verified".into(),
        _ => "vision not entered".into(),
    }
}

/// Audio, as the engine reports it (llama.cpp's `/props` `modalities`):
/// the seed marks `audio ✓`; no instrument here sends audio, so it is
/// said as reported, and nothing is said where the engine reports none.
fn audio_mark(runs: &Runs, column: &str) -> Option<String> {
    let run = latest(runs, column, |r| fact(&r.manifest.target, facts::MODALITIES).is_some())?;
    let value: serde_json::Value = serde_json::from_str(fact(&run.manifest.target, facts::MODALITIES)?).ok()?;
    (value.get("audio")? == &serde_json::Value::Bool(true)).then(|| "audio reported, not verified".to_string())
}

/// The column's latest configuration battery.
fn admission(runs: &Runs, column: &str) -> Admission {
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
    /// Aggregate against per-request speed for each column, its Pareto
    /// frontier marked (the `frontier` module).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub frontier: Vec<crate::frontier::Series>,
    /// The kinds of hardware the columns were measured on, `A: …`, where
    /// there is more than one (each column names its kind).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hardware_kinds: Vec<String>,
}

/// Build the board from parsed runs.
pub fn build(runs: &Runs, defs: &[RowDef], config: &Config, judgements: &Judgements) -> Board {
    // Runs are in start order: a later run's description of the column wins.
    let mut columns: BTreeMap<String, Column> = BTreeMap::new();
    // A campaign's own record of a configuration (its launch, its memory)
    // measures no row: it makes no column (a launch that failed has no
    // probed configuration to name one by), and is read in "Campaigns".
    for r in runs.iter().filter(|r| !r.is_campaign_record()) {
        let bare = r.manifest.arms.iter().find(|a| a.name == spec_decode::arm::BARE.name()).map(|a| &a.target);
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
                    // Named once the rows are built (`boxes::name`).
                    measured_on: String::new(),
                    boxes: Vec::new(),
                    hardware: None,
                    unlike: false,
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
    for def in defs {
        let rc = config.rows.get(&*def.title).cloned().unwrap_or_default();
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
    // A seed row of the judged kind is on every board: N/A, saying why,
    // where no judgement was given for it.
    let placeholders: Vec<crate::config::JudgedRow> = crate::rows::JUDGED_AFTER
        .iter()
        .filter(|(title, _)| !judgements.row.iter().any(|j| j.title == *title))
        .map(|(title, _)| crate::config::JudgedRow { title: title.to_string(), ..Default::default() })
        .collect();
    let not_judged = if judgements.given {
        "not judged: the judgements file has no row of this title"
    } else {
        "not judged: no judgements file (board --judgements FILE)"
    };
    for (j, placeholder) in judgements.row.iter().map(|j| (j, false)).chain(placeholders.iter().map(|j| (j, true))) {
        let mut cells = BTreeMap::new();
        for (key, col) in &columns {
            // A target name stands for a column only when it names one.
            let unique = columns.values().filter(|c| c.target == col.target).count() == 1;
            let cell = match j.cell.iter().find(|c| c.column == *key || (unique && c.column == col.target)) {
                Some(c) => {
                    Cell::Judged { standing: half_points(c.standing), raw: c.raw.clone(), reason: c.reason.clone() }
                }
                None if placeholder => {
                    Cell::NotApplicable { reason: not_judged.into(), config: None, records: Vec::new() }
                }
                None => Cell::NotApplicable {
                    reason: "not judged for this configuration".into(),
                    config: None,
                    records: Vec::new(),
                },
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
    let keys: Vec<String> = columns.keys().cloned().collect();
    Board {
        title: config.title.clone().unwrap_or_else(|| "cargo-sparktest board".into()),
        columns: columns.into_values().collect(),
        rows,
        references: Vec::new(),
        frontier: crate::frontier::frontier(runs, &keys),
        // Named with the boxes, once the board is built (`boxes::name`).
        hardware_kinds: Vec::new(),
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

/// The configuration a column head says once: its line without the
/// engine and model the head already names.
pub fn head_config(c: &Column) -> String {
    config_items(&c.config).into_iter().filter(|i| *i != c.engine && *i != c.model).collect::<Vec<_>>().join(" · ")
}

/// What a cell says of its configuration: nothing where it is its
/// column's (the head says it once), else what differs from the head,
/// item by item (flags one by one).
pub fn cell_config(column: &str, cell: &str) -> Option<String> {
    if column == cell {
        return None;
    }
    let (head, own) = (config_items(column), config_items(cell));
    let extra: Vec<&str> = own.iter().filter(|i| !head.contains(i)).map(String::as_str).collect();
    let without: Vec<&str> = head.iter().filter(|i| !own.contains(i)).map(String::as_str).collect();
    let mut words = Vec::new();
    if !extra.is_empty() {
        words.push(format!("this cell's configuration: {}", extra.join(" · ")));
    }
    if !without.is_empty() {
        words.push(format!("without {}", without.join(" · ")));
    }
    // The same items in another order (a flag given twice, its last
    // value winning) is still another line: said whole.
    if words.is_empty() {
        return Some(format!("this cell's configuration: {cell}"));
    }
    Some(words.join("; "))
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

fn measured_row(def: &RowDef, runs: &Runs, columns: &BTreeMap<String, Column>, rule: Rule, margin: f64) -> Row {
    let mut figures: BTreeMap<String, Result<Figure, Missing>> = BTreeMap::new();
    for key in columns.keys() {
        figures.insert(key.clone(), def.figure(runs, key));
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
    let description = def.methodology().map(str::to_string).unwrap_or_else(|| {
        runs.iter()
            .rev()
            .flat_map(|r| r.manifest.instruments.iter())
            .find(|i| i.name == def.instrument)
            .map(|i| i.description.clone())
            .unwrap_or_default()
    });
    // The run a record came from (a merged part's or resume's records
    // name their own run ids; the index knows them).
    let run_of = |records: &[Id]| runs.by_id(records.first()?.split('#').next()?);
    let cells = figures
        .into_iter()
        .map(|(k, f)| {
            let cell = match f {
                Ok(f) => Cell::Measured {
                    standing: standings.get(&k).copied().unwrap_or(0.0),
                    value: f.value,
                    raw: f.raw,
                    failed_later: failed_later(runs, &k, run_of(&f.records), &f.records),
                    config: f.config,
                    records: f.records,
                    spread: f.spread,
                    partial: f.partial,
                    repeats: f.repeats,
                },
                Err(Missing::NotMeasured) => Cell::NotApplicable {
                    reason: "not measured on this configuration".into(),
                    config: None,
                    records: Vec::new(),
                },
                Err(Missing::Because { reason, records }) => {
                    Cell::NotApplicable { reason, config: run_of(&records).map(Run::config), records }
                }
                Err(Missing::Incapable { reason, records }) => {
                    Cell::Incapable { reason, config: run_of(&records).map(Run::config), records }
                }
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
    Row { title: def.title.to_string(), description, rule: rule_text, judged: false, cells, not_separated }
}

/// What a measured cell says of the later runs of its cases that failed as
/// runs: `run-id: why`, each.
fn failed_later(runs: &Runs, column: &str, shown: Option<&Run>, records: &[Id]) -> Vec<String> {
    let Some(shown) = shown else {
        return Vec::new();
    };
    let cases: Vec<&str> = records.iter().filter_map(|r| r.split_once('#').map(|(_, case)| case)).collect();
    crate::run::failed_later(runs, column, shown, &cases)
        .into_iter()
        .map(|(r, why)| format!("{}: {why}", r.manifest.run_id))
        .collect()
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

/// Where the figure behind a cell came from a run of a `--repeat` group:
/// the group's median figure, every run's figure beside it, the range of
/// the runs (or, for a k/n row, the shown run's Wilson interval), and for
/// pass/fail rows the items passed in every run, in some and in none. The
/// standing is computed from the median. A figure from no group is left
/// as it is.
fn repeated(def: &RowDef, runs: &Runs, key: &str, fig: &mut Figure) {
    let run_of = |record: &str| runs.by_id(record.split('#').next().unwrap_or(""));
    let Some(group) = fig.records.first().and_then(|r| run_of(r)).and_then(|r| r.manifest.repeat.as_ref()) else {
        return;
    };
    let mut members: Vec<(u32, &Run)> =
        runs.group(&group.group).filter_map(|r| r.manifest.repeat.as_ref().map(|x| (x.index, r))).collect();
    members.sort_by_key(|(i, _)| *i);
    if members.len() < 2 {
        return;
    }
    let per: Vec<(u32, &Run, Option<Figure>)> = members
        .iter()
        .map(|(i, r)| {
            let f = with_repeat(&group.group, *i, || def.figure(runs, key)).ok().filter(|f| f.value.is_finite());
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
    fn a_cell_says_only_what_of_its_configuration_differs_from_its_column() {
        let head = "llama.cpp · build b1 · m · context 4096 · --ctx-size 4096 --threads 1";
        assert_eq!(cell_config(head, head), None);
        assert_eq!(
            cell_config(head, "llama.cpp · build b2 · m · context 4096 · --ctx-size 4096 --threads 2").as_deref(),
            Some("this cell's configuration: build b2 · --threads 2; without build b1 · --threads 1")
        );
        assert_eq!(
            cell_config(head, "llama.cpp · build b1 · m · context 4096 · --ctx-size 4096").as_deref(),
            Some("without --threads 1")
        );
        let reordered = "llama.cpp · build b1 · m · context 4096 · --threads 1 --ctx-size 4096";
        assert_eq!(cell_config(head, reordered), Some(format!("this cell's configuration: {reordered}")));
    }

    #[test]
    fn non_finite_figures_get_no_standing() {
        let s = relative_standings(&v(&[("a", f64::NAN), ("b", 2.0)]), true, 0.0, false);
        assert_eq!(s.get("a"), None);
        assert_eq!(s["b"], 10.0);
    }
}
