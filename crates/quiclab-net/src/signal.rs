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

/// Puts SIGPIPE back to the default action (end the process), which Rust's runtime
/// sets to ignored: a reader that closes stdout early (`quiclab sim run ... | head`)
/// then ends a command quietly, as it does other Unix tools, instead of a panic in
/// `println!`. Sockets here are UDP, which raise no SIGPIPE. Call it first in `main`,
/// before any thread exists; the OS refusing the default action is ignored.
pub fn default_sigpipe() {
    use nix::sys::signal::{signal, SigHandler, Signal};
    // SAFETY: SIG_DFL runs no code in the handler, and no other thread exists yet
    // to race on the disposition (the caller's contract).
    let _ = unsafe { signal(Signal::SIGPIPE, SigHandler::SigDfl) };
}

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
