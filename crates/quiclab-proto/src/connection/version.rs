//! Versions: the client's reaction to Version Negotiation (RFC 9000 §6.2), a new
//! connection attempt in the version both sides speak, and version downgrade prevention
//! with the version_information transport parameter (RFC 9368 §4). A client following
//! a server's compatible upgrade (RFC 9368 §2.3) is in `compatible.rs`.
//!
//! QUIC v2 itself (RFC 9369) needs no code here: the version picks the Initial salt and
//! key labels (`crypto::initial`, `crypto::tls`) and the long-header type bits
//! (`wire::header`).

use super::lifecycle::CloseReason;
use super::outbox::EndpointEvent;
use super::spaces::{PacketSpace, SpaceId};
use super::Connection;
use crate::error::{TransportError, TransportErrorCode};
use crate::events::{Event, Owner};
use crate::time::Instant;
use crate::wire::header::parse_version_negotiation;
use crate::wire::{ConnectionId, Side, TransportParameters, VersionInformation, VERSION_1};

fn version_error(reason: impl Into<String>) -> TransportError {
    TransportError::new(TransportErrorCode::VERSION_NEGOTIATION_ERROR, reason)
}

impl Connection {
    /// A Version Negotiation packet (RFC 9000 §6.2, §17.2.1) whose Source Connection ID
    /// is `scid`. A client acts on it only before any other server packet, only once,
    /// only if it echoes the Destination Connection ID we sent, and only if it does not
    /// list the version we used (then it is forged or stale and ignored).
    pub(super) fn on_version_negotiation(
        &mut self,
        now: Instant,
        scid: &ConnectionId,
        packet: &[u8],
    ) {
        if self.side != Side::Client
            || self.handshake.received_server_packet
            || self.versions.offered.is_some()
            || self.retry_received()
        {
            return;
        }
        if *scid != self.params.original_dcid {
            return;
        }
        let Ok(offered) = parse_version_negotiation(packet) else {
            return;
        };
        if offered.contains(&self.versions.current) {
            return;
        }
        let ours = self.config.versions.supported_wire();
        let chosen = ours.iter().copied().find(|v| offered.contains(v));
        self.log_version_information(now, &offered, &ours, chosen);
        let Some(version) = chosen else {
            let error = TransportError::new(
                TransportErrorCode::NO_ERROR,
                format!("server offers only versions {offered:x?}"),
            );
            self.start_draining(
                now,
                CloseReason::Transport {
                    owner: Owner::Remote,
                    error,
                },
            );
            self.lifecycle.on_drained();
            self.outbox.push_endpoint_event(EndpointEvent::Drained);
            return;
        };
        self.versions.offered = Some(offered);
        if let Err(e) = self.restart_in_version(now, version) {
            self.fail(now, e);
        }
    }

    fn log_version_information(
        &mut self,
        now: Instant,
        server: &[u32],
        client: &[u32],
        chosen: Option<u32>,
    ) {
        if self.logging() {
            self.emit(
                now,
                Event::VersionInformation {
                    server_versions: server.to_vec(),
                    client_versions: client.to_vec(),
                    chosen,
                },
            );
        }
    }

    /// Starts the handshake over in `version` (RFC 9000 §6.2): a new ClientHello with
    /// version_information naming the new version, Initial keys for it, and the
    /// Initial space's in-flight packets forgotten (the server dropped them). The
    /// connection IDs stay; packet numbers continue. The new attempt offers no other
    /// version for a compatible upgrade (RFC 9368 §2.3 lets a client disable it by
    /// listing only its Chosen Version), so its TLS session keeps no secrets.
    fn restart_in_version(&mut self, now: Instant, version: u32) -> Result<(), TransportError> {
        self.versions.current = version;
        self.versions.chosen = version;
        self.params.local.version_information = Some(VersionInformation {
            chosen: version,
            available: vec![version],
        });
        let tp = self.params.encode_local();
        let rng = self.rng.fork("tls after version negotiation");
        self.tls = self
            .tls
            .restart_client(tp, version, rng, now)
            .ok_or_else(|| TransportError::internal("restarting a server TLS session"))??;
        let initial = &mut self.spaces[SpaceId::Initial as usize];
        let mut fresh = PacketSpace::new();
        fresh.next_pn = initial.next_pn;
        *initial = fresh;
        self.path.recovery.forget_space(SpaceId::Initial);
        self.ecn.on_space_discarded(SpaceId::Initial);
        self.install_initial_keys(self.params.original_dcid);
        self.handshake.tls_write_space = SpaceId::Initial;
        self.set_loss_detection_timer(now);
        if self.logging() {
            let ev = Event::ConnectionStarted {
                side: self.side,
                version,
                local_cid: self.cids.local_cid(),
                remote_cid: self.cids.remote_cid(),
            };
            self.emit(now, ev);
        }
        self.drive_tls(now)
    }

    /// RFC 9368 §4: the peer's version_information must name the version in use (a
    /// client's also one it offered), and a client that acted on Version Negotiation
    /// checks that the server's list would have led it to the same version (else an
    /// attacker forged the VN packet).
    pub(super) fn check_peer_version_information(
        &mut self,
        now: Instant,
        p: &TransportParameters,
    ) -> Result<(), TransportError> {
        // RFC 9368 §4: the client's Chosen Version is the version of its first
        // Initial, which a server that upgraded the connection no longer uses; the
        // server's is the negotiated version, which a client learned from the long
        // header of an upgrade (§2.3) and must see confirmed here.
        let expected = self.original_version().unwrap_or(self.versions.current);
        if let Some(vi) = &p.version_information {
            let offered = self.params.local.version_information.as_ref();
            if self.side == Side::Client
                && offered.is_some_and(|o| !o.available.contains(&vi.chosen))
            {
                return Err(version_error(format!(
                    "server's chosen version {:#x} was not offered",
                    vi.chosen
                )));
            }
            if vi.chosen != expected {
                return Err(version_error(format!(
                    "peer's chosen version {:#x} is not the version in use {:#x}",
                    vi.chosen, expected
                )));
            }
            if self.side == Side::Client {
                let ours = self.config.versions.supported_wire();
                self.log_version_information(
                    now,
                    &vi.available,
                    &ours,
                    Some(self.versions.current),
                );
            }
        }
        if self.side == Side::Client {
            self.check_downgrade(p.version_information.as_ref())?;
        }
        Ok(())
    }

    /// Client, RFC 9368 §4: after an upgrade the server must have confirmed the new
    /// version (it sent version_information, checked above); after Version
    /// Negotiation, the server's Available Versions plus the negotiated version must
    /// lead to the version in use. Without Version Negotiation or an upgrade, a server
    /// without version_information does not implement RFC 9368 and there is nothing to
    /// check (TLS authenticates the parameters, so no attacker removed it).
    fn check_downgrade(&self, vi: Option<&VersionInformation>) -> Result<(), TransportError> {
        let current = self.versions.current;
        if self.versions.offered.is_none() {
            if current != self.versions.chosen && vi.is_none() {
                return Err(version_error(
                    "no version_information from a server that changed the version",
                ));
            }
            return Ok(());
        }
        // RFC 9368 §8: a QUIC v1 server without version_information counts as one
        // choosing v1 with Available Versions [v1].
        let v1_only = [VERSION_1];
        let available: &[u32] = match vi {
            Some(vi) => &vi.available,
            None if current == VERSION_1 => &v1_only,
            None => {
                return Err(version_error(
                    "no version_information after Version Negotiation",
                ))
            }
        };
        let ours = self.config.versions.supported_wire();
        let would_choose = ours
            .iter()
            .copied()
            .find(|v| available.contains(v) || *v == current);
        // An empty list is a downgrade by definition (§4).
        if available.is_empty() || would_choose != Some(current) {
            return Err(version_error(
                "the server's versions would have led to another version (downgrade)",
            ));
        }
        Ok(())
    }
}
