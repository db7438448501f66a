//! A headless Chromium driven over the W3C WebDriver protocol by
//! ChromeDriver. The protocol is a few JSON calls; they go through the
//! harness's own reqwest client rather than a WebDriver crate (the crates
//! bring their own TLS stacks for what is loopback-only here).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::repo;

const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A browser session; the driver is killed on drop.
pub struct Browser {
    rt: tokio::runtime::Runtime,
    http: reqwest::Client,
    base: String,
    session: String,
    driver: Child,
    _profile: tempfile::TempDir,
}

fn tools() -> (String, String) {
    let out =
        Command::new("bash").arg(repo().join("scripts/browser.sh")).output().expect("failed to run scripts/browser.sh");
    assert!(out.status.success(), "scripts/browser.sh: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let get = |k: &str| text.lines().find_map(|l| l.strip_prefix(&format!("{k}="))).unwrap().to_string();
    (get("chromium"), get("chromedriver"))
}

impl Browser {
    /// A laptop's screen; the default 800 × 600 leaves the sticky column
    /// headers (name, marks, battery) covering the rows.
    pub fn start() -> Browser {
        Browser::start_at(1366, 768)
    }

    /// A browser whose window is `width` × `height`.
    pub fn start_at(width: u32, height: u32) -> Browser {
        let (chromium, chromedriver) = tools();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let driver = Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("failed to start chromedriver");
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let http = sparktest_endpoint::http_builder().build().unwrap();
        let base = format!("http://127.0.0.1:{port}");
        let started = Instant::now();
        loop {
            let ready =
                rt.block_on(async { http.get(format!("{base}/status")).send().await.ok()?.json::<Value>().await.ok() });
            if ready.as_ref().and_then(|v| v.pointer("/value/ready")).and_then(Value::as_bool) == Some(true) {
                break;
            }
            assert!(started.elapsed() < Duration::from_secs(30), "chromedriver did not become ready");
            std::thread::sleep(Duration::from_millis(100));
        }
        let profile = tempfile::tempdir().unwrap();
        // Headless, no sandbox (root in CI), and no background traffic: the
        // machine's network is closed, and the board must need none.
        let args = [
            "--headless=new".to_string(),
            "--no-sandbox".into(),
            "--disable-gpu".into(),
            "--disable-dev-shm-usage".into(),
            "--disable-background-networking".into(),
            "--disable-component-update".into(),
            "--disable-sync".into(),
            "--disable-quic".into(),
            "--no-first-run".into(),
            format!("--window-size={width},{height}"),
            format!("--user-data-dir={}", profile.path().display()),
        ];
        let caps = json!({"capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": {"binary": chromium, "args": args}}}});
        let mut b = Browser { rt, http, base, session: String::new(), driver, _profile: profile };
        let v = b.call("POST", "/session", caps);
        b.session = v["sessionId"].as_str().expect("a session id").to_string();
        b
    }

    fn call(&self, method: &str, path: &str, body: Value) -> Value {
        let url = format!("{}{path}", self.base);
        let v: Value = self.rt.block_on(async {
            let req = match method {
                "POST" => self.http.post(&url).json(&body),
                "DELETE" => self.http.delete(&url),
                _ => self.http.get(&url),
            };
            req.send().await.unwrap().json().await.unwrap()
        });
        assert!(v["value"].get("error").is_none(), "WebDriver {method} {path}: {v}");
        v["value"].clone()
    }

    fn at(&self, rest: &str) -> String {
        format!("/session/{}{rest}", self.session)
    }

    pub fn open(&self, url: &str) {
        self.call("POST", &self.at("/url"), json!({"url": url}));
    }

    /// Run a script in the page and return its value.
    pub fn eval(&self, script: &str) -> Value {
        self.call("POST", &self.at("/execute/sync"), json!({"script": script, "args": []}))
    }

    /// Click the first element matching a CSS selector, as a user would.
    pub fn click(&self, css: &str) {
        let el = self.call("POST", &self.at("/element"), json!({"using": "css selector", "value": css}));
        let id = el[ELEMENT].as_str().expect("an element").to_string();
        self.call("POST", &self.at(&format!("/element/{id}/click")), json!({}));
    }

    /// What the window shows now, as PNG bytes.
    pub fn screenshot(&self) -> Vec<u8> {
        let v = self.call("GET", &self.at("/screenshot"), Value::Null);
        base64_decode(v.as_str().expect("a base64 screenshot"))
    }
}

/// Standard base64 (the screenshot's encoding) to bytes; a dozen lines
/// rather than a crate for the one call.
fn base64_decode(s: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {:?}", c as char),
    };
    let digits: Vec<u8> = s.bytes().filter(|c| !c.is_ascii_whitespace() && *c != b'=').map(value).collect();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, d)| n | u32::from(*d) << (18 - 6 * i));
        out.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let url = format!("{}/session/{}", self.base, self.session);
            let _ = self.rt.block_on(async { self.http.delete(&url).send().await });
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
