//! What a peer's input makes a connection hold: the buffers and queues a peer fills,
//! so tests (and curious drivers) can check that memory stays bounded whatever the
//! peer sends.

/// Sizes of what the peer made a connection hold (see [`Connection::footprint`]), in
/// bytes or entries, each with the bound a peer cannot push it past.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    /// CRYPTO bytes held for reassembly, all spaces: at most
    /// [`super::MAX_CRYPTO_BUFFER`] (RFC 9000 §7.5).
    pub crypto_buffered: usize,
    /// What the peer sent that waits to be used: the CRYPTO bytes above and packets
    /// waiting for keys or for the handshake, within the same budget
    /// ([`Connection::handshake_buffered_bytes`]).
    pub handshake_buffered: usize,
    /// Streams kept (open, or closed but not yet released): at most the stream limits
    /// we advertise (RFC 9000 §4.6) plus our own.
    pub streams: usize,
    /// Received stream bytes not yet read, gaps included: at most the connection's
    /// receive window (RFC 9000 §4.1).
    pub stream_recv_buffered: usize,
    /// DATAGRAM payloads queued for the application, and their bytes (RFC 9221 §5:
    /// at most [`super::MAX_QUEUED_DATAGRAMS`]).
    pub datagrams_queued: usize,
    pub datagram_bytes: usize,
    /// PATH_RESPONSE frames owed (RFC 9000 §8.2.2: we keep the newest 16).
    pub path_responses: usize,
    /// Connection IDs the peer issued that we hold (RFC 9000 §5.1.1: our
    /// active_connection_id_limit).
    pub remote_cids: usize,
    /// RETIRE_CONNECTION_ID frames owed (RFC 9000 §5.1.2: four times our limit).
    pub retire_pending: usize,
    /// Events the application has not polled yet (connection and stream events).
    pub events: usize,
    /// Multipath state entries (draft-ietf-quic-multipath): path spaces above 0, path
    /// IDs holding connection IDs, path statuses (ours and the peer's) and ranges of
    /// abandoned path IDs. Bounded by our `max_path_id`: at most that many path IDs
    /// above 0 are open at once (MAX_PATH_ID only replaces abandoned ones), and an
    /// abandoned path's state is freed 3 PTO after it was abandoned (§3.4).
    pub multipath_paths: usize,
    /// Copies of STREAM frames waiting for their path under the redundant scheduler
    /// (`multipath_copies.rs`): at most `MAX_COPIES_PER_PATH` per path not abandoned.
    pub multipath_copies: usize,
    /// Ranges of received 1-RTT packet numbers held for path 0's ACKs (at most
    /// `MAX_TRACKED_RANGES`, 1024); none once a multipath connection freed path 0, 3
    /// PTO after abandoning it (draft-ietf-quic-multipath §3.4).
    pub path0_ack_ranges: usize,
}
