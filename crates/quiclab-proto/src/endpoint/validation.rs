//! Address validation in the endpoint (RFC 9000 §8.1): the server's decision on a new
//! client Initial (accept it, answer with Retry, or close with INVALID_TOKEN), the
//! stateless Retry and close packets it sends, and the client's store of NEW_TOKEN
//! tokens for its next connections.
//!
//! Tokens themselves (format, key, expiry) are in [`crate::crypto::token`]; the
//! connection's side (a client's reaction to Retry, the transport parameters that
//! authenticate it, sending NEW_TOKEN) in `connection::retry` and `connection::new_token`.

use super::ConnectionHandle;
use crate::config::{AdmissionConfig, RetryMode};
use crate::connection::ServerValidation;
use crate::crypto::initial::initial_keys;
use crate::crypto::protect::seal;
use crate::crypto::retry::integrity_tag;
use crate::crypto::token::{expiry, TokenKey, TokenKind};
use crate::crypto::TAG_LEN;
use crate::error::TransportErrorCode;
use crate::rng::DetRng;
use crate::time::Instant;
use crate::wire::header::{write_long_header, write_retry_without_tag};
use crate::wire::{varint, ConnectionCloseFrame, ConnectionId, Frame, PacketType, Side};
use std::collections::BTreeMap;
use std::net::SocketAddr;

/// NEW_TOKEN tokens a client keeps, over all server names and versions (beyond this,
/// tokens for new names and versions are not kept).
const MAX_STORED_TOKENS: usize = 256;

/// A new client Initial, as the server's admission sees it.
pub(super) struct NewInitial<'a> {
    pub version: u32,
    pub dcid: ConnectionId,
    pub scid: ConnectionId,
    pub token: &'a [u8],
    /// Connections mid-handshake now (the load `retry = "auto"` looks at).
    pub handshaking: usize,
}

/// What to do with a new client Initial.
pub(super) enum Admission {
    /// Create the connection.
    Accept(ServerValidation),
    /// Send this datagram back and create nothing (a Retry, or a close).
    Respond(Vec<u8>),
}

/// The endpoint's token key and randomness (server), and its NEW_TOKEN store (client).
pub(super) struct AddressValidation {
    key: TokenKey,
    /// Connection IDs of Retry packets and close packets. Its own stream, so that
    /// Retry does not shift the connections' seeds.
    rng: DetRng,
    /// Client: the newest NEW_TOKEN token of each server name and QUIC version (RFC
    /// 9369 §5: a token serves only connections that start in its version).
    tokens: BTreeMap<(String, u32), Vec<u8>>,
    /// Client: the server name of each connection this endpoint started.
    names: BTreeMap<ConnectionHandle, String>,
}

impl AddressValidation {
    /// Key and randomness forked from a copy of the endpoint's generator, which itself
    /// is left untouched (every connection's seed stays what it was without tokens).
    pub fn new(endpoint_rng: &DetRng) -> Self {
        let mut rng = endpoint_rng.clone();
        AddressValidation {
            key: TokenKey::new(rng.fork("address validation token key")),
            rng: rng.fork("address validation"),
            tokens: BTreeMap::new(),
            names: BTreeMap::new(),
        }
    }

    /// RFC 9000 §8.1.2-8.1.3: decides on a client Initial from `remote` at `now`.
    pub fn admit(
        &mut self,
        config: &AdmissionConfig,
        cid_len: usize,
        now: Instant,
        remote: SocketAddr,
        initial: &NewInitial<'_>,
    ) -> Admission {
        let mut v = ServerValidation::unvalidated(initial.dcid);
        if !initial.token.is_empty() {
            // RFC 9369 §5: a token validates only a connection started in the version
            // that issued it.
            match self.key.open(initial.token, initial.version, remote, now) {
                Ok(TokenKind::Retry { original_dcid }) => {
                    // RFC 9000 §7.3: the client's first DCID, and our Retry's SCID,
                    // which the client now uses as its DCID.
                    v.original_dcid = original_dcid;
                    v.retry_scid = Some(initial.dcid);
                    v.validated = true;
                }
                Ok(TokenKind::NewToken) => v.validated = true,
                // §8.1.2: a client that used our Retry token will not take another
                // Retry: close at once rather than let it time out.
                Err(e) if e.is_invalid_retry_token() => {
                    return Admission::Respond(self.invalid_token_close(initial));
                }
                // §8.1.3: not ours, or a stale NEW_TOKEN token (or one of another
                // version, RFC 9369 §5): as if there were none.
                Err(_) => {}
            }
        }
        let retry = match config.retry {
            RetryMode::Off => false,
            RetryMode::Always => true,
            RetryMode::Auto => initial.handshaking >= config.retry_above,
        };
        if retry && !v.validated {
            let expires = expiry(now, config.retry_token_lifetime_ms);
            return Admission::Respond(self.retry(cid_len, remote, expires, initial));
        }
        if config.retry != RetryMode::Off {
            // RFC 9000 §8.1.3: a token for the client's next connection.
            let expires = expiry(now, config.new_token_lifetime_ms);
            v.new_token = Some(self.key.new_token(initial.version, remote.ip(), expires));
        }
        Admission::Accept(v)
    }

    /// RFC 9369 §5: the server moved the connection to the compatible `version`, so
    /// its NEW_TOKEN token is minted again for that version (tokens originate from the
    /// negotiated version, not the original one).
    pub fn on_upgrade(
        &mut self,
        config: &AdmissionConfig,
        v: &mut ServerValidation,
        version: u32,
        now: Instant,
        remote: SocketAddr,
    ) {
        if v.new_token.is_some() {
            let expires = expiry(now, config.new_token_lifetime_ms);
            v.new_token = Some(self.key.new_token(version, remote.ip(), expires));
        }
    }

    /// A Retry packet (RFC 9000 §17.2.5) with a fresh SCID and a token bound to the
    /// client's address and its original DCID, tagged per RFC 9001 §5.8.
    fn retry(
        &mut self,
        cid_len: usize,
        remote: SocketAddr,
        expires: Instant,
        initial: &NewInitial<'_>,
    ) -> Vec<u8> {
        // The client's next Initial carries this SCID as its DCID, which a server
        // requires to be at least 8 bytes (RFC 9000 §7.2).
        let scid = self.random_cid(cid_len.clamp(8, 20));
        let token = self
            .key
            .retry_token(initial.version, remote, &initial.dcid, expires);
        let mut pkt = Vec::with_capacity(64 + token.len());
        let unused = self.rng.next_u64() as u8;
        write_retry_without_tag(
            &mut pkt,
            initial.version,
            &initial.scid,
            &scid,
            &token,
            unused,
        );
        let tag = integrity_tag(initial.version, &initial.dcid, &pkt);
        pkt.extend_from_slice(&tag);
        pkt
    }

    /// RFC 9000 §8.1.2, §10.2.3: an Initial packet with CONNECTION_CLOSE
    /// (INVALID_TOKEN), protected with the Initial keys of the client's DCID, sent
    /// without creating a connection.
    fn invalid_token_close(&mut self, initial: &NewInitial<'_>) -> Vec<u8> {
        let keys = initial_keys(initial.version, &initial.dcid, Side::Server);
        let scid = self.random_cid(8);
        let mut pkt = Vec::with_capacity(64);
        let o = write_long_header(
            &mut pkt,
            PacketType::Initial,
            initial.version,
            &initial.scid,
            &scid,
            &[],
            0,
            1,
        );
        Frame::ConnectionClose(ConnectionCloseFrame {
            error_code: TransportErrorCode::INVALID_TOKEN.0,
            frame_type: Some(0),
            reason: b"invalid token",
        })
        .encode(&mut pkt);
        let len = pkt.len() + TAG_LEN - o.pn_offset;
        // A few dozen bytes: far below the 2-byte Length field's 16383.
        varint::patch_u14(&mut pkt, o.length_offset, len as u64);
        pkt.resize(pkt.len() + TAG_LEN, 0);
        seal(
            &*keys.local.packet,
            &*keys.local.header,
            &mut pkt,
            o.pn_offset,
            0,
        )
        .expect("the close frame leaves room for the header protection sample");
        pkt
    }

    fn random_cid(&mut self, len: usize) -> ConnectionId {
        let mut b = [0u8; 20];
        self.rng.fill(&mut b[..len]);
        ConnectionId::new(&b[..len]).expect("at most 20 bytes")
    }

    // ----- client side -----

    /// Client: connection `h` is to `server_name` and starts in QUIC `version`; returns
    /// a stored NEW_TOKEN token for it, taken out so it is used once (RFC 9000 §8.1.3:
    /// reusing a token lets observers link connections). RFC 9369 §5: only a token a
    /// connection of that version received; others stay for connections of theirs.
    pub fn on_connect(
        &mut self,
        h: ConnectionHandle,
        server_name: &str,
        version: u32,
    ) -> Option<Vec<u8>> {
        self.names.insert(h, server_name.to_string());
        self.tokens.remove(&(server_name.to_string(), version))
    }

    /// Client: connection `h`, now in QUIC `version`, received a NEW_TOKEN token; it
    /// replaces any older one of that server and version.
    pub fn on_new_token(&mut self, h: ConnectionHandle, version: u32, token: Vec<u8>) {
        let Some(name) = self.names.get(&h) else {
            return;
        };
        let key = (name.clone(), version);
        if self.tokens.len() >= MAX_STORED_TOKENS && !self.tokens.contains_key(&key) {
            return;
        }
        self.tokens.insert(key, token);
    }

    /// Connection `h` is gone.
    pub fn forget(&mut self, h: ConnectionHandle) {
        self.names.remove(&h);
    }

    /// Client: stores a token for `server_name` from a connection of QUIC `version`
    /// (from a file of an earlier run).
    pub fn insert_token(&mut self, server_name: &str, version: u32, token: Vec<u8>) {
        let key = (server_name.to_string(), version);
        if self.tokens.len() < MAX_STORED_TOKENS || self.tokens.contains_key(&key) {
            self.tokens.insert(key, token);
        }
    }

    /// Client: the stored tokens as (server name, version, token), in that order.
    pub fn tokens(&self) -> impl Iterator<Item = (&str, u32, &[u8])> {
        self.tokens
            .iter()
            .map(|((name, version), t)| (name.as_str(), *version, t.as_slice()))
    }
}
