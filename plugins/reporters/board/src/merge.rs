//! Reading several measurement files as one run: the parts of a run split
//! across machines (`--partition`), and a run with the runs that resumed it
//! (`--resume`). The board treats each as one run; a missing part is said.

use std::collections::BTreeMap;

use sparktest_record::Summary;

use crate::run::Run;

/// Fold resumed runs into the runs they resume, then partitions into one
/// run per group. Runs arrive in start order.
pub fn merge(runs: Vec<Run>) -> Vec<Run> {
    let runs = resumes(runs);
    partitions(runs)
}

fn resumes(runs: Vec<Run>) -> Vec<Run> {
    let mut out: Vec<Run> = Vec::new();
    for r in runs {
        let Some(of) = r.manifest.resumes.clone() else {
            out.push(r);
            continue;
        };
        // The run it resumes, or one that already folded it in.
        let base = out.iter_mut().find(|b| b.manifest.run_id == of || b.merged.iter().any(|m| m.ends_with(&of)));
        let Some(base) = base else {
            out.push(r);
            continue;
        };
        let rerun: std::collections::BTreeSet<&str> = r.cases.iter().map(|c| c.id.as_str()).collect();
        base.cases.retain(|c| !rerun.contains(c.id.as_str()));
        for c in &r.cases {
            base.origin.insert(c.id.clone(), r.manifest.run_id.clone());
        }
        base.cases.extend(r.cases.iter().cloned());
        base.merged.push(format!("resumed by {}", r.manifest.run_id));
        // The whole is complete when the last resume ended normally.
        base.summary = r.summary.as_ref().map(|s| recount(s, base));
    }
    out
}

fn partitions(runs: Vec<Run>) -> Vec<Run> {
    let mut out: Vec<Run> = Vec::new();
    let mut groups: BTreeMap<(String, String, String), usize> = BTreeMap::new();
    for r in runs {
        let Some(p) = r.manifest.partition.clone() else {
            out.push(r);
            continue;
        };
        let key = (p.group.clone(), r.manifest.suite.sha256.clone(), r.manifest.target.name.clone());
        match groups.get(&key) {
            None => {
                groups.insert(key, out.len());
                let mut r = r;
                r.merged.push(format!("partition {}/{} ({})", p.index, p.total, r.manifest.run_id));
                out.push(r);
            }
            Some(&at) => {
                let base = &mut out[at];
                for c in &r.cases {
                    base.origin.insert(c.id.clone(), r.manifest.run_id.clone());
                }
                base.cases.extend(r.cases.iter().cloned());
                base.merged.push(format!("partition {}/{} ({})", p.index, p.total, r.manifest.run_id));
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
        }
    }
    out
}

/// The parts of a partitioned run that no file holds.
pub fn missing_parts(run: &Run) -> Vec<u32> {
    let Some(p) = &run.manifest.partition else {
        return Vec::new();
    };
    let seen: Vec<u32> =
        run.merged.iter().filter_map(|m| m.strip_prefix("partition ")?.split('/').next()?.parse().ok()).collect();
    (1..=p.total).filter(|i| !seen.contains(i)).collect()
}

/// A summary whose counts are the merged run's own.
fn recount(last: &Summary, run: &Run) -> Summary {
    use sparktest_record::Outcome;
    let n = |o: Outcome| run.cases.iter().filter(|c| c.outcome == o).count() as u64;
    Summary {
        passed: n(Outcome::Pass),
        failed: n(Outcome::Fail),
        lost: n(Outcome::Lost),
        not_applicable: n(Outcome::NotApplicable),
        interrupted_cases: n(Outcome::Interrupted),
        ..last.clone()
    }
}
