//! When a run stops early. Who is to blame decides: refused credentials, a
//! redirect, a chat path that is not there are the setup's (stop now, exit
//! 4); a launched server that exited, or many cases lost in a row, mean the
//! serve is gone (stop instead of hours of timeouts against a dead port).
//! The cases not run are recorded lost with the reason
//! ([`super::verdict::stopped`]).

use std::sync::Mutex;

use sparktest_record::Outcome;

/// Why the run stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stop {
    /// What the summary and the cases not run say.
    pub reason: String,
    /// The target refused the credentials, or is not where the setup
    /// points: a target error (exit 4).
    pub refused: bool,
}

#[derive(Debug, Default)]
struct State {
    lost_in_row: u32,
    stop: Option<Stop>,
}

/// Shared by every case of a run.
#[derive(Debug)]
pub struct RunControl {
    max_lost_in_row: u32,
    state: Mutex<State>,
}

impl RunControl {
    /// Stop after `max_lost_in_row` lost cases in a row (0: never).
    pub fn new(max_lost_in_row: u32) -> Self {
        RunControl { max_lost_in_row, state: Mutex::new(State::default()) }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Why the run stopped, if it did.
    pub fn stopped(&self) -> Option<Stop> {
        self.state().stop.clone()
    }

    /// The server under test died (`why`: its exit status and log): the
    /// run stops, and every case not run is lost with that reason.
    pub fn died(&self, why: &str) {
        let mut st = self.state();
        if st.stop.is_none() {
            st.stop = Some(Stop { reason: why.to_string(), refused: false });
        }
    }

    /// Take a finished case into account: `refused` is set when a call was
    /// refused its credentials.
    pub fn observe(&self, id: &str, outcome: Outcome, reason: Option<&str>, refused: Option<&str>) {
        let mut st = self.state();
        if st.stop.is_some() {
            return;
        }
        if let Some(why) = refused {
            st.stop = Some(Stop { reason: format!("{why}, at {id}"), refused: true });
            return;
        }
        if outcome == Outcome::Lost {
            st.lost_in_row += 1;
            if self.max_lost_in_row > 0 && st.lost_in_row >= self.max_lost_in_row {
                st.stop = Some(Stop {
                    reason: format!(
                        "{} cases in a row were lost (max-lost-in-row), the last {id}: {}",
                        st.lost_in_row,
                        reason.unwrap_or("")
                    ),
                    refused: false,
                });
            }
        } else {
            st.lost_in_row = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lost_in_a_row_stops_and_anything_else_resets_the_count() {
        let c = RunControl::new(3);
        c.observe("a", Outcome::Lost, Some("reset"), None);
        c.observe("b", Outcome::Lost, Some("reset"), None);
        c.observe("c", Outcome::Fail, Some("wrong"), None);
        c.observe("d", Outcome::Lost, Some("reset"), None);
        c.observe("e", Outcome::Lost, Some("reset"), None);
        assert!(c.stopped().is_none());
        c.observe("f", Outcome::Lost, Some("connection refused"), None);
        let stop = c.stopped().unwrap();
        assert!(!stop.refused);
        assert!(
            stop.reason.starts_with("3 cases in a row were lost") && stop.reason.contains("f: connection refused"),
            "{stop:?}"
        );
        let never = RunControl::new(0);
        for i in 0..50 {
            never.observe(&i.to_string(), Outcome::Lost, None, None);
        }
        assert!(never.stopped().is_none());
    }

    #[test]
    fn a_dead_server_stops_the_run_with_its_words_and_the_first_reason_stands() {
        let c = RunControl::new(5);
        c.observe("a", Outcome::Lost, Some("connection refused"), None);
        c.died("the server of target local exited (signal: 9 (SIGKILL))");
        let stop = c.stopped().unwrap();
        assert!(!stop.refused && stop.reason.contains("exited (signal: 9"), "{stop:?}");
        c.died("again");
        c.observe("b", Outcome::Lost, Some("x"), Some("a server refused the credentials"));
        assert_eq!(c.stopped(), Some(stop));
    }

    #[test]
    fn refused_credentials_stop_at_once() {
        let c = RunControl::new(5);
        c.observe("a", Outcome::Lost, Some("HTTP 401"), Some("a server refused the credentials (HTTP 401: no)"));
        let stop = c.stopped().unwrap();
        assert!(stop.refused && stop.reason.starts_with("a server refused the credentials"), "{stop:?}");
    }
}
