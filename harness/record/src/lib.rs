//! The measurement file of cargo-sparktest, and its exit codes.
//!
//! A measurement file is JSON Lines: every line is one message
//! `{"type": "...", "data": {...}}`. The first line is a `manifest`, then one
//! `case` line per finished case, in the order they finished, and last a
//! `summary` line when the run ended normally (a file without one is the
//! record of a run that crashed or was killed: every case in it still counts).
//! New fields may be added within a format version; readers ignore fields
//! they do not know. `docs/measurement-file.md` documents every field.
//!
//! This crate is small on purpose: the host writes these types and reporter
//! plugins read them.
#![warn(missing_docs)]

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Version of the measurement-file format. A reader refuses a file whose
/// major version it does not know.
pub const FORMAT_VERSION: &str = "1.4";

/// Process exit codes of `cargo sparktest`.
pub mod exit_code {
    /// Every case passed (or was not applicable).
    pub const OK: i32 = 0;
    /// The command line could not be parsed (clap's and libtest's code).
    pub const USAGE: i32 = 2;
    /// The project configuration or a suite is invalid, or its data do not
    /// match their pins.
    pub const SETUP: i32 = 3;
    /// The target could not be launched or reached, or it serves another
    /// model than the target names.
    pub const TARGET: i32 = 4;
    /// An instrument could not be built, loaded or listed.
    pub const PLUGIN: i32 = 5;
    /// A measurement file could not be written.
    pub const IO: i32 = 6;
    /// At least one case failed or was lost (libtest's code).
    pub const CASES_FAILED: i32 = 101;
    /// `diff --fail-on regression`: a row changed beyond run-to-run
    /// variation for the worse. The check failed, so libtest's code.
    pub const REGRESSION: i32 = 101;
}

/// One line of a measurement file. `C` is what a reader keeps of each
/// endpoint call ([`parse_with`]); the whole [`CallRecord`] by default.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", content = "data", rename_all = "kebab-case")]
#[allow(clippy::large_enum_variant)] // one manifest per file; boxing buys nothing
pub enum Line<C = CallRecord> {
    /// The first line: what was measured, where, with what.
    Manifest(Manifest),
    /// One finished case.
    Case(CaseRecord<C>),
    /// The last line of a run that ended normally.
    Summary(Summary),
}

/// What was measured, where and with what.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    /// Format version of this file ([`FORMAT_VERSION`]).
    pub format_version: String,
    /// Unique id of the run (also the file's stem).
    pub run_id: String,
    /// RFC 3339 UTC start time.
    pub started_at: String,
    /// The harness that measured.
    pub harness: HarnessInfo,
    /// The suite that ran.
    pub suite: SuiteInfo,
    /// The serving configuration under test.
    pub target: TargetInfo,
    /// The machine the client ran on.
    pub client_host: HostInfo,
    /// `direct` or `gateway` (a proxy or router between client and engine).
    pub route: String,
    /// The instruments that ran, as they describe themselves.
    pub instruments: Vec<InstrumentInfo>,
    /// Paired arms (1.1): the other serving configurations some instruments
    /// ran against, by arm name. Their cases carry the arm's name.
    #[serde(default)]
    pub arms: Vec<ArmInfo>,
    /// The client's own ceiling (1.1), measured on loopback before the run.
    #[serde(default)]
    pub client_ceiling: Option<ClientCeiling>,
    /// The judge (1.2): the second target that graded replies, when one was
    /// configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<TargetInfo>,
    /// This run is one part of a suite split across machines (1.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<Partition>,
    /// The run this one resumes (1.2): it ran only that run's cases that were
    /// lost or never recorded; the board reads the two as one run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumes: Option<String>,
    /// How many cases the suite lists for each instrument, before filters,
    /// partitions and resumes: what a complete run of it records. The board
    /// marks a cell partial when fewer were recorded.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub suite_cases: BTreeMap<String, u64>,
    /// This run is one of several repeats of the same cases on the same
    /// configuration (1.4, `--repeat N`): the board reads the group's runs
    /// as repeats of one cell, every run kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<Repeat>,
}

/// One run of a `--repeat N` group.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Repeat {
    /// This repeat, 1-based.
    pub index: u32,
    /// How many were asked for.
    pub total: u32,
    /// What the group's runs share: `repeat-<the first run's id>`.
    pub group: String,
}

/// One part of a partitioned run (`--partition hash:2/3`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Partition {
    /// `count` (every Nth case in listing order) or `hash` (by the case id's
    /// hash).
    pub scheme: String,
    /// This part, 1-based.
    pub index: u32,
    /// How many parts.
    pub total: u32,
    /// What the parts of one run share (`--run-group`, or derived from CI's
    /// run id, or from the suite, target and revision).
    pub group: String,
}

/// One arm of a paired comparison (e.g. `bare` and `draft`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ArmInfo {
    /// Arm name, e.g. `draft`.
    pub name: String,
    /// The serving configuration of this arm.
    pub target: TargetInfo,
}

/// How fast and how precisely this client can measure, read against a
/// loopback stream with known timing. A speed figure near `max_tok_s`
/// measures the client, not the server.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ClientCeiling {
    /// Most streamed tokens per second the client took in (one stream, one
    /// SSE event per token, server writing as fast as it can).
    pub max_tok_s: f64,
    /// Inter-token interval the paced stream used, in ms.
    pub paced_itl_ms: f64,
    /// Mean absolute error of the client's inter-token intervals against the
    /// server's own write times, in ms.
    pub itl_error_ms: f64,
    /// Client TTFT minus the server's first write (after reading the
    /// request), in ms: the loopback trip and the client's own overhead.
    pub ttft_error_ms: f64,
    /// A speed result above this share of `max_tok_s` is flagged.
    pub flag_margin: f64,
}

/// The harness build.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HarnessInfo {
    /// Crate version.
    pub version: String,
    /// Git revision of the project the harness ran in, when it is a checkout.
    pub git_revision: Option<String>,
}

/// The suite and the digest of its files.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SuiteInfo {
    /// Suite name.
    pub name: String,
    /// Suite version.
    pub version: String,
    /// sha256 over `suite.toml` and every pinned file (path and digest).
    pub sha256: String,
    /// Pinned files and their sha256.
    pub files: Vec<FilePin>,
}

/// A file and its sha256.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FilePin {
    /// Path relative to the suite folder.
    pub path: String,
    /// Hex sha256.
    pub sha256: String,
}

/// The serving configuration under test and the pins that identify it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TargetInfo {
    /// Target name from the configuration (`local`, or `endpoint` for
    /// `--endpoint`).
    pub name: String,
    /// Base URL.
    pub base_url: String,
    /// Model id the target names and the server reported.
    pub model_id: String,
    /// Engine found by the probe: `llama.cpp`, `vllm`, `sglang`, `ollama`,
    /// `openai-compatible`.
    pub engine: String,
    /// Engine build or version, when reported.
    pub build: Option<String>,
    /// Model file path as the server reports it.
    pub model_path: Option<String>,
    /// sha256 of the model file, when the harness could read it.
    pub model_sha256: Option<String>,
    /// Exact launch command, when the harness launched the server.
    pub launch_command: Option<Vec<String>>,
    /// Everything else the probe read.
    pub facts: Vec<(String, String)>,
    /// The machine the server ran on (1.2), when the harness launched it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<HostInfo>,
    /// `required` when the target forces a tool call on every request that
    /// offers tools (`tool-choice = "required"` in its configuration): the
    /// agent rows then measure calling under force, and cannot score when
    /// not to call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<String>,
    /// The column's name on the board, from the target's `label` or
    /// `--label`; runs with different labels are different columns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The target's `note`: a line under the column's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The target's `description`, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// Facts about a machine.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HostInfo {
    /// Host name.
    pub hostname: Option<String>,
    /// CPU model string.
    pub cpu_model: Option<String>,
    /// Logical cores.
    pub cores: usize,
    /// Total memory in bytes.
    pub memory_bytes: u64,
    /// Available memory in bytes when the run started.
    pub memory_available_bytes: u64,
    /// OS name and version.
    pub os: Option<String>,
    /// Kernel version.
    pub kernel: Option<String>,
    /// GPUs and other accelerators (1.2), as their driver reports them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accelerators: Vec<Accelerator>,
}

/// One accelerator of a machine.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Accelerator {
    /// Device name, e.g. `NVIDIA H200`.
    pub name: String,
    /// Driver version.
    pub driver: Option<String>,
    /// Device memory in MiB; None where the device has none of its own.
    pub memory_total_mib: Option<u64>,
    /// Device memory in use when read, MiB.
    pub memory_used_mib: Option<u64>,
    /// The device shares the host's memory (a unified pool, e.g. GB10).
    pub unified_memory: bool,
}

/// An instrument as it describes itself.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct InstrumentInfo {
    /// Name (the first segment of its case names).
    pub name: String,
    /// The board row it measures.
    pub row: String,
    /// Instrument version.
    pub version: String,
    /// Methodology text.
    pub description: String,
    /// sha256 of the component file that ran.
    pub component_sha256: String,
    /// The plugin interface it was built against, e.g. `0.2.0` (1.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface: Option<String>,
}

/// How a case ended. The five never mix.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Answered right.
    Pass,
    /// Answered wrong, or refused cleanly with a 4xx.
    Fail,
    /// Never answered: connection refused or reset, timeout, 5xx, stream cut,
    /// server died.
    Lost,
    /// Nothing could be measured here (the engine cannot produce it).
    NotApplicable,
    /// The harness itself was stopped (Ctrl-C, SIGTERM, SIGHUP) while the
    /// case ran (1.3): neither the model's failure nor the server's; a
    /// resume runs it again.
    Interrupted,
}

impl Outcome {
    /// The lower-case word used in files and output.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "fail",
            Outcome::Lost => "lost",
            Outcome::NotApplicable => "not-applicable",
            Outcome::Interrupted => "interrupted",
        }
    }
}

/// How a case ended, with its reason: the one type the host uses between
/// the plugin boundary and the record (where it is `outcome` + `reason`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Answered right.
    Pass,
    /// Answered wrong, refused cleanly, or the instrument broke: why.
    Fail(String),
    /// Never answered: what happened.
    Lost(String),
    /// Nothing could be measured here: why.
    NotApplicable(String),
    /// The harness was stopped while the case ran: by what.
    Interrupted(String),
}

impl Verdict {
    /// The kind, as the record's `outcome`.
    pub fn outcome(&self) -> Outcome {
        match self {
            Verdict::Pass => Outcome::Pass,
            Verdict::Fail(_) => Outcome::Fail,
            Verdict::Lost(_) => Outcome::Lost,
            Verdict::NotApplicable(_) => Outcome::NotApplicable,
            Verdict::Interrupted(_) => Outcome::Interrupted,
        }
    }

    /// The reason; None for a pass.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Verdict::Pass => None,
            Verdict::Fail(r) | Verdict::Lost(r) | Verdict::NotApplicable(r) | Verdict::Interrupted(r) => Some(r),
        }
    }
}

/// A figure with its unit.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Metric {
    /// Name, e.g. `decode-tok-s`.
    pub name: String,
    /// Value.
    pub value: f64,
    /// Unit, e.g. `tok/s`.
    pub unit: String,
}

/// One endpoint call made during a case, as the host saw it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CallRecord {
    /// `chat`, `complete`, or `judge` (a call to the run's judge).
    pub kind: String,
    /// `ok`, `lost`, `unauthorized`, `rejected`.
    pub result: String,
    /// HTTP status, when a response arrived.
    pub status: Option<u16>,
    /// Milliseconds from send to the end of the reply.
    pub total_ms: f64,
    /// Time to first content chunk (streamed calls).
    pub ttft_ms: Option<f64>,
    /// First to last content chunk (streamed calls).
    pub decode_ms: Option<f64>,
    /// Prompt tokens as the server counted them.
    pub prompt_tokens: Option<u32>,
    /// Completion tokens as the server counted them.
    pub completion_tokens: Option<u32>,
    /// Where the token counts came from: `server-usage`, `server-timings`,
    /// `none`.
    pub token_source: String,
    /// For calls sent together (1.1): what the server itself reported running
    /// while they were in flight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_load: Option<LoadWindow>,
    /// Prompt tokens the engine took from its prefix cache (1.2), where it
    /// reports them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u32>,
    /// Times the request was sent (1.2): more than 1 when the server asked
    /// the client to come back later (HTTP 429, 408, 503) and it did.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub attempts: u32,
    /// Counts the server sent that are not token counts (1.3), with their
    /// values (`completion_tokens = -5`); `token_source` is then `invalid`
    /// and those counts are null.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid_counts: Option<String>,
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// Distribution of one latency over a case's calls (1.2), in milliseconds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Percentiles {
    /// Values the distribution holds.
    pub count: u32,
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest.
    pub max: f64,
}

impl Percentiles {
    /// Nearest-rank percentiles of `values`; None when empty or not finite.
    pub fn of(values: &[f64]) -> Option<Percentiles> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let rank = |p: f64| {
            let i = ((p / 100.0) * v.len() as f64).ceil() as usize;
            v[i.clamp(1, v.len()) - 1]
        };
        Some(Percentiles {
            count: u32::try_from(v.len()).unwrap_or(u32::MAX),
            mean: v.iter().sum::<f64>() / v.len() as f64,
            p50: rank(50.0),
            p90: rank(90.0),
            p99: rank(99.0),
            max: v[v.len() - 1],
        })
    }
}

/// Latency distributions over the calls of a case that timed several
/// (1.2), as `vllm bench serve` and GuideLLM report them.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Latency {
    /// Time to first token, over the streamed calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<Percentiles>,
    /// Inter-token latency: the gaps between content chunks, over every
    /// streamed call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub itl_ms: Option<Percentiles>,
    /// Request latency, send to last byte, over every answered call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e2e_ms: Option<Percentiles>,
}

/// The server's own view of its load while concurrent calls were in flight,
/// sampled by the host (llama.cpp `/slots`, vLLM and SGLang metrics).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct LoadWindow {
    /// What was read, e.g. `llama.cpp /slots is_processing`.
    pub source: String,
    /// Samples taken.
    pub samples: u32,
    /// Most requests the server ran at once.
    pub running_max: u32,
    /// Mean requests running over the samples.
    pub running_mean: f64,
    /// Most requests the server reported waiting, where it reports that.
    pub waiting_max: Option<u32>,
}

/// One finished case. `C` is what a reader keeps of each endpoint call
/// ([`parse_with`]); the whole [`CallRecord`] by default.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CaseRecord<C = CallRecord> {
    /// `instrument::group::case`.
    pub id: String,
    /// Instrument name.
    pub instrument: String,
    /// Case name within the instrument (`group::case`).
    pub case: String,
    /// Board rows or categories this case feeds.
    pub tags: Vec<String>,
    /// How it ended.
    pub outcome: Outcome,
    /// Why it failed, was lost or was not applicable.
    pub reason: Option<String>,
    /// The instrument's figures.
    pub metrics: Vec<Metric>,
    /// The instrument's short facts.
    pub notes: Vec<(String, String)>,
    /// RFC 3339 UTC time the case started.
    pub started_at: String,
    /// Wall seconds of the whole case.
    pub seconds: f64,
    /// Seconds spent inside endpoint calls (the server's share).
    pub endpoint_seconds: f64,
    /// Every endpoint call, in order.
    pub calls: Vec<C>,
    /// Prompt tokens summed over the calls, where the server counted them.
    pub prompt_tokens: Option<u64>,
    /// Completion tokens summed over the calls, where the server counted them.
    pub completion_tokens: Option<u64>,
    /// sha256 of the case's transcript (every request and reply body, in
    /// order), so two runs can be compared without storing the text.
    pub transcript_sha256: String,
    /// Snapshot results: name and `match`, `new`, `changed`.
    pub snapshots: Vec<(String, String)>,
    /// The arm this case ran on (1.1), for paired instruments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arm: Option<String>,
    /// Latency distributions (1.2), when the case timed more than one call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<Latency>,
}

impl<C> CaseRecord<C> {
    /// The outcome and reason as one [`Verdict`].
    pub fn verdict(&self) -> Verdict {
        let reason = self.reason.clone().unwrap_or_default();
        match self.outcome {
            Outcome::Pass => Verdict::Pass,
            Outcome::Fail => Verdict::Fail(reason),
            Outcome::Lost => Verdict::Lost(reason),
            Outcome::NotApplicable => Verdict::NotApplicable(reason),
            Outcome::Interrupted => Verdict::Interrupted(reason),
        }
    }
}

/// The last line of a run that ended normally.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    /// RFC 3339 UTC end time.
    pub finished_at: String,
    /// Wall seconds of the cases (connecting and launching not included).
    pub seconds: f64,
    /// Cases passed.
    pub passed: u64,
    /// Cases failed.
    pub failed: u64,
    /// Cases lost.
    pub lost: u64,
    /// Cases not applicable.
    pub not_applicable: u64,
    /// Per instrument: the efficiency readout.
    #[serde(default)]
    pub instruments: Vec<InstrumentSummary>,
    /// For a gate suite (1.1, e.g. the configuration battery): passed only
    /// when every case passed; the others are named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<Gate>,
    /// Why the run stopped before its last case (1.2): credentials refused,
    /// or too many cases lost in a row. The cases it did not run are
    /// recorded as lost with this reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// The harness was stopped by a signal (1.3), e.g. `SIGINT`: the run is
    /// unfinished. The case in flight is recorded `interrupted`, no later
    /// case was started, and `--resume` runs what is left.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<String>,
    /// Cases interrupted (1.3).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub interrupted_cases: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The verdict of a gate suite.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Gate {
    /// Every case passed.
    pub passed: bool,
    /// What counts against it, one [`GateFailure`] a line as its `Display`
    /// writes it.
    pub failing: Vec<String>,
}

impl Gate {
    /// What counts against the gate, read back from [`Gate::failing`].
    pub fn failures(&self) -> impl Iterator<Item = GateFailure> + '_ {
        self.failing.iter().map(|line| GateFailure::parse(line))
    }
}

/// One thing a gate counts against it: a case that did not pass, written
/// `id (outcome: reason)`, or checks that did not run, in words. Written and
/// read through this type only, so a gate's file line and the board's
/// reading of it cannot drift apart.
#[derive(Debug, Clone, PartialEq)]
pub enum GateFailure {
    /// A case that ran and did not pass.
    Case {
        /// The case id.
        id: String,
        /// How it ended (never [`Outcome::Pass`]).
        outcome: Outcome,
        /// Its reason.
        reason: String,
    },
    /// Checks that did not run (filtered out, skipped, left to another
    /// part), in words.
    NotRun(String),
}

impl GateFailure {
    /// A record that did not pass; None for a pass.
    pub fn of(record: &CaseRecord) -> Option<GateFailure> {
        (record.outcome != Outcome::Pass).then(|| GateFailure::Case {
            id: record.id.clone(),
            outcome: record.outcome,
            reason: record.reason.clone().unwrap_or_default(),
        })
    }

    /// Read a line of [`Gate::failing`]; a line that is not a case's is
    /// words about checks that did not run.
    pub fn parse(line: &str) -> GateFailure {
        let case = line.split_once(" (").and_then(|(id, rest)| {
            let (outcome, reason) = rest.strip_suffix(')')?.split_once(": ")?;
            let outcome = [Outcome::Fail, Outcome::Lost, Outcome::NotApplicable, Outcome::Interrupted]
                .into_iter()
                .find(|o| o.as_str() == outcome)?;
            Some(GateFailure::Case { id: id.to_string(), outcome, reason: reason.to_string() })
        });
        case.unwrap_or_else(|| GateFailure::NotRun(line.to_string()))
    }

    /// What the board names it by: the case id, or the words up to their
    /// first parenthesis.
    pub fn name(&self) -> &str {
        match self {
            GateFailure::Case { id, .. } => id,
            GateFailure::NotRun(words) => words.split(" (").next().unwrap_or(words),
        }
    }
}

impl std::fmt::Display for GateFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GateFailure::Case { id, outcome, reason } => write!(f, "{id} ({}: {reason})", outcome.as_str()),
            GateFailure::NotRun(words) => f.write_str(words),
        }
    }
}

/// One instrument's efficiency readout over a run: how much time and output
/// a correct answer cost.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct InstrumentSummary {
    /// Instrument name.
    pub name: String,
    /// Cases given (all outcomes).
    pub given: u64,
    /// Cases passed.
    pub correct: u64,
    /// Cases failed.
    pub failed: u64,
    /// Cases lost.
    pub lost: u64,
    /// Cases not applicable.
    pub not_applicable: u64,
    /// Mean wall seconds per case.
    pub mean_seconds: f64,
    /// Completion tokens over all cases divided by correct answers; None
    /// when nothing was correct or the server counted no tokens.
    pub output_tokens_per_correct: Option<f64>,
    /// Mean seconds per case spent in the harness and the instrument, not
    /// waiting on the server.
    pub mean_harness_seconds: f64,
}

/// Why a measurement file could not be read.
#[derive(Debug)]
pub struct ReadError {
    /// 1-based line number.
    pub line: usize,
    /// What was wrong.
    pub message: String,
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ReadError {}

/// Parse a whole measurement file. The first line must be a manifest of a
/// format version this crate knows.
pub fn parse(text: &str) -> Result<Vec<Line>, ReadError> {
    parse_with(text)
}

/// [`parse`], keeping of each endpoint call only what `C` reads: a reader
/// that needs less of the calls (the board reads their count and first
/// status) skips the rest unread instead of building it.
pub fn parse_with<C: serde::de::DeserializeOwned>(text: &str) -> Result<Vec<Line<C>>, ReadError> {
    let mut lines = Vec::new();
    parse_each(text, |line| {
        lines.push(line);
        Ok(())
    })?;
    Ok(lines)
}

/// [`parse_with`], handing each line to `each` as it is read instead of
/// collecting them (a reader that keeps its own structure moves nothing
/// twice). An error from `each` is the file's error at that line.
pub fn parse_each<C: serde::de::DeserializeOwned>(
    text: &str,
    mut each: impl FnMut(Line<C>) -> Result<(), String>,
) -> Result<(), ReadError> {
    let mut seen = false;
    for (i, raw) in text.lines().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        let line: Line<C> =
            serde_json::from_str(raw).map_err(|err| ReadError { line: i + 1, message: err.to_string() })?;
        if !seen {
            first_line(&line, i + 1)?;
            seen = true;
        }
        each(line).map_err(|message| ReadError { line: i + 1, message })?;
    }
    if !seen {
        return Err(ReadError { line: 1, message: "empty measurement file".into() });
    }
    Ok(())
}

/// A file's first line must be a manifest of a major version this crate
/// reads.
fn first_line<C>(line: &Line<C>, at: usize) -> Result<(), ReadError> {
    match line {
        Line::Manifest(m) if major(&m.format_version) == major(FORMAT_VERSION) => Ok(()),
        Line::Manifest(m) => Err(ReadError {
            line: at,
            message: format!("format version {} is not readable by this version ({FORMAT_VERSION})", m.format_version),
        }),
        _ => Err(ReadError { line: at, message: "the first line is not a manifest".into() }),
    }
}

/// A measurement file read as far as it is whole: the lines before the
/// first damaged one, and where the damage is.
#[derive(Debug)]
pub struct Partial {
    /// Every line up to the damage.
    pub lines: Vec<Line>,
    /// The damaged line, if any: a file cut by a crash or a full disk ends
    /// in half a line.
    pub damage: Option<ReadError>,
    /// How many bytes of the text are whole lines: `&text[..whole_bytes]`
    /// is what a strict reader can take.
    pub whole_bytes: usize,
}

/// Read a measurement file that may be damaged: every record up to its
/// last whole line is kept, and the first line that does not parse is
/// reported instead of failing the whole file. A file whose manifest is
/// missing, damaged or of another major version is still an error. Each
/// line is parsed once.
pub fn parse_partial(text: &str) -> Result<Partial, ReadError> {
    let mut lines = Vec::new();
    let mut whole_bytes = 0;
    let mut damage = None;
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        let parsed = if !raw.ends_with('\n') {
            Err("the line is cut short (no newline at its end: the run crashed or the disk filled)".to_string())
        } else if raw.trim().is_empty() {
            Ok(None)
        } else {
            serde_json::from_str::<Line>(raw).map(Some).map_err(|e| e.to_string())
        };
        match parsed {
            Ok(line) => {
                if let Some(line) = line {
                    if lines.is_empty() {
                        first_line(&line, i + 1)?;
                    }
                    lines.push(line);
                }
                whole_bytes += raw.len();
            }
            Err(message) => {
                damage = Some(ReadError { line: i + 1, message });
                break;
            }
        }
    }
    if lines.is_empty() {
        return Err(damage.unwrap_or(ReadError { line: 1, message: "empty measurement file".into() }));
    }
    Ok(Partial { lines, damage, whole_bytes })
}

fn major(version: &str) -> &str {
    version.split('.').next().unwrap_or(version)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gate_failure_reads_back_as_it_was_written() {
        let case = GateFailure::Case {
            id: "x::y::z".into(),
            outcome: Outcome::Lost,
            reason: "timed out (30 s): no reply".into(),
        };
        assert_eq!(case.to_string(), "x::y::z (lost: timed out (30 s): no reply)");
        assert_eq!(GateFailure::parse(&case.to_string()), case);
        assert_eq!(case.name(), "x::y::z");
        let words = "2 of 3 checks did not run (filtered out or skipped)";
        assert_eq!(GateFailure::parse(words), GateFailure::NotRun(words.into()));
        assert_eq!(GateFailure::parse(words).name(), "2 of 3 checks did not run");
        assert_eq!(GateFailure::parse(words).to_string(), words);
    }

    #[test]
    fn line_is_tagged_type_and_data() {
        let line: Line = Line::Summary(Summary {
            finished_at: "2026-01-01T00:00:00Z".into(),
            seconds: 1.5,
            passed: 1,
            failed: 2,
            lost: 3,
            not_applicable: 0,
            instruments: vec![],
            gate: None,
            stopped: None,
            interrupted: None,
            interrupted_cases: 0,
        });
        let json = serde_json::to_value(&line).unwrap();
        assert_eq!(json["type"], "summary");
        assert_eq!(json["data"]["lost"], 3);
    }

    fn manifest(version: &str) -> Line {
        Line::Manifest(Manifest {
            format_version: version.into(),
            run_id: "r".into(),
            started_at: "2026-01-01T00:00:00Z".into(),
            harness: HarnessInfo { version: "0.1.0".into(), git_revision: None },
            suite: SuiteInfo { name: "s".into(), version: "1".into(), sha256: "00".into(), files: vec![] },
            target: TargetInfo {
                name: "t".into(),
                base_url: "http://127.0.0.1:1".into(),
                model_id: "m".into(),
                engine: "llama.cpp".into(),
                build: None,
                model_path: None,
                model_sha256: None,
                launch_command: None,
                facts: vec![],
                host: None,
                tool_choice: None,
                label: None,
                note: None,
                description: None,
            },
            client_host: HostInfo {
                hostname: None,
                cpu_model: None,
                cores: 2,
                memory_bytes: 1,
                memory_available_bytes: 1,
                os: None,
                kernel: None,
                accelerators: vec![],
            },
            route: "direct".into(),
            instruments: vec![],
            arms: vec![],
            client_ceiling: None,
            judge: None,
            partition: None,
            resumes: None,
            suite_cases: Default::default(),
            repeat: None,
        })
    }

    #[test]
    fn a_1_0_file_without_the_1_1_fields_still_loads() {
        let v10 = r#"{"type":"manifest","data":{"format_version":"1.0","run_id":"r","started_at":"t","harness":{"version":"0.1.0","git_revision":null},"suite":{"name":"s","version":"1","sha256":"00","files":[]},"target":{"name":"t","base_url":"u","model_id":"m","engine":"llama.cpp","build":null,"model_path":null,"model_sha256":null,"launch_command":null,"facts":[]},"client_host":{"hostname":null,"cpu_model":null,"cores":2,"memory_bytes":1,"memory_available_bytes":1,"os":null,"kernel":null},"route":"direct","instruments":[]}}
{"type":"case","data":{"id":"a::b","instrument":"a","case":"b","tags":[],"outcome":"pass","reason":null,"metrics":[],"notes":[],"started_at":"t","seconds":1.0,"endpoint_seconds":0.5,"calls":[{"kind":"chat","result":"ok","status":200,"total_ms":1.0,"ttft_ms":null,"decode_ms":null,"prompt_tokens":1,"completion_tokens":1,"token_source":"server-usage"}],"prompt_tokens":1,"completion_tokens":1,"transcript_sha256":"00","snapshots":[]}}
{"type":"summary","data":{"finished_at":"t","seconds":1.0,"passed":1,"failed":0,"lost":0,"not_applicable":0}}
"#;
        let lines = parse(v10).unwrap();
        assert_eq!(lines.len(), 3);
        let Line::Case(c) = &lines[1] else { panic!() };
        assert_eq!((c.arm.as_deref(), c.calls[0].server_load.as_ref()), (None, None));
    }

    #[test]
    fn reads_its_own_version_and_refuses_another_major() {
        let ok = serde_json::to_string(&manifest("1.3")).unwrap();
        assert_eq!(parse(&ok).unwrap().len(), 1);
        let future = serde_json::to_string(&manifest("2.0")).unwrap();
        let err = parse(&future).unwrap_err();
        assert_eq!(err.line, 1);
        assert!(err.message.contains("format version 2.0"), "{err}");
    }

    #[test]
    fn the_first_line_must_be_a_manifest() {
        let err = parse(r#"{"type":"summary","data":{"finished_at":"x","seconds":0,"passed":0,"failed":0,"lost":0,"not_applicable":0}}"#)
            .unwrap_err();
        assert!(err.message.contains("not a manifest"), "{err}");
    }

    #[test]
    fn a_cut_file_keeps_every_whole_line_and_names_the_cut() {
        let m = serde_json::to_string(&manifest("1.2")).unwrap();
        let whole = format!("{m}\n");
        let cut = format!("{m}\n{{\"type\":\"case\",\"data\":{{\"id\":\"a");
        let p = parse_partial(&cut).unwrap();
        assert_eq!(p.lines.len(), 1);
        let damage = p.damage.unwrap();
        assert_eq!(damage.line, 2);
        assert!(damage.message.contains("cut short"), "{damage}");
        assert!(parse_partial(&whole).unwrap().damage.is_none());
        // A damaged line in the middle ends what is read there too.
        let mid = format!("{m}\nnot json\n{m}\n");
        let p = parse_partial(&mid).unwrap();
        assert_eq!((p.lines.len(), p.damage.unwrap().line), (1, 2));
        // Without a manifest there is nothing to keep.
        assert!(parse_partial("{\"type\":\"sum").is_err());
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        let p = Percentiles::of(&v).unwrap();
        assert_eq!((p.count, p.p50, p.p90, p.p99, p.max), (100, 50.0, 90.0, 99.0, 100.0));
        assert_eq!(p.mean, 50.5);
        let one = Percentiles::of(&[7.0]).unwrap();
        assert_eq!((one.p50, one.p99), (7.0, 7.0));
        assert!(Percentiles::of(&[f64::NAN]).is_none());
        assert!(Percentiles::of(&[]).is_none());
    }

    #[test]
    fn verdict_and_record_fields_agree() {
        assert_eq!(Verdict::Lost("x".into()).outcome(), Outcome::Lost);
        assert_eq!(Verdict::Fail("why".into()).reason(), Some("why"));
        assert_eq!(Verdict::Pass.reason(), None);
    }

    #[test]
    fn garbage_names_its_line() {
        let err = parse("\n{not json").unwrap_err();
        assert_eq!(err.line, 2);
    }
}
