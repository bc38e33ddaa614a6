//! `vaultdm watch`: print each reload's canon changes and diagnostics as they happen.

use super::format::Format;
use super::Outcome;
use crate::vault::Severity;
use crate::watch::{Backend, LiveWatch, Reload, WatchOptions};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Arguments of `watch`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Poll the folder instead of using native file events (network drives, WSL with the
    /// vault on a Windows drive, Docker bind mounts).
    #[arg(long)]
    pub poll: bool,
    /// Output format.
    #[arg(long, default_value = "text", value_parser = Format::described(
        "One line per reload, then one indented line per change and per diagnostic",
        "One JSON object per reload and line: `{changes, diagnostics, files, paths, elapsed_ms, full}`",
    ))]
    pub format: Format,
    /// How long a file must be quiet before its change is applied.
    #[arg(long, value_name = "MS", default_value_t = 150)]
    pub debounce_ms: u64,
}

/// Sets a flag on Ctrl-C instead of killing the process, so `watch` ends cleanly (exit 0).
fn on_ctrl_c() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("vaultdm-ctrlc".into())
        .spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .build()
            else {
                let _ = ready_tx.send(());
                return;
            };
            rt.block_on(async {
                let signal = tokio::signal::ctrl_c();
                tokio::pin!(signal);
                // Poll once so the handler is installed before we report ready.
                let installed = futures_util::FutureExt::now_or_never(&mut signal);
                let _ = ready_tx.send(());
                if installed.is_none() && signal.await.is_ok() {
                    flag.store(true, Ordering::SeqCst);
                }
            });
        });
    if spawned.is_ok() {
        let _ = ready_rx.recv_timeout(Duration::from_secs(1));
    }
    stop
}

fn write_reload(out: &mut impl Write, r: &Reload, format: Format) -> anyhow::Result<()> {
    match format {
        Format::Text => writeln!(out, "{r}")?,
        Format::Json => {
            serde_json::to_writer(&mut *out, r)?;
            writeln!(out)?;
        }
    }
    out.flush()?;
    Ok(())
}

/// Runs `watch` until Ctrl-C.
pub(super) fn execute(root: &Path, args: Args) -> anyhow::Result<Outcome> {
    let stop = on_ctrl_c();
    let opts = WatchOptions {
        poll: args.poll,
        debounce: Duration::from_millis(args.debounce_ms.max(10)),
        ..WatchOptions::default()
    };
    let mut lw = LiveWatch::start(root, &opts)?;
    let mut err = std::io::stderr().lock();
    if let Some(reason) = lw.watcher().fallback_reason() {
        writeln!(
            err,
            "vaultdm: native file events unavailable ({reason}); polling every {} s instead",
            opts.poll_interval.as_secs_f64()
        )?;
    }
    let c = lw.live().campaign();
    let errors = lw
        .live()
        .diagnostics()
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    writeln!(
        err,
        "watching {} ({}): {} notes, {} PCs, {} NPCs, {} locations; Ctrl-C to stop",
        lw.watcher().root().display(),
        lw.watcher().backend(),
        lw.live().loaded().vault.notes.len(),
        c.pcs.len(),
        c.npcs.len(),
        c.locations.len()
    )?;
    if errors > 0 {
        writeln!(
            err,
            "{errors} error(s) in the vault now; `vaultdm check` lists them"
        )?;
    }
    if lw.watcher().backend() == Backend::Native {
        if let Some(hint) = wsl_hint(lw.watcher().root()) {
            writeln!(err, "{hint}")?;
        }
    }
    drop(err);
    let mut out = super::stdout();
    while !stop.load(Ordering::SeqCst) {
        if let Some(r) = lw.wait_reload(Duration::from_millis(200)) {
            write_reload(&mut out, &r, args.format)?;
        }
        for e in lw.take_errors() {
            let _ = writeln!(std::io::stderr(), "vaultdm: watch: {e}");
        }
    }
    out.flush()?;
    Ok(Outcome::Ok)
}

/// Native events do not reach WSL for files on a Windows drive (`/mnt/c/...`).
fn wsl_hint(root: &Path) -> Option<&'static str> {
    let on_windows_drive = root
        .to_str()
        .and_then(|s| s.strip_prefix("/mnt/"))
        .is_some_and(|s| {
            s.len() >= 2 && s.as_bytes()[0].is_ascii_alphabetic() && s.as_bytes()[1] == b'/'
        });
    let wsl = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .is_ok_and(|r| r.to_lowercase().contains("microsoft"));
    (on_windows_drive && wsl).then_some(
        "note: the vault is on a Windows drive under WSL, where edits made in Windows send no file events; if changes do not show up, run `vaultdm watch --poll`",
    )
}
