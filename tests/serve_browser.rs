//! The inspector page of `vaultdm serve` in a real headless browser: Debian's Chromium,
//! driven through chromedriver's W3C WebDriver HTTP API.
//!
//! The test loads the page (with `?token=`, so every API call and the event stream carry
//! the token), previews a message, edits an NPC note on disk and waits for the page to show
//! the change live, then saves a screenshot to `target/serve-inspector.png`.
//!
//! Without chromedriver it is skipped, unless `VAULTDM_BROWSER_TEST=require` (CI sets it
//! when it installed the browser).

mod common;

use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const TOKEN: &str = "insp3ctor-t0ken";
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// Kills its child process when dropped, panic or not.
struct KillOnDrop(Child, &'static str);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
        eprintln!("stopped {}", self.1);
    }
}

/// Deletes the WebDriver session when dropped (so a failing test leaves no browser behind),
/// with a plain blocking request: a destructor cannot await.
struct EndSession {
    driver: String,
    id: String,
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

fn chromedriver() -> Option<PathBuf> {
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

fn chromium() -> String {
    for p in ["/usr/bin/chromium", "/usr/bin/chromium-browser"] {
        if Path::new(p).is_file() {
            return p.to_owned();
        }
    }
    "chromium".to_owned()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind a free port")
        .local_addr()
        .expect("local addr")
        .port()
}

/// Starts `vaultdm serve` on the vault and returns it with its address (`127.0.0.1:PORT`).
fn start_server(vault: &Path) -> (KillOnDrop, String) {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("vaultdm"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--token",
            TOKEN,
            "--vault",
        ])
        .arg(vault)
        .env_remove("VAULTDM_SERVE_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start vaultdm serve");
    let stderr = child.stderr.take().expect("piped stderr");
    let guard = KillOnDrop(child, "vaultdm serve");
    let (tx, rx) = std::sync::mpsc::channel();
    // Reads stderr to its end so the server never blocks on a full pipe.
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            eprintln!("[serve] {line}");
            if let Some(rest) = line.split("listening on http://").nth(1) {
                let addr = rest
                    .split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_owned();
                let _ = tx.send(addr);
            }
        }
    });
    let addr = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("vaultdm serve printed `listening on http://ADDR`");
    (guard, addr)
}

/// A WebDriver session.
struct Driver {
    http: reqwest::Client,
    base: String,
}

impl Driver {
    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
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

    async fn post(&self, path: &str, body: Value) -> Value {
        self.call(reqwest::Method::POST, path, Some(body)).await
    }

    async fn js(&self, script: &str) -> Value {
        self.post("/execute/sync", json!({"script": script, "args": []}))
            .await
    }

    async fn element(&self, css: &str) -> String {
        let v = self
            .post("/element", json!({"using": "css selector", "value": css}))
            .await;
        v[ELEMENT]
            .as_str()
            .unwrap_or_else(|| panic!("no element {css}: {v}"))
            .to_owned()
    }

    /// Runs `script` until it returns something truthy (up to `secs`), and returns that.
    async fn wait_for(&self, what: &str, script: &str, secs: u64) -> Value {
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
                let page = self.js(PAGE_STATE).await;
                panic!("timed out after {secs} s waiting for {what}; the page: {page:#}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// What the page shows, for failure messages.
const PAGE_STATE: &str = r#"
const t = (id) => { const e = document.getElementById(id); return e ? e.innerText : null; };
return { errors: t("errors"), status: t("status"), summary: t("summary"),
  campaign: t("campaign"), block: (t("block") || "").slice(0, 600), changes: t("changes"),
  diagnostics: t("diagnostics"), explain_rows: document.querySelectorAll('#explain tbody tr').length };
"#;

/// Standard base64 (as WebDriver screenshots are), padding and whitespace allowed.
fn base64_decode(s: &str) -> Vec<u8> {
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
fn base64_decodes() {
    assert_eq!(base64_decode("aGVsbG8="), b"hello");
    assert_eq!(base64_decode("aGVsbG8h"), b"hello!");
    assert_eq!(base64_decode("aGk="), b"hi");
    assert_eq!(base64_decode(""), b"");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspector_page_in_headless_chromium() {
    let required = std::env::var("VAULTDM_BROWSER_TEST").is_ok_and(|v| v == "require");
    let Some(driver_bin) = chromedriver() else {
        assert!(
            !required,
            "VAULTDM_BROWSER_TEST=require but chromedriver is not installed (apt-get install chromium chromium-driver)"
        );
        println!("skipped: chromedriver not installed (apt-get install chromium chromium-driver)");
        return;
    };

    let t0 = Instant::now();
    // The vault, in a folder named like the template so the campaign id is `vault-template`.
    let tmp = tempfile::tempdir().expect("tempdir");
    let vault = tmp.path().join("vault-template");
    common::copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("vault-template"),
        &vault,
    );
    let (_server, addr) = start_server(&vault);

    eprintln!("{:>6.1?} server up", t0.elapsed());
    // chromedriver.
    let port = free_port();
    let _chromedriver = KillOnDrop(
        Command::new(&driver_bin)
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

    eprintln!("{:>6.1?} chromedriver ready", t0.elapsed());
    // The browser session.
    let profile = tempfile::tempdir().expect("profile dir");
    let caps = json!({"capabilities": {"alwaysMatch": {
        "browserName": "chrome",
        "goog:chromeOptions": {
            "binary": chromium(),
            "args": [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync",
                "--window-size=1400,1000",
                format!("--user-data-dir={}", profile.path().display()),
            ],
        },
    }}});
    let session = Driver {
        http: http.clone(),
        base: wd.clone(),
    }
    .post("/session", caps)
    .await;
    let id = session["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("no session id: {session}"))
        .to_owned();
    let d = Driver {
        http: http.clone(),
        base: format!("{wd}/session/{id}"),
    };
    // Dropped first: the session ends before chromedriver stops.
    let _session = EndSession {
        driver: format!("127.0.0.1:{port}"),
        id,
    };

    eprintln!("{:>6.1?} browser session", t0.elapsed());
    // The page finds the campaign and connects to its event stream.
    d.post(
        "/url",
        json!({"url": format!("http://{addr}/?token={TOKEN}")}),
    )
    .await;
    d.wait_for(
        "the campaign in #campaign",
        r#"return [...document.querySelectorAll('#campaign option')].some(o => o.value === "vault-template");"#,
        10,
    )
    .await;
    d.wait_for(
        "the event stream (#status live)",
        r#"return document.getElementById("status").textContent === "live";"#,
        10,
    )
    .await;
    let counts = d
        .js(r#"return document.getElementById("counts").textContent;"#)
        .await;
    assert!(
        counts.as_str().is_some_and(|c| c.contains("13 NPCs")),
        "{counts}"
    );

    eprintln!("{:>6.1?} page live", t0.elapsed());
    // Type a message and preview it.
    let message = d.element("#message").await;
    d.post(
        &format!("/element/{message}/value"),
        json!({"text": "I ask Odessa Flint about the canary"}),
    )
    .await;
    let button = d.element("#preview").await;
    d.post(&format!("/element/{button}/click"), json!({})).await;
    let block = d
        .wait_for(
            "#block with Odessa Flint's mention card and #explain rows",
            // The card, not just her name: the page's first preview (the full context of
            // an empty message) names her too, and may still be showing.
            r#"const b = document.getElementById("block").textContent;
               const rows = document.querySelectorAll('#explain tbody tr').length;
               return b.includes("NPC Odessa Flint - owner of the Brass Canary") && rows > 0 ? b : null;"#,
            10,
        )
        .await;
    assert!(block
        .as_str()
        .is_some_and(|b| b.contains("NPC Odessa Flint - owner of the Brass Canary")));
    let explain = d
        .js(r#"return [...document.querySelectorAll('#explain tbody tr')].map(r => [...r.cells].map(c => c.textContent));"#)
        .await;
    let rows = explain.as_array().expect("explain rows");
    assert!(
        rows.iter().any(|r| r[0] == "+"
            && r[1] == "npc"
            && r[2] == "Odessa Flint"
            && r[4]
                .as_str()
                .is_some_and(|s| s.contains("mentioned as \"Odessa Flint\""))
            && r[5] == "canon/npcs/odessa-flint.md:1"),
        "no included row for Odessa Flint: {explain:#}"
    );
    assert!(
        rows.iter().any(|r| r[0] == "-"),
        "no left-out row: {explain:#}"
    );
    let summary = d
        .js(r#"return document.getElementById("summary").textContent;"#)
        .await;
    assert!(
        summary
            .as_str()
            .is_some_and(|s| s.contains("tokens") && s.contains("mode")),
        "{summary}"
    );
    d.wait_for(
        "#diagnostics to say no problems",
        r#"return document.getElementById("diagnostics").textContent.includes("no problems");"#,
        10,
    )
    .await;

    eprintln!("{:>6.1?} previewed", t0.elapsed());
    // Edit her note on disk: the page hears of it and shows the new canon.
    let note = vault.join("canon/npcs/odessa-flint.md");
    let text = std::fs::read_to_string(&note).expect("read Odessa's note");
    assert!(text.contains("role: owner of the Brass Canary\n"), "{text}");
    std::fs::write(
        &note,
        text.replacen(
            "role: owner of the Brass Canary\n",
            "role: widowed keeper of the Brass Canary\n",
            1,
        ),
    )
    .expect("edit Odessa's note");
    let changes = d
        .wait_for(
            "the change in #changes and the new role in #block",
            r#"const c = document.getElementById("changes").textContent;
               const b = document.getElementById("block").textContent;
               return c.includes("Odessa Flint: role") && b.includes("widowed keeper of the Brass Canary") ? c : null;"#,
            10,
        )
        .await;
    assert!(
        changes
            .as_str()
            .is_some_and(|c| c.contains("-> widowed keeper of the Brass Canary")),
        "{changes}"
    );
    let errors = d
        .js(r#"return document.getElementById("errors").textContent;"#)
        .await;
    assert_eq!(errors, json!(""), "the page shows errors");

    eprintln!("{:>6.1?} live update seen", t0.elapsed());
    // A screenshot, to look at.
    let shot = d
        .call(reqwest::Method::GET, "/screenshot", None)
        .await
        .as_str()
        .expect("screenshot is base64")
        .to_owned();
    let png = base64_decode(&shot);
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target dir")
        .to_path_buf();
    let path = target.join("serve-inspector.png");
    std::fs::write(&path, &png).expect("write the screenshot");
    println!("screenshot: {} ({} bytes)", path.display(), png.len());
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    assert!(png.len() > 5 * 1024, "a {}-byte screenshot", png.len());

    eprintln!("{:>6.1?} screenshot", t0.elapsed());
    // An API error is shown, not swallowed: ask for a mode the server does not know.
    d.js(r#"const m = document.getElementById("mode");
            m.add(new Option("bogus")); m.value = "bogus";
            m.dispatchEvent(new Event("change"));"#)
        .await;
    d.wait_for(
        "the API's error message in #errors",
        r#"const e = document.getElementById("errors");
           return e.offsetParent !== null && e.textContent.includes("mode `bogus` is not full, light or auto");"#,
        10,
    )
    .await;
    eprintln!("{:>6.1?} error shown", t0.elapsed());
}
