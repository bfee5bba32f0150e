//! The server's preferred address (RFC 9000 §9.6). Server: announce it with a
//! connection ID of sequence number 1 (§18.2, §5.1.1); answer a challenge to it from
//! there, probe the client from there, and send non-probing packets from there once
//! the client sent one there and the path is validated (§9.6.2). Client: once the
//! handshake is confirmed, validate the address with that connection ID while data
//! stays on the original address, move on success, stay on failure (§9.6.1).
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use super::cids::CidState;
use super::migration_state::{LocalPath, OtherAddress, PreferredProbe};
use super::path_validation::{Validation, ValidationTimer};
use super::Connection;
use crate::config::PreferredAddressConfig;
use crate::error::TransportError;
use crate::events::MigrationPhase;
use crate::rng::DetRng;
use crate::time::Instant;
use crate::wire::{NewConnectionIdFrame, PreferredAddress, Side, TransportParameters};
use std::net::SocketAddr;

/// The preferred_address transport parameter for `config`, with a connection ID of
/// sequence number 1 issued from `cids` (RFC 9000 §18.2, §5.1.1).
pub(super) fn announce(
    config: &PreferredAddressConfig,
    cids: &mut CidState,
    rng: &mut DetRng,
) -> PreferredAddress {
    let (_, connection_id, reset_token) = cids.issue_preferred(rng);
    let ipv4 = config.ipv4().and_then(|a| match a {
        SocketAddr::V4(v4) => Some((v4.ip().octets(), v4.port())),
        SocketAddr::V6(_) => None,
    });
    let ipv6 = config.ipv6().and_then(|a| match a {
        SocketAddr::V6(v6) => Some((v6.ip().octets(), v6.port())),
        SocketAddr::V4(_) => None,
    });
    PreferredAddress {
        ipv4,
        ipv6,
        connection_id,
        reset_token,
    }
}

/// The address of `pa` in the family of `current` (RFC 9000 §9.6: the client picks
/// the one suited to its network attachment; its socket speaks one family).
fn same_family(pa: &PreferredAddress, current: SocketAddr) -> Option<SocketAddr> {
    match current {
        SocketAddr::V4(_) => pa.ipv4.map(SocketAddr::from),
        SocketAddr::V6(_) => pa.ipv6.map(SocketAddr::from),
    }
}

impl Connection {
    /// The server's preferred address, as the client received it.
    pub fn peer_preferred_address(&self) -> Option<&PreferredAddress> {
        self.params.peer()?.preferred_address.as_ref()
    }

    /// Client: whether the connection moved to the server's preferred address.
    pub fn on_preferred_address(&self) -> bool {
        self.migration.on_preferred
    }

    /// Client, the server's transport parameters: a preferred address needs a
    /// non-empty server connection ID (RFC 9000 §18.2: TRANSPORT_PARAMETER_ERROR), and
    /// its connection ID becomes the server's ID of sequence number 1 (§5.1.1).
    pub(super) fn accept_preferred_address(
        &mut self,
        p: &TransportParameters,
    ) -> Result<(), TransportError> {
        let Some(pa) = &p.preferred_address else {
            return Ok(());
        };
        if self.cids.remote_cid().is_empty() {
            return Err(TransportError::transport_parameter(
                "preferred_address from a server with a zero-length connection ID",
            ));
        }
        let frame = NewConnectionIdFrame {
            sequence: 1,
            retire_prior_to: 0,
            id: pa.connection_id,
            reset_token: pa.reset_token,
        };
        let limit = self.params.local.active_connection_id_limit;
        self.cids
            .on_new_cid(&frame, limit)
            .map_err(|_| TransportError::transport_parameter("preferred_address connection ID"))
    }

    /// Client, the handshake confirmed: start validating the server's preferred
    /// address, unless told to ignore it or it is the address in use (RFC 9000 §9.6).
    pub(super) fn start_preferred_probe(&mut self, now: Instant) {
        if self.side != Side::Client || self.config.ignore_preferred_address {
            return;
        }
        let current = self.path.remote;
        let Some(remote) = (self.params.peer())
            .and_then(|p| p.preferred_address.as_ref())
            .and_then(|pa| same_family(pa, current))
            .filter(|r| *r != current)
        else {
            return;
        };
        let timeout = self.path_validation_timeout();
        let token = self.rng.next_u64().to_be_bytes();
        self.migration.preferred = Some(PreferredProbe {
            remote,
            cid_seq: 1,
            validation: Validation::new(token, now, timeout),
        });
        self.log_migration(now, MigrationPhase::ProbingStarted, remote);
        self.arm_path_validation_timer();
    }

    /// A PATH_RESPONSE: the preferred address's (client) or the path from our other
    /// local address's (server).
    pub(super) fn on_preferred_path_response(&mut self, now: Instant, data: &[u8; 8]) {
        let preferred =
            (self.migration.preferred.as_ref()).is_some_and(|p| p.validation.matches(data));
        if preferred {
            self.move_to_preferred(now);
        }
        let local = (self.migration.local_path.as_ref())
            .and_then(|l| l.validation.as_ref())
            .is_some_and(|v| v.matches(data));
        if local {
            self.count_validation(true);
            let move_wanted = match self.migration.local_path.as_mut() {
                Some(l) => {
                    l.validation = None;
                    l.validated = true;
                    l.move_wanted
                }
                None => false,
            };
            let remote = self.path.remote;
            self.log_migration(now, MigrationPhase::ProbingSuccessful, remote);
            if move_wanted {
                self.switch_local(now);
            }
        }
    }

    /// Client, RFC 9000 §9.6.1: the preferred address answered: every packet goes
    /// there from now on, with its connection ID (the old one retired, §9.5), and a
    /// fresh congestion state unless only the port changed (§9.4).
    fn move_to_preferred(&mut self, now: Instant) {
        let Some(probe) = self.migration.preferred.take() else {
            return;
        };
        if !self.cids.switch_remote_to(probe.cid_seq) {
            self.cids.switch_remote();
        }
        let left = self.path.remote;
        if left.ip() != probe.remote.ip() {
            self.fresh_congestion(true);
        }
        let other = (self.migration.take_other(probe.remote))
            .unwrap_or_else(|| OtherAddress::new_for(probe.remote));
        let left_state = self.set_active(probe.remote, true, other);
        self.migration.put_other(left_state);
        self.migration.on_preferred = true;
        let s = &mut self.migration.stats;
        s.migrations = s.migrations.saturating_add(1);
        self.count_validation(true);
        self.log_migration(now, MigrationPhase::ProbingSuccessful, probe.remote);
        self.log_migration(now, MigrationPhase::MigrationComplete, probe.remote);
        self.log_tuple(now);
        self.set_loss_detection_timer(now);
    }

    /// The preferred address's and the local path's validation timers: a failed
    /// preferred address leaves the client where it is (RFC 9000 §9.6.1: "MUST
    /// continue sending all future packets to the server's original IP address").
    pub(super) fn on_preferred_validation_timer(&mut self, now: Instant) {
        let preferred =
            (self.migration.preferred.as_mut()).map(|p| (p.remote, p.validation.on_timer(now)));
        if let Some((remote, ValidationTimer::Failed)) = preferred {
            self.migration.preferred = None;
            self.count_validation(false);
            self.log_migration(now, MigrationPhase::ProbingAbandoned, remote);
        }
        let local = (self.migration.local_path.as_mut())
            .and_then(|l| Some((l.remote, l.validation.as_mut()?.on_timer(now))));
        if let Some((remote, ValidationTimer::Failed)) = local {
            self.migration.local_path = None;
            self.count_validation(false);
            self.log_migration(now, MigrationPhase::ProbingAbandoned, remote);
        }
    }

    /// Server: whether the datagram being processed came to a local address other
    /// than the active path's, a preferred one (the driver says `Some`): RFC 9000
    /// §9.6.2. Datagrams to the default address after a move are not (they may be
    /// delayed ones, which §9.6.2 lets the server process), so the server never moves
    /// back.
    pub(super) fn arrived_on_other_local(&self) -> bool {
        let incoming = self.migration.incoming_local;
        self.side == Side::Server
            && self.handshake.confirmed
            && incoming.is_some()
            && incoming != self.migration.local
    }

    /// The local path the datagram being processed belongs to, created (replacing any
    /// other: one at a time, so memory stays bounded) and challenged from there (RFC
    /// 9000 §9.6.2: the server MUST probe from its preferred address).
    fn local_path_for_incoming(&mut self, now: Instant) -> Option<&mut LocalPath> {
        let remote = self.migration.incoming?;
        let local = self.migration.incoming_local;
        let known = (self.migration.local_path.as_ref())
            .is_some_and(|l| l.local == local && l.remote == remote);
        if !known {
            let timeout = self.path_validation_timeout();
            let token = self.rng.next_u64().to_be_bytes();
            let mut path = LocalPath::new(local, remote);
            path.validation = Some(Validation::new(token, now, timeout));
            self.migration.local_path = Some(path);
            self.log_migration(now, MigrationPhase::ProbingStarted, remote);
            self.arm_path_validation_timer();
        }
        self.migration.local_path.as_mut()
    }

    /// Server: a PATH_CHALLENGE to another local address: answered from there (RFC
    /// 9000 §9.6.2, §8.2.2).
    pub(super) fn on_challenge_to_other_local(&mut self, now: Instant, data: [u8; 8]) {
        let dropped = self
            .local_path_for_incoming(now)
            .is_some_and(|l| l.owe_response(data));
        if dropped {
            let s = &mut self.migration.stats;
            s.responses_dropped = s.responses_dropped.saturating_add(1);
        }
    }

    /// Server: a non-probing packet with a new largest packet number came to another
    /// local address from the active path's peer: move there once that path is
    /// validated (RFC 9000 §9.6.2).
    pub(super) fn on_non_probing_to_other_local(&mut self, now: Instant, new_cid: bool) {
        let validated = match self.local_path_for_incoming(now) {
            Some(l) => {
                l.move_wanted = true;
                l.switch_cid |= new_cid;
                l.validated
            }
            None => false,
        };
        if validated {
            self.switch_local(now);
        }
    }

    /// Server: non-probing packets leave from the local path's address from now on
    /// (RFC 9000 §9.6.2), to a new peer ID when the client changed its (§9.5), with a
    /// fresh congestion state (§9.4).
    fn switch_local(&mut self, now: Instant) {
        let Some(path) = self.migration.local_path.take() else {
            return;
        };
        if path.remote != self.path.remote {
            return;
        }
        if path.switch_cid {
            self.cids.switch_remote();
        }
        // RFC 9000 §9.4: the path to our other address is a new path whose capacity
        // and RTT are unknown (the client resets its state too, seeing our IP change).
        self.fresh_congestion(true);
        self.migration.local = path.local;
        for data in path.responses {
            self.path.on_path_challenge(data);
        }
        let s = &mut self.migration.stats;
        s.migrations = s.migrations.saturating_add(1);
        self.log_migration(now, MigrationPhase::MigrationComplete, path.remote);
        self.log_tuple(now);
    }
}
