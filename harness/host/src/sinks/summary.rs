//! The terminal summary: counts by outcome, the efficiency readout per
//! instrument, the gate's verdict, why a run stopped, printed from the
//! run's summary line (the runner keeps the tally, `runner::tally`); then
//! each board row the run fed, built-in or declared by the suite, its
//! figure computed by `sparktest-rows` over this run's records exactly as
//! the board computes it (the same raw figure, interval and coverage).

use std::path::PathBuf;
use std::sync::Mutex;

use sparktest_record::reader::{Run, merge};
use sparktest_record::{CaseRecord, InstrumentSummary, Summary};
use sparktest_rows::cell::{Figure, Missing};
use sparktest_rows::coded::{self, Compute};
use sparktest_rows::run::{Call, Runs};

use crate::error::Error;
use crate::events::{Event, Sink};

/// Prints the run's summary when it finishes.
pub struct TerminalSummary {
    /// The measurement file, named in the last line.
    pub file: PathBuf,
    /// The suite, named in the gate's line.
    pub suite: String,
    /// The run as the board reads it (each call reduced to its status),
    /// from its manifest on.
    run: Mutex<Option<Run<Call>>>,
}

impl TerminalSummary {
    /// A summary of the run writing `file`, of `suite`.
    pub fn new(file: PathBuf, suite: String) -> Self {
        TerminalSummary { file, suite, run: Mutex::default() }
    }
}

/// A record as the board reads it: each call reduced to its status.
fn as_read(c: &CaseRecord) -> CaseRecord<Call> {
    CaseRecord {
        id: c.id.clone(),
        instrument: c.instrument.clone(),
        case: c.case.clone(),
        tags: c.tags.clone(),
        outcome: c.outcome,
        reason: c.reason.clone(),
        metrics: c.metrics.clone(),
        notes: c.notes.clone(),
        started_at: c.started_at.clone(),
        seconds: c.seconds,
        endpoint_seconds: c.endpoint_seconds,
        calls: c.calls.iter().map(|k| Call { status: k.status }).collect(),
        prompt_tokens: c.prompt_tokens,
        completion_tokens: c.completion_tokens,
        transcript_sha256: c.transcript_sha256.clone(),
        snapshots: Vec::new(),
        arm: c.arm.clone(),
        latency: None,
    }
}

/// One line per board row the run fed: the board's raw figure, its
/// interval and what it covers, or N/A with the reason. A built-in row no
/// case of the run fed is left out; a row the suite declares is said
/// either way.
fn row_lines(run: Run<Call>) -> Vec<String> {
    let runs = Runs::new(merge(vec![run]));
    let Some(col) = runs.iter().next().map(|r| r.column.clone()) else { return Vec::new() };
    coded::all(&runs)
        .iter()
        .filter_map(|def| {
            let words = match def.figure(&runs, &col) {
                Ok(f) => figure_words(&f),
                Err(Missing::NotMeasured) if matches!(def.compute, Compute::Code(_)) => return None,
                Err(Missing::NotMeasured) => "N/A: no case of the row ran".into(),
                Err(Missing::Because { reason, .. } | Missing::Incapable { reason, .. }) => format!("N/A: {reason}"),
            };
            Some(format!("sparktest: row {}: {words}", def.title))
        })
        .collect()
}

fn figure_words(f: &Figure) -> String {
    let mut words = f.raw.clone();
    if let Some(s) = f.spread.as_ref().filter(|s| s.interval().is_some()) {
        words.push_str(&format!(" ({})", s.words()));
    }
    if let Some(partial) = &f.partial {
        words.push_str(&format!("; {partial}"));
    }
    words
}

impl Sink for TerminalSummary {
    fn event(&self, event: &Event) -> Result<(), Error> {
        let mut run = self.run.lock().unwrap_or_else(|p| p.into_inner());
        match event {
            // The run as the board's reader would give it, its summary not yet come.
            Event::RunStarted { manifest, .. } => *run = Some(Run::new((**manifest).clone())),
            Event::CaseFinished(f) => {
                if let Some(run) = run.as_mut() {
                    run.cases.push(as_read(&f.record));
                }
            }
            Event::RunFinished(s) => {
                let rows = match run.take() {
                    Some(mut r) => {
                        r.summary = Some((**s).clone());
                        row_lines(r)
                    }
                    None => Vec::new(),
                };
                print_summary(s, &rows, &self.file, &self.suite);
            }
            _ => {}
        }
        Ok(())
    }
}

/// One instrument's efficiency readout: pass/fail, its output tokens per
/// correct answer, then its times. Its row's figure follows, on a line of
/// its own ([`row_lines`]).
fn readout(i: &InstrumentSummary) -> String {
    format!(
        "sparktest: {}: {}/{} correct, {} lost, {} output tokens per correct answer, {:.2} s per case, harness {:.1} ms per case",
        i.name,
        i.correct,
        i.given,
        i.lost,
        i.output_tokens_per_correct.map_or("n/a".to_string(), |n| format!("{n:.0}")),
        i.mean_seconds,
        i.mean_harness_seconds * 1000.0
    )
}

fn print_summary(s: &Summary, rows: &[String], file: &std::path::Path, suite: &str) {
    for i in &s.instruments {
        crate::warn_line!("{}", readout(i));
    }
    for line in rows {
        crate::warn_line!("{line}");
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
