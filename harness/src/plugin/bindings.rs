//! Generated bindings of the `instrument` world and the conversions between
//! them and the host's own types. Nothing outside `plugin` sees these types.

wasmtime::component::bindgen!({
    path: "../plugins/wit/since_v0.1.0",
    world: "instrument",
    imports: { default: async | trappable },
    exports: { default: async },
});

/// The `reporter` world, sharing the instrument world's types and
/// suite-data host implementation.
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

use crate::endpoint as dom;
use sparktest::plugin::endpoint as wit;

pub use sparktest::plugin::plugin_types::Verdict;

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

impl From<wit::Role> for dom::Role {
    fn from(r: wit::Role) -> Self {
        match r {
            wit::Role::System => dom::Role::System,
            wit::Role::User => dom::Role::User,
            wit::Role::Assistant => dom::Role::Assistant,
            wit::Role::Tool => dom::Role::Tool,
        }
    }
}

impl From<wit::Message> for dom::Message {
    fn from(m: wit::Message) -> Self {
        dom::Message {
            role: m.role.into(),
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
                .map(|t| dom::ToolDef { name: t.name, description: t.description, parameters: t.parameters })
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

impl From<dom::Reply> for wit::Reply {
    fn from(r: dom::Reply) -> Self {
        wit::Reply {
            text: r.text,
            reasoning: r.reasoning,
            tool_calls: r.tool_calls.into_iter().map(Into::into).collect(),
            finish_reason: r.finish_reason,
            model: r.model,
            usage: wit::Usage {
                prompt_tokens: r.usage.prompt_tokens,
                completion_tokens: r.usage.completion_tokens,
                cached_tokens: r.usage.cached_tokens,
                source: match r.usage.source {
                    dom::TokenSource::ServerUsage => wit::TokenSource::ServerUsage,
                    dom::TokenSource::ServerTimings => wit::TokenSource::ServerTimings,
                    dom::TokenSource::None => wit::TokenSource::None,
                },
            },
            timing: wit::Timing {
                total_ms: r.timing.total_ms,
                ttft_ms: r.timing.ttft_ms,
                decode_ms: r.timing.decode_ms,
                chunk_arrivals_ms: r.timing.chunk_arrivals_ms,
                server_prompt_ms: r.timing.server_prompt_ms,
                server_decode_ms: r.timing.server_decode_ms,
            },
            status: r.status,
        }
    }
}

/// A call error for the guest. `Invalid` never reaches it: the host traps
/// the instance instead, because the request was the instrument's bug.
pub fn call_error(e: dom::CallError) -> Result<wit::CallError, String> {
    Ok(match e {
        dom::CallError::Lost(r) => wit::CallError::Lost(r),
        dom::CallError::Rejected { status, body } => wit::CallError::Rejected(wit::Rejection { status, body }),
        dom::CallError::Unsupported(r) => wit::CallError::Unsupported(r),
        dom::CallError::Invalid(r) => return Err(r),
    })
}

impl From<dom::ServerFacts> for wit::ServerFacts {
    fn from(f: dom::ServerFacts) -> Self {
        wit::ServerFacts {
            engine: f.engine,
            model_id: f.model_id,
            build: f.build,
            model_path: f.model_path,
            context_per_request: f.context_per_request,
            slots: f.slots,
            kv_pool_tokens: f.kv_pool_tokens,
            extra: f.extra.into_iter().map(|(key, value)| sparktest::plugin::types::Pair { key, value }).collect(),
        }
    }
}

impl From<dom::MetricSample> for wit::MetricSample {
    fn from(s: dom::MetricSample) -> Self {
        wit::MetricSample {
            name: s.name,
            labels: s.labels.into_iter().map(|(key, value)| sparktest::plugin::types::Pair { key, value }).collect(),
            value: s.value,
        }
    }
}

impl From<dom::TokenLogprob> for wit::TokenLogprob {
    fn from(t: dom::TokenLogprob) -> Self {
        wit::TokenLogprob { token: t.token, logprob: t.logprob }
    }
}
