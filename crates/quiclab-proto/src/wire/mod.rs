//! The wire layer: bytes <-> typed values. No state. Decoding peer input never panics;
//! it returns a typed error that maps to the RFC's error code.
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

pub mod frame;
mod frame_decode;
mod frame_encode;
mod frame_fields;
pub mod frame_mp;
mod frame_mp_codec;
mod frame_parts;
pub mod header;
pub mod ids;
pub mod transport_params;
pub mod varint;

pub use frame::{
    AckFrame, AckFrequencyFrame, ConnectionCloseFrame, EcnCounts, Frame, NewConnectionIdFrame,
};
pub use frame_decode::{decode_frames, decode_frames_reusing};
pub use frame_encode::{
    crypto_header_len, stream_header_len, write_crypto_header, write_stream_header,
};
pub use frame_mp::{MultipathFrame, PathId};
pub use header::{PacketType, ProtectedHeader, VERSION_1, VERSION_2};
pub use ids::{ConnectionId, Dir, Side, StreamId};
pub use transport_params::{PreferredAddress, TransportParameters, VersionInformation};
