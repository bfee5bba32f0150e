//! Counters a connection keeps for experiments, independent of any event sink.

use crate::error::TransportErrorCode;
use crate::time::Instant;
use std::time::Duration;

/// Per-direction packet and byte counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PacketCounts {
    pub packets: u64,
    /// UDP payload bytes.
    pub bytes: u64,
}

impl PacketCounts {
    /// Counts one datagram of `bytes` bytes.
    pub(crate) fn add(&mut self, bytes: usize) {
        tally(&mut self.packets, 1);
        tally(&mut self.bytes, bytes as u64);
    }
}

/// Adds `n` to a counter, which stops at the maximum instead of wrapping: the rule for
/// counters where arithmetic is linted (CONTRIBUTING.md, "Arithmetic on wire values").
pub(crate) fn tally(counter: &mut u64, n: u64) {
    *counter = counter.saturating_add(n);
}

/// What a connection did, for results tables.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConnectionStats {
    pub datagrams_sent: PacketCounts,
    pub datagrams_received: PacketCounts,
    /// Packets sent per space (Initial, Handshake, application data).
    pub packets_sent: [u64; 3],
    pub packets_received: [u64; 3],
    pub packets_lost: u64,
    pub bytes_lost: u64,
    /// Packets dropped on receipt (undecryptable, duplicate, unparseable...).
    pub packets_dropped: u64,
    pub pto_count_total: u64,
    /// Unacknowledged CRYPTO data retransmitted before the PTO because the peer
    /// evidently missed some of it (RFC 9002 §6.2.3).
    pub early_crypto_retransmits: u64,
    /// The first probe timeout armed (RFC 9002 §6.2.1), and when it was armed.
    pub first_pto: Option<Duration>,
    /// The PTO period right after the first RTT sample: smoothed_rtt + max(4 rttvar,
    /// kGranularity) = 3x the sample (RFC 9002 §5.3, §6.2.1), without max_ack_delay
    /// (handshake spaces). The "first PTO" of the IMC '24 instant-ACK study.
    pub first_sample_pto: Option<Duration>,
    pub handshake_completed_at: Option<Instant>,
    pub handshake_confirmed_at: Option<Instant>,
    pub congestion_events: u64,
    pub persistent_congestion_events: u64,
    /// Congestion episodes whose lost packets were all acknowledged later (RFC 9438
    /// §4.9.2); the controller may have undone its reduction.
    pub spurious_congestion_events: u64,
    /// PMTU probes sent and lost (RFC 9000 §14.4; lost probes are not congestion
    /// signals and are not in `packets_lost`).
    pub pmtu_probes_sent: u64,
    pub pmtu_probes_lost: u64,
    pub idle_timeout: bool,
    /// Received DATAGRAM frame payloads dropped because the application had left
    /// [`MAX_QUEUED_DATAGRAMS`](crate::connection::MAX_QUEUED_DATAGRAMS) unread (RFC 9221 §5).
    pub datagrams_dropped: u64,
    /// DATAGRAM frames sent (RFC 9221; each at most once: none is retransmitted).
    pub datagram_frames_sent: u64,
    /// DATAGRAM payloads the application queued that were dropped before being sent:
    /// the send queue's bounds were reached (oldest first), or the path's size shrank
    /// below one.
    pub datagram_send_drops: u64,
    /// Peer-initiated 1-RTT key updates followed.
    pub key_updates: u64,
    /// 1-RTT key updates we initiated (RFC 9001 §6.1: `key_update.every_packets` or
    /// the confidentiality limit).
    pub key_updates_initiated: u64,
    /// ACK_FREQUENCY frames sent (including resends of lost ones).
    pub ack_frequency_sent: u64,
    /// IMMEDIATE_ACK frames sent (config `ack_frequency.immediate_ack_when_blocked`).
    pub immediate_ack_sent: u64,
    /// Both sides negotiated the ack-frequency extension (set when the peer's transport
    /// parameters arrive); see `Connection::ack_frequency_active`.
    pub ack_frequency_active: bool,
    /// The error we closed with because of a peer violation, if any.
    pub local_error: Option<TransportErrorCode>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_saturate_instead_of_wrapping() {
        let mut c = u64::MAX - 1;
        tally(&mut c, 5);
        assert_eq!(c, u64::MAX);
        let mut p = PacketCounts::default();
        p.add(1200);
        p.add(30);
        assert_eq!((p.packets, p.bytes), (2, 1230));
    }
}
