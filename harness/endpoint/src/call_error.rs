//! Why a call produced no reply, and the one table of what each reason is:
//! [`CallError::class`] gives the word its record carries, what it does to
//! the case and the run, its status and its words. Every other reading of
//! an error ([`CallError::kind`], [`CallError::is_lost`],
//! [`CallError::reason`], its `Display`, what an instrument sees of it)
//! follows from that row, so a class is changed in one place.

use serde::Serialize;

/// Why a call produced no reply.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum CallError {
    /// The server never answered (refused, reset, timeout, cut stream,
    /// unparseable or oversized reply).
    Lost {
        /// Why, naming the fault.
        reason: String,
        /// Times the request was sent (each retry after a 408, 429 or 503
        /// counts).
        attempts: u32,
    },
    /// The server answered only with a status that is no answer: a 5xx, or
    /// a 429/408/503 that outlasted the retries. The case is lost; the
    /// status is known.
    Unanswered {
        /// HTTP status.
        status: u16,
        /// Response body (clipped).
        body: String,
        /// Times the request was sent.
        attempts: u32,
    },
    /// The server refused the client's credentials (401, 403, 407): the
    /// setup's fault, not the model's nor the serve's. The case is lost and
    /// the run stops.
    Unauthorized {
        /// HTTP status.
        status: u16,
        /// Response body (clipped).
        body: String,
        /// Times the request was sent.
        attempts: u32,
    },
    /// The server refused cleanly with a 4xx.
    Rejected {
        /// HTTP status.
        status: u16,
        /// Response body.
        body: String,
        /// Times the request was sent.
        attempts: u32,
    },
    /// The engine cannot do this.
    Unsupported(String),
    /// The setup points at the wrong place: a redirect, or a chat path that
    /// is not there (404, 405) on a server whose `/v1/models` answered.
    /// Not the serve's fault: the case is lost and the run stops (exit 4).
    Misdirected {
        /// What answered, and where it points.
        reason: String,
        /// Times the request was sent.
        attempts: u32,
    },
    /// The request itself was malformed (an instrument's bug, e.g. a tool
    /// schema that is not JSON). Never sent; the case fails with it.
    Invalid(String),
}

/// What a call error does to its case and its run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// The server never answered: the case is lost, whatever the
    /// instrument concluded.
    Lost,
    /// Lost, and the run stops (exit 4) for this reason: the setup's
    /// fault, not the serve's.
    Stops(&'static str),
    /// A clean refusal of the request: the instrument sees it (the SDK
    /// fails the case with the server's words).
    Refused,
    /// The engine cannot do this: the instrument sees it (the SDK makes the
    /// case not applicable).
    Unsupported,
    /// The request was the instrument's bug and never sent: the host traps
    /// the instrument, which fails the case.
    Invalid,
}

impl Effect {
    /// Whether the call loses its case.
    pub fn is_lost(self) -> bool {
        matches!(self, Effect::Lost | Effect::Stops(_))
    }
}

/// One row of [`CallError::class`]'s table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Class<'a> {
    /// The word the call's record carries (`result`), and the first word
    /// of the error's message: `lost`, `unauthorized`, `misdirected`,
    /// `rejected`, `unsupported`, `invalid`.
    pub kind: &'static str,
    /// What it does to the case and the run.
    pub effect: Effect,
    /// The HTTP status, when the server answered with one.
    pub status: Option<u16>,
    /// What that status means, where the reason says it.
    pub meaning: Option<&'static str>,
    /// What was said: the server's body where a status came, else the
    /// client's reason.
    pub said: &'a str,
    /// Times the request was sent (0: never). An unsupported call counts
    /// one: the engine may have said so without a send.
    pub attempts: u32,
}

/// What a refused credential means, in a reason.
const REFUSED_CREDENTIALS: &str = "the server refused the credentials";

impl Class<'_> {
    /// Why, without the kind word: what a lost case's reason says.
    pub fn reason(&self) -> String {
        match (self.status, self.meaning) {
            (None, _) => self.said.to_string(),
            (Some(status), None) => format!("HTTP {status}: {}", self.said),
            (Some(status), Some(meaning)) => format!("HTTP {status}: {meaning} ({})", self.said),
        }
    }
}

impl CallError {
    /// A lost call, sent once.
    pub fn lost(reason: impl Into<String>) -> Self {
        CallError::Lost { reason: reason.into(), attempts: 1 }
    }

    /// The same error, of a request sent `attempts` times.
    pub fn sent(mut self, attempts: u32) -> Self {
        match &mut self {
            CallError::Lost { attempts: a, .. }
            | CallError::Unanswered { attempts: a, .. }
            | CallError::Unauthorized { attempts: a, .. }
            | CallError::Rejected { attempts: a, .. }
            | CallError::Misdirected { attempts: a, .. } => *a = attempts,
            CallError::Unsupported(_) | CallError::Invalid(_) => {}
        }
        self
    }

    /// The table: what each error is.
    pub fn class(&self) -> Class<'_> {
        fn row<'a>(kind: &'static str, effect: Effect, status: Option<u16>, said: &'a str, attempts: u32) -> Class<'a> {
            Class { kind, effect, status, meaning: None, said, attempts }
        }
        match self {
            CallError::Lost { reason, attempts } => row("lost", Effect::Lost, None, reason, *attempts),
            CallError::Unanswered { status, body, attempts } => {
                row("lost", Effect::Lost, Some(*status), body, *attempts)
            }
            CallError::Unauthorized { status, body, attempts } => Class {
                meaning: Some(REFUSED_CREDENTIALS),
                ..row("unauthorized", Effect::Stops("a server refused the credentials"), Some(*status), body, *attempts)
            },
            CallError::Misdirected { reason, attempts } => {
                row("misdirected", Effect::Stops("the target is not where the setup points"), None, reason, *attempts)
            }
            CallError::Rejected { status, body, attempts } => {
                row("rejected", Effect::Refused, Some(*status), body, *attempts)
            }
            CallError::Unsupported(reason) => row("unsupported", Effect::Unsupported, None, reason, 1),
            CallError::Invalid(reason) => row("invalid", Effect::Invalid, None, reason, 0),
        }
    }

    /// The word used in records.
    pub fn kind(&self) -> &'static str {
        self.class().kind
    }

    /// The server never gave an answer: the case is lost.
    pub fn is_lost(&self) -> bool {
        self.class().effect.is_lost()
    }

    /// Why, without the kind word: what a lost case's reason says.
    pub fn reason(&self) -> String {
        self.class().reason()
    }

    /// The HTTP status, when the server answered with one.
    pub fn status(&self) -> Option<u16> {
        self.class().status
    }

    /// Times the request was sent (0: never).
    pub fn attempts(&self) -> u32 {
        self.class().attempts
    }
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let class = self.class();
        match (class.status, class.meaning) {
            // Transcripts have said it so since 1.2: the body after a
            // colon, where the reason puts it in brackets.
            (Some(status), Some(meaning)) => write!(f, "{}: HTTP {status}: {meaning}: {}", class.kind, class.said),
            _ => write!(f, "{}: {}", class.kind, class.reason()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every error, once.
    fn every() -> Vec<CallError> {
        vec![
            CallError::lost("connection refused"),
            CallError::Unanswered { status: 503, body: "busy".into(), attempts: 3 },
            CallError::Unauthorized { status: 401, body: "no".into(), attempts: 1 },
            CallError::Rejected { status: 400, body: "too long".into(), attempts: 2 },
            CallError::Unsupported("no logprobs".into()),
            CallError::Misdirected { reason: "HTTP 302".into(), attempts: 1 },
            CallError::Invalid("not JSON".into()),
        ]
    }

    #[test]
    fn each_error_reads_from_its_row() {
        /// Kind, lost, reason, message, status, sends.
        type Read = (&'static str, bool, String, String, Option<u16>, u32);
        let read: Vec<Read> = every()
            .iter()
            .map(|e| (e.kind(), e.is_lost(), e.reason(), e.to_string(), e.status(), e.attempts()))
            .collect();
        // The words records, cases and transcripts have carried (1.2).
        assert_eq!(
            read,
            [
                ("lost", true, "connection refused".into(), "lost: connection refused".into(), None, 1),
                ("lost", true, "HTTP 503: busy".into(), "lost: HTTP 503: busy".into(), Some(503), 3),
                (
                    "unauthorized",
                    true,
                    "HTTP 401: the server refused the credentials (no)".into(),
                    "unauthorized: HTTP 401: the server refused the credentials: no".into(),
                    Some(401),
                    1
                ),
                ("rejected", false, "HTTP 400: too long".into(), "rejected: HTTP 400: too long".into(), Some(400), 2),
                ("unsupported", false, "no logprobs".into(), "unsupported: no logprobs".into(), None, 1),
                ("misdirected", true, "HTTP 302".into(), "misdirected: HTTP 302".into(), None, 1),
                ("invalid", false, "not JSON".into(), "invalid: not JSON".into(), None, 0),
            ]
        );
    }

    #[test]
    fn refused_credentials_and_a_wrong_place_are_lost_calls_that_stop_the_run() {
        // Their own record word, never a fourth outcome: the case is lost
        // and the run stops, both from the one row.
        for e in every() {
            let class = e.class();
            assert_eq!(class.effect.is_lost(), e.is_lost());
            let stops = matches!(class.effect, Effect::Stops(_));
            assert_eq!(stops, ["unauthorized", "misdirected"].contains(&class.kind), "{e}");
        }
    }

    #[test]
    fn the_sends_are_the_client_s_to_set() {
        let e = CallError::lost("reset").sent(2);
        assert_eq!((e.attempts(), e.reason()), (2, "reset".to_string()));
        // An error no send made has no count to take.
        assert_eq!(CallError::Invalid("x".into()).sent(3).attempts(), 0);
    }
}
