//! How a campaign's configurations went: each suite's and each
//! configuration's outcome, the campaign's exit codes, and the tables and
//! summary it prints.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::file::Campaign;
use super::journal::{self, Counts, Memory, Phase, State};

/// How one suite of a configuration ended.
#[derive(Debug, Clone)]
pub struct SuiteOutcome {
    /// The suite.
    pub suite: String,
    /// How it stands.
    pub state: State,
    /// Its cases by outcome.
    pub counts: Option<Counts>,
    /// Minutes it took.
    pub minutes: f64,
    /// For the gate: whether it passed.
    pub gate: Option<bool>,
    /// Why it failed, was skipped or interrupted.
    pub reason: Option<String>,
    /// Whether an earlier run of the campaign did it (a resume skipped it).
    pub earlier: bool,
}

/// How one configuration went.
#[derive(Debug, Clone)]
pub struct ConfigOutcome {
    /// Its name.
    pub name: String,
    /// Seconds to healthy, or why the launch failed; None when nothing was
    /// left to launch for.
    pub launch: Option<Result<f64, String>>,
    /// Every suite, in order.
    pub suites: Vec<SuiteOutcome>,
    /// The memory its server held and gave back.
    pub memory: Option<Memory>,
    /// The signal that interrupted it.
    pub interrupted: Option<i32>,
    /// Why its server is gone, when it exited on its own.
    pub died: Option<String>,
}

impl ConfigOutcome {
    /// A configuration another process had taken up (its lock held): not
    /// run here, and said so.
    pub fn held_elsewhere(name: &str, why: &str) -> ConfigOutcome {
        ConfigOutcome {
            name: name.to_string(),
            launch: Some(Err(format!("not taken up here: {why}"))),
            suites: Vec::new(),
            memory: None,
            interrupted: None,
            died: None,
        }
    }
}

/// 0 when every case of every step passed or was not applicable; 101 when
/// any failed or was lost, a launch failed, a server kept its memory; 128 +
/// the signal when interrupted.
pub fn exit_code(results: &[ConfigOutcome], signal: Option<i32>) -> i32 {
    if let Some(s) = signal {
        return 128 + s;
    }
    let bad = results.iter().any(|r| {
        matches!(r.launch, Some(Err(_)))
            || r.died.is_some()
            || r.memory.is_some_and(|m| !m.released)
            || r.suites.iter().any(|s| {
                s.state == State::Failed || s.counts.is_some_and(|c| c.failed + c.lost > 0) || s.gate == Some(false)
            })
    });
    if bad { sparktest_record::exit_code::CASES_FAILED } else { sparktest_record::exit_code::OK }
}

/// The exit code of a Slurm array task (`--configuration` in a Slurm
/// array job): 0 when its configuration ran, every suite to its end or
/// skipped by the gate's verdict, whatever its cases' verdicts (the
/// journal, `campaign status` and the board keep them), since Slurm calls
/// a non-zero task FAILED, the word for a dead node. 4 when it could not
/// run its configuration (the launch failed, the server died or stopped
/// answering, a suite stopped before its end); 128 + the signal when
/// interrupted.
pub fn task_exit_code(results: &[ConfigOutcome], signal: Option<i32>) -> i32 {
    if let Some(s) = signal {
        return 128 + s;
    }
    let ran = |r: &ConfigOutcome| {
        !matches!(r.launch, Some(Err(_)))
            && r.died.is_none()
            && r.interrupted.is_none()
            && r.suites.iter().all(|s| !matches!(s.state, State::Failed | State::Interrupted | State::Started))
    };
    if results.iter().all(ran) { sparktest_record::exit_code::OK } else { sparktest_record::exit_code::TARGET }
}

/// The whole campaign's table, from every configuration's journal (each
/// suite as its last step left it): what `summary.md` holds, whichever box
/// or task wrote last.
pub fn summary(campaign: &Campaign, journals: &BTreeMap<String, journal::Read>) -> String {
    let mut outcomes = Vec::new();
    for c in &campaign.configurations {
        let Some(read) = journals.get(&c.name) else { continue };
        let last = |phase: Phase| read.steps.iter().rev().find(|s| s.phase == phase && s.state != State::Started);
        let launch = last(Phase::Launch).map(|s| match s.state {
            State::Done => Ok(s.seconds),
            _ => Err(s.reason.clone().unwrap_or_default()),
        });
        let suites = campaign
            .suites
            .iter()
            .filter_map(|x| {
                let s = read.suite(&x.suite)?;
                Some(SuiteOutcome {
                    suite: x.name.clone(),
                    state: s.state,
                    counts: s.counts,
                    minutes: s.seconds / 60.0,
                    gate: s.gate,
                    reason: s.reason.clone(),
                    earlier: false,
                })
            })
            .collect();
        let stop = last(Phase::Stop);
        outcomes.push(ConfigOutcome {
            name: c.name.clone(),
            launch,
            suites,
            memory: stop.and_then(|s| s.memory),
            interrupted: None,
            died: stop.and_then(|s| s.reason.clone()).filter(|r| r.starts_with("the server had died")),
        });
    }
    let all: Vec<String> = campaign.configurations.iter().map(|c| c.name.clone()).collect();
    table(campaign, &outcomes, &all)
}

/// The end-of-campaign table: configuration × suite.
pub fn table(campaign: &Campaign, results: &[ConfigOutcome], mine: &[String]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "\n# Campaign {}\n", campaign.name);
    let _ = writeln!(out, "| configuration | step | state | passed | failed | lost | n/a | minutes | gate | why |");
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|---|---|");
    let cell = |s: &str| s.replace('|', "\\|").replace('\n', " ");
    for r in results {
        let launch = match &r.launch {
            None => "done earlier".to_string(),
            Some(Ok(secs)) => format!("healthy in {secs:.1} s"),
            Some(Err(why)) => format!("FAILED: {}", cell(why)),
        };
        let _ = writeln!(out, "| {} | launch | {launch} | | | | | | | |", r.name);
        for s in &r.suites {
            let (p, f, l, n) = s.counts.map_or((String::new(), String::new(), String::new(), String::new()), |c| {
                (c.passed.to_string(), c.failed.to_string(), c.lost.to_string(), c.not_applicable.to_string())
            });
            let state = format!("{:?}{}", s.state, if s.earlier { " (earlier)" } else { "" }).to_lowercase();
            let gate = match s.gate {
                Some(true) => "PASSED",
                Some(false) => "FAILED",
                None => "",
            };
            let _ = writeln!(
                out,
                "| {} | {} | {state} | {p} | {f} | {l} | {n} | {:.1} | {gate} | {} |",
                r.name,
                s.suite,
                s.minutes,
                cell(s.reason.as_deref().unwrap_or(""))
            );
        }
        if let Some(m) = &r.memory {
            let _ = writeln!(
                out,
                "| {} | stop | {} | | | | | {:.1} | | {:.2} GiB available after, {:.2} before launch |",
                r.name,
                match (&r.died, m.released) {
                    (Some(_), true) => "SERVER DIED; memory back",
                    (Some(_), false) => "SERVER DIED; MEMORY HELD",
                    (None, true) => "memory given back",
                    (None, false) => "MEMORY HELD",
                },
                m.waited_secs / 60.0,
                m.after_gib,
                m.before_gib
            );
        }
    }
    let ran: Vec<&str> = results.iter().map(|r| r.name.as_str()).collect();
    let left: Vec<&str> = mine.iter().map(String::as_str).filter(|n| !ran.contains(n)).collect();
    if !left.is_empty() {
        let _ = writeln!(out, "\nnot reached (interrupted before them): {}", left.join(", "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suite(state: State, failed: u64) -> SuiteOutcome {
        SuiteOutcome {
            suite: "s".into(),
            state,
            counts: Some(Counts { failed, ..Counts::default() }),
            minutes: 0.0,
            gate: None,
            reason: None,
            earlier: false,
        }
    }

    fn ran(suites: Vec<SuiteOutcome>) -> ConfigOutcome {
        ConfigOutcome { name: "c".into(), launch: Some(Ok(1.0)), suites, memory: None, interrupted: None, died: None }
    }

    #[test]
    fn an_array_task_whose_suites_all_ran_exits_0_whatever_the_verdicts() {
        // A failed case and a gate's skip are verdicts: the campaign's own
        // code says 101, the task's 0.
        let failed_case = ran(vec![
            SuiteOutcome { gate: Some(false), ..suite(State::Done, 1) },
            SuiteOutcome { counts: None, ..suite(State::Skipped, 0) },
        ]);
        assert_eq!(exit_code(std::slice::from_ref(&failed_case), None), 101);
        assert_eq!(task_exit_code(std::slice::from_ref(&failed_case), None), 0);
        // What could not run its configuration is a task that failed.
        let launch = ConfigOutcome { launch: Some(Err("exited".into())), ..ran(vec![suite(State::Skipped, 0)]) };
        let died = ConfigOutcome { died: Some("signal: 9".into()), ..ran(vec![suite(State::Failed, 0)]) };
        let stopped = ran(vec![suite(State::Done, 0), suite(State::Failed, 0)]);
        for r in [launch, died, stopped] {
            assert_eq!(task_exit_code(std::slice::from_ref(&r), None), 4, "{r:?}");
        }
        assert_eq!(task_exit_code(&[failed_case], Some(15)), 143, "a requeue's SIGTERM");
    }
}
