//! The two sides of a diff: what `RUN_A` and `RUN_B` name (a run id, a run
//! group, a measurement file or a folder of them), read into records keyed
//! by case.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sparktest_record::{CaseRecord, Line, Manifest, Summary};

use crate::error::{Error, ErrorKind};

/// A case on one side: its arm (paired instruments) and id.
pub type Key = (Option<String>, String);

/// One side of a diff.
#[derive(Debug, Clone)]
pub struct Side {
    /// What the command line named.
    pub spec: String,
    /// The runs read, in start order.
    pub manifests: Vec<Manifest>,
    /// Every record of every case, in start order of their runs, each with
    /// the run id it came from.
    pub records: BTreeMap<Key, Vec<(String, CaseRecord)>>,
    /// Case key → the board rows it feeds.
    pub rows: BTreeMap<Key, Vec<String>>,
    /// Rows in the order first seen.
    pub row_order: Vec<String>,
    /// Why this side's records may not be all its runs meant to record:
    /// a run stopped early, interrupted or never finished, a file cut by a
    /// damaged line. Empty for runs that ran their course.
    pub unfinished: Vec<String>,
}

fn setup(message: String) -> Error {
    Error::new(ErrorKind::Setup, message)
}

/// The rows a case feeds, as the board groups records: the tags that are
/// row titles, else the row the instrument describes itself with, else the
/// instrument's name. A built-in instrument's row titles are the
/// contract's ([`sparktest_contract::ROWS`]); an instrument outside it is
/// read by the convention the built-in ones follow (rows are capitalised
/// titles; lower-case tags are categories such as `a-tool` or `kind:…`).
pub fn rows_of(case: &CaseRecord, manifest: &Manifest) -> Vec<String> {
    let tagged = row_tags(&case.instrument, &case.tags);
    if !tagged.is_empty() {
        return tagged;
    }
    let described = manifest.instruments.iter().find(|i| i.name == case.instrument).map(|i| i.row.clone());
    vec![described.filter(|r| !r.is_empty()).unwrap_or_else(|| case.instrument.clone())]
}

/// The tags of a case that name rows.
fn row_tags(instrument: &str, tags: &[String]) -> Vec<String> {
    let built_in = sparktest_contract::ROWS.iter().any(|r| r.instrument == instrument);
    let is_row = |t: &String| {
        if built_in {
            sparktest_contract::ROWS.iter().any(|r| r.instrument == instrument && r.title == t)
        } else {
            t.starts_with(|c: char| c.is_ascii_uppercase())
        }
    };
    tags.iter().filter(|t| is_row(t)).cloned().collect()
}

/// One file as a side reads it.
struct Read {
    manifest: Manifest,
    cases: Vec<CaseRecord>,
    summary: Option<Summary>,
    /// The damaged line, if the file has one: `line N: why`.
    damage: Option<String>,
}

/// A file's whole records; a damaged tail is warned about, not fatal.
fn read(path: &Path) -> Result<Read, Error> {
    let bytes = std::fs::read(path).map_err(|e| setup(format!("failed to read {}: {e}", path.display())))?;
    let text = String::from_utf8_lossy(&bytes);
    let partial = sparktest_record::parse_partial(&text).map_err(|e| setup(format!("{}: {e}", path.display())))?;
    let damage = partial.damage.as_ref().map(|d| format!("line {}: {}", d.line, d.message));
    if let Some(d) = &damage {
        eprintln!("sparktest: warning: {}: {d}; the records before it are used", path.display());
    }
    let mut manifest = None;
    let mut cases = Vec::new();
    let mut summary = None;
    for line in partial.lines {
        match line {
            Line::Manifest(m) if manifest.is_none() => manifest = Some(m),
            Line::Case(c) => cases.push(c),
            Line::Summary(s) => summary = Some(s),
            _ => {}
        }
    }
    let manifest = manifest.ok_or_else(|| setup(format!("{}: no manifest", path.display())))?;
    Ok(Read { manifest, cases, summary, damage })
}

/// Why a run's records may fall short of what it meant to record: it
/// stopped early, was interrupted, never finished, or its file is damaged.
fn unfinished(r: &Read, path: &Path) -> Option<String> {
    let id = &r.manifest.run_id;
    if let Some(d) = &r.damage {
        return Some(format!("{id}: its file {} is damaged at {d}", path.display()));
    }
    match &r.summary {
        None => Some(format!("{id}: never finished (no summary line: it crashed or was killed)")),
        Some(s) => match (&s.interrupted, &s.stopped) {
            (Some(signal), _) => Some(format!("{id}: interrupted by {signal}")),
            (None, Some(why)) => Some(format!("{id}: stopped early: {why}")),
            (None, None) => None,
        },
    }
}

/// The files `spec` names: a file, a folder, a run id in `dir` (with the
/// runs that resumed it), or a run group (every part of a partitioned run,
/// every repeat of a `--repeat N` run).
fn files_for(spec: &str, cwd: &Path, dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let as_path = cwd.join(spec);
    if as_path.is_file() {
        return Ok(vec![as_path]);
    }
    if as_path.is_dir() {
        let files = crate::board::measurement_files(&as_path)?;
        if files.is_empty() {
            return Err(setup(format!("no measurement files (*.jsonl) in {}", as_path.display())));
        }
        return Ok(files);
    }
    let names_a_run = !spec.contains(['/', '\\']) && !spec.starts_with('.');
    if names_a_run && dir.is_dir() {
        let mut found = Vec::new();
        for f in crate::board::measurement_files(dir)? {
            let Ok(Read { manifest: m, .. }) = read(&f) else { continue };
            let group = m.partition.as_ref().is_some_and(|p| p.group == spec)
                || m.repeat.as_ref().is_some_and(|r| r.group == spec);
            if m.run_id == spec || m.resumes.as_deref() == Some(spec) || group {
                found.push(f);
            }
        }
        if !found.is_empty() {
            return Ok(found);
        }
    }
    Err(setup(format!(
        "{spec:?} names no measurement file, folder, run id or run group (run ids and groups are looked up in {})",
        dir.display()
    )))
}

/// Read one side.
pub fn side(spec: &str, cwd: &Path, dir: &Path) -> Result<Side, Error> {
    let mut runs = Vec::new();
    for f in files_for(spec, cwd, dir)? {
        let r = read(&f)?;
        let why = unfinished(&r, &f);
        runs.push((r, why));
    }
    runs.sort_by(|(a, _), (b, _)| {
        (&a.manifest.started_at, &a.manifest.run_id).cmp(&(&b.manifest.started_at, &b.manifest.run_id))
    });
    // A run that a later run on this side resumed is finished by it: the
    // resume's own ending is what counts.
    let resumed: std::collections::BTreeSet<String> =
        runs.iter().filter_map(|(r, _)| r.manifest.resumes.clone()).collect();
    let mut side = Side {
        spec: spec.to_string(),
        manifests: Vec::new(),
        records: BTreeMap::new(),
        rows: BTreeMap::new(),
        row_order: Vec::new(),
        unfinished: Vec::new(),
    };
    for (Read { manifest, cases, .. }, why) in runs {
        for c in cases {
            let key = (c.arm.clone(), c.id.clone());
            let rows = rows_of(&c, &manifest);
            for r in &rows {
                if !side.row_order.contains(r) {
                    side.row_order.push(r.clone());
                }
            }
            side.rows.insert(key.clone(), rows);
            side.records.entry(key).or_default().push((manifest.run_id.clone(), c));
        }
        side.unfinished.extend(why.filter(|_| !resumed.contains(&manifest.run_id)));
        side.manifests.push(manifest);
    }
    Ok(side)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_built_in_case_feeds_the_contracts_rows_and_another_its_capitalised_tags() {
        // A built-in instrument: only its own rows in the contract count,
        // whatever their case.
        assert_eq!(row_tags("a-bench", &tags(&["Agent tasks", "a-tool", "Kind"])), tags(&["Agent tasks"]));
        assert_eq!(row_tags("a-bench", &tags(&["Prose speed"])), tags(&[]));
        // Outside the contract, the convention: rows are capitalised titles.
        assert_eq!(row_tags("capitals", &tags(&["Capitals", "geo"])), tags(&["Capitals"]));
    }
}
