//! The TLS session of one connection: rustls's QUIC client or server, fed CRYPTO data
//! and asked for handshake bytes and key changes (RFC 9001 §4).

use super::checksum_keys;
use super::clock::with_time;
use super::provider::with_rng;
use super::session::with_quic_version;
use super::version_keys::{self, NextSecrets, SecretLog, Traffic};
use crate::config::PacketProtection;
use crate::error::{TransportError, TransportErrorCode};
use crate::rng::DetRng;
use crate::time::Instant;
use rustls::crypto::tls13::OkmBlock;
#[cfg(test)]
use rustls::quic::PacketKeySet;
use rustls::quic::{DirectionalKeys, Keys};
use std::sync::Arc;

/// TLS alert handshake_failure (RFC 8446 §6.2), for peer failures rustls gives no alert for.
const ALERT_HANDSHAKE_FAILURE: u8 = 40;
/// TLS alert unexpected_message (RFC 8446 §6.2): what rustls answers any post-handshake
/// message from a QUIC client with.
const ALERT_UNEXPECTED_MESSAGE: u8 = 10;

/// New packet keys from TLS (RFC 9001 §4.1.4), derived for the connection's QUIC
/// version (see [`TlsSession::switch_version`]).
pub enum KeyChange {
    /// Keys for the Handshake packet number space.
    Handshake { keys: Keys },
    /// Keys for 1-RTT packets, and the secrets of the later key phases (RFC 9001 §6).
    OneRtt { keys: Keys, next: NextSecrets },
}

/// rustls's connection while the handshake may still need it; after
/// [`TlsSession::release`] (server, handshake done, tickets written) only what the
/// connection still asks for. rustls's state (1.4 KiB inline, boxed so a released
/// session does not keep the room, plus about 2 KiB of buffers and key schedule)
/// matters for a server holding many idle connections.
enum Tls {
    Live(Box<rustls::quic::Connection>),
    Released(Box<Finished>),
}

/// What a finished server handshake leaves for later questions.
struct Finished {
    alpn: Option<Box<[u8]>>,
    #[cfg(test)]
    server_name: Option<Box<str>>,
    cipher_suite: Option<rustls::SupportedCipherSuite>,
    resumed: bool,
    peer_params: Option<Box<[u8]>>,
}

/// One connection's TLS 1.3 state. All randomness comes from the seeded generator it
/// owns. Errors from the peer's handshake map to CRYPTO_ERROR (0x0100 + alert).
///
/// Every rustls call that may draw randomness or read the time (construction, `read_hs`,
/// `write_hs`) runs inside [`with_rng`] with this session's generator and inside
/// [`with_time`] with the connection's `now`, and inside [`with_quic_version`] with its
/// packets' version (the ticket stores' scope, RFC 9369 §5); read-only accessors do not.
pub struct TlsSession {
    rng: DetRng,
    conn: Tls,
    /// The 1-RTT secrets of the next key phase (RFC 9001 §6), copied from the
    /// `KeyChange::OneRtt { next }` that [`TlsSession::write_handshake`] returned.
    /// Only this module's tests use them: the connection's key update keeps its own.
    #[cfg(test)]
    next_secrets: Option<NextSecrets>,
    /// The QUIC version rustls derives its keys for (RFC 9369 §3.3.2 labels).
    version: u32,
    /// The QUIC version of the connection's packets: `version` unless a server moved a
    /// client to another compatible version (RFC 9368 §2.3), whose Handshake and 1-RTT
    /// keys are then derived from the secrets `secret_log` caught.
    packet_version: u32,
    /// Client offering several versions: this session's TLS secrets, from rustls's key
    /// log (`None` otherwise: nothing is captured).
    secret_log: Option<Arc<SecretLog>>,
    /// Client: its config and server name, to start over in another version after
    /// Version Negotiation ([`TlsSession::restart_client`]).
    client_origin: Option<(Arc<rustls::ClientConfig>, String)>,
    /// Client resuming: the server transport parameters remembered with the ticket
    /// (RFC 9000 §7.4.1), as rustls reported them before the server's new ones came.
    remembered_params: Option<Vec<u8>>,
    /// Client: TLS handed out the Handshake keys (so the ServerHello was read, and the
    /// transport parameters rustls reports can be the server's new ones).
    handshake_keys_seen: bool,
    /// How the Handshake, 0-RTT and 1-RTT keys handed out protect packets
    /// ([`TlsSession::with_packet_protection`]).
    protection: PacketProtection,
}

/// rustls's name for a QUIC version: v2 uses the "quicv2 " labels (RFC 9369 §3.3.2);
/// anything else is v1 (other versions never get this far: they get Version
/// Negotiation).
fn rustls_version(version: u32) -> rustls::quic::Version {
    if version == crate::wire::VERSION_2 {
        rustls::quic::Version::V2
    } else {
        rustls::quic::Version::V1
    }
}

impl TlsSession {
    /// A client for `server_name`, sending `transport_params` (encoded) in its
    /// ClientHello, deriving packet keys for QUIC `version`. `follow_upgrades`: the
    /// client offers other versions a server may move the connection to (RFC 9368
    /// §2.3), so the session keeps its TLS secrets for [`TlsSession::switch_version`]
    /// (a copy of `config` with a key log of its own; only then).
    pub fn client(
        config: Arc<rustls::ClientConfig>,
        server_name: &str,
        transport_params: Vec<u8>,
        version: u32,
        follow_upgrades: bool,
        rng: DetRng,
        now: Instant,
    ) -> Result<Self, TransportError> {
        let mut rng = rng;
        let name = rustls::pki_types::ServerName::try_from(server_name.to_owned())
            .map_err(|e| TransportError::internal(format!("server name {server_name:?}: {e}")))?;
        let origin = (config.clone(), server_name.to_owned());
        let (config, secret_log) = if follow_upgrades {
            let (config, log) = SecretLog::wrap(&config);
            (config, Some(log))
        } else {
            (config, None)
        };
        // The ClientHello (random, key share) is built here, so the generator must be set.
        // A resumed session's ticket age comes from the clock (RFC 8446 §4.2.11.1).
        // RFC 9369 §5: only a ticket of the version the connection starts in is taken.
        let conn = with_time(now, || {
            with_rng(&mut rng, || {
                with_quic_version(version, || {
                    rustls::quic::ClientConnection::new(
                        config,
                        rustls_version(version),
                        name,
                        transport_params,
                    )
                })
            })
        })
        .map_err(|e| local_error("creating TLS client", e))?;
        // rustls reports the remembered parameters until the server's arrive.
        let remembered_params = conn.quic_transport_parameters().map(<[u8]>::to_vec);
        Ok(TlsSession {
            rng,
            conn: Tls::Live(Box::new(conn.into())),
            #[cfg(test)]
            next_secrets: None,
            version,
            packet_version: version,
            secret_log,
            client_origin: Some(origin),
            remembered_params,
            handshake_keys_seen: false,
            protection: PacketProtection::Aead,
        })
    }

    /// Client: a new session for the same server in QUIC `version` (RFC 9000 §6.2: after
    /// Version Negotiation the client starts a new connection attempt), with new
    /// transport parameters and randomness. `None` for a server session. It offers no
    /// other version (see `connection::version`), so it keeps no secrets.
    pub fn restart_client(
        &self,
        transport_params: Vec<u8>,
        version: u32,
        rng: DetRng,
        now: Instant,
    ) -> Option<Result<Self, TransportError>> {
        let (config, name) = self.client_origin.clone()?;
        let session = Self::client(config, &name, transport_params, version, false, rng, now);
        Some(session.map(|s| s.with_packet_protection(self.protection)))
    }

    /// The session with the packet protection its keys get (default `Aead`): the
    /// Handshake and 1-RTT keys and key updates of [`TlsSession::write_handshake`] and
    /// the 0-RTT keys are wrapped in `crypto::checksum_keys` for `Checksum`; the only
    /// places keys leave this session, so the connection sees nothing else.
    pub fn with_packet_protection(mut self, protection: PacketProtection) -> Self {
        self.protection = protection;
        self
    }

    /// A server sending `transport_params` in its EncryptedExtensions, deriving packet
    /// keys for QUIC `version`.
    pub fn server(
        config: Arc<rustls::ServerConfig>,
        transport_params: Vec<u8>,
        version: u32,
        rng: DetRng,
    ) -> Result<Self, TransportError> {
        let mut rng = rng;
        let conn = with_rng(&mut rng, || {
            rustls::quic::ServerConnection::new(config, rustls_version(version), transport_params)
        })
        .map_err(|e| local_error("creating TLS server", e))?;
        Ok(TlsSession {
            rng,
            conn: Tls::Live(Box::new(conn.into())),
            #[cfg(test)]
            next_secrets: None,
            version,
            packet_version: version,
            secret_log: None,
            client_origin: None,
            remembered_params: None,
            handshake_keys_seen: false,
            protection: PacketProtection::Aead,
        })
    }

    /// The QUIC version this session derives keys for.
    pub fn version(&self) -> u32 {
        self.version
    }

    /// Client: the server moved the connection to the compatible QUIC `version` (RFC
    /// 9368 §2.3), before TLS handed out any Handshake keys: those and the 1-RTT keys
    /// (key updates included) are derived for `version` from now on (RFC 9369
    /// §3.3.2), from the secrets of a session created with `follow_upgrades`.
    pub fn switch_version(&mut self, version: u32) -> Result<(), TransportError> {
        if self.secret_log.is_none() || self.handshake_keys_seen {
            return Err(TransportError::internal(
                "switching the version of a TLS session that cannot follow",
            ));
        }
        self.packet_version = version;
        Ok(())
    }

    /// Server: declines the ClientHello's early data (RFC 9001 §4.6.2; before TLS
    /// reads it).
    pub fn reject_early_data(&mut self) {
        if let Tls::Live(c) = &mut self.conn {
            if let rustls::quic::Connection::Server(s) = &mut **c {
                s.reject_early_data();
            }
        }
    }

    /// The secrets this session keeps, if it follows upgrades (tests).
    #[cfg(test)]
    pub(crate) fn secret_log(&self) -> Option<&Arc<SecretLog>> {
        self.secret_log.as_ref()
    }

    /// Our and the peer's secret of a pair, as the key log caught them.
    fn logged_pair(
        &self,
        client: Traffic,
        server: Traffic,
    ) -> Result<(OkmBlock, OkmBlock), TransportError> {
        let missing = || TransportError::internal("TLS secret missing from the key log");
        let log = self.secret_log.as_ref().ok_or_else(missing)?;
        let (c, s) = (
            log.get(client).ok_or_else(missing)?,
            log.get(server).ok_or_else(missing)?,
        );
        Ok(if self.client_origin.is_some() {
            (c, s)
        } else {
            (s, c)
        })
    }

    /// rustls's key change with the keys derived for `packet_version` when it is not
    /// rustls's own version (RFC 9369 §3.3.2 labels).
    fn for_packet_version(
        &self,
        change: rustls::quic::KeyChange,
    ) -> Result<KeyChange, TransportError> {
        use rustls::quic::KeyChange as Rustls;
        let rederive = self.packet_version != self.version;
        let suite = || {
            self.cipher_suite()
                .and_then(|s| s.tls13())
                .ok_or_else(|| TransportError::internal("no TLS 1.3 suite negotiated"))
        };
        let no_quic = || TransportError::internal("cipher suite unusable with QUIC");
        Ok(match change {
            Rustls::Handshake { keys } if !rederive => KeyChange::Handshake { keys },
            Rustls::OneRtt { keys, next } if !rederive => KeyChange::OneRtt {
                keys,
                next: NextSecrets::Tls(next),
            },
            Rustls::Handshake { .. } => {
                let (l, r) =
                    self.logged_pair(Traffic::ClientHandshake, Traffic::ServerHandshake)?;
                let keys =
                    version_keys::keys(suite()?, self.packet_version, l.as_ref(), r.as_ref())
                        .ok_or_else(no_quic)?;
                KeyChange::Handshake { keys }
            }
            Rustls::OneRtt { .. } => {
                let (l, r) = self.logged_pair(Traffic::Client0, Traffic::Server0)?;
                let (keys, next) =
                    version_keys::one_rtt(suite()?, self.packet_version, l.as_ref(), r.as_ref())
                        .ok_or_else(no_quic)?;
                KeyChange::OneRtt {
                    keys,
                    next: NextSecrets::Version(next),
                }
            }
        })
    }

    /// The negotiated cipher suite, once the handshake picked one.
    pub fn cipher_suite(&self) -> Option<rustls::SupportedCipherSuite> {
        match &self.conn {
            Tls::Live(c) => c.negotiated_cipher_suite(),
            Tls::Released(f) => f.cipher_suite,
        }
    }

    /// Feeds handshake bytes received in CRYPTO frames of the current read level.
    ///
    /// Errors map to CRYPTO_ERROR with the alert rustls chose (RFC 9001 §4.8); failures
    /// without an alert are handshake_failure (40) when caused by the peer and
    /// INTERNAL_ERROR when local (e.g. no random generator).
    pub fn read_handshake(&mut self, data: &[u8], now: Instant) -> Result<(), TransportError> {
        let conn = match &mut self.conn {
            Tls::Live(c) => c,
            // rustls's server rejects every post-handshake message with this alert.
            Tls::Released(_) => {
                return Err(TransportError::new(
                    TransportErrorCode::crypto(ALERT_UNEXPECTED_MESSAGE),
                    "TLS: post-handshake message from the client",
                ))
            }
        };
        let rng = &mut self.rng;
        // RFC 9369 §5: tickets are looked up (server) and kept (client) under the version
        // of the connection's packets, the negotiated one after an upgrade.
        let version = self.packet_version;
        let read = || with_quic_version(version, || conn.read_hs(data));
        match with_time(now, || with_rng(rng, read)) {
            Ok(()) => Ok(()),
            Err(e) => Err(match conn.alert() {
                Some(alert) => TransportError::new(
                    TransportErrorCode::crypto(u8::from(alert)),
                    format!("TLS: {e}"),
                ),
                None => peer_or_local_error(e),
            }),
        }
    }

    /// Appends handshake bytes to send at the current write level; returns new keys when
    /// the write level changes (the bytes appended before the change belong to the old
    /// level: call again until it appends nothing and returns `None`).
    ///
    /// On `KeyChange::OneRtt`, `next` is the caller's to keep for key updates (the
    /// session keeps no copy, except in this module's tests). Nothing after
    /// [`TlsSession::release`]. Fails (an internal error) only when keys for another
    /// version cannot be derived.
    pub fn write_handshake(
        &mut self,
        out: &mut Vec<u8>,
        now: Instant,
    ) -> Result<Option<KeyChange>, TransportError> {
        let Tls::Live(conn) = &mut self.conn else {
            return Ok(None);
        };
        let rng = &mut self.rng;
        let version = self.packet_version;
        let write = || with_quic_version(version, || conn.write_hs(out));
        let Some(change) = with_time(now, || with_rng(rng, write)) else {
            return Ok(None);
        };
        if matches!(change, rustls::quic::KeyChange::Handshake { .. }) {
            self.handshake_keys_seen = true;
        }
        let change = match self.for_packet_version(change)? {
            KeyChange::Handshake { keys } => KeyChange::Handshake {
                keys: checksum_keys::keys(self.protection, keys),
            },
            KeyChange::OneRtt { keys, next } => KeyChange::OneRtt {
                keys: checksum_keys::keys(self.protection, keys),
                next: next.with_packet_protection(self.protection),
            },
        };
        #[cfg(test)]
        if let KeyChange::OneRtt { next, .. } = &change {
            self.next_secrets = Some(next.clone());
        }
        Ok(Some(change))
    }

    /// The 0-RTT keys (RFC 9001 §4.6.1): the client's to send with, from construction,
    /// when resuming a ticket that allows early data with early data enabled; the
    /// server's to read with, after it accepted the ClientHello's early data. `None`
    /// otherwise (and on the server once it rejected).
    pub fn zero_rtt_keys(&self) -> Option<DirectionalKeys> {
        match &self.conn {
            Tls::Live(c) => {
                (c.zero_rtt_keys()).map(|k| checksum_keys::directional(self.protection, k))
            }
            Tls::Released(_) => None,
        }
    }

    /// Client: whether the server accepted 0-RTT (its EncryptedExtensions carried
    /// early_data, RFC 9001 §4.6.2). Meaningful once the handshake completed.
    pub fn is_early_data_accepted(&self) -> bool {
        match &self.conn {
            Tls::Live(c) => match &**c {
                rustls::quic::Connection::Client(c) => c.is_early_data_accepted(),
                rustls::quic::Connection::Server(_) => false,
            },
            Tls::Released(_) => false,
        }
    }

    /// Client: the server transport parameters remembered with the ticket being
    /// resumed (RFC 9000 §7.4.1), if any.
    pub fn remembered_params(&self) -> Option<&[u8]> {
        self.remembered_params.as_deref()
    }

    /// Server: whether the client resumed a session (a PSK handshake, no certificate).
    /// Client: the same, known once the ServerHello was read.
    pub fn is_resumed(&self) -> bool {
        match &self.conn {
            Tls::Live(c) => c.handshake_kind() == Some(rustls::HandshakeKind::Resumed),
            Tls::Released(f) => f.resumed,
        }
    }

    /// The packet keys of the next 1-RTT key phase (RFC 9001 §6), `None` before the
    /// 1-RTT keys were handed out by [`TlsSession::write_handshake`].
    ///
    /// Each call advances the secrets one phase: the first call gives the keys for key
    /// phase 1, the second for phase 2, and so on; header protection keys never change.
    /// Tests only: connections keep the secrets in their key-update state.
    #[cfg(test)]
    pub fn next_1rtt_keys(&mut self) -> Option<PacketKeySet> {
        self.next_secrets
            .as_mut()
            .map(NextSecrets::next_packet_keys)
    }

    pub fn is_handshaking(&self) -> bool {
        match &self.conn {
            Tls::Live(c) => c.is_handshaking(),
            Tls::Released(_) => false,
        }
    }

    /// The peer's encoded transport parameters, once received. A resuming client's
    /// rustls reports the remembered ones until the server's EncryptedExtensions (read
    /// after the Handshake keys) replace them; those are not the peer's and give `None`.
    pub fn peer_transport_parameters(&self) -> Option<&[u8]> {
        let params = match &self.conn {
            Tls::Live(c) => c.quic_transport_parameters()?,
            Tls::Released(f) => f.peer_params.as_deref()?,
        };
        match &self.remembered_params {
            Some(old) if !self.handshake_keys_seen || params == old.as_slice() => None,
            _ => Some(params),
        }
    }

    /// The negotiated ALPN protocol.
    pub fn alpn(&self) -> Option<&[u8]> {
        match &self.conn {
            Tls::Live(c) => c.alpn_protocol(),
            Tls::Released(f) => f.alpn.as_deref(),
        }
    }

    /// The server name the client asked for (server side).
    #[cfg(test)]
    pub fn server_name(&self) -> Option<&str> {
        match &self.conn {
            Tls::Live(c) => match &**c {
                rustls::quic::Connection::Server(server) => server.server_name(),
                rustls::quic::Connection::Client(_) => None,
            },
            Tls::Released(f) => f.server_name.as_deref(),
        }
    }

    /// Server: drops rustls's state once it has nothing more to say, keeping the
    /// answers the accessors above give. Does nothing (returns `false`) on a client
    /// (resumption tickets and early-data answers keep coming there), during the
    /// handshake, or while TLS output is still unwritten.
    ///
    /// Safe because, on a QUIC server after the handshake, rustls only rejects
    /// post-handshake messages (there are none in QUIC: RFC 9001 §6 replaces
    /// KeyUpdate, and [`TlsSession::read_handshake`] keeps rejecting them with the
    /// same alert) and writes nothing more once its session tickets were taken; key
    /// updates use the secrets the connection already holds (RFC 9001 §6).
    pub fn release(&mut self) -> bool {
        let Tls::Live(live) = &self.conn else {
            return false;
        };
        let rustls::quic::Connection::Server(c) = &**live else {
            return false;
        };
        if c.is_handshaking() || c.wants_write() {
            return false;
        }
        let finished = Finished {
            alpn: c.alpn_protocol().map(Box::from),
            #[cfg(test)]
            server_name: c.server_name().map(Box::from),
            cipher_suite: c.negotiated_cipher_suite(),
            resumed: c.handshake_kind() == Some(rustls::HandshakeKind::Resumed),
            peer_params: c.quic_transport_parameters().map(Box::from),
        };
        self.conn = Tls::Released(Box::new(finished));
        true
    }
}

/// Whether a rustls error without an alert is our own failure rather than the peer's.
fn is_local(e: &rustls::Error) -> bool {
    matches!(
        e,
        rustls::Error::FailedToGetRandomBytes
            | rustls::Error::EncryptError
            | rustls::Error::General(_)
            | rustls::Error::Other(_)
            | rustls::Error::BadMaxFragmentSize
            | rustls::Error::InconsistentKeys(_)
    )
}

fn peer_or_local_error(e: rustls::Error) -> TransportError {
    if is_local(&e) {
        local_error("TLS", e)
    } else {
        TransportError::new(
            TransportErrorCode::crypto(ALERT_HANDSHAKE_FAILURE),
            format!("TLS: {e}"),
        )
    }
}

fn local_error(what: &str, e: rustls::Error) -> TransportError {
    TransportError::internal(format!("{what}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::cert::MemoryKeyLog;
    use crate::crypto::cert::{client_config, self_signed, server_config, ServerVerification};
    use crate::crypto::protect::{decrypt_payload, seal, unprotect_header};

    const ALPN: &[u8] = b"quiclab";

    fn pair(seed: u64, roots_seed: u64) -> (TlsSession, TlsSession, Arc<MemoryKeyLog>) {
        let names = vec!["localhost".to_string()];
        let id = self_signed(&names, seed, 0);
        let roots = self_signed(&names, roots_seed, 0).chain;
        let log = Arc::new(MemoryKeyLog::default());
        let cc = client_config(
            ServerVerification::Roots(roots),
            &[ALPN.to_vec()],
            Some(log.clone()),
        );
        let sc = server_config(id, &[ALPN.to_vec()], None).unwrap();
        let client = TlsSession::client(
            cc,
            "localhost",
            b"client tp".to_vec(),
            crate::wire::VERSION_1,
            false,
            DetRng::new(seed + 100),
            Instant::ZERO,
        )
        .unwrap();
        let server = TlsSession::server(
            sc,
            b"server tp".to_vec(),
            crate::wire::VERSION_1,
            DetRng::new(seed + 200),
        )
        .unwrap();
        (client, server, log)
    }

    /// What one side sent, per level (0 Initial, 1 Handshake, 2 1-RTT), in order.
    #[derive(Default)]
    struct Flights {
        bytes: [Vec<u8>; 3],
        one_rtt: Option<Keys>,
    }

    /// Drains `from`'s pending output into per-level buffers, following key changes.
    fn pump(
        from: &mut TlsSession,
        level: &mut usize,
        flights: &mut Flights,
    ) -> Vec<(usize, Vec<u8>)> {
        let mut sent = Vec::new();
        loop {
            let mut buf = Vec::new();
            let change = from.write_handshake(&mut buf, Instant::ZERO).unwrap();
            if !buf.is_empty() {
                flights.bytes[*level].extend_from_slice(&buf);
                sent.push((*level, buf));
            }
            match change {
                Some(KeyChange::Handshake { .. }) => *level = 1,
                Some(KeyChange::OneRtt { keys, .. }) => {
                    *level = 2;
                    flights.one_rtt = Some(keys);
                }
                None => return sent,
            }
        }
    }

    /// Runs the handshake in memory; returns both sides' flights or the first error.
    fn handshake(
        client: &mut TlsSession,
        server: &mut TlsSession,
    ) -> Result<(Flights, Flights), TransportError> {
        let (mut cf, mut sf) = (Flights::default(), Flights::default());
        let (mut cl, mut sl) = (0, 0);
        for _ in 0..10 {
            for (_, data) in pump(client, &mut cl, &mut cf) {
                server.read_handshake(&data, Instant::ZERO)?;
            }
            for (_, data) in pump(server, &mut sl, &mut sf) {
                client.read_handshake(&data, Instant::ZERO)?;
            }
            if !client.is_handshaking() && !server.is_handshaking() {
                pump(client, &mut cl, &mut cf);
                return Ok((cf, sf));
            }
        }
        panic!("handshake did not finish");
    }

    #[test]
    fn handshake_alpn_transport_params_and_1rtt_keys() {
        let (mut client, mut server, log) = pair(1, 1);
        let (cf, sf) = handshake(&mut client, &mut server).unwrap();
        assert_eq!(client.alpn(), Some(ALPN));
        assert_eq!(server.alpn(), Some(ALPN));
        assert_eq!(client.peer_transport_parameters(), Some(&b"server tp"[..]));
        assert_eq!(server.peer_transport_parameters(), Some(&b"client tp"[..]));
        assert_eq!(server.server_name(), Some("localhost"));
        assert_eq!(client.server_name(), None);
        assert!(!log.lines.lock().unwrap().is_empty());

        // 1-RTT keys agree, and so do the keys of the next phases.
        let (ck, sk) = (cf.one_rtt.unwrap(), sf.one_rtt.unwrap());
        check_keys(
            &*ck.local.packet,
            &*ck.local.header,
            &*sk.remote.packet,
            &*sk.remote.header,
        );
        check_keys(
            &*sk.local.packet,
            &*sk.local.header,
            &*ck.remote.packet,
            &*ck.remote.header,
        );
        for _ in 0..2 {
            let c = client.next_1rtt_keys().unwrap();
            let s = server.next_1rtt_keys().unwrap();
            check_keys(&*c.local, &*ck.local.header, &*s.remote, &*sk.remote.header);
            check_keys(&*s.local, &*sk.local.header, &*c.remote, &*ck.remote.header);
            // A new phase's key is not the old one.
            let mut p = protected(&*c.local, &*ck.local.header);
            unprotect_header(&*sk.remote.header, &mut p, 1).unwrap();
            assert!(decrypt_payload(&*sk.remote.packet, &mut p, 2, 9).is_err());
        }
    }

    fn protected(
        pk: &dyn rustls::quic::PacketKey,
        hk: &dyn rustls::quic::HeaderProtectionKey,
    ) -> Vec<u8> {
        let mut p = vec![0x40, 9];
        p.extend_from_slice(&[0x01; 30]);
        p.extend_from_slice(&[0; 16]);
        seal(pk, hk, &mut p, 1, 9).unwrap();
        p
    }

    fn check_keys(
        pk: &dyn rustls::quic::PacketKey,
        hk: &dyn rustls::quic::HeaderProtectionKey,
        rpk: &dyn rustls::quic::PacketKey,
        rhk: &dyn rustls::quic::HeaderProtectionKey,
    ) {
        let mut p = protected(pk, hk);
        let h = unprotect_header(rhk, &mut p, 1).unwrap();
        assert_eq!(h.truncated_pn, 9);
        let r = decrypt_payload(rpk, &mut p, 2, 9).unwrap();
        assert_eq!(&p[r], &[0x01; 30]);
    }

    #[test]
    fn same_seeds_same_bytes() {
        let run = |seed| {
            let (mut c, mut s, log) = pair(seed, seed);
            let (cf, sf) = handshake(&mut c, &mut s).unwrap();
            let lines = log.lines.lock().unwrap().clone();
            (cf.bytes, sf.bytes, lines)
        };
        let (c1, s1, l1) = run(7);
        let (c2, s2, l2) = run(7);
        assert!(!c1[0].is_empty() && !s1[1].is_empty());
        assert_eq!(c1[0], c2[0], "ClientHello");
        assert_eq!(s1, s2, "server flights");
        assert_eq!(c1, c2, "client flights");
        assert_eq!(l1, l2, "key log");
        let (c3, s3, _) = run(8);
        assert_ne!(c1[0], c3[0]);
        assert_ne!(s1, s3);
    }

    #[test]
    fn wrong_root_is_a_crypto_error() {
        let (mut client, mut server, _) = pair(1, 2);
        let err = handshake(&mut client, &mut server).err().unwrap();
        // bad_certificate (42) or unknown_ca (48): a CRYPTO_ERROR either way.
        assert!((0x100..=0x1ff).contains(&err.code.0), "{err:?}");
        assert_ne!(
            err.code,
            TransportErrorCode::crypto(ALERT_HANDSHAKE_FAILURE)
        );
    }

    #[test]
    fn insecure_accepts_any_cert_and_garbage_is_a_crypto_error() {
        let id = self_signed(&["example.org".to_string()], 3, 0);
        let cc = client_config(ServerVerification::Insecure, &[ALPN.to_vec()], None);
        let sc = server_config(id, &[ALPN.to_vec()], None).unwrap();
        let mut c = TlsSession::client(
            cc,
            "other.name",
            vec![],
            1,
            false,
            DetRng::new(1),
            Instant::ZERO,
        )
        .unwrap();
        let mut s = TlsSession::server(sc.clone(), vec![], 1, DetRng::new(2)).unwrap();
        handshake(&mut c, &mut s).unwrap();

        let mut s = TlsSession::server(sc, vec![], 1, DetRng::new(2)).unwrap();
        let err = s
            .read_handshake(&[0x01, 0, 0, 3, 1, 2, 3], Instant::ZERO)
            .unwrap_err();
        assert!((0x100..=0x1ff).contains(&err.code.0), "{err:?}");
    }
}
