//! What `diff` found, as JSON (`--format json`, these types) and as text.

use std::fmt::Write as _;

use serde::Serialize;

/// How the two sides are compared.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Seed of every bootstrap.
    pub seed: u64,
    /// Bootstrap resamples.
    pub resamples: usize,
}

/// The whole comparison of B against A.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// `sparktest-diff 1`.
    pub format: String,
    /// The first side (the baseline).
    pub a: SideInfo,
    /// The second side (the candidate).
    pub b: SideInfo,
    /// Configuration fields that differ between the sides: their figures
    /// compare two configurations, not two runs of one.
    pub configuration: Vec<ConfigDifference>,
    /// Seed of every bootstrap in this report.
    pub seed: u64,
    /// Bootstrap resamples per figure.
    pub resamples: usize,
    /// Significance level of every test.
    pub alpha: f64,
    /// One entry per board row either side has records for.
    pub rows: Vec<RowDiff>,
    /// Whether any row changed beyond run-to-run variation for the worse.
    pub regression: bool,
    /// Why the comparison is incomplete: items the baseline answered that
    /// the candidate lost or never recorded, candidate runs that stopped
    /// early, were interrupted, never finished or are damaged. Empty when
    /// complete. `--fail-on regression` fails on an incomplete comparison
    /// unless `--allow-lost` is given.
    pub incomplete: Vec<String>,
}

/// One side, as read.
#[derive(Debug, Clone, Serialize)]
pub struct SideInfo {
    /// What the command line named.
    pub spec: String,
    /// The run ids read.
    pub runs: Vec<String>,
}

/// A configuration field whose values differ.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigDifference {
    /// `engine`, `build`, `model id`, `model sha256`, `launch command`,
    /// `tool choice`, `suite`, `pin …`.
    pub field: String,
    /// A's value(s), `; `-joined; `-` when absent.
    pub a: String,
    /// B's value(s).
    pub b: String,
}

/// Whether a change is beyond run-to-run variation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Within run-to-run variation: the test cannot tell it from noise.
    Within,
    /// Beyond run-to-run variation: a change.
    Beyond,
    /// Nothing to judge variation by (one sample and no spread, or no item
    /// measured on both sides).
    Undecided,
}

impl Verdict {
    /// The words the text output uses.
    pub fn phrase(self) -> &'static str {
        match self {
            Verdict::Within => "within run-to-run variation",
            Verdict::Beyond => "beyond variation",
            Verdict::Undecided => "cannot tell",
        }
    }
}

/// Which way a change went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    /// B is better.
    Better,
    /// B is worse.
    Worse,
    /// No change.
    Same,
}

impl Direction {
    /// Which way B went, from how B's figure compares with A's (`Greater`:
    /// B's is higher) and whether higher is better.
    pub fn from_comparison(b_against_a: std::cmp::Ordering, higher_better: bool) -> Direction {
        use std::cmp::Ordering::{Equal, Greater, Less};
        match (b_against_a, higher_better) {
            (Equal, _) => Direction::Same,
            (Greater, true) | (Less, false) => Direction::Better,
            _ => Direction::Worse,
        }
    }
}

/// One board row.
#[derive(Debug, Clone, Serialize)]
pub struct RowDiff {
    /// The row's title.
    pub row: String,
    /// Pass/fail items, when the row has any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pass_rate: Option<PassRateDiff>,
    /// Per-item figures.
    pub figures: Vec<FigureDiff>,
    /// Items lost on either side: excluded from every test, never a
    /// regression of the model.
    pub lost: Vec<LostItem>,
    /// Items the baseline answered (passed or failed) that the candidate
    /// lost, was interrupted on, or never recorded.
    pub unanswered: Vec<Unanswered>,
    /// Items not applicable on either side (excluded).
    pub not_applicable: usize,
    /// Items recorded on one side only.
    pub only_in_a: usize,
    /// Items recorded on one side only.
    pub only_in_b: usize,
}

/// An item lost on one side or both.
#[derive(Debug, Clone, Serialize)]
pub struct LostItem {
    /// Case id (with its arm, `arm/id`, for paired instruments).
    pub case: String,
    /// `a`, `b` or `both`.
    pub side: String,
    /// The lost record's reason.
    pub reason: String,
}

/// An item the baseline answered and the candidate did not.
#[derive(Debug, Clone, Serialize)]
pub struct Unanswered {
    /// Case id (with its arm, `arm/id`, for paired instruments).
    pub case: String,
    /// `run#case` of the baseline's answer.
    pub a: String,
    /// `not recorded`, or the candidate's `lost: reason` /
    /// `interrupted: reason`.
    pub why: String,
}

/// Pass/fail items of a row.
#[derive(Debug, Clone, Serialize)]
pub struct PassRateDiff {
    /// `mcnemar-exact` (paired by item) or `fisher-exact` (unpaired).
    pub test: String,
    /// Items passed on A.
    pub a_passed: u64,
    /// Items given on A (passed or failed; lost and N/A left out).
    pub a_given: u64,
    /// Items passed on B.
    pub b_passed: u64,
    /// Items given on B.
    pub b_given: u64,
    /// Wilson 95% interval of A's pass rate.
    pub a_interval: Option<[f64; 2]>,
    /// Wilson 95% interval of B's pass rate.
    pub b_interval: Option<[f64; 2]>,
    /// Items paired (given on both sides); 0 for an unpaired test.
    pub paired: u64,
    /// Paired items that passed on A and failed on B.
    pub pass_to_fail: Vec<Flip>,
    /// Paired items that failed on A and passed on B.
    pub fail_to_pass: Vec<Flip>,
    /// The test's two-sided p-value.
    pub p_value: f64,
    /// Within, beyond or undecided.
    pub verdict: Verdict,
    /// Which way B moved.
    pub direction: Direction,
}

/// One item that flipped, with the records that show both transcripts
/// (`cargo sparktest show RUN#CASE`).
#[derive(Debug, Clone, Serialize)]
pub struct Flip {
    /// Case id.
    pub case: String,
    /// `run#case` of A's record.
    pub a: String,
    /// `run#case` of B's record.
    pub b: String,
}

/// One per-item figure of a row.
#[derive(Debug, Clone, Serialize)]
pub struct FigureDiff {
    /// Metric name, e.g. `decode-tok-s`.
    pub metric: String,
    /// Its unit.
    pub unit: String,
    /// Whether more is better.
    pub higher_better: bool,
    /// `paired-bootstrap-mean-ratio` or `unpaired-bootstrap-ratio-of-means`;
    /// for the Sustained load row's `sustained-req-s`,
    /// `bootstrap-over-requests` (each point's requests resampled, the
    /// figure read again; see `diff/requests.rs`).
    pub method: String,
    /// Items with the figure on both sides (paired), or on each side.
    pub items: usize,
    /// Samples on A (items × repetitions).
    pub a_samples: usize,
    /// Samples on B.
    pub b_samples: usize,
    /// Mean of A's per-item means.
    pub a_mean: f64,
    /// Mean of B's per-item means.
    pub b_mean: f64,
    /// B ÷ A (the mean of the per-item ratios when paired). Undefined
    /// (NaN; `null` in JSON, "no ratio" in text) when A's figure is 0 on
    /// every item: a sweep whose baseline held no rate.
    pub ratio: f64,
    /// 95% bootstrap interval of the ratio.
    pub interval: Option<[f64; 2]>,
    /// Within, beyond or undecided.
    pub verdict: Verdict,
    /// Which way B moved.
    pub direction: Direction,
    /// Why it cannot tell, or that the interval is too wide to see small
    /// changes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

fn direction_words(d: Direction) -> &'static str {
    match d {
        Direction::Better => "better",
        Direction::Worse => "worse",
        Direction::Same => "no change",
    }
}

/// "beyond variation, worse", or the verdict alone.
fn verdict_words(v: Verdict, d: Direction) -> String {
    match v {
        Verdict::Beyond => format!("{}, {}", v.phrase(), direction_words(d)),
        _ => v.phrase().to_string(),
    }
}

/// The report as text.
pub fn text(r: &Report) -> String {
    // What the files hold (specs, case ids, reasons, notes, row titles) is
    // foreign text: each on one line, escaped.
    let o = |s: &str| sparktest_record::foreign::one_line(s).into_owned();
    let mut out = String::new();
    let _ = writeln!(out, "diff A: {} ({})", o(&r.a.spec), o(&r.a.runs.join(", ")));
    let _ = writeln!(out, "  →  B: {} ({})", o(&r.b.spec), o(&r.b.runs.join(", ")));
    if r.configuration.is_empty() {
        let _ = writeln!(out, "configuration: the same on both sides (engine, build, model, launch, suite)");
    } else {
        let _ = writeln!(out, "configuration differs: these figures compare two configurations, not two runs of one");
        for d in &r.configuration {
            let _ = writeln!(out, "  {}: {} → {}", d.field, o(&d.a), o(&d.b));
        }
    }
    let _ = writeln!(
        out,
        "tests at α = {}; bootstrap: {} resamples, seed {} (--seed repeats it)",
        r.alpha, r.resamples, r.seed
    );
    for row in &r.rows {
        let _ = writeln!(out, "\n{}", sparktest_record::foreign::starting_a_line(&row.row));
        if let Some(p) = &row.pass_rate {
            let interval =
                |i: &Option<[f64; 2]>| i.map(|[l, h]| format!(" [{}–{}]", pct(l), pct(h))).unwrap_or_default();
            let test = if p.test == "mcnemar-exact" {
                format!(
                    "McNemar exact, {} paired: {} pass→fail, {} fail→pass",
                    p.paired,
                    p.pass_to_fail.len(),
                    p.fail_to_pass.len()
                )
            } else {
                "Fisher exact, unpaired: the items differ".to_string()
            };
            let _ = writeln!(
                out,
                "  passed {}/{}{} → {}/{}{}: {} ({test}, p = {:.3e})",
                p.a_passed,
                p.a_given,
                interval(&p.a_interval),
                p.b_passed,
                p.b_given,
                interval(&p.b_interval),
                verdict_words(p.verdict, p.direction),
                p.p_value,
            );
            for f in &p.pass_to_fail {
                let _ = writeln!(out, "    pass→fail {}  ({} | {})", o(&f.case), o(&f.a), o(&f.b));
            }
            for f in &p.fail_to_pass {
                let _ = writeln!(out, "    fail→pass {}  ({} | {})", o(&f.case), o(&f.a), o(&f.b));
            }
        }
        for f in &row.figures {
            let interval = f.interval.map(|[l, h]| format!(", 95% CI ×{l:.3}–×{h:.3}")).unwrap_or_default();
            let ratio = if f.ratio.is_finite() { format!("×{:.3}", f.ratio) } else { "no ratio".to_string() };
            let _ = writeln!(
                out,
                "  {} {:.2} → {:.2} {}: {} ({ratio}{interval}, {} over {} items)",
                o(&f.metric),
                f.a_mean,
                f.b_mean,
                o(&f.unit),
                verdict_words(f.verdict, f.direction),
                f.method,
                f.items,
            );
            if let Some(n) = &f.note {
                let _ = writeln!(out, "    {}", o(n));
            }
        }
        if !row.lost.is_empty() {
            let _ = writeln!(out, "  lost (left out of the tests; not a regression of the model): {}", row.lost.len());
            for l in &row.lost {
                let _ = writeln!(out, "    {} on {}: {}", o(&l.case), l.side, o(&l.reason));
            }
        }
        if !row.unanswered.is_empty() {
            let _ = writeln!(out, "  answered on A, not on B (the comparison is incomplete): {}", row.unanswered.len());
            for u in &row.unanswered {
                let _ = writeln!(out, "    {}: {} (A: {})", o(&u.case), o(&u.why), o(&u.a));
            }
        }
        if row.not_applicable > 0 {
            let _ = writeln!(out, "  not applicable on a side (left out): {}", row.not_applicable);
        }
        if row.only_in_a + row.only_in_b > 0 {
            let _ = writeln!(out, "  recorded on one side only: {} in A, {} in B", row.only_in_a, row.only_in_b);
        }
    }
    let verdict = match (r.regression, r.incomplete.is_empty()) {
        (true, _) => "regression: a row changed beyond run-to-run variation for the worse".to_string(),
        (false, true) => "no regression beyond run-to-run variation".to_string(),
        (false, false) => format!(
            "incomplete: no regression among the items both sides answered, but B cannot be compared whole ({}); \
             `--fail-on regression` fails unless `--allow-lost`",
            o(&r.incomplete.join("; "))
        ),
    };
    let _ = writeln!(out, "\n{verdict}");
    out
}
