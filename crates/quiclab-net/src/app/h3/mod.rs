//! HTTP/3 applications: the ALPN-dispatching server and client (h3 or hq-interop per
//! connection, whichever TLS negotiated) over the [`quiclab_h3`] sans-IO layer. The
//! hq-interop logic stays in [`crate::app::hq`]; bodies come from the same [`crate::app::hq::Body`].

pub mod client;
pub mod server;

use crate::app::setup::QlogDir;
use quiclab_h3::qlog::H3QlogWriter;
use quiclab_h3::H3Connection;
use quiclab_proto::{Connection, Side};
use std::fs::File;
use std::io::BufWriter;

/// The HTTP/3 ALPN (RFC 9114 §3.1).
pub const ALPN_H3: &[u8] = b"h3";

/// Connection close code when an HTTP/3 connection is done (RFC 9114 §8.1).
pub const H3_NO_ERROR: u64 = quiclab_h3::code::H3_NO_ERROR;

/// Attaches an HTTP/3 qlog (`<odcid>_<side>_h3.sqlog`, the qlog HTTP/3 events) next
/// to the connection's QUIC qlog, when qlog is on. A file that cannot be created is
/// reported and skipped.
pub fn attach_qlog(dir: &QlogDir, conn: &Connection, h3: &mut H3Connection) {
    let Some(d) = dir.dir() else { return };
    let side = match conn.side() {
        Side::Client => "client",
        Side::Server => "server",
    };
    let path = d.join(format!("{}_{side}_h3.sqlog", conn.original_dcid()));
    match File::create(&path) {
        Ok(f) => {
            let title = format!("quiclab {side} HTTP/3");
            h3.set_sink(Box::new(H3QlogWriter::new(BufWriter::new(f), &title, side)));
        }
        Err(e) => note!("qlog: cannot create {}: {e}", path.display()),
    }
}
