//! Guest SDK for cargo-sparktest instruments.
//!
//! An instrument is a WASM component that emits cases and scores them. It
//! builds requests and judges replies; the host does all I/O and all timing.
//! Implement [`Instrument`] and register it once:
//!
//! ```ignore
//! use serde::Deserialize;
//! use sparktest_sdk::*;
//!
//! struct Echo;
//!
//! #[derive(Deserialize)]
//! struct Config {
//!     #[serde(default = "default_word")]
//!     word: String,
//! }
//!
//! fn default_word() -> String {
//!     "hello".into()
//! }
//!
//! impl Instrument for Echo {
//!     type Config = Config;
//!     type Case = String;
//!     fn describe() -> Info {
//!         Info::new("echo", "Echo", "0.1.0", "Asks the model to repeat a word.")
//!     }
//!     fn cases(config: &Config) -> Result<Vec<Case<String>>, String> {
//!         Ok(vec![Case::new(format!("word::{}", config.word), config.word.clone())])
//!     }
//!     fn run(_config: &Config, word: &String) -> Finding {
//!         let ask = format!("Say {word}.");
//!         let reply = match chat(&ChatRequest::new(vec![Message::user(&ask)])) {
//!             Ok(reply) => reply,
//!             Err(err) => return err.into(),
//!         };
//!         Finding::judge(reply.text.to_lowercase().contains(word.as_str()), "the word is not in the reply")
//!     }
//! }
//!
//! register_instrument!(Echo);
//! ```
//!
//! The suite's `[instrument.config]` table arrives typed: the macro parses
//! it into [`Instrument::Config`] once per call, and a config that does not
//! fit is refused naming the field (`cases` returns the error, `run` fails
//! the case with it).
//!
//! Build with `cargo build --target wasm32-wasip2`; `cargo sparktest` does this
//! for workspace crates on demand. This SDK builds against interface 0.5.0
//! (`plugins/wit/since_v0.5.0`); the host still loads components built
//! against 0.1.0 to 0.4.0.
//!
//! # Open-loop load
//!
//! [`open_loop`] sends a [`LoadPlan`]'s requests at the instants of a
//! seeded arrival schedule the host keeps (the guest has no clock):
//!
//! ```ignore
//! let turn = ChatRequest::new(vec![Message::user("Plan my week.")]).max_tokens(128).streamed();
//! let plan = LoadPlan::new(vec![turn], 200).rate(8.0).arrival(Arrival::Poisson).seed(7).warmup(20);
//! let load = open_loop(&plan);
//! if let Some(why) = &load.client_bound {
//!     // The client could not hold the schedule: not the server's figure.
//! }
//! let answered = load.measured().filter(|r| r.reply.is_ok()).count();
//! ```
//!
//! The schedule must fit the case: the last send comes at about
//! `(warmup + count) / rate` seconds ([`LoadPlan::last_send`]). [`limits`]
//! gives the case's wall-clock limit (`case-timeout-secs`, 1,800 s by
//! default) and one request's (`request-timeout-secs`) from `cases` on:
//! refuse settings that cannot fit there, naming the field. A plan whose
//! last send would still come after what is left of the case is not sent
//! (its result says why). The result carries every reply with its chunk
//! arrivals (8 bytes a streamed chunk, and the text), which must fit the
//! instrument's memory (`memory-per-instance-mib`).
//!
//! # Known limitations
//!
//! - Each case runs in a fresh instance: no state carries from one case to the
//!   next, so `cases` and `run` get the suite config every time (and `run`
//!   lists the cases again to find its item: keep `cases` cheap).
//! - A panic ends the case as failed with the panic message; it is not a way to
//!   report a lost call (return [`Verdict::Lost`] for that).
#![warn(missing_docs)]

#[doc(hidden)]
pub mod __private {
    //! Generated bindings. Not public API: use the re-exports at the crate root.
    wit_bindgen::generate!({
        path: "wit/since_v0.5.0",
        world: "instrument",
        pub_export_macro: true,
        export_macro_name: "__export_instrument",
        default_bindings_module: "sparktest_sdk::__private",
    });
}

mod builders;
pub mod reporter;

/// The board rows and the metric and note names built-in instruments and
/// the board agree on (crate `sparktest-contract`).
pub use sparktest_contract as contract;

pub use __private::sparktest::plugin::endpoint::{
    Arrival, CallError, ChatRequest, CompletionRequest, ContentPart, DraftCounts, DraftedAccepted, Failure, Footprint,
    JsonSchemaFormat, KvBytes, LoadPlan, LoadRequest, LoadResult, LoadWindow, MemoryPool, Message, MetricSample,
    PoolKind, Rejection, Reply, ResponseFormat, Role, ServerFacts, Timing, TokenLogprob, TokenSource, ToolCall,
    ToolChoice, ToolDef, Usage,
};
pub use __private::sparktest::plugin::judge::JudgeInfo;
/// What [`Instrument::run`] found: its [`Verdict`] with figures, notes and
/// snapshots. The host may overrule the verdict (a lost call loses the
/// case, a changed snapshot fails a pass); the case's outcome (pass, fail,
/// lost, not applicable) is what the host records. The interface names
/// this record `outcome`; the SDK calls it a finding, so that an outcome
/// means one thing.
pub use __private::sparktest::plugin::plugin_types::Outcome as Finding;
pub use __private::sparktest::plugin::plugin_types::{CaseInfo, Info, Snapshot, Verdict};
/// What the host allows each case of this run ([`limits`]).
pub use __private::sparktest::plugin::run::CaseLimits;
pub use __private::sparktest::plugin::types::{Metric, Pair};

use __private::sparktest::plugin::{endpoint, judge, run, suite_data};

/// An instrument: one board row's measurement.
///
/// Every method is an associated function: each case runs in a fresh
/// instance, so there is no `self` to keep state in.
pub trait Instrument {
    /// The suite's `[instrument.config]` table, parsed once per call (an
    /// empty table when the suite gives none). Use `#[serde(default)]` for
    /// optional keys and `#[serde(deny_unknown_fields)]` to refuse typos.
    type Config: serde::de::DeserializeOwned;
    /// What one case carries from `cases` to `run`: the task, probe or page
    /// it measures. The SDK finds it again by the case's name, so `run`
    /// never parses a name back into an item.
    type Case;
    /// Name, row, version and methodology text.
    fn describe() -> Info;
    /// The cases to run for this config. Names are `group::case`, each part
    /// lowercase letters, digits, `_` or `-`. An error here (a config or
    /// data file the instrument refuses) stops the run before any case,
    /// with exit 3.
    fn cases(config: &Self::Config) -> Result<Vec<Case<Self::Case>>, String>;
    /// Run one case and judge it.
    fn run(config: &Self::Config, case: &Self::Case) -> Finding;
}

/// A case as [`Instrument::cases`] lists it: its name and tags for the
/// host, and the item [`Instrument::run`] is handed.
#[derive(Debug, Clone)]
pub struct Case<T> {
    /// Name and tags.
    pub info: CaseInfo,
    /// What `run` gets.
    pub item: T,
}

impl<T> Case<T> {
    /// A case named `group::case` carrying `item`, without tags.
    pub fn new(name: impl Into<String>, item: T) -> Self {
        Case { info: CaseInfo::new(name), item }
    }

    /// Add a tag (a board row or category this case feeds).
    pub fn tag(mut self, tag: impl Into<String>) -> Self {
        self.info = self.info.tag(tag);
        self
    }
}

impl Case<String> {
    /// Cases whose item is their own name (an instrument whose cases are
    /// named after what they measure).
    pub fn named(info: CaseInfo) -> Self {
        Case { item: info.name.clone(), info }
    }
}

/// The item of the case named `name`, as `cases` lists it for `config`.
#[doc(hidden)]
pub fn __find_case<I: Instrument>(config: &I::Config, name: &str) -> Result<I::Case, String> {
    I::cases(config)?
        .into_iter()
        .find(|c| c.info.name == name)
        .map(|c| c.item)
        .ok_or_else(|| format!("no case named {name} for this config"))
}

/// The config of an instrument that takes none: any key in the suite's
/// `[instrument.config]` is refused.
#[derive(Debug, Clone, Copy, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoConfig {}

/// Parse a suite config (JSON text from the host) into an instrument's
/// config type; the error names the instrument and the field.
#[doc(hidden)]
pub fn __parse_config<C: serde::de::DeserializeOwned>(instrument: &str, text: &str) -> Result<C, String> {
    let text = if text.trim().is_empty() { "{}" } else { text };
    serde_json::from_str(text).map_err(|err| format!("{instrument} config: {err}"))
}

/// Register the type implementing [`Instrument`] as this component's export.
/// Use it once per crate.
#[macro_export]
macro_rules! register_instrument {
    ($instrument:ty) => {
        const _: () = {
            struct __SparktestComponent;
            fn __config(
                text: &str,
            ) -> ::std::result::Result<<$instrument as $crate::Instrument>::Config, ::std::string::String> {
                $crate::__parse_config(&<$instrument as $crate::Instrument>::describe().name, text)
            }
            impl $crate::__private::Guest for __SparktestComponent {
                fn describe() -> $crate::Info {
                    <$instrument as $crate::Instrument>::describe()
                }
                fn cases(
                    config: ::std::string::String,
                ) -> ::std::result::Result<::std::vec::Vec<$crate::CaseInfo>, ::std::string::String> {
                    let cases = <$instrument as $crate::Instrument>::cases(&__config(&config)?)?;
                    Ok(cases.into_iter().map(|c| c.info).collect())
                }
                fn run(config: ::std::string::String, case: ::std::string::String) -> $crate::Finding {
                    let config = match __config(&config) {
                        Ok(config) => config,
                        Err(err) => return $crate::Finding::fail(err),
                    };
                    match $crate::__find_case::<$instrument>(&config, &case) {
                        Ok(item) => <$instrument as $crate::Instrument>::run(&config, &item),
                        Err(err) => $crate::Finding::fail(err),
                    }
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

/// A pinned image (or any file) as a `data:` URL, for an
/// [`ContentPart::ImageUrl`]: its media type from the extension.
pub fn data_url(path: &str) -> Result<String, String> {
    use base64::Engine as _;
    let bytes = read_file(path)?;
    let ext = path.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
    let mime = match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "webp" => "image/webp",
        "gif" => "image/gif",
        _ => "application/octet-stream",
    };
    Ok(format!("data:{mime};base64,{}", base64::engine::general_purpose::STANDARD.encode(bytes)))
}

/// Ask about pinned images: one user turn with `prompt` and the images, at
/// temperature 0. A build without vision refuses images with a 4xx (or
/// llama.cpp's 500 "image input is not supported"); that comes back as a
/// failed finding noted `vision: none`, with what the engine's probe said,
/// never as lost, so a board can score it "could not be tested". A refusal
/// that is about something else (the request too long or too large for a
/// build that reports vision) is an ordinary refusal. Any other error is
/// its usual finding (`Finding::from`).
pub fn chat_with_images(prompt: &str, images: &[&str], max_tokens: u32) -> Result<Reply, Finding> {
    let urls = images.iter().map(|p| data_url(p)).collect::<Result<Vec<_>, _>>().map_err(Finding::fail)?;
    let req = ChatRequest::new(vec![Message::user_with_images(prompt, &urls)]).greedy().max_tokens(max_tokens);
    match chat(&req) {
        Ok(reply) => Ok(reply),
        Err(CallError::Rejected(r)) => {
            let reported = server_facts().vision;
            let probe = match reported {
                Some(true) => "the engine reports vision",
                Some(false) => "the engine reports no vision (modalities)",
                None => "the engine does not report its modalities",
            };
            if reported == Some(true) || (reported.is_none() && !about_images(&r.body)) {
                return Err(Finding::fail(format!("the image request was refused (HTTP {}: {})", r.status, r.body))
                    .note(contract::vision::VISION, contract::vision::REFUSED)
                    .note(contract::vision::VISION_PROBE, probe));
            }
            Err(Finding::fail(format!("no vision in this build: images rejected (HTTP {}: {})", r.status, r.body))
                .note(contract::vision::VISION, contract::vision::NONE)
                .note(contract::vision::VISION_PROBE, probe))
        }
        Err(err) => Err(err.into()),
    }
}

/// Whether an engine's refusal speaks of images (llama.cpp: "image input is
/// not supported … mmproj"; vLLM: "… is not a multimodal model").
fn about_images(body: &str) -> bool {
    let body = body.to_ascii_lowercase();
    ["image", "vision", "multimodal", "multi-modal", "mmproj", "modalit"].iter().any(|w| body.contains(w))
}

/// The paths of all pinned suite files.
pub fn list_files() -> Vec<String> {
    suite_data::paths()
}

/// The server's own count of running requests while this case's last
/// [`chat_concurrent`] call (or [`open_loop`] load's window) was in flight, as the host sampled it (llama.cpp
/// `/slots`, vLLM `vllm:num_requests_running`, SGLang
/// `sglang:num_running_reqs`); None when the engine reports no live load or
/// no concurrent call was made.
pub fn last_load_window() -> Option<LoadWindow> {
    endpoint::last_load_window()
}

/// Send a load: every request of `plan` at its instant of the seeded
/// schedule the host computes and keeps, streamed as [`chat`] sends it, at
/// most `max_concurrency` in flight, while the host samples the server's
/// own load ([`LoadResult::load`], also [`last_load_window`] after).
/// Every request comes back in schedule order with its intended and
/// actual send time; a lost one is kept in its place (a figure of the
/// load: the case is lost only when every measured request was).
/// [`LoadResult::client_bound`] says when the host could not hold the
/// schedule: those figures are the client's, not the server's. Each
/// request is sent once: a 429 is a refusal, never resent inside the
/// schedule. A plan whose last send would come after what is left of the
/// case's limit is not sent (no requests; `client_bound` says why); a plan
/// that cannot run at all (see [`LoadPlan::new`]) traps the instrument.
pub fn open_loop(plan: &LoadPlan) -> LoadResult {
    endpoint::open_loop(plan)
}

/// What the host allows each case of this run: its wall-clock limit, one
/// request's, and the most requests one [`open_loop`] plan may send.
/// Callable from [`Instrument::cases`], so that settings that cannot fit
/// (a load whose schedule outlasts the case) are refused before any case
/// runs, naming the field.
pub fn limits() -> CaseLimits {
    run::limits()
}

/// The engine's speculative-decoding counters now, read by the host in the
/// engine's own terms; [`CallError::Unsupported`] where it keeps none.
pub fn draft_counters() -> Result<DraftCounts, CallError> {
    endpoint::draft_counters()
}

/// Stop and start again a server the harness launched, on the same port
/// (restart-to-restart reproducibility). Only for instruments whose cases
/// run alone (`exclusive = true` in the suite); unsupported otherwise.
pub fn restart_server() -> Result<(), CallError> {
    endpoint::restart()
}

/// The run's judge, when one is configured (`--judge`).
pub fn judge_info() -> Option<JudgeInfo> {
    judge::info()
}

/// Ask the judge to grade something. A judge that never answers makes the
/// case lost, naming the judge; [`CallError::Unsupported`] when the run has
/// no judge.
pub fn grade(req: &ChatRequest) -> Result<Reply, CallError> {
    judge::grade(req)
}

/// The sum of every sample named `name` (all label sets), if any.
pub fn metric_sum(samples: &[MetricSample], name: &str) -> Option<f64> {
    let values: Vec<f64> = samples.iter().filter(|s| s.name == name).map(|s| s.value).collect();
    (!values.is_empty()).then(|| values.iter().sum())
}
