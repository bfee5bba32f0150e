//! A misbehaving peer for the pair harness: packets the normal send path never builds
//! ([`Pair::send_crafted`]) and transport parameters rewritten before TLS sends them
//! ([`with_tampered_transport_parameters`]). Tests use them to check that the other
//! side answers each RFC violation with the RFC's error, and keeps its memory bounded.

use super::{Pair, To};
use crate::connection::SpaceId;
use crate::wire::{ConnectionId, Side};
use std::cell::RefCell;

impl Pair {
    /// `from`'s connection sends one packet of `space` carrying `frames` (encoded by
    /// the caller, never checked) into the link toward the other side; see
    /// [`crate::Connection::craft_datagram`]. Returns `false` when it cannot (no
    /// server connection yet, or no keys for `space`).
    pub fn send_crafted(&mut self, from: Side, space: SpaceId, frames: &[u8]) -> bool {
        self.send_crafted_with_scid(from, space, frames, None)
    }

    /// [`Pair::send_crafted`] with a long header carrying `scid` as its Source
    /// Connection ID instead of the sender's (same length as the sender's).
    pub fn send_crafted_with_scid(
        &mut self,
        from: Side,
        space: SpaceId,
        frames: &[u8],
        scid: Option<ConnectionId>,
    ) -> bool {
        let now = self.now;
        let (conn, to) = match from {
            Side::Client => (Some(self.client_conn()), To::Server),
            Side::Server => (self.server_conn(), To::Client),
        };
        let Some(datagram) = conn.and_then(|c| c.craft_datagram(now, space, frames, scid)) else {
            return false;
        };
        self.enqueue(to, datagram);
        true
    }
}

/// Rewrites a side's encoded transport parameters (see
/// [`with_tampered_transport_parameters`]).
type Tamper = (Side, Box<dyn Fn(&mut Vec<u8>)>);

thread_local! {
    static TAMPER: RefCell<Option<Tamper>> = const { RefCell::new(None) };
}

/// Runs `f`; every connection of `side` created meanwhile on this thread (a client by
/// [`Pair::new`] or `Endpoint::connect`, a server when a pair step delivers the first
/// Initial) hands TLS its encoded transport parameters (RFC 9000 §18) as `edit`
/// rewrote them, so a test can send parameters our encoder never produces.
pub fn with_tampered_transport_parameters<R>(
    side: Side,
    edit: impl Fn(&mut Vec<u8>) + 'static,
    f: impl FnOnce() -> R,
) -> R {
    /// Restores the previous hook, also when `f` panics.
    struct Restore(Option<Tamper>);
    impl Drop for Restore {
        fn drop(&mut self) {
            TAMPER.with(|t| *t.borrow_mut() = self.0.take());
        }
    }
    let previous = TAMPER.with(|t| t.borrow_mut().replace((side, Box::new(edit))));
    let _restore = Restore(previous);
    f()
}

/// Applies the hook of [`with_tampered_transport_parameters`], if one is set for `side`.
pub(crate) fn tamper_transport_parameters(side: Side, encoded: &mut Vec<u8>) {
    TAMPER.with(|t| {
        if let Some((s, edit)) = t.borrow().as_ref() {
            if *s == side {
                edit(encoded);
            }
        }
    });
}
