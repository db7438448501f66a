//! SGLang: `/get_server_info`, `/metrics` (`sglang:` gauges), prompt
//! logprobs through its native `/generate`.

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::{DraftCounters, EngineKind, Identity, KvBytes, LiveLoad, get_json, load_from_metrics, metric_sum, push};
use crate::client::Client;
use crate::logprobs::parse_sglang_logprobs;
use crate::types::{CallError, MetricSample, ServerFacts, TokenLogprob};

/// SGLang's server.
#[derive(Debug)]
pub struct Sglang;

impl EngineKind for Sglang {
    fn name(&self) -> &'static str {
        "sglang"
    }

    fn identify<'a>(&'a self, client: &'a Client, _model: &'a Value) -> BoxFuture<'a, Option<Identity>> {
        Box::pin(async move {
            let info = get_json(client, "/get_server_info").await.ok()?;
            let version = info.get("version").and_then(Value::as_str)?.to_string();
            let pool = info.get("max_total_num_tokens").and_then(Value::as_u64);
            let path = info.get("model_path").and_then(Value::as_str).map(str::to_string);
            if pool.is_none() && path.is_none() {
                return None;
            }
            let mut facts = ServerFacts {
                build: Some(version.clone()),
                model_path: path,
                context_per_request: info.get("context_length").and_then(Value::as_u64),
                kv_pool_tokens: pool,
                ..ServerFacts::default()
            };
            if pool.is_some() {
                facts.extra.push(("kv_pool_source".into(), "sglang /get_server_info max_total_num_tokens".into()));
            }
            push(&mut facts.extra, "speculative_algorithm", info.get("speculative_algorithm"));
            push(&mut facts.extra, "max_running_requests", info.get("max_running_requests"));
            Some(Identity { facts, evidence: format!("GET /get_server_info: version {version} with server args") })
        })
    }

    fn reports_live_load(&self) -> bool {
        true
    }

    fn live_load<'a>(&'a self, client: &'a Client) -> BoxFuture<'a, Result<LiveLoad, String>> {
        Box::pin(load_from_metrics(
            client,
            "sglang:num_running_reqs",
            "sglang:num_queue_reqs",
            "sglang /metrics num_running_reqs",
        ))
    }

    fn prompt_logprobs<'a>(
        &'a self,
        client: &'a Client,
        text: &'a str,
    ) -> BoxFuture<'a, Result<Vec<TokenLogprob>, CallError>> {
        Box::pin(async move {
            let body = json!({
                "text": text,
                "sampling_params": {"max_new_tokens": 1, "temperature": 0},
                "return_logprob": true,
                "logprob_start_len": 0,
                "return_text_in_logprobs": true,
            });
            let value = client.post_json("/generate", &body).await?;
            parse_sglang_logprobs(&value)
        })
    }

    fn draft_counters(&self, samples: &[MetricSample]) -> Option<DraftCounters> {
        // A mean per label set (one per rank): their mean, never their sum.
        let name = "sglang:spec_accept_length";
        let n = samples.iter().filter(|s| s.name == name).count();
        metric_sum(samples, name).map(|sum| DraftCounters::AcceptLength(sum / n as f64))
    }

    /// From the startup log: `KV Cache is allocated. #tokens: 1234, K size:
    /// 1.5 GB, V size: 1.5 GB`.
    fn kv_bytes_per_token(&self, _facts: &ServerFacts, _command: &[String], log: &str) -> Option<KvBytes> {
        let re = regex::Regex::new(r"#tokens:\s*(\d+),\s*K size:\s*([0-9.]+)\s*GB,\s*V size:\s*([0-9.]+)\s*GB").ok()?;
        let c = re.captures_iter(log).last()?;
        let (n, k, v): (f64, f64, f64) = (c[1].parse().ok()?, c[2].parse().ok()?, c[3].parse().ok()?);
        (n > 0.0).then(|| KvBytes {
            per_token: (k + v) * 1073741824.0 / n,
            source: format!("SGLang startup log (K {k} GB + V {v} GB for {n} tokens)"),
        })
    }
}
