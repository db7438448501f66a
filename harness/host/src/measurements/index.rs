//! The index of a measurements folder: what each file
//! comes to, reduced, so that a rebuild reads only what is new.
//!
//! - An entry per readable file: its digest, what a selection reads of its
//!   manifest, what the run log says of it, and what tells which runs the
//!   cells read ([`Entry::configs`], [`Entry::features`]).
//! - Kept where only this user can write (`~/.cache/sparktest/board-index`,
//!   one file per folder), never in the measurements folder, which others
//!   may write. Even so it is checked: an index that does not parse is
//!   rebuilt, never trusted.
//! - An entry is used only while its file's size, times, inode and device
//!   are those it was read at; anything else is read again, and a file that
//!   went leaves the index. Deleting the index costs only time.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sparktest_record::reader::{File, FileErrorKind, Unread};

use super::Facts;
use crate::error::Error;

/// The first line of an index; an index of another layout or harness is
/// rebuilt. The number goes up whenever what an entry holds or means
/// changes (a feature digested differently included), so that no entry is
/// read with another meaning.
const HEAD: &str = concat!("sparktest board index 4 ", env!("CARGO_PKG_VERSION"));

/// A file as it stood when it was read (through a link, its target's): an
/// entry is used only while these are the same. The change time cannot be
/// set back by a user, so a file rewritten to its old size and time is
/// still seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Stat {
    len: u64,
    mtime_ns: i128,
    ctime_ns: i128,
    ino: u64,
    dev: u64,
}

impl Stat {
    fn from_metadata(m: &std::fs::Metadata) -> Stat {
        let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
        Stat {
            len: m.len(),
            mtime_ns: ns(m.mtime(), m.mtime_nsec()),
            ctime_ns: ns(m.ctime(), m.ctime_nsec()),
            ino: m.ino(),
            dev: m.dev(),
        }
    }
}

/// One readable measurement file, reduced.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Entry {
    stat: Stat,
    /// sha256 of its whole lines.
    pub digest: String,
    /// What a selection reads of its manifest.
    pub facts: Facts,
    /// The bytes of its whole lines: what the reporter is handed of it.
    pub bytes: u64,
    /// About what the reporter holds of it parsed ([`parsed_cost`]).
    pub cost: u64,
    /// Its configurations (its target's, and its `bare` arm's): a digest of
    /// each one's column name and configuration line.
    pub configs: Vec<u64>,
    /// What a cell may ask of a run, as digests: each case it measured, its
    /// summary's gate and instruments, its target's facts and forced tool
    /// choice, the instruments and rows its manifest declares.
    pub features: Vec<u64>,
    /// Whether the file alone stands as a measurement (it did not fail as
    /// a run): a run that failed never ends the search for an earlier one.
    pub sound: bool,
    /// Whether it is a campaign's own record of a configuration.
    pub campaign_record: bool,
    /// What the run log counts of it.
    pub log: LogCounts,
    /// The first line not read, where the file is cut or damaged after its
    /// manifest: (line, why).
    pub damage: Option<(usize, String)>,
    /// The rows its suite declares.
    pub rows: Vec<sparktest_record::RowDeclaration>,
    /// The suite it ran (its manifest's): the only one its rows may be
    /// declared by.
    pub suite: String,
}

/// What a folded night of the run log counts of a run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LogCounts {
    /// It has a failed case.
    pub failed_case: bool,
    /// It has a lost case.
    pub lost_case: bool,
    /// No summary line, or interrupted.
    pub unfinished: bool,
    /// Why it failed as a run, if it did.
    pub failed: Option<String>,
}

/// What the index holds of one file of the folder.
pub enum Slot {
    /// A readable file, reduced.
    Indexed(Box<Entry>),
    /// No readable manifest: left out, and said.
    Left(sparktest_record::ReadError),
    /// A file of another major format version: the board refuses it,
    /// naming it ([`refuse_other_versions`]); a lookup passes it by.
    OtherVersion(String),
}

/// The first file of another major format version, as the error the
/// reader gives for it: the board is not built of part of a folder it
/// cannot read.
pub fn refuse_other_versions(slots: &[Slot]) -> Result<(), Error> {
    match slots.iter().find_map(|s| if let Slot::OtherVersion(e) = s { Some(e) } else { None }) {
        Some(e) => Err(Error::setup(e.clone())),
        None => Ok(()),
    }
}

/// The readable measurement files of `dir` with what their manifests say,
/// through the index: what `diff` and `show` look a run id or group up in,
/// reading only the files the index does not hold as they stand.
pub fn runs_in(dir: &Path) -> Result<Vec<(PathBuf, Facts)>, Error> {
    let files = super::measurement_files(dir)?;
    let (slots, _) = refresh(dir, &files)?;
    Ok(files
        .into_iter()
        .zip(slots)
        .filter_map(|(f, s)| if let Slot::Indexed(e) = s { Some((f, e.facts)) } else { None })
        .collect())
}

/// What a refresh did, for the note on stderr and for tests.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Refresh {
    /// Files whose entries were used as they were.
    pub reused: usize,
    /// Files read (new, changed, or not indexed).
    pub read: usize,
    /// Entries dropped: their files went.
    pub dropped: usize,
}

/// The index file of a measurements folder, in this user's cache: one
/// per folder, named by the digest of its canonical path.
pub fn path_for(dir: &Path) -> PathBuf {
    let canonical = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let digest = crate::files::sha256_hex(canonical.as_os_str().as_encoded_bytes());
    index_dir().join(format!("{}.jsonl", &digest[..32]))
}

fn index_dir() -> PathBuf {
    crate::files::user_cache().join("board-index")
}

/// Every file of `files` (a folder's measurement files, by name) as the
/// index holds it, reading only the files it does not hold as they stand
/// now; the index is then written back. A file of another major format
/// version is refused, as the reader refuses it.
pub fn refresh(dir: &Path, files: &[PathBuf]) -> Result<(Vec<Slot>, Refresh), Error> {
    let index = path_for(dir);
    let private = crate::files::private_folder(&index_dir());
    if let Err(why) = &private {
        crate::warn_line!("sparktest: warning: the board index is not kept ({why}): every file is read");
    }
    let mut old = if private.is_ok() { load(&index) } else { BTreeMap::new() };
    let held = old.len();
    let stats: Vec<Option<Stat>> = super::on_every_core(files, |f| {
        std::fs::metadata(f).ok().filter(std::fs::Metadata::is_file).map(|m| Stat::from_metadata(&m))
    });
    let mut slots: Vec<Option<Slot>> = Vec::with_capacity(files.len());
    let mut to_read = Vec::new();
    for (i, (f, stat)) in files.iter().zip(&stats).enumerate() {
        let entry = old.remove(&name(f)).filter(|e| Some(e.stat) == *stat);
        if entry.is_none() {
            to_read.push(i);
        }
        slots.push(entry.map(|e| Slot::Indexed(Box::new(e))));
    }
    let read: Vec<Slot> = super::on_every_core(&to_read, |i| reduce(&files[*i], stats[*i]));
    for (i, slot) in to_read.iter().zip(read) {
        slots[*i] = Some(slot);
    }
    let refresh = Refresh { reused: files.len() - to_read.len(), read: to_read.len(), dropped: old.len() };
    let slots: Vec<Slot> = slots.into_iter().map(|s| s.expect("every file has a slot")).collect();
    let changed = refresh.read > 0 || refresh.dropped > 0 || held != refresh.reused;
    if private.is_ok()
        && changed
        && let Err(e) = store(&index, dir, files, &slots)
    {
        crate::warn_line!("sparktest: warning: the board index {} could not be written: {e}", index.display());
    }
    Ok((slots, refresh))
}

fn name(f: &Path) -> String {
    f.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

/// One line of the index after its head.
#[derive(Serialize, Deserialize)]
struct Line<E> {
    file: String,
    entry: E,
}

/// The entries of an index file by file name; none where there is no
/// index, and none (said once) where it does not parse whole: a damaged
/// index is rebuilt, not trusted in part.
fn load(index: &Path) -> BTreeMap<String, Entry> {
    // A link or another user's file in its place is no index of ours.
    let Some(file) = crate::files::open_private_file(index) else {
        return BTreeMap::new();
    };
    let mut entries = BTreeMap::new();
    let mut lines = std::io::BufReader::new(file).lines();
    let damaged = |at: usize, why: String| {
        crate::warn_line!(
            "sparktest: warning: the board index {} is damaged (line {at}: {why}): it is rebuilt from the measurements",
            index.display()
        );
        BTreeMap::new()
    };
    match lines.next() {
        Some(Ok(head)) if head == HEAD => {}
        // Another layout or harness version: rebuilt without a word.
        Some(Ok(head)) if head.starts_with("sparktest board index ") => return BTreeMap::new(),
        Some(Ok(_)) => return damaged(1, "not a board index".into()),
        Some(Err(e)) => return damaged(1, e.to_string()),
        None => return damaged(1, "empty".into()),
    }
    match lines.next().map(|l| l.map_err(|e| e.to_string()).and_then(|l| folder_of(&l))) {
        Some(Ok(_)) => {}
        Some(Err(why)) => return damaged(2, why),
        None => return damaged(2, "no folder line".into()),
    }
    for (i, line) in lines.enumerate().map(|(i, l)| (i + 1, l)) {
        let parsed = line.map_err(|e| e.to_string()).and_then(|l| {
            let line: Line<Entry> = serde_json::from_str(&l).map_err(|e| e.to_string())?;
            Ok(line)
        });
        match parsed {
            Ok(Line { file, entry }) => {
                entries.insert(file, entry);
            }
            Err(why) => return damaged(i + 2, why),
        }
    }
    entries
}

/// Write the index whole, to a new file renamed over the old, so that a
/// build killed halfway leaves the old index or the new, never half.
fn store(index: &Path, dir: &Path, files: &[PathBuf], slots: &[Slot]) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = index.with_extension(format!("jsonl.{}.tmp", std::process::id()));
    let file = std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&tmp)?;
    let mut out = std::io::BufWriter::new(file);
    writeln!(out, "{HEAD}")?;
    serde_json::to_writer(
        &mut out,
        &Folder { folder: std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf()) },
    )?;
    out.write_all(b"\n")?;
    for (f, slot) in files.iter().zip(slots) {
        if let Slot::Indexed(entry) = slot {
            serde_json::to_writer(&mut out, &Line { file: name(f), entry })?;
            out.write_all(b"\n")?;
        }
    }
    out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    std::fs::rename(&tmp, index).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })?;
    sweep(index);
    Ok(())
}

/// The second line of an index: the folder it is of.
#[derive(Serialize, Deserialize)]
struct Folder {
    folder: PathBuf,
}

fn folder_of(line: &str) -> Result<PathBuf, String> {
    serde_json::from_str::<Folder>(line).map(|f| f.folder).map_err(|e| format!("no folder line: {e}"))
}

/// Remove the indexes of folders that are gone (a test's, a deleted
/// project's), and any index file that is not one: an index is only worth
/// its folder. Read no further than each one's second line.
fn sweep(keep: &Path) {
    let Ok(entries) = std::fs::read_dir(index_dir()) else { return };
    for path in entries.flatten().map(|e| e.path()).filter(|p| p != keep) {
        let Some(file) = crate::files::open_private_file(&path) else { continue };
        let mut lines = std::io::BufReader::new(file).lines();
        let (head, folder) = (lines.next(), lines.next());
        let gone = match (head, folder) {
            (Some(Ok(h)), Some(Ok(f))) if h.starts_with("sparktest board index ") => {
                folder_of(&f).is_ok_and(|f| !f.is_dir())
            }
            // A half-written index of a build that was killed (not one
            // being written now: an hour old).
            _ => {
                path.extension().is_some_and(|x| x == "tmp")
                    && std::fs::metadata(&path)
                        .and_then(|m| m.modified())
                        .is_ok_and(|t| t.elapsed().is_ok_and(|d| d.as_secs() > 3600))
            }
        };
        if gone {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Read one file whole and reduce it; `stat` is the file as it stood
/// before it was read (None: not a regular file).
fn reduce(f: &Path, stat: Option<Stat>) -> Slot {
    let (file, text) = match File::<Unread>::read_text(f) {
        Ok(read) => read,
        Err(e) if e.is_other_version() => return Slot::OtherVersion(e.to_string()),
        Err(e) => {
            return Slot::Left(match e.kind {
                FileErrorKind::Io(io) => {
                    sparktest_record::ReadError { line: 1, message: format!("cannot be read: {io}") }
                }
                FileErrorKind::Format(e) => e,
            });
        }
    };
    let Some(stat) = stat else {
        return Slot::Left(sparktest_record::ReadError {
            line: 1,
            message: "cannot be read: not a regular file".into(),
        });
    };
    let whole = &text.as_bytes()[..file.whole_bytes];
    let digest = crate::files::sha256_hex(whole);
    Slot::Indexed(Box::new(entry_of(stat, digest, parsed_cost(whole), file)))
}

/// What a parsed value costs a reporter beyond its text, about: a string's
/// or a list's header and its allocation, a number's place in a struct.
pub const PARSED_BYTES_PER_VALUE: u64 = 40;

/// About what a reporter holds of a file's whole lines parsed: its bytes,
/// and [`PARSED_BYTES_PER_VALUE`] for every value in them (a comma, or an
/// opening bracket or brace, outside a string). A file of many tiny values
/// (a note `["k","v"]` is nine bytes of text and some eighty parsed) costs
/// several times its size; one of long texts, about its size. An upper
/// bound more than a figure: what the reporter skips unread (the calls)
/// is counted too.
pub fn parsed_cost(text: &[u8]) -> u64 {
    let (mut values, mut in_string, mut escaped) = (0u64, false, false);
    for &b in text {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
        } else {
            match b {
                b'"' => in_string = true,
                b',' | b'[' | b'{' => values += 1,
                _ => {}
            }
        }
    }
    text.len() as u64 + values * PARSED_BYTES_PER_VALUE
}

fn entry_of(stat: Stat, digest: String, cost: u64, file: File<Unread>) -> Entry {
    let run = &file.run;
    let m = &run.manifest;
    let bare = m.arms.iter().find(|a| a.name == sparktest_contract::spec_decode::arm::BARE.name()).map(|a| &a.target);
    let configs = std::iter::once(&m.target)
        .chain(bare)
        .map(|t| {
            let (key, line) = (sparktest_rows::run::base_key(t), sparktest_rows::run::config_line(t));
            fnv(&[key.as_bytes(), line.as_bytes()])
        })
        .collect();
    let mut features: Vec<u64> = run.measured().map(case_feature).collect();
    if let Some(s) = &run.summary {
        features.extend(s.gate.iter().map(|_| fnv(&[b"gate"])));
        features.extend(s.instruments.iter().map(|i| fnv(&[b"summary", i.name.as_bytes()])));
    }
    features.extend(m.target.facts.iter().map(|(k, _)| fnv(&[b"fact", k.as_bytes()])));
    features.extend(m.target.tool_choice.iter().map(|_| fnv(&[b"tool_choice"])));
    features.extend(m.instruments.iter().map(|i| fnv(&[b"instrument", i.name.as_bytes()])));
    features.extend(m.rows.iter().map(|d| fnv(&[b"row", d.title.as_bytes()])));
    // What a declared row's cell asks of a run: that its own suite declares
    // the row and that a case of it feeds the row (`sparktest_rows::coded`).
    // A run of another suite with the same instrument's cases, or a filtered
    // run of the declaring suite that fed the row nothing, has not this.
    features.extend(
        m.rows
            .iter()
            .filter(|d| {
                sparktest_rows::declared_by(d, &m.suite.name) && run.measured().any(|c| sparktest_rows::feeds(d, c))
            })
            .map(|d| fnv(&[b"fed", d.title.as_bytes()])),
    );
    features.sort_unstable();
    features.dedup();
    let count = |o| run.cases.iter().any(|c| c.outcome == o);
    use sparktest_record::Outcome;
    let log = LogCounts {
        failed_case: count(Outcome::Fail),
        lost_case: count(Outcome::Lost),
        unfinished: run.summary.as_ref().is_none_or(|s| s.interrupted.is_some()),
        failed: run.failed(),
    };
    // A partition's parts are one run as the reader merges them: of one
    // group, suite and target (a group name alone is reused).
    let part = m.partition.iter().map(|p| format!("partition {} {} {}", p.group, m.suite.sha256, m.target.name));
    let groups = part.chain(m.repeat.iter().map(|r| format!("repeat {}", r.group)));
    Entry {
        stat,
        digest,
        facts: Facts {
            groups: groups.collect(),
            run_id: m.run_id.clone(),
            started_at: m.started_at.clone(),
            campaign: m.campaign.as_ref().map(|c| c.id.clone()),
            resumes: m.resumes.clone(),
        },
        bytes: file.whole_bytes as u64,
        cost,
        configs,
        features,
        sound: log.failed.is_none(),
        campaign_record: m.suite.name == sparktest_contract::campaign::INSTRUMENT,
        log,
        damage: file.damage.as_ref().map(|d| (d.line, d.message.clone())),
        rows: m.rows.clone(),
        suite: m.suite.name.clone(),
    }
}

/// What a cell may ask of one case, as one digest: the case, and which
/// metrics, notes and tags it carries. A rule that reads a note or a metric
/// skips a case without it (a lost case has none), so a case measured
/// with them and the same case without are two features: the newer one
/// does not stand for the older.
fn case_feature<C>(c: &sparktest_record::CaseRecord<C>) -> u64 {
    let mut parts: Vec<&[u8]> = vec![b"case", c.instrument.as_bytes(), c.id.as_bytes()];
    let mut metrics: Vec<&str> = c.metrics.iter().map(|m| m.name.as_str()).collect();
    let mut notes: Vec<&str> = c.notes.iter().map(|(k, _)| k.as_str()).collect();
    let mut tags: Vec<&str> = c.tags.iter().map(String::as_str).collect();
    for (head, names) in [(b"metrics" as &[u8], &mut metrics), (b"notes", &mut notes), (b"tags", &mut tags)] {
        names.sort_unstable();
        parts.push(head);
        parts.extend(names.iter().map(|n| n.as_bytes()));
    }
    fnv(&parts)
}

/// FNV-1a over some byte strings, each ended by a zero: a stable digest
/// (the index outlives the process), small enough to hold one per case.
fn fnv(parts: &[&[u8]]) -> u64 {
    sparktest_rows::run::fnv1a(parts.iter().flat_map(|p| p.iter().copied().chain([0])))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sparktest_record::{CaseRecord, Metric, Outcome};

    fn case(metrics: &[&str], notes: &[&str]) -> CaseRecord<Unread> {
        let mut c: CaseRecord<Unread> = serde_json::from_value(serde_json::json!({
            "id": "ocr::page-1", "instrument": "ocr", "case": "page-1", "outcome": "pass",
            "transcript_sha256": "", "metrics": [], "notes": [], "tags": [], "started_at": "",
            "seconds": 0.0, "endpoint_seconds": 0.0, "calls": [], "prompt_tokens": null,
            "completion_tokens": null, "snapshots": []
        }))
        .unwrap();
        c.metrics = metrics.iter().map(|m| Metric { name: m.to_string(), value: 1.0, unit: String::new() }).collect();
        c.notes = notes.iter().map(|n| (n.to_string(), "x".to_string())).collect();
        c
    }

    #[test]
    fn a_case_without_the_metrics_or_notes_a_rule_reads_does_not_stand_for_one_with_them() {
        let measured = case_feature(&case(&["score", "words"], &["vision"]));
        // The same names in another order: the same feature.
        assert_eq!(measured, case_feature(&case(&["words", "score"], &["vision"])));
        // Lost: no metric, no note.
        let mut lost = case(&[], &[]);
        lost.outcome = Outcome::Lost;
        assert_ne!(measured, case_feature(&lost));
        assert_ne!(measured, case_feature(&case(&["score", "words"], &[])));
        // A metric name is not read as a note's.
        assert_ne!(case_feature(&case(&["vision"], &[])), case_feature(&case(&[], &["vision"])));
    }
}
