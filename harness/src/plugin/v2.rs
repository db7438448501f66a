//! `sparktest:plugin@0.2.0` (adds the judge, typed facts, load windows, draft counters and restarts):
//! its generated bindings, its conversions to and from the host's types,
//! and its imports implemented on the one case state ([`super::state`]).
//! What it shares with the other versions comes from [`super::adapter`]'s
//! macros.

wasmtime::component::bindgen!({
    path: "../plugins/wit/since_v0.2.0",
    world: "instrument",
    imports: { default: async | trappable },
    exports: { default: async },
});

/// The `reporter` world, sharing the instrument world's types.
pub mod reporter {
    wasmtime::component::bindgen!({
        path: "../plugins/wit/since_v0.2.0",
        world: "reporter",
        imports: { default: async | trappable },
        exports: { default: async },
        with: {
            "sparktest:plugin/types": super::sparktest::plugin::types,
            "sparktest:plugin/suite-data": super::sparktest::plugin::suite_data,
            "sparktest:plugin/plugin-types": super::sparktest::plugin::plugin_types,
        },
    });
}

shared_conversions!();

/// This version's replies, facts and errors.
pub mod convert {
    use super::sparktest::plugin::endpoint as wit;
    use super::sparktest::plugin::judge;
    use crate::endpoint as dom;

    /// A reply for a 0.2.0 guest.
    pub fn reply(r: dom::Reply) -> wit::Reply {
        wit::Reply {
            text: r.text,
            reasoning: r.reasoning,
            tool_calls: r.tool_calls.into_iter().map(Into::into).collect(),
            finish_reason: r.finish_reason,
            model: r.model,
            usage: super::shared::usage(r.usage),
            timing: super::shared::timing(r.timing),
            status: r.status,
            attempts: r.attempts,
        }
    }

    /// A call error for a 0.2.0 guest, with its status. `Invalid` traps.
    pub fn call_error(e: dom::CallError) -> Result<wit::CallError, String> {
        let status = e.status();
        Ok(match e {
            dom::CallError::Invalid(r) => return Err(r),
            dom::CallError::Rejected { status, body } => wit::CallError::Rejected(wit::Rejection { status, body }),
            dom::CallError::Unsupported(reason) => wit::CallError::Unsupported(wit::Failure { reason, status: None }),
            lost => wit::CallError::Lost(wit::Failure { reason: lost.reason(), status }),
        })
    }

    /// The facts for a 0.2.0 guest, typed.
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
            footprint: f.footprint.map(|p| wit::Footprint {
                resident_bytes: p.resident_bytes,
                gpu_process_memory_mib: p.gpu_process_memory_mib,
                mem_available_before_bytes: p.mem_available_before_bytes,
                mem_available_after_bytes: p.mem_available_after_bytes,
            }),
            memory_pools: f
                .memory_pools
                .into_iter()
                .map(|p| wit::MemoryPool {
                    kind: match p.kind {
                        dom::PoolKind::Gpu => wit::PoolKind::Gpu,
                        dom::PoolKind::Unified => wit::PoolKind::Unified,
                        dom::PoolKind::System => wit::PoolKind::System,
                    },
                    device: p.device,
                    total_bytes: p.total_bytes,
                    free_bytes: p.free_bytes,
                })
                .collect(),
            memory_unseen: f.memory_unseen,
            kv_bytes: f.kv_bytes.map(|k| wit::KvBytes { per_token: k.per_token, source: k.source }),
            extra: super::shared::pairs(f.extra),
        }
    }

    /// A load window for a 0.2.0 guest.
    pub fn window(w: dom::LoadWindow) -> wit::LoadWindow {
        wit::LoadWindow {
            source: w.source,
            samples: w.samples,
            running_max: w.running_max,
            running_mean: w.running_mean,
            waiting_max: w.waiting_max,
        }
    }

    /// Draft counters for a 0.2.0 guest.
    pub fn draft(d: dom::DraftCounters) -> wit::DraftCounts {
        match d {
            dom::DraftCounters::Tokens { drafted, accepted } => {
                wit::DraftCounts::Tokens(wit::DraftedAccepted { drafted, accepted })
            }
            dom::DraftCounters::AcceptLength(x) => wit::DraftCounts::AcceptLength(x),
        }
    }

    /// The judge's identity for a 0.2.0 guest.
    pub fn judge_info(target: &str, facts: &dom::ServerFacts) -> judge::JudgeInfo {
        judge::JudgeInfo { target: target.into(), model_id: facts.model_id.clone(), engine: facts.engine.clone() }
    }
}

/// This version's imports, on the host's case state.
mod host {
    use super::super::state::{CaseState, trap_invalid};
    use super::convert::{call_error, draft, facts, judge_info, reply, window};
    use super::sparktest::plugin::{endpoint as wit, judge, plugin_types, suite_data, types};
    use crate::endpoint as dom;

    shared_imports!();

    impl wit::Host for CaseState {
        shared_endpoint_calls!();

        async fn scrape_metrics(&mut self) -> wasmtime::Result<Result<Vec<wit::MetricSample>, wit::CallError>> {
            out(CaseState::scrape_metrics(self).await?, "metrics", |v| v.into_iter().map(Into::into).collect())
        }

        async fn last_load_window(&mut self) -> wasmtime::Result<Option<wit::LoadWindow>> {
            Ok(self.last_window.clone().map(window))
        }

        async fn draft_counters(&mut self) -> wasmtime::Result<Result<wit::DraftCounts, wit::CallError>> {
            out(CaseState::draft_counters(self).await?, "draft-counters", draft)
        }

        async fn restart(&mut self) -> wasmtime::Result<Result<(), wit::CallError>> {
            out(CaseState::restart(self).await?, "restart", |()| ())
        }
    }

    impl judge::Host for CaseState {
        async fn info(&mut self) -> wasmtime::Result<Option<judge::JudgeInfo>> {
            Ok(self.judge.as_ref().map(|j| judge_info(&j.name, j.endpoint.facts())))
        }

        async fn grade(&mut self, req: wit::ChatRequest) -> wasmtime::Result<Result<wit::Reply, wit::CallError>> {
            out(CaseState::grade(self, req.into()).await?, "judge", reply)
        }
    }
}
