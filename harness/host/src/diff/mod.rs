//! `cargo sparktest diff A B`: did B change anything against A, or is it
//! run-to-run variation? Per board row, pass/fail items paired by item
//! (McNemar's exact test) or unpaired (Fisher's exact test), per-item
//! figures by a seeded bootstrap of the mean paired ratio; lost items are
//! left out and named; configuration differences are named. The maths is
//! in `sparktest-stats`.

pub mod compare;
pub mod load;
pub mod report;
pub mod requests;

use std::path::PathBuf;

pub use compare::compare;
pub use report::Settings;

use crate::config::Config;
use crate::error::Error;

/// How the report is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffFormat {
    /// Text for a reader.
    Text,
    /// One JSON object (the report, as `docs/diff.md` describes it).
    Json,
}

/// Everything `cargo sparktest diff` needs.
#[derive(Debug)]
pub struct DiffArgs {
    /// The baseline: a run id, run group, measurement file or folder.
    pub a: String,
    /// The candidate, named the same ways.
    pub b: String,
    /// Folder run ids and groups are looked up in (default: the project's).
    pub measurements_dir: Option<PathBuf>,
    /// Text or JSON.
    pub format: DiffFormat,
    /// Exit non-zero when a row changed beyond variation for the worse, or
    /// the comparison is incomplete (unless `allow_lost`).
    pub fail_on_regression: bool,
    /// With `fail_on_regression`: items the candidate lost or never
    /// recorded, and candidate runs that stopped early, do not fail it.
    pub allow_lost: bool,
    /// Seed of every bootstrap.
    pub seed: u64,
    /// Where the command was started.
    pub cwd: PathBuf,
}

/// Bootstrap resamples per figure: enough for a stable 95% interval.
pub const RESAMPLES: usize = 10_000;

/// Compare and print. Returns the process exit code: 0, or
/// [`sparktest_record::exit_code::REGRESSION`] with `--fail-on regression`
/// when a row changed beyond run-to-run variation for the worse, or when
/// the comparison is incomplete (items the baseline answered that the
/// candidate lost or never recorded, a candidate run stopped early) and
/// `--allow-lost` was not given.
pub fn diff(args: DiffArgs) -> Result<i32, Error> {
    let config = Config::discover(&args.cwd)?;
    let dir = config.measurements_dir(args.measurements_dir.as_deref());
    let a = load::read_side(&args.a, &args.cwd, &dir)?;
    let b = load::read_side(&args.b, &args.cwd, &dir)?;
    let report = compare(&a, &b, Settings { seed: args.seed, resamples: RESAMPLES });
    match args.format {
        DiffFormat::Text => print!("{}", report::text(&report)),
        DiffFormat::Json => {
            println!("{}", serde_json::to_string_pretty(&report).map_err(|e| Error::io("write the report", e))?)
        }
    }
    let incomplete = !report.incomplete.is_empty() && !args.allow_lost;
    Ok(if args.fail_on_regression && (report.regression || incomplete) {
        sparktest_record::exit_code::REGRESSION
    } else {
        sparktest_record::exit_code::OK
    })
}
