//! What a connection holds from its peer before it can use it: out-of-order CRYPTO
//! data of every packet number space, and (server) 0-RTT packets waiting for their
//! keys and 1-RTT packets waiting for the handshake to complete.
//!
//! All of it together stays within [`MAX_CRYPTO_BUFFER`] (64 KiB) per connection,
//! whatever the peer sends: CRYPTO data past it closes the connection with
//! CRYPTO_BUFFER_EXCEEDED (RFC 9000 §7.5), a packet past it is dropped. A server with
//! `admission.max_handshaking` connections mid-handshake therefore holds at most
//! `max_handshaking` × 64 KiB of such data, besides each connection's own state and
//! the datagram being read. A closed connection keeps none of it (RFC 9000 §10.2: it
//! needs only what its CONNECTION_CLOSE needs), nor a space whose keys were discarded.

use super::crypto_stream::{CryptoRecv, MAX_CRYPTO_BUFFER};
use super::spaces::SpaceId;
use super::Connection;

impl Connection {
    /// Bytes of CRYPTO data held for reassembly, over all packet number spaces (at
    /// most 64 KiB; for tests and fuzz targets).
    #[doc(hidden)]
    pub fn crypto_buffered_bytes(&self) -> u64 {
        self.spaces.iter().map(|s| s.crypto_recv.buffered()).sum()
    }

    /// Bytes held from the peer before they can be used: [`Self::crypto_buffered_bytes`]
    /// and packets waiting for keys or for the handshake; at most 64 KiB.
    pub fn handshake_buffered_bytes(&self) -> u64 {
        self.crypto_buffered_bytes()
            + self.handshake.early_one_rtt_bytes()
            + self.zero_rtt.pending_bytes()
    }

    /// How large `space`'s reassembly buffer may grow: the budget less what the rest
    /// holds.
    pub(super) fn crypto_limit(&self, space: SpaceId) -> u64 {
        let own = self.spaces[space as usize].crypto_recv.buffered();
        MAX_CRYPTO_BUFFER.saturating_sub(self.handshake_buffered_bytes() - own)
    }

    /// Whether a packet of `len` bytes may be kept for later within the budget.
    pub(super) fn may_keep_packet(&self, len: usize) -> bool {
        self.handshake_buffered_bytes() + len as u64 <= MAX_CRYPTO_BUFFER
    }

    /// Frees what a closed connection no longer reads.
    pub(super) fn release_peer_buffers(&mut self) {
        for space in &mut self.spaces {
            space.crypto_recv = CryptoRecv::default();
        }
        self.handshake.take_early_one_rtt();
        self.zero_rtt.drop_pending();
    }
}
