//! `board.md`: the same board as Markdown tables (no ordering: the
//! scorecard keeps the columns in their key order).

use std::fmt::Write;

use crate::Extras;
use crate::model::{Admission, Board, Cell};
use crate::sections::{self, Table};

/// Text safe inside a Markdown table cell: inert as HTML, and no link,
/// image, emphasis or code a reply could smuggle in.
pub fn cell(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    // Every character escaped is ASCII: the text between them is copied as
    // whole slices.
    let mut from = 0;
    for (at, b) in s.bytes().enumerate() {
        // What goes in its place, and whether the character itself stays
        // (after a backslash).
        let (with, keep) = match b {
            b'&' => ("&amp;", false),
            b'<' => ("&lt;", false),
            b'>' => ("&gt;", false),
            b'\n' | b'\r' => (" ", false),
            b'|' | b'[' | b']' | b'(' | b')' | b'!' | b'*' | b'_' | b'`' | b'\\' | b'#' => ("\\", true),
            _ => continue,
        };
        out.push_str(&s[from..at]);
        out.push_str(with);
        from = if keep { at } else { at + 1 };
    }
    out.push_str(&s[from..]);
    // A line break is a space (above); every other control character an
    // escape ([`sparktest_record::foreign`]): `board.md` is read in
    // terminals too. (Markdown keeps a backslash before a letter as it is.)
    match sparktest_record::foreign::one_line(&out) {
        std::borrow::Cow::Borrowed(_) => out,
        std::borrow::Cow::Owned(escaped) => escaped,
    }
}

/// The run log by night, the latest first. A short log is written whole;
/// past [`WHOLE_LOG`] runs, only the latest night's table is, and each
/// older night is one line (its runs are in `board.html`).
fn run_log(out: &mut String, nights: &[sections::Night]) {
    let runs: usize = nights.iter().map(|n| n.table.rows.len()).sum();
    for (i, night) in nights.iter().enumerate() {
        // The label may name a campaign: its id is a file's claim.
        let _ = writeln!(out, "### {}: {}\n", cell(&night.label), cell(&night.words));
        if night.table.rows.is_empty() && i > 0 {
            // A night handed as counts: its failed and resumed runs.
            for n in &night.notable {
                let _ = writeln!(out, "- {}", cell(n));
            }
            if !night.notable.is_empty() {
                out.push('\n');
            }
        } else if i == 0 || runs <= WHOLE_LOG {
            table(out, &night.table);
        } else {
            out.push_str("Folded: its runs are listed in `board.html`.\n\n");
        }
    }
}

/// The most runs `board.md` lists whole.
const WHOLE_LOG: usize = 200;

fn table(out: &mut String, t: &Table) {
    let _ = writeln!(out, "| {} |", t.headings.iter().map(|h| cell(h)).collect::<Vec<_>>().join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(t.headings.len()));
    for row in &t.rows {
        let _ = writeln!(out, "| {} |", row.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | "));
    }
    if t.rows.is_empty() {
        let _ = writeln!(out, "| nothing measured yet |{}", " |".repeat(t.headings.len() - 1));
    }
    out.push('\n');
}

/// Render the board as Markdown.
pub fn render(board: &Board, runs: &crate::run::Runs, extras: &Extras) -> String {
    let mut out = format!("# {}\n\n", cell(&board.title));
    if let Some(sel) = &extras.selection {
        let _ = writeln!(out, "**{}**\n", cell(&sel.sentence()));
    }
    out.push_str("Every cell: the 0–10 standing within its row, the raw figure and the record behind it; each column's head says its configuration once, and a cell only what of its own differs. Standings compare within a row only; no column totals. N/A cells give their reason.\n\n");
    if !board.hardware_kinds.is_empty() {
        let _ = writeln!(
            out,
            "**These columns were measured on {} kinds of hardware**: standings compare like with like only within a kind, and each column names its kind and its box. {}{}\n",
            board.hardware_kinds.len(),
            cell(&board.hardware_kinds.join("; ")),
            crate::boxes::unlike_columns(&board.columns).map_or(String::new(), |u| format!(" **{}**", cell(&u)))
        );
    }
    scorecard(&mut out, board);
    references(&mut out, board);
    out.push_str("\n## Efficiency readout\n\n");
    table(&mut out, &sections::efficiency(runs));
    let left_out = sections::efficiency_left_out(board, runs);
    if !left_out.is_empty() {
        let list: Vec<String> = left_out.iter().map(|(k, why)| format!("{} ({})", cell(k), cell(why))).collect();
        let _ = writeln!(out, "Not in this readout: {}.\n", list.join(", "));
    }
    frontier(&mut out, board);
    out.push_str("## Tokens per second, by tested combination\n\nSingle-stream decode and aggregate output never share a column.\n\n");
    table(&mut out, &sections::tokens_per_second(runs));
    out.push_str("## Every run, including the failures\n\n");
    run_log(&mut out, &sections::run_log(board, runs, &extras.folded));
    if !extras.damage.is_empty() {
        out.push_str("### Damaged measurement files\n\n");
        table(&mut out, &sections::damage(&extras.damage));
    }
    if !extras.read_once.is_empty() {
        out.push_str("### Files read once\n\nWhole files of a run that an earlier file (by name) already gave: the run is read once, from that file.\n\n");
        table(&mut out, &sections::read_once(&extras.read_once));
    }
    if let Some((campaigns, missing)) = sections::campaigns(runs, &extras.folded) {
        out.push_str("## Campaigns\n\n");
        table(&mut out, &campaigns);
        for m in &missing {
            let _ = writeln!(out, "{}\n", cell(m));
        }
    }
    out.push_str("## Pinned serving configurations\n\n");
    table(&mut out, &sections::pinned_configs(runs));
    out.push_str("## Hardware snapshots\n\n");
    table(&mut out, &sections::hardware(runs));
    out.push_str("## Methodology\n\n");
    for row in &board.rows {
        let _ = writeln!(out, "- **{}**: {}", cell(&row.title), cell(&row.rule));
    }
    out.push('\n');
    for (title, description, _) in sections::methodology(runs) {
        let _ = writeln!(out, "- **{}**: {}", cell(&title), cell(&description));
    }
    out
}

/// The scorecard: a column per configuration, a row per measured thing.
fn scorecard(out: &mut String, board: &Board) {
    out.push_str("## Scorecard\n\n");
    let _ = write!(out, "| What is measured |");
    for c in &board.columns {
        let gate = match &c.admission {
            Admission::Failed { failing, .. } => {
                format!(" NOT ADMITTED: failed {failing} battery checks")
            }
            _ => String::new(),
        };
        let differs = c.differs.as_deref().map_or(String::new(), |d| format!(" differs: {}", cell(d)));
        let kind = match (&c.hardware, c.unlike) {
            (Some(k), true) => format!(" hardware {k} (rows from unlike boxes),"),
            (Some(k), false) => format!(" hardware {k},"),
            (None, _) => String::new(),
        };
        let _ = write!(
            out,
            " {} ({} · {}; {}; {}){differs}{gate};{kind} measured on {} |",
            cell(&c.label),
            cell(&c.model),
            cell(&c.engine),
            cell(&crate::model::head_config(c)),
            cell(&c.marks.join(" · ")),
            cell(&c.measured_on)
        );
    }
    let _ = writeln!(out, "\n|---|{}", "---|".repeat(board.columns.len()));
    for row in &board.rows {
        let judged = if row.judged { " (judged, not measured)" } else { "" };
        let _ = write!(out, "| {}{judged} |", cell(&row.title));
        for c in &board.columns {
            let text = match &row.cells[&c.key] {
                Cell::Measured { standing, raw, config, records, spread, partial, failed_later, .. } => {
                    let spread = spread
                        .as_ref()
                        .map(|s| format!(" ({}{})", cell(&s.words()), crate::html::unseparated(row, &c.key)))
                        .unwrap_or_default();
                    let later = if failed_later.is_empty() {
                        String::new()
                    } else {
                        format!(
                            " (a later run failed and does not replace this one: {})",
                            cell(&failed_later.join("; "))
                        )
                    };
                    format!(
                        "**{standing}** {}{spread}{}{later}{} <br>record: {}",
                        cell(raw),
                        partial.as_deref().map_or(String::new(), |p| format!(" ({})", cell(p))),
                        config_md(&c.config, &Some(config.clone())),
                        cell(&records.join(", "))
                    )
                }
                Cell::Judged { standing, raw, reason } => {
                    format!("**{standing}** {} <br>judged: {}", cell(raw), cell(reason))
                }
                Cell::NotApplicable { reason, config, .. } => {
                    format!("N/A: {}{}", cell(reason), config_md(&c.config, config))
                }
                Cell::Incapable { reason, config, .. } => {
                    format!("**0** {}{}", cell(reason), config_md(&c.config, config))
                }
            };
            let _ = write!(out, " {text} |");
        }
        out.push('\n');
    }
}

/// Published references, drawn apart from the measured cells.
fn references(out: &mut String, board: &Board) {
    if !board.references.is_empty() {
        out.push_str("\n## Published references (read elsewhere, not measured here)\n\nFigures as their sources published them: never scored, never mixed into a measured cell.\n\n| What is measured |");
        for r in &board.references {
            let note = r.note.as_deref().map_or(String::new(), |n| format!("{}; ", cell(n)));
            let _ = write!(out, " {} ({note}{} · {}) |", cell(&r.label), cell(&r.source), cell(&r.date));
        }
        let _ = write!(out, "\n|---|{}", "---|".repeat(board.references.len()));
        for row in &board.rows {
            if !board.references.iter().any(|r| r.figure.iter().any(|f| f.row == row.title)) {
                continue;
            }
            let _ = write!(out, "\n| {} |", cell(&row.title));
            for r in &board.references {
                let text = match r.figure.iter().find(|f| f.row == row.title) {
                    Some(f) if f.source.is_some() || f.date.is_some() => format!(
                        "{} ({} · {})",
                        cell(&f.raw),
                        cell(f.source.as_deref().unwrap_or(&r.source)),
                        cell(f.date.as_deref().unwrap_or(&r.date))
                    ),
                    Some(f) => cell(&f.raw),
                    None => "not published".into(),
                };
                let _ = write!(out, " {text} |");
            }
        }
        out.push('\n');
    }
}

/// Every concurrency level and rate, and whether it is on its
/// configuration's frontier.
fn frontier(out: &mut String, board: &Board) {
    if !board.frontier.is_empty() {
        out.push_str("## Aggregate against per-request speed\n\nEvery concurrency level and sustained-load rate (of every mix) measured: on the frontier where nothing of the same configuration beats it on both.\n\n");
        out.push_str(
            "| Model | Measured at | Aggregate tok/s | Per-request tok/s | Frontier |\n|---|---|---|---|---|\n",
        );
        for s in &board.frontier {
            for p in &s.points {
                let _ = writeln!(
                    out,
                    "| {} | {} | {:.1} | {:.1} | {} |",
                    cell(&s.column),
                    cell(&p.source),
                    p.aggregate_tok_s,
                    p.per_request_tok_s,
                    if p.pareto { "yes" } else { "beaten on both" }
                );
            }
        }
        out.push('\n');
    }
}

/// What a cell says of its configuration, where a run is behind it and
/// its configuration differs from its column's (the head says it once).
fn config_md(column: &str, config: &Option<String>) -> String {
    config
        .as_deref()
        .and_then(|c| crate::model::cell_config(column, c))
        .map_or(String::new(), |c| format!(" <br>{}", cell(&c)))
}
