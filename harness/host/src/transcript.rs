//! Transcripts: every request and reply of a case, with timing, kept beside
//! the measurement file so a reply can be re-read after the run
//! (`cargo sparktest show RUN#CASE`).
//!
//! A transcript's address is the record's `transcript_sha256`: the sha256
//! of its exchanges *without* timing, so equal conversations hash equal
//! across runs. Two cases with equal exchanges share one file (the first
//! one's timing is kept; each record keeps its own call timings).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The format name written into every transcript.
pub const FORMAT: &str = "sparktest-transcript 1";

/// One case's exchanges.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Transcript {
    /// [`FORMAT`].
    pub format: String,
    /// Every call, in order.
    pub exchanges: Vec<Exchange>,
}

/// One call and what came back.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Exchange {
    /// `chat`, `complete`, `judge`, …
    pub kind: String,
    /// The request as the host built it.
    pub request: Value,
    /// The reply, without its timing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<Value>,
    /// Why there was no reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The reply's timing (client side, ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<Value>,
}

impl Default for Transcript {
    fn default() -> Self {
        Transcript { format: FORMAT.into(), exchanges: Vec::new() }
    }
}

/// Builds a transcript and its address as calls happen.
#[derive(Debug, Clone, Default)]
pub struct Recorder {
    transcript: Transcript,
    hash: Sha256,
}

impl Recorder {
    /// Add one exchange. `untimed` is the reply without timing (what the
    /// address covers).
    pub fn add<R: Serialize, T: Serialize, U: Serialize>(
        &mut self,
        kind: &str,
        request: &R,
        untimed: Result<&U, &str>,
        timing: Option<&T>,
    ) {
        let request = serde_json::to_value(request).unwrap_or(Value::Null);
        self.hash.update(kind.as_bytes());
        self.hash.update(serde_json::to_vec(&request).unwrap_or_default());
        let (reply, error) = match untimed {
            Ok(reply) => {
                let v = serde_json::to_value(reply).unwrap_or(Value::Null);
                self.hash.update(serde_json::to_vec(&v).unwrap_or_default());
                (Some(v), None)
            }
            Err(err) => {
                self.hash.update(err.as_bytes());
                (None, Some(err.to_string()))
            }
        };
        let timing = timing.and_then(|t| serde_json::to_value(t).ok());
        self.transcript.exchanges.push(Exchange { kind: kind.into(), request, reply, error, timing });
    }

    /// Hex sha256 of the exchanges without timing.
    pub fn sha256(&self) -> String {
        self.hash.clone().finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The transcript so far.
    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    /// Take the transcript out.
    pub fn into_transcript(self) -> Transcript {
        self.transcript
    }
}
