//! The endpoint: how the cargo-sparktest host reaches a target. HTTP and
//! timing live here, in native code: every timestamp is taken at chunk
//! arrival.
//!
//! [`Client`] speaks the OpenAI chat and completions API, streamed (SSE via
//! the `eventsource-stream` crate) or not, and classifies every call as a
//! [`Reply`], [`CallError::Lost`] (no answer) or [`CallError::Rejected`] (a
//! 4xx). [`Endpoint::connect`] probes the engine and checks the model id.
//!
//! # Known limitations
//!
//! - Prompt logprobs: vLLM (`echo` + `logprobs`) and SGLang (`/generate`);
//!   llama.cpp and Ollama give none.
//! - The live-load sampler polls every 50 ms: a request shorter than that
//!   can run unseen.
//! - Prometheus histograms and summaries are skipped by the metrics scrape.
#![warn(missing_docs)]

pub mod ceiling;
mod client;
mod probe;
pub mod sse;
mod types;

pub use client::{Client, Timeouts, chat_body, completion_body, http_builder};
pub use probe::{Engine, LiveLoad, ProbeError, parse_echo_logprobs, parse_metrics, parse_sglang_logprobs, prompt_logprobs};
pub use sparktest_record::LoadWindow;

use std::time::Duration;

/// How often the server's own load is read while concurrent calls run.
const LOAD_SAMPLE_EVERY: Duration = Duration::from_millis(50);
pub use types::*;

/// A probed target: the client, the engine found, and what the probe read.
#[derive(Debug, Clone)]
pub struct Endpoint {
    client: Client,
    engine: Engine,
    facts: ServerFacts,
}

impl Endpoint {
    /// Probe the server behind `client` and check it serves the client's
    /// model. `launch_command` is the argv when the host started the server:
    /// some facts no endpoint reports are read from it (llama.cpp's unified
    /// KV cache).
    pub async fn connect(client: Client, launch_command: Option<&[String]>) -> Result<Self, ProbeError> {
        let (engine, mut facts) = probe::probe(&client).await?;
        probe::from_launch_command(engine, &mut facts, launch_command);
        Ok(Endpoint { client, engine, facts })
    }

    /// The engine the probe found.
    pub fn engine(&self) -> Engine {
        self.engine
    }

    /// What the probe read.
    pub fn facts(&self) -> &ServerFacts {
        &self.facts
    }

    /// Facts the host adds to what the probe read (e.g. the memory of a
    /// server it launched).
    pub fn add_facts(&mut self, extra: impl IntoIterator<Item = (String, String)>) {
        self.facts.extra.extend(extra);
    }

    /// The HTTP client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// A chat completion.
    pub async fn chat(&self, req: &ChatRequest) -> Result<Reply, CallError> {
        self.client.chat(req).await
    }

    /// Several chat completions sent at once; results in request order.
    pub async fn chat_concurrent(&self, reqs: &[ChatRequest]) -> Vec<Result<Reply, CallError>> {
        futures_util::future::join_all(reqs.iter().map(|r| self.client.chat(r))).await
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
        let results = loop {
            let sample = async {
                tokio::time::sleep(LOAD_SAMPLE_EVERY).await;
                probe::live_load(&self.client, self.engine).await
            };
            tokio::select! {
                results = &mut work => break results,
                reading = sample => readings.extend(reading),
            }
        };
        let window = match readings.first() {
            Some(first) => Some(LoadWindow {
                source: first.source.to_string(),
                samples: u32::try_from(readings.len()).unwrap_or(u32::MAX),
                running_max: readings.iter().map(|r| r.running).max().unwrap_or(0),
                running_mean: readings.iter().map(|r| f64::from(r.running)).sum::<f64>() / readings.len() as f64,
                waiting_max: readings.iter().filter_map(|r| r.waiting).max(),
            }),
            // An engine that reports its load, but the requests ended before
            // the first reading: an empty window, not "no live load".
            None if probe::reports_live_load(self.engine) => Some(LoadWindow {
                source: format!("{} (no reading before the requests ended)", self.engine.as_str()),
                ..LoadWindow::default()
            }),
            None => None,
        };
        (results, window)
    }

    /// A legacy completion.
    pub async fn complete(&self, req: &CompletionRequest) -> Result<Reply, CallError> {
        self.client.complete(req).await
    }

    /// Teacher-forced prompt logprobs, where the engine gives them.
    pub async fn prompt_logprobs(&self, text: &str) -> Result<Vec<TokenLogprob>, CallError> {
        probe::prompt_logprobs(&self.client, self.engine, text).await
    }

    /// The engine's Prometheus metrics.
    pub async fn scrape_metrics(&self) -> Result<Vec<MetricSample>, CallError> {
        probe::scrape(&self.client, self.engine).await
    }
}
