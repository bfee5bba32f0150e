//! The bodies every stack sends: quiclab's generated `/N` bytes (`i mod 251`), so all
//! three servers do the same application work and every client checks every byte.

/// Byte `i` of a body (the same as quiclab's `generated_byte`).
fn byte(i: u64) -> u8 {
    (i % 251) as u8
}

const PERIOD: usize = 251;

/// One period, so bodies are made and checked by slice copies and compares, as
/// quiclab's are (the same application cost on every stack).
fn pattern() -> [u8; PERIOD] {
    std::array::from_fn(|i| byte(i as u64))
}

/// Fills `buf` with the body bytes from offset `start`.
pub fn fill(buf: &mut [u8], start: u64) {
    let p = pattern();
    let mut off = (start % PERIOD as u64) as usize;
    let mut rest = buf;
    while !rest.is_empty() {
        let take = (PERIOD - off).min(rest.len());
        let (head, tail) = rest.split_at_mut(take);
        head.copy_from_slice(&p[off..off + take]);
        rest = tail;
        off = 0;
    }
}

/// Checks received bytes at offset `start`; the offset of the first wrong piece.
pub fn check(buf: &[u8], start: u64) -> Result<(), u64> {
    let p = pattern();
    let mut off = (start % PERIOD as u64) as usize;
    let mut at = 0;
    while at < buf.len() {
        let take = (PERIOD - off).min(buf.len() - at);
        if buf[at..at + take] != p[off..off + take] {
            return Err(start + at as u64);
        }
        at += take;
        off = 0;
    }
    Ok(())
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
        assert_eq!(check(&b, 0), Err(0));
        let total: usize = chunks(200_000).map(|(_, n)| n).sum();
        assert_eq!(total, 200_000);
    }
}
