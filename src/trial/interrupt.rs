//! Ctrl-C and SIGTERM: the running trial is stopped and cleaned up, and the
//! study ends with an error that says how to resume it.

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_interrupt(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Makes Ctrl-C (and SIGTERM) stop kvtune between polls instead of at once,
/// so the running trial's directory and cgroup are removed.
/// A second signal ends kvtune at once (SA_RESETHAND), in case the clean
/// stop itself hangs.
pub fn stop_cleanly_on_interrupt() {
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe;
    // the sigaction struct is zeroed and then filled in as the man page says.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_interrupt as *const () as libc::sighandler_t;
        action.sa_flags = libc::SA_RESETHAND;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
        libc::sigaction(libc::SIGTERM, &action, std::ptr::null_mut());
    }
}

/// Whether Ctrl-C (or SIGTERM) came.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// The error a study ends with when interrupted.
#[derive(Debug, thiserror::Error)]
#[error("interrupted")]
pub struct Interrupted;
