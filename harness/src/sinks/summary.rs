//! The terminal summary: counts by outcome, the efficiency readout per
//! instrument (with the instrument's own figure where it has one: bits per
//! character, decode tok/s, the KV pool, the rate a load held), the gate's verdict, why a run
//! stopped, printed from the run's summary line (the runner keeps the
//! tally, `runner::tally`); then each row the suite declares, its figure
//! computed by `sparktest-rows` as the board computes it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use sparktest_contract::{Metric, context, likelihood, speed, sustained_load, workload};
use sparktest_record::{CaseRecord, InstrumentSummary, Outcome, RowDeclaration, Summary};

use crate::error::Error;
use crate::events::{Event, Sink};

/// The last lines on stderr: the efficiency readout, the counts, the gate,
/// and why the run stopped early.
pub struct TerminalSummary {
    /// Where the measurement file is.
    pub file: PathBuf,
    /// The suite's name, for the gate line.
    pub suite: String,
    /// Each instrument's own figure, gathered from its finished cases.
    figures: Mutex<BTreeMap<String, Figure>>,
    /// The rows the suite declares, each with the finished cases that feed
    /// it (their calls left out).
    declared: Mutex<Vec<(RowDeclaration, Vec<CaseRecord<()>>)>>,
}

impl TerminalSummary {
    /// The summary of a run writing `file`, of suite `suite`, which
    /// declares `rows`.
    pub fn new(file: PathBuf, suite: String, rows: Vec<RowDeclaration>) -> Self {
        let declared = Mutex::new(rows.into_iter().map(|d| (d, Vec::new())).collect());
        TerminalSummary { file, suite, figures: Mutex::default(), declared }
    }
}

/// What a declared row's figure reads of a record: its id, outcome and
/// the row's metric, nothing else (no calls, tags or notes), so that a
/// long run's summary holds little per case.
fn slim(c: &CaseRecord, metric: Option<&str>) -> CaseRecord<()> {
    CaseRecord {
        id: c.id.clone(),
        instrument: c.instrument.clone(),
        case: String::new(),
        tags: Vec::new(),
        outcome: c.outcome,
        reason: None,
        metrics: c.metrics.iter().filter(|m| Some(m.name.as_str()) == metric).cloned().collect(),
        notes: Vec::new(),
        started_at: String::new(),
        seconds: 0.0,
        endpoint_seconds: 0.0,
        calls: Vec::new(),
        prompt_tokens: None,
        completion_tokens: None,
        transcript_sha256: String::new(),
        snapshots: Vec::new(),
        arm: c.arm.clone(),
        latency: None,
    }
}

/// A declared row's line: its figure and interval as the board computes
/// them, or why it has none.
fn declared_line(d: &RowDeclaration, cases: &[CaseRecord<()>]) -> String {
    let refs: Vec<&CaseRecord<()>> = cases.iter().collect();
    let words = match sparktest_rows::declared(d, &refs) {
        Ok(c) => match c.spread {
            Some(s) => format!("{} ({})", c.raw, s.words()),
            None => c.raw,
        },
        Err(sparktest_rows::NoFigure::NoMetric(why)) => format!("N/A: {why}"),
        Err(sparktest_rows::NoFigure::NoneGiven) if cases.is_empty() => "N/A: no case of the row ran".into(),
        Err(sparktest_rows::NoFigure::NoneGiven) => {
            format!("N/A: none of its {} cases gave a figure (lost, failed or not applicable)", cases.len())
        }
    };
    format!("sparktest: row {}: {words}", d.title)
}

impl Sink for TerminalSummary {
    fn event(&self, event: &Event) -> Result<(), Error> {
        match event {
            Event::CaseFinished(f) => {
                let mut figures = self.figures.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(figure) = Figure::of(&f.record.instrument)
                    .map(|new| figures.entry(f.record.instrument.clone()).or_insert(new))
                {
                    figure.add(&f.record);
                }
                drop(figures);
                let mut declared = self.declared.lock().unwrap_or_else(|p| p.into_inner());
                // Interrupted cases are the harness's, not the row's: the
                // board leaves them out too.
                let counted = f.record.outcome != Outcome::Interrupted;
                for (d, cases) in declared.iter_mut().filter(|(d, _)| counted && sparktest_rows::feeds(d, &f.record)) {
                    cases.push(slim(&f.record, d.metric.as_deref()));
                }
            }
            Event::RunFinished(s) => {
                let figures = self.figures.lock().unwrap_or_else(|p| p.into_inner());
                let declared = self.declared.lock().unwrap_or_else(|p| p.into_inner());
                let rows: Vec<String> = declared.iter().map(|(d, cases)| declared_line(d, cases)).collect();
                print_summary(s, &figures, &rows, &self.file, &self.suite);
            }
            _ => {}
        }
        Ok(())
    }
}

/// The figure an instrument's board row shows, summed over this run's
/// passed cases; an instrument without one is read by its output tokens
/// per correct answer.
#[derive(Debug, Clone, PartialEq)]
enum Figure {
    /// likelihood: total bits over total characters (each case's own `bpc`
    /// where it gave no totals).
    BitsPerCharacter { bits: f64, chars: f64, bpc: Vec<f64> },
    /// speed: each passed decode case's mean decode rate, and how many
    /// decode cases ran (a suite may run only its agent workload).
    Decode { rates: Vec<f64>, cases: usize },
    /// context: the KV pool, in tokens.
    KvPool(Option<f64>),
    /// sustained-load: the highest rate any load held at its goodput
    /// threshold (the threshold beside it), and the loads read.
    Sustained { held: Option<(f64, f64)>, loads: usize },
}

fn metric(record: &CaseRecord, name: Metric) -> Option<f64> {
    sparktest_rows::metric(record, name.name()).filter(|v| v.is_finite())
}

impl Figure {
    /// The empty figure of an instrument that has one.
    fn of(instrument: &str) -> Option<Figure> {
        match instrument {
            likelihood::INSTRUMENT => Some(Figure::BitsPerCharacter { bits: 0.0, chars: 0.0, bpc: Vec::new() }),
            speed::INSTRUMENT => Some(Figure::Decode { rates: Vec::new(), cases: 0 }),
            context::INSTRUMENT => Some(Figure::KvPool(None)),
            sustained_load::INSTRUMENT => Some(Figure::Sustained { held: None, loads: 0 }),
            _ => None,
        }
    }

    fn add(&mut self, record: &CaseRecord) {
        // The row's cases only (the decode prompts), not the agent workload
        // that shares the instrument.
        let decode = record.tags.iter().any(|t| t == speed::ROW.title);
        if let Figure::Decode { cases, .. } = self
            && decode
        {
            *cases += 1;
        }
        if let Figure::Sustained { held, loads } = self {
            // A load that failed (nothing answered) still counts as read.
            *loads += 1;
            if let Some(rate) = metric(record, sustained_load::SUSTAINED_REQ_S)
                && held.is_none_or(|(best, _)| rate > best)
            {
                *held = Some((rate, metric(record, sustained_load::GOODPUT_THRESHOLD).unwrap_or(f64::NAN)));
            }
            return;
        }
        if record.outcome != Outcome::Pass {
            return;
        }
        match self {
            Figure::BitsPerCharacter { bits, chars, bpc } => {
                match (metric(record, likelihood::BITS), metric(record, likelihood::CHARS)) {
                    (Some(b), Some(c)) if c > 0.0 => {
                        *bits += b;
                        *chars += c;
                    }
                    _ => bpc.extend(metric(record, likelihood::BPC)),
                }
            }
            Figure::Decode { rates, .. } => {
                if decode {
                    rates.extend(metric(record, workload::DECODE_TOK_S));
                }
            }
            Figure::KvPool(pool) => {
                if let Some(p) = metric(record, context::KV_POOL_TOKENS) {
                    *pool = Some(p);
                }
            }
            // Read above, whatever the outcome.
            Figure::Sustained { .. } => {}
        }
    }

    /// The words of the summary line; None where the run held none of the
    /// figure's cases.
    fn words(&self) -> Option<String> {
        Some(match self {
            Figure::BitsPerCharacter { bits, chars, bpc } => {
                let value = if *chars > 0.0 {
                    Some(bits / chars)
                } else {
                    (!bpc.is_empty()).then(|| bpc.iter().sum::<f64>() / bpc.len() as f64)
                };
                value.map_or("no bits per character (no case passed)".into(), |v| format!("{v:.4} bits per character"))
            }
            Figure::Decode { cases: 0, .. } => return None,
            Figure::Decode { rates, .. } if rates.is_empty() => "no decode tok/s (no decode case passed)".into(),
            Figure::Decode { rates, .. } => format!(
                "{:.2} decode tok/s (mean of {} prompt{})",
                rates.iter().sum::<f64>() / rates.len() as f64,
                rates.len(),
                if rates.len() == 1 { "" } else { "s" }
            ),
            Figure::KvPool(Some(p)) => format!("KV pool {} tokens", thousands(*p)),
            Figure::KvPool(None) => "no KV pool figure (no case passed)".into(),
            Figure::Sustained { loads: 0, .. } => return None,
            Figure::Sustained { held: Some((rate, threshold)), .. } => {
                format!("{rate:.2} req/s held at goodput >= {threshold:.0}% (the highest rate held)")
            }
            Figure::Sustained { held: None, .. } => "no rate held at its goodput threshold".into(),
        })
    }
}

/// A whole number with thousands separators: 32768 → 32,768.
fn thousands(n: f64) -> String {
    let digits = format!("{:.0}", n.abs());
    let mut out = String::new();
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(d);
    }
    if n < 0.0 { format!("-{out}") } else { out }
}

/// One instrument's efficiency readout: pass/fail, then its own figure (or
/// its output tokens per correct answer), then its times.
fn readout(i: &InstrumentSummary, figure: Option<&Figure>) -> String {
    let own = figure.and_then(Figure::words).unwrap_or_else(|| {
        format!(
            "{} output tokens per correct answer",
            i.output_tokens_per_correct.map_or("n/a".to_string(), |n| format!("{n:.0}"))
        )
    });
    format!(
        "sparktest: {}: {}/{} correct, {} lost, {own}, {:.2} s per case, harness {:.1} ms per case",
        i.name,
        i.correct,
        i.given,
        i.lost,
        i.mean_seconds,
        i.mean_harness_seconds * 1000.0
    )
}

fn print_summary(
    s: &Summary,
    figures: &BTreeMap<String, Figure>,
    rows: &[String],
    file: &std::path::Path,
    suite: &str,
) {
    for i in &s.instruments {
        crate::warn_line!("{}", readout(i, figures.get(&i.name)));
    }
    for line in rows {
        crate::warn_line!("{line}");
    }
    if let Some(signal) = &s.interrupted {
        crate::warn_line!(
            "sparktest: the run was interrupted by {signal}: {} case(s) in flight recorded as interrupted; `--resume` runs the rest",
            s.interrupted_cases
        );
    } else if let Some(why) = &s.stopped {
        crate::warn_line!("sparktest: the run stopped early: {why}");
    }
    crate::warn_line!(
        "sparktest: {} passed, {} failed, {} lost, {} not applicable{}; measurements in {}",
        s.passed,
        s.failed,
        s.lost,
        s.not_applicable,
        if s.interrupted_cases > 0 { format!(", {} interrupted", s.interrupted_cases) } else { String::new() },
        file.display()
    );
    if let Some(g) = &s.gate {
        if g.passed {
            crate::warn_line!("sparktest: gate {suite}: PASSED, all {} checks passed", s.passed + s.not_applicable);
        } else {
            crate::warn_line!("sparktest: gate {suite}: FAILED, {} checks did not pass:", g.failing.len());
            for f in &g.failing {
                crate::warn_line!("sparktest:   {f}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(instrument: &str, outcome: Outcome, tags: &[&str], metrics: &[(Metric, f64)]) -> CaseRecord {
        CaseRecord {
            id: format!("{instrument}::g::c"),
            instrument: instrument.into(),
            case: "g::c".into(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            outcome,
            reason: None,
            metrics: metrics
                .iter()
                .map(|(n, v)| sparktest_record::Metric { name: n.name().into(), value: *v, unit: String::new() })
                .collect(),
            notes: Vec::new(),
            started_at: String::new(),
            seconds: 1.0,
            endpoint_seconds: 1.0,
            calls: Vec::new(),
            prompt_tokens: None,
            completion_tokens: None,
            transcript_sha256: String::new(),
            snapshots: Vec::new(),
            arm: None,
            latency: None,
        }
    }

    fn summary(name: &str) -> InstrumentSummary {
        InstrumentSummary {
            name: name.into(),
            given: 3,
            correct: 2,
            failed: 0,
            lost: 1,
            not_applicable: 0,
            mean_seconds: 1.5,
            output_tokens_per_correct: None,
            mean_harness_seconds: 0.002,
        }
    }

    fn line(instrument: &str, records: &[CaseRecord]) -> String {
        let mut figure = Figure::of(instrument);
        for r in records {
            figure.iter_mut().for_each(|f| f.add(r));
        }
        readout(&summary(instrument), figure.as_ref())
    }

    #[test]
    fn each_instrument_says_its_own_figure_beside_pass_and_fail() {
        let pass = Outcome::Pass;
        let l = line(
            likelihood::INSTRUMENT,
            &[record(likelihood::INSTRUMENT, pass, &[], &[(likelihood::BITS, 900.0), (likelihood::CHARS, 1000.0)])],
        );
        assert!(l.contains("2/3 correct, 1 lost, 0.9000 bits per character,"), "{l}");
        assert!(!l.contains("output tokens"), "{l}");
        let only_bpc =
            line(likelihood::INSTRUMENT, &[record(likelihood::INSTRUMENT, pass, &[], &[(likelihood::BPC, 1.25)])]);
        assert!(only_bpc.contains("1.2500 bits per character"), "{only_bpc}");

        let row = speed::ROW.title;
        let l = line(
            speed::INSTRUMENT,
            &[
                record(speed::INSTRUMENT, pass, &[row], &[(workload::DECODE_TOK_S, 40.0)]),
                record(speed::INSTRUMENT, pass, &[row], &[(workload::DECODE_TOK_S, 60.0)]),
                // Not the row's: the agent workload, and a lost decode case.
                record(speed::INSTRUMENT, pass, &["agent"], &[(workload::DECODE_TOK_S, 1000.0)]),
                record(speed::INSTRUMENT, Outcome::Lost, &[row], &[(workload::DECODE_TOK_S, 1000.0)]),
            ],
        );
        assert!(l.contains("50.00 decode tok/s (mean of 2 prompts)"), "{l}");

        let l =
            line(context::INSTRUMENT, &[record(context::INSTRUMENT, pass, &[], &[(context::KV_POOL_TOKENS, 32768.0)])]);
        assert!(l.contains("KV pool 32,768 tokens"), "{l}");

        // Nothing passed: said, never a zero.
        let l = line(likelihood::INSTRUMENT, &[record(likelihood::INSTRUMENT, Outcome::Lost, &[], &[])]);
        assert!(l.contains("no bits per character (no case passed)"), "{l}");
        let lost = record(speed::INSTRUMENT, Outcome::Lost, &[row], &[]);
        assert!(line(speed::INSTRUMENT, &[lost]).contains("no decode tok/s (no decode case passed)"));
        // A run of the agent workload alone has no decode figure to give.
        let agent = record(speed::INSTRUMENT, pass, &["agent"], &[]);
        assert!(line(speed::INSTRUMENT, &[agent]).contains("n/a output tokens per correct answer"));
        assert!(line(context::INSTRUMENT, &[]).contains("no KV pool figure"));

        // Sustained load: the highest rate held at its threshold, over the
        // sweep and the fixed rates; none held is said, never a zero.
        let held = |rate: f64| {
            record(
                sustained_load::INSTRUMENT,
                pass,
                &[],
                &[(sustained_load::SUSTAINED_REQ_S, rate), (sustained_load::GOODPUT_THRESHOLD, 90.0)],
            )
        };
        let not_held = record(sustained_load::INSTRUMENT, Outcome::Fail, &[], &[]);
        let l = line(sustained_load::INSTRUMENT, &[held(0.5), held(1.25), not_held.clone()]);
        assert!(l.contains("1.25 req/s held at goodput >= 90% (the highest rate held)"), "{l}");
        assert!(!l.contains("output tokens"), "{l}");
        let l = line(sustained_load::INSTRUMENT, &[not_held]);
        assert!(l.contains("no rate held at its goodput threshold"), "{l}");

        // Any other instrument keeps its output tokens per correct answer.
        let l = line("a-bench", &[]);
        assert!(l.contains("2/3 correct, 1 lost, n/a output tokens per correct answer"), "{l}");
    }

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(0.0), "0");
        assert_eq!(thousands(999.0), "999");
        assert_eq!(thousands(1000.0), "1,000");
        assert_eq!(thousands(1234567.0), "1,234,567");
    }
}
