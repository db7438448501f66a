//! Installed like nextest (issue 36): the crates a user or an instrument
//! author depends on are packaged (`cargo package`, each `.crate` under
//! crates.io's 10 MB), the CLI is installed from those packages only
//! (`cargo install --path` of the unpacked `.crate`, its dependencies the
//! other unpacked packages through `[patch.crates-io]`, as a registry
//! would give them), and then, from a fresh folder with no repository
//! above it and no path into this checkout in its environment: a built-in
//! suite runs on the reference target, the board is built with the
//! built-in reporter, an unknown suite lists the built-in ones, and an
//! instrument written by `new instrument` builds against the packaged SDK,
//! is pinned by `pin` and runs a case.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use sparktest_record::Outcome;

use crate::support::*;

/// The crates a user or an instrument author depends on, and the
/// libtest-mimic fork they use.
const PUBLISHED: [&str; 11] = [
    "cargo-sparktest",
    "sparktest-harness",
    "sparktest-builtin",
    "sparktest-record",
    "sparktest-endpoint",
    "sparktest-stats",
    "sparktest-sdk",
    "sparktest-contract",
    "sparktest-rows",
    "sparktest-checks",
    "sparktest-workload",
];

fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

fn ok(out: &Output, what: &str) {
    assert!(out.status.success(), "{what}: {}", text(out));
}

/// The workspace's `[profile.dev.package.*]` tables, so that the install
/// builds its dependencies as the workspace did (and reuses them).
fn dev_profile_overrides() -> String {
    let manifest = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    let mut out = String::new();
    let mut keep = false;
    for line in manifest.lines() {
        if line.starts_with('[') {
            keep = line.starts_with("[profile.dev.package.");
        }
        if keep {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The installed CLI, run in `dir` with nothing of this checkout in its
/// environment: only `HOME` and a `PATH` of system folders and cargo's.
fn installed(bin: &Path, dir: &Path, args: &[&str]) -> Output {
    let home = std::env::var("HOME").unwrap();
    let path = format!("{home}/.cargo/bin:/usr/local/bin:/usr/bin:/bin");
    Command::new(bin)
        .arg("sparktest")
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("HOME", home)
        .env("PATH", path)
        .output()
        .unwrap()
}

#[test]
fn the_packaged_crates_install_and_run_from_any_folder_and_build_a_new_instrument() {
    // Packaging and installing happen beside this build's target folder
    // (the copy of it is hard links, which need one file system); the CLI
    // then runs in a fresh folder of the system's.
    std::fs::create_dir_all(target_dir()).unwrap();
    let work = tempfile::tempdir_in(target_dir()).unwrap();
    let work = work.path();
    let target = work.join("target");
    // Package: what `cargo publish` would upload.
    let mut package = cargo();
    package
        .current_dir(repo())
        .args(["package", "--no-verify", "--allow-dirty", "--target-dir"])
        .arg(&target)
        .args(["--config", "patch.crates-io.sparktest-libtest-mimic.path=\"vendor/libtest-mimic\""]);
    for p in PUBLISHED {
        package.args(["-p", p]);
    }
    ok(&package.output().unwrap(), "cargo package");
    let fork = cargo()
        .current_dir(repo())
        .args(["package", "--no-verify", "--allow-dirty", "--manifest-path", "vendor/libtest-mimic/Cargo.toml"])
        .arg("--target-dir")
        .arg(&target)
        .output()
        .unwrap();
    ok(&fork, "cargo package of the libtest-mimic fork");
    let crates: Vec<PathBuf> = std::fs::read_dir(target.join("package"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "crate"))
        .collect();
    assert_eq!(crates.len(), PUBLISHED.len() + 1, "{crates:?}");
    for c in &crates {
        let size = std::fs::metadata(c).unwrap().len();
        assert!(size < 10_000_000, "{} is {size} bytes, past crates.io's 10 MB", c.display());
    }
    // Unpack, each package found by the others through [patch.crates-io].
    let unpacked = work.join("u");
    std::fs::create_dir_all(unpacked.join(".cargo")).unwrap();
    let mut config = String::from("[patch.crates-io]\n");
    for c in &crates {
        ok(&Command::new("tar").arg("xzf").arg(c).current_dir(&unpacked).output().unwrap(), "tar");
        let dir = c.file_stem().unwrap().to_string_lossy().into_owned();
        let name = dir.rsplit_once('-').unwrap().0;
        config.push_str(&format!("{name} = {{ path = \"{}\" }}\n", unpacked.join(&dir).display()));
    }
    config.push_str(&dev_profile_overrides());
    std::fs::write(unpacked.join(".cargo/config.toml"), config).unwrap();
    // Install from the packages only, in a target folder of its own that
    // starts as a copy (hard links) of this build's, so that the
    // dependencies are not compiled twice.
    std::fs::create_dir_all(&target).unwrap();
    ok(
        &Command::new("cp").arg("-al").arg(target_dir().join("debug")).arg(target.join("debug")).output().unwrap(),
        "cp -al",
    );
    let root = work.join("root");
    let version = env!("CARGO_PKG_VERSION");
    let install = cargo()
        .current_dir(&unpacked)
        .args(["install", "--debug", "--locked", "--path"])
        .arg(unpacked.join(format!("cargo-sparktest-{version}")))
        .arg("--root")
        .arg(&root)
        .arg("--target-dir")
        .arg(&target)
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .unwrap();
    ok(&install, "cargo install from the packages");
    let bin = root.join("bin/cargo-sparktest");
    // Work from a fresh folder with no repository above it.
    let fresh = tempfile::tempdir().unwrap();
    let here = fresh.path().join("w");
    std::fs::create_dir_all(&here).unwrap();
    assert!(here.ancestors().all(|d| !d.join(".git").exists() && !d.join("Cargo.toml").exists()));

    let v = installed(&bin, &here, &["--version", "--verbose"]);
    ok(&v, "--version --verbose");
    let said = String::from_utf8_lossy(&v.stdout);
    assert!(said.contains("sparktest-board") && said.contains("0.5.0"), "{said}");

    // A built-in suite on the reference target, as in the repository.
    let smoke = installed(&bin, &here, &["--suite", "smoke"]);
    let measured = sparktest_record::reader::list(&here.join("measurements")).unwrap();
    assert_eq!(measured.len(), 1, "{}", text(&smoke));
    let run = Run::parse(&std::fs::read_to_string(&measured[0]).unwrap());
    assert_eq!(run.count(Outcome::Lost), 0, "{}", text(&smoke));
    assert!(run.count(Outcome::Pass) >= 10, "{}", text(&smoke));
    for i in &run.manifest.instruments {
        let pin = sparktest_harness::builtin_component(&format!("sparktest-{}", i.name)).expect("built in").sha256;
        assert_eq!(i.component_sha256, pin, "{}: the built-in component, by its pin", i.name);
    }
    let a = installed(&bin, &here, &["--suite", "a-bench", "--list"]);
    ok(&a, "a-bench --list");
    assert_eq!(String::from_utf8_lossy(&a.stdout).lines().filter(|l| l.ends_with(": test")).count(), 60);
    let board = installed(&bin, &here, &["board"]);
    ok(&board, "board");
    assert!(here.join("board/board.html").is_file());
    let unknown = installed(&bin, &here, &["--suite", "smok"]);
    assert_eq!(unknown.status.code(), Some(3), "{}", text(&unknown));
    assert!(text(&unknown).contains("did you mean smoke?") && text(&unknown).contains("a-bench (built in)"));

    // An instrument author's crate, against the packaged SDK.
    let new = installed(&bin, &here, &["new", "instrument", "echo-words"]);
    ok(&new, "new instrument");
    let crate_dir = here.join("echo-words");
    std::fs::create_dir_all(crate_dir.join(".cargo")).unwrap();
    std::fs::write(
        crate_dir.join(".cargo/config.toml"),
        format!(
            "[patch.crates-io]\n{}",
            ["sparktest-sdk", "sparktest-contract", "sparktest-record", "sparktest-stats"]
                .iter()
                .map(|c| format!("{c} = {{ path = \"{}\" }}\n", unpacked.join(format!("{c}-{version}")).display()))
                .collect::<String>()
        ),
    )
    .unwrap();
    let build = cargo()
        .current_dir(&crate_dir)
        .args(["build", "--target", "wasm32-wasip2", "--release"])
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_MANIFEST_DIR")
        .output()
        .unwrap();
    ok(&build, "the new instrument builds against the packaged SDK");
    ok(&installed(&bin, &crate_dir, &["pin", "."]), "pin");
    let one = installed(&bin, &crate_dir, &["--suite", ".", "--exact", "echo-words::word::hello"]);
    ok(&one, "the new instrument's case");
    assert!(String::from_utf8_lossy(&one.stdout).contains("1 passed"), "{}", text(&one));

    // Its declared row (issue 47): the summary gives its figure, the board
    // a row with a standing, a Wilson interval and its methodology, and
    // diff a verdict between two runs.
    let row = "Repeat a word (echo-words)";
    assert!(text(&one).contains(&format!("sparktest: row {row}: 1/1 passed (95% CI ")), "{}", text(&one));
    let again = installed(&bin, &crate_dir, &["--suite", ".", "--exact", "echo-words::word::hello"]);
    ok(&again, "the new instrument's case again");
    let board = installed(&bin, &crate_dir, &["board"]);
    ok(&board, "board of the new instrument's runs");
    let standings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(crate_dir.join("board/standings.json")).unwrap()).unwrap();
    let declared = standings["board"]["rows"].as_array().unwrap().iter().find(|r| r["title"] == row);
    let declared = declared.unwrap_or_else(|| panic!("no row {row}: {standings}"));
    assert!(declared["description"].as_str().unwrap().starts_with("Asks the model to repeat each word"), "{declared}");
    let cells = declared["cells"].as_object().unwrap();
    assert_eq!(cells.len(), 1, "{declared}");
    let cell = cells.values().next().unwrap();
    assert_eq!((cell["kind"].as_str(), cell["standing"].as_f64()), (Some("measured"), Some(10.0)), "{cell}");
    assert_eq!((cell["spread"]["kind"].as_str(), cell["spread"]["n"].as_u64()), (Some("wilson"), Some(1)), "{cell}");
    let md = std::fs::read_to_string(crate_dir.join("board/board.md")).unwrap();
    // Markdown escapes the title's parentheses.
    assert!(md.contains("| Repeat a word \\(echo-words\\) | **10** 1/1 passed (95% CI 21–100%)"), "{md}");
    assert!(md.contains("Asks the model to repeat each word at temperature 0; the share of words repeated"), "{md}");
    let runs = sparktest_record::reader::list(&crate_dir.join("measurements")).unwrap();
    assert_eq!(runs.len(), 2);
    let id = |f: &PathBuf| Run::parse(&std::fs::read_to_string(f).unwrap()).manifest.run_id;
    let diff = installed(&bin, &crate_dir, &["diff", &id(&runs[0]), &id(&runs[1]), "--format", "json"]);
    ok(&diff, "diff of the two runs");
    let report: serde_json::Value = serde_json::from_slice(&diff.stdout).unwrap();
    let compared = report["rows"].as_array().unwrap().iter().find(|r| r["row"] == row);
    let compared = compared.unwrap_or_else(|| panic!("no row {row} in diff: {report}"));
    assert_eq!(compared["pass_rate"]["verdict"], "within", "{compared}");
}
