//! The board at a lab's scale (issue 48): a folder of nightly campaigns,
//! each night the 1,488 files of the seeded board benchmark
//! (`sparktest_test_support::board_files`: 31 columns × a `--repeat 3` group of every
//! suite) moved to its own dates, run ids and groups. Figures, nothing
//! asserted. Run with `cargo bench -p sparktest-harness --bench board_year`;
//! `SPARKTEST_BENCH_NIGHTS=1,7,67` (the default) sets the folders' sizes in
//! nights. The largest folder is 2.4 GB on disk while it runs.
//!
//! For each folder, `cargo sparktest board` (this binary run again as a
//! child, so that each build's peak memory is its own):
//!
//! - from a cold index (none), then again with nothing new, then with one
//!   night added;
//! - wall time, the child's peak resident memory (host and reporter: the
//!   reporter runs in the host's process), and the reporter's own peak
//!   linear memory as the board reports it;
//! - the board's files' sizes.

use sparktest_test_support::{board_files, nights};

use std::path::{Path, PathBuf};
use std::time::Instant;

use sparktest_harness::{BoardArgs, board};

const SEED: u64 = 31;

fn main() {
    if let Some(dir) = std::env::var_os("SPARKTEST_BENCH_ONE_BOARD") {
        return one_board(Path::new(&dir));
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    let work = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| repo.join("target"), PathBuf::from)
        .join("sparktest/bench-board-year");
    let _ = std::fs::remove_dir_all(&work);
    let night = work.join("night");
    let w = board_files::write(&night, &repo.join("suites"), SEED);
    println!("one night: {} files, {} case records, {:.1} MB", w.files, w.cases, w.bytes as f64 / 1e6);
    print_machine();
    let nights: Vec<u32> = std::env::var("SPARKTEST_BENCH_NIGHTS")
        .unwrap_or_else(|_| "1,7,67".into())
        .split(',')
        .filter_map(|n| n.trim().parse().ok())
        .collect();
    let night = nights::Night::read(&night);
    println!("| nights | files | MB | build | wall | peak RSS | reporter | board.html | board.md |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for n in nights {
        let folder = work.join(format!("{n}-nights"));
        let measurements = folder.join("measurements");
        for k in 0..n {
            night.write(&measurements, k);
        }
        let index = sparktest_harness::board_index_path(&measurements);
        let _ = std::fs::remove_file(&index);
        let row = |what: &str, b: &Built| {
            let (files, mb) = folder_size(&measurements);
            println!(
                "| {n} | {files} | {mb:.0} | {what} | {:.2} s | {} MB | {} | {:.1} MB | {:.1} MB |",
                b.seconds,
                b.peak_kib / 1024,
                b.reporter,
                b.html as f64 / 1e6,
                b.md as f64 / 1e6
            );
        };
        row("cold index", &build(&repo, &folder));
        row("nothing new", &build(&repo, &folder));
        night.write(&measurements, n);
        row("one night added", &build(&repo, &folder));
        let _ = std::fs::remove_file(&index);
        let _ = std::fs::remove_dir_all(&folder);
    }
}

/// One build as measured.
struct Built {
    seconds: f64,
    peak_kib: i64,
    reporter: String,
    html: u64,
    md: u64,
}

/// `cargo sparktest board` of `folder/measurements` into `folder/board`, in
/// a child process of its own.
fn build(repo: &Path, folder: &Path) -> Built {
    let me = std::env::current_exe().unwrap();
    let started = Instant::now();
    // Reaped by wait4 below, which gives the child's own resource use
    // (std's wait does not).
    #[allow(clippy::zombie_processes)]
    let child = std::process::Command::new(me)
        .env("SPARKTEST_BENCH_ONE_BOARD", folder)
        .current_dir(repo)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let stderr = std::io::read_to_string(child.stderr.unwrap()).unwrap();
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value to be filled in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 on our own child, with valid pointers; it reaps the
    // child once and gives its own resource use.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let seconds = started.elapsed().as_secs_f64();
    assert!(waited == pid && status == 0, "board failed: {stderr}");
    let reporter = stderr
        .lines()
        .find_map(|l| l.split_once("(the reporter grew to ").map(|(_, r)| r.trim_end_matches(')').to_string()))
        .unwrap_or_else(|| "?".into());
    let size = |f: &str| std::fs::metadata(folder.join("board").join(f)).map_or(0, |m| m.len());
    Built { seconds, peak_kib: usage.ru_maxrss, reporter, html: size("board.html"), md: size("board.md") }
}

/// The child: one board, as `cargo sparktest board` builds it.
fn one_board(folder: &Path) {
    let code = board(BoardArgs {
        measurements_dir: Some(folder.join("measurements")),
        out: Some(folder.join("board")),
        reporter: None,
        config: None,
        judgements: None,
        references: None,
        selection: Default::default(),
        cwd: Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."),
    })
    .unwrap_or_else(|e| panic!("board failed: {e}"));
    std::process::exit(code);
}

fn folder_size(dir: &Path) -> (usize, f64) {
    let sizes: Vec<u64> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().metadata().unwrap().len()).collect();
    (sizes.len(), sizes.iter().sum::<u64>() as f64 / 1e6)
}

fn print_machine() {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "machine: {} cores, load average {}, host build: {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" "),
        if cfg!(debug_assertions) { "debug" } else { "release" }
    );
}
