//! A streaming JSON writer into a byte buffer, a thin layer over serde_json's
//! `CompactFormatter` (separators, brackets, numbers, string escaping). The qlog writer
//! emits fields in a fixed order straight into one buffer per record, without an
//! intermediate `serde_json::Value`, so output is deterministic and allocation-light.

use serde_json::ser::{CompactFormatter, Formatter};
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

    /// A comma unless this value opens a container or follows a key (Vec writes
    /// cannot fail).
    fn sep(&mut self) {
        let _ = CompactFormatter.begin_array_value(self.buf, self.first);
        self.first = false;
    }

    /// A key, escaped as any JSON string.
    pub(crate) fn key(&mut self, k: &str) -> &mut Self {
        let _ = CompactFormatter.begin_object_key(self.buf, self.first);
        let _ = serde_json::to_writer(&mut *self.buf, k);
        let _ = CompactFormatter.begin_object_value(self.buf);
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
        let _ = CompactFormatter.begin_object(self.buf);
        self.first = true;
        self
    }

    pub(crate) fn end_obj(&mut self) -> &mut Self {
        let _ = CompactFormatter.end_object(self.buf);
        self.first = false;
        self
    }

    pub(crate) fn begin_arr(&mut self) -> &mut Self {
        self.sep();
        let _ = CompactFormatter.begin_array(self.buf);
        self.first = true;
        self
    }

    pub(crate) fn end_arr(&mut self) -> &mut Self {
        let _ = CompactFormatter.end_array(self.buf);
        self.first = false;
        self
    }

    pub(crate) fn u64(&mut self, v: u64) -> &mut Self {
        self.sep();
        let _ = CompactFormatter.write_u64(self.buf, v);
        self
    }

    pub(crate) fn bool(&mut self, v: bool) -> &mut Self {
        self.sep();
        let _ = CompactFormatter.write_bool(self.buf, v);
        self
    }

    /// A string known to need no escaping (enum names, hex).
    /// A string known to need no escaping (enum names, hex): written as is.
    pub(crate) fn lit(&mut self, s: &str) -> &mut Self {
        self.sep();
        self.buf.push(b'"');
        self.buf.extend_from_slice(s.as_bytes());
        self.buf.push(b'"');
        self
    }

    /// Any string, escaped.
    /// Any string, escaped by serde_json (RFC 8259 §7).
    pub(crate) fn str(&mut self, s: &str) -> &mut Self {
        self.sep();
        let _ = serde_json::to_writer(&mut *self.buf, s);
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
