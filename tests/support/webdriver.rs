//! A headless Chromium driven through chromedriver's W3C WebDriver HTTP API (Debian's
//! `chromium` and `chromium-driver`), for the tests that use a real browser.

#![allow(dead_code)]

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The key of an element reference in WebDriver answers.
pub(crate) const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// Kills its child process when dropped, panic or not.
pub(crate) struct KillOnDrop(pub Child, pub &'static str);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
        eprintln!("stopped {}", self.1);
    }
}

/// Deletes the WebDriver session when dropped (so a failing test leaves no browser behind),
/// with a plain blocking request: a destructor cannot await.
pub(crate) struct EndSession {
    pub driver: String,
    pub id: String,
}

impl Drop for EndSession {
    fn drop(&mut self) {
        use std::io::{Read, Write};
        let t = Instant::now();
        let Ok(mut s) = std::net::TcpStream::connect(&self.driver) else {
            return;
        };
        let _ = s.set_read_timeout(Some(Duration::from_secs(20)));
        let req = format!(
            "DELETE /session/{} HTTP/1.1\r\nHost: {}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            self.id, self.driver
        );
        // chromedriver keeps the connection open: read the head and the body it announces.
        let mut buf = Vec::new();
        if s.write_all(req.as_bytes()).is_ok() {
            let mut chunk = [0u8; 4096];
            while let Ok(n @ 1..) = s.read(&mut chunk) {
                buf.extend_from_slice(&chunk[..n]);
                let text = String::from_utf8_lossy(&buf);
                if let Some(end) = text.find("\r\n\r\n") {
                    let length = text[..end]
                        .lines()
                        .find_map(|l| {
                            let (k, v) = l.split_once(':')?;
                            k.eq_ignore_ascii_case("content-length")
                                .then(|| v.trim().parse::<usize>().ok())?
                        })
                        .unwrap_or(0);
                    if buf.len() >= end + 4 + length {
                        break;
                    }
                }
            }
        }
        let answer = String::from_utf8_lossy(&buf);
        eprintln!(
            "deleted the WebDriver session ({:.1?}): {}",
            t.elapsed(),
            answer.lines().next().unwrap_or("no answer")
        );
    }
}

pub(crate) fn chromedriver() -> Option<PathBuf> {
    let fixed = Path::new("/usr/bin/chromedriver");
    if fixed.is_file() {
        return Some(fixed.to_path_buf());
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("chromedriver"))
            .find(|p| p.is_file())
    })
}

pub(crate) fn chromium() -> String {
    for p in ["/usr/bin/chromium", "/usr/bin/chromium-browser"] {
        if Path::new(p).is_file() {
            return p.to_owned();
        }
    }
    "chromium".to_owned()
}

pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind a free port")
        .local_addr()
        .expect("local addr")
        .port()
}

/// A WebDriver session.
pub(crate) struct Driver {
    pub http: reqwest::Client,
    pub base: String,
    /// A script whose result describes the page, shown when a wait times out.
    pub page_state: &'static str,
}

impl Driver {
    pub(crate) async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Value {
        let url = format!("{}{path}", self.base);
        let mut req = self.http.request(method.clone(), &url);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req
            .send()
            .await
            .unwrap_or_else(|e| panic!("{method} {url}: {e}"));
        let status = resp.status();
        let v: Value = resp
            .json()
            .await
            .unwrap_or_else(|e| panic!("{method} {url}: not JSON: {e}"));
        assert!(status.is_success(), "{method} {url}: {status} {v}");
        v["value"].clone()
    }

    pub(crate) async fn post(&self, path: &str, body: Value) -> Value {
        self.call(reqwest::Method::POST, path, Some(body)).await
    }

    pub(crate) async fn js(&self, script: &str) -> Value {
        self.post("/execute/sync", json!({"script": script, "args": []}))
            .await
    }

    pub(crate) async fn element(&self, css: &str) -> String {
        let v = self
            .post("/element", json!({"using": "css selector", "value": css}))
            .await;
        v[ELEMENT]
            .as_str()
            .unwrap_or_else(|| panic!("no element {css}: {v}"))
            .to_owned()
    }

    /// Runs `script` until it returns something truthy (up to `secs`), and returns that.
    pub(crate) async fn wait_for(&self, what: &str, script: &str, secs: u64) -> Value {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let v = self.js(script).await;
            let truthy = match &v {
                Value::Null | Value::Bool(false) => false,
                Value::String(s) => !s.is_empty(),
                _ => true,
            };
            if truthy {
                return v;
            }
            if Instant::now() > deadline {
                let page = self.js(self.page_state).await;
                panic!("timed out after {secs} s waiting for {what}; the page: {page:#}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// chromedriver started on a free port with one headless browser session (its profile in
/// `profile`). Dropped in order: the session ends, then chromedriver stops.
pub(crate) struct Browser {
    /// The session's driver.
    pub driver: Driver,
    _session: EndSession,
    _chromedriver: KillOnDrop,
}

impl Browser {
    /// Starts chromedriver (`driver_bin`) and a browser session with a window of 1400x1000.
    pub(crate) async fn start(
        driver_bin: &Path,
        profile: &Path,
        page_state: &'static str,
    ) -> Browser {
        let port = free_port();
        let chromedriver = KillOnDrop(
            Command::new(driver_bin)
                .arg(format!("--port={port}"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start chromedriver"),
            "chromedriver",
        );
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .expect("http client");
        let wd = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let ready = match http.get(format!("{wd}/status")).send().await {
                Ok(r) => r
                    .json::<Value>()
                    .await
                    .is_ok_and(|v| v["value"]["ready"] == json!(true)),
                Err(_) => false,
            };
            if ready {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "chromedriver did not become ready on port {port}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium(),
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync",
                    "--window-size=1400,1000",
                    format!("--user-data-dir={}", profile.display()),
                ],
            },
        }}});
        let session = Driver {
            http: http.clone(),
            base: wd.clone(),
            page_state,
        }
        .post("/session", caps)
        .await;
        let id = session["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session id: {session}"))
            .to_owned();
        Browser {
            driver: Driver {
                http,
                base: format!("{wd}/session/{id}"),
                page_state,
            },
            _session: EndSession {
                driver: format!("127.0.0.1:{port}"),
                id,
            },
            _chromedriver: chromedriver,
        }
    }
}

/// Standard base64 (as WebDriver screenshots are), padding and whitespace allowed.
pub(crate) fn base64_decode(s: &str) -> Vec<u8> {
    fn val(c: u8) -> u32 {
        match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("not base64: {:?}", c as char),
        }
    }
    let digits: Vec<u8> = s
        .bytes()
        .filter(|c| !c.is_ascii_whitespace() && *c != b'=')
        .collect();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= val(c) << (18 - 6 * i);
        }
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    out
}

#[test]
pub(crate) fn base64_decodes() {
    assert_eq!(base64_decode("aGVsbG8="), b"hello");
    assert_eq!(base64_decode("aGVsbG8h"), b"hello!");
    assert_eq!(base64_decode("aGk="), b"hi");
    assert_eq!(base64_decode(""), b"");
}
