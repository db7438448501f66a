//! Progress on long runs (indicatif): cases done of the total, pass / fail
//! / lost so far, elapsed and estimated remaining. Drawn on stderr only
//! when it is a terminal and libtest's output is not JSON; never in files.

use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use sparktest_record::Outcome;

use crate::error::Error;
use crate::events::{Event, Sink};
use crate::tally::Counts;

/// A progress bar over the run.
pub struct ProgressSink {
    bar: ProgressBar,
    counts: Mutex<Counts>,
}

impl ProgressSink {
    /// A bar drawn on stderr (hidden when stderr is not a terminal).
    pub fn new() -> Self {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template(
            "{prefix} [{bar:30}] {pos}/{len} cases · {msg} · {elapsed} elapsed, ~{eta} left",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
        bar.set_style(style);
        bar.set_prefix("sparktest");
        ProgressSink { bar, counts: Mutex::new(Counts::default()) }
    }

    /// Whether a bar belongs on this terminal: stderr is one, and libtest
    /// prints human output (JSON consumers read stdout whole).
    pub fn wanted(json_output: bool) -> bool {
        use std::io::IsTerminal;
        !json_output && std::io::stderr().is_terminal()
    }
}

impl Default for ProgressSink {
    fn default() -> Self {
        Self::new()
    }
}

impl Sink for ProgressSink {
    fn event(&self, event: &Event) -> Result<(), Error> {
        match event {
            Event::RunStarted { cases, .. } => {
                self.bar.set_length(*cases as u64);
                self.bar.set_message("0 pass · 0 fail · 0 lost");
            }
            Event::CaseStarted => {}
            Event::CaseFinished(f) => {
                let mut c = self.counts.lock().unwrap_or_else(|p| p.into_inner());
                match f.record.outcome {
                    Outcome::Pass => c.passed += 1,
                    Outcome::Fail => c.failed += 1,
                    Outcome::Lost => c.lost += 1,
                    Outcome::NotApplicable | Outcome::Interrupted => c.not_applicable += 1,
                }
                self.bar.set_message(format!("{} pass · {} fail · {} lost", c.passed, c.failed, c.lost));
                self.bar.inc(1);
            }
            Event::RunFinished(_) => self.bar.finish_and_clear(),
        }
        Ok(())
    }
}
