//! `cargo sparktest board`: every measurement file in a folder through a
//! reporter plugin (the built-in `sparktest-board` unless told otherwise)
//! into board files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::Config;
use crate::error::{Error, ErrorKind};
use crate::plugin::{self, PluginHost};
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
    /// Published references, TOML: figures read elsewhere, drawn apart and
    /// never scored.
    pub references: Option<PathBuf>,
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

/// A measurement file the board could not read whole: where it broke.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Damage {
    /// The file's name.
    pub file: String,
    /// The first line not read (1-based).
    pub line: usize,
    /// Why.
    pub message: String,
    /// Whether the file's whole lines before it were kept.
    pub kept: bool,
}

/// Measurement files as read: each readable one's path and text (its
/// whole lines), what was damaged, and the transcripts the records name.
pub type Measurements = (Vec<(PathBuf, String)>, Vec<Damage>, std::collections::BTreeSet<String>);

/// Every `*.jsonl` in `dir`, by name. A file cut by a crash or a full disk
/// keeps every record up to its last whole line; a file with no readable
/// manifest is left out; both are reported, never blanking the board. A
/// file of another major format version is refused, naming file and line.
pub fn read_measurements(dir: &Path) -> Result<Measurements, Error> {
    let files = measurement_files(dir)?;
    if files.is_empty() {
        return Err(setup(format!("no measurement files (*.jsonl) in {}", dir.display())));
    }
    let mut read = Vec::new();
    let mut damage = Vec::new();
    let mut transcripts = std::collections::BTreeSet::new();
    for f in files {
        let name = f.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let bytes = std::fs::read(&f).map_err(|e| setup(format!("failed to read {}: {e}", f.display())))?;
        let mut text = String::from_utf8_lossy(&bytes).into_owned();
        match sparktest_record::parse_partial(&text) {
            Ok(p) => {
                if let Some(d) = p.damage {
                    eprintln!(
                        "sparktest: warning: {name}: line {}: {}; the records before it are used",
                        d.line, d.message
                    );
                    damage.push(Damage { file: name, line: d.line, message: d.message, kept: true });
                }
                for line in &p.lines {
                    if let sparktest_record::Line::Case(c) = line {
                        transcripts.insert(c.transcript_sha256.clone());
                    }
                }
                // Only the whole lines go on: the reporter reads them strictly.
                text.truncate(p.whole_bytes);
                read.push((f, text));
            }
            Err(e) if e.message.contains("format version") => {
                return Err(setup(format!("{}: {e}", f.display())));
            }
            Err(e) => {
                eprintln!("sparktest: warning: {name}: line {}: {}; the file is left out", e.line, e.message);
                damage.push(Damage { file: name, line: e.line, message: e.message, kept: false });
            }
        }
    }
    if read.is_empty() {
        return Err(setup(format!("no readable measurement file in {}", dir.display())));
    }
    Ok((read, damage, transcripts))
}

/// The transcripts the records name that exist beside the measurement
/// files: address → file.
fn transcripts_named(dir: &Path, named: &std::collections::BTreeSet<String>) -> BTreeMap<String, PathBuf> {
    named
        .iter()
        .filter_map(|sha| {
            let path = crate::sinks::transcripts::TranscriptStore::path(dir, sha).filter(|p| p.is_file())?;
            Some((sha.clone(), path))
        })
        .collect()
}

/// Build the board. Returns the process exit code.
pub fn board(args: BoardArgs) -> Result<i32, Error> {
    let config = Config::discover(&args.cwd)?;
    let dir = args.measurements_dir.clone().unwrap_or_else(|| config.path(&config.run.measurements_dir));
    let (files, damage, named) = read_measurements(&dir)?;
    let reporter_config = args.config.as_deref().map(toml_as_json).transpose()?.unwrap_or_default();
    let mut inputs = BTreeMap::new();
    if !damage.is_empty() {
        inputs.insert("damage.json".to_string(), serde_json::to_vec(&damage).unwrap_or_default());
    }
    // The transcripts the records name, copied beside the board so that
    // each cell's records link to them.
    let transcripts = transcripts_named(&dir, &named);
    inputs.insert(
        "transcripts.json".to_string(),
        serde_json::to_vec(&transcripts.keys().collect::<Vec<_>>()).unwrap_or_default(),
    );
    if let Some(r) = &args.references {
        inputs.insert("references.json".to_string(), toml_as_json(r)?.into_bytes());
    }
    if let Some(j) = &args.judgements {
        inputs.insert("judgements.json".to_string(), toml_as_json(j)?.into_bytes());
    }
    let wasm = match &args.reporter {
        Some(path) => plugin::component_for(&config.root, &Source::Wasm { path: path.clone(), sha256: None }, &[])?,
        None => {
            // The built-in reporter is a crate of the workspace this binary
            // was built from, wherever the board is asked for.
            let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
            if !workspace.join("plugins/reporters/board/Cargo.toml").is_file() {
                return Err(setup(format!(
                    "the built-in board reporter is built from the cargo-sparktest workspace at {}, which is not \
                     on this machine; pass a prebuilt one with --reporter board.wasm",
                    workspace.display()
                )));
            }
            plugin::component_for(
                &workspace,
                &Source::Crate("sparktest-board".into()),
                &plugin::trusted_workspaces(&workspace),
            )?
        }
    };
    let host = PluginHost::new(
        Some(&config.path(Path::new("target/sparktest/wasmtime-cache"))),
        crate::runner::prepare::limits(&config),
    )?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::new(ErrorKind::Io, format!("failed to start the async runtime: {e}")))?;
    let texts: Vec<String> = files.iter().map(|(_, t)| t.clone()).collect();
    let artifacts = rt.block_on(host.render(&wasm, Arc::new(inputs), texts, &reporter_config))?;
    let out = args.out.clone().unwrap_or_else(|| config.path(Path::new("board")));
    std::fs::create_dir_all(&out)
        .map_err(|e| Error::new(ErrorKind::Io, format!("failed to create {}: {e}", out.display())))?;
    if !transcripts.is_empty() {
        let into = out.join("transcripts");
        std::fs::create_dir_all(&into)
            .map_err(|e| Error::new(ErrorKind::Io, format!("failed to create {}: {e}", into.display())))?;
        for (sha, from) in &transcripts {
            let to = into.join(format!("{sha}.json"));
            if !to.exists() {
                std::fs::copy(from, &to)
                    .map_err(|e| Error::new(ErrorKind::Io, format!("failed to copy {}: {e}", from.display())))?;
            }
        }
    }
    let mut written = Vec::new();
    for (path, content) in artifacts {
        let dest = out.join(&path);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| Error::new(ErrorKind::Io, format!("failed to create {}: {e}", parent.display())))?;
        }
        std::fs::write(&dest, content)
            .map_err(|e| Error::new(ErrorKind::Io, format!("failed to write {}: {e}", dest.display())))?;
        written.push(dest.display().to_string());
    }
    eprintln!(
        "sparktest: board from {} measurement files in {}: wrote {}",
        files.len(),
        dir.display(),
        written.join(", ")
    );
    Ok(sparktest_record::exit_code::OK)
}

/// The measurement files (`*.jsonl`) of a folder, sorted by name: what the
/// board and `diff` both read.
pub(crate) fn measurement_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| setup(format!("failed to read measurements folder {}: {e}", dir.display())))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    Ok(files)
}
