//! The endpoint: owns connections, routes datagrams to them by connection ID, accepts
//! new connections (server), and answers unknown versions with Version Negotiation
//! (RFC 9000 §5.2, §6, §7.2, §14.1). Address validation with Retry and tokens
//! (§8.1) is decided in `endpoint/validation.rs`.
//!
//! # Call contract
//! Same shape as [`Connection`]: `handle_datagram` / `handle_timeout` in, then drain
//! `poll_transmit`, then `accept` new connections and drain each connection's
//! `poll_event` (through [`Endpoint::connection_mut`]), then sleep until
//! `poll_timeout`. Connections stay in the endpoint after they close, so results can
//! be read; [`Endpoint::remove`] drops one. An application loop may visit only the
//! connections [`Endpoint::take_touched`] lists instead of every handle.
//!
//! The endpoint keeps its per-turn work proportional to the connections that are
//! active, not to all it holds (`schedule`).

mod schedule;
mod small_map;

mod compatible;
mod reset;
mod routes;
mod validation;

use crate::config::TransportConfig;
use crate::connection::{Connection, EndpointEvent, Parsed, Transmit, MIN_INITIAL_DATAGRAM};
use crate::crypto::initial::is_valid_client_initial;
use crate::ecn::Ecn;
use crate::error::TransportError;
use crate::events::EventSink;
use crate::rng::DetRng;
use crate::time::Instant;
use crate::wire::header::{parse_header, write_version_negotiation, HeaderError};
use crate::wire::{ConnectionId, PacketType};
use reset::{ResetSender, MIN_STATELESS_RESET};
use routes::Routes;
use schedule::{Connections, Schedule, Slot};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::SocketAddr;
use std::sync::Arc;
use validation::{AddressValidation, Admission, NewInitial};

/// Identifies a connection within its endpoint; handles are never reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnectionHandle(pub u64);

/// Why a datagram was not delivered to any connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unrouted {
    /// Unparseable, or a short header for an unknown connection ID.
    Dropped,
    /// An unknown version; a Version Negotiation packet was queued.
    VersionNegotiation,
    /// A new client's Initial was answered statelessly (RFC 9000 §8.1.2): a Retry,
    /// or a CONNECTION_CLOSE with INVALID_TOKEN for a bad Retry token.
    Retry,
    /// A short header for an unknown connection ID was answered with a Stateless
    /// Reset (RFC 9000 §10.3; only with a `stateless_reset_key`).
    StatelessReset,
}

/// Datagrams for one destination from [`Endpoint::poll_transmit_burst`]: `segments`
/// datagrams of `segment_size` bytes back to back, the last possibly shorter, all to
/// be sent with the ECN codepoint `ecn` (one GSO send sets one codepoint).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Burst {
    pub destination: SocketAddr,
    pub segment_size: usize,
    pub segments: usize,
    pub ecn: Ecn,
}

/// The first packet of a datagram that may open a connection.
struct Initial<'a> {
    version: u32,
    /// The Initial's Token field (RFC 9000 §17.2.2).
    token: &'a [u8],
    /// The packet's bytes (not the rest of the datagram).
    packet: &'a [u8],
    pn_offset: usize,
    datagram_len: usize,
}

/// A QUIC endpoint: a client, a server, or both.
pub struct Endpoint {
    config: Arc<TransportConfig>,
    server: Option<Arc<rustls::ServerConfig>>,
    rng: DetRng,
    /// Each connection with its schedule flags (`schedule::Slot`). The connection is
    /// boxed: it is several KiB, and inline in the map's nodes (11 slots each, about
    /// half full after splits) it cost ~10 KiB per connection and a memmove of whole
    /// nodes on every split.
    connections: Connections,
    /// Destination connection ID -> connection (`routes.rs`: our own IDs hashed
    /// cheaply, the peer-chosen ones with a keyed hash).
    routes: Routes,
    next_handle: u64,
    /// Datagrams to send before any connection's: stateless responses (not-ECT) and a
    /// connection's datagram that could not join a burst (with its own codepoint).
    responses: VecDeque<(SocketAddr, Ecn, Vec<u8>)>,
    accepted: VecDeque<ConnectionHandle>,
    /// Where the round-robin over connections in `poll_transmit` resumes.
    next_to_send: ConnectionHandle,
    /// The connection that produced the last datagram of `poll_transmit`, so
    /// `poll_transmit_burst` can ask it for more.
    last_sent: Option<ConnectionHandle>,
    /// Makes the event sink of each accepted connection, before it sees its first packet.
    sink_factory: Option<SinkFactory>,
    /// Chooses the transport config of each accepted connection (per-peer settings,
    /// such as Careful Resume's saved path parameters); `None` = `config`.
    config_factory: Option<ConfigFactory>,
    /// Retry and tokens (server), NEW_TOKEN tokens for later connections (client).
    validation: AddressValidation,
    /// Deadlines, connections that may send, and what the application must look at.
    schedule: Schedule,
    /// Stateless Resets for packets of lost connections (with a reset key).
    resets: ResetSender,
}

/// The transport config for a connection from `remote` accepted at `now`, or `None`
/// for the endpoint's own. A returned config must be valid (`TransportConfig::validate`).
pub type ConfigFactory = Box<dyn FnMut(SocketAddr, Instant) -> Option<Arc<TransportConfig>> + Send>;

/// Builds an event sink for a newly accepted server connection (or none).
pub type SinkFactory =
    Box<dyn FnMut(ConnectionHandle, &Connection) -> Option<Box<dyn EventSink>> + Send>;

impl Endpoint {
    /// An endpoint; with `server` set it accepts incoming connections.
    /// Every connection's randomness derives from `seed`.
    pub fn new(
        config: Arc<TransportConfig>,
        server: Option<Arc<rustls::ServerConfig>>,
        seed: u64,
    ) -> Self {
        let rng = DetRng::new(seed);
        // Forked from a copy: the endpoint's own stream (connection seeds) is the
        // same as before resets existed.
        let resets = ResetSender::new(rng.clone().fork("stateless_reset"));
        Endpoint {
            resets,
            validation: AddressValidation::new(&rng),
            config,
            server,
            rng,
            connections: BTreeMap::new(),
            routes: Routes::default(),
            next_handle: 0,
            responses: VecDeque::new(),
            accepted: VecDeque::new(),
            next_to_send: ConnectionHandle(0),
            last_sent: None,
            sink_factory: None,
            config_factory: None,
            schedule: Schedule::default(),
        }
    }

    /// Attaches a sink to every connection this endpoint accepts from now on, before
    /// the connection processes its first datagram (so a qlog sees the client's Initial).
    pub fn set_sink_factory(&mut self, factory: SinkFactory) {
        self.sink_factory = Some(factory);
    }

    /// Chooses the config of every connection accepted from now on (see
    /// [`ConfigFactory`]).
    pub fn set_config_factory(&mut self, factory: ConfigFactory) {
        self.config_factory = Some(factory);
    }

    pub fn config(&self) -> &Arc<TransportConfig> {
        &self.config
    }

    fn new_handle(&mut self) -> ConnectionHandle {
        let h = ConnectionHandle(self.next_handle);
        self.next_handle += 1;
        h
    }

    /// Starts a client connection.
    pub fn connect(
        &mut self,
        now: Instant,
        tls: Arc<rustls::ClientConfig>,
        server_name: &str,
        remote: SocketAddr,
    ) -> Result<ConnectionHandle, TransportError> {
        let seed = self.rng.next_u64();
        let mut conn =
            Connection::new_client(now, self.config.clone(), tls, server_name, remote, seed)?;
        let h = self.new_handle();
        // RFC 9369 §5: only a token from a connection of the version this one starts in.
        if let Some(token) = self.validation.on_connect(h, server_name, conn.version()) {
            // RFC 9000 §8.1.3: a NEW_TOKEN token from an earlier connection.
            conn.set_initial_token(token);
        }
        self.routes.insert_own(conn.local_cid(), h);
        let mut slot = Slot::new(conn);
        self.schedule.update(h, &mut slot);
        self.schedule.wake(h, &mut slot);
        self.connections.insert(h, slot);
        Ok(h)
    }

    /// Routes a datagram that arrived from `remote` with the ECN codepoint `ecn`
    /// (decrypted in place, so `data` is clobbered). Returns the connection it went to.
    pub fn handle_datagram(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        ecn: Ecn,
        data: &mut [u8],
    ) -> Result<ConnectionHandle, Unrouted> {
        self.handle_datagram_on(now, None, remote, ecn, data)
    }

    /// [`Endpoint::handle_datagram`] for a datagram that arrived on the local address
    /// `local` (`None`: the driver's default socket, as
    /// [`Transmit::source`](crate::Transmit::source) says): a driver listening on a
    /// server's preferred address too (RFC 9000 §9.6) passes `Some(that address)` for
    /// what arrives there. Routing is by connection ID whatever the address.
    pub fn handle_datagram_on(
        &mut self,
        now: Instant,
        local: Option<SocketAddr>,
        remote: SocketAddr,
        ecn: Ecn,
        data: &mut [u8],
    ) -> Result<ConnectionHandle, Unrouted> {
        let header = match parse_header(data, self.config.connection_id_length as usize) {
            Ok(h) => h,
            Err(HeaderError::UnsupportedVersion { dcid, scid, .. }) => {
                // RFC 9000 §6.1 and §14.1: answer only datagrams big enough for an Initial.
                return Err(self.version_negotiation(remote, &dcid, &scid, data.len()));
            }
            Err(_) => return Err(Unrouted::Dropped),
        };
        let (ty, dcid, scid) = (header.ty, header.dcid, header.scid);
        let version = header.version;
        let (pn_offset, packet_len) = (header.pn_offset, header.packet_len.min(data.len()));
        // Connections parse short headers with the same config (connection ID length),
        // so the first packet's header is handed over rather than parsed again.
        let first = Parsed::from(&header);
        let handle = match self.routes.get(&dcid) {
            Some(h) => h,
            None if ty == PacketType::OneRtt => {
                return self.unknown_short_header(now, remote, ecn, data, &dcid);
            }
            None if ty != PacketType::OneRtt && !self.config.versions.accepts(version) => {
                // A version the parser knows (v2) but this endpoint does not accept.
                let (d, s) = (dcid.as_bytes().to_vec(), scid.as_bytes().to_vec());
                return Err(self.version_negotiation(remote, &d, &s, data.len()));
            }
            None => {
                let first_packet = Initial {
                    version,
                    token: header.token,
                    packet: &data[..packet_len],
                    pn_offset,
                    datagram_len: data.len(),
                };
                self.accept_new(now, remote, ty, (dcid, scid), first_packet)?
            }
        };
        let slot = self.connections.get_mut(&handle).ok_or(Unrouted::Dropped)?;
        (slot.conn).handle_routed_datagram(now, (local, remote), ecn, data, Some(first));
        apply_endpoint_events(
            &mut self.routes,
            &mut self.validation,
            handle,
            &mut slot.conn,
        );
        self.schedule.called(handle, slot, true, false);
        Ok(handle)
    }

    /// A short-header datagram whose connection ID no connection has: a Stateless
    /// Reset from a peer of ours (RFC 9000 §10.3.1: its ID is random, so only its
    /// last 16 bytes can route it), else a packet of a connection we lost, answered
    /// with a Stateless Reset when a key makes its token computable (§10.3).
    fn unknown_short_header(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        ecn: Ecn,
        data: &mut [u8],
        dcid: &ConnectionId,
    ) -> Result<ConnectionHandle, Unrouted> {
        if data.len() < MIN_STATELESS_RESET {
            return Err(Unrouted::Dropped); // §10.3: never a valid packet either
        }
        let tail = &data[data.len().saturating_sub(16)..];
        // Never answered with a reset of our own: a recognised one goes to its
        // connection, which drains (recv.rs).
        let owner = (self.connections.iter())
            .find(|(_, s)| !s.conn.is_closed() && s.conn.is_stateless_reset(tail))
            .map(|(&h, _)| h);
        if let Some(h) = owner {
            if let Some(slot) = self.connections.get_mut(&h) {
                (slot.conn).handle_routed_datagram(now, (None, remote), ecn, data, None);
                apply_endpoint_events(&mut self.routes, &mut self.validation, h, &mut slot.conn);
                self.schedule.called(h, slot, true, false);
            }
            return Ok(h);
        }
        let Some(key) = self.config.stateless_reset_key.as_ref() else {
            return Err(Unrouted::Dropped);
        };
        match self.resets.respond(now, key, dcid, data.len()) {
            Some(pkt) => {
                self.responses.push_back((remote, Ecn::NotEct, pkt));
                Err(Unrouted::StatelessReset)
            }
            None => Err(Unrouted::Dropped),
        }
    }

    /// Stateless Resets sent, and those the rate limit held back (RFC 9000 §10.3).
    pub fn stateless_resets(&self) -> (u64, u64) {
        (self.resets.sent(), self.resets.limited())
    }

    /// RFC 9000 §6.1: a server answers a long header of a version it does not accept
    /// with Version Negotiation listing its versions, never with a connection; §14.1:
    /// only datagrams big enough for an Initial get an answer (so VN cannot amplify).
    fn version_negotiation(
        &mut self,
        remote: SocketAddr,
        dcid: &[u8],
        scid: &[u8],
        len: usize,
    ) -> Unrouted {
        if self.server.is_none() || len < MIN_INITIAL_DATAGRAM {
            return Unrouted::Dropped;
        }
        let mut pkt = Vec::new();
        let unused = self.rng.next_u64() as u8;
        let versions = self.config.versions.supported_wire();
        write_version_negotiation(&mut pkt, scid, dcid, &versions, unused);
        self.responses.push_back((remote, Ecn::NotEct, pkt));
        Unrouted::VersionNegotiation
    }

    /// RFC 9000 §7.2, §14.1: a server accepts an Initial of at least
    /// [`MIN_INITIAL_DATAGRAM`] bytes whose
    /// DCID is at least 8 bytes.
    fn accept_new(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        ty: PacketType,
        (dcid, scid): (ConnectionId, ConnectionId),
        initial: Initial<'_>,
    ) -> Result<ConnectionHandle, Unrouted> {
        let Some(tls) = self.server.clone() else {
            return Err(Unrouted::Dropped);
        };
        let version = initial.version;
        if ty != PacketType::Initial
            || initial.datagram_len < MIN_INITIAL_DATAGRAM
            || dcid.len() < 8
        {
            return Err(Unrouted::Dropped);
        }
        // RFC 9001 §5.2: only an Initial that decrypts can be a client's; junk creates
        // no state (Initial-flood resistance).
        if !is_valid_client_initial(version, &dcid, initial.packet, initial.pn_offset) {
            return Err(Unrouted::Dropped);
        }
        let handshaking = self.schedule.handshaking(&mut self.connections);
        // RFC 9000 §8.1: Retry, or a token that validates the address.
        let new = NewInitial {
            version,
            dcid,
            scid,
            token: initial.token,
            handshaking,
        };
        let cid_len = self.config.connection_id_length as usize;
        let mut validation =
            match self
                .validation
                .admit(&self.config.admission, cid_len, now, remote, &new)
            {
                Admission::Accept(v) => v,
                Admission::Respond(pkt) => {
                    self.responses.push_back((remote, Ecn::NotEct, pkt));
                    return Err(Unrouted::Retry);
                }
            };
        // At most `max_handshaking` connections may be mid-handshake at once: under an
        // Initial flood from real clients, new ones wait (their Initials are dropped and
        // retransmitted) rather than growing the server's state without bound.
        if handshaking >= self.config.admission.max_handshaking {
            return Err(Unrouted::Dropped);
        }
        // RFC 9368 §2.3: perhaps upgrade to a compatible version the client offers.
        let upgrade = compatible::negotiate(
            &self.config.versions,
            version,
            &dcid,
            initial.packet,
            initial.pn_offset,
        );
        let conn_version = upgrade.as_ref().map_or(version, |u| u.version);
        if conn_version != version {
            let admission = &self.config.admission;
            (self.validation).on_upgrade(admission, &mut validation, conn_version, now, remote);
        }
        let seed = self.rng.next_u64();
        let config = self
            .config_factory
            .as_mut()
            .and_then(|f| f(remote, now))
            .unwrap_or_else(|| self.config.clone());
        let mut conn = Connection::new_server_validated(
            now,
            config,
            tls,
            remote,
            dcid,
            scid,
            conn_version,
            seed,
            validation,
        )
        .map_err(|_| Unrouted::Dropped)?;
        let h = self.new_handle();
        if let Some(sink) = self.sink_factory.as_mut().and_then(|f| f(h, &conn)) {
            conn.set_event_sink(now, sink);
        }
        if let Some(u) = upgrade {
            conn.upgraded_from(now, version, &dcid, u.client_versions);
        }
        // The client keeps using its original DCID until it sees our Initial.
        self.routes.insert_peer_chosen(dcid, h);
        self.routes.insert_own(conn.local_cid(), h);
        self.connections.insert(h, Slot::new(conn));
        self.accepted.push_back(h);
        Ok(h)
    }

    /// A connection the server accepted since the last call.
    pub fn accept(&mut self) -> Option<ConnectionHandle> {
        self.accepted.pop_front()
    }

    pub fn connection(&self, h: ConnectionHandle) -> Option<&Connection> {
        self.connections.get(&h).map(|s| &*s.conn)
    }

    /// The connection may change through this access: the endpoint re-reads its
    /// deadline and asks it for datagrams on its next call.
    pub fn connection_mut(&mut self, h: ConnectionHandle) -> Option<&mut Connection> {
        let slot = self.connections.get_mut(&h)?;
        self.schedule.mark_stale(h, slot);
        Some(&mut *slot.conn)
    }

    /// The connections the endpoint handed input to or polled since the last call
    /// (new, accepted, given a datagram or a timer, asked to send), in handle order:
    /// only these can have new events or state. An application that acts only on
    /// events can visit these instead of every handle each turn.
    pub fn take_touched(&mut self) -> BTreeSet<ConnectionHandle> {
        self.schedule.take_touched(&mut self.connections)
    }

    /// Bytes the connections hold from their peers before they can use them, summed
    /// ([`Connection::handshake_buffered_bytes`]; one pass over every connection, for
    /// tests and monitoring). Each holds at most
    /// [`MAX_CRYPTO_BUFFER`](crate::connection::MAX_CRYPTO_BUFFER) and a closed one
    /// none, so the connections mid-handshake hold at most `admission.max_handshaking`
    /// × 64 KiB, besides their own state and the datagram being read.
    pub fn handshake_buffered_bytes(&self) -> u64 {
        self.connections
            .values()
            .map(|s| s.conn.handshake_buffered_bytes())
            .sum()
    }

    /// Handles of all connections, in creation order.
    pub fn handles(&self) -> impl Iterator<Item = ConnectionHandle> + '_ {
        self.connections.keys().copied()
    }

    /// Drops a connection and its routes.
    pub fn remove(&mut self, h: ConnectionHandle) -> Option<Connection> {
        self.routes.forget(h);
        self.validation.forget(h);
        let slot = self.connections.remove(&h);
        self.schedule.forget(h, slot.as_ref());
        slot.map(|s| *s.conn)
    }

    /// Fires the timers of every connection whose deadline has come.
    /// In handle order, as a scan of all connections would.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.schedule.refresh_stale(&mut self.connections);
        for h in self.schedule.due(now, &mut self.connections) {
            if let Some(slot) = self.connections.get_mut(&h) {
                slot.conn.handle_timeout(now);
                apply_endpoint_events(&mut self.routes, &mut self.validation, h, &mut slot.conn);
                self.schedule.called(h, slot, true, false);
            }
        }
    }

    /// The driver read an ICMP port unreachable for a datagram it sent to `remote`:
    /// each connection to `remote` hears of it
    /// ([`Connection::handle_port_unreachable`]: only a client that has received
    /// nothing yet ends). One pass over the connections: ICMP errors are rare, and
    /// only a client's socket asks the kernel for them. Returns the connections that
    /// ended.
    pub fn handle_port_unreachable(
        &mut self,
        now: Instant,
        remote: SocketAddr,
    ) -> Vec<ConnectionHandle> {
        let hit: Vec<ConnectionHandle> = (self.connections.iter())
            .filter(|(_, s)| s.conn.remote_address() == remote)
            .map(|(&h, _)| h)
            .collect();
        let mut ended = Vec::new();
        for h in hit {
            if let Some(slot) = self.connections.get_mut(&h) {
                if slot.conn.handle_port_unreachable(now) {
                    ended.push(h);
                }
                apply_endpoint_events(&mut self.routes, &mut self.validation, h, &mut slot.conn);
                self.schedule.called(h, slot, true, false);
            }
        }
        ended
    }

    /// The next datagram to send: stateless responses first, then connections in turn.
    pub fn poll_transmit(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        self.last_sent = None;
        if let Some((destination, ecn, pkt)) = self.responses.pop_front() {
            buf.extend_from_slice(&pkt);
            // Stateless responses (Version Negotiation, Retry, stateless reset) are
            // sent not-ECT: no connection validates ECN for them.
            return Some(Transmit {
                destination,
                source: None,
                size: pkt.len(),
                ecn,
            });
        }
        // Round robin from `next_to_send`, wrapping once, over the connections that
        // may send (the others would answer `None` and change nothing: see
        // `Connection::send_settled`). Handles are looked up one at a time rather than
        // collected: this runs once per datagram sent.
        self.schedule.refresh_stale(&mut self.connections);
        self.schedule.ready_due(now, &mut self.connections);
        let start = self.next_to_send;
        let mut cursor = start;
        let mut wrapped = false;
        loop {
            let next = self.schedule.next_ready(cursor, wrapped.then_some(start));
            let Some(h) = next else {
                if wrapped {
                    return None;
                }
                wrapped = true;
                cursor = ConnectionHandle(0);
                continue;
            };
            let Some(slot) = self.connections.get_mut(&h) else {
                self.schedule.forget(h, None);
                continue;
            };
            // A settled connection's entry left in `ready`: passed over as if absent.
            if !self.schedule.skip_settled(h, slot) {
                slot.conn.prepare_transmit(now);
                let sent = slot.conn.poll_transmit(now, buf);
                let settled = sent.is_none() && slot.conn.send_settled();
                apply_endpoint_events(&mut self.routes, &mut self.validation, h, &mut slot.conn);
                self.schedule.called(h, slot, false, sent.is_some());
                if let Some(t) = sent {
                    self.next_to_send = ConnectionHandle(h.0 + 1);
                    self.last_sent = Some(h);
                    return Some(t);
                }
                if settled {
                    self.schedule.settle(h, slot);
                }
            }
            match h.0.checked_add(1) {
                Some(n) => cursor = ConnectionHandle(n),
                None if wrapped => return None,
                None => {
                    wrapped = true;
                    cursor = ConnectionHandle(0);
                }
            }
        }
    }

    /// A burst for segmentation offload (GSO): up to `max_segments` datagrams and
    /// `max_bytes` bytes (the first datagram may pass `max_bytes` alone), all
    /// for one destination, appended to `buf` back to back; every one is
    /// `segment_size` bytes except the last, which may be shorter. `None` when there is
    /// nothing to send. Connections take turns burst by burst (the same round robin as
    /// [`Endpoint::poll_transmit`]), so one busy connection cannot starve the others
    /// for more than one burst. Call it in a loop, like `poll_transmit`.
    pub fn poll_transmit_burst(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
        max_segments: usize,
        max_bytes: usize,
    ) -> Option<Burst> {
        let start = buf.len();
        let first = self.poll_transmit(now, buf)?;
        let mut burst = Burst {
            destination: first.destination,
            segment_size: first.size,
            segments: 1,
            ecn: first.ecn,
        };
        // A stateless response, or a connection that has sent its datagram and moved
        // the round robin on: only the connection just served may extend the burst.
        let Some(h) = self.last_sent.take() else {
            return Some(burst);
        };
        while burst.segments < max_segments && buf.len() - start + burst.segment_size <= max_bytes {
            let Some(slot) = self.connections.get_mut(&h) else {
                break;
            };
            slot.conn.prepare_transmit(now);
            let before = buf.len();
            let sent = slot.conn.poll_transmit(now, buf);
            let settled = sent.is_none() && slot.conn.send_settled();
            apply_endpoint_events(&mut self.routes, &mut self.validation, h, &mut slot.conn);
            self.schedule.called(h, slot, false, sent.is_some());
            let Some(t) = sent else {
                if settled {
                    self.schedule.settle(h, slot);
                }
                break;
            };
            if t.destination != burst.destination
                || t.size > burst.segment_size
                || t.ecn != burst.ecn
            {
                // Cannot join this burst: it goes out first in the next one, with its
                // own codepoint.
                let pkt = buf[before..].to_vec();
                buf.truncate(before);
                self.responses.push_front((t.destination, t.ecn, pkt));
                break;
            }
            burst.segments += 1;
            if t.size < burst.segment_size {
                break;
            }
        }
        Some(burst)
    }

    /// Client: stores a NEW_TOKEN token for connections to `server_name` (one saved by
    /// an earlier run) that a connection of QUIC `version` received; the next
    /// [`Endpoint::connect`] to that name starting in that version uses it once (RFC
    /// 9369 §5).
    pub fn insert_token(&mut self, server_name: &str, version: u32, token: Vec<u8>) {
        self.validation.insert_token(server_name, version, token);
    }

    /// Client: the NEW_TOKEN tokens not yet used, as (server name, QUIC version,
    /// token), in that order (to save them).
    pub fn tokens(&self) -> impl Iterator<Item = (&str, u32, &[u8])> {
        self.validation.tokens()
    }

    /// The earliest deadline of any connection.
    pub fn poll_timeout(&self) -> Option<Instant> {
        if !self.responses.is_empty() {
            return Some(Instant::ZERO);
        }
        self.schedule.next_deadline(&self.connections)
    }

    /// Whether the endpoint's scheduling indexes agree with the flags kept beside each
    /// connection (for tests: `Err` names the first disagreement).
    #[doc(hidden)]
    pub fn check_schedule(&self) -> Result<(), String> {
        self.schedule.check(&self.connections)
    }
}

/// Applies what connection `h` asks of the endpoint (connection IDs to route or
/// forget, a NEW_TOKEN token to keep) after a call into it.
fn apply_endpoint_events(
    routes: &mut Routes,
    validation: &mut AddressValidation,
    h: ConnectionHandle,
    conn: &mut Connection,
) {
    while let Some(ev) = conn.poll_endpoint_event() {
        match ev {
            EndpointEvent::NewConnectionId(cid) => routes.insert_own(cid, h),
            EndpointEvent::RetireConnectionId(cid) => routes.remove_own(&cid),
            EndpointEvent::Drained => routes.forget(h),
            // RFC 9369 §5: the token belongs to the version the connection is in.
            EndpointEvent::NewToken(token) => validation.on_new_token(h, conn.version(), token),
        }
    }
}
