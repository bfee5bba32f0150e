//! The AEAD's cost per byte, timed apart from the rest of the stack: the packet and
//! header protection quiclab-proto's seal and open call (rustls's QUIC keys, AES-128-GCM
//! as a 1-RTT connection negotiates first by default; RFC 9001 §5.3, §5.4) on
//! packets of the two calibration sizes, in the thread's CPU time. quiclab-proto's
//! own `raw::seal` is behind its `testing` feature, which the binary does not build.

use super::clock::ThreadCpu;
use rustls::quic::{Keys, Version};

/// Seal and open costs at two sizes, and at a small one for the per-byte slope.
#[derive(Clone, Copy, Debug)]
pub struct CryptoCost {
    /// ns per packet to seal (AEAD + header protection) at `sizes.0` and `sizes.1`.
    pub seal_ns: (f64, f64),
    /// ns per packet to open (header protection removed, AEAD opened; the copy of
    /// the sealed packet each open needs included).
    pub open_ns: (f64, f64),
    pub sizes: (usize, usize),
    /// Seal and open at [`SLOPE_FROM`] bytes: the far end of the slope.
    pub small_ns: (f64, f64),
}

/// The small packet the per-byte slope is fitted from. ring's AES-GCM works in wide
/// blocks, so on this machine 1,200 and 1,452 bytes differ by ~10 ns (a slope of a few
/// hundredths of a ns per byte, which a loaded core's noise matches) while 128 and
/// 1,452 bytes differ by ~140 ns (0.11 ns per byte, the same under load).
pub const SLOPE_FROM: usize = 128;

impl CryptoCost {
    /// ns per byte each way: the mean of seal's and open's slopes between
    /// [`SLOPE_FROM`] bytes and the larger size, or, should the slope come out
    /// non-positive (timer noise), the larger size's cost divided by its bytes.
    pub fn per_byte_ns(&self) -> f64 {
        let dx = (self.sizes.1 - SLOPE_FROM) as f64;
        let seal = (self.seal_ns.1 - self.small_ns.0) / dx;
        let open = (self.open_ns.1 - self.small_ns.1) / dx;
        let s = (seal + open) / 2.0;
        if s > 0.0 {
            s
        } else {
            (self.seal_ns.1 + self.open_ns.1) / 2.0 / self.sizes.1 as f64
        }
    }
}

/// A short header's length here: first byte, 8-byte connection ID, 4-byte packet number.
const HEADER: usize = 13;
/// RFC 9001 §5.4.2: the sample starts 4 bytes after the packet number's start.
const SAMPLE_AT: usize = 1 + 8 + 4;

fn keys(side: rustls::Side) -> Keys {
    let suite = rustls::crypto::ring::cipher_suite::TLS13_AES_128_GCM_SHA256
        .tls13()
        .expect("TLS13_AES_128_GCM_SHA256 is a TLS 1.3 suite");
    let quic = suite.quic.expect("AES-128-GCM has QUIC keys");
    Keys::initial(Version::V1, suite, quic, &[1; 8], side)
}

/// Seals `pkt` (header, payload, room for the tag) as packet `pn`.
fn seal(k: &Keys, pkt: &mut [u8], pn: u64) {
    let (header, rest) = pkt.split_at_mut(HEADER);
    let body_len = rest.len() - k.local.packet.tag_len();
    let (body, tag_room) = rest.split_at_mut(body_len);
    if let Ok(tag) = k.local.packet.encrypt_in_place(pn, header, body) {
        tag_room.copy_from_slice(tag.as_ref());
    }
    let (first, rest) = pkt.split_at_mut(1);
    let (pn_bytes, after) = rest[8..].split_at_mut(4);
    let sample = &after[..16];
    let _ = k
        .local
        .header
        .encrypt_in_place(sample, &mut first[0], pn_bytes);
}

/// Opens `pkt` sealed by the peer as packet `pn`; whether it authenticated.
fn open(k: &Keys, pkt: &mut [u8], pn: u64) -> bool {
    let mut sample = [0u8; 16];
    sample.copy_from_slice(&pkt[SAMPLE_AT..SAMPLE_AT + 16]);
    let (first, rest) = pkt.split_at_mut(1);
    let _ = k
        .remote
        .header
        .decrypt_in_place(&sample, &mut first[0], &mut rest[8..12]);
    let (header, body) = pkt.split_at_mut(HEADER);
    k.remote.packet.decrypt_in_place(pn, header, body).is_ok()
}

/// Rounds the iterations are split into; each size keeps its fastest round.
const ROUNDS: u32 = 5;

/// Times `iters` seals and opens at each size, in [`ROUNDS`] interleaved rounds of
/// which each size keeps the least, so that one round's contention for the core (a
/// loaded CI machine once fitted 0.009 ns per byte) does not set the slope.
pub fn measure(sizes: (usize, usize), iters: u32) -> CryptoCost {
    let client = keys(rustls::Side::Client);
    let server = keys(rustls::Side::Server);
    let per_round = (iters / ROUNDS).max(1);
    let mut best = [(f64::INFINITY, f64::INFINITY); 3];
    for _ in 0..ROUNDS {
        for (i, size) in [sizes.0, sizes.1, SLOPE_FROM].into_iter().enumerate() {
            let (s, o) = one_round(&client, &server, size, per_round);
            best[i].0 = best[i].0.min(s);
            // NaN (a failed open) stays NaN: an open that fails is not an open's time.
            best[i].1 = if o.is_nan() || best[i].1.is_nan() {
                f64::NAN
            } else {
                best[i].1.min(o)
            };
        }
    }
    CryptoCost {
        seal_ns: (best[0].0, best[1].0),
        open_ns: (best[0].1, best[1].1),
        sizes,
        small_ns: best[2],
    }
}

/// ns per seal and per open of `iters` packets of `size` bytes.
fn one_round(client: &Keys, server: &Keys, size: usize, iters: u32) -> (f64, f64) {
    // 0x43: short header, fixed bit, 4-byte packet number (RFC 9000 §17.3.1).
    let fresh = |pkt: &mut Vec<u8>| {
        pkt.clear();
        pkt.push(0x43);
        pkt.resize(size, 0);
    };
    let mut pkt = Vec::with_capacity(size);
    let cpu = ThreadCpu::now();
    for pn in 0..u64::from(iters) {
        fresh(&mut pkt);
        seal(client, &mut pkt, pn);
    }
    let seal_ns = cpu.elapsed_ns() / f64::from(iters);
    fresh(&mut pkt);
    seal(client, &mut pkt, 7);
    let sealed = pkt.clone();
    let mut ok = 0u32;
    let cpu = ThreadCpu::now();
    for _ in 0..iters {
        pkt.clear();
        pkt.extend_from_slice(&sealed);
        ok += u32::from(open(server, &mut pkt, 7));
    }
    let open_ns = cpu.elapsed_ns() / f64::from(iters);
    (seal_ns, if ok == iters { open_ns } else { f64::NAN })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slope_runs_from_the_small_packet_to_the_large_one() {
        // Seal 0.1 ns/B and open 0.2 ns/B above 100 ns: the slope's mean is 0.15.
        let at = |per_byte: f64, size: usize| 100.0 + per_byte * size as f64;
        let c = CryptoCost {
            seal_ns: (at(0.1, 1200), at(0.1, 1452)),
            open_ns: (at(0.2, 1200), at(0.2, 1452)),
            sizes: (1200, 1452),
            small_ns: (at(0.1, SLOPE_FROM), at(0.2, SLOPE_FROM)),
        };
        assert!((c.per_byte_ns() - 0.15).abs() < 1e-9, "{}", c.per_byte_ns());
        // A slope that noise made negative falls back to the large packet's mean.
        let noisy = CryptoCost {
            small_ns: (500.0, 500.0),
            ..c
        };
        let mean = (at(0.1, 1452) + at(0.2, 1452)) / 2.0 / 1452.0;
        assert!((noisy.per_byte_ns() - mean).abs() < 1e-9);
    }

    #[test]
    fn a_measurement_gives_finite_positive_costs() {
        let c = measure((1200, 1452), 500);
        for v in [
            c.seal_ns.0,
            c.seal_ns.1,
            c.open_ns.0,
            c.open_ns.1,
            c.small_ns.0,
            c.small_ns.1,
        ] {
            assert!(v.is_finite() && v > 0.0, "{c:?}");
        }
        assert!(c.per_byte_ns() > 0.0, "{c:?}");
    }
}
