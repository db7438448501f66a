//! `board`: the reporter plugin of cargo-sparktest. Measurement files in;
//! `board.html` (self-contained), `board.md` and `standings.json` out.
//!
//! - [`model`]: runs → columns (one per serving configuration) → rows →
//!   cells with a 0–10 standing within the row, the raw figure, the
//!   configuration line and the records behind it, or N/A with its reason.
//! - [`rows`]: which records feed each row and its scoring rule.
//! - [`sections`]: efficiency readout, tokens/s by combination, every run,
//!   pinned configurations, hardware, methodology, plot data.
//! - [`html`], [`markdown`]: rendering; `standings.json` is [`model::Board`].
//!
//! The output depends only on the records (no clock, no randomness, runs
//! sorted by start time): the same files give the same bytes.

pub mod config;
pub mod html;
pub mod markdown;
pub mod model;
pub mod rows;
pub mod sections;

use config::{Config, Judgements};
use model::Run;

/// Parse every file (named by position in errors) and order the runs by
/// start time, then run id.
pub fn runs(measurements: &[String]) -> Result<Vec<Run>, String> {
    let mut runs = measurements.iter().enumerate().map(|(i, text)| Run::parse(text, i + 1)).collect::<Result<Vec<_>, _>>()?;
    runs.sort_by(|a, b| (&a.manifest.started_at, &a.manifest.run_id).cmp(&(&b.manifest.started_at, &b.manifest.run_id)));
    Ok(runs)
}

/// The three files of the board.
pub fn render(measurements: &[String], config: &str, judgements: Option<&str>) -> Result<Vec<(String, Vec<u8>)>, String> {
    let config: Config = if config.trim().is_empty() {
        Config::default()
    } else {
        serde_json::from_str(config).map_err(|e| format!("board config: {e}"))?
    };
    let judgements: Judgements = match judgements {
        Some(text) => serde_json::from_str(text).map_err(|e| format!("judgements: {e}"))?,
        None => Judgements::default(),
    };
    let runs = runs(measurements)?;
    let board = model::build(&runs, &config, &judgements);
    let standings = serde_json::json!({"format": "sparktest-board 1", "board": board});
    let mut json = serde_json::to_string_pretty(&standings).map_err(|e| e.to_string())?;
    json.push('\n');
    Ok(vec![
        ("board.html".into(), html::render(&board, &runs).into_bytes()),
        ("board.md".into(), markdown::render(&board, &runs).into_bytes()),
        ("standings.json".into(), json.into_bytes()),
    ])
}

#[cfg(target_arch = "wasm32")]
mod component {
    use sparktest_sdk::reporter::*;

    struct Board;

    impl Reporter for Board {
        fn render(measurements: &[String], config: &str) -> Result<Vec<Artifact>, String> {
            let judgements = if list_files().iter().any(|f| f == "judgements.json") {
                Some(String::from_utf8(read_file("judgements.json")?).map_err(|e| format!("judgements.json: {e}"))?)
            } else {
                None
            };
            Ok(super::render(measurements, config, judgements.as_deref())?
                .into_iter()
                .map(|(path, content)| Artifact { path, content })
                .collect())
        }
    }

    register_reporter!(Board);
}
