//! A gate suite's verdict (e.g. the configuration battery): passed only when
//! every one of its checks ran and passed.

use sparktest_record::{Gate, GateFailure};

use crate::tally::Tally;

/// A filtered or skipped check is a failing one. `carried` are the checks
/// an earlier run (that this one resumes) recorded, and their failures.
pub fn verdict(t: &Tally, total: usize, carried: &(usize, Vec<GateFailure>)) -> Gate {
    let ran = usize::try_from(t.counts.total()).unwrap_or(usize::MAX) + carried.0;
    let mut failing = carried.1.clone();
    failing.extend(t.not_passed.iter().cloned());
    if ran < total {
        failing.push(GateFailure::NotRun(format!(
            "{} of {total} checks did not run (filtered out or skipped)",
            total - ran
        )));
    }
    Gate { passed: failing.is_empty() && total > 0, failing: failing.iter().map(GateFailure::to_string).collect() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tally::Counts;

    #[test]
    fn a_gate_passes_only_when_every_check_ran_and_passed() {
        let all = Tally { counts: Counts { passed: 3, ..Counts::default() }, ..Tally::default() };
        assert!(verdict(&all, 3, &(0, vec![])).passed);
        // A filter that ran one of three checks proves nothing.
        let filtered = Tally { counts: Counts { passed: 1, ..Counts::default() }, ..Tally::default() };
        let g = verdict(&filtered, 3, &(0, vec![]));
        assert!(!g.passed);
        assert_eq!(g.failing, ["2 of 3 checks did not run (filtered out or skipped)"]);
        let failed = Tally {
            counts: Counts { passed: 2, failed: 1, ..Counts::default() },
            not_passed: vec![GateFailure::parse("x::y (fail: wrong)")],
            ..Tally::default()
        };
        assert_eq!(verdict(&failed, 3, &(0, vec![])).failing, ["x::y (fail: wrong)"]);
        assert!(!verdict(&Tally::default(), 0, &(0, vec![])).passed, "a gate with no checks is no gate");
        // A resumed run counts what the earlier one recorded.
        let rest = Tally { counts: Counts { passed: 1, ..Counts::default() }, ..Tally::default() };
        assert!(verdict(&rest, 3, &(2, vec![])).passed);
        assert_eq!(verdict(&rest, 3, &(2, vec![GateFailure::parse("x::a (fail: no)")])).failing, ["x::a (fail: no)"]);
    }
}
