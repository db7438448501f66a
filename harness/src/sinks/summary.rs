//! The terminal summary: counts by outcome, the efficiency readout per
//! instrument, the gate's verdict, why a run stopped, printed from the
//! run's summary line (the runner keeps the tally, `runner::tally`).

use std::path::PathBuf;

use sparktest_record::Summary;

use crate::error::Error;
use crate::events::{Event, Sink};

/// The last lines on stderr: the efficiency readout, the counts, the gate,
/// and why the run stopped early.
pub struct TerminalSummary {
    /// Where the measurement file is.
    pub file: PathBuf,
    /// The suite's name, for the gate line.
    pub suite: String,
}

impl Sink for TerminalSummary {
    fn event(&self, event: &Event) -> Result<(), Error> {
        let Event::RunFinished(s) = event else {
            return Ok(());
        };
        print_summary(s, &self.file, &self.suite);
        Ok(())
    }
}

fn print_summary(s: &Summary, file: &std::path::Path, suite: &str) {
    for i in &s.instruments {
        crate::warn_line!(
            "sparktest: {}: {}/{} correct, {} lost, {:.2} s per case, {} output tokens per correct answer, harness {:.1} ms per case",
            i.name,
            i.correct,
            i.given,
            i.lost,
            i.mean_seconds,
            i.output_tokens_per_correct.map_or("n/a".to_string(), |n| format!("{n:.0}")),
            i.mean_harness_seconds * 1000.0
        );
    }
    if let Some(signal) = &s.interrupted {
        crate::warn_line!(
            "sparktest: the run was interrupted by {signal}: {} case(s) in flight recorded as interrupted; `--resume` runs the rest",
            s.interrupted_cases
        );
    } else if let Some(why) = &s.stopped {
        crate::warn_line!("sparktest: the run stopped early: {why}");
    }
    crate::warn_line!(
        "sparktest: {} passed, {} failed, {} lost, {} not applicable{}; measurements in {}",
        s.passed,
        s.failed,
        s.lost,
        s.not_applicable,
        if s.interrupted_cases > 0 { format!(", {} interrupted", s.interrupted_cases) } else { String::new() },
        file.display()
    );
    if let Some(g) = &s.gate {
        if g.passed {
            crate::warn_line!("sparktest: gate {suite}: PASSED, all {} checks passed", s.passed + s.not_applicable);
        } else {
            crate::warn_line!("sparktest: gate {suite}: FAILED, {} checks did not pass:", g.failing.len());
            for f in &g.failing {
                crate::warn_line!("sparktest:   {f}");
            }
        }
    }
}
