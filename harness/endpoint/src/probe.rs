//! Engine probes: what server is this, what does it serve, how is it set up.
//!
//! Every engine difference the host knows lives here, never in instruments.

use serde_json::Value;

use super::client::Client;
use super::types::{CallError, MetricSample, ServerFacts};

/// The engines the host tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// llama.cpp's llama-server: `/props`, `/slots`, `/metrics`.
    LlamaCpp,
    /// vLLM: `/version`, `/v1/models` `max_model_len`, `/metrics`.
    Vllm,
    /// SGLang: `/get_server_info`.
    Sglang,
    /// Ollama: `/api/version`.
    Ollama,
    /// Anything else that speaks the OpenAI API.
    OpenAiCompatible,
}

impl Engine {
    /// The name used in records.
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::LlamaCpp => "llama.cpp",
            Engine::Vllm => "vllm",
            Engine::Sglang => "sglang",
            Engine::Ollama => "ollama",
            Engine::OpenAiCompatible => "openai-compatible",
        }
    }
}

/// Why the probe stopped the run.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// `/v1/models` could not be read.
    #[error("failed to reach {url}: {reason}")]
    Unreachable {
        /// URL tried.
        url: String,
        /// What happened.
        reason: String,
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

async fn get_json(client: &Client, path: &str) -> Option<Value> {
    let text = client.get_text(path).await.ok()?;
    serde_json::from_str(&text).ok()
}

fn push(extra: &mut Vec<(String, String)>, key: &str, value: Option<&Value>) {
    if let Some(v) = value.filter(|v| !v.is_null()) {
        let text = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        extra.push((key.to_string(), text));
    }
}

/// Probe the server, identify its engine and check it serves `expected`.
pub async fn probe(client: &Client) -> Result<(Engine, ServerFacts), ProbeError> {
    let url = client.base_url().to_string();
    let expected = client.model().to_string();
    let models_text = client
        .get_text("/v1/models")
        .await
        .map_err(|err| ProbeError::Unreachable { url: format!("{url}/v1/models"), reason: err.to_string() })?;
    let models: Value = serde_json::from_str(&models_text).map_err(|err| ProbeError::Unreachable {
        url: format!("{url}/v1/models"),
        reason: format!("not JSON ({err})"),
    })?;
    let entries = models.get("data").and_then(Value::as_array).cloned().unwrap_or_default();
    let served: Vec<String> =
        entries.iter().filter_map(|m| m.get("id").and_then(Value::as_str)).map(str::to_string).collect();
    let Some(entry) = entries.iter().find(|m| m.get("id").and_then(Value::as_str) == Some(expected.as_str())) else {
        return Err(ProbeError::ModelMismatch { url, expected, served });
    };
    let mut facts = ServerFacts { model_id: expected.clone(), ..ServerFacts::default() };

    let engine = if let Some(props) = get_json(client, "/props").await.filter(|p| p.get("total_slots").is_some()) {
        facts.build = props.get("build_info").and_then(Value::as_str).map(str::to_string);
        facts.model_path = props.get("model_path").and_then(Value::as_str).map(str::to_string);
        facts.slots = props.get("total_slots").and_then(Value::as_u64).and_then(|n| u32::try_from(n).ok());
        facts.context_per_request = props.pointer("/default_generation_settings/n_ctx").and_then(Value::as_u64);
        push(&mut facts.extra, "model_ftype", props.get("model_ftype"));
        push(&mut facts.extra, "supports_tool_calls", props.pointer("/chat_template_caps/supports_tool_calls"));
        push(&mut facts.extra, "modalities", props.get("modalities"));
        // The pool is what the slots hold together, as /slots reports them.
        if let Some(slots) = get_json(client, "/slots").await.and_then(|s| s.as_array().cloned()) {
            let per_slot: Vec<u64> = slots.iter().filter_map(|s| s.get("n_ctx").and_then(Value::as_u64)).collect();
            if !per_slot.is_empty() {
                facts.kv_pool_tokens = Some(per_slot.iter().sum());
            }
            let speculative = slots.iter().any(|s| s.get("speculative").and_then(Value::as_bool) == Some(true));
            facts.extra.push(("speculative".into(), speculative.to_string()));
        }
        Engine::LlamaCpp
    } else if let Some(info) = get_json(client, "/get_server_info").await.filter(Value::is_object) {
        facts.build = info.get("version").and_then(Value::as_str).map(str::to_string);
        facts.model_path = info.get("model_path").and_then(Value::as_str).map(str::to_string);
        facts.context_per_request = info.get("context_length").and_then(Value::as_u64);
        facts.kv_pool_tokens = info.get("max_total_num_tokens").and_then(Value::as_u64);
        push(&mut facts.extra, "speculative_algorithm", info.get("speculative_algorithm"));
        push(&mut facts.extra, "max_running_requests", info.get("max_running_requests"));
        Engine::Sglang
    } else if let Some(version) = get_json(client, "/version").await.and_then(|v| v.get("version").cloned()) {
        facts.build = version.as_str().map(str::to_string);
        facts.context_per_request = entry.get("max_model_len").and_then(Value::as_u64);
        push(&mut facts.extra, "root", entry.get("root"));
        Engine::Vllm
    } else if let Some(version) = get_json(client, "/api/version").await.and_then(|v| v.get("version").cloned()) {
        facts.build = version.as_str().map(str::to_string);
        Engine::Ollama
    } else {
        Engine::OpenAiCompatible
    };
    // Whether live counters can be scraped (llama.cpp needs --metrics).
    let metrics = match client.get_text("/metrics").await {
        Ok(_) => "on".to_string(),
        Err(err) => format!("off ({err})"),
    };
    facts.extra.push(("metrics".into(), metrics));
    facts.engine = engine.as_str().to_string();
    Ok((engine, facts))
}

/// `GET /metrics`, parsed with the `openmetrics-parser` crate (the
/// `prometheus-parse` crate drops every name with a colon, which is every
/// llama.cpp and vLLM metric).
pub async fn scrape(client: &Client, engine: Engine) -> Result<Vec<MetricSample>, CallError> {
    if engine == Engine::Ollama {
        return Err(CallError::Unsupported("ollama exposes no Prometheus metrics".into()));
    }
    let text = match client.get_text("/metrics").await {
        Ok(text) => text,
        // llama-server without --metrics answers 501; a 404 means no endpoint.
        Err(CallError::Lost(reason)) if reason.starts_with("HTTP 501") => {
            return Err(CallError::Unsupported(format!("metrics are off on this server ({reason})")));
        }
        Err(CallError::Rejected { status: 404, .. }) => {
            return Err(CallError::Unsupported("the server has no /metrics endpoint".into()));
        }
        Err(err) => return Err(err),
    };
    // pest (under openmetrics-parser) guards against deep recursion by
    // reading the thread's native stack bounds; called from an instrument
    // this code runs on wasmtime's fiber stack, which pest misreads as
    // exhausted. Parse on a blocking-pool thread instead.
    tokio::task::spawn_blocking(move || parse_metrics(&text))
        .await
        .unwrap_or_else(|err| Err(CallError::Lost(format!("metrics parser failed: {err}"))))
}

/// Parse Prometheus text format into samples, sorted by name then labels.
/// Histograms and summaries are not flattened yet: they are skipped.
pub fn parse_metrics(text: &str) -> Result<Vec<MetricSample>, CallError> {
    use openmetrics_parser::PrometheusValue;
    let exposition = openmetrics_parser::prometheus::parse_prometheus(text)
        .map_err(|err| CallError::Lost(format!("malformed Prometheus text: {err:?}")))?;
    let mut out = Vec::new();
    for (name, family) in &exposition.families {
        for sample in family.iter_samples() {
            let value = match &sample.value {
                PrometheusValue::Unknown(n) | PrometheusValue::Gauge(n) => n.as_f64(),
                PrometheusValue::Counter(c) => c.value.as_f64(),
                PrometheusValue::Histogram(_) | PrometheusValue::Summary(_) => continue,
            };
            let mut labels: Vec<(String, String)> = sample
                .get_labelset()
                .map(|set| set.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                .unwrap_or_default();
            labels.sort();
            out.push(MetricSample { name: name.clone(), labels, value });
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.labels.cmp(&b.labels)));
    Ok(out)
}

/// Prompt logprobs by engine. llama.cpp has none.
pub async fn prompt_logprobs(
    _client: &Client,
    engine: Engine,
    _text: &str,
) -> Result<Vec<super::types::TokenLogprob>, CallError> {
    match engine {
        Engine::LlamaCpp => Err(CallError::Unsupported("engine returns no prompt logprobs".into())),
        Engine::Ollama => Err(CallError::Unsupported("engine returns no prompt logprobs".into())),
        other => Err(CallError::Unsupported(format!(
            "prompt logprobs for {} are not implemented in this harness version yet",
            other.as_str()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_llama_cpp_metrics_with_colons() {
        let text = "# HELP llamacpp:requests_processing Number of requests processing.\n\
                    # TYPE llamacpp:requests_processing gauge\n\
                    llamacpp:requests_processing 2\n\
                    # TYPE vllm:num_requests_running gauge\n\
                    vllm:num_requests_running{model_name=\"m\"} 3\n";
        let samples = parse_metrics(text).unwrap();
        assert_eq!(samples.len(), 2);
        assert_eq!(samples[0].name, "llamacpp:requests_processing");
        assert_eq!(samples[0].value, 2.0);
        assert_eq!(samples[1].labels, vec![("model_name".to_string(), "m".to_string())]);
    }
}
