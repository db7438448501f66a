//! Which of a suite's cases this run runs, besides libtest's own filters:
//! one part of a partitioned run (`--partition count:K/N` or `hash:K/N`, as
//! cargo-nextest spells them), and the cases of an earlier run that were
//! lost or never recorded (`--resume RUN_ID`).

use std::collections::BTreeMap;
use std::path::Path;

use sha2::{Digest, Sha256};
use sparktest_record::{Manifest, Outcome, Partition};

use crate::error::Error;

/// A parsed `--partition`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionSpec {
    /// `count` or `hash`.
    pub scheme: String,
    /// 1-based part.
    pub index: u32,
    /// Parts.
    pub total: u32,
}

impl PartitionSpec {
    /// `count:K/N` or `hash:K/N`, 1 ≤ K ≤ N.
    pub fn parse(text: &str) -> Result<Self, Error> {
        let bad = || Error::setup(format!("--partition {text:?}: expected count:K/N or hash:K/N with 1 <= K <= N"));
        let (scheme, rest) = text.split_once(':').ok_or_else(bad)?;
        let (k, n) = rest.split_once('/').ok_or_else(bad)?;
        let (index, total): (u32, u32) = (k.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
        if !matches!(scheme, "count" | "hash") || index == 0 || total == 0 || index > total {
            return Err(bad());
        }
        Ok(PartitionSpec { scheme: scheme.into(), index, total })
    }

    /// Whether the `position`-th selected case (in listing order), named
    /// `id`, belongs to this part.
    pub fn holds(&self, position: usize, id: &str) -> bool {
        let slot = if self.scheme == "count" {
            position as u64 % u64::from(self.total)
        } else {
            let digest = Sha256::digest(id.as_bytes());
            let mut first = [0u8; 8];
            first.copy_from_slice(&digest[..8]);
            u64::from_be_bytes(first) % u64::from(self.total)
        };
        slot == u64::from(self.index - 1)
    }

    /// The manifest's record of this part.
    pub fn record(&self, group: String) -> Partition {
        Partition { scheme: self.scheme.clone(), index: self.index, total: self.total, group }
    }
}

/// What the parts of one partitioned run share: `--run-group`, else CI's
/// run id (GitHub Actions), else the suite, target and revision.
pub fn run_group(given: Option<&str>, suite_sha: &str, target: &str, revision: Option<&str>) -> String {
    if let Some(g) = given {
        return g.to_string();
    }
    if let (Ok(run), Ok(attempt)) = (std::env::var("GITHUB_RUN_ID"), std::env::var("GITHUB_RUN_ATTEMPT")) {
        return format!("github-{run}-{attempt}");
    }
    let key = format!("{suite_sha}\n{target}\n{}", revision.unwrap_or(""));
    let digest = Sha256::digest(key.as_bytes());
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// An earlier run to resume: its manifest and the cases already done (any
/// outcome but lost or interrupted), over the whole chain of runs it resumed in turn.
pub struct Resumed {
    /// The earlier run's manifest.
    pub manifest: Manifest,
    /// Case id → how it ended (None for a pass), for records that are not
    /// lost or interrupted.
    pub done: BTreeMap<String, Option<sparktest_record::GateFailure>>,
}

/// Read `<dir>/<run_id>.jsonl` (a damaged end is fine: that is what a
/// killed run leaves), and the runs it resumed, as one run
/// ([`sparktest_record::reader::chain`]).
pub fn resumed(dir: &Path, run_id: &str) -> Result<Resumed, Error> {
    if run_id.contains(['/', '\\']) || run_id.starts_with('.') {
        return Err(Error::setup(format!("--resume {run_id:?}: give a run id, not a path")));
    }
    let chain = sparktest_record::reader::chain::<sparktest_record::reader::Unread>(dir, run_id)
        .map_err(|e| Error::setup(format!("--resume {run_id}: {e}")))?;
    let done = chain
        .run
        .cases
        .iter()
        .filter(|c| !matches!(c.outcome, Outcome::Lost | Outcome::Interrupted))
        .map(|c| (c.id.clone(), sparktest_record::GateFailure::of(c)))
        .collect();
    Ok(Resumed { manifest: chain.newest, done })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_parse_and_cover_every_case_once() {
        assert!(PartitionSpec::parse("count:0/3").is_err());
        assert!(PartitionSpec::parse("count:4/3").is_err());
        assert!(PartitionSpec::parse("slice:1/3").is_err());
        assert!(PartitionSpec::parse("hash:1").is_err());
        let ids: Vec<String> = (0..100).map(|i| format!("i::case{i}")).collect();
        for scheme in ["count", "hash"] {
            let parts: Vec<PartitionSpec> =
                (1..=3).map(|k| PartitionSpec::parse(&format!("{scheme}:{k}/3")).unwrap()).collect();
            for (pos, id) in ids.iter().enumerate() {
                assert_eq!(parts.iter().filter(|p| p.holds(pos, id)).count(), 1, "{scheme} {id}");
            }
            let sizes: Vec<usize> =
                parts.iter().map(|p| ids.iter().enumerate().filter(|(i, id)| p.holds(*i, id)).count()).collect();
            assert!(sizes.iter().all(|n| *n >= 20), "{scheme}: {sizes:?}");
        }
        // count: round robin in listing order.
        let p = PartitionSpec::parse("count:2/3").unwrap();
        assert!(!p.holds(0, "a") && p.holds(1, "b") && !p.holds(2, "c") && p.holds(4, "e"));
    }

    #[test]
    fn a_run_group_is_given_or_derived() {
        assert_eq!(run_group(Some("ci-42"), "s", "t", None), "ci-42");
        let a = run_group(None, "s", "t", Some("r1"));
        assert_eq!(a, run_group(None, "s", "t", Some("r1")));
        assert_ne!(a, run_group(None, "s", "t", Some("r2")));
    }
}
