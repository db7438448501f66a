//! Generated bindings of every released interface version, and the
//! conversions between them and the host's own types. Nothing outside
//! `plugin` sees these types.
//!
//! Each version is a frozen folder (`plugins/wit/since_v0.X.0`); a component
//! built against any of them loads. The types both versions share have the
//! same shape, so one macro writes their conversions for each.

/// `sparktest:plugin@0.1.0`.
pub mod v1 {
    wasmtime::component::bindgen!({
        path: "../plugins/wit/since_v0.1.0",
        world: "instrument",
        imports: { default: async | trappable },
        exports: { default: async },
    });

    /// The `reporter` world, sharing the instrument world's types.
    pub mod reporter {
        wasmtime::component::bindgen!({
            path: "../plugins/wit/since_v0.1.0",
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
}

/// `sparktest:plugin@0.2.0`: adds the judge and typed facts.
pub mod v2 {
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
}

use crate::endpoint as dom;
use sparktest_record::{Metric, Verdict};

/// What a guest's `run` returned, in host types.
pub struct GuestOutcome {
    /// How the instrument judged the case.
    pub verdict: Verdict,
    /// Its figures.
    pub metrics: Vec<Metric>,
    /// Its notes.
    pub notes: Vec<(String, String)>,
    /// Its snapshots: name and content.
    pub snapshots: Vec<(String, String)>,
}

/// A guest's self-description, in host types.
pub struct GuestInfo {
    /// Name (case prefix).
    pub name: String,
    /// Board row.
    pub row: String,
    /// Version.
    pub version: String,
    /// Methodology text.
    pub description: String,
}

/// Conversions for the types every version shares, written once.
macro_rules! shared {
    ($v:ident, $out:ident) => {
        mod $out {
            use super::$v::sparktest::plugin::{endpoint as wit, plugin_types, types};
            use super::{GuestInfo, GuestOutcome, dom};
            use sparktest_record::{Metric, Verdict};

            impl From<wit::ContentPart> for dom::ContentPart {
                fn from(p: wit::ContentPart) -> Self {
                    match p {
                        wit::ContentPart::Text(t) => dom::ContentPart::Text(t),
                        wit::ContentPart::ImageUrl(u) => dom::ContentPart::ImageUrl(u),
                    }
                }
            }

            impl From<wit::ToolCall> for dom::ToolCall {
                fn from(c: wit::ToolCall) -> Self {
                    dom::ToolCall { id: c.id, name: c.name, arguments: c.arguments }
                }
            }

            impl From<dom::ToolCall> for wit::ToolCall {
                fn from(c: dom::ToolCall) -> Self {
                    wit::ToolCall { id: c.id, name: c.name, arguments: c.arguments }
                }
            }

            impl From<wit::Message> for dom::Message {
                fn from(m: wit::Message) -> Self {
                    dom::Message {
                        role: match m.role {
                            wit::Role::System => dom::Role::System,
                            wit::Role::User => dom::Role::User,
                            wit::Role::Assistant => dom::Role::Assistant,
                            wit::Role::Tool => dom::Role::Tool,
                        },
                        content: m.content.into_iter().map(Into::into).collect(),
                        tool_calls: m.tool_calls.into_iter().map(Into::into).collect(),
                        tool_call_id: m.tool_call_id,
                    }
                }
            }

            impl From<wit::ChatRequest> for dom::ChatRequest {
                fn from(r: wit::ChatRequest) -> Self {
                    dom::ChatRequest {
                        messages: r.messages.into_iter().map(Into::into).collect(),
                        tools: r
                            .tools
                            .into_iter()
                            .map(|t| dom::ToolDef {
                                name: t.name,
                                description: t.description,
                                parameters: t.parameters,
                            })
                            .collect(),
                        tool_choice: r.tool_choice.map(|c| match c {
                            wit::ToolChoice::Auto => dom::ToolChoice::Auto,
                            wit::ToolChoice::None => dom::ToolChoice::None,
                            wit::ToolChoice::Required => dom::ToolChoice::Required,
                            wit::ToolChoice::Function(name) => dom::ToolChoice::Function(name),
                        }),
                        max_tokens: r.max_tokens,
                        temperature: r.temperature,
                        top_p: r.top_p,
                        seed: r.seed,
                        stop: r.stop,
                        response_format: r.response_format.map(|f| match f {
                            wit::ResponseFormat::Text => dom::ResponseFormat::Text,
                            wit::ResponseFormat::JsonObject => dom::ResponseFormat::JsonObject,
                            wit::ResponseFormat::JsonSchema(s) => {
                                dom::ResponseFormat::JsonSchema { name: s.name, schema: s.schema, strict: s.strict }
                            }
                        }),
                        stream: r.stream,
                        extra_body: r.extra_body,
                    }
                }
            }

            impl From<wit::CompletionRequest> for dom::CompletionRequest {
                fn from(r: wit::CompletionRequest) -> Self {
                    dom::CompletionRequest {
                        prompt: r.prompt,
                        max_tokens: r.max_tokens,
                        temperature: r.temperature,
                        seed: r.seed,
                        stop: r.stop,
                        stream: r.stream,
                        extra_body: r.extra_body,
                    }
                }
            }

            pub(super) fn usage(u: dom::Usage) -> wit::Usage {
                wit::Usage {
                    prompt_tokens: u.prompt_tokens,
                    completion_tokens: u.completion_tokens,
                    cached_tokens: u.cached_tokens,
                    source: match u.source {
                        dom::TokenSource::ServerUsage => wit::TokenSource::ServerUsage,
                        dom::TokenSource::ServerTimings => wit::TokenSource::ServerTimings,
                        // A guest reads no count where the server's was not
                        // one; the record keeps what the server sent.
                        dom::TokenSource::None | dom::TokenSource::Invalid => wit::TokenSource::None,
                    },
                }
            }

            pub(super) fn timing(t: dom::Timing) -> wit::Timing {
                wit::Timing {
                    total_ms: t.total_ms,
                    ttft_ms: t.ttft_ms,
                    decode_ms: t.decode_ms,
                    chunk_arrivals_ms: t.chunk_arrivals_ms,
                    server_prompt_ms: t.server_prompt_ms,
                    server_decode_ms: t.server_decode_ms,
                }
            }

            pub(super) fn pairs(p: Vec<(String, String)>) -> Vec<types::Pair> {
                p.into_iter().map(|(key, value)| types::Pair { key, value }).collect()
            }

            impl From<dom::MetricSample> for wit::MetricSample {
                fn from(s: dom::MetricSample) -> Self {
                    wit::MetricSample { name: s.name, labels: pairs(s.labels), value: s.value }
                }
            }

            impl From<dom::TokenLogprob> for wit::TokenLogprob {
                fn from(t: dom::TokenLogprob) -> Self {
                    wit::TokenLogprob { token: t.token, logprob: t.logprob }
                }
            }

            impl From<plugin_types::Info> for GuestInfo {
                fn from(i: plugin_types::Info) -> Self {
                    GuestInfo { name: i.name, row: i.row, version: i.version, description: i.description }
                }
            }

            impl From<plugin_types::Outcome> for GuestOutcome {
                fn from(o: plugin_types::Outcome) -> Self {
                    GuestOutcome {
                        verdict: match o.verdict {
                            plugin_types::Verdict::Pass => Verdict::Pass,
                            plugin_types::Verdict::Fail(r) => Verdict::Fail(r),
                            plugin_types::Verdict::Lost(r) => Verdict::Lost(r),
                            plugin_types::Verdict::NotApplicable(r) => Verdict::NotApplicable(r),
                        },
                        metrics: o
                            .metrics
                            .into_iter()
                            .map(|m| Metric { name: m.name, value: m.value, unit: m.unit })
                            .collect(),
                        notes: o.notes.into_iter().map(|p| (p.key, p.value)).collect(),
                        snapshots: o.snapshots.into_iter().map(|s| (s.name, s.content)).collect(),
                    }
                }
            }
        }
    };
}

shared!(v1, v1_shared);
shared!(v2, v2_shared);

/// 0.1.0's reply, facts and errors.
pub mod v1_convert {
    use super::dom;
    use super::v1::sparktest::plugin::endpoint as wit;

    /// A reply for a 0.1.0 guest.
    pub fn reply(r: dom::Reply) -> wit::Reply {
        wit::Reply {
            text: r.text,
            reasoning: r.reasoning,
            tool_calls: r.tool_calls.into_iter().map(Into::into).collect(),
            finish_reason: r.finish_reason,
            model: r.model,
            usage: super::v1_shared::usage(r.usage),
            timing: super::v1_shared::timing(r.timing),
            status: r.status,
        }
    }

    /// A call error for a 0.1.0 guest. `Invalid` never reaches it: the host
    /// traps the instance instead, because the request was the instrument's
    /// bug.
    pub fn call_error(e: dom::CallError) -> Result<wit::CallError, String> {
        Ok(match e {
            dom::CallError::Invalid(r) => return Err(r),
            dom::CallError::Rejected { status, body } => wit::CallError::Rejected(wit::Rejection { status, body }),
            dom::CallError::Unsupported(r) => wit::CallError::Unsupported(r),
            lost => wit::CallError::Lost(lost.reason()),
        })
    }

    /// The facts for a 0.1.0 guest: typed facts become the `footprint.*`
    /// strings 0.1.0 instruments read.
    pub fn facts(f: dom::ServerFacts) -> wit::ServerFacts {
        wit::ServerFacts {
            engine: f.engine,
            model_id: f.model_id,
            build: f.build,
            model_path: f.model_path,
            context_per_request: f.context_per_request,
            slots: f.slots,
            kv_pool_tokens: f.kv_pool_tokens,
            extra: super::v1_shared::pairs(f.extra),
        }
    }
}

/// 0.2.0's reply, facts and errors.
pub mod v2_convert {
    use super::dom;
    use super::v2::sparktest::plugin::endpoint as wit;
    use super::v2::sparktest::plugin::judge;

    /// A reply for a 0.2.0 guest.
    pub fn reply(r: dom::Reply) -> wit::Reply {
        wit::Reply {
            text: r.text,
            reasoning: r.reasoning,
            tool_calls: r.tool_calls.into_iter().map(Into::into).collect(),
            finish_reason: r.finish_reason,
            model: r.model,
            usage: super::v2_shared::usage(r.usage),
            timing: super::v2_shared::timing(r.timing),
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
            extra: super::v2_shared::pairs(f.extra),
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
