//! ACK generation for one packet number space.

use crate::time::Instant;
use crate::wire::{AckFrame, EcnCounts};
use std::time::Duration;

/// When the receiver sends ACKs in the application data space. Initial and Handshake
/// packets are always acknowledged at once (RFC 9000 §13.2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckPolicy {
    /// Send an ACK once this many ack-eliciting packets arrived unacknowledged
    /// (RFC 9000 §13.2.2 recommends 2; the ack-frequency draft lets the peer set it).
    pub ack_eliciting_threshold: u64,
    /// Delay limit for an ACK of an ack-eliciting packet.
    pub max_ack_delay: Duration,
    /// Out-of-order arrivals trigger an immediate ACK when a gap is at least this far
    /// below the largest received (1 = RFC 9000 §13.2.1 behaviour; 0 = never).
    pub reordering_threshold: u64,
}

impl Default for AckPolicy {
    fn default() -> Self {
        AckPolicy {
            ack_eliciting_threshold: 2,
            max_ack_delay: Duration::from_millis(25),
            reordering_threshold: 1,
        }
    }
}

/// Received packet numbers of one space and the ACK timer.
#[derive(Clone, Debug, Default)]
pub struct AckTracker {
    _p: (),
}

impl AckTracker {
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether `pn` was already received (duplicates are dropped, RFC 9000 §12.3).
    pub fn is_duplicate(&self, pn: u64) -> bool {
        let _ = pn;
        todo!("H3")
    }

    /// Records a packet that was processed. `immediate`: acknowledge without delay
    /// (Initial/Handshake space, or the packet carried IMMEDIATE_ACK).
    pub fn on_packet_received(
        &mut self,
        now: Instant,
        pn: u64,
        ack_eliciting: bool,
        immediate: bool,
        policy: &AckPolicy,
    ) {
        let _ = (now, pn, ack_eliciting, immediate, policy);
        todo!("H3")
    }

    /// When an ACK must be sent: `Some(t <= now)` means now; `None` means no ACK is owed.
    pub fn ack_deadline(&self) -> Option<Instant> {
        todo!("H3")
    }

    /// Whether packets arrived since the last ACK sent (an ACK may ride along, even if
    /// none is owed yet).
    pub fn has_new(&self) -> bool {
        todo!("H3")
    }

    /// Builds an ACK frame of at most `max_ranges` ranges (the highest ones), with the
    /// ACK Delay measured from the arrival of the largest packet, scaled by
    /// 2^`ack_delay_exponent` µs (RFC 9000 §19.3), and marks it sent. `None` when nothing
    /// was ever received.
    pub fn build_ack(
        &mut self,
        now: Instant,
        ack_delay_exponent: u8,
        max_ranges: usize,
        ecn: Option<EcnCounts>,
    ) -> Option<AckFrame> {
        let _ = (now, ack_delay_exponent, max_ranges, ecn);
        todo!("H3")
    }

    /// The peer acknowledged one of our ACKs whose Largest Acknowledged was `largest`:
    /// ranges at or below it need not be reported again (RFC 9000 §13.2.4).
    pub fn on_ack_acked(&mut self, largest: u64) {
        let _ = largest;
        todo!("H3")
    }

    /// The largest packet number received, if any.
    pub fn largest(&self) -> Option<u64> {
        todo!("H3")
    }
}
