//! Applying a header protection mask (RFC 9001 §5.4.1), shared by the header keys we
//! build ourselves: ring's for a rederived version (`version_keys`) and the checksum
//! stand-in (`checksum_keys`). rustls's own keys apply theirs inside rustls.

/// XORs a 5-byte `mask` into the first byte's low 4 (long header) or 5 (short header)
/// bits and the packet number's bytes. `masked`: `first` is still protected (removal),
/// so the packet number length is read after unmasking it. Fails, changing nothing, on
/// a packet number over 4 bytes.
pub(super) fn apply(
    mask: &[u8; 5],
    first: &mut u8,
    packet_number: &mut [u8],
    masked: bool,
) -> Result<(), rustls::Error> {
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
