//! `campaign --plan`: configurations × suites with their case counts and,
//! where earlier measurements of the same configuration and suite exist,
//! how long each step took then, per case, and the launch to healthy;
//! the total. Nothing is launched.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use sparktest_record::reader::{self, File, Unread};

use super::file::Campaign;
use crate::config::Config;
use crate::error::Error;
use sparktest_contract::campaign::{self as names, INSTRUMENT};

/// Seconds per case and launch seconds seen in earlier runs, by target
/// (configuration) name.
#[derive(Debug, Default)]
pub struct History {
    /// (target, suite) → (seconds, cases, runs) summed over finished runs.
    per_case: BTreeMap<(String, String), (f64, u64, u64)>,
    /// target → launch seconds seen.
    launch: BTreeMap<String, Vec<f64>>,
    /// suite → the latest finished run of it on this host, any target:
    /// (started at, target, seconds per case), what a step never run here
    /// before is estimated by.
    nearest: BTreeMap<String, (String, String, f64)>,
}

impl History {
    /// Every measurement file of a folder, as far as each is whole.
    pub fn read(dir: &Path) -> History {
        let mut h = History::default();
        let here = crate::hostinfo::snapshot().hostname;
        for path in reader::list(dir).unwrap_or_default() {
            let Ok(file) = File::<Unread>::read(&path) else { continue };
            let run = file.run;
            let target = run.manifest.target.name.clone();
            if run.manifest.suite.name == INSTRUMENT {
                let secs = run
                    .cases
                    .iter()
                    .filter(|c| names::LAUNCH.holds(&c.case) && c.outcome == sparktest_record::Outcome::Pass)
                    .filter_map(|c| sparktest_rows::metric(c, names::LAUNCH_SECS.name()));
                h.launch.entry(target).or_default().extend(secs);
                continue;
            }
            let (Some(summary), false) = (&run.summary, run.cases.is_empty()) else { continue };
            let suite = run.manifest.suite.name.clone();
            if run.manifest.client_host.hostname == here {
                let per = summary.seconds / run.cases.len() as f64;
                let latest = (run.manifest.started_at.clone(), target.clone(), per);
                let e = h.nearest.entry(suite.clone()).or_insert_with(|| latest.clone());
                if latest.0 > e.0 {
                    *e = latest;
                }
            }
            let e = h.per_case.entry((target, suite)).or_default();
            e.0 += summary.seconds;
            e.1 += run.cases.len() as u64;
            e.2 += 1;
        }
        h
    }

    /// Seconds per case of this suite on this target, from earlier runs;
    /// else on this host's latest run of the suite on another target
    /// (named, so the estimate says what it stands on).
    pub fn per_case_or_nearest(&self, target: &str, suite: &str) -> Option<(f64, Option<&str>)> {
        if let Some(s) = self.per_case(target, suite) {
            return Some((s, None));
        }
        self.nearest.get(suite).map(|(_, t, s)| (*s, Some(t.as_str())))
    }

    /// Seconds per case of this suite on this target, from earlier runs.
    pub fn per_case(&self, target: &str, suite: &str) -> Option<f64> {
        self.per_case.get(&(target.to_string(), suite.to_string())).filter(|e| e.1 > 0).map(|e| e.0 / e.1 as f64)
    }

    /// Mean seconds of a whole run of this suite on this target.
    pub fn per_run(&self, target: &str, suite: &str) -> Option<f64> {
        self.per_case.get(&(target.to_string(), suite.to_string())).filter(|e| e.2 > 0).map(|e| e.0 / e.2 as f64)
    }

    /// Median launch seconds of this target, from earlier campaigns.
    pub fn launch(&self, target: &str) -> Option<f64> {
        let mut v = self.launch.get(target)?.clone();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied()
    }
}

/// A duration estimate in words: `~40 s`, `~3.5 min`, `~2.1 h`; never a
/// `~0.0 min` that says nothing.
pub fn about(secs: f64) -> String {
    match secs {
        s if s < 90.0 => format!("~{:.0} s", s.max(1.0)),
        s if s < 5400.0 => format!("~{:.1} min", s / 60.0),
        s => format!("~{:.1} h", s / 3600.0),
    }
}

/// `n step` or `n steps`.
pub fn steps_word(n: usize) -> String {
    format!("{n} step{}", if n == 1 { "" } else { "s" })
}

/// Whether an earlier run of the campaign finished this suite of a
/// configuration, by the configuration's journal (it ran its course, or a
/// failed gate skipped it): what a resume keeps.
pub fn finished(done: Option<&super::journal::Read>, suite: &str) -> bool {
    use super::journal::{Skip, State};
    done.and_then(|d| d.suite(suite))
        .is_some_and(|s| s.state == State::Done || (s.state == State::Skipped && s.skip == Some(Skip::Gate)))
}

/// Print the plan on stdout: with `done` (`--plan --resume ID`: every
/// configuration's journal), only what is left. Returns the exit code.
pub fn print(
    campaign: &Campaign,
    config: &Config,
    mine: &[String],
    dir: &Path,
    done: &BTreeMap<String, super::journal::Read>,
) -> Result<i32, Error> {
    let history = History::read(dir);
    let session = crate::runner::Session::new(config.clone())?;
    let mut counts = BTreeMap::new();
    for s in &campaign.suites {
        counts.insert(s.suite.clone(), session.count_cases(&s.suite)?);
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "campaign {}: {} of {} configurations × {} suites{}{}",
        campaign.name,
        mine.len(),
        campaign.configurations.len(),
        campaign.suites.len(),
        if campaign.suites.iter().any(|s| s.gate) { " (the gate first)" } else { "" },
        if campaign.description.is_empty() { String::new() } else { format!(" — {}", campaign.description) }
    );
    if !done.is_empty() {
        let _ = writeln!(out, "resuming: what the configurations' journals say is finished is left out");
    }
    let mut total = 0.0;
    let mut unknown = 0;
    let mut steps = 0;
    for name in mine {
        let c = campaign.configurations.iter().find(|c| &c.name == name).expect("a configuration of the campaign");
        let left: Vec<&super::file::SuiteStep> =
            campaign.suites.iter().filter(|s| !finished(done.get(name), &s.suite)).collect();
        if left.is_empty() {
            let _ = writeln!(out, "\n{name}: finished earlier, not launched again");
            continue;
        }
        let varied: Vec<String> = c.varied.iter().map(|(f, v)| format!("{f} {v}")).collect();
        let _ = writeln!(
            out,
            "\n{name} (target {}{}){}",
            c.target,
            if varied.is_empty() { String::new() } else { format!("; grid: {}", varied.join(", ")) },
            c.label.as_deref().map_or(String::new(), |l| format!(" label {l:?}"))
        );
        steps += 1;
        match history.launch(name) {
            Some(s) => {
                total += s;
                let _ = writeln!(out, "  launch                     {} (median of earlier launches)", about(s));
            }
            None => {
                unknown += 1;
                let _ = writeln!(out, "  launch                     unknown: no earlier launch of it to go by");
            }
        }
        for s in left {
            steps += 1;
            let cases = counts[&s.suite] * s.repeat as usize;
            let estimate = history.per_case_or_nearest(name, &s.name).map(|(spc, on)| (spc * cases as f64, on));
            let _ = writeln!(
                out,
                "  {:<26} {cases:>5} {}{}{}  {}",
                s.name,
                if cases == 1 { "case " } else { "cases" },
                if s.repeat > 1 { format!(" ({} repeats)", s.repeat) } else { String::new() },
                if s.gate { ", the gate" } else { "" },
                match estimate {
                    Some((e, on)) => {
                        total += e;
                        match on {
                            None => about(e),
                            Some(t) => {
                                format!("{} (by its cases at the pace of {t}'s latest run here)", about(e))
                            }
                        }
                    }
                    None => {
                        unknown += 1;
                        "unknown: no earlier run of this suite on this box to go by".into()
                    }
                }
            );
        }
    }
    let estimate = match (unknown, steps) {
        (_, 0) => "nothing is left".to_string(),
        (u, s) if u == s => "unknown (no earlier run on this box to go by)".to_string(),
        (0, _) => about(total),
        (u, _) => format!("{}, plus {} with no earlier run to go by", about(total), steps_word(u)),
    };
    let _ = writeln!(out, "\nestimated: {estimate}; nothing was launched");
    print!("{out}");
    Ok(sparktest_record::exit_code::OK)
}
