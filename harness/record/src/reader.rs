//! The one reader of measurement files: the board's host and reporter,
//! `diff`, `show` and `--resume` all read through it, so a change to the
//! format is made and tested once.
//!
//! - [`File`]: one file read as far as it is whole, every line parsed once,
//!   keeping of each endpoint call only what the reader asks for (`C`).
//! - [`list`]: the measurement files of a folder.
//! - [`merge`]: runs in start order, each run id once, the parts of a
//!   partitioned run and a run with its resumes read as one [`Run`], each
//!   case once (its later record wins), and every file's run kept for the
//!   run log ([`Logged`]).
//! - [`Run::failed`]: whether a run failed as a run (answered nothing,
//!   stopped early, interrupted, never finished).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use crate::read::first_line;
use crate::{CallRecord, CaseRecord, Efficiency, Gate, Line, Manifest, Outcome, ReadError, Summary};

/// What a reader that needs nothing of the endpoint calls keeps of each:
/// nothing (`File::<Unread>`): the calls are skipped unread.
pub type Unread = serde::de::IgnoredAny;

/// One run: a measurement file, or several read as one by [`merge`] (the
/// parts of a partitioned run; a run and the runs that resumed it).
#[derive(Debug, Clone)]
pub struct Run<C = CallRecord> {
    /// The first line of the run's (first) file.
    pub manifest: Manifest,
    /// Every case once, in the order read.
    pub cases: Vec<CaseRecord<C>>,
    /// The last line, when the run ended normally; for a merged run, the
    /// last part's or resume's with the counts recounted.
    pub summary: Option<Summary>,
    /// Case id → the run id its record came from, where that is not this
    /// run's own (merged parts and resumes).
    pub origin: BTreeMap<String, String>,
    /// The runs that resumed this one, folded into it.
    pub resumed_by: Vec<String>,
    /// The other parts of a partitioned run read with it, by run id.
    pub parts: Vec<String>,
    /// The part indices read into it (a part read twice appears twice).
    pub part_indices: Vec<u32>,
}

impl<C> Run<C> {
    fn new(manifest: Manifest) -> Run<C> {
        let part_indices = manifest.partition.iter().map(|p| p.index).collect();
        Run {
            manifest,
            cases: Vec::new(),
            summary: None,
            origin: BTreeMap::new(),
            resumed_by: Vec::new(),
            parts: Vec::new(),
            part_indices,
        }
    }

    /// The cases that ended in a verdict: an interrupted case (the harness
    /// was stopped while it ran) measured nothing.
    pub fn measured(&self) -> impl Iterator<Item = &CaseRecord<C>> + '_ {
        self.cases.iter().filter(|c| c.outcome != Outcome::Interrupted)
    }

    /// Why this run cannot stand as a measurement over an earlier one of
    /// the same configuration: it answered nothing (every case it measured
    /// was lost), it was stopped early (too many lost in a row, refused
    /// credentials), interrupted, or never finished (no summary line).
    /// None for a run that ran its course and answered something.
    pub fn failed(&self) -> Option<String> {
        let lost = self.measured().filter(|c| c.outcome == Outcome::Lost).count();
        if lost > 0 && lost == self.measured().count() {
            return Some(format!("the server did not answer ({lost} lost)"));
        }
        match &self.summary {
            None => Some("never finished (no summary line: it crashed or was killed)".into()),
            Some(s) => match (&s.interrupted, &s.stopped) {
                (Some(signal), _) => Some(format!("interrupted by {signal}")),
                (None, Some(why)) => Some(format!("stopped early: {why}")),
                (None, None) => None,
            },
        }
    }

    /// The parts of a partitioned run that no file holds.
    pub fn missing_parts(&self) -> Vec<u32> {
        let Some(p) = &self.manifest.partition else {
            return Vec::new();
        };
        (1..=p.total).filter(|i| !self.part_indices.contains(i)).collect()
    }

    /// `run-id#case-id` of a case's record: the run it came from.
    pub fn record_id(&self, case: &CaseRecord<C>) -> String {
        let run = self.origin.get(&case.id).unwrap_or(&self.manifest.run_id);
        let mut id = String::with_capacity(run.len() + 1 + case.id.len());
        id.push_str(run);
        id.push('#');
        id.push_str(&case.id);
        id
    }
}

/// One measurement file read as far as it is whole.
#[derive(Debug)]
pub struct File<C = CallRecord> {
    /// Its run.
    pub run: Run<C>,
    /// The first line that could not be read, if any: a file cut by a
    /// crash or a full disk ends in half a line; a second manifest ends the
    /// file too. The lines before it were read.
    pub damage: Option<ReadError>,
    /// How many bytes of the text are whole lines before the damage:
    /// `&text[..whole_bytes]` is what a strict reader can take.
    pub whole_bytes: usize,
}

impl<C: DeserializeOwned> File<C> {
    /// Parse a file's text, each line once. A file whose manifest is
    /// missing, damaged or of another major version is an error; damage
    /// after it is kept in [`File::damage`].
    pub fn parse(text: &str) -> Result<File<C>, ReadError> {
        let mut run: Option<Run<C>> = None;
        let mut whole_bytes = 0;
        let mut damage = None;
        for (i, raw) in text.split_inclusive('\n').enumerate() {
            let at = i + 1;
            let line = if !raw.ends_with('\n') {
                Err("the line is cut short (no newline at its end: the run crashed or the disk filled)".to_string())
            } else if raw.trim().is_empty() {
                Ok(None)
            } else {
                serde_json::from_str::<Line<C>>(raw).map(Some).map_err(|e| e.to_string())
            };
            let kept = match (line, &mut run) {
                (Ok(None), _) => Ok(()),
                (Ok(Some(line)), None) => {
                    first_line(&line, at)?;
                    if let Line::Manifest(m) = line {
                        run = Some(Run::new(m));
                    }
                    Ok(())
                }
                (Ok(Some(Line::Manifest(_))), Some(_)) => Err("a second manifest".to_string()),
                (Ok(Some(Line::Case(c))), Some(r)) => {
                    r.cases.push(c);
                    Ok(())
                }
                (Ok(Some(Line::Summary(s))), Some(r)) => {
                    r.summary = Some(s);
                    Ok(())
                }
                (Err(message), _) => Err(message),
            };
            match kept {
                Ok(()) => whole_bytes += raw.len(),
                Err(message) => {
                    damage = Some(ReadError { line: at, message });
                    break;
                }
            }
        }
        match run {
            Some(run) => Ok(File { run, damage, whole_bytes }),
            None => Err(damage.unwrap_or(ReadError { line: 1, message: "empty measurement file".into() })),
        }
    }

    /// Read and parse a file. Valid UTF-8 (every file the harness writes)
    /// is taken as it is; anything else is read with replacement
    /// characters.
    pub fn read(path: &Path) -> Result<File<C>, FileError> {
        let (file, _) = Self::read_text(path)?;
        Ok(file)
    }

    /// [`File::read`], handing back the text too (what the board's host
    /// passes on to its reporter).
    pub fn read_text(path: &Path) -> Result<(File<C>, String), FileError> {
        let bytes = std::fs::read(path).map_err(|e| FileError::io(path, e))?;
        let text = String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        let file = Self::parse(&text).map_err(|e| FileError::format(path, e))?;
        Ok((file, text))
    }
}

/// Why a file could not be read at all.
#[derive(Debug)]
pub struct FileError {
    /// The file.
    pub path: PathBuf,
    /// What was wrong.
    pub kind: FileErrorKind,
}

/// What was wrong with a file.
#[derive(Debug)]
pub enum FileErrorKind {
    /// It could not be read.
    Io(std::io::Error),
    /// It is not a measurement file this reader knows: no manifest, a
    /// damaged one, or another major version.
    Format(ReadError),
}

impl FileError {
    fn io(path: &Path, e: std::io::Error) -> FileError {
        FileError { path: path.to_path_buf(), kind: FileErrorKind::Io(e) }
    }

    fn format(path: &Path, e: ReadError) -> FileError {
        FileError { path: path.to_path_buf(), kind: FileErrorKind::Format(e) }
    }

    /// Whether the file is of a major format version this reader refuses
    /// (as opposed to one with no readable manifest).
    pub fn is_other_version(&self) -> bool {
        matches!(&self.kind, FileErrorKind::Format(e) if e.message.contains("format version"))
    }
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            FileErrorKind::Io(e) => write!(f, "failed to read {}: {e}", self.path.display()),
            FileErrorKind::Format(e) => write!(f, "{}: {e}", self.path.display()),
        }
    }
}

impl std::error::Error for FileError {}

/// The measurement files (`*.jsonl`) of a folder, sorted by name.
pub fn list(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    Ok(files)
}

/// A run with every run it resumed in turn, read as one.
#[derive(Debug)]
pub struct Chain<C = CallRecord> {
    /// The manifest of the run asked for (the newest of the chain).
    pub newest: Manifest,
    /// The chain as one run, each case once (its later record wins), its
    /// summary the newest's recounted over the whole: what the run came to.
    pub run: Run<C>,
}

/// Read `<dir>/<run_id>.jsonl` and the runs it resumes, back to the first
/// (a damaged end is kept: that is what a killed run leaves), as one run.
/// A run id that is not a plain file name, or a file that cannot be read,
/// is an error naming it; a loop of resumes ends where it repeats.
pub fn chain<C: DeserializeOwned + Clone>(dir: &Path, run_id: &str) -> Result<Chain<C>, FileError> {
    let mut runs: Vec<Run<C>> = Vec::new();
    let mut next = Some(run_id.to_string());
    while let Some(id) = next.take() {
        if runs.iter().any(|r| r.manifest.run_id == id) || runs.len() > 1000 {
            break;
        }
        let path = dir.join(format!("{id}.jsonl"));
        if id.is_empty() || id.contains(['/', '\\']) || id.starts_with('.') {
            return Err(FileError {
                path,
                kind: FileErrorKind::Format(ReadError {
                    line: 0,
                    message: "not a run id (a file name in the measurements folder)".into(),
                }),
            });
        }
        let file = File::<C>::read(&path)?;
        next = file.run.manifest.resumes.clone();
        runs.push(file.run);
    }
    let newest = runs.first().map(|r| r.manifest.clone()).expect("the run asked for was read");
    let root = runs.last().map(|r| r.manifest.run_id.clone()).unwrap_or_default();
    let merged = merge(runs);
    let run = merged.runs.into_iter().find(|r| r.manifest.run_id == root).expect("the chain's first run is kept");
    Ok(Chain { newest, run })
}

/// One measurement file's run as a run log shows it: its own counts and
/// summary, and how it was read with others.
#[derive(Debug, Clone)]
pub struct Logged {
    /// Its run id.
    pub run_id: String,
    /// Its start time.
    pub started_at: String,
    /// `name version` of the suite.
    pub suite: String,
    /// `model (engine on target, route)`.
    pub target: String,
    /// Its own cases' outcomes, in order.
    pub outcomes: Vec<Outcome>,
    /// Its first failed or lost cases, `id: reason`.
    pub failures: Vec<String>,
    /// Its own summary line.
    pub summary: Option<Summary>,
    /// How it was read with other files ("part 2/5 of run group G, read as
    /// one run with R"), in the order found.
    pub read_as: Vec<String>,
    /// The batch job it ran in, in words (`Slurm job 7_2 on vm (requeued 1
    /// time)`).
    pub job: Option<String>,
}

impl Logged {
    fn of<C>(r: &Run<C>) -> Logged {
        let m = &r.manifest;
        Logged {
            run_id: m.run_id.clone(),
            started_at: m.started_at.clone(),
            suite: format!("{} {}", m.suite.name, m.suite.version),
            target: format!("{} ({} on {}, {})", m.target.model_id, m.target.engine, m.target.name, m.route),
            outcomes: r.cases.iter().map(|c| c.outcome).collect(),
            failures: r
                .cases
                .iter()
                .filter(|c| matches!(c.outcome, Outcome::Fail | Outcome::Lost))
                .take(5)
                .map(|c| format!("{}: {}", c.id, c.reason.as_deref().unwrap_or("")))
                .collect(),
            summary: r.summary.clone(),
            read_as: Vec::new(),
            job: m.job.as_ref().map(crate::JobRef::describe),
        }
    }

    /// Cases of this outcome in the file.
    pub fn count(&self, o: Outcome) -> usize {
        self.outcomes.iter().filter(|x| **x == o).count()
    }
}

/// Runs as read together by [`merge`].
#[derive(Debug)]
pub struct Merged<C = CallRecord> {
    /// One run per run, in start order (then run id): parts and resumes
    /// folded in.
    pub runs: Vec<Run<C>>,
    /// Every file's run, in start order, each its own entry.
    pub log: Vec<Logged>,
    /// Runs given twice (the same run id in two files): read once, the
    /// first in the order given; each named here.
    pub duplicates: Vec<String>,
}

/// Read runs together: ordered by start time then run id, each run id
/// once, resumed runs folded into the runs they resume, then the parts of
/// a partitioned run into one run per (run group, suite digest, target).
/// Each case counts once: a later record replaces an earlier one of the
/// same case, as `--resume` does.
pub fn merge<C: Clone>(runs: Vec<Run<C>>) -> Merged<C> {
    let mut seen = BTreeSet::new();
    let mut duplicates = Vec::new();
    let mut runs: Vec<Run<C>> = runs
        .into_iter()
        .filter(|r| {
            let first = seen.insert(r.manifest.run_id.clone());
            if !first {
                duplicates.push(r.manifest.run_id.clone());
            }
            first
        })
        .collect();
    runs.sort_by(|a, b| {
        (&a.manifest.started_at, &a.manifest.run_id).cmp(&(&b.manifest.started_at, &b.manifest.run_id))
    });
    let mut log: Vec<Logged> = runs.iter().map(Logged::of).collect();
    let at: BTreeMap<String, usize> = log.iter().enumerate().map(|(i, l)| (l.run_id.clone(), i)).collect();
    let mut say = |run_id: &str, words: String| {
        if let Some(&i) = at.get(run_id) {
            log[i].read_as.push(words);
        }
    };
    let runs = resumes(runs, &mut say);
    let runs = partitions(runs, &mut say);
    for r in &runs {
        let missing = r.missing_parts();
        if missing.is_empty() {
            continue;
        }
        let total = r.manifest.partition.as_ref().map_or(0, |p| p.total);
        let parts: Vec<String> = missing.iter().map(u32::to_string).collect();
        let words = format!("PARTIAL: part {} of {total} missing", parts.join(", "));
        for id in std::iter::once(&r.manifest.run_id).chain(r.parts.iter()) {
            say(id, words.clone());
        }
    }
    Merged { runs, log, duplicates }
}

/// Add `from`'s cases to `base`, each case once: a case `base` already
/// holds is replaced by `from`'s later record.
fn fold<C: Clone>(base: &mut Run<C>, from: &Run<C>) {
    let later: BTreeSet<&str> = from.cases.iter().map(|c| c.id.as_str()).collect();
    base.cases.retain(|c| !later.contains(c.id.as_str()));
    for c in &from.cases {
        base.origin.insert(c.id.clone(), from.manifest.run_id.clone());
    }
    base.cases.extend(from.cases.iter().cloned());
}

fn resumes<C: Clone>(runs: Vec<Run<C>>, say: &mut impl FnMut(&str, String)) -> Vec<Run<C>> {
    let mut out: Vec<Run<C>> = Vec::new();
    for r in runs {
        let Some(of) = r.manifest.resumes.clone() else {
            out.push(r);
            continue;
        };
        // The run it resumes, or one that already folded it in.
        let base = out.iter_mut().find(|b| b.manifest.run_id == of || b.resumed_by.contains(&of));
        let Some(base) = base else {
            say(&r.manifest.run_id, format!("resumes {of}, which no file holds: read alone"));
            out.push(r);
            continue;
        };
        fold(base, &r);
        base.resumed_by.push(r.manifest.run_id.clone());
        say(&of, format!("resumed by {}", r.manifest.run_id));
        say(
            &r.manifest.run_id,
            format!(
                "resumes {of}: read as one run with {}, its records replacing the earlier ones",
                base.manifest.run_id
            ),
        );
        // The whole is complete when the last resume ended normally.
        base.summary = r.summary.as_ref().map(|s| recount(s, base));
    }
    out
}

fn partitions<C: Clone>(runs: Vec<Run<C>>, say: &mut impl FnMut(&str, String)) -> Vec<Run<C>> {
    let mut out: Vec<Run<C>> = Vec::new();
    let mut groups: BTreeMap<(String, String, String), usize> = BTreeMap::new();
    for r in runs {
        let Some(p) = r.manifest.partition.clone() else {
            out.push(r);
            continue;
        };
        let key = (p.group.clone(), r.manifest.suite.sha256.clone(), r.manifest.target.name.clone());
        let Some(&at) = groups.get(&key) else {
            groups.insert(key, out.len());
            out.push(r);
            continue;
        };
        let base = &mut out[at];
        let again = base.part_indices.contains(&p.index);
        fold(base, &r);
        base.part_indices.push(p.index);
        base.parts.push(r.manifest.run_id.clone());
        let part = format!("part {}/{} of run group {}", p.index, p.total, p.group);
        say(
            &r.manifest.run_id,
            if again {
                format!(
                    "{part} again: read as one run with {}, its records replacing the earlier ones (each case counted once)",
                    base.manifest.run_id
                )
            } else {
                format!("{part}: read as one run with {}", base.manifest.run_id)
            },
        );
        base.summary = match (&base.summary, &r.summary) {
            (Some(a), Some(s)) => {
                // A gate split across parts passes only if every part did.
                let gate = match (&a.gate, &s.gate) {
                    (Some(x), Some(y)) => Some(Gate {
                        passed: x.passed && y.passed,
                        failing: x.failing.iter().chain(&y.failing).cloned().collect(),
                    }),
                    (x, y) => x.clone().or_else(|| y.clone()),
                };
                let mut merged = recount(s, base);
                merged.gate = gate;
                Some(merged)
            }
            _ => None,
        };
    }
    out
}

/// A summary whose counts and efficiency readout are the merged run's own.
fn recount<C>(last: &Summary, run: &Run<C>) -> Summary {
    let n = |o: Outcome| run.cases.iter().filter(|c| c.outcome == o).count() as u64;
    let mut efficiency = Efficiency::default();
    run.cases.iter().for_each(|c| efficiency.add(c));
    Summary {
        passed: n(Outcome::Pass),
        failed: n(Outcome::Fail),
        lost: n(Outcome::Lost),
        not_applicable: n(Outcome::NotApplicable),
        interrupted_cases: n(Outcome::Interrupted),
        instruments: efficiency.summaries(),
        ..last.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::*;

    fn parse(text: &str) -> Result<File, ReadError> {
        File::parse(text)
    }

    #[test]
    fn line_is_tagged_type_and_data() {
        let line: Line = Line::Summary(Summary {
            finished_at: "2026-01-01T00:00:00Z".into(),
            seconds: 1.5,
            passed: 1,
            failed: 2,
            lost: 3,
            not_applicable: 0,
            instruments: vec![],
            gate: None,
            stopped: None,
            interrupted: None,
            interrupted_cases: 0,
        });
        let json = serde_json::to_value(&line).unwrap();
        assert_eq!(json["type"], "summary");
        assert_eq!(json["data"]["lost"], 3);
    }

    fn manifest(version: &str) -> Line {
        Line::Manifest(Manifest {
            format_version: version.into(),
            run_id: "r".into(),
            started_at: "2026-01-01T00:00:00Z".into(),
            harness: HarnessInfo { version: "0.1.0".into(), git_revision: None },
            suite: SuiteInfo { name: "s".into(), version: "1".into(), sha256: "00".into(), files: vec![] },
            target: TargetInfo {
                name: "t".into(),
                base_url: "http://127.0.0.1:1".into(),
                model_id: "m".into(),
                engine: "llama.cpp".into(),
                build: None,
                model_path: None,
                model_sha256: None,
                launch_command: None,
                facts: vec![],
                host: None,
                tool_choice: None,
                label: None,
                note: None,
                description: None,
            },
            client_host: HostInfo {
                hostname: None,
                cpu_model: None,
                cores: 2,
                memory_bytes: 1,
                memory_available_bytes: 1,
                os: None,
                kernel: None,
                accelerators: vec![],
            },
            route: "direct".into(),
            instruments: vec![],
            arms: vec![],
            client_ceiling: None,
            judge: None,
            partition: None,
            resumes: None,
            suite_cases: Default::default(),
            repeat: None,
            campaign: None,
            job: None,
        })
    }

    #[test]
    fn a_1_0_file_without_the_1_1_fields_still_loads() {
        let v10 = r#"{"type":"manifest","data":{"format_version":"1.0","run_id":"r","started_at":"t","harness":{"version":"0.1.0","git_revision":null},"suite":{"name":"s","version":"1","sha256":"00","files":[]},"target":{"name":"t","base_url":"u","model_id":"m","engine":"llama.cpp","build":null,"model_path":null,"model_sha256":null,"launch_command":null,"facts":[]},"client_host":{"hostname":null,"cpu_model":null,"cores":2,"memory_bytes":1,"memory_available_bytes":1,"os":null,"kernel":null},"route":"direct","instruments":[]}}
{"type":"case","data":{"id":"a::b","instrument":"a","case":"b","tags":[],"outcome":"pass","reason":null,"metrics":[],"notes":[],"started_at":"t","seconds":1.0,"endpoint_seconds":0.5,"calls":[{"kind":"chat","result":"ok","status":200,"total_ms":1.0,"ttft_ms":null,"decode_ms":null,"prompt_tokens":1,"completion_tokens":1,"token_source":"server-usage"}],"prompt_tokens":1,"completion_tokens":1,"transcript_sha256":"00","snapshots":[]}}
{"type":"summary","data":{"finished_at":"t","seconds":1.0,"passed":1,"failed":0,"lost":0,"not_applicable":0}}
"#;
        let file = parse(v10).unwrap();
        assert!(file.damage.is_none() && file.run.summary.is_some());
        let c = &file.run.cases[0];
        assert_eq!((c.arm.as_deref(), c.calls[0].server_load.as_ref()), (None, None));
    }

    #[test]
    fn reads_its_own_version_and_refuses_another_major() {
        let ok = serde_json::to_string(&manifest("1.3")).unwrap() + "\n";
        assert_eq!(parse(&ok).unwrap().run.manifest.format_version, "1.3");
        let future = serde_json::to_string(&manifest("2.0")).unwrap() + "\n";
        let err = parse(&future).unwrap_err();
        assert_eq!(err.line, 1);
        assert!(err.message.contains("format version 2.0"), "{err}");
    }

    #[test]
    fn the_first_line_must_be_a_manifest() {
        let err = parse("{\"type\":\"summary\",\"data\":{\"finished_at\":\"x\",\"seconds\":0,\"passed\":0,\"failed\":0,\"lost\":0,\"not_applicable\":0}}\n")
            .unwrap_err();
        assert!(err.message.contains("not a manifest"), "{err}");
    }

    #[test]
    fn a_cut_file_keeps_every_whole_line_and_names_the_cut() {
        let m = serde_json::to_string(&manifest("1.2")).unwrap();
        let whole = format!("{m}\n");
        let cut = format!("{m}\n{{\"type\":\"case\",\"data\":{{\"id\":\"a");
        let p = parse(&cut).unwrap();
        assert_eq!((p.run.cases.len(), p.whole_bytes), (0, whole.len()));
        let damage = p.damage.unwrap();
        assert_eq!(damage.line, 2);
        assert!(damage.message.contains("cut short"), "{damage}");
        assert!(parse(&whole).unwrap().damage.is_none());
        // A damaged line in the middle ends what is read there too, and so
        // does a second manifest.
        let mid = format!("{m}\nnot json\n{m}\n");
        assert_eq!(parse(&mid).unwrap().damage.unwrap().line, 2);
        let twice = format!("{m}\n{m}\n");
        let d = parse(&twice).unwrap().damage.unwrap();
        assert_eq!((d.line, d.message.as_str()), (2, "a second manifest"));
        // Without a manifest there is nothing to keep.
        assert!(parse("{\"type\":\"sum").is_err());
    }

    #[test]
    fn garbage_names_its_line() {
        let err = parse("\n{not json").unwrap_err();
        assert_eq!(err.line, 2);
    }

    fn case(id: &str, outcome: &str) -> CaseRecord {
        serde_json::from_value(serde_json::json!({
            "id": id, "instrument": "a", "case": id, "tags": [], "outcome": outcome, "reason": null,
            "metrics": [], "notes": [], "started_at": "t", "seconds": 1.0, "endpoint_seconds": 0.5,
            "calls": [], "prompt_tokens": null, "completion_tokens": 10, "transcript_sha256": "00",
            "snapshots": []
        }))
        .unwrap()
    }

    fn summary() -> Summary {
        Summary {
            finished_at: "t".into(),
            seconds: 1.0,
            passed: 0,
            failed: 0,
            lost: 0,
            not_applicable: 0,
            instruments: vec![],
            gate: None,
            stopped: None,
            interrupted: None,
            interrupted_cases: 0,
        }
    }

    /// A run `id` started at `at`, with `(case, outcome)` records.
    fn run(id: &str, at: &str, cases: &[(&str, &str)]) -> Run {
        let Line::Manifest(mut m) = manifest("1.4") else { unreachable!() };
        m.run_id = id.into();
        m.started_at = at.into();
        let mut r = Run::new(m);
        r.cases = cases.iter().map(|(c, o)| case(c, o)).collect();
        r.summary = Some(summary());
        r
    }

    fn part(mut r: Run, index: u32) -> Run {
        r.manifest.partition = Some(Partition { scheme: "count".into(), index, total: 3, group: "g".into() });
        r.part_indices = vec![index];
        r
    }

    #[test]
    fn a_part_read_twice_counts_each_case_once_the_later_record_winning() {
        let a = part(run("a", "1", &[("x", "fail"), ("y", "fail")]), 1);
        let b = part(run("b", "2", &[("x", "pass"), ("y", "pass")]), 1);
        let c = part(run("c", "3", &[("z", "pass")]), 2);
        let m = merge(vec![c, b, a]);
        assert_eq!(m.runs.len(), 1, "one run group");
        let r = &m.runs[0];
        let mut got: Vec<(&str, Outcome)> = r.cases.iter().map(|c| (c.id.as_str(), c.outcome)).collect();
        got.sort_by_key(|(id, _)| *id);
        assert_eq!(got, [("x", Outcome::Pass), ("y", Outcome::Pass), ("z", Outcome::Pass)]);
        assert_eq!(r.record_id(&r.cases[0]), "b#x", "a record names the run it came from");
        assert_eq!(r.missing_parts(), [3]);
        // The readout is recounted from the cases kept, not the last part's.
        let e = &r.summary.as_ref().unwrap().instruments[0];
        assert_eq!((e.given, e.correct, e.output_tokens_per_correct), (3, 3, Some(10.0)));
        // Every file stays its own entry in the log, in start order.
        let ids: Vec<&str> = m.log.iter().map(|l| l.run_id.as_str()).collect();
        assert_eq!(ids, ["a", "b", "c"]);
        assert!(m.log[1].read_as[0].starts_with("part 1/3 of run group g again"), "{:?}", m.log[1].read_as);
        assert!(m.log[0].read_as.iter().any(|w| w == "PARTIAL: part 3 of 3 missing"), "{:?}", m.log[0].read_as);
    }

    #[test]
    fn a_run_id_given_twice_is_read_once_and_named() {
        let m = merge(vec![run("a", "1", &[("x", "pass")]), run("a", "1", &[("x", "fail")])]);
        assert_eq!((m.runs.len(), m.log.len(), m.duplicates.as_slice()), (1, 1, ["a".to_string()].as_slice()));
        assert_eq!(m.runs[0].cases[0].outcome, Outcome::Pass, "the first given");
    }

    #[test]
    fn a_chain_of_resumes_reads_as_one_run_finished_by_its_last() {
        let mut first = run("a", "1", &[("x", "pass"), ("y", "lost")]);
        first.summary = None;
        let mut second = run("b", "2", &[("y", "lost")]);
        second.manifest.resumes = Some("a".into());
        second.summary.as_mut().unwrap().interrupted = Some("SIGINT".into());
        let mut third = run("c", "3", &[("y", "pass")]);
        third.manifest.resumes = Some("b".into());
        let m = merge(vec![first.clone(), second.clone(), third]);
        assert_eq!(m.runs.len(), 1);
        let r = &m.runs[0];
        assert_eq!(r.resumed_by, ["b", "c"]);
        assert!(r.cases.iter().all(|c| c.outcome == Outcome::Pass), "the later record wins");
        assert_eq!(r.failed(), None, "finished by its last resume");
        // Without the last resume it is interrupted; without any, unfinished.
        assert_eq!(merge(vec![first.clone(), second]).runs[0].failed().as_deref(), Some("interrupted by SIGINT"));
        assert!(first.failed().unwrap().starts_with("never finished"));
    }

    #[test]
    fn a_run_that_answered_nothing_failed_as_a_run() {
        let dead = run("a", "1", &[("x", "lost"), ("y", "lost")]);
        assert_eq!(dead.failed().as_deref(), Some("the server did not answer (2 lost)"));
        let mut stopped = run("b", "1", &[("x", "pass"), ("y", "lost")]);
        stopped.summary.as_mut().unwrap().stopped = Some("5 cases in a row were lost".into());
        assert_eq!(stopped.failed().as_deref(), Some("stopped early: 5 cases in a row were lost"));
        assert_eq!(run("c", "1", &[("x", "fail"), ("y", "lost")]).failed(), None, "it answered one");
    }
}
