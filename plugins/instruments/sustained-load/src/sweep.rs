//! The sweep, as GuideLLM's: a synchronous baseline (one request at a
//! time), the maximum throughput (every request at once), then offered
//! rates rising: first shares of the baseline's achieved rate
//! (`sweep_below`, a quarter, a half and three quarters unless the suite
//! says otherwise: an open loop queues where one request at a time never
//! waits, so a slow server may hold none of the rates above its
//! one-at-a-time rate), then rates spaced evenly from the baseline's rate
//! up to the throughput's (`linspace(low, high, points - 1)[1..]`). Rates
//! stop rising once one saturates the server (achieved below 90% of the
//! schedule, or more lost than the budget) or the host marks one
//! client-bound; the rates not run are named.
//!
//! The row's figure is the highest offered rate that held (not saturated,
//! not client-bound) with goodput at or above the threshold, as its
//! schedule offered it ([`sustained`]). The baseline and the throughput
//! points are not offered rates and never the figure.
//!
//! Each point is run by a closure, so that the rule is tested on crafted
//! loads.

use crate::config::{Mix, Settings};
use crate::figures::{Figures, Load, figures, saturation};

/// What a point of a load is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// One request at a time.
    Synchronous,
    /// Every request at once.
    Throughput,
    /// Open-loop arrivals at this offered rate, req/s.
    Rate(f64),
}

impl Kind {
    /// The offered rate, for a rated point.
    pub fn rate(self) -> Option<f64> {
        match self {
            Kind::Rate(r) => Some(r),
            _ => None,
        }
    }
}

/// What one point sends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PointPlan {
    /// Its kind.
    pub kind: Kind,
    /// The cap on requests in flight: 1 for the baseline, the suite's for
    /// a rate, none for the throughput.
    pub max_concurrency: Option<u32>,
    /// Measured requests.
    pub count: u32,
    /// Warm-up requests first.
    pub warmup: u32,
}

impl PointPlan {
    /// The plan of a point of `kind` under `s`.
    pub fn new(s: &Settings, kind: Kind) -> Self {
        let max_concurrency = match kind {
            Kind::Synchronous => Some(1),
            Kind::Throughput => None,
            Kind::Rate(_) => s.max_concurrency,
        };
        PointPlan { kind, max_concurrency, count: s.count(kind.rate()), warmup: s.warmup }
    }
}

/// One point as it went.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// What was sent.
    pub plan: PointPlan,
    /// What the host reported.
    pub load: Load,
    /// Its figures; None when the host marked it client-bound (they would
    /// be the client's, not the server's).
    pub figures: Option<Figures>,
    /// Why it saturated the server, if it did.
    pub saturated: Option<String>,
}

impl Point {
    /// Judge what the host reported for `plan`.
    pub fn judge(plan: PointPlan, load: Load, mix: &Mix, s: &Settings) -> Point {
        let rated = plan.kind.rate().is_some();
        let (figures, saturated) = if load.client_bound.is_some() {
            (None, None)
        } else {
            let f = figures(&load, &mix.objectives, rated);
            let why = saturation(&f, rated, s.lost_budget_pct);
            (Some(f), why)
        };
        Point { plan, load, figures, saturated }
    }

    /// Its goodput, where it has figures.
    pub fn goodput_pct(&self) -> Option<f64> {
        self.figures.as_ref().and_then(|f| f.goodput_pct)
    }

    /// Whether it held: figures of the server's, not saturated.
    pub fn held(&self) -> bool {
        self.figures.is_some() && self.saturated.is_none()
    }

    /// The rate this point sustained, where it counts for the row's
    /// figure: an offered rate that held with goodput at or above
    /// `threshold_pct`, as its schedule offered it (its seeded draws over
    /// the measured requests), not the nominal rate: ten Poisson draws may
    /// offer a third less than asked, and the server held what it got.
    pub fn sustained(&self, threshold_pct: f64) -> Option<f64> {
        let nominal = self.plan.kind.rate()?;
        let counts = self.held() && self.goodput_pct().is_some_and(|g| g >= threshold_pct);
        counts.then(|| self.figures.as_ref().and_then(|f| f.scheduled_req_s).unwrap_or(nominal))
    }

    /// Why this rated point does not count for the row's figure, in a few
    /// words (`client-bound`, `saturated (goodput 40%)`, `goodput 70%`).
    pub fn why_not(&self) -> String {
        match (&self.figures, &self.saturated, self.goodput_pct()) {
            (None, _, _) => "client-bound".into(),
            (_, Some(_), Some(g)) => format!("saturated (goodput {g:.0}%)"),
            (_, Some(_), None) => "saturated".into(),
            (_, _, Some(g)) => format!("goodput {g:.0}%"),
            _ => "nothing measured".into(),
        }
    }
}

/// A sweep as it went.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    /// Every point run, in order.
    pub points: Vec<Point>,
    /// The rates spaced between the baseline and the throughput.
    pub rates: Vec<f64>,
    /// Why the rates stopped before the last, if they did.
    pub stopped: Option<String>,
    /// The rates not run, once they stopped.
    pub not_run: Vec<f64>,
}

/// `x` to three significant figures (a rate as a sweep offers it).
pub fn three_figures(x: f64) -> f64 {
    if !(x.is_finite() && x > 0.0) {
        return x;
    }
    let scale = 10f64.powi(2 - x.log10().floor() as i32);
    (x * scale).round() / scale
}

/// The `points - 2` rates of a sweep between `a` and `b` (either order),
/// rising: `linspace(low, high, points - 1)` without its first, each to
/// three significant figures, a repeat left out.
pub fn spaced(a: f64, b: f64, points: u32) -> Vec<f64> {
    let (low, high) = if a <= b { (a, b) } else { (b, a) };
    let steps = points.saturating_sub(2);
    let mut rates: Vec<f64> = Vec::new();
    for i in 1..=steps {
        let r = three_figures(low + (high - low) * f64::from(i) / f64::from(steps));
        if r > 0.0 && rates.last().is_none_or(|last| r > *last) {
            rates.push(r);
        }
    }
    rates
}

/// Every offered rate of a sweep whose baseline achieved `low` and
/// throughput `high`: the shares of `low` below it, then [`spaced`] between
/// them, each to three significant figures, rising, each once.
pub fn rising(low: f64, high: f64, s: &Settings) -> Vec<f64> {
    let mut rates: Vec<f64> =
        s.sweep_below.iter().map(|share| three_figures(low * share)).filter(|r| *r > 0.0).collect();
    rates.extend(spaced(low, high, s.sweep_points));
    rates.sort_by(f64::total_cmp);
    rates.dedup();
    rates
}

/// Run the sweep of `mix`, each point through `run`.
pub fn sweep(s: &Settings, mix: &Mix, mut run: impl FnMut(&PointPlan) -> Load) -> Sweep {
    let mut points: Vec<Point> = Vec::new();
    let mut go = |kind: Kind, points: &mut Vec<Point>| {
        let plan = PointPlan::new(s, kind);
        let load = run(&plan);
        points.push(Point::judge(plan, load, mix, s));
        points.last().cloned().expect("just pushed")
    };
    let baseline = go(Kind::Synchronous, &mut points);
    let stop =
        |why: String, points: Vec<Point>| Sweep { points, rates: Vec::new(), stopped: Some(why), not_run: Vec::new() };
    let low = match (
        &baseline.load.client_bound,
        &baseline.saturated,
        baseline.figures.as_ref().and_then(|f| f.achieved_req_s),
    ) {
        (Some(why), _, _) => {
            return stop(format!("the synchronous baseline was client-bound ({why}): no rates spaced"), points);
        }
        (_, Some(why), _) => return stop(format!("the synchronous baseline saturated the server ({why})"), points),
        (_, _, None) => return stop("the synchronous baseline achieved no rate".into(), points),
        (_, _, Some(r)) => r,
    };
    let top = go(Kind::Throughput, &mut points);
    let high = match (&top.load.client_bound, top.figures.as_ref().and_then(|f| f.achieved_req_s)) {
        (Some(why), _) => {
            return stop(format!("the maximum-throughput point was client-bound ({why}): no rates spaced"), points);
        }
        (_, None) => return stop("the maximum-throughput point achieved no rate".into(), points),
        (_, Some(r)) => r,
    };
    let rates = rising(low, high, s);
    let mut stopped = None;
    let mut not_run = Vec::new();
    for (i, rate) in rates.iter().enumerate() {
        let p = go(Kind::Rate(*rate), &mut points);
        let why = match (&p.load.client_bound, &p.saturated) {
            // Nothing sent: the host found its schedule past the case's limit.
            (Some(why), _) if p.load.requests.is_empty() => Some(format!("{rate} requests/s was not offered: {why}")),
            (Some(why), _) => Some(format!("the client could not hold {rate} requests/s ({why})")),
            (_, Some(why)) => Some(format!("saturated at {rate} requests/s: {why}")),
            _ => None,
        };
        if let Some(why) = why {
            not_run = rates[i + 1..].to_vec();
            stopped = (!not_run.is_empty()).then_some(why);
            break;
        }
    }
    Sweep { points, rates, stopped, not_run }
}

/// The row's figure on a sweep: the point and rate of the highest offered
/// rate that held with goodput at or above `threshold_pct`
/// ([`Point::sustained`]), or why there is none.
pub fn sustained(sweep: &Sweep, threshold_pct: f64) -> Result<(usize, f64), String> {
    let best = sweep
        .points
        .iter()
        .enumerate()
        .filter_map(|(i, p)| Some((i, p.sustained(threshold_pct)?)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    if let Some(best) = best {
        return Ok(best);
    }
    let tried: Vec<String> =
        sweep.points.iter().filter_map(|p| Some(format!("{}: {}", p.plan.kind.rate()?, p.why_not()))).collect();
    if tried.is_empty() {
        return Err("no offered rate was run".into());
    }
    Err(format!("no offered rate held with goodput at or above {threshold_pct}% (requests/s: {})", tried.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Arrival, Settings};
    use crate::figures::tests::{answer, load, sent};
    use crate::figures::{Missed, Objectives};

    fn settings(points: u32) -> Settings {
        Settings {
            mixes: Vec::new(),
            arrival: Arrival::Poisson,
            seed: 7,
            requests: 10,
            duration_secs: None,
            warmup: 1,
            max_concurrency: None,
            sweep_points: points,
            sweep_below: Vec::new(),
            goodput_threshold_pct: 90.0,
            lost_budget_pct: 10.0,
        }
    }

    fn mix() -> Mix {
        Mix {
            name: "agent-turn".into(),
            prompts: "a.json".into(),
            max_tokens: 8,
            ignore_eos: false,
            rates: Vec::new(),
            objectives: Objectives { ttft_ms: Some(1000.0), ..Objectives::default() },
        }
    }

    /// A fake server: one request alone takes `sync_ms`; a burst drains
    /// at `burst` a second; open-loop arrivals are served at `capacity` a
    /// second, a queue building past it and TTFT growing with the wait.
    fn server(sync_ms: f64, burst: f64, capacity: f64) -> impl FnMut(&PointPlan) -> Load {
        move |plan| {
            let n = plan.count as usize + plan.warmup as usize;
            let each = 1000.0 / capacity;
            let mut free = 0.0f64;
            let reqs = (0..n)
                .map(|i| {
                    let (at, ended, wait) = match plan.kind {
                        Kind::Synchronous => (i as f64 * sync_ms, (i + 1) as f64 * sync_ms, 0.0),
                        Kind::Throughput => (0.0, (i + 1) as f64 * 1000.0 / burst, 0.0),
                        Kind::Rate(r) => {
                            let at = i as f64 * 1000.0 / r;
                            let start = at.max(free);
                            free = start + each;
                            (at, free, start - at)
                        }
                    };
                    let mut s = sent(at, Ok(answer(wait + 50.0, 5.0, 8)));
                    s.ended_ms = ended;
                    s.warmup = i < plan.warmup as usize;
                    s
                })
                .collect();
            load(reqs)
        }
    }

    #[test]
    fn rates_are_spaced_between_the_baseline_and_the_throughput() {
        assert_eq!(spaced(1.0, 3.0, 5), [1.67, 2.33, 3.0]);
        assert_eq!(spaced(3.0, 1.0, 4), [2.0, 3.0]);
        assert_eq!(spaced(1.0, 3.0, 2), Vec::<f64>::new());
        assert_eq!(spaced(0.5, 0.5, 5), [0.5], "the same rate is offered once");
        assert_eq!(three_figures(0.012345), 0.0123);
        assert_eq!(three_figures(1234.5), 1230.0);
    }

    #[test]
    fn a_server_that_holds_no_rate_above_its_one_at_a_time_rate_holds_one_below_it() {
        // One request alone takes 500 ms (2/s); open-loop arrivals are
        // served at 1.2/s only (two slots sharing one CPU): every rate
        // between the baseline and the burst saturates, half of the
        // baseline holds.
        let mut s = settings(5);
        s.sweep_below = vec![0.25, 0.5, 0.75];
        assert_eq!(rising(2.0, 3.0, &s), [0.5, 1.0, 1.5, 2.33, 2.67, 3.0]);
        let sw = sweep(&s, &mix(), server(500.0, 2.2, 1.2));
        let kinds: Vec<Kind> = sw.points.iter().map(|p| p.plan.kind).collect();
        assert_eq!(kinds[2..], [Kind::Rate(0.5), Kind::Rate(1.0), Kind::Rate(1.5)], "{kinds:?}");
        assert!(sw.stopped.as_deref().unwrap().starts_with("saturated at 1.5 requests/s"), "{:?}", sw.stopped);
        let (i, rate) = sustained(&sw, 90.0).unwrap();
        assert_eq!((i, rate), (3, 1.0));
        // Without the shares, nothing held.
        s.sweep_below.clear();
        assert!(sustained(&sweep(&s, &mix(), server(500.0, 2.2, 1.2)), 90.0).is_err());
    }

    #[test]
    fn a_sweep_stops_rising_once_the_server_saturates_and_says_so() {
        // The baseline achieves 2/s, the burst 3/s: rates 2.25, 2.5, 2.75
        // and 3 between. Served at 2.4/s, 2.5 still keeps 96% of its
        // schedule; 2.75 gets 87% and saturates; 3 is never offered.
        let s = settings(6);
        let sw = sweep(&s, &mix(), server(500.0, 3.3, 2.4));
        let kinds: Vec<Kind> = sw.points.iter().map(|p| p.plan.kind).collect();
        assert_eq!(
            kinds,
            [Kind::Synchronous, Kind::Throughput, Kind::Rate(2.25), Kind::Rate(2.5), Kind::Rate(2.75)],
            "{:?}",
            sw.rates
        );
        assert_eq!(sw.points[0].plan.max_concurrency, Some(1));
        assert_eq!(sw.points[1].plan.max_concurrency, None);
        assert!(sw.points[..4].iter().all(|p| p.saturated.is_none()));
        let why = sw.stopped.as_deref().unwrap();
        assert!(why.starts_with("saturated at 2.75 requests/s") && why.contains("below 90%"), "{why}");
        assert_eq!(sw.not_run, [3.0]);
        assert_eq!(sustained(&sw, 90.0), Ok((3, 2.5)));
    }

    #[test]
    fn a_saturated_rate_is_never_the_figure_even_with_its_objectives_met() {
        let s = settings(4);
        let mut sw = sweep(&s, &mix(), server(10.0, 100.0, 1000.0));
        let last = sw.points.len() - 1;
        let rate = sw.points[last].plan.kind.rate().unwrap();
        assert_eq!(sustained(&sw, 90.0).map(|(_, r)| r), Ok(rate));
        sw.points[last].saturated = Some("achieved below 90%".into());
        let (_, below) = sustained(&sw, 90.0).unwrap();
        assert!(below < rate);
    }

    #[test]
    fn a_client_bound_rate_has_no_figures_stops_the_sweep_and_is_never_the_figure() {
        let s = settings(6);
        let mut fake = server(10.0, 100.0, 1000.0);
        let mut rated = 0;
        let sw = sweep(&s, &mix(), |plan| {
            let mut l = fake(plan);
            if plan.kind.rate().is_some() {
                rated += 1;
                if rated == 2 {
                    l.client_bound = Some("the p99 send lag was 40 ms".into());
                }
            }
            l
        });
        let bound = &sw.points[3];
        assert!(bound.figures.is_none() && !bound.held(), "{bound:?}");
        assert!(sw.stopped.as_deref().unwrap().contains("the client could not hold"), "{:?}", sw.stopped);
        assert_eq!(sw.points.len(), 4);
        let (i, _) = sustained(&sw, 90.0).unwrap();
        assert_eq!(i, 2, "the rate below the client-bound one");
    }

    #[test]
    fn no_rate_meeting_the_threshold_is_said_not_zero() {
        let s = settings(4);
        let mut strict = mix();
        strict.objectives.ttft_ms = Some(0.001);
        let sw = sweep(&s, &strict, server(10.0, 100.0, 1000.0));
        let why = sustained(&sw, 90.0).unwrap_err();
        assert!(why.contains("no offered rate held") && why.contains("goodput 0%"), "{why}");
    }

    #[test]
    fn a_baseline_that_loses_requests_stops_the_sweep() {
        let s = settings(5);
        let sw = sweep(&s, &mix(), |plan| {
            let reqs = (0..plan.count + plan.warmup)
                .map(|i| sent(f64::from(i) * 100.0, Err(Missed::Lost("connection refused".into()))))
                .collect();
            load(reqs)
        });
        assert_eq!(sw.points.len(), 1);
        assert!(sw.stopped.as_deref().unwrap().contains("synchronous baseline saturated"), "{:?}", sw.stopped);
        assert_eq!(sustained(&sw, 90.0).unwrap_err(), "no offered rate was run");
    }
}
