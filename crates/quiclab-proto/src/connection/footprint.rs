//! What a peer's input makes a connection hold: the buffers and queues a peer fills,
//! so tests (and curious drivers) can check that memory stays bounded whatever the
//! peer sends.

use super::spaces::SpaceId;
use super::Connection;

/// Sizes of what the peer made a connection hold (see [`Connection::footprint`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    /// Streams kept (open, or closed but not yet forgotten): at most the stream limits
    /// we advertise (RFC 9000 §4.6) plus our own.
    pub streams: usize,
    /// Bytes in stream receive buffers, gaps included: at most the connection's
    /// receive window (RFC 9000 §4.1).
    pub stream_recv_bytes: u64,
    /// CRYPTO bytes held for reassembly per packet number space: together at most
    /// [`super::MAX_CRYPTO_BUFFER`] (RFC 9000 §7.5).
    pub crypto_recv_bytes: [u64; 3],
    /// PATH_RESPONSE frames waiting to be sent (RFC 9000 §8.2.2).
    pub path_responses: usize,
    /// The peer's connection IDs we keep (RFC 9000 §5.1.1), and RETIRE_CONNECTION_ID
    /// frames waiting to be sent (§5.1.2).
    pub remote_cids: usize,
    pub pending_retire: usize,
    /// DATAGRAM payloads waiting for the application (RFC 9221 §5).
    pub datagrams: usize,
    /// Application events waiting (connection and stream events).
    pub events: usize,
}

impl Connection {
    /// The sizes of what the peer made this connection hold.
    pub fn footprint(&self) -> Footprint {
        Footprint {
            streams: self.streams.count(),
            stream_recv_bytes: self.streams.recv_buffered(),
            crypto_recv_bytes: SpaceId::ALL.map(|s| self.spaces[s as usize].crypto_recv.buffered()),
            path_responses: self.path.responses.len(),
            remote_cids: self.cids.remote_count(),
            pending_retire: self.cids.pending_retire.len(),
            datagrams: self.received_datagrams.len(),
            events: self.events.len() + self.streams.queued_events(),
        }
    }
}
