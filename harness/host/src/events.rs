//! One event stream for the whole run, fanned out to every sink (the
//! measurement file, the terminal summary, JUnit, progress, transcripts),
//! the way cargo-nextest's reporter takes `TestEvent`s.
//!
//! libtest-mimic drives the cases and prints libtest's own lines; each case
//! emits [`Event::CaseStarted`] and [`Event::CaseFinished`] from inside its
//! trial, and libtest's verdict is derived from the same record.

use std::sync::Arc;

use sparktest_record::{CaseRecord, Manifest, Summary};

use crate::error::Error;
use crate::transcript::Transcript;

/// Something that happened in a run, in the order it happened.
#[derive(Debug, Clone)]
pub enum Event {
    /// The run is about to start its first case.
    RunStarted {
        /// What is measured, where, with what.
        manifest: Box<Manifest>,
        /// Cases that will run (after filters, partition and resume).
        cases: usize,
    },
    /// A case began (its id comes with its record when it ends).
    CaseStarted,
    /// A case ended: its record and everything it exchanged.
    CaseFinished(Box<Finished>),
    /// The run ended; the summary is final.
    RunFinished(Box<Summary>),
}

/// A finished case.
#[derive(Debug, Clone)]
pub struct Finished {
    /// The record, as the measurement file keeps it.
    pub record: CaseRecord,
    /// Every request and reply, with timing (none for a case that never ran).
    pub transcript: Option<Arc<Transcript>>,
}

/// A consumer of run events.
pub trait Sink: Send + Sync {
    /// Take one event. An error on `CaseFinished` fails that case (its
    /// record was not kept); on the others it stops the run.
    fn event(&self, event: &Event) -> Result<(), Error>;
}

/// Every sink of a run.
#[derive(Clone, Default)]
pub struct Sinks(Vec<Arc<dyn Sink>>);

impl Sinks {
    /// Add a sink.
    pub fn push(&mut self, sink: Arc<dyn Sink>) {
        self.0.push(sink);
    }

    /// Give the event to every sink; the first error is returned after all
    /// have seen it.
    pub fn emit(&self, event: &Event) -> Result<(), Error> {
        let mut first = None;
        for sink in &self.0 {
            if let Err(err) = sink.event(event) {
                first.get_or_insert(err);
            }
        }
        first.map_or(Ok(()), Err)
    }
}
