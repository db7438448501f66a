//! Figures for the endpoint client, printed as tables; nothing is asserted
//! (benchmarks report, tests assert). Plain `Instant`, no criterion, to keep
//! the build small. Run with `cargo bench -p sparktest-endpoint --bench client`,
//! or name sections after `--`: `parse`, `ceiling`, `timing`, `load`.
//!
//! - (a) The SSE parse path in memory: `sse::Parser`, then one JSON parse per
//!   event as the client does; and large events (one 4 MiB event arriving in
//!   4 KiB reads against 4 KiB events), this parser beside the
//!   `eventsource-stream` crate used before format 1.2.
//! - (b) The client's ceiling: one streamed `Client::chat` at a time against
//!   the loopback fake server writing tokens as fast as it can.
//! - (c) Timing error: the fake server paces tokens; the client's recorded
//!   arrivals are compared with the pacing and with the server's own write
//!   times.
//! - (d) Client cost under load, at concurrency 8 in two shapes (256
//!   requests × 2,000 tokens, 8 × 64,000): CPU per token (user and system
//!   apart), context switches per 1,000 tokens, and in a second pass under
//!   `strace -c` the system calls per 1,000 tokens (reads, epoll waits,
//!   futex calls, all), for the client on the harness's runtime flavour
//!   (multi-thread, two workers, calls spawned as tasks), a bare reader in
//!   the same process that only counts `data:` lines off the socket, `curl
//!   -sN | wc -l` eight at a time, and, for the long shape where a release
//!   `cargo-sparktest` is built, the whole harness running the concurrency
//!   instrument (net of a 1-token run). Each is also given as a multiple of
//!   the bare reader's CPU in the same run, and the whole harness as a
//!   multiple of curl's (issue 39's goal: at most 0.5). (`/proc/self/io`'s `syscr`
//!   would miss the socket reads: std and mio read sockets with `recvfrom`.)
//!
//! CPU time comes from `/proc` (Linux only): the client runs on the main
//! thread (a current-thread runtime), the fake server on a runtime of its
//! own, so the main thread's CPU time is the client's alone.

use sparktest_test_support::fake_server;

use std::convert::Infallible;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt;
use serde_json::Value;
use sparktest_endpoint::{ChatRequest, Client, ClientConfig, Message, Role, sse};

use fake_server::{FakeServer, Script, openai};

/// Events per in-memory parse run.
const EVENTS: usize = 100_000;
/// Tokens per streamed call in the ceiling runs.
const TOKENS: usize = 20_000;
/// Measured runs per row (after one warm-up); the median is reported.
const RUNS: usize = 5;
/// Tokens per paced call, their spacing, and the delay before the first.
const PACED_TOKENS: usize = 50;
const INTERVAL: Duration = Duration::from_millis(20);
const FIRST_TOKEN: Duration = Duration::from_millis(100);
/// Block size for the "large reads" rows.
const BLOCK: usize = 64 * 1024;
/// One token's text, as an engine streams it.
const TOKEN: &str = " token";

fn main() {
    let client_rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("client runtime");
    let server_rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("server runtime");
    print_machine();
    // `cargo bench -p sparktest-endpoint --bench client -- load` runs only
    // (d); with no name every section runs. (cargo passes `--bench`.)
    let only: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let run = |name: &str| only.is_empty() || only.iter().any(|o| o == name);
    if run("parse") {
        parse_path(&client_rt);
    }
    if run("ceiling") {
        ceiling(&client_rt, &server_rt);
    }
    if run("timing") {
        timing_error(&client_rt, &server_rt);
    }
    if run("load") {
        load(&client_rt, &server_rt);
    }
}

/// Thread name of the runtime that stands for the harness's.
const HARNESS_THREADS: &str = "harness-rt";

/// Read a whole HTTP response off a raw socket, counting `data:` lines:
/// no HTTP parser, no JSON, no timing.
async fn bare_read(addr: &str, body: &[u8]) -> usize {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut sock = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    sock.write_all(head.as_bytes()).await.expect("write");
    sock.write_all(body).await.expect("write");
    let mut buf = vec![0u8; 64 * 1024];
    let (mut n, mut tail) = (0usize, 0u8);
    loop {
        let got = sock.read(&mut buf).await.expect("read");
        if got == 0 {
            return n;
        }
        for &b in &buf[..got] {
            // "data:" at a line start, counted by its 'd' after a newline.
            if b == b'd' && tail == b'\n' {
                n += 1;
            }
            tail = b;
        }
    }
}

/// What a set of threads (or processes) spent: CPU apart, context switches.
#[derive(Clone, Copy, Default)]
struct Spent {
    user: f64,
    sys: f64,
    /// Voluntary and involuntary context switches: the wake-ups.
    switches: u64,
}

impl std::ops::Sub for Spent {
    type Output = Spent;
    fn sub(self, b: Spent) -> Spent {
        Spent { user: self.user - b.user, sys: self.sys - b.sys, switches: self.switches.saturating_sub(b.switches) }
    }
}

/// A thread's `stat` (utime, stime in 10 ms ticks) and `status` (context switches).
fn task_spent(dir: &std::path::Path) -> Spent {
    let stat = std::fs::read_to_string(dir.join("stat")).unwrap_or_default();
    let after = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
    let f: Vec<f64> = after.split_whitespace().filter_map(|x| x.parse().ok()).collect();
    let status = std::fs::read_to_string(dir.join("status")).unwrap_or_default();
    let switches = status
        .lines()
        .filter(|l| l.starts_with("voluntary_ctxt_switches") || l.starts_with("nonvoluntary_ctxt_switches"))
        .filter_map(|l| l.split_whitespace().last()?.parse::<u64>().ok())
        .sum();
    Spent { user: f.get(10).copied().unwrap_or(0.0) / 100.0, sys: f.get(11).copied().unwrap_or(0.0) / 100.0, switches }
}

/// The calling thread's, or the threads of this process named `prefix…`,
/// with their thread ids (for strace).
fn threads_spent(prefix: Option<&str>) -> (Spent, Vec<u32>) {
    if prefix.is_none() {
        let tid = std::fs::read_link("/proc/thread-self")
            .ok()
            .and_then(|p| p.file_name()?.to_str()?.parse().ok())
            .unwrap_or(0);
        return (task_spent(std::path::Path::new("/proc/thread-self")), vec![tid]);
    }
    let mut total = Spent::default();
    let mut tids = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").into_iter().flatten().flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if prefix.is_some_and(|p| comm.starts_with(p)) {
            let t = task_spent(&task.path());
            total = Spent { user: total.user + t.user, sys: total.sys + t.sys, switches: total.switches + t.switches };
            tids.extend(task.file_name().to_str().and_then(|t| t.parse::<u32>().ok()));
        }
    }
    (total, tids)
}

/// What this process's waited-for children spent (getrusage).
fn children_spent() -> Spent {
    // SAFETY: getrusage writes one rusage into the zeroed struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Spent { user: secs(ru.ru_utime), sys: secs(ru.ru_stime), switches: (ru.ru_nvcsw + ru.ru_nivcsw) as u64 }
}

/// System calls by name, counted by `strace -c` while `run` runs: attached
/// to `tids`, or running `command` under `strace -f`. None where strace
/// is not installed or cannot attach.
fn strace_counts(tids: &[u32], run: &mut dyn FnMut()) -> Option<std::collections::BTreeMap<String, u64>> {
    let out = std::env::temp_dir().join(format!("sparktest-client-bench-strace-{}", std::process::id()));
    let mut cmd = std::process::Command::new("strace");
    cmd.args(["-c", "-q", "-o"]).arg(&out);
    for t in tids {
        cmd.arg("-p").arg(t.to_string());
    }
    let mut child = cmd.stderr(std::process::Stdio::null()).spawn().ok()?;
    // strace attaches within a few ms; give it a margin before the load.
    std::thread::sleep(Duration::from_millis(500));
    run();
    // SAFETY: SIGINT to our own child, which detaches and writes its summary.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let _ = child.wait();
    let counts = parse_strace(&std::fs::read_to_string(&out).ok()?);
    let _ = std::fs::remove_file(&out);
    Some(counts)
}

/// `strace -c`'s table: `% time  seconds  usecs/call  calls  [errors]  syscall`.
fn parse_strace(text: &str) -> std::collections::BTreeMap<String, u64> {
    let mut out = std::collections::BTreeMap::new();
    for line in text.lines() {
        let t: Vec<&str> = line.split_whitespace().collect();
        if t.len() < 5 || t[0].parse::<f64>().is_err() || t.last() == Some(&"total") {
            continue;
        }
        if let Ok(calls) = t[3].parse::<u64>() {
            out.insert(t[t.len() - 1].to_string(), calls);
        }
    }
    out
}

/// Reads, epoll waits, futex calls and all calls per 1,000 tokens.
fn per_thousand(counts: &Option<std::collections::BTreeMap<String, u64>>, tokens: f64) -> String {
    let Some(c) = counts else { return "strace not available".to_string() };
    let sum =
        |names: &[&str]| names.iter().map(|n| c.get(*n).copied().unwrap_or(0)).sum::<u64>() as f64 * 1000.0 / tokens;
    let all: u64 = c.values().sum();
    format!(
        "{:>7.1} {:>7.1} {:>7.1} {:>7.1}",
        sum(&["read", "recvfrom", "recvmsg", "readv"]),
        sum(&["epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll", "select", "pselect6"]),
        sum(&["futex"]),
        all as f64 * 1000.0 / tokens
    )
}

/// `(requests, tokens each)` of the two shapes, both at concurrency 8: many
/// short streams (issue 12's workload) and a few long ones (one level of
/// the concurrency instrument at 8 requests of 64,000 tokens).
const LOAD_SHAPES: [(usize, usize); 2] = [(256, 2_000), (8, 64_000)];
const LOAD_CONCURRENCY: usize = 8;

/// A release `cargo-sparktest` to measure whole, where one is built.
fn harness_binary() -> Option<std::path::PathBuf> {
    let bin = std::env::var_os("SPARKTEST_BIN").map(std::path::PathBuf::from).unwrap_or_else(|| {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/release/cargo-sparktest")
    });
    bin.is_file().then_some(bin)
}

fn load(client_rt: &tokio::runtime::Runtime, server_rt: &tokio::runtime::Runtime) {
    use futures_util::stream::{self, StreamExt};
    println!("(d) client cost under load, one write per token, concurrency {LOAD_CONCURRENCY}: CPU per token, and per");
    println!(
        "    1,000 tokens the context switches and (strace -c, a second pass) reads, epoll waits, futex calls, all calls"
    );
    // The harness's own flavour: a multi-thread runtime with two workers,
    // the calls spawned onto it, its threads' CPU summed by name.
    let harness_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name(HARNESS_THREADS)
        .enable_all()
        .build()
        .expect("harness runtime");
    for (requests, each) in LOAD_SHAPES {
        let events = stream_events(each);
        let script = events.iter().fold(Script::sse(), |s, e| s.bytes(e.as_bytes()));
        let server = server_rt.block_on(FakeServer::start(script));
        let tokens = (requests * each) as f64;
        println!("  {requests} requests x {each} tokens");
        println!(
            "    {:<44} {:>9} {:>9} {:>9} {:>9} {:>10} {:>7} {:>7} {:>7} {:>7}",
            "reader", "CPU/tok", "user", "system", "× bare", "switches", "reads", "waits", "futex", "calls"
        );
        let client = Client::new(&server.url(), "fake-model", ClientConfig::default()).expect("client");
        let addr = server.url().trim_start_matches("http://").to_string();
        let req = streamed();
        let body = sparktest_endpoint::chat_body("fake-model", &req).expect("body").to_string();
        let on_harness_rt = || {
            let (client, req) = (client.clone(), req.clone());
            let all = harness_rt.spawn(async move {
                stream::iter(0..requests)
                    .map(|_| {
                        let (client, req) = (client.clone(), req.clone());
                        tokio::spawn(async move { client.chat(&req).await })
                    })
                    .buffer_unordered(LOAD_CONCURRENCY)
                    .map(|r| r.expect("task").expect("the loopback stream").timing.chunk_arrivals_ms.len())
                    .fold(0, |a, n| async move { a + n })
                    .await
            });
            harness_rt.block_on(all).expect("task")
        };
        let bare = || {
            client_rt.block_on(
                stream::iter(0..requests)
                    .map(|_| bare_read(&addr, body.as_bytes()))
                    .buffer_unordered(LOAD_CONCURRENCY)
                    .fold(0, |a, n| async move { a + n }),
            )
        };
        let mut bare_cpu = None;
        let row = move |name: &str,
                        spent: Spent,
                        wall: f64,
                        calls: &Option<std::collections::BTreeMap<String, u64>>,
                        bare_cpu: Option<f64>| {
            let cpu = (spent.user + spent.sys) / tokens * 1e6;
            println!(
                "    {:<44} {:>6.2} µs {:>6.2} µs {:>6.2} µs {:>9} {:>10.1} {}   ({:.0} tok/s)",
                name,
                cpu,
                spent.user / tokens * 1e6,
                spent.sys / tokens * 1e6,
                bare_cpu.map_or("-".to_string(), |b| format!("{:.2}", cpu / b)),
                spent.switches as f64 * 1000.0 / tokens,
                per_thousand(calls, tokens),
                tokens / wall
            );
            if let Some(c) = calls {
                let mut top: Vec<(&String, &u64)> = c.iter().collect();
                top.sort_by(|a, b| b.1.cmp(a.1));
                let top: Vec<String> =
                    top.iter().take(6).map(|(n, k)| format!("{n} {:.1}", **k as f64 * 1000.0 / tokens)).collect();
                println!("      most calls per 1,000 tokens: {}", top.join(", "));
            }
            cpu
        };
        // The bare reader first: the other rows are given as multiples of it.
        for (name, prefix, run) in [
            ("bare reader (counts data: lines, in process)", None, &bare as &dyn Fn() -> usize),
            ("sparktest client, harness runtime", Some(HARNESS_THREADS), &on_harness_rt),
        ] {
            run(); // warm: connections, allocator, the runtime's threads
            let (before, tids) = threads_spent(prefix);
            let t0 = Instant::now();
            let n = run();
            let wall = t0.elapsed().as_secs_f64();
            let spent = threads_spent(prefix).0 - before;
            assert!(n >= requests * each, "{n} chunks");
            let calls = strace_counts(&tids, &mut || {
                run();
            });
            let cpu = row(name, spent, wall, &calls, bare_cpu);
            bare_cpu.get_or_insert(cpu);
        }
        // curl, eight at a time, each piped into `wc -l`: a real client
        // beside ours, its CPU (and xargs', sh's and wc's) from getrusage.
        let body_file = std::env::temp_dir().join(format!("sparktest-client-bench-body-{}", std::process::id()));
        std::fs::write(&body_file, &body).expect("body file");
        let curl = format!(
            "seq {requests} | xargs -P {LOAD_CONCURRENCY} -I{{}} sh -c \"curl -sN -H 'Content-Type: application/json' -d @{} {}/v1/chat/completions | wc -l\" >/dev/null",
            body_file.display(),
            server.url()
        );
        let before = children_spent();
        let t0 = Instant::now();
        let ran = std::process::Command::new("bash").arg("-c").arg(&curl).status();
        let mut curl_cpu = None;
        let wall = t0.elapsed().as_secs_f64();
        let spent = children_spent() - before;
        match ran {
            Ok(s) if s.success() => {
                let mut counted = None;
                let traced = std::process::Command::new("strace")
                    .args(["-c", "-f", "-q", "-o"])
                    .arg(std::env::temp_dir().join(format!("sparktest-client-bench-curl-{}", std::process::id())))
                    .args(["bash", "-c", &curl])
                    .status();
                if traced.is_ok_and(|s| s.success()) {
                    let f = std::env::temp_dir().join(format!("sparktest-client-bench-curl-{}", std::process::id()));
                    counted = std::fs::read_to_string(&f).ok().map(|t| parse_strace(&t));
                    let _ = std::fs::remove_file(f);
                }
                curl_cpu = Some(row("curl -sN | wc -l (and xargs, sh, wc)", spent, wall, &counted, bare_cpu));
            }
            other => println!("    curl -sN: could not run ({other:?})"),
        }
        let _ = std::fs::remove_file(&body_file);
        if each == 64_000 {
            whole_harness(server_rt, &events, bare_cpu, curl_cpu, &row);
        }
    }
    println!();
}

/// A table row: name, CPU spent, wall seconds, system calls, the bare
/// reader's CPU per token; returns this row's CPU per token.
type Row = dyn Fn(&str, Spent, f64, &Option<std::collections::BTreeMap<String, u64>>, Option<f64>) -> f64;

/// The whole `cargo sparktest` process, as the issue measured it: the
/// concurrency instrument at one level of 8 requests against the same
/// stream, the CPU of the process tree net of the same run with 1-token
/// replies (start-up: the probe, loading the component).
fn whole_harness(
    server_rt: &tokio::runtime::Runtime,
    events: &[String],
    bare_cpu: Option<f64>,
    curl_cpu: Option<f64>,
    row: &Row,
) {
    let Some(bin) = harness_binary() else {
        println!(
            "    whole cargo-sparktest: no release binary (cargo build --release -p cargo-sparktest, or SPARKTEST_BIN)"
        );
        return;
    };
    let dir = std::env::temp_dir().join(format!("sparktest-client-bench-suite-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("suite folder");
    // The built-in concurrency suite at one level of 8 and 64,000 tokens.
    let suite = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites/concurrency");
    std::fs::create_dir_all(dir.join("concurrency")).expect("suite folder");
    std::fs::copy(suite.join("concurrency/prompts.json"), dir.join("concurrency/prompts.json")).expect("prompts");
    let text = std::fs::read_to_string(suite.join("suite.toml")).expect("the concurrency suite");
    let text = text.replace("levels = [1, 2, 4]", "levels = [8]").replace("max_tokens = 256", "max_tokens = 64000");
    assert!(text.contains("levels = [8]") && text.contains("max_tokens = 64000"), "suites/concurrency changed shape");
    std::fs::write(dir.join("suite.toml"), text).expect("suite file");
    let one = stream_events(1).iter().fold(Script::sse(), |s, e| s.bytes(e.as_bytes()));
    let whole = events.iter().fold(Script::sse(), |s, e| s.bytes(e.as_bytes()));
    let models = Script::json(200, r#"{"object":"list","data":[{"id":"fake-model","object":"model"}]}"#);
    let run = |script: Script, strace: bool| {
        let server = server_rt
            .block_on(FakeServer::routes(vec![("/v1/models", models.clone()), ("/v1/chat/completions", script)]));
        let mut cmd = if strace {
            let mut c = std::process::Command::new("strace");
            c.args(["-c", "-f", "-q", "-o"]).arg(dir.join("strace.txt")).arg(&bin);
            c
        } else {
            std::process::Command::new(&bin)
        };
        cmd.args(["sparktest", "--suite"])
            .arg(&dir)
            .args(["--endpoint", &server.url(), "--model", "fake-model", "--measurements"])
            .arg(dir.join("measurements"))
            .current_dir(&dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        let before = children_spent();
        let t0 = Instant::now();
        let status = cmd.status();
        (children_spent() - before, t0.elapsed().as_secs_f64(), status)
    };
    let (start, _, s1) = run(one.clone(), false);
    let (all, wall, s2) = run(whole.clone(), false);
    if !matches!((&s1, &s2), (Ok(_), Ok(_))) {
        println!("    whole cargo-sparktest: could not run {} ({s1:?}, {s2:?})", bin.display());
        return;
    }
    let _ = run(whole, true);
    let whole_calls = std::fs::read_to_string(dir.join("strace.txt")).ok().map(|t| parse_strace(&t));
    let _ = run(one, true);
    let start_calls = std::fs::read_to_string(dir.join("strace.txt")).ok().map(|t| parse_strace(&t));
    let net_calls = match (whole_calls, start_calls) {
        (Some(w), Some(s)) => {
            Some(w.into_iter().map(|(k, v)| (k.clone(), v.saturating_sub(s.get(&k).copied().unwrap_or(0)))).collect())
        }
        _ => None,
    };
    let cpu = row("whole cargo-sparktest, net of a 1-token run", all - start, wall, &net_calls, bare_cpu);
    // Issue 39's goal: at most half of curl's CPU per token, in the same run.
    if let Some(curl) = curl_cpu {
        println!("      × curl in this run: {:.2} (the goal: at most 0.50)", cpu / curl);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn print_machine() {
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let profile = if cfg!(debug_assertions) { "debug" } else { "release" };
    println!("sparktest-endpoint client bench: {profile} build, {cores} cores, loadavg {}", load.trim());
    println!();
}

/// The events of one streamed reply with `tokens` content chunks.
fn stream_events(tokens: usize) -> Vec<String> {
    let mut events = vec![openai::role()];
    events.extend((0..tokens).map(|_| openai::content(TOKEN)));
    events.push(openai::finish("length"));
    events.push(openai::usage(16, tokens as u32));
    events.push("[DONE]".to_string());
    events.into_iter().map(|e| format!("data: {e}\n\n")).collect()
}

/// What the client does with each event's data, minus the bookkeeping.
fn absorb(data: &str, text: &mut String) {
    let data = data.trim();
    if data == "[DONE]" || data.is_empty() {
        return;
    }
    let value: Value = serde_json::from_str(data).expect("the bench's own JSON");
    if let Some(t) = value.pointer("/choices/0/delta/content").and_then(Value::as_str) {
        text.push_str(t);
    }
}

fn parse_stream(chunks: &[Bytes], json: bool) -> usize {
    let mut parser = sse::Parser::new(64 << 20);
    let mut events = Vec::new();
    let mut text = String::new();
    let mut n = 0;
    for chunk in chunks {
        parser.push(chunk, &mut events).expect("in-memory stream");
        for event in events.drain(..) {
            if json {
                absorb(&event.data, &mut text);
            }
            n += 1;
        }
    }
    n
}

/// The same with the `eventsource-stream` crate (the parser before 1.2).
async fn parse_stream_before(chunks: Vec<Bytes>) -> usize {
    use eventsource_stream::Eventsource;
    let body = futures_util::stream::iter(chunks.into_iter().map(Ok::<_, Infallible>));
    let mut events = std::pin::pin!(body.eventsource());
    let mut n = 0;
    while let Some(event) = events.next().await {
        event.expect("in-memory stream");
        n += 1;
    }
    n
}

/// One 4 MiB event arriving in 4 KiB reads, against 1,024 events of 4 KiB:
/// the same bytes. A linear parser takes the same time per byte for both.
fn large_events(rt: &tokio::runtime::Runtime) {
    const READ: usize = 4096;
    let one = format!("data: {}\n\n", "x".repeat(4 << 20));
    let big: Vec<Bytes> = one.as_bytes().chunks(READ).map(Bytes::copy_from_slice).collect();
    let small_event = format!("data: {}\n\n", "x".repeat(READ - 8));
    let small: Vec<Bytes> = (0..1024).map(|_| Bytes::from(small_event.clone())).collect();
    let bytes = |c: &[Bytes]| c.iter().map(Bytes::len).sum::<usize>();
    println!("(a2) large events: one 4 MiB event in 4 KiB reads vs 1,024 events of 4 KiB");
    println!("    {:<44} {:>10} {:>10}", "parser", "4 MiB ev", "4 KiB evs");
    let time = |run: &dyn Fn() -> usize, expect: usize, n: usize| {
        run();
        median(
            (0..n)
                .map(|_| {
                    let t = Instant::now();
                    assert_eq!(run(), expect);
                    t.elapsed().as_secs_f64()
                })
                .collect(),
        )
    };
    let new_big = time(&|| parse_stream(&big, false), 1, RUNS);
    let new_small = time(&|| parse_stream(&small, false), 1024, RUNS);
    println!(
        "    {:<44} {:>7.0} MB/s {:>7.0} MB/s",
        "sse::Parser (this crate)",
        mb(bytes(&big)) / new_big,
        mb(bytes(&small)) / new_small
    );
    // The old parser rescans its buffer per read: one run is enough to see it.
    let old_big = time(&|| rt.block_on(parse_stream_before(big.clone())), 1, 1);
    let old_small = time(&|| rt.block_on(parse_stream_before(small.clone())), 1024, RUNS);
    println!(
        "    {:<44} {:>7.1} MB/s {:>7.0} MB/s",
        "eventsource-stream 0.2.3 (before 1.2)",
        mb(bytes(&big)) / old_big,
        mb(bytes(&small)) / old_small
    );
    println!();
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn parse_path(rt: &tokio::runtime::Runtime) {
    let events = stream_events(EVENTS);
    let bytes: usize = events.iter().map(String::len).sum();
    let per_event: Vec<Bytes> = events.iter().map(|e| Bytes::from(e.clone())).collect();
    let whole: Vec<u8> = events.concat().into_bytes();
    let blocks: Vec<Bytes> = whole.chunks(BLOCK).map(Bytes::copy_from_slice).collect();
    let datas: Vec<&str> = events.iter().map(|e| e.trim_start_matches("data: ").trim_end()).collect();

    println!(
        "(a) SSE parse path, in memory: {} events, {:.1} MB, {:.0} B/event",
        events.len(),
        mb(bytes),
        bytes as f64 / events.len() as f64
    );
    println!("    {:<40} {:>12} {:>9}", "path", "events/s", "MB/s");
    let rows: [(&str, &dyn Fn() -> usize); 5] = [
        ("sse::Parser + JSON, one chunk per event", &|| parse_stream(&per_event, true)),
        ("sse::Parser + JSON, 64 KiB chunks", &|| parse_stream(&blocks, true)),
        ("sse::Parser alone, one chunk per event", &|| parse_stream(&per_event, false)),
        ("sse::Parser alone, 64 KiB chunks", &|| parse_stream(&blocks, false)),
        ("JSON alone (no SSE)", &|| {
            let mut text = String::new();
            datas.iter().for_each(|d| absorb(d, &mut text));
            datas.len()
        }),
    ];
    for (name, run) in rows {
        run();
        let secs = median(
            (0..RUNS)
                .map(|_| {
                    let t = Instant::now();
                    let n = run();
                    assert_eq!(n, events.len(), "events lost in the parse path");
                    t.elapsed().as_secs_f64()
                })
                .collect(),
        );
        println!("    {:<40} {:>12.0} {:>9.1}", name, events.len() as f64 / secs, mb(bytes) / secs);
    }
    println!();
    large_events(rt);
}

fn mb(bytes: usize) -> f64 {
    bytes as f64 / 1e6
}

fn streamed() -> ChatRequest {
    let mut req = ChatRequest::new(vec![Message::text(Role::User, "Count.")]);
    req.stream = true;
    req
}

struct Call {
    wall: f64,
    client_cpu: f64,
    process_cpu: f64,
}

fn measured_call(rt: &tokio::runtime::Runtime, client: &Client, tokens: usize) -> Call {
    let (cpu0, proc0, t0) = (thread_cpu(), process_cpu(), Instant::now());
    let reply = rt.block_on(client.chat(&streamed())).expect("the loopback stream");
    let wall = t0.elapsed().as_secs_f64();
    let (cpu1, proc1) = (thread_cpu(), process_cpu());
    assert_eq!(reply.timing.chunk_arrivals_ms.len(), tokens, "chunks lost on loopback");
    Call { wall, client_cpu: cpu1 - cpu0, process_cpu: proc1 - proc0 }
}

fn ceiling(client_rt: &tokio::runtime::Runtime, server_rt: &tokio::runtime::Runtime) {
    let events = stream_events(TOKENS);
    let per_token = events.iter().fold(Script::sse(), |s, e| s.bytes(e.as_bytes()));
    let whole = events.concat().into_bytes();
    let batched = whole.chunks(BLOCK).fold(Script::sse(), |s, b| s.bytes(b));

    println!("(b) client ceiling, loopback, one streamed chat at a time, {TOKENS} tokens per call, median of {RUNS}");
    println!(
        "    {:<34} {:>10} {:>16} {:>18} {:>11}",
        "server writes", "tokens/s", "client CPU/token", "process CPU/token", "client busy"
    );
    for (name, script) in [("one write per token", per_token), ("64 KiB writes", batched)] {
        let server = server_rt.block_on(FakeServer::start(script));
        let client = Client::new(&server.url(), "fake-model", ClientConfig::default()).expect("client");
        measured_call(client_rt, &client, TOKENS);
        let calls: Vec<Call> = (0..RUNS).map(|_| measured_call(client_rt, &client, TOKENS)).collect();
        let rate = median(calls.iter().map(|c| TOKENS as f64 / c.wall).collect());
        let cpu = median(calls.iter().map(|c| c.client_cpu / TOKENS as f64 * 1e6).collect());
        let proc = median(calls.iter().map(|c| c.process_cpu / TOKENS as f64 * 1e6).collect());
        let busy = median(calls.iter().map(|c| c.client_cpu / c.wall * 100.0).collect());
        println!("    {:<34} {:>10.0} {:>13.2} µs {:>15.2} µs {:>10.0}%", name, rate, cpu, proc, busy);
    }
    println!(
        "    (process CPU includes the fake server; /proc/self/stat ticks are 10 ms, the client's thread is read from schedstat in ns)"
    );
    println!();
}

fn timing_error(client_rt: &tokio::runtime::Runtime, server_rt: &tokio::runtime::Runtime) {
    let mut script = Script::sse().data(&openai::role()).pause(FIRST_TOKEN);
    for i in 0..PACED_TOKENS {
        if i > 0 {
            script = script.pause(INTERVAL);
        }
        script = script.data(&openai::content(TOKEN));
    }
    let script = script.data(&openai::finish("length")).data(&openai::usage(16, PACED_TOKENS as u32)).done();
    let server = server_rt.block_on(FakeServer::start(script));
    let client = Client::new(&server.url(), "fake-model", ClientConfig::default()).expect("client");

    let mut vs_nominal = Vec::new();
    let mut vs_server = Vec::new();
    let mut ttft_vs_nominal = Vec::new();
    let mut ttft_vs_server = Vec::new();
    let mut server_jitter = Vec::new();
    for _ in 0..RUNS {
        let reply = client_rt.block_on(client.chat(&streamed())).expect("the paced stream");
        let arrivals = &reply.timing.chunk_arrivals_ms;
        assert_eq!(arrivals.len(), PACED_TOKENS);
        let exchange = server.exchanges().pop().expect("the server saw the call");
        // Write 0 is the role chunk; 1..=PACED_TOKENS carry content.
        let writes: Vec<f64> = exchange.writes_at[1..=PACED_TOKENS]
            .iter()
            .map(|w| w.duration_since(exchange.request_at).as_secs_f64() * 1000.0)
            .collect();
        let nominal = INTERVAL.as_secs_f64() * 1000.0;
        for i in 1..PACED_TOKENS {
            let client_delta = arrivals[i] - arrivals[i - 1];
            let server_delta = writes[i] - writes[i - 1];
            vs_nominal.push(client_delta - nominal);
            vs_server.push(client_delta - server_delta);
            server_jitter.push(server_delta - nominal);
        }
        let ttft = reply.timing.ttft_ms.expect("content came");
        ttft_vs_nominal.push(ttft - FIRST_TOKEN.as_secs_f64() * 1000.0);
        ttft_vs_server.push(ttft - writes[0]);
    }

    println!(
        "(c) timing error, {RUNS} calls x {PACED_TOKENS} tokens, server paces {} ms apart after a {} ms first-token delay",
        INTERVAL.as_millis(),
        FIRST_TOKEN.as_millis()
    );
    println!("    {:<48} {:>11} {:>11} {:>11}", "error (client - reference)", "mean", "mean |e|", "max |e|");
    for (name, errs) in [
        ("inter-token delta vs nominal interval", &vs_nominal),
        ("inter-token delta vs server's write delta", &vs_server),
        ("(server write delta vs nominal: pacing jitter)", &server_jitter),
        ("TTFT vs nominal first-token delay", &ttft_vs_nominal),
        ("TTFT vs server's first write after request", &ttft_vs_server),
    ] {
        let n = errs.len() as f64;
        let mean = errs.iter().sum::<f64>() / n;
        let mean_abs = errs.iter().map(|e| e.abs()).sum::<f64>() / n;
        let max_abs = errs.iter().fold(0.0_f64, |m, e| m.max(e.abs()));
        println!("    {:<48} {:>8.3} ms {:>8.3} ms {:>8.3} ms", name, mean, mean_abs, max_abs);
    }
}

/// CPU time of the calling thread, in seconds: schedstat (ns), else stat ticks.
fn thread_cpu() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map(|ns| ns as f64 / 1e9)
        .unwrap_or_else(|| stat_cpu("/proc/thread-self/stat"))
}

/// CPU time of the whole process (client and fake server), in seconds.
fn process_cpu() -> f64 {
    stat_cpu("/proc/self/stat")
}

/// utime + stime from a `stat` file; USER_HZ is 100 on Linux.
fn stat_cpu(path: &str) -> f64 {
    let stat = std::fs::read_to_string(path).unwrap_or_default();
    // Fields after the `(comm)`, which may hold spaces: state is field 3,
    // utime 14, stime 15.
    let after = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
    let fields: Vec<u64> = after.split_whitespace().skip(1).map(|f| f.parse().unwrap_or(0)).collect();
    let ticks = fields.get(10).copied().unwrap_or(0) + fields.get(11).copied().unwrap_or(0);
    ticks as f64 / 100.0
}
