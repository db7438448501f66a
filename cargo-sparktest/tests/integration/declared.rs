//! Rows declared as data (issue 47): a suite's `[[row]]` reaches the
//! board, `board.md`, `standings.json`, the board config and `diff` as the
//! built-in rows do; a duplicate title, an unreadable declaration and a
//! metric no record carries are each said, naming what to fix.

use std::path::Path;

use serde_json::Value;
use sparktest_record::{Better, FigureKind, Outcome, RowDeclaration, Standing};

use crate::board::{case, cell, manifest, order, row_click, standings, wilson, write};
use crate::support::*;
use crate::webdriver::Browser;

fn row(title: &str, figure: FigureKind, metric: Option<&str>, better: Better) -> RowDeclaration {
    RowDeclaration {
        title: title.into(),
        instrument: "capitals".into(),
        methodology: format!("{title}: the example's declared row."),
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

fn rows() -> Vec<RowDeclaration> {
    vec![
        row("Capital cities", FigureKind::PassShare, None, Better::Higher),
        row("Capital latency", FigureKind::Percentile(50), Some("latency-ms"), Better::Lower),
        row("Capital speed", FigureKind::Mean, Some("tok-s"), Better::Higher),
    ]
}

/// A run of the capitals instrument: the first `passed` of ten countries
/// pass, the next `lost` are lost, the rest fail; each answered one took
/// `ms` (plus its index).
fn capitals(dir: &Path, file: &str, target: &str, started: &str, (passed, lost): (usize, usize), ms: f64) {
    let mut m = manifest(target, "m", "llama.cpp", started);
    m.suite.name = "capitals-example".into();
    m.rows = rows();
    let cases = (0..10)
        .map(|i| {
            let outcome = if i < passed {
                Outcome::Pass
            } else if i < passed + lost {
                Outcome::Lost
            } else {
                Outcome::Fail
            };
            let metrics = if outcome == Outcome::Lost { vec![] } else { vec![("latency-ms", ms + i as f64)] };
            case("capitals", &format!("country::c{i:02}"), outcome, &metrics, None)
        })
        .collect();
    write(dir, file, m, cases, true);
}

fn row_of<'a>(s: &'a Value, title: &str) -> Option<&'a Value> {
    s["board"]["rows"].as_array().unwrap().iter().find(|r| r["title"] == title)
}

#[test]
fn a_declared_row_stands_on_the_board_and_in_diff_like_a_built_in_one() {
    let p = Project::new("");
    let dir = p.path().join("m");
    std::fs::create_dir_all(&dir).unwrap();
    capitals(&dir, "2026-03-alpha.jsonl", "alpha", "2026-03-01T00:00:00Z", (6, 2), 100.0);
    capitals(&dir, "2026-03-beta.jsonl", "beta", "2026-03-02T00:00:00Z", (9, 0), 50.0);
    // A later run of the same instrument on alpha from a suite that does
    // not declare the rows (a smoke test), every case failed: it feeds the
    // declared rows nothing. Its file also carries a crafted declaration
    // of a built-in title: left out with a warning, never trusted.
    let mut smoke = manifest("alpha", "m", "llama.cpp", "2026-03-03T00:00:00Z");
    smoke.rows = vec![row("Prose speed", FigureKind::PassShare, None, Better::Higher)];
    let failed = (0..10).map(|i| case("capitals", &format!("country::c{i:02}"), Outcome::Fail, &[], None)).collect();
    write(&dir, "2026-03-smoke.jsonl", smoke, failed, true);
    let measurements = dir.display().to_string();
    let out = p.run(&["board", "--measurements", &measurements, "--out", "out"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("2026-03-smoke.jsonl: row \"Prose speed\" is left out: title:"), "{}", text(&out));
    let s = standings(&p.path().join("out"));
    let (a, b) = ("alpha · m", "beta · m");

    // The share passed: lost items out of the denominator, Wilson beside it.
    let r = row_of(&s, "Capital cities").expect("the declared row is on the board");
    assert_eq!(r["description"], "Capital cities: the example's declared row.");
    let (ca, cb) = (cell(&s, "Capital cities", a), cell(&s, "Capital cities", b));
    assert_eq!((ca["kind"].as_str(), ca["raw"].as_str()), (Some("measured"), Some("6/8 passed of answered · 2 lost")));
    assert!(ca["partial"].as_str().is_some_and(|p| p.contains("2 lost, not counted")), "{ca}");
    assert_eq!(cb["standing"], 10.0);
    // 10 × (6/8) ÷ (9/10) = 8.33, to the nearest half point.
    assert_eq!(ca["standing"], 8.5);
    let (low, high) = wilson(6.0, 8.0);
    let spread = &ca["spread"];
    assert_eq!(
        (spread["kind"].as_str(), spread["k"].as_u64(), spread["n"].as_u64()),
        (Some("wilson"), Some(6), Some(8))
    );
    assert!(
        (spread["low"].as_f64().unwrap() - low).abs() < 1e-9 && (spread["high"].as_f64().unwrap() - high).abs() < 1e-9
    );

    // A median of a metric, lower better: beta is faster.
    let (la, lb) = (cell(&s, "Capital latency", a), cell(&s, "Capital latency", b));
    // alpha's passed cases took 100..105 ms: the nearest-rank median is 102.
    assert_eq!((la["value"].as_f64(), lb["value"].as_f64()), (Some(102.0), Some(54.0)));
    assert_eq!((lb["standing"].as_f64(), la["standing"].as_f64()), (Some(10.0), Some(5.5)));
    assert_eq!(la["spread"]["kind"], "bootstrap", "{la}");
    assert!(la["raw"].as_str().unwrap().starts_with("102 ms median over 6 passed cases"), "{la}");

    // A metric no record carries: N/A, saying so.
    let na = cell(&s, "Capital speed", a);
    assert_eq!(na["kind"], "not-applicable", "{na}");
    assert_eq!(na["reason"], "no record of capitals carries the metric \"tok-s\" that the row declares");

    // board.md and the HTML carry the row as any other.
    let md = std::fs::read_to_string(p.path().join("out/board.md")).unwrap();
    assert!(md.contains("Capital cities") && md.contains("6/8 passed of answered · 2 lost"), "{md}");
    let html = std::fs::read_to_string(p.path().join("out/board.html")).unwrap();
    assert!(html.contains("Capital latency"));
    // In a real browser it sorts the columns and is a priority pick.
    let browser = Browser::start();
    browser.open(&format!("file://{}", p.path().join("out/board.html").display()));
    assert_eq!(order(&browser), [a, b], "no priorities: key order");
    row_click(&browser, "Capital cities");
    assert_eq!(order(&browser), [b, a], "beta's 9/10 before alpha's 6/8");
    let picked = browser.eval(
        "return Array.prototype.map.call(document.querySelectorAll('#scores th.rowhead.picked'), function(t){return t.querySelector('.prio').textContent + ' ' + t.textContent.slice(1).trim();}).join(',');",
    );
    assert_eq!(picked, "1 Capital cities");
    drop(browser);

    // The board config knows it by title.
    std::fs::write(p.path().join("board.toml"), "[rows.\"Capital latency\"]\nhidden = true\n").unwrap();
    let out = p.run(&["board", "--measurements", &measurements, "--out", "hidden", "--config", "board.toml"]);
    assert!(out.status.success(), "{}", text(&out));
    let hidden = standings(&p.path().join("hidden"));
    assert!(row_of(&hidden, "Capital latency").is_none() && row_of(&hidden, "Capital cities").is_some());

    // diff: the pass share item by item, the declared metric by its own
    // direction.
    let out = p.run(&[
        "diff",
        &format!("{measurements}/2026-03-alpha.jsonl"),
        &format!("{measurements}/2026-03-beta.jsonl"),
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let diff_row = |t: &str| report["rows"].as_array().unwrap().iter().find(|r| r["row"] == t).cloned();
    let cities = diff_row("Capital cities").unwrap_or_else(|| panic!("{report}"));
    assert_eq!(cities["pass_rate"]["test"], "mcnemar-exact", "{cities}");
    let latency = diff_row("Capital latency").unwrap();
    let figure = latency["figures"].as_array().unwrap().iter().find(|f| f["metric"] == "latency-ms").cloned();
    let figure = figure.unwrap_or_else(|| panic!("{latency}"));
    assert_eq!((figure["higher_better"].as_bool(), figure["direction"].as_str()), (Some(false), Some("better")));
    // Over the items both sides passed (c00–c05), as the board's figure
    // is over passed cases: not the failed ones that also took a time.
    assert_eq!(figure["items"], 6, "{figure}");
    assert_eq!(figure["verdict"], "beyond", "{figure}");
}

#[test]
fn of_two_suites_declaring_one_title_the_later_is_left_out_naming_both_files_and_the_board_built() {
    let p = Project::new("");
    let dir = p.path().join("m");
    std::fs::create_dir_all(&dir).unwrap();
    capitals(&dir, "2026-03-alpha.jsonl", "alpha", "2026-03-01T00:00:00Z", (6, 0), 100.0);
    let mut m = manifest("beta", "m", "llama.cpp", "2026-03-02T00:00:00Z");
    m.suite.name = "geography".into();
    let mut other = row("Capital cities", FigureKind::PassShare, None, Better::Higher);
    other.instrument = "geography".into();
    other.declared_by = "geography@2.0.0".into();
    m.rows = vec![other];
    write(&dir, "2026-03-geo.jsonl", m, vec![case("geography", "country::c00", Outcome::Pass, &[], None)], true);
    let out = p.run(&["board", "--measurements", &dir.display().to_string(), "--out", "out"]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains(
            "2026-03-geo.jsonl: row \"Capital cities\" (geography@2.0.0, instrument geography) is left out: \
             2026-03-alpha.jsonl declares it first (capitals-example@0.1.0, instrument capitals)"
        ),
        "{said}"
    );
    let s = standings(&p.path().join("out"));
    assert!(row_of(&s, "Capital cities").is_some(), "the first declaration's row");
    let (alpha, beta) = (cell(&s, "Capital cities", "alpha · m"), cell(&s, "Capital cities", "beta · m"));
    assert_eq!(alpha["kind"], "measured", "{alpha}");
    assert!(alpha["raw"].as_str().is_some_and(|r| r.starts_with("6/10 passed")), "{alpha}");
    assert_ne!(beta["kind"], "measured", "geography's case feeds no row of capitals: {beta}");
}

#[test]
fn a_file_of_another_suite_saying_it_declares_the_victim_s_row_is_left_out() {
    let p = Project::new("");
    let dir = p.path().join("m");
    std::fs::create_dir_all(&dir).unwrap();
    capitals(&dir, "2026-03-alpha.jsonl", "alpha", "2026-03-01T00:00:00Z", (6, 0), 100.0);
    let measurements = dir.display().to_string();
    let board = |out: &str| {
        let o = p.run(&["board", "--measurements", &measurements, "--out", out]);
        assert!(o.status.success(), "{}", text(&o));
        (text(&o), standings(&p.path().join(out)))
    };
    let (_, before) = board("before");
    // Later, a file of another suite carrying the victim's rows as if its
    // suite declared them, "better" flipped and the title's methodology
    // rewritten.
    let mut m = manifest("beta", "m", "llama.cpp", "2026-03-05T00:00:00Z");
    m.rows = rows()
        .into_iter()
        .map(|mut d| {
            d.better = if d.better == Better::Higher { Better::Lower } else { Better::Higher };
            d.methodology = "forged".into();
            d
        })
        .collect();
    write(&dir, "2026-03-forged.jsonl", m, vec![case("capitals", "country::c00", Outcome::Pass, &[], None)], true);
    let (said, after) = board("after");
    assert!(
        said.contains(
            "2026-03-forged.jsonl: row \"Capital cities\" is left out: it says it is declared by \
             capitals-example@0.1.0, but the file ran the suite \"crafted\""
        ),
        "{said}"
    );
    for title in ["Capital cities", "Capital latency"] {
        let (was, now) = (row_of(&before, title).unwrap(), row_of(&after, title).unwrap());
        assert_eq!((&was["description"], &was["rule"]), (&now["description"], &now["rule"]), "{title}: {now}");
        // alpha's cell as it was: the forged file's case feeds no cell.
        assert_eq!(was["cells"]["alpha · m"], now["cells"]["alpha · m"], "{title}");
        assert_ne!(now["cells"]["beta · m"]["kind"], "measured", "{title}: {now}");
    }
}

#[test]
fn an_unreadable_or_unusable_declaration_exits_3_naming_the_file_and_the_field() {
    let p = Project::new("");
    let base = std::fs::read_to_string(repo().join("examples/capitals-instrument/suite/suite.toml")).unwrap();
    let base = base.split("[[row]]").next().unwrap().to_string();
    for (row, says) in [
        ("title = \"Mine\"\ninstrument = \"capitals\"\nfigur = \"mean\"\n", "unknown field `figur`"),
        ("title = \"Mine\"\ninstrument = \"capitals\"\nfigure = \"average\"\n", "figure \"average\" is none of"),
        (
            "title = \"Mine\"\ninstrument = \"capitals\"\nfigure = \"p90\"\n",
            "row #1 (\"Mine\"): metric: figure \"p90\" is computed from a metric",
        ),
        (
            "title = \"Prose speed\"\ninstrument = \"capitals\"\nfigure = \"pass-share\"\n",
            "title: \"Prose speed\" is a built-in row's title",
        ),
        (
            "title = \"Mine\"\ninstrument = \"capitol\"\nfigure = \"pass-share\"\n",
            "row #1 (\"Mine\"): instrument: \"capitol\" is no instrument of this suite (its instruments: capitals)",
        ),
    ] {
        let dir = p.path().join("suite");
        std::fs::create_dir_all(&dir).unwrap();
        for f in ["capitals-wit-0.1.0.wasm", "capitals.json"] {
            std::fs::copy(repo().join("examples/capitals-instrument/suite").join(f), dir.join(f)).unwrap();
        }
        std::fs::write(dir.join("suite.toml"), format!("{base}[[row]]\n{row}")).unwrap();
        let out = p.run(&["--suite", &dir.display().to_string(), "--list"]);
        assert_eq!(out.status.code(), Some(3), "{row}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("suite.toml") && err.contains(says), "{row}: {err}");
    }
}

/// Issue 56's first finding: the declaring suite's full run, then a run of
/// another suite with the same instrument's cases, then a run of the
/// declaring suite filtered to a case that feeds the row nothing. Handed
/// whole or only what the cells read, the reporter gives the row's cell
/// from the full run.
#[test]
fn a_declared_rows_cell_is_the_same_whether_the_reporter_is_handed_every_run_or_what_its_cells_read() {
    let p = Project::new("");
    let dir = p.path().join("m");
    std::fs::create_dir_all(&dir).unwrap();
    capitals(&dir, "1-full.jsonl", "alpha", "2026-03-01T00:00:00Z", (6, 0), 100.0);
    let other = manifest("alpha", "m", "llama.cpp", "2026-03-02T00:00:00Z");
    // The same cases, metrics and all: to the index, the same features.
    let failed = (0..10)
        .map(|i| case("capitals", &format!("country::c{i:02}"), Outcome::Fail, &[("latency-ms", 50.0)], None))
        .collect();
    write(&dir, "2-other-suite.jsonl", other, failed, true);
    let mut filtered = manifest("alpha", "m", "llama.cpp", "2026-03-03T00:00:00Z");
    filtered.suite.name = "capitals-example".into();
    filtered.rows = rows();
    write(&dir, "3-filtered.jsonl", filtered, vec![case("capitals", "city::paris", Outcome::Pass, &[], None)], true);
    // Another configuration's runs, large enough that the reporter is not
    // handed the folder whole at 16 MiB.
    let padding = "x".repeat(400_000);
    for i in 0..12 {
        let c = case("footprint", "idle::memory", Outcome::Fail, &[("resident-gib", 5.0)], Some(&padding));
        let m = manifest("delta", "m", "llama.cpp", &format!("2026-03-01T01:{i:02}:00Z"));
        write(&dir, &format!("pad-{i:02}.jsonl"), m, vec![c], true);
    }
    let measurements = dir.display().to_string();
    let board = |out: &str| {
        let o = p.run(&["board", "--measurements", &measurements, "--out", out]);
        assert!(o.status.success(), "{}", text(&o));
        (text(&o), standings(&p.path().join(out)))
    };
    let (_, whole) = board("whole");
    let config = std::fs::read_to_string(p.path().join("sparktest.toml")).unwrap();
    std::fs::write(
        p.path().join("sparktest.toml"),
        config.replace("memory-per-instance-mib = 64", "memory-per-instance-mib = 16"),
    )
    .unwrap();
    let (said, reduced) = board("reduced");
    assert!(said.contains("more than the reporter is handed whole"), "the reduced hand-over: {said}");
    let cell = |s: &Value| cell(s, "Capital cities", "alpha · m").clone();
    assert_eq!(cell(&whole)["kind"], "measured", "{}", cell(&whole));
    assert!(cell(&whole)["raw"].as_str().is_some_and(|r| r.starts_with("6/10 passed")), "{}", cell(&whole));
    assert_eq!(cell(&whole), cell(&reduced), "the same cell either way");
}
