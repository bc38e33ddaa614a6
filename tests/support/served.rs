//! A `vaultdm serve` child process for tests: started on 127.0.0.1:0 (or as asked), its
//! address read from its stderr, stopped by SIGTERM or killed when dropped.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A running server.
pub(crate) struct Served {
    child: Child,
    /// `127.0.0.1:PORT` (a 0.0.0.0 bind is reached through loopback).
    pub addr: String,
    stderr: Arc<Mutex<String>>,
}

impl Served {
    /// Starts `vaultdm serve --vault VAULT ARGS…` with a clean environment plus `env`.
    pub(crate) fn start(vault: &Path, args: &[&str], env: &[(&str, &str)]) -> Served {
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("vaultdm"));
        cmd.env_clear()
            .env("HOME", vault.join("no-home"))
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .arg("serve")
            .arg("--vault")
            .arg(vault);
        if !args.contains(&"--listen") {
            cmd.args(["--listen", "127.0.0.1:0"]);
        }
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("start vaultdm serve");
        let err = child.stderr.take().expect("stderr");
        let stderr = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let log = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("listening on http://").nth(1) {
                    let addr = rest.split_whitespace().next().unwrap_or("").to_owned();
                    let _ = tx.send(addr);
                }
                if let Ok(mut l) = log.lock() {
                    l.push_str(&line);
                    l.push('\n');
                }
            }
        });
        let addr = match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(a) => a,
            Err(_) => {
                let _ = child.kill();
                panic!(
                    "vaultdm serve did not start: {}",
                    stderr.lock().map(|s| s.clone()).unwrap_or_default()
                );
            }
        };
        let addr = addr.replace("0.0.0.0:", "127.0.0.1:");
        Served {
            child,
            addr,
            stderr,
        }
    }

    /// `http://ADDR{path}`.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// What the server printed so far.
    pub(crate) fn stderr(&self) -> String {
        self.stderr.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// The child's pid.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends SIGTERM and waits (at most `within`) for the exit.
    pub(crate) fn terminate(&mut self, within: Duration) -> Option<ExitStatus> {
        let pid = i32::try_from(self.child.id()).expect("pid");
        let _ = Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status();
        let start = Instant::now();
        while start.elapsed() < within {
            if let Ok(Some(s)) = self.child.try_wait() {
                return Some(s);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `data:` payloads of a server-sent event stream, in order.
pub(crate) fn sse_data(body: &str) -> Vec<String> {
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| d.trim_start().to_owned())
        .collect()
}

/// The text of an OpenAI chat.completion.chunk stream, and the finish reason.
pub(crate) fn stream_text(body: &str) -> (String, Option<String>) {
    let mut text = String::new();
    let mut finish = None;
    for d in sse_data(body) {
        if d == "[DONE]" {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(&d).expect("chunk json");
        if let Some(c) = v["choices"][0]["delta"]["content"].as_str() {
            text.push_str(c);
        }
        if let Some(f) = v["choices"][0]["finish_reason"].as_str() {
            finish = Some(f.to_owned());
        }
    }
    (text, finish)
}
