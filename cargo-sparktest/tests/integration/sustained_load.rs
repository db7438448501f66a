//! The sustained-load instrument (issue 30) on real engines: open-loop
//! arrivals at a fixed offered rate and a short sweep on the launched
//! reference target (`local`, two slots), a fixed rate on `local-vllm`,
//! the bad inputs its `cases` refuses (exit 3, naming the suite file and
//! the field, before anything runs), and a rate the client could only read
//! as fast as it can (a scripted fake: no engine streams that fast on
//! demand).

use std::sync::Arc;

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
    // Baseline, burst, half the baseline's rate, then the rate between.
    assert!((2..=4).contains(&points), "{points} points: {s:?}");
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
        // The figure is a rated point's rate, as its schedule offered it.
        Some(rate) => {
            let n = (3..=points).find(|n| at(s, *n, names::SCHEDULED_REQ_S) == Some(rate)).expect("the point held");
            assert!(at(s, n, names::GOODPUT).unwrap() >= 75.0 && at(s, n, names::SATURATED) == Some(0.0));
            assert!(why.contains(&format!("point {n}")), "{why}");
        }
        None => assert!(why.starts_with("no offered rate held"), "{why}"),
    }
    // Half the baseline's rate comes first of the offered rates.
    if points >= 3 {
        let half = at(s, 3, names::OFFERED_REQ_S).unwrap();
        assert!((half - sync / 2.0).abs() <= 0.01 * sync, "{half} against {sync}");
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
    // The board's row: the highest rate any load held (the fixed rate
    // counts as the sweep's do), and its chart with a point per rate.
    let out = p.run(&["board"]);
    assert!(out.status.success(), "{}", text(&out));
    let standings = crate::board::standings(&p.path().join("board"));
    let col = standings["board"]["columns"][0]["key"].as_str().unwrap().to_string();
    let cell = crate::board::cell(&standings, "Sustained load", &col).clone();
    let held: Vec<f64> = [m(c, names::SUSTAINED_REQ_S), m(s, names::SUSTAINED_REQ_S)].into_iter().flatten().collect();
    assert!(!held.is_empty(), "the reference target holds 0.5 req/s of this turn: {c:?}");
    let best = held.iter().copied().fold(0.0, f64::max);
    assert_eq!(cell["kind"], "measured", "{cell}");
    assert_eq!(cell["value"].as_f64(), Some(best), "{cell}");
    assert!(cell["raw"].as_str().unwrap().contains("req/s held on agent-turn"), "{cell}");
    // The run's summary says the row as the board does: one computation.
    let line = format!("sparktest: row Sustained load: {}", cell["raw"].as_str().unwrap());
    assert!(said.contains(&line), "{line} in {said}");
    let html = std::fs::read_to_string(p.path().join("board/board.html")).unwrap();
    let chart = &html[html.find("p99 TTFT ms (max").expect("the load chart")..];
    let chart = &chart[..chart.find("</svg>").unwrap()];
    assert!(chart.matches("<circle").count() >= 4, "a point per rate, TTFT and goodput: {chart}");
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
        let pin = sparktest_harness::sha256_hex(prompts);
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
        // Bounds, checked against the run's limits before any case: a rate
        // whose schedule no clock holds, one past the case's limit, and
        // more requests than one load may send.
        ("tiny-rate", format!("rates = [1e-300]\n{ok}"), "mixes[0].rates[0] = 1e-300", "case-timeout-secs"),
        (
            "past-timeout",
            format!("rates = [0.001]\n{ok}"),
            "mixes[0].rates[0] = 0.001",
            "past the case's wall-clock limit",
        ),
        (
            "past-cap",
            format!("rates = [1000]\nduration_secs = 1000\n{ok}"),
            "mixes[0].rates[0] = 1000",
            "at most 10000",
        ),
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

/// A server that refuses every other request with 429 and `Retry-After: 1`
/// (no real engine does so on demand): the open loop never sends a
/// refused request again inside its schedule, so half the load is refused,
/// counted apart and against goodput, each request sent once, and the
/// server's words and Retry-After are in the record.
#[test]
fn a_refused_request_is_never_resent_and_never_a_good_one() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let rt = crate::edges::runtime();
    let streamed = Arc::new(AtomicUsize::new(0));
    let seen = streamed.clone();
    let reply = {
        use crate::fake_server::openai;
        let mut s = Script::sse().data(&openai::role());
        for w in ["Hel", "lo", " there", "."] {
            s = s.pause(std::time::Duration::from_millis(10)).data(&openai::content(w));
        }
        s.data(&openai::finish("length")).data(&openai::usage(5, 4)).done()
    };
    let server = rt.block_on(FakeServer::respond(Arc::new(move |req: &str, _| {
        let path = req.split_whitespace().nth(1).unwrap_or("");
        if path.starts_with("/v1/models") {
            return Script::json(200, r#"{"object":"list","data":[{"id":"fake-model","object":"model"}]}"#);
        }
        if req.contains(r#""stream":true"#) {
            // Every other streamed request, counted as they come.
            if seen.fetch_add(1, Ordering::SeqCst) % 2 == 1 {
                return Script::json(429, r#"{"error":{"message":"too many requests"}}"#).header("Retry-After", "1");
            }
            return reply.clone();
        }
        Script::json(
            200,
            r#"{"id":"c","object":"chat.completion","model":"fake-model","choices":[{"index":0,"message":{"role":"assistant","content":"OK"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}"#,
        )
    })));
    let suite = TinySuite::new(
        "half-refused",
        "requests = 8\nwarmup = 0\nrates = [4]\narrival = \"constant\"\nlost_budget_pct = 60\nobjectives = { ttft = \"5 s\" }",
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
    let run = &p.measurements()[0];
    let c = run.cases.iter().find(|c| c.id.contains("::rate::")).unwrap_or_else(|| panic!("{said}"));
    // Eight measured requests, each sent once: four answered, four refused.
    assert_eq!(streamed.load(Ordering::SeqCst), 8, "no request was sent twice: {said}");
    assert_eq!(m(c, names::REQUESTS), Some(8.0), "{c:?}");
    assert_eq!((m(c, names::ANSWERED_REQUESTS), m(c, names::REJECTED_REQUESTS)), (Some(4.0), Some(4.0)), "{c:?}");
    assert_eq!(m(c, names::LOST_REQUESTS), Some(0.0), "a 429 is a refusal, not a lost request: {c:?}");
    assert_eq!(m(c, names::GOODPUT), Some(50.0), "a refused request is never a good one: {c:?}");
    let load: Vec<_> = c.calls.iter().filter(|k| k.intended_ms.is_some()).collect();
    assert_eq!(load.len(), 8);
    assert!(load.iter().all(|k| k.attempts == 1), "one send each: {load:?}");
    assert_eq!(load.iter().filter(|k| k.status == Some(429)).count(), 4, "{load:?}");
    let lost = note(c, names::LOST.name()).unwrap();
    assert!(
        lost.contains("4 refused of 8") && lost.contains("HTTP 429") && lost.contains("Retry-After: 1 s"),
        "{lost}"
    );
    // Goodput per second never reads above what was achieved.
    assert!(m(c, names::GOODPUT_REQ_S).unwrap() <= m(c, names::ACHIEVED_REQ_S).unwrap() + 1e-9, "{c:?}");
    // Within a 60% budget, but the server achieved half what was offered:
    // saturated, and never the row's figure.
    assert_eq!(m(c, names::SATURATED), Some(1.0), "{c:?}");
    assert_eq!(m(c, names::SUSTAINED_REQ_S), None, "{c:?}");
    let held = note(c, names::SUSTAINED.name()).unwrap();
    assert!(held.contains("did not hold") && held.contains("saturated (goodput 50%)"), "{held}");
}
