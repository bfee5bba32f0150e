//! Frame decoding (RFC 9000 §12.4, §19). Peer input: never panics; every malformed frame
//! is a `TransportError` (FRAME_ENCODING_ERROR, or PROTOCOL_VIOLATION where the RFC says
//! so) carrying the offending frame type.

use super::frame::Frame;
use super::header::PacketType;
use crate::error::TransportError;

/// Iterates over the frames of a decrypted packet payload. After the first error it
/// yields `None`.
pub struct FrameIter<'a> {
    _payload: &'a [u8],
}

/// Frames of `payload`, in order.
pub fn decode_frames(payload: &[u8]) -> FrameIter<'_> {
    FrameIter { _payload: payload }
}

impl<'a> Iterator for FrameIter<'a> {
    type Item = Result<Frame<'a>, TransportError>;
    fn next(&mut self) -> Option<Self::Item> {
        todo!("H1")
    }
}

impl Frame<'_> {
    /// Whether this frame may appear in a packet of type `ty` (RFC 9000 §12.4, Table 3;
    /// RFC 9221 §4 and the ack-frequency draft: 0-RTT and 1-RTT only).
    pub fn permitted_in(&self, ty: PacketType) -> bool {
        let _ = ty;
        todo!("H1")
    }
}
