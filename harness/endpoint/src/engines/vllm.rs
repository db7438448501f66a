//! vLLM: `/version`, `/v1/models` (`max_model_len`, `owned_by: vllm`),
//! `/metrics` (`vllm:` gauges and counters), prompt logprobs through
//! `/v1/completions` with `echo` and `logprobs`.

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::{
    DraftCounters, EngineKind, Identity, KvBytes, LiveLoad, get_json, load_from_metrics, push, token_counters,
};
use crate::client::Client;
use crate::logprobs::parse_echo_logprobs;
use crate::types::{CallError, MetricSample, ServerFacts, TokenLogprob};

/// vLLM's OpenAI-compatible server.
#[derive(Debug)]
pub struct Vllm;

const DRAFT: &[(&str, &str)] = &[
    ("vllm:spec_decode_num_draft_tokens_total", "vllm:spec_decode_num_accepted_tokens_total"),
    ("vllm:spec_decode_num_draft_tokens", "vllm:spec_decode_num_accepted_tokens"),
];

impl EngineKind for Vllm {
    fn name(&self) -> &'static str {
        "vllm"
    }

    fn identify<'a>(&'a self, client: &'a Client, model: &'a Value) -> BoxFuture<'a, Option<Identity>> {
        Box::pin(async move {
            let version = get_json(client, "/version").await.ok()?;
            let build = version.get("version").and_then(Value::as_str)?.to_string();
            // vLLM's own mark on its model list, or its context field.
            let owned = model.get("owned_by").and_then(Value::as_str) == Some("vllm");
            let max_len = model.get("max_model_len").and_then(Value::as_u64);
            if !owned && max_len.is_none() {
                return None;
            }
            let mut facts =
                ServerFacts { build: Some(build.clone()), context_per_request: max_len, ..ServerFacts::default() };
            push(&mut facts.extra, "root", model.get("root"));
            // The pool: cache blocks × block size, from cache_config_info's labels.
            if let Ok(samples) = crate::metrics::scrape(client).await {
                let info = samples.iter().find(|s| s.name == "vllm:cache_config_info");
                let label = |k: &str| {
                    info.and_then(|s| s.labels.iter().find(|(n, _)| n == k)).and_then(|(_, v)| v.parse::<u64>().ok())
                };
                if let (Some(blocks), Some(size)) = (label("num_gpu_blocks"), label("block_size"))
                    && let Some(pool) = blocks.checked_mul(size)
                {
                    facts.kv_pool_tokens = Some(pool);
                    facts.extra.push((
                        "kv_pool_source".into(),
                        format!("vllm:cache_config_info num_gpu_blocks {blocks} x block_size {size}"),
                    ));
                }
                if let Some(dtype) = info.and_then(|s| s.labels.iter().find(|(n, _)| n == "cache_dtype")) {
                    facts.extra.push(("kv_cache_dtype".into(), dtype.1.clone()));
                }
            }
            let mark = if owned { "owned_by vllm" } else { "max_model_len" };
            Some(Identity { facts, evidence: format!("GET /version: version {build}; /v1/models: {mark}") })
        })
    }

    fn reports_live_load(&self) -> bool {
        true
    }

    fn live_load<'a>(&'a self, client: &'a Client) -> BoxFuture<'a, Result<LiveLoad, String>> {
        Box::pin(load_from_metrics(
            client,
            "vllm:num_requests_running",
            "vllm:num_requests_waiting",
            "vllm /metrics num_requests_running",
        ))
    }

    fn prompt_logprobs<'a>(
        &'a self,
        client: &'a Client,
        text: &'a str,
    ) -> BoxFuture<'a, Result<Vec<TokenLogprob>, CallError>> {
        Box::pin(echo_logprobs(client, text))
    }

    fn draft_counters(&self, samples: &[MetricSample]) -> Option<DraftCounters> {
        token_counters(samples, DRAFT)
    }

    /// From the startup log: `Available KV cache memory: 12.34 GiB` and
    /// `GPU KV cache size: 123,456 tokens`.
    fn kv_bytes_per_token(&self, _facts: &ServerFacts, _command: &[String], log: &str) -> Option<KvBytes> {
        let mem = regex::Regex::new(r"Available KV cache memory:\s*([0-9.]+)\s*GiB").ok()?;
        let tokens = regex::Regex::new(r"GPU KV cache size:\s*([0-9,]+)\s*tokens").ok()?;
        let gib: f64 = mem.captures_iter(log).last()?[1].parse().ok()?;
        let n: f64 = tokens.captures_iter(log).last()?[1].replace(',', "").parse().ok()?;
        (n > 0.0).then(|| KvBytes {
            per_token: gib * 1073741824.0 / n,
            source: format!("vLLM startup log ({gib} GiB for {n} tokens)"),
        })
    }
}

/// Prompt logprobs through `/v1/completions` with `echo` and `logprobs`.
pub(crate) async fn echo_logprobs(client: &Client, text: &str) -> Result<Vec<TokenLogprob>, CallError> {
    let body = json!({
        "model": client.model(),
        "prompt": text,
        "max_tokens": 1,
        "temperature": 0,
        "echo": true,
        "logprobs": 1,
    });
    let value = client.post_json("/v1/completions", &body).await?;
    parse_echo_logprobs(&value, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kv_bytes_from_the_startup_log() {
        let log = "INFO worker.py: Available KV cache memory: 10.50 GiB\nINFO kv_cache_utils.py: GPU KV cache size: 1,376,256 tokens\n";
        let kv = Vllm.kv_bytes_per_token(&ServerFacts::default(), &[], log).unwrap();
        assert!((kv.per_token - 10.5 * 1073741824.0 / 1376256.0).abs() < 1e-6);
    }
}
