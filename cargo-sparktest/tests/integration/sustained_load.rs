//! The sustained-load instrument (issue 30) on real engines: open-loop
//! arrivals at a fixed offered rate and a short sweep on the launched
//! reference target (`local`, two slots), a fixed rate on `local-vllm`,
//! the bad inputs its `cases` refuses (exit 3, naming the suite file and
//! the field, before anything runs), and a rate the client could only read
//! as fast as it can (a scripted fake: no engine streams that fast on
//! demand).

use std::sync::{Arc, Mutex, MutexGuard};

use sparktest_contract::sustained_load::{self as names, kind, point, point_note};
use sparktest_contract::{Metric, Note};
use sparktest_record::{CaseRecord, Outcome};

use crate::fake_server::{FakeServer, Script};
use crate::support::*;

fn m(c: &CaseRecord, name: Metric) -> Option<f64> {
    metric(c, name.name())
}

fn at(c: &CaseRecord, n: u32, name: Metric) -> Option<f64> {
    metric(c, &point(n, name).to_string())
}

fn note_at(c: &CaseRecord, n: u32, key: Note) -> Option<String> {
    note(c, &point_note(n, key).to_string()).map(String::from)
}

/// The p50 <= p90 <= p99 of a latency, under `get`.
fn ordered(get: impl Fn(Metric) -> Option<f64>, [p50, p90, p99]: [Metric; 3]) -> bool {
    match (get(p50), get(p90), get(p99)) {
        (Some(a), Some(b), Some(c)) => a > 0.0 && a <= b && b <= c,
        _ => false,
    }
}

const TTFT: [Metric; 3] = [names::TTFT_MS_P50, names::TTFT_MS_P90, names::TTFT_MS_P99];
const TPOT: [Metric; 3] = [names::TPOT_MS_P50, names::TPOT_MS_P90, names::TPOT_MS_P99];
const ITL: [Metric; 3] = [names::ITL_MS_P50, names::ITL_MS_P90, names::ITL_MS_P99];
const E2E: [Metric; 3] = [names::E2E_MS_P50, names::E2E_MS_P90, names::E2E_MS_P99];

/// What every measured rate records, read through `get` and `say` (a
/// rate case's top level, or a sweep's point).
fn a_measured_load(
    what: &str,
    get: impl Fn(Metric) -> Option<f64>,
    say: impl Fn(Note) -> Option<String>,
    requests: f64,
    max_tokens: f64,
) {
    assert_eq!(get(names::REQUESTS), Some(requests), "{what}");
    assert_eq!(get(names::WARMUP_REQUESTS), Some(1.0), "{what}");
    assert_eq!(get(names::LOST_REQUESTS), Some(0.0), "{what}: a healthy server loses nothing");
    assert_eq!(get(names::ANSWERED_REQUESTS), Some(requests), "{what}");
    // Counted by the server, and ignore_eos makes every reply as long as asked.
    assert_eq!(say(names::TOKEN_SOURCE).as_deref(), Some("server-usage"), "{what}");
    assert_eq!(get(names::OUTPUT_TOKENS), Some(requests * max_tokens), "{what}");
    for p in [TTFT, TPOT, ITL, E2E] {
        assert!(ordered(&get, p), "{what}: {p:?}");
    }
    assert!(get(names::TTFT_MS_P99) < get(names::E2E_MS_P99), "{what}");
    let goodput = get(names::GOODPUT).unwrap();
    assert!((0.0..=100.0).contains(&goodput), "{what}: {goodput}");
    assert!(get(names::ACHIEVED_REQ_S).unwrap() > 0.0, "{what}");
    assert!(get(names::OUTPUT_TOK_S).unwrap() > 0.0 && get(names::PER_REQUEST_TOK_S).unwrap() > 0.0, "{what}");
    assert!(get(names::SEND_LAG_P99_MS).unwrap() >= 0.0, "{what}");
    assert!(say(names::SATURATION).is_some(), "{what}");
    assert!(say(names::CLIENT_BOUND).is_none(), "{what}: a 0.5 req/s schedule is well within the client");
}

#[test]
fn sustained_load_at_a_fixed_rate_and_a_short_sweep_on_the_reference_target() {
    let p = Project::new("");
    let out = p.run(&["--suite", &test_suite("sustained-load")]);
    let said = text(&out);
    assert!(matches!(out.status.code(), Some(0)), "{said}");
    let runs = p.measurements();
    let run = &runs[0];

    // A fixed offered rate: a probe, one warm-up and four measured
    // requests, each a call of the case with its intended and sent times.
    let c = run.case("sustained-load::rate::agent-turn::0_5rps");
    assert_eq!(c.outcome, Outcome::Pass, "{c:?}");
    assert_eq!(m(c, names::OFFERED_REQ_S), Some(0.5));
    a_measured_load("rate", |x| m(c, x), |k| note(c, k.name()).map(String::from), 4.0, 8.0);
    assert_eq!(note(c, names::ARRIVAL.name()), Some("poisson"));
    assert_eq!(note(c, names::SEED.name()), Some("7"));
    assert_eq!(m(c, names::TTFT_OBJECTIVE_MS), Some(5000.0));
    assert_eq!(c.calls.len(), 6, "probe, warm-up, four measured: {:?}", c.calls);
    let load: Vec<_> = c.calls.iter().filter(|call| call.intended_ms.is_some()).collect();
    assert_eq!(load.len(), 5);
    assert_eq!(load.iter().filter(|call| call.warmup).count(), 1);
    let intended: Vec<f64> = load.iter().map(|call| call.intended_ms.unwrap()).collect();
    assert!(intended.windows(2).all(|w| w[0] <= w[1]), "in schedule order: {intended:?}");
    assert!(load.iter().all(|call| call.sent_ms.unwrap() >= call.intended_ms.unwrap() - 0.01));
    // The server's own count, from llama.cpp's /slots: never more than its
    // two slots.
    let server = note(c, names::SERVER_LOAD.name()).unwrap();
    if let Some(running) = m(c, names::SERVER_RUNNING_MAX) {
        assert!(server.contains("llama.cpp") && (1.0..=2.0).contains(&running), "{server} {running}");
    } else {
        assert!(server.starts_with("n/a"), "{server}");
    }

    // The sweep: one at a time, then all at once, then a rate between.
    let s = run.case("sustained-load::sweep::agent-turn");
    assert_eq!(s.outcome, Outcome::Pass, "{s:?}");
    let points = m(s, names::POINTS).unwrap() as u32;
    assert!((2..=3).contains(&points), "{points}");
    assert_eq!(note_at(s, 1, names::KIND).as_deref(), Some(kind::SYNCHRONOUS));
    assert_eq!(note_at(s, 2, names::KIND).as_deref(), Some(kind::THROUGHPUT));
    for n in 1..=points {
        a_measured_load(&format!("point {n}"), |x| at(s, n, x), |k| note_at(s, n, k), 4.0, 8.0);
    }
    assert_eq!(at(s, 1, names::OFFERED_REQ_S), None, "the baseline offers no rate");
    let sync = m(s, names::SYNCHRONOUS_REQ_S).unwrap();
    let top = m(s, names::THROUGHPUT_REQ_S).unwrap();
    assert_eq!(Some(sync), at(s, 1, names::ACHIEVED_REQ_S));
    assert!(sync > 0.05 && top > 0.05, "{sync} {top}");
    // One at a time is one at a time at the server too; the burst fills
    // both slots.
    if let (Some(one), Some(burst)) = (at(s, 1, names::SERVER_RUNNING_MAX), at(s, 2, names::SERVER_RUNNING_MAX)) {
        assert_eq!((one, burst), (1.0, 2.0), "{s:?}");
    }
    assert_eq!(m(s, names::GOODPUT_THRESHOLD), Some(75.0));
    let why = note(s, names::SUSTAINED.name()).unwrap();
    match m(s, names::SUSTAINED_REQ_S) {
        // The figure is the third point's rate, spaced between, as its
        // schedule offered it.
        Some(rate) => {
            assert_eq!(at(s, 3, names::SCHEDULED_REQ_S), Some(rate), "{s:?}");
            assert!(at(s, 3, names::GOODPUT).unwrap() >= 75.0 && at(s, 3, names::SATURATED) == Some(0.0));
            assert!(why.contains("point 3"), "{why}");
        }
        None => assert!(why.starts_with("no offered rate held"), "{why}"),
    }
    // `diff` reads the sweep's requests back from the calls (probe first,
    // then each point's warm-up and measured requests): the run against
    // itself is the figure it recorded, resampled on both sides.
    let id = &run.manifest.run_id;
    let out = p.run(&["diff", id, id, "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = report["rows"].as_array().unwrap().iter().find(|r| r["row"] == "Sustained load").unwrap();
    let fig = row["figures"].as_array().unwrap().iter().find(|f| f["metric"] == "sustained-req-s");
    let fig = fig.unwrap_or_else(|| panic!("no sustained-req-s in {row}"));
    assert_eq!(fig["method"], "bootstrap-over-requests", "{fig}");
    assert_eq!(fig["a_mean"].as_f64(), Some(m(s, names::SUSTAINED_REQ_S).unwrap_or(0.0)), "{fig}");
    match m(s, names::SUSTAINED_REQ_S) {
        Some(_) => assert!(fig["ratio"] == 1.0 && fig["verdict"] != "beyond", "{fig}"),
        None => assert_eq!((&fig["ratio"], &fig["verdict"]), (&serde_json::Value::Null, &"undecided".into()), "{fig}"),
    }
    eprintln!(
        "sustained-load on local: rate 0.5 req/s achieved {:?}, goodput {:?}%, TTFT p50/p99 {:?}/{:?} ms; sweep synchronous {sync:.3}, throughput {top:.3}, point 3 {:?} req/s goodput {:?}%, figure {:?} ({why})",
        m(c, names::ACHIEVED_REQ_S),
        m(c, names::GOODPUT),
        m(c, names::TTFT_MS_P50),
        m(c, names::TTFT_MS_P99),
        at(s, 3, names::OFFERED_REQ_S),
        at(s, 3, names::GOODPUT),
        m(s, names::SUSTAINED_REQ_S),
    );
}

/// One vLLM test at a time (each serve holds ~5.5 GB and both cores while
/// it starts), as the engine tests keep theirs.
fn one_vllm_at_a_time() -> MutexGuard<'static, ()> {
    static VLLM: Mutex<()> = Mutex::new(());
    VLLM.lock().unwrap_or_else(|p| p.into_inner())
}

#[test]
fn sustained_load_on_vllm_reads_its_running_and_waiting_requests() {
    let _vllm = one_vllm_at_a_time();
    let p = Project::new("");
    let out = p.run(&["--suite", &test_suite("sustained-load"), "--target", "local-vllm", "sustained-load::rate::"]);
    let said = text(&out);
    assert!(matches!(out.status.code(), Some(0)), "{said}");
    let run = &p.measurements()[0];
    assert_eq!(run.manifest.target.engine, "vllm");
    let c = run.case("sustained-load::rate::agent-turn::0_5rps");
    assert_eq!(c.outcome, Outcome::Pass, "{c:?}");
    a_measured_load("vllm", |x| m(c, x), |k| note(c, k.name()).map(String::from), 4.0, 8.0);
    // vLLM's own gauges: vllm:num_requests_running and _waiting.
    let server = note(c, names::SERVER_LOAD.name()).unwrap();
    assert!(server.contains("vllm"), "{server}");
    assert!(m(c, names::SERVER_RUNNING_MAX).unwrap() >= 1.0, "{c:?}");
    assert!(m(c, names::SERVER_WAITING_MAX).is_some(), "vLLM reports its waiting requests: {c:?}");
    eprintln!(
        "sustained-load on local-vllm: 0.5 req/s achieved {:?}, goodput {:?}%, TTFT p50/p99 {:?}/{:?} ms, TPOT p50 {:?} ms, running max {:?}, waiting max {:?}",
        m(c, names::ACHIEVED_REQ_S),
        m(c, names::GOODPUT),
        m(c, names::TTFT_MS_P50),
        m(c, names::TTFT_MS_P99),
        m(c, names::TPOT_MS_P50),
        m(c, names::SERVER_RUNNING_MAX),
        m(c, names::SERVER_WAITING_MAX),
    );
}

/// A suite of the sustained-load instrument inside the workspace (only
/// workspace crates are built), with `config` as its config table.
struct TinySuite(std::path::PathBuf);

impl TinySuite {
    fn new(name: &str, config: &str) -> Self {
        Self::with(name, config, 4)
    }

    /// Its one mix asks for `max_tokens`.
    fn with(name: &str, config: &str, max_tokens: u32) -> Self {
        let dir = repo().join("target/sparktest-test-suites").join(format!("sustained-{name}-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("data")).unwrap();
        let prompts = br#"[{"user": "Say hello."}]"#;
        std::fs::write(dir.join("data/p.json"), prompts).unwrap();
        let pin = sparktest_harness::suite::sha256_hex(prompts);
        std::fs::write(
            dir.join("suite.toml"),
            format!(
                "[suite]\nname = \"{name}\"\nversion = \"1\"\n[[instrument]]\ncrate = \"sparktest-sustained-load\"\n\
                 [instrument.config]\n{config}\n\
                 [[instrument.config.mixes]]\nname = \"m\"\nprompts = \"data/p.json\"\nmax_tokens = {max_tokens}\n\
                 [files]\n\"data/p.json\" = \"{pin}\"\n"
            ),
        )
        .unwrap();
        TinySuite(dir)
    }
}

impl Drop for TinySuite {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn bad_load_settings_stop_the_run_with_exit_3_naming_the_suite_file_and_the_field() {
    let p = Project::new("");
    let ok = "objectives = { ttft = \"1 s\" }";
    for (name, config, field, words) in [
        ("zero-rate", format!("rates = [0.5, 0]\n{ok}"), "rates[1]", "above 0"),
        ("negative-rate", format!("rates = [-1]\n{ok}"), "rates[0]", "above 0"),
        ("arrival", format!("arrival = \"uniform\"\n{ok}"), "arrival", "unknown arrival process"),
        ("no-unit", "objectives = { ttft = 500 }".to_string(), "objectives.ttft", "has no unit"),
        ("no-unit-text", "objectives = { tpot = \"50\" }".to_string(), "objectives.tpot", "has no unit"),
        ("one-point", format!("sweep_points = 1\n{ok}"), "sweep_points", "at least two points"),
    ] {
        let suite = TinySuite::new(name, &config);
        // A run that would reach a server if it got that far: nothing
        // listens there.
        let out =
            p.run(&["--suite", &suite.0.display().to_string(), "--endpoint", "http://127.0.0.1:9", "--model", "m"]);
        let said = text(&out);
        assert_eq!(out.status.code(), Some(3), "{name}: {said}");
        assert!(said.contains(&format!("{}", suite.0.join("suite.toml").display())), "{name}: {said}");
        assert!(said.contains(field) && said.contains(words), "{name}: {field}, {words}: {said}");
    }
    assert!(p.measurements().is_empty(), "no file: nothing ran");
}

/// A load the client could only read as fast as it can is client-bound:
/// a fake that writes each long reply at once streams past half of the
/// client's own ceiling (measured on loopback before the run, as for the
/// speed rows), while the schedule itself was sent on time. The case is
/// N/A in the host's words and no figure of it is the server's.
#[test]
fn a_rate_read_as_fast_as_the_client_can_is_client_bound_never_the_server_s_figure() {
    let rt = crate::edges::runtime();
    // Streamed requests (the load's) get the long reply in one write; the
    // probe each case starts with, not streamed, a short whole one.
    let long = crate::edges::burst(20_000);
    let server = rt.block_on(FakeServer::respond(Arc::new(move |req: &str, _| {
        let path = req.split_whitespace().nth(1).unwrap_or("");
        if path.starts_with("/v1/models") {
            return Script::json(200, r#"{"object":"list","data":[{"id":"fake-model","object":"model"}]}"#);
        }
        if req.contains(r#""stream":true"#) {
            return long.clone();
        }
        Script::json(
            200,
            r#"{"id":"c","object":"chat.completion","model":"fake-model","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}"#,
        )
    })));
    let suite = TinySuite::with(
        "past-ceiling",
        "requests = 8\nwarmup = 0\nrates = [4]\narrival = \"constant\"\nobjectives = { ttft = \"10 s\" }",
        20_000,
    );
    let p = Project::new("");
    let out = p.run(&[
        "--suite",
        &suite.0.display().to_string(),
        "--endpoint",
        &server.url(),
        "--model",
        "fake-model",
        "::rate::",
    ]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "N/A is no failure: {said}");
    let run = &p.measurements()[0];
    let ceiling = run.manifest.client_ceiling.as_ref().expect("the ceiling is measured before the run");
    let c = run.cases.iter().find(|c| c.id.contains("::rate::")).expect("the rate case ran");
    assert_eq!(c.outcome, Outcome::NotApplicable, "{c:?}");
    let why = c.reason.as_deref().unwrap_or("");
    assert!(why.starts_with("client-bound at 4 requests/s"), "{why}");
    assert!(why.contains("above 50% of its own ceiling") && why.contains("measured before the run"), "{why}");
    for figure in [names::ACHIEVED_REQ_S, names::GOODPUT, names::TTFT_MS_P50, names::OUTPUT_TOK_S] {
        assert_eq!(m(c, figure), None, "{}: no figure of a client-bound rate is the server's: {c:?}", figure.name());
    }
    eprintln!("client-bound by the ceiling ({:.0} tok/s): {why}", ceiling.max_tok_s);
}
