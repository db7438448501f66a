//! What the host hands a reporter besides the measurement files: one
//! file each, JSON, beside them in the reporter's read-only folder. The
//! host writes a [`Handover`] ([`Handover::files`]) and a reporter reads
//! it back ([`Handover::read`]; in a component, `sparktest_sdk::reporter::handover`).
//! These types and the names in [`file`](mod@file) are the one definition: nothing
//! else names the files.
//!
//! - [`Selected`]: what the board covers, where the host selected runs;
//! - [`Damage`]: the files it could not read whole;
//! - [`ReadOnce`]: the files of a run another file already gave;
//! - [`FoldedNight`]: the older nights it handed as counts;
//! - [`Logged`]: the runs of the latest night it handed as their run-log
//!   line only (their cells read other runs);
//! - the transcripts beside the board, and the user's judgements and
//!   references as JSON (their shape is the reporter's own).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

pub use crate::reader::Logged;

/// The hand-over's file names, each written here only.
pub mod file {
    /// [`super::Handover::selection`].
    pub const SELECTION: &str = "selection.json";
    /// [`super::Handover::damage`].
    pub const DAMAGE: &str = "damage.json";
    /// [`super::Handover::folded`].
    pub const FOLDED_NIGHTS: &str = "folded-nights.json";
    /// [`super::Handover::read_once`].
    pub const READ_ONCE: &str = "read-once.json";
    /// [`super::Handover::logged`].
    pub const RUN_LOG: &str = "run-log.json";
    /// [`super::Handover::transcripts`].
    pub const TRANSCRIPTS: &str = "transcripts.json";
    /// [`super::Handover::judgements`].
    pub const JUDGEMENTS: &str = "judgements.json";
    /// [`super::Handover::references`].
    pub const REFERENCES: &str = "references.json";
}

/// Everything the host hands a reporter besides the measurement files.
/// A part left empty is not written, and reads back empty.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Handover {
    /// What the board covers, where the host selected runs (`board
    /// --campaign`, `--since`, `--until`, `--nights`).
    pub selection: Option<Selected>,
    /// Measurement files it could not read whole, or left out.
    pub damage: Vec<Damage>,
    /// Whole files of a run another file already gave, read once.
    pub read_once: Vec<ReadOnce>,
    /// Older nights of the run log handed as counts, the latest first.
    pub folded: Vec<FoldedNight>,
    /// Runs of the latest night handed as their run-log line only, not
    /// whole: no cell reads them. In start order.
    pub logged: Vec<Logged>,
    /// Transcript addresses available beside the board
    /// (`transcripts/<sha>.json`).
    pub transcripts: BTreeSet<String>,
    /// The user's judged rows (`board --judgements`, TOML as JSON text).
    pub judgements: Option<String>,
    /// Published references (`board --references`, TOML as JSON text).
    pub references: Option<String>,
}

impl Handover {
    /// The files to hand over, by name: each part that holds anything.
    pub fn files(&self) -> BTreeMap<&'static str, Vec<u8>> {
        fn json(v: &impl Serialize) -> Vec<u8> {
            // These types hold strings, numbers and lists: always JSON.
            serde_json::to_vec(v).unwrap_or_default()
        }
        let mut out = BTreeMap::new();
        if let Some(s) = &self.selection {
            out.insert(file::SELECTION, json(s));
        }
        let lists: [(&'static str, bool, Vec<u8>); 4] = [
            (file::DAMAGE, self.damage.is_empty(), json(&self.damage)),
            (file::READ_ONCE, self.read_once.is_empty(), json(&self.read_once)),
            (file::FOLDED_NIGHTS, self.folded.is_empty(), json(&self.folded)),
            (file::RUN_LOG, self.logged.is_empty(), json(&self.logged)),
        ];
        for (name, empty, bytes) in lists {
            if !empty {
                out.insert(name, bytes);
            }
        }
        out.insert(file::TRANSCRIPTS, json(&self.transcripts));
        for (name, text) in [(file::JUDGEMENTS, &self.judgements), (file::REFERENCES, &self.references)] {
            if let Some(t) = text {
                out.insert(name, t.clone().into_bytes());
            }
        }
        out
    }

    /// Read it back from the files handed over: `read(name)` gives a
    /// file's bytes, or None when it was not handed over. A file that does
    /// not parse is an error naming it.
    pub fn read(mut read: impl FnMut(&str) -> Result<Option<Vec<u8>>, String>) -> Result<Handover, String> {
        fn parsed<T: serde::de::DeserializeOwned>(name: &str, bytes: Option<Vec<u8>>) -> Result<Option<T>, String> {
            bytes.map(|b| serde_json::from_slice(&b).map_err(|e| format!("{name}: {e}"))).transpose()
        }
        let text = |name: &str, bytes: Option<Vec<u8>>| {
            bytes.map(|b| String::from_utf8(b).map_err(|e| format!("{name}: {e}"))).transpose()
        };
        Ok(Handover {
            selection: parsed(file::SELECTION, read(file::SELECTION)?)?,
            damage: parsed(file::DAMAGE, read(file::DAMAGE)?)?.unwrap_or_default(),
            read_once: parsed(file::READ_ONCE, read(file::READ_ONCE)?)?.unwrap_or_default(),
            folded: parsed(file::FOLDED_NIGHTS, read(file::FOLDED_NIGHTS)?)?.unwrap_or_default(),
            logged: parsed(file::RUN_LOG, read(file::RUN_LOG)?)?.unwrap_or_default(),
            transcripts: parsed(file::TRANSCRIPTS, read(file::TRANSCRIPTS)?)?.unwrap_or_default(),
            judgements: text(file::JUDGEMENTS, read(file::JUDGEMENTS)?)?,
            references: text(file::REFERENCES, read(file::REFERENCES)?)?,
        })
    }
}

/// The runs a board covers, as the host selected them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Selected {
    /// The selection in words (`campaign nightly-1201, since 2026-12-01`).
    pub words: String,
    /// Files selected.
    pub files: usize,
    /// Readable files of the folder left out.
    pub left_out: usize,
}

impl Selected {
    /// The sentence the board opens with.
    pub fn sentence(&self) -> String {
        format!(
            "This board covers {}: {} measurement files; {} more in the folder are left out (cargo sparktest board without --campaign, --since or --until reads them all).",
            self.words, self.files, self.left_out
        )
    }
}

/// A measurement file the board could not read whole: where it broke.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Damage {
    /// The file's name.
    pub file: String,
    /// The first line not read (1-based).
    pub line: usize,
    /// Why.
    pub message: String,
    /// Whether the file's whole lines before it were kept.
    pub kept: bool,
}

/// A whole measurement file of a run another file already gave: the run
/// is read once, from the first file by name; this one is named apart from
/// the damaged files (it is not damaged).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadOnce {
    /// The file's name.
    pub file: String,
    /// The file the run was read from.
    pub first: String,
    /// The run both files hold.
    pub run_id: String,
    /// Whether it holds the same bytes as `first` (else it is another file
    /// of the same run id, and its records are not used).
    pub identical: bool,
}

impl ReadOnce {
    /// What is said of the file, on stderr and on the board.
    pub fn message(&self) -> String {
        let (first, run) = (&self.first, &self.run_id);
        if self.identical {
            format!("an identical copy of {first} (run {run}, the same bytes): read once")
        } else {
            format!(
                "a second file of run {run} (the first is {first}), not the same bytes: the run is read once, from {first}"
            )
        }
    }
}

/// A night of the run log handed to the reporter as counts: a board of
/// more history than the reporter is handed whole lists the latest
/// night's runs, and each older night as one line.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FoldedNight {
    /// `campaign nightly-1206` or `2026-12-06`.
    pub label: String,
    /// Its first run's start: what places it in time.
    pub first: String,
    /// Its runs, each run id once.
    pub runs: usize,
    /// Runs with a failed case.
    pub failed_case: usize,
    /// Runs with a lost case.
    pub lost_case: usize,
    /// Runs with no summary line, or interrupted.
    pub unfinished: usize,
    /// Each run that failed as a run, or resumed or was resumed: `run id
    /// (file): what`, so that every failure stays one file away.
    #[serde(default)]
    pub notable: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handover_reads_back_as_written_and_an_empty_part_is_not_written() {
        let h = Handover {
            selection: Some(Selected { words: "the latest night".into(), files: 3, left_out: 9 }),
            damage: vec![Damage { file: "a.jsonl".into(), line: 4, message: "cut".into(), kept: true }],
            folded: vec![FoldedNight { label: "2026-12-06".into(), runs: 2, ..FoldedNight::default() }],
            transcripts: ["ab".to_string()].into(),
            judgements: Some("{\"row\":[]}".into()),
            ..Handover::default()
        };
        let files = h.files();
        let names: Vec<&str> = files.keys().copied().collect();
        assert_eq!(names, [file::DAMAGE, file::FOLDED_NIGHTS, file::JUDGEMENTS, file::SELECTION, file::TRANSCRIPTS]);
        let back = Handover::read(|n| Ok(files.get(n).cloned())).unwrap();
        assert_eq!(back, h);
        let bad = Handover::read(|n| Ok((n == file::DAMAGE).then(|| b"[{".to_vec()))).unwrap_err();
        assert!(bad.starts_with("damage.json: "), "{bad}");
    }
}
