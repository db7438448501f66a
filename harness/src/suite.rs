//! Suites: `suites/<name>/suite.toml`, its instruments and its pinned data.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};
use sparktest_record::{FilePin, SuiteInfo};

use crate::error::{Error, ErrorKind};

/// Where an instrument's component comes from.
///
/// A source build runs the crate's `build.rs` and proc macros as native
/// code: it is trusted code, so only crates of the cargo workspace that
/// holds the suite are built. Anything else loads only as a prebuilt
/// component pinned by sha256.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// A package of the cargo workspace holding the suite, built on demand
    /// from the workspace root.
    Crate(String),
    /// A prebuilt component (relative to the suite folder), with its sha256
    /// pin (required in a suite file).
    Wasm {
        /// Path of the `.wasm`.
        path: PathBuf,
        /// Expected sha256.
        sha256: Option<String>,
    },
}

/// One instrument entry of a suite.
#[derive(Debug, Clone)]
pub struct InstrumentEntry {
    /// Where its component comes from.
    pub source: Source,
    /// Its `config` table as JSON text (`{}` when absent).
    pub config: String,
    /// Its cases run alone: no other case of the run is in flight meanwhile
    /// (speed figures need an otherwise idle server).
    pub exclusive: bool,
    /// Paired arms, arm name → target name: the instrument runs once per
    /// arm, its cases named `<arm>::<case>`, and its config gets `"arm"`.
    pub arms: BTreeMap<String, String>,
}

/// A loaded, digest-checked suite.
#[derive(Debug, Clone)]
pub struct Suite {
    /// Name.
    pub name: String,
    /// Version.
    pub version: String,
    /// One line for people.
    pub description: String,
    /// The suite folder.
    pub dir: PathBuf,
    /// Instruments in order.
    pub instruments: Vec<InstrumentEntry>,
    /// Pinned files with their bytes, by relative path.
    pub files: BTreeMap<String, Vec<u8>>,
    /// A gate suite: the run's summary says passed only when every case
    /// passed, and names the others.
    pub gate: bool,
    /// Digests for the manifest.
    pub info: SuiteInfo,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteFile {
    suite: SuiteHeader,
    #[serde(default)]
    instrument: Vec<InstrumentFile>,
    #[serde(default)]
    files: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteHeader {
    name: String,
    version: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    gate: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InstrumentFile {
    #[serde(rename = "crate")]
    krate: Option<String>,
    /// Refused: see [`Source`].
    path: Option<PathBuf>,
    wasm: Option<PathBuf>,
    sha256: Option<String>,
    #[serde(default)]
    config: Option<toml::Table>,
    #[serde(default)]
    exclusive: bool,
    #[serde(default)]
    arms: BTreeMap<String, String>,
}

/// Hex sha256 of bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Resolve `--suite`: a name under `<root>/suites/`, or a path to a folder or
/// a `suite.toml`.
pub fn locate(root: &Path, arg: &str) -> PathBuf {
    let as_path = Path::new(arg);
    if as_path.extension().is_some_and(|e| e == "toml") {
        return as_path.to_path_buf();
    }
    if arg.contains('/') || as_path.is_dir() && as_path.join("suite.toml").is_file() {
        return as_path.join("suite.toml");
    }
    root.join("suites").join(arg).join("suite.toml")
}

fn setup(message: String) -> Error {
    Error::new(ErrorKind::Setup, message)
}

/// A relative path inside the suite folder: no absolute paths, no `..`.
fn checked_rel(file: &Path, rel: &str) -> Result<PathBuf, Error> {
    let p = Path::new(rel);
    if p.components().any(|c| !matches!(c, Component::Normal(_))) || rel.is_empty() {
        return Err(setup(format!("{}: file {rel:?} must be a relative path inside the suite folder", file.display())));
    }
    Ok(p.to_path_buf())
}

/// Load a suite and check every pinned file against its sha256.
pub fn load(file: &Path) -> Result<Suite, Error> {
    let text = std::fs::read(file).map_err(|err| setup(format!("failed to read suite {}: {err}", file.display())))?;
    let parsed: SuiteFile =
        toml::from_str(&String::from_utf8_lossy(&text)).map_err(|err| setup(format!("{}: {err}", file.display())))?;
    let dir = file.parent().unwrap_or(Path::new(".")).to_path_buf();

    let mut files = BTreeMap::new();
    let mut pins = Vec::new();
    // The folder as resolved: a pinned file (or a folder on its way) that
    // is a symlink out of it is refused, whatever its path's text says.
    let real_dir = std::fs::canonicalize(if dir.as_os_str().is_empty() { Path::new(".") } else { &dir })
        .map_err(|err| setup(format!("{}: the suite folder cannot be resolved: {err}", file.display())))?;
    for (rel, expected) in &parsed.files {
        let path = dir.join(checked_rel(file, rel)?);
        let real = std::fs::canonicalize(&path)
            .map_err(|err| setup(format!("{}: pinned file {rel} cannot be read: {err}", file.display())))?;
        if !real.starts_with(&real_dir) {
            return Err(setup(format!(
                "{}: pinned file {rel} resolves to {}, outside the suite folder {} (a symlink out of the suite is refused)",
                file.display(),
                real.display(),
                real_dir.display()
            )));
        }
        let bytes = std::fs::read(&path)
            .map_err(|err| setup(format!("{}: pinned file {rel} cannot be read: {err}", file.display())))?;
        let actual = sha256_hex(&bytes);
        if !actual.eq_ignore_ascii_case(expected) {
            return Err(setup(format!(
                "{}: suite data {rel} does not match its pin (expected sha256 {expected}, found {actual}); \
                 refusing to run a changed suite",
                file.display()
            )));
        }
        pins.push(FilePin { path: rel.clone(), sha256: actual });
        files.insert(rel.clone(), bytes);
    }

    let mut instruments = Vec::new();
    for (i, entry) in parsed.instrument.into_iter().enumerate() {
        let where_ = format!("{}: instrument #{}", file.display(), i + 1);
        let source = match (entry.krate, entry.path, entry.wasm) {
            (_, Some(path), _) => {
                return Err(setup(format!(
                    "{where_}: path = {:?}: a crate outside this workspace is not built (building runs its build.rs \
                     and proc macros as native code); build it yourself and give wasm = \"….wasm\" with its \
                     sha256, or add the crate to this workspace and give crate = \"…\"",
                    path.display()
                )));
            }
            (Some(name), None, None) => Source::Crate(name),
            (None, None, Some(path)) => {
                let Some(sha256) = entry.sha256 else {
                    return Err(setup(format!(
                        "{where_}: wasm = {:?} needs its sha256 = \"…\" pin (`sha256sum` gives it): a prebuilt \
                         component is untrusted code",
                        path.display()
                    )));
                };
                Source::Wasm { path: dir.join(path), sha256: Some(sha256) }
            }
            _ => {
                return Err(setup(format!("{where_}: give exactly one of crate and wasm")));
            }
        };
        let table = entry.config.unwrap_or_default();
        if !entry.arms.is_empty() && table.contains_key("arm") {
            return Err(setup(format!("{where_}: config key \"arm\" is set by the host for paired arms")));
        }
        for arm in entry.arms.keys() {
            crate::plugin::check_segments("arm", arm)
                .and_then(|()| if arm.contains("::") { Err(format!("arm {arm:?} holds \"::\"")) } else { Ok(()) })
                .map_err(|e| setup(format!("{where_}: {e}")))?;
        }
        let config = serde_json::to_string(&table)
            .map_err(|err| setup(format!("{where_}: config cannot be expressed as JSON: {err}")))?;
        instruments.push(InstrumentEntry { source, config, exclusive: entry.exclusive, arms: entry.arms });
    }

    // The suite digest covers its manifest and every pinned file.
    let mut hasher = Sha256::new();
    hasher.update(&text);
    for pin in &pins {
        hasher.update(pin.path.as_bytes());
        hasher.update([0]);
        hasher.update(pin.sha256.as_bytes());
        hasher.update([b'\n']);
    }
    let sha256 = hasher.finalize().iter().map(|b| format!("{b:02x}")).collect();
    let info =
        SuiteInfo { name: parsed.suite.name.clone(), version: parsed.suite.version.clone(), sha256, files: pins };
    Ok(Suite {
        name: parsed.suite.name,
        version: parsed.suite.version,
        description: parsed.suite.description,
        dir,
        instruments,
        files,
        gate: parsed.suite.gate,
        info,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_suite(dir: &Path, data: &str, pin: &str) -> PathBuf {
        std::fs::create_dir_all(dir.join("d")).unwrap();
        std::fs::write(dir.join("d/x.json"), data).unwrap();
        let file = dir.join("suite.toml");
        std::fs::write(
            &file,
            format!(
                "[suite]\nname = \"t\"\nversion = \"1\"\n\n[[instrument]]\ncrate = \"c\"\n[instrument.config]\nn = 3\n\n[files]\n\"d/x.json\" = \"{pin}\"\n"
            ),
        )
        .unwrap();
        file
    }

    #[test]
    fn pinned_suite_loads_and_changed_data_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let pin = sha256_hex(b"[1]");
        let file = write_suite(dir.path(), "[1]", &pin);
        let suite = load(&file).unwrap();
        assert_eq!(suite.instruments[0].source, Source::Crate("c".into()));
        assert_eq!(suite.instruments[0].config, "{\"n\":3}");
        assert_eq!(suite.files["d/x.json"], b"[1]");

        std::fs::write(dir.path().join("d/x.json"), "[2]").unwrap();
        let err = load(&file).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Setup);
        assert!(err.message.contains("d/x.json") && err.message.contains("does not match"), "{err}");
    }

    #[test]
    fn escaping_paths_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("suite.toml");
        std::fs::write(&file, "[suite]\nname = \"t\"\nversion = \"1\"\n[files]\n\"../etc/passwd\" = \"00\"\n").unwrap();
        assert!(load(&file).unwrap_err().message.contains("relative path inside"));
        // A symlink whose text stays inside but which points outside.
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.json"), "[1]").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.json"), dir.path().join("data.json")).unwrap();
        let pin = sha256_hex(b"[1]");
        std::fs::write(&file, format!("[suite]\nname = \"t\"\nversion = \"1\"\n[files]\n\"data.json\" = \"{pin}\"\n"))
            .unwrap();
        let err = load(&file).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Setup);
        assert!(err.message.contains("data.json") && err.message.contains("outside the suite folder"), "{err}");
        // A symlink that stays inside is fine.
        std::fs::write(dir.path().join("real.json"), "[1]").unwrap();
        std::fs::remove_file(dir.path().join("data.json")).unwrap();
        std::os::unix::fs::symlink("real.json", dir.path().join("data.json")).unwrap();
        assert!(load(&file).is_ok());
    }

    #[test]
    fn instrument_needs_exactly_one_source() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("suite.toml");
        std::fs::write(
            &file,
            "[suite]\nname = \"t\"\nversion = \"1\"\n[[instrument]]\ncrate = \"a\"\nwasm = \"b.wasm\"\n",
        )
        .unwrap();
        assert!(load(&file).unwrap_err().message.contains("instrument #1"));
    }

    #[test]
    fn untrusted_sources_are_refused_with_the_way_out() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("suite.toml");
        let head = "[suite]\nname = \"t\"\nversion = \"1\"\n[[instrument]]\n";
        std::fs::write(&file, format!("{head}path = \"../elsewhere\"\n")).unwrap();
        let err = load(&file).unwrap_err().message;
        assert!(err.contains("native code") && err.contains("sha256"), "{err}");
        std::fs::write(&file, format!("{head}wasm = \"x.wasm\"\n")).unwrap();
        let err = load(&file).unwrap_err().message;
        assert!(err.contains("needs its sha256"), "{err}");
        std::fs::write(&file, format!("{head}crate = \"c\"\narms = {{ \"../x\" = \"local\" }}\n")).unwrap();
        let err = load(&file).unwrap_err().message;
        assert!(err.contains("arm \"../x\""), "{err}");
    }
}
