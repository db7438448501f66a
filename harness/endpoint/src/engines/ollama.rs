//! Ollama: `/api/version`; no Prometheus metrics, no prompt logprobs.

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::{EngineKind, Identity, get_json};
use crate::client::Client;
use crate::types::ServerFacts;

/// Ollama's server (its OpenAI-compatible endpoints).
#[derive(Debug)]
pub struct Ollama;

impl EngineKind for Ollama {
    fn name(&self) -> &'static str {
        "ollama"
    }

    fn identify<'a>(&'a self, client: &'a Client, _model: &'a Value) -> BoxFuture<'a, Option<Identity>> {
        Box::pin(async move {
            let v = get_json(client, "/api/version").await.ok()?;
            let version = v.get("version").and_then(Value::as_str)?.to_string();
            let facts = ServerFacts { build: Some(version.clone()), ..ServerFacts::default() };
            Some(Identity { facts, evidence: format!("GET /api/version: version {version}") })
        })
    }

    fn has_metrics(&self) -> bool {
        false
    }
}
