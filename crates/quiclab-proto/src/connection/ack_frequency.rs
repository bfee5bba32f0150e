//! The ack-frequency extension (draft-ietf-quic-ack-frequency) on both sides, plus the
//! receiver's local ratio schedule:
//!
//! - receiver: which [`AckPolicy`] applies to the next 1-RTT packet (the configured
//!   threshold, the `ack.schedule` switch, or the peer's ACK_FREQUENCY request), and
//!   validating/applying ACK_FREQUENCY frames;
//! - sender: the `ack_frequency` policies that decide when to send ACK_FREQUENCY, the
//!   IMMEDIATE_ACK put in the last packet before the sender is cwnd-blocked, and the
//!   peer max_ack_delay the PTO must assume while requests are in flight.
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use super::spaces::{SentFrame, SentFrames, SentRecord};
use super::stats::tally;
use super::Connection;
use crate::ack::AckPolicy;
use crate::config::AckFrequencyPolicy;
use crate::crypto::TAG_LEN;
use crate::error::TransportError;
use crate::recovery::SentPacket;
use crate::time::Instant;
use crate::wire::{AckFrequencyFrame, Frame};
use std::time::Duration;

/// ack-frequency §4: a Requested Max Ack Delay of 2^14 ms or more is invalid.
const MAX_REQUESTED_DELAY_US: u64 = (1 << 14) * 1000 - 1;
/// RFC 9000 §13.2.2: without ACK_FREQUENCY a receiver ACKs every second packet.
const DEFAULT_RATIO: u64 = 2;

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
    next_seq: u64,
    /// A request waiting for a 1-RTT packet with room (and congestion window).
    pending: Option<AckFrequencyFrame>,
    /// The newest request built, to resend when its packet is lost.
    newest: Option<AckFrequencyFrame>,
    /// (Sequence Number, Requested Max Ack Delay µs) of requests in packets in flight.
    in_flight: Vec<(u64, u64)>,
    /// The newest acknowledged request (sequence, µs): the peer's max_ack_delay now.
    acked: Option<(u64, u64)>,
    /// ACK ratio of the last request (2 before any: the RFC 9000 default).
    ratio: u64,
    /// When the last request was made (the `cwnd` policy sends at most one per RTT).
    last_request: Option<Instant>,
    /// A one-shot policy (`fixed`, `after_slow_start`) made its request.
    done: bool,
}

impl AckFrequencySender {
    /// Queues a request for one ACK per `ratio` ack-eliciting packets. A queued request
    /// not yet sent is replaced; sequence numbers always increase (ack-frequency §4).
    fn request(&mut self, now: Instant, ratio: u64, delay_us: u64, reordering: u64) {
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
    fn current_ratio(&self) -> u64 {
        if self.last_request.is_some() {
            self.ratio
        } else {
            DEFAULT_RATIO
        }
    }

    /// The request to put in a packet now, if any.
    fn pending(&self) -> Option<AckFrequencyFrame> {
        self.pending
    }

    /// Whether a request waits to be sent (the data space then wants a packet).
    pub(super) fn has_pending(&self) -> bool {
        self.pending.is_some()
    }

    fn on_sent(&mut self, f: &AckFrequencyFrame) {
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
        let requests = |packets: &[SentPacket<SentRecord>]| -> Vec<(u64, u64)> {
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
                .collect()
        };
        let (acked, lost) = (requests(acked), requests(lost));
        if acked.is_empty() && lost.is_empty() {
            return self.peer_max_ack_delay(advertised);
        }
        let mut after = self.clone();
        for (sequence, delay_us) in acked {
            after.on_acked(sequence, delay_us);
        }
        for (sequence, delay_us) in lost {
            after.on_lost(sequence, delay_us);
        }
        after.peer_max_ack_delay(advertised)
    }
}

impl Connection {
    /// Whether the ack-frequency extension is in use for our sending: we offered it
    /// (`min_ack_delay_us`) and the peer's transport parameters carried min_ack_delay.
    /// When false, `ack_frequency` policies send nothing (a capability, not an error).
    pub fn ack_frequency_active(&self) -> bool {
        self.config.min_ack_delay_us.is_some()
            && self
                .peer_params
                .as_ref()
                .is_some_and(|p| p.min_ack_delay.is_some())
    }

    /// The ACK policy for the next 1-RTT packet received: the peer's ACK_FREQUENCY
    /// request once one arrived, else the local schedule's threshold after
    /// `after_packets` ack-eliciting packets, else the configured threshold.
    pub(super) fn receive_ack_policy(&self) -> AckPolicy {
        let mut policy = self.ack_frequency.policy;
        if self.ack_frequency.peer_seq.is_none() {
            if let Some(s) = self.config.ack.schedule {
                if self.ack_frequency.data_eliciting_received >= s.after_packets {
                    policy.ack_eliciting_threshold = s.threshold;
                }
            }
        }
        policy
    }

    /// draft-ietf-quic-ack-frequency §4: validate and apply the newest request.
    pub(super) fn on_ack_frequency(&mut self, f: &AckFrequencyFrame) -> Result<(), TransportError> {
        // ack-frequency §3: only an endpoint that advertised min_ack_delay accepts it.
        let Some(min_ack_delay) = self.config.min_ack_delay_us else {
            return Err(TransportError::protocol_violation(
                "ACK_FREQUENCY without ack-frequency negotiation",
            ));
        };
        // ack-frequency §4: below our min_ack_delay, or 2^14 ms or more, is invalid.
        if f.request_max_ack_delay < min_ack_delay {
            return Err(TransportError::protocol_violation(
                "Requested Max Ack Delay below min_ack_delay",
            ));
        }
        if f.request_max_ack_delay > MAX_REQUESTED_DELAY_US {
            return Err(TransportError::protocol_violation(
                "Requested Max Ack Delay of 2^14 ms or more",
            ));
        }
        if self.ack_frequency.peer_seq.is_some_and(|s| f.sequence <= s) {
            return Ok(());
        }
        self.ack_frequency.peer_seq = Some(f.sequence);
        // The draft's threshold counts packets *before* an ACK is owed: ACK on threshold + 1.
        self.ack_frequency.policy.ack_eliciting_threshold =
            f.ack_eliciting_threshold.saturating_add(1);
        self.ack_frequency.policy.max_ack_delay = Duration::from_micros(f.request_max_ack_delay);
        self.ack_frequency.policy.reordering_threshold = f.reordering_threshold;
        Ok(())
    }

    /// Sender policies (config `ack_frequency.policy`): queue an ACK_FREQUENCY when due.
    /// Called before each packet is built; does nothing until the handshake is
    /// confirmed or when the extension is not active.
    pub(super) fn update_ack_frequency(&mut self, now: Instant) {
        if !self.handshake.confirmed || !self.ack_frequency_active() {
            return;
        }
        let reordering = self.config.ack_frequency.reordering_threshold;
        match self.config.ack_frequency.policy {
            AckFrequencyPolicy::Off => {}
            AckFrequencyPolicy::Fixed { ratio, .. } => {
                if !self.ack_frequency.sender.done {
                    self.ack_frequency.sender.done = true;
                    let delay = self.requested_delay_us(false);
                    self.ack_frequency
                        .sender
                        .request(now, ratio, delay, reordering);
                }
            }
            AckFrequencyPolicy::AfterSlowStart { ratio, .. } => {
                if !self.ack_frequency.sender.done && !self.path.recovery.cc().in_slow_start() {
                    self.ack_frequency.sender.done = true;
                    let delay = self.requested_delay_us(false);
                    self.ack_frequency
                        .sender
                        .request(now, ratio, delay, reordering);
                }
            }
            AckFrequencyPolicy::Cwnd {
                acks_per_window,
                max_ratio,
                ..
            } => {
                let ratio = cwnd_ratio(
                    self.path.recovery.cc().window(),
                    self.max_datagram_size() as u64,
                    acks_per_window,
                    max_ratio,
                );
                let srtt = self.path.recovery.rtt().smoothed();
                // ack-frequency §8.1: "not necessary ... more than once per RTT".
                let rate_ok = self
                    .ack_frequency
                    .sender
                    .last_request
                    .is_none_or(|t| now >= t.saturating_add(srtt));
                if ratio != self.ack_frequency.sender.current_ratio() && rate_ok {
                    let delay = self.requested_delay_us(true);
                    self.ack_frequency
                        .sender
                        .request(now, ratio, delay, reordering);
                }
            }
        }
    }

    /// Whether [`Self::update_ack_frequency`] could queue a request later with no new
    /// input: only the Cwnd policy's once-per-RTT limit depends on the clock, and only
    /// while the wanted ratio differs from the current one. The endpoint keeps polling
    /// such a connection (see [`Connection::send_settled`]).
    pub(super) fn ack_frequency_waits_on_clock(&self) -> bool {
        if !self.handshake.confirmed || !self.ack_frequency_active() {
            return false;
        }
        let AckFrequencyPolicy::Cwnd {
            acks_per_window,
            max_ratio,
            ..
        } = self.config.ack_frequency.policy
        else {
            return false;
        };
        let ratio = cwnd_ratio(
            self.path.recovery.cc().window(),
            self.max_datagram_size() as u64,
            acks_per_window,
            max_ratio,
        );
        ratio != self.ack_frequency.sender.current_ratio()
    }

    /// Requested Max Ack Delay, µs: the configured `max_ack_delay_ms`, else the peer's
    /// advertised max_ack_delay; with `cap_at_srtt` no more than the smoothed RTT
    /// (ack-frequency §8.1); never below the peer's min_ack_delay (§4).
    fn requested_delay_us(&self, cap_at_srtt: bool) -> u64 {
        let peer = self.peer_params.as_ref();
        let advertised = peer.map_or(25_000, |p| p.max_ack_delay.saturating_mul(1000));
        let min = peer.and_then(|p| p.min_ack_delay).unwrap_or(0);
        let mut d = self
            .config
            .ack_frequency
            .policy
            .requested_max_ack_delay_ms()
            .map_or(advertised, |ms| (ms * 1000.0).round() as u64);
        if cap_at_srtt {
            let srtt =
                u64::try_from(self.path.recovery.rtt().smoothed().as_micros()).unwrap_or(u64::MAX);
            d = d.min(srtt);
        }
        d.max(min).min(MAX_REQUESTED_DELAY_US)
    }

    /// Writes a queued ACK_FREQUENCY frame (ack-eliciting, congestion controlled:
    /// called only with window or for a probe).
    pub(super) fn write_ack_frequency(
        &mut self,
        buf: &mut Vec<u8>,
        frames: &mut SentFrames,
        max: usize,
    ) -> bool {
        let Some(f) = self.ack_frequency.sender.pending() else {
            return false;
        };
        let frame = Frame::AckFrequency(f);
        if buf.len().saturating_add(frame.encoded_len()) > max {
            return false;
        }
        frame.encode(buf);
        self.ack_frequency.sender.on_sent(&f);
        frames.push(SentFrame::AckFrequency {
            sequence: f.sequence,
            max_ack_delay_us: f.request_max_ack_delay,
        });
        tally(&mut self.stats.ack_frequency_sent, 1);
        true
    }

    /// Whether the 1-RTT packet being built may leave the sender cwnd-blocked, so one
    /// byte must stay free for IMMEDIATE_ACK (config `immediate_ack_when_blocked`).
    pub(super) fn may_need_immediate_ack(&self) -> bool {
        self.config.ack_frequency.immediate_ack_when_blocked
            && self.ack_frequency_active()
            && self
                .bytes_in_flight()
                .saturating_add(self.max_datagram_size() as u64)
                >= self.path.recovery.cc().window()
    }

    /// The I-bit rule (seed 002 §V.D; ack-frequency §8.1.1): an ack-eliciting 1-RTT
    /// packet sent with window open (bytes in flight < cwnd) that brings bytes in flight
    /// to cwnd or more — so poll_transmit sends nothing more until an ACK — gets an
    /// IMMEDIATE_ACK, and only that packet: the receiver ACKs it at once instead of
    /// waiting for its ratio or max_ack_delay while the sender waits for that ACK.
    pub(super) fn write_immediate_ack_if_blocking(
        &mut self,
        buf: &mut Vec<u8>,
        packet_start: usize,
        max: usize,
    ) {
        if !self.may_need_immediate_ack() || buf.len() >= max {
            return;
        }
        // The packet so far, the frame's byte and the AEAD tag (`packet_start` is in `buf`).
        let size = buf
            .len()
            .saturating_add(1 + TAG_LEN)
            .saturating_sub(packet_start) as u64;
        let before = self.bytes_in_flight();
        if before >= self.path.recovery.cc().window()
            || before.saturating_add(size) < self.path.recovery.cc().window()
        {
            return;
        }
        Frame::ImmediateAck.encode(buf);
        tally(&mut self.stats.immediate_ack_sent, 1);
    }
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
#[path = "ack_frequency_tests.rs"]
mod tests;
