//! The plugin sandbox: a misbehaving instrument ends its own cases with a
//! named error, and the others go on.

use sparktest_record::Outcome;

use crate::support::*;

fn reason(run: &Run, id: &str) -> String {
    let c = run.case(id);
    c.reason.clone().unwrap_or_else(|| panic!("{id} has no reason: {c:?}"))
}

#[test]
fn misbehaving_cases_end_with_named_errors_and_the_rest_run() {
    let server = Server::start();
    // Short limits: a sleeping case must end at the wall clock, not in 30 minutes.
    let p = Project::new("case-timeout-secs = 20\nhostcall-mib = 16\n");
    let out = p.run(&["--suite", &fixture_suite(), "--endpoint", &server.url, "--model", "SmolLM2-135M-Instruct-Q4_1"]);
    assert_eq!(out.status.code(), Some(101), "{}", text(&out));
    let runs = p.measurements();
    let run = &runs[0];
    assert_eq!(run.cases.len(), 17, "every case has a record");

    let cpu = reason(run, "fixture::cpu::spin");
    assert!(cpu.contains("CPU budget"), "{cpu}");
    let mem = reason(run, "fixture::memory::grow");
    assert!(mem.contains("memory limit of 64 MiB"), "{mem}");
    let panic = reason(run, "fixture::panic::message");
    assert!(panic.contains("panicked") && panic.contains("fixture panic number 42"), "{panic}");
    let abort = reason(run, "fixture::trap::abort");
    assert!(abort.starts_with("instrument trapped"), "{abort}");
    for id in ["fixture::cpu::spin", "fixture::memory::grow", "fixture::panic::message", "fixture::trap::abort"] {
        assert_eq!(run.case(id).outcome, Outcome::Fail, "{id}");
    }

    // Only pinned suite files are readable.
    assert!(reason(run, "fixture::data::unpinned").contains("not pinned"));
    assert_eq!(run.case("fixture::data::pinned").outcome, Outcome::Pass);

    // Real calls after the misbehaviour still work.
    assert_eq!(run.case("fixture::chat::hello").outcome, Outcome::Pass);
    let streamed = run.case("fixture::chat::streamed");
    assert_eq!(streamed.outcome, Outcome::Pass, "{streamed:?}");
    assert!(streamed.calls[0].ttft_ms.is_some_and(|t| t > 0.0));
    assert_eq!(streamed.calls[0].token_source, "server-usage");
    assert_eq!(run.case("fixture::chat::concurrent").outcome, Outcome::Pass);
    assert_eq!(run.case("fixture::chat::concurrent").calls.len(), 2);

    // A prompt beyond the context is a clean 4xx: rejected, failed, never lost.
    let long = run.case("fixture::chat::overlong");
    assert_eq!(long.outcome, Outcome::Fail, "{long:?}");
    assert_eq!(long.calls[0].result, "rejected");
    assert_eq!(long.calls[0].status, Some(400));
    assert!(long.reason.as_deref().unwrap().starts_with("context"), "{long:?}");

    // llama.cpp gives no prompt logprobs: not applicable, with the reason.
    let lp = run.case("fixture::logprobs::teacher_forced");
    assert_eq!(lp.outcome, Outcome::NotApplicable);
    assert_eq!(lp.reason.as_deref(), Some("engine returns no prompt logprobs"));

    assert_eq!(run.case("fixture::metrics::scrape").outcome, Outcome::Pass);
    let facts = run.case("fixture::facts::model");
    assert!(facts.notes.contains(&("engine".to_string(), "llama.cpp".to_string())), "{facts:?}");
    // Hostile cases: each ends as the instrument's own failure, by name.
    let sleep = run.case("fixture::hostile::sleep");
    assert_eq!(sleep.outcome, Outcome::Fail, "{sleep:?}");
    assert!(
        sleep.reason.as_deref().unwrap().contains("wall-clock limit of 20s while computing or sleeping"),
        "{sleep:?}"
    );
    let huge = reason(run, "fixture::hostile::huge_request");
    assert!(huge.contains("more than its limit of 16 MiB"), "{huge}");
    assert!(run.case("fixture::hostile::huge_request").calls.is_empty(), "nothing was sent");
    let extra = reason(run, "fixture::hostile::extra_body_model");
    assert!(extra.contains("extra-body may not set \"model\""), "{extra}");
    assert!(run.case("fixture::hostile::extra_body_model").calls.is_empty(), "nothing was sent");
    // A snapshot name that is a path stays in the instrument's folder.
    let baseline = std::fs::read_dir(p.path().join("snapshots"))
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("endpoint-"))
        .expect("the endpoint's baseline folder")
        .path();
    let snaps = baseline.join("fixture");
    let found: Vec<String> = walk(&snaps);
    assert!(
        found.iter().any(|f| f.ends_with("escaped.snap"))
            && found.iter().all(|f| f.starts_with(&snaps.display().to_string())),
        "{found:?}"
    );
    assert!(!p.path().join("escaped.snap").exists() && !p.path().parent().unwrap().join("escaped.snap").exists());

    let summary = run.summary.as_ref().unwrap();
    assert_eq!(summary.not_applicable, 1);
    assert_eq!(summary.lost, 0);
}

/// Every file under a folder.
fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = e.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path.display().to_string());
        }
    }
    out
}

/// A suite folder inside the workspace (crates build only from the
/// workspace that holds their suite), removed when dropped.
struct WorkspaceSuite(std::path::PathBuf);

impl WorkspaceSuite {
    fn new(name: &str, toml: &str) -> Self {
        let dir = repo().join("target/sparktest-test-suites").join(format!("{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("suite.toml"), toml).unwrap();
        WorkspaceSuite(dir)
    }

    fn path(&self) -> String {
        self.0.display().to_string()
    }
}

impl Drop for WorkspaceSuite {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn names_that_are_paths_break_only_their_instrument() {
    let suite = WorkspaceSuite::new(
        "names",
        "[suite]\nname = \"names\"\nversion = \"1\"\n\
         [[instrument]]\ncrate = \"sparktest-fixture-badname\"\n\
         [[instrument]]\ncrate = \"sparktest-fixture\"\n[instrument.config]\nbad_case_names = true\n",
    );
    let p = Project::new("");
    let out = p.run(&["--suite", &suite.path(), "--list"]);
    assert!(out.status.success(), "{}", text(&out));
    let listed = String::from_utf8_lossy(&out.stdout).to_string();
    // Both become one failing setup case under a clean name; nothing else.
    assert!(listed.contains("sparktest-fixture-badname::setup::load: test"), "{listed}");
    assert!(listed.contains("fixture::setup::load: test") && !listed.contains("escape"), "{listed}");
    let server = Server::start();
    let run = p.run(&["--suite", &suite.path(), "--endpoint", &server.url, "--model", "SmolLM2-135M-Instruct-Q4_1"]);
    assert_eq!(run.status.code(), Some(101), "{}", text(&run));
    let runs = p.measurements();
    let bad = runs[0].case("sparktest-fixture-badname::setup::load");
    assert!(
        bad.reason.as_deref().unwrap().contains("instrument name \"../../../tmp/escaped\" is not a valid name"),
        "{bad:?}"
    );
    let cases = runs[0].case("fixture::setup::load");
    assert!(cases.reason.as_deref().unwrap().contains("case name \"../../escape\" is not a valid name"), "{cases:?}");
    assert!(!std::path::Path::new("/tmp/escaped").exists());
}

#[test]
fn listing_has_a_wall_clock_limit() {
    let suite = WorkspaceSuite::new(
        "hang",
        "[suite]\nname = \"hang\"\nversion = \"1\"\n[[instrument]]\ncrate = \"sparktest-fixture\"\n[instrument.config]\nhang_listing = true\n",
    );
    let p = Project::new("setup-timeout-secs = 3\n");
    let started = std::time::Instant::now();
    let out = p.run(&["--suite", &suite.path(), "--list"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("fixture::setup::load: test"));
    assert!(started.elapsed() < std::time::Duration::from_secs(120), "the sleep was cut short");
    let server = Server::start();
    let _ = p.run(&["--suite", &suite.path(), "--endpoint", &server.url, "--model", "SmolLM2-135M-Instruct-Q4_1"]);
    let why = p.measurements()[0].case("fixture::setup::load").reason.clone().unwrap();
    assert!(why.contains("listing exceeded its wall-clock limit of 3s"), "{why}");
}

#[test]
fn no_native_code_from_outside_the_workspace() {
    // A crate outside the workspace is refused with the way out.
    let p = Project::new("");
    let dir = p.path().join("third-party");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("suite.toml"),
        "[suite]\nname = \"t\"\nversion = \"1\"\n[[instrument]]\npath = \"../../somewhere\"\n",
    )
    .unwrap();
    let out = p.run(&["--suite", &dir.display().to_string(), "--list"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(text(&out).contains("native code"), "{}", text(&out));
    // A .cargo/config.toml planted in a suite folder is not read: the build
    // runs from the workspace root (this one would make every build fail).
    let suite = WorkspaceSuite::new(
        "planted",
        "[suite]\nname = \"planted\"\nversion = \"1\"\n[[instrument]]\ncrate = \"sparktest-repro\"\n[instrument.config]\nprobes = \"p.json\"\n[files]\n\"p.json\" = \"4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945\"\n",
    );
    std::fs::write(suite.0.join("p.json"), "[]").unwrap();
    std::fs::create_dir_all(suite.0.join(".cargo")).unwrap();
    std::fs::write(suite.0.join(".cargo/config.toml"), "[build]\nrustc-wrapper = \"/bin/false\"\n").unwrap();
    let out = p.run(&["--suite", &suite.path(), "--list"]);
    assert!(out.status.success(), "the planted config was honoured: {}", text(&out));
}

#[test]
fn an_instrument_that_panics_while_listing_fails_alone_and_the_others_run() {
    let suite_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suites/broken");
    let suite = suite_dir.display().to_string();
    let p = Project::new("");
    let list = p.run(&["--suite", &suite, "--list"]);
    assert!(list.status.success(), "{}", text(&list));
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(
        listed.contains("fixture::setup::load: test") && listed.contains("repro::probe::short_fact: test"),
        "{listed}"
    );

    let server = Server::start();
    let out = p.run(&["--suite", &suite, "--endpoint", &server.url, "--model", "SmolLM2-135M-Instruct-Q4_1"]);
    assert_eq!(out.status.code(), Some(101), "{}", text(&out));
    let runs = p.measurements();
    let run = &runs[0];
    let broken = run.case("fixture::setup::load");
    assert_eq!(broken.outcome, Outcome::Fail);
    let why = broken.reason.as_deref().unwrap();
    assert!(why.contains("failed to list its cases") && why.contains("listing refused on purpose"), "{why}");
    assert_eq!(run.case("repro::probe::short_fact").calls.len(), 2, "the other instrument ran");
    assert_eq!(run.manifest.instruments.len(), 1);
}

#[test]
fn a_prebuilt_component_loads_by_path_and_its_pin_is_checked() {
    let p = Project::new("");
    // Build the fixture through a suite once, then load the .wasm it made.
    let built = p.run(&["--suite", &fixture_suite(), "--list"]);
    assert!(built.status.success(), "{}", text(&built));
    let wasm = target_dir().join("wasm32-wasip2/plugin/sparktest_fixture.wasm");
    let digest = {
        let out = std::process::Command::new("sha256sum").arg(&wasm).output().unwrap();
        String::from_utf8_lossy(&out.stdout).split_whitespace().next().unwrap().to_string()
    };
    // A component is a file of its suite: copied into the suite folder.
    let dir = p.path().join("prebuilt");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(&wasm, dir.join("fixture.wasm")).unwrap();
    let write = |path: &str, pin: &str| {
        std::fs::write(
            dir.join("suite.toml"),
            format!(
                "[suite]\nname = \"prebuilt\"\nversion = \"1\"\n[[instrument]]\nwasm = {path:?}\nsha256 = \"{pin}\"\n"
            ),
        )
        .unwrap();
    };
    write("fixture.wasm", &digest);
    let out = p.run(&["--suite", &dir.display().to_string(), "--list"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("fixture::cpu::spin: test"));
    write("fixture.wasm", &"0".repeat(64));
    let out = p.run(&["--suite", &dir.display().to_string(), "--list"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(text(&out).contains("does not match its pin"), "{}", text(&out));
}

#[test]
fn a_component_outside_its_suite_or_not_a_component_stops_before_any_case() {
    let p = Project::new("");
    let dir = p.path().join("hostile");
    std::fs::create_dir_all(&dir).unwrap();
    let passwd = std::fs::read("/etc/passwd").unwrap();
    let pin = sparktest_harness::sha256_hex(&passwd);
    let write = |path: &str| {
        std::fs::write(
            dir.join("suite.toml"),
            format!(
                "[suite]\nname = \"hostile\"\nversion = \"1\"\n[[instrument]]\nwasm = {path:?}\nsha256 = \"{pin}\"\n"
            ),
        )
        .unwrap();
    };
    // A run that would reach a server if it got that far: nothing listens.
    let run = || p.run(&["--suite", &dir.display().to_string(), "--endpoint", "http://127.0.0.1:9", "--model", "m"]);
    // Out of the suite folder by its text, or by a symlink: exit 3.
    write("../../../../../../etc/passwd");
    let out = run();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(text(&out).contains("inside the suite folder"), "{}", text(&out));
    std::os::unix::fs::symlink("/etc/passwd", dir.join("linked.wasm")).unwrap();
    write("linked.wasm");
    let out = run();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(text(&out).contains("outside the suite folder"), "{}", text(&out));
    // Inside, pinned, but not a component: exit 5, naming the suite file.
    std::fs::write(dir.join("passwd"), &passwd).unwrap();
    write("passwd");
    let out = run();
    assert_eq!(out.status.code(), Some(5), "{}", text(&out));
    let said = text(&out);
    assert!(said.contains("suite.toml: instrument #1") && said.contains("failed to compile component"), "{said}");
    assert!(!said.contains("setup::load"), "{said}");
    assert!(p.measurements().is_empty(), "no measurement file: nothing ran");
}

#[test]
fn a_config_or_data_an_instrument_refuses_stops_before_any_case_with_exit_3() {
    // An unknown key in [instrument.config]: exit 3 naming the suite file,
    // the instrument and the field, not a failed setup::load case.
    let pin = sparktest_harness::sha256_hex(b"[]");
    let suite = WorkspaceSuite::new(
        "unknown-key",
        &format!(
            "[suite]\nname = \"unknown-key\"\nversion = \"1\"\n[[instrument]]\ncrate = \"sparktest-repro\"\n\
             [instrument.config]\nprobes = \"p.json\"\nprobez = 3\n[files]\n\"p.json\" = \"{pin}\"\n"
        ),
    );
    std::fs::write(suite.0.join("p.json"), "[]").unwrap();
    let p = Project::new("");
    let out = p.run(&["--suite", &suite.path(), "--list"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let said = text(&out);
    assert!(said.contains("suite.toml") && said.contains("repro") && said.contains("probez"), "{said}");
    assert!(p.measurements().is_empty(), "no file: nothing ran");
    // A data file that is not UTF-8 text: the same, naming the file.
    let bytes = b"[\"\xff\xfe\"]";
    let pin = sparktest_harness::sha256_hex(bytes);
    let suite = WorkspaceSuite::new(
        "not-utf8",
        &format!(
            "[suite]\nname = \"not-utf8\"\nversion = \"1\"\n[[instrument]]\ncrate = \"sparktest-repro\"\n\
             [instrument.config]\nprobes = \"p.json\"\n[files]\n\"p.json\" = \"{pin}\"\n"
        ),
    );
    std::fs::write(suite.0.join("p.json"), bytes).unwrap();
    let out = p.run(&["--suite", &suite.path(), "--list"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let said = text(&out);
    assert!(said.contains("suite.toml") && said.contains("p.json") && said.contains("not UTF-8"), "{said}");
}

/// Every compiled artifact in a compile cache, by path, with its bytes.
fn compiled(home: &std::path::Path) -> std::collections::BTreeMap<std::path::PathBuf, Vec<u8>> {
    let mut found = std::collections::BTreeMap::new();
    let root = home.join(".cache/sparktest/compiled");
    for engine in std::fs::read_dir(&root).unwrap() {
        for f in std::fs::read_dir(engine.unwrap().path()).unwrap() {
            let p = f.unwrap().path();
            if p.extension().is_some_and(|x| x == "cwasm") {
                let bytes = std::fs::read(&p).unwrap();
                found.insert(p, bytes);
            }
        }
    }
    found
}

#[test]
fn a_swapped_flipped_or_foreign_compiled_component_is_compiled_again_from_its_pin() {
    let home = tempfile::tempdir().unwrap();
    let p = Project::new("");
    let list = |name: &str| {
        let out = p.command(&["--suite", name, "--list"]).env("HOME", home.path()).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        String::from_utf8(out.stdout).unwrap()
    };
    let context = list("context");
    let context_artifacts = compiled(home.path());
    let footprint = list("footprint");
    assert!(context.contains("context::") && footprint.contains("footprint::"), "{context}\n{footprint}");
    let all = compiled(home.path());
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(home.path().join(".cache/sparktest/compiled")).unwrap().permissions(),
    );
    assert_eq!(mode & 0o777, 0o700, "the cache is the user's alone");
    let (c_path, c_bytes) = context_artifacts.iter().next().unwrap();
    let (f_path, f_bytes) = all.iter().find(|(p, _)| !context_artifacts.contains_key(*p)).unwrap();

    // Swapped: context's slot holds footprint's code and the other way round.
    std::fs::write(c_path, f_bytes).unwrap();
    std::fs::write(f_path, c_bytes).unwrap();
    assert_eq!(list("context"), context, "context's own cases, not footprint's");
    assert_eq!(list("footprint"), footprint);
    assert!(&std::fs::read(c_path).unwrap() == c_bytes, "compiled again from the pinned bytes");
    assert!(&std::fs::read(f_path).unwrap() == f_bytes, "compiled again from the pinned bytes");

    // One byte flipped.
    let mut flipped = c_bytes.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x40;
    std::fs::write(c_path, &flipped).unwrap();
    assert_eq!(list("context"), context);
    assert!(&std::fs::read(c_path).unwrap() == c_bytes, "compiled again from the pinned bytes");

    // A file of another wasmtime version: the major version the artifact's
    // engine section names (a length byte, then "48") changed, as a cache
    // shared with an older cargo-sparktest would hold.
    let mut foreign = c_bytes.clone();
    let at = foreign.windows(3).position(|w| w == b"\x0248").expect("the artifact names its wasmtime");
    foreign[at + 2] = b'7';
    std::fs::write(c_path, &foreign).unwrap();
    assert_eq!(list("context"), context);
    assert!(&std::fs::read(c_path).unwrap() == c_bytes, "compiled again from the pinned bytes");
}
