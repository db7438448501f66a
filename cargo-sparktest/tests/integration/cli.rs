//! Command line, suites and targets: the paths that stop a run before cases.

use sparktest_record::Outcome;

use crate::support::*;

#[test]
fn list_names_every_case_instrument_group_case_without_a_server() {
    let p = Project::new("");
    let out = p.run(&["--suite", &suite("smoke"), "--list"]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let cases: Vec<&str> = stdout.lines().filter_map(|l| l.strip_suffix(": test")).collect();
    assert_eq!(cases.len(), 15, "{stdout}");
    assert!(cases.contains(&"corruption::emoji::zwj_family"));
    assert!(cases.contains(&"repro::probe::short_fact"));
    assert!(cases.iter().all(|c| c.split("::").count() == 3), "{cases:?}");
    // Listing launches nothing and measures nothing.
    assert!(!p.path().join("measurements").exists());
}

#[test]
fn bad_command_line_exits_2() {
    let p = Project::new("");
    let out = p.run(&["--suite", "smoke", "--endpoint", "http://127.0.0.1:9"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("--model"));
}

#[test]
fn a_suite_with_a_changed_data_file_is_refused_naming_the_file() {
    let p = Project::new("");
    let copy = p.path().join("suites/smoke");
    std::fs::create_dir_all(copy.join("corruption")).unwrap();
    std::fs::create_dir_all(copy.join("repro")).unwrap();
    let src = repo().join("suites/smoke");
    for f in ["suite.toml", "corruption/strings.json", "repro/probes.json"] {
        std::fs::copy(src.join(f), copy.join(f)).unwrap();
    }
    let strings = copy.join("corruption/strings.json");
    let changed = std::fs::read_to_string(&strings).unwrap().replace("café", "cafe");
    std::fs::write(&strings, changed).unwrap();
    let out = p.run(&["--suite", "smoke"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let said = text(&out);
    assert!(said.contains("corruption/strings.json") && said.contains("does not match its pin"), "{said}");
    assert!(!p.path().join("measurements").exists());
}

#[test]
fn an_unknown_suite_and_an_unknown_target_are_named() {
    let p = Project::new("");
    let out = p.run(&["--suite", "no-such-suite"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(text(&out).contains("no-such-suite"));
    let out = p.run(&["--suite", &suite("smoke"), "--target", "nowhere"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(text(&out).contains("\"nowhere\"") && text(&out).contains("local"));
}

#[test]
fn an_unreachable_endpoint_stops_the_run_with_exit_4() {
    let p = Project::new("");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}");
    let out = p.run(&["--suite", &suite("smoke"), "--endpoint", &url, "--model", "m"]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    assert!(text(&out).contains("/v1/models"), "{}", text(&out));
}

#[test]
fn a_model_id_mismatch_stops_the_run_before_any_case() {
    let server = Server::start();
    let p = Project::new("");
    let out = p.run(&["--suite", &suite("smoke"), "--endpoint", &server.url, "--model", "Qwen3-8B"]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let said = text(&out);
    assert!(said.contains("Qwen3-8B") && said.contains("SmolLM2-135M-Instruct-Q4_1"), "{said}");
    assert!(p.measurements().is_empty(), "no measurement file for a refused target");
}

#[test]
fn the_example_third_party_instrument_loads_from_its_suite_file() {
    let p = Project::new("");
    let example = repo().join("examples/capitals-instrument/suite");
    let out = p.run(&["--suite", &example.display().to_string(), "--list"]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("capitals::country::new_zealand: test"), "{stdout}");
}

#[test]
fn the_example_component_built_against_interface_0_1_0_runs_a_case() {
    example_component_runs_a_case("suite", "0.1.0");
}

#[test]
fn the_example_component_built_against_interface_0_2_0_runs_a_case() {
    example_component_runs_a_case("suite-wit-0.2.0", "0.2.0");
}

/// The example's component pinned in `folder`, built against `interface`,
/// loads, says its interface and reaches the server.
fn example_component_runs_a_case(folder: &str, interface: &str) {
    let server = Server::start();
    let p = Project::new("");
    let example = repo().join("examples/capitals-instrument").join(folder);
    let out = p.run(&[
        "--suite",
        &example.display().to_string(),
        "capitals::country::new_zealand",
        "--endpoint",
        &server.url,
        "--model",
        "SmolLM2-135M-Instruct-Q4_1",
    ]);
    // The 135M model may name the wrong city: pass or fail, never broken.
    assert!(matches!(out.status.code(), Some(0 | 101)), "{}", text(&out));
    let run = p.measurements().pop().expect("a measurement file");
    let info = run.manifest.instruments.iter().find(|i| i.name == "capitals").expect("the instrument");
    assert_eq!(info.interface.as_deref(), Some(interface));
    let case = run.case("capitals::country::new_zealand");
    assert!(matches!(case.outcome, Outcome::Pass | Outcome::Fail), "{case:?}");
    assert!(!case.calls.is_empty(), "the case reached the server: {case:?}");
    // The suite's declared rows travel in the manifest, and the summary
    // gives the pass share's figure as the board computes it.
    if folder == "suite" {
        let titles: Vec<&str> = run.manifest.rows.iter().map(|r| r.title.as_str()).collect();
        assert_eq!(titles, ["Capital cities"]);
        let passed = u8::from(case.outcome == Outcome::Pass);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let line = format!("sparktest: row Capital cities: {passed}/1 passed (95% CI ");
        assert!(stderr.contains(&line), "{line} in {stderr}");
    }
}

#[test]
fn a_label_from_the_command_line_or_the_target_names_the_column_in_the_record() {
    let server = Server::start();
    let p = Project::new(&format!(
        "[target.mine]\nmodel = \"SmolLM2-135M-Instruct-Q4_1\"\nbase-url = \"{}\"\ndescription = \"the reference server, started by the test\"\nlabel = \"Q4_1 · 1 thread\"\nnote = \"no vision\"\n",
        server.url
    ));
    let args = ["--suite", &suite("smoke"), "corruption::accents::french", "--measurements"];
    let out = p.run(&[&args[..], &["by-target", "--target", "mine"]].concat());
    assert!(matches!(out.status.code(), Some(0 | 101)), "{}", text(&out));
    let out = p.run(&[&args[..], &["by-flag", "--target", "mine", "--label", "Q4_1 · relabelled"]].concat());
    assert!(matches!(out.status.code(), Some(0 | 101)), "{}", text(&out));
    let read = |dir: &str| {
        let f = std::fs::read_dir(p.path().join(dir)).unwrap().flatten().find(|e| e.path().is_file()).unwrap();
        Run::parse(&std::fs::read_to_string(f.path()).unwrap()).manifest.target
    };
    let t = read("by-target");
    assert_eq!(
        (t.label.as_deref(), t.note.as_deref(), t.description.as_deref()),
        (Some("Q4_1 · 1 thread"), Some("no vision"), Some("the reference server, started by the test"))
    );
    assert_eq!(read("by-flag").label.as_deref(), Some("Q4_1 · relabelled"), "--label replaces the target's");
}
