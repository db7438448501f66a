//! What the reader ([`crate::reader`]) says of a line it cannot read, and
//! the rule for a file's first line.

use crate::{FORMAT_VERSION, Line};

/// Why a measurement file could not be read.
#[derive(Debug)]
pub struct ReadError {
    /// 1-based line number.
    pub line: usize,
    /// What was wrong.
    pub message: String,
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ReadError {}

/// A file's first line must be a manifest of a major version this crate
/// reads.
pub(crate) fn first_line<C>(line: &Line<C>, at: usize) -> Result<(), ReadError> {
    match line {
        Line::Manifest(m) if major(&m.format_version) == major(FORMAT_VERSION) => Ok(()),
        Line::Manifest(m) => Err(ReadError {
            line: at,
            message: format!("format version {} is not readable by this version ({FORMAT_VERSION})", m.format_version),
        }),
        _ => Err(ReadError { line: at, message: "the first line is not a manifest".into() }),
    }
}

fn major(version: &str) -> &str {
    version.split('.').next().unwrap_or(version)
}
