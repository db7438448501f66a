//! The measurements folder, as the board, `diff` and `show` read it: its
//! measurement files listed, the index of what each holds ([`index`]),
//! and what selection reads of each run ([`Facts`]).

use std::path::{Path, PathBuf};

use crate::error::Error;

pub mod index;

pub use index::{path_for as index_path, runs_in};

/// What selection reads of one file's manifest.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Facts {
    /// The run's id.
    pub run_id: String,
    /// When it started (RFC 3339, UTC).
    pub started_at: String,
    /// Its campaign's id.
    pub campaign: Option<String>,
    /// The run it resumes.
    pub resumes: Option<String>,
    /// Its partition's run group, or its repeat group.
    pub groups: Vec<String>,
}

/// The measurement files (`*.jsonl`) of a folder, sorted by name: what the
/// board and `diff` both read ([`sparktest_record::reader::list`]).
pub fn measurement_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    sparktest_record::reader::list(dir)
        .map_err(|e| Error::setup(format!("failed to read measurements folder {}: {e}", dir.display())))
}

/// `f` over `items` on every core, the results in the items' order.
pub fn on_every_core<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = items.len().div_ceil(cores).max(1);
    std::thread::scope(|s| {
        let parts: Vec<_> = items.chunks(chunk).map(|c| s.spawn(|| c.iter().map(&f).collect::<Vec<R>>())).collect();
        parts.into_iter().flat_map(|p| p.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    })
}
