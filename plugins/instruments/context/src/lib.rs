//! `context` (row "Context window"): the KV-cache pool the engine actually
//! allocated, in tokens, beside the configured context per request.
//!
//! Read from the engine by the host's probe (engine differences live
//! there): llama.cpp `n_ctx` per slot × slots (`/slots`), vLLM
//! `vllm:cache_config_info` `num_gpu_blocks` × `block_size`, SGLang
//! `max_total_num_tokens`. An engine that reports no pool gives N/A with
//! that reason, never a guess from the configured context.

use sparktest_sdk::contract::context as names;
use sparktest_sdk::*;

struct Context;

impl Instrument for Context {
    type Config = NoConfig;
    type Case = ();

    fn describe() -> Info {
        Info::new(
            "context",
            names::ROW.title,
            env!("CARGO_PKG_VERSION"),
            "The KV-cache pool the serving engine actually allocates at its served \
             configuration, in tokens, read from the engine itself (llama.cpp n_ctx per slot \
             x slots, vLLM cache blocks x block size, SGLang max_total_num_tokens) and shown \
             beside the configured context length per request.",
        )
    }

    fn cases(_config: &NoConfig) -> Result<Vec<Case<()>>, String> {
        Ok(vec![Case::new("kv::pool", ()).tag(names::ROW.title)])
    }

    fn run(_config: &NoConfig, _case: &()) -> Finding {
        let f = server_facts();
        let extra = |k: &str| f.extra.iter().find(|p| p.key == k).map(|p| p.value.clone());
        let Some(pool) = f.kv_pool_tokens else {
            return Finding::not_applicable(format!("the engine ({}) reports no KV-cache pool", f.engine));
        };
        let mut outcome = Finding::pass().metric(names::KV_POOL_TOKENS, pool as f64, "tokens");
        if let Some(ctx) = f.context_per_request {
            outcome = outcome.metric(names::CONTEXT_PER_REQUEST_TOKENS, ctx as f64, "tokens");
        }
        if let Some(slots) = f.slots {
            outcome = outcome.metric(names::SLOTS, f64::from(slots), "slots");
        }
        if let Some(source) = extra("kv_pool_source") {
            outcome = outcome.note(names::KV_POOL_SOURCE, source);
        }
        outcome.note(names::ENGINE, f.engine.clone())
    }
}

register_instrument!(Context);
