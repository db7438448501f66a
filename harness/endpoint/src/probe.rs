//! Engine probes: what server is this, what does it serve, how is it set up.
//!
//! Every engine difference the host knows lives here, never in instruments.

use serde_json::{Value, json};

use super::client::Client;
use super::types::{CallError, MetricSample, ServerFacts, TokenLogprob};

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
                facts.extra.push((
                    "kv_pool_source".into(),
                    format!("llama.cpp /slots n_ctx summed over {} slots", per_slot.len()),
                ));
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
        if facts.kv_pool_tokens.is_some() {
            facts.extra.push(("kv_pool_source".into(), "sglang /get_server_info max_total_num_tokens".into()));
        }
        push(&mut facts.extra, "speculative_algorithm", info.get("speculative_algorithm"));
        push(&mut facts.extra, "max_running_requests", info.get("max_running_requests"));
        Engine::Sglang
    } else if let Some(version) = get_json(client, "/version").await.and_then(|v| v.get("version").cloned()) {
        facts.build = version.as_str().map(str::to_string);
        facts.context_per_request = entry.get("max_model_len").and_then(Value::as_u64);
        push(&mut facts.extra, "root", entry.get("root"));
        // The pool: cache blocks × block size, from the cache_config_info
        // metric's labels.
        if let Ok(samples) = scrape(client, Engine::Vllm).await {
            let info = samples.iter().find(|s| s.name == "vllm:cache_config_info");
            let label = |k: &str| {
                info.and_then(|s| s.labels.iter().find(|(n, _)| n == k)).and_then(|(_, v)| v.parse::<u64>().ok())
            };
            if let (Some(blocks), Some(size)) = (label("num_gpu_blocks"), label("block_size"))
                && let Some(pool) = blocks.checked_mul(size) {
                facts.kv_pool_tokens = Some(pool);
                facts.extra.push((
                    "kv_pool_source".into(),
                    format!("vllm:cache_config_info num_gpu_blocks {blocks} x block_size {size}"),
                ));
            }
        }
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

/// Facts only the launch command tells. llama.cpp reports each slot's
/// `n_ctx`; with a unified KV cache (`--kv-unified`, `-kvu`) every slot
/// reports the one shared pool, so the pool is one slot's `n_ctx`, not the
/// sum. A server the host did not launch cannot be told apart: the fact
/// says so.
pub fn from_launch_command(engine: Engine, facts: &mut ServerFacts, command: Option<&[String]>) {
    if engine != Engine::LlamaCpp {
        return;
    }
    let unified = command.map(|c| c.iter().any(|a| a == "--kv-unified" || a == "-kvu"));
    match unified {
        Some(true) => {
            if let Some(per_slot) = facts.context_per_request {
                facts.kv_pool_tokens = Some(per_slot);
                facts.extra.retain(|(k, _)| k != "kv_pool_source");
                facts.extra.push(("kv_pool_source".into(), "llama.cpp unified KV cache (--kv-unified): one slot's n_ctx".into()));
            }
            facts.extra.push(("kv_unified".into(), "true (launch command)".into()));
        }
        Some(false) => facts.extra.push(("kv_unified".into(), "false (launch command has no --kv-unified)".into())),
        None => facts.extra.push(("kv_unified".into(), "unknown: llama.cpp does not report it".into())),
    }
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

/// Teacher-forced prompt logprobs, by engine: vLLM through `/v1/completions`
/// with `echo` and `logprobs`, SGLang through its native `/generate` with
/// `return_logprob` from position 0. llama.cpp and Ollama give none.
pub async fn prompt_logprobs(client: &Client, engine: Engine, text: &str) -> Result<Vec<TokenLogprob>, CallError> {
    match engine {
        Engine::Vllm | Engine::OpenAiCompatible => {
            let body = json!({
                "model": client.model(),
                "prompt": text,
                "max_tokens": 1,
                "temperature": 0,
                "echo": true,
                "logprobs": 1,
            });
            let value = match client.post_json("/v1/completions", &body).await {
                // An OpenAI-compatible server that refuses `echo` has none to give.
                Err(CallError::Rejected { status, body }) if engine == Engine::OpenAiCompatible => {
                    return Err(CallError::Unsupported(format!(
                        "engine returns no prompt logprobs (echo refused: HTTP {status}: {body})"
                    )));
                }
                other => other?,
            };
            parse_echo_logprobs(&value, 1)
        }
        Engine::Sglang => {
            let body = json!({
                "text": text,
                "sampling_params": {"max_new_tokens": 1, "temperature": 0},
                "return_logprob": true,
                "logprob_start_len": 0,
                "return_text_in_logprobs": true,
            });
            let value = client.post_json("/generate", &body).await?;
            parse_sglang_logprobs(&value)
        }
        Engine::LlamaCpp | Engine::Ollama => Err(CallError::Unsupported("engine returns no prompt logprobs".into())),
    }
}

fn malformed(what: &str) -> CallError {
    CallError::Lost(format!("malformed prompt-logprobs response: {what}"))
}

/// The prompt's tokens from an OpenAI-style completion with `echo: true` and
/// `logprobs`: the first `usage.prompt_tokens` entries of
/// `choices[0].logprobs`, or, without usage, all but the last `generated`
/// (the tokens the request let the engine generate).
pub fn parse_echo_logprobs(value: &Value, generated: usize) -> Result<Vec<TokenLogprob>, CallError> {
    let logprobs = value.pointer("/choices/0/logprobs").ok_or_else(|| malformed("no choices[0].logprobs"))?;
    let tokens = logprobs.get("tokens").and_then(Value::as_array).ok_or_else(|| malformed("no logprobs.tokens"))?;
    let lps =
        logprobs.get("token_logprobs").and_then(Value::as_array).ok_or_else(|| malformed("no logprobs.token_logprobs"))?;
    if tokens.len() != lps.len() {
        return Err(malformed("tokens and token_logprobs differ in length"));
    }
    let prompt_tokens = value
        .pointer("/usage/prompt_tokens")
        .and_then(Value::as_u64)
        .and_then(|n| usize::try_from(n).ok())
        .or_else(|| tokens.len().checked_sub(generated))
        .ok_or_else(|| malformed("fewer echoed tokens than the request generates"))?;
    if prompt_tokens > tokens.len() {
        return Err(malformed("fewer echoed tokens than usage.prompt_tokens"));
    }
    tokens[..prompt_tokens]
        .iter()
        .zip(&lps[..prompt_tokens])
        .map(|(t, lp)| {
            Ok(TokenLogprob {
                token: t.as_str().ok_or_else(|| malformed("a token is not a string"))?.to_string(),
                logprob: match lp {
                    Value::Null => None,
                    v => Some(v.as_f64().ok_or_else(|| malformed("a logprob is not a number"))?),
                },
            })
        })
        .collect()
}

/// The prompt's tokens from SGLang's `/generate` `meta_info.input_token_logprobs`:
/// `[logprob, token_id, text]` per token, the first logprob null.
pub fn parse_sglang_logprobs(value: &Value) -> Result<Vec<TokenLogprob>, CallError> {
    let entries = value
        .pointer("/meta_info/input_token_logprobs")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("no meta_info.input_token_logprobs"))?;
    entries
        .iter()
        .map(|e| {
            let e = e.as_array().ok_or_else(|| malformed("an input_token_logprobs entry is not a list"))?;
            let logprob = match e.first() {
                None | Some(Value::Null) => None,
                Some(v) => Some(v.as_f64().ok_or_else(|| malformed("a logprob is not a number"))?),
            };
            let token = match e.get(2) {
                Some(Value::String(t)) => t.clone(),
                _ => e.get(1).map(Value::to_string).unwrap_or_default(),
            };
            Ok(TokenLogprob { token, logprob })
        })
        .collect()
}

/// Whether the engine reports its running requests ([`live_load`]).
pub fn reports_live_load(engine: Engine) -> bool {
    matches!(engine, Engine::LlamaCpp | Engine::Vllm | Engine::Sglang)
}

/// What the engine itself says it is running right now, by engine; None when
/// the engine does not say.
pub async fn live_load(client: &Client, engine: Engine) -> Option<LiveLoad> {
    let from_metrics = |running: &'static str, waiting: &'static str, source: &'static str| async move {
        let samples = scrape(client, engine).await.ok()?;
        let sum = |name: &str| {
            let values: Vec<f64> = samples.iter().filter(|s| s.name == name).map(|s| s.value).collect();
            (!values.is_empty()).then(|| values.iter().sum::<f64>().round() as u32)
        };
        Some(LiveLoad { source, running: sum(running)?, waiting: sum(waiting) })
    };
    match engine {
        Engine::LlamaCpp => {
            if let Some(slots) = get_json(client, "/slots").await.and_then(|s| s.as_array().cloned()) {
                let running = slots.iter().filter(|s| s.get("is_processing").and_then(Value::as_bool) == Some(true)).count();
                return Some(LiveLoad {
                    source: "llama.cpp /slots is_processing",
                    running: u32::try_from(running).unwrap_or(u32::MAX),
                    waiting: None,
                });
            }
            from_metrics("llamacpp:requests_processing", "llamacpp:requests_deferred", "llama.cpp /metrics requests_processing").await
        }
        Engine::Vllm => from_metrics("vllm:num_requests_running", "vllm:num_requests_waiting", "vllm /metrics num_requests_running").await,
        Engine::Sglang => from_metrics("sglang:num_running_reqs", "sglang:num_queue_reqs", "sglang /metrics num_running_reqs").await,
        Engine::Ollama | Engine::OpenAiCompatible => None,
    }
}

/// One reading of [`live_load`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LiveLoad {
    /// What was read.
    pub source: &'static str,
    /// Requests running.
    pub running: u32,
    /// Requests waiting, where the engine reports it.
    pub waiting: Option<u32>,
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

    #[test]
    fn a_unified_kv_cache_is_one_slots_context_not_the_sum() {
        let facts = || ServerFacts { context_per_request: Some(8192), kv_pool_tokens: Some(16384), slots: Some(2), ..ServerFacts::default() };
        let cmd: Vec<String> = ["llama-server", "--parallel", "2", "--kv-unified"].iter().map(|s| s.to_string()).collect();
        let mut f = facts();
        from_launch_command(Engine::LlamaCpp, &mut f, Some(&cmd));
        assert_eq!(f.kv_pool_tokens, Some(8192));
        let mut f = facts();
        from_launch_command(Engine::LlamaCpp, &mut f, Some(&cmd[..3]));
        assert_eq!(f.kv_pool_tokens, Some(16384));
        let mut f = facts();
        from_launch_command(Engine::LlamaCpp, &mut f, None);
        assert!(f.extra.iter().any(|(k, v)| k == "kv_unified" && v.starts_with("unknown")));
        let mut f = facts();
        from_launch_command(Engine::Vllm, &mut f, Some(&cmd));
        assert_eq!(f.kv_pool_tokens, Some(16384), "only llama.cpp reads the flag");
    }
}
