//! The reduced hand-over gives the board the whole one gives, cell by
//! cell: histories generated from a seed (suites sharing an instrument,
//! filtered runs, runs the server died in, resumes, partitions, repeat
//! groups across nights, declarations that change, built-in and declared
//! rows), each built twice: handed every run whole (the reporter's 64 MiB),
//! and handed only what its cells read with the latest night as run-log
//! lines (16 MiB: past a quarter of it). A failure names the seed; set
//! `SPARKTEST_REDUCTION_SEED` to build that history alone, and
//! `SPARKTEST_REDUCTION_CASES` for more histories than the default.

use std::path::Path;

use serde_json::Value;
use sparktest_record::{
    Better, CaseRecord, FigureKind, Manifest, Outcome, Partition, Repeat, RowDeclaration, Standing,
};

use crate::board::{case, manifest, standings, write};
use crate::support::*;

/// Histories built by default: each is two boards.
const CASES: u64 = 24;

/// xorshift64*: a history from its seed, the same on every machine.
struct Seeded(u64);

impl Seeded {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

fn declaration(title: &str, figure: FigureKind, metric: Option<&str>, better: Better, note: &str) -> RowDeclaration {
    RowDeclaration {
        title: title.into(),
        instrument: "capitals".into(),
        methodology: format!("{title}: {note}"),
        figure,
        metric: metric.map(Into::into),
        unit: "ms".into(),
        better,
        standing: Standing::Relative,
        tie_margin: 0.0,
        tags: vec![],
        groups: vec!["country".into()],
        declared_by: "capitals-example@0.1.0".into(),
    }
}

/// The declaring suite's rows; a later version adds one and words another.
fn declared(version: u64) -> Vec<RowDeclaration> {
    let mut rows = vec![
        declaration("Capital cities", FigureKind::PassShare, None, Better::Higher, "the share passed"),
        declaration("Capital latency", FigureKind::Percentile(50), Some("latency-ms"), Better::Lower, "median"),
    ];
    if version > 0 {
        rows[1].methodology = "Capital latency: the median, reworded".into();
        rows.push(declaration("Capital speed", FigureKind::Mean, Some("tok-s"), Better::Higher, "mean"));
    }
    rows
}

/// One generated history, written into `dir`: what it holds, in words.
fn history(dir: &Path, seed: u64) -> Vec<String> {
    let mut r = Seeded(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut said = Vec::new();
    let targets = ["alpha", "beta", "gamma"];
    let mut n = 0;
    let mut file = |said: &mut Vec<String>, what: String| {
        n += 1;
        said.push(what);
        format!("{n:03}.jsonl")
    };
    // Cases of the shared instrument: `passed` pass, `lost` lost, the rest
    // fail, of the countries `from..to`.
    let capitals = |r: &mut Seeded, from: usize, to: usize| -> Vec<CaseRecord> {
        let passed = r.below((to - from + 1) as u64) as usize;
        let lost = if r.chance(20) { r.below(3) as usize } else { 0 };
        (from..to)
            .map(|i| {
                let at = i - from;
                let outcome = if at < passed {
                    Outcome::Pass
                } else if at < passed + lost {
                    Outcome::Lost
                } else {
                    Outcome::Fail
                };
                let ms = 50.0 + r.below(100) as f64;
                let metrics = if outcome == Outcome::Lost {
                    vec![]
                } else {
                    vec![("latency-ms", ms), ("tok-s", 10.0 + r.below(40) as f64)]
                };
                case("capitals", &format!("country::c{i:02}"), outcome, &metrics, None)
            })
            .collect()
    };
    let built_in = |r: &mut Seeded| {
        vec![
            case("footprint", "idle::memory", Outcome::Pass, &[("resident-gib", 1.0 + r.below(8) as f64)], None),
            case("speed", "decode::prose", Outcome::Pass, &[("decode-tok-s", 20.0 + r.below(60) as f64)], None),
        ]
    };
    let mut version = 0;
    for night in 1..=3 {
        for slot in 0..(2 + r.below(5)) {
            let target = targets[r.below(targets.len() as u64) as usize];
            let started = format!("2026-03-{night:02}T{:02}:{:02}:00Z", 1 + slot, r.below(60));
            let declaring = |m: &mut Manifest, version: u64| {
                m.suite.name = "capitals-example".into();
                m.rows = declared(version);
            };
            let mut m = manifest(target, "m", "llama.cpp", &started);
            if r.chance(15) {
                version = 1;
            }
            match r.below(9) {
                0 | 1 => {
                    declaring(&mut m, version);
                    let mut cases = capitals(&mut r, 0, 10);
                    cases.extend(built_in(&mut r));
                    write(dir, &file(&mut said, format!("{started} {target}: full, rows v{version}")), m, cases, true);
                }
                2 => {
                    // Another suite with the same instrument's cases.
                    let cases = capitals(&mut r, 0, 10);
                    write(dir, &file(&mut said, format!("{started} {target}: other suite")), m, cases, true);
                }
                3 => {
                    declaring(&mut m, version);
                    let k = r.below(10) as usize;
                    let cases = capitals(&mut r, k, k + 1);
                    write(dir, &file(&mut said, format!("{started} {target}: filtered to c{k:02}")), m, cases, true);
                }
                4 => {
                    // The server died: every case lost, no summary.
                    declaring(&mut m, version);
                    let mut cases = capitals(&mut r, 0, 10);
                    for c in &mut cases {
                        c.outcome = Outcome::Lost;
                        c.metrics.clear();
                        c.reason = Some("connection refused".into());
                    }
                    write(dir, &file(&mut said, format!("{started} {target}: died")), m, cases, false);
                }
                5 => {
                    // Cut, then resumed that night or the next.
                    declaring(&mut m, version);
                    let cut_id = m.run_id.clone();
                    let head = capitals(&mut r, 0, 5);
                    write(dir, &file(&mut said, format!("{started} {target}: cut")), m, head, false);
                    let day = night + r.below(2);
                    let later = format!("2026-03-{day:02}T{:02}:30:00Z", 10 + slot);
                    let mut resume = manifest(target, "m", "llama.cpp", &later);
                    declaring(&mut resume, version);
                    resume.resumes = Some(cut_id);
                    let mut tail = capitals(&mut r, 5, 10);
                    tail.extend(built_in(&mut r));
                    write(dir, &file(&mut said, format!("{later} {target}: resumes it")), resume, tail, true);
                }
                6 => {
                    // Two parts of one partitioned run, one possibly missing.
                    let group = format!("g-{seed}-{night}-{slot}");
                    let parts = if r.chance(25) { 1 } else { 2 };
                    for index in 1..=parts {
                        let at = format!("2026-03-{night:02}T{:02}:{:02}:00Z", 1 + slot, 40 + index);
                        let mut part = manifest(target, "m", "llama.cpp", &at);
                        declaring(&mut part, version);
                        part.partition =
                            Some(Partition { scheme: "count".into(), index, total: 2, group: group.clone() });
                        let from = (index as usize - 1) * 5;
                        let cases = capitals(&mut r, from, from + 5);
                        write(
                            dir,
                            &file(&mut said, format!("{at} {target}: part {index}/2 of {group}")),
                            part,
                            cases,
                            true,
                        );
                    }
                }
                _ => {
                    // A repeat group of three, its repeats across nights.
                    let group = format!("repeat-{started}-{target}");
                    for index in 1..=3u32 {
                        let day = (night + u64::from(index) - 1).min(3);
                        let at = format!("2026-03-{day:02}T{:02}:{:02}:00Z", 1 + slot, 10 + index);
                        let mut rep = manifest(target, "m", "llama.cpp", &at);
                        declaring(&mut rep, version);
                        rep.repeat = Some(Repeat { index, total: 3, group: group.clone() });
                        let mut cases = capitals(&mut r, 0, 10);
                        cases.extend(built_in(&mut r));
                        write(dir, &file(&mut said, format!("{at} {target}: repeat {index}/3")), rep, cases, true);
                    }
                }
            }
        }
    }
    // Another configuration's runs, large enough that the reporter is not
    // handed the folder whole at 16 MiB.
    let padding = "x".repeat(400_000);
    for i in 0..12 {
        let c = case("footprint", "idle::memory", Outcome::Fail, &[("resident-gib", 5.0)], Some(&padding));
        let m = manifest("delta", "m", "llama.cpp", &format!("2026-03-01T00:{i:02}:00Z"));
        write(dir, &file(&mut said, "padding".into()), m, vec![c], true);
    }
    said
}

/// Every cell of a board: (row, column) → cell.
fn cells(s: &Value) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for row in s["board"]["rows"].as_array().unwrap() {
        for (column, cell) in row["cells"].as_object().unwrap() {
            out.push((row["title"].as_str().unwrap().to_string(), column.clone(), cell.clone()));
        }
    }
    out
}

#[test]
fn every_generated_history_gives_the_same_cells_handed_whole_or_reduced() {
    let seeds: Vec<u64> = match std::env::var("SPARKTEST_REDUCTION_SEED") {
        Ok(s) => vec![s.parse().expect("SPARKTEST_REDUCTION_SEED: a number")],
        Err(_) => {
            let n = std::env::var("SPARKTEST_REDUCTION_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(CASES);
            (1..=n).collect()
        }
    };
    let p = Project::new("");
    let config = std::fs::read_to_string(p.path().join("sparktest.toml")).unwrap();
    let limit = |mib: u32| {
        let with = config.replace("memory-per-instance-mib = 64", &format!("memory-per-instance-mib = {mib}"));
        std::fs::write(p.path().join("sparktest.toml"), with).unwrap();
    };
    let mut measured_somewhere = 0;
    for seed in seeds {
        let dir = p.path().join(format!("m{seed}"));
        std::fs::create_dir_all(&dir).unwrap();
        let said = history(&dir, seed);
        let measurements = dir.display().to_string();
        let board = |out: &str| {
            let o = p.run(&["board", "--measurements", &measurements, "--out", out]);
            assert!(o.status.success(), "seed {seed}: {}\nthe history:\n{}", text(&o), said.join("\n"));
            (text(&o), standings(&p.path().join(out)))
        };
        limit(64);
        let (told, whole) = board(&format!("whole-{seed}"));
        assert!(!told.contains("more than the reporter is handed whole"), "seed {seed}: {told}");
        limit(16);
        let (told, reduced) = board(&format!("reduced-{seed}"));
        assert!(told.contains("more than the reporter is handed whole"), "seed {seed}: the reduced path: {told}");
        let (w, r) = (cells(&whole), cells(&reduced));
        let rows = |c: &[(String, String, Value)]| c.iter().map(|(r, k, _)| (r.clone(), k.clone())).collect::<Vec<_>>();
        assert_eq!(rows(&w), rows(&r), "seed {seed}: the same rows and columns\nthe history:\n{}", said.join("\n"));
        for ((row, column, a), (_, _, b)) in w.iter().zip(&r) {
            assert_eq!(a, b, "seed {seed}: {row} × {column}\nthe history:\n{}", said.join("\n"));
        }
        measured_somewhere += w.iter().filter(|(_, _, c)| c["kind"] == "measured").count();
    }
    assert!(measured_somewhere > 0, "the histories measured something");
}

/// A night of more runs than the reporter can hold whole: handed the runs
/// its cells read and the rest as run-log lines, it builds, and its run
/// log lists every run. (It used to exit 5: the reporter was handed the
/// whole latest night.)
#[test]
fn a_night_of_more_runs_than_the_reporter_holds_builds_and_logs_every_run() {
    let p = Project::new("");
    let config = std::fs::read_to_string(p.path().join("sparktest.toml")).unwrap();
    let config = config.replace("memory-per-instance-mib = 64", "memory-per-instance-mib = 16");
    std::fs::write(p.path().join("sparktest.toml"), config).unwrap();
    let dir = p.path().join("m");
    std::fs::create_dir_all(&dir).unwrap();
    // 300 runs of three configurations in one night, 60 kB each: 18 MB,
    // more than the reporter's 16 MiB.
    let padding = "x".repeat(60_000);
    for i in 0..300 {
        let target = ["alpha", "beta", "gamma"][i % 3];
        let at = format!("2026-03-01T{:02}:{:02}:{:02}Z", i / 3600, (i / 60) % 60, i % 60);
        let m = manifest(target, "m", "llama.cpp", &at);
        let gib = 1.0 + (i % 7) as f64;
        let c = case("footprint", "idle::memory", Outcome::Pass, &[("resident-gib", gib)], Some(&padding));
        write(&dir, &format!("{i:03}.jsonl"), m, vec![c], true);
    }
    let o = p.run(&["board", "--measurements", &dir.display().to_string(), "--out", "night"]);
    let said = text(&o);
    assert!(o.status.success(), "{said}");
    assert!(
        said.contains(
            "it is handed the 3 files its cells read, 297 more runs of the latest night as their run-log lines"
        ),
        "{said}"
    );
    let s = standings(&p.path().join("night"));
    // Each column's newest run: 297 is alpha's (297 % 7 = 3: 4 GiB).
    let cell = crate::board::cell(&s, "Box footprint", "alpha · m");
    assert!(cell["records"][0].as_str().unwrap().starts_with("2026-03-01T00:04:57Z-alpha#"), "{cell}");
    let md = std::fs::read_to_string(p.path().join("night/board.md")).unwrap();
    assert!(md.contains("### 2026-03-01: 300 runs, 0 with a failed case, 0 with a lost case, 0 unfinished"), "{md}");
    for run in ["2026-03-01T00:00:00Z-alpha", "2026-03-01T00:02:30Z-alpha", "2026-03-01T00:04:59Z-gamma"] {
        assert!(md.contains(run), "the run log lists {run}");
    }
}

/// One file of tiny values, small in bytes and large parsed: named and
/// left out, the board built from the others. (Handed whole, it took the
/// reporter past its memory and no board was written.)
#[test]
fn a_file_the_reporter_cannot_hold_parsed_is_named_and_left_out() {
    let p = Project::new("");
    let config = std::fs::read_to_string(p.path().join("sparktest.toml")).unwrap();
    let config = config.replace("memory-per-instance-mib = 64", "memory-per-instance-mib = 16");
    std::fs::write(p.path().join("sparktest.toml"), config).unwrap();
    let dir = p.path().join("m");
    std::fs::create_dir_all(&dir).unwrap();
    let fine = case("footprint", "idle::memory", Outcome::Pass, &[("resident-gib", 3.0)], None);
    write(&dir, "1-fine.jsonl", manifest("alpha", "m", "llama.cpp", "2026-03-01T00:00:00Z"), vec![fine], true);
    // 300,000 notes of one letter each: 3 MB of text, some 25 MB parsed.
    let mut heavy = case("footprint", "idle::memory", Outcome::Pass, &[("resident-gib", 9.0)], None);
    heavy.notes = (0..300_000).map(|_| ("k".to_string(), "v".to_string())).collect();
    write(&dir, "2-heavy.jsonl", manifest("beta", "m", "llama.cpp", "2026-03-01T01:00:00Z"), vec![heavy], true);
    let o = p.run(&["board", "--measurements", &dir.display().to_string(), "--out", "b"]);
    let said = text(&o);
    assert!(o.status.success(), "{said}");
    assert!(said.contains("2-heavy.jsonl: 3.0 MB of records that would take about"), "{said}");
    assert!(said.contains("more than half the reporter's memory limit of 16 MiB: left out"), "{said}");
    let s = standings(&p.path().join("b"));
    let columns: Vec<&str> =
        s["board"]["columns"].as_array().unwrap().iter().map(|c| c["key"].as_str().unwrap()).collect();
    assert_eq!(columns, ["alpha · m"], "the heavy file's column is not on the board");
    assert_eq!(crate::board::cell(&s, "Box footprint", "alpha · m")["kind"], "measured");
    let md = std::fs::read_to_string(p.path().join("b/board.md")).unwrap();
    assert!(md.contains("2-heavy.jsonl"), "the board names the file left out");
}
