//! What the host knows about each serving engine, one module per engine
//! behind one trait ([`EngineKind`]): how to recognise it, what its probes
//! say (context, KV pool, build), its live load, its metric names, prompt
//! logprobs and draft counters. Adding an engine is one file and one line
//! in [`ENGINES`]; no instrument branches on an engine's name.
//!
//! Every probe answer is untrusted: an engine is recognised only when its
//! answers have that engine's shape (not merely a 200), and the facts record
//! which evidence was used (`engine_evidence`).

mod generic;
mod llamacpp;
mod ollama;
mod sglang;
mod vllm;

use futures_util::future::BoxFuture;
use serde_json::Value;

use crate::client::Client;
pub use crate::types::KvBytes;
use crate::types::{CallError, MetricSample, ServerFacts, TokenLogprob};

pub use generic::Generic;
pub use llamacpp::LlamaCpp;
pub use ollama::Ollama;
pub use sglang::Sglang;
pub use vllm::Vllm;

/// The engines the probe tries, in order; anything else is [`GENERIC`].
pub static ENGINES: &[&dyn EngineKind] = &[&LlamaCpp, &Sglang, &Vllm, &Ollama];
/// Any server that speaks the OpenAI API and nothing more.
pub static GENERIC: &dyn EngineKind = &Generic;

/// What a probe found, and what it was recognised by.
#[derive(Debug, Clone)]
pub struct Identity {
    /// Facts read from the engine's own endpoints.
    pub facts: ServerFacts,
    /// Which answers identified the engine, e.g. "GET /props: total_slots 2".
    pub evidence: String,
}

/// One reading of the engine's own count of running requests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LiveLoad {
    /// What was read.
    pub source: &'static str,
    /// Requests running.
    pub running: u32,
    /// Requests waiting, where the engine reports it.
    pub waiting: Option<u32>,
}

/// The engine's speculative-decoding counters at one moment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DraftCounters {
    /// Tokens drafted and accepted so far (llama.cpp, vLLM).
    Tokens {
        /// Drafted.
        drafted: f64,
        /// Accepted.
        accepted: f64,
    },
    /// A mean accept length (SGLang).
    AcceptLength(f64),
}

/// What an engine's own words make of an error answer
/// ([`EngineKind::read_error`]). The engine reads words only: what each
/// class does to a case is [`CallError::class`]'s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reading {
    /// What its status says.
    AsIs,
    /// A clean refusal of the request itself, in these words.
    Refusal(String),
    /// The engine cannot do this (a feature its flags turned off), for this
    /// reason.
    Unsupported(String),
}

/// One serving engine.
pub trait EngineKind: Send + Sync + std::fmt::Debug + 'static {
    /// The name used in records: `llama.cpp`, `vllm`, `sglang`, `ollama`,
    /// `openai-compatible`.
    fn name(&self) -> &'static str;

    /// Read this engine's identity endpoints. Some only when every answer
    /// has this engine's shape. `model` is the server's `/v1/models` entry.
    fn identify<'a>(&'a self, client: &'a Client, model: &'a Value) -> BoxFuture<'a, Option<Identity>>;

    /// Facts only a launch command tells (the harness started the server).
    fn read_launch_command(&self, _facts: &mut ServerFacts, _command: Option<&[String]>) {}

    /// Whether [`EngineKind::live_load`] can say anything.
    fn reports_live_load(&self) -> bool {
        false
    }

    /// The engine's own count of running requests now.
    fn live_load<'a>(&'a self, _client: &'a Client) -> BoxFuture<'a, Result<LiveLoad, String>> {
        Box::pin(async { Err("the engine reports no live load".to_string()) })
    }

    /// Whether the engine serves Prometheus metrics at `/metrics`.
    fn has_metrics(&self) -> bool {
        true
    }

    /// Teacher-forced log-probabilities of every token of `text`.
    fn prompt_logprobs<'a>(
        &'a self,
        _client: &'a Client,
        _text: &'a str,
    ) -> BoxFuture<'a, Result<Vec<TokenLogprob>, CallError>> {
        Box::pin(async { Err(CallError::Unsupported("engine returns no prompt logprobs".into())) })
    }

    /// What an error answer to a chat request (a no-answer status such as
    /// a 5xx, or a clean refusal) means in this engine's own words; its
    /// class is the status's ([`Reading::AsIs`]) unless the words say
    /// otherwise. llama.cpp answers an image it cannot read, and a tool
    /// call it could not parse from the model's output, with HTTP 500: a
    /// clean refusal and the model's failure, not a lost call. vLLM refuses
    /// a tool choice it was not started to serve with HTTP 400: a feature
    /// turned off by a flag (N/A naming the flag), not the model's failure.
    fn read_error(&self, _status: u16, _body: &str, _has_images: bool, _has_tools: bool) -> Reading {
        Reading::AsIs
    }

    /// The draft counters in a metrics scrape, where the engine has them.
    fn draft_counters(&self, _samples: &[MetricSample]) -> Option<DraftCounters> {
        None
    }

    /// KV bytes per token, from what the host can see of a server it
    /// launched: the facts, the launch command and the server's log.
    fn kv_bytes_per_token(&self, _facts: &ServerFacts, _command: &[String], _server_log: &str) -> Option<KvBytes> {
        None
    }
}

/// `GET` a path and parse it as JSON; None with the reason otherwise.
pub(crate) async fn get_json(client: &Client, path: &str) -> Result<Value, String> {
    let text = client.get_text(path).await.map_err(|e| format!("GET {path}: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("GET {path}: not JSON ({e})"))
}

/// Put a JSON value among the facts under `key`, when present.
pub(crate) fn push(extra: &mut Vec<(String, String)>, key: &str, value: Option<&Value>) {
    if let Some(v) = value.filter(|v| !v.is_null()) {
        let text = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        extra.push((key.to_string(), text));
    }
}

/// The sum of every sample named `name`, if any.
pub(crate) fn metric_sum(samples: &[MetricSample], name: &str) -> Option<f64> {
    let values: Vec<f64> = samples.iter().filter(|s| s.name == name).map(|s| s.value).collect();
    (!values.is_empty()).then(|| values.iter().sum())
}

/// Live load from Prometheus gauges (vLLM, SGLang, llama.cpp without /slots).
pub(crate) async fn load_from_metrics(
    client: &Client,
    running: &str,
    waiting: &str,
    source: &'static str,
) -> Result<LiveLoad, String> {
    let samples = crate::metrics::scrape(client).await.map_err(|e| e.to_string())?;
    let as_u32 = |v: f64| v.round().clamp(0.0, f64::from(u32::MAX)) as u32;
    let running = metric_sum(&samples, running).ok_or_else(|| format!("/metrics has no {running}"))?;
    Ok(LiveLoad { source, running: as_u32(running), waiting: metric_sum(&samples, waiting).map(as_u32) })
}

/// The first pair of (drafted, accepted) counters present in a scrape.
pub(crate) fn token_counters(samples: &[MetricSample], names: &[(&str, &str)]) -> Option<DraftCounters> {
    names.iter().find_map(|(d, a)| {
        Some(DraftCounters::Tokens { drafted: metric_sum(samples, d)?, accepted: metric_sum(samples, a)? })
    })
}
