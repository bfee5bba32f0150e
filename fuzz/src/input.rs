//! The byte formats of the structured targets: a [`Reader`] that never fails (reading
//! past the end yields zeros, so every byte string is a valid input and the fuzzer
//! wastes no executions on parse errors) and a [`Writer`] producing the same format,
//! for seed corpora written from real traffic.

/// Reads little-endian integers and byte strings from a fuzz input.
pub struct Reader<'a> {
    data: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Reader { data }
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    pub fn u8(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }

    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }

    pub fn u64(&mut self) -> u64 {
        u64::from(self.u32()) | u64::from(self.u32()) << 32
    }

    pub fn bool(&mut self) -> bool {
        self.u8() & 1 == 1
    }

    /// A length-prefixed (u16) byte string, at most `max` bytes (fewer at the end).
    pub fn bytes(&mut self, max: usize) -> &'a [u8] {
        let n = usize::from(self.u16()).min(max).min(self.data.len());
        let (b, rest) = self.data.split_at(n);
        self.data = rest;
        b
    }
}

/// Writes what [`Reader`] reads.
#[derive(Default)]
pub struct Writer {
    pub out: Vec<u8>,
}

impl Writer {
    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.out.push(v);
        self
    }
    pub fn u16(&mut self, v: u16) -> &mut Self {
        self.out.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.out.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.out.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// A u16 length prefix and the bytes (cut at 65535).
    pub fn bytes(&mut self, b: &[u8]) -> &mut Self {
        let b = &b[..b.len().min(usize::from(u16::MAX))];
        self.u16(b.len() as u16);
        self.out.extend_from_slice(b);
        self
    }
}
