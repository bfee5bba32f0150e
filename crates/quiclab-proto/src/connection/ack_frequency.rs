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

use super::ack_frequency_state::{cwnd_ratio, MAX_REQUESTED_DELAY_US};
use super::spaces::{SentFrame, SentFrames};
use super::stats::tally;
use super::Connection;
use crate::ack::AckPolicy;
use crate::config::AckFrequencyPolicy;
use crate::crypto::TAG_LEN;
use crate::error::TransportError;
use crate::time::Instant;
use crate::wire::{AckFrequencyFrame, Frame};
use std::time::Duration;

impl Connection {
    /// Whether the ack-frequency extension is in use for our sending: we offered it
    /// (`min_ack_delay_us`) and the peer's transport parameters carried min_ack_delay.
    /// When false, `ack_frequency` policies send nothing (a capability, not an error).
    pub fn ack_frequency_active(&self) -> bool {
        self.config.min_ack_delay_us.is_some()
            && self
                .params
                .peer()
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
        let peer = self.params.peer();
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

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects)] // tests compute expected values freely
#[path = "ack_frequency_tests.rs"]
mod tests;
