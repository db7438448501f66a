//! The campaign's journal: `measurements/campaigns/<id>.jsonl`, one JSON
//! line per step, appended and synced as the step happens, so that
//! `--resume ID` after a crash, a reboot or a SIGKILL knows what is done.
//! Lines are `{"type": …, "data": …}` like a measurement file's: `begin`
//! (the campaign as planned), then `step` lines, then `end`. A last line
//! cut by a power loss is named and dropped, never a panic; the journal is
//! then cut back to its whole lines before anything is appended. A damaged
//! line with whole lines after it is not a crash's: the resume is refused
//! naming it, and `--force` drops just that line, keeping the journal as it
//! was beside it.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::file::{Configuration, OnGateFail, SuiteStep};
use crate::error::{Error, ErrorKind};

/// The first line: the campaign as it was planned on this box.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Begin {
    /// The campaign id (the journal's file stem).
    pub id: String,
    /// The campaign's name in its file.
    pub name: String,
    /// The campaign file as given.
    pub file: String,
    /// sha256 of its bytes: a resume refuses a changed file.
    pub file_sha256: String,
    /// Its text, so a changed file can be told by what changed.
    pub file_text: String,
    /// RFC 3339 UTC.
    pub started_at: String,
    /// `hash:K/N` or `count:K/N`: this box's share of the configurations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// Every configuration of the campaign, in order.
    pub configurations: Vec<Configuration>,
    /// The configurations this box runs (its partition's share).
    pub mine: Vec<String>,
    /// The suites, gate first.
    pub suites: Vec<SuiteStep>,
    /// What a failed gate does.
    pub on_gate_fail: OnGateFail,
}

/// Which part of a configuration a step is.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// Launching and probing its target.
    Launch,
    /// One suite on the launched server.
    Suite,
    /// Stopping the server and waiting for its memory.
    Stop,
}

/// How a step ended, or that it began.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    /// It began (a suite: its run id is known).
    Started,
    /// It ran its course (a suite whose cases failed ran its course too).
    Done,
    /// It could not be done: a launch that failed, a suite stopped early
    /// (the server died) or refused before its first case.
    Failed,
    /// Not run, and why (a failed gate, a failed launch).
    Skipped,
    /// Ctrl-C, SIGTERM or SIGHUP while it ran.
    Interrupted,
}

/// Why a suite was not run: what a resume does with it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Skip {
    /// The configuration failed the gate: a verdict, which a resume keeps.
    Gate,
    /// The configuration's launch failed: a resume launches it again.
    Launch,
    /// The server stopped answering in an earlier suite: a resume runs it
    /// on a new launch.
    ServerGone,
}

/// Cases of a suite step by outcome.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Counts {
    /// Passed.
    pub passed: u64,
    /// Failed.
    pub failed: u64,
    /// Lost.
    pub lost: u64,
    /// Not applicable.
    pub not_applicable: u64,
}

impl From<crate::runner::tally::Counts> for Counts {
    fn from(c: crate::runner::tally::Counts) -> Counts {
        Counts { passed: c.passed, failed: c.failed, lost: c.lost, not_applicable: c.not_applicable }
    }
}

/// The memory a configuration's server held, before its launch and after
/// its stop.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct Memory {
    /// Host memory available before the launch, GiB.
    pub before_gib: f64,
    /// Host memory available once the server stopped and the wait ended.
    pub after_gib: f64,
    /// GPU memory in use before the launch, GiB, where a GPU is seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_before_gib: Option<f64>,
    /// GPU memory in use after the wait.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_after_gib: Option<f64>,
    /// Seconds waited after the stop.
    pub waited_secs: f64,
    /// Whether it came back within the campaign's `settle-gib`.
    pub released: bool,
}

/// One step.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Step {
    /// The configuration's name.
    pub configuration: String,
    /// Which part.
    pub phase: Phase,
    /// The suite, for a suite step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<String>,
    /// How it stands.
    pub state: State,
    /// RFC 3339 UTC.
    pub at: String,
    /// The suite's run id (the first repeat's for `repeat` > 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// Why it failed, was skipped or interrupted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Wall seconds of the step.
    #[serde(default)]
    pub seconds: f64,
    /// A suite's cases by outcome.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<Counts>,
    /// A stop's memory figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<Memory>,
    /// The gate suite's verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<bool>,
    /// Why a skipped suite was not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip: Option<Skip>,
}

/// The last line of a campaign that ended (normally or by a signal).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct End {
    /// RFC 3339 UTC.
    pub finished_at: String,
    /// The signal that ended it, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<String>,
    /// The campaign's exit code.
    pub code: i32,
}

/// One journal line.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", content = "data", rename_all = "kebab-case")]
pub enum Line {
    /// The first line.
    Begin(Box<Begin>),
    /// A step.
    Step(Step),
    /// The last line.
    End(End),
}

/// A journal as read back.
#[derive(Debug)]
pub struct Read {
    /// Its first line.
    pub begin: Begin,
    /// Every whole step line, in order.
    pub steps: Vec<Step>,
    /// Its end, if it ended.
    pub end: Option<End>,
    /// A damaged line it ended in (a power loss cut it): `line N: why`.
    pub damage: Option<String>,
    /// Bytes of whole lines before the damage.
    pub whole_bytes: usize,
    /// Damaged lines with whole lines after them (a disk error, a hand
    /// edit): `(line number, why, the line's byte range)`. Never dropped
    /// unless asked ([`Journal::drop_damaged`]).
    pub damaged: Vec<(usize, String, std::ops::Range<usize>)>,
}

impl Read {
    /// Why the journal cannot be resumed as it is: a damaged line with whole
    /// lines after it, named with how to go on.
    pub fn refusal(&self, path: &Path) -> Option<String> {
        let (line, why, _) = self.damaged.first()?;
        Some(format!(
            "{}: line {line} is damaged ({why}) and whole lines follow it, so no crash cut it; nothing was dropped. \
             Give --force to drop just the damaged line{} (the journal as it is now is kept beside it)",
            path.display(),
            if self.damaged.len() > 1 { format!("s ({} in all)", self.damaged.len()) } else { String::new() }
        ))
    }
}

/// An open journal, appended to line by line.
pub struct Journal {
    path: PathBuf,
    file: std::fs::File,
}

fn io(path: &Path, what: &str, e: std::io::Error) -> Error {
    Error::new(ErrorKind::Io, format!("failed to {what} the campaign journal {}: {e}", path.display()))
}

/// Where a campaign's journal lives.
pub fn path(measurements: &Path, id: &str) -> PathBuf {
    measurements.join("campaigns").join(format!("{id}.jsonl"))
}

impl Journal {
    /// Start a new journal with its first line; refused if one of that id
    /// exists (resume it instead).
    pub fn create(path: &Path, begin: Begin) -> Result<Journal, Error> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| io(path, "create the folder of", e))?;
        }
        let file = std::fs::OpenOptions::new().create_new(true).append(true).open(path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                Error::new(
                    ErrorKind::Setup,
                    format!(
                        "campaign {} already has a journal ({}): resume it with --resume {}, or give another --id",
                        begin.id,
                        path.display(),
                        begin.id
                    ),
                )
            } else {
                io(path, "create", e)
            }
        })?;
        let mut j = Journal { path: path.to_path_buf(), file };
        j.append(&Line::Begin(Box::new(begin)))?;
        Ok(j)
    }

    /// Drop the damaged lines that have whole lines after them (`--force`),
    /// and nothing else: the journal as it was is kept beside it
    /// (`<id>.jsonl.damaged-<time>`), the rest written to a new file that
    /// replaces it in one rename. Returns where the old one was kept.
    pub fn drop_damaged(path: &Path, read: &Read) -> Result<PathBuf, Error> {
        let text = std::fs::read(path).map_err(|e| io(path, "read", e))?;
        let kept =
            path.with_extension(format!("jsonl.damaged-{}", crate::timestamp::compact(std::time::SystemTime::now())));
        std::fs::write(&kept, &text).map_err(|e| io(&kept, "keep a copy of", e))?;
        let mut out = Vec::with_capacity(text.len());
        let mut from = 0;
        for (_, _, r) in &read.damaged {
            out.extend_from_slice(&text[from..r.start]);
            from = r.end;
        }
        out.extend_from_slice(&text[from..]);
        crate::campaign::lock::replace(path, &out).map_err(|e| io(path, "rewrite", e))?;
        Ok(kept)
    }

    /// Open a journal to append to after [`read`]: a damaged end is cut off
    /// first, so the next line starts on a line of its own.
    pub fn reopen(path: &Path, read: &Read) -> Result<Journal, Error> {
        let file = std::fs::OpenOptions::new().append(true).open(path).map_err(|e| io(path, "open", e))?;
        if read.damage.is_some() {
            let len = std::fs::metadata(path).map_err(|e| io(path, "read", e))?.len();
            // Only what lies after the last whole line: a cut end.
            if read.whole_bytes as u64 <= len {
                file.set_len(read.whole_bytes as u64).map_err(|e| io(path, "cut the damaged end of", e))?;
            }
        }
        Ok(Journal { path: path.to_path_buf(), file })
    }

    /// Append one line and sync it to the disk before going on.
    pub fn append(&mut self, line: &Line) -> Result<(), Error> {
        let mut text = serde_json::to_string(line).map_err(|e| io(&self.path, "encode a line of", e.into()))?;
        text.push('\n');
        self.file.write_all(text.as_bytes()).map_err(|e| io(&self.path, "write", e))?;
        self.file.sync_data().map_err(|e| io(&self.path, "sync", e))
    }

    /// Append a step.
    pub fn step(&mut self, step: Step) -> Result<(), Error> {
        self.append(&Line::Step(step))
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Read a journal back, as far as it is whole.
pub fn read(path: &Path) -> Result<Read, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::new(ErrorKind::Setup, format!("failed to read the campaign journal {}: {e}", path.display()))
    })?;
    parse(&text).map_err(|e| Error::new(ErrorKind::Setup, format!("{}: {e}", path.display())))
}

/// [`read`] on text: the first line must be a `begin`. A damaged last line
/// (a power loss cut it) is named and left out ([`Read::damage`]); a damaged
/// line with whole lines after it is named and kept apart
/// ([`Read::damaged`]), its neighbours read.
pub fn parse(text: &str) -> Result<Read, String> {
    let mut begin = None;
    let mut steps = Vec::new();
    let mut end = None;
    let mut whole_bytes = 0;
    let mut bad: Vec<(usize, String, std::ops::Range<usize>)> = Vec::new();
    let mut at = 0;
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        let range = at..at + raw.len();
        at += raw.len();
        let line = if !raw.ends_with('\n') {
            Err("the line is cut short (no newline at its end: the campaign was killed or the power went)".to_string())
        } else if raw.trim().is_empty() {
            whole_bytes = range.end;
            continue;
        } else {
            serde_json::from_str::<Line>(raw).map_err(|e| e.to_string())
        };
        match (line, begin.is_some()) {
            (Ok(Line::Begin(b)), false) => begin = Some(*b),
            (Ok(Line::Step(s)), true) => steps.push(s),
            (Ok(Line::End(e)), true) => end = Some(e),
            (Ok(_), false) => return Err(format!("line {}: the first line is not the campaign's begin", i + 1)),
            (Ok(Line::Begin(_)), true) => {
                bad.push((i + 1, "a second begin".into(), range));
                continue;
            }
            (Err(e), false) => return Err(format!("line {}: {e}", i + 1)),
            (Err(e), true) => {
                bad.push((i + 1, e, range));
                continue;
            }
        }
        whole_bytes = range.end;
    }
    let begin = begin.ok_or("an empty campaign journal")?;
    // A damaged line after the last whole one is what a crash leaves; one
    // with whole lines after it is not, and is never cut away unasked.
    let (tail, damaged): (Vec<_>, Vec<_>) = bad.into_iter().partition(|(_, _, r)| r.start >= whole_bytes);
    let damage = tail.first().map(|(n, why, _)| format!("line {n}: {why}"));
    Ok(Read { begin, steps, end, damage, whole_bytes, damaged })
}

impl Read {
    /// How a suite of a configuration stands: its last step line.
    pub fn suite(&self, configuration: &str, suite: &str) -> Option<&Step> {
        self.steps
            .iter()
            .rev()
            .find(|s| s.configuration == configuration && s.phase == Phase::Suite && s.suite.as_deref() == Some(suite))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn begin() -> Begin {
        Begin {
            id: "night-1".into(),
            name: "night".into(),
            file: "campaign.toml".into(),
            file_sha256: "00".into(),
            file_text: String::new(),
            started_at: "t".into(),
            partition: None,
            configurations: vec![],
            mine: vec![],
            suites: vec![],
            on_gate_fail: OnGateFail::Skip,
        }
    }

    fn step(config: &str, suite: &str, state: State) -> Step {
        Step {
            configuration: config.into(),
            phase: Phase::Suite,
            suite: Some(suite.into()),
            state,
            at: "t".into(),
            run_id: Some("r1".into()),
            reason: None,
            seconds: 1.0,
            counts: None,
            memory: None,
            gate: None,
            skip: None,
        }
    }

    #[test]
    fn a_journal_cut_by_a_power_loss_is_named_and_cut_back_before_the_next_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = path(dir.path(), "night-1");
        let mut j = Journal::create(&p, begin()).unwrap();
        j.step(step("a", "smoke", State::Started)).unwrap();
        j.step(step("a", "smoke", State::Done)).unwrap();
        drop(j);
        // The power goes as the next line is half written.
        let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(b"{\"type\":\"step\",\"data\":{\"configuration\":\"a\",\"ph").unwrap();
        drop(f);
        let r = read(&p).unwrap();
        assert_eq!(r.steps.len(), 2);
        assert!(r.damage.as_deref().unwrap().starts_with("line 4: the line is cut short"), "{:?}", r.damage);
        assert_eq!(r.suite("a", "smoke").map(|s| s.state), Some(State::Done));
        let mut j = Journal::reopen(&p, &r).unwrap();
        j.step(step("a", "speed", State::Started)).unwrap();
        let again = read(&p).unwrap();
        assert!(again.damage.is_none(), "{:?}", again.damage);
        assert_eq!(again.steps.len(), 3);
        // A second journal of the same id is refused, naming the resume.
        let e = Journal::create(&p, begin()).err().unwrap().to_string();
        assert!(e.contains("--resume night-1"), "{e}");
    }

    #[test]
    fn a_byte_damaged_in_the_middle_is_named_and_only_force_drops_that_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = path(dir.path(), "night-1");
        let mut j = Journal::create(&p, begin()).unwrap();
        for suite in ["smoke", "speed", "battery"] {
            j.step(step("a", suite, State::Started)).unwrap();
            j.step(step("a", suite, State::Done)).unwrap();
        }
        drop(j);
        // One byte of line 4 (the speed suite's start) turns to garbage.
        let mut text = std::fs::read(&p).unwrap();
        let lines: Vec<usize> = text.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(i, _)| i).collect();
        text[lines[2] + 3] = b'#';
        std::fs::write(&p, &text).unwrap();
        let r = read(&p).unwrap();
        assert!(r.damage.is_none(), "not a cut end: {:?}", r.damage);
        assert_eq!(r.damaged.len(), 1);
        assert_eq!(r.damaged[0].0, 4);
        assert_eq!(r.steps.len(), 5, "the lines around it are read");
        let why = r.refusal(&p).unwrap();
        assert!(
            why.contains("line 4 is damaged") && why.contains("--force") && why.contains("nothing was dropped"),
            "{why}"
        );
        assert_eq!(std::fs::read(&p).unwrap(), text, "nothing deleted");
        // --force: that line goes, the rest stays, the old journal is kept.
        let kept = Journal::drop_damaged(&p, &r).unwrap();
        assert_eq!(std::fs::read(&kept).unwrap(), text);
        let again = read(&p).unwrap();
        assert!(again.damaged.is_empty() && again.damage.is_none());
        assert_eq!(again.steps.len(), 5);
        assert_eq!(again.suite("a", "battery").map(|s| s.state), Some(State::Done));
    }

    #[test]
    fn a_journal_that_is_not_one_is_refused_by_line() {
        assert!(parse("{\"type\":\"step\"}\n").unwrap_err().starts_with("line 1"));
        assert!(parse("").unwrap_err().contains("empty"));
        assert!(parse("garbage\n").unwrap_err().starts_with("line 1"));
    }
}
