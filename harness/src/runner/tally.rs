//! The runner's own tally of a run: counts by outcome, what did not pass
//! (for a gate), and the sums behind each instrument's efficiency readout.
//! It watches the finished cases as a sink does; the summary line is made
//! from it.

use std::collections::BTreeMap;
use std::sync::Mutex;

use sparktest_record::{InstrumentSummary, Outcome};

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

#[derive(Debug, Default, Clone)]
pub(crate) struct Sums {
    counts: Counts,
    seconds: f64,
    harness_seconds: f64,
    completion_tokens: u64,
    counted_tokens: bool,
}

/// What the run's finished cases add up to.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    /// Over all cases.
    pub counts: Counts,
    /// Cases that did not pass.
    pub not_passed: Vec<sparktest_record::GateFailure>,
    pub(crate) per_instrument: BTreeMap<String, Sums>,
}

impl Tally {
    fn add(&mut self, record: &sparktest_record::CaseRecord) {
        self.counts.add(record.outcome);
        self.not_passed.extend(sparktest_record::GateFailure::of(record));
        let sums = self.per_instrument.entry(record.instrument.clone()).or_default();
        sums.counts.add(record.outcome);
        sums.seconds += record.seconds;
        sums.harness_seconds += (record.seconds - record.endpoint_seconds).max(0.0);
        if let Some(n) = record.completion_tokens {
            sums.completion_tokens += n;
            sums.counted_tokens = true;
        }
    }

    /// The efficiency readout per instrument.
    pub fn instruments(&self) -> Vec<InstrumentSummary> {
        self.per_instrument
            .iter()
            .map(|(name, s)| {
                let given = s.counts.total() - s.counts.interrupted;
                let per = |x: f64| if given == 0 { 0.0 } else { x / given as f64 };
                InstrumentSummary {
                    name: name.clone(),
                    given,
                    correct: s.counts.passed,
                    failed: s.counts.failed,
                    lost: s.counts.lost,
                    not_applicable: s.counts.not_applicable,
                    mean_seconds: per(s.seconds),
                    output_tokens_per_correct: (s.counts.passed > 0 && s.counted_tokens)
                        .then(|| s.completion_tokens as f64 / s.counts.passed as f64),
                    mean_harness_seconds: per(s.harness_seconds),
                }
            })
            .collect()
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
