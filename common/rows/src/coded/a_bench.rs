//! A-Bench's rows (`a-bench`): Agent tasks, and its Tools and Multi-turn
//! categories.

use sparktest_contract::a_bench;

use super::*;

pub const AGENT_TASKS: RowDef =
    relative(a_bench::AGENT_TASKS, true, 0.0, |r, c| pass_rate(r, c, a_bench::INSTRUMENT, None, detail));
pub const TOOLS: RowDef = relative(a_bench::TOOLS, true, 0.0, |r, c| {
    pass_rate(r, c, a_bench::INSTRUMENT, Some(a_bench::TOOLS.title), detail)
});
pub const MULTI_TURN: RowDef = relative(a_bench::MULTI_TURN, true, 0.0, |r, c| {
    pass_rate(r, c, a_bench::INSTRUMENT, Some(a_bench::MULTI_TURN.title), detail)
});

/// A run whose model made no tool call could not be tested; otherwise the
/// breakdown by category: (a-tool 12/12, a-schema 11/12 …).
fn detail(run: &Run, given: &[&CaseRecord]) -> Result<String, Missing> {
    if let Some(n) = no_tool_calls(run) {
        return Err(Missing::Incapable {
            reason: format!("could not be tested — cannot call tools — {n} items attempted"),
            records: given.iter().map(|c| run.record_id(c)).collect(),
        });
    }
    let mut cats: Vec<(&str, usize, usize)> = Vec::new();
    for c in given {
        let Some(cat) = c.case.split("::").next() else {
            continue;
        };
        let at = match cats.iter().position(|x| x.0 == cat) {
            Some(at) => at,
            None => {
                cats.push((cat, 0, 0));
                cats.len() - 1
            }
        };
        cats[at].2 += 1;
        if c.outcome == Outcome::Pass {
            cats[at].1 += 1;
        }
    }
    if cats.len() > 1 {
        let parts: Vec<String> = cats.iter().map(|(c, p, n)| format!("{c} {p}/{n}")).collect();
        return Ok(format!(" ({})", parts.join(", ")));
    }
    Ok(String::new())
}

/// The number of A-Bench items a run attempted when the model made no tool
/// call in any of them (each answered case says how many it made): the seed
/// reads that as "could not be tested", not as that many wrong answers.
/// None when any call was made, or when the records do not say.
fn no_tool_calls(run: &Run) -> Option<usize> {
    let bench: Vec<&CaseRecord> = run.cases.iter().filter(|c| c.instrument == a_bench::INSTRUMENT).collect();
    let answered: Vec<&&CaseRecord> =
        bench.iter().filter(|c| matches!(c.outcome, Outcome::Pass | Outcome::Fail)).collect();
    let none = !answered.is_empty() && answered.iter().all(|c| note(c, a_bench::TOOL_CALLS) == Some("0"));
    none.then_some(bench.len())
}
