//! HTTP/3 applications: the ALPN-dispatching server and client (h3 or hq-interop per
//! connection, whichever TLS negotiated) over the [`quiclab_h3`] sans-IO layer. The
//! hq-interop logic stays in [`crate::app::hq`]; bodies come from the same [`crate::app::hq::Body`].

pub mod client;
pub mod server;

use crate::app::setup::QlogDir;
use quiclab_h3::qlog::H3QlogWriter;
use quiclab_h3::H3Connection;
use quiclab_proto::{Connection, Side};

/// The HTTP/3 ALPN (RFC 9114 §3.1).
pub const ALPN_H3: &[u8] = b"h3";

/// Connection close code when an HTTP/3 connection is done (RFC 9114 §8.1).
pub const H3_NO_ERROR: u64 = quiclab_h3::code::H3_NO_ERROR;

/// Attaches an HTTP/3 qlog (`<odcid>_<side>_h3.sqlog`, the qlog HTTP/3 events) next
/// to the connection's QUIC qlog, when qlog is on; written by the qlog writer thread
/// ([`QlogDir::file`]), which reports a file that cannot be created.
pub fn attach_qlog(dir: &QlogDir, conn: &Connection, h3: &mut H3Connection) {
    let side = match conn.side() {
        Side::Client => "client",
        Side::Server => "server",
    };
    let name = format!("{}_{side}_h3.sqlog", conn.original_dcid());
    if let Some(f) = dir.file(&name) {
        let title = format!("quiclab {side} HTTP/3");
        h3.set_sink(Box::new(H3QlogWriter::new(f, &title, side)));
    }
}
