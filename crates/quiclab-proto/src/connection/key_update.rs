//! 1-RTT key updates (RFC 9001 §6) from both sides, and the AEAD limits (§6.6).
//!
//! Responder: a packet with the other key phase is tried with the next keys; if it
//! authenticates, both directions move to them. Initiator: every
//! `key_update.every_packets` packets sent, or before the confidentiality limit, once
//! the handshake is confirmed and a packet of the current phase was acknowledged
//! (§6.1); on a multipath connection also 3 × the largest PTO among the paths after
//! that acknowledgment (draft-ietf-quic-multipath "Key Phase Update Process",
//! `multipath_pto.rs`). The initiation check runs before each datagram the endpoint
//! asks for ([`Connection::prepare_transmit`]) and after each received datagram, so it
//! needs no hook in the send path.
//!
//! Errors: a second update by the peer before we sent anything in the current phase
//! (§6.2), or a packet that only the previous keys open although newer keys protected
//! a lower packet number (§6.4), is KEY_UPDATE_ERROR; more failed authentications than
//! the integrity limit is AEAD_LIMIT_REACHED (§6.6), as is running into the
//! confidentiality limit when no update is possible.

use super::key_update_state::{aead_limit, KeyUpdate};
use super::spaces::SpaceId;
use super::Connection;
use crate::crypto::Keys;
use crate::events::{Event, KeyType, Owner};
use crate::time::Instant;
use std::ops::Range;

impl Connection {
    /// Decrypts a 1-RTT packet whose key phase bit is `phase` (RFC 9001 §6.3).
    pub(super) fn decrypt_one_rtt(
        &mut self,
        phase: bool,
        packet: &mut [u8],
        header_len: usize,
        pn: u64,
    ) -> Option<Range<usize>> {
        let result = self.try_decrypt_one_rtt(phase, packet, header_len, pn);
        if result.is_none() && !self.key_update.has_error() {
            self.on_authentication_failure();
        }
        result
    }

    fn try_decrypt_one_rtt(
        &mut self,
        phase: bool,
        packet: &mut [u8],
        header_len: usize,
        pn: u64,
    ) -> Option<Range<usize>> {
        self.open_one_rtt(|ku, keys, counts| ku.open(keys, phase, packet, header_len, pn, counts))
    }

    /// Runs `open` (`KeyUpdate::open` or `open_on_path`) on the 1-RTT keys with our
    /// counts (1-RTT packets sent, next packet number), counting a key update it makes;
    /// the payload's range, or `None` (no 1-RTT keys, or the packet does not open).
    pub(super) fn open_one_rtt(
        &mut self,
        open: impl FnOnce(&mut KeyUpdate, &mut Keys, (u64, u64)) -> Option<(Range<usize>, bool)>,
    ) -> Option<Range<usize>> {
        let data = &mut self.spaces[SpaceId::Data as usize];
        let counts = (
            self.stats.packets_sent[SpaceId::Data as usize],
            data.next_pn,
        );
        let keys = data.keys.as_mut()?;
        let (range, switched) = open(&mut self.key_update, keys, counts)?;
        if switched {
            self.stats.key_updates += 1;
        }
        Some(range)
    }

    /// Moves both directions to the next 1-RTT keys; `peer_first_pn` is the first
    /// packet the peer protected with them (`u64::MAX` when we initiate).
    fn switch_keys(&mut self, peer_first_pn: u64) {
        let data = &mut self.spaces[SpaceId::Data as usize];
        let sent = self.stats.packets_sent[SpaceId::Data as usize];
        if let Some(keys) = data.keys.as_mut() {
            (self.key_update).switch(keys, peer_first_pn, sent, data.next_pn);
        }
    }

    /// §6.6: count a 1-RTT packet that failed authentication.
    pub(super) fn on_authentication_failure(&mut self) {
        let Some(keys) = self.spaces[SpaceId::Data as usize].keys.as_ref() else {
            return;
        };
        let limit = (self.config.key_update.integrity_limit)
            .unwrap_or_else(|| keys.remote.packet.integrity_limit());
        self.key_update.on_authentication_failure(limit);
    }

    /// Before sending: initiate a key update when the policy or the confidentiality
    /// limit asks for one and §6.1 allows it; close with AEAD_LIMIT_REACHED when the
    /// limit is one packet away (room for the CONNECTION_CLOSE) and no update is
    /// possible. Call before every `poll_transmit` (the endpoint does).
    pub fn prepare_transmit(&mut self, now: Instant) {
        if self.is_closed() {
            return;
        }
        if let Some(e) = self.key_update.take_error() {
            self.fail(now, e);
            return;
        }
        self.log_key_update(now);
        let data = &self.spaces[SpaceId::Data as usize];
        let Some(keys) = data.keys.as_ref() else {
            return;
        };
        let limit = (self.config.key_update.confidentiality_limit)
            .unwrap_or_else(|| keys.local.packet.confidentiality_limit());
        let sent = (self.key_update).sent_in_phase(self.stats.packets_sent[SpaceId::Data as usize]);
        // Update at 3/4 of the limit, leaving time for the ACK §6.1 waits for.
        let due_by_limit = sent >= limit - limit / 4;
        let due_by_policy = self
            .config
            .key_update
            .every_packets
            .is_some_and(|n| sent >= n);
        if !(due_by_limit || due_by_policy) {
            return;
        }
        let largest_acked = self.path.recovery.sent(SpaceId::Data).largest_acked();
        // draft-ietf-quic-multipath "Key Phase Update Process": 3 × the largest PTO
        // among the paths after the confirming acknowledgment (`multipath_pto.rs`).
        let may = if self.multipath.is_negotiated() {
            self.key_update.may_initiate_multipath(largest_acked, now)
        } else {
            self.key_update.may_initiate(largest_acked)
        };
        let allowed = may && self.handshake.confirmed;
        if allowed {
            self.stats.key_updates_initiated += 1;
            self.switch_keys(u64::MAX);
            self.log_key_update(now);
        } else if sent + 1 >= limit {
            self.fail(
                now,
                aead_limit("confidentiality limit reached, no key update possible"),
            );
        }
    }

    /// qlog `key_updated` for both directions after a key phase change.
    pub(super) fn log_key_update(&mut self, now: Instant) {
        if !self.key_update.take_log_pending() || !self.logging() {
            return;
        }
        for owner in [Owner::Local, Owner::Remote] {
            let key = KeyType::OneRtt;
            self.emit(now, Event::KeyUpdated { key, owner });
        }
    }

    /// The current 1-RTT key phase (RFC 9001 §6): flips with every key update.
    pub fn key_phase(&self) -> bool {
        self.key_update.phase()
    }
}

#[cfg(test)]
mod tests {
    use crate::connection::CloseReason;
    use crate::testing::{LinkConfig, Pair};
    use crate::wire::Dir;
    use crate::{Instant, TransportConfig, TransportErrorCode};
    use std::time::Duration;

    /// §6.2: a peer that updates twice before we sent anything in the first update's
    /// phase (so before it could see our ACK in the new keys) is a KEY_UPDATE_ERROR.
    #[test]
    fn consecutive_updates_without_confirmation_are_an_error() {
        let l = LinkConfig::delay(Duration::from_millis(10));
        let config = TransportConfig::default();
        let mut pair = Pair::new(config.clone(), config, [l.clone(), l], 9);
        pair.run_until(Instant::from_millis(1_000), |p| {
            p.client_conn().is_handshake_confirmed()
        })
        .unwrap();
        let id = pair.client_conn().open_stream(Dir::Bi).unwrap();
        for round in 0..2 {
            // Bypasses the §6.1 ACK wait the initiator normally respects.
            pair.client_conn().switch_keys(u64::MAX);
            pair.client_conn().write(id, &[round; 100]).unwrap();
            pair.flush();
        }
        pair.run_until(Instant::from_millis(2_000), |p| {
            p.server_conn().is_some_and(|s| s.is_closed())
        })
        .unwrap();
        let server = pair.server_conn().unwrap();
        let Some(CloseReason::Transport { error, .. }) = server.close_reason().cloned() else {
            panic!("{:?}", server.close_reason())
        };
        assert_eq!(error.code, TransportErrorCode::KEY_UPDATE_ERROR);
        assert_eq!(server.stats().key_updates, 1);
    }
}
