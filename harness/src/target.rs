//! Targets: connect to a running server, or launch one and stop it after.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::config::{Config, LaunchConfig};
use crate::error::{Error, ErrorKind};

/// The reference-target install script, shipped inside the binary so that
/// `builtin:reference-target` works from any project.
pub const REFERENCE_TARGET_SCRIPT: &str = include_str!("../../scripts/reference-target.sh");

fn target_err(message: String) -> Error {
    Error::new(ErrorKind::Target, message)
}

/// A server the harness started. Dropping it stops the server.
pub struct Launched {
    child: Child,
    /// Where it listens.
    pub base_url: String,
    /// The exact command that started it.
    pub command: Vec<String>,
    /// The server's own log.
    pub log: PathBuf,
    /// The server's process id.
    pub pid: u32,
}

impl Launched {
    /// Stop the server now (SIGKILL; it holds no state worth a clean exit).
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Launched {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Run the provisioning program and read its `key=value` lines.
pub fn provision(root: &Path, spec: &str, cache_dir: &Path) -> Result<BTreeMap<String, String>, Error> {
    let mut cmd = if spec == "builtin:reference-target" {
        std::fs::create_dir_all(cache_dir)
            .map_err(|e| target_err(format!("failed to create {}: {e}", cache_dir.display())))?;
        let script = cache_dir.join("reference-target.sh");
        std::fs::write(&script, REFERENCE_TARGET_SCRIPT)
            .map_err(|e| target_err(format!("failed to write {}: {e}", script.display())))?;
        let mut cmd = Command::new("bash");
        cmd.arg(script);
        cmd
    } else {
        Command::new(root.join(spec))
    };
    let out = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| target_err(format!("failed to run the provisioning program {spec}: {e}")))?;
    if !out.status.success() {
        return Err(target_err(format!("provisioning with {spec} failed ({})", out.status)));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect())
}

/// A free TCP port on 127.0.0.1.
pub fn free_port() -> Result<u16, Error> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| target_err(format!("failed to find a free port: {e}")))?;
    listener.local_addr().map(|a| a.port()).map_err(|e| target_err(format!("failed to find a free port: {e}")))
}

/// Replace every `{key}` in the command.
pub fn substitute(command: &[String], values: &BTreeMap<String, String>) -> Result<Vec<String>, Error> {
    command
        .iter()
        .map(|arg| {
            let mut out = arg.clone();
            for (k, v) in values {
                out = out.replace(&format!("{{{k}}}"), v);
            }
            if let (Some(a), Some(b)) = (out.find('{'), out.find('}'))
                && a < b {
                    return Err(Error::new(
                        ErrorKind::Setup,
                        format!("launch command argument {arg:?} names {} which nothing provides", &out[a..=b]),
                    ));
                }
            Ok(out)
        })
        .collect()
}

/// Provision, start the server, and wait for its health path.
pub async fn launch(config: &Config, name: &str, launch: &LaunchConfig, cache_dir: &Path) -> Result<Launched, Error> {
    let mut values = match &launch.provision {
        Some(spec) => provision(&config.root, spec, cache_dir)?,
        None => BTreeMap::new(),
    };
    let port = free_port()?;
    values.insert("port".into(), port.to_string());
    let command = substitute(&launch.command, &values)?;
    let Some((program, args)) = command.split_first() else {
        return Err(Error::new(ErrorKind::Setup, format!("target {name}: the launch command is empty")));
    };
    let logs = config.path(Path::new("target/sparktest/logs"));
    std::fs::create_dir_all(&logs).map_err(|e| target_err(format!("failed to create {}: {e}", logs.display())))?;
    let log = logs.join(format!("{name}-{port}.log"));
    let log_file = std::fs::File::create(&log).map_err(|e| target_err(format!("failed to create {}: {e}", log.display())))?;
    let err_file = log_file.try_clone().map_err(|e| target_err(format!("failed to open {}: {e}", log.display())))?;
    let child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(log_file)
        .stderr(err_file)
        .spawn()
        .map_err(|e| target_err(format!("failed to start target {name} ({program}): {e}")))?;
    let pid = child.id();
    let mut launched = Launched { child, base_url: format!("http://127.0.0.1:{port}"), command, log, pid };
    wait_healthy(&mut launched, name, &launch.health_path, Duration::from_secs(launch.startup_timeout_secs)).await?;
    Ok(launched)
}

fn log_tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}

async fn wait_healthy(launched: &mut Launched, name: &str, path: &str, timeout: Duration) -> Result<(), Error> {
    let http = crate::endpoint::http_builder()
        .timeout(Duration::from_secs(2))
        .build()
        .map_err(|e| target_err(format!("failed to build the HTTP client: {e}")))?;
    let url = format!("{}{path}", launched.base_url);
    let started = Instant::now();
    loop {
        if let Ok(Some(status)) = launched.child.try_wait() {
            return Err(target_err(format!(
                "target {name} exited during startup ({status}); last lines of {}:\n{}",
                launched.log.display(),
                log_tail(&launched.log)
            )));
        }
        if let Ok(resp) = http.get(&url).send().await
            && resp.status().is_success() {
                return Ok(());
            }
        if started.elapsed() > timeout {
            launched.stop();
            return Err(target_err(format!(
                "target {name} was not healthy at {url} within {}s; last lines of {}:\n{}",
                timeout.as_secs(),
                launched.log.display(),
                log_tail(&launched.log)
            )));
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substitutes_and_names_unknown_keys() {
        let values = BTreeMap::from([("port".to_string(), "8080".to_string())]);
        let cmd = substitute(&["--port".into(), "{port}".into()], &values).unwrap();
        assert_eq!(cmd, vec!["--port", "8080"]);
        let err = substitute(&["{server}".into()], &values).unwrap_err();
        assert!(err.message.contains("{server}"), "{err}");
    }
}
