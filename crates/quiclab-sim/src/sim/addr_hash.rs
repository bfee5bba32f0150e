//! The hash of the simulator's address maps (address -> host, node, PEP), looked up for
//! every delivered datagram. The addresses are the scenario's, never chosen by a peer
//! to collide, so a multiply-and-rotate hash of the key's words (FxHash's step) replaces
//! std's keyed SipHash (~160 instructions a lookup, 0.6% of the simulator's per
//! datagram). The maps are only looked up, never iterated, so the hash cannot reach
//! the output (determinism).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` keyed by simulated addresses, hashed with [`AddrHasher`].
pub(super) type AddrMap<K, V> = HashMap<K, V, BuildHasherDefault<AddrHasher>>;

/// FxHash's step on every word written: rotate, xor, multiply by an odd constant (so
/// the top bits, which the table's tags take, depend on every bit of the key).
#[derive(Default)]
pub(super) struct AddrHasher(u64);

const SPREAD: u64 = 0x517c_c1b7_2722_0a95;

impl AddrHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SPREAD);
    }
}

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_u16(&mut self, i: u16) {
        self.add(u64::from(i));
    }

    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, SocketAddrV4};

    #[test]
    fn addresses_map_and_spread() {
        let mut m: AddrMap<SocketAddrV4, usize> = AddrMap::default();
        for i in 0..1000u32 {
            let a = SocketAddrV4::new(Ipv4Addr::from(0x0a00_0000 + i / 4), 4433 + (i % 4) as u16);
            m.insert(a, i as usize);
        }
        for i in 0..1000u32 {
            let a = SocketAddrV4::new(Ipv4Addr::from(0x0a00_0000 + i / 4), 4433 + (i % 4) as u16);
            assert_eq!(m.get(&a), Some(&(i as usize)));
        }
        assert_eq!(m.get(&SocketAddrV4::new(Ipv4Addr::LOCALHOST, 1)), None);
        // Neighbouring addresses differ in the top 7 bits (the table's tags).
        let top = |a: SocketAddrV4| {
            use std::hash::BuildHasher;
            BuildHasherDefault::<AddrHasher>::default().hash_one(a) >> 57
        };
        let tags: std::collections::BTreeSet<u64> = (0..64u32)
            .map(|i| top(SocketAddrV4::new(Ipv4Addr::from(0x0a00_0001 + i), 4433)))
            .collect();
        assert!(tags.len() > 16, "{} distinct tags", tags.len());
    }
}
