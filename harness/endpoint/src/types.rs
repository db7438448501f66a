//! The host's own request and reply types. The plugin boundary converts WIT
//! types into these (`plugin::convert`); nothing else sees generated types.

use serde::Serialize;

pub(crate) use crate::call_error::CallError;

/// A part of a message's content.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum ContentPart {
    /// Plain text.
    Text(String),
    /// An image by URL (`data:` URLs carry the bytes inline).
    ImageUrl(String),
}

/// A tool call made by the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCall {
    /// Call id (may be empty when the engine gives none).
    pub id: String,
    /// Function name.
    pub name: String,
    /// Arguments as the server sent them (JSON text, possibly invalid).
    pub arguments: String,
}

/// Who speaks a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Role {
    /// The system prompt.
    System,
    /// The user.
    User,
    /// The model.
    Assistant,
    /// A tool's result.
    Tool,
}

impl Role {
    /// The OpenAI wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// One chat message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Message {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: Vec<ContentPart>,
    /// Tool calls of an assistant message.
    pub tool_calls: Vec<ToolCall>,
    /// For a tool message: the call it answers.
    pub tool_call_id: Option<String>,
}

impl Message {
    /// A message of plain text.
    pub fn text(role: Role, text: &str) -> Self {
        Message { role, content: vec![ContentPart::Text(text.into())], tool_calls: Vec::new(), tool_call_id: None }
    }
}

/// A function the model may call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDef {
    /// Function name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// JSON Schema of the arguments (JSON text).
    pub parameters: String,
}

/// How the model may use tools.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum ToolChoice {
    /// The model decides.
    Auto,
    /// No tool calls.
    None,
    /// At least one tool call.
    Required,
    /// This function.
    Function(String),
}

/// The shape the reply must take.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum ResponseFormat {
    /// Free text.
    Text,
    /// Any JSON object.
    JsonObject,
    /// JSON following a schema: name, schema (JSON text), strict.
    JsonSchema {
        /// Schema name.
        name: String,
        /// JSON Schema as JSON text.
        schema: String,
        /// Ask the engine to enforce it.
        strict: bool,
    },
}

/// A chat completion request.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChatRequest {
    /// The conversation.
    pub messages: Vec<Message>,
    /// Functions offered.
    pub tools: Vec<ToolDef>,
    /// How tools may be used.
    pub tool_choice: Option<ToolChoice>,
    /// Reply length cap.
    pub max_tokens: Option<u32>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Nucleus sampling.
    pub top_p: Option<f32>,
    /// Sampling seed.
    pub seed: Option<u64>,
    /// Stop strings.
    pub stop: Vec<String>,
    /// Reply shape.
    pub response_format: Option<ResponseFormat>,
    /// Stream (SSE) with per-chunk timing.
    pub stream: bool,
    /// Engine-specific fields merged into the body (a JSON object as text).
    pub extra_body: Option<String>,
}

impl ChatRequest {
    /// A non-streamed request with these messages.
    pub fn new(messages: Vec<Message>) -> Self {
        ChatRequest {
            messages,
            tools: Vec::new(),
            tool_choice: None,
            max_tokens: None,
            temperature: None,
            top_p: None,
            seed: None,
            stop: Vec::new(),
            response_format: None,
            stream: false,
            extra_body: None,
        }
    }
}

/// A legacy text completion request.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompletionRequest {
    /// The prompt text.
    pub prompt: String,
    /// Reply length cap.
    pub max_tokens: Option<u32>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Sampling seed.
    pub seed: Option<u64>,
    /// Stop strings.
    pub stop: Vec<String>,
    /// Stream (SSE) with per-chunk timing.
    pub stream: bool,
    /// Engine-specific fields merged into the body.
    pub extra_body: Option<String>,
}

/// Where token counts came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
pub enum TokenSource {
    /// `usage` in the response.
    ServerUsage,
    /// llama.cpp `timings`.
    ServerTimings,
    /// The server gave no counts.
    #[default]
    None,
    /// The server gave counts that cannot be token counts (negative, not
    /// an integer, a string, beyond any reply): see [`Usage::invalid`].
    Invalid,
}

impl TokenSource {
    /// The word used in records.
    pub fn as_str(self) -> &'static str {
        match self {
            TokenSource::ServerUsage => "server-usage",
            TokenSource::ServerTimings => "server-timings",
            TokenSource::None => "none",
            TokenSource::Invalid => "invalid",
        }
    }
}

/// Token counts as the server gave them.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Usage {
    /// Prompt tokens.
    pub prompt_tokens: Option<u32>,
    /// Completion tokens.
    pub completion_tokens: Option<u32>,
    /// Prompt tokens served from the prefix cache.
    pub cached_tokens: Option<u32>,
    /// Where they came from.
    pub source: TokenSource,
    /// The counts the server gave that are not counts, with their values as
    /// sent (`completion_tokens = -5`); those fields are None.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invalid: Option<String>,
}

/// Client-side timing, in milliseconds from sending the request.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Timing {
    /// Until the whole reply was read.
    pub total_ms: f64,
    /// First chunk carrying content, reasoning or a tool call.
    pub ttft_ms: Option<f64>,
    /// First to last content chunk.
    pub decode_ms: Option<f64>,
    /// Arrival of every content-bearing chunk.
    pub chunk_arrivals_ms: Vec<f64>,
    /// Engine-reported prompt milliseconds.
    pub server_prompt_ms: Option<f64>,
    /// Engine-reported generation milliseconds.
    pub server_decode_ms: Option<f64>,
}

/// A reply from the server.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Reply {
    /// The answer text.
    pub text: String,
    /// `reasoning_content`.
    pub reasoning: Option<String>,
    /// Tool calls, assembled from deltas when streamed.
    pub tool_calls: Vec<ToolCall>,
    /// Why generation stopped.
    pub finish_reason: Option<String>,
    /// Model id in the reply.
    pub model: Option<String>,
    /// Token counts.
    pub usage: Usage,
    /// Timing.
    pub timing: Timing,
    /// HTTP status.
    pub status: u16,
    /// Times the request was sent: more than 1 when the server asked the
    /// client to come back later (429, 408, 503) and it did. Not part of the
    /// transcript's address.
    #[serde(skip)]
    pub attempts: u32,
}

/// A token and its log-probability under teacher forcing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TokenLogprob {
    /// Token text.
    pub token: String,
    /// Natural-log probability; None for the first token.
    pub logprob: Option<f64>,
}

/// What the probe found.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct ServerFacts {
    /// Engine name.
    pub engine: String,
    /// Model id the server reports.
    pub model_id: String,
    /// Build or version.
    pub build: Option<String>,
    /// Model file path.
    pub model_path: Option<String>,
    /// Context of one request.
    pub context_per_request: Option<u64>,
    /// Parallel slots.
    pub slots: Option<u32>,
    /// KV pool in tokens.
    pub kv_pool_tokens: Option<u64>,
    /// Whether the served build reads images, as the engine reports it.
    pub vision: Option<bool>,
    /// What a server the harness launched held before any request.
    pub footprint: Option<Footprint>,
    /// Why `footprint` is none, when it is.
    pub footprint_unmeasured: Option<String>,
    /// The box's memory pools with the serve loaded and idle, where the
    /// harness can see the box.
    pub memory_pools: Vec<MemoryPool>,
    /// Why there are no memory pools, when there are none.
    pub memory_unseen: Option<String>,
    /// KV-cache bytes per token, where the engine told.
    pub kv_bytes: Option<KvBytes>,
    /// Everything else, by name.
    pub extra: Vec<(String, String)>,
}

/// What a launched server held once healthy, before any request.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Footprint {
    /// Resident memory of its process tree.
    pub resident_bytes: u64,
    /// GPU memory its processes hold.
    pub gpu_process_memory_mib: Option<u64>,
    /// The host's available memory just before the launch.
    pub mem_available_before_bytes: Option<u64>,
    /// And after.
    pub mem_available_after_bytes: Option<u64>,
}

/// What kind of memory a pool is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum PoolKind {
    /// A GPU's own memory.
    Gpu,
    /// Memory a GPU shares with the CPU.
    Unified,
    /// The host's memory on a machine without a GPU.
    System,
}

impl PoolKind {
    /// The word used in records.
    pub fn as_str(self) -> &'static str {
        match self {
            PoolKind::Gpu => "gpu",
            PoolKind::Unified => "unified",
            PoolKind::System => "system",
        }
    }
}

/// One memory pool of a box.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemoryPool {
    /// Kind.
    pub kind: PoolKind,
    /// Device name, or `host`.
    pub device: String,
    /// Size.
    pub total_bytes: u64,
    /// Free now.
    pub free_bytes: u64,
}

/// One Prometheus sample.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricSample {
    /// Metric name.
    pub name: String,
    /// Labels.
    pub labels: Vec<(String, String)>,
    /// Value.
    pub value: f64,
}

/// KV-cache bytes per token, and where that came from.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct KvBytes {
    /// Bytes one token of context holds in the KV cache.
    pub per_token: f64,
    /// What it was read from.
    pub source: String,
}
