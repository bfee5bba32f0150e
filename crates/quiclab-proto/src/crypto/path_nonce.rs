//! The AEAD nonce with a path ID (draft-ietf-quic-multipath §2.4, version named in
//! `wire/frame_mp.rs`): once multipath is negotiated, 1-RTT packets are protected with
//! IV XOR PPN, PPN = path ID (32 bits) || 0b00 || packet number (62 bits). Path 0
//! gives RFC 9001 §5.3's nonce (IV XOR packet number), since packet numbers are below
//! 2^62. rustls's ring keys compute the same through `PacketKey::*_for_path`; this
//! serves our own keys (`version_keys.rs`) and the tests that check both agree.

/// The nonce for packet `pn` of path `path_id` from a 12-byte IV.
pub fn path_nonce(iv: &[u8; 12], path_id: u32, pn: u64) -> [u8; 12] {
    let mut ppn = [0u8; 12];
    ppn[..4].copy_from_slice(&path_id.to_be_bytes());
    // The two bits above the 62-bit packet number are zero (§2.4).
    ppn[4..].copy_from_slice(&(pn & ((1 << 62) - 1)).to_be_bytes());
    let mut n = *iv;
    for (b, p) in n.iter_mut().zip(ppn) {
        *b ^= p;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex12(s: &str) -> [u8; 12] {
        let v: Vec<u8> = (0..24)
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect();
        v.try_into().unwrap()
    }

    /// The draft's example (§2.4, "Example Nonce Calculation"): IV
    /// 6b26114b9cba2b63a9e8dd4f, path ID 3, packet number 54321 (0xd431).
    #[test]
    fn the_drafts_example() {
        let iv = hex12("6b26114b9cba2b63a9e8dd4f");
        assert_eq!(path_nonce(&iv, 3, 54321), hex12("6b2611489cba2b63a9e8097e"));
    }

    /// Path 0 is RFC 9001 §5.3's nonce: the packet number, left-padded, XOR the IV.
    /// Computed by hand: ...dd4f XOR ...d431 = ...097e, the path bytes untouched.
    #[test]
    fn path_zero_is_rfc9001s_nonce() {
        let iv = hex12("6b26114b9cba2b63a9e8dd4f");
        assert_eq!(path_nonce(&iv, 0, 54321), hex12("6b26114b9cba2b63a9e8097e"));
        for pn in [0u64, 1, 0xffff_ffff, (1 << 62) - 1] {
            let mut rfc9001 = iv;
            for (b, p) in rfc9001[4..].iter_mut().zip(pn.to_be_bytes()) {
                *b ^= p;
            }
            assert_eq!(path_nonce(&iv, 0, pn), rfc9001, "{pn}");
        }
    }

    /// Distinct (path, packet number) pairs give distinct nonces, the reason for the
    /// path ID in the nonce (§2.4): the same packet number on two paths.
    #[test]
    fn same_packet_number_on_two_paths_differs() {
        let iv = [0u8; 12];
        assert_ne!(path_nonce(&iv, 1, 7), path_nonce(&iv, 2, 7));
        assert_eq!(path_nonce(&iv, u32::MAX, 0)[..4], [0xff; 4]);
    }
}
