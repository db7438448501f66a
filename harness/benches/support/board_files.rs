//! Measurement files for a board at scale (issue 21): 31 serving
//! configurations, each with a `--repeat 3` group of every suite, shaped as
//! the instruments write them (case ids from the suites' own data files,
//! the tags, metrics and notes the board's rows read). Seeded: the same
//! call writes the same bytes. Used by the board benchmark
//! (`harness/benches/board.rs`) and the board's browser test.
//!
//! Left out: transcripts (the board copies them; that is file copying, not
//! rendering) and the raw `calls[]` detail beyond one call per case.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use sparktest_record::{
    Accelerator, ArmInfo, CallRecord, CaseRecord, ClientCeiling, FilePin, Gate, HarnessInfo, HostInfo, InstrumentInfo,
    InstrumentSummary, Line, Manifest, Metric, Outcome, Repeat, SuiteInfo, Summary, TargetInfo,
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
            }
        })
        .collect()
}

fn target(c: &Column, draft: bool) -> TargetInfo {
    let mut argv: Vec<String> = match c.engine {
        "llama.cpp" => vec!["llama-server".into(), "-m".into(), format!("/models/{}.gguf", c.model)],
        "sglang" => vec!["python3".into(), "-m".into(), "sglang.launch_server".into(), "--model".into()],
        _ => vec!["vllm".into(), "serve".into(), "--model".into()],
    };
    if c.engine != "llama.cpp" {
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
    TargetInfo {
        name: label.clone(),
        base_url: "http://127.0.0.1:8000".into(),
        model_id: c.model.clone(),
        engine: c.engine.into(),
        build: Some(c.build.into()),
        model_path: Some(format!("/models/{}", c.model)),
        model_sha256: Some(sha(&c.model)),
        launch_command: Some(argv),
        facts: vec![
            ("pin.weights".into(), format!("{} sha256:{}", c.quant, sha(&c.model))),
            ("context_per_request".into(), ctx.into()),
            ("slots".into(), "4".into()),
            ("kv_pool_tokens".into(), "524288".into()),
            ("metrics".into(), "on (214 samples)".into()),
            ("vision".into(), c.vision.to_string()),
            ("memory_pool.unified".into(), "GB10: 71200000000 of 128000000000 bytes free".into()),
        ],
        host: None,
        tool_choice: None,
        label: Some(label),
        note: c.drafter.map(|d| format!("{d} drafter")),
        description: None,
    }
}

/// A stable 64-bit digest of a string (FNV-1a), for made-up figures.
fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
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

    fn metric(mut self, name: &str, value: f64, unit: &str) -> Case {
        self.0.metrics.push(Metric { name: name.into(), value, unit: unit.into() });
        self
    }

    fn note(mut self, k: &str, v: impl Into<String>) -> Case {
        self.0.notes.push((k.into(), v.into()));
        self
    }

    fn arm(mut self, arm: &str) -> Case {
        self.0.id = format!("{}::{arm}::{}", self.0.instrument, self.0.case);
        self.0.arm = Some(arm.into());
        self
    }

    fn reason(mut self, r: &str) -> Case {
        self.0.reason = Some(r.into());
        self
    }
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
    for (cat, id) in &it.a_bench {
        let o = outcome(rng, c.skill);
        let mut case = Case::new("a-bench", &format!("{cat}::{id}"), o, rng).tag(cat.as_str()).tag("Agent tasks");
        match cat.as_str() {
            "a-tool" | "a-schema" => case = case.tag("Tools & structured output"),
            "a-seq" | "a-turn" => case = case.tag("Multi-turn & sequencing"),
            _ => {}
        }
        if o != Outcome::Lost {
            case = case
                .note("turns", (1 + rng.next() % 4).to_string())
                .note("tool-calls", (1 + rng.next() % 5).to_string());
        }
        if cat == "a-schema" {
            case = case.note("structured-output", "json_schema");
        }
        out.push(case);
    }
    out
}

fn speed_decode(instrument: &str, cat: &str, tok_s: f64, rng: &mut Rng) -> Case {
    let reps: Vec<f64> = (0..3).map(|_| rng.jitter(tok_s, 0.04)).collect();
    let mean = reps.iter().sum::<f64>() / 3.0;
    let var = reps.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / 2.0;
    let mut case = Case::new(instrument, &format!("decode::{cat}"), Outcome::Pass, rng);
    for (i, r) in reps.iter().enumerate() {
        case = case.metric(&format!("decode-tok-s-rep{}", i + 1), *r, "tok/s").metric(
            &format!("ttft-ms-rep{}", i + 1),
            rng.jitter(210.0, 0.3),
            "ms",
        );
    }
    case.metric("decode-tok-s", mean, "tok/s")
        .metric("decode-tok-s-min", reps.iter().copied().fold(f64::INFINITY, f64::min), "tok/s")
        .metric("decode-tok-s-max", reps.iter().copied().fold(f64::NEG_INFINITY, f64::max), "tok/s")
        .metric("decode-tok-s-stdev", var.sqrt(), "tok/s")
        .metric("ttft-ms", rng.jitter(210.0, 0.3), "ms")
        .metric("input-tok-s", rng.jitter(2400.0, 0.2), "tok/s")
        .metric("completion-tokens", 1536.0, "tokens")
        .note("category", cat)
}

fn speed(it: &Items, c: &Column, rng: &mut Rng, decode: bool) -> Vec<Case> {
    let mut out = Vec::new();
    if decode {
        for (i, cat) in it.speed.iter().enumerate() {
            let tok_s = c.speed * [1.05, 0.98, 1.0][i % 3];
            out.push(speed_decode("speed", cat, rng.jitter(tok_s, 0.03), rng).tag("Prose speed").tag(cat.as_str()));
        }
    }
    for id in &it.agent {
        let o = outcome(rng, c.skill + 0.1);
        let mut case = Case::new("speed", &format!("agent::{id}"), o, rng).tag("agent-workload");
        if o == Outcome::Pass {
            case = case.metric("decode-tok-s", rng.jitter(c.speed, 0.05), "tok/s").note("valid", "3 of 3");
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
            let mut case = Case::new("adversarial", name, o, rng)
                .tag("Reliability under adversarial agent scenarios")
                .note("steps", steps.to_string())
                .metric("tool-calls", steps as f64, "count");
            if o == Outcome::Fail {
                let rule = rules[(rng.next() % rules.len() as u64) as usize];
                case = case.note("rule", rule).reason(&format!("rule: {rule} at step {steps}"));
            }
            case
        })
        .collect()
}

fn compliance(set: &[(String, String, String)], label: &str, rows: [&str; 2], c: &Column, rng: &mut Rng) -> Vec<Case> {
    let mut out = Vec::new();
    for (context, row) in ["bare", "agent"].into_iter().zip(rows) {
        for (id, kind, category) in set {
            let complied = if kind == "harmful" {
                rng.chance(0.25 - 0.2 * c.skill + if context == "agent" { 0.08 } else { 0.0 })
            } else {
                !rng.chance(0.1)
            };
            let class = if rng.chance(0.01) {
                "empty"
            } else if complied {
                "complied"
            } else {
                "refused"
            };
            let mut case = Case::new("compliance", &format!("{label}::{context}::{id}"), Outcome::Pass, rng)
                .tag(row)
                .tag(format!("kind:{kind}"))
                .tag(format!("category:{category}"))
                .note("kind", kind.as_str())
                .note("category", category.as_str())
                .note("context", context)
                .note("set", format!("sets/{label}.json"))
                .note("classifier", "keyword")
                .note("class", class)
                .metric("complied", if class == "complied" { 1.0 } else { 0.0 }, "bool");
            if context == "agent" {
                case = case.note("via", if complied && rng.chance(0.3) { "tool-call" } else { "text" });
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
            Case::new("concurrency", &format!("level::c{n}"), Outcome::Pass, rng)
                .tag("Concurrency")
                .metric("concurrency", f64::from(n), "requests")
                .metric("per-request-tok-s", per, "tok/s")
                .metric("per-request-tok-s-min", per * 0.97, "tok/s")
                .metric("per-request-tok-s-max", per * 1.03, "tok/s")
                .metric("per-request-e2e-tok-s", e2e, "tok/s")
                .metric("per-request-e2e-tok-s-min", e2e * 0.97, "tok/s")
                .metric("aggregate-tok-s", per * f64::from(n), "tok/s")
                .metric("completion-tokens", 256.0 * f64::from(n), "tokens")
                .metric("wall-ms", 256_000.0 / per, "ms")
                .metric("queued-requests", 0.0, "requests")
                .metric("server-running-max", f64::from(n), "requests")
                .metric("server-running-mean", f64::from(n) * 0.96, "requests")
                .metric("server-samples", 80.0, "count")
                .note("server-confirmed", "yes")
                .note("server-load-source", format!("{} /metrics num_requests_running", c.engine))
                .note("token-source", "server-usage")
        })
        .collect()
}

fn long_prompt(it: &Items, c: &Column, rng: &mut Rng) -> Vec<Case> {
    it.needles
        .iter()
        .map(|n| {
            let chars = if n.starts_with("95") { 95_000.0 } else { 25_000.0 };
            let answered = rng.chance(c.skill);
            let case = Case::new("long-prompt", &format!("paste::{n}"), Outcome::Pass, rng)
                .tag("Long-prompt robustness")
                .metric("paste-chars", chars, "chars")
                .metric("prompt-tokens", chars / 3.9, "tokens")
                .metric("seconds", rng.jitter(chars / 4000.0, 0.2), "s")
                .metric("ttft-ms", rng.jitter(chars / 4.0, 0.2), "ms");
            if answered {
                case.note("outcome", "answered")
            } else {
                Case(CaseRecord { outcome: Outcome::Fail, reason: Some("answered wrong".into()), ..case.0 })
                    .note("outcome", "answered wrong")
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
            let case = Case::new("corruption", name, if exact { Outcome::Pass } else { Outcome::Fail }, rng)
                .tag("Corruption probe")
                .note("byte-exact", if exact { "yes" } else { "no" })
                .note("nfc-equal", if exact { "yes" } else { "no" })
                .metric("byte-exact", if exact { 1.0 } else { 0.0 }, "bool")
                .metric("nfc-equal", if exact { 1.0 } else { 0.0 }, "bool")
                .metric("intact-within-chatter", 1.0, "bool");
            if exact && rng.chance(0.1) {
                case.note("model-added-words", "the text came back intact, with words the model added around it")
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
            let yn = |b: bool| if b { "yes" } else { "no" };
            Case::new("repro", &format!("probe::{p}"), Outcome::Pass, rng)
                .tag("Reproducibility")
                .note("byte-identical", yn(bytes))
                .note("answer-identical", "yes")
                .note("restart-byte-identical", yn(bytes))
                .note("restart-answer-identical", "yes")
                .metric("repeats", 3.0, "count")
                .metric("distinct-replies", if bytes { 1.0 } else { 2.0 }, "count")
                .metric("distinct-answers", 1.0, "count")
        })
        .collect()
}

fn spec_decode(it: &Items, c: &Column, rng: &mut Rng) -> Vec<Case> {
    let mut out = Vec::new();
    let gain = if c.engine == "llama.cpp" { 1.3 } else { 1.9 };
    for arm in ["bare", "draft"] {
        for cat in &it.speed {
            let tok_s = if arm == "bare" { c.speed } else { c.speed * gain };
            let mut case = speed_decode("spec-decode", cat, rng.jitter(tok_s, 0.03), rng).arm(arm).note("arm", arm);
            if arm == "draft" {
                let drafted = 1200.0 + (rng.next() % 300) as f64;
                let accepted = drafted * rng.jitter(0.62, 0.1);
                case = case
                    .metric("drafted-tokens", drafted, "tokens")
                    .metric("accepted-tokens", accepted, "tokens")
                    .metric("draft-acceptance", accepted / drafted, "ratio");
            }
            out.push(case.tag("Speculative decoding"));
        }
        for id in &it.structured {
            out.push(
                Case::new("spec-decode", &format!("structured::{id}"), Outcome::Pass, rng)
                    .arm(arm)
                    .tag("Speculative decoding")
                    .note("arm", arm)
                    .note("valid", "every repetition"),
            );
        }
    }
    out
}

fn vision(it: &Items, c: &Column, rng: &mut Rng) -> (Vec<Case>, Vec<Case>) {
    let refuse = |case: Case| {
        let mut case = case.note("vision", "none");
        case.0.outcome = Outcome::Fail;
        case.0.reason = Some("no vision in this build: HTTP 500: image input is not supported".into());
        case.0.calls[0].status = Some(500);
        case
    };
    let ocr = it
        .pages
        .iter()
        .map(|p| {
            let case = Case::new("ocr", &format!("page::{p}"), Outcome::Pass, rng).tag("Handwriting OCR");
            if !c.vision {
                return refuse(case);
            }
            let words = 60.0 + (rng.next() % 40) as f64;
            let edits = (words * rng.jitter(0.08, 0.8)).round();
            let struck = 1.0 + (rng.next() % 2) as f64;
            let noticed = if rng.chance(c.skill) { struck } else { struck - 1.0 };
            case.note("vision", "read")
                .metric("words", words, "words")
                .metric("word-edits", edits, "edits")
                .metric("words-recalled", words - edits, "words")
                .metric("word-accuracy", 1.0 - edits / words, "ratio")
                .metric("word-recall", 1.0 - edits / words, "ratio")
                .metric("struck-total", struck, "words")
                .metric("struck-noticed", noticed, "words")
                .metric("struck-as-live", struck - noticed, "words")
                .metric("struck-indeterminate", 0.0, "words")
                .metric("struck-wrong", 0.0, "words")
        })
        .collect();
    let shots = it
        .screenshots
        .iter()
        .map(|i| {
            let case = Case::new("screenshots", &format!("item::{i}"), Outcome::Pass, rng)
                .tag("Real-world screenshot & photo reading");
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
            case.note("vision", "read")
                .note(
                    "reading",
                    if score == 1.0 {
                        "full"
                    } else if score == 0.5 {
                        "half"
                    } else {
                        "missed"
                    },
                )
                .metric("score", score, "points")
                .metric("answered", 1.0, "bool")
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
                "YES"
            } else if free >= budget {
                "MARGINAL"
            } else {
                "YES WITH KV TRADE"
            };
            let mut case = Case::new("media", &format!("fits::{id}"), Outcome::Pass, rng)
                .tag("Shares a box with media")
                .note("verdict", verdict)
                .note("budget", name)
                .note("pool", "unified memory of GB10")
                .metric("free-gib", free, "GiB")
                .metric("free-alone-gib", free + 20.5, "GiB")
                .metric("loadout-gib", 20.5, "GiB")
                .metric("budget-gib", budget, "GiB")
                .metric("margin-gib", 2.0, "GiB")
                .metric("pool-total-gib", 119.2, "GiB");
            if verdict == "YES WITH KV TRADE" {
                case = case
                    .metric("kv-kept-tokens", 262_144.0, "tokens")
                    .metric("kv-given-tokens", 262_144.0, "tokens")
                    .metric("free-after-trade-gib", budget + 0.4, "GiB")
                    .metric("kv-bytes-per-token", 49_152.0, "bytes")
                    .note("kv-bytes-source", "startup log");
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
        let mut case = one("likelihood", "corpus::bpc", "Likelihood (bits per character)", rng);
        case.0.outcome = Outcome::NotApplicable;
        case.0.reason = Some("engine returns no prompt logprobs".into());
        case
    } else {
        let bpc = rng.jitter(0.52 + 0.3 * (1.0 - c.skill), 0.002);
        one("likelihood", "corpus::bpc", "Likelihood (bits per character)", rng)
            .metric("bpc", bpc, "bits/char")
            .metric("bits", bpc * 231_904.0, "bits")
            .metric("chars", 231_904.0, "chars")
            .metric("texts", 43.0, "count")
            .metric("scored-tokens", 51_733.0, "tokens")
    };
    let mut battery: Vec<Case> = it
        .questions
        .iter()
        .map(|q| {
            let o = if rng.chance(c.skill + 0.1) { Outcome::Pass } else { Outcome::Fail };
            Case::new("hard-question", &format!("question::{q}"), o, rng).tag("battery")
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
            compliance(&it.compliance, "general", ["Compliance with requests", "Compliance (agent context)"], c, rng),
        ),
        (
            "compliance-severe",
            compliance(&it.severe, "severe", ["Compliance (severe)", "Compliance (severe, agent context)"], c, rng),
        ),
        ("concurrency", concurrency(c, &[1, 2, 4], rng)),
        (
            "context",
            vec![
                one("context", "kv::pool", "Context window", rng)
                    .metric("kv-pool-tokens", 262_144.0 * (1.0 + (fnv(&c.label) % 4) as f64), "tokens")
                    .metric("context-per-request-tokens", 65_536.0, "tokens")
                    .metric("slots", 4.0, "slots")
                    .note("engine", c.engine)
                    .note("kv-pool-source", "the engine's startup log"),
            ],
        ),
        (
            "footprint",
            vec![
                one("footprint", "idle::memory", "Box footprint", rng)
                    .metric("resident-gib", rng.jitter(c.gib, 0.01), "GiB")
                    .metric("mem-available-before-gib", 112.4, "GiB")
                    .metric("mem-available-after-gib", 112.4 - c.gib, "GiB")
                    .metric("mem-available-drop-gib", c.gib, "GiB"),
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
                let mut instruments: Vec<InstrumentInfo> = Vec::new();
                let mut suite_cases: BTreeMap<String, u64> = BTreeMap::new();
                for c in &cases {
                    *suite_cases.entry(c.instrument.clone()).or_default() += 1;
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
                    if let Some(set) = c.notes.iter().find(|(k, _)| k == "set").map(|(_, v)| v)
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
                            ArmInfo { name: "bare".into(), target: target(col, false) },
                            ArmInfo { name: "draft".into(), target: target(col, true) },
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
                    partition: None,
                    resumes: None,
                    suite_cases,
                    repeat: Some(Repeat { index: rep, total: REPEATS, group: format!("repeat-{first}") }),
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
