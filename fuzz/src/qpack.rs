//! `qpack`: the QPACK decoder (RFC 9204) on arbitrary encoder-stream instructions and
//! field sections, and the encoder's decoder-stream parser on arbitrary bytes. Asserts:
//! the dynamic table stays within the capacity we advertise, blocked streams within
//! the limit, decoded sections within the maximum field section size, and every decoded
//! section re-encodes (static table and literals) to bytes that decode to the same
//! fields.

use crate::input::{Reader, Writer};
use quiclab_h3::qpack::{Decoded, Decoder, Encoder, Field};

/// What we advertise: SETTINGS_QPACK_MAX_TABLE_CAPACITY, _BLOCKED_STREAMS and
/// SETTINGS_MAX_FIELD_SECTION_SIZE.
pub const CAPACITY: u64 = 4096;
pub const BLOCKED: u64 = 4;
pub const MAX_SECTION: usize = 8 * 1024;

/// One step of an input.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Bytes of the peer's encoder stream.
    Encoder(Vec<u8>),
    /// A field section on request stream `stream`.
    Section { stream: u8, bytes: Vec<u8> },
    /// The request stream was reset (RFC 9204 §4.4.2).
    Cancel(u8),
    /// Bytes of the peer's decoder stream, to our encoder.
    DecoderStream(Vec<u8>),
}

impl Step {
    pub fn read(r: &mut Reader<'_>) -> Self {
        match r.u8() % 4 {
            0 => Step::Encoder(r.bytes(4096).to_vec()),
            1 => Step::Section {
                stream: r.u8(),
                bytes: r.bytes(4096).to_vec(),
            },
            2 => Step::Cancel(r.u8()),
            _ => Step::DecoderStream(r.bytes(256).to_vec()),
        }
    }

    pub fn write(&self, w: &mut Writer) {
        match self {
            Step::Encoder(b) => w.u8(0).bytes(b),
            Step::Section { stream, bytes } => w.u8(1).u8(*stream).bytes(bytes),
            Step::Cancel(s) => w.u8(2).u8(*s),
            Step::DecoderStream(b) => w.u8(3).bytes(b),
        };
    }
}

/// A section decoded to `fields` must come back the same through a static-only
/// encoder and decoder.
fn round_trip(stream: u64, fields: &[Field]) {
    let bytes = Encoder::new(0).encode(stream, fields);
    match Decoder::new(0, 0, usize::MAX).decode(stream, &bytes) {
        Ok(Decoded::Fields(again)) => assert_eq!(again, fields, "re-encoded fields differ"),
        other => panic!("re-encoded section does not decode: {other:?}"),
    }
}

/// Runs one input.
pub fn run(data: &[u8]) {
    let mut decoder = Decoder::new(CAPACITY, BLOCKED, MAX_SECTION);
    let mut encoder = Encoder::new(CAPACITY);
    encoder.on_peer_settings(CAPACITY, BLOCKED);
    // Sections waiting for inserts: (stream, bytes).
    let mut blocked: Vec<(u64, Vec<u8>)> = vec![];
    let mut r = Reader::new(data);
    let mut failed = false;
    while !r.is_empty() && !failed {
        match Step::read(&mut r) {
            Step::Encoder(b) => failed = decoder.on_encoder_stream(&b).is_err(),
            Step::Section { stream, bytes } => {
                let stream = u64::from(stream) * 4;
                match decoder.decode(stream, &bytes) {
                    Ok(Decoded::Fields(f)) => {
                        let size: usize = f.iter().map(Field::size).sum();
                        assert!(size <= MAX_SECTION, "a decoded section of {size} bytes");
                        round_trip(stream, &f);
                    }
                    Ok(Decoded::Blocked(_)) => blocked.push((stream, bytes)),
                    Err(_) => failed = true,
                }
            }
            Step::Cancel(s) => decoder.cancel_stream(u64::from(s) * 4),
            Step::DecoderStream(b) => {
                let _ = encoder.on_decoder_stream(&b);
            }
        }
        assert!(
            decoder.table_size() as u64 <= CAPACITY,
            "table over capacity"
        );
        assert!(
            decoder.blocked_streams() as u64 <= BLOCKED,
            "too many blocked streams"
        );
        let _ = decoder.take_instructions();
        // Blocked sections are retried as inserts arrive, as a connection does.
        let mut still = vec![];
        for (stream, bytes) in blocked.drain(..) {
            match decoder.decode(stream, &bytes) {
                Ok(Decoded::Fields(f)) => round_trip(stream, &f),
                Ok(Decoded::Blocked(_)) => still.push((stream, bytes)),
                Err(_) => {}
            }
        }
        blocked = still;
    }
}
