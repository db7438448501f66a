//! Repeats and intervals (issue 21): `--repeat N` on the reference target,
//! the board's cell over a repeat group (the median run's figure, every
//! run's value, items passed in every run, in some, in none), speed
//! intervals bootstrapped from each category's repetitions, and the mark
//! where a row's leaders are not separated beyond their intervals.

use std::collections::BTreeSet;

use serde_json::Value;
use sparktest_record::{Manifest, Outcome, Repeat};

use crate::board::{case, manifest, standings, wilson, write};
use crate::support::*;

fn row<'a>(s: &'a Value, title: &str) -> &'a Value {
    s["board"]["rows"].as_array().unwrap().iter().find(|r| r["title"] == title).unwrap_or_else(|| panic!("no {title}"))
}

fn repeat(mut m: Manifest, id: &str, index: u32) -> Manifest {
    m.run_id = format!("{id}-r{index}");
    m.repeat = Some(Repeat { index, total: 3, group: format!("repeat-{id}") });
    m
}

/// Ten A-Bench items; `passing` lists the ones that pass.
fn bench(passing: &[usize]) -> Vec<sparktest_record::CaseRecord> {
    (0..10)
        .map(|i| {
            let ok = passing.contains(&i);
            let outcome = if ok { Outcome::Pass } else { Outcome::Fail };
            case("a-bench", &format!("a-tool::t{i:02}"), outcome, &[], (!ok).then_some("wrong"))
        })
        .collect()
}

#[test]
fn a_repeat_group_is_one_cell_with_every_run_its_median_and_items_in_every_some_none() {
    let p = Project::new("");
    let m = p.path().join("m");
    std::fs::create_dir_all(&m).unwrap();
    // Three repeats: 7, 6 and 8 of 10. Items 0–4 pass every time, 5–7 in
    // some runs, 8 and 9 never.
    let runs: [&[usize]; 3] = [&[0, 1, 2, 3, 4, 5, 6], &[0, 1, 2, 3, 4, 7], &[0, 1, 2, 3, 4, 5, 6, 7]];
    let speeds = [40.0, 44.0, 42.0];
    for (i, (passing, speed)) in runs.iter().zip(speeds).enumerate() {
        let index = i as u32 + 1;
        let mut cases = bench(passing);
        cases.push(case("speed", "decode::prose", Outcome::Pass, &[("decode-tok-s", speed)], None));
        let started = format!("2026-03-01T00:0{index}:00Z");
        write(
            &m,
            &format!("r{index}.jsonl"),
            repeat(manifest("alpha", "m1", "llama.cpp", &started), "a", index),
            cases,
            true,
        );
    }
    let out = p.run(&["board", "--measurements", &m.display().to_string(), "--out", "out"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = standings(&p.path().join("out"));
    let cell = &row(&s, "Agent tasks")["cells"]["alpha · m1"];
    // The median run (7 of 10, the first repeat) is the figure.
    assert_eq!(cell["value"].as_f64(), Some(0.7), "{cell}");
    let reps = &cell["repeats"];
    assert_eq!(reps["shown"], 1, "{reps}");
    let shorts: Vec<&str> = reps["runs"].as_array().unwrap().iter().map(|r| r["short"].as_str().unwrap()).collect();
    assert_eq!(shorts, ["7", "6", "8"]);
    // Counted here from the lists above.
    let sets: Vec<BTreeSet<usize>> = runs.iter().map(|r| r.iter().copied().collect()).collect();
    let every = (0..10).filter(|i| sets.iter().all(|s| s.contains(i))).count();
    let none = (0..10).filter(|i| sets.iter().all(|s| !s.contains(i))).count();
    assert_eq!((every, none), (5, 2));
    assert_eq!((reps["items"]["every"].as_u64(), reps["items"]["none"].as_u64()), (Some(5), Some(2)), "{reps}");
    assert_eq!(reps["items"]["some"].as_u64(), Some(3));
    let raw = cell["raw"].as_str().unwrap();
    assert!(raw.contains("runs: 7, 6, 8") && raw.contains("5/10 in all 3 runs, 3 in some, 2 in none"), "{raw}");
    // The interval of a k/n cell stays the shown run's Wilson interval.
    let (low, high) = wilson(7.0, 10.0);
    assert!((cell["spread"]["low"].as_f64().unwrap() - low).abs() < 1e-9, "{cell}");
    assert!((cell["spread"]["high"].as_f64().unwrap() - high).abs() < 1e-9, "{cell}");
    // Every run's records are behind the cell.
    assert_eq!(cell["records"].as_array().unwrap().len(), 30);
    // A speed row over repeats: the median and the runs' range.
    let speed = &row(&s, "Prose speed")["cells"]["alpha · m1"];
    assert_eq!(speed["value"].as_f64(), Some(42.0), "{speed}");
    assert_eq!(speed["spread"]["kind"], "runs", "{speed}");
    assert_eq!((speed["spread"]["low"].as_f64(), speed["spread"]["high"].as_f64()), (Some(40.0), Some(44.0)));
    let md = std::fs::read_to_string(p.path().join("out/board.md")).unwrap();
    assert!(md.contains("runs: 40, 44, 42") && md.contains("range over 3 runs 40–44"), "{md}");
    // The board is still one column.
    assert_eq!(s["board"]["columns"].as_array().unwrap().len(), 1);
}

#[test]
fn speed_intervals_come_from_the_repetitions_and_overlapping_leaders_are_marked() {
    let p = Project::new("");
    let m = p.path().join("m");
    std::fs::create_dir_all(&m).unwrap();
    let prose = |reps: &[f64]| {
        let mean = reps.iter().sum::<f64>() / reps.len() as f64;
        let mut metrics: Vec<(String, f64)> = vec![("decode-tok-s".into(), mean)];
        metrics.extend(reps.iter().enumerate().map(|(i, v)| (format!("decode-tok-s-rep{}", i + 1), *v)));
        let named: Vec<(&str, f64)> = metrics.iter().map(|(n, v)| (n.as_str(), *v)).collect();
        vec![case("speed", "decode::prose", Outcome::Pass, &named, None)]
    };
    // Alpha and beta overlap; gamma is far slower and separated.
    write(
        &m,
        "a.jsonl",
        manifest("alpha", "m1", "llama.cpp", "2026-03-01T00:00:00Z"),
        prose(&[50.0, 54.0, 52.0]),
        true,
    );
    write(&m, "b.jsonl", manifest("beta", "m2", "vllm", "2026-03-02T00:00:00Z"), prose(&[49.0, 53.0, 51.0]), true);
    write(&m, "g.jsonl", manifest("gamma", "m3", "sglang", "2026-03-03T00:00:00Z"), prose(&[20.0, 21.0, 22.0]), true);
    let out = p.run(&["board", "--measurements", &m.display().to_string(), "--out", "out"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = standings(&p.path().join("out"));
    let r = row(&s, "Prose speed");
    let a = &r["cells"]["alpha · m1"]["spread"];
    assert_eq!(a["kind"], "bootstrap", "{a}");
    assert_eq!((a["samples"].as_u64(), a["seed"].as_u64()), (Some(3), Some(21)));
    // A resampled mean of 50, 52 and 54 lies between 50 and 54.
    let (low, high) = (a["low"].as_f64().unwrap(), a["high"].as_f64().unwrap());
    assert!((50.0..52.0).contains(&low) && high > 52.0 && high <= 54.0, "{a}");
    let marked: Vec<&str> = r["not_separated"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(marked, ["alpha · m1", "beta · m2"], "{r}");
    let md = std::fs::read_to_string(p.path().join("out/board.md")).unwrap();
    assert_eq!(md.matches("not separated from the leader").count(), 2, "{md}");
    // Three samples a figure: the interval says it is likely too narrow.
    assert_eq!(md.matches("over 3 samples: too few to bootstrap, likely too narrow").count(), 3, "{md}");
    // The same files, the same board: the bootstrap is seeded.
    let again = p.run(&["board", "--measurements", &m.display().to_string(), "--out", "again"]);
    assert_eq!(again.status.code(), Some(0));
    assert_eq!(
        std::fs::read(p.path().join("out/standings.json")).unwrap(),
        std::fs::read(p.path().join("again/standings.json")).unwrap()
    );
}

#[test]
fn repeat_three_on_the_reference_target_gives_three_files_and_one_cell_with_three_runs() {
    let p = Project::new("");
    // Four corruption cases, three times, on the launched reference server.
    let mut args = vec!["--suite".to_string(), suite("smoke"), "--repeat".into(), "3".into(), "corruption::".into()];
    for skip in
        ["japanese", "chinese", "korean", "zwj_family", "skin_tone_flag", "stacked_marks", "arabic", "hebrew_mixed"]
    {
        args.extend(["--skip".to_string(), skip.to_string()]);
    }
    args.extend(["--format".into(), "json".into(), "-Z".into(), "unstable-options".into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = p.run(&args);
    let said = text(&out);
    assert!(matches!(out.status.code(), Some(0) | Some(101)), "{said}");
    let runs = p.measurements();
    assert_eq!(runs.len(), 3, "{said}");
    let group = runs[0].manifest.repeat.as_ref().expect("a repeat group").group.clone();
    let mut indices: Vec<u32> = runs
        .iter()
        .map(|r| {
            let rep = r.manifest.repeat.as_ref().unwrap();
            assert_eq!((rep.total, &rep.group), (3, &group));
            assert_eq!(r.cases.len(), 4, "{:?}", r.cases.iter().map(|c| &c.id).collect::<Vec<_>>());
            rep.index
        })
        .collect();
    indices.sort();
    assert_eq!(indices, [1, 2, 3]);
    // libtest's JSON counts what the filter left out (8 skipped of 12
    // corruption cases, and the 3 repro cases), once per repeat.
    let suites: Vec<&str> =
        said.lines().filter(|l| l.contains("\"type\": \"suite\"") && l.contains("filtered_out")).collect();
    assert_eq!(suites.len(), 3, "{said}");
    assert!(suites.iter().all(|l| l.contains("\"filtered_out\": 11")), "{suites:?}");

    let board = p.run(&["board"]);
    assert_eq!(board.status.code(), Some(0), "{}", text(&board));
    let s = standings(&p.path().join("board"));
    let cell = row(&s, "Corruption probe")["cells"].as_object().unwrap().values().next().unwrap().clone();
    let reps = &cell["repeats"];
    assert_eq!(reps["runs"].as_array().unwrap().len(), 3, "{cell}");
    // Independently: each run's passes, the median run, its Wilson interval.
    let mut passes: Vec<(usize, u32)> =
        runs.iter().map(|r| (r.count(Outcome::Pass), r.manifest.repeat.as_ref().unwrap().index)).collect();
    let by_index: Vec<String> = {
        let mut v = passes.clone();
        v.sort_by_key(|(_, i)| *i);
        v.iter().map(|(k, _)| k.to_string()).collect()
    };
    let shorts: Vec<&str> = reps["runs"].as_array().unwrap().iter().map(|r| r["short"].as_str().unwrap()).collect();
    assert_eq!(shorts, by_index);
    passes.sort();
    let (k, index) = passes[1];
    assert_eq!(reps["shown"].as_u64(), Some(u64::from(index)), "{cell}");
    let (low, high) = wilson(k as f64, 4.0);
    assert!((cell["spread"]["low"].as_f64().unwrap() - low).abs() < 1e-9, "{cell}");
    assert!((cell["spread"]["high"].as_f64().unwrap() - high).abs() < 1e-9, "{cell}");
    let raw = cell["raw"].as_str().unwrap();
    assert!(raw.contains(&format!("runs: {}", by_index.join(", "))) && raw.contains("in all 3 runs"), "{raw}");
}
