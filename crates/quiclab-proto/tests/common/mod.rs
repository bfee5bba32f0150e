//! Helpers shared by the integration tests: one request/response fetch over a
//! [`Pair`] (versions, key updates, TLS choices), and a server and a client
//! [`Endpoint`] to connect (the endpoint tests).

#![allow(dead_code)]

use quiclab_proto::testing::{drain_stream, Pair};
use quiclab_proto::{
    tls, Connection, Dir, Endpoint, Instant, StreamError, StreamId, TransportConfig,
};
use std::sync::Arc;

/// A config with a long idle timeout, so slow tests do not time out.
pub fn config() -> TransportConfig {
    TransportConfig {
        idle_timeout_ms: 600_000,
        ..TransportConfig::default()
    }
}

fn write_some(conn: &mut Connection, id: StreamId, data: &[u8], sent: &mut usize) {
    while *sent < data.len() {
        match conn.write(id, &data[*sent..]) {
            Ok(0) | Err(StreamError::Blocked) => return,
            Ok(n) => *sent += n,
            Err(e) => panic!("write {id}: {e}"),
        }
    }
    if *sent == data.len() {
        conn.finish(id).expect("finish");
        *sent = usize::MAX;
    }
}

/// Completes the handshake, then the client asks for `len` bytes on one stream and
/// the server sends them; returns the bytes the client received.
pub fn fetch(pair: &mut Pair, len: usize) -> Result<Vec<u8>, String> {
    let limit = pair.now + std::time::Duration::from_secs(600);
    pair.run_until(limit, |p| {
        p.client_conn().is_handshake_complete() || p.client_conn().is_closed()
    })
    .map_err(|e| e.to_string())?;
    if pair.client_conn().is_closed() {
        return Err(format!("closed: {:?}", pair.client_conn().close_reason()));
    }
    let id = pair.client_conn().open_stream(Dir::Bi).ok_or("no stream")?;
    let mut req_sent = 0;
    write_some(pair.client_conn(), id, b"GET /", &mut req_sent);
    let body: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
    let mut server_stream = None;
    let mut req_done = false;
    let mut resp_sent = 0;
    let mut got = Vec::new();
    pair.run_until(limit, |p| {
        if let Some(s) = p.server_conn() {
            if server_stream.is_none() {
                server_stream = s.accept_stream(Dir::Bi);
            }
            if let Some(sid) = server_stream {
                if !req_done {
                    let mut req = Vec::new();
                    req_done = drain_stream(s, sid, &mut req);
                }
                write_some(s, sid, &body, &mut resp_sent);
            }
        }
        drain_stream(p.client_conn(), id, &mut got) || p.client_conn().is_closed()
    })
    .map_err(|e| e.to_string())?;
    if got != body {
        return Err(format!(
            "got {} of {len} bytes; client closed: {:?}",
            got.len(),
            pair.client_conn().close_reason()
        ));
    }
    let _ = Instant::ZERO;
    Ok(got)
}

/// Sends `data` from client to server on one unidirectional stream and runs the pair
/// until the server has read all of it (the handshake must be complete); asserts that it
/// arrived intact.
pub fn upload_uni(pair: &mut Pair, data: &[u8], limit: Instant) {
    let id = pair.client_conn().open_stream(Dir::Uni).unwrap();
    let (mut sent, mut got, mut server_stream) = (0usize, Vec::new(), None);
    let mut buf = vec![0u8; 65_536];
    let mut fin = false;
    pair.run_until(limit, |p| {
        let c = p.client_conn();
        while sent < data.len() {
            match c.write(id, &data[sent..]) {
                Ok(n) => sent += n,
                Err(StreamError::Blocked) => break,
                Err(e) => panic!("write: {e}"),
            }
        }
        if sent == data.len() {
            c.finish(id).expect("finish");
            sent = usize::MAX;
        }
        let Some(s) = p.server_conn() else {
            return false;
        };
        if server_stream.is_none() {
            server_stream = s.accept_stream(Dir::Uni);
        }
        if let Some(sid) = server_stream {
            loop {
                match s.read(sid, &mut buf) {
                    Ok(r) => {
                        got.extend_from_slice(&buf[..r.bytes]);
                        fin |= r.fin;
                        if r.bytes == 0 || r.fin {
                            break;
                        }
                    }
                    Err(StreamError::Blocked) => break,
                    Err(e) => panic!("read: {e}"),
                }
            }
        }
        fin
    })
    .unwrap_or_else(|e| panic!("{e}; client {:?}", pair.client_conn().stats()));
    assert!(
        got == data,
        "received {} of {} bytes",
        got.len(),
        data.len()
    );
}

/// A server endpoint (seed 1; a self-signed certificate for "localhost", ALPN
/// hq-interop) and a client endpoint (seed 2) sharing `config`, with the client's TLS
/// config (no certificate verification) for [`Endpoint::connect`].
pub fn endpoint_pair(config: TransportConfig) -> (Endpoint, Endpoint, Arc<rustls::ClientConfig>) {
    let id = tls::self_signed(&["localhost".into()], 1, 0);
    let stls = tls::server_config(id, &[b"hq-interop".to_vec()], None).unwrap();
    let config = Arc::new(config);
    let server = Endpoint::new(config.clone(), Some(stls), 1);
    let client = Endpoint::new(config, None, 2);
    let ctls = tls::client_config(
        tls::ServerVerification::Insecure,
        &[b"hq-interop".to_vec()],
        None,
    );
    (server, client, ctls)
}
