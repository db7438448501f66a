//! What every configuration's steps share: the campaign, its project,
//! its measurements folder and its clock.

use std::path::Path;
use std::time::Instant;

use super::file::Campaign;
use super::journal;

/// What every configuration's steps share.
pub struct Context<'a> {
    /// The campaign.
    pub campaign: &'a Campaign,
    /// Its id.
    pub id: &'a str,
    /// The measurements folder.
    pub dir: &'a Path,
    /// This configuration's place: k of N.
    pub index: (usize, usize),
    /// When the campaign (or this resume of it) started.
    pub started: Instant,
    /// This box's share.
    pub partition: Option<&'a str>,
    /// This configuration's journal read back, when an earlier process
    /// took it up (a resume, a requeued task).
    pub done: Option<&'a journal::Read>,
    /// Earlier runs in the folder, for the time left.
    pub history: &'a super::plan::History,
    /// The configurations this box runs, in order.
    pub mine: &'a [String],
    /// A resume given `--force` (the campaign file changed, or a damaged
    /// journal line dropped).
    pub forced: bool,
    /// The batch job this process runs in (a Slurm array task).
    pub job: Option<&'a sparktest_record::JobRef>,
}

impl Context<'_> {
    /// What a launch of this configuration is, for its record: the
    /// campaign's first, or one a resume made (with `--force`).
    pub(super) fn launch_kind(&self) -> String {
        let kind = match (self.done.is_some(), self.forced) {
            (false, _) => "the campaign's launch".to_string(),
            (true, false) => format!("a resume's launch (campaign {} --resume)", self.id),
            (true, true) => format!("a forced resume's launch (campaign {} --resume --force)", self.id),
        };
        match self.job {
            Some(job) => format!("{kind}, {}", job.describe()),
            None => kind,
        }
    }

    /// What earlier runs say is left from suite `j` of configuration `k`
    /// (both 0-based) on: minutes, how many steps no earlier run tells, and
    /// how many steps there are.
    pub(super) fn remaining_from(&self, k: usize, j: usize) -> (f64, usize, usize) {
        let mut secs = 0.0;
        let mut unknown = 0;
        let mut steps = 0;
        for (ci, name) in self.mine.iter().enumerate().skip(k) {
            for (si, s) in self.campaign.suites.iter().enumerate() {
                if ci == k && si < j {
                    continue;
                }
                steps += 1;
                match self.history.per_run(name, &s.name) {
                    Some(x) => secs += x * f64::from(s.repeat),
                    None => unknown += 1,
                }
            }
            if ci > k {
                secs += self.history.launch(name).unwrap_or(0.0);
            }
        }
        (secs / 60.0, unknown, steps)
    }
}
