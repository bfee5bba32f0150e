//! The knobs of versions, key updates and TLS: which QUIC versions a connection speaks
//! (RFC 9000 §6, RFC 9369, RFC 9368), when it updates its 1-RTT keys and the AEAD
//! limits it enforces (RFC 9001 §6), and the TLS cipher suite, key exchange group and
//! certificate type (RFC 9001 §5.3). Defaults reproduce a QUIC v1-only stack that never
//! initiates a key update, offers every cipher suite and uses X25519 with an Ed25519
//! certificate, so existing experiments are unchanged.

use super::ConfigError;
use crate::wire::{VERSION_1, VERSION_2};
use serde::{Deserialize, Serialize};

/// How packets are protected (RFC 9001 §5.3-5.4). `Aead` (default): the negotiated
/// AEAD and header protection, what a real stack does. `Checksum`: a simulator-only
/// stand-in that leaves payloads in plaintext under a keyed 16-byte checksum tag and
/// masks headers with a hashed mask (`crypto/checksum_keys.rs`), keeping every
/// behaviour that depends on the keys; not interoperable, not secure. Initial packets
/// and Retry integrity stay real (the endpoint checks Initials before a connection
/// exists).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PacketProtection {
    #[default]
    Aead,
    Checksum,
}

/// A QUIC version quiclab speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QuicVersion {
    /// QUIC version 1 (RFC 9000), 0x00000001.
    V1,
    /// QUIC version 2 (RFC 9369), 0x6b3343cf.
    V2,
}

impl QuicVersion {
    /// The version number on the wire.
    pub fn wire(self) -> u32 {
        match self {
            QuicVersion::V1 => VERSION_1,
            QuicVersion::V2 => VERSION_2,
        }
    }

    /// The version with this wire number, if quiclab speaks it.
    pub fn from_wire(v: u32) -> Option<Self> {
        match v {
            VERSION_1 => Some(QuicVersion::V1),
            VERSION_2 => Some(QuicVersion::V2),
            _ => None,
        }
    }
}

/// Which versions a connection uses and accepts (`[versions]`).
///
/// The version_information transport parameter (RFC 9368 §3) is sent only when the
/// config differs from the default (v1 only) or after Version Negotiation, so default
/// handshakes stay byte-identical to a v1-only stack.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VersionConfig {
    /// Client: the version of its first Initial (default v1). Must be in `supported`.
    pub initial: QuicVersion,
    /// The versions we accept, most preferred first (default `["v1"]`). A server
    /// answers an Initial of any other version with Version Negotiation listing these
    /// (RFC 9000 §6.1), and moves a client whose first flight offers a compatible one it
    /// prefers to it (compatible version negotiation, RFC 9368 §2.3); a client offers
    /// those compatible with `initial` for such an upgrade (and follows one), and picks
    /// its next version from them after Version Negotiation (§6.2).
    pub supported: Vec<QuicVersion>,
}

impl Default for VersionConfig {
    fn default() -> Self {
        VersionConfig {
            initial: QuicVersion::V1,
            supported: vec![QuicVersion::V1],
        }
    }
}

/// RFC 9369 §4: QUIC v1 and v2 are compatible with each other (RFC 9368 §2.2: a first
/// flight of one converts into a first flight of the other); nothing else is.
pub fn compatible_versions(from: u32, to: u32) -> bool {
    matches!((from, to), (VERSION_1, VERSION_2) | (VERSION_2, VERSION_1))
}

impl VersionConfig {
    /// The wire numbers of `supported`, in preference order.
    pub fn supported_wire(&self) -> Vec<u32> {
        self.supported.iter().map(|v| v.wire()).collect()
    }

    /// A client's Available Versions for a first flight in `chosen` (RFC 9368 §3):
    /// `chosen` and the supported versions it is compatible with, most preferred first.
    pub fn compatible_with(&self, chosen: u32) -> Vec<u32> {
        self.supported_wire()
            .into_iter()
            .filter(|&v| v == chosen || compatible_versions(chosen, v))
            .collect()
    }

    /// Whether `version` (wire number) is one we accept.
    pub fn accepts(&self, version: u32) -> bool {
        self.supported.iter().any(|v| v.wire() == version)
    }

    /// Whether version_information is sent (see the type's docs).
    pub fn announce(&self) -> bool {
        *self != VersionConfig::default()
    }

    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        let err = |key, why: &str| {
            Err(ConfigError {
                key,
                why: why.to_string(),
            })
        };
        if self.supported.is_empty() {
            return err("versions.supported", "must list at least one version");
        }
        let mut sorted = self.supported.clone();
        sorted.sort_unstable();
        sorted.dedup();
        if sorted.len() != self.supported.len() {
            return err("versions.supported", "lists a version twice");
        }
        if !self.supported.contains(&self.initial) {
            return err("versions.initial", "must be one of versions.supported");
        }
        Ok(())
    }
}

/// 1-RTT key update policy and AEAD limits (`[key_update]`, RFC 9001 §6).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct KeyUpdateConfig {
    /// Initiate a key update after this many 1-RTT packets were sent with the current
    /// keys (RFC 9001 §6.1). `None` (default): only when the confidentiality limit
    /// comes near. Answering the peer's updates is always on.
    pub every_packets: Option<u64>,
    /// Packets protected with one key before we must update (RFC 9001 §6.6).
    /// `None` (default): the limit of the negotiated AEAD (AES-GCM 2^23, ChaCha20-Poly1305
    /// 2^62). Lower values exist to test the limit.
    pub confidentiality_limit: Option<u64>,
    /// Packets that failed authentication, over the connection, before it closes with
    /// AEAD_LIMIT_REACHED (RFC 9001 §6.6). `None` (default): the AEAD's limit
    /// (AES-GCM 2^52, ChaCha20-Poly1305 2^36).
    pub integrity_limit: Option<u64>,
}

impl KeyUpdateConfig {
    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        for (key, v) in [
            ("key_update.every_packets", self.every_packets),
            (
                "key_update.confidentiality_limit",
                self.confidentiality_limit,
            ),
            ("key_update.integrity_limit", self.integrity_limit),
        ] {
            if v == Some(0) {
                return Err(ConfigError {
                    key,
                    why: "must be at least 1".into(),
                });
            }
        }
        Ok(())
    }
}

/// When a server answers a client's Initial with Retry (RFC 9000 §8.1.2) to validate
/// its address before creating any state for it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RetryMode {
    /// Never (default): the amplification limit (§8.1) is the only protection.
    #[default]
    Off,
    /// Every Initial without a valid token gets a Retry.
    Always,
    /// Only while `admission.retry_above` or more connections are mid-handshake (a
    /// flood of real or spoofed clients); below it, connections start at once.
    Auto,
}

impl RetryMode {
    fn is_default(&self) -> bool {
        *self == RetryMode::Off
    }
}

/// Limits on what a server admits (`[admission]`), against Initial floods, and its
/// address validation with Retry and NEW_TOKEN tokens (RFC 9000 §8.1).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AdmissionConfig {
    /// Connections that may be mid-handshake at once (default 1024); the Initials of
    /// further new connections are dropped (clients retransmit them).
    pub max_handshaking: usize,
    /// Whether the server sends Retry (default off). With any mode but off the server
    /// also issues a NEW_TOKEN token after each handshake (RFC 9000 §8.1.3), so a
    /// returning client skips the Retry round trip.
    #[serde(skip_serializing_if = "RetryMode::is_default")]
    pub retry: RetryMode,
    /// `retry = "auto"`: connections mid-handshake at or above which Retry is sent
    /// (default 128; at most `max_handshaking`).
    #[serde(skip_serializing_if = "is_default_retry_above")]
    pub retry_above: usize,
    /// How long a Retry token is accepted, ms (default 10000): a client uses it within
    /// one round trip (RFC 9000 §8.1.2: "a short expiration time").
    #[serde(skip_serializing_if = "is_default_retry_lifetime")]
    pub retry_token_lifetime_ms: u64,
    /// How long a NEW_TOKEN token is accepted, ms (default one day, RFC 9000 §8.1.3).
    #[serde(skip_serializing_if = "is_default_new_token_lifetime")]
    pub new_token_lifetime_ms: u64,
}

const DEFAULT_RETRY_ABOVE: usize = 128;
const DEFAULT_RETRY_LIFETIME_MS: u64 = 10_000;
const DEFAULT_NEW_TOKEN_LIFETIME_MS: u64 = 86_400_000;

fn is_default_retry_above(v: &usize) -> bool {
    *v == DEFAULT_RETRY_ABOVE
}
fn is_default_retry_lifetime(v: &u64) -> bool {
    *v == DEFAULT_RETRY_LIFETIME_MS
}
fn is_default_new_token_lifetime(v: &u64) -> bool {
    *v == DEFAULT_NEW_TOKEN_LIFETIME_MS
}

impl Default for AdmissionConfig {
    fn default() -> Self {
        AdmissionConfig {
            max_handshaking: 1024,
            retry: RetryMode::Off,
            retry_above: DEFAULT_RETRY_ABOVE,
            retry_token_lifetime_ms: DEFAULT_RETRY_LIFETIME_MS,
            new_token_lifetime_ms: DEFAULT_NEW_TOKEN_LIFETIME_MS,
        }
    }
}

impl AdmissionConfig {
    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        let err = |key, why: &str| {
            Err(ConfigError {
                key,
                why: why.to_string(),
            })
        };
        if self.max_handshaking == 0 {
            return err("admission.max_handshaking", "must be at least 1");
        }
        if self.retry == RetryMode::Auto
            && (self.retry_above == 0 || self.retry_above > self.max_handshaking)
        {
            return err(
                "admission.retry_above",
                "must be between 1 and admission.max_handshaking",
            );
        }
        if self.retry_token_lifetime_ms == 0 {
            return err("admission.retry_token_lifetime_ms", "must be at least 1");
        }
        if self.new_token_lifetime_ms == 0 {
            return err("admission.new_token_lifetime_ms", "must be at least 1");
        }
        Ok(())
    }
}
