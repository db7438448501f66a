//! `media` (row "Shares a box with media"): can a media workload (video,
//! image or speech generation) run on the same box beside this serve?
//!
//! The host reads the box's memory with the serve loaded and idle (each
//! GPU's free memory, the unified pool of a box like the DGX Spark, or the
//! host's available memory on a machine without a GPU) and, for a server it
//! launched, the engine's KV bytes per token. What the media stack itself
//! holds (`loadout_gib`: ComfyUI and Whisper, 20.5 GiB on the seed's box)
//! comes off; against each budget of the suite (the seed's: a 15-second LTX
//! video needs 48.8 GiB free with the stack up, a 4-second one 44.2) the
//! verdict is YES, MARGINAL, YES WITH KV TRADE (how many KV
//! tokens must go, how many are kept) or NO ([`verdict`]). A server on
//! another machine is N/A: the harness cannot see that box.

pub mod verdict;

use serde::Deserialize;
use sparktest_sdk::contract::media as names;
use sparktest_sdk::*;
use verdict::{Fit, GIB, Inputs};

struct Media;

/// The suite's config.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Media workloads and the free memory each needs.
    #[serde(default = "budgets")]
    budgets: Vec<Budget>,
    /// What must be left beyond a budget to call it a clean fit, GiB.
    #[serde(default = "margin")]
    margin_gib: f64,
    /// What the media stack itself holds once it is loaded (ComfyUI with
    /// its models, Whisper), GiB: the budgets are free memory *with the
    /// stack up*, so it comes off what the serve leaves.
    #[serde(default = "loadout")]
    loadout_gib: f64,
}

/// One media workload.
#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    /// Case name part, e.g. `ltx-15s`.
    id: String,
    /// What it is, for people.
    name: String,
    /// Free memory it needs, GiB.
    gib: f64,
}

fn budgets() -> Vec<Budget> {
    vec![
        Budget { id: "ltx-15s".into(), name: "a 15-second LTX video".into(), gib: 48.8 },
        Budget { id: "ltx-4s".into(), name: "a 4-second LTX video".into(), gib: 44.2 },
    ]
}
fn margin() -> f64 {
    2.0
}
/// The seed's media stack (ComfyUI with LTX, Whisper) on a DGX Spark.
fn loadout() -> f64 {
    20.5
}

/// The pool the media workload would use: the GPU with the most free
/// memory, else the unified or system pool.
fn best_pool(pools: &[MemoryPool]) -> Option<&MemoryPool> {
    pools.iter().max_by(|a, b| {
        let rank = |p: &MemoryPool| (matches!(p.kind, PoolKind::Gpu | PoolKind::Unified), p.free_bytes);
        rank(a).cmp(&rank(b))
    })
}

fn kind(p: &MemoryPool) -> &'static str {
    match p.kind {
        PoolKind::Gpu => "GPU memory",
        PoolKind::Unified => "unified memory",
        PoolKind::System => "system memory",
    }
}

impl Instrument for Media {
    type Config = Config;
    type Case = Budget;

    fn describe() -> Info {
        Info::new(
            "media",
            names::ROW.title,
            env!("CARGO_PKG_VERSION"),
            "Whether a media workload (video, image or speech generation) fits on the same box \
             beside the serve: free memory read with the serve loaded and idle (GPU memory per \
             device, the unified pool, or system memory), less what the media stack itself holds \
             (loadout_gib), against a measured media budget (a 15-second LTX video needs 48.8 GiB \
             free with the stack up, a 4-second one 44.2). YES with the margin \
             to spare; MARGINAL within it; YES WITH KV TRADE when re-serving with a smaller KV \
             pool frees enough (KV bytes per token from the engine, the tokens kept shown); NO \
             otherwise. Only where the harness can see the box.",
        )
    }

    fn cases(c: &Config) -> Result<Vec<Case<Budget>>, String> {
        if c.budgets.is_empty() || c.budgets.iter().any(|b| !b.gib.is_finite() || b.gib <= 0.0) {
            return Err("media config: budgets must be a non-empty list of positive sizes".into());
        }
        for (key, v) in [("margin_gib", c.margin_gib), ("loadout_gib", c.loadout_gib)] {
            if !v.is_finite() || v < 0.0 {
                return Err(format!("media config: {key} must be a size of 0 or more, not {v}"));
            }
        }
        Ok(c.budgets.iter().map(|b| Case::new(format!("fits::{}", b.id), b.clone()).tag(names::ROW.title)).collect())
    }

    fn run(c: &Config, budget: &Budget) -> Finding {
        let f = server_facts();
        let Some(pool) = best_pool(&f.memory_pools) else {
            return Finding::not_applicable(
                f.memory_unseen.unwrap_or_else(|| "the box's memory could not be read".into()),
            );
        };
        let alone = pool.free_bytes as f64;
        let inputs = Inputs {
            free: alone - c.loadout_gib * GIB,
            budget: budget.gib * GIB,
            margin: c.margin_gib * GIB,
            kv_bytes_per_token: f.kv_bytes.as_ref().map(|k| k.per_token),
            pool_tokens: f.kv_pool_tokens,
            floor_tokens: f.context_per_request,
        };
        let (v, why) = verdict::verdict(&inputs);
        let free_gib = inputs.free / GIB;
        let mut outcome = match v {
            Fit::No => Finding::fail(format!(
                "{} does not fit: {free_gib:.1} GiB free with the media stack loaded vs {} needed",
                budget.name, budget.gib
            )),
            _ => Finding::pass(),
        }
        .note(names::VERDICT, v.word())
        .note(names::BUDGET, budget.name.clone())
        .note(names::POOL, format!("{} of {}", kind(pool), pool.device))
        .metric(names::FREE_GIB, free_gib, "GiB")
        .metric(names::FREE_ALONE_GIB, alone / GIB, "GiB")
        .metric(names::LOADOUT_GIB, c.loadout_gib, "GiB")
        .metric(names::BUDGET_GIB, budget.gib, "GiB")
        .metric(names::MARGIN_GIB, c.margin_gib, "GiB")
        .metric(names::POOL_TOTAL_GIB, pool.total_bytes as f64 / GIB, "GiB");
        if let Some(k) = &f.kv_bytes {
            outcome = outcome
                .metric(names::KV_BYTES_PER_TOKEN, k.per_token, "bytes")
                .note(names::KV_BYTES_SOURCE, k.source.clone());
        }
        if let Some(p) = f.kv_pool_tokens {
            outcome = outcome.metric(names::KV_POOL_TOKENS, p as f64, "tokens");
        }
        if let Fit::YesWithKvTrade { kept, given, free_after } = v {
            outcome = outcome
                .metric(names::KV_KEPT_TOKENS, kept as f64, "tokens")
                .metric(names::KV_GIVEN_TOKENS, given as f64, "tokens")
                .metric(names::FREE_AFTER_TRADE_GIB, free_after / GIB, "GiB");
        }
        if let Some(why) = why {
            outcome = outcome.note(names::NO_TRADE, why);
        }
        outcome
    }
}

register_instrument!(Media);
