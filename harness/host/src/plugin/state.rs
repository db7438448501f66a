//! The per-case store state and the host side of the imports.
//!
//! The work of every import is done once, in host types ([`CaseState`]'s
//! own methods); each interface version's `Host` impl only converts.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use sparktest_record::CallRecord;
use wasmtime::StoreLimits;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::transcript::Recorder;
use sparktest_endpoint::{self as dom, Endpoint};

/// A second target that grades replies, as instruments reach it.
pub struct Judge {
    /// Its target name.
    pub name: String,
    /// Its endpoint.
    pub endpoint: Arc<Endpoint>,
}

/// Restarts the target a case runs against (for restart-to-restart
/// reproducibility); None when the harness did not launch it.
pub type Restarter = Arc<dyn Fn() -> Result<(), String> + Send + Sync>;

/// What the host saw of one case's endpoint calls.
#[derive(Default)]
pub struct CallLog {
    /// Every call, in order.
    pub calls: Vec<CallRecord>,
    /// The first lost call's reason: it makes the whole case lost.
    pub first_lost: Option<String>,
    /// Why the run must stop (the server refused the credentials).
    pub stop: Option<String>,
    /// Time spent inside endpoint calls.
    pub endpoint_time: Duration,
    /// The transcript and its address.
    pub recorder: Recorder,
}

impl CallLog {
    /// Record one call. Wall time is added by the caller, once per wait
    /// (concurrent calls overlap).
    fn record<T: serde::Serialize>(
        &mut self,
        kind: &str,
        request: &T,
        elapsed: Duration,
        result: &Result<dom::Reply, dom::CallError>,
        who: Option<&str>,
    ) {
        self.record_call(kind, request, elapsed, result, who, Loses::Case);
    }

    /// Record one call; `loses` says what a lost one does.
    fn record_call<T: serde::Serialize>(
        &mut self,
        kind: &str,
        request: &T,
        elapsed: Duration,
        result: &Result<dom::Reply, dom::CallError>,
        who: Option<&str>,
        loses: Loses,
    ) {
        // A request the host refused to build was never sent: no call.
        if matches!(result, Err(err) if err.class().effect == dom::Effect::Invalid) {
            return;
        }
        let record = match result {
            Ok(reply) => {
                let mut untimed = reply.clone();
                untimed.timing = dom::Timing::default();
                self.recorder.add(kind, request, Ok(&untimed), Some(&reply.timing));
                CallRecord {
                    kind: kind.into(),
                    result: "ok".into(),
                    status: Some(reply.status),
                    total_ms: reply.timing.total_ms,
                    ttft_ms: reply.timing.ttft_ms,
                    decode_ms: reply.timing.decode_ms,
                    prompt_tokens: reply.usage.prompt_tokens,
                    completion_tokens: reply.usage.completion_tokens,
                    token_source: reply.usage.source.as_str().into(),
                    server_load: None,
                    cached_tokens: reply.usage.cached_tokens,
                    attempts: reply.attempts.max(1),
                    invalid_counts: reply.usage.invalid.clone(),
                    intended_ms: None,
                    sent_ms: None,
                    warmup: false,
                }
            }
            Err(err) => {
                self.recorder.add::<_, (), ()>(kind, request, Err(&err.to_string()), None);
                match loses {
                    Loses::Case => self.note_error(err, who),
                    // Refused credentials or a wrong place still stop the run.
                    Loses::Figure => {
                        if matches!(err.class().effect, dom::Effect::Stops(_)) {
                            self.note_error(err, who);
                        }
                    }
                }
                CallRecord {
                    kind: kind.into(),
                    result: err.kind().into(),
                    status: err.status(),
                    total_ms: elapsed.as_secs_f64() * 1000.0,
                    ttft_ms: None,
                    decode_ms: None,
                    prompt_tokens: None,
                    completion_tokens: None,
                    token_source: dom::TokenSource::None.as_str().into(),
                    server_load: None,
                    cached_tokens: None,
                    // Every send, the retries included.
                    attempts: err.attempts(),
                    invalid_counts: None,
                    intended_ms: None,
                    sent_ms: None,
                    warmup: false,
                }
            }
        };
        self.calls.push(record);
    }

    /// Record every request of a load as one call, in schedule order, with
    /// its intended and actual send time. A lost request is a figure of the
    /// load, not a lost case: only a load none of whose measured requests
    /// was answered (every one lost) loses the case. Each distinct request
    /// is written into the transcript once; a later send of the same
    /// request names that exchange (`{"same_as_exchange": n}`), so a
    /// 500-request load of one prompt keeps one copy of it.
    /// `sent` are the plan's requests as they were sent.
    fn record_load(&mut self, sent: &[dom::ChatRequest], result: &dom::LoadResult) {
        let mut first_exchange: Vec<Option<usize>> = vec![None; sent.len()];
        for (i, r) in result.requests.iter().enumerate() {
            let k = i % sent.len();
            let elapsed = Duration::from_secs_f64(((r.ended_ms - r.sent_ms) / 1000.0).max(0.0));
            let at = self.recorder.transcript().exchanges.len();
            match first_exchange[k] {
                Some(n) => {
                    let same = serde_json::json!({ "same_as_exchange": n });
                    self.record_call("chat", &same, elapsed, &r.reply, None, Loses::Figure);
                }
                None => {
                    self.record_call("chat", &sent[k], elapsed, &r.reply, None, Loses::Figure);
                    if self.recorder.transcript().exchanges.len() > at {
                        first_exchange[k] = Some(at);
                    }
                }
            }
            if let Some(call) = self.calls.last_mut() {
                call.intended_ms = Some(r.intended_ms);
                call.sent_ms = Some(r.sent_ms);
                call.warmup = r.warmup;
                if !r.warmup {
                    call.server_load = result.load.clone();
                }
            }
        }
        let measured: Vec<&dom::LoadRequest> = result.requests.iter().filter(|r| !r.warmup).collect();
        if !measured.is_empty() && measured.iter().all(|r| r.reply.as_ref().is_err_and(|e| e.is_lost())) {
            let first = measured.iter().find_map(|r| r.reply.as_ref().err()).map(|e| e.class().reason());
            self.first_lost.get_or_insert_with(|| {
                format!(
                    "none of the {} measured requests of the load was answered: {}",
                    measured.len(),
                    first.unwrap_or_default()
                )
            });
        }
    }

    /// A lost call loses the case; refused credentials stop the run.
    /// `who` names a target other than the one under test (the judge).
    fn note_error(&mut self, err: &dom::CallError, who: Option<&str>) {
        let class = err.class();
        if !class.effect.is_lost() {
            return;
        }
        let reason = match who {
            Some(w) => format!("{w}: {}", class.reason()),
            None => class.reason(),
        };
        if let dom::Effect::Stops(why) = class.effect {
            self.stop.get_or_insert_with(|| format!("{why} ({reason})"));
        }
        self.first_lost.get_or_insert(reason);
    }
}

/// What a lost call does to its case.
#[derive(Clone, Copy)]
enum Loses {
    /// Loses it (every call but a load's).
    Case,
    /// Is a figure of the load it belongs to.
    Figure,
}

/// Marks a host call in flight: a case out of time while one is in flight
/// waited on the server (lost); otherwise the instrument was computing.
struct InCall(Arc<AtomicBool>);

impl InCall {
    fn new(flag: &Arc<AtomicBool>) -> Self {
        flag.store(true, Ordering::SeqCst);
        InCall(flag.clone())
    }
}

impl Drop for InCall {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

/// Everything one store (one instance, one case) holds.
pub struct CaseState {
    /// The run's limits, as `run.limits` gives them (0.5.0).
    pub(super) run_limits: RunLimits,
    pub(super) wasi: WasiCtx,
    pub(super) table: ResourceTable,
    pub(super) limits: Watched,
    /// None while describing and listing: no endpoint calls then.
    pub(super) endpoint: Option<Arc<Endpoint>>,
    pub(super) judge: Option<Arc<Judge>>,
    pub(super) restart: Option<Restarter>,
    /// The client's own ceiling, when it was measured.
    pub(super) ceiling: Option<sparktest_record::ClientCeiling>,
    pub(super) files: Arc<BTreeMap<String, Vec<u8>>>,
    pub(super) log: CallLog,
    /// The server's load during this case's last concurrent call.
    pub(super) last_window: Option<dom::LoadWindow>,
    pub(super) in_call: Arc<AtomicBool>,
    /// When the case's wall-clock limit fires, and the limit; None while
    /// describing and listing.
    pub(super) deadline: Option<(Instant, Duration)>,
}

impl WasiView for CaseState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

/// What the host allows each case of a run, as an instrument reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunLimits {
    /// A case's wall-clock limit.
    pub case_timeout: Duration,
    /// One request's limit.
    pub request_timeout: Duration,
    /// The most requests one open-loop plan may send.
    pub max_load_requests: u32,
}

/// What a load plan whose last send falls past the case's limit does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PastLimit {
    /// It traps the instrument (0.4.0).
    Trap,
    /// It is not sent: the result has no requests and says why in its
    /// `client_bound` (0.5.0 and later): a sweep's computed rate may not
    /// fit what is left, and the instrument goes on.
    NotSent,
}

/// Most requests one `chat-concurrent` call may send at once.
const MAX_CONCURRENT: usize = 256;

pub(super) fn trap_invalid(kind: &str, reason: String) -> wasmtime::Error {
    wasmtime::format_err!("instrument sent an invalid {kind} request: {reason}")
}

/// Runs an endpoint call's work as a task of the host's runtime rather than
/// inside the case's own future. The case is driven by `block_on` on a test
/// thread: a stream read there wakes that thread from a runtime worker for
/// every chunk that lands (a futex wake, and a worker parked and unparked),
/// which cost more system calls than the reads themselves (816–1,395
/// calls per 1,000 tokens before, 13–17 after; see docs/benchmarks.md).
/// As a task it is polled on
/// the worker where the socket's readiness lands. If the case's future is
/// dropped (its wall-clock limit, an interrupt), the task is aborted, as the
/// future itself would have been dropped.
async fn on_runtime<T: Send + 'static>(
    work: impl std::future::Future<Output = T> + Send + 'static,
) -> wasmtime::Result<T> {
    struct AbortOnDrop(tokio::task::AbortHandle);
    impl Drop for AbortOnDrop {
        fn drop(&mut self) {
            self.0.abort();
        }
    }
    let task = tokio::spawn(work);
    let _abort = AbortOnDrop(task.abort_handle());
    match task.await {
        Ok(value) => Ok(value),
        Err(err) if err.is_panic() => std::panic::resume_unwind(err.into_panic()),
        Err(err) => Err(wasmtime::format_err!("the endpoint call was cancelled: {err}")),
    }
}

/// The host's side of every import, in host types.
impl CaseState {
    pub(super) fn endpoint(&self) -> wasmtime::Result<Arc<Endpoint>> {
        self.endpoint
            .clone()
            .ok_or_else(|| wasmtime::format_err!("the endpoint cannot be called while describing or listing cases"))
    }

    pub(super) async fn chat(&mut self, req: dom::ChatRequest) -> wasmtime::Result<Result<dom::Reply, dom::CallError>> {
        let endpoint = self.endpoint()?;
        let _busy = InCall::new(&self.in_call);
        let started = Instant::now();
        let (req, result) = on_runtime({
            let endpoint = endpoint.clone();
            async move {
                let result = endpoint.chat(&req).await;
                (req, result)
            }
        })
        .await?;
        let elapsed = started.elapsed();
        self.log.endpoint_time += elapsed;
        self.log.record("chat", endpoint.as_sent(&req).as_ref(), elapsed, &result, None);
        Ok(result)
    }

    pub(super) async fn chat_concurrent(
        &mut self,
        reqs: Vec<dom::ChatRequest>,
    ) -> wasmtime::Result<Vec<Result<dom::Reply, dom::CallError>>> {
        // Every request goes out at once: a plugin may not open sockets
        // without bound (the concurrency row asks for 4).
        if reqs.len() > MAX_CONCURRENT {
            return Err(trap_invalid(
                "chat-concurrent",
                format!("{} requests at once; at most {MAX_CONCURRENT}", reqs.len()),
            ));
        }
        let endpoint = self.endpoint()?;
        let _busy = InCall::new(&self.in_call);
        let started = Instant::now();
        let (reqs, (results, window)) = on_runtime({
            let endpoint = endpoint.clone();
            async move {
                let observed = endpoint.chat_concurrent_observed(&reqs).await;
                (reqs, observed)
            }
        })
        .await?;
        // Concurrent calls overlap: their wall time counts once.
        let wall = started.elapsed();
        self.log.endpoint_time += wall;
        for (req, result) in reqs.iter().zip(&results) {
            self.log.record("chat", endpoint.as_sent(req).as_ref(), wall, result, None);
            if let Some(call) = self.log.calls.last_mut() {
                call.server_load = window.clone();
            }
        }
        self.last_window = window;
        Ok(results)
    }

    /// A load: the plan checked (an instrument's bug traps), every request
    /// sent at its instant, each recorded as a call.
    pub(super) async fn open_loop(
        &mut self,
        plan: dom::LoadPlan,
        past: PastLimit,
    ) -> wasmtime::Result<dom::LoadResult> {
        let endpoint = self.endpoint()?;
        endpoint.check_load(&plan).map_err(|why| trap_invalid("open-loop", why))?;
        if let Some((deadline, limit)) = self.deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            let last = plan.last_send();
            if last.is_none_or(|last| last >= left) {
                let why = format!(
                    "its last send is {} away, past the case's wall-clock limit of {} s (case-timeout-secs; {:.1} s left)",
                    last.map_or("beyond any time".to_string(), |l| format!("{:.1} s", l.as_secs_f64())),
                    limit.as_secs(),
                    left.as_secs_f64()
                );
                return match past {
                    PastLimit::Trap => {
                        Err(trap_invalid("open-loop", format!("{why}: size count and rate to the limit")))
                    }
                    PastLimit::NotSent => Ok(dom::LoadResult {
                        requests: Vec::new(),
                        window_ms: 0.0,
                        lag_p99_ms: 0.0,
                        client_bound: Some(format!("not sent: {why}")),
                        load: None,
                    }),
                };
            }
        }
        let _busy = InCall::new(&self.in_call);
        let started = Instant::now();
        let (plan, mut result) = on_runtime({
            let endpoint = endpoint.clone();
            async move {
                let result = endpoint.open_loop(&plan).await;
                (plan, result)
            }
        })
        .await?;
        if let Some(ceiling) = &self.ceiling {
            result.hold_to(ceiling);
        }
        self.log.endpoint_time += started.elapsed();
        let sent: Vec<dom::ChatRequest> = plan.requests.iter().map(|r| endpoint.as_sent(r).into_owned()).collect();
        self.log.record_load(&sent, &result);
        self.last_window = result.load.clone();
        Ok(result)
    }

    pub(super) async fn complete(
        &mut self,
        req: dom::CompletionRequest,
    ) -> wasmtime::Result<Result<dom::Reply, dom::CallError>> {
        let endpoint = self.endpoint()?;
        let _busy = InCall::new(&self.in_call);
        let started = Instant::now();
        let (req, result) = on_runtime({
            let endpoint = endpoint.clone();
            async move {
                let result = endpoint.complete(&req).await;
                (req, result)
            }
        })
        .await?;
        let elapsed = started.elapsed();
        self.log.endpoint_time += elapsed;
        self.log.record("complete", &req, elapsed, &result, None);
        Ok(result)
    }

    pub(super) async fn prompt_logprobs(
        &mut self,
        text: String,
    ) -> wasmtime::Result<Result<Vec<dom::TokenLogprob>, dom::CallError>> {
        let endpoint = self.endpoint()?;
        let _busy = InCall::new(&self.in_call);
        let started = Instant::now();
        let result = endpoint.prompt_logprobs(&text).await;
        self.log.endpoint_time += started.elapsed();
        if let Err(err) = &result {
            self.log.note_error(err, None);
        }
        Ok(result)
    }

    /// Metrics, and everything read from them, are auxiliary: a failure is
    /// `Unsupported` with its reason and never loses the case.
    pub(super) async fn scrape_metrics(&mut self) -> wasmtime::Result<Result<Vec<dom::MetricSample>, dom::CallError>> {
        // Not marked as waiting on the server: a case that runs out of time
        // here is not lost (the read has its own, shorter limit).
        let endpoint = self.endpoint()?;
        let started = Instant::now();
        let result = endpoint.scrape_metrics().await;
        self.log.endpoint_time += started.elapsed();
        Ok(result)
    }

    pub(super) async fn draft_counters(&mut self) -> wasmtime::Result<Result<dom::DraftCounters, dom::CallError>> {
        let endpoint = self.endpoint()?;
        let started = Instant::now();
        let result = endpoint.draft_counters().await;
        self.log.endpoint_time += started.elapsed();
        Ok(result)
    }

    pub(super) async fn grade(
        &mut self,
        req: dom::ChatRequest,
    ) -> wasmtime::Result<Result<dom::Reply, dom::CallError>> {
        self.endpoint()?;
        let Some(judge) = self.judge.clone() else {
            return Ok(Err(dom::CallError::Unsupported("no judge is configured for this run (--judge NAME)".into())));
        };
        let _busy = InCall::new(&self.in_call);
        let started = Instant::now();
        let (req, result) = on_runtime({
            let endpoint = judge.endpoint.clone();
            async move {
                let result = endpoint.chat(&req).await;
                (req, result)
            }
        })
        .await?;
        let elapsed = started.elapsed();
        self.log.endpoint_time += elapsed;
        self.log.record("judge", &req, elapsed, &result, Some(&format!("judge {}", judge.name)));
        Ok(result)
    }

    pub(super) async fn restart(&mut self) -> wasmtime::Result<Result<(), dom::CallError>> {
        self.endpoint()?;
        let Some(restart) = self.restart.clone() else {
            return Ok(Err(dom::CallError::Unsupported(
                "the harness can restart only a server it launched, for an instrument marked exclusive".into(),
            )));
        };
        let _busy = InCall::new(&self.in_call);
        let started = Instant::now();
        let result = tokio::task::spawn_blocking(move || restart()).await.unwrap_or_else(|e| Err(e.to_string()));
        self.log.endpoint_time += started.elapsed();
        Ok(result.map_err(|why| {
            let err = dom::CallError::lost(format!("the server did not come back after a restart: {why}"));
            self.log.note_error(&err, None);
            err
        }))
    }

    pub(super) fn facts(&self) -> wasmtime::Result<dom::ServerFacts> {
        Ok(self.endpoint()?.facts().clone())
    }

    pub(super) fn read(&self, path: &str) -> Result<Vec<u8>, String> {
        self.files.get(path).cloned().ok_or_else(|| format!("suite file {path:?} is not pinned in the suite's [files]"))
    }

    pub(super) fn paths(&self) -> Vec<String> {
        self.files.keys().cloned().collect()
    }
}

/// The store's limits, and the most memory its guest asked for: what the
/// board says of its reporter, so that a user sees how near the limit a
/// board is before it is reached.
pub(super) struct Watched {
    pub(super) limits: StoreLimits,
    /// The largest size any of its linear memories grew to, in bytes.
    pub(super) peak: usize,
}

impl wasmtime::ResourceLimiter for Watched {
    fn memory_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        let grows = self.limits.memory_growing(current, desired, maximum)?;
        if grows {
            self.peak = self.peak.max(desired);
        }
        Ok(grows)
    }

    fn memory_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.limits.memory_grow_failed(error)
    }

    fn table_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        self.limits.table_growing(current, desired, maximum)
    }

    fn table_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.limits.table_grow_failed(error)
    }

    fn instances(&self) -> usize {
        self.limits.instances()
    }

    fn tables(&self) -> usize {
        self.limits.tables()
    }

    fn memories(&self) -> usize {
        self.limits.memories()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(log: &mut CallLog, err: dom::CallError) -> serde_json::Value {
        let req = dom::ChatRequest::new(vec![dom::Message::text(dom::Role::User, "hi")]);
        log.record("chat", &req, Duration::from_millis(5), &Err(err), None);
        serde_json::to_value(log.calls.last().unwrap()).unwrap()
    }

    #[test]
    fn a_failed_call_s_record_counts_every_send() {
        let mut log = CallLog::default();
        // One send: the record as it always was, no `attempts`.
        let once = failed(&mut log, dom::CallError::lost("connection refused"));
        assert_eq!((once["result"].as_str(), once.get("attempts")), (Some("lost"), None), "{once}");
        // Retries: every send counted.
        let twice = failed(&mut log, dom::CallError::lost("reset (after 2 sends)").sent(2));
        assert_eq!(twice["attempts"], 2, "{twice}");
        let refused = dom::CallError::Rejected { status: 400, body: "too long".into(), attempts: 3 };
        let refused = failed(&mut log, refused);
        assert_eq!((refused["result"].as_str(), refused["attempts"].as_u64()), (Some("rejected"), Some(3)));
        assert_eq!(log.first_lost.as_deref(), Some("connection refused"), "the first lost call's reason");
        assert_eq!(log.stop, None);
    }

    #[test]
    fn refused_credentials_lose_the_case_and_stop_the_run() {
        let mut log = CallLog::default();
        let err = dom::CallError::Unauthorized { status: 401, body: "no".into(), attempts: 1 };
        let record = failed(&mut log, err);
        assert_eq!(record["result"], "unauthorized");
        assert_eq!(log.first_lost.as_deref(), Some("HTTP 401: the server refused the credentials (no)"));
        assert_eq!(
            log.stop.as_deref(),
            Some("a server refused the credentials (HTTP 401: the server refused the credentials (no))")
        );
        // The transcript says it as it has since 1.2.
        let said = serde_json::to_string(&log.recorder.transcript().exchanges[0]).unwrap();
        assert!(said.contains("unauthorized: HTTP 401: the server refused the credentials: no"), "{said}");
    }

    fn load_request(i: usize, warmup: bool, reply: Result<dom::Reply, dom::CallError>) -> dom::LoadRequest {
        let at = i as f64 * 10.0;
        dom::LoadRequest { intended_ms: at, sent_ms: at + 0.25, ended_ms: at + 40.0, warmup, reply }
    }

    fn answered() -> Result<dom::Reply, dom::CallError> {
        Ok(dom::Reply { text: "hi".into(), status: 200, attempts: 1, ..Default::default() })
    }

    fn load(requests: Vec<dom::LoadRequest>) -> dom::LoadResult {
        let window = dom::LoadWindow { source: "llama.cpp /slots".into(), samples: 3, ..Default::default() };
        dom::LoadResult { requests, window_ms: 1.0, lag_p99_ms: 0.25, client_bound: None, load: Some(window) }
    }

    #[test]
    fn a_load_s_requests_are_calls_with_their_send_times_and_a_lost_one_is_a_figure() {
        let mut log = CallLog::default();
        let sent = [
            dom::ChatRequest::new(vec![dom::Message::text(dom::Role::User, "a")]),
            dom::ChatRequest::new(vec![dom::Message::text(dom::Role::User, "b")]),
        ];
        let lost = || Err(dom::CallError::lost("connection reset"));
        let unanswered = Err(dom::CallError::Unanswered { status: 503, body: "busy".into(), attempts: 1 });
        let result = load(vec![
            load_request(0, true, answered()),
            load_request(1, false, lost()),
            load_request(2, false, answered()),
            load_request(3, false, unanswered),
            load_request(4, false, answered()),
        ]);
        log.record_load(&sent, &result);
        let calls: Vec<serde_json::Value> = log.calls.iter().map(|c| serde_json::to_value(c).unwrap()).collect();
        assert_eq!(calls.len(), 5, "every request is a call, the lost ones too");
        assert_eq!((calls[0]["warmup"].as_bool(), calls[1].get("warmup")), (Some(true), None), "{calls:?}");
        assert_eq!((calls[1]["intended_ms"].as_f64(), calls[1]["sent_ms"].as_f64()), (Some(10.0), Some(10.25)));
        assert_eq!(
            (calls[1]["result"].as_str(), calls[1]["total_ms"].as_f64()),
            (Some("lost"), Some(39.75)),
            "ended minus sent"
        );
        assert_eq!((calls[3]["result"].as_str(), calls[3]["status"].as_u64()), (Some("lost"), Some(503)));
        // The load's window is on its measured calls only.
        assert!(calls[0].get("server_load").is_none() && calls[4]["server_load"]["samples"] == 3, "{calls:?}");
        // A lost request is a figure of the load: the case stands.
        assert_eq!((log.first_lost.as_deref(), log.stop.as_deref()), (None, None));
        // Each distinct request is written once; a later send names it.
        let exchanges = &log.recorder.transcript().exchanges;
        assert_eq!(exchanges.len(), 5);
        assert_eq!(exchanges[2].request, serde_json::json!({"same_as_exchange": 0}));
        assert_eq!(exchanges[3].request, serde_json::json!({"same_as_exchange": 1}));
        assert_eq!(exchanges[1].request["messages"][0]["content"][0]["Text"], "b", "{:?}", exchanges[1].request);
    }

    #[test]
    fn a_load_none_of_whose_measured_requests_was_answered_is_lost() {
        let sent = [dom::ChatRequest::new(vec![dom::Message::text(dom::Role::User, "a")])];
        let lost = || Err(dom::CallError::lost("connection refused"));
        let mut log = CallLog::default();
        // The warm-up answered; nothing measured did.
        log.record_load(
            &sent,
            &load(vec![
                load_request(0, true, answered()),
                load_request(1, false, lost()),
                load_request(2, false, lost()),
            ]),
        );
        assert_eq!(
            log.first_lost.as_deref(),
            Some("none of the 2 measured requests of the load was answered: connection refused")
        );
        // Refused credentials stop the run, in a load as anywhere.
        let mut log = CallLog::default();
        let refused = Err(dom::CallError::Unauthorized { status: 401, body: "no".into(), attempts: 1 });
        log.record_load(&sent, &load(vec![load_request(0, false, answered()), load_request(1, false, refused)]));
        assert!(log.stop.as_deref().is_some_and(|s| s.contains("refused the credentials")), "{:?}", log.stop);
    }
}
