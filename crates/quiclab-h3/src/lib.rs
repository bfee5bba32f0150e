//! quiclab-h3: HTTP/3 (RFC 9114) with QPACK (RFC 9204) as a sans-IO layer over
//! quiclab-proto streams. The application drives an [`H3Connection`] with the QUIC
//! [`quiclab_proto::Connection`] it runs on: forward stream events, call `poll`, read
//! [`H3Event`]s. No clock, socket or randomness is used here.

mod connection;
pub mod error;
pub mod frame;
#[cfg(feature = "fuzzing")]
mod fuzzing;
pub mod log;
pub mod message;
pub mod qlog;
pub mod qpack;
mod request;
pub mod settings;
mod streams;
mod uni;

pub use connection::{H3Config, H3Connection, H3Event, H3Stats};
#[cfg(feature = "fuzzing")]
pub use fuzzing::H3Footprint;
pub use qpack::Field;
pub use uni::stream_type;

pub use error::{code, H3Error};
