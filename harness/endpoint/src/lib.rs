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
//! - Prompt logprobs are not implemented for any engine yet.
//! - Prometheus histograms and summaries are skipped by the metrics scrape.
#![warn(missing_docs)]

mod client;
mod probe;
pub mod sse;
mod types;

pub use client::{Client, Timeouts, chat_body, completion_body, http_builder};
pub use probe::{Engine, ProbeError, parse_metrics};
pub use types::*;

/// A probed target: the client, the engine found, and what the probe read.
#[derive(Debug, Clone)]
pub struct Endpoint {
    client: Client,
    engine: Engine,
    facts: ServerFacts,
}

impl Endpoint {
    /// Probe the server behind `client` and check it serves the client's model.
    pub async fn connect(client: Client) -> Result<Self, ProbeError> {
        let (engine, facts) = probe::probe(&client).await?;
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
