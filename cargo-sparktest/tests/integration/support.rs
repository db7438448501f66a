//! Running `cargo sparktest` as a user would, in a throwaway project folder,
//! against the real reference server.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use sparktest_record::{CaseRecord, Manifest, Outcome, Summary};

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

pub fn suite(name: &str) -> String {
    repo().join("suites").join(name).display().to_string()
}

pub fn fixture_suite() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suites/fixture").display().to_string()
}

/// A project folder with its own `sparktest.toml`; measurements and
/// snapshots stay inside it.
pub struct Project {
    pub dir: tempfile::TempDir,
}

impl Project {
    pub fn new(extra: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let config = format!(
            "[run]\nmeasurements-dir = \"measurements\"\nsnapshots-dir = \"snapshots\"\nfuel-per-case = 2_000_000_000\nmemory-per-instance-mib = 64\n{extra}\n"
        );
        std::fs::write(dir.path().join("sparktest.toml"), config).unwrap();
        Project { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cargo-sparktest"));
        cmd.arg("sparktest").args(args).current_dir(self.path()).env_remove("INSTA_UPDATE");
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// Every measurement file, parsed.
    pub fn measurements(&self) -> Vec<Run> {
        let dir = self.path().join("measurements");
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|d| d.map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "jsonl")).collect())
            .unwrap_or_default();
        files.sort();
        files.iter().map(|f| Run::parse(&std::fs::read_to_string(f).unwrap())).collect()
    }

    /// Case records on disk so far, in the first measurement file, while a
    /// run may still be writing it (a file just created, a line half
    /// written): what polling tests wait on.
    pub fn cases_written(&self) -> usize {
        let dir = self.path().join("measurements");
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|d| {
                d.filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        let Some(text) = files.first().and_then(|f| std::fs::read_to_string(f).ok()) else {
            return 0;
        };
        sparktest_record::reader::File::<sparktest_record::reader::Unread>::parse(&text)
            .map(|f| f.run.cases.len())
            .unwrap_or(0)
    }
}

/// One measurement file.
pub struct Run {
    pub manifest: Manifest,
    pub cases: Vec<CaseRecord>,
    pub summary: Option<Summary>,
}

impl Run {
    /// A whole file: a damaged line fails the test.
    pub fn parse(text: &str) -> Self {
        let file = sparktest_record::reader::File::<sparktest_record::CallRecord>::parse(text).unwrap();
        assert!(file.damage.is_none(), "{:?}", file.damage);
        Run { manifest: file.run.manifest, cases: file.run.cases, summary: file.run.summary }
    }

    pub fn case(&self, id: &str) -> &CaseRecord {
        self.cases.iter().find(|c| c.id == id).unwrap_or_else(|| panic!("no record for {id}"))
    }

    pub fn count(&self, outcome: Outcome) -> usize {
        self.cases.iter().filter(|c| c.outcome == outcome).count()
    }
}

pub fn text(out: &Output) -> String {
    format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// A reference llama-server the test starts and kills itself.
pub struct Server {
    child: Child,
    pub url: String,
}

impl Server {
    pub fn start() -> Self {
        let out = Command::new("bash").arg(repo().join("scripts/reference-target.sh")).output().unwrap();
        assert!(out.status.success(), "provisioning failed: {}", text(&out));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let get = |key: &str| stdout.lines().find_map(|l| l.strip_prefix(&format!("{key}="))).unwrap().to_string();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new(get("server"))
            .args(["--model", &get("model"), "--alias", "SmolLM2-135M-Instruct-Q4_1", "--host", "127.0.0.1"])
            .args(["--port", &port.to_string(), "--threads", "1", "--parallel", "2", "--ctx-size", "8192"])
            .args(["--jinja", "--metrics"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let url = format!("http://127.0.0.1:{port}");
        let started = Instant::now();
        loop {
            if healthy(port) {
                break;
            }
            assert!(started.elapsed() < Duration::from_secs(120), "reference server did not start");
            std::thread::sleep(Duration::from_millis(200));
        }
        Server { child, url }
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `GET /health` answered 200.
fn healthy(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    if stream.write_all(b"GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").is_err() {
        return false;
    }
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).is_ok() && head.ends_with(b"200")
}

/// A case's metric by name.
pub fn metric(c: &CaseRecord, name: &str) -> Option<f64> {
    c.metrics.iter().find(|m| m.name == name).map(|m| m.value)
}

/// A case's note by key.
pub fn note<'a>(c: &'a CaseRecord, key: &str) -> Option<&'a str> {
    c.notes.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

pub fn test_suite(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suites").join(name).display().to_string()
}

/// Cargo's target directory: `CARGO_TARGET_DIR` where it is set (a shared
/// one, a worktree's build), else the workspace's `target/`.
pub fn target_dir() -> std::path::PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| repo().join("target"), Into::into)
}

/// One vLLM test at a time, across the binary (the engine tests and the
/// sustained-load one): each serve holds ~5.5 GB and both cores while it
/// starts, and binds its worker to core 0; two at once would crowd the
/// rest of the suite out of a 24 GB, 2-core machine. Under nextest, a
/// process a test, the test group `vllm` in `.config/nextest.toml` does
/// this instead.
pub fn one_vllm_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static VLLM: std::sync::Mutex<()> = std::sync::Mutex::new(());
    VLLM.lock().unwrap_or_else(|p| p.into_inner())
}
