//! A minimal hq-interop server on noq (n0-computer's quinn fork with
//! draft-ietf-quic-multipath): `GET /N` answers N bytes of quiclab's generated pattern
//! (byte i = i mod 251, what `quiclab client --check` verifies), with multipath on
//! (up to 4 concurrent paths, so initial_max_path_id 3). Usage: noq-mp-server ADDR
//! (default 127.0.0.1:4466). It logs to stderr: its address, each request, each close.
use std::sync::Arc;

fn body(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i % 251) as u8).collect()
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let listen: std::net::SocketAddr = std::env::args()
        .nth(1)
        .unwrap_or("127.0.0.1:4466".into())
        .parse()?;
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()])?;
    let key = rustls::pki_types::PrivatePkcs8KeyDer::from(cert.key_pair.serialize_der());
    let certs = vec![cert.cert.der().clone()];
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut crypto = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .with_no_client_auth()
        .with_single_cert(certs, key.into())?;
    crypto.alpn_protocols = vec![b"hq-interop".to_vec()];
    let mut config = noq::ServerConfig::with_crypto(Arc::new(
        noq::crypto::rustls::QuicServerConfig::try_from(crypto)?,
    ));
    let transport = Arc::get_mut(&mut config.transport).expect("a fresh config");
    transport.max_concurrent_multipath_paths(4);
    let endpoint = noq::Endpoint::server(config, listen)?;
    eprintln!("noq server on {}", endpoint.local_addr()?);
    while let Some(incoming) = endpoint.accept().await {
        tokio::spawn(async move {
            let conn = match incoming.await {
                Ok(c) => c,
                Err(e) => return eprintln!("handshake: {e}"),
            };
            eprintln!("connection established");
            while let Ok((mut send, mut recv)) = conn.accept_bi().await {
                tokio::spawn(async move {
                    let req = recv.read_to_end(1024).await.unwrap_or_default();
                    let req = String::from_utf8_lossy(&req);
                    let n: usize = req
                        .trim()
                        .strip_prefix("GET /")
                        .and_then(|s| s.parse().ok())
                        .unwrap_or(0);
                    eprintln!("request {:?}: {n} bytes", req.trim());
                    if let Err(e) = send.write_all(&body(n)).await {
                        eprintln!("write: {e}");
                    }
                    let _ = send.finish();
                    let _ = send.stopped().await;
                });
            }
            eprintln!("connection ended: {:?}", conn.close_reason());
        });
    }
    Ok(())
}
