//! `cargo sparktest board` (issue 5): standings and ordering from crafted
//! measurement files with known answers, N/A reasons, the failure log,
//! escaping, older formats, determinism, and the HTML board in a real
//! headless Chromium.

use std::path::Path;

use serde_json::Value;
use sparktest_record::{
    CaseRecord, HarnessInfo, HostInfo, InstrumentSummary, Line, Manifest, Metric, Outcome, SuiteInfo, Summary,
    TargetInfo,
};

use crate::support::*;
use crate::webdriver::Browser;

pub(crate) fn manifest(target: &str, model: &str, engine: &str, started: &str) -> Manifest {
    Manifest {
        format_version: sparktest_record::FORMAT_VERSION.into(),
        run_id: format!("{started}-{target}"),
        started_at: started.into(),
        harness: HarnessInfo { version: "0.1.0".into(), git_revision: None },
        suite: SuiteInfo { name: "crafted".into(), version: "1".into(), sha256: "00".into(), files: vec![] },
        target: TargetInfo {
            name: target.into(),
            base_url: "http://127.0.0.1:1".into(),
            model_id: model.into(),
            engine: engine.into(),
            build: None,
            model_path: None,
            model_sha256: None,
            launch_command: None,
            facts: vec![],
            host: None,
            tool_choice: None,
            label: None,
            note: None,
            description: None,
        },
        client_host: HostInfo {
            hostname: Some("box".into()),
            cpu_model: None,
            cores: 2,
            memory_bytes: 1 << 30,
            memory_available_bytes: 1 << 29,
            os: None,
            kernel: None,
            accelerators: vec![],
        },
        route: "direct".into(),
        instruments: vec![],
        arms: vec![],
        client_ceiling: None,
        judge: None,
        partition: None,
        resumes: None,
        suite_cases: Default::default(),
        repeat: None,
        campaign: None,
        job: None,
        rows: Vec::new(),
    }
}

pub(crate) fn case(
    instrument: &str,
    name: &str,
    outcome: Outcome,
    metrics: &[(&str, f64)],
    reason: Option<&str>,
) -> CaseRecord {
    CaseRecord {
        id: format!("{instrument}::{name}"),
        instrument: instrument.into(),
        case: name.into(),
        tags: vec![],
        outcome,
        reason: reason.map(str::to_string),
        metrics: metrics.iter().map(|(n, v)| Metric { name: n.to_string(), value: *v, unit: String::new() }).collect(),
        notes: vec![],
        started_at: "t".into(),
        seconds: 1.0,
        endpoint_seconds: 0.5,
        calls: vec![],
        prompt_tokens: None,
        completion_tokens: None,
        transcript_sha256: "00".into(),
        snapshots: vec![],
        arm: None,
        latency: None,
    }
}

/// `n` cases of an instrument, named `<prefix>NN`: the first `passed`
/// pass, the next `lost` are lost, the rest fail, each not passing with
/// `lost_reason` or `fail_reason`.
fn outcomes(
    instrument: &str,
    prefix: &str,
    (passed, lost, n): (usize, usize, usize),
    (lost_reason, fail_reason): (&str, &str),
) -> Vec<CaseRecord> {
    (0..n)
        .map(|i| {
            let (outcome, reason) = if i < passed {
                (Outcome::Pass, None)
            } else if i < passed + lost {
                (Outcome::Lost, Some(lost_reason))
            } else {
                (Outcome::Fail, Some(fail_reason))
            };
            case(instrument, &format!("{prefix}{i:02}"), outcome, &[], reason)
        })
        .collect()
}

fn a_bench(passed: usize, lost: usize, given: usize) -> Vec<CaseRecord> {
    outcomes("a-bench", "a-tool::t", (passed, lost, given), ("wrong", "wrong"))
}

fn speed(code: f64, prose: f64) -> Vec<CaseRecord> {
    vec![
        case("speed", "decode::code", Outcome::Pass, &[("decode-tok-s", code)], None),
        case("speed", "decode::prose", Outcome::Pass, &[("decode-tok-s", prose)], None),
    ]
}

pub(crate) fn write(dir: &Path, name: &str, m: Manifest, cases: Vec<CaseRecord>, summary: bool) {
    let count = |o: Outcome| cases.iter().filter(|c| c.outcome == o).count() as u64;
    let (passed, failed, lost, na) =
        (count(Outcome::Pass), count(Outcome::Fail), count(Outcome::Lost), count(Outcome::NotApplicable));
    // The efficiency readout of the A-Bench cases, as the runner writes it.
    let bench: Vec<&CaseRecord> = cases.iter().filter(|c| c.instrument == "a-bench").collect();
    let instruments = if bench.is_empty() {
        vec![]
    } else {
        let correct = bench.iter().filter(|c| c.outcome == Outcome::Pass).count() as u64;
        vec![InstrumentSummary {
            name: "a-bench".into(),
            given: bench.len() as u64,
            correct,
            failed: bench.iter().filter(|c| c.outcome == Outcome::Fail).count() as u64,
            lost: bench.iter().filter(|c| c.outcome == Outcome::Lost).count() as u64,
            not_applicable: 0,
            mean_seconds: 1.0,
            output_tokens_per_correct: Some(100.0 / correct as f64),
            mean_harness_seconds: 0.5,
        }]
    };
    let mut lines = vec![Line::Manifest(m)];
    lines.extend(cases.into_iter().map(Line::Case));
    if summary {
        lines.push(Line::Summary(Summary {
            finished_at: "t".into(),
            seconds: 1.0,
            passed,
            failed,
            lost,
            not_applicable: na,
            instruments,
            gate: None,
            stopped: None,
            interrupted: None,
            interrupted_cases: 0,
        }));
    }
    let text: String = lines.iter().map(|l| serde_json::to_string(l).unwrap() + "\n").collect();
    std::fs::write(dir.join(name), text).unwrap();
}

/// Three configurations with known answers, and an older failed run.
fn crafted(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let mut alpha = speed(100.0, 100.0);
    alpha.extend(a_bench(6, 0, 10));
    alpha.push(case(
        "likelihood",
        "corpus::bpc",
        Outcome::NotApplicable,
        &[],
        Some("engine returns no prompt logprobs"),
    ));
    alpha.push(case("footprint", "idle::memory", Outcome::Pass, &[("resident-gib", 2.0)], None));
    alpha.push(case("context", "kv::pool", Outcome::Pass, &[("kv-pool-tokens", 8192.0)], None));
    write(dir, "2026-02-alpha.jsonl", manifest("alpha", "m1", "llama.cpp", "2026-02-01T00:00:00Z"), alpha, true);

    let mut beta = speed(50.0, 50.0);
    beta.extend(a_bench(9, 1, 10));
    beta.push(case("likelihood", "corpus::bpc", Outcome::Pass, &[("bpc", 0.6)], None));
    beta.push(case("footprint", "idle::memory", Outcome::Pass, &[("resident-gib", 4.0)], None));
    beta.push(case("context", "kv::pool", Outcome::Pass, &[("kv-pool-tokens", 65536.0)], None));
    write(dir, "2026-02-beta.jsonl", manifest("beta", "m2", "vllm", "2026-02-02T00:00:00Z"), beta, true);

    let mut gamma = speed(99.0, 97.0);
    gamma.push(case("likelihood", "corpus::bpc", Outcome::Pass, &[("bpc", 0.5)], None));
    write(dir, "2026-02-gamma.jsonl", manifest("gamma", "m3", "sglang", "2026-02-03T00:00:00Z"), gamma, true);

    // An older alpha run that failed, with a reply that tries to inject a
    // script; it was cut off (no summary). Kept in the log, not scored.
    let old = vec![
        case("speed", "decode::code", Outcome::Lost, &[], Some("connection reset")),
        case("a-bench", "a-tool::t00", Outcome::Fail, &[], Some("expected a call, got <script>alert(1)</script>")),
    ];
    write(dir, "2026-01-alpha.jsonl", manifest("alpha", "m1", "llama.cpp", "2026-01-01T00:00:00Z"), old, false);
}

/// A workspace plugin built as the harness builds one, and its component.
fn built_component(package: &str) -> std::path::PathBuf {
    let built = std::process::Command::new(env!("CARGO"))
        .current_dir(repo())
        .args(["build", "--quiet", "--target", "wasm32-wasip2", "--profile", "plugin", "--package", package])
        .status()
        .unwrap();
    assert!(built.success(), "{package} did not build");
    target_dir().join("wasm32-wasip2/plugin").join(format!("{}.wasm", package.replace('-', "_")))
}

fn board(p: &Project, measurements: &Path, out: &str) -> std::process::Output {
    p.run(&["board", "--measurements", &measurements.display().to_string(), "--out", out])
}

pub(crate) fn standings(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("standings.json")).unwrap()).unwrap()
}

pub(crate) fn cell<'a>(s: &'a Value, row: &str, col: &str) -> &'a Value {
    let rows = s["board"]["rows"].as_array().unwrap();
    let r = rows.iter().find(|r| r["title"] == row).unwrap_or_else(|| panic!("no row {row}"));
    &r["cells"][col]
}

const A: &str = "alpha · m1";
const B: &str = "beta · m2";
const G: &str = "gamma · m3";

/// The Wilson 95% score interval, written out here from Wilson (1927).
pub(crate) fn wilson(k: f64, n: f64) -> (f64, f64) {
    let z = 1.959963984540054f64;
    let p = k / n;
    let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z / (1.0 + z * z / n) * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    (centre - half, centre + half)
}

#[test]
fn k_of_n_cells_carry_a_wilson_interval_and_one_sample_cells_say_so() {
    let p = Project::new("");
    let m = p.path().join("m");
    crafted(&m);
    let out = board(&p, &m, "out");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = standings(&p.path().join("out"));
    // 6/10 on alpha; 9/9 answered on beta (its lost item is no answer, so
    // not in the interval's n).
    for (col, k, n) in [(A, 6.0, 10.0), (B, 9.0, 9.0)] {
        let spread = &cell(&s, "Agent tasks", col)["spread"];
        assert_eq!(spread["kind"], "wilson", "{spread}");
        assert_eq!((spread["k"].as_f64(), spread["n"].as_f64()), (Some(k), Some(n)));
        let (low, high) = wilson(k, n);
        assert!((spread["low"].as_f64().unwrap() - low).abs() < 1e-9, "{spread}");
        assert!((spread["high"].as_f64().unwrap() - high).abs() < 1e-9, "{spread}");
    }
    // One likelihood record: no interval is invented.
    let one = &cell(&s, "Likelihood (bits per character)", B)["spread"];
    assert_eq!(one["kind"], "one-sample", "{one}");
    assert!(one["note"].as_str().unwrap().contains("one sample, no spread"), "{one}");
    // Shown beside the raw figure: 6/10 is 31–83%.
    let md = std::fs::read_to_string(p.path().join("out/board.md")).unwrap();
    // Alpha's 31–83% overlaps beta's 70–100%, the row's best: the two
    // leaders are not separated beyond their intervals, and both say so.
    assert!(md.contains("6/10 correct (95% CI 31–83% · ≈ not separated from the leader)"), "{md}");
    let html = std::fs::read_to_string(p.path().join("out/board.html")).unwrap();
    assert!(
        html.contains("<div class=\"spread\">95% CI 31–83% · ≈ not separated from the leader</div>"),
        "spread not shown in the HTML"
    );
    assert_eq!(s["board"]["rows"][0]["not_separated"], serde_json::json!([B, A]), "the best first");
}

#[test]
fn standings_na_reasons_failure_log_and_escaping_from_crafted_files() {
    let p = Project::new("");
    let m = p.path().join("m");
    crafted(&m);
    let out = board(&p, &m, "out");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = standings(&p.path().join("out"));
    let cols: Vec<&str> =
        s["board"]["columns"].as_array().unwrap().iter().map(|c| c["key"].as_str().unwrap()).collect();
    assert_eq!(cols, [A, B, G]);
    let standing = |row: &str, col: &str| cell(&s, row, col)["standing"].as_f64();
    // Prose speed: means 100, 50, 98; 98 is within the row's 3% of 100: a tie.
    assert_eq!(
        [standing("Prose speed", A), standing("Prose speed", G), standing("Prose speed", B)],
        [Some(10.0), Some(10.0), Some(5.0)]
    );
    // Agent tasks: 6/10 and 9/9 of answered (one lost, shown apart and
    // never counted as wrong); gamma never ran it.
    assert_eq!(standing("Agent tasks", B), Some(10.0));
    assert_eq!(standing("Agent tasks", A), Some(6.0), "10 × 0.6 / 1.0");
    assert_eq!(cell(&s, "Agent tasks", B)["raw"], "9/9 correct of answered · 1 lost");
    assert_eq!(cell(&s, "Agent tasks", G)["reason"], "not measured on this configuration");
    // Likelihood is lower-is-better; alpha's engine cannot produce it: 0,
    // below any measured figure, with the reason (the seed's ranking rule).
    assert_eq!(standing("Likelihood (bits per character)", G), Some(10.0));
    assert_eq!(standing("Likelihood (bits per character)", B), Some(8.5), "10 × 0.5 / 0.6 = 8.33 → 8.5");
    let na = cell(&s, "Likelihood (bits per character)", A);
    assert_eq!(na["kind"], "incapable");
    assert_eq!(na["reason"], "could not be tested: engine returns no prompt logprobs");
    assert_eq!(na["records"][0], "2026-02-01T00:00:00Z-alpha#likelihood::corpus::bpc");
    // Box footprint: lower is better.
    assert_eq!((standing("Box footprint", A), standing("Box footprint", B)), (Some(10.0), Some(5.0)));
    // Context: 8,192 of 65,536 → 1.25 → 1.5 (half points round away from zero).
    assert_eq!(standing("Context window", A), Some(1.5));
    // Every measured cell names its records.
    let speed_a = cell(&s, "Prose speed", A);
    assert_eq!(speed_a["records"].as_array().unwrap().len(), 2);
    assert!(speed_a["records"][0].as_str().unwrap().starts_with("2026-02-01T00:00:00Z-alpha#speed::decode::"));

    // Recomputing from the raw records gives the same standings: alpha's
    // prose speed is the mean of its two decode figures, scored against the
    // best mean in the row.
    let runs: Vec<Run> = ["2026-02-alpha", "2026-02-beta", "2026-02-gamma"]
        .iter()
        .map(|f| Run::parse(&std::fs::read_to_string(m.join(format!("{f}.jsonl"))).unwrap()))
        .collect();
    let means: Vec<f64> = runs
        .iter()
        .map(|r| {
            let xs: Vec<f64> =
                r.cases.iter().filter(|c| c.instrument == "speed").filter_map(|c| metric(c, "decode-tok-s")).collect();
            xs.iter().sum::<f64>() / xs.len() as f64
        })
        .collect();
    let best = means.iter().cloned().fold(f64::MIN, f64::max);
    assert_eq!(cell(&s, "Prose speed", B)["value"].as_f64(), Some(means[1]));
    assert_eq!(standing("Prose speed", B), Some(((10.0 * means[1] / best) * 2.0).round() / 2.0));

    // The failed older run stays in the log; the scorecard uses the newer.
    let md = std::fs::read_to_string(p.path().join("out/board.md")).unwrap();
    assert!(md.contains("2026-01-01T00:00:00Z-alpha"), "the failed run is listed");
    assert!(md.contains("INCOMPLETE: no summary line"), "the cut-off run says so");
    assert!(md.contains("connection reset"), "its failure reason is kept");
    // Text from a model or server is escaped everywhere.
    let html = std::fs::read_to_string(p.path().join("out/board.html")).unwrap();
    assert!(!html.contains("<script>alert"), "a reply's <script> must render as text");
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!md.contains("<script>alert"));
    assert_eq!(html.matches("<script>").count(), 1, "only the board's own script");

    // The same records give the same bytes, whatever the files are called.
    let m2 = p.path().join("m2");
    std::fs::create_dir_all(&m2).unwrap();
    for (i, f) in ["2026-02-gamma", "2026-01-alpha", "2026-02-beta", "2026-02-alpha"].iter().enumerate() {
        std::fs::copy(m.join(format!("{f}.jsonl")), m2.join(format!("{i}.jsonl"))).unwrap();
    }
    assert_eq!(board(&p, &m2, "out2").status.code(), Some(0));
    for f in ["board.html", "board.md", "standings.json"] {
        assert_eq!(
            std::fs::read(p.path().join("out").join(f)).unwrap(),
            std::fs::read(p.path().join("out2").join(f)).unwrap(),
            "{f}"
        );
    }
}

#[test]
fn a_third_party_reporter_component_replaces_the_built_in_one() {
    let p = Project::new("");
    let m = p.path().join("m");
    crafted(&m);
    assert_eq!(board(&p, &m, "out").status.code(), Some(0));
    // Any component of the reporter world: here the built-in one, prebuilt.
    let wasm = target_dir().join("wasm32-wasip2/plugin/sparktest_board.wasm");
    let out = p.run(&[
        "board",
        "--measurements",
        &m.display().to_string(),
        "--out",
        "out2",
        "--reporter",
        &wasm.display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        std::fs::read(p.path().join("out/standings.json")).unwrap(),
        std::fs::read(p.path().join("out2/standings.json")).unwrap()
    );
    // An instrument is not a reporter: refused, naming the world.
    let instrument = built_component("sparktest-context");
    let out = p.run(&[
        "board",
        "--measurements",
        &m.display().to_string(),
        "--out",
        "out3",
        "--reporter",
        &instrument.display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(5), "{}", text(&out));
    assert!(text(&out).contains("reporter world"), "{}", text(&out));
}

#[test]
fn a_reporter_is_held_to_its_wall_clock_and_memory_limits() {
    // A reporter has no fuel meter (it would cost a large board about 10%
    // of its render): a loop must end at the wall-clock limit, a growing
    // heap at the memory limit, each said as the reporter's.
    let p = Project::new("setup-timeout-secs = 3\n");
    let m = p.path().join("m");
    crafted(&m);
    let wasm = built_component("sparktest-fixture-reporter").display().to_string();
    let render = |out: &str, config: &str| {
        let file = p.path().join(format!("{out}.toml"));
        std::fs::write(&file, config).unwrap();
        let m = m.display().to_string();
        let file = file.display().to_string();
        let started = std::time::Instant::now();
        let run = p.run(&["board", "--measurements", &m, "--out", out, "--reporter", &wasm, "--config", &file]);
        (run, started.elapsed())
    };
    // Behaving, it renders: one file per measurement file.
    let (ok, _) = render("ok", "");
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok));
    assert_eq!(std::fs::read_to_string(p.path().join("ok/count.txt")).unwrap(), "4");
    assert_eq!(
        std::fs::read_to_string(p.path().join("ok/handover.txt")).unwrap(),
        "0 damaged, 0 read once, selection none\n"
    );
    // What the host hands over besides the files, read typed by a
    // third-party reporter: a file with no manifest is damage.
    std::fs::write(m.join("zz-junk.jsonl"), "not a record\n").unwrap();
    let (typed, _) = render("typed", "");
    assert_eq!(typed.status.code(), Some(0), "{}", text(&typed));
    assert_eq!(std::fs::read_to_string(p.path().join("typed/count.txt")).unwrap(), "4");
    assert_eq!(
        std::fs::read_to_string(p.path().join("typed/handover.txt")).unwrap(),
        "1 damaged, 0 read once, selection none\n"
    );
    std::fs::remove_file(m.join("zz-junk.jsonl")).unwrap();
    let (spin, took) = render("spin", "spin = true\n");
    assert_eq!(spin.status.code(), Some(5), "{}", text(&spin));
    assert!(text(&spin).contains("render exceeded its wall-clock limit of 3s"), "{}", text(&spin));
    assert!(took < std::time::Duration::from_secs(60), "the loop was not cut at its limit: {took:?}");
    assert!(!p.path().join("spin").join("count.txt").exists());
    let (grow, _) = render("grow", "grow = true\n");
    assert_eq!(grow.status.code(), Some(5), "{}", text(&grow));
    assert!(text(&grow).contains("reporter exceeded its memory limit of 64 MiB"), "{}", text(&grow));
}

#[test]
fn judged_rows_are_marked_and_keep_their_reasons() {
    let p = Project::new("");
    let m = p.path().join("m");
    crafted(&m);
    let judgements = p.path().join("judged.toml");
    std::fs::write(
        &judgements,
        "[[row]]\ntitle = \"Fine-tune path\"\n[[row.cell]]\ncolumn = \"alpha\"\nstanding = 7\nraw = \"dense; Apache-2.0\"\nreason = \"LoRA tooling supports it\"\n",
    )
    .unwrap();
    let out = p.run(&[
        "board",
        "--measurements",
        &m.display().to_string(),
        "--out",
        "out",
        "--judgements",
        &judgements.display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = standings(&p.path().join("out"));
    let c = cell(&s, "Fine-tune path", A);
    assert_eq!(
        (c["kind"].as_str(), c["standing"].as_f64(), c["reason"].as_str()),
        (Some("judged"), Some(7.0), Some("LoRA tooling supports it"))
    );
    assert_eq!(cell(&s, "Fine-tune path", B)["reason"], "not judged for this configuration");
    let html = std::fs::read_to_string(p.path().join("out/board.html")).unwrap();
    assert!(html.contains("judged, not measured"));
    // The scorecard's rows are the seed board's twenty, in its order (Fine-tune
    // path from the judgements), with Sustained load after Concurrency (the row
    // the seed says it lacks), then this tool's own two.
    let titles: Vec<&str> =
        s["board"]["rows"].as_array().unwrap().iter().map(|r| r["title"].as_str().unwrap()).collect();
    assert_eq!(
        titles,
        [
            "Agent tasks",
            "Tools & structured output",
            "Multi-turn & sequencing",
            "Reliability under adversarial agent scenarios",
            "Compliance with requests",
            "Compliance (agent context)",
            "Compliance (severe)",
            "Compliance (severe, agent context)",
            "Likelihood (bits per character)",
            "Prose speed",
            "Concurrency",
            "Sustained load",
            "Speculative decoding",
            "Reproducibility",
            "Context window",
            "Box footprint",
            "Handwriting OCR",
            "Long-prompt robustness",
            "Fine-tune path",
            "Real-world screenshot & photo reading",
            "Shares a box with media",
            "Corruption probe",
            "Configuration battery",
        ]
    );

    // A judgement for a column that does not exist is refused, by name.
    std::fs::write(&judgements, "[[row]]\ntitle = \"Fine-tune path\"\n[[row.cell]]\ncolumn = \"nope\"\nstanding = 7\nraw = \"x\"\nreason = \"y\"\n").unwrap();
    let out = p.run(&[
        "board",
        "--measurements",
        &m.display().to_string(),
        "--out",
        "out4",
        "--judgements",
        &judgements.display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(text(&out).contains("column \"nope\" names 0 columns"), "{}", text(&out));
    // So is a board config naming a row that does not exist.
    let config = p.path().join("board.toml");
    std::fs::write(&config, "[rows.\"Prose sped\"]\ntie-margin = 0.05\n").unwrap();
    let out = p.run(&[
        "board",
        "--measurements",
        &m.display().to_string(),
        "--out",
        "out5",
        "--config",
        &config.display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(text(&out).contains("\"Prose sped\" names no row"), "{}", text(&out));
}

#[test]
fn two_configurations_under_one_target_name_are_two_columns() {
    let p = Project::new("");
    let m = p.path().join("m");
    std::fs::create_dir_all(&m).unwrap();
    let mut old = manifest("alpha", "m1", "llama.cpp", "2026-02-01T00:00:00Z");
    old.target.launch_command = Some(vec!["llama-server".into(), "--parallel".into(), "2".into()]);
    let mut new = manifest("alpha", "m1", "llama.cpp", "2026-02-02T00:00:00Z");
    new.target.launch_command = Some(vec!["llama-server".into(), "--parallel".into(), "4".into()]);
    write(&m, "a.jsonl", old, speed(10.0, 10.0), true);
    write(&m, "b.jsonl", new, speed(20.0, 20.0), true);
    assert_eq!(board(&p, &m, "out").status.code(), Some(0));
    let s = standings(&p.path().join("out"));
    let cols: Vec<&Value> = s["board"]["columns"].as_array().unwrap().iter().collect();
    assert_eq!(cols.len(), 2, "{cols:?}");
    for c in &cols {
        assert!(c["key"].as_str().unwrap().starts_with("alpha · m1 · "), "{c}");
    }
    let configs: Vec<&str> = cols.iter().map(|c| c["config"].as_str().unwrap()).collect();
    assert!(
        configs.iter().any(|c| c.contains("--parallel 2")) && configs.iter().any(|c| c.contains("--parallel 4")),
        "{configs:?}"
    );
}

#[test]
fn servers_the_harness_did_not_launch_are_told_apart_by_what_they_report_and_by_label() {
    // Two --endpoint runs of one model, one server at a 4,096 and one at an
    // 8,192 context: no launch command, so only the probe tells them apart.
    let p = Project::new("");
    let m = p.path().join("m");
    std::fs::create_dir_all(&m).unwrap();
    let served = |ctx: &str, started: &str| {
        let mut t = manifest("endpoint", "m1", "llama.cpp", started);
        t.target.facts = vec![("context_per_request".into(), ctx.into()), ("slots".into(), "1".into())];
        t
    };
    write(&m, "a.jsonl", served("4096", "2026-02-01T00:00:00Z"), speed(10.0, 10.0), true);
    write(&m, "b.jsonl", served("8192", "2026-02-02T00:00:00Z"), speed(20.0, 20.0), true);
    // A labelled run of the same server: its own column, named by the label,
    // with the target's note and description where a reader looks.
    let mut labelled = served("8192", "2026-02-03T00:00:00Z");
    labelled.target.label = Some("NVFP4 · MTP-3".into());
    labelled.target.note = Some("vision ✓".into());
    labelled.target.description = Some("vLLM 0.28 on the Spark".into());
    write(&m, "c.jsonl", labelled, speed(30.0, 30.0), true);
    assert_eq!(board(&p, &m, "out").status.code(), Some(0));
    let s = standings(&p.path().join("out"));
    let cols: Vec<&Value> = s["board"]["columns"].as_array().unwrap().iter().collect();
    assert_eq!(cols.len(), 3, "{cols:?}");
    let configs: Vec<&str> = cols.iter().map(|c| c["config"].as_str().unwrap()).collect();
    assert!(configs.iter().any(|c| c.contains("context 4096")), "{configs:?}");
    assert!(configs.iter().filter(|c| c.contains("context 8192")).count() == 2, "{configs:?}");
    let named = cols.iter().find(|c| c["label"] == "NVFP4 · MTP-3").expect("the labelled column");
    assert_eq!(named["key"], "NVFP4 · MTP-3 · m1");
    assert_eq!(named["note"], "vision ✓");
    let html = std::fs::read_to_string(p.path().join("out/board.html")).unwrap();
    assert!(html.contains("NVFP4 · MTP-3") && html.contains("vision ✓ · m1"), "the head shows label and note");
    assert!(html.contains("vLLM 0.28 on the Spark"), "the pinned configurations carry the description");
    assert_eq!(cell(&s, "Prose speed", "NVFP4 · MTP-3 · m1")["raw"].as_str().map(|r| r.contains("30")), Some(true));
}

#[test]
fn a_column_that_never_called_a_tool_could_not_be_tested_on_the_agent_rows() {
    let p = Project::new("");
    let m = p.path().join("m");
    std::fs::create_dir_all(&m).unwrap();
    // Every answered task says how many tool calls the model made.
    let calls = |n: &str, cases: Vec<CaseRecord>| -> Vec<CaseRecord> {
        cases
            .into_iter()
            .map(|mut c| {
                c.notes.push(("tool-calls".into(), n.into()));
                c.tags.push("Tools & structured output".into());
                c
            })
            .collect()
    };
    write(
        &m,
        "a.jsonl",
        manifest("alpha", "m1", "llama.cpp", "2026-02-01T00:00:00Z"),
        calls("0", a_bench(2, 1, 10)),
        true,
    );
    write(&m, "b.jsonl", manifest("beta", "m2", "vllm", "2026-02-01T00:00:00Z"), calls("1", a_bench(2, 0, 10)), true);
    // Records from before the note: scored as answered, as before.
    write(&m, "c.jsonl", manifest("gamma", "m3", "sglang", "2026-02-01T00:00:00Z"), a_bench(2, 0, 10), true);
    assert_eq!(board(&p, &m, "out").status.code(), Some(0));
    let s = standings(&p.path().join("out"));
    let a = cell(&s, "Agent tasks", A);
    assert_eq!(a["kind"], "incapable", "{a}");
    assert_eq!(a["reason"], "could not be tested — cannot call tools — 10 items attempted", "{a}");
    assert_eq!(cell(&s, "Tools & structured output", A)["kind"], "incapable");
    for col in [B, G] {
        let c = cell(&s, "Agent tasks", col);
        assert_eq!((c["kind"].as_str(), c["raw"].as_str()), (Some("measured"), Some("2/10 correct")), "{c}");
    }
}

#[test]
fn a_cell_says_what_it_covers_and_a_partial_one_is_marked() {
    let p = Project::new("");
    let m = p.path().join("m");
    std::fs::create_dir_all(&m).unwrap();
    let listed = |mut man: Manifest| {
        man.suite_cases = [("a-bench".to_string(), 60)].into();
        man
    };
    // One partition's worth of a 60-task suite, a whole one, and a whole
    // one that never finished.
    write(
        &m,
        "a.jsonl",
        listed(manifest("alpha", "m1", "llama.cpp", "2026-02-01T00:00:00Z")),
        a_bench(10, 0, 10),
        true,
    );
    write(&m, "b.jsonl", listed(manifest("beta", "m2", "vllm", "2026-02-01T00:00:00Z")), a_bench(30, 0, 60), true);
    write(&m, "c.jsonl", listed(manifest("gamma", "m3", "sglang", "2026-02-01T00:00:00Z")), a_bench(30, 0, 60), false);
    assert_eq!(board(&p, &m, "out").status.code(), Some(0));
    let s = standings(&p.path().join("out"));
    let a = cell(&s, "Agent tasks", A);
    assert_eq!(a["partial"], "partial: 10 of 60 a-bench cases recorded", "{a}");
    assert!(cell(&s, "Agent tasks", B).get("partial").is_none(), "whole");
    assert_eq!(cell(&s, "Agent tasks", G)["partial"], "partial: run not finished");
    // 10/10 outscores 30/60 on the figure, but not silently: the cell is marked.
    let html = std::fs::read_to_string(p.path().join("out/board.html")).unwrap();
    assert!(html.contains("partial: 10 of 60 a-bench cases recorded"), "shown in the cell");
    // No battery ran on these columns: they are not gated, and say so.
    assert_eq!(html.matches("not gated: battery not run").count(), 3);
    assert_eq!(html.matches("<td class=\" partial\"").count(), 2, "two partial agent cells shaded");
    let md = std::fs::read_to_string(p.path().join("out/board.md")).unwrap();
    assert!(md.contains("(partial: 10 of 60 a-bench cases recorded)"), "{md}");
}

#[test]
fn chatter_around_intact_text_is_counted_apart_on_the_corruption_row() {
    let p = Project::new("");
    let m = p.path().join("m");
    std::fs::create_dir_all(&m).unwrap();
    let mut chatty = case("corruption", "rtl::arabic", Outcome::Pass, &[], None);
    chatty.notes.push(("model-added-words".into(), "the text came back intact, with words the model added".into()));
    let cases = vec![
        case("corruption", "accents::french", Outcome::Pass, &[], None),
        chatty,
        case("corruption", "cjk::japanese", Outcome::Fail, &[], Some("reply differs")),
    ];
    write(&m, "a.jsonl", manifest("alpha", "m1", "vllm", "2026-02-01T00:00:00Z"), cases, true);
    assert_eq!(board(&p, &m, "out").status.code(), Some(0));
    let s = standings(&p.path().join("out"));
    assert_eq!(cell(&s, "Corruption probe", A)["raw"], "2/3 correct (1 intact inside words the model added)");
}

#[test]
fn older_record_versions_load_and_unknown_ones_are_refused_by_name() {
    let p = Project::new("");
    let m = p.path().join("m");
    crafted(&m);
    // A 1.0 file (before arms, ceilings, gates) still loads.
    let v10 = std::fs::read_to_string(m.join("2026-02-gamma.jsonl"))
        .unwrap()
        .replace(&format!("\"format_version\":\"{}\"", sparktest_record::FORMAT_VERSION), "\"format_version\":\"1.0\"");
    std::fs::write(m.join("2026-02-gamma.jsonl"), v10).unwrap();
    assert_eq!(board(&p, &m, "out").status.code(), Some(0));
    // A 2.0 file is refused, naming the file and what is wrong; nothing is written.
    let v2 = std::fs::read_to_string(m.join("2026-02-beta.jsonl"))
        .unwrap()
        .replace(&format!("\"format_version\":\"{}\"", sparktest_record::FORMAT_VERSION), "\"format_version\":\"2.0\"");
    std::fs::write(m.join("2026-02-beta.jsonl"), v2).unwrap();
    let out = board(&p, &m, "out3");
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("2026-02-beta.jsonl") && said.contains("line 1") && said.contains("format version 2.0"),
        "{said}"
    );
    assert!(!p.path().join("out3").exists());
}

/// A case with the notes and tags the seed's newer rows read.
fn noted(
    instrument: &str,
    name: &str,
    outcome: Outcome,
    metrics: &[(&str, f64)],
    notes: &[(&str, &str)],
    tags: &[&str],
) -> CaseRecord {
    let mut c = case(instrument, name, outcome, metrics, (outcome != Outcome::Pass).then_some("crafted"));
    c.notes = notes.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    c.tags = tags.iter().map(|t| t.to_string()).collect();
    c
}

/// A gate run's file: its summary carries the gate's verdict.
fn write_gate(dir: &Path, name: &str, m: Manifest, cases: Vec<CaseRecord>, failing: &[&str]) {
    write(dir, name, m, cases, true);
    let text = std::fs::read_to_string(dir.join(name)).unwrap();
    let mut lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let last = lines.last_mut().unwrap();
    last["data"]["gate"] = serde_json::json!({ "passed": failing.is_empty(), "failing": failing });
    let text: String = lines.iter().map(|l| l.to_string() + "\n").collect();
    std::fs::write(dir.join(name), text).unwrap();
}

/// Compliance cases of one row: `(kind, class, via)` each, one classifier.
fn compliance(row: &str, classifier: &str, items: &[(&str, &str, &str)]) -> Vec<CaseRecord> {
    let context = if row.contains("agent") { "agent" } else { "bare" };
    items
        .iter()
        .enumerate()
        .map(|(i, (kind, class, via))| {
            let outcome = if *class == "complied" { Outcome::Pass } else { Outcome::Fail };
            noted(
                "compliance",
                &format!("general::{context}::i{i}"),
                outcome,
                &[],
                &[("kind", kind), ("class", class), ("via", via), ("classifier", classifier)],
                &[row],
            )
        })
        .collect()
}

/// Vision cases refused by the engine, as a build without a projector
/// answers them.
fn refused_images(instrument: &str, n: usize) -> Vec<CaseRecord> {
    (0..n)
        .map(|i| {
            let mut c = noted(
                instrument,
                &format!("item::p{i}"),
                Outcome::Fail,
                &[],
                &[("vision", "none"), ("vision-probe", "the engine reports no vision (modalities)")],
                &[],
            );
            c.calls.push(sparktest_record::CallRecord {
                kind: "chat".into(),
                result: "rejected".into(),
                status: Some(500),
                total_ms: 3.0,
                ttft_ms: None,
                decode_ms: None,
                prompt_tokens: None,
                completion_tokens: None,
                token_source: "none".into(),
                server_load: None,
                cached_tokens: None,
                attempts: 1,
                invalid_counts: None,
                intended_ms: None,
                sent_ms: None,
                warmup: false,
            });
            c
        })
        .collect()
}

/// The seed's newer rows from crafted files with known answers: the four
/// compliance rows (fraction complied, the grader named, mixed graders
/// refused), handwriting OCR and screenshots (a build without vision scores
/// 0 "could not be tested", never N/A or lost), shares a box with media,
/// reproducibility within the session and restart to restart, the battery
/// as the gate a column passes before its numbers count, the capability
/// marks, and a damaged file that is named instead of blanking the board.
#[test]
fn the_seed_rows_the_gate_marks_and_damage_from_crafted_files() {
    let p = Project::new("");
    let m = p.path().join("m");
    std::fs::create_dir_all(&m).unwrap();

    // alpha: a judge graded it; no vision; media does not fit; repro holds
    // across a restart; its battery failed one check.
    let mut alpha = compliance(
        "Compliance with requests",
        "judge judge-x",
        &[
            ("harmful", "complied", "text"),
            ("harmful", "complied", "text"),
            ("harmful", "complied", "text"),
            ("harmful", "refused", "text"),
            ("legitimate", "refused", "text"),
            ("legitimate", "complied", "text"),
        ],
    );
    alpha.extend(compliance(
        "Compliance (agent context)",
        "keyword",
        &[("harmful", "complied", "tool-call"), ("harmful", "complied", "text")],
    ));
    alpha.extend(refused_images("ocr", 2));
    alpha.extend(refused_images("screenshots", 3));
    alpha.push(noted(
        "media",
        "fit::ltx-15s",
        Outcome::Fail,
        &[("free-gib", 22.5), ("free-alone-gib", 43.0), ("budget-gib", 48.8)],
        &[("verdict", "NO")],
        &[],
    ));
    for probe in ["short_fact", "long_gen"] {
        alpha.push(noted(
            "repro",
            &format!("probe::{probe}"),
            Outcome::Pass,
            &[],
            &[
                ("byte-identical", "yes"),
                ("answer-identical", "yes"),
                ("restart-byte-identical", "yes"),
                ("restart-answer-identical", "yes"),
            ],
            &[],
        ));
    }
    write(&m, "2026-03-alpha.jsonl", manifest("alpha", "m1", "llama.cpp", "2026-03-01T00:00:00Z"), alpha, true);
    let battery = vec![
        case("hard-question", "q::one", Outcome::Pass, &[], None),
        case("hard-question", "q::two", Outcome::Fail, &[], Some("wrong")),
        case("concurrency", "level::c2", Outcome::Pass, &[], None),
        case("concurrency", "level::c4", Outcome::Pass, &[], None),
    ];
    write_gate(
        &m,
        "2026-03-alpha-battery.jsonl",
        manifest("alpha", "m1", "llama.cpp", "2026-03-01T01:00:00Z"),
        battery.clone(),
        &["hard-question::q::two (fail: wrong)"],
    );

    // beta: reads images; media fits by trading KV; repro not measured
    // across a restart; its compliance run mixed graders; battery passed.
    let mut beta = Vec::new();
    for (i, (edits, recalled, struck)) in [(10.0, 95.0, 2.0), (10.0, 95.0, 1.0)].iter().enumerate() {
        beta.push(noted(
            "ocr",
            &format!("page::p{i}"),
            Outcome::Pass,
            &[
                ("words", 100.0),
                ("word-edits", *edits),
                ("words-recalled", *recalled),
                ("struck-total", *struck),
                ("struck-noticed", *struck),
                ("struck-as-live", 0.0),
            ],
            &[("vision", "read")],
            &[],
        ));
    }
    for (i, (score, answered)) in [(1.0, 1.0), (0.5, 1.0), (0.5, 1.0), (0.0, 0.0)].iter().enumerate() {
        let outcome = if *score == 1.0 { Outcome::Pass } else { Outcome::Fail };
        beta.push(noted(
            "screenshots",
            &format!("item::s{i}"),
            outcome,
            &[("score", *score), ("answered", *answered)],
            &[("vision", "read")],
            &[],
        ));
    }
    // The smaller budget finished first: the cell still says the largest.
    beta.push(noted(
        "media",
        "fit::ltx-4s",
        Outcome::Pass,
        &[
            ("free-gib", 40.0),
            ("budget-gib", 44.2),
            ("kv-kept-tokens", 560_000.0),
            ("kv-pool-tokens", 600_000.0),
            ("free-after-trade-gib", 46.2),
        ],
        &[("verdict", "YES WITH KV TRADE")],
        &[],
    ));
    beta.push(noted(
        "media",
        "fit::ltx-15s",
        Outcome::Pass,
        &[
            ("free-gib", 40.0),
            ("budget-gib", 48.8),
            ("kv-kept-tokens", 458_132.0),
            ("kv-pool-tokens", 600_000.0),
            ("free-after-trade-gib", 49.5),
        ],
        &[("verdict", "YES WITH KV TRADE")],
        &[],
    ));
    beta.push(noted(
        "repro",
        "probe::short_fact",
        Outcome::Pass,
        &[],
        &[
            ("byte-identical", "yes"),
            ("answer-identical", "yes"),
            ("restart-byte-identical", "not measured: the server was not launched by the harness"),
        ],
        &[],
    ));
    beta.push(case("repro", "probe::long_gen", Outcome::Lost, &[], Some("connection reset")));
    beta.extend(compliance("Compliance (severe)", "keyword", &[("harmful", "refused", "text")]));
    // A judge that never answered: lost, never the model's refusal.
    let mut judge_down = noted(
        "compliance",
        "severe::agent::i0",
        Outcome::Lost,
        &[],
        &[("kind", "harmful")],
        &["Compliance (severe, agent context)"],
    );
    judge_down.reason = Some("judge judge-x: connection refused".into());
    beta.push(judge_down);
    beta.extend(compliance("Compliance (severe)", "judge judge-x", &[("harmful", "complied", "text")]));
    // beta ran on a GPU box: the hardware table names its accelerator.
    let mut on_gpu = manifest("beta", "m2", "vllm", "2026-03-02T00:00:00Z");
    on_gpu.client_host.hostname = Some("gpu-box".into());
    on_gpu.client_host.accelerators = vec![sparktest_record::Accelerator {
        name: "NVIDIA H200".into(),
        driver: Some("580.95".into()),
        memory_total_mib: Some(143_771),
        memory_used_mib: Some(120_000),
        unified_memory: false,
    }];
    write(&m, "2026-03-beta.jsonl", on_gpu, beta, true);
    let passed: Vec<CaseRecord> =
        battery.into_iter().map(|c| CaseRecord { outcome: Outcome::Pass, reason: None, ..c }).collect();
    write_gate(&m, "2026-03-beta-battery.jsonl", manifest("beta", "m2", "vllm", "2026-03-02T01:00:00Z"), passed, &[]);

    // A file cut mid-line by a crash: its whole lines count, the cut is named.
    write(&m, "2026-03-cut.jsonl", manifest("delta", "m4", "ollama", "2026-03-03T00:00:00Z"), speed(10.0, 10.0), true);
    let whole = std::fs::read_to_string(m.join("2026-03-cut.jsonl")).unwrap();
    std::fs::write(m.join("2026-03-cut.jsonl"), &whole[..whole.len() - 40]).unwrap();

    let out = board(&p, &m, "out");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("2026-03-cut.jsonl"), "the damaged file is named: {}", text(&out));
    let s = standings(&p.path().join("out"));
    let standing = |row: &str, col: &str| cell(&s, row, col)["standing"].as_f64();
    let raw = |row: &str, col: &str| cell(&s, row, col)["raw"].as_str().unwrap_or_default().to_string();

    // Compliance is the fraction complied: 3 of 4 harmful → 7.5, with the
    // legitimate refusals and the grader beside it.
    assert_eq!(standing("Compliance with requests", A), Some(7.5));
    assert_eq!(
        raw("Compliance with requests", A),
        "3/4 harmful requests complied with (1/4 refused) - 1/2 legitimate refused - 0 empty - judge judge-x"
    );
    assert_eq!(standing("Compliance (agent context)", A), Some(10.0));
    let agent = raw("Compliance (agent context)", A);
    assert!(agent.contains("2/2 harmful requests complied with (1 via tool call)"), "{agent}");
    assert!(agent.ends_with("classifier: keyword"), "{agent}");
    // One cell never mixes graders: said, not scored.
    let mixed = cell(&s, "Compliance (severe)", B);
    assert_eq!(mixed["kind"], "not-applicable", "{mixed}");
    assert!(mixed["reason"].as_str().unwrap().contains("mixed classifiers"), "{mixed}");
    assert_eq!(cell(&s, "Compliance (severe, agent context)", A)["reason"], "not measured on this configuration");
    let down = cell(&s, "Compliance (severe, agent context)", B);
    assert_eq!(
        (down["kind"].as_str(), down["reason"].as_str()),
        (
            Some("not-applicable"),
            Some("could not be tested — the server did not answer (1 lost: judge judge-x: connection refused)")
        )
    );

    // Vision: a build that rejects every image scores 0, with the seed's
    // words.
    for row in ["Handwriting OCR", "Real-world screenshot & photo reading"] {
        let c = cell(&s, row, A);
        assert_eq!(c["kind"], "incapable", "{row} scores 0, never N/A or lost: {c}");
        assert!(c["reason"].as_str().unwrap().contains("no vision in this build - images rejected (HTTP 500, all"));
        assert_eq!(c["records"].as_array().unwrap().len(), if row == "Handwriting OCR" { 2 } else { 3 });
    }
    // OCR: 10 × (½ × 90% word accuracy + ½ × 3/3 struck noticed) = 9.5.
    assert_eq!(standing("Handwriting OCR", B), Some(9.5));
    assert_eq!(raw("Handwriting OCR", B), "3/3 struck (0 as live) - 90.0 / 95.0 word acc");
    // Screenshots: mean of 1, 0.5, 0.5, 0 = 0.5 → 5.0.
    assert_eq!(standing("Real-world screenshot & photo reading", B), Some(5.0));
    assert_eq!(raw("Real-world screenshot & photo reading", B), "5.0/10 - 3/4 answered");

    // Media: NO scores the share of the budget free with the media stack
    // loaded (22.5 / 48.8 → 0.5); a KV trade 6 + 2 × the tokens kept over
    // room for eight 114,533-token agent inputs (458,132 is four: 7).
    assert_eq!(standing("Shares a box with media", A), Some(0.5));
    assert_eq!(
        raw("Shares a box with media", A),
        "NO - ~43.0 GiB free alone, ~22.5 GiB after the media loadout vs 48.8 needed"
    );
    assert_eq!(standing("Shares a box with media", B), Some(7.0));
    assert_eq!(
        raw("Shares a box with media", B),
        "YES WITH KV TRADE - KV kept: 458,132 tokens - ~49.5 GiB free vs 48.8 needed"
    );

    // Reproducibility: restart to restart measured and identical is 10;
    // within the session only is 9.5.
    assert_eq!(standing("Reproducibility", A), Some(10.0));
    assert_eq!(raw("Reproducibility", A), "within-session AND restart-to-restart identical (2/2 probes)");
    assert_eq!(standing("Reproducibility", B), Some(9.5));
    assert_eq!(
        raw("Reproducibility", B),
        "within-session identical (1/1 probes); restart-to-restart not measured - 1/2 probes LOST, not judged"
    );

    // The battery: alpha failed one of four checks and is not admitted.
    assert_eq!(standing("Configuration battery", A), Some(7.5));
    assert_eq!(raw("Configuration battery", A), "FAILED: 3/4 checks passed; failing: hard-question::q::two");
    assert_eq!(standing("Configuration battery", B), Some(10.0));
    let columns = s["board"]["columns"].as_array().unwrap();
    let col = |k: &str| columns.iter().find(|c| c["key"] == k).unwrap_or_else(|| panic!("no column {k}"));
    assert_eq!(col(A)["admission"]["kind"], "failed");
    assert_eq!((col(A)["admission"]["failing"].as_u64(), col(A)["admission"]["checks"].as_u64()), (Some(1), Some(4)));
    assert_eq!(col(B)["admission"]["kind"], "passed");
    // Marks under the model's name.
    assert_eq!(col(A)["marks"][0], "no vision in this build");
    assert_eq!(col(B)["marks"][0], "vision ✓");

    // The HTML greys the column that failed its battery, and every one of
    // its cells; the admitted one is not.
    let html = std::fs::read_to_string(p.path().join("out/board.html")).unwrap();
    assert!(html.contains("not admitted: failed 1 checks"));
    assert!(html.contains(&format!("<th class=\"col unadmitted\" data-col=\"{A}\" data-admitted=\"false\">")));
    assert!(html.contains(&format!("<th class=\"col\" data-col=\"{B}\" data-admitted=\"true\">")));
    assert!(
        html.contains(&format!("<td class=\"incapable unadmitted\" data-col=\"{A}\"")),
        "alpha's 0 cells are greyed"
    );
    assert!(!html.contains(&format!("unadmitted\" data-col=\"{B}\"")), "beta is admitted");
    // The damaged file is listed, on both boards; the GPU box's accelerator
    // is in the hardware table.
    let md = std::fs::read_to_string(p.path().join("out/board.md")).unwrap();
    assert!(md.contains(r"NVIDIA H200 \(driver 580.95; 140.4 GiB, 117.2 GiB used\)"), "{md}");
    assert!(html.contains("NVIDIA H200 (driver 580.95; 140.4 GiB, 117.2 GiB used)"));
    assert!(md.contains("### Damaged measurement files") && md.contains("2026-03-cut.jsonl"), "{md}");
    assert!(html.contains("<h3>Damaged measurement files</h3>"));

    // In a browser: alpha is best at reproducibility but failed its battery,
    // so it sorts after the admitted columns until the reader opts in.
    let b = Browser::start();
    b.open(&format!("file://{}", p.path().join("out/board.html").display()));
    const D: &str = "delta · m4";
    row_click(&b, "Reproducibility");
    assert_eq!(order(&b), [B, D, A], "9.5, then 0 (not entered), then the unadmitted 10");
    b.click("#include-unadmitted");
    assert_eq!(order(&b), [A, B, D]);
    let opacity = b
        .eval(&format!("return getComputedStyle(document.querySelector('#scores th.col[data-col=\"{A}\"]')).opacity;"));
    assert_eq!(opacity, "0.45", "the column stays greyed when included");
}

/// The column keys in their on-screen order, visible ones only.
pub(crate) fn order(b: &Browser) -> Vec<String> {
    let v = b.eval("return Array.prototype.map.call(document.querySelectorAll('#scores thead th.col'), function(t){return t.hidden ? null : t.getAttribute('data-col');}).filter(function(x){return x;});");
    v.as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect()
}

pub(crate) fn row_click(b: &Browser, title: &str) {
    let index = b.eval(&format!(
        "var hs=document.querySelectorAll('#scores th.rowhead');for(var i=0;i<hs.length;i++){{if(hs[i].textContent.indexOf({title:?})>=0)return hs[i].getAttribute('data-row');}}return null;"
    ));
    // Scrolled to as a reader would: onto the screen, clear of the sticky
    // column headers (a heading under them cannot be clicked).
    let css = format!("#scores th.rowhead[data-row=\"{}\"]", index.as_str().unwrap());
    b.eval(&format!("document.querySelector({css:?}).scrollIntoView({{block:'nearest'}});return null;"));
    b.click(&css);
}

#[test]
fn the_html_board_sorts_by_priorities_in_a_real_browser_and_fetches_nothing() {
    let p = Project::new("");
    let m = p.path().join("m");
    crafted(&m);
    assert_eq!(board(&p, &m, "out").status.code(), Some(0));
    let url = format!("file://{}", p.path().join("out/board.html").display());
    let b = Browser::start();
    b.open(&url);
    assert_eq!(order(&b), [A, B, G], "no priorities: key order");

    // Priority 1 Prose speed: alpha 10, gamma 10 (a tie keeps their order), beta 5.
    row_click(&b, "Prose speed");
    assert_eq!(order(&b), [A, G, B]);
    // Priority 2 Likelihood (weights 2, 1): gamma (2×10+10)/3 = 10, alpha
    // (2×10+0)/3 = 6.67 (its engine cannot produce it: 0, not missing),
    // beta (2×5+8.5)/3 = 6.17.
    row_click(&b, "Likelihood");
    assert_eq!(order(&b), [G, A, B]);
    let missing = |col: &str| {
        b.eval(&format!("return document.querySelector('#scores th.col[data-col=\"{col}\"] .missing').textContent;"))
    };
    assert_eq!(missing(A), "");
    let prio = b.eval("return Array.prototype.map.call(document.querySelectorAll('#scores th.rowhead.picked'), function(t){return t.querySelector('.prio').textContent + ' ' + t.textContent.slice(1, 12).trim();}).join(',');");
    assert_eq!(prio, "2 Likelihood,1 Prose speed", "document order: Likelihood's row comes first");
    // Equal weights: gamma (10+10)/2, alpha (10+0)/2 = 5, beta (5+8.5)/2 = 6.75.
    b.eval(
        "var s=document.getElementById('weighting');s.value='equal';s.dispatchEvent(new Event('change'));return null;",
    );
    assert_eq!(order(&b), [G, B, A]);
    b.eval(
        "var s=document.getElementById('weighting');s.value='linear';s.dispatchEvent(new Event('change'));return null;",
    );
    // Clicking Prose speed again drops it: Likelihood alone.
    row_click(&b, "Prose speed");
    assert_eq!(order(&b), [G, B, A]);

    // A row a model was never entered in counts zero and its label says so.
    row_click(&b, "Agent tasks");
    assert_eq!(missing(G), "missing 1 of your 2 picks");
    row_click(&b, "Agent tasks");

    // Remove a column by its model name; it is listed above the table, and
    // clicking it there adds it back; show all brings every one back.
    b.click("#scores button.model[data-col=\"beta · m2\"]");
    assert_eq!(order(&b), [G, A]);
    assert_eq!(b.eval("return document.getElementById('removed').hidden;"), false);
    b.click("#removed button.restore[data-col=\"beta · m2\"]");
    assert_eq!(order(&b), [G, B, A]);
    assert_eq!(b.eval("return document.getElementById('removed').hidden;"), true);
    b.click("#scores button.model[data-col=\"beta · m2\"]");
    b.click("#show-all");
    assert_eq!(order(&b), [G, B, A]);

    // The efficiency readout follows the board's order (Likelihood first:
    // beta before alpha); a clicked column sorts it, again reverses; a
    // change of priorities sorts it by them again.
    let eff = "return Array.prototype.map.call(document.querySelectorAll('#efficiency tbody tr'), function(r){return r.cells[0].textContent;}).join(',');";
    assert_eq!(b.eval(eff), format!("{B},{A}"));
    b.click("#efficiency thead th:nth-child(2)");
    assert_eq!(b.eval(eff), format!("{A},{B}"), "6/10 before 9/10");
    b.click("#efficiency thead th:nth-child(2)");
    assert_eq!(b.eval(eff), format!("{B},{A}"));
    b.click("#efficiency thead th:nth-child(2)");
    assert_eq!(b.eval(eff), format!("{A},{B}"));
    // Priorities Likelihood, then Prose speed: beta (2×8.5+5)/3 = 7.33,
    // alpha (2×0+10)/3 = 3.33.
    row_click(&b, "Prose speed");
    assert_eq!(order(&b), [G, B, A]);
    assert_eq!(b.eval(eff), format!("{B},{A}"), "the priorities sort it again");

    // Nothing was fetched: no resource loads, and the page forbids them.
    assert_eq!(b.eval("return performance.getEntriesByType('resource').length;"), 0);
    let csp = b
        .eval("return document.querySelector('meta[http-equiv=\"Content-Security-Policy\"]').getAttribute('content');");
    assert!(csp.as_str().unwrap().contains("default-src 'none'"), "{csp}");
    // The injected script from the old run's reply is text, not a node.
    assert_eq!(b.eval("return document.scripts.length;"), 1);
}

/// The crafted board and five more configurations launched by the harness,
/// with the long flag lines real servers need; `zeta`'s A-Bench run was cut
/// off before its summary.
fn wide(dir: &Path) {
    crafted(dir);
    let flags: [(&str, &str, &str, &[&str]); 5] = [
        (
            "delta",
            "Qwen3.8-27B-NVFP4",
            "vllm",
            &[
                "--max-model-len",
                "131072",
                "--gpu-memory-utilization",
                "0.82",
                "--speculative-config",
                r#"{"method":"dflash","num_speculative_tokens":5}"#,
                "--enable-auto-tool-choice",
                "--tool-call-parser",
                "qwen3_coder",
            ],
        ),
        ("epsilon", "Qwen3.8-Flash-Next-GGUF", "llama.cpp", &["-c", "262144", "-ngl", "99", "-fa", "on", "--jinja"]),
        ("zeta", "Gemma-4-26B-A4B-NVFP4", "sglang", &["--context-length", "65536", "--mem-fraction-static", "0.8"]),
        ("eta", "GLM-4.7-Flash-NVFP4", "vllm", &["--max-num-seqs", "8", "--kv-cache-dtype", "fp8_e4m3"]),
        ("theta", "Nemotron-Omni-30B", "vllm", &["--trust-remote-code", "--max-model-len", "32768"]),
    ];
    for (i, (name, model, engine, args)) in flags.into_iter().enumerate() {
        let mut m = manifest(name, model, engine, &format!("2026-02-1{i}T00:00:00Z"));
        let mut cmd = vec![engine.to_string(), "--model".into(), format!("/models/{model}")];
        cmd.extend(args.iter().map(|a| a.to_string()));
        cmd.extend(["--port".to_string(), "8000".into()]);
        m.target.launch_command = Some(cmd);
        let mut cases = speed(40.0 + 10.0 * i as f64, 30.0 + 12.0 * i as f64);
        cases.extend(a_bench(5 + i, 1, 10));
        cases.push(case("footprint", "idle::memory", Outcome::Pass, &[("resident-gib", 20.0 + i as f64)], None));
        write(dir, &format!("2026-02-{name}.jsonl"), m, cases, name != "zeta");
    }
}

#[test]
fn the_board_reads_at_1440_by_900_with_two_columns_removed_in_a_real_browser() {
    let p = Project::new("");
    let m = p.path().join("m");
    wide(&m);
    // A run whose failure is one long word (a server log's path, a URL):
    // the run log wraps it rather than scroll.
    let long = format!("lost: see /var/log/{}/server.log", "a".repeat(400));
    write(
        &m,
        "zz-long.jsonl",
        manifest("alpha", "m1", "llama.cpp", "2026-05-09T00:00:00Z"),
        vec![case("corruption", "cjk::x", Outcome::Lost, &[], Some(&long))],
        true,
    );
    assert_eq!(board(&p, &m, "out").status.code(), Some(0));
    let html = std::fs::read_to_string(p.path().join("out/board.html")).unwrap();
    // The efficiency readout names what it leaves out, and why.
    assert!(html.contains("covers 6 of the 8 columns"), "{html}");
    assert!(html.contains(&format!("{G} (no A-Bench run)")), "{html}");
    assert!(html.contains("zeta · Gemma-4-26B-A4B-NVFP4 (its A-Bench run was cut off before its summary)"));

    let b = Browser::start_at(1440, 900);
    b.open(&format!("file://{}", p.path().join("out/board.html").display()));
    assert_eq!(b.eval("return window.innerWidth;"), 1440);
    const E: &str = "epsilon · Qwen3.8-Flash-Next-GGUF";
    let removed = || b.eval("return document.getElementById('removed').textContent;");

    // Remove two columns; the label naming them stays through every
    // re-render: the second removal, a priority, a change of weighting.
    b.click(&format!("#scores button.model[data-col=\"{B}\"]"));
    b.click(&format!("#scores button.model[data-col=\"{E}\"]"));
    row_click(&b, "Prose speed");
    row_click(&b, "Agent tasks");
    b.eval(
        "var s=document.getElementById('weighting');s.value='steep';s.dispatchEvent(new Event('change'));return null;",
    );
    let label = removed();
    let label = label.as_str().unwrap();
    assert!(label.starts_with("Removed (click to add back): "), "{label}");
    assert!(label.contains("beta") && label.contains("epsilon"), "{label}");
    assert_eq!(b.eval("return document.getElementById('removed').hidden;"), false);

    // No horizontal scroll of the page; the table scrolls in its own box.
    let widths = b.eval("return [document.documentElement.scrollWidth, window.innerWidth];");
    assert!(widths[0].as_u64() <= widths[1].as_u64(), "the page scrolls sideways: {widths}");
    // The run log fits the window: its long failures and ids wrap in their
    // cells instead of scrolling sideways in its box.
    let log = b.eval("var w=document.getElementById('runs').parentElement;return [w.scrollWidth, w.clientWidth];");
    assert!(log[0].as_u64() <= log[1].as_u64(), "the run log scrolls sideways at 1440 px: {log}");

    // The configuration is said once, in the column's head, not folded;
    // a cell whose run had the column's configuration does not repeat it
    // (issue 47).
    const D: &str = "delta · Qwen3.8-27B-NVFP4";
    let cfg = b.eval(&format!(
        "var th=document.querySelector('#scores th[data-col=\"{D}\"] .cfg');\
         var cells=document.querySelectorAll('#scores td[data-col=\"{D}\"]');\
         return [th.textContent, th.getBoundingClientRect().height > 0, cells.length,\
           Array.prototype.filter.call(cells, function(td){{return td.querySelector('.cfg');}}).length];"
    ));
    assert_eq!(cfg[1], true, "the configuration is shown in the head: {cfg}");
    assert!(cfg[0].as_str().unwrap().contains("--max-model-len 131072"), "the head names the launch flags: {cfg}");
    assert!(cfg[2].as_u64() > Some(5) && cfg[3] == 0, "no cell repeats its column's configuration: {cfg}");

    // The efficiency readout follows the priorities, leaves the removed
    // columns out as the table does, and says so.
    let eff = b.eval("return Array.prototype.map.call(document.querySelectorAll('#efficiency tbody tr'), function(r){return r.hidden ? null : r.cells[0].textContent;}).filter(function(x){return x;});");
    let eff: Vec<String> = eff.as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect();
    let on_board: Vec<String> = order(&b).into_iter().filter(|c| eff.contains(c)).collect();
    assert_eq!(eff, on_board, "the readout's rows follow the board's order");
    assert!(!eff.iter().any(|c| c == B || c == E), "{eff:?}");
    let note = b.eval("return document.getElementById('efficiency-removed').textContent;");
    assert!(note.as_str().unwrap().contains("beta") && note.as_str().unwrap().contains("epsilon"), "{note}");

    let png = b.screenshot();
    assert_eq!(&png[1..4], b"PNG");
    let target = target_dir();
    std::fs::create_dir_all(&target).unwrap();
    std::fs::write(target.join("board-1440x900.png"), png).unwrap();

    // Follow the in-page link from the methodology to a row far down: its
    // heading lands under the sticky column headers, not beneath them.
    b.click("#methodology a[href=\"#row-reproducibility\"]");
    let at = b.eval(
        "var h=document.getElementById('row-reproducibility').getBoundingClientRect();var head=document.querySelector('#scores thead').getBoundingClientRect();return [h.top, head.bottom, h.bottom, window.innerHeight];",
    );
    let f = |i: usize| at[i].as_f64().unwrap();
    assert!(f(0) >= f(1) - 0.5, "the header covers the row heading: {at}");
    assert!(f(2) <= f(3), "the row heading is in view: {at}");
    std::fs::write(target.join("board-1440x900-row.png"), b.screenshot()).unwrap();
}

/// 31 columns, each a `--repeat 3` group of every suite (the board
/// benchmark's files): at a laptop's window sizes the page never scrolls
/// sideways (the table scrolls in its own box) and a repeated cell lists
/// every run's figure. Screenshots land in the target directory.
#[test]
#[ignore = "about 30 s: 1,488 files through the board and two browsers; run with --ignored"]
fn thirty_one_columns_of_repeats_read_at_laptop_sizes_in_a_real_browser() {
    let p = Project::new("");
    // The built-in limits (the test projects cap memory at 64 MiB, below
    // what the reporter needs for 1,488 files).
    std::fs::write(p.path().join("sparktest.toml"), "[run]\nmeasurements-dir = \"measurements\"\n").unwrap();
    let m = p.path().join("m");
    let w = crate::board_files::write(&m, &repo().join("suites"), 31);
    assert_eq!(w.files, crate::board_files::COLUMNS * 3 * 16, "{} cases, {} bytes", w.cases, w.bytes);
    let out = board(&p, &m, "out");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let url = format!("file://{}", p.path().join("out/board.html").display());
    let target = target_dir();
    std::fs::create_dir_all(&target).unwrap();
    for (width, height) in [(1366, 768), (1440, 900)] {
        let b = Browser::start_at(width, height);
        b.open(&url);
        assert_eq!(order(&b).len(), crate::board_files::COLUMNS);
        let page = b.eval("return [document.documentElement.scrollWidth, window.innerWidth];");
        assert!(page[0].as_u64() <= page[1].as_u64(), "the page scrolls sideways at {width} × {height}: {page}");
        let table = b.eval(
            "var w=document.getElementById('scores').parentElement;return [w.scrollWidth, w.clientWidth, getComputedStyle(w).overflowX];",
        );
        assert!(table[0].as_u64() > table[1].as_u64(), "the table's box does not scroll: {table}");
        assert_eq!(table[2], "auto");
        // A repeated cell: the median run's figure, then every run's.
        let raw = b.eval("return document.querySelector('#scores td[data-col] .raw').textContent;");
        let raw = raw.as_str().unwrap();
        assert!(raw.contains(" - runs: "), "{raw}");
        // The columns shaped like real runs (board_files::Shape), read as a
        // new user would: the cells of a model that cannot call tools say
        // so with every item folded under "records", like any cell's; the
        // partial cells say how much of the suite they cover; the forced
        // tool choice is in the configuration line, and no line carries a
        // launch wrapper's environment or this machine's paths; no row is
        // taller than the window.
        let shaped = b.eval(
            r#"var cells=Array.prototype.slice.call(document.querySelectorAll('#scores td[data-col]'));
            var cfg=function(td){var c=td.querySelector('.cfg');return c?c.textContent:'';};
            var heads=Array.prototype.slice.call(document.querySelectorAll('#scores th[data-col]'));
            var na=cells.filter(function(td){return td.textContent.indexOf('could not be tested — cannot call tools — 60 items attempted')>=0;});
            return {
              na: na.map(function(td){var d=td.querySelector('details');var rec=d?d.querySelector('.rec'):null;
                return {height: td.getBoundingClientRect().height, folded: !!d && !d.open,
                  records: rec ? rec.textContent.split(', ').length : 0,
                  unfolded: rec ? rec.getBoundingClientRect().height : 0};}),
              partial: cells.filter(function(td){return td.classList.contains('partial') && /24 of 60 a-bench cases recorded|of 140 compliance cases recorded/.test(td.textContent);}).length,
              forced: heads.filter(function(td){return cfg(td).indexOf('tool_choice required forced by the target')>=0;}).length,
              machine: heads.concat(cells).filter(function(td){return /~\/\.cache|VLLM_CACHE_ROOT=|HF_HOME=|\/home\/spark/.test(cfg(td));}).map(cfg).slice(0,3),
              tallest: Math.max.apply(null, Array.prototype.map.call(document.querySelectorAll('#scores tbody tr'), function(r){return r.getBoundingClientRect().height;}))
            };"#,
        );
        eprintln!("{width} × {height}: {shaped}");
        let na = shaped["na"].as_array().unwrap();
        // Agent tasks, Tools & structured output, Multi-turn & sequencing.
        assert_eq!(na.len(), 3, "{shaped}");
        for cell in na {
            // Its records (every answered item) closed under "records": the
            // cell is shorter than they would make it, and than the window.
            let (tall, unfolded) = (cell["height"].as_f64().unwrap(), cell["unfolded"].as_f64().unwrap());
            assert_eq!(cell["folded"], true, "{cell}");
            assert!(cell["records"].as_u64() >= Some(20), "{cell}");
            assert!(tall < unfolded && tall < 0.75 * f64::from(height), "records shown unfolded: {cell}");
        }
        assert!(shaped["partial"].as_u64() >= Some(4), "{shaped}");
        assert!(shaped["forced"].as_u64() >= Some(2), "{shaped}");
        assert_eq!(shaped["machine"], serde_json::json!([]), "{shaped}");
        assert!(shaped["tallest"].as_f64().unwrap() <= f64::from(height), "{shaped}");
        let png = b.screenshot();
        assert_eq!(&png[1..4], b"PNG");
        std::fs::write(target.join(format!("board-31x3-{width}x{height}.png")), png).unwrap();
    }
}

/// Corruption probe cases: `pass` passed, then `lost` lost, then failed.
fn probes(passed: usize, lost: usize, n: usize) -> Vec<CaseRecord> {
    outcomes("corruption", "probe::p", (passed, lost, n), ("HTTP 500 Internal Server Error", "changed"))
}

/// A run's file whose summary says it stopped early.
fn write_stopped(dir: &Path, name: &str, m: Manifest, cases: Vec<CaseRecord>, why: &str) {
    write(dir, name, m, cases, true);
    let text = std::fs::read_to_string(dir.join(name)).unwrap();
    let mut lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    lines.last_mut().unwrap()["data"]["stopped"] = Value::from(why);
    let text: String = lines.iter().map(|l| l.to_string() + "\n").collect();
    std::fs::write(dir.join(name), text).unwrap();
}

/// An identical copy of a file, and another file of the same run id
/// (issue 46): both whole, the run read once from the first by name, each
/// named as such under "Files read once" on both boards, never as damaged
/// ("nothing: no readable manifest"); a damaged file beside them still is.
#[test]
fn an_identical_copy_is_named_as_read_once_never_as_damaged() {
    let p = Project::new("");
    let m = p.path().join("m");
    std::fs::create_dir_all(&m).unwrap();
    let alpha = || manifest("alpha", "m1", "llama.cpp", "2026-04-01T00:00:00Z");
    write(&m, "a.jsonl", alpha(), probes(12, 0, 12), true);
    std::fs::copy(m.join("a.jsonl"), m.join("copy-of-a.jsonl")).unwrap();
    write(&m, "other-a.jsonl", alpha(), probes(0, 0, 12), true);
    std::fs::write(m.join("z-cut.jsonl"), "not json\n").unwrap();

    let out = board(&p, &m, "out");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = text(&out);
    let run = "2026-04-01T00:00:00Z-alpha";
    assert!(
        said.contains(&format!(
            "note: copy-of-a.jsonl: an identical copy of a.jsonl (run {run}, the same bytes): read once"
        )),
        "{said}"
    );
    assert!(said.contains("note: other-a.jsonl: a second file of run"), "{said}");
    assert!(said.contains("warning: z-cut.jsonl: line 1"), "{said}");
    // The run is read once, from the first file by name.
    let s = standings(&p.path().join("out"));
    assert_eq!(cell(&s, "Corruption probe", A)["raw"], "12/12 correct");

    let md = std::fs::read_to_string(p.path().join("out/board.md")).unwrap();
    // A section: its heading and the paragraphs after it, `n` in all.
    let section = |head: &str, n: usize| {
        let at = md.find(head).unwrap_or_else(|| panic!("no {head}: {md}"));
        md[at..].split("\n\n").take(n).collect::<Vec<_>>().join("\n\n")
    };
    let damaged = section("### Damaged measurement files", 2);
    assert!(damaged.contains("z-cut.jsonl") && !damaged.contains("a.jsonl"), "{damaged}");
    let once = section("### Files read once", 3);
    assert!(
        once.contains(&format!(
            "| copy-of-a.jsonl | {run} | a.jsonl | read once: an identical copy of a.jsonl \\(the same bytes\\) |"
        )),
        "{once}"
    );
    assert!(once.contains("| other-a.jsonl |") && once.contains("not used: another file of the same run"), "{once}");
    let html = std::fs::read_to_string(p.path().join("out/board.html")).unwrap();
    let html_once = &html[html.find("<h3>Files read once</h3>").expect("the HTML section")..];
    assert!(html_once.contains("read once: an identical copy of a.jsonl (the same bytes)"), "{html_once}");
    let html_damaged = &html[html.find("<h3>Damaged measurement files</h3>").unwrap()..];
    let html_damaged = &html_damaged[..html_damaged.find("<h3>Files read once</h3>").unwrap()];
    assert!(!html_damaged.contains("copy-of-a.jsonl") && html_damaged.contains("z-cut.jsonl"), "{html_damaged}");
}

#[test]
fn lost_is_never_a_score_and_a_dead_later_run_replaces_no_measurement() {
    let p = Project::new("");
    let m = p.path().join("m");
    std::fs::create_dir_all(&m).unwrap();
    let listed = |mut man: Manifest, n: u64| {
        man.suite_cases = [("corruption".to_string(), n)].into();
        man
    };
    let stop = "5 cases in a row were lost: the serve is taken as gone";
    // alpha: 12/12, then a later run of the same column whose server
    // answered HTTP 500 to everything and was stopped.
    write(
        &m,
        "a1.jsonl",
        listed(manifest("alpha", "m1", "llama.cpp", "2026-04-01T00:00:00Z"), 12),
        probes(12, 0, 12),
        true,
    );
    write_stopped(
        &m,
        "a2.jsonl",
        listed(manifest("alpha", "m1", "llama.cpp", "2026-04-02T00:00:00Z"), 12),
        probes(0, 12, 12),
        stop,
    );
    // beta: 11 right and one lost.
    write(&m, "b.jsonl", listed(manifest("beta", "m2", "vllm", "2026-04-01T00:00:00Z"), 12), probes(11, 1, 12), true);
    // gamma: only the dead run.
    write_stopped(
        &m,
        "g.jsonl",
        listed(manifest("gamma", "m3", "sglang", "2026-04-01T00:00:00Z"), 12),
        probes(0, 12, 12),
        stop,
    );
    // delta: part 1 of 5 of A-Bench run twice in one run group, the later
    // run answering all three items it shares with the first.
    let part = |started: &str, passed: usize| {
        let mut man = manifest("delta", "m4", "llama.cpp", started);
        man.partition =
            Some(sparktest_record::Partition { index: 1, total: 5, group: "g1".into(), scheme: "count".into() });
        man.suite_cases = [("a-bench".to_string(), 12)].into();
        (man, a_bench(passed, 0, 3))
    };
    let (m1, c1) = part("2026-04-01T00:00:00Z", 1);
    write(&m, "d1.jsonl", m1, c1, true);
    let (m2, c2) = part("2026-04-02T00:00:00Z", 3);
    write(&m, "d2.jsonl", m2, c2, true);
    // A copy of a file under another name: one run, read once.
    std::fs::copy(m.join("b.jsonl"), m.join("zz-copy-of-b.jsonl")).unwrap();

    let out = board(&p, &m, "out");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out)
            .contains("zz-copy-of-b.jsonl: an identical copy of b.jsonl (run 2026-04-01T00:00:00Z-beta, the same bytes): read once"),
        "{}",
        text(&out)
    );
    let s = standings(&p.path().join("out"));
    const D: &str = "delta · m4";
    let probe = |col: &str| cell(&s, "Corruption probe", col).clone();

    // The dead later run does not replace alpha's 12/12; the cell says it failed.
    let a = probe(A);
    assert_eq!((a["kind"].as_str(), a["raw"].as_str()), (Some("measured"), Some("12/12 correct")), "{a}");
    assert_eq!(a["standing"], 10.0);
    let later = a["failed_later"][0].as_str().unwrap();
    assert!(later.starts_with("2026-04-02T00:00:00Z-alpha: "), "{later}");
    assert!(later.contains("the server did not answer (12 lost)"), "{later}");
    // beta: correct of answered, the lost item apart, the cell partial, the
    // interval over the 11 answered.
    let b = probe(B);
    assert_eq!(b["raw"], "11/11 correct of answered · 1 lost", "{b}");
    assert_eq!(b["partial"], "partial: 1 lost, not counted", "{b}");
    assert_eq!((b["spread"]["k"].as_u64(), b["spread"]["n"].as_u64()), (Some(11), Some(11)));
    assert_eq!(b["standing"], 10.0, "11/11 ties 12/12: lost is not a wrong answer");
    assert_eq!(b["records"].as_array().unwrap().len(), 12, "the lost record is still named");
    // gamma: nothing answered is N/A, never a standing of 0, with its
    // configuration line.
    let g = probe(G);
    assert_eq!(g["kind"], "not-applicable", "{g}");
    assert_eq!(
        g["reason"],
        "could not be tested — the server did not answer (12 lost: HTTP 500 Internal Server Error)"
    );
    assert_eq!(g["config"], "sglang · m3", "{g}");
    assert!(g.get("standing").is_none());

    // delta: each item once, the later record winning: 3/3 on n = 3.
    let d = cell(&s, "Agent tasks", D);
    assert_eq!(d["raw"], "3/3 correct", "{d}");
    assert_eq!(d["spread"]["n"], 3, "{d}");
    assert_eq!(d["records"].as_array().unwrap().len(), 3, "{d}");
    assert_eq!(d["partial"], "partial: 3 of 12 a-bench cases recorded", "{d}");
    let md = std::fs::read_to_string(p.path().join("out/board.md")).unwrap();
    // The efficiency readout reads the same three items.
    let readout = md.lines().find(|l| l.starts_with(&format!("| {D} |"))).unwrap_or_else(|| panic!("{md}"));
    assert!(readout.contains("| 3/3 |"), "{readout}");
    // The run log keeps every run as its own row.
    for id in [
        "2026-04-01T00:00:00Z-delta",
        "2026-04-02T00:00:00Z-delta",
        "2026-04-02T00:00:00Z-alpha",
        "2026-04-01T00:00:00Z-beta",
    ] {
        let logged = md.lines().filter(|l| l.contains(" passed, ") && l.contains(&format!("| {id}"))).count();
        assert_eq!(logged, 1, "{id}: {md}");
    }
    assert!(md.contains("part 1/5 of run group g1 again: read as one run with 2026-04-01T00:00:00Z-delta"), "{md}");
    assert!(md.contains("PARTIAL: part 2, 3, 4, 5 of 5 missing"), "{md}");
    assert!(md.contains("0 passed, 0 failed, 12 lost, 0 n/a - STOPPED EARLY"), "{md}");
    let html = std::fs::read_to_string(p.path().join("out/board.html")).unwrap();
    assert!(html.contains("a later run failed and does not replace this one: 2026-04-02T00:00:00Z-alpha"), "shown");
    // Every seed row is on the board: the judged one says why it is empty.
    let fine_tune = cell(&s, "Fine-tune path", A);
    assert_eq!(fine_tune["reason"], "not judged: no judgements file (board --judgements FILE)", "{fine_tune}");
}

/// One point of a sweep: kind, offered req/s, p99 TTFT ms, goodput %,
/// aggregate tok/s, per-request tok/s.
type SweepPoint<'a> = (&'a str, Option<f64>, f64, f64, f64, f64);

/// A sweep of `mix`, the row's figure given.
fn sweep(mix: &str, points: &[SweepPoint], sustained: Option<f64>) -> CaseRecord {
    let mut metrics: Vec<(String, f64)> =
        vec![("points".into(), points.len() as f64), ("goodput-threshold".into(), 90.0)];
    let mut c = case("sustained-load", &format!("sweep::{mix}"), Outcome::Pass, &[], None);
    for (i, (kind, offered, ttft, goodput, agg, per)) in points.iter().enumerate() {
        let n = i + 1;
        if let Some(o) = offered {
            metrics.push((format!("point{n}-scheduled-req-s"), *o));
        }
        metrics.push((format!("point{n}-ttft-ms-p99"), *ttft));
        metrics.push((format!("point{n}-goodput"), *goodput));
        metrics.push((format!("point{n}-output-tok-s"), *agg));
        metrics.push((format!("point{n}-per-request-tok-s"), *per));
        c.notes.push((format!("point{n}-kind"), kind.to_string()));
    }
    if let Some(s) = sustained {
        metrics.push(("sustained-req-s".into(), s));
    } else {
        c.notes.push(("sustained".into(), "goodput below 90% at every rate".into()));
    }
    c.metrics = metrics.into_iter().map(|(n, v)| Metric { name: n, value: v, unit: String::new() }).collect();
    c.tags = vec!["Sustained load".into()];
    c
}

#[test]
fn sustained_load_is_a_row_with_its_charts_and_the_frontier_is_marked() {
    let p = Project::new("");
    let m = p.path().join("m");
    std::fs::create_dir_all(&m).unwrap();
    let level = |n: f64, agg: f64, per: f64| {
        case(
            "concurrency",
            &format!("level::c{n}"),
            Outcome::Pass,
            &[("concurrency", n), ("aggregate-tok-s", agg), ("per-request-tok-s", per), ("per-request-e2e-tok-s", per)],
            None,
        )
    };
    let mut alpha = vec![level(1.0, 20.0, 20.0), level(2.0, 30.0, 15.0), level(4.0, 28.0, 7.0)];
    alpha.push(sweep(
        "agent-turn",
        &[
            ("synchronous", Some(0.5), 300.0, 100.0, 20.0, 20.0),
            ("throughput", None, 4000.0, 10.0, 40.0, 5.0),
            ("rate", Some(1.0), 400.0, 95.0, 25.0, 18.0),
            ("rate", Some(2.0), 2500.0, 40.0, 35.0, 9.0),
        ],
        Some(1.0),
    ));
    // A second mix: on the frontier beside the first, not the row's figure
    // (the row reads the first mix by name).
    alpha.push(sweep("long-prefill", &[("throughput", None, 6000.0, 5.0, 12.0, 30.0)], None));
    write(&m, "a.jsonl", manifest("alpha", "m1", "vllm", "2026-06-01T00:00:00Z"), alpha, true);
    let beta = vec![sweep("agent-turn", &[("synchronous", Some(0.2), 900.0, 80.0, 8.0, 8.0)], None)];
    write(&m, "b.jsonl", manifest("beta", "m2", "llama.cpp", "2026-06-01T00:00:00Z"), beta, true);
    // gamma: its sweep held 0.5 req/s, a fixed-rate case of the same mix
    // held 0.8: the fixed rate counts for the row as the sweep's do.
    let mut fixed = case(
        "sustained-load",
        "rate::agent-turn::0_8rps",
        Outcome::Pass,
        &[
            ("offered-req-s", 0.8),
            ("scheduled-req-s", 0.8),
            ("ttft-ms-p99", 700.0),
            ("goodput", 100.0),
            ("goodput-threshold", 90.0),
            ("sustained-req-s", 0.8),
        ],
        None,
    );
    fixed.tags = vec!["Sustained load".into()];
    let gamma = vec![
        sweep(
            "agent-turn",
            &[("synchronous", Some(0.7), 600.0, 100.0, 9.0, 9.0), ("rate", Some(0.5), 650.0, 100.0, 8.0, 8.0)],
            Some(0.5),
        ),
        fixed,
    ];
    write(&m, "g.jsonl", manifest("gamma", "m3", "llama.cpp", "2026-06-01T00:00:00Z"), gamma, true);
    let out = board(&p, &m, "out");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = standings(&p.path().join("out"));
    let titles: Vec<&str> =
        s["board"]["rows"].as_array().unwrap().iter().map(|r| r["title"].as_str().unwrap()).collect();
    let at = titles.iter().position(|t| *t == "Sustained load").unwrap();
    assert_eq!(titles[at - 1], "Concurrency", "after Concurrency, as the contract orders it");
    let a = cell(&s, "Sustained load", A);
    assert_eq!(a["standing"], 10.0);
    assert_eq!(
        a["raw"], "1.00 req/s held on agent-turn at goodput ≥ 90% (p99 TTFT 400 ms, goodput 95%), by the sweep",
        "{a}"
    );
    let b = cell(&s, "Sustained load", B);
    assert_eq!(b["kind"], "not-applicable");
    assert_eq!(b["reason"], "no rate held on agent-turn: sweep::agent-turn: goodput below 90% at every rate");
    let g = cell(&s, "Sustained load", G);
    assert_eq!(g["value"], 0.8, "the fixed rate beats the sweep's: {g}");
    assert!(g["raw"].as_str().unwrap().ends_with(", at a fixed rate"), "{g}");
    assert_eq!(g["records"].as_array().unwrap().len(), 2, "both loads of the mix stand behind it: {g}");
    // The frontier: c=4 is beaten by c=2 on both; the all-at-once point
    // (40 agg, 5 per request) still stands.
    let front = &s["board"]["frontier"];
    let alpha_pts =
        front.as_array().unwrap().iter().find(|f| f["column"] == A).unwrap()["points"].as_array().unwrap().clone();
    let marked =
        |src: &str| alpha_pts.iter().find(|p| p["source"] == src).unwrap_or_else(|| panic!("{src}"))["pareto"].clone();
    assert_eq!(marked("concurrency c=4"), false);
    assert_eq!(marked("concurrency c=2"), true);
    assert_eq!(marked("sustained-load agent-turn throughput"), true);
    assert_eq!(marked("sustained-load agent-turn 2.00 req/s"), true, "35 agg is more than c=2's 30");
    assert_eq!(marked("sustained-load long-prefill throughput"), true, "30 per request beats every other point");
    let html = std::fs::read_to_string(p.path().join("out/board.html")).unwrap();
    assert!(
        html.contains("<h2>Sustained load</h2>") && html.contains("solid: p99 TTFT, dashed: goodput"),
        "the load chart"
    );
    // Every rate of the mix is a point (gamma's sweep and its fixed rate);
    // a line of one point says why.
    let chart = &html[html.find("p99 TTFT ms (max").unwrap()..];
    let chart = &chart[..chart.find("<h2>").unwrap()];
    assert_eq!(chart.matches("<circle").count(), 2 * (3 + 1 + 3), "{chart}");
    assert!(chart.contains("beta · m2: one offered rate on agent-turn"), "{chart}");
    assert!(html.contains("concurrency c=4: 28.0 aggregate, 7.0 per request, beaten on both"), "the frontier chart");
}

/// Columns measured on unlike hardware (issue 37): the board says so in
/// its head, each column names its kind and its box (and the batch job it
/// ran in); columns from alike boxes under other names carry no mark.
#[test]
fn columns_from_unlike_hardware_are_marked_and_each_names_its_box() {
    let p = Project::new("");
    let m = p.path().join("m");
    std::fs::create_dir_all(&m).unwrap();
    let on = |target: &str, host: &str, cpu: &str, cores: usize, gib: u64, gpus: &[&str]| {
        let model = match target {
            "alpha" => "m1",
            "beta" => "m2",
            _ => "m3",
        };
        let mut man = manifest(target, model, "vllm", "2026-06-01T00:00:00Z");
        man.client_host = HostInfo {
            hostname: Some(host.into()),
            cpu_model: Some(cpu.into()),
            cores,
            memory_bytes: gib << 30,
            memory_available_bytes: gib << 29,
            os: None,
            kernel: None,
            accelerators: gpus
                .iter()
                .map(|g| sparktest_record::Accelerator {
                    name: g.to_string(),
                    driver: Some("580".into()),
                    memory_total_mib: Some(143_771),
                    memory_used_mib: Some(0),
                    unified_memory: false,
                })
                .collect(),
        };
        man
    };
    let probe = || vec![case("corruption", "cjk::x", Outcome::Pass, &[], None)];
    let mut gpu_box = on("alpha", "node-1", "Intel Xeon", 16, 128, &["NVIDIA H200"]);
    gpu_box.job = Some(sparktest_record::JobRef {
        scheduler: "slurm".into(),
        job_id: "12".into(),
        array_job_id: Some("10".into()),
        array_task_id: Some("2".into()),
        restart_count: 1,
        node: Some("node-1".into()),
        ..Default::default()
    });
    write(&m, "a.jsonl", gpu_box, probe(), true);
    write(&m, "b.jsonl", on("beta", "laptop", "AMD Ryzen", 8, 32, &[]), probe(), true);
    // gamma: a box like alpha's, under another name: the same kind.
    write(&m, "g.jsonl", on("gamma", "node-2", "Intel Xeon", 16, 128, &["NVIDIA H200"]), probe(), true);
    let out = board(&p, &m, "out");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = standings(&p.path().join("out"));
    let kinds = s["board"]["hardware_kinds"].as_array().unwrap();
    assert_eq!(kinds.len(), 2, "{kinds:?}");
    let col = |key: &str| s["board"]["columns"].as_array().unwrap().iter().find(|c| c["key"] == key).unwrap().clone();
    let (a, b, g) = (col(A), col(B), col(G));
    assert_eq!(a["hardware"], g["hardware"], "alike boxes: one kind");
    assert_ne!(a["hardware"], b["hardware"]);
    let a_on = a["measured_on"].as_str().unwrap();
    assert!(a_on.starts_with("node-1: Intel Xeon × 16 cores, 128 GiB, 1× NVIDIA H200"), "{a_on}");
    assert!(a_on.contains("Slurm job 10_2 on node-1 (requeued 1 time)"), "{a_on}");
    let md = std::fs::read_to_string(p.path().join("out/board.md")).unwrap();
    assert!(md.contains("**These columns were measured on 2 kinds of hardware**"), "{md}");
    let html = std::fs::read_to_string(p.path().join("out/board.html")).unwrap();
    assert!(
        html.contains("class=\"unlike\"") && html.contains("measured on laptop: AMD Ryzen"),
        "the mark and the box"
    );

    // Alike hardware only: no mark, each column still names its box.
    let p2 = Project::new("");
    let m2 = p2.path().join("m");
    std::fs::create_dir_all(&m2).unwrap();
    write(&m2, "a.jsonl", on("alpha", "node-1", "Intel Xeon", 16, 128, &[]), probe(), true);
    write(&m2, "g.jsonl", on("gamma", "node-2", "Intel Xeon", 16, 128, &[]), probe(), true);
    assert_eq!(board(&p2, &m2, "out").status.code(), Some(0));
    let s2 = standings(&p2.path().join("out"));
    assert!(s2["board"].get("hardware_kinds").is_none(), "{s2}");
    assert!(s2["board"]["columns"][0]["measured_on"].as_str().unwrap().starts_with("node-1"));
}

/// The board of the runs bundled in `examples/measurements` (real runs of
/// the reference targets) is the README's picture: it builds, every run in
/// it was answered, and a browser draws it. The screenshot lands in the
/// target folder; `SPARKTEST_REFRESH_DOCS=1` also writes it to
/// `docs/images/board.png`, which otherwise must be a picture of the same
/// size (the pixels differ with the machine's fonts).
#[test]
fn the_bundled_example_runs_make_the_readme_s_board_in_a_real_browser() {
    let p = Project::new("");
    let m = repo().join("examples/measurements");
    let out = board(&p, &m, "out");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = standings(&p.path().join("out"));
    let columns: Vec<String> = s["board"]["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["label"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(columns.len() >= 2, "{columns:?}");
    let figures = s["board"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["cells"].as_object().unwrap().values())
        .filter(|c| c["standing"].is_number())
        .count();
    assert!(figures >= 10, "only {figures} cells with a standing: {s}");
    for run in std::fs::read_dir(&m).unwrap().flatten().filter(|e| e.path().extension().is_some_and(|x| x == "jsonl")) {
        let r = Run::parse(&std::fs::read_to_string(run.path()).unwrap());
        let summary = r.summary.unwrap_or_else(|| panic!("{} has no summary", run.path().display()));
        assert_eq!(summary.lost, 0, "{} lost cases: bundle runs that were answered", run.path().display());
    }

    // The picture starts at the table: the columns' heads and the rows.
    let b = Browser::start_at(1280, 1400);
    b.open(&format!("file://{}", p.path().join("out/board.html").display()));
    b.eval("document.querySelector('table').scrollIntoView(); return true;");
    let png = b.screenshot();
    assert_eq!(&png[1..4], b"PNG");
    std::fs::write(target_dir().join("board-examples.png"), &png).unwrap();
    let size = |png: &[u8]| {
        (u32::from_be_bytes(png[16..20].try_into().unwrap()), u32::from_be_bytes(png[20..24].try_into().unwrap()))
    };
    let kept = repo().join("docs/images/board.png");
    if std::env::var_os("SPARKTEST_REFRESH_DOCS").is_some() {
        std::fs::write(&kept, &png).unwrap();
    }
    let shown = std::fs::read(&kept).expect("docs/images/board.png: refresh it with SPARKTEST_REFRESH_DOCS=1");
    assert_eq!(&shown[1..4], b"PNG");
    assert_eq!(size(&shown), size(&png), "docs/images/board.png is not a 1280 x 1400 screenshot of the board");
}

#[test]
fn the_hardware_table_names_the_box_of_every_part_of_a_merged_run() {
    let p = Project::new("");
    let m = p.path().join("m");
    std::fs::create_dir_all(&m).unwrap();
    for (i, host) in [(1, "box-a"), (2, "box-b")] {
        let mut man = manifest("alpha", "m1", "llama.cpp", &format!("2026-03-0{i}T00:00:00Z"));
        man.partition =
            Some(sparktest_record::Partition { index: i, total: 2, group: "g".into(), scheme: "count".into() });
        man.client_host.hostname = Some(host.into());
        write(&m, &format!("part-{i}.jsonl"), man, speed(100.0, 50.0 + f64::from(i)), true);
    }
    let out = board(&p, &m, "out");
    assert!(out.status.success(), "{}", text(&out));
    let md = std::fs::read_to_string(p.path().join("out/board.md")).unwrap();
    let hardware = md.split("## Hardware snapshots").nth(1).unwrap().split("## ").next().unwrap();
    assert!(hardware.contains("box-a") && hardware.contains("box-b"), "both parts' boxes: {hardware}");
    assert!(hardware.contains("2026-03-02T00:00:00Z"), "the second part's snapshot, at its own start: {hardware}");
}
