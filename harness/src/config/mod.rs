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
    /// Limit of one HTTP call.
    pub request_timeout_secs: u64,
    /// Connect limit of one HTTP call.
    pub connect_timeout_secs: u64,
    /// Guest CPU budget per case (wasmtime fuel).
    pub fuel_per_case: u64,
    /// Guest memory limit per instance.
    pub memory_per_instance_mib: u64,
}

/// The same, every key optional, as a project file gives it.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct RunOverrides {
    measurements_dir: Option<PathBuf>,
    snapshots_dir: Option<PathBuf>,
    case_timeout_secs: Option<u64>,
    request_timeout_secs: Option<u64>,
    connect_timeout_secs: Option<u64>,
    fuel_per_case: Option<u64>,
    memory_per_instance_mib: Option<u64>,
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
    run: RunOverrides,
    #[serde(default)]
    target: BTreeMap<String, TargetConfig>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct DefaultFile {
    run: RunConfig,
    target: BTreeMap<String, TargetConfig>,
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

    /// Load the built-in configuration and, if given, a project file.
    pub fn load(root: &Path, file: Option<&Path>) -> Result<Self, Error> {
        let defaults: DefaultFile = toml::from_str(DEFAULT_CONFIG)
            .map_err(|err| Error::new(ErrorKind::Setup, format!("built-in configuration is invalid: {err}")))?;
        let mut config = Config { root: root.to_path_buf(), run: defaults.run, targets: defaults.target };
        if let Some(file) = file {
            let text = std::fs::read_to_string(file)
                .map_err(|err| Error::new(ErrorKind::Setup, format!("failed to read {}: {err}", file.display())))?;
            let parsed: ConfigFile = toml::from_str(&text)
                .map_err(|err| Error::new(ErrorKind::Setup, format!("{}: {err}", file.display())))?;
            config.apply(parsed.run);
            config.targets.extend(parsed.target);
        }
        for (name, target) in &config.targets {
            match (&target.base_url, &target.launch) {
                (Some(_), None) | (None, Some(_)) => {}
                _ => {
                    return Err(Error::new(
                        ErrorKind::Setup,
                        format!("target {name}: give exactly one of base-url and launch"),
                    ));
                }
            }
        }
        Ok(config)
    }

    fn apply(&mut self, o: RunOverrides) {
        let r = &mut self.run;
        if let Some(v) = o.measurements_dir {
            r.measurements_dir = v;
        }
        if let Some(v) = o.snapshots_dir {
            r.snapshots_dir = v;
        }
        if let Some(v) = o.case_timeout_secs {
            r.case_timeout_secs = v;
        }
        if let Some(v) = o.request_timeout_secs {
            r.request_timeout_secs = v;
        }
        if let Some(v) = o.connect_timeout_secs {
            r.connect_timeout_secs = v;
        }
        if let Some(v) = o.fuel_per_case {
            r.fuel_per_case = v;
        }
        if let Some(v) = o.memory_per_instance_mib {
            r.memory_per_instance_mib = v;
        }
    }

    /// A target by name, or an error listing the known ones.
    pub fn target(&self, name: &str) -> Result<&TargetConfig, Error> {
        self.targets.get(name).ok_or_else(|| {
            let known: Vec<&str> = self.targets.keys().map(String::as_str).collect();
            Error::new(ErrorKind::Setup, format!("no target named {name:?}; known targets: {}", known.join(", ")))
        })
    }

    /// A path relative to the project root.
    pub fn path(&self, rel: &Path) -> PathBuf {
        if rel.is_absolute() { rel.to_path_buf() } else { self.root.join(rel) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_load_and_name_local() {
        let c = Config::load(Path::new("/tmp"), None).unwrap();
        let local = c.target("local").unwrap();
        assert_eq!(local.model, "SmolLM2-135M-Instruct-Q4_1");
        assert!(local.launch.is_some());
    }

    #[test]
    fn project_file_overrides_and_errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(CONFIG_FILE);
        std::fs::write(&file, "[run]\ncase-timeout-secs = 5\n[target.gpu]\nmodel = \"m\"\nbase-url = \"http://h:8000\"\n").unwrap();
        let c = Config::discover(dir.path()).unwrap();
        assert_eq!(c.run.case_timeout_secs, 5);
        assert_eq!(c.target("gpu").unwrap().base_url.as_deref(), Some("http://h:8000"));
        assert!(c.target("nope").unwrap_err().to_string().contains("local"));

        std::fs::write(&file, "[run]\ncase-timeout = 5\n").unwrap();
        let err = Config::discover(dir.path()).unwrap_err().to_string();
        assert!(err.contains("sparktest.toml") && err.contains("case-timeout"), "{err}");

        std::fs::write(&file, "[target.x]\nmodel = \"m\"\n").unwrap();
        let err = Config::discover(dir.path()).unwrap_err().to_string();
        assert!(err.contains("target x"), "{err}");
    }
}
