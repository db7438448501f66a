//! Transcripts beside the measurement file:
//! `<measurements>/transcripts/<transcript_sha256>.json`, keys redacted.

use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorKind};
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

    /// Where the transcript with this address is.
    pub fn path(measurements: &Path, sha256: &str) -> PathBuf {
        measurements.join("transcripts").join(format!("{sha256}.json"))
    }
}

impl Sink for TranscriptStore {
    fn event(&self, event: &Event) -> Result<(), Error> {
        let Event::CaseFinished(f) = event else { return Ok(()) };
        let Some(transcript) = &f.transcript else { return Ok(()) };
        let sha = &f.record.transcript_sha256;
        if sha.len() != 64 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(());
        }
        let path = self.dir.join(format!("{sha}.json"));
        if path.exists() {
            return Ok(());
        }
        let io = |e: std::io::Error| Error::new(ErrorKind::Io, format!("failed to write transcript {}: {e}", path.display()));
        std::fs::create_dir_all(&self.dir).map_err(io)?;
        let json = serde_json::to_string_pretty(&**transcript)
            .map_err(|e| Error::new(ErrorKind::Io, format!("failed to encode transcript {sha}: {e}")))?;
        // Written aside and renamed: a reader never sees half a file.
        let tmp = self.dir.join(format!(".{sha}.{}.tmp", std::process::id()));
        std::fs::write(&tmp, self.redactor.redact(&json)).map_err(io)?;
        std::fs::rename(&tmp, &path).map_err(io)
    }
}
