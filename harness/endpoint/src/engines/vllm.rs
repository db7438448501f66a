//! vLLM: `/version`, `/v1/models` (`max_model_len`, `owned_by: vllm`),
//! `/metrics` (`vllm:` gauges and counters), prompt logprobs through
//! `/v1/completions` with `echo` and `logprobs`.

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::{
    DraftCounters, EngineKind, Identity, KvBytes, LiveLoad, Reading, get_json, load_from_metrics, push, token_counters,
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

    /// A server started without its tool flags refuses every tool choice
    /// but `none` with HTTP 400: `"auto" tool choice requires
    /// --enable-auto-tool-choice and --tool-call-parser to be set`,
    /// `tool_choice="required" requires --tool-call-parser to be set`. The
    /// feature is off, not the model wrong: N/A naming the flags.
    fn read_error(&self, status: u16, body: &str, _has_images: bool, has_tools: bool) -> Reading {
        let flags: Vec<&str> =
            ["--enable-auto-tool-choice", "--tool-call-parser"].into_iter().filter(|f| body.contains(f)).collect();
        let about_tools = body.contains("tool choice") || body.contains("tool_choice");
        if has_tools && status == 400 && about_tools && !flags.is_empty() {
            return Reading::Unsupported(format!(
                "vLLM serves tool calls only when started with {}: {body}",
                flags.join(" and ")
            ));
        }
        Reading::AsIs
    }

    /// From the startup log: `Available KV cache memory: 12.34 GiB` (GPU)
    /// or `Explicitly set (1.0/22.21) GiB for KV cache` (CPU), and `GPU KV
    /// cache size: 123,456 tokens` or `CPU KV cache size: 23,296 tokens`.
    fn kv_bytes_per_token(&self, _facts: &ServerFacts, _command: &[String], log: &str) -> Option<KvBytes> {
        let mem = regex::Regex::new(
            r"(?:Available KV cache memory:\s*([0-9.]+)\s*GiB|Explicitly set \(([0-9.]+)/[0-9.]+\) GiB for KV cache)",
        )
        .ok()?;
        let tokens = regex::Regex::new(r"(?:GPU|CPU) KV cache size:\s*([0-9,]+)\s*tokens").ok()?;
        let caps = mem.captures_iter(log).last()?;
        let gib: f64 = caps.get(1).or_else(|| caps.get(2))?.as_str().parse().ok()?;
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
        // vLLM on CPU (0.32.0), as its log says it.
        let cpu = "(Worker pid=22076) INFO 12-01 15:37:32 [cpu_worker.py:260] Explicitly set (1.0/22.21) GiB for KV cache on node 0.\n(EngineCore pid=21975) INFO 12-01 15:37:32 [kv_cache_utils.py:2327] CPU KV cache size: 23,296 tokens, Maximum concurrency for 2,048 tokens per request: 11.38x\n";
        let kv = Vllm.kv_bytes_per_token(&ServerFacts::default(), &[], cpu).unwrap();
        assert!((kv.per_token - 1073741824.0 / 23296.0).abs() < 1e-6, "{kv:?}");
    }

    #[test]
    fn a_tool_choice_refused_for_want_of_a_flag_is_not_applicable() {
        // vLLM 0.32.0's own words, started without its tool flags.
        for body in [
            r#"{"error":{"message":"\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set","type":"BadRequestError","param":null,"code":400}}"#,
            r#"{"error":{"message":"tool_choice=\"required\" requires --tool-call-parser to be set","type":"BadRequestError","param":null,"code":400}}"#,
        ] {
            match Vllm.read_error(400, body, false, true) {
                Reading::Unsupported(why) => assert!(why.contains("--tool-call-parser"), "{why}"),
                other => panic!("{other:?}"),
            }
            // The same words without tools offered are not about this.
            assert_eq!(Vllm.read_error(400, body, false, false), Reading::AsIs);
        }
        let too_long = r#"{"error":{"message":"This model's maximum context length is 2048 tokens","type":"BadRequestError","param":"input_tokens","code":400}}"#;
        assert_eq!(Vllm.read_error(400, too_long, false, true), Reading::AsIs);
    }
}
