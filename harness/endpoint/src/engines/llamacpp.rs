//! llama.cpp's `llama-server`: `/props`, `/slots`, `/metrics` (with
//! `--metrics`); no prompt logprobs.

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::{
    DraftCounters, EngineKind, Identity, KvBytes, LiveLoad, Reading, get_json, load_from_metrics, push, token_counters,
};
use crate::client::Client;
use crate::types::{MetricSample, ServerFacts};

/// llama.cpp's `llama-server`.
#[derive(Debug)]
pub struct LlamaCpp;

/// (drafted, accepted) counter names, newest first.
const DRAFT: &[(&str, &str)] = &[
    ("llamacpp:spec_decode_num_draft_tokens_total", "llamacpp:spec_decode_num_accepted_tokens_total"),
    ("llamacpp:spec_decode_num_draft_tokens", "llamacpp:spec_decode_num_accepted_tokens"),
];

impl EngineKind for LlamaCpp {
    fn name(&self) -> &'static str {
        "llama.cpp"
    }

    fn identify<'a>(&'a self, client: &'a Client, _model: &'a Value) -> BoxFuture<'a, Option<Identity>> {
        Box::pin(async move {
            let props = get_json(client, "/props").await.ok()?;
            // Its shape, not just a 200: slots and generation settings.
            let slots = props.get("total_slots").and_then(Value::as_u64)?;
            props.get("default_generation_settings").filter(|v| v.is_object())?;
            let mut facts = ServerFacts {
                build: props.get("build_info").and_then(Value::as_str).map(str::to_string),
                model_path: props.get("model_path").and_then(Value::as_str).map(str::to_string),
                slots: u32::try_from(slots).ok(),
                context_per_request: props.pointer("/default_generation_settings/n_ctx").and_then(Value::as_u64),
                ..ServerFacts::default()
            };
            push(&mut facts.extra, "model_ftype", props.get("model_ftype"));
            push(&mut facts.extra, "supports_tool_calls", props.pointer("/chat_template_caps/supports_tool_calls"));
            push(&mut facts.extra, sparktest_contract::facts::MODALITIES.name(), props.get("modalities"));
            facts.vision = props.pointer("/modalities/vision").and_then(Value::as_bool);
            // The pool is what the slots hold together, as /slots reports them.
            match get_json(client, "/slots").await {
                Ok(Value::Array(list)) => {
                    let per_slot: Vec<u64> =
                        list.iter().filter_map(|s| s.get("n_ctx").and_then(Value::as_u64)).collect();
                    if !per_slot.is_empty() {
                        facts.kv_pool_tokens = per_slot.iter().try_fold(0u64, |a, n| a.checked_add(*n));
                        facts.extra.push((
                            "kv_pool_source".into(),
                            format!("llama.cpp /slots n_ctx summed over {} slots", per_slot.len()),
                        ));
                    }
                    let speculative = list.iter().any(|s| s.get("speculative").and_then(Value::as_bool) == Some(true));
                    facts.extra.push(("speculative".into(), speculative.to_string()));
                }
                Ok(_) => facts.extra.push(("kv_pool_source".into(), "not reported: /slots is not a list".into())),
                Err(why) => facts.extra.push(("kv_pool_source".into(), format!("not reported: {why}"))),
            }
            Some(Identity {
                facts,
                evidence: format!("GET /props: total_slots {slots} and default_generation_settings"),
            })
        })
    }

    /// llama.cpp reports each slot's `n_ctx`; with a unified KV cache
    /// (`--kv-unified`, `-kvu`) every slot reports the one shared pool, so
    /// the pool is one slot's `n_ctx`, not the sum. A server the host did not
    /// launch cannot be told apart: the fact says so.
    fn read_launch_command(&self, facts: &mut ServerFacts, command: Option<&[String]>) {
        let unified = command.map(|c| c.iter().any(|a| a == "--kv-unified" || a == "-kvu"));
        match unified {
            Some(true) => {
                if let Some(per_slot) = facts.context_per_request {
                    facts.kv_pool_tokens = Some(per_slot);
                    facts.extra.retain(|(k, _)| k != "kv_pool_source");
                    facts.extra.push((
                        "kv_pool_source".into(),
                        "llama.cpp unified KV cache (--kv-unified): one slot's n_ctx".into(),
                    ));
                }
                facts.extra.push(("kv_unified".into(), "true (launch command)".into()));
            }
            Some(false) => facts.extra.push(("kv_unified".into(), "false (launch command has no --kv-unified)".into())),
            None => facts.extra.push(("kv_unified".into(), "unknown: llama.cpp does not report it".into())),
        }
    }

    fn reports_live_load(&self) -> bool {
        true
    }

    fn live_load<'a>(&'a self, client: &'a Client) -> BoxFuture<'a, Result<LiveLoad, String>> {
        Box::pin(async move {
            if let Ok(Value::Array(slots)) = get_json(client, "/slots").await {
                let running =
                    slots.iter().filter(|s| s.get("is_processing").and_then(Value::as_bool) == Some(true)).count();
                return Ok(LiveLoad {
                    source: "llama.cpp /slots is_processing",
                    running: u32::try_from(running).unwrap_or(u32::MAX),
                    waiting: None,
                });
            }
            load_from_metrics(
                client,
                "llamacpp:requests_processing",
                "llamacpp:requests_deferred",
                "llama.cpp /metrics requests_processing",
            )
            .await
        })
    }

    /// A build without a vision projector answers images with HTTP 500
    /// "image input is not supported - hint: … provide the mmproj"; a
    /// model whose tool call the chat template's parser cannot read gets
    /// HTTP 500 "The model produced output that does not match the expected
    /// peg-native format" (or "Failed to parse …"): the model wrote it.
    fn read_error(&self, status: u16, body: &str, has_images: bool, has_tools: bool) -> Reading {
        let b = body.to_lowercase();
        if status != 500 {
            return Reading::AsIs;
        }
        if has_images && (b.contains("image input is not supported") || b.contains("mmproj")) {
            return Reading::Refusal(body.to_string());
        }
        let unparsed =
            b.contains("does not match the expected") || (b.contains("failed to parse") && b.contains("tool"));
        if has_tools && unparsed {
            return Reading::Refusal(format!("the engine could not parse the tool call the model wrote: {body}"));
        }
        Reading::AsIs
    }

    fn draft_counters(&self, samples: &[MetricSample]) -> Option<DraftCounters> {
        token_counters(samples, DRAFT)
    }

    /// The model's metadata (layers, KV heads, key and value lengths, from
    /// the GGUF header) times the cache type's bytes (`--cache-type-k` /
    /// `-ctk`, `--cache-type-v` / `-ctv`, f16 by default); or, when the
    /// server logged it, `llama_kv_cache: size = 180.00 MiB (4096 cells, 30
    /// layers, 2/2 seqs)` (size over cells × streams).
    fn kv_bytes_per_token(&self, facts: &ServerFacts, command: &[String], log: &str) -> Option<KvBytes> {
        if let Some(kv) = from_log(log) {
            return Some(kv);
        }
        let path = facts.model_path.as_deref()?;
        let shape = crate::gguf::kv_shape(std::path::Path::new(path)).ok()?;
        let flag = |names: &[&str]| {
            command
                .windows(2)
                .find(|w| names.contains(&w[0].as_str()))
                .map(|w| w[1].clone())
                .unwrap_or_else(|| "f16".into())
        };
        let (k, v) = (flag(&["--cache-type-k", "-ctk"]), flag(&["--cache-type-v", "-ctv"]));
        let (kb, vb) = (crate::gguf::cache_type_bytes(&k)?, crate::gguf::cache_type_bytes(&v)?);
        let per_layer = shape.kv_heads as f64 * (shape.key_length as f64 * kb + shape.value_length as f64 * vb);
        let assumed = if command.is_empty() {
            "; cache type assumed f16, the default: the harness did not see the launch command"
        } else {
            ""
        };
        Some(KvBytes {
            per_token: per_layer * shape.layers as f64,
            source: format!(
                "GGUF metadata: {} layers x {} KV heads x (key {} x {k} + value {} x {v}){assumed}",
                shape.layers, shape.kv_heads, shape.key_length, shape.value_length
            ),
        })
    }
}

fn from_log(log: &str) -> Option<KvBytes> {
    let re = regex::Regex::new(
        r"(llama_kv_cache\w*):\s*size\s*=\s*([0-9.]+)\s*MiB\s*\(\s*(\d+)\s*cells,[^)]*?(\d+)/\d+\s*seqs",
    )
    .ok()?;
    let mut per_token = 0.0;
    let mut lines = Vec::new();
    for c in re.captures_iter(log) {
        let (mib, cells, streams): (f64, f64, f64) = (c[2].parse().ok()?, c[3].parse().ok()?, c[4].parse().ok()?);
        if cells > 0.0 && streams > 0.0 {
            per_token += mib * 1048576.0 / (cells * streams);
            lines.push(format!("{}: {mib} MiB / ({cells} cells x {streams} streams)", &c[1]));
        }
    }
    (per_token > 0.0).then(|| KvBytes { per_token, source: format!("llama-server startup log ({})", lines.join("; ")) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unified_kv_cache_is_one_slots_context_not_the_sum() {
        let facts = || ServerFacts {
            context_per_request: Some(8192),
            kv_pool_tokens: Some(16384),
            slots: Some(2),
            ..ServerFacts::default()
        };
        let cmd: Vec<String> =
            ["llama-server", "--parallel", "2", "--kv-unified"].iter().map(|s| s.to_string()).collect();
        let mut f = facts();
        LlamaCpp.read_launch_command(&mut f, Some(&cmd));
        assert_eq!(f.kv_pool_tokens, Some(8192));
        let mut f = facts();
        LlamaCpp.read_launch_command(&mut f, Some(&cmd[..3]));
        assert_eq!(f.kv_pool_tokens, Some(16384));
        let mut f = facts();
        LlamaCpp.read_launch_command(&mut f, None);
        assert!(f.extra.iter().any(|(k, v)| k == "kv_unified" && v.starts_with("unknown")));
    }

    #[test]
    fn an_image_refused_with_a_500_is_a_refusal_of_the_request() {
        let body = r#"{"error":{"code":500,"message":"image input is not supported - hint: if this is unexpected, you may need to provide the mmproj","type":"server_error"}}"#;
        let read = |status, body: &str, images, tools| LlamaCpp.read_error(status, body, images, tools);
        assert_eq!(read(500, body, true, false), Reading::Refusal(body.to_string()));
        assert_eq!(read(500, body, false, false), Reading::AsIs);
        assert_eq!(read(500, "out of memory", true, false), Reading::AsIs);
        // The tool call the model wrote, unparsed by the template: the
        // model's failure, said so; without tools offered, no answer.
        let peg = r#"{"error":{"code":500,"message":"The model produced output that does not match the expected peg-native format","type":"server_error"}}"#;
        match read(500, peg, false, true) {
            Reading::Refusal(body) => {
                assert!(body.starts_with("the engine could not parse the tool call the model wrote"), "{body}")
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(read(500, peg, false, false), Reading::AsIs);
        assert_eq!(read(503, peg, false, true), Reading::AsIs);
    }

    #[test]
    fn kv_bytes_from_the_startup_log() {
        // llama.cpp 11434 at -lv 4: two streams of 4096 cells, 180 MiB in all.
        let log = "llama_context: n_ctx = 8192\nllama_kv_cache: size =  180.00 MiB (  4096 cells,  30 layers,  2/2 seqs), K (f16):   90.00 MiB, V (f16):   90.00 MiB\n";
        let kv = LlamaCpp.kv_bytes_per_token(&ServerFacts::default(), &[], log).unwrap();
        assert_eq!(kv.per_token, 23040.0);
        assert!(kv.source.contains("180 MiB / (4096 cells x 2 streams)"), "{}", kv.source);
        assert!(LlamaCpp.kv_bytes_per_token(&ServerFacts::default(), &[], "nothing here").is_none());
    }
}
