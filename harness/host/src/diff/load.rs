//! The two sides of a diff: what `RUN_A` and `RUN_B` name (a run id, a run
//! group, a measurement file or a folder of them), read into records keyed
//! by case.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sparktest_record::reader::{self, File, Run};
use sparktest_record::{CallRecord, CaseRecord, Manifest};

use crate::error::Error;

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

/// The rows a case feeds, as the board groups records: a built-in
/// instrument's are its tags that are its rows in the contract
/// ([`sparktest_rows::coded::ROWS`]), then the rows its run's suite declares
/// that it feeds ([`sparktest_rows::feeds`]); a case of none is in the row
/// its instrument describes itself with, else its instrument's name.
pub fn rows_of(case: &CaseRecord, manifest: &Manifest) -> Vec<String> {
    let mut tagged = row_tags(&case.instrument, &case.tags);
    tagged.extend(
        manifest
            .rows
            .iter()
            .filter(|d| {
                sparktest_rows::check(d).is_ok()
                    && sparktest_rows::declared_by(d, &manifest.suite.name)
                    && sparktest_rows::feeds(d, case)
            })
            .map(|d| d.title.clone()),
    );
    if !tagged.is_empty() {
        return tagged;
    }
    let described = manifest.instruments.iter().find(|i| i.name == case.instrument).map(|i| i.row.clone());
    vec![described.filter(|r| !r.is_empty()).unwrap_or_else(|| case.instrument.clone())]
}

/// The tags of a case that are its instrument's rows in the contract.
fn row_tags(instrument: &str, tags: &[String]) -> Vec<String> {
    let is_row =
        |t: &String| sparktest_rows::coded::ROWS.iter().any(|r| r.instrument == instrument && r.title == t.as_str());
    tags.iter().filter(|t| is_row(t)).cloned().collect()
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
        let files = crate::measurements::measurement_files(&as_path)?;
        if files.is_empty() {
            return Err(Error::setup(format!("no measurement files (*.jsonl) in {}", as_path.display())));
        }
        return Ok(files);
    }
    let names_a_run = !spec.contains(['/', '\\']) && !spec.starts_with('.');
    if names_a_run && dir.is_dir() {
        // Looked up in the board's index: a folder of a year of runs is
        // not read again for each lookup.
        let (repeat, part) = (format!("repeat {spec}"), format!("partition {spec} "));
        let found: Vec<PathBuf> = crate::measurements::runs_in(dir)?
            .into_iter()
            .filter(|(_, f)| {
                let group = f.groups.iter().any(|g| *g == repeat || g.starts_with(&part));
                f.run_id == spec || f.resumes.as_deref() == Some(spec) || group
            })
            .map(|(path, _)| path)
            .collect();
        if !found.is_empty() {
            return Ok(found);
        }
    }
    Err(Error::setup(format!(
        "{spec:?} names no measurement file, folder, run id or run group (run ids and groups are looked up in {})",
        dir.display()
    )))
}

/// Read one side through the record crate's reader: the parts of a
/// partitioned run and a run with its resumes read as one, each case once
/// (its later record winning); the runs of a repeat group stay apart, each
/// record a sample.
pub fn read_side(spec: &str, cwd: &Path, dir: &Path) -> Result<Side, Error> {
    let mut runs = Vec::new();
    let mut manifests = Vec::new();
    let mut unfinished = Vec::new();
    for f in files_for(spec, cwd, dir)? {
        let file = File::<CallRecord>::read(&f).map_err(|e| Error::setup(e.to_string()))?;
        if let Some(d) = &file.damage {
            crate::warn_line!("sparktest: warning: {}: {d}; the records before it are used", f.display());
            unfinished.push(format!("{}: its file {} is damaged at {d}", file.run.manifest.run_id, f.display()));
        }
        manifests.push(file.run.manifest.clone());
        runs.push(file.run);
    }
    manifests.sort_by(|a, b| (&a.started_at, &a.run_id).cmp(&(&b.started_at, &b.run_id)));
    let merged = reader::merge(runs);
    let mut side = Side {
        spec: spec.to_string(),
        manifests,
        records: BTreeMap::new(),
        rows: BTreeMap::new(),
        row_order: Vec::new(),
        unfinished,
    };
    for run in merged.runs {
        // A run folded with its resumes is finished by the last of them.
        side.unfinished.extend(run.failed().map(|why| format!("{}: {why}", run.manifest.run_id)));
        let Run { manifest, cases, origin, .. } = run;
        for c in cases {
            let key = (c.arm.clone(), c.id.clone());
            let rows = rows_of(&c, &manifest);
            for r in &rows {
                if !side.row_order.contains(r) {
                    side.row_order.push(r.clone());
                }
            }
            side.rows.insert(key.clone(), rows);
            let from = origin.get(&c.id).unwrap_or(&manifest.run_id).clone();
            side.records.entry(key).or_default().push((from, c));
        }
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
    fn a_case_feeds_only_its_instruments_rows_in_the_contract() {
        assert_eq!(row_tags("a-bench", &tags(&["Agent tasks", "a-tool", "Kind"])), tags(&["Agent tasks"]));
        assert_eq!(row_tags("a-bench", &tags(&["Prose speed"])), tags(&[]));
        // Outside the contract no tag is a row: the instrument's own
        // description names it.
        assert_eq!(row_tags("capitals", &tags(&["Capitals", "geo"])), tags(&[]));
    }
}
