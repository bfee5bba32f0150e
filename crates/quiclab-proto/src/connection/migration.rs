//! Connection migration as the peer's address changes (RFC 9000 §9.3): which address a
//! datagram's bytes count for, moving the active path on the highest-numbered
//! non-probing packet from a new address, validating it (§8.2) and the path left
//! (§9.3.3), returning to the last validated path when validation fails (§9.3.2),
//! and the congestion state of each (§9.4).
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use super::lifecycle::CloseReason;
use super::migration_state::{MigrationStats, OtherAddress, PreviousPath};
use super::path_validation::{validation_timeout, Validation, ValidationTimer};
use super::spaces::SpaceId;
use super::timers::Timer;
use super::Connection;
use crate::error::{TransportError, TransportErrorCode};
use crate::events::{Event, MigrationPhase, Owner};
use crate::recovery::{Pacer, RttEstimator};
use crate::time::Instant;
use crate::wire::{ConnectionId, Side};
use std::net::SocketAddr;
use std::time::Duration;

impl Connection {
    /// Whether the active path's peer address is validated (RFC 9000 §8).
    pub fn remote_validated(&self) -> bool {
        self.path.validated
    }

    /// What the connection did about paths: migrations, validations, responses.
    pub fn migration_stats(&self) -> MigrationStats {
        MigrationStats {
            other_addresses: self.migration.others_len(),
            ..self.migration.stats
        }
    }

    /// A datagram of `len` bytes arrived from `remote`: its bytes count toward that
    /// address's anti-amplification budget (RFC 9000 §8.1, §9.3.1). Before the
    /// handshake is confirmed every datagram counts for the active path, as it always
    /// did: addresses are stable during the handshake (§9).
    pub(super) fn note_datagram_source(&mut self, remote: SocketAddr, len: usize) {
        self.migration.incoming = Some(remote);
        if remote == self.path.remote || !self.handshake.confirmed {
            self.path.on_datagram_received(len);
        } else {
            self.migration.on_datagram_from_other(remote, len);
        }
    }

    /// A PATH_CHALLENGE: answered on the path it arrived on (RFC 9000 §8.2.2), from
    /// the local address it came to (§9.6.2).
    pub(super) fn on_path_challenge_frame(&mut self, now: Instant, data: [u8; 8]) {
        if self.arrived_on_other_local() {
            self.on_challenge_to_other_local(now, data);
            return;
        }
        match self.migration.incoming {
            Some(remote) if remote != self.path.remote => {
                self.migration.on_path_challenge_from_other(remote, data)
            }
            // Bounded, newest answered first.
            _ => self.path.on_path_challenge(data),
        }
    }

    /// A PATH_RESPONSE: from any path, it validates the path its challenge went on
    /// (RFC 9000 §8.2.3).
    pub(super) fn on_path_response_frame(&mut self, now: Instant, data: [u8; 8]) {
        if self
            .migration
            .validation
            .as_ref()
            .is_some_and(|v| v.matches(&data))
        {
            self.migration.validation = None;
            self.migration.previous = None;
            self.path.validated = true;
            self.count_validation(true);
            self.log_migration(now, MigrationPhase::MigrationComplete, self.path.remote);
            // The amplification limit no longer holds the PTO back.
            self.set_loss_detection_timer(now);
        }
        if let Some((remote, _)) = self
            .migration
            .old_path_check
            .as_ref()
            .filter(|(_, v)| v.matches(&data))
        {
            let remote = *remote;
            self.migration.old_path_check = None;
            self.count_validation(true);
            self.log_migration(now, MigrationPhase::ProbingSuccessful, remote);
        }
        self.on_preferred_path_response(now, &data);
        self.arm_path_validation_timer();
    }

    /// RFC 9000 §9.3: a server moves to the source of the highest-numbered non-probing
    /// packet (`pn` in `space`, the largest before it `largest_before`) once the
    /// handshake is confirmed.
    pub(super) fn on_non_probing_packet(
        &mut self,
        now: Instant,
        space: SpaceId,
        pn: u64,
        largest_before: Option<u64>,
        dcid: &ConnectionId,
    ) {
        if self.side != Side::Server || space != SpaceId::Data || !self.handshake.confirmed {
            return;
        }
        let Some(remote) = self.migration.incoming else {
            return;
        };
        if largest_before.is_some_and(|l| pn <= l) || self.is_closed() {
            return;
        }
        let new_cid = self
            .migration
            .peer_dcid
            .replace(*dcid)
            .is_some_and(|d| d != *dcid);
        if self.arrived_on_other_local() {
            // RFC 9000 §9.6.2: to our preferred address.
            let local = self.migration.incoming_local;
            if remote == self.path.remote {
                self.on_non_probing_to_other_local(now, new_cid);
                return;
            }
            // The client's address changed too: its validation (§9.3) goes from there.
            self.migration.local = local;
        }
        if remote == self.path.remote {
            return;
        }
        if new_cid {
            // RFC 9000 §9.5: the peer moved to a new connection ID, so do we (on a
            // passive rebinding the server keeps its ID, as §9.5 allows). With none
            // unused, the current one stays.
            self.cids.switch_remote();
        }
        self.move_to(now, remote);
    }

    /// The active path moves to `remote`: back to the last validated path with its
    /// congestion state (§9.3.2, §9.3: no new validation), or to a new address that
    /// is validated and limited to 3x what it sent until then (§9.3, §9.3.1).
    pub(super) fn move_to(&mut self, now: Instant, remote: SocketAddr) {
        self.migration.stats.migrations = self.migration.stats.migrations.saturating_add(1);
        if self
            .migration
            .previous
            .as_ref()
            .is_some_and(|p| p.remote == remote)
        {
            self.return_to_previous(now);
            return;
        }
        let left = self.path.remote;
        let left_validated = self.path.validated;
        let timeout = self.path_validation_timeout();
        // RFC 9000 §9.4: a new controller and RTT estimator unless only the port changed.
        let saved = (left.ip() != remote.ip()).then(|| self.fresh_congestion(true));
        let other = self
            .migration
            .take_other(remote)
            .unwrap_or_else(|| OtherAddress::new_for(remote));
        let left_state = self.set_active(remote, false, other);
        if left_validated {
            self.migration.previous = Some(PreviousPath {
                remote: left,
                local: self.migration.local,
                congestion: saved,
            });
            // RFC 9000 §9.3.3: challenge the previously active path too.
            let token = self.rng.next_u64().to_be_bytes();
            let check = Validation::new(token, now, timeout);
            self.migration.old_path_check = Some((left, check));
            self.log_migration(now, MigrationPhase::ProbingStarted, left);
        } else {
            self.migration.put_other(left_state);
        }
        let token = self.rng.next_u64().to_be_bytes();
        self.migration.validation = Some(Validation::new(token, now, timeout));
        self.log_migration(now, MigrationPhase::MigrationStarted, remote);
        self.log_tuple(now);
        self.arm_path_validation_timer();
        self.set_loss_detection_timer(now);
    }

    /// Back to the last validated path: its congestion state restored, no validation
    /// needed (RFC 9000 §9.3: it was seen recently); the unvalidated path left is
    /// abandoned (§9.3.2) and kept as an other address with its counts.
    fn return_to_previous(&mut self, now: Instant) {
        let Some(previous) = self.migration.previous.take() else {
            return;
        };
        if let Some((rtt, cc)) = previous.congestion {
            self.path.recovery.replace_congestion(rtt, cc);
            self.path.pacer = self.fresh_pacer();
        }
        self.migration.validation = None;
        self.migration.local = previous.local;
        let other = self
            .migration
            .take_other(previous.remote)
            .unwrap_or_else(|| OtherAddress::new_for(previous.remote));
        let left = self.set_active(previous.remote, true, other);
        self.migration.put_other(left);
        self.log_tuple(now);
        self.arm_path_validation_timer();
        self.set_loss_detection_timer(now);
    }

    /// Makes `remote` the active path (`validated`, or limited by `other`'s counts);
    /// returns the state of the path left, with its unanswered challenges.
    pub(super) fn set_active(
        &mut self,
        remote: SocketAddr,
        validated: bool,
        other: OtherAddress,
    ) -> OtherAddress {
        let left = OtherAddress {
            remote: self.path.remote,
            received: self.path.amplification_received,
            sent: self.path.amplification_sent,
            responses: std::mem::take(&mut self.path.responses),
        };
        self.path.remote = remote;
        self.path.validated = validated;
        self.path.amplification_received = other.received;
        self.path.amplification_sent = other.sent;
        for data in other.responses {
            self.path.on_path_challenge(data);
        }
        left
    }

    /// Installs a fresh controller and RTT estimator (RFC 9000 §9.4; RFC 9002 A.3,
    /// B.3), a fresh pacer and PMTU search; returns the state replaced.
    pub(super) fn fresh_congestion(
        &mut self,
        restart_pmtud: bool,
    ) -> (RttEstimator, Box<dyn crate::cc::CongestionController>) {
        let seed = self.rng.next_u64();
        let mss = u64::from(self.config.max_udp_payload_size);
        let cc = self
            .config
            .path_congestion_control()
            .build_seeded(mss, seed);
        let rtt = RttEstimator::new(self.config.initial_rtt());
        let saved = self.path.recovery.replace_congestion(rtt, cc);
        self.path.pacer = self.fresh_pacer();
        if restart_pmtud {
            // RFC 9000 §14.3: the new path's MTU is unknown.
            self.path.restart_pmtud(&self.config);
        }
        saved
    }

    fn fresh_pacer(&self) -> Pacer {
        super::path::new_pacer(&self.config)
    }

    /// RFC 9000 §8.2.4: three times the larger of the current PTO and the new path's
    /// PTO from kInitialRtt.
    pub(super) fn path_validation_timeout(&self) -> Duration {
        let max_ack_delay = self.peer_max_ack_delay();
        let current = self
            .path
            .recovery
            .rtt()
            .pto_base()
            .saturating_add(max_ack_delay);
        let initial = RttEstimator::new(self.config.initial_rtt())
            .pto_base()
            .saturating_add(max_ack_delay);
        validation_timeout(current, initial)
    }

    /// The path validation timer: challenges resent, or validations abandoned.
    pub(super) fn on_path_validation_timer(&mut self, now: Instant) {
        let active = self.migration.validation.as_mut().map(|v| v.on_timer(now));
        if active == Some(ValidationTimer::Failed) {
            self.abandon_validation(now);
        }
        let old = self
            .migration
            .old_path_check
            .as_mut()
            .map(|(remote, v)| (*remote, v.on_timer(now)));
        if let Some((remote, ValidationTimer::Failed)) = old {
            self.migration.old_path_check = None;
            self.count_validation(false);
            self.log_migration(now, MigrationPhase::ProbingAbandoned, remote);
        }
        self.on_preferred_validation_timer(now);
        self.arm_path_validation_timer();
    }

    /// RFC 9000 §9.3.2: the new path failed validation: back to the last validated
    /// one, or, with none, the connection ends silently.
    fn abandon_validation(&mut self, now: Instant) {
        self.migration.validation = None;
        self.count_validation(false);
        let failed = self.path.remote;
        self.log_migration(now, MigrationPhase::MigrationAbandoned, failed);
        if self.migration.previous.is_some() {
            self.migration.stats.reverts = self.migration.stats.reverts.saturating_add(1);
            self.return_to_previous(now);
        } else {
            let error =
                TransportError::new(TransportErrorCode::NO_VIABLE_PATH, "path validation failed");
            self.end_silently(
                now,
                CloseReason::Transport {
                    owner: Owner::Local,
                    error,
                },
            );
        }
    }

    pub(super) fn arm_path_validation_timer(&mut self) {
        let at = self.migration.next_deadline();
        self.timers.set_or_stop(Timer::PathValidation, at);
    }

    pub(super) fn count_validation(&mut self, succeeded: bool) {
        let s = &mut self.migration.stats;
        if succeeded {
            s.validations_succeeded = s.validations_succeeded.saturating_add(1);
        } else {
            s.validations_failed = s.validations_failed.saturating_add(1);
        }
    }

    pub(super) fn log_migration(&mut self, now: Instant, new: MigrationPhase, remote: SocketAddr) {
        if self.logging() {
            self.emit(now, Event::MigrationStateUpdated { new, remote });
        }
    }

    /// `quic:tuple_assigned` for the active path, under a new tuple ID.
    pub(super) fn log_tuple(&mut self, now: Instant) {
        self.migration.tuple_seq = self.migration.tuple_seq.saturating_add(1);
        if self.logging() {
            let event = Event::TupleAssigned {
                tuple_id: self.migration.tuple_seq,
                remote: self.path.remote,
                local: self.migration.local,
            };
            self.emit(now, event);
        }
    }
}
