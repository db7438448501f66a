//! Project configuration: built-in defaults plus the project's `sparktest.toml`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{Error, ErrorKind};

/// The built-in configuration, shipped inside the binary.
pub const DEFAULT_CONFIG: &str = include_str!("default-config.toml");

/// The name of a project's configuration file.
pub const CONFIG_FILE: &str = "sparktest.toml";

/// Run settings.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct RunConfig {
    /// Measurement files folder, relative to the project root.
    pub measurements_dir: PathBuf,
    /// Snapshots folder, relative to the project root.
    pub snapshots_dir: PathBuf,
    /// Wall-clock limit of one case.
    pub case_timeout_secs: u64,
    /// Wall-clock limit of an instrument's `describe` and `cases`, and of a
    /// reporter's `render`.
    pub setup_timeout_secs: u64,
    /// Limit of one HTTP call.
    pub request_timeout_secs: u64,
    /// Connect limit of one HTTP call.
    pub connect_timeout_secs: u64,
    /// Longest silence between two reads of a reply once it has started.
    pub idle_timeout_secs: u64,
    /// Limit for a streamed call's response head and first content, from
    /// the send (silence and keep-alive comments alike before it).
    pub head_timeout_secs: u64,
    /// Limit of one auxiliary read (probes, `/metrics`, `/slots`).
    pub aux_timeout_secs: u64,
    /// Largest reply body, MiB.
    pub max_reply_mib: u64,
    /// Largest single server-sent event, MiB.
    pub max_event_mib: u64,
    /// Time the whole run may spend waiting to retry 429/408/503.
    pub retry_budget_secs: u64,
    /// Sends per call, the first included.
    pub retry_attempts: u32,
    /// Stop the run after this many lost cases in a row (0: never).
    pub max_lost_in_row: u32,
    /// Guest CPU budget per case (wasmtime fuel).
    pub fuel_per_case: u64,
    /// Guest memory limit per instance.
    pub memory_per_instance_mib: u64,
    /// Most bytes a guest may hand the host in one call, MiB.
    pub hostcall_mib: u64,
    /// The judge target, for instruments that grade replies (`--judge`).
    #[serde(default)]
    pub judge: Option<String>,
}

/// A serving configuration under test.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct TargetConfig {
    /// One line for people.
    #[serde(default)]
    pub description: String,
    /// The model id the server must report.
    pub model: String,
    /// Other names the server may give this model in its replies (a
    /// served-model-name alias, a dated snapshot name). A reply naming any
    /// other model is lost, "answered by another model: …": a gateway's
    /// fallback never scores for this column.
    #[serde(default)]
    pub model_aliases: Vec<String>,
    /// Base URL of a running server. Exactly one of this and `launch`.
    pub base_url: Option<String>,
    /// How to start the server, for a target the harness launches.
    pub launch: Option<LaunchConfig>,
    /// `direct` or `gateway`.
    #[serde(default = "direct")]
    pub route: String,
    /// Identifying pins recorded in the manifest (build, weights digest …).
    #[serde(default)]
    pub pins: BTreeMap<String, String>,
    /// The environment variable holding the API key, sent as a bearer token
    /// with every call (and `{api-key}` in a launch command). The key itself
    /// never reaches a record, a board, a log line or an error.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// `required` for a model that calls tools only when forced: every
    /// request that offers tools and leaves the choice to the model (unset
    /// or `auto`) is sent with `tool_choice: "required"`. The run records
    /// it, and the board names it on the column: the agent rows then cannot
    /// score when not to call. Unset: requests go as the suite wrote them.
    #[serde(default)]
    pub tool_choice: Option<ForcedToolChoice>,
    /// The column's name on the board ("NVFP4 · MTP-3 · vision ✓"); the
    /// target's name when unset. `--label` replaces it for one run.
    #[serde(default)]
    pub label: Option<String>,
    /// A line under the column's name on the board.
    #[serde(default)]
    pub note: Option<String>,
}

/// A tool choice a target imposes on requests that offer tools.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ForcedToolChoice {
    /// Every such request must call a tool.
    Required,
}

fn direct() -> String {
    "direct".into()
}

/// How the harness launches a target.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct LaunchConfig {
    /// A program (path relative to the project root, or
    /// `builtin:reference-target`) printing `key=value` lines.
    pub provision: Option<String>,
    /// The command; `{key}` is replaced by provisioned values and `{port}`
    /// by a free port.
    pub command: Vec<String>,
    /// Path polled until it answers 200.
    #[serde(default = "health")]
    pub health_path: String,
    /// How long to wait for health.
    #[serde(default = "startup")]
    pub startup_timeout_secs: u64,
}

fn health() -> String {
    "/health".into()
}

fn startup() -> u64 {
    120
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    run: toml::Table,
    #[serde(default)]
    target: BTreeMap<String, TargetConfig>,
    /// `[campaign.NAME]` tables: read and checked by `cargo sparktest
    /// campaign NAME` (`campaign::Campaign::parse_project`), not here.
    #[serde(default, rename = "campaign")]
    _campaigns: toml::Table,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct DefaultFile {
    target: BTreeMap<String, TargetConfig>,
}

/// A name that will become part of a path or an id: ASCII letters, digits,
/// `_`, `-` and `.`, starting with a letter or digit.
pub fn check_name(what: &str, name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let ok = chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && !name.contains("..");
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{what} name {name:?} must be ASCII letters, digits, '_', '-' or '.', starting with a letter or digit"
        ))
    }
}

/// The merged configuration of a project.
#[derive(Debug, Clone)]
pub struct Config {
    /// The project root (where `sparktest.toml` is, or the current folder).
    pub root: PathBuf,
    /// Run settings.
    pub run: RunConfig,
    /// Targets by name.
    pub targets: BTreeMap<String, TargetConfig>,
}

impl Config {
    /// Load the built-in configuration and the project's file, found by
    /// walking up from `start`.
    pub fn discover(start: &Path) -> Result<Self, Error> {
        let mut dir = Some(start);
        while let Some(d) = dir {
            let file = d.join(CONFIG_FILE);
            if file.is_file() {
                return Self::load(d, Some(&file));
            }
            dir = d.parent();
        }
        Self::load(start, None)
    }

    /// Load the built-in configuration and, if given, a project file. The
    /// project's `[run]` keys replace the built-in ones; a `[target.NAME]`
    /// replaces the built-in target of that name whole.
    pub fn load(root: &Path, file: Option<&Path>) -> Result<Self, Error> {
        let builtin = |err: String| Error::setup(format!("built-in configuration is invalid: {err}"));
        let mut run: toml::Table = toml::from_str::<toml::Table>(DEFAULT_CONFIG)
            .map_err(|e| builtin(e.to_string()))?
            .remove("run")
            .and_then(|v| v.as_table().cloned())
            .ok_or_else(|| builtin("no [run]".into()))?;
        let defaults: DefaultFile = toml::from_str(DEFAULT_CONFIG).map_err(|e| builtin(e.to_string()))?;
        let mut targets = defaults.target;
        let mut shown = "the built-in configuration".to_string();
        if let Some(file) = file {
            shown = file.display().to_string();
            let text =
                std::fs::read_to_string(file).map_err(|err| Error::setup(format!("failed to read {shown}: {err}")))?;
            let parsed: ConfigFile = toml::from_str(&text).map_err(|err| Error::setup(format!("{shown}: {err}")))?;
            run.extend(parsed.run);
            targets.extend(parsed.target);
        }
        let run: RunConfig =
            toml::Value::Table(run).try_into().map_err(|err| Error::setup(format!("{shown}: [run]: {err}")))?;
        let config = Config { root: root.to_path_buf(), run, targets };
        for (name, target) in &config.targets {
            check_name("target", name).map_err(|e| Error::setup(format!("{shown}: {e}")))?;
            match (&target.base_url, &target.launch) {
                (Some(_), None) | (None, Some(_)) => {}
                _ => {
                    return Err(Error::new(
                        ErrorKind::Setup,
                        format!("{shown}: target {name}: give exactly one of base-url and launch"),
                    ));
                }
            }
        }
        Ok(config)
    }

    /// A target by name, or an error listing the known ones.
    pub fn target(&self, name: &str) -> Result<&TargetConfig, Error> {
        self.targets.get(name).ok_or_else(|| {
            let known: Vec<&str> = self.targets.keys().map(String::as_str).collect();
            Error::setup(format!("no target named {name:?}; known targets: {}", known.join(", ")))
        })
    }

    /// A path relative to the project root.
    pub fn path(&self, rel: &Path) -> PathBuf {
        if rel.is_absolute() { rel.to_path_buf() } else { self.root.join(rel) }
    }

    /// The measurements folder every subcommand reads and writes: `given`
    /// (`--measurements`, as typed) when there is one, else the project's
    /// `[run] measurements-dir` under its root.
    pub fn measurements_dir(&self, given: Option<&Path>) -> PathBuf {
        given.map_or_else(|| self.path(&self.run.measurements_dir), Path::to_path_buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_measurements_folder_is_the_one_given_else_the_project_s() {
        let c = Config::load(Path::new("/project"), None).unwrap();
        assert_eq!(c.measurements_dir(None), Path::new("/project").join(&c.run.measurements_dir));
        assert_eq!(c.measurements_dir(Some(Path::new("elsewhere/m"))), Path::new("elsewhere/m"));
        assert_eq!(c.measurements_dir(Some(Path::new("/abs/m"))), Path::new("/abs/m"));
    }

    #[test]
    fn defaults_load_and_name_local() {
        let c = Config::load(Path::new("/tmp"), None).unwrap();
        let local = c.target("local").unwrap();
        assert_eq!(local.model, "SmolLM2-135M-Instruct-Q4_1");
        assert!(local.launch.is_some());
    }

    #[test]
    fn a_target_may_declare_model_aliases() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(CONFIG_FILE);
        let text = "[target.api]\nmodel = \"m\"\nmodel-aliases = [\"m-2026-01\"]\nbase-url = \"http://h\"\n";
        std::fs::write(&file, text).unwrap();
        let c = Config::discover(dir.path()).unwrap();
        assert_eq!(c.target("api").unwrap().model_aliases, ["m-2026-01"]);
        assert!(c.target("local").unwrap().model_aliases.is_empty(), "none unless declared");
    }

    #[test]
    fn project_file_overrides_and_errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(CONFIG_FILE);
        std::fs::write(
            &file,
            "[run]\ncase-timeout-secs = 5\n[target.gpu]\nmodel = \"m\"\nbase-url = \"http://h:8000\"\n",
        )
        .unwrap();
        let c = Config::discover(dir.path()).unwrap();
        assert_eq!(c.run.case_timeout_secs, 5);
        assert_eq!(c.target("gpu").unwrap().base_url.as_deref(), Some("http://h:8000"));
        assert!(c.target("nope").unwrap_err().to_string().contains("local"));

        std::fs::write(&file, "[run]\ncase-timeout = 5\n").unwrap();
        let err = Config::discover(dir.path()).unwrap_err().to_string();
        assert!(err.contains("sparktest.toml") && err.contains("case-timeout"), "{err}");

        std::fs::write(&file, "[run]\nidle-timeout-secs = \"soon\"\n").unwrap();
        let err = Config::discover(dir.path()).unwrap_err().to_string();
        assert!(err.contains("sparktest.toml") && err.contains("idle-timeout-secs"), "{err}");

        std::fs::write(&file, "[target.x]\nmodel = \"m\"\n").unwrap();
        let err = Config::discover(dir.path()).unwrap_err().to_string();
        assert!(err.contains("target x"), "{err}");

        std::fs::write(&file, "[target.\"../up\"]\nmodel = \"m\"\nbase-url = \"http://h\"\n").unwrap();
        let err = Config::discover(dir.path()).unwrap_err().to_string();
        assert!(err.contains("target name \"../up\""), "{err}");
    }
}
