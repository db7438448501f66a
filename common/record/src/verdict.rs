//! How a case ended: the outcome in the file, and the verdict (outcome
//! with its reason) the host uses.

use serde::{Deserialize, Serialize};

/// How a case ended. The five never mix.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Answered right.
    Pass,
    /// Answered wrong, or refused cleanly with a 4xx.
    Fail,
    /// Never answered: connection refused or reset, timeout, 5xx, stream cut,
    /// server died.
    Lost,
    /// Nothing could be measured here (the engine cannot produce it).
    NotApplicable,
    /// The harness itself was stopped (Ctrl-C, SIGTERM, SIGHUP) while the
    /// case ran (1.3): neither the model's failure nor the server's; a
    /// resume runs it again.
    Interrupted,
}

impl Outcome {
    /// The lower-case word used in files and output.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "fail",
            Outcome::Lost => "lost",
            Outcome::NotApplicable => "not-applicable",
            Outcome::Interrupted => "interrupted",
        }
    }
}

/// How a case ended, with its reason: the one type the host uses between
/// the plugin boundary and the record (where it is `outcome` + `reason`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Answered right.
    Pass,
    /// Answered wrong, refused cleanly, or the instrument broke: why.
    Fail(String),
    /// Never answered: what happened.
    Lost(String),
    /// Nothing could be measured here: why.
    NotApplicable(String),
    /// The harness was stopped while the case ran: by what.
    Interrupted(String),
}

impl Verdict {
    /// The kind, as the record's `outcome`.
    pub fn outcome(&self) -> Outcome {
        match self {
            Verdict::Pass => Outcome::Pass,
            Verdict::Fail(_) => Outcome::Fail,
            Verdict::Lost(_) => Outcome::Lost,
            Verdict::NotApplicable(_) => Outcome::NotApplicable,
            Verdict::Interrupted(_) => Outcome::Interrupted,
        }
    }

    /// The reason; None for a pass.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Verdict::Pass => None,
            Verdict::Fail(r) | Verdict::Lost(r) | Verdict::NotApplicable(r) | Verdict::Interrupted(r) => Some(r),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_and_record_fields_agree() {
        assert_eq!(Verdict::Lost("x".into()).outcome(), Outcome::Lost);
        assert_eq!(Verdict::Fail("why".into()).reason(), Some("why"));
        assert_eq!(Verdict::Pass.reason(), None);
    }
}
