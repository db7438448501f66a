//! The verdict of a gate suite and what counts against it.

use serde::{Deserialize, Serialize};

use crate::{CaseRecord, Outcome};

/// The verdict of a gate suite.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Gate {
    /// Every case passed.
    pub passed: bool,
    /// What counts against it, one [`GateFailure`] a line as its `Display`
    /// writes it.
    pub failing: Vec<String>,
}

impl Gate {
    /// What counts against the gate, read back from [`Gate::failing`].
    pub fn failures(&self) -> impl Iterator<Item = GateFailure> + '_ {
        self.failing.iter().map(|line| GateFailure::parse(line))
    }
}

/// One thing a gate counts against it: a case that did not pass, written
/// `id (outcome: reason)`, or checks that did not run, in words. Written and
/// read through this type only, so a gate's file line and the board's
/// reading of it cannot drift apart.
#[derive(Debug, Clone, PartialEq)]
pub enum GateFailure {
    /// A case that ran and did not pass.
    Case {
        /// The case id.
        id: String,
        /// How it ended (never [`Outcome::Pass`]).
        outcome: Outcome,
        /// Its reason.
        reason: String,
    },
    /// Checks that did not run (filtered out, skipped, left to another
    /// part), in words.
    NotRun(String),
}

impl GateFailure {
    /// A record that did not pass; None for a pass.
    pub fn of<C>(record: &CaseRecord<C>) -> Option<GateFailure> {
        (record.outcome != Outcome::Pass).then(|| GateFailure::Case {
            id: record.id.clone(),
            outcome: record.outcome,
            reason: record.reason.clone().unwrap_or_default(),
        })
    }

    /// Read a line of [`Gate::failing`]; a line that is not a case's is
    /// words about checks that did not run.
    pub fn parse(line: &str) -> GateFailure {
        let case = line.split_once(" (").and_then(|(id, rest)| {
            let (outcome, reason) = rest.strip_suffix(')')?.split_once(": ")?;
            let outcome = [Outcome::Fail, Outcome::Lost, Outcome::NotApplicable, Outcome::Interrupted]
                .into_iter()
                .find(|o| o.as_str() == outcome)?;
            Some(GateFailure::Case { id: id.to_string(), outcome, reason: reason.to_string() })
        });
        case.unwrap_or_else(|| GateFailure::NotRun(line.to_string()))
    }

    /// What the board names it by: the case id, or the words up to their
    /// first parenthesis.
    pub fn name(&self) -> &str {
        match self {
            GateFailure::Case { id, .. } => id,
            GateFailure::NotRun(words) => words.split(" (").next().unwrap_or(words),
        }
    }
}

impl std::fmt::Display for GateFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GateFailure::Case { id, outcome, reason } => write!(f, "{id} ({}: {reason})", outcome.as_str()),
            GateFailure::NotRun(words) => f.write_str(words),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gate_failure_reads_back_as_it_was_written() {
        let case = GateFailure::Case {
            id: "x::y::z".into(),
            outcome: Outcome::Lost,
            reason: "timed out (30 s): no reply".into(),
        };
        assert_eq!(case.to_string(), "x::y::z (lost: timed out (30 s): no reply)");
        assert_eq!(GateFailure::parse(&case.to_string()), case);
        assert_eq!(case.name(), "x::y::z");
        let words = "2 of 3 checks did not run (filtered out or skipped)";
        assert_eq!(GateFailure::parse(words), GateFailure::NotRun(words.into()));
        assert_eq!(GateFailure::parse(words).name(), "2 of 3 checks did not run");
        assert_eq!(GateFailure::parse(words).to_string(), words);
    }
}
