//! The TCP header and its options on the wire (RFC 9293 §3.1), with the options this
//! stack speaks: MSS (RFC 9293 §3.7.1), window scale and timestamps (RFC 7323 §2.2,
//! §3.2), SACK-permitted and SACK (RFC 2018 §2, §3), TFO (RFC 7413) and AccECN's
//! byte counters (RFC 9768 §3.2.3); the ECN flags CWR, ECE (RFC 3168 §6.1) and AE
//! (RFC 9768 §3.1.1). Decoding never panics: anything malformed is a [`WireError`].
//!
//! The checksum (RFC 9293 §3.1, with the IPv4 pseudo-header) is computed over the
//! addresses the segment travels between, so captures decode as valid TCP.

use std::net::SocketAddrV4;

/// Fixed header length without options.
pub const HEADER_LEN: usize = 20;
/// Largest header (data offset 15 words).
pub const MAX_HEADER_LEN: usize = 60;
/// IP protocol number of TCP, for the pseudo-header.
pub const IP_PROTO_TCP: u8 = 6;
/// At most four SACK blocks fit in 40 bytes of options (RFC 2018 §3); three with
/// timestamps.
pub const MAX_SACK_BLOCKS: usize = 4;

/// Control bits (RFC 9293 §3.1).
pub mod flags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const PSH: u8 = 0x08;
    pub const ACK: u8 = 0x10;
    /// ECN-Echo (RFC 3168 §6.1); under AccECN the ACE field's least significant bit.
    pub const ECE: u8 = 0x40;
    /// Congestion Window Reduced (RFC 3168 §6.1); under AccECN ACE's middle bit.
    pub const CWR: u8 = 0x80;
}

/// RFC 9768 §3.2.3 option kinds: field order 0 (EE0B, ECEB, EE1B) and 1 (EE1B, ECEB,
/// EE0B).
pub const ACCECN0: u8 = 172;
pub const ACCECN1: u8 = 174;

/// The AccECN option (RFC 9768 §3.2.3): the 24 least significant bits of up to three
/// of the data receiver's byte counters, in one of two orders; trailing fields may be
/// left out (Table 5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AccEcnOption {
    /// Order 1 (kind 174) rather than order 0 (kind 172).
    pub order1: bool,
    /// How many leading fields the option carries, 0 to 3.
    pub count: u8,
    /// The fields in wire order; 24-bit values, zero past `count`.
    pub fields: [u32; 3],
}

impl AccEcnOption {
    /// An option with the receiver's counters `(e0b, ceb, e1b)`, `count` fields.
    pub fn new(order1: bool, count: u8, e0b: u32, ceb: u32, e1b: u32) -> Self {
        let count = count.min(3);
        let all = if order1 {
            [e1b, ceb, e0b]
        } else {
            [e0b, ceb, e1b]
        };
        let mut fields = [0; 3];
        for (i, f) in all.iter().enumerate().take(usize::from(count)) {
            fields[i] = f & 0xff_ffff;
        }
        AccEcnOption {
            order1,
            count,
            fields,
        }
    }

    fn field(&self, i: usize) -> Option<u32> {
        (i < usize::from(self.count)).then(|| self.fields[i])
    }
    /// EE0B: bytes received ECT(0), when present.
    pub fn e0b(&self) -> Option<u32> {
        self.field(if self.order1 { 2 } else { 0 })
    }
    /// ECEB: bytes received CE, when present.
    pub fn ceb(&self) -> Option<u32> {
        self.field(1)
    }
    /// EE1B: bytes received ECT(1), when present.
    pub fn e1b(&self) -> Option<u32> {
        self.field(if self.order1 { 0 } else { 2 })
    }
    /// Bytes on the wire.
    pub fn wire_len(&self) -> usize {
        2 + 3 * usize::from(self.count.min(3))
    }
}

/// The options of one segment. `sack` holds (left, right) wire sequence numbers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    pub mss: Option<u16>,
    pub window_scale: Option<u8>,
    pub sack_permitted: bool,
    /// (TSval, TSecr), RFC 7323 §3.2.
    pub timestamps: Option<(u32, u32)>,
    pub sack: Vec<(u32, u32)>,
    /// RFC 7413 §4.1.1 TFO option (kind 34): empty = a cookie request, else the
    /// cookie (4 to 16 bytes).
    pub fast_open: Option<Vec<u8>>,
    /// RFC 9768 §3.2.3 AccECN option (kind 172 or 174).
    pub accecn: Option<AccEcnOption>,
}

/// A TCP header (without the checksum, computed on encode and checked on decode).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Header {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    /// The AE flag (RFC 9768 §3.1.1, formerly NS): the low bit of byte 12.
    pub ae: bool,
    pub window: u16,
    pub options: Options,
}

/// Why bytes are not a TCP segment.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("segment of {0} bytes is shorter than its header")]
    Truncated(usize),
    #[error("data offset {0} words is below the minimum of 5 or past the segment")]
    BadDataOffset(u8),
    #[error("option kind {kind} has an invalid length {len}")]
    BadOption { kind: u8, len: usize },
    #[error("options need {0} bytes, more than the 40 a header holds")]
    OptionsTooLong(usize),
    #[error("checksum mismatch")]
    BadChecksum,
}

impl Options {
    /// Encoded length, padded to a multiple of 4.
    pub fn encoded_len(&self) -> usize {
        let mut n = 0;
        if self.mss.is_some() {
            n += 4;
        }
        if self.window_scale.is_some() {
            n += 3;
        }
        if self.sack_permitted {
            n += 2;
        }
        if self.timestamps.is_some() {
            n += 10;
        }
        if !self.sack.is_empty() {
            n += 2 + 8 * self.sack.len();
        }
        if let Some(c) = &self.fast_open {
            n += 2 + c.len();
        }
        if let Some(a) = &self.accecn {
            n += a.wire_len();
        }
        n.div_ceil(4) * 4
    }

    fn encode(&self, out: &mut Vec<u8>) {
        let start = out.len();
        // Layout as Linux sends it: NOPs align the 4-byte fields.
        if let Some(mss) = self.mss {
            out.extend_from_slice(&[2, 4]);
            out.extend_from_slice(&mss.to_be_bytes());
        }
        if self.sack_permitted && self.timestamps.is_some() {
            out.extend_from_slice(&[4, 2]);
        } else if self.sack_permitted {
            out.extend_from_slice(&[1, 1, 4, 2]);
        }
        if let Some((val, ecr)) = self.timestamps {
            if !self.sack_permitted {
                out.extend_from_slice(&[1, 1]);
            }
            out.extend_from_slice(&[8, 10]);
            out.extend_from_slice(&val.to_be_bytes());
            out.extend_from_slice(&ecr.to_be_bytes());
        }
        if let Some(ws) = self.window_scale {
            out.extend_from_slice(&[1, 3, 3, ws]);
        }
        if !self.sack.is_empty() {
            out.extend_from_slice(&[1, 1, 5, (2 + 8 * self.sack.len()) as u8]);
            for (l, r) in &self.sack {
                out.extend_from_slice(&l.to_be_bytes());
                out.extend_from_slice(&r.to_be_bytes());
            }
        }
        if let Some(c) = &self.fast_open {
            out.extend_from_slice(&[34, (2 + c.len()) as u8]);
            out.extend_from_slice(c);
        }
        if let Some(a) = &self.accecn {
            let kind = if a.order1 { ACCECN1 } else { ACCECN0 };
            out.extend_from_slice(&[kind, a.wire_len() as u8]);
            for f in &a.fields[..usize::from(a.count.min(3))] {
                out.extend_from_slice(&f.to_be_bytes()[1..]);
            }
        }
        while !(out.len() - start).is_multiple_of(4) {
            out.push(0);
        }
    }

    /// Length after [`encode`](Self::encode) (its NOP layout), not the minimal one.
    pub(crate) fn wire_len(&self) -> usize {
        let mut v = Vec::with_capacity(MAX_HEADER_LEN);
        self.encode(&mut v);
        v.len()
    }

    fn decode(mut b: &[u8]) -> Result<Options, WireError> {
        let mut o = Options::default();
        while let Some(&kind) = b.first() {
            match kind {
                0 => break,
                1 => {
                    b = &b[1..];
                    continue;
                }
                _ => {}
            }
            let len = usize::from(*b.get(1).ok_or(WireError::BadOption { kind, len: 1 })?);
            if len < 2 || len > b.len() {
                return Err(WireError::BadOption { kind, len });
            }
            let body = &b[2..len];
            let bad = WireError::BadOption { kind, len };
            match kind {
                2 if len == 4 => o.mss = Some(u16::from_be_bytes([body[0], body[1]])),
                3 if len == 3 => o.window_scale = Some(body[0]),
                4 if len == 2 => o.sack_permitted = true,
                5 if (len - 2) % 8 == 0 && len > 2 => {
                    o.sack = body
                        .chunks_exact(8)
                        .map(|c| (be32(&c[..4]), be32(&c[4..])))
                        .collect();
                }
                8 if len == 10 => o.timestamps = Some((be32(&body[..4]), be32(&body[4..]))),
                // RFC 7413 §4.1.1: a request (length 2) or a 4-16 byte cookie.
                34 if len == 2 || (6..=18).contains(&len) => o.fast_open = Some(body.to_vec()),
                // RFC 9768 §3.2.3: the whole 3-byte fields that fit the length are read,
                // any remainder is padding (forward compatibility), not an error.
                ACCECN0 | ACCECN1 => {
                    let mut a = AccEcnOption {
                        order1: kind == ACCECN1,
                        ..AccEcnOption::default()
                    };
                    for (i, c) in body.chunks_exact(3).take(3).enumerate() {
                        a.fields[i] = u32::from_be_bytes([0, c[0], c[1], c[2]]);
                        a.count = i as u8 + 1;
                    }
                    o.accecn = Some(a);
                }
                2 | 3 | 4 | 5 | 8 | 34 => return Err(bad),
                // RFC 9293 §3.1: unknown options are skipped by their length.
                _ => {}
            }
            b = &b[len..];
        }
        Ok(o)
    }
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

impl Header {
    /// Appends header + `payload` to `out` with a valid checksum for `src` -> `dst`.
    pub fn encode(
        &self,
        payload: &[u8],
        src: SocketAddrV4,
        dst: SocketAddrV4,
        out: &mut Vec<u8>,
    ) -> Result<(), WireError> {
        let opt_len = self.options.wire_len();
        if opt_len > MAX_HEADER_LEN - HEADER_LEN {
            return Err(WireError::OptionsTooLong(opt_len));
        }
        let start = out.len();
        out.extend_from_slice(&self.src_port.to_be_bytes());
        out.extend_from_slice(&self.dst_port.to_be_bytes());
        out.extend_from_slice(&self.seq.to_be_bytes());
        out.extend_from_slice(&self.ack.to_be_bytes());
        out.push(((((HEADER_LEN + opt_len) / 4) as u8) << 4) | u8::from(self.ae));
        out.push(self.flags);
        out.extend_from_slice(&self.window.to_be_bytes());
        out.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent pointer
        self.options.encode(out);
        out.extend_from_slice(payload);
        let sum = checksum(src, dst, &out[start..]);
        out[start + 16..start + 18].copy_from_slice(&sum.to_be_bytes());
        Ok(())
    }

    /// Parses a segment sent from `src` to `dst`; returns the header and the offset of
    /// the payload. The checksum is verified.
    pub fn decode(
        seg: &[u8],
        src: SocketAddrV4,
        dst: SocketAddrV4,
    ) -> Result<(Header, usize), WireError> {
        let h = Self::decode_unchecked(seg)?;
        if checksum(src, dst, seg) != 0 {
            return Err(WireError::BadChecksum);
        }
        Ok(h)
    }

    /// [`decode`](Self::decode) without the checksum (for captures and tests).
    pub fn decode_unchecked(seg: &[u8]) -> Result<(Header, usize), WireError> {
        if seg.len() < HEADER_LEN {
            return Err(WireError::Truncated(seg.len()));
        }
        let off_words = seg[12] >> 4;
        let off = usize::from(off_words) * 4;
        if off < HEADER_LEN || off > seg.len() {
            return Err(WireError::BadDataOffset(off_words));
        }
        let h = Header {
            src_port: u16::from_be_bytes([seg[0], seg[1]]),
            dst_port: u16::from_be_bytes([seg[2], seg[3]]),
            seq: be32(&seg[4..8]),
            ack: be32(&seg[8..12]),
            flags: seg[13],
            ae: seg[12] & 1 != 0,
            window: u16::from_be_bytes([seg[14], seg[15]]),
            options: Options::decode(&seg[HEADER_LEN..off])?,
        };
        Ok((h, off))
    }

    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
}

/// The Internet checksum of `seg` with the IPv4 pseudo-header (RFC 9293 §3.1); zero
/// when `seg` already carries a valid checksum.
pub fn checksum(src: SocketAddrV4, dst: SocketAddrV4, seg: &[u8]) -> u16 {
    let mut sum: u64 = 0;
    for a in [src.ip().octets(), dst.ip().octets()] {
        sum += u64::from(u16::from_be_bytes([a[0], a[1]]));
        sum += u64::from(u16::from_be_bytes([a[2], a[3]]));
    }
    sum += u64::from(IP_PROTO_TCP);
    sum += seg.len() as u64;
    let mut chunks = seg.chunks_exact(2);
    for c in &mut chunks {
        sum += u64::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        sum += u64::from(u16::from_be_bytes([*last, 0]));
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// `a` is before `b` in sequence space (RFC 9293 §3.4, modulo 2^32).
pub fn seq_lt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::net::Ipv4Addr;

    fn addrs() -> (SocketAddrV4, SocketAddrV4) {
        (
            SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 1), 40000),
            SocketAddrV4::new(Ipv4Addr::new(10, 0, 1, 1), 443),
        )
    }

    fn roundtrip(h: &Header, payload: &[u8]) {
        let (a, b) = addrs();
        let mut out = Vec::new();
        h.encode(payload, a, b, &mut out).unwrap();
        let (back, off) = Header::decode(&out, a, b).unwrap();
        assert_eq!(&back, h);
        assert_eq!(&out[off..], payload);
        // Another address fails the checksum (swapping them would not: the sum commutes).
        let other = SocketAddrV4::new(std::net::Ipv4Addr::new(10, 0, 0, 2), 40000);
        assert_eq!(Header::decode(&out, other, b), Err(WireError::BadChecksum));
    }

    #[test]
    fn syn_options_roundtrip_in_40_bytes() {
        let h = Header {
            src_port: 1,
            dst_port: 2,
            seq: 7,
            flags: flags::SYN,
            window: 65535,
            options: Options {
                mss: Some(1460),
                window_scale: Some(7),
                sack_permitted: true,
                timestamps: Some((1, 0)),
                sack: vec![],
                fast_open: None,
                accecn: None,
            },
            ..Header::default()
        };
        // Linux's SYN: MSS 4 + SACK-perm/TS 12 + NOP/WS 4 = 20 option bytes.
        assert_eq!(h.options.wire_len(), 20);
        roundtrip(&h, &[]);
        // RFC 7413: with an 8-byte cookie 10 more, padded to 32; a request adds 2 (+2).
        let mut tfo = h.clone();
        tfo.options.fast_open = Some(vec![9; 8]);
        assert_eq!(tfo.options.wire_len(), 32);
        roundtrip(&tfo, b"GET / in the SYN");
        tfo.options.fast_open = Some(vec![]);
        assert_eq!(tfo.options.wire_len(), 24);
        roundtrip(&tfo, &[]);
    }

    #[test]
    fn sack_blocks_with_timestamps() {
        let h = Header {
            flags: flags::ACK,
            options: Options {
                timestamps: Some((5, 6)),
                sack: vec![(10, 20), (30, 40), (50, 60)],
                ..Options::default()
            },
            ..Header::default()
        };
        assert_eq!(h.options.wire_len(), 40);
        roundtrip(&h, b"data");
        let too_many = Header {
            options: Options {
                timestamps: Some((5, 6)),
                sack: vec![(1, 2); 4],
                ..Options::default()
            },
            ..Header::default()
        };
        let (a, b) = addrs();
        assert!(matches!(
            too_many.encode(&[], a, b, &mut Vec::new()),
            Err(WireError::OptionsTooLong(_))
        ));
    }

    #[test]
    fn malformed_segments_are_errors() {
        assert_eq!(
            Header::decode_unchecked(&[0; 10]),
            Err(WireError::Truncated(10))
        );
        let mut seg = [0u8; 20];
        seg[12] = 4 << 4;
        assert_eq!(
            Header::decode_unchecked(&seg),
            Err(WireError::BadDataOffset(4))
        );
        let mut seg = vec![0u8; 24];
        seg[12] = 6 << 4;
        seg[20..24].copy_from_slice(&[2, 9, 0, 0]); // MSS with length 9
        assert!(matches!(
            Header::decode_unchecked(&seg),
            Err(WireError::BadOption { kind: 2, .. })
        ));
        seg[20..24].copy_from_slice(&[99, 4, 0, 0]); // unknown option: skipped
        assert!(Header::decode_unchecked(&seg).is_ok());
        seg[20..24].copy_from_slice(&[5, 3, 0, 0]); // SACK of 1 byte
        assert!(Header::decode_unchecked(&seg).is_err());
        seg[20..24].copy_from_slice(&[34, 3, 0, 0]); // TFO cookie of 1 byte
        assert!(Header::decode_unchecked(&seg).is_err());
    }

    #[test]
    fn ecn_flags_and_accecn_option_roundtrip() {
        // RFC 9768 §3.1.1: an AccECN SYN sets AE, CWR and ECE; AE is byte 12's low bit.
        let syn = Header {
            flags: flags::SYN | flags::CWR | flags::ECE,
            ae: true,
            ..Header::default()
        };
        let (a, b) = addrs();
        let mut out = Vec::new();
        syn.encode(&[], a, b, &mut out).unwrap();
        assert_eq!((out[12] & 1, out[13]), (1, 0xc2));
        roundtrip(&syn, &[]);
        // RFC 9768 §3.2.3 Figure 4: order 1 carries EE1B, ECEB, EE0B, 24 bits each.
        let full = AccEcnOption::new(true, 3, 1, 0x1234_5678, 0xab_cdef);
        assert_eq!(full.fields, [0xab_cdef, 0x34_5678, 1]);
        assert_eq!(
            (full.e1b(), full.ceb(), full.e0b()),
            (Some(0xab_cdef), Some(0x34_5678), Some(1))
        );
        let ack = Header {
            flags: flags::ACK | flags::ECE,
            options: Options {
                timestamps: Some((1, 2)),
                accecn: Some(full),
                ..Options::default()
            },
            ..Header::default()
        };
        // 12 bytes of timestamps + 11 of AccECN, padded to 24.
        assert_eq!(ack.options.wire_len(), 24);
        roundtrip(&ack, b"x");
        // Table 5: a truncated order-0 option of 2 fields has EE0B and ECEB only.
        let two = AccEcnOption::new(false, 2, 7, 8, 9);
        assert_eq!((two.e0b(), two.ceb(), two.e1b()), (Some(7), Some(8), None));
    }

    #[test]
    fn accecn_option_lengths_follow_rfc_9768() {
        let mut seg = vec![0u8; 32];
        seg[12] = 8 << 4;
        // Length 7: one whole field, the rest is padding (§3.2.3 forward compatibility).
        seg[20..27].copy_from_slice(&[ACCECN0, 7, 0, 0, 9, 0xff, 0xff]);
        let (h, _) = Header::decode_unchecked(&seg).unwrap();
        let a = h.options.accecn.unwrap();
        assert_eq!((a.count, a.e0b(), a.ceb()), (1, Some(9), None));
        // Length 2: the empty option.
        seg[20..27].copy_from_slice(&[ACCECN1, 2, 0, 0, 0, 0, 0]);
        let (h, _) = Header::decode_unchecked(&seg).unwrap();
        assert_eq!(h.options.accecn.unwrap().count, 0);
        // A length below 2 or past the options is malformed.
        seg[20..22].copy_from_slice(&[ACCECN0, 1]);
        assert_eq!(
            Header::decode_unchecked(&seg),
            Err(WireError::BadOption {
                kind: ACCECN0,
                len: 1
            })
        );
        seg[20..22].copy_from_slice(&[ACCECN1, 13]);
        assert!(matches!(
            Header::decode_unchecked(&seg),
            Err(WireError::BadOption { kind: ACCECN1, .. })
        ));
    }

    #[test]
    fn sequence_comparison_wraps() {
        assert!(seq_lt(u32::MAX - 1, 3));
        assert!(!seq_lt(3, u32::MAX - 1));
        assert!(!seq_lt(5, 5));
    }

    fn header() -> impl Strategy<Value = Header> {
        (
            any::<(u16, u16, u32, u32, u8, u16)>(),
            proptest::option::of(any::<u16>()),
            proptest::option::of(0u8..=14),
            any::<bool>(),
            proptest::option::of(any::<(u32, u32)>()),
            proptest::collection::vec(any::<(u32, u32)>(), 0..=3),
            proptest::option::of(prop_oneof![Just(0usize), 4usize..=16]),
            (
                any::<bool>(),
                proptest::option::of((any::<bool>(), 0u8..=3, any::<(u32, u32, u32)>())),
            ),
        )
            .prop_map(
                |((sp, dp, seq, ack, fl, win), mss, ws, sp_ok, ts, sack, tfo, (ae, acc))| Header {
                    src_port: sp,
                    dst_port: dp,
                    seq,
                    ack,
                    flags: fl,
                    ae,
                    window: win,
                    options: Options {
                        mss,
                        window_scale: ws,
                        sack_permitted: sp_ok,
                        timestamps: ts,
                        sack,
                        fast_open: tfo.map(|n| vec![7; n]),
                        accecn: acc.map(|(o, n, (a, b, c))| AccEcnOption::new(o, n, a, b, c)),
                    },
                },
            )
    }

    proptest! {
        #[test]
        fn codec_roundtrips_or_refuses(h in header(), payload in proptest::collection::vec(any::<u8>(), 0..64)) {
            let (a, b) = addrs();
            let mut out = Vec::new();
            match h.encode(&payload, a, b, &mut out) {
                Ok(()) => {
                    let (back, off) = Header::decode(&out, a, b).unwrap();
                    prop_assert_eq!(back, h);
                    prop_assert_eq!(&out[off..], &payload[..]);
                }
                Err(WireError::OptionsTooLong(n)) => prop_assert!(n > 40),
                Err(e) => prop_assert!(false, "{}", e),
            }
        }

        #[test]
        fn decoding_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
            let _ = Header::decode_unchecked(&bytes);
        }
    }
}
