//! The static Huffman code of HPACK (RFC 7541 §5.2, Appendix B), which QPACK reuses
//! (RFC 9204 §4.1.2). The code is canonical, so the table below holds only each
//! symbol's code length; the codes are rebuilt from the lengths in (length, symbol)
//! order, and a unit test checks them against codes printed in Appendix B.

use std::sync::OnceLock;

/// Code length in bits of symbols 0..=255 and EOS (256): RFC 7541 Appendix B.
#[rustfmt::skip]
const LENGTHS: [u8; 257] = [
    13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, // 0..16
    28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28, // 16..32
     6, 10, 10, 12, 13,  6,  8, 11, 10, 10,  8, 11,  8,  6,  6,  6, // ' '..'/'
     5,  5,  5,  6,  6,  6,  6,  6,  6,  6,  7,  8, 15,  6, 12, 10, // '0'..'?'
    13,  6,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7, // '@'..'O'
     7,  7,  7,  7,  7,  7,  7,  7,  8,  7,  8, 13, 19, 13, 14,  6, // 'P'..'_'
    15,  5,  6,  5,  6,  5,  6,  6,  6,  5,  7,  7,  6,  6,  6,  5, // '`'..'o'
     6,  7,  6,  5,  5,  6,  7,  7,  7,  7,  7, 15, 11, 14, 13, 28, // 'p'..127
    20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, // 128..144
    24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, // 144..160
    22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, // 160..176
    21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23, // 176..192
    26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, // 192..208
    19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27, // 208..224
    20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, // 224..240
    26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26, // 240..256
    30, // EOS
];

/// The EOS symbol (RFC 7541 §5.2): never valid inside a string.
const EOS: u16 = 256;

/// Codes, and a binary decoding tree, built once from [`LENGTHS`].
struct Tables {
    /// (code, length) per symbol, code right-aligned.
    codes: [(u32, u8); 257],
    /// Decoding tree: node i has children `tree[i][bit]`; a child is either another
    /// node (`NODE | index`) or a leaf symbol.
    tree: Vec<[u16; 2]>,
}

const NODE: u16 = 0x8000;
const EMPTY: u16 = 0xffff;

fn tables() -> &'static Tables {
    static T: OnceLock<Tables> = OnceLock::new();
    T.get_or_init(build)
}

/// Canonical code assignment: symbols sorted by (length, value) get consecutive codes.
fn build() -> Tables {
    let mut order: Vec<u16> = (0..257).collect();
    order.sort_by_key(|&s| (LENGTHS[s as usize], s));
    let mut codes = [(0u32, 0u8); 257];
    let mut code: u32 = 0;
    let mut prev_len = LENGTHS[order[0] as usize];
    for (i, &s) in order.iter().enumerate() {
        let len = LENGTHS[s as usize];
        if i > 0 {
            code = (code + 1) << (len - prev_len);
        }
        prev_len = len;
        codes[s as usize] = (code, len);
    }
    let mut tree: Vec<[u16; 2]> = vec![[EMPTY, EMPTY]];
    for (s, &(code, len)) in codes.iter().enumerate() {
        let mut node = 0usize;
        for i in (0..len).rev() {
            let bit = ((code >> i) & 1) as usize;
            if i == 0 {
                tree[node][bit] = s as u16;
            } else {
                if tree[node][bit] == EMPTY {
                    tree.push([EMPTY, EMPTY]);
                    tree[node][bit] = NODE | (tree.len() - 1) as u16;
                }
                node = (tree[node][bit] & !NODE) as usize;
            }
        }
    }
    Tables { codes, tree }
}

/// Length in bytes of `data` Huffman-encoded.
pub fn encoded_len(data: &[u8]) -> usize {
    let t = tables();
    let bits: usize = data.iter().map(|&b| t.codes[b as usize].1 as usize).sum();
    bits.div_ceil(8)
}

/// Appends `data` Huffman-encoded, padded with the most significant bits of EOS (1s).
pub fn encode(data: &[u8], out: &mut Vec<u8>) {
    let t = tables();
    let mut acc: u64 = 0;
    let mut n: u32 = 0;
    for &b in data {
        let (code, len) = t.codes[b as usize];
        acc = (acc << len) | u64::from(code);
        n += u32::from(len);
        while n >= 8 {
            n -= 8;
            out.push((acc >> n) as u8);
        }
        acc &= (1u64 << n) - 1;
    }
    if n > 0 {
        out.push(((acc << (8 - n)) | ((1u64 << (8 - n)) - 1)) as u8);
    }
}

/// Why a Huffman string is invalid (RFC 7541 §5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HuffmanError {
    /// The string contains the EOS symbol.
    Eos,
    /// Padding longer than 7 bits, or not the most significant bits of EOS.
    BadPadding,
}

/// Decodes `data`, appending to `out`; stops with an error past `max_out` bytes.
pub fn decode(data: &[u8], out: &mut Vec<u8>, max_out: usize) -> Result<(), DecodeError> {
    let t = tables();
    let mut node = 0usize;
    // Bits walked since the last symbol, and whether they were all ones.
    let mut pending = 0u32;
    let mut all_ones = true;
    for &byte in data {
        for i in (0..8).rev() {
            let bit = ((byte >> i) & 1) as usize;
            pending += 1;
            all_ones &= bit == 1;
            let next = t.tree[node][bit];
            if next & NODE != 0 && next != EMPTY {
                node = (next & !NODE) as usize;
            } else if next == EOS {
                return Err(DecodeError::Huffman(HuffmanError::Eos));
            } else if next == EMPTY {
                // A complete code is never a prefix of an empty branch; unreachable
                // with a complete canonical code, still an error rather than a panic.
                return Err(DecodeError::Huffman(HuffmanError::BadPadding));
            } else {
                if out.len() >= max_out {
                    return Err(DecodeError::TooLong);
                }
                out.push(next as u8);
                node = 0;
                pending = 0;
                all_ones = true;
            }
        }
    }
    if pending > 7 || !all_ones {
        return Err(DecodeError::Huffman(HuffmanError::BadPadding));
    }
    Ok(())
}

/// A Huffman string could not be decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    Huffman(HuffmanError),
    /// The decoded string exceeds the caller's limit.
    TooLong,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Codes printed in RFC 7541 Appendix B, sampled across all lengths.
    #[test]
    fn canonical_codes_match_appendix_b() {
        let t = tables();
        let expected: [(usize, u32, u8); 14] = [
            (0, 0x1ff8, 13),
            (9, 0xffffea, 24),
            (10, 0x3ffffffc, 30),
            (b' ' as usize, 0x14, 6),
            (b'0' as usize, 0x0, 5),
            (b':' as usize, 0x5c, 7),
            (b'X' as usize, 0xfc, 8),
            (b'\\' as usize, 0x7fff0, 19),
            (b't' as usize, 0x9, 5),
            (b'~' as usize, 0x1ffd, 13),
            (153, 0x1fffdc, 21),
            (220, 0xffffffd, 28),
            (255, 0x3ffffee, 26),
            (256, 0x3fffffff, 30),
        ];
        for (s, code, len) in expected {
            assert_eq!(t.codes[s], (code, len), "symbol {s}");
        }
        // A complete prefix code: Kraft sum exactly 1.
        let kraft: u64 = LENGTHS.iter().map(|&l| 1u64 << (30 - l)).sum();
        assert_eq!(kraft, 1 << 30);
    }

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// RFC 7541 Appendix C.4 and C.6 Huffman-coded strings.
    #[test]
    fn rfc7541_examples() {
        let cases = [
            ("www.example.com", "f1e3 c2e5 f23a 6ba0 ab90 f4ff"),
            ("no-cache", "a8eb 1064 9cbf"),
            ("custom-key", "25a8 49e9 5ba9 7d7f"),
            ("custom-value", "25a8 49e9 5bb8 e8b4 bf"),
            ("302", "6402"),
            ("private", "aec3 771a 4b"),
            (
                "Mon, 21 Oct 2013 20:13:21 GMT",
                "d07a be94 1054 d444 a820 0595 040b 8166 e082 a62d 1bff",
            ),
            (
                "https://www.example.com",
                "9d29 ad17 1863 c78f 0b97 c8e9 ae82 ae43 d3",
            ),
        ];
        for (plain, coded) in cases {
            let coded = hex(coded);
            let mut out = Vec::new();
            encode(plain.as_bytes(), &mut out);
            assert_eq!(out, coded, "{plain}");
            assert_eq!(encoded_len(plain.as_bytes()), coded.len());
            let mut back = Vec::new();
            decode(&coded, &mut back, 1000).unwrap();
            assert_eq!(back, plain.as_bytes());
        }
    }

    #[test]
    fn all_bytes_round_trip_and_bad_input_is_rejected() {
        let all: Vec<u8> = (0..=255).collect();
        let mut out = Vec::new();
        encode(&all, &mut out);
        let mut back = Vec::new();
        decode(&out, &mut back, 1000).unwrap();
        assert_eq!(back, all);
        // EOS explicitly coded (30 ones), then padding.
        let eos = [0xff, 0xff, 0xff, 0xff];
        assert!(decode(&eos, &mut Vec::new(), 10).is_err());
        // 'a' (00011) padded with zeros: padding not EOS prefix.
        assert_eq!(
            decode(&[0x18], &mut Vec::new(), 10),
            Err(DecodeError::Huffman(HuffmanError::BadPadding))
        );
        // 'a' then a full byte of ones: padding longer than 7 bits.
        assert!(decode(&[0x1f, 0xff], &mut Vec::new(), 10).is_err());
        assert_eq!(
            decode(&hex("f1e3 c2e5 f23a 6ba0 ab90 f4ff"), &mut Vec::new(), 3),
            Err(DecodeError::TooLong)
        );
    }
}
