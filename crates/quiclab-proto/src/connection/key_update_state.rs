//! The 1-RTT key phase (RFC 9001 §6): current, next and previous keys and the counts
//! the AEAD limits need (§6.6). The connection drives it from `key_update.rs`.

use crate::crypto::protect::decrypt_payload;
use crate::crypto::{Keys, NextSecrets, PacketKey, PacketKeySet};
use crate::error::{TransportError, TransportErrorCode};
use std::ops::Range;

/// Key phase state of the 1-RTT keys.
#[derive(Default)]
pub struct KeyUpdate {
    /// rustls's, or derived with the labels of the version a server moved a client to
    /// ("quicv2 ku" in v2, RFC 9369 §3.3.2).
    secrets: Option<NextSecrets>,
    /// The key phase bit of the current keys.
    phase: bool,
    /// Keys of the next phase, derived ahead of time.
    next: Option<PacketKeySet>,
    /// The previous phase's receive key, for packets reordered across the update,
    /// with the lowest packet number the peer sent in the current phase (`u64::MAX`
    /// until one arrives after our own update).
    previous: Option<(Box<dyn PacketKey>, u64)>,
    /// The first packet number we send in the current phase: once the peer
    /// acknowledges it or a later one, we may update again (§6.1).
    first_sent_pn: u64,
    /// `stats.packets_sent[Data]` when the current phase began.
    sent_at_phase_start: u64,
    /// 1-RTT packets that failed authentication over the connection (§6.6).
    failed_authentications: u64,
    /// A violation found while decrypting, for the receive path to close with.
    error: Option<TransportError>,
    /// The key phase changed and qlog has not been told yet.
    log_pending: bool,
}

impl KeyUpdate {
    /// Takes the secrets TLS hands over with the 1-RTT keys.
    pub fn install(&mut self, mut secrets: NextSecrets) {
        self.next = Some(secrets.next_packet_keys());
        self.secrets = Some(secrets);
    }

    /// A violation found while decrypting (KEY_UPDATE_ERROR, AEAD_LIMIT_REACHED).
    pub fn take_error(&mut self) -> Option<TransportError> {
        self.error.take()
    }

    pub fn has_error(&self) -> bool {
        self.error.is_some()
    }

    /// The key phase bit of the current keys (RFC 9001 §6): flips with every update.
    pub fn phase(&self) -> bool {
        self.phase
    }

    /// Opens a 1-RTT packet whose key phase bit is `phase` (RFC 9001 §6.3) with the
    /// current keys `keys`, the previous receive key or the next keys. A packet that
    /// only the next keys open moves both directions to them (`packets_sent` and
    /// `next_pn`: our 1-RTT packets so far and our next packet number), unless the
    /// peer updates twice without waiting for our packets (§6.2); a packet only the
    /// previous keys open although numbered above one the current keys opened is a
    /// violation (§6.4). Returns the payload's range and whether the keys moved.
    pub fn open(
        &mut self,
        keys: &mut Keys,
        phase: bool,
        packet: &mut [u8],
        header_len: usize,
        pn: u64,
        (packets_sent, next_pn): (u64, u64),
    ) -> Option<(Range<usize>, bool)> {
        if phase == self.phase {
            let range = decrypt_payload(&*keys.remote.packet, packet, header_len, pn).ok()?;
            if let Some((_, first)) = &mut self.previous {
                *first = (*first).min(pn);
            }
            return Some((range, false));
        }
        // A copy for the §6.4 check: the previous keys open a packet numbered above
        // one the current keys opened. Only when both could apply (rare), since a
        // failed decryption leaves the buffer unusable.
        let mut copy = None;
        if let Some((old, first_pn)) = &self.previous {
            if pn < *first_pn {
                let range = decrypt_payload(&**old, packet, header_len, pn).ok()?;
                return Some((range, false));
            }
            copy = Some(packet.to_vec());
        }
        let next = self.next.as_ref()?;
        let Ok(range) = decrypt_payload(&*next.remote, packet, header_len, pn) else {
            if let (Some(mut c), Some((old, _))) = (copy, &self.previous) {
                if decrypt_payload(&**old, &mut c, header_len, pn).is_ok() {
                    self.error = Some(key_update_error(
                        "old keys protect a packet numbered above newer keys' packets",
                    ));
                }
            }
            return None;
        };
        // §6.2: the peer updates again before we sent anything with the keys of its
        // previous update, so it cannot have seen our ACK in the new phase.
        if self.previous.is_some() && self.sent_in_phase(packets_sent) == 0 {
            self.error = Some(key_update_error(
                "consecutive key updates without awaiting confirmation",
            ));
            return None;
        }
        self.switch(keys, pn, packets_sent, next_pn);
        Some((range, true))
    }

    /// Moves both directions of `keys` to the next keys; `peer_first_pn` is the first
    /// packet the peer protected with them (`u64::MAX` when we initiate).
    pub fn switch(&mut self, keys: &mut Keys, peer_first_pn: u64, packets_sent: u64, next_pn: u64) {
        let Some(next) = self.next.take() else {
            return;
        };
        let old_remote = std::mem::replace(&mut keys.remote.packet, next.remote);
        keys.local.packet = next.local;
        self.previous = Some((old_remote, peer_first_pn));
        self.phase = !self.phase;
        self.next = self.secrets.as_mut().map(|s| s.next_packet_keys());
        self.first_sent_pn = next_pn;
        self.sent_at_phase_start = packets_sent;
        self.log_pending = true;
    }

    /// §6.6: a 1-RTT packet failed authentication; past `limit` such packets the
    /// connection must close (AEAD_LIMIT_REACHED, kept for the receive path).
    pub fn on_authentication_failure(&mut self, limit: u64) {
        self.failed_authentications += 1;
        if self.failed_authentications > limit && self.error.is_none() {
            self.error = Some(aead_limit("integrity limit: too many forged packets"));
        }
    }

    /// Packets sent with the current keys, of `packets_sent` 1-RTT packets in all.
    pub fn sent_in_phase(&self, packets_sent: u64) -> u64 {
        packets_sent - self.sent_at_phase_start
    }

    /// §6.1: we may start an update once the peer acknowledged a packet of the current
    /// phase (`largest_acked` is the largest it acknowledged) and the next keys exist;
    /// the caller adds the handshake's confirmation.
    pub fn may_initiate(&self, largest_acked: Option<u64>) -> bool {
        largest_acked.is_some_and(|l| l >= self.first_sent_pn) && self.next.is_some()
    }

    /// Whether the phase changed since the last call (for the qlog `key_updated`).
    pub fn take_log_pending(&mut self) -> bool {
        std::mem::take(&mut self.log_pending)
    }
}

pub(super) fn aead_limit(reason: &str) -> TransportError {
    TransportError::new(TransportErrorCode::AEAD_LIMIT_REACHED, reason)
}

fn key_update_error(reason: &str) -> TransportError {
    TransportError::new(TransportErrorCode::KEY_UPDATE_ERROR, reason)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::initial::initial_keys;
    use crate::wire::{ConnectionId, Side, VERSION_1};

    fn keys(id: u8, side: Side) -> Keys {
        initial_keys(VERSION_1, &ConnectionId::new(&[id; 8]).unwrap(), side)
    }

    /// A client's phase state whose next keys are those of connection ID `[2; 8]`.
    fn client() -> KeyUpdate {
        let next = keys(2, Side::Client);
        KeyUpdate {
            next: Some(PacketKeySet {
                local: next.local.packet,
                remote: next.remote.packet,
            }),
            ..KeyUpdate::default()
        }
    }

    /// A short-header packet numbered `pn` (1-byte number), protected by `key`.
    fn packet(key: &dyn PacketKey, pn: u64) -> Vec<u8> {
        let header = [0x40, pn as u8];
        let mut body = b"payload".to_vec();
        let tag = key.encrypt_in_place(pn, &header, &mut body).unwrap();
        [&header[..], &body, tag.as_ref()].concat()
    }

    #[test]
    fn the_next_phase_moves_both_directions_and_the_previous_key_stays_for_late_packets() {
        let mut ku = client();
        let mut current = keys(1, Side::Client);
        let (old_server, new_server) = (keys(1, Side::Server), keys(2, Side::Server));
        let mut p = packet(&*new_server.local.packet, 5);
        let (range, moved) = ku.open(&mut current, true, &mut p, 2, 5, (7, 10)).unwrap();
        assert_eq!((&p[range], moved), (&b"payload"[..], true));
        assert!(ku.phase() && ku.take_log_pending() && !ku.take_log_pending());
        assert_eq!(ku.sent_in_phase(9), 2);
        // A packet of the old phase numbered below the peer's first new one opens.
        let mut late = packet(&*old_server.local.packet, 3);
        let (_, moved) = ku
            .open(&mut current, false, &mut late, 2, 3, (9, 12))
            .unwrap();
        assert!(!moved && ku.phase());
        // The new keys now open packets of the current phase.
        let mut q = packet(&*new_server.local.packet, 6);
        assert!(ku.open(&mut current, true, &mut q, 2, 6, (9, 12)).is_some());
        assert!(!ku.has_error());
    }

    #[test]
    fn old_keys_above_a_newer_packet_are_a_key_update_error() {
        let mut ku = client();
        let mut current = keys(1, Side::Client);
        let (old_server, new_server) = (keys(1, Side::Server), keys(2, Side::Server));
        let mut p = packet(&*new_server.local.packet, 5);
        ku.open(&mut current, true, &mut p, 2, 5, (7, 10)).unwrap();
        // The keys after those (as TLS's secrets would derive them).
        let after = keys(3, Side::Client);
        ku.next = Some(PacketKeySet {
            local: after.local.packet,
            remote: after.remote.packet,
        });
        // RFC 9001 §6.4: numbered above 5, yet protected with the old keys.
        let mut bad = packet(&*old_server.local.packet, 8);
        assert!(ku
            .open(&mut current, false, &mut bad, 2, 8, (7, 10))
            .is_none());
        let e = ku.take_error().unwrap();
        assert_eq!(e.code, TransportErrorCode::KEY_UPDATE_ERROR);
    }

    #[test]
    fn forged_packets_past_the_integrity_limit_are_an_error() {
        let mut ku = KeyUpdate::default();
        ku.on_authentication_failure(2);
        ku.on_authentication_failure(2);
        assert!(!ku.has_error());
        ku.on_authentication_failure(2);
        assert_eq!(
            ku.take_error().map(|e| e.code),
            Some(TransportErrorCode::AEAD_LIMIT_REACHED)
        );
    }

    #[test]
    fn an_update_waits_for_an_ack_in_the_current_phase_and_for_next_keys() {
        assert!(
            !KeyUpdate::default().may_initiate(Some(100)),
            "no next keys"
        );
        let mut ku = client();
        assert!(!ku.may_initiate(None));
        assert!(ku.may_initiate(Some(0)));
        let mut current = keys(1, Side::Client);
        ku.switch(&mut current, u64::MAX, 7, 10);
        assert!(ku.phase());
        // No secrets to derive more keys from: no further update.
        assert!(!ku.may_initiate(Some(10)));
    }
}
