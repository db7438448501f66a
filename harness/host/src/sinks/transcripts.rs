//! Transcripts beside the measurement file:
//! `<measurements>/transcripts/<transcript_sha256>.json`, keys redacted.

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::events::{Event, Sink};
use crate::redact::Redactor;

/// Writes each case's transcript once, under its address.
pub struct TranscriptStore {
    dir: PathBuf,
    redactor: Redactor,
}

impl TranscriptStore {
    /// Transcripts go to `<measurements>/transcripts/`.
    pub fn new(measurements: &Path, redactor: Redactor) -> Self {
        TranscriptStore { dir: measurements.join("transcripts"), redactor }
    }

    /// Where the transcript with this address is. Addresses come from
    /// records (files, plugins): only a sha256 becomes a path, else None.
    pub fn path(measurements: &Path, sha256: &str) -> Option<PathBuf> {
        file_in(&Self::folder(measurements), sha256)
    }

    /// The folder of the transcripts beside these measurement files.
    pub fn folder(measurements: &Path) -> PathBuf {
        measurements.join("transcripts")
    }
}

fn file_in(dir: &Path, sha256: &str) -> Option<PathBuf> {
    let address = sha256.len() == 64 && sha256.bytes().all(|b| b.is_ascii_hexdigit());
    address.then(|| dir.join(format!("{sha256}.json")))
}

impl Sink for TranscriptStore {
    fn event(&self, event: &Event) -> Result<(), Error> {
        let Event::CaseFinished(f) = event else {
            return Ok(());
        };
        let Some(transcript) = &f.transcript else {
            return Ok(());
        };
        let sha = &f.record.transcript_sha256;
        let Some(path) = file_in(&self.dir, sha) else {
            return Ok(());
        };
        if path.exists() {
            return Ok(());
        }
        let io = |e: std::io::Error| Error::io(format_args!("write transcript {}", path.display()), e);
        std::fs::create_dir_all(&self.dir).map_err(io)?;
        let encode = |e: serde_json::Error| Error::io(format_args!("encode transcript {sha}"), e);
        let json = self.redactor.to_json(&**transcript, true).map_err(encode)?;
        // Written aside under a name no other writer uses, then renamed: a
        // reader never sees half a file. Equal conversations share an
        // address; whichever lands first stays.
        static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = self.dir.join(format!(".{sha}.{}.{n}.tmp", std::process::id()));
        std::fs::write(&tmp, json).map_err(io)?;
        if path.exists() {
            let _ = std::fs::remove_file(&tmp);
            return Ok(());
        }
        std::fs::rename(&tmp, &path).map_err(io)
    }
}
