//! A run read back through the runs it resumes: what `--resume` and
//! `show` read.

use std::path::Path;

use serde::de::DeserializeOwned;

use super::{File, FileError, FileErrorKind, Run, merge};
use crate::{CallRecord, Manifest, ReadError};

/// A run with every run it resumed in turn, read as one.
#[derive(Debug)]
pub struct Chain<C = CallRecord> {
    /// The manifest of the run asked for (the newest of the chain).
    pub newest: Manifest,
    /// The chain as one run, each case once (its later record wins), its
    /// summary the newest's recounted over the whole: what the run came to.
    pub run: Run<C>,
}

/// Read `<dir>/<run_id>.jsonl` and the runs it resumes, back to the first
/// (a damaged end is kept: that is what a killed run leaves), as one run.
/// A run id that is not a plain file name, or a file that cannot be read,
/// is an error naming it; a loop of resumes ends where it repeats.
pub fn chain<C: DeserializeOwned + Clone>(dir: &Path, run_id: &str) -> Result<Chain<C>, FileError> {
    let mut runs: Vec<Run<C>> = Vec::new();
    let mut next = Some(run_id.to_string());
    while let Some(id) = next.take() {
        if runs.iter().any(|r| r.manifest.run_id == id) || runs.len() > 1000 {
            break;
        }
        let path = dir.join(format!("{id}.jsonl"));
        if id.is_empty() || id.contains(['/', '\\']) || id.starts_with('.') {
            return Err(FileError {
                path,
                kind: FileErrorKind::Format(ReadError {
                    line: 0,
                    message: "not a run id (a file name in the measurements folder)".into(),
                }),
            });
        }
        let file = File::<C>::read(&path)?;
        next = file.run.manifest.resumes.clone();
        runs.push(file.run);
    }
    let newest = runs.first().map(|r| r.manifest.clone()).expect("the run asked for was read");
    let root = runs.last().map(|r| r.manifest.run_id.clone()).unwrap_or_default();
    let merged = merge(runs);
    let run = merged.runs.into_iter().find(|r| r.manifest.run_id == root).expect("the chain's first run is kept");
    Ok(Chain { newest, run })
}
