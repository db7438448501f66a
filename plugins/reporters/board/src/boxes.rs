//! The boxes a column was measured on. Every measurement file names its
//! own box (its server's where the harness launched it, else the client's)
//! and batch job, and a column's files need not share one: a requeued
//! Slurm task may land on another node, a suite may run on another box. A
//! column names every box, the rows each gave, and is marked where they
//! are unlike hardware; the run log names each file's box and rows.

use std::collections::{BTreeMap, BTreeSet};

use sparktest_record::HostInfo;
use sparktest_record::reader::Logged;

use crate::model::{Board, Cell, Column, Row};
use crate::run::{Id, Runs};

/// A box's hardware, as a column's records name it: what makes two boxes
/// alike (CPU model and cores, memory, accelerators).
pub fn hardware(info: &HostInfo) -> String {
    let mut parts = vec![format!(
        "{} × {} cores, {:.0} GiB",
        info.cpu_model.as_deref().unwrap_or("unknown CPU"),
        info.cores,
        info.memory_bytes as f64 / f64::from(1u32 << 30)
    )];
    let mut gpus: BTreeMap<&str, usize> = BTreeMap::new();
    for a in &info.accelerators {
        *gpus.entry(a.name.as_str()).or_default() += 1;
    }
    for (name, n) in gpus {
        parts.push(format!("{n}× {name}"));
    }
    parts.join(", ")
}

/// A file's box in words: `name: hardware`, saying when it is the client's.
pub fn words(l: &Logged) -> String {
    let name = l.host.hostname.as_deref().unwrap_or("an unnamed box");
    let whose = if l.server_seen { "" } else { " (the client's box: the server's was not seen)" };
    format!("{name}: {}{whose}", hardware(&l.host))
}

/// One box a column was measured on.
#[derive(Debug, Clone)]
struct Seen {
    /// [`words`].
    words: String,
    /// [`hardware`]: what makes two boxes alike.
    hardware: String,
    /// The batch job of the column's latest file there, in words.
    job: Option<String>,
    /// The run ids of the column's files measured there.
    run_ids: BTreeSet<String>,
}

impl Seen {
    /// The box and its latest batch job.
    fn said(&self) -> String {
        match &self.job {
            Some(j) => format!("{}; {j}", self.words),
            None => self.words.clone(),
        }
    }
}

/// The boxes of the column's files whose records its cells name (its
/// runs', the bare arm's of a paired run, and every part and resume read
/// into them), in the order first measured, each once; where no cell
/// names a record, its latest file's. A box whose runs gave nothing the
/// board shows is history, in the run log, not the column's: so a board
/// handed only the runs its cells read names the same boxes.
fn of_column(runs: &Runs, rows: &[Row], key: &str) -> Vec<Seen> {
    let mut ids: BTreeSet<&str> = BTreeSet::new();
    let mut latest: Option<&crate::run::Run> = None;
    for r in runs.iter().filter(|r| !r.is_campaign_record()) {
        if r.column == key || r.bare_column.as_deref() == Some(key) {
            ids.insert(&r.manifest.run_id);
            ids.extend(r.resumed_by.iter().chain(&r.parts).map(String::as_str));
            latest = Some(r);
        }
    }
    let named: BTreeSet<&str> = rows
        .iter()
        .filter_map(|row| row.cells.get(key))
        .flat_map(records)
        .filter_map(|id| run_of(id, &|r| ids.contains(r)))
        .collect();
    let ids: BTreeSet<&str> = match (named.is_empty(), latest) {
        (false, _) => named,
        // Runs are in start order: the last is the latest.
        (true, Some(r)) => std::iter::once(r.manifest.run_id.as_str())
            .chain(r.resumed_by.iter().chain(&r.parts).map(String::as_str))
            .collect(),
        (true, None) => BTreeSet::new(),
    };
    let mut seen: Vec<Seen> = Vec::new();
    for l in runs.log().iter().filter(|l| ids.contains(l.run_id.as_str())) {
        let words = words(l);
        match seen.iter_mut().find(|s| s.words == words) {
            Some(s) => {
                // Files are in start order: the latest job is said.
                s.job = l.job.clone();
                s.run_ids.insert(l.run_id.clone());
            }
            None => seen.push(Seen {
                words,
                hardware: hardware(&l.host),
                job: l.job.clone(),
                run_ids: [l.run_id.clone()].into(),
            }),
        }
    }
    seen
}

/// The records behind a cell.
fn records(cell: &Cell) -> &[Id] {
    match cell {
        Cell::Measured { records, .. } | Cell::NotApplicable { records, .. } | Cell::Incapable { records, .. } => {
            records
        }
        Cell::Judged { .. } => &[],
    }
}

/// The run id of a record id (`run-id#case-id`), where it is one of `known`
/// (a case id may hold `#` too, so each `#` is tried).
fn run_of<'a>(record: &'a str, known: &impl Fn(&str) -> bool) -> Option<&'a str> {
    record.match_indices('#').map(|(at, _)| &record[..at]).find(|run| known(run))
}

/// Per run id of the log, the titles of the rows (in board order) whose
/// cells name one of its records.
pub fn rows_by_run(rows: &[Row], log: &[Logged]) -> BTreeMap<String, Vec<String>> {
    let known: BTreeSet<&str> = log.iter().map(|l| l.run_id.as_str()).collect();
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for row in rows {
        let mut fed: BTreeSet<&str> = BTreeSet::new();
        for cell in row.cells.values() {
            fed.extend(records(cell).iter().filter_map(|id| run_of(id, &|r| known.contains(r))));
        }
        for run in fed {
            out.entry(run.to_string()).or_default().push(row.title.clone());
        }
    }
    out
}

/// The rows a box gave a column: those whose cell in the column names a
/// record of one of the box's files, in board order.
fn rows_from(rows: &[Row], key: &str, seen: &Seen) -> Vec<String> {
    let known = |r: &str| seen.run_ids.contains(r);
    rows.iter()
        .filter(|row| row.cells.get(key).is_some_and(|c| records(c).iter().any(|id| run_of(id, &known).is_some())))
        .map(|row| row.title.clone())
        .collect()
}

/// A letter per kind of hardware: `A`, `B` …
fn letter(i: usize) -> String {
    char::from(b'A' + (i % 26) as u8).to_string()
}

/// Name every column's boxes ([`Column::measured_on`], [`Column::boxes`]),
/// and where the board's boxes are of more than one kind of hardware, each
/// column's kinds ([`Column::hardware`]) and whether its own boxes are
/// unlike ([`Column::unlike`]); the kinds, `A: …`, where there is more than
/// one, are the board's [`Board::hardware_kinds`]. Run once the rows are
/// built: a column's boxes are those its cells' records came from.
pub fn name(board: &mut Board, runs: &Runs) {
    let (columns, rows) = (&mut board.columns, &board.rows);
    let seen: BTreeMap<String, Vec<Seen>> =
        columns.iter().map(|c| (c.key.clone(), of_column(runs, rows, &c.key))).collect();
    let mut kinds: Vec<&str> = Vec::new();
    for s in seen.values().flatten() {
        if !kinds.contains(&s.hardware.as_str()) {
            kinds.push(&s.hardware);
        }
    }
    for col in columns.iter_mut() {
        let key = &col.key;
        let boxes = &seen[key];
        col.measured_on = match boxes.as_slice() {
            [] => "no measured run".into(),
            [one] => one.said(),
            many => {
                col.boxes = many
                    .iter()
                    .map(|s| match rows_from(rows, key, s).as_slice() {
                        [] => format!("{} (no row on the board)", s.said()),
                        fed => format!("{} (rows: {})", s.said(), fed.join(", ")),
                    })
                    .collect();
                col.boxes.join(" + ")
            }
        };
        let mut own: Vec<usize> = boxes.iter().filter_map(|s| kinds.iter().position(|k| *k == s.hardware)).collect();
        own.sort_unstable();
        own.dedup();
        col.unlike = own.len() > 1;
        col.hardware = (kinds.len() > 1).then(|| own.into_iter().map(letter).collect::<Vec<_>>().join(" + "));
    }
    board.hardware_kinds = match kinds.len() {
        0 | 1 => Vec::new(),
        _ => kinds.iter().enumerate().map(|(i, k)| format!("{}: {k}", letter(i))).collect(),
    };
}

/// The columns whose own boxes are unlike hardware, by label, in words for
/// the board's head; None when there is none.
pub fn unlike_columns(columns: &[Column]) -> Option<String> {
    let unlike: Vec<String> = columns
        .iter()
        .filter(|c| c.unlike)
        .map(|c| format!("{} (hardware {})", c.label, c.hardware.as_deref().unwrap_or("?")))
        .collect();
    (!unlike.is_empty()).then(|| {
        format!(
            "{} {} measured on unlike boxes: {} rows do not compare like with like with each other, and each box \
             names the rows it gave.",
            unlike.join(", "),
            if unlike.len() == 1 { "was" } else { "were" },
            if unlike.len() == 1 { "its" } else { "their" },
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_names_its_run_even_when_its_case_holds_a_hash() {
        let known = |r: &str| r == "r1" || r == "r#2";
        assert_eq!(run_of("r1#a::b#c", &known), Some("r1"));
        assert_eq!(run_of("r#2#a::b", &known), Some("r#2"));
        assert_eq!(run_of("other#a", &known), None);
        assert_eq!(run_of("no-hash", &known), None);
    }
}
