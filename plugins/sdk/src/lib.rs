//! Guest SDK for cargo-sparktest instruments.
//!
//! An instrument is a WASM component that emits cases and scores them. It
//! builds requests and judges replies; the host does all I/O and all timing.
//! Implement [`Instrument`] and register it once:
//!
//! ```ignore
//! use sparktest_sdk::*;
//!
//! struct Echo;
//!
//! impl Instrument for Echo {
//!     fn describe() -> Info {
//!         Info::new("echo", "Echo", "0.1.0", "Asks the model to repeat a word.")
//!     }
//!     fn cases(_config: &str) -> Result<Vec<CaseInfo>, String> {
//!         Ok(vec![CaseInfo::new("word::hello")])
//!     }
//!     fn run(_config: &str, _case: &str) -> Outcome {
//!         let reply = match chat(&ChatRequest::new(vec![Message::user("Say hello.")])) {
//!             Ok(reply) => reply,
//!             Err(err) => return err.into(),
//!         };
//!         Outcome::judge(reply.text.to_lowercase().contains("hello"), "no hello in the reply")
//!     }
//! }
//!
//! register_instrument!(Echo);
//! ```
//!
//! Build with `cargo build --target wasm32-wasip2`; `cargo sparktest` does this
//! for workspace crates on demand.
//!
//! # Known limitations
//!
//! - Each case runs in a fresh instance: no state carries from one case to the
//!   next, so `cases` and `run` get the suite config every time.
//! - A panic ends the case as failed with the panic message; it is not a way to
//!   report a lost call (return [`Verdict::Lost`] for that).
#![warn(missing_docs)]

#[doc(hidden)]
pub mod __private {
    //! Generated bindings. Not public API: use the re-exports at the crate root.
    wit_bindgen::generate!({
        path: "../wit/since_v0.1.0",
        world: "instrument",
        pub_export_macro: true,
        export_macro_name: "__export_instrument",
        default_bindings_module: "sparktest_sdk::__private",
    });
}

mod builders;
pub mod reporter;

pub use __private::sparktest::plugin::endpoint::{
    CallError, ChatRequest, CompletionRequest, ContentPart, JsonSchemaFormat, Message,
    MetricSample, Rejection, Reply, ResponseFormat, Role, ServerFacts, Timing, TokenLogprob,
    TokenSource, ToolCall, ToolChoice, ToolDef, Usage,
};
pub use __private::sparktest::plugin::plugin_types::{CaseInfo, Info, Outcome, Snapshot, Verdict};
pub use __private::sparktest::plugin::types::{Metric, Pair};

use __private::sparktest::plugin::{endpoint, suite_data};

/// An instrument: one board row's measurement.
///
/// Every method is an associated function: each case runs in a fresh
/// instance, so there is no `self` to keep state in.
pub trait Instrument {
    /// Name, row, version and methodology text.
    fn describe() -> Info;
    /// The cases to run for this config (the suite's `config` table as JSON
    /// text; `"{}"` when the suite gives none). Names are `group::case`.
    fn cases(config: &str) -> Result<Vec<CaseInfo>, String>;
    /// Run one case by the name `cases` gave it (without the instrument
    /// prefix) and judge it.
    fn run(config: &str, case: &str) -> Outcome;
}

/// Register the type implementing [`Instrument`] as this component's export.
/// Use it once per crate.
#[macro_export]
macro_rules! register_instrument {
    ($instrument:ty) => {
        const _: () = {
            struct __SparktestComponent;
            impl $crate::__private::Guest for __SparktestComponent {
                fn describe() -> $crate::Info {
                    <$instrument as $crate::Instrument>::describe()
                }
                fn cases(
                    config: ::std::string::String,
                ) -> ::std::result::Result<::std::vec::Vec<$crate::CaseInfo>, ::std::string::String>
                {
                    <$instrument as $crate::Instrument>::cases(&config)
                }
                fn run(config: ::std::string::String, case: ::std::string::String) -> $crate::Outcome {
                    <$instrument as $crate::Instrument>::run(&config, &case)
                }
            }
            $crate::__private::__export_instrument!(__SparktestComponent with_types_in $crate::__private);
        };
    };
}

/// Send a chat completion through the host.
pub fn chat(req: &ChatRequest) -> Result<Reply, CallError> {
    endpoint::chat(req)
}

/// Send all requests at once; results come back in request order.
pub fn chat_concurrent(reqs: &[ChatRequest]) -> Vec<Result<Reply, CallError>> {
    endpoint::chat_concurrent(reqs)
}

/// Send a legacy text completion through the host.
pub fn complete(req: &CompletionRequest) -> Result<Reply, CallError> {
    endpoint::complete(req)
}

/// Teacher-forced log-probabilities of every token of `text`, where the
/// engine gives them ([`CallError::Unsupported`] where it cannot).
pub fn prompt_logprobs(text: &str) -> Result<Vec<TokenLogprob>, CallError> {
    endpoint::prompt_logprobs(text)
}

/// What the host's probe found about the server before the run.
pub fn server_facts() -> ServerFacts {
    endpoint::facts()
}

/// The engine's Prometheus metrics, parsed.
pub fn scrape_metrics() -> Result<Vec<MetricSample>, CallError> {
    endpoint::scrape_metrics()
}

/// A file of the suite, pinned by sha256 in its `suite.toml`.
pub fn read_file(path: &str) -> Result<Vec<u8>, String> {
    suite_data::read(path)
}

/// A UTF-8 file of the suite.
pub fn read_text(path: &str) -> Result<String, String> {
    let bytes = read_file(path)?;
    String::from_utf8(bytes).map_err(|err| format!("suite file {path} is not UTF-8: {err}"))
}

/// A suite path given relative to the folder of another suite file (a list
/// file naming its texts, say): `beside("data/list.json", "a.txt")` is
/// `"data/a.txt"`.
pub fn beside(file: &str, rel: &str) -> String {
    match file.rsplit_once('/') {
        Some((dir, _)) => format!("{dir}/{rel}"),
        None => rel.to_string(),
    }
}

/// The paths of all pinned suite files.
pub fn list_files() -> Vec<String> {
    suite_data::paths()
}

/// The server's own count of running requests while this case's last
/// [`chat_concurrent`] call was in flight, as the host sampled it (llama.cpp
/// `/slots`, vLLM `vllm:num_requests_running`, SGLang
/// `sglang:num_running_reqs`). It reaches the guest as `sparktest:window_*`
/// samples of [`scrape_metrics`].
#[derive(Debug, Clone, PartialEq)]
pub struct ServerLoad {
    /// What the host read, e.g. `llama.cpp /slots is_processing`.
    pub source: String,
    /// Most requests the server ran at once.
    pub running_max: u32,
    /// Mean requests running over the samples.
    pub running_mean: f64,
    /// Most requests the server said were waiting, where it says.
    pub waiting_max: Option<u32>,
    /// Samples taken.
    pub samples: u32,
}

/// The [`ServerLoad`] of this case's last concurrent call: `Ok(None)` when
/// the engine reports no live load (or no concurrent call was made).
pub fn last_server_load() -> Result<Option<ServerLoad>, CallError> {
    let samples = scrape_metrics()?;
    let get = |name: &str| samples.iter().find(|s| s.name == name);
    let Some(max) = get("sparktest:window_requests_running_max") else { return Ok(None) };
    let source = max.labels.iter().find(|p| p.key == "source").map(|p| p.value.clone()).unwrap_or_default();
    Ok(Some(ServerLoad {
        source,
        running_max: max.value as u32,
        running_mean: get("sparktest:window_requests_running_mean").map_or(0.0, |s| s.value),
        waiting_max: get("sparktest:window_requests_waiting_max").map(|s| s.value as u32),
        samples: get("sparktest:window_samples").map_or(0, |s| s.value as u32),
    }))
}

/// The sum of every sample named `name` (all label sets), if any.
pub fn metric_sum(samples: &[MetricSample], name: &str) -> Option<f64> {
    let values: Vec<f64> = samples.iter().filter(|s| s.name == name).map(|s| s.value).collect();
    (!values.is_empty()).then(|| values.iter().sum())
}
