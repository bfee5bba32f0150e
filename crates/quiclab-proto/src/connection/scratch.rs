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
    /// next ACK's list (`loss.rs`); kept while the sent-packet deque it came from
    /// keeps storage, and no larger than that storage.
    pub newly_acked: Vec<crate::recovery::SentPacket<super::spaces::SentRecord>>,
}

/// Range buffers above this capacity are not kept (an ACK with many ranges is rare;
/// memory stays bounded).
const MAX_KEPT_ACK_RANGES: usize = 64;

/// Newly-acknowledged lists up to this capacity are kept while packets are
/// outstanding, whatever the deque keeps (a short flight's ACKs acknowledge a few
/// packets each).
const MAX_KEPT_NEWLY_ACKED: usize = 64;

impl Scratch {
    /// Keeps an ACK's newly acknowledged list, emptied, for the next ACK while
    /// `outstanding` (the loss detection timer stays armed) or while the sent-packet
    /// deque it was drained from keeps `sent_storage` records of room for the next
    /// flight, up to the larger of that room and [`MAX_KEPT_NEWLY_ACKED`]. The list
    /// holds no more records than the deque held, so memory stays within the deque's
    /// own bound; an idle connection keeps none, as its deques keep none. A bulk
    /// sender whose peer acknowledges a whole flight at once (on loopback ~300 packets
    /// an ACK) so reuses its list instead of regrowing it by doubling on every ACK
    /// (issue 29: a `realloc` was ~1% of that server's time).
    pub fn keep_newly_acked(
        &mut self,
        mut acked: Vec<crate::recovery::SentPacket<super::spaces::SentRecord>>,
        outstanding: bool,
        sent_storage: usize,
    ) {
        let room = (outstanding || sent_storage > 0)
            && acked.capacity() <= MAX_KEPT_NEWLY_ACKED.max(sent_storage);
        if room {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(capacity: usize, outstanding: bool, sent_storage: usize) -> usize {
        let mut s = Scratch::default();
        s.keep_newly_acked(Vec::with_capacity(capacity), outstanding, sent_storage);
        s.newly_acked.capacity()
    }

    /// A whole-flight ACK's list is kept while the deque keeps room for the next
    /// flight, never above that room; an idle connection keeps none.
    #[test]
    fn newly_acked_list_kept_within_the_deques_room() {
        assert_eq!(kept(32, true, 64), 32);
        assert_eq!(kept(512, false, 512), 512);
        assert_eq!(kept(512, true, 1024), 512);
        assert_eq!(kept(1024, true, 512), 0);
        assert_eq!(kept(32, false, 0), 0);
        assert_eq!(kept(128, true, 0), 0);
    }
}
