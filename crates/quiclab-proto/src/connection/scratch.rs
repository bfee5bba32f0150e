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
    /// The last ACK's newly acknowledged packets, emptied, handed to recovery as the
    /// next ACK's list (`loss.rs`); kept only while packets are outstanding.
    pub newly_acked: Vec<crate::recovery::SentPacket<super::spaces::SentRecord>>,
}

/// Range buffers above this capacity are not kept (an ACK with many ranges is rare;
/// memory stays bounded).
const MAX_KEPT_ACK_RANGES: usize = 64;

/// Newly-acknowledged lists above this capacity are not kept (a bulk sender's ACKs
/// acknowledge a few packets each; memory stays bounded).
const MAX_KEPT_NEWLY_ACKED: usize = 64;

impl Scratch {
    /// Keeps an ACK's newly acknowledged list, emptied, for the next ACK while
    /// `outstanding` (the loss detection timer stays armed); an idle connection keeps
    /// none, as its sent-packet deques keep none.
    pub fn keep_newly_acked(
        &mut self,
        mut acked: Vec<crate::recovery::SentPacket<super::spaces::SentRecord>>,
        outstanding: bool,
    ) {
        if outstanding && acked.capacity() <= MAX_KEPT_NEWLY_ACKED {
            acked.clear();
            self.newly_acked = acked;
        }
    }

    /// Keeps `ranges` (an ACK's, or the decoder's unused buffer) for the next packet's
    /// ACK, unless a buffer is kept already or it is over the cap.
    pub fn keep_ack_ranges(&mut self, mut ranges: Vec<std::ops::RangeInclusive<u64>>) {
        if self.ack_ranges.capacity() == 0 && ranges.capacity() <= MAX_KEPT_ACK_RANGES {
            ranges.clear();
            self.ack_ranges = ranges;
        }
    }
}
