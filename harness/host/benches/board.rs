//! The board at scale (issue 21): 31 columns × a `--repeat 3` group of
//! every suite (`sparktest_test_support::board_files`, seeded), through the built-in
//! reporter. Figures, nothing asserted. Run with
//! `cargo bench -p sparktest-harness --bench board` (add `--profile dev`
//! for a debug host: the reporter itself is always the `plugin` build).
//!
//! - `board`: `sparktest_harness::board`, what `cargo sparktest board`
//!   runs after parsing its arguments: read and check every file, make
//!   sure the reporter is built (a cargo no-op once it is), render, write.
//! - its steps apart: reading the files, the reporter build check, the
//!   render alone (compile from wasmtime's cache, instantiate, the guest's
//!   `render`), writing.
//!
//! Every run's board files are hashed: the same input must give the same
//! bytes, and a change to the reporter that should not change the board
//! can be checked against the hash printed before it.

use sparktest_test_support::board_files;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sparktest_harness::{BoardArgs, Config, PluginHost, Source, board};

/// Measured runs per figure (after one warm-up); median and range reported.
const RUNS: usize = 7;
const SEED: u64 = 31;

fn main() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    let work = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| repo.join("target"), PathBuf::from)
        .join("sparktest/bench-board-31x3");
    let _ = std::fs::remove_dir_all(&work);
    let measurements = work.join("measurements");
    let started = Instant::now();
    let w = board_files::write(&measurements, &repo.join("suites"), SEED);
    println!(
        "{} columns × {} repeats of every suite: {} files, {} case records, {:.1} MB (written in {:.2} s)",
        board_files::COLUMNS,
        board_files::REPEATS,
        w.files,
        w.cases,
        w.bytes as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    print_machine();

    // The whole subcommand, as `cargo sparktest board` runs it.
    let out = work.join("board");
    let mut whole = Vec::new();
    let mut digests = Vec::new();
    for i in 0..=RUNS {
        let t = Instant::now();
        let code = board(BoardArgs {
            measurements_dir: Some(measurements.clone()),
            out: Some(out.clone()),
            reporter: None,
            config: None,
            judgements: None,
            references: None,
            selection: Default::default(),
            cwd: repo.clone(),
        })
        .unwrap_or_else(|e| panic!("board failed: {e}"));
        let took = t.elapsed();
        assert_eq!(code, 0, "board exit code");
        digests.push(digest_dir(&out));
        if i > 0 {
            whole.push(took);
        }
    }
    digests.dedup();
    println!("board files: {} bytes, digest {}", dir_size(&out), digests.join(" / "));
    report("cargo sparktest board (whole subcommand, in process)", &mut whole);

    // Its steps apart.
    let config = Config::discover(&repo).unwrap();
    let (mut read, mut build, mut render, mut write) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let host =
        PluginHost::new(Some(&sparktest_harness::compile_cache_dir()), sparktest_harness::Limits::of_run(&config))
            .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    for i in 0..=RUNS {
        let t = Instant::now();
        let files = sparktest_harness::read_measurements(&measurements, &Default::default()).unwrap().files;
        let t_read = t.elapsed();
        let t = Instant::now();
        let wasm = sparktest_harness::component_for(
            &repo,
            &Source::Crate("sparktest-board".into()),
            &sparktest_harness::trusted_workspaces(&repo),
        )
        .map(|(p, _)| p)
        .unwrap();
        let t_build = t.elapsed();
        let texts: Vec<String> = files.into_iter().map(|(_, t)| t).collect();
        let t = Instant::now();
        let artifacts = rt.block_on(host.render(&wasm, None, Arc::new(BTreeMap::new()), texts, "")).unwrap().artifacts;
        let t_render = t.elapsed();
        let t = Instant::now();
        let dir = work.join("steps");
        std::fs::create_dir_all(&dir).unwrap();
        for (path, content) in &artifacts {
            std::fs::write(dir.join(path), content).unwrap();
        }
        let t_write = t.elapsed();
        if i > 0 {
            read.push(t_read);
            build.push(t_build);
            render.push(t_render);
            write.push(t_write);
        }
    }
    report("reading and checking the files (host)", &mut read);
    report("reporter build check (cargo, a no-op)", &mut build);
    report("render alone (wasmtime: compile from cache, instantiate, render)", &mut render);
    report("writing the board files", &mut write);
    println!("board: {}", out.join("board.html").display());
}

fn report(what: &str, xs: &mut [Duration]) {
    xs.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{what}: median {:.0} ms, min {:.0} ms, max {:.0} ms over {} runs",
        ms(xs[xs.len() / 2]),
        ms(xs[0]),
        ms(xs[xs.len() - 1]),
        xs.len()
    );
}

/// FNV-1a over every file's name and bytes, in name order.
fn digest_dir(dir: &Path) -> String {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    names.sort();
    let bytes = names.iter().filter(|p| p.is_file()).flat_map(|p| {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        name.into_bytes().into_iter().chain(std::fs::read(p).unwrap())
    });
    format!("{:016x}", sparktest_rows::run::fnv1a(bytes))
}

fn dir_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().metadata().unwrap().len()).sum()
}

fn print_machine() {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("model name").map(|v| v.trim_start_matches([' ', '\t', ':']).to_string()))
        })
        .unwrap_or_default();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "machine: {} cores ({cpu}), load average {}, host build: {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" "),
        if cfg!(debug_assertions) { "debug" } else { "release" }
    );
}
