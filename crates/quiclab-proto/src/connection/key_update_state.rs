//! The 1-RTT key phase (RFC 9001 §6): current, next and previous keys and the counts
//! the AEAD limits need (§6.6). The connection drives it from `key_update.rs`, and
//! for the multipath paths above 0 from `multipath_recv.rs` / `multipath_send.rs`
//! (`key_update_paths.rs`): key updates are connection-wide (draft-ietf-quic-multipath
//! §2.5, "Key Phase Update Process"), so a packet on any path may move both directions
//! to the next keys, every path's packets count toward the phase's packets (§6.6), and
//! an acknowledgment on any path of a packet sent in the current phase allows the next
//! update (§6.1). On a multipath connection the next update also waits 3 × the largest
//! PTO among the paths after the acknowledgment that confirmed the current phase
//! ("Key Phase Update Process"; `earliest_next`).

use crate::crypto::protect::{decrypt_payload, decrypt_payload_on_path};
use crate::crypto::{Keys, NextSecrets, PacketKey, PacketKeySet};
use crate::error::{TransportError, TransportErrorCode};
use crate::time::Instant;
use crate::wire::PathId;
use std::ops::Range;
use std::time::Duration;

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
    /// Key phases so far (0 before the first update): dates each path's
    /// [`PhaseMark`] and `acked_on_path`.
    epoch: u64,
    /// 1-RTT packets sent on the multipath paths above 0 over the connection (the
    /// connection's `packets_sent` counts path 0's only).
    path_packets_sent: u64,
    /// A PATH_ACK for a path above 0 acknowledged a packet sent in the current phase
    /// (§6.1 on any path; path 0's is `first_sent_pn`).
    acked_on_path: bool,
    /// Multipath only (draft-ietf-quic-multipath "Key Phase Update Process": "wait for
    /// at least three times the largest PTO among all the paths before initiating a
    /// new key update after receiving an acknowledgment that confirms the receipt of
    /// the previous key update"): no update before this instant, set when that
    /// acknowledgment arrives ([`KeyUpdate::on_multipath_ack`]); `None` until then.
    earliest_next: Option<Instant>,
}

/// One multipath path's (above 0) view of the current key phase: the lowest packet
/// number the peer sent on it in this phase, for RFC 9001 §6.3 / §6.4 (packets below
/// it are the previous phase's); the first packet number we sent on it in this phase,
/// for §6.1. Stale once the phase moves on (its epoch is not the current one).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PhaseMark {
    epoch: u64,
    peer_first: Option<u64>,
    sent_first: Option<u64>,
}

impl PhaseMark {
    fn peer_first(&self, epoch: u64) -> Option<u64> {
        self.peer_first.filter(|_| self.epoch == epoch)
    }

    fn refresh(&mut self, epoch: u64) {
        if self.epoch != epoch {
            *self = PhaseMark {
                epoch,
                ..PhaseMark::default()
            };
        }
    }
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
        self.sent_at_phase_start = packets_sent.saturating_add(self.path_packets_sent);
        self.log_pending = true;
        self.epoch = self.epoch.wrapping_add(1);
        self.acked_on_path = false;
        self.earliest_next = None;
    }

    /// §6.6: a 1-RTT packet failed authentication; past `limit` such packets the
    /// connection must close (AEAD_LIMIT_REACHED, kept for the receive path).
    pub fn on_authentication_failure(&mut self, limit: u64) {
        self.failed_authentications += 1;
        if self.failed_authentications > limit && self.error.is_none() {
            self.error = Some(aead_limit("integrity limit: too many forged packets"));
        }
    }

    /// Packets sent with the current keys, of `packets_sent` 1-RTT packets on path 0
    /// and those sent on the other paths.
    pub fn sent_in_phase(&self, packets_sent: u64) -> u64 {
        packets_sent.saturating_add(self.path_packets_sent) - self.sent_at_phase_start
    }

    /// §6.1: we may start an update once the peer acknowledged a packet of the current
    /// phase (`largest_acked` is the largest it acknowledged) and the next keys exist;
    /// the caller adds the handshake's confirmation.
    pub fn may_initiate(&self, largest_acked: Option<u64>) -> bool {
        self.confirmed(largest_acked) && self.next.is_some()
    }

    /// §6.1: the peer acknowledged a packet of the current phase, on path 0
    /// (`largest_acked`, path 0's largest acknowledged) or on a path above 0.
    fn confirmed(&self, largest_acked: Option<u64>) -> bool {
        largest_acked.is_some_and(|l| l >= self.first_sent_pn) || self.acked_on_path
    }

    /// Multipath: an ACK or PATH_ACK was processed at `now` (path 0's largest
    /// acknowledged is `largest_acked`). The first that confirms the current phase,
    /// after an update, dates the next one: no earlier than `now + 3 × largest_pto`
    /// (draft-ietf-quic-multipath "Key Phase Update Process"). The first update waits
    /// for nothing more than §6.1's acknowledgment: there is no previous update.
    pub fn on_multipath_ack(
        &mut self,
        now: Instant,
        largest_acked: Option<u64>,
        largest_pto: Duration,
    ) {
        if self.epoch == 0 || self.earliest_next.is_some() || !self.confirmed(largest_acked) {
            return;
        }
        self.earliest_next = Some(now.saturating_add(largest_pto.saturating_mul(3)));
    }

    /// Multipath: [`KeyUpdate::may_initiate`] and, after a first update, the wait of
    /// [`KeyUpdate::on_multipath_ack`] is over at `now`.
    pub fn may_initiate_multipath(&self, largest_acked: Option<u64>, now: Instant) -> bool {
        let waited = self.epoch == 0 || self.earliest_next.is_some_and(|t| now >= t);
        self.may_initiate(largest_acked) && waited
    }

    /// A packet `pn` leaves on path `mark`'s path (above 0) in the current phase.
    pub fn on_path_packet_sent(&mut self, mark: &mut PhaseMark, pn: u64) {
        self.path_packets_sent = self.path_packets_sent.saturating_add(1);
        mark.refresh(self.epoch);
        mark.sent_first.get_or_insert(pn);
    }

    /// A PATH_ACK for `mark`'s path (above 0) raised its largest acknowledged to
    /// `largest`: if that covers a packet sent there in the current phase, §6.1 allows
    /// the next update.
    pub fn on_path_acked(&mut self, mark: &PhaseMark, largest: u64) {
        if mark.epoch == self.epoch && mark.sent_first.is_some_and(|f| largest >= f) {
            self.acked_on_path = true;
        }
    }

    /// [`KeyUpdate::open`] for a packet on multipath path `path` (above 0), with the
    /// path's nonce (draft-ietf-quic-multipath §2.4) and its own packet numbers
    /// (`mark`): below the peer's first packet of the current phase on that path, only
    /// the previous keys apply (§6.3), above it the previous keys opening the packet is
    /// a KEY_UPDATE_ERROR (§6.4); before any packet of the current phase came on the
    /// path, the previous keys are tried, then the next.
    #[allow(clippy::too_many_arguments)] // `open`'s, with the path and its mark
    pub fn open_on_path(
        &mut self,
        keys: &mut Keys,
        (path, mark): (PathId, &mut PhaseMark),
        phase: bool,
        packet: &mut [u8],
        header_len: usize,
        pn: u64,
        (packets_sent, next_pn): (u64, u64),
    ) -> Option<(Range<usize>, bool)> {
        let open = |key: &dyn PacketKey, p: &mut [u8]| {
            decrypt_payload_on_path(key, p, header_len, pn, Some(path)).ok()
        };
        if phase == self.phase {
            let range = open(&*keys.remote.packet, packet)?;
            self.note_peer_packet(mark, pn);
            return Some((range, false));
        }
        let mut copy = None;
        if let Some((old, _)) = &self.previous {
            match mark.peer_first(self.epoch) {
                Some(first) if pn < first => return open(&**old, packet).map(|r| (r, false)),
                Some(_) => copy = Some(packet.to_vec()),
                None => {
                    let saved = packet.to_vec();
                    if let Some(r) = open(&**old, packet) {
                        return Some((r, false));
                    }
                    packet.copy_from_slice(&saved);
                }
            }
        }
        let next = self.next.as_ref()?;
        let Some(range) = open(&*next.remote, packet) else {
            if let (Some(mut c), Some((old, _))) = (copy, &self.previous) {
                if open(&**old, &mut c).is_some() {
                    self.error = Some(key_update_error(
                        "old keys protect a packet numbered above newer keys' packets",
                    ));
                }
            }
            return None;
        };
        if self.previous.is_some() && self.sent_in_phase(packets_sent) == 0 {
            self.error = Some(key_update_error(
                "consecutive key updates without awaiting confirmation",
            ));
            return None;
        }
        // Path 0 saw nothing of the new phase yet: its late packets are the old one's.
        self.switch(keys, u64::MAX, packets_sent, next_pn);
        self.note_peer_packet(mark, pn);
        Some((range, true))
    }

    fn note_peer_packet(&self, mark: &mut PhaseMark, pn: u64) {
        mark.refresh(self.epoch);
        mark.peer_first = Some(mark.peer_first.map_or(pn, |f| f.min(pn)));
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
    /// Path 0's nonce is the single-path one (draft-ietf-quic-multipath "Nonce
    /// Calculation after Handshake Completion": path ID 0 leaves the IV as it is).
    fn packet(key: &dyn PacketKey, pn: u64) -> Vec<u8> {
        path_packet(key, 0, pn)
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

    /// A short-header packet numbered `pn` on multipath path `path`, protected by `key`
    /// with the path's nonce.
    fn path_packet(key: &dyn PacketKey, path: u32, pn: u64) -> Vec<u8> {
        let header = [0x40, pn as u8];
        let mut body = b"payload".to_vec();
        let tag = key
            .encrypt_in_place_for_path(path, pn, &header, &mut body)
            .unwrap();
        [&header[..], &body, tag.as_ref()].concat()
    }

    /// Key updates on paths above 0 (draft-ietf-quic-multipath §2.5): the peer's update
    /// may first show on path 1; each path's own packet numbers tell late packets of
    /// the old phase (§6.3) from a violation (§6.4); a path that saw nothing of the
    /// current phase tries the old keys, then the next; packets sent and acknowledged
    /// on a path count for §6.1 and §6.6.
    #[test]
    fn updates_on_paths_above_0_use_each_paths_packet_numbers() {
        let mut ku = client();
        let mut current = keys(1, Side::Client);
        let (old_server, new_server) = (keys(1, Side::Server), keys(2, Side::Server));
        let (mut m1, mut m2) = (PhaseMark::default(), PhaseMark::default());
        let (p1, p2) = (PathId(1), PathId(2));
        let mut p = path_packet(&*new_server.local.packet, 1, 5);
        let (_, moved) = ku
            .open_on_path(&mut current, (p1, &mut m1), true, &mut p, 2, 5, (7, 10))
            .unwrap();
        assert!(moved && ku.phase());
        // Path 0's nonce does not open a path 1 packet.
        let mut wrong = path_packet(&*new_server.local.packet, 1, 6);
        assert!(ku
            .open(&mut current, true, &mut wrong, 2, 6, (7, 10))
            .is_none());
        // Old phase below path 1's first new packet: the previous keys.
        let mut late = path_packet(&*old_server.local.packet, 1, 3);
        let got = ku.open_on_path(&mut current, (p1, &mut m1), false, &mut late, 2, 3, (7, 10));
        assert_eq!(got.map(|(_, moved)| moved), Some(false));
        // Path 2 saw nothing of the new phase: its old packet numbered 40 still opens.
        let mut late2 = path_packet(&*old_server.local.packet, 2, 40);
        let got = ku.open_on_path(
            &mut current,
            (p2, &mut m2),
            false,
            &mut late2,
            2,
            40,
            (7, 10),
        );
        assert_eq!(got.map(|(_, moved)| moved), Some(false));
        assert!(!ku.has_error());
        // §6.4 on path 1: numbered above 5 there yet only the old keys open it.
        let after = keys(3, Side::Client);
        ku.next = Some(PacketKeySet {
            local: after.local.packet,
            remote: after.remote.packet,
        });
        let mut bad = path_packet(&*old_server.local.packet, 1, 8);
        let got = ku.open_on_path(&mut current, (p1, &mut m1), false, &mut bad, 2, 8, (7, 10));
        assert!(got.is_none());
        assert_eq!(
            ku.take_error().map(|e| e.code),
            Some(TransportErrorCode::KEY_UPDATE_ERROR)
        );
        // §6.1 and §6.6: path 1's packets count, and only its acknowledgment of a
        // packet sent in this phase allows the next update.
        assert_eq!(ku.sent_in_phase(7), 0);
        ku.on_path_packet_sent(&mut m1, 20);
        ku.on_path_packet_sent(&mut m1, 21);
        assert_eq!(ku.sent_in_phase(7), 2);
        assert!(!ku.may_initiate(None));
        ku.on_path_acked(&m1, 19);
        assert!(!ku.may_initiate(None), "acknowledged before this phase");
        ku.on_path_acked(&m1, 20);
        assert!(ku.may_initiate(None));
        ku.switch(&mut current, u64::MAX, 7, 10);
        assert!(!ku.may_initiate(None), "a new phase waits again");
        ku.on_path_acked(&m1, 21);
        assert!(!ku.may_initiate(None), "sent in the previous phase");
    }
}
