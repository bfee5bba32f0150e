//! The ack-frequency extension's state (draft-ietf-quic-ack-frequency): the receiver's
//! ACK policy and the sender's requests in flight. The connection drives it from
//! `ack_frequency.rs`.
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use super::spaces::{SentFrame, SentRecord};
use crate::ack::AckPolicy;
use crate::recovery::SentPacket;
use crate::time::Instant;
use crate::wire::AckFrequencyFrame;
use std::time::Duration;

/// ack-frequency §4: a Requested Max Ack Delay of 2^14 ms or more is invalid.
pub(super) const MAX_REQUESTED_DELAY_US: u64 = (1 << 14) * 1000 - 1;
/// RFC 9000 §13.2.2: without ACK_FREQUENCY a receiver ACKs every second packet.
pub(super) const DEFAULT_RATIO: u64 = 2;

/// Both sides of the extension, as the connection keeps them.
#[derive(Clone, Debug)]
pub(super) struct AckFrequencyState {
    /// Receiver: ACK policy for the application data space (RFC 9000 §13.2, changed
    /// by ACK_FREQUENCY).
    pub policy: AckPolicy,
    /// Receiver: sequence number of the last ACK_FREQUENCY frame applied.
    pub peer_seq: Option<u64>,
    /// Receiver: ack-eliciting 1-RTT packets received (for the `ack.schedule` switch).
    pub data_eliciting_received: u64,
    /// Sender: our ACK_FREQUENCY requests (config `ack_frequency`).
    pub sender: AckFrequencySender,
}

impl AckFrequencyState {
    /// Receiving with the configured `policy` until the peer asks for another.
    pub fn new(policy: AckPolicy) -> Self {
        AckFrequencyState {
            policy,
            peer_seq: None,
            data_eliciting_received: 0,
            sender: AckFrequencySender::default(),
        }
    }
}

/// Sender-side state: requests made, in flight and acknowledged.
#[derive(Clone, Debug, Default)]
pub(super) struct AckFrequencySender {
    pub next_seq: u64,
    /// A request waiting for a 1-RTT packet with room (and congestion window).
    pub pending: Option<AckFrequencyFrame>,
    /// The newest request built, to resend when its packet is lost.
    pub newest: Option<AckFrequencyFrame>,
    /// (Sequence Number, Requested Max Ack Delay µs) of requests in packets in flight.
    pub in_flight: Vec<(u64, u64)>,
    /// The newest acknowledged request (sequence, µs): the peer's max_ack_delay now.
    pub acked: Option<(u64, u64)>,
    /// ACK ratio of the last request (2 before any: the RFC 9000 default).
    pub ratio: u64,
    /// When the last request was made (the `cwnd` policy sends at most one per RTT).
    pub last_request: Option<Instant>,
    /// A one-shot policy (`fixed`, `after_slow_start`) made its request.
    pub done: bool,
}

impl AckFrequencySender {
    /// Queues a request for one ACK per `ratio` ack-eliciting packets. A queued request
    /// not yet sent is replaced; sequence numbers always increase (ack-frequency §4).
    pub fn request(&mut self, now: Instant, ratio: u64, delay_us: u64, reordering: u64) {
        let f = AckFrequencyFrame {
            sequence: self.next_seq,
            ack_eliciting_threshold: ratio.saturating_sub(1),
            request_max_ack_delay: delay_us,
            reordering_threshold: reordering,
        };
        self.next_seq = self.next_seq.saturating_add(1);
        self.pending = Some(f);
        self.newest = Some(f);
        self.ratio = ratio;
        self.last_request = Some(now);
    }

    /// The ratio the peer uses as far as we asked: the last request's, else 1:2.
    pub fn current_ratio(&self) -> u64 {
        if self.last_request.is_some() {
            self.ratio
        } else {
            DEFAULT_RATIO
        }
    }

    /// The request to put in a packet now, if any.
    pub fn pending(&self) -> Option<AckFrequencyFrame> {
        self.pending
    }

    /// Whether a request waits to be sent (the data space then wants a packet).
    pub(super) fn has_pending(&self) -> bool {
        self.pending.is_some()
    }

    pub fn on_sent(&mut self, f: &AckFrequencyFrame) {
        self.pending = None;
        self.in_flight.push((f.sequence, f.request_max_ack_delay));
    }

    fn forget_in_flight(&mut self, sequence: u64, delay_us: u64) {
        if let Some(i) = self
            .in_flight
            .iter()
            .position(|&e| e == (sequence, delay_us))
        {
            self.in_flight.swap_remove(i);
        }
    }

    /// ack-frequency §6 (PTO): once acknowledged, a request is the peer's max_ack_delay
    /// (the newest acknowledged one wins: the peer ignores older ones).
    pub(super) fn on_acked(&mut self, sequence: u64, delay_us: u64) {
        self.forget_in_flight(sequence, delay_us);
        if self.acked.is_none_or(|(s, _)| sequence > s) {
            self.acked = Some((sequence, delay_us));
        }
    }

    /// ack-frequency §4: a lost request is sent again unless a newer one was sent
    /// (or is queued); the same sequence number, which the receiver accepts once.
    pub(super) fn on_lost(&mut self, sequence: u64, delay_us: u64) {
        self.forget_in_flight(sequence, delay_us);
        let newest = self.newest.filter(|f| f.sequence == sequence);
        if self.pending.is_none() && self.acked.is_none_or(|(s, _)| s < sequence) {
            self.pending = newest;
        }
    }

    /// The peer's max_ack_delay for the PTO and RTT (ack-frequency §6): the greatest
    /// of its current value (`advertised`, or the newest acknowledged request) and every
    /// request still in flight.
    pub(super) fn peer_max_ack_delay(&self, advertised: Duration) -> Duration {
        let current = self
            .acked
            .map_or(advertised, |(_, us)| Duration::from_micros(us));
        let in_flight = self.in_flight.iter().map(|&(_, us)| us).max();
        current.max(Duration::from_micros(in_flight.unwrap_or(0)))
    }

    /// [`peer_max_ack_delay`](Self::peer_max_ack_delay) as it will be once the
    /// requests carried by `acked` count as acknowledged and then those carried by
    /// `lost` as lost; changes nothing. Recovery reads it during an ACK, before the
    /// connection applies the ACK.
    pub(super) fn peer_max_ack_delay_after(
        &self,
        advertised: Duration,
        acked: &[SentPacket<SentRecord>],
        lost: &[SentPacket<SentRecord>],
    ) -> Duration {
        // Runs on every ACK: no allocation, and no clone unless a request is involved.
        if requests_in(acked).next().is_none() && requests_in(lost).next().is_none() {
            return self.peer_max_ack_delay(advertised);
        }
        let mut after = self.clone();
        for (sequence, delay_us) in requests_in(acked) {
            after.on_acked(sequence, delay_us);
        }
        for (sequence, delay_us) in requests_in(lost) {
            after.on_lost(sequence, delay_us);
        }
        after.peer_max_ack_delay(advertised)
    }
}

/// The (Sequence Number, Requested Max Ack Delay µs) of the ACK_FREQUENCY frames `packets`
/// carried.
fn requests_in(packets: &[SentPacket<SentRecord>]) -> impl Iterator<Item = (u64, u64)> + '_ {
    packets
        .iter()
        .flat_map(|p| p.data.frames.iter())
        .filter_map(|f| match f {
            SentFrame::AckFrequency {
                sequence,
                max_ack_delay_us,
            } => Some((*sequence, *max_ack_delay_us)),
            _ => None,
        })
}

/// ack-frequency §8.1: clamp(cwnd_packets / acks_per_window, 2, max_ratio), but never
/// more than the full-size packets in the window (at least 1).
pub(super) fn cwnd_ratio(cwnd: u64, mds: u64, acks_per_window: u64, max_ratio: u64) -> u64 {
    // A zero divisor counts as one.
    let packets = cwnd.checked_div(mds).unwrap_or(cwnd);
    (packets.checked_div(acks_per_window).unwrap_or(packets))
        .clamp(DEFAULT_RATIO, max_ratio.max(DEFAULT_RATIO))
        .min(packets)
        .max(1)
}

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects)] // tests compute expected values freely
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn cwnd_ratio_clamps_to_bounds_and_window() {
        let mds = 1200;
        // 10 packets / 4 = 2; 40 / 4 = 10; 400 / 4 = 100 -> max 10.
        assert_eq!(cwnd_ratio(10 * mds, mds, 4, 10), 2);
        assert_eq!(cwnd_ratio(13 * mds, mds, 4, 10), 3);
        assert_eq!(cwnd_ratio(40 * mds, mds, 4, 10), 10);
        assert_eq!(cwnd_ratio(400 * mds, mds, 4, 10), 10);
        // Never more than the packets in the window; at least one.
        assert_eq!(cwnd_ratio(3 * mds, mds, 1, 10), 3);
        assert_eq!(cwnd_ratio(mds, mds, 4, 10), 1);
        assert_eq!(cwnd_ratio(0, mds, 4, 10), 1);
        assert_eq!(cwnd_ratio(u64::MAX, mds, 4, 10), 10);
    }

    #[test]
    fn pto_delay_is_max_of_acknowledged_and_in_flight_requests() {
        let advertised = MS(25);
        let mut s = AckFrequencySender::default();
        assert_eq!(s.peer_max_ack_delay(advertised), MS(25));
        // A larger request counts as soon as it is in flight (ack-frequency §6).
        s.request(Instant::ZERO, 10, 200_000, 1);
        let f = s.pending().unwrap();
        assert_eq!((f.sequence, f.ack_eliciting_threshold), (0, 9));
        s.on_sent(&f);
        assert_eq!(s.peer_max_ack_delay(advertised), MS(200));
        s.on_acked(0, 200_000);
        assert_eq!(s.peer_max_ack_delay(advertised), MS(200));
        // A smaller one counts only once acknowledged.
        s.request(Instant::ZERO, 10, 5_000, 1);
        let f = s.pending().unwrap();
        s.on_sent(&f);
        assert_eq!(s.peer_max_ack_delay(advertised), MS(200));
        // Two in flight: the maximum of all.
        s.request(Instant::ZERO, 10, 300_000, 1);
        let g = s.pending().unwrap();
        s.on_sent(&g);
        assert_eq!(s.peer_max_ack_delay(advertised), MS(300));
        s.on_acked(2, 300_000);
        // The older one acknowledged later does not replace the newer value.
        s.on_acked(1, 5_000);
        assert_eq!(s.peer_max_ack_delay(advertised), MS(300));
    }

    #[test]
    fn lost_request_is_resent_unless_superseded() {
        let mut s = AckFrequencySender::default();
        s.request(Instant::ZERO, 4, 25_000, 1);
        let a = s.pending().unwrap();
        s.on_sent(&a);
        assert!(!s.has_pending());
        s.on_lost(a.sequence, a.request_max_ack_delay);
        assert_eq!(s.pending(), Some(a), "the newest request is sent again");
        s.on_sent(&a);
        s.request(Instant::ZERO, 8, 25_000, 1);
        let b = s.pending().unwrap();
        s.on_sent(&b);
        assert!(b.sequence > a.sequence);
        // The older one is lost after a newer one was sent: nothing to resend.
        s.on_lost(a.sequence, a.request_max_ack_delay);
        assert!(!s.has_pending());
        assert_eq!(s.peer_max_ack_delay(MS(25)), MS(25));
    }
}
