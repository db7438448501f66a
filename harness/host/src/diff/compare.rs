//! B against A, row by row: pass/fail items paired by item (McNemar's
//! exact test) or unpaired (Fisher's exact test), per-item figures by a
//! seeded bootstrap of the mean paired ratio (a figure one record gives
//! once, by resampling its requests, [`super::requests`]), lost items
//! left out and named, configuration differences named.

use std::collections::{BTreeMap, BTreeSet};

use sparktest_record::{CaseRecord, Manifest, Outcome};
use sparktest_stats as stats;

use super::load::{Key, Side};
use super::report::{
    ConfigDifference, Direction, FigureDiff, Flip, LostItem, PassRateDiff, Report, RowDiff, Settings, SideInfo,
    Unanswered, Verdict,
};

/// Significance level of every test.
pub const ALPHA: f64 = 0.05;

/// A 95% interval of a ratio wider than this (either way from the
/// estimate) cannot see changes of about that size: the report says so.
const WIDE: f64 = 0.10;

fn case_name(key: &Key) -> String {
    match &key.0 {
        Some(arm) => format!("{arm}/{}", key.1),
        None => key.1.clone(),
    }
}

/// The latest record of a case on one side, and the run it came from.
fn latest<'a>(side: &'a Side, key: &Key) -> Option<&'a (String, CaseRecord)> {
    side.records.get(key).and_then(|v| v.last())
}

/// Samples of a figure in one record: its repetitions (`<name>-rep1` …)
/// when the instrument recorded them, else the figure itself.
fn samples(c: &CaseRecord, name: &str) -> (Vec<f64>, String) {
    let prefix = format!("{name}-rep");
    let reps: Vec<f64> = c
        .metrics
        .iter()
        .filter(|m| m.name.strip_prefix(&prefix).is_some_and(|n| n.parse::<u32>().is_ok()))
        .map(|m| m.value)
        .filter(|v| v.is_finite())
        .collect();
    let unit = c.metrics.iter().find(|m| m.name == name).map(|m| m.unit.clone()).unwrap_or_default();
    if !reps.is_empty() {
        return (reps, unit);
    }
    (c.metrics.iter().filter(|m| m.name == name).map(|m| m.value).filter(|v| v.is_finite()).collect(), unit)
}

/// Every sample of a figure for one case on one side, over its repeated
/// records; lost and N/A records give none, and with `passed_only` (a
/// declared row's metric, whose figure is over passed cases) only passed
/// records give any.
fn side_samples(side: &Side, key: &Key, name: &str, passed_only: bool) -> (Vec<f64>, String) {
    let mut all = Vec::new();
    let mut unit = String::new();
    for (_, c) in side.records.get(key).into_iter().flatten() {
        if matches!(c.outcome, Outcome::Lost | Outcome::NotApplicable) || (passed_only && c.outcome != Outcome::Pass) {
            continue;
        }
        let (s, u) = samples(c, name);
        all.extend(s);
        if unit.is_empty() {
            unit = u;
        }
    }
    (all, unit)
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

fn pass_rate(a: &Side, b: &Side, keys: &BTreeSet<&Key>) -> Option<PassRateDiff> {
    let given = |o: Outcome| matches!(o, Outcome::Pass | Outcome::Fail);
    let outcome = |s: &Side, k: &Key| latest(s, k).map(|(_, c)| c.outcome).filter(|o| given(*o));
    let count = |s: &Side| {
        let given: Vec<Outcome> = keys.iter().filter_map(|k| outcome(s, k)).collect();
        (given.iter().filter(|o| **o == Outcome::Pass).count() as u64, given.len() as u64)
    };
    let (a_passed, a_given) = count(a);
    let (b_passed, b_given) = count(b);
    if a_given == 0 || b_given == 0 {
        return None;
    }
    let mut pass_to_fail = Vec::new();
    let mut fail_to_pass = Vec::new();
    let mut paired = 0;
    for k in keys {
        let (Some(oa), Some(ob)) = (outcome(a, k), outcome(b, k)) else { continue };
        paired += 1;
        if oa == ob {
            continue;
        }
        let id = |s: &Side| latest(s, k).map(|(run, c)| format!("{run}#{}", c.id)).unwrap_or_default();
        let flip = Flip { case: case_name(k), a: id(a), b: id(b) };
        if oa == Outcome::Pass { pass_to_fail.push(flip) } else { fail_to_pass.push(flip) }
    }
    let wilson = |k, n| stats::wilson(k, n, stats::Z95).map(|i| [i.low, i.high]);
    let (test, p_value, direction) = if paired > 0 {
        let (worse, better) = (pass_to_fail.len() as u64, fail_to_pass.len() as u64);
        ("mcnemar-exact", stats::mcnemar_exact(worse, better), Direction::from_comparison(better.cmp(&worse), true))
    } else {
        let (ra, rb) = (a_passed as f64 / a_given as f64, b_passed as f64 / b_given as f64);
        let dir = Direction::from_comparison(rb.partial_cmp(&ra).unwrap_or(std::cmp::Ordering::Equal), true);
        let p = stats::fisher_exact(a_passed, a_given - a_passed, b_passed, b_given - b_passed);
        ("fisher-exact", p, dir)
    };
    Some(PassRateDiff {
        test: test.into(),
        a_passed,
        a_given,
        b_passed,
        b_given,
        a_interval: wilson(a_passed, a_given),
        b_interval: wilson(b_passed, b_given),
        paired,
        pass_to_fail,
        fail_to_pass,
        p_value,
        verdict: if p_value < ALPHA { Verdict::Beyond } else { Verdict::Within },
        direction,
    })
}

fn figure(
    a: &Side,
    b: &Side,
    keys: &BTreeSet<&Key>,
    name: &str,
    higher_better: bool,
    s: Settings,
    passed_only: bool,
) -> Option<FigureDiff> {
    let mut unit = String::new();
    let mut pairs: Vec<(Vec<f64>, Vec<f64>)> = Vec::new();
    let mut a_only: Vec<Vec<f64>> = Vec::new();
    let mut b_only: Vec<Vec<f64>> = Vec::new();
    for k in keys {
        let (sa, ua) = side_samples(a, k, name, passed_only);
        let (sb, ub) = side_samples(b, k, name, passed_only);
        if unit.is_empty() {
            unit = if ua.is_empty() { ub } else { ua };
        }
        match (sa.is_empty(), sb.is_empty()) {
            (false, false) => pairs.push((sa, sb)),
            (false, true) => a_only.push(sa),
            (true, false) => b_only.push(sb),
            (true, true) => {}
        }
    }
    let (method, items, a_s, b_s, a_mean, b_mean, interval, ratio) = if !pairs.is_empty() {
        let a_means: Vec<f64> = pairs.iter().map(|(x, _)| mean(x)).collect();
        let b_means: Vec<f64> = pairs.iter().map(|(_, y)| mean(y)).collect();
        let i = stats::bootstrap_paired_ratio(&pairs, s.resamples, s.seed);
        let ratio = i.map_or(mean(&b_means) / mean(&a_means), |i| i.estimate);
        let spread = pairs.len() > 1 || pairs.iter().any(|(x, y)| x.len() > 1 || y.len() > 1);
        (
            "paired-bootstrap-mean-ratio",
            pairs.len(),
            pairs.iter().map(|p| p.0.len()).sum(),
            pairs.iter().map(|p| p.1.len()).sum(),
            mean(&a_means),
            mean(&b_means),
            i.filter(|_| spread),
            ratio,
        )
    } else if !a_only.is_empty() && !b_only.is_empty() {
        let am: Vec<f64> = a_only.iter().map(|x| mean(x)).collect();
        let bm: Vec<f64> = b_only.iter().map(|x| mean(x)).collect();
        let i = stats::bootstrap_ratio_of_means(&am, &bm, s.resamples, s.seed);
        let spread = am.len() > 1 || bm.len() > 1;
        (
            "unpaired-bootstrap-ratio-of-means",
            am.len().min(bm.len()),
            a_only.iter().map(Vec::len).sum(),
            b_only.iter().map(Vec::len).sum(),
            mean(&am),
            mean(&bm),
            i.filter(|_| spread),
            mean(&bm) / mean(&am),
        )
    } else {
        return None;
    };
    let (verdict, note) = match interval {
        None => (Verdict::Undecided, Some("one sample a side, no spread: nothing to judge variation by".to_string())),
        Some(i) if i.contains(1.0) => {
            let wide = (i.high - i.estimate).max(i.estimate - i.low);
            let note = (wide > WIDE).then(|| {
                format!(
                    "the interval is wide (±{:.0}%): a change smaller than that cannot be told from noise",
                    wide * 100.0
                )
            });
            (Verdict::Within, note)
        }
        Some(_) => (Verdict::Beyond, None),
    };
    let note = match (note, items) {
        (None, 2..=9) if verdict != Verdict::Undecided => {
            Some(format!("only {items} items: a bootstrap over so few is too narrow; repeat the runs to be sure"))
        }
        (n, _) => n,
    };
    // An undefined ratio reads as below 1, as it did.
    let direction =
        Direction::from_comparison(ratio.partial_cmp(&1.0).unwrap_or(std::cmp::Ordering::Less), higher_better);
    Some(FigureDiff {
        metric: name.into(),
        unit,
        higher_better,
        method: method.into(),
        items,
        a_samples: a_s,
        b_samples: b_s,
        a_mean,
        b_mean,
        ratio,
        interval: interval.map(|i| [i.low, i.high]),
        verdict,
        direction,
        note,
    })
}

fn row(a: &Side, b: &Side, title: &str, s: Settings) -> RowDiff {
    let in_row = |side: &Side| -> BTreeSet<Key> {
        side.rows.iter().filter(|(_, rows)| rows.iter().any(|r| r == title)).map(|(k, _)| k.clone()).collect()
    };
    let (ka, kb) = (in_row(a), in_row(b));
    let all: BTreeSet<&Key> = ka.iter().chain(kb.iter()).collect();
    let mut lost = Vec::new();
    let mut not_applicable = 0;
    let mut kept: BTreeSet<&Key> = BTreeSet::new();
    for k in &all {
        let oa = latest(a, k).map(|(_, c)| c);
        let ob = latest(b, k).map(|(_, c)| c);
        let is = |c: Option<&CaseRecord>, o: Outcome| c.is_some_and(|c| c.outcome == o);
        let (la, lb) = (is(oa, Outcome::Lost), is(ob, Outcome::Lost));
        if la || lb {
            let reason = [oa.filter(|_| la), ob.filter(|_| lb)]
                .into_iter()
                .flatten()
                .map(|c| c.reason.clone().unwrap_or_default())
                .collect::<Vec<_>>()
                .join(" | ");
            let side = if la && lb {
                "both"
            } else if la {
                "a"
            } else {
                "b"
            };
            lost.push(LostItem { case: case_name(k), side: side.into(), reason });
            continue;
        }
        if is(oa, Outcome::NotApplicable) || is(ob, Outcome::NotApplicable) {
            not_applicable += 1;
            continue;
        }
        kept.insert(k);
    }
    // What the baseline answered and the candidate did not: a comparison
    // that leaves these out is incomplete, never "unchanged".
    let unanswered: Vec<Unanswered> = all
        .iter()
        .filter_map(|k| {
            let (ra, oa) = latest(a, k)?;
            if !matches!(oa.outcome, Outcome::Pass | Outcome::Fail) {
                return None;
            }
            let why = match latest(b, k).map(|(_, c)| c) {
                None => "not recorded".to_string(),
                Some(c) if matches!(c.outcome, Outcome::Lost | Outcome::Interrupted) => {
                    format!("{}: {}", c.outcome.as_str(), c.reason.as_deref().unwrap_or(""))
                }
                Some(_) => return None,
            };
            Some(Unanswered { case: case_name(k), a: format!("{ra}#{}", oa.id), why })
        })
        .collect();
    let pass_rate = pass_rate(a, b, &kept);
    // A declared row compares its own metric (the candidate's declaration
    // where the two sides differ); a built-in row, every per-item figure
    // of the built-in rows that its records carry.
    let declared = [b, a]
        .into_iter()
        .flat_map(|side| side.manifests.iter().rev())
        .flat_map(|m| &m.rows)
        // A declaration that fails its check (a built-in title, say, in a
        // crafted file) is no declaration.
        .find(|d| d.title == title && sparktest_rows::check(d).is_ok());
    let mut figures: Vec<FigureDiff> = sparktest_rows::compared(declared)
        .iter()
        .filter_map(|(name, hb)| figure(a, b, &kept, name, *hb, s, declared.is_some()))
        .collect();
    if let Some(how) = sparktest_rows::by_requests(title) {
        figures.extend(super::requests::figure(a, b, &kept, s, how));
    }
    RowDiff {
        row: title.into(),
        pass_rate,
        figures,
        lost,
        unanswered,
        not_applicable,
        only_in_a: ka.difference(&kb).count(),
        only_in_b: kb.difference(&ka).count(),
    }
}

/// The configuration fields of a manifest, by name.
fn config_fields(m: &Manifest) -> BTreeMap<String, String> {
    let t = &m.target;
    let mut f = BTreeMap::new();
    let or_dash = |o: &Option<String>| o.clone().unwrap_or_else(|| "-".into());
    f.insert("engine".to_string(), t.engine.clone());
    f.insert("build".to_string(), or_dash(&t.build));
    f.insert("model id".to_string(), t.model_id.clone());
    f.insert("model sha256".to_string(), or_dash(&t.model_sha256));
    f.insert("launch command".to_string(), t.launch_flags().unwrap_or_else(|| "-".into()));
    f.insert("tool choice".to_string(), or_dash(&t.tool_choice));
    f.insert("suite".to_string(), format!("{} {} sha256:{}", m.suite.name, m.suite.version, m.suite.sha256));
    for (k, v) in &t.facts {
        if let Some(pin) = k.strip_prefix("pin.").or_else(|| k.strip_prefix("provisioned.")) {
            f.insert(format!("pin {pin}"), v.clone());
        }
    }
    f
}

fn configuration(a: &Side, b: &Side) -> Vec<ConfigDifference> {
    let values = |s: &Side| {
        let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for m in &s.manifests {
            for (k, v) in config_fields(m) {
                out.entry(k).or_default().insert(v);
            }
        }
        out
    };
    let (va, vb) = (values(a), values(b));
    let fields: BTreeSet<&String> = va.keys().chain(vb.keys()).collect();
    let join = |s: Option<&BTreeSet<String>>| {
        s.map_or_else(|| "-".to_string(), |s| s.iter().cloned().collect::<Vec<_>>().join("; "))
    };
    fields
        .into_iter()
        .filter(|f| va.get(*f) != vb.get(*f))
        .map(|f| ConfigDifference { field: f.clone(), a: join(va.get(f)), b: join(vb.get(f)) })
        .collect()
}

/// Compare B against A.
pub fn compare(a: &Side, b: &Side, s: Settings) -> Report {
    let mut titles = a.row_order.clone();
    for r in &b.row_order {
        if !titles.contains(r) {
            titles.push(r.clone());
        }
    }
    let rows: Vec<RowDiff> = titles.iter().map(|t| row(a, b, t, s)).collect();
    let worse = |v: Verdict, d: Direction| v == Verdict::Beyond && d == Direction::Worse;
    let regression = rows.iter().any(|r| {
        r.pass_rate.as_ref().is_some_and(|p| worse(p.verdict, p.direction))
            || r.figures.iter().any(|f| worse(f.verdict, f.direction))
    });
    let unanswered: usize = rows.iter().map(|r| r.unanswered.len()).sum();
    let mut incomplete: Vec<String> = b.unfinished.iter().map(|w| format!("B's run {w}")).collect();
    if unanswered > 0 {
        incomplete.insert(0, format!("{unanswered} items the baseline answered were lost or not recorded on B"));
    }
    let info =
        |s: &Side| SideInfo { spec: s.spec.clone(), runs: s.manifests.iter().map(|m| m.run_id.clone()).collect() };
    Report {
        format: "sparktest-diff 1".into(),
        a: info(a),
        b: info(b),
        configuration: configuration(a, b),
        seed: s.seed,
        resamples: s.resamples,
        alpha: ALPHA,
        rows,
        regression,
        incomplete,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, outcome: &str) -> CaseRecord {
        serde_json::from_value(serde_json::json!({
            "id": id, "instrument": "a-bench", "case": id, "tags": ["Agent tasks"], "outcome": outcome,
            "reason": null, "metrics": [], "notes": [], "started_at": "t", "seconds": 1.0,
            "endpoint_seconds": 0.5, "calls": [], "prompt_tokens": null, "completion_tokens": null,
            "transcript_sha256": "00", "snapshots": []
        }))
        .unwrap()
    }

    /// A side of `n` items named `prefix{i}`, the first `passed` passing.
    fn side(prefix: &str, passed: usize, n: usize) -> Side {
        let mut s = Side {
            spec: prefix.into(),
            manifests: vec![],
            records: BTreeMap::new(),
            rows: BTreeMap::new(),
            row_order: vec!["Agent tasks".into()],
            unfinished: vec![],
        };
        for i in 0..n {
            let id = format!("{prefix}{i:02}");
            let key = (None, id.clone());
            let c = record(&id, if i < passed { "pass" } else { "fail" });
            s.rows.insert(key.clone(), vec!["Agent tasks".into()]);
            s.records.insert(key, vec![("run".into(), c)]);
        }
        s
    }

    #[test]
    fn items_that_differ_are_compared_unpaired_with_fishers_test() {
        // Another suite version: no item in common, 51/60 against 36/60.
        let r = compare(&side("old", 51, 60), &side("new", 36, 60), Settings { seed: 1, resamples: 100 });
        let p = r.rows[0].pass_rate.as_ref().unwrap();
        assert_eq!((p.test.as_str(), p.paired), ("fisher-exact", 0));
        // Fisher's exact p for [[51, 9], [36, 24]], computed exactly in Python.
        assert!((p.p_value - 0.0038184521965669324).abs() < 1e-9, "{}", p.p_value);
        assert_eq!((p.verdict, p.direction), (Verdict::Beyond, Direction::Worse));
        assert_eq!((r.rows[0].only_in_a, r.rows[0].only_in_b), (60, 60));
        assert!(r.regression);
    }
}
