//! The harness's error: a kind that maps to an exit code, and a message with
//! its context (file, case, target).

use sparktest_record::exit_code;

/// What went wrong, by who has to act on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Configuration or suite invalid, or suite data not matching pins.
    Setup,
    /// Target not launched, not reachable, or serving another model.
    Target,
    /// An instrument could not be built, loaded or listed.
    Plugin,
    /// A measurement file could not be written.
    Io,
}

impl ErrorKind {
    /// The documented process exit code.
    pub fn exit_code(self) -> i32 {
        match self {
            ErrorKind::Setup => exit_code::SETUP,
            ErrorKind::Target => exit_code::TARGET,
            ErrorKind::Plugin => exit_code::PLUGIN,
            ErrorKind::Io => exit_code::IO,
        }
    }
}

/// An error that stops a run before or between cases.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    /// Which kind.
    pub kind: ErrorKind,
    /// Lower-case, with its context: "failed to … (file, case …)".
    pub message: String,
}

impl Error {
    /// An error of this kind.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error { kind, message: message.into() }
    }

    /// A refused configuration, command line or input file (exit 3).
    pub fn setup(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Setup, message)
    }

    /// A file or folder that could not be read or written, or a record
    /// that could not be encoded for it (exit 6): `failed to {what}: {e}`,
    /// `what` saying what and where ("write /tmp/x.jsonl").
    pub fn io(what: impl std::fmt::Display, e: impl std::fmt::Display) -> Self {
        Error::new(ErrorKind::Io, format!("failed to {what}: {e}"))
    }
}
