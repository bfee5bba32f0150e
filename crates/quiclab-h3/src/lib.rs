//! quiclab-h3: HTTP/3 (RFC 9114) with QPACK (RFC 9204) as a sans-IO layer over
//! quiclab-proto streams. The application drives an [`H3Connection`] with the QUIC
//! [`quiclab_proto::Connection`] it runs on: forward stream events, call `poll`, read
//! [`H3Event`]s. No clock, socket or randomness is used here.

pub mod error;
pub mod frame;
pub mod qpack;
pub mod settings;

pub use error::{code, H3Error};
