//! The serving instruments (issue 4) on the launched reference target: what
//! each records, checked against what the engine itself reports.

use sparktest_record::Outcome;

use crate::support::*;

#[test]
fn serving_instruments_on_the_reference_target() {
    let p = Project::new("");
    let out = p.run(&["--suite", &test_suite("serving"), "--test-threads", "2"]);
    let said = text(&out);
    assert!(matches!(out.status.code(), Some(0) | Some(101)), "{said}");
    let runs = p.measurements();
    let run = &runs[0];

    // The client's own ceiling is in the manifest, far above any figure here.
    let ceiling = run.manifest.client_ceiling.as_ref().expect("client ceiling in the manifest");
    assert!(ceiling.max_tok_s > 1000.0, "{ceiling:?}");
    assert!(ceiling.itl_error_ms >= 0.0 && ceiling.itl_error_ms < ceiling.paced_itl_ms, "{ceiling:?}");

    // speed: every repetition, mean and spread, TTFT and input tok/s apart;
    // counts from the server; the client's decode rate agrees with the
    // engine's own `timings`.
    for cat in ["code", "prose"] {
        let c = run.case(&format!("speed::decode::{cat}"));
        assert_eq!(c.outcome, Outcome::Pass, "{c:?}");
        assert_eq!(c.calls.len(), 3, "warm-up + 2 repetitions: {c:?}");
        let (r1, r2) = (metric(c, "decode-tok-s-rep1").unwrap(), metric(c, "decode-tok-s-rep2").unwrap());
        let mean = metric(c, "decode-tok-s").unwrap();
        assert!((mean - (r1 + r2) / 2.0).abs() < 1e-6, "{c:?}");
        assert_eq!(metric(c, "decode-tok-s-min").unwrap(), r1.min(r2));
        assert!(metric(c, "ttft-ms").unwrap() > 0.0 && metric(c, "input-tok-s").unwrap() > 0.0);
        assert_eq!(note(c, "token-source"), Some("server-usage"), "{c:?}");
        let server = metric(c, "server-decode-tok-s").expect("llama.cpp reports its own decode time");
        assert!(mean / server > 0.5 && mean / server < 2.0, "client {mean} vs engine {server} tok/s");
        assert!(!c.notes.iter().any(|(k, _)| k == "near-client-ceiling"), "{c:?}");
    }
    // The agent workload: its speed counts only when the output validated.
    for task in ["json_schema", "code_edit", "tool_call"] {
        let c = run.case(&format!("speed::agent::{task}"));
        match c.outcome {
            Outcome::Pass => assert!(metric(c, "decode-tok-s").is_some(), "{c:?}"),
            Outcome::Fail => {
                assert!(c.reason.as_deref().unwrap().contains("did not validate"), "{c:?}");
                assert!(metric(c, "decode-tok-s").is_none(), "no speed for an invalid output: {c:?}");
            }
            _ => panic!("{c:?}"),
        }
    }
    // SmolLM2 makes no tool calls: the tool-call workload cannot count.
    assert_eq!(run.case("speed::agent::tool_call").outcome, Outcome::Fail);

    // concurrency: what the server actually ran; with --parallel 2, four
    // clients queue and the queued two are named.
    for (level, ran) in [(1, 1.0), (2, 2.0), (4, 2.0)] {
        let c = run.case(&format!("concurrency::level::c{level}"));
        assert_eq!(c.outcome, Outcome::Pass, "{c:?}");
        assert_eq!(c.calls.len(), level, "{c:?}");
        assert_eq!(metric(c, "server-running-max"), Some(ran), "{c:?}");
        assert!(c.calls.iter().all(|call| { call.server_load.as_ref().is_some_and(|l| l.running_max == ran as u32) }));
        let per = metric(c, "per-request-tok-s").unwrap();
        let agg = metric(c, "aggregate-tok-s").unwrap();
        assert!(per > 0.0 && agg > 0.0, "{c:?}");
    }
    let c4 = run.case("concurrency::level::c4");
    assert_eq!(metric(c4, "queued-requests"), Some(2.0), "{c4:?}");
    let queued = note(c4, "queued").expect("queueing flagged");
    assert!(queued.contains("at most 2 of 4") && queued.matches("request").count() == 2, "{queued}");
    assert_eq!(metric(run.case("concurrency::level::c2"), "queued-requests"), Some(0.0));

    // long-prompt: llama.cpp refuses both pastes with a 400 naming the
    // 4,096-token slot: acceptable, and recorded as such.
    for size in ["25k", "95k"] {
        let c = run.case(&format!("long-prompt::paste::{size}"));
        assert_eq!(c.outcome, Outcome::Pass, "{c:?}");
        assert_eq!(note(c, "outcome"), Some("refused-cleanly"), "{c:?}");
        assert!(note(c, "refusal").unwrap().contains("exceeds the available context size"), "{c:?}");
    }

    // context: the pool llama.cpp allocated, from the engine: 2 × 4,096.
    let c = run.case("context::kv::pool");
    assert_eq!(
        (metric(c, "kv-pool-tokens"), metric(c, "context-per-request-tokens"), metric(c, "slots")),
        (Some(8192.0), Some(4096.0), Some(2.0))
    );

    // footprint: the launched server's resident memory, before any work.
    let c = run.case("footprint::idle::memory");
    let gib = metric(c, "resident-gib").expect("resident memory");
    assert!(gib > 0.05 && gib < 2.0, "SmolLM2-135M under llama-server holds ~0.3 GiB: {gib}");

    // likelihood: llama.cpp gives no prompt logprobs.
    let c = run.case("likelihood::corpus::bpc");
    assert_eq!(c.outcome, Outcome::NotApplicable);
    assert_eq!(c.reason.as_deref(), Some("engine returns no prompt logprobs"));

    // The board over these real records: every measured cell names records
    // that exist, N/A cells give their reasons, and it opens in Chromium.
    let out = p.run(&["board", "--out", "board"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.path().join("board/standings.json")).unwrap()).unwrap();
    let col = "local · SmolLM2-135M-Instruct-Q4_1";
    let row = |title: &str| {
        s["board"]["rows"].as_array().unwrap().iter().find(|r| r["title"] == title).unwrap()["cells"][col].clone()
    };
    let ids: Vec<String> = run.cases.iter().map(|c| format!("{}#{}", run.manifest.run_id, c.id)).collect();
    for title in ["Prose speed", "Concurrency", "Long-prompt robustness", "Context window", "Box footprint"] {
        let cell = row(title);
        assert_eq!(cell["kind"], "measured", "{title}: {cell}");
        let records = cell["records"].as_array().unwrap();
        assert!(
            !records.is_empty() && records.iter().all(|r| ids.contains(&r.as_str().unwrap().to_string())),
            "{title}: {cell}"
        );
    }
    assert!(row("Concurrency")["raw"].as_str().unwrap().contains("2 queued at the server"));
    // The engine cannot produce it: 0 with the reason, below any measured figure.
    let lk = row("Likelihood (bits per character)");
    assert_eq!(
        (lk["kind"].as_str(), lk["reason"].as_str()),
        (Some("incapable"), Some("could not be tested: engine returns no prompt logprobs"))
    );
    assert_eq!(row("Agent tasks")["reason"], "not measured on this configuration");
    let b = crate::webdriver::Browser::start();
    b.open(&format!("file://{}", p.path().join("board/board.html").display()));
    assert_eq!(b.eval("return document.querySelectorAll('#scores th.col').length;"), 1);
    let na = b.eval("return document.querySelectorAll('#scores td.na').length;");
    assert!(na.as_u64().unwrap() >= 2, "{na}");
    assert_eq!(b.eval("return document.querySelectorAll('#scores td.incapable').length;"), 1);
}

#[test]
fn footprint_of_a_server_the_harness_did_not_launch_is_not_applicable() {
    let server = Server::start();
    let p = Project::new("");
    let out = p
        .command(&["--suite", &suite("footprint"), "--endpoint", &server.url, "--model", "SmolLM2-135M-Instruct-Q4_1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let run = &p.measurements()[0];
    let c = run.case("footprint::idle::memory").clone();
    assert_eq!(c.outcome, Outcome::NotApplicable);
    // Read by a 0.5.0 instrument (the SDK's) from the typed `footprint-unmeasured`; the
    // manifest keeps the `footprint.not_measured` fact for the board.
    assert!(c.reason.unwrap().contains("did not launch"));
    let info = run.manifest.instruments.iter().find(|i| i.name == "footprint").unwrap();
    assert_eq!(info.interface.as_deref(), Some("0.5.0"));
    assert!(
        run.manifest.target.facts.iter().any(|(k, v)| k == "footprint.not_measured" && v.contains("did not launch"))
    );
}

#[test]
fn spec_decode_pairs_a_bare_and_a_drafter_arm() {
    let p = Project::new("");
    let out = p.run(&["--suite", &test_suite("spec-decode"), "--test-threads", "2"]);
    let said = text(&out);
    assert!(matches!(out.status.code(), Some(0) | Some(101)), "{said}");
    let run = &p.measurements()[0];
    let arms: Vec<&str> = run.manifest.arms.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(arms, ["bare", "draft"]);
    let draft = &run.manifest.arms[1].target;
    assert!(draft.launch_command.as_ref().unwrap().iter().any(|a| a == "--model-draft"), "{draft:?}");
    assert!(draft.facts.iter().any(|(k, v)| k == "speculative" && v == "true"), "{:?}", draft.facts);
    for cat in ["code", "reasoning", "prose"] {
        let bare = run.case(&format!("spec-decode::bare::decode::{cat}"));
        let drafted = run.case(&format!("spec-decode::draft::decode::{cat}"));
        assert_eq!((bare.arm.as_deref(), drafted.arm.as_deref()), (Some("bare"), Some("draft")));
        assert_eq!((bare.outcome, drafted.outcome), (Outcome::Pass, Outcome::Pass), "{bare:?} {drafted:?}");
        assert!(metric(bare, "decode-tok-s").unwrap() > 0.0 && metric(drafted, "decode-tok-s").unwrap() > 0.0);
        // The bare arm drafts nothing; the drafter arm's counters moved in
        // this case's window, and a model drafting for itself at
        // temperature 0 has most drafts accepted.
        let why = note(bare, "draft-acceptance").unwrap();
        match metric(bare, "drafted-tokens") {
            Some(drafted) => assert_eq!(drafted, 0.0, "{bare:?}"),
            // On a loaded 2-core machine a 10-second /metrics read can time
            // out: then the note says which read and why, never that the
            // engine keeps no counters.
            None => assert!(why.contains("server did not confirm: /metrics"), "{bare:?}"),
        }
        assert!(why.starts_with("n/a"), "{bare:?}");
        let drafted_tokens = metric(drafted, "drafted-tokens").unwrap();
        let accepted = metric(drafted, "accepted-tokens").unwrap();
        assert!(drafted_tokens > 0.0 && accepted <= drafted_tokens, "{drafted:?}");
        assert!(metric(drafted, "draft-acceptance").unwrap() > 0.5, "{drafted:?}");
    }
    // Structured output is re-verified on both arms.
    for arm in ["bare", "draft"] {
        let c = run.case(&format!("spec-decode::{arm}::structured::json_schema"));
        if c.outcome == Outcome::Fail {
            assert!(c.reason.as_deref().unwrap().contains("did not validate"), "{c:?}");
            assert!(metric(c, "decode-tok-s").is_none());
        }
    }
}

#[test]
fn a_gate_whose_filter_runs_nothing_has_not_passed() {
    let p = Project::new("");
    // A filter that matches none of the battery's checks: nothing runs (no
    // server is needed), and the gate says so in its exit code.
    let out = p.run(&["--suite", &suite("battery"), "no-such-check"]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(101), "{said}");
    assert!(said.contains("gate battery: FAILED: "), "{said}");
    assert!(said.contains("checks did not run (filtered out or skipped)"), "{said}");
    // Listing is not a run of the gate.
    let out = p.run(&["--suite", &suite("battery"), "--list"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

#[test]
fn the_battery_reports_its_gate_and_names_the_failing_checks() {
    let p = Project::new("");
    let out = p.run(&["--suite", &suite("battery"), "--test-threads", "2"]);
    let said = text(&out);
    let run = &p.measurements()[0];
    let summary = run.summary.as_ref().expect("summary");
    let gate = summary.gate.as_ref().expect("a gate suite's summary carries the gate");
    // SmolLM2-135M makes no tool calls: the gate cannot pass, and says why.
    assert!(!gate.passed);
    assert_eq!(out.status.code(), Some(101), "{said}");
    assert!(gate.failing.iter().any(|f| f.starts_with("speed::agent::tool_call (fail")), "{:?}", gate.failing);
    assert!(said.contains("gate battery: FAILED"), "{said}");
    let not_passed = run.cases.iter().filter(|c| c.outcome != Outcome::Pass).count();
    assert_eq!(gate.failing.len(), not_passed);
    // Every check the battery names ran.
    for id in [
        "hard-question::question::bat_and_ball",
        "concurrency::level::c4",
        "long-prompt::paste::95k",
        "speed::agent::json_schema",
        "repro::probe::short_fact",
    ] {
        run.case(id);
    }
    // Repro runs alone on a server the harness launched: it is restarted
    // after the repeats and the probe asked once more, restart to restart
    // measured (3 repeats + 1 after the restart).
    let repro = run.case("repro::probe::short_fact");
    let note = |k: &str| repro.notes.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    assert!(matches!(note("restart-byte-identical"), Some("yes" | "no")), "{:?}", repro.notes);
    assert!(matches!(note("restart-answer-identical"), Some("yes" | "no")), "{:?}", repro.notes);
    assert_eq!(repro.calls.len(), 4, "{:?}", repro.calls);
    assert!(repro.calls.iter().all(|c| c.result == "ok"));
}
