//! Stop signals (SIGINT, SIGTERM, SIGHUP), as nextest keeps a `signal`
//! module. While cases run, the first stop signal interrupts the run: it
//! is recorded ([`interrupted`]), the cases in flight are cancelled
//! ([`until_interrupted`]) and recorded as interrupted, no case starts, and
//! the run ends itself (stopping its servers on the way out) with 128 + the
//! signal. Outside that span (launching, probing), or at a second signal,
//! the servers the harness launched are stopped and the process exits.
//!
//! Signals are the process's, so this state is too: one per process.
//! `target.rs` launches and stops the servers; it tells this module which
//! process groups are live ([`watch_group`], [`forget_group`]) so that a
//! signal can stop them.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// What the handler does with a stop signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    /// Interrupt the cases; the run ends itself.
    Interrupt,
    /// Stop the launched servers and exit with 128 + the signal.
    Exit,
}

/// The process's signal state.
struct Signals {
    /// The stop signal that interrupted the cases (0: none).
    interrupted: AtomicI32,
    /// Set while the run's cases run.
    cases_running: AtomicBool,
    /// Wakes the cases in flight with the signal.
    wake: tokio::sync::watch::Sender<i32>,
    /// Process groups of the servers running now.
    groups: Mutex<Vec<i32>>,
}

impl Signals {
    fn new() -> Self {
        Signals {
            interrupted: AtomicI32::new(0),
            cases_running: AtomicBool::new(false),
            wake: tokio::sync::watch::channel(0).0,
            groups: Mutex::new(Vec::new()),
        }
    }

    /// Take a stop signal: the first while cases run interrupts them; any
    /// other ends the process.
    fn receive(&self, signal: i32) -> Action {
        if !self.cases_running.load(Ordering::SeqCst) {
            return Action::Exit;
        }
        match self.interrupted.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst) {
            Ok(_) => {
                self.wake.send_replace(signal);
                Action::Interrupt
            }
            Err(_) => Action::Exit,
        }
    }

    fn interrupted(&self) -> Option<i32> {
        match self.interrupted.load(Ordering::SeqCst) {
            0 => None,
            s => Some(s),
        }
    }

    async fn until_interrupted(&self) -> i32 {
        let mut rx = self.wake.subscribe();
        match rx.wait_for(|s| *s != 0).await {
            Ok(s) => *s,
            Err(_) => std::future::pending().await,
        }
    }

    fn groups(&self) -> std::sync::MutexGuard<'_, Vec<i32>> {
        self.groups.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn state() -> &'static Signals {
    static STATE: OnceLock<Signals> = OnceLock::new();
    STATE.get_or_init(Signals::new)
}

/// The signal that interrupted the cases (`SIGINT`, `SIGTERM`, `SIGHUP`),
/// if one did.
pub fn interrupted() -> Option<i32> {
    state().interrupted()
}

/// Resolves once a stop signal interrupted the cases: what a case in flight
/// races against.
pub async fn until_interrupted() -> i32 {
    state().until_interrupted().await
}

/// The name of a stop signal.
pub fn name(signal: i32) -> &'static str {
    match signal {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

/// Mark the span in which a stop signal interrupts cases instead of ending
/// the process: from the first case to the run's summary.
pub fn cases_running(running: bool) {
    state().cases_running.store(running, Ordering::SeqCst);
}

/// A launched server's process group: stopped on a signal that ends the
/// process.
pub fn watch_group(pgid: i32) {
    state().groups().push(pgid);
}

/// A server's process group, stopped and reaped: its id may be reused.
pub fn forget_group(pgid: i32) {
    state().groups().retain(|g| *g != pgid);
}

/// Whether a signal would stop this process group.
#[cfg(test)]
pub(crate) fn watches_group(pgid: i32) -> bool {
    state().groups().contains(&pgid)
}

/// Stop every server this process launched: SIGTERM, a moment to let GPU
/// engines release their memory, then SIGKILL.
fn stop_all_now() {
    let groups: Vec<i32> = state().groups().clone();
    for g in &groups {
        signal_group(*g, libc::SIGTERM);
    }
    std::thread::sleep(Duration::from_millis(1500));
    for g in &groups {
        signal_group(*g, libc::SIGKILL);
    }
}

/// Signal a whole process group.
pub(crate) fn signal_group(pgid: i32, signal: i32) {
    // SAFETY: kill(2) with a negative pid signals the group; no memory is
    // touched.
    unsafe {
        libc::kill(-pgid, signal);
    }
}

/// Handle SIGINT, SIGTERM and SIGHUP. While cases run: record the signal,
/// which cancels the cases in flight and starts no other, and let the run
/// end itself (a second signal, or 30 s without an end, stops the servers
/// and exits at once). Otherwise (launching, probing): stop the launched
/// servers and exit with 128 + the signal. Installed once per process, on
/// the run's runtime.
pub fn install(rt: &tokio::runtime::Runtime) {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    if INSTALLED.set(()).is_err() {
        return;
    }
    use tokio::signal::unix::{SignalKind, signal};
    rt.spawn(async {
        let (Ok(mut int), Ok(mut term), Ok(mut hup)) =
            (signal(SignalKind::interrupt()), signal(SignalKind::terminate()), signal(SignalKind::hangup()))
        else {
            return;
        };
        loop {
            let signal = tokio::select! {
                _ = int.recv() => libc::SIGINT,
                _ = term.recv() => libc::SIGTERM,
                _ = hup.recv() => libc::SIGHUP,
            };
            match state().receive(signal) {
                Action::Interrupt => {
                    eprintln!(
                        "sparktest: {}: interrupting the run (the cases in flight are recorded as interrupted; no other starts)",
                        name(signal)
                    );
                    // The run should end in moments; if it does not, end it.
                    std::thread::spawn(move || {
                        std::thread::sleep(Duration::from_secs(30));
                        eprintln!("sparktest: the run did not end within 30 s of {}; stopping", name(signal));
                        stop_all_now();
                        std::process::exit(128 + signal);
                    });
                }
                Action::Exit => {
                    eprintln!("sparktest: {}; stopping the servers it launched", name(signal));
                    tokio::task::spawn_blocking(stop_all_now).await.ok();
                    std::process::exit(128 + signal);
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_signal_while_cases_run_interrupts_and_any_other_exits() {
        let s = Signals::new();
        // Launching or probing: a signal ends the process.
        assert_eq!(s.receive(libc::SIGINT), Action::Exit);
        assert_eq!(s.interrupted(), None);
        s.cases_running.store(true, Ordering::SeqCst);
        assert_eq!(s.receive(libc::SIGTERM), Action::Interrupt);
        assert_eq!(s.interrupted(), Some(libc::SIGTERM));
        // A case in flight, or one that starts waiting after the signal, wakes.
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        assert_eq!(rt.block_on(s.until_interrupted()), libc::SIGTERM);
        // A second signal does not wait for the run.
        assert_eq!(s.receive(libc::SIGINT), Action::Exit);
        assert_eq!(s.interrupted(), Some(libc::SIGTERM), "the first is the one recorded");
        assert_eq!([name(libc::SIGINT), name(libc::SIGHUP), name(libc::SIGKILL)], ["SIGINT", "SIGHUP", "a signal"]);
    }
}
