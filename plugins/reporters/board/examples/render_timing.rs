//! Times the board's own steps natively, without wasmtime, on a folder of
//! measurement files: what the reporter costs apart from its sandbox (run 5
//! in docs/benchmarks.md). The benchmark of the whole subcommand is
//! `harness/benches/board.rs`.
//!
//! ```sh
//! cargo run --release -p sparktest-board --example render_timing -- target/sparktest/bench-board-31x3/measurements
//! ```
use std::time::Instant;

fn main() {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: render_timing <measurements folder>");
        std::process::exit(2);
    };
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();
    files.sort();
    let texts: Vec<String> = files.iter().map(|p| std::fs::read_to_string(p).unwrap()).collect();
    for _ in 0..5 {
        let t = Instant::now();
        let runs = sparktest_board::runs(&texts).unwrap();
        let parse = t.elapsed();
        let t = Instant::now();
        let board = sparktest_board::model::build(&runs, &Default::default(), &Default::default());
        let build = t.elapsed();
        let t = Instant::now();
        let html = sparktest_board::html::render(&board, &runs, &Default::default());
        let h = t.elapsed();
        let t = Instant::now();
        let md = sparktest_board::markdown::render(&board, &runs, &Default::default());
        let m = t.elapsed();
        let t = Instant::now();
        let json = serde_json::to_string_pretty(&board).unwrap();
        let j = t.elapsed();
        println!(
            "parse {parse:?} build {build:?} html {h:?} md {m:?} json {j:?} ({} {} {})",
            html.len(),
            md.len(),
            json.len()
        );
    }
}
