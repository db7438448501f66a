//! Real deployments at the edges: credentials sent and never written
//! anywhere, refused credentials stopping the run, and launched servers
//! that die with the harness. The faults come from a scripted server where
//! a real engine cannot produce them on demand.

use std::sync::Arc;
use std::time::{Duration, Instant};

use sparktest_record::Outcome;

use crate::fake_server::{FakeServer, Script, openai};
use crate::support::*;

const KEY: &str = "sk-planted-7f3e9a1c5b";
const URL_SECRET: &str = "url-secret-5d2c8e";

/// An OpenAI-compatible fake that wants `Bearer KEY` (or any Basic
/// credentials) on the calls listed in `guarded`.
fn fake(rt: &tokio::runtime::Runtime, guard_models: bool) -> FakeServer {
    rt.block_on(FakeServer::respond(Arc::new(move |req: &str, _| {
        let lower = req.to_lowercase();
        let path = req.split_whitespace().nth(1).unwrap_or("").to_string();
        let authed = lower.contains(&format!("authorization: bearer {}", KEY.to_lowercase())) || lower.contains("authorization: basic ");
        if (path.starts_with("/v1/chat") || (guard_models && path.starts_with("/v1/models"))) && !authed {
            return Script::json(401, r#"{"error":{"message":"invalid api key","type":"authentication_error"}}"#);
        }
        if path.starts_with("/v1/models") {
            return Script::json(200, r#"{"object":"list","data":[{"id":"fake-model","object":"model"}]}"#);
        }
        if path.starts_with("/v1/chat") {
            if req.contains("\"stream\":true") {
                return Script::sse().data(&openai::role()).data(&openai::content("Hello!")).data(&openai::finish("stop")).data(&openai::usage(5, 2)).done();
            }
            return Script::json(
                200,
                r#"{"id":"x","object":"chat.completion","model":"fake-model","choices":[{"index":0,"message":{"role":"assistant","content":"Hello!"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2}}"#,
            );
        }
        Script::json(404, r#"{"error":"not found"}"#)
    })))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap()
}

/// Every file under a folder, as text (lossy).
fn all_files(dir: &std::path::Path, out: &mut Vec<(String, String)>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            all_files(&p, out);
        } else if let Ok(bytes) = std::fs::read(&p) {
            out.push((p.display().to_string(), String::from_utf8_lossy(&bytes).into_owned()));
        }
    }
}

#[test]
fn a_planted_key_is_sent_and_never_written_anywhere() {
    let rt = runtime();
    let server = fake(&rt, true);
    let with_creds = server.url().replacen("http://", &format!("http://sam:{URL_SECRET}@"), 1);
    let p = Project::new(&format!(
        "[target.secured]\nmodel = \"fake-model\"\nbase-url = \"{}\"\napi-key-env = \"SPARKTEST_TEST_PLANTED_KEY\"\n\
         [target.urlcreds]\nmodel = \"fake-model\"\nbase-url = \"{with_creds}\"\n",
        server.url()
    ));
    let mut said = String::new();
    for target in ["secured", "urlcreds"] {
        let out = p
            .command(&["--suite", &fixture_suite(), "--target", target, "--junit", "junit.xml", "chat::"])
            .env("SPARKTEST_TEST_PLANTED_KEY", KEY)
            .output()
            .unwrap();
        said.push_str(&text(&out));
        let runs = p.measurements();
        let run = runs.last().unwrap();
        assert_eq!(run.case("fixture::chat::hello").outcome, Outcome::Pass, "{}", text(&out));
        assert_eq!(run.case("fixture::chat::streamed").outcome, Outcome::Pass, "{}", text(&out));
    }
    let runs = p.measurements();
    assert!(runs[1].manifest.target.base_url.contains("[redacted]@"), "{}", runs[1].manifest.target.base_url);
    // The board, a transcript shown, and every file the project now holds.
    let board = p.run(&["board"]);
    said.push_str(&text(&board));
    let show = p.run(&["show", &format!("{}#fixture::chat::hello", runs[0].manifest.run_id)]);
    assert!(show.status.success(), "{}", text(&show));
    said.push_str(&text(&show));
    let mut files = Vec::new();
    all_files(p.path(), &mut files);
    // The user's own configuration holds the URL's credentials; nothing else may.
    files.retain(|(f, _)| !f.ends_with("sparktest.toml"));
    assert!(files.iter().any(|(f, _)| f.contains("transcripts")), "transcripts were written");
    assert!(
        files.iter().any(|(f, _)| f.ends_with("junit.xml")) && files.iter().any(|(f, _)| f.ends_with("board.html"))
    );
    for (file, content) in files.iter().chain([("stdout and stderr".to_string(), said.clone())].iter()) {
        assert!(!content.contains(KEY), "the key is in {file}");
        assert!(!content.contains(URL_SECRET), "the URL's credentials are in {file}");
    }
    // It did reach the server, on every call and probe.
    let ex = server.exchanges();
    assert!(ex.iter().filter(|e| e.request.to_lowercase().contains("bearer")).count() >= 3, "{} exchanges", ex.len());
}

#[test]
fn refused_credentials_stop_the_run_and_name_the_call() {
    let rt = runtime();
    // At the probe: before any case, exit 4.
    let guarded = fake(&rt, true);
    let p = Project::new(&format!(
        "[target.secured]\nmodel = \"fake-model\"\nbase-url = \"{}\"\napi-key-env = \"SPARKTEST_TEST_PLANTED_KEY\"\n",
        guarded.url()
    ));
    let out = p
        .command(&["--suite", &fixture_suite(), "--target", "secured", "chat::"])
        .env("SPARKTEST_TEST_PLANTED_KEY", "sk-wrong-key")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    assert!(text(&out).contains("/v1/models refused the credentials: HTTP 401"), "{}", text(&out));
    assert!(!text(&out).contains("sk-wrong-key"));
    assert!(p.measurements().is_empty(), "nothing measured");
    // A key the configuration names but the environment lacks: a setup error.
    let out = p
        .command(&["--suite", &fixture_suite(), "--target", "secured", "chat::"])
        .env_remove("SPARKTEST_TEST_PLANTED_KEY")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(text(&out).contains("api-key-env names SPARKTEST_TEST_PLANTED_KEY"), "{}", text(&out));

    // Mid-run: the model list is open, the chat endpoint is not. The run
    // stops at the first refusal; the rest are recorded, not sent.
    let open = fake(&rt, false);
    let out = p.run(&[
        "--suite",
        &fixture_suite(),
        "--endpoint",
        &open.url(),
        "--model",
        "fake-model",
        "--test-threads",
        "1",
        "chat::",
    ]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let run = p.measurements().pop().unwrap();
    let summary = run.summary.as_ref().unwrap();
    assert!(summary.stopped.as_deref().unwrap().contains("refused the credentials"), "{summary:?}");
    assert!(run.cases.iter().all(|c| c.outcome == Outcome::Lost), "{:?}", run.cases);
    let sent: Vec<_> = run.cases.iter().filter(|c| !c.calls.is_empty()).collect();
    assert_eq!(sent.len(), 1, "only the first case was sent");
    assert_eq!(sent[0].calls[0].result, "unauthorized");
    assert!(
        run.cases
            .iter()
            .filter(|c| c.calls.is_empty())
            .all(|c| { c.reason.as_deref().unwrap().starts_with("not run: the run stopped") })
    );
}

#[test]
fn a_launched_engine_gets_its_key_and_the_record_hides_it() {
    // llama-server itself, launched with --api-key from the environment.
    let p = Project::new(
        "[target.keyed]\nmodel = \"SmolLM2-135M-Instruct-Q4_1\"\napi-key-env = \"SPARKTEST_TEST_PLANTED_KEY\"\n\
         [target.keyed.launch]\nprovision = \"builtin:reference-target\"\n\
         command = [\"{server}\", \"--model\", \"{model}\", \"--alias\", \"SmolLM2-135M-Instruct-Q4_1\", \"--host\", \"127.0.0.1\", \"--port\", \"{port}\", \"--threads\", \"1\", \"--api-key\", \"{api-key}\"]\n",
    );
    let out = p
        .command(&["--suite", &fixture_suite(), "--target", "keyed", "--exact", "fixture::chat::hello"])
        .env("SPARKTEST_TEST_PLANTED_KEY", KEY)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let run = &p.measurements()[0];
    let cmd = run.manifest.target.launch_command.clone().unwrap();
    let at = cmd.iter().position(|a| a == "--api-key").unwrap();
    assert_eq!(cmd[at + 1], "[redacted]");
    let mut files = Vec::new();
    all_files(&p.path().join("measurements"), &mut files);
    assert!(files.iter().all(|(_, c)| !c.contains(KEY)));
    assert!(!text(&out).contains(KEY));
}

/// The pid of the llama-server listening on `port`, from /proc.
fn server_pid(port: &str) -> Option<u32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_string_lossy().parse().ok()?;
        let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
        let args: Vec<String> = cmd.split(|b| *b == 0).map(|a| String::from_utf8_lossy(a).into_owned()).collect();
        (args.first()?.ends_with("llama-server") && args.windows(2).any(|w| w[0] == "--port" && w[1] == port))
            .then_some(pid)
    })
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z"))
}

/// Start a run that launches the reference target; once a case is on disk,
/// return the harness and its server's pid.
// The child goes back to the caller, which waits for it.
#[allow(clippy::zombie_processes)]
fn launched_run(p: &Project, extra: &[&str]) -> (std::process::Child, u32) {
    let smoke = suite("smoke");
    let mut args = vec!["--suite", smoke.as_str(), "--test-threads", "1"];
    args.extend_from_slice(extra);
    let mut child =
        p.command(&args).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().unwrap();
    let started = Instant::now();
    loop {
        let port = std::fs::read_dir(p.path().join("target/sparktest/logs"))
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|e| e.ok())
            .and_then(|e| {
                e.file_name()
                    .to_string_lossy()
                    .strip_suffix(".log")
                    .and_then(|n| n.rsplit('-').nth(1))
                    .map(str::to_string)
            });
        if let Some(pid) = port.as_deref().and_then(server_pid)
            && p.cases_written() > 0
        {
            return (child, pid);
        }
        if started.elapsed() > Duration::from_secs(300) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the run never got going");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn gone_within(pid: u32, limit: Duration) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// A target whose server is a child of its launch command (a wrapper
/// script, as vLLM's workers are children of its server): the parent-death
/// signal reaches only the wrapper.
const WRAPPED: &str = r#"
[target.wrapped]
model = "SmolLM2-135M-Instruct-Q4_1"
route = "direct"
[target.wrapped.launch]
provision = "builtin:reference-target"
command = ["bash", "-c", "\"$0\" \"$@\" & wait", "{server}", "--model", "{model}", "--alias", "SmolLM2-135M-Instruct-Q4_1",
    "--host", "127.0.0.1", "--port", "{port}", "--threads", "1", "--jinja", "--metrics", "--parallel", "2", "--ctx-size", "8192"]
health-path = "/health"
startup-timeout-secs = 120
"#;

/// A stop signal while cases run: the case in flight is interrupted (not
/// lost, not failed), no other starts, the servers go, the file says
/// interrupted, the exit code is 128 + the signal, and `--resume` runs
/// the rest.
fn interrupted_run(signal: i32, also_the_server: bool) {
    let p = Project::new("");
    let (mut child, pid) = launched_run(&p, &[]);
    unsafe {
        libc::kill(child.id() as i32, signal);
    }
    if also_the_server {
        // As a terminal's Ctrl-C reaching a server that exits at once: the
        // next read fails, and it must still not be the server's fault.
        std::thread::sleep(Duration::from_millis(50));
        unsafe {
            libc::kill(pid as i32, libc::SIGKILL);
        }
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(128 + signal));
    assert!(gone_within(pid, Duration::from_secs(10)), "the server outlived a stop signal to the harness");
    let runs = p.measurements();
    let run = &runs[0];
    let summary = run.summary.as_ref().expect("an interrupted run still ends with its summary");
    let name = if signal == libc::SIGINT { "SIGINT" } else { "SIGTERM" };
    assert_eq!(summary.interrupted.as_deref(), Some(name));
    assert!(summary.stopped.is_none(), "not 'stopped early': {:?}", summary.stopped);
    assert_eq!(run.count(Outcome::Lost), 0, "{:#?}", run.cases.iter().map(|c| (&c.id, &c.reason)).collect::<Vec<_>>());
    assert_eq!(summary.interrupted_cases as usize, run.count(Outcome::Interrupted));
    for c in run.cases.iter().filter(|c| c.outcome == Outcome::Interrupted) {
        assert!(c.reason.as_deref().is_some_and(|r| r.contains(name)), "{c:?}");
    }
    let listed = p.run(&["--suite", &suite("smoke"), "--list"]);
    let total = text(&listed).lines().filter(|l| l.ends_with(": test")).count();
    let done = run.cases.iter().filter(|c| c.outcome != Outcome::Interrupted).count();
    assert!(done < total, "the signal came after the last case");
    // The board says so.
    let board = p.run(&["board"]);
    assert!(board.status.success(), "{}", text(&board));
    let md = std::fs::read_to_string(p.path().join("board/board.md")).unwrap();
    assert!(md.contains(&format!("INTERRUPTED by {name}")), "{md}");
    // --resume runs what was interrupted or never started, and only that.
    let run_id = run.manifest.run_id.clone();
    let out = p.run(&["--suite", &suite("smoke"), "--test-threads", "1", "--resume", &run_id]);
    assert!(matches!(out.status.code(), Some(0 | 101)), "{}", text(&out));
    let runs = p.measurements();
    let resumed = runs.iter().find(|r| r.manifest.resumes.as_deref() == Some(run_id.as_str())).expect("the resume");
    assert_eq!(resumed.cases.len(), total - done, "{}", text(&out));
    assert_eq!(resumed.count(Outcome::Interrupted), 0);
}

#[test]
fn sigint_interrupts_the_run_instead_of_losing_cases() {
    interrupted_run(libc::SIGINT, true);
}

#[test]
fn launched_servers_die_with_the_harness() {
    // SIGTERM: the case in flight is interrupted, the servers go, 143.
    interrupted_run(libc::SIGTERM, false);
    // SIGKILL: no handler runs; the parent-death signal takes the server.
    let p = Project::new("");
    let (mut child, pid) = launched_run(&p, &[]);
    child.kill().unwrap();
    let _ = child.wait();
    assert!(gone_within(pid, Duration::from_secs(10)), "the server outlived the harness");
    // SIGKILL with the server a child of its launch command: the
    // parent-death signal takes only the wrapper; the watchdog the rest.
    let p = Project::new(WRAPPED);
    let (mut child, pid) = launched_run(&p, &["--target", "wrapped"]);
    child.kill().unwrap();
    let _ = child.wait();
    assert!(gone_within(pid, Duration::from_secs(10)), "the wrapped llama-server outlived the harness");
}

#[test]
fn a_key_too_short_to_redact_is_refused() {
    let p = Project::new(
        "[target.short]\nmodel = \"fake-model\"\nbase-url = \"http://127.0.0.1:9\"\napi-key-env = \"SPARKTEST_TEST_SHORT_KEY\"\n",
    );
    let out = p
        .command(&["--suite", &fixture_suite(), "--target", "short"])
        .env("SPARKTEST_TEST_SHORT_KEY", "abc")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let said = text(&out);
    assert!(said.contains("SPARKTEST_TEST_SHORT_KEY") && said.contains("shorter than 8"), "{said}");
    assert!(p.measurements().is_empty());
}

/// A llama.cpp-shaped fake that plants `KEY` in every answer a probe
/// reads (the model list, `/props` with its `model_path` and build,
/// `/slots`, `/version`, `/metrics`, every 404's body) and wants `Bearer
/// KEY` on the chat calls.
fn planting(rt: &tokio::runtime::Runtime) -> FakeServer {
    rt.block_on(FakeServer::respond(Arc::new(move |req: &str, _| {
        let path = req.split_whitespace().nth(1).unwrap_or("").to_string();
        let authed = req.to_lowercase().contains(&format!("authorization: bearer {}", KEY.to_lowercase()));
        let json = |body: String| Script::json(200, &body);
        match path.as_str() {
            p if p.starts_with("/v1/models") => json(format!(
                r#"{{"object":"list","data":[{{"id":"fake-model","object":"model","owned_by":"{KEY}","root":"/models/{KEY}"}}]}}"#
            )),
            "/props" => json(format!(
                r#"{{"total_slots":1,"default_generation_settings":{{"n_ctx":2048}},"build_info":"b1-{KEY}","model_path":"/models/{KEY}/model.gguf","model_ftype":"{KEY}","modalities":{{"vision":false}},"chat_template":"{KEY}"}}"#
            )),
            "/slots" => json(format!(
                r#"[{{"id":0,"n_ctx":2048,"is_processing":false,"speculative":false,"prompt":"{KEY}"}}]"#
            )),
            "/version" => json(format!(r#"{{"version":"{KEY}"}}"#)),
            "/health" => json(r#"{"status":"ok"}"#.into()),
            "/metrics" => {
                let body = format!(
                    "# HELP llamacpp:requests_processing {KEY}\n# TYPE llamacpp:requests_processing gauge\n\
                     llamacpp:requests_processing{{key=\"{KEY}\"}} 0\n"
                );
                Script::status(200)
                    .header("Content-Type", "text/plain; version=0.0.4")
                    .framing(crate::fake_server::Framing::Length(body.len()))
                    .bytes(body)
            }
            p if p.starts_with("/v1/chat") && !authed => Script::json(401, &format!(r#"{{"error":"{KEY}"}}"#)),
            p if p.starts_with("/v1/chat") && req.contains("\"stream\":true") => Script::sse()
                .data(&openai::role())
                .data(&openai::content("Hello!"))
                .data(&openai::finish("stop"))
                .data(&openai::usage(5, 2))
                .done(),
            p if p.starts_with("/v1/chat") => Script::json(
                200,
                r#"{"id":"x","object":"chat.completion","model":"fake-model","choices":[{"index":0,"message":{"role":"assistant","content":"Hello!"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2}}"#,
            ),
            _ => Script::json(404, &format!(r#"{{"error":"no route here; try {KEY}"}}"#)),
        }
    })))
}

/// The same answers from a launched server (a Python script given the key
/// as `{api-key}`): the harness hashes a launched server's `model_path`,
/// and the warning that it could not (the file is not there) names the
/// path, key and all.
const PLANTING_PY: &str = r##"
import json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
port, key = int(sys.argv[1]), sys.argv[2]
class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass
    def send(self, status, body, kind="application/json"):
        data = (body if isinstance(body, str) else json.dumps(body)).encode()
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def do_GET(self):
        p = self.path
        if p == "/health": self.send(200, {"status": "ok"})
        elif p.startswith("/v1/models"): self.send(200, {"object": "list", "data": [{"id": "fake-model", "object": "model", "owned_by": key}]})
        elif p == "/props": self.send(200, {"total_slots": 1, "default_generation_settings": {"n_ctx": 2048}, "build_info": "b1-" + key, "model_path": "/nonexistent/" + key + "/model.gguf"})
        elif p == "/slots": self.send(200, [{"id": 0, "n_ctx": 2048, "is_processing": False, "prompt": key}])
        elif p == "/version": self.send(200, {"version": key})
        elif p == "/metrics": self.send(200, "# HELP llamacpp:requests_processing %s\nllamacpp:requests_processing 0\n" % key, "text/plain")
        else: self.send(404, {"error": "no route; try " + key})
    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        req = json.loads(self.rfile.read(n) or b"{}")
        if not self.path.startswith("/v1/chat"):
            return self.send(404, {"error": "no route; try " + key})
        msg = {"role": "assistant", "content": "Hello!"}
        if req.get("stream"):
            chunk = lambda d, f: "data: " + json.dumps({"object": "chat.completion.chunk", "model": "fake-model", "choices": [{"index": 0, "delta": d, "finish_reason": f}]}) + "\n\n"
            self.send(200, chunk(msg, None) + chunk({}, "stop") + "data: [DONE]\n\n", "text/event-stream")
        else:
            self.send(200, {"object": "chat.completion", "model": "fake-model", "choices": [{"index": 0, "message": msg, "finish_reason": "stop"}], "usage": {"prompt_tokens": 5, "completion_tokens": 2}})
ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
"##;

#[test]
fn a_key_planted_in_every_probe_answer_is_printed_and_written_nowhere() {
    let rt = runtime();
    let server = planting(&rt);
    let script_dir = tempfile::tempdir().unwrap();
    let script = script_dir.path().join("planting.py");
    std::fs::write(&script, PLANTING_PY).unwrap();
    let p = Project::new(&format!(
        "[target.planted]\nmodel = \"fake-model\"\nbase-url = \"{}\"\napi-key-env = \"SPARKTEST_TEST_PLANTED_KEY\"\n\
         [target.launched]\nmodel = \"fake-model\"\napi-key-env = \"SPARKTEST_TEST_PLANTED_KEY\"\n\
         [target.launched.launch]\ncommand = [\"python3\", \"{}\", \"{{port}}\", \"{{api-key}}\"]\n\
         health-path = \"/health\"\nstartup-timeout-secs = 60\n",
        server.url(),
        script.display()
    ));
    let mut said = String::new();
    for target in ["planted", "launched"] {
        let out = p
            .command(&["--suite", &fixture_suite(), "--target", target, "--junit", "junit.xml", "chat::"])
            .env("SPARKTEST_TEST_PLANTED_KEY", KEY)
            .output()
            .unwrap();
        said.push_str(&text(&out));
        let runs = p.measurements();
        let run = runs.last().unwrap();
        assert_eq!(run.manifest.target.name, target, "{}", text(&out));
        assert_eq!(run.case("fixture::chat::hello").outcome, Outcome::Pass, "{}", text(&out));
    }
    // The launched server's model path could not be hashed, and the warning
    // that says so was printed (redacted).
    assert!(said.contains("model digest not taken") && said.contains("[redacted]"), "{said}");
    let board = p.run(&["board"]);
    said.push_str(&text(&board));
    let mut files = Vec::new();
    all_files(p.path(), &mut files);
    assert!(files.iter().any(|(f, _)| f.ends_with(".jsonl")) && files.iter().any(|(f, _)| f.ends_with("junit.xml")));
    for (file, content) in files.iter().chain([("stdout and stderr".to_string(), said.clone())].iter()) {
        assert!(!content.contains(KEY), "the key is in {file}");
    }
    // The probes did read the planted answers.
    let asked: Vec<String> =
        server.exchanges().iter().map(|e| e.request.split_whitespace().nth(1).unwrap_or("").to_string()).collect();
    for path in ["/v1/models", "/props", "/slots"] {
        assert!(asked.iter().any(|a| a.starts_with(path)), "{path} was not read: {asked:?}");
    }
}

/// What a hostile server or file could put before a terminal or a CI log:
/// a title set and the screen cleared (ESC, BEL), and a newline starting
/// a GitHub workflow command.
const HOSTILE: &str = "\u{1b}]0;pwned\u{7}\u{1b}[2J\n::error::planted";

/// `said` holds the hostile text only as escapes: no raw ESC or BEL, and no
/// line of it starts with its words.
fn assert_inert(what: &str, said: &str) {
    assert!(!said.contains(['\u{1b}', '\u{7}']), "{what}: a raw ESC or BEL: {said:?}");
    for line in said.lines() {
        assert!(!line.trim_start().starts_with("::"), "{what}: a line starts with foreign text: {line:?}\n{said}");
    }
    assert!(said.contains("::error::planted"), "{what}: the text is still shown, escaped: {said}");
}

#[test]
fn a_servers_error_body_reaches_the_terminal_and_junit_escaped() {
    let rt = runtime();
    let body = serde_json::json!({"error": {"message": HOSTILE}}).to_string();
    let server = rt.block_on(FakeServer::respond(Arc::new(move |req: &str, _| {
        let path = req.split_whitespace().nth(1).unwrap_or("").to_string();
        if path.starts_with("/v1/models") {
            return Script::json(200, r#"{"object":"list","data":[{"id":"fake-model","object":"model"}]}"#);
        }
        if path.starts_with("/v1/chat") {
            return Script::json(400, &body);
        }
        Script::json(404, r#"{"error":"not found"}"#)
    })));
    let p = Project::new(&format!("[target.t]\nmodel = \"fake-model\"\nbase-url = \"{}\"\n", server.url()));
    let out =
        p.command(&["--suite", &fixture_suite(), "--target", "t", "--junit", "junit.xml", "chat::"]).output().unwrap();
    let said = text(&out);
    let runs = p.measurements();
    let run = runs.last().unwrap();
    let reason = run.case("fixture::chat::hello").reason.clone().unwrap_or_default();
    assert!(reason.contains("::error::planted"), "the record keeps the server's words as they were: {reason:?}");
    assert_inert("the run's output", &said);
    let junit = std::fs::read_to_string(p.path().join("junit.xml")).unwrap();
    assert!(!junit.contains(['\u{1b}', '\u{7}']) && junit.contains("::error::planted"), "{junit}");
    let show = p.run(&["show", &format!("{}#fixture::chat::hello", run.manifest.run_id)]);
    assert_inert("show", &text(&show));
}

#[test]
fn foreign_text_in_a_measurements_folder_is_printed_escaped_by_board_show_and_diff() {
    use crate::board::{case, manifest, write};
    let p = Project::new("");
    let dir = p.path().join("m");
    std::fs::create_dir_all(&dir).unwrap();
    let runs: Vec<String> = ["alpha", "beta"]
        .iter()
        .enumerate()
        .map(|(i, target)| {
            let mut m = manifest(
                target,
                &format!("model-{target}{HOSTILE}"),
                "llama.cpp",
                &format!("2026-03-0{}T00:00:00Z", i + 1),
            );
            m.campaign = Some(sparktest_record::CampaignRef {
                id: format!("night{HOSTILE}\n| x | <b>bold</b>"),
                configuration: target.to_string(),
                configurations: vec!["alpha".into(), "beta".into()],
                partition: None,
            });
            let mut c = case("speed", "decode::prose", Outcome::Fail, &[("decode-tok-s", 10.0)], Some(HOSTILE));
            c.notes = vec![("note".into(), HOSTILE.into())];
            let id = m.run_id.clone();
            write(&dir, &format!("{target}.jsonl"), m, vec![c], true);
            id
        })
        .collect();
    // A damaged file whose very name is hostile: the warning names it.
    std::fs::write(dir.join(format!("bad{HOSTILE}.jsonl")), "not json\n").unwrap();
    let measurements = dir.display().to_string();
    let board = p.run(&["board", "--measurements", &measurements, "--out", "b"]);
    assert!(board.status.success(), "{}", text(&board));
    assert_inert("board's warnings", &text(&board));
    let md = std::fs::read_to_string(p.path().join("b/board.md")).unwrap();
    assert!(!md.contains(['\u{1b}', '\u{7}']), "board.md: raw ESC or BEL");
    assert!(!md.contains("<b>bold</b>"), "board.md: raw HTML from a campaign id");
    for line in md.lines() {
        assert!(!line.starts_with("::") && !line.starts_with("| x |"), "board.md: a line of foreign text: {line:?}");
    }
    let show = p.run(&["show", &format!("{}#speed::decode::prose", runs[0]), "--measurements", &measurements]);
    assert!(show.status.success(), "{}", text(&show));
    assert_inert("show", &text(&show));
    let diff = p.run(&["diff", &runs[0], &runs[1], "--measurements", &measurements]);
    assert_inert("diff", &text(&diff));
}
