//! One measurement file's run as the run log shows it.

use super::Run;
use crate::{HostInfo, Outcome, Summary};

/// One measurement file's run as a run log shows it: its own counts and
/// summary, and how it was read with others. A host hands a reporter the
/// runs of a night it does not hand whole as these
/// ([`crate::handover::Handover::logged`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Logged {
    /// Its run id.
    pub run_id: String,
    /// Its start time.
    pub started_at: String,
    /// The campaign it ran in, by id.
    pub campaign: Option<String>,
    /// `name version` of the suite.
    pub suite: String,
    /// `model (engine on target, route)`.
    pub target: String,
    /// Its own cases' outcomes, in order.
    pub outcomes: Vec<Outcome>,
    /// Its first failed or lost cases, `id: reason`.
    pub failures: Vec<String>,
    /// Its own summary line.
    pub summary: Option<Summary>,
    /// How it was read with other files ("part 2/5 of run group G, read as
    /// one run with R"), in the order found.
    pub read_as: Vec<String>,
    /// The batch job it ran in, in words (`Slurm job 7_2 on vm (requeued 1
    /// time)`).
    pub job: Option<String>,
    /// The box it was measured on: its server's where the harness saw it
    /// (a server it launched), else the client's. The parts and resumes of
    /// a run may each have run on another box.
    pub host: HostInfo,
    /// Whether [`Logged::host`] is the server's box (else the client's:
    /// the server's was not seen).
    pub server_seen: bool,
}

impl Logged {
    pub(super) fn of<C>(r: &Run<C>) -> Logged {
        let m = &r.manifest;
        Logged {
            run_id: m.run_id.clone(),
            started_at: m.started_at.clone(),
            campaign: m.campaign.as_ref().map(|c| c.id.clone()),
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
            job: m.job.as_ref().map(crate::JobRef::describe),
            host: m.target.host.clone().unwrap_or_else(|| m.client_host.clone()),
            server_seen: m.target.host.is_some(),
        }
    }

    /// Cases of this outcome in the file.
    pub fn count(&self, o: Outcome) -> usize {
        self.outcomes.iter().filter(|x| **x == o).count()
    }

    /// The night it belongs to in a run log ([`night`]), else `undated`.
    pub fn night(&self) -> String {
        night(self.campaign.as_deref(), &self.started_at).unwrap_or_else(|| "undated".into())
    }
}

/// The night a run belongs to, in a run log and in `board --nights`: its
/// campaign (`campaign nightly-1206`), else the UTC date it started on
/// (`2026-12-06`); none when it has neither.
pub fn night(campaign: Option<&str>, started_at: &str) -> Option<String> {
    match (campaign, started_at.get(..10)) {
        (Some(c), _) => Some(format!("campaign {c}")),
        (None, Some(d)) if d.as_bytes().get(4) == Some(&b'-') => Some(d.to_string()),
        _ => None,
    }
}
