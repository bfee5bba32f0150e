//! QPACK (RFC 9204): field compression for HTTP/3. The [`Encoder`] turns field lists
//! into field sections plus encoder-stream instructions; the [`Decoder`] does the
//! reverse and writes decoder-stream instructions. Both are sans-IO: bytes in, bytes
//! out, the HTTP/3 layer moves them over streams.

pub mod decoder;
pub mod encoder;
pub mod huffman;
pub mod prefix;
pub mod static_table;
pub mod table;

#[cfg(test)]
mod appendix_b;

pub use decoder::{Decoded, Decoder};
pub use encoder::Encoder;

/// One field line: a name (lower-case for HTTP/3) and a value.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Field {
    pub name: Vec<u8>,
    pub value: Vec<u8>,
}

impl Field {
    pub fn new(name: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) -> Self {
        Field {
            name: name.into(),
            value: value.into(),
        }
    }
    /// The size the field counts for in SETTINGS_MAX_FIELD_SECTION_SIZE (RFC 9114 §4.2.2).
    pub fn size(&self) -> usize {
        table::entry_size(&self.name, &self.value)
    }
}

/// Max Entries of RFC 9204 §3.2.3 for a maximum table capacity.
pub fn max_entries(max_capacity: u64) -> u64 {
    max_capacity / 32
}
