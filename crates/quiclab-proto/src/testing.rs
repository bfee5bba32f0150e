//! A deterministic two-endpoint harness in virtual time: a client and a server
//! endpoint joined by two one-way links with seeded delay, loss, reordering and
//! duplication. Used by tests and benchmarks; the simulator (`quiclab-sim`) builds
//! richer networks on the same contract. Behind the cargo feature `testing`: enable it in
//! a crate's `[dev-dependencies]` to use the harness.

use crate::config::TransportConfig;
use crate::connection::Connection;
use crate::crypto::cert::{self, ServerVerification};
use crate::crypto::choices::{CertType, TlsChoices};
use crate::ecn::Ecn;
use crate::endpoint::{ConnectionHandle, Endpoint};
use crate::rng::DetRng;
use crate::streams::StreamError;
use crate::time::Instant;
use crate::wire::StreamId;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

mod misbehave;
pub use crate::connection::with_tampered_transport_parameters;

/// The ALPN the harness negotiates.
pub const ALPN: &[u8] = b"hq-interop";

/// One direction of the path.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkConfig {
    /// One-way delay of every datagram.
    pub delay: Duration,
    /// Probability a datagram is lost (Bernoulli).
    pub loss: f64,
    /// Probability a datagram is held back by an extra uniform delay in
    /// `[0, reorder_extra)`, which reorders it behind later ones.
    pub reorder: f64,
    pub reorder_extra: Duration,
    /// Probability a datagram is delivered twice.
    pub duplicate: f64,
    /// Largest UDP payload the path carries; larger datagrams are dropped (a path MTU,
    /// for PMTU discovery). `None`: any size.
    pub mtu: Option<usize>,
    /// What the path does to each datagram's ECN codepoint (default: nothing).
    pub ecn: EcnImpairment,
}

/// A path's treatment of ECN codepoints, to test ECN validation (RFC 9000 §13.4.2).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum EcnImpairment {
    /// Codepoints arrive as sent.
    #[default]
    None,
    /// Every codepoint is cleared to not-ECT.
    Bleach,
    /// ECT(0) is re-marked ECT(1).
    RemarkEct1,
    /// Every ECT datagram is marked CE.
    MarkAllCe,
    /// The ECT datagrams with these indices (0-based, in the order the link was
    /// offered them, lost ones counted) are marked CE, as a router's AQM would.
    CeOn(Vec<u64>),
}

impl EcnImpairment {
    /// The codepoint datagram number `index` of the link arrives with.
    fn apply(&self, index: u64, ecn: Ecn) -> Ecn {
        match self {
            EcnImpairment::None => ecn,
            EcnImpairment::Bleach => Ecn::NotEct,
            EcnImpairment::RemarkEct1 if ecn == Ecn::Ect0 => Ecn::Ect1,
            EcnImpairment::MarkAllCe if ecn.is_ect() => Ecn::Ce,
            EcnImpairment::CeOn(at) if ecn.is_ect() && at.contains(&index) => Ecn::Ce,
            _ => ecn,
        }
    }
}

impl LinkConfig {
    pub fn delay(delay: Duration) -> Self {
        LinkConfig {
            delay,
            ..Default::default()
        }
    }
}

/// Counts of what the links did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    pub sent: u64,
    pub lost: u64,
    pub duplicated: u64,
    pub reordered: u64,
    /// Datagrams dropped for exceeding the link's `mtu`.
    pub too_big: u64,
    /// The largest datagram offered to the link, in bytes.
    pub max_datagram: usize,
    /// Datagrams offered to the link by the codepoint their sender set, indexed by
    /// [`Ecn::bits`] (not-ECT, ECT(1), ECT(0), CE).
    pub ecn_sent: [u64; 4],
}

/// A datagram in flight: (delivery time, send sequence, destination endpoint, ECN
/// bits, source address, destination address, bytes).
type InFlight = Reverse<(Instant, u64, To, u8, SocketAddr, SocketAddr, Vec<u8>)>;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum To {
    Server,
    Client,
}

/// One datagram offered to a link: (send time, `true` if client->server, bytes).
pub type Captured = (Instant, bool, Vec<u8>);

/// Decides the fate of one datagram offered to a link, given (send time, source
/// address, destination address, size): `true` drops it (counted as lost).
pub type DropFilter = Box<dyn FnMut(Instant, SocketAddr, SocketAddr, usize) -> bool>;

/// A client and a server endpoint over two links.
pub struct Pair {
    pub now: Instant,
    pub client: Endpoint,
    pub server: Endpoint,
    pub client_addr: SocketAddr,
    pub server_addr: SocketAddr,
    /// [client->server, server->client].
    pub links: [LinkConfig; 2],
    pub link_stats: [LinkStats; 2],
    rngs: [DetRng; 2],
    /// (delivery time, sequence) -> datagram; the sequence breaks ties in send order.
    queue: BinaryHeap<InFlight>,
    seq: u64,
    pub client_conn: ConnectionHandle,
    pub server_conn: Option<ConnectionHandle>,
    buf: Vec<u8>,
    /// Bytes the server sent to each address, and received from each (as the server
    /// saw the source), for the anti-amplification limit (RFC 9000 §8.1, §9.3.1).
    pub server_sent_to: BTreeMap<SocketAddr, u64>,
    pub server_received_from: BTreeMap<SocketAddr, u64>,
    /// Other addresses the server listens on (a preferred address, RFC 9000 §9.6):
    /// datagrams to them reach it, told the address; client datagrams to an address
    /// neither this nor `server_addr` are lost.
    pub server_extra_addrs: Vec<SocketAddr>,
    /// Datagrams the server sent from each of its addresses.
    pub server_sent_from: BTreeMap<SocketAddr, u64>,
    /// Client datagrams still to be copied by an attacker ([`Pair::spoof_client_datagrams`]).
    spoof: Option<(SocketAddr, u32)>,
    /// Old client addresses that still reach it ([`Pair::rebind_client`]).
    client_old_addrs: Vec<SocketAddr>,
    /// When `Some`, every datagram offered to a link is appended here at its send time,
    /// before loss or duplication (what a capture at the sender sees), so drivers can
    /// write pcap files. `None` (the default) records nothing.
    pub capture: Option<Vec<Captured>>,
    /// When `Some`, asked about every datagram offered to a link, after the capture
    /// and before the link's impairments (whose random draws it leaves untouched when
    /// it drops): tests that lose the datagrams of one path (one address) only.
    pub drop_filter: Option<DropFilter>,
    /// Extra one-way delay of every datagram from or to an address (added to the
    /// link's, no random draw): paths of different RTTs for multipath tests. Empty by
    /// default.
    pub address_delay: BTreeMap<SocketAddr, Duration>,
    /// What happens to the ECN codepoint of every datagram from or to an address,
    /// after the link's own impairment, indexed by the address's own count of
    /// datagrams offered in that direction (no random draw): one path of a multipath
    /// connection that CE-marks or bleaches. Empty by default.
    pub address_ecn: BTreeMap<SocketAddr, EcnImpairment>,
    /// Datagrams offered per (address, direction) with an `address_ecn` entry.
    address_ecn_count: BTreeMap<(SocketAddr, To), u64>,
}

/// TLS setup of a [`Pair`]: the default is what [`Pair::new`] uses.
#[derive(Default)]
pub struct PairTls {
    /// Cipher suites and groups the client offers.
    pub client: TlsChoices,
    /// Cipher suites and groups the server accepts.
    pub server: TlsChoices,
    /// The server certificate's key type.
    pub cert: CertType,
    /// Extra bytes in the server certificate.
    pub cert_padding: usize,
    /// A key log on the client's TLS config.
    pub client_key_log: Option<Arc<dyn rustls::KeyLog>>,
    /// Ready-made TLS configs replacing the ones built from the fields above (for
    /// resumption across pairs, which must share configs: `crypto::session`).
    pub configs: Option<(Arc<rustls::ClientConfig>, Arc<rustls::ServerConfig>)>,
}

/// Why [`Pair::run_until`] stopped without its condition becoming true.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PairError {
    #[error("nothing left to do at {0}")]
    Idle(Instant),
    #[error("time limit {0} reached")]
    TimeLimit(Instant),
    #[error("no progress: time stuck at {0}")]
    Stuck(Instant),
}

impl Pair {
    /// A pair with self-signed certificates (seeded), the given transport configs and
    /// links; the client starts connecting at time zero.
    pub fn new(
        client_config: TransportConfig,
        server_config: TransportConfig,
        links: [LinkConfig; 2],
        seed: u64,
    ) -> Self {
        Self::with_cert_padding(client_config, server_config, links, seed, 0)
    }

    /// Like [`Pair::new`], with `cert_padding` extra bytes in the server certificate
    /// (to study large certificate chains and the amplification limit).
    pub fn with_cert_padding(
        client_config: TransportConfig,
        server_config: TransportConfig,
        links: [LinkConfig; 2],
        seed: u64,
        cert_padding: usize,
    ) -> Self {
        Self::with_options(
            client_config,
            server_config,
            links,
            seed,
            cert_padding,
            None,
        )
    }

    /// Like [`Pair::with_cert_padding`], with an optional key log on the client's TLS
    /// config (for example a [`cert::MemoryKeyLog`]), so captured datagrams can be
    /// decrypted by Wireshark.
    pub fn with_options(
        client_config: TransportConfig,
        server_config: TransportConfig,
        links: [LinkConfig; 2],
        seed: u64,
        cert_padding: usize,
        client_key_log: Option<Arc<dyn rustls::KeyLog>>,
    ) -> Self {
        let tls = PairTls {
            cert_padding,
            client_key_log,
            ..PairTls::default()
        };
        Self::with_tls(client_config, server_config, links, seed, tls)
    }

    /// Like [`Pair::new`] with TLS choices for each side and the certificate type.
    pub fn with_tls(
        client_config: TransportConfig,
        server_config: TransportConfig,
        links: [LinkConfig; 2],
        seed: u64,
        tls: PairTls,
    ) -> Self {
        let mut rng = DetRng::new(seed);
        let identity = cert::self_signed_as(
            &["localhost".to_string()],
            rng.next_u64(),
            tls.cert_padding,
            tls.cert,
        );
        let roots = vec![identity.chain[0].clone()];
        let server_tls = cert::server_config_with(identity, &[ALPN.to_vec()], None, &tls.server)
            .expect("self-signed identity and valid choices");
        let client_tls = cert::client_config_with(
            ServerVerification::Roots(roots),
            &[ALPN.to_vec()],
            tls.client_key_log,
            &tls.client,
        );
        let (client_tls, server_tls) = tls.configs.unwrap_or((client_tls, server_tls));
        let client_addr: SocketAddr = "10.0.0.1:40000".parse().expect("literal");
        let server_addr: SocketAddr = "10.0.0.2:443".parse().expect("literal");
        let mut client = Endpoint::new(Arc::new(client_config), None, rng.next_u64());
        let server = Endpoint::new(Arc::new(server_config), Some(server_tls), rng.next_u64());
        let client_conn = client
            .connect(Instant::ZERO, client_tls, "localhost", server_addr)
            .expect("valid client config");
        Pair {
            now: Instant::ZERO,
            client,
            server,
            client_addr,
            server_addr,
            links,
            link_stats: Default::default(),
            rngs: [rng.fork("c2s"), rng.fork("s2c")],
            queue: BinaryHeap::new(),
            seq: 0,
            client_conn,
            server_conn: None,
            buf: Vec::with_capacity(2048),
            server_sent_to: BTreeMap::new(),
            server_received_from: BTreeMap::new(),
            server_extra_addrs: Vec::new(),
            server_sent_from: BTreeMap::new(),
            spoof: None,
            client_old_addrs: Vec::new(),
            capture: None,
            drop_filter: None,
            address_delay: BTreeMap::new(),
            address_ecn: BTreeMap::new(),
            address_ecn_count: BTreeMap::new(),
        }
    }

    /// The client's connection.
    pub fn client_conn(&mut self) -> &mut Connection {
        self.client
            .connection_mut(self.client_conn)
            .expect("client connection exists")
    }

    /// The server's connection, once the first Initial arrived.
    pub fn server_conn(&mut self) -> Option<&mut Connection> {
        let h = self.server_conn?;
        self.server.connection_mut(h)
    }

    /// Sends everything both endpoints want to send now into the links.
    pub fn flush(&mut self) {
        for from_client in [true, false] {
            loop {
                self.buf.clear();
                let ep = if from_client {
                    &mut self.client
                } else {
                    &mut self.server
                };
                let Some(t) = ep.poll_transmit(self.now, &mut self.buf) else {
                    break;
                };
                let datagram = self.buf[..t.size].to_vec();
                let (to, from) = if from_client {
                    // A client that migrated sends from its new address (no NAT).
                    (To::Server, t.source.unwrap_or(self.client_addr))
                } else {
                    let sent = self.server_sent_to.entry(t.destination).or_default();
                    *sent += t.size as u64;
                    let from = t.source.unwrap_or(self.server_addr);
                    *self.server_sent_from.entry(from).or_default() += 1;
                    (To::Client, from)
                };
                if from_client {
                    self.spoof_copy(t.ecn, t.destination, &datagram);
                }
                self.enqueue(to, t.ecn, (from, t.destination), datagram);
            }
        }
    }

    /// A NAT rebinding: from now on the client's datagrams reach the server from
    /// `addr`; datagrams to the old address still reach the client until
    /// [`Pair::expire_client_address`] (a NAT keeps an idle mapping for a while).
    pub fn rebind_client(&mut self, addr: SocketAddr) {
        if !self.client_old_addrs.contains(&self.client_addr) {
            self.client_old_addrs.push(self.client_addr);
        }
        self.client_old_addrs.retain(|a| *a != addr);
        self.client_addr = addr;
    }

    /// The client migrates to its local address `addr` (RFC 9000 §9.2, no NAT: the
    /// server sees it as the source); datagrams to the old address still reach it
    /// until [`Pair::expire_client_address`].
    pub fn migrate_client(&mut self, addr: SocketAddr) -> Result<(), crate::MigrateError> {
        let (now, old) = (self.now, self.client_addr);
        self.client_conn().migrate(now, old, addr)?;
        self.rebind_client(addr);
        Ok(())
    }

    /// The client gets a further local address (a second interface, for multipath):
    /// datagrams to `addr` reach it, as to its current one.
    pub fn add_client_address(&mut self, addr: SocketAddr) {
        if addr != self.client_addr && !self.client_old_addrs.contains(&addr) {
            self.client_old_addrs.push(addr);
        }
    }

    /// Datagrams to `addr`, an old address of the client's, no longer reach it.
    pub fn expire_client_address(&mut self, addr: SocketAddr) {
        self.client_old_addrs.retain(|a| *a != addr);
    }

    /// An attacker copies the client's next `count` datagrams and delivers each to
    /// the server from `from` just before the original (RFC 9000 §9.3.2, §9.3.3: the
    /// original then arrives as a duplicate).
    pub fn spoof_client_datagrams(&mut self, from: SocketAddr, count: u32) {
        self.spoof = (count > 0).then_some((from, count));
    }

    /// Delivers `datagram` to the server now as if sent from `from` (an injection).
    pub fn inject_to_server(&mut self, from: SocketAddr, mut datagram: Vec<u8>) {
        let to = self.server_addr;
        self.deliver_to_server((from, to), Ecn::NotEct, &mut datagram);
    }

    /// Delivers `datagram` to the server's address `to` now (its default one or one
    /// of [`Pair::server_extra_addrs`]) as if sent from `from`.
    pub fn inject_to_server_at(&mut self, from: SocketAddr, to: SocketAddr, mut datagram: Vec<u8>) {
        self.deliver_to_server((from, to), Ecn::NotEct, &mut datagram);
    }

    fn spoof_copy(&mut self, ecn: Ecn, destination: SocketAddr, datagram: &[u8]) {
        let Some((from, left)) = self.spoof else {
            return;
        };
        self.spoof = (left > 1).then_some((from, left - 1));
        // Ahead of the original on the same link, without drawing from its generator.
        let at = self.now + self.links[0].delay;
        self.seq += 1;
        let ecn = ecn.bits();
        let copy = datagram.to_vec();
        self.queue.push(Reverse((
            at,
            self.seq,
            To::Server,
            ecn,
            from,
            destination,
            copy,
        )));
    }

    /// A datagram from `from` to the server's address `to`: its default address, or
    /// one of `server_extra_addrs` (the server is told which); any other is lost.
    fn deliver_to_server(
        &mut self,
        (from, to): (SocketAddr, SocketAddr),
        ecn: Ecn,
        datagram: &mut [u8],
    ) {
        let local = if to == self.server_addr {
            None
        } else if self.server_extra_addrs.contains(&to) {
            Some(to)
        } else {
            return;
        };
        *self.server_received_from.entry(from).or_default() += datagram.len() as u64;
        let now = self.now;
        if let Ok(h) = (self.server).handle_datagram_on(now, local, from, ecn, datagram) {
            self.server_conn.get_or_insert(h);
        }
    }

    fn enqueue(&mut self, to: To, ecn: Ecn, addrs: (SocketAddr, SocketAddr), datagram: Vec<u8>) {
        let (from, dest) = addrs;
        if let Some(capture) = &mut self.capture {
            capture.push((self.now, to == To::Server, datagram.clone()));
        }
        let i = to as usize;
        if let Some(filter) = &mut self.drop_filter {
            if filter(self.now, from, dest, datagram.len()) {
                self.link_stats[i].sent += 1;
                self.link_stats[i].lost += 1;
                return;
            }
        }
        let (link, rng, stats) = (&self.links[i], &mut self.rngs[i], &mut self.link_stats[i]);
        stats.sent += 1;
        stats.max_datagram = stats.max_datagram.max(datagram.len());
        stats.ecn_sent[usize::from(ecn.bits())] += 1;
        let mut ecn = link.ecn.apply(stats.sent - 1, ecn);
        for addr in [from, dest] {
            if let Some(imp) = self.address_ecn.get(&addr) {
                let n = self.address_ecn_count.entry((addr, to)).or_default();
                ecn = imp.apply(*n, ecn);
                *n += 1;
            }
        }
        let ecn = ecn.bits();
        // Draw every random number for every datagram, so changing one probability
        // does not shift the others' streams.
        let (l, r, extra, d) = (
            rng.next_f64(),
            rng.next_f64(),
            rng.next_f64(),
            rng.next_f64(),
        );
        if link.mtu.is_some_and(|m| datagram.len() > m) {
            stats.too_big += 1;
            return;
        }
        if l < link.loss {
            stats.lost += 1;
            return;
        }
        let mut at = self.now + link.delay;
        for addr in [from, dest] {
            at += self.address_delay.get(&addr).copied().unwrap_or_default();
        }
        if r < link.reorder {
            stats.reordered += 1;
            at += link.reorder_extra.mul_f64(extra);
        }
        if d < link.duplicate {
            stats.duplicated += 1;
            self.seq += 1;
            let copy = datagram.clone();
            self.queue
                .push(Reverse((at, self.seq, to, ecn, from, dest, copy)));
        }
        self.seq += 1;
        self.queue
            .push(Reverse((at, self.seq, to, ecn, from, dest, datagram)));
    }

    /// The next time something happens: a delivery or a timer.
    pub fn next_event_time(&self) -> Option<Instant> {
        let q = self.queue.peek().map(|Reverse((t, ..))| *t);
        [q, self.client.poll_timeout(), self.server.poll_timeout()]
            .into_iter()
            .flatten()
            .min()
    }

    /// Advances to the next event and handles everything due then; returns `false`
    /// when nothing is left to happen.
    pub fn step(&mut self) -> bool {
        self.flush();
        let Some(t) = self.next_event_time() else {
            return false;
        };
        self.now = self.now.max(t);
        while let Some(Reverse((at, ..))) = self.queue.peek() {
            if *at > self.now {
                break;
            }
            let Reverse((_, _, to, ecn, from, dest, mut datagram)) =
                self.queue.pop().expect("peeked");
            let ecn = Ecn::from_bits(ecn);
            match to {
                To::Server => self.deliver_to_server((from, dest), ecn, &mut datagram),
                // Only datagrams to the client's current address reach it.
                To::Client
                    if dest != self.client_addr && !self.client_old_addrs.contains(&dest) => {}
                To::Client => {
                    let _ = self
                        .client
                        .handle_datagram(self.now, from, ecn, &mut datagram);
                }
            }
        }
        self.client.handle_timeout(self.now);
        self.server.handle_timeout(self.now);
        self.flush();
        true
    }

    /// Steps until `done` holds (checked after every step), up to virtual time `limit`.
    pub fn run_until(
        &mut self,
        limit: Instant,
        mut done: impl FnMut(&mut Pair) -> bool,
    ) -> Result<(), PairError> {
        let mut last = self.now;
        let mut same_time_steps = 0u32;
        loop {
            if done(self) {
                return Ok(());
            }
            if self.now > limit {
                return Err(PairError::TimeLimit(limit));
            }
            if !self.step() {
                return if done(self) {
                    Ok(())
                } else {
                    Err(PairError::Idle(self.now))
                };
            }
            if self.now == last {
                same_time_steps += 1;
                if same_time_steps > 100_000 {
                    return Err(PairError::Stuck(self.now));
                }
            } else {
                same_time_steps = 0;
                last = self.now;
            }
        }
    }
}

/// Reads everything available on `id` into `out`; returns whether the stream's FIN was
/// reached. A test helper: any read error other than `Blocked` panics, naming the stream.
pub fn drain_stream(conn: &mut Connection, id: StreamId, out: &mut Vec<u8>) -> bool {
    let mut buf = [0u8; 16384];
    loop {
        match conn.read(id, &mut buf) {
            Ok(r) => {
                out.extend_from_slice(&buf[..r.bytes]);
                if r.fin {
                    return true;
                }
                if r.bytes == 0 {
                    return false;
                }
            }
            Err(StreamError::Blocked) => return false,
            Err(e) => panic!("read {id}: {e}"),
        }
    }
}
