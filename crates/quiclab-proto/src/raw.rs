//! Packet and frame codecs, packet protection and the connection's limits, for tests
//! that play a misbehaving peer and for the fuzz targets (cargo feature `testing`).
//! Not part of the stable API: drivers never need these.

pub use crate::connection::{SpaceId, MIN_INITIAL_DATAGRAM};
pub use crate::crypto::initial::initial_keys;
pub use crate::crypto::protect::{decrypt_payload, seal, unprotect_header};
pub use crate::crypto::retry::integrity_tag;
pub use crate::crypto::{CryptoError, TAG_LEN};
pub use crate::wire::frame::{frame_type, StreamFrame};
pub use crate::wire::frame_mp::{abandon_code, mp_type};
pub use crate::wire::header::{
    decode_packet_number, parse_header, parse_version_negotiation, write_long_header,
    write_retry_without_tag, write_short_header, write_version_negotiation, HeaderError,
};
pub use crate::wire::transport_params;
pub use crate::wire::{
    decode_frames, write_crypto_header, AckFrame, AckFrequencyFrame, ConnectionCloseFrame, Frame,
    MultipathFrame, NewConnectionIdFrame, PathId,
};

/// What only the fuzz targets need (cargo feature `fuzzing`): the connection's
/// `seal_for_fuzzing` / `open_for_fuzzing` hooks come with it.
#[cfg(feature = "fuzzing")]
pub use crate::connection::MAX_PATH_RESPONSES;
