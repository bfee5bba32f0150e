//! Seeded randomness. All randomness in the core (connection IDs, padding, TLS key shares)
//! comes from a [`DetRng`] derived from a seed in the config, so the same seed gives the
//! same bytes.

/// A small, fast, seeded generator (xoshiro256++), with SplitMix64 seeding.
///
/// Not cryptographically strong in the sense of unpredictability to an observer who
/// knows the seed; that is the point: a run is reproducible from its seed. Drivers that
/// talk to the real network seed it from the operating system.
#[derive(Clone, Debug)]
pub struct DetRng {
    s: [u64; 4],
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl DetRng {
    /// A generator whose whole output is determined by `seed`.
    pub fn new(seed: u64) -> Self {
        let mut st = seed;
        let s = [
            splitmix64(&mut st),
            splitmix64(&mut st),
            splitmix64(&mut st),
            splitmix64(&mut st),
        ];
        DetRng { s }
    }

    /// An independent generator for a named sub-component, so that adding one consumer
    /// of randomness does not shift another's stream.
    pub fn fork(&mut self, label: &str) -> DetRng {
        let mut h = self.next_u64();
        for b in label.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01B3);
        }
        DetRng::new(h)
    }

    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[0]
            .wrapping_add(self.s[3])
            .rotate_left(23)
            .wrapping_add(self.s[0]);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    pub fn fill(&mut self, out: &mut [u8]) {
        for chunk in out.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }

    /// Uniform in `[0, 1)`.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `[lo, hi)`; `lo` when the range is empty.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        lo + self.next_u64() % (hi - lo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_forks_differ() {
        let mut a = DetRng::new(7);
        let mut b = DetRng::new(7);
        assert_eq!(a.next_u64(), b.next_u64());
        let mut fa = a.fork("x");
        let mut fb = b.fork("y");
        assert_ne!(fa.next_u64(), fb.next_u64());
        let f = DetRng::new(1).next_f64();
        assert!((0.0..1.0).contains(&f));
    }
}
