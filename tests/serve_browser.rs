//! The inspector page of `vaultdm serve` in a real headless browser: Debian's Chromium,
//! driven through chromedriver's W3C WebDriver HTTP API.
//!
//! The test loads the page (with `?token=`, so every API call and the event stream carry
//! the token), previews a message, edits an NPC note on disk and waits for the page to show
//! the change live, then saves a screenshot to `target/serve-inspector.png`.
//!
//! Without chromedriver it is skipped, unless `VAULTDM_BROWSER_TEST=require` (CI sets it
//! when it installed the browser).

use crate::support;

use crate::support::webdriver::{base64_decode, chromedriver, Browser, KillOnDrop};
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TOKEN: &str = "insp3ctor-t0ken";

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

/// What the page shows, for failure messages.
const PAGE_STATE: &str = r#"
const t = (id) => { const e = document.getElementById(id); return e ? e.innerText : null; };
return { errors: t("errors"), status: t("status"), summary: t("summary"),
  campaign: t("campaign"), block: (t("block") || "").slice(0, 600), changes: t("changes"),
  diagnostics: t("diagnostics"), explain_rows: document.querySelectorAll('#explain tbody tr').length };
"#;

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
    support::copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("vault-template"),
        &vault,
    );
    let (_server, addr) = start_server(&vault);

    eprintln!("{:>6.1?} server up", t0.elapsed());
    let profile = tempfile::tempdir().expect("profile dir");
    let browser = Browser::start(&driver_bin, profile.path(), PAGE_STATE).await;
    let d = &browser.driver;
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
