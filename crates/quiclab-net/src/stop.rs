//! Stopping one driver's loop from another thread: in-process servers and clients (the
//! lab, Python) cannot use a signal, which would stop every loop of the process.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Asks one [`crate::EndpointDriver`]'s loop to stop gracefully, from any thread (a
/// process uses [`crate::signal`] instead). Clones share the request.
#[derive(Clone, Debug, Default)]
pub struct StopHandle(Arc<StopState>);

#[derive(Debug, Default)]
struct StopState {
    requested: AtomicBool,
    /// Wakes the running loop's poll, so the stop is seen at once, not after its
    /// longest sleep.
    waker: Mutex<Option<Arc<mio::Waker>>>,
}

impl StopHandle {
    /// Requests the stop: the loop calls [`crate::Application::shutdown`] and runs on
    /// until the application is finished (as on SIGINT/SIGTERM). A request made before
    /// the loop runs takes effect at its first turn.
    pub fn stop(&self) {
        self.0.requested.store(true, Ordering::Relaxed);
        if let Some(w) = self.0.waker.lock().ok().and_then(|w| w.clone()) {
            let _ = w.wake();
        }
    }

    /// Whether [`StopHandle::stop`] was called.
    pub fn requested(&self) -> bool {
        self.0.requested.load(Ordering::Relaxed)
    }

    /// Installs the running loop's waker until the guard drops (the loop's end).
    pub(crate) fn install(&self, waker: mio::Waker) -> WakerInstalled<'_> {
        if let Ok(mut w) = self.0.waker.lock() {
            *w = Some(Arc::new(waker));
        }
        WakerInstalled(self)
    }
}

/// Removes the loop's waker from its [`StopHandle`] when the loop ends.
pub(crate) struct WakerInstalled<'a>(&'a StopHandle);

impl Drop for WakerInstalled<'_> {
    fn drop(&mut self) {
        if let Ok(mut w) = (self.0).0.waker.lock() {
            *w = None;
        }
    }
}
