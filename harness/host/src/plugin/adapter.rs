//! What every interface version adapts to: the host's own view of a guest
//! ([`GuestInfo`], [`Finding`], [`Seen`]), and the pieces of the adapters
//! that are the same in every version, written once as macros that each
//! version's file (`v1.rs` … `v5.rs`) expands against its own bindings:
//! `shared_conversions!` (every version), `since_v0_2!` (replies, errors,
//! facts' parts, the judge and every import), `facts_since_v0_3!` (the
//! typed facts), `since_v0_4!` with `since_v0_4_endpoint_calls!`
//! (open-loop load) and `since_v0_5!` (the run's limits). A new version is
//! a new file here that expands them and adds what it changed.

use sparktest_record::{Metric, Verdict};

use sparktest_endpoint::{CallError, Effect};

/// What a guest's `run` returned, in host types: its finding, which the
/// host's rules (`runner::verdict`) may overrule.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// How the instrument judged the case.
    pub verdict: Verdict,
    /// Its figures.
    pub metrics: Vec<Metric>,
    /// Its notes.
    pub notes: Vec<(String, String)>,
    /// Its snapshots: name and content.
    pub snapshots: Vec<(String, String)>,
}

/// A call error as an instrument sees it, in every interface version.
#[derive(Debug, Clone, PartialEq)]
pub enum Seen {
    /// The server never answered (refused credentials and a wrong place
    /// included: the host stops the run on those).
    Lost {
        /// Why.
        reason: String,
        /// The status, where one came.
        status: Option<u16>,
    },
    /// A clean refusal, with the server's words.
    Rejected {
        /// HTTP status.
        status: u16,
        /// Response body.
        body: String,
    },
    /// The engine cannot do this.
    Unsupported(String),
}

/// What an instrument sees of a call error, from the error's class; `Err`
/// for an invalid request, which it never sees: the host traps it.
pub fn seen_by_instrument(err: &CallError) -> Result<Seen, String> {
    let class = err.class();
    Ok(match class.effect {
        Effect::Invalid => return Err(class.reason()),
        Effect::Refused => Seen::Rejected { status: class.status.unwrap_or_default(), body: class.said.to_string() },
        Effect::Unsupported => Seen::Unsupported(class.reason()),
        Effect::Lost | Effect::Stops(_) => Seen::Lost { reason: class.reason(), status: class.status },
    })
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

/// A version's generated bindings: the instrument world, and the reporter
/// world sharing its types. `$path` is the version's WIT folder.
macro_rules! bindings {
    ($path:literal) => {
        wasmtime::component::bindgen!({
            path: $path,
            world: "instrument",
            imports: { default: async | trappable },
            exports: { default: async },
        });

        /// The `reporter` world, sharing the instrument world's types.
        pub mod reporter {
            wasmtime::component::bindgen!({
                path: $path,
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
    };
}

/// Conversions for the types every version shares, written once.
macro_rules! shared_conversions {
    () => {
        /// Conversions of the types every version shares.
        pub mod shared {
            use super::sparktest::plugin::{endpoint as wit, plugin_types, types};
            use crate::plugin::adapter::{Finding, GuestInfo};
            use sparktest_endpoint as dom;
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

            // The interface's `outcome` record is frozen under that name;
            // the host calls it a finding (an outcome is pass, fail, lost …).
            impl From<plugin_types::Outcome> for Finding {
                fn from(o: plugin_types::Outcome) -> Self {
                    Finding {
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

/// The imports every version implements the same way on the one case
/// state: the pure-type interfaces, the suite's files, and `out`, which
/// turns a host result into the version's `result<_, call-error>`.
macro_rules! shared_imports {
    () => {
        fn out<T, U>(
            r: Result<T, dom::CallError>,
            kind: &str,
            f: impl FnOnce(T) -> U,
        ) -> wasmtime::Result<Result<U, wit::CallError>> {
            match r {
                Ok(v) => Ok(Ok(f(v))),
                Err(e) => call_error(e).map(Err).map_err(|why| trap_invalid(kind, why)),
            }
        }

        impl types::Host for CaseState {}
        impl plugin_types::Host for CaseState {}

        impl suite_data::Host for CaseState {
            async fn read(&mut self, path: String) -> wasmtime::Result<Result<Vec<u8>, String>> {
                Ok(CaseState::read(self, &path))
            }

            async fn paths(&mut self) -> wasmtime::Result<Vec<String>> {
                Ok(CaseState::paths(self))
            }
        }
    };
}

/// The endpoint calls every version makes the same way, inside its
/// `impl endpoint::Host`.
macro_rules! shared_endpoint_calls {
    () => {
        async fn chat(&mut self, req: wit::ChatRequest) -> wasmtime::Result<Result<wit::Reply, wit::CallError>> {
            out(CaseState::chat(self, req.into()).await?, "chat", reply)
        }

        async fn chat_concurrent(
            &mut self,
            reqs: Vec<wit::ChatRequest>,
        ) -> wasmtime::Result<Vec<Result<wit::Reply, wit::CallError>>> {
            let results = CaseState::chat_concurrent(self, reqs.into_iter().map(Into::into).collect()).await?;
            results.into_iter().map(|r| out(r, "chat", reply)).collect()
        }

        async fn complete(
            &mut self,
            req: wit::CompletionRequest,
        ) -> wasmtime::Result<Result<wit::Reply, wit::CallError>> {
            out(CaseState::complete(self, req.into()).await?, "completion", reply)
        }

        async fn prompt_logprobs(
            &mut self,
            text: String,
        ) -> wasmtime::Result<Result<Vec<wit::TokenLogprob>, wit::CallError>> {
            out(CaseState::prompt_logprobs(self, text).await?, "prompt-logprobs", |v| {
                v.into_iter().map(Into::into).collect()
            })
        }

        async fn facts(&mut self) -> wasmtime::Result<wit::ServerFacts> {
            Ok(facts(CaseState::facts(self)?))
        }
    };
}

/// What 0.2.0 and every later version adapt the same way: replies, call
/// errors with their status, the footprint and memory pools, load windows,
/// draft counters, the judge, and all their imports on the case state. The
/// version's file adds `mod facts` with its own `facts` (its
/// `server-facts` record is what 0.3.0 changed); a later version passes
/// the endpoint calls it adds (`since_v0_2!(since_v0_4_endpoint_calls!();)`),
/// which join the same `impl endpoint::Host`.
macro_rules! since_v0_2 {
    ($($added:tt)*) => {
        /// This version's replies, facts and errors.
        pub mod convert {
            use super::sparktest::plugin::endpoint as wit;
            use super::sparktest::plugin::judge;
            use sparktest_endpoint as dom;

            pub use super::facts::facts;

            /// A reply.
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

            /// A call error as the instrument sees it, with its status.
            /// `Invalid` traps.
            pub fn call_error(e: dom::CallError) -> Result<wit::CallError, String> {
                use crate::plugin::adapter::{Seen, seen_by_instrument};
                Ok(match seen_by_instrument(&e)? {
                    Seen::Lost { reason, status } => wit::CallError::Lost(wit::Failure { reason, status }),
                    Seen::Rejected { status, body } => wit::CallError::Rejected(wit::Rejection { status, body }),
                    Seen::Unsupported(reason) => wit::CallError::Unsupported(wit::Failure { reason, status: None }),
                })
            }

            /// What a launched server held, typed.
            pub fn footprint(p: dom::Footprint) -> wit::Footprint {
                wit::Footprint {
                    resident_bytes: p.resident_bytes,
                    gpu_process_memory_mib: p.gpu_process_memory_mib,
                    mem_available_before_bytes: p.mem_available_before_bytes,
                    mem_available_after_bytes: p.mem_available_after_bytes,
                }
            }

            /// The box's memory pools.
            pub fn pools(pools: Vec<dom::MemoryPool>) -> Vec<wit::MemoryPool> {
                pools
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
                    .collect()
            }

            /// KV bytes per token, where the engine told.
            pub fn kv_bytes(k: dom::KvBytes) -> wit::KvBytes {
                wit::KvBytes { per_token: k.per_token, source: k.source }
            }

            /// A load window.
            pub fn window(w: dom::LoadWindow) -> wit::LoadWindow {
                wit::LoadWindow {
                    source: w.source,
                    samples: w.samples,
                    running_max: w.running_max,
                    running_mean: w.running_mean,
                    waiting_max: w.waiting_max,
                }
            }

            /// Draft counters.
            pub fn draft(d: dom::DraftCounters) -> wit::DraftCounts {
                match d {
                    dom::DraftCounters::Tokens { drafted, accepted } => {
                        wit::DraftCounts::Tokens(wit::DraftedAccepted { drafted, accepted })
                    }
                    dom::DraftCounters::AcceptLength(x) => wit::DraftCounts::AcceptLength(x),
                }
            }

            /// The judge's identity.
            pub fn judge_info(target: &str, facts: &dom::ServerFacts) -> judge::JudgeInfo {
                judge::JudgeInfo {
                    target: target.into(),
                    model_id: facts.model_id.clone(),
                    engine: facts.engine.clone(),
                }
            }
        }

        /// This version's imports, on the host's case state.
        mod host {
            use super::super::state::{CaseState, trap_invalid};
            use super::convert::{call_error, draft, facts, judge_info, reply, window};
            use super::sparktest::plugin::{endpoint as wit, judge, plugin_types, suite_data, types};
            use sparktest_endpoint as dom;

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

                $($added)*
            }

            impl judge::Host for CaseState {
                async fn info(&mut self) -> wasmtime::Result<Option<judge::JudgeInfo>> {
                    Ok(self.judge.as_ref().map(|j| judge_info(&j.name, j.endpoint.facts())))
                }

                async fn grade(
                    &mut self,
                    req: wit::ChatRequest,
                ) -> wasmtime::Result<Result<wit::Reply, wit::CallError>> {
                    out(CaseState::grade(self, req.into()).await?, "judge", reply)
                }
            }
        }
    };
}

/// What 0.4.0 and every later version add: open-loop load plans and
/// results, converted on the version's own types.
macro_rules! since_v0_4 {
    () => {
        /// This version's load plans and results.
        pub mod load {
            use super::convert::{call_error, reply};
            use super::sparktest::plugin::endpoint as wit;
            use sparktest_endpoint as dom;

            /// A load plan, in host types.
            pub fn plan(p: wit::LoadPlan) -> dom::LoadPlan {
                dom::LoadPlan {
                    requests: p.requests.into_iter().map(Into::into).collect(),
                    rate: p.rate,
                    arrival: match p.arrival {
                        wit::Arrival::Constant => dom::Arrival::Constant,
                        wit::Arrival::Poisson => dom::Arrival::Poisson,
                        wit::Arrival::Gamma(b) => dom::Arrival::Gamma(b),
                    },
                    seed: p.seed,
                    warmup: p.warmup,
                    count: p.count,
                    max_concurrency: p.max_concurrency,
                }
            }

            /// A load's result for the guest; `Err` (a trap) where a request
            /// was invalid, which no guest sees.
            pub fn result(r: dom::LoadResult) -> Result<wit::LoadResult, String> {
                let requests = r
                    .requests
                    .into_iter()
                    .map(|q| {
                        Ok(wit::LoadRequest {
                            intended_ms: q.intended_ms,
                            sent_ms: q.sent_ms,
                            warmup: q.warmup,
                            reply: match q.reply {
                                Ok(r) => Ok(reply(r)),
                                Err(e) => Err(call_error(e)?),
                            },
                        })
                    })
                    .collect::<Result<Vec<_>, String>>()?;
                Ok(wit::LoadResult {
                    requests,
                    window_ms: r.window_ms,
                    lag_p99_ms: r.lag_p99_ms,
                    client_bound: r.client_bound,
                    load: r.load.map(super::convert::window),
                })
            }
        }
    };
}

/// The endpoint calls 0.4.0 and every later version add, inside its
/// `impl endpoint::Host` (passed to `since_v0_2!`); `$past` is what a plan
/// whose last send falls past the case's limit does
/// (`crate::plugin::state::PastLimit`: 0.4.0 traps, 0.5.0 is told).
macro_rules! since_v0_4_endpoint_calls {
    ($past:expr) => {
        async fn open_loop(&mut self, plan: wit::LoadPlan) -> wasmtime::Result<wit::LoadResult> {
            let result = CaseState::open_loop(self, super::load::plan(plan), $past).await?;
            super::load::result(result).map_err(|why| trap_invalid("open-loop", why))
        }
    };
}

/// What 0.5.0 and every later version add: the run's limits
/// (`run.limits`), for instruments from `cases` on.
macro_rules! since_v0_5 {
    () => {
        /// The run's limits, on the host's case state.
        mod run_limits {
            use super::super::state::CaseState;
            use super::sparktest::plugin::run;

            impl run::Host for CaseState {
                async fn limits(&mut self) -> wasmtime::Result<run::CaseLimits> {
                    let l = self.run_limits;
                    Ok(run::CaseLimits {
                        case_timeout_ms: u64::try_from(l.case_timeout.as_millis()).unwrap_or(u64::MAX),
                        request_timeout_ms: u64::try_from(l.request_timeout.as_millis()).unwrap_or(u64::MAX),
                        max_load_requests: l.max_load_requests,
                    })
                }
            }
        }
    };
}

/// The facts as 0.3.0 and every later version give them, typed to the end:
/// why the footprint is missing is a field, and `extra` holds only what no
/// field names (the `footprint.*` pairs older guests read are left out).
/// Expanded as the version's `mod facts`, which `since_v0_2!` uses.
macro_rules! facts_since_v0_3 {
    () => {
        /// The facts for this version's guests.
        mod facts {
            use super::convert::{footprint, kv_bytes, pools};
            use super::sparktest::plugin::endpoint as wit;
            use sparktest_endpoint as dom;

            pub fn facts(f: dom::ServerFacts) -> wit::ServerFacts {
                let typed = |k: &str| sparktest_contract::facts::FOOTPRINT.iter().any(|f| f.name() == k);
                let extra = f.extra.into_iter().filter(|(k, _)| !typed(k)).collect();
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
                    footprint_unmeasured: f.footprint_unmeasured,
                    memory_pools: pools(f.memory_pools),
                    memory_unseen: f.memory_unseen,
                    kv_bytes: f.kv_bytes.map(kv_bytes),
                    extra: super::shared::pairs(extra),
                }
            }
        }
    };
}
