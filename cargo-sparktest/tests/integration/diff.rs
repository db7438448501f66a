//! `cargo sparktest diff` (issue 21): a change or run-to-run variation, from
//! crafted measurement files with known answers: one flipped item of 60 is
//! noise, 15 is a change (McNemar's exact p = 2 × 0.5^15); a decode rate
//! 1% faster with per-case spread is noise, 30% is a change; lost items are
//! never a regression; configuration differences are named.

use std::path::Path;

use serde_json::Value;
use sparktest_record::{CaseRecord, Manifest, Outcome};

use crate::board::{case, manifest, write};
use crate::support::*;

fn tagged(mut c: CaseRecord, tags: &[&str]) -> CaseRecord {
    c.tags = tags.iter().map(|t| t.to_string()).collect();
    c
}

/// 60 A-Bench items: item i passes unless `fails(i)`; `lost` items lost.
fn bench(fails: impl Fn(usize) -> bool, lost: &[usize]) -> Vec<CaseRecord> {
    (0..60)
        .map(|i| {
            let outcome = if lost.contains(&i) {
                Outcome::Lost
            } else if fails(i) {
                Outcome::Fail
            } else {
                Outcome::Pass
            };
            let reason = match outcome {
                Outcome::Lost => Some("connection reset"),
                Outcome::Fail => Some("wrong"),
                _ => None,
            };
            tagged(case("a-bench", &format!("a-tool::t{i:02}"), outcome, &[], reason), &["a-tool", "Agent tasks"])
        })
        .collect()
}

fn run(started: &str, build: &str) -> Manifest {
    let mut m = manifest("local", "m1", "llama.cpp", started);
    m.target.build = Some(build.into());
    m
}

fn diff(p: &Project, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["diff"];
    all.extend_from_slice(args);
    let out = p.run(&all);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn json(p: &Project, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend_from_slice(&["--format", "json"]);
    let (code, out, err) = diff(p, &all);
    assert_eq!(code, 0, "{out}\n{err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

fn row<'a>(report: &'a Value, title: &str) -> &'a Value {
    report["rows"].as_array().unwrap().iter().find(|r| r["row"] == title).unwrap_or_else(|| panic!("no row {title}"))
}

#[test]
fn diff_one_flipped_item_of_sixty_is_within_variation_and_a_lost_item_is_no_regression() {
    let p = Project::new("");
    let m = p.path().join("measurements");
    std::fs::create_dir_all(&m).unwrap();
    // 51/60 on A; B fails one more item and loses another.
    let a = bench(|i| i >= 51, &[]);
    let b = bench(|i| i >= 50, &[3]);
    write(&m, "2026-03-01T00:00:00Z-local.jsonl", run("2026-03-01T00:00:00Z", "b100"), a, true);
    write(&m, "2026-03-02T00:00:00Z-local.jsonl", run("2026-03-02T00:00:00Z", "b100"), b, true);
    let ids = ["2026-03-01T00:00:00Z-local", "2026-03-02T00:00:00Z-local"];

    // The item B lost was answered on A: the comparison is incomplete, and
    // a CI gate fails on it unless lost items are allowed.
    let (code, out, err) = diff(&p, &[ids[0], ids[1], "--fail-on", "regression"]);
    assert_eq!(code, 101, "{out}\n{err}");
    assert!(out.contains("answered on A, not on B (the comparison is incomplete): 1"), "{out}");
    assert!(out.contains("a-bench::a-tool::t03: lost: connection reset (A: 2026-03-01T00:00:00Z-local#"), "{out}");
    assert!(out.contains("incomplete: no regression among the items both sides answered"), "{out}");
    let (code, out, err) = diff(&p, &[ids[0], ids[1], "--fail-on", "regression", "--allow-lost"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("within run-to-run variation"), "{out}");
    assert!(!out.contains("beyond variation"), "{out}");
    assert!(out.contains("configuration: the same on both sides"), "{out}");
    assert!(out.contains("pass→fail a-bench::a-tool::t50"), "{out}");
    assert!(out.contains("lost (left out of the tests; not a regression of the model): 1"), "{out}");
    assert!(out.contains("a-bench::a-tool::t03 on b: connection reset"), "{out}");

    let r = json(&p, &[ids[0], ids[1]]);
    let pr = &row(&r, "Agent tasks")["pass_rate"];
    assert_eq!(pr["test"], "mcnemar-exact");
    // Item 3 is lost on B: out of both sides' counts and of the pairs.
    assert_eq!((pr["a_passed"].as_u64(), pr["a_given"].as_u64()), (Some(50), Some(59)));
    assert_eq!((pr["b_passed"].as_u64(), pr["b_given"].as_u64()), (Some(49), Some(59)));
    assert_eq!(pr["paired"], 59);
    // One discordant pair: the exact two-sided p is 1.
    assert_eq!(pr["p_value"].as_f64(), Some(1.0));
    assert_eq!(pr["verdict"], "within");
    assert_eq!(r["regression"], false);
    // The seed is recorded, and a side named as a file reads the same.
    assert_eq!(r["seed"], 21);
    let by_file =
        json(&p, &["measurements/2026-03-01T00:00:00Z-local.jsonl", "measurements/2026-03-02T00:00:00Z-local.jsonl"]);
    assert_eq!(by_file["rows"], r["rows"]);
}

#[test]
fn diff_fifteen_of_sixty_flipped_is_beyond_variation_names_them_and_fails() {
    let p = Project::new("");
    let m = p.path().join("measurements");
    std::fs::create_dir_all(&m).unwrap();
    // 51/60 on A; B, a new build, fails 15 items A passed (t10..t24).
    write(&m, "2026-03-01T00:00:00Z-local.jsonl", run("2026-03-01T00:00:00Z", "b100"), bench(|i| i >= 51, &[]), true);
    write(
        &m,
        "2026-03-02T00:00:00Z-local.jsonl",
        run("2026-03-02T00:00:00Z", "b200"),
        bench(|i| i >= 51 || (10..25).contains(&i), &[]),
        true,
    );
    let (ra, rb) = ("2026-03-01T00:00:00Z-local", "2026-03-02T00:00:00Z-local");

    let (code, out, err) = diff(&p, &[ra, rb, "--fail-on", "regression"]);
    assert_eq!(code, 101, "{out}\n{err}");
    assert!(out.contains("beyond variation, worse"), "{out}");
    assert!(out.contains("passed 51/60"), "{out}");
    assert!(out.contains("→ 36/60"), "{out}");
    assert!(out.contains("configuration differs"), "{out}");
    assert!(out.contains("build: b100 → b200"), "{out}");
    for i in 10..25 {
        let id = format!("a-bench::a-tool::t{i:02}");
        assert!(out.contains(&format!("pass→fail {id}  ({ra}#{id} | {rb}#{id})")), "{id}: {out}");
    }
    // Without --fail-on the comparison itself succeeds.
    assert_eq!(diff(&p, &[ra, rb]).0, 0);

    let r = json(&p, &[ra, rb]);
    let pr = &row(&r, "Agent tasks")["pass_rate"];
    assert_eq!(pr["pass_to_fail"].as_array().unwrap().len(), 15);
    assert!(pr["fail_to_pass"].as_array().unwrap().is_empty());
    // McNemar exact, 15 discordant pairs all one way: 2 × 0.5^15.
    let pv = pr["p_value"].as_f64().unwrap();
    assert!((pv - 2.0 * 0.5f64.powi(15)).abs() < 1e-12, "{pv}");
    // Wilson 95% for 51/60, computed here from the formula.
    let (k, n, z) = (51.0f64, 60.0f64, 1.959963984540054f64);
    let ph = k / n;
    let centre = (ph + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z / (1.0 + z * z / n) * (ph * (1.0 - ph) / n + z * z / (4.0 * n * n)).sqrt();
    let ai = pr["a_interval"].as_array().unwrap();
    assert!((ai[0].as_f64().unwrap() - (centre - half)).abs() < 1e-9, "{ai:?}");
    assert!((ai[1].as_f64().unwrap() - (centre + half)).abs() < 1e-9, "{ai:?}");
    assert_eq!((pr["verdict"].as_str(), pr["direction"].as_str()), (Some("beyond"), Some("worse")));
    assert_eq!(r["regression"], true);
    let build = r["configuration"].as_array().unwrap().iter().find(|d| d["field"] == "build").unwrap();
    assert_eq!((build["a"].as_str(), build["b"].as_str()), (Some("b100"), Some("b200")));

    // `show` finds both records of a flipped item (files are named by run
    // id, as the runner names them).
    let flip = &pr["pass_to_fail"][0];
    for side in ["a", "b"] {
        let id = flip[side].as_str().unwrap();
        let shown = p.run(&["show", id]);
        assert!(shown.status.success(), "{id}: {}", String::from_utf8_lossy(&shown.stderr));
    }
}

/// Deterministic noise, uniform in [-1, 1): a SplitMix64 step of the
/// inputs.
fn noise(i: u64, j: u64, salt: u64) -> f64 {
    let mut z = (i * 1_000 + j * 10 + salt).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
}

/// Ten speed cases with three repetitions each, spread up to ±5% within a
/// case (decode rates on a shared CPU move that much), the cases 40–67
/// tok/s; B's rates are A's × `factor`, with noise of their own.
fn speed_run(dir: &Path, started: &str, factor: f64, salt: u64) {
    let cases = (0..10u64)
        .map(|i| {
            let base = 40.0 + 3.0 * i as f64;
            let reps: Vec<f64> = (0..3).map(|j| base * factor * (1.0 + 0.05 * noise(i, j, salt))).collect();
            let mean = reps.iter().sum::<f64>() / 3.0;
            let metrics = [
                ("decode-tok-s", mean),
                ("decode-tok-s-rep1", reps[0]),
                ("decode-tok-s-rep2", reps[1]),
                ("decode-tok-s-rep3", reps[2]),
            ];
            tagged(case("speed", &format!("decode::c{i}"), Outcome::Pass, &metrics, None), &["Prose speed", "prose"])
        })
        .collect();
    std::fs::create_dir_all(dir).unwrap();
    write(dir, "run.jsonl", manifest("local", "m1", "llama.cpp", started), cases, true);
}

#[test]
fn diff_speed_one_percent_is_within_variation_thirty_percent_is_beyond() {
    let p = Project::new("");
    speed_run(&p.path().join("a"), "2026-03-01T00:00:00Z", 1.0, 0);
    speed_run(&p.path().join("same"), "2026-03-02T00:00:00Z", 1.01, 1);
    speed_run(&p.path().join("faster"), "2026-03-03T00:00:00Z", 1.3, 1);
    speed_run(&p.path().join("slower"), "2026-03-04T00:00:00Z", 0.7, 1);

    let (code, out, err) = diff(&p, &["a", "same", "--fail-on", "regression"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("within run-to-run variation"), "{out}");
    let r = json(&p, &["a", "same"]);
    let f = &row(&r, "Prose speed")["figures"][0];
    assert_eq!(
        (f["metric"].as_str(), f["method"].as_str()),
        (Some("decode-tok-s"), Some("paired-bootstrap-mean-ratio"))
    );
    assert_eq!((f["items"].as_u64(), f["a_samples"].as_u64()), (Some(10), Some(30)));
    assert_eq!(f["verdict"], "within");
    // Computed independently (Python, the same rates): the mean paired
    // ratio is 1.0036, its 95% bootstrap interval about 0.987–1.022.
    let ratio = f["ratio"].as_f64().unwrap();
    assert!((ratio - 1.003554279038363).abs() < 1e-9, "{ratio}");
    let i = f["interval"].as_array().unwrap();
    assert!(i[0].as_f64().unwrap() < 1.0 && 1.0 < i[1].as_f64().unwrap(), "{i:?}");

    // 30% faster: a change, for the better, so no regression.
    let (code, out, _) = diff(&p, &["a", "faster", "--fail-on", "regression"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("beyond variation, better"), "{out}");
    // 30% slower: a regression.
    let (code, out, _) = diff(&p, &["a", "slower", "--fail-on", "regression"]);
    assert_eq!(code, 101, "{out}");
    assert!(out.contains("beyond variation, worse"), "{out}");
    let r = json(&p, &["a", "slower"]);
    let f = &row(&r, "Prose speed")["figures"][0];
    assert!(f["interval"][1].as_f64().unwrap() < 1.0, "{f}");

    // The same seed gives the same interval; the seed is in the output.
    let again = json(&p, &["a", "same"]);
    assert_eq!(again["rows"], json(&p, &["a", "same"])["rows"]);
    let seeded = json(&p, &["a", "same", "--seed", "7"]);
    assert_eq!(seeded["seed"], 7);
}

#[test]
fn diff_names_what_it_cannot_find() {
    let p = Project::new("");
    let (code, _, err) = diff(&p, &["nope", "nothing"]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("\"nope\" names no measurement file, folder, run id or run group"), "{err}");
}

#[test]
fn diff_never_calls_a_dead_or_cut_candidate_unchanged() {
    let p = Project::new("");
    let m = p.path().join("m");
    for d in ["good", "dead", "cut"] {
        std::fs::create_dir_all(m.join(d)).unwrap();
    }
    // 12 items answered on A, 11 of them right.
    let good: Vec<CaseRecord> = bench(|i| i == 5, &[]).into_iter().take(12).collect();
    write(&m.join("good"), "a.jsonl", run("2026-03-01T00:00:00Z", "b1"), good, true);
    // B: a server that answered nothing (every item lost).
    let dead: Vec<CaseRecord> = bench(|_| false, &(0..12).collect::<Vec<_>>()).into_iter().take(12).collect();
    write(&m.join("dead"), "b.jsonl", run("2026-03-02T00:00:00Z", "b1"), dead, true);
    // B: 3 of the 12 recorded, then a line cut short (no summary).
    let three: Vec<CaseRecord> = bench(|i| i == 5, &[]).into_iter().take(3).collect();
    write(&m.join("cut"), "c.jsonl", run("2026-03-03T00:00:00Z", "b1"), three, false);
    let mut f = std::fs::OpenOptions::new().append(true).open(m.join("cut/c.jsonl")).unwrap();
    std::io::Write::write_all(&mut f, b"{\"type\":\"case\",\"data\":{\"id\":\"a-b").unwrap();

    let side = |d: &str| format!("m/{d}");
    let (code, out, err) = diff(&p, &[&side("good"), &side("dead"), "--fail-on", "regression"]);
    assert_eq!(code, 101, "a dead candidate fails the gate: {out}\n{err}");
    assert!(out.contains("answered on A, not on B (the comparison is incomplete): 12"), "{out}");
    assert!(out.contains("12 items the baseline answered were lost or not recorded on B"), "{out}");
    assert!(!out.contains("\nno regression beyond run-to-run variation"), "{out}");
    let r = json(&p, &[&side("good"), &side("dead")]);
    assert_eq!(r["regression"], false, "nothing answered on both sides changed");
    assert_eq!(row(&r, "Agent tasks")["unanswered"].as_array().unwrap().len(), 12);

    let (code, out, err) = diff(&p, &[&side("good"), &side("cut"), "--fail-on", "regression"]);
    assert_eq!(code, 101, "{out}\n{err}");
    assert!(out.contains("9 items the baseline answered were lost or not recorded on B"), "{out}");
    assert!(out.contains("is damaged at line 5"), "the cut line is named: {out}");
    assert!(out.contains("a-bench::a-tool::t11: not recorded"), "{out}");

    // Allowed, the same counts are said and the gate passes.
    let (code, out, _) = diff(&p, &[&side("good"), &side("cut"), "--fail-on", "regression", "--allow-lost"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("incomplete: no regression among the items both sides answered"), "{out}");
}
