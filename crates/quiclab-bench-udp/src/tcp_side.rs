//! The TLS-over-TCP baseline (seed 003's reference for a server's CPU per byte):
//! rustls on a blocking kernel TCP socket, one thread per connection, the same
//! 8-byte-length request and generated body as the QUIC stacks.

use crate::{body, tls};
use anyhow::{anyhow, bail, Result};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;

const ALPN: &[u8] = b"bench";

/// Serves until killed.
pub fn server(listen: SocketAddr) -> Result<()> {
    let config = Arc::new(tls::server(ALPN)?);
    let listener = TcpListener::bind(listen)?;
    eprintln!("rustls/TCP server on {listen}");
    for stream in listener.incoming() {
        let stream = stream?;
        let config = config.clone();
        std::thread::spawn(move || {
            if let Err(e) = serve(config, stream) {
                eprintln!("connection: {e:#}");
            }
        });
    }
    Ok(())
}

fn serve(config: Arc<rustls::ServerConfig>, stream: TcpStream) -> Result<()> {
    stream.set_nodelay(true)?;
    let conn = rustls::ServerConnection::new(config)?;
    let mut tls = rustls::StreamOwned::new(conn, stream);
    let mut len = [0u8; 8];
    tls.read_exact(&mut len)?;
    let len = u64::from_be_bytes(len);
    let mut buf = vec![0u8; 64 * 1024];
    for (start, n) in body::chunks(len) {
        body::fill(&mut buf[..n], start);
        tls.write_all(&buf[..n])?;
    }
    tls.conn.send_close_notify();
    tls.flush()?;
    Ok(())
}

/// Fetches `bytes` over one connection; checks every byte.
pub fn client(server: SocketAddr, bytes: u64) -> Result<()> {
    let config = Arc::new(tls::client(ALPN)?);
    let stream = TcpStream::connect(server)?;
    stream.set_nodelay(true)?;
    let conn = rustls::ClientConnection::new(config, "localhost".try_into()?)?;
    let mut tls = rustls::StreamOwned::new(conn, stream);
    tls.write_all(&bytes.to_be_bytes())?;
    tls.flush()?;
    let mut buf = vec![0u8; 64 * 1024];
    let mut got = 0u64;
    loop {
        let n = match tls.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(e) => return Err(e.into()),
        };
        body::check(&buf[..n], got).map_err(|at| anyhow!("wrong byte at {at}"))?;
        got += n as u64;
    }
    if got != bytes {
        bail!("body of {got} bytes, expected {bytes}");
    }
    Ok(())
}
