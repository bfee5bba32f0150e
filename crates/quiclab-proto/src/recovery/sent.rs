//! Sent-packet tracking and loss detection for one packet number space
//! (RFC 9002 §6.1, Appendix A), generic over what the connection remembers per packet.

use crate::time::Instant;
use std::ops::RangeInclusive;

/// A packet in flight or awaiting acknowledgement.
#[derive(Clone, Debug)]
pub struct SentPacket<T> {
    pub pn: u64,
    pub time_sent: Instant,
    /// Bytes on the wire (UDP payload share) counted in bytes_in_flight when `in_flight`.
    pub size: u64,
    pub ack_eliciting: bool,
    /// Counts toward bytes in flight (ack-eliciting or padded; RFC 9002 §2).
    pub in_flight: bool,
    /// The connection's record of what the packet carried, for retransmission.
    pub data: T,
}

/// The sent packets of one packet number space, in packet number order.
#[derive(Debug)]
pub struct SentPackets<T> {
    _p: Vec<T>,
}

impl<T> Default for SentPackets<T> {
    fn default() -> Self {
        todo!("H3")
    }
}

impl<T> SentPackets<T> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a sent packet (packet numbers increase).
    pub fn on_sent(&mut self, packet: SentPacket<T>) {
        let _ = packet;
        todo!("H3")
    }

    /// Removes and returns the packets newly acknowledged by `ranges` (any order of
    /// ranges; result in ascending packet number), updating the largest acknowledged.
    pub fn on_ack(&mut self, ranges: &[RangeInclusive<u64>]) -> Vec<SentPacket<T>> {
        let _ = ranges;
        todo!("H3")
    }

    /// RFC 9002 §6.1 / A.10 DetectAndRemoveLostPackets: removes and returns the packets
    /// lost by the packet threshold or the time threshold (`loss_delay`), and sets
    /// [`SentPackets::loss_time`] for the earliest packet not yet lost by time.
    pub fn detect_lost(
        &mut self,
        now: Instant,
        loss_delay: std::time::Duration,
        packet_threshold: u64,
    ) -> Vec<SentPacket<T>> {
        let _ = (now, loss_delay, packet_threshold);
        todo!("H3")
    }

    /// When the next packet becomes lost by the time threshold.
    pub fn loss_time(&self) -> Option<Instant> {
        todo!("H3")
    }
    pub fn largest_acked(&self) -> Option<u64> {
        todo!("H3")
    }
    /// Send time of the most recent ack-eliciting packet still outstanding or ever sent
    /// in this space (RFC 9002 A.8 time_of_last_ack_eliciting_packet).
    pub fn time_of_last_ack_eliciting(&self) -> Option<Instant> {
        todo!("H3")
    }
    pub fn has_ack_eliciting_in_flight(&self) -> bool {
        todo!("H3")
    }
    /// Bytes of in-flight packets of this space.
    pub fn bytes_in_flight(&self) -> u64 {
        todo!("H3")
    }
    /// Removes every packet (on key discard, RFC 9002 §6.4), returning them.
    pub fn drain(&mut self) -> Vec<SentPacket<T>> {
        todo!("H3")
    }
    /// Outstanding packets in ascending packet number order.
    pub fn iter(&self) -> impl Iterator<Item = &SentPacket<T>> {
        std::iter::empty::<&SentPacket<T>>()
    }
    pub fn len(&self) -> usize {
        todo!("H3")
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// RFC 9002 §7.6.2: whether `lost` (ascending packet numbers, one space) shows persistent
/// congestion: two ack-eliciting packets, both sent after `first_rtt_sample_time`, further
/// apart than `duration`, with every packet between them lost (none acknowledged or still
/// outstanding in `remaining`).
pub fn is_persistent_congestion<T>(
    lost: &[SentPacket<T>],
    remaining: &SentPackets<T>,
    duration: std::time::Duration,
    first_rtt_sample_time: Option<Instant>,
) -> bool {
    let _ = (lost, remaining, duration, first_rtt_sample_time);
    todo!("H3")
}
