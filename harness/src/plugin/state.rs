//! The per-case store state and the host side of the imports.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use sparktest_record::CallRecord;
use wasmtime::StoreLimits;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use super::bindings::sparktest::plugin::{endpoint as wit, plugin_types, suite_data, types};
use super::bindings::call_error;
use crate::endpoint::{self as dom, Endpoint};

/// What the host saw of one case's endpoint calls.
#[derive(Default)]
pub struct CallLog {
    /// Every call, in order.
    pub calls: Vec<CallRecord>,
    /// The first lost call's reason: it makes the whole case lost.
    pub first_lost: Option<String>,
    /// Time spent inside endpoint calls.
    pub endpoint_time: Duration,
    transcript: Sha256,
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
    ) {
        // The transcript holds requests and replies without timing, so two
        // identical conversations hash the same.
        self.transcript.update(kind.as_bytes());
        self.transcript.update(serde_json::to_vec(request).unwrap_or_default());
        let record = match result {
            Ok(reply) => {
                let mut untimed = reply.clone();
                untimed.timing = dom::Timing::default();
                self.transcript.update(serde_json::to_vec(&untimed).unwrap_or_default());
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
                }
            }
            Err(err) => {
                self.transcript.update(err.to_string().as_bytes());
                self.note_error(err);
                CallRecord {
                    kind: kind.into(),
                    result: err.kind().into(),
                    status: match err {
                        dom::CallError::Rejected { status, .. } => Some(*status),
                        _ => None,
                    },
                    total_ms: elapsed.as_secs_f64() * 1000.0,
                    ttft_ms: None,
                    decode_ms: None,
                    prompt_tokens: None,
                    completion_tokens: None,
                    token_source: dom::TokenSource::None.as_str().into(),
                    server_load: None,
                }
            }
        };
        self.calls.push(record);
    }

    fn note_error(&mut self, err: &dom::CallError) {
        if let dom::CallError::Lost(reason) = err {
            self.first_lost.get_or_insert_with(|| reason.clone());
        }
    }

    /// Hex sha256 of the transcript.
    pub fn transcript_sha256(&self) -> String {
        self.transcript.clone().finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// Everything one store (one instance, one case) holds.
pub struct CaseState {
    pub(super) wasi: WasiCtx,
    pub(super) table: ResourceTable,
    pub(super) limits: StoreLimits,
    /// None while listing cases: no endpoint calls then.
    pub(super) endpoint: Option<Arc<Endpoint>>,
    pub(super) files: Arc<BTreeMap<String, Vec<u8>>>,
    pub(super) log: CallLog,
    /// The server's load during this case's last concurrent call.
    pub(super) last_window: Option<dom::LoadWindow>,
}

impl WasiView for CaseState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

impl CaseState {
    fn endpoint(&self) -> wasmtime::Result<Arc<Endpoint>> {
        self.endpoint
            .clone()
            .ok_or_else(|| wasmtime::format_err!("the endpoint cannot be called while listing cases"))
    }
}

fn trap_invalid(kind: &str, reason: String) -> wasmtime::Error {
    wasmtime::format_err!("instrument sent an invalid {kind} request: {reason}")
}

fn to_guest(
    result: Result<dom::Reply, dom::CallError>,
    kind: &str,
) -> wasmtime::Result<Result<wit::Reply, wit::CallError>> {
    match result {
        Ok(reply) => Ok(Ok(reply.into())),
        Err(err) => call_error(err).map(Err).map_err(|r| trap_invalid(kind, r)),
    }
}

impl CaseState {
    /// A call that leaves no call record (logprobs, metrics): its wait still
    /// counts as endpoint time and a lost one still loses the case.
    fn unrecorded<T, U: From<T>>(
        &mut self,
        started: Instant,
        result: Result<Vec<T>, dom::CallError>,
        kind: &str,
    ) -> wasmtime::Result<Result<Vec<U>, wit::CallError>> {
        self.log.endpoint_time += started.elapsed();
        match result {
            Ok(items) => Ok(Ok(items.into_iter().map(Into::into).collect())),
            Err(err) => {
                self.log.note_error(&err);
                call_error(err).map(Err).map_err(|r| trap_invalid(kind, r))
            }
        }
    }
}

impl types::Host for CaseState {}
impl plugin_types::Host for CaseState {}

impl wit::Host for CaseState {
    async fn chat(&mut self, req: wit::ChatRequest) -> wasmtime::Result<Result<wit::Reply, wit::CallError>> {
        let endpoint = self.endpoint()?;
        let req: dom::ChatRequest = req.into();
        let started = Instant::now();
        let result = endpoint.chat(&req).await;
        let elapsed = started.elapsed();
        self.log.endpoint_time += elapsed;
        self.log.record("chat", &req, elapsed, &result);
        to_guest(result, "chat")
    }

    async fn chat_concurrent(
        &mut self,
        reqs: Vec<wit::ChatRequest>,
    ) -> wasmtime::Result<Vec<Result<wit::Reply, wit::CallError>>> {
        let endpoint = self.endpoint()?;
        let reqs: Vec<dom::ChatRequest> = reqs.into_iter().map(Into::into).collect();
        let started = Instant::now();
        let (results, window) = endpoint.chat_concurrent_observed(&reqs).await;
        // Concurrent calls overlap: their wall time counts once.
        let wall = started.elapsed();
        self.log.endpoint_time += wall;
        let mut out = Vec::with_capacity(results.len());
        for (req, result) in reqs.iter().zip(results) {
            self.log.record("chat", req, wall, &result);
            if let Some(call) = self.log.calls.last_mut() {
                call.server_load = window.clone();
            }
            out.push(to_guest(result, "chat")?);
        }
        self.last_window = window;
        Ok(out)
    }

    async fn complete(
        &mut self,
        req: wit::CompletionRequest,
    ) -> wasmtime::Result<Result<wit::Reply, wit::CallError>> {
        let endpoint = self.endpoint()?;
        let req: dom::CompletionRequest = req.into();
        let started = Instant::now();
        let result = endpoint.complete(&req).await;
        let elapsed = started.elapsed();
        self.log.endpoint_time += elapsed;
        self.log.record("complete", &req, elapsed, &result);
        to_guest(result, "completion")
    }

    async fn prompt_logprobs(
        &mut self,
        text: String,
    ) -> wasmtime::Result<Result<Vec<wit::TokenLogprob>, wit::CallError>> {
        let endpoint = self.endpoint()?;
        let started = Instant::now();
        let result = endpoint.prompt_logprobs(&text).await;
        self.unrecorded(started, result, "prompt-logprobs")
    }

    async fn facts(&mut self) -> wasmtime::Result<wit::ServerFacts> {
        Ok(self.endpoint()?.facts().clone().into())
    }

    async fn scrape_metrics(&mut self) -> wasmtime::Result<Result<Vec<wit::MetricSample>, wit::CallError>> {
        let endpoint = self.endpoint()?;
        let started = Instant::now();
        let mut result = endpoint.scrape_metrics().await;
        // The host's own reading of the last concurrent window rides along
        // under the `sparktest:` prefix (docs/measurement-file.md), even
        // where the engine's metrics are off.
        if let Some(window) = &self.last_window {
            let derived = window_samples(window);
            result = match result {
                Ok(mut samples) => {
                    samples.extend(derived);
                    Ok(samples)
                }
                Err(dom::CallError::Unsupported(_)) => Ok(derived),
                Err(err) => Err(err),
            };
        }
        self.unrecorded(started, result, "metrics")
    }
}

/// The `sparktest:window_*` samples for a load window.
fn window_samples(w: &dom::LoadWindow) -> Vec<dom::MetricSample> {
    let labels = vec![("source".to_string(), w.source.clone())];
    let mut out = vec![
        ("sparktest:window_requests_running_max", f64::from(w.running_max)),
        ("sparktest:window_requests_running_mean", w.running_mean),
        ("sparktest:window_samples", f64::from(w.samples)),
    ];
    if let Some(waiting) = w.waiting_max {
        out.push(("sparktest:window_requests_waiting_max", f64::from(waiting)));
    }
    out.into_iter().map(|(name, value)| dom::MetricSample { name: name.into(), labels: labels.clone(), value }).collect()
}

impl suite_data::Host for CaseState {
    async fn read(&mut self, path: String) -> wasmtime::Result<Result<Vec<u8>, String>> {
        Ok(self
            .files
            .get(&path)
            .cloned()
            .ok_or_else(|| format!("suite file {path:?} is not pinned in the suite's [files]")))
    }

    async fn paths(&mut self) -> wasmtime::Result<Vec<String>> {
        Ok(self.files.keys().cloned().collect())
    }
}
