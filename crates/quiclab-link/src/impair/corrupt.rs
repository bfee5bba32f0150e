//! Datagram corruption (`impairments.corrupt = { p, bytes, within_bytes }`), the
//! interop runner's `corrupt-rate` network condition: with probability `p` a passing
//! datagram has bits flipped in `bytes` distinct random bytes of its UDP payload (each
//! byte XORed with a random nonzero value, so it always changes). The endpoint must
//! drop what it cannot authenticate (RFC 9001 §5.3: a packet that fails AEAD
//! decryption is discarded; RFC 9000 §12.2: an undecodable packet in a datagram does
//! not stop the others from being processed).
//!
//! As the runner's model (quic-network-simulator `corrupt-rate`), a QUIC Version
//! Negotiation packet is never corrupted: a client acts on a Version Negotiation
//! packet, which carries no integrity protection (RFC 9000 §6.2), so corrupting one
//! would end a handshake the test means to see complete. The runner changes one byte
//! among the first 51 of the UDP payload (to hit the QUIC header often):
//! `corrupt = { p = 0.3, bytes = 1, within_bytes = 51 }` is its setting at 30 %.
//! Only UDP datagrams are corrupted; TCP segments pass unchanged (the simulator's TCP
//! carries no checksum, and a real one would discard them as a loss).
//!
//! Draws: one value per datagram offered (whatever its fate) from the `corrupt` stream
//! decides; a corrupted datagram then draws a position (again while it is taken) and a
//! mask per byte from the `corrupt_bytes` stream. Both are forked after the other
//! impairments' streams, so a scenario without corruption keeps its fates.

use super::loss::check_prob;
use quiclab_proto::DetRng;
use serde::{Deserialize, Serialize};

/// The most bytes a corrupted datagram can have changed (a UDP payload's size).
pub const MAX_CORRUPT_BYTES: u32 = 65_535;

/// How datagrams are corrupted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Corrupt {
    /// Probability a passing datagram is corrupted, in [0, 1].
    pub p: f64,
    /// Distinct bytes changed in a corrupted datagram, 1 to 65535 (default 1; fewer
    /// when the payload, or `within_bytes`, is shorter).
    #[serde(default = "one")]
    pub bytes: u32,
    /// Positions are drawn among the first this many bytes of the UDP payload (absent:
    /// the whole payload; the runner's model: 51).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within_bytes: Option<u32>,
}

fn one() -> u32 {
    1
}

/// Checks the fields; the error names the key (`corrupt.p`, ...).
pub(crate) fn validate(c: &Corrupt) -> Result<(), String> {
    check_prob("corrupt.p", c.p)?;
    if !(1..=MAX_CORRUPT_BYTES).contains(&c.bytes) {
        return Err(format!("corrupt.bytes must be in 1..={MAX_CORRUPT_BYTES}"));
    }
    if c.within_bytes == Some(0) {
        return Err("corrupt.within_bytes must be at least 1 (or absent)".to_string());
    }
    Ok(())
}

/// A QUIC Version Negotiation packet: a long header (first bit set) with version 0
/// (RFC 9000 §17.2.1).
fn is_version_negotiation(d: &[u8]) -> bool {
    d.len() >= 5 && d[0] & 0x80 != 0 && d[1..5] == [0; 4]
}

/// Whether the datagram `payload` is to be corrupted, given this datagram's decision
/// value `u` (in [0, 1)).
pub(crate) fn decide(c: &Corrupt, u: f64, payload: &[u8]) -> bool {
    u < c.p && !payload.is_empty() && !is_version_negotiation(payload)
}

/// Flips bits in distinct random bytes of `payload` (see the module docs); returns how
/// many bytes changed.
pub(crate) fn apply(c: &Corrupt, payload: &mut [u8], rng: &mut DetRng) -> usize {
    let span = c
        .within_bytes
        .map_or(payload.len(), |w| payload.len().min(w as usize));
    let n = span.min(c.bytes as usize);
    let mut taken: Vec<usize> = Vec::with_capacity(n);
    while taken.len() < n {
        let pos = rng.range(0, span as u64) as usize;
        if taken.contains(&pos) {
            continue;
        }
        taken.push(pos);
        // A nonzero mask: 1..=255.
        payload[pos] ^= rng.range(1, 256) as u8;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(p: f64, bytes: u32, within_bytes: Option<u32>) -> Corrupt {
        Corrupt {
            p,
            bytes,
            within_bytes,
        }
    }

    #[test]
    fn validation_names_the_field() {
        assert!(validate(&c(0.3, 1, Some(51))).is_ok());
        assert_eq!(
            validate(&c(1.5, 1, None)).unwrap_err(),
            "corrupt.p must be in [0, 1]"
        );
        assert!(validate(&c(f64::NAN, 1, None)).is_err());
        assert!(validate(&c(0.1, 0, None))
            .unwrap_err()
            .starts_with("corrupt.bytes"));
        assert!(validate(&c(0.1, 70_000, None)).is_err());
        assert!(validate(&c(0.1, 1, Some(0)))
            .unwrap_err()
            .starts_with("corrupt.within_bytes"));
    }

    #[test]
    fn changes_exactly_the_distinct_bytes_asked_for() {
        let mut rng = DetRng::new(5);
        for (bytes, within, len, want) in [
            (1, None, 1200, 1),
            (8, None, 1200, 8),
            (8, Some(4), 1200, 4),
            (3, Some(51), 20, 3),
            (100, None, 10, 10),
        ] {
            let before = vec![0xAAu8; len];
            let mut d = before.clone();
            assert_eq!(apply(&c(1.0, bytes, within), &mut d, &mut rng), want);
            let changed: Vec<usize> = (0..len).filter(|&i| d[i] != before[i]).collect();
            assert_eq!(changed.len(), want, "bytes {bytes} within {within:?}");
            let limit = within.map_or(len, |w| w as usize);
            assert!(changed.iter().all(|&i| i < limit));
        }
    }

    #[test]
    fn spares_version_negotiation_and_empty_datagrams() {
        let vn = [0x80u8, 0, 0, 0, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8];
        assert!(!decide(&c(1.0, 1, None), 0.0, &vn));
        let initial = [0xC0u8, 0, 0, 0, 1, 8];
        assert!(decide(&c(1.0, 1, None), 0.0, &initial));
        assert!(!decide(&c(1.0, 1, None), 0.0, &[]));
        assert!(!decide(&c(0.3, 1, None), 0.3, &initial));
        assert!(decide(&c(0.3, 1, None), 0.29, &initial));
    }
}
