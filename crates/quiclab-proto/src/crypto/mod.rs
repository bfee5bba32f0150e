//! The crypto layer: TLS 1.3 through rustls's QUIC API (ring provider), Initial secrets,
//! packet and header protection (RFC 9001), Retry integrity, address-validation tokens, certificates and key logs,
//! and packet keys for a QUIC version other than the TLS session's (`version_keys`).
//!
//! Determinism: rustls draws randomness (client/server random, key shares) through a
//! provider whose random source is the connection's seeded [`crate::rng::DetRng`],
//! installed for the duration of each TLS call; the default certificate is Ed25519
//! (deterministic signatures), generated from a seed.

pub mod cert;
mod checksum_hash;
pub mod checksum_keys;
pub mod choices;
pub mod clock;
mod header_mask;
pub mod initial;
pub mod path_nonce;
pub mod protect;
pub mod provider;
pub mod retry;
pub mod session;
pub mod tls;
pub mod token;
pub mod version_keys;

pub use rustls::quic::{DirectionalKeys, Keys, PacketKey, PacketKeySet};
pub use tls::KeyChange;
pub use version_keys::NextSecrets;

/// Length of the AEAD tag that protects every QUIC v1 and v2 packet: the cipher suites
/// QUIC may use (AES-128-GCM, AES-256-GCM, ChaCha20-Poly1305; RFC 9001 §5.3) all have
/// 16-byte tags. It counts toward every packet's size (RFC 9001 §5.3, RFC 9000 §14.1).
pub const TAG_LEN: usize = 16;

/// Packet protection failed: the packet is dropped (RFC 9001 §5.5 / §9.5), never a panic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CryptoError {
    #[error("packet too short for header protection sample or tag")]
    TooShort,
    #[error("AEAD authentication failed")]
    DecryptFailed,
    #[error("encryption failed")]
    EncryptFailed,
}
