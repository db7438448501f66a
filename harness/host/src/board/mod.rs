//! `cargo sparktest board`: every measurement file in a folder through a
//! reporter plugin (the built-in `sparktest-board` unless told otherwise)
//! into board files.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::Config;
use crate::error::{Error, ErrorKind};
use crate::measurements::{Facts, index, measurement_files, on_every_core};
use crate::plugin::{self, PluginHost};
use crate::suite::Source;

mod select;

pub use select::Selection;
pub use sparktest_record::handover::{Damage, FoldedNight, Handover, ReadOnce, Selected};

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
    /// Which runs the board covers (`--campaign`, `--since`, `--until`).
    pub selection: Selection,
    /// Where the command was started.
    pub cwd: PathBuf,
}

/// The largest `--references` file read: a few published figures are a few
/// kilobytes, and a larger file would be held whole, as TOML and as JSON.
pub const REFERENCES_MAX_BYTES: u64 = 1 << 20;

/// A references file as JSON text, refused unread past
/// [`REFERENCES_MAX_BYTES`] (its size read first, and never more than the
/// limit read, so a growing file or a device cannot get past it).
fn references_as_json(path: &Path) -> Result<String, Error> {
    use std::io::Read;
    let too_large = |size: String| {
        Error::setup(format!(
            "--references {}: {size}, over the limit of 1 MiB ({REFERENCES_MAX_BYTES} bytes) for a references \
             file; it holds published figures, a few lines each",
            path.display()
        ))
    };
    let file =
        std::fs::File::open(path).map_err(|e| Error::setup(format!("failed to read {}: {e}", path.display())))?;
    let size = file.metadata().map_err(|e| Error::setup(format!("failed to read {}: {e}", path.display())))?.len();
    if size > REFERENCES_MAX_BYTES {
        return Err(too_large(format!("{size} bytes")));
    }
    let mut bytes = Vec::new();
    file.take(REFERENCES_MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::setup(format!("failed to read {}: {e}", path.display())))?;
    if bytes.len() as u64 > REFERENCES_MAX_BYTES {
        return Err(too_large("more than that when read".into()));
    }
    let text =
        String::from_utf8(bytes).map_err(|e| Error::setup(format!("{}: not UTF-8 text: {e}", path.display())))?;
    toml_text_as_json(path, &text)
}

/// A TOML file as JSON text, its errors naming the file.
fn toml_as_json(path: &Path) -> Result<String, Error> {
    let text =
        std::fs::read_to_string(path).map_err(|e| Error::setup(format!("failed to read {}: {e}", path.display())))?;
    toml_text_as_json(path, &text)
}

fn toml_text_as_json(path: &Path, text: &str) -> Result<String, Error> {
    let value: toml::Value = toml::from_str(text).map_err(|e| Error::setup(format!("{}: {e}", path.display())))?;
    serde_json::to_string(&value).map_err(|e| Error::setup(format!("{}: {e}", path.display())))
}

/// Measurement files as read.
#[derive(Debug, Default)]
pub struct Measurements {
    /// Each file handed to the reporter whole: its path and text (its
    /// whole lines).
    pub files: Vec<(PathBuf, String)>,
    /// The files that could not be read whole.
    pub damage: Vec<Damage>,
    /// The files of a run another file already gave.
    pub read_once: Vec<ReadOnce>,
    /// The transcripts the records handed whole name.
    pub transcripts: std::collections::BTreeSet<String>,
    /// The rows the runs' suites declare, each with the run and file it
    /// was read from.
    pub rows: Vec<DeclaredIn>,
    /// Readable files the selection left out.
    pub left_out: usize,
    /// The nights of the run log handed as counts, not runs: none while
    /// the runs fit the reporter whole ([`HANDED_WHOLE`]).
    pub folded: Vec<FoldedNight>,
    /// The runs of the latest night handed as their run-log line only (no
    /// cell reads them): none while the runs fit the reporter whole.
    pub logged: Vec<sparktest_record::reader::Logged>,
    /// What the index did.
    pub refresh: index::Refresh,
}

/// The most runs a folded night names (its failed and resumed runs): a
/// night of thousands of dead runs is one line and a pointer, not a page.
pub const NOTABLE_PER_NIGHT: usize = 50;

/// The share of the reporter's memory that the runs handed whole may hold
/// in bytes: up to it, every picked run is handed whole (parsed, a run
/// takes a few times its bytes); past it, the runs the cells read, the
/// latest night's other runs as their run-log lines, and older nights as
/// counts.
pub const HANDED_WHOLE: u64 = 4;

/// The share of the reporter's memory one file may take parsed
/// (`index::parsed_cost`): a file past it is named and left out, and the
/// board built from the others.
pub const ONE_FILE: u64 = 2;

/// Every `*.jsonl` in `dir`, by name. A file cut by a crash or a full disk
/// keeps every record up to its last whole line; a file with no readable
/// manifest is left out; both are reported, never blanking the board. A
/// second file of a run (an identical copy, most often) is read once and
/// named as such. A file of another major format version is refused,
/// naming file and line. Files are read through the board index
/// (`board/index.rs`): a file read before and not changed since is not read again
/// unless the reporter is handed it whole.
pub fn read_measurements(dir: &Path, selection: &Selection) -> Result<Measurements, Error> {
    read_measurements_within(dir, selection, u64::MAX)
}

/// [`read_measurements`] for a reporter that can hold `limit` bytes. Runs
/// up to a quarter of it ([`HANDED_WHOLE`]) are all handed whole. Past
/// that, the reporter is handed the runs its cells read and the latest
/// night whole, and the older nights as counts ([`FoldedNight`]); where
/// even those hold more than `limit`, the board is refused before any file
/// is read whole, so the host's memory follows the board and not the
/// folder.
pub fn read_measurements_within(dir: &Path, selection: &Selection, limit: u64) -> Result<Measurements, Error> {
    read_listed(dir, measurement_files(dir)?, selection, limit)
}

/// [`read_measurements_within`] of the folder's files as listed once.
fn read_listed(dir: &Path, files: Vec<PathBuf>, selection: &Selection, limit: u64) -> Result<Measurements, Error> {
    if files.is_empty() {
        return Err(no_measurement_files(dir));
    }
    let (slots, refresh) = index::refresh(dir, &files)?;
    index::refuse_other_versions(&slots)?;
    let mut read = Measurements { refresh, ..Measurements::default() };
    let entry = |i: usize| match &slots[i] {
        index::Slot::Indexed(e) => Some(e.as_ref()),
        index::Slot::Left(_) | index::Slot::OtherVersion(_) => None,
    };
    let facts: Vec<Facts> = (0..files.len()).map(|i| entry(i).map(|e| e.facts.clone()).unwrap_or_default()).collect();
    let readable: BTreeSet<usize> = (0..files.len()).filter(|i| entry(*i).is_some()).collect();
    for i in readable.iter().copied().filter(|i| select::from_the_future(&facts[*i])) {
        crate::warn_line!(
            "sparktest: warning: {}: run {} says it started at {}, after now: it never makes a night the latest \
             (--nights)",
            name_of(&files[i]),
            facts[i].run_id,
            facts[i].started_at
        );
    }
    let picked: BTreeSet<usize> = if selection.is_all() {
        readable.clone()
    } else {
        selection.pick(&facts).intersection(&readable).copied().collect()
    };
    read.left_out = readable.len() - picked.len();
    let mut runs = runs_once(&files, &picked, &entry, &mut read);
    // A file that alone would take more than its share of the reporter's
    // memory parsed: named and left out, the board built from the others.
    for i in runs.clone() {
        let Some(e) = entry(i).filter(|e| e.cost > limit / ONE_FILE) else { continue };
        runs.remove(&i);
        let (name, why) = (name_of(&files[i]), too_costly_words(e.bytes, e.cost, limit));
        crate::warn_line!("sparktest: warning: {name}: {why}");
        read.damage.push(Damage { file: name, line: 1, message: why, kept: false });
    }
    note_damage_and_declarations(&files, &slots, &runs, &mut read);
    if runs.is_empty() && read.left_out > 0 {
        return Err(Error::setup(format!(
            "no measurement file in {} is of the selection ({}): {} readable files, none selected",
            dir.display(),
            selection.described(),
            read.left_out
        )));
    }
    if runs.is_empty() {
        return Err(Error::setup(format!("no readable measurement file in {}", dir.display())));
    }
    // A declaration of another suite than its file ran, and the later of
    // two suites declaring one row title: left out, naming the files (the
    // reporter settles the same runs in the same start order, and leaves
    // the same ones out).
    read.rows.sort_by(|a, b| a.order.cmp(&b.order));
    for said in sparktest_rows::settle(read.rows.iter().map(|r| (&r.row, r.suite.as_str(), r.file.clone()))).left_out {
        crate::warn_line!("sparktest: warning: {said}");
    }
    let bytes = |set: &BTreeSet<usize>| set.iter().filter_map(|i| entry(*i)).map(|e| e.bytes).sum::<u64>();
    let whole = if bytes(&runs) <= limit / HANDED_WHOLE {
        runs
    } else {
        let (whole, logged, folded) = cells_and_latest_night(&files, &facts, &runs, &entry);
        read.folded = folded;
        read.logged = run_log_lines(&files, &facts, &logged);
        crate::warn_line!(
            "sparktest: note: the {} runs hold {:.1} MB, more than the reporter is handed whole: it is handed the {} \
             files its cells read, {} more runs of the latest night as their run-log lines, and {} older nights as \
             counts",
            runs.len(),
            bytes(&runs) as f64 / 1e6,
            whole.len(),
            read.logged.len(),
            read.folded.len()
        );
        whole
    };
    if bytes(&whole) > limit {
        return Err(Error::new(ErrorKind::Plugin, past_the_limit_words(whole.len(), bytes(&whole), limit)));
    }
    read_whole_into(whole.into_iter().map(|i| files[i].clone()).collect(), &mut read);
    Ok(read)
}

/// Names each file the index left out, and collects the row declarations
/// and the kept damage of the files handed on.
fn note_damage_and_declarations(
    files: &[PathBuf],
    slots: &[index::Slot],
    runs: &BTreeSet<usize>,
    read: &mut Measurements,
) {
    for (i, f) in files.iter().enumerate() {
        let name = name_of(f);
        match (&slots[i], runs.contains(&i)) {
            (index::Slot::Left(e), _) => {
                crate::warn_line!("sparktest: warning: {name}: line {}: {}; the file is left out", e.line, e.message);
                read.damage.push(Damage { file: name, line: e.line, message: e.message.clone(), kept: false });
            }
            (index::Slot::Indexed(e), true) => {
                for (d, why) in e.rows.iter().filter_map(|d| sparktest_rows::check(d).err().map(|why| (d, why))) {
                    crate::warn_line!("sparktest: warning: {name}: row {:?} is left out: {why}", d.title);
                }
                read.rows.extend(e.rows.iter().map(|d| DeclaredIn {
                    row: d.clone(),
                    suite: e.suite.clone(),
                    order: (e.facts.started_at.clone(), e.facts.run_id.clone()),
                    file: name.clone(),
                }));
                if let Some((line, message)) = &e.damage {
                    crate::warn_line!(
                        "sparktest: warning: {name}: line {line}: {message}; the records before it are used"
                    );
                    read.damage.push(Damage { file: name, line: *line, message: message.clone(), kept: true });
                }
            }
            (index::Slot::Indexed(_), false) | (index::Slot::OtherVersion(_), _) => {}
        }
    }
}

/// Reads each file whole into `read.files`; one changed since it was
/// indexed into something unreadable is named and left out.
fn read_whole_into(whole: Vec<PathBuf>, read: &mut Measurements) {
    for (f, text) in whole.iter().zip(on_every_core(&whole, |f| read_whole(f))) {
        match text {
            Ok((text, named)) => {
                read.transcripts.extend(named);
                read.files.push((f.clone(), text));
            }
            // Changed since it was indexed, into something unreadable.
            Err(e) => {
                let name = name_of(f);
                crate::warn_line!("sparktest: warning: {name}: line {}: {}; the file is left out", e.line, e.message);
                read.damage.push(Damage { file: name, line: e.line, message: e.message, kept: false });
            }
        }
    }
}

/// An empty measurements folder, said before any reporter is built.
fn no_measurement_files(dir: &Path) -> Error {
    Error::setup(format!("no measurement files (*.jsonl) in {}", dir.display()))
}

fn name_of(f: &Path) -> String {
    f.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

/// The picked files with each run once, the first file by name; the others
/// are named in `read.read_once` (and said).
fn runs_once<'a>(
    files: &[PathBuf],
    picked: &BTreeSet<usize>,
    entry: &impl Fn(usize) -> Option<&'a index::Entry>,
    read: &mut Measurements,
) -> BTreeSet<usize> {
    let mut first: BTreeMap<&str, usize> = BTreeMap::new();
    let mut runs = BTreeSet::new();
    for i in picked.iter().copied() {
        let Some(e) = entry(i) else { continue };
        match first.get(e.facts.run_id.as_str()) {
            Some(&j) => {
                let identical = entry(j).is_some_and(|f| f.digest == e.digest);
                let once = ReadOnce {
                    file: name_of(&files[i]),
                    first: name_of(&files[j]),
                    run_id: e.facts.run_id.clone(),
                    identical,
                };
                crate::warn_line!("sparktest: note: {}: {}", once.file, once.message());
                read.read_once.push(once);
            }
            None => {
                first.insert(&e.facts.run_id, i);
                runs.insert(i);
            }
        }
    }
    runs
}

/// Past [`HANDED_WHOLE`]: the files the cells read ([`select::read_by_cells`]),
/// the latest night's other files (for their run-log lines), and each
/// older night as counts.
fn cells_and_latest_night<'a>(
    files: &[PathBuf],
    facts: &[Facts],
    runs: &BTreeSet<usize>,
    entry: &impl Fn(usize) -> Option<&'a index::Entry>,
) -> (BTreeSet<usize>, BTreeSet<usize>, Vec<FoldedNight>) {
    let reads: Vec<Option<select::Reads>> = (0..files.len())
        .map(|i| {
            entry(i).map(|e| select::Reads {
                configs: &e.configs,
                features: &e.features,
                sound: e.sound,
                campaign_record: e.campaign_record,
            })
        })
        .collect();
    let night = |i: usize| sparktest_record::reader::night(facts[i].campaign.as_deref(), &facts[i].started_at);
    let latest = select::latest_nights(facts, runs, 1);
    let in_latest = |i: usize| night(i).is_some_and(|k| latest.contains(&k));
    let mut whole: BTreeSet<usize> = select::read_by_cells(facts, &reads, runs).intersection(runs).copied().collect();
    // The latest night's campaign records (a launch and its memory, a few
    // cases each): what its Campaigns table reads.
    whole.extend(runs.iter().copied().filter(|i| in_latest(*i) && entry(*i).is_some_and(|e| e.campaign_record)));
    let logged: BTreeSet<usize> = runs.iter().copied().filter(|i| !whole.contains(i) && in_latest(*i)).collect();
    let mut nights: BTreeMap<String, FoldedNight> = BTreeMap::new();
    // Per night, its failed and resumed runs: (start, run id) and words.
    let mut notable: BTreeMap<String, Vec<Said>> = BTreeMap::new();
    for i in runs.iter().copied().filter(|i| !night(*i).is_some_and(|k| latest.contains(&k))) {
        let Some(e) = entry(i) else { continue };
        let label = night(i).unwrap_or_else(|| "undated".into());
        let n = nights.entry(label.clone()).or_insert_with(|| FoldedNight {
            label,
            first: e.facts.started_at.clone(),
            ..FoldedNight::default()
        });
        n.first = n.first.clone().min(e.facts.started_at.clone());
        n.runs += 1;
        n.failed_case += usize::from(e.log.failed_case);
        n.lost_case += usize::from(e.log.lost_case);
        n.unfinished += usize::from(e.log.unfinished);
        let file = name_of(&files[i]);
        let said = notable.entry(n.label.clone()).or_default();
        let at = (e.facts.started_at.as_str(), e.facts.run_id.as_str());
        if let Some(why) = &e.log.failed {
            said.push((at, format!("{} ({file}): {why}", e.facts.run_id)));
        }
        if let Some(of) = &e.facts.resumes {
            said.push((at, format!("{} ({file}): resumes {of}", e.facts.run_id)));
        }
    }
    let mut folded: Vec<FoldedNight> = nights.into_values().collect();
    folded.sort_by(|a, b| b.first.cmp(&a.first));
    for n in &mut folded {
        // Oldest first, as a night's table lists its runs.
        let mut said = notable.remove(&n.label).unwrap_or_default();
        said.sort();
        n.notable = said.into_iter().map(|(_, words)| words).collect();
        if n.notable.len() > NOTABLE_PER_NIGHT {
            let more = n.notable.len() - NOTABLE_PER_NIGHT;
            n.notable.truncate(NOTABLE_PER_NIGHT);
            n.notable.push(format!(
                "and {more} more runs that failed as runs or resumed one: a board of that night alone lists them all \
                 (--since and --until its date, or --campaign its id)"
            ));
        }
    }
    (whole, logged, folded)
}

/// The run-log lines of `files`, as the reporter would log them handed
/// whole: each read as the reporter reads it (its home folders written
/// `~`), with the files it is read as one run with (its resumes, the other
/// parts of its partition), on every core, one group at a time. A file
/// that cannot be read now (changed since it was indexed) has no line.
fn run_log_lines(
    files: &[PathBuf],
    facts: &[Facts],
    logged: &BTreeSet<usize>,
) -> Vec<sparktest_record::reader::Logged> {
    use sparktest_record::reader::{File, Unread};
    let groups = select::units(facts, logged);
    let lines = on_every_core(&groups, |group| {
        let runs: Vec<_> = group
            .iter()
            .filter_map(|i| {
                let (text, _) = read_whole(&files[*i]).ok()?;
                File::<Unread>::parse(&homes_as_tilde(&text)).ok().map(|f| f.run)
            })
            .collect();
        sparktest_record::reader::merge(runs).log
    });
    let mut lines: Vec<_> = lines.into_iter().flatten().collect();
    lines.sort_by(|a, b| (&a.started_at, &a.run_id).cmp(&(&b.started_at, &b.run_id)));
    lines
}

/// Why a file is left out that would alone take more of the reporter's
/// memory than [`ONE_FILE`] allows.
fn too_costly_words(bytes: u64, cost: u64, limit: u64) -> String {
    format!(
        "{:.1} MB of records that would take about {:.0} MB parsed, more than half the reporter's memory limit of {} \
         MiB: left out. A board of it alone needs a higher `memory-per-instance-mib` in sparktest.toml",
        bytes as f64 / 1e6,
        cost as f64 / 1e6,
        limit >> 20
    )
}

/// A run a folded night names: its (start, run id), and what is said.
type Said<'a> = ((&'a str, &'a str), String);

/// A file's whole lines and the transcripts its records name.
fn read_whole(f: &Path) -> Result<(String, Vec<String>), sparktest_record::ReadError> {
    use sparktest_record::reader::{File, FileErrorKind, Unread};
    match File::<Unread>::read_text(f) {
        Ok((file, mut text)) => {
            // Only the whole lines go on: the reporter reads them strictly.
            text.truncate(file.whole_bytes);
            Ok((text, file.run.cases.into_iter().map(|c| c.transcript_sha256).collect()))
        }
        Err(e) => Err(match e.kind {
            FileErrorKind::Io(io) => sparktest_record::ReadError { line: 1, message: format!("cannot be read: {io}") },
            FileErrorKind::Format(e) => e,
        }),
    }
}

/// A row a run's suite declares, as the board read it.
#[derive(Debug)]
pub struct DeclaredIn {
    /// The declaration.
    pub row: sparktest_record::RowDeclaration,
    /// The suite the run ran.
    pub suite: String,
    /// The run's start time and id: the order the reporter settles in.
    pub order: (String, String),
    /// The file it was read from.
    pub file: String,
}

/// The transcripts the records name that exist beside the measurement
/// files as regular files: address → file. The folder is listed once (a
/// board of thousands of records would otherwise ask the file system once
/// per record). A named transcript that is a link (to another run's, to a
/// token file) or anything else is left out with a warning naming it.
fn transcripts_named(dir: &Path, named: &std::collections::BTreeSet<String>) -> BTreeMap<String, PathBuf> {
    let folder = crate::sinks::transcripts::TranscriptStore::folder(dir);
    let Ok(entries) = std::fs::read_dir(&folder) else { return BTreeMap::new() };
    // The entry's own type: a link is a link, not what it points to.
    let present: BTreeMap<std::ffi::OsString, bool> =
        entries.flatten().map(|e| (e.file_name(), e.file_type().is_ok_and(|t| t.is_file()))).collect();
    named
        .iter()
        .filter_map(|sha| {
            let path = crate::sinks::transcripts::TranscriptStore::path(dir, sha)?;
            match present.get(path.file_name()?)? {
                true => Some((sha.clone(), path)),
                false => {
                    crate::warn_line!(
                        "sparktest: warning: {}: a link or not a regular file: not followed, the transcript is left out",
                        path.display()
                    );
                    None
                }
            }
        })
        .collect()
}

/// Copy a transcript out of the measurements folder without following a
/// link (it was a regular file when listed; it may not be now).
fn copy_transcript(from: &Path, to: &Path) -> std::io::Result<()> {
    let (file, _) = sparktest_record::reader::open_in_folder(from)?;
    let mut limited = std::io::Read::take(file, sparktest_record::reader::MAX_FILE_BYTES);
    let mut out = std::fs::File::create(to)?;
    std::io::copy(&mut limited, &mut out).map(|_| ())
}

/// The reporter component and its pin: the one given, or the built-in
/// one (built from source in cargo-sparktest's own tree, else the one this
/// binary carries).
fn reporter(args: &BoardArgs, config: &Config) -> Result<(PathBuf, Option<String>), Error> {
    match &args.reporter {
        Some(path) => plugin::component_for(&config.root, &Source::Wasm { path: path.clone(), sha256: None }, &[]),
        None => {
            let board = Source::Crate(crate::carried::BOARD.into());
            match plugin::own_workspace() {
                Some(own) => plugin::component_for(&own, &board, &plugin::trusted_workspaces(&own)),
                None => plugin::component_for(&config.root, &board, &[]),
            }
        }
    }
}

/// A reporter that ran out of memory, said with what it was handed and
/// what to do: it reads every record it is given, so a folder of many
/// runs needs a selection (or a higher limit). Nothing has been written.
fn past_the_limit(mut e: Error, files: usize, bytes: usize) -> Error {
    if e.message.contains("exceeded its memory limit") {
        e.message.push_str(&format!(
            "; it was handed {files} measurement files ({:.1} MB of records). Nothing was written. {FEWER}",
            bytes as f64 / 1e6
        ));
    }
    e
}

/// What to do when a board's runs are more than its reporter can hold.
const FEWER: &str = "Build the board of fewer runs (`--nights N`, `--campaign ID`, `--since DATE`, `--until DATE`), \
                     or raise `memory-per-instance-mib` in sparktest.toml";

/// A board refused before any file is read whole: its runs' files hold
/// more bytes than the reporter's whole memory.
fn past_the_limit_words(runs: usize, bytes: u64, limit: u64) -> String {
    format!(
        "the {runs} runs to read hold {:.1} MB of records, more than the reporter's memory limit of {} MiB can \
         take; no file was read whole and nothing was written. {FEWER}",
        bytes as f64 / 1e6,
        limit >> 20
    )
}

/// Build the board. Returns the process exit code.
pub fn board(args: BoardArgs) -> Result<i32, Error> {
    args.selection.check()?;
    let config = Config::discover(&args.cwd)?;
    let dir = config.measurements_dir(args.measurements_dir.as_deref());
    let reporter_config = args.config.as_deref().map(toml_as_json).transpose()?.unwrap_or_default();
    let references = args.references.as_deref().map(references_as_json).transpose()?;
    let judgements = args.judgements.as_deref().map(toml_as_json).transpose()?;
    // Reading the files and making sure the reporter is built (a cargo
    // no-op once it is, 0.15–0.2 s) need nothing of each other: the build
    // check runs while the files are read. An empty folder is said before
    // any build.
    let listed = measurement_files(&dir)?;
    if listed.is_empty() {
        return Err(no_measurement_files(&dir));
    }
    let limits = crate::limits::Limits::of_run(&config);
    let limit = limits.memory_bytes as u64;
    let (read, wasm) = std::thread::scope(|s| {
        let reading = s.spawn(|| read_listed(&dir, listed, &args.selection, limit));
        let wasm = reporter(&args, &config);
        (reading.join().unwrap_or_else(|e| std::panic::resume_unwind(e)), wasm)
    });
    let Measurements { files, damage, read_once, transcripts: named, left_out, folded, logged, refresh, .. } = read?;
    if refresh.read > 0 || refresh.dropped > 0 {
        crate::warn_line!(
            "sparktest: note: board index: {} files as indexed, {} read, {} gone from the folder",
            refresh.reused,
            refresh.read,
            refresh.dropped
        );
    }
    let (wasm, pin) = wasm?;
    give_back_freed_memory();
    // A board of a selection says so, on the page and here.
    let selection = (!args.selection.is_all()).then(|| {
        let words = args.selection.described();
        crate::warn_line!(
            "sparktest: note: the board covers {words}: {} files selected, {left_out} left out",
            files.len()
        );
        Selected { words, files: files.len(), left_out }
    });
    // The transcripts the records name, copied beside the board so that
    // each cell's records link to them.
    let transcripts = transcripts_named(&dir, &named);
    let handover = Handover {
        selection,
        damage,
        read_once,
        folded,
        logged,
        transcripts: transcripts.keys().cloned().collect(),
        judgements,
        references,
    };
    let inputs: BTreeMap<String, Vec<u8>> =
        handover.files().into_iter().map(|(name, bytes)| (name.to_string(), bytes)).collect();
    let host = PluginHost::new(Some(&crate::plugin::compile_cache_dir()), limits)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("start the async runtime", e))?;
    let count = files.len();
    // Home folders are the person's, not the measurement's: `~` on a board.
    let texts: Vec<String> = files.into_iter().map(|(_, t)| homes_as_tilde(&t)).collect();
    let bytes: usize = texts.iter().map(String::len).sum();
    let rendered = rt
        .block_on(host.render(&wasm, pin.as_deref(), Arc::new(inputs), texts, &reporter_config))
        .map_err(|e| past_the_limit(e, count, bytes))?;
    let out = args.out.clone().unwrap_or_else(|| config.path(Path::new("board")));
    std::fs::create_dir_all(&out).map_err(|e| Error::io(format_args!("create {}", out.display()), e))?;
    if !transcripts.is_empty() {
        let into = out.join("transcripts");
        std::fs::create_dir_all(&into).map_err(|e| Error::io(format_args!("create {}", into.display()), e))?;
        for (sha, from) in &transcripts {
            let to = into.join(format!("{sha}.json"));
            if !to.exists()
                && let Err(e) = copy_transcript(from, &to)
            {
                let _ = std::fs::remove_file(&to);
                crate::warn_line!("sparktest: warning: {}: {e}; the transcript is left out", from.display());
            }
        }
    }
    let mut written = Vec::new();
    for (path, content) in rendered.artifacts {
        let dest = out.join(&path);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(format_args!("create {}", parent.display()), e))?;
        }
        std::fs::write(&dest, content).map_err(|e| Error::io(format_args!("write {}", dest.display()), e))?;
        written.push(dest.display().to_string());
    }
    crate::warn_line!(
        "sparktest: board from {} measurement files in {}: wrote {} (the reporter grew to {} MiB of its {} MiB)",
        count,
        dir.display(),
        written.join(", "),
        rendered.peak_memory.div_ceil(1 << 20),
        limit >> 20
    );
    Ok(sparktest_record::exit_code::OK)
}

/// Hand the memory freed since (the index of a large folder, read and
/// dropped) back to the system before the reporter grows its own: glibc
/// keeps freed heap for reuse, and the host's peak would be both.
fn give_back_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free heap pages to the system; it
    // has no preconditions.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Every absolute home folder in a text written `~`: this user's
/// (`$HOME`), and any `/home/<user>`, `/Users/<user>` or `/root` that
/// starts a path (after a quote, a space, `=`, `:` or `(`), as a launch
/// command, a model path or a server log's name gives it.
pub fn homes_as_tilde(text: &str) -> String {
    static HOMES: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let homes = HOMES.get_or_init(|| {
        // This user's home wherever it is, and the usual places of anyone's.
        let mine = std::env::var("HOME")
            .ok()
            .map(|h| h.trim_end_matches('/').to_string())
            .filter(|h| h.len() > 1 && h.starts_with('/'))
            .map_or(String::new(), |h| format!("|{}", regex::escape(&h)));
        regex::Regex::new(&format!(r#"(^|[\s"'=:(])(?:/home/[^/\s"'\\]+|/Users/[^/\s"'\\]+|/root{mine})(/|["'\s)]|$)"#))
            .expect("a valid pattern")
    });
    static MINE: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let mine = MINE.get_or_init(|| std::env::var("HOME").ok().filter(|h| h.len() > 1));
    // Most files name no home at all: a plain search says so quickly.
    let named = ["/home/", "/Users/", "/root"].iter().any(|h| text.contains(h))
        || mine.as_deref().is_some_and(|h| text.contains(h));
    if !named {
        return text.to_string();
    }
    homes.replace_all(text, "${1}~${2}").into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_folders_are_written_as_a_tilde() {
        let t = r#"{"launch_command":["/home/alice/.cache/sparktest/bin/llama-server","--model","/root/m.gguf"],"reason":"last lines of /Users/bob/x.log:\n","p":"/srv/root/x","q":"/homework/a","r":"(/root)"}"#;
        let said = homes_as_tilde(t);
        assert!(said.contains(r#"["~/.cache/sparktest/bin/llama-server","--model","~/m.gguf"]"#), "{said}");
        assert!(said.contains("last lines of ~/x.log"), "{said}");
        assert!(said.contains(r#""/srv/root/x""#) && said.contains(r#""/homework/a""#), "not a home: {said}");
        assert!(said.contains("(~)"), "{said}");
        assert!(serde_json::from_str::<serde_json::Value>(&said).is_ok(), "still JSON: {said}");
    }

    #[test]
    fn a_references_file_over_the_limit_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("refs.toml");
        // At the limit: read (a comment padded to the byte).
        let head = "[[reference]]\nlabel = \"x\"\n#";
        let pad = REFERENCES_MAX_BYTES as usize - head.len() - 1;
        std::fs::write(&file, format!("{head}{}\n", "x".repeat(pad))).unwrap();
        assert!(references_as_json(&file).unwrap().contains("\"label\":\"x\""));
        // One byte over: refused by its size, naming the file and the limit.
        std::fs::write(&file, format!("{head}{}\n", "x".repeat(pad + 1))).unwrap();
        let err = references_as_json(&file).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Setup);
        assert!(err.message.contains("refs.toml") && err.message.contains("1 MiB (1048576 bytes)"), "{err}");
        assert!(err.message.contains(&format!("{} bytes", REFERENCES_MAX_BYTES + 1)), "{err}");
        // A file whose size says nothing (a device): read no further than the limit.
        let err = references_as_json(Path::new("/dev/zero")).unwrap_err();
        assert!(err.message.contains("more than that when read"), "{err}");
    }

    #[test]
    fn a_measured_figure_reads_back_to_its_last_bit() {
        // serde_json's default float parser may be one unit in the last
        // place off: a CI run's board showed 1.368043019863855 req/s for a
        // measured 1.3680430198638547. The workspace asks for float_roundtrip.
        let measured = 1.3680430198638547_f64;
        let written = serde_json::to_string(&measured).unwrap();
        assert_eq!(serde_json::from_str::<f64>(&written).unwrap(), measured, "{written}");
    }
}
