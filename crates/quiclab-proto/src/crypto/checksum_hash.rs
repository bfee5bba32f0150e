//! The keyed, non-cryptographic 128-bit hash of [`super::checksum_keys`]: the stand-in
//! for the AEAD tag and the header protection mask when a simulated connection uses
//! `PacketProtection::Checksum`. Not a MAC: it detects accidents (the simulator's
//! `corrupt` impairment, a packet opened with the wrong key), not an attacker.
//!
//! Deterministic on every platform: little-endian word loads, wrapping arithmetic, no
//! platform hasher. Four independent lanes take one 8-byte word each in turn (so the
//! multiplications overlap); each step `lane = rotl((lane ^ word) * K, 31)` is a
//! bijection of `word` for a given `lane` and of `lane` for a given word, so two inputs
//! of the same length that differ in one 8-byte word (any single bit flip or byte change)
//! end with exactly one lane different. The fold XORs the lanes, so it differs too, and
//! the finaliser (xor-shift-multiply, a bijection) keeps it different: such a change
//! always changes the tag. Associated data (key fingerprint, path, packet number,
//! header, lengths) goes through one chain of the same bijective steps and is XORed in
//! at the fold, with the same argument.

/// Odd multipliers (bijective multiplication mod 2^64), one per lane; the 64-bit
/// constants of xxHash64 and SplitMix64 / MurmurHash3's finaliser.
const LANE_K: [u64; 4] = [
    0x9E37_79B1_85EB_CA87,
    0xC2B2_AE3D_27D4_EB4F,
    0x1656_67B1_9E37_79F9,
    0x85EB_CA77_C2B2_AE63,
];
const FMIX_1: u64 = 0xFF51_AFD7_ED55_8CCD;
const FMIX_2: u64 = 0xC4CE_B9FE_1A85_EC53;

/// One lane step: bijective in `word` (xor, odd multiply, rotate all are).
#[inline(always)]
fn step(lane: u64, word: u64, k: u64) -> u64 {
    (lane ^ word).wrapping_mul(k).rotate_left(31)
}

/// MurmurHash3's 64-bit finaliser: a bijection that spreads every input bit.
#[inline(always)]
fn fmix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(FMIX_1);
    x ^= x >> 33;
    x = x.wrapping_mul(FMIX_2);
    x ^ (x >> 33)
}

/// The little-endian word at `chunk` (exactly 8 bytes).
#[inline(always)]
fn word(chunk: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(chunk);
    u64::from_le_bytes(w)
}

/// The last 1-7 bytes, zero-padded: inputs compared at the same length differ in this
/// word iff they differ in those bytes (the length itself is hashed by the caller).
fn tail_word(tail: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w[..tail.len()].copy_from_slice(tail);
    u64::from_le_bytes(w)
}

/// A 64-bit chain over short data (the header, the sample): one lane, same steps.
pub fn chain(seed: u64, data: &[u8]) -> u64 {
    let mut h = seed;
    let mut words = data.chunks_exact(8);
    for w in &mut words {
        h = step(h, word(w), LANE_K[0]);
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        h = step(h, tail_word(tail), LANE_K[1]);
    }
    // The length, so that trailing zero bytes count.
    step(h, data.len() as u64, LANE_K[2])
}

/// The four lanes after `data`, from `seeds` (the key's).
fn lanes(seeds: [u64; 4], data: &[u8]) -> [u64; 4] {
    let mut l = seeds;
    let mut blocks = data.chunks_exact(32);
    for b in &mut blocks {
        l[0] = step(l[0], word(&b[0..8]), LANE_K[0]);
        l[1] = step(l[1], word(&b[8..16]), LANE_K[1]);
        l[2] = step(l[2], word(&b[16..24]), LANE_K[2]);
        l[3] = step(l[3], word(&b[24..32]), LANE_K[3]);
    }
    // Up to 31 bytes left: whole words, then the zero-padded rest, lane by lane.
    let rest = blocks.remainder();
    let mut words = rest.chunks_exact(8);
    let mut i = 0;
    for w in &mut words {
        l[i] = step(l[i], word(w), LANE_K[i]);
        i += 1;
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        l[i] = step(l[i], tail_word(tail), LANE_K[i]);
    }
    l
}

/// The 128-bit tag of `data` under the key `seeds`, with `assoc` (a [`chain`] of
/// everything else the tag covers, its length included) XORed in before finalising.
/// Both halves change whenever exactly one lane or `assoc` changes (module docs).
pub fn tag(seeds: [u64; 4], assoc: u64, data: &[u8]) -> [u8; 16] {
    let l = lanes(seeds, data);
    let lo = fmix(l[0] ^ l[1] ^ l[2] ^ l[3] ^ assoc);
    let hi =
        fmix(l[0] ^ l[1].rotate_left(17) ^ l[2].rotate_left(31) ^ l[3].rotate_left(47) ^ !assoc);
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&lo.to_le_bytes());
    out[8..].copy_from_slice(&hi.to_le_bytes());
    out
}

/// A finalised 64-bit value of `x` (for masks: every output bit depends on every input bit).
pub fn finish(x: u64) -> u64 {
    fmix(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEEDS: [u64; 4] = [1, 2, 3, 4];

    #[test]
    fn every_single_bit_flip_changes_the_tag() {
        // Lengths around the block and word boundaries: full blocks, words, tails.
        for len in [0usize, 1, 7, 8, 9, 31, 32, 33, 63, 64, 100, 1200] {
            let data: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            let base = tag(SEEDS, 99, &data);
            for bit in 0..len * 8 {
                let mut d = data.clone();
                d[bit / 8] ^= 1 << (bit % 8);
                let t = tag(SEEDS, 99, &d);
                assert_ne!(t[..8], base[..8], "len {len} bit {bit}");
                assert_ne!(t[8..], base[8..], "len {len} bit {bit}");
            }
            assert_ne!(tag(SEEDS, 98, &data), base, "assoc");
            assert_ne!(tag([1, 2, 3, 5], 99, &data), base, "key");
        }
    }

    #[test]
    fn chain_sees_every_byte_and_the_length() {
        let data = [7u8; 21];
        let base = chain(5, &data);
        for i in 0..data.len() {
            let mut d = data;
            d[i] ^= 0x80;
            assert_ne!(chain(5, &d), base, "byte {i}");
        }
        assert_ne!(chain(5, &data[..20]), base);
        assert_ne!(chain(5, &[0u8; 3]), chain(5, &[0u8; 4]), "trailing zeros");
        assert_ne!(chain(6, &data), base, "seed");
    }

    #[test]
    fn the_tag_is_fixed_across_platforms() {
        // Pinned: a change of constants or word order must be deliberate.
        let data: Vec<u8> = (0..45u8).collect();
        let t = tag(SEEDS, chain(0, b"header"), &data);
        assert_eq!(u64::from_le_bytes(t[..8].try_into().unwrap()), PINNED_LO);
    }

    /// The value on x86_64 when the hash was written (2026-11-30).
    const PINNED_LO: u64 = 3_955_184_147_469_711_846;
}
