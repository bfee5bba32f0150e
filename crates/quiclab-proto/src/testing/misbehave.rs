//! A misbehaving peer for the pair harness: packets the normal send path never builds
//! ([`Pair::send_crafted`]) and transport parameters rewritten before TLS sends them
//! ([`super::with_tampered_transport_parameters`]). Tests use them to check that the
//! other side answers each RFC violation with the RFC's error, and keeps its memory
//! bounded.

use super::{Pair, To};
use crate::connection::SpaceId;
use crate::wire::{ConnectionId, Side};

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
        // Sent with the codepoint the connection's own packets carry now.
        let Some((ecn, datagram)) = conn.and_then(|c| {
            let ecn = c.ecn().sending;
            c.craft_datagram(now, space, frames, scid).map(|d| (ecn, d))
        }) else {
            return false;
        };
        let addrs = match to {
            To::Server => (self.client_addr, self.server_addr),
            To::Client => (self.server_addr, self.client_addr),
        };
        self.enqueue(to, ecn, addrs, datagram);
        true
    }
}
