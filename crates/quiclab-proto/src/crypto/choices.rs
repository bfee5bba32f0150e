//! TLS choices (RFC 9001 §5.3, RFC 8446 §4.2.7, §4.4.3): which cipher suites and key
//! exchange groups an endpoint offers or accepts, and which kind of certificate a
//! server presents. The defaults are what quiclab always used: the three TLS 1.3
//! suites QUIC may use, X25519 only, and an Ed25519 certificate.
//!
//! A client offers the suites and groups in the listed order; a server picks the
//! first suite of its own list the client also offers (rustls's server preference).
//! Every choice stays reproducible from a seed: X25519 and P-256 key shares come from
//! the connection's generator, Ed25519 and ECDSA (RFC 6979) signatures are
//! deterministic; only RSA-PSS CertificateVerify signatures use a random salt (ring's
//! OS random), so their bytes, though not their length, differ between runs.

use serde::{Deserialize, Serialize};
use std::str::FromStr;

/// A TLS 1.3 cipher suite QUIC can use (RFC 9001 §5.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CipherSuite {
    /// TLS_AES_128_GCM_SHA256.
    Aes128Gcm,
    /// TLS_AES_256_GCM_SHA384.
    Aes256Gcm,
    /// TLS_CHACHA20_POLY1305_SHA256.
    Chacha20Poly1305,
}

/// A key exchange group (RFC 8446 §4.2.7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KxGroup {
    X25519,
    /// secp256r1 (NIST P-256).
    P256,
}

/// The kind of key and self-signed certificate a server presents.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CertType {
    /// Ed25519 (the default): the smallest certificate and signature.
    #[default]
    Ed25519,
    /// ECDSA on P-256 with SHA-256.
    EcdsaP256,
    /// RSA with a 2048-bit modulus (PKCS#1 v1.5 certificate signature, RSA-PSS in TLS).
    Rsa2048,
}

/// Cipher suites and key exchange groups, in preference order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TlsChoices {
    pub cipher_suites: Vec<CipherSuite>,
    pub kx_groups: Vec<KxGroup>,
}

impl Default for TlsChoices {
    fn default() -> Self {
        TlsChoices {
            cipher_suites: vec![
                CipherSuite::Aes128Gcm,
                CipherSuite::Aes256Gcm,
                CipherSuite::Chacha20Poly1305,
            ],
            kx_groups: vec![KxGroup::X25519],
        }
    }
}

/// A TLS choice that cannot work.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ChoiceError {
    #[error("no cipher suite selected")]
    NoCipherSuite,
    #[error("no key exchange group selected")]
    NoKxGroup,
    #[error("unknown {what} {name:?} (expected one of {expected})")]
    Unknown {
        what: &'static str,
        name: String,
        expected: &'static str,
    },
}

impl TlsChoices {
    /// Rejects empty lists (a handshake could never succeed).
    pub fn validate(&self) -> Result<(), ChoiceError> {
        if self.cipher_suites.is_empty() {
            return Err(ChoiceError::NoCipherSuite);
        }
        if self.kx_groups.is_empty() {
            return Err(ChoiceError::NoKxGroup);
        }
        Ok(())
    }

    /// The default choices with only `suite`.
    pub fn only_suite(suite: CipherSuite) -> Self {
        TlsChoices {
            cipher_suites: vec![suite],
            ..Self::default()
        }
    }
}

impl FromStr for CipherSuite {
    type Err = ChoiceError;
    fn from_str(s: &str) -> Result<Self, ChoiceError> {
        match s.to_ascii_lowercase().replace('-', "_").as_str() {
            "aes128gcm" | "aes_128_gcm" | "tls_aes_128_gcm_sha256" => Ok(CipherSuite::Aes128Gcm),
            "aes256gcm" | "aes_256_gcm" | "tls_aes_256_gcm_sha384" => Ok(CipherSuite::Aes256Gcm),
            "chacha20"
            | "chacha20poly1305"
            | "chacha20_poly1305"
            | "tls_chacha20_poly1305_sha256" => Ok(CipherSuite::Chacha20Poly1305),
            _ => Err(ChoiceError::Unknown {
                what: "cipher suite",
                name: s.into(),
                expected: "aes128gcm, aes256gcm, chacha20",
            }),
        }
    }
}

impl FromStr for KxGroup {
    type Err = ChoiceError;
    fn from_str(s: &str) -> Result<Self, ChoiceError> {
        match s.to_ascii_lowercase().replace('-', "").as_str() {
            "x25519" => Ok(KxGroup::X25519),
            "p256" | "secp256r1" => Ok(KxGroup::P256),
            _ => Err(ChoiceError::Unknown {
                what: "key exchange group",
                name: s.into(),
                expected: "x25519, p256",
            }),
        }
    }
}

impl FromStr for CertType {
    type Err = ChoiceError;
    fn from_str(s: &str) -> Result<Self, ChoiceError> {
        match s.to_ascii_lowercase().replace(['-', '_'], "").as_str() {
            "ed25519" => Ok(CertType::Ed25519),
            "ecdsa" | "ecdsap256" | "p256" => Ok(CertType::EcdsaP256),
            "rsa" | "rsa2048" => Ok(CertType::Rsa2048),
            _ => Err(ChoiceError::Unknown {
                what: "certificate type",
                name: s.into(),
                expected: "ed25519, ecdsa-p256, rsa2048",
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_bad_ones_are_errors() {
        assert_eq!("chacha20".parse(), Ok(CipherSuite::Chacha20Poly1305));
        assert_eq!("AES-256-GCM".parse(), Ok(CipherSuite::Aes256Gcm));
        assert_eq!("secp256r1".parse(), Ok(KxGroup::P256));
        assert_eq!("rsa-2048".parse(), Ok(CertType::Rsa2048));
        assert!("des".parse::<CipherSuite>().is_err());
        assert!("x448".parse::<KxGroup>().is_err());
        let empty = TlsChoices {
            cipher_suites: vec![],
            ..TlsChoices::default()
        };
        assert_eq!(empty.validate(), Err(ChoiceError::NoCipherSuite));
    }
}
