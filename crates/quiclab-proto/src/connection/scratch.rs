//! Buffers the connection reuses across calls.

use crate::error::TransportError;

/// Buffers reused across calls, so the hot paths do not allocate.
#[derive(Default)]
pub(super) struct Scratch {
    /// CRYPTO data handed to TLS.
    pub bytes: Vec<u8>,
    /// Stream frames written into one packet.
    pub stream_records: Vec<crate::streams::StreamFrameRecord>,
    /// The frame list of packet events (`event_log`).
    pub frames: Vec<crate::events::FrameSummary>,
    /// A received packet's decoded frames while a sink is attached (`recv`); empty
    /// between packets, kept for its buffer.
    pub decoded: Vec<Result<crate::wire::Frame<'static>, TransportError>>,
    /// The last received ACK frame's ranges, handed back to the decoder for the next
    /// packet's (`recv`), so the common ACK decodes without allocating.
    pub ack_ranges: Vec<std::ops::RangeInclusive<u64>>,
}

/// Range buffers above this capacity are not kept (an ACK with many ranges is rare;
/// memory stays bounded).
const MAX_KEPT_ACK_RANGES: usize = 64;

impl Scratch {
    /// Keeps `ranges` (an ACK's, or the decoder's unused buffer) for the next packet's
    /// ACK, unless a buffer is kept already or it is over the cap.
    pub fn keep_ack_ranges(&mut self, mut ranges: Vec<std::ops::RangeInclusive<u64>>) {
        if self.ack_ranges.capacity() == 0 && ranges.capacity() <= MAX_KEPT_ACK_RANGES {
            ranges.clear();
            self.ack_ranges = ranges;
        }
    }
}
