//! Reading several measurement files as one run: the parts of a run split
//! across machines (`--partition`), and a run with the runs that resumed it
//! (`--resume`). The board treats each as one run, every case once (the
//! later record of a case wins, as `--resume` does); a missing part is said.
//! The run log keeps every file's run as its own row ([`Logged`]).

use std::collections::{BTreeMap, BTreeSet};

use sparktest_record::{Efficiency, Outcome, Summary};

use crate::run::Run;

/// One measurement file's run as the run log shows it: its own counts and
/// summary, and how the board read it with others.
#[derive(Debug, Clone)]
pub struct Logged {
    pub run_id: String,
    pub started_at: String,
    /// `name version` of the suite.
    pub suite: String,
    /// `model (engine on target, route)`.
    pub target: String,
    /// Its own cases' outcomes.
    pub outcomes: Vec<Outcome>,
    /// Its first failed or lost cases, `id: reason`.
    pub failures: Vec<String>,
    pub summary: Option<Summary>,
    /// How the board read it with other files ("part 2/5 of run group G,
    /// read as one run with R"), in the order it was found.
    pub read_as: Vec<String>,
}

impl Logged {
    fn of(r: &Run) -> Logged {
        let m = &r.manifest;
        Logged {
            run_id: m.run_id.clone(),
            started_at: m.started_at.clone(),
            suite: format!("{} {}", m.suite.name, m.suite.version),
            target: format!("{} ({} on {}, {})", m.target.model_id, m.target.engine, m.target.name, m.route),
            outcomes: r.cases.iter().map(|c| c.outcome).collect(),
            failures: r
                .cases
                .iter()
                .filter(|c| matches!(c.outcome, Outcome::Fail | Outcome::Lost))
                .take(5)
                .map(|c| format!("{}: {}", c.id, c.reason.as_deref().unwrap_or("")))
                .collect(),
            summary: r.summary.clone(),
            read_as: Vec::new(),
        }
    }

    /// Cases of this outcome in the file.
    pub fn count(&self, o: Outcome) -> usize {
        self.outcomes.iter().filter(|x| **x == o).count()
    }
}

/// Fold resumed runs into the runs they resume, then partitions into one
/// run per group. Runs arrive in start order; so does the log, one entry
/// per run given.
pub fn merge(runs: Vec<Run>) -> (Vec<Run>, Vec<Logged>) {
    let mut log: Vec<Logged> = runs.iter().map(Logged::of).collect();
    let at: BTreeMap<String, usize> = log.iter().enumerate().rev().map(|(i, l)| (l.run_id.clone(), i)).collect();
    let mut say = |run_id: &str, words: String| {
        if let Some(&i) = at.get(run_id) {
            log[i].read_as.push(words);
        }
    };
    let runs = resumes(runs, &mut say);
    let runs = partitions(runs, &mut say);
    for r in &runs {
        let missing = missing_parts(r);
        if missing.is_empty() {
            continue;
        }
        let total = r.manifest.partition.as_ref().map_or(0, |p| p.total);
        let parts: Vec<String> = missing.iter().map(u32::to_string).collect();
        let words = format!("PARTIAL: part {} of {total} missing", parts.join(", "));
        for id in std::iter::once(&r.manifest.run_id).chain(r.parts.iter()) {
            say(id, words.clone());
        }
    }
    (runs, log)
}

/// Add `from`'s cases to `base`, each case once: a case `base` already
/// holds is replaced by `from`'s later record.
fn fold(base: &mut Run, from: &Run) {
    let later: BTreeSet<&str> = from.cases.iter().map(|c| c.id.as_str()).collect();
    base.cases.retain(|c| !later.contains(c.id.as_str()));
    for c in &from.cases {
        base.origin.insert(c.id.clone(), from.manifest.run_id.clone());
    }
    base.cases.extend(from.cases.iter().cloned());
}

fn resumes(runs: Vec<Run>, say: &mut impl FnMut(&str, String)) -> Vec<Run> {
    let mut out: Vec<Run> = Vec::new();
    for r in runs {
        let Some(of) = r.manifest.resumes.clone() else {
            out.push(r);
            continue;
        };
        // The run it resumes, or one that already folded it in.
        let base = out.iter_mut().find(|b| b.manifest.run_id == of || b.resumed_by.contains(&of));
        let Some(base) = base else {
            say(&r.manifest.run_id, format!("resumes {of}, which no file holds: read alone"));
            out.push(r);
            continue;
        };
        fold(base, &r);
        base.resumed_by.push(r.manifest.run_id.clone());
        say(&of, format!("resumed by {}", r.manifest.run_id));
        say(
            &r.manifest.run_id,
            format!(
                "resumes {of}: read as one run with {}, its records replacing the earlier ones",
                base.manifest.run_id
            ),
        );
        // The whole is complete when the last resume ended normally.
        base.summary = r.summary.as_ref().map(|s| recount(s, base));
    }
    out
}

fn partitions(runs: Vec<Run>, say: &mut impl FnMut(&str, String)) -> Vec<Run> {
    let mut out: Vec<Run> = Vec::new();
    let mut groups: BTreeMap<(String, String, String), usize> = BTreeMap::new();
    for r in runs {
        let Some(p) = r.manifest.partition.clone() else {
            out.push(r);
            continue;
        };
        let key = (p.group.clone(), r.manifest.suite.sha256.clone(), r.manifest.target.name.clone());
        let part = format!("part {}/{} of run group {}", p.index, p.total, p.group);
        let Some(&at) = groups.get(&key) else {
            groups.insert(key, out.len());
            let mut r = r;
            r.part_indices.push(p.index);
            out.push(r);
            continue;
        };
        let base = &mut out[at];
        let again = base.part_indices.contains(&p.index);
        fold(base, &r);
        base.part_indices.push(p.index);
        base.parts.push(r.manifest.run_id.clone());
        say(
            &r.manifest.run_id,
            if again {
                format!(
                    "{part} again: read as one run with {}, its records replacing the earlier ones (each case counted once)",
                    base.manifest.run_id
                )
            } else {
                format!("{part}: read as one run with {}", base.manifest.run_id)
            },
        );
        base.summary = match (&base.summary, &r.summary) {
            (Some(a), Some(s)) => {
                // A gate split across parts passes only if every part did.
                let gate = match (&a.gate, &s.gate) {
                    (Some(x), Some(y)) => Some(sparktest_record::Gate {
                        passed: x.passed && y.passed,
                        failing: x.failing.iter().chain(&y.failing).cloned().collect(),
                    }),
                    (x, y) => x.clone().or_else(|| y.clone()),
                };
                let mut merged = recount(s, base);
                merged.gate = gate;
                Some(merged)
            }
            _ => None,
        };
    }
    out
}

/// The parts of a partitioned run that no file holds.
pub fn missing_parts(run: &Run) -> Vec<u32> {
    let Some(p) = &run.manifest.partition else {
        return Vec::new();
    };
    (1..=p.total).filter(|i| !run.part_indices.contains(i)).collect()
}

/// A summary whose counts and efficiency readout are the merged run's own.
fn recount(last: &Summary, run: &Run) -> Summary {
    let n = |o: Outcome| run.cases.iter().filter(|c| c.outcome == o).count() as u64;
    let mut efficiency = Efficiency::default();
    run.cases.iter().for_each(|c| efficiency.add(c));
    Summary {
        passed: n(Outcome::Pass),
        failed: n(Outcome::Fail),
        lost: n(Outcome::Lost),
        not_applicable: n(Outcome::NotApplicable),
        interrupted_cases: n(Outcome::Interrupted),
        instruments: efficiency.summaries(),
        ..last.clone()
    }
}
