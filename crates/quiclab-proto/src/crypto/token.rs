//! Address-validation tokens (RFC 9000 §8.1.2 Retry tokens, §8.1.3 NEW_TOKEN tokens;
//! §21.3 on what makes them safe).
//!
//! A token is only ever read by the server that made it, so its format is ours:
//! `nonce (12) || AES-256-GCM(plaintext) || tag (16)`, with the plaintext
//!
//! ```text
//! kind (1) | expires_at (8, ns of the driver's clock) | address | [ODCID len (1), ODCID]
//! address = family (1: 4 or 6) | IP (4 or 16) | port (2; 0 in NEW_TOKEN tokens)
//! ```
//!
//! RFC 9369 §5: a token is specific to the QUIC version of the connection that issued
//! it. The version is the AEAD's associated data (none for version 1, so v1 tokens are
//! what they were; the 4-byte version otherwise): a token opened for another version
//! does not authenticate, and the token keeps its length.
//!
//! The AEAD makes a token unforgeable and opaque (§8.1.4: "it MUST be difficult to
//! guess"); the address inside binds it to the client, the expiry limits replay
//! (§8.1.3 "tokens SHOULD have an expiration time"). NEW_TOKEN tokens leave the port
//! out, since a client's port changes between connections behind a NAT (§8.1.3).
//!
//! Determinism: the key and every nonce come from a seeded [`DetRng`] and expiry is
//! checked against the `now` the caller passes: the core reads no clock.

use crate::rng::DetRng;
use crate::time::Instant;
use crate::wire::{ConnectionId, VERSION_1, VERSION_2};
use ring::aead;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

const NONCE_LEN: usize = 12;
const KIND_RETRY: u8 = 0;
const KIND_NEW_TOKEN: u8 = 1;
/// The longest plaintext: kind, expiry, IPv6 address and port, ODCID of 20 bytes.
const MAX_PLAINTEXT: usize = 1 + 8 + 1 + 16 + 2 + 1 + 20;
/// The longest token we make (anything longer is not ours: dropped unread).
pub const MAX_TOKEN_LEN: usize = NONCE_LEN + MAX_PLAINTEXT + 16;

/// What a token we issued says, once it authenticated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenKind {
    /// From a Retry: the client's original Destination Connection ID (RFC 9000 §7.3).
    Retry { original_dcid: ConnectionId },
    /// From a NEW_TOKEN frame.
    NewToken,
}

/// Why a token is not accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// Not made with our key (another server's, corrupted, or forged): the server
    /// treats the Initial as carrying no token (RFC 9000 §8.1.3).
    #[error("token does not authenticate")]
    Unreadable,
    /// Ours, but issued to another client address. `retry`: a Retry token (the
    /// server then closes with INVALID_TOKEN, RFC 9000 §8.1.2), else a NEW_TOKEN one.
    #[error("token issued to another address")]
    WrongAddress { retry: bool },
    /// Ours, but past its expiry (`retry` as for `WrongAddress`).
    #[error("token expired")]
    Expired { retry: bool },
    /// Ours, but issued on a connection of another QUIC version (RFC 9369 §5; `retry`
    /// as for `WrongAddress`).
    #[error("token issued in another QUIC version")]
    WrongVersion { retry: bool },
}

impl TokenError {
    /// Whether this was one of our Retry tokens (RFC 9000 §8.1.2: such a client will
    /// not accept another Retry, so the server closes with INVALID_TOKEN).
    pub fn is_invalid_retry_token(self) -> bool {
        matches!(
            self,
            TokenError::WrongAddress { retry: true }
                | TokenError::Expired { retry: true }
                | TokenError::WrongVersion { retry: true }
        )
    }
}

/// The server's token key. See the module docs for the format.
pub struct TokenKey {
    key: aead::LessSafeKey,
    rng: DetRng,
}

impl TokenKey {
    /// A key drawn from `rng`, which also supplies the nonces.
    pub fn new(mut rng: DetRng) -> Self {
        let mut k = [0u8; 32];
        rng.fill(&mut k);
        let key = aead::LessSafeKey::new(
            aead::UnboundKey::new(&aead::AES_256_GCM, &k).expect("a 32-byte AES-256 key"),
        );
        TokenKey { key, rng }
    }

    /// A Retry token (RFC 9000 §8.1.2) for the client at `client` whose first Initial
    /// (of QUIC `version`) went to `original_dcid`, valid until `expires_at`.
    pub fn retry_token(
        &mut self,
        version: u32,
        client: SocketAddr,
        original_dcid: &ConnectionId,
        expires_at: Instant,
    ) -> Vec<u8> {
        let mut plain = plaintext_head(KIND_RETRY, expires_at, client.ip(), client.port());
        plain.push(original_dcid.len() as u8); // at most 20
        plain.extend_from_slice(original_dcid.as_bytes());
        self.seal(version, plain)
    }

    /// A NEW_TOKEN token (RFC 9000 §8.1.3) for a client at IP `client`, sent on a
    /// connection of QUIC `version` (RFC 9369 §5: the negotiated one after an upgrade).
    pub fn new_token(&mut self, version: u32, client: IpAddr, expires_at: Instant) -> Vec<u8> {
        self.seal(
            version,
            plaintext_head(KIND_NEW_TOKEN, expires_at, client, 0),
        )
    }

    fn seal(&mut self, version: u32, mut plain: Vec<u8>) -> Vec<u8> {
        let mut nonce = [0u8; NONCE_LEN];
        self.rng.fill(&mut nonce);
        let tag = self
            .key
            .seal_in_place_separate_tag(
                aead::Nonce::assume_unique_for_key(nonce),
                aead::Aad::from(version_aad(version).as_slice()),
                &mut plain,
            )
            .expect("AES-GCM seals a short plaintext");
        let mut out = Vec::with_capacity(NONCE_LEN + plain.len() + tag.as_ref().len());
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&plain);
        out.extend_from_slice(tag.as_ref());
        out
    }

    /// Checks a token from a client at `client` at time `now`, in an Initial of QUIC
    /// `version` (RFC 9369 §5: the version the client started the connection in).
    pub fn open(
        &self,
        token: &[u8],
        version: u32,
        client: SocketAddr,
        now: Instant,
    ) -> Result<TokenKind, TokenError> {
        if token.len() < NONCE_LEN + 16 || token.len() > MAX_TOKEN_LEN {
            return Err(TokenError::Unreadable);
        }
        let Some(plain) = self.decrypt(token, version) else {
            // RFC 9369 §5: ours but from another version is as invalid as expired (a
            // Retry token then gets INVALID_TOKEN); anything else is not ours.
            let other = [VERSION_1, VERSION_2]
                .into_iter()
                .filter(|&v| v != version)
                .find_map(|v| self.decrypt(token, v));
            return Err(match other.as_deref().and_then(Plain::parse) {
                Some(p) => TokenError::WrongVersion {
                    retry: p.kind == KIND_RETRY,
                },
                None => TokenError::Unreadable,
            });
        };
        // Authenticated: we wrote it, so a parse failure means a bug, reported as
        // unreadable rather than trusted.
        let parsed = Plain::parse(&plain).ok_or(TokenError::Unreadable)?;
        let retry = parsed.kind == KIND_RETRY;
        let port_matches = !retry || parsed.port == client.port();
        if parsed.ip != client.ip() || !port_matches {
            return Err(TokenError::WrongAddress { retry });
        }
        if now > parsed.expires_at {
            return Err(TokenError::Expired { retry });
        }
        match parsed.kind {
            KIND_RETRY => Ok(TokenKind::Retry {
                original_dcid: parsed.odcid.ok_or(TokenError::Unreadable)?,
            }),
            _ => Ok(TokenKind::NewToken),
        }
    }
}

impl TokenKey {
    /// The plaintext of `token` if it authenticates as sealed for `version`.
    fn decrypt(&self, token: &[u8], version: u32) -> Option<Vec<u8>> {
        let (nonce, sealed) = token.split_at(NONCE_LEN);
        let mut nonce_bytes = [0u8; NONCE_LEN];
        nonce_bytes.copy_from_slice(nonce);
        let mut buf = sealed.to_vec();
        let len = self
            .key
            .open_in_place(
                aead::Nonce::assume_unique_for_key(nonce_bytes),
                aead::Aad::from(version_aad(version).as_slice()),
                &mut buf,
            )
            .ok()?
            .len();
        buf.truncate(len);
        Some(buf)
    }
}

/// RFC 9369 §5: the associated data binding a token to its QUIC version; empty for
/// version 1 (the format before versions were bound, so v1 tokens are unchanged).
fn version_aad(version: u32) -> Vec<u8> {
    if version == VERSION_1 {
        Vec::new()
    } else {
        version.to_be_bytes().to_vec()
    }
}

/// `now + lifetime`, for token expiry.
pub fn expiry(now: Instant, lifetime_ms: u64) -> Instant {
    now.saturating_add(Duration::from_millis(lifetime_ms))
}

fn plaintext_head(kind: u8, expires_at: Instant, ip: IpAddr, port: u16) -> Vec<u8> {
    let mut p = Vec::with_capacity(MAX_PLAINTEXT);
    p.push(kind);
    p.extend_from_slice(&expires_at.as_nanos().to_be_bytes());
    match ip {
        IpAddr::V4(a) => {
            p.push(4);
            p.extend_from_slice(&a.octets());
        }
        IpAddr::V6(a) => {
            p.push(6);
            p.extend_from_slice(&a.octets());
        }
    }
    p.extend_from_slice(&port.to_be_bytes());
    p
}

/// A decrypted plaintext.
struct Plain {
    kind: u8,
    expires_at: Instant,
    ip: IpAddr,
    port: u16,
    odcid: Option<ConnectionId>,
}

impl Plain {
    fn parse(p: &[u8]) -> Option<Plain> {
        let (&kind, rest) = p.split_first()?;
        let (exp, rest) = rest.split_at_checked(8)?;
        let expires_at = Instant::from_nanos(u64::from_be_bytes(exp.try_into().ok()?));
        let (&family, rest) = rest.split_first()?;
        let (ip, rest) = match family {
            4 => {
                let (a, rest) = rest.split_at_checked(4)?;
                (IpAddr::from(<[u8; 4]>::try_from(a).ok()?), rest)
            }
            6 => {
                let (a, rest) = rest.split_at_checked(16)?;
                (IpAddr::from(<[u8; 16]>::try_from(a).ok()?), rest)
            }
            _ => return None,
        };
        let (port, rest) = rest.split_at_checked(2)?;
        let port = u16::from_be_bytes([port[0], port[1]]);
        let odcid = match kind {
            KIND_RETRY => {
                let (&len, rest) = rest.split_first()?;
                let (cid, rest) = rest.split_at_checked(usize::from(len))?;
                if !rest.is_empty() {
                    return None;
                }
                Some(ConnectionId::new(cid)?)
            }
            KIND_NEW_TOKEN if rest.is_empty() => None,
            _ => return None,
        };
        Some(Plain {
            kind,
            expires_at,
            ip,
            port,
            odcid,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(seed: u64) -> TokenKey {
        TokenKey::new(DetRng::new(seed))
    }
    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }
    fn odcid() -> ConnectionId {
        ConnectionId::new(&[7; 8]).unwrap()
    }

    #[test]
    fn retry_token_round_trip_and_binding() {
        let mut k = key(1);
        let client = addr("10.0.0.1:4000");
        let t = k.retry_token(VERSION_1, client, &odcid(), Instant::from_millis(100));
        assert!(t.len() <= MAX_TOKEN_LEN);
        let ok = k.open(&t, VERSION_1, client, Instant::from_millis(100));
        assert_eq!(
            ok,
            Ok(TokenKind::Retry {
                original_dcid: odcid()
            })
        );
        // RFC 9000 §8.1.2: bound to the address, port included.
        let other_port = addr("10.0.0.1:4001");
        let other_ip = addr("10.0.0.2:4000");
        let at = Instant::from_millis(50);
        let wrong = Err(TokenError::WrongAddress { retry: true });
        assert_eq!(k.open(&t, VERSION_1, other_port, at), wrong);
        assert_eq!(k.open(&t, VERSION_1, other_ip, at), wrong);
        // Expiry uses the caller's clock.
        let late = Instant::from_millis(101);
        let expired = k.open(&t, VERSION_1, client, late);
        assert_eq!(expired, Err(TokenError::Expired { retry: true }));
        assert!(expired.unwrap_err().is_invalid_retry_token());
    }

    #[test]
    fn tampered_or_foreign_tokens_do_not_open() {
        let mut k = key(2);
        let client = addr("[2001:db8::1]:443");
        let t = k.retry_token(VERSION_1, client, &odcid(), Instant::from_millis(100));
        let at = Instant::ZERO;
        for i in 0..t.len() {
            let mut bad = t.clone();
            bad[i] ^= 0x01;
            assert_eq!(
                k.open(&bad, VERSION_1, client, at),
                Err(TokenError::Unreadable),
                "{i}"
            );
        }
        assert_eq!(
            k.open(&t[..t.len() - 1], VERSION_1, client, at),
            Err(TokenError::Unreadable)
        );
        assert_eq!(
            k.open(&[], VERSION_1, client, at),
            Err(TokenError::Unreadable)
        );
        // Another server's key.
        assert_eq!(
            key(3).open(&t, VERSION_1, client, at),
            Err(TokenError::Unreadable)
        );
    }

    #[test]
    fn new_token_ignores_the_port_and_tokens_differ() {
        let mut k = key(4);
        let ip: IpAddr = "192.0.2.9".parse().unwrap();
        let a = k.new_token(VERSION_1, ip, Instant::from_millis(10));
        let b = k.new_token(VERSION_1, ip, Instant::from_millis(10));
        assert_ne!(a, b, "fresh nonces make tokens unlinkable");
        let at = Instant::from_millis(10);
        assert_eq!(
            k.open(&a, VERSION_1, addr("192.0.2.9:1"), at),
            Ok(TokenKind::NewToken)
        );
        assert_eq!(
            k.open(&a, VERSION_1, addr("192.0.2.8:1"), at),
            Err(TokenError::WrongAddress { retry: false })
        );
        let late = k.open(&a, VERSION_1, addr("192.0.2.9:1"), Instant::from_millis(11));
        assert_eq!(late, Err(TokenError::Expired { retry: false }));
        assert!(!late.unwrap_err().is_invalid_retry_token());
    }

    #[test]
    fn tokens_are_bound_to_their_quic_version() {
        // RFC 9369 §5: a token from a v1 connection does not validate a v2 one, nor
        // the reverse; both are as long as before versions were bound.
        let mut k = key(5);
        let client = addr("192.0.2.9:7");
        let ip = client.ip();
        let at = Instant::from_millis(1);
        let exp = Instant::from_millis(10);
        for (mine, other) in [(VERSION_1, VERSION_2), (VERSION_2, VERSION_1)] {
            let nt = k.new_token(mine, ip, exp);
            assert_eq!(k.open(&nt, mine, client, at), Ok(TokenKind::NewToken));
            let wrong = k.open(&nt, other, client, at);
            assert_eq!(wrong, Err(TokenError::WrongVersion { retry: false }));
            assert!(!wrong.unwrap_err().is_invalid_retry_token());
            let rt = k.retry_token(mine, client, &odcid(), exp);
            assert!(k.open(&rt, mine, client, at).is_ok());
            let wrong = k.open(&rt, other, client, at);
            assert_eq!(wrong, Err(TokenError::WrongVersion { retry: true }));
            assert!(wrong.unwrap_err().is_invalid_retry_token());
            // Opened for any other version, it is ours but not that version's.
            let draft = k.open(&nt, 0xff00_001d, client, at);
            assert_eq!(draft, Err(TokenError::WrongVersion { retry: false }));
        }
        let v1 = k.new_token(VERSION_1, ip, exp);
        let v2 = k.new_token(VERSION_2, ip, exp);
        assert_eq!(v1.len(), v2.len());
    }

    #[test]
    fn v1_tokens_keep_their_bytes() {
        // A v1 token is sealed with no associated data, as before RFC 9369 §5 binding:
        // the same key and nonce give the same bytes as an AEAD over the bare plaintext.
        let mut k = key(6);
        let ip: IpAddr = "192.0.2.9".parse().unwrap();
        let t = k.new_token(VERSION_1, ip, Instant::from_millis(10));
        let (nonce, sealed) = t.split_at(NONCE_LEN);
        let mut buf = sealed.to_vec();
        let plain = k
            .key
            .open_in_place(
                aead::Nonce::assume_unique_for_key(nonce.try_into().unwrap()),
                aead::Aad::empty(),
                &mut buf,
            )
            .unwrap();
        assert_eq!(
            plain,
            plaintext_head(KIND_NEW_TOKEN, Instant::from_millis(10), ip, 0)
        );
    }
}
