//! A run: one measurement file, or several read as one by
//! [`merge`](super::merge), and what it came to as a run.

use std::collections::BTreeMap;

use crate::{CallRecord, CaseRecord, Manifest, Outcome, Summary};

/// One run: a measurement file, or several read as one by [`merge`](super::merge) (the
/// parts of a partitioned run; a run and the runs that resumed it).
#[derive(Debug, Clone)]
pub struct Run<C = CallRecord> {
    /// The first line of the run's (first) file.
    pub manifest: Manifest,
    /// Every case once, in the order read.
    pub cases: Vec<CaseRecord<C>>,
    /// The last line, when the run ended normally; for a merged run, the
    /// last part's or resume's with the counts recounted.
    pub summary: Option<Summary>,
    /// Case id → the run id its record came from, where that is not this
    /// run's own (merged parts and resumes).
    pub origin: BTreeMap<String, String>,
    /// The runs that resumed this one, folded into it.
    pub resumed_by: Vec<String>,
    /// The other parts of a partitioned run read with it, by run id.
    pub parts: Vec<String>,
    /// The part indices read into it (a part read twice appears twice).
    pub part_indices: Vec<u32>,
    /// The manifests of the other files read into it (its parts' and
    /// resumes'), in the order read: each names the hosts it ran on.
    pub others: Vec<Manifest>,
}

impl<C> Run<C> {
    /// A run as its manifest starts it: no case or summary yet, read with
    /// no other file.
    pub fn new(manifest: Manifest) -> Run<C> {
        let part_indices = manifest.partition.iter().map(|p| p.index).collect();
        Run {
            manifest,
            cases: Vec::new(),
            summary: None,
            origin: BTreeMap::new(),
            resumed_by: Vec::new(),
            parts: Vec::new(),
            part_indices,
            others: Vec::new(),
        }
    }

    /// The cases that ended in a verdict: an interrupted case (the harness
    /// was stopped while it ran) measured nothing.
    pub fn measured(&self) -> impl Iterator<Item = &CaseRecord<C>> + '_ {
        self.cases.iter().filter(|c| c.outcome != Outcome::Interrupted)
    }

    /// Why this run cannot stand as a measurement over an earlier one of
    /// the same configuration: it answered nothing (every case it measured
    /// was lost), it was stopped early (too many lost in a row, refused
    /// credentials), interrupted, or never finished (no summary line).
    /// None for a run that ran its course and answered something.
    pub fn failed(&self) -> Option<String> {
        let lost = self.measured().filter(|c| c.outcome == Outcome::Lost).count();
        if lost > 0 && lost == self.measured().count() {
            return Some(format!("the server did not answer ({lost} lost)"));
        }
        match &self.summary {
            None => Some("never finished (no summary line: it crashed or was killed)".into()),
            Some(s) => match (&s.interrupted, &s.stopped) {
                (Some(signal), _) => Some(format!("interrupted by {signal}")),
                (None, Some(why)) => Some(format!("stopped early: {why}")),
                (None, None) => None,
            },
        }
    }

    /// The parts of a partitioned run that no file holds.
    pub fn missing_parts(&self) -> Vec<u32> {
        let Some(p) = &self.manifest.partition else {
            return Vec::new();
        };
        (1..=p.total).filter(|i| !self.part_indices.contains(i)).collect()
    }

    /// `run-id#case-id` of a case's record: the run it came from.
    pub fn record_id(&self, case: &CaseRecord<C>) -> String {
        let run = self.origin.get(&case.id).unwrap_or(&self.manifest.run_id);
        let mut id = String::with_capacity(run.len() + 1 + case.id.len());
        id.push_str(run);
        id.push('#');
        id.push_str(&case.id);
        id
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::run;

    #[test]
    fn a_run_that_answered_nothing_failed_as_a_run() {
        let dead = run("a", "1", &[("x", "lost"), ("y", "lost")]);
        assert_eq!(dead.failed().as_deref(), Some("the server did not answer (2 lost)"));
        let mut stopped = run("b", "1", &[("x", "pass"), ("y", "lost")]);
        stopped.summary.as_mut().unwrap().stopped = Some("5 cases in a row were lost".into());
        assert_eq!(stopped.failed().as_deref(), Some("stopped early: 5 cases in a row were lost"));
        assert_eq!(run("c", "1", &[("x", "fail"), ("y", "lost")]).failed(), None, "it answered one");
    }
}
