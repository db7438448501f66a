//! The figures of one load (one offered rate, or one point of a sweep), in
//! plain Rust so that they are tested on crafted loads.
//!
//! - Only measured requests count: the warm-up is sent first and left out
//!   of every figure.
//! - A lost or refused request is counted apart ([`Figures::lost`],
//!   [`Figures::rejected`]) and never enters a latency; it counts against
//!   goodput (it met no objective).
//! - Percentiles are nearest-rank, as the host's own records
//!   (`sparktest_record::Percentiles`).
//! - TPOT is a request's time from its first to its last content chunk
//!   over its output tokens after the first (as `vllm bench serve`); ITL is
//!   every gap between two content chunks of a request, over all requests.
//! - Token counts are the server's (`usage`, or llama.cpp `timings`); only
//!   a reply the server counted nothing for is counted in content chunks,
//!   and the figures say so ([`Figures::counted`]).
//! - The achieved rate at an offered rate is completions per second from
//!   the first reply to the last, (n - 1) over that span, against the rate
//!   the seeded schedule itself came to over the same requests: the last
//!   requests' own latency is not read as the server falling behind, and a
//!   Poisson schedule that happened to offer less is not read as a server
//!   that kept up. Without a rate (synchronous, all at once) it is the
//!   answered requests over the window, first send to last reply.

/// The share of the schedule's rate below which the server saturated.
pub const SATURATION: f64 = 0.9;

/// Where a reply's output token count came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counted {
    /// The server's `usage`.
    ServerUsage,
    /// llama.cpp's `timings`.
    ServerTimings,
    /// Content chunks: the server counted nothing.
    Chunks,
}

impl Counted {
    /// The word the records use, as the speed instrument writes it.
    pub fn word(self) -> &'static str {
        match self {
            Counted::ServerUsage => "server-usage",
            Counted::ServerTimings => "server-timings",
            Counted::Chunks => "chunks",
        }
    }
}

/// One answered request, as the host timed it.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// Intended send to the first content chunk.
    pub ttft_ms: Option<f64>,
    /// First to last content chunk.
    pub decode_ms: Option<f64>,
    /// Intended send to the end of the reply.
    pub total_ms: f64,
    /// Every content chunk's arrival, from the send.
    pub chunk_arrivals_ms: Vec<f64>,
    /// Output tokens.
    pub output_tokens: u32,
    /// Where [`Answer::output_tokens`] came from.
    pub counted: Counted,
    /// Prompt tokens, where the server counted them.
    pub prompt_tokens: Option<u32>,
}

impl Answer {
    /// Time per output token after the first, where the reply had two.
    pub fn tpot_ms(&self) -> Option<f64> {
        sparktest_sdk::contract::sustained_load::tpot_ms(self.decode_ms, self.output_tokens)
    }

    /// The request's decode rate, output tokens after the first per second.
    pub fn decode_tok_s(&self) -> Option<f64> {
        self.tpot_ms().map(|ms| 1000.0 / ms)
    }
}

/// Why a request has no reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Missed {
    /// Never answered (reset, timeout, 5xx, a cut stream), with the host's
    /// reason and status.
    Lost(String),
    /// Refused by the server (4xx), or a call the engine cannot make.
    Rejected(String),
}

/// One request of a load.
#[derive(Debug, Clone, PartialEq)]
pub struct Sent {
    /// When the schedule meant it to go, ms from the load's start.
    pub intended_ms: f64,
    /// When it went.
    pub sent_ms: f64,
    /// When its reply ended (or its error came).
    pub ended_ms: f64,
    /// A warm-up request, left out of every figure.
    pub warmup: bool,
    /// The reply, or why there is none.
    pub answer: Result<Answer, Missed>,
}

/// The server's own count of running and waiting requests in the window.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerLoad {
    /// What was read.
    pub source: String,
    /// Readings taken.
    pub samples: u32,
    /// Most running at once.
    pub running_max: u32,
    /// Mean running.
    pub running_mean: f64,
    /// Most waiting, where the engine says.
    pub waiting_max: Option<u32>,
}

/// What a load did, as the host reported it.
#[derive(Debug, Clone, PartialEq)]
pub struct Load {
    /// Every request, warm-up first.
    pub requests: Vec<Sent>,
    /// First measured send to the last measured reply's end.
    pub window_ms: f64,
    /// The host's 99th percentile of the send lag over measured requests.
    pub lag_p99_ms: f64,
    /// Why the figures measure the client, when the host could not hold
    /// the schedule.
    pub client_bound: Option<String>,
    /// The server's running and waiting counts, where the engine gives them.
    pub server: Option<ServerLoad>,
}

/// Nearest-rank percentiles.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pct {
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Values.
    pub n: usize,
}

/// Nearest-rank percentiles of the finite `values`; None when there are
/// none.
pub fn percentiles(values: &[f64]) -> Option<Pct> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let rank = |p: f64| sparktest_stats::nearest_rank(&v, p).unwrap_or(f64::NAN);
    Some(Pct { p50: rank(50.0), p90: rank(90.0), p99: rank(99.0), n: v.len() })
}

pub use sparktest_sdk::contract::sustained_load::Objectives;

/// The figures of one load.
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    /// Measured requests sent.
    pub requests: usize,
    /// Of those, answered.
    pub answered: usize,
    /// Lost: never answered.
    pub lost: usize,
    /// Refused by the server.
    pub rejected: usize,
    /// Warm-up requests, left out.
    pub warmup: usize,
    /// The rate the schedule came to over the measured requests (rated
    /// loads only).
    pub scheduled_req_s: Option<f64>,
    /// What the server achieved (see the module's words).
    pub achieved_req_s: Option<f64>,
    /// The host's window.
    pub window_ms: f64,
    /// Output tokens of the answered measured requests.
    pub output_tokens: u64,
    /// Those over the window.
    pub output_tok_s: Option<f64>,
    /// Mean decode rate of an answered request.
    pub per_request_tok_s: Option<f64>,
    /// Time to first token.
    pub ttft: Option<Pct>,
    /// Time per output token.
    pub tpot: Option<Pct>,
    /// Gaps between content chunks.
    pub itl: Option<Pct>,
    /// End-to-end latency.
    pub e2e: Option<Pct>,
    /// Measured requests that met every objective.
    pub good: usize,
    /// Those as a share of the measured requests, %.
    pub goodput_pct: Option<f64>,
    /// Those per second: the achieved rate times the share of answered
    /// requests that met every objective (the same window as
    /// [`Figures::achieved_req_s`], so never above it).
    pub goodput_req_s: Option<f64>,
    /// Mean prompt tokens of an answered request, where counted.
    pub prompt_tokens_mean: Option<f64>,
    /// The host's p99 send lag.
    pub lag_p99_ms: f64,
    /// The largest send lag of a measured request.
    pub lag_max_ms: f64,
    /// Where the token counts came from, each source once.
    pub counted: Vec<Counted>,
    /// Why requests were lost or refused, with how many each.
    pub missed: Vec<(String, usize)>,
}

/// Per second, over `ms`; None for an empty span.
fn per_second(n: f64, ms: f64) -> Option<f64> {
    (ms > 0.0 && ms.is_finite()).then(|| n / (ms / 1000.0))
}

/// (n - 1) over the span of `times`, ms; None for fewer than two or no span.
fn rate_between(times: impl Iterator<Item = f64>) -> Option<f64> {
    let (mut n, mut lo, mut hi) = (0usize, f64::INFINITY, f64::NEG_INFINITY);
    for t in times {
        n += 1;
        lo = lo.min(t);
        hi = hi.max(t);
    }
    if n < 2 {
        return None;
    }
    per_second((n - 1) as f64, hi - lo)
}

/// The figures of `load` under `objectives`; `rated` when it had an
/// offered rate.
pub fn figures(load: &Load, objectives: &Objectives, rated: bool) -> Figures {
    let measured: Vec<&Sent> = load.requests.iter().filter(|r| !r.warmup).collect();
    let answers: Vec<(&Sent, &Answer)> =
        measured.iter().filter_map(|r| r.answer.as_ref().ok().map(|a| (*r, a))).collect();
    let mut missed: Vec<(String, usize)> = Vec::new();
    let (mut lost, mut rejected) = (0, 0);
    for r in &measured {
        let why = match &r.answer {
            Ok(_) => continue,
            Err(Missed::Lost(why)) => {
                lost += 1;
                format!("lost: {why}")
            }
            Err(Missed::Rejected(why)) => {
                rejected += 1;
                format!("refused: {why}")
            }
        };
        match missed.iter_mut().find(|(w, _)| *w == why) {
            Some((_, n)) => *n += 1,
            None => missed.push((why, 1)),
        }
    }
    let scheduled_req_s = if rated { rate_between(measured.iter().map(|r| r.intended_ms)) } else { None };
    let achieved_req_s = if rated {
        rate_between(answers.iter().map(|(r, _)| r.ended_ms))
    } else {
        per_second(answers.len() as f64, load.window_ms)
    };
    let output_tokens: u64 = answers.iter().map(|(_, a)| u64::from(a.output_tokens)).sum();
    let decode: Vec<f64> = answers.iter().filter_map(|(_, a)| a.decode_tok_s()).collect();
    let gaps: Vec<f64> =
        answers.iter().flat_map(|(_, a)| a.chunk_arrivals_ms.windows(2).map(|w| w[1] - w[0])).collect();
    let prompts: Vec<f64> = answers.iter().filter_map(|(_, a)| a.prompt_tokens.map(f64::from)).collect();
    let mut counted: Vec<Counted> = Vec::new();
    for (_, a) in &answers {
        if !counted.contains(&a.counted) {
            counted.push(a.counted);
        }
    }
    let good = answers.iter().filter(|(_, a)| objectives.met(a.ttft_ms, a.tpot_ms(), a.total_ms)).count();
    let lags = measured.iter().map(|r| (r.sent_ms - r.intended_ms).max(0.0));
    Figures {
        requests: measured.len(),
        answered: answers.len(),
        lost,
        rejected,
        warmup: load.requests.len() - measured.len(),
        scheduled_req_s,
        achieved_req_s,
        window_ms: load.window_ms,
        output_tokens,
        output_tok_s: per_second(output_tokens as f64, load.window_ms),
        per_request_tok_s: (!decode.is_empty()).then(|| decode.iter().sum::<f64>() / decode.len() as f64),
        ttft: percentiles(&answers.iter().filter_map(|(_, a)| a.ttft_ms).collect::<Vec<_>>()),
        tpot: percentiles(&answers.iter().filter_map(|(_, a)| a.tpot_ms()).collect::<Vec<_>>()),
        itl: percentiles(&gaps),
        e2e: percentiles(&answers.iter().map(|(_, a)| a.total_ms).collect::<Vec<_>>()),
        good,
        goodput_pct: (!measured.is_empty()).then(|| 100.0 * good as f64 / measured.len() as f64),
        // One window with the achieved rate: the good share of what was
        // achieved, so goodput never reads above it.
        goodput_req_s: achieved_req_s.filter(|_| !answers.is_empty()).map(|a| a * good as f64 / answers.len() as f64),
        prompt_tokens_mean: (!prompts.is_empty()).then(|| prompts.iter().sum::<f64>() / prompts.len() as f64),
        lag_p99_ms: load.lag_p99_ms,
        lag_max_ms: lags.fold(0.0, f64::max),
        counted,
        missed,
    }
}

/// Why the load saturated the server, if it did: more requests lost or
/// refused than `lost_budget_pct` of those measured, or (at an offered
/// rate) an achieved rate below [`SATURATION`] of the schedule's.
pub fn saturation(f: &Figures, rated: bool, lost_budget_pct: f64) -> Option<String> {
    let missed = f.lost + f.rejected;
    if f.requests > 0 {
        let share = 100.0 * missed as f64 / f.requests as f64;
        if share > lost_budget_pct {
            return Some(format!(
                "{missed} of {} measured requests lost or refused ({share:.0}%), past the budget of {lost_budget_pct}%",
                f.requests
            ));
        }
    }
    if !rated {
        return None;
    }
    match (f.achieved_req_s, f.scheduled_req_s) {
        (None, _) => Some(format!("{} of {} measured requests answered: no achieved rate", f.answered, f.requests)),
        (Some(achieved), Some(scheduled)) if achieved < SATURATION * scheduled => Some(format!(
            "achieved {achieved:.3} requests/s, {:.0}% of the {scheduled:.3} the schedule offered (below {:.0}%)",
            100.0 * achieved / scheduled,
            100.0 * SATURATION
        )),
        _ => None,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An answer of `tokens` tokens, its first after `ttft` ms and the
    /// rest `gap` ms apart, counted by the server.
    pub(crate) fn answer(ttft: f64, gap: f64, tokens: u32) -> Answer {
        let arrivals: Vec<f64> = (0..tokens).map(|i| ttft + gap * f64::from(i)).collect();
        let last = *arrivals.last().unwrap_or(&ttft);
        Answer {
            ttft_ms: Some(ttft),
            decode_ms: Some(last - ttft),
            total_ms: last + 1.0,
            chunk_arrivals_ms: arrivals,
            output_tokens: tokens,
            counted: Counted::ServerUsage,
            prompt_tokens: Some(100),
        }
    }

    /// A request meant at `at`, sent on time, answered with `a`.
    pub(crate) fn sent(at: f64, a: Result<Answer, Missed>) -> Sent {
        let ended = at + a.as_ref().map_or(0.0, |a| a.total_ms);
        Sent { intended_ms: at, sent_ms: at, ended_ms: ended, warmup: false, answer: a }
    }

    pub(crate) fn load(requests: Vec<Sent>) -> Load {
        let first = requests.iter().filter(|r| !r.warmup).map(|r| r.sent_ms).fold(f64::INFINITY, f64::min);
        let last = requests.iter().filter(|r| !r.warmup).map(|r| r.ended_ms).fold(first, f64::max);
        Load { requests, window_ms: last - first, lag_p99_ms: 0.0, client_bound: None, server: None }
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        let p = percentiles(&v).unwrap();
        assert_eq!((p.p50, p.p90, p.p99, p.n), (5.0, 9.0, 10.0, 10));
        let v: Vec<f64> = (1..=200).map(f64::from).collect();
        let p = percentiles(&v).unwrap();
        assert_eq!((p.p50, p.p90, p.p99), (100.0, 180.0, 198.0));
        assert_eq!(percentiles(&[7.0]).map(|p| (p.p50, p.p99)), Some((7.0, 7.0)));
        assert_eq!(percentiles(&[]), None);
        assert_eq!(percentiles(&[f64::NAN]), None);
    }

    #[test]
    fn latencies_tpot_and_itl_come_from_the_answered_requests() {
        // Four requests, one a second; each 10 tokens, TTFT 100·i ms, 20 ms apart.
        let reqs = (1..=4).map(|i| sent(f64::from(i - 1) * 1000.0, Ok(answer(100.0 * f64::from(i), 20.0, 10))));
        let f = figures(&load(reqs.collect()), &Objectives::default(), true);
        assert_eq!((f.requests, f.answered, f.lost, f.rejected), (4, 4, 0, 0));
        let ttft = f.ttft.unwrap();
        assert_eq!((ttft.p50, ttft.p90, ttft.p99), (200.0, 400.0, 400.0));
        let tpot = f.tpot.unwrap();
        assert!((tpot.p50 - 20.0).abs() < 1e-9 && (tpot.p99 - 20.0).abs() < 1e-9, "{tpot:?}");
        assert_eq!(f.itl.unwrap().n, 4 * 9);
        assert!((f.per_request_tok_s.unwrap() - 50.0).abs() < 1e-9);
        assert_eq!(f.output_tokens, 40);
        assert_eq!(f.counted, [Counted::ServerUsage]);
        // The schedule offered one a second; the replies came one a second.
        assert!((f.scheduled_req_s.unwrap() - 1.0).abs() < 1e-9);
        assert!((f.achieved_req_s.unwrap() - 1.0).abs() < 0.15, "{:?}", f.achieved_req_s);
        assert_eq!(saturation(&f, true, 0.0), None);
    }

    #[test]
    fn lost_requests_are_counted_apart_never_in_a_latency_and_count_against_goodput() {
        let mut reqs: Vec<Sent> = (0..8).map(|i| sent(f64::from(i) * 500.0, Ok(answer(100.0, 10.0, 5)))).collect();
        reqs[2].answer = Err(Missed::Lost("connection reset (HTTP none)".into()));
        reqs[5].answer = Err(Missed::Lost("connection reset (HTTP none)".into()));
        reqs[6].answer = Err(Missed::Rejected("HTTP 429: too many".into()));
        // A lost request that waited long: had it counted, p99 would show it.
        reqs[2].ended_ms = 60_000.0;
        let objectives = Objectives { ttft_ms: Some(500.0), ..Objectives::default() };
        let f = figures(&load(reqs), &objectives, true);
        assert_eq!((f.requests, f.answered, f.lost, f.rejected), (8, 5, 2, 1));
        assert_eq!(f.e2e.unwrap().n, 5);
        assert!(f.e2e.unwrap().p99 < 1000.0);
        assert_eq!((f.good, f.goodput_pct), (5, Some(62.5)));
        assert_eq!(
            f.missed,
            [("lost: connection reset (HTTP none)".to_string(), 2), ("refused: HTTP 429: too many".to_string(), 1)]
        );
        // Three of eight unanswered is past a 10% budget; within a 50%
        // one, the five answered are still too few for the rate offered.
        let why = saturation(&f, true, 10.0).unwrap();
        assert!(why.contains("3 of 8") && why.contains("budget of 10%"), "{why}");
        let why = saturation(&f, true, 50.0).unwrap();
        assert!(why.starts_with("achieved"), "{why}");
    }

    #[test]
    fn the_warm_up_is_left_out_of_every_figure() {
        let mut reqs: Vec<Sent> = (0..5).map(|i| sent(f64::from(i) * 1000.0, Ok(answer(100.0, 10.0, 4)))).collect();
        reqs[0].warmup = true;
        reqs[0].answer = Ok(answer(9_000.0, 500.0, 4));
        let f = figures(&load(reqs), &Objectives { ttft_ms: Some(1000.0), ..Objectives::default() }, true);
        assert_eq!((f.requests, f.warmup, f.good), (4, 1, 4));
        assert_eq!(f.ttft.unwrap().p99, 100.0);
        assert_eq!(f.goodput_pct, Some(100.0));
    }

    #[test]
    fn goodput_is_the_share_meeting_every_objective() {
        let reqs = vec![
            sent(0.0, Ok(answer(100.0, 10.0, 10))),   // meets both
            sent(100.0, Ok(answer(900.0, 10.0, 10))), // TTFT too long
            sent(200.0, Ok(answer(100.0, 80.0, 10))), // TPOT too long
            sent(300.0, Ok(answer(100.0, 80.0, 1))),  // one token: no TPOT, judged on TTFT
        ];
        let objectives = Objectives { ttft_ms: Some(500.0), tpot_ms: Some(50.0), e2e_ms: None };
        let f = figures(&load(reqs), &objectives, true);
        assert_eq!((f.good, f.goodput_pct), (2, Some(50.0)));
        assert_eq!(objectives.to_string(), "ttft <= 500 ms, tpot <= 50 ms");
        let e2e = Objectives { e2e_ms: Some(150.0), ..Objectives::default() };
        let met = |o: &Objectives, a: Answer| o.met(a.ttft_ms, a.tpot_ms(), a.total_ms);
        assert!(met(&e2e, answer(100.0, 10.0, 2)) && !met(&e2e, answer(100.0, 10.0, 10)));
    }

    #[test]
    fn a_rate_the_server_cannot_keep_up_with_is_saturated() {
        // Offered 2 a second (every 500 ms); each reply waits behind the
        // last and comes a second after it: achieved 1 a second.
        let reqs: Vec<Sent> = (0..10)
            .map(|i| {
                let at = f64::from(i) * 500.0;
                let mut s = sent(at, Ok(answer(100.0, 10.0, 5)));
                s.ended_ms = 1000.0 * f64::from(i + 1);
                s
            })
            .collect();
        let f = figures(&load(reqs), &Objectives::default(), true);
        assert!((f.scheduled_req_s.unwrap() - 2.0).abs() < 1e-9);
        assert!((f.achieved_req_s.unwrap() - 1.0).abs() < 1e-9);
        let why = saturation(&f, true, 100.0).unwrap();
        assert!(why.contains("50% of the 2.000") && why.contains("below 90%"), "{why}");
        // The same replies with no rate (a burst) are not judged by the rate.
        assert_eq!(saturation(&f, false, 100.0), None);
    }

    #[test]
    fn a_poisson_schedule_that_offered_less_is_judged_by_what_it_offered() {
        // Nominally 1/s, but the draws spread ten requests over 18 s
        // (0.5/s): replies at 0.5/s kept up with what was offered.
        let reqs: Vec<Sent> = (0..10).map(|i| sent(f64::from(i) * 2000.0, Ok(answer(50.0, 5.0, 3)))).collect();
        let f = figures(&load(reqs), &Objectives::default(), true);
        assert!((f.scheduled_req_s.unwrap() - 0.5).abs() < 1e-9);
        assert_eq!(saturation(&f, true, 0.0), None);
    }

    #[test]
    fn without_a_rate_the_achieved_rate_is_answered_over_the_window() {
        // A burst of four at once: two slots, each reply a second.
        let reqs: Vec<Sent> = (0..4)
            .map(|i| {
                let mut s = sent(0.0, Ok(answer(100.0, 10.0, 5)));
                s.ended_ms = 1000.0 * f64::from(1 + i / 2);
                s
            })
            .collect();
        let f = figures(&load(reqs), &Objectives::default(), false);
        assert_eq!(f.window_ms, 2000.0);
        assert_eq!(f.achieved_req_s, Some(2.0));
        assert_eq!(f.scheduled_req_s, None);
    }

    #[test]
    fn chunks_stand_in_only_where_the_server_counted_nothing_and_say_so() {
        let mut a = answer(100.0, 10.0, 6);
        a.counted = Counted::Chunks;
        let f = figures(
            &load(vec![sent(0.0, Ok(answer(100.0, 10.0, 6))), sent(10.0, Ok(a))]),
            &Objectives::default(),
            true,
        );
        assert_eq!(f.counted, [Counted::ServerUsage, Counted::Chunks]);
    }

    #[test]
    fn a_late_send_is_the_lag() {
        let mut reqs: Vec<Sent> = (0..3).map(|i| sent(f64::from(i) * 100.0, Ok(answer(10.0, 1.0, 2)))).collect();
        reqs[1].sent_ms += 7.5;
        let f = figures(&load(reqs), &Objectives::default(), true);
        assert_eq!(f.lag_max_ms, 7.5);
    }
}
