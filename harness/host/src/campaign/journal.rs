//! The campaign's journal, one file per configuration, so that no two
//! processes (two boxes of a partitioned campaign, two Slurm array tasks on
//! a shared folder) ever write one file:
//!
//! - `measurements/campaigns/<id>/campaign.json`: the campaign as planned
//!   ([`Plan`]), written once; every later run of the id compares its
//!   campaign file with it.
//! - `measurements/campaigns/<id>/<configuration>.jsonl`: that
//!   configuration's steps, one JSON line each (`{"type": …, "data": …}`
//!   like a measurement file's): a `session` line for each process that
//!   took it up (where, which share, which Slurm task), then its `step`
//!   lines, then its `end`. Only the holder of `<configuration>.lock`
//!   writes it, and every write replaces the whole file in one rename
//!   ([`crate::files::replace`]), so that a reader on another node (NFS)
//!   never sees half a line and a crash leaves the last whole version.
//!
//! `--resume ID` (and a requeued Slurm task) reads the configurations'
//! journals back ([`read_all`]) and goes on where each stands. A damaged
//! line is any that does not read as a line of this version, whatever its
//! bytes (cut short, not UTF-8, not JSON). A damaged last line (a disk
//! that lost the end) is named and dropped; a damaged line with whole
//! lines after it is refused, naming it, and `--force` drops just that
//! line, keeping the journal as it was beside it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::file::{Configuration, OnGateFail, SuiteStep};
use super::lock::Lock;
use crate::error::Error;
use crate::files::replace;

/// `campaign.json`: the campaign as planned, written once per id.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Plan {
    /// The campaign id (its folder's name).
    pub id: String,
    /// The campaign's name in its file.
    pub name: String,
    /// The campaign file as given.
    pub file: String,
    /// sha256 of its bytes: a later run refuses a changed file.
    pub file_sha256: String,
    /// Its text, so a changed file can be told by what changed.
    pub file_text: String,
    /// RFC 3339 UTC.
    pub started_at: String,
    /// Every configuration of the campaign, in order.
    pub configurations: Vec<Configuration>,
    /// The suites, gate first.
    pub suites: Vec<SuiteStep>,
    /// What a failed gate does.
    pub on_gate_fail: OnGateFail,
}

/// A process taking up a configuration: the first line of each of its
/// turns in the configuration's journal.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Session {
    /// RFC 3339 UTC.
    pub started_at: String,
    /// The host's name.
    pub host: String,
    /// The process.
    pub pid: u32,
    /// Which share of the campaign the process ran: `every configuration`,
    /// `partition hash:1/3`, `configuration 2`.
    pub share: String,
    /// Whether it resumed the campaign (`--resume`, or a configuration
    /// taken up again), and with `--force`.
    #[serde(default)]
    pub resumed: bool,
    /// `--force` was given.
    #[serde(default)]
    pub forced: bool,
    /// The batch job it ran in (a Slurm array task).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<sparktest_record::JobRef>,
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

impl From<crate::tally::Counts> for Counts {
    fn from(c: crate::tally::Counts) -> Counts {
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

/// The end of a process's turn at a configuration.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct End {
    /// RFC 3339 UTC.
    pub finished_at: String,
    /// The signal that ended it, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<String>,
    /// The configuration's exit code (as the campaign's would be for it).
    pub code: i32,
}

/// One line of a configuration's journal.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", content = "data", rename_all = "kebab-case")]
pub enum Line {
    /// A process took the configuration up.
    Session(Session),
    /// A step.
    Step(Step),
    /// The process's turn ended.
    End(End),
}

/// A configuration's journal as read back.
#[derive(Debug, Clone, Default)]
pub struct Read {
    /// Every session, in order.
    pub sessions: Vec<Session>,
    /// Every whole step line, in order.
    pub steps: Vec<Step>,
    /// Every session's end, in order.
    pub ends: Vec<End>,
    /// A damaged last line: `line N: why`.
    pub damage: Option<String>,
    /// Damaged lines with whole lines after them: `(line number, why, the
    /// line's byte range)`. Never dropped unless asked
    /// ([`ConfigJournal::drop_damaged`]).
    pub damaged: Vec<(usize, String, std::ops::Range<usize>)>,
}

impl Read {
    /// How a suite stands: its last step line.
    pub fn suite(&self, suite: &str) -> Option<&Step> {
        self.steps.iter().rev().find(|s| s.phase == Phase::Suite && s.suite.as_deref() == Some(suite))
    }

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

fn journal_failed(path: &Path, what: &str, e: std::io::Error) -> Error {
    Error::io(format_args!("{what} the campaign journal {}", path.display()), e)
}

/// A campaign's folder.
pub fn dir(measurements: &Path, id: &str) -> PathBuf {
    measurements.join("campaigns").join(id)
}

/// A configuration's journal in a campaign's folder.
pub fn path(dir: &Path, configuration: &str) -> PathBuf {
    dir.join(format!("{configuration}.jsonl"))
}

/// The campaign's plan, `campaign.json`, if it has one.
pub fn plan(dir: &Path) -> Result<Option<Plan>, Error> {
    let file = dir.join("campaign.json");
    match std::fs::read_to_string(&file) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| Error::setup(format!("{}: {e} (not a campaign plan of this version)", file.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(journal_failed(&file, "read", e)),
    }
}

/// Write the campaign's plan if it has none yet: a new file put in place
/// with a hard link, which fails if another process (another Slurm task)
/// put one there first; then that one is the plan. Returns the plan that
/// stands.
pub fn plan_once(dir: &Path, new: &Plan) -> Result<Plan, Error> {
    let file = dir.join("campaign.json");
    std::fs::create_dir_all(dir).map_err(|e| journal_failed(dir, "create the folder of", e))?;
    let tmp = dir.join(format!(".campaign.json.{}.{}.tmp", crate::files::host_name(), std::process::id()));
    let text = serde_json::to_string_pretty(new).map_err(|e| journal_failed(&file, "encode", e.into()))?;
    std::fs::write(&tmp, text).map_err(|e| journal_failed(&tmp, "write", e))?;
    let linked = std::fs::hard_link(&tmp, &file);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(new.clone()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            plan(dir)?.ok_or_else(|| Error::setup(format!("{} vanished as it was read", file.display())))
        }
        Err(e) => Err(journal_failed(&file, "write", e)),
    }
}

/// Replace the plan (a resume with `--force` of a changed file), keeping
/// the one it replaces beside it.
pub fn replan(dir: &Path, new: &Plan) -> Result<(), Error> {
    let file = dir.join("campaign.json");
    if file.exists() {
        let kept = dir.join(format!("campaign.json.{}", crate::timestamp::compact(std::time::SystemTime::now())));
        std::fs::copy(&file, &kept).map_err(|e| journal_failed(&kept, "keep", e))?;
    }
    let text = serde_json::to_string_pretty(new).map_err(|e| journal_failed(&file, "encode", e.into()))?;
    replace(&file, text.as_bytes()).map_err(|e| journal_failed(&file, "write", e))
}

/// Every configuration's journal in a campaign's folder, by configuration.
pub fn read_all(dir: &Path) -> Result<BTreeMap<String, Read>, Error> {
    let mut out = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(out) };
    for e in entries.flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "jsonl")
            && let Some(name) = p.file_stem().and_then(|n| n.to_str())
        {
            out.insert(name.to_string(), read(&p)?);
        }
    }
    Ok(out)
}

/// Read a configuration's journal back, as far as it is whole; an absent
/// one is empty. It is read as bytes: a line that is not UTF-8 is a
/// damaged line like any other, never a journal that cannot be read.
pub fn read(path: &Path) -> Result<Read, Error> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(parse(&bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Read::default()),
        Err(e) => Err(journal_failed(path, "read", e)),
    }
}

/// [`read`] on the journal's bytes. A damaged last line is named and left
/// out ([`Read::damage`]); a damaged line with whole lines after it is
/// named and kept apart ([`Read::damaged`]), its neighbours read.
pub fn parse(bytes: &[u8]) -> Read {
    let mut r = Read::default();
    let mut whole_bytes = 0;
    let mut bad: Vec<(usize, String, std::ops::Range<usize>)> = Vec::new();
    let mut at = 0;
    for (i, raw) in bytes.split_inclusive(|b| *b == b'\n').enumerate() {
        let range = at..at + raw.len();
        at += raw.len();
        if raw.trim_ascii().is_empty() {
            whole_bytes = range.end;
            continue;
        }
        match line(raw) {
            Ok(Line::Session(s)) => r.sessions.push(s),
            Ok(Line::Step(s)) => r.steps.push(s),
            Ok(Line::End(e)) => r.ends.push(e),
            Err(e) => {
                bad.push((i + 1, e, range));
                continue;
            }
        }
        whole_bytes = range.end;
    }
    let (tail, damaged): (Vec<_>, Vec<_>) = bad.into_iter().partition(|(_, _, r)| r.start >= whole_bytes);
    r.damage = tail.first().map(|(n, why, _)| format!("line {n}: {why}"));
    r.damaged = damaged;
    r
}

/// One line of a journal, with its newline: or why it is damaged (cut
/// short, not UTF-8, not a line of this version).
fn line(raw: &[u8]) -> Result<Line, String> {
    let Some(body) = raw.strip_suffix(b"\n") else {
        return Err("the line is cut short (no newline at its end)".to_string());
    };
    let text = std::str::from_utf8(body)
        .map_err(|e| format!("the line is not UTF-8 (byte {} of it is not valid UTF-8)", e.valid_up_to() + 1))?;
    serde_json::from_str::<Line>(text).map_err(|e| e.to_string())
}

/// The journal's lines that read whole, as they are written: what a
/// process taking the configuration up keeps (a damaged tail is left out).
fn whole_lines(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|b| *b == b'\n')
        .filter_map(|l| std::str::from_utf8(l.strip_suffix(b"\r").unwrap_or(l)).ok())
        .filter(|l| !l.trim().is_empty() && serde_json::from_str::<Line>(l).is_ok())
        .map(str::to_string)
        .collect()
}

/// A configuration's journal held by this process: its lock, and its
/// whole lines, rewritten whole (one rename) at every line added.
pub struct ConfigJournal {
    path: PathBuf,
    lines: Vec<String>,
    _lock: Lock,
}

impl ConfigJournal {
    /// Take up a configuration: its lock (refused, naming the holder, while
    /// another process has it), its journal read back (a damaged middle
    /// line refused unless `force`, which drops it), and this session's
    /// first line.
    pub fn open(
        dir: &Path,
        configuration: &str,
        session: Session,
        force: bool,
    ) -> Result<(ConfigJournal, Read), Error> {
        std::fs::create_dir_all(dir).map_err(|e| journal_failed(dir, "create the folder of", e))?;
        let path = path(dir, configuration);
        let lock = Lock::acquire(&path.with_extension("lock"), &format!("configuration {configuration}"))?;
        let mut read = read(&path)?;
        if let Some(why) = read.refusal(&path) {
            if !force {
                return Err(Error::setup(why));
            }
            let kept = Self::drop_damaged(&path, &read)?;
            crate::warn_line!(
                "sparktest: warning: campaign journal {}: --force dropped {} damaged line(s) ({}); the journal as \
                 it was is kept as {}",
                path.display(),
                read.damaged.len(),
                read.damaged.iter().map(|(n, why, _)| format!("line {n}: {why}")).collect::<Vec<_>>().join("; "),
                kept.display()
            );
            read = self::read(&path)?;
        }
        if let Some(d) = &read.damage {
            crate::warn_line!(
                "sparktest: warning: campaign journal {}: {d}; that line is dropped and the configuration goes on \
                 from the steps before it",
                path.display()
            );
        }
        let lines = match std::fs::read(&path) {
            Ok(bytes) => whole_lines(&bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(journal_failed(&path, "read", e)),
        };
        let mut j = ConfigJournal { path, lines, _lock: lock };
        j.append(&Line::Session(session))?;
        Ok((j, read))
    }

    /// Drop the damaged lines that have whole lines after them (`--force`),
    /// and nothing else: the journal as it was is kept beside it
    /// (`<configuration>.jsonl.damaged-<time>`). Returns where.
    pub fn drop_damaged(path: &Path, read: &Read) -> Result<PathBuf, Error> {
        let text = std::fs::read(path).map_err(|e| journal_failed(path, "read", e))?;
        let kept =
            path.with_extension(format!("jsonl.damaged-{}", crate::timestamp::compact(std::time::SystemTime::now())));
        std::fs::write(&kept, &text).map_err(|e| journal_failed(&kept, "keep a copy of", e))?;
        let mut out = Vec::with_capacity(text.len());
        let mut from = 0;
        for (_, _, r) in &read.damaged {
            out.extend_from_slice(&text[from..r.start]);
            from = r.end;
        }
        out.extend_from_slice(&text[from..]);
        replace(path, &out).map_err(|e| journal_failed(path, "rewrite", e))?;
        Ok(kept)
    }

    /// Add one line: the whole journal written anew and renamed into place.
    pub fn append(&mut self, line: &Line) -> Result<(), Error> {
        let text = serde_json::to_string(line).map_err(|e| journal_failed(&self.path, "encode a line of", e.into()))?;
        self.lines.push(text);
        let mut all = self.lines.join("\n");
        all.push('\n');
        replace(&self.path, all.as_bytes()).map_err(|e| journal_failed(&self.path, "write", e))
    }

    /// Add a step.
    pub fn step(&mut self, step: Step) -> Result<(), Error> {
        self.append(&Line::Step(step))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    fn session() -> Session {
        Session {
            started_at: "t".into(),
            host: "h".into(),
            pid: 1,
            share: "every configuration".into(),
            resumed: false,
            forced: false,
            job: None,
        }
    }

    fn step(suite: &str, state: State) -> Step {
        Step {
            configuration: "a".into(),
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
    fn a_configuration_s_journal_is_whole_at_every_line_and_read_back_by_session() {
        let dir = tempfile::tempdir().unwrap();
        let (mut j, read) = ConfigJournal::open(dir.path(), "a", session(), false).unwrap();
        assert!(read.steps.is_empty());
        j.step(step("smoke", State::Started)).unwrap();
        j.step(step("smoke", State::Done)).unwrap();
        // While it is held, a second process is refused, naming the first.
        let err = ConfigJournal::open(dir.path(), "a", session(), false).err().unwrap();
        assert!(err.message.contains("configuration a is in use by pid"), "{err}");
        drop(j);
        // No temporary file left beside it: every write was one rename.
        let left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(left, ["a.jsonl"], "{left:?}");
        let (mut j, read) = ConfigJournal::open(dir.path(), "a", session(), false).unwrap();
        assert_eq!(read.sessions.len(), 1);
        assert_eq!(read.suite("smoke").map(|s| s.state), Some(State::Done));
        j.append(&Line::End(End { finished_at: "t".into(), interrupted: None, code: 0 })).unwrap();
        drop(j);
        let all = read_all(dir.path()).unwrap();
        assert_eq!(all["a"].sessions.len(), 2);
        assert_eq!(all["a"].ends.len(), 1);
    }

    #[test]
    fn a_cut_last_line_is_dropped_and_a_damaged_middle_one_refused_until_forced() {
        let dir = tempfile::tempdir().unwrap();
        let (mut j, _) = ConfigJournal::open(dir.path(), "a", session(), false).unwrap();
        for suite in ["smoke", "speed", "battery"] {
            j.step(step(suite, State::Started)).unwrap();
            j.step(step(suite, State::Done)).unwrap();
        }
        drop(j);
        let p = path(dir.path(), "a");
        // A cut end: named, dropped, the rest kept.
        let whole = std::fs::read(&p).unwrap();
        std::fs::write(&p, &whole[..whole.len() - 10]).unwrap();
        let r = read(&p).unwrap();
        assert!(r.damage.as_deref().unwrap().starts_with("line 7: the line is cut short"), "{:?}", r.damage);
        assert_eq!(r.steps.len(), 5);
        let (j, _) = ConfigJournal::open(dir.path(), "a", session(), false).unwrap();
        drop(j);
        assert!(read(&p).unwrap().damage.is_none(), "rewritten whole");
        // One byte of line 3 damaged, whole lines after it.
        let mut text = std::fs::read(&p).unwrap();
        let nl: Vec<usize> = text.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(i, _)| i).collect();
        text[nl[1] + 3] = b'#';
        std::fs::write(&p, &text).unwrap();
        let err = ConfigJournal::open(dir.path(), "a", session(), false).err().unwrap();
        assert!(err.message.contains("line 3 is damaged") && err.message.contains("--force"), "{err}");
        assert!(err.message.contains("nothing was dropped"), "{err}");
        assert_eq!(std::fs::read(&p).unwrap(), text, "nothing deleted");
        let (j, r) = ConfigJournal::open(dir.path(), "a", session(), true).unwrap();
        drop(j);
        assert!(r.damaged.is_empty());
        let kept: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains(".damaged-"))
            .collect();
        assert_eq!(std::fs::read(kept[0].path()).unwrap(), text, "the journal as it was, kept");
    }

    #[test]
    fn a_line_that_is_not_utf8_is_a_damaged_line_refused_by_number_and_dropped_alone_when_forced() {
        let dir = tempfile::tempdir().unwrap();
        let (mut j, _) = ConfigJournal::open(dir.path(), "a", session(), false).unwrap();
        for suite in ["smoke", "speed"] {
            j.step(step(suite, State::Started)).unwrap();
            j.step(step(suite, State::Done)).unwrap();
        }
        drop(j);
        let p = path(dir.path(), "a");
        let whole = std::fs::read(&p).unwrap();
        let lines: Vec<&[u8]> = whole.split_inclusive(|b| *b == b'\n').collect();
        // A byte that is no UTF-8 in line 3, whole lines after it.
        let mut text = whole.clone();
        text[lines[0].len() + lines[1].len() + 3] = 0xff;
        std::fs::write(&p, &text).unwrap();
        let r = read(&p).unwrap();
        assert_eq!((r.damaged.len(), r.damaged[0].0), (1, 3), "{:?}", r.damaged);
        assert!(r.damaged[0].1.contains("not UTF-8"), "{:?}", r.damaged);
        assert_eq!(r.steps.len(), 3, "its neighbours read");
        let err = ConfigJournal::open(dir.path(), "a", session(), false).err().unwrap();
        assert_eq!(err.kind, ErrorKind::Setup, "refused as a damaged line, not as an unreadable journal: {err}");
        assert!(
            err.message.contains("line 3 is damaged (the line is not UTF-8") && err.message.contains("--force"),
            "{err}"
        );
        assert_eq!(std::fs::read(&p).unwrap(), text, "nothing deleted");
        // --force drops that line alone: every other line kept byte for
        // byte, then this session's line.
        let (j, r) = ConfigJournal::open(dir.path(), "a", session(), true).unwrap();
        drop(j);
        assert!(r.damaged.is_empty() && r.damage.is_none(), "{r:?}");
        assert_eq!(r.steps.len(), 3);
        let kept: Vec<u8> = lines.iter().enumerate().filter(|(i, _)| *i != 2).flat_map(|(_, l)| l.to_vec()).collect();
        let after = std::fs::read(&p).unwrap();
        assert!(after.starts_with(&kept), "{}", String::from_utf8_lossy(&after));
        let added = std::str::from_utf8(&after[kept.len()..]).unwrap();
        assert!(matches!(serde_json::from_str::<Line>(added.trim_end()), Ok(Line::Session(_))), "{added}");
        let copy = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .find(|e| e.file_name().to_string_lossy().contains(".damaged-"))
            .unwrap();
        assert_eq!(std::fs::read(copy.path()).unwrap(), text, "the journal as it was, kept");
        // Not UTF-8 in the last line: a damaged end, named and dropped.
        let mut text = std::fs::read(&p).unwrap();
        let last = text.len() - 5;
        text[last] = 0xfe;
        std::fs::write(&p, &text).unwrap();
        let r = read(&p).unwrap();
        assert!(r.damaged.is_empty(), "{:?}", r.damaged);
        assert!(r.damage.as_deref().is_some_and(|d| d.contains("not UTF-8")), "{:?}", r.damage);
        // Taken up again: the whole lines are kept, only the damaged end is
        // left out.
        let (j, _) = ConfigJournal::open(dir.path(), "a", session(), false).unwrap();
        drop(j);
        let r = read(&p).unwrap();
        assert!(r.damage.is_none(), "{:?}", r.damage);
        assert_eq!((r.sessions.len(), r.steps.len()), (2, 3), "{r:?}");
    }

    #[test]
    fn the_plan_is_written_once_and_the_first_stands() {
        let dir = tempfile::tempdir().unwrap();
        let plan = |name: &str| Plan {
            id: "n".into(),
            name: name.into(),
            file: "c.toml".into(),
            file_sha256: "00".into(),
            file_text: String::new(),
            started_at: "t".into(),
            configurations: vec![],
            suites: vec![],
            on_gate_fail: OnGateFail::Skip,
        };
        assert_eq!(plan_once(dir.path(), &plan("first")).unwrap().name, "first");
        assert_eq!(plan_once(dir.path(), &plan("second")).unwrap().name, "first", "a second task finds the first's");
        replan(dir.path(), &plan("third")).unwrap();
        assert_eq!(super::plan(dir.path()).unwrap().unwrap().name, "third");
        assert!(
            std::fs::read_dir(dir.path())
                .unwrap()
                .flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with("campaign.json."))
        );
    }
}
