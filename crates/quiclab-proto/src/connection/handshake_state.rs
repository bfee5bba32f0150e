//! Where the handshake stands (RFC 9001 §4.1): completion, confirmation, which space
//! TLS writes in, the address-validation facts loss recovery needs (RFC 9002 A.8), the
//! early CRYPTO retransmission budget (RFC 9002 §6.2.3), 1-RTT packets that came too
//! early, and the server's ClientHello hold ([`ServerHold`]).
//!
//! The connection drives it from `handshake.rs` (TLS), `recv.rs` and `loss.rs`; the
//! rules that need nothing else live here.

use super::parsed::Parsed;
use super::server_hold::ServerHold;
use super::spaces::SpaceId;
use crate::config::HandshakeConfig;
use crate::time::Instant;
use std::time::Duration;

/// RFC 9002 §6.2.3: early CRYPTO retransmissions allowed per connection ("a limited
/// number of times"; one per handshake space), one PTO period apart at least.
const MAX_EARLY_CRYPTO_RETRANSMITS: u32 = 2;
/// How many 1-RTT packets a server keeps while its handshake is incomplete.
const MAX_EARLY_ONE_RTT: usize = 16;

/// The handshake's progress and the state only it uses.
pub(super) struct HandshakeState {
    /// TLS finished (RFC 9001 §4.1.1).
    pub complete: bool,
    /// The handshake is confirmed (RFC 9001 §4.1.2).
    pub confirmed: bool,
    /// Server: HANDSHAKE_DONE is to be sent (again, if lost).
    pub done_pending: bool,
    /// Client: a packet from the server was processed (its SCID is now our DCID).
    pub received_server_packet: bool,
    /// Client: the server acknowledged a Handshake packet (RFC 9002 A.8).
    pub peer_validated_address: bool,
    /// The space TLS currently writes handshake data in.
    pub tls_write_space: SpaceId,
    /// RFC 9002 §6.2.3: early CRYPTO retransmissions done, and when the last one was.
    early_crypto_retransmits: u32,
    last_early_crypto_retransmit: Option<Instant>,
    /// Server: 1-RTT packets that arrived before the handshake completed.
    early_one_rtt: Vec<(Parsed, Vec<u8>)>,
    /// Server: the ClientHello hold and instant ACK (config `handshake`).
    pub hold: ServerHold,
}

impl HandshakeState {
    /// `server`: whether we are the server (its peer's address needs no validation
    /// from the client's point of view, RFC 9002 A.8).
    pub fn new(server: bool, config: &HandshakeConfig) -> Self {
        HandshakeState {
            complete: false,
            confirmed: false,
            done_pending: false,
            received_server_packet: false,
            peer_validated_address: server,
            tls_write_space: SpaceId::Initial,
            early_crypto_retransmits: 0,
            last_early_crypto_retransmit: None,
            early_one_rtt: Vec::new(),
            hold: ServerHold::new(config),
        }
    }

    /// RFC 9002 §6.2.3: whether another early CRYPTO retransmission is allowed now
    /// (limited per connection, and to one per PTO period `pto` so that two endpoints
    /// cannot ping-pong; none once confirmed).
    pub fn may_speed_up(&self, now: Instant, pto: Duration) -> bool {
        !self.confirmed
            && self.early_crypto_retransmits < MAX_EARLY_CRYPTO_RETRANSMITS
            && self
                .last_early_crypto_retransmit
                .is_none_or(|t| now >= t + pto)
    }

    /// An early CRYPTO retransmission was queued at `now`.
    pub fn on_speed_up(&mut self, now: Instant) {
        self.early_crypto_retransmits += 1;
        self.last_early_crypto_retransmit = Some(now);
    }

    /// Server, handshake incomplete: keeps a 1-RTT packet for later (RFC 9001 §5.7
    /// forbids processing it yet); returns false (drop it) when the bounded queue is
    /// full.
    pub fn keep_early_one_rtt(&mut self, h: Parsed, packet: &[u8]) -> bool {
        if self.early_one_rtt.len() >= MAX_EARLY_ONE_RTT {
            return false;
        }
        self.early_one_rtt.push((h, packet.to_vec()));
        true
    }

    /// The 1-RTT packets kept while the handshake was incomplete, oldest first.
    pub fn take_early_one_rtt(&mut self) -> Vec<(Parsed, Vec<u8>)> {
        std::mem::take(&mut self.early_one_rtt)
    }

    /// Bytes of the 1-RTT packets kept while the handshake is incomplete.
    pub fn early_one_rtt_bytes(&self) -> u64 {
        self.early_one_rtt.iter().map(|(_, p)| p.len() as u64).sum()
    }

    /// Whether 1-RTT packets wait for the handshake to complete.
    pub fn has_early_one_rtt(&self) -> bool {
        !self.early_one_rtt.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{ConnectionId, PacketType};

    fn early_packet() -> Parsed {
        let cid = ConnectionId::new(&[1; 8]).unwrap();
        Parsed {
            ty: PacketType::OneRtt,
            version: 0,
            dcid: cid,
            scid: cid,
            pn_offset: 9,
            packet_len: 40,
            ecn: crate::ecn::Ecn::NotEct,
        }
    }

    #[test]
    fn early_crypto_retransmissions_are_limited_and_a_pto_apart() {
        let mut h = HandshakeState::new(false, &HandshakeConfig::default());
        let (t0, pto) = (Instant::from_millis(0), Duration::from_millis(100));
        assert!(h.may_speed_up(t0, pto));
        h.on_speed_up(t0);
        assert!(!h.may_speed_up(Instant::from_millis(99), pto));
        assert!(h.may_speed_up(Instant::from_millis(100), pto));
        h.on_speed_up(Instant::from_millis(100));
        assert!(
            !h.may_speed_up(Instant::from_millis(10_000), pto),
            "at most two"
        );
        let mut confirmed = HandshakeState::new(true, &HandshakeConfig::default());
        confirmed.confirmed = true;
        assert!(!confirmed.may_speed_up(t0, pto));
        assert!(
            confirmed.peer_validated_address,
            "a server's peer needs no check"
        );
    }

    #[test]
    fn early_one_rtt_packets_are_bounded() {
        let mut h = HandshakeState::new(true, &HandshakeConfig::default());
        for _ in 0..MAX_EARLY_ONE_RTT {
            assert!(h.keep_early_one_rtt(early_packet(), &[0; 40]));
        }
        assert!(!h.keep_early_one_rtt(early_packet(), &[0; 40]));
        assert_eq!(h.early_one_rtt_bytes(), 40 * MAX_EARLY_ONE_RTT as u64);
        assert_eq!(h.take_early_one_rtt().len(), MAX_EARLY_ONE_RTT);
        assert!(!h.has_early_one_rtt());
    }
}
