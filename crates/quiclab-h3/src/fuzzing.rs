//! What the fuzz targets in `fuzz/` need from an HTTP/3 connection (cargo feature
//! `fuzzing`, not part of the default public API): the sizes of the maps and buffers a
//! peer can grow, so a target can assert their bounds after every input step.

use crate::connection::H3Connection;
use crate::streams::Uni;

/// The peer-controlled state of an [`H3Connection`], in entries or bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct H3Footprint {
    /// Peer unidirectional streams in the map (any type, ignored ones included).
    pub uni_streams: usize,
    /// Request streams in the map.
    pub requests: usize,
    /// The largest received-but-unprocessed bytes of one request stream (a HEADERS
    /// payload blocked on QPACK inserts and the bytes read after it).
    pub max_request_backlog: usize,
    /// The largest partial stream-type varint buffered for one uni stream.
    pub max_typing: usize,
    /// Bytes waiting in our control, encoder and decoder stream buffers.
    pub local_buffered: usize,
    /// Application events not yet polled.
    pub events: usize,
}

impl H3Connection {
    /// The sizes of what a peer can make this connection hold (see [`H3Footprint`]).
    pub fn footprint(&self) -> H3Footprint {
        let backlog =
            |r: &crate::streams::Request| r.stash.len() + r.blocked.as_ref().map_or(0, Vec::len);
        let typing = |u: &Uni| match u {
            Uni::Typing(b) => b.len(),
            _ => 0,
        };
        let l = &self.local;
        H3Footprint {
            uni_streams: self.uni.len(),
            requests: self.requests.len(),
            max_request_backlog: self.requests.values().map(backlog).max().unwrap_or(0),
            max_typing: self.uni.values().map(typing).max().unwrap_or(0),
            local_buffered: l.control_buf.len() + l.encoder_buf.len() + l.decoder_buf.len(),
            events: self.events.len(),
        }
    }
}
