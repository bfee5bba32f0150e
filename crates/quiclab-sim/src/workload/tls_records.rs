//! Dynamic TLS record sizing (`[flows.tls] records = "dynamic"`): how much plaintext
//! the next record of a TLS-over-TCP sender carries.
//!
//! A receiver can decrypt a record only once all of it arrived (RFC 8446 §5.2: the
//! AEAD tag ends the record), so a 16 KB record that spans twelve segments delays its
//! first byte until the last of them arrived: with an initial window of ten segments,
//! one more round trip. Servers of the seeds' era therefore started each connection
//! with records that fill one TCP segment and grew them once the transfer was large,
//! shrinking them again after an idle period. Google's servers as Ilya Grigorik
//! described them (nodejs/node-v0.x-archive#6889, 2014): "new connections default to
//! small record size; each record fits into a TCP packet; [...] if bytes written >
//! {configurable byte threshold} then boost record size to 16KB; if last write
//! timestamp > now - {configurable time threshold} then reset sent byte count". The
//! constants are those of the same heuristic elsewhere: a 1 MiB threshold and a 1 s
//! idle timeout in nghttp2's nghttpx (its maintainer: "1 second is the default. I
//! heard that it is used in google server"; nghttp2/nghttp2#393), "small records for
//! the first ~1MB of data [...] switch back to smaller records after the connection
//! goes idle" in Go's proposal (golang/go#14376). Cloudflare's nginx patch
//! (`ssl_dyn_rec_*`: 1369-byte records for 40 records, then 4229, then 16 KB; 1 s idle)
//! is the same idea with a middle step, not modelled.
//!
//! "Fits into a TCP packet" is taken exactly: the record's plaintext is the
//! connection's data bytes per segment (`TcpConnection::smss`, 1448 with timestamps)
//! minus the record's overhead for the negotiated version and AEAD, so a record is one
//! full segment on the wire. TCP does not align segments with records: a record
//! written after a partial one straddles two segments, as in a kernel's send queue.

use quiclab_proto::Instant;
use rustls::{CipherSuite, SupportedCipherSuite};
use std::time::Duration;

/// Plaintext bytes after which records grow to the maximum (nghttpx's
/// SHRPX_WARMUP_THRESHOLD; Go's proposal: "~1MB").
pub const BOOST_AFTER_BYTES: u64 = 1 << 20;
/// A write this long after the previous one starts over with small records.
pub const IDLE_RESET: Duration = Duration::from_secs(1);
/// The largest record plaintext (RFC 8446 §5.1, RFC 5246 §6.2.1: 2^14 bytes).
pub const MAX_RECORD_PLAINTEXT: usize = 1 << 14;
/// The overhead assumed before a suite is negotiated: the largest of the suites
/// quiclab offers (TLS 1.2 AES-GCM), so a record still fits a segment.
const UNKNOWN_OVERHEAD: usize = 29;

/// Bytes a record adds to its plaintext for `suite`:
/// - TLS 1.3: the 5-byte header (RFC 8446 §5.1), the inner content type byte and the
///   16-byte AEAD tag (§5.2; AES-GCM and ChaCha20-Poly1305 both have 16);
/// - TLS 1.2 AES-GCM: header, 8-byte explicit nonce and tag (RFC 5288 §3);
/// - TLS 1.2 ChaCha20-Poly1305: header and tag, no explicit nonce (RFC 7905 §2).
pub fn record_overhead(suite: Option<SupportedCipherSuite>) -> usize {
    let Some(suite) = suite else {
        return UNKNOWN_OVERHEAD;
    };
    match (suite, suite.suite()) {
        (SupportedCipherSuite::Tls13(_), _) => 5 + 1 + 16,
        (
            _,
            CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256
            | CipherSuite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
        ) => 5 + 16,
        _ => 5 + 8 + 16,
    }
}

/// One sender's record sizing state.
#[derive(Clone, Debug, Default)]
pub struct RecordSizer {
    /// Plaintext written since the connection started or last went idle.
    since_reset: u64,
    last_write: Option<Instant>,
}

impl RecordSizer {
    /// The plaintext of the next record written at `now`, for a connection carrying
    /// `segment` data bytes per segment and records of `overhead` bytes.
    pub fn next_record(&mut self, now: Instant, segment: u64, overhead: usize) -> usize {
        if self
            .last_write
            .is_some_and(|t| now.saturating_duration_since(t) >= IDLE_RESET)
        {
            self.since_reset = 0;
        }
        if self.since_reset >= BOOST_AFTER_BYTES {
            return MAX_RECORD_PLAINTEXT;
        }
        let segment = usize::try_from(segment).unwrap_or(MAX_RECORD_PLAINTEXT);
        // A segment smaller than the overhead (an absurd MSS) still carries a byte.
        segment
            .saturating_sub(overhead)
            .clamp(1, MAX_RECORD_PLAINTEXT)
    }

    /// `n` plaintext bytes went into a record at `now`.
    pub fn on_written(&mut self, now: Instant, n: usize) {
        if n > 0 {
            self.since_reset += n as u64;
            self.last_write = Some(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Instant {
        Instant::ZERO + Duration::from_millis(ms)
    }

    #[test]
    fn records_fill_a_segment_until_a_mib_then_grow() {
        let mut s = RecordSizer::default();
        // TLS 1.3 over 1448-byte segments: 1426 bytes of plaintext, 1448 on the wire.
        let small = s.next_record(at(0), 1448, 22);
        assert_eq!(small, 1426);
        let mut written = 0u64;
        let mut t = 0;
        while written < BOOST_AFTER_BYTES {
            let n = s.next_record(at(t), 1448, 22);
            assert_eq!(n, 1426, "after {written} bytes");
            s.on_written(at(t), n);
            written += n as u64;
            t += 1;
        }
        assert_eq!(s.next_record(at(t), 1448, 22), MAX_RECORD_PLAINTEXT);
        // Writes less than a second apart keep the large records.
        s.on_written(at(t), 100);
        assert_eq!(s.next_record(at(t + 999), 1448, 22), MAX_RECORD_PLAINTEXT);
        s.on_written(at(t + 999), 100);
        // A second without a write starts over.
        assert_eq!(s.next_record(at(t + 1999), 1448, 22), 1426);
    }

    #[test]
    fn nothing_written_is_no_write() {
        let mut s = RecordSizer::default();
        s.on_written(at(0), 2_000_000);
        s.on_written(at(5000), 0);
        // The empty write at 5 s does not refresh the clock: idle since 0.
        assert_eq!(s.next_record(at(5000), 1448, 29), 1419);
    }

    #[test]
    fn tiny_segments_still_carry_a_byte() {
        let mut s = RecordSizer::default();
        assert_eq!(s.next_record(at(0), 10, 29), 1);
        assert_eq!(s.next_record(at(0), 100_000, 29), MAX_RECORD_PLAINTEXT);
    }

    #[test]
    fn overheads_by_suite() {
        use rustls::crypto::ring::cipher_suite as cs;
        assert_eq!(record_overhead(Some(cs::TLS13_AES_128_GCM_SHA256)), 22);
        assert_eq!(
            record_overhead(Some(cs::TLS13_CHACHA20_POLY1305_SHA256)),
            22
        );
        let gcm = cs::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384;
        assert_eq!(record_overhead(Some(gcm)), 29);
        let chacha = cs::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256;
        assert_eq!(record_overhead(Some(chacha)), 21);
        assert_eq!(record_overhead(None), 29);
    }
}
