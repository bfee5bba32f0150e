//! A minimal streaming JSON writer into a byte buffer. The qlog writer emits fields in
//! a fixed order straight into one buffer per record, without an intermediate
//! `serde_json::Value`, so output is deterministic and allocation-light.

use std::io::Write as _;

/// Appends JSON tokens to `buf`, inserting commas. `first` is true right after an
/// opening bracket or a key, when the next value needs no separator.
pub(crate) struct Json<'a> {
    buf: &'a mut Vec<u8>,
    first: bool,
}

impl<'a> Json<'a> {
    pub(crate) fn new(buf: &'a mut Vec<u8>) -> Self {
        Json { buf, first: true }
    }

    fn sep(&mut self) {
        if !self.first {
            self.buf.push(b',');
        }
        self.first = false;
    }

    /// A key; `k` must be plain lowercase ASCII (all qlog keys are).
    pub(crate) fn key(&mut self, k: &str) -> &mut Self {
        self.sep();
        self.buf.push(b'"');
        self.buf.extend_from_slice(k.as_bytes());
        self.buf.extend_from_slice(b"\":");
        self.first = true;
        self
    }

    /// Bytes outside the JSON grammar (record separators, the closing newline).
    pub(crate) fn raw(&mut self, bytes: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(bytes);
        self
    }

    pub(crate) fn begin_obj(&mut self) -> &mut Self {
        self.sep();
        self.buf.push(b'{');
        self.first = true;
        self
    }

    pub(crate) fn end_obj(&mut self) -> &mut Self {
        self.buf.push(b'}');
        self.first = false;
        self
    }

    pub(crate) fn begin_arr(&mut self) -> &mut Self {
        self.sep();
        self.buf.push(b'[');
        self.first = true;
        self
    }

    pub(crate) fn end_arr(&mut self) -> &mut Self {
        self.buf.push(b']');
        self.first = false;
        self
    }

    pub(crate) fn u64(&mut self, v: u64) -> &mut Self {
        self.sep();
        let _ = write!(self.buf, "{v}");
        self
    }

    pub(crate) fn bool(&mut self, v: bool) -> &mut Self {
        self.sep();
        self.buf
            .extend_from_slice(if v { b"true" } else { b"false" });
        self
    }

    /// A string known to need no escaping (enum names, hex).
    pub(crate) fn lit(&mut self, s: &str) -> &mut Self {
        self.sep();
        self.buf.push(b'"');
        self.buf.extend_from_slice(s.as_bytes());
        self.buf.push(b'"');
        self
    }

    /// Any string, escaped.
    pub(crate) fn str(&mut self, s: &str) -> &mut Self {
        self.sep();
        self.buf.push(b'"');
        for c in s.chars() {
            match c {
                '"' => self.buf.extend_from_slice(b"\\\""),
                '\\' => self.buf.extend_from_slice(b"\\\\"),
                '\n' => self.buf.extend_from_slice(b"\\n"),
                '\r' => self.buf.extend_from_slice(b"\\r"),
                '\t' => self.buf.extend_from_slice(b"\\t"),
                c if (c as u32) < 0x20 || c == '\u{7f}' => {
                    let _ = write!(self.buf, "\\u{:04x}", c as u32);
                }
                c => {
                    let mut tmp = [0u8; 4];
                    self.buf
                        .extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
                }
            }
        }
        self.buf.push(b'"');
        self
    }

    /// Bytes as a lowercase hexstring.
    pub(crate) fn hex(&mut self, bytes: &[u8]) -> &mut Self {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        self.sep();
        self.buf.push(b'"');
        for b in bytes {
            self.buf.push(DIGITS[usize::from(b >> 4)]);
            self.buf.push(DIGITS[usize::from(b & 0xf)]);
        }
        self.buf.push(b'"');
        self
    }

    /// Nanoseconds as milliseconds with microsecond precision (truncated), formatted
    /// from integers so the text never depends on float formatting: `12.345`.
    pub(crate) fn ms(&mut self, nanos: u64) -> &mut Self {
        self.ms_from_us(nanos / 1_000)
    }

    /// Millionths as a decimal fraction (`0.062500`), from integers as [`Json::ms`].
    pub(crate) fn ppm(&mut self, ppm: u32) -> &mut Self {
        self.sep();
        let _ = write!(self.buf, "{}.{:06}", ppm / 1_000_000, ppm % 1_000_000);
        self
    }

    /// Microseconds as milliseconds (see [`Json::ms`]).
    pub(crate) fn ms_from_us(&mut self, us: u64) -> &mut Self {
        self.sep();
        let _ = write!(self.buf, "{}.{:03}", us / 1_000, us % 1_000);
        self
    }
}
