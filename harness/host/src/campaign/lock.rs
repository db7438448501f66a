//! One writer per journal, on one box or many sharing a folder over NFS.
//!
//! A lock is a file beside what it guards (`<configuration>.lock` beside
//! its journal, `<share>.lock` for a whole run's share), made with
//! `O_CREAT | O_EXCL`, which is atomic on a local file system and on NFS
//! v3 and later; no `flock`/`fcntl` lock is relied on (NFS does not
//! always honour them). It says who holds it: host, pid, the process's
//! start time (so a reused pid is not taken for the holder), when, and the
//! Slurm job it ran in. The holder touches it every [`HEARTBEAT`].
//!
//! A lock is stale, and taken over, when its holder is known gone: on this
//! host its process is not running (or is another process under the same
//! pid); anywhere, the same Slurm job was requeued since (Slurm ends a job
//! before it requeues it); on another host, its heartbeat stopped for
//! [`STALE_AFTER`]. Otherwise it is refused, naming the holder. A takeover
//! renames the stale file away first (one rename wins), so two that find
//! it stale at once never both hold it.
//!
//! [`crate::files::replace`] writes a file whole or not at all: how every
//! shared file is rewritten.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::files::host_name;

/// How often the holder touches its lock.
pub const HEARTBEAT: Duration = Duration::from_secs(30);
/// How long a lock held from another host may go untouched before it is
/// taken for its holder's death (a node that died, a partition).
pub const STALE_AFTER: Duration = Duration::from_secs(300);

/// Who holds a lock.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Holder {
    /// The host's name.
    pub host: String,
    /// The process.
    pub pid: u32,
    /// Its start time in clock ticks since boot (`/proc/<pid>/stat`), where
    /// known: a pid reused by another process does not hold the lock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<u64>,
    /// RFC 3339 UTC, when it took the lock.
    pub since: String,
    /// `SLURM_JOB_ID` where it ran in a Slurm job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slurm_job: Option<String>,
    /// `SLURM_RESTART_COUNT`: a requeued job runs again under its id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slurm_restart: Option<u32>,
}

impl Holder {
    /// This process.
    pub fn me() -> Holder {
        let pid = std::process::id();
        Holder {
            host: host_name(),
            pid,
            start: start_ticks(pid),
            since: crate::timestamp::rfc3339(SystemTime::now()),
            slurm_job: std::env::var("SLURM_JOB_ID").ok().filter(|s| !s.is_empty()),
            slurm_restart: std::env::var("SLURM_RESTART_COUNT").ok().and_then(|s| s.parse().ok()),
        }
    }

    /// In words: `pid 4242 on node-3 since …` (and its Slurm job).
    pub fn describe(&self) -> String {
        let mut s = format!("pid {} on {} since {}", self.pid, self.host, self.since);
        if let Some(job) = &self.slurm_job {
            s.push_str(&format!(" (Slurm job {job})"));
        }
        s
    }

    /// Why the holder is known gone, if it is (`untouched` is how long the
    /// lock went without a heartbeat).
    fn gone(&self, me: &Holder, untouched: Duration) -> Option<String> {
        if let (Some(job), Some(mine)) = (&self.slurm_job, &me.slurm_job)
            && job == mine
            && me.slurm_restart.unwrap_or(0) > self.slurm_restart.unwrap_or(0)
        {
            return Some(format!("Slurm requeued job {job} since it took the lock"));
        }
        if self.host == me.host {
            if !alive(self.pid) {
                return Some(format!("process {} is not running on {}", self.pid, self.host));
            }
            if let (Some(theirs), Some(now)) = (self.start, start_ticks(self.pid))
                && theirs != now
            {
                return Some(format!("pid {} on {} is another process now", self.pid, self.host));
            }
            return None;
        }
        (untouched > STALE_AFTER)
            .then(|| format!("its heartbeat stopped {} s ago (a node gone silent)", untouched.as_secs()))
    }
}

/// Whether a process of this pid exists on this host.
fn alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else { return false };
    // SAFETY: signal 0 only checks that the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// A process's start time in clock ticks since boot, from field 22 of
/// `/proc/<pid>/stat` (after the command name, which may hold spaces).
fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// A lock held: touched every [`HEARTBEAT`], removed when dropped (if it is
/// still this one).
#[derive(Debug)]
pub struct Lock {
    path: PathBuf,
    text: String,
    stop: Option<mpsc::Sender<()>>,
    beat: Option<std::thread::JoinHandle<()>>,
}

fn lock_failed(path: &Path, what: &str, e: std::io::Error) -> Error {
    Error::io(format_args!("{what} the lock {}", path.display()), e)
}

/// Who holds the lock at `path` now, if anyone does that is not known to
/// be gone (what `campaign status` calls running).
pub fn held_by(path: &Path) -> Option<Holder> {
    let (_, holder, untouched) = read_holder(path).ok()?;
    let holder = holder?;
    holder.gone(&Holder::me(), untouched).is_none().then_some(holder)
}

/// A lock file's holder and how long it went untouched, as read now.
fn read_holder(path: &Path) -> std::io::Result<(String, Option<Holder>, Duration)> {
    let text = std::fs::read_to_string(path)?;
    let touched = std::fs::metadata(path)?.modified()?;
    let untouched = SystemTime::now().duration_since(touched).unwrap_or(Duration::ZERO);
    Ok((text.clone(), serde_json::from_str(&text).ok(), untouched))
}

impl Lock {
    /// Take the lock at `path` for `what` (a campaign id, a configuration),
    /// or say who holds it. A stale lock is taken over, and said so.
    pub fn acquire(path: &Path, what: &str) -> Result<Lock, Error> {
        let me = Holder::me();
        let text = serde_json::to_string(&me).map_err(|e| lock_failed(path, "write", e.into()))?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| lock_failed(path, "create the folder of", e))?;
        }
        for _ in 0..3 {
            match std::fs::OpenOptions::new().write(true).create_new(true).open(path) {
                Ok(mut f) => {
                    f.write_all(text.as_bytes())
                        .and_then(|()| f.sync_all())
                        .map_err(|e| lock_failed(path, "write", e))?;
                    return Ok(Lock::held(path, text));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(lock_failed(path, "create", e)),
            }
            let (theirs, holder, untouched) = match read_holder(path) {
                Ok(read) => read,
                // Released between the two calls: try again.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(lock_failed(path, "read", e)),
            };
            let Some(holder) = holder else {
                // Half written by a holder that died as it wrote: stale once
                // untouched as long as any other.
                if untouched > STALE_AFTER {
                    Lock::take_over(path, &theirs)?;
                    continue;
                }
                return Err(Error::setup(format!(
                    "{what} is in use: {} exists and is not yet readable (another process is taking it); try again",
                    path.display()
                )));
            };
            match holder.gone(&me, untouched) {
                Some(why) => {
                    crate::warn_line!(
                        "sparktest: {what}: taking over the lock {} from {} ({why})",
                        path.display(),
                        holder.describe()
                    );
                    Lock::take_over(path, &theirs)?;
                }
                None => {
                    return Err(Error::setup(format!(
                        "{what} is in use by {} (lock {}); two writers would measure every suite twice under \
                         each other's load. Wait for it to end, or if that process is gone for good, remove the lock",
                        holder.describe(),
                        path.display()
                    )));
                }
            }
        }
        Err(Error::setup(format!("{what}: the lock {} kept changing hands; try again", path.display())))
    }

    /// Move a stale lock out of the way, as long as it is still the one
    /// judged stale: a rename wins once, and one that moved a fresh lock
    /// (taken meanwhile by another) puts it back.
    fn take_over(path: &Path, judged: &str) -> Result<(), Error> {
        let aside = path.with_extension(format!(
            "stale-{}-{}-{}",
            host_name(),
            std::process::id(),
            SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
        ));
        match std::fs::rename(path, &aside) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(lock_failed(path, "move aside", e)),
        }
        let moved = std::fs::read_to_string(&aside).unwrap_or_default();
        if moved != judged {
            // Not the stale one: put it back unless another took its place.
            let _ = std::fs::hard_link(&aside, path);
        }
        let _ = std::fs::remove_file(&aside);
        Ok(())
    }

    fn held(path: &Path, text: String) -> Lock {
        let (stop, rx) = mpsc::channel::<()>();
        let at = path.to_path_buf();
        let beat = std::thread::Builder::new()
            .name("sparktest-lock-heartbeat".into())
            .spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(HEARTBEAT) {
                    if let Ok(f) = std::fs::OpenOptions::new().append(true).open(&at) {
                        let _ = f.set_modified(SystemTime::now());
                    }
                }
            })
            .ok();
        Lock { path: path.to_path_buf(), text, stop: Some(stop), beat }
    }

    /// Where it is.
    #[cfg(test)]
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(b) = self.beat.take() {
            let _ = b.join();
        }
        if std::fs::read_to_string(&self.path).is_ok_and(|t| t == self.text) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn a_second_writer_is_refused_naming_the_holder_and_a_released_lock_is_free() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("night-1.lock");
        let held = Lock::acquire(&p, "campaign night-1").unwrap();
        let err = Lock::acquire(&p, "campaign night-1").unwrap_err();
        assert_eq!(err.kind, ErrorKind::Setup);
        let me = Holder::me();
        assert!(err.message.contains(&format!("in use by pid {} on {}", me.pid, me.host)), "{err}");
        drop(held);
        assert!(!p.exists(), "released");
        let again = Lock::acquire(&p, "campaign night-1").unwrap();
        drop(again);
    }

    #[test]
    fn a_lock_whose_holder_is_gone_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.lock");
        let me = Holder::me();
        // A process of this host that has exited.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let gone = Holder { pid: dead, start: None, ..me.clone() };
        std::fs::write(&p, serde_json::to_string(&gone).unwrap()).unwrap();
        let lock = Lock::acquire(&p, "x").unwrap();
        assert!(std::fs::read_to_string(lock.path()).unwrap().contains(&format!("\"pid\":{}", me.pid)));
        drop(lock);
        // This process under another start time: a reused pid.
        let reused = Holder { start: Some(me.start.unwrap_or(0) + 1), ..me.clone() };
        std::fs::write(&p, serde_json::to_string(&reused).unwrap()).unwrap();
        drop(Lock::acquire(&p, "x").unwrap());
        // Another host: held while its heartbeat goes on, stale after.
        let far = Holder { host: "node-far".into(), ..me.clone() };
        std::fs::write(&p, serde_json::to_string(&far).unwrap()).unwrap();
        let err = Lock::acquire(&p, "x").unwrap_err();
        assert!(err.message.contains("on node-far"), "{err}");
        let old = SystemTime::now() - STALE_AFTER - Duration::from_secs(5);
        std::fs::OpenOptions::new().append(true).open(&p).unwrap().set_modified(old).unwrap();
        drop(Lock::acquire(&p, "x").unwrap());
        // The same Slurm job, requeued since: its first incarnation is gone.
        let first =
            Holder { host: "node-far".into(), slurm_job: Some("77".into()), slurm_restart: Some(0), ..me.clone() };
        let requeued = Holder { slurm_job: Some("77".into()), slurm_restart: Some(1), ..me.clone() };
        assert!(first.gone(&requeued, Duration::ZERO).unwrap().contains("requeued job 77"));
        assert_eq!(first.gone(&Holder { slurm_restart: Some(0), ..requeued }, Duration::ZERO), None);
    }
}
