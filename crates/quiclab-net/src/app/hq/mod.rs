//! hq-interop (HTTP/0.9 over QUIC, as in the QUIC interop runner): the client sends
//! `GET /path\r\n` on a bidirectional stream and FIN; the server answers with the body
//! and FIN. This module is the application logic; sockets live in the driver ([`crate::EndpointDriver`]).

mod check;
pub mod client;
pub mod server;
mod source;

pub use check::Check;
pub use source::Body;

/// Longest request line accepted; anything longer is not an hq-interop request.
pub const MAX_REQUEST: usize = 4096;
/// How much of a body is read from disk at a time.
pub const CHUNK: usize = 64 * 1024;

/// The request line for `path`.
pub fn request(path: &str) -> Vec<u8> {
    format!("GET {path}\r\n").into_bytes()
}

/// The path of a complete request (`GET /path`, with or without CRLF).
pub fn parse_request(req: &[u8]) -> Result<&str, String> {
    let line = std::str::from_utf8(req).map_err(|_| "request is not UTF-8".to_string())?;
    let line = line.trim_end_matches(['\r', '\n']);
    match line.split_once(' ') {
        Some(("GET", path)) if path.starts_with('/') && !path.contains(char::is_whitespace) => {
            Ok(path)
        }
        _ => Err(format!("not an hq-interop request: {line:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_parse() {
        assert_eq!(parse_request(b"GET /a/b.txt\r\n"), Ok("/a/b.txt"));
        assert_eq!(parse_request(b"GET /x"), Ok("/x"));
        assert!(parse_request(b"POST /x\r\n").is_err());
        assert!(parse_request(b"GET x\r\n").is_err());
        assert!(parse_request(b"GET /a b\r\n").is_err());
        assert!(parse_request(&[0xff, 0xfe]).is_err());
        assert_eq!(parse_request(&request("/10")), Ok("/10"));
    }
}
