//! The reproducibility row (`repro`).

use sparktest_contract::{Note, repro};

use super::*;

pub const ROW: RowDef = absolute(
    repro::ROW,
    "10 when every probe repeats byte for byte within the session and after a server restart; 9.5 within the \
         session (restart not measured on every probe); 8 when a restart changes bytes but not answers; 6 \
         byte-nondeterministic with identical answers; 3 when answers differ, within the session or after a \
         restart; lost probes are named and not judged",
    figure_of,
);

/// Reproducibility: within the session and restart to restart, bytes and
/// answers apart. Probes that never gave a judgement (lost) are named, not
/// dropped; a restart measured on some probes only is said.
fn figure_of(runs: &Runs, col: &str) -> Result<Figure, Missing> {
    let run = pick(runs, col, |r| has(r, repro::INSTRUMENT)).ok_or(Missing::NotMeasured)?;
    let all: Vec<&CaseRecord> =
        run.cases_of(repro::INSTRUMENT).filter(|c| c.outcome != Outcome::NotApplicable).collect();
    let cases: Vec<&CaseRecord> = all.iter().copied().filter(|c| note(c, repro::BYTE_IDENTICAL).is_some()).collect();
    if cases.is_empty() {
        return Err(missing_from(run, &run.cases_of(repro::INSTRUMENT).collect::<Vec<_>>()));
    }
    let yes = |k: Note| cases.iter().filter(|c| note(c, k) == Some(repro::YES)).count();
    let (n, bytes, answers) = (cases.len(), yes(repro::BYTE_IDENTICAL), yes(repro::ANSWER_IDENTICAL));
    let measured: Vec<&&CaseRecord> = cases
        .iter()
        .filter(|c| note(c, repro::RESTART_BYTE_IDENTICAL).is_some_and(|v| v == repro::YES || v == repro::NO))
        .collect();
    let m = measured.len();
    let restart_bytes = measured.iter().filter(|c| note(c, repro::RESTART_BYTE_IDENTICAL) == Some(repro::YES)).count();
    let restart_answers =
        measured.iter().filter(|c| note(c, repro::RESTART_ANSWER_IDENTICAL) == Some(repro::YES)).count();
    let on = if m < n { format!(" (restart measured on {m}/{n} probes)") } else { String::new() };
    let (value, mut raw) = if bytes < n && answers < n {
        (3.0, format!("nondeterministic at temp 0: answers differ on {}/{n} probes", n - answers))
    } else if bytes < n {
        (6.0, format!("byte-nondeterministic at temp 0 - answers identical ({bytes}/{n} probes byte-identical)"))
    } else if restart_answers < m {
        (
            3.0,
            format!(
                "within-session identical; after a restart {}/{m} probes gave another answer{on}",
                m - restart_answers
            ),
        )
    } else if restart_bytes < m {
        (
            8.0,
            format!(
                "within-session identical; after a restart {}/{m} probes changed bytes, not answers{on}",
                m - restart_bytes
            ),
        )
    } else if m == n {
        (10.0, format!("within-session AND restart-to-restart identical ({n}/{n} probes)"))
    } else if m > 0 {
        (9.5, format!("within-session identical ({n}/{n} probes); restart-to-restart identical on {m}/{n} only"))
    } else {
        (9.5, format!("within-session identical ({n}/{n} probes); restart-to-restart not measured"))
    };
    let lost = all.len() - n;
    if lost > 0 {
        raw.push_str(&format!(" - {lost}/{} probes LOST, not judged", all.len()));
    }
    Ok(figure(run, value, raw, &all))
}
