//! SIGINT/SIGTERM as a flag the event loop polls, for a clean shutdown: the server
//! closes its connections (CONNECTION_CLOSE, RFC 9000 §10.2) instead of dying mid-flight.
//! A second signal ends the process at once, in case the shutdown hangs.

use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);

/// Whether a stop signal arrived since [`install`].
pub fn stop_requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

extern "C" fn on_signal(_: libc::c_int) {
    if STOP.swap(true, Ordering::Relaxed) {
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(130) };
    }
}

/// Routes SIGINT and SIGTERM to the stop flag. Without SA_RESTART, so a blocked
/// `epoll_wait` returns EINTR and the loop sees the flag at once.
pub fn install() {
    let handler: extern "C" fn(libc::c_int) = on_signal;
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction with a valid handler and an empty mask is valid;
        // the handler only touches an atomic and calls _exit.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = handler as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
}
