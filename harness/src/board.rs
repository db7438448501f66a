//! `cargo sparktest board`: every measurement file in a folder through a
//! reporter plugin (the built-in `sparktest-board` unless told otherwise)
//! into board files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::config::Config;
use crate::error::{Error, ErrorKind};
use crate::plugin::{self, Limits, PluginHost};
use crate::suite::Source;

/// Everything `cargo sparktest board` needs.
#[derive(Debug)]
pub struct BoardArgs {
    /// Folder of measurement files (default: the project's).
    pub measurements_dir: Option<PathBuf>,
    /// Where the board files go (default: `board/`).
    pub out: Option<PathBuf>,
    /// A reporter component (`.wasm`) to use instead of the built-in one.
    pub reporter: Option<PathBuf>,
    /// The reporter's config, TOML (row rules, title).
    pub config: Option<PathBuf>,
    /// Judged rows, TOML.
    pub judgements: Option<PathBuf>,
    /// Where the command was started.
    pub cwd: PathBuf,
}

fn setup(message: String) -> Error {
    Error::new(ErrorKind::Setup, message)
}

/// A TOML file as JSON text, its errors naming the file.
fn toml_as_json(path: &Path) -> Result<String, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| setup(format!("failed to read {}: {e}", path.display())))?;
    let value: toml::Value = toml::from_str(&text).map_err(|e| setup(format!("{}: {e}", path.display())))?;
    serde_json::to_string(&value).map_err(|e| setup(format!("{}: {e}", path.display())))
}

/// Every `*.jsonl` in `dir`, by name, each checked to be a measurement file
/// this version reads (older 1.x files load; another major version is
/// refused, naming the file and line).
pub fn read_measurements(dir: &Path) -> Result<Vec<(PathBuf, String)>, Error> {
    let entries = std::fs::read_dir(dir).map_err(|e| setup(format!("failed to read measurements folder {}: {e}", dir.display())))?;
    let mut files: Vec<PathBuf> =
        entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "jsonl")).collect();
    files.sort();
    if files.is_empty() {
        return Err(setup(format!("no measurement files (*.jsonl) in {}", dir.display())));
    }
    files
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(&f).map_err(|e| setup(format!("failed to read {}: {e}", f.display())))?;
            sparktest_record::parse(&text).map_err(|e| setup(format!("{}: {e}", f.display())))?;
            Ok((f, text))
        })
        .collect()
}

/// Build the board. Returns the process exit code.
pub fn board(args: BoardArgs) -> Result<i32, Error> {
    let config = Config::discover(&args.cwd)?;
    let dir = args.measurements_dir.clone().unwrap_or_else(|| config.path(&config.run.measurements_dir));
    let files = read_measurements(&dir)?;
    let reporter_config = args.config.as_deref().map(toml_as_json).transpose()?.unwrap_or_default();
    let mut inputs = BTreeMap::new();
    if let Some(j) = &args.judgements {
        inputs.insert("judgements.json".to_string(), toml_as_json(j)?.into_bytes());
    }
    let wasm = match &args.reporter {
        Some(path) => plugin::component_for(&config.root, &Source::Wasm { path: path.clone(), sha256: None })?,
        None => {
            // The built-in reporter is a crate of the workspace this binary
            // was built from, wherever the board is asked for.
            let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
            if !workspace.join("plugins/board/Cargo.toml").is_file() {
                return Err(setup(format!(
                    "the built-in board reporter is built from the cargo-sparktest workspace at {}, which is not \
                     on this machine; pass a prebuilt one with --reporter board.wasm",
                    workspace.display()
                )));
            }
            plugin::component_for(&workspace, &Source::Crate("sparktest-board".into()))?
        }
    };
    let limits = Limits {
        fuel: config.run.fuel_per_case,
        memory_bytes: usize::try_from(config.run.memory_per_instance_mib.saturating_mul(1024 * 1024)).unwrap_or(usize::MAX),
        case_timeout: Duration::from_secs(config.run.case_timeout_secs),
    };
    let host = PluginHost::new(Some(&config.path(Path::new("target/sparktest/wasmtime-cache"))), limits)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::new(ErrorKind::Io, format!("failed to start the async runtime: {e}")))?;
    let texts: Vec<String> = files.iter().map(|(_, t)| t.clone()).collect();
    let artifacts = rt.block_on(host.render(&wasm, Arc::new(inputs), texts, &reporter_config))?;
    let out = args.out.clone().unwrap_or_else(|| config.path(Path::new("board")));
    std::fs::create_dir_all(&out).map_err(|e| Error::new(ErrorKind::Io, format!("failed to create {}: {e}", out.display())))?;
    let mut written = Vec::new();
    for (path, content) in artifacts {
        let dest = out.join(&path);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::new(ErrorKind::Io, format!("failed to create {}: {e}", parent.display())))?;
        }
        std::fs::write(&dest, content).map_err(|e| Error::new(ErrorKind::Io, format!("failed to write {}: {e}", dest.display())))?;
        written.push(dest.display().to_string());
    }
    eprintln!("sparktest: board from {} measurement files in {}: wrote {}", files.len(), dir.display(), written.join(", "));
    Ok(sparktest_record::exit_code::OK)
}
