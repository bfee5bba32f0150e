//! Versions: the client's reaction to Version Negotiation (RFC 9000 §6.2), a new
//! connection attempt in the version both sides speak, and version downgrade prevention
//! with the version_information transport parameter (RFC 9368 §4).
//!
//! QUIC v2 itself (RFC 9369) needs no code here: the version picks the Initial salt and
//! key labels (`crypto::initial`, `crypto::tls`) and the long-header type bits
//! (`wire::header`).

use super::spaces::{PacketSpace, SpaceId};
use super::{CloseReason, Connection, EndpointEvent, State};
use crate::config::TransportConfig;
use crate::error::{TransportError, TransportErrorCode};
use crate::events::{Event, Owner};
use crate::time::Instant;
use crate::wire::header::parse_version_negotiation;
use crate::wire::{ConnectionId, Side, TransportParameters, VersionInformation};

/// The version in use, and what a client learned from Version Negotiation.
#[derive(Clone, Debug)]
pub(super) struct VersionState {
    /// The QUIC version of our long headers (RFC 9000 §15, RFC 9369).
    pub current: u32,
    /// The versions a Version Negotiation packet offered, once the client acted on
    /// one (it then ignores any later one, RFC 9368 §4).
    offered: Option<Vec<u32>>,
}

/// Our version_information (RFC 9368 §3) for a connection in `version`: sent only when
/// the version config is not the default v1-only one.
pub(super) fn local_information(
    config: &TransportConfig,
    version: u32,
) -> Option<VersionInformation> {
    config.versions.announce().then(|| VersionInformation {
        chosen: version,
        available: config.versions.supported_wire(),
    })
}

/// A client's version_information: its Available Versions name only the version it
/// chose (RFC 9368 §2.3: the versions it would accept being upgraded to), because
/// rustls fixes a TLS session's QUIC version when it is created, so this client cannot
/// follow a server's compatible upgrade; it still reaches its other versions through
/// Version Negotiation.
pub(super) fn client_information(
    config: &TransportConfig,
    version: u32,
) -> Option<VersionInformation> {
    config.versions.announce().then(|| VersionInformation {
        chosen: version,
        available: vec![version],
    })
}

impl VersionState {
    /// A connection starting in `version`, no Version Negotiation seen.
    pub fn new(version: u32) -> Self {
        VersionState {
            current: version,
            offered: None,
        }
    }
}

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
        if *scid != self.original_dcid {
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
            self.state = State::Drained;
            self.endpoint_events.push_back(EndpointEvent::Drained);
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
    /// connection IDs stay; packet numbers continue.
    fn restart_in_version(&mut self, now: Instant, version: u32) -> Result<(), TransportError> {
        self.versions.current = version;
        self.local_params.version_information = Some(VersionInformation {
            chosen: version,
            available: vec![version],
        });
        let mut tp = Vec::new();
        self.local_params.encode(&mut tp);
        let rng = self.rng.fork("tls after version negotiation");
        self.tls = self
            .tls
            .restart_client(tp, version, rng, now)
            .ok_or_else(|| TransportError::internal("restarting a server TLS session"))??;
        let initial = &mut self.spaces[SpaceId::Initial as usize];
        let mut fresh = PacketSpace::new();
        fresh.next_pn = initial.next_pn;
        *initial = fresh;
        self.install_initial_keys(self.original_dcid);
        self.handshake.tls_write_space = SpaceId::Initial;
        self.path.pto_count = 0;
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

    /// RFC 9368 §4: the peer's version_information must name the version in use, and
    /// a client that acted on Version Negotiation checks that the server's list would
    /// have led it to the same version (else an attacker forged the VN packet).
    pub(super) fn check_peer_version_information(
        &mut self,
        now: Instant,
        p: &TransportParameters,
    ) -> Result<(), TransportError> {
        // RFC 9368 §4: the client's Chosen Version is the version of its first
        // Initial, which a server that upgraded the connection no longer uses.
        let expected = self.original_version().unwrap_or(self.versions.current);
        if let Some(vi) = &p.version_information {
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
        // A server without version_information does not implement RFC 9368: there is
        // nothing to check the Version Negotiation against (TLS authenticates the
        // parameters, so an attacker cannot have removed it).
        if let (Side::Client, Some(_), Some(vi)) =
            (self.side, &self.versions.offered, &p.version_information)
        {
            let ours = self.config.versions.supported_wire();
            let would_choose = ours.iter().copied().find(|v| vi.available.contains(v));
            if would_choose != Some(self.versions.current) {
                return Err(version_error(
                    "the server's versions would have led to another version (downgrade)",
                ));
            }
        }
        Ok(())
    }
}
