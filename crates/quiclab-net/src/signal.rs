//! SIGINT/SIGTERM as a flag the event loop polls, for a clean shutdown: the server
//! closes its connections (CONNECTION_CLOSE, RFC 9000 §10.2) instead of dying mid-flight.
//! A second signal ends the process at once (exit status 130), in case the shutdown
//! hangs. The handlers are signal-hook's; a blocked `epoll_wait` returns EINTR on a
//! signal whatever SA_RESTART says (signal(7)), so the loop sees the flag at once.

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::flag;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

static STOP: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();

/// Whether a stop signal arrived since [`install`].
pub fn stop_requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// Routes SIGINT and SIGTERM to the stop flag (once per process; later calls do
/// nothing). Panics only if the OS refuses a handler for these two signals.
pub fn install() {
    INSTALL.call_once(|| {
        for sig in [SIGINT, SIGTERM] {
            // The shutdown goes first: it fires only when the flag was already set.
            flag::register_conditional_shutdown(sig, 130, &STOP)
                .and_then(|_| flag::register(sig, &STOP))
                .expect("installing a SIGINT/SIGTERM handler");
        }
    });
}
