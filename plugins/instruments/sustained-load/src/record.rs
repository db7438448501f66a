//! What a case records: the figures of a load through the contract's names
//! (a rate case's at its top level, a sweep's each under its point), the
//! notes that say how they were taken, and the verdict.

use sparktest_sdk::Finding;
use sparktest_sdk::contract::sustained_load::{self as names, kind, point, point_note};
use sparktest_sdk::contract::{Metric, Note};

use crate::config::{Arrival, Mix, Settings};
use crate::figures::{Figures, Load, Pct};
use crate::sweep::{Kind, Point, Sweep, sustained};

/// How a figure of one load is named: as it is (a rate case), or under
/// its point (a sweep).
#[derive(Debug, Clone, Copy)]
pub enum Naming {
    /// At the case's top level.
    Top,
    /// Under point `n` (from 1) of a sweep.
    Point(u32),
}

impl Naming {
    fn metric(self, m: Metric) -> String {
        match self {
            Naming::Top => m.name().to_string(),
            Naming::Point(n) => point(n, m).to_string(),
        }
    }

    fn note(self, k: Note) -> String {
        match self {
            Naming::Top => k.name().to_string(),
            Naming::Point(n) => point_note(n, k).to_string(),
        }
    }
}

/// What a case says about its whole run: the mix, the arrival process and
/// seed, the objectives.
pub fn case_notes(mut f: Finding, s: &Settings, mix: &Mix) -> Finding {
    f = f
        .note(names::MIX, mix.name.clone())
        .note(names::ARRIVAL, s.arrival.words())
        .note(names::SEED, s.seed.to_string())
        .note(names::OBJECTIVES, mix.objectives.to_string());
    if let Arrival::Gamma(b) = s.arrival {
        f = f.metric(names::BURSTINESS, b, "factor");
    }
    if let Some(c) = s.max_concurrency {
        f = f.metric(names::MAX_CONCURRENCY, f64::from(c), "requests");
    }
    let o = mix.objectives;
    for (m, v) in [
        (names::TTFT_OBJECTIVE_MS, o.ttft_ms),
        (names::TPOT_OBJECTIVE_MS, o.tpot_ms),
        (names::E2E_OBJECTIVE_MS, o.e2e_ms),
    ] {
        if let Some(v) = v {
            f = f.metric(m, v, "ms");
        }
    }
    f
}

fn pct(mut f: Finding, at: Naming, p: Option<Pct>, [p50, p90, p99]: [Metric; 3]) -> Finding {
    if let Some(p) = p {
        f = f.metric(at.metric(p50), p.p50, "ms").metric(at.metric(p90), p.p90, "ms").metric(
            at.metric(p99),
            p.p99,
            "ms",
        );
    }
    f
}

fn opt(f: Finding, at: Naming, m: Metric, v: Option<f64>, unit: &str) -> Finding {
    match v {
        Some(v) if v.is_finite() => f.metric(at.metric(m), v, unit),
        _ => f,
    }
}

/// What a load sent and how well the host held its schedule: recorded
/// whether or not the figures are the server's.
fn schedule(mut f: Finding, at: Naming, kind: Kind, load: &Load) -> Finding {
    let measured = load.requests.iter().filter(|r| !r.warmup).count();
    let lag_max =
        load.requests.iter().filter(|r| !r.warmup).map(|r| (r.sent_ms - r.intended_ms).max(0.0)).fold(0.0, f64::max);
    f = opt(f, at, names::OFFERED_REQ_S, kind.rate(), "req/s");
    f.metric(at.metric(names::REQUESTS), measured as f64, "requests")
        .metric(at.metric(names::WARMUP_REQUESTS), (load.requests.len() - measured) as f64, "requests")
        .metric(at.metric(names::SEND_LAG_P99_MS), load.lag_p99_ms, "ms")
        .metric(at.metric(names::SEND_LAG_MAX_MS), lag_max, "ms")
}

/// The server's running and waiting counts, or n/a with why.
fn server_load(mut f: Finding, at: Naming, load: &Load) -> Finding {
    match &load.server {
        Some(s) if s.samples < 2 => f.metric(at.metric(names::SERVER_SAMPLES), f64::from(s.samples), "samples").note(
            at.note(names::SERVER_LOAD),
            format!("n/a: {} reading(s) of {} in the window: too few to say what the server ran", s.samples, s.source),
        ),
        Some(s) => {
            f = f
                .metric(at.metric(names::SERVER_RUNNING_MAX), f64::from(s.running_max), "requests")
                .metric(at.metric(names::SERVER_RUNNING_MEAN), s.running_mean, "requests")
                .metric(at.metric(names::SERVER_SAMPLES), f64::from(s.samples), "samples");
            let said = match s.waiting_max {
                Some(w) => {
                    f = f.metric(at.metric(names::SERVER_WAITING_MAX), f64::from(w), "requests");
                    s.source.clone()
                }
                None => format!("{}; waiting: n/a, the engine reports no waiting count", s.source),
            };
            f.note(at.note(names::SERVER_LOAD), said)
        }
        None => f.note(at.note(names::SERVER_LOAD), "n/a: the engine reports no live request count"),
    }
}

/// The figures of one load, under `at`.
pub fn load_figures(
    mut f: Finding,
    at: Naming,
    kind: Kind,
    load: &Load,
    figs: &Figures,
    saturated: Option<&str>,
) -> Finding {
    f = schedule(f, at, kind, load);
    f = opt(f, at, names::SCHEDULED_REQ_S, figs.scheduled_req_s, "req/s");
    f = opt(f, at, names::ACHIEVED_REQ_S, figs.achieved_req_s, "req/s");
    f = opt(f, at, names::OUTPUT_TOK_S, figs.output_tok_s, "tok/s");
    f = opt(f, at, names::PER_REQUEST_TOK_S, figs.per_request_tok_s, "tok/s");
    f = pct(f, at, figs.ttft, [names::TTFT_MS_P50, names::TTFT_MS_P90, names::TTFT_MS_P99]);
    f = pct(f, at, figs.tpot, [names::TPOT_MS_P50, names::TPOT_MS_P90, names::TPOT_MS_P99]);
    f = pct(f, at, figs.itl, [names::ITL_MS_P50, names::ITL_MS_P90, names::ITL_MS_P99]);
    f = pct(f, at, figs.e2e, [names::E2E_MS_P50, names::E2E_MS_P90, names::E2E_MS_P99]);
    f = opt(f, at, names::GOODPUT, figs.goodput_pct, "%");
    f = opt(f, at, names::GOODPUT_REQ_S, figs.goodput_req_s, "req/s");
    f = opt(f, at, names::PROMPT_TOKENS_MEAN, figs.prompt_tokens_mean, "tokens");
    f = f
        .metric(at.metric(names::ANSWERED_REQUESTS), figs.answered as f64, "requests")
        .metric(at.metric(names::LOST_REQUESTS), figs.lost as f64, "requests")
        .metric(at.metric(names::REJECTED_REQUESTS), figs.rejected as f64, "requests")
        .metric(at.metric(names::OUTPUT_TOKENS), figs.output_tokens as f64, "tokens")
        .metric(at.metric(names::WINDOW_MS), figs.window_ms, "ms")
        .metric(at.metric(names::SATURATED), if saturated.is_some() { 1.0 } else { 0.0 }, "flag");
    let saturation = match (saturated, figs.achieved_req_s, figs.scheduled_req_s) {
        (Some(why), _, _) => format!("saturated: {why}"),
        (None, Some(a), Some(s)) => format!("held: achieved {a:.3} of the {s:.3} requests/s the schedule offered"),
        (None, _, _) => "held".to_string(),
    };
    f = f.note(at.note(names::SATURATION), saturation);
    if !figs.missed.is_empty() {
        let said: Vec<String> = figs.missed.iter().map(|(why, n)| format!("{n} × {why}")).collect();
        f = f.note(
            at.note(names::LOST),
            format!(
                "{} lost and {} refused of {} measured requests, never in a latency: {}",
                figs.lost,
                figs.rejected,
                figs.requests,
                said.join("; ")
            ),
        );
    }
    let sources: Vec<&str> = figs.counted.iter().map(|c| c.word()).collect();
    if !sources.is_empty() {
        let mut said = sources.join(", ");
        if sources.contains(&"chunks") {
            said.push_str(" (the server gave no valid token count: content chunks counted)");
        }
        f = f.note(at.note(names::TOKEN_SOURCE), said);
    }
    server_load(f, at, load)
}

/// A client-bound load: only what it sent and the host's words.
fn client_bound(f: Finding, at: Naming, kind: Kind, load: &Load, why: &str) -> Finding {
    schedule(f, at, kind, load).note(
        at.note(names::CLIENT_BOUND),
        format!("{why}; the figures would measure the client, not the server, and are not recorded"),
    )
}

/// The finding of one `rate::<mix>::<rate>` case.
pub fn rate_case(s: &Settings, mix: &Mix, p: &Point) -> Finding {
    let kind = p.plan.kind;
    let rate = kind.rate().unwrap_or(0.0);
    let (Some(figs), None) = (&p.figures, &p.load.client_bound) else {
        let why = p.load.client_bound.as_deref().unwrap_or("the host could not hold the schedule");
        let f = Finding::not_applicable(format!("client-bound at {rate} requests/s: {why}"));
        return client_bound(case_notes(f, s, mix), Naming::Top, kind, &p.load, why);
    };
    let verdict = if figs.requests > 0 && figs.lost == figs.requests {
        Finding::lost(format!("every one of the {} measured requests was lost", figs.requests))
    } else if figs.answered == 0 {
        Finding::fail(format!("no measured request was answered ({} refused)", figs.rejected))
    } else {
        Finding::pass()
    };
    let f = load_figures(case_notes(verdict, s, mix), Naming::Top, kind, &p.load, figs, p.saturated.as_deref()).metric(
        names::GOODPUT_THRESHOLD,
        s.goodput_threshold_pct,
        "%",
    );
    // A fixed rate counts for the row's figure as a sweep's rate does.
    match p.sustained(s.goodput_threshold_pct) {
        Some(held) => f.metric(names::SUSTAINED_REQ_S, held, "req/s").note(
            names::SUSTAINED,
            format!(
                "{held:.3} requests/s as scheduled (offered {rate}) held with goodput at or above {}% ({:.0}%, {})",
                s.goodput_threshold_pct,
                p.goodput_pct().unwrap_or(0.0),
                mix.objectives
            ),
        ),
        None => f.note(
            names::SUSTAINED,
            format!(
                "{rate} requests/s did not hold with goodput at or above {}%: {}",
                s.goodput_threshold_pct,
                p.why_not()
            ),
        ),
    }
}

/// The finding of one `sweep::<mix>` case: every point under its number,
/// the baseline's and the throughput's achieved rates, where the rates
/// stopped, and the row's figure.
pub fn sweep_case(s: &Settings, mix: &Mix, sw: &Sweep) -> Finding {
    let first = sw.points.first().and_then(|p| p.figures.as_ref());
    let mut f = match first {
        Some(figs) if figs.requests > 0 && figs.lost == figs.requests => {
            Finding::lost(format!("every one of the baseline's {} measured requests was lost", figs.requests))
        }
        Some(figs) if figs.answered == 0 => Finding::fail("the baseline had no request answered"),
        Some(_) => Finding::pass(),
        None => Finding::not_applicable(format!(
            "the synchronous baseline was client-bound: {}",
            sw.points.first().and_then(|p| p.load.client_bound.as_deref()).unwrap_or("no baseline")
        )),
    };
    f = case_notes(f, s, mix).metric(names::POINTS, sw.points.len() as f64, "points").metric(
        names::GOODPUT_THRESHOLD,
        s.goodput_threshold_pct,
        "%",
    );
    for (i, p) in sw.points.iter().enumerate() {
        let at = Naming::Point(i as u32 + 1);
        let word = match p.plan.kind {
            Kind::Synchronous => kind::SYNCHRONOUS,
            Kind::Throughput => kind::THROUGHPUT,
            Kind::Rate(_) => kind::RATE,
        };
        f = f.note(at.note(names::KIND), word);
        f = match (&p.figures, &p.load.client_bound) {
            (Some(figs), None) => load_figures(f, at, p.plan.kind, &p.load, figs, p.saturated.as_deref()),
            (_, why) => client_bound(f, at, p.plan.kind, &p.load, why.as_deref().unwrap_or("client-bound")),
        };
        let achieved = p.figures.as_ref().and_then(|x| x.achieved_req_s);
        match p.plan.kind {
            Kind::Synchronous => f = opt(f, Naming::Top, names::SYNCHRONOUS_REQ_S, achieved, "req/s"),
            Kind::Throughput => f = opt(f, Naming::Top, names::THROUGHPUT_REQ_S, achieved, "req/s"),
            Kind::Rate(r) if p.saturated.is_some() => f = f.metric(names::SATURATED_AT_REQ_S, r, "req/s"),
            Kind::Rate(_) => {}
        }
    }
    let mut stopped = Vec::new();
    if let Some(why) = &sw.stopped {
        stopped.push(why.clone());
    }
    if !sw.not_run.is_empty() {
        let rates: Vec<String> = sw.not_run.iter().map(|r| r.to_string()).collect();
        f = f.note(
            names::NOT_RUN,
            format!("{} requests/s: not offered once the rates stopped rising", rates.join(", ")),
        );
    }
    if !stopped.is_empty() {
        f = f.note(names::SATURATION, stopped.join("; "));
    }
    match sustained(sw, s.goodput_threshold_pct) {
        Ok((i, rate)) => {
            let p = &sw.points[i];
            let g = p.goodput_pct().unwrap_or(0.0);
            let nominal = p.plan.kind.rate().unwrap_or(rate);
            f.metric(names::SUSTAINED_REQ_S, rate, "req/s").note(
                names::SUSTAINED,
                format!(
                    "{rate:.3} requests/s as scheduled (offered {nominal}, point {}): the highest offered rate that held \
                     with goodput at or above {}% ({g:.0}%, {})",
                    i + 1,
                    s.goodput_threshold_pct,
                    mix.objectives
                ),
            )
        }
        Err(why) => f.note(names::SUSTAINED, why),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::tests::{answer, load, sent};
    use crate::figures::{Missed, Objectives, ServerLoad};
    use crate::sweep::PointPlan;
    use sparktest_sdk::Verdict;

    fn settings() -> Settings {
        Settings {
            mixes: Vec::new(),
            arrival: Arrival::Gamma(0.5),
            seed: 42,
            requests: 4,
            duration_secs: None,
            warmup: 1,
            max_concurrency: None,
            sweep_points: 3,
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
            ignore_eos: true,
            rates: vec![0.5],
            objectives: Objectives { ttft_ms: Some(500.0), tpot_ms: Some(50.0), e2e_ms: None },
        }
    }

    fn metric(f: &Finding, name: &str) -> Option<f64> {
        f.metrics.iter().find(|m| m.name == name).map(|m| m.value)
    }

    fn note<'a>(f: &'a Finding, key: &str) -> Option<&'a str> {
        f.notes.iter().find(|p| p.key == key).map(|p| p.value.as_str())
    }

    fn rate_point(load: Load) -> Point {
        let s = settings();
        Point::judge(PointPlan::new(&s, Kind::Rate(0.5)), load, &mix(), &s)
    }

    #[test]
    fn a_rate_case_records_its_figures_by_the_contract_s_names() {
        let mut reqs: Vec<Sent> = (0..5).map(|i| sent(f64::from(i) * 2000.0, Ok(answer(100.0, 20.0, 8)))).collect();
        reqs[0].warmup = true;
        reqs[3].answer = Err(Missed::Lost("HTTP 503: overloaded".into()));
        let mut l = load(reqs);
        l.server = Some(ServerLoad {
            source: "llama.cpp /slots is_processing".into(),
            samples: 40,
            running_max: 2,
            running_mean: 0.6,
            waiting_max: None,
        });
        let f = rate_case(&settings(), &mix(), &rate_point(l));
        assert!(matches!(f.verdict, Verdict::Pass), "the rest of the rate's figures stand: {:?}", f.verdict);
        assert_eq!(metric(&f, "offered-req-s"), Some(0.5));
        assert_eq!((metric(&f, "requests"), metric(&f, "warmup-requests")), (Some(4.0), Some(1.0)));
        assert_eq!((metric(&f, "answered-requests"), metric(&f, "lost-requests")), (Some(3.0), Some(1.0)));
        assert_eq!(metric(&f, "goodput"), Some(75.0));
        assert_eq!(metric(&f, "ttft-ms-p99"), Some(100.0));
        assert_eq!(metric(&f, "saturated"), Some(1.0), "a quarter lost is past a 10% budget");
        assert!(note(&f, "lost").unwrap().starts_with("1 lost and 0 refused of 4"), "{:?}", note(&f, "lost"));
        assert_eq!(note(&f, "arrival"), Some("gamma(0.5)"));
        assert_eq!(metric(&f, "burstiness"), Some(0.5));
        assert_eq!(note(&f, "seed"), Some("42"));
        assert_eq!(note(&f, "token-source"), Some("server-usage"));
        assert_eq!(metric(&f, "server-running-max"), Some(2.0));
        assert!(note(&f, "server-load").unwrap().contains("waiting: n/a"));
        assert_eq!(metric(&f, "ttft-objective-ms"), Some(500.0));
    }

    #[test]
    fn a_client_bound_rate_is_not_the_server_s_figure() {
        let mut l = load((0..5).map(|i| sent(f64::from(i) * 2000.0, Ok(answer(100.0, 20.0, 8)))).collect());
        l.client_bound = Some("the client could not hold the schedule: the p99 send lag was 300 ms".into());
        l.lag_p99_ms = 300.0;
        let f = rate_case(&settings(), &mix(), &rate_point(l));
        assert!(
            matches!(&f.verdict, Verdict::NotApplicable(why) if why.starts_with("client-bound at 0.5")),
            "{:?}",
            f.verdict
        );
        assert_eq!(metric(&f, "send-lag-p99-ms"), Some(300.0));
        assert!(note(&f, "client-bound").unwrap().contains("not recorded"));
        for server_figure in ["goodput", "ttft-ms-p50", "achieved-req-s", "output-tok-s"] {
            assert_eq!(metric(&f, server_figure), None, "{server_figure}");
        }
    }

    #[test]
    fn a_rate_whose_every_request_was_lost_is_lost_and_no_server_says_so() {
        let l = load((0..5).map(|i| sent(f64::from(i) * 2000.0, Err(Missed::Lost("reset".into())))).collect());
        let f = rate_case(&settings(), &mix(), &rate_point(l));
        assert!(matches!(f.verdict, Verdict::Lost(_)), "{:?}", f.verdict);
        assert_eq!(metric(&f, "ttft-ms-p50"), None);
        assert_eq!(note(&f, "server-load"), Some("n/a: the engine reports no live request count"));
    }

    #[test]
    fn a_sweep_records_each_point_under_its_number_and_the_row_s_figure() {
        let s = settings();
        let mut fake = |plan: &PointPlan| {
            let gap = plan.kind.rate().map_or(0.0, |r| 1000.0 / r);
            load(
                (0..plan.count + plan.warmup)
                    .map(|i| {
                        let mut r = sent(f64::from(i) * gap, Ok(answer(100.0, 20.0, 8)));
                        r.warmup = i < plan.warmup;
                        if plan.kind == Kind::Synchronous {
                            r.intended_ms = f64::from(i) * 300.0;
                            r.sent_ms = r.intended_ms;
                            r.ended_ms = r.sent_ms + 300.0;
                        }
                        r
                    })
                    .collect(),
            )
        };
        let sw = crate::sweep::sweep(&s, &mix(), &mut fake);
        let f = sweep_case(&s, &mix(), &sw);
        assert!(matches!(f.verdict, Verdict::Pass), "{:?}", f.verdict);
        assert_eq!(metric(&f, "points"), Some(3.0));
        assert_eq!(note(&f, "point1-kind"), Some("synchronous"));
        assert_eq!(note(&f, "point2-kind"), Some("throughput"));
        assert_eq!(note(&f, "point3-kind"), Some("rate"));
        let rate = metric(&f, "point3-scheduled-req-s").unwrap();
        assert_eq!(metric(&f, "sustained-req-s"), Some(rate), "as the schedule offered it");
        assert!(note(&f, "sustained").unwrap().contains("point 3"), "{:?}", note(&f, "sustained"));
        assert!(metric(&f, "synchronous-req-s").is_some() && metric(&f, "throughput-req-s").is_some());
        assert_eq!(metric(&f, "point1-offered-req-s"), None, "the baseline offers no rate");
        assert_eq!(metric(&f, "goodput-threshold"), Some(90.0));
        assert!(metric(&f, "point3-ttft-ms-p99").is_some());
    }

    use crate::figures::Sent;
}
