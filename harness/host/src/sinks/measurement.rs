//! The measurement file: one JSON Lines file per run, written as the run
//! goes (`docs/measurement-file.md`).
//!
//! Each line is flushed to the operating system as soon as it is written, so
//! a crash or kill of the harness loses at most the case in flight; the file
//! is created new (never over another run's) and synced to disk when the run
//! ends.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sparktest_record::Line;

use crate::error::{Error, ErrorKind};
use crate::events::{Event, Sink};
use crate::redact::Redactor;

/// Appends lines to a measurement file.
pub struct MeasurementWriter {
    path: PathBuf,
    out: Mutex<BufWriter<File>>,
    redactor: Redactor,
}

impl MeasurementWriter {
    /// Create `<dir>/<run_id>.jsonl`; an existing file is never replaced.
    pub fn create(dir: &Path, run_id: &str) -> Result<Self, Error> {
        let io = |what: String| Error::new(ErrorKind::Io, what);
        std::fs::create_dir_all(dir).map_err(|e| io(format!("failed to create {}: {e}", dir.display())))?;
        let path = dir.join(format!("{run_id}.jsonl"));
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| io(format!("failed to create {}: {e}", path.display())))?;
        Ok(MeasurementWriter { path, out: Mutex::new(BufWriter::new(file)), redactor: Redactor::default() })
    }

    /// Keep these secrets out of every line written.
    pub fn redacting(mut self, redactor: Redactor) -> Self {
        self.redactor = redactor;
        self
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Write one line and flush it.
    pub fn write(&self, line: &Line) -> Result<(), Error> {
        let encode = |e: serde_json::Error| Error::io("encode a record", e);
        let json = self.redactor.to_json(line, false).map_err(encode)?;
        let mut out = self.out.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        writeln!(out, "{json}")
            .and_then(|()| out.flush())
            .map_err(|e| Error::io(format_args!("write {}", self.path.display()), e))
    }

    /// Flush and sync the file to disk.
    pub fn sync(&self) -> Result<(), Error> {
        let mut out = self.out.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        out.flush()
            .and_then(|()| out.get_ref().sync_all())
            .map_err(|e| Error::io(format_args!("sync {}", self.path.display()), e))
    }
}

impl Sink for MeasurementWriter {
    fn event(&self, event: &Event) -> Result<(), Error> {
        match event {
            Event::RunStarted { manifest, .. } => self.write(&Line::Manifest((**manifest).clone())),
            Event::CaseStarted => Ok(()),
            Event::CaseFinished(f) => self.write(&Line::Case(f.record.clone())),
            Event::RunFinished(summary) => {
                self.write(&Line::Summary((**summary).clone()))?;
                self.sync()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_never_written_over() {
        let dir = tempfile::tempdir().unwrap();
        let _first = MeasurementWriter::create(dir.path(), "run").unwrap();
        let err = MeasurementWriter::create(dir.path(), "run").err().unwrap();
        assert_eq!(err.kind, ErrorKind::Io);
        assert!(err.message.contains("run.jsonl"), "{err}");
    }
}
