//! What a board covers: the runs of one campaign, of a time window, of
//! the latest N nights, or every run (the default). A run is selected with
//! what its cells read with it: the runs that resume it, the other parts of its
//! partitioned run and the other repeats of its `--repeat` group, even
//! where they started outside the window.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, SystemTime};

use crate::error::{Error, ErrorKind};
use crate::measurements::Facts;

/// Which runs a board covers; every run when nothing is set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Only the runs of this campaign (`manifest.campaign.id`).
    pub campaign: Option<String>,
    /// Only runs that started at or after this time: `YYYY-MM-DD` (that
    /// day, UTC) or an RFC 3339 UTC time (`2026-12-06T00:00:00Z`).
    pub since: Option<String>,
    /// Only runs that started at or before this time: `YYYY-MM-DD` (to the
    /// end of that day, UTC) or an RFC 3339 UTC time.
    pub until: Option<String>,
    /// Only the runs of the latest N nights (of those the other fields
    /// hold): a night is a campaign, or the UTC date a run of no campaign
    /// started on, placed in time by its first run's start.
    pub nights: Option<u32>,
}

/// A flag's time: a UTC date (`2026-12-06`: from its midnight, or with
/// `end` to the next midnight) or an RFC 3339 UTC time (any precision of
/// seconds, `Z`). None when it is neither.
fn instant(s: &str, end: bool) -> Option<SystemTime> {
    let b = s.as_bytes();
    let date = b.len() == 10
        && b.iter().enumerate().all(|(i, c)| if i == 4 || i == 7 { *c == b'-' } else { c.is_ascii_digit() });
    if date {
        let midnight = humantime::parse_rfc3339(&format!("{s}T00:00:00Z")).ok()?;
        return Some(if end { midnight + Duration::from_secs(86_400) } else { midnight });
    }
    humantime::parse_rfc3339(s).ok()
}

impl Selection {
    /// Whether it selects anything less than every run.
    pub fn is_all(&self) -> bool {
        *self == Selection::default()
    }

    /// The flags' values, refused with exit 3 naming the flag.
    pub fn check(&self) -> Result<(), Error> {
        for (flag, value) in [("--since", &self.since), ("--until", &self.until)] {
            if let Some(v) = value.as_deref().filter(|v| instant(v, false).is_none()) {
                return Err(Error::new(
                    ErrorKind::Setup,
                    format!(
                        "{flag} {v:?}: give a UTC date (2026-12-06) or an RFC 3339 UTC time (2026-12-06T18:00:00Z)"
                    ),
                ));
            }
        }
        let since = self.since.as_deref().and_then(|s| instant(s, false));
        let until = self.until.as_deref().and_then(|u| instant(u, true));
        if let (Some(a), Some(b), Some(sa), Some(ub)) = (since, until, &self.since, &self.until)
            && a > b
        {
            return Err(Error::new(
                ErrorKind::Setup,
                format!("--since {sa} is after --until {ub}: nothing can be selected"),
            ));
        }
        if self.nights == Some(0) {
            return Err(Error::setup("--nights 0: give at least 1 night".to_string()));
        }
        if self.campaign.as_deref().is_some_and(|c| c.trim().is_empty()) {
            return Err(Error::setup("--campaign: give a campaign id".to_string()));
        }
        Ok(())
    }

    /// Whether a run is selected by itself, before what it brings along.
    /// Times are compared as instants, not as text; a run whose start
    /// cannot be read is in no time window.
    pub fn holds(&self, f: &Facts) -> bool {
        let started = humantime::parse_rfc3339(&f.started_at).ok();
        let in_window = |bound: &Option<String>, end: bool, ok: fn(SystemTime, SystemTime) -> bool| {
            bound.as_deref().is_none_or(|b| match (started, instant(b, end)) {
                (Some(t), Some(b)) => ok(t, b),
                _ => false,
            })
        };
        // --until a date runs to (not including) the next midnight; --until
        // a time includes that instant.
        let until_date = self.until.as_deref().is_some_and(|u| u.len() == 10);
        self.campaign.as_deref().is_none_or(|c| f.campaign.as_deref() == Some(c))
            && in_window(&self.since, false, |t, b| t >= b)
            && if until_date {
                in_window(&self.until, true, |t, b| t < b)
            } else {
                in_window(&self.until, false, |t, b| t <= b)
            }
    }

    /// The indexes of the files selected: those it holds, then every file
    /// that resumes a selected run or shares a selected run's partition or
    /// repeat group, until nothing more is brought along.
    pub fn pick(&self, files: &[Facts]) -> BTreeSet<usize> {
        let mut picked: BTreeSet<usize> = (0..files.len()).filter(|i| self.holds(&files[*i])).collect();
        if let Some(n) = self.nights {
            // A run dated after now (a box's clock wrong, or a file that
            // says 2099) never makes a night the latest.
            let dated: BTreeSet<usize> = picked.iter().copied().filter(|i| !from_the_future(&files[*i])).collect();
            let latest = latest_nights(files, &dated, n as usize);
            picked.retain(|i| night(&files[*i]).is_some_and(|k| latest.contains(&k)));
        }
        with_what_they_bring(files, picked)
    }

    /// The selection in words, for messages and the board.
    pub fn described(&self) -> String {
        let mut w = Vec::new();
        if let Some(c) = &self.campaign {
            w.push(format!("campaign {c}"));
        }
        if let Some(s) = &self.since {
            w.push(format!("since {s}"));
        }
        if let Some(u) = &self.until {
            w.push(format!("until {u}"));
        }
        match self.nights {
            Some(1) => w.push("the latest night".into()),
            Some(n) => w.push(format!("the latest {n} nights")),
            None => {}
        }
        if w.is_empty() { "every run".into() } else { w.join(", ") }
    }
}

/// `picked` and every file that resumes a picked run, is resumed by one,
/// or shares a picked run's partition or repeat group, until nothing more
/// is brought along: what the picked runs' cells read with them.
pub(super) fn with_what_they_bring(files: &[Facts], mut picked: BTreeSet<usize>) -> BTreeSet<usize> {
    loop {
        let runs: BTreeSet<&str> = picked.iter().map(|i| files[*i].run_id.as_str()).collect();
        let groups: BTreeSet<&str> = picked.iter().flat_map(|i| files[*i].groups.iter().map(String::as_str)).collect();
        // The runs the picked ones resume, looked up once a round (not
        // once a file and picked file).
        let resumed: BTreeSet<&str> = picked.iter().filter_map(|i| files[*i].resumes.as_deref()).collect();
        let more: Vec<usize> = (0..files.len())
            .filter(|i| !picked.contains(i))
            .filter(|i| {
                let f = &files[*i];
                f.resumes.as_deref().is_some_and(|r| runs.contains(r))
                    || f.groups.iter().any(|g| groups.contains(g.as_str()))
                    || resumed.contains(f.run_id.as_str())
            })
            .collect();
        if more.is_empty() {
            return picked;
        }
        picked.extend(more);
    }
}

/// What [`read_by_cells`] reads of a file: its configurations, what a
/// cell may ask of it, whether it stands as a measurement alone, and
/// whether it is a campaign's record (which names no column).
pub(super) struct Reads<'a> {
    pub configs: &'a [u64],
    pub features: &'a [u64],
    pub sound: bool,
    pub campaign_record: bool,
}

/// The files of `among` whose runs a board's cells can read, with what
/// they bring along; every other file only feeds the run log.
///
/// A cell of a configuration reads the latest run that has what it asks
/// for (a case, a fact, a summary's gate) and did not fail as a run, or a
/// later one that failed. So, per configuration, runs are taken from the
/// newest back: a run is kept while it has anything that no newer run
/// that stood as a measurement had, and every configuration keeps its
/// newest. A run here is what the reader reads as one (a run with its
/// resumes, the parts of a partition), placed at its first file's start;
/// it stands only if each of its files does.
pub(super) fn read_by_cells(files: &[Facts], reads: &[Option<Reads>], among: &BTreeSet<usize>) -> BTreeSet<usize> {
    let units = units(files, among);
    // Per configuration, its units, each once.
    let mut by_config: BTreeMap<u64, BTreeSet<usize>> = BTreeMap::new();
    for (u, members) in units.iter().enumerate() {
        for r in members.iter().filter_map(|i| reads[*i].as_ref()).filter(|r| !r.campaign_record) {
            for c in r.configs {
                by_config.entry(*c).or_default().insert(u);
            }
        }
    }
    let start = |u: usize| units[u].iter().map(|i| (&files[*i].started_at, &files[*i].run_id)).min();
    let mut kept = BTreeSet::new();
    for (_, mut order) in by_config.into_iter().map(|(c, us)| (c, us.into_iter().collect::<Vec<usize>>())) {
        order.sort_by(|a, b| start(*b).cmp(&start(*a)));
        let mut had: std::collections::HashSet<u64> = std::collections::HashSet::new();
        for (n, u) in order.into_iter().enumerate() {
            let members: Vec<&Reads> = units[u].iter().filter_map(|i| reads[*i].as_ref()).collect();
            let new = members.iter().flat_map(|r| r.features).any(|f| !had.contains(f));
            if n == 0 || new {
                kept.extend(units[u].iter().copied());
                if members.iter().all(|r| r.sound) {
                    had.extend(members.iter().flat_map(|r| r.features.iter().copied()));
                }
            }
        }
    }
    with_what_they_bring(files, kept)
}

/// The files of `among` grouped as the reader reads them as one run: a
/// run with the runs that resume it, the parts of a partition.
pub(super) fn units(files: &[Facts], among: &BTreeSet<usize>) -> Vec<Vec<usize>> {
    let mut parent: BTreeMap<usize, usize> = among.iter().map(|i| (*i, *i)).collect();
    fn root(parent: &mut BTreeMap<usize, usize>, mut i: usize) -> usize {
        while parent[&i] != i {
            let up = parent[&parent[&i]];
            parent.insert(i, up);
            i = up;
        }
        i
    }
    let mut by_run: BTreeMap<&str, usize> = BTreeMap::new();
    let mut by_part: BTreeMap<&str, usize> = BTreeMap::new();
    for i in among {
        by_run.entry(files[*i].run_id.as_str()).or_insert(*i);
    }
    for i in among {
        let f = &files[*i];
        let parts = f.groups.iter().filter(|g| g.starts_with("partition ")).map(|g| *by_part.entry(g).or_insert(*i));
        let resumed = f.resumes.as_deref().and_then(|r| by_run.get(r).copied());
        for j in parts.chain(resumed).collect::<Vec<usize>>() {
            let (a, b) = (root(&mut parent, *i), root(&mut parent, j));
            parent.insert(a.max(b), a.min(b));
        }
    }
    let mut units: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for i in among {
        let r = root(&mut parent, *i);
        units.entry(r).or_default().push(*i);
    }
    units.into_values().collect()
}

/// How far after now a run may say it started before it is dated in the
/// future: clocks of the boxes of one campaign differ by seconds, not by
/// an hour.
const CLOCK_SLACK: std::time::Duration = std::time::Duration::from_secs(3600);

/// Whether a run says it started after now (by more than [`CLOCK_SLACK`]).
pub(super) fn from_the_future(f: &Facts) -> bool {
    humantime::parse_rfc3339(&f.started_at).is_ok_and(|t| t > SystemTime::now() + CLOCK_SLACK)
}

/// The night a run belongs to, as the run log groups it.
fn night(f: &Facts) -> Option<String> {
    sparktest_record::reader::night(f.campaign.as_deref(), &f.started_at)
}

/// The latest `n` nights of the `held` files, each placed in time by its
/// earliest readable start.
pub(super) fn latest_nights(files: &[Facts], held: &BTreeSet<usize>, n: usize) -> BTreeSet<String> {
    let mut first: BTreeMap<String, SystemTime> = BTreeMap::new();
    for f in held.iter().map(|i| &files[*i]) {
        if let (Some(k), Ok(t)) = (night(f), humantime::parse_rfc3339(&f.started_at)) {
            first.entry(k).and_modify(|at| *at = (*at).min(t)).or_insert(t);
        }
    }
    let mut order: Vec<(SystemTime, String)> = first.into_iter().map(|(k, t)| (t, k)).collect();
    order.sort();
    order.into_iter().rev().take(n).map(|(_, k)| k).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(id: &str, started: &str) -> Facts {
        Facts { run_id: id.into(), started_at: started.into(), ..Facts::default() }
    }

    #[test]
    fn a_window_and_a_campaign_select_what_they_say_with_what_their_cells_read() {
        let files = vec![
            Facts { campaign: Some("nightly-1201".into()), ..run("a", "2026-12-01T23:00:00Z") },
            Facts { campaign: Some("nightly-1201".into()), ..run("b", "2026-12-02T01:00:00Z") },
            run("c", "2026-12-03T02:00:00Z"),
            // c's resume, the next night: brought along by c.
            Facts { resumes: Some("c".into()), ..run("c2", "2026-12-04T03:00:00Z") },
            // Repeats of one group across the window's edge.
            Facts { groups: vec!["g".into()], ..run("r1", "2026-12-02T05:00:00Z") },
            Facts { groups: vec!["g".into()], ..run("r2", "2026-12-05T05:00:00Z") },
        ];
        let by =
            |s: &Selection| -> Vec<&str> { s.pick(&files).into_iter().map(|i| files[i].run_id.as_str()).collect() };
        let window =
            Selection { since: Some("2026-12-02".into()), until: Some("2026-12-03".into()), ..Selection::default() };
        assert_eq!(by(&window), ["b", "c", "c2", "r1", "r2"]);
        let to_the_second = Selection { until: Some("2026-12-02T01:00:00Z".into()), ..Selection::default() };
        assert_eq!(by(&to_the_second), ["a", "b"]);
        // Instants, not text: a fraction of a second on either side.
        let half = Selection { until: Some("2026-12-02T01:00:00.5Z".into()), ..Selection::default() };
        assert_eq!(by(&half), ["a", "b"]);
        let before = Selection { until: Some("2026-12-02T00:59:59.999Z".into()), ..Selection::default() };
        assert_eq!(by(&before), ["a"]);
        let from = Selection { since: Some("2026-12-02T01:00:00.000Z".into()), ..Selection::default() };
        assert_eq!(by(&from), ["b", "c", "c2", "r1", "r2"]);
        // A start that cannot be read is in no window, but in every run.
        let unreadable = [run("x", "")];
        assert!(Selection { until: Some("2026-12-02".into()), ..Selection::default() }.pick(&unreadable).is_empty());
        assert_eq!(by(&Selection::default()).len(), 6);

        let campaign = Selection { campaign: Some("nightly-1201".into()), ..Selection::default() };
        assert_eq!(by(&campaign), ["a", "b"]);
        assert_eq!(campaign.described(), "campaign nightly-1201");

        // Nights: the campaign nightly-1201 (from the 1st, 23:00, though
        // b started on the 2nd), then the dates of c, r1 (the 2nd), c2 and
        // r2. The latest night is the 5th's: r2 brings r1 along.
        let nights = |n| Selection { nights: Some(n), ..Selection::default() };
        assert_eq!(by(&nights(1)), ["r1", "r2"]);
        assert_eq!(nights(1).described(), "the latest night");
        // The 4th's c2 resumes c: c comes with it.
        assert_eq!(by(&nights(2)), ["c", "c2", "r1", "r2"]);
        assert_eq!(by(&nights(4)), ["c", "c2", "r1", "r2"], "the 2nd's night is r1's, already in");
        assert_eq!(by(&nights(5)), ["a", "b", "c", "c2", "r1", "r2"]);
        assert_eq!(nights(3).described(), "the latest 3 nights");
        // With a window: the latest night of those it holds.
        let within = Selection { nights: Some(1), until: Some("2026-12-03".into()), ..Selection::default() };
        assert_eq!(by(&within), ["c", "c2"]);
        assert!(nights(0).check().unwrap_err().message.contains("--nights 0"));
        // A run dated 2099 is not the latest night: the latest night that
        // has come is.
        let mut ahead = files.clone();
        ahead.push(run("future", "2099-01-01T00:00:00Z"));
        let picked: Vec<&str> = nights(1).pick(&ahead).iter().map(|i| ahead[*i].run_id.as_str()).collect();
        assert_eq!(picked, ["r1", "r2"]);
        assert!(from_the_future(&ahead[6]) && !from_the_future(&ahead[5]));
    }

    #[test]
    fn a_time_that_is_no_utc_date_or_time_is_refused_naming_its_flag() {
        for bad in [
            "yesterday",
            "2026-12-6",
            "2026-12-06 10:00",
            "2026-12-06T10:00Z",
            "2026-12-32",
            "2026-12-06T10:00:00+01:00",
        ] {
            let s = Selection { since: Some(bad.into()), ..Selection::default() };
            let err = s.check().unwrap_err();
            assert!(err.message.starts_with(&format!("--since {bad:?}")), "{err}");
        }
        let backwards =
            Selection { since: Some("2026-12-06".into()), until: Some("2026-12-01".into()), ..Default::default() };
        assert!(backwards.check().unwrap_err().message.contains("is after --until"));
        let same_day =
            Selection { since: Some("2026-12-06".into()), until: Some("2026-12-06".into()), ..Default::default() };
        assert!(same_day.check().is_ok());
        let within = Selection {
            since: Some("2026-12-06T10:00:00Z".into()),
            until: Some("2026-12-06".into()),
            ..Default::default()
        };
        assert!(within.check().is_ok());
    }

    /// A run as [`read_by_cells`] reads it: configuration, features, and
    /// whether it stands alone.
    struct R(&'static str, &'static str, u64, &'static [u64], bool);

    fn cells(runs: &[(R, Facts)]) -> Vec<&str> {
        let files: Vec<Facts> = runs.iter().map(|(_, f)| f.clone()).collect();
        let configs: Vec<[u64; 1]> = runs.iter().map(|(r, _)| [r.2]).collect();
        let reads: Vec<Option<Reads>> = runs
            .iter()
            .zip(&configs)
            .map(|((r, _), c)| {
                Some(Reads { configs: c, features: r.3, sound: r.4, campaign_record: r.0.starts_with("campaign") })
            })
            .collect();
        let among = (0..files.len()).collect();
        read_by_cells(&files, &reads, &among).into_iter().map(|i| runs[i].0.0).collect()
    }

    fn plain(r: R) -> (R, Facts) {
        let f = run(r.0, r.1);
        (r, f)
    }

    #[test]
    fn the_cells_read_each_configuration_s_newest_run_and_what_it_lacks_back_to_a_run_that_stood() {
        let runs = vec![
            // Configuration 1: a whole run, then one of its cases alone,
            // then a run the server died in.
            plain(R("old", "2026-12-01T00:00:00Z", 1, &[1, 2], true)),
            plain(R("whole", "2026-12-02T00:00:00Z", 1, &[1, 2], true)),
            plain(R("filtered", "2026-12-03T00:00:00Z", 1, &[1], true)),
            plain(R("died", "2026-12-04T00:00:00Z", 1, &[1, 2], false)),
            // Configuration 2: nightly, each night whole.
            plain(R("n1", "2026-12-01T00:00:00Z", 2, &[1, 2], true)),
            plain(R("n2", "2026-12-02T00:00:00Z", 2, &[1, 2], true)),
            // Configuration 3: nothing measured at all, still its column.
            plain(R("empty", "2026-12-01T00:00:00Z", 3, &[], true)),
            // A campaign's record names no column.
            plain(R("campaign-record", "2026-12-05T00:00:00Z", 4, &[9], true)),
        ];
        // "died" is newest but stands for nothing; "filtered" stands for
        // case 1 only, so case 2 is read from "whole"; "old" has nothing
        // the runs after it did not.
        assert_eq!(cells(&runs), ["whole", "filtered", "died", "n2", "empty"]);
    }

    #[test]
    fn a_resumed_run_is_placed_at_its_first_file_and_stands_only_if_each_file_does() {
        let runs = vec![
            plain(R("before", "2026-12-01T00:00:00Z", 1, &[1, 2], true)),
            // Cut off (no summary), then resumed after another whole run:
            // read as one run placed at "cut", before "between".
            plain(R("cut", "2026-12-02T00:00:00Z", 1, &[1], false)),
            plain(R("between", "2026-12-03T00:00:00Z", 1, &[1, 2], true)),
            (
                R("resume", "2026-12-04T00:00:00Z", 1, &[2], true),
                Facts { resumes: Some("cut".into()), ..run("resume", "2026-12-04T00:00:00Z") },
            ),
            // Repeats: the newest brings its group along.
            (
                R("r1", "2026-12-01T00:00:00Z", 2, &[1], true),
                Facts { groups: vec!["repeat g".into()], ..run("r1", "2026-12-01T00:00:00Z") },
            ),
            (
                R("r2", "2026-12-01T01:00:00Z", 2, &[1], true),
                Facts { groups: vec!["repeat g".into()], ..run("r2", "2026-12-01T01:00:00Z") },
            ),
        ];
        // "between" is the newest unit; the cut run and its resume are
        // older as one, and "before" adds nothing to "between".
        assert_eq!(cells(&runs), ["between", "r1", "r2"]);
    }
}
