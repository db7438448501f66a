//! The probe before a run: what server is this, does it serve the target's
//! model, and how is it set up. The engine-specific reading is in
//! [`crate::engines`]; this file checks the model and records the evidence.

use serde_json::Value;

use super::client::Client;
use super::engines::{self, EngineKind};
use super::types::{CallError, ServerFacts};

/// Why the probe stopped the run.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// `/v1/models` could not be read, or is not what the protocol promises.
    #[error("failed to reach {url}: {reason}")]
    Unreachable {
        /// URL tried (credentials redacted).
        url: String,
        /// What happened.
        reason: String,
    },
    /// The server refused the credentials (401, 403).
    #[error(
        "{url} refused the credentials: HTTP {status} ({body}); set the target's api-key-env to a variable holding a key it accepts"
    )]
    Unauthorized {
        /// URL tried (credentials redacted).
        url: String,
        /// 401 or 403.
        status: u16,
        /// What it said (clipped).
        body: String,
    },
    /// The server serves other models than the target names.
    #[error("the server at {url} serves {served:?}, not the target's model {expected:?}")]
    ModelMismatch {
        /// Base URL.
        url: String,
        /// What the target names.
        expected: String,
        /// What the server reports.
        served: Vec<String>,
    },
}

/// Probe the server, identify its engine and check it serves the client's
/// model.
pub async fn probe(client: &Client) -> Result<(&'static dyn EngineKind, ServerFacts), ProbeError> {
    let url = client.base_url();
    let models_url = format!("{url}/v1/models");
    let expected = client.model().to_string();
    let models_text = client.get_text("/v1/models").await.map_err(|err| match err {
        CallError::Unauthorized { status, body, .. } => {
            ProbeError::Unauthorized { url: models_url.clone(), status, body }
        }
        other => ProbeError::Unreachable { url: models_url.clone(), reason: other.to_string() },
    })?;
    let models: Value = serde_json::from_str(&models_text).map_err(|err| ProbeError::Unreachable {
        url: models_url.clone(),
        reason: format!("not JSON ({err}); is this an OpenAI-compatible server?"),
    })?;
    let Some(entries) = models.get("data").and_then(Value::as_array) else {
        return Err(ProbeError::Unreachable {
            url: models_url,
            reason: "the answer has no \"data\" list of models; is this an OpenAI-compatible server?".into(),
        });
    };
    let served: Vec<String> =
        entries.iter().filter_map(|m| m.get("id").and_then(Value::as_str)).map(str::to_string).collect();
    let Some(entry) = entries.iter().find(|m| m.get("id").and_then(Value::as_str) == Some(expected.as_str())) else {
        return Err(ProbeError::ModelMismatch { url, expected, served });
    };
    let mut found = None;
    for engine in engines::ENGINES.iter().copied().chain([engines::GENERIC]) {
        if let Some(identity) = engine.identify(client, entry).await {
            found = Some((engine, identity));
            break;
        }
    }
    let Some((engine, identity)) = found else { unreachable!("the generic engine always identifies") };
    let mut facts = identity.facts;
    facts.model_id = expected;
    facts.engine = engine.name().to_string();
    facts.extra.push(("engine_evidence".into(), identity.evidence));
    // Whether live counters can be scraped (llama.cpp needs --metrics).
    let metrics = if !engine.has_metrics() {
        "off (the engine has no Prometheus metrics)".to_string()
    } else {
        match crate::metrics::scrape(client).await {
            Ok(samples) => format!("on ({} samples)", samples.len()),
            Err(err) => format!("off ({err})"),
        }
    };
    facts.extra.push(("metrics".into(), metrics));
    Ok((engine, facts))
}
