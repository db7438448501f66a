//! The Sustained load figure as `diff` tests it: the highest offered rate
//! that held with goodput at or above the sweep's threshold
//! ([`names::SUSTAINED_REQ_S`]). One sweep gives one figure, so a per-item
//! bootstrap would see no spread; what varies from run to run is which
//! requests met the objectives. So its samples are requests: each point's
//! measured requests, drawn again with replacement ([`Sweep::resampled`]),
//! give the figure again from the resampled goodput (a point counts when
//! its goodput reaches the threshold). Which points saturated or were
//! client-bound is kept as recorded: those rates never count.

use sparktest_contract::sustained_load::{self as names, point, point_note};
use sparktest_record::{CallRecord, CaseRecord};
use sparktest_stats::Rng;

/// How `diff` names the interval of a figure resampled by requests.
pub const METHOD: &str = "bootstrap-over-requests";

/// One rate of a sweep that may count for the figure: a rate point that
/// held (not saturated, not client-bound), with whether each of its
/// measured requests met every objective (a lost or refused one did not).
#[derive(Debug, Clone, PartialEq)]
pub struct Rate {
    /// As scheduled (`point<n>-scheduled-req-s`).
    pub req_s: f64,
    /// Per measured request: met every objective.
    pub good: Vec<bool>,
}

/// A sweep's record, as the figure needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    /// The rates that may count, in point order.
    pub rates: Vec<Rate>,
    /// The goodput a rate must reach, %.
    pub threshold_pct: f64,
}

impl Sweep {
    /// The figure: the highest rate whose share of good requests (from
    /// `good`, one count per rate) reaches the threshold, else 0.
    fn figure(&self, good: impl Iterator<Item = usize>) -> f64 {
        self.rates
            .iter()
            .zip(good)
            .filter(|(r, g)| !r.good.is_empty() && 100.0 * *g as f64 / r.good.len() as f64 >= self.threshold_pct)
            .map(|(r, _)| r.req_s)
            .fold(0.0, f64::max)
    }

    /// The figure as recorded.
    pub fn observed(&self) -> f64 {
        self.figure(self.rates.iter().map(|r| r.good.iter().filter(|g| **g).count()))
    }

    /// The figure over each rate's requests drawn again with replacement.
    pub fn resampled(&self, rng: &mut Rng) -> f64 {
        let counts: Vec<usize> =
            self.rates.iter().map(|r| (0..r.good.len()).filter(|_| r.good[rng.below(r.good.len())]).count()).collect();
        self.figure(counts.into_iter())
    }

    /// How many measured requests its rates hold: its samples.
    pub fn requests(&self) -> usize {
        self.rates.iter().map(|r| r.good.len()).sum()
    }
}

fn metric(c: &CaseRecord, name: &str) -> Option<f64> {
    crate::metric(c, name).filter(|v| v.is_finite())
}

/// Whether an answered request met every objective, as the instrument
/// judges it ([`names::Objectives::met`]; TPOT from the server's token
/// count, and a request without one is judged by the others). A lost or
/// refused request met none.
fn met(objectives: &names::Objectives, call: &CallRecord) -> bool {
    let tpot = call.completion_tokens.and_then(|n| names::tpot_ms(call.decode_ms, n));
    // Latency from the intended send, as the instrument takes it.
    let late = |ms: f64| match (call.intended_ms, call.sent_ms) {
        (Some(intended), Some(sent)) => names::since_intended(intended, sent, ms),
        _ => ms,
    };
    call.result == "ok" && objectives.met(call.ttft_ms.map(late), tpot, late(call.total_ms))
}

/// A sweep record's rates, or None when it is not one or its calls do not
/// add up to its points' counts (a record this reading cannot trust).
pub fn sweep(c: &CaseRecord) -> Option<Sweep> {
    names::SWEEP.item(&c.case)?;
    let points = metric(c, names::POINTS.name())? as u32;
    let threshold_pct = metric(c, names::GOODPUT_THRESHOLD.name())?;
    let objectives = names::Objectives {
        ttft_ms: metric(c, names::TTFT_OBJECTIVE_MS.name()),
        tpot_ms: metric(c, names::TPOT_OBJECTIVE_MS.name()),
        e2e_ms: metric(c, names::E2E_OBJECTIVE_MS.name()),
    };
    // The probe that tags the prompts has no intended time; every load's
    // requests follow in point order, warm-up first.
    let mut calls = c.calls.iter().filter(|k| k.intended_ms.is_some());
    let mut rates = Vec::new();
    for n in 1..=points {
        let count = |m| metric(c, &point(n, m).to_string()).map(|v| v as usize);
        let sent = count(names::WARMUP_REQUESTS)? + count(names::REQUESTS)?;
        let load: Vec<&CallRecord> = calls.by_ref().take(sent).collect();
        if load.len() != sent {
            return None;
        }
        let rate = crate::note(c, &point_note(n, names::KIND).to_string()) == Some(names::kind::RATE);
        let held = metric(c, &point(n, names::SATURATED).to_string()) == Some(0.0)
            && crate::note(c, &point_note(n, names::CLIENT_BOUND).to_string()).is_none();
        let Some(req_s) = metric(c, &point(n, names::SCHEDULED_REQ_S).to_string()).filter(|_| rate && held) else {
            continue;
        };
        let good = load.iter().filter(|k| !k.warmup).map(|k| met(&objectives, k)).collect();
        rates.push(Rate { req_s, good });
    }
    (calls.next().is_none()).then_some(Sweep { rates, threshold_pct })
}
