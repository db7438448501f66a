//! The runner's own tally of a run: counts by outcome, what did not pass
//! (for a gate), and the sums behind each instrument's efficiency readout.
//! It watches the finished cases as a sink does; the summary line is made
//! from it.

use std::sync::Mutex;

use sparktest_record::{Efficiency, InstrumentSummary, Outcome};

use crate::error::Error;
use crate::events::{Event, Sink};

/// Cases by outcome.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// Passed.
    pub passed: u64,
    /// Failed.
    pub failed: u64,
    /// Lost.
    pub lost: u64,
    /// Not applicable.
    pub not_applicable: u64,
    /// Interrupted by a stop signal.
    pub interrupted: u64,
}

impl Counts {
    fn add(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Pass => self.passed += 1,
            Outcome::Fail => self.failed += 1,
            Outcome::Lost => self.lost += 1,
            Outcome::NotApplicable => self.not_applicable += 1,
            Outcome::Interrupted => self.interrupted += 1,
        }
    }

    /// Every case counted.
    pub fn total(&self) -> u64 {
        self.passed + self.failed + self.lost + self.not_applicable + self.interrupted
    }
}

/// What the run's finished cases add up to.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    /// Over all cases.
    pub counts: Counts,
    /// Cases that did not pass.
    pub not_passed: Vec<sparktest_record::GateFailure>,
    pub(crate) efficiency: Efficiency,
}

impl Tally {
    fn add(&mut self, record: &sparktest_record::CaseRecord) {
        self.counts.add(record.outcome);
        self.not_passed.extend(sparktest_record::GateFailure::of(record));
        self.efficiency.add(record);
    }

    /// The efficiency readout per instrument.
    pub fn instruments(&self) -> Vec<InstrumentSummary> {
        self.efficiency.summaries()
    }
}

/// The tally as a sink.
#[derive(Default)]
pub struct TallySink(Mutex<Tally>);

impl TallySink {
    /// The tally now.
    pub fn tally(&self) -> Tally {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl Sink for TallySink {
    fn event(&self, event: &Event) -> Result<(), Error> {
        if let Event::CaseFinished(f) = event {
            self.0.lock().unwrap_or_else(|p| p.into_inner()).add(&f.record);
        }
        Ok(())
    }
}
