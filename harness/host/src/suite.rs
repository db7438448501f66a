//! Suites: `suites/<name>/suite.toml`, its instruments and its pinned data.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};
use sparktest_record::{Better, FigureKind, FilePin, RowDeclaration, Standing, SuiteInfo};

use crate::error::Error;
use crate::files::sha256_hex;

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
    /// A prebuilt component, with its sha256 pin (required in a suite
    /// file). A suite names it by a relative path that resolves inside its
    /// folder (symlinks followed), as its data files do.
    Wasm {
        /// Path of the `.wasm` (from a suite file: as resolved).
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
    /// The board rows it declares (`[[row]]`), copied into each run's
    /// manifest.
    pub rows: Vec<RowDeclaration>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteFile {
    suite: SuiteHeader,
    #[serde(default)]
    instrument: Vec<InstrumentFile>,
    #[serde(default)]
    files: BTreeMap<String, String>,
    #[serde(default)]
    row: Vec<RowFile>,
}

/// A `[[row]]` table: a board row the suite declares
/// ([`sparktest_rows`]). Read strictly, unlike the measurement file's
/// copy: a misspelt field is the author's to hear about.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RowFile {
    title: String,
    instrument: String,
    #[serde(default)]
    methodology: String,
    figure: FigureKind,
    metric: Option<String>,
    #[serde(default)]
    unit: String,
    #[serde(default)]
    better: Better,
    #[serde(default)]
    standing: Standing,
    #[serde(default)]
    tie_margin: f64,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    groups: Vec<String>,
}

impl RowFile {
    fn declaration(self, declared_by: String) -> RowDeclaration {
        RowDeclaration {
            title: self.title,
            instrument: self.instrument,
            methodology: self.methodology,
            figure: self.figure,
            metric: self.metric,
            unit: self.unit,
            better: self.better,
            standing: self.standing,
            tie_margin: self.tie_margin,
            tags: self.tags,
            groups: self.groups,
            declared_by,
        }
    }
}

/// The suite's `[[row]]` tables, each checked field by field, titles
/// unique: refused naming the file, the row and the field.
fn declared_rows(file: &Path, header: &SuiteHeader, rows: Vec<RowFile>) -> Result<Vec<RowDeclaration>, Error> {
    let mut out: Vec<RowDeclaration> = Vec::new();
    for (i, r) in rows.into_iter().enumerate() {
        let d = r.declaration(format!("{}@{}", header.name, header.version));
        let at = format!("{}: row #{} ({:?})", file.display(), i + 1, d.title);
        sparktest_rows::check(&d).map_err(|e| Error::setup(format!("{at}: {e}")))?;
        if let Some(first) = out.iter().position(|o| o.title == d.title) {
            return Err(Error::setup(format!(
                "{at}: title: row #{} has this title already; a title names one row",
                first + 1
            )));
        }
        out.push(d);
    }
    Ok(out)
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

/// The built-in suites behind the board's rows, in the rows' order: what
/// a campaign runs after its gate when its file names no suites. Read
/// from the suites' own files: a suite that is no gate goes where the
/// first built-in row ([`sparktest_rows::coded::ROWS`]) its instruments
/// feed goes, then the suites that declare rows of their own (`[[row]]`);
/// suites at one place go by name, and a suite that feeds no row is not on
/// the board.
pub fn board_suites() -> Vec<&'static str> {
    let rows = sparktest_rows::coded::ROWS;
    let mut placed: Vec<(usize, &'static str)> = crate::carried::SUITES
        .iter()
        .filter_map(|b| {
            let c = contents_of(b).filter(|c| !c.gate)?;
            let first = rows.iter().position(|r| c.instruments.iter().any(|i| *i == r.instrument));
            Some((first.or(c.declares_rows.then_some(rows.len()))?, b.name))
        })
        .collect();
    placed.sort();
    placed.into_iter().map(|(_, name)| name).collect()
}

/// What a built-in suite's file says it carries.
struct Contents {
    gate: bool,
    /// Its instruments' names, from their crates' (`sparktest-<name>`).
    instruments: Vec<String>,
    declares_rows: bool,
}

fn contents_of(b: &crate::carried::Suite) -> Option<Contents> {
    let file: SuiteFile = toml::from_str(std::str::from_utf8(b.file("suite.toml")?).ok()?).ok()?;
    Some(Contents {
        gate: file.suite.gate,
        instruments: file
            .instrument
            .iter()
            .filter_map(|i| Some(i.krate.as_deref()?.strip_prefix("sparktest-")?.to_string()))
            .collect(),
        declares_rows: !file.row.is_empty(),
    })
}

/// Resolve `--suite`: a name under `<root>/suites/`, else a built-in suite
/// of that name (written once into the user's cache,
/// [`crate::carried::suite_dir`]), or a path to a folder or a
/// `suite.toml`. A project's suite shadows a built-in one of its name,
/// said in one line where the two differ. A name with no suite is refused
/// listing every known suite, where each comes from, and the nearest.
pub fn locate(root: &Path, arg: &str) -> Result<PathBuf, Error> {
    let as_path = Path::new(arg);
    if as_path.extension().is_some_and(|e| e == "toml") {
        return Ok(as_path.to_path_buf());
    }
    if arg.contains('/') || as_path.is_dir() && as_path.join("suite.toml").is_file() {
        return Ok(as_path.join("suite.toml"));
    }
    let file = root.join("suites").join(arg).join("suite.toml");
    let builtin = crate::carried::suite(arg);
    if file.is_file() {
        if let Some(b) = builtin.filter(|b| !crate::carried::same_as(&root.join("suites").join(arg), b)) {
            note_once(&format!(
                "sparktest: note: {} (this project's) shadows the built-in suite {}",
                file.display(),
                b.name
            ));
        }
        return Ok(file);
    }
    if let Some(b) = builtin {
        return Ok(crate::carried::suite_dir(b)?.join("suite.toml"));
    }
    let known = known(root);
    let names: Vec<String> = known.iter().map(|k| k.name.clone()).collect();
    let mut message =
        format!("no suite named {arg:?} ({} does not exist, and no suite of that name is built in)", file.display());
    if let Some(near) = nearest(arg, &names) {
        message.push_str(&format!("; did you mean {near}?"));
    }
    let sep = if message.ends_with('?') { " " } else { "; " };
    if known.is_empty() {
        message.push_str(&format!("{sep}{} holds no suite (<name>/suite.toml)", root.join("suites").display()));
    } else {
        let listed: Vec<String> = known.iter().map(|k| format!("{} ({})", k.name, k.origin)).collect();
        message.push_str(&format!("{sep}known suites: {}", listed.join(", ")));
    }
    Err(Error::setup(message))
}

/// Print a line once per process (a campaign locates its suites again).
fn note_once(line: &str) {
    static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(|p| p.into_inner());
    if !said.iter().any(|s| s == line) {
        crate::warn_line!("{line}");
        said.push(line.to_string());
    }
}

/// A suite `--suite NAME` finds, and where it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Known {
    /// Its name.
    pub name: String,
    /// `built in`, `this project's`, or `this project's, shadowing the built-in one`.
    pub origin: String,
    /// Its folder (a built-in one's is not written until it is used).
    pub dir: Option<PathBuf>,
}

/// Every suite a name finds: the project's under `<root>/suites/`
/// (folders holding a `suite.toml`) and the built-in ones, by name.
pub fn known(root: &Path) -> Vec<Known> {
    let mut out: Vec<Known> = std::fs::read_dir(root.join("suites"))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().join("suite.toml").is_file())
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            let origin = match crate::carried::suite(&name) {
                Some(b) if crate::carried::same_as(&e.path(), b) => "built in, and this project's copy of it",
                Some(_) => "this project's, shadowing the built-in one",
                None => "this project's",
            };
            Some(Known { name, origin: origin.into(), dir: Some(e.path()) })
        })
        .collect();
    for b in crate::carried::SUITES {
        if !out.iter().any(|k| k.name == b.name) {
            out.push(Known { name: b.name.to_string(), origin: "built in".into(), dir: None });
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// The known name nearest a mistyped one: fewest edits (at most a third of
/// its length, and at least 2), or one it begins.
fn nearest<'a>(arg: &str, known: &'a [String]) -> Option<&'a str> {
    let limit = (arg.chars().count() / 3).max(2);
    let best = known.iter().map(|k| (edits(arg, k), k)).min_by_key(|(d, _)| *d);
    match best {
        Some((d, k)) if d <= limit => Some(k),
        _ if arg.chars().count() >= 3 => known.iter().find(|k| k.starts_with(arg)).map(String::as_str),
        _ => None,
    }
}

/// Levenshtein distance, by characters.
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1).min(row[j] + 1).min(diagonal + usize::from(ca != *cb));
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// A relative path inside the suite folder: no absolute paths, no `..`.
fn checked_rel(file: &Path, rel: &str) -> Result<PathBuf, Error> {
    let p = Path::new(rel);
    if !is_plain_relative(p) {
        return Err(Error::setup(format!(
            "{}: file {rel:?} must be a relative path inside the suite folder",
            file.display()
        )));
    }
    Ok(p.to_path_buf())
}

/// Whether a path's text stays below its folder: not empty, not absolute,
/// no `..` (nor `.`).
fn is_plain_relative(p: &Path) -> bool {
    !p.as_os_str().is_empty() && p.components().all(|c| matches!(c, Component::Normal(_)))
}

/// Where `rel` (already checked by its text) resolves, symlinks followed:
/// inside `real_dir`, or the suite's error naming what it is (`what`) and
/// where it went.
fn resolved_inside(file: &Path, real_dir: &Path, path: &Path, what: &str) -> Result<PathBuf, Error> {
    let real = std::fs::canonicalize(path)
        .map_err(|err| Error::setup(format!("{}: {what} cannot be read: {err}", file.display())))?;
    if !real.starts_with(real_dir) {
        return Err(Error::setup(format!(
            "{}: {what} resolves to {}, outside the suite folder {} (a symlink out of the suite is refused)",
            file.display(),
            real.display(),
            real_dir.display()
        )));
    }
    Ok(real)
}

/// Load a suite and check every pinned file against its sha256.
pub fn load(file: &Path) -> Result<Suite, Error> {
    let text =
        std::fs::read(file).map_err(|err| Error::setup(format!("failed to read suite {}: {err}", file.display())))?;
    load_bytes(file, &text)
}

/// [`load`] on the bytes the suite file holds, or would hold: `pin`
/// checks its edit with it before writing, so that a pin it writes is one
/// a run accepts.
pub(crate) fn load_bytes(file: &Path, text: &[u8]) -> Result<Suite, Error> {
    let parsed: SuiteFile = toml::from_str(&String::from_utf8_lossy(text))
        .map_err(|err| Error::setup(format!("{}: {err}", file.display())))?;
    let dir = file.parent().unwrap_or(Path::new(".")).to_path_buf();
    let rows = declared_rows(file, &parsed.suite, parsed.row)?;

    let mut files = BTreeMap::new();
    let mut pins = Vec::new();
    // The folder as resolved: a pinned file (or a folder on its way) that
    // is a symlink out of it is refused, whatever its path's text says.
    let real_dir = std::fs::canonicalize(if dir.as_os_str().is_empty() { Path::new(".") } else { &dir })
        .map_err(|err| Error::setup(format!("{}: the suite folder cannot be resolved: {err}", file.display())))?;
    for (rel, expected) in &parsed.files {
        let path = dir.join(checked_rel(file, rel)?);
        resolved_inside(file, &real_dir, &path, &format!("pinned file {rel}"))?;
        let bytes = std::fs::read(&path)
            .map_err(|err| Error::setup(format!("{}: pinned file {rel} cannot be read: {err}", file.display())))?;
        let actual = sha256_hex(&bytes);
        if !actual.eq_ignore_ascii_case(expected) {
            return Err(Error::setup(format!(
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
                return Err(Error::setup(format!(
                    "{where_}: path = {:?}: a crate outside this workspace is not built (building runs its build.rs \
                     and proc macros as native code); build it yourself and give wasm = \"….wasm\" with its \
                     sha256, or add the crate to this workspace and give crate = \"…\"",
                    path.display()
                )));
            }
            (Some(name), None, None) => Source::Crate(name),
            (None, None, Some(path)) => {
                let Some(sha256) = entry.sha256 else {
                    return Err(Error::setup(format!(
                        "{where_}: wasm = {:?} needs its sha256 = \"…\" pin (`sha256sum` gives it): a prebuilt \
                         component is untrusted code",
                        path.display()
                    )));
                };
                // A component is a file of the suite like its data: its
                // path stays inside the suite folder, symlinks resolved.
                if !is_plain_relative(&path) {
                    return Err(Error::setup(format!(
                        "{where_}: wasm = {:?} must be a relative path inside the suite folder (no absolute path, \
                         no ..); copy the component into the suite folder and pin it there",
                        path.display()
                    )));
                }
                let what = format!("instrument #{} component {}", i + 1, path.display());
                let real = resolved_inside(file, &real_dir, &dir.join(&path), &what)?;
                Source::Wasm { path: real, sha256: Some(sha256) }
            }
            _ => {
                return Err(Error::setup(format!("{where_}: give exactly one of crate and wasm")));
            }
        };
        let table = entry.config.unwrap_or_default();
        if !entry.arms.is_empty() && table.contains_key("arm") {
            return Err(Error::setup(format!("{where_}: config key \"arm\" is set by the host for paired arms")));
        }
        for arm in entry.arms.keys() {
            crate::names::check_segments("arm", arm)
                .and_then(|()| if arm.contains("::") { Err(format!("arm {arm:?} holds \"::\"")) } else { Ok(()) })
                .map_err(|e| Error::setup(format!("{where_}: {e}")))?;
        }
        let config = serde_json::to_string(&table)
            .map_err(|err| Error::setup(format!("{where_}: config cannot be expressed as JSON: {err}")))?;
        instruments.push(InstrumentEntry { source, config, exclusive: entry.exclusive, arms: entry.arms });
    }

    // The suite digest covers its manifest and every pinned file.
    let mut hasher = Sha256::new();
    hasher.update(text);
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
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

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
    fn declared_rows_load_and_a_bad_one_is_refused_naming_its_line_row_and_field() {
        let dir = tempfile::tempdir().unwrap();
        let pin = sha256_hex(b"[1]");
        let file = write_suite(dir.path(), "[1]", &pin);
        let base = std::fs::read_to_string(&file).unwrap();
        let with = |rows: &str| {
            std::fs::write(&file, format!("{base}\n{rows}")).unwrap();
            load(&file)
        };
        let suite = with(
            "[[row]]\ntitle = \"Words\"\ninstrument = \"c\"\nfigure = \"pass-share\"\n\n[[row]]\ntitle = \"Word time\"\ninstrument = \"c\"\nfigure = \"p90\"\nmetric = \"ms\"\nbetter = \"lower\"\n",
        )
        .unwrap();
        assert_eq!(suite.rows.len(), 2);
        assert_eq!((suite.rows[1].figure, suite.rows[1].better), (FigureKind::Percentile(90), Better::Lower));
        assert_eq!(suite.rows[0].declared_by, "t@1");

        let err = with("[[row]]\ntitle = \"Words\"\ninstrument = \"c\"\nfigur = \"mean\"\n").unwrap_err();
        assert_eq!(err.kind, ErrorKind::Setup);
        assert!(err.message.contains("unknown field `figur`") && err.message.contains("line 16"), "{err}");
        let err = with("[[row]]\ntitle = \"Words\"\ninstrument = \"c\"\nfigure = \"mean\"\n").unwrap_err();
        assert!(
            err.message.ends_with("row #1 (\"Words\"): metric: figure \"mean\" is computed from a metric: name it"),
            "{err}"
        );
        let twice = "[[row]]\ntitle = \"Words\"\ninstrument = \"c\"\nfigure = \"pass-share\"\n";
        let err = with(&format!("{twice}{twice}")).unwrap_err();
        assert!(err.message.contains("row #2 (\"Words\"): title: row #1 has this title already"), "{err}");
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
    fn a_component_outside_the_suite_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("suite.toml");
        let pin = "0".repeat(64);
        let with = |wasm: &str| {
            std::fs::write(
                &file,
                format!(
                    "[suite]\nname = \"t\"\nversion = \"1\"\n[[instrument]]\nwasm = {wasm:?}\nsha256 = \"{pin}\"\n"
                ),
            )
            .unwrap();
            load(&file)
        };
        // By its text: a way up, or an absolute path.
        for wasm in ["../../../../../../etc/passwd", "/etc/passwd", "sub/../x.wasm", ""] {
            let err = with(wasm).unwrap_err();
            assert_eq!(err.kind, ErrorKind::Setup, "{wasm}: {err}");
            assert!(err.message.contains("instrument #1") && err.message.contains("inside the suite folder"), "{err}");
        }
        // By a symlink whose text stays inside.
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("x.wasm"), "not a component").unwrap();
        std::os::unix::fs::symlink(outside.path().join("x.wasm"), dir.path().join("x.wasm")).unwrap();
        let err = with("x.wasm").unwrap_err();
        assert_eq!(err.kind, ErrorKind::Setup);
        assert!(err.message.contains("x.wasm") && err.message.contains("outside the suite folder"), "{err}");
        // A missing one is named before any case, too.
        let err = with("missing.wasm").unwrap_err();
        assert!(err.kind == ErrorKind::Setup && err.message.contains("missing.wasm"), "{err}");
        // Inside, through a folder or a symlink that stays inside: loaded,
        // by the path it resolves to.
        std::fs::remove_file(dir.path().join("x.wasm")).unwrap();
        std::fs::create_dir_all(dir.path().join("bin")).unwrap();
        std::fs::write(dir.path().join("bin/real.wasm"), "bytes").unwrap();
        std::os::unix::fs::symlink("bin/real.wasm", dir.path().join("x.wasm")).unwrap();
        for wasm in ["bin/real.wasm", "x.wasm"] {
            let suite = with(wasm).unwrap();
            let Source::Wasm { path, .. } = &suite.instruments[0].source else { panic!("{:?}", suite.instruments) };
            assert_eq!(path, &std::fs::canonicalize(dir.path().join("bin/real.wasm")).unwrap());
        }
    }

    #[test]
    fn an_unknown_suite_lists_the_known_ones_and_the_nearest() {
        let root = tempfile::tempdir().unwrap();
        for name in ["smoke", "speed", "compliance", "compliance-severe"] {
            std::fs::create_dir_all(root.path().join("suites").join(name)).unwrap();
            std::fs::write(root.path().join("suites").join(name).join("suite.toml"), "").unwrap();
        }
        // A folder without a suite file is not a suite.
        std::fs::create_dir_all(root.path().join("suites/notes")).unwrap();
        assert_eq!(locate(root.path(), "smoke").unwrap(), root.path().join("suites/smoke/suite.toml"));
        let err = locate(root.path(), "smok").unwrap_err();
        assert_eq!(err.kind, ErrorKind::Setup);
        assert!(err.message.contains("no suite named \"smok\""), "{err}");
        assert!(err.message.contains("did you mean smoke?"), "{err}");
        assert!(err.message.contains("known suites: ") && err.message.contains("compliance (this project's"), "{err}");
        // The built-in suites are known too, each said where it comes from.
        assert!(err.message.contains("a-bench (built in)"), "{err}");
        assert!(locate(root.path(), "complianc").unwrap_err().message.contains("did you mean compliance?"));
        assert!(locate(root.path(), "compliance-sev").unwrap_err().message.contains("mean compliance-severe?"));
        let far = locate(root.path(), "xyzzy").unwrap_err().message;
        assert!(!far.contains("did you mean") && far.contains("known suites: "), "{far}");
        // With no suites of its own, a project finds the built-in ones.
        let empty = tempfile::tempdir().unwrap();
        let built_in = locate(empty.path(), "smoke").unwrap();
        assert!(built_in.ends_with("suite.toml") && !built_in.starts_with(empty.path()), "{}", built_in.display());
        // Paths are taken as given.
        assert_eq!(locate(root.path(), "x/suite.toml").unwrap(), Path::new("x/suite.toml"));
        assert_eq!(edits("smok", "smoke"), 1);
        assert_eq!(edits("", "abc"), 3);
        assert_eq!(edits("kitten", "sitting"), 3);
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

/// The table of the board's rows in the book (`docs/suites/index.md`),
/// generated from the rows' one list and the built-in suites' files: a
/// row added, moved or carried by another suite without regenerating
/// fails this test.
#[cfg(test)]
mod book {
    use std::fmt::Write as _;

    const REFRESH: &str = "SPARKTEST_REFRESH_DOCS";
    const END: &str = "<!-- End of the generated table. -->";

    fn begin() -> String {
        format!(
            "<!-- Generated from the rows' one list and the suites' files by `{REFRESH}=1 cargo test -p \
             sparktest-harness --lib book`: do not edit by hand. -->"
        )
    }

    /// The suites that run an instrument: the board's, else the gates'.
    fn suites_of(instrument: &str) -> Vec<&'static str> {
        let runs = |name: &&str| {
            crate::carried::suite(name)
                .and_then(super::contents_of)
                .is_some_and(|c| c.instruments.iter().any(|i| i == instrument))
        };
        let board: Vec<&str> = super::board_suites().into_iter().filter(runs).collect();
        if !board.is_empty() {
            return board;
        }
        crate::carried::SUITES.iter().map(|b| b.name).filter(runs).collect()
    }

    fn table() -> String {
        let mut out = format!("{}\n\n| board row | instrument | suites |\n|---|---|---|\n", begin());
        for row in sparktest_rows::coded::ROWS {
            let i = &row.instrument;
            let pages: Vec<String> = suites_of(i).iter().map(|s| format!("[{s}]({s}.md)")).collect();
            let _ = writeln!(
                out,
                "| {} | [{i}](https://github.com/cargo-sparktest/cargo-sparktest/blob/main/plugins/instruments/{i}/src/lib.rs) | {} |",
                row.title,
                pages.join(", ")
            );
            for (judged, _) in sparktest_rows::coded::JUDGED_AFTER.iter().filter(|(_, after)| *after == row.title) {
                let _ = writeln!(
                    out,
                    "| {judged} | none: judged, not measured (`board --judgements`) | [the board](../board.md) |"
                );
            }
        }
        out.push('\n');
        out.push_str(END);
        out
    }

    #[test]
    fn the_book_s_table_of_rows_is_generated_from_the_rows_and_the_suites() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/suites/index.md");
        let page = std::fs::read_to_string(&path).unwrap();
        let (Some(a), Some(b)) = (page.find(&begin()), page.find(END)) else {
            panic!("docs/suites/index.md holds no generated table of rows between its two markers");
        };
        let now = format!("{}{}{}", &page[..a], table(), &page[b + END.len()..]);
        if std::env::var_os(REFRESH).is_some() {
            std::fs::write(&path, &now).unwrap();
            return;
        }
        assert!(
            page == now,
            "the book's table of rows differs from the rows and the suites; regenerate it with `{REFRESH}=1 cargo \
             test -p sparktest-harness --lib book`"
        );
    }
}
