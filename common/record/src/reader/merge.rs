//! Runs read together: each run id once, resumes and the parts of a
//! partitioned run folded into one run, each case once.

use std::collections::{BTreeMap, BTreeSet};

use super::{Logged, Run};
use crate::{CallRecord, Efficiency, Gate, Outcome, Summary};

/// Runs as read together by [`merge`].
#[derive(Debug)]
pub struct Merged<C = CallRecord> {
    /// One run per run, in start order (then run id): parts and resumes
    /// folded in.
    pub runs: Vec<Run<C>>,
    /// Every file's run, in start order, each its own entry.
    pub log: Vec<Logged>,
    /// Runs given twice (the same run id in two files): read once, the
    /// first in the order given; each named here.
    pub duplicates: Vec<String>,
}

/// Read runs together: ordered by start time then run id, each run id
/// once, resumed runs folded into the runs they resume, then the parts of
/// a partitioned run into one run per (run group, suite digest, target).
/// Each case counts once: a later record replaces an earlier one of the
/// same case, as `--resume` does.
pub fn merge<C: Clone>(runs: Vec<Run<C>>) -> Merged<C> {
    let mut seen = BTreeSet::new();
    let mut duplicates = Vec::new();
    let mut runs: Vec<Run<C>> = runs
        .into_iter()
        .filter(|r| {
            let first = seen.insert(r.manifest.run_id.clone());
            if !first {
                duplicates.push(r.manifest.run_id.clone());
            }
            first
        })
        .collect();
    runs.sort_by(|a, b| {
        (&a.manifest.started_at, &a.manifest.run_id).cmp(&(&b.manifest.started_at, &b.manifest.run_id))
    });
    let mut log: Vec<Logged> = runs.iter().map(Logged::of).collect();
    let at: BTreeMap<String, usize> = log.iter().enumerate().map(|(i, l)| (l.run_id.clone(), i)).collect();
    let mut say = |run_id: &str, words: String| {
        if let Some(&i) = at.get(run_id) {
            log[i].read_as.push(words);
        }
    };
    let runs = resumes(runs, &mut say);
    let runs = partitions(runs, &mut say);
    for r in &runs {
        let missing = r.missing_parts();
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
    Merged { runs, log, duplicates }
}

/// Add `from`'s cases to `base`, each case once: a case `base` already
/// holds is replaced by `from`'s later record.
fn fold<C: Clone>(base: &mut Run<C>, from: &Run<C>) {
    let later: BTreeSet<&str> = from.cases.iter().map(|c| c.id.as_str()).collect();
    base.cases.retain(|c| !later.contains(c.id.as_str()));
    for c in &from.cases {
        base.origin.insert(c.id.clone(), from.manifest.run_id.clone());
    }
    base.cases.extend(from.cases.iter().cloned());
    base.others.push(from.manifest.clone());
    base.others.extend(from.others.iter().cloned());
}

fn resumes<C: Clone>(runs: Vec<Run<C>>, say: &mut impl FnMut(&str, String)) -> Vec<Run<C>> {
    let mut out: Vec<Run<C>> = Vec::new();
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
        // A file's claim to resume a run is checked against the run: only
        // the same suite, suite digest, target and model, as `--resume`
        // itself requires, may replace its records.
        if let Some(unlike) = unlike_run(base, &r) {
            say(&r.manifest.run_id, format!("says it resumes {of}, but {unlike}: read as a run of its own"));
            out.push(r);
            continue;
        }
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

/// How `r` differs from the run it says it resumes, in words; None when it
/// is the same suite (name and digest) on the same target and model.
fn unlike_run<C>(base: &Run<C>, r: &Run<C>) -> Option<String> {
    let (a, b) = (&base.manifest, &r.manifest);
    let short = |s: &str| s.get(..12).unwrap_or(s).to_string();
    let differ = [
        ("suite", &a.suite.name, &b.suite.name, false),
        ("suite digest", &a.suite.sha256, &b.suite.sha256, true),
        ("target", &a.target.name, &b.target.name, false),
        ("model", &a.target.model_id, &b.target.model_id, false),
    ];
    let words: Vec<String> = differ
        .iter()
        .filter(|(_, x, y, _)| x != y)
        .map(|(what, x, y, digest)| {
            let (x, y) = if *digest { (short(x), short(y)) } else { (x.to_string(), y.to_string()) };
            format!("its {what} is {y:?}, that run's {x:?}")
        })
        .collect();
    (!words.is_empty()).then(|| words.join(", "))
}

fn partitions<C: Clone>(runs: Vec<Run<C>>, say: &mut impl FnMut(&str, String)) -> Vec<Run<C>> {
    let mut out: Vec<Run<C>> = Vec::new();
    let mut groups: BTreeMap<(String, String, String), usize> = BTreeMap::new();
    for r in runs {
        let Some(p) = r.manifest.partition.clone() else {
            out.push(r);
            continue;
        };
        let key = (p.group.clone(), r.manifest.suite.sha256.clone(), r.manifest.target.name.clone());
        let Some(&at) = groups.get(&key) else {
            groups.insert(key, out.len());
            out.push(r);
            continue;
        };
        let base = &mut out[at];
        let again = base.part_indices.contains(&p.index);
        fold(base, &r);
        base.part_indices.push(p.index);
        base.parts.push(r.manifest.run_id.clone());
        let part = format!("part {}/{} of run group {}", p.index, p.total, p.group);
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
                    (Some(x), Some(y)) => Some(Gate {
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

/// A summary whose counts and efficiency readout are the merged run's own.
fn recount<C>(last: &Summary, run: &Run<C>) -> Summary {
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

#[cfg(test)]
mod tests {
    use super::super::fixtures::run;
    use super::*;
    use crate::Partition;

    fn part(mut r: Run, index: u32) -> Run {
        r.manifest.partition = Some(Partition { scheme: "count".into(), index, total: 3, group: "g".into() });
        r.part_indices = vec![index];
        r
    }

    #[test]
    fn a_part_read_twice_counts_each_case_once_the_later_record_winning() {
        let a = part(run("a", "1", &[("x", "fail"), ("y", "fail")]), 1);
        let b = part(run("b", "2", &[("x", "pass"), ("y", "pass")]), 1);
        let c = part(run("c", "3", &[("z", "pass")]), 2);
        let m = merge(vec![c, b, a]);
        assert_eq!(m.runs.len(), 1, "one run group");
        let r = &m.runs[0];
        let mut got: Vec<(&str, Outcome)> = r.cases.iter().map(|c| (c.id.as_str(), c.outcome)).collect();
        got.sort_by_key(|(id, _)| *id);
        assert_eq!(got, [("x", Outcome::Pass), ("y", Outcome::Pass), ("z", Outcome::Pass)]);
        assert_eq!(r.record_id(&r.cases[0]), "b#x", "a record names the run it came from");
        assert_eq!(r.missing_parts(), [3]);
        let others: Vec<&str> = r.others.iter().map(|m| m.run_id.as_str()).collect();
        assert_eq!(others, ["b", "c"], "every other file's manifest, for its hosts");
        // The readout is recounted from the cases kept, not the last part's.
        let e = &r.summary.as_ref().unwrap().instruments[0];
        assert_eq!((e.given, e.correct, e.output_tokens_per_correct), (3, 3, Some(10.0)));
        // Every file stays its own entry in the log, in start order.
        let ids: Vec<&str> = m.log.iter().map(|l| l.run_id.as_str()).collect();
        assert_eq!(ids, ["a", "b", "c"]);
        assert!(m.log[1].read_as[0].starts_with("part 1/3 of run group g again"), "{:?}", m.log[1].read_as);
        assert!(m.log[0].read_as.iter().any(|w| w == "PARTIAL: part 3 of 3 missing"), "{:?}", m.log[0].read_as);
    }

    #[test]
    fn a_run_id_given_twice_is_read_once_and_named() {
        let m = merge(vec![run("a", "1", &[("x", "pass")]), run("a", "1", &[("x", "fail")])]);
        assert_eq!((m.runs.len(), m.log.len(), m.duplicates.as_slice()), (1, 1, ["a".to_string()].as_slice()));
        assert_eq!(m.runs[0].cases[0].outcome, Outcome::Pass, "the first given");
    }

    #[test]
    fn a_chain_of_resumes_reads_as_one_run_finished_by_its_last() {
        let mut first = run("a", "1", &[("x", "pass"), ("y", "lost")]);
        first.summary = None;
        let mut second = run("b", "2", &[("y", "lost")]);
        second.manifest.resumes = Some("a".into());
        second.summary.as_mut().unwrap().interrupted = Some("SIGINT".into());
        let mut third = run("c", "3", &[("y", "pass")]);
        third.manifest.resumes = Some("b".into());
        let m = merge(vec![first.clone(), second.clone(), third]);
        assert_eq!(m.runs.len(), 1);
        let r = &m.runs[0];
        assert_eq!(r.resumed_by, ["b", "c"]);
        assert!(r.cases.iter().all(|c| c.outcome == Outcome::Pass), "the later record wins");
        assert_eq!(r.failed(), None, "finished by its last resume");
        // Without the last resume it is interrupted; without any, unfinished.
        assert_eq!(merge(vec![first.clone(), second]).runs[0].failed().as_deref(), Some("interrupted by SIGINT"));
        assert!(first.failed().unwrap().starts_with("never finished"));
    }

    #[test]
    fn a_file_that_says_it_resumes_a_run_of_another_suite_target_or_model_stands_as_its_own() {
        let victim = run("a", "1", &[("x", "pass"), ("y", "pass")]);
        let claim = |edit: fn(&mut crate::Manifest)| {
            let mut r = run("b", "2", &[("x", "fail"), ("y", "fail")]);
            r.manifest.resumes = Some("a".into());
            edit(&mut r.manifest);
            merge(vec![victim.clone(), r])
        };
        type Edit = fn(&mut crate::Manifest);
        let edits: [(Edit, &str); 4] = [
            (|m| m.suite.name = "other-suite".into(), "its suite is \"other-suite\""),
            (|m| m.suite.sha256 = "f".repeat(64), "its suite digest is \"ffffffffffff\""),
            (|m| m.target.name = "elsewhere".into(), "its target is \"elsewhere\""),
            (|m| m.target.model_id = "another-model".into(), "its model is \"another-model\""),
        ];
        for (edit, words) in edits {
            let m = claim(edit);
            assert_eq!(m.runs.len(), 2, "{words}: a run of its own");
            assert!(m.runs[0].cases.iter().all(|c| c.outcome == Outcome::Pass), "{words}: the victim's records stand");
            let said = &m.log[1].read_as;
            assert!(said.iter().any(|w| w.starts_with("says it resumes a, but ") && w.contains(words)), "{said:?}");
        }
        // The same suite on the same target and model: one run.
        let m = claim(|_| {});
        assert_eq!(m.runs.len(), 1);
        assert!(m.runs[0].cases.iter().all(|c| c.outcome == Outcome::Fail), "the later record wins");
    }
}
