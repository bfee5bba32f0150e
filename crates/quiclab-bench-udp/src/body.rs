//! The bodies every stack sends: quiclab's generated `/N` bytes (`i mod 251`), so all
//! three servers do the same application work and every client checks every byte.

/// Byte `i` of a body (the same as quiclab's `generated_byte`).
fn byte(i: u64) -> u8 {
    (i % 251) as u8
}

/// Fills `buf` with the body bytes from offset `start`.
pub fn fill(buf: &mut [u8], start: u64) {
    for (i, b) in buf.iter_mut().enumerate() {
        *b = byte(start + i as u64);
    }
}

/// Checks received bytes at offset `start`; the offset of the first wrong byte.
pub fn check(buf: &[u8], start: u64) -> Result<(), u64> {
    match buf
        .iter()
        .enumerate()
        .find(|&(i, &b)| b != byte(start + i as u64))
    {
        Some((i, _)) => Err(start + i as u64),
        None => Ok(()),
    }
}

/// Sends a body of `len` bytes through `write` in 64 KiB chunks.
pub fn chunks(len: u64) -> impl Iterator<Item = (u64, usize)> {
    const CHUNK: u64 = 64 * 1024;
    (0..len.div_ceil(CHUNK)).map(move |k| {
        let start = k * CHUNK;
        (start, (len - start).min(CHUNK) as usize)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_and_check_agree() {
        let mut b = vec![0u8; 1000];
        fill(&mut b, 500);
        assert_eq!(check(&b, 500), Ok(()));
        assert_eq!(check(&b, 0), Err(1));
        let total: usize = chunks(200_000).map(|(_, n)| n).sum();
        assert_eq!(total, 200_000);
    }
}
