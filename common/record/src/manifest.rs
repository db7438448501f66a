//! The first line of a measurement file: what was measured, where and
//! with what.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What was measured, where and with what.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    /// Format version of this file ([`FORMAT_VERSION`](crate::FORMAT_VERSION)).
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
    /// The campaign this run is a step of (1.5, `cargo sparktest
    /// campaign`): the board reads a campaign's files like any others, and
    /// names the configurations of a campaign that no file holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub campaign: Option<CampaignRef>,
    /// (1.6) The batch job the run ran in (a Slurm job or array task, a
    /// Kubernetes Indexed Job's pod), from its environment; absent outside one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<JobRef>,
    /// (1.7) The board rows the suite declares (`[[row]]`): a reporter
    /// shows them as it shows the built-in rows. A declaration this reader
    /// cannot read (a figure kind of a later format) is left out, as an
    /// unknown field is, never the whole manifest with it.
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "readable_rows")]
    pub rows: Vec<crate::RowDeclaration>,
}

/// The declarations this reader can read.
fn readable_rows<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<crate::RowDeclaration>, D::Error> {
    let values = Vec::<serde_json::Value>::deserialize(d)?;
    Ok(values.into_iter().filter_map(|v| serde_json::from_value(v).ok()).collect())
}

/// The batch job a run ran in (1.6): what a scheduler told the process in
/// its environment.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, Default)]
pub struct JobRef {
    /// `slurm` or `kubernetes`.
    pub scheduler: String,
    /// The job id (`SLURM_JOB_ID`; a Kubernetes pod's name).
    pub job_id: String,
    /// The array job (`SLURM_ARRAY_JOB_ID`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array_job_id: Option<String>,
    /// The task's index (`SLURM_ARRAY_TASK_ID`, `JOB_COMPLETION_INDEX`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array_task_id: Option<String>,
    /// How many times the scheduler started it again (`SLURM_RESTART_COUNT`).
    #[serde(default)]
    pub restart_count: u32,
    /// The node it ran on (`SLURMD_NODENAME`; a pod's node where told).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// The partition (`SLURM_JOB_PARTITION`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// The GPUs the scheduler allocated (`SLURM_JOB_GPUS`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus: Option<String>,
    /// The devices the job's processes see (`CUDA_VISIBLE_DEVICES`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visible_devices: Option<String>,
}

impl JobRef {
    /// In words: `Slurm job 7_2 on node-3 (requeued 1 time)`.
    pub fn describe(&self) -> String {
        let id = match (&self.array_job_id, &self.array_task_id) {
            (Some(a), Some(t)) => format!("{a}_{t}"),
            (None, Some(t)) => format!("{} index {t}", self.job_id),
            _ => self.job_id.clone(),
        };
        let who = if self.scheduler == "slurm" { "Slurm job" } else { "Kubernetes pod" };
        let mut s = format!("{who} {id}");
        if let Some(n) = &self.node {
            s.push_str(&format!(" on {n}"));
        }
        if self.restart_count > 0 {
            s.push_str(&format!(
                " (requeued {} time{})",
                self.restart_count,
                if self.restart_count == 1 { "" } else { "s" }
            ));
        }
        s
    }
}

/// A run's place in a campaign (1.5).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct CampaignRef {
    /// The campaign id: every box of a partitioned campaign gives the same.
    pub id: String,
    /// The configuration this run measured, by its name in the campaign.
    pub configuration: String,
    /// Every configuration of the campaign, in order.
    pub configurations: Vec<String>,
    /// `hash:K/N` or `count:K/N`: the share of the configurations the box
    /// that wrote this file ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
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

impl TargetInfo {
    /// The launch command as the flags that make the configuration, the
    /// part of a column's identity (the board's configuration line, `diff`'s
    /// `launch command`) that a launch contributes. Left out, because they
    /// make no configuration or repeat what the line already says: a
    /// wrapper's `env` and its `NAME=value` assignments, the program (and an
    /// interpreter's `-m module`), `--host` and `--port`, a flag naming the
    /// model by the model id (`--alias`, `--served-model-name`, or a model
    /// file or folder whose name is the id). Paths are cut to their file
    /// names, so two machines' cache folders make one configuration; the
    /// files' digests are the target's pins. The manifest keeps the exact
    /// command, which is what reproduces the run. None when the harness
    /// did not launch the server.
    pub fn launch_flags(&self) -> Option<String> {
        let cmd = self.launch_command.as_ref()?;
        // The port the harness chose is the launch's, not the
        // configuration's, however the command passes it (`--port N`, a
        // positional `N`, `host:N`, `--bind=host:N`): written `{port}`.
        let port = self.facts.iter().find(|(k, _)| k == LAUNCH_PORT).map(|(_, v)| v.as_str());
        let masked: Vec<String> = cmd
            .iter()
            .map(|a| match port {
                Some(p) if a == p => "{port}".to_string(),
                Some(p) if a.ends_with(&format!(":{p}")) || a.ends_with(&format!("={p}")) => {
                    format!("{}{{port}}", &a[..a.len() - p.len()])
                }
                _ => a.clone(),
            })
            .collect();
        let cmd = &masked;
        let file_name = |v: &str| -> String {
            let v = v.trim_end_matches('/');
            let named_by_path = (v.contains('/') || v.starts_with('~')) && !v.contains("://");
            if named_by_path { v.rsplit('/').next().unwrap_or(v).to_string() } else { v.to_string() }
        };
        // "SmolLM2-135M-Instruct.Q4_1.gguf" names "SmolLM2-135M-Instruct-Q4_1".
        let same_name = |v: &str| {
            let squash = |s: &str| s.chars().filter(char::is_ascii_alphanumeric).collect::<String>().to_lowercase();
            let name = file_name(v);
            let stem = name.strip_suffix(".gguf").unwrap_or(&name);
            squash(stem) == squash(&self.model_id)
        };
        let mut args = cmd.iter().map(String::as_str).peekable();
        // The wrapper and its environment, then the program.
        while let Some(a) = args.peek() {
            let assignment = a.split_once('=').is_some_and(|(k, _)| {
                !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !k.starts_with('-')
            });
            if file_name(a) == "env" || assignment {
                args.next();
            } else {
                break;
            }
        }
        let program = args.next().map(file_name).unwrap_or_default();
        if program.starts_with("python") {
            while let Some(a) = args.next() {
                if a == "-m" {
                    args.next();
                    break;
                }
                if !a.starts_with('-') {
                    break;
                }
            }
        }
        let mut out: Vec<String> = Vec::new();
        while let Some(a) = args.next() {
            let (flag, inline) = match a.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f, Some(v)),
                _ => (a, None),
            };
            let takes_value = matches!(
                flag,
                "--host"
                    | "--port"
                    | "--alias"
                    | "--served-model-name"
                    | "--model"
                    | "-m"
                    | "--model-path"
                    | "--model-draft"
                    | "-md"
            );
            if !takes_value {
                out.push(file_name(a));
                continue;
            }
            let value = match inline {
                Some(v) => v,
                None => args.next().unwrap_or(""),
            };
            match flag {
                "--host" | "--port" => {}
                "--alias" | "--served-model-name" if value == self.model_id => {}
                "--model" | "-m" | "--model-path" if same_name(value) => {}
                _ => out.push(format!("{flag} {}", file_name(value))),
            }
        }
        Some(out.join(" "))
    }
}

/// The fact of a launched target naming the port the harness chose for
/// it (`{port}` in its launch command): never part of a configuration.
pub const LAUNCH_PORT: &str = "launch_port";

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

#[cfg(test)]
mod tests {
    use super::*;

    fn target(model_id: &str, cmd: &[&str]) -> TargetInfo {
        TargetInfo {
            name: "t".into(),
            base_url: "http://127.0.0.1:1".into(),
            model_id: model_id.into(),
            engine: "e".into(),
            build: None,
            model_path: None,
            model_sha256: None,
            launch_command: Some(cmd.iter().map(|s| s.to_string()).collect()),
            facts: vec![],
            host: None,
            tool_choice: None,
            label: None,
            note: None,
            description: None,
        }
    }

    #[test]
    fn the_launch_port_is_never_the_configuration_s_however_it_is_passed() {
        let with = |port: &str, cmd: &[&str]| {
            let mut t = target("m", cmd);
            t.facts.push((LAUNCH_PORT.into(), port.into()));
            t.launch_flags().unwrap()
        };
        // A positional port, a host:port, a --flag=host:port: each launch's
        // own port, one configuration.
        assert_eq!(
            with("41001", &["serve", "41001", "--seed", "-1"]),
            with("52002", &["serve", "52002", "--seed", "-1"])
        );
        assert_eq!(with("41001", &["serve", "41001", "--seed", "-1"]), "{port} --seed -1");
        assert_eq!(with("41001", &["srv", "--listen", "127.0.0.1:41001"]), "--listen 127.0.0.1:{port}");
        assert_eq!(with("41001", &["srv", "--bind=0.0.0.0:41001"]), with("7", &["srv", "--bind=0.0.0.0:7"]));
        // A number that is not the port stays.
        assert_eq!(with("41001", &["srv", "--ctx-size", "4100"]), "--ctx-size 4100");
    }

    #[test]
    fn launch_flags_keep_what_makes_the_configuration() {
        let local = target(
            "SmolLM2-135M-Instruct-Q4_1",
            &[
                "/home/u/.cache/sparktest/reference/bin/llama-server",
                "--model",
                "/home/u/.cache/m/SmolLM2-135M-Instruct.Q4_1.gguf",
                "--alias",
                "SmolLM2-135M-Instruct-Q4_1",
                "--host",
                "127.0.0.1",
                "--port",
                "8080",
                "--threads",
                "1",
                "--jinja",
                "--chat-template-file",
                "~/.cache/sparktest/reference/t/llama-3.2.jinja",
                "--model-draft",
                "/x/draft.gguf",
            ],
        );
        assert_eq!(
            local.launch_flags().unwrap(),
            "--threads 1 --jinja --chat-template-file llama-3.2.jinja --model-draft draft.gguf"
        );
        let vllm = target(
            "SmolLM2-135M-Instruct",
            &[
                "env",
                "VLLM_TARGET_DEVICE=cpu",
                "HF_HOME=~/.cache/sparktest/vllm/hf",
                "/v/bin/python",
                "-m",
                "vllm.entrypoints.openai.api_server",
                "--model",
                "/c/SmolLM2-135M-Instruct-bf16",
                "--served-model-name",
                "SmolLM2-135M-Instruct",
                "--port=9",
                "--dtype",
                "float32",
                "--speculative-config",
                "{\"method\":\"ngram\"}",
            ],
        );
        assert_eq!(
            vllm.launch_flags().unwrap(),
            "--model SmolLM2-135M-Instruct-bf16 --dtype float32 --speculative-config {\"method\":\"ngram\"}",
            "the folder's dtype suffix is not the id: kept"
        );
        // Another machine's cache folders make the same configuration.
        let mut elsewhere = vllm.clone();
        elsewhere.launch_command = Some(
            vllm.launch_command
                .as_ref()
                .unwrap()
                .iter()
                .map(|a| a.replace("~/.cache", "/srv/cache").replace("/c/", "/d/"))
                .collect(),
        );
        assert_eq!(elsewhere.launch_flags(), vllm.launch_flags());
        assert_eq!(target("m", &[]).launch_flags().as_deref(), Some(""));
    }
}
