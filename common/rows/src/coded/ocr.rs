//! The handwriting OCR row (`ocr`).

use sparktest_contract::{Metric, ocr};

use super::*;

pub const ROW: RowDef = absolute(
    ocr::ROW,
    "10 × (half the word accuracy + half the share of crossed-out words noticed, each live word struck \
         counting against it), to the nearest half point; 0 for a build that cannot read images",
    figure_of,
);

fn figure_of(runs: &Runs, col: &str) -> Result<Figure, Missing> {
    let (run, cases) = vision_cases(runs, col, ocr::INSTRUMENT)?;
    let read: Vec<&CaseRecord> = cases.iter().copied().filter(|c| metric(c, ocr::WORDS).is_some()).collect();
    if read.is_empty() {
        return Err(missing_from(run, &cases));
    }
    let sum = |m: Metric| read.iter().filter_map(|c| metric(c, m)).sum::<f64>();
    let words = sum(ocr::WORDS);
    let accuracy = if words > 0.0 { (100.0 * (1.0 - sum(ocr::WORD_EDITS) / words)).max(0.0) } else { 0.0 };
    let recall = if words > 0.0 { 100.0 * sum(ocr::WORDS_RECALLED) / words } else { 0.0 };
    let (total, noticed, live, unsure, wrong) = (
        sum(ocr::STRUCK_TOTAL),
        sum(ocr::STRUCK_NOTICED),
        sum(ocr::STRUCK_AS_LIVE),
        sum(ocr::STRUCK_INDETERMINATE),
        sum(ocr::STRUCK_WRONG),
    );
    let mut raw = format!("{noticed:.0}/{total:.0} struck ({live:.0} as live");
    if unsure > 0.0 {
        raw.push_str(&format!(", {unsure:.0} indeterminate"));
    }
    if wrong > 0.0 {
        raw.push_str(&format!(", {wrong:.0} live words struck"));
    }
    raw.push_str(&format!(") - {accuracy:.1} / {recall:.1} word acc"));
    if read.len() < cases.len() {
        raw.push_str(&format!(" - {}/{} pages read", read.len(), cases.len()));
    }
    // Pages not read count as nothing read. Noticing is half the score, a
    // live word struck counting against it; pages with nothing crossed out
    // are scored on accuracy alone.
    let scale = read.len() as f64 / cases.len() as f64;
    let value = if total > 0.0 {
        10.0 * scale * (0.5 * accuracy / 100.0 + 0.5 * noticed / (total + wrong))
    } else {
        10.0 * scale * accuracy / 100.0
    };
    Ok(figure(run, value, raw, &cases))
}
