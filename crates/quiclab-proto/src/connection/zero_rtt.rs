//! 0-RTT (RFC 9001 §4.6, §5.6; RFC 9000 §7.4.1, §12.3, §17.2.3): the client sends
//! application data in 0-RTT packets when it resumes a ticket that allows early data;
//! the server reads them once TLS accepted the ClientHello's early data. 0-RTT and
//! 1-RTT share the application-data packet number space (RFC 9000 §12.3), so 0-RTT
//! packets live in `SpaceId::Data` (sent records, ACKs, packet numbers) and only their
//! header type and keys differ; the keys are kept here, not in the space.
//!
//! Client: remembered transport parameters (RFC 9000 §7.4.1) set the stream limits
//! for 0-RTT from the start. When the handshake completes, TLS says whether the server
//! accepted: if so, the server's new limits must not be smaller than the remembered
//! ones (PROTOCOL_VIOLATION otherwise, RFC 9000 §7.4.1); if not, every 0-RTT packet is
//! treated as lost and its data resent in 1-RTT (RFC 9001 §4.6.2). The stream state is
//! kept rather than reset (§4.6.2 asks the application to reset its streams: quiclab's
//! applications only send idempotent requests, which are simply resent).
//!
//! Server: with `zero_rtt` configured, 0-RTT packets are read with the keys TLS gives
//! after it accepted the early data; 0-RTT packets that come before (a lost or
//! reordered Initial, a held ClientHello) wait in a bounded queue. Having accepted
//! 0-RTT, the server may send 1-RTT (0.5-RTT) data before the handshake completes
//! (RFC 9001 §4.1.1, §5.7), so a request in 0-RTT is answered within one round trip.

use super::parsed::Parsed;
use super::spaces::SpaceId;
use super::zero_rtt_state::{ZeroRttStatus, MAX_PENDING};
use super::Connection;
use crate::crypto::protect::{decrypt_payload, unprotect_header};
use crate::crypto::DirectionalKeys;
use crate::error::TransportError;
use crate::events::DropReason;
use crate::time::Instant;
use crate::wire::header::decode_packet_number;
use crate::wire::{PacketType, Side, TransportParameters};

impl Connection {
    /// Client, at creation: starts 0-RTT if configured and TLS resumes a ticket that
    /// allows it; the remembered parameters then set the stream limits (RFC 9000 §7.4.1).
    pub(super) fn start_zero_rtt(&mut self) -> Result<(), TransportError> {
        if !self.config.zero_rtt {
            return Ok(());
        }
        let (Some(keys), Some(raw)) = (self.tls.zero_rtt_keys(), self.tls.remembered_params())
        else {
            return Ok(());
        };
        let remembered = TransportParameters::decode(raw, Side::Server)?;
        self.streams.apply_peer_params(&remembered);
        self.zero_rtt.remembered = Some(Box::new(remembered));
        self.zero_rtt.keys = Some(keys);
        self.zero_rtt.status = ZeroRttStatus::Attempted;
        Ok(())
    }

    /// Whether `space` can carry a packet now: its keys, or (application data, client)
    /// the 0-RTT keys before the 1-RTT ones.
    pub(super) fn space_sendable(&self, space: SpaceId) -> bool {
        self.spaces[space as usize].can_send()
            || (space == SpaceId::Data && self.side == Side::Client && self.zero_rtt.can_send())
    }

    /// Whether an application-data packet we build now is a 0-RTT one.
    pub(super) fn sending_zero_rtt(&self, space: SpaceId) -> bool {
        space == SpaceId::Data && !self.spaces[space as usize].can_send()
    }

    /// Whether stream data may be sent: after the handshake; a client in 0-RTT; a
    /// server that accepted 0-RTT, in 1-RTT before completion (0.5-RTT data).
    pub(super) fn may_send_app_data(&self) -> bool {
        self.handshake.complete
            || (self.side == Side::Client && self.zero_rtt.can_send())
            || (self.side == Side::Server
                && self.zero_rtt.status == ZeroRttStatus::Accepted
                && self.spaces[SpaceId::Data as usize].can_send())
    }

    /// The packet key and header key to seal a 0-RTT packet with.
    pub(super) fn zero_rtt_seal_keys(&self) -> Option<&DirectionalKeys> {
        self.zero_rtt.keys.as_ref()
    }

    /// Server, after each TLS step: installs the 0-RTT read keys once TLS accepted the
    /// early data (RFC 9001 §4.6.2); once the ServerHello went without acceptance,
    /// 0-RTT is rejected and the waiting packets are dropped.
    pub(super) fn poll_zero_rtt_keys(&mut self) {
        if self.side != Side::Server || !self.config.zero_rtt {
            return;
        }
        if self.zero_rtt.status != ZeroRttStatus::None {
            return;
        }
        if let Some(keys) = self.tls.zero_rtt_keys() {
            self.zero_rtt.keys = Some(keys);
            self.zero_rtt.status = ZeroRttStatus::Accepted;
        } else if self.spaces[SpaceId::Handshake as usize].keys.is_some() {
            self.zero_rtt.pending.clear();
        }
    }

    /// Client, handshake complete: learns the server's answer (RFC 9001 §4.6.2) and
    /// drops the 0-RTT keys (§4.9.3). Accepted: the server's new limits must not be
    /// below the remembered ones (RFC 9000 §7.4.1). Rejected: every 0-RTT packet is
    /// lost and its data goes again in 1-RTT.
    pub(super) fn finish_zero_rtt(&mut self, now: Instant) -> Result<(), TransportError> {
        if self.side != Side::Client || self.zero_rtt.status != ZeroRttStatus::Attempted {
            return Ok(());
        }
        self.zero_rtt.keys = None;
        if self.tls.is_early_data_accepted() {
            self.zero_rtt.status = ZeroRttStatus::Accepted;
            if let (Some(old), Some(new)) = (&self.zero_rtt.remembered, self.params.peer()) {
                check_not_reduced(old, new)?;
            }
            return Ok(());
        }
        self.zero_rtt.status = ZeroRttStatus::Rejected;
        // Every application-data packet sent so far was a 0-RTT one: the 1-RTT keys
        // arrive together with completion on the client.
        let lost = self.path.recovery.take_all(SpaceId::Data);
        self.ecn.on_space_discarded(SpaceId::Data);
        for p in &lost {
            self.requeue_lost(SpaceId::Data, &p.data);
        }
        self.set_loss_detection_timer(now);
        Ok(())
    }

    /// Handles a received 0-RTT packet (RFC 9000 §17.2.3); returns whether it was
    /// authenticated and processed.
    pub(super) fn handle_zero_rtt_packet(
        &mut self,
        now: Instant,
        h: Parsed,
        packet: &mut [u8],
    ) -> bool {
        let size = packet.len();
        let ty = Some(PacketType::ZeroRtt);
        // Only clients send 0-RTT; a server that did not accept it must not read it
        // (RFC 9001 §4.6.2), and one not configured for it never does.
        let accepting = self.side == Side::Server
            && self.config.zero_rtt
            && matches!(
                self.zero_rtt.status,
                ZeroRttStatus::None | ZeroRttStatus::Accepted
            );
        if !accepting {
            self.drop_packet(now, ty, size, DropReason::KeyUnavailable);
            return false;
        }
        if self.zero_rtt.keys.is_none() {
            if self.zero_rtt.pending.len() < MAX_PENDING && self.may_keep_packet(packet.len()) {
                self.zero_rtt.pending.push((h, packet.to_vec()));
            } else {
                self.drop_packet(now, ty, size, DropReason::KeyUnavailable);
            }
            return false;
        }
        let Some((pn, payload)) = self.unprotect_zero_rtt(&h, packet) else {
            self.drop_packet(now, ty, size, DropReason::DecryptionFailure);
            return false;
        };
        self.zero_rtt.packets += 1;
        self.process_packet(now, SpaceId::Data, &h, pn, payload, packet)
    }

    fn unprotect_zero_rtt(
        &self,
        h: &Parsed,
        packet: &mut [u8],
    ) -> Option<(u64, std::ops::Range<usize>)> {
        let keys = self.zero_rtt.keys.as_ref()?;
        let largest = self.spaces[SpaceId::Data as usize].acks.largest();
        let uh = unprotect_header(&*keys.header, packet, h.pn_offset()).ok()?;
        let pn = decode_packet_number(largest, uh.truncated_pn, uh.pn_len);
        let header_len = h.pn_offset() + uh.pn_len;
        decrypt_payload(&*keys.packet, packet, header_len, pn)
            .ok()
            .map(|r| (pn, r))
    }

    /// Server: the 0-RTT packets that waited for their keys, once the keys are known.
    pub(super) fn process_pending_zero_rtt(&mut self, now: Instant) {
        if self.zero_rtt.keys.is_none() || self.zero_rtt.pending.is_empty() {
            return;
        }
        for (h, mut packet) in std::mem::take(&mut self.zero_rtt.pending) {
            self.handle_zero_rtt_packet(now, h, &mut packet);
        }
    }

    /// Where 0-RTT stands (for applications, tests and the simulator's metrics).
    pub fn zero_rtt_status(&self) -> ZeroRttStatus {
        self.zero_rtt.status
    }

    /// 0-RTT packets sent (client) or processed (server).
    pub fn zero_rtt_packets(&self) -> u64 {
        self.zero_rtt.packets
    }

    /// Whether the handshake resumed a TLS session (RFC 9001 §4.5: PSK, no certificate).
    pub fn is_resumed(&self) -> bool {
        self.tls.is_resumed()
    }

    /// For qlog's parameters_set: whether the handshake resumed a session and 0-RTT
    /// was accepted (server: TLS gave 0-RTT keys; client: the server said so).
    pub(super) fn tls_resumption(&self) -> crate::events::TlsResumption {
        let early_data = match self.side {
            Side::Server => self.config.zero_rtt && self.tls.zero_rtt_keys().is_some(),
            Side::Client => {
                self.zero_rtt.status == ZeroRttStatus::Attempted
                    && self.tls.is_early_data_accepted()
            }
        };
        crate::events::TlsResumption {
            resumed: self.tls.is_resumed(),
            early_data,
        }
    }

    /// Client: whether stream data written now goes out in 0-RTT packets.
    pub fn is_zero_rtt_sending(&self) -> bool {
        self.side == Side::Client && self.zero_rtt.can_send()
    }
}

/// RFC 9000 §7.4.1: a server that accepted 0-RTT must not lower these limits below the
/// remembered values.
fn check_not_reduced(
    old: &TransportParameters,
    new: &TransportParameters,
) -> Result<(), TransportError> {
    let pairs = [
        (
            "active_connection_id_limit",
            old.active_connection_id_limit,
            new.active_connection_id_limit,
        ),
        (
            "initial_max_data",
            old.initial_max_data,
            new.initial_max_data,
        ),
        (
            "initial_max_stream_data_bidi_local",
            old.initial_max_stream_data_bidi_local,
            new.initial_max_stream_data_bidi_local,
        ),
        (
            "initial_max_stream_data_bidi_remote",
            old.initial_max_stream_data_bidi_remote,
            new.initial_max_stream_data_bidi_remote,
        ),
        (
            "initial_max_stream_data_uni",
            old.initial_max_stream_data_uni,
            new.initial_max_stream_data_uni,
        ),
        (
            "initial_max_streams_bidi",
            old.initial_max_streams_bidi,
            new.initial_max_streams_bidi,
        ),
        (
            "initial_max_streams_uni",
            old.initial_max_streams_uni,
            new.initial_max_streams_uni,
        ),
    ];
    for (name, old, new) in pairs {
        if new < old {
            return Err(TransportError::protocol_violation(format!(
                "0-RTT accepted but {name} lowered from the remembered {old} to {new}"
            )));
        }
    }
    Ok(())
}
