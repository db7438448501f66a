//! Building instrument crates for `wasm32-wasip2` on demand, the way
//! cargo-nextest builds test binaries: run cargo, read its JSON messages,
//! take the artifact it names.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::error::{Error, ErrorKind};
use crate::files::sha256_hex;
use crate::suite::Source;

/// The guest target triple.
pub const TARGET: &str = "wasm32-wasip2";

fn plugin_err(message: String) -> Error {
    Error::new(ErrorKind::Plugin, message)
}

/// The cargo workspace root holding `dir`: the nearest folder upward whose
/// `Cargo.toml` has a `[workspace]` table.
fn workspace_root(dir: &Path) -> Option<PathBuf> {
    let dir = dir.canonicalize().ok()?;
    dir.ancestors()
        .find(|d| {
            std::fs::read_to_string(d.join("Cargo.toml"))
                .ok()
                .and_then(|t| t.parse::<toml::Table>().ok())
                .is_some_and(|t| t.contains_key("workspace"))
        })
        .map(Path::to_path_buf)
}

/// The source tree this binary was built from, where it is on this
/// machine (a checkout of cargo-sparktest): its instrument crates are
/// built from source. An installed binary has none.
pub fn own_workspace() -> Option<PathBuf> {
    let own = workspace_root(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))?;
    own.join("plugins/lib/sdk/Cargo.toml").is_file().then_some(own)
}

/// The workspaces whose crates may be built: the project's own and
/// cargo-sparktest's (the one this binary was built from).
pub fn trusted_workspaces(project_root: &Path) -> Vec<PathBuf> {
    [workspace_root(project_root), own_workspace()].into_iter().flatten().collect()
}

/// The component file for an instrument source, building it when it is a
/// crate, with the sha256 it must have where it is pinned. A `crate` of
/// cargo-sparktest's own source tree is built from source there; else a
/// crate this binary carries built in (the `builtin` module) is that
/// component, pinned; else it is a package of the cargo workspace that
/// holds `suite_dir`, which must be one of the `trusted` workspaces, built
/// from its root: cargo then reads only that workspace's own
/// configuration, never a `.cargo/config.toml` (or a whole workspace)
/// planted in a suite folder.
pub fn component_for(
    suite_dir: &Path,
    source: &Source,
    trusted: &[PathBuf],
) -> Result<(PathBuf, Option<String>), Error> {
    if let Source::Crate(name) = source {
        let root = workspace_root(suite_dir);
        let from_source = root.is_some() && root == own_workspace();
        if !from_source && let Some(c) = crate::carried::component(name) {
            let (path, pin) = crate::carried::component_file(c)?;
            return Ok((path, Some(pin)));
        }
    }
    let pin = match source {
        Source::Wasm { sha256, .. } => sha256.clone(),
        Source::Crate(_) => None,
    };
    Ok((built(suite_dir, source, trusted)?, pin))
}

/// The component of a source as a file: read (and checked against its pin)
/// or built.
fn built(suite_dir: &Path, source: &Source, trusted: &[PathBuf]) -> Result<PathBuf, Error> {
    match source {
        Source::Wasm { path, sha256 } => {
            let bytes = std::fs::read(path)
                .map_err(|err| plugin_err(format!("failed to read component {}: {err}", path.display())))?;
            if let Some(expected) = sha256 {
                let actual = sha256_hex(&bytes);
                if !actual.eq_ignore_ascii_case(expected) {
                    return Err(Error::new(
                        ErrorKind::Setup,
                        format!(
                            "component {} does not match its pin (expected sha256 {expected}, found {actual})",
                            path.display()
                        ),
                    ));
                }
            }
            Ok(path.clone())
        }
        Source::Crate(name) => {
            let root = workspace_root(suite_dir).ok_or_else(|| {
                plugin_err(format!(
                    "instrument crate {name}: the suite folder {} is not inside a cargo workspace; a crate is built \
                     from the workspace that holds its suite (or give a prebuilt wasm with its sha256)",
                    suite_dir.display()
                ))
            })?;
            if !trusted.contains(&root) {
                return Err(plugin_err(format!(
                    "instrument crate {name}: the suite's workspace {} is neither this project's nor cargo-sparktest's; \
                     building it would run its build scripts as native code. Give a prebuilt wasm with its sha256",
                    root.display()
                )));
            }
            let mut cmd = cargo();
            cmd.current_dir(&root).args(["build", "--package", name, "--profile", "plugin"]);
            reproducible(&mut cmd, &root);
            run_build(cmd, name)
        }
    }
}

/// Make sure the guest target is installed: a fresh machine has only the
/// host target. With rustup present it is added (once); without, the build
/// error below says what to do.
fn ensure_target() {
    static CHECKED: std::sync::Once = std::sync::Once::new();
    CHECKED.call_once(install_target_if_missing);
}

fn install_target_if_missing() {
    let sysroot = Command::new(std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into()))
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    let installed = sysroot.is_some_and(|root| root.join("lib/rustlib").join(TARGET).is_dir());
    if !installed {
        eprintln!("sparktest: installing the {TARGET} target with rustup (once per toolchain)");
        let _ = Command::new("rustup").args(["target", "add", TARGET]).status();
    }
}

fn cargo() -> Command {
    ensure_target();
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.env_remove("CARGO_TARGET_DIR_FOR_HOST");
    cmd
}

/// Build the same bytes from the same source on any machine: the paths a
/// component would otherwise carry (its source's, in panic messages; the
/// registry's) are written as `/sparktest` and `/cargo`. Every flag of the
/// build is set here, so a user's `RUSTFLAGS` does not reach it: the
/// built-in components are checked against a rebuild made this way.
fn reproducible(cmd: &mut Command, root: &Path) {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    let mut flags = vec![format!("--remap-path-prefix={}=/sparktest", root.display())];
    if let Some(home) = cargo_home {
        flags.push(format!("--remap-path-prefix={}=/cargo", home.display()));
    }
    cmd.env("CARGO_ENCODED_RUSTFLAGS", flags.join("\u{1f}")).env_remove("RUSTFLAGS");
}

fn run_build(mut cmd: Command, what: &str) -> Result<PathBuf, Error> {
    cmd.args(["--target", TARGET, "--message-format", "json-render-diagnostics", "--quiet"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let out =
        cmd.output().map_err(|err| plugin_err(format!("failed to run cargo to build instrument {what}: {err}")))?;
    if !out.status.success() {
        return Err(plugin_err(format!(
            "failed to build instrument {what} for {TARGET} (cargo exited with {}; is the target installed? \
             `rustup target add {TARGET}`)",
            out.status
        )));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut found = None;
    for line in stdout.lines() {
        let Ok(msg) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if msg.get("reason").and_then(Value::as_str) != Some("compiler-artifact") {
            continue;
        }
        let is_cdylib = msg
            .pointer("/target/crate_types")
            .and_then(Value::as_array)
            .is_some_and(|kinds| kinds.iter().any(|k| k == "cdylib"));
        if !is_cdylib {
            continue;
        }
        if let Some(files) = msg.get("filenames").and_then(Value::as_array) {
            found = files.iter().filter_map(Value::as_str).find(|f| f.ends_with(".wasm")).map(PathBuf::from);
        }
    }
    found.ok_or_else(|| plugin_err(format!("building instrument {what} produced no .wasm (is its crate-type cdylib?)")))
}
