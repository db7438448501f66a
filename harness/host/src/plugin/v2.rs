//! `sparktest:plugin@0.2.0` (adds the judge, typed facts, load windows, draft counters and restarts):
//! its generated bindings and its facts; everything else it adapts as
//! every later version does ([`super::adapter`]'s `since_v0_2!`), on the
//! one case state ([`super::state`]).

bindings!("wit/since_v0.2.0");

shared_conversions!();
since_v0_2!();

/// The facts for a 0.2.0 guest: the footprint typed, why it is missing
/// still the `footprint.not_measured` pair in `extra` (with the typed
/// footprint repeated as `footprint.*` pairs, as 0.2.0 instruments may
/// read them).
mod facts {
    use super::convert::{footprint, kv_bytes, pools};
    use super::sparktest::plugin::endpoint as wit;
    use sparktest_endpoint as dom;

    pub fn facts(f: dom::ServerFacts) -> wit::ServerFacts {
        wit::ServerFacts {
            engine: f.engine,
            model_id: f.model_id,
            build: f.build,
            model_path: f.model_path,
            context_per_request: f.context_per_request,
            slots: f.slots,
            kv_pool_tokens: f.kv_pool_tokens,
            vision: f.vision,
            footprint: f.footprint.map(footprint),
            memory_pools: pools(f.memory_pools),
            memory_unseen: f.memory_unseen,
            kv_bytes: f.kv_bytes.map(kv_bytes),
            extra: super::shared::pairs(f.extra),
        }
    }
}
