//! `board`: the reporter plugin of cargo-sparktest. Measurement files in;
//! `board.html` (self-contained), `board.md` and `standings.json` out.
//!
//! - `model`: runs (read and merged by `sparktest_record::reader`) →
//!   columns (one per serving configuration) → rows →
//!   cells with a 0–10 standing within the row, the raw figure, the
//!   configuration line and the records behind it, or N/A with its reason.
//! - `rows`, `figure`, `run` (from `sparktest-rows`): which records feed
//!   each row, its figure and scoring rule, and the runs they read.
//! - `boxes`: the boxes each column and each file was measured on.
//! - `sections`: efficiency readout, tokens/s by combination, every run,
//!   pinned configurations, hardware, methodology, plot data.
//! - `html`, `markdown`: rendering; `standings.json` is the `Board`.
//!
//! The output depends only on the records (no clock, no randomness, runs
//! sorted by start time): the same files give the same bytes.
//!
//! The modules are private. The component calls [`render_with`] with the
//! host's hand-over ([`Handover`]; [`render`] is it with judgements only);
//! the `render_timing` example times the steps apart through [`runs`],
//! [`build`], [`render_html`] and [`render_markdown`].
//!
mod boxes;
mod config;
mod frontier;
mod html;
mod markdown;
mod model;
mod sections;

use sparktest_rows::{cell as figure, coded as rows, run};

pub use config::Config;
pub use html::render as render_html;
pub use markdown::render as render_markdown;
pub use model::{Board, Runs, build};
pub use sparktest_record::handover::{Damage, FoldedNight, Handover, ReadOnce, Selected};

use config::{Judgements, References};

/// Read every file (named by position in errors) through the record
/// crate's reader: runs in start order, each run id once, the parts of one
/// run and a run with its resumes read as one, each case once.
pub fn runs(measurements: &[String]) -> Result<Runs, String> {
    let mut read = Vec::with_capacity(measurements.len());
    for (i, text) in measurements.iter().enumerate() {
        let file = sparktest_record::reader::File::<run::Call>::parse(text)
            .map_err(|e| format!("measurement file #{}: {e}", i + 1))?;
        // The host hands over whole lines only: damage here is a bug of
        // whoever called, said as such.
        if let Some(e) = file.damage {
            return Err(format!("measurement file #{}: {e}", i + 1));
        }
        read.push(file.run);
    }
    Ok(Runs::new(sparktest_record::reader::merge(read)))
}

/// Row overrides must name a row, and only rows whose figure is a standing
/// may be scored as absolute.
fn check_config(config: &Config, defs: &[rows::RowDef]) -> Result<(), String> {
    for (title, rc) in &config.rows {
        let Some(def) = defs.iter().find(|d| d.title == *title) else {
            let known: Vec<&str> = defs.iter().map(|d| &*d.title).collect();
            return Err(format!("board config: rows.{title:?} names no row (rows: {})", known.join(", ")));
        };
        if rc.rule == Some(config::Rule::Absolute) && def.absolute_rule.is_empty() {
            return Err(format!(
                "board config: rows.{title:?}: its figure is not a 0–10 standing, so it cannot be absolute"
            ));
        }
        if rc.tie_margin.is_some_and(|m| !(0.0..1.0).contains(&m)) {
            return Err(format!("board config: rows.{title:?}: tie-margin must be in [0, 1)"));
        }
    }
    Ok(())
}

/// Every judged cell must name a column and hold a standing in 0–10.
fn check_judgements(board: &model::Board, judgements: &Judgements) -> Result<(), String> {
    for j in &judgements.row {
        for c in &j.cell {
            let matches = board.columns.iter().filter(|col| col.key == c.column || col.target == c.column).count();
            if matches != 1 {
                let known: Vec<&str> = board.columns.iter().map(|c| c.key.as_str()).collect();
                return Err(format!(
                    "judgements: row {:?}: column {:?} names {} columns; give one of: {}",
                    j.title,
                    c.column,
                    matches,
                    known.join(", ")
                ));
            }
            if !(0.0..=10.0).contains(&c.standing) {
                return Err(format!(
                    "judgements: row {:?}, column {:?}: standing {} is not in 0–10",
                    j.title, c.column, c.standing
                ));
            }
        }
    }
    Ok(())
}

/// Every published reference names a board row, has its own label (not a
/// measured column's), a source and a date.
fn check_references(board: &model::Board, refs: &References) -> Result<(), String> {
    let mut seen = std::collections::BTreeSet::new();
    for (i, r) in refs.reference.iter().enumerate() {
        let name = format!("references: reference #{} ({:?})", i + 1, r.label);
        if r.label.trim().is_empty() || r.source.trim().is_empty() {
            return Err(format!("{name}: label and source must not be empty"));
        }
        if !seen.insert(r.label.as_str()) {
            return Err(format!("{name}: a second reference of this label"));
        }
        if board.columns.iter().any(|c| c.label == r.label || c.key == r.label) {
            return Err(format!(
                "{name}: a measured column has this label; a reference is never mixed into a measured column, give it its own"
            ));
        }
        for d in std::iter::once(&r.date).chain(r.figure.iter().filter_map(|f| f.date.as_ref())) {
            if !config::is_date(d) {
                return Err(format!("{name}: date {d:?} is not YYYY-MM-DD (or YYYY-MM, YYYY)"));
            }
        }
        for f in &r.figure {
            if !board.rows.iter().any(|row| row.title == f.row) {
                let known: Vec<&str> = board.rows.iter().map(|r| r.title.as_str()).collect();
                return Err(format!("{name}: row {:?} names no row of the board (rows: {})", f.row, known.join(", ")));
            }
        }
    }
    Ok(())
}

/// What the host handed over besides the measurement files
/// ([`Handover`]), as the pages read it: the references parsed.
#[derive(Debug, Clone, Default)]
pub struct Extras {
    /// Damaged measurement files: `{file, line, message, kept}`.
    pub damage: Vec<Damage>,
    /// Whole files of a run another file already gave, read once:
    /// `{file, first, run_id, identical}`.
    pub read_once: Vec<ReadOnce>,
    /// Transcript addresses available beside the board (`transcripts/<sha>.json`).
    pub transcripts: std::collections::BTreeSet<String>,
    /// Published references (`board --references FILE`).
    pub references: Option<References>,
    /// What the board covers, where the host selected runs (`board
    /// --campaign`, `--since`, `--until`).
    pub selection: Option<Selected>,
    /// Nights of the run log the host handed as counts, not runs (a board
    /// of more history than the reporter is handed whole), the latest
    /// first.
    pub folded: Vec<FoldedNight>,
    /// Runs of the latest night the host handed as their run-log line
    /// only: how many (the run log lists them with the rest).
    pub logged: usize,
}

/// The three files of the board, the config given as JSON text (empty for
/// none).
pub fn render(
    measurements: &[String],
    config: &str,
    judgements: Option<&str>,
) -> Result<Vec<(String, Vec<u8>)>, String> {
    let config: Config = if config.trim().is_empty() {
        Config::default()
    } else {
        serde_json::from_str(config).map_err(|e| format!("board config: {e}"))?
    };
    let handover = Handover { judgements: judgements.map(str::to_string), ..Handover::default() };
    render_with(measurements, &config, handover)
}

/// The three files of the board, with what the host handed over.
pub fn render_with(
    measurements: &[String],
    config: &Config,
    handover: Handover,
) -> Result<Vec<(String, Vec<u8>)>, String> {
    let Handover { selection, damage, read_once, folded, logged, transcripts, judgements, references } = handover;
    let judgements: Judgements = match judgements {
        Some(text) => {
            Judgements { given: true, ..serde_json::from_str(&text).map_err(|e| format!("judgements: {e}"))? }
        }
        None => Judgements::default(),
    };
    let references: Option<References> =
        references.map(|r| serde_json::from_str(&r).map_err(|e| format!("references: {e}"))).transpose()?;
    let extras = Extras { damage, read_once, transcripts, references, selection, folded, logged: logged.len() };
    let runs = runs(measurements)?.with_logged(logged);
    let defs = rows::all(&runs);
    check_config(config, &defs)?;
    let mut board = model::build(&runs, &defs, config, &judgements);
    // Columns from unlike hardware: each kind a letter, said in the head;
    // each column names the boxes its cells' records came from.
    boxes::name(&mut board, &runs);
    check_judgements(&board, &judgements)?;
    if let Some(refs) = &extras.references {
        check_references(&board, refs)?;
        board.references = refs.reference.clone();
    }
    let standings = serde_json::json!({"format": "sparktest-board 1", "board": board});
    let mut json = serde_json::to_string_pretty(&standings).map_err(|e| e.to_string())?;
    json.push('\n');
    Ok(vec![
        ("board.html".into(), html::render(&board, &runs, &extras).into_bytes()),
        ("board.md".into(), markdown::render(&board, &runs, &extras).into_bytes()),
        ("standings.json".into(), json.into_bytes()),
    ])
}

#[cfg(target_arch = "wasm32")]
mod component {
    use sparktest_sdk::reporter::*;

    struct Board;

    impl Reporter for Board {
        type Config = super::Config;

        fn render(measurements: &[String], config: &super::Config) -> Result<Vec<Artifact>, String> {
            Ok(super::render_with(measurements, config, handover()?)?
                .into_iter()
                .map(|(path, content)| Artifact { path, content })
                .collect())
        }
    }

    register_reporter!(Board);
}
