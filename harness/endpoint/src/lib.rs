//! The endpoint: how the cargo-sparktest host reaches a target. HTTP and
//! timing live here, in native code: every timestamp is taken at chunk
//! arrival.
//!
//! [`Client`] speaks the OpenAI chat and completions API, streamed (SSE,
//! parsed in linear time by [`sse`]) or not, and classifies every call as a
//! [`Reply`], lost (no answer), unauthorized (the setup's fault) or
//! [`CallError::Rejected`] (a clean 4xx); what each error does to a case
//! and a run is one table, [`CallError::class`]. [`Endpoint::connect`]
//! probes the engine (`engines/`, one module per engine) and checks the
//! model id.
//!
//! # Known limitations
//!
//! - Prompt logprobs: vLLM (`echo` + `logprobs`) and SGLang (`/generate`);
//!   llama.cpp and Ollama give none.
//! - The live-load sampler polls every 50 ms: a request shorter than that
//!   can run unseen.
//! - Prometheus histograms and summaries are skipped by the metrics scrape.
//! - Whether a failed send went out on a reused connection is read from the
//!   connection's local address (hyper-util's error names it; reqwest says
//!   nothing of reuse): a send whose error names no connection is never
//!   resent.
//! - An unsupported call ([`CallError::Unsupported`]: an HTTP 501, a
//!   feature the engine's flags turned off) carries no send count: its
//!   record says one send, even after a retry.
#![warn(missing_docs)]

mod call_error;
mod ceiling;
mod client;
mod engines;
mod gguf;
mod load;
mod logprobs;
mod metrics;
mod probe;
pub mod sse;
mod types;

// What a call sends, what it gets back, and how it fails.
pub use call_error::{CallError, Class, Effect};
pub use types::{
    ChatRequest, CompletionRequest, ContentPart, Message, Reply, ResponseFormat, Role, Timing, TokenLogprob,
    TokenSource, ToolCall, ToolChoice, ToolDef, Usage,
};
// What the host learns of a server and of the box it runs on.
pub use types::{Footprint, MemoryPool, MetricSample, PoolKind, ServerFacts};
// The client, its settings and the bodies it sends.
pub use client::{
    Client, ClientConfig, RetryBudget, Secret, Sends, Timeouts, chat_body, completion_body, http_builder, redact_url,
};
// The engines: what each says of itself, its load and its counters.
pub use engines::{DraftCounters, EngineKind, KvBytes, LiveLoad, LlamaCpp, Reading, Vllm};
// Load at a schedule: the plan, the send times, the result.
pub use load::{Arrival, LoadPlan, LoadRequest, LoadResult, MAX_LOAD_REQUESTS, open_request_cap, schedule};
// What the engines' answers carry beside the reply.
pub use logprobs::{parse_echo_logprobs, parse_sglang_logprobs};
pub use metrics::parse_metrics;
pub use probe::ProbeError;
pub use sparktest_record::LoadWindow;
// How fast this client can read, before any server is measured.
pub use ceiling::measure as measure_client_ceiling;

use std::time::Duration;

/// How often the server's own load is read while concurrent calls run.
pub(crate) const LOAD_SAMPLE_EVERY: Duration = Duration::from_millis(50);

/// An error answer as the engine's own words make it: a refusal keeps its
/// status and sends, an unsupported feature is N/A.
fn read_as(err: CallError, reading: Reading) -> CallError {
    match (reading, err.status()) {
        (Reading::AsIs, _) | (_, None) => err,
        (Reading::Refusal(body), Some(status)) => CallError::Rejected { status, body, attempts: err.attempts() },
        (Reading::Unsupported(why), Some(_)) => CallError::Unsupported(why),
    }
}

fn has_images(req: &ChatRequest) -> bool {
    req.messages.iter().any(|m| m.content.iter().any(|p| matches!(p, ContentPart::ImageUrl(_))))
}

/// The server's load over a call's readings: None where the engine
/// reports no live load; an empty window saying why where it does but no
/// reading came.
pub(crate) fn load_window(
    engine: &dyn EngineKind,
    readings: &[LiveLoad],
    failed: Option<String>,
) -> Option<LoadWindow> {
    match readings.first() {
        Some(first) => Some(LoadWindow {
            source: first.source.to_string(),
            samples: u32::try_from(readings.len()).unwrap_or(u32::MAX),
            running_max: readings.iter().map(|r| r.running).max().unwrap_or(0),
            running_mean: readings.iter().map(|r| f64::from(r.running)).sum::<f64>() / readings.len() as f64,
            waiting_max: readings.iter().filter_map(|r| r.waiting).max(),
        }),
        // An engine that reports its load, but no reading came: an empty
        // window saying why, not "no live load".
        None if engine.reports_live_load() => Some(LoadWindow {
            source: match failed {
                Some(why) => format!("{}: server did not confirm ({why})", engine.name()),
                None => format!("{} (no reading before the requests ended)", engine.name()),
            },
            ..LoadWindow::default()
        }),
        None => None,
    }
}

/// A probed target: the client, the engine found, and what the probe read.
#[derive(Debug, Clone)]
pub struct Endpoint {
    client: Client,
    engine: &'static dyn EngineKind,
    facts: ServerFacts,
    require_tool_calls: bool,
}

impl Endpoint {
    /// Probe the server behind `client` and check it serves the client's
    /// model. `launch_command` is the argv when the host started the server:
    /// some facts no endpoint reports are read from it (llama.cpp's unified
    /// KV cache).
    pub async fn connect(mut client: Client, launch_command: Option<&[String]>) -> Result<Self, ProbeError> {
        let (engine, mut facts) = probe::probe(&client).await?;
        engine.read_launch_command(&mut facts, launch_command);
        // A prompt count past the context is no count.
        client.context = facts.context_per_request;
        Ok(Endpoint { client, engine, facts, require_tool_calls: false })
    }

    /// The request as it is sent: with `tool_choice: "required"` where the
    /// target forces tool calls ([`Endpoint::require_tool_calls`]), as
    /// given otherwise. Transcripts record this, not the instrument's.
    pub fn as_sent<'r>(&self, req: &'r ChatRequest) -> std::borrow::Cow<'r, ChatRequest> {
        if self.require_tool_calls && !req.tools.is_empty() && matches!(req.tool_choice, None | Some(ToolChoice::Auto))
        {
            std::borrow::Cow::Owned(ChatRequest { tool_choice: Some(ToolChoice::Required), ..req.clone() })
        } else {
            std::borrow::Cow::Borrowed(req)
        }
    }

    /// Send every chat request that offers tools and leaves the choice to
    /// the model (unset or `auto`) with `tool_choice: "required"`: for a
    /// target whose model calls tools only when forced.
    pub fn require_tool_calls(&mut self) {
        self.require_tool_calls = true;
    }

    /// The engine the probe found.
    pub fn engine(&self) -> &'static dyn EngineKind {
        self.engine
    }

    /// What the probe read.
    pub fn facts(&self) -> &ServerFacts {
        &self.facts
    }

    /// The facts, for the host to add what it measured itself (the memory
    /// of a server it launched, the box's free memory).
    pub fn facts_mut(&mut self) -> &mut ServerFacts {
        &mut self.facts
    }

    /// The HTTP client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// A chat completion. An error answer the engine gives when it refuses
    /// the request itself (an image to a build without vision) is a clean
    /// refusal, whatever its status.
    pub async fn chat(&self, req: &ChatRequest) -> Result<Reply, CallError> {
        self.chat_sent(req, Sends::Retrying).await
    }

    /// A chat completion sent as `sends` says: a request of an open-loop
    /// schedule goes once ([`Sends::Once`]).
    pub async fn chat_sent(&self, req: &ChatRequest, sends: Sends) -> Result<Reply, CallError> {
        let req = self.as_sent(req);
        let req = req.as_ref();
        self.client.chat_sent(req, sends).await.map_err(|err| {
            let reading = match &err {
                CallError::Unanswered { status, body, .. } | CallError::Rejected { status, body, .. } => {
                    self.engine.read_error(*status, body, has_images(req), !req.tools.is_empty())
                }
                _ => Reading::AsIs,
            };
            read_as(err, reading)
        })
    }

    /// Several chat completions sent at once; results in request order.
    ///
    /// Each is a task of its own, read on whichever worker its socket's
    /// readiness lands: polled together in one task (a `join_all`), every
    /// chunk of any stream re-polled all of them, and each stream's chunks
    /// waited behind the others' (1.42 µs a token for the whole
    /// harness at 8 × 64,000, where the client spawned per call costs 1.05).
    /// Dropping the future aborts the tasks, as it would have dropped the
    /// calls.
    pub async fn chat_concurrent(&self, reqs: &[ChatRequest]) -> Vec<Result<Reply, CallError>> {
        let mut tasks = tokio::task::JoinSet::new();
        for (i, req) in reqs.iter().enumerate() {
            let (endpoint, req) = (self.clone(), req.clone());
            tasks.spawn(async move { (i, endpoint.chat(&req).await) });
        }
        let mut results: Vec<Option<Result<Reply, CallError>>> = reqs.iter().map(|_| None).collect();
        while let Some(joined) = tasks.join_next().await {
            match joined {
                Ok((i, result)) => results[i] = Some(result),
                Err(err) if err.is_panic() => std::panic::resume_unwind(err.into_panic()),
                // Only a runtime shutting down cancels them; what it left
                // unanswered is filled in below.
                Err(_) => {}
            }
        }
        results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err(CallError::lost("the call's task was cancelled (the runtime shut down)"))))
            .collect()
    }

    /// Several chat completions sent at once, while the server's own count
    /// of running requests is sampled; None for the window when the engine
    /// reports no live load.
    pub async fn chat_concurrent_observed(
        &self,
        reqs: &[ChatRequest],
    ) -> (Vec<Result<Reply, CallError>>, Option<LoadWindow>) {
        let work = self.chat_concurrent(reqs);
        let mut work = std::pin::pin!(work);
        let mut readings: Vec<LiveLoad> = Vec::new();
        let mut failed: Option<String> = None;
        let results = loop {
            if !self.engine.reports_live_load() {
                break (&mut work).await;
            }
            let sample = async {
                tokio::time::sleep(LOAD_SAMPLE_EVERY).await;
                self.engine.live_load(&self.client).await
            };
            tokio::select! {
                results = &mut work => break results,
                reading = sample => match reading {
                    Ok(r) => readings.push(r),
                    // An auxiliary signal: its failure is recorded, never
                    // the requests'.
                    Err(why) => { failed.get_or_insert(why); }
                },
            }
        };
        let window = load_window(self.engine, &readings, failed);
        (results, window)
    }

    /// A legacy completion.
    pub async fn complete(&self, req: &CompletionRequest) -> Result<Reply, CallError> {
        self.client.complete(req).await
    }

    /// Teacher-forced prompt logprobs, where the engine gives them.
    pub async fn prompt_logprobs(&self, text: &str) -> Result<Vec<TokenLogprob>, CallError> {
        self.engine.prompt_logprobs(&self.client, text).await
    }

    /// The engine's Prometheus metrics. An auxiliary signal: whatever goes
    /// wrong (no endpoint, metrics off, a slow or malformed answer) is
    /// `Unsupported` with the reason, never a lost call.
    pub async fn scrape_metrics(&self) -> Result<Vec<MetricSample>, CallError> {
        if !self.engine.has_metrics() {
            return Err(CallError::Unsupported(format!("{} exposes no Prometheus metrics", self.engine.name())));
        }
        crate::metrics::scrape(&self.client).await.map_err(|err| match err {
            CallError::Unsupported(r) => CallError::Unsupported(r),
            other => CallError::Unsupported(format!("server did not confirm: /metrics: {}", other.reason())),
        })
    }

    /// The engine's draft counters now (speculative decoding), from its
    /// metrics; `Unsupported` where it keeps none or they cannot be read.
    pub async fn draft_counters(&self) -> Result<DraftCounters, CallError> {
        let samples = self.scrape_metrics().await?;
        self.engine.draft_counters(&samples).ok_or_else(|| {
            CallError::Unsupported(format!("{} reports no speculative-decoding counters", self.engine.name()))
        })
    }
}
