//! JUnit XML (`--junit PATH`), through the `quick-junit` crate that
//! cargo-nextest uses: one `<testsuite>` per instrument (per arm for paired
//! ones), one `<testcase>` per case. A lost case is an `<error>` (the serve
//! failed, not the model), a failed one a `<failure>`, a not-applicable one
//! `<skipped>`; the reason is the message.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};
use sparktest_record::{CaseRecord, Outcome};

use crate::error::Error;
use crate::events::{Event, Sink};

/// Collects the cases and writes the report when the run ends.
pub struct JunitSink {
    path: PathBuf,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    name: String,
    properties: Vec<(String, String)>,
    suites: BTreeMap<String, Vec<CaseRecord>>,
}

impl JunitSink {
    /// A report to be written at `path`.
    pub fn new(path: PathBuf) -> Self {
        JunitSink { path, state: Mutex::new(State::default()) }
    }
}

/// The JUnit test case of one record.
pub fn test_case(r: &CaseRecord) -> TestCase {
    // Foreign text, in an attribute CI prints: on one line, escaped.
    let reason = sparktest_record::foreign::one_line(r.reason.as_deref().unwrap_or_default()).into_owned();
    let status = match r.outcome {
        Outcome::Pass => TestCaseStatus::success(),
        Outcome::Fail | Outcome::Lost => {
            let (kind, ty) = if r.outcome == Outcome::Lost {
                (NonSuccessKind::Error, "lost")
            } else {
                (NonSuccessKind::Failure, "fail")
            };
            let mut s = TestCaseStatus::non_success(kind);
            s.set_message(reason.as_str()).set_type(ty);
            s
        }
        Outcome::NotApplicable => {
            let mut s = TestCaseStatus::skipped();
            s.set_message(format!("not applicable: {reason}")).set_type("not-applicable");
            s
        }
        Outcome::Interrupted => {
            let mut s = TestCaseStatus::skipped();
            s.set_message(format!("interrupted: {reason}")).set_type("interrupted");
            s
        }
    };
    let mut case = TestCase::new(r.case.as_str(), status);
    case.set_classname(r.id.trim_end_matches(&r.case).trim_end_matches("::"));
    case.set_time(Duration::from_secs_f64(r.seconds.max(0.0)));
    case
}

impl Sink for JunitSink {
    fn event(&self, event: &Event) -> Result<(), Error> {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match event {
            Event::RunStarted { manifest, .. } => {
                st.name = format!("sparktest {} on {}", manifest.suite.name, manifest.target.name);
                st.properties = vec![
                    ("run-id".into(), manifest.run_id.clone()),
                    ("suite-sha256".into(), manifest.suite.sha256.clone()),
                    ("target".into(), manifest.target.name.clone()),
                    ("model".into(), manifest.target.model_id.clone()),
                    ("engine".into(), manifest.target.engine.clone()),
                ];
            }
            Event::CaseStarted => {}
            Event::CaseFinished(f) => {
                let suite = f.record.id.trim_end_matches(&f.record.case).trim_end_matches("::").to_string();
                st.suites.entry(suite).or_default().push(f.record.clone());
            }
            Event::RunFinished(summary) => {
                let mut report = Report::new(st.name.as_str());
                report.set_time(Duration::from_secs_f64(summary.seconds.max(0.0)));
                for (name, records) in &st.suites {
                    let mut suite = TestSuite::new(name.as_str());
                    for (k, v) in &st.properties {
                        suite.add_property(Property::new(k.as_str(), v.as_str()));
                    }
                    suite.add_test_cases(records.iter().map(test_case));
                    report.add_test_suite(suite);
                }
                let io = |e: String| Error::io(format_args!("write the JUnit report {}", self.path.display()), e);
                if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir).map_err(|e| io(e.to_string()))?;
                }
                let xml = report.to_string().map_err(|e| io(e.to_string()))?;
                std::fs::write(&self.path, xml).map_err(|e| io(e.to_string()))?;
            }
        }
        Ok(())
    }
}
