//! What a driver or test may read about a connection.

use super::footprint::Footprint;
use super::Connection;

impl Connection {
    /// The sizes of the buffers a peer can fill (see [`Footprint`]).
    pub fn footprint(&self) -> Footprint {
        let (streams, stream_recv_buffered) = self.streams.footprint();
        let (datagrams_queued, datagram_bytes) = self.outbox.queued_datagrams();
        Footprint {
            crypto_buffered: self.crypto_buffered_bytes() as usize,
            handshake_buffered: self.handshake_buffered_bytes() as usize,
            streams,
            stream_recv_buffered,
            datagrams_queued,
            datagram_bytes,
            path_responses: self.path.responses.len(),
            remote_cids: self.cids.remote_count(),
            retire_pending: self.cids.pending_retire.len(),
            events: self.outbox.pending_events() + self.streams.pending_events(),
            multipath_paths: self.path_spaces.len()
                + self.path_cids.len()
                + self.multipath.paths_held(),
            multipath_copies: self.sched.copies.len(),
            path0_ack_ranges: self.spaces[super::spaces::SpaceId::Data as usize]
                .acks
                .ranges_held(),
        }
    }
}
