//! Constructors and helpers on the generated types, so instruments read well.

use crate::{
    Arrival, CallError, CaseInfo, ChatRequest, ContentPart, Finding, Info, LoadPlan, LoadRequest, LoadResult, Message,
    Metric, Pair, Reply, Role, Snapshot, Verdict,
};

impl Info {
    /// Name (the case prefix), board row, version and methodology text.
    pub fn new(name: &str, row: &str, version: &str, description: &str) -> Self {
        Info { name: name.into(), row: row.into(), version: version.into(), description: description.into() }
    }
}

impl CaseInfo {
    /// A case named `group::case`, without tags.
    pub fn new(name: impl Into<String>) -> Self {
        CaseInfo { name: name.into(), tags: Vec::new() }
    }

    /// Add a tag (a board row or category this case feeds).
    pub fn tag(mut self, tag: impl Into<String>) -> Self {
        self.tags.push(tag.into());
        self
    }
}

impl Message {
    fn text(role: Role, text: &str) -> Self {
        Message { role, content: vec![ContentPart::Text(text.into())], tool_calls: Vec::new(), tool_call_id: None }
    }

    /// A system message.
    pub fn system(text: &str) -> Self {
        Self::text(Role::System, text)
    }

    /// A user message.
    pub fn user(text: &str) -> Self {
        Self::text(Role::User, text)
    }

    /// An assistant message (for replaying earlier turns).
    pub fn assistant(text: &str) -> Self {
        Self::text(Role::Assistant, text)
    }

    /// A tool result answering the call `call_id`.
    pub fn tool_result(call_id: &str, text: &str) -> Self {
        Message { tool_call_id: Some(call_id.into()), ..Self::text(Role::Tool, text) }
    }

    /// The assistant turn that a reply represents, for continuing a
    /// conversation.
    pub fn from_reply(reply: &Reply) -> Self {
        Message {
            role: Role::Assistant,
            content: vec![ContentPart::Text(reply.text.clone())],
            tool_calls: reply.tool_calls.clone(),
            tool_call_id: None,
        }
    }
}

impl ChatRequest {
    /// A non-streamed request with these messages and no sampling settings:
    /// the engine's defaults apply until set.
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

    /// Greedy decoding (temperature 0), as the board's quality rows use.
    pub fn greedy(mut self) -> Self {
        self.temperature = Some(0.0);
        self
    }

    /// Cap the reply length.
    pub fn max_tokens(mut self, n: u32) -> Self {
        self.max_tokens = Some(n);
        self
    }

    /// Stream the reply, so the host records per-chunk timing.
    pub fn streamed(mut self) -> Self {
        self.stream = true;
        self
    }
}

impl Finding {
    fn with(verdict: Verdict) -> Self {
        Finding { verdict, metrics: Vec::new(), notes: Vec::new(), snapshots: Vec::new() }
    }

    /// Passed.
    pub fn pass() -> Self {
        Self::with(Verdict::Pass)
    }

    /// Answered wrong (or refused cleanly), for this reason.
    pub fn fail(reason: impl Into<String>) -> Self {
        Self::with(Verdict::Fail(reason.into()))
    }

    /// Never answered, for this reason.
    pub fn lost(reason: impl Into<String>) -> Self {
        Self::with(Verdict::Lost(reason.into()))
    }

    /// Nothing could be measured, for this reason.
    pub fn not_applicable(reason: impl Into<String>) -> Self {
        Self::with(Verdict::NotApplicable(reason.into()))
    }

    /// Pass if `ok`, else fail with `reason`.
    pub fn judge(ok: bool, reason: impl Into<String>) -> Self {
        if ok { Self::pass() } else { Self::fail(reason) }
    }

    /// Add a figure with its unit. A built-in instrument names it from
    /// [`crate::contract`]; a third-party one may use any kebab-case name.
    pub fn metric(mut self, name: impl AsRef<str>, value: f64, unit: &str) -> Self {
        self.metrics.push(Metric { name: name.as_ref().into(), value, unit: unit.into() });
        self
    }

    /// Add a short fact for the record, named as a metric is.
    pub fn note(mut self, key: impl AsRef<str>, value: impl Into<String>) -> Self {
        self.notes.push(Pair { key: key.as_ref().into(), value: value.into() });
        self
    }

    /// Add a value that must repeat byte for byte between runs.
    pub fn snapshot(mut self, name: &str, content: impl Into<String>) -> Self {
        self.snapshots.push(Snapshot { name: name.into(), content: content.into() });
        self
    }
}

impl From<CallError> for Finding {
    /// A lost call loses the case; a 4xx fails it with the server's words; an
    /// unsupported call makes the case not applicable. The host has decided
    /// which a call is, and a lost call loses the case whatever the
    /// instrument returns: this says the same, with the host's reason.
    fn from(err: CallError) -> Self {
        match err {
            CallError::Lost(f) => Finding::lost(f.reason),
            CallError::Rejected(r) => Finding::fail(format!("rejected: HTTP {}: {}", r.status, r.body)),
            CallError::Unsupported(f) => Finding::not_applicable(f.reason),
        }
    }
}

impl Reply {
    /// A reply with this text and nothing else, as a server might send it:
    /// for testing an instrument's scoring on crafted replies.
    pub fn crafted(text: &str) -> Self {
        Reply {
            text: text.into(),
            reasoning: None,
            tool_calls: Vec::new(),
            finish_reason: Some("stop".into()),
            model: None,
            usage: crate::Usage {
                prompt_tokens: None,
                completion_tokens: None,
                cached_tokens: None,
                source: crate::TokenSource::None,
            },
            timing: crate::Timing {
                total_ms: 0.0,
                ttft_ms: None,
                decode_ms: None,
                chunk_arrivals_ms: Vec::new(),
                server_prompt_ms: None,
                server_decode_ms: None,
            },
            status: 200,
            attempts: 1,
        }
    }

    /// The same reply with a tool call added.
    pub fn with_tool_call(mut self, name: &str, arguments: &str) -> Self {
        let id = format!("call{}", self.tool_calls.len());
        self.tool_calls.push(crate::ToolCall { id, name: name.into(), arguments: arguments.into() });
        self
    }
}

impl CallError {
    /// Why, in words.
    pub fn reason(&self) -> String {
        match self {
            CallError::Lost(f) | CallError::Unsupported(f) => f.reason.clone(),
            CallError::Rejected(r) => format!("HTTP {}: {}", r.status, r.body),
        }
    }
}

impl Message {
    /// A user message of text and images (`data:` URLs or links).
    pub fn user_with_images(text: &str, image_urls: &[String]) -> Self {
        let mut content = vec![ContentPart::Text(text.into())];
        content.extend(image_urls.iter().map(|u| ContentPart::ImageUrl(u.clone())));
        Message { role: Role::User, content, tool_calls: Vec::new(), tool_call_id: None }
    }
}

impl LoadPlan {
    /// Send `requests` (request `i` is `requests[i % len]`) `count` times,
    /// measured, all at once: no rate (the maximum-throughput burst), no
    /// warm-up, no concurrency cap, seed 0. A plan the host refuses (it
    /// traps the instrument): no requests, count 0, a rate or burstiness
    /// that is not a positive number, max-concurrency 0, more than 100,000
    /// requests with the warm-up, or a last send past the case's limit.
    pub fn new(requests: Vec<ChatRequest>, count: u32) -> Self {
        LoadPlan { requests, rate: None, arrival: Arrival::Constant, seed: 0, warmup: 0, count, max_concurrency: None }
    }

    /// Offer `per_second` requests a second (constant intervals until
    /// [`LoadPlan::arrival`] says otherwise).
    pub fn rate(mut self, per_second: f64) -> Self {
        self.rate = Some(per_second);
        self
    }

    /// How the intervals are drawn.
    pub fn arrival(mut self, arrival: Arrival) -> Self {
        self.arrival = arrival;
        self
    }

    /// The schedule's seed (record it: the same seed, the same schedule).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Send `n` requests first, outside the figures.
    pub fn warmup(mut self, n: u32) -> Self {
        self.warmup = n;
        self
    }

    /// At most `n` requests in flight (1: the synchronous baseline).
    pub fn max_concurrency(mut self, n: u32) -> Self {
        self.max_concurrency = Some(n);
        self
    }

    /// Requests sent in all, warm-up included.
    pub fn total(&self) -> u32 {
        self.warmup.saturating_add(self.count)
    }

    /// About how long the schedule's sends take, in seconds: the mean
    /// interval times the intervals (zero without a rate). The host
    /// computes the real instants from the seed.
    pub fn last_send(&self) -> f64 {
        match self.rate {
            Some(rate) if rate > 0.0 => f64::from(self.total().saturating_sub(1)) / rate,
            _ => 0.0,
        }
    }
}

impl LoadRequest {
    /// How late it went, in milliseconds: actual minus intended send.
    pub fn lag_ms(&self) -> f64 {
        self.sent_ms - self.intended_ms
    }
}

impl LoadResult {
    /// The measured requests (the warm-up left out), in schedule order.
    pub fn measured(&self) -> impl Iterator<Item = &LoadRequest> {
        self.requests.iter().filter(|r| !r.warmup)
    }
}
