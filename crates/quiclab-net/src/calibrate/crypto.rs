//! The AEAD's cost per byte, timed apart from the rest of the stack: the packet and
//! header protection quiclab-proto's seal and open call (rustls's QUIC keys, AES-128-GCM
//! as a 1-RTT connection negotiates first by default; RFC 9001 §5.3, §5.4) on
//! packets of the two calibration sizes, in the thread's CPU time. quiclab-proto's
//! own `raw::seal` is behind its `testing` feature, which the binary does not build.

use super::clock::ThreadCpu;
use rustls::quic::{Keys, Version};

/// Seal and open costs at two sizes and the per-byte slope fitted through them.
#[derive(Clone, Copy, Debug)]
pub struct CryptoCost {
    /// ns per packet to seal (AEAD + header protection) at `sizes.0` and `sizes.1`.
    pub seal_ns: (f64, f64),
    /// ns per packet to open (header protection removed, AEAD opened; the copy of
    /// the sealed packet each open needs included).
    pub open_ns: (f64, f64),
    pub sizes: (usize, usize),
}

impl CryptoCost {
    /// ns per byte each way: the mean of seal's and open's slopes between the sizes,
    /// or, should the slope come out non-positive (timer noise), the larger size's
    /// cost divided by its bytes.
    pub fn per_byte_ns(&self) -> f64 {
        let dx = (self.sizes.1 - self.sizes.0) as f64;
        let slope = |(a, b): (f64, f64)| (b - a) / dx;
        let s = (slope(self.seal_ns) + slope(self.open_ns)) / 2.0;
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

/// Times `iters` seals and opens at each size.
pub fn measure(sizes: (usize, usize), iters: u32) -> CryptoCost {
    let client = keys(rustls::Side::Client);
    let server = keys(rustls::Side::Server);
    let one = |size: usize| -> (f64, f64) {
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
            seal(&client, &mut pkt, pn);
        }
        let seal_ns = cpu.elapsed_ns() / f64::from(iters);
        fresh(&mut pkt);
        seal(&client, &mut pkt, 7);
        let sealed = pkt.clone();
        let mut ok = 0u32;
        let cpu = ThreadCpu::now();
        for _ in 0..iters {
            pkt.clear();
            pkt.extend_from_slice(&sealed);
            ok += u32::from(open(&server, &mut pkt, 7));
        }
        let open_ns = cpu.elapsed_ns() / f64::from(iters);
        // An open that fails is not an open's time.
        (seal_ns, if ok == iters { open_ns } else { f64::NAN })
    };
    let (s0, o0) = one(sizes.0);
    let (s1, o1) = one(sizes.1);
    CryptoCost {
        seal_ns: (s0, s1),
        open_ns: (o0, o1),
        sizes,
    }
}
