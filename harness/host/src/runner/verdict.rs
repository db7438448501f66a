//! Every rule by which the host gives a case its verdict where the guest
//! gave none, or overrules the one it gave. Pure: each rule takes what it
//! needs and returns the verdict, and each has its own test. [`of_run`]
//! applies the rules over a case that ran, in their order; `case.rs` adds
//! [`snapshot_changed`] once the snapshots are checked, and uses the rest
//! for cases that never ran in the sandbox.
//!
//! Who is to blame decides: a server that did not answer loses the case
//! whatever the instrument concluded; an instrument that broke fails it; a
//! stop of the harness interrupts it, never scoring it.

use std::path::Path;
use std::time::Duration;

use sparktest_record::{Metric, Verdict};

use crate::plugin::Ended;
use crate::signal;

/// The verdict of a case that ran in the sandbox: what its run's end makes
/// of it, then a lost call, then a stop signal that came in as it ended.
pub fn of_run(ended: &Ended, first_lost: Option<&str>, signal: Option<i32>) -> Verdict {
    let verdict = match ended {
        Ended::Returned(finding) => non_finite(finding.verdict.clone(), &finding.metrics),
        Ended::OutOfTime { waiting_on_server, limit } => out_of_time(*waiting_on_server, *limit),
        Ended::Trapped(why) => trapped(why),
    };
    interrupted(lost_wins(verdict, first_lost), signal)
}

/// Out of time: who used the time decides. Waiting on the server, the case
/// is lost; computing or sleeping, the instrument failed it.
pub fn out_of_time(waiting_on_server: bool, limit: Duration) -> Verdict {
    let limit = limit.as_secs();
    if waiting_on_server {
        Verdict::Lost(format!("the case exceeded its wall-clock limit of {limit}s while waiting on the server"))
    } else {
        Verdict::Fail(format!(
            "instrument exceeded its wall-clock limit of {limit}s while computing or sleeping, not waiting on the server"
        ))
    }
}

/// A trap (a limit, a panic) is the instrument's failure.
pub fn trapped(why: &str) -> Verdict {
    Verdict::Fail(why.to_string())
}

/// NaN and infinities have no JSON form, so a record holding one could not
/// be read back: such a figure fails the case by name (and is left out of
/// the record, [`finite`]).
pub fn non_finite(verdict: Verdict, metrics: &[Metric]) -> Verdict {
    let bad: Vec<String> =
        metrics.iter().filter(|m| !m.value.is_finite()).map(|m| format!("{} = {}", m.name, m.value)).collect();
    if bad.is_empty() {
        verdict
    } else {
        Verdict::Fail(format!("instrument reported figures that are not finite numbers: {}", bad.join(", ")))
    }
}

/// The figures a record keeps: the finite ones.
pub fn finite(metrics: &[Metric]) -> Vec<Metric> {
    metrics.iter().filter(|m| m.value.is_finite()).cloned().collect()
}

/// A lost call loses the case whatever the instrument concluded: a dead
/// server is never scored as a wrong answer, nor a swallowed error as a
/// pass. A case the instrument itself called lost keeps its own reason.
pub fn lost_wins(verdict: Verdict, first_lost: Option<&str>) -> Verdict {
    match (verdict, first_lost) {
        (Verdict::Lost(r), _) => Verdict::Lost(r),
        (_, Some(reason)) => Verdict::Lost(reason.to_string()),
        (other, None) => other,
    }
}

/// A case that ended lost as a stop signal came in lost its answer to the
/// harness's stop, not the server's silence: interrupted, for `--resume`.
pub fn interrupted(verdict: Verdict, signal: Option<i32>) -> Verdict {
    match (verdict, signal) {
        (Verdict::Lost(why), Some(signal)) => Verdict::Interrupted(format!(
            "the harness was stopped by {} while this case ran ({why}); `--resume` runs it again",
            signal::name(signal)
        )),
        (other, _) => other,
    }
}

/// A snapshot that changed since its baseline fails a case that passed
/// (it is left pending for review); any other verdict stands.
pub fn snapshot_changed(verdict: Verdict, snapshot: &str, baselines: &Path) -> Verdict {
    match verdict {
        Verdict::Pass => Verdict::Fail(format!(
            "snapshot {snapshot} changed since the baseline in {}; review with `cargo insta review`",
            baselines.display()
        )),
        other => other,
    }
}

/// A case not run because the run stopped early: lost, with the stop's
/// reason (the server's silence or the setup's fault stopped it).
pub fn stopped(reason: &str) -> Verdict {
    Verdict::Lost(format!("not run: the run stopped: {reason}"))
}

/// A case whose launched server exited on its own while it ran (`why`: the
/// exit status and the log's end): a lost case says the server died, before
/// what its call saw (a refused connection says little alone). A case that
/// passed or failed on its answers keeps its verdict: the server died after.
pub fn server_died(verdict: Verdict, why: &str) -> Verdict {
    match verdict {
        Verdict::Lost(r) => Verdict::Lost(format!("{why}\nthis case's call: {r}")),
        other => other,
    }
}

/// A case cancelled in flight by a stop signal: interrupted, never scored.
pub fn cancelled(signal: i32) -> Verdict {
    Verdict::Interrupted(format!(
        "the harness was stopped by {} while this case ran; `--resume` runs it again",
        signal::name(signal)
    ))
}

/// The harness failed (a panic of its own) while running the case:
/// neither the model's fault nor the instrument's; no answer was measured,
/// as when a server is lost.
pub fn harness_failed(what: &str) -> Verdict {
    Verdict::Lost(format!(
        "the harness failed while running this case (a bug in cargo-sparktest, not the model): {what}"
    ))
}

/// An instrument that could not be loaded fails its one case with why.
pub fn broken(why: &str) -> Verdict {
    Verdict::Fail(why.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::Finding;

    fn metric(name: &str, value: f64) -> Metric {
        Metric { name: name.into(), value, unit: "x".into() }
    }

    fn lost(r: &str) -> Verdict {
        Verdict::Lost(r.into())
    }

    fn fail(r: &str) -> Verdict {
        Verdict::Fail(r.into())
    }

    #[test]
    fn a_case_lost_as_its_server_died_says_so_first_and_an_answered_one_stands() {
        let why = "the server of target local exited (exit status: 1)";
        let v = server_died(Verdict::Lost("connection refused".into()), why);
        assert_eq!(v, Verdict::Lost(format!("{why}\nthis case's call: connection refused")));
        assert_eq!(server_died(Verdict::Pass, why), Verdict::Pass);
        assert_eq!(server_died(Verdict::Fail("wrong".into()), why), Verdict::Fail("wrong".into()));
    }

    #[test]
    fn out_of_time_is_lost_waiting_on_the_server_and_the_instrument_s_failure_otherwise() {
        let limit = Duration::from_secs(30);
        assert_eq!(
            out_of_time(true, limit),
            lost("the case exceeded its wall-clock limit of 30s while waiting on the server")
        );
        assert_eq!(
            out_of_time(false, limit),
            fail(
                "instrument exceeded its wall-clock limit of 30s while computing or sleeping, not waiting on the server"
            )
        );
    }

    #[test]
    fn a_trap_fails_the_case_in_its_own_words() {
        assert_eq!(trapped("instrument panicked: boom"), fail("instrument panicked: boom"));
    }

    #[test]
    fn a_figure_that_is_not_a_number_fails_the_case_and_leaves_the_record() {
        let figures = [metric("a", 1.0), metric("b", f64::NAN), metric("c", f64::INFINITY)];
        assert_eq!(
            non_finite(Verdict::Pass, &figures),
            fail("instrument reported figures that are not finite numbers: b = NaN, c = inf")
        );
        assert_eq!(
            non_finite(Verdict::NotApplicable("n/a".into()), &figures[..1]),
            Verdict::NotApplicable("n/a".into())
        );
        assert_eq!(finite(&figures), [metric("a", 1.0)]);
    }

    #[test]
    fn a_lost_call_overrides_any_other_verdict() {
        let first = Some("connection refused");
        assert_eq!(lost_wins(Verdict::Pass, first), lost("connection refused"));
        assert_eq!(lost_wins(fail("wrong"), first), lost("connection refused"));
        assert_eq!(lost_wins(Verdict::NotApplicable("n/a".into()), first), lost("connection refused"));
        assert_eq!(lost_wins(lost("own"), first), lost("own"));
        assert_eq!(lost_wins(Verdict::Pass, None), Verdict::Pass);
    }

    #[test]
    fn a_case_lost_as_the_signal_came_is_interrupted() {
        assert_eq!(
            interrupted(lost("reset"), Some(libc::SIGTERM)),
            Verdict::Interrupted(
                "the harness was stopped by SIGTERM while this case ran (reset); `--resume` runs it again".into()
            )
        );
        // An answer the case had is kept; without a signal, lost is lost.
        assert_eq!(interrupted(fail("wrong"), Some(libc::SIGINT)), fail("wrong"));
        assert_eq!(interrupted(lost("reset"), None), lost("reset"));
    }

    #[test]
    fn a_changed_snapshot_fails_a_pass_only() {
        let baselines = Path::new("/p/snapshots/local");
        assert_eq!(
            snapshot_changed(Verdict::Pass, "reply", baselines),
            fail("snapshot reply changed since the baseline in /p/snapshots/local; review with `cargo insta review`")
        );
        assert_eq!(snapshot_changed(lost("reset"), "reply", baselines), lost("reset"));
        assert_eq!(snapshot_changed(fail("wrong"), "reply", baselines), fail("wrong"));
    }

    #[test]
    fn a_case_not_run_after_a_stop_is_lost_with_the_stop_s_reason() {
        assert_eq!(stopped("3 cases in a row were lost"), lost("not run: the run stopped: 3 cases in a row were lost"));
    }

    #[test]
    fn a_case_cancelled_by_a_signal_is_interrupted() {
        assert_eq!(
            cancelled(libc::SIGINT),
            Verdict::Interrupted(
                "the harness was stopped by SIGINT while this case ran; `--resume` runs it again".into()
            )
        );
    }

    #[test]
    fn the_harness_s_own_failure_is_lost_never_the_model_s() {
        assert_eq!(
            harness_failed("index out of bounds"),
            lost(
                "the harness failed while running this case (a bug in cargo-sparktest, not the model): index out of bounds"
            )
        );
    }

    #[test]
    fn an_instrument_that_could_not_load_fails_its_case() {
        assert_eq!(broken("failed to compile"), fail("failed to compile"));
    }

    #[test]
    fn a_run_s_rules_apply_in_order() {
        let finding =
            |verdict, metrics| Ended::Returned(Finding { verdict, metrics, notes: vec![], snapshots: vec![] });
        // The guest's own verdict stands alone.
        assert_eq!(of_run(&finding(Verdict::Pass, vec![metric("a", 1.0)]), None, None), Verdict::Pass);
        // Figures first, then a lost call over them, then the signal over that.
        let nan = finding(Verdict::Pass, vec![metric("a", f64::NAN)]);
        assert!(matches!(of_run(&nan, None, None), Verdict::Fail(_)));
        assert_eq!(of_run(&nan, Some("reset"), None), lost("reset"));
        assert!(
            matches!(of_run(&nan, Some("reset"), Some(libc::SIGHUP)), Verdict::Interrupted(r) if r.contains("(reset)"))
        );
        let waited = Ended::OutOfTime { waiting_on_server: true, limit: Duration::from_secs(1) };
        assert!(matches!(of_run(&waited, None, Some(libc::SIGINT)), Verdict::Interrupted(_)));
        assert_eq!(of_run(&Ended::Trapped("trapped".into()), None, None), fail("trapped"));
    }
}
