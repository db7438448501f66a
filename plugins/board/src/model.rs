//! From measurement files to the board: runs, columns (serving
//! configurations), rows (one per measured thing) and cells with their
//! standing, raw figure, configuration line and the records behind them.

use std::collections::BTreeMap;

use serde::Serialize;
use sparktest_record::{CaseRecord, Line, Manifest, Outcome, Summary, TargetInfo};

use crate::config::{Config, Judgements, Rule};
use crate::rows::{ROWS, RowDef};

/// One measurement file.
#[derive(Debug, Clone)]
pub struct Run {
    pub manifest: Manifest,
    pub cases: Vec<CaseRecord>,
    pub summary: Option<Summary>,
}

impl Run {
    /// Parse one file; `n` names it in errors (1-based, in the host's order).
    pub fn parse(text: &str, n: usize) -> Result<Run, String> {
        let lines = sparktest_record::parse(text).map_err(|e| format!("measurement file #{n}: {e}"))?;
        let mut it = lines.into_iter();
        let Some(Line::Manifest(manifest)) = it.next() else {
            return Err(format!("measurement file #{n}: no manifest"));
        };
        let mut run = Run { manifest, cases: Vec::new(), summary: None };
        for line in it {
            match line {
                Line::Case(c) => run.cases.push(c),
                Line::Summary(s) => run.summary = Some(s),
                Line::Manifest(_) => return Err(format!("measurement file #{n}: a second manifest")),
            }
        }
        Ok(run)
    }

    /// `run-id#case-id`: names the record behind a figure.
    pub fn record_id(&self, case: &CaseRecord) -> String {
        format!("{}#{}", self.manifest.run_id, case.id)
    }

    /// This run's cases of one instrument.
    pub fn cases_of<'a>(&'a self, instrument: &'a str) -> impl Iterator<Item = &'a CaseRecord> + 'a {
        self.cases.iter().filter(move |c| c.instrument == instrument)
    }
}

/// The column a target belongs to.
pub fn column_key(t: &TargetInfo) -> String {
    format!("{} · {}", t.name, t.model_id)
}

/// The configuration line of a target: what produced a figure.
pub fn config_line(t: &TargetInfo) -> String {
    let mut parts = vec![t.engine.clone()];
    if let Some(b) = &t.build {
        parts.push(format!("build {b}"));
    }
    parts.push(t.model_id.clone());
    for (k, v) in &t.facts {
        if let Some(pin) = k.strip_prefix("pin.") {
            // "1.0 sha256:<64 hex>" → "1.0 sha256:<12 hex>"; the pinned
            // configurations section keeps the whole digest.
            let short = match v.find("sha256:") {
                Some(at) => v[..(at + 7 + 12).min(v.len())].to_string(),
                None => v.clone(),
            };
            parts.push(format!("{pin} {short}"));
        }
    }
    if let Some(cmd) = &t.launch_command {
        parts.push(launch_flags(cmd));
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
    pub model: String,
    pub engine: String,
    pub config: String,
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
}

/// One cell of the scorecard.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Cell {
    Measured { standing: f64, value: f64, raw: String, config: String, records: Vec<String> },
    Judged { standing: f64, raw: String, reason: String },
    NotApplicable { reason: String, records: Vec<String> },
}

impl Cell {
    /// The standing used for ordering: N/A counts as zero.
    pub fn standing(&self) -> Option<f64> {
        match self {
            Cell::Measured { standing, .. } | Cell::Judged { standing, .. } => Some(*standing),
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
}

/// Why a cell has no figure: not measured, or what the records said.
pub enum Missing {
    NotMeasured,
    Because { reason: String, records: Vec<String> },
}

/// The latest run (by start time) for `column` in which `has` holds.
pub fn latest<'a>(runs: &'a [Run], column: &str, has: impl Fn(&Run) -> bool) -> Option<&'a Run> {
    runs.iter().filter(|r| column_key(&r.manifest.target) == column && has(r)).max_by(|a, b| {
        (&a.manifest.started_at, &a.manifest.run_id).cmp(&(&b.manifest.started_at, &b.manifest.run_id))
    })
}

/// Round to the nearest half point, within 0–10.
pub fn half_points(x: f64) -> f64 {
    ((x * 2.0).round() / 2.0).clamp(0.0, 10.0)
}

/// Relative standings with ties: figures within `margin` (relative) of the
/// best figure of their group share that group's standing.
pub fn relative_standings(values: &[(String, f64)], higher_better: bool, margin: f64) -> BTreeMap<String, f64> {
    let mut sorted: Vec<&(String, f64)> = values.iter().collect();
    sorted.sort_by(|a, b| if higher_better { b.1.total_cmp(&a.1) } else { a.1.total_cmp(&b.1) }.then_with(|| a.0.cmp(&b.0)));
    let Some(best) = sorted.first().map(|(_, v)| *v) else { return BTreeMap::new() };
    let score = |v: f64| -> f64 {
        if higher_better {
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
}

/// Build the board from parsed runs.
pub fn build(runs: &[Run], config: &Config, judgements: &Judgements) -> Board {
    let mut columns: BTreeMap<String, Column> = BTreeMap::new();
    for r in runs {
        let t = &r.manifest.target;
        columns.entry(column_key(t)).or_insert_with(|| Column {
            key: column_key(t),
            target: t.name.clone(),
            model: t.model_id.clone(),
            engine: t.engine.clone(),
            config: config_line(t),
        });
    }
    let mut rows = Vec::new();
    for def in ROWS {
        let rc = config.rows.get(def.title).cloned().unwrap_or_default();
        if rc.hidden {
            continue;
        }
        rows.push(measured_row(def, runs, &columns, rc.rule.unwrap_or(def.rule), rc.tie_margin.unwrap_or(def.tie_margin)));
    }
    for j in &judgements.row {
        let mut cells = BTreeMap::new();
        for key in columns.keys() {
            let target = &columns[key].target;
            let cell = match j.cell.iter().find(|c| &c.column == target || &c.column == key) {
                Some(c) => Cell::Judged { standing: half_points(c.standing), raw: c.raw.clone(), reason: c.reason.clone() },
                None => Cell::NotApplicable { reason: "not judged for this configuration".into(), records: Vec::new() },
            };
            cells.insert(key.clone(), cell);
        }
        rows.push(Row {
            title: j.title.clone(),
            description: j.description.clone(),
            rule: "judged, not measured: a standing and a reason per cell from the judgements file".into(),
            judged: true,
            cells,
        });
    }
    Board {
        title: config.title.clone().unwrap_or_else(|| "cargo-sparktest board".into()),
        columns: columns.into_values().collect(),
        rows,
    }
}

fn measured_row(def: &RowDef, runs: &[Run], columns: &BTreeMap<String, Column>, rule: Rule, margin: f64) -> Row {
    let mut figures: BTreeMap<String, Result<Figure, Missing>> = BTreeMap::new();
    for key in columns.keys() {
        figures.insert(key.clone(), (def.figure)(runs, key));
    }
    let values: Vec<(String, f64)> =
        figures.iter().filter_map(|(k, f)| f.as_ref().ok().map(|f| (k.clone(), f.value))).collect();
    let standings = match rule {
        Rule::Relative => relative_standings(&values, def.higher_better, margin),
        Rule::Absolute => values.iter().map(|(k, v)| (k.clone(), half_points(*v))).collect(),
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
                },
                Err(Missing::NotMeasured) => {
                    Cell::NotApplicable { reason: "not measured on this configuration".into(), records: Vec::new() }
                }
                Err(Missing::Because { reason, records }) => Cell::NotApplicable { reason, records },
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
            if def.title == "Speculative decoding" { "; the figure is the gain (speed-up − 1, 0 for a slowdown)" } else { "" }
        ),
        Rule::Absolute => format!("absolute: {}", def.absolute_rule),
    };
    Row { title: def.title.into(), description, rule: rule_text, judged: false, cells }
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

/// Why no case gave a figure: the first N/A, lost or failed case's reason.
pub fn missing_from(run: &Run, cases: &[&CaseRecord]) -> Missing {
    let pick = |o: Outcome| cases.iter().find(|c| c.outcome == o);
    let (label, case) = if let Some(c) = pick(Outcome::NotApplicable) {
        ("the engine cannot produce it", c)
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
