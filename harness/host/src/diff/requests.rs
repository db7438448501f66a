//! A row's figure that one record gives once, tested by resampling its
//! requests ([`sparktest_rows::ByRequests`]: Sustained load's
//! `sustained-req-s`, the highest offered rate that held). What varies
//! from run to run is which requests met the objectives, so the interval
//! resamples each side's requests, reads the figure again
//! ([`Sweep::resampled`]), and averages the ratio B ÷ A over the items both
//! sides ran.

use std::collections::BTreeSet;

use sparktest_record::Outcome;
use sparktest_rows::ByRequests;
use sparktest_rows::coded::sustained_load::requests::Sweep;
use sparktest_stats as stats;

use super::load::{Key, Side};
use super::report::{Direction, FigureDiff, Settings, Verdict};

/// The sweeps of one item on one side, over its repeated records; lost,
/// N/A and unreadable records give none.
fn sweeps(side: &Side, key: &Key, how: ByRequests) -> Vec<Sweep> {
    side.records
        .get(key)
        .into_iter()
        .flatten()
        .filter(|(_, c)| matches!(c.outcome, Outcome::Pass | Outcome::Fail))
        .filter_map(|(_, c)| (how.read)(c))
        .collect()
}

fn mean(xs: impl Iterator<Item = f64>) -> Option<f64> {
    let (n, sum) = xs.fold((0usize, 0.0), |(n, s), x| (n + 1, s + x));
    (n > 0).then(|| sum / n as f64)
}

/// The figure `how` reads, of B against A over the kept items.
pub fn figure(a: &Side, b: &Side, keys: &BTreeSet<&Key>, s: Settings, how: ByRequests) -> Option<FigureDiff> {
    let pairs: Vec<(Vec<Sweep>, Vec<Sweep>)> = keys
        .iter()
        .map(|k| (sweeps(a, k, how), sweeps(b, k, how)))
        .filter(|(x, y)| !x.is_empty() && !y.is_empty())
        .collect();
    if pairs.is_empty() {
        return None;
    }
    let side_figure = |sw: &[Sweep], f: &mut dyn FnMut(&Sweep) -> f64| mean(sw.iter().map(f));
    let observed: Vec<(f64, f64)> = pairs
        .iter()
        .filter_map(|(x, y)| Some((side_figure(x, &mut Sweep::observed)?, side_figure(y, &mut Sweep::observed)?)))
        .collect();
    let a_mean = mean(observed.iter().map(|o| o.0)).unwrap_or(0.0);
    let b_mean = mean(observed.iter().map(|o| o.1)).unwrap_or(0.0);
    // An item none of A's rates held has no ratio: left out, and said.
    let ratios: Vec<f64> = observed.iter().filter(|o| o.0 > 0.0).map(|o| o.1 / o.0).collect();
    let ratio = mean(ratios.iter().copied());
    let unheld = observed.len() - ratios.len();
    let interval = ratio.and_then(|estimate| {
        stats::bootstrap_with(estimate, s.resamples, s.seed, |rng| {
            let mut sum = 0.0;
            let mut n = 0;
            for (x, y) in &pairs {
                let fa = side_figure(x, &mut |w| w.resampled(rng))?;
                let fb = side_figure(y, &mut |w| w.resampled(rng))?;
                if fa > 0.0 {
                    sum += fb / fa;
                    n += 1;
                }
            }
            (n > 0).then(|| sum / n as f64)
        })
    });
    let requests = |sw: &[Sweep]| sw.iter().map(Sweep::requests).sum::<usize>();
    let (verdict, mut note) = match (ratio, interval) {
        (None, _) => (Verdict::Undecided, Some("no rate held on A: there is no figure to compare against".to_string())),
        (_, None) => (Verdict::Undecided, Some("too few requests to resample".to_string())),
        (_, Some(i)) if i.contains(1.0) => (Verdict::Within, None),
        (_, Some(_)) => (Verdict::Beyond, None),
    };
    if unheld > 0 && ratio.is_some() {
        note = Some(format!("{unheld} sweep(s) with no rate held on A left out of the ratio"));
    }
    // Without a ratio the means still say which way B went.
    let direction =
        Direction::from_comparison(ratio.map_or(b_mean.total_cmp(&a_mean), |r| r.total_cmp(&1.0)), how.higher_better);
    let ratio = ratio.unwrap_or(f64::NAN);
    Some(FigureDiff {
        metric: how.metric.into(),
        unit: how.unit.into(),
        higher_better: how.higher_better,
        method: how.method.into(),
        items: pairs.len(),
        a_samples: pairs.iter().map(|p| requests(&p.0)).sum(),
        b_samples: pairs.iter().map(|p| requests(&p.1)).sum(),
        a_mean,
        b_mean,
        ratio,
        interval: interval.map(|i| [i.low, i.high]),
        verdict,
        direction,
        note,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use sparktest_record::CaseRecord;
    use sparktest_rows::coded::sustained_load::requests::{METHOD, sweep};

    use super::*;

    fn sustained() -> ByRequests {
        sparktest_rows::by_requests("Sustained load").unwrap()
    }

    /// A sweep record of `sustained-load`: the probe, then per point
    /// `(kind, scheduled rate, saturated, ttft of each measured request
    /// (None: lost))` after one warm-up.
    fn record(points: &[(&str, f64, bool, Vec<Option<f64>>)]) -> CaseRecord {
        let call = |ttft: Option<f64>, warmup: bool, intended: Option<f64>| {
            serde_json::json!({
                "kind": "chat", "result": if ttft.is_some() { "ok" } else { "lost" }, "status": 200,
                "total_ms": 1000.0, "ttft_ms": ttft, "decode_ms": 700.0, "prompt_tokens": 80,
                "completion_tokens": 8, "token_source": "server-usage", "attempts": 1,
                "intended_ms": intended, "sent_ms": intended, "warmup": warmup
            })
        };
        let mut calls = vec![call(Some(10.0), false, None)];
        let mut metrics = vec![
            serde_json::json!({"name": "points", "value": points.len() as f64, "unit": "points"}),
            serde_json::json!({"name": "goodput-threshold", "value": 90.0, "unit": "%"}),
            serde_json::json!({"name": "ttft-objective-ms", "value": 500.0, "unit": "ms"}),
            serde_json::json!({"name": "tpot-objective-ms", "value": 150.0, "unit": "ms"}),
        ];
        let mut notes = Vec::new();
        for (i, (kind, rate, saturated, ttfts)) in points.iter().enumerate() {
            let n = i + 1;
            calls.push(call(Some(10.0), true, Some(0.0)));
            calls.extend(ttfts.iter().map(|t| call(*t, false, Some(1.0))));
            let m =
                |name: &str, v: f64| serde_json::json!({"name": format!("point{n}-{name}"), "value": v, "unit": ""});
            metrics.extend([
                m("warmup-requests", 1.0),
                m("requests", ttfts.len() as f64),
                m("scheduled-req-s", *rate),
                m("saturated", if *saturated { 1.0 } else { 0.0 }),
            ]);
            notes.push((format!("point{n}-kind"), kind.to_string()));
        }
        serde_json::from_value(serde_json::json!({
            "id": "sustained-load::sweep::agent-turn", "instrument": "sustained-load", "case": "sweep::agent-turn",
            "tags": ["Sustained load"], "outcome": "pass", "reason": null, "metrics": metrics, "notes": notes,
            "started_at": "t", "seconds": 1.0, "endpoint_seconds": 0.5, "calls": calls, "prompt_tokens": null,
            "completion_tokens": null, "transcript_sha256": "00", "snapshots": []
        }))
        .unwrap()
    }

    fn side(records: Vec<CaseRecord>) -> Side {
        let key: Key = (None, "sustained-load::sweep::agent-turn".into());
        Side {
            spec: "s".into(),
            manifests: vec![],
            records: BTreeMap::from([(key.clone(), records.into_iter().map(|c| ("run".to_string(), c)).collect())]),
            rows: BTreeMap::from([(key, vec!["Sustained load".into()])]),
            row_order: vec!["Sustained load".into()],
            unfinished: vec![],
        }
    }

    fn fast(n: usize) -> Vec<Option<f64>> {
        vec![Some(100.0); n]
    }

    /// Ten requests, `slow` of them past the 500 ms TTFT objective.
    fn with_slow(slow: usize) -> Vec<Option<f64>> {
        (0..10).map(|i| Some(if i < slow { 900.0 } else { 100.0 })).collect()
    }

    #[test]
    fn a_sweep_reads_its_rates_requests_and_objectives_as_the_instrument_did() {
        let c = record(&[
            ("synchronous", 0.4, false, fast(10)),
            ("throughput", 1.9, false, fast(10)),
            ("rate", 0.99, false, with_slow(0)),
            ("rate", 1.41, false, with_slow(1)),
            ("rate", 1.8, true, fast(10)),
        ]);
        let w = sweep(&c).unwrap();
        // Only the rate points that held count; the saturated one never.
        assert_eq!(w.rates.iter().map(|r| r.req_s).collect::<Vec<_>>(), vec![0.99, 1.41]);
        assert_eq!(w.rates[1].good.iter().filter(|g| !**g).count(), 1);
        // 9 of 10 met the objectives at 1.41: 90% reaches the threshold.
        assert_eq!(w.observed(), 1.41);
        let c = record(&[("rate", 0.99, false, with_slow(0)), ("rate", 1.41, false, with_slow(2))]);
        assert_eq!(sweep(&c).unwrap().observed(), 0.99);
        // A lost request meets no objective.
        let mut lost = with_slow(0);
        lost[3] = None;
        lost[4] = None;
        assert_eq!(sweep(&record(&[("rate", 2.0, false, lost)])).unwrap().observed(), 0.0);
    }

    #[test]
    fn a_sweep_whose_calls_do_not_add_up_to_its_counts_is_not_read() {
        let mut c = record(&[("rate", 1.0, false, fast(10))]);
        c.calls.pop();
        assert_eq!(sweep(&c), None);
        let mut c = record(&[("rate", 1.0, false, fast(10))]);
        c.calls.push(c.calls[2].clone());
        assert_eq!(sweep(&c), None);
        let mut c = record(&[("rate", 1.0, false, fast(10))]);
        c.case = "rate::agent-turn::1rps".into();
        assert_eq!(sweep(&c), None);
    }

    fn compare(a: Vec<CaseRecord>, b: Vec<CaseRecord>) -> FigureDiff {
        let (a, b) = (side(a), side(b));
        let keys: BTreeSet<&Key> = a.records.keys().collect();
        figure(&a, &b, &keys, Settings { seed: 3, resamples: 2000 }, sustained()).unwrap()
    }

    #[test]
    fn a_candidate_that_holds_only_a_lower_rate_is_a_regression_beyond_variation() {
        let sweep = |third: Vec<Option<f64>>| {
            record(&[("rate", 0.5, false, fast(40)), ("rate", 1.0, false, fast(40)), ("rate", 2.0, false, third)])
        };
        // A holds 2 req/s with every request in objective; B's 2 req/s
        // point has a quarter of its requests past the TTFT objective.
        let mut slow = fast(40);
        slow[..10].fill(Some(900.0));
        let d = compare(vec![sweep(fast(40))], vec![sweep(slow)]);
        assert_eq!((d.metric.as_str(), d.method.as_str()), ("sustained-req-s", METHOD));
        assert_eq!((d.a_mean, d.b_mean, d.ratio), (2.0, 1.0, 0.5));
        assert_eq!((d.verdict, d.direction), (Verdict::Beyond, Direction::Worse));
        assert_eq!((d.a_samples, d.b_samples), (120, 120));
        let [low, high] = d.interval.unwrap();
        assert!(high < 1.0 && low <= 0.5, "{low} {high}");
    }

    #[test]
    fn a_rate_at_the_threshold_s_edge_is_within_variation_not_a_change() {
        // 9 of 10 good on A (just held), 8 of 10 on B (just missed): one
        // request's difference, which resampling ten requests cannot tell
        // from noise.
        let sweep = |slow| record(&[("rate", 0.5, false, with_slow(0)), ("rate", 1.0, false, with_slow(slow))]);
        let d = compare(vec![sweep(1)], vec![sweep(2)]);
        assert_eq!(d.ratio, 0.5);
        let [low, high] = d.interval.unwrap();
        assert!(low < 1.0 && high >= 1.0, "{low} {high}");
        assert_eq!(d.verdict, Verdict::Within);
        // The same records again: the same interval (the seed).
        assert_eq!(compare(vec![sweep(1)], vec![sweep(2)]).interval, d.interval);
    }

    #[test]
    fn a_baseline_with_no_rate_held_cannot_be_compared_and_says_so() {
        let none = record(&[("rate", 1.0, true, fast(10))]);
        let held = record(&[("rate", 1.0, false, fast(10))]);
        let d = compare(vec![none], vec![held]);
        assert_eq!((d.verdict, d.direction, d.interval), (Verdict::Undecided, Direction::Better, None));
        assert!(d.ratio.is_nan() && d.note.as_deref().unwrap().contains("no rate held on A"));
        // In JSON an undefined ratio is null, never a number.
        assert_eq!(serde_json::to_value(&d).unwrap()["ratio"], serde_json::Value::Null);
    }

    #[test]
    fn lost_and_not_applicable_records_give_no_sweep() {
        let mut lost = record(&[("rate", 1.0, false, fast(10))]);
        lost.outcome = Outcome::Lost;
        let s = side(vec![lost]);
        assert!(sweeps(&s, s.records.keys().next().unwrap(), sustained()).is_empty());
    }
}
