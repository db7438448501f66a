//! Times the board's own steps natively, without wasmtime, on a folder of
//! measurement files: what the reporter costs apart from its sandbox (run 5
//! in docs/benchmarks.md). The benchmark of the whole subcommand is
//! `harness/host/benches/board.rs`.
//!
//! ```sh
//! cargo run --release -p sparktest-board --example render_timing -- target/sparktest/bench-board-31x3/measurements
//! ```
use std::time::{Duration, Instant};

/// Rounds timed; each step's minimum and median are printed (this machine
/// is shared, so single rounds vary by half).
const ROUNDS: usize = 15;

fn main() {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: render_timing <measurements folder>");
        std::process::exit(2);
    };
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();
    files.sort();
    let texts: Vec<String> = files.iter().map(|p| std::fs::read_to_string(p).unwrap()).collect();
    let mut steps: [Vec<Duration>; 5] = Default::default();
    let mut sizes = (0, 0, 0);
    for _ in 0..ROUNDS {
        let t = Instant::now();
        let runs = sparktest_board::runs(&texts).unwrap();
        steps[0].push(t.elapsed());
        let t = Instant::now();
        let defs = sparktest_rows::coded::all(&runs);
        let board = sparktest_board::build(&runs, &defs, &Default::default(), &Default::default());
        steps[1].push(t.elapsed());
        let t = Instant::now();
        let html = sparktest_board::render_html(&board, &runs, &Default::default());
        steps[2].push(t.elapsed());
        let t = Instant::now();
        let md = sparktest_board::render_markdown(&board, &runs, &Default::default());
        steps[3].push(t.elapsed());
        let t = Instant::now();
        let json = serde_json::to_string_pretty(&board).unwrap();
        steps[4].push(t.elapsed());
        sizes = (html.len(), md.len(), json.len());
    }
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let mut total = (0.0, 0.0);
    for (name, xs) in ["parse and merge", "build the board", "HTML", "Markdown", "JSON"].iter().zip(&mut steps) {
        xs.sort();
        let (min, median) = (ms(xs[0]), ms(xs[xs.len() / 2]));
        total = (total.0 + min, total.1 + median);
        println!("{name}: min {min:.1} ms, median {median:.1} ms");
    }
    println!("all steps: min {:.1} ms, median {:.1} ms over {ROUNDS} rounds", total.0, total.1);
    println!("bytes: board.html {}, board.md {}, standings.json {}", sizes.0, sizes.1, sizes.2);
}
