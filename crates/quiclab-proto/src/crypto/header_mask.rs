//! Header protection from a mask (RFC 9001 §5.4), for the header keys we build
//! ourselves: ring's for a rederived version (`version_keys`) and the checksum stand-in
//! (`checksum_keys`). rustls's own keys apply theirs inside rustls. A key says how it
//! makes the 5-byte mask from a sample ([`MaskSource`]); [`MaskedHeaderKey`] applies it.

/// How a header key makes its mask from a ciphertext sample (RFC 9001 §5.4.2-5.4.4).
pub(super) trait MaskSource: Send + Sync {
    /// The 5-byte mask of `sample`, or an error for a sample of the wrong length.
    fn mask(&self, sample: &[u8]) -> Result<[u8; 5], rustls::Error>;
    fn sample_len(&self) -> usize;
}

/// A `rustls::quic::HeaderProtectionKey` applying `M`'s masks.
pub(super) struct MaskedHeaderKey<M>(pub M);

impl<M: MaskSource> MaskedHeaderKey<M> {
    /// RFC 9001 §5.4.1: XORs the mask into the first byte's low 4 (long header) or 5
    /// (short header) bits and the packet number's bytes. `masked`: `first` is still
    /// protected (removal), so the packet number length is read after unmasking it.
    /// Fails, changing nothing, on a bad sample or a packet number over 4 bytes.
    fn xor(
        &self,
        sample: &[u8],
        first: &mut u8,
        packet_number: &mut [u8],
        masked: bool,
    ) -> Result<(), rustls::Error> {
        let mask = self.0.mask(sample)?;
        let (first_mask, pn_mask) = (mask[0], &mask[1..]);
        if packet_number.len() > pn_mask.len() {
            return Err(rustls::Error::General("packet number too long".into()));
        }
        let bits = if *first & 0x80 != 0 { 0x0f } else { 0x1f };
        let plain_first = if masked {
            *first ^ (first_mask & bits)
        } else {
            *first
        };
        let pn_len = usize::from(plain_first & 0x03) + 1;
        *first ^= first_mask & bits;
        for (b, m) in packet_number.iter_mut().zip(pn_mask).take(pn_len) {
            *b ^= m;
        }
        Ok(())
    }
}

impl<M: MaskSource> rustls::quic::HeaderProtectionKey for MaskedHeaderKey<M> {
    fn encrypt_in_place(
        &self,
        sample: &[u8],
        first: &mut u8,
        packet_number: &mut [u8],
    ) -> Result<(), rustls::Error> {
        self.xor(sample, first, packet_number, false)
    }

    fn decrypt_in_place(
        &self,
        sample: &[u8],
        first: &mut u8,
        packet_number: &mut [u8],
    ) -> Result<(), rustls::Error> {
        self.xor(sample, first, packet_number, true)
    }

    fn sample_len(&self) -> usize {
        self.0.sample_len()
    }
}
