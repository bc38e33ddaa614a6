//! SIGTERM and SIGHUP handled like Ctrl-C: a reply in flight stops, what arrived is saved,
//! then vaultdm exits.
//!
//! Closing the terminal (SIGHUP) or a process manager stopping vaultdm (SIGTERM) in the middle
//! of a reply must not lose the words already shown. A thread waits for those signals: while
//! a reply streams ([`ReplyGuard`] alive) it cancels the reply, which is then recorded as
//! cut off (`terminated`) before the command returns and exits with 128 + the signal number;
//! with no reply in flight there is nothing unsaved (every record is synced when written),
//! so the process exits at once with that code.

use crate::llm::CutOff;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::OnceLock;

static IN_REPLY: AtomicBool = AtomicBool::new(false);
static REQUESTED: AtomicI32 = AtomicI32::new(0);

fn notify() -> &'static tokio::sync::Notify {
    static N: OnceLock<tokio::sync::Notify> = OnceLock::new();
    N.get_or_init(tokio::sync::Notify::new)
}

/// Starts the signal thread (once per process; later calls do nothing).
pub(super) fn install() {
    static STARTED: OnceLock<()> = OnceLock::new();
    STARTED.get_or_init(|| {
        #[cfg(unix)]
        {
            use signal_hook::consts::{SIGHUP, SIGTERM};
            let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGTERM, SIGHUP]) else {
                return;
            };
            std::thread::spawn(move || {
                for sig in signals.forever() {
                    REQUESTED.store(sig, Ordering::SeqCst);
                    if IN_REPLY.load(Ordering::SeqCst) {
                        notify().notify_one();
                    } else {
                        std::process::exit(128 + sig);
                    }
                }
            });
        }
    });
}

/// Marks a reply in flight: a SIGTERM/SIGHUP now cancels it instead of exiting at once.
/// Keep it until the reply is recorded.
pub(super) struct ReplyGuard(());

impl ReplyGuard {
    /// Starts a guarded reply.
    pub(super) fn new() -> Self {
        IN_REPLY.store(true, Ordering::SeqCst);
        ReplyGuard(())
    }
}

impl Drop for ReplyGuard {
    fn drop(&mut self) {
        IN_REPLY.store(false, Ordering::SeqCst);
    }
}

/// Resolves when the GM (Ctrl-C) or the system (SIGTERM, SIGHUP) asks to stop, with the
/// reason to record on the reply.
pub(super) async fn cancelled() -> CutOff {
    if REQUESTED.load(Ordering::SeqCst) != 0 {
        return CutOff::Terminated;
    }
    tokio::select! {
        r = tokio::signal::ctrl_c() => match r {
            Ok(()) => CutOff::Interrupted,
            // No Ctrl-C handler could be set up: wait for the other signals only.
            Err(_) => { notify().notified().await; CutOff::Terminated }
        },
        () = notify().notified() => CutOff::Terminated,
    }
}

/// The exit code a termination signal asks for (128 + its number), once one arrived.
pub(super) fn exit_code() -> Option<u8> {
    match REQUESTED.load(Ordering::SeqCst) {
        0 => None,
        sig => u8::try_from(128 + sig).ok(),
    }
}
