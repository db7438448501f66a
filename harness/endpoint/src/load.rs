//! Open-loop load: requests sent at the instants of a seeded schedule, not
//! when the previous reply came back, so that a server that falls behind
//! builds a queue instead of slowing the client down (the coordinated
//! omission a closed loop hides).
//!
//! The host owns the clock. [`schedule`] computes every intended send
//! offset from the plan's seed first; then each request goes out at its
//! absolute instant (one base [`Instant`] plus its offset, never a sum of
//! sleeps), streamed through [`Endpoint::chat_sent`] once ([`Sends::Once`]:
//! a 429 is a refusal and a 503 or a refused connection no answer, at the
//! request's instant, never asked again inside the schedule; only a send
//! on a pooled connection the server had closed, which never reached it,
//! goes out again on a new connection), so timing,
//! the model check, the lost/rejected classes and tool-choice forcing all
//! apply.
//! Every request keeps its intended and actual send time: a client that
//! could not hold the schedule is seen ([`LoadResult::client_bound`]),
//! never mistaken for a slow server.
//!
//! The instants are kept by a thread of their own (`sparktest-load-clock`)
//! that sleeps to each one, waits for a free slot under
//! `max_concurrency`, and releases its request to the runtime, which
//! sends it: tokio's timer rounds every deadline up to the next
//! millisecond, which alone would put the p99 send lag near 1 ms. One
//! thread deciding in turn also keeps the sends in schedule order.
//!
//! Arrivals (as `vllm bench serve`'s `--request-rate` and
//! `--burstiness`): constant intervals of `1/rate`; Poisson (exponential
//! intervals, by the exact inverse CDF); or gamma with shape `burstiness`
//! and mean `1/rate` (Marsaglia and Tsang's method), burstiness below 1
//! burstier than Poisson, above 1 more even. The generator is SplitMix64
//! ([`sparktest_stats::Rng`]), so a recorded seed repeats its schedule.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use sparktest_record::{ClientCeiling, LoadWindow, Percentiles};
use sparktest_stats::Rng;
use tokio::task::JoinSet;

use crate::{CallError, ChatRequest, Endpoint, LOAD_SAMPLE_EVERY, LiveLoad, Reply, Sends};

/// Most requests one plan may send, warm-up included.
pub const MAX_LOAD_REQUESTS: u32 = 100_000;

/// The longest schedule a plan may have: past it, a rate is surely a
/// mistake (a second a request for 100,000 requests is 28 hours).
pub const MAX_LOAD_SPAN: Duration = Duration::from_secs(7 * 86_400);

/// Most requests the host keeps open at once, whatever the plan's
/// `max_concurrency` (a plan may not open sockets without bound); fewer
/// where the process may open fewer files ([`open_request_cap`]).
pub const MAX_OPEN_REQUESTS: u32 = 4096;

/// How the intervals between intended sends are drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arrival {
    /// Every interval `1/rate`.
    Constant,
    /// Exponential intervals of mean `1/rate` (a Poisson process).
    Poisson,
    /// Gamma intervals of shape `burstiness` and mean `1/rate`, as vLLM's
    /// `--burstiness`: 1 is Poisson, below 1 burstier, above 1 more even.
    Gamma(f64),
}

/// What to send, and when.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadPlan {
    /// The requests; request `i` is `requests[i % len]`.
    pub requests: Vec<ChatRequest>,
    /// Offered requests per second; None sends every request at once (the
    /// maximum-throughput burst, or a closed loop under `max_concurrency`).
    pub rate: Option<f64>,
    /// How the intervals are drawn (ignored without a rate).
    pub arrival: Arrival,
    /// The generator's seed: the same seed, the same schedule.
    pub seed: u64,
    /// Requests sent first and kept out of the window, the lag and the
    /// load (they are still recorded, marked as warm-up).
    pub warmup: u32,
    /// Requests measured, after the warm-up.
    pub count: u32,
    /// At most this many in flight (1: the synchronous baseline); a request
    /// whose instant comes while all are busy waits for one to end.
    pub max_concurrency: Option<u32>,
}

/// One request of a load, as it went.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadRequest {
    /// When it was meant to go, in milliseconds from the load's start: its
    /// offset in the schedule; in a closed loop (no rate, a
    /// `max_concurrency`), when a slot came free for it.
    pub intended_ms: f64,
    /// When it went, measured just before the send, from the same start.
    pub sent_ms: f64,
    /// When its reply ended (or its error came), from the same start.
    pub ended_ms: f64,
    /// A warm-up request: outside the window, the lag and the load.
    pub warmup: bool,
    /// The reply, or why there is none; a lost request stays here, never
    /// dropped.
    pub reply: Result<Reply, CallError>,
}

/// What a load did.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadResult {
    /// Every request, warm-up first, in schedule order.
    pub requests: Vec<LoadRequest>,
    /// First measured send to the last measured reply's end.
    pub window_ms: f64,
    /// The 99th percentile (nearest rank) of the send lag, actual minus
    /// intended, over the measured requests.
    pub lag_p99_ms: f64,
    /// Why the figures measure the client rather than the server, when the
    /// host could not hold the schedule (the p99 lag past its bound, see
    /// `lag_bound_ms`); None when it held.
    pub client_bound: Option<String>,
    /// The server's own count of running and waiting requests during the
    /// window, sampled as [`Endpoint::chat_concurrent_observed`] samples
    /// it; None where the engine reports no live load.
    pub load: Option<LoadWindow>,
}

impl Arrival {
    /// The word for it in records and messages.
    pub fn name(self) -> String {
        match self {
            Arrival::Constant => "constant".into(),
            Arrival::Poisson => "poisson".into(),
            Arrival::Gamma(b) => format!("gamma (burstiness {b})"),
        }
    }
}

impl LoadPlan {
    /// Requests sent in all, warm-up included.
    pub fn total(&self) -> u32 {
        self.warmup.saturating_add(self.count)
    }

    /// Why this plan cannot be run, if it cannot: no requests, nothing
    /// measured, a rate or burstiness that is not a positive number, a
    /// concurrency of 0, more than [`MAX_LOAD_REQUESTS`].
    pub fn check(&self) -> Result<(), String> {
        if self.requests.is_empty() {
            return Err("a load plan needs at least one request".into());
        }
        if self.count == 0 {
            return Err("a load plan must measure at least one request (count 0)".into());
        }
        if u64::from(self.warmup) + u64::from(self.count) > u64::from(MAX_LOAD_REQUESTS) {
            return Err(format!(
                "{} requests (warm-up {} and count {}); a load sends at most {MAX_LOAD_REQUESTS}",
                u64::from(self.warmup) + u64::from(self.count),
                self.warmup,
                self.count
            ));
        }
        if let Some(rate) = self.rate
            && !(rate.is_finite() && rate > 0.0)
        {
            return Err(format!("the rate must be a positive number of requests per second, not {rate}"));
        }
        if let Arrival::Gamma(b) = self.arrival
            && !(b.is_finite() && b > 0.0)
        {
            return Err(format!("the burstiness of gamma arrivals must be a positive number, not {b}"));
        }
        if self.max_concurrency == Some(0) {
            return Err("max-concurrency 0 would send nothing".into());
        }
        if self.rate.is_some() && self.last_send().is_none_or(|last| last > MAX_LOAD_SPAN) {
            return Err(format!(
                "at {} requests/s its {} requests span more than {} days: no case waits that long",
                self.rate.unwrap_or_default(),
                self.total(),
                MAX_LOAD_SPAN.as_secs() / 86_400
            ));
        }
        Ok(())
    }

    /// When the last request is meant to go, from the start (zero without
    /// a rate): what an instrument sizes `count` and `rate` against. None
    /// when it is past any time a clock can hold (a rate of `1e-300`).
    pub fn last_send(&self) -> Option<Duration> {
        schedule(self).last().map_or(Some(Duration::ZERO), |ms| Duration::try_from_secs_f64(ms / 1000.0).ok())
    }
}

/// A uniform draw in [0, 1), from the top 53 bits.
fn uniform(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A standard normal draw (Box–Muller; the second value is not kept, so
/// that each draw takes a fixed two numbers).
fn normal(rng: &mut Rng) -> f64 {
    let u = 1.0 - uniform(rng);
    let v = uniform(rng);
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// A gamma draw of shape `k` and scale 1 (Marsaglia and Tsang, 2000; for
/// a shape below 1, a draw of shape `k + 1` times `U^(1/k)`).
fn gamma(k: f64, rng: &mut Rng) -> f64 {
    if k < 1.0 {
        let u = 1.0 - uniform(rng);
        return gamma(k + 1.0, rng) * u.powf(1.0 / k);
    }
    let d = k - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = normal(rng);
        let v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        let v = v * v * v;
        let u = 1.0 - uniform(rng);
        if u < 1.0 - 0.0331 * x.powi(4) || u.ln() < 0.5 * x * x + d * (1.0 - v + v.ln()) {
            return d * v;
        }
    }
}

/// Every request's intended send offset in milliseconds from the load's
/// start, warm-up first: request 0 at 0, then one interval after another
/// (each offset computed, never slept cumulatively). All zero without a
/// rate. An unchecked plan gives what it can (no rate, no offsets).
pub fn schedule(plan: &LoadPlan) -> Vec<f64> {
    let n = plan.total() as usize;
    let Some(rate) = plan.rate.filter(|r| r.is_finite() && *r > 0.0) else {
        return vec![0.0; n];
    };
    let mean_ms = 1000.0 / rate;
    let mut rng = Rng::new(plan.seed);
    let mut at = 0.0;
    (0..n)
        .map(|i| {
            if i > 0 {
                at += match plan.arrival {
                    Arrival::Constant => return i as f64 * mean_ms,
                    Arrival::Poisson => -(1.0 - uniform(&mut rng)).ln() * mean_ms,
                    Arrival::Gamma(k) => gamma(k, &mut rng) / k * mean_ms,
                };
            }
            at
        })
        .collect()
}

/// The p99 send lag past which a load measured the client, not the
/// server: the larger of 1 ms and 10% of the load's time scale. With a
/// rate that is the mean interval `1/rate`. Without one it is the time a
/// request held its slot, `window × slots / count`: for a burst (every
/// request its own slot) the whole window, since a burst must reach the
/// server at once and not as a ramp; for a closed loop the mean time one
/// request held one of its `max_concurrency` slots.
pub fn lag_bound_ms(rate: Option<f64>, window_ms: f64, slots: u32, count: u32) -> f64 {
    let scale = match rate {
        Some(rate) => 1000.0 / rate,
        None => window_ms * f64::from(slots.min(count)) / f64::from(count.max(1)),
    };
    (0.1 * scale).max(1.0)
}

/// How many requests the host may keep open: 4,096 (`MAX_OPEN_REQUESTS`), or
/// fewer where the process's limit on open files leaves less room (each
/// open request holds a socket; a send refused for want of a file would
/// be the client's failure recorded as the server's). Linux reads
/// `/proc/self/limits`; elsewhere the constant stands.
pub fn open_request_cap() -> u32 {
    let soft = std::fs::read_to_string("/proc/self/limits").ok().and_then(|limits| {
        let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
        line["Max open files".len()..].split_whitespace().next()?.parse::<u64>().ok()
    });
    let Some(soft) = soft else { return MAX_OPEN_REQUESTS };
    let open = std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count() as u64);
    // Room for the files the process opens meanwhile (records, probes).
    let room = soft.saturating_sub(open).saturating_sub(64);
    u32::try_from(room).unwrap_or(u32::MAX).clamp(1, MAX_OPEN_REQUESTS)
}

/// What one request's task hands back.
struct Done {
    index: usize,
    sent: Instant,
    ended: Instant,
    reply: Result<Reply, CallError>,
}

/// The clock's word to a request: go now, meant for this instant.
struct Go {
    intended: Instant,
    /// Every slot was busy at its instant: it waited for one.
    waited: bool,
}

/// The slots, shared by the clock thread and the requests.
struct Slots {
    in_flight: u32,
    /// When each slot came free, oldest first (a closed loop's request was
    /// meant to go then); every slot starts free at the start.
    freed: VecDeque<Instant>,
    /// The load ended or was dropped.
    stopped: bool,
}

/// The clock thread's shared state, and its stop when the load ends or is
/// dropped (a case out of time drops it: the thread must not release
/// requests into the next case).
struct Clock {
    slots: Mutex<Slots>,
    changed: Condvar,
}

impl Clock {
    fn lock(&self) -> std::sync::MutexGuard<'_, Slots> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A request ended: its slot is free from `at`.
    fn free(&self, at: Instant) {
        let mut s = self.lock();
        s.in_flight -= 1;
        s.freed.push_back(at);
        self.changed.notify_one();
    }
}

/// A request's slot, given back when its task ends however it ends (a
/// panic, an abort): a slot never given back would stop the clock.
struct Slot(Arc<Clock>, Option<Instant>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.free(self.1.unwrap_or_else(Instant::now));
    }
}

/// Stops the clock thread when dropped.
struct StopClock(Arc<Clock>);

impl Drop for StopClock {
    fn drop(&mut self) {
        self.0.lock().stopped = true;
        self.0.changed.notify_one();
    }
}

/// Start the clock thread: it sleeps to each instant in turn (a condition
/// variable's timed wait, to the microsecond where tokio's timer rounds to
/// the millisecond), waits for a free slot, and releases that request. The
/// requests go in schedule order, one decision at a time, in one place.
fn start_clock(
    clock: &Arc<Clock>,
    times: Vec<Instant>,
    gos: Vec<tokio::sync::oneshot::Sender<Go>>,
    slots: u32,
    closed_loop: bool,
) -> std::io::Result<()> {
    let clock = clock.clone();
    std::thread::Builder::new().name("sparktest-load-clock".into()).spawn(move || {
        let mut s = clock.lock();
        for (at, go) in times.into_iter().zip(gos) {
            loop {
                let now = Instant::now();
                if s.stopped {
                    return;
                }
                if now >= at {
                    break;
                }
                s = clock.changed.wait_timeout(s, at - now).unwrap_or_else(|p| p.into_inner()).0;
            }
            let waited = s.in_flight >= slots;
            while s.in_flight >= slots {
                if s.stopped {
                    return;
                }
                s = clock.changed.wait(s).unwrap_or_else(|p| p.into_inner());
            }
            s.in_flight += 1;
            let free_since = s.freed.pop_front().unwrap_or(at);
            let intended = if closed_loop { at.max(free_since) } else { at };
            let _ = go.send(Go { intended, waited });
        }
    })?;
    Ok(())
}

/// A task per request, each waiting for the clock's word, then sent once
/// at its instant (a refusal is recorded as it came, never resent inside
/// the schedule) and its slot freed as it ends.
fn spawn_requests(
    endpoint: &Arc<Endpoint>,
    requests: &Arc<Vec<ChatRequest>>,
    clock: &Arc<Clock>,
    starts: Vec<tokio::sync::oneshot::Receiver<Go>>,
) -> JoinSet<Option<(Go, Done)>> {
    let mut tasks = JoinSet::new();
    for (index, start) in starts.into_iter().enumerate() {
        let (endpoint, requests, clock) = (endpoint.clone(), requests.clone(), clock.clone());
        tasks.spawn(async move {
            let go = start.await.ok()?;
            let mut slot = Slot(clock, None);
            let sent = Instant::now();
            let reply = endpoint.chat_sent(&requests[index % requests.len()], Sends::Once).await;
            let ended = Instant::now();
            slot.1 = Some(ended);
            drop(slot);
            Some((go, Done { index, sent, ended, reply }))
        });
    }
    tasks
}

/// The requests in schedule order, each with its times from `base`, and
/// whether each waited for a slot; a request whose task never reported is
/// lost, saying why (`broken`: the harness's own failure).
fn in_order(
    done: Vec<Option<(Go, Done)>>,
    offsets: &[f64],
    base: Instant,
    warmup: usize,
    broken: Option<&str>,
) -> (Vec<LoadRequest>, Vec<bool>) {
    let mut waits = Vec::with_capacity(done.len());
    let requests = done
        .into_iter()
        .enumerate()
        .map(|(i, d)| match d {
            Some((go, d)) => {
                waits.push(go.waited);
                LoadRequest {
                    intended_ms: ms(base, go.intended),
                    sent_ms: ms(base, d.sent),
                    ended_ms: ms(base, d.ended),
                    warmup: i < warmup,
                    reply: d.reply,
                }
            }
            None => {
                waits.push(false);
                LoadRequest {
                    intended_ms: offsets[i],
                    sent_ms: offsets[i],
                    ended_ms: offsets[i],
                    warmup: i < warmup,
                    reply: Err(CallError::lost(format!(
                        "the harness failed to run this request of the load: {}",
                        broken.unwrap_or("its task ended")
                    ))),
                }
            }
        })
        .collect();
    (requests, waits)
}

/// Time from `base` in milliseconds (zero for an instant before it).
fn ms(base: Instant, at: Instant) -> f64 {
    at.saturating_duration_since(base).as_secs_f64() * 1000.0
}

/// A load window from timed readings: those taken inside `[from, to]`.
fn window_of(
    endpoint: &Endpoint,
    readings: &[(Instant, LiveLoad)],
    failed: Option<String>,
    from: Instant,
    to: Instant,
) -> Option<LoadWindow> {
    let inside: Vec<LiveLoad> = readings.iter().filter(|(at, _)| *at >= from && *at <= to).map(|(_, r)| *r).collect();
    crate::load_window(endpoint.engine(), &inside, failed)
}

impl Endpoint {
    /// Why `plan` cannot be run against this endpoint, if it cannot: what
    /// [`LoadPlan::check`] refuses, or a request whose body cannot be built
    /// (never sent, the instrument's bug).
    pub fn check_load(&self, plan: &LoadPlan) -> Result<(), String> {
        plan.check()?;
        for (k, req) in plan.requests.iter().enumerate() {
            if let Err(err) = crate::chat_body(self.client.model(), self.as_sent(req).as_ref()) {
                return Err(format!("request {k} of the plan: {}", err.class().reason()));
            }
        }
        Ok(())
    }

    /// Run a load: every request at its instant of the plan's schedule,
    /// streamed once through [`Endpoint::chat_sent`], at most `max_concurrency` (and
    /// the host's [`open_request_cap`]) in flight, while the server's own
    /// load is sampled. A plan that fails [`Endpoint::check_load`] sends
    /// nothing: no requests, and `client_bound` says why.
    ///
    /// Lost requests are kept with their reason and status, each in its
    /// place; the rest stand. Dropping the future (a case out of time)
    /// stops the clock and aborts the requests in flight.
    pub async fn open_loop(&self, plan: &LoadPlan) -> LoadResult {
        if let Err(why) = self.check_load(plan) {
            return LoadResult::unsent(format!("the plan cannot be run: {why}"));
        }
        let offsets = schedule(plan);
        let total = offsets.len();
        let cap = open_request_cap();
        let slots = plan.max_concurrency.map_or(cap, |c| c.min(cap));
        let endpoint = Arc::new(self.clone());
        let requests = Arc::new(plan.requests.clone());
        let clock = Arc::new(Clock {
            slots: Mutex::new(Slots { in_flight: 0, freed: VecDeque::new(), stopped: false }),
            changed: Condvar::new(),
        });
        let _stop = StopClock(clock.clone());
        // Every request's task first, waiting for its word; then the clock.
        let (gos, starts): (Vec<_>, Vec<_>) = (0..total).map(|_| tokio::sync::oneshot::channel::<Go>()).unzip();
        let mut tasks = spawn_requests(&endpoint, &requests, &clock, starts);
        // A millisecond's lead for the clock thread to start.
        let base = Instant::now() + Duration::from_millis(1);
        clock.lock().freed.extend(std::iter::repeat_n(base, slots as usize));
        // Every offset fits a clock: `check` refused a schedule that does not.
        let instants: Vec<Instant> = offsets
            .iter()
            .map(|ms| {
                base.checked_add(Duration::try_from_secs_f64(ms / 1000.0).unwrap_or(Duration::MAX)).unwrap_or(base)
            })
            .collect();
        if let Err(err) = start_clock(&clock, instants, gos, slots, plan.rate.is_none()) {
            return LoadResult::unsent(format!(
                "the harness could not start the load's clock thread, so nothing was sent: {err}"
            ));
        }
        // Collect, sampling the server's own load meanwhile.
        let mut done: Vec<Option<(Go, Done)>> = (0..total).map(|_| None).collect();
        let mut readings: Vec<(Instant, LiveLoad)> = Vec::new();
        let mut failed: Option<String> = None;
        let mut broken: Option<String> = None;
        let sampling = self.engine.reports_live_load();
        let mut tick = tokio::time::interval_at(tokio::time::Instant::from_std(base), LOAD_SAMPLE_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                joined = tasks.join_next() => match joined {
                    Some(Ok(Some((go, d)))) => {
                        let i = d.index;
                        done[i] = Some((go, d));
                    }
                    // Not released: the clock stopped.
                    Some(Ok(None)) => {}
                    // A request's task panicked: the harness's own failure,
                    // kept in its place as a lost request saying so.
                    Some(Err(err)) => { broken.get_or_insert(format!("its task failed ({err})")); }
                    None => break,
                },
                _ = tick.tick(), if sampling => {
                    match self.engine.live_load(&self.client).await {
                        Ok(r) => readings.push((Instant::now(), r)),
                        // An auxiliary signal: its failure is recorded,
                        // never the requests'.
                        Err(why) => { failed.get_or_insert(why); }
                    }
                }
            }
        }
        let warmup = plan.warmup as usize;
        let (requests, waits) = in_order(done, &offsets, base, warmup, broken.as_deref());
        let measured = &requests[warmup..];
        let first_send = measured.iter().map(|r| r.sent_ms).fold(f64::INFINITY, f64::min);
        let first_send = if first_send.is_finite() { first_send } else { 0.0 };
        let last_end = measured.iter().map(|r| r.ended_ms).fold(first_send, f64::max);
        let window_ms = last_end - first_send;
        let lags: Vec<f64> = measured.iter().map(|r| (r.sent_ms - r.intended_ms).max(0.0)).collect();
        let lag_p99_ms = Percentiles::of(&lags).map_or(0.0, |p| p.p99);
        let held =
            Held { plan, lag_p99_ms, window_ms, slots, cap, waited: waits[warmup..].iter().filter(|w| **w).count() };
        let client_bound = held.reason();
        let at = |ms: f64| base + Duration::try_from_secs_f64(ms / 1000.0).unwrap_or(Duration::ZERO);
        let load = window_of(self, &readings, failed, at(first_send), at(last_end));
        LoadResult { requests, window_ms, lag_p99_ms, client_bound, load }
    }
}

impl LoadResult {
    /// A load of which nothing was sent, and why.
    fn unsent(why: String) -> LoadResult {
        LoadResult { requests: Vec::new(), window_ms: 0.0, lag_p99_ms: 0.0, client_bound: Some(why), load: None }
    }

    /// Streamed chunks per second the client took in over the measured
    /// window (every content-bearing chunk of every measured reply), the
    /// figure the client's ceiling is measured in; None without a window.
    pub fn streamed_per_s(&self) -> Option<f64> {
        let chunks: usize = self
            .requests
            .iter()
            .filter(|r| !r.warmup)
            .filter_map(|r| r.reply.as_ref().ok())
            .map(|reply| reply.timing.chunk_arrivals_ms.len())
            .sum();
        (self.window_ms > 0.0).then(|| chunks as f64 / (self.window_ms / 1000.0))
    }

    /// The median measured reply's streamed chunks per second, from its
    /// send to its end (as the client's ceiling is timed, a whole call);
    /// None when no measured reply streamed a chunk. Replies that do not
    /// overlap leave the window's figure low however fast each was read.
    pub fn reply_streamed_per_s(&self) -> Option<f64> {
        let mut rates: Vec<f64> = self
            .requests
            .iter()
            .filter(|r| !r.warmup && r.ended_ms > r.sent_ms)
            .filter_map(|r| {
                let chunks = r.reply.as_ref().ok()?.timing.chunk_arrivals_ms.len();
                (chunks > 0).then(|| chunks as f64 / ((r.ended_ms - r.sent_ms) / 1000.0))
            })
            .collect();
        if rates.is_empty() {
            return None;
        }
        rates.sort_by(f64::total_cmp);
        Some(rates[(rates.len() - 1) / 2])
    }

    /// Hold the load to the client's own ceiling, measured before the run
    /// (as the speed rows are): a load that streamed more than the
    /// ceiling's flag margin of what this client takes in on one stream
    /// may have been read as fast as the client could, not as the server
    /// sent, so it is client-bound and its figures are never the server's.
    /// A load already client-bound (its schedule sent late) and past the
    /// ceiling too says both, the lag's reason first.
    pub fn hold_to(&mut self, ceiling: &ClientCeiling) {
        let bound = ceiling.max_tok_s * ceiling.flag_margin;
        let of_ceiling = format!(
            "above {:.0}% of its own ceiling ({:.0} tok/s on one loopback stream, measured before the run)",
            ceiling.flag_margin * 100.0,
            ceiling.max_tok_s
        );
        let past = if let Some(rate) = self.streamed_per_s().filter(|&rate| rate > bound) {
            format!(
                "the client may not have kept up with the stream: it took in {rate:.0} chunks/s over the window, {of_ceiling}"
            )
        } else if let Some(rate) = self.reply_streamed_per_s().filter(|&rate| rate > bound) {
            format!(
                "the client may have read each reply as fast as it could: the median reply streamed {rate:.0} chunks/s from its send to its end, {of_ceiling}"
            )
        } else {
            return;
        };
        self.client_bound = Some(match self.client_bound.take() {
            Some(late) => format!("{late}; and {past}"),
            None => past,
        });
    }
}

/// What [`LoadResult::client_bound`] is made from.
struct Held<'a> {
    plan: &'a LoadPlan,
    lag_p99_ms: f64,
    window_ms: f64,
    /// Requests in flight at most: the plan's concurrency within the cap.
    slots: u32,
    /// The host's cap on open requests.
    cap: u32,
    /// Measured requests that found every slot busy at their instant.
    waited: usize,
}

impl Held<'_> {
    /// Why the load measured the client, if it did; None when the schedule
    /// held.
    fn reason(&self) -> Option<String> {
        let plan = self.plan;
        let count = plan.count;
        // A burst the host could not open at once was a closed loop at its
        // cap, whatever the lag.
        if plan.rate.is_none() && plan.max_concurrency.is_none_or(|c| c > self.cap) && self.cap < plan.total() {
            return Some(format!(
                "the client could not send the burst at once: {} requests are more than the host keeps open ({} at most, by its limit on open files or MAX_OPEN_REQUESTS)",
                plan.total(),
                self.cap
            ));
        }
        let bound = lag_bound_ms(plan.rate, self.window_ms, self.slots, count);
        if self.lag_p99_ms <= bound {
            return None;
        }
        let scale = match plan.rate {
            Some(rate) => format!("10% of the {:.2} ms mean interval at {rate} requests/s", 1000.0 / rate),
            None if self.slots >= count => format!(
                "10% of the burst's {:.1} ms window: a burst must reach the server at once, not as a ramp",
                self.window_ms
            ),
            None => format!(
                "10% of the {:.2} ms each request held one of the {} slots",
                self.window_ms * f64::from(self.slots) / f64::from(count),
                self.slots
            ),
        };
        let why = if plan.rate.is_some() && self.waited > 0 {
            let whose = match plan.max_concurrency {
                Some(c) if c <= self.cap => format!("max-concurrency {c}"),
                _ => format!("the host's cap of {} open requests", self.cap),
            };
            format!(
                "{} of {count} measured requests found all {} slots busy at their instant ({whose}): the offered rate was not sent",
                self.waited, self.slots
            )
        } else {
            "the host's runtime was late to send them (busy or blocked), not waiting for a slot".to_string()
        };
        Some(format!(
            "the client could not hold the schedule: the p99 send lag was {:.2} ms, past {bound:.2} ms (the larger of 1 ms and {scale}); {why}",
            self.lag_p99_ms
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Message, Role};

    fn plan(rate: Option<f64>, arrival: Arrival, seed: u64, count: u32) -> LoadPlan {
        LoadPlan {
            requests: vec![ChatRequest::new(vec![Message::text(Role::User, "hi")])],
            rate,
            arrival,
            seed,
            warmup: 0,
            count,
            max_concurrency: None,
        }
    }

    fn intervals(plan: &LoadPlan) -> Vec<f64> {
        schedule(plan).windows(2).map(|w| w[1] - w[0]).collect()
    }

    /// Mean and coefficient of variation.
    fn mean_cv(xs: &[f64]) -> (f64, f64) {
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (xs.len() - 1) as f64;
        (mean, var.sqrt() / mean)
    }

    #[test]
    fn the_same_seed_gives_the_same_schedule_and_another_seed_another() {
        for arrival in [Arrival::Poisson, Arrival::Gamma(0.5), Arrival::Gamma(3.0)] {
            let a = schedule(&plan(Some(50.0), arrival, 7, 200));
            assert_eq!(a, schedule(&plan(Some(50.0), arrival, 7, 200)), "{arrival:?}");
            assert_ne!(a, schedule(&plan(Some(50.0), arrival, 8, 200)), "{arrival:?}");
            assert_eq!(a[0], 0.0, "the first request goes at the start");
            assert!(a.windows(2).all(|w| w[1] >= w[0]), "offsets never go back");
        }
        // Constant: i / rate exactly, whatever the seed.
        let c = schedule(&plan(Some(8.0), Arrival::Constant, 1, 5));
        assert_eq!(c, [0.0, 125.0, 250.0, 375.0, 500.0]);
        assert_eq!(c, schedule(&plan(Some(8.0), Arrival::Constant, 2, 5)));
        // No rate: everything at once.
        assert_eq!(schedule(&plan(None, Arrival::Poisson, 1, 3)), [0.0; 3]);
        // The warm-up comes first, on the same schedule.
        let mut warm = plan(Some(8.0), Arrival::Constant, 1, 3);
        warm.warmup = 2;
        assert_eq!(schedule(&warm), c);
        assert_eq!(warm.last_send(), Some(Duration::from_millis(500)));
    }

    #[test]
    fn poisson_intervals_are_exponential_with_mean_one_over_the_rate() {
        let xs = intervals(&plan(Some(200.0), Arrival::Poisson, 42, 40_001));
        let (mean, cv) = mean_cv(&xs);
        // 40,000 draws: the mean's standard error is 0.5%, the CV's about 0.7%.
        assert!((mean - 5.0).abs() < 0.1, "mean {mean} ms, not 5");
        assert!((cv - 1.0).abs() < 0.03, "coefficient of variation {cv}, not 1");
        // P(X < mean) = 1 - 1/e for an exponential.
        let below = xs.iter().filter(|x| **x < 5.0).count() as f64 / xs.len() as f64;
        assert!((below - (1.0 - (-1.0f64).exp())).abs() < 0.01, "{below}");
    }

    #[test]
    fn gamma_intervals_have_the_rate_s_mean_and_the_burstiness_s_spread() {
        for (k, seed) in [(0.25, 1), (0.5, 2), (1.0, 3), (2.0, 4), (8.0, 5)] {
            let xs = intervals(&plan(Some(100.0), Arrival::Gamma(k), seed, 40_001));
            assert!(xs.iter().all(|x| x.is_finite() && *x >= 0.0), "shape {k}");
            let (mean, cv) = mean_cv(&xs);
            // The mean is 1/rate whatever the shape; the CV is 1/sqrt(shape).
            assert!((mean - 10.0).abs() < 10.0 * 0.04, "shape {k}: mean {mean} ms, not 10");
            let want = 1.0 / f64::sqrt(k);
            assert!((cv - want).abs() < want * 0.05, "shape {k}: coefficient of variation {cv}, not {want}");
        }
    }

    #[test]
    fn a_plan_that_cannot_run_says_why() {
        let ok = plan(Some(1.0), Arrival::Poisson, 0, 1);
        assert_eq!(ok.check(), Ok(()));
        let bad = |f: &dyn Fn(&mut LoadPlan)| {
            let mut p = ok.clone();
            f(&mut p);
            p.check().unwrap_err()
        };
        assert!(bad(&|p| p.rate = Some(0.0)).contains("positive number of requests per second, not 0"));
        assert!(bad(&|p| p.rate = Some(-2.0)).contains("not -2"));
        assert!(bad(&|p| p.rate = Some(f64::NAN)).contains("not NaN"));
        assert!(bad(&|p| p.rate = Some(f64::INFINITY)).contains("not inf"));
        assert!(bad(&|p| p.arrival = Arrival::Gamma(0.0)).contains("burstiness"));
        assert!(bad(&|p| p.count = 0).contains("count 0"));
        assert!(bad(&|p| p.requests.clear()).contains("at least one request"));
        assert!(bad(&|p| p.max_concurrency = Some(0)).contains("max-concurrency 0"));
        assert!(bad(&|p| p.warmup = MAX_LOAD_REQUESTS).contains("at most 100000"));
        // A rate so low its schedule fits no clock: refused, never a panic.
        assert!(
            bad(&|p| {
                p.rate = Some(1e-300);
                p.count = 2;
            })
            .contains("span more than 7 days")
        );
        let mut tiny = ok.clone();
        tiny.rate = Some(1e-300);
        tiny.count = 2;
        assert_eq!(tiny.last_send(), None);
    }

    #[test]
    fn the_lag_bound_is_ten_percent_of_the_time_scale_and_never_below_a_millisecond() {
        assert_eq!(lag_bound_ms(Some(500.0), 9_000.0, 4096, 4500), 1.0, "2 ms intervals: 1 ms");
        assert!((lag_bound_ms(Some(2.0), 0.0, 1, 10) - 50.0).abs() < 1e-9, "500 ms intervals: 50 ms");
        // A burst: 10% of its window.
        assert!((lag_bound_ms(None, 2_000.0, 4096, 100) - 200.0).abs() < 1e-9);
        // A closed loop of 4 slots: 10% of the time one request held a slot.
        assert!((lag_bound_ms(None, 2_000.0, 4, 100) - 8.0).abs() < 1e-9);
    }

    fn held(plan: &LoadPlan, lag: f64, waited: usize) -> Option<String> {
        Held {
            plan,
            lag_p99_ms: lag,
            window_ms: 1_000.0,
            slots: plan.max_concurrency.unwrap_or(4096),
            cap: 4096,
            waited,
        }
        .reason()
    }

    #[test]
    fn a_schedule_not_held_says_whose_fault_it_was() {
        let mut p = plan(Some(100.0), Arrival::Constant, 0, 100);
        assert_eq!(held(&p, 0.9, 0), None, "under 1 ms: held");
        let late = held(&p, 3.0, 0).unwrap();
        assert!(late.starts_with("the client could not hold the schedule: the p99 send lag was 3.00 ms, past 1.00 ms (the larger of 1 ms and 10% of the 10.00 ms mean interval at 100 requests/s)"), "{late}");
        assert!(
            late.ends_with("the host's runtime was late to send them (busy or blocked), not waiting for a slot"),
            "{late}"
        );
        p.max_concurrency = Some(2);
        let capped = held(&p, 300.0, 90).unwrap();
        assert!(
            capped.contains("90 of 100 measured requests found all 2 slots busy at their instant (max-concurrency 2)"),
            "{capped}"
        );
        // A burst larger than the host opens at once is a ramp.
        let mut burst = plan(None, Arrival::Constant, 0, 5000);
        burst.warmup = 10;
        let ramp = Held { plan: &burst, lag_p99_ms: 0.0, window_ms: 1.0, slots: 4096, cap: 4096, waited: 0 };
        assert!(ramp.reason().unwrap().contains("5010 requests are more than the host keeps open (4096 at most"));
    }

    #[test]
    fn a_load_that_streamed_past_the_client_s_ceiling_is_client_bound() {
        let ceiling = ClientCeiling {
            max_tok_s: 10_000.0,
            paced_itl_ms: 5.0,
            itl_error_ms: 0.02,
            ttft_error_ms: 0.3,
            flag_margin: 0.5,
        };
        // `n` measured replies of `chunks` chunks each over one second, and
        // a warm-up reply and a lost request that count for nothing.
        let load = |n: usize, chunks: usize| {
            let reply = |k: usize| {
                let mut r = Reply::default();
                r.timing.chunk_arrivals_ms = (0..k).map(|i| i as f64).collect();
                r
            };
            let req = |warmup: bool, reply: Result<Reply, CallError>| LoadRequest {
                intended_ms: 0.0,
                sent_ms: 0.0,
                ended_ms: 1000.0,
                warmup,
                reply,
            };
            let mut requests = vec![req(true, Ok(reply(100_000)))];
            requests.extend((0..n).map(|_| req(false, Ok(reply(chunks)))));
            requests.push(req(false, Err(CallError::lost("reset"))));
            LoadResult { requests, window_ms: 1000.0, lag_p99_ms: 0.1, client_bound: None, load: None }
        };
        let mut under = load(10, 400);
        assert_eq!(under.streamed_per_s(), Some(4000.0));
        under.hold_to(&ceiling);
        assert_eq!(under.client_bound, None, "4,000 chunks/s is under half of 10,000 tok/s");
        let mut over = load(10, 600);
        over.hold_to(&ceiling);
        let why = over.client_bound.expect("6,000 chunks/s is past half the ceiling");
        assert!(
            why.contains("took in 6000 chunks/s over the window, above 50% of its own ceiling (10000 tok/s"),
            "{why}"
        );
        // Late and past the ceiling: both reasons, the lag's first.
        let mut late = load(10, 600);
        late.client_bound = Some("the p99 send lag was 40 ms".into());
        late.hold_to(&ceiling);
        let why = late.client_bound.expect("still client-bound");
        assert!(
            why.starts_with("the p99 send lag was 40 ms; and the client may not have kept up with the stream: it took in 6000 chunks/s"),
            "{why}"
        );
        // Late but under the ceiling: the lag's reason alone.
        let mut slow = load(10, 400);
        slow.client_bound = Some("the p99 send lag was 40 ms".into());
        slow.hold_to(&ceiling);
        assert_eq!(slow.client_bound.as_deref(), Some("the p99 send lag was 40 ms"));
        // Replies that never overlap: the window's figure stays low, but
        // each reply streamed past half the ceiling from its send to its
        // end (60 chunks in 10 ms of a 1 s window: 6,000 chunks/s).
        let mut apart = load(10, 60);
        for r in &mut apart.requests {
            r.ended_ms = 10.0;
        }
        assert_eq!(apart.streamed_per_s(), Some(600.0));
        assert_eq!(apart.reply_streamed_per_s(), Some(6000.0));
        apart.hold_to(&ceiling);
        let why = apart.client_bound.expect("each reply streamed past half the ceiling");
        assert!(
            why.contains(
                "the median reply streamed 6000 chunks/s from its send to its end, above 50% of its own ceiling"
            ),
            "{why}"
        );
        // Nothing measured, no window: nothing to hold.
        let mut empty = load(0, 0);
        empty.window_ms = 0.0;
        assert_eq!(empty.streamed_per_s(), None);
        assert_eq!(empty.reply_streamed_per_s(), None);
    }
}
