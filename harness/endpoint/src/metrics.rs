//! The engine's Prometheus metrics: `GET /metrics`, parsed with the
//! `openmetrics-parser` crate (the `prometheus-parse` crate drops every name
//! with a colon, which is every llama.cpp and vLLM metric).

use crate::client::Client;
use crate::types::{CallError, MetricSample};

/// `GET /metrics`, parsed. A server with metrics off (llama.cpp without
/// `--metrics` answers 501) or without the endpoint (404) is `Unsupported`.
pub async fn scrape(client: &Client) -> Result<Vec<MetricSample>, CallError> {
    let text = match client.get_text("/metrics").await {
        Ok(text) => text,
        // llama-server without `--metrics` answers 501.
        Err(CallError::Unsupported(why)) => {
            return Err(CallError::Unsupported(format!("metrics are off on this server: {why}")));
        }
        Err(CallError::Unanswered { status: 404, .. }) => {
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
        .unwrap_or_else(|err| Err(CallError::lost(format!("metrics parser failed: {err}"))))
}

/// Parse Prometheus text format into samples, sorted by name then labels.
/// Histograms and summaries are not flattened yet: they are skipped.
pub fn parse_metrics(text: &str) -> Result<Vec<MetricSample>, CallError> {
    use openmetrics_parser::PrometheusValue;
    let exposition = openmetrics_parser::prometheus::parse_prometheus(text)
        .map_err(|err| CallError::lost(format!("/metrics is not Prometheus text: {err:?}")))?;
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
    fn html_is_not_metrics() {
        assert!(parse_metrics("<!doctype html><html><body>login</body></html>").is_err());
    }
}
